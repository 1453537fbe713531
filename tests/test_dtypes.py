"""Type promotion: PyTorch's rules, not NumPy's.

A table of cases written from PyTorch's documentation (torch.result_type, the "Type
Promotion" section of the tensor attributes page), then a differential sweep over every
pair of dtypes and operand classes against PyTorch itself when it is installed.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import numtorch as torch
from numtorch.testing.opinfo import ref_result_type

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128]


def dim(dtype):
    return torch.ones(2, dtype=dtype)


def zero_dim(dtype):
    return torch.ones((), dtype=dtype)


# (left operand, right operand, expected result dtype), from PyTorch's documentation.
DOCUMENTED = [
    # Dimensioned tensors promote within and across categories.
    (dim(torch.int64), dim(torch.int32), torch.int64),
    (dim(torch.bool), dim(torch.int64), torch.int64),
    (dim(torch.bool), dim(torch.uint8), torch.uint8),
    (dim(torch.float32), dim(torch.float64), torch.float64),
    (dim(torch.complex64), dim(torch.complex128), torch.complex128),
    (dim(torch.bool), dim(torch.int32), torch.int32),
    (dim(torch.int64), dim(torch.float32), torch.float32),   # only large enough for the float
    (dim(torch.uint8), dim(torch.int8), torch.int16),
    (dim(torch.float16), dim(torch.int64), torch.float16),
    (dim(torch.float64), dim(torch.complex64), torch.complex128),
    # A zero-dim tensor or a Python number of the same category does not participate.
    (dim(torch.int32), 5, torch.int32),
    (dim(torch.int32), zero_dim(torch.int64), torch.int32),
    (dim(torch.uint8), zero_dim(torch.int64), torch.uint8),
    (dim(torch.float32), zero_dim(torch.float64), torch.float32),
    (dim(torch.float16), 2.5, torch.float16),
    (dim(torch.int8), 1000, torch.int8),                     # (and wraps around)
    # ... but one of a higher category does.
    (dim(torch.int32), 1.0, torch.float32),                  # a Python float: the default dtype
    (dim(torch.int32), zero_dim(torch.float64), torch.float64),
    (dim(torch.int64), zero_dim(torch.float16), torch.float16),
    (dim(torch.bool), 2, torch.int64),
    (dim(torch.bool), zero_dim(torch.int8), torch.int8),
    (dim(torch.int32), 1j, torch.complex64),
    (dim(torch.float64), 1j, torch.complex128),
    (dim(torch.float32), zero_dim(torch.complex128), torch.complex64),
    # Only numbers and zero-dim tensors: they promote among themselves.
    (zero_dim(torch.int32), zero_dim(torch.int64), torch.int64),
    (zero_dim(torch.int32), 2.5, torch.float32),
    (zero_dim(torch.float64), 2.5, torch.float64),
    (2, 3.0, torch.float32),
    (True, 2, torch.int64),
    (True, False, torch.bool),
]


def _id(x):
    if isinstance(x, torch.Tensor):
        return f"{x.dtype.name}{'[]' if x.ndim == 0 else '[2]'}"
    return repr(x)


@pytest.mark.parametrize("a, b, expected", DOCUMENTED,
                         ids=[f"{_id(a)}+{_id(b)}" for a, b, _ in DOCUMENTED])
def test_documented_promotion(a, b, expected):
    assert torch.result_type(a, b) == expected
    assert ref_result_type(a, b) == expected          # the OpInfo tests' reference agrees
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        assert torch.add(a, b).dtype == expected      # and the ops apply it
        assert (a * b if isinstance(a, torch.Tensor) else b * a).dtype == expected


@pytest.mark.parametrize("a, b, expected", [
    (torch.int32, torch.float32, torch.float32), (torch.uint8, torch.int64, torch.int64),
    (torch.uint8, torch.int8, torch.int16), (torch.bool, torch.bool, torch.bool),
    (torch.float16, torch.int64, torch.float16), (torch.complex64, torch.float64, torch.complex128),
    (torch.int16, torch.float16, torch.float16), (torch.bool, torch.uint8, torch.uint8),
])
def test_promote_types(a, b, expected):
    assert torch.promote_types(a, b) == expected
    assert torch.promote_types(b, a) == expected


def test_python_float_takes_the_default_dtype():
    x = torch.ones(2, dtype=torch.int32)
    previous = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        assert (x + 2.5).dtype == torch.float64
        assert torch.tensor(1.5).dtype == torch.float64
        assert torch.tensor(1j).dtype == torch.complex128
    finally:
        torch.set_default_dtype(previous)
    assert (x + 2.5).dtype == torch.float32


def test_out_of_range_python_ints_wrap_around():
    x = torch.ones(2, dtype=torch.int8)
    assert (x + 1000).tolist() == [-23, -23]
    assert (torch.ones(2, dtype=torch.uint8) - 300).tolist() == [213, 213]


def test_set_default_dtype_refuses_non_floats():
    with pytest.raises(TypeError, match="floating"):
        torch.set_default_dtype(torch.int64)


@pytest.mark.parametrize("fn, dtype", [
    (torch.sin, torch.float32), (torch.sqrt, torch.float32), (lambda x: x / 2, torch.float32),
    (torch.sum, torch.int64), (torch.cumsum, torch.int64), (torch.mean, None),
    (lambda x: x // 2, torch.int32), (torch.abs, torch.int32), (torch.argmax, torch.int64),
])
def test_integer_inputs(fn, dtype):
    """Floating functions of integers give the default float; sums accumulate in int64;
    mean refuses integers (PyTorch's "could not infer output dtype")."""
    x = torch.tensor([1, 2, 3], dtype=torch.int32)
    call = (lambda: fn(x, 0)) if fn is torch.cumsum else (lambda: fn(x))
    if dtype is None:
        with pytest.raises(RuntimeError, match="dtype"):
            call()
    else:
        assert call().dtype == dtype


def test_in_place_ops_cannot_change_category():
    x = torch.ones(3, dtype=torch.int32)
    x.add_(5)                     # same category: fine
    x.mul_(torch.ones(3, dtype=torch.int64))
    assert x.dtype == torch.int32
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.add_(5.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        x *= torch.ones(3, dtype=torch.float64)
    y = torch.ones(3)
    y += torch.ones(3, dtype=torch.float64)   # float64 into float32: same category
    assert y.dtype == torch.float32


def test_matrix_products_do_not_promote():
    a, b = torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="same dtype"):
        a @ b


def test_dtype_objects():
    assert torch.float32.is_floating_point and not torch.int64.is_floating_point
    assert torch.complex64.is_complex and torch.float64.itemsize == 8
    assert torch.float is torch.float32 and torch.double is torch.float64
    assert torch.long is torch.int64 and torch.half is torch.float16
    assert repr(torch.float32) == "torch.float32"
    assert torch.tensor([1, 2]).dtype == torch.int64
    assert torch.tensor([True]).dtype == torch.bool
    assert torch.from_numpy(np.zeros(2, np.int16)).dtype == torch.int16


# ---------------------------------------------------------------------------------------
# Differential sweep against PyTorch

def _make(kind, dtype, lib):
    if kind == "dim":
        return lib.ones(2, dtype=getattr(lib, dtype.name))
    if kind == "zero_dim":
        return lib.ones((), dtype=getattr(lib, dtype.name))
    return {"b": True, "u": 3, "i": 3, "f": 2.5, "c": 1 + 2j}[dtype.np.kind]


_KINDS = ("dim", "zero_dim", "number")


@pytest.mark.parametrize("left, right", [(a, b) for a in _KINDS for b in _KINDS if (a, b) != ("number", "number")])
def test_result_type_matches_torch(left, right):
    real_torch = pytest.importorskip("torch")
    mismatches = []
    for da, db in itertools.product(DTYPES, DTYPES):
        if left == "number" and da.np.kind == "u" or right == "number" and db.np.kind == "u":
            continue  # one Python int stands for all integer dtypes
        try:
            expected = real_torch.result_type(_make(left, da, real_torch), _make(right, db, real_torch))
        except RuntimeError:
            continue
        if expected == real_torch.complex32:
            continue  # complex32 does not exist in NumPy
        got = torch.result_type(_make(left, da, torch), _make(right, db, torch))
        if got.name != str(expected).replace("torch.", ""):
            mismatches.append(f"{left} {da.name} + {right} {db.name}: {got} vs PyTorch {expected}")
    assert not mismatches, "\n".join(mismatches)


def test_promote_types_matches_torch():
    real_torch = pytest.importorskip("torch")
    for da, db in itertools.product(DTYPES, DTYPES):
        expected = real_torch.promote_types(getattr(real_torch, da.name), getattr(real_torch, db.name))
        assert torch.promote_types(da, db).name == str(expected).replace("torch.", ""), (da, db)


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "maximum", "eq", "where"])
def test_op_result_dtypes_match_torch(op):
    """The ops apply the promotion: their result dtype is PyTorch's for every dtype pair."""
    real_torch = pytest.importorskip("torch")
    mismatches = []
    for da, db in itertools.product(DTYPES, DTYPES):
        def run(lib):
            a, b = _make("dim", da, lib), _make("zero_dim", db, lib)
            if op == "where":
                return lib.where(lib.ones(2, dtype=lib.bool), a, b)
            return getattr(lib, op)(a, b)
        try:
            expected = run(real_torch).dtype
        except (RuntimeError, TypeError):
            continue
        if expected == real_torch.complex32:
            continue  # complex32 does not exist in NumPy
        try:
            got = run(torch).dtype
        except (RuntimeError, TypeError) as e:
            mismatches.append(f"{op}({da.name}, {db.name}): numtorch raises {e}")
            continue
        if got.name != str(expected).replace("torch.", ""):
            mismatches.append(f"{op}({da.name}[2], {db.name}[]): {got} vs PyTorch {expected}")
    assert not mismatches, "\n".join(mismatches)
