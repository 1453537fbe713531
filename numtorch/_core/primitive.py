"""Primitives and `bind`: the one dispatch point of numtorch.

A `Primitive` is one object carrying all of its rules (Note [Primitive rules]). `bind`
sends a call to the innermost active interpreter that owns one of the arguments
(Note [Interpreter stack]); with none, the NumPy `impl` runs. This module must not know
any particular primitive or transform: those register themselves.
"""
from __future__ import annotations

from numpy import asarray, ndarray

from .symbolic import symbol_owner

# Note [Primitive rules]
# Every primitive carries, in one place:
#   impl(*arrays, **params)            NumPy evaluation; returns an ndarray (or a tuple)
#   shape(*avals, **params)            abstract evaluation: (shape, np_dtype) or a tuple of
#                                      them; avals have .shape and .dtype (NumPy dtype)
#   jvp(primals, tangents, **params)   -> (outs, out_tangents); a tangent of None is zero
#   vjp(cts, out, *primals, **params)  -> one cotangent (or None) per primal; `out` is the
#                                      forward result, `cts` the output cotangent(s)
#   batch(values, bdims, **params)     -> (outs, out_bdims); vmap without loops
#   lower                              code generation for the compile backend (filled by
#                                      numtorch._inductor); None until a backend fills it
# Rules are written with numtorch ops, never raw NumPy, so that each rule is itself
# differentiable and batchable: grad(grad(f)), vmap(grad(f)) and jacfwd(jacrev(f)) need
# nothing more. Params are hashable Python values, so graphs can be compared and cached.
# `nondiff` marks primitives whose outputs carry no derivative (comparisons, argmax,
# random draws): their jvp/vjp are "zero" by construction, not missing.
#
# Note [Effects]
# A primitive may write one of its operands (`mutates`: the operand's index, PyTorch's
# `Tensor(a!)`; `prims.copy_to` is the one today). It is otherwise an ordinary pure
# primitive: its result is the operand's new value, and impl, shape, jvp, vjp and batch
# compute that value without writing anything. Only two places give the write its meaning:
# the op layer, which makes the written Tensor hold the result (`store`, below; a buffer
# write in eager mode, a payload rebind under transforms), and a graph being run, which
# does the same for each such node, so running `make_graph(f)` mutates f's inputs as f did.
# `discharge(*args, **params)` computes the new value without the write (JAX's discharge
# rule); functionalize uses it, so its graphs keep only the final copies back into inputs.

RULES = ("impl", "shape", "jvp", "vjp", "batch")


class Primitive:
    """A strict primitive operation with its rules attached (see Note [Primitive rules])."""

    __slots__ = ("name", "impl", "shape", "jvp", "vjp", "batch", "multiple_results",
                 "nondiff", "mutates", "discharge", "ufunc", "vjp_needs", "vjp_context", "lower",
                 "draws", "node_plans", "__weakref__")

    def __init__(self, name, *, impl=None, shape=None, jvp=None, vjp=None, batch=None,
                 multiple_results=False, nondiff=False, register=True):
        self.name = name
        self.impl, self.shape, self.jvp, self.vjp, self.batch = impl, shape, jvp, vjp, batch
        self.multiple_results = multiple_results
        self.nondiff = nondiff
        self.mutates = None     # index of the operand it writes (Note [Effects])
        self.discharge = None   # its value without the write, for a primitive that mutates
        self.ufunc = None   # the NumPy ufunc when impl is one (in-place ops write `out=`)
        self.vjp_needs = None   # Note [What backward reads] (autograd/engine.py)
        self.vjp_context = None  # per-call backward state: autograd.Function's ctx (engine.record)
        self.lower = None       # codegen rule of the compile backend (numtorch._inductor)
        self.draws = False      # a random draw: bound at the top of the stack (Note [Interpreter stack])
        self.node_plans = {}    # autograd's per-node plans, by inputs needing gradients (engine._plan)
        if register:
            ALL_PRIMITIVES[name] = self

    def __repr__(self):
        return f"prims.{self.name}"

    # bind(*args, **params): the module's `bind`, attached below it (one frame per bind)

    def missing_rules(self):
        missing = [r for r in RULES if getattr(self, r) is None
                   and not (self.nondiff and r in ("jvp", "vjp"))]
        if self.mutates is not None and self.discharge is None:
            missing.append("discharge")
        return missing


ALL_PRIMITIVES: dict[str, Primitive] = {}


# ---------------------------------------------------------------------------------------
# Note [Interpreter stack]
# Interpreters form a stack. The eval interpreter (NumPy) is the implicit bottom; eager
# autograd is an implicit grad level 0 just above it, active for tensors that require
# grad while grad mode is on (PyTorch's tape, kept on the Tensor itself). Each transform
# call (grad, jvp, vmap, trace) pushes a fresh interpreter with the next level number.
# A tracer records the interpreter that made it, so `bind` finds the innermost (highest
# level) interpreter among its arguments and lets it handle the call; that interpreter
# unwraps its own tracers and binds again, which reaches the next one down. Because the
# identity is the interpreter *object*, two nested grads never confuse their tracers
# (perturbation confusion), and a tracer whose interpreter has been popped is detected as
# escaped. Primitives without tensor arguments (creation) go to the top of the dynamic
# stack instead (`process_nullary`), and so do random draws whatever their state operand
# (`process_draw`, Note [Random primitives] in _prims/random.py), so vmap sees `randn` and
# applies its `randomness` policy.

class Interpreter:
    """Base class of transform interpreters; `process` handles one primitive call."""

    __slots__ = ("level", "active", "__weakref__")

    claims_constants = False   # Note [Capture claims constants]

    def process(self, prim, args, params):  # pragma: no cover - abstract
        raise NotImplementedError

    def process_nullary(self, prim, params):
        # Most transforms leave argument-less primitives (creation) to the level below.
        return bind_below(self.level, prim, params)

    def process_draw(self, prim, args, params):
        # ... and random draws (Note [Random primitives] in _prims/random.py).
        return bind_below(self.level, prim, params, args, draw=True)

    def read_rng(self, generator):
        """The tensor holding ``generator``'s state in this transform, or None (only traces
        hold one: Note [Random state as a value] in _prims/random.py)."""
        return None

    def write_rng(self, generator, state):  # pragma: no cover - only traces make state tracers
        raise TypeError(f"{type(self).__name__} holds no random state")


STACK: list[Interpreter] = []
SYMBOLIC_OWNERS: list[Interpreter] = []   # traces with symbolic sizes (Note [Symbolic params])


class Tracer:
    """A payload of a Tensor inside a transform, made by the interpreter ``interp``.

    Most tracers stand for a lower-level tensor, returned by ``inner()``; shape, dtype and
    concrete values come from it unless a subclass says otherwise (vmap hides the batch
    dimension; a graph variable has no value).
    """

    __slots__ = ("interp",)

    def inner(self):
        raise NotImplementedError

    @property
    def shape(self):
        return self.inner()._data.shape

    @property
    def dtype(self):
        return self.inner()._data.dtype

    @property
    def requires_grad(self):
        return self.inner().requires_grad

    def concrete(self, what):
        return self.inner()._concrete(what)

    def stand_in(self):
        """This payload over memory-free stand-ins, or None to keep it (Note [Saved values])."""
        return None


class EscapedTracerError(RuntimeError):
    pass


def push(interp: Interpreter) -> Interpreter:
    interp.level = len(STACK) + 1
    interp.active = True
    STACK.append(interp)
    return interp


def pop(interp: Interpreter) -> None:
    top = STACK.pop()
    assert top is interp, "interpreter stack corrupted"
    interp.active = False
    if SYMBOLIC_OWNERS and interp in SYMBOLIC_OWNERS:
        SYMBOLIC_OWNERS.remove(interp)


def _escaped(interp):
    raise EscapedTracerError(
        f"A tensor created inside a {type(interp).__name__.replace('Interpreter', '')} "
        "transform was used after that transform returned (an escaped tracer). Return it "
        "from the transformed function instead of storing it in a global or attribute.")


# Hooks installed by the modules that own them (kept as module globals for speed):
#   eval_bind(prim, args, params)   NumPy or meta evaluation   (_core/tensor.py)
#   autograd_bind(prim, args, params) eager tape recording      (autograd/engine.py)
#   record_node(prim, saved, edges, out, sum_to, params)  a node for a result the ops layer's
#                                   eager fast paths computed (Note [Broadcasting
#                                   operands under autograd])   (autograd/engine.py)
#   grad_enabled()                                              (autograd/grad_mode.py)
#   store(tensor, value)            make a Tensor hold a primitive's written value
#                                   (Note [Effects])                 (_ops/inplace.py)
eval_bind = None
wrap = None   # wrap(ndarray) -> Tensor                         (_core/tensor.py)
eager_eval = None   # eval_bind as installed (Note [Binding on eager arrays])
autograd_bind = None
record_node = None
store = None
grad_mode = [True]


# Note [Symbolic params]
# A primitive applied to concrete tensors (a captured constant, a parameter) with a
# symbolic size among its params — broadcasting a constant to ``(s0, 4)`` — cannot run in
# NumPy: its result has a symbolic shape, so it belongs in the graph being traced. `bind`
# hands it to the interpreter that owns the symbol (the trace that made it). Only binds
# with no tracer argument while such a trace is running pay for the check (ShapeEnv.owner
# registers the trace in SYMBOLIC_OWNERS, `pop` removes it); eager code and the lower
# levels of grad and vmap never do.

# Note [Capture claims constants]
# A trace records the primitives bound on its tracers; one bound only on concrete tensors
# (a module's parameter broadcast for its bias add) runs eagerly, and its result becomes a
# captured constant. For compile that is wrong: parameters and buffers change between
# calls (an optimizer writes them in place), and a result computed from a parameter that
# requires grad would carry a stale grad_fn. Capture's trace (numtorch._dynamo) therefore
# claims every bind with tensor operands while it is the innermost interpreter: the
# concrete tensors become the graph's captured constants and the op a node, as PyTorch's
# capture lifts parameters. Binds on 0-d tensors that do not require grad and were made
# inside the function (the scalars Python numbers become, broadcast for `x + 1`) still
# fold, as before: they are fresh values, not state. A 0-d buffer from outside is state
# (BatchNorm's ``num_batches_tracked.add_(1)``): folding it ran the write at capture time,
# so a first compiled call counted each capture attempt too; the eager in-place fast path
# (`_ufunc_inplace` in _ops/methods.py) steps aside under a capture for the same reason.
# Only binds under a non-empty stack pay for the check.

def bind(prim, *args, **params):
    """Apply ``prim`` to Tensor ``args``: the one dispatch point (Note [Interpreter stack])."""
    if not STACK and eval_bind is eager_eval and len(args) == 2:   # Note [Binding on eager arrays]
        a, b = args
        x, y = a._data, b._data
        if x.__class__ is ndarray and y.__class__ is ndarray and not prim.multiple_results:
            if (a._requires_grad or b._requires_grad) and grad_mode[0] and not prim.nondiff:
                return autograd_bind(prim, args, params)
            out = prim.impl(x, y, **params) if params else prim.impl(x, y)
            return wrap(out if out.__class__ is ndarray else asarray(out))
    elif not STACK and eval_bind is eager_eval and len(args) == 1:
        a = args[0]
        x = a._data
        if x.__class__ is ndarray and not prim.multiple_results:
            if a._requires_grad and grad_mode[0] and not prim.nondiff:
                return autograd_bind(prim, args, params)
            out = prim.impl(x, **params)
            return wrap(out if out.__class__ is ndarray else asarray(out))
    if STACK and prim.draws:
        return STACK[-1].process_draw(prim, args, params)   # Note [Interpreter stack]
    top = None
    recording = False
    for a in args:
        d = a._data
        if d.__class__ is not ndarray:
            interp = getattr(d, "interp", None)
            if interp is not None and (top is None or interp.level > top.level):
                top = interp
        if a._requires_grad:
            recording = True
    if top is None and STACK:
        if params and SYMBOLIC_OWNERS:
            top = symbol_owner(params)   # Note [Symbolic params]
        if top is None and args and STACK[-1].claims_constants and any(
                a._requires_grad or a._data.ndim or not STACK[-1].made_here(a) for a in args):
            top = STACK[-1]              # Note [Capture claims constants]
    if top is not None:
        if not top.active:
            _escaped(top)
        return top.process(prim, args, params)
    if recording and grad_mode[0] and not prim.nondiff:
        return autograd_bind(prim, args, params)
    if not args and STACK:
        return STACK[-1].process_nullary(prim, params)
    return eval_bind(prim, args, params)


# Note [Binding on eager arrays]
# With no transform active and one or two NumPy operands (every eager op that reaches a
# primitive, and every op of a backward rule run by `.backward()`), `bind` decides at once
# what the general path below decides for them: eager autograd records the call if an
# operand requires grad (grad mode on, a differentiable primitive), else the NumPy impl
# runs and its result is wrapped, as `eval_bind` does, without eval_bind's frame and
# without the interpreter search. A single-result primitive only; the rest (several
# results, meta or tracer payloads, other arities) takes the general path, and so does
# every call while `eval_bind` is not the eager one (tests count the primitive calls
# that reach NumPy by replacing it).

# `prim.bind(x)` is `bind(prim, x)` itself, not a method calling it: rules bind primitives
# this way everywhere, so under vmap(grad(...)) a Python frame per bind is saved.
Primitive.bind = bind


def bind_below(level, prim, params, args=(), draw=False):
    """Bind with only interpreters below ``level`` in view (argument-less primitives and
    random draws, which every level sees in turn)."""
    for interp in reversed(STACK):
        if interp.level < level:
            if draw:
                return interp.process_draw(prim, args, params)
            return interp.process_nullary(prim, params)
    return eval_bind(prim, args, params)
