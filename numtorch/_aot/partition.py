"""The joint forward+backward graph of a region, and its min-cut partition.

``joint_graph(graph, needs_grad)`` traces, from a closed pure region (``Graph.closed``)
and which of its inputs need a gradient, one graph computing the outputs and the
gradients: inputs ``(*primals, *cotangents)``, outputs ``(*outputs, *grads)``. It is the
ordinary VJP rules run under ``make_graph`` (no rule is special-cased here).

``partition(joint, ...)`` splits it into a forward graph (primals -> outputs and saved
activations) and a backward graph (saved values and cotangents -> gradients), choosing
what the forward saves with a minimum cut (Note [Min-cut partition]). This module only
builds graphs; running the pair as one autograd node is ``function.py``'s job.
"""
from __future__ import annotations

import numpy as np

from .._core.ir import Graph, Node, Var
from .._core.passes import cse, dce
from .maxflow import INF, min_cut

# Note [Min-cut partition]
# The joint graph's values fall in three kinds: those depending on a cotangent (they can
# only be computed in the backward), those the forward's outputs need (they are computed
# in the forward), and the rest. For every forward-side value the backward reads,
# directly or through values it could recompute, the partitioner must either save it or
# recompute it from saved values. functorch's min_cut_rematerialization_partition frames
# this as a minimum cut, and so do we:
#   - each value v is two vertices v_in -> v_out with capacity "the bytes of saving v";
#   - v_out -> u_in (infinite) for each value u computed from v, and v_out -> sink
#     (infinite) when a cotangent-dependent value reads v (the backward needs it);
#   - source -> p_in (infinite) for each primal input, and source -> v_in (infinite) for
#     each value the forward computes anyway whose producer must never be recomputed.
# A finite cut separates the backward from the primals; the values whose v_in -> v_out
# edges are cut are what the forward saves, and everything between them and the
# backward is recomputed there. What may be recomputed is what the inductor backend
# fuses: primitives whose `lower` rule is pointwise or movement (cheap, and fused into
# the backward's kernels). Contractions, convolutions, reductions, random draws (externs;
# recomputing one from its saved state would be exact, Note [Random state as a value], but
# is not built), externs and regions are banned from recomputation.
# Saving a primal input costs 0 bytes: the autograd node keeps its inputs alive anyway
# (as eager autograd does), so recomputing from an input is free in memory.
# Ties: among the cuts saving the fewest bytes, the one whose saved values are fewest
# forward steps from what the backward reads (summed) wins, so the backward recomputes
# least (each capacity is bytes times a scale larger than any sum of steps, plus the
# steps; functorch weighs its capacities by the distance to the backward too). Saving
# the relu's output instead of the product before the bias add costs the same bytes and
# leaves nothing to recompute (Note [Masks read from the output]).
# Measured on the MLP 784-512-256-10 with batch 128, float32, cross-entropy loss (the
# issue's workload; tests/aot/test_partition.py pins it): saving every forward value the
# backward reads (`recompute=False`) keeps 11 values, 1,033,220 bytes (relu masks and
# outputs, transposed weights, softmax pieces); the min cut keeps 5 values, 398,852 bytes
# (39%): the two relus' outputs (262,144 + 131,072; Note [Masks read from the output]),
# the softmax's exp (5,120), the reciprocal of its row sums (512) and the loss's
# normaliser (4). The masks (from the relus' outputs), transposes and broadcasts are
# recomputed in the backward, fused into its kernels. (Before the mask rewrite and the
# tie-break below, the same bytes were the products before their bias adds, and the
# backward recomputed the bias adds and the relus from them.)
# The same MLP as nn.Sequential captured from `compile(step)` (its Linear layers contract
# without a transpose node) saves 9 values, 498,692 bytes, when saving everything, and the
# same 5 values, 398,852 bytes (80%), with the min cut.


def joint_graph(graph, needs_grad):
    """The joint forward+backward graph of the closed region ``graph`` (see module doc).

    ``needs_grad[i]`` says whether input ``i`` gets a gradient (it must be floating). The
    cotangent inputs are one per floating output; the gradient outputs one per input
    needing a gradient, in order.
    """
    from .._core.meta import MetaArray
    from .._core.tensor import wrap
    from ..func._grad import vjp
    from ..func._trace import make_graph
    if graph.consts:
        raise ValueError("joint_graph: expects a closed region (Graph.closed()[0])")
    if len(needs_grad) != len(graph.inputs):
        raise ValueError(f"joint_graph: needs_grad has {len(needs_grad)} entries for "
                         f"{len(graph.inputs)} inputs")
    wrt = [i for i, need in enumerate(needs_grad) if need]
    for i in wrt:
        if graph.inputs[i].dtype.kind not in "fc":
            raise ValueError(f"joint_graph: input {i} ({graph.inputs[i].type}) needs a "
                             f"gradient but is not floating")
    diff = [j for j, o in enumerate(graph.outputs) if o.dtype.kind in "fc"]
    n_in = len(graph.inputs)

    def joint(*args):
        primals, cts = args[:n_in], args[n_in:]

        def region(*xs):
            values = list(primals)
            for i, x in zip(wrt, xs):
                values[i] = x
            return graph.inline(*values)
        outs, vjp_fn = vjp(region, *(primals[i] for i in wrt))
        from .._ops.creation import zeros_like
        full = [zeros_like(o) for o in outs]
        for j, c in zip(diff, cts):
            full[j] = c
        grads = vjp_fn(tuple(full)) if wrt else ()
        return (*outs, *grads)
    examples = [wrap(MetaArray(v.shape, v.dtype)) for v in graph.inputs]
    examples += [wrap(MetaArray(graph.outputs[j].shape, graph.outputs[j].dtype)) for j in diff]
    joint_g = make_graph(joint, name=f"{graph.name}_joint")(*examples)
    return dce(masks_from_outputs(cse(joint_g)))


# Note [Masks read from the output]
# relu is `select(le(x, 0), 0, x)`, and its VJP `select(le(x, 0), 0, g)` reads the mask
# `le(x, 0)`, a function of the relu's input. The backward also needs the relu's output
# (the next layer's weight gradient is a product with it), so with the mask read from x the
# min cut saved x (the product before the bias add) and the backward recomputed the bias
# add, the relu and the mask from it: on the MLP step, two extra stored 128x512 and
# 128x256 arrays and their reads in the backward's kernels. For `y = select(m, c, x)` with
# `m = le(x, c)` (or `ge`), `le(y, c)` is `m` element for element: where x <= c, y = c and
# c <= c; elsewhere (x > c, or x or c NaN) y = x and the comparison is false again; ±0
# compare equal. So every later reader of `m` reads `le(y, c)` instead, computed from the
# output; the forward still computes `m` for the select itself, and the backward needs
# only y, which it saves (and which the tie-break of the cut prefers, Note [Min-cut
# partition]). PyTorch's relu backward (threshold_backward) reads the output the same way.
_MASKS = frozenset({"le", "ge"})


def masks_from_outputs(joint):
    """``joint`` with every reader of a clamp's mask after the clamp reading the mask
    recomputed from the clamp's output (Note [Masks read from the output])."""
    producer = {id(o): n for n in joint.nodes for o in n.outs}
    clamps = {}                 # id(select node) -> its mask's producer
    for n in joint.nodes:
        if n.prim.name == "select" and len(n.ins) == 3:
            m, c, x = n.ins
            p = producer.get(id(m))
            if p is not None and p.prim.name in _MASKS and p.ins[0] is x and p.ins[1] is c:
                clamps[id(n)] = p
    if not clamps:
        return joint
    nodes, after = [], {}       # after: id(mask) -> the mask read from the output
    for n in joint.nodes:
        if any(id(v) in after for v in n.ins):
            n = Node(n.prim, [after.get(id(v), v) for v in n.ins], n.params, n.outs, n.where)
        nodes.append(n)
        p = clamps.get(id(n))
        if p is not None:
            m = p.outs[0]
            again = Var(f"{m.name}_out", m.shape, m.dtype)
            nodes.append(Node(p.prim, [n.outs[0], n.ins[1]], p.params, [again], p.where))
            after[id(m)] = again
    return Graph(list(joint.inputs), nodes, list(joint.outputs), list(joint.consts),
                 name=joint.name).check()


class Partition:
    """A forward graph and a backward graph cut from one joint graph.

    ``forward``: inputs the primals, outputs ``(*outputs, *saved)``. ``backward``: inputs
    ``(*[primals[i] for i in saved_inputs], *saved, *cotangents)``, outputs the gradients.
    ``saved_inputs`` are indices of primal inputs the backward reads (kept alive by the
    autograd node, not outputs of the forward); ``saved`` are the activations the
    forward outputs for the backward.
    """

    def __init__(self, forward, backward, n_outputs, saved_inputs, saved):
        self.forward, self.backward = forward, backward
        self.n_outputs, self.saved_inputs, self.saved = n_outputs, saved_inputs, saved

    @property
    def saved_bytes(self):
        """Bytes of the saved activations (primal inputs, kept anyway, excluded)."""
        return sum(nbytes(v) for v in self.saved)

    def __repr__(self):
        return (f"<Partition: forward {len(self.forward.nodes)} nodes, backward "
                f"{len(self.backward.nodes)} nodes, saves {len(self.saved)} values "
                f"({self.saved_bytes} bytes) and inputs {list(self.saved_inputs)}>")


def nbytes(v):
    """Bytes of a graph value (a `Var` with int sizes)."""
    n = 1
    for s in v.shape:
        n *= int(s)
    return n * np.dtype(v.dtype).itemsize


def recomputable(prim):
    """Whether the partitioner may recompute ``prim``'s outputs in the backward
    (Note [Min-cut partition]): pointwise and movement primitives only."""
    lower = prim.lower
    return lower is not None and lower.kind in ("pointwise", "movement") and \
        not prim.name.startswith("random_") and prim.mutates is None


def partition(joint, n_primals, n_outputs, *, recompute=True):
    """Split ``joint`` (from `joint_graph`) into a `Partition` by a minimum cut.

    ``n_primals`` and ``n_outputs`` say where the primal inputs and the forward outputs
    end. With ``recompute=False`` nothing is recomputed: the forward saves every value
    the backward reads (the baseline the min cut is measured against).
    """
    primals, cts = joint.inputs[:n_primals], joint.inputs[n_primals:]
    fw_outs, bw_outs = joint.outputs[:n_outputs], joint.outputs[n_outputs:]
    producer = {id(v): node for node in joint.nodes for v in node.outs}
    n, edges, values = flow_network(joint, n_primals, n_outputs, recompute=recompute)
    _, source_side = min_cut(n, edges, 0, 1)
    cut = [v for k, v in enumerate(values) if 2 + 2 * k in source_side and
           3 + 2 * k not in source_side]
    primal_ids = {id(p) for p in primals}
    saved = [v for v in cut if id(v) not in primal_ids]
    saved_ids = {id(v) for v in cut}
    fw_nodes = _nodes_for(joint.nodes, list(fw_outs) + saved, producer, stop=set())
    forward = _graph(list(primals), fw_nodes, list(fw_outs) + saved, joint, "forward")
    bw_nodes = _nodes_for(joint.nodes, bw_outs, producer, stop=saved_ids | {id(c) for c in cts})
    # a primal costs nothing to save, so the cut may keep ones the backward never reads:
    # only those it reads are passed (and version-checked)
    read = {id(v) for n in bw_nodes for v in n.ins} | {id(o) for o in bw_outs}
    saved_inputs = tuple(i for i, p in enumerate(primals) if id(p) in saved_ids and id(p) in read)
    bw_inputs = [primals[i] for i in saved_inputs] + saved + list(cts)
    for node in bw_nodes:
        for v in node.ins:
            if id(v) in primal_ids and id(v) not in saved_ids:
                raise AssertionError(f"partition: the backward reads primal {v} which the "
                                     f"cut did not save")
    backward = _graph(bw_inputs, bw_nodes, list(bw_outs), joint, "backward")
    return Partition(forward, backward, n_outputs, saved_inputs, saved)


def flow_network(joint, n_primals, n_outputs, *, recompute=True, tie_break=True):
    """The flow network of Note [Min-cut partition] for ``joint``: ``(n, edges, values)``.

    Vertex 0 is the source, 1 the sink, ``2 + 2k`` and ``3 + 2k`` are ``values[k]``'s in
    and out vertices; ``edges`` are ``(u, v, capacity)``. With ``tie_break=False`` the
    capacities are the bytes alone (the Note's tie-break left out).
    """
    primals, cts = joint.inputs[:n_primals], joint.inputs[n_primals:]
    fw_outs, bw_outs = joint.outputs[:n_outputs], joint.outputs[n_outputs:]
    producer = {id(v): node for node in joint.nodes for v in node.outs}
    tangent = {id(c) for c in cts}
    for node in joint.nodes:
        if any(id(v) in tangent for v in node.ins):
            tangent.update(id(v) for v in node.outs)
    fw_required = _ancestors(fw_outs, producer, stop=set())
    index, values = {}, []

    def vertex(v):
        k = index.get(id(v))
        if k is None:
            k = index[id(v)] = len(values)
            values.append(v)
        return 2 + 2 * k

    edges = []
    primal_ids = {id(p) for p in primals}
    for p in primals:
        edges.append((0, vertex(p), INF))
    for node in joint.nodes:
        if any(id(o) in tangent for o in node.outs):
            for v in node.ins:      # the backward reads v
                if isinstance(v, Var) and id(v) not in tangent:
                    edges.append((vertex(v) + 1, 1, INF))
            continue
        banned = not recompute or not recomputable(node.prim)
        for o in node.outs:
            vo = vertex(o)
            if banned and (id(o) in fw_required or not recompute):
                edges.append((0, vo, INF))
            for v in node.ins:
                if isinstance(v, Var):
                    edges.append((vertex(v) + 1, vo, INF))
    for o in bw_outs:   # a gradient that is a forward-side value (zeros, an input)
        if isinstance(o, Var) and id(o) not in tangent:
            edges.append((vertex(o) + 1, 1, INF))
    dist = _steps_to_backward(joint, tangent, bw_outs)
    scale = len(joint.nodes) * (len(values) + 1) + 1     # bytes first, then the steps
    if not tie_break:
        scale, dist = 1, {id(v): 0 for v in values}
    for v in values:
        cost = 0 if id(v) in primal_ids else nbytes(v) * scale + dist.get(id(v), len(joint.nodes))
        edges.append((vertex(v), vertex(v) + 1, cost))
    return 2 + 2 * len(values), edges, values


def _steps_to_backward(joint, tangent, bw_outs):
    """{id(value): forward-side nodes between it and the nearest value the backward reads}
    (0 for those; the tie-break of Note [Min-cut partition])."""
    dist = {id(o): 0 for o in bw_outs if isinstance(o, Var) and id(o) not in tangent}
    for node in joint.nodes:
        if any(id(o) in tangent for o in node.outs):
            dist.update((id(v), 0) for v in node.ins if isinstance(v, Var) and id(v) not in tangent)
    for node in reversed(joint.nodes):
        if any(id(o) in tangent for o in node.outs):
            continue
        d = min((dist[id(o)] for o in node.outs if id(o) in dist), default=None)
        if d is None:
            continue
        for v in node.ins:
            if isinstance(v, Var) and dist.get(id(v), d + 2) > d + 1:
                dist[id(v)] = d + 1
    return dist


def _ancestors(outs, producer, stop):
    """ids of the values (and nodes) that ``outs`` are computed from, not crossing ``stop``."""
    seen, stack = set(), [o for o in outs if isinstance(o, Var)]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if id(v) in stop:
            continue
        node = producer.get(id(v))
        if node is not None:
            stack.extend(x for x in node.ins if isinstance(x, Var))
            seen.add(id(node))
    return seen


def _nodes_for(nodes, outs, producer, stop):
    live = _ancestors(outs, producer, stop)
    return [n for n in nodes if id(n) in live and not all(id(o) in stop for o in n.outs)]


def _graph(inputs, nodes, outputs, joint, name):
    used = {id(v) for n in nodes for v in n.ins} | {id(o) for o in outputs}
    consts = [c for c in joint.consts if id(c) in used]
    g = Graph(inputs, nodes, outputs, consts, name=f"{joint.name.removesuffix('_joint')}_{name}")
    return g.check()

