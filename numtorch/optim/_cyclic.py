"""``CyclicLR``: the cyclical learning-rate policy (Smith, 2017), in its own file as
OneCycleLR is (_one_cycle.py): it also cycles the optimizer's momentum; lr_scheduler.py
re-exports it. It must not touch anything in the param groups but ``lr``, ``momentum`` (or
``betas[0]``), ``max_momentum`` and ``base_momentum``.
"""
from __future__ import annotations

import math
import types

from .lr_scheduler import LRScheduler, _check_optimizer, _cycles_beta1, _per_group, _set

_MODES = ("triangular", "triangular2", "exp_range")


class CyclicLR(LRScheduler):
    r"""Sets the learning rate of each parameter group according to cyclical learning rate
    policy (CLR).

    The policy cycles the learning rate between two boundaries with a constant frequency,
    as detailed in the paper `Cyclical Learning Rates for Training Neural Networks`. The
    distance between the two boundaries can be scaled on a per-iteration or per-cycle
    basis. Cyclical learning rate policy changes the learning rate after every batch:
    ``step`` should be called after a batch has been used for training.

    Three built-in policies: "triangular" (a basic triangular cycle without amplitude
    scaling), "triangular2" (the amplitude halves each cycle), "exp_range" (the amplitude
    is scaled by :math:`\text{gamma}^{\text{cycle iterations}}` at each iteration); or a
    custom ``scale_fn(x)`` (``0 <= scale_fn(x) <= 1``) evaluated at the cycle number
    (``scale_mode="cycle"``) or the iteration (``"iterations"``).

    A cycle is ``step_size_up`` iterations rising from ``base_lr`` to ``max_lr`` and
    ``step_size_down`` (default ``step_size_up``) falling back. With ``cycle_momentum``,
    momentum (or Adam's ``beta1``) cycles inversely, between ``max_momentum`` and
    ``base_momentum``.

    >>> import numtorch as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> s = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs = []
    >>> for _ in range(5):
    ...     opt.step()
    ...     s.step()
    ...     lrs.append(round(s.get_last_lr()[0], 6))
    >>> lrs
    [0.3, 0.5, 0.3, 0.1, 0.3]
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        # PyTorch divides by both without a check (a ZeroDivisionError on the first step)
        if not step_size_up > 0:
            raise ValueError(f"Expected positive step_size_up, but got {step_size_up}")
        if step_size_down is not None and not step_size_down >= 0:
            raise ValueError(f"Expected non-negative step_size_down, but got {step_size_down}")
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in _MODES and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _cycles_beta1(optimizer)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m, b, group in zip(self.max_momentums, self.base_momentums,
                                       optimizer.param_groups):
                    self._set_momentum(group, m)
                    group["max_momentum"], group["base_momentum"] = m, b
        # The initial step inside __init__ cycles from the groups' ``initial_lr`` (as
        # PyTorch's does); afterwards the base lrs are ``base_lr``.
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        # The built-in policies fix the scale mode (PyTorch ignores ``scale_mode`` for them).
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x):
        """Get the scaling policy: the amplitude's factor at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self):
        """The lrs at iteration ``last_epoch`` (and, with ``cycle_momentum``, the momentum
        written into the param groups as a side effect)."""
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base_m, max_m in zip(self.optimizer.param_groups, self.base_momentums,
                                            self.max_momentums):
                self._set_momentum(group, max_m - (max_m - base_m) * scale_factor * scale)
        return lrs

    def state_dict(self):
        """The scheduler's state; a custom ``scale_fn`` is saved only if it is a callable
        object (its ``__dict__``), not a function or lambda, as PyTorch does."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        """Load the scheduler's state (a dict returned by :meth:`state_dict`)."""
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()
