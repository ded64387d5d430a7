"""return_params=True: each batch also says how each sample was made. Re-cropping the source
by the returned box, resizing and flipping as returned, gives the batch back."""
import numpy as np
import pytest
import torch
import torchvision.transforms.functional as F
from PIL import Image

import stoker


@pytest.mark.parametrize("chain", [
    "RandomResizedCrop(32), RandomHorizontalFlip(), RandomVerticalFlip()",
    "Resize(40), RandomCrop(32), RandomHorizontalFlip()",
    "Resize((30, 36)), RandomHorizontalFlip()",
])
def test_recropping_the_source_by_the_returned_box_gives_the_batch(png_folder, chain):
    loader = stoker.DataLoader(png_folder, batch_size=6, shuffle=True, seed=9, transforms=chain + ", ToUint8",
                               return_params=True)
    for x, y, params in loader:
        assert set(params) >= {"index", "path", "source_size", "box", "hflip", "vflip", "angle", "affine", "color"}
        for k in range(x.shape[0]):
            source = Image.open(params["path"][k]).convert("RGB")
            assert tuple(params["source_size"][k].tolist()) == source.size
            left, top, width, height = params["box"][k].tolist()
            out_h, out_w = x.shape[2:]
            box = (left, top, left + width, top + height)
            if chain.startswith("RandomResizedCrop"):  # torchvision crops the box, then resizes it
                made = source.crop(box).resize((out_w, out_h), Image.BILINEAR)
            else:  # a Resize first: the whole image resized, the window cut from it
                made = source.resize((out_w, out_h), Image.BILINEAR, box=box)
            if params["hflip"][k]:
                made = made.transpose(Image.FLIP_LEFT_RIGHT)
            if params["vflip"][k]:
                made = made.transpose(Image.FLIP_TOP_BOTTOM)
            expected = torch.from_numpy(np.array(made)).permute(2, 0, 1).int()
            # Pillow rounds to 8 bits between its two resampling passes, stoker does not.
            assert (x[k].int() - expected).abs().max() <= 2, (chain, k, params["box"][k])


def test_params_name_the_sample_and_the_substitute(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=24, transforms="Resize((8, 8)), ColorJitter(0.5, 0.5, 0.5)",
                               return_params=True)
    x, y, params = next(iter(loader))
    assert params["index"].tolist() == list(range(24))
    assert [p.rsplit("/", 2)[-2] for p in params["path"]] == [f"class_{i // 8}" for i in range(24)]
    color = params["color"]
    assert color.shape == (24, 4) and ((color[:, :3] >= 0.5) & (color[:, :3] <= 1.5)).all()
    assert (params["affine"] == torch.tensor([[1.0, 0, 0], [0, 1, 0]], dtype=torch.float64)).all()


def test_the_affine_matrix_moves_a_point_where_the_warp_moves_its_pixel(tmp_path):
    # One white pixel on black: after RandomAffine (translation only, so nearest sampling keeps
    # it whole), it lies where the returned matrix maps it.
    (tmp_path / "c").mkdir()
    pixels = np.zeros((32, 32, 3), np.uint8)
    pixels[10, 12] = 255
    Image.fromarray(pixels).save(tmp_path / "c" / "a.png")
    loader = stoker.DataLoader(tmp_path, batch_size=1, transforms="Resize((32, 32)), RandomAffine(0, translate=(0.2, 0.2)), ToUint8",
                               return_params=True, seed=3)
    for epoch in range(4):
        loader.set_epoch(epoch)
        x, y, params = next(iter(loader))
        m = params["affine"][0]
        cx, cy = (m @ torch.tensor([12.5, 10.5, 1.0], dtype=torch.float64)).tolist()
        row, col = divmod(int(x[0, 0].argmax()), 32)
        assert (col + 0.5, row + 0.5) == pytest.approx((cx, cy)), epoch


def test_without_return_params_a_batch_is_as_before(png_folder):
    assert len(next(iter(stoker.DataLoader(png_folder, batch_size=2, transforms="Resize((8, 8))")))) == 2


def test_the_color_factors_in_the_returned_order_redo_the_jitter(tmp_path):
    # ColorJitter applies brightness, contrast, saturation and hue in an order drawn per sample,
    # as torchvision's does: torchvision's functions in params["color_order"], with the factors
    # of params["color"], redo each sample from its source (within a grey level: stoker rounds
    # contrast's mean grey as PIL does, torch's tensors do not).
    (tmp_path / "c").mkdir()
    rng = np.random.default_rng(0)
    for i in range(16):
        Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)).save(tmp_path / "c" / f"{i}.png")
    loader = stoker.DataLoader(tmp_path, batch_size=16, transforms="Resize((16, 16)), ColorJitter(0.8, 0.8, 0.8, 0.3)",
                               return_params=True, seed=1)
    x, _, params = next(iter(loader))
    order, color = params["color_order"], params["color"]
    assert order.shape == (16, 4) and order.dtype == torch.int64
    assert (order.sort(dim=1).values == torch.arange(4)).all()
    functions = [F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue]
    in_a_fixed_order_differs = 0
    for k in range(16):
        source = F.to_tensor(Image.open(params["path"][k]).convert("RGB"))

        def redo(steps):
            image = source
            for i in steps:
                image = functions[i](image, color[k, i].item())
            return image

        assert (redo(order[k].tolist()) - x[k]).abs().max() * 255 < 1, (k, order[k])
        in_a_fixed_order_differs += (redo(range(4)) - x[k]).abs().max() * 255 > 5
    assert in_a_fixed_order_differs >= 8


def test_the_color_order_without_colorjitter_is_the_identity(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=4, return_params=True,
                               transforms="Resize((8, 8)), RandomApply([ColorJitter(0.5)], p=0)")
    _, _, params = next(iter(loader))
    assert params["color_order"].tolist() == [[0, 1, 2, 3]] * 4
    assert params["color"].tolist() == [[1.0, 1.0, 1.0, 0.0]] * 4
