"""OpInfo entries for Tensor methods with no function form: conversions, fills, properties.

``op`` calls the method (``method_only``); in-place-only methods (``fill_``, ``copy_``) are
written as "clone, then the method", so their values and gradients are checked like any op.
"""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import (ALL_REAL, FLOATING, SAME, OpInfo, SampleInput, make, ref_promote_types,
                      ref_result_type, register, unary_samples)

_NO_GRAD = dict(supports_grad=False)


def _method_only(name, op, **kw):
    kw.setdefault("mutates_input", name.endswith("_"))
    return OpInfo(name, op=op, method=name, method_only=True, inplace=None, torch_name=None, **kw)


# ---------------------------------------------------------------------------------------
# Casts: x.float(), x.double(), ...

_CASTS = {"float": torch.float32, "double": torch.float64, "half": torch.float16,
          "int": torch.int32, "long": torch.int64, "short": torch.int16, "bool": torch.bool,
          "byte": torch.uint8, "char": torch.int8, "cfloat": torch.complex64,
          "cdouble": torch.complex128}


# Central differences through a rounding cast need a step above the target's resolution
# (the cast is linear, so a large step is exact).
_CAST_GRAD_TOL = {torch.float32: dict(eps=1e-3, atol=1e-3), torch.complex64: dict(eps=1e-3, atol=1e-3),
                  torch.float16: dict(eps=0.25, atol=0.05)}


def _cast_entry(name, target):
    return _method_only(name, lambda x, _n=name: getattr(x, _n)(),
                        ref=lambda x, _t=target: x.astype(_t.np), dtypes=FLOATING + (torch.int64,),
                        result_dtype=lambda s, _t=target: _t,
                        sample_inputs=unary_samples(low=0, high=9),
                        supports_grad=target.is_floating_point or target.is_complex,
                        grad_tol=_CAST_GRAD_TOL.get(target))


register(*[_cast_entry(n, d) for n, d in _CASTS.items()])


def _to_samples(dtype, requires_grad):
    x = make((2, 3), dtype, requires_grad)
    yield SampleInput(x, (torch.float64,))
    yield SampleInput(x, (), dict(dtype=torch.int64), name="dtype_kwarg")
    yield SampleInput(x, ("cpu",), name="device", skip=("meta",))  # meta -> cpu has no data
    yield SampleInput(x, (make((1,), torch.float32),), name="like_tensor")
    yield SampleInput(x, (dtype,), dict(copy=True), name="copy")


def _to_ref(x, *args, dtype=None, copy=False):
    for a in args:
        if isinstance(a, torch.dtype):
            dtype = a
        elif isinstance(a, np.ndarray):
            dtype = torch.from_numpy(a).dtype
    return x.astype(dtype.np) if dtype is not None else x


def _to_dtype(s):
    for a in s.args:
        if isinstance(a, torch.dtype):
            return a
        if isinstance(a, torch.Tensor):
            return a.dtype
    return s.kwargs.get("dtype") or s.input.dtype


def _type_samples(dtype, requires_grad):
    yield SampleInput(make((2,), dtype, requires_grad), (torch.float64,))
    yield SampleInput(make((2,), dtype, requires_grad), name="name")


def _type_ref(x, dtype=None):
    if dtype is None:
        return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                "int64": "torch.LongTensor"}[x.dtype.name]
    return x.astype(dtype.np)


def _type_as_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad), (make((1,), torch.float64),))
    yield SampleInput(make((2,), dtype, requires_grad), (make((1,), torch.int64),))


register(
    _method_only("to", lambda x, *a, **k: x.to(*a, **k), ref=_to_ref, result_dtype=_to_dtype,
                 dtypes=FLOATING + (torch.int64,), sample_inputs=_to_samples,
                 grad_tol=_CAST_GRAD_TOL[torch.float32]),
    _method_only("type", lambda x, *a: x.type(*a), ref=_type_ref, dtypes=FLOATING + (torch.int64,),
                 sample_inputs=_type_samples),
    _method_only("type_as", lambda x, o: x.type_as(o), ref=lambda x, o: x.astype(o.dtype),
                 result_dtype=lambda s: s.args[0].dtype, sample_inputs=_type_as_samples),
    _method_only("cpu", lambda x: x.cpu(), ref=lambda x: x, result_dtype=SAME,
                 dtypes=ALL_REAL, sample_inputs=unary_samples()),
)


# ---------------------------------------------------------------------------------------
# Properties: .T, .mT, .H, .mH


def _matrix_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad))
    yield SampleInput(make((2, 3, 4), dtype, requires_grad), name="batched")


def _square_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad))


register(
    _method_only("T", lambda x: x.T, ref=lambda x: x.T, result_dtype=SAME, dtypes=ALL_REAL,
                 sample_inputs=_matrix_samples),
    _method_only("mT", lambda x: x.mT, ref=lambda x: np.swapaxes(x, -1, -2), result_dtype=SAME,
                 dtypes=ALL_REAL, sample_inputs=_matrix_samples),
    _method_only("H", lambda x: x.H, ref=lambda x: np.conj(x.T), result_dtype=SAME,
                 sample_inputs=_square_samples),
    _method_only("mH", lambda x: x.mH, ref=lambda x: np.conj(np.swapaxes(x, -1, -2)),
                 result_dtype=SAME, sample_inputs=_matrix_samples),
)


# ---------------------------------------------------------------------------------------
# In-place-only methods, as "clone then the method"


def _clone_then(name):
    def op(x, *args, **kwargs):
        y = x.clone()
        out = getattr(y, name)(*args, **kwargs)
        assert out is y, f"{name} must return self"
        return y
    op.__name__ = name
    return op


def _fill_samples(dtype, requires_grad):
    value = 2.5 if dtype.is_floating_point else 2
    yield SampleInput(make((2, 3), dtype, requires_grad), (value,))
    yield SampleInput(make((2, 3), dtype, requires_grad), (torch.tensor(value, dtype=dtype),),
                      name="tensor_value")
    yield SampleInput(make((), dtype, requires_grad), (value,), name="0d")


def _copy_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad), (make((2, 3), dtype, requires_grad),))
    yield SampleInput(make((2, 3), dtype, requires_grad), (make((3,), dtype, requires_grad),),
                      name="broadcast")
    yield SampleInput(make((2, 3), dtype, requires_grad), (make((2, 3), torch.int64),),
                      name="cast")


def _set_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype), (make((2, 3), dtype),))
    yield SampleInput(make((2, 3), dtype), (make((4,), dtype),), name="other_shape")


register(
    _method_only("fill_", _clone_then("fill_"), ref=lambda x, v: np.full_like(x, v),
                 result_dtype=SAME, dtypes=ALL_REAL, sample_inputs=_fill_samples),
    _method_only("zero_", _clone_then("zero_"), ref=np.zeros_like, result_dtype=SAME,
                 dtypes=ALL_REAL, sample_inputs=unary_samples()),
    _method_only("copy_", _clone_then("copy_"),
                 ref=lambda x, src: np.broadcast_to(src, x.shape).astype(x.dtype),
                 result_dtype=SAME, dtypes=FLOATING + (torch.int64,), sample_inputs=_copy_samples),
    _method_only("detach_", _clone_then("detach_"), ref=np.copy, result_dtype=SAME,
                 sample_inputs=unary_samples(), supports_grad=False,
                 check=lambda s, out: not out.requires_grad),
    _method_only("set_", lambda x, src: x.clone().set_(src), ref=lambda x, src: src,
                 result_dtype=SAME, sample_inputs=_set_samples, supports_grad=False,
                 supports_meta=False, mutates_input=False),  # set_ rebinds storage: no write
    _method_only("resize_as_", lambda x, o: x.clone().resize_as_(o), result_dtype=SAME,
                 sample_inputs=lambda d, r: iter([SampleInput(make((2, 3), d), (make((4,), d),))]),
                 check=lambda s, out: out.shape == s.args[0].shape, mutates_input=False,
                 nondeterministic=True, **_NO_GRAD),  # new elements are unspecified
)


def _random_fill_check(name, in_range):
    def check(s, out):
        torch.manual_seed(7)
        a = _clone_then(name)(s.input, *s.args)
        torch.manual_seed(7)
        b = _clone_then(name)(s.input, *s.args)
        assert torch.equal(a, b), "the same seed must give the same draw"
        assert in_range(s, out), f"{name}: values out of range"
    return check


def _random_fill(name, samples, in_range):
    return _method_only(name, _clone_then(name), result_dtype=SAME, sample_inputs=samples,
                        check=_random_fill_check(name, in_range), nondeterministic=True,
                        **_NO_GRAD)


def _bounds_samples(*args):
    def gen(dtype, requires_grad):
        yield SampleInput(make((2, 3), dtype), args)
        yield SampleInput(make((), dtype), name="0d")
    return gen


def _within(low, high):
    return lambda s, out: bool(((out >= (s.args[0] if s.args else low)) &
                                (out <= (s.args[-1] if len(s.args) > 1 else high))).all())


register(
    _random_fill("uniform_", _bounds_samples(-2.0, 3.0), _within(0, 1)),
    _random_fill("normal_", _bounds_samples(1.0, 0.5), lambda s, out: bool(out.isfinite().all())),
    _random_fill("bernoulli_", _bounds_samples(0.3), lambda s, out: bool(((out == 0) | (out == 1)).all())),
    _random_fill("random_", _bounds_samples(2, 5), lambda s, out: bool(
        ((out >= (s.args[0] if s.args else 0)) & (out <= (s.args[1] if s.args else 2 ** 53))).all())),
)


# ---------------------------------------------------------------------------------------
# new_* constructors


def _new_samples(dtype, requires_grad):
    yield SampleInput(make((2,), dtype), ((2, 3),))
    yield SampleInput(make((2,), dtype), (3,), dict(dtype=torch.int64), name="dtype")


def _new_ref(fill):
    def ref(x, *size, dtype=None):
        if len(size) == 1 and isinstance(size[0], tuple):
            size = size[0]
        return fill(size, dtype=dtype.np if dtype is not None else x.dtype)
    return ref


def _new_dtype(s):
    return s.kwargs.get("dtype") or s.input.dtype


def _new_full_samples(dtype, requires_grad):
    yield SampleInput(make((2,), dtype), ((2, 3), 1.5))


def _new_tensor_samples(dtype, requires_grad):
    yield SampleInput(make((2,), dtype), ([[1, 2], [3, 4]],))
    yield SampleInput(make((2,), dtype), ([1.5],), dict(dtype=torch.float64), name="dtype")


register(
    _method_only("new_zeros", lambda x, *a, **k: x.new_zeros(*a, **k), ref=_new_ref(np.zeros),
                 result_dtype=_new_dtype, sample_inputs=_new_samples, **_NO_GRAD),
    _method_only("new_ones", lambda x, *a, **k: x.new_ones(*a, **k), ref=_new_ref(np.ones),
                 result_dtype=_new_dtype, sample_inputs=_new_samples, **_NO_GRAD),
    _method_only("new_empty", lambda x, *a, **k: x.new_empty(*a, **k), result_dtype=_new_dtype,
                 sample_inputs=_new_samples, nondeterministic=True, **_NO_GRAD),
    _method_only("new_full", lambda x, *a, **k: x.new_full(*a, **k),
                 ref=lambda x, size, v: np.full(size, v, dtype=x.dtype), result_dtype=SAME,
                 sample_inputs=_new_full_samples, **_NO_GRAD),
    _method_only("new_tensor", lambda x, *a, **k: x.new_tensor(*a, **k),
                 ref=lambda x, data, dtype=None: np.array(data, dtype=(dtype.np if dtype else x.dtype)),
                 result_dtype=_new_dtype, sample_inputs=_new_tensor_samples, **_NO_GRAD),
)


# ---------------------------------------------------------------------------------------
# Layout queries


def _layout_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype))
    yield SampleInput(make((2, 3), dtype).t(), name="transposed")
    yield SampleInput(make((3, 2), dtype, noncontiguous=True), name="strided")


register(
    # The reference reads the layout of the tensor's own buffer (a NumPy view of it).
    _method_only("is_contiguous", lambda x: x.is_contiguous(), sample_inputs=_layout_samples,
                 check=lambda s, out: out == s.input.numpy().flags.c_contiguous,
                 supports_meta=False, **_NO_GRAD),
    _method_only("stride", lambda x: x.stride(), sample_inputs=_layout_samples,
                 check=lambda s, out: out == tuple(b // s.input.element_size()
                                                   for b in s.input.numpy().strides),
                 supports_meta=False, **_NO_GRAD),
)


# ---------------------------------------------------------------------------------------
# Dtype and shape arithmetic (functions on dtypes, shapes and tensors)


def _result_type_samples(dtype, requires_grad):
    yield SampleInput(make((2,), dtype), (make((2,), torch.float64),))
    yield SampleInput(make((2,), dtype), (2.5,), name="scalar")
    yield SampleInput(make((2,), dtype), (make((), torch.float64),), name="0d")
    yield SampleInput(make((2,), dtype), (make((), torch.complex64),), name="complex_0d")


def _promote_types_samples(dtype, requires_grad):
    for other in (torch.int8, torch.uint8, torch.float16, torch.float64, torch.bool, torch.complex64):
        yield SampleInput(dtype, (other,))


def _broadcast_shapes_samples(dtype, requires_grad):
    yield SampleInput((2, 1), ((3,),))
    yield SampleInput((), ((1, 4), (2, 1, 1)))
    yield SampleInput((0,), ((1,),))


register(
    OpInfo("result_type", sample_inputs=_result_type_samples, dtypes=ALL_REAL, method="result_type",
           check=lambda s, out: out == ref_result_type(s.input, *s.args), supports_meta=False,
           **_NO_GRAD),
    OpInfo("promote_types", sample_inputs=_promote_types_samples, dtypes=ALL_REAL, method=None,
           check=lambda s, out: out == ref_promote_types(s.input, *s.args), supports_meta=False,
           **_NO_GRAD),
    OpInfo("broadcast_shapes", ref=lambda *shapes: torch.Size(np.broadcast_shapes(*shapes)),
           dtypes=FLOATING[:1],
           sample_inputs=_broadcast_shapes_samples, method=None, supports_meta=False, **_NO_GRAD),
)
