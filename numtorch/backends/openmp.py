"""``torch.backends.openmp``: numtorch does not use OpenMP itself."""


def is_available():
    """Return whether PyTorch is built with OpenMP support: ``False`` in numtorch."""
    return False
