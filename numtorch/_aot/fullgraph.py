"""Whole training steps in one graph: ``compile(step, fullgraph=True)`` captures
``zero_grad``, the forward, ``loss.backward()`` and ``opt.step()`` together.

Without ``fullgraph=True`` capture keeps PyTorch's behaviour: ``zero_grad``,
``loss.backward()`` and ``opt.step()`` are graph breaks (the backward runs the eager engine
over the compiled forward's autograd node, the step its own compiled graph,
optimizer.py). With it, `TrainCapture` (installed on the capture by numtorch._dynamo)
handles the three calls inside the capture (Note [Training steps in one graph]). This
module owns that; the bytecode interpreter, guards and code generation stay numtorch._dynamo's.
"""
from __future__ import annotations

import copy
from collections import defaultdict

import numpy as np

from .._core import primitive as _prim
from .._core.tensor import Tensor, wrap, wrap_array

# Note [Training steps in one graph]
# Beyond PyTorch (issue #9): under fullgraph=True a training step is one graph.
#   zero_grad()      (an optimizer's or a module's, set_to_none=True) makes the capture's
#                    view of each parameter's .grad None (attr_overlay) and records the
#                    write-back `p.grad = None` (a "setattr" side effect, codegen.py).
#   loss.backward()  on a traced scalar is the VJP of the traced forward: the nodes
#                    captured so far, as a region whose inputs are the graph's inputs
#                    and captured constants, are differentiated with func.vjp under the
#                    capture's interpreter, so the backward's primitives are recorded in
#                    the same graph (the same joint-graph machinery as partition.py). The
#                    leaves are the captured tensors and inputs that require grad; each
#                    gradient is added to the capture's view of the leaf's .grad (eager's
#                    accumulation: without zero_grad in the step it adds to the real
#                    .grad, read as a graph input) and written back as a graph output.
#                    The region re-inlines the forward; cse merges the copy with the
#                    original nodes (`finish`).
#   opt.step()       runs the optimizer's own step (its Python, numtorch/optim) natively
#                    under the capture on a shallow copy of the optimizer whose parameters
#                    and state tensors are stand-in trace values (as the compiled step of
#                    optimizer.py traces it). Its in-place writes (`copy_to` nodes into the
#                    stand-ins) are taken out of the graph at once: the final value of each
#                    parameter and state tensor becomes a graph output that the frame copies
#                    into the real tensor after the graph ran (`assign`, as optimizer.py's
#                    Note [Writes leave the step graph]); state made by the step (momentum
#                    buffers, Adam's moments at the first step) is installed (`install`).
#                    A guard on the optimizer's hyperparameters and state layout
#                    (`state_key`) recompiles when they change (the first step and the
#                    later ones are two entries).
# Note [Optimizer state is captured]
# The parameters are captured constants of the graph (the modules ran natively on them),
# and so are the optimizer's state tensors (the step ran natively on stand-ins that read
# as them): the graph reads them at each call, and the write-backs update them in place.
# A new state tensor (load_state_dict, a first step) fails the `state_key` guard. They
# were graph inputs for one sitting to work around an inductor AdamW whose step count
# stayed 2 from the third call: the cause was cse merging the captured step count (1.0
# when the later steps were captured) with the literal 1.0 of `step + 1`; cse now merges
# literals only (Note [Literals and captured tensors] in _core/passes.py).
# Note [Tensor hyperparameters]
# `lr` may be a 0-d tensor, as in PyTorch, so that changing it (`lr.fill_(...)`, what the
# LR schedulers do to a tensor lr) needs no recompile: the step's stand-in for it reads the
# real tensor as a captured constant, at each call (`_to_scalar` in numtorch/optim keeps a
# traced tensor a tensor, in float64, so the arithmetic on it rounds as eager's Python
# float does). Replacing `group["lr"]` by another tensor recompiles (`state_key` keys a
# tensor by identity). Other tensor hyperparameters (betas, weight_decay) are refused.
# Note [Gradient hooks in one graph]
# A hook registered on a leaf (`p.register_hook(fn)`, outside the compiled step) gets the
# leaf's gradient and may return a replacement, before `.grad` is accumulated. `backward`
# calls each hook through the capture's interpreter on the traced gradient, as Dynamo's
# compiled autograd traces hooks: its tensor ops become graph nodes and its Python side
# effects are replayed at each call. The leaves' hooks run the last used leaf first, as
# eager's engine reaches the last layer first (the order only shows in side effects). A
# guard on each leaf's hooks recompiles when one is added or removed. Post-accumulate-grad
# hooks (they read `.grad` after the write, DDP's) and hooks registered inside the step
# are refused.
# Note [Writes in a differentiated forward]
# A forward may write a tensor the graph reads as an input (a user module's buffer:
# `self.seen.add_(x.sum(0))`; a library module's buffers are functionalized by capture
# already, Note [Writes into captured tensors]). Left in the graph, such a write breaks the
# backward: the forward that `backward` re-inlines reads the input again, after the write
# has changed it, and cse may not merge across a write. So at each backward the writes
# recorded so far leave the graph (`writes_after_graph`), as the optimizer's do:
#   - `t = copy_to(dst, src)` makes `t` equal `src` (copy_to's shape rule: same shape and
#     dtype), so every later read of `t`, or of `dst` itself, reads `src`; the node becomes
#     `t = copy(src)` so that values captured later may still name `t` (`finish` renames
#     those to `src`, no copy is left);
#   - the last value written into each input is a graph output that the frame copies into
#     the input's tensor after the graph ran (`assign`, read from its source at each call);
#   - a write into an intermediate value needs nothing more (nobody outside sees it).
# The forward differentiated is then pure, and gradients flow through a written value to
# what it was computed from, as eager's CopyBackwards sends them. A write into a tensor
# captured as a constant with no traced value (`buf.fill_(0.0)` on a library module's
# buffer) cannot be placed there and is refused.
# The graph then has no autograd left to do: it runs under no_grad (`run_without_grad`),
# so AOT autograd compiles it as an inference graph and the loss it returns carries no
# history (its backward already ran inside). What cannot be one graph raises the capture's
# Unsupported, which fullgraph=True turns into an error naming the reason: a backward
# after a no_grad/enable_grad block, through a tensor with autograd history from outside
# the function, with create_graph/retain_graph/inputs, zero_grad(set_to_none=False),
# step hooks or a closure, and reading a parameter after the step wrote it.


class TrainCapture:
    """The training calls of one fullgraph capture (Note [Training steps in one graph])."""

    def __init__(self, cap):
        self.cap = cap
        self.frame = None          # the frame of the call being handled (its user stack)
        self.written = {}          # id(graph value) -> it, for the tensors the step wrote
        self.after_step = None     # node index where the last step's nodes end
        self.backwards = 0
        self.aliases = set()       # ids of the values of writes taken out of the graph
        self.roots = {}            # id(value of a write taken out) -> the input written

    @property
    def captured_training(self):
        """Whether a backward or a step was captured: the graph then runs without grad."""
        return bool(self.backwards) or self.after_step is not None

    # -- dispatch -----------------------------------------------------------------------
    def unsupported(self, reason, hint):
        from .._dynamo.values import Unsupported
        raise Unsupported(reason, hint, self.frame.user_stack() if self.frame else ())

    def call(self, frame, fn, args, kwargs):
        """The result of ``fn(*args, **kwargs)`` called in ``frame`` when it is a training
        call, else NOT_MINE."""
        self.frame = frame
        if getattr(fn, "_wrapped_by_lr_sched", False):
            # `opt.step` replaced by an LR scheduler's wrapper (optim/lr_scheduler.py): the
            # step, and the mark the wrapper sets for the scheduler's order check
            opt = fn._optimizer()
            self.cap.side_effects.append(("setattr", opt, "_opt_called", True))
            return self.step(opt, *args, **kwargs)
        owner = getattr(fn, "__self__", None)
        name = getattr(fn, "__name__", None)
        if name in _HOOKS and isinstance(owner, Tensor):
            self.unsupported(f"Tensor.{name} inside a fullgraph training step (Note "
                             f"[Gradient hooks in one graph])", "register hooks on the "
                             "parameters before calling the compiled step")
        if owner is None or name not in ("backward", "zero_grad", "step"):
            return NOT_MINE
        if name == "backward" and self.cap.is_trace(owner) and \
                getattr(fn, "__func__", None) is Tensor.backward:
            return self.backward(owner, *args, **kwargs)
        if name == "zero_grad" and _is_optimizer(owner):
            return self.zero_grad(_optimizer_params(owner), *args, **kwargs)
        if name == "zero_grad" and _is_module(owner):
            return self.zero_grad(list(owner.parameters()), *args, **kwargs)
        if name == "step" and _is_optimizer(owner):
            return self.step(owner, *args, **kwargs)
        return NOT_MINE

    # -- .grad as the capture sees it -----------------------------------------------------
    def _grad_view(self, real):
        """The capture's value of ``real.grad``: written during capture, or read from the
        real tensor at each call (a graph input with its guards, or None guarded)."""
        cap = self.cap
        key = (id(real), "grad")
        if key in cap.attr_overlay:
            return cap.attr_overlay[key]
        return cap.wrap(real.grad, self._source(real).attr("grad"))

    def _source(self, real):
        """Where the frame reads real tensor ``real`` from at each call (an argument, a
        module's parameter) or, captured with none, the tensor itself."""
        cap = self.cap
        src = cap.tensor_sources.get(id(real)) or cap.source_of.get(id(cap.wrapped.get(id(real))))
        if src is None:
            from .._dynamo.guards import Source
            src = Source(cap.guards.const(real), f"a captured {tuple(real.shape)} tensor")
        return src

    def _set_grad(self, real, value):
        """``real.grad = value`` in the capture's view, written back after the graph."""
        cap = self.cap
        cap.attr_overlay[(id(real), "grad")] = value
        target = real
        sym = cap.wrapped.get(id(real))
        if sym is not None and cap.is_trace(sym):
            # the tensor is also a graph input (an argument, or read through a module's
            # attribute): one view, and the write goes where the input is read from at
            # each call (an argument may be another tensor next time)
            cap.attr_overlay[(id(sym), "grad")] = value
            target = sym
        # only the last write of .grad matters: nothing between reads it back
        cap.side_effects[:] = [e for e in cap.side_effects if not (
            e[0] == "setattr" and e[1] is target and e[2] == "grad")]
        cap.side_effects.append(("setattr", target, "grad", value))

    # -- zero_grad ------------------------------------------------------------------------
    def zero_grad(self, params, set_to_none=True):
        if set_to_none is not True:
            self.unsupported("zero_grad(set_to_none=False) zeroes .grad in place",
                             "call zero_grad() (set_to_none=True) in the compiled step")
        for p in params:
            self._set_grad(p, None)
        return None

    # -- backward -------------------------------------------------------------------------
    def backward(self, loss, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .._core.ir import Graph, Node
        from .._core.passes import dce
        from .._ops.creation import ones_like
        from ..func import vjp
        from ..func._trace import TraceTracer
        cap, interp = self.cap, self.cap.interp
        if create_graph or retain_graph or inputs is not None:
            self.unsupported("loss.backward with create_graph, retain_graph or inputs",
                             "call loss.backward() without them, or compile without "
                             "fullgraph=True")
        if cap.grad_marks or not cap.grad_initial:
            self.unsupported("loss.backward() after a no_grad / enable_grad block in the same "
                             "graph", "move the block after the backward")
        if not loss.is_floating_point() and not loss.is_complex():
            self.unsupported("only floating tensors have gradients (loss.backward() on "
                             f"a {loss.dtype} tensor)", "")
        if gradient is None and loss.ndim != 0:
            self.unsupported("grad can be implicitly created only for scalar outputs",
                             "pass gradient= or reduce the loss to a scalar")
        if self.after_step is not None:
            self.unsupported("loss.backward() after opt.step() in the same graph",
                             "call the step last")
        var = loss._data.var
        self.writes_after_graph()          # Note [Writes in a differentiated forward]
        graph = dce(Graph([v for v, _, _ in cap.inputs], list(interp.nodes), [var],
                          list(interp.consts), name="forward_for_backward"))
        region, consts, _ = graph.closed()
        reals = list(consts) + [r for _, _, r in cap.inputs]
        # The re-inlined forward reads each captured constant through a stand-in trace
        # value, renamed to the constant below: passed as a tensor, the forward's ops on
        # constants alone (a bias's broadcast) would be evaluated now instead of recorded,
        # and the copies could not be merged with the original nodes.
        start, stand_in = len(interp.nodes), {}
        primals = []
        for c in graph.consts:
            v = interp.new_var(tuple(c.value.shape), c.value._data.dtype, prefix="s")
            stand_in[id(v)] = c
            primals.append(wrap(TraceTracer(interp, v)))
        primals += [wrap(TraceTracer(interp, v)) for v in graph.inputs]
        wrt = []
        for i, (real, v) in enumerate(zip(reals, region.inputs)):
            if not (isinstance(real, Tensor) and real.requires_grad and v.dtype.kind in "fc"):
                continue
            if real.grad_fn is not None:
                self.unsupported("the loss depends on a tensor with autograd history from "
                                 "outside the compiled function (its backward would leave "
                                 "the graph)", "detach it, or compile without fullgraph=True")
            wrt.append(i)
        if not wrt:
            self.unsupported("element 0 of tensors does not require grad and does not have "
                             "a grad_fn", "")

        def forward(*xs):
            values = list(primals)
            for i, x in zip(wrt, xs):
                values[i] = x
            return region.inline(*values)[0]
        saved_mode = _prim.grad_mode[0]
        try:
            _, vjp_fn = vjp(forward, *[primals[i] for i in wrt])
            grads = vjp_fn(ones_like(loss) if gradient is None else gradient)
        finally:
            _prim.grad_mode[0] = saved_mode
        interp.nodes[start:] = [
            n if not any(id(v) in stand_in for v in n.ins) else
            Node(n.prim, [stand_in.get(id(v), v) for v in n.ins], n.params, n.outs, n.where)
            for n in interp.nodes[start:]]
        total = {}                         # id(real leaf) -> (leaf, summed gradient)
        for i, g in zip(wrt, grads):
            real = reals[i]
            prev = total.get(id(real))
            total[id(real)] = (real, g if prev is None else prev[1] + g)
        leaves = self.run_hooks(list(total.values()))
        for real, g in leaves:
            prev = self._grad_view(real)
            self._set_grad(real, g if prev is None else prev + g)
        self.backwards += 1
        return None

    def run_hooks(self, leaves):
        """``[(leaf, gradient)]`` with each leaf's gradient hooks applied, traced (Note
        [Gradient hooks in one graph])."""
        from .._dynamo.calls import call_function
        g = self.cap.guards
        for real, _ in leaves:
            hooks = _hooks_of(real)
            g.add(f"{g.const(_hooks_of)}({self._source(real).expr}) == {g.const(hooks)}",
                  f"the gradient hooks of {self._source(real).words} are as at capture")
            if real.__dict__.get("_post_accumulate_hooks"):
                self.unsupported("a post-accumulate-grad hook on a parameter (it runs after "
                                 ".grad is written, outside the graph)",
                                 "compile without fullgraph=True")
        frame, out = self.frame, []
        for real, grad in reversed(leaves):   # the last layer's first, as eager's engine
            for hook in real._hooks or ():
                new = call_function(frame, hook, [grad], {})
                if new is None:
                    continue
                if not (self.cap.is_trace(new) and tuple(new.shape) == tuple(grad.shape)
                        and new.dtype == grad.dtype):
                    self.frame = frame
                    self.unsupported(f"a gradient hook returned {type(new).__name__} "
                                     f"{tuple(getattr(new, 'shape', ()))}, not a gradient "
                                     f"of the leaf's size and dtype", "return None or a "
                                     "tensor like its argument")
                grad = new
            out.append((real, grad))
        self.frame = frame
        out.reverse()
        return out

    def writes_after_graph(self):
        """Take the writes recorded so far out of the graph: Note [Writes in a
        differentiated forward]."""
        from .._core.ir import Const, Node
        from .._prims.ref import copy_to
        from .._prims.shape import copy
        cap, interp = self.cap, self.cap.interp
        inputs = {id(v): v for v, _, _ in cap.inputs}
        value, root, final, nodes = {}, self.roots, {}, []
        for n in interp.nodes:
            if not n.is_effect():
                if any(id(v) in value for v in n.ins):
                    n = Node(n.prim, [value.get(id(v), v) for v in n.ins], n.params, n.outs,
                             n.where)
                nodes.append(n)
                continue
            assert n.prim is copy_to, n.prim   # the one primitive that writes (_prims/ref.py)
            dst = root.get(id(n.ins[0]), n.ins[0])
            if isinstance(dst, Const):
                self.unsupported("loss.backward() after a write into a captured tensor "
                                 f"that is not traced ({n.where})",
                                 "compile without fullgraph=True")
            src = value.get(id(n.ins[1]), n.ins[1])
            root[id(n.outs[0])] = dst
            value[id(n.outs[0])] = value[id(dst)] = src
            if id(dst) in inputs:
                final[id(dst)] = src
            self.aliases.add(id(n.outs[0]))
            nodes.append(Node(copy, [src], {}, n.outs, n.where))
        interp.nodes[:] = nodes
        for vid, src in final.items():
            var = inputs[vid]
            cap.side_effects[:] = [e for e in cap.side_effects if not (
                e[:3] == ("method", WRITE_BACK, "assign") and cap.is_trace(e[3][0]) and
                e[3][0]._data.var is var)]
            cap.side_effects.append(("method", WRITE_BACK, "assign",
                                     (_trace(interp, var), _trace(interp, src)), {}))

    # -- step -----------------------------------------------------------------------------
    def step(self, opt, closure=None):
        from .._core.ir import Const, Node
        from .._prims.ref import copy_to
        from ..func._trace import TraceTracer
        cap, interp = self.cap, self.cap.interp
        if closure is not None or opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks:
            self.unsupported("opt.step with a closure or step hooks",
                             "compile without fullgraph=True (the step then runs as its "
                             "own compiled graph at a break)")
        if opt.defaults.get("differentiable", False):
            self.unsupported("opt.step with differentiable=True", "compile without "
                             "fullgraph=True")
        for g in opt.param_groups:
            for k, v in g.items():
                if k not in _NOT_READ_BY_STEP and _has_tensor(v) and not (
                        k == "lr" and v.numel() == 1 and v.is_floating_point()):
                    self.unsupported(f"opt.step with the tensor hyperparameter {k!r} (only "
                                     f"lr may be a tensor, a 1-element floating one)",
                                     f"use a Python number for {k}")
        start = len(interp.nodes)
        stand_in = {}                      # id(stand-in var) -> (real tensor, what reads it)
        traced = []                        # (real param, stand-in, state before)

        def standin(real):
            v = interp.new_var(tuple(real.shape), real._data.dtype, prefix="s")
            # what the step's reads become: the captured tensor (a parameter the forward
            # read, or optimizer state: Note [Optimizer state is captured])
            stand_in[id(v)] = (real, interp._operand(real))
            return wrap(TraceTracer(interp, v))
        shadow = copy.copy(opt)
        shadow.state = defaultdict(dict)
        shadow.param_groups = []
        for group in opt.param_groups:
            ps = []
            for p in group["params"]:
                g = self._grad_view(p)
                if g is None:
                    ps.append(p)
                    continue
                t = standin(p)
                t.grad = g
                state = {k: standin(v) if isinstance(v, Tensor) else v
                         for k, v in opt.state.get(p, {}).items()}
                shadow.state[t] = dict(state)
                traced.append((p, t, state))
                ps.append(t)
            lr = group.get("lr")
            # Note [Tensor hyperparameters]: a tensor lr is read by the graph at each call
            shadow.param_groups.append({**group, "params": ps, **(
                {"lr": standin(lr)} if isinstance(lr, Tensor) else {})})
        raw = type(opt).step
        raw = getattr(raw, "__wrapped__", raw)        # without the hooks (checked above)
        saved_mode = _prim.grad_mode[0]
        try:
            raw(shadow)
        finally:
            _prim.grad_mode[0] = saved_mode
        # take the writes out (Note [Training steps in one graph]): stand-ins read as the
        # captured tensors, each copy_to replaced by the value it writes
        nodes, subst, root, final = interp.nodes[start:], {}, {}, {}
        inputs = {id(v) for v, _, _ in cap.inputs}
        del interp.nodes[start:]
        for n in nodes:
            ins = []
            for v in n.ins:
                v = subst.get(id(v), v)
                ins.append(stand_in[id(v)][1] if id(v) in stand_in else v)
            if not n.is_effect():
                interp.nodes.append(Node(n.prim, ins, n.params, n.outs, n.where))
                continue
            target = root.get(id(n.ins[0]), n.ins[0])
            if n.prim is not copy_to or isinstance(target, Const) or id(target) in inputs:
                self.unsupported(f"opt.step writes with {n.prim.name} into a tensor that is "
                                 f"not a parameter or optimizer state",
                                 "compile without fullgraph=True")
            if id(target) in stand_in:     # a real tensor: written back after the graph
                final[id(target)] = ins[1]
            subst[id(n.outs[0])] = ins[1]  # (a value made in the graph: just renamed)
            root[id(n.outs[0])] = target
        for vid, value in final.items():
            real, read = stand_in[vid]
            self.written[id(read)] = read
            cap.side_effects.append(("method", WRITE_BACK, "assign",
                                     (real, _trace(interp, value)), {}))
        for p, t, before in traced:
            for k, v in shadow.state[t].items():
                if before.get(k) is v:
                    continue               # the stand-in, written in place above
                if not isinstance(v, Tensor):
                    self.unsupported(f"optimizer state {k!r} became a {type(v).__name__}",
                                     "keep optimizer state in tensors")
                if interp.mine(v):
                    var = subst.get(id(v._data.var), v._data.var)
                    if id(var) in stand_in:
                        continue
                    v = _trace(interp, var)
                cap.side_effects.append(("method", WRITE_BACK, "install", (opt, p, k, v), {}))
        g = cap.guards
        key = state_key(opt)
        g.add(f"{g.const(state_key)}({g.const(opt)}) == {g.const(key)}",
              f"{type(opt).__name__}'s hyperparameters and state layout are as at capture")
        self.after_step = len(interp.nodes)
        return None

    # -- the graph ------------------------------------------------------------------------
    def finish(self, graph):
        """The captured graph, checked and with the re-inlined forward merged (cse)."""
        if self.after_step is not None and self.written:
            for n in self.cap.interp.nodes[self.after_step:]:
                if any(id(v) in self.written for v in n.ins):
                    # capture is over: an error (a break cannot be placed here any more)
                    raise RuntimeError(f"fullgraph=True: a parameter or optimizer state is "
                                       f"read after opt.step() wrote it in the same graph "
                                       f"({n.where}). Fix: read it in the next call")
        inputs = {id(v) for v, _, _ in self.cap.inputs}
        written_back = {id(v) for v in self.roots.values() if id(v) in inputs}
        for n in self.cap.interp.nodes:
            if n.is_effect() and id(self.roots.get(id(n.ins[0]), n.ins[0])) in written_back:
                raise RuntimeError(f"fullgraph=True: a tensor written before loss.backward() "
                                   f"is written again after it ({n.where}); the two writes "
                                   f"cannot keep their order. Fix: write it once per step")
        if not self.backwards:
            return graph
        return _merged(_without_aliases(graph, self.aliases))


def _merged(graph):
    """``graph`` with the forward that ``backward`` re-inlined merged into the original
    (cse, then dce). Captured tensors keep their identity (the optimizer's state changes at
    every call; Adam's step count equals a literal 1 at the first): Note [Literals and
    captured tensors] in _core/passes.py."""
    from .._core.passes import cse, dce
    return dce(cse(graph)).check()


def _without_aliases(graph, aliases):
    """``graph`` with each ``t = copy(src)`` left by `writes_after_graph` removed and ``t``
    read as ``src`` (Note [Writes in a differentiated forward])."""
    from .._core.passes import Rule, rewrite
    if not aliases:
        return graph
    rule = Rule("copy", lambda node, rw: node.ins[0],
                lambda node, rw: id(node.outs[0]) in aliases, "alias")
    return rewrite(graph, [rule], max_rounds=1)


def run_without_grad(compiled):
    """``compiled`` (a backend's callable) run with grad disabled: a graph holding its own
    backward has no autograd left to record (Note [Training steps in one graph])."""
    def run(*args):
        mode = _prim.grad_mode[0]
        _prim.grad_mode[0] = False
        try:
            return compiled(*args)
        finally:
            _prim.grad_mode[0] = mode
    run.compiled = compiled
    return run


NOT_MINE = object()


class _WriteBack:
    """The write-backs a training graph's frame runs after the graph (side effects)."""

    @staticmethod
    def assign(t, value):
        """Copy ``value`` into ``t``'s memory, as an in-place update ends (no history)."""
        np.copyto(t._data, value._data)
        t._version_counter.value += 1

    @staticmethod
    def install(opt, p, name, value):
        """``opt.state[p][name] = value``: a fresh copy (the value may be a constant of the
        graph, Adam's first step count)."""
        opt.state[p][name] = wrap_array(np.array(value._data, copy=True))


WRITE_BACK = _WriteBack()


def state_key(opt):
    """What a captured step depends on besides the gradients: each group's hyperparameters
    and each parameter's state layout (the first step and the later ones differ)."""
    key = []
    for group in opt.param_groups:
        # a tensor (lr) by identity: its value is read by the graph (Note [Tensor
        # hyperparameters]), and == on tensors compares values
        key.append(tuple((k, ("tensor", id(v), tuple(v.shape), v.dtype) if isinstance(v, Tensor)
                          else v) for k, v in group.items() if k != "params"))
        for p in group["params"]:
            layout = [id(p)]
            for k, v in opt.state.get(p, {}).items():
                if isinstance(v, Tensor):
                    layout.append((k, id(v), v._data.shape, v._data.dtype.str))
                else:
                    layout.append((k, v))
            key.append(tuple(layout))
    return tuple(key)


def _trace(interp, var):
    """The symbolic value of graph value ``var`` (a captured constant is its tensor)."""
    from .._core.ir import Const
    from ..func._trace import TraceTracer
    return var.value if isinstance(var, Const) else wrap(TraceTracer(interp, var))


# what a group holds that no optimizer's step reads: its parameters and the LR schedulers'
# bookkeeping (a tensor lr's `initial_lr` is a tensor too)
_NOT_READ_BY_STEP = frozenset(("params", "initial_lr", "max_lr", "min_lr", "max_momentum",
                               "base_momentum"))


_HOOKS = frozenset(("register_hook", "retain_grad", "register_post_accumulate_grad_hook"))


def _hooks_of(t):
    """The gradient hooks of leaf ``t``: ``register_hook``'s, then the post-accumulate ones."""
    return tuple(t._hooks or ()) + tuple(t.__dict__.get("_post_accumulate_hooks", ()))


def _has_tensor(v):
    return isinstance(v, Tensor) or (isinstance(v, (tuple, list)) and
                                     any(isinstance(x, Tensor) for x in v))


def _is_optimizer(obj):
    return hasattr(obj, "_optimizer_step_pre_hooks") and hasattr(obj, "param_groups")


def _is_module(obj):
    from ..nn.modules.module import Module
    return isinstance(obj, Module)


def _optimizer_params(opt):
    return [p for g in opt.param_groups for p in g["params"]]
