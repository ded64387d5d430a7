"""docs/guide/python.md's and README.md's Python examples run as written. Each is a fragment of a
script: the names it takes from the script around it (a loader, a model, `epochs`) are set up
here on small generated data, its `...` stands for the step, and what it leaves is checked. A
block that stops working, or a new block without a setup and a check here, fails."""
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch
from PIL import Image

import stoker
from guide_blocks import python_blocks

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"python.md": ROOT / "docs" / "guide" / "python.md", "README.md": ROOT / "README.md"}


def jpeg(path, rng, size=(48, 64)):
    Image.fromarray(rng.integers(0, 255, (*size, 3), np.uint8)).save(path)


def image_folder(root, rng, per_class=4):
    """train/ as an ImageFolder: two classes of `per_class` JPEGs."""
    for label in ("cat", "dog"):
        (root / "train" / label).mkdir(parents=True)
        for i in range(per_class):
            jpeg(root / "train" / label / f"{i}.jpg", rng)


def quick_start(root, rng):
    image_folder(root, rng)
    return {}


def packed_hdf5(root, rng):
    """packed.h5: encoded JPEGs as a vlen uint8 dataset, as the block's Dataset reads them."""
    with h5py.File(root / "packed.h5", "w") as f:
        jpegs = f.create_dataset("jpeg", (6,), dtype=h5py.vlen_dtype(np.uint8))
        for i in range(6):
            jpeg(root / "tmp.jpg", rng)
            jpegs[i] = np.frombuffer((root / "tmp.jpg").read_bytes(), np.uint8)
        f["labels"] = np.arange(6) % 3
    return {}


class Captions(torch.utils.data.Dataset):
    """A CLIP fine-tune's items: {"image": <PIL image>, "caption": str}."""

    def __init__(self, root, count):
        self.paths = sorted((root / "train").rglob("*.jpg"))[:count]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return {"image": Image.open(self.paths[i]), "caption": f"photo {i}"}


def captions(root, rng):
    image_folder(root, rng, per_class=32)
    return {"captions": Captions(root, 64)}


def seeding(root, rng):
    return {}


def resume(root, rng):
    """The script around the block: a loader part-way through epoch 0, a model, `path`, `epochs`."""
    image_folder(root, rng)
    loader = stoker.DataLoader("train/", batch_size=2, shuffle=True, transforms="Resize(32), CenterCrop(32)")
    next(iter(loader))
    return {"loader": loader, "model": torch.nn.Linear(4, 2), "path": "ckpt.pt", "epoch": 0, "epochs": 2}


def stopped(root, rng):
    """The script around the block: `resume`'s, resumed from a checkpoint of epoch 0; the job's
    SIGTERM comes as soon as the handler is set, and sys.exit records its status (the loop goes
    on: each step saves)."""
    import types
    exited = []
    namespace = resume(root, rng)
    namespace.update(ckpt={"epoch": 0}, exited=exited,
                     signal=types.SimpleNamespace(SIGTERM=15, signal=lambda number, handler: handler(number, None)),
                     sys=types.SimpleNamespace(exit=exited.append))
    return namespace


def left_at_the_signal(ns):
    saved = torch.load(ns["path"])
    return set(ns["exited"]) == {0} and saved["loader"] == ns["loader"].state_dict()


def progressive(root, rng):
    """The script around the block: the ImageFolder's root, its transform of each stage, `epochs`."""
    import torchvision
    import torchvision.transforms as T

    image_folder(root, rng)
    return {"torchvision": torchvision, "root": "train", "epochs": 31,
            "stage_transform": lambda size: T.Compose([T.RandomResizedCrop(size), T.ToTensor()])}


def monitor(root, rng):
    image_folder(root, rng)
    return {"loader": stoker.DataLoader("train/", batch_size=4, transforms="Resize(32), CenterCrop(32)"),
            "epochs": 2}


class Drawn(torch.utils.data.Dataset):
    """Items drawn from the worker's own generator, `local.rng`, set by the block's worker_init_fn."""

    def __init__(self, local):
        self.local = local

    def __len__(self):
        return 32

    def __getitem__(self, i):
        return np.full((8, 8, 3), i, np.uint8), float(self.local.rng.random())


def seeded_values(ns):
    loader = stoker.DataLoader(Drawn(ns["local"]), batch_size=4, num_workers=2, worker_init_fn=ns["worker_init_fn"],
                               transforms="Resize(8), CenterCrop(8)")
    return torch.cat([draws for _, draws in loader])


def packed_batches(ns):
    loader = stoker.DataLoader(ns["Packed"]("packed.h5"), batch_size=3, transforms="CenterCrop(32)")
    return [(images.shape, labels.tolist()) for images, labels in loader]


# By (page, heading, index under the heading): the setup giving the names the block takes from the
# script around it, and the check of what it leaves.
EXAMPLES = {
    ("python.md", "Quick start", 0): (quick_start, lambda ns: ns["images"].shape == (8, 3, 224, 224)
                                      and ns["images"].is_cuda),
    ("python.md", "Images: paths, bytes, arrays and PIL images", 0): (
        packed_hdf5, lambda ns: packed_batches(ns) == [((3, 3, 32, 32), [0, 1, 2])] * 2),
    ("python.md", "Dict and namedtuple items", 0): (
        captions, lambda ns: ns["batch"]["image"].shape == (64, 3, 224, 224)
        and ns["batch"]["caption"] == [f"photo {i}" for i in range(64)]),
    ("python.md", "get_worker_info and seeding", 0): (seeding, lambda ns: len(set(seeded_values(ns).tolist())) == 32),
    ("python.md", "Resume", 0): (resume, lambda ns: ns["epoch"] == 1 and ns["images"].shape[1:] == (3, 32, 32)),
    ("python.md", "Resume", 1): (stopped, left_at_the_signal),
    ("python.md", "A chain changed between passes", 0): (
        progressive, lambda ns: ns["images"].shape == (8, 3, 192, 192)),
    ("python.md", "stoker.watch and stoker.monitor", 0): (
        monitor, lambda ns: ns["images"].shape == (4, 3, 32, 32) and Path("run.csv").stat().st_size > 0),
    ("README.md", "Examples", 0): (
        quick_start, lambda ns: ns["images"].shape == (8, 3, 224, 224) and Path("run.csv").stat().st_size > 0),
}


def examples():
    for page, path in PAGES.items():
        for heading, index, code in python_blocks(path):
            yield page, heading, index, code


def test_every_example_has_a_setup_and_a_check():
    assert {(page, heading, index) for page, heading, index, _ in examples()} == set(EXAMPLES)


@pytest.mark.parametrize("page,heading,index,code",
                         [pytest.param(*example, id=f"{example[0]}: {example[1]} #{example[2]}")
                          for example in examples()])
def test_the_example_runs(tmp_path, monkeypatch, page, heading, index, code):
    if 'device="cuda"' in code and not torch.cuda.is_available():
        pytest.skip("the example feeds a GPU")
    setup, check = EXAMPLES[(page, heading, index)]
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "guide_example", "stoker": stoker, "torch": torch, "np": np, "h5py": h5py,
                 "threading": __import__("threading")}
    namespace.update(setup(tmp_path, np.random.default_rng(0)))
    exec(compile(code, f"{page}: {heading} #{index}", "exec"), namespace)
    assert check(namespace), f"{page}: {heading} #{index} left other values"
