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
    # what is saved: both matmul outputs, never a relu's mask or output
    saved_types = sorted(v.type for v in cut.saved)
    assert "f32[128, 512]" in saved_types and "f32[128, 256]" in saved_types
    assert not any(v.dtype == np.bool_ for v in cut.saved)
    # the cut's value is the min cut networkx finds on the same network
    n, edges, _ = flow_network(joint, n_primals, 1)
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
