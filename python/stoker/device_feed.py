"""Batches onto a CUDA device, the way stoker train's device feed does it, with the user's torch:

- the loader writes into pinned host buffers (torch's pinned memory, handed to the loader);
- batch k+1 is copied on a side stream while batch k computes;
- with Normalize in the chain the loader writes uint8 and the GPU normalises;
- a host buffer goes back to the loader only after an event recorded after its copy has
  completed. torch's caching host allocator does not track memory it did not allocate, so
  without the event a buffer could be refilled while its copy still reads it: the silent
  garbage that non_blocking copies from reused pinned buffers give;
- with GPU decoding (`gpu`, a _gpu_decode.GpuDecodeStage), the JPEGs the workers left in the
  batch are decoded by nvJPEG on the side stream before the copy, and resampled into their
  slots after it, before Normalize.
"""
import collections

import torch
import torch.utils.dlpack

from ._collate import tensors_in, to_device


class DeviceFeed:
    """`targets_of(batch)`: the batch's targets on the host (a tensor, or a Dataset's own,
    collated), copied to the device; `params_of(batch)`: what stays on the host (return_params'
    dict, or None); `timeout`: the loader's wait for a batch, 0 for no limit."""

    def __init__(self, loader, device, channels_last, targets_of, params_of, timeout=0, gpu=None):
        self.loader = loader
        self.gpu = gpu
        self.device = device
        self.channels_last = channels_last
        self.targets_of = targets_of
        self.params_of = params_of
        self.timeout = timeout
        self.stream = torch.cuda.Stream(device=device)
        self._ahead = None                       # (inputs, targets, params, ready event) copied ahead
        self._in_copy = collections.deque()      # (host tensors, event after their copy)
        normalize = loader.normalize if loader.dtype == "uint8" else None
        self._scale = None
        if normalize is not None:
            mean, std = normalize
            shape = (1, len(mean), 1, 1)
            self._shift = torch.tensor([255 * m for m in mean], device=device).view(shape)
            self._scale = torch.tensor([1 / (255 * s) for s in std], device=device).view(shape)

    def start(self):
        self._ahead = None
        self._copy_next()

    def _release_copied(self):
        """Drops the host tensors whose copies have completed: their buffers go back to the loader."""
        while self._in_copy and self._in_copy[0][1].query():
            self._in_copy.popleft()

    def _copy_next(self):
        self._release_copied()
        # At most one earlier copy still in flight: the loader's pool stays free for its workers.
        while len(self._in_copy) > 1:
            self._in_copy.popleft()[1].synchronize()
        batch = self.loader.next(self.timeout)
        if batch is None:
            self._ahead = None
            return
        host_inputs = torch.utils.dlpack.from_dlpack(batch.inputs)
        host_targets = self.targets_of(batch)
        with torch.cuda.stream(self.stream):
            decoded = self.gpu.decode(batch, self.stream) if self.gpu is not None else None
            inputs = host_inputs.to(self.device, non_blocking=True)
            if decoded is not None:
                self.gpu.finish(decoded, inputs, batch)
            targets = to_device(host_targets, self.device)
            if self._scale is not None:
                inputs = inputs.float().sub_(self._shift).mul_(self._scale)
            elif inputs.dtype == torch.uint8:
                inputs = inputs.float()
            if self.channels_last and inputs.dim() == 4:
                inputs = inputs.contiguous(memory_format=torch.channels_last)
            copied = torch.cuda.Event()
            copied.record(self.stream)
        self._in_copy.append(((host_inputs, host_targets), copied))
        self._ahead = (inputs, targets, self.params_of(batch), copied)

    def next(self):
        """(inputs, targets, params) of batch k, on the device (params on the host), ready for the
        current stream; batch k+1 starts copying."""
        if self._ahead is None:
            return None
        inputs, targets, params, copied = self._ahead
        current = torch.cuda.current_stream(self.device)
        current.wait_event(copied)
        # The tensors were made on the side stream; their memory must not be reused until the
        # current stream's work on them is done.
        inputs.record_stream(current)
        for tensor in tensors_in(targets):
            tensor.record_stream(current)
        self._copy_next()
        return inputs, targets, params
