"""A script that seeds torch before each epoch (torch.manual_seed(seed + epoch), or its
generator=.manual_seed) gets, in a run resumed at epoch k in a fresh process with no loader
state, epoch k of the uninterrupted run: its order and its augmentations, as with torch's
DataLoader, which draws each pass's seeds from the generator at iter(). Passes with no reseed
stay different epoch after epoch; a state loaded mid-pass keeps its batches."""
import pytest
import torch
from torch.utils.data import DistributedSampler, RandomSampler

import stoker

CHAIN = "RandomResizedCrop(16), RandomHorizontalFlip(), ToUint8"
SEED = 10


class Draws(torch.utils.data.Dataset):
    """torch's side: each item is its index and a draw of the worker's torch generator (seeded
    by the pass's base seed), as a random transform draws its parameters."""

    def __len__(self):
        return 24

    def __getitem__(self, i):
        return i, torch.rand(1).item()


def torch_pass(loader):
    return [(int(i), round(float(d), 6)) for ids, draws in loader for i, d in zip(ids, draws)]


def stoker_pass(loader):
    """Each sample's index and its augmentation (the crop box and the flip), in order."""
    out = []
    for _, _, params in loader:
        out += zip(params["index"].tolist(), map(tuple, params["box"].tolist()), params["hflip"].tolist())
    return out


def reseed(generator, epoch):
    (generator if generator is not None else torch).manual_seed(SEED + epoch)


def uninterrupted_and_resumed(make, one_pass, generator=None, sampler=None, epochs=3, set_epoch=False):
    """Epochs 0..epochs-1 of a run that reseeds before each, and the last epoch again, in a run
    resumed there with a new loader (another process: torch seeded otherwise before it)."""
    def start(epoch, loader):
        if sampler is not None:
            sampler.set_epoch(epoch)
        if set_epoch:
            loader.set_epoch(epoch)
        reseed(generator, epoch)
        return one_pass(loader)

    torch.manual_seed(SEED)
    loader = make()
    whole = [start(epoch, loader) for epoch in range(epochs)]
    torch.manual_seed(12345)
    if generator is not None:
        generator.manual_seed(54321)
    resumed = start(epochs - 1, make())
    return whole, resumed


@pytest.mark.parametrize("given", ["shuffle", "RandomSampler", "generator", "DistributedSampler"])
def test_torch_resumes_epoch_k_of_a_run_that_seeds_each_epoch(given):
    """What stoker follows: torch's DataLoader gives the resumed epoch the uninterrupted one's."""
    generator = torch.Generator() if given == "generator" else None
    dataset = Draws()
    sampler = {"RandomSampler": lambda: RandomSampler(dataset),
               "DistributedSampler": lambda: DistributedSampler(dataset, num_replicas=2, rank=0)}.get(given)
    sampler = sampler() if sampler is not None else None
    whole, resumed = uninterrupted_and_resumed(
        lambda: torch.utils.data.DataLoader(dataset, batch_size=5, shuffle=sampler is None, sampler=sampler,
                                            num_workers=1, generator=generator),
        torch_pass, generator, sampler if given == "DistributedSampler" else None)
    assert whole[1] != whole[2]
    assert resumed == whole[2]


@pytest.mark.parametrize("given", ["shuffle", "RandomSampler", "generator", "DistributedSampler", "set_epoch"])
def test_stoker_resumes_epoch_k_of_a_run_that_seeds_each_epoch(png_folder, given):
    """Order and augmentations of the resumed epoch are the uninterrupted run's, whether the
    resumed loop sets the loader's epoch (set_epoch, a DistributedSampler's) or not."""
    generator = torch.Generator() if given == "generator" else None
    sampler = {"RandomSampler": lambda: RandomSampler(range(24)),
               "DistributedSampler": lambda: DistributedSampler(range(24), num_replicas=2, rank=0)}.get(given)
    sampler = sampler() if sampler is not None else None
    whole, resumed = uninterrupted_and_resumed(
        lambda: stoker.DataLoader(png_folder, batch_size=5, shuffle=sampler is None, sampler=sampler,
                                  num_workers=2, generator=generator, transforms=CHAIN, return_params=True),
        stoker_pass, generator, sampler if given == "DistributedSampler" else None, set_epoch=given == "set_epoch")
    assert whole[1] != whole[2]
    assert resumed == whole[2]


def test_passes_with_no_reseed_differ_and_repeat_run_to_run(png_folder):
    def run():
        torch.manual_seed(SEED)
        loader = stoker.DataLoader(png_folder, batch_size=5, shuffle=True, transforms=CHAIN, return_params=True)
        return [stoker_pass(loader) for _ in range(3)]

    first = run()
    assert first[0] != first[1] != first[2] != first[0]
    assert run() == first


def test_a_reseed_with_draws_after_it_is_not_a_reseed(png_folder):
    """A pass follows a generator seeded and not drawn from since (what a reseed before the
    epoch leaves); a seed drawn from since is the run's own stream, as a pass with no reseed."""
    torch.manual_seed(SEED)
    loader = stoker.DataLoader(png_folder, batch_size=5, shuffle=True, transforms=CHAIN, return_params=True)
    stoker_pass(loader)
    torch.rand(3)
    torch.manual_seed(SEED)
    reference = stoker.DataLoader(png_folder, batch_size=5, shuffle=True, transforms=CHAIN, return_params=True)
    stoker_pass(reference)
    assert stoker_pass(loader) == stoker_pass(reference)


@pytest.mark.parametrize("reseeds", [False, True])
@pytest.mark.parametrize("at", ["mid-pass", "epoch-end"])
def test_a_state_resumes_the_uninterrupted_run(png_folder, reseeds, at):
    """Taken within an epoch that followed a reseed, the state resumes that epoch's batches; taken
    at its end, the next epoch follows the resumed loop's reseed as the uninterrupted run's did
    (and keeps the state's seed where the run seeds torch once). The epochs after are the
    uninterrupted run's either way."""
    def make():
        return stoker.DataLoader(png_folder, batch_size=5, shuffle=True, transforms=CHAIN, return_params=True)

    def loop(loader, start, checkpoint=None):
        seen = []
        for epoch in range(start, 4):
            if reseeds:
                reseed(None, epoch)
            for k, (_, _, params) in enumerate(loader):
                seen.append((epoch, params["index"].tolist(), params["box"].tolist()))
                if checkpoint is not None and epoch == 1 and k == 1 and at == "mid-pass":
                    checkpoint.update(loader=loader.state_dict())
            if checkpoint is not None and epoch == 1 and at == "epoch-end":
                checkpoint.update(loader=loader.state_dict())
        return seen

    torch.manual_seed(SEED)
    checkpoint = {}
    whole = loop(make(), 0, checkpoint)
    torch.manual_seed(SEED)  # another process, seeded as the first at its top
    loader = make()
    loader.load_state_dict(checkpoint["loader"])
    rest = []
    if at == "mid-pass":
        for _, _, params in loader:  # the rest of epoch 1, with the state's seed whatever torch holds
            rest.append((1, params["index"].tolist(), params["box"].tolist()))
    rest += loop(loader, 2)
    assert rest == whole[-len(rest):] and len(rest) == (3 if at == "mid-pass" else 0) + 10


class WorkerSeeds(torch.utils.data.Dataset):
    """Each item: get_worker_info().seed of the worker that reads it."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.zeros(2), torch.utils.data.get_worker_info().seed


def test_get_worker_info_seed_is_torchs_base_seed_of_a_reseeded_pass():
    """get_worker_info().seed on a pass after torch.manual_seed(s) is the base seed torch's
    DataLoader draws then (plus the worker's id), as in torch's worker processes."""
    def seeds(make):
        torch.manual_seed(0)
        loader = make()
        list(loader)
        torch.manual_seed(SEED + 1)
        return {int(s) for _, y in loader for s in y}

    ours = seeds(lambda: stoker.DataLoader(WorkerSeeds(), batch_size=4, num_workers=1))
    theirs = seeds(lambda: torch.utils.data.DataLoader(WorkerSeeds(), batch_size=4, num_workers=1))
    assert ours == theirs and len(theirs) == 1


def test_ranks_keep_one_shared_order_whatever_each_seeds(png_folder):
    """On several ranks stoker shares one seed (rank 0's, when made) so that the shards split the
    data; a reseed of each rank's own (seed + rank) is not followed: the epochs still split it."""
    loaders = [stoker.DataLoader(png_folder, batch_size=4, shuffle=True, rank=r, world_size=2, transforms=CHAIN,
                                 return_params=True) for r in range(2)]
    for epoch in range(2):
        shards = []
        for rank, loader in enumerate(loaders):
            torch.manual_seed(SEED + epoch + 100 * rank)
            shards.append([i for i, _, _ in stoker_pass(loader)])
        assert sorted(shards[0] + shards[1]) == list(range(24))


class Pictures(torch.utils.data.Dataset):
    """The folder's images as a Dataset object of PIL images: Python the processes run."""

    def __init__(self, folder):
        self.files = sorted(folder.glob("*/*.png"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        from PIL import Image

        return Image.open(self.files[i]).convert("RGB"), 0


def test_dataset_processes_resume_epoch_k_of_a_run_that_seeds_each_epoch(png_folder):
    whole, resumed = uninterrupted_and_resumed(
        lambda: stoker.DataLoader(Pictures(png_folder), batch_size=5, shuffle=True, transforms=CHAIN,
                                  return_params=True, dataset_processes=1),
        stoker_pass)
    assert whole[1] != whole[2]
    assert resumed == whole[2]


def test_the_same_seed_before_each_epoch_repeats_the_epoch_as_torchs():
    """torch.manual_seed(s) before every epoch: torch's DataLoader gives the same order every
    epoch, and so does stoker (its workers, which plan the next epoch ahead, drop that plan)."""
    def epochs(make, one_pass):
        loader = make()
        out = []
        for _ in range(3):
            torch.manual_seed(SEED)
            out.append(one_pass(loader))
        return out

    theirs = epochs(lambda: torch.utils.data.DataLoader(Draws(), batch_size=5, shuffle=True, num_workers=1),
                    torch_pass)
    assert theirs[0] == theirs[1] == theirs[2]


def test_the_same_seed_before_each_epoch_repeats_stokers_epoch(png_folder):
    torch.manual_seed(0)
    loader = stoker.DataLoader(png_folder, batch_size=5, shuffle=True, transforms=CHAIN, return_params=True)
    out = []
    for _ in range(3):
        torch.manual_seed(SEED)
        out.append(stoker_pass(loader))
    assert out[0] == out[1] == out[2]


class PictureStream(torch.utils.data.IterableDataset):
    """The folder's images as an iterable-style Dataset of PIL images."""

    def __init__(self, folder):
        self.files = sorted(folder.glob("*/*.png"))

    def __iter__(self):
        from PIL import Image

        for path in self.files:
            yield Image.open(path).convert("RGB"), 0


def test_an_iterable_resumes_epoch_k_s_augmentations_of_a_run_that_seeds_each_epoch(png_folder):
    def boxes(loader):
        return [tuple(box) for _, _, params in loader for box in params["box"].tolist()]

    whole, resumed = uninterrupted_and_resumed(
        lambda: stoker.DataLoader(PictureStream(png_folder), batch_size=5, transforms=CHAIN, return_params=True),
        boxes)
    assert whole[1] != whole[2]
    assert resumed == whole[2]


def test_a_stop_for_bad_samples_names_the_loaders_epoch_after_a_reseed(tmp_path):
    import numpy as np
    from PIL import Image

    for c in ("a", "b"):
        (tmp_path / c).mkdir()
        for i in range(4):
            Image.fromarray(np.full((20, 20, 3), 40 * i, np.uint8)).save(tmp_path / c / f"{i}.png")
    (tmp_path / "b" / "3.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"broken" * 10)
    loader = stoker.DataLoader(tmp_path, batch_size=4, shuffle=True, transforms="Resize((8, 8))", max_bad=0.0)
    loader.set_epoch(2)
    reseed(None, 2)
    with pytest.raises(stoker.DataError, match=r"^1 of 8 samples in epoch 2 are bad"):
        for _ in loader:
            pass
    assert loader.stats()["epoch"] == 2
