"""numtorch: PyTorch's programming model — tensors, autograd, torch.func — on NumPy.

``import numtorch as torch`` and write PyTorch. This file only re-exports.
"""
from . import _allocator  # noqa: F401  (warms malloc: Note [Warming the allocator])
from ._core import dtypes as _dtypes
from ._core.dtypes import (bool_ as bool, uint8, int8, int16, int32, int64, float16, float32,  # noqa: F401
                           float64, complex64, complex128, dtype, get_default_dtype,
                           set_default_dtype, promote_types)
from ._core.dtypes import (float16 as half, float32 as float, float64 as double,  # noqa: F401,E402
                           int16 as short, int32 as int, int64 as long, complex64 as cfloat,
                           complex128 as cdouble)
from ._core.tensor import Tensor, Size, device  # noqa: F401
from ._prims import ALL_PRIMITIVES as _ALL_PRIMITIVES  # noqa: F401
from ._prims.random import Generator, default_generator  # noqa: F401
from ._ops import methods as _methods  # noqa: F401  (attaches Tensor methods)
from ._ops._common import result_type, broadcast_shapes, is_scalar as _is_scalar  # noqa: F401
from ._ops.creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, empty, full,  # noqa: F401
                            zeros_like, ones_like, empty_like, full_like, arange, linspace,
                            logspace, eye, manual_seed, seed, initial_seed, get_rng_state,
                            set_rng_state, randn, rand, randint, randn_like, rand_like,
                            randint_like, randperm, normal, bernoulli, multinomial)
from ._ops.math import *  # noqa: F401,F403
from ._ops.math import abs, pow, round, complex, clamp, where  # noqa: F401
from ._ops.reduce import (sum, nansum, mean, nanmean, prod, amax, amin, max, min, argmax,  # noqa: F401
                          argmin, aminmax, var, std, var_mean, std_mean, logsumexp, softmax,
                          log_softmax, cumsum, cumprod, all, any, count_nonzero)
from ._ops.shape import (reshape, flatten, ravel,  # noqa: F401
                         unflatten, squeeze, unsqueeze, permute, transpose, swapaxes, swapdims,
                         t, adjoint, movedim, moveaxis, broadcast_to, broadcast_tensors, narrow,
                         select, cat, concat, concatenate, stack, hstack, vstack, row_stack,
                         dstack, column_stack, atleast_1d, atleast_2d, atleast_3d, split, chunk,
                         tensor_split, unbind, flip, fliplr, flipud, roll, tile,
                         repeat_interleave, clone, detach, diagonal, diag_embed, diag, diagflat,
                         tril, triu, meshgrid)
from ._ops.index import (gather, take_along_dim, scatter, scatter_add, index_select, index_add,  # noqa: F401
                         masked_fill, masked_select, nonzero, argwhere, unique, index_put)
from ._ops.linalg import (matmul, mm, bmm, mv, dot, vdot, inner, outer, ger, cross, tensordot,  # noqa: F401
                          addmm, trace)
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,  # noqa: F401
                                 inference_mode)
from . import autograd  # noqa: F401
from ._ops import numpy_api as _numpy_api  # noqa: F401,E402  (NumPy dispatch on Tensors)

__version__ = "0.1.0"
from ._ops.conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: F401,E402
                        conv_transpose3d, max_pool1d, max_pool2d, max_pool3d, avg_pool1d,
                        adaptive_avg_pool1d)
from . import nn  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import special  # noqa: E402,F401
from ._ops.linalg_ops import (inverse, logdet, pinverse, matrix_power, cholesky_solve,  # noqa: E402,F401
                              cholesky_inverse, triangular_solve, cholesky_top as cholesky,
                              svd_top as svd)
from ._ops.linalg_ops import det, slogdet_top as slogdet, norm_top as norm  # noqa: E402,F401
from . import return_types  # noqa: E402,F401
from ._ops.sorting import sort, argsort, msort, topk, kthvalue, median  # noqa: E402,F401
from ._core.printing import set_printoptions  # noqa: E402,F401
from . import utils  # noqa: E402,F401  (torch.utils.data / .benchmark load on first use)
from . import cuda, backends  # noqa: E402,F401
from ._ops.creation import set_default_device, get_default_device  # noqa: E402,F401
from ._threads import set_num_threads, get_num_threads  # noqa: E402,F401
from ._ops._surface_utils import *  # noqa: E402,F401,F403  (the everyday surface: utilities)
from ._ops._surface_math import *  # noqa: E402,F401,F403  (the everyday surface: pointwise, products)
from ._ops._surface_shape import *  # noqa: E402,F401,F403  (the everyday surface: shape, index)
from ._ops._surface_reduce import *  # noqa: E402,F401,F403  (the everyday surface: scans, quantiles)
from ._ops._surface_count import *  # noqa: E402,F401,F403  (the everyday surface: isin, gcd, counting)
from ._ops._surface_signal import *  # noqa: E402,F401,F403  (the everyday surface: windows)
from ._ops._surface_segment import *  # noqa: E402,F401,F403  (the everyday surface: mode, scatter_reduce)
from ._ops._surface_spectral import *  # noqa: E402,F401,F403  (the everyday surface: stft, istft)
from .nn._functional_surface import (prelu, rrelu, hardshrink, pixel_shuffle,  # noqa: E402,F401
                                      pixel_unshuffle)
from ._threads import start_policy as _start_thread_policy  # noqa: E402

_start_thread_policy()     # Note [OpenMP and BLAS threads] (_inductor/build.py)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,  # noqa: A001
            options=None, disable=False):
    """Optimize a function or ``nn.Module`` by capturing its Python into graphs
    (PyTorch's ``torch.compile``; see ``numtorch._dynamo``). Imported lazily."""
    from ._dynamo.api import compile as _compile
    return _compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=options, disable=disable)


def __getattr__(name):
    # torch._dynamo / torch._inductor / torch.compiler / torch._logging load on first use
    # (import stays fast)
    if name in ("_dynamo", "_inductor", "compiler", "_logging", "distributed", "distributions",
                "func", "fft"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    # torch.einsum and torch.vmap load on first use, then are attributes like any other
    if name == "einsum":
        from ._ops.einsum import einsum
        globals()["einsum"] = einsum
        return einsum
    if name == "vmap":
        from .func import vmap
        globals()["vmap"] = vmap
        return vmap
    # torch.save / torch.load (and torch.serialization) too
    if name in ("save", "load", "serialization"):
        import importlib
        serialization = importlib.import_module(f"{__name__}.serialization")
        return serialization if name == "serialization" else getattr(serialization, name)
    raise AttributeError(f"module 'numtorch' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"einsum", "vmap", "func", "fft"})   # the lazy ones too
