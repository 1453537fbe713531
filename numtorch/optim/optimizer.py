"""``optim.Optimizer``: parameter groups, per-parameter state, state dicts and step hooks.

Subclasses implement ``step`` as PyTorch's single-tensor (``foreach=False``) algorithms,
updating parameters in place under ``no_grad`` (Note [Optimizer arithmetic]). This file
owns everything that is not the update rule.
"""
from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import numpy as np

from .._core.tensor import Tensor
from ..autograd.grad_mode import enable_grad, set_grad_enabled
from ..nn.modules.module import RemovableHandle, _zero_grad

__all__ = ["Optimizer", "required"]

# Note [Optimizer arithmetic]
# Each update is written with in-place Tensor ops in the order of PyTorch's
# ``_single_tensor_<name>`` function (e.g. ``buf.mul_(momentum).add_(grad, alpha=1 -
# dampening)``), so float results match PyTorch up to rounding (PyTorch's CPU kernels fuse
# some multiply-adds). Being Tensor ops, the updates also run on meta tensors and inside
# transforms (functionalized), never as raw NumPy on parameter data.


class _RequiredParameter:
    """Singleton marking a hyperparameter that has no default."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _use_grad_for_differentiable(step):
    """Run ``step`` with grad mode set to the optimizer's ``differentiable`` default (off)."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with set_grad_enabled(self.defaults.get("differentiable", False)):
            return step(self, *args, **kwargs)
    return wrapper


def _to_scalar(x):
    """A hyperparameter as a Python number (``lr`` may be a 0-d Tensor); while a training
    step traces it (Note [Tensor hyperparameters] in numtorch/_aot/fullgraph.py) the
    tensor itself, in float64, as `_get_value` keeps Adam's step count."""
    return _get_value(x) if isinstance(x, Tensor) else x


def _get_value(x):
    """``x.item()`` of a 0-d state tensor (Adam's step count); while a compiled step traces
    it (numtorch/_aot/optimizer.py, Note [Compiled optimizer step]) the tensor itself, in
    float64 so the scalar arithmetic on it rounds as Python floats do (PyTorch's
    ``_get_value`` keeps the tensor under compile the same way)."""
    if x._data.__class__ is np.ndarray:
        return x.item()
    from .. import float64
    return x.to(float64)


def _eval_closure(closure):
    """``closure()`` with grad enabled (step runs under no_grad), or None."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _set_group_defaults(optimizer, **defaults):
    # Options added after a state was saved get their defaults on __setstate__.
    for group in optimizer.param_groups:
        for k, v in defaults.items():
            group.setdefault(k, v)


def _typename(x):
    return x.type() if isinstance(x, Tensor) else type(x).__name__


class Optimizer:
    """Base class for all optimizers.

    ``params`` is an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (parameter
    groups, each with its own hyperparameters); ``defaults`` fills the options a group
    does not set.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def add_param_group(self, param_group):
        """Adds a parameter group (a dict with ``'params'`` and optional hyperparameters)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        names, tensors = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (
                    p.is_leaf or p._retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all optimized tensors (to ``None`` by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                _zero_grad(p, set_to_none)

    # Capture calls numtorch's own functions for real, once, while it traces; zero_grad
    # and step change state outside any graph (.grad fields, optimizer state), so under
    # compile each is a graph break that runs at every call (numtorch._dynamo's disable
    # mark). At its break, and under compile(opt.step), step runs as one compiled graph
    # of its own (numtorch/_aot/optimizer.py, Note [Compiled optimizer step]).
    zero_grad._numtorch_dynamo_disable = True

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        raise NotImplementedError

    # -- hooks --------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """Registers ``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` before ``step``."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """Registers ``hook(optimizer, args, kwargs)`` to run after ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])
            cls.step._numtorch_dynamo_disable = True   # see zero_grad

    # -- state dict ---------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state as a dict: ``state`` (keyed by parameter index) and
        ``param_groups`` (hyperparameters, with ``params`` as indices). Tensors are
        references, not copies."""
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    @staticmethod
    def _cast(param, value, key=None):
        if isinstance(value, Tensor):
            if key == "step":
                return value
            return value.to(dtype=param.dtype) if param.is_floating_point() else value
        if isinstance(value, dict):
            return {k: Optimizer._cast(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast(param, v) for v in value)
        return value

    def load_state_dict(self, state_dict):
        """Loads an optimizer state produced by ``state_dict()`` (for the same parameters)."""
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [
            update_group(g, ng) for g, ng in zip(groups, saved_groups)]})


def _with_step_hooks(step):
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        out = step(self, *args, **kwargs)
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    return wrapper
