"""``torch.backends``: the switches scripts set for the libraries PyTorch calls into
(``torch.backends.cudnn.benchmark = True``, ``torch.backends.cuda.matmul.allow_tf32 =
True``, …) and the availability queries (``torch.backends.mps.is_available()``).

This package owns those flags and answers; numtorch computes everything with NumPy, so
the flags are stored and read back (scripts and tests check them) but change no result.
Each backend is a real submodule, so ``import torch.backends.cudnn as cudnn`` works. The
defaults are those of PyTorch's CPU-only build (torch 2.13.0+cpu); the availability
answers are ``False``, as numtorch uses none of these libraries.
"""
from . import cpu, cuda, cudnn, mkldnn, mps, openmp  # noqa: F401
