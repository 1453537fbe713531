"""Differential tests: every OpInfo sample run in PyTorch and in numtorch.

Values, result dtypes, raised exception types and (float64) gradients must agree. PyTorch
is an optional oracle: without it this module is skipped, never failed.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch
from numtorch.testing import assert_close
from numtorch.testing._gradcheck import real_outputs
from numtorch.testing.opinfo import op_db

torch = pytest.importorskip("torch")

F64 = numtorch.float64


def _marks(op, column, dtype):
    d = op.decoration(column, dtype, -1)
    if d is None:
        return ()
    return (pytest.mark.skip(reason=d.reason) if d.kind == "skip"
            else pytest.mark.xfail(strict=True, reason=d.reason),)


def _oracle_params(column, dtypes=None, ops=None):
    return [pytest.param(op, dtype, marks=_marks(op, column, dtype), id=f"{op.name}-{dtype.name}")
            for op in op_db if (ops is None or ops(op)) and op.torch_op is not False
            for dtype in op.dtypes if dtypes is None or dtype in dtypes]


# ---------------------------------------------------------------------------------------
# numtorch samples -> PyTorch calls


def _convert(x):
    """Non-tensor sample arguments for PyTorch: dtypes mapped, containers walked."""
    if isinstance(x, numtorch.dtype):
        return getattr(torch, x.name)
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return tuple(_convert(v) for v in x)
    if isinstance(x, list):
        return [_convert(v) for v in x]
    return x


def torch_call(fn, s, requires_grad=False):
    """Run ``fn`` on the PyTorch twin of sample ``s``; returns (output, twin tensors in the
    order of ``s.tensors()``)."""
    made = []

    def twin(t):
        tt = torch.from_numpy(np.array(t.detach(), copy=True))
        if requires_grad and t.requires_grad:
            tt.requires_grad_()
        made.append(tt)
        return tt
    m = s.map(twin)
    out = fn(_convert(m.input), *_convert(m.args), **{k: _convert(v) for k, v in m.kwargs.items()})
    return out, made


def torch_fn(op):
    """The PyTorch callable for ``op``: its ``torch_op``, the same-named function, or (for
    methods) ``op.op`` itself, which only calls Tensor methods and so runs on torch tensors."""
    if op.torch_op is not None:
        return op.torch_op(torch)
    if op.torch_name is not None and op.op is getattr(numtorch, op.torch_name, None):
        return getattr(torch, op.torch_name)
    return op.op


def _leaves(out):
    if isinstance(out, (tuple, list)) and not isinstance(out, (torch.Size, numtorch.Size)):
        return [v for o in out for v in _leaves(o)]
    return [out]


def _dtype_name(d):
    return str(d).replace("torch.", "")


def _compare(op, actual, expected, context):
    a_leaves, e_leaves = _leaves(actual), _leaves(expected)
    assert len(a_leaves) == len(e_leaves), f"{context}: {len(a_leaves)} outputs vs {len(e_leaves)}"
    for a, e in zip(a_leaves, e_leaves):
        if isinstance(e, torch.Tensor):
            assert isinstance(a, numtorch.Tensor), f"{context}: got {type(a).__name__}"
            assert a.dtype.name == _dtype_name(e.dtype), (
                f"{context}: dtype {a.dtype} but PyTorch gives {e.dtype}")
            assert tuple(a.shape) == tuple(e.shape), (
                f"{context}: shape {tuple(a.shape)} but PyTorch gives {tuple(e.shape)}")
            if not op.nondeterministic:
                tol = op.tolerance(a.dtype)
                kw = dict(rtol=tol[0], atol=tol[1]) if tol else {}
                assert_close(np.asarray(a.detach()), e.detach().resolve_conj().numpy(), equal_nan=True,
                             msg=lambda m: f"{context}: {m}", **kw)
        elif isinstance(e, torch.dtype):
            assert a.name == _dtype_name(e), f"{context}: {a} but PyTorch gives {e}"
        elif isinstance(e, torch.Size):
            assert tuple(a) == tuple(e), f"{context}: {a} but PyTorch gives {e}"
        else:
            assert a == e or (isinstance(e, float) and np.isnan(e) and np.isnan(a)), (
                f"{context}: {a!r} but PyTorch gives {e!r}")


# PyTorch's NotImplementedError ("... not implemented for 'Bool'") is a RuntimeError.
_KINDS = {NotImplementedError: RuntimeError}


@pytest.mark.parametrize("op, dtype", _oracle_params("oracle"))
def test_matches_torch(op, dtype):
    """Each sample: the values and dtypes PyTorch gives, or the exception type it raises."""
    fn = torch_fn(op)
    for i, s in enumerate(op.samples(dtype)):
        context = f"{op.name} {dtype.name} sample{i} {s}"
        try:
            expected, _ = torch_call(fn, s)
        except Exception as e:  # noqa: BLE001 - PyTorch refuses: numtorch must too
            with pytest.raises(Exception) as info:
                s.call(op.op)
            assert isinstance(info.value, _KINDS.get(type(e), type(e))), (
                f"{context}: PyTorch raises {type(e).__name__}: {e}; numtorch raises "
                f"{type(info.value).__name__}: {info.value}")
            continue
        _compare(op, s.call(op.op), expected, context)


def _torch_real_outputs(out):
    real = []
    for o in _leaves(out):
        if isinstance(o, torch.Tensor) and o.is_complex():
            real += [o.real, o.imag]
        elif isinstance(o, torch.Tensor) and o.is_floating_point():
            real.append(o)
    return real


@pytest.mark.parametrize("op, dtype", _oracle_params(
    "oracle", dtypes=[F64], ops=lambda op: op.supports_grad and not op.nondeterministic))
def test_gradients_match_torch(op, dtype):
    """The gradient of sum(w * output) w.r.t. each float input equals PyTorch's."""
    fn = torch_fn(op)
    for i, s in enumerate(op.samples(dtype, requires_grad=True)):
        leaves = [t for t in s.tensors() if t.requires_grad]
        outs = real_outputs(s.call(op.op)) if s.grad and leaves else []
        if not any(o.requires_grad for o in outs):
            continue
        rng = np.random.default_rng(i)
        weights = [rng.standard_normal(tuple(o.shape)) for o in outs]
        loss = sum((o * numtorch.from_numpy(w)).sum() for o, w in zip(outs, weights))
        grads = numtorch.autograd.grad(loss, leaves, allow_unused=True)
        t_out, twins = torch_call(fn, s, requires_grad=True)
        t_outs = _torch_real_outputs(t_out)
        t_loss = sum((o * torch.from_numpy(w)).sum() for o, w in zip(t_outs, weights))
        t_leaves = [t for t in twins if t.requires_grad]
        try:
            expected = torch.autograd.grad(t_loss, t_leaves, allow_unused=True)
        except RuntimeError:
            continue  # PyTorch cannot differentiate this call (e.g. scatter with a larger src)
        for k, (g, e) in enumerate(zip(grads, expected)):
            context = f"{op.name} sample{i} {s} input {k}"
            e = torch.zeros_like(t_leaves[k]) if e is None else e
            g = numtorch.zeros_like(leaves[k]) if g is None else g
            assert_close(np.asarray(g), e.numpy(), rtol=1e-7, atol=1e-7,
                         msg=lambda m: f"{context}: {m}")
