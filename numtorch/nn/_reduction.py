"""Loss reductions: the 'none' | 'mean' | 'sum' strings and the legacy size_average/reduce flags."""
from __future__ import annotations

import warnings

_VALID = ("none", "mean", "sum")


def get_enum(reduction):
    """Validates a reduction string (PyTorch's ValueError for anything else)."""
    if reduction not in _VALID:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def legacy_get_string(size_average, reduce, emit_warning=True):
    """Maps the deprecated ``size_average``/``reduce`` flags to a reduction string."""
    warning = ("size_average and reduce args will be deprecated, please use reduction='{}' "
               "instead.")
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(warning.format(ret), stacklevel=3)
    return ret


def resolve(size_average, reduce, reduction):
    """The reduction to use: legacy flags win when given, as in PyTorch."""
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return get_enum(reduction)


def apply(loss, reduction):
    """Reduces an elementwise ``loss`` by ``reduction`` (already validated)."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
