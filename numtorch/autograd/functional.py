"""``torch.autograd.functional``: vjp, jvp, jacobian, hessian, vhp, hvp — on ``torch.func``.

The old API takes ``inputs`` as a Tensor or a tuple of Tensors and returns results in the
same form; results are detached unless ``create_graph=True``.
"""
from __future__ import annotations

from .._core.tensor import Tensor


def _as_tuple(x, name, fn):
    if isinstance(x, Tensor):
        return (x,), False
    if isinstance(x, (tuple, list)) and all(isinstance(t, Tensor) for t in x):
        return tuple(x), True
    raise TypeError(f"The {name} given to {fn} must be either a Tensor or a tuple of Tensors but "
                    f"the value at index 0 has type {type(x).__name__}.")


def _finish(value, create_graph, is_tuple):
    if isinstance(value, (tuple, list)):
        out = tuple(_finish(v, create_graph, True) for v in value)
        return out if is_tuple else out[0]
    return value if create_graph else value.detach()


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns ``(func(inputs), v^T J)``."""
    from ..func import vjp as _vjp
    from .._ops.creation import ones_like
    inputs, in_tuple = _as_tuple(inputs, "inputs", "vjp")
    out, vjp_fn = _vjp(lambda *xs: func(*xs), *inputs)
    outs, out_tuple = _as_tuple(out, "outputs of the user-provided function", "vjp")
    if v is None:
        if any(o.numel() != 1 for o in outs):
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        v = tuple(ones_like(o) for o in outs)
    vs, _ = _as_tuple(v, "v", "vjp")
    grads = vjp_fn(vs if out_tuple else vs[0])
    return _finish(out, create_graph, out_tuple), _finish(tuple(grads), create_graph, in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns ``(func(inputs), J v)`` (by forward mode)."""
    from ..func import jvp as _jvp
    from .._ops.creation import ones_like
    inputs, in_tuple = _as_tuple(inputs, "inputs", "jvp")
    if v is None:
        if any(x.numel() != 1 for x in inputs):
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        v = tuple(ones_like(x) for x in inputs)
    vs, _ = _as_tuple(v, "v", "jvp")
    out, tangent = _jvp(lambda *xs: func(*xs), inputs, vs)
    out_tuple = isinstance(out, tuple)
    return _finish(out, create_graph, out_tuple), _finish(tangent, create_graph, out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``; nests as (outputs) x (inputs) like PyTorch."""
    from ..func import jacfwd, jacrev
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    inputs, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
    argnums = tuple(range(len(inputs)))
    transform = jacrev if strategy == "reverse-mode" else jacfwd
    jac = transform(lambda *xs: func(*xs), argnums=argnums)(*inputs)
    out = func(*inputs)
    out_tuple = isinstance(out, tuple)
    rows = jac if out_tuple else (jac,)
    result = tuple(tuple(_finish(j, create_graph, False) for j in row) if in_tuple
                   else _finish(row[0], create_graph, False) for row in rows)
    return result if out_tuple else result[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function ``func`` at ``inputs``."""
    from ..func import hessian as _hessian
    inputs, in_tuple = _as_tuple(inputs, "inputs", "hessian")
    out = func(*inputs)
    if not isinstance(out, Tensor) or out.numel() != 1:
        raise RuntimeError("The function given to hessian should return a single Tensor "
                           "containing a single element")
    argnums = tuple(range(len(inputs)))
    h = _hessian(lambda *xs: func(*xs).reshape(()), argnums=argnums)(*inputs)
    if in_tuple:
        return tuple(tuple(_finish(x, create_graph, False) for x in row) for row in h)
    return _finish(h[0][0], create_graph, False)


def _hessian_product(kind, func, inputs, v, create_graph):
    from ..func import grad
    inputs, in_tuple = _as_tuple(inputs, "inputs", kind)
    argnums = tuple(range(len(inputs)))
    g = lambda *xs: grad(lambda *ys: func(*ys).reshape(()), argnums=argnums)(*xs)  # noqa: E731
    _, prod = (vjp if kind == "vhp" else jvp)(g, inputs, v, create_graph=create_graph)
    prod = prod if isinstance(prod, tuple) else (prod,)
    return _finish(func(*inputs), create_graph, False), prod if in_tuple else prod[0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns ``(func(inputs), v^T H)``."""
    return _hessian_product("vhp", func, inputs, v, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns ``(func(inputs), H v)`` (by forward-over-reverse)."""
    return _hessian_product("hvp", func, inputs, v, create_graph)
