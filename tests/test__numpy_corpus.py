"""The NumPy corpus (tests/_numpy_corpus.py) checked against plain NumPy, run three ways:
``numtorch._numpy`` as the ``np`` module, plain ``numpy`` called on numtorch._numpy arrays, and
compiled.

Values, dtypes and the 0-d-ness of results must equal NumPy's; for error snippets the
exception must be an instance of the most specific public class NumPy raised
(``numpy.exceptions.AxisError``, ValueError, TypeError, IndexError, OverflowError, …).
The third way compiles each snippet with plain ``numpy`` on NumPy arrays (the FAQ's way):
it must compile without a graph break except where the result is data-dependent
(``_COMPILED_BREAKS``).
"""
import numpy
import pytest

import numtorch as torch
import numtorch._numpy as tnp
from _numpy_corpus import INPUTS, SNIPPETS, ERRORS, as_function


def _eager(fn):
    """numtorch._numpy, eagerly, on ndarray inputs."""
    return fn(tnp, **{k: tnp.asarray(v) if isinstance(v, numpy.ndarray) else v
                      for k, v in INPUTS.items()})


def _plain_numpy_on_ours(fn):
    """Plain ``numpy`` functions called on numtorch._numpy arrays (how code inside
    ``wrap_numpy`` runs eagerly): NEP 13/18 dispatch them to numtorch._numpy. ``np.asarray``
    and ``np.array`` are not dispatchable in NumPy and convert to NumPy arrays, so results
    computed from them may be NumPy scalars; those compare as 0-d arrays."""
    out = fn(numpy, **{k: tnp.asarray(v) if isinstance(v, numpy.ndarray) else v
                       for k, v in INPUTS.items()})
    return numpy.asarray(out) if isinstance(out, numpy.generic) else out


# Snippets whose results may legitimately be plain NumPy objects in the dispatch way:
# creation functions without array arguments and np.asarray/np.array are NumPy's own.
_NUMPY_MADE = ("np.asarray(", "np.array(", "np.zeros(", "np.ones(", "np.full(", "np.arange(",
               "np.linspace(", "np.eye(", "np.identity(", "np.allclose(", "np.array_equal(")


def _leaves(x):
    return [e for item in x for e in _leaves(item)] if isinstance(x, (tuple, list)) else [x]


def _compiled(fn):
    """``compile`` of the snippet with ``np = numpy`` on plain NumPy arrays (the FAQ's way):
    NumPy calls are traced as numtorch._numpy ops. The graph breaks are recorded in
    ``_BREAKS`` (a snippet that breaks runs part of itself in NumPy, so it proves less)."""
    from numtorch._dynamo import eval_frame

    def observe(event, **kw):
        if event == "frame":
            _BREAKS.setdefault(fn.__code__, []).extend(u.reason for u in kw["breaks"])

    eval_frame._OBSERVERS.append(observe)
    try:
        out = torch.compile(fn, backend="eager")(
            numpy, **{k: v.copy() if isinstance(v, numpy.ndarray) else v
                      for k, v in INPUTS.items()})
    finally:
        eval_frame._OBSERVERS.remove(observe)
    return out


_BREAKS: dict = {}

# Compiled snippets that graph-break, by design: their result needs data-dependent values
# (boolean-mask indexing and nonzero have data-dependent shapes; allclose/array_equal return
# a Python bool). NumPy runs them at the break (the FAQ's "falls back to NumPy"). Every
# other snippet must compile to graphs without a break.
_COMPILED_BREAKS = {
    "np.asarray(A)[np.asarray(A) > 0]", "np.asarray(A)[BOOL]",
    "a = np.asarray(A).copy()\na[a > 0] = 0\na",
    "a = np.asarray(I64).copy()\na[a > 2] = -a[a > 2]\na",
    "np.where(A > 0)", "np.allclose(A, F32, atol=1e-6)", "np.array_equal(I32, I64)",
    "np.nonzero(BOOL)", "np.argwhere(BOOL)", "np.unique(T)"}
WAYS = {"eager": _eager, "numpy_dispatch": _plain_numpy_on_ours, "compiled": _compiled}


def _reference(fn):
    return fn(numpy, **{k: v.copy() if isinstance(v, numpy.ndarray) else v
                        for k, v in INPUTS.items()})


def _tol(dt):
    return {"e": 1e-3, "f": 1e-6, "F": 1e-6}.get(dt.char, 1e-12)


def _assert_same(ours, ref, where="result"):
    if isinstance(ref, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(ref), (where, ours)
        for i, (o, r) in enumerate(zip(ours, ref)):
            _assert_same(o, r, f"{where}[{i}]")
        return
    if isinstance(ref, (bool, int, float)) and not isinstance(ref, numpy.generic):
        assert type(ours) is type(ref) and ours == ref, (where, ours, ref)
        return
    ref = numpy.asarray(ref)
    assert isinstance(ours, (tnp.ndarray, numpy.ndarray)), (where, type(ours))
    got = numpy.asarray(ours)
    assert got.dtype == ref.dtype, f"{where}: dtype {got.dtype}, NumPy gives {ref.dtype}"
    assert got.shape == ref.shape, f"{where}: shape {got.shape}, NumPy gives {ref.shape}"
    if ref.dtype.kind in "fc":
        tol = _tol(ref.dtype)
        numpy.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=where)
    else:
        numpy.testing.assert_array_equal(got, ref, err_msg=where)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("code", SNIPPETS)
def test_snippet_matches_numpy(code, way):
    fn = as_function(code)
    with numpy.errstate(all="ignore"):
        ref = _reference(fn)
    ours = WAYS[way](fn)
    if way == "compiled":
        breaks = _BREAKS.pop(fn.__code__, [])
        assert bool(breaks) == (code in _COMPILED_BREAKS), breaks
    if way == "numpy_dispatch" and not any(m in code for m in _NUMPY_MADE):
        # NumPy must have handed every call to numtorch._numpy, not converted our arrays.
        assert all(isinstance(e, tnp.ndarray) for e in _leaves(ours)), type(ours)
    _assert_same(ours, ref)


def _public(exc_type):
    """The most specific class of ``exc_type`` that user code can name."""
    for cls in exc_type.__mro__:
        if cls.__module__ in ("builtins", "numpy.exceptions", "numpy.linalg"):
            return cls
    return Exception


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("code", ERRORS)
def test_error_snippet_raises_numpys_error(code, way):
    fn = as_function(code)
    with pytest.raises(Exception) as ref:
        _reference(fn)
    expected = _public(ref.type)
    with pytest.raises(expected):
        WAYS[way](fn)
    _BREAKS.pop(fn.__code__, None)   # compiled: the error is NumPy's own, raised at a break


def test_corpus_size():
    assert len(SNIPPETS) + len(ERRORS) >= 200
