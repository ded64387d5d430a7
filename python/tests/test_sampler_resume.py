"""A state taken within a pass under a script's random sampler (WeightedRandomSampler for class
imbalance, RandomSampler, SubsetRandomSampler, a BatchSampler over one), drawing from its own
generator or torch's default one: the resumed run, in a new process, gets the rest of that
pass's order and then the epochs of the run it resumes, as the checkpoint recipe saves them
(loader.state_dict() and torch.get_rng_state()), while the training step draws from torch's
default generator too (dropout)."""
import io
import json

import numpy as np
import pytest
import torch
from torch.utils.data import BatchSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler

import stoker

ROWS = 40
WEIGHTS = torch.linspace(0.1, 1.0, ROWS, dtype=torch.double)
SAMPLERS = {
    "weighted, own generator": lambda gen: dict(sampler=WeightedRandomSampler(WEIGHTS, ROWS, generator=gen)),
    "weighted, default generator": lambda gen: dict(sampler=WeightedRandomSampler(WEIGHTS, ROWS)),
    "random, own generator": lambda gen: dict(sampler=RandomSampler(range(ROWS), generator=gen)),
    "random, default generator": lambda gen: dict(sampler=RandomSampler(range(ROWS))),
    "subset random": lambda gen: dict(sampler=SubsetRandomSampler(range(0, ROWS, 2), generator=gen)),
    "batch sampler": lambda gen: dict(batch_sampler=BatchSampler(RandomSampler(range(ROWS), generator=gen), 4, False)),
}


def _run(make, state=None, stop=None, epochs=3, persistent=False):
    """A script's run in a fresh process: seeded, the loader made, maybe resumed; the ids of
    each epoch, and the checkpoint taken at global step `stop`."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    options = make(gen)
    dataset = [(np.zeros(2, np.float32), i) for i in range(ROWS)]
    loader = stoker.DataLoader(dataset, **options, **({} if "batch_sampler" in options else {"batch_size": 4}),
                               num_workers=2, persistent_workers=persistent)
    start = 0
    if state is not None:
        loader.load_state_dict(state["loader"])
        torch.set_rng_state(state["rng"])
        start = state["epoch"]
    seen, step = {}, 0
    for epoch in range(start, epochs):
        loader.set_epoch(epoch)
        for _, ids in loader:
            seen.setdefault(epoch, []).extend(ids.tolist())
            torch.rand(3)  # the step's dropout
            step += 1
            if step == stop:
                return seen, {"epoch": epoch, "loader": loader.state_dict(), "rng": torch.get_rng_state()}
    return seen, None


@pytest.mark.parametrize("make", list(SAMPLERS.values()), ids=list(SAMPLERS))
@pytest.mark.parametrize("stop", [3, 13])  # within epoch 0; within epoch 1
@pytest.mark.parametrize("persistent", [False, True], ids=["", "persistent_workers"])
def test_a_resume_within_a_pass_gets_the_rest_of_its_samplers_order(make, stop, persistent):
    whole, _ = _run(make, persistent=persistent)
    before, checkpoint = _run(make, stop=stop, persistent=persistent)
    saved = io.BytesIO()
    torch.save(checkpoint["loader"], saved)
    saved.seek(0)
    loaded = torch.load(saved, weights_only=True)  # pip's torch's default from 2.6
    assert loaded == checkpoint["loader"] == json.loads(json.dumps(checkpoint["loader"]))
    after, _ = _run(make, state=dict(checkpoint, loader=loaded), persistent=persistent)
    resumed = {e: before.get(e, []) + after.get(e, []) for e in whole}
    assert resumed == whole


def test_a_state_drawn_under_another_sampler_is_refused_in_one_line():
    _, checkpoint = _run(SAMPLERS["weighted, own generator"], stop=3)
    assert len(checkpoint["loader"]["sampler_draws"]) == 2  # torch's default generator, the sampler's own
    with pytest.raises(ValueError, match=r"^load_state_dict: the state's sampler_draws are not the 1 generator states "
                       r"of this loader's sampler: it was taken under another sampler; .*epoch's end$"):
        _run(SAMPLERS["weighted, default generator"], state=checkpoint)


def test_a_pass_of_another_epoch_after_the_resume_draws_its_own_order():
    """A loop that resumes from an epoch other than the state's: that pass draws anew, and a state
    taken within it resumes its own order."""
    make = SAMPLERS["random, own generator"]
    _, checkpoint = _run(make, stop=3)
    whole, _ = _run(make, epochs=2)

    def made():
        torch.manual_seed(0)
        gen = torch.Generator().manual_seed(1)
        loader = stoker.DataLoader([(np.zeros(2, np.float32), i) for i in range(ROWS)], batch_size=4, **make(gen))
        list(RandomSampler(range(ROWS), generator=gen))  # where the run's generator stood after epoch 0
        return loader, gen

    loader, _ = made()
    loader.load_state_dict(checkpoint["loader"])
    loader.set_epoch(1)  # not the state's epoch: a pass from its first batch, drawn anew
    batches = iter(loader)
    first = [i for _ in range(2) for i in next(batches)[1].tolist()]
    state = loader.state_dict()
    rest = [i for _, ids in batches for i in ids.tolist()]
    assert first + rest == whole[1]
    resumed, _ = made()
    resumed.load_state_dict(state)
    resumed.set_epoch(1)
    assert [i for _, ids in resumed for i in ids.tolist()] == rest
