"""The Tensor itself: creation, repr, conversions, views and aliasing, the version counter,
in-place ops, ``__setitem__`` and indexing (basic, advanced, bool, None, Ellipsis) vs NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch

# ---------------------------------------------------------------------------------------
# Creation


def test_tensor_copies_and_infers_dtype():
    data = [[1, 2], [3, 4]]
    t = torch.tensor(data)
    assert t.dtype == torch.int64 and t.shape == (2, 2) and t.tolist() == data
    assert torch.tensor([1.0, 2]).dtype == torch.float32
    assert torch.tensor([True, False]).dtype == torch.bool
    assert torch.tensor(3.5).ndim == 0
    a = np.arange(3.0)
    t = torch.tensor(a)
    a[0] = 100
    assert t[0].item() == 0.0, "torch.tensor copies its data"
    assert torch.tensor(a).dtype == torch.float64, "NumPy arrays keep their dtype"


def test_from_numpy_and_as_tensor_share_memory():
    a = np.arange(4.0)
    for t in (torch.from_numpy(a), torch.as_tensor(a)):
        a[1] = -1.0
        assert t[1].item() == -1.0
        t[2] = 7.0
        assert a[2] == 7.0
    assert torch.as_tensor(a, dtype=torch.float32)[1].item() == -1.0
    with pytest.raises(TypeError):
        torch.from_numpy([1, 2])


@pytest.mark.parametrize("fn, expected", [
    (lambda: torch.zeros(2, 3), np.zeros((2, 3), np.float32)),
    (lambda: torch.ones((2,), dtype=torch.int64), np.ones(2, np.int64)),
    (lambda: torch.full((2, 2), 7), np.full((2, 2), 7, np.int64)),
    (lambda: torch.full((2,), 1.5), np.full(2, 1.5, np.float32)),
    (lambda: torch.arange(5), np.arange(5)),
    (lambda: torch.arange(1, 2, 0.25), np.arange(1, 2, 0.25, dtype=np.float32)),
    (lambda: torch.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32)),
    (lambda: torch.eye(2, 3), np.eye(2, 3, dtype=np.float32)),
    (lambda: torch.zeros_like(torch.ones(2, dtype=torch.int32)), np.zeros(2, np.int32)),
    (lambda: torch.full_like(torch.ones(2), 3), np.full(2, 3, np.float32)),
])
def test_creation_values_and_dtypes(fn, expected):
    t = fn()
    assert t.dtype == torch.from_numpy(expected).dtype
    np.testing.assert_array_equal(t.numpy(), expected)


def test_random_creation_is_reproducible_and_generators_are_independent():
    torch.manual_seed(3)
    a = torch.randn(4)
    torch.manual_seed(3)
    assert torch.equal(a, torch.randn(4))
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    torch.randn(10)  # the default generator does not disturb the others
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))
    assert not torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g1))
    state = torch.get_rng_state()
    x = torch.rand(2)
    torch.set_rng_state(state)
    assert torch.equal(x, torch.rand(2))
    assert torch.initial_seed() == 3


def test_meta_tensors_have_shape_and_dtype_but_no_data():
    m = torch.empty(2, 3, device="meta")
    assert m.is_meta and m.device.type == "meta" and m.shape == (2, 3)
    out = (m @ torch.empty(3, 4, device="meta")).sum(0)
    assert out.is_meta and out.shape == (4,)
    x = torch.randn(2).to("meta")
    assert x.is_meta and x.dtype == torch.float32
    with pytest.raises(NotImplementedError):
        m.numpy()


# ---------------------------------------------------------------------------------------
# repr, against PyTorch's


REPR_CASES = [
    "tensor([1.5, 2.0, -3.25])", "tensor([[1, 2], [3, 4]])", "tensor(3.5)", "tensor(7)",
    "tensor([1.0, 2.0], dtype={m}.float64)", "tensor([1, 2], dtype={m}.int32)",
    "tensor([1.0, 2.0], requires_grad=True)", "tensor([1e-5, 1e5])", "tensor([1e10, 1.0])",
    "tensor([float('nan'), float('inf'), -float('inf')])", "tensor([0.1, 0.25])",
    "tensor([123456789.0])", "zeros(2, dtype={m}.float16)", "tensor([True, False])",
    "zeros(0)", "zeros(2, 0)", "zeros(2, 3, 4)", "arange(2000.)", "tensor([1+2j])",
    "randn(3, device='meta')",
]
@pytest.mark.parametrize("expr", REPR_CASES)
def test_repr_matches_torch(expr):
    real_torch = pytest.importorskip("torch")
    ours = repr(eval("torch." + expr.format(m="torch")))
    theirs = repr(eval("real_torch." + expr.format(m="real_torch")))
    assert ours == theirs


def test_repr_shows_grad_fn():
    y = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    assert repr(y) == "tensor([2., 4.], grad_fn=<MulBackward0>)"


# ---------------------------------------------------------------------------------------
# Conversions


def test_item_tolist_numpy():
    assert torch.tensor([[2.5]]).item() == 2.5
    assert isinstance(torch.tensor(3).item(), int)
    assert torch.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert torch.tensor(1.5).tolist() == 1.5
    with pytest.raises(RuntimeError, match="3 elements cannot be converted to Scalar"):
        torch.tensor([1.0, 2.0, 3.0]).item()
    x = torch.ones(3)
    x.numpy()[0] = 5.0
    assert x[0].item() == 5.0, "numpy() shares memory"
    with pytest.raises(RuntimeError, match="requires grad"):
        torch.ones(2, requires_grad=True).numpy()
    assert float(torch.tensor(2.5)) == 2.5 and int(torch.tensor(3)) == 3
    assert bool(torch.tensor([1])) is True
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(torch.ones(2))


def test_to_and_casts():
    x = torch.tensor([1.7, -2.2])
    assert x.to(torch.int64).tolist() == [1, -2]
    assert x.double().dtype == torch.float64 and x.long().dtype == torch.int64
    assert x.to(torch.float32) is x, "to() returns self when nothing changes"
    assert x.to(torch.float32, copy=True) is not x
    y = torch.ones(2, dtype=torch.float64)
    assert x.to(y).dtype == torch.float64
    assert x.type(torch.float64).dtype == torch.float64 and x.type() == "torch.FloatTensor"


def test_size_and_shape_helpers():
    x = torch.zeros(2, 3, 4)
    assert x.size() == torch.Size([2, 3, 4]) and x.size(-1) == 4 and x.dim() == 3
    assert x.numel() == 24 and len(x) == 2 and x.shape[1:] == torch.Size([3, 4])
    assert repr(x.shape) == "torch.Size([2, 3, 4])"
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(3)
    with pytest.raises(TypeError, match="len"):
        len(torch.tensor(1.0))


# ---------------------------------------------------------------------------------------
# Views share memory; the version counter is shared with them


@pytest.mark.parametrize("make_view", [
    lambda x: x.view(12), lambda x: x.reshape(4, 3), lambda x: x[1], lambda x: x[:, 1:3],
    lambda x: x.t(), lambda x: x.transpose(0, 1), lambda x: x.permute(1, 0),
    lambda x: x.unsqueeze(0), lambda x: x[None, ..., None].squeeze(), lambda x: x.narrow(1, 1, 2),
    lambda x: x.select(0, 2), lambda x: x.diagonal(), lambda x: x.flatten(), lambda x: x.unbind(0)[1],
    lambda x: x.split(2, 1)[1], lambda x: x.chunk(2)[0], lambda x: x.detach(), lambda x: x.T,
], ids=["view", "reshape", "int", "slice", "t", "transpose", "permute", "unsqueeze", "squeeze",
        "narrow", "select", "diagonal", "flatten", "unbind", "split", "chunk", "detach", "T"])
def test_views_share_memory_and_version(make_view):
    x = torch.arange(12.0).reshape(3, 4)
    v = make_view(x)
    assert np.shares_memory(v.numpy(), x.numpy())
    before = x._version
    v.add_(100)           # a write through the view is seen by the base ...
    assert x._version > before and v._version == x._version
    assert float(x.sum()) == float(np.arange(12.0).sum()) + 100 * v.numel()
    x.mul_(0)             # ... and a write to the base by the view
    assert float(v.abs().sum()) == 0.0


def test_reshape_of_non_contiguous_copies():
    x = torch.arange(6.0).reshape(2, 3).t()
    assert not x.is_contiguous()
    y = x.reshape(6)
    assert not np.shares_memory(y.numpy(), x.numpy())
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.view(6)
    assert x.contiguous().is_contiguous()


def test_expand_is_a_view_with_zero_strides():
    x = torch.tensor([[1.0], [2.0]])
    e = x.expand(2, 3)
    assert e.stride() == (1, 0) and np.shares_memory(e.numpy(), x.numpy())
    x[0, 0] = 9.0
    assert e[0].tolist() == [9.0, 9.0, 9.0]


# ---------------------------------------------------------------------------------------
# In-place ops


def test_in_place_ops_return_self_and_bump_the_version():
    x = torch.ones(3)
    for op, args in [("add_", (2,)), ("mul_", (torch.tensor([1.0, 2.0, 3.0]),)), ("sub_", (1,)),
                     ("div_", (2,)), ("pow_", (2,)), ("clamp_", (0, 3)), ("exp_", ()),
                     ("zero_", ()), ("fill_", (4.0,)), ("copy_", (torch.arange(3.0),))]:
        v = x._version
        assert getattr(x, op)(*args) is x, op
        assert x._version == v + 1, op
    assert x.tolist() == [0.0, 1.0, 2.0]


def test_in_place_broadcasting_rules():
    x = torch.ones(2, 3)
    x += torch.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [[2.0, 3.0, 4.0]] * 2
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        torch.ones(3).add_(torch.ones(2, 3))


def test_in_place_on_a_view_updates_the_base():
    x = torch.zeros(3, 3)
    x[1].fill_(1.0)
    x[:, 2] += 5
    x.diagonal().copy_(torch.tensor([7.0, 8.0, 9.0]))
    np.testing.assert_array_equal(x.numpy(), [[7, 0, 5], [1, 8, 6], [0, 0, 9]])


# ---------------------------------------------------------------------------------------
# Indexing and __setitem__ against NumPy

_A = np.arange(4 * 5 * 6, dtype=np.float64).reshape(4, 5, 6)
_I = np.array([3, 0, -1, 2])
_J = np.array([[0, 4], [1, 1]])
_M = (_A[:, :, 0] % 3) == 0
INDICES = [
    1, -1, slice(1, 3), slice(None, None, 2), (1, 2), (1, 2, 3), (slice(None), 2), (Ellipsis, 1),
    (Ellipsis, slice(1, 4), 0), (None,), (None, 1, None), (1, None, slice(2, 5)), (Ellipsis, None),
    (slice(10, 20),), (-2, slice(None), slice(-3, None)), _I, (_I,), (slice(None), _J),
    (_I, slice(None), _I), (_I, _I[::-1]), (slice(None), _J, 0), (Ellipsis, np.array([0, 5])),
    _A[:, 0, 0] > 40, _M, (_M, 2), (slice(None), _A[0, :, 0] > 10),
    [0, 2], ([0, 2], slice(None), [1, 1]), (None, _I), (1, _J), (True,), (False,),
    (0, slice(None), np.array([True, False, True, False, True, False])),
]


def _to_torch_index(i):
    if isinstance(i, tuple):
        return tuple(_to_torch_index(v) for v in i)
    if isinstance(i, np.ndarray):
        return torch.from_numpy(i)
    return i


@pytest.mark.parametrize("index", INDICES, ids=[f"idx{k}" for k in range(len(INDICES))])
def test_getitem_matches_numpy(index):
    expected = _A[index]
    got = torch.from_numpy(_A.copy())[_to_torch_index(index)]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("index", INDICES, ids=[f"idx{k}" for k in range(len(INDICES))])
def test_setitem_matches_numpy(index):
    expected = _A.copy()
    positions = np.arange(_A.size).reshape(_A.shape)[index]
    value = np.arange(positions.size, dtype=np.float64).reshape(positions.shape) + 1000
    if len(np.unique(positions)) != positions.size:
        value = np.full(positions.shape, 1000.0)  # repeated positions: one value for all
    expected[index] = value
    x = torch.from_numpy(_A.copy())
    x[_to_torch_index(index)] = torch.from_numpy(np.asarray(value))
    np.testing.assert_array_equal(x.numpy(), expected)


def test_setitem_broadcasts_scalars_and_casts():
    x = torch.zeros(3, 4, dtype=torch.int64)
    x[1] = 7
    x[:, 0] = torch.tensor([1.9, 2.9, 3.9])     # cast into int64
    x[x > 6] = -1
    np.testing.assert_array_equal(x.numpy(), [[1, 0, 0, 0], [2, -1, -1, -1], [3, 0, 0, 0]])


def test_setitem_under_autograd():
    w = torch.ones(3, requires_grad=True)
    y = w * 2
    y[1] = w[0] * 10
    y.sum().backward()
    assert w.grad.tolist() == [12.0, 0.0, 2.0]


def test_indexing_errors():
    x = torch.zeros(2, 3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 3"):
        x[0, 5]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds"):
        x[torch.tensor([0, 2])]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="mask"):
        x[torch.tensor([True, False, True])]


LEGACY_TYPE_NAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                     "float16": "torch.HalfTensor", "int64": "torch.LongTensor",
                     "int32": "torch.IntTensor", "int16": "torch.ShortTensor",
                     "int8": "torch.CharTensor", "uint8": "torch.ByteTensor",
                     "bool": "torch.BoolTensor", "complex64": "torch.ComplexFloatTensor",
                     "complex128": "torch.ComplexDoubleTensor"}


@pytest.mark.parametrize("name", sorted(LEGACY_TYPE_NAMES))
def test_type_names_and_casts_by_name(name):
    """Tensor.type(): PyTorch's legacy type names (ComplexFloatTensor, CharTensor, ...), and
    a cast given such a name."""
    dtype = getattr(torch, name)
    assert torch.zeros(2, dtype=dtype).type() == LEGACY_TYPE_NAMES[name]
    assert torch.ones(2).type(LEGACY_TYPE_NAMES[name]).dtype == dtype
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        torch.ones(2).type("torch.Foo")


def test_type_names_are_pytorchs():
    real_torch = pytest.importorskip("torch")
    for name, legacy in LEGACY_TYPE_NAMES.items():
        assert real_torch.zeros(1, dtype=getattr(real_torch, name)).type() == legacy
