"""AOT autograd's joint graph and min-cut partition (numtorch._aot.partition, maxflow).

Oracles: networkx's minimum_cut for the max-flow; eager autograd (float64) for the
gradients the partitioned forward and backward graphs compute.
"""
import numpy as np
import pytest

import numtorch as torch
from numtorch._aot.maxflow import INF, min_cut
from numtorch._aot.partition import flow_network, joint_graph, partition, recomputable
from numtorch._core.runner import runner
from numtorch.func import make_graph


def _nx_cut(n, edges):
    nx = pytest.importorskip("networkx")
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u, v, c in edges:
        if g.has_edge(u, v):
            g[u][v]["capacity"] += c
        else:
            g.add_edge(u, v, capacity=c)
    try:
        return nx.minimum_cut(g, 0, 1)[0]
    except nx.NetworkXUnbounded:
        return INF


@pytest.mark.parametrize("seed", range(12))
def test_min_cut_matches_networkx_on_random_networks(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 30))
    edges = []
    for _ in range(int(rng.integers(n, 4 * n))):
        u, v = (int(x) for x in rng.integers(0, n, 2))
        if u != v:
            c = INF if rng.random() < 0.1 else float(rng.integers(0, 20))
            edges.append((u, v, c))
    edges.append((0, int(rng.integers(2, n)), float(rng.integers(1, 20))))
    expected = _nx_cut(n, edges)
    if expected == INF:
        with pytest.raises(ValueError, match="infinite"):
            min_cut(n, edges, 0, 1)
        return
    value, side = min_cut(n, edges, 0, 1)
    assert value == expected
    # the source side is a cut of that value
    assert 0 in side and 1 not in side
    assert sum(c for u, v, c in edges if u in side and v not in side) == expected


def test_min_cut_rejects_bad_arguments():
    with pytest.raises(ValueError, match="distinct"):
        min_cut(3, [], 0, 0)
    with pytest.raises(ValueError, match="negative"):
        min_cut(2, [(0, 1, -1)], 0, 1)


def _mlp(dtype=torch.float32, sizes=(784, 512, 256, 10), batch=128):
    torch.manual_seed(0)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params += [torch.randn(b, a, dtype=dtype) / a ** 0.5, torch.randn(b, dtype=dtype)]
    x = torch.randn(batch, sizes[0], dtype=dtype)
    y = torch.randint(0, sizes[-1], (batch,))

    def loss(*args):
        *ps, x, y = args
        h = x
        for i in range(0, len(ps), 2):
            h = h @ ps[i].T + ps[i + 1]
            if i + 2 < len(ps):
                h = torch.relu(h)
        return torch.nn.functional.cross_entropy(h, y)
    return loss, params, x, y


def _split(fn, *args, n_grad):
    """(region, joint, needs_grad) for fn traced on args; the first n_grad args need grad."""
    g = make_graph(fn)(*args)
    region = g.closed()[0]
    nc = len(g.consts)
    needs = (False,) * nc + (True,) * n_grad + (False,) * (len(args) - n_grad + len(g.rng))
    return region, joint_graph(region, needs), needs, nc


def test_mlp_partition_saves_less_than_saving_everything():
    loss, params, x, y = _mlp()
    region, joint, needs, nc = _split(loss, *params, x, y, n_grad=len(params))
    n_primals = len(region.inputs)
    cut = partition(joint, n_primals, 1)
    everything = partition(joint, n_primals, 1, recompute=False)
    # the numbers of Note [Min-cut partition]
    assert everything.saved_bytes == 1_033_220
    assert cut.saved_bytes == 398_852
    # what is saved: both relus' outputs, which the weight gradients read and the masks
    # are read from (Note [Masks read from the output]), never a mask; the bias adds and
    # relus are not recomputed (of equal-byte cuts, the nearest to the backward)
    producer = {id(o): n for n in cut.forward.nodes for o in n.outs}
    hidden = [v for v in cut.saved if v.type in ("f32[128, 512]", "f32[128, 256]")]
    assert len(hidden) == 2 and all(producer[id(v)].prim.name == "select" for v in hidden)
    assert not any(v.dtype == np.bool_ for v in cut.saved)
    assert not {"add", "select"} & {n.prim.name for n in _cotangent_free(cut.backward, 1)
                                    if n.outs[0].dtype == np.float32}
    # the backward gets only the primals it reads: not the first layer's weight or any
    # bias (no input gradient of x is asked for), but x for the first weight's gradient
    read = {id(v) for n in cut.backward.nodes for v in n.ins}
    assert all(id(v) in read for v in cut.backward.inputs[:len(cut.saved_inputs)])
    assert nc + 0 not in cut.saved_inputs and nc + 1 not in cut.saved_inputs
    assert nc + len(params) in cut.saved_inputs
    # the cut's bytes are the min cut networkx finds on the same network (bytes alone)
    n, edges, _ = flow_network(joint, n_primals, 1, tie_break=False)
    assert cut.saved_bytes == _nx_cut(n, edges)


def _cotangent_free(graph, n_cts):
    """Nodes of a backward graph that depend on no cotangent input: recomputed ones."""
    tangent = {id(v) for v in graph.inputs[len(graph.inputs) - n_cts:]}
    free = []
    for node in graph.nodes:
        if any(id(v) in tangent for v in node.ins):
            tangent.update(id(o) for o in node.outs)
        else:
            free.append(node)
    return free


def test_backward_recomputes_only_pointwise_and_movement():
    loss, params, x, y = _mlp(sizes=(12, 8, 6, 3), batch=5)
    region, joint, needs, nc = _split(loss, *params, x, y, n_grad=len(params))
    cut = partition(joint, len(region.inputs), 1)
    recomputed = _cotangent_free(cut.backward, 1)
    assert recomputed, "the MLP's backward recomputes its bias adds and relus"
    assert all(recomputable(n.prim) for n in recomputed)
    assert "dot_general" not in {n.prim.name for n in recomputed}
    # every contraction of the forward runs once, in the forward
    fw = [n.prim.name for n in cut.forward.nodes].count("dot_general")
    assert fw == 3


def _run(graph, arrays):
    return runner(graph)(*arrays)


@pytest.mark.parametrize("recompute", [True, False])
def test_partitioned_graphs_compute_eager_gradients(recompute):
    loss, params, x, y = _mlp(torch.float64, sizes=(7, 5, 4, 3), batch=6)
    params = [p.requires_grad_() for p in params]
    region, joint, needs, nc = _split(loss, *params, x, y, n_grad=len(params))
    cut = partition(joint, len(region.inputs), 1, recompute=recompute)
    g = make_graph(loss)(*params, x, y)
    primals = [c.value._data for c in g.consts] + [t._data for t in (*params, x, y)]
    fw = _run(cut.forward, primals)
    out, saved = fw[:1], fw[1:]
    ct = np.ones((), np.float64)
    grads = _run(cut.backward, [primals[i] for i in cut.saved_inputs] + list(saved) + [ct])
    expected = loss(*params, x, y)
    expected.backward()
    np.testing.assert_allclose(out[0], expected.detach().numpy(), rtol=1e-12)
    assert len(grads) == len(params)
    for gr, p in zip(grads, params):
        np.testing.assert_allclose(gr, p.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_random_draws_are_saved_never_recomputed():
    def f(w, x):
        return torch.nn.functional.dropout(torch.tanh(x @ w), p=0.5, training=True).sum()
    w, x = torch.randn(4, 6, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64)
    region, joint, needs, nc = _split(f, w, x, n_grad=1)
    cut = partition(joint, len(region.inputs), len(region.outputs))   # the loss, the new state
    assert not any(n.prim.name.startswith("random_") for n in cut.backward.nodes)
    assert any(n.prim.name.startswith("random_") for n in cut.forward.nodes)


def test_joint_graph_checks_its_arguments():
    g = make_graph(lambda x, i: x * 2 + i)(torch.randn(3), torch.ones(3, dtype=torch.int64))
    with pytest.raises(ValueError, match="needs_grad has 1 entries"):
        joint_graph(g.closed()[0], (True,))
    region = g.closed()[0]
    needs = [False] * len(region.inputs)
    needs[-1] = True
    with pytest.raises(ValueError, match="not floating"):
        joint_graph(region, tuple(needs))


# Note [Masks read from the output]: `select(m, c, x)` with `m = le(x, c)` or `ge(x, c)`;
# later readers of m read the comparison of the select's output instead.
SPECIAL = np.array([np.nan, -0.0, 0.0, 0.5, 0.5, -1.0, 2.0, np.inf, -np.inf, 1e-30],
                   np.float32)


def _clamp_and_mask(cmp, on_true):
    def f(x, c, g):
        m = cmp(x, c)
        return torch.where(m, on_true(c), x), torch.where(m, torch.zeros_like(g), g)
    return f


def _graph_of(f, *args):
    """(closed region of f on args after CSE, the arrays of its captured constants)."""
    from numtorch._core.passes import cse
    region, consts, _ = make_graph(f)(*args).closed()
    return cse(region), [c._data for c in consts]


@pytest.mark.parametrize("cmp", ["le", "ge"])
def test_clamp_masks_are_read_from_the_output_with_the_same_values(cmp):
    from numtorch._aot.partition import masks_from_outputs
    op = {"le": lambda a, b: a <= b, "ge": lambda a, b: a >= b}[cmp]
    x, g = torch.tensor(SPECIAL), torch.tensor(np.arange(10, dtype=np.float32) + 1)
    for c_value in (0.5, 0.0, -0.0, np.nan):
        c = torch.full_like(x, c_value)
        graph, consts = _graph_of(_clamp_and_mask(op, lambda c: c), x, c, g)
        rewritten = masks_from_outputs(graph)
        # the second select reads a comparison of the first select's output
        producer = {id(o): n for n in rewritten.nodes for o in n.outs}
        second = [n for n in rewritten.nodes if n.prim.name == "select"][-1]
        mask = producer[id(second.ins[0])]
        assert mask.prim.name == cmp and producer[id(mask.ins[0])].prim.name == "select"
        arrays = consts + [a.numpy() for a in (x, c, g)]
        want, got = _run(graph, arrays), _run(rewritten, arrays)
        for a, b in zip(want, got):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
        # and against NumPy
        m = op(SPECIAL, np.float32(c_value))
        np.testing.assert_array_equal(got[1], np.where(m, 0, g.numpy()))


@pytest.mark.parametrize("case", ["lt", "other_value"])
def test_masks_stay_where_the_output_does_not_give_them(case):
    # select(x < c, c, x): where x < c the output is c, and c < c is false: not the mask.
    # select(x <= c, d, x) with d != c: the output's comparison is not the mask either.
    from numtorch._aot.partition import masks_from_outputs
    op = (lambda a, b: a < b) if case == "lt" else (lambda a, b: a <= b)
    on_true = (lambda c: c) if case == "lt" else (lambda c: c + 1.0)
    x, g = torch.tensor(SPECIAL), torch.ones(10)
    graph, _ = _graph_of(_clamp_and_mask(op, on_true), x, torch.full_like(x, 0.5), g)
    assert masks_from_outputs(graph) is graph


def test_relu_backward_reads_its_mask_from_the_saved_output():
    """grad of sum(relu(h) * w), h a reduction (never recomputed): of the equal-byte cuts
    (h or relu(h)) the partition saves relu(h) and the backward recomputes neither the relu
    nor anything from h; its gradients equal eager autograd's bit for bit, NaN and ±0
    included."""
    a = torch.tensor(SPECIAL.reshape(10, 1))
    w = torch.tensor(np.linspace(-2, 2, 10).astype(np.float32))
    f = lambda a, w: (torch.relu(a.sum(-1)) * w).sum()      # noqa: E731
    region, joint, needs, nc = _split(f, a, w, n_grad=2)
    cut = partition(joint, len(region.inputs), 1)
    (saved,) = cut.saved
    producer = {id(o): n for n in cut.forward.nodes for o in n.outs}
    assert producer[id(saved)].prim.name == "select"
    (mask,) = [n for n in cut.backward.nodes if n.prim.name == "le"]
    assert mask.ins[0] is saved
    assert not {"select", "reduce_sum"} & {n.prim.name for n in _cotangent_free(cut.backward, 1)}
    g = make_graph(f)(a, w)
    primals = [c.value._data for c in g.consts] + [a.numpy(), w.numpy()]
    fw = _run(cut.forward, primals)
    grads = _run(cut.backward, [primals[i] for i in cut.saved_inputs] + list(fw[1:])
                 + [np.ones((), np.float32)])
    ae, we = a.clone().requires_grad_(), w.clone().requires_grad_()
    f(ae, we).backward()
    assert np.asarray(grads[0]).tobytes() == ae.grad.numpy().tobytes()
    assert np.asarray(grads[1]).tobytes() == we.grad.numpy().tobytes()
