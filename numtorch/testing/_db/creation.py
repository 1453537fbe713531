"""OpInfo entries: creation ops (values, shapes, dtypes) and random draws (ranges, seeding)."""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import FLOATING, INT64, SAME, OpInfo, SampleInput, make, register

_NO_GRAD = dict(supports_grad=False, supports_vmap=False, method=None, inplace=None)


def _requested(default):
    """Result dtype: the ``dtype`` kwarg, else ``default(sample)``."""
    def rule(s):
        return s.kwargs.get("dtype") or default(s)
    return rule


def _inferred(s):
    """PyTorch's dtype for Python data: bool, int64, or the default float dtype."""
    data = s.input
    if isinstance(data, np.ndarray):
        return torch.from_numpy(data).dtype
    flat = np.asarray(data)
    return {"b": torch.bool, "i": torch.int64}.get(flat.dtype.kind, torch.get_default_dtype())


def _default_float(s):
    return torch.get_default_dtype()


def _data_samples(dtype, requires_grad):
    yield SampleInput([[1, 2], [3, 4]])
    yield SampleInput([1.5, -2.0, 3.0])
    yield SampleInput(3.0)
    yield SampleInput([True, False])
    yield SampleInput([[1, 2]], kwargs=dict(dtype=torch.float64), name="dtype")
    yield SampleInput(np.arange(6, dtype=np.int32).reshape(2, 3), name="ndarray")
    yield SampleInput([], name="empty")


def _data_ref(data, dtype=None):
    arr = np.array(data)
    if dtype is not None:
        return arr.astype(dtype.np)
    return arr


def _shares_memory(s, out):
    return not isinstance(s.input, np.ndarray) or np.shares_memory(out.numpy(), s.input)


def _from_numpy_samples(dtype, requires_grad):
    yield SampleInput(np.arange(6.0).reshape(2, 3))
    yield SampleInput(np.array(True))
    yield SampleInput(np.arange(4, dtype=np.int32)[::2], name="strided")


register(
    OpInfo("tensor", ref=_data_ref, result_dtype=_requested(_inferred), sample_inputs=_data_samples,
           **_NO_GRAD),
    OpInfo("as_tensor", ref=_data_ref, result_dtype=_requested(_inferred),
           sample_inputs=_data_samples, check=_shares_memory, aliases=("asarray",), **_NO_GRAD),
    OpInfo("from_numpy", ref=np.array, result_dtype=_inferred, sample_inputs=_from_numpy_samples,
           check=_shares_memory, supports_meta=False, **_NO_GRAD),
)


# ---------------------------------------------------------------------------------------
# Filled tensors


def _size_samples(dtype, requires_grad):
    yield SampleInput((2, 3), kwargs=dict(dtype=dtype))
    yield SampleInput(2, (3,), dict(dtype=dtype), name="varargs")
    yield SampleInput((), kwargs=dict(dtype=dtype), name="0d")
    yield SampleInput((0, 2), kwargs=dict(dtype=dtype), name="empty")
    yield SampleInput([4], name="default_dtype")


def _size_ref(fill):
    def ref(*size, dtype=None):
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        return fill(size, dtype=(dtype or torch.get_default_dtype()).np)
    return ref


def _full_samples(dtype, requires_grad):
    yield SampleInput((2, 3), (1.5,))
    yield SampleInput((2,), (7,), name="int_fill")
    yield SampleInput((2,), (True,), name="bool_fill")
    yield SampleInput((), (2.0,), dict(dtype=torch.float64), name="dtype")


def _full_ref(size, value, dtype=None):
    return np.full(size, value, dtype=dtype.np if dtype is not None else None)


def _full_dtype(s):
    return s.kwargs.get("dtype") or (
        torch.bool if isinstance(s.args[0], bool) else torch.int64 if isinstance(s.args[0], int)
        else torch.get_default_dtype())


_ALL = FLOATING + (torch.int64, torch.bool)

register(
    OpInfo("zeros", ref=_size_ref(np.zeros), dtypes=_ALL, result_dtype=_requested(_default_float),
           sample_inputs=_size_samples, **_NO_GRAD),
    OpInfo("ones", ref=_size_ref(np.ones), dtypes=_ALL, result_dtype=_requested(_default_float),
           sample_inputs=_size_samples, **_NO_GRAD),
    OpInfo("empty", dtypes=_ALL, result_dtype=_requested(_default_float), sample_inputs=_size_samples,
           check=lambda s, out: tuple(out.shape) == _size_ref(np.zeros)(s.input, *s.args).shape,
           nondeterministic=True, **_NO_GRAD),  # values are unspecified
    OpInfo("full", ref=_full_ref, result_dtype=_full_dtype, sample_inputs=_full_samples, **_NO_GRAD),
)


def _like_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype))
    yield SampleInput(make((), dtype), name="0d")
    yield SampleInput(make((3,), dtype), kwargs=dict(dtype=torch.int64), name="dtype")


def _like_ref(fill):
    return lambda x, dtype=None: fill(x.shape, dtype=(dtype.np if dtype is not None else x.dtype))


def _full_like_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype), (2,))
    yield SampleInput(make((), dtype), (0.5,), dict(dtype=torch.float64), name="dtype")


def _like_dtype(s):
    return s.kwargs.get("dtype") or s.input.dtype


register(
    OpInfo("zeros_like", ref=_like_ref(np.zeros), dtypes=_ALL, result_dtype=_like_dtype,
           sample_inputs=_like_samples, **_NO_GRAD),
    OpInfo("ones_like", ref=_like_ref(np.ones), dtypes=_ALL, result_dtype=_like_dtype,
           sample_inputs=_like_samples, **_NO_GRAD),
    OpInfo("empty_like", dtypes=_ALL, result_dtype=_like_dtype, sample_inputs=_like_samples,
           check=lambda s, out: out.shape == s.input.shape, nondeterministic=True, **_NO_GRAD),
    OpInfo("full_like", ref=lambda x, v, dtype=None: np.full(x.shape, v, dtype=(dtype or torch.from_numpy(x).dtype).np),
           dtypes=_ALL, result_dtype=_like_dtype, sample_inputs=_full_like_samples, **_NO_GRAD),
)


# ---------------------------------------------------------------------------------------
# Ranges


def _arange_samples(dtype, requires_grad):
    yield SampleInput(5)
    yield SampleInput(1, (5,), name="start_end")
    yield SampleInput(0, (1, 0.25), name="float_step")
    yield SampleInput(10, (0, -3), name="negative_step")
    yield SampleInput(4, kwargs=dict(dtype=torch.float64), name="dtype")
    yield SampleInput(0.5, (3,), name="float_start")


def _arange_ref(start, end=None, step=1, dtype=None):
    if end is None:
        start, end = 0, start
    out = np.arange(start, end, step)
    return out.astype(dtype.np) if dtype is not None else out


def _arange_dtype(s):
    values = (s.input,) + s.args
    return s.kwargs.get("dtype") or (torch.int64 if all(isinstance(v, int) for v in values)
                                     else torch.get_default_dtype())


def _space_samples(dtype, requires_grad):
    yield SampleInput(0, (1, 5))
    yield SampleInput(-2.0, (2.0, 1), name="one_step")
    yield SampleInput(1, (0, 4), dict(dtype=torch.float64), name="dtype")


def _eye_samples(dtype, requires_grad):
    yield SampleInput(3)
    yield SampleInput(2, (4,), name="rect")
    yield SampleInput(3, kwargs=dict(dtype=torch.int64), name="dtype")


register(
    OpInfo("arange", ref=_arange_ref, result_dtype=_arange_dtype, sample_inputs=_arange_samples,
           **_NO_GRAD),
    OpInfo("linspace", ref=lambda a, b, n, dtype=None: np.linspace(a, b, n),
           result_dtype=_requested(_default_float), sample_inputs=_space_samples, **_NO_GRAD),
    OpInfo("logspace", ref=lambda a, b, n, base=10.0, dtype=None: np.logspace(a, b, n, base=base),
           result_dtype=_requested(_default_float), sample_inputs=_space_samples, **_NO_GRAD),
    OpInfo("eye", ref=lambda n, m=None, dtype=None: np.eye(n, m), result_dtype=_requested(_default_float),
           sample_inputs=_eye_samples, **_NO_GRAD),
)


# ---------------------------------------------------------------------------------------
# Random draws: shape and dtype, range, and reproducibility under manual_seed


def _reproducible(op, range_check=None):
    def check(s, out):
        torch.manual_seed(1234)
        a = s.call(op)
        torch.manual_seed(1234)
        b = s.call(op)
        assert torch.equal(a, b), "the same seed must give the same draw"
        if range_check is not None:
            assert range_check(s, out), f"values out of range: {out}"
    return check


def _random(name, samples, result_dtype, range_check=None, **kw):
    op = getattr(torch, name)
    return OpInfo(name, op=op, sample_inputs=samples, result_dtype=result_dtype,
                  check=_reproducible(op, range_check), nondeterministic=True, **_NO_GRAD, **kw)


def _random_size_samples(dtype, requires_grad):
    yield SampleInput(2, (3,), dict(dtype=dtype))
    yield SampleInput((4,), kwargs=dict(dtype=dtype), name="tuple")
    yield SampleInput((), kwargs=dict(dtype=dtype), name="0d")


def _randint_samples(dtype, requires_grad):
    yield SampleInput(0, (10, (2, 3)))
    yield SampleInput(5, ((4,),), name="high_only")
    yield SampleInput(-3, (3, (5,)), dict(dtype=torch.int32), name="dtype")


def _randint_range(s, out):
    low, high = (0, s.input) if len(s.args) == 1 else (s.input, s.args[0])
    return bool(((out >= low) & (out < high)).all())


def _randint_like_range(s, out):
    low, high = (0, s.args[0]) if len(s.args) == 1 else s.args
    return bool(((out >= low) & (out < high)).all())


def _unit_interval(s, out):
    return bool(((out >= 0) & (out < 1)).all())


def _like_random_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype))
    yield SampleInput(make((), dtype), name="0d")


def _randint_like_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), torch.int64), (5,))
    yield SampleInput(make((4,), torch.float64), (-2, 2), name="float")


def _randperm_samples(dtype, requires_grad):
    yield SampleInput(5)
    yield SampleInput(1, name="one")
    yield SampleInput(0, name="empty")


def _normal_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype), (make((2, 3), dtype, low=0.5, high=2),))
    yield SampleInput(0.0, (1.0, (3,)), name="size")
    yield SampleInput(make((4,), dtype), (2.0,), name="scalar_std")


def _bernoulli_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, low=0, high=1))
    yield SampleInput(torch.zeros(3, dtype=dtype), name="zeros")
    yield SampleInput(make((4,), dtype), (0.5,), name="p")


def _multinomial_samples(dtype, requires_grad):
    yield SampleInput(make((4,), dtype, low=0.1, high=1), (2,))
    yield SampleInput(make((2, 5), dtype, low=0.1, high=1), (5,), name="all")
    yield SampleInput(make((3,), dtype, low=0.1, high=1), (6,), dict(replacement=True), name="replacement")


def _is_permutation(s, out):
    return sorted(out.tolist()) == list(range(s.input))


def _multinomial_ok(s, out):
    n = s.input.shape[-1]
    rows = out.reshape(-1, out.shape[-1]).tolist()
    unique = s.kwargs.get("replacement") or all(len(set(r)) == len(r) for r in rows)
    return unique and all(0 <= v < n for r in rows for v in r)


def _first_float(s):
    return s.input.dtype if isinstance(s.input, torch.Tensor) else torch.get_default_dtype()


register(
    _random("randn", _random_size_samples, _requested(_default_float)),
    _random("rand", _random_size_samples, _requested(_default_float), _unit_interval),
    _random("randint", _randint_samples, _requested(lambda s: torch.int64), _randint_range),
    _random("randn_like", _like_random_samples, SAME),
    _random("rand_like", _like_random_samples, SAME, _unit_interval),
    _random("randint_like", _randint_like_samples, SAME, _randint_like_range),
    _random("randperm", _randperm_samples, INT64, _is_permutation),
    _random("normal", _normal_samples, _first_float),
    _random("bernoulli", _bernoulli_samples, SAME,
            lambda s, out: bool(((out == 0) | (out == 1)).all())),
    _random("multinomial", _multinomial_samples, INT64, _multinomial_ok, supports_meta=False),
)
