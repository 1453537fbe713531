"""Samplers: iterables of dataset indices (`SequentialSampler`, `RandomSampler`,
`SubsetRandomSampler`, `WeightedRandomSampler`) and `BatchSampler`, which groups them.

This module owns the order in which a DataLoader visits a map-style dataset; it must not
fetch or collate data. Semantics (arguments, checks, lengths, how many draws are made from
the generator) follow ``torch.utils.data.sampler`` of PyTorch 2.13.

Note [Shuffle order]
A sampler draws its permutation with ``numtorch.randperm(n, generator=g)``, exactly as
PyTorch's does with ``torch.randperm``. The *order* still differs from PyTorch's for the
same seed: numtorch's `Generator` is NumPy's PCG64 (see _prims/random.py), PyTorch's CPU
generator is a Mersenne Twister with its own randperm algorithm. What is the same is
what programs rely on: a seeded generator gives the same order on every run, each epoch
draws a fresh permutation from the generator's advancing state, every index appears once
per epoch, and an unseeded sampler draws its seed from the global generator (so
``numtorch.manual_seed`` makes shuffling reproducible).
"""
from __future__ import annotations

from ..._core.tensor import Tensor


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise ValueError(f"{name} should be a boolean value, but got {name}={value}")


def _seeded_generator():
    """A fresh Generator seeded from the global one (what PyTorch's samplers do when given
    no generator, so that ``manual_seed`` governs them)."""
    from ..._ops.creation import randint
    from ..._prims.random import Generator
    seed = int(randint(0, 2 ** 63 - 1, ()).item())
    return Generator().manual_seed(seed)


class Sampler:
    r"""Base class for all Samplers.

    Every Sampler subclass has to provide an :meth:`__iter__` method, providing a way to
    iterate over indices or lists of indices (batches) of dataset elements, and may provide
    a :meth:`__len__` method that returns the length of the returned iterators.
    """

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    r"""Samples elements sequentially, always in the same order.

    Args:
        data_source (Dataset): dataset to sample from

    >>> list(SequentialSampler(range(4)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    r"""Samples elements randomly. If without replacement, then sample from a shuffled
    dataset. If with replacement, then user can specify :attr:`num_samples` to draw.

    Args:
        data_source (Dataset): dataset to sample from
        replacement (bool): samples are drawn on-demand with replacement if ``True``, default=``False``
        num_samples (int): number of samples to draw, default=`len(dataset)`.
        generator (Generator): Generator used in sampling.

    The order differs from PyTorch's for the same seed (Note [Shuffle order]).

    >>> import numtorch as torch
    >>> sorted(RandomSampler(range(5), generator=torch.Generator().manual_seed(0)))
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _check_bool("replacement", replacement)
        _check_positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self):
        # the dataset size may change at run time, so it is read on every access
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ..._ops.creation import randint, randperm
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _seeded_generator()
        if self.replacement:
            # drawn 32 at a time, as PyTorch does, so long epochs stay lazy
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    r"""Samples elements randomly from a given list of indices, without replacement.

    Args:
        indices (sequence): a sequence of indices
        generator (Generator): Generator used in sampling.

    >>> import numtorch as torch
    >>> sorted(SubsetRandomSampler([10, 20, 30], generator=torch.Generator().manual_seed(1)))
    [10, 20, 30]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        from ..._ops.creation import randperm
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    r"""Samples elements from ``[0,..,len(weights)-1]`` with given probabilities (weights).

    Args:
        weights (sequence): a sequence of weights, not necessary summing up to one
        num_samples (int): number of samples to draw
        replacement (bool): if ``True``, samples are drawn with replacement. If not, they
            are drawn without replacement, which means that when a sample index is drawn
            for a row, it cannot be drawn again for that row.
        generator (Generator): Generator used in sampling.

    >>> import numtorch as torch
    >>> list(WeightedRandomSampler([0.0, 0.0, 1.0], 3, generator=torch.Generator().manual_seed(0)))
    [2, 2, 2]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        from ..._ops.creation import as_tensor
        from ..._core import dtypes
        _check_positive_int("num_samples", num_samples)
        _check_bool("replacement", replacement)
        weights_tensor = as_tensor(weights.detach() if isinstance(weights, Tensor) else weights,
                                   dtype=dtypes.float64)
        if weights_tensor.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        from ..._ops.creation import multinomial
        yield from multinomial(self.weights, self.num_samples, self.replacement,
                               generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    r"""Wraps another sampler to yield a mini-batch of indices.

    Args:
        sampler (Sampler or Iterable): Base sampler. Can be any iterable object
        batch_size (int): Size of mini-batch.
        drop_last (bool): If ``True``, the sampler will drop the last batch if its size
            would be less than ``batch_size``

    >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=True))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        _check_positive_int("batch_size", batch_size)
        _check_bool("drop_last", drop_last)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
