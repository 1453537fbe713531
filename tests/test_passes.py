"""Graph passes: DCE, CSE, constant folding and the pattern rewriter (numtorch/_core/passes.py).

Each pass is checked for what it removes and for computing the same outputs, bit for bit,
on hand-written and random programs; the OpInfo matrix runs every sample through the
default pipeline (test_ops.py, ``passes`` column).
"""
import numpy as np
import pytest

import numtorch as torch
from numtorch._core import passes as P
from numtorch._core.passes import Rule, cse, dce, fold_constants, optimize, rewrite
from numtorch._prims import elementwise as E
from numtorch.func import make_graph


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x.numpy(), y.numpy(), equal_nan=True)


def test_a_dead_exp_and_a_duplicated_sin_are_removed():
    def f(x):
        x.exp()                     # dead
        return x.sin() + x.sin()    # one sin twice
    x = torch.randn(4)
    g = make_graph(f)(x)
    assert g.primitives() == ["exp", "sin", "sin", "add"]
    log = []
    opt = optimize(g, log=log.append)
    assert opt.primitives() == ["sin", "add"]
    assert "# before dce" in log[-1] and "exp" in log[-1].split("# after dce")[0]
    assert "exp" not in log[-1].split("# after dce")[1]
    same(opt(x), g(x))
    assert dce(g).primitives() == ["sin", "sin", "add"]
    assert cse(g).primitives() == ["exp", "sin", "add"]


def test_cse_merges_equal_small_literals_and_what_uses_them():
    x = torch.randn(3)
    g = make_graph(lambda x: x * 2 + x * 2)(x)
    assert g.primitives().count("mul") == 2 and len(g.consts) == 2
    assert all(c.literal for c in g.consts)
    opt = cse(g)
    assert opt.primitives() == ["mul", "add"] and len(opt.consts) == 1
    same(opt(x), g(x))


def test_cse_keeps_captured_tensors_apart_from_equal_literals():
    """Note [Literals and captured tensors]: a tensor from outside the function equal to a
    literal (or to another captured tensor) keeps its identity, so a later write to it is
    what the optimized graph reads."""
    buf, other = torch.tensor(2.0), torch.tensor(2.0)
    x = torch.randn(())
    g = make_graph(lambda x: x * 2 + x * buf + x * other)(x)
    assert [c.literal for c in g.consts] == [True, False, False]
    opt = cse(g)
    assert opt.primitives().count("mul") == 3 and len(opt.consts) == 3
    buf.fill_(5.0)
    other.fill_(7.0)
    same(opt(x), (x * 2 + x * 5 + x * 7,))
    same(opt(x), g(x))


def test_constant_folding():
    c = torch.tensor([1.0, 2.0, 3.0])

    def f(x):
        return x * (c.exp() * 3 + 1)
    x = torch.randn(3)
    g = make_graph(f)(x)
    folded = fold_constants(g)
    assert folded.primitives() == ["mul"]
    assert np.array_equal(folded.consts[0].value.numpy(), (c.exp() * 3 + 1).numpy())
    same(folded(x), g(x))


def test_folding_skips_tensors_that_require_grad_and_large_results():
    p = torch.randn(3, requires_grad=True)
    g = make_graph(lambda x: x * p.exp())(torch.randn(3))
    assert fold_constants(g).primitives() == g.primitives()
    big = make_graph(lambda x: x + torch.tensor(1.0).expand(100, 100))(torch.randn(100, 100))
    assert fold_constants(big, max_numel=1000).primitives() == big.primitives()


def test_random_draws_are_never_merged_or_dropped():
    def f(x):
        torch.rand(3)                       # unused, but it advances the generator
        return x + torch.rand(3) + torch.rand(3)
    g = make_graph(f)(torch.ones(3))
    opt = optimize(g)
    assert opt.primitives().count("random_uniform") == 3
    torch.manual_seed(1)
    a = g(torch.ones(3))[0]
    torch.manual_seed(1)
    assert torch.equal(opt(torch.ones(3))[0], a)


def test_effects_are_kept_and_end_what_cse_has_seen():
    def f(a):
        s1 = a.sin()
        a.mul_(2)
        s2 = a.sin()          # reads the new value: not the same as s1
        a.add_(1)             # an effect whose value nobody reads
        return s1 + s2
    g = make_graph(f)(torch.ones(3))
    opt = optimize(g)
    assert opt.primitives().count("copy_to") == 2 and opt.primitives().count("sin") == 2
    a1, a2 = torch.randn(3), None
    a2 = a1.clone()
    same(opt(a1), g(a2))
    same((a1,), (a2,))


def test_rewriter_rules():
    def is_one(node, rw):
        v = rw.value(node.ins[1])
        return v is not None and bool(np.all(v == 1))   # scalars are captured broadcast

    mul_by_one = Rule("mul", lambda node, rw: node.ins[0], when=is_one)

    def neg_neg(node, rw):
        p = rw.producer(node.ins[0])
        return p.ins[0] if p is not None and p.prim is E.neg else None
    double_neg = Rule("neg", neg_neg)

    def square_to_mul(node, rw):    # a replacement that emits a new node
        v = rw.value(node.ins[1])
        if v is None or not np.all(v == 2):
            return None
        return rw.emit(E.mul, node.ins[0], node.ins[0])
    square = Rule("pow", square_to_mul)

    x = torch.randn(5)
    g = make_graph(lambda x: (-(-(x * 1.0))) ** 2 + x)(x)
    out = dce(rewrite(g, [mul_by_one, double_neg, square]))
    assert out.primitives() == ["mul", "add"], out
    assert torch.allclose(out(x)[0], g(x)[0])


def test_passes_leave_their_input_graph_unchanged():
    g = make_graph(lambda x: x.sin() + x.sin() + x.exp() * 0)(torch.randn(2))
    before = g.python_code()
    optimize(g)
    assert g.python_code() == before


_UNARY = ("sin", "exp", "tanh", "abs", "neg")
_BINARY = ("add", "mul", "sub", "maximum")


def _random_program(rng, n_ops):
    """A random straight-line program over two inputs; values are often reused (duplicated
    subexpressions), some are dead."""
    steps = []
    for i in range(n_ops):
        if rng.random() < 0.5:
            steps.append((str(rng.choice(_UNARY)), int(rng.integers(0, i + 2))))
        else:
            steps.append((str(rng.choice(_BINARY)), int(rng.integers(0, i + 2)),
                          int(rng.integers(0, i + 2))))
    outs = sorted({int(rng.integers(0, n_ops + 2)) for _ in range(2)})
    rng_consts = [bool(b) for b in rng.integers(0, 2, 3)]

    def program(x, y):
        vals = [x, y]
        for s in steps:
            fn = getattr(torch, s[0])
            vals.append(fn(*(vals[j] for j in s[1:])) if len(s) > 2 else fn(vals[s[1]]))
            if rng_consts[len(vals) % 3]:
                vals[-1] = vals[-1] * 0.5 + 1.0    # scalar constants, merged by CSE
        return tuple(vals[j] for j in outs)
    return program


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_compute_the_same_after_every_pass(seed):
    rng = np.random.default_rng(seed)
    program = _random_program(rng, 12)
    x, y = torch.randn(3, 2), torch.randn(3, 2)
    g = make_graph(program)(x, y)
    # Duplicate the whole program's ops to give CSE something certain to find.
    g2 = make_graph(lambda a, b: program(a, b) + program(a, b))(x, y)
    for graph in (g, g2):
        for p in (dce, cse, fold_constants, optimize):
            out = p(graph)
            assert len(out.nodes) <= len(graph.nodes)
            same(out(x, y), graph(x, y))
            same(out(y, x), program(y, x) if graph is g else program(y, x) + program(y, x))
    # The second copy of the program (outputs concatenated, no new ops) merges entirely.
    assert len(cse(g2).nodes) == len(cse(g).nodes) < len(g2.nodes)


def test_is_pure_sees_into_regions():
    inner = make_graph(lambda x: x + torch.rand(2))(torch.ones(2))
    outer = make_graph(lambda x: inner(x)[0] * 2)(torch.ones(2))
    if "graph_call" in outer.primitives():
        node = outer.nodes[outer.primitives().index("graph_call")]
        assert not P.is_pure(node)
    pure = make_graph(lambda x: x.sin())(torch.ones(2))
    outer2 = make_graph(lambda x: pure(x)[0] * 2)(torch.ones(2))
    assert P.is_pure(outer2.nodes[0]) and outer2.primitives()[0] == "graph_call"
