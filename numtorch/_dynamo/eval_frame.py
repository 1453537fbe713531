"""The frame driver: cache lookup, capture, graph breaks and resume functions.

``run_frame(fn, args, kwargs, ctx)`` is what a compiled function does when called: bind the
arguments, check the cache entries of ``fn.__code__`` newest first (one generated guard
function each), run the hit, or capture a new entry. Capture runs the symbolic interpreter
(symbolic.py) over the frame; at the first `Unsupported` instruction of the top frame it
restarts capture with that instruction marked as the break point (Note [Restart at a
break]), so the graph holds exactly what precedes the break. Then codegen.py generates the
entry's ``___run``: graph, side effects, the breaking instruction run natively, and a call
to the resume function (bytecode.py), which is itself run through ``run_frame``.

Must not model Python semantics (symbolic.py) or know backends' internals.
"""
from __future__ import annotations

import inspect
import logging
import time
import types
import warnings

from .._core.ir import Graph, Var
from .._core.symbolic import ConstraintViolationError
from .._core import primitive as _primitive
from .._core.primitive import pop, push
from ..func._trace import TraceInterpreter
from . import config, contexts, debug_dir, numpy_capture
from .bytecode import check_version, instructions, origin, resumable, resume_code
from .builtins_table import user_code
from .codegen import Codegen
from .shapes import FrameState
from . import shapes
from .guards import GuardSet, failure_reason, local_source
from .capture import Capture
from .symbolic import Frame
from .values import NULL, UNBOUND, LazyArg, SymFunction, Unsupported, call_operands

log = logging.getLogger("numtorch._dynamo")

# Note [Restart at a break]
# Capture state is spread over the trace (nodes), side-effect records and symbolic
# containers mutated in place, possibly deep inside inlined calls. Rolling all of that back
# when an instruction turns out to be untraceable is error-prone, so (like Dynamo's
# "restart analysis") the capture is simply redone from the frame's start with the
# breaking top-level instruction recorded; the second pass stops before it.


class CompileContext:
    """What one ``compile(...)`` call asked for; keys its cache entries."""

    def __init__(self, backend, fullgraph=False, dynamic=None, name="", spec=None):
        self.backend, self.fullgraph, self.dynamic, self.name = backend, fullgraph, dynamic, name
        self.run_only = False
        # (backend, mode, options) as given to compile(): what a pickled OptimizedModule
        # stores instead of the looked-up backend (Note [Pickling a compiled module], api.py)
        self.spec = spec


class CacheEntry:
    __slots__ = ("guard", "run", "graph", "reason")

    def __init__(self, guard, run, graph, reason):
        self.guard, self.run, self.graph, self.reason = guard, run, graph, reason


class FrameCache:
    __slots__ = ("entries", "skip", "skip_reason", "recompile_reasons", "frame_state", "argc")

    def __init__(self, code):
        self.entries, self.skip, self.skip_reason, self.recompile_reasons = [], False, "", []
        self.frame_state = FrameState()   # sizes seen, for automatic dynamic (shapes.py)
        # Note [Cache hit path]: the positional argument count with which the arguments
        # are the frame's slots as given (no *args/**kwargs/keyword-only parameters); -1
        # where they always need binding.
        simple = not code.co_flags & 0x0C and not code.co_kwonlyargcount
        self.argc = code.co_argcount if simple else -1


_CACHES: dict = {}
_compiling = [0]
_disabled = [0]
# Observers of captures (explain, CompileProfiler, counters): called with events.
_OBSERVERS: list = []
COMPILE_TIMES: dict = {}


def _notify(event, **kw):
    for obs in list(_OBSERVERS):
        obs(event, **kw)


def reset():
    """Forget every compiled entry and resume function (``torch._dynamo.reset()``)."""
    _CACHES.clear()
    COMPILE_TIMES.clear()


_SIGS: dict = {}


def bind_args(fn, args, kwargs):
    """The frame's argument slots (co_varnames order), as CPython would bind them."""
    code = fn.__code__
    if not kwargs and not code.co_flags & 0x0C and not code.co_kwonlyargcount:
        n = code.co_argcount
        if len(args) == n:
            return args
        d = fn.__defaults__
        if d and n - len(d) <= len(args) < n:
            return tuple(args) + d[len(args) - n:]
    sig = _SIGS.get(fn)
    if sig is None:
        sig = _SIGS[fn] = inspect.signature(fn, follow_wrapped=False)
    b = sig.bind(*args, **kwargs)
    b.apply_defaults()
    return tuple(b.arguments.values())


# Note [Cache hit path]
# A hit is: one dict lookup for the code's cache, the arguments taken as the frame's
# slots when they are exactly its positional parameters (no call to bind_args), one
# generated guard call per entry tried, then the entry's generated ``___run``. Measured
# on a 10-element graph (benchmarks/compile_capture.py): about 1 µs from the compiled
# function's call to the graph's, a fifth of it the guard of one tensor.
def run_frame(fn, args, kwargs, ctx):
    if _disabled[0]:
        return fn(*args, **kwargs)
    code = fn.__code__
    cache = _CACHES.get((code, ctx))
    if cache is None:
        cache = _CACHES[(code, ctx)] = FrameCache(code)
    L = args if not kwargs and len(args) == cache.argc else bind_args(fn, args, kwargs)
    G, C = fn.__globals__, fn.__closure__ or ()
    for e in cache.entries:
        if e.guard(L, G, C):
            return e.run(L, G, C)
    if cache.skip or ctx.run_only or _compiling[0]:
        return fn(*args, **kwargs)
    reason = ""
    if cache.entries:
        reason = failure_reason(cache.entries[0].guard, L, G, C)
        cache.recompile_reasons.append(reason)
        logging.getLogger("numtorch._dynamo.recompiles").debug(
            "Recompiling function %s in %s:%s\n    triggered by the following guard failure: %s",
            code.co_name, code.co_filename, code.co_firstlineno, reason)
        if len(cache.entries) >= config.cache_size_limit:
            cache.skip = True
            cache.skip_reason = reason
            warnings.warn(
                f"numtorch._dynamo hit config.cache_size_limit ({config.cache_size_limit}) "
                f"for function {code.co_name} ({code.co_filename}:{code.co_firstlineno}); "
                f"last recompile reason: {reason}. It runs eagerly from now on.",
                stacklevel=3)
            return fn(*args, **kwargs)
    entry = capture_frame(fn, L, G, C, ctx, reason, cache.frame_state)
    if entry is None:
        # Note [Frames that cannot compile are skipped]
        # The frame cannot run compiled (a generator's code, a break that cannot resume,
        # e.g. inside a @contextmanager block). Capturing again on the next call would
        # fail the same way, at a capture's cost per call, so the code runs eagerly from
        # now on, as torch.compile skips such a frame's code. Always correct (eager), at
        # worst slower for inputs that would have taken a compilable path.
        cache.skip, cache.skip_reason = True, "the frame cannot be compiled"
        return fn(*args, **kwargs)
    cache.entries.insert(0, entry)
    return entry.run(L, G, C)


def capture_frame(fn, L, G, C, ctx, reason="", frame_state=None):
    """Capture one cache entry for ``fn`` on these inputs (None: run this frame eagerly)."""
    check_version()
    code = fn.__code__
    if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):
        return None
    t0 = time.perf_counter()
    forced = {}
    while True:
        try:
            result = _capture_once(fn, code, L, G, C, ctx, forced, frame_state)
            break
        except _Restart as r:
            forced[r.offset] = r.error
    frame, cap, kind, value = result
    t1 = time.perf_counter()
    try:
        entry = _generate(fn, code, frame, cap, kind, value, ctx, forced, reason)
    except Unsupported as u:
        _notify("skip", code=code, reason=u.reason)
        return None
    COMPILE_TIMES.setdefault("capture", []).append(t1 - t0)
    COMPILE_TIMES.setdefault("codegen+backend", []).append(time.perf_counter() - t1)
    return entry


class _Restart(Exception):
    def __init__(self, offset, error):
        self.offset, self.error = offset, error


def _capture_once(fn, code, L, G, C, ctx, forced, frame_state=None):
    grad_mode = _primitive.grad_mode[0]
    interp = push(TraceInterpreter(claims_constants=True))   # Note [Capture claims constants]
    _compiling[0] += 1
    frame = None
    try:
        guards = GuardSet()
        guards.global_state(len(_primitive.STACK) - 1)   # the levels below our trace
        cap = Capture(interp, guards, G, C)
        cap.dynamic, cap.frame_state = ctx.dynamic, frame_state
        if ctx.fullgraph:   # zero_grad, backward and step captured too (numtorch/_aot/fullgraph.py)
            from .._aot.fullgraph import TrainCapture
            cap.train = TrainCapture(cap)
        names = code.co_varnames
        localsplus = [LazyArg(v, local_source(i, names[i])) for i, v in enumerate(L)]
        localsplus += [UNBOUND] * (len(names) - len(L))
        cells = {n: ("real", i, C[i], f"C[{i}]") for i, n in enumerate(code.co_freevars)}
        frame = Frame(cap, code, G, localsplus, cells)
        try:
            kind, value = frame.run(stop=lambda f, inst: inst.offset in forced)
        except Unsupported as u:
            if ctx.fullgraph:
                where = u.stack[-1] if u.stack else (code.co_filename, 0, code.co_name)
                raise Unsupported(
                    f"fullgraph=True: graph break at {where[0]}:{where[1]} in {where[2]}: "
                    f"{u.reason}. Fix: {u.hint}", u.hint, u.stack) from None
            inst = frame.insts[frame.pc]
            if inst.offset in forced:
                raise
            raise _Restart(inst.offset, u) from None
        except (_Restart, ConstraintViolationError):
            raise
        except Exception as e:
            inst = frame.insts[min(frame.pc, len(frame.insts) - 1)]
            if config.suppress_errors:
                warnings.warn(f"numtorch._dynamo: internal error while capturing "
                              f"{inst.opname} in {code.co_name}: {e!r}; running eagerly")
                raise _Restart(inst.offset, Unsupported(f"internal error: {e!r}",
                                                        "report it", frame.user_stack()))
            raise RuntimeError(f"numtorch._dynamo: internal error while capturing instruction "
                               f"{inst.opname} at offset {inst.offset} of {code.co_name} "
                               f"({code.co_filename}:{inst.line}): {e!r}") from e
    finally:
        _compiling[0] -= 1
        _primitive.grad_mode[0] = grad_mode   # a captured no_grad block sets the real flag
        pop(interp)
        written = interp.restore_written()    # Note [Writes into captured tensors]
        if frame is not None:
            frame.cap.written = written
    return frame, cap, kind, value


def _dce(nodes, live):
    keep = []
    for node in reversed(nodes):
        if node.prim.mutates is not None or any(id(v) in live for v in node.outs):
            keep.append(node)
            live.update(id(v) for v in node.ins)
    keep.reverse()
    return keep


def _optimizer_step(fn):
    """Whether ``fn`` is an optimizer's bound ``step``, or an LR scheduler's wrapper of it
    (optim/lr_scheduler.py): at a break it runs as its compiled update
    (numtorch/_aot/optimizer.py, Note [Compiled optimizer step])."""
    return getattr(fn, "_wrapped_by_lr_sched", False) or (
        isinstance(fn, types.MethodType) and fn.__name__ == "step" and
        hasattr(fn.__self__, "_optimizer_step_pre_hooks"))


def _compiled_step(opt, backend):
    from .._aot.optimizer import compiled_step
    return compiled_step(opt, backend)


def _scheduled_step(opt, backend):
    """The compiled step of an optimizer an LR scheduler watches, with the mark its
    wrapper sets (the scheduler checks the call order by it)."""
    opt._opt_called = True
    return _compiled_step(opt, backend)


def _compiled_callee(fn, ctx):
    """A user function called natively at a break: compiled as its own frame."""
    if isinstance(fn, types.FunctionType) and user_code(fn):
        return lambda *a, **k: run_frame(fn, a, k, ctx)
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType) \
            and user_code(fn.__func__):
        f, s = fn.__func__, fn.__self__
        return lambda *a, **k: run_frame(f, (s,) + a, k, ctx)
    return fn


def _resume_caller(rcode, ctx, compiled=True):
    name = rcode.co_name

    def call(G, C, *args):
        if compiled and not _disabled[0]:
            # the hit loop of run_frame (Note [Cache hit path]) without making the function:
            # a resume code takes exactly its positional slots
            cache = _CACHES.get((rcode, ctx))
            if cache is not None:
                for e in cache.entries:
                    if e.guard(args, G, C):
                        return e.run(args, G, C)
        f = types.FunctionType(rcode, G, name, None, tuple(C) or None)
        if compiled:
            return run_frame(f, args, {}, ctx)
        return f(*args)
    return call


def _generate(fn, code, frame, cap, kind, value, ctx, forced, reason):
    gen = Codegen(cap, cap.inputs)
    insts, _ = instructions(code)
    breaks = []
    if kind == "return":
        gen.side_effects()
        gen.emit(f"return {gen.expr(value)}")
    else:
        inst = value
        err = forced[inst.offset]
        why = resumable(code)
        if why is not None:
            raise Unsupported(f"graph break in {code.co_name} cannot resume: {why}", "")
        if len(err.stack) > 1:
            # Dynamo records the failed inlining (the callee's reason) and then the break
            # of this frame at the call; the callee's own frame records its break again.
            breaks.append(err)
            breaks.append(Unsupported(f"graph break in inlined call: {err.reason}", err.hint,
                                      err.stack[:1]))
        else:
            breaks.append(err)
        stack = list(frame.stack)
        nxt = insts[inst.index + 1].offset if inst.index + 1 < len(insts) else None
        if inst.opname in ("CALL", "CALL_FUNCTION_EX"):
            if inst.opname == "CALL":
                n = inst.arg
                args = stack[len(stack) - n:]
                below, top = stack[len(stack) - n - 2], stack[len(stack) - n - 1]
                del stack[len(stack) - n - 2:]
                callee, args = call_operands(below, top, args)
                kwn = frame.kw_names or ()
                kw = dict(zip(kwn, args[len(args) - len(kwn):]))
                args = args[:len(args) - len(kwn)]
                argx = [gen.expr(x) for x in args]
            else:
                kwv = stack.pop() if inst.arg & 1 else {}
                argv = stack.pop()
                callee = stack.pop()
                if stack and stack[-1] is NULL:
                    stack.pop()
                kw = dict(kwv)
                argx = [f"*{gen.expr(argv)}"]
            if getattr(callee, "_wrapped_by_lr_sched", False):
                callee_x = (f"{gen.const(_scheduled_step)}({gen.const(callee._optimizer())}, "
                            f"{gen.const(ctx.backend)})")
            elif _optimizer_step(callee):
                opt = callee.__self__
                opt_x = gen.expr(opt) if _symbolic_method(callee, cap) else gen.const(opt)
                callee_x = f"{gen.const(_compiled_step)}({opt_x}, {gen.const(ctx.backend)})"
            elif isinstance(callee, (contexts.CtxExit, contexts.GenExit)):
                callee_x = gen.expr(callee)     # the end of a with block (contexts.py)
            elif isinstance(callee, SymFunction):
                callee_x = gen.expr(callee)
                callee_x = f"{gen.const(_compile_fn_value)}({callee_x}, {gen.const(ctx)})"
            elif _symbolic_method(callee, cap):
                # a method bound to a symbolic value (a trace tensor, a fresh list):
                # re-bind it to the real value
                callee_x = f"{gen.expr(callee.__self__)}.{callee.__name__}"
            else:
                callee_x = gen.const(_compiled_callee(callee, ctx))
            argx += [f"{k}={gen.expr(v)}" for k, v in kw.items()]
            gen.side_effects()
            gen.emit(f"___r = {callee_x}({', '.join(argx)})")
            if insts[inst.index + 1].opname == "POP_TOP":   # the result is discarded
                _emit_resume(gen, code, frame, stack, [], insts[inst.index + 2].offset, ctx, err)
            else:
                _emit_resume(gen, code, frame, stack, ["___r"], nxt, ctx, err)
        elif inst.opname.startswith(("POP_JUMP", "JUMP_IF")) and cap.is_trace(stack[-1]):
            cond = stack.pop()
            gen.side_effects()
            jump_on = "TRUE" in inst.opname
            keep = inst.opname.startswith("JUMP_IF")   # *_OR_POP keeps the value when jumping
            taken = _resume_line(gen, code, frame, stack + ([cond] if keep else []), [],
                                 inst.target, ctx, err, indent=2)
            fall = _resume_line(gen, code, frame, stack, [], nxt, ctx, err, indent=1)
            gen.emit(f"if bool({gen.expr(cond)}) == {jump_on}:")
            gen.lines.append(taken)
            gen.lines.append(fall)
        else:
            # any other untraceable instruction: the rest of the frame runs eagerly from it
            gen.side_effects()
            _emit_resume(gen, code, frame, stack, [], inst.offset, ctx, err, compiled=False)
    env = cap.shape_env if cap.shape_env is not None and cap.shape_env.hints else None
    if env is not None:   # Note [Shape guards are cache guards] in shapes.py
        shapes.shape_guards(env, [s for _, s, _ in cap.inputs], cap.guards)
    live = {id(v) for v in gen.outputs}
    keep_history = []
    if cap.grad_marks:
        keep_history = [cap.inputs[i][1].expr for i in _written_without_grad(cap)]
        _stop_gradients(cap)
    nodes = _dce(cap.interp.nodes, live)
    used = set(live)
    for n in nodes:
        used.update(id(v) for v in n.ins)
    keep_sym = shapes.symbolic_inputs(cap.inputs) if env is not None and nodes else set()
    picked = [i for i, (v, _, _) in enumerate(cap.inputs) if id(v) in used or i in keep_sym]
    inputs = [cap.inputs[i] for i in picked]
    if cap.written:   # Note [A written buffer is read from a copy] (capture.py)
        nodes = cap.lift_written(nodes, inputs)
        used = {id(v) for v in gen.outputs}.union(id(v) for n in nodes for v in n.ins)
    graph = None
    graph_call = None
    cap.guard_constants([t for t, _ in cap.written])   # written back: Note [Writes into captured tensors]
    if nodes:
        consts = [c for c in cap.interp.consts if id(c) in used]
        cap.guard_constants([c.value for c in consts])
        if env is not None:
            shapes.remap_sources(env, {i: j for j, i in enumerate(picked)})
        graph = Graph([v for v, _, _ in inputs], nodes, list(gen.outputs), consts,
                      name=code.co_name, shape_env=env).check()
        if cap.train is not None:
            graph = cap.train.finish(graph)
        from .backends import GraphModule
        gm = GraphModule(graph)
        example = [r for _, _, r in inputs]
        compiled = ctx.backend(gm, example)
        if cap.train is not None and cap.train.captured_training:
            from .._aot.fullgraph import run_without_grad
            compiled = run_without_grad(compiled)
        gen.scope["___graph"] = compiled
        graph_call = [s.expr for _, s, _ in inputs]
        logging.getLogger("numtorch._dynamo.graph_code").debug("TRACED GRAPH\n%s", graph)
    # outputs no derivative reaches (a no_grad block, a detached running statistic) come
    # out detached, as in eager: a graph run as one region marks every output
    detach = _nondiff_outputs(cap, graph) if graph is not None else ()
    run = gen.build(graph_call, detach, not cap.grad_initial and
                    any(mode for _, mode in cap.grad_marks), keep_history)
    guard = cap.guards.build()
    logging.getLogger("numtorch._dynamo.guards").debug("GUARDS for %s:\n%s", code.co_name,
                                                       guard.text)
    logging.getLogger("numtorch._dynamo.bytecode").debug("GENERATED for %s:\n%s",
                                                         code.co_name, run.text)
    if debug_dir.enabled():
        debug_dir.dump(code, graph, guard, run, breaks, reason)
    _notify("frame", code=code, graph=graph, guard=guard, breaks=breaks, run=run,
            reason=reason)
    return CacheEntry(guard, run, graph, reason)


def _node_modes(cap):
    """Grad mode each captured node ran under (Note [Grad mode in the graph])."""
    modes, mode, marks = [], cap.grad_initial, list(cap.grad_marks)
    for i in range(len(cap.interp.nodes)):
        while marks and marks[0][0] <= i:
            mode = marks.pop(0)[1]
        modes.append(mode)
    return modes


# Note [Writes under no_grad]
# ``with no_grad(): p.add_(u)`` on a tensor that requires grad (a hand-written SGD step)
# changes p's values but not its autograd history: p stays a leaf. A captured graph runs
# with grad enabled when any part of it records (Note [Grad mode in the graph]), and its
# writes into inputs are `copy_to` nodes bound in that mode, so the write would give p the
# copy's grad_fn (p a non-leaf: the next backward never reaches p.grad). The generated code
# therefore keeps the history of each input last written under no_grad across the graph
# call. A later read of the written value with grad enabled in the same graph would need
# eager's per-op modes (its gradient reaches p, not the copy): such a frame runs eagerly.
def _written_without_grad(cap):
    """Positions in ``cap.inputs`` of tensors that require grad whose last write in the
    graph ran under no_grad (Note [Writes under no_grad])."""
    position = {id(v): i for i, (v, _, _) in enumerate(cap.inputs)}
    holds = {}        # id(var) -> input position whose value it is after a no_grad write
    keep = set()
    for node, mode in zip(cap.interp.nodes, _node_modes(cap)):
        if mode and any(id(v) in holds for v in node.ins):
            raise Unsupported("a tensor written under no_grad is read with grad enabled in "
                              "the same graph", "the frame runs eagerly")
        j = node.prim.mutates
        if j is None:
            continue
        i = position.get(id(node.ins[j]), holds.get(id(node.ins[j])))
        if i is None or not cap.inputs[i][2].requires_grad:
            continue
        if mode:
            keep.discard(i)
        else:
            keep.add(i)
            holds.update({id(node.ins[j]): i, **{id(v): i for v in node.outs}})
    return sorted(keep)


def _stop_gradients(cap):
    """Operands of nodes run with grad disabled are read through stop_gradient."""
    from .._ops.shape import stop_gradient
    from .._core.ir import Node
    interp, out, stopped = cap.interp, [], {}
    for node, mode in zip(interp.nodes, _node_modes(cap)):
        if not mode and node.prim is not stop_gradient:
            ins = list(node.ins)
            for j, v in enumerate(ins):
                if j == node.prim.mutates:
                    continue
                s = stopped.get(id(v))
                if s is None:
                    s = stopped[id(v)] = interp.new_var(
                        v.shape if isinstance(v, Var) else tuple(v.value.shape),
                        v.dtype if isinstance(v, Var) else v.value._data.dtype)
                    out.append(Node(stop_gradient, [v], {}, [s], node.where))
                ins[j] = s
            node = Node(node.prim, ins, node.params, node.outs, node.where)
        out.append(node)
    interp.nodes[:] = out


def _nondiff_outputs(cap, graph):
    """Indices of graph outputs no derivative reaches (computed under no_grad only)."""
    diff = {id(v) for v in graph.inputs if id(v) not in cap.lifted} | {id(c) for c in graph.consts
                                            if getattr(c.value, 'requires_grad', False)}
    for node in graph.nodes:
        if not getattr(node.prim, "nondiff", False) and any(id(v) in diff for v in node.ins):
            diff.update(id(v) for v in node.outs)
    return [i for i, o in enumerate(graph.outputs) if isinstance(o, Var) and id(o) not in diff]


def _symbolic_method(fn, cap):
    owner = getattr(fn, "__self__", None)
    if owner is None or isinstance(owner, types.ModuleType):
        return False
    if isinstance(fn, types.MethodType) and user_code(fn.__func__):
        return False
    return cap.is_trace(owner) or type(owner) in (list, dict, set) or \
        id(owner) in cap.source_of or numpy_capture.is_array(owner)


def _compile_fn_value(f, ctx):
    return lambda *a, **k: run_frame(f, a, k, ctx)


def _resume_line(gen, code, frame, stack, extra, target, ctx, err, indent=0, compiled=True):
    orig, _ = origin(code)
    # a resume function's own trailing stack arguments are dead past its prologue
    args, kinds, unbound = gen.resume_args(frame.locals[:len(orig.co_varnames)], stack)
    kinds += ["value"] * len(extra)
    args += extra
    line = err.stack[0][1] if err.stack else code.co_firstlineno
    rcode = resume_code(code, target, kinds, unbound, line)
    caller = gen.const(_resume_caller(rcode, ctx, compiled))
    # a resume function's closure already has the original's layout (cells, then frees)
    closure = gen.closure_expr(code, frame.cells) if orig is code else "C"
    return f"{'    ' * indent}return {caller}(G, {closure}, {', '.join(args)})"


def _emit_resume(gen, code, frame, stack, extra, target, ctx, err, compiled=True):
    gen.lines.append("    " + _resume_line(gen, code, frame, stack, extra, target, ctx, err,
                                           compiled=compiled))


_ = (Var, NULL)
