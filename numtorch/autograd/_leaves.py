"""What backward does at the leaves: AccumulateGrad (tensor hooks, ``.grad``, post-accumulate
hooks) and the callbacks queued for the end of a backward pass.

The engine (engine.py) decides when a leaf is finished; this module owns what finishing
it means. It must not walk the graph.
"""
from __future__ import annotations

from numpy import ndarray

from .._core.tensor import wrap_array
from .._ops.math import add as _ops_add


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return _ops_add(a, b)


def _run_hooks(hooks, g):
    for h in hooks:
        r = h(g)
        if r is not None:
            g = r
    return g


# Note [Post-accumulate-grad hooks]
# ``Tensor.register_post_accumulate_grad_hook(hook)`` (PyTorch 2.1) calls ``hook(leaf)``
# once the leaf's ``.grad`` holds this backward's gradient. DistributedDataParallel needs
# this *during* backward, to start a bucket's all-reduce while earlier layers still
# compute, so a leaf that has such hooks is finalized as soon as the last node with an edge
# to it has run (`_last_uses`), not at the end; nodes run newest first (Note [Execution
# order]), so the last layer's gradients really come first. A leaf's tensor hooks
# (``register_hook``) run at the same moment, before its ``.grad`` is written: PyTorch's
# AccumulateGrad node runs as soon as it is ready, so in ``y.backward()`` the last layer's
# weight hook fires before the hooks of earlier layers' activations. Other leaves keep the
# end-of-backward path, and while no leaf hook is registered anywhere (`_leaf_hooks_live`)
# the engine does no extra work at all: with one, it lists every reachable node first
# (`_walk`) to find each hooked leaf's last consumer. ``queue_callback`` is PyTorch's
# ``Variable._execution_engine.queue_callback``: DDP uses it to wait for its all-reduces
# before ``backward()`` returns.

_leaf_hooks_live = [0]   # leaf hook registrations (tensor and post-accumulate) not yet removed
_queued_callbacks = []              # run once when the current backward() finishes


def queue_callback(fn):
    """Calls ``fn()`` once the backward pass now running has finished accumulating."""
    _queued_callbacks.append(fn)


def _run_queued_callbacks():
    try:
        while _queued_callbacks:
            _queued_callbacks.pop(0)()
    finally:
        _queued_callbacks.clear()


def _finish_leaves(leaves, leaf_grads, create_graph, owned):
    for leaf in leaves:
        entry = leaf_grads.pop(id(leaf), None)
        if entry is not None:
            _accumulate(leaf, entry[1], create_graph, owned)


def _accumulate(leaf, g, create_graph, owned):
    """AccumulateGrad: tensor hooks, then ``.grad += g``, then post-accumulate hooks."""
    if leaf._hooks:
        g = _run_hooks(leaf._hooks, g)
    if not create_graph:
        g = _owned_grad(g.detach(), owned)
    leaf._grad = g if leaf._grad is None else _add(leaf._grad, g)
    post = leaf.__dict__.get("_post_accumulate_hooks")
    if post:
        for h in tuple(post):
            h(leaf)


def _owned_grad(g, owned):
    # Like PyTorch's AccumulateGrad, a leaf's .grad gets its own writable memory: a
    # broadcast (read-only, zero-stride) cotangent or one sharing memory with another
    # leaf's is copied, so p.grad.zero_() / .mul_() (zero_grad, clip_grad_norm_) work
    # and stay local.
    d = g._data
    if d.__class__ is ndarray:
        root = d
        while isinstance(root.base, ndarray):
            root = root.base
        if not d.flags.writeable or not d.flags.c_contiguous or id(root) in owned:
            g = wrap_array(d.copy())
            root = g._data
        owned.add(id(root))
    return g
