"""stoker._gpu_resample (the resample of GPU-decoded windows, in torch) against the CPU path: the
loader's batches re-made from the returned boxes and flips, on full-resolution windows and on
DCT-scaled sub-windows as the decode plan cuts them; hand-made cases; bad arguments. Runs on the
CPU; the same code runs on CUDA (docs/TESTING.md lists that check)."""
import math

import numpy as np
import pytest
import torch
from PIL import Image

import stoker
from stoker import _stoker
from stoker._gpu_resample import resample_batch, resample_with_tables, resample_with_taps, upload_taps

from conftest import write_image_folder


def loader_batches(folder, chain, batches=2, batch_size=12):
    loader = stoker.DataLoader(folder, batch_size=batch_size, shuffle=True, seed=5, transforms=chain + ", ToUint8",
                               return_params=True)
    out = []
    for x, _, params in loader:
        out.append((x.clone(), params))
        if len(out) == batches:
            break
    return out


def assert_as_the_loader(out, x, chain):
    """Equal, but for the rounding of the returned boxes: params["box"] is float32 and the CPU path
    resamples the float64 box, so where the box is fractional (a Resize before the crop, a DCT
    scale) a tap's weight can move by a float32 step and a value cross a rounding edge."""
    diff = (out.int() - x.int()).abs()
    assert diff.max() <= 1 and (diff > 0).float().mean() < 1e-3, (chain, diff.max(), (diff > 0).sum(), diff.numel())


def filter_of(chain):
    return "bicubic" if "bicubic" in chain else "bilinear"


def flips_of(params):
    return torch.stack([params["hflip"], params["vflip"]], dim=1)


def rgb(path, scale_num=8):
    """The image as the CPU decoder decodes it, at DCT scale scale_num/8 (PIL's draft is libjpeg's
    scaled IDCT, the one the CPU decoder runs)."""
    image = Image.open(path)
    if scale_num != 8:
        width, height = image.size
        image.draft("RGB", (width * scale_num // 8, height * scale_num // 8))
        # libjpeg's scaled size, ceil(size * M / 8), which the decode plan expects.
        assert image.size == ((width * scale_num + 7) // 8, (height * scale_num + 7) // 8)
    return torch.from_numpy(np.array(image.convert("RGB")))


@pytest.mark.parametrize("chain", [
    "RandomResizedCrop(24), RandomHorizontalFlip(), RandomVerticalFlip()",
    "RandomResizedCrop((20, 28), interpolation=bicubic), RandomHorizontalFlip()",
    "Resize(36), CenterCrop(24)",
    "Resize(30, interpolation=bicubic), RandomCrop(24), RandomVerticalFlip()",
    "Resize((30, 36)), RandomHorizontalFlip()",
    "CenterCrop(28, resize=True)",  # stoker's: the shorter side resized to 28 first
    "CenterCrop(32), RandomHorizontalFlip()",  # a 1:1 crop: the resample is a copy
])
def test_full_resolution_windows_give_the_loaders_batch(png_folder, chain):
    # PNG: the CPU path decodes full resolution, so the window is the whole source image.
    for x, params in loader_batches(png_folder, chain):
        windows = [rgb(p) for p in params["path"]]
        out = torch.empty_like(x)
        resample_batch(windows, params["box"].double(), flips_of(params), out, filter=filter_of(chain),
                       clamp_to_box=chain.startswith("RandomResizedCrop"))
        if chain.startswith(("RandomResizedCrop", "CenterCrop(32)")):  # boxes of whole source pixels
            assert torch.equal(out, x), (chain, (out.int() - x.int()).abs().max())
        else:
            assert_as_the_loader(out, x, chain)


@pytest.mark.parametrize("filter", ["bilinear", "bicubic"])
def test_float64_boxes_give_the_loaders_batch_exactly(png_folder, filter):
    # Resize(36), CenterCrop(24): a box computed here in float64 as the CPU path does (the
    # Resize's size, torchvision's centre, back to source pixels), instead of the float32 params.
    chain = f"Resize(36, interpolation={filter}), CenterCrop(24)"
    for x, params in loader_batches(png_folder, chain):
        windows = [rgb(p) for p in params["path"]]
        boxes = []
        for window in windows:
            h, w = window.shape[:2]
            rw, rh = (36, int(36 * h / w)) if w <= h else (int(36 * w / h), 36)
            left, top = round((rw - 24) / 2), round((rh - 24) / 2)
            boxes.append([left * w / rw, top * h / rh, 24 * w / rw, 24 * h / rh])
        boxes = torch.tensor(boxes, dtype=torch.float64)
        assert (boxes - params["box"].double()).abs().max() < 1e-5
        out = torch.empty_like(x)
        resample_batch(windows, boxes, None, out, filter=filter)
        assert torch.equal(out, x), (out.int() - x.int()).abs().max()


@pytest.fixture(scope="module")
def large_jpegs(tmp_path_factory):
    # 150 to 260 pixels a side (4:2:0), large enough against a 24-pixel output for the CPU
    # decoder to decode at 1/2, 1/4 and 1/8 scale.
    return write_image_folder(tmp_path_factory.mktemp("large_jpegs"), classes=1, per_class=12, kind="jpg", seed=3,
                              sides=(150, 260), noise=20, quality=90)


def decode_window(path, box, out_w, out_h, support):
    """What the decode plan (plan_window in src/data/decode/crop_window.h) gives for a source box:
    the DCT scale M, the scaled window with the resampler's margin, and the box in its pixels."""
    x, y, w, h = box
    m = next((m for m in (1, 2, 4) if w * m / 8 >= out_w and h * m / 8 >= out_h), 8)
    full = rgb(path, m)
    scale = m / 8
    sx, sy, sw, sh = x * scale, y * scale, w * scale, h * scale

    def covering(lo, extent, target, size):
        margin = math.ceil(support * max(1.0, extent / target)) + 1
        begin = min(max(math.floor(lo) - margin, 0), size)
        return begin, min(max(math.ceil(lo + extent) + margin, begin), size)

    c0, c1 = covering(sx, sw, out_w, full.shape[1])
    r0, r1 = covering(sy, sh, out_h, full.shape[0])
    return m, full[r0:r1, c0:c1], (sx - c0, sy - r0, sw, sh)


@pytest.mark.parametrize("chain", [
    "RandomResizedCrop(24, scale=(0.2, 1)), RandomHorizontalFlip(), RandomVerticalFlip()",
    "RandomResizedCrop(24, scale=(0.2, 1), interpolation=bicubic), RandomHorizontalFlip()",
    "Resize(40), CenterCrop(24), RandomHorizontalFlip()",
    "Resize(48, interpolation=bicubic), CenterCrop(24)",
    "Resize(20), CenterCrop(16), RandomVerticalFlip()",  # down to 1/8
    "RandomResizedCrop(112), RandomHorizontalFlip()",  # full scale, a sub-window
])
def test_dct_scaled_sub_windows_give_the_loaders_batch(large_jpegs, chain):
    # JPEG: the CPU path decodes the crop's window at the smallest DCT scale that covers the
    # output, as the GPU decode plan does; the resample of that window must give its batch.
    filter = filter_of(chain)
    support = 2.0 if filter == "bicubic" else 1.0
    scales = set()
    for x, params in loader_batches(large_jpegs, chain, batches=1):
        out_h, out_w = x.shape[2:]
        windows, boxes = [], []
        for path, box in zip(params["path"], params["box"].double().tolist()):
            m, window, window_box = decode_window(path, box, out_w, out_h, support)
            scales.add(m)
            windows.append(window)
            boxes.append(window_box)
        out = torch.empty_like(x)
        resample_batch(windows, torch.tensor(boxes, dtype=torch.float64), flips_of(params), out, filter=filter,
                       clamp_to_box=chain.startswith("RandomResizedCrop"))
        if chain.startswith("RandomResizedCrop"):  # whole source pixels, scaled by a power of 2: exact
            assert torch.equal(out, x), (chain, (out.int() - x.int()).abs().max())
        else:
            assert_as_the_loader(out, x, chain)
    if "112" in chain:
        assert scales == {8}, scales
    else:
        assert scales & {1, 2, 4} and ("CenterCrop(16)" not in chain or 1 in scales), scales


def test_a_box_of_the_whole_window_at_its_size_is_the_window():
    window = torch.randint(0, 256, (7, 9, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    for filter in ("bilinear", "bicubic"):
        out = torch.empty(1, 3, 7, 9, dtype=torch.uint8)
        resample_batch([window], torch.tensor([[0.0, 0, 9, 7]], dtype=torch.float64), None, out, filter=filter)
        assert torch.equal(out[0], window.permute(2, 0, 1)), filter


def test_flips_mirror_the_output():
    window = torch.randint(0, 256, (6, 10, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(2))
    box = torch.tensor([[1.5, 0.25, 7.0, 5.5]] * 4, dtype=torch.float64)
    flips = torch.tensor([[False, False], [True, False], [False, True], [True, True]])
    out = torch.empty(4, 3, 4, 5, dtype=torch.uint8)
    resample_batch([window] * 4, box, flips, out)
    assert torch.equal(out[1], out[0].flip(2))
    assert torch.equal(out[2], out[0].flip(1))
    assert torch.equal(out[3], out[0].flip(1).flip(2))
    assert not torch.equal(out[1], out[0])


def test_a_2x_reduction_weighs_4_source_pixels_each_way_by_1_3_3_1():
    # Reducing by 2, the bilinear kernel (support 1, widened to 2) puts taps at distances 1.5,
    # 0.5, 0.5, 1.5 source pixels from an inner output's centre: weights 1/8, 3/8, 3/8, 1/8.
    window = torch.randint(0, 256, (8, 8, 1), dtype=torch.uint8, generator=torch.Generator().manual_seed(3))
    out = torch.empty(1, 1, 4, 4, dtype=torch.float32)
    resample_batch([window], torch.tensor([[0.0, 0, 8, 8]], dtype=torch.float64), None, out)
    w = torch.tensor([1, 3, 3, 1], dtype=torch.float64) / 8
    pixels = window[1:5, 1:5, 0].double()
    assert out[0, 0, 1, 1].item() == pytest.approx(float(w @ pixels @ w), abs=1e-4)
    # At the edge the taps past the image are dropped and the rest renormalised: 3/7, 3/7, 1/7.
    edge = torch.tensor([3, 3, 1], dtype=torch.float64) / 7
    assert out[0, 0, 0, 0].item() == pytest.approx(float(edge @ window[0:3, 0:3, 0].double() @ edge), abs=1e-4)


def test_uint8_output_is_the_float_output_rounded_half_up():
    windows = [torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(h))
               for h, w in ((20, 30), (17, 11), (40, 25))]
    boxes = torch.tensor([[2.5, 1.0, 20.0, 15.0], [0.0, 0.0, 11.0, 17.0], [3.25, 4.75, 19.5, 30.0]],
                         dtype=torch.float64)
    as_float = torch.empty(3, 3, 9, 7)
    as_uint8 = torch.empty(3, 3, 9, 7, dtype=torch.uint8)
    resample_batch(windows, boxes, None, as_float)
    resample_batch(windows, boxes, None, as_uint8)
    assert torch.equal(as_uint8, (as_float + 0.5).floor().clamp(0, 255).to(torch.uint8))


def test_windows_of_different_sizes_in_one_batch_give_each_ones_own_result():
    gen = torch.Generator().manual_seed(4)
    windows = [torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=gen) for h, w in ((50, 31), (12, 70))]
    boxes = torch.tensor([[1.0, 2.0, 28.0, 44.0], [5.5, 0.5, 60.0, 11.0]], dtype=torch.float64)
    flips = torch.tensor([[True, False], [False, True]])
    together = torch.empty(2, 3, 8, 10, dtype=torch.uint8)
    resample_batch(windows, boxes, flips, together, filter="bicubic", clamp_to_box=True)
    for i in range(2):
        alone = torch.empty(1, 3, 8, 10, dtype=torch.uint8)
        resample_batch(windows[i:i + 1], boxes[i:i + 1], flips[i:i + 1], alone, filter="bicubic", clamp_to_box=True)
        assert torch.equal(together[i], alone[0]), i


def test_clamp_to_box_keeps_the_taps_inside_the_box():
    # A box in the middle of a window whose outside is white: clamped, no white reaches the
    # output; not clamped, the widened kernel reads it at the edges.
    window = torch.full((12, 12, 1), 255, dtype=torch.uint8)
    window[4:8, 4:8] = 0
    box = torch.tensor([[4.0, 4.0, 4.0, 4.0]], dtype=torch.float64)
    out = torch.empty(1, 1, 2, 2, dtype=torch.uint8)
    resample_batch([window], box, None, out, clamp_to_box=True)
    assert out.max() == 0
    resample_batch([window], box, None, out, clamp_to_box=False)
    assert out.min() > 0


def test_a_grey_window_fills_each_channel_of_an_rgb_output():
    window = torch.randint(0, 256, (10, 10, 1), dtype=torch.uint8, generator=torch.Generator().manual_seed(5))
    box = torch.tensor([[0.5, 0.5, 9.0, 9.0]], dtype=torch.float64)
    grey = torch.empty(1, 1, 5, 5, dtype=torch.uint8)
    three = torch.empty(1, 3, 5, 5, dtype=torch.uint8)
    resample_batch([window], box, None, grey)
    resample_batch([window], box, None, three)
    assert torch.equal(three, grey.expand(1, 3, 5, 5))


def test_out_may_be_a_strided_slice_of_a_larger_batch():
    window = torch.randint(0, 256, (16, 16, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(6))
    box = torch.tensor([[0.0, 0.0, 16.0, 16.0]], dtype=torch.float64)
    batch = torch.zeros(3, 8, 8, 3, dtype=torch.uint8).permute(0, 3, 1, 2)  # channels_last memory
    resample_batch([window], box, None, batch[1:2])
    dense = torch.empty(1, 3, 8, 8, dtype=torch.uint8)
    resample_batch([window], box, None, dense)
    assert torch.equal(batch[1], dense[0]) and batch[0].max() == 0 and batch[2].max() == 0


def test_an_empty_batch_is_left_as_it_is():
    out = torch.empty(0, 3, 4, 4, dtype=torch.uint8)
    assert resample_batch([], torch.zeros(0, 4, dtype=torch.float64), None, out) is out


def test_tables_uploaded_first_resample_as_the_tables_given_at_once():
    gen = torch.Generator().manual_seed(7)
    windows = [torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=gen) for h, w in ((30, 41), (22, 19))]

    def axis(*samples):  # (index, weight) of each sample, padded with zero-weight taps to the most
        taps = [_stoker.filter_taps(size, 1.0, size - 2.0, out, True, mirror, "bilinear")
                for size, out, mirror in samples]
        most = max(index.shape[2] for index, _ in taps)
        return tuple(torch.from_numpy(np.concatenate([np.pad(t[i], ((0, 0), (0, 0), (0, most - t[i].shape[2])))
                                                      for t in taps])) for i in (0, 1))

    columns, rows = axis((41, 9, False), (19, 9, True)), axis((30, 7, False), (22, 7, False))
    at_once, in_halves = (torch.empty(2, 3, 7, 9, dtype=torch.uint8) for _ in range(2))
    resample_with_taps(windows, columns, rows, at_once)
    tables = upload_taps(windows, columns, rows)
    assert resample_with_tables(windows, tables, in_halves) is in_halves
    assert torch.equal(in_halves, at_once)
    with pytest.raises(ValueError) as error:
        resample_with_tables(windows, tables, torch.empty(2, 3, 7, 8, dtype=torch.uint8))
    assert str(error.value) == "the tables are for 2 samples of 7x9 and out has 2 of 7x8; give out the tables' size"


def good_arguments():
    return dict(windows=[torch.zeros(8, 8, 3, dtype=torch.uint8)], boxes=torch.tensor([[0.0, 0, 8, 8]]),
                flips=torch.tensor([[False, True]]), out=torch.empty(1, 3, 4, 4, dtype=torch.uint8))


@pytest.mark.parametrize("change, message", [
    (dict(windows=[torch.zeros(8, 8, 3)]),
     "window 0 is a (8, 8, 3) torch.float32 tensor; a window is a (h, w, C) uint8"),
    (dict(windows=[torch.zeros(8, 8, dtype=torch.uint8)]), "window 0 is a (8, 8) torch.uint8 tensor"),
    (dict(windows=[torch.zeros(8, 8, 4, dtype=torch.uint8)]), "window 0 has 4 channels; windows have 1 or 3"),
    (dict(windows=[]), "0 windows for an out of 1 samples"),
    (dict(windows="image.jpg"), "windows must be a list of (h, w, C) uint8 tensors"),
    (dict(out=torch.empty(3, 4, 4, dtype=torch.uint8)), "out must be a (N, C, H, W) tensor; got a (3, 4, 4)"),
    (dict(out=torch.empty(1, 3, 4, 4, dtype=torch.int32)), "out is torch.int32; the resample writes uint8, float32"),
    (dict(out=torch.empty(1, 1, 4, 4, dtype=torch.uint8)), "out has 1 channels and the windows 3; out needs 3"),
    (dict(boxes=torch.tensor([[0.0, 0, 9, 8]])), "box 0 (x=0, y=0, w=9, h=8) is not inside its 8x8 window"),
    (dict(boxes=torch.tensor([[0.0, 0, 0, 8]])), "box 0 (x=0, y=0, w=0, h=8) is not inside its 8x8 window"),
    (dict(boxes=torch.tensor([[0, 0, 8, 8]])),
     "boxes must be (1, 4) floats (x, y, width, height per sample); got (1, 4) torch.int64"),
    (dict(flips=torch.tensor([[0, 1]])), "flips must be (1, 2) bool (horizontal, vertical per sample) or None"),
    (dict(filter="nearest"), "filter='nearest' is not one the resample has; use 'bilinear' or 'bicubic'"),
    (dict(out=torch.empty(1, 3, 4, 4, dtype=torch.uint8, device="meta")),
     "window 0 is on cpu and out on meta; put them on one device"),
])
def test_bad_arguments_are_refused_in_one_line(change, message):
    arguments = {**good_arguments(), **change}
    with pytest.raises((ValueError, TypeError)) as error:
        resample_batch(**arguments)
    assert message in str(error.value) and "\n" not in str(error.value)
