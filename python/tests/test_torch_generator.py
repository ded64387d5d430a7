"""stoker.DataLoader advances torch's generator (the default one, or generator=) exactly as
torch's DataLoader does: nothing when made; on every pass the workers' base seed, then what the
sampler draws (RandomSampler's for shuffle=True). A seeded script is then the same run with
either loader: the same weights for a model made after the loader, the same indices from a
random sampler of the script's, the same draws after any number of epochs."""
import numpy as np
import pytest
import torch
from torch.utils.data import RandomSampler, SubsetRandomSampler, WeightedRandomSampler

import stoker

N = 30


@pytest.fixture()
def rows(tmp_path):
    """An .npz of N feature rows whose float target is the row's id."""
    path = tmp_path / "rows.npz"
    np.savez(path, x=np.arange(N * 2, dtype=np.float32).reshape(N, 2), y=np.arange(N, dtype=np.float32))
    return path


def torch_rows():
    return torch.utils.data.TensorDataset(torch.zeros(N, 2), torch.arange(N, dtype=torch.float32))


def ids(loader):
    return [int(i) for _, y in loader for i in y.tolist()]


def run(make_loader, epochs=3, seed=0, generator=None):
    """A seeded script: the loader, then a model, then `epochs` passes; what it draws and sees."""
    torch.manual_seed(seed)
    if generator is not None:
        generator.manual_seed(seed + 1)
    loader = make_loader()
    weights = torch.nn.Linear(4, 3).weight.detach().clone()  # a model made after the loader
    passes = []
    for _ in range(epochs):
        passes.append((ids(loader), torch.get_rng_state(), generator.get_state() if generator is not None else None))
    return weights, passes, torch.rand(4)


def assert_same_run(ours, theirs, same_ids=True):
    assert torch.equal(ours[0], theirs[0]), "a model made after the loader starts from torch's weights"
    for epoch, (a, b) in enumerate(zip(ours[1], theirs[1])):
        if same_ids:
            assert a[0] == b[0], f"epoch {epoch}: the sampler's indices"
        assert torch.equal(a[1], b[1]), f"epoch {epoch}: torch's generator after the pass"
        if a[2] is not None:
            assert torch.equal(a[2], b[2]), f"epoch {epoch}: generator= after the pass"
    assert torch.equal(ours[2], theirs[2]), "torch.rand() after the passes"


@pytest.mark.parametrize("shuffle", [False, True])
def test_the_stream_after_each_pass_is_torchs(rows, shuffle):
    ours = run(lambda: stoker.DataLoader(rows, batch_size=7, shuffle=shuffle, num_workers=2))
    theirs = run(lambda: torch.utils.data.DataLoader(torch_rows(), batch_size=7, shuffle=shuffle))
    assert_same_run(ours, theirs, same_ids=not shuffle)  # shuffle=True's order is stoker's own


@pytest.mark.parametrize("shuffle", [False, True])
def test_a_given_generator_advances_as_torchs(rows, shuffle):
    """generator= draws the base seed (and with shuffle=True, RandomSampler's permutations)."""
    g = torch.Generator()
    ours = run(lambda: stoker.DataLoader(rows, batch_size=7, shuffle=shuffle, generator=g, num_workers=2),
               generator=g)
    theirs = run(lambda: torch.utils.data.DataLoader(torch_rows(), batch_size=7, shuffle=shuffle, generator=g),
                 generator=g)
    assert_same_run(ours, theirs, same_ids=not shuffle)


@pytest.mark.parametrize("make_sampler", [
    lambda: WeightedRandomSampler([1.0] * 10 + [5.0] * 20, 40),
    lambda: SubsetRandomSampler([3, 1, 4, 15, 9, 26, 5, 20]),
    lambda: RandomSampler(range(N), replacement=True),
], ids=["weighted", "subset", "random_replacement"])
def test_a_scripts_random_sampler_draws_torchs_indices(rows, make_sampler):
    ours = run(lambda: stoker.DataLoader(rows, batch_size=7, sampler=make_sampler(), num_workers=2))
    theirs = run(lambda: torch.utils.data.DataLoader(torch_rows(), batch_size=7, sampler=make_sampler()))
    assert_same_run(ours, theirs)


class EagerBatches:
    """A batch sampler that draws its order in iter() itself (before torch's DataLoader draws its
    base seed), not at its first batch as torch's BatchSampler does."""
    batch_size = 7

    def __len__(self):
        return 3

    def __iter__(self):
        order = torch.randperm(N)[:21].tolist()
        return iter([order[k:k + 7] for k in range(0, 21, 7)])


@pytest.mark.parametrize("batch_sampler", [
    lambda: torch.utils.data.BatchSampler(WeightedRandomSampler([1.0] * N, 21), batch_size=7, drop_last=False),
    EagerBatches,
], ids=["BatchSampler", "eager"])
def test_a_batch_sampler_draws_torchs_indices(rows, batch_sampler):
    ours = run(lambda: stoker.DataLoader(rows, batch_sampler=batch_sampler(), num_workers=2))
    theirs = run(lambda: torch.utils.data.DataLoader(torch_rows(), batch_sampler=batch_sampler()))
    assert_same_run(ours, theirs)


def test_persistent_workers_draw_the_base_seed_once(rows):
    """torch keeps one iterator for persistent workers, and draws its base seed once."""
    ours = run(lambda: stoker.DataLoader(rows, batch_size=7, shuffle=True, num_workers=1, persistent_workers=True))
    theirs = run(lambda: torch.utils.data.DataLoader(torch_rows(), batch_size=7, shuffle=True, num_workers=1,
                                                     persistent_workers=True))
    assert_same_run(ours, theirs, same_ids=False)


def test_the_seed_is_the_first_passs_draw_and_takes_nothing(rows):
    torch.manual_seed(5)
    first = int(torch.empty((), dtype=torch.int64).random_().item())
    torch.manual_seed(5)
    before = torch.get_rng_state()
    loader = stoker.DataLoader(rows, batch_size=7, shuffle=True, num_workers=1)
    assert torch.equal(torch.get_rng_state(), before), "making the loader draws nothing"
    assert loader.seed == first
    g = torch.Generator().manual_seed(6)
    state = g.get_state()
    first = int(torch.empty((), dtype=torch.int64).random_(generator=torch.Generator().manual_seed(6)).item())
    assert stoker.DataLoader(rows, generator=g).seed == first
    assert torch.equal(g.get_state(), state), "nor from generator="


def test_a_given_seed_still_draws_as_torch(rows):
    """seed= fixes stoker's order; the script's other draws stay torch's."""
    ours = run(lambda: stoker.DataLoader(rows, batch_size=7, shuffle=True, seed=3, num_workers=1))
    theirs = run(lambda: torch.utils.data.DataLoader(torch_rows(), batch_size=7, shuffle=True))
    assert_same_run(ours, theirs, same_ids=False)


@pytest.mark.parametrize("stop", [2, 5])  # within epoch 1; at its last batch, before its pass ended
def test_a_resumed_run_draws_as_the_uninterrupted_one(rows, stop):
    """A checkpoint keeps the loader's state and torch's generator state; the resumed run then
    gets the uninterrupted run's batches and draws: a pass resumed within its epoch, or one a
    state was taken at the end of, draws nothing (the epoch's draws were made when it started)."""
    def loop(loader, start_epoch, checkpoint=None):
        seen = []
        for epoch in range(start_epoch, 3):
            loader.set_epoch(epoch)
            for k, (_, y) in enumerate(loader):
                seen.append((epoch, y.tolist(), torch.rand(1).item()))  # the model's draws
                if checkpoint is not None and epoch == 1 and k + 1 == stop:
                    checkpoint.update(loader=loader.state_dict(), rng=torch.get_rng_state(), epoch=epoch)
        return seen

    def make():
        return stoker.DataLoader(rows, batch_size=7, shuffle=True, num_workers=1)

    torch.manual_seed(0)
    checkpoint = {}
    whole = loop(make(), 0, checkpoint)
    torch.manual_seed(1)  # another process: only the checkpoint carries the run on
    loader = make()
    loader.load_state_dict(checkpoint["loader"])
    torch.set_rng_state(checkpoint["rng"])
    resumed = loop(loader, checkpoint["epoch"])
    assert len(resumed) == 5 - stop + 5
    assert resumed == whole[-len(resumed):]


def test_a_generator_that_is_not_one_is_refused_in_one_line(rows):
    with pytest.raises(ValueError) as e:
        stoker.DataLoader(rows, generator=5)
    assert str(e.value) == "generator=5: a torch.Generator, or None for torch's default one"


@pytest.mark.parametrize("given", [False, True])
def test_a_script_that_seeds_after_making_the_loader_repeats_its_run(rows, given):
    """torch.manual_seed (or generator.manual_seed) between making the loader and its first pass,
    as a script run twice in one process (a notebook, a sweep) does: the pass's base seed is the
    seed, as torch's DataLoader draws it then, so the runs repeat each other whatever the
    generator held when each loader was made (another seed; the same seed, drawn from since)."""
    torch.manual_seed(1)
    g = torch.Generator().manual_seed(1) if given else None
    first = int(torch.empty((), dtype=torch.int64).random_(generator=torch.Generator().manual_seed(11)).item())
    runs = []
    for _ in range(2):
        loader = stoker.DataLoader(rows, batch_size=7, shuffle=True, num_workers=1, generator=g)
        (g if given else torch).manual_seed(11)
        runs.append((ids(loader), ids(loader)))
        assert loader.seed == first, "the seed is the base seed the first pass drew"
    assert runs[0] == runs[1]


def test_a_loaded_state_keeps_its_seed_when_torch_is_seeded_after(rows):
    loader = stoker.DataLoader(rows, batch_size=7, shuffle=True, num_workers=1, seed=4)
    state = loader.state_dict()
    torch.manual_seed(0)
    resumed = stoker.DataLoader(rows, batch_size=7, shuffle=True, num_workers=1)
    resumed.load_state_dict(state)
    torch.manual_seed(12)
    assert ids(resumed) == ids(loader) and resumed.seed == 4


class Augmented(torch.utils.data.Dataset):
    """Items whose __getitem__ draws from the global generators, as torchvision's random
    transforms draw from torch's (open_clip's RandomResizedCrop) and scripts' own from random's
    and NumPy's."""

    def __len__(self):
        return N

    def __getitem__(self, i):
        import random
        return torch.rand(2) + random.random() + np.random.rand(), float(i)


class AugmentedStream(torch.utils.data.IterableDataset):
    def __iter__(self):
        return (Augmented()[i] for i in range(N))


def global_draws():
    import random
    return torch.rand(3).tolist(), random.random(), np.random.rand()


@pytest.mark.parametrize("dataset,options", [(Augmented(), dict(num_workers=2)),
                                             (Augmented(), dict(dataset_processes=2)),
                                             (AugmentedStream(), dict(dataset_processes=1))])
def test_making_the_loader_draws_nothing_though_the_datasets_items_do(dataset, options):
    # The loader looks at the first items when it is made; torch's DataLoader calls no __getitem__ then.
    import random
    draws = []
    for make in (lambda: None, lambda: stoker.DataLoader(dataset, batch_size=7, **options)):
        torch.manual_seed(0), random.seed(0), np.random.seed(0)
        loader = make()
        draws.append(global_draws())
        del loader
    assert draws[1] == draws[0]


def test_with_dataset_processes_a_run_draws_as_torchs_whose_items_draw_too():
    ours = run(lambda: stoker.DataLoader(Augmented(), batch_size=7, dataset_processes=2))
    theirs = run(lambda: torch.utils.data.DataLoader(Augmented(), batch_size=7, num_workers=2))
    assert_same_run(ours, theirs)
