"""compile of NumPy programs and of ``wrap_numpy``'d code: the FAQ's NumPy section.

References are plain NumPy (values and dtypes) and analytic gradients; graph breaks are
counted with ``explain``. The per-snippet checks are the corpus's compiled way
(tests/test__numpy_corpus.py).
"""
import functools

import numpy as np
import pytest

import numtorch as torch
import numtorch._numpy as tnp
from numtorch._dynamo import config, explain


def _faq(X, Y):
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


def test_faq_numpy_function_compiles_to_one_graph_and_returns_numpy_arrays():
    X, Y = np.random.randn(1024, 64), np.random.randn(1024, 64)
    Z = torch.compile(_faq)(X, Y)
    assert isinstance(Z, np.ndarray) and Z.dtype == np.float64 and Z.shape == (1024,)
    np.testing.assert_allclose(Z, _faq(X, Y), rtol=1e-10, atol=1e-10)
    ex = explain(_faq)(X, Y)
    assert ex.graph_count == 1 and ex.graph_break_count == 0, str(ex)


def test_faq_numpy_function_with_the_default_fused_backend():
    X = np.random.randn(64, 8).astype(np.float32)
    Y = np.random.randn(64, 8).astype(np.float32)
    Z = torch.compile(_faq)(X, Y)
    assert isinstance(Z, np.ndarray) and Z.dtype == np.float32
    np.testing.assert_allclose(Z, _faq(X, Y), rtol=1e-4, atol=1e-4)


def test_faq_wrap_numpy_fullgraph_takes_and_returns_tensors():
    f = torch.compile(torch.compiler.wrap_numpy(_faq), fullgraph=True, backend="eager")
    X, Y = torch.randn(32, 8), torch.randn(32, 8)
    Z = f(X, Y)
    assert isinstance(Z, torch.Tensor) and Z.dtype == torch.float32
    np.testing.assert_allclose(Z.numpy(), _faq(X.numpy(), Y.numpy()), rtol=1e-4, atol=1e-4)


def test_faq_gradients_flow_through_wrap_numpy_under_compile():
    @torch.compile(fullgraph=True)
    @torch.compiler.wrap_numpy
    def numpy_fn(X, Y):
        return np.mean(np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1)))

    X = torch.randn(64, 16, requires_grad=True)
    Y = torch.randn(64, 16)
    Z = numpy_fn(X, Y)
    assert isinstance(Z, torch.Tensor)
    Z.backward()
    # Z = mean_i (sum_j X_ij)(sum_k Y_ik), so dZ/dX_ij = (sum_k Y_ik) / n
    expect = np.repeat(Y.numpy().sum(1, keepdims=True) / 64, 16, axis=1)
    np.testing.assert_allclose(X.grad.numpy(), expect, rtol=1e-5, atol=1e-6)


def test_faq_graph_break_inside_wrapped_numpy_code(capsys):
    def numpy_code(X, Y):
        prod = X[:, :, None] * Y[:, None, :]
        print("oops, a graph break!")
        return np.sum(prod, axis=(-2, -1))

    numpy_fn = torch.compile(torch.compiler.wrap_numpy(numpy_code))
    X, Y = torch.randn(16, 4), torch.randn(16, 4)
    for _ in range(2):
        Z = numpy_fn(X, Y)
        assert isinstance(Z, torch.Tensor)
        np.testing.assert_allclose(Z.numpy(), _faq(X.numpy(), Y.numpy()), rtol=1e-4, atol=1e-5)
    assert capsys.readouterr().out == "oops, a graph break!\n" * 2
    ex = explain(torch.compiler.wrap_numpy(numpy_code))(X, Y)
    assert ex.graph_break_count >= 1 and "print" in str(ex)


def test_graph_break_in_numpy_code_hands_numpy_arrays_to_the_native_part():
    seen = []

    def f(x):
        y = np.sin(x) * 2
        seen.append((type(y), isinstance(y, np.ndarray)))   # replayed at run time
        print(end="")                 # a break: y is materialized
        return np.cos(y) + x

    x = np.linspace(0, 1, 5)
    out = torch.compile(f)(x)
    assert type(out) is np.ndarray and seen == [(np.ndarray, True)]
    np.testing.assert_allclose(out, np.cos(np.sin(x) * 2) + x, rtol=1e-12)


def test_trace_numpy_false_turns_numpy_calls_into_graph_breaks(monkeypatch):
    monkeypatch.setattr(config, "trace_numpy", False)
    X, Y = np.random.randn(8, 4), np.random.randn(8, 4)
    ex = explain(_faq)(X, Y)
    assert ex.graph_count == 0 and ex.graph_break_count >= 1
    assert "trace_numpy" in str(ex)
    np.testing.assert_allclose(torch.compile(_faq)(X, Y), _faq(X, Y), rtol=1e-12)


def test_compiled_numpy_follows_nep50_and_numpys_dtypes():
    def f(f32, i8, i32):
        return (f32 * 2.5, i8 + 3, f32 * np.float64(2), i32.sum(), i32.mean(),
                np.float32(3) * i8, f32 @ f32.T)

    args = (np.ones((2, 3), np.float32), np.arange(3, dtype=np.int8),
            np.arange(6, dtype=np.int32).reshape(2, 3))
    got = torch.compile(f)(*args)
    ref = f(*args)
    assert explain(f)(*args).graph_break_count == 0
    for g, r in zip(got, ref):
        r = np.asarray(r)
        assert g.dtype == r.dtype and g.shape == r.shape, (g, r)
        np.testing.assert_allclose(g, r, rtol=1e-6)


def test_numpy_scalar_of_a_traced_array_is_a_0d_array():
    def f(x):
        return np.float32(x.sum())

    out = torch.compile(f)(np.ones(3))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32
    assert out == 3


def test_in_place_writes_reach_the_callers_array():
    def f(a, b):
        a[0] = 5.0
        a += b
        return a

    a, b = np.zeros(3), np.ones(3)
    out = torch.compile(f, backend="eager")(a, b)
    assert out is a
    np.testing.assert_array_equal(a, [6.0, 1.0, 1.0])


def test_guards_recompile_for_new_shapes_and_dtypes():
    def f(x):
        return np.exp(x) - x.sum(axis=0)

    g = torch.compile(f, backend="eager")
    for x in (np.random.randn(3, 2), np.random.randn(4, 2), np.random.randn(4, 2).astype("f4"),
              np.random.randn(3, 2)):
        out = g(x)
        assert out.dtype == f(x).dtype
        np.testing.assert_allclose(out, f(x), rtol=1e-5)


def test_numpy_random_is_a_graph_break_not_a_baked_constant():
    def f(x):
        return x + np.random.rand(3)

    g = torch.compile(f, backend="eager")
    a, b = g(np.zeros(3)), g(np.zeros(3))
    assert not np.array_equal(a, b)
    assert "numpy.random" in str(explain(f)(np.zeros(3)))


def test_numpy_function_numtorch_lacks_runs_in_numpy_at_a_break():
    def f(x):
        c = np.polyfit(x, 2 * x + 1, 1)
        return c * 2

    x = np.linspace(0, 1, 10)
    out = torch.compile(f, backend="eager")(x)
    np.testing.assert_allclose(out, [4.0, 2.0], atol=1e-9)
    assert "polyfit" in str(explain(f)(x))


def test_numtorch_numpy_arrays_in_compiled_code_come_back_as_such():
    def f(x):
        return np.tanh(x) * 2

    x = tnp.asarray([0.5, -1.0])
    out = torch.compile(f, backend="eager")(x)
    assert type(out) is tnp.ndarray
    np.testing.assert_allclose(out.tensor.numpy(), np.tanh([0.5, -1.0]) * 2, rtol=1e-12)


def test_compile_of_a_functools_wraps_wrapper_binds_the_wrappers_own_signature():
    # inspect.signature follows __wrapped__; binding by it put Y where **kwargs belongs
    def inner(x, y):
        return x * 2 + y

    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        if kwargs:
            return inner(*args, **kwargs) - 1
        return inner(*args)

    g = torch.compile(wrapper, backend="eager")
    x, y = torch.randn(3), torch.randn(3)
    np.testing.assert_allclose(g(x, y).numpy(), (x * 2 + y).numpy(), rtol=1e-6)
    np.testing.assert_allclose(g(x, y=y).numpy(), (x * 2 + y - 1).numpy(), rtol=1e-6)


def test_ufunc_methods_are_traced():
    def f(a):
        return np.add.reduce(a, axis=0), np.multiply.accumulate(a, axis=1), np.add.outer(a, a)

    a = np.random.randn(3, 4)
    got = torch.compile(f, backend="eager")(a)
    assert explain(f)(a).graph_break_count == 0
    for g, r in zip(got, f(a)):
        np.testing.assert_allclose(g, r, rtol=1e-12)


def test_data_dependent_numpy_code_breaks_and_still_gives_numpys_result():
    def f(x):
        if x.sum() > 0:
            return x[x > 0] * 2
        return -x

    for x in (np.array([1.0, -2.0, 3.0]), np.array([-1.0, -2.0])):
        out = torch.compile(f, backend="eager")(x)
        np.testing.assert_array_equal(out, f(x))


@pytest.mark.parametrize("bad", [np.array(["a", "b"]), np.arange(3, dtype=np.uint32)])
def test_arrays_of_dtypes_numtorch_lacks_run_in_numpy(bad):
    def f(x):
        return np.flip(x)

    np.testing.assert_array_equal(torch.compile(f, backend="eager")(bad), f(bad))


def test_a_graph_without_inputs_runs():
    # every value is a constant made inside: the graph takes no inputs but still runs
    def f():
        return np.linalg.inv(np.eye(3, dtype=np.int64) * 2)

    out = torch.compile(f, backend="eager")()
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_allclose(out, np.eye(3) / 2)


def test_mixed_torch_numpy_program_compiles_to_one_graph():
    def f(x):
        a = x.numpy()                      # NumPy's semantics from here: float32 stays
        b = np.sin(a) * 2.5
        return torch.from_numpy(b) + torch.tensor(a), torch.as_tensor(a, dtype=torch.float64)

    x = torch.randn(5)
    got = torch.compile(f, backend="eager")(x)
    ref = f(x)
    assert explain(f)(x).graph_break_count == 0
    for g, r in zip(got, ref):
        assert isinstance(g, torch.Tensor) and g.dtype == r.dtype
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-6)


def test_writes_through_numpy_view_of_an_input_tensor_reach_it():
    def f(x):
        a = x.numpy()
        a[0] = 7.0
        return x * 1

    x = torch.zeros(3)
    out = torch.compile(f, backend="eager")(x)
    np.testing.assert_array_equal(out.numpy(), [7.0, 0.0, 0.0])
    np.testing.assert_array_equal(x.numpy(), [7.0, 0.0, 0.0])
