"""One consumer at a time: threads sharing a stoker.DataLoader get RuntimeError at once instead
of a hang, a lost batch or an epoch split between them; copies are refused."""
import copy
import pickle
import threading

import numpy as np
import pytest

import stoker


@pytest.fixture()
def rows(tmp_path):
    path = tmp_path / "rows.npz"
    np.savez(path, x=np.arange(96 * 3, dtype=np.float32).reshape(96, 3), y=np.arange(96, dtype=np.float32))
    return path


def test_another_threads_iter_is_refused_while_a_pass_is_unfinished(rows):
    loader = stoker.DataLoader(rows, batch_size=8, num_workers=1)
    it = iter(loader)
    next(it)
    error = in_thread(lambda: _raised(lambda: iter(loader)))
    assert isinstance(error, RuntimeError), error
    assert "one consumer at a time" in str(error) and "another thread" in str(error)
    # The first pass goes on, whole.
    assert 1 + sum(1 for _ in it) == len(loader)
    # Once it ended, another thread may take the next pass.
    assert in_thread(lambda: sum(1 for _ in loader)) == len(loader)


def test_an_abandoned_pass_frees_the_loader_for_other_threads(rows):
    loader = stoker.DataLoader(rows, batch_size=8, num_workers=1)
    for batch in loader:
        break  # the iterator is dropped here
    del batch  # and its batch: the loop below must not hold two buffers of two
    assert in_thread(lambda: sum(1 for _ in loader)) == len(loader)


def test_threads_hammering_one_loader_lose_and_double_no_batch(rows):
    # Four threads each try `for x, y in loader` 25 times. Every pass that starts is finished by
    # its own thread with every batch of its epoch, in order; the others are refused.
    loader = stoker.DataLoader(rows, batch_size=8, shuffle=True, seed=5, num_workers=2)
    passes, refused, lock = [], [], threading.Lock()

    def consume():
        for _ in range(25):
            try:
                ids = [tuple(int(i) for i in y.tolist()) for _, y in loader]
            except RuntimeError as e:
                with lock:
                    refused.append(str(e))
                continue
            with lock:
                passes.append(ids)

    threads = [threading.Thread(target=consume) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert all("one consumer at a time" in r or "stale" in r for r in refused), refused[:3]
    reference = stoker.DataLoader(rows, batch_size=8, shuffle=True, seed=5, num_workers=1)
    expected = [[tuple(int(i) for i in y.tolist()) for _, y in reference] for _ in range(len(passes))]
    assert sorted(passes) == sorted(expected), "each pass is one whole epoch, each epoch once"
    assert len(passes) + len(refused) == 100


def test_copies_and_pickles_are_refused(rows):
    loader = stoker.DataLoader(rows, batch_size=8)
    for make in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="stoker.DataLoader cannot be"):
            make(loader)
    for make in (copy.deepcopy, pickle.dumps):  # torch.save((dataset, sampler)), as torchvision's references cache
        with pytest.raises(TypeError, match=r"^loader.sampler, stoker's own order .*, cannot be pickled or "
                                            r"copied: save loader.state_dict\(\)"):
            make(("train/", loader.sampler))
        with pytest.raises(TypeError, match=r"^loader.dataset, stoker's view of the data at .*, cannot be pickled or "
                                            r"copied: save that path"):
            make((loader.dataset, None))


def in_thread(call):
    """What `call` returns on a thread of its own; fails the test when it has not returned in 10 s."""
    got = []
    thread = threading.Thread(target=lambda: got.append(call()))
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the call blocked"
    assert len(got) == 1, "the call raised"
    return got[0]


def _raised(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the test inspects it
        return e
    return None
