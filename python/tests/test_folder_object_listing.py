"""An ImageFolder object's samples, read in one pass in C++ when stoker.DataLoader is made (and
again at a pass's start where the script changed them): ImageNet's 1,281,167 take about a
second of CPU, longer on a loaded machine, so a pass that has run a second says how far it is on
stderr, by the rule opening a path keeps (test_open_progress.py). A slow pass is forced here by
targets whose int() sleeps, as the slow listing library forces a slow open."""
import pathlib
import re
import time

import pytest
import torch

import stoker

torchvision = pytest.importorskip("torchvision")

from test_folder_samples import CHAIN, folder, image_folder, pairs  # noqa: E402,F401 (folder: a fixture)


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
