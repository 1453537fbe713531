"""Numbers given to a kernel as a parameter must fit the op's dtype (Note [Scalars that must
fit], numtorch/_ops/_common.py): PyTorch raises "value cannot be converted to type int8_t
without overflow" where numtorch used to wrap around or round to inf silently, while
operands of arithmetic (`a + 1000`) still wrap, as in PyTorch."""
import numpy as np
import pytest

import numtorch as torch
from numtorch._ops._common import check_fits

# A number outside each dtype's range, and one just inside it.
OUTSIDE = {"int8": 1000, "uint8": -300, "int16": 70000, "int32": 2 ** 40, "int64": 2 ** 63,
           "float16": 1e6, "float32": 1e39}
INSIDE = {"int8": -128, "uint8": -255, "int16": 32767, "int32": -2 ** 31, "int64": 2 ** 63 - 1,
          "float16": 65504.0, "float32": 3.4028234663852886e38}
NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int",
         "int64": "int64_t", "float16": "c10::Half", "float32": "float"}


def _mask(m):
    return m.ones(3, dtype=m.bool)


# op(m, a, v): a kernel taking the number v as a parameter. Each raises for every dtype.
CHECKED = {
    "fill_": lambda m, a, v: a.clone().fill_(v),
    "full": lambda m, a, v: m.full((2,), v, dtype=a.dtype),
    "full_like": lambda m, a, v: m.full_like(a, v),
    "new_full": lambda m, a, v: a.new_full((2,), v),
    "masked_fill": lambda m, a, v: a.masked_fill(_mask(m), v),
    "masked_fill_": lambda m, a, v: a.clone().masked_fill_(_mask(m), v),
    "clamp": lambda m, a, v: a.clamp(min=v),
    "clamp_": lambda m, a, v: a.clone().clamp_(max=v),
    "index_fill": lambda m, a, v: a.index_fill(0, m.tensor([0]), v),
    "scatter": lambda m, a, v: a.scatter(0, m.tensor([0]), v),
    "add alpha": lambda m, a, v: a.add(a, alpha=v),
    "sub alpha": lambda m, a, v: a.sub(a, alpha=v),
    "threshold": lambda m, a, v: m.nn.functional.threshold(a, 0, v),
    "hardtanh": lambda m, a, v: m.nn.functional.hardtanh(a, min(v, -1), max(v, 1)),
}
# Kernels that compute float16 in float32 convert the number to float32: these raise for
# the integer dtypes and float32, not for float16.
CHECKED_OPMATH = {
    "where": lambda m, a, v: m.where(~_mask(m), a, v),
    "setitem": lambda m, a, v: a.clone().__setitem__(0, v),
}
DTYPES = ["int8", "uint8", "int16", "int32", "float16", "float32"]


def _tensor(m, dt):
    return m.tensor([1, 0, 1], dtype=getattr(m, dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", sorted(CHECKED))
def test_a_parameter_outside_the_dtype_raises(op, dt):
    match = f"value cannot be converted to type {NAMES[dt]} without overflow"
    if (op, dt) == ("hardtanh", "uint8"):   # PyTorch checks the sign first
        match = "cannot do hardtanh on an unsigned type with negative limits"
    with pytest.raises(RuntimeError, match=match):
        CHECKED[op](torch, _tensor(torch, dt), OUTSIDE[dt])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", sorted(CHECKED_OPMATH))
def test_float16_kernels_computing_in_float32_take_float32_numbers(op, dt):
    a = _tensor(torch, dt)
    if dt == "float16":
        out = CHECKED_OPMATH[op](torch, a, OUTSIDE[dt])
        if out is not None:
            assert np.isinf(out.numpy()).all()
    else:
        with pytest.raises(RuntimeError, match=f"type {NAMES[dt]} without overflow"):
            CHECKED_OPMATH[op](torch, a, OUTSIDE[dt])


@pytest.mark.parametrize("dt", DTYPES)
def test_a_number_just_inside_the_dtype_is_kept(dt):
    v = INSIDE[dt]
    a = _tensor(torch, dt)
    expect = np.array(v).astype(dt)   # unsigned: two's complement, as in PyTorch
    assert a.clone().fill_(v).numpy().tolist() == [expect] * 3
    assert torch.full((2,), v, dtype=a.dtype).numpy().tolist() == [expect] * 2
    assert a.masked_fill(_mask(torch), v).numpy().tolist() == [expect] * 3
    b = a.clone()
    b[1] = v
    assert b.numpy()[1] == expect


def test_arithmetic_operands_still_wrap():
    a = torch.tensor([1, 2, -5], dtype=torch.int8)
    assert (a + 1000).tolist() == [-23, -22, -29]
    assert (a * 300).tolist() == [44, 88, 36]
    assert (a == 1000).tolist() == [False, False, False]
    assert (torch.tensor([1], dtype=torch.uint8) - 2).tolist() == [255]


def test_tensor_checks_python_numbers_not_arrays():
    with pytest.raises(RuntimeError, match="type int8 without overflow"):
        torch.tensor([1000], dtype=torch.int8)
    with pytest.raises(RuntimeError, match="type uint8 without overflow"):
        torch.as_tensor([-1.0], dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="type int16 without overflow"):
        torch.tensor([[1, 2], [3, 70000]], dtype=torch.int16)
    with pytest.raises(RuntimeError, match="type int8 without overflow"):
        torch.tensor([float("nan")], dtype=torch.int8)
    assert torch.tensor([-1], dtype=torch.uint8).tolist() == [255]
    assert torch.tensor(np.array([1000]), dtype=torch.int8).tolist() == [-24]   # an array: cast
    assert np.isinf(torch.tensor([1e39]).numpy()).all()   # floats are not checked by tensor()


def test_pow_checks_integer_and_float16_exponents():
    with pytest.raises(RuntimeError, match="int8_t without overflow"):
        torch.tensor([1, 2], dtype=torch.int8) ** 1000
    with pytest.raises(RuntimeError, match="c10::Half without overflow"):
        torch.tensor([1.0], dtype=torch.float16) ** 1e6
    # a float32 tensor's exponent is a double
    assert (torch.tensor([1.0, 0.5]) ** 1e39).tolist() == [1.0, 0.0]
    assert (torch.tensor([2], dtype=torch.int8) ** 2.5).dtype == torch.float32


def test_index_put_requires_matching_dtypes_and_setitem_casts():
    a = torch.zeros(3, dtype=torch.int8)
    with pytest.raises(RuntimeError, match="got Char for the destination and Long for the source"):
        a.index_put((torch.tensor([0]),), torch.tensor(5))
    assert a.index_put((torch.tensor([0]),), torch.tensor(5, dtype=torch.int8)).tolist() == [5, 0, 0]
    a[torch.tensor([1])] = torch.tensor(7)   # assignment casts
    assert a.tolist() == [0, 7, 0]


@pytest.mark.parametrize("x, dt, fits", [
    (127, "int8", True), (128, "int8", False), (-128, "int8", True), (-129, "int8", False),
    (255, "uint8", True), (-255, "uint8", True), (-256, "uint8", False), (-1.0, "uint8", False),
    (127.9, "int8", False), (float("nan"), "int8", False), (float("inf"), "int32", False),
    (float("inf"), "float16", True), (float("nan"), "float32", True), (65504, "float16", True),
    (65505, "float16", False), (1e39, "float64", True), (1 + 1j, "float32", False),
    (1 + 0j, "int8", True), (1e39 + 0j, "complex64", False), (True, "int8", True),
    (2, "bool", True), (np.int64(1000), "int8", False), (np.float32(3.0), "int8", True)])
def test_check_fits_follows_c10(x, dt, fits):
    if fits:
        check_fits(x, np.dtype(dt))
    else:
        with pytest.raises(RuntimeError, match="without overflow"):
            check_fits(x, np.dtype(dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", sorted(CHECKED) + sorted(CHECKED_OPMATH))
def test_same_outcome_as_pytorch(op, dt):
    pt = pytest.importorskip("torch")
    fn = {**CHECKED, **CHECKED_OPMATH}[op]
    outcomes = []
    for m in (torch, pt):
        for v in (OUTSIDE[dt], INSIDE[dt]):
            try:
                out = fn(m, _tensor(m, dt), v)
                outcomes.append(None if out is None else np.asarray(out.tolist()))
            except RuntimeError as e:
                outcomes.append(str(e))
    for ours, theirs in zip(outcomes[:2], outcomes[2:]):
        if isinstance(theirs, str):
            assert ours == theirs
        elif theirs is not None:
            np.testing.assert_array_equal(ours, theirs)
