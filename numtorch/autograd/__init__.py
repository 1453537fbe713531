"""Eager autograd: ``backward``, ``grad``, grad mode, ``Function`` and ``functional``."""
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .api import backward, grad  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401

from . import functional  # noqa: E402,F401


def __getattr__(name):
    # torch.autograd.gradcheck / gradgradcheck live in numtorch.testing (loaded on first use).
    if name in ("gradcheck", "gradgradcheck"):
        from ..testing import _gradcheck
        return getattr(_gradcheck, name)
    raise AttributeError(f"module 'numtorch.autograd' has no attribute '{name}'")
