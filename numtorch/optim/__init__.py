"""``numtorch.optim``: optimizers that update parameters in place from their ``.grad``."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401


def __getattr__(name):
    # ``optim.lr_scheduler`` loads on first use (import numtorch stays fast); importing it
    # makes it an attribute of this package, so this runs once.
    if name == "lr_scheduler":
        import importlib
        return importlib.import_module(f"{__name__}.lr_scheduler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
