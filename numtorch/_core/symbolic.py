"""Symbolic sizes: a dimension that is a symbol (`Sym`), the guards tracing relied on, and
the run-time binding that makes a traced graph shape-generic.

A `Sym` is an int-like size (PyTorch's SymInt) holding a sympy expression over the
symbols of a `ShapeEnv` and the env itself. Arithmetic on Syms builds expressions;
comparisons answer with a plain bool, decided statically when the algebra can (``s0 == 1``
is False because symbols stand for sizes >= 2) and otherwise by the example sizes the trace
was made with, recording a guard (Note [Guards]). `int(s)` specialises (records ``s == n``)
or, for a dimension marked dynamic, raises `ConstraintViolationError`.

At run time `bind_symbols` reads the symbols' values from the inputs' shapes and checks
the guards; `substitute` turns symbolic params into ints. This module owns the symbolic
algebra and nothing else: it must not import sympy at module import (Note [Lazy sympy])
and must not know any primitive.
"""
from __future__ import annotations

# Note [Lazy sympy]
# sympy costs ~0.35 s to import, more than all of numtorch. It is imported when the first
# symbol is made (`ShapeEnv.create_symbol`), never at `import numtorch`; code that only
# tests ``x.__class__ is Sym`` needs this module, which is light.

_sympy = None


def sympy():
    global _sympy
    if _sympy is None:
        import sympy as sp
        _sympy = sp
    return _sympy


class ConstraintViolationError(RuntimeError):
    """A dimension marked dynamic had to become a constant (PyTorch's ConstraintViolationError)."""


class ShapeGuardError(RuntimeError):
    """Inputs' shapes do not satisfy a graph's shape guards."""


# Note [Guards]
# Tracing with symbolic sizes follows one path through the ops layer; wherever that path
# branched on a relation between sizes (broadcasting asked ``s0 == s1``; reshape needed
# ``s0*s1 % 4 == 0``; code called ``int(s0)``) the answer was taken from the example
# sizes and the relation is recorded as a guard. The graph is valid for exactly the
# inputs that satisfy every guard, so `bind_symbols` checks them before a run and capture
# turns them into cache guards. Relations the algebra decides alone (``s0 == s0``,
# ``s0 != 1`` since a symbol is a size >= 2, ``64*s0 % 32 == 0``) guard nothing. After a
# guard ``s0 == s1`` the env replaces s1 by s0, so later shapes simplify (PyTorch's
# replacements). Every symbol also carries the implicit guard ``s >= 2``: sizes 0 and 1
# specialise when traced, so a graph with a symbol does not apply to those sizes.


class Guard:
    """A recorded relation between sizes (a sympy relational) and the user's file:line."""

    __slots__ = ("expr", "where")

    def __init__(self, expr, where=""):
        self.expr, self.where = expr, where

    def __str__(self):
        return _py(self.expr) + (f"  # {self.where}" if self.where else "")

    __repr__ = __str__

    def holds(self, values: dict) -> bool:
        sp = sympy()
        return bool(self.expr.xreplace({sp.Symbol(k, integer=True, positive=True): sp.Integer(v)
                                        for k, v in values.items()}))


def _guard_key(rel):
    """A relation up to rearrangement: ``a == b`` and ``b == a`` are one guard."""
    sp = sympy()
    if isinstance(rel, (sp.Eq, sp.Ne)):
        d = sp.expand(rel.lhs - rel.rhs)
        return type(rel), d if not d.could_extract_minus_sign() else -d
    return rel


def _py(expr) -> str:
    """A relational as Python (``s0 == s1``, ``Mod(6*s0, 4) == 0``)."""
    sp = sympy()
    ops = {sp.Eq: "==", sp.Ne: "!=", sp.Lt: "<", sp.Le: "<=", sp.Gt: ">", sp.Ge: ">="}
    op = ops.get(type(expr))
    return f"{expr.lhs} {op} {expr.rhs}" if op else str(expr)


class ShapeEnv:
    """The symbols of one trace: their example sizes, sources, guards and replacements.

    ``duck_shape`` (PyTorch's default, Note [Duck sizing]) gives input dimensions of equal
    size one symbol.
    """

    def __init__(self, duck_shape=True, where=lambda: ""):
        self.duck_shape = duck_shape
        self.where = where       # () -> the user's file:line, for guards and errors
        self.hints = {}          # sympy Symbol -> example size
        self.sources = {}        # sympy Symbol -> [(input index, dim), ...]
        self.marked = set()      # symbols that must not specialise (mark_dynamic)
        self.guards = []         # [Guard], in the order tracing relied on them
        self.replacements = {}   # sympy Symbol -> canonical expression
        self._owner = None       # the interpreter tracing with these symbols
        self._by_size = {}
        self._seen = set()

    @property
    def owner(self):
        return self._owner

    @owner.setter
    def owner(self, interp):
        # `bind` looks for symbols in params only while an owner is on the stack
        # (Note [Symbolic params]); `pop` takes the owner off this list again.
        from .primitive import SYMBOLIC_OWNERS
        self._owner = interp
        if interp is not None and interp not in SYMBOLIC_OWNERS:
            SYMBOLIC_OWNERS.append(interp)

    # -- symbols ------------------------------------------------------------------------
    def create_symbol(self, size: int, source, marked=False):
        """A size for dimension ``source`` = (input index, dim): 0 and 1 stay ints."""
        if size in (0, 1):
            if marked:
                raise ConstraintViolationError(
                    f"dimension {source[1]} of input {source[0]} was marked dynamic but has size "
                    f"{size}; sizes 0 and 1 always specialise (mark a size >= 2)")
            return size
        sp = sympy()
        s = self._by_size.get(size) if self.duck_shape else None
        if s is None:
            s = sp.Symbol(f"s{len(self.hints)}", integer=True, positive=True)
            self.hints[s] = size
            self.sources[s] = []
            if self.duck_shape:
                self._by_size[size] = s
        self.sources[s].append(tuple(source))
        if marked:
            self.marked.add(s)
        return Sym(s, self)

    def symbols(self):
        """{name: [(input index, dim), ...]} in creation order."""
        return {str(s): list(src) for s, src in self.sources.items()}

    # -- deciding relations ---------------------------------------------------------------
    def simplify(self, expr):
        return expr.xreplace(self.replacements) if self.replacements else expr

    def _static(self, rel):
        """True/False when the algebra decides ``rel`` for all sizes >= 2, else None."""
        sp = sympy()
        rel = self.simplify(rel)
        if rel in (sp.true, sp.false):
            return bool(rel)
        diff = sp.expand(rel.lhs - rel.rhs)
        if diff.free_symbols:
            # a symbol stands for a size >= 2: write s = u + 2 with u >= 0 and ask sympy
            shift = {s: sp.Symbol(f"_u{s}", integer=True, nonnegative=True) + 2
                     for s in diff.free_symbols}
            diff = sp.expand(diff.xreplace(shift))
        if isinstance(rel, (sp.Eq, sp.Ne)):
            z = diff.is_zero
            return None if z is None else (z if isinstance(rel, sp.Eq) else not z)
        sign = {sp.Lt: diff.is_negative, sp.Le: diff.is_nonpositive,
                sp.Gt: diff.is_positive, sp.Ge: diff.is_nonnegative}[type(rel)]
        if sign is None:
            neg = {sp.Lt: diff.is_nonnegative, sp.Le: diff.is_positive,
                   sp.Gt: diff.is_nonpositive, sp.Ge: diff.is_negative}[type(rel)]
            return None if neg is None else not neg
        return sign

    def hint(self, expr):
        sp = sympy()
        return self.simplify(expr).xreplace({s: sp.Integer(v) for s, v in self.hints.items()})

    def evaluate(self, rel) -> bool:
        """Decide a relation between sizes, recording a guard when the example decided it."""
        known = self._static(rel)
        if known is not None:
            return known
        value = bool(self.hint(rel))
        sp = sympy()
        guard = self.simplify(rel) if value else self.simplify(rel).negated
        if isinstance(guard, (sp.Eq, sp.Ne)) and guard.lhs.could_extract_minus_sign():
            guard = type(guard)(-guard.lhs, -guard.rhs)   # -s0 == -4 reads as s0 == 4
        key = _guard_key(guard)
        if key not in self._seen:
            self._seen.add(key)
            self.guards.append(Guard(guard, self.where()))
            if isinstance(guard, sp.Eq):
                self._replace(guard)
        return value

    def _replace(self, eq):
        # From s_new == <expr of older symbols> on, write s_new as that expression, so
        # later shapes simplify (PyTorch's replacements). The newest symbol is solved for
        # when the relation is linear in it with a unit coefficient (exact in integers); a
        # floor() the relation pins (2*floor(s0/2) == s0 from a reshape) is replaced too.
        sp = sympy()
        diff = sp.expand(eq.lhs - eq.rhs)
        syms = sorted(diff.free_symbols, key=lambda s: -int(str(s)[1:]))
        for atom in syms + sorted(diff.atoms(sp.floor), key=str):
            c = diff.coeff(atom)
            rest = diff - c * atom
            if c == 0 or atom.is_Symbol and (c not in (1, -1) or atom in rest.free_symbols):
                continue
            if not atom.is_Symbol and atom in rest.atoms(sp.floor):
                continue
            if atom in self.marked and not rest.free_symbols:
                return   # a marked symbol is never replaced by a constant
            self.replacements[atom] = sp.expand(-rest / c)
            self.replacements = {k: sp.expand(v.xreplace(self.replacements))
                                 for k, v in self.replacements.items()}
            return

    def specialize_float(self, expr):
        """The example value of a floating expression, guarding the sizes it reads."""
        for s in sorted(expr.free_symbols, key=str):
            self.specialize(s, "float()")
        return float(self.hint(expr))

    def specialize(self, expr, what="int()"):
        """The example value of ``expr``, recording ``expr == value`` (PyTorch's guard_int)."""
        sp = sympy()
        expr = self.simplify(expr)
        value = int(self.hint(expr))
        marked = [s for s in expr.free_symbols if s in self.marked]
        if marked:
            src = self.sources[marked[0]][0]
            raise ConstraintViolationError(
                f"{what} needs the concrete value of size {expr}, but {marked[0]} (dimension "
                f"{src[1]} of input {src[0]}) was marked dynamic; the graph would only hold for "
                f"{expr} == {value}. Operations whose output size depends on a symbolic size "
                f"through a concrete int cannot stay dynamic: keep the size symbolic (use "
                f"tensor.size()/shape arithmetic) or mark the dimension static. ({self.where()})")
        self.evaluate(sp.Eq(expr, value))
        return value


# Note [Duck sizing]
# PyTorch's default (`use_duck_shape`): input dimensions of equal example size share one
# symbol, so ``f(x, y)`` traced on two 8-row tensors gets ``x: f32[s0, 3], y: f32[s0, 3]``
# and the graph applies only where the two sizes stay equal (checked by `bind_symbols`
# from the symbol's two sources). It avoids guards (and keeps graphs smaller) in the
# common case that equal sizes are equal by construction. ``duck_shape=False`` gives each
# dimension its own symbol; broadcasting two of them then records ``s0 == s1``.


def _wrap(expr, env, floating=False):
    if expr.is_Number:
        return float(expr) if floating else int(expr)
    return Sym(expr, env, floating)


def _expr(x):
    c = x.__class__
    if c is Sym:
        return x.expr
    if isinstance(x, int):
        return sympy().Integer(x)
    if isinstance(x, float):
        return sympy().Float(x)
    return None


def _floating(a, b):
    return a.floating or (b.__class__ is not Sym and isinstance(b, float))


class Sym:
    """A symbolic size (PyTorch's SymInt, or SymFloat when ``floating``): a sympy expression
    over the env's symbols.

    Arithmetic with numbers and Syms gives Syms (or numbers when constant); ``/`` and float
    operands give floating Syms (``sum / s0`` in ``mean``); comparisons give bools and may
    record guards (Note [Guards]); ``int()`` specialises.
    """

    __slots__ = ("expr", "env", "floating")

    def __init__(self, expr, env, floating=False):
        self.expr, self.env, self.floating = env.simplify(expr), env, floating

    def __repr__(self):
        return str(self.expr)

    def __hash__(self):
        return hash(self.expr)

    # -- arithmetic ---------------------------------------------------------------------
    def _bin(self, other, fn):
        o = _expr(other)
        if o is None:
            return NotImplemented
        return _wrap(fn(self.expr, o), self.env, _floating(self, other))

    def __add__(self, o): return self._bin(o, lambda a, b: a + b)
    def __radd__(self, o): return self._bin(o, lambda a, b: b + a)
    def __sub__(self, o): return self._bin(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._bin(o, lambda a, b: b - a)
    def __mul__(self, o): return self._bin(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._bin(o, lambda a, b: b * a)
    def __floordiv__(self, o): return self._bin(o, self._floordiv)
    def __rfloordiv__(self, o): return self._bin(o, lambda a, b: self._floordiv(b, a))
    def __truediv__(self, o): return self._div(o, lambda a, b: a / b)
    def __rtruediv__(self, o): return self._div(o, lambda a, b: b / a)
    def __mod__(self, o): return self._bin(o, lambda a, b: sympy().Mod(a, b))
    def __rmod__(self, o): return self._bin(o, lambda a, b: sympy().Mod(b, a))

    def __neg__(self):
        return _wrap(-self.expr, self.env, self.floating)

    def __pos__(self):
        return self

    def _floordiv(self, a, b):
        sp = sympy()
        q = a / b
        # exact when divisible for all sizes (64*s0 // 32 is 2*s0) or under a recorded
        # divisibility guard (reshape(-1, 4) of s0*s1 elements is s0*s1/4), else floor()
        if not (a.is_integer and b.is_integer):
            return sp.floor(q)
        m = self.env.simplify(sp.Mod(a, b))
        exact = m == 0 or _guard_key(sp.Eq(m, 0)) in self.env._seen
        return sp.expand(q) if exact else sp.floor(q)

    def _div(self, other, fn):
        o = _expr(other)
        if o is None:
            return NotImplemented
        return _wrap(fn(self.expr, o), self.env, True)   # true division is a float

    # -- comparisons (Note [Guards]) ----------------------------------------------------
    def _rel(self, other, rel):
        o = _expr(other)
        if o is None:
            return NotImplemented
        return self.env.evaluate(rel(self.expr, o))

    def __eq__(self, o): return self._rel(o, lambda a, b: sympy().Eq(a, b))
    def __ne__(self, o): return self._rel(o, lambda a, b: sympy().Ne(a, b))
    def __lt__(self, o): return self._rel(o, lambda a, b: sympy().Lt(a, b))
    def __le__(self, o): return self._rel(o, lambda a, b: sympy().Le(a, b))
    def __gt__(self, o): return self._rel(o, lambda a, b: sympy().Gt(a, b))
    def __ge__(self, o): return self._rel(o, lambda a, b: sympy().Ge(a, b))

    def __bool__(self):
        return self != 0

    # -- leaving the symbolic world ---------------------------------------------------------
    def __int__(self):
        return self.env.specialize(self.expr)

    def __index__(self):
        return self.env.specialize(self.expr, "an operation taking a concrete size")

    def __float__(self):
        if self.floating:
            return float(self.env.specialize_float(self.expr))
        return float(self.env.specialize(self.expr, "float()"))

    def __array__(self, dtype=None, copy=None):
        # NumPy code computing with a size (a pooling divisor table, np.arange(n)) sees
        # the example value; the graph is guarded to it (or, if marked, this raises)
        import numpy as np
        v = self.__float__() if self.floating else self.env.specialize(self.expr, "NumPy code")
        return np.asarray(v, dtype=dtype)

    @property
    def node(self):   # the symbolic expression (PyTorch: SymInt.node)
        return self.expr


def same_shape(a, b) -> bool:
    """Whether shapes ``a`` and ``b`` are equal for every value of their symbols.

    Records no guard: for code that only takes a shortcut when shapes are equal (a
    reshape to the same shape is the identity), "not provably equal" means "take the
    general path", which is right either way.
    """
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.__class__ is Sym or y.__class__ is Sym:
            sp = sympy()
            env = x.env if x.__class__ is Sym else y.env
            if env._static(sp.Eq(_expr(x), _expr(y))) is not True:
                return False
        elif x != y:
            return False
    return True


def as_size(s):
    """A size argument as an int, or as itself when it is a `Sym` (int() would specialise)."""
    return s if s.__class__ is Sym else int(s)


def is_symbolic(x) -> bool:
    """Whether ``x`` (a size, shape, or nested tuple/list/dict of them) holds a `Sym`."""
    c = x.__class__
    if c is Sym:
        return True
    if c is tuple or c is list:
        return any(is_symbolic(v) for v in x)
    if c is dict:
        return any(is_symbolic(v) for v in x.values())
    return False


def symbol_owner(params: dict):
    """The interpreter owning a `Sym` among ``params`` (Note [Symbolic params]), else None."""
    for v in params.values():
        c = v.__class__
        if c is Sym:
            return v.env.owner
        if c is tuple or c is list:
            for s in v:
                if s.__class__ is Sym:
                    return s.env.owner
    return None


# ---------------------------------------------------------------------------------------
# Running a graph with symbols

def bind_symbols(graph, args) -> dict:
    """{symbol name: int} read from the flat inputs' shapes; checks the shape guards.

    Raises `ShapeGuardError` naming the guard (or the input dimension) that fails.
    """
    key = tuple(tuple(a.shape) for a in args)
    cache = graph.__dict__.setdefault("_symbol_cache", {})
    values = cache.get(key)
    if values is not None:
        return values
    for i, (v, a) in enumerate(zip(graph.inputs, args)):
        if len(v.shape) != len(a.shape) or any(
                n.__class__ is int and n != m for n, m in zip(v.shape, a.shape)):
            raise ShapeGuardError(f"graph: input {i} ({v.name}) has shape {list(a.shape)} but the "
                                  f"graph was traced for {v.type} (only symbolic sizes may vary)")
    values = {}
    for name, sources in graph.symbols.items():
        for i, d in sources:
            n = args[i].shape[d]
            if name not in values:
                if n < 2:
                    raise ShapeGuardError(
                        f"graph: dimension {d} of input {i} has size {n}, but the graph was traced "
                        f"with a symbolic size {name} there (sizes 0 and 1 specialise; retrace)")
                values[name] = n
            elif values[name] != n:
                j, e = sources[0]
                raise ShapeGuardError(
                    f"graph: dimension {d} of input {i} has size {n} but dimension {e} of input "
                    f"{j} has size {values[name]}; both were traced as {name} (duck sizing: "
                    f"equal sizes share a symbol)")
    for g in graph.shape_guards:
        if not g.holds(values):
            raise ShapeGuardError(f"graph: shape guard {g} failed for {values}")
    if len(cache) > 64:
        cache.clear()
    cache[key] = values
    return values


def substitute(value, env: dict):
    """``value`` (a param: size, tuple, list, dict, other) with each `Sym` evaluated in ``env``."""
    c = value.__class__
    if c is Sym:
        sp = sympy()
        v = value.expr.xreplace({s: sp.Integer(env[str(s)]) for s in value.expr.free_symbols})
        return float(v) if value.floating else int(v)
    if c is tuple or c is list:
        return c(substitute(v, env) for v in value)
    if c is dict:
        return {k: substitute(v, env) for k, v in value.items()}
    return value


# Note [Running a symbolic graph]
# A graph with symbols runs as its *concrete copy* for the inputs' sizes: `bind_symbols`
# reads the symbols' values from the shapes and checks the guards, then every Var's shape
# and every param is substituted (sympy, once per distinct set of sizes; cached on the
# graph). The copy is an ordinary graph of ints, so the fast runner, the region primitive
# and every transform handle it unchanged and nothing downstream needs to know symbols.


def concrete_graph(graph, args):
    """The copy of symbolic ``graph`` with the sizes of flat inputs ``args`` (cached)."""
    values = bind_symbols(graph, args)
    cache = graph.__dict__.setdefault("_concrete_cache", {})
    key = tuple(values.values())
    g = cache.get(key)
    if g is None:
        from .ir import Const, Graph, Node, Var
        table = {}

        def var(v):
            if isinstance(v, Const):
                return v
            w = table.get(id(v))
            if w is None:
                w = table[id(v)] = Var(v.name, substitute(v.shape, values), v.dtype)
            return w
        inputs = [var(v) for v in graph.inputs]
        nodes = [Node(n.prim, [var(v) for v in n.ins],
                      substitute(n.params, values) if is_symbolic(n.params) else n.params,
                      [var(v) for v in n.outs], n.where) for n in graph.nodes]
        outputs = [var(o) if isinstance(o, Var) else o for o in graph.outputs]
        g = Graph(inputs, nodes, outputs, graph.consts, graph.in_tree, graph.out_tree, graph.name)
        if len(cache) > 64:
            cache.clear()
        cache[key] = g
    return g
