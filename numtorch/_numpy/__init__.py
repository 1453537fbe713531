"""``numtorch._numpy``: NumPy's API on numtorch tensors, with NumPy's semantics.

``import numtorch._numpy as np`` gives an ``ndarray`` that wraps one numtorch Tensor and the
``numpy`` namespace functions on it (ufuncs, reductions, creation, shape functions,
``where``, sorting, ``einsum``, ``linalg`` basics, ``random``). The semantics are NumPy 2's,
not PyTorch's: NEP 50 promotion (Python scalars are weak, NumPy scalars and 0-d arrays are
not), float64 and int64 defaults, NumPy's result dtypes (``sum`` of int32 is int64, ``mean``
of ints is float64), NumPy's errors (``numpy.exceptions.AxisError``, ValueError for shapes
that do not broadcast). Underneath every operation is a numtorch op, so NumPy code is
differentiable, vmappable and traceable; ``wrap_numpy`` runs NumPy code on Tensors.

This package owns the NumPy-facing layer only. Each NumPy function's computation is the one
implementation in ``numtorch._ops.numpy_api`` that ``np.sum(tensor)`` also runs (Note [One
implementation per NumPy function] in ``_funcs``).

Deviations from NumPy (by design or not yet done):
- Scalars are 0-d arrays: ``np.sum(a)`` and ``a[0]`` of a 1-d array give a 0-d ``ndarray``
  where NumPy gives a NumPy scalar (``np.float64``). Values and dtypes agree.
- No strides: a negative-step slice (``a[::-1]``) is a copy, not a view; assigning through
  it still writes to ``a``. Basic slices, reshape and transpose are views as in NumPy.
- Dtypes are numtorch's: bool, uint8, int8/16/32/64, float16/32/64, complex64/128. No
  uint16/32/64 (so ``sum`` of uint8, which NumPy does in uint64, raises a TypeError), no
  float128, strings, datetimes, objects or structured arrays.
- Reductions do not take ``initial=``/``where=``; ufuncs' ``where=`` without ``out=`` fills
  the masked-out elements with zeros (NumPy leaves them uninitialised).
- ``linalg`` decompositions return plain tuples (NumPy: named result tuples); ``norm`` has
  no matrix ``ord``; sorting complex arrays is not supported.
- ``random`` draws come from NumPy's own generators (identical numbers for a seed); they are
  constants to numtorch (Note [NumPy's generator semantics] in ``random``).
- Functions that are not here raise a TypeError naming them when called through plain
  NumPy on our arrays; they never silently convert to NumPy arrays.
"""
from numpy import (bool_, uint8, int8, int16, int32, int64, float16, float32, float64,  # noqa: F401
                   complex64, complex128, dtype, pi, e, inf, nan, newaxis, intp, euler_gamma)
from numpy import (integer, floating, complexfloating, number, generic, signedinteger,  # noqa: F401
                   unsignedinteger, inexact, can_cast, promote_types, finfo, iinfo,
                   issubdtype)
from numpy import exceptions  # noqa: F401
from numpy.exceptions import AxisError  # noqa: F401

from ._ndarray import ndarray, asarray, array  # noqa: F401
from ._ufuncs import (ufunc, mod, true_divide, abs, conj,  # noqa: F401
                      UFUNC_OBJECTS as _UFUNC_OBJECTS)
from . import _funcs as _f
from . import linalg, random  # noqa: F401
from ._wrap import wrap_numpy  # noqa: F401

# The namespace: every ufunc of the shared table and every public function of _funcs.
globals().update({uf.__name__: uf for uf in _UFUNC_OBJECTS.values()})
globals().update({k: v for k, v in vars(_f).items()
                  if not k.startswith("_") and callable(v) and getattr(v, "__module__", "")
                  == _f.__name__})
bool = bool_  # noqa: A001  NumPy 2 spells the dtype ``np.bool``
