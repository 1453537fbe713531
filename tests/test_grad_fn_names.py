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
    # composites named since (the decorator takes tuples: split, topk, max(dim))
    "F.selu(x)": "EluBackward0", "F.celu(x)": "CeluBackward0", "F.mish(x)": "MishBackward0",
    "F.logsigmoid(x)": "LogSigmoidBackward0", "F.hardsigmoid(x)": "HardsigmoidBackward0",
    "F.hardswish(x)": "HardswishBackward0", "F.threshold(x, 0.1, 2.0)": "ThresholdBackward0",
    "F.glu(x)": "GluBackward0", "F.group_norm(x[None], 3)": "NativeGroupNormBackward0",
    "x.lerp(t, 0.5)": "LerpBackward0", "x.lerp(t, t.sigmoid())": "LerpBackward1",
    "lib.hypot(x, t)": "HypotBackward0", "lib.fmax(x, t)": "FmaxBackward0", "lib.fmin(x, t)": "FminBackward0",
    "lib.logaddexp(x, t)": "LogaddexpBackward0", "lib.xlogy(x, t)": "XlogyBackward0",
    "lib.xlogy(x, 2.0)": "XlogyBackward2", "lib.xlogy(2.0, x)": "XlogyBackward1",
    "x.scatter(0, y[None], x[:1])": "ScatterBackward0", "x.scatter(0, y[None], 1.5)": "ScatterBackward1",
    "x.index_select(0, y)": "IndexSelectBackward0", "x.cumprod(0)": "CumprodBackward0",
    "x.repeat(1, 2)": "RepeatBackward0", "x.roll(1, 0)": "RollBackward0", "x.tril()": "TrilBackward0",
    "x.triu(1)": "TriuBackward0", "x.unbind(0)[1]": "UnbindBackward0", "x.split(2, 1)[1]": "SplitBackward0",
    "x.split([1, 3], 1)[1]": "SplitWithSizesBackward0", "x.chunk(2, 1)[0]": "SplitBackward0",
    "x.topk(2)[0]": "TopkBackward0", "x.median()": "MedianBackward0", "x.median(0)[0]": "MedianBackward1",
    "x.max(0)[0]": "MaxBackward0", "x.min(1).values": "MinBackward0", "lib.max(x, t)": "MaximumBackward0",
    "x[:, :3].trace()": "TraceBackward0", "lib.addmm(x[:, :3], t, t.t()[:, :3])": "AddmmBackward0",
    # in place (Note [grad_fn of an in-place op]): the op's node, PyTorch's in-place overloads
    "x.clone().relu_()": "ReluBackward0", "F.relu(x.clone(), inplace=True)": "ReluBackward0",
    "x.clone().add_(t)": "AddBackward0", "x.clone().mul_(2)": "MulBackward0",
    "x.clone().exp_()": "ExpBackward0", "x.clone().clamp_(0, 1)": "ClampBackward1",
    "x.clone().sigmoid_()": "SigmoidBackward0", "x.clone().masked_fill_(t > 0, 0.0)": "MaskedFillBackward0",
    "F.hardtanh(x.clone(), inplace=True)": "HardtanhBackward0",
    "F.leaky_relu(x.clone(), 0.1, inplace=True)": "LeakyReluBackward1",
    "F.elu(x.clone(), inplace=True)": "EluBackward1", "F.selu(x.clone(), inplace=True)": "EluBackward1",
    "F.celu(x.clone(), inplace=True)": "CeluBackward1",
    "F.threshold(x.clone(), 0.1, 2.0, inplace=True)": "ThresholdBackward1",
    "F.silu(x.clone(), inplace=True)": "SiluBackward0", "F.hardswish(x.clone(), inplace=True)": "HardswishBackward0",
    "x.clone().copy_(t * x)": "CopyBackwards", "x.clone().copy_(t)": "CopyBackwards",
}


def _name(lib, expr):
    rng = np.random.default_rng(0)
    env = dict(lib=lib, F=lib.nn.functional,
               x=lib.tensor(rng.standard_normal((3, 4)), requires_grad=True),
               t=lib.tensor(rng.standard_normal((3, 4))), y=lib.tensor([0, 1, 2]))
    # PyTorch's name() of its one C++-only node carries the namespace ("torch::autograd::
    # CopyBackwards"); its type's name, which repr prints, does not
    return eval(expr, env).grad_fn.name().removeprefix("torch::autograd::")   # noqa: S307


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
