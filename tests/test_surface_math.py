"""The everyday pointwise and product functions (numtorch/_ops/_surface_math.py): the cases
the OpInfo matrix does not sweep — errors, beta=0, bool addr, negative ldexp exponents."""
import math

import numpy as np
import pytest

import numtorch


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _errors_alike(torch, call):
    """Both libraries raise the same exception type and message start."""
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(numtorch)
    assert str(ours.value)[:40] == str(theirs.value)[:40]


@pytest.mark.parametrize("call", [
    lambda t: t.addcdiv(t.arange(3), t.arange(3), t.arange(1, 4)),
    lambda t: t.heaviside(t.ones(3), t.arange(3)),
    lambda t: t.frexp(t.arange(3)),
    lambda t: t.addmv(t.ones(3), t.ones(3, 2), t.ones(3)),
], ids=["addcdiv_int", "heaviside_dtypes", "frexp_int", "addmv_sizes"])
def test_errors_match_torch(torch, call):
    _errors_alike(torch, call)


def test_addcmul_integral_value_truncates_like_torch(torch):
    ours = numtorch.addcmul(numtorch.arange(3), numtorch.arange(3), numtorch.arange(3), value=1.7)
    theirs = torch.addcmul(torch.arange(3), torch.arange(3), torch.arange(3), value=1.7)
    assert ours.tolist() == theirs.tolist() and ours.dtype == numtorch.int64


def test_beta_zero_ignores_nan_input():
    nan = numtorch.full((2,), math.nan)
    mat, vec = numtorch.ones(2, 3), numtorch.arange(3.0)
    np.testing.assert_array_equal(numtorch.addmv(nan, mat, vec, beta=0).numpy(), [3.0, 3.0])
    b1, b2 = numtorch.ones(4, 2, 3), numtorch.ones(4, 3, 2)
    out = numtorch.addbmm(numtorch.full((2, 2), math.nan), b1, b2, beta=0, alpha=0.5)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 6.0))
    out = numtorch.baddbmm(numtorch.full((2, 2), math.inf), b1, b2, beta=0)
    np.testing.assert_array_equal(out.numpy(), np.full((4, 2, 2), 3.0))


def test_addr_bool_matches_torch(torch):
    rng = np.random.default_rng(0)
    x, a, b = rng.random((3, 4)) > 0.5, rng.random(3) > 0.5, rng.random(4) > 0.5
    for beta, alpha in ((True, True), (False, True), (True, False), (False, False)):
        ours = numtorch.addr(numtorch.tensor(x), numtorch.tensor(a), numtorch.tensor(b),
                             beta=beta, alpha=alpha)
        theirs = torch.addr(torch.tensor(x), torch.tensor(a), torch.tensor(b), beta=beta, alpha=alpha)
        assert ours.dtype == numtorch.bool and ours.tolist() == theirs.tolist()


def test_ldexp_negative_exponents_and_grad():
    x = numtorch.tensor([1.5, -3.0, 0.25], dtype=numtorch.float64, requires_grad=True)
    e = numtorch.tensor([-4, 0, 3])
    y = numtorch.ldexp(x, e)
    np.testing.assert_array_equal(y.detach().numpy(), np.ldexp([1.5, -3.0, 0.25], [-4, 0, 3]))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.exp2([-4.0, 0.0, 3.0]))


def test_inplace_methods_write_in_place():
    x = numtorch.ones(3)
    assert x.addcmul_(numtorch.arange(3.0), numtorch.arange(3.0), value=2) is x
    np.testing.assert_array_equal(x.numpy(), [1.0, 3.0, 9.0])
    m = numtorch.zeros(2, 2)
    assert m.addmm_(numtorch.eye(2), numtorch.full((2, 2), 2.0), beta=0.5) is m
    np.testing.assert_array_equal(m.numpy(), np.full((2, 2), 2.0))
    z = numtorch.tensor([math.nan, math.inf, 1.0])
    z.nan_to_num_(posinf=7.0)
    np.testing.assert_array_equal(z.numpy(), [0.0, 7.0, 1.0])
