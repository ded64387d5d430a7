"""Which seed stoker.DataLoader's passes draw with, where the script seeds torch between them.

torch's DataLoader draws each pass's seeds from the generator (torch's default one, or the
`generator=` given) at iter(), so `torch.manual_seed(seed + epoch)` at an epoch's top repeats
that epoch in a new process. A loader whose seed was peeked from that generator (neither given
nor shared over ranks) follows such a reseed: the pass runs on the seed the generator would give
it, its epoch the seed's first. Reseeds holds what decides that, one per DataLoader:

  reseeds = Reseeds(follows=peeked, seeded_from=..., seen=generator_state)
  seed = reseeds.take(generator, state_now)  # at iter(), before the pass draws: a seed or None
  reseeds.follow(seed, epoch)                # for a pass from an epoch's first batch: True to
                                             # tell the engine loader (Loader.reseed)
  reseeds.seen = state_after_the_draws       # after the pass drew

It draws nothing and calls no engine: the DataLoader tells the engine loader (Loader.reseed,
seed_epoch) what follow() decided, and the engine names its epochs as the DataLoader does. Not
thread-safe: the DataLoader's consumer calls hold it.
"""
import torch

from ._generator import peek_seed

# The epochs of an iterable's draws (an engine epoch holds room for its segments,
# _iterable.StreamPass); the engine loader's Loader.kDrawEpochs, where an epoch set back before
# the seed's first wraps around.
DRAW_EPOCHS = 1 << 62


def initial_seed(generator=None):
    """The seed `generator` (None: torch's default one) was last seeded with; torch.manual_seed
    and torch.set_rng_state change it."""
    return torch.initial_seed() if generator is None else generator.initial_seed()


def freshly_seeded(generator=None):
    """Whether `generator` (None: torch's default one) is as its last seeding left it: nothing
    drawn from it since."""
    state = torch.get_rng_state() if generator is None else generator.get_state()
    device = "cpu" if generator is None else generator.device
    fresh = torch.Generator(device=device).manual_seed(initial_seed(generator)).get_state()
    return torch.equal(state, fresh)


class Reseeds:
    """A DataLoader's reseed flags.

    follows: the seed follows the generator seeded again (False: a seed given, or shared over
        ranks, stands; stand() makes it so).
    seeded_from: the generator's initial seed when the seed was peeked from it, until the first
        pass (a seed peeked before torch.set_rng_state of another seed's state).
    seen: the generator's state as the loader was made, after a pass's draws, or as a state was
        loaded; a generator still so was not seeded again.
    seed_epoch: the epoch the seed's draws count from (the engine loader's seed_epoch).
    fresh_at_start: the generator was freshly seeded when the current pass started.
    pass_reseeded: ... when the last pass from an epoch's first batch started (state_dict's
        "reseeded").
    keep_loaded_seed: the next pass keeps a loaded state's seed (load_state_dict).
    """

    def __init__(self, follows, seeded_from, seen):
        self.follows = follows
        self.seeded_from = seeded_from
        self.seen = seen
        self.seed_epoch = 0
        self.fresh_at_start = False
        self.pass_reseeded = False
        self.keep_loaded_seed = False

    def stand(self):
        """The seed stands from now on: one the ranks share (a rank's own reseed would split the shards)."""
        self.seeded_from = None
        self.follows = False

    def take(self, generator, state):
        """At iter(), before the pass draws: the base seed this pass draws where the script seeded
        `generator` (None: torch's default one; `state`: its state now) since the loader was made,
        the last pass started or a state was loaded, as torch's DataLoader draws each pass's seeds at
        iter(); else None. Seeded: the generator as a manual_seed leaves it, not drawn from since
        (torch.manual_seed(seed + epoch) at an epoch's top; again with the same seed too), and other
        than it was then; before the first pass of a loader not loaded, also torch.set_rng_state of
        another seed's state. Draws alone (a model made after the loader), and torch.set_rng_state
        of a checkpoint's state after load_state_dict, are no reseed. A seed that stands never
        follows; nor, at the first pass after load_state_dict, a state's seed unless its last pass
        began on a freshly seeded generator (a run that seeds each epoch: its next epoch follows the
        reseed, as in the run the state was taken in)."""
        seeded_from, self.seeded_from = self.seeded_from, None
        keep, self.keep_loaded_seed = self.keep_loaded_seed, False
        self.fresh_at_start = self.follows and freshly_seeded(generator)
        if not self.follows or keep or torch.equal(state, self.seen):
            return None
        if self.fresh_at_start or (seeded_from is not None and initial_seed(generator) != seeded_from):
            return peek_seed(generator)
        return None

    def follow(self, seed, epoch):
        """A pass from its first batch over `epoch` that follows a reseed (take()'s `seed`, not None)
        runs on that seed, its epoch the seed's first: a run resumed at that epoch in a new process
        that seeds the generator alike gets the same order and augmentations, as with torch's
        DataLoader. True where the caller tells the engine loader (Loader.reseed(seed, epoch))."""
        self.pass_reseeded = self.fresh_at_start
        if seed is None:
            return False
        self.seed_epoch = epoch
        return True

    def load(self, seed_epoch, reseeded, next_batch, state):
        """load_state_dict of a state taken at `seed_epoch` and `reseeded`, resuming at `next_batch`,
        the generator's state now `state`: a reseed after this is followed from the next pass from an
        epoch's first batch on, and the state's own seed stands at the first pass unless it resumes
        at an epoch's start after a reseeded pass."""
        self.seeded_from = None
        self.seen = state
        self.seed_epoch, self.pass_reseeded = seed_epoch, reseeded
        self.keep_loaded_seed = not (next_batch == 0 and reseeded)

    def draws_epoch(self, epoch):
        """The epoch whose draws `epoch` takes: counted from the seed's first, an epoch set back
        before it wrapped around (Loader.draws_epoch's rule, for an iterable's engine epochs)."""
        return (epoch - self.seed_epoch) % DRAW_EPOCHS
