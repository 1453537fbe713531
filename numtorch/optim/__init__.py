"""``numtorch.optim``: optimizers that update parameters in place from their ``.grad``."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401
from . import lr_scheduler  # noqa: F401,E402
