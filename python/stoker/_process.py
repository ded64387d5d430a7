"""This process among the others of a run: the cores it may run on, and its rank."""
import os
import sys


def cores():
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


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
