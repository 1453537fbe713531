"""``optim.SGD``: stochastic gradient descent with momentum, dampening, Nesterov, weight decay."""
from __future__ import annotations

from .._core.tensor import Tensor
from .optimizer import (Optimizer, _check_lr, _eval_closure, _set_group_defaults, _to_scalar,
                        _use_grad_for_differentiable)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Implements stochastic gradient descent (optionally with momentum).

    With momentum ``mu`` and dampening ``tau``: ``b = mu * b + (1 - tau) * g`` (``b = g`` at
    the first step), then ``p -= lr * b`` (or ``lr * (g + mu * b)`` with ``nesterov``).
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _set_group_defaults(self, nesterov=False, maximize=False, foreach=None,
                            differentiable=False, fused=False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs a single optimization step; returns ``closure()``'s loss if given."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            momentum = group["momentum"]
            for p in group["params"]:
                if p.grad is not None:
                    params.append(p)
                    grads.append(p.grad)
                    if momentum != 0:
                        bufs.append(self.state[p].get("momentum_buffer"))
            sgd(params, grads, bufs, weight_decay=group["weight_decay"], momentum=momentum,
                lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                maximize=group["maximize"])
            if momentum != 0:
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize, foreach=None, fused=None, has_sparse_grad=False, grad_scale=None,
        found_inf=None):
    """Functional SGD: updates ``params`` in place (PyTorch's single-tensor algorithm)."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = d_p_list[i] if not maximize else -d_p_list[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.clone().detach()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        if isinstance(lr, Tensor):   # a traced tensor lr (`_to_scalar`): no alpha=
            param.add_(grad * -lr)   # (rounds as alpha does: -lr in param's dtype, times)
        else:
            param.add_(grad, alpha=-lr)
