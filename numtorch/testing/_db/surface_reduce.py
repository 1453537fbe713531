"""OpInfo entries: the everyday scans, searches, quantiles, distances and the top-level
spellings of functional ops (_ops/_surface_reduce.py)."""
from __future__ import annotations

import math

import numpy as np

import numtorch as torch

from ..opinfo import (BOOL, FLOATING, INT64, INTEGRAL, SAME, OpInfo, SampleInput, make,
                      register, tensor_of)


def _m(dtype, requires_grad):
    return lambda shape, **kw: make(shape, dtype, requires_grad, **kw)


def _scan_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(make((3, 4), dtype, requires_grad, distinct=True), (1,))
    yield SampleInput(make((4, 2), dtype, requires_grad, distinct=True), (0,), name="dim0")
    yield SampleInput(m(()), (0,), name="0d")
    yield SampleInput(tensor_of([1, 3, 3, 2, 5, 5], dtype), (0,), name="ties", grad=False)


def _cum_ref(largest):
    def ref(x, dim):
        if x.ndim == 0:
            return x, np.zeros((), np.int64)
        acc = (np.maximum if largest else np.minimum).accumulate(x, axis=dim)
        xx, aa = np.moveaxis(x, dim, -1), np.moveaxis(acc, dim, -1)
        n = xx.shape[-1]
        idx = np.zeros(aa.shape, np.int64)
        for pos in np.ndindex(*aa.shape):
            i = pos[-1]
            js = [j for j in range(i + 1) if xx[pos[:-1] + (j,)] == aa[pos]]
            idx[pos] = js[-1]
        del n
        return acc, np.moveaxis(idx, -1, dim)
    return ref


def _logcumsumexp_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3, 4)), (1,))
    yield SampleInput(m((4, 2)), (0,), name="dim0")
    yield SampleInput(tensor_of([-1000.0, 0.0, 1.0, -math.inf], dtype), (0,), name="far",
                      grad=False)


def _logcumsumexp_ref(x, dim):
    return np.logaddexp.accumulate(x, axis=dim)


def _searchsorted_samples(dtype, requires_grad):
    seq = tensor_of([-2, 0, 0, 1, 3, 5], dtype)
    yield SampleInput(seq, (make((2, 3), dtype, low=-3, high=6),))
    yield SampleInput(seq, (tensor_of([0, 3, 7], dtype),), dict(right=True), name="right")
    yield SampleInput(tensor_of([[0, 2, 4], [1, 1, 3]], dtype), (tensor_of([[2, 5], [1, 0]], dtype),),
                      dict(side="right", out_int32=True), name="nd_int32")


def _searchsorted_ref(seq, v, right=False, side=None, out_int32=False):
    side = side or ("right" if right else "left")
    if seq.ndim == 1:
        out = np.searchsorted(seq, v, side=side)
    else:
        out = np.stack([np.searchsorted(s, vv, side=side) for s, vv in zip(seq, v)])
    return out.astype(np.int32 if out_int32 else np.int64)


def _bucketize_samples(dtype, requires_grad):
    b = tensor_of([-1, 0, 2, 4], dtype)
    yield SampleInput(make((2, 3), dtype, low=-3, high=6), (b,))
    yield SampleInput(tensor_of([0, 2, 5], dtype), (b,), dict(right=True), name="right")


def _bucketize_ref(v, b, right=False, out_int32=False):
    return np.searchsorted(b, v, side="right" if right else "left").astype(np.int64)


def _quantile_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    q = tensor_of([0.1, 0.3, 0.9], dtype)   # off the kinks at integer positions (and q=0, 1)
    yield SampleInput(make((7,), dtype, requires_grad, distinct=True), (0.4,))
    yield SampleInput(make((3, 5), dtype, requires_grad, distinct=True), (q, 1, True), name="q_tensor")
    yield SampleInput(make((3, 4), dtype, requires_grad, distinct=True), (0.7, 0),
                      dict(interpolation="midpoint"), name="midpoint")
    for mode in ("lower", "higher", "nearest"):
        yield SampleInput(make((4, 3), dtype, requires_grad, distinct=True), (q, -1),
                          dict(interpolation=mode), name=mode)
    yield SampleInput(tensor_of([[1.0, math.nan, 3.0, 2.0], [math.nan, math.nan, 0.0, 1.0]], dtype),
                      (0.5, 1), name="nan", grad=False)
    del m


def _quantile_ref(ignore_nan):
    fn = np.nanquantile if ignore_nan else np.quantile

    def ref(x, q, dim=None, keepdim=False, *, interpolation="linear"):
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return np.asarray(fn(x, q, axis=dim, keepdims=keepdim, method=interpolation),
                                  dtype=x.dtype)
    return ref


def _cdist_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3, 4)), (m((2, 4)),))
    yield SampleInput(m((2, 3, 2)), (m((2, 4, 2)),), dict(p=1.0), name="p1_batched")
    yield SampleInput(m((2, 3)), (m((3, 3)),), dict(p=3.0), name="p3")


def _cdist_ref(a, b, p=2.0):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    return (d ** p).sum(-1) ** (1 / p)


def _dist_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3, 4)), (m((3, 4)),))
    yield SampleInput(m((3, 4)), (m((4,)), 1), name="p1_broadcast")
    yield SampleInput(m((5,)), (m((5,)), math.inf), name="inf")


def _dist_ref(a, b, p=2):
    d = np.abs(a - b).reshape(-1)
    return np.max(d) if p == math.inf else (d ** p).sum() ** (1 / p)


def _float_unary(name, ref, *args):
    def gen(dtype, requires_grad):
        yield SampleInput(make((3, 4), dtype, requires_grad), args)
        yield SampleInput(make((5,), dtype, requires_grad), args, name="1d")
    return OpInfo(name, ref=ref, result_dtype=SAME, sample_inputs=gen, method=None, inplace=None)


def _selu_ref(x):
    a, s = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return s * np.where(x > 0, x, a * np.expm1(x))


def _norm_samples(name):
    def gen(dtype, requires_grad):
        m = _m(dtype, requires_grad)
        if name == "layer_norm":
            yield SampleInput(m((2, 3, 4)), ([4], m((4,)), m((4,))))
            yield SampleInput(m((2, 3)), ((2, 3),), name="no_affine")
        elif name == "group_norm":
            yield SampleInput(m((2, 4, 3)), (2, m((4,)), m((4,))))
        elif name == "batch_norm":
            rm, rv = make((3,), dtype), make((3,), dtype, low=0.5, high=2)
            yield SampleInput(m((4, 3)), (m((3,)), m((3,)), rm, rv, False, 0.1, 1e-5, True),
                              name="eval")
        else:  # embedding
            yield SampleInput(m((5, 3)), (tensor_of([[0, 4], [2, 2]], torch.int64),))
    return gen


def _layer_norm_ref(x, shape, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def _group_norm_ref(x, g, w, b, eps=1e-5):
    n, c = x.shape[:2]
    xg = x.reshape(n, g, -1)
    y = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * w.reshape(shape) + b.reshape(shape)


def _batch_norm_ref(x, w, b, rm, rv, training, momentum, eps, cudnn):
    return (x - rm) / np.sqrt(rv + eps) * w + b


def _bce_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    t = make((3, 4), dtype, low=0, high=1)
    yield SampleInput(m((3, 4)), (t,))
    # weights without grad: PyTorch's op is not differentiable in them
    yield SampleInput(m((3, 4)), (t, make((4,), dtype), make((4,), dtype), 1), name="weights_mean")
    yield SampleInput(m((3, 4)), (t, None, None, 2), name="sum")


def _bce_ref(x, t, w=None, pw=None, reduction=0):
    pw = 1 if pw is None else pw
    log_sig = -np.logaddexp(0, -x)
    log_one_minus = -np.logaddexp(0, x)
    loss = -(pw * t * log_sig + (1 - t) * log_one_minus) * (1 if w is None else w)
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def _two_rows(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((3, 4)), (m((3, 4)),))
    yield SampleInput(m((2, 3)), (m((3,)),), name="broadcast")


def _cos_ref(a, b, dim=1, eps=1e-8):
    a, b = np.broadcast_arrays(a, b)
    num = (a * b).sum(dim)
    return num / (np.maximum(np.linalg.norm(a, axis=dim), eps) * np.maximum(np.linalg.norm(b, axis=dim), eps))


def _pdist_ref(a, b, p=2.0, eps=1e-6, keepdim=False):
    return np.linalg.norm(a - b + eps, ord=p, axis=-1)


_FN = dict(method=None, inplace=None)

register(
    OpInfo("cummax", ref=_cum_ref(True), sample_inputs=_scan_samples, dtypes=FLOATING + INTEGRAL),
    OpInfo("cummin", ref=_cum_ref(False), sample_inputs=_scan_samples, dtypes=FLOATING + INTEGRAL),
    OpInfo("logcumsumexp", ref=_logcumsumexp_ref, result_dtype=SAME,
           sample_inputs=_logcumsumexp_samples),
    OpInfo("searchsorted", ref=_searchsorted_ref, sample_inputs=_searchsorted_samples,
           supports_grad=False, dtypes=FLOATING + INTEGRAL, **_FN),
    OpInfo("bucketize", ref=_bucketize_ref, result_dtype=INT64, sample_inputs=_bucketize_samples,
           supports_grad=False, dtypes=FLOATING + INTEGRAL, **_FN),
    OpInfo("quantile", ref=_quantile_ref(False), result_dtype=SAME, sample_inputs=_quantile_samples),
    OpInfo("nanquantile", ref=_quantile_ref(True), result_dtype=SAME,
           sample_inputs=_quantile_samples),
    OpInfo("cdist", ref=_cdist_ref, result_dtype=SAME, sample_inputs=_cdist_samples, **_FN),
    OpInfo("dist", ref=_dist_ref, result_dtype=SAME, sample_inputs=_dist_samples),
    _float_unary("selu", _selu_ref),
    _float_unary("celu", lambda x, a=1.0: np.where(x > 0, x, a * np.expm1(x / a)), 0.5),
    _float_unary("threshold", lambda x, t, v: np.where(x > t, x, v), 0.1, -2.0),
    OpInfo("layer_norm", ref=_layer_norm_ref, result_dtype=SAME,
           sample_inputs=_norm_samples("layer_norm"), **_FN),
    OpInfo("group_norm", ref=_group_norm_ref, result_dtype=SAME,
           sample_inputs=_norm_samples("group_norm"), **_FN),
    OpInfo("batch_norm", ref=_batch_norm_ref, result_dtype=SAME,
           sample_inputs=_norm_samples("batch_norm"), **_FN),
    OpInfo("embedding", ref=lambda w, i: w[i], result_dtype=SAME,
           sample_inputs=_norm_samples("embedding"), **_FN),
    OpInfo("binary_cross_entropy_with_logits", ref=_bce_ref, result_dtype=SAME,
           sample_inputs=_bce_samples, **_FN),
    OpInfo("cosine_similarity", ref=_cos_ref, result_dtype=SAME, sample_inputs=_two_rows, **_FN),
    OpInfo("pairwise_distance", ref=_pdist_ref, result_dtype=SAME, sample_inputs=_two_rows, **_FN),
    OpInfo("dropout", ref=lambda x, p, train: x, result_dtype=SAME, method=None, inplace=None,
           sample_inputs=lambda d, r: iter([
               SampleInput(make((3, 4), d, r), (0.5, False), name="eval"),
               SampleInput(make((3, 4), d, r), (0.0, True), name="p0")])),
)
