"""``torch.backends.cudnn``: settable flags (read back, no effect on results) and
``is_available() -> False``; see the package docstring."""

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    """Return a bool indicating if CUDNN is currently available: ``False`` in numtorch."""
    return False


def version():
    """Return the version of cuDNN: ``None``, as numtorch has no cuDNN."""
    return None
