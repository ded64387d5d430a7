"""The resample of GPU-decoded images: crop, antialiased resize and flips of decoded windows into
a batch, in torch, with the CPU path's arithmetic (src/data/transform/resample.cpp), so that it
runs on whichever device the windows are on and gives the CPU path's pixels.

``resample_batch(windows, boxes, flips, out, filter="bilinear", clamp_to_box=False)``;
``resample_with_taps(windows, columns, rows, out, bicubic=False)``, the same with the filter
tables given (the workers built them); and that in two halves, as the device feed runs it:
``tables = upload_taps(windows, columns, rows)`` when the windows are decoded (the tables go
to the windows' device from pinned memory, without the host waiting for the stream), then
``resample_with_tables(windows, tables, out, bicubic=False)`` when the batch is handed out (only
kernels: the host never waits).

- ``windows``: N uint8 tensors (h_i, w_i, C), C 1 or 3, HWC as a decoder writes them (a list or
  tuple; or one (N, h, w, C) tensor when all have one size), all on ``out``'s device. Each is the
  decoded window of a source image: all of it or a region, at full scale or at a JPEG DCT scale.
- ``boxes``: (N, 4) x, y, width, height of each sample's crop in its window's pixels, float64
  (the decode plan's ``crop``; float32 is accepted but shifts filter taps by its rounding), on
  any device. Width and height > 0; the box must lie inside its window (0.01 pixel of slack, clipped).
- ``flips``: (N, 2) bool, horizontal and vertical flip per sample, or None for none.
- ``out``: (N, C_out, H, W) tensor the batch is written into (a slice of a larger batch is fine,
  any strides), C_out == C, or 3 when C is 1 (the grey plane written to each channel, as the
  CPU path does). uint8 gets the CPU path's uint8 output exactly; float32, float16 and bfloat16
  get the values before rounding, on the 0..255 scale (the CPU path's float output is them times
  1/255, before Normalize).
- ``filter``: "bilinear" (Pillow's BILINEAR, support 1) or "bicubic" (Pillow's BICUBIC, Keys'
  cubic with a = -0.5, support 2, clamped to [0, 255] after each pass), both widened by the
  reduction factor: torchvision's interpolation on a PIL image.
- ``clamp_to_box``: True for RandomResizedCrop (taps only read pixels the box covers, as
  torchvision crops first and resizes the crop); False for Resize + CenterCrop or RandomCrop
  inside the image (taps read anywhere in the window: the crop is of an image resized as a
  whole, so the window must carry the decode plan's margin around the box).

Covers the geometries the CPU path resamples: RandomResizedCrop, Resize + CenterCrop, Resize +
RandomCrop and Resize alone (a box of the source resampled to the output), and a 1:1 crop inside
the image (a box of the output's size: the resample is then an exact copy). Not covered, and
left to the CPU path: padding (Pad, RandomCrop's padding, a crop larger than the image: a box
past its window is refused), the transforms after the geometry (rotation, colour, erasing, ...)
and RGB to grey.

Arithmetic, as the CPU path's: per axis the CPU resampler's own filter table (``filter_taps``
in stoker/data/transform.h, Pillow's precompute_coeffs), which the loader's workers build for
each GPU sample (``resample_with_taps``; ``resample_batch`` asks for them per box); then on the
device a horizontal pass over the rows the vertical pass reads and a vertical pass, each a
float32 sum of weight * pixel in tap order, one tap at a time (a multiply, then an add: no
fused multiply-add), so each output value is the CPU path's float to the bit; uint8 is
int(v + 0.5) clamped to [0, 255]. A flip is a table listing its outputs in reverse. Summing in
another order (a matmul, float64) is not equal: it moves values that sit at a rounding edge by 1.

Cost: per tap of each pass one gather of whole rows, one multiply and one add over the pass's
output (N * C * rows read * W, then N * C * H * W floats), about 7 taps a pass for 500x375 to
224x224 bilinear (2 * ceil(support * reduction) + 1), so memory-bound, not compute-bound.
Windows of different sizes are copied into one padded (N, h_max, w_max, C) tensor (one copy
per window). On a CPU the images go 4 at a time, so that each pass's arrays stay in cache (a
test and reference path: several ms per image); elsewhere the batch goes in one pass.

Errors: a bad argument raises ValueError (TypeError for a wrong type) in one line naming it,
the value, and what is allowed.
"""
import torch

from . import _stoker

_FILTERS = ("bilinear", "bicubic")
_IMAGES_PER_PASS_ON_CPU = 4
_SLACK = 0.01  # a box may poke out of its window by this much (float rounding, a float32 box), and is clipped


def resample_batch(windows, boxes, flips, out, filter="bilinear", clamp_to_box=False):
    """Crops ``boxes`` out of ``windows``, resizes them to ``out``'s H x W with the CPU path's
    antialiased filter, flips them and writes them into ``out`` (N, C, H, W). Returns ``out``.
    The module's docstring is the contract."""
    if filter not in _FILTERS:
        raise ValueError(f"filter={filter!r} is not one the resample has; use 'bilinear' or 'bicubic'")
    if not isinstance(out, torch.Tensor) or out.dim() != 4:
        raise ValueError(f"out must be a (N, C, H, W) tensor; got {_describe(out)}")
    if out.dtype not in (torch.uint8, torch.float32, torch.float16, torch.bfloat16):
        raise ValueError(f"out is {out.dtype}; the resample writes uint8, float32, float16 or bfloat16")
    n, out_c, out_h, out_w = out.shape
    windows, sizes = _check_windows(windows, n, out.device)
    channels = windows[0].shape[2] if windows else out_c
    if out_c != channels and not (channels == 1 and out_c == 3):
        raise ValueError(f"out has {out_c} channels and the windows {channels}; out needs {channels}"
                         + (" (or 3, to replicate the grey plane)" if channels == 1 else ""))
    boxes = _check_boxes(boxes, sizes, n)
    hflip, vflip = _check_flips(flips, n)
    if n == 0 or out_h == 0 or out_w == 0:
        return out

    columns = _taps_for_boxes(boxes[:, 0], boxes[:, 2], sizes[:, 1], out_w, clamp_to_box, hflip, filter)
    rows = _taps_for_boxes(boxes[:, 1], boxes[:, 3], sizes[:, 0], out_h, clamp_to_box, vflip, filter)
    return _resample(windows, sizes, columns, rows, filter == "bicubic", out)


def resample_with_taps(windows, columns, rows, out, bicubic=False):
    """resample_batch with the filter tables given: `columns` and `rows` are (index, weight) pairs
    of (N, W, T) and (N, H, T) tensors (any integer type and device; float32 weights), each
    output summing weight x pixel over its taps in order, as stoker._stoker.gpu_taps gives them
    for a batch's GPU samples (the CPU resampler's own tables, built by the loader's workers).
    `bicubic`: clamp each pass to [0, 255], as the bicubic filter does."""
    if not isinstance(out, torch.Tensor) or out.dim() != 4:
        raise ValueError(f"out must be a (N, C, H, W) tensor; got {_describe(out)}")
    n, _, out_h, out_w = out.shape
    for name, (index, weight), size in (("columns", columns, out_w), ("rows", rows, out_h)):
        if tuple(index.shape) != tuple(weight.shape) or index.dim() != 3 or index.shape[:2] != (n, size):
            raise ValueError(f"{name} must be (index, weight) of shape ({n}, {size}, taps); got "
                             f"{tuple(index.shape)} and {tuple(weight.shape)}")
    return resample_with_tables(windows, upload_taps(windows, columns, rows, out.device), out, bicubic)


def upload_taps(windows, columns, rows, device=None):
    """resample_with_taps' first half: the tables of `windows` (N (h, w, C) tensors, or one
    (N, h, w, C)) on `device` (the windows' by default), from pinned host memory so that the
    host does not wait (a blocking copy to a GPU waits for the whole stream)."""
    count = windows.shape[0] if isinstance(windows, torch.Tensor) else len(windows)
    device = torch.device(device if device is not None else windows[0].device if count else "cpu")
    if count and _same_device(windows[0].device, device):
        device = windows[0].device  # "cuda" as the windows' "cuda:0"
    windows, sizes = _check_windows(windows, count, device)
    for name, (index, weight) in (("columns", columns), ("rows", rows)):
        if tuple(index.shape) != tuple(weight.shape) or index.dim() != 3 or index.shape[0] != count:
            raise ValueError(f"{name} must be (index, weight) of shape ({count}, outputs, taps); got "
                             f"{tuple(index.shape)} and {tuple(weight.shape)}")
    return _tables(sizes, columns, rows, device)


def resample_with_tables(windows, tables, out, bicubic=False):
    """resample_with_taps' second half: `windows` (those upload_taps was given) resampled into
    `out` with their `tables`, on the current stream; the host does not wait."""
    if not isinstance(out, torch.Tensor) or out.dim() != 4:
        raise ValueError(f"out must be a (N, C, H, W) tensor; got {_describe(out)}")
    n, _, out_h, out_w = out.shape
    windows, sizes = _check_windows(windows, n, out.device)
    if (tables.count, tables.out_h, tables.out_w) != (n, out_h, out_w):
        raise ValueError(f"the tables are for {tables.count} samples of {tables.out_h}x{tables.out_w} and out has "
                         f"{n} of {out_h}x{out_w}; give out the tables' size")
    if not _same_device(tables.device, out.device):
        raise ValueError(f"the tables are on {tables.device} and out on {out.device}; upload them to out's device")
    if n == 0 or out_h == 0 or out_w == 0:
        return out
    for lo, hi, pass_tables in tables.passes:
        _resample_images(_stack(windows[lo:hi], sizes[lo:hi]), *pass_tables, bicubic, out[lo:hi])
    return out


class _Tables:
    """A batch's tables: per pass of up to _IMAGES_PER_PASS_ON_CPU images on a CPU (all of them
    elsewhere), (lo, hi, (rows the horizontal pass reads, column taps, column weights, row taps
    within those rows, row weights)), on `device`."""

    def __init__(self, count, out_h, out_w, device, passes):
        self.count, self.out_h, self.out_w, self.device, self.passes = count, out_h, out_w, device, passes


def _taps_for_boxes(start, length, sizes, out_size, clamp, mirror, filter):
    """The CPU resampler's taps (stoker._stoker.filter_taps) along one axis of each window, padded
    to the most: (index, weight) of shape (N, out_size, T)."""
    taps = [_stoker.filter_taps(int(size), float(a), float(b), out_size, clamp, bool(m), filter)
            for a, b, size, m in zip(start, length, sizes, mirror)]
    most = max(index.shape[2] for index, _ in taps)
    index = torch.zeros(len(taps), out_size, most, dtype=torch.int64)
    weight = torch.zeros(len(taps), out_size, most, dtype=torch.float32)
    for i, (ix, w) in enumerate(taps):
        index[i, :, :ix.shape[2]] = torch.from_numpy(ix[0])
        weight[i, :, :w.shape[2]] = torch.from_numpy(w[0])
    return index, weight


def _resample(windows, sizes, columns, rows, bicubic, out):
    """Both passes for every image, with its tables, into `out`."""
    return resample_with_tables(windows, _tables(sizes, columns, rows, out.device), out, bicubic)


def _tables(sizes, columns, rows, device):
    """The _Tables of windows of `sizes` ((N, 2) height, width), on `device`."""
    n = sizes.shape[0]
    cols, wx = columns[0].long().cpu(), columns[1].cpu()
    rows_index, wy = rows[0].long().cpu(), rows[1].cpu()
    out_w, out_h = cols.shape[1], rows_index.shape[1]
    passes = []
    if n > 0 and out_h > 0 and out_w > 0:
        # Only the rows the vertical pass reads go through the horizontal pass.
        rows_used = wy != 0
        row_begin = torch.where(rows_used, rows_index,
                                torch.full_like(rows_index, torch.iinfo(torch.int64).max)).amin(dim=(1, 2))
        row_end = torch.where(rows_used, rows_index + 1, torch.zeros_like(rows_index)).amax(dim=(1, 2))
        # On a CPU, a few images at a time keep each pass's arrays in cache (measured 3.6x faster).
        per_pass = _IMAGES_PER_PASS_ON_CPU if device.type == "cpu" else n
        for lo in range(0, n, per_pass):
            hi = min(lo + per_pass, n)
            begin = row_begin[lo:hi]
            span = int((row_end[lo:hi] - begin).max())
            pass_rows = (begin[:, None] + torch.arange(span)).minimum(sizes[lo:hi, :1] - 1)
            # Zero-weight taps may name rows outside the span: any row in it will do.
            in_span = (rows_index[lo:hi] - begin[:, None, None]).clamp(0, span - 1)
            passes.append((lo, hi, tuple(upload(t, device)
                                         for t in (pass_rows, cols[lo:hi], wx[lo:hi], in_span, wy[lo:hi]))))
    return _Tables(n, out_h, out_w, device, passes)


def upload(tensor, device):
    """`tensor` (on the host) on `device`; to a GPU from pinned memory, without waiting (torch's
    caching host allocator keeps the pinned copy until the copy has run)."""
    if device.type == "cpu":
        return tensor
    return tensor.pin_memory().to(device, non_blocking=True)


def _resample_images(padded, pass_rows, cols, wx, rows, wy, bicubic, out):
    """Both passes over (n, h_max, w_max, C) windows with their tables (on out's device), into `out`."""
    n, out_c, out_h, out_w = out.shape
    image = torch.arange(n, device=out.device)

    # Each tap of either pass gathers whole rows (contiguous blocks), which a GPU reads coalesced
    # and a CPU copies in runs: the horizontal pass works on the windows' rows transposed,
    # (n, w_max, C, span), the vertical one on its result transposed back, (n, span, C, W).
    columns = padded[image[:, None], pass_rows].permute(0, 2, 3, 1).contiguous()
    across = _tap_sum(lambda k: columns[image[:, None], cols[:, :, k]], lambda k: wx[:, :, k, None, None],
                      cols.shape[2])  # (n, W, C, span)
    if bicubic:
        across.clamp_(0, 255)
    across = across.permute(0, 3, 2, 1).contiguous()  # (n, span, C, W)
    result = _tap_sum(lambda k: across[image[:, None], rows[:, :, k]], lambda k: wy[:, :, k, None, None],
                      rows.shape[2])  # (n, H, C, W)
    if bicubic:
        result.clamp_(0, 255)

    planes = result.permute(0, 2, 1, 3)
    if out.dtype == torch.uint8:
        # The CPU path's round_half_up_u8: int(v + 0.5f), clamped.
        planes = planes.add_(0.5).trunc_().clamp_(0, 255)
    out.copy_(planes.expand(n, out_c, out_h, out_w) if planes.shape[1] != out_c else planes)


def _tap_sum(pixels, weight, taps):
    """sum over k < taps of weight(k) * pixels(k), in float32, one multiply and one add per tap
    in tap order: the CPU resampler's accumulation, so its rounding too."""
    acc = torch.mul(pixels(0), weight(0))
    product = torch.empty_like(acc)
    for k in range(1, taps):
        torch.mul(pixels(k), weight(k), out=product)
        acc.add_(product)
    return acc


def _check_windows(windows, n, device):
    """The windows as a list, and their (N, 2) sizes (height, width) as an int64 host tensor."""
    if isinstance(windows, torch.Tensor):
        if windows.dim() != 4 or windows.shape[0] != n:
            raise ValueError(f"windows as one tensor must be (N={n}, h, w, C); got {tuple(windows.shape)}")
        windows = list(windows.unbind(0))
    elif not isinstance(windows, (list, tuple)):
        raise TypeError(f"windows must be a list of (h, w, C) uint8 tensors or one (N, h, w, C) tensor; "
                        f"got {type(windows).__name__}")
    if len(windows) != n:
        raise ValueError(f"{len(windows)} windows for an out of {n} samples; give one window per sample")
    for i, w in enumerate(windows):
        if not isinstance(w, torch.Tensor) or w.dim() != 3 or w.dtype != torch.uint8:
            raise ValueError(f"window {i} is {_describe(w)}; a window is a (h, w, C) uint8 tensor")
        if w.shape[2] not in (1, 3) or w.shape[2] != windows[0].shape[2]:
            raise ValueError(f"window {i} has {w.shape[2]} channels; windows have 1 or 3, all the same")
        if w.shape[0] == 0 or w.shape[1] == 0:
            raise ValueError(f"window {i} is empty ({w.shape[0]}x{w.shape[1]}); a window has pixels")
        if w.device != device:
            raise ValueError(f"window {i} is on {w.device} and out on {device}; put them on one device")
    sizes = torch.tensor([[w.shape[0], w.shape[1]] for w in windows], dtype=torch.int64).reshape(-1, 2)
    return list(windows), sizes


def _stack(windows, sizes):
    """The windows as one (n, h_max, w_max, C) uint8 tensor; past each window's own size unset
    (the taps never read there)."""
    if bool((sizes == sizes[0]).all()):
        return torch.stack(windows)
    h_max, w_max = (int(s) for s in sizes.max(dim=0).values)
    padded = torch.empty(len(windows), h_max, w_max, windows[0].shape[2], dtype=torch.uint8, device=windows[0].device)
    for i, w in enumerate(windows):
        padded[i, :w.shape[0], :w.shape[1]].copy_(w)
    return padded


def _check_boxes(boxes, sizes, n):
    boxes = torch.as_tensor(boxes).detach().cpu()
    if boxes.shape != (n, 4) or not boxes.is_floating_point():
        raise ValueError(f"boxes must be ({n}, 4) floats (x, y, width, height per sample); "
                         f"got {tuple(boxes.shape)} {boxes.dtype}")
    boxes = boxes.to(torch.float64)
    x, y, w, h = boxes.unbind(1)
    height, width = sizes[:, 0], sizes[:, 1]
    bad = ~(torch.isfinite(boxes).all(dim=1) & (w > 0) & (h > 0) & (x >= -_SLACK) & (y >= -_SLACK)
            & (x + w <= width + _SLACK) & (y + h <= height + _SLACK))
    if bool(bad.any()):
        i = int(bad.nonzero()[0])
        raise ValueError(f"box {i} (x={x[i]:g}, y={y[i]:g}, w={w[i]:g}, h={h[i]:g}) is not inside its "
                         f"{int(width[i])}x{int(height[i])} window; boxes have a positive size inside their window "
                         f"(padding is left to the CPU path)")
    return boxes


def _check_flips(flips, n):
    if flips is None:
        none = torch.zeros(n, dtype=torch.bool)
        return none, none
    flips = torch.as_tensor(flips).detach().cpu()
    if flips.shape != (n, 2) or flips.dtype != torch.bool:
        raise ValueError(f"flips must be ({n}, 2) bool (horizontal, vertical per sample) or None; "
                         f"got {tuple(flips.shape)} {flips.dtype}")
    return flips[:, 0], flips[:, 1]


def _same_device(a, b):
    """True when `a` and `b` name one device ("cuda" is the current CUDA device, "cuda:0" one)."""
    return a.type == b.type and (a.index is None or b.index is None or a.index == b.index)


def _describe(x):
    if isinstance(x, torch.Tensor):
        return f"a {tuple(x.shape)} {x.dtype} tensor"
    return f"a {type(x).__name__}"
