"""grad_fn names as PyTorch prints them, for composite ops too (Note [grad_fn names of
composite ops] in numtorch/_ops/_backward_names.py): the same expressions in both libraries
give the same node name."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as nt

_CASES = {
    "F.relu(x)": "ReluBackward0", "lib.relu(x)": "ReluBackward0",
    "F.mse_loss(x, t)": "MseLossBackward0", "F.mse_loss(x, t, reduction='sum')": "MseLossBackward0",
    "F.nll_loss(F.log_softmax(x, 1), y)": "NllLossBackward0", "F.cross_entropy(x, y)": "NllLossBackward0",
    "x.mean()": "MeanBackward0", "x.mean(1)": "MeanBackward1", "F.log_softmax(x, 1)": "LogSoftmaxBackward0",
    "F.softmax(x, 1)": "SoftmaxBackward0", "F.gelu(x)": "GeluBackward0", "F.silu(x)": "SiluBackward0",
    "x.t()": "TBackward0", "x.transpose(0, 1)": "TransposeBackward0", "x.permute(1, 0)": "PermuteBackward0",
    "x.unsqueeze(0)": "UnsqueezeBackward0", "x.unsqueeze(0).squeeze(0)": "SqueezeBackward1",
    "x[0]": "SelectBackward0", "lib.stack([x, x])": "StackBackward0", "x.max()": "MaxBackward1",
    "x.clamp(0, 1)": "ClampBackward1", "x.var()": "VarBackward0", "x.std()": "StdBackward0",
    "F.layer_norm(x, (4,))": "NativeLayerNormBackward0",
    "F.binary_cross_entropy_with_logits(x, t.sigmoid())": "BinaryCrossEntropyWithLogitsBackward0",
    "F.binary_cross_entropy(x.sigmoid(), t.sigmoid())": "BinaryCrossEntropyBackward0",
    "F.smooth_l1_loss(x, t)": "SmoothL1LossBackward0", "F.huber_loss(x, t)": "HuberLossBackward0",
    "F.leaky_relu(x)": "LeakyReluBackward0", "F.elu(x)": "EluBackward0", "F.softplus(x)": "SoftplusBackward0",
    "x.logsumexp(1)": "LogsumexpBackward0", "x.norm()": "LinalgVectorNormBackward0",
    "F.embedding(y, x)": "EmbeddingBackward0", "F.hardtanh(x)": "HardtanhBackward0",
    "F.relu6(x)": "HardtanhBackward0", "x.masked_fill(x > 0, 0.0)": "MaskedFillBackward0",
    "x.square()": "PowBackward0", "lib.bmm(x[None], x.t()[None])": "BmmBackward0",
    "F.batch_norm(x, None, None, training=True)": "NativeBatchNormBackward0",
    "x.min()": "MinBackward1", "x * 2": "MulBackward0", "x.sum()": "SumBackward0",
}


def _name(lib, expr):
    rng = np.random.default_rng(0)
    env = dict(lib=lib, F=lib.nn.functional,
               x=lib.tensor(rng.standard_normal((3, 4)), requires_grad=True),
               t=lib.tensor(rng.standard_normal((3, 4))), y=lib.tensor([0, 1, 2]))
    return eval(expr, env).grad_fn.name()   # noqa: S307 - fixed expressions above


@pytest.mark.parametrize("expr", sorted(_CASES))
def test_grad_fn_name_is_pytorchs(expr):
    assert _name(nt, expr) == _CASES[expr]


@pytest.mark.parametrize("expr", sorted(_CASES))
def test_grad_fn_name_matches_torch(expr):
    torch = pytest.importorskip("torch")
    assert _name(nt, expr) == _name(torch, expr)


def test_a_passed_through_input_keeps_its_node():
    x = nt.randn(3, requires_grad=True)
    y = x * 2
    assert nt.nn.functional.dropout(y, 0.0) is y or y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.name() == "MulBackward0"


def test_names_do_not_change_gradients():
    x = nt.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=nt.float64, requires_grad=True)
    loss = nt.nn.functional.mse_loss(nt.relu(x), nt.zeros(2, 2, dtype=nt.float64))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.5, 0.0], [0.25, 1.5]])
