"""Strict primitives, one family per module, each primitive with all of its rules."""
from . import (elementwise, shape, reduction, indexing, contraction, random, creation)  # noqa: F401
from .._core.primitive import ALL_PRIMITIVES  # noqa: F401
from . import conv  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import sorting  # noqa: E402,F401
from . import control  # noqa: E402,F401
from . import ref  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from . import norm  # noqa: E402,F401
