"""The layers of numtorch/nn/modules/surface.py and the functions of
numtorch/nn/_functional_surface.py against PyTorch on the same weights and inputs."""
import numpy as np
import pytest

import numtorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)


def _twin(make, inputs, train=False):
    ours, theirs = make(numtorch), make(torch)
    ours.train(train), theirs.train(train)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        p.data = numtorch.tensor(q.detach().numpy().copy())
    a = [numtorch.tensor(i, requires_grad=True) for i in inputs]
    b = [torch.tensor(i, requires_grad=True) for i in inputs]
    oa, ob = ours(*a), theirs(*b)
    np.testing.assert_allclose(oa.detach().numpy(), ob.detach().numpy(), atol=1e-5)
    oa.sum().backward(), ob.sum().backward()
    for p, q in zip(a + list(ours.parameters()), b + list(theirs.parameters())):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-5)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("make", [
    lambda m: m.nn.PReLU(), lambda m: m.nn.PReLU(4, 0.1), lambda m: m.nn.RReLU(0.2, 0.4),
    lambda m: m.nn.Hardshrink(), lambda m: m.nn.Softshrink(0.3), lambda m: m.nn.PixelShuffle(2),
    lambda m: m.nn.PixelUnshuffle(3),
], ids=["PReLU", "PReLU4", "RReLU_eval", "Hardshrink", "Softshrink", "PixelShuffle",
        "PixelUnshuffle"])
def test_layer_matches_torch(make):
    _twin(make, [X4])


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("kind", ["Zero", "Constant", "Reflection", "Replication", "Circular"])
def test_padding_layers_match_torch(kind, d):
    x = X4[0] if d == 1 else X4 if d == 2 else X4[None]
    if kind == "Constant":
        _twin(lambda m: getattr(m.nn, f"ConstantPad{d}d")(tuple(range(2 * d)), 1.5), [x])
    else:
        _twin(lambda m: getattr(m.nn, f"{kind}Pad{d}d")(2 if kind == "Replication" else 1), [x])


def test_distance_layers_match_torch():
    y = X4[:, ::-1].copy()
    _twin(lambda m: m.nn.CosineSimilarity(), [X4, y])
    _twin(lambda m: m.nn.PairwiseDistance(p=1.0, keepdim=True), [X4, y])


@pytest.mark.parametrize("name, args", [("elu_", ()), ("selu_", ()), ("celu_", (0.5,)),
                                        ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.5)),
                                        ("threshold_", (0.1, 2.0)), ("rrelu_", ())])
def test_inplace_functional_matches_torch(name, args):
    a, b = numtorch.tensor(X4), torch.tensor(X4)
    assert getattr(numtorch.nn.functional, name)(a, *args) is a
    getattr(torch.nn.functional, name)(b, *args)
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)


def test_rrelu_training_draws_slopes_in_range():
    x = -numtorch.ones(1000)
    y = numtorch.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    assert float(y.max()) <= -0.1 and float(y.min()) >= -0.3 and float(y.std()) > 0.03


@pytest.mark.parametrize("call", [
    lambda F, t: F.prelu(t.ones(2, 2), t.ones(3)),
    lambda F, t: F.pixel_shuffle(t.ones(1, 6, 1, 1), 2),
    lambda F, t: F.pixel_unshuffle(t.ones(1, 1, 3, 3), 2),
    lambda F, t: F.softshrink(t.ones(2), -1.0),
], ids=["prelu_channels", "shuffle_channels", "unshuffle_height", "softshrink_lambda"])
def test_errors_match_torch(call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch.nn.functional, torch)
    with pytest.raises(RuntimeError) as ours:
        call(numtorch.nn.functional, numtorch)
    assert str(ours.value)[:40] == str(theirs.value)[:40]


@pytest.mark.parametrize("make, shape, kw", [
    (lambda m: m.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
     (2, 4, 5), {}),
    (lambda m: m.nn.ConvTranspose2d(2, 3, (3, 2), stride=2, bias=False, dilation=2),
     (1, 2, 4, 4), {}),
    (lambda m: m.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1), (1, 2, 4, 4),
     dict(output_size=(8, 8))),
], ids=["1d_groups", "2d_dilation", "2d_output_size"])
def test_conv_transpose_matches_torch(make, shape, kw):
    ours, theirs = make(numtorch), make(torch)
    assert repr(ours) == repr(theirs)
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    for p, q in zip(ours.parameters(), theirs.parameters()):
        p.data = numtorch.tensor(q.detach().numpy().copy())
    x = RNG.standard_normal(shape).astype(np.float32)
    a, b = numtorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oa, ob = ours(a, **kw), theirs(b, **kw)
    np.testing.assert_allclose(oa.detach().numpy(), ob.detach().numpy(), atol=1e-5)
    oa.sum().backward(), ob.sum().backward()
    for p, q in zip([a] + list(ours.parameters()), [b] + list(theirs.parameters())):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-4)
