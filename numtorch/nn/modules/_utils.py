"""Helpers shared by the layer files: registering ``weight``/``bias`` Parameters and
PyTorch's two standard initializations of them (fan-in uniform, and ones/zeros)."""
from __future__ import annotations

import math

from ..._ops.creation import empty
from .. import init
from ..parameter import Parameter


def register_weight_bias(module, weight_shape, bias_shape, *, affine=True, bias=True,
                         device=None, dtype=None):
    """Registers uninitialized ``weight`` and ``bias`` Parameters on ``module``; a disabled
    one (``affine=False`` disables both) is registered as ``None``, as PyTorch does."""
    if affine:
        module.weight = Parameter(empty(weight_shape, device=device, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(empty(bias_shape, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def reset_fan_in_uniform(weight, bias):
    """Linear/Conv initialization: ``kaiming_uniform_(a=sqrt(5))`` for the weight, which is
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


def reset_ones_zeros(weight, bias):
    """Normalization-layer initialization: weight ones, bias zeros (each when present)."""
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)
