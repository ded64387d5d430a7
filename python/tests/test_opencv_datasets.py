"""Datasets written with OpenCV, as head-pose and face-landmark code writes them (PFLD's,
6DRepNet's shape): cv2.imread, cvtColor, a crop around the landmarks, resize, a rotation by
warpAffine with the landmarks moved alike, a flip with the mirror pairs, NumPy's global generator
drawing the augmentation and PyTorch's seed_worker seeding it. stoker.DataLoader gives torch's
batches, says where a missing file failed, and says where its threads cannot repeat the draws."""
import inspect
import os
import random
import re
import warnings

import cv2
import numpy as np
import pytest
import torch

import stoker

cv2.setNumThreads(0)  # as these scripts do at import
SIZE = 48
FLIP = np.arange(8)[::-1].copy()  # the points' mirror pairs: i and 7 - i


def write_faces(root, count=24):
    """`count` JPEGs of 80x64 with 8 points on an ellipse each: (paths, points (N, 8, 2), poses (N, 3))."""
    rng = np.random.default_rng(0)
    root.mkdir(exist_ok=True)
    paths, points = [], []
    for i in range(count):
        image = cv2.GaussianBlur(rng.integers(0, 256, (64, 80, 3), np.uint8), (5, 5), 2)
        path = str(root / f"{i:03d}.jpg")
        cv2.imwrite(path, image)
        angle = np.linspace(0, 2 * np.pi, 8, endpoint=False)
        centre = rng.uniform(30, 45, 2)
        points.append(np.stack([centre[0] + 14 * np.cos(angle), centre[1] + 18 * np.sin(angle)], 1))
        paths.append(path)
    return paths, np.float32(points), rng.uniform(-60, 60, (count, 3)).astype(np.float32)


@pytest.fixture(scope="module")
def faces(tmp_path_factory):
    return write_faces(tmp_path_factory.mktemp("faces"))


def seed_worker(worker_id):
    """PyTorch's reproducibility recipe."""
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


class HeadPose(torch.utils.data.Dataset):
    """(image (3, SIZE, SIZE) float32, landmarks (8, 2) float32, pose (3,) float32), or a dict of them."""

    def __init__(self, paths, points, poses, train=True, as_dict=False):
        self.paths, self.points, self.poses, self.train, self.as_dict = paths, points, poses, train, as_dict

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        image = cv2.imread(self.paths[i])
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        points, pose = self.points[i].copy(), self.poses[i].copy()
        k = np.random.uniform(0.2, 0.4) if self.train else 0.3
        (x0, y0), (x1, y1) = points.min(0), points.max(0)
        w, h = x1 - x0, y1 - y0
        x0, x1, y0, y1 = int(x0 - 0.6 * k * w), int(x1 + 0.6 * k * w), int(y0 - 2 * k * h), int(y1 + 0.6 * k * h)
        pad = max(0, -x0, -y0, x1 - image.shape[1], y1 - image.shape[0])
        image = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
        image = cv2.resize(image[y0 + pad:y1 + pad, x0 + pad:x1 + pad], (SIZE, SIZE))
        points = (points - (x0, y0)) * (SIZE / (x1 - x0), SIZE / (y1 - y0))
        if self.train:
            matrix = cv2.getRotationMatrix2D((SIZE / 2, SIZE / 2), np.random.uniform(-15, 15), 1)
            image = cv2.warpAffine(image, matrix, (SIZE, SIZE))
            points = points @ matrix[:, :2].T + matrix[:, 2]
            if np.random.rand() < 0.5:
                image, points = cv2.flip(image, 1), points[FLIP]
                points[:, 0] = SIZE - points[:, 0]
                pose[0], pose[2] = -pose[0], -pose[2]
        image = (image.astype(np.float32) / 255 - 0.5) / 0.25
        image = torch.from_numpy(image.transpose(2, 0, 1))  # a view: not contiguous
        items = image, points.astype(np.float32), pose
        return dict(zip(("image", "landmarks", "pose"), items)) if self.as_dict else items


def _line_of(function, text):
    """The number of the line of `function`'s source that holds `text`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _tensors(batch):
    if isinstance(batch, dict):
        return [batch[k] for k in batch] + [list(batch)]
    return list(batch)


def _batches(loader, epochs=1):
    return [_tensors(batch) for _ in range(epochs) for batch in loader]


def _equal(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert [type(x) for x in a] == [type(x) for x in b]
        for x, y in zip(a, b):
            if isinstance(x, torch.Tensor):
                assert (x.dtype, x.shape) == (y.dtype, y.shape) and torch.equal(x, y)
            else:
                assert x == y


@pytest.mark.parametrize("as_dict", [False, True])
@pytest.mark.parametrize("processes", [0, 2])
def test_an_opencv_head_pose_dataset_gives_torchs_batches(faces, as_dict, processes):
    dataset = HeadPose(*faces, train=False, as_dict=as_dict)
    options = dict(batch_size=8, num_workers=2, pin_memory=True, persistent_workers=True)
    theirs = _batches(torch.utils.data.DataLoader(dataset, **options))
    ours = _batches(stoker.DataLoader(dataset, dataset_processes=processes, **options))
    _equal(ours, theirs)


def test_its_augmentations_repeat_under_a_seed_in_dataset_processes(faces):
    """torch's seeded worker processes repeat NumPy's draws; so do dataset_processes (the threads
    cannot: the next test)."""
    def run():
        torch.manual_seed(0)
        loader = stoker.DataLoader(HeadPose(*faces), batch_size=8, shuffle=True, num_workers=2, dataset_processes=2,
                                   worker_init_fn=seed_worker, persistent_workers=True)
        return _batches(loader, epochs=2)

    first, second = run(), run()
    _equal(first, second)
    assert not torch.equal(first[0][0], first[3][0])  # epochs differ


def _warnings_of(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    return [str(w.message) for w in caught if "global generator" in str(w.message)]


@pytest.mark.parametrize("seeded_alike", [False, True])
def test_seed_worker_on_threads_that_share_numpys_generator_is_one_line(faces, seeded_alike):
    """seed_worker seeds NumPy's one global generator on stoker's threads, and __getitem__'s draws
    interleave on them differently every run: said once, with the fix. `seeded_alike`: the script
    seeded NumPy as seed_worker does (torch.manual_seed(0), np.random.seed(0)), which leaves its
    state as it was."""
    if seeded_alike:
        torch.manual_seed(0)
        np.random.seed(0)
    lines = _warnings_of(lambda: stoker.DataLoader(HeadPose(*faces), batch_size=8, num_workers=2,
                                                   worker_init_fn=seed_worker))
    assert len(lines) == 1
    assert re.fullmatch(r"stoker.DataLoader: seed_worker seeds NumPy's global generator and HeadPose.__getitem__ "
                        r"draws from it, but stoker's 2 worker threads share it .*dataset_processes=2 runs "
                        r"__getitem__ in processes seeded as torch's workers, or draw from .*", lines[0])


@pytest.mark.parametrize("case", ["dataset_processes", "one thread", "no worker_init_fn", "no draws",
                                  "seeds what it does not draw from"])
def test_the_line_is_not_said_where_the_draws_repeat_or_none_are_seeded(faces, case):
    options = dict(batch_size=8, num_workers=2, worker_init_fn=seed_worker)
    train = True
    if case == "dataset_processes":
        options["dataset_processes"] = 2
    elif case == "one thread":
        options["num_workers"] = 1
    elif case == "no worker_init_fn":
        options["worker_init_fn"] = None
    elif case == "no draws":
        train = False
    else:
        options["worker_init_fn"] = lambda worker_id: random.seed(worker_id)
    assert _warnings_of(lambda: stoker.DataLoader(HeadPose(*faces, train=train), **options)) == []


@pytest.mark.parametrize("processes", [0, 2])
def test_a_missing_file_names_cv2s_error_its_cause_and_the_scripts_line(faces, processes):
    """cv2.imread returns None for a missing file and cvtColor fails on it: the bad sample's reason
    names cv2.error, what gives an empty image, and the line of __getitem__ it failed at, where
    torch's DataLoader shows the traceback."""
    paths, points, poses = faces
    dataset = HeadPose([*paths[:5], paths[5] + ".missing", *paths[6:]], points, poses, train=False)
    loader = stoker.DataLoader(dataset, batch_size=8, num_workers=2, dataset_processes=processes, max_bad=0.1)
    assert sum(len(batch[0]) for batch in loader) == len(paths)
    (bad,) = loader.stats()["bad_samples"]
    line = _line_of(HeadPose.__getitem__, "cv2.cvtColor")
    here = os.path.relpath(__file__)
    assert bad["index"] == 5
    assert re.fullmatch(r"raised cv2\.error: OpenCV\(.*\) .*!_src\.empty\(\) in function 'cvtColor' \(an empty "
                        r"image: cv2\.imread returns None for a file it cannot read, missing or not an image\) "
                        rf"\(at {re.escape(here)}:{line}, in __getitem__\)", bad["reason"])


class Raises(torch.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            json_like = {}
            return json_like["points"]
        return np.zeros((2, 2), np.uint8), i


@pytest.mark.parametrize("processes", [0, 2])
def test_any_bad_samples_reason_names_the_line_it_was_raised_at(processes):
    loader = stoker.DataLoader(Raises(), batch_size=2, num_workers=2, dataset_processes=processes, max_bad=0.5)
    list(loader)
    (bad,) = loader.stats()["bad_samples"]
    line = _line_of(Raises.__getitem__, 'json_like["points"]')
    assert bad["reason"] == f"raised KeyError: 'points' (at {os.path.relpath(__file__)}:{line}, in __getitem__)"
