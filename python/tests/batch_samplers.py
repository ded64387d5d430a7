"""Batch samplers whose batches differ in size, as scripts write them: bucketing by a budget
(many cheap samples or few costly ones per batch), torchvision's detection references'
GroupedBatchSampler (as references/detection/group_by_aspect_ratio.py writes it), and one that
takes its share of the batches from torch.distributed itself."""
from collections import defaultdict
from itertools import chain, repeat

import torch.distributed as dist
from torch.utils.data import BatchSampler, Sampler


class BudgetBuckets(Sampler):
    """Batches of the sampler's order, each closed before its costs would pass `budget`."""

    def __init__(self, sampler, costs, budget):
        self.sampler, self.costs, self.budget = sampler, costs, budget

    def set_epoch(self, epoch):
        self.sampler.set_epoch(epoch)

    def __iter__(self):
        batch, used = [], 0
        for i in self.sampler:
            if batch and used + self.costs[i] > self.budget:
                yield batch
                batch, used = [], 0
            batch.append(i)
            used += self.costs[i]
        if batch:
            yield batch

    def __len__(self):  # the sampler's order is its seed's and epoch's: the same when iterated again
        return sum(1 for _ in self)


class RankBatches(Sampler):
    """Batches of 0..n-1 cut in the sizes given in turn, then every world-th from this rank
    (torch.distributed's), as many on every rank; set_epoch rotates the order."""

    def __init__(self, n, sizes):
        self.n, self.sizes, self.epoch = n, sizes, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def _all(self):
        order = [(i + 5 * self.epoch) % self.n for i in range(self.n)]
        batches, k = [], 0
        for size in chain.from_iterable(repeat(self.sizes)):
            if k >= self.n:
                break
            batches.append(order[k:k + size])
            k += size
        world, rank = dist.get_world_size(), dist.get_rank()
        return batches[rank:len(batches) // world * world:world]

    def __iter__(self):
        return iter(self._all())

    def __len__(self):
        return len(self._all())


def _repeat_to_at_least(iterable, n):
    repeat_times = -(-n // len(iterable))
    repeated = chain.from_iterable(repeat(iterable, repeat_times))
    return list(repeated)


class GroupedBatchSampler(BatchSampler):
    """torchvision's references/detection/group_by_aspect_ratio.py GroupedBatchSampler: batches
    of one group each; at the end, the groups' leftovers are topped up from their group."""

    def __init__(self, sampler, group_ids, batch_size):
        if not isinstance(sampler, Sampler):
            raise ValueError(f"sampler should be an instance of torch.utils.data.Sampler, but got sampler={sampler}")
        self.sampler = sampler
        self.group_ids = group_ids
        self.batch_size = batch_size

    def __iter__(self):
        buffer_per_group = defaultdict(list)
        samples_per_group = defaultdict(list)

        num_batches = 0
        for idx in self.sampler:
            group_id = self.group_ids[idx]
            buffer_per_group[group_id].append(idx)
            samples_per_group[group_id].append(idx)
            if len(buffer_per_group[group_id]) == self.batch_size:
                yield buffer_per_group[group_id]
                num_batches += 1
                del buffer_per_group[group_id]
            assert len(buffer_per_group[group_id]) < self.batch_size

        # now we have run out of elements that satisfy
        # the group criteria, let's return the remaining
        # elements so that the size of the sampler is
        # deterministic
        expected_num_batches = len(self)
        num_remaining = expected_num_batches - num_batches
        if num_remaining > 0:
            # for the remaining batches, take first the buffers with the largest number
            # of elements
            for group_id, _ in sorted(buffer_per_group.items(), key=lambda x: len(x[1]), reverse=True):
                remaining = self.batch_size - len(buffer_per_group[group_id])
                samples_from_group_id = _repeat_to_at_least(samples_per_group[group_id], remaining)
                buffer_per_group[group_id].extend(samples_from_group_id[:remaining])
                assert len(buffer_per_group[group_id]) == self.batch_size
                yield buffer_per_group[group_id]
                num_remaining -= 1
                if num_remaining == 0:
                    break
        assert num_remaining == 0

    def __len__(self):
        return len(self.sampler) // self.batch_size


__all__ = ["BudgetBuckets", "GroupedBatchSampler", "RankBatches"]
