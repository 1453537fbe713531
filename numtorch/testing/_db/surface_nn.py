"""OpInfo entries: ``nn.functional`` prelu, rrelu (evaluation), hardshrink, softshrink,
pixel_shuffle and pixel_unshuffle (nn/_functional_surface.py)."""
from __future__ import annotations

import numpy as np

import numtorch.nn.functional as F

from ..opinfo import SAME, OpInfo, SampleInput, make, register


def _functional(name, **kw):
    """An entry for ``numtorch.nn.functional.<name>`` (no top-level function)."""
    return OpInfo(f"nn.functional.{name}", op=getattr(F, name), method=None, inplace=None,
                  torch_op=lambda t: getattr(t.nn.functional, name), result_dtype=SAME, **kw)


def _prelu_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3, 4), dtype, requires_grad), (make((3,), dtype, requires_grad),))
    yield SampleInput(make((5,), dtype, requires_grad), (make((1,), dtype, requires_grad),),
                      name="shared")


def _prelu_ref(x, w):
    w = w.reshape((-1,) + (1,) * (x.ndim - 2)) if w.size > 1 else w.reshape(())
    return np.where(x > 0, x, w * x)


def _unary(*args, shape=(3, 4)):
    def gen(dtype, requires_grad):
        yield SampleInput(make(shape, dtype, requires_grad), args)
    return gen


def _shuffle_ref(x, r):
    *b, c, h, w = x.shape
    y = x.reshape(*b, c // (r * r), r, r, h, w)
    nb = len(b)
    return y.transpose(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2).reshape(
        *b, c // (r * r), h * r, w * r)


def _unshuffle_ref(x, r):
    *b, c, h, w = x.shape
    y = x.reshape(*b, c, h // r, r, w // r, r)
    nb = len(b)
    return y.transpose(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3).reshape(
        *b, c * r * r, h // r, w // r)


register(
    _functional("prelu", ref=_prelu_ref, sample_inputs=_prelu_samples, aliases=("prelu",)),
    _functional("rrelu", ref=lambda x, lo, hi: np.where(x >= 0, x, x * (lo + hi) / 2),
                sample_inputs=_unary(0.1, 0.3), aliases=("rrelu",)),
    _functional("hardshrink", ref=lambda x, l=0.5: np.where(np.abs(x) > l, x, 0),
                sample_inputs=_unary(0.3), aliases=("hardshrink",)),
    _functional("softshrink", ref=lambda x, l=0.5: np.where(x > l, x - l, np.where(x < -l, x + l, 0)),
                sample_inputs=_unary(0.3)),
    _functional("pixel_shuffle", ref=_shuffle_ref, sample_inputs=_unary(2, shape=(2, 8, 2, 3)),
                aliases=("pixel_shuffle",)),
    _functional("pixel_unshuffle", ref=_unshuffle_ref, sample_inputs=_unary(2, shape=(1, 2, 4, 6)),
                aliases=("pixel_unshuffle",)),
)


# ---------------------------------------------------------------------------------------
# Losses and instance_norm (nn/_functional_losses_surface.py)

def _sign(shape, dtype):
    """A +-1 target; int64, because the losses compare it with 1 and -1 (a float target
    perturbed by the derivative columns would leave both branches)."""
    from numtorch import int64
    return make(shape, dtype, exclude_zero=True).sign().to(int64)


def _loss_samples(kind):
    def gen(dtype, requires_grad):
        def m(*shape, **kw):
            return make(shape, dtype, requires_grad, **kw)
        if kind == "margin_ranking":
            yield SampleInput(m(4), (m(4), _sign((4,), dtype)), dict(margin=0.2))
            yield SampleInput(m(2, 3), (m(2, 3), _sign((2, 3), dtype)), dict(reduction="none"),
                              name="none")
        elif kind == "hinge":
            yield SampleInput(m(2, 3), (_sign((2, 3), dtype),), dict(margin=0.5))
        elif kind == "cosine":
            yield SampleInput(m(3, 4), (m(3, 4), _sign((3,), dtype)), dict(margin=0.1))
        elif kind == "triplet":
            yield SampleInput(m(3, 4), (m(3, 4), m(3, 4)))
            yield SampleInput(m(3, 4), (m(3, 4), m(3, 4)), dict(p=1, swap=True, reduction="sum"),
                              name="swap")
        elif kind == "poisson":
            t = make((3, 4), dtype, low=0, high=4).round()
            yield SampleInput(m(3, 4), (t,))
            # full: targets off the kink of Stirling's term at 1 (the derivative columns
            # differentiate in the target too); target <= 1 is covered by the layer tests
            yield SampleInput(m(3, 4, low=0.5, high=2), (make((3, 4), dtype, low=1.5, high=4),),
                              dict(log_input=False, full=True), name="full")
        elif kind == "gaussian":
            yield SampleInput(m(3, 4), (m(3, 4), m(3, 4, low=0.5, high=2)))
            yield SampleInput(m(3, 4), (m(3, 4), m(3, 1, low=0.5, high=2)),
                              dict(full=True, reduction="sum"), name="full_bcast")
        elif kind == "multilabel":
            yield SampleInput(m(3, 4), (make((3, 4), dtype, low=0, high=1).round(),))
        else:  # instance_norm
            yield SampleInput(m(2, 3, 5), (), dict(weight=m(3), bias=m(3)))
            yield SampleInput(m(1, 2, 3, 3), name="2d")
    return gen


def _log_sigmoid(x):
    return -np.logaddexp(0, -x)


def _reduce(loss, reduction="mean"):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _margin_ranking_ref(a, b, y, margin=0, reduction="mean"):
    return _reduce(np.maximum(-y * (a - b) + margin, 0), reduction)


def _hinge_ref(x, y, margin=1.0, reduction="mean"):
    return _reduce(np.where(y == 1, x, 0) + np.where(y == -1, np.maximum(margin - x, 0), 0),
                   reduction)


def _cosine_ref(a, b, y, margin=0, reduction="mean"):
    cos = (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))
    return _reduce(np.where(y == 1, 1 - cos, np.maximum(cos - margin, 0)), reduction)


def _triplet_ref(a, pos, neg, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    def d(x, y):
        return np.linalg.norm(x - y + eps, ord=p, axis=-1)
    dn = d(a, neg)
    if swap:
        dn = np.minimum(dn, d(pos, neg))
    return _reduce(np.maximum(d(a, pos) - dn + margin, 0), reduction)


def _poisson_ref(x, t, log_input=True, full=False, eps=1e-8, reduction="mean"):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        with np.errstate(all="ignore"):
            st = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
        loss = loss + np.where(t > 1, st, 0)
    return _reduce(loss, reduction)


def _gaussian_ref(x, t, var, full=False, eps=1e-6, reduction="mean"):
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - t) ** 2 / var) + (0.5 * np.log(2 * np.pi) if full else 0)
    return _reduce(loss, reduction)


def _multilabel_ref(x, t, weight=None, reduction="mean"):
    loss = -(t * _log_sigmoid(x) + (1 - t) * _log_sigmoid(-x))
    return _reduce(loss.mean(-1), reduction)


def _instance_norm_ref(x, weight=None, bias=None, eps=1e-5, **kw):
    axes = tuple(range(2, x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return y * (1 if weight is None else weight.reshape(shape)) + (
        0 if bias is None else bias.reshape(shape))


register(
    _functional("margin_ranking_loss", ref=_margin_ranking_ref,
                sample_inputs=_loss_samples("margin_ranking")),
    _functional("hinge_embedding_loss", ref=_hinge_ref, sample_inputs=_loss_samples("hinge")),
    _functional("cosine_embedding_loss", ref=_cosine_ref, sample_inputs=_loss_samples("cosine")),
    _functional("triplet_margin_loss", ref=_triplet_ref, sample_inputs=_loss_samples("triplet")),
    _functional("poisson_nll_loss", ref=_poisson_ref, sample_inputs=_loss_samples("poisson")),
    _functional("gaussian_nll_loss", ref=_gaussian_ref, sample_inputs=_loss_samples("gaussian")),
    _functional("multilabel_soft_margin_loss", ref=_multilabel_ref,
                sample_inputs=_loss_samples("multilabel")),
    _functional("instance_norm", ref=_instance_norm_ref,
                sample_inputs=_loss_samples("instance_norm")),
)
