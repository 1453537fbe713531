"""numtorch.distributions against PyTorch: Normal, Uniform, Bernoulli (probs and logits)
and Categorical — log_prob, cdf (and Normal's icdf), entropy, mean/variance/stddev with their gradients;
samples' shapes and statistics; rsample's reparameterized gradient; validation errors
(same messages as PyTorch); vmap over log_prob."""
from __future__ import annotations

import math

import numpy as np
import pytest

import numtorch as nt
from numtorch import distributions as D


def _pair(torch, a):
    return torch.tensor(a, requires_grad=True), nt.tensor(a, requires_grad=True)


def _close(ours, theirs, tol=1e-12):
    np.testing.assert_allclose(np.asarray(ours.detach().numpy()), theirs.detach().numpy(),
                               rtol=tol, atol=tol)


def test_normal_matches_torch_with_grads():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    (tl, ol), (ts, os_) = _pair(torch, rng.standard_normal((2, 3))), _pair(torch, rng.random((2, 3)) + 0.5)
    v = rng.standard_normal((4, 2, 3))
    td, od = torch.distributions.Normal(tl, ts), D.Normal(ol, os_)
    for name in ("mean", "variance", "stddev", "mode"):
        _close(getattr(od, name), getattr(td, name))
    for f in (lambda d, x: d.log_prob(x), lambda d, x: d.cdf(x), lambda d, x: d.entropy()):
        to, oo = f(td, torch.tensor(v)), f(od, nt.tensor(v))
        _close(oo, to)
        (to * to).sum().backward()
        (oo * oo).sum().backward()
        for t, o in ((tl, ol), (ts, os_)):
            if t.grad is None:
                assert o.grad is None or not o.grad.numpy().any()
            else:
                _close(o.grad, t.grad)
            t.grad, o.grad = None, None
    assert od.batch_shape == nt.Size([2, 3]) and od.event_shape == nt.Size([])
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"


def test_normal_icdf_matches_torch_with_grads_and_inverts_cdf():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    (tl, ol), (ts, os_) = _pair(torch, rng.standard_normal(3)), _pair(torch, rng.random(3) + 0.5)
    (tp, op) = _pair(torch, np.array([[1e-9, 0.3, 0.5], [0.75, 0.999, 1 - 1e-12]]))
    to = torch.distributions.Normal(tl, ts).icdf(tp)
    oo = D.Normal(ol, os_).icdf(op)
    _close(oo, to, tol=1e-10)
    (to * to).sum().backward()
    (oo * oo).sum().backward()
    for t, o in ((tl, ol), (ts, os_), (tp, op)):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-9)
    d = D.Normal(nt.tensor(0.3, dtype=nt.float64), nt.tensor(2.0, dtype=nt.float64))
    x = nt.linspace(-9, 9, 37, dtype=nt.float64)
    np.testing.assert_allclose(d.icdf(d.cdf(x)).numpy(), x.numpy(), rtol=1e-8, atol=1e-8)
    assert d.icdf(nt.tensor([0.0, 1.0], dtype=nt.float64)).tolist() == [-math.inf, math.inf]


_CONTINUOUS = {"Exponential": (lambda rng: (rng.random(3) + 0.5,), lambda rng: rng.random((4, 3)) * 3),
               "Laplace": (lambda rng: (rng.standard_normal(3), rng.random(3) + 0.5),
                           lambda rng: rng.standard_normal((4, 3)) * 2)}


@pytest.mark.parametrize("name", list(_CONTINUOUS))
def test_exponential_and_laplace_match_torch_with_grads(name):
    """Moments, log_prob, cdf, icdf and entropy equal PyTorch's, values and gradients to
    every parameter; samples have the right statistics and reparameterized gradients."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    params, values = _CONTINUOUS[name]
    pairs = [_pair(torch, a) for a in params(rng)]
    td = getattr(torch.distributions, name)(*(t for t, _ in pairs))
    od = getattr(D, name)(*(o for _, o in pairs))
    assert repr(od) == repr(td)
    v = values(rng)
    q = rng.random((4, 3)) * 0.98 + 0.01
    for attr in ("mean", "mode", "variance", "stddev"):
        _close(getattr(od, attr), getattr(td, attr))
    for f in (lambda d, lib: d.log_prob(lib.tensor(v)), lambda d, lib: d.cdf(lib.tensor(v)),
              lambda d, lib: d.icdf(lib.tensor(q)), lambda d, lib: d.entropy()):
        to, oo = f(td, torch), f(od, nt)
        _close(oo, to)
        (to * to).sum().backward()
        (oo * oo).sum().backward()
        for t, o in pairs:
            if t.grad is None:     # Laplace's entropy does not depend on loc
                assert o.grad is None or not o.grad.numpy().any()
            else:
                _close(o.grad, t.grad)
            t.grad, o.grad = None, None
    nt.manual_seed(0)
    s = od.rsample((40000,))
    assert tuple(s.shape) == (40000, 3) and s.requires_grad
    np.testing.assert_allclose(s.mean(0).detach().numpy(), od.mean.detach().numpy(), rtol=0.05, atol=0.03)
    np.testing.assert_allclose(s.std(0).detach().numpy(), od.stddev.detach().numpy(), rtol=0.05)
    # reparameterized: d (sample mean) / d params estimates d mean / d params
    leaves = [o for _, o in pairs]
    g_sample = nt.autograd.grad(s.mean(0).sum(), leaves)
    g_mean = nt.autograd.grad(od.mean.sum(), leaves, allow_unused=True)
    for a, b in zip(g_sample, g_mean):
        b = np.zeros(3) if b is None else b.numpy()
        np.testing.assert_allclose(a.numpy(), b, rtol=0.05, atol=0.03)
    with pytest.raises(ValueError, match="to satisfy the constraint GreaterThan"):
        getattr(D, name)(*([nt.tensor([1.0, -1.0])] * len(params(rng))))


def test_exponential_support_is_nonnegative():
    d = D.Exponential(nt.tensor(2.0))
    with pytest.raises(ValueError, match=r"support \(GreaterThanEq\(lower_bound=0.0\)\)"):
        d.log_prob(nt.tensor(-1.0))
    assert float(d.log_prob(nt.tensor(0.0))) == pytest.approx(math.log(2.0))
    assert float(D.Exponential(nt.tensor(2.0)).sample((1000,)).min()) >= 0


def test_normal_rsample_statistics_and_reparameterized_gradient():
    nt.manual_seed(0)
    loc = nt.tensor([1.0, -2.0], dtype=nt.float64, requires_grad=True)
    scale = nt.tensor([0.5, 2.0], dtype=nt.float64, requires_grad=True)
    d = D.Normal(loc, scale)
    s = d.rsample((20000,))
    assert tuple(s.shape) == (20000, 2) and s.requires_grad
    np.testing.assert_allclose(s.mean(0).detach().numpy(), [1.0, -2.0], atol=0.05)
    np.testing.assert_allclose(s.std(0).detach().numpy(), [0.5, 2.0], rtol=0.03)
    s.mean().backward()   # d/dloc of mean of loc + eps * scale is 1/2 each
    np.testing.assert_allclose(loc.grad.numpy(), [0.5, 0.5])
    assert not d.sample((3,)).requires_grad


def test_uniform_matches_torch():
    torch = pytest.importorskip("torch")
    (tl, ol), (th, oh) = _pair(torch, np.array([0.0, 1.0])), _pair(torch, np.array([2.0, 1.5]))
    td, od = torch.distributions.Uniform(tl, th), D.Uniform(ol, oh)
    x = np.array([[0.5, 1.2], [1.9, 1.4]])
    for name in ("mean", "variance", "stddev"):
        _close(getattr(od, name), getattr(td, name))
    for f in (lambda d: d.log_prob(d_x(d, x)), lambda d: d.cdf(d_x(d, x)), lambda d: d.entropy()):
        to, oo = f(td), f(od)
        _close(oo, to)
        to.sum().backward()
        oo.sum().backward()
    _close(ol.grad, tl.grad)
    _close(oh.grad, th.grad)
    nt.manual_seed(1)
    s = D.Uniform(-1.0, 3.0).sample((20000,))
    assert float(s.min()) >= -1.0 and float(s.max()) < 3.0
    assert abs(float(s.mean()) - 1.0) < 0.05
    assert D.Uniform(0.0, 1.0, validate_args=False).log_prob(nt.tensor(2.0)).item() == float("-inf")


def d_x(d, x):
    import torch
    return torch.tensor(x) if isinstance(d, torch.distributions.Distribution) else nt.tensor(x)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_bernoulli_matches_torch(param):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a = rng.random((2, 3)) if param == "probs" else rng.standard_normal((2, 3))
    tp, op = _pair(torch, a)
    td, od = torch.distributions.Bernoulli(**{param: tp}), D.Bernoulli(**{param: op})
    v = (rng.random((5, 2, 3)) < 0.5).astype(np.float64)
    for f in (lambda d: d.log_prob(d_x(d, v)), lambda d: d.entropy(), lambda d: d.mean,
              lambda d: d.variance, lambda d: d.logits, lambda d: d.probs):
        _close(f(od), f(td))
    (td.log_prob(torch.tensor(v)).sum() + td.entropy().sum()).backward()
    (od.log_prob(nt.tensor(v)).sum() + od.entropy().sum()).backward()
    _close(op.grad, tp.grad)
    nt.manual_seed(3)
    s = D.Bernoulli(probs=nt.tensor([0.2, 0.9])).sample((20000,))
    assert set(np.unique(s.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(s.mean(0).numpy(), [0.2, 0.9], atol=0.02)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_matches_torch(param):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    lg = rng.standard_normal((2, 4))
    a = np.exp(lg) if param == "probs" else lg
    tp, op = _pair(torch, a)
    td, od = torch.distributions.Categorical(**{param: tp}), D.Categorical(**{param: op})
    v = rng.integers(0, 4, (5, 2))
    for f in (lambda d: d.log_prob(torch.tensor(v) if d is td else nt.tensor(v)),
              lambda d: d.entropy(), lambda d: d.probs, lambda d: d.logits):
        _close(f(od), f(td))
    assert np.isnan(od.mean.numpy()).all() and tuple(od.mean.shape) == (2,)
    assert od.batch_shape == nt.Size([2]) and tuple(od.param_shape) == (2, 4)
    (td.log_prob(torch.tensor(v)).sum() + td.entropy().sum()).backward()
    (od.log_prob(nt.tensor(v)).sum() + od.entropy().sum()).backward()
    _close(op.grad, tp.grad)
    nt.manual_seed(5)
    p = np.array([0.1, 0.2, 0.7])
    s = D.Categorical(probs=nt.tensor(p)).sample((3, 10000))
    assert tuple(s.shape) == (3, 10000) and s.dtype == nt.int64
    np.testing.assert_allclose(np.bincount(s.numpy().ravel(), minlength=3) / 30000, p, atol=0.02)


def test_validation_errors_match_torch():
    torch = pytest.importorskip("torch")
    # validate_args=True explicitly: another library's tests may switch PyTorch's default off.
    v = dict(validate_args=True)
    cases = [lambda m: m.distributions.Normal(0.0, -1.0, **v),
             lambda m: m.distributions.Bernoulli(probs=1.5, **v),
             lambda m: m.distributions.Bernoulli(probs=0.5, logits=0.0, **v),
             lambda m: m.distributions.Categorical(probs=m.tensor([-1.0, 2.0]), **v),
             lambda m: m.distributions.Uniform(1.0, 0.0, **v),
             lambda m: m.distributions.Bernoulli(0.25, **v).log_prob(m.tensor(0.5)),
             lambda m: m.distributions.Categorical(logits=m.zeros(3), **v).log_prob(m.tensor(3)),
             lambda m: m.distributions.Uniform(0.0, 1.0, **v).log_prob(m.tensor(2.0)),
             lambda m: m.distributions.Normal(m.zeros(2), 1.0, **v).log_prob(
                 m.tensor([float("nan"), 0.0]))]
    for case in cases:
        with pytest.raises(ValueError) as theirs:
            case(torch)
        with pytest.raises(ValueError) as ours:
            case(nt)
        # The message up to the printed values (tensor reprs differ in their module name).
        head = str(theirs.value).split("invalid values")[0].replace("torch.Size", "Size")
        assert str(ours.value).split("invalid values")[0].replace("torch.Size", "Size") == head
    D.Normal(0.0, -1.0, validate_args=False)   # validation off: no error
    with pytest.raises(ValueError, match="GreaterThan"):
        D.Normal(0.0, -1.0)                        # on by default


def test_log_prob_under_vmap_and_grad():
    d = D.Normal(nt.tensor(0.5, dtype=nt.float64), nt.tensor(2.0, dtype=nt.float64))
    xs = nt.linspace(-2, 2, 7, dtype=nt.float64)
    np.testing.assert_allclose(nt.vmap(d.log_prob)(xs).numpy(), d.log_prob(xs).numpy())
    g = nt.func.grad(lambda x: d.log_prob(x))(nt.tensor(1.0, dtype=nt.float64))
    np.testing.assert_allclose(float(g), -(1.0 - 0.5) / 4.0)
    assert nt.distributions.Normal is D.Normal


_KL_PAIRS = {
    "normal": lambda m, x1, x2, x3, x4: (m.distributions.Normal(x1, x2), m.distributions.Normal(x3, x4)),
    "bernoulli": lambda m, x1, x2, x3, x4: (m.distributions.Bernoulli(logits=x1),
                                            m.distributions.Bernoulli(logits=x3)),
    "categorical": lambda m, x1, x2, x3, x4: (m.distributions.Categorical(logits=x1),
                                              m.distributions.Categorical(logits=x3)),
    "uniform": lambda m, x1, x2, x3, x4: (m.distributions.Uniform(x1 - 3, x1 + x2),
                                          m.distributions.Uniform(x1 - 4, x1 + x2 + 1)),
    "uniform_normal": lambda m, x1, x2, x3, x4: (m.distributions.Uniform(x1, x1 + x2),
                                                 m.distributions.Normal(x3, x4)),
}


@pytest.mark.parametrize("pair", sorted(_KL_PAIRS))
def test_kl_divergence_matches_torch(pair):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(3), rng.random(3) + 0.5, rng.standard_normal(3), rng.random(3) + 0.5]
    leaves = [_pair(torch, a) for a in arrays]
    tp, tq = _KL_PAIRS[pair](torch, *(t for t, _ in leaves))
    op, oq = _KL_PAIRS[pair](nt, *(o for _, o in leaves))
    tk, ok = torch.distributions.kl_divergence(tp, tq), D.kl_divergence(op, oq)
    _close(ok, tk)
    tk.sum().backward()
    ok.sum().backward()
    for t, o in leaves:
        if t.grad is not None:
            _close(o.grad, t.grad)


def test_kl_divergence_of_an_unregistered_pair_raises():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type "
                                                  "Normal and q type Bernoulli"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))
