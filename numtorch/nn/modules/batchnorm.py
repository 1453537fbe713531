"""Batch normalization: ``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d``.

Note [BatchNorm running stats]
In training mode the running statistics are updated in place on the module's buffers
(``F.batch_norm``) and ``num_batches_tracked`` is incremented; in eval mode they are used
instead of the batch statistics. With ``momentum=None`` the running averages are
cumulative (factor ``1 / num_batches_tracked``). Under ``functional_call`` the buffers
passed in are the ones updated; under ``vmap`` an unbatched buffer cannot receive a
batched statistic, and the in-place machinery raises PyTorch's error saying so.
"""
from __future__ import annotations

from ..._core import dtypes as _dt
from ..._ops.creation import ones, tensor, zeros
from .. import functional as F
from ._utils import register_weight_bias, reset_ones_zeros
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _NormBase(Module):
    """Common base of the batch normalization modules: parameters, buffers, state-dict versioning."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        register_weight_bias(self, num_features, num_features, affine=affine, bias=bias,
                             device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats and not self.running_mean.is_meta:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        reset_ones_zeros(self.weight, self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None if self.affine else False}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # num_batches_tracked was added in version 2; old checkpoints lack it.
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                nbt = self.num_batches_tracked
                state_dict[key] = nbt if nbt is not None and not nbt.is_meta else \
                    tensor(0, dtype=_dt.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # 1 / num_batches_tracked as a float64 0-d tensor, not a Python float: the
                # same value in the update (float32 statistics round it as they would the
                # float), and no float() of a tensor, so compile captures it in the graph
                # (it was a graph break) and vmap over batched buffers can run it
                factor = 1.0 / self.num_batches_tracked.to(_dt.float64)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias,
                            bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over a ``(N, C)`` or ``(N, C, L)`` input."""

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over a ``(N, C, H, W)`` input."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over a ``(N, C, D, H, W)`` input."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")
