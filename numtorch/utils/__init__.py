"""``torch.utils``: data loading (`numtorch.utils.data`) and timing (`numtorch.utils.benchmark`).

The submodules load on first attribute access, so ``import numtorch`` stays fast while
``torch.utils.data.DataLoader`` works after a plain ``import numtorch as torch``.
"""
import importlib

_SUBMODULES = ("data", "benchmark")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'numtorch.utils' has no attribute {name!r}")
