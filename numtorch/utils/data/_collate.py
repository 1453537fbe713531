"""Collation: turning a list of samples into a batch (`default_collate`) and converting
NumPy leaves to tensors when batching is off (`default_convert`).

Both walk a sample as a pytree — mappings, namedtuples, tuples and other sequences of
leaves — the way ``torch.utils.data._utils.collate`` of PyTorch 2.13 does, with its quirks
kept on purpose because user code depends on them: a batch of tuples collates to a *list*,
Python floats to float64, and strings are left as lists.
"""
from __future__ import annotations

import collections.abc
import re

import numpy as np

from ..._core.tensor import Tensor

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

_COLLATE_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, "
                "dicts or lists; found {}")


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_convert(data):
    r"""Convert each NumPy array element into a :class:`numtorch.Tensor`.

    If the input is a `Sequence`, `Collection`, or `Mapping`, it tries to convert each
    element inside to a :class:`numtorch.Tensor`. If the input is not a NumPy array, it
    is left unchanged. This is used as the default function for collation when both
    `batch_sampler` and `batch_size` are NOT defined in
    :class:`~numtorch.utils.data.DataLoader`.

    >>> import numpy as np
    >>> default_convert({"a": np.array([1, 2])})
    {'a': tensor([1, 2])}
    """
    from ..._ops.creation import as_tensor
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) or isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and _np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:   # the mapping type may not accept a dict in its constructor
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]   # backwards compatibility, as PyTorch
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    r"""Take in a batch of data and put the elements within the batch into a tensor with
    an additional outer dimension - batch size.

    The exact output type can be a :class:`numtorch.Tensor`, a `Sequence` of
    :class:`numtorch.Tensor`, a Collection of :class:`numtorch.Tensor`, or left unchanged,
    depending on the input type. This is used as the default function for collation when
    `batch_size` or `batch_sampler` is defined in :class:`~numtorch.utils.data.DataLoader`.

    Here is the general input type (based on the type of the element within the batch)
    to output type mapping:

        * :class:`numtorch.Tensor` -> :class:`numtorch.Tensor` (with an added outer dimension batch size)
        * NumPy Arrays -> :class:`numtorch.Tensor`
        * `float` -> :class:`numtorch.Tensor` (float64)
        * `int` -> :class:`numtorch.Tensor` (int64)
        * `str` -> `str` (unchanged)
        * `bytes` -> `bytes` (unchanged)
        * `Mapping[K, V_i]` -> `Mapping[K, default_collate([V_1, V_2, ...])]`
        * `NamedTuple[V1_i, V2_i, ...]` -> `NamedTuple[default_collate([V1_1, V1_2, ...]),
          default_collate([V2_1, V2_2, ...]), ...]`
        * `Sequence[V1_i, V2_i, ...]` -> `Sequence[default_collate([V1_1, V1_2, ...]),
          default_collate([V2_1, V2_2, ...]), ...]`

    >>> default_collate([0, 1, 2, 3])
    tensor([0, 1, 2, 3])
    >>> default_collate([(1, "a"), (2, "b")])
    [tensor([1, 2]), ('a', 'b')]
    >>> default_collate([{"x": 1.0}, {"x": 2.0}])
    {'x': tensor([1., 2.], dtype=torch.float64)}
    """
    from ..._ops.creation import as_tensor, tensor
    from ..._ops.shape import stack
    from ..._core import dtypes

    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_", "string_"):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
                raise TypeError(_COLLATE_ERR.format(elem.dtype))
            return default_collate([as_tensor(b) for b in batch])
        if elem.shape == ():   # a NumPy scalar
            return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                # the mapping type may have extra attributes: keep them, replace the items
                import copy
                clone = copy.copy(elem)
                clone.update(collated)
                return clone
            return elem_type(collated)
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]   # as PyTorch
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                import copy
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(samples)
                return clone
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERR.format(elem_type))
