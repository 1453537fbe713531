"""``torch.nn.functional``: activations, linear maps, normalization, dropout, embedding,
padding, distances and pooling, as compositions of numtorch ops.

Everything here is written with Tensor ops (never NumPy on tensor data), so autograd,
vmap and jvp apply with no extra rules. Argument checks raise PyTorch's exception types
and messages; checks that need values (index bounds) run only on concrete tensors. The
losses live in ``_functional_losses.py`` and are re-exported here; convolution and max/avg
pooling come from ``numtorch._ops.conv`` (Note [Convolution ops]).
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core.primitive import bind
from .._ops import math as M
from .._ops import reduce as R
from .._ops import shape as S
from .._ops._common import canonical_dim, check_param, check_tensor
from .._ops.creation import ones, rand, tensor as _tensor, zeros as _zeros
from .._ops.index import one_hot  # noqa: F401  (re-exported: F.one_hot)
from .._ops.inplace import inplace as _inplace
from .._ops.linalg import _same_dtype, matmul
from .._ops.linalg_ops import vector_norm
from .._prims import shape as _P
from .._prims.contraction import dot_general
from .._prims.norm import batch_norm as _batch_norm_prim
from ..autograd.grad_mode import no_grad
from ._attention import multi_head_attention_forward  # noqa: F401
from ._interpolate import interpolate, upsample, upsample_bilinear, upsample_nearest  # noqa: F401
from ._fused_linear import fused_linear as _fused_linear
from ._functional_losses import (binary_cross_entropy, binary_cross_entropy_with_logits,  # noqa: F401
                                 cross_entropy, huber_loss, kl_div, l1_loss, mse_loss, nll_loss,
                                 smooth_l1_loss, soft_margin_loss)
from .._ops._backward_names import backward_name

sigmoid = M.sigmoid
tanh = M.tanh


def _apply(input, fn, inplace, name):
    """``fn(input)``, written back into ``input`` when ``inplace`` (autograd-aware)."""
    if inplace:
        return _inplace(input, fn, name)
    return fn(input)


# ---------------------------------------------------------------------------------------
# Linear maps

def linear(input, weight, bias=None):
    """Applies ``y = x A^T + b``; ``input`` is ``(*, in_features)``, ``weight`` ``(out, in)``."""
    check_tensor(input, "input", "linear")
    check_tensor(weight, "weight", "linear")
    if weight.ndim == 2 and input.ndim >= 1:
        k = input.shape[-1]
        if k != weight.shape[1]:
            rows = math.prod(input.shape[:-1])
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                               f"{weight.shape[1]}x{weight.shape[0]})")
        _same_dtype(input, weight)
        out = _fused_linear(input, weight, bias)
        if out is not None:   # Note [One node for linear]
            return out
        out = bind(dot_general, input, weight, contracting=((input.ndim - 1,), (1,)),
                   batch=((), ()))
    else:
        out = matmul(input, S.t(weight) if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """Applies ``y = x1^T A x2 + b`` with ``weight`` of shape ``(out, in1, in2)``."""
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    t = bind(dot_general, input1, weight, contracting=((input1.ndim - 1,), (1,)),
             batch=((), ()))  # (..., out, in2)
    out = R.sum(t * S.unsqueeze(input2, -2), -1)
    return out if bias is None else out + bias


# ---------------------------------------------------------------------------------------
# Activations. Note [Safe branches]: where a formula overflows on the branch `where`
# discards (exp of a large input), the discarded branch is fed a harmless value so that
# its derivative is 0, not 0 * inf = nan.

def relu(input, inplace=False):
    """Applies the rectified linear unit ``max(0, x)`` elementwise (NaN propagates)."""
    return _apply(input, M.relu, inplace, "relu_") if inplace else M.relu(input)


def relu_(input):
    """In-place version of :func:`relu`."""
    return relu(input, inplace=True)


@backward_name("HardtanhBackward0")
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamps ``input`` to ``[min_val, max_val]`` (gradient 0 at and beyond the bounds)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype == _dt.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    for bound in (min_val, max_val):   # Note [Scalars that must fit]: where's check is wider
        check_param(bound, (input,))
    return _apply(input, lambda x: M.where(x <= min_val, min_val, M.where(x >= max_val, max_val, x)),
                  inplace, "hardtanh_")


def relu6(input, inplace=False):
    """Applies ``min(max(0, x), 6)`` elementwise."""
    return hardtanh(input, 0.0, 6.0, inplace)


@backward_name("LeakyReluBackward0")
def leaky_relu(input, negative_slope=0.01, inplace=False):
    """Applies ``max(0, x) + negative_slope * min(0, x)`` elementwise."""
    return _apply(input, lambda x: M.where(x > 0, x, x * negative_slope), inplace, "leaky_relu_")


def _elu(x, alpha, scale, input_scale):
    neg = M.expm1(M.where(x > 0, 0, x) * input_scale) * (alpha * scale)
    return M.where(x > 0, x * scale if scale != 1 else x, neg)


@backward_name("EluBackward0")
def elu(input, alpha=1.0, inplace=False):
    """Applies ``x if x > 0 else alpha * (exp(x) - 1)`` elementwise."""
    return _apply(input, lambda x: _elu(x, alpha, 1.0, 1.0), inplace, "elu_")


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@backward_name("EluBackward0")
def selu(input, inplace=False):
    """Applies ``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return _apply(input, lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE, 1.0), inplace, "selu_")


@backward_name("CeluBackward0")
def celu(input, alpha=1.0, inplace=False):
    """Applies ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` elementwise."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _apply(input, lambda x: _elu(x, alpha, 1.0, 1.0 / alpha), inplace, "celu_")


_SQRT1_2 = 0.70710678118654752440
_GELU_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5


@backward_name("GeluBackward0")
def gelu(input, approximate="none"):
    """Gaussian Error Linear Unit: ``x * Phi(x)``; ``approximate='tanh'`` uses the tanh form."""
    if approximate == "none":
        return input * 0.5 * (1 + M.erf(input * _SQRT1_2))
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * _GELU_BETA
        return input * 0.5 * (1 + M.tanh(inner))
    raise RuntimeError("approximate argument must be either none or tanh.")


@backward_name("SiluBackward0")
def silu(input, inplace=False):
    """Applies ``x * sigmoid(x)`` (the swish function) elementwise."""
    return _apply(input, lambda x: x * M.sigmoid(x), inplace, "silu_")


@backward_name("SoftplusBackward0")
def softplus(input, beta=1.0, threshold=20.0):
    """Applies ``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""
    bx = input * beta
    big = bx > threshold
    soft = M.log1p(M.exp(M.where(big, 0, bx)))
    return M.where(big, input, soft / beta if beta != 1 else soft)


@backward_name("MishBackward0")
def mish(input, inplace=False):
    """Applies ``x * tanh(softplus(x))`` elementwise."""
    return _apply(input, lambda x: x * M.tanh(softplus(x)), inplace, "mish_")


@backward_name("LogSigmoidBackward0")
def logsigmoid(input):
    """Applies ``log(sigmoid(x))`` computed stably."""
    return M.minimum(input, 0) - M.log1p(M.exp(-M.abs(input)))


@backward_name("HardsigmoidBackward0")
def hardsigmoid(input, inplace=False):
    """Applies ``0`` below -3, ``1`` above 3, ``x / 6 + 1/2`` between."""
    return _apply(input, lambda x: M.where(x <= -3, 0, M.where(x >= 3, 1, x / 6 + 0.5)),
                  inplace, "hardsigmoid_")


@backward_name("HardswishBackward0")
def hardswish(input, inplace=False):
    """Applies ``x * relu6(x + 3) / 6`` elementwise."""
    return _apply(input, lambda x: M.where(x <= -3, 0, M.where(x >= 3, x, x * (x + 3) / 6)),
                  inplace, "hardswish_")


def softsign(input):
    """Applies ``x / (1 + |x|)`` elementwise."""
    return input / (M.abs(input) + 1)


def tanhshrink(input):
    """Applies ``x - tanh(x)`` elementwise."""
    return input - M.tanh(input)


@backward_name("ThresholdBackward0")
def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``."""
    for number in (threshold, value):   # Note [Scalars that must fit]: where's check is wider
        check_param(number, (input,))
    return _apply(input, lambda x: M.where(x > threshold, x, value), inplace, "threshold_")


@backward_name("GluBackward0")
def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` where ``a, b`` are the halves of ``input`` on ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = canonical_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    a, b = S.chunk(input, 2, d)
    return a * M.sigmoid(b)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Applies ``exp(x_i) / sum_j exp(x_j)`` along ``dim``."""
    return R.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Applies ``log(softmax(x))`` along ``dim``, computed stably."""
    return R.log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """Applies ``softmax(-x)`` along ``dim``."""
    return R.softmax(-input, dim, dtype)


# ---------------------------------------------------------------------------------------
# Attention

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(Q K^T * scale + mask) V`` over the last two dims (PyTorch's math backend).

    ``attn_mask`` is boolean (True = take part) or added to the scores; ``is_causal``
    masks keys after each query; rows with every key masked give zeros, as PyTorch does.
    With ``enable_gqa`` key/value heads (dim -3) are repeated to match the query heads.
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    L, S_ = query.shape[-2], key.shape[-2]
    if enable_gqa and key.ndim >= 3 and query.shape[-3] != key.shape[-3]:
        reps = query.shape[-3] // key.shape[-3]
        key = S.repeat_interleave(key, reps, -3)
        value = S.repeat_interleave(value, reps, -3)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = matmul(query, S.transpose(key, -2, -1)) * scale
    if is_causal:
        attn_mask = S.tril(ones(L, S_, dtype=_dt.bool_, device=query.device))
    if attn_mask is not None:
        if attn_mask.dtype == _dt.bool_:
            scores = scores.masked_fill(M.logical_not(attn_mask), float("-inf"))
        else:
            scores = scores + attn_mask
    finite = M.isfinite(R.amax(scores, -1, keepdim=True))
    weights = R.softmax(M.where(finite, scores, 0.0), -1)
    weights = M.where(finite, weights, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return matmul(weights, value)


# ---------------------------------------------------------------------------------------
# Distances and normalization of vectors

def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """Divides ``input`` by its ``p``-norm along ``dim`` (at least ``eps``)."""
    canonical_dim(dim, input.ndim)
    denom = M.clamp_min(vector_norm(input, p, dim, True), eps)
    result = input / denom
    if out is not None:
        return out.copy_(result)
    return result


def _clamp_value_only(x, lo):
    # The value of clamp_min(x, lo) with the gradient of x (PyTorch clamps under no_grad).
    return x + (M.clamp_min(x, lo) - x).detach()


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine similarity ``x1 . x2 / (max(|x1|, eps) * max(|x2|, eps))`` along ``dim``."""
    x1, x2 = S.broadcast_tensors(x1, x2)
    n1 = _clamp_value_only(vector_norm(x1, 2, dim, True), eps)
    n2 = _clamp_value_only(vector_norm(x2, 2, dim, True), eps)
    return R.sum((x1 / n1) * (x2 / n2), dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension."""
    diff = x1 - x2 + eps
    return vector_norm(diff, p, -1 if diff.ndim else None, keepdim)


# ---------------------------------------------------------------------------------------
# Normalization layers

def _check_affine_shape(t, name, shape, message):
    if t is not None and tuple(t.shape) != tuple(shape):
        raise RuntimeError(message.format(name=name, got=list(t.shape)))


@backward_name("NativeLayerNormBackward0")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalizes over the trailing ``normalized_shape`` dims: ``(x - mean) / sqrt(var + eps)``."""
    if isinstance(normalized_shape, numbers.Integral):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    ns = tuple(int(s) for s in normalized_shape)
    k = len(ns)
    for name, t in (("weight", weight), ("bias", bias)):
        _check_affine_shape(t, name, ns, "Expected {name} to be of same shape as "
                            "normalized_shape, but got {name} of shape {got} and "
                            f"normalized_shape = {list(ns)}")
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in ns)}], but got input of size"
                           f"{list(input.shape)}")
    axes = tuple(range(input.ndim - k, input.ndim))
    out = _normalize(input, axes, eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def _normalize(x, axes, eps):
    mean = R.mean(x, axes, keepdim=True)
    xc = x - mean
    var = R.mean(xc * xc, axes, keepdim=True)
    return xc * M.rsqrt(var + eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims."""
    ns = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
    k = len(ns)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in ns)}], but got input of size"
                           f"{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    axes = tuple(range(input.ndim - k, input.ndim))
    out = input * M.rsqrt(R.mean(input * input, axes, keepdim=True) + eps)
    return out if weight is None else out * weight


def _channel_shape(input):
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


@backward_name("NativeBatchNormBackward0")
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalization over all dims but the channel dim 1.

    In training, normalizes with the batch statistics and updates ``running_mean`` and
    ``running_var`` in place (``(1 - momentum) * running + momentum * batch``, the variance
    unbiased); otherwise normalizes with the running statistics. Training mode is one
    primitive, eval mode a per-channel scale and shift (Note [Batch norm primitive]).
    """
    check_tensor(input, "input", "batch_norm")
    if input.ndim < 2:
        raise ValueError(f"Expected 2D or higher input to batch_norm (got {input.ndim}D input)")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"batch_norm: expected a floating point input, got {input.dtype}")
    C = input.shape[1]
    axes = (0,) + tuple(range(2, input.ndim))
    count = input.numel() // C if C else 0
    if training and count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {input.shape}")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != C:
            raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
    shape = _channel_shape(input)
    if training:
        dt, dev = input.dtype, input.device
        w = ones(C, dtype=dt, device=dev) if weight is None else weight.reshape(C).to(dt)
        b = _zeros(C, dtype=dt, device=dev) if bias is None else bias.reshape(C).to(dt)
        out, mean, var = bind(_batch_norm_prim, input, w, b, axes=axes, eps=float(eps))
        with no_grad():
            if running_mean is not None:
                _update_running(running_mean, mean.detach(), momentum)
            if running_var is not None:
                unbiased = var.detach() * (count / max(count - 1, 1))
                _update_running(running_var, unbiased, momentum)
        return out
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    scale = M.rsqrt(running_var.reshape(C) + eps)
    if weight is not None:
        scale = scale * weight.reshape(C)
    shift = -running_mean.reshape(C) * scale
    if bias is not None:
        shift = shift + bias.reshape(C)
    return input * scale.reshape(shape).to(input.dtype) + shift.reshape(shape).to(input.dtype)


def _update_running(running, batch_stat, momentum):
    # running = momentum * batch + (1 - momentum) * running, as ATen computes it.
    _inplace(running, lambda r: batch_stat.to(r.dtype) * momentum + r * (1 - momentum),
             "batch_norm_update_stats")


@backward_name("NativeGroupNormBackward0")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization: normalizes each group of ``C / num_groups`` channels per sample."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    N, C = input.shape[0], input.shape[1]
    if C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} "
                               f"and input of shape {list(input.shape)}")
    size = [N * C // num_groups, num_groups] + list(input.shape[2:])
    if math.prod(size) // num_groups == 1:   # PyTorch's _verify_batch_size
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")
    out = _normalize(input.reshape(N, num_groups, -1), (2,), eps).reshape(tuple(input.shape))
    shape = _channel_shape(input)
    if weight is not None:
        out = out * weight.reshape(shape)
    return out if bias is None else out + bias.reshape(shape)


# ---------------------------------------------------------------------------------------
# Dropout: Note [Dropout randomness] the mask comes from numtorch.rand of the input's
# (per-example) shape, so vmap's randomness policy ('error' | 'different' | 'same') applies.

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_with_noise_shape(input, p, training, inplace, noise_shape):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _apply(input, lambda x: x * 0.0, inplace, "dropout_")
    keep = 1.0 - p
    noise = (rand(*noise_shape, dtype=input.dtype, device=input.device) < keep).to(input.dtype) / keep
    return _apply(input, lambda x: x * noise, inplace, "dropout_")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``."""
    return _dropout_with_noise_shape(input, p, training, inplace, tuple(input.shape))


def _feature_noise_shape(input):
    # One draw per (sample, channel): the first two dims, broadcast over the rest.
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a ``(N, C, L)`` or ``(C, L)`` input with probability ``p``."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an optional "
                           "batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:
        return S.squeeze(dropout1d(S.unsqueeze(input, 0), p, training), 0) if not inplace else \
            _apply(input, lambda x: S.squeeze(dropout1d(S.unsqueeze(x, 0), p, training), 0),
                   True, "dropout1d_")
    return _dropout_with_noise_shape(input, p, training, inplace, _feature_noise_shape(input))


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a ``(N, C, H, W)`` input with probability ``p``.

    As in PyTorch, a 3-D input is treated as ``(N, C, L)`` (with a warning).
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch "
                      "to using dropout1d instead.", stacklevel=2)
    return _dropout_with_noise_shape(input, p, training, inplace, _feature_noise_shape(input))


# ---------------------------------------------------------------------------------------
# Embedding

@backward_name("EmbeddingBackward0")
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Looks up rows of ``weight`` at the integer indices ``input``.

    The row at ``padding_idx`` receives no gradient; with ``max_norm`` the referenced
    rows of ``weight`` are renormalized in place first; ``scale_grad_by_freq`` divides
    each row's gradient by its index's frequency in ``input``. ``sparse`` is accepted,
    but gradients are always dense.
    """
    if input._data.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.type()} instead "
                           "(while checking arguments for embedding)")
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx >= n or padding_idx < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % n
    d = input._data
    if d.__class__ is ndarray and d.size and (d.min() < 0 or d.max() >= n):
        raise IndexError("index out of range in self")
    flat = S.reshape(input, (-1,))
    if max_norm is not None:
        _embedding_renorm(weight, flat, max_norm, norm_type)
    rows = weight.index_select(0, flat)
    if padding_idx is not None:
        rows = M.where(S.unsqueeze(flat == padding_idx, 1), rows.detach(), rows)
    if scale_grad_by_freq:
        # Same values; each row's gradient divided by how often its index occurs here.
        counts = R.sum(S.unsqueeze(flat, 1) == S.unsqueeze(flat, 0), 1).to(rows.dtype)
        frozen = rows.detach()
        rows = frozen + (rows - frozen) / S.unsqueeze(counts, 1)
    return S.reshape(rows, tuple(input.shape) + (weight.shape[1],))


def _embedding_renorm(weight, flat, max_norm, norm_type):
    with no_grad():
        rows = weight.index_select(0, flat)
        norms = vector_norm(rows, norm_type, 1, True)
        scale = M.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_put_((flat,), rows * scale)


# ---------------------------------------------------------------------------------------
# Padding

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    """Pads the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_2nd_last, …)``.

    ``mode``: 'constant' (with ``value``, default 0; negative pads crop), 'reflect',
    'replicate' or 'circular'.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pairs = [(input.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]
    if mode == "constant":
        return _pad_constant(input, pairs, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if not 1 <= k <= 3 or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for d, lo, hi in pairs:
        out = out.index_select(d, _tensor(_pad_indices(mode, input.shape[d], lo, hi, d, input)))
    return out


def _pad_indices(mode, n, lo, hi, d, input):
    # Negative pads crop first; the padding then wraps/reflects within the cropped range
    # (PyTorch's order).
    if mode == "reflect" and (lo >= n or hi >= n):
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of "
                           f"input {list(input.shape)}")
    if mode == "circular" and (lo > n or hi > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    start = max(-lo, 0)
    m = n - start - max(-hi, 0)
    j = np.arange(-max(lo, 0), m + max(hi, 0))
    if mode == "reflect":
        j = np.where(j < 0, -j, np.where(j >= m, 2 * (m - 1) - j, j))
    elif mode == "replicate":
        j = np.clip(j, 0, m - 1)
    else:
        j = j % m
    return (j + start).astype(np.int64)


def _pad_constant(input, pairs, value):
    config = [(0, 0, 0)] * input.ndim
    x = input
    for d, lo, hi in pairs:
        n = x.shape[d]
        if n + lo + hi < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted "
                               f"in a negative output size, which is invalid. Check dimension "
                               f"{d} of your input.")
        if lo < 0 or hi < 0:
            x = S.slice_dim(x, d, max(-lo, 0), n - max(-hi, 0))
        config[d] = (max(lo, 0), max(hi, 0), 0)
    if x is input and all(c == (0, 0, 0) for c in config):
        return S.clone(input)
    kind = input._data.dtype.kind
    fill = bool(value) if kind == "b" else (int(value) if kind in "iu" else float(value))
    return bind(_P.pad, x, padding_value=fill, config=tuple(config))


# ---------------------------------------------------------------------------------------
# Note [Convolution ops]: convolution and pooling are owned by numtorch._ops.conv (another
# engineer's module); each name is re-exported when that module provides it and otherwise
# raises NotImplementedError naming the missing op, so the rest of nn works without it.

def _missing(name):
    def op(*args, **kwargs):
        raise NotImplementedError(f"nn.functional.{name} needs numtorch._ops.conv.{name}, "
                                  "which this build of numtorch does not provide yet")
    op.__name__ = name
    return op


try:
    from .._ops import conv as _conv_ops
except ImportError:  # pragma: no cover - depends on the conv engineer's progress
    _conv_ops = None

_CONV_NAMES = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
               "avg_pool2d", "avg_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
               "max_pool3d_with_indices", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
               "adaptive_avg_pool3d", "unfold", "fold")
for _name in _CONV_NAMES:
    globals()[_name] = getattr(_conv_ops, _name, None) or _missing(_name)
del _name
from ._functional_surface import *  # noqa: E402,F401,F403  (prelu, rrelu, shrinks, pixel_shuffle, in-place spellings)
from ._functional_losses_surface import *  # noqa: E402,F401,F403  (more losses, instance_norm)
from ._adaptive_max_pool import *  # noqa: E402,F401,F403  (adaptive_max_pool1d/2d/3d)
from ._embedding_bag import *  # noqa: E402,F401,F403  (embedding_bag)
