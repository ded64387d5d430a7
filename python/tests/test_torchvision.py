"""stoker.DataLoader against torchvision's ImageFolder + DataLoader on the same files."""
import pytest
import torch
import torchvision
import torchvision.transforms as T

import stoker


def torchvision_batches(root, transform, batch_size):
    dataset = torchvision.datasets.ImageFolder(str(root), transform=transform)
    return dataset, list(torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=False))


@pytest.mark.parametrize("folder", ["png_folder", "jpeg_folder"])
def test_labels_and_class_to_idx_are_imagefolders(folder, request):
    root = request.getfixturevalue(folder)
    dataset, expected = torchvision_batches(root, T.Compose([T.Resize(32), T.CenterCrop(32), T.ToTensor()]), 5)
    loader = stoker.DataLoader(root, batch_size=5, transforms="Resize(32), CenterCrop(32)", num_workers=2)
    assert loader.class_to_idx == dataset.class_to_idx
    assert loader.class_names == dataset.classes
    got = [y.clone() for _, y in loader]
    assert len(got) == len(expected) == len(loader)
    for y, (_, y_tv) in zip(got, expected):
        assert torch.equal(y, y_tv)


def test_pixels_are_torchvisions_within_a_grey_level(png_folder):
    # PNGs decode exactly in both; the resampling agrees to a grey level (the C++ tests'
    # tolerance against torchvision's antialiased bilinear Resize).
    transform = T.Compose([T.Resize(48), T.CenterCrop(40), T.ToTensor(),
                           T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    _, expected = torchvision_batches(png_folder, transform, 4)
    loader = stoker.DataLoader(png_folder, batch_size=4, num_workers=2, transforms=transform)
    for (x, _), (x_tv, _) in zip(loader, expected):
        assert x.shape == x_tv.shape and x.dtype == torch.float32
        # one grey level, in Normalize's units (divided by the smallest std)
        assert (x - x_tv).abs().max().item() <= 1 / 255 / 0.224 + 1e-5


def test_a_compose_is_read_as_its_repr(png_folder):
    compose = T.Compose([T.RandomResizedCrop(24), T.RandomHorizontalFlip(), T.ToTensor()])
    loader = stoker.DataLoader(png_folder, batch_size=4, transforms=compose)
    assert loader.transforms.startswith("RandomResizedCrop(24")
    x, y = next(iter(loader))
    assert x.shape == (4, 3, 24, 24)


def test_a_folder_with_a_bmp_among_its_pngs_is_read_whole_as_imagefolder_reads_it(tmp_path, png_folder):
    # torchvision's ImageFolder reads .bmp and .webp with PIL: read without them, a script moved
    # from torch's DataLoader would silently train on fewer samples.
    import shutil

    from PIL import Image

    root = tmp_path / "train"
    shutil.copytree(png_folder, root)
    first_class = sorted(p for p in root.iterdir())[0]
    Image.open(next(first_class.glob("*.png"))).save(first_class / "extra.bmp")
    chain = "Resize(32), CenterCrop(32), ToUint8"
    folder = torchvision.datasets.ImageFolder(
        str(root), transform=T.Compose([T.Resize(32), T.CenterCrop(32), T.PILToTensor()]))
    assert len(folder) == sum(1 for _ in root.rglob("*.*"))
    for data in (str(root), folder):
        loader = stoker.DataLoader(data, batch_size=4, transforms=chain, shuffle=False)
        assert len(loader.dataset) == len(folder)
        x, y = (torch.cat(parts) for parts in zip(*((x.clone(), y.clone()) for x, y in loader)))
        assert torch.equal(y, torch.tensor(folder.targets))
        expected = torch.stack([folder[i][0] for i in range(len(folder))])
        assert (x.int() - expected.int()).abs().max() <= 1  # Resize: to a grey level of torchvision's


@pytest.mark.parametrize("size", [(30, 40), 20, (24, 48)])
def test_the_string_centercrop_is_torchvisions_centercrop(tmp_path, size):
    # torchvision's name means torchvision's pixels: a 1:1 centre crop, zeros where the image is
    # smaller, whether the chain is the T.CenterCrop object or the string of its name.
    from PIL import Image

    rng = torch.Generator().manual_seed(3)
    for k in range(4):
        (tmp_path / f"c{k % 2}").mkdir(exist_ok=True)
        w, h = (40, 30) if k % 2 == 0 else (30, 40)
        pixels = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=rng).numpy()
        Image.fromarray(pixels).save(tmp_path / f"c{k % 2}" / f"{k}.png")
    folder = torchvision.datasets.ImageFolder(str(tmp_path), transform=T.Compose([T.CenterCrop(size), T.PILToTensor()]))
    expected = torch.stack([folder[i][0] for i in range(len(folder))])
    loader = stoker.DataLoader(str(tmp_path), batch_size=len(folder), transforms=f"CenterCrop({size}), ToUint8")
    x, _ = next(iter(loader))
    assert torch.equal(x, expected)  # a copy of PNG pixels: every byte
