"""`repr` of tensors in PyTorch's format: ``tensor([1.0000, 2.5000], requires_grad=True)``.

`tensor_repr` reproduces ``torch/_tensor_str.py`` character for character: one formatter
per tensor (two for complex: real and imaginary parts), elements right-aligned to a common
width, rows wrapped at ``linewidth``, large tensors summarized with ``...``, and the
``dtype=`` / ``size=`` / ``device=`` / ``grad_fn=`` suffixes. `set_printoptions` changes
the options as PyTorch's does. Tensors inside transforms print as functorch's wrappers do
(``BatchedTensor(lvl=1, bdim=0, value=...)``).
"""
from __future__ import annotations

import contextlib
import math
import textwrap

import numpy as np
from numpy import ndarray

from . import dtypes as _dt
from .meta import MetaArray
from .tensor import Tensor


class _PrintOptions:
    """The current options (PyTorch's ``PRINT_OPTS``)."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision, self.threshold, self.edgeitems, self.linewidth = 4, 1000, 3, 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set options for printing tensors, as ``torch.set_printoptions``.

    Args:
        precision: digits after the decimal point of floating values (default 4).
        threshold: element count above which a tensor is summarized (default 1000).
        edgeitems: items shown at each end of a summarized dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``, applied before the options above.
        sci_mode: True/False forces scientific notation on/off; None (the default, and
            what every call without it restores) lets the values decide.

    >>> import numtorch as torch
    >>> torch.set_printoptions(precision=2)
    >>> torch.tensor([1.12345])
    tensor([1.12])
    >>> torch.set_printoptions(profile="default")
    """
    for name, value in _PROFILES.get(profile, {}).items():
        setattr(PRINT_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as keyword arguments for `set_printoptions`."""
    return {name: getattr(PRINT_OPTS, name) for name in _PrintOptions.__slots__}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options (restored on exit)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---------------------------------------------------------------------------------------
# Note [Element width and scientific notation]
# One formatter serves every element of a tensor (for complex ones, one for the real
# parts and one for the imaginary parts), so all elements share one width; shorter ones
# are padded on the left. Only the nonzero finite values decide the mode and the width:
#  * int mode: all of them are integral. Elements print as ``3.`` (``%.0f`` plus a dot
#    that marks the dtype as floating; nan/inf get no dot) and the width is the longest
#    ``%.0f`` plus one.
#  * sci mode (``%.{precision}e``): max/min of their absolute values > 1000, or
#    max > 1e8, or min < 1e-4; ``set_printoptions(sci_mode=...)`` overrides the choice.
#  * otherwise ``%.{precision}f``.
# Zeros, nan and inf do not count, so they may be wider than the width (``-0.``, ``-inf``)
# and then misalign, as in PyTorch; with no nonzero finite value at all the width is 1 and
# int mode holds even if sci_mode was forced. Integer and bool tensors use ``str`` of each
# value. A summarized tensor's formatter sees only the elements that are shown.
# The longest string of a fixed or scientific format comes from the largest or smallest
# magnitude of either sign (rounding is monotonic), so only those few values are
# formatted to find the width, however many elements there are.


def _extremes(v: ndarray) -> list:
    """The values whose formatted strings are the longest: extreme magnitudes per sign."""
    out = []
    for part in (v[v > 0], v[v < 0]):
        if part.size:
            out += [part.max().item(), part.min().item()]
    return out


class _Formatter:
    """Formats the elements of one tensor (or one part of a complex tensor)."""

    def __init__(self, values: ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        p = PRINT_OPTS.precision
        if not self.floating:
            if values.dtype.kind == "b":
                if values.size:
                    self.width = 4 if values.all() else 5
            else:
                self.width = max([1] + [len(str(x)) for x in _extremes(values)])
            return
        nz = values[np.isfinite(values) & (values != 0)]
        if not nz.size:
            return
        self.int_mode = bool((nz == np.ceil(nz)).all())
        mags = np.abs(nz.astype(np.float64))
        lo, hi = float(mags.min()), float(mags.max())
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        extremes = _extremes(nz)
        if self.sci_mode:
            self.width = max(len(f"{x:.{p}e}") for x in extremes)
        elif self.int_mode:
            self.width = max(len(f"{x:.0f}") + 1 for x in extremes)
        else:
            self.width = max(len(f"{x:.{p}f}") for x in extremes)

    def format(self, value) -> str:
        p = PRINT_OPTS.precision
        if not self.floating:
            s = f"{value}"
        elif self.sci_mode:
            s = f"{value:{self.width}.{p}e}"
        elif self.int_mode:
            s = f"{value:.0f}"
            if math.isfinite(value):
                s += "."
        else:
            s = f"{value:.{p}f}"
        return s.rjust(self.width)


def _shown_indices(n: int, edgeitems: int):
    """Indices of one dimension of length ``n`` shown when summarized."""
    if n > 2 * edgeitems:
        return np.r_[0:edgeitems, n - edgeitems:n]
    return np.arange(n)


def _summarized(a: ndarray) -> ndarray:
    """The elements a summarized ``a`` shows: ``edgeitems`` at both ends of every dim."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1 and not e:
        return a          # PyTorch's a[:0] ++ a[-0:]: every element
    if not e:
        return a[(slice(0, 0),) * a.ndim]
    return a[np.ix_(*(_shown_indices(n, e) for n in a.shape))]


class _Printer:
    """The body of a non-empty tensor: nested brackets of formatted elements."""

    def __init__(self, a: ndarray):
        self.summarize = a.size > PRINT_OPTS.threshold
        shown = _summarized(a) if self.summarize else a
        if a.dtype.kind == "c":
            self.real, self.imag = _Formatter(shown.real), _Formatter(shown.imag)
        else:
            self.real, self.imag = _Formatter(shown), None

    def element(self, value) -> str:
        if self.imag is None:
            return self.real.format(value)
        re = self.real.format(value.real)
        im = (self.imag.format(value.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im

    def nested(self, a: ndarray, indent: int) -> str:
        if a.ndim == 0:
            return self.element(a.item())
        if a.ndim == 1:
            return self.vector(a, indent)
        e, n = PRINT_OPTS.edgeitems, a.shape[0]
        if self.summarize and n > 2 * e:
            slices = ([self.nested(a[i], indent + 1) for i in range(e)] + ["..."]
                      + [self.nested(a[i], indent + 1) for i in range(n - e, n)])
        else:
            slices = [self.nested(a[i], indent + 1) for i in range(n)]
        return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"

    def vector(self, a: ndarray, indent: int) -> str:
        width = self.real.width + 2
        if self.imag is not None:
            width += self.imag.width + 1
        per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / width))
        e, n = PRINT_OPTS.edgeitems, a.shape[0]
        if self.summarize and not e:
            data = ["..."]
        elif self.summarize and n > 2 * e:
            data = ([self.element(v) for v in a[:e].tolist()] + [" ..."]
                    + [self.element(v) for v in a[n - e:].tolist()])
        else:
            data = [self.element(v) for v in a.tolist()]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    """Append ``, key=value`` suffixes, starting a new line where one would pass linewidth."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1    # PyTorch's count, off by 2 on the first line
    for suffix in suffixes:
        if last + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def _parameter_base(cls):
    """``nn.Parameter`` if ``cls`` is it or derives from it, else None (no import of nn)."""
    return next((c for c in cls.__mro__ if c.__name__ == "Parameter"
                 and c.__module__ == "numtorch.nn.parameter"), None)


def _has_default_dtype(dtype) -> bool:
    default = _dt.get_default_dtype()
    default_complex = _dt.complex128 if default is _dt.float64 else _dt.complex64
    return dtype in (default, default_complex, _dt.int64, _dt.bool_)


# functorch's names for the wrappers of the transforms numtorch shares with it.
_WRAPPER_NAMES = {"BatchTracer": "BatchedTensor", "GradTracer": "GradTrackingTensor",
                  "JvpTracer": "GradTrackingTensor", "FunctionalTracer": "FunctionalTensor"}


def _tracer_repr(d) -> str:
    """A tensor inside a transform: the wrapper, its level and the value it stands for."""
    cls = type(d).__name__
    name = _WRAPPER_NAMES.get(cls, cls)
    level = getattr(getattr(d, "interp", None), "level", "?")
    try:
        inner = d.inner()
    except Exception:   # a tracer that cannot say what it stands for
        inner = None
    if inner is None:
        try:
            desc = f"shape={tuple(d.shape)}, dtype={_dt.from_numpy(d.dtype)}"
        except Exception:
            desc = "..."
        return f"{name}(lvl={level}, {desc})"
    value = repr(inner)
    if name == "FunctionalTensor":
        return f"{name}(lvl={level}, value=\\\n{value})"
    bdim = f"bdim={d.bdim}, " if hasattr(d, "bdim") else ""
    return f"{name}(lvl={level}, {bdim}value=\n{textwrap.indent(value, '    ')}\n)"


def tensor_repr(t) -> str:
    """``repr(t)`` as PyTorch prints it."""
    d = t._data
    if d.__class__ is not ndarray and not isinstance(d, MetaArray):
        return _tracer_repr(d)
    cls = type(t)
    param = _parameter_base(cls)
    plain = cls is Tensor or cls is param
    prefix = "tensor(" if plain else cls.__name__ + "("
    indent = len(prefix)
    dtype = _dt.from_numpy(d.dtype)
    suffixes = []
    meta = isinstance(d, MetaArray)
    if meta or d.size == 0:
        # No elements show the dtype, so only the default float dtype goes unsaid.
        if meta:
            suffixes.append("device='meta'")
        if meta or d.ndim != 1:
            suffixes.append(f"size={tuple(d.shape)}")
        if dtype is not _dt.get_default_dtype():
            suffixes.append(f"dtype={dtype}")
        body = "..." if meta else "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(d.shape)}")
        if not _has_default_dtype(dtype):
            suffixes.append(f"dtype={dtype}")
        body = _Printer(d).nested(d, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:   # the flag itself: `requires_grad` fails on meta payloads
        suffixes.append("requires_grad=True")
    out = _add_suffixes(prefix + body, suffixes, indent)
    if param is not None:   # Parameter.__repr__; a subclass also shows its name, as PyTorch's
        out = "Parameter containing:\n" + (out if plain else f"Parameter({out})")
    return out
