"""``assert_close``: PyTorch's tensor comparison, its default tolerances and its report.

This module owns comparing values (tensors, NumPy arrays, Python numbers, and sequences
or mappings of them) and the mismatch message; it must not know about autograd or ops
beyond reading a tensor's payload.
"""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Tensor

# (rtol, atol) per dtype, PyTorch's defaults; dtypes not listed compare exactly.
DEFAULT_TOLERANCES = {
    _dt.float16: (1e-3, 1e-5),
    _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7),
    _dt.complex64: (1.3e-6, 1e-5),
    _dt.complex128: (1e-7, 1e-7),
}


def default_tolerances(*dtypes):
    """The loosest default (rtol, atol) among ``dtypes`` (numtorch dtypes)."""
    pairs = [DEFAULT_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


class _Mismatch(AssertionError):
    pass


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Asserts that ``actual`` and ``expected`` are close (``torch.testing.assert_close``).

    Tensors compare elementwise as ``|actual - expected| <= atol + rtol * |expected|``
    after their shapes, dtypes and devices are checked; sequences and mappings compare
    item by item. Without ``rtol``/``atol`` the defaults of the dtype apply (float32:
    1.3e-6 and 1e-5, float64: 1e-7 and 1e-7, integers and bool: exact).

    >>> import numtorch as torch
    >>> assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    """
    if (rtol is None) ^ (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as e:
        text = str(e)
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise AssertionError(text) from None


def _compare(actual, expected, path, options):
    if isinstance(actual, (Tensor, np.ndarray)) or isinstance(expected, (Tensor, np.ndarray)):
        if type(actual) is not type(expected) and not (
                options["allow_subclasses"] and _same_family(actual, expected)):
            raise TypeError(f"No comparison pair was able to handle inputs of type "
                            f"{type(actual)} and {type(expected)}.")
        return _wrap_path(_compare_arrays, actual, expected, path, options)
    if isinstance(actual, numbers.Number) or isinstance(expected, numbers.Number):
        return _wrap_path(_compare_numbers, actual, expected, path, options)
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(_with_path(
                f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                f"{sorted(set(expected) - set(actual), key=repr)}\nExtra keys in the actual "
                f"mapping: {sorted(set(actual) - set(expected), key=repr)}", path))
        for k in expected:
            _compare(actual[k], expected[k], path + (k,), options)
        return
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(_with_path(f"The length of the sequences mismatch: {len(actual)} != "
                                       f"{len(expected)}", path))
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return
    if actual is None and expected is None:
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.")


def _same_family(a, b):
    return (isinstance(a, Tensor) and isinstance(b, Tensor)) or (
        isinstance(a, np.ndarray) and isinstance(b, np.ndarray))


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _wrap_path(fn, actual, expected, path, options):
    try:
        fn(actual, expected, options)
    except _Mismatch as e:
        raise _Mismatch(_with_path(str(e), path)) from None


def _with_path(text, path):
    if not path:
        return text
    return text + "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)


def _compare_numbers(actual, expected, options):
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    dtype = _dt.complex128 if isinstance(expected, complex) or isinstance(actual, complex) else (
        _dt.float64 if isinstance(expected, float) or isinstance(actual, float) else _dt.int64)
    rtol, atol = _tolerances(options, dtype, dtype)
    a, e = np.asarray(actual), np.asarray(expected)
    if _close(a, e, rtol, atol, options["equal_nan"]).all():
        return
    raise _Mismatch(_scalar_report(a, e, rtol, atol, dtype))


def _payload(x):
    if isinstance(x, Tensor):
        return np.asarray(x._concrete("assert_close")), x.dtype, str(x.device)
    return x, _dt.from_numpy(x.dtype), "cpu"


def _compare_arrays(actual, expected, options):
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        if options["check_device"] and actual.device != expected.device:
            raise _Mismatch(f"The values for attribute 'device' do not match: {actual.device!r} "
                            f"!= {expected.device!r}.")
        if actual.is_meta or expected.is_meta:
            return _compare_meta(actual, expected, options)
    a, da, _ = _payload(actual)
    e, de, _ = _payload(expected)
    if a.shape != e.shape:
        raise _Mismatch(f"The values for attribute 'shape' do not match: {_shape_str(actual)} != "
                        f"{_shape_str(expected)}.")
    if options["check_dtype"] and da != de:
        raise _Mismatch(f"The values for attribute 'dtype' do not match: {da} != {de}.")
    if options["check_stride"] and isinstance(actual, Tensor) and a.size > 1 and \
            actual.stride() != expected.stride():
        raise _Mismatch(f"The values for attribute 'stride()' do not match: {actual.stride()} != "
                        f"{expected.stride()}.")
    rtol, atol = _tolerances(options, da, de)
    if da != de:
        common = np.promote_types(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    ok = _close(a, e, rtol, atol, options["equal_nan"])
    if ok.all():
        return
    if a.ndim == 0:
        raise _Mismatch(_scalar_report(a, e, rtol, atol, da))
    raise _Mismatch(_tensor_report(a, e, ok, rtol, atol, da))


def _compare_meta(actual, expected, options):
    if tuple(actual.shape) != tuple(expected.shape):
        raise _Mismatch(f"The values for attribute 'shape' do not match: {actual.shape} != "
                        f"{expected.shape}.")
    if options["check_dtype"] and actual.dtype != expected.dtype:
        raise _Mismatch(f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                        f"{expected.dtype}.")


def _shape_str(x):
    return repr(x.shape) if isinstance(x, Tensor) else repr(tuple(x.shape))


def _tolerances(options, *dtypes):
    if options["rtol"] is not None:
        return options["rtol"], options["atol"]
    return default_tolerances(*dtypes)


def _close(a, e, rtol, atol, equal_nan):
    if a.dtype.kind in "b":
        return a == e
    if a.dtype.kind in "iu" and rtol == 0 and atol == 0:
        return a == e
    with np.errstate(all="ignore"):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        # np.isclose treats infinities as equal only if they match, as PyTorch does.
    return close


def _diffs(a, e):
    """Absolute and relative differences as PyTorch computes them for its report: in the
    operands' own precision (float32 stays float32), integers exactly with the relative
    difference in float32."""
    dtype = np.result_type(a, e)
    with np.errstate(all="ignore"):
        if dtype.kind in "biu":
            abs_diff = np.abs(a.astype(np.int64) - e.astype(np.int64))
            return abs_diff, abs_diff.astype(np.float32) / np.abs(e.astype(np.float32))
        abs_diff = np.abs(a.astype(dtype) - e.astype(dtype))
        return abs_diff, abs_diff / np.abs(e.astype(dtype))


def _fmt(v, exact):
    if exact:
        return str(int(v)) if np.isfinite(v) and float(v).is_integer() else str(float(v))
    return str(float(v))


def _tensor_report(a, e, ok, rtol, atol, dtype):
    exact = rtol == 0 and atol == 0
    total, bad = ok.size, int((~ok).sum())
    abs_diff, rel_diff = _diffs(a, e)
    abs_diff = np.where(ok, 0, abs_diff)
    rel_diff = np.where(ok, 0, rel_diff)
    i_abs = np.unravel_index(_nanargmax(abs_diff), a.shape)
    i_rel = np.unravel_index(_nanargmax(rel_diff), a.shape)
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {bad} / {total} ({100 * bad / total:.1f}%)"]
    allowed_abs = "" if exact else f" (up to {atol} allowed)"
    allowed_rel = "" if exact else f" (up to {rtol} allowed)"
    lines.append(f"Greatest absolute difference: {_fmt(abs_diff[i_abs], a.dtype.kind in 'iub')} at "
                 f"index {tuple(int(i) for i in i_abs)}{allowed_abs}")
    lines.append(f"Greatest relative difference: {float(rel_diff[i_rel])} at index "
                 f"{tuple(int(i) for i in i_rel)}{allowed_rel}")
    return "\n".join(lines)


def _nanargmax(x):
    flat = x.reshape(-1)
    nan = np.isnan(flat)
    if nan.any():
        return int(np.argmax(nan))
    return int(np.argmax(flat))


def _scalar_report(a, e, rtol, atol, dtype):
    exact = rtol == 0 and atol == 0
    abs_diff, rel_diff = _diffs(np.asarray(a), np.asarray(e))
    lines = [f"Scalars are not {'equal' if exact else 'close'}!", "",
             f"Expected {e.item()} but got {a.item()}.",
             f"Absolute difference: {abs_diff.item()}" + ("" if exact else f" (up to {atol} allowed)"),
             f"Relative difference: {rel_diff.item()}" + ("" if exact else f" (up to {rtol} allowed)")]
    return "\n".join(lines)
