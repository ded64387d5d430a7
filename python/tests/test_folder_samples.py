"""An ImageFolder's samples changed between passes (relabelled, listed anew, a Subset's indices
changed): each pass serves the samples as they are at its start, as torch's DataLoader does, whose
workers index `samples` at each item; a change during a pass is the next pass's."""
import numpy as np
import pytest
import torch

import stoker

torchvision = pytest.importorskip("torchvision")

CHAIN = "Resize(4), CenterCrop(4), ToUint8"


@pytest.fixture
def folder(tmp_path):
    """Classes a and b, 3 PNGs each, sample k (in the ImageFolder's order) all of value 10 * (k + 1)."""
    from PIL import Image

    for c, label in enumerate(("a", "b")):
        (tmp_path / label).mkdir()
        for i in range(3):
            Image.fromarray(np.full((6, 6, 3), 10 * (3 * c + i + 1), np.uint8)).save(tmp_path / label / f"{i}.png")
    return tmp_path


def image_folder(root, extensions=None):
    """The ImageFolder torch's DataLoader reads, its transform the one stoker runs as CHAIN; with
    `extensions`, a DatasetFolder of those files read by PIL."""
    T = torchvision.transforms
    transform = T.Compose([T.Resize(4), T.CenterCrop(4), T.PILToTensor()])
    if extensions is not None:
        return torchvision.datasets.DatasetFolder(str(root), torchvision.datasets.folder.default_loader, extensions,
                                                  transform=transform)
    return torchvision.datasets.ImageFolder(str(root), transform=transform)


def pairs(loader):
    """(pixel value, label) of each sample of one pass, in order."""
    return [(int(x[k].float().mean()), int(t[k])) for x, t in loader for k in range(len(t))]


def expected(dataset):
    """(pixel value, label) of each of the samples `dataset` holds now, in order."""
    return [(int(dataset[i][0].float().mean()), int(dataset[i][1])) for i in range(len(dataset))]


def _relabel(folder):
    folder.samples[0] = (folder.samples[0][0], 1)
    folder.targets[0] = 1


def _relist(folder):
    folder.samples = folder.samples[:4]


def _grow(folder):
    folder.samples = folder.samples + folder.samples[1:3]


def _relabel_all(folder):  # pseudo-labels: a new list of new tuples
    folder.samples = [(path, 1 - label) for path, label in folder.samples]


def _reorder(folder):  # as many samples, of other paths at each place
    folder.samples = folder.samples[::-1]


@pytest.mark.parametrize("change", [_relabel, _relist, _grow, _relabel_all, _reorder])
def test_each_pass_serves_the_samples_as_torchs_dataloader_does(folder, change):
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=4, transforms=CHAIN, num_workers=2)
    reference = torch.utils.data.DataLoader(dataset, batch_size=4)
    assert pairs(loader) == pairs(reference) == [(10, 0), (20, 0), (30, 0), (40, 1), (50, 1), (60, 1)]
    change(dataset)
    assert len(loader) == len(reference)
    assert pairs(loader) == pairs(reference) == expected(dataset)
    assert loader.stats()["samples"] == len(dataset.samples)
    assert loader.state_dict()["samples"] == len(dataset.samples)
    assert pairs(loader) == expected(dataset)  # and the passes after it


@pytest.mark.parametrize("shuffle", [False, True])
def test_passes_over_changed_samples_keep_the_seeds_order(folder, shuffle):
    # The order of a pass over new samples of one size is the one of a loader made on them.
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=2, shuffle=shuffle, seed=3, transforms=CHAIN)
    pairs(loader)
    _relabel_all(dataset)
    fresh = stoker.DataLoader(dataset, batch_size=2, shuffle=shuffle, seed=3, transforms=CHAIN)
    fresh.set_epoch(1)
    assert pairs(loader) == pairs(fresh)
    assert sorted(pairs(loader)) == sorted(expected(dataset))


def test_unchanged_samples_keep_the_loader(folder):
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=4, transforms=CHAIN)
    engine = loader._loader
    pairs(loader)
    dataset.samples = [(path, int(label)) for path, label in dataset.samples]  # equal samples, other tuples
    pairs(loader)
    assert loader._loader is engine


def test_a_change_during_a_pass_is_the_next_passs(folder):
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=3, transforms=CHAIN)
    it = iter(loader)
    first = next(it)
    _relabel_all(dataset)
    _relist(dataset)
    rest = list(it)
    assert [int(t) for _, ts in [first, *rest] for t in ts] == [0, 0, 0, 1, 1, 1]
    assert pairs(loader) == expected(dataset) == [(10, 1), (20, 1), (30, 1), (40, 0)]


def test_a_subset_whose_indices_change(folder):
    dataset = image_folder(folder)
    subset = torch.utils.data.Subset(dataset, [0, 1, 2])
    loader = stoker.DataLoader(subset, batch_size=3, transforms=CHAIN)
    assert pairs(loader) == [(10, 0), (20, 0), (30, 0)]
    subset.indices[2] = 5  # in place
    assert len(loader) == 1
    assert pairs(loader) == expected(subset) == [(10, 0), (20, 0), (60, 1)]
    subset.indices = torch.tensor([4, 3, 2, 1])  # another kind, and size
    assert len(loader) == 2
    assert pairs(loader) == pairs(torch.utils.data.DataLoader(subset, batch_size=3)) == expected(subset)
    dataset.samples[3] = (dataset.samples[3][0], 0)  # the folder under the Subset
    assert pairs(loader) == expected(subset) == [(50, 1), (40, 0), (30, 0), (20, 0)]


def test_persistent_workers_follow_the_samples(folder):
    # stoker's workers read the samples in C++ and hold no copy of the ImageFolder (torch's
    # persistent worker processes keep the one they started with).
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=4, transforms=CHAIN, num_workers=2, persistent_workers=True)
    pairs(loader)
    _relabel(dataset)
    assert pairs(loader) == expected(dataset)


def test_a_distributed_sampler_follows_relabels_and_refuses_another_size(folder):
    dataset = image_folder(folder)
    samplers = [torch.utils.data.DistributedSampler(dataset, num_replicas=2, rank=rank, shuffle=True, seed=5)
                for rank in (0, 1)]
    loaders = [stoker.DataLoader(dataset, batch_size=2, sampler=sampler, transforms=CHAIN, rank=rank, world_size=2)
               for rank, sampler in enumerate(samplers)]
    references = [torch.utils.data.DataLoader(dataset, batch_size=2, sampler=sampler) for sampler in samplers]
    assert [pairs(loader) for loader in loaders] == [pairs(reference) for reference in references]
    _relabel_all(dataset)
    assert [pairs(loader) for loader in loaders] == [pairs(reference) for reference in references]
    _relist(dataset)
    for loader in loaders:
        with pytest.raises(ValueError) as raised:
            iter(loader)
        message = str(raised.value)
        assert "\n" not in message
        assert message.startswith("sampler: the DistributedSampler counted 3 samples per rank when it was made, and "
                                  "its dataset has 4 now (2 per rank of 2)")


def _state_after_one_batch(folder):
    """(dataset, its whole first pass, that pass's first batch, the state taken after it)."""
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=2, shuffle=True, seed=1, transforms=CHAIN)
    whole = pairs(loader)
    loader.set_epoch(0)
    it = iter(loader)
    first = pairs([next(it)])
    return dataset, whole, first, loader.state_dict()


def test_a_state_taken_mid_pass_resumes_on_the_samples_its_pass_began_with(folder):
    dataset, whole, first, state = _state_after_one_batch(folder)
    assert state["next_batch"] == 1 and "samples_digest" in state
    samples = list(dataset.samples)
    for change, says in ((_relabel, "as many, relabelled or others, now"), (_relist, "4 now")):
        change(dataset)
        resumed = stoker.DataLoader(dataset, batch_size=2, shuffle=True, transforms=CHAIN)
        with pytest.raises(ValueError) as raised:
            resumed.load_state_dict(state)
        message = str(raised.value)
        assert "\n" not in message
        assert message.startswith("load_state_dict: the state was taken at batch 1 of epoch 0, in a pass over 6 "
                                  f"samples of ImageFolder, and the loader holds other samples ({says}): ")
        dataset.samples = list(samples)

    resumed = stoker.DataLoader(dataset, batch_size=2, shuffle=True, transforms=CHAIN)
    resumed.load_state_dict(state)
    _relabel_all(dataset)  # a change after the resume is the next pass's
    assert first + pairs(resumed) == whole
    assert sorted(pairs(resumed)) == sorted(expected(dataset))


def test_a_state_taken_at_an_epochs_end_resumes_on_any_samples(folder):
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=4, shuffle=True, seed=1, transforms=CHAIN)
    pairs(loader)
    state = loader.state_dict()
    assert state["next_batch"] == 0 and "samples_digest" not in state
    _grow(dataset)
    resumed = stoker.DataLoader(image_folder(folder), batch_size=4, shuffle=True, transforms=CHAIN)
    resumed.dataset.samples = list(dataset.samples)
    resumed.load_state_dict(state)
    assert len(resumed) == 2
    assert sorted(pairs(resumed)) == sorted(expected(dataset))


def test_samples_the_loader_cannot_serve_are_refused_in_one_line_and_the_old_ones_kept(folder, tmp_path_factory):
    from PIL import Image

    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=4, transforms=CHAIN)
    samples = list(dataset.samples)
    gif = tmp_path_factory.mktemp("other") / "x.gif"
    Image.fromarray(np.zeros((6, 6, 3), np.uint8)).save(gif)
    for change, says in ((lambda d: setattr(d, "samples", []), r"^ImageFolder\.samples: none at this pass's start "
                          r"\(6 samples then, 0 now\)"),
                         (lambda d: d.samples.append((str(gif), 0)), r"^ImageFolder\.samples changed to include "
                          r"'.*x\.gif', a file stoker's engine does not decode"),
                         (lambda d: d.samples.__setitem__(1, (d.samples[1][0], 7)), r"sample 1 \(.*1\.png\) has "
                          r"class id 7, and there are 2 classes")):
        change(dataset)
        with pytest.raises(ValueError, match=says) as raised:
            iter(loader)
        assert "\n" not in str(raised.value)
        dataset.samples = list(samples)
        assert pairs(loader) == expected(dataset)


def test_a_folder_of_files_the_workers_load_follows_its_samples(tmp_path):
    from PIL import Image

    for c, label in enumerate(("a", "b")):
        (tmp_path / label).mkdir()
        for i in range(2):
            Image.fromarray(np.full((6, 6, 3), 10 * (2 * c + i + 1), np.uint8)).save(tmp_path / label / f"{i}.gif")
    dataset = image_folder(tmp_path, extensions=(".gif",))
    loader = stoker.DataLoader(dataset, batch_size=3, transforms=CHAIN)
    assert pairs(loader) == expected(dataset)
    _relabel_all(dataset)
    dataset.samples.append(dataset.samples[0])
    assert pairs(loader) == pairs(torch.utils.data.DataLoader(dataset, batch_size=3)) == expected(dataset)


def made_loaders(loader):
    """A list that grows by one at each engine loader `loader` makes from now on."""
    made, make = [], loader._make_loader
    loader._make_loader = lambda seed: made.append(seed) or make(seed)
    return made


def test_a_chain_and_samples_changed_in_one_pass_make_one_loader(folder):
    T = torchvision.transforms
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=4)
    reference = torch.utils.data.DataLoader(dataset, batch_size=4)
    assert pairs(loader) == pairs(reference)
    made = made_loaders(loader)
    dataset.transform = T.Compose([T.Resize(5), T.CenterCrop(5), T.PILToTensor()])
    _relabel_all(dataset)
    assert [tuple(x.shape) for x, _ in loader] == [(4, 3, 5, 5), (2, 3, 5, 5)]
    assert len(made) == 1
    assert pairs(loader) == pairs(reference) == expected(dataset)
    assert len(made) == 1  # and none for passes over what they were


def test_samples_that_cannot_run_keep_the_chain_and_samples_of_the_pass_before(folder):
    T = torchvision.transforms
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=4)
    pairs(loader)
    chain, samples = loader.transforms, list(dataset.samples)
    dataset.transform = T.Compose([T.Resize(5), T.CenterCrop(5), T.PILToTensor()])
    dataset.samples[1] = (dataset.samples[1][0], 7)
    with pytest.raises(ValueError, match="has class id 7, and there are 2 classes"):
        iter(loader)
    assert loader.transforms == chain
    dataset.samples[:] = samples
    assert [tuple(x.shape) for x, _ in loader] == [(4, 3, 5, 5), (2, 3, 5, 5)]


def sha1_digest(samples):
    """samples_digest as stoker wrote it before its DIGEST_KIND: a SHA-1 of the paths joined by
    NULs, then of the class ids as int64."""
    import array
    import hashlib

    h = hashlib.sha1("\0".join(p for p, _ in samples).encode("utf-8", "surrogateescape"))
    h.update(array.array("q", [int(t) for _, t in samples]).tobytes())
    return h.hexdigest()


def test_a_state_holds_a_digest_of_its_passs_samples(folder):
    dataset = image_folder(folder)
    states = []
    for samples in (list(dataset.samples), [(p, 1 - t) for p, t in dataset.samples], dataset.samples[::-1]):
        dataset.samples = samples
        loader = stoker.DataLoader(dataset, batch_size=2, transforms=CHAIN)
        it = iter(loader)
        next(it)
        states.append(loader.state_dict()["samples_digest"])
    assert all(len(d) == len("murmur3_128:") + 32 and d.startswith("murmur3_128:") for d in states)
    assert len(set(states)) == 3


def test_a_state_an_earlier_stoker_wrote_resumes_on_the_same_samples_alone(folder):
    dataset, whole, first, state = _state_after_one_batch(folder)
    state = dict(state, samples_digest=sha1_digest(dataset.samples))
    samples = list(dataset.samples)
    _relabel(dataset)
    with pytest.raises(ValueError, match=r"^load_state_dict: the state was taken at batch 1 of epoch 0, in a pass "
                       r"over 6 samples of ImageFolder, and the loader holds other samples \(as many, relabelled or "
                       r"others, now\)"):
        stoker.DataLoader(dataset, batch_size=2, shuffle=True, transforms=CHAIN).load_state_dict(state)
    dataset.samples = samples
    resumed = stoker.DataLoader(dataset, batch_size=2, shuffle=True, transforms=CHAIN)
    resumed.load_state_dict(state)
    assert first + pairs(resumed) == whole


@pytest.mark.parametrize("digest", ["abc", "murmur3_128:xyz", "0" * 39, 7])
def test_a_samples_digest_of_no_kind_stoker_writes_is_refused_in_one_line(folder, digest):
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=2, transforms=CHAIN)
    it = iter(loader)
    next(it)
    state = dict(loader.state_dict(), samples_digest=digest)
    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(dataset, batch_size=2, transforms=CHAIN).load_state_dict(state)
    assert str(raised.value).startswith(f"load_state_dict: samples_digest={digest!r}; expected ")
    assert "\n" not in str(raised.value)


def test_an_earlier_stokers_digest_checked_for_seconds_says_how_far_on_stderr(folder, monkeypatch, capsys):
    import types

    from stoker import _datasets, _state

    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=2, transforms=CHAIN)
    it = iter(loader)
    next(it)
    state = dict(loader.state_dict(), samples_digest=sha1_digest(dataset.samples))
    resumed = stoker.DataLoader(dataset, batch_size=2, transforms=CHAIN)
    capsys.readouterr()
    monkeypatch.setattr(_datasets, "_SHA1_PIECE", 1)
    clock = iter(range(100))  # a second per piece
    monkeypatch.setattr(_state, "time", types.SimpleNamespace(monotonic=lambda: next(clock)))
    resumed.load_state_dict(state)
    assert capsys.readouterr().err.splitlines() == [
        "stoker: load_state_dict: checking the state's samples_digest (a SHA-1, as stoker wrote it before "
        f"'murmur3_128') against ImageFolder's samples: {done} of 6" for done in (1, 3, 5)]
