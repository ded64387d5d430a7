"""stoker.DataLoader: stoker's C++ input pipeline in place of torch.utils.data.DataLoader.

Batches come as (inputs, targets) torch tensors that view the loader's buffers (no copy); a
buffer goes back to the pool when the last tensor viewing it is gone. Epoch e's batches are
the same for any num_workers, and state_dict() resumes exactly where it was taken.
"""
import os
import time
import warnings

import torch
import torch.utils.dlpack

from . import _arguments as arg
from . import _stoker
from ._session import current_monitor, register_diagnosis
from ._torchvision import chain_of

STATE_VERSION = 1


def _rank_and_world(rank, world_size):
    """Explicit values, else torch.distributed's when it is initialised, else RANK / WORLD_SIZE."""
    import torch.distributed as dist

    if world_size is None:
        if dist.is_available() and dist.is_initialized():
            world_size = dist.get_world_size()
        else:
            world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if rank is None:
        if dist.is_available() and dist.is_initialized():
            rank = dist.get_rank()
        else:
            rank = int(os.environ.get("RANK", "0"))
    arg.whole("world_size", world_size, 1, hint="the number of processes training together")
    arg.whole("rank", rank, 0, world_size - 1, hint=f"ranks of a world of {world_size} are 0 to {world_size - 1}")
    return rank, world_size


def cores():
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def _chain(transforms, source):
    """The chain in torchvision's notation: a string, a list of strings, or torchvision transform
    objects (read from their attributes by _torchvision.chain_of). None: what suits the data
    (stoker train's default)."""
    if transforms is None:
        return source.default_transforms
    if isinstance(transforms, str):
        return transforms
    if isinstance(transforms, (list, tuple)) and all(isinstance(t, str) for t in transforms):
        return ", ".join(transforms)
    return chain_of(transforms)


def _pinned_allocate(nbytes):
    block = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    return block.data_ptr(), block


class DataLoader:
    """Iterates (inputs, targets) batches of `data`; see docs/guide/python.md for every argument."""

    def __init__(self, data, batch_size=1, shuffle=False, *, drop_last=False, num_workers="auto",
                 prefetch_factor=2, pin_memory=False, seed=None, transforms=None, rank=None, world_size=None,
                 device="cpu", channels_last=False, on_error="substitute", max_bad=0.01, split="train",
                 cache_decoded_gb=0):
        self._pid = os.getpid()
        if not isinstance(data, (str, os.PathLike)):
            raise arg.bad("data", data, "a path: " + _stoker.data_formats_brief() + ", or a pattern of shards",
                          "pass the folder or file as a string")
        arg.whole("batch_size", batch_size, 1, 65536)
        arg.flag("shuffle", shuffle)
        arg.flag("drop_last", drop_last)
        arg.flag("pin_memory", pin_memory)
        arg.flag("channels_last", channels_last)
        arg.choice("on_error", on_error, ("substitute", "raise"))
        arg.fraction("max_bad", max_bad, "the share of an epoch's samples that may be bad before it stops")
        arg.whole("prefetch_factor", prefetch_factor, 1, 64, "batches in flight per worker")
        if isinstance(cache_decoded_gb, bool) or not isinstance(cache_decoded_gb, (int, float)) or cache_decoded_gb < 0:
            raise arg.bad("cache_decoded_gb", cache_decoded_gb, "a size in GB, 0 or more", "0 turns the cache off")
        self.auto_workers = num_workers == "auto"
        if self.auto_workers:
            workers = max(1, min(4, cores() // 2))  # where stoker train's --workers auto starts
        elif num_workers == 0:
            workers = 1  # no worker processes to spare: one thread, as light as torch's main-process loading
        else:
            workers = arg.whole("num_workers", num_workers, 0, 1024, "or 'auto' to tune it while training")
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little") >> 1
        arg.whole("seed", seed, 0, 2**63 - 1)
        try:
            self.device = torch.device(device)
        except (RuntimeError, TypeError):
            raise arg.bad("device", device, "'cpu' or 'cuda' (or 'cuda:N')") from None
        if self.device.type not in ("cpu", "cuda"):
            raise arg.bad("device", device, "'cpu' or 'cuda' (or 'cuda:N')")
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise arg.bad("device", device, "a CUDA device, and this torch sees none", "use device='cpu'")
        if pin_memory and not torch.cuda.is_available():
            warnings.warn("pin_memory=True and no CUDA device: the batches stay in ordinary memory", stacklevel=2)
            pin_memory = False
        self.rank, self.world_size = _rank_and_world(rank, world_size)
        self.dataset = os.fspath(data)
        self.source = _stoker.Source(self.dataset, split)
        chain = _chain(transforms, self.source)
        on_gpu = self.device.type == "cuda"
        self._loader_args = (self.source, batch_size, workers, workers * prefetch_factor, shuffle, drop_last)
        self._loader_options = (self.rank, self.world_size, chain, channels_last, on_gpu, on_error, max_bad,
                                cache_decoded_gb * 1e9, _pinned_allocate if (pin_memory or on_gpu) else None)
        self._loader = self._make_loader(seed)
        self.batch_size = batch_size
        self.prefetch_factor = prefetch_factor
        self.seed = seed
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.channels_last = channels_last
        self._feed = None
        if on_gpu:
            from .device_feed import DeviceFeed

            self._feed = DeviceFeed(self._loader, self.device, channels_last)
        self._epoch = 0
        self._resume_at = 0     # the batch the next iter() starts at (load_state_dict)
        self._position = None   # batches of the current epoch handed out; None when not iterating
        self._generation = 0
        self._diagnosis = _stoker.Diagnosis(self._loader, current_monitor(), cores(), -1, self.auto_workers,
                                            prefetch_factor, self.dataset)
        self._autotune = []
        register_diagnosis(self._diagnosis, self)

    # torch's DataLoader attributes that scripts read.
    @property
    def num_workers(self):
        return self._loader.workers

    @property
    def class_names(self):
        return list(self.source.class_names)

    @property
    def class_to_idx(self):
        return {name: i for i, name in enumerate(self.source.class_names)}

    @property
    def transforms(self):
        """The chain as the loader runs it, e.g. 'RandomResizedCrop(224) · ... → float32 NCHW'."""
        return self._loader.transforms

    def __len__(self):
        return len(self._loader)

    def set_epoch(self, epoch):
        """The epoch the next iter() yields (as DistributedSampler.set_epoch); without it each
        finished pass moves on to the next epoch by itself."""
        self._epoch = arg.whole("epoch", epoch, 0)
        self._resume_at = 0

    def _check_process(self):
        if os.getpid() != self._pid:
            raise RuntimeError("this stoker.DataLoader was made in another process (before a fork); its worker "
                               "threads did not come along: make the DataLoader in the process that iterates it")

    def __iter__(self):
        self._check_process()
        self._generation += 1
        first = self._resume_at
        self._resume_at = 0
        if first >= len(self):
            self._epoch, first = self._epoch + 1, 0
        self._loader.start_epoch(self._epoch, first)
        self._position = first
        self._diagnosis.start_epoch()
        if self._feed is not None:
            self._feed.start()
        return _Iterator(self, self._generation)

    def _next(self, generation):
        self._check_process()
        if generation != self._generation:
            raise RuntimeError("this iterator is stale: a later iter() of the same stoker.DataLoader replaced it "
                               "(one pass at a time per DataLoader)")
        if self._position is None:
            raise StopIteration
        started = time.perf_counter()
        if self._step_end is not None:
            self._step_lines(started)
        try:
            if self._feed is not None:
                item = self._feed.next()
            else:
                batch = self._loader.next()
                item = None if batch is None else (torch.utils.dlpack.from_dlpack(batch.inputs),
                                                   torch.utils.dlpack.from_dlpack(batch.targets))
        except ValueError as e:  # the C++ loader's words, in this class's argument names
            raise ValueError(str(e).replace("(prefetch)", "(prefetch_factor)")) from None
        now = time.perf_counter()
        if item is None:
            self._epoch += 1
            self._position = None
            self._step_end = None
            raise StopIteration
        self._position += 1
        self._step_wait, self._step_end, self._step_samples = now - started, now, item[0].shape[0]
        return item

    _step_end = None

    def _step_lines(self, next_called):
        """The diagnosis of the step that ended when next() was called again: its wait for this
        loader, and the rest of it (the model's work). Keeps what --workers auto changed."""
        for line in self._diagnosis.after_step(self._step_wait, 0.0, next_called - self._step_end,
                                               self._step_samples):
            if line.startswith("autotune:"):
                self._autotune.append(line)

    def stats(self):
        """The current epoch's bad samples (index, path, reason), the workers' time per stage,
        and what num_workers='auto' changed."""
        epoch = self._loader.epoch_stats()
        stages = self._loader.stage_times()
        busy = stages["read"] + stages["decode"] + stages["transform"]
        shares = {k: (stages[k] / busy if busy > 0 else 0.0) for k in ("read", "decode", "transform")}
        return {
            "epoch": epoch["epoch"],
            "samples": epoch["samples"],
            "bad": epoch["bad"],
            "bad_samples": [{"index": i, "path": name, "reason": why} for i, name, why in epoch["bad_samples"]],
            "stage_seconds": stages,
            "stage_shares": shares,
            "workers": self.num_workers,
            "autotune": list(self._autotune),
        }

    def state_dict(self):
        """Where the stream stands: the next batch a resumed loader yields. Taken after an
        epoch's last batch, it points at the next epoch's first."""
        position = self._position if self._position is not None else self._resume_at
        epoch = self._epoch
        if position >= len(self):
            epoch, position = epoch + 1, 0
        return {
            "stoker_data_loader": STATE_VERSION, "seed": self.seed, "epoch": epoch, "next_batch": position,
            "samples": len(self.source), "classes": list(self.source.class_names), "batch_size": self.batch_size,
            "world_size": self.world_size, "shuffle": self.shuffle, "drop_last": self.drop_last,
        }

    def load_state_dict(self, state):
        """Resumes at `state` from the next iter(). Refuses, in one line, a state taken on other
        data, with another batch size, world size, shuffle or drop_last."""
        if not isinstance(state, dict) or state.get("stoker_data_loader") != STATE_VERSION:
            raise ValueError("load_state_dict: not a stoker.DataLoader state_dict (take it with "
                             "loader.state_dict() of this version)")
        checks = [("samples", len(self.source), "data with another number of samples"),
                  ("classes", list(self.source.class_names), "data with other classes"),
                  ("batch_size", self.batch_size, "another batch_size"),
                  ("world_size", self.world_size, "another world_size"),
                  ("shuffle", self.shuffle, "another shuffle"),
                  ("drop_last", self.drop_last, "another drop_last")]
        for key, mine, what in checks:
            if state.get(key) != mine:
                shown = state.get(key) if key != "classes" else f"{len(state.get(key) or [])} classes"
                here = mine if key != "classes" else f"{len(mine)} classes"
                raise ValueError(f"load_state_dict: the state was taken with {key}={shown!r} and this loader has "
                                 f"{here!r}: a resume on {what} would not continue the same stream; resume with "
                                 f"the same data and settings, or start afresh")
        # The order depends on the seed, so the resumed loader takes the saved one.
        if state["seed"] != self.seed:
            self._reseed(state["seed"])
        self._epoch = state["epoch"]
        self._resume_at = state["next_batch"]
        self._position = None
        self._generation += 1

    def _make_loader(self, seed):
        try:
            return _stoker.Loader(*self._loader_args, seed, *self._loader_options)
        except ValueError as e:
            chain = self._loader_options[2]
            raise ValueError(f"transforms={chain!r}: {e}" if "transform" in str(e).lower() else str(e)) from None

    def _reseed(self, seed):
        """A loader on the saved seed (the order of every epoch depends on it)."""
        workers = self._loader.workers
        self._loader = self._make_loader(seed)
        self._loader.workers = workers
        self.seed = seed
        if self._feed is not None:
            self._feed.loader = self._loader
        self._diagnosis = _stoker.Diagnosis(self._loader, current_monitor(), cores(), -1, self.auto_workers,
                                            self.prefetch_factor, self.dataset)
        register_diagnosis(self._diagnosis, self)

    def __repr__(self):
        return (f"stoker.DataLoader({self.source.describe()}, batch_size={self.batch_size}, "
                f"num_workers={self.num_workers}, transforms={self.transforms!r})")


class _Iterator:
    def __init__(self, loader, generation):
        self._loader = loader
        self._generation = generation

    def __iter__(self):
        return self

    def __next__(self):
        return self._loader._next(self._generation)

    def __len__(self):
        return len(self._loader)
