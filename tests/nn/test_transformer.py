"""TransformerDecoderLayer, TransformerDecoder and Transformer against PyTorch on the same
weights (PyTorch's state_dict loaded into numtorch's module): outputs, input gradients and
parameter gradients in float64 to 1e-10, under every mask (causal and float/bool masks, key
padding masks), ``norm_first``, ``batch_first``, unbatched inputs and activations given by
name or as a callable; reprs, state_dict keys and the initialization alike; bad arguments
raise PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as nt
from nn_helpers import arr, both, check_grads, load_torch_state, oracle

TOL = 1e-10
E, H, FF = 8, 2, 16

_KW = [dict(), dict(batch_first=True, norm_first=True), dict(activation="gelu"),
       dict(activation="silu_callable", batch_first=True), dict(bias=False, norm_first=True)]
_IDS = ["post_norm", "batch_first_pre_norm", "gelu", "callable", "no_bias"]


def _kwargs(torch, kw):
    okw, tkw = dict(kw), dict(kw)
    if kw.get("activation") == "silu_callable":
        okw["activation"], tkw["activation"] = nt.nn.functional.silu, torch.nn.functional.silu
    return okw, tkw


def _seq(rng, length, batch, batch_first):
    """A random (length, batch, E) sequence, batch first if asked, unbatched if batch=None."""
    if batch is None:
        return rng.standard_normal((length, E))
    return rng.standard_normal((batch, length, E) if batch_first else (length, batch, E))


def _masks(torch, T, S, N, bool_masks):
    """tgt_mask (causal), memory_mask, and key padding masks for tgt and memory; float
    (0 or -inf) or bool (True = may not attend), as PyTorch accepts either."""
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64).numpy()
    mem_mask = np.zeros((T, S))
    mem_mask[0, -1] = -np.inf
    tkpm = np.zeros((N, T))
    tkpm[1, -1] = -np.inf
    mkpm = np.zeros((N, S))
    mkpm[0, 0] = -np.inf
    masks = [tgt_mask, mem_mask, tkpm, mkpm]
    if bool_masks:
        masks = [np.isinf(m) for m in masks]
    return masks


@pytest.mark.parametrize("bool_masks", [False, True], ids=["float_masks", "bool_masks"])
@pytest.mark.parametrize("kw", _KW, ids=_IDS)
def test_transformer_decoder_matches_torch(kw, bool_masks):
    torch = oracle()
    torch.manual_seed(0)
    okw, tkw = _kwargs(torch, kw)
    tl = torch.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, dtype=torch.float64, **tkw)
    ol = nt.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, dtype=nt.float64, **okw)
    td = torch.nn.TransformerDecoder(tl, 2, norm=torch.nn.LayerNorm(E, dtype=torch.float64))
    od = nt.nn.TransformerDecoder(ol, 2, norm=nt.nn.LayerNorm(E, dtype=nt.float64))
    assert repr(od) == repr(td)
    load_torch_state(od, td)
    rng = np.random.default_rng(0)
    T, S, N, bf = 4, 5, 3, kw.get("batch_first", False)
    arrays = [_seq(rng, T, N, bf), _seq(rng, S, N, bf)] + _masks(torch, T, S, N, bool_masks)
    (tt, tm, *tmasks), (ot, om, *omasks) = both(torch, arrays)
    tmasks = [m.detach() for m in tmasks]
    omasks = [m.detach() for m in omasks]
    names = ["tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask"]
    to = td(tt, tm, **dict(zip(names, tmasks)))     # tgt_is_causal=None: detected
    oo = od(ot, om, **dict(zip(names, omasks)))
    np.testing.assert_allclose(arr(oo), to.detach().numpy(), rtol=TOL, atol=TOL)
    to.pow(2).sum().backward()
    oo.pow(2).sum().backward()
    check_grads([tt, tm], [ot, om], td, od)


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("kw", _KW, ids=_IDS)
def test_transformer_matches_torch(kw, batched):
    torch = oracle()
    torch.manual_seed(0)
    okw, tkw = _kwargs(torch, kw)
    tt_ = torch.nn.Transformer(E, H, 2, 1, FF, dropout=0.0, dtype=torch.float64, **tkw)
    ot_ = nt.nn.Transformer(E, H, 2, 1, FF, dropout=0.0, dtype=nt.float64, **okw)
    assert repr(ot_) == repr(tt_)
    load_torch_state(ot_, tt_)
    rng = np.random.default_rng(1)
    S, T, N, bf = 5, 4, 2, kw.get("batch_first", False)
    src, tgt = _seq(rng, S, N if batched else None, bf), _seq(rng, T, N if batched else None, bf)
    src_mask = np.where(rng.random((S, S)) < 0.2, -np.inf, 0.0)
    np.fill_diagonal(src_mask, 0.0)
    tgt_mask, mem_mask, tkpm, mkpm = _masks(torch, T, S, N, False)
    skpm = mkpm
    if not batched:
        tkpm, mkpm, skpm = tkpm[1], mkpm[0], skpm[0]
    (ts, tt, *tmasks), (os_, ot, *omasks) = both(
        torch, [src, tgt, src_mask, tgt_mask, mem_mask, skpm, tkpm, mkpm])
    names = ["src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask",
             "tgt_key_padding_mask", "memory_key_padding_mask"]
    to = tt_(ts, tt, tgt_is_causal=True, **dict(zip(names, (m.detach() for m in tmasks))))
    oo = ot_(os_, ot, tgt_is_causal=True, **dict(zip(names, (m.detach() for m in omasks))))
    assert tuple(oo.shape) == tuple(to.shape) == tgt.shape
    np.testing.assert_allclose(arr(oo), to.detach().numpy(), rtol=TOL, atol=TOL)
    to.pow(2).sum().backward()
    oo.pow(2).sum().backward()
    check_grads([ts, tt], [os_, ot], tt_, ot_)


def test_transformer_custom_encoder_decoder_and_defaults():
    torch = oracle()
    enc = nt.nn.TransformerEncoder(nt.nn.TransformerEncoderLayer(E, H, FF), 1)
    dec = nt.nn.TransformerDecoder(nt.nn.TransformerDecoderLayer(E, H, FF), 1)
    m = nt.nn.Transformer(E, H, custom_encoder=enc, custom_decoder=dec)
    assert m.encoder is enc and m.decoder is dec
    import inspect
    for cls in ("Transformer", "TransformerDecoderLayer", "TransformerDecoder"):
        ours = inspect.signature(getattr(nt.nn, cls)).parameters
        theirs = inspect.signature(getattr(torch.nn, cls)).parameters
        assert list(ours) == list(theirs), cls
        for name, p in theirs.items():        # PyTorch's default activation is F.relu itself
            if name != "activation":
                assert ours[name].default == p.default, (cls, name)
        assert (inspect.signature(getattr(nt.nn, cls).forward).parameters.keys()
                == inspect.signature(getattr(torch.nn, cls).forward).parameters.keys()), cls
    # float32 by default, like PyTorch's default dtype
    out = nt.nn.Transformer(E, H, 1, 1, FF)(nt.randn(5, 2, E), nt.randn(3, 2, E))
    assert out.dtype == nt.float32 and tuple(out.shape) == (3, 2, E)


def test_transformer_initialization_matches_torch():
    """Every parameter with ndim > 1 is xavier-uniform (bound sqrt(6 / (fan_in + fan_out)));
    the attention biases start at zero; the rest keeps its layer's own init. Compared as
    distributions with PyTorch's (the random streams differ)."""
    torch = oracle()
    torch.manual_seed(0)
    nt.manual_seed(0)
    tm = torch.nn.Transformer(32, 4, 2, 2, 64)
    om = nt.nn.Transformer(32, 4, 2, 2, 64)
    theirs = dict(tm.named_parameters())
    for name, p in om.named_parameters():
        a, b = arr(p), theirs[name].detach().numpy()
        assert a.shape == b.shape, name
        if a.ndim > 1:
            bound = np.sqrt(6.0 / (a.shape[0] + a.shape[1]))
            assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound, name
            np.testing.assert_allclose(a.std(), b.std(), rtol=0.15, err_msg=name)
        elif "in_proj_bias" in name or "out_proj.bias" in name or "norm" in name:
            np.testing.assert_array_equal(a, b, err_msg=name)   # zeros/ones as PyTorch's
        else:                                                    # Linear biases: uniform
            bound = np.abs(b).max() / 0.9
            assert np.abs(a).max() <= bound and a.std() > 0, name


def test_generate_square_subsequent_mask_and_causal_detection():
    torch = oracle()
    for sz in (1, 4):
        np.testing.assert_array_equal(arr(nt.nn.Transformer.generate_square_subsequent_mask(sz)),
                                      torch.nn.Transformer.generate_square_subsequent_mask(sz).numpy())
    assert nt.nn.Transformer.generate_square_subsequent_mask(3, dtype=nt.float64).dtype == nt.float64
    from numtorch.nn.modules.transformer import _detect_is_causal_mask as ours
    from torch.nn.modules.transformer import _detect_is_causal_mask as theirs
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4)
    other = causal.clone()
    other[3, 0] = float("-inf")
    for mask in (None, causal, other, causal.bool(), causal[:3, :3]):
        for hint in (None, True, False):
            for size in (None, 4):
                o = ours(None if mask is None else nt.tensor(mask.numpy()), hint, size)
                assert o == theirs(mask, hint, size), (mask, hint, size)


def test_transformer_errors_match_torch():
    torch = oracle()
    m, tm = nt.nn.Transformer(E, H, 1, 1, FF), torch.nn.Transformer(E, H, 1, 1, FF)
    cases = [((5, 2, E), (3, 3, E), "the batch number of src and tgt must be equal"),
             ((5, 2, E), (3, 2, 4), "the feature number of src and tgt must be equal to d_model")]
    for s, t, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            tm(torch.randn(*s), torch.randn(*t))
        with pytest.raises(RuntimeError, match=msg):
            m(nt.randn(*s), nt.randn(*t))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m.decoder(nt.randn(3, 2, E), nt.randn(5, 2, E), tgt_is_causal=True)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nt.nn.TransformerDecoderLayer(E, H, activation="tanh")
    with pytest.raises(ValueError, match="argument 'num_layers' must be a positive int"):
        nt.nn.TransformerDecoder(nt.nn.TransformerDecoderLayer(E, H), 0)
    with pytest.raises(TypeError, match="argument 'decoder_layer' must be a Module"):
        nt.nn.TransformerDecoder(None, 2)


def test_transformer_decoder_dropout_only_when_training():
    dec = nt.nn.TransformerDecoderLayer(4, 2, 8, dropout=0.5)
    tgt, mem = nt.randn(3, 2, 4), nt.randn(5, 2, 4)
    assert not nt.equal(dec(tgt, mem), dec(tgt, mem))
    dec.eval()
    assert nt.equal(dec(tgt, mem), dec(tgt, mem))
