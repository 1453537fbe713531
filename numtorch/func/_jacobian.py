"""Jacobians and Hessians: ``jacrev`` (vmap over vjp), ``jacfwd`` (vmap over jvp), ``hessian``.

Output layout follows PyTorch: for an output leaf of shape O and an input leaf of shape I,
the Jacobian leaf has shape O + I; with several outputs/inputs the result nests
``outputs -> argnums -> input leaves``.
"""
from __future__ import annotations

import functools

from .._core.pytree import tree_flatten, tree_unflatten
from .._core.tensor import Tensor
from ._grad import _check_argnums, vjp
from ._jvp import jvp
from ._vmap import vmap


def _basis(numels, dtype_like):
    """Rows of the identity split into one chunk per leaf (the seeds of all directions)."""
    from .._ops.creation import eye
    total = sum(numels)
    e = eye(total, dtype=dtype_like.dtype)
    out, start = [], 0
    for n in numels:
        out.append(e[:, start:start + n])
        start += n
    return out


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """Computes the Jacobian of ``func`` w.r.t. ``argnums`` by reverse mode (vmap over vjp)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), "jacrev")

        def f_of_diff(*diff):
            full = list(args)
            for n, d in zip(nums, diff):
                full[n] = d
            return func(*full, **kwargs)
        diff = tuple(args[n] for n in nums)
        res = vjp(f_of_diff, *diff, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        out_leaves, out_spec = tree_flatten(out)
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jacrev(f, ...)(*args): Expected f(*args) to return only "
                                   f"tensors, got unsupported type {type(o)}")
        numels = [o.numel() for o in out_leaves]
        basis = _basis(numels, out_leaves[0]) if out_leaves else []
        seeds = [b.reshape((b.shape[0],) + tuple(o.shape)) for b, o in zip(basis, out_leaves)]

        def one_row(*cts):
            return vjp_fn(tree_unflatten(list(cts), out_spec))
        rows = vmap(one_row, chunk_size=chunk_size)(*seeds)   # per argnum: pytree of (total, *in)
        in_trees = rows
        results = []   # one entry per output leaf
        start = 0
        for o, n in zip(out_leaves, numels):
            per_arg = []
            for tree in in_trees:
                leaves, spec = tree_flatten(tree)
                per_arg.append(tree_unflatten(
                    [l[start:start + n].reshape(tuple(o.shape) + tuple(l.shape[1:])) for l in leaves], spec))
            results.append(per_arg[0] if not isinstance(argnums, tuple) else tuple(per_arg))
            start += n
        jac = tree_unflatten(results, out_spec)
        if has_aux:
            return jac, res[2]
        return jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Computes the Jacobian of ``func`` w.r.t. ``argnums`` by forward mode (vmap over jvp)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[n] for n in nums)
        in_leaves, in_spec = tree_flatten(diff)
        for x in in_leaves:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"jacfwd(f, ...)(*args): Expected argnums inputs to be tensors, "
                                   f"got {type(x)}")
        numels = [x.numel() for x in in_leaves]
        basis = _basis(numels, in_leaves[0])
        seeds = [b.reshape((b.shape[0],) + tuple(x.shape)) for b, x in zip(basis, in_leaves)]

        def f_of_diff(*d):
            full = list(args)
            for n, v in zip(nums, d):
                full[n] = v
            return func(*full, **kwargs)

        def push_forward(*tangent_leaves):
            tangents = tree_unflatten(list(tangent_leaves), in_spec)
            r = jvp(f_of_diff, diff, tangents, has_aux=has_aux)
            return (r[1], r[2]) if has_aux else r[1]
        outs = vmap(push_forward, randomness=randomness,
                    out_dims=(-1, None) if has_aux else -1)(*seeds)
        if has_aux:
            outs, aux = outs
        out_leaves, out_spec = tree_flatten(outs)
        results = []
        for o in out_leaves:   # o: (*out_shape, total)
            oshape = tuple(o.shape[:-1])
            per_arg, start = [], 0
            leaves_for_arg = []
            for x, n in zip(in_leaves, numels):
                leaves_for_arg.append(o[..., start:start + n].reshape(oshape + tuple(x.shape)))
                start += n
            per_arg_tree = tree_unflatten(leaves_for_arg, in_spec)
            results.append(per_arg_tree[0] if not isinstance(argnums, tuple) else per_arg_tree)
        jac = tree_unflatten(results, out_spec)
        if has_aux:
            return jac, aux
        return jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of ``func`` w.r.t. ``argnums``: ``jacfwd(jacrev(func))``."""
    return jacfwd(jacrev(func, argnums), argnums)

