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
one attribute read per call when no gradient is recorded. An in-place call
(``F.hardtanh(x, inplace=True)``) names the write node its input got (Note [grad_fn of an
in-place op], inplace.py), with PyTorch's in-place overload's name where it differs
(``LeakyReluBackward1``).
"""
from __future__ import annotations

import functools

__all__ = ["backward_name"]

# The in-place overloads PyTorch numbers apart from the out-of-place op's node.
_INPLACE_OVERLOADS = {"LeakyReluBackward0": "LeakyReluBackward1", "EluBackward0": "EluBackward1",
                      "CeluBackward0": "CeluBackward1", "ThresholdBackward0": "ThresholdBackward1"}


def backward_name(name):
    """Decorate an op so its output's ``grad_fn`` prints as ``name``; ``name`` may be a
    function of the op's arguments (PyTorch numbers overloads: ``MeanBackward0`` for
    ``mean()``, ``MeanBackward1`` for ``mean(dim)``) returning None to leave the name."""
    fixed = isinstance(name, str)

    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            before = getattr(args[0], "grad_fn", None) if args else None
            out = fn(*args, **kwargs)
            node = getattr(out, "grad_fn", None)
            if node is not None and node is not before:
                label = name if fixed else name(*args, **kwargs)
                if label is not None and out is args[0]:      # written in place
                    label = _INPLACE_OVERLOADS.get(label, label)
                if label is not None:   # the outermost op runs last, so its name wins
                    _name_node(node, label)
            elif node is None and isinstance(out, tuple):   # split, topk, max(dim), unbind
                label = None
                for part in out:
                    node = getattr(part, "grad_fn", None)
                    if node is not None and node is not before:
                        label = label or (name if fixed else name(*args, **kwargs))
                        if label is None:
                            break
                        _name_node(node, label)
            return out
        return op
    return decorate


def _name_node(node, label):
    if node.metadata is None:
        node.metadata = {"name": label}
    else:
        node.metadata["name"] = label
