"""Plain NumPy functions called on ``numtorch._numpy`` arrays (``ndarray.__array_function__``).

NumPy code written against ``import numpy as np`` (the FAQ's ``wrap_numpy`` examples) calls
``np.sum(x)`` with our ndarrays; NEP 18 hands those calls here, and we run the
``numtorch._numpy`` function of the same name. This module owns only that name lookup; a
function we lack raises a TypeError naming it rather than converting to a NumPy array (that
would silently drop gradients and transforms).
"""
from __future__ import annotations


def _namespace_for(func):
    from . import linalg
    import numtorch._numpy as tnp
    module = getattr(func, "__module__", "") or ""
    return linalg if module.startswith("numpy.linalg") else tnp


def array_function(func, types, args, kwargs):
    from ._ndarray import ndarray
    import numpy as np
    for t in types:
        if not issubclass(t, (ndarray, np.ndarray)):
            from .._core.tensor import Tensor
            if not issubclass(t, Tensor):
                return NotImplemented
    ours = getattr(_namespace_for(func), func.__name__, None)
    if ours is None or not callable(ours):
        raise TypeError(f"{func.__module__}.{func.__name__} is not supported by "
                        "numtorch._numpy (a silent conversion to a NumPy array would drop "
                        "gradients); use a supported function or convert explicitly")
    return ours(*args, **kwargs)
