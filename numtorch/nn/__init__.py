"""``numtorch.nn``: modules, parameters, ``functional`` and ``init`` — PyTorch's ``torch.nn``."""
from .parameter import Parameter, Buffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401


def __getattr__(name):
    # ``nn.parallel`` (DistributedDataParallel) loads on first use: it builds on the compile
    # stack (``numtorch._dynamo``), which ``import numtorch`` must not pay for.
    if name == "parallel":
        import importlib
        return importlib.import_module(f"{__name__}.parallel")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
