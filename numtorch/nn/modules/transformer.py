"""``Transformer`` and its parts (``TransformerEncoderLayer``/``TransformerEncoder``,
``TransformerDecoderLayer``/``TransformerDecoder``): PyTorch's layers, submodules named and
initialized as PyTorch's (so a PyTorch ``state_dict`` loads unchanged), always on the
reference (math) path; the attention is ``MultiheadAttention`` (attention.py), nothing here
computes attention itself. PyTorch's inference fast path (nested tensors, fused kernels)
computes the same values except that, in eval mode with a ``src_key_padding_mask``, it
writes zeros at padded positions; numtorch returns the computed values there, as PyTorch's
training path does.
"""
from __future__ import annotations

import copy

from ..._core import dtypes as _dt
from ..._ops import shape as S
from ..._ops.creation import full
from .. import functional as F
from .. import init
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder"]


def _get_activation_fn(activation):
    """``activation`` as a function: "relu"/"gelu" by name, or the callable itself."""
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


def _seq_len(x, batch_first):
    """The sequence length of ``x``: ``(S, E)`` unbatched, else ``(S, N, E)`` or, with
    ``batch_first``, ``(N, S, E)``."""
    return x.shape[0] if x.ndim == 2 else x.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """Whether ``mask`` is the causal mask (PyTorch's ``_detect_is_causal_mask``): an
    explicit ``is_causal`` is returned as given; ``None`` compares ``mask`` with
    ``generate_square_subsequent_mask(size)``. The answer is only a hint: attention still
    applies ``mask``, so the values do not depend on it."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    causal = generate_square_subsequent_mask(sz, dtype=mask.dtype)
    return tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())


def _check_layers(cls, layer, num_layers, layer_name):
    if not isinstance(layer, Module):
        raise TypeError(f"{cls}(): argument '{layer_name}' must be a Module, "
                        f"not {type(layer).__name__}")
    if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
        raise ValueError(f"{cls}(): argument 'num_layers' must be a positive int, "
                         f"got {num_layers!r}")
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])


def _build_layer(layer, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                 batch_first, norm_first, bias, kw, cross_attention):
    """The submodules of an encoder layer (``cross_attention=False``) or a decoder layer
    (``True``: also ``multihead_attn``, ``norm3``, ``dropout3``), assigned in PyTorch's
    order so ``parameters()`` lists them as PyTorch does."""
    def attention():
        return MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                  batch_first=batch_first, **kw)
    layer.self_attn = attention()
    if cross_attention:
        layer.multihead_attn = attention()
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
    layer.norm_first = norm_first
    n = 3 if cross_attention else 2
    for i in range(1, n + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
    for i in range(1, n + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))
    layer.activation = _get_activation_fn(activation)


def _attend(attn, dropout, x, mem, attn_mask, key_padding_mask, is_causal):
    """An attention block of a layer: ``x`` attends to ``mem`` (itself for self-attention),
    then dropout."""
    return dropout(attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                        need_weights=False, is_causal=is_causal)[0])


def _feed_forward(layer, x, dropout):
    """The feedforward block of a layer: linear1, activation, dropout, linear2, dropout."""
    return dropout(layer.linear2(layer.dropout(layer.activation(layer.linear1(x)))))


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
        _build_layer(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                     batch_first, norm_first, bias, dict(device=device, dtype=dtype),
                     cross_attention=False)

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
        return _attend(self.self_attn, self.dropout1, x, x, attn_mask, key_padding_mask,
                       is_causal)

    def _ff_block(self, x):
        return _feed_forward(self, x, self.dropout2)


class TransformerEncoder(Module):
    """TransformerEncoder is a stack of N encoder layers (deep copies of
    ``encoder_layer``), followed by the optional layer normalization ``norm``.

    ``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch's signature; they
    only steer PyTorch's inference fast path, which numtorch does not have.
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _check_layers("TransformerEncoder", encoder_layer, num_layers,
                                    "encoder_layer")
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Pass the input through the encoder layers in turn."""
        output = src
        is_causal = _detect_is_causal_mask(
            mask, is_causal, _seq_len(src, self.layers[0].self_attn.batch_first))
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(Module):
    """TransformerDecoderLayer is made up of self-attn, multi-head-attn and feedforward
    network.

    This standard decoder layer is based on the paper "Attention Is All You Need".
    Arguments as ``TransformerEncoderLayer``'s; ``multihead_attn`` attends from the target
    sequence to ``memory`` (the encoder's output).
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        _build_layer(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                     batch_first, norm_first, bias, dict(device=device, dtype=dtype),
                     cross_attention=True)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """Pass the inputs (and masks) through the decoder layer: ``tgt`` is ``(T, N, E)``,
        ``memory`` ``(S, N, E)`` (batch first with ``batch_first``; unbatched ``(T, E)`` and
        ``(S, E)``); ``tgt_mask`` ``(T, T)``, ``memory_mask`` ``(T, S)``."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    _sa_block = TransformerEncoderLayer._sa_block

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        return _attend(self.multihead_attn, self.dropout2, x, mem, attn_mask, key_padding_mask,
                       is_causal)

    def _ff_block(self, x):
        return _feed_forward(self, x, self.dropout3)


class TransformerDecoder(Module):
    """TransformerDecoder is a stack of N decoder layers (deep copies of
    ``decoder_layer``), followed by the optional layer normalization ``norm``.
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _check_layers("TransformerDecoder", decoder_layer, num_layers,
                                    "decoder_layer")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """Pass the inputs (and masks) through the decoder layers in turn.
        ``tgt_is_causal=None`` detects whether ``tgt_mask`` is the causal mask."""
        output = tgt
        tgt_is_causal = _detect_is_causal_mask(
            tgt_mask, tgt_is_causal, _seq_len(tgt, self.layers[0].self_attn.batch_first))
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """A transformer model: an encoder (``num_encoder_layers`` encoder layers and a final
    ``LayerNorm``) and a decoder (``num_decoder_layers`` decoder layers and a final
    ``LayerNorm``), as in "Attention Is All You Need"; ``custom_encoder`` /
    ``custom_decoder`` replace either. Every parameter with more than one dimension is
    re-initialized with ``xavier_uniform_`` (PyTorch's ``_reset_parameters``).
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
                 norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **kw), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **kw), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """Take in and process masked source/target sequences: ``src`` ``(S, N, E)``,
        ``tgt`` ``(T, N, E)`` (batch first with ``batch_first``; unbatched ``(S, E)``,
        ``(T, E)``); the output is shaped as ``tgt``. Boolean masks mark positions that may
        *not* attend; float masks are added to the attention scores."""
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
