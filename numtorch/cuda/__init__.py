"""``torch.cuda`` for a CPU-only library: the queries answer "no CUDA here", the seeding
and memory calls scripts make unconditionally are harmless no-ops, and anything that
needs a GPU raises `CudaNotAvailableError`.

This module owns what numtorch says about CUDA; it must not pretend to run anything on a
GPU. The answers are those of PyTorch's CPU-only build (torch 2.13.0+cpu), except
`synchronize`, which PyTorch's CPU build refuses and numtorch treats as a no-op: numtorch
computes eagerly, so there is never pending GPU work to wait for, and timing code that
calls ``torch.cuda.synchronize()`` between runs should not have to be edited.
"""
from __future__ import annotations

from .._core.tensor import CudaNotAvailableError, device as _device_cls  # noqa: F401
from . import amp  # noqa: F401


def _unavailable(what):
    raise CudaNotAvailableError(f"torch.cuda.{what}: CUDA is not available in numtorch "
                                f"(it runs on the CPU only; Torch not compiled with CUDA "
                                f"enabled). Guard GPU code with torch.cuda.is_available().")


def is_available():
    """Return a bool indicating if CUDA is currently available: always ``False``.

    >>> is_available()
    False
    """
    return False


def device_count():
    """Return the number of GPUs available: always ``0``."""
    return 0


def is_initialized():
    """Return whether PyTorch's CUDA state has been initialized: always ``False``."""
    return False


def is_bf16_supported(including_emulation=True):
    """Return a bool indicating if the current CUDA device supports dtype bfloat16: ``False``."""
    return False


def init():
    """Initialize PyTorch's CUDA state: raises, as there is no CUDA."""
    _unavailable("init")


def manual_seed(seed):
    """Set the seed for generating random numbers for the current GPU.

    It's safe to call this function if CUDA is not available; in that case, it is
    silently ignored.
    """
    int(seed)   # a seed that is not an integer is still an error, as in PyTorch


def manual_seed_all(seed):
    """Set the seed for generating random numbers on all GPUs.

    It's safe to call this function if CUDA is not available; in that case, it is
    silently ignored.
    """
    int(seed)


def seed():
    """Set the seed for generating random numbers to a random number for the current GPU.
    Silently ignored without CUDA."""


def seed_all():
    """Set the seed for generating random numbers to a random number on all GPUs.
    Silently ignored without CUDA."""


def synchronize(device=None):
    """Wait for all kernels in all streams on a CUDA device to complete.

    A no-op in numtorch: every operation has finished when it returns (see the module
    docstring for why this differs from PyTorch's CPU build, which raises).
    """


def empty_cache():
    """Release all unoccupied cached memory held by the caching allocator: nothing is
    cached without CUDA, so this does nothing (as in PyTorch's CPU build)."""


def memory_allocated(device=None):
    """Return the current GPU memory occupied by tensors in bytes: ``0``."""
    return 0


def max_memory_allocated(device=None):
    """Return the maximum GPU memory occupied by tensors in bytes: ``0``."""
    return 0


def memory_reserved(device=None):
    """Return the current GPU memory managed by the caching allocator in bytes: ``0``."""
    return 0


def max_memory_reserved(device=None):
    """Return the maximum GPU memory managed by the caching allocator in bytes: ``0``."""
    return 0


def current_device():
    """Return the index of a currently selected device: raises, as there is none."""
    _unavailable("current_device")


def set_device(device):
    """Set the current device: raises, as there is no CUDA device."""
    _unavailable("set_device")


def get_device_name(device=None):
    """Get the name of a device: raises, as there is no CUDA device."""
    _unavailable("get_device_name")


def get_device_properties(device=None):
    """Get the properties of a device: raises, as there is no CUDA device."""
    _unavailable("get_device_properties")


def get_device_capability(device=None):
    """Get the CUDA capability of a device: raises, as there is no CUDA device."""
    _unavailable("get_device_capability")


def get_rng_state(device="cuda"):
    """Return the random number generator state of the specified GPU: raises."""
    _unavailable("get_rng_state")


def set_rng_state(new_state, device="cuda"):
    """Set the random number generator state of the specified GPU: raises."""
    _unavailable("set_rng_state")


def current_stream(device=None):
    """Return the currently selected Stream for a given device: raises."""
    _unavailable("current_stream")


class device:
    """Context-manager that changes the selected device. Constructing one is allowed (as
    in PyTorch's CPU build); entering it raises."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        _unavailable("device")

    def __exit__(self, *exc):
        return False
