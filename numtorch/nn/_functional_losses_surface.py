"""More loss functions of ``nn.functional`` (re-exported there): margin ranking, hinge
embedding, cosine embedding, triplet margin, Poisson and Gaussian negative log likelihood,
multi-label soft margin; and ``instance_norm``.

Each is a composition of numtorch ops with PyTorch's formula, argument checks and
reductions (``_reduction.py``); this file must not define primitives. Docstrings follow
PyTorch's.
"""
from __future__ import annotations

import math

from .._ops import math as M
from .._ops import reduce as R
from .._ops import shape as S
from .._ops import creation
from . import _reduction as _Red

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "multilabel_soft_margin_loss", "instance_norm"]


def _F():
    from . import functional
    return functional


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin), reduced by ``reduction``."""
    reduction = _Red.resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    loss = M.clamp_min(M.add(M.mul(M.neg(target), M.sub(input1, input2)), margin), 0)
    return _Red.apply(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target is 1, max(0, margin - x) where target is -1, reduced by
    ``reduction``."""
    reduction = _Red.resolve(size_average, reduce, reduction)
    zeros = M.mul(input, 0)
    margin_clamp = M.where(M.ne(target, 1), M.clamp_min(M.sub(margin, input), 0), zeros)
    output_margin = M.where(M.ne(target, -1), input, zeros)
    return _Red.apply(M.add(output_margin, margin_clamp), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where target is -1,
    reduced by ``reduction``."""
    reduction = _Red.resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim():
        raise RuntimeError(f"cosine_embedding_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    if target.dim() != input1.dim() - 1:
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}."
                           if target.dim() == 0 else
                           f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    d = input1.dim() - 1
    prod = R.sum(M.mul(input1, input2), d)
    mag1 = M.add(R.sum(M.mul(input1, input1), d), eps)
    mag2 = M.add(R.sum(M.mul(input2, input2), d), eps)
    cos = M.div(prod, M.sqrt(M.mul(mag1, mag2)))
    zeros = M.mul(cos, 0)
    pos = M.where(M.eq(target, 1), M.sub(1, cos), zeros)
    neg = M.where(M.eq(target, -1), M.clamp_min(M.sub(cos, margin), 0), zeros)
    return _Red.apply(M.add(pos, neg), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with d the pairwise p-norm distance (``swap``:
    the distance from the negative to the positive when smaller), reduced by
    ``reduction``."""
    reduction = _Red.resolve(size_average, reduce, reduction)
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {dims[0]}D, "
                           f"positive {dims[1]}D, and negative {dims[2]}D inputs")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    pd = _F().pairwise_distance
    d_pos, d_neg = pd(anchor, positive, p, eps), pd(anchor, negative, p, eps)
    if swap:
        d_neg = M.minimum(d_neg, pd(positive, negative, p, eps))
    return _Red.apply(M.clamp_min(M.add(M.sub(d_pos, d_neg), margin), 0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None,
                     eps=1e-8, reduce=None, reduction="mean"):
    """Negative log likelihood loss with Poisson distribution of target:
    exp(input) - target * input (``log_input``) or input - target * log(input + eps);
    ``full`` adds the Stirling approximation term."""
    reduction = _Red.resolve(size_average, reduce, reduction)
    if log_input:
        loss = M.sub(M.exp(input), M.mul(target, input))
    else:
        loss = M.sub(input, M.mul(target, M.log(M.add(input, eps))))
    if full:
        # Stirling's term, 0 for target <= 1; computed on a safe target there so that
        # neither it nor its derivative is NaN (0 * log 0) in the branch not taken
        big = M.gt(target, 1)
        t = M.where(big, target, creation.ones_like(target))
        stirling = M.add(M.sub(M.mul(t, M.log(t)), t), M.mul(M.log(M.mul(t, 2 * math.pi)), 0.5))
        loss = M.add(loss, M.where(big, stirling, creation.zeros_like(stirling)))
    return _Red.apply(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood: 0.5 * (log(max(var, eps)) + (input - target)**2 /
    max(var, eps)) (+ 0.5 * log(2 pi) with ``full``), reduced by ``reduction``."""
    from .._core.tensor import Tensor
    if not isinstance(var, Tensor):
        var = creation.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = S.unsqueeze(var, -1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    _Red.get_enum(reduction)
    v = var._data
    import numpy as np
    if v.__class__ is np.ndarray and (v < 0).any():
        raise ValueError("var has negative entry/entries")
    var = _clamp_keep_grad(var, eps)
    loss = M.mul(M.add(M.log(var), M.div(M.square(M.sub(input, target)), var)), 0.5)
    if full:
        loss = M.add(loss, 0.5 * math.log(2 * math.pi))
    return _Red.apply(loss, reduction)


def _clamp_keep_grad(var, eps):
    # PyTorch clamps var in place under no_grad: values below eps become eps while the
    # gradient still flows to var as if unclamped.
    return M.add(var, M.sub(M.clamp_min(var, eps), var).detach())


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(target * log(sigmoid(x)) + (1 - target) * log(sigmoid(-x))) averaged over the
    classes (dimension 1), reduced over the batch by ``reduction``."""
    reduction = _Red.resolve(size_average, reduce, reduction)
    logsig = _F().logsigmoid
    loss = M.neg(M.add(M.mul(target, logsig(input)), M.mul(M.sub(1, target), logsig(M.neg(input)))))
    if weight is not None:
        loss = M.mul(loss, weight)
    class_dim = input.dim() - 1
    loss = M.div(R.sum(loss, class_dim), input.shape[class_dim])
    return _Red.apply(loss, reduction)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Applies Instance Normalization independently for each channel in every data sample
    within a batch: each (sample, channel) slice is normalized by its own statistics."""
    if input.dim() < 3:
        raise ValueError(f"Expected 2D or more spatial input (got {input.dim()}D input)")
    n, c = input.shape[:2]
    # per-instance copies of the running statistics (batch_norm updates them in place)
    rm = None if running_mean is None else S.reshape(
        S.expand(S.unsqueeze(running_mean, 0), n, c), (n * c,)).clone()
    rv = None if running_var is None else S.reshape(
        S.expand(S.unsqueeze(running_var, 0), n, c), (n * c,)).clone()
    w = None if weight is None else S.reshape(S.expand(S.unsqueeze(weight, 0), n, c), (n * c,))
    b = None if bias is None else S.reshape(S.expand(S.unsqueeze(bias, 0), n, c), (n * c,))
    x = S.reshape(input, (1, n * c) + tuple(input.shape[2:]))
    out = _F().batch_norm(x, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        # each instance updated its own copy of the running statistics; PyTorch keeps
        # their mean over the batch
        from ..autograd.grad_mode import no_grad
        with no_grad():
            for running, updated in ((running_mean, rm), (running_var, rv)):
                if running is not None:
                    running.copy_(R.mean(S.reshape(updated, (n, c)), 0))
    return S.reshape(out, tuple(input.shape))
