"""Datasets: the map-style `Dataset` and `IterableDataset` protocols and their combinators
(`TensorDataset`, `Subset`, `ConcatDataset`, `ChainDataset`, `StackDataset`, `random_split`).

This module owns what a dataset *is*; it must not know about batching, samplers or worker
processes (those live in sampler.py and dataloader.py). Semantics follow
``torch.utils.data.dataset`` of PyTorch 2.13, including which exception type is raised.
"""
from __future__ import annotations

import bisect
import math
import warnings

from ..._core.tensor import Tensor


class Dataset:
    r"""An abstract class representing a :class:`Dataset`.

    All datasets that represent a map from keys to data samples should subclass it. All
    subclasses should overwrite :meth:`__getitem__`, supporting fetching a data sample for a
    given key. Subclasses could also optionally overwrite :meth:`__len__`, which is expected
    to return the size of the dataset by many :class:`~numtorch.utils.data.Sampler`
    implementations and the default options of :class:`~numtorch.utils.data.DataLoader`.

    >>> class Squares(Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> [Squares()[i] for i in range(4)]
    [0, 1, 4, 9]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    r"""An iterable Dataset.

    All datasets that represent an iterable of data samples should subclass it. Such form
    of datasets is particularly useful when data come from a stream. All subclasses should
    overwrite :meth:`__iter__`, which would return an iterator of samples in this dataset.

    When a subclass is used with :class:`~numtorch.utils.data.DataLoader`, each item in the
    dataset will be yielded from the DataLoader iterator. When ``num_workers > 0``, each
    worker process will have a different copy of the dataset object, so it is often
    desired to configure each copy independently to avoid having duplicate data returned
    from the workers. :func:`~numtorch.utils.data.get_worker_info`, when called in a worker
    process, returns information about the worker.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    r"""Dataset wrapping tensors.

    Each sample will be retrieved by indexing tensors along the first dimension.

    Args:
        *tensors (Tensor): tensors that have the same size of the first dimension.

    >>> import numtorch as torch
    >>> ds = TensorDataset(torch.arange(3), torch.arange(3) * 10)
    >>> len(ds), ds[1]
    (3, (tensor(1), tensor(10)))
    """

    def __init__(self, *tensors):
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset(*tensors): expected every argument to be a "
                                f"Tensor, but argument {i} is {type(t).__name__}")
        sizes = [t.size(0) for t in tensors]
        # PyTorch asserts here, so the exception type is AssertionError; the message says more.
        if any(s != sizes[0] for s in sizes):
            raise AssertionError(f"Size mismatch between tensors: TensorDataset(*tensors) "
                                 f"expected the same size of dim 0, got sizes {sizes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    r"""Dataset as a stacking of multiple datasets.

    This class is useful to assemble different parts of complex input data, given as
    datasets. ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``.

    Args:
        *args (Dataset): Datasets for stacking returned as tuple.
        **kwargs (Dataset): Datasets for stacking returned as dict.
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or"
                             "``dict``- (via ``kwargs``) like input/output, but both types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    r"""Dataset as a concatenation of multiple datasets.

    This class is useful to assemble different existing datasets.

    Args:
        datasets (sequence): List of datasets to be concatenated
    """

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    r"""Dataset for chaining multiple :class:`IterableDataset` s.

    This class is useful to assemble different existing dataset streams. The chaining
    operation is done on-the-fly, so concatenating large-scale datasets with this class
    will be efficient.

    Args:
        datasets (iterable of IterableDataset): datasets to be chained together
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    r"""Subset of a dataset at specified indices.

    Args:
        dataset (Dataset): The whole Dataset
        indices (sequence): Indices in the whole set selected for subset
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # Batched fetch when the wrapped dataset supports it (PyTorch's __getitems__ protocol).
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    r"""Randomly split a dataset into non-overlapping new datasets of given lengths.

    If a list of fractions that sum up to 1 is given, the lengths will be computed
    automatically as floor(frac * len(dataset)) for each fraction provided. After
    computing the lengths, if there are any remainders, 1 count will be distributed in
    round-robin fashion to the lengths until there are no remainders left.

    The permutation is ``numtorch.randperm`` of ``generator``, so it differs from
    PyTorch's for the same seed (numtorch's generator is not PyTorch's Mersenne Twister;
    see Note [Shuffle order] in sampler.py).

    Args:
        dataset (Dataset): Dataset to be split
        lengths (sequence): lengths or fractions of splits to be produced
        generator (Generator): Generator used for the random permutation.

    >>> import numtorch as torch
    >>> a, b = random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(42))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (3, 7, True)
    """
    from ..._ops.creation import randperm

    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              f"This might result in an empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!"
                         f" (random_split(lengths=...) sums to {sum(lengths)}, the dataset "
                         f"has {len(dataset)} samples)")
    indices = randperm(sum(lengths), generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out
