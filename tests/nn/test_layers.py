"""Layers vs PyTorch with the same weights: outputs, gradients, running statistics, modes,
initialization ranges and reprs."""
import numpy as np
import pytest

import numtorch as nt
import numtorch.nn as nn
import numtorch.nn.functional as F
from nn_helpers import arr, close, oracle, tol

rng = np.random.default_rng(0)


def twins(make, dtype="float64"):
    """``make(lib)`` for both libraries, with PyTorch's state copied into ours."""
    torch = oracle()
    theirs = make(torch.nn).to(getattr(torch, dtype))
    ours = make(nn).to(getattr(nt, dtype))
    ours.load_state_dict({k: nt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def run_both(ours, theirs, x, dtype="float64", rtol=None, atol=None):
    """Forward and backward both; compare outputs, input grads and parameter grads."""
    torch = oracle()
    d_rtol, d_atol = tol(dtype)
    rtol, atol = rtol or d_rtol, atol or d_atol
    a = nt.tensor(np.asarray(x, dtype=dtype), requires_grad=True)
    b = torch.tensor(np.asarray(x, dtype=dtype), requires_grad=True)
    out, ref = ours(a), theirs(b)
    close(out, ref, rtol, atol)
    g = rng.standard_normal(tuple(ref.shape)).astype(dtype)
    (out * nt.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    close(a.grad, b.grad, rtol, atol)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=atol, err_msg=n)
    return out, ref


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_linear_and_bilinear_match_torch(dtype):
    torch = oracle()
    run_both(*twins(lambda N: N.Linear(5, 3), dtype), rng.standard_normal((4, 2, 5)), dtype)
    run_both(*twins(lambda N: N.Linear(5, 3, bias=False), dtype), rng.standard_normal((4, 5)), dtype)
    ours, theirs = twins(lambda N: N.Bilinear(3, 2, 4), dtype)
    x1, x2 = rng.standard_normal((5, 3)).astype(dtype), rng.standard_normal((5, 2)).astype(dtype)
    close(ours(nt.tensor(x1), nt.tensor(x2)), theirs(torch.tensor(x1), torch.tensor(x2)), *tol(dtype))


def test_linear_init_bounds_and_errors():
    m = nn.Linear(400, 30)
    bound = 1 / np.sqrt(400)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound      # U(-b, b) has std b/sqrt(3)
    assert repr(m) == "Linear(in_features=400, out_features=30, bias=True)"
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 400x30\)"):
        m(nt.ones(2, 3))
    assert nn.Identity(3, foo=1)(m.weight) is m.weight


CONVS = [
    lambda N: N.Conv1d(3, 4, 3),
    lambda N: N.Conv1d(4, 6, 4, stride=2, padding=1, groups=2, bias=False),
    lambda N: N.Conv1d(3, 2, 4, padding="same", dilation=2),
    lambda N: N.Conv1d(3, 2, 3, padding=2, padding_mode="circular"),
    lambda N: N.Conv2d(3, 4, 3, padding=1),
    lambda N: N.Conv2d(3, 4, (2, 3), stride=(2, 1), padding="valid"),
    lambda N: N.Conv2d(4, 4, 3, padding="same", groups=4),
    lambda N: N.Conv2d(3, 2, (4, 3), padding="same"),
    lambda N: N.Conv2d(3, 2, 3, padding=1, padding_mode="reflect"),
    lambda N: N.Conv2d(3, 2, 3, padding=(2, 1), padding_mode="replicate", dilation=(1, 2)),
]


@pytest.mark.parametrize("make", CONVS, ids=lambda f: repr(f(nn)))
def test_conv_layers_match_torch(make):
    ours, theirs = twins(make)
    assert repr(ours) == repr(theirs)
    c = ours.in_channels
    shape = (2, c, 9) if isinstance(ours, nn.Conv1d) else (2, c, 7, 8)
    run_both(ours, theirs, rng.standard_normal(shape))


def test_conv_float32_and_init_and_errors():
    run_both(*twins(lambda N: N.Conv2d(3, 5, 3, stride=2), "float32"),
             rng.standard_normal((2, 3, 9, 9)), "float32")
    m = nn.Conv2d(8, 4, 3)
    bound = 1 / np.sqrt(8 * 9)
    assert np.abs(arr(m.weight)).max() <= bound and np.abs(arr(m.bias)).max() <= bound
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="Invalid padding string 'foo', should be one of"):
        nn.Conv2d(4, 4, 3, padding="foo")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(4, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(4, 4, 3, padding_mode="foo")


def test_pooling_layers_match_torch():
    x = rng.standard_normal((2, 3, 8, 9))
    for make in (lambda N: N.MaxPool2d(2), lambda N: N.MaxPool2d(3, stride=2, padding=1),
                 lambda N: N.AvgPool2d(2), lambda N: N.AvgPool2d(3, 2, 1, count_include_pad=False),
                 lambda N: N.AdaptiveAvgPool2d((3, 4)), lambda N: N.AdaptiveAvgPool2d((2, None))):
        ours, theirs = twins(make)
        assert repr(ours) == repr(theirs)
        run_both(ours, theirs, x)
    for make in (lambda N: N.MaxPool1d(2), lambda N: N.AvgPool1d(3, 1), lambda N: N.AdaptiveAvgPool1d(4)):
        run_both(*twins(make), rng.standard_normal((2, 3, 10)))


# ---------------------------------------------------------------------------------------
# normalization layers

@pytest.mark.parametrize("make,shape", [
    (lambda N: N.BatchNorm1d(3), (6, 3)), (lambda N: N.BatchNorm1d(3, momentum=None), (5, 3, 4)),
    (lambda N: N.BatchNorm2d(3, affine=False), (4, 3, 2, 5)),
    (lambda N: N.BatchNorm2d(3, track_running_stats=False), (4, 3, 2, 2)),
    (lambda N: N.BatchNorm1d(3, eps=1e-3, momentum=0.5, bias=False), (6, 3)),
], ids=["bn1d", "bn1d-cumulative", "bn2d-no-affine", "bn2d-no-stats", "bn1d-no-bias"])
def test_batchnorm_train_and_eval_match_torch(make, shape):
    ours, theirs = twins(make)
    assert repr(ours) == repr(theirs)
    for step in range(3):
        x = rng.standard_normal(shape) * (step + 1) + step
        for p in list(ours.parameters()) + list(theirs.parameters()):
            p.grad = None
        run_both(ours, theirs, x)
    for (n, b), (_, c) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-12, err_msg=n)
    ours.eval(), theirs.eval()
    for p in list(ours.parameters()) + list(theirs.parameters()):
        p.grad = None
    run_both(ours, theirs, rng.standard_normal(shape))


def test_batchnorm_eval_uses_running_stats_and_checks_input():
    bn = nn.BatchNorm1d(2)
    x = nt.tensor([[1.0, 2.0], [3.0, 6.0]])
    bn(x)
    np.testing.assert_allclose(bn.running_mean.numpy(), [0.2, 0.4], rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), [0.9 + 0.1 * 2.0, 0.9 + 0.1 * 8.0], rtol=1e-6)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    y = bn(x).detach().numpy()
    expected = (x.numpy() - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    assert bn.num_batches_tracked.item() == 1
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(nt.ones(2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3).train()(nt.ones(1, 3))


def test_batchnorm_state_dict_has_num_batches_tracked_and_loads_old_checkpoints():
    bn = nn.BatchNorm1d(3)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    old = {k: v for k, v in nn.BatchNorm1d(3).state_dict().items() if k != "num_batches_tracked"}
    old = __import__("collections").OrderedDict(old)
    old._metadata = {"": {"version": 1}}
    bn.load_state_dict(old)  # version-1 checkpoints lack the counter: no missing-key error


def test_layernorm_groupnorm_rmsnorm_modules_match_torch():
    x = rng.standard_normal((3, 4, 6)) * 2 + 1
    for make in (lambda N: N.LayerNorm(6), lambda N: N.LayerNorm((4, 6), elementwise_affine=False),
                 lambda N: N.LayerNorm(6, bias=False), lambda N: N.GroupNorm(2, 4),
                 lambda N: N.GroupNorm(4, 4, affine=False), lambda N: N.RMSNorm(6)):
        ours, theirs = twins(make)
        with nt.no_grad():
            for p in ours.parameters():
                p.add_(nt.tensor(rng.standard_normal(tuple(p.shape))))
        theirs.load_state_dict({k: oracle().tensor(v.numpy()) for k, v in ours.state_dict().items()})
        assert repr(ours) == repr(theirs)
        run_both(ours, theirs, x)


# ---------------------------------------------------------------------------------------
# embedding, dropout, activations, flatten

def test_embedding_module_matches_torch_and_zeroes_padding_row():
    torch = oracle()
    m = nn.Embedding(10, 3, padding_idx=-2)
    assert m.padding_idx == 8 and (arr(m.weight[8]) == 0).all()
    assert repr(m) == repr(torch.nn.Embedding(10, 3, padding_idx=-2))
    ours, theirs = twins(lambda N: N.Embedding(10, 3, padding_idx=1))
    idx = rng.integers(0, 10, (4, 5))
    out, ref = ours(nt.tensor(idx)), theirs(torch.tensor(idx))
    close(out, ref)
    (out ** 2).sum().backward()
    (ref ** 2).sum().backward()
    close(ours.weight.grad, theirs.weight.grad)
    frozen = nn.Embedding.from_pretrained(nt.eye(4))
    assert not frozen.weight.requires_grad and frozen(nt.tensor([2])).tolist() == [[0.0, 0.0, 1.0, 0.0]]
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=5)


def test_dropout_modules_follow_training_mode():
    x = nt.ones(1000)
    d = nn.Dropout(0.25)
    assert repr(d) == "Dropout(p=0.25, inplace=False)"
    y = d(x).numpy()
    assert 0.2 < (y == 0).mean() < 0.3 and np.allclose(y[y != 0], 1 / 0.75)
    d.eval()
    assert d(x) is x
    assert nn.Dropout2d(0.5).eval()(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -1"):
        nn.Dropout(p=-1)


ACTIVATION_MODULES = [
    lambda N: N.ReLU(), lambda N: N.ReLU6(), lambda N: N.LeakyReLU(0.2), lambda N: N.ELU(0.7),
    lambda N: N.SELU(), lambda N: N.CELU(1.5), lambda N: N.GELU(), lambda N: N.GELU("tanh"),
    lambda N: N.SiLU(), lambda N: N.Mish(), lambda N: N.Softplus(2.0, 10.0),
    lambda N: N.Sigmoid(), lambda N: N.Tanh(), lambda N: N.Hardtanh(-0.5, 2.0),
    lambda N: N.Hardsigmoid(), lambda N: N.Hardswish(), lambda N: N.LogSigmoid(),
    lambda N: N.Softsign(), lambda N: N.Tanhshrink(), lambda N: N.Threshold(0.1, 20.0),
    lambda N: N.GLU(0), lambda N: N.Softmax(dim=1), lambda N: N.LogSoftmax(dim=0),
    lambda N: N.Softmin(dim=1), lambda N: N.Flatten(0), lambda N: N.Unflatten(1, (2, 3)),
    lambda N: N.Identity(),
]


@pytest.mark.parametrize("make", ACTIVATION_MODULES, ids=lambda f: repr(f(nn)))
def test_activation_and_reshape_modules_match_torch(make):
    ours, theirs = twins(make)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, rng.standard_normal((4, 6)) * 3, rtol=1e-7)


def test_inplace_activation_module_and_flatten_errors():
    x = nt.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 2.0]
    assert repr(nn.ReLU(True)) == "ReLU(inplace=True)"
    with pytest.raises(RuntimeError, match=r"unflatten: Provided sizes \[2, 2\] don't multiply up"):
        nn.Unflatten(1, (2, 2))(nt.ones(2, 5))
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints"):
        nn.Unflatten(1, 4)


def test_layers_accept_meta_inputs_for_shape_inference():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 10),
                          nn.LayerNorm(10), nn.Dropout(0.5)).to("meta")
    out = model(nt.empty(2, 3, 8, 8, device="meta"))
    assert out.is_meta and tuple(out.shape) == (2, 10)
    emb = nn.Embedding(5, 4, device="meta")
    assert emb(nt.zeros(3, dtype=nt.int64, device="meta")).shape == (3, 4)


def test_softmax_module_default_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = nn.Softmax()(nt.ones(2, 3))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1 / 3), rtol=1e-6)


def test_functional_and_module_agree():
    x = nt.randn(3, 4)
    np.testing.assert_array_equal(nn.GELU()(x).numpy(), F.gelu(x).numpy())
    np.testing.assert_array_equal(nn.LayerNorm(4, elementwise_affine=False)(x).numpy(),
                                  F.layer_norm(x, (4,)).numpy())
