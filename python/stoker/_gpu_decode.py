"""GPU JPEG decoding for the device feed (decode='gpu' or 'auto' with device='cuda').

The loader's workers read every file, draw its random parameters and plan its decode as usual;
the JPEGs nvJPEG takes they leave in the batch (``batch.gpu``) instead of decoding them.
GpuDecodeStage runs in two halves on the feed's side stream, one batch apart (the feed decodes
batch k+1 when it hands out batch k, and finishes k+1 when it hands that out):

decode(batch, stream), before the host batch is copied:
  1. takes the next of ARENAS device arenas (uint8, grown when a batch needs more) and carves
     the batch's windows out of it (h, w, C, rows w*C apart, each start WINDOW_ALIGN-aligned).
     The arena goes to nvJPEG only after the host has seen complete the event recorded after
     its last reader (the resample of the batch three before, enqueued two hand-outs ago):
     nvJPEG's hardware batched path was reported (2026, on H100) to write when called,
     whatever the stream still has queued, so no queued work may touch the memory it writes,
     and no stream is drained for that. Fresh memory from torch's allocator may be a block queued work on
     the side stream still uses (the allocator orders reuse by stream; nvJPEG's engine does
     not), so a grown arena waits once for an event after that work;
  2. has nvJPEG decode into the windows, on the stream (``stoker._stoker.GpuDecoder``: the
     hardware engine with region and DCT scale, or nvJPEG's CUDA path), and records the
     batch's ``decoded`` event;
  3. makes on the CPU, into the host batch, every file nvJPEG refused or failed on
     (``Loader.redo_on_cpu``: a damaged file is reported and substituted as on the CPU), and
     the checked sample of an epoch's first GPU batch;
  4. uploads the windows' filter tables, which the workers built, from pinned memory.
finish(pending, inputs, stream), when the batch is handed out, after its host batch was copied:
  5. waits on the host for ``decoded`` (normally long done: whether the engine's completion is
     ordered on the stream is not known, so nothing reads a window before the host saw it);
  6. resamples the windows into their slots (``_gpu_resample.resample_with_tables``: the CPU
     path's crop, antialiased resize and flips, to the bit), so the batch is the CPU path's
     but for the decoders' own rounding;
  7. checks the first GPU batch of every epoch: its checked sample made on the CPU against
     nvJPEG's, and a mean difference over ``TOLERANCE`` (uint8 levels) raises GpuDecodeError
     in one line rather than train on wrong pixels (the engine was also reported to return
     success for images it skipped);
  8. records the arena's ``free`` event after the resample, its last reader.
release(pending, stream) frees the arena of a batch that is not finished (an epoch restarted).
No step drains a stream or copies to the device with the host waiting; the check (once an
epoch) reads its difference back.

decode='auto' (the loader's gpu_handoff 'hardware'): step 5's wait is timed, and after each batch
handed out the feed calls tune_share() with its wait for the loader and the batch's wall time;
_stoker.GpuShareTuner (stoker/data/gpu_share.h) turns them into the share of the engine's JPEGs
the workers leave for the GPU (Loader.gpu_share), so that neither the engines nor the workers
hold the step up.

Not thread-safe: one stage per feed, used from the consumer's thread.
"""
import time

import torch

from . import _stoker
from ._cuda_calls import TORCH_CUDA
from ._gpu_resample import resample_with_tables, upload, upload_taps

# Mean absolute difference, in uint8 levels, allowed between a sample decoded by nvJPEG and the
# same sample decoded by libjpeg-turbo (their inverse DCTs and upsampling round differently);
# a window written wrongly or not at all differs by tens.
TOLERANCE = 3.0

# Window arenas in the ring: batch k+1 is decoded right after batch k's windows are resampled, and
# batch k+3 reuses batch k's arena, whose resample was enqueued two hand-outs before.
ARENAS = 3
# Where each window starts in its arena, in bytes.
WINDOW_ALIGN = 256
# A grown arena holds this much more than the batch that grew it, so that batches of random crops
# seldom grow it again.
ARENA_HEADROOM = 1.25

CHANNELS = 3


class GpuDecodeError(RuntimeError):
    pass


class _Arena:
    """Device memory windows are carved from; `free`: the event after the last work that used
    it (None: nothing did since the host last saw such an event); `busy`: a batch decoded into
    it is not finished or released."""

    def __init__(self):
        self.memory = None
        self.free = None
        self.busy = False


class PendingDecode:
    """A batch decoded but not finished: what finish() needs, without the batch (whose host
    buffer goes back to the loader once copied)."""

    def __init__(self, arena, epoch, slots, windows, tables, slot_index, check, check_index, decoded):
        self.arena = arena
        self.epoch = epoch
        self.slots = slots              # the batch's slots nvJPEG decoded
        self.windows = windows          # their windows, views of the arena
        self.tables = tables            # their resample tables, on the device
        self.slot_index = slot_index    # `slots` on the device
        self.check = check              # the slot also made on the CPU, or None
        self.check_index = check_index  # its sample's index in the dataset
        self.decoded = decoded          # event after the decode


class GpuDecodeStage:
    """`loader`: the feed's stoker._stoker.Loader (made with a gpu_handoff); `decoder`: a
    stoker._stoker.GpuDecoder made on `device`; `cuda`: the stream and event calls
    (_cuda_calls); `max_items`: the most samples one decoder.decode() takes (the batch size it was
    made for; a batch sampler's larger batches are decoded in parts), None: any."""

    def __init__(self, loader, decoder, device, cuda=TORCH_CUDA, tune_share=False, max_items=None):
        self.loader = loader
        self.decoder = decoder
        self.max_items = max_items
        self.device = torch.device(device)
        self.cuda = cuda
        # decode='auto': the share of the engine's JPEGs left for the GPU follows the host's waits.
        self.share_tuner = _stoker.GpuShareTuner() if tune_share else None
        self.decode_wait_s = 0.0   # the host's wait for the decode in the last finish()
        self._decode_waited = False
        self.fallbacks = 0         # samples nvJPEG refused or failed on, made on the CPU
        self.decoded = 0           # samples decoded on the GPU
        self.arena_growths = 0     # arenas (re)allocated for a batch that needed more
        self.checks = 0            # batches whose checked sample passed
        self._checked_epoch = None  # the epoch whose check passed last
        self._arenas = [_Arena() for _ in range(ARENAS)]
        self._next_arena = 0

    def decode(self, batch, stream):
        """Steps 1 to 4 for `batch` on `stream` (current): a PendingDecode for finish(), or None
        when nvJPEG decoded none of the batch's samples (the batch is then whole on the host)."""
        items = batch.gpu
        if not items:
            return None
        offsets, end = [], 0
        for _, w, h in items:
            offsets.append(end)
            end += -(-h * w * CHANNELS // WINDOW_ALIGN) * WINDOW_ALIGN
        arena = self._take_arena(end, stream)
        windows = [arena.memory[o:o + h * w * CHANNELS].view(h, w, CHANNELS) for o, (_, w, h) in zip(offsets, items)]
        slots = [item[0] for item in items]
        try:
            step = self.max_items or len(slots)
            results = []
            for k in range(0, len(slots), step):
                part = windows[k:k + step]
                results += self.decoder.decode(batch, slots[k:k + step], [t.data_ptr() for t in part],
                                               [t.stride(0) for t in part], stream.cuda_stream)
            decoded = self._record(arena, stream)
            kept = []
            for item, window, (on_gpu, _reason) in zip(items, windows, results):
                if on_gpu:
                    kept.append((item[0], window))
                else:
                    self.loader.redo_on_cpu(batch, item[0])
                    self.fallbacks += 1
            self.decoded += len(kept)
            if not kept:
                arena.busy = False
                return None
            slots, windows = [slot for slot, _ in kept], [window for _, window in kept]
            # The workers' filter tables for them (the CPU resampler's), taken before a redo drops one.
            column_index, column_weight, row_index, row_weight = (torch.from_numpy(a)
                                                                  for a in _stoker.gpu_taps(batch, slots))
            tables = upload_taps(windows, (column_index, column_weight), (row_index, row_weight), self.device)
            check = None
            if self._checked_epoch != batch.epoch:  # made on the CPU too, before the host batch is copied
                check = slots[0]
                self.loader.redo_on_cpu(batch, check)
            return PendingDecode(arena, batch.epoch, slots, windows, tables, upload(torch.tensor(slots), self.device),
                                 check, batch.indices[check] if check is not None else None, decoded)
        except BaseException:
            self._record(arena, stream)  # after whatever nvJPEG had enqueued
            arena.busy = False
            raise

    def finish(self, pending, inputs, stream):
        """Steps 5 to 8 on `stream` (current), after the host batch was copied into `inputs`
        (uint8, (N, C, H, W) in any layout): the windows resampled into their slots. Raises
        GpuDecodeError when the checked sample differs; the arena is freed either way."""
        if pending is None:
            return
        try:
            started = time.perf_counter()
            pending.decoded.synchronize()
            self.decode_wait_s, self._decode_waited = time.perf_counter() - started, True
            made = torch.empty((len(pending.slots),) + tuple(inputs.shape[1:]), dtype=torch.uint8, device=self.device)
            resample_with_tables(pending.windows, pending.tables, made, bicubic=self.loader.resample == "bicubic")
            if pending.check is not None:
                k = pending.slots.index(pending.check)
                difference = (made[k].int() - inputs[pending.check].int()).abs().float().mean().item()
                if difference > TOLERANCE:
                    raise GpuDecodeError(
                        f"decode='gpu': nvJPEG's pixels differ from the CPU decoder's by {difference:.1f} levels on "
                        f"average for sample {pending.check_index} (allowed {TOLERANCE}); this GPU's JPEG decoding "
                        f"cannot be trusted here ({self.decoder.description}): use decode='cpu'")
                self._checked_epoch = pending.epoch  # a batch released or failed leaves the check to the next
                self.checks += 1
            inputs.index_copy_(0, pending.slot_index, made)
        finally:
            self.release(pending, stream)

    def tune_share(self, loader_wait_s, batch_s):
        """decode='auto', after each batch handed out: its wait for the loader, the last finish()'s
        wait for the decode (0 if none since the last call) and its wall seconds (0: not known, a
        pass's first batch, nothing fed) set the loader's gpu_share. Nothing without a tuner."""
        decode_wait_s = self.decode_wait_s if self._decode_waited else 0.0
        self._decode_waited = False
        if self.share_tuner is None or batch_s <= 0:
            return
        share = self.share_tuner.observe(loader_wait_s, decode_wait_s, batch_s)
        if share != self.loader.gpu_share:
            self.loader.gpu_share = share

    @property
    def gpu_share(self):
        """The share of the engine's JPEGs the workers leave for the GPU now (decode='auto'), else None."""
        return self.loader.gpu_share if self.share_tuner is not None else None

    def release(self, pending, stream):
        """Frees `pending`'s arena once the work enqueued on `stream` so far is done; for a batch
        that will not be finished (finish() releases its own). Idempotent."""
        if pending is not None and pending.arena.busy:
            self._record(pending.arena, stream)
            pending.arena.busy = False

    def arena_bytes(self):
        """Device memory the window arenas hold."""
        return sum(arena.memory.numel() for arena in self._arenas if arena.memory is not None)

    def arenas_in_use(self):
        """Arenas holding a batch not finished or released (0 between passes)."""
        return sum(arena.busy for arena in self._arenas)

    def _record(self, arena, stream):
        """An event recorded on `stream` now, which the arena waits for before nvJPEG writes it again."""
        event = self.cuda.event()
        event.record(stream)
        arena.free = event
        return event

    def _take_arena(self, size, stream):
        """The next arena of the ring, with `size` bytes, once nothing enqueued uses it."""
        arena = self._arenas[self._next_arena]
        if arena.busy:
            raise RuntimeError("GpuDecodeStage: the next window arena still holds a batch that was neither finished "
                               "nor released")
        self._next_arena = (self._next_arena + 1) % len(self._arenas)
        if arena.free is not None:
            arena.free.synchronize()  # normally done: its last reader was enqueued batches ago
            arena.free = None
        if arena.memory is None or arena.memory.numel() < size:
            arena.memory = None  # nothing enqueued uses it any more
            arena.memory = torch.empty(int(size * ARENA_HEADROOM) // WINDOW_ALIGN * WINDOW_ALIGN + WINDOW_ALIGN,
                                       dtype=torch.uint8, device=self.device)
            self.arena_growths += 1
            fresh = self.cuda.event()  # after what queued work the allocator's block may still have
            fresh.record(stream)
            fresh.synchronize()
        arena.busy = True
        return arena


def make_decoder(device, nvjpeg_dirs, transforms, batch_size):
    """A GpuDecoder on `device` for a loader running `transforms` in batches of `batch_size`;
    raises RuntimeError in one line when nvJPEG cannot decode there."""
    with torch.cuda.device(device):
        return _stoker.GpuDecoder(nvjpeg_dirs, transforms=transforms, batch_size=batch_size)
