"""Numeric edges where numtorch gave a different answer from PyTorch without an error: float
floor division, shifts, median with NaN, nansum of integers, all/any of uint8, bool
subtraction, integer powers with negative exponents, float16 means and running sums. The
references are Python's own arithmetic and NumPy; PyTorch where installed."""
import math
import types

import numpy as np
import pytest

import numtorch as torch

_FLOOR_CASES = [(1.0, 0.1), (-1.0, 0.1), (1.0, -0.1), (7.0, 0.7), (-5.0, math.inf), (5.0, math.inf),
                (5.0, -math.inf), (-math.inf, -3.0), (math.inf, 3.0), (0.0, -3.0), (-0.0, 3.0),
                (2.5, 0.5), (1e300, 1e-300), (-7.5, 2.0), (math.nan, 1.0), (3.0, math.nan)]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_floor_division_of_floats_is_pythons(dtype):
    a = torch.tensor([c[0] for c in _FLOOR_CASES], dtype=dtype)
    b = torch.tensor([c[1] for c in _FLOOR_CASES], dtype=dtype)
    got = (a // b).tolist()
    # Python's float // on the same (rounded) operands is the reference
    for (x, y), g in zip(zip(a.tolist(), b.tolist()), got):
        if y == 0:   # 1e-300 in float32; Python raises where PyTorch returns x / y
            assert g == x / np.float64(y)
            continue
        want = x // y
        same = g == want and math.copysign(1, g) == math.copysign(1, want)
        assert same or (math.isnan(g) and math.isnan(want)), (x, y, g, want)
    assert torch.div(a, b, rounding_mode="floor").tolist() == pytest.approx(got, nan_ok=True)


def test_floor_division_compiled_and_differentiated():
    x = torch.tensor([1.0, 2.0, -0.5], requires_grad=True)
    assert torch.compile(lambda t: t // 0.1)(x.detach()).tolist() == [9.0, 19.0, -5.0]
    y = torch.div(x, 0.1, rounding_mode="floor")
    assert y.grad_fn.name() == "DivBackward2"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]   # piecewise constant, as in PyTorch


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_shifts_match_numpy_for_every_count(dtype):
    info = np.iinfo(dtype)
    a = np.array([1, 5, info.max, info.min, 100 % (info.max + 1)], dtype=dtype)
    for count in [0, 1, 3, info.bits - 1, info.bits, info.bits + 5, 70] + ([-1] if info.min < 0 else []):
        b = np.full(a.shape, count, dtype=dtype)
        assert np.array_equal((torch.tensor(a) << torch.tensor(b)).numpy(), np.left_shift(a, b))
        assert np.array_equal((torch.tensor(a) >> torch.tensor(b)).numpy(), np.right_shift(a, b))
    # Python ints as the reference for small counts
    x = torch.tensor([3, -5, 7])
    assert (x << 2).tolist() == [3 << 2, -5 << 2, 7 << 2]
    assert (x >> 1).tolist() == [3 >> 1, -5 >> 1, 7 >> 1]
    assert (2 << torch.tensor([1, 3])).tolist() == [4, 16]
    y = x.clone()
    y <<= 1
    assert y.tolist() == [6, -10, 14]
    assert torch.bitwise_right_shift(x, 1).tolist() == x.bitwise_right_shift(1).tolist()


@pytest.mark.parametrize("bad", [lambda: torch.tensor([1.5]) << 1,
                                 lambda: torch.tensor([True]) << torch.tensor([True]),
                                 lambda: torch.tensor([1], dtype=torch.int8) >> 1.5])
def test_shifts_of_floats_and_bools_are_not_implemented(bad):
    with pytest.raises(NotImplementedError, match="shift_cpu\" not implemented for"):
        bad()


def test_median_propagates_nan_and_its_gradient_goes_to_the_nan():
    x = torch.tensor([[1.0, math.nan, 2.0, math.nan], [3.0, 1.0, 2.0, 5.0]], requires_grad=True)
    r = x.median(1)
    assert math.isnan(r.values[0].item()) and r.values[1].item() == 2.0
    assert r.indices.tolist() == [1, 2]
    r.values.sum().backward()
    assert x.grad.tolist() == [[0, 1, 0, 0], [0, 0, 1, 0]]
    assert math.isnan(torch.tensor([1.0, math.nan, 2.0]).median().item())
    assert torch.tensor([1.0, math.nan, 2.0]).nanmedian().item() == 1.0
    assert torch.tensor([[3, 1, 2]]).median(1).values.tolist() == [2]   # integers: no NaN


def test_nansum_of_integers_is_their_sum():
    values = np.array([2 ** 61, 2 ** 61, -3])
    big = torch.tensor(values)
    assert big.nansum().dtype == torch.int64 and big.nansum().item() == 2 ** 62 - 3   # exact
    assert torch.tensor([1, 2, 3], dtype=torch.int8).nansum().dtype == torch.int64
    assert torch.tensor([True, True]).nansum().item() == 2
    with pytest.raises(RuntimeError, match="nansum on CPU does not support complex inputs"):
        torch.tensor([1 + 1j]).nansum()


def test_all_and_any_keep_uint8():
    u = torch.tensor([3, 0, 2], dtype=torch.uint8)
    assert u.all().dtype == torch.uint8 and u.all().item() == 0
    assert u.any().dtype == torch.uint8 and u.any().item() == 1
    assert u.reshape(1, 3).any(1).tolist() == [1]
    assert torch.tensor([3, 0]).all().dtype == torch.bool


@pytest.mark.parametrize("sub", [lambda b, i: b - i, lambda b, i: i - b, lambda b, i: b - 1,
                                 lambda b, i: 1.5 - b, lambda b, i: i - True,
                                 lambda b, i: torch.rsub(i, True)])
def test_subtracting_a_bool_raises(sub):
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        sub(torch.tensor([True]), torch.tensor([1]))


def test_integer_powers_with_negative_exponents():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        torch.tensor([2], dtype=torch.uint8) ** -1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        torch.tensor([2]) ** -2
    base = [0, 1, -1, 2, -2, 3, 1, -1]
    exp = [-1, -1, -1, -1, -1, -2, -5, -4]
    # a tensor exponent: 1 / x**n truncated toward zero (0 for x = 0), as PyTorch computes
    want = [0 if b == 0 else int(1 / b ** -e) if abs(b) != 1 else b ** e for b, e in zip(base, exp)]
    assert (torch.tensor(base) ** torch.tensor(exp)).tolist() == want


def test_float16_mean_and_cumsum_accumulate_in_float32():
    t = torch.tensor([60000.0, 60000.0, -60000.0], dtype=torch.float16)
    assert t.cumsum(0).tolist() == [60000.0, math.inf, 60000.0]
    assert torch.tensor([[60000.0, 60000.0]], dtype=torch.float16).mean(1).tolist() == [60000.0]
    x = torch.tensor(np.random.default_rng(0).standard_normal(1000).astype(np.float16))
    ref = np.float16(x.numpy().astype(np.float64).mean())
    assert x.mean().item() == ref   # one rounding of an (almost) exact mean
    assert x.cumsum(0).grad_fn is None and x.requires_grad_().cumsum(0).grad_fn.name() == "CumsumBackward0"


def test_same_as_pytorch():
    pt = pytest.importorskip("torch")
    for m_fn in [lambda m: m.tensor([1.0, -1.0, 7.0]) // m.tensor([0.1, 0.1, 0.7]),
                 lambda m: m.tensor([[1.0, math.nan, 2.0]]).median(1).values,
                 lambda m: m.tensor([60000.0, 60000.0, -60000.0], dtype=m.float16).cumsum(0),
                 lambda m: m.tensor([0, 1, -1, 2]) ** m.tensor([-1, -1, -3, -2]),
                 lambda m: m.tensor([100, -128, 1], dtype=m.int8) >> 70,
                 lambda m: m.tensor([3, 0], dtype=m.uint8).all()]:
        ours, theirs = m_fn(torch), m_fn(pt)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call, error, message", [
    (lambda: torch.tensor([1, 2]).gather(0, torch.tensor([-1])), RuntimeError,
     "index -1 is out of bounds for dimension 0 with size 2"),
    (lambda: torch.tensor([1, 2]).scatter(0, torch.tensor([-1]), 5), RuntimeError, "index -1 is out"),
    (lambda: torch.tensor([1, 2]).scatter_add(0, torch.tensor([-1]), torch.tensor([5])), RuntimeError,
     "index -1 is out"),
    (lambda: torch.take_along_dim(torch.tensor([1, 2]), torch.tensor([-1])), RuntimeError, "index -1 is out"),
    (lambda: torch.tensor([1, 2]).index_select(0, torch.tensor([-1])), IndexError, "index out of range in self"),
    (lambda: torch.tensor([1, 2]).index_add(0, torch.tensor([-1]), torch.tensor([5])), IndexError,
     "index out of range in self")])
def test_index_ops_reject_negative_indices(call, error, message):
    with pytest.raises(error, match=message):
        call()
    assert torch.tensor([1, 2, 3])[torch.tensor([-1])].tolist() == [3]   # indexing wraps


def _linspace_reference(start, end, steps):
    """PyTorch's formula for float32 (Note [linspace's halves]) with exact rationals."""
    from fractions import Fraction
    s, e = np.float32(start), np.float32(end)
    step = Fraction(float((e - s) / np.float32(steps - 1)))
    half = steps // 2
    exact = [Fraction(float(s)) + step * i for i in range(half)] + \
            [Fraction(float(e)) - step * (steps - 1 - i) for i in range(half, steps)]
    # one rounding of each exact value to float32, through float64 (exact for these sizes)
    return np.array([np.float32(float(v)) for v in exact], np.float32)


def test_linspace_is_symmetric_with_exact_ends():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a, b = rng.normal(0, 10, 2)
        steps = int(rng.integers(2, 100))
        got = torch.linspace(a, b, steps).numpy()
        assert got[0] == np.float32(a) and got[-1] == np.float32(b)
        np.testing.assert_array_equal(got, _linspace_reference(a, b, steps))
    pt = pytest.importorskip("torch")
    for _ in range(50):
        a, b = rng.normal(0, 10, 2)
        steps = int(rng.integers(1, 500))
        np.testing.assert_array_equal(torch.linspace(a, b, steps).numpy(),
                                      pt.linspace(a, b, steps).numpy())


_UNORDERED = {
    "sort": lambda c: c.sort(), "argsort": lambda c: c.argsort(), "msort": lambda c: torch.msort(c),
    "topk": lambda c: c.topk(1), "kthvalue": lambda c: c.kthvalue(1), "median": lambda c: c.median(),
    "median dim": lambda c: c.median(0), "clamp": lambda c: c.clamp(0, 1),
    "clamp_min": lambda c: c.clamp_min(0), "minimum": lambda c: torch.minimum(c, c),
    "maximum": lambda c: torch.maximum(c, c), "fmax": lambda c: torch.fmax(c, c),
    "fmin": lambda c: torch.fmin(c, c), "round": lambda c: c.round(), "floor": lambda c: c.floor(),
}
_NO_BOOL_LOOP = {"topk": lambda b: b.topk(1), "median": lambda b: b.median(),
                 "round": lambda b: b.round(), "floor": lambda b: b.floor(), "ceil": lambda b: b.ceil(),
                 "trunc": lambda b: b.trunc()}


@pytest.mark.parametrize("name", sorted(_UNORDERED))
def test_order_based_ops_reject_complex(name):
    """Complex numbers have no order: PyTorch raises where NumPy would compare them
    lexicographically."""
    with pytest.raises((RuntimeError, NotImplementedError), match="complex|Complex"):
        _UNORDERED[name](torch.tensor([1 + 2j, 3 + 0j]))


@pytest.mark.parametrize("name", sorted(_NO_BOOL_LOOP))
def test_ops_without_a_bool_loop_reject_bool(name):
    with pytest.raises((RuntimeError, NotImplementedError), match="[Bb]ool"):
        _NO_BOOL_LOOP[name](torch.tensor([True, False]))
    assert torch.tensor([True, False]).sort().values.tolist() == [False, True]   # sort has one


@pytest.mark.parametrize("name", sorted(_UNORDERED) + [f"bool {n}" for n in sorted(_NO_BOOL_LOOP)])
def test_the_same_errors_as_pytorch(name):
    pt = pytest.importorskip("torch")
    fn, data = ((_NO_BOOL_LOOP[name[5:]], [True, False]) if name.startswith("bool ")
                else (_UNORDERED[name], [1 + 2j, 3 + 0j]))
    errors = []
    for m in (torch, pt):
        fn_m = types.FunctionType(fn.__code__, {"torch": m})   # the same lambda, m's functions
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            fn_m(m.tensor(data))
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]
