"""numtorch.testing itself: assert_close (tolerances and report, against torch.testing's),
make_tensor, and the OpInfo registry's guards."""
from __future__ import annotations

import math

import numpy as np
import pytest

import numtorch as torch
from numtorch.testing import assert_close, make_tensor
from numtorch.testing import opinfo as O
from numtorch.testing._comparison import default_tolerances

# ---------------------------------------------------------------------------------------
# assert_close


@pytest.mark.parametrize("dtype, rtol, atol", [
    (torch.float32, 1.3e-6, 1e-5), (torch.float64, 1e-7, 1e-7), (torch.float16, 1e-3, 1e-5),
    (torch.complex64, 1.3e-6, 1e-5), (torch.int64, 0, 0), (torch.bool, 0, 0)])
def test_default_tolerances(dtype, rtol, atol):
    assert default_tolerances(dtype) == (rtol, atol)


def test_within_and_beyond_the_default_tolerance():
    x = torch.tensor([1.0, 100.0])
    assert_close(x, x + torch.tensor([5e-6, 1e-4]))          # atol + rtol * |expected|
    with pytest.raises(AssertionError, match="Tensor-likes are not close"):
        assert_close(x, x + torch.tensor([5e-5, 0.0]))
    with pytest.raises(AssertionError, match="Tensor-likes are not equal"):
        assert_close(torch.tensor([1, 2]), torch.tensor([1, 3]))


def test_rtol_and_atol_go_together():
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted"):
        assert_close(torch.ones(1), torch.ones(1), rtol=1e-3)


def test_nan_shape_dtype_and_containers():
    nan = torch.tensor([1.0, math.nan])
    with pytest.raises(AssertionError):
        assert_close(nan, nan.clone())
    assert_close(nan, nan.clone(), equal_nan=True)
    with pytest.raises(AssertionError, match="attribute 'shape'"):
        assert_close(torch.ones(2), torch.ones(3))
    with pytest.raises(AssertionError, match="attribute 'dtype'"):
        assert_close(torch.ones(2), torch.ones(2, dtype=torch.float64))
    assert_close(torch.ones(2), torch.ones(2, dtype=torch.float64), check_dtype=False)
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['b'\]\[1\]"):
        assert_close({"a": 1.0, "b": [torch.ones(1), torch.zeros(1)]},
                     {"a": 1.0, "b": [torch.ones(1), torch.ones(1)]})
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(torch.ones(1), np.ones(1))
    with pytest.raises(AssertionError, match="custom"):
        assert_close(torch.ones(1), torch.zeros(1), msg="custom")


@pytest.mark.parametrize("actual, expected", [
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0]),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 3.0], [3.0, 5.0]]),
    (1.0, 2.0),
    ([1, 2], [1, 3]),
])
def test_report_matches_torch_testing(actual, expected):
    real_torch = pytest.importorskip("torch")
    messages = []
    for lib, check in ((torch, assert_close), (real_torch, real_torch.testing.assert_close)):
        with pytest.raises(AssertionError) as info:
            check(lib.tensor(actual), lib.tensor(expected))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_pass_fail_agrees_with_torch_testing_near_the_tolerance():
    real_torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for dtype in ("float32", "float64"):
        base = rng.uniform(-10, 10, 50).astype(dtype)
        for scale in (1e-8, 1e-7, 1e-6, 1e-5, 1e-4):
            other = (base + rng.uniform(-1, 1, 50) * scale * (1 + np.abs(base))).astype(dtype)
            results = []
            for lib, check in ((torch, assert_close), (real_torch, real_torch.testing.assert_close)):
                try:
                    check(lib.from_numpy(other.copy()), lib.from_numpy(base.copy()))
                    results.append(True)
                except AssertionError:
                    results.append(False)
            assert results[0] == results[1], (dtype, scale)


# ---------------------------------------------------------------------------------------
# make_tensor


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.uint8, torch.bool,
                                   torch.complex64])
def test_make_tensor_ranges(dtype):
    t = make_tensor(200, dtype=dtype)
    assert t.dtype == dtype and t.shape == (200,)
    values = t.numpy()
    if dtype.is_floating_point:
        assert values.min() >= -9 and values.max() <= 9
    elif dtype is torch.uint8:
        assert values.min() >= 0 and values.max() < 10
    elif dtype is torch.int64:
        assert values.min() >= -9 and values.max() < 10
    t = make_tensor(50, dtype=dtype, low=1, high=3, exclude_zero=True)
    if not dtype.is_complex and dtype is not torch.bool:
        assert (t.numpy() >= 1).all() and (t.numpy() <= 3).all()


def test_make_tensor_options():
    t = make_tensor(3, 4, dtype=torch.float64, noncontiguous=True, requires_grad=True)
    assert not t.is_contiguous() and t.requires_grad and t.shape == (3, 4)
    assert (make_tensor((100,), dtype=torch.int64, exclude_zero=True).numpy() != 0).all()
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.equal(make_tensor(4, dtype=torch.float32, generator=g1),
                       make_tensor(4, dtype=torch.float32, generator=g2))
    assert make_tensor(2, dtype=torch.float32, device="meta").is_meta


# ---------------------------------------------------------------------------------------
# The OpInfo registry


def test_samples_are_reproducible_per_op_and_dtype():
    op = next(o for o in O.op_db if o.name == "sin")
    first = [s.input.clone() for s in op.samples(torch.float32)]
    torch.manual_seed(123)      # the global seed does not matter
    second = [s.input for s in op.samples(torch.float32)]
    assert_close(first, second, rtol=0, atol=0, equal_nan=True)


def test_registry_guards():
    with pytest.raises(ValueError, match="duplicate OpInfo 'sin'"):
        O.register(O.OpInfo("sin", sample_inputs=O.unary_samples()))
    with pytest.raises(ValueError, match="unknown column"):
        O.xfail("grads", "typo")


def test_reference_promotion_is_pytorchs():
    assert O.ref_result_type(torch.ones(2, dtype=torch.int32), 2.5) == torch.float32
    assert O.ref_result_type(torch.ones(2, dtype=torch.uint8), torch.tensor(-1)) == torch.uint8
    assert O.ref_promote_types(torch.uint8, torch.int8) == torch.int16
    assert O.ref_promote_types(torch.complex64, torch.float64) == torch.complex128
