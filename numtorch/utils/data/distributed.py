"""``DistributedSampler``: each rank of a data-parallel job iterates its own share of a
map-style dataset (``torch.utils.data.distributed.DistributedSampler``).

This module owns how indices are split across ranks; the order within an epoch comes from
``randperm`` with a generator seeded by ``seed + epoch`` — the same on every rank, which
is what makes the shares disjoint (Note [Shuffle order] in sampler.py: the permutation
differs from PyTorch's for the same seed; the split of a given order is PyTorch's). It
must not fetch data; the DataLoader does.
"""
from __future__ import annotations

import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    r"""Sampler that restricts data loading to a subset of the dataset.

    Use it with ``DistributedDataParallel``: each process passes a ``DistributedSampler``
    instance as a ``DataLoader`` sampler and loads the subset of the original dataset that
    is exclusive to it. Without ``drop_last`` the indices are padded (by repeating the first
    ones) so that every rank gets the same number; with it, the tail is dropped. Call
    :meth:`set_epoch` at the start of each epoch, before creating the ``DataLoader``
    iterator, so that shuffling differs between epochs.

    Args:
        dataset: Dataset used for sampling.
        num_replicas (int, optional): Number of processes participating in distributed
            training. By default, the world size of the default process group.
        rank (int, optional): Rank of the current process within ``num_replicas``. By
            default, the rank in the default process group.
        shuffle (bool, optional): If ``True`` (default), the sampler shuffles the indices.
        seed (int, optional): random seed used to shuffle the sampler if ``shuffle=True``;
            the same on all processes. Default: ``0``.
        drop_last (bool, optional): if ``True``, drop the tail of the data to make it
            evenly divisible across the replicas; if ``False``, add extra indices instead.

    >>> s = DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False)
    >>> list(s), len(s)
    ([1, 3, 0], 3)
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if isinstance(num_replicas, bool) or not isinstance(num_replicas, int) \
                or num_replicas < 1:
            raise ValueError(f"DistributedSampler(): num_replicas must be a positive int, got "
                             f"{num_replicas!r}")
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # the largest share every rank can have without padding
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            from ..._ops.creation import randperm
            from ..._prims.random import Generator
            g = Generator().manual_seed(self.seed + self.epoch)   # equal on every rank
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        own = indices[self.rank:self.total_size:self.num_replicas]
        assert len(own) == self.num_samples
        return iter(own)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch for this sampler; with ``shuffle=True`` it changes the order, so
        that each epoch uses a different one (the same on every rank)."""
        self.epoch = epoch
