"""What torch's DataLoader draws from torch's generator (its `generator=`, else torch's default
one), so that stoker.DataLoader advances it alike and a seeded script is the same run with either.

torch's DataLoader (1.13 and 2.x) draws nothing when it is made. Each iter() makes an iterator that
draws the workers' base seed, one int64; a loader with persistent_workers keeps its first
iterator and draws it once. The sampler draws after it: with shuffle=True and no sampler, its
RandomSampler(dataset, generator=generator) takes a seed from torch's default generator, or, given
a generator, permutes on it: one randperm for the pass and one more, for a remainder of none,
at the pass's end. stoker makes these draws when the pass starts; the draws of the Dataset's
items it reads when it is made (to learn their kind) it undoes (draws_undone)."""
import contextlib
import random

import numpy as np
import torch


def draw_seed(generator=None):
    """One int64 from `generator` (None: torch's default one), as torch's DataLoader draws its seeds."""
    return int(torch.empty((), dtype=torch.int64).random_(generator=generator).item())


def peek_seed(generator=None):
    """The int64 draw_seed would give now, leaving the generator as it was: the base seed of the
    loader's first pass when nothing draws before it."""
    state = torch.get_rng_state() if generator is None else generator.get_state()
    try:
        return draw_seed(generator)
    finally:
        if generator is None:
            torch.set_rng_state(state)
        else:
            generator.set_state(state)


def draw_random_sampler(size, generator=None):
    """The draws of one pass of torch's RandomSampler over `size` samples (no replacement, every
    sample once): a seed from torch's default generator, or two permutations on `generator`."""
    if generator is None:
        draw_seed()
        return
    for _ in range(2):
        torch.randperm(size, generator=generator)


def global_states():
    """The states of torch's default generator, Python's `random` and NumPy's global generator,
    by the name a line gives each (changed_generators)."""
    return {"torch's": torch.get_rng_state(), "random's": random.getstate(), "NumPy's": np.random.get_state()}


def advance_globals():
    """One draw from each global generator (global_states): a worker_init_fn that seeds one then
    changes it, even to the state it had before (torch.manual_seed(0) and then
    np.random.seed(torch.initial_seed())). Inside draws_undone."""
    torch.rand(1)
    random.random()
    np.random.random()


def changed_generators(before, after):
    """The names of the global generators whose state differs between `before` and `after`
    (global_states): seeded or drawn from in between."""
    def same(a, b):
        if isinstance(a, torch.Tensor):
            return torch.equal(a, b)
        if isinstance(a, np.ndarray):
            return np.array_equal(a, b)
        if isinstance(a, (tuple, list)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return a == b
    return [name for name in before if not same(before[name], after[name])]


@contextlib.contextmanager
def draws_undone():
    """Leaves torch's default generator, Python's `random` and NumPy's global generator as they
    were before the block: around the loader's look at a Dataset's first items when it is made,
    whose __getitem__ (or __iter__) may draw from them (torchvision's random transforms draw
    from torch's), where torch's DataLoader calls none. Thread safety: the loader's consumer;
    another thread's draws during the block are undone too."""
    states = torch.get_rng_state(), random.getstate(), np.random.get_state()
    try:
        yield
    finally:
        torch.set_rng_state(states[0])
        random.setstate(states[1])
        np.random.set_state(states[2])


@contextlib.contextmanager
def seeded(seed):
    """torch's, Python's and NumPy's global generators seeded from `seed`, as torch's DataLoader
    seeds its worker processes, and put back as they were on leaving (draws_undone): around a
    collate_fn's draws on whole samples."""
    with draws_undone():
        random.seed(seed)
        torch.manual_seed(seed)
        np.random.seed(seed % 2**32)
        yield
