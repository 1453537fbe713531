"""`repr` of tensors in PyTorch's format: ``tensor([1.0000, 2.5000], requires_grad=True)``."""
from __future__ import annotations

import numpy as np
from numpy import ndarray

from . import dtypes as _dt
from .meta import MetaArray


def _format_array(a: ndarray) -> str:
    kind = a.dtype.kind
    opts = dict(separator=", ", threshold=1000, edgeitems=3, max_line_width=80)
    if kind == "f" or kind == "c":
        finite = a[np.isfinite(a)] if a.size else a
        if kind == "f" and finite.size and np.all(finite == np.round(finite)) \
                and np.abs(finite).max() < 1e8:
            return np.array2string(a, floatmode="unique", **opts) if finite.size \
                else np.array2string(a, **opts)
        mags = np.abs(finite[finite != 0]) if finite.size else finite
        sci = mags.size and (mags.max() / mags.min() > 1e3 or mags.max() >= 1e8 or mags.min() < 1e-4)
        if sci:
            return np.array2string(a, formatter={"float_kind": lambda v: f"{v:.4e}",
                                                 "complex_kind": lambda v: f"{v:.4e}"}, **opts)
        return np.array2string(a, precision=4, floatmode="fixed", suppress_small=False, **opts)
    if kind == "b":
        return np.array2string(a, formatter={"bool": lambda v: "True" if v else "False"}, **opts)
    return np.array2string(a, **opts)


def tensor_repr(t) -> str:
    d = t._data
    suffix = []
    dtype = _dt.from_numpy(d.dtype)
    if isinstance(d, MetaArray):
        body = "..."
        suffix.append(f"size={tuple(d.shape)}")
        default = False
    elif d.__class__ is ndarray:
        body = _format_array(d)
        body = body.replace("\n", "\n       ")
        default = dtype in (_dt.get_default_dtype(), _dt.int64, _dt.bool_) or \
            (dtype is _dt.get_default_dtype().to_complex())
        if d.size == 0:
            suffix.append(f"size={tuple(d.shape)}")
            default = default and d.ndim == 1
    else:
        return f"{type(d).__name__}(shape={tuple(d.shape)}, dtype={dtype}, level={d.interp.level})"
    if isinstance(d, MetaArray):
        suffix.append("device='meta'")
        suffix.append(f"dtype={dtype}")
    elif not default:
        suffix.append(f"dtype={dtype}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffix.append("requires_grad=True")
    inner = body if not suffix else body + ", " + ", ".join(suffix)
    if t.__class__.__name__ == "Parameter":
        return f"Parameter containing:\ntensor({inner})"
    return f"tensor({inner})"
