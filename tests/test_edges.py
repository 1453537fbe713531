"""Edge values against PyTorch: NaN, 0-d and size-0 tensors through values, grad, jvp, vmap.

Each case is a small program written once for both libraries (``lib`` is ``numtorch`` or
``torch``); the results must agree in value (NaN where PyTorch has NaN), dtype and shape.
These are the disagreements a differential fuzzer found (issue 11); the OpInfo samples
named in each comment cover the op itself, these pin the compositions (a NaN cotangent
reaching an unselected operand, a constant row under std) that samples cannot express.
Without PyTorch the module is skipped.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch
from numtorch.testing import assert_close

torch = pytest.importorskip("torch")

NAN = float("nan")


def _grad(lib, f, *args):
    return lib.func.grad(f)(*args)


def _jvp(lib, f, x, t):
    return lib.func.jvp(f, (x,), (t,))


CASES = {
    # clamp propagates NaN with scalar bounds (OpInfo clamp "nan*" samples), in jvp and vmap
    "clamp_nan": lambda t: t.tensor([NAN, 1.0, -2.0]).clamp(-0.5, 0.5),
    "clamp_min_nan": lambda t: t.tensor([NAN, 1.0]).clamp(min=0.1),
    "clamp_max_nan": lambda t: t.tensor([NAN, 1.0]).clamp(max=0.5),
    "clamp_jvp_nan": lambda t: _jvp(t, lambda x: x.clamp(-0.5, 0.5), t.tensor([NAN, 1.0, 0.0]),
                                    t.tensor([1.0, 2.0, 3.0])),
    "clamp_vmap_nan": lambda t: t.func.vmap(lambda x: x.clamp(-0.5, 0.5))(t.tensor([[NAN, 1.0]])),
    "clamp_grad_nan": lambda t: _grad(t, lambda x: x.clamp(-0.5, 0.5).sum(), t.tensor([NAN, 1.0, 0.0])),
    # the unselected operand of maximum/minimum gets an exact 0, even for a NaN cotangent
    "maximum_grad_nan_cotangent": lambda t: _grad(
        t, lambda x: t.maximum(x, t.tensor([-0.5])).sqrt().sum(), t.tensor([-1.0])),
    "minimum_grad_nan_cotangent": lambda t: _grad(
        t, lambda x: t.minimum(x, t.tensor([0.5])).neg().sqrt().sum(), t.tensor([1.0])),
    "maximum_grad_nan_operand": lambda t: t.func.grad(
        lambda x, y: t.maximum(x, y).sum(), argnums=(0, 1))(
            t.tensor([NAN, 1.0, 2.0]), t.tensor([0.0, NAN, 2.0])),
    # piecewise-constant ops have an exact zero derivative, also for inf/NaN tangents
    "floor_jvp_inf_tangent": lambda t: _jvp(t, lambda x: x.log1p().floor(), t.tensor([0.0, -1.0]),
                                            t.ones(2)),
    "round_sign_jvp_nan_tangent": lambda t: _jvp(t, lambda x: (x.round(), x.sign(), x.ceil(), x.trunc()),
                                                 t.tensor([0.5, -1.5]), t.tensor([NAN, 1.0])),
    "floor_grad_nan_cotangent": lambda t: _grad(t, lambda x: x.floor().sqrt().sum(), t.tensor([-1.5])),
    # clamp with tensor bounds is not maximum/minimum: ties give input the whole gradient,
    # a NaN in input or bound gives NaN and a zero gradient to both
    "clamp_tensor_bounds_grad": lambda t: t.func.grad(
        lambda x, lo, hi: x.clamp(lo, hi).sum(), argnums=(0, 1, 2))(
            t.tensor([1.0, 2.0, NAN, 3.0, 0.0]), t.tensor([1.0, 3.0, 0.0, NAN, -1.0]),
            t.tensor([1.0, 2.5, 0.0, 5.0, 0.0])),
    # atan2 at the origin: gradient 0 (PyTorch), not 0/0
    "atan2_grad_origin": lambda t: t.func.grad(lambda x, y: t.atan2(x, y).sum(), argnums=(0, 1))(
        t.tensor([0.0, 1.0, 0.0]), t.tensor([0.0, 2.0, 1.0])),
    "movedim_0d": lambda t: (t.tensor(2.0).movedim(0, 0), t.tensor(2.0).movedim(-1, 0)),
    # std of a constant: gradient 0 (PyTorch masks 0 * inf); var over no elements: tangent 0
    "std_grad_expanded": lambda t: _grad(t, lambda x: x.expand(2).std(), t.tensor([1.0])),
    "std_grad_constant_dim": lambda t: _grad(t, lambda x: x.std(0).sum(), t.ones(3, 2)),
    "var_jvp_empty": lambda t: _jvp(t, lambda x: x.var(dim=0), t.ones(0, 2), t.ones(0, 2)),
    # dims 0 and -1 of a 0-d tensor
    "mean_0d_dim": lambda t: (t.tensor(2.0).mean(dim=0), t.tensor(2.0).mean(dim=(-1,))),
    "std_0d_dim": lambda t: t.tensor(2.0).std(dim=0, correction=0),
    "flip_0d": lambda t: t.tensor(2.0).flip(0),
    "mask_0d": lambda t: (lambda x: (x[x > 0], x[x < 0]))(t.tensor(2.0)),
    # reductions over an empty dim that have a value
    "softmax_empty": lambda t: (t.ones(0, 2).softmax(0), t.ones(0, 2).log_softmax(0)),
    "logsumexp_empty": lambda t: t.logsumexp(t.ones(0, 2), 0),
}


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [v for o in x for v in _flat(o)]
    return [x]


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's "degrees of freedom is <= 0"
        expected = _flat(CASES[name](torch))
    actual = _flat(CASES[name](numtorch))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype.name == str(e.dtype).replace("torch.", ""), (a.dtype, e.dtype)
        assert tuple(a.shape) == tuple(e.shape), (tuple(a.shape), tuple(e.shape))
        assert_close(np.asarray(a.detach()), e.detach().numpy(), equal_nan=True)
