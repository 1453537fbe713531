"""PyTorch's ``grad_fn`` names for ops that numtorch composes from several primitives.

This file owns one decorator, ``backward_name``; it must not know how backward works.

Note [grad_fn names of composite ops]
A node of the autograd graph belongs to the last primitive an op binds, so
``F.mse_loss(x, t).grad_fn`` would print as the mean's ``DivBackward0`` where PyTorch
prints ``MseLossBackward0``. Users and tutorials print these names, so a composite op
whose PyTorch counterpart is one ATen op with its own backward is decorated with that
name: after the op runs, the node its output got *in this call* is named (the node's
``metadata["name"]``, which ``Node.name()`` already honours, as custom Functions use it).
An output that is an input passed through (``dropout(p=0)``) is left alone; when
decorated ops nest (``mse_loss`` calls ``mean``), the outermost, which the user called,
names the node. The cost is
one attribute read per call when no gradient is recorded.
"""
from __future__ import annotations

import functools

__all__ = ["backward_name"]


def backward_name(name):
    """Decorate an op so its output's ``grad_fn`` prints as ``name``; ``name`` may be a
    function of the op's arguments (PyTorch numbers overloads: ``MeanBackward0`` for
    ``mean()``, ``MeanBackward1`` for ``mean(dim)``) returning None to leave the name."""
    fixed = isinstance(name, str)

    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            out = fn(*args, **kwargs)
            node = getattr(out, "grad_fn", None)
            if node is not None and (not args or getattr(args[0], "grad_fn", None) is not node):
                label = name if fixed else name(*args, **kwargs)
                if label is not None:   # the outermost op runs last, so its name wins
                    if node.metadata is None:
                        node.metadata = {"name": label}
                    else:
                        node.metadata["name"] = label
            return out
        return op
    return decorate
