"""``nn.functional.multi_head_attention_forward``: the computation of
``nn.MultiheadAttention`` on explicit weights, following PyTorch's reference (math) path.

Written with numtorch ops only, so autograd, vmap and jvp apply; it must not define
primitives. ``scaled_dot_product_attention`` lives in ``functional.py`` and is called here
when the attention weights are not requested, as PyTorch does.

Note [Attention masks]: ``nn.MultiheadAttention`` and ``scaled_dot_product_attention``
read boolean masks the opposite way round. For MHA (``attn_mask``, ``key_padding_mask``)
True means "this key is *not* allowed to attend"; for sdpa True means "take part". Every
mask is therefore first made a float mask (0 or -inf, PyTorch's ``_canonical_mask``) and
only float masks are passed on.
"""
from __future__ import annotations

import math

from .._core import dtypes as _dt
from .._ops import math as M
from .._ops import reduce as R
from .._ops import shape as S
from .._ops._common import check_tensor
from .._ops.creation import zeros, zeros_like
from .._ops.linalg import bmm

__all__ = ["multi_head_attention_forward"]


def _canonical_mask(mask, name, dtype):
    """A float additive mask: bool True becomes -inf (not allowed), floats pass through."""
    if mask is None:
        return None
    check_tensor(mask, name, "multi_head_attention_forward")
    if mask.dtype == _dt.bool_:
        return zeros_like(mask, dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)


def _pad_last(mask):
    """Append a zero column (a key every query may see) to a float mask."""
    return S.cat([mask, zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype,
                              device=mask.device)], -1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Forward method for MultiHeadAttention (PyTorch's signature and shapes).

    ``query`` is ``(L, N, E)`` or unbatched ``(L, E)``; ``key``/``value`` ``(S, N, E_k)``,
    ``(S, N, E_v)``. ``key_padding_mask`` ``(N, S)``, ``attn_mask`` ``(L, S)`` or
    ``(N * num_heads, L, S)``; boolean masks mark positions that may *not* attend
    (Note [Attention masks]). Returns ``(attn_output (L, N, E), attn_weights)``, the
    weights ``(N, L, S)`` averaged over heads, ``(N, num_heads, L, S)`` with
    ``average_attn_weights=False``, or None when ``need_weights`` is False.
    """
    from .functional import dropout, linear, scaled_dot_product_attention
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor(t, name, "multi_head_attention_forward")
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"query, key and value should be all 3-D (batched) or all 2-D "
                             f"(unbatched) tensors, but received query {query.ndim}-D, key "
                             f"{key.ndim}-D and value {value.ndim}-D")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            if key_padding_mask.ndim != 1:
                raise AssertionError(f"For unbatched (2-D) query, expected key_padding_mask to be "
                                     f"None or 1-D but found {key_padding_mask.ndim}-D tensor instead")
            key_padding_mask = key_padding_mask.unsqueeze(0)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    if embed_dim % num_heads:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    head_dim = embed_dim // num_heads
    if tuple(key.shape[:2]) != tuple(value.shape[:2]):
        raise AssertionError(f"key shape {list(key.shape)} does not match value shape "
                             f"{list(value.shape)}")
    dtype = query.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", dtype)
    attn_mask = _canonical_mask(attn_mask, "attn_mask", dtype)

    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = S.chunk(in_proj_weight, 3)
    else:
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = S.chunk(in_proj_bias, 3)
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {list(attn_mask.shape)}, "
                                   f"but should be {[tgt_len, src_len]}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {list(attn_mask.shape)}, "
                                   f"but should be {[bsz * num_heads, tgt_len, src_len]}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = S.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = S.cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N * H, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None
         else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None
         else static_v)
    if add_zero_attn:
        k = S.cat([k, zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], 1)
        v = S.cat([v, zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], 1)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = bmm(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = R.softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = bmm(weights, v)                      # (N * H, L, head_dim)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = R.mean(weights, 1)
        if not batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len) if attn_mask.shape[0] != 1 \
            else attn_mask.unsqueeze(0)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    return (out if batched else out.squeeze(1)), None
