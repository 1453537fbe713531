"""Shape primitives: broadcast_in_dim, reshape, transpose, slice, pad, concatenate, flip, copy.

All are linear, so each vjp is the transpose of the primitive and each jvp applies the
primitive to the tangent. Batch rules move the batch dimension to the front and extend
the params by one leading dimension; moving a dimension is a free NumPy view.
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive
from ._helpers import T, bdim_size, move_bdim


def _linear_jvp(prim):
    def jvp(primals, tangents, **params):
        return prim.bind(*primals, **params), prim.bind(
            *[t if t is not None else T.zeros_like(x) for x, t in zip(primals, tangents)], **params)
    return jvp


# ---------------------------------------------------------------------------------------
# broadcast_in_dim(x, shape, broadcast_dimensions): operand dim i becomes output dim
# broadcast_dimensions[i]; size-1 operand dims stretch. Every implicit broadcast of the
# ops layer is one of these (JAX's lax.broadcast_in_dim).

def _bid_impl(x, *, shape, broadcast_dimensions):
    if not x.flags.c_contiguous and x.size and 0 in x.strides:
        # A broadcast view itself (a number broadcast for an op, then broadcast again as an
        # unbatched operand under vmap): its distinct elements, each stride-0 dim cut to
        # size 1, are contiguous when what it broadcast was, and the same view results.
        x = x[tuple([_ONE if st == 0 else _ALL for st in x.strides])]
    if x.flags.c_contiguous and x.size:
        # A read-only strided view built directly: np.broadcast_to costs ~8x more, and this
        # runs on every implicit broadcast of the eager autograd path.
        strides = [0] * len(shape)
        for i, d in enumerate(broadcast_dimensions):
            if x.shape[i] == shape[d]:
                strides[d] = x.strides[i]
        out = np.ndarray(shape, x.dtype, x, 0, strides)
        out.setflags(write=False)   # cheaper than `out.flags.writeable = False`
        return out
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


_ONE, _ALL = slice(0, 1), slice(None)


def _bid_shape(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != len(x.shape):
        raise TypeError("broadcast_in_dim: one output dimension per operand dimension")
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim: operand shape {x.shape} incompatible with {shape}")
    return tuple(shape), x.dtype


def _bid_vjp(g, out, x, *, shape, broadcast_dimensions):
    xshape = tuple(x._data.shape)   # the payloads' shapes: no Size objects on this hot path
    # Every implicit broadcast's backward: cached per concrete shapes (symbolic ones could
    # record guards when a lookup compares keys: Note [Comparing shapes]).
    concrete = g._data.__class__ is np.ndarray and x._data.__class__ is np.ndarray
    key = (xshape, shape, broadcast_dimensions)
    axes = _BID_AXES.get(key) if concrete else None
    if axes is None:
        kept = set(broadcast_dimensions)
        summed = [d for d in range(len(shape)) if d not in kept]
        stretched = [d for i, d in enumerate(broadcast_dimensions)
                     if xshape[i] == 1 and shape[d] != 1]
        axes = tuple(sorted(summed + stretched))
        if concrete and len(_BID_AXES) < 4096:
            _BID_AXES[key] = axes
    if axes:
        g = reduce_sum.bind(g, axes=axes)
    return (reshape.bind(g, new_shape=xshape) if tuple(g._data.shape) != xshape else g,)


_BID_AXES: dict = {}


def _bid_batch(values, bdims, *, shape, broadcast_dimensions):
    x = move_bdim(values[0], bdims[0], 0)
    return broadcast_in_dim.bind(x, shape=(x.shape[0],) + tuple(shape),
                                 broadcast_dimensions=(0,) + tuple(d + 1 for d in broadcast_dimensions)), 0


broadcast_in_dim = Primitive("broadcast_in_dim", impl=_bid_impl, shape=_bid_shape,
                             vjp=_bid_vjp, batch=_bid_batch)
broadcast_in_dim.jvp = _linear_jvp(broadcast_in_dim)

# ---------------------------------------------------------------------------------------
# reshape(x, new_shape): a view when NumPy can make one.


def _reshape_shape(x, *, new_shape):
    n = 1
    for s in x.shape:
        n *= s
    m = 1
    for s in new_shape:
        m *= s
    if n != m:
        raise TypeError(f"reshape: cannot reshape {x.shape} into {new_shape}")
    return tuple(new_shape), x.dtype


reshape = Primitive("reshape", impl=lambda x, *, new_shape: x.reshape(new_shape),
                    shape=_reshape_shape,
                    vjp=lambda g, out, x, *, new_shape: (reshape.bind(g, new_shape=tuple(x.shape)),))
reshape.jvp = _linear_jvp(reshape)
reshape.batch = lambda v, d, *, new_shape: (lambda x: (reshape.bind(
    x, new_shape=(x.shape[0],) + tuple(new_shape)), 0))(move_bdim(v[0], d[0], 0))

# ---------------------------------------------------------------------------------------
# transpose(x, permutation): output dim i is operand dim permutation[i].


def _inverse_perm(perm):
    inv = _INVERSE_PERMS.get(perm)   # every transpose's backward (`.T` of each weight)
    if inv is None:
        inv = [0] * len(perm)
        for i, p in enumerate(perm):
            inv[p] = i
        inv = tuple(inv)
        if len(_INVERSE_PERMS) < 4096 and all(p.__class__ is int for p in perm):
            _INVERSE_PERMS[perm] = inv
    return inv


_INVERSE_PERMS: dict = {}   # permutation -> its inverse


def _transpose_batch(values, bdims, *, permutation):
    b = bdims[0]
    perm = (b,) + tuple(p if p < b else p + 1 for p in permutation)
    return transpose.bind(values[0], permutation=perm), 0


transpose = Primitive(
    "transpose", impl=lambda x, *, permutation: x.transpose(permutation),
    shape=lambda x, *, permutation: (tuple(x.shape[p] for p in permutation), x.dtype),
    vjp=lambda g, out, x, *, permutation: (transpose.bind(g, permutation=_inverse_perm(permutation)),),
    batch=_transpose_batch)
transpose.jvp = _linear_jvp(transpose)

# ---------------------------------------------------------------------------------------
# slice(x, start_indices, limit_indices, strides) and its transpose pad(x, value, config).


def _slice_impl(x, *, start_indices, limit_indices, strides):
    return x[tuple(slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_shape(x, *, start_indices, limit_indices, strides):
    return tuple(max(0, -(-(l - s) // st)) for s, l, st in
                 zip(start_indices, limit_indices, strides)), x.dtype


def _slice_vjp(g, out, x, *, start_indices, limit_indices, strides):
    config = []
    for n, s, st, o in zip(x.shape, start_indices, strides, g.shape):
        if o == 0:
            config.append((0, n, 0))
            continue
        last = s + (o - 1) * st
        config.append((s, n - last - 1, st - 1))
    if all(o == 0 for o in g.shape) and g.ndim:
        return (T.zeros_like(x),)
    return (pad.bind(g, padding_value=0.0, config=tuple(config)),)


def _slice_batch(values, bdims, *, start_indices, limit_indices, strides):
    x = move_bdim(values[0], bdims[0], 0)
    return slice_p.bind(x, start_indices=(0,) + tuple(start_indices),
                        limit_indices=(x.shape[0],) + tuple(limit_indices),
                        strides=(1,) + tuple(strides)), 0


slice_p = Primitive("slice", impl=_slice_impl, shape=_slice_shape, vjp=_slice_vjp,
                    batch=_slice_batch)
slice_p.jvp = _linear_jvp(slice_p)


def _pad_out_shape(shape, config):
    return tuple(lo + hi + n + max(0, n - 1) * interior for n, (lo, hi, interior) in zip(shape, config))


def _pad_limit(n, lo, interior):
    """End (exclusive) of the operand's elements in a padded dim (``lo`` when it is empty)."""
    return lo + (n - 1) * (interior + 1) + 1 if n else lo


def _pad_impl(x, *, padding_value, config):
    out = np.full(_pad_out_shape(x.shape, config), padding_value, dtype=x.dtype)
    out[tuple(slice(lo, _pad_limit(n, lo, it), it + 1)
              for n, (lo, hi, it) in zip(x.shape, config))] = x
    return out


def _pad_vjp(g, out, x, *, padding_value, config):
    starts = tuple(lo for lo, hi, it in config)
    limits = tuple(_pad_limit(n, lo, it) for n, (lo, hi, it) in zip(x.shape, config))
    return (slice_p.bind(g, start_indices=starts, limit_indices=limits,
                         strides=tuple(it + 1 for lo, hi, it in config)),)


pad = Primitive("pad", impl=_pad_impl,
                shape=lambda x, *, padding_value, config: (_pad_out_shape(x.shape, config), x.dtype),
                vjp=_pad_vjp)
pad.jvp = lambda p, t, *, padding_value, config: (
    pad.bind(p[0], padding_value=padding_value, config=config),
    pad.bind(t[0], padding_value=0.0, config=config))
pad.batch = lambda v, d, *, padding_value, config: (pad.bind(
    move_bdim(v[0], d[0], 0), padding_value=padding_value, config=((0, 0, 0),) + tuple(config)), 0)

# ---------------------------------------------------------------------------------------
# concatenate(*xs, dim)


def _concat_shape(*xs, dim):
    first = xs[0]
    for x in xs:
        if x.dtype != first.dtype or len(x.shape) != len(first.shape) or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != dim):
            raise TypeError("concatenate: operands must agree except along dim")
    shape = list(first.shape)
    shape[dim] = sum(x.shape[dim] for x in xs)
    return tuple(shape), first.dtype


def _concat_vjp(g, out, *xs, dim):
    cts, start = [], 0
    for x in xs:
        n = x.shape[dim]
        starts = [0] * g.ndim
        limits = list(g.shape)
        starts[dim], limits[dim] = start, start + n
        cts.append(slice_p.bind(g, start_indices=tuple(starts), limit_indices=tuple(limits),
                                strides=(1,) * g.ndim))
        start += n
    return tuple(cts)


def _concat_batch(values, bdims, *, dim):
    size = bdim_size(values, bdims)
    xs = [move_bdim(v, d, 0) if d is not None else
          T.broadcast_to(v.unsqueeze(0), (size,) + tuple(v.shape)) for v, d in zip(values, bdims)]
    return concatenate.bind(*xs, dim=dim + 1), 0


concatenate = Primitive("concatenate", impl=lambda *xs, dim: np.concatenate(xs, axis=dim),
                        shape=_concat_shape, vjp=_concat_vjp, batch=_concat_batch)
concatenate.jvp = _linear_jvp(concatenate)

# ---------------------------------------------------------------------------------------
# flip(x, dims) and copy(x)

# np.flip is a negative-stride view; PyTorch's flip is a copy, and a Tensor that silently
# aliased its input would let ``flip(x)[0] = v`` write into ``x`` behind autograd's back.
flip = Primitive("flip", impl=lambda x, *, dims: np.flip(x, dims).copy(),
                 shape=lambda x, *, dims: (x.shape, x.dtype),
                 vjp=lambda g, out, x, *, dims: (flip.bind(g, dims=dims),))
flip.jvp = _linear_jvp(flip)
flip.batch = lambda v, d, *, dims: (flip.bind(move_bdim(v[0], d[0], 0),
                                              dims=tuple(a + 1 for a in dims)), 0)

copy = Primitive("copy", impl=lambda x: np.array(x, copy=True),
                 shape=lambda x: (x.shape, x.dtype),
                 vjp=lambda g, out, x: (g,),
                 batch=lambda v, d: (copy.bind(v[0]), d[0]))
copy.jvp = _linear_jvp(copy)

from .reduction import reduce_sum  # noqa: E402  (the transpose of broadcast_in_dim)


# Note [What backward reads] (autograd/engine.py): these rules read shapes only.
for _p in (broadcast_in_dim, reshape, transpose, slice_p, pad, concatenate, flip, copy):
    _p.vjp_needs = ()


# ---------------------------------------------------------------------------------------
# Lower rules (Note [Lower rules], _lower.py): where each output element comes from.
# ``idx`` holds C index expressions of the output; ``load(k, index)`` reads operand k.
from ._lower import movement  # noqa: E402


def _flat_index(idx, shape):
    """C expression of the row-major offset of ``idx`` in ``shape``."""
    terms, stride = [], 1
    for i, n in reversed(list(zip(idx, shape))):
        if n != 1:
            terms.append(f"({i})" if stride == 1 else f"({i})*{stride}")
        stride *= n
    return " + ".join(reversed(terms)) or "0"


def _reshape_index(idx, shape, out_shape):
    """Operand index of output element ``idx`` of a reshape from ``shape`` to ``out_shape``."""
    if [n for n in shape if n != 1] == [n for n in out_shape if n != 1]:
        kept = iter([i for i, n in zip(idx, out_shape) if n != 1])   # only size-1 dims move
        return [next(kept) if n != 1 else "0" for n in shape]
    flat, out, stride = f"({_flat_index(idx, out_shape)})", [], 1
    for n in reversed(shape):
        out.append("0" if n == 1 else f"({flat} / {stride} % {n})" if stride > 1 else f"({flat} % {n})")
        stride *= n
    return out[::-1]


def _clamp(i, n):
    return f"({i} < 0 ? 0 : {i} >= {n} ? {n - 1} : {i})" if n > 0 else "0"


def _pad_index(load, idx, shapes, out_shape, *, padding_value, config):
    inside, src = [], []
    for i, n, (lo, hi, it) in zip(idx, shapes[0], config):
        j = f"({i} - {lo})" if lo else i
        if it:
            inside.append(f"{j} % {it + 1} == 0")
            j = f"({j} / {it + 1})"
        inside += [f"{j} >= 0", f"{j} < {n}"]
        src.append(_clamp(j, n))
    return f"(({' && '.join(inside) or '1'}) ? {load(0, src)} : {load.const(padding_value)})"


def _concat_index(load, idx, shapes, out_shape, *, dim):
    expr, start = None, sum(s[dim] for s in shapes)
    for k in reversed(range(len(shapes))):
        start -= shapes[k][dim]
        if shapes[k][dim] == 0:
            continue
        j = list(idx)
        j[dim] = _clamp(f"({idx[dim]} - {start})" if start else idx[dim], shapes[k][dim])
        value = load(k, j)
        expr = value if expr is None else f"({idx[dim]} < {start + shapes[k][dim]} ? {value} : {expr})"
    return expr


def _bid_index(load, idx, shapes, out_shape, *, shape, broadcast_dimensions):
    return load(0, [idx[d] if n == out_shape[d] else "0"
                    for n, d in zip(shapes[0], broadcast_dimensions)])


def _transpose_index(load, idx, shapes, out_shape, *, permutation):
    src = [None] * len(permutation)
    for i, p in enumerate(permutation):
        src[p] = idx[i]
    return load(0, src)


broadcast_in_dim.lower = movement(_bid_index)
reshape.lower = movement(lambda load, idx, shapes, out, *, new_shape: load(
    0, _reshape_index(idx, shapes[0], out)))
transpose.lower = movement(_transpose_index)
slice_p.lower = movement(lambda load, idx, shapes, out, *, start_indices, limit_indices, strides: load(
    0, [f"({s} + {i}*{st})" if st != 1 else f"({s} + {i})" if s else i
        for i, s, st in zip(idx, start_indices, strides)]))
pad.lower = movement(_pad_index)
concatenate.lower = movement(_concat_index)
flip.lower = movement(lambda load, idx, shapes, out, *, dims: load(
    0, [f"({n - 1} - {i})" if d in dims or d - len(out) in dims else i
        for d, (i, n) in enumerate(zip(idx, out))]))
copy.lower = movement(lambda load, idx, shapes, out: load(0, idx))
