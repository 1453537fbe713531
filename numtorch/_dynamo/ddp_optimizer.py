"""DDPOptimizer: a captured graph of a ``DistributedDataParallel`` module is split at the
gradient-bucket boundaries, and each piece compiled by the user's backend on its own
(PyTorch's ``torch._dynamo.backends.distributed.DDPOptimizer``).

Owns the wrapper around every backend (``ddp_aware``), the bucket partition of a graph's
nodes and the stitched callable running the compiled pieces. Must not capture anything,
know backends' internals or touch DDP's bucket state (nn/parallel/distributed.py owns it).

Note [Why split the graph at buckets]
Without the split, a compiled forward is one graph and, under AOT autograd, its backward is
one autograd node: every parameter's gradient appears at the very end of backward, so all
of DDP's bucket all-reduces start only then and nothing overlaps (Note [Gradient buckets]
in nn/parallel/distributed.py). Split into pieces that each hold about one bucket's worth of
parameters, the forward is a chain of compiled regions and backward a chain of nodes: when
the last piece's backward node has run, the gradients of the last bucket's parameters are
accumulated, DDP's hooks launch that bucket's all-reduce, and the engine goes on with the
previous piece's backward while the communication thread reduces. The price is what the
backend loses at the cuts (fusion across them, one region call per piece).

Note [Bucket partition of a graph]
As PyTorch does, the nodes are walked in *reverse* graph order (the order backward produces
gradients), adding the bytes of each DDP parameter a node reads the first time it is read;
once the current piece holds ``bucket_bytes_cap`` bytes (the first one: DDP's first-bucket
cap, ``min(1 MiB, bucket_bytes_cap)``), the next node starts a new piece, but only if the
current one already has an output that a later piece or the graph returns (a piece must
produce something). A leading piece without parameters is fused into the next one. For a
network whose parameters are read in registration order this gives DDP's own buckets; for
others it approximates them (the gradients still reach DDP's hooks, only the overlap
changes). Not split: graphs with symbolic sizes (pieces would need their own symbol
tables), graphs returning a captured constant, and graphs where a piece writes a value
another piece reads (the write's order against the read would depend on the backend).

The split applies when ``config.optimize_ddp`` selects it (Note [optimize_ddp modes]) and
the graph reads parameters of a live ``DistributedDataParallel``. PyTorch decides instead by a flag set while DDP's
forward runs; here the parameters themselves say which DDP a graph belongs to (see Note
[DDP under compile] in nn/parallel/distributed.py for how ``compile(ddp)`` captures the
wrapped module's forward).

Note [optimize_ddp modes]
``config.optimize_ddp`` takes PyTorch 2.13's values (``optimize_ddp_mode`` normalizes them
as ``torch._dynamo.utils.get_optimize_ddp_mode`` does):
- True or "ddp_optimizer" (the default): graphs of a DDP module are split at its buckets.
- False or "no_optimization": one graph; DDP's bucket all-reduces start when the compiled
  region's single backward node has produced every gradient, so nothing overlaps.
- "python_reducer_without_compiled_forward": PyTorch accepts it and, in 2.13, nothing reads
  it, so it acts as "no_optimization"; the same here.
- "python_reducer": read by ``DistributedDataParallel`` at construction, as in PyTorch: no
  buckets and no reducer; each parameter's post-accumulate-grad hook averages that one
  gradient with its own all-reduce (PyTorch's ``_register_accum_grad_hook``), and the
  forward does not broadcast buffers. The graph is not split. PyTorch designed this mode for
  compiled autograd, which traces those per-parameter all-reduces into the compiled backward
  and fuses them into buckets; numtorch has no compiled autograd, so here (as in PyTorch
  without it) each parameter is one blocking all-reduce, after the gradients exist: correct,
  without overlap, and slower than the default for models with many parameters.
"""
from __future__ import annotations

import logging
import sys

import numpy as np

from . import config
from .._core.ir import Const, Var

log = logging.getLogger(__name__)

_FIRST_BUCKET_BYTES = 1024 * 1024   # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES


def ddp_aware(backend):
    """``backend`` that, for a graph of a DDP module's forward, compiles it split at the
    bucket boundaries (Note [Why split the graph at buckets]) when ``config.optimize_ddp``."""

    def compile_fn(gm, example_inputs):
        ddp = _owning_ddp(gm._graph) if _split_enabled() else None
        if ddp is None:
            return backend(gm, example_inputs)
        return DDPOptimizer(ddp.bucket_bytes_cap, backend, ddp).compile_fn(gm, example_inputs)
    compile_fn.__name__ = getattr(backend, "__name__", "backend")
    compile_fn._numtorch_orig_backend = backend
    return compile_fn


MODES = ("ddp_optimizer", "python_reducer", "python_reducer_without_compiled_forward",
         "no_optimization")


def optimize_ddp_mode():
    """``config.optimize_ddp`` as one of ``MODES`` (Note [optimize_ddp modes])."""
    mode = config.optimize_ddp
    if mode is True or mode is False:
        return "ddp_optimizer" if mode else "no_optimization"
    if isinstance(mode, str) and mode in MODES:
        return mode
    raise ValueError(f"numtorch._dynamo.config.optimize_ddp must be True, False or one of "
                     f"{', '.join(map(repr, MODES))}, got {mode!r}")


def _split_enabled():
    return optimize_ddp_mode() == "ddp_optimizer"


def _owning_ddp(graph):
    """The live DistributedDataParallel whose parameters ``graph`` reads, or None."""
    mod = sys.modules.get("numtorch.nn.parallel.distributed")
    if mod is None:
        return None
    live = mod.DistributedDataParallel._live
    if not live or not graph.consts:
        return None
    for ddp in list(live):
        if any(ddp._owns(c.value) for c in graph.consts):
            return ddp
    return None


class DDPOptimizer:
    """Splits a graph into pieces of about ``bucket_bytes_cap`` parameter bytes each
    (Note [Bucket partition of a graph]) and compiles each with ``backend_compile_fn``.

    After ``compile_fn``, ``buckets`` lists each piece's parameter names (forward order) and
    ``subgraphs`` the pieces' graphs."""

    def __init__(self, bucket_bytes_cap, backend_compile_fn, ddp=None, first_bucket_cap=None):
        self.bucket_bytes_cap = bucket_bytes_cap
        self.first_bucket_cap = min(_FIRST_BUCKET_BYTES if first_bucket_cap is None
                                    else first_bucket_cap, bucket_bytes_cap)
        self.backend_compile_fn = backend_compile_fn
        self.ddp = ddp
        self.buckets, self.subgraphs = [], []

    def _param_bytes(self, const):
        value = const.value
        if self.ddp is not None:
            return value._data.nbytes if self.ddp._owns(value) else None
        return value._data.nbytes if getattr(value, "requires_grad", False) else None

    def partition(self, graph):
        """Lists of node indices, one per piece, in forward order; and each piece's params."""
        users = {}   # id(var) -> indices of the nodes reading it
        for i, node in enumerate(graph.nodes):
            for v in node.ins:
                users.setdefault(id(v), []).append(i)
        returned = {id(o) for o in graph.outputs}
        pieces = [[]]           # pieces[0] is the one being filled (earliest in the graph)
        sizes, params, seen = [0], [[]], set()

        def has_output(piece):
            inside = set(piece)
            return any(id(v) in returned or any(u not in inside for u in users.get(id(v), ()))
                       for i in piece for v in graph.nodes[i].outs)

        for i in range(len(graph.nodes) - 1, -1, -1):
            cap = self.first_bucket_cap if len(pieces) == 1 else self.bucket_bytes_cap
            if sizes[0] >= cap and has_output(pieces[0]):
                pieces.insert(0, [])
                sizes.insert(0, 0)
                params.insert(0, [])
            for v in graph.nodes[i].ins:
                if id(v) in seen or not isinstance(v, Const):
                    continue
                nbytes = self._param_bytes(v)
                if nbytes is not None:
                    seen.add(id(v))
                    sizes[0] += nbytes
                    params[0].append(v)
            pieces[0].append(i)
        if len(pieces) > 1 and sizes[0] == 0:   # a preamble without parameters
            preamble = pieces.pop(0)
            pieces[0] += preamble
            params.pop(0)
            sizes.pop(0)
        return [sorted(p) for p in pieces], [p[::-1] for p in params]

    def compile_fn(self, gm, example_inputs):
        """Compile ``gm`` as pieces (or whole, when one piece or not splittable)."""
        graph = gm._graph
        if graph.shape_env is not None or not graph.nodes:
            return self.backend_compile_fn(gm, example_inputs)
        pieces, params = self.partition(graph)
        self.buckets = [[self._name(c) for c in ps] for ps in params]
        if len(pieces) == 1:
            return self.backend_compile_fn(gm, example_inputs)
        plan = _split(graph, pieces)
        if plan is None:
            log.info("DDPOptimizer: graph %s not split (Note [Bucket partition of a graph])",
                     graph.name)
            return self.backend_compile_fn(gm, example_inputs)
        log.info("DDPOptimizer: bucket cap %d bytes, %d pieces: %s", self.bucket_bytes_cap,
                 len(plan), self.buckets)
        from .backends import GraphModule
        examples = {id(v): t for v, t in zip(graph.inputs, example_inputs)}
        steps = []
        for sub in plan:
            self.subgraphs.append(sub)
            log.debug("DDPOptimizer piece %s:\n%s", sub.name, sub)
            ex = [examples[id(v)] if id(v) in examples else _example(v) for v in sub.inputs]
            fn = self.backend_compile_fn(GraphModule(sub), ex)
            steps.append((fn, [id(v) for v in sub.inputs], [id(v) for v in sub.outputs]))
        return _stitched(graph, steps, self)

    def _name(self, const):
        if self.ddp is not None:
            return self.ddp._param_name(const.value)
        return const.name


def _example(var):
    from .._core.tensor import wrap
    return wrap(np.zeros(var.shape, var.dtype))


def _split(graph, pieces):
    """The pieces as Graphs (forward order), or None when the graph must stay whole."""
    from .._core.ir import Graph
    if any(isinstance(o, Const) for o in graph.outputs):
        return None
    where = {}
    for k, piece in enumerate(pieces):
        for i in piece:
            for v in graph.nodes[i].outs:
                where[id(v)] = k
    read_by = {}   # id(var) -> pieces reading it
    for k, piece in enumerate(pieces):
        for i in piece:
            for v in graph.nodes[i].ins:
                read_by.setdefault(id(v), set()).add(k)
    for k, piece in enumerate(pieces):
        for i in piece:
            node = graph.nodes[i]
            if node.is_effect() and read_by.get(id(node.ins[node.prim.mutates]), set()) - {k}:
                return None   # a write another piece reads (Note [Bucket partition ...])
    returned = {id(o) for o in graph.outputs}
    subs = []
    for k, piece in enumerate(pieces):
        inputs, consts, outs, known = [], [], [], set()
        for i in piece:
            for v in graph.nodes[i].ins:
                if id(v) in known or where.get(id(v)) == k:
                    continue
                known.add(id(v))
                (consts if isinstance(v, Const) else inputs).append(v)
        for i in piece:
            for v in graph.nodes[i].outs:
                later = any(j > k for j in read_by.get(id(v), ()))
                if later or id(v) in returned:
                    outs.append(v)
        if not outs:
            return None
        nodes = [graph.nodes[i] for i in piece]
        subs.append(Graph(inputs, nodes, outs, consts, name=f"{graph.name}_bucket{k}").check())
    return subs


def _stitched(graph, steps, optimizer):
    """A callable like the whole graph's compiled one: runs the compiled pieces in order."""
    input_ids = [id(v) for v in graph.inputs]
    outputs = [(id(o), None) if isinstance(o, Var) else (None, o) for o in graph.outputs]

    def run(*args):
        env = dict(zip(input_ids, args))
        for fn, ins, outs in steps:
            env.update(zip(outs, fn(*[env[i] for i in ins])))
        return tuple(env[i] if i is not None else value for i, value in outputs)
    run.ddp_optimizer = optimizer
    return run
