"""``numtorch.nn.parallel``: ``DistributedDataParallel`` (data parallelism across processes)."""
from .distributed import DistributedDataParallel, consume_prefix_in_state_dict_if_present  # noqa: F401
