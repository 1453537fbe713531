"""The user-facing entry points: ``compile``/``optimize``, ``OptimizedModule``, ``disable``,
``run``.

A compiled function is a thin wrapper calling eval_frame.run_frame with its
`CompileContext`. Must not capture or generate anything itself.
"""
from __future__ import annotations

import functools
import types

from . import eval_frame
from ..nn.modules.module import Module
from .backends import lookup_backend
from .eval_frame import CompileContext, run_frame


def _wrap_function(fn, ctx):
    if isinstance(fn, types.MethodType) and fn.__name__ == "step" and \
            hasattr(fn.__self__, "_optimizer_step_pre_hooks"):
        # compile(opt.step): the update as one graph (numtorch/_aot/optimizer.py)
        from .._aot.optimizer import compiled_step
        return compiled_step(fn.__self__, ctx.backend)
    if isinstance(fn, types.MethodType):
        inner, self_ = fn.__func__, fn.__self__

        @functools.wraps(inner)
        def compiled_method(*args, **kwargs):
            return run_frame(inner, (self_,) + args, kwargs, ctx)
        compiled_method._numtorch_dynamo_orig = fn
        compiled_method._numtorch_dynamo_ctx = ctx
        return compiled_method
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"compile: expected a Python function or an nn.Module, got "
                        f"{type(fn).__name__}")

    @functools.wraps(fn)
    def compiled(*args, **kwargs):
        return run_frame(fn, args, kwargs, ctx)
    compiled._numtorch_dynamo_orig = fn
    compiled._numtorch_dynamo_ctx = ctx
    return compiled


class OptimizedModule(Module):
    """A compiled ``nn.Module`` (PyTorch's ``torch._dynamo.eval_frame.OptimizedModule``): an
    ``nn.Module`` holding the original as its submodule ``_orig_mod``, so ``parameters()``,
    ``state_dict()`` (keys prefixed ``_orig_mod.``), ``train()`` and ``eval()`` reach it,
    other attribute reads and writes are forwarded to it, and calling it runs the
    original's forward compiled (Note [OptimizedModule is a Module])."""

    _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "forward", "__dict__"}

    def __init__(self, mod, dynamo_ctx):
        # first, so that reads of attributes of self during Module.__init__ find it
        object.__setattr__(self, "_orig_mod", mod)
        super().__init__()
        self._orig_mod = mod          # registered as the submodule
        self.__dict__["_mod"] = mod   # the call path reads it without __getattr__
        self.dynamo_ctx = dynamo_ctx

    def forward(self, *args, **kwargs):
        mod, ctx = self.__dict__["_mod"], self.__dict__["dynamo_ctx"]
        if mod._forward_hooks or mod._forward_pre_hooks:
            if type(mod).__call__ is Module.__call__:
                return run_frame(Module._call_with_hooks, (mod, args, kwargs), {}, ctx)
            return run_frame(type(mod).__call__, (mod,) + args, kwargs, ctx)
        return run_frame(type(mod).forward, (mod,) + args, kwargs, ctx)

    def __call__(self, *args, **kwargs):
        if self._forward_hooks or self._forward_pre_hooks:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    @property
    def training(self):
        return self.__dict__["_mod"].training

    @training.setter
    def training(self, value):
        self.__dict__["_mod"].training = value

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self.__dict__["_mod"], name)

    def __setattr__(self, name, value):
        if hasattr(type(self), name) or name in self._opt_mod_attributes:
            return super().__setattr__(name, value)
        return setattr(self.__dict__["_mod"], name, value)

    def __delattr__(self, name):
        if hasattr(type(self), name) or name in self._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self.__dict__["_mod"], name)

    def __len__(self):
        mod = self.__dict__["_mod"]
        if hasattr(type(mod), "__len__"):
            return len(mod)
        raise TypeError(f"{type(mod).__name__} does not support len()")

    def __dir__(self):
        own = self.__dict__["_mod"].__dir__()
        return own + [a for a in super().__dir__() if a not in own]

    def __reduce__(self):
        ctx = self.dynamo_ctx
        if ctx.spec is None:
            raise TypeError("cannot pickle an OptimizedModule that compile() did not make; "
                            "pickle its _orig_mod and compile it again after loading")
        return (_recompiled, (self.__dict__["_mod"], *ctx.spec, ctx.fullgraph, ctx.dynamic))


# Note [Pickling a compiled module]
# A compiled module pickles as its original module and the arguments compile() was given
# (backend, mode, options, fullgraph, dynamic), and loads as compile(...) of the loaded
# original: compiled entries are not saved (they hold generated code and, with the
# inductor, C libraries) and are captured again on the first call, as in PyTorch. The
# backend is pickled as given: a name, or a function pickled by reference; a lambda or a
# local function cannot be pickled (pickle's own error names it), as in PyTorch. The
# looked-up backend (wrapped for DDP, a closure) is never pickled.
def _recompiled(mod, backend, mode, options, fullgraph, dynamic):
    return compile(mod, backend=backend, mode=mode, options=options, fullgraph=fullgraph,
                   dynamic=dynamic)


# Note [OptimizedModule is a Module]
# As in PyTorch, ``compile(module)`` returns an ``nn.Module`` whose only submodule is the
# original (``_orig_mod``): whatever walks modules (an optimizer over ``parameters()``,
# ``state_dict()`` with the ``_orig_mod.`` prefix, ``DistributedDataParallel(compile(m))``,
# ``train()``/``eval()``) sees a real module, and ``training`` is the original's. Calling it
# runs the original's ``forward`` as the compiled frame (its ``__call__`` with the hooks
# when it has any); hooks registered on the OptimizedModule itself run outside, as in
# PyTorch.


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Optimize ``model`` (a function or ``nn.Module``) with TorchDynamo-style capture.

    As PyTorch's ``torch.compile``: usable as ``compile(fn)``, ``@compile`` and
    ``@compile(backend=...)``. The function's bytecode is interpreted symbolically into
    graphs guarded on its inputs; unsupported code causes graph breaks (or an error with
    ``fullgraph=True``). ``dynamic=None`` compiles static shapes first and, when a size
    change causes a recompile, captures the changed dims with symbolic sizes ("automatic
    dynamic"); ``dynamic=True`` makes every dim symbolic from the start, ``dynamic=False``
    none (``mark_dynamic`` still applies). Sizes 0 and 1 always specialise. See
    _dynamo/shapes.py, Note [Which dims are dynamic]. Beyond PyTorch, with
    ``fullgraph=True`` a training step's ``zero_grad()``, ``loss.backward()`` and
    ``opt.step()`` are captured too: forward, backward and update in one graph
    (numtorch/_aot/fullgraph.py); without it they are graph breaks, as in PyTorch.
    """
    if mode is not None and mode not in ("default", "reduce-overhead", "max-autotune",
                                         "max-autotune-no-cudagraphs"):
        raise ValueError(f"compile: unknown mode {mode!r}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"compile: options must be a dict, got {type(options).__name__}")
    if dynamic not in (None, True, False):
        raise TypeError(f"compile: dynamic must be None, True or False, got {dynamic!r}")
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if disable:
        return model
    ctx = CompileContext(lookup_backend(backend, mode, options), fullgraph, dynamic,
                         spec=(backend, mode, options))
    if isinstance(model, Module):
        return OptimizedModule(model, ctx)
    if not callable(model):
        raise TypeError(f"compile: expected a function or nn.Module, got {type(model).__name__}")
    return _wrap_function(model, ctx)


optimize = compile


def disable(fn=None, recursive=True):
    """Run ``fn`` eagerly, never compiled; a call to it inside compiled code is a graph
    break (PyTorch: ``torch._dynamo.disable``). Also a decorator and, without ``fn``, a
    context manager. ``recursive=False`` only skips ``fn``'s own frame (the same here:
    functions it calls are not compiled either, since nothing outside compile is)."""
    if fn is None:
        return _DisableContext() if recursive else (lambda f: disable(f, recursive))
    if not callable(fn):
        raise TypeError(f"disable expects a callable, got {type(fn).__name__}")
    orig = getattr(fn, "_numtorch_dynamo_orig", fn)

    @functools.wraps(orig)
    def disabled(*args, **kwargs):
        eval_frame._disabled[0] += 1
        try:
            return orig(*args, **kwargs)
        finally:
            eval_frame._disabled[0] -= 1
    disabled._numtorch_dynamo_disable = True
    return disabled


class _DisableContext:
    def __enter__(self):
        eval_frame._disabled[0] += 1
        return self

    def __exit__(self, *exc):
        eval_frame._disabled[0] -= 1
        return False

    def __call__(self, fn):
        return disable(fn)


def run(fn=None):
    """Use the compiled entries ``fn`` already has, never compile new ones (PyTorch's
    ``torch._dynamo.run``)."""
    if fn is None:
        raise TypeError("run expects a compiled function")
    ctx = getattr(fn, "_numtorch_dynamo_ctx", None)
    if ctx is None:
        return fn
    frozen = CompileContext(ctx.backend, ctx.fullgraph, ctx.dynamic)
    frozen.run_only = True
    # share the original context's cache: entries are keyed by context
    orig = fn._numtorch_dynamo_orig

    @functools.wraps(orig)
    def frozen_fn(*args, **kwargs):
        code = orig.__code__
        cache = eval_frame._CACHES.get((code, ctx))
        if cache is not None:
            L = eval_frame.bind_args(orig, args, kwargs)
            G, C = orig.__globals__, orig.__closure__ or ()
            for e in cache.entries:
                if e.guard(L, G, C):
                    return e.run(L, G, C)
        return orig(*args, **kwargs)
    return frozen_fn


def is_compiling():
    """True while numtorch._dynamo is capturing (constant-folds inside compiled code)."""
    return eval_frame._compiling[0] > 0
