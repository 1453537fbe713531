"""``torch.cuda.amp``: mixed precision on CUDA, which numtorch does not have. `autocast`
is a context manager that does nothing (PyTorch disables it with a warning when CUDA is
unavailable, and so does numtorch); `GradScaler` is a pass-through with scaling disabled,
as PyTorch's is when CUDA is unavailable.
"""
from __future__ import annotations

import warnings


class autocast:
    """See ``torch.amp.autocast``; without CUDA it is disabled and changes nothing."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        if enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          stacklevel=2)
        self._enabled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn


class GradScaler:
    """An instance ``scaler`` of :class:`GradScaler` helps perform the steps of gradient
    scaling conveniently. Without CUDA it is disabled: ``scale`` returns its input,
    ``step`` calls ``optimizer.step()``, ``update`` does nothing (PyTorch behaves the same
    way, with a warning, when CUDA is unavailable)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
        self._enabled = False

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass
