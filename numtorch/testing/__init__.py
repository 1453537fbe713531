"""``numtorch.testing``: ``assert_close``, ``make_tensor``, ``gradcheck`` and the OpInfo database.

The generic op tests (tests/test_ops.py) sweep ``opinfo.op_db``; user code needs only
``assert_close`` and ``make_tensor``, as with ``torch.testing``.
"""
from ._comparison import assert_close  # noqa: F401
from ._gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from ._make_tensor import make_tensor  # noqa: F401
