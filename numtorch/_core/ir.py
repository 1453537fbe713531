"""The graph IR: a typed list of primitive applications in A-normal form.

A `Graph` prints as runnable Python source (``t3 = prims.mul(t1, t2)  # f32[4, 3]``, with
the user's file:line), type-checks itself with the primitives' shape rules, and runs by
binding its primitives, so running a graph under a transform transforms it. Made by the
trace interpreter (``numtorch.func.make_graph``); consumed by functionalize and, later,
compile.
"""
from __future__ import annotations

import numpy as np

from .primitive import bind

_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "b8", "complex64": "c64",
          "complex128": "c128"}


def type_str(shape, dtype) -> str:
    return f"{_SHORT.get(np.dtype(dtype).name, np.dtype(dtype).name)}{list(shape)}"


class Var:
    """A graph value: a name and an abstract type (shape, NumPy dtype)."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), np.dtype(dtype)

    def __repr__(self):
        return self.name

    @property
    def type(self):
        return type_str(self.shape, self.dtype)


class Const:
    """A tensor captured by the graph (a closed-over value, not an input)."""

    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __repr__(self):
        return self.name


class Node:
    """``outs = prim(*ins, **params)``; ``prim`` None with ``effect='copy_'`` writes ins[1] into ins[0]."""

    __slots__ = ("prim", "ins", "params", "outs", "where", "effect")

    def __init__(self, prim, ins, params, outs, where="", effect=None):
        self.prim, self.ins, self.params, self.outs = prim, tuple(ins), params, tuple(outs)
        self.where, self.effect = where, effect


def _fmt_param(v):
    if isinstance(v, np.dtype):
        return f"np.{v.name}" if v.name != "bool" else "np.bool_"
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return repr(v)


class Graph:
    """A traced program: inputs, nodes, outputs (plus captured constants)."""

    def __init__(self, inputs, nodes, outputs, consts, in_tree=None, out_tree=None, name="forward"):
        self.inputs, self.nodes, self.outputs, self.consts = inputs, nodes, outputs, consts
        self.in_tree, self.out_tree, self.name = in_tree, out_tree, name

    # -- printing -----------------------------------------------------------------------
    def python_code(self) -> str:
        """The graph as Python source defining ``forward`` (runnable with ``prims`` in scope)."""
        args = ", ".join(f"{v.name}: '{v.type}'" for v in self.inputs)
        lines = [f"def {self.name}({args}):"]
        for node in self.nodes:
            if node.effect == "copy_":
                code = f"    {node.ins[0].name}.copy_({node.ins[1].name})"
            else:
                ins = [v.name for v in node.ins]
                ins += [f"{k}={_fmt_param(p)}" for k, p in node.params.items()]
                lhs = ", ".join(v.name for v in node.outs) + ("," if len(node.outs) == 1 and
                                                              node.prim.multiple_results else "")
                code = f"    {lhs} = prims.{node.prim.name}({', '.join(ins)})"
                types = ", ".join(v.type for v in node.outs)
                code += f"  # {types}"
            if node.where:
                code += f"{'  #' if node.effect else ''} {node.where}"
            lines.append(code)
        outs = ", ".join(o.name if isinstance(o, (Var, Const)) else repr(o) for o in self.outputs)
        lines.append(f"    return ({outs},)" if len(self.outputs) == 1 else f"    return ({outs})")
        return "\n".join(lines)

    def __str__(self):
        return self.python_code()

    __repr__ = __str__

    def print_readable(self):
        print(self.python_code())

    # -- checking -----------------------------------------------------------------------
    def check(self):
        """Type-check every node against its primitive's shape rule; raises TypeError."""
        from .meta import MetaArray
        defined = {id(v) for v in self.inputs} | {id(c) for c in self.consts}
        for node in self.nodes:
            for v in node.ins:
                if id(v) not in defined:
                    raise TypeError(f"graph: {v} used before definition")
            if node.effect:
                continue
            avals = [MetaArray(v.shape, v.dtype) if isinstance(v, Var) else
                     MetaArray(v.value.shape, v.value._data.dtype) for v in node.ins]
            res = node.prim.shape(*avals, **node.params)
            res = res if node.prim.multiple_results else (res,)
            for (shape, dtype), v in zip(res, node.outs):
                if tuple(shape) != v.shape or np.dtype(dtype) != v.dtype:
                    raise TypeError(f"graph: {v.name} = {node.prim.name}(...) has type "
                                    f"{type_str(shape, dtype)} but is annotated {v.type}")
            defined.update(id(v) for v in node.outs)
        return self

    # -- running ------------------------------------------------------------------------
    def __call__(self, *args):
        """Run the graph on flat tensor inputs by binding its primitives."""
        if len(args) != len(self.inputs):
            raise TypeError(f"graph expects {len(self.inputs)} inputs, got {len(args)}")
        env = {id(v): a for v, a in zip(self.inputs, args)}
        for c in self.consts:
            env[id(c)] = c.value
        for node in self.nodes:
            ins = [env[id(v)] for v in node.ins]
            if node.effect == "copy_":
                ins[0].copy_(ins[1])
                continue
            out = bind(node.prim, *ins, **node.params)
            outs = out if node.prim.multiple_results else (out,)
            for v, o in zip(node.outs, outs):
                env[id(v)] = o
        return tuple(env[id(o)] if isinstance(o, (Var, Const)) else o for o in self.outputs)

    def primitives(self):
        """The names of the primitives the graph applies, in order."""
        return [n.prim.name if n.prim is not None else n.effect for n in self.nodes]

