"""A stoker.DataLoader's ranks taken from torch.distributed's process group after it was made.

PyTorch Lightning's `trainer.fit(model, loader)` with strategy="ddp" makes the loader before
the ranks exist (rank 0 without RANK and WORLD_SIZE, the others with WORLD_SIZE and no RANK)
and initialises the group before the first pass; Accelerate's launcher does alike. Such a loader
is made on the ranks _rank_and_world gives then (data_loader.py), and LateRanks says when it
takes the group's instead.
"""


def group_ready():
    """Whether torch.distributed's process group is initialised."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


class LateRanks:
    """Whether a DataLoader takes its ranks from the process group later, which, and when.

    Decides, from what the script gave when the loader was made (`rank`, `world_size`: None where
    not given; the world size made of them; whether stoker shards the samples itself: no sampler,
    not iterable-style):
    - `pending`: the ranks are the group's once it is up. So for a sharding loader made without a
      group, given neither rank nor world_size, or on several ranks with no rank known (neither
      rank=, RANK nor a group: `unknown`).
    - take(): at the loader's first len(), len(sampler), state_dict(), load_state_dict() or pass
      after the group is up, the group's (rank, world_size) where they differ from the loader's
      (a given world_size stands); `moved` from then until settle().
    - settle(): at the first pass, group or not, the ranks are the loader's for good (`pending`
      off); returns whether they moved since the engine loader was made, which is then made again
      on them. Raises ValueError in one line where several ranks would read with no rank known:
      every process would read rank 0's shard.
    - shares_seed_zero(): the seed the loader made again takes: 0 for a shuffled one on several
      ranks, unless a seed was given or a state loaded (`state_loaded`, set by load_state_dict):
      the seed of a loader made on several ranks without a group (DistributedSampler's default),
      the same on every rank with no collective call.

    Holds no reference to the loader. Not thread-safe: the loader's consumer calls it.
    """

    def __init__(self, rank, world_size, world, sharded, seed_given, environ):
        """`rank`, `world_size` as given (None: not), `world` the world size the loader is made on,
        `environ` the environment (os.environ)."""
        ready = group_ready()
        self.unknown = rank is None and world > 1 and not ready and "RANK" not in environ
        self.pending = sharded and not ready and (rank is None and world_size is None or self.unknown)
        self.moved = False
        self.state_loaded = False  # a state's seed stands (load_state_dict)
        self._world_given = world_size is not None
        self._seed_given = seed_given

    def take(self, rank, world_size):
        """The group's (rank, world_size) where the ranks are pending, the group is up and they
        differ from the loader's `rank` and `world_size`; else None. Once the group is up they
        are pending no more."""
        if not (self.pending and group_ready()):
            return None
        import torch.distributed as dist

        self.pending = self.unknown = False
        group = (dist.get_rank(), world_size if self._world_given else dist.get_world_size())
        if group == (rank, world_size):
            return None
        self.moved = True
        return group

    def settle(self, world_size):
        """At the first pass (after take()): whether the ranks moved since the engine loader was
        made (then not again). Raises ValueError where they are pending on `world_size` ranks with
        no rank known."""
        if self.pending and self.unknown:
            given = f"world_size={world_size}" if self._world_given else f"WORLD_SIZE={world_size}"
            raise ValueError(f"stoker.DataLoader: {given} and no rank: rank= was not given, RANK is unset and "
                             "torch.distributed is not initialised, so every process would read rank 0's shard; "
                             "pass rank=, set RANK (torchrun does), or initialise the process group before the "
                             "first pass")
        self.pending = False
        moved, self.moved = self.moved, False
        return moved

    def shares_seed_zero(self, shuffle, world_size):
        """Whether the loader made again on moved ranks takes seed 0: `shuffle`, on `world_size`
        ranks, more than one, with no seed given and no state loaded."""
        return shuffle and world_size > 1 and not self._seed_given and not self.state_loaded
