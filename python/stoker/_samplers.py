"""Where each epoch's order comes from: stoker's own sampler (shuffle and DistributedSampler's
sharding over `world_size` ranks, decided by the seed), or the script's `sampler=` /
`batch_sampler=` (torch's samplers or any iterable of indices), drawn once per pass."""
import math
import operator
import weakref

import torch.utils.data

from . import _arguments as arg
from . import _stoker


class GivenOrder:
    """The script's sampler or batch_sampler. order() iterates it once: the next pass's ids."""

    def __init__(self, sampler, batch_sampler):
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self._seen_epoch = None  # the epoch the sampler had at the last pass's start, or as set here
        # The generators' states the current pass's order was drawn from (pass_draws()), and those a
        # loaded state gives the resumed pass (resume_draws()).
        self._pass_states = self._resume_states = None

    def _generators(self):
        """The torch.Generator objects the sampler draws from: its own (a `generator` attribute, as
        torch's random samplers have), and torch's default one, which those without draw from."""
        inner = self.sampler if self.batch_sampler is None else getattr(self.batch_sampler, "sampler", None)
        if isinstance(inner, (torch.utils.data.DistributedSampler, torch.utils.data.SequentialSampler)):
            return []  # an order of their settings alone (seed, epoch, rank)
        given = [self.sampler] if self.batch_sampler is None else [self.batch_sampler, inner]
        own = [getattr(s, "generator", None) for s in given]
        return [torch.default_generator] + [g for g in own if isinstance(g, torch.Generator)]

    def pass_draws(self):
        """What state_dict() keeps of a pass under way: the generators' states its order was drawn
        from (torch's default one first), each a list of its bytes' values (plain data, as the rest
        of the state: torch.load(weights_only=True) and JSON take it, == compares it); None before
        the first pass."""
        if not self._pass_states:
            return None
        return [state.tolist() for state in self._pass_states]

    def check_draws(self, states):
        """The states of pass_draws() a loaded state holds, as the generators take them: ValueError
        in one line where they are not this sampler's generators' (another sampler than the state's)."""
        generators = self._generators()
        if (not isinstance(states, (list, tuple)) or len(states) != len(generators)
                or not all(isinstance(b, (list, tuple)) and len(b) == len(g.get_state())
                           and all(type(v) is int and 0 <= v <= 255 for v in b) for b, g in zip(states, generators))):
            raise ValueError(f"load_state_dict: the state's sampler_draws are not the {len(generators)} generator "
                             "states of this loader's sampler: it was taken under another sampler; resume with the "
                             "sampler the state was taken with, or from a state taken at an epoch's end")
        return [torch.tensor(b, dtype=torch.uint8) for b in states]

    def resume_draws(self, states):
        """The next pass resumes one whose order was drawn from `states` (check_draws'), or None."""
        self._resume_states = states

    def order(self, size, draws=None):
        """(the next pass's ids, the size of each of its batches: a batch sampler's, None for a
        sampler). `draws`: what the loader draws from torch's generator at a pass's start, called
        where torch's DataLoader draws it: after iter(batch_sampler), before the sampler's first
        index. Raises ValueError in one line for a DistributedSampler whose count is not its
        dataset's now, an index that is none of the dataset's, or an empty batch."""
        if refusal := self.stale():
            raise ValueError(refusal)
        resumed, self._resume_states = self._resume_states, None
        generators = self._generators()
        resumed = resumed if generators and draws is None else None  # a pass from its start draws anew
        now = generators[0].get_state() if resumed else None
        if resumed is not None:
            # The rest of a pass taken into a state: its order drawn again from the states it was drawn
            # from. The sampler's own generators end where that pass left them; torch's default one is
            # left as the script has it (the checkpoint's torch.get_rng_state(), set again).
            for generator, state in zip(generators, resumed):
                generator.set_state(state)
        sizes = None
        if self.batch_sampler is None:
            if draws is not None:
                draws()
            self._pass_states = resumed or [g.get_state() for g in generators]
            ids = list(self.sampler)
        else:
            started = iter(self.batch_sampler)
            if draws is not None:
                draws()
            self._pass_states = resumed or [g.get_state() for g in generators]
            batches = [_batch(b, k) for k, b in enumerate(started)]
            sizes = [len(b) for b in batches]
            ids = [i for b in batches for i in b]
        if resumed is not None:
            generators[0].set_state(now)
        try:
            ids = [operator.index(i) for i in ids]
        except TypeError:
            wrong = next(i for i in ids if not hasattr(i, "__index__"))
            raise ValueError(f"sampler: it yielded {wrong!r}; a sampler yields sample indices (int)") from None
        if ids and not (0 <= min(ids) and max(ids) < size):
            bad = min(ids) if min(ids) < 0 else max(ids)
            raise ValueError(f"sampler: it yielded index {bad}, and the dataset has {size} samples (0 to {size - 1})")
        return ids, sizes

    def stale(self):
        """The line refusing a pass under a DistributedSampler whose count is not its dataset's
        now (_stale_count), or ""."""
        return _stale_count(self.sampler if self.batch_sampler is None else getattr(self.batch_sampler, "sampler", None))

    def batches(self, batch_size, drop_last):
        """len(loader): the batches of one pass (a batch sampler's len(), as torch's)."""
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler)
        return n // batch_size if drop_last else math.ceil(n / batch_size)

    def _with_epoch(self):
        for s in (self.sampler, self.batch_sampler, getattr(self.batch_sampler, "sampler", None)):
            if hasattr(s, "set_epoch"):
                return s
        return None

    def set_epoch(self, epoch):
        s = self._with_epoch()
        if s is not None:
            s.set_epoch(epoch)
            self._seen_epoch = epoch

    def moved_epoch(self, keep=True):
        """The sampler's epoch (an int `epoch` beside its set_epoch, as DistributedSampler's) when
        the script changed it since the last pass started (at the first pass: whatever it is), else
        None. With keep=False the next call still finds it moved."""
        epoch = getattr(self._with_epoch(), "epoch", None)
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0 or epoch == self._seen_epoch:
            return None
        if keep:
            self._seen_epoch = epoch
        return epoch


def _batch(batch, k):
    """Batch `k` of a pass as a batch sampler yielded it, as a list of its indices (checked by
    order()). Raises ValueError in one line for an empty batch or one that is no iterable."""
    try:
        batch = list(batch)
    except TypeError:
        raise ValueError(f"batch_sampler: batch {k} of this pass is {batch!r}; a batch sampler yields lists of sample "
                         "indices") from None
    if not batch:
        raise ValueError(f"batch_sampler: batch {k} of this pass is empty (torch's DataLoader fails on it in "
                         "default_collate, or gives collate_fn an empty list); a batch holds 1 sample or more: leave "
                         "empty batches out of the batch sampler")
    return batch


def _stale_count(sampler):
    """The line refusing a DistributedSampler whose dataset's len() changed since it was made, or "":
    it counts its samples once (num_samples, total_size), so that torch's DataLoader stops on its
    AssertionError where the Dataset grew and repeats samples where it shrank."""
    if not isinstance(sampler, torch.utils.data.DistributedSampler):
        return ""
    try:
        n = len(sampler.dataset)
    except TypeError:
        return ""
    replicas = sampler.num_replicas
    now = math.ceil((n - replicas) / replicas) if sampler.drop_last and n % replicas else math.ceil(n / replicas)
    if now == sampler.num_samples:
        return ""
    return (f"sampler: the DistributedSampler counted {sampler.num_samples:,} samples per rank when it was made, and "
            f"its dataset has {n:,} now ({now:,} per rank of {replicas}); it keeps its count (torch's DataLoader stops "
            "on its AssertionError where the Dataset grew, repeats samples where it shrank): leave sampler= out and "
            "pass shuffle=True, rank= and world_size= (stoker's own shards read len() at each pass), or make a "
            "DistributedSampler and a DataLoader for the new size")


def given_order(sampler, batch_sampler, batch_size, shuffle, drop_last):
    """GivenOrder for a script's sampler or batch_sampler, with torch's rules for the arguments
    they exclude, or None when there is neither; and the batch size and drop_last to use. A batch
    sampler's batches may differ in size: its batch size is its own `batch_size` where it has an
    int one (the first buffers' size, and a state's: the engine's buffers grow to a pass's largest
    batch), else None; loader.batch_size is None with any batch sampler, as torch's is."""
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError("batch_sampler= excludes batch_size, shuffle, sampler and drop_last (as in torch's "
                             "DataLoader): its batches decide them")
        if not hasattr(batch_sampler, "__iter__") or not hasattr(batch_sampler, "__len__"):
            raise arg.bad("batch_sampler", batch_sampler, "an iterable of batches (lists of sample indices) with a "
                          "len(): torch's BatchSampler, a bucketing batch sampler, a list of lists")
        size = getattr(batch_sampler, "batch_size", None)
        size = size if isinstance(size, int) and not isinstance(size, bool) and size >= 1 else None
        return GivenOrder(None, batch_sampler), size, False
    if sampler is None:
        return None, batch_size, drop_last
    if shuffle:
        raise ValueError("sampler= excludes shuffle=True (as in torch's DataLoader): the sampler decides the "
                         "order; leave shuffle out")
    if not hasattr(sampler, "__iter__") or not hasattr(sampler, "__len__"):
        raise arg.bad("sampler", sampler, "an iterable of sample indices with a len() (a torch Sampler)")
    return GivenOrder(sampler, None), batch_size, drop_last


def draws_at_random(sampler, batch_sampler):
    """Whether a script's sampler (or a batch sampler's) orders each epoch at random: True for
    torch's RandomSampler, SubsetRandomSampler, WeightedRandomSampler and a DistributedSampler
    that shuffles; False for SequentialSampler and a DistributedSampler that does not; None
    for any other kind, whose order says nothing of training or evaluation."""
    data = torch.utils.data
    s = sampler if batch_sampler is None else getattr(batch_sampler, "sampler", None)
    if isinstance(s, data.DistributedSampler):
        return bool(s.shuffle)
    if isinstance(s, (data.RandomSampler, data.SubsetRandomSampler, data.WeightedRandomSampler)):
        return True
    if isinstance(s, data.SequentialSampler):
        return False
    return None


def sampler_rank(sampler, batch_sampler, rank, world_size):
    """The rank a script's sampler draws for: its own `rank` where it spreads the samples over
    several replicas (DistributedSampler, torchvision's references' RASampler), else the loader's
    on several ranks, else 0."""
    s = sampler if batch_sampler is None else getattr(batch_sampler, "sampler", None)
    own, replicas = getattr(s, "rank", None), getattr(s, "num_replicas", None)
    if isinstance(own, int) and isinstance(replicas, int) and replicas > 1:
        return own
    return rank if world_size > 1 else 0


def rank_seed(seed, rank):
    """The seed of the sample streams on `rank` when a script's sampler orders the samples: `seed`
    itself on rank 0, a splitmix64 mix of seed and rank on the others (stoker::rank_seed, in
    stoker/core/rng.h). A sample such a sampler gives to several ranks (RASampler's repeats, a
    DistributedSampler's padding) is then augmented differently on each, as repeated augmentation
    needs, with one seed given to every rank."""
    return _stoker.rank_seed(seed, rank)


class PlannedSampler:
    """`loader.sampler` when stoker orders the samples itself: as DistributedSampler, its len()
    is the samples per epoch of this rank, iterating it gives the current epoch's ids, and
    set_epoch picks the epoch; both read a Dataset object's len() now, as DistributedSampler does."""

    def __init__(self, loader):
        self._loader = weakref.proxy(loader)  # the loader holds its sampler: no cycle

    def __len__(self):
        loader = self._loader
        loader._follow_ranks()
        return math.ceil(loader._samples_now() / loader.world_size)

    def __iter__(self):
        loader = self._loader
        loader._follow_ranks()
        return iter(_stoker.plan_epoch(loader._samples_now(), batch_size=1, shuffle=loader.shuffle, drop_last=False,
                                       seed=loader.seed, rank=loader.rank, world_size=loader.world_size,
                                       epoch=loader._rng_epoch(loader.epoch), band_groups=loader._loader.band_groups))

    def set_epoch(self, epoch):
        self._loader.set_epoch(epoch)

    def __reduce_ex__(self, protocol):
        # torchvision's references cache (dataset, sampler) with torch.save: this one is the loader's.
        raise TypeError("loader.sampler, stoker's own order (made when no sampler= is given), cannot be pickled or "
                        "copied: save loader.state_dict() (seed, epoch and position), or pass a sampler of your own "
                        "(DistributedSampler) and save that")
