"""Dynamic shapes in capture: which input dimensions are symbolic, and the code for symbols.

The IR already has symbolic sizes (``_core/symbolic.py``: `Sym`, `ShapeEnv`, shape guards).
This file decides, per tensor read from a source during capture, which of its dimensions
become symbols (Note [Which dims are dynamic]), and turns symbols back into Python: the
expression computing a `Sym` from the inputs' shapes (for the generated code that returns
sizes or hands them to a resume function), and the cache guards a symbolic graph is valid
under (Note [Shape guards are cache guards]).

Must not interpret bytecode or import sympy before the first symbol exists.
"""
from __future__ import annotations

from .._core.symbolic import ShapeEnv, Sym, sympy
from . import config

# Note [Which dims are dynamic]
# PyTorch's rules, per tensor source (``L['x']``):
# - ``mark_static(t, d)`` wins: that dim is static whatever else is asked;
# - ``mark_dynamic(t, d)``: symbolic and *marked* (specialising it raises
#   ConstraintViolationError), under any ``dynamic=`` setting;
# - ``maybe_mark_dynamic(t, d)``: symbolic, not marked (it may specialise);
# - ``compile(dynamic=True)`` (or ``config.assume_static_by_default = False``): every dim;
# - ``compile(dynamic=False)``: no other dim;
# - ``dynamic=None`` (the default), *automatic dynamic*: the frame remembers the sizes it
#   was captured with per source (`FrameState`); a capture that sees a different size in a
#   dim than the one remembered (a recompile caused by the size guard) makes that dim
#   symbolic from then on (``config.automatic_dynamic_shapes``). So sizes 4, 5, 6, 7 compile
#   twice: static for 4, symbolic from 5 on.
# Sizes 0 and 1 always specialise (the ShapeEnv returns plain ints for them), so a graph
# with a symbol at a dim does not cover sizes 0 and 1 there; its guard ``>= 2`` says so.


class FrameState:
    """What earlier captures of one code object saw: per source, the sizes (None where a
    dim became dynamic)."""

    __slots__ = ("sizes",)

    def __init__(self):
        self.sizes = {}

    def dynamic_dims(self, expr, shape):
        """Dims of the tensor at source ``expr`` that automatic dynamic makes symbolic."""
        prev = self.sizes.get(expr)
        if prev is None or len(prev) != len(shape):
            self.sizes[expr] = list(shape)
            return set()
        if config.automatic_dynamic_shapes:
            for d, n in enumerate(shape):
                if prev[d] is not None and prev[d] != n:
                    prev[d] = None
        return {d for d, n in enumerate(prev) if n is None}


def dims_for(t, expr, dynamic, state):
    """(symbolic dims, marked dims) for tensor ``t`` read from source ``expr``."""
    marked = set(getattr(t, "_dynamo_dynamic_indices", ()))
    weak = set(getattr(t, "_dynamo_weak_dynamic_indices", ()))   # maybe_mark_dynamic
    static = set(getattr(t, "_dynamo_static_indices", ()))
    if dynamic is True or (dynamic is None and not config.assume_static_by_default):
        dims = set(range(t.dim()))
    elif dynamic is False:
        dims = set()
    else:
        dims = state.dynamic_dims(expr, tuple(t.shape)) if state is not None else set()
    return (dims | marked | weak) - static, marked - static


def new_env(interp):
    from ..func._trace import user_location
    env = ShapeEnv(where=user_location)
    env.owner = interp
    return env


def symbolic_shape(env, shape, index, dims, marked):
    """The shape of capture input ``index`` with ``dims`` as symbols (0/1 stay ints)."""
    return tuple(env.create_symbol(n, (index, d), marked=d in marked) if d in dims else n
                 for d, n in enumerate(shape))


# Note [Shape guards are cache guards]
# A graph with symbols is valid for the sizes satisfying: each symbol's dims are >= 2 (sizes
# 0 and 1 specialised), all dims sharing a symbol are equal (duck sizing), and every
# relation tracing relied on (``graph.shape_guards``: ``s0 > 2`` from user code, ``s0 == 4``
# from an int() that specialised, divisibility from a reshape). They become guards of the
# cache entry, written over the inputs' sources (``L[0].shape[0] >= 2``), so a violating
# call recompiles instead of running a graph that does not apply.


def _symbol_exprs(env, input_sources):
    """{sympy Symbol: the Python expression reading its size}, from its first source."""
    sp = sympy()
    out = {}
    for s, srcs in env.sources.items():
        i, d = srcs[0]
        out[s] = sp.Symbol(f"{input_sources[i].expr}.shape[{d}]")
    return out


def python_expr(sym, env, input_sources):
    """Python source computing the value of `Sym` ``sym`` from the inputs (``math`` in scope)."""
    from sympy.printing.pycode import pycode
    e = env.simplify(sym.expr).xreplace(_symbol_exprs(env, input_sources))
    text = pycode(e, fully_qualified_modules=True)
    return f"float({text})" if sym.floating else f"int({text})"


def shape_guards(env, input_sources, guards):
    """Add the cache guards of ``env``'s symbols to GuardSet ``guards`` (Note above)."""
    from sympy.printing.pycode import pycode
    names = _symbol_exprs(env, input_sources)
    for s, srcs in env.sources.items():
        first = str(names[s])
        words0 = f"{input_sources[srcs[0][0]].words}.size()[{srcs[0][1]}]"
        guards.add(f"{first} >= 2", f"{words0} >= 2 (it is the symbolic size {s}; sizes 0 "
                   f"and 1 specialise)")
        for i, d in srcs[1:]:
            guards.add(f"{input_sources[i].expr}.shape[{d}] == {first}",
                       f"{input_sources[i].words}.size()[{d}] == {words0} (both are {s})")
    for g in env.guards:
        text = pycode(g.expr.xreplace(names), fully_qualified_modules=True)
        guards.add(text, f"{g}  (a relation between sizes the graph relies on)")


def remap_sources(env, keep):
    """Renumber the symbols' sources to the graph's inputs: ``keep`` maps capture input
    index → graph input index; sources of dropped inputs go."""
    for s, srcs in env.sources.items():
        env.sources[s] = [(keep[i], d) for i, d in srcs if i in keep]


def symbolic_inputs(inputs):
    """Indices of capture inputs whose shape holds a symbol (kept in the graph even when
    unused: the graph reads its symbols' values from them)."""
    return {i for i, (v, _, _) in enumerate(inputs) if any(n.__class__ is Sym for n in v.shape)}
