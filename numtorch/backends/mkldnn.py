"""``torch.backends.mkldnn``: oneDNN, which numtorch does not use (flags settable)."""

enabled = True
deterministic = False


def is_available():
    """Return whether PyTorch is built with MKL-DNN support: ``False`` in numtorch."""
    return False
