"""Marks on functions that steer capture: allow_in_graph, disallow_in_graph, disable.

Kept apart from the interpreter so that user-facing decorators import nothing heavy.
"""
from __future__ import annotations

import functools

_allowed: dict = {}        # id(fn) -> fn   (called for real on trace tensors, not inlined)
_disallowed: dict = {}     # id(fn) -> fn   (always a graph break)


def allow_in_graph(fn):
    """Put ``fn`` into the graph as a call on tensors instead of inlining its Python
    (PyTorch: ``torch._dynamo.allow_in_graph``). Returns ``fn``."""
    if not callable(fn):
        raise TypeError(f"allow_in_graph expects a callable, got {type(fn).__name__}")
    _allowed[id(fn)] = fn
    _disallowed.pop(id(fn), None)
    return fn


def disallow_in_graph(fn):
    """Make every call to ``fn`` a graph break (PyTorch: ``disallow_in_graph``)."""
    if not callable(fn):
        raise TypeError(f"disallow_in_graph expects a callable, got {type(fn).__name__}")
    _disallowed[id(fn)] = fn
    _allowed.pop(id(fn), None)
    return fn


def is_allowed(fn):
    return id(fn) in _allowed and _allowed[id(fn)] is fn


def is_disallowed(fn):
    return (id(fn) in _disallowed and _disallowed[id(fn)] is fn) or \
        getattr(fn, "_numtorch_dynamo_disable", False)


def graph_break():
    """Force a graph break here when compiled; does nothing when run eagerly."""


def original_of(fn):
    """The user function behind a compiled wrapper, or None."""
    return getattr(fn, "_numtorch_dynamo_orig", None)


_ = functools
