"""``nn.utils``: gradient clipping and flattening parameters to/from one vector."""
from __future__ import annotations

from ..._core.tensor import Tensor
from ..._ops import math as M
from ..._ops import shape as S
from ..._ops.creation import tensor as _tensor
from ..._ops.linalg_ops import vector_norm
from ...autograd.grad_mode import no_grad
from . import rnn  # noqa: F401  (nn.utils.rnn: packed sequences)

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their total ``norm_type``-norm is at most
    ``max_norm``; returns the total norm before clipping."""
    grads = _grads(parameters)
    if not grads:
        return _tensor(0.0)
    with no_grad():
        norm_type = float(norm_type)
        total = vector_norm(S.stack([vector_norm(g, norm_type) for g in grads]), norm_type)
        if error_if_nonfinite and not bool(M.isfinite(total)):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                               "`parameters` is non-finite, so it cannot be clipped. To disable "
                               "this error and scale the gradients by the non-finite norm "
                               "anyway, set `error_if_nonfinite=False`")
        coef = M.clamp(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps the gradients in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    """Flattens the parameters into one 1-D tensor."""
    return S.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copies slices of the 1-D ``vec`` into the parameters' data, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
