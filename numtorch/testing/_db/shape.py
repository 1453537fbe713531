"""OpInfo entries: shape and view ops, joining and splitting, flips, rolls, diagonals."""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import ALL_REAL, SAME, OpInfo, SampleInput, make, register

_DTYPES = ALL_REAL


def _samples(*specs):
    """Samples from ``(shape, args, kwargs)`` triples (kwargs optional)."""
    def gen(dtype, requires_grad):
        for spec in specs:
            shape, args = spec[0], spec[1]
            kwargs = spec[2] if len(spec) > 2 else {}
            yield SampleInput(make(shape, dtype, requires_grad), args, kwargs)
    return gen


def _shape_op(name, ref, *specs, **kw):
    kw.setdefault("dtypes", _DTYPES)
    return OpInfo(name, ref=ref, result_dtype=SAME, sample_inputs=_samples(*specs), **kw)


def _reshape_ref(x, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return np.reshape(x, shape)


def _unflatten_ref(x, dim, sizes):
    d = dim % x.ndim
    sizes = list(sizes)
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[d] // -int(np.prod(sizes))
    return x.reshape(x.shape[:d] + tuple(sizes) + x.shape[d + 1:])


def _squeeze_ref(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = tuple(d % max(x.ndim, 1) for d in (dim if isinstance(dim, tuple) else (dim,)))
    return np.squeeze(x, tuple(d for d in dims if x.ndim and x.shape[d] == 1))


def _flatten_ref(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:])


def _expand_ref(x, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    off = len(sizes) - x.ndim
    target = tuple(x.shape[i - off] if s == -1 else s for i, s in enumerate(sizes))
    return np.broadcast_to(x, target)


def _permute_ref(x, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    return np.transpose(x, dims)


def _t_ref(x):
    return x.T if x.ndim == 2 else x


register(
    _shape_op("reshape", _reshape_ref, ((2, 3), ((3, 2),)), ((2, 3), ((-1,),)), ((6,), ((2, -1),)),
              ((), ((1, 1),)), ((2, 3), ((6, 1),)), ((0, 3), ((3, 0),))),
    _shape_op("view", _reshape_ref, ((2, 3), ((3, 2),)), ((2, 3), (-1,)), ((6,), (2, -1)),
              ((), (1,)), ((0, 3), ((3, 0),)), op=lambda x, *s: x.view(*s), inplace=None),
    _shape_op("flatten", _flatten_ref, ((2, 3, 2), ()), ((2, 3, 2), (1,)), ((2, 3, 2), (0, 1)),
              ((), ()), ((4,), ())),
    _shape_op("ravel", np.ravel, ((2, 3), ()), ((), ())),
    _shape_op("unflatten", _unflatten_ref, ((2, 6), (1, (2, 3))), ((6, 2), (0, (-1, 2))),
              ((2, 6), (-1, (3, 2)))),
    _shape_op("squeeze", _squeeze_ref, ((2, 1, 3, 1), ()), ((2, 1, 3), (1,)), ((2, 1, 3), (0,)),
              ((1, 3, 1), ((0, 2),)), ((), ()), ((1,), (-1,))),
    _shape_op("unsqueeze", lambda x, d: np.expand_dims(x, d), ((2, 3), (0,)), ((2, 3), (-1,)),
              ((2, 3), (1,)), ((), (0,))),
    _shape_op("permute", _permute_ref, ((2, 3, 4), ((2, 0, 1),)), ((2, 3, 4), ((1, 0, 2),)),
              ((2, 3), ((-1, 0),)), ((), ((),))),
    _shape_op("transpose", lambda x, a, b: np.swapaxes(x, a, b) if x.ndim else x,
              ((2, 3, 4), (0, 2)), ((2, 3), (-1, -2)), ((2, 3), (1, 1)), ((), (0, -1)),
              ((0, 3), (0, 1)), aliases=("swapaxes", "swapdims")),
    _shape_op("t", _t_ref, ((2, 3), ()), ((4,), ()), ((), ())),
    _shape_op("adjoint", lambda x: np.swapaxes(x, -1, -2), ((2, 3), ()), ((2, 3, 4), ())),
    _shape_op("movedim", lambda x, s, d: np.moveaxis(x, s, d) if x.ndim else x, ((2, 3, 4), (0, 2)),
              ((2, 3, 4), ((0, 1), (2, 0))), ((2, 3), (-1, 0)), ((), (0, -1)), ((0, 2), (0, 1)),
              aliases=("moveaxis",)),
    _shape_op("expand", _expand_ref, ((3, 1), (3, 4)), ((3, 1), (2, 3, -1)), ((), ((2, 2),)),
              ((1,), (-1,)), op=lambda x, *s: x.expand(*s), inplace=None),
    _shape_op("broadcast_to", lambda x, s: np.broadcast_to(x, s), ((3, 1), ((3, 4),)),
              ((), ((2,),)), ((1, 3), ((2, 2, 3),))),
    _shape_op("narrow", lambda x, d, s, n: np.take(x, range(s % x.shape[d], s % x.shape[d] + n), d),
              ((4, 3), (0, 1, 2)), ((4, 3), (-1, 0, 2)), ((4, 3), (1, -2, 1))),
    _shape_op("select", lambda x, d, i: np.take(x, i, d), ((4, 3), (0, 1)), ((4, 3), (-1, -1)),
              ((2, 3, 4), (1, 2))),
    _shape_op("flip", lambda x, d: np.flip(x, d) if x.ndim else x.copy(), ((2, 3), ((0,),)),
              ((2, 3, 2), ((0, 2),)), ((2, 3), ((-1,),)), ((), ((),)), ((), ((0,),)), ((), ((-1,),)),
              ((0, 2), ((0,),))),
    _shape_op("fliplr", np.fliplr, ((2, 3), ())),
    _shape_op("flipud", np.flipud, ((2, 3), ()), ((4,), ())),
    _shape_op("roll", lambda x, s, d=None: np.roll(x, s, d), ((2, 3), (1, 1)), ((2, 3), (-1, 0)),
              ((2, 3), (4,)), ((2, 3), ((1, 2), (0, 1))), ((), (1,)), ((0, 2), (1, 0))),
    _shape_op("tile", np.tile, ((2, 3), ((2, 1),)), ((3,), ((2, 2),)), ((2, 3), ((2,),))),
    _shape_op("repeat", lambda x, *s: np.tile(x, s), ((2, 3), (2, 1)), ((3,), (2, 2)), ((), (3,)),
              op=lambda x, *s: x.repeat(*s), inplace=None),
    _shape_op("repeat_interleave", lambda x, r, dim=None: np.repeat(x, r, dim),
              ((2, 3), (2,)), ((2, 3), (2,), dict(dim=1)), ((2, 3), (3,), dict(dim=0))),
    _shape_op("clone", np.copy, ((2, 3), ()), ((), ()), ((0, 2), ())),
    _shape_op("detach", np.copy, ((2, 3), ()), ((), ()), supports_grad=False, inplace=None),
    _shape_op("diagonal", lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2),
              ((3, 4), ()), ((3, 4), (1,)), ((3, 4), (-1,)), ((2, 3, 4), (0, 1, 2)),
              ((3, 3), (5,))),
    _shape_op("diag", lambda x, k=0: np.diag(x, k), ((3,), ()), ((3,), (1,)), ((3, 4), ()),
              ((3, 4), (-1,))),
    _shape_op("diagflat", lambda x, k=0: np.diagflat(x, k), ((3,), ()), ((2, 2), (1,))),
    _shape_op("tril", lambda x, k=0: np.tril(x, k), ((3, 4), ()), ((3, 4), (1,)), ((2, 3, 3), (-1,))),
    _shape_op("triu", lambda x, k=0: np.triu(x, k), ((3, 4), ()), ((3, 4), (1,)), ((2, 3, 3), (-1,))),
    _shape_op("atleast_1d", np.atleast_1d, ((), ()), ((3,), ()), ((2, 3), ())),
    _shape_op("atleast_2d", np.atleast_2d, ((), ()), ((3,), ()), ((2, 3), ())),
    _shape_op("atleast_3d", np.atleast_3d, ((), ()), ((3,), ()), ((2, 3), ()), ((2, 3, 4), ())),
)


def _noncontiguous_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad, noncontiguous=True))
    yield SampleInput(make((2, 3), dtype, requires_grad), name="contiguous")


register(OpInfo("contiguous", op=lambda x: x.contiguous(), ref=np.ascontiguousarray,
                dtypes=_DTYPES, result_dtype=SAME, sample_inputs=_noncontiguous_samples,
                check=lambda s, out: out.is_contiguous()))


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    i = np.arange(x.shape[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., r, c] = x
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


register(_shape_op("diag_embed", _diag_embed_ref, ((3,), ()), ((2, 3), (1,)), ((2, 3), (-1,)),
                   ((2, 3), (0, 0, 2))))


# ---------------------------------------------------------------------------------------
# View-likes taking another tensor


def _like_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad), (make((3, 2), dtype),))
    yield SampleInput(make((6,), dtype, requires_grad), (make((1, 6), dtype),))


def _expand_as_samples(dtype, requires_grad):
    yield SampleInput(make((3, 1), dtype, requires_grad), (make((2, 3, 4), dtype),))
    yield SampleInput(make((), dtype, requires_grad), (make((2,), dtype),))


register(
    OpInfo("view_as", op=lambda x, o: x.view_as(o), ref=lambda x, o: x.reshape(o.shape),
           dtypes=_DTYPES, result_dtype=SAME, sample_inputs=_like_samples),
    OpInfo("reshape_as", op=lambda x, o: x.reshape_as(o), ref=lambda x, o: x.reshape(o.shape),
           dtypes=_DTYPES, result_dtype=SAME, sample_inputs=_like_samples),
    OpInfo("expand_as", op=lambda x, o: x.expand_as(o), ref=lambda x, o: np.broadcast_to(x, o.shape),
           dtypes=_DTYPES, result_dtype=SAME, sample_inputs=_expand_as_samples),
)


# ---------------------------------------------------------------------------------------
# Joining: cat/stack families take a list of tensors


def _list_samples(shapes_and_kwargs):
    def gen(dtype, requires_grad):
        for shapes, kwargs in shapes_and_kwargs:
            yield SampleInput([make(s, dtype, requires_grad) for s in shapes], (), kwargs)
    return gen


def _cat_ref(xs, dim=0):
    xs = [x for x in xs if not (x.ndim == 1 and x.shape[0] == 0)] or xs[:1]
    return np.concatenate(xs, axis=dim)


def _promoted_cat_samples(dtype, requires_grad):
    yield from _list_samples([([(2, 3), (1, 3)], {}), ([(2, 3), (2, 2)], dict(dim=1)),
                              ([(2, 3), (2, 1), (2, 2)], dict(dim=-1)),
                              ([(2, 3)], {}), ([(0,), (2, 3)], {})])(dtype, requires_grad)
    if dtype is not torch.float64:
        yield SampleInput([make((2,), dtype), make((3,), torch.float64)], name="promote", grad=False)


def _list_dtype(s):
    from ..opinfo import ref_result_type
    return ref_result_type(*s.input) if len(s.input) > 1 else s.input[0].dtype


_STACKABLE = [([(2, 3), (2, 3)], {}), ([(2, 3), (2, 3), (2, 3)], dict(dim=1)),
              ([(3,), (3,)], dict(dim=-1)), ([(), ()], {})]

register(
    OpInfo("cat", ref=_cat_ref, dtypes=_DTYPES, result_dtype=_list_dtype,
           sample_inputs=_promoted_cat_samples, aliases=("concat", "concatenate")),
    OpInfo("stack", ref=lambda xs, dim=0: np.stack(xs, axis=dim), dtypes=_DTYPES,
           result_dtype=_list_dtype, sample_inputs=_list_samples(_STACKABLE)),
    OpInfo("hstack", ref=np.hstack, dtypes=_DTYPES, result_dtype=_list_dtype,
           sample_inputs=_list_samples([([(2, 3), (2, 1)], {}), ([(3,), (2,)], {})])),
    OpInfo("vstack", ref=np.vstack, dtypes=_DTYPES, result_dtype=_list_dtype, aliases=("row_stack",),
           sample_inputs=_list_samples([([(2, 3), (1, 3)], {}), ([(3,), (3,)], {}), ([(), ()], {})])),
    OpInfo("dstack", ref=np.dstack, dtypes=_DTYPES, result_dtype=_list_dtype,
           sample_inputs=_list_samples([([(2, 3), (2, 3)], {}), ([(3,), (3,)], {}),
                                        ([(2, 3, 1), (2, 3, 2)], {})])),
    OpInfo("column_stack", ref=np.column_stack, dtypes=_DTYPES, result_dtype=_list_dtype,
           sample_inputs=_list_samples([([(3,), (3, 2)], {}), ([(3,), (3,)], {})])),
)


def _broadcast_tensors_samples(dtype, requires_grad):
    yield SampleInput(make((3, 1), dtype, requires_grad), (make((4,), dtype, requires_grad),))
    yield SampleInput(make((), dtype, requires_grad), (make((2, 2), dtype, requires_grad),
                                                        make((1, 2), dtype, requires_grad)))


def _meshgrid_samples(dtype, requires_grad):
    a, b = make((3,), dtype, requires_grad), make((2,), dtype, requires_grad)
    yield SampleInput(a, (b,))
    yield SampleInput(a, (b,), dict(indexing="xy"), name="xy")
    yield SampleInput(a, (b, make((4,), dtype, requires_grad)), name="three")


register(
    OpInfo("broadcast_tensors", ref=lambda *xs: np.broadcast_arrays(*xs), dtypes=_DTYPES,
           result_dtype=SAME, sample_inputs=_broadcast_tensors_samples),
    OpInfo("meshgrid", ref=lambda *xs, indexing="ij": np.meshgrid(*xs, indexing=indexing),
           dtypes=_DTYPES, result_dtype=SAME, sample_inputs=_meshgrid_samples),
)


# ---------------------------------------------------------------------------------------
# Splitting: results are tuples of views


def _split_ref(x, size_or_sections, dim=0):
    n = x.shape[dim]
    if isinstance(size_or_sections, int):
        bounds = list(range(size_or_sections, n, size_or_sections))
    else:
        bounds = list(np.cumsum(size_or_sections)[:-1])
    return tuple(np.split(x, bounds, axis=dim))


def _chunk_ref(x, chunks, dim=0):
    n = x.shape[dim]
    return _split_ref(x, max(1, -(-n // chunks)), dim)


def _tensor_split_ref(x, indices_or_sections, dim=0):
    return tuple(np.array_split(x, indices_or_sections, axis=dim))


def _unbind_ref(x, dim=0):
    return tuple(np.moveaxis(x, dim, 0))


register(
    _shape_op("split", _split_ref, ((5, 2), (2,)), ((5, 2), ([1, 4],)), ((2, 6), (3, 1)),
              ((2, 6), ([2, 2, 2], -1))),
    _shape_op("chunk", _chunk_ref, ((5, 2), (2,)), ((5, 2), (3,)), ((2, 6), (4, 1))),
    _shape_op("tensor_split", _tensor_split_ref, ((5, 2), (2,)), ((5, 2), ([1, 3],)),
              ((2, 7), (3, 1))),
    _shape_op("unbind", _unbind_ref, ((3, 2), ()), ((3, 2), (1,)), ((2, 3, 2), (-1,))),
)
