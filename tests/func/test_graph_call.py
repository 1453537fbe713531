"""graph_call: a traced graph called as one region, under every transform and at any depth.

The OpInfo matrix runs every op sample as a region (test_ops.py, ``region`` columns); these
tests pin the structure (one node, printed with its graph, cached transformed graphs), the
compositions named by issue 6, and the fast runner's bit-identity with eager.
"""
import re

import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, jacfwd, jacrev, jvp, make_graph, vjp, vmap
from numtorch.testing import assert_close

F64 = torch.float64


def f(x, w):
    return (x @ w).sin().sum() + (w * w).exp().mean()


@pytest.fixture
def xw():
    g = torch.Generator().manual_seed(0)
    return torch.randn(3, 4, dtype=F64, generator=g), torch.randn(4, dtype=F64, generator=g)


def region_of(fn, *args):
    graph = make_graph(fn)(*args)
    return graph, (lambda *a: graph(*a)[0])


def test_a_called_graph_is_one_node_printed_with_its_graph(xw):
    x, w = xw
    _, r = region_of(f, x, w)
    outer = make_graph(lambda v: r(x, v) * 2)(w)
    assert outer.primitives() == ["graph_call", "mul"]
    src = outer.python_code()
    assert re.search(r"t0, = prims.graph_call\(c\d+, c\d+, arg0, graph=forward_1\)", src)
    # The inner graph, its captured constant (a scalar of `f`) now its first input.
    assert "def forward_1(c0: 'f64[]', arg0: 'f64[3, 4]', arg1: 'f64[4]'):" in src
    assert src.index("def forward_1") < src.index("def forward(")
    assert torch.equal(outer(w)[0], r(x, w) * 2)


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap"])
def test_a_region_stays_one_node_under_transforms(xw, transform):
    x, w = xw
    _, r = region_of(f, x, w)
    fn = {"grad": lambda v: grad(lambda u: r(x, u))(v),
          "jvp": lambda v: jvp(lambda u: r(x, u), (v,), (v,))[1],
          "vmap": lambda v: vmap(lambda u: r(x, u))(v.expand(5, 4))}[transform]
    traced = make_graph(fn)(w)
    assert "graph_call" in traced.primitives()
    # The region's own primitives appear only inside transformed graphs, never inline.
    assert "sin" not in traced.primitives() and "dot_general" not in traced.primitives()
    reference = {"grad": lambda v: grad(f, argnums=1)(x, v),
                 "jvp": lambda v: jvp(lambda u: f(x, u), (v,), (v,))[1],
                 "vmap": lambda v: vmap(lambda u: f(x, u))(v.expand(5, 4))}[transform]
    assert_close(traced(w)[0], reference(w))
    assert_close(fn(w), reference(w))


def test_transformed_graphs_are_cached(xw):
    x, w = xw
    graph, r = region_of(f, x, w)
    region = graph.closed()[0]
    for _ in range(3):
        grad(lambda u: r(x, u))(w)
        jvp(lambda u: r(x, u), (w,), (w,))
    keys = sorted(k[0] for k in region.cache if isinstance(k, tuple))
    assert keys == ["jvp", "vjp"]


def test_compositions_equal_eager(xw):
    x, w = xw
    _, r = region_of(f, x, w)

    def ff(v):
        return r(x, v * v)

    def fe(v):
        return f(x, v * v)
    gg = grad(lambda u: grad(ff)(u).sum())(w)
    assert_close(gg, grad(lambda u: grad(fe)(u).sum())(w))
    ws = torch.randn(5, 4, dtype=F64)
    assert_close(vmap(grad(ff))(ws), vmap(grad(fe))(ws))
    assert_close(jacfwd(jacrev(ff))(w), jacfwd(jacrev(fe))(w))
    assert_close(jacrev(jacfwd(ff))(w), torch.func.hessian(fe)(w))
    # vjp with a cotangent, and a vmap over the x input with the other unbatched.
    out, fn = vjp(ff, w)
    assert_close(fn(torch.tensor(2.0, dtype=F64))[0], 2 * grad(fe)(w))
    xs = torch.randn(6, 3, 4, dtype=F64)
    assert_close(vmap(r, in_dims=(0, None))(xs, w), torch.stack([f(a, w) for a in xs]))


def test_nested_regions(xw):
    x, w = xw
    _, inner = region_of(f, x, w)
    outer_graph, outer = region_of(lambda a, v: inner(a, v).cos() * inner(a, 2 * v), x, w)
    assert outer_graph.primitives().count("graph_call") == 2
    ref = lambda a, v: f(a, v).cos() * f(a, 2 * v)
    assert_close(outer(x, w), ref(x, w))
    assert_close(grad(outer, argnums=1)(x, w), grad(ref, argnums=1)(x, w))
    assert_close(grad(lambda v: grad(outer, argnums=1)(x, v).sum())(w),
                 grad(lambda v: grad(ref, argnums=1)(x, v).sum())(w))
    assert_close(jacfwd(jacrev(outer, argnums=1), argnums=1)(x, w),
                 jacfwd(jacrev(ref, argnums=1), argnums=1)(x, w))
    ws = torch.randn(3, 4, dtype=F64)
    assert_close(vmap(grad(outer, argnums=1), in_dims=(None, 0))(x, ws),
                 vmap(grad(ref, argnums=1), in_dims=(None, 0))(x, ws))
    traced = make_graph(grad(outer, argnums=1))(x, w)
    assert set(traced.primitives()) == {"graph_call"}


def test_eager_autograd_records_one_node_and_reaches_captured_tensors(xw):
    x, w = xw
    p = torch.randn(4, dtype=F64, requires_grad=True)
    graph = make_graph(lambda v: (v * p).tanh().sum())(w)   # p is a captured constant
    wr = w.clone().requires_grad_()
    out = graph(wr)[0]
    assert out.grad_fn.name() == "GraphCallBackward0"
    out.backward()
    wr2, p2 = w.clone().requires_grad_(), p.detach().clone().requires_grad_()
    (wr2 * p2).tanh().sum().backward()
    assert_close(wr.grad, wr2.grad)
    assert_close(p.grad, p2.grad)


def test_multiple_and_integer_outputs(xw):
    x, w = xw

    def g(a, v):
        y = a @ v
        return y.exp(), y.argmax(), v     # an int output, and an input passed through
    graph = make_graph(g)(x, w)
    e, i, v = graph(x, w)
    assert torch.equal(i, (x @ w).argmax()) and torch.equal(v, w)
    loss = lambda v: (graph(x, v)[0].sum() + graph(x, v)[2].sum())
    assert_close(grad(loss)(w), grad(lambda v: g(x, v)[0].sum() + v.sum())(w))
    t = jvp(lambda v: graph(x, v), (w,), (w,))[1]
    assert_close(t[0], jvp(lambda v: g(x, v)[0], (w,), (w,))[1])
    assert torch.equal(t[1], torch.zeros((), dtype=torch.int64))


def test_compiled_callable_is_used_when_attached(xw):
    x, w = xw
    graph = make_graph(f)(x, w)
    region = graph.closed()[0]
    calls = []

    def compiled(*arrays):
        calls.append(len(arrays))
        return (np.asarray(7.0),)
    graph.compiled = compiled          # reaches the region that graph_call holds
    assert region.compiled is compiled
    assert graph(x, w)[0].item() == 7.0 and calls == [len(region.inputs)] and len(region.inputs) > 2
    graph.compiled = None
    assert graph(x, w)[0].item() == f(x, w).item()
    with pytest.raises(TypeError, match="Graph.compiled must be a callable"):
        graph.compiled = 3


def test_graph_with_effects_is_inlined():
    def mutating(a):
        a.mul_(2)
        return a + 1
    graph = make_graph(mutating)(torch.ones(3))
    a = torch.ones(3)
    assert torch.equal(graph(a)[0], torch.full((3,), 3.0)) and torch.equal(a, torch.full((3,), 2.0))


def test_bad_input_is_a_clear_error(xw):
    x, w = xw
    graph = make_graph(f)(x, w)
    with pytest.raises(TypeError, match="input arg1 must be a Tensor of type f64\\[4\\], got float"):
        graph(x, 1.0)
    with pytest.raises(TypeError, match="got f32\\[4\\]"):
        graph(x, w.float())
    with pytest.raises(TypeError, match="expects 2 inputs, got 1"):
        graph(x)


def test_meta_inputs_give_the_graph_types(xw):
    x, w = xw
    out = make_graph(f)(x, w)(x.to("meta"), w.to("meta"))[0]
    assert out.is_meta and out.shape == () and out.dtype == F64


def chain20(x, y):
    for _ in range(4):
        x = (x * y + 1.5).sin()
        y = (y - x).abs().sqrt()
    return x.sum(), y.mean(dim=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fast_runner_is_bit_identical_to_eager(dtype):
    x, y = torch.randn(8, 5, dtype=dtype), torch.randn(8, 5, dtype=dtype)
    graph = make_graph(chain20)(x, y)
    for k in range(2):
        a, b = torch.randn(8, 5, dtype=dtype), torch.randn(8, 5, dtype=dtype)
        got, want = graph(a, b), chain20(a, b)
        for g, e in zip(got, want):
            assert g.dtype == e.dtype and g.shape == e.shape
            assert np.array_equal(g.numpy(), e.numpy(), equal_nan=True)
    assert graph.inline(x, y)[0].item() == graph(x, y)[0].item()


def test_eager_double_backward_and_nested_vmap():
    def f(v):
        return (v.sin() * v).sum()
    x = torch.randn(4, dtype=F64)
    graph = make_graph(f)(x)

    def second(fn):
        xr = x.clone().requires_grad_()
        gx, = torch.autograd.grad(fn(xr), xr, create_graph=True)
        gx.pow(2).sum().backward()
        return xr.grad
    assert_close(second(lambda v: graph(v)[0]), second(f))
    xs = torch.randn(2, 3, 4, dtype=F64)
    assert_close(vmap(vmap(lambda v: graph(v)[0]))(xs), vmap(vmap(f))(xs))
    assert_close(vmap(lambda v: graph(v)[0], chunk_size=2)(xs[0]), vmap(f)(xs[0]))
