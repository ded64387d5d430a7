"""This process among the others of a run: the cores it counts as its own, and its rank."""
import os
import sys

from . import _stoker


def _one_machine():
    """Whether the run's ranks all run on this machine as far as its rendezvous says: MASTER_ADDR
    unset or a loopback address (torch.multiprocessing.spawn scripts' "localhost")."""
    address = os.environ.get("MASTER_ADDR", "").strip().lower()
    return address in ("", "localhost", "::1") or address.startswith("127.")


def local_ranks():
    """How many ranks of this run share this machine, and so its cores: LOCAL_WORLD_SIZE where a
    launcher sets it (torchrun, stoker train --nproc-per-node), else the run's world size
    (rank_and_world), as stoker train reads it, where the run is on one machine (_one_machine:
    ranks that torch.multiprocessing.spawn started), else 1: with a rendezvous on another machine
    (Slurm's srun, mpirun) the ranks here cannot be counted, and dividing by the whole run would
    starve them. ValueError (one line) for a LOCAL_WORLD_SIZE that is no whole number >= 1."""
    text = os.environ.get("LOCAL_WORLD_SIZE", "").strip()
    if not text:
        return rank_and_world()[1] if _one_machine() else 1
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"environment variable LOCAL_WORLD_SIZE={text!r}: not a whole number >= 1; it is how many "
                         "ranks of the run share this machine (torchrun sets it): set it to that count, or unset it "
                         "where all the ranks run on this machine")
    return count


def core_share():
    """The cores this process counts as its own, and what they are a share of: {"cores": the count,
    "usable": the CPUs it may run on (its affinity), "local_ranks": local_ranks(), "pinned": whether
    a launcher pinned it to fewer CPUs than its parent's (numactl, taskset, Slurm's --cpu-bind,
    sched_setaffinity)}. By stoker train's rule (stoker/core/process.h, rank_cores): a pinned
    rank's usable CPUs as they are, else an equal share of them among the local ranks."""
    ranks = local_ranks()
    return {"cores": _stoker.rank_cores(ranks), "usable": _stoker.usable_cores(), "local_ranks": ranks,
            "pinned": _stoker.pinned_by_launcher()}


def cores():
    """The cores this process counts as its own (core_share()["cores"]): num_workers="auto"'s
    start and ceiling, the diagnosis' and stoker.watch's advice, dataset_processes' check."""
    return core_share()["cores"]


def cores_words(share=None):
    """The share said for a line: "4 cores", or "1 core, its share of 2 among 2 ranks on this machine"."""
    share = share or core_share()
    n = share["cores"]
    words = f"{n} core{'' if n == 1 else 's'}"
    if n < share["usable"]:
        words += f", its share of {share['usable']} among {share['local_ranks']} ranks on this machine"
    return words


def rank_and_world():
    """(rank, world size) of this process among several training together: torch.distributed's
    once its group is initialised, else RANK and WORLD_SIZE where WORLD_SIZE is over 1 (torchrun
    sets both before the script runs), else (0, 1). Never raises: for what names and labels a
    rank's output (a launcher's own variables that are not whole numbers read as one process);
    a loader's shard checks its rank and world size itself (data_loader's _rank_and_world)."""
    distributed = sys.modules.get("torch.distributed")
    try:
        if distributed is not None and distributed.is_available() and distributed.is_initialized():
            return distributed.get_rank(), distributed.get_world_size()
    except (RuntimeError, ValueError):
        pass
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        return (max(int(os.environ["RANK"]), 0), world) if world > 1 else (0, 1)
    except (KeyError, ValueError):
        return 0, 1
