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


def tree_flatten(tree):
    """Returns (leaves, spec)."""
    leaves = []

    def go(x):
        n = _node(x)
        if n is None:
            leaves.append(x)
            return LEAF
        kind, ctx, children = n
        return TreeSpec(kind, ctx, tuple(go(c) for c in children))
    spec = go(tree)
    return leaves, spec


def tree_unflatten(leaves, spec):
    """Rebuilds a pytree of structure ``spec`` from ``leaves``."""
    it = iter(leaves)

    def go(s):
        if s.kind is None:
            return next(it)
        children = [go(c) for c in s.children]
        if s.kind is dict or s.kind is OrderedDict:
            return s.kind(zip(s.context, children))
        if s.kind is tuple or s.kind is list:
            return s.kind(children)
        return s.kind(*children)  # namedtuple
    return go(spec)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(fn, tree, *rest):
    leaves, spec = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others)], spec)


def broadcast_prefix(prefix, tree, is_leaf_prefix=lambda x: not isinstance(x, (tuple, list, dict))):
    """Expand ``prefix`` (e.g. ``in_dims``) to one entry per leaf of ``tree``.

    A non-container prefix entry applies to the whole subtree below it. Raises ValueError
    when the structures disagree.
    """
    out = []

    def go(p, t):
        if is_leaf_prefix(p):
            out.extend([p] * len(tree_leaves(t)))
            return
        n = _node(t)
        if n is None:
            raise ValueError("structure mismatch")
        kind, ctx, children = n
        if isinstance(p, dict):
            if not isinstance(t, dict) or set(p.keys()) != set(t.keys()):
                raise ValueError("structure mismatch")
            for k in t.keys():
                go(p[k], t[k])
            return
        if not isinstance(t, (tuple, list)) or isinstance(t, dict) or len(p) != len(children):
            raise ValueError("structure mismatch")
        for pc, tc in zip(p, children):
            go(pc, tc)
    go(prefix, tree)
    return out
