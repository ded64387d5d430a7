"""stoker.DataLoader's state_dict: its fields, and the checks load_state_dict makes of a
state before it changes anything (each failure one ValueError line naming the field)."""
import os
import re
import sys
import time

from ._datasets import DIGEST_KIND

STATE_VERSION = 1
_MAX_EPOCH = 2**62  # far beyond any run; the engine's epoch counter is int64


def _field(state, key, allowed):
    if key not in state:
        raise ValueError(f"load_state_dict: the state has no {key!r} ({allowed}); pass a dict that "
                         "loader.state_dict() returned, whole")
    return state[key]


def _whole(state, key, low, high, allowed):
    value = _field(state, key, allowed)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"load_state_dict: {key}={value!r}; expected {allowed}; pass a dict that "
                         "loader.state_dict() returned, unchanged")
    return value


def _flag(state, key):
    value = _field(state, key, "True or False")
    if not isinstance(value, bool):
        raise ValueError(f"load_state_dict: {key}={value!r}; expected True or False; pass a dict that "
                         "loader.state_dict() returned, unchanged")
    return value


def check_state(state, loader):
    """The fields of `state` that a resume of `loader` uses, once every field is checked."""
    if not isinstance(state, dict) or state.get("stoker_data_loader") != STATE_VERSION:
        raise ValueError("load_state_dict: not a stoker.DataLoader state_dict (take it with "
                         "loader.state_dict() of this version)")
    # A Dataset object's passes each take its len() at their start, a DatasetFolder's its samples: a
    # state's next batch counts the batches of its own pass's size.
    following = loader._sized_each_pass()
    appended = loader._rows_appended()  # an .h5 file, whose pass may resume on the rows it began with
    samples = _whole(state, "samples", 0, 2**63 - 1, "the number of samples, a whole number")
    batches = loader._batches_of(samples) if (following or appended) and loader._order is None else len(loader)
    checked = {
        "seed": _whole(state, "seed", 0, 2**64 - 1, "a whole number from 0 to 2**64 - 1"),
        "epoch": _whole(state, "epoch", 0, _MAX_EPOCH, "a whole number from 0 up"),
        # The epoch a reseed the loader followed took over at; states before it hold none (0).
        "seed_epoch": _whole(state, "seed_epoch", 0, _MAX_EPOCH, "a whole number from 0 up")
        if "seed_epoch" in state else 0,
        # Whether the state's last pass began on a freshly seeded generator; states before it hold none.
        "reseeded": _flag(state, "reseeded") if "reseeded" in state else False,
        "next_batch": _whole(state, "next_batch", 0, batches, f"a whole number from 0 to {batches}, the batches "
                             "of an epoch"),
        "samples": samples,
        # None: a batch sampler's own sizes (one without a batch_size attribute).
        "batch_size": None if "batch_size" in state and state["batch_size"] is None else
        _whole(state, "batch_size", 1, 2**31, "a whole number from 1 up"),
        "world_size": _whole(state, "world_size", 1, 2**31, "a whole number from 1 up"),
        "shuffle": _flag(state, "shuffle"),
        "drop_last": _flag(state, "drop_last"),
    }
    classes = _field(state, "classes", "a list of class names")
    if not isinstance(classes, (list, tuple)) or not all(isinstance(c, str) for c in classes):
        raise ValueError(f"load_state_dict: classes is a {type(classes).__name__}; expected a list of class names; "
                         "pass a dict that loader.state_dict() returned, unchanged")
    checked["classes"] = list(classes)
    _check_samples_read(state, checked, loader)
    if loader._data.follows is not None:
        # From an epoch's end (next_batch 0) the next pass reads len() anew; the rest of a pass keeps its size,
        # on a Dataset that grew since too (rows appended to its file) where the plan is stoker's own: a
        # script's sampler draws over the len() it has now.
        now = loader._samples_now()
        grown = now > samples and loader._order is None
        if checked["next_batch"] > 0 and samples != now and not grown:
            raise ValueError(f"load_state_dict: the state was taken at batch {checked['next_batch']} of epoch "
                             f"{checked['epoch']}, in a pass over {samples:,} samples, and len({loader._data.name}) "
                             f"is {now:,} now: the rest of that pass is planned over {samples:,}"
                             f"{_sampler_note(now > samples)}; resume with the Dataset as it was when that pass "
                             "began, or from a state taken at an epoch's end")
    if appended:
        _check_rows(checked, loader)
    mine = [("samples", samples if following or appended else len(loader.source),
             "data with another number of samples"),
            ("classes", list(loader.source.class_names), "data with other classes"),
            ("batch_size", loader._state_batch_size, "another batch_size"),
            ("world_size", loader.world_size, "another world_size"),
            ("shuffle", loader.shuffle, "another shuffle"),
            ("drop_last", loader.drop_last, "another drop_last")]
    for key, here, what in mine:
        if key == "world_size" and checked[key] != here:
            _check_ranks(checked, here)
        elif checked[key] != here:
            shown = checked[key] if key != "classes" else f"{len(checked[key])} classes"
            here = here if key != "classes" else f"{len(here)} classes"
            raise ValueError(f"load_state_dict: the state was taken with {key}={shown!r} and this loader has "
                             f"{here!r}: a resume on {what} would not continue the same stream; resume with "
                             "the same data and settings, or start afresh")
    return checked


def _check_rows(checked, loader):
    """An .h5 file's state: from an epoch's end the next pass reads every row; within a pass, the rest
    reads the rows it began with, where rows were appended since and the plan is stoker's own."""
    samples, path = checked["samples"], os.fsdecode(loader._data.dataset.root)
    now = len(loader._all_rows if loader._all_rows is not None else loader.source)
    if checked["next_batch"] == 0 or samples == now or (samples < now and loader._order is None):
        return
    where = f"at batch {checked['next_batch']} of epoch {checked['epoch']}, in a pass over {samples:,} rows"
    if samples > now:
        raise ValueError(f"load_state_dict: the state was taken {where}, and {path} holds {now:,} now: the rest of "
                         f"that pass reads rows it no longer has; resume with the file as it was, or from a state "
                         "taken at an epoch's end")
    raise ValueError(f"load_state_dict: the state was taken {where}, and {path} holds {now:,} now"
                     f"{_sampler_note(True)}; resume with the file as it was, or from a state taken at an epoch's end")


def _sampler_note(grown):
    """Why a Dataset that grew since a mid-pass state is refused under a script's sampler."""
    return ", and the script's sampler draws over the len() it has now (the rows added since included)" if grown else ""


def _check_ranks(checked, here):
    """A state taken on another number of ranks (torchrun's elastic restart with more or fewer)
    resumes at an epoch's start, the epoch sharded over the ranks there are now, as
    DistributedSampler shards it; the rest of an epoch it was taken within is planned over its own
    ranks' shards, and another number is refused in one line."""
    if checked["next_batch"] > 0:
        raise ValueError(f"load_state_dict: the state was taken at batch {checked['next_batch']} of epoch "
                         f"{checked['epoch']} with world_size={checked['world_size']} and this loader has "
                         f"world_size={here}: the rest of that epoch is sharded over {checked['world_size']} ranks; "
                         f"resume on {checked['world_size']} ranks, or from a state taken at an epoch's end "
                         "(next_batch 0), which resumes on any number of ranks")


def _check_samples_read(state, checked, loader):
    """A state taken within a pass over a DatasetFolder's samples (its "samples_digest") resumes
    only on the samples that pass began with, which the loader holds (FolderSamples); from an
    epoch's end the next pass reads them anew. A digest of 40 hex digits, the SHA-1 that states
    written before DIGEST_KIND hold, is checked as they were made (seconds for 1.28M samples,
    a line on stderr each second or two meanwhile)."""
    read = loader._data.samples_read
    if read is None or checked["next_batch"] == 0:
        return
    digest = state.get("samples_digest")
    new = isinstance(digest, str) and re.fullmatch(f"{DIGEST_KIND}:[0-9a-f]{{32}}", digest) is not None
    sha1 = isinstance(digest, str) and re.fullmatch("[0-9a-f]{40}", digest) is not None
    if digest is not None and not new and not sha1:
        raise ValueError(f"load_state_dict: samples_digest={digest!r}; expected '{DIGEST_KIND}:' and 32 hex digits "
                         "(or the 40 of an earlier stoker's state); pass a dict that loader.state_dict() returned, "
                         "unchanged")
    held = len(loader.source)
    if checked["samples"] == held:
        if digest is None or digest == (read.digest() if new else read.sha1_digest(_Progress(loader._data.name, held))):
            return
    other = f"{held:,} now" if checked["samples"] != held else "as many, relabelled or others, now"
    raise ValueError(f"load_state_dict: the state was taken at batch {checked['next_batch']} of epoch "
                     f"{checked['epoch']}, in a pass over {checked['samples']:,} samples of {loader._data.name}, and "
                     f"the loader holds other samples ({other}): the rest of that pass serves the samples it began "
                     f"with; resume with {loader._data.name}'s samples (an ImageFolder's `samples`, an in-memory "
                     "dataset's `data` and class ids) as they were when that pass began, or from a state taken at an "
                     "epoch's end")


class _Progress:
    """A line on stderr a second into the check of an earlier stoker's samples_digest, then every two."""

    def __init__(self, name, total):
        self.name, self.total, self.start, self.due = name, total, time.monotonic(), 1.0

    def __call__(self, done):
        now = time.monotonic() - self.start
        if now >= self.due and done < self.total:
            self.due = now + 2.0
            print(f"stoker: load_state_dict: checking the state's samples_digest (a SHA-1, as stoker wrote it before "
                  f"{DIGEST_KIND!r}) against {self.name}'s samples: {done:,} of {self.total:,}", file=sys.stderr,
                  flush=True)
