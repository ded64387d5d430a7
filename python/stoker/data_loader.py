"""stoker.DataLoader: stoker's C++ input pipeline in place of torch.utils.data.DataLoader.

Batches come as (inputs, targets) torch tensors, the inputs viewing the loader's buffers (no
copy), the targets copied; a buffer goes back to the pool when the last tensor viewing it is gone. Epoch e's batches are
the same for any num_workers, and state_dict() resumes exactly where it was taken.
"""
import atexit
import contextlib
import copy
import importlib.util
import math
import os
import sys
import threading
import time
import warnings
import weakref

import torch
import torch.utils.dlpack

from . import _arguments as arg
from . import _exit
from . import _options
from . import _stoker
from ._collate import WholeSamples, call_collate_fn, call_on_items, collate_targets, sample_params, whole_samples
from ._dataset_processes import DatasetProcesses, close_live_first_at_exit
from ._blocks import items_of, whole_chunk
from ._passthrough import collate_images, whole_items
from ._iterable import StreamPass, StreamProcesses, StreamView, check_options, is_iterable, load_state, stream_batches
from ._datasets import PathDataset, _raised, class_to_idx, open_data, reopen_folder
from ._generator import draw_random_sampler, draw_seed, peek_seed
from ._gil_hint import GilHint
from ._process import core_share
from ._ranks import LateRanks
from ._reseed import Reseeds, initial_seed
from ._clip_geometry import with_clip_geometry
from ._geometry import aligned_outputs, given_geometry, point_count, restore, with_geometry
from ._samplers import PlannedSampler, draws_at_random, given_order, rank_seed, sampler_rank
from ._session import current_monitor, loader_step, note_resumed, register_diagnosis
from ._state import STATE_VERSION, check_state
from ._modes import chain_keeping_modes
from ._torchvision import Refused, chain_of
from ._worker_info import WorkerThreads
from ._worker_info import install as install_worker_info


def _rank_and_world(rank, world_size):
    """Explicit values, else torch.distributed's when it is initialised, else RANK / WORLD_SIZE
    (as torchrun sets them). world_size=1 alone is rank 0: a loader this rank reads whole."""
    import torch.distributed as dist

    group = dist.is_available() and dist.is_initialized()
    if world_size is None:
        world_size = dist.get_world_size() if group else _environment_int("WORLD_SIZE", 1)
    if rank is None:
        rank = 0 if world_size == 1 else dist.get_rank() if group else _environment_int("RANK", 0)
    arg.whole("world_size", world_size, 1, hint="the number of processes training together")
    arg.whole("rank", rank, 0, world_size - 1, hint=f"ranks of a world of {world_size} are 0 to {world_size - 1}")
    return rank, world_size


def _shard_note(world_size, samples):
    """The line a loader without a sampler prints where it shards what torch's DataLoader would give
    every rank whole: an unshuffled one on several ranks, where the world size was not given
    (an evaluation each rank runs over all of it, as PyTorch's ImageNet example does with the
    samples DistributedSampler leaves over)."""
    shard = f"{math.ceil(samples / world_size):,} of {samples:,} sample{'s' if samples != 1 else ''}"
    return (f"stoker.DataLoader: no sampler on {world_size} ranks: each rank reads its own shard ({shard}), "
            f"where torch's DataLoader gives every rank all of them; pass world_size=1 for a loader every rank "
            f"reads whole, or world_size={world_size} to keep the shards without this line")


_shard_note_said = False  # once a process: a validation loader made every epoch says it once


# Frameworks that shard an unshuffled torch DataLoader over the ranks too (Lightning's
# DistributedSampler(shuffle=False), Accelerate's prepare): there stoker's shards are torch's.
_SHARDING_FRAMEWORKS = ("pytorch_lightning", "lightning", "lightning_fabric", "accelerate")


def _say_shard_note(world_size, samples):
    global _shard_note_said
    if any(name in sys.modules for name in _SHARDING_FRAMEWORKS):
        return
    if not _shard_note_said:
        _shard_note_said = True
        print(_shard_note(world_size, samples), file=sys.stderr, flush=True)


def _environment_int(name, default):
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"the environment's {name}={text!r} is not a whole number; torchrun sets it, and a "
                         f"launcher of your own must set it to one (or pass rank= and world_size=)") from None


def _epoch_seed(seed, world_size, shuffle, generator=None):
    """The seed of every epoch's order and augmentations. Given: that one. On several ranks every
    rank must shuffle alike (DistributedSampler's contract), so the seed is rank 0's draw, shared
    over torch.distributed when it is initialised (a collective: every rank makes the loader),
    else 0 (DistributedSampler's default). On one process, or unshuffled: the base seed the first
    pass would draw from `generator` or torch's default one now, taken without drawing it (the
    passes draw as torch's DataLoader does; _reseed.Reseeds.take takes a pass's own draw where the
    script seeds the generator before it), so that torch.manual_seed repeats a run."""
    if seed is not None:
        return _options.check("seed", seed)
    if world_size == 1 or not shuffle:
        return peek_seed(generator)
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return 0
    shared = torch.tensor([peek_seed(generator)], dtype=torch.int64)
    if dist.get_backend() == "nccl":  # NCCL moves CUDA tensors only
        shared = shared.cuda()
    dist.broadcast(shared, src=0)
    return int(shared.item())


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


def _as_bool(images):
    """A uint8 batch as bool (non-zero: True), pinned where it was, in its memory format; a
    cast (copy_), several times faster than torch.ne on the CPU."""
    return torch.empty_like(images, dtype=torch.bool, pin_memory=images.is_pinned()).copy_(images)


def _clip_start(frames_per_clip, shuffle, sampler, batch_sampler):
    """clip_start=None: a random clip when the epoch's order is drawn at random (shuffle, or a
    sampler that shuffles: training), the centre clip when it is not (evaluation). A sampler
    whose kind does not say is refused for clips: the script names the start."""
    if sampler is None and batch_sampler is None:
        return "random" if shuffle else "center"
    random = draws_at_random(sampler, batch_sampler)
    if random is None and frames_per_clip > 0:
        given = "batch_sampler" if batch_sampler is not None else "sampler"
        kind = type(batch_sampler if batch_sampler is not None else sampler).__name__
        raise ValueError(f"clip_start=None: with {given}={kind}, stoker cannot tell whether the order is drawn at "
                         "random (training) or not (evaluation); pass clip_start='random' (a random clip of each "
                         "sample) or clip_start='center' (the centre clip)")
    return "random" if random else "center"


def _weak(method):
    """`method` without a reference to its object: the parts a DataLoader holds must not hold it,
    so that it goes (its workers stopped, its buffers freed) as soon as the script lets go of it."""
    ref = weakref.WeakMethod(method)
    return lambda *args: ref()(*args)


def _decoded_cache_refusal(data, keypoints, boxes):
    """What keeps the decoded cache from this data (a Dataset's own items, keypoints or boxes),
    or "" when it can hold its images."""
    if data.targets != "engine":
        return f"{data.name}'s items, made by its __getitem__"
    return "keypoints or boxes" if keypoints is not None or boxes is not None else ""


def _flip_pairs(pairs, data, keypoints):
    """[(i, j), ...]: the point indices a horizontal flip swaps (left and right eye, ...), of
    keypoints stoker moves: `keypoints=` for a path, stoker.Keypoints in a Dataset's items. The
    engine refuses a point named in two pairs (check_flip_pairs)."""
    if pairs is None:
        return []
    try:
        out = [(int(a), int(b)) for a, b in pairs]
    except (TypeError, ValueError):
        raise arg.bad("flip_pairs", pairs, "pairs of point indices, e.g. [(0, 16), (1, 15)]") from None
    if out and keypoints is None and not data.item_keypoints:
        given = f"<{len(out)} pair{'s' if len(out) > 1 else ''}>"
        allowed = "the pairs of keypoints a horizontal flip swaps, and there are no keypoints here"
        if data.targets == "items":
            raise arg.bad("flip_pairs", given, allowed, f"{data.name}[0] holds no stoker.Keypoints, and an array or list "
                          "in an item is passed through unmoved: wrap the points, stoker.Keypoints(points), so that "
                          "they follow the crop, the resize and the flip")
        raise arg.bad("flip_pairs", given, allowed, "give them with keypoints= (an (N, P, 2) array, an .npy file, a CSV "
                      "list's column or the extension of a file beside each image, '.pts')")
    count = point_count(keypoints)
    if count is not None:  # a point past keypoints='s P is refused now, not at the first flip
        for a, b in out:
            if max(a, b) >= count:
                raise ValueError(f"flip_pairs names point {max(a, b)} in ({a}, {b}) and keypoints= has {count} "
                                 f"points a sample (0 to {count - 1})")
    return out


def _flip_negate(given, data):
    """The float target indices a horizontal flip negates, from names of a CSV list's target
    columns ("yaw") or indices."""
    if given is None:
        return []
    listed = [given] if isinstance(given, (str, int)) else given
    if data.targets != "engine" or any(isinstance(t, bool) or not isinstance(t, (str, int)) for t in listed):
        raise arg.bad("flip_negate", given, "target column names or indices of float targets stoker reads (a CSV "
                      "list's yaw, pitch, roll; an array's columns)",
                      "a Dataset's targets are its own: negate them where return_params's 'hflip' is set"
                      if data.targets != "engine" else "")
    return _stoker.target_indices(data.source, [str(t) for t in listed], "flip_negate")


def _pinned_allocate(nbytes):
    block = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    return block.data_ptr(), block


def _nvjpeg_dirs():
    """The folders where pip puts nvJPEG: the nvidia-nvjpeg wheel's lib/ and torchvision's bundled
    copy in torchvision.libs/ (found without importing either)."""
    dirs = []
    for name in ("nvidia.nvjpeg", "torchvision"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(os.path.join(location, "lib") if name == "nvidia.nvjpeg" else
                        os.path.join(os.path.dirname(location), "torchvision.libs"))
    return dirs


def _gpu_decoder(decode, device, transforms, batch_size):
    """(nvJPEG's decoder on `device` for a loader running `transforms` in batches of `batch_size`,
    which JPEGs the loader leaves for it) for decode='gpu' or 'auto' where choose_decode allows it;
    (None, 'off') with one line on stderr when 'auto' decodes on the CPU after all. decode='gpu'
    that cannot be raises ValueError in one line."""
    from ._gpu_decode import make_decoder

    try:
        decoder = make_decoder(device, _nvjpeg_dirs(), transforms, batch_size)
    except RuntimeError as e:
        if decode == "gpu":
            raise ValueError(f"decode='gpu': {e}; use decode='cpu'") from None
        print(f"decode='auto': decoding on the CPU: {e}", file=sys.stderr, flush=True)
        return None, "off"
    handoff = _stoker.gpu_handoff_for(decode, decoder.has_hardware)
    if handoff == "off":  # auto on a GPU without the JPEG engine
        print(f"decode='auto': decoding on the CPU: {decoder.description}", file=sys.stderr, flush=True)
        return None, "off"
    return decoder, handoff


@atexit.register
def _close_all():
    """Stops every loader's workers before the interpreter finalizes: a worker inside a
    Dataset's __getitem__ must not be running Python code while it does. That covers the
    loaders a garbage collection is letting go of on a worker thread (python/src/loader_closing.h).
    First every loader's calls raise, and the other threads inside a loader's iter() or next()
    leave it (_exit.py): none runs stoker's code on a loader being destroyed or into the
    finalization."""
    _exit.begin()
    _stoker.Loader.take_all()
    _exit.settle()
    _stoker.Loader.close_all()


def _close_first_at_exit():
    """Run as the interpreter shuts down, before atexit runs its handlers (threading's own exit
    hook): makes stoker's the last registered, so that they run first. atexit runs the last
    registered first, and the handler of a library imported after stoker would otherwise run
    while the workers are still inside the Dataset's __getitem__: h5py's (it unregisters its type
    converters, holding HDF5's lock while it takes the GIL back) then hangs the exit for ever with
    a worker that holds the GIL and waits for HDF5's lock."""
    atexit.unregister(_close_all)
    atexit.register(_close_all)
    close_live_first_at_exit()  # dataset_processes' handler runs before the loaders' (_close_live)


# threading's hook (3.9 on; concurrent.futures' too) runs before atexit's handlers, each time.
getattr(threading, "_register_atexit", lambda function: None)(_close_first_at_exit)


# A fork (a torch DataLoader's fork workers, multiprocessing) waits until no worker is inside a
# Dataset's __getitem__, whose locks (h5py's) the child would get held for ever
# (python/src/loader_closing.h).
os.register_at_fork(before=_stoker.before_fork, after_in_parent=_stoker.after_fork_in_parent,
                    after_in_child=_stoker.after_fork_in_child)


def _length(dataset):
    """len(dataset), or None where it has none (an iterable-style Dataset's __len__ may raise TypeError)."""
    try:
        return len(dataset)
    except Exception:  # noqa: BLE001 - no length: len(loader) says so where it is asked
        return None


def _shallow_copy(dataset):
    """A shallow copy of `dataset` (its own attributes, the values shared), else `dataset` itself
    where it cannot be copied."""
    try:
        return copy.copy(dataset)
    except Exception:  # noqa: BLE001 - a class that refuses copying: its processes get it as it is
        return dataset


# How a bad sample's line names that bound ({} its value).
_PIL_MAX_PIXELS_NAMED = ("{}, twice PIL's Image.MAX_IMAGE_PIXELS, above which Image.open refuses it too; for larger "
                         "images raise Image.MAX_IMAGE_PIXELS, or set it to None, before making the loader")


def _pil_max_pixels():
    """The most pixels an image may have, as PIL opens it for torch's DataLoader: twice
    Image.MAX_IMAGE_PIXELS (above it Image.open raises DecompressionBombError; between, it warns),
    none where a script set it to None; Pillow's default where Pillow is not installed."""
    try:
        from PIL import Image
    except ImportError:
        return 2 * _stoker.default_max_pixels
    limit = Image.MAX_IMAGE_PIXELS
    return sys.maxsize if limit is None else max(1, 2 * int(limit))


# What a script can do about bad samples, in the lines that report them (here and stoker.watch's).
BAD_SAMPLES_TO_DO = "stats()['bad_samples'] names each; on_error='raise' stops at the first"


class DataLoader:
    """torch.utils.data.DataLoader's arguments, in its order, and stoker's own after them;
    docs/guide/python.md says what each does and where it differs from torch's."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers="auto",
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=2, persistent_workers=False,
                 pin_memory_device="", in_order=True, seed=None, transforms=None, rank=None, world_size=None,
                 device="cpu", decode="cpu", channels_last=False, on_error="substitute", max_bad=0.01, split="train",
                 cache_decoded_gb=0, return_params=False, keypoints=None, boxes=None, box_format="xyxy",
                 flip_pairs=None, flip_negate=None, frames_per_clip=0, frame_step=1, clip_start=None, image_key=None,
                 dataset_processes=None, chunk_shuffle_gb=0.5):
        self._pid = os.getpid()
        # batch_size=None (torch's: each item is a batch the Dataset made, as open_clip's webdataset
        # pipeline batches its own samples): batches of one item, the item given as it is (_collated_whole).
        self._unbatched = batch_size is None
        if self._unbatched:
            if drop_last:
                raise ValueError("batch_size=None gives each item as its batch, so drop_last has none to drop (as in "
                                 "torch's DataLoader, which refuses the two together); leave drop_last out")
            batch_size = 1 if batch_sampler is None else None  # with a batch sampler: given_order's refusal
        # The loader's own options, checked from its table (one declaration for every front end).
        for name, value in (("shuffle", shuffle), ("batch_size", 1 if self._unbatched else batch_size),
                            ("num_workers", num_workers),
                            ("prefetch_factor", prefetch_factor), ("drop_last", drop_last), ("pin_memory", pin_memory),
                            ("channels_last", channels_last), ("on_error", on_error), ("max_bad", max_bad),
                            ("cache_decoded_gb", cache_decoded_gb), ("decode", decode),
                            ("chunk_shuffle_gb", chunk_shuffle_gb)):
            _options.check(name, value)
        shuffle = bool(shuffle)  # None: False, as torch takes it
        self.return_params = arg.flag("return_params", return_params)
        arg.flag("persistent_workers", persistent_workers)  # stoker's workers always persist
        arg.flag("in_order", in_order)  # batches always come in order: what in_order=False allows too
        self.timeout = arg.seconds("timeout", timeout, "0 waits for as long as a batch takes")
        arg.whole("frames_per_clip", frames_per_clip, 0, _stoker.max_clip_frames, "frames per sample; 0 reads images")
        arg.whole("frame_step", frame_step, 1, _stoker.max_frame_step, "the distance between a clip's chosen frames")
        stream = is_iterable(dataset)  # an iterable-style Dataset: _iterable.py
        name = type(dataset).__name__
        if dataset_processes is None:
            dataset_processes = 1 if stream else 0
        arg.whole("dataset_processes", dataset_processes, 0, 1024, "worker processes calling a Dataset's __getitem__ "
                  "(0 calls it on the worker threads), or running an iterable-style Dataset's __iter__ (1 or more)")
        if stream:
            check_options(name, shuffle, sampler, batch_sampler, dataset_processes)
        if clip_start is not None:
            arg.choice("clip_start", clip_start, ("random", "center"), "or None: random when the loader or its "
                       "sampler shuffles, else the centre")
        if frames_per_clip > 0 and cache_decoded_gb != 0:
            raise arg.bad("cache_decoded_gb", cache_decoded_gb, "0 with frames_per_clip (it keeps single images)")
        if collate_fn is not None and not callable(collate_fn):
            raise arg.bad("collate_fn", collate_fn, "a callable that batches a list of targets")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise arg.bad("worker_init_fn", worker_init_fn, "a callable taking the worker's id")
        if generator is not None and not isinstance(generator, torch.Generator):
            raise arg.bad("generator", generator, "a torch.Generator, or None for torch's default one")
        if not isinstance(pin_memory_device, str):
            raise arg.bad("pin_memory_device", pin_memory_device, "a device name such as 'cuda', or ''")
        self.auto_workers = num_workers == "auto"
        # This rank's share of the machine's cores, counted once: "auto"'s start and ceiling, the diagnosis.
        self._cores = core_share()
        if self.auto_workers:
            workers = _stoker.auto_workers(self._cores["cores"])  # where stoker train's --workers auto starts
        elif num_workers == 0:
            workers = 1  # no worker processes to spare: one thread, as light as torch's main-process loading
        else:
            workers = num_workers
        try:
            self.device = torch.device(device)
        except (RuntimeError, TypeError):
            raise arg.bad("device", device, "'cpu' or 'cuda' (or 'cuda:N')") from None
        if self.device.type not in ("cpu", "cuda"):
            raise arg.bad("device", device, "'cpu' or 'cuda' (or 'cuda:N')")
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise arg.bad("device", device, "a CUDA device, and this torch sees none", "use device='cpu'")
        self.pin_memory = pin_memory and torch.cuda.is_available()  # without CUDA, as torch: quietly not pinned
        # decode='gpu' is refused in one line wherever it cannot be; 'auto' decodes on the CPU there and
        # says why in at most one line when the batches go to a GPU.
        use, error, note = _stoker.choose_decode(decode, self.device.type == "cuda", torch.cuda.is_available(),
                                                 _nvjpeg_dirs() if decode != "cpu" else [])
        if error:
            raise ValueError(error)
        if note:
            print(note, file=sys.stderr, flush=True)

        self._order, batch_size, drop_last = given_order(sampler, batch_sampler, batch_size, shuffle, drop_last)
        # The samples of the engine's batch buffers at first: a batch sampler's batches may differ in
        # size (batch_size None where it has none), and each pass's largest sets them (start_epoch).
        capacity = batch_size if batch_size is not None else 1
        if clip_start is None:
            clip_start = _clip_start(frames_per_clip, shuffle, sampler, batch_sampler)
        self.rank, self.world_size = _rank_and_world(rank, world_size)
        # An iterable-style Dataset shards itself (by the rank it reads): stoker reads it whole.
        sharded = self._order is None and not stream
        # Made before torch.distributed is initialised: the ranks may be the process group's, taken
        # when they are first needed (_follow_ranks).
        self._ranks = LateRanks(rank, world_size, self.world_size, sharded, seed is not None, os.environ)
        self.seed = _epoch_seed(seed, self.world_size if sharded else 1, shuffle, generator)
        # A seed peeked from torch's generator (neither given nor shared over ranks) stands for the
        # first pass's base seed, and follows the generator seeded again before a pass (_reseed.Reseeds);
        # a seed given, or shared over ranks (a rank's own reseed would split the shards), stands.
        peeked = seed is None and ((self.world_size if sharded else 1) == 1 or not shuffle)
        self._reseeds = Reseeds(follows=peeked, seeded_from=initial_seed(generator) if peeked else None,
                                seen=torch.get_rng_state() if generator is None else generator.get_state())
        # A training loader (its epochs in a random order) may count the run's steps (_session.loader_step).
        self._random_order = bool(shuffle) if self._order is None else draws_at_random(sampler, batch_sampler) is True
        # A script's sampler may give one sample to several ranks: each rank's streams take its rank in.
        self._stream_rank = 0 if self._order is None else sampler_rank(sampler, batch_sampler, self.rank,
                                                                         self.world_size)
        # With dataset_processes, worker_init_fn runs in the processes, and the threads call no Python but
        # the processes' take().
        processes = (StreamProcesses if stream else DatasetProcesses)(dataset_processes, name) \
            if dataset_processes else None
        # The processes get the Dataset as given, before this process's look at its first items sets
        # what __getitem__ opens lazily (an h5py handle: forked, it is shared; spawned, it cannot be pickled).
        as_given = _shallow_copy(dataset) if processes is not None else None
        # Without processes, each worker thread starts by taking its get_worker_info() answer, then
        # calls worker_init_fn. "auto" runs up to a thread per core (the diagnosis' limit).
        self._worker_threads = None if processes else WorkerThreads(
            dataset, max(workers, self._cores["cores"]) if self.auto_workers else workers, worker_init_fn)
        if self._worker_threads is not None and not isinstance(dataset, (str, bytes, os.PathLike)):
            install_worker_info()  # the look at a Dataset's first items runs as worker 0 (open_data)
        data = open_data(StreamView(dataset, name, batch_size) if stream else dataset, split, self._worker_threads,
                         clips=frames_per_clip > 0, on_error=on_error, image_key=image_key,
                         items=processes.take if processes else None, name=name,
                         item_runs=processes.take_run if processes else None,
                         transforms_given=transforms is not None, stream=stream)
        if stream:
            data.dataset = dataset
            data.follows = None  # its passes end where its stream does (_iterable.py)
        shared_seeding = self._worker_threads and self._worker_threads.shared_seeding_line(data.name)
        if shared_seeding:
            warnings.warn(shared_seeding, UserWarning, stacklevel=2)
        if self._unbatched and not data.passthrough:
            raise arg.bad("batch_size", None, "for a Dataset whose items are batches it made itself (arrays and "
                          "tensors, as open_clip's webdataset pipeline batches them); stoker reads "
                          f"{data.name}'s images and batches them itself", "give batch_size=N, the samples of a batch")
        if processes is not None and data.targets != "items":
            raise arg.bad("dataset_processes", dataset_processes, f"0 for {data.name}: stoker's workers read and "
                          "decode it in C++ and call no Python", "leave it out")
        if refusal := _stoker.clip_source_refusal(frames_per_clip, data.source):  # before what reads clips' rows
            raise ValueError(refusal)
        self.keypoints, self.boxes, self.box_format = keypoints, boxes, box_format
        if keypoints is not None or boxes is not None:
            if data.targets == "items":
                raise arg.bad("keypoints" if keypoints is not None else "boxes", "<array>",
                              "arrays aligned with a path's or an ImageFolder's samples",
                              "a Dataset object puts stoker.Keypoints / stoker.Boxes in its items instead"
                              + (", (T, P, 2) and (T, 4) beside a clip" if frames_per_clip > 0 else ""))
            if frames_per_clip > 0:
                data.source, keypoints, boxes = with_clip_geometry(data, keypoints, boxes, box_format)
            else:
                keypoints = given_geometry("keypoints", keypoints, data)
                boxes = given_geometry("boxes", boxes, data)
                data.source = with_geometry(data.source, keypoints, boxes, box_format)
            self.keypoints, self.boxes = keypoints, boxes
            data.item_width -= len(data.geometry_columns)
        self._cache_refusal = _decoded_cache_refusal(data, self.keypoints, self.boxes)
        if cache_decoded_gb != 0 and self._cache_refusal:
            raise arg.bad("cache_decoded_gb", cache_decoded_gb, f"0 with {self._cache_refusal}: the decoded cache "
                          "keeps the images of a path or an ImageFolder of JPEG/PNG files alone", "leave it out")
        flip_pairs = _flip_pairs(flip_pairs, data, keypoints)
        flip_negate = _flip_negate(flip_negate, data)
        if worker_init_fn is not None and data.targets == "engine":
            if isinstance(dataset, (str, bytes, os.PathLike)):
                raise arg.bad("worker_init_fn", worker_init_fn, f"a setup for workers that run Python; for {data.name} "
                              "stoker's workers read and decode in C++ and run none", "leave it out")
            # A torch script's seed_worker (PyTorch's reproducibility recipe) runs as written: it has nothing to
            # seed here, and called on the threads it would reseed the process's own random and NumPy generators.
            warnings.warn(f"stoker.DataLoader: worker_init_fn is not called: stoker's workers read {data.name} in "
                          "C++ and run no Python (its augmentation draws from the loader's seed); leave it out to "
                          "silence this line", UserWarning, stacklevel=2)
        self.dataset, self.source, self._data = data.dataset, data.source, data
        # A Dataset object's (image, target, ...) batches come as a list, as torch's default_collate makes them;
        # a path's as a tuple.
        self._batch_type = tuple if isinstance(dataset, (str, bytes, os.PathLike)) else list
        if data.stack is not None:  # pinned by the workers, as torch's pin thread pins off the loop's thread
            data.stack.pin = self.pin_memory and self.device.type == "cpu"
        if world_size is None and sharded and not shuffle and self.world_size > 1 and self.rank == 0:
            _say_shard_note(self.world_size, len(self.source))
        # A sample's features as torch batches them: (T, D) for the rows of an (N, T, D) array.
        self._feature_shape = tuple(self.source.feature_shape)
        self.sampler = sampler if batch_sampler is None else getattr(batch_sampler, "sampler", None)
        if sharded:
            self.sampler = PlannedSampler(self)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.multiprocessing_context = multiprocessing_context  # dataset_processes' start method
        self.dataset_processes = dataset_processes
        self._processes = processes
        self._processes_samples = len(self.source)  # the len() of the Dataset copy the processes hold
        if processes is not None:
            layout = data.dict_items
            # An iterable's processes start again for each pass unless persistent_workers (as torch's),
            # so that its set_epoch (a shard order per epoch) reaches them.
            processes.open(as_given, capacity, prefetch_factor, worker_init_fn, multiprocessing_context,
                           image_key=layout.image_key if layout is not None else None, clips=frames_per_clip > 0,
                           persistent=persistent_workers or not stream, passthrough=data.passthrough)
            processes.follow(dataset, as_given)  # what new processes get (renew(), an iterable's next pass)
            # Before the workers stop: they may wait in its take(). Not at exit, where weakref's own atexit
            # handler may run before stoker's (_close_live closes the processes there, after _exit.begin()).
            weakref.finalize(self, processes.close, 0).atexit = False
        self.persistent_workers = persistent_workers
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order
        # As torch's: a batch sampler's loader has no batch size of its own, nor drop_last. The batch
        # sampler's own batch_size (where it has an int one) stands in a state (state_dict) and
        # sizes the first buffers.
        self._state_batch_size = batch_size
        self.batch_size = None if batch_sampler is not None or self._unbatched else batch_size
        self.prefetch_factor = prefetch_factor
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.channels_last = channels_last
        self.frames_per_clip, self.frame_step, self.clip_start = frames_per_clip, frame_step, clip_start

        self._transforms_given = transforms  # the chain's origin (_chain_now), read again at each pass's start
        chain = self._chain_now()
        gpu_decoder, gpu_handoff = _gpu_decoder(decode, self.device, chain, capacity) if use == "gpu" \
            else (None, "off")
        self.decode = "gpu" if gpu_decoder is not None else "cpu"
        on_gpu = self.device.type == "cuda"
        # The workers begin the next epoch before its pass starts only where they run no Python:
        # a Dataset object's items may depend on what the script sets between epochs.
        run_ahead = sharded and data.targets == "engine"
        self._loader_options = dict(
            batch_size=capacity, workers=workers, prefetch=_stoker.buffers_in_flight(prefetch_factor, workers),
            shuffle=shuffle,
            drop_last=drop_last, rank=self.rank if sharded else 0, world_size=self.world_size if sharded else 1,
            transforms=chain, channels_last=channels_last, normalize_in_consumer=on_gpu, on_error=on_error,
            max_bad=1.0 if stream else max_bad, cache_decoded_bytes=cache_decoded_gb * 1e9,
            run_ahead=run_ahead, return_params=return_params, flip_pairs=flip_pairs, flip_negate=flip_negate,
            frames_per_clip=frames_per_clip,
            frame_step=frame_step, clip_start=clip_start, gpu_handoff=gpu_handoff,
            gpu_required=decode == "gpu", allocate=_pinned_allocate if (self.pin_memory or on_gpu) else None,
            max_pixels=_pil_max_pixels(), max_pixels_named=_PIL_MAX_PIXELS_NAMED,
            chunk_shuffle_bytes=chunk_shuffle_gb * 1e9)
        self._loader = self._make_loader(self.seed)
        # An iterable's passes run the engine loader's epochs in segments (_iterable.StreamPass). With
        # on_error="raise" the engine raises at the first bad item's batch: the pass counts none (its
        # workers, reading ahead, may have met the item before an earlier batch is handed out).
        self._stream = StreamPass(self._loader, processes, len(self.source), batch_size, data.name,
                                  _length(dataset), max_bad if on_error != "raise" else 1.0) if stream else None
        self._feed = None
        self._gpu_stage = None
        if self._loader.gpu_note:  # 'auto' with a chain or data the GPU does not finish
            print(self._loader.gpu_note, file=sys.stderr, flush=True)
            self.decode = "cpu"
            self._loader_options["gpu_handoff"] = "off"  # a loader made again (_replace_loader) decodes on the CPU too
        elif gpu_decoder is not None:
            from ._gpu_decode import GpuDecodeStage

            self._gpu_stage = GpuDecodeStage(self._loader, gpu_decoder, self.device,
                                             tune_share=gpu_handoff == "hardware",  # decode='auto'
                                             max_items=capacity)
        if on_gpu:
            from .device_feed import DeviceFeed

            self._feed = DeviceFeed(self._stream if stream else self._loader, self.device, channels_last,
                                    _weak(self._targets), _weak(self._params), self.timeout, gpu=self._gpu_stage)
        self._epoch = 0
        self._resume_at = 0     # the batch the next iter() starts at (load_state_dict)
        self._ended_epoch = None  # the epoch a state loaded was taken at the end of (load_state_dict)
        self._position = None   # batches of the current epoch handed out; None when not iterating
        self._generation = 0
        self._drew_base_seed = False  # persistent_workers: torch's DataLoader draws it on the first pass alone
        self._in_call = threading.Lock()  # held by the consumer call in progress
        self._live = None                 # weak reference to the latest iter()'s iterator
        self._diagnosis = self._new_diagnosis(auto_workers=self.auto_workers)
        # The worker threads' dataset[i] calls, judged for the GIL as the loop runs (_gil_hint.py).
        self._gil_hint = GilHint(self, dataset, data.name) if (
            processes is None and not stream and data.targets == "items" and self.source.call_times is not None) \
            else None
        self._autotune = []
        # The first bad sample substituted is one UserWarning line (_warn_first_bad); "raise" raises at it.
        self._bad_told = on_error == "raise"
        register_diagnosis(self._diagnosis, self)
        self._made = True

    def __setattr__(self, name, value):
        """One ValueError line for an option the loader took when it was made: a later value would
        not reach the batches (torch's DataLoader refuses batch_size, drop_last, dataset and the
        samplers alike, and takes the rest at its next iter())."""
        if name in _TAKEN_WHEN_MADE and self.__dict__.get("_made"):
            shown = repr(value)
            if "\n" in shown or len(shown) > 60:
                shown = f"<a {type(value).__name__}>"
            raise ValueError(f"loader.{name}={shown}: stoker.DataLoader takes {name} when it is made (its workers, "
                             f"buffers and plan follow it), so a later value would not reach the batches; make a new "
                             f"stoker.DataLoader(..., {name}=...)")
        super().__setattr__(name, value)
        stack = getattr(self.__dict__.get("_data"), "stack", None)
        if name == "collate_fn" and stack is not None:  # a collate_fn stacks the whole items' images itself
            stack.skip = value is not None or self._unbatched

    # torch's DataLoader attributes that scripts read.
    @property
    def num_workers(self):
        return self._loader.workers

    @property
    def epoch(self):
        """The epoch the current or next pass yields."""
        return self._epoch

    @property
    def class_names(self):
        return list(self.source.class_names)

    @property
    def class_to_idx(self):
        return class_to_idx(self.source)

    @property
    def transforms(self):
        """The chain as the loader runs it, e.g. 'RandomResizedCrop(224) · ... → float32 NCHW'."""
        if self._data.passthrough:
            return "none: the Dataset's arrays batched as they are"
        return self._loader.transforms

    @transforms.setter
    def transforms(self, transforms):
        """The chain from the next pass on, given as `transforms=` is (objects are read again at
        each pass's start; None: the ImageFolder's own transform, else what suits the data).
        Between passes only: during one it raises RuntimeError; a chain stoker cannot run raises
        ValueError, the running one kept."""
        self._check_process()
        with self._one_call("setting loader.transforms"):
            if self._in_pass():
                raise RuntimeError(f"loader.transforms cannot change during a pass (batch {self._position} of epoch "
                                   f"{self._epoch} came last): set it between passes, after the pass's last batch "
                                   "or before iter(); it takes effect at the next pass")
            given, self._transforms_given = self._transforms_given, transforms
            try:
                self._follow_chain()
            except ValueError:
                self._transforms_given = given
                raise

    def __len__(self):
        self._follow_ranks()
        if self._stream is not None:
            return stream_batches(self.dataset, self._data.name, self._per_batch, self.drop_last)
        if self._order is not None:
            return self._order.batches(self._per_batch, self.drop_last)
        if self._sized_each_pass() or self._ranks.moved:  # the next pass's, as torch's len(loader) reads len(dataset)
            return self._batches_of(self._samples_now())
        return len(self._loader)

    def _sized_each_pass(self):
        """Whether each pass takes its size at its start: a Dataset object's, a DatasetFolder's, an
        .h5 file's while a resumed pass runs on the rows it began with (_cut_rows)."""
        return self._data.follows is not None or self._data.samples_read is not None or self._all_rows is not None

    _all_rows = None  # an .h5 file's whole source while a resumed pass runs on its first rows

    def _rows_appended(self):
        """Whether the data is an .h5 file given as a path, whose rows a run may append to between a
        state and its resume: the rest of a pass reads the rows it began with, the next pass all."""
        return (self._stream is None and isinstance(self._data.dataset, PathDataset)
                and os.fsdecode(self._data.dataset.root).lower().endswith((".h5", ".hdf5")))

    def _cut_rows(self, count):
        """The engine loader made again on the file's first `count` rows (the rest of a resumed pass),
        or on all of them (None: a pass from its first batch); nothing where it runs on those."""
        whole = self._all_rows if self._all_rows is not None else self.source
        source = whole if count is None or count == len(whole) else _stoker.Source.first_rows(whole, count)
        if source is self.source:
            return
        self.source = self._data.source = source
        self._all_rows = None if source is whole else whole
        self._replace_loader(self.seed)

    def _samples_now(self):
        """The samples the next pass plans: a Dataset object's len() now, a DatasetFolder's (or its
        Subset's) count now, else the data's count."""
        if self._data.samples_read is not None:
            return len(self._data.samples_read.dataset)
        if self._all_rows is not None:
            return len(self._all_rows)
        if self._data.follows is None:
            return len(self.source)
        try:
            return len(self._data.follows)
        except Exception as e:  # noqa: BLE001 - a __len__ that raises: one line naming it
            raise ValueError(f"len({self._data.name}) raised {_raised(e)}; stoker.DataLoader reads it at each pass's "
                             "start (as torch's samplers do): make __len__ return the number of samples") from None

    def _batches_of(self, samples):
        """This rank's batches in a pass of stoker's own plan over `samples` (stoker/data/sampler.h)."""
        per_rank = math.ceil(samples / self._loader_options["world_size"])
        return per_rank // self._per_batch if self.drop_last else math.ceil(per_rank / self._per_batch)

    @property
    def _per_batch(self):
        """Samples per batch, to count batches: batch_size, or 1 where it is None (each item its batch)."""
        return 1 if self._unbatched else self.batch_size

    def _pass_batches(self):
        """The batches of the pass a resume continues: of the size it had (len(self.source))."""
        if self._sized_each_pass() and self._order is None:
            return self._batches_of(len(self.source))
        return len(self)

    def _samples_changed(self):
        """At a pass's start, from its first batch: a DatasetFolder's samples (an in-memory dataset's
        array and class ids: _memory_datasets.py) as the script left them (relabelled, listed anew, a
        Subset's indices changed), which torch's DataLoader serves from its next pass: (the source
        made again from them (reopen_folder, MemorySamples' or ConcatSamples' source_of; for a relabel, its labels
        alone), the samples) for _follow_chain to run this pass on, in a loader made again; None
        where they are the ones read. Unchanged samples cost a list comparison
        (FolderSamples.unchanged). Raises ValueError in one line where the new ones cannot be served."""
        read = self._data.samples_read
        if read is None or read.unchanged():
            return None
        now = read.now()
        if now == read.samples:  # equal samples in new objects
            read.take(now)
            return None
        name, change = self._data.name, read.change(now)
        if not now:
            raise ValueError(f"{name}.samples: none at this pass's start ({change}): a pass needs one sample at "
                             "least; add samples before iterating the loader, or skip the pass")
        geometry = self.keypoints is not None or self.boxes is not None
        if geometry and len(now) != len(read.samples):
            raise ValueError(f"{name}.samples changed ({change}), and keypoints= and boxes= are arrays aligned with "
                             f"the {len(read.samples):,} samples the loader was made on: make a new stoker.DataLoader "
                             "with the new samples and arrays aligned with them")
        if self._order is not None and (stale := self._order.stale()):
            raise ValueError(stale)
        if hasattr(read, "source_of"):  # MemorySamples, ConcatSamples
            source = read.source_of(now)
        else:
            source = reopen_folder(self._data, read.samples, now, self._worker_threads,
                                   self._loader_options["on_error"], relabel=None if geometry else self.source)
        if geometry:
            source = with_geometry(source, self.keypoints, self.boxes, self.box_format)
        return source, now

    def _follow_length(self):
        """At a pass's start, from its first batch: a Dataset object's len() now becomes the pass's
        size (the plan, the shards, a sampler's bounds, stats(), state_dict()), as torch's samplers
        read it at each pass. dataset_processes' processes hold a copy of the Dataset: where its len()
        changed since they took it, the pass starts new ones, their copy taking the script's changes
        (DatasetProcesses.follow), or, with persistent_workers=True (which keeps the copy, as torch's
        persistent workers do), the pass is refused in one line."""
        if self._data.follows is None:
            return
        name, samples, last = self._data.name, self._samples_now(), len(self.source)
        if samples == 0:
            raise ValueError(f"len({name}) is 0 at this pass's start (it had {last:,} before): a pass needs one "
                             "sample at least; add samples before iterating the loader, or skip the pass")
        held = self._processes_samples
        if self._processes is not None and samples != held:
            if self.persistent_workers:
                raise ValueError(
                    f"len({name}) is {samples:,} at this pass's start, and dataset_processes' processes hold the copy "
                    f"of {held:,} samples they started with (persistent_workers=True keeps it, as torch's persistent "
                    f"workers do, which then fail at index {held:,} or serve the old items); pass "
                    "persistent_workers=False, with which a pass whose len() changed starts processes with a new "
                    "copy, or dataset_processes=0")
            self._processes.renew()
            self._processes_samples = samples
        if samples != last:
            self.source.resize(samples)

    def _follow_ranks(self, first_pass=False):
        """The ranks of a loader made before torch.distributed was initialised, as LateRanks
        decides (_ranks.py): the group's once it is up, at the first len(), len(sampler),
        state_dict(), load_state_dict() or pass; the first pass settles them, making the engine
        loader again where they moved (_take_moved_ranks), and raises ValueError in one line on
        several ranks with no rank known."""
        moved = self._ranks.take(self.rank, self.world_size)
        if moved is not None:
            rank, world = moved
            self.__dict__.update(rank=rank, world_size=world)  # past __setattr__'s refusal: the same option
            self._loader_options.update(rank=rank, world_size=world)
            if not self.shuffle and world > 1 and rank == 0:
                _say_shard_note(world, len(self.source))
        if first_pass and self._ranks.settle(self.world_size):
            self._take_moved_ranks()

    def _take_moved_ranks(self):
        """The engine loader made again on the ranks _follow_ranks took, on the seed LateRanks
        says (shares_seed_zero)."""
        seed = self.seed
        if self._ranks.shares_seed_zero(self.shuffle, self.world_size):
            seed = 0
            self._reseeds.stand()  # a seed the ranks share stands
        self._replace_loader(seed)

    def set_epoch(self, epoch):
        """The epoch the next iter() yields (as DistributedSampler.set_epoch); without it each
        finished pass moves on to the next epoch by itself. After load_state_dict, the epoch of
        the state keeps its place (a resumed loop calls set_epoch(epoch) from the state's epoch
        on); another epoch starts at its first batch."""
        with self._one_call("set_epoch()"):
            epoch = arg.whole("epoch", epoch, 0)
            if epoch != self._epoch:
                self._resume_at = 0
            self._epoch = epoch
            if self._order is not None:
                self._order.set_epoch(epoch)

    def _check_process(self):
        if os.getpid() != self._pid:
            raise RuntimeError("this stoker.DataLoader was made in another process (before a fork); its worker "
                               "threads did not come along: make the DataLoader in the process that iterates it")

    def __iter__(self):
        """A pass over the current epoch. One consumer at a time: an iter() while another thread's
        pass is unfinished, or while a next() is in flight, raises RuntimeError at once. A new
        iter() on the same thread replaces the pass before it (that iterator then raises). The
        pass runs the chain its origin gives now (_follow_chain)."""
        self._check_process()
        with self._one_call("iter()"):
            live = self._live() if self._live is not None else None
            if live is not None and self._position is not None and live.thread != threading.get_ident():
                raise RuntimeError(f"this stoker.DataLoader is being iterated by another thread ({live.thread_name}) "
                                   "and a pass is not finished: one consumer at a time; give each thread a "
                                   "DataLoader of its own")
            if self._processes is not None:  # the pass before, if under way, is over: its items are not waited for
                self._processes.let_go()
            self._follow_ranks(first_pass=True)
            reseed = self._reseeds.take(self.generator, self._generator_state())
            if self._stream is not None:  # a pass from its start (load_state_dict resumes none mid-pass)
                self._follow_seed(reseed, self._epoch)
                self._follow_chain()
                self._generation += 1
                first = self._resume_at = 0
                self._draw_as_torch()
                self._processes.start_pass(None, self._read_ahead(), self._base_seed, self.source.kept_channels)
                self._stream.start(self._epoch, self._rng_epoch(self._epoch))
            else:
                # The script's sampler.set_epoch(e) picks the epoch of the augmentations too (a resume
                # by the sampler's epoch, as torchvision's references make, gets the uninterrupted batches).
                epoch, first = self._epoch, self._resume_at
                moved = self._order.moved_epoch(keep=False) if self._order is not None else None
                if moved is not None and moved != epoch:
                    epoch, first = moved, 0
                elif first >= self._pass_batches():
                    epoch, first = epoch + 1, 0
                ended = epoch == self._ended_epoch  # resumed, then set to the epoch the state was taken at the end of
                if first == 0 and not ended:  # a pass resumed within its epoch keeps the state's seed
                    self._follow_seed(reseed, epoch)
                # A pass resumed within its epoch keeps the size and samples it had; a chain or samples
                # that cannot run leave the loader as it was.
                self._follow_chain(samples=first == 0 and not ended)
                if self._order is not None:
                    self._order.moved_epoch()
                self._epoch, self._resume_at, self._ended_epoch = epoch, 0, None
                self._generation += 1
                if ended:
                    self._reseeds.seen = self._generator_state()
                    return self._passed_pass()
                if first == 0:
                    self._follow_length()
                    if self._all_rows is not None:  # the resumed pass is over: all the file's rows from here
                        self._cut_rows(None)
                if self._worker_threads is not None:  # get_worker_info().seed: the pass's, as torch's workers'
                    self._worker_threads.start_pass(self._rng_epoch(self._epoch), self.persistent_workers)
                # A pass resumed within its epoch draws nothing: the epoch's draws came when it started.
                draws = self._draw_as_torch if first == 0 else None
                if self._order is None:
                    if draws is not None:
                        draws()
                    order = sizes = None
                else:  # a batch sampler's sizes as it gives them; its largest batch sizes the buffers
                    order, sizes = self._order.order(len(self.source), draws)
                # dataset_processes' pass begins on the loader's own plan, before its workers read.
                on_order = self._start_processes if self._processes is not None else None
                self._loader.start_epoch(self._epoch, first, order, batch_sizes=sizes, on_order=on_order)
            self._reseeds.seen = self._generator_state()
            self._position = first
            self._diagnosis.set_monitor(current_monitor(), -1)  # the one running now, for monitor.report()
            self._diagnosis.start_epoch()
            if self._gil_hint is not None:
                self._gil_hint.start_pass()
            if self._feed is not None:
                self._feed.start()
            iterator = _Iterator(self, self._generation, self._epoch)
            self._live = weakref.ref(iterator)
            if self._processes is not None:  # the pass's iterator let go: the processes stop between items
                weakref.finalize(iterator, _pass_dropped, weakref.ref(self), self._processes,
                                 self._processes.generation).atexit = False
            return iterator

    def _in_pass(self):
        """Whether a pass is under way: its iterator is alive and has not ended."""
        return self._position is not None and self._live is not None and self._live() is not None

    def _chain_now(self):
        """The chain as its origin gives it now: transforms= (or loader.transforms) as given,
        objects read from their attributes again, else the ImageFolder's `transform` (which a
        script may replace), else what suits the data. A transform stoker does not read raises
        ValueError naming it."""
        given = self._transforms_given
        if given is not None and self._data.passthrough:
            raise ValueError(f"loader.transforms: this loader batches {self._data.name}'s arrays as they are, as "
                             "torch's DataLoader does, having been made without transforms=; make a new "
                             "stoker.DataLoader(..., transforms=...) for stoker to transform its uint8 images")
        if given is None and self._data.transforms_of is not None:
            own = self._data.transforms_of.transform
            try:
                return chain_keeping_modes(_chain(own, self.source), own, self._data)
            except Refused as e:  # set between passes: this loader's workers run no Python for it
                raise Refused(f"{e}; or make a new stoker.DataLoader, which calls {self._data.name}'s own "
                              "__getitem__ in Python for a transform stoker cannot read") from None
        return chain_keeping_modes(_chain(given, self.source), given, self._data)

    def _follow_chain(self, samples=False):
        """At a pass's start, what torch's worker processes see in the Dataset copy a pass makes:
        the ImageFolder's `target_transform` now, and the chain now; with `samples` (a pass from its
        first batch), a DatasetFolder's samples now too (_samples_changed). A chain that changed (a
        progressive resize, augmentation turned off for the last epochs), or samples, run from this
        pass on, in one loader made again with both (_replace_loader: the seed, epoch, sampler,
        shards and worker count kept). Raises ValueError in one line, the running chain and
        samples kept, where the new ones cannot run."""
        if self._data.transforms_of is not None:
            self._data.target_transform = self._data.transforms_of.target_transform
        chain, running_chain = self._chain_now(), self._loader_options["transforms"]
        if chain != running_chain and self._gpu_stage is not None:
            raise ValueError(f"transforms: the chain changed between passes to {chain!r}, and the GPU decoder "
                             "(decode='gpu' or 'auto') was made for the chain the loader was made with: make a "
                             "new stoker.DataLoader for the new chain, or use decode='cpu'")
        changed = self._samples_changed() if samples else None
        if chain == running_chain and changed is None:
            return
        running = self.source
        self._loader_options["transforms"] = chain
        if changed is not None:
            self.source = self._data.source = changed[0]
        try:
            self._replace_loader(self.seed)
        except ValueError:
            self._loader_options["transforms"] = running_chain
            self.source = self._data.source = running
            raise
        if changed is not None:
            self._data.samples_read.take(changed[1])

    def _follow_seed(self, seed, epoch):
        """A pass from its first batch over `epoch` that follows a reseed (_reseed.Reseeds.take's
        `seed`, not None) runs on that seed, its epoch the seed's first: the engine loader takes it
        between its epochs (Loader.reseed; its workers, buffers and decoded cache stay, and what
        they ran ahead with the old seed is made again). An iterable's engine epochs count from 0
        (its segments' room, _iterable.StreamPass): its passes give the engine their draws' epoch."""
        if not self._reseeds.follow(seed, epoch):
            return
        if seed != self.seed and self._worker_threads is not None:  # get_worker_info().seed: the new seed's
            self._worker_threads.set_base_seed(seed)
        self._loader.reseed(rank_seed(seed, self._stream_rank), epoch if self._stream is None else 0)
        self.seed = seed

    def _rng_epoch(self, epoch):
        """The epoch the random draws (order, augmentations, get_worker_info().seed) take for the
        loader's `epoch`: counted from the epoch the seed took over (0 until a reseed is followed),
        the engine loader's (Loader.draws_epoch), or an iterable's (its engine epochs count from 0)."""
        return self._loader.draws_epoch(epoch) if self._stream is None else self._reseeds.draws_epoch(epoch)

    def _generator_state(self):
        return torch.get_rng_state() if self.generator is None else self.generator.get_state()

    def _start_processes(self, unclaimed):
        """Starts dataset_processes' pass over `unclaimed`: the C++ loader's order of the pass (the
        script's sampler's, else stoker's plan, drop_last applied) from the first sample its
        workers have yet to read (a resumed pass: from its batch), called by start_epoch before
        they read it. The first pass's base seed seeds the processes (the loader's seed where
        the first pass resumed)."""
        base_seed = self._base_seed if self._base_seed is not None else self.seed
        self._processes.start_pass(unclaimed, self._read_ahead(), base_seed, self.source.kept_channels)

    def _read_ahead(self):
        """How far (in samples) the workers may read ahead of the consumer: their buffers
        (num_workers="auto" may start workers up to the cores during the pass), and a batch being taken."""
        workers = max(self._loader.workers, self._cores["cores"]) if self.auto_workers else self._loader.workers
        return (_stoker.buffers_in_flight(self.prefetch_factor, workers) + 2) * self._loader.batch_capacity

    _base_seed = None  # the base seed the last pass drew

    def _draw_as_torch(self):
        """What torch's DataLoader draws from the generator when a pass starts (_generator.py): the
        workers' base seed, then, for shuffle=True, its RandomSampler's draws (the order stays
        stoker's own). A script's sampler draws its own after this, when GivenOrder iterates it."""
        if not (self.persistent_workers and self._drew_base_seed):
            self._base_seed = draw_seed(self.generator)
            self._drew_base_seed = True
        if self.shuffle and self._order is None:
            draw_random_sampler(len(self.source), self.generator)

    def _passed_pass(self):
        """The pass of an epoch a loaded state was taken at the end of: nothing of it is left, so it
        yields no batch, and the next pass is the next epoch's (a loop that resumes from the epoch
        its checkpoint was saved in, at that epoch's last batch, goes on as the run it resumes)."""
        self._epoch += 1
        self._position = None
        iterator = _Iterator(self, self._generation, self._epoch - 1)
        self._live = weakref.ref(iterator)
        return iterator

    @contextlib.contextmanager
    def _one_call(self, what):
        """Holds the loader for one consumer call; a call from another thread meanwhile raises. At
        exit, a thread other than the main one that enters or leaves such a call waits there for
        ever (_exit.consumer_call)."""
        with _exit.consumer_call():
            if not self._in_call.acquire(blocking=False):
                raise RuntimeError(f"{what} of a stoker.DataLoader while another thread is inside its next(): one "
                                   "consumer at a time; give each thread a DataLoader of its own")
            try:
                yield
            finally:
                self._in_call.release()

    def _next(self, generation):
        self._check_process()
        with self._one_call("next()"):
            return self._next_held(generation)

    def _next_held(self, generation):
        if generation != self._generation:
            raise RuntimeError("this iterator is stale: a later iter() of the same stoker.DataLoader replaced it "
                               "(one pass at a time per DataLoader)")
        if self._position is None:
            raise StopIteration
        started = time.perf_counter()
        if self._step_end is not None:
            self._step_lines(started)
            loader_step(self)
        try:
            if self._feed is not None:
                item = self._feed.next()
            else:
                batch = (self._stream if self._stream is not None else self._loader).next(self.timeout)
                item = None if batch is None else (torch.utils.dlpack.from_dlpack(batch.inputs), self._targets(batch),
                                                   self._params(batch))
        except ValueError as e:  # the C++ loader's words, in this class's argument names
            if "(prefetch)" not in str(e):
                raise  # a collate_fn's or target_transform's error keeps its cause
            raise ValueError(str(e).replace("(prefetch)", "(prefetch_factor)")) from None
        now = time.perf_counter()
        if item is None:
            self._epoch += 1
            self._position = None
            self._step_end = None
            raise StopIteration
        self._position += 1
        if self._stream is not None:
            self._stream.check_length()
        self._step_wait, self._step_end, self._step_samples = now - started, now, item[0].shape[0]
        if self._gil_hint is not None:
            self._gil_hint.step(now - started, now)
        if not self._bad_told:
            self._warn_first_bad()
        return self._shaped(item)

    def _warn_first_bad(self):
        """One UserWarning line at the first bad sample the loader substituted, where torch's
        DataLoader would raise: a Dataset's bug or a missing file is not hidden until stats() is
        read. Once per loader; the rest are in stats()["bad_samples"]."""
        bad = self._epoch_stats()["bad_samples"]
        if not bad:
            return
        self._bad_told = True
        _, name, why = bad[0]
        warnings.warn(f"stoker.DataLoader: a bad sample was replaced by another, where torch's DataLoader raises: "
                      f"{name}: {why}. {BAD_SAMPLES_TO_DO}; more than max_bad of an epoch stops it (told once)",
                      UserWarning, stacklevel=5)

    def _epoch_stats(self):
        """The engine's figures of the pass so far (epoch_stats), a stream's bad samples over all
        its segments."""
        epoch = self._loader.epoch_stats()
        if self._stream is not None:
            epoch["bad"], epoch["bad_samples"] = self._stream.bad_of_pass(epoch)
        return epoch

    def _targets(self, batch):
        """The batch's targets on the host: the engine's class ids or float targets as a tensor
        (through target_transform when the dataset has one), or a Dataset's own, collated. The
        engine's are copied out of the batch's buffer (N values): a loop that keeps every batch's
        labels for its epoch's metrics, as loops over torch's DataLoader do, holds no buffer."""
        if self._data.extra_columns:
            return self._list_parts(batch)
        transform = self._data.target_transform
        if self._data.passthrough:  # (images, targets): _shaped takes the images as the inputs
            passed = batch.items
            chunk = whole_chunk(passed, batch.indices)  # dataset_processes' chunk, whole: its block and labels
            if chunk is not None and transform is None and self.collate_fn is None and not self._unbatched:
                images = batch.finished if batch.finished is not None else chunk.images
                return self._pinned_images(images), torch.from_numpy(chunk.targets)
            resolved = items_of(passed, batch.indices)
            # a batch with some samples of a Chunk (not the whole of it, in order) is collated here
            finished = batch.finished if chunk is not None or resolved is passed else None
            passed = resolved
            values = [p[1] for p in passed]
            if transform is not None:
                values = [transform(v) for v in values]
            if self.collate_fn is not None or self._unbatched:  # (None, the batch): the whole items, as torch's
                return None, self._collated_whole(passed, values)
            images = finished  # stacked (and pinned) on the worker that wrote the batch's last item
            if images is None or images.shape[0] != len(passed):  # images that differ; a stream's last batch
                images = collate_images([p[0] for p in passed], [p[2] for p in passed], self._data.name)
            images = self._pinned_images(images)
            layout = self._data.dict_items
            return images, collate_targets(values, self.collate_fn, layout.image_key if layout is not None else None,
                                           self._collate_whole())
        if self._data.targets == "items":
            values = batch.items
            if batch.geometry is not None:
                values = [restore(v, *moved, frames=self.frames_per_clip) for v, moved in zip(values, batch.geometry)]
        else:
            targets = torch.utils.dlpack.from_dlpack(batch.targets).clone()
            if transform is None and self.collate_fn is None:
                return targets
            values = targets.tolist()
        if transform is not None:
            values = [transform(v) for v in values]
        layout = self._data.dict_items
        return collate_targets(values, self.collate_fn, layout.image_key if layout is not None else None,
                               self._collate_whole())

    def _pinned_images(self, images):
        """A passed-through batch's images, pinned where pin_memory on the CPU device (the workers'
        are pinned already: returned as they are)."""
        return images.pin_memory() if self.pin_memory and self.device.type == "cpu" else images

    _whole_fn = None  # the collate_fn that took a batch's whole samples after failing on its targets

    def _collate_seed(self):
        """The seed of torch's, Python's and NumPy's generators while collate_fn makes the batch just
        taken from its whole samples (mixup's weights, RandomChoice's pick): the loader's seed, the
        epoch's draws and the batch's place, so that every run, and a resumed pass, draws the same;
        torch's DataLoader draws them in its workers, from their own seeds."""
        mixed = (int(self.seed or 0) * 1_000_003 + self._rng_epoch(self._epoch)) * 1_000_003 + self._position
        return mixed % (2**63)

    def _collate_whole(self):
        """Whether collate_fn takes whole (image, target) samples, as torch's DataLoader gives them:
        True once it failed on a batch's targets and took its samples, False while that is still to
        be seen, None where stoker gives it the targets alone (dict and namedtuple items, items of
        an image alone, a CSV list's columns)."""
        if self._data.dict_items is not None or self._data.named is not None or self._data.item_width < 2:
            return None
        return self._whole_fn is self.collate_fn

    def _collated_whole(self, passed, values):
        """collate_fn on a passed-through batch's whole items, each with its image as the Dataset
        made it and its targets `values` (through target_transform); with batch_size=None, the
        batch's one item through collate_fn, or default_convert (numpy arrays made tensors), as
        torch's DataLoader gives it. Pinned as torch's DataLoader pins what its collate_fn returns."""
        items = whole_items([p[0] for p in passed], values, self._data.item_width, self._data.named,
                            self._data.dict_items)
        if not self._unbatched:
            batch = call_on_items(self.collate_fn, items, self._collate_seed())
        elif self.collate_fn is not None:
            batch = call_on_items(lambda one: self.collate_fn(one[0]), items, self._collate_seed())
        else:
            batch = torch.utils.data.default_convert(items[0])
        return self._pinned(batch)

    def _pinned(self, batch):
        """What collate_fn made of whole items or samples, pinned where pin_memory on the CPU
        device, as torch's DataLoader pins what its collate_fn returns."""
        if self.pin_memory and self.device.type == "cpu":
            return torch.utils.data._utils.pin_memory.pin_memory(batch)
        return batch

    def _list_parts(self, batch):
        """A CSV list's (or shards') targets, if it has them, and its other columns, in order: text as
        a tuple of str (as torch's default_collate batches a Dataset's (image, caption) items),
        integers as an int64 tensor, numbers as a float32 one. collate_fn gets a tuple per sample
        (the value alone when there is one part), as for a Dataset's items."""
        parts = [torch.utils.dlpack.from_dlpack(batch.targets).clone()] if self._data.has_targets else []
        parts += [tuple(column) if isinstance(column, list) else torch.from_numpy(column)
                  for k, column in enumerate(batch.columns) if k not in self._data.geometry_columns]
        if self.collate_fn is not None:
            values = [part.tolist() if isinstance(part, torch.Tensor) else part for part in parts]
            samples = list(zip(*values))
            return call_collate_fn(self.collate_fn, [sample[0] for sample in samples] if len(parts) == 1 else samples)
        return parts[0] if len(parts) == 1 else tuple(parts)

    def _params(self, batch):
        """What follows the targets in the batch: the keypoints and boxes given as arrays, moved,
        then return_params' dict; None when there is none of them."""
        extras = []
        if batch.geometry is not None and self._data.targets != "items":
            extras += aligned_outputs(batch.geometry, self.keypoints, self.boxes, self.box_format, self.frames_per_clip)
        if self.return_params:
            params = sample_params(batch.params)
            if self._stream is not None:  # the items' numbers in the pass, not in the engine's segment
                params["index"], params["path"] = self._stream.numbered(params["index"])
            extras.append(params)
        return extras or None

    def _shaped(self, item):
        """(inputs, targets), or (inputs, t1, t2, ...) for items (image, t1, t2, ...) and for a
        CSV list's targets and other columns, or the inputs alone for items that are an image
        alone, a dict for dict items, a namedtuple for namedtuple items: what torch's DataLoader
        yields (a list for a Dataset object's, as default_collate makes it; a path's a tuple);
        with return_params, the samples' parameters after them, in a tuple."""
        inputs, targets, params = item
        if self._data.passthrough:  # the engine's inputs are a 0.0 per sample: the images came with the targets
            inputs, targets = targets
            if inputs is None:  # what collate_fn made of the whole items (_collated_whole)
                return (targets, *params) if params is not None else targets
            if self.channels_last and inputs.dim() == 4:
                inputs = inputs.contiguous(memory_format=torch.channels_last)
        elif len(self._feature_shape) > 1:
            inputs = inputs.view(inputs.shape[0], *self._feature_shape)
        elif self._data.bool_images and inputs.dtype == torch.uint8:  # mode 1's 0 or 255, as PILToTensor's bool
            inputs = _as_bool(inputs)
        width = self._data.item_width
        if isinstance(targets, WholeSamples):  # what collate_fn returns from the whole samples is the batch
            batch = self._pinned(whole_samples(self.collate_fn, inputs, targets, width, self._collate_seed()))
            self._whole_fn = self.collate_fn
            return (batch, *params) if params is not None else batch
        if self._data.dict_items is not None:
            batch = self._data.dict_items.batch(inputs, targets, self.collate_fn is not None)
            parts = batch if type(batch) is tuple else (batch,)  # (inputs, what collate_fn returned)
        elif width == 1 and self.collate_fn is None:
            parts = (inputs,)
        elif width > 2 and self.collate_fn is None:
            parts = (inputs, *targets)
        else:
            parts = (inputs, targets)
        if self._data.named is not None and self.collate_fn is None:
            parts = (self._data.named(*parts),)
        if params is not None:
            return (*parts, *params)
        if len(parts) == 1:
            return parts[0]
        # (inputs, what collate_fn returned) is stoker's own: a tuple.
        return self._batch_type(parts) if self.collate_fn is None and self._data.dict_items is None else parts

    _step_end = None

    def _step_lines(self, next_called):
        """The diagnosis of the step that ended when next() was called again: its wait for this
        loader, and the rest of it (the model's work). Keeps what --workers auto changed."""
        for line in self._diagnosis.after_step(self._step_wait, 0.0, next_called - self._step_end,
                                               self._step_samples):
            if line.startswith("autotune:"):
                self._autotune.append(line)

    def stats(self):
        """The current epoch's bad samples (index, path, reason) and clips shorter than the frames
        they should span ("short_clips": their last frame was repeated), the workers' time per stage,
        what num_workers='auto' changed, the cores the loader counts as this rank's ("cores": the
        count, the CPUs this process may run on, the ranks sharing this machine, whether a launcher
        pinned it: _process.core_share), and where JPEGs were decoded ("decode": the decoder in
        use, and with decode on the GPU the samples the workers left to it since the loader was
        made, those nvJPEG decoded and those it gave back to the CPU; with decode='auto' also
        "gpu_share", the share of the JPEGs nvJPEG's engine takes that the workers leave to it now), and
        how a Dataset object's calls on the worker threads went ("gil": the latest window's figures and
        the hint given, _gil_hint.py; None where the workers call no Python or before a window ends)."""
        epoch = self._epoch_stats()
        stages = self._loader.stage_times()
        busy = stages["read"] + stages["decode"] + stages["transform"]
        shares = {k: (stages[k] / busy if busy > 0 else 0.0) for k in ("read", "decode", "transform")}
        return {
            "epoch": epoch["epoch"] if self._stream is None else self._epoch,
            "samples": epoch["samples"] if self._stream is None else self._processes.items,
            "bad": epoch["bad"],
            "bad_samples": [{"index": i, "path": name, "reason": why} for i, name, why in epoch["bad_samples"]],
            "short_clips": epoch["short_clips"],
            "stage_seconds": stages,
            "stage_shares": shares,
            "workers": self.num_workers,
            "cores": dict(self._cores),
            "autotune": list(self._autotune),
            "decode": self._decode_stats(stages),
            "gil": None if self._gil_hint is None else self._gil_hint.stats(),
        }

    def _decode_stats(self, stages):
        stage = self._gpu_stage
        if stage is None:
            return {"decoder": "cpu"}
        out = {"decoder": stage.decoder.description, "left_to_gpu": stages["gpu_samples"],
               "decoded_on_gpu": stage.decoded, "made_on_cpu_after_nvjpeg": stage.fallbacks}
        if stage.gpu_share is not None:  # decode='auto': the share of the engine's JPEGs left to the GPU now
            out["gpu_share"] = stage.gpu_share
        return out

    def state_dict(self):
        """Where the stream stands: the next batch a resumed loader yields. Taken after an
        epoch's last batch, it points at the next epoch's first."""
        self._follow_ranks()
        live = self._position is not None
        position = self._position if live else self._resume_at
        epoch = self._epoch
        # A pass in progress keeps the size it started with, whatever len(dataset) says now.
        if self._stream is None and position >= (len(self._loader) if live else self._pass_batches()):
            epoch, position = epoch + 1, 0
        state = {
            "stoker_data_loader": STATE_VERSION, "seed": self.seed, "seed_epoch": self._reseeds.seed_epoch,
            "reseeded": self._reseeds.pass_reseeded, "epoch": epoch, "next_batch": position,
            "samples": len(self.source), "classes": list(self.source.class_names),
            "batch_size": self._state_batch_size, "world_size": self.world_size, "shuffle": self.shuffle, "drop_last": self.drop_last,
        }
        if position > 0 and self._data.samples_read is not None:  # the rest of a pass serves the samples it began with
            state["samples_digest"] = self._data.samples_read.digest()
        if position > 0 and self._order is not None and (draws := self._order.pass_draws()) is not None:
            state["sampler_draws"] = draws  # the rest of the pass is drawn again from them
        return state

    def load_state_dict(self, state):
        """Resumes at `state` from the next iter(). Checks every field (its presence, type and
        range) before changing anything, and refuses, in one ValueError line naming the field, a
        state taken on other data, with another batch size, world size, shuffle or drop_last."""
        if self._stream is not None:
            self.set_epoch(load_state(state, self._data.name))
            note_resumed(self)
            return
        self._follow_ranks()
        checked = check_state(state, self)
        draws = None
        if self._order is not None and checked["next_batch"] > 0 and "sampler_draws" in state:
            draws = self._order.check_draws(state["sampler_draws"])
        with self._one_call("load_state_dict()"):
            if self._order is not None:
                self._order.resume_draws(draws)
            self._ranks.state_loaded = True
            # The order depends on the seed, so the resumed loader takes the saved one, counted from
            # the state's seed_epoch (Loader.reseed); a reseed after this is followed from the next pass
            # from an epoch's first batch on (_reseed.Reseeds.take).
            self._reseeds.load(checked["seed_epoch"], checked["reseeded"], checked["next_batch"],
                               self._generator_state())
            engine_seed = rank_seed(checked["seed"], self._stream_rank)
            if (engine_seed, checked["seed_epoch"]) != (self._loader.seed, self._loader.seed_epoch):
                if self._processes is not None:  # the engine loader waits for no item of a run ahead it drops
                    self._processes.let_go()
                if self._worker_threads is not None:
                    self._worker_threads.set_base_seed(checked["seed"])
                self._loader.reseed(engine_seed, checked["seed_epoch"])
                self.seed = checked["seed"]
            self._epoch = checked["epoch"]
            self._resume_at = checked["next_batch"]
            # The run the state was taken in drew the workers' base seed when its first pass started: with
            # persistent_workers, torch's DataLoader draws it then alone, so the passes here draw it no more.
            self._drew_base_seed = self._drew_base_seed or checked["epoch"] > 0 or checked["next_batch"] > 0
            if self._data.follows is not None and checked["next_batch"] > 0:  # the rest of a pass: its size
                self.source.resize(checked["samples"])
            # Taken at an epoch's end, the state points at the next epoch's first batch: the epoch it
            # ended is done, even for a loop that sets it again (set_epoch, the sampler's set_epoch).
            at_end = checked["next_batch"] == 0 and checked["epoch"] > 0
            self._ended_epoch = checked["epoch"] - 1 if at_end else None
            if self._order is not None:  # the sampler's order is the epoch's
                self._order.set_epoch(self._epoch)
            if self._rows_appended():  # the rest of a pass over the rows it began with (rows appended since)
                self._cut_rows(checked["samples"] if checked["next_batch"] > 0 else None)
            self._position = None
            self._generation += 1
        note_resumed(self)

    def _steps_before(self, epoch=None):
        """The steps of the run before the batch this loader yields next: `epoch` (its own by
        default) whole epochs of len(self), then its epoch's batches before the one it is at or
        resumes at. The one place a resumed run's TensorBoard step is said: stoker.watch's
        step_time/* and stoker.monitor's samples go on from it. An iterable-style Dataset without
        len(): its passes' lengths are not known, so only its epoch's batches count."""
        try:
            batches = len(self)
        except TypeError:
            batches = 0
        epoch = self._epoch if epoch is None else epoch
        return epoch * batches + ((self._position if self._position is not None else self._resume_at) or 0)

    def _make_loader(self, seed):
        if self._worker_threads is not None:  # before the loader starts its threads
            self._worker_threads.set_base_seed(seed)
        try:
            loader = _stoker.Loader(self.source, seed=rank_seed(seed, self._stream_rank), **self._loader_options)
        except ValueError as e:
            chain = self._loader_options["transforms"]
            raise ValueError(f"transforms={chain!r}: {e}" if "transform" in str(e).lower() else str(e)) from None
        if self._reseeds.seed_epoch != 0 and self._stream is None:  # a loader made again: the seed's epochs
            loader.reseed(rank_seed(seed, self._stream_rank), self._reseeds.seed_epoch)
        return loader

    def _replace_loader(self, seed):
        """The engine loader made again from the current options on `seed`, its draws counted from
        the seed's epoch (a chain changed between passes, ranks that moved), in place of the
        running one, between passes: the workers num_workers="auto" chose carry over (the epoch,
        sampler, sharding and resume point are this object's); an iterable's passes, the CUDA
        feed, the GPU decoder's stage and the diagnosis (in its place among the loops reported
        on) take the new one. Raises ValueError, the running one kept, where it cannot be made."""
        workers = self._loader.workers
        self._loader = self._make_loader(seed)
        self._loader.workers = workers
        self.seed = seed
        if self._stream is not None:
            self._stream.loader = self._loader
        if self._feed is not None:
            self._feed.use(self._stream if self._stream is not None else self._loader)
        if self._gpu_stage is not None:
            self._gpu_stage.loader = self._loader
        self._diagnosis = self._new_diagnosis(auto_workers=self.auto_workers)
        self._session_entry.diagnosis = self._diagnosis

    def _new_diagnosis(self, gpu_index=-1, auto_workers=False):
        """A step-time diagnosis reading this loader's stage clocks; its recommendations name the
        data's folder where there is one, and the decoded cache only where this data can take it."""
        diagnosis = _stoker.Diagnosis(self._loader, current_monitor(), self._cores["cores"], gpu_index, auto_workers,
                                      self.prefetch_factor, self._data.folder)
        diagnosis.set_decoded_cache_possible(not self._cache_refusal)
        diagnosis.set_reads_in_python(self._data.targets == "items", self.dataset_processes, self._stream is not None)
        return diagnosis

    def __copy__(self):
        raise TypeError("a stoker.DataLoader cannot be copied: the copy would share its workers and its stream "
                        "of batches; make another stoker.DataLoader with the same arguments (with the same seed it "
                        "gives the same batches)")

    def __deepcopy__(self, memo):
        self.__copy__()

    def __reduce_ex__(self, protocol):
        raise TypeError("a stoker.DataLoader cannot be pickled (its worker threads and buffers stay in this "
                        "process); make the DataLoader in the process that iterates it")

    def __repr__(self):
        try:
            data = f"{self._data.name} (iterable-style)" if self._stream is not None else self.source.describe()
        except AttributeError:  # its __init__ raised (a traceback or a debugger shows it)
            return "stoker.DataLoader(<not made: its construction raised>)"
        return (f"stoker.DataLoader({data}, batch_size={self.batch_size}, "
                f"num_workers={self.num_workers}, transforms={self.transforms!r})")


def _pass_dropped(loader_ref, processes, generation):
    """A pass's iterator let go: the pass is over for dataset_processes' processes (let_go). One
    let go before its end (a break, an exception in the loop) ends them too unless
    persistent_workers=True, as torch's DataLoader's workers end with their iterator; the next
    pass starts new ones. A pass run to its end keeps them for the next (the guide's "Worker
    processes"); the loader collected closes them itself."""
    loader = loader_ref()
    mid_pass = loader is not None and loader._position is not None and not loader.persistent_workers
    processes.let_go(generation, end=mid_pass)


# The options a DataLoader takes when it is made, refused as attributes later (__setattr__);
# collate_fn and generator are read at each batch and pass, and may be set.
_TAKEN_WHEN_MADE = frozenset((
    "batch_size", "drop_last", "dataset", "sampler", "batch_sampler", "shuffle", "num_workers", "pin_memory",
    "pin_memory_device", "prefetch_factor", "worker_init_fn", "persistent_workers", "multiprocessing_context",
    "timeout", "in_order", "dataset_processes", "device", "channels_last", "decode", "rank", "world_size",
    "frames_per_clip", "frame_step", "clip_start", "keypoints", "boxes", "box_format", "return_params"))


class _Iterator:
    def __init__(self, loader, generation, epoch):
        self._loader = loader
        self._generation = generation
        self.epoch = epoch  # the pass's (stoker.watch heads its report with it)
        self.thread = threading.get_ident()
        self.thread_name = threading.current_thread().name

    def __iter__(self):
        return self

    def __next__(self):
        return self._loader._next(self._generation)

    def __len__(self):
        return len(self._loader)
