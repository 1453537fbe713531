"""The everyday utilities of ``torch`` (numtorch/_ops/_surface_utils.py), against PyTorch
where installed and against NumPy otherwise."""
import numpy as np
import pytest

import numtorch

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("name", FLOAT_DTYPES + ("complex64", "complex128"))
def test_finfo_matches_torch(torch, name):
    ours, theirs = numtorch.finfo(getattr(numtorch, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    if name == "float32":
        assert repr(ours) == repr(theirs)
        assert numtorch.finfo() == ours   # the default dtype


@pytest.mark.parametrize("name", INT_DTYPES)
def test_iinfo_matches_torch(torch, name):
    ours, theirs = numtorch.iinfo(getattr(numtorch, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.max, ours.min, ours.dtype) == (theirs.bits, theirs.max, theirs.min,
                                                          theirs.dtype)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("call, match", [
    (lambda: numtorch.finfo(numtorch.int32), "requires a floating point input type"),
    (lambda: numtorch.iinfo(numtorch.float32), "requires an integer input type"),
    (lambda: numtorch.iinfo(numtorch.bool), "torch.bool is not supported"),
    (lambda: numtorch.numel(3), "argument 'input'"),
    (lambda: numtorch.is_floating_point([1.0]), "argument 'input'"),
    (lambda: numtorch.can_cast("float32", numtorch.int32), "argument 'from_'"),
])
def test_type_query_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_type_queries_match_torch(torch):
    names = FLOAT_DTYPES + INT_DTYPES + ("bool", "complex64")
    for a in names:
        for b in names:
            ours = numtorch.can_cast(getattr(numtorch, a), getattr(numtorch, b))
            assert ours == torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)
        x, y = numtorch.zeros(2, dtype=getattr(numtorch, a)), torch.zeros(2, dtype=getattr(torch, a))
        assert numtorch.typename(x) == torch.typename(y)
        assert x.is_signed() == y.is_signed(), a
        assert (x.itemsize, x.nbytes) == (y.itemsize, y.nbytes), a
        assert numtorch.is_floating_point(x) == torch.is_floating_point(y)
        assert numtorch.is_complex(x) == torch.is_complex(y)
    assert numtorch.typename(3) == torch.typename(3) == "int"
    assert numtorch.typename(np.zeros(1)) == torch.typename(np.zeros(1))
    assert numtorch.is_tensor(numtorch.zeros(1)) and not numtorch.is_tensor(np.zeros(1))
    assert numtorch.numel(numtorch.zeros(2, 3)) == 6
    assert numtorch.is_same_size(numtorch.zeros(2), numtorch.ones(2))
    assert not numtorch.zeros(2).is_same_size(numtorch.zeros(3))


def test_is_nonzero():
    assert numtorch.is_nonzero(numtorch.tensor([1.5]))
    assert not numtorch.tensor(0).is_nonzero()
    with pytest.raises(RuntimeError, match="more than one value"):
        numtorch.is_nonzero(numtorch.zeros(2))
    with pytest.raises(RuntimeError, match="no values"):
        numtorch.is_nonzero(numtorch.zeros(0))


def test_flags_round_trip_and_validate():
    assert numtorch.get_float32_matmul_precision() == "highest"
    try:
        numtorch.set_float32_matmul_precision("medium")
        assert numtorch.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="not one of"):
            numtorch.set_float32_matmul_precision("low")
        assert numtorch.get_float32_matmul_precision() == "medium"
        with pytest.raises(RuntimeError, match="expects a str"):
            numtorch.set_float32_matmul_precision(3)
    finally:
        numtorch.set_float32_matmul_precision("highest")
    try:
        numtorch.use_deterministic_algorithms(True, warn_only=True)
        assert numtorch.are_deterministic_algorithms_enabled()
        assert numtorch.is_deterministic_algorithms_warn_only_enabled()
        numtorch.set_anomaly_enabled(True)
        assert numtorch.is_anomaly_enabled()
    finally:
        numtorch.use_deterministic_algorithms(False)
        numtorch.set_anomaly_enabled(False)
    assert not numtorch.are_deterministic_algorithms_enabled() and not numtorch.is_anomaly_enabled()


def test_inference_mode_is_visible():
    assert not numtorch.is_inference_mode_enabled()
    with numtorch.inference_mode():
        assert numtorch.is_inference_mode_enabled() and not numtorch.is_grad_enabled()
        with numtorch.inference_mode(False):
            assert numtorch.is_inference_mode_enabled()   # PyTorch: the outer block still holds

    @numtorch.inference_mode()
    def f():
        return numtorch.is_inference_mode_enabled()

    assert f() and not numtorch.is_inference_mode_enabled()
    assert not numtorch.zeros(1).is_inference()


def test_creation_and_index_helpers_match_torch(torch):
    def same(a, b):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())

    same(numtorch.scalar_tensor(3), torch.scalar_tensor(3))
    same(numtorch.scalar_tensor(True, dtype=numtorch.int64), torch.scalar_tensor(True, dtype=torch.int64))
    for args in ((3, 4), (3, 4, 1), (4, 3, -1), (0, 3), (5, 5, -7)):
        same(numtorch.tril_indices(*args), torch.tril_indices(*args))
        same(numtorch.triu_indices(*args), torch.triu_indices(*args))
    same(numtorch.triu_indices(3, 3, dtype=numtorch.int32), torch.triu_indices(3, 3, dtype=torch.int32))
    for idx, shape in (([4, 5, -1], (2, 3)), (4, (2, 3)), ([[0, 7], [3, 2]], (2, 2, 2)), ([2], 5)):
        ours = numtorch.unravel_index(numtorch.tensor(idx), shape)
        theirs = torch.unravel_index(torch.tensor(idx), shape)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
    with pytest.raises(TypeError, match="'indices' to be integer"):
        numtorch.unravel_index(numtorch.tensor([1.0]), (2, 3))
    with pytest.raises(RuntimeError, match="must be in range"):
        numtorch.unravel_index(numtorch.tensor([6]), (2, 3))
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 3, 4), (1, 8, 2))):
        e = numtorch.empty_strided(size, stride)
        assert e.stride() == torch.empty_strided(size, stride).stride() and tuple(e.shape) == size
    parts = numtorch.split_with_sizes(numtorch.arange(5), [2, 3])
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3, 4]]
    with pytest.raises(RuntimeError, match="sum exactly to 5"):
        numtorch.split_with_sizes(numtorch.arange(5), [2, 2])


def test_storage_properties_match_torch(torch):
    x, y = numtorch.arange(24.0).reshape(4, 6), torch.arange(24.0).reshape(4, 6)
    for view in (lambda t: t[1:, 2:], lambda t: t[2], lambda t: t.t(), lambda t: t[:, 3],
                 lambda t: t[1:][1:].reshape(-1)[5:]):
        assert view(x).storage_offset() == view(y).storage_offset()
    assert x.storage_offset() == 0 and x.clone()[1].storage_offset() == 6
    assert x.get_device() == y.get_device() == -1 and x.is_cpu
