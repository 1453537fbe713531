"""``torch.backends.cpu``: what the CPU backend supports."""


def get_cpu_capability():
    """Return the CPU capability as a string: numtorch's kernels are NumPy's, so
    ``"NumPy"`` (PyTorch returns its SIMD level, such as ``"AVX2"``)."""
    return "NumPy"
