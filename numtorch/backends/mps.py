"""``torch.backends.mps``: Apple's Metal backend, which numtorch does not have."""


def is_available():
    """Return a bool indicating if MPS is currently available: ``False`` in numtorch."""
    return False


def is_built():
    """Return whether PyTorch is built with MPS support: ``False`` in numtorch."""
    return False
