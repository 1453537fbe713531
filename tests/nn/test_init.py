"""nn.init: fans and gains as PyTorch computes them, the distributions each initializer
draws from, in-place no-grad semantics, meta no-ops and PyTorch's errors."""
import math

import numpy as np
import pytest

import numtorch as nt
import numtorch.nn as nn
from numtorch.nn import init
from nn_helpers import oracle


def test_calculate_gain_and_fans_match_torch():
    torch = oracle()
    for args in [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("selu",),
                 ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3)]:
        assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)
    for shape in [(3, 4), (5, 2, 3), (6, 4, 3, 2)]:
        assert init._calculate_fan_in_and_fan_out(nt.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def _stats(t):
    a = t.detach().numpy()
    return a.mean(), a.std(), np.abs(a).max()


@pytest.mark.parametrize("fn,kwargs,std,bound", [
    (init.uniform_, {"a": -2.0, "b": 2.0}, 4 / math.sqrt(12), 2.0),
    (init.normal_, {"mean": 0.0, "std": 0.5}, 0.5, None),
    (init.xavier_uniform_, {"gain": 2.0}, 2 * math.sqrt(2 / (200 + 300)), 2 * math.sqrt(6 / 500)),
    (init.xavier_normal_, {}, math.sqrt(2 / 500), None),
    (init.kaiming_uniform_, {"a": math.sqrt(5)}, 1 / math.sqrt(3 * 200), 1 / math.sqrt(200)),
    (init.kaiming_normal_, {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2 / 300), None),
    (init.trunc_normal_, {"std": 1.0, "a": -1.0, "b": 2.0}, None, 2.0),
])
def test_initializers_draw_from_the_documented_distribution(fn, kwargs, std, bound):
    w = nn.Parameter(nt.empty(300, 200))
    out = fn(w, **kwargs)
    assert out is w and w.requires_grad and w.grad_fn is None
    mean, s, mx = _stats(w)
    if std is not None:
        assert abs(s - std) < 0.03 * std
    if bound is not None:
        assert mx <= bound + 1e-6


def test_trunc_normal_matches_the_truncated_distribution():
    w = init.trunc_normal_(nt.empty(200000, dtype=nt.float64), mean=1.0, std=2.0, a=0.0, b=3.0)
    a = w.numpy()
    assert a.min() >= 0.0 and a.max() <= 3.0
    # Truncated normal on [alpha, beta] = [-0.5, 1] in standard units: known mean.
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    Phi = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    expected_mean = 1.0 + 2.0 * (phi(-0.5) - phi(1.0)) / (Phi(1.0) - Phi(-0.5))
    assert abs(a.mean() - expected_mean) < 0.01
    assert abs(nn.init._erfinv(nt.tensor([0.5, -0.9, 0.0], dtype=nt.float64)).numpy()
               - np.array([0.4769362762044699, -1.1630871536766743, 0.0])).max() < 1e-12


def test_constant_ones_zeros_eye_dirac():
    w = nt.empty(3, 4)
    assert init.constant_(w, 2.5) is w and (w.numpy() == 2.5).all()
    assert (init.ones_(w).numpy() == 1).all() and (init.zeros_(w).numpy() == 0).all()
    np.testing.assert_array_equal(init.eye_(w).numpy(), np.eye(3, 4))
    conv = init.dirac_(nt.empty(4, 2, 3, 3), groups=2)
    x = nt.randn(1, 2, 5, 5)
    import numtorch.nn.functional as F
    np.testing.assert_allclose(F.conv2d(x, conv, padding=1).numpy(),
                               nt.cat([x, x], 1).numpy(), rtol=1e-6)


def test_initializers_are_no_ops_on_meta_tensors():
    for fn in (init.uniform_, init.normal_, init.ones_, init.xavier_uniform_, init.kaiming_normal_,
               init.trunc_normal_, init.eye_):
        w = nt.empty(3, 4, device="meta")
        assert fn(w) is w and w.is_meta


def test_initializers_do_not_record_gradients():
    p = nn.Parameter(nt.ones(3, 3))
    init.kaiming_uniform_(p)
    assert p.grad_fn is None and p.is_leaf
    (p * 2).sum().backward()
    assert (p.grad.numpy() == 2).all()


def test_init_errors_match_torch():
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with "
                                         "fewer than 2 dimensions"):
        init.xavier_uniform_(nt.zeros(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")
    with pytest.raises(ValueError, match=r"Mode foo not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(nt.zeros(3, 3), mode="foo")
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(nt.zeros(3))
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(nt.zeros(0, 3))


def test_orthogonal_if_linalg_qr_exists():
    if not hasattr(getattr(nt, "linalg", None), "qr"):
        pytest.skip("numtorch.linalg.qr is not available yet")
    w = init.orthogonal_(nt.empty(4, 6, dtype=nt.float64), gain=2.0)
    np.testing.assert_allclose(w.numpy() @ w.numpy().T, 4 * np.eye(4), atol=1e-10)
