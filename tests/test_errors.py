"""Bad input (SPEC §4): each misuse raises PyTorch's exception type with a message that
names the argument and what was expected versus what was given.

Every case runs against numtorch (type and message) and, when PyTorch is installed,
against PyTorch too (same exception type: a case numtorch refuses must be one PyTorch
refuses). PyTorch's NotImplementedError is a RuntimeError subclass and counts as one.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import numtorch


def _backward_twice(t):
    y = (t.ones(2, requires_grad=True) * 2).sum()
    y.backward()
    y.backward()


def _in_place_leaf(t):
    t.ones(2, requires_grad=True).add_(1)


def _modified_saved(t):
    x = t.ones(2, requires_grad=True)
    y = x * 2
    z = y * y
    y.add_(1)
    z.sum().backward()


def _setattr_grad(t):
    x = t.ones(2, requires_grad=True)
    x.grad = t.ones(3)


_DIM_RANGE = r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"

# (id, call(lib), exception type, regex the numtorch message must match)
CASES = [
    # shapes
    ("broadcast", lambda t: t.ones(2, 3) + t.ones(4), RuntimeError,
     r"size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 1"),
    ("matmul", lambda t: t.ones(2, 3) @ t.ones(4, 5), RuntimeError,
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("matmul_0d", lambda t: t.matmul(t.tensor(1.0), t.ones(2)), RuntimeError,
     r"both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    ("mm_vector", lambda t: t.mm(t.ones(2), t.ones(2, 2)), RuntimeError, r"self must be a matrix"),
    ("bmm_2d", lambda t: t.bmm(t.ones(2, 2), t.ones(2, 2)), RuntimeError, r"batch1 must be a 3D tensor"),
    ("outer_2d", lambda t: t.outer(t.ones(2, 2), t.ones(2)), RuntimeError, r"outer"),
    ("cat", lambda t: t.cat([t.ones(2, 3), t.ones(2, 4)]), RuntimeError,
     r"Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1"),
    ("stack", lambda t: t.stack([t.ones(2), t.ones(3)]), RuntimeError,
     r"stack expects each tensor to be equal size, but got \[2\] at entry 0 and \[3\] at entry 1"),
    ("view_numel", lambda t: t.ones(2, 3).view(4), RuntimeError, r"shape '\[4\]' is invalid for input of size 6"),
    ("view_strides", lambda t: t.ones(2, 3).t().view(6), RuntimeError,
     r"view size is not compatible with input tensor's size and stride"),
    ("reshape_two_inferred", lambda t: t.ones(6).reshape(-1, -1), RuntimeError,
     r"only one dimension can be inferred"),
    ("expand", lambda t: t.ones(2, 2).expand(2, 3), RuntimeError,
     r"expanded size of the tensor \(3\) must match the existing size \(2\) at non-singleton dimension 1"),
    ("in_place_broadcast", lambda t: t.ones(3).add_(t.ones(2, 3)), RuntimeError,
     r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"),
    ("setitem_shape", lambda t: t.ones(2, 3).__setitem__(0, t.ones(4)), RuntimeError, r"\[4\].*\[3\]|\[3\].*\[4\]"),
    ("split_sizes", lambda t: t.ones(5).split([2, 2]), RuntimeError,
     r"split_with_sizes expects split_sizes to sum exactly to 5"),
    ("unflatten", lambda t: t.ones(6).unflatten(0, (4, 2)), RuntimeError,
     r"unflatten: Provided sizes \[4, 2\] don't multiply up to the size of dim 0 \(6\)"),
    ("permute_rank", lambda t: t.ones(2, 3).permute(0), RuntimeError, r"input.dim\(\) = 2 is not equal to len\(dims\) = 1"),
    ("repeat_rank", lambda t: t.ones(2, 2).repeat(2), RuntimeError, r"Number of dimensions of repeat dims"),
    ("narrow", lambda t: t.ones(3).narrow(0, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)"),
    ("t_3d", lambda t: t.ones(2, 2, 2).t(), RuntimeError, r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"),
    ("diag_3d", lambda t: t.diag(t.ones(2, 2, 2)), RuntimeError, r"diag\(\): Supports 1D or 2D tensors. Got 3D"),
    ("tril_1d", lambda t: t.tril(t.ones(3)), RuntimeError, r"tril: input tensor must have at least 2 dimensions"),
    ("flatten_order", lambda t: t.ones(2, 3).flatten(1, 0), RuntimeError, r"start_dim cannot come after end_dim"),
    ("roll_align", lambda t: t.ones(2, 2).roll((1, 1), (0,)), RuntimeError, r"shifts and dimensions must align"),
    ("chunk_zero", lambda t: t.ones(2).chunk(0), RuntimeError, r"chunk expects `chunks` to be greater than 0, got: 0"),
    ("zeros_negative", lambda t: t.zeros(-1), RuntimeError, r"negative"),
    ("ragged_data", lambda t: t.tensor([[1, 2], [3]]), ValueError, r"."),
    # dims and indices
    ("dim_out_of_range", lambda t: t.ones(2).sum(3), IndexError,
     r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 3\)"),
    ("unsqueeze_dim", lambda t: t.ones(2).unsqueeze(3), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)"),
    ("index_out_of_range", lambda t: t.ones(2, 3)[5], IndexError,
     r"index 5 is out of bounds for dimension 0 with size 2"),
    ("index_out_of_range_dim1", lambda t: t.ones(2, 3)[0, 7], IndexError,
     r"index 7 is out of bounds for dimension 1 with size 3"),
    ("too_many_indices", lambda t: t.ones(2)[0, 0], IndexError, r"too many indices for tensor of dimension 1"),
    ("tensor_index_out_of_range", lambda t: t.ones(3)[t.tensor([0, 3])], IndexError, r"out of bounds"),
    ("float_index", lambda t: t.ones(3)[t.tensor([0.5])], IndexError,
     r"tensors used as indices must be long, int, byte or bool tensors"),
    ("mask_shape", lambda t: t.ones(2, 3)[t.tensor([True, False, True])], IndexError, r"mask \[3\]"),
    ("select_index", lambda t: t.ones(3).select(0, 5), IndexError, r"index 5"),
    ("index_select_2d", lambda t: t.index_select(t.ones(3), 0, t.zeros(2, 1, dtype=t.int64)), IndexError,
     r"index_select\(\): Index is supposed to be a vector"),
    ("len_0d", lambda t: len(t.tensor(1.0)), TypeError, r"len\(\) of a 0-d tensor"),
    # dtypes
    ("requires_grad_int", lambda t: t.zeros(3, dtype=t.int64).requires_grad_(), RuntimeError,
     r"only Tensors of floating point (and complex )?dtype can require gradients"),
    ("dot_dtypes", lambda t: t.dot(t.ones(2), t.ones(2, dtype=t.float64)), RuntimeError,
     r"same dtype.*(float|Float).*(double|Double)"),
    ("mean_int", lambda t: t.ones(2, dtype=t.int64).mean(), RuntimeError,
     r"mean\(\): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long"),
    ("where_condition", lambda t: t.where(t.ones(2), t.ones(2), t.ones(2)), RuntimeError,
     r"where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    ("masked_fill_mask", lambda t: t.ones(2).masked_fill(t.ones(2), 1.0), RuntimeError,
     r"masked_fill_ only supports boolean masks, but got mask with dtype float"),
    ("bool_subtraction", lambda t: t.ones(2, dtype=t.bool) - t.ones(2, dtype=t.bool), RuntimeError,
     r"Subtraction, the `-` operator, with two bool tensors is not supported"),
    ("bool_negation", lambda t: -t.ones(2, dtype=t.bool), RuntimeError,
     r"Negation, the `-` operator, on a bool tensor is not supported"),
    ("bitwise_float", lambda t: t.ones(2) & t.ones(2), RuntimeError, r"bitwise_and.*not implemented for 'Float'"),
    ("int_negative_power", lambda t: t.tensor([2]) ** -1, RuntimeError,
     r"Integers to negative integer powers are not allowed"),
    ("int_division_by_zero", lambda t: t.tensor([1]) // 0, RuntimeError, r"ZeroDivisionError"),
    ("in_place_cast", lambda t: t.ones(2, dtype=t.int64).add_(1.5), RuntimeError,
     r"result type Float can't be cast to the desired output type Long"),
    ("set_dtype", lambda t: t.ones(2).set_(t.ones(2, dtype=t.int64)), RuntimeError, r"Could not set tensor of type"),
    # values and arguments
    ("item_many", lambda t: t.ones(6).item(), RuntimeError, r"a Tensor with 6 elements cannot be converted to Scalar"),
    ("bool_many", lambda t: bool(t.ones(2)), RuntimeError, r"Boolean value of Tensor with more than one value is ambiguous"),
    ("max_empty", lambda t: t.ones(0).max(), RuntimeError,
     r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0"),
    ("argmax_empty", lambda t: t.ones(0).argmax(), IndexError,
     r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) == 0"),
    ("argmax_empty_dim", lambda t: t.ones(3, 0).argmax(1), IndexError,
     r"argmax\(\): Expected reduction dim 1 to have non-zero size"),
    ("clamp_no_bounds", lambda t: t.clamp(t.ones(2)), RuntimeError, r"At least one of 'min' or 'max' must not be None"),
    ("div_rounding_mode", lambda t: t.div(t.ones(2), 2, rounding_mode="ceil"), RuntimeError,
     r"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'ceil'"),
    ("arange_step", lambda t: t.arange(0, 10, 0), RuntimeError, r"step must be nonzero"),
    ("randint_bounds", lambda t: t.randint(5, 2, (3,)), RuntimeError, r"from=5 >= to=2"),
    ("meta_and_cpu", lambda t: t.ones(2, device="meta") + t.ones(2), RuntimeError, r"meta.*cpu|cpu.*meta"),
    ("numpy_of_requires_grad", lambda t: t.ones(2, requires_grad=True).numpy(), RuntimeError,
     r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead"),
    # autograd
    ("backward_non_scalar", lambda t: (t.ones(2, requires_grad=True) * 2).backward(), RuntimeError,
     r"grad can be implicitly created only for scalar outputs"),
    ("backward_twice", _backward_twice, RuntimeError,
     r"Trying to backward through the graph a second time.*retain_graph=True"),
    ("in_place_on_leaf", _in_place_leaf, RuntimeError,
     r"a leaf Variable that requires grad is being used in an in-place operation"),
    ("modified_saved_tensor", _modified_saved, RuntimeError,
     r"one of the variables needed for gradient computation has been modified by an inplace operation"),
    ("backward_without_grad", lambda t: t.ones(2).sum().backward(), RuntimeError,
     r"element 0 of tensors does not require grad and does not have a grad_fn"),
    ("grad_shape", _setattr_grad, RuntimeError, r"size.*\[3\].*\[2\]|\[2\].*\[3\]"),
    # 0-d and empty tensors (issue 11): dims 0 and -1 are the only valid ones on a 0-d tensor
    ("float_scalar_index", lambda t: t.ones(3)[1.0], IndexError,
     r"only integers, slices.*are valid indices \(got float\)"),
    ("float_scalar_index_advanced", lambda t: t.ones(3, 2)[t.tensor([0]), 1.0], IndexError,
     r"valid indices \(got float\)"),
    ("transpose_0d", lambda t: t.tensor(2.).transpose(0, 1), IndexError, _DIM_RANGE),
    ("cumsum_0d", lambda t: t.tensor(2.).cumsum(1), IndexError, _DIM_RANGE),
    ("cumprod_0d", lambda t: t.tensor(2.).cumprod(dim=1), IndexError, _DIM_RANGE),
    ("sort_0d", lambda t: t.tensor(2.).sort(dim=1), IndexError, _DIM_RANGE),
    ("argsort_0d", lambda t: t.tensor(2.).argsort(dim=-2), IndexError, r"got -2\)"),
    ("mean_0d", lambda t: t.tensor(2.).mean(dim=1), IndexError, _DIM_RANGE),
    ("flip_0d", lambda t: t.tensor(2.).flip(1), IndexError, _DIM_RANGE),
    ("roll_0d", lambda t: t.tensor(1.).roll(1, 0), IndexError,
     r"Dimension specified as 0 but tensor has no dimensions"),
    ("narrow_0d", lambda t: t.tensor(1.).narrow(0, 0, 1), RuntimeError,
     r"narrow\(\) cannot be applied to a 0-dim tensor"),
    ("cat_0d", lambda t: t.cat([t.tensor(1.), t.tensor(2.)]), RuntimeError,
     r"zero-dimensional tensor \(at position 0\) cannot be concatenated"),
    ("amax_empty_dim", lambda t: t.ones(0, 2).amax(0), IndexError,
     r"amax\(\): Expected reduction dim 0 to have non-zero size"),
    ("amin_empty_dim", lambda t: t.ones(2, 0).amin((0, 1)), IndexError,
     r"amin\(\): Expected reduction dim 1 to have non-zero size"),
    ("ragged_list", lambda t: t.tensor([[1., 2.], [3.]]), ValueError,
     r"expected sequence of length 2 at dim 1 \(got 1\)"),
    ("ragged_list_deep", lambda t: t.tensor([[[1], [2]], [[1], [2, 3]]]), ValueError,
     r"expected sequence of length 1 at dim 2 \(got 2\)"),
    ("ragged_scalar", lambda t: t.tensor([[1., 2.], 3.]), TypeError, r"not a sequence"),
]


@pytest.mark.parametrize("call, kind, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_numtorch_raises(call, kind, message):
    with pytest.raises(kind, match=message):
        call(numtorch)


@pytest.mark.parametrize("call, kind", [c[1:3] for c in CASES], ids=[c[0] for c in CASES])
def test_pytorch_raises_the_same_type(call, kind):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as info:
        call(torch)
    assert isinstance(info.value, kind), f"PyTorch raises {type(info.value).__name__}: {info.value}"


def test_cuda_is_unavailable():
    """numtorch runs on the CPU only: asking for CUDA raises (PyTorch's CPU build raises
    AssertionError, numtorch a RuntimeError that says why)."""
    with pytest.raises(RuntimeError, match="CPU only"):
        numtorch.ones(1).cuda()
    with pytest.raises(RuntimeError, match="CUDA is not available in numtorch"):
        numtorch.ones(1, device="cuda")


# PyTorch 2.13's user warnings (Note [Warn-once user warnings]): the same text, shown once
# per process, and only where PyTorch shows them (checked against the oracle where installed).

def _fresh_warning_flags():
    from numtorch._core import tensor as _tensor_mod
    from numtorch._ops import creation as _creation_mod
    _tensor_mod._warned_scalar_of_requires_grad[0] = False
    _creation_mod._warned_list_of_ndarrays[0] = False


@pytest.mark.parametrize("make, data", [("tensor", [np.ones(2), np.zeros(2)]),
                                        ("as_tensor", (np.ones(2), np.zeros(2))),
                                        ("tensor", [[1.0, 2.0], np.ones(2)])])
def test_tensor_from_a_list_of_ndarrays_warns_once(make, data):
    import warnings
    _fresh_warning_flags()
    with pytest.warns(UserWarning, match="Creating a tensor from a list of numpy.ndarrays is "
                                         "extremely slow") as record:
        out = getattr(numtorch, make)(data)
    assert record[0].filename == __file__   # points at the user's line
    np.testing.assert_array_equal(out.numpy(), np.array(data))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(numtorch, make)(data)         # once per process, as PyTorch's TORCH_WARN_ONCE
        numtorch.tensor([[1.0, 2.0], [3.0, 4.0]])   # plain lists never warn


def test_scalar_of_a_tensor_requiring_grad_warns_like_pytorch():
    import warnings
    x = numtorch.ones((), requires_grad=True)
    for quiet in (lambda: x.item(), lambda: int(x), lambda: bool(x), lambda: x.tolist(),
                  lambda: float(x.detach())):
        _fresh_warning_flags()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            quiet()
    _fresh_warning_flags()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with numtorch.no_grad():
            float(x)                          # grad mode off: no warning
    for loud in (lambda: float(x), lambda: complex(x), lambda: float(x * 2)):
        _fresh_warning_flags()
        with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a "
                                             "scalar may lead to unexpected behavior.\nConsider "
                                             "using tensor.detach\\(\\) first."):
            loud()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        float(x)                              # shown once per process


def test_user_warning_texts_equal_pytorchs():
    torch = pytest.importorskip("torch")
    import subprocess
    import sys
    code = ("import warnings, numpy as np, torch\nwarnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    torch.tensor([np.ones(2)]); float(torch.ones((), requires_grad=True))\n"
            "print('|'.join(str(x.message).split(' (Triggered')[0] for x in w))")
    theirs = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    _fresh_warning_flags()
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        numtorch.tensor([np.ones(2)])
        float(numtorch.ones((), requires_grad=True))
    assert "|".join(str(x.message) for x in w) == theirs


def test_float_overflow_and_nan_are_silent_as_in_pytorch():
    # Note [Silent floating-point errors]: inf and nan come back without NumPy's
    # RuntimeWarning, while the user's own NumPy code keeps warning. In a fresh interpreter:
    # pytest restores the warning filters around collection, which drops the one numtorch
    # installs when a test module imports it.
    import subprocess
    import sys
    code = """
import warnings, numpy as np, numtorch, numtorch.func
warnings.filterwarnings("always", category=RuntimeWarning, append=True)
big = numtorch.tensor([1e30, 2.0])
with warnings.catch_warnings(record=True) as w:
    out = [big * big, big * big + big * big, numtorch.tensor([3e38]) + 3e38,
           numtorch.tensor([7e4]).half(),
           numtorch.tensor([[float("nan"), 1.0]]) @ numtorch.ones(2, 2),
           numtorch.tensor([1e30]).exp(), numtorch.tensor([0.0]).log(),
           numtorch.func.make_graph(lambda a: a.sin() * a)(big * big)(big * big)[0]]
    np.float32(1e30) * np.float32(1e30)
print([str(r.message) for r in w])
print(all(np.isinf(p.numpy()).any() or np.isnan(p.numpy()).any() for p in out))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["['overflow encountered in scalar multiply']", "True"]
