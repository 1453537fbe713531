"""``numtorch.nn``: modules, parameters, ``functional`` and ``init`` — PyTorch's ``torch.nn``."""
from .parameter import Parameter, Buffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401
from . import parallel  # noqa: E402,F401  (DistributedDataParallel; imports no MPI)
