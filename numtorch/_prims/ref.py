"""Writes: the primitives that write into an operand (Note [Effects] in _core/primitive.py).

``copy_to(dst, src)`` is the value ``dst`` holds once ``src`` has been written into it.
Every in-place op (``add_``, ``x[i] = v``, ``copy_``) ends in one: the op layer computes
the new value functionally and binds ``copy_to`` (Note [In-place ops]), so a trace records
the write as an ordinary node (``t5 = prims.copy_to(arg0, t4)``), eager autograd records
it as PyTorch's ``CopyBackwards``, and a graph run eagerly writes its inputs. The rules
here compute the value only; who makes the tensor hold it is the op layer's and the graph
runner's business (``primitive.store``). This module must not write any buffer.
"""
from __future__ import annotations

from .._core.primitive import Primitive


def _copy_to_shape(dst, src):
    if tuple(dst.shape) != tuple(src.shape) or dst.dtype != src.dtype:
        raise TypeError(f"copy_to: src must have dst's shape and dtype (the op layer broadcasts "
                        f"and converts), got dst {tuple(dst.shape)} {dst.dtype} and src "
                        f"{tuple(src.shape)} {src.dtype}")
    return tuple(dst.shape), dst.dtype


def _copy_to_jvp(primals, tangents):
    # The written value is src: its tangent is src's; dst's old tangent is overwritten.
    return primals[1], tangents[1]


def _copy_to_vjp(ct, out, dst, src):
    return None, ct


copy_to = Primitive(
    "copy_to",
    # A fresh array: the result must not alias src, whose buffer may be written later.
    impl=lambda dst, src: src.copy(),
    shape=_copy_to_shape,
    jvp=_copy_to_jvp,
    vjp=_copy_to_vjp,
    batch=lambda values, bdims: (values[1], bdims[1]))
copy_to.mutates = 0
copy_to.discharge = lambda dst, src: src
copy_to.vjp_needs = ()   # the cotangent passes to src as is; nothing saved is read

# Lower rule (Note [Lower rules], _lower.py): the value is src's element. The write itself
# is the graph's business (Note [Effects]): graphs that write are run inline, not compiled
# as one pure region.
from ._lower import pointwise  # noqa: E402

copy_to.lower = pointwise("{1}")
