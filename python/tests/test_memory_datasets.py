"""torchvision's in-memory datasets (CIFAR10, MNIST and kin, SVHN ...) read natively: the same
batches as torch's DataLoader over the same object, with no Python call per sample."""
import gzip
import os
import shutil
import warnings

import numpy as np
import pytest
import torch
from conftest import smooth_frame

import stoker

torchvision = pytest.importorskip("torchvision")
T = torchvision.transforms

FASHION = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist
CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
# One grey level in Normalize's units (divided by the smallest std), as test_torchvision.py allows.
GREY_LEVEL = 1 / 255 / 0.2435 + 1e-5


def made(cls, data, targets, transform=None, target_transform=None, targets_name="targets"):
    """A torchvision dataset object as its constructor leaves it, without its files."""
    dataset = cls.__new__(cls)
    torchvision.datasets.VisionDataset.__init__(dataset, "unused", transform=transform,
                                                target_transform=target_transform)
    dataset.data = data
    setattr(dataset, targets_name, targets)
    return dataset


def cifar(n=40, transform=None, target_transform=None, cls=None, smooth=False):
    cls = cls or torchvision.datasets.CIFAR10
    rng = np.random.default_rng(n)
    data = np.stack([smooth_frame(32, 32, i) for i in range(n)]) if smooth else \
        rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
    dataset = made(cls, data, [int(t) for t in rng.integers(0, 10, n)], transform, target_transform)
    dataset.classes = [f"class {i}" for i in range(10)]
    return dataset


@pytest.fixture(scope="module")
def fashion_root(tmp_path_factory):
    """A root FashionMNIST reads Debian's dataset-fashion-mnist from (its raw files, unzipped), or None."""
    names = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
    if not all(os.path.exists(f"{FASHION}/{n}.gz") for n in names):
        return None
    root = tmp_path_factory.mktemp("fashion")
    raw = root / "FashionMNIST" / "raw"
    raw.mkdir(parents=True)
    for n in names:
        with gzip.open(f"{FASHION}/{n}.gz") as f, open(raw / n, "wb") as out:
            shutil.copyfileobj(f, out)
    return root


def mnist(root, transform=None):
    """Debian's FashionMNIST test split as torchvision reads it, else one made of random images."""
    if root is not None:
        return torchvision.datasets.FashionMNIST(str(root), train=False, transform=transform)
    rng = np.random.default_rng(1)
    return made(torchvision.datasets.FashionMNIST, torch.from_numpy(rng.integers(0, 256, (500, 28, 28), np.uint8)),
                torch.from_numpy(rng.integers(0, 10, 500)), transform)


def svhn(n=30, transform=None):
    rng = np.random.default_rng(2)
    return made(torchvision.datasets.SVHN, rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8),
                rng.integers(0, 10, n).astype(np.int64), transform, targets_name="labels")


def both(dataset, batch_size=16, limit=None, **kwargs):
    """The batches of one pass of stoker's DataLoader and of torch's over `dataset`."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # read natively: no line says it runs __getitem__ in Python
        loader = stoker.DataLoader(dataset, batch_size=batch_size, num_workers=2, **kwargs)
    got = [(x.clone(), y.clone()) for x, y in loader][:limit]
    expected = list(torch.utils.data.DataLoader(dataset, batch_size=batch_size, **kwargs))[:limit]
    return loader, got, expected


def assert_close_batches(got, expected, tolerance=GREY_LEVEL):
    assert len(got) == len(expected)
    for (x, y), (x_tv, y_tv) in zip(got, expected):
        assert x.shape == x_tv.shape and x.dtype == x_tv.dtype
        assert (x.float() - x_tv.float()).abs().max().item() <= tolerance
        assert y.dtype == y_tv.dtype and torch.equal(y, y_tv)


def test_cifar10s_tutorial_chain_without_its_augmentation_gives_torchs_batches():
    dataset = cifar(transform=T.Compose([T.ToTensor(), T.Normalize(CIFAR_MEAN, CIFAR_STD)]))
    loader, got, expected = both(dataset)
    assert_close_batches(got, expected)
    assert "read in place from the caller's array" in repr(loader)  # the array is kept, not copied
    assert loader.class_names == dataset.classes


@pytest.mark.parametrize("chain", [
    [T.Pad(4), T.ToTensor()],
    [T.Resize(40), T.CenterCrop(36), T.ToTensor(), T.Normalize(CIFAR_MEAN, CIFAR_STD)],
    [T.PILToTensor()],
])
def test_deterministic_chains_give_torchs_pixels(chain):
    resizes = any(isinstance(t, T.Resize) for t in chain)
    dataset = cifar(n=20, transform=T.Compose(chain), smooth=resizes)
    _, got, expected = both(dataset, batch_size=8)
    assert_close_batches(got, expected, GREY_LEVEL if resizes else 1e-6)


def test_the_tutorials_augmentation_runs_natively_with_torchs_shapes_and_targets():
    transform = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    dataset = cifar(n=64, transform=transform)
    loader, got, expected = both(dataset, batch_size=32)
    assert [x.shape for x, _ in got] == [x.shape for x, _ in expected] == [(32, 3, 32, 32)] * 2
    assert all(torch.equal(y, y_tv) for (_, y), (_, y_tv) in zip(got, expected))


def test_mnists_grey_images_are_one_channel_as_torchs(fashion_root):
    dataset = mnist(fashion_root, T.Compose([T.ToTensor(), T.Normalize((0.2860,), (0.3530,))]))
    _, got, expected = both(dataset, batch_size=100, limit=5)
    assert got[0][0].shape == (100, 1, 28, 28)
    assert_close_batches(got, expected, 1 / 255 / 0.3530 + 1e-5)
    dataset.transform = T.Compose([T.Grayscale(num_output_channels=3), T.ToTensor()])  # for an RGB model
    _, got, expected = both(dataset, batch_size=100, limit=2)
    assert got[0][0].shape == (100, 3, 28, 28)
    assert_close_batches(got, expected, 1e-6)


def test_svhns_channels_first_array_gives_torchs_batches():
    _, got, expected = both(svhn(transform=T.ToTensor()), batch_size=8)
    assert_close_batches(got, expected, 1e-6)


def test_a_subset_from_random_split_reads_its_rows():
    dataset = cifar(n=50, transform=T.ToTensor())
    part, _ = torch.utils.data.random_split(dataset, [30, 20], generator=torch.Generator().manual_seed(0))
    inner = torch.utils.data.Subset(part, [-1, 0, 5, 7])  # a Subset of one, a negative index as Python's
    for subset in (part, inner):
        loader, got, expected = both(subset, batch_size=4)
        assert_close_batches(got, expected, 1e-6)
        assert "object" in repr(loader)


def test_a_samplers_order_is_torchs():
    dataset = cifar(n=40, transform=T.ToTensor())
    order = torch.randperm(40, generator=torch.Generator().manual_seed(3)).tolist()
    _, got, expected = both(dataset, batch_size=8, sampler=order)
    assert_close_batches(got, expected, 1e-6)


def test_target_transform_runs_on_the_targets():
    dataset = cifar(n=20, transform=T.ToTensor(), target_transform=lambda t: t + 100)
    _, got, expected = both(dataset, batch_size=8)
    assert_close_batches(got, expected, 1e-6)


def test_transforms_given_replace_the_datasets_own():
    dataset = cifar(n=20, transform=T.Lambda(lambda image: image))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = stoker.DataLoader(dataset, batch_size=10, transforms=[T.ToTensor()])
    dataset.transform = T.ToTensor()
    assert_close_batches([(x.clone(), y.clone()) for x, y in loader],
                         list(torch.utils.data.DataLoader(dataset, batch_size=10)), 1e-6)


def test_a_transform_stoker_cannot_read_keeps_the_python_route_and_its_line():
    dataset = cifar(n=20, transform=T.Compose([T.ToTensor(), T.Lambda(lambda x: x * 2)]))
    with pytest.warns(UserWarning, match="CIFAR10's transform holds what stoker cannot read"):
        loader = stoker.DataLoader(dataset, batch_size=10)
    assert_close_batches([(x.clone(), y.clone()) for x, y in loader],
                         list(torch.utils.data.DataLoader(dataset, batch_size=10)), 1e-6)


def test_a_subclass_with_its_own_getitem_is_called_as_any_dataset():
    class Noisy(torchvision.datasets.CIFAR10):
        def __getitem__(self, i):
            image, target = super().__getitem__(i)
            return image + 1, target

    dataset = cifar(n=20, transform=T.ToTensor(), cls=Noisy)
    with pytest.warns(UserWarning, match="runs in Python, in its __getitem__"):
        loader = stoker.DataLoader(dataset, batch_size=10)
    assert_close_batches([(x.clone(), y.clone()) for x, y in loader],
                         list(torch.utils.data.DataLoader(dataset, batch_size=10)), 1e-6)


def first_pixels_and_targets(loader):
    return [(x.clone(), y.clone()) for x, y in loader]


def test_each_pass_serves_the_arrays_and_class_ids_as_they_are_at_its_start():
    dataset = cifar(n=20, transform=T.PILToTensor())
    loader = stoker.DataLoader(dataset, batch_size=10, num_workers=2)
    torch_loader = torch.utils.data.DataLoader(dataset, batch_size=10)
    assert_close_batches(first_pixels_and_targets(loader), list(torch_loader), 0)
    dataset.targets = [(t + 1) % 10 for t in dataset.targets]  # relabelled
    assert_close_batches(first_pixels_and_targets(loader), list(torch_loader), 0)
    dataset.data = dataset.data[:15][:, ::-1].copy()  # another array, of fewer images
    assert len(loader) == len(torch_loader) == 2
    dataset.targets = dataset.targets[:15]
    assert_close_batches(first_pixels_and_targets(loader), list(torch_loader), 0)


def test_a_state_taken_mid_pass_resumes_on_the_same_images_alone():
    dataset = cifar(n=40, transform=T.PILToTensor())
    loader = stoker.DataLoader(dataset, batch_size=8, shuffle=True, seed=5)
    passed = iter(loader)
    next(passed)
    state = loader.state_dict()
    rest = [y.clone() for _, y in passed]
    again = stoker.DataLoader(cifar(n=40, transform=T.PILToTensor()), batch_size=8, shuffle=True, seed=5)
    again.load_state_dict(state)
    assert all(torch.equal(a, b) for a, b in zip((y for _, y in again), rest))
    other = cifar(n=40, transform=T.PILToTensor())
    other.targets[0] = (other.targets[0] + 1) % 10
    with pytest.raises(ValueError, match="other samples"):
        stoker.DataLoader(other, batch_size=8, shuffle=True, seed=5).load_state_dict(state)


def test_stl10s_unlabelled_images_are_read_as_any_datasets_items():
    rng = np.random.default_rng(4)
    dataset = made(torchvision.datasets.STL10, rng.integers(0, 256, (6, 3, 96, 96), dtype=np.uint8),
                   np.full(6, -1, np.int64), T.ToTensor(), targets_name="labels")  # split="unlabeled"'s
    with pytest.warns(UserWarning, match="runs in Python, in its __getitem__"):
        loader = stoker.DataLoader(dataset, batch_size=3)
    assert_close_batches([(x.clone(), y.clone()) for x, y in loader],
                         list(torch.utils.data.DataLoader(dataset, batch_size=3)), 1e-6)


def each_class():
    """(name, a dataset object of that class as its constructor leaves it) for torchvision's
    in-memory classes besides CIFAR10, FashionMNIST and SVHN."""
    rng = np.random.default_rng(6)
    v = torchvision.datasets

    def grey(n, side, tensor):
        data = rng.integers(0, 256, (n, side, side), dtype=np.uint8)
        return torch.from_numpy(data) if tensor else data

    qmnist = made(v.QMNIST, grey(12, 28, True), torch.from_numpy(rng.integers(0, 10, (12, 8))))
    qmnist.compat = True
    stl10 = made(v.STL10, rng.integers(0, 256, (6, 3, 96, 96), dtype=np.uint8), rng.integers(0, 10, 6).astype(np.int64),
                 targets_name="labels")
    cifar100 = cifar(n=12, cls=v.CIFAR100)
    cifar100.targets = [int(t) for t in rng.integers(0, 100, 12)]
    cifar100.classes = [f"class {i}" for i in range(100)]
    return [("CIFAR100", cifar100),
            ("KMNIST", made(v.KMNIST, grey(12, 28, True), torch.from_numpy(rng.integers(0, 10, 12)))),
            ("EMNIST", made(v.EMNIST, grey(12, 28, True), torch.from_numpy(rng.integers(0, 47, 12)))),
            ("QMNIST", qmnist), ("STL10", stl10),
            ("USPS", made(v.USPS, grey(12, 16, False), [int(t) for t in rng.integers(0, 10, 12)])),
            ("SEMEION", made(v.SEMEION, grey(12, 16, False), rng.integers(0, 10, 12), targets_name="labels"))]


@pytest.mark.parametrize("name, dataset", each_class(), ids=[name for name, _ in each_class()])
def test_each_in_memory_class_gives_torchs_batches(name, dataset):
    dataset.transform = T.ToTensor()
    loader, got, expected = both(dataset, batch_size=4)
    assert_close_batches(got, expected, 1e-6)
    assert "read in place" in repr(loader) or name == "STL10"  # STL10's (N, C, H, W) is transposed once


def test_a_transform_changed_between_passes_runs_from_the_next():
    dataset = cifar(n=16, transform=T.ToTensor())
    loader = stoker.DataLoader(dataset, batch_size=8)
    first_pixels_and_targets(loader)
    dataset.transform = T.Compose([T.CenterCrop(24), T.PILToTensor()])
    dataset.target_transform = lambda t: -t
    assert_close_batches(first_pixels_and_targets(loader), list(torch.utils.data.DataLoader(dataset, batch_size=8)), 0)


def test_a_concat_of_natively_read_parts_gives_torchs_batches():
    transform = T.Compose([T.ToTensor(), T.Normalize(CIFAR_MEAN, CIFAR_STD)])
    train, test = cifar(n=40, transform=transform), cifar(n=24, transform=transform)
    concat = torch.utils.data.ConcatDataset([train, torch.utils.data.Subset(test, [3, 1, 4])])
    loader, got, expected = both(concat, batch_size=16)
    assert_close_batches(got, expected)
    assert "2 parts of ConcatDataset" in repr(loader)


def test_a_concat_of_imagefolders_gives_torchs_batches(png_folder):
    transform = T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor()])
    folder = torchvision.datasets.ImageFolder(str(png_folder), transform=transform)
    concat = torch.utils.data.ConcatDataset([folder, torch.utils.data.Subset(folder, [0, 5])])
    loader, got, expected = both(concat, batch_size=8)
    assert_close_batches(got, expected, 1 / 255 + 1e-6)
    assert "parts of ConcatDataset" in repr(loader)


def test_a_concat_of_parts_with_other_chains_calls_their_getitem():
    concat = torch.utils.data.ConcatDataset([cifar(n=8, transform=T.ToTensor()),
                                             cifar(n=8, transform=T.Compose([T.CenterCrop(32), T.ToTensor()]))])
    loader = stoker.DataLoader(concat, batch_size=4)
    assert "parts of" not in repr(loader)
    assert_close_batches([(x.clone(), y.clone()) for x, y in loader],
                         list(torch.utils.data.DataLoader(concat, batch_size=4)), 1e-6)


def test_a_concat_parts_changes_between_passes_are_followed_and_a_new_size_refused(png_folder):
    part = cifar(n=8, transform=T.PILToTensor())
    concat = torch.utils.data.ConcatDataset([part, cifar(n=8, transform=T.PILToTensor())])
    folder = torchvision.datasets.ImageFolder(str(png_folder), transform=T.Compose([T.Resize((32, 32)),
                                                                                      T.PILToTensor()]))
    folders = torch.utils.data.ConcatDataset([folder, torch.utils.data.Subset(folder, [1, 2])])
    for dataset in (concat, folders):
        loader = stoker.DataLoader(dataset, batch_size=8)
        assert "2 parts of ConcatDataset" in repr(loader)
        reference = torch.utils.data.DataLoader(dataset, batch_size=8)
        first_pixels_and_targets(loader)
        # relabelled: served from the next pass, as torch serves it
        part.targets[0] = (part.targets[0] + 1) % 10
        folder.samples = [(path, (label + 1) % len(folder.classes)) for path, label in folder.samples]
        assert_close_batches(first_pixels_and_targets(loader), list(reference), 1)
    part.data = part.data[::-1].copy()
    loader = stoker.DataLoader(concat, batch_size=8)
    assert_close_batches(first_pixels_and_targets(loader), list(torch.utils.data.DataLoader(concat, batch_size=8)), 0)
    part.data, part.targets = part.data[:6], part.targets[:6]
    with pytest.raises(ValueError, match=r"^ConcatDataset.datasets\[0\] holds 6 samples at this pass's start, 8 when "
                                         r"the loader was made; torch's ConcatDataset keeps the sizes"):
        first_pixels_and_targets(loader)


def test_a_concat_of_files_and_arrays_calls_their_getitem(png_folder):
    transform = T.Compose([T.Resize((32, 32)), T.PILToTensor()])
    folder = torchvision.datasets.ImageFolder(str(png_folder), transform=transform)
    part = cifar(n=8, transform=transform)
    part.classes, part.targets = folder.classes, [t % len(folder.classes) for t in part.targets]
    concat = torch.utils.data.ConcatDataset([part, folder])
    loader = stoker.DataLoader(concat, batch_size=8)
    assert "parts of" not in repr(loader)
    assert_close_batches(first_pixels_and_targets(loader), list(torch.utils.data.DataLoader(concat, batch_size=8)), 0)


@pytest.mark.parametrize("kind", ["tensor", "numpy"])
def test_class_ids_in_a_tensor_or_array_relabelled_in_place_are_followed(kind):
    rng = np.random.default_rng(7)
    data = torch.from_numpy(rng.integers(0, 256, (12, 28, 28), dtype=np.uint8))
    targets = rng.integers(0, 10, 12)
    dataset = made(torchvision.datasets.MNIST, data, torch.from_numpy(targets) if kind == "tensor" else targets,
                   T.PILToTensor())
    loader = stoker.DataLoader(dataset, batch_size=6)
    first_pixels_and_targets(loader)
    dataset.targets[0] = (int(dataset.targets[0]) + 1) % 10  # MNIST's targets tensor, changed in place
    assert_close_batches(first_pixels_and_targets(loader), list(torch.utils.data.DataLoader(dataset, batch_size=6)), 0)
