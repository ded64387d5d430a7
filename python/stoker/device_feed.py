"""Batches onto a CUDA device, the way stoker train's device feed does it, with the user's torch:

- the loader writes into pinned host buffers (torch's pinned memory, handed to the loader);
- batch k+1 is copied on a side stream while batch k computes;
- with Normalize in the chain the loader writes uint8 and the GPU normalises;
- a host buffer goes back to the loader only after an event recorded after its copy has
  completed. torch's caching host allocator does not track memory it did not allocate, so
  without the event a buffer could be refilled while its copy still reads it: the silent
  garbage that non_blocking copies from reused pinned buffers give;
- with GPU decoding (`gpu`, a _gpu_decode.GpuDecodeStage), a batch with samples left to the GPU
  is made in two halves. When batch k is handed out, batch k+1 is taken from the loader, nvJPEG
  decodes its JPEGs on the side stream (the host does not wait), the files it refused are made
  on the CPU, and the host batch (uint8) is copied. When batch k+1 is handed out (after the
  training step of batch k was enqueued, so the JPEG engines and the step overlap), its windows
  are resampled into their slots on the side stream, then normalised; the current stream waits
  for that. A batch without such samples is copied and normalised ahead, as without GPU
  decoding. The host waits for nothing the GPU has queued in the steady state: only for events
  recorded a step earlier (_gpu_decode says which). Under decode='auto' each batch handed out
  tells the stage how long the feed waited for the loader and the batch's wall time, which tune
  the share of JPEGs left to the GPU (GpuDecodeStage.tune_share).

`cuda` (_cuda_calls) makes the streams and events; the tests run the feed in host memory.
"""
import collections
import time

import torch
import torch.utils.dlpack

from ._collate import tensors_in, to_device
from ._cuda_calls import TORCH_CUDA


class _Ahead:
    """Batch k+1 as next() hands it out: `ready` is the event the current stream waits for, None
    while `pending` (a _gpu_decode.PendingDecode) is still to be finished into `inputs`."""

    def __init__(self, inputs, targets, params, ready, pending, wait_s):
        self.inputs, self.targets, self.params, self.ready, self.pending = inputs, targets, params, ready, pending
        self.wait_s = wait_s  # the feed's wait for the loader's batch


class DeviceFeed:
    """`targets_of(batch)`: the batch's targets on the host (a tensor, or a Dataset's own,
    collated), copied to the device; `params_of(batch)`: what stays on the host (return_params'
    dict, or None); `timeout`: the loader's wait for a batch, 0 for no limit."""

    def __init__(self, loader, device, channels_last, targets_of, params_of, timeout=0, gpu=None, cuda=TORCH_CUDA):
        self.loader = loader
        self.gpu = gpu
        self.device = device
        self.channels_last = channels_last
        self.targets_of = targets_of
        self.params_of = params_of
        self.timeout = timeout
        self.cuda = cuda
        self.stream = cuda.stream(device)
        self._ahead = None                       # _Ahead: batch k+1, copied ahead
        self._in_copy = collections.deque()      # (host tensors, event after their copy)
        self._handed_out = None                  # when next() last handed a batch out in this pass
        self._normalize_as(loader)

    def _normalize_as(self, loader):
        """The chain's Normalize, which `loader` leaves to the GPU when it writes uint8."""
        normalize = loader.normalize if loader.dtype == "uint8" else None
        self._scale = None
        if normalize is not None:
            mean, std = normalize
            shape = (1, len(mean), 1, 1)
            self._shift = torch.tensor([255 * m for m in mean], device=self.device).view(shape)
            self._scale = torch.tensor([1 / (255 * s) for s in std], device=self.device).view(shape)

    def use(self, loader):
        """Takes `loader`'s batches from the next start() on (a loader made again between
        passes, its chain's Normalize with it); the batch copied ahead from the one before is dropped."""
        self._drop_ahead()
        self.loader = loader
        self._normalize_as(loader)

    def start(self):
        """Starts a pass: the batch copied ahead for the previous one, if any, is dropped (its arena freed)."""
        self._drop_ahead()
        self._handed_out = None  # the time until this pass's first batch is no batch's
        self._copy_next()

    def _drop_ahead(self):
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead.pending is not None:
            self.gpu.release(ahead.pending, self.stream)

    def _release_copied(self):
        """Drops the host tensors whose copies have completed: their buffers go back to the loader."""
        while self._in_copy and self._in_copy[0][1].query():
            self._in_copy.popleft()

    def _copy_next(self):
        self._drop_ahead()
        self._release_copied()
        # At most one earlier copy still in flight: the loader's pool stays free for its workers.
        while len(self._in_copy) > 1:
            self._in_copy.popleft()[1].synchronize()
        started = time.perf_counter()
        batch = self.loader.next(self.timeout)
        wait_s = time.perf_counter() - started
        if batch is None:
            return
        host_inputs = torch.utils.dlpack.from_dlpack(batch.inputs)
        host_targets = self.targets_of(batch)
        pending = None
        with self.cuda.use(self.stream):
            try:
                if self.gpu is not None:
                    pending = self.gpu.decode(batch, self.stream)  # the refused files made on the CPU
                inputs = torch.empty_like(host_inputs, device=self.device).copy_(host_inputs, non_blocking=True)
                targets = to_device(host_targets, self.device)
                ready = None
                if pending is None:
                    inputs = self._finish_inputs(inputs)
                copied = self.cuda.event()
                copied.record(self.stream)
                if pending is None:
                    ready = copied
                params = self.params_of(batch)
            except BaseException:
                if pending is not None:
                    self.gpu.release(pending, self.stream)
                raise
        self._in_copy.append(((host_inputs, host_targets), copied))
        self._ahead = _Ahead(inputs, targets, params, ready, pending, wait_s)

    def _finish_inputs(self, inputs):
        """Normalize, float and channels_last, on the current stream."""
        if self._scale is not None:
            inputs = inputs.float().sub_(self._shift).mul_(self._scale)
        elif inputs.dtype == torch.uint8:
            inputs = inputs.float()
        if self.channels_last and inputs.dim() == 4:
            inputs = inputs.contiguous(memory_format=torch.channels_last)
        return inputs

    def next(self):
        """(inputs, targets, params) of batch k, on the device (params on the host), ready for the
        current stream; batch k+1 starts copying."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        inputs, ready = ahead.inputs, ahead.ready
        if ahead.pending is not None:
            with self.cuda.use(self.stream):
                self.gpu.finish(ahead.pending, inputs, self.stream)  # frees its arena, also when it raises
                inputs = self._finish_inputs(inputs)
                ready = self.cuda.event()
                ready.record(self.stream)
        current = self.cuda.current_stream(self.device)
        current.wait_event(ready)
        # The tensors were made on the side stream; their memory must not be reused until the
        # current stream's work on them is done.
        self.cuda.record_stream(inputs, current)
        for tensor in tensors_in(ahead.targets):
            self.cuda.record_stream(tensor, current)
        self._copy_next()
        if self.gpu is not None:
            now = time.perf_counter()
            self.gpu.tune_share(ahead.wait_s, now - self._handed_out if self._handed_out is not None else 0.0)
            self._handed_out = now
        return inputs, ahead.targets, ahead.params
