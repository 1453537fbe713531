"""NumPy interop: ufuncs and functions called on Tensors run numtorch ops and return Tensors.

Values are checked against NumPy on the same data, gradients against central finite
differences (float64), and unmapped functions must raise a TypeError naming them.
"""
import numpy as np
import pytest

import numtorch as torch


def _arr(*shape, positive=False):
    a = np.random.randn(*shape)
    return np.abs(a) + 0.5 if positive else a


def _check(result, expected, rtol=1e-12, atol=1e-12):
    assert isinstance(result, torch.Tensor), type(result)
    np.testing.assert_allclose(result.numpy(), expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------
# ufuncs

UNARY = ["negative", "positive", "absolute", "sign", "exp", "exp2", "expm1", "sin", "cos",
         "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh", "floor", "ceil", "trunc", "rint",
         "square", "isfinite", "isnan"]
UNARY_POSITIVE = ["log", "log2", "log10", "log1p", "sqrt", "reciprocal", "arccosh"]
UNARY_UNIT = ["arcsin", "arccos", "arctanh"]
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax", "fmin",
          "arctan2", "hypot", "logaddexp", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal", "floor_divide", "remainder", "fmod"]


@pytest.mark.parametrize("name", UNARY + UNARY_POSITIVE + UNARY_UNIT)
def test_unary_ufunc_matches_numpy(name):
    a = _arr(3, 4, positive=name in UNARY_POSITIVE) + (1.5 if name == "arccosh" else 0)
    if name in UNARY_UNIT:
        a = np.tanh(a)
    ufunc = getattr(np, name)
    _check(ufunc(torch.from_numpy(a)), ufunc(a))


@pytest.mark.parametrize("name", BINARY)
def test_binary_ufunc_matches_numpy_with_broadcasting(name):
    a, b = _arr(3, 4), _arr(4, positive=True)
    ufunc = getattr(np, name)
    expected = ufunc(a, b)
    _check(ufunc(torch.from_numpy(a), torch.from_numpy(b)), expected)
    _check(ufunc(torch.from_numpy(a), b), expected)  # mixed Tensor / ndarray
    _check(ufunc(a, torch.from_numpy(b)), expected)


def test_power():
    a = _arr(2, 3, positive=True)
    _check(np.power(torch.from_numpy(a), 2.5), a ** 2.5)
    _check(np.power(torch.from_numpy(a), torch.from_numpy(a)), a ** a)
    _check(np.power(2, torch.from_numpy(a)), 2 ** a)
    i = np.arange(1, 7).reshape(2, 3)
    _check(np.power(torch.from_numpy(i), 2), i ** 2)


def test_integer_ops():
    a = np.arange(1, 7).reshape(2, 3)
    t = torch.from_numpy(a)
    _check(np.bitwise_and(t, 3), a & 3)
    _check(np.invert(t), ~a)
    _check(np.logical_and(t > 2, t < 5), (a > 2) & (a < 5))


def test_operators_with_ndarray_or_numpy_scalar_on_the_left_return_tensors():
    a, t = _arr(3), torch.randn(3, dtype=torch.float64)
    for result, expected in [(a + t, a + t.numpy()), (a * t, a * t.numpy()),
                             (a - t, a - t.numpy()), (a / t, a / t.numpy()),
                             (np.float64(2.0) * t, 2.0 * t.numpy()),
                             (a < t, a < t.numpy()), (a @ t, a @ t.numpy())]:
        _check(result, expected)


def test_numpy_scalars_are_weak_like_python_scalars():
    t = torch.ones(3)  # float32
    assert (np.float64(2.0) * t).dtype == torch.float32
    assert np.add(t, np.int64(1)).dtype == torch.float32
    assert np.add(t, np.ones(3)).dtype == torch.float64  # dimensioned ndarray: real operand


def test_integer_input_of_floating_ufunc_promotes_like_pytorch():
    assert np.sin(torch.arange(3)).dtype == torch.float32


def test_ufunc_dtype_argument_casts_operands():
    t = torch.arange(3, dtype=torch.int32)
    out = np.multiply(t, t, dtype=np.float64)
    assert out.dtype == torch.float64
    _check(out, np.arange(3.0) ** 2)


def test_out_tensor_is_written_in_place_and_returned():
    t, out = torch.tensor([0.0, 1.0]), torch.zeros(2)
    version = out._version
    r = np.exp(t, out=out)
    assert r is out and out._version > version
    np.testing.assert_allclose(out.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


def test_out_ndarray_and_augmented_assignment_on_ndarray():
    a = np.zeros(3)
    a += torch.ones(3, dtype=torch.float64)
    np.testing.assert_array_equal(a, [1.0, 1.0, 1.0])
    out = np.empty(3)
    assert np.add(torch.ones(3), 1.0, out=out) is out
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("ufunc,axis,keepdims", [
    (np.add, 0, False), (np.add, None, False), (np.multiply, 1, True), (np.maximum, 1, False),
    (np.minimum, (0, 1), False), (np.logical_and, 0, False), (np.logical_or, 1, True)])
def test_ufunc_reduce(ufunc, axis, keepdims):
    a = _arr(3, 4)
    if ufunc in (np.logical_and, np.logical_or):
        a = a > 0
    _check(ufunc.reduce(torch.from_numpy(a), axis=axis, keepdims=keepdims),
           ufunc.reduce(a, axis=axis, keepdims=keepdims))


def test_ufunc_accumulate_and_outer():
    a, b = _arr(3, 4), _arr(2)
    t = torch.from_numpy(a)
    _check(np.add.accumulate(t, axis=1), np.add.accumulate(a, axis=1))
    _check(np.multiply.accumulate(t), np.multiply.accumulate(a))
    _check(np.subtract.outer(t, torch.from_numpy(b)), np.subtract.outer(a, b))


# ---------------------------------------------------------------------------------------
# functions

A34, B34, A234 = _arr(3, 4), _arr(3, 4), _arr(2, 3, 4)
FUNCTIONS = [
    (np.sum, (A34,), {}), (np.sum, (A34,), {"axis": 1, "keepdims": True}),
    (np.sum, (A234,), {"axis": (0, 2)}), (np.mean, (A34,), {"axis": 0}),
    (np.prod, (A34,), {"axis": (0, 1)}), (np.max, (A34,), {"axis": 1}),
    (np.amin, (A234,), {}), (np.argmax, (A34,), {"axis": 0}), (np.argmin, (A34,), {}),
    (np.std, (A34,), {"axis": 1, "ddof": 1}), (np.var, (A34,), {}),
    (np.cumsum, (A34,), {"axis": 1}), (np.cumsum, (A34,), {}), (np.cumprod, (A34,), {"axis": 0}),
    (np.all, (A34 > -1,), {"axis": 0}), (np.any, (A34 > 1,), {}),
    (np.count_nonzero, (A34 > 0,), {"axis": 1}),
    (np.dot, (A34, B34.T), {}), (np.dot, (A234, _arr(4, 5)), {}), (np.dot, (A34, _arr(4)), {}),
    (np.matmul, (A234, _arr(4, 2)), {}), (np.inner, (A34, B34), {}), (np.outer, (A34[0], B34[1]), {}),
    (np.vdot, (A34, B34), {}), (np.tensordot, (A234, _arr(3, 4, 2)), {"axes": 2}),
    (np.trace, (A34,), {"offset": 1}), (np.linalg.norm, (A34,), {}),
    (np.linalg.norm, (A34,), {"ord": 1, "axis": 1}),
    (np.reshape, (A34, (4, 3)), {}), (np.reshape, (A34, -1), {}), (np.ravel, (A34,), {}),
    (np.transpose, (A234,), {}), (np.transpose, (A234, (1, 0, 2)), {}),
    (np.swapaxes, (A234, 0, 2), {}), (np.moveaxis, (A234, 0, -1), {}),
    (np.squeeze, (A34[None],), {}), (np.expand_dims, (A34, (0, 3)), {}),
    (np.concatenate, ([A34, B34],), {"axis": 1}), (np.concatenate, ([A34, B34],), {"axis": None}),
    (np.stack, ([A34, B34],), {"axis": -1}), (np.vstack, ([A34, B34],), {}),
    (np.hstack, ([A34, B34],), {}), (np.broadcast_to, (A34[0], (2, 4)), {}),
    (np.flip, (A34,), {}), (np.flip, (A34,), {"axis": 1}), (np.roll, (A34, 2), {"axis": 1}),
    (np.tile, (A34, (2, 1)), {}), (np.repeat, (A34, 2), {"axis": 0}),
    (np.diag, (A34,), {"k": 1}), (np.diag, (A34[0],), {}), (np.diagonal, (A234,), {"axis1": 1, "axis2": 2}),
    (np.tril, (A34,), {}), (np.triu, (A34,), {"k": 1}),
    (np.where, (A34 > 0, A34, B34), {}), (np.where, (A34 > 0, A34, 0.0), {}),
    (np.clip, (A34, -0.5, 0.5), {}), (np.clip, (A34, None, 0.1), {}),
    (np.round, (A34 * 100,), {"decimals": -1}), (np.copy, (A34,), {}),
    (np.take_along_axis, (A34, np.argsort(A34, axis=1)), {"axis": 1}),
    (np.take, (A34, [0, 2]), {"axis": 1}), (np.zeros_like, (A34,), {}),
    (np.full_like, (A34, 7.0), {}), (np.isclose, (A34, A34 + 1e-9), {}),
]


@pytest.mark.parametrize("fn,args,kwargs", FUNCTIONS,
                         ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(FUNCTIONS)])
def test_function_matches_numpy(fn, args, kwargs):
    targs = [torch.from_numpy(a) if isinstance(a, np.ndarray) else
             [torch.from_numpy(x) for x in a] if isinstance(a, list) and isinstance(a[0], np.ndarray)
             else a for a in args]
    _check(fn(*targs, **kwargs), fn(*args, **kwargs))


SPD = A34 @ A34.T + 3 * np.eye(3)


@pytest.mark.parametrize("fn,args", [
    (np.linalg.inv, (SPD,)), (np.linalg.det, (SPD,)), (np.linalg.solve, (SPD, A34)),
    (np.linalg.cholesky, (SPD,)), (np.einsum, ("ij,kj->ik", A34, B34))],
    ids=["inv", "det", "solve", "cholesky", "einsum"])
def test_functions_mapped_to_numtorch_linalg_and_einsum(fn, args):
    targs = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
    _check(fn(*targs), fn(*args), rtol=1e-10, atol=1e-12)
    if fn is np.linalg.solve:  # an ndarray operand is converted too
        _check(fn(targs[0], args[1]), fn(*args), rtol=1e-10, atol=1e-12)


def test_sort_maps_to_numtorch_sort_once_it_exists():
    a = _arr(3, 4)
    if not hasattr(torch, "sort"):
        with pytest.raises(TypeError, match=r"numpy\.sort has no numtorch mapping yet"):
            np.sort(torch.from_numpy(a))
        return
    _check(np.sort(torch.from_numpy(a), axis=0), np.sort(a, axis=0))
    _check(np.sort(torch.from_numpy(a), axis=None), np.sort(a, axis=None))
    np.testing.assert_array_equal(np.argsort(torch.from_numpy(a)).numpy(), np.argsort(a))


def test_functions_returning_python_values_or_tuples():
    t = torch.from_numpy(A34)
    assert np.shape(t) == (3, 4) and np.ndim(t) == 2 and np.size(t) == 12 and np.size(t, 1) == 4
    assert np.allclose(t, A34) is True and np.allclose(t, A34 + 1) is False
    assert np.array_equal(t, torch.from_numpy(A34.copy()))
    rows, cols = np.nonzero(t > 0)
    np.testing.assert_array_equal(rows.numpy(), np.nonzero(A34 > 0)[0])
    np.testing.assert_array_equal(cols.numpy(), np.nonzero(A34 > 0)[1])
    parts = np.split(torch.arange(6), 3)
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3], [4, 5]]
    assert [p.tolist() for p in np.array_split(torch.arange(5), 2)] == [[0, 1, 2], [3, 4]]
    with pytest.raises(ValueError, match="equal division"):
        np.split(torch.arange(5), 2)


def test_mean_of_integer_tensor_is_floating_like_numpy():
    _check(np.mean(torch.arange(4)), 1.5, rtol=1e-6)


def test_reduction_out_argument():
    out = torch.zeros(4, dtype=torch.float64)
    assert np.sum(torch.from_numpy(A34), axis=0, out=out) is out
    np.testing.assert_allclose(out.numpy(), A34.sum(0), rtol=1e-12)


def test_asarray_shares_memory_and_tensor_methods_still_work():
    t = torch.zeros(3)
    a = np.asarray(t)
    a[0] = 5.0
    assert t[0].item() == 5.0
    assert isinstance(np.array(t), np.ndarray)


# ---------------------------------------------------------------------------------------
# gradients through NumPy code

def _finite_difference_grad(f, x, eps=1e-6):
    x = x.copy()
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        hi = f(x)
        x[i] = old - eps
        lo = f(x)
        x[i] = old
        g[i] = (hi - lo) / (2 * eps)
    return g


W = _arr(3, 4)
GRAD_CASES = {
    "sin_times_sum": lambda x: np.sum(np.sin(x) * np.sum(x)),
    "mean_exp_squared": lambda x: np.mean(np.exp(x) ** 2),
    "dot_tanh": lambda x: np.sum(np.tanh(np.dot(W, x))),
    "matmul_operator": lambda x: np.sum((W @ x) ** 2),
    "concatenate_stack": lambda x: np.sum(np.stack([np.concatenate([x, x * 2]), np.repeat(np.flip(x), 2)]) ** 3),
    "where_clip_max": lambda x: np.sum(np.where(x > 0, x ** 2, np.clip(x, -0.5, 0.5))) + np.max(x),
    "log_sqrt_abs": lambda x: np.sum(np.log(np.sqrt(np.abs(x) + 1.0))),
    "reshape_transpose": lambda x: np.sum(np.transpose(np.reshape(np.outer(x, x), (2, 8))) * np.arange(16).reshape(8, 2)),
    "reduce_ufunc_method": lambda x: np.add.reduce(np.multiply.outer(x, x), axis=None) + np.add.accumulate(x)[-1],
    "var_cumsum": lambda x: np.var(np.cumsum(x)) + np.linalg.norm(x),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_backward_through_numpy_code_matches_finite_differences(name):
    f = GRAD_CASES[name]
    x0 = np.random.randn(4) + 0.1
    x = torch.tensor(x0, requires_grad=True)
    y = f(x)
    assert isinstance(y, torch.Tensor) and y.grad_fn is not None
    y.backward()
    expected = _finite_difference_grad(lambda a: float(f(a)), x0)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(y.item(), f(x0), rtol=1e-12)  # same program on ndarrays


def test_ndarray_operand_gets_no_gradient_but_tensor_does():
    a = np.ones(3)
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    np.sum(np.multiply(a * 2, x)).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_numpy_code_under_func_transforms():
    func = pytest.importorskip("numtorch.func")
    x = torch.randn(5, 3, dtype=torch.float64)
    per_row = func.vmap(lambda r: np.sum(np.sin(r) * np.sum(r)))(x)
    loop = torch.stack([np.sum(np.sin(r) * np.sum(r)) for r in x])
    np.testing.assert_allclose(per_row.numpy(), loop.numpy(), rtol=1e-12)
    g = func.grad(lambda r: np.sum(np.cos(r)))(x[0])
    np.testing.assert_allclose(g.numpy(), -np.sin(x[0].numpy()), rtol=1e-12)


# ---------------------------------------------------------------------------------------
# errors

@pytest.mark.parametrize("call", [
    lambda t: np.median(t), lambda t: np.polyfit(t, t, 1), lambda t: np.histogram(t),
    lambda t: np.gradient(t)], ids=["median", "polyfit", "histogram", "gradient"])
def test_unmapped_function_raises_type_error_naming_it(call):
    with pytest.raises(TypeError, match=r"numpy\.\w+ has no numtorch mapping"):
        call(torch.ones(4))


def test_unmapped_ufunc_and_ufunc_method_raise():
    with pytest.raises(TypeError, match="cbrt has no numtorch mapping"):
        np.cbrt(torch.ones(3))
    with pytest.raises(TypeError, match="add.at has no numtorch mapping"):
        np.add.at(torch.ones(3), [0], 1.0)
    with pytest.raises(TypeError, match="subtract.reduce has no numtorch mapping"):
        np.subtract.reduce(torch.ones(3))


def test_unsupported_argument_raises_instead_of_being_ignored():
    with pytest.raises(TypeError, match="'where'"):
        np.sum(torch.ones(3), where=np.array([True, False, True]))
    with pytest.raises(TypeError, match="'where'"):
        np.add(torch.ones(3), 1.0, where=np.array([True, False, True]))
    with pytest.raises(TypeError, match="'initial'"):
        np.max(torch.ones(3), initial=5.0)


def test_pytorch_errors_surface_through_numpy_calls():
    with pytest.raises(RuntimeError, match="must match the size"):
        np.add(torch.ones(3), torch.ones(4))
