"""Random state as a value (Note [Random state as a value], numtorch/_prims/random.py).

Eager draws keep NumPy's PCG64 streams; traced and compiled functions take the generator's
state as an input and return the next, so they draw eager's numbers after the same seed.
"""
import numpy as np
import pytest

import numtorch as torch
import numtorch.nn.functional as F
from numtorch._core.meta import MetaArray
from numtorch._prims import random as R
from numtorch.func import grad, make_graph, vmap


def _np_gen(seed):
    return np.random.Generator(np.random.PCG64(seed))


# -- eager ------------------------------------------------------------------------------

def test_eager_draws_are_numpys_pcg64_streams():
    torch.manual_seed(123)
    a, b = torch.randn(2, 3), torch.rand(4, dtype=torch.float64)
    c, d = torch.randint(0, 10, (5,)), torch.randperm(6)
    g = _np_gen(123)
    np.testing.assert_array_equal(a.numpy(), g.standard_normal((2, 3), dtype=np.float32))
    np.testing.assert_array_equal(b.numpy(), g.random((4,), dtype=np.float64))
    np.testing.assert_array_equal(c.numpy(), g.integers(0, 10, size=(5,)))
    np.testing.assert_array_equal(d.numpy(), g.permuted(np.arange(6), axis=-1))


def test_the_primitive_path_draws_what_the_eager_fast_path_draws():
    def draws():
        return [torch.randn(3), torch.rand(2, 2), torch.randint(3, 9, (4,)), torch.randperm(5),
                torch.randn(3, dtype=torch.float64)]
    torch.manual_seed(7)
    fast, state_fast = draws(), R.default_generator.state_array()
    R.EAGER_FAST_PATH[0] = False
    try:
        torch.manual_seed(7)
        slow, state_slow = draws(), R.default_generator.state_array()
    finally:
        R.EAGER_FAST_PATH[0] = True
    for x, y in zip(fast, slow):
        assert torch.equal(x, y)
    np.testing.assert_array_equal(state_fast, state_slow)


def test_state_packs_and_unpacks_exactly():
    g = torch.Generator().manual_seed(99)
    torch.rand(3, generator=g)
    state = g.get_state()
    assert state["has_uint32"] == 1          # a float32 draw left half a word buffered
    assert R.unpack_state(R.pack_state(state)) == state
    a = g.state_array()
    assert a.dtype == np.int64 and a.shape == (6,)
    with pytest.raises(TypeError, match="int64 array of shape"):
        R.unpack_state(a.astype(np.float64))


def test_a_draw_is_a_pure_function_of_its_state():
    state = torch.Generator().manual_seed(5).state_array()
    s1, n1 = R.normal.impl(state, shape=(4,), dtype=np.dtype(np.float32))
    s2, n2 = R.normal.impl(state, shape=(4,), dtype=np.dtype(np.float32))
    np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(n1, n2)
    np.testing.assert_array_equal(s1, _np_gen(5).standard_normal(4, dtype=np.float32))
    s3, _ = R.normal.impl(n1, shape=(4,), dtype=np.dtype(np.float32))
    assert not np.array_equal(s1, s3)
    with pytest.raises(TypeError, match="state must be int64"):
        R.normal.shape(MetaArray((3,), np.float32), shape=(2,), dtype=np.dtype(np.float32))


# -- make_graph -------------------------------------------------------------------------

def _f(x):
    return torch.randn(3) + F.dropout(x, 0.5) * 2


def test_make_graph_threads_the_state_and_replays_eager_twice():
    x = torch.ones(3)
    torch.manual_seed(0)
    e1, e2 = _f(x), _f(x)
    g = make_graph(_f)(x)
    assert g.rng == (torch.default_generator,)
    assert g.inputs[-1].type == "i64[6]" and g.outputs[-1].type == "i64[6]"
    assert "the state of torch.default_generator" in g.python_code()
    torch.manual_seed(0)
    assert torch.equal(g(x)[0], e1)
    assert torch.equal(g(x)[0], e2)        # the graph advanced the generator as eager does
    torch.manual_seed(0)
    assert torch.equal(g.inline(x)[0], e1)


def test_a_graph_given_its_state_is_pure():
    x = torch.ones(3)
    g = make_graph(_f)(x)
    state = torch.tensor(torch.Generator().manual_seed(3).state_array())
    before = torch.default_generator.state_array()
    out1, new1 = g(x, state)
    out2, new2 = g(x, state)
    assert torch.equal(out1, out2) and torch.equal(new1, new2)
    np.testing.assert_array_equal(torch.default_generator.state_array(), before)
    with pytest.raises(TypeError, match=r"expects 2 \(or 1 without its random states\)"):
        g()


def test_make_graph_reads_the_generator_it_was_given():
    mine = torch.Generator()

    def f(x):
        return x + torch.rand(2, generator=mine) + torch.rand(2)
    x = torch.zeros(2)
    g = make_graph(f)(x)
    assert set(map(id, g.rng)) == {id(mine), id(torch.default_generator)}
    mine.manual_seed(1)
    torch.manual_seed(2)
    expected = f(x)
    mine.manual_seed(1)
    torch.manual_seed(2)
    assert torch.equal(g(x)[0], expected)


def test_a_graph_called_inside_a_trace_threads_the_outer_state():
    x = torch.ones(3)
    inner = make_graph(_f)(x)

    def outer(x):
        return inner(x)[0] * inner(x)[0]
    torch.manual_seed(4)
    expected = outer(x)
    assert torch.equal(expected, _eager_twice(x, 4))
    g = make_graph(outer)(x)
    assert len(g.rng) == 1
    torch.manual_seed(4)
    assert torch.equal(g(x)[0], expected)


def _eager_twice(x, seed):
    torch.manual_seed(seed)
    return _f(x) * _f(x)


def test_passes_keep_the_draws_and_the_numbers():
    from numtorch._core.passes import optimize

    def f(x):
        a = torch.rand(3)
        torch.rand(3)                      # its sample is dead, its state is not
        return x + a + torch.rand(3)
    g = make_graph(f)(torch.ones(3))
    opt = optimize(g)
    assert opt.primitives().count("random_uniform") == 3 and opt.rng == g.rng
    torch.manual_seed(6)
    expected = f(torch.ones(3))
    torch.manual_seed(6)
    assert torch.equal(opt(torch.ones(3))[0], expected)


# -- vmap randomness policies -----------------------------------------------------------

def test_vmap_randomness_policies():
    xs = torch.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda x: x + torch.rand(3))(xs)
    torch.manual_seed(8)
    same = vmap(lambda x: x + torch.rand(3), randomness="same")(xs)
    np.testing.assert_array_equal(same.numpy(), np.broadcast_to(
        _np_gen(8).random(3, dtype=np.float32), (4, 3)))
    torch.manual_seed(8)
    diff = vmap(lambda x: x + torch.rand(3), randomness="different")(xs)
    np.testing.assert_array_equal(diff.numpy(), _np_gen(8).random((4, 3), dtype=np.float32))
    # the generator advanced as one eager draw of the batch did
    assert torch.equal(torch.rand(2), torch.tensor(_after(8, (4, 3)).random(2, dtype=np.float32)))


def _after(seed, shape):
    g = _np_gen(seed)
    g.random(shape, dtype=np.float32)
    return g


@pytest.mark.parametrize("randomness", ["same", "different"])
def test_vmap_policies_hold_inside_make_graph(randomness):
    xs = torch.zeros(4, 3)
    f = vmap(lambda x: F.dropout(x + 1, 0.5), randomness=randomness)
    torch.manual_seed(9)
    e1, e2 = f(xs), f(xs)
    g = make_graph(f)(xs)
    torch.manual_seed(9)
    assert torch.equal(g(xs)[0], e1) and torch.equal(g(xs)[0], e2)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        make_graph(vmap(lambda x: F.dropout(x, 0.5)))(xs)


def test_vmap_of_a_graph_with_draws_keeps_the_policy():
    g = make_graph(lambda x: x + torch.rand(3))(torch.zeros(3))
    xs = torch.zeros(4, 3)
    torch.manual_seed(10)
    out = vmap(lambda x: g(x)[0], randomness="different")(xs)
    np.testing.assert_array_equal(out.numpy(), _np_gen(10).random((4, 3), dtype=np.float32))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda x: g(x)[0])(xs)


# -- gradients --------------------------------------------------------------------------

def _loss(x):
    return (F.dropout(x, 0.5) * x).sum()


def test_grad_through_a_graph_with_dropout_equals_eager():
    x = torch.arange(1.0, 9.0, requires_grad=True)
    torch.manual_seed(0)
    _loss(x).backward()
    expected = x.grad.clone()
    x.grad = None
    g = make_graph(_loss)(x)
    torch.manual_seed(0)
    # eager autograd records the region once; its backward recomputes the forward from the
    # same state, so the mask is the forward's (it drew fresh numbers before)
    g(x)[0].backward()
    assert torch.equal(x.grad, expected)
    torch.manual_seed(0)
    assert torch.equal(grad(lambda y: g(y)[0])(x.detach()), expected)
    torch.manual_seed(0)
    assert torch.equal(grad(_loss)(x.detach()), expected)


# -- compile ----------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_compiled_draws_equal_eager_across_calls(backend):
    x = torch.ones(3)
    torch.manual_seed(0)
    e1, e2 = _f(x), _f(x)
    torch._dynamo.reset()
    cf = torch.compile(_f, backend=backend)
    torch.manual_seed(0)
    assert torch.equal(cf(x), e1)
    assert torch.equal(cf(x), e2)
    torch.manual_seed(0)
    assert torch.equal(cf(x), e1)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_compiled_dropout_gradients_equal_eager(backend):
    x = torch.arange(1.0, 9.0, requires_grad=True)
    torch.manual_seed(1)
    expected = []
    for _ in range(2):
        _loss(x).backward()
        expected.append(x.grad.clone())
        x.grad = None
    torch._dynamo.reset()
    cf = torch.compile(_loss, backend=backend)
    torch.manual_seed(1)
    for e in expected:
        cf(x).backward()
        assert torch.equal(x.grad, e)
        x.grad = None


def test_compiled_draws_across_a_graph_break_equal_eager():
    def f(x):
        a = x + torch.rand(2)
        torch._dynamo.graph_break()
        return a * torch.randn(2)
    x = torch.ones(2)
    torch.manual_seed(11)
    expected = f(x), f(x)
    torch._dynamo.reset()
    cf = torch.compile(f, backend="eager")
    torch.manual_seed(11)
    assert torch.equal(cf(x), expected[0]) and torch.equal(cf(x), expected[1])


def test_the_captured_graph_takes_the_state_as_an_input():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    torch._dynamo.reset()
    torch.compile(_f, backend=backend)(torch.ones(3))
    (gm,) = graphs
    code = gm.code
    assert "random_normal(" in code and "i64[6]" in code
    # the state is an ordinary input and the new state an ordinary output
    assert [v.type for v in gm._graph.inputs].count("i64[6]") == 1
    assert [v.type for v in gm._graph.outputs].count("i64[6]") == 1
    assert gm._graph.rng == ()


def test_a_compiled_function_traced_by_make_graph_threads_the_trace_state():
    torch._dynamo.reset()
    cf = torch.compile(_f, backend="eager")
    x = torch.ones(3)
    torch.manual_seed(12)
    e1, e2 = _f(x), _f(x)
    g = make_graph(lambda x: cf(x))(x)
    assert len(g.rng) == 1
    torch.manual_seed(12)
    assert torch.equal(g(x)[0], e1) and torch.equal(g(x)[0], e2)


def test_eager_draws_and_get_state_after_a_graph_continue_its_stream():
    # the graph writes its state back as an array (Note [Cheap state round trips]); eager
    # draws, get_state and other users of the live generator must see it
    x = torch.ones(3)
    g = make_graph(_f)(x)
    torch.manual_seed(13)
    _f(x)
    expected_state = torch.get_rng_state()
    expected = torch.rand(2), torch.randperm(4)
    torch.manual_seed(13)
    g(x)
    assert torch.get_rng_state() == expected_state
    assert torch.equal(torch.rand(2), expected[0]) and torch.equal(torch.randperm(4), expected[1])


def test_state_arrays_are_values():
    a = torch.Generator().manual_seed(1).state_array()
    assert not a.flags.writeable
    gen = torch.Generator()
    mine = a.copy()
    gen.set_state_array(mine)
    mine[0] += 1                       # the generator kept its own copy
    np.testing.assert_array_equal(gen.state_array(), a)
    with pytest.raises(TypeError, match="int64 array of shape"):
        gen.set_state_array(np.zeros(5, np.int64))


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_compiled_vmap_with_different_randomness_equals_eager(backend):
    def f(xs):
        return vmap(lambda x: F.dropout(x + 1, 0.5) + torch.randn(3), randomness="different")(xs)
    xs = torch.zeros(4, 3)
    torch.manual_seed(3)
    e1, e2 = f(xs), f(xs)
    torch._dynamo.reset()
    cf = torch.compile(f, backend=backend, fullgraph=True)
    torch.manual_seed(3)
    assert torch.equal(cf(xs), e1) and torch.equal(cf(xs), e2)


def test_a_compiled_function_draws_from_the_generator_it_is_given():
    def f(x, gen):
        return x + torch.rand(3, generator=gen)
    x = torch.zeros(3)
    expected = [f(x, torch.Generator().manual_seed(s)) for s in (1, 2)]
    torch._dynamo.reset()
    cf = torch.compile(f, backend="eager")
    gens = [torch.Generator().manual_seed(s) for s in (1, 2)]
    assert torch.equal(cf(x, gens[0]), expected[0])
    assert torch.equal(cf(x, gens[1]), expected[1])    # not the first call's generator
    again = torch.Generator().manual_seed(1)
    f(x, again)
    np.testing.assert_array_equal(gens[0].state_array(), again.state_array())
