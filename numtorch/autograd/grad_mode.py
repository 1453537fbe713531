"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The flag lives in ``_core.primitive.grad_mode`` because `bind` reads it on every call.
"""
from __future__ import annotations

import functools

from .._core import primitive as _prim


def is_grad_enabled() -> bool:
    """Returns True if grad mode is currently enabled."""
    return _prim.grad_mode[0]


class _GradModeContext:
    _value = True

    def __enter__(self):
        self._prev = _prim.grad_mode[0]
        _prim.grad_mode[0] = self._value
        return self

    def __exit__(self, *exc):
        _prim.grad_mode[0] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Context manager (and decorator) that disables gradient recording."""
    _value = False


class enable_grad(_GradModeContext):
    """Context manager (and decorator) that enables gradient recording."""
    _value = True


# How many enabled ``inference_mode`` blocks are open (``torch.is_inference_mode_enabled``).
inference_depth = [0]


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (numtorch has no separate inference tensors)."""
    _value = False

    def __init__(self, mode=True):
        self._mode = bool(mode)
        self._value = not mode

    def __enter__(self):
        inference_depth[0] += self._mode
        return super().__enter__()

    def __exit__(self, *exc):
        inference_depth[0] -= self._mode
        return super().__exit__(*exc)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self._mode):
                return fn(*args, **kwargs)
        return wrapper


class set_grad_enabled(_GradModeContext):
    """Sets gradient recording on or off; usable as a function or a context manager."""

    def __init__(self, mode: bool):
        self._prev = _prim.grad_mode[0]
        self._value = bool(mode)
        _prim.grad_mode[0] = self._value

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _prim.grad_mode[0] = self._prev
        return False
