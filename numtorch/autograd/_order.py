"""Which nodes a backward pass runs, and in what order: the walks that `autograd.grad`'s
`inputs` and the post-accumulate-grad hooks need before the engine's loop (engine.py).

This module reads the graph (`Node.next_edges`, `Node.seq`); it must not run rules or
write gradients.
"""
from __future__ import annotations

import operator

from .engine import Node


# Note [Execution order]
# Backward runs each node once, after every consumer of its outputs has sent its cotangent.
# A node's `seq` is its creation number, and a node can only consume tensors that existed
# when it was made, so every consumer of a node has a larger `seq` than the node: running
# the nodes that hold cotangents in decreasing `seq` is a valid order, and it is PyTorch's
# (its engine's ready queue runs the most recently created node first). The engine keeps
# those nodes in a heap keyed by `-seq`: a node enters it when its first cotangent arrives
# and leaves it when it runs, so `.backward()` walks no graph beforehand (PyTorch counts
# dependencies in a walk first; with the order given by `seq`, no count is needed: when
# the heap's top is node n, every node that could still send n a cotangent has a larger
# `seq` and has already run). autograd.grad's `inputs` need one walk from the roots
# (`_reaching`): it marks the nodes that can reach a target; the others are never run, and
# no cotangent is computed for an edge into them (their lazy cotangents stay uncalled, Note
# [Lazy cotangents]). A target's own node receives its cotangent (captured as the result)
# but runs only if it leads to another target, as in PyTorch: `autograd.grad(loss, h)` for
# an intermediate `h` neither computes h's inputs' gradients nor frees h's node. The walk stops at nodes older than every target: a node made before
# all target nodes cannot lead to one. That keeps `autograd.grad(create_graph=True)` in a
# loop (MAML's inner steps) from re-walking every earlier step's graph on each call; a
# leaf target has no creation number, so with one the whole graph is walked.

def _reaching(root_nodes, targets):
    """(the nodes reachable from ``root_nodes`` that are or can reach one of ``targets``
    (edges): those that receive cotangents, the target nodes that reach no other target:
    those that only capture theirs) for autograd.grad (Note [Execution order])."""
    floor = -1
    target_ids = {id(e[0]) for e in targets}
    if all(e[0].__class__ is Node for e in targets):
        floor = min(e[0].seq for e in targets)
    reaching, capture_only = set(), set()
    for node in sorted(_walk(root_nodes, floor), key=_seq_of):   # children before parents
        for e in node.next_edges:
            if e is not None and (id(e[0]) in target_ids or e[0] in reaching):
                reaching.add(node)
                break
        else:
            if id(node) in target_ids:
                reaching.add(node)
                capture_only.add(node)
    return reaching, capture_only


def _walk(root_nodes, floor=-1):
    """Every node reachable from ``root_nodes`` through nodes created at or after ``floor``."""
    seen, stack = set(root_nodes), list(root_nodes)
    while stack:
        for e in stack.pop().next_edges:
            if e is not None:
                child = e[0]
                if child.__class__ is Node and child not in seen and child.seq >= floor:
                    seen.add(child)
                    stack.append(child)
    return seen


_seq_of = operator.attrgetter("seq")


def _last_uses(order):
    """{node in ``order``: [leaves with hooks whose last consumer in ``order`` it is]}."""
    last = {}
    for node in order:
        for e in node.next_edges:
            if e is not None and e[0].__class__ is not Node and (
                    e[0]._hooks or e[0].__dict__.get("_post_accumulate_hooks")):
                last[id(e[0])] = (node, e[0])
    early = {}
    for node, leaf in last.values():
        early.setdefault(node, []).append(leaf)
    return early
