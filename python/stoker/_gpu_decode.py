"""GPU JPEG decoding for the device feed (decode='gpu' or 'auto' with device='cuda').

The loader's workers read every file, draw its random parameters and plan its decode as usual;
the JPEGs nvJPEG takes they leave in the batch (``batch.gpu``) instead of decoding them. For
each batch, on the feed's side stream, GpuDecodeStage:

1. allocates each such sample's window (uint8, HWC) on the device and has nvJPEG decode into
   it (``stoker._stoker.GpuDecoder``: the hardware engine with region and DCT scale, or nvJPEG's
   CUDA path). nvJPEG's hardware batched path was reported (2026, on H100) to write into memory
   a stream still used, so the side stream is synchronised before the decode (nothing still
   reads memory the windows may reuse) and after it (nothing reads a window early);
2. makes on the CPU, into the host batch, every file nvJPEG refused or failed on
   (``Loader.redo_on_cpu``: a damaged file is reported and substituted as on the CPU);
3. after the host batch is copied to the device (the feed's copy), resamples the windows into
   their slots with the filter tables the workers built (``_gpu_resample.resample_with_taps``:
   the CPU path's crop, antialiased resize and flips, to the bit), so the batch is the CPU
   path's but for the decoders' own rounding;
4. checks the first GPU batch of every epoch: one of its samples is also made on the CPU, and
   a mean difference over ``TOLERANCE`` (uint8 levels) raises RuntimeError in one line rather
   than train on wrong pixels (the engine was also reported to return success for images it
   skipped).

Not thread-safe: one stage per feed, used from the consumer's thread.
"""
import torch

from . import _stoker
from ._gpu_resample import resample_with_taps

# Mean absolute difference, in uint8 levels, allowed between a sample decoded by nvJPEG and the
# same sample decoded by libjpeg-turbo (their inverse DCTs and upsampling round differently);
# a window written wrongly or not at all differs by tens.
TOLERANCE = 3.0


class GpuDecodeError(RuntimeError):
    pass


class GpuDecodeStage:
    """`loader`: the feed's stoker._stoker.Loader (made with a gpu_handoff); `decoder`: a
    stoker._stoker.GpuDecoder made on `device`."""

    def __init__(self, loader, decoder, device):
        self.loader = loader
        self.decoder = decoder
        self.device = device
        self.fallbacks = 0         # samples nvJPEG refused or failed on, made on the CPU
        self.decoded = 0           # samples decoded on the GPU
        self._checked_epoch = None

    def decode(self, batch, stream):
        """Step 1 and 2 for `batch` on `stream` (current): the windows of the samples left on
        the GPU, as (slots, windows, filter tables, the slot checked or None) for finish(); None
        when none are."""
        items = batch.gpu
        if not items:
            return None
        channels = 3
        windows = [torch.empty((h, w, channels), dtype=torch.uint8, device=self.device) for _, w, h in items]
        slots = [item[0] for item in items]
        stream.synchronize()
        results = self.decoder.decode(batch, slots, [t.data_ptr() for t in windows],
                                      [t.stride(0) for t in windows], stream.cuda_stream)
        stream.synchronize()
        kept = []
        for item, window, (on_gpu, _reason) in zip(items, windows, results):
            if on_gpu:
                kept.append((item, window))
            else:
                self.loader.redo_on_cpu(batch, item[0])
                self.fallbacks += 1
        self.decoded += len(kept)
        if not kept:
            return None
        slots = [item[0] for item, _ in kept]
        # The workers' filter tables for them (the CPU resampler's), taken before a redo drops one.
        taps = [torch.from_numpy(a) for a in _stoker.gpu_taps(batch, slots)]  # the resample moves them
        check = None
        if self._checked_epoch != batch.epoch:  # made on the CPU too, before the host batch is copied
            self._checked_epoch = batch.epoch
            check = slots[0]
            self.loader.redo_on_cpu(batch, check)
        return slots, [window for _, window in kept], taps, check

    def finish(self, decoded, inputs, batch):
        """Step 3 and 4, on the stream decode() ran on, after the host batch was copied into
        `inputs` (uint8, (N, C, H, W) in any layout): the windows resampled into their slots."""
        if decoded is None:
            return
        slots, windows, (column_index, column_weight, row_index, row_weight), check = decoded
        made = torch.empty((len(slots),) + tuple(inputs.shape[1:]), dtype=torch.uint8, device=self.device)
        resample_with_taps(windows, (column_index, column_weight), (row_index, row_weight), made,
                           bicubic=self.loader.resample == "bicubic")
        if check is not None:
            k = slots.index(check)
            difference = (made[k].int() - inputs[check].int()).abs().float().mean().item()
            if difference > TOLERANCE:
                raise GpuDecodeError(
                    f"decode='gpu': nvJPEG's pixels differ from the CPU decoder's by {difference:.1f} levels on "
                    f"average for sample {batch.indices[check]} (allowed {TOLERANCE}); this GPU's JPEG decoding "
                    f"cannot be trusted here ({self.decoder.description}): use decode='cpu'")
        inputs.index_copy_(0, torch.tensor(slots, dtype=torch.long, device=self.device), made)


# The window size nvJPEG's engine buffers are first made for: a crop's window is about twice the
# output's side at most (the DCT scale keeps it so), a whole image on the CUDA path larger (nvJPEG
# grows its buffers for those).
PREALLOCATE_SIDE = 1024


def make_decoder(device, nvjpeg_dirs):
    """A GpuDecoder on `device`; raises RuntimeError in one line when nvJPEG cannot decode there."""
    with torch.cuda.device(device):
        return _stoker.GpuDecoder(nvjpeg_dirs, preallocate_width=PREALLOCATE_SIDE,
                                  preallocate_height=PREALLOCATE_SIDE)
