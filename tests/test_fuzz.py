"""A differential fuzzer: short random programs run in numtorch, in PyTorch and under vmap.

Hypothesis draws a program — an input of a random shape (0-d, size-0 and size-1 dims
included) and float dtype, maybe made non-contiguous by a view, with values from a small
set that has ties, zeros and (sometimes) NaN/inf, then a few common ops, some with a dim
or a second broadcastable operand — and checks:

- forward values, dtypes and shapes against PyTorch, or the same exception type;
- ``func.grad`` of the sum, and ``func.jvp``, against PyTorch;
- ``vmap`` against a Python loop over two examples (always, also without PyTorch) and
  against PyTorch's ``vmap``.

Each program prints as a few lines of numtorch code (``program_source``); a failure shows
hypothesis' shrunk program in that form, runnable as it stands. The PyTorch parts are
skipped without PyTorch (``pytest.importorskip`` in each check), never failed.

Runs:
- Normal suite: a bounded, derandomized number of programs (``NORMAL_EXAMPLES``), so CI
  is deterministic and takes seconds.
- Long mode, by hand: ``NUMTORCH_FUZZ_EXAMPLES=20000 python -m pytest tests/test_fuzz.py
  -s -p no:cacheprovider`` runs that many random (not derandomized) programs and stops at
  the first failure, shrunk.
- Survey mode, by hand: ``PYTHONPATH=. python tests/test_fuzz.py 20000`` runs that many programs,
  keeps going past failures and prints, per kind of disagreement, the count and the
  shortest program that shows it.

Every disagreement it found was fixed and pinned by an OpInfo sample or a case in
tests/test_edges.py; ``KNOWN`` lists where PyTorch is the odd one out, and those checks
are skipped for programs that use the op.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import numtorch  # noqa: E402
from numtorch.testing import assert_close  # noqa: E402

NORMAL_EXAMPLES = 40
LONG_EXAMPLES = int(os.environ.get("NUMTORCH_FUZZ_EXAMPLES", "0"))

# Values: ties, zeros and signs exercise the subgradient and tie rules; NaN/inf the NaN
# policies (drawn in some programs only, so most programs check ordinary values).
VALUES = (0.0, 1.0, -1.0, 0.5, -2.0, 3.0, 1.5, -0.25)
SPECIAL = (float("nan"), float("inf"), -float("inf"))

# Ops as source templates over the running value `v` (and `y`, a second operand whose
# shape broadcasts against v's): the same text runs in numtorch and PyTorch and is what
# the reproducer prints. `{d}` is a dim valid for v (or for v with one more dim: `{u}`).
UNARY = ("v.exp()", "v.sin()", "v.tanh()", "v.abs()", "v.sqrt()", "v.log()", "-v", "v * 2",
         "v + 1", "v.sigmoid()", "v.relu()", "v.clamp(-0.5, 0.5)", "v.clamp(min=0.1)",
         "v.clamp(max=0.5)", "t.where(v > 0, v, v * 0.5)", "v ** 2", "v.square()",
         "v.reciprocal()", "v.floor()", "v.sign()", "v.atan()", "v.log1p()", "v.expm1()")
BINARY = ("v + y", "v * y", "v - y", "v / y", "t.maximum(v, y)", "t.minimum(v, y)",
          "t.atan2(v, y)", "t.where(v > y, v, y)", "v.clamp(min=y)", "v ** y")
DIMMED = ("v.sum({d})", "v.mean({d})", "v.softmax({d})", "v.log_softmax({d})",
          "v.cumsum({d})", "v.logsumexp({d})", "v.amax({d})", "v.std({d})", "v.var({d})",
          "v.flip({d})", "v.sum({d}, keepdim=True)", "v.prod({d})", "v.sort({d}).values",
          "v.max({d}).values", "v.cumprod({d})", "v.norm(dim={d})", "v.unsqueeze({u})",
          "v.transpose({d}, -1)", "v.movedim({d}, 0)", "v.narrow({d}, 0, 1)")
WHOLE = ("v.sum()", "v.mean()", "v.std()", "v.var()", "v.reshape(-1)", "v.flatten()",
         "v.squeeze()", "v.norm()", "v.amax()", "v.prod()",
         "v.unsqueeze(0).expand(2, *v.shape)", "v.contiguous()", "v.clone()")
VIEWS = ("x = x.transpose(0, -1)", "x = x[..., ::2]", "x = x.expand(2, *x.shape)[1]",
         "x = x.flip(0)")

# (check, op text) -> why that check is skipped for programs containing the op.
KNOWN = {
    ("jvp", ".clamp(min=y"): "PyTorch's forward-mode clamp with tensor bounds gives 0 on a "
    "tie and passes a NaN's tangent, where its own backward (and numtorch, both modes) "
    "gives `input` the whole derivative on a tie and 0 at a NaN",
}


def _known(check, prog):
    return any(c == check and op in line for (c, op) in KNOWN for line in prog.body)


# ---------------------------------------------------------------------------------------
# Programs


class Program:
    """Source lines that make the inputs (`x`, then `y1`, `y2`, …) and the body of
    ``f(x)``; ``source()`` is the runnable reproducer."""

    def __init__(self, dtype, header, body):
        self.dtype, self.header, self.body = dtype, header, body

    def source(self, lib="numtorch"):
        lines = [f"import {lib} as t", "nan, inf = float('nan'), float('inf')", *self.header,
                 "def f(x):", "    v = x", *(f"    v = {b}" for b in self.body), "    return v"]
        return "\n".join(lines)

    def load(self, lib):
        """(x, f) for ``lib`` (numtorch or torch)."""
        ns = {}
        exec(compile(self.source(lib.__name__), "<fuzz program>", "exec"), ns)
        return ns["x"], ns["f"]

    def __repr__(self):
        return "\n" + self.source() + "\n"


def _literal(values, shape, dtype):
    flat = ", ".join(repr(v) for v in values)
    if not shape:
        return f"t.tensor({flat}, dtype=t.{dtype})"
    return f"t.tensor([{flat}], dtype=t.{dtype}).reshape({', '.join(map(str, shape))},)"


@st.composite
def shapes(draw, max_dims=3):
    return tuple(draw(st.lists(st.sampled_from((1, 2, 3, 2, 0)), max_size=max_dims)))


@st.composite
def programs(draw):
    dtype = draw(st.sampled_from(("float64", "float32")))
    pool = VALUES + (SPECIAL if draw(st.integers(0, 4)) == 0 else ())
    shape = draw(shapes())
    header = []

    def tensor_line(name, shape):
        values = draw(st.lists(st.sampled_from(pool), min_size=int(np.prod(shape)),
                               max_size=int(np.prod(shape))))
        header.append(f"{name} = {_literal(values, shape, dtype)}")
    tensor_line("x", shape)
    if shape and draw(st.booleans()):
        header.append(draw(st.sampled_from(VIEWS)))
    # Shapes are followed by running the program in numtorch as it is drawn: every dim
    # in the text is then concrete. A line numtorch refuses ends the program (the check
    # then wants PyTorch to refuse it too).
    x, f = Program(dtype, header, []).load(numtorch)
    v, body = f(x), []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("unary", "unary", "binary", "dimmed", "dimmed", "whole")))
        if kind == "unary":
            line = draw(st.sampled_from(UNARY))
        elif kind == "whole":
            line = draw(st.sampled_from(WHOLE))
        elif kind == "binary":
            name = f"y{len(header)}"
            tensor_line(name, _broadcastable(draw, tuple(v.shape)))
            line = draw(st.sampled_from(BINARY)).replace("y", name)
        else:
            n = max(v.ndim, 1)
            line = draw(st.sampled_from(DIMMED)).format(
                d=draw(st.integers(-n, n - 1)), u=draw(st.integers(-v.ndim - 1, v.ndim)))
        body.append(line)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = Program(dtype, header, body).load(numtorch)[1](x)
        except Exception:  # noqa: BLE001 - a refusal is a valid last line
            break
    return Program(dtype, header, body)


def _broadcastable(draw, shape):
    """A shape that broadcasts against ``shape``: a suffix of it, some dims made 1."""
    k = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in shape[len(shape) - k:])


# ---------------------------------------------------------------------------------------
# Checks


class Mismatch(AssertionError):
    """A disagreement; ``kind`` groups the same bug across programs (survey mode)."""

    def __init__(self, kind, message):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def _run(fn):
    """(value, None) or (None, exception), quietly."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return None, e


def _as_numpy(v):
    if isinstance(v, numtorch.Tensor):
        return np.asarray(v.detach())
    return v.detach().numpy()


def _same(kind, a, e, dtype):
    """numtorch result ``a`` against PyTorch's ``e``: dtype, shape, values (NaN == NaN)."""
    assert isinstance(a, numtorch.Tensor), f"{kind}: got {type(a).__name__}"
    if a.dtype.name != str(e.dtype).replace("torch.", ""):
        raise Mismatch(f"{kind} dtype", f"{a.dtype} but PyTorch gives {e.dtype}")
    if tuple(a.shape) != tuple(e.shape):
        raise Mismatch(f"{kind} shape", f"{tuple(a.shape)} but PyTorch gives {tuple(e.shape)}")
    _close(kind, _as_numpy(a), _as_numpy(e), dtype)


def _close(kind, a, e, dtype):
    rtol, atol = (1e-4, 1e-5) if dtype == "float32" else (1e-7, 1e-9)
    try:
        assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True, check_dtype=False)
    except AssertionError as err:
        raise Mismatch(f"{kind} values", str(err)) from None


def _raises_alike(kind, a_err, e_err):
    if (a_err is None) == (e_err is None):
        if a_err is not None and not isinstance(a_err, _KINDS.get(type(e_err), type(e_err))):
            raise Mismatch(f"{kind} exception type", f"numtorch raises {type(a_err).__name__}: "
                           f"{a_err}; PyTorch {type(e_err).__name__}: {e_err}")
        return a_err is None
    if a_err is not None:
        raise Mismatch(f"{kind} raises", f"numtorch raises {type(a_err).__name__}: {a_err}; "
                       "PyTorch gives a value")
    raise Mismatch(f"{kind} no error", f"PyTorch raises {type(e_err).__name__}: {e_err}; "
                   "numtorch gives a value")


_KINDS = {NotImplementedError: RuntimeError}


def _float_out(v):
    return v is not None and v.dtype.is_floating_point


def check_against_torch(prog, torch):
    """Forward, grad of the sum and jvp (tangent: ones) agree with PyTorch's."""
    nx, nf = prog.load(numtorch)
    tx, tf = prog.load(torch)
    a, a_err = _run(lambda: nf(nx))
    e, e_err = _run(lambda: tf(tx))
    if not _raises_alike("forward", a_err, e_err):
        return
    _same("forward", a, e, prog.dtype)
    if not _float_out(e):
        return
    a, a_err = _run(lambda: numtorch.func.grad(lambda x: nf(x).sum())(nx))
    e, e_err = _run(lambda: torch.func.grad(lambda x: tf(x).sum())(tx))
    if e_err is None:  # where PyTorch cannot differentiate, numtorch may
        _raises_alike("grad", a_err, None)
        _same("grad", a, e, prog.dtype)
    if _known("jvp", prog):
        return
    a, a_err = _run(lambda: numtorch.func.jvp(nf, (nx,), (numtorch.ones_like(nx),)))
    e, e_err = _run(lambda: torch.func.jvp(tf, (tx,), (torch.ones_like(tx),)))
    if e_err is None:
        _raises_alike("jvp", a_err, None)
        _same("jvp primal", a[0], e[0], prog.dtype)
        # A tangent has its primal's dtype; PyTorch's can differ (0-d float32 through
        # where(v > 0, v, v * 0.5) gives a float64 tangent), so compare values only there.
        if a[1].dtype != a[0].dtype:
            raise Mismatch("jvp tangent dtype", f"{a[1].dtype} for a {a[0].dtype} primal")
        _close("jvp tangent", _as_numpy(a[1]), _as_numpy(e[1]), prog.dtype)


def _examples(lib, x):
    # A second example with other values (same NaN pattern), so a batch rule that mixes
    # up examples shows.
    return lib.stack([x, x * -0.5 + 0.25])


def check_vmap_loop(prog):
    """vmap over two examples equals the loop over them (numtorch only)."""
    x, f = prog.load(numtorch)
    xs = _examples(numtorch, x)
    loop, err = _run(lambda: numtorch.stack([f(xs[0]), f(xs[1])]))
    if err is not None:
        return  # the forward check covers programs that refuse
    out, err = _run(lambda: numtorch.vmap(f)(xs))
    if err is not None:
        raise Mismatch("vmap raises", f"{type(err).__name__}: {err}")
    if tuple(out.shape) != tuple(loop.shape) or out.dtype != loop.dtype:
        raise Mismatch("vmap shape", f"{tuple(out.shape)}:{out.dtype} but the loop gives "
                       f"{tuple(loop.shape)}:{loop.dtype}")
    _close("vmap", np.asarray(out), np.asarray(loop), prog.dtype)


def check_vmap_torch(prog, torch):
    nx, nf = prog.load(numtorch)
    tx, tf = prog.load(torch)
    e, e_err = _run(lambda: torch.vmap(tf)(_examples(torch, tx)))
    if e_err is None:
        a, a_err = _run(lambda: numtorch.vmap(nf)(_examples(numtorch, nx)))
        _raises_alike("vmap vs PyTorch", a_err, None)
        _same("vmap vs PyTorch", a, e, prog.dtype)


def check(prog, torch=None):
    check_vmap_loop(prog)
    if torch is not None:
        check_against_torch(prog, torch)
        check_vmap_torch(prog, torch)


# ---------------------------------------------------------------------------------------
# The tests


def _torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


_SETTINGS = dict(deadline=None, database=None, print_blob=False,
                 suppress_health_check=list(HealthCheck))
_NORMAL = settings(max_examples=NORMAL_EXAMPLES, derandomize=True, **_SETTINGS)
_LONG = settings(max_examples=LONG_EXAMPLES or 1, derandomize=False, **_SETTINGS)


@(_LONG if LONG_EXAMPLES else _NORMAL)
@given(programs())
def test_programs_agree(prog):
    """Random programs: vmap equals the loop; with PyTorch, forward/grad/jvp/vmap agree."""
    check(prog, _torch_or_none())  # a failure prints `prog` as its reproducer


def test_program_source_runs():
    """The reproducer is runnable numtorch code that defines `x` and `f`."""
    prog = Program("float64", ["x = t.tensor([1.0, -2.0], dtype=t.float64).reshape(2,)"],
                   ["v.exp()", "v.sum(0)"])
    x, f = prog.load(numtorch)
    assert prog.source().startswith("import numtorch as t")
    assert_close(f(x), numtorch.tensor(np.exp(1.0) + np.exp(-2.0), dtype=numtorch.float64))


def test_mismatch_is_reported():
    """A disagreement is caught: a program whose vmap differs from its loop fails."""
    prog = Program("float64", ["x = t.tensor([1.0, 2.0], dtype=t.float64).reshape(2,)"],
                   ["v.sum()"])
    original = numtorch.vmap

    def wrong_vmap(f):
        return lambda xs: original(f)(xs) + 1.0
    numtorch.vmap = wrong_vmap
    try:
        with pytest.raises(Mismatch, match="vmap values"):
            check_vmap_loop(prog)
    finally:
        numtorch.vmap = original


# ---------------------------------------------------------------------------------------
# Survey mode: many programs, every kind of disagreement with its shortest program


def survey(n):
    torch = _torch_or_none()
    found, tried = {}, [0]

    @settings(max_examples=n, derandomize=False, **_SETTINGS)
    @given(programs())
    def run(prog):
        tried[0] += 1
        try:
            check(prog, torch)
        except Mismatch as m:
            kind = m.kind + " | " + " ; ".join(prog.body[-1:])
            size = len(prog.source())
            count, best = found.get(kind, (0, None))
            found[kind] = (count + 1, prog if best is None or size < len(best.source()) else best)
    run()
    print(f"{tried[0]} programs, {sum(c for c, _ in found.values())} disagreements, "
          f"{len(found)} kinds")
    for kind, (count, prog) in sorted(found.items(), key=lambda kv: -kv[1][0]):
        print(f"\n## {kind}  ({count}x)\n{prog.source()}")


if __name__ == "__main__":
    survey(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
