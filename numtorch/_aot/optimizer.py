"""Compiled optimizer steps: ``compile(opt.step)``, and ``opt.step()`` called by a compiled
function, run the update as one compiled graph over all parameters.

``compiled_step(opt, backend)`` returns the callable that replaces ``opt.step`` under
compile (Note [Compiled optimizer step]). This module traces and caches the update; the
update rules themselves are the optimizers' own ``step`` (numtorch/optim), never
rewritten here, and the graphs run on the backend every compiled frame uses.
"""
from __future__ import annotations

import copy
import warnings
import weakref
from collections import defaultdict

import numpy as np

from .._core.tensor import Tensor, wrap_array
from ..autograd.grad_mode import no_grad

# Note [Compiled optimizer step]
# PyTorch compiles `opt.step` by tracing the optimizer's Python with Dynamo: the update
# under no_grad becomes in-place writes to the parameters and the state tensors, and the
# inductor fuses it over all parameters (its "horizontal fusion"). Here the step is traced
# with `make_graph` instead of the bytecode interpreter, the same way: the optimizer's own
# (undecorated) `step` runs on a shallow copy of the optimizer whose parameters, `.grad`s
# and state tensors are trace tensors. Every in-place update becomes a `copy_to` node
# writing a graph input (Note [Effects]), so running the compiled graph on the real
# tensors updates them in place, as eager's step does; state created during the step
# (SGD's momentum buffers and Adam's moments at the first step) is a graph output,
# installed in `opt.state` afterwards.
# What the trace depends on is the key of its cache entry: the hyperparameters of each
# group (Python numbers, compared by value: changing `lr` retraces, as a guard on it does
# in PyTorch; past `_dynamo.config.cache_size_limit` entries the step runs eagerly with a
# warning, as a recompiling frame does), which parameters have a `.grad`, and the shapes
# and dtypes of parameters, gradients and state tensors. The first step (no state yet) and the later ones are two
# entries. The step count of Adam is read with `_get_value`, which under the trace keeps
# it a tensor (in float64, so the bias corrections round as eager's Python floats do)
# instead of baking a number into the graph that would change at every step.
# Hooks (register_step_pre_hook/post_hook) and the closure run eagerly around the compiled
# update, as in eager. The step runs eagerly instead when it cannot be a graph: a tensor
# hyperparameter (lr as a Tensor), `differentiable=True`, or parameters that are not
# concrete arrays (under a transform).
# Results: the update is the same primitives on the same values, and the inductor builds
# without fp contraction (Note in _inductor/build.py), so parameters and state are
# bit-equal to eager's step for SGD (momentum, weight decay, Nesterov), Adam and AdamW
# (tests/aot/test_compiled_step.py checks several steps with assert_array_equal).


# optimizer -> {backend: CompiledStep}; kept off the optimizer so that copying or pickling
# it never meets compiled code
STEPS = weakref.WeakKeyDictionary()


def compiled_step(opt, backend):
    """``opt.step`` compiled with ``backend`` (a backend callable ``backend(gm, inputs)``),
    cached per optimizer and backend (in ``STEPS``)."""
    steps = STEPS.setdefault(opt, {})
    step = steps.get(backend)
    if step is None:
        step = steps[backend] = CompiledStep(opt, backend)
    return step


class CompiledStep:
    """Runs ``opt.step(closure=None)`` as a compiled graph (Note [Compiled optimizer step])."""

    def __init__(self, opt, backend):
        from ..optim.optimizer import _with_step_hooks
        self._opt = weakref.ref(opt)       # the optimizer holds this object
        self.backend = backend
        self.cache = {}
        self.traces = 0                    # how many times the update was traced
        self.warned = False
        self._hooked = _with_step_hooks(lambda o, closure=None: self._step(o, closure))
        raw = type(opt).step
        self._raw = getattr(raw, "__wrapped__", raw)   # the step without hooks

    def __call__(self, *args, **kwargs):
        return self._hooked(self._opt(), *args, **kwargs)

    def _step(self, opt, closure):
        from ..optim.optimizer import _eval_closure
        loss = _eval_closure(closure)
        key, flat = _signature(opt)
        try:
            entry = self.cache.get(key)
        except TypeError:                  # an unhashable hyperparameter
            key = None
        if key is None:
            self._raw(opt)                 # not a graph: eagerly (the Note's last cases)
            return loss
        if entry is None:
            from .._dynamo import config
            if len(self.cache) >= config.cache_size_limit:
                # a hyperparameter that changes at every step (an lr scheduler): as a
                # frame past its cache_size_limit, the step runs eagerly from here on
                if not self.warned:
                    self.warned = True
                    warnings.warn(f"compiled {type(opt).__name__}.step hit "
                                  f"numtorch._dynamo.config.cache_size_limit "
                                  f"({config.cache_size_limit}) retraces (do hyperparameters "
                                  f"such as lr change at every step?); it runs eagerly now",
                                  stacklevel=4)
                self._raw(opt)
                return loss
            entry = self.cache[key] = self._compile(opt, flat)
        run, installs = entry
        with no_grad():                    # as the step's own _use_grad_for_differentiable
            outs = run(*flat)
        params = [p for g in opt.param_groups for p in g["params"] if p.grad is not None]
        for (i, name), o in zip(installs, outs):
            # a fresh copy: the output may be a constant of the graph (Adam's first step count)
            opt.state[params[i]][name] = wrap_array(np.array(o._data, copy=True))
        return loss

    def _compile(self, opt, flat):
        from .._dynamo.backends import GraphModule
        from ..func._trace import make_graph
        installs = []
        raw = self._raw

        def update(*tensors):
            it = iter(tensors)
            shadow = copy.copy(opt)
            shadow.state = defaultdict(dict)
            shadow.param_groups = []
            traced = []
            for group in opt.param_groups:
                ps = []
                for p in group["params"]:
                    if p.grad is None:
                        ps.append(p)
                        continue
                    t = next(it)
                    t.grad = next(it)
                    state = opt.state.get(p, {})
                    shadow.state[t] = {k: next(it) if isinstance(v, Tensor) else v
                                       for k, v in state.items()}
                    traced.append((t, dict(shadow.state[t])))
                    ps.append(t)
                shadow.param_groups.append({**group, "params": ps})
            raw(shadow)
            new = []
            for i, (t, before) in enumerate(traced):
                for k, v in shadow.state[t].items():
                    if before.get(k) is not v:     # not the input tensor updated in place
                        if not isinstance(v, Tensor):
                            raise NotImplementedError(
                                f"compiled optimizer step: state {k!r} became a "
                                f"{type(v).__name__}, not a tensor")
                        installs.append((i, k))
                        new.append(v)
            return tuple(new)

        graph = make_graph(update, name=f"{type(opt).__name__}_step")(*flat)
        self.traces += 1
        n_new = len(graph.outputs)
        graph, written = _discharge_writes(graph)
        compiled = self.backend(GraphModule(graph), list(flat))

        def run(*tensors):
            outs = tuple(compiled(*tensors))
            for i, o in zip(written, outs[n_new:]):
                # the write of eager's in-place update (inplace.py): same memory, new version;
                # a backend that computed the value in the input's own memory (Note
                # [Donated inputs], _inductor/runner.py) left nothing to copy
                t = tensors[i]
                if o._data is not t._data:
                    np.copyto(t._data, o._data)
                t._version_counter.value += 1
            return outs[:n_new]
        run.compiled = compiled
        return run, installs


# Note [Writes leave the step graph]
# The traced step writes its inputs with `copy_to` nodes (the parameters, the momentum
# buffers, Adam's moments and step counts). Handed to a backend as they are, each write is
# an extern the inductor cannot fuse: every updated value was stored, copied by
# `copy_to`'s impl and copied again into its tensor, and the SGD-with-momentum step over
# the MLP took 17 ms against eager's 3. The writes are taken out before compiling: each
# `copy_to(dst, src)` is replaced by `src` (its value, `copy_to.discharge`), and the
# final value of every written input becomes an extra output, which `run` copies into
# the input's memory (one `np.copyto` per written tensor, as eager's in-place op ends).
# The graph is then pure, and the inductor fuses the update of all parameters into one
# kernel (its horizontal fusion). Each written input is marked donated to its final value
# (`Graph.donated`): where the inductor can prove it safe it computes that value in the
# input's own memory (Note [Donated inputs], _inductor/runner.py), and `run` finds the
# output is the tensor's array and copies nothing (plain SGD over the MLP: the parameters).


def _discharge_writes(graph):
    """``(pure graph, written)``: ``graph`` without its writes; its outputs are followed by
    the final values of the inputs it wrote, whose indices are ``written`` (Note [Writes
    leave the step graph]). A graph writing a captured constant is returned as is."""
    from .._core.ir import Graph, Node
    from .._prims.ref import copy_to
    subst, root, final = {}, {}, {}
    nodes = []
    index = {id(v): i for i, v in enumerate(graph.inputs)}
    consts = {id(c) for c in graph.consts}
    for n in graph.nodes:
        ins = [subst.get(id(v), v) for v in n.ins]
        if not n.is_effect():
            nodes.append(Node(n.prim, ins, n.params, n.outs, n.where))
            continue
        r = root.get(id(n.ins[0]), n.ins[0])
        if n.prim is not copy_to or id(r) in consts:
            return graph, ()               # a write into a captured tensor: kept
        value = ins[1]                     # copy_to.discharge: the value written
        if id(r) in index:                 # an input: written back after the run
            final[index[id(r)]] = value
        subst[id(n.outs[0])] = value       # (a value made in the graph: just renamed)
        root[id(n.outs[0])] = r
    written = tuple(sorted(final))
    outputs = [subst.get(id(o), o) for o in graph.outputs] + [final[i] for i in written]
    pure = Graph(list(graph.inputs), nodes, outputs, list(graph.consts), name=graph.name).check()
    # each written input's old value is dead once its final value is computed: a backend
    # may compute that value in the input's memory and skip the copy (Note [Donated inputs])
    pure.donated = {len(graph.outputs) + k: i for k, i in enumerate(written)}
    return pure, written


def _signature(opt):
    """(cache key, flat tensors) of ``opt``'s current step, or (None, None) when the step
    cannot be traced (Note [Compiled optimizer step])."""
    if opt.defaults.get("differentiable", False):
        return None, None
    key, flat = [], []
    for group in opt.param_groups:
        hyper = []
        for k, v in group.items():
            if k == "params":
                continue
            if isinstance(v, Tensor):
                return None, None
            hyper.append((k, v))
        key.append(tuple(hyper))
        for p in group["params"]:
            g = p.grad
            if g is None:
                key.append((id(p), None))
                continue
            pd, gd = p._data, g._data
            if pd.__class__ is not np.ndarray or gd.__class__ is not np.ndarray:
                return None, None
            # dtypes compare and hash by value (no `.str`: this runs at every step)
            layout = [id(p), pd.shape, pd.dtype, gd.shape, gd.dtype]
            flat += (p, g)
            for k, v in opt.state.get(p, {}).items():
                if isinstance(v, Tensor):
                    if v._data.__class__ is not np.ndarray:
                        return None, None
                    layout.append((k, v._data.shape, v._data.dtype))
                    flat.append(v)
                else:
                    layout.append((k, v))
            key.append(tuple(layout))
    return tuple(key), flat
