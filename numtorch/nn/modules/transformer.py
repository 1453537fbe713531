"""``TransformerEncoderLayer`` and ``TransformerEncoder``: PyTorch's layers, submodules
named as PyTorch's (so a PyTorch ``state_dict`` loads unchanged), always on the reference
(math) path. PyTorch's inference fast path (nested tensors, fused kernels) computes the
same values except that, in eval mode with a ``src_key_padding_mask``, it writes zeros at
padded positions; numtorch returns the computed values there, as PyTorch's training path
does.

Not built: ``TransformerDecoderLayer``, ``TransformerDecoder``, ``Transformer``.
"""
from __future__ import annotations

import copy

from ..._core import dtypes as _dt
from ..._ops import shape as S
from ..._ops.creation import full
from .. import functional as F
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """A square causal mask for the sequence: ``-inf`` above the diagonal, 0 elsewhere
    (PyTorch's ``nn.Transformer.generate_square_subsequent_mask``)."""
    return S.triu(full((sz, sz), float("-inf"), dtype=dtype or _dt.get_default_dtype(),
                       device=device), diagonal=1)


class TransformerEncoderLayer(Module):
    """TransformerEncoderLayer is made up of self-attn and feedforward network.

    This standard encoder layer is based on the paper "Attention Is All You Need".
    Args: ``d_model``, ``nhead``, ``dim_feedforward`` (default 2048), ``dropout`` (0.1),
    ``activation`` ("relu", "gelu" or a unary callable), ``layer_norm_eps`` (1e-5),
    ``batch_first`` (False), ``norm_first`` (False: layer norm after the attention and
    feedforward operations; True: before), ``bias`` (True).
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _get_activation_fn(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """Pass the input through the encoder layer: ``src`` is ``(S, N, E)`` (``(N, S, E)``
        with ``batch_first``) or unbatched ``(S, E)``."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """TransformerEncoder is a stack of N encoder layers (deep copies of
    ``encoder_layer``), followed by the optional layer normalization ``norm``.

    ``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch's signature; they
    only steer PyTorch's inference fast path, which numtorch does not have.
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"TransformerEncoder(): argument 'encoder_layer' must be a Module, "
                            f"not {type(encoder_layer).__name__}")
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"TransformerEncoder(): argument 'num_layers' must be a positive "
                             f"int, got {num_layers!r}")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Pass the input through the encoder layers in turn."""
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=bool(is_causal),
                         src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output
