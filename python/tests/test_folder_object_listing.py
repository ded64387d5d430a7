"""An ImageFolder object's samples, read in one pass in C++ when stoker.DataLoader is made (and
again at a pass's start where the script changed them): ImageNet's 1,281,167 take about a
second of CPU, longer on a loaded machine, so a pass that has run a second says how far it is on
stderr, by the rule opening a path keeps (test_open_progress.py). A slow pass is forced here by
targets whose int() sleeps, as the slow listing library forces a slow open."""
import pathlib
import re
import time

import numpy as np
import pytest
import torch

import stoker

torchvision = pytest.importorskip("torchvision")

CHAIN = "Resize(4), CenterCrop(4), ToUint8"


class SlowTarget:
    """A class id whose int() takes 5 ms: 300 samples of them take 1.5 s to read."""

    def __init__(self, label):
        self.label = label

    def __index__(self):
        time.sleep(0.005)
        return self.label

    def __eq__(self, other):
        return isinstance(other, SlowTarget) and other.label == self.label

    __hash__ = None


@pytest.fixture
def folder(tmp_path):
    """Classes a and b, 3 PNGs each, sample k (in the ImageFolder's order) all of value 10 * (k + 1)."""
    from PIL import Image

    for c, label in enumerate(("a", "b")):
        (tmp_path / label).mkdir()
        for i in range(3):
            Image.fromarray(np.full((6, 6, 3), 10 * (3 * c + i + 1), np.uint8)).save(tmp_path / label / f"{i}.png")
    return tmp_path


def image_folder(root):
    T = torchvision.transforms
    return torchvision.datasets.ImageFolder(str(root), transform=T.Compose([T.Resize(4), T.CenterCrop(4),
                                                                             T.PILToTensor()]))


def pairs(loader):
    """(pixel value, label) of each sample of one pass, in order."""
    return [(int(x[k].float().mean()), int(t[k])) for x, t in loader for k in range(len(t))]


def line_of(err, samples):
    """The one progress line `err` holds, of a pass over `samples`; fails unless it holds that alone."""
    lines = err.splitlines()
    assert len(lines) == 1, lines
    assert re.fullmatch(rf"reading ImageFolder object of \S+: 256 of {samples} samples, \d+ s; about \d+ s left",
                        lines[0]), lines[0]
    return lines[0]


def test_making_the_loader_of_many_samples_says_how_far_it_is(folder, capsys):
    dataset = image_folder(folder)
    stoker.DataLoader(dataset, batch_size=4, transforms=CHAIN)
    assert capsys.readouterr().err == ""  # a quick pass says nothing
    dataset.samples = [(path, SlowTarget(label)) for path, label in dataset.samples] * 50
    loader = stoker.DataLoader(dataset, batch_size=100, transforms=CHAIN)
    line_of(capsys.readouterr().err, 300)
    assert sorted(pairs(loader)) == sorted(pairs(torch.utils.data.DataLoader(
        torchvision.datasets.ImageFolder(str(folder), transform=dataset.transform), batch_size=100)) * 50)


def test_a_pass_over_many_changed_samples_says_how_far_it_is(folder, capsys):
    dataset = image_folder(folder)
    loader = stoker.DataLoader(dataset, batch_size=100, transforms=CHAIN)
    dataset.samples = [(path, SlowTarget(1 - label)) for path, label in dataset.samples[::-1]] * 50
    capsys.readouterr()
    assert pairs(loader) == [(10 * (6 - k % 6), int(k % 6 >= 3)) for k in range(300)]
    line_of(capsys.readouterr().err, 300)


def test_path_objects_as_samples_are_served_as_torchs_dataloader_serves_them(folder):
    dataset = image_folder(folder)
    dataset.samples = [(pathlib.Path(path), label) for path, label in dataset.samples]
    loader = stoker.DataLoader(dataset, batch_size=4, transforms=CHAIN)
    assert pairs(loader) == pairs(torch.utils.data.DataLoader(dataset, batch_size=4)) == \
        [(10, 0), (20, 0), (30, 0), (40, 1), (50, 1), (60, 1)]
    it = iter(loader)
    next(it)
    assert loader.state_dict()["samples_digest"] == stoker.DataLoader(
        image_folder(folder), batch_size=4, transforms=CHAIN)._data.samples_read.digest()
