"""stoker.DataLoader's own promises: determinism, sharding, resume, buffer lifetime."""
import gc
import os
import threading
import time
import weakref

import pytest
import torch
from conftest import HANG_GUARD, assert_same_batches, batches

import stoker
from stoker._process import cores

AUGMENTED = "RandomResizedCrop(32), RandomHorizontalFlip(), ColorJitter(0.2, 0.2, 0.2), Normalize"


def test_batches_are_the_same_for_1_and_4_workers(jpeg_folder):
    one = batches(stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=3, num_workers=1,
                                    transforms=AUGMENTED))
    four = batches(stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=3, num_workers=4,
                                     transforms=AUGMENTED))
    assert_same_batches(one, four)


@pytest.mark.skipif(cores() < 2, reason="needs 2 cores to add a worker")
def test_auto_workers_add_one_while_the_loop_waits_and_the_batches_stay_the_same(tmp_path):
    # Large photos and no model: every step waits, so the first judged window (10 steps, 2 s)
    # tries one more worker, mid-epoch.
    import numpy as np
    from PIL import Image
    for i in range(48):
        folder = tmp_path / f"c{i % 2}"
        folder.mkdir(exist_ok=True)
        y, x = np.mgrid[0:480, 0:640]
        pixels = np.stack([(x + 7 * i) % 256, (y + 3 * i) % 256, (x * y) % 256], -1).astype(np.uint8)
        Image.fromarray(pixels).save(folder / f"{i}.jpg", quality=90)
    chain = "RandomResizedCrop(160), RandomHorizontalFlip(), Normalize"
    auto = stoker.DataLoader(tmp_path, batch_size=4, shuffle=True, seed=5, num_workers="auto", transforms=chain)
    start = auto.num_workers
    assert start == max(1, min(4, cores() // 2))
    seen, started = [], time.monotonic()
    while time.monotonic() - started < 30:  # epochs of 12 steps, until a change came and its epoch ended
        seen += [(x.double().sum().item(), y.tolist()) for x, y in auto]
        if auto.stats()["autotune"]:
            break
    tuned = auto.stats()["autotune"]
    assert tuned and f"trying {start + 1} workers" in tuned[0], tuned
    fixed = stoker.DataLoader(tmp_path, batch_size=4, shuffle=True, seed=5, num_workers=start, transforms=chain)
    expected = []
    while len(expected) < len(seen):
        expected += [(x.double().sum().item(), y.tolist()) for x, y in fixed]
    assert seen == expected


def test_each_pass_is_the_next_epoch_and_set_epoch_picks_one(jpeg_folder):
    loader = stoker.DataLoader(jpeg_folder, batch_size=6, shuffle=True, seed=3, transforms=AUGMENTED)
    first, second = batches(loader), batches(loader)
    assert not torch.equal(first[0][0], second[0][0])
    loader.set_epoch(1)
    assert_same_batches(batches(loader), second)


class _StartsWritten:
    """The engine's loader, with each start_epoch call written down."""

    def __init__(self, inner):
        self._inner, self.starts = inner, []

    def start_epoch(self, epoch, first_batch=0, order=None, batch_sizes=None, on_order=None):
        self.starts.append((epoch, first_batch))
        self._inner.start_epoch(epoch, first_batch, order, batch_sizes=batch_sizes, on_order=on_order)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __len__(self):
        return len(self._inner)


def test_epochs_in_a_loop_start_where_the_workers_ran_ahead(jpeg_folder):
    # Workers begin epoch e + 1 from its first batch while epoch e ends: a loop, with or
    # without set_epoch, must start exactly that, or the batches made ahead are thrown away.
    loader = stoker.DataLoader(jpeg_folder, batch_size=6, shuffle=True, seed=3, transforms=AUGMENTED)
    written = loader._loader = _StartsWritten(loader._loader)
    passes = [batches(loader) for _ in range(3)]
    for epoch in range(3, 5):
        loader.set_epoch(epoch)
        passes.append(batches(loader))
    assert written.starts == [(epoch, 0) for epoch in range(5)]
    for epoch, got in enumerate(passes):
        fresh = stoker.DataLoader(jpeg_folder, batch_size=6, shuffle=True, seed=3, transforms=AUGMENTED)
        fresh.set_epoch(epoch)
        assert_same_batches(got, batches(fresh))


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("world_size", [1, 3, 4])
def test_ranks_get_distributed_samplers_indices(indexed_features, world_size, drop_last):
    dataset = torch.utils.data.TensorDataset(torch.arange(50))
    per_rank = []
    for rank in range(world_size):
        sampler = torch.utils.data.DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=False)
        expected = [b[0] for b in torch.utils.data.DataLoader(dataset, batch_size=4, sampler=sampler,
                                                              drop_last=drop_last)]
        loader = stoker.DataLoader(indexed_features, batch_size=4, rank=rank, world_size=world_size,
                                   drop_last=drop_last, transforms="none")
        got = [y.long() for _, y in loader]
        assert len(loader) == len(expected) == len(got)
        for g, e in zip(got, expected):
            assert torch.equal(g, e)
        per_rank.append(len(got))
    assert len(set(per_rank)) == 1  # every rank the same number of batches


def test_rank_and_world_size_come_from_the_environment(indexed_features, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    loader = stoker.DataLoader(indexed_features, batch_size=5, transforms="none")
    assert (loader.rank, loader.world_size) == (1, 2)
    assert [y.long().tolist() for _, y in loader][0] == [1, 3, 5, 7, 9]


def resumed(folder, state, workers, epochs_after=1):
    loader = stoker.DataLoader(folder, batch_size=5, shuffle=True, num_workers=workers, transforms=AUGMENTED)
    loader.load_state_dict(state)
    out = []
    for _ in range(epochs_after):
        out += batches(loader)
    return loader, out


@pytest.mark.parametrize("stop_after", [0, 1, 3])
def test_a_resume_mid_epoch_continues_the_same_batches(jpeg_folder, stop_after):
    loader = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=11, num_workers=2, transforms=AUGMENTED)
    whole = batches(loader) + batches(loader)
    loader.set_epoch(0)
    it = iter(loader)
    for _ in range(stop_after):
        next(it)
    state = loader.state_dict()
    assert (state["epoch"], state["next_batch"]) == (0, stop_after)
    # another worker count, and a seed the state replaces
    _, rest = resumed(jpeg_folder, state, workers=3, epochs_after=2)
    assert_same_batches(rest, whole[stop_after:])


def test_a_state_taken_at_an_epochs_end_starts_the_next_epoch(jpeg_folder):
    loader = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=5, transforms=AUGMENTED)
    batches(loader)
    expected = batches(loader)
    loader.set_epoch(0)
    for i, _ in enumerate(loader):  # taken inside the loop, at the last batch
        if i == len(loader) - 1:
            state = loader.state_dict()
    assert (state["epoch"], state["next_batch"]) == (1, 0)
    _, got = resumed(jpeg_folder, state, workers=1)
    assert_same_batches(got, expected)


def test_a_second_resume_in_the_same_epoch_stays_aligned(jpeg_folder):
    loader = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=9, transforms=AUGMENTED)
    whole = batches(loader)
    loader.set_epoch(0)
    it = iter(loader)
    next(it)
    first = loader.state_dict()
    again, _ = resumed(jpeg_folder, first, workers=2, epochs_after=0)
    assert again.state_dict() == first  # read right after the resume: complete
    it = iter(again)
    next(it), next(it)
    second = again.state_dict()
    assert second["next_batch"] == 3
    _, rest = resumed(jpeg_folder, second, workers=4)
    assert_same_batches(rest, whole[3:])


def test_set_epoch_of_the_states_epoch_keeps_the_resumed_place(jpeg_folder):
    # A resumed loop calls loader.set_epoch(epoch) from the state's epoch on, as it does every
    # epoch: the resumed epoch continues where the state was taken, not from its first batch.
    loader = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=3, transforms=AUGMENTED)
    whole = batches(loader) + batches(loader)
    loader.set_epoch(1)
    it = iter(loader)
    next(it), next(it)
    state = loader.state_dict()
    again = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, transforms=AUGMENTED)
    again.load_state_dict(state)
    again.set_epoch(1)
    assert again.state_dict() == state
    assert_same_batches(batches(again), whole[len(loader) + 2:])
    again.load_state_dict(state)
    again.set_epoch(0)  # another epoch: from its start
    assert_same_batches(batches(again), whole[:len(loader)])


def test_a_loop_resumed_from_the_epoch_whose_last_batch_it_saved_at_goes_on_as_the_run(jpeg_folder):
    # A checkpoint saved inside the loop, at the epoch's last batch, holds the script's epoch (0)
    # and a state pointing at epoch 1's first batch; the resumed loop sets epoch 0 again.
    loader = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, seed=4, transforms=AUGMENTED)
    whole = []
    for epoch in range(2):
        loader.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            whole.append((x.clone(), y.clone()))
            if (epoch, i) == (0, len(loader) - 1):
                state = loader.state_dict()
    again = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, transforms=AUGMENTED)
    again.load_state_dict(state)
    got = []
    for epoch in range(2):
        again.set_epoch(epoch)
        got.append(batches(again))
    assert got[0] == [] and again.epoch == 2
    assert_same_batches(got[1], whole[len(loader):])


@pytest.mark.parametrize("change, message", [
    (dict(batch_size=4), "batch_size=5"),
    (dict(shuffle=True), "shuffle=False"),
])
def test_a_resume_with_other_settings_is_one_line(jpeg_folder, change, message):
    state = stoker.DataLoader(jpeg_folder, batch_size=5).state_dict()
    settings = dict(batch_size=5)
    settings.update(change)
    other = stoker.DataLoader(jpeg_folder, **settings)
    with pytest.raises(ValueError, match=message):
        other.load_state_dict(state)


def test_a_resume_on_other_data_is_one_line(jpeg_folder, png_folder, tmp_path):
    from conftest import write_image_folder
    smaller = write_image_folder(tmp_path / "small", classes=2, per_class=3)
    state = stoker.DataLoader(jpeg_folder, batch_size=5).state_dict()
    with pytest.raises(ValueError, match="samples=24"):
        stoker.DataLoader(smaller, batch_size=5).load_state_dict(state)


def test_a_tensor_outlives_its_loader(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=4, transforms="Resize(16), CenterCrop(16)")
    x, y = next(iter(loader))
    copy = x.clone()
    del loader
    gc.collect()
    assert torch.equal(x, copy)


class Items(torch.utils.data.Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return torch.full((12, 12, 3), i, dtype=torch.uint8), i


def _thread_names():
    """{thread id: its name} of this process's threads, as the kernel lists them."""
    names = {}
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                names[task] = f.read().strip()
        except OSError:  # it ended meanwhile
            pass
    return names


def _threads_down_to(count):
    """This process's threads once they are `count` or fewer, or after the hang guard. A Python thread's
    join() returns before its thread has exited (a loaded machine's kernel lists one in about 1
    join of 10), as the one reading a Dataset's first item at the loader's making is joined."""
    deadline = time.monotonic() + HANG_GUARD
    while len(names := _thread_names()) > count and time.monotonic() < deadline:
        time.sleep(0.01)
    return names


@pytest.mark.parametrize("make", [
    lambda root: stoker.DataLoader(root, batch_size=4, shuffle=True, num_workers=2, transforms="Resize((8, 8))"),
    lambda root: stoker.DataLoader(Items(), batch_size=4, num_workers=2, transforms="Resize((8, 8))",
                                   sampler=torch.utils.data.DistributedSampler(Items(), 2, 1), return_params=True),
    lambda root: stoker.watch(stoker.DataLoader(root, batch_size=4, num_workers=2, transforms="Resize((8, 8))"),
                              report=False),
])
def test_a_loader_the_script_lets_go_of_goes_at_once(png_folder, make):
    # No reference cycle holds a DataLoader: its workers and buffers go when the script lets go
    # of it, not at a later garbage collection (a loader made each epoch held its buffers and
    # threads until then, growing the memory epoch after epoch).
    gc.collect()
    gc.disable()
    try:
        threads = _thread_names()
        loop = make(png_folder)
        next(iter(loop))  # a pass left unfinished
        gone = weakref.ref(getattr(loop, "loader", loop))
        del loop
        assert gone() is None
        left = _threads_down_to(len(threads))  # no collection meanwhile: a thread a cycle kept stays
        assert len(left) <= len(threads), f"threads before: {sorted(threads.values())}, after: {sorted(left.values())}"
    finally:
        gc.enable()


def test_a_held_batch_is_never_overwritten(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=2, num_workers=2, prefetch_factor=2,
                               transforms="Resize(16), CenterCrop(16)")
    it = iter(loader)
    held, _ = next(it)
    copy = held.clone()
    for _ in range(6):  # the pool turns over several times meanwhile
        next(it)
    assert torch.equal(held, copy)


def test_a_first_batch_kept_to_size_the_model_does_not_stop_the_loop(indexed_features):
    # torch's prefetch_factor counts the batches in flight, not those the script holds: with
    # one worker (num_workers=0) the two buffers in flight must not be all there is.
    loader = stoker.DataLoader(indexed_features, batch_size=4, num_workers=0, transforms="none")
    first, _ = next(iter(loader))
    seen = [y.clone() for _, y in loader]
    assert first.shape == (4, 4) and torch.equal(torch.cat(seen), torch.arange(50, dtype=torch.float32))


def test_holding_every_buffer_raises(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=2, num_workers=1, prefetch_factor=2,
                               transforms="Resize(16), CenterCrop(16)")
    kept = []
    with pytest.raises(ValueError, match="held"):
        for x, _ in loader:
            kept.append(x)


@pytest.mark.parametrize("data", ["png_folder", "indexed_features"])
def test_keeping_every_batchs_targets_holds_no_buffer(data, request):
    # An evaluation loop keeps each batch's labels for the epoch's metrics, as loops over torch's
    # DataLoader do; the targets are copies, so only kept images hold the loader's buffers.
    loader = stoker.DataLoader(request.getfixturevalue(data), batch_size=2, num_workers=1, prefetch_factor=2,
                               transforms="Resize(16), CenterCrop(16)" if data == "png_folder" else "none", timeout=20)
    kept = [y for _, y in loader]
    assert len(kept) == len(loader) > 8
    assert torch.equal(torch.cat(kept), torch.as_tensor(loader.dataset.targets, dtype=kept[0].dtype))


def test_channels_last_is_nchw_with_channels_last_strides(png_folder):
    chain = "Resize(24), CenterCrop(24), Normalize"
    plain, _ = next(iter(stoker.DataLoader(png_folder, batch_size=4, transforms=chain)))
    nhwc, _ = next(iter(stoker.DataLoader(png_folder, batch_size=4, transforms=chain, channels_last=True)))
    assert nhwc.shape == plain.shape == (4, 3, 24, 24)
    assert nhwc.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(nhwc, plain)


def test_use_after_fork_raises(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=4)
    pid = os.fork()
    if pid == 0:
        try:
            iter(loader)
        except RuntimeError as e:
            os._exit(0 if "another process" in str(e) else 2)
        os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


def expect_child_exits(pid, hung):
    """Waits up to 10 s for the forked child `pid` to exit 0; kills it and fails with `hung` if not."""
    for _ in range(200):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail(hung)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("let_go", ["collected", "at_exit"])
def test_a_forked_child_lets_go_of_its_copy_of_a_loader(png_folder, let_go):
    # A child forked while a loader exists (os.fork, a torch DataLoader's worker) has none of its
    # worker threads: letting go of its copy, a cycle of the script's that its garbage collection
    # frees or the exit's closing, must neither wait for them nor abort.
    gc.disable()
    try:
        loader = stoker.DataLoader(png_folder, batch_size=4, num_workers=2, transforms="Resize(16), CenterCrop(16)")
        next(iter(loader))
        holder = {"loader": loader}
        holder["itself"] = holder
        if let_go == "collected":
            del loader, holder
        pid = os.fork()
        if pid == 0:
            gc.collect() if let_go == "collected" else stoker.data_loader._close_all()
            os._exit(0)
    finally:
        gc.enable()
    expect_child_exits(pid, "the forked child hung letting go of the loader")


def test_a_batch_let_go_of_in_a_child_forked_while_its_loader_was_locked_does_not_hang(png_folder):
    # A child forked while a thread of the parent holds the loader's lock (a worker claiming a
    # sample; here set_prefetch, which holds it while the Python allocator makes a buffer) has
    # a copy of that lock that nobody will unlock: a batch tensor it lets go of must not give
    # its buffer back to the loader's pool, which would wait for the lock for ever.
    from stoker import _stoker

    held, children = [], []

    def allocate(nbytes):
        block = torch.empty(nbytes, dtype=torch.uint8)
        if held:  # set_prefetch's new buffer: fork here, the loader's lock held
            pid = os.fork()
            if pid == 0:
                held.clear()  # the batch's last tensor: its buffer would go back to the pool
                gc.collect()
                os._exit(0)
            children.append(pid)
        return block.data_ptr(), block

    loader = _stoker.Loader(_stoker.Source(str(png_folder)), batch_size=4, workers=1, prefetch=2, shuffle=False,
                            drop_last=False, seed=0, rank=0, world_size=1, transforms="Resize((16, 16))",
                            channels_last=False, normalize_in_consumer=False, on_error="substitute", max_bad=0.0,
                            cache_decoded_bytes=0.0, allocate=allocate)
    loader.start_epoch(0)
    held.append(torch.utils.dlpack.from_dlpack(loader.next().inputs))
    loader.prefetch = 3
    (pid,) = children
    expect_child_exits(pid, "the forked child hung letting go of a batch")


class LockedRows(torch.utils.data.Dataset):
    """A Dataset whose __getitem__ holds a lock of its own for a while, as h5py holds its global
    lock while it reads a row."""

    def __init__(self):
        self.lock = threading.Lock()

    def __len__(self):
        return 400

    def __getitem__(self, i):
        with self.lock:
            time.sleep(0.002)
            return torch.full((4,), float(i)), i


def test_a_child_forked_while_workers_read_a_dataset_inherits_none_of_its_locks():
    # A process forks (torch's DataLoader starting its workers for validation, say) while
    # stoker's workers are inside dataset[i], a pass broken off and its read-ahead going on: the
    # child gets a copy of every lock they hold, held for ever (h5py's: the child hangs in its
    # first read). The fork waits until no worker is inside dataset[i], and they wait for it.
    dataset = LockedRows()
    loader = stoker.DataLoader(dataset, batch_size=8, num_workers=2, world_size=1)
    for _ in range(3):
        for step, _batch in enumerate(loader):
            if step == 1:
                break  # the workers go on reading ahead
        pid = os.fork()
        if pid == 0:
            os._exit(0 if dataset.lock.acquire(timeout=2) else 1)
        expect_child_exits(pid, "the forked child hung")
    # The workers go on after the fork: the next pass is whole.
    assert torch.cat([y for _, y in loader]).tolist() == list(range(400))


def loader_in_torch_memory(folder, blocks, workers):
    """A _stoker.Loader of 2 buffers whose memory comes from a Python allocator, as
    device="cuda" and pin_memory give it (plain torch memory here); `blocks` gets each block's
    address, and nothing else holds the block but the loader's buffer."""
    from stoker import _stoker

    def allocate(nbytes):
        block = torch.empty(nbytes, dtype=torch.uint8)
        blocks.append(block.data_ptr())
        return block.data_ptr(), block

    return _stoker.Loader(_stoker.Source(str(folder)), batch_size=4, workers=workers, prefetch=2, shuffle=False,
                          drop_last=False, seed=0, rank=0, world_size=1, transforms="Resize((16, 16))",
                          channels_last=False, normalize_in_consumer=False, on_error="substitute", max_bad=0.0,
                          cache_decoded_bytes=0.0, allocate=allocate)


def test_batches_in_memory_from_python_outlive_their_loader(png_folder):
    # The allocator device="cuda" and pin_memory use (pinned torch memory), here with plain
    # torch memory: each batch keeps it alive, so a tensor may outlive the loader.
    blocks = []
    loader = loader_in_torch_memory(png_folder, blocks, workers=2)
    loader.start_epoch(0)
    batch = loader.next()
    x = torch.utils.dlpack.from_dlpack(batch.inputs)
    copy = x.clone()
    assert len(blocks) == 2  # one per buffer
    del loader, batch
    gc.collect()
    assert torch.equal(x, copy)
    del x
    gc.collect()


def test_a_buffer_made_for_batches_the_script_keeps_comes_from_its_allocator(png_folder):
    # device="cuda" and pin_memory give the loader torch's pinned memory: a buffer added while
    # next() waits (the GIL released) is allocated through Python too.
    blocks = []
    loader = loader_in_torch_memory(png_folder, blocks, workers=1)
    loader.start_epoch(0)
    kept = [loader.next() for _ in range(3)]  # the third comes in a buffer made for it
    assert [b.index for b in kept] == [0, 1, 2] and len(blocks) == 3
    addresses = {torch.utils.dlpack.from_dlpack(b.inputs).data_ptr() for b in kept}
    assert addresses == set(blocks)
