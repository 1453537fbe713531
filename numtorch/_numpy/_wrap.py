"""``wrap_numpy``: a NumPy function becomes a function of Tensors.

This module owns the conversion at the boundary only: Tensor arguments (also inside
tuples, lists and dicts) become ``numtorch._numpy.ndarray``s sharing the same Tensor, the
function runs, and ndarray results become their Tensors again. Because an ndarray *is*
its Tensor (Note [ndarray is a Tensor box]), nothing is copied and autograd, ``vmap`` and
tracing see every NumPy operation inside as numtorch ops, so gradients flow through NumPy
code. ``numtorch.compiler.wrap_numpy`` re-exports this function.
"""
from __future__ import annotations

import functools

import numpy as np

from .._core import pytree
from .._core.tensor import Tensor
from .._ops.creation import from_numpy
from ._ndarray import ndarray


def _to_ndarray(x):
    return ndarray(x) if isinstance(x, Tensor) else x


def _to_tensor(x):
    # a NumPy array comes back from NumPy code run natively (a graph break inside compiled
    # wrapped code materializes NumPy arrays: Note [Which array comes out])
    if isinstance(x, np.ndarray):
        return from_numpy(x)
    return x.tensor if isinstance(x, ndarray) else x


def wrap_numpy(fn):
    """Make ``fn``, written for NumPy arrays, take and return Tensors (``torch.compiler.wrap_numpy``).

    >>> import numpy as np, numtorch as torch
    >>> from numtorch._numpy import wrap_numpy
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> wrap_numpy(lambda a: np.sum(a * a))(x).backward()
    >>> x.grad
    tensor([2., 4.])
    """
    if not callable(fn):
        raise TypeError(f"wrap_numpy() expects a callable, got {type(fn).__name__}")

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args = pytree.tree_map(_to_ndarray, args)
        if kwargs:
            kwargs = pytree.tree_map(_to_ndarray, kwargs)
            return pytree.tree_map(_to_tensor, fn(*args, **kwargs))
        return pytree.tree_map(_to_tensor, fn(*args))
    return wrapped
