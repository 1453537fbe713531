"""Pytrees: nested tuples, lists, dicts and namedtuples of leaves (like torch.utils._pytree).

Transforms flatten their inputs and outputs with these, so that parameters can be passed
as dicts and results returned in the same structure.
"""
from __future__ import annotations

from collections import OrderedDict


class TreeSpec:
    """The structure of a pytree: a node type, its context (keys), and child specs."""

    __slots__ = ("kind", "context", "children", "num_leaves")

    def __init__(self, kind, context, children):
        self.kind, self.context, self.children = kind, context, children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind
                and self.context == other.context and self.children == other.children)

    def __repr__(self):
        if self.kind is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        if self.kind is dict or self.kind is OrderedDict:
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.context, self.children))
            return "{" + inner + "}"
        if self.kind is list:
            return "[" + inner + "]"
        return "(" + inner + ("," if len(self.children) == 1 else "") + ")"


LEAF = TreeSpec(None, None, ())


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node(x):
    """(kind, context, children) for a container, or None for a leaf."""
    t = type(x)
    if t is tuple or t is list:
        return t, None, list(x)
    if isinstance(x, dict):
        keys = list(x.keys())
        return (OrderedDict if isinstance(x, OrderedDict) else dict), tuple(keys), [x[k] for k in keys]
    if _is_namedtuple(x):
        return t, None, list(x)
    return None


# Note [No recursive closures]
# The recursions below are module-level functions with explicit accumulators. A nested
# recursive `def go` refers to itself through its closure cell: a reference cycle that also
# holds every leaf (whole batches of gradients) until the garbage collector runs.

def _flatten_into(x, leaves):
    n = _node(x)
    if n is None:
        leaves.append(x)
        return LEAF
    kind, ctx, children = n
    return TreeSpec(kind, ctx, tuple(_flatten_into(c, leaves) for c in children))


def tree_flatten(tree):
    """Returns (leaves, spec)."""
    leaves = []
    spec = _flatten_into(tree, leaves)
    return leaves, spec


def _build(spec, it):
    if spec.kind is None:
        return next(it)
    children = [_build(c, it) for c in spec.children]
    if spec.kind is dict or spec.kind is OrderedDict:
        return spec.kind(zip(spec.context, children))
    if spec.kind is tuple or spec.kind is list:
        return spec.kind(children)
    return spec.kind(*children)  # namedtuple


def tree_unflatten(leaves, spec):
    """Rebuilds a pytree of structure ``spec`` from ``leaves``."""
    return _build(spec, iter(leaves))


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(fn, tree, *rest):
    leaves, spec = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others)], spec)


def broadcast_prefix(prefix, spec):
    """Expand ``prefix`` (e.g. ``in_dims``) to one entry per leaf of the tree whose
    structure is ``spec`` (from ``tree_flatten``; the tree is not walked again).

    A non-container prefix entry applies to the whole subtree below it. Raises ValueError
    when the structures disagree.
    """
    out = []
    _broadcast_into(prefix, spec, out)
    return out


def _broadcast_into(p, spec, out):
    if not isinstance(p, (tuple, list, dict)):
        out.extend([p] * spec.num_leaves)
        return
    kind = spec.kind
    if kind is None:
        raise ValueError("structure mismatch")
    if isinstance(p, dict):
        if (kind is not dict and kind is not OrderedDict) or set(p.keys()) != set(spec.context):
            raise ValueError("structure mismatch")
        for k, c in zip(spec.context, spec.children):
            _broadcast_into(p[k], c, out)
        return
    if kind is dict or kind is OrderedDict or len(p) != len(spec.children):
        raise ValueError("structure mismatch")
    for pc, c in zip(p, spec.children):
        _broadcast_into(pc, c, out)
