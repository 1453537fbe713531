"""The loss functions of ``nn.functional`` (re-exported there): regression losses,
negative log likelihood and cross entropy, binary cross entropy, KL divergence.

Each is a composition of numtorch ops (gradients, vmap and jvp need no extra rules) with
PyTorch's argument checks, reductions (``_reduction.py``) and arithmetic order, so values
match PyTorch to rounding. Checks that read values (target bounds) run only on concrete
tensors; under a transform they are skipped, as in PyTorch's compiled paths.
"""
from __future__ import annotations

import warnings

from numpy import ndarray

from .._core import dtypes as _dt
from .._ops import math as M
from .._ops import reduce as R
from .._ops import shape as S
from .._ops.index import gather
from . import _reduction as _Red
from ._fused_cross_entropy import fused_cross_entropy
from .._ops._backward_names import backward_name

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _type_name(t):
    return _TYPE_NAMES.get(t.dtype.name, t.dtype.name)


def _warn_size(input, target, stacklevel=3):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=stacklevel)


def _weighted(loss, weight, reduction):
    if weight is not None:
        loss = loss * weight
    return _Red.apply(loss, reduction)


def _log_sigmoid(x):
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), as ATen computes it.
    return M.minimum(x, 0) - M.log1p(M.exp(-M.abs(x)))


# ---------------------------------------------------------------------------------------
# Regression losses

@backward_name("MseLossBackward0")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target) ** 2``, reduced by ``reduction``."""
    _warn_size(input, target)
    reduction = _Red.resolve(size_average, reduce, reduction)
    d = input - target
    return _weighted(d * d, weight, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced by ``reduction``."""
    _warn_size(input, target)
    reduction = _Red.resolve(size_average, reduce, reduction)
    return _weighted(M.abs(input - target), weight, reduction)


@backward_name("SmoothL1LossBackward0")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 * z**2 / beta`` where ``z = |input - target| < beta``, else ``z - 0.5 * beta``."""
    _warn_size(input, target)
    reduction = _Red.resolve(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    z = M.abs(input - target)
    if beta == 0:
        return _Red.apply(z, reduction)
    return _Red.apply(M.where(z < beta, z * z * 0.5 / beta, z - 0.5 * beta), reduction)


@backward_name("HuberLossBackward0")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 * z**2`` where ``z = |input - target| < delta``, else ``delta * (z - 0.5 * delta)``."""
    _warn_size(input, target)
    reduction = _Red.get_enum(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    z = M.abs(input - target)
    return _weighted(M.where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta), weight, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))``."""
    _warn_size(input, target)
    reduction = _Red.resolve(size_average, reduce, reduction)
    return _Red.apply(M.log1p(M.exp(-target * input)), reduction)


# ---------------------------------------------------------------------------------------
# Binary cross entropy

def _check_same_size(input, target, message):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(message.format(t=target.shape, i=input.shape))


def _clamped_log(x, log):
    # max(log(x), -100) with a finite gradient where the log is clamped (x == 0).
    positive = x > 0
    safe = M.where(positive, x, 1)
    return M.clamp_min(M.where(positive, log(safe), -100.0), -100.0)


@backward_name("BinaryCrossEntropyBackward0")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-(target * log(input) + (1 - target) * log(1 - input))``, logs clamped at -100."""
    _check_same_size(input, target, "Using a target size ({t}) that is different to the input "
                     "size ({i}) is deprecated. Please ensure they have the same size.")
    reduction = _Red.resolve(size_average, reduce, reduction)
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_type_name(target)} but expected {_type_name(input)}")
    d = input._data
    if d.__class__ is ndarray and d.size and not ((d >= 0) & (d <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        weight = S.expand(weight, tuple(target.shape))
    loss = (target - 1) * _clamped_log(1 - input, M.log) - target * _clamped_log(input, M.log)
    return _weighted(loss, weight, reduction)


@backward_name("BinaryCrossEntropyWithLogitsBackward0")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid followed by binary cross entropy, computed stably from logits.

    ``pos_weight`` weighs the positive term per class (broadcast over the last dim).
    """
    _check_same_size(input, target, "Target size ({t}) must be the same as input size ({i})")
    reduction = _Red.resolve(size_average, reduce, reduction)
    log_sig = _log_sigmoid(input)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * target + 1)
    loss = (1 - target) * input - log_sig
    return _weighted(loss, weight, reduction)


# ---------------------------------------------------------------------------------------
# Negative log likelihood and cross entropy

def _check_class_target(input, target, weight):
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim <= 2 and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    n_target = target.shape[0] if target.ndim else 0
    if input.ndim >= 2 and input.shape[0] != n_target:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({n_target}).")
    if target.dtype not in (_dt.int64, _dt.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_type_name(target)}")
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if input.ndim == 4 and tuple(target.shape) != expected:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                           f"{list(target.shape)}")
    if input.ndim > 2 and tuple(target.shape) != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    C = input.shape[0 if input.ndim == 1 else 1]
    if weight is not None and weight.numel() != C:
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    return C


def _check_bounds(target, C, ignore_index):
    """Raises PyTorch's IndexError for a concrete out-of-range target; returns whether
    some target may equal ``ignore_index`` (always True for non-concrete targets)."""
    d = target._data
    if d.__class__ is not ndarray:
        return True
    if d.size and d.dtype.kind in "iu":
        # The common case in two reductions: every target a class, none equal to
        # ignore_index (which lies outside their range).
        lo, hi = d.min(), d.max()
        if 0 <= lo and hi < C and not lo <= ignore_index <= hi:
            return False
    ignored = d == ignore_index
    bad = ((d < 0) | (d >= C)) & ~ignored
    if bad.any():
        raise IndexError(f"Target {int(d[bad].flat[0])} is out of bounds.")
    return bool(ignored.any())


def _class_weights(target, weight, dtype, ignore_index):
    """(per-target weight with ignored entries 0, target with ignored entries 0)."""
    keep = target != ignore_index
    safe = M.where(keep, target, 0)
    if weight is None:
        return keep.to(dtype), safe
    w = S.reshape(weight.index_select(0, S.reshape(safe, (-1,))), tuple(safe.shape))
    return M.where(keep, w, 0), safe


@backward_name(lambda input, *a, **k: "NllLoss2DBackward0" if getattr(input, "ndim", 0) == 4
               else "NllLossBackward0")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood: ``-weight[t] * input[n, t]`` for class-index targets ``t``.

    ``input`` is ``(C)``, ``(N, C)`` or ``(N, C, d1, …)`` log-probabilities; targets equal
    to ``ignore_index`` contribute nothing; 'mean' divides by the total target weight.
    """
    reduction = _Red.resolve(size_average, reduce, reduction)
    C = _check_class_target(input, target, weight)
    may_ignore = _check_bounds(target, C, ignore_index)
    unbatched = input.ndim == 1 and target.ndim == 0
    if input.ndim == 1:
        input, target = S.unsqueeze(input, 0), S.reshape(target, (-1,))
    target = target.to(_dt.int64)
    if weight is None and not may_ignore:
        # Every target counts with weight 1: the plain mean of -input[n, t].
        loss = -S.squeeze(gather(input, 1, S.unsqueeze(target, 1)), 1)
        if reduction == "none":
            return S.squeeze(loss, 0) if unbatched else loss
        return R.sum(loss) if reduction == "sum" else R.mean(loss)
    w, safe = _class_weights(target, weight, input.dtype, ignore_index)
    picked = S.squeeze(gather(input, 1, S.unsqueeze(safe, 1)), 1)
    loss = -(picked * w)
    if reduction == "none":
        return S.squeeze(loss, 0) if unbatched else loss
    if reduction == "sum":
        return R.sum(loss)
    return R.sum(loss) / R.sum(w)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy between ``input`` logits and ``target``.

    ``target`` holds class indices (``(N)``, ``(N, d1, …)``; see :func:`nll_loss`) or class
    probabilities of ``input``'s shape. ``label_smoothing`` mixes the target with the
    uniform distribution.
    """
    reduction = _Red.resolve(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if reduction == "mean" and weight is None and label_smoothing == 0:
        out = fused_cross_entropy(input, target, ignore_index, _check_bounds)
        if out is not None:   # Note [One node for cross entropy]
            return out
    class_dim = 0 if input.ndim == 1 else 1
    C = input.shape[class_dim]
    logp = R.log_softmax(input, class_dim)
    wshape = tuple(C if i == class_dim else 1 for i in range(input.ndim))
    if target.is_floating_point() and tuple(target.shape) == tuple(input.shape):
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if weight is not None and weight.numel() != C:
            raise RuntimeError(f"weight tensor should be defined either for all {C} classes or "
                               f"no classes but got weight tensor of shape: {list(weight.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = logp * target
        if weight is not None:
            prod = prod * S.reshape(weight, wshape)
        if reduction == "none":
            return -R.sum(prod, class_dim)
        if reduction == "sum":
            return -R.sum(prod)
        return -R.sum(prod) / (input.numel() / C)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0:
        return nll
    smooth = logp if weight is None else logp * S.reshape(weight, wshape)
    smooth = -R.sum(smooth, class_dim)
    keep = target != ignore_index
    smooth = M.where(keep, smooth, 0)
    if reduction == "mean":
        w, _ = _class_weights(target.to(_dt.int64), weight, input.dtype, ignore_index)
        ret = R.sum(smooth) / R.sum(w)
    elif reduction == "sum":
        ret = R.sum(smooth)
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / C)


# ---------------------------------------------------------------------------------------
# KL divergence

def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence ``target * (log(target) - input)`` with ``input`` in log space.

    ``reduction='batchmean'`` divides the sum by the batch size (the mathematical KL);
    'mean' divides by the number of elements and warns, as PyTorch does.
    """
    if size_average is not None or reduce is not None:
        reduction = _Red.legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    elif reduction != "batchmean":
        _Red.get_enum(reduction)
    if log_target:
        loss = M.exp(target) * (target - input)
    else:
        loss = M.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return R.sum(loss) / input.shape[0] if input.ndim else R.sum(loss)
    return _Red.apply(loss, reduction)


__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
           "cross_entropy", "kl_div"]
