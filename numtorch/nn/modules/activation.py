"""Activation modules: thin Module wrappers over ``nn.functional`` activations."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
           "Softplus", "Sigmoid", "Tanh", "Hardtanh", "Hardsigmoid", "Hardswish", "LogSigmoid",
           "Softsign", "Tanhshrink", "Threshold", "GLU", "Softmax", "LogSoftmax", "Softmin"]


class _Stateless(Module):
    """An activation with no arguments: ``forward`` applies ``_fn``."""

    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""

    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """Applies ``max(0, x)`` elementwise."""
    _fn = F.relu


class ReLU6(_Inplace):
    """Applies ``min(max(0, x), 6)`` elementwise."""
    _fn = F.relu6


class SELU(_Inplace):
    """Applies the scaled exponential linear unit elementwise."""
    _fn = F.selu


class SiLU(_Inplace):
    """Applies ``x * sigmoid(x)`` elementwise."""
    _fn = F.silu


class Mish(_Inplace):
    """Applies ``x * tanh(softplus(x))`` elementwise."""
    _fn = F.mish


class Hardsigmoid(_Inplace):
    """Applies the piecewise linear sigmoid elementwise."""
    _fn = F.hardsigmoid


class Hardswish(_Inplace):
    """Applies ``x * relu6(x + 3) / 6`` elementwise."""
    _fn = F.hardswish


class Sigmoid(_Stateless):
    """Applies ``1 / (1 + exp(-x))`` elementwise."""
    _fn = F.sigmoid


class Tanh(_Stateless):
    """Applies the hyperbolic tangent elementwise."""
    _fn = F.tanh


class LogSigmoid(_Stateless):
    """Applies ``log(sigmoid(x))`` elementwise."""
    _fn = F.logsigmoid


class Softsign(_Stateless):
    """Applies ``x / (1 + |x|)`` elementwise."""
    _fn = F.softsign


class Tanhshrink(_Stateless):
    """Applies ``x - tanh(x)`` elementwise."""
    _fn = F.tanhshrink


class LeakyReLU(Module):
    """Applies ``max(0, x) + negative_slope * min(0, x)`` elementwise."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """Applies ``x if x > 0 else alpha * (exp(x) - 1)`` elementwise."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """Applies ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` elementwise."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """Applies the Gaussian Error Linear Unit; ``approximate='tanh'`` uses the tanh form."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """Applies ``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """Clamps the input to ``[min_val, max_val]``."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class GLU(Module):
    """Gated linear unit over ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _SoftmaxBase(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("dim", None)

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """Applies softmax along ``dim`` (rescales to [0, 1], summing to 1)."""
    _fn = F.softmax


class LogSoftmax(_SoftmaxBase):
    """Applies ``log(softmax(x))`` along ``dim``."""
    _fn = F.log_softmax


class Softmin(_SoftmaxBase):
    """Applies ``softmax(-x)`` along ``dim``."""
    _fn = F.softmin
