"""``gradcheck`` and ``gradgradcheck``: analytical Jacobians against central differences.

This module owns checking derivatives numerically, with PyTorch's signatures and
defaults (``eps=1e-6, atol=1e-5, rtol=1e-3``). It uses only the public autograd API
(``autograd.grad``), so it checks eager autograd and any rule reached through it.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._core.tensor import Tensor, wrap_array


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when a Jacobian does not match (PyTorch's type)."""


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _differentiable_inputs(inputs):
    """(inputs as a tuple, positions of the tensors requiring grad)."""
    inputs = _as_tuple(inputs)
    return inputs, [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def real_outputs(out):
    """The real floating-point tensors among ``out``; a complex output counts as two
    (its real and imaginary parts), as in PyTorch's gradcheck."""
    if isinstance(out, Tensor):
        if out.dtype.is_complex:
            from .._ops.math import imag, real
            return [real(out), imag(out)]
        return [out] if out.dtype.is_floating_point else []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in real_outputs(o)]
    return []


def _array(t):
    return np.array(t.detach()._concrete("gradcheck"), dtype=t.dtype.np)


def _like(x, a):
    """A fresh leaf holding ``a`` that requires grad iff ``x`` did (for nested checks)."""
    if not isinstance(x, Tensor):
        return a
    t = wrap_array(a)
    return t.requires_grad_() if x.requires_grad else t


def _numerical_jacobians(func, inputs, diff, eps):
    """J[i][o]: (numel(input i), numel(output o)) by central differences in float64."""
    base = [_array(x) if isinstance(x, Tensor) else x for x in inputs]

    def run(arrays):
        args = [_like(x, a) for x, a in zip(inputs, arrays)]
        return [np.array(o.detach()._concrete("gradcheck"), dtype=np.float64).reshape(-1)
                for o in real_outputs(func(*args))]

    jacobians = []
    for i in diff:
        x = base[i]
        cols = []
        for j in range(x.size):
            plus = [a.copy() if k == i else a for k, a in enumerate(base)]
            minus = [a.copy() if k == i else a for k, a in enumerate(base)]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            cols.append([(p - m) / (2 * eps) for p, m in zip(run(plus), run(minus))])
        n_out = [o.size for o in run(base)]
        jacobians.append([np.stack([c[o] for c in cols]) if cols else np.zeros((0, n))
                          for o, n in enumerate(n_out)])
    return jacobians


def _analytical_jacobians(func, inputs, diff):
    """Rows of J by one backward pass per output element (``autograd.grad``)."""
    from .. import autograd
    from .._ops.creation import zeros_like
    outs = real_outputs(func(*inputs))
    targets = [inputs[i] for i in diff]
    jac = [[np.zeros((targets[k].numel(), o.numel())) for o in outs] for k in range(len(diff))]
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for j in range(o.numel()):
            g = zeros_like(o)
            g.view(-1)[j] = 1.0
            grads = autograd.grad(o, targets, g, retain_graph=True, allow_unused=True)
            for k, (t, gr) in enumerate(zip(targets, grads)):
                if gr is None:
                    continue
                if tuple(gr.shape) != tuple(t.shape):
                    raise GradcheckError(f"Gradient has incorrect size: expected "
                                         f"{tuple(t.shape)}, got {tuple(gr.shape)}")
                if gr.dtype != t.dtype:
                    raise GradcheckError(f"Gradient has dtype mismatch: expected {t.dtype}, "
                                         f"got {gr.dtype}")
                jac[k][oi][:, j] = np.asarray(gr._concrete("gradcheck"), dtype=np.float64).reshape(-1)
    return jac


def _fail(raise_exception, message):
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Checks the gradients of ``func`` at ``inputs`` against central finite differences.

    Every floating-point tensor in ``inputs`` with ``requires_grad`` is perturbed by
    ``±eps`` element by element; the resulting Jacobian must match the one backward
    computes within ``atol + rtol * |numerical|``. Use float64 inputs. Returns True, or
    raises ``GradcheckError`` (returns False with ``raise_exception=False``). With
    ``check_forward_ad`` the Jacobian by ``func.jvp`` is checked too. Complex outputs count
    as their real and imaginary parts; complex inputs are not supported. ``nondet_tol``,
    ``check_undefined_grad``, ``check_grad_dtypes``, the batched checks, ``fast_mode`` and
    ``masked`` are accepted for PyTorch compatibility and ignored (every Jacobian is full).

    >>> import numtorch as torch
    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> gradcheck(torch.sin, (x,))
    True
    """
    inputs, diff = _differentiable_inputs(inputs)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in diff:
        if inputs[i].dtype.is_complex:
            raise NotImplementedError("numtorch's gradcheck supports real inputs only")
        if inputs[i].dtype.name != "float64":
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex. ", UserWarning)
    if check_backward_ad:
        numerical = _numerical_jacobians(func, inputs, diff, eps)
        analytical = _analytical_jacobians(func, inputs, diff)
        for k, i in enumerate(diff):
            for o, (n, a) in enumerate(zip(numerical[k], analytical[k])):
                if n.shape != a.shape or not np.allclose(a, n, rtol=rtol, atol=atol):
                    return _fail(raise_exception, _mismatch_message(o, i, n, a))
    if check_forward_ad:
        ok = _check_forward_ad(func, inputs, diff, eps, atol, rtol, raise_exception)
        if not ok:
            return False
    return True


def _mismatch_message(o, i, numerical, analytical):
    with np.printoptions(precision=4, suppress=True):
        return (f"Jacobian mismatch for output {o} with respect to input {i},\n"
                f"numerical:{numerical}\nanalytical:{analytical}\n")


def _check_forward_ad(func, inputs, diff, eps, atol, rtol, raise_exception):
    """Columns of J by forward mode (``func.jvp``), against central differences."""
    from ..func import jvp
    from .._ops.creation import zeros_like
    numerical = _numerical_jacobians(func, inputs, diff, eps)
    for k, i in enumerate(diff):
        x = inputs[i]
        cols = []
        for j in range(x.numel()):
            t = zeros_like(x)
            t.view(-1)[j] = 1.0
            primals = tuple(a.detach() if isinstance(a, Tensor) else a for a in inputs)

            def f(xi, primals=primals):
                args = list(primals)
                args[i] = xi
                return func(*args)
            _, tangent_out = jvp(f, (primals[i],), (t,))
            cols.append([np.asarray(o._concrete("gradcheck"), dtype=np.float64).reshape(-1)
                         for o in real_outputs(tangent_out)])
        for o, n in enumerate(numerical[k]):
            a = np.stack([c[o] for c in cols]) if cols else np.zeros_like(n)
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(raise_exception, "While considering the forward AD, " +
                             _mismatch_message(o, i, n, a))
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Checks second derivatives: ``gradcheck`` of the vector-Jacobian product of ``func``.

    ``grad_outputs`` (random, requiring grad, if None) are treated as extra inputs, so the
    derivatives with respect to both the inputs and the cotangents are checked.

    >>> import numtorch as torch
    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> gradgradcheck(torch.tanh, (x,))
    True
    """
    from .. import autograd
    inputs, diff = _differentiable_inputs(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = real_outputs(func(*inputs))
        grad_outputs = tuple(wrap_array(rng.standard_normal(tuple(o.shape)).astype(o.dtype.np))
                             .requires_grad_() for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def vjp_func(*args):
        ins, gos = args[:n], args[n:]
        outs = real_outputs(func(*ins))
        pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
        if not pairs:
            return ()
        grads = autograd.grad([o for o, _ in pairs], [ins[i] for i in diff],
                              [g for _, g in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_backward_ad=check_rev_over_rev,
                     check_forward_ad=check_fwd_over_rev)
