"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers on assignment.

A Parameter is a Tensor subclass sharing its payload (and version counter) with the data
it was made from; a Buffer is a plain Tensor marked ``_is_buffer``. This file owns only
these two markers; registration logic lives in ``modules/module.py``.
"""
from __future__ import annotations

from .._core.tensor import Tensor, _rebuild, wrap
from .._ops.creation import empty


# Note [Parameter instance check]
# As in PyTorch, ``isinstance(t, Parameter)`` is also true for a plain Tensor flagged
# ``_is_param`` (the slot exists on Tensor for this). Transforms that must hand a module
# a non-Parameter tensor standing in for a parameter can flag it instead of subclassing.
class _ParameterMeta(type):
    def __instancecheck__(cls, instance):
        if cls is Parameter:
            return type.__instancecheck__(cls, instance) or (
                isinstance(instance, Tensor) and getattr(instance, "_is_param", False))
        return type.__instancecheck__(cls, instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A kind of Tensor that is to be considered a module parameter.

    Assigning a Parameter as a Module attribute adds it to the module's parameters.
    ``Parameter(data, requires_grad=True)`` shares ``data``'s storage.

    >>> import numtorch as torch
    >>> p = torch.nn.Parameter(torch.zeros(2))
    >>> p.requires_grad, isinstance(p, torch.Tensor)
    (True, True)
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        t = wrap(data._data)
        t._version_counter = data._version_counter
        t.__class__ = cls
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self, proto)[1][0], self._requires_grad))


def _rebuild_parameter(arr, requires_grad):
    return Parameter(_rebuild(arr, False), requires_grad)


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor marked to be registered as a module buffer on assignment.

    ``Buffer(data, persistent=True)``: a non-persistent buffer is left out of
    ``state_dict``. The result is a plain Tensor (detached from ``data``) carrying the mark.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach()
        if data.requires_grad and data.is_leaf:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t
