"""MultiheadAttention, TransformerEncoder(Layer), RNN/LSTM/GRU (LSTM with projections too)
and the cells against PyTorch on the same weights (PyTorch's state_dict loaded into numtorch's module): outputs,
input gradients and parameter gradients in float64 to 1e-10; state_dict keys and reprs
alike; transforms compose (vmap over unbatched sequences equals the batched call); bad
arguments raise errors naming them."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as nt
from nn_helpers import arr, oracle, load_torch_state as _load, both as _both, check_grads as _check_grads

TOL = 1e-10


# ---------------------------------------------------------------------------------------
# MultiheadAttention

_MHA = [dict(), dict(batch_first=True), dict(kdim=3, vdim=5),
        dict(add_bias_kv=True, add_zero_attn=True), dict(bias=False)]
_MHA_CALLS = [dict(), dict(kpm=True), dict(float_mask=True, need_weights=False),
              dict(bool_mask=True, kpm=True, average_attn_weights=False)]


@pytest.mark.parametrize("ctor", _MHA, ids=lambda d: ",".join(d) or "default")
@pytest.mark.parametrize("call", _MHA_CALLS, ids=lambda d: ",".join(d) or "plain")
def test_multihead_attention_matches_torch(ctor, call):
    torch = oracle()
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64, **ctor)
    om = nt.nn.MultiheadAttention(8, 2, dtype=nt.float64, **ctor)
    _load(om, tm)
    rng = np.random.default_rng(1)
    L, S, N = 4, 5, 3
    kd, vd = ctor.get("kdim", 8), ctor.get("vdim", 8)

    def shape(n, e):
        return (N, n, e) if ctor.get("batch_first") else (n, N, e)
    q, k, v = (rng.standard_normal(shape(L, 8)), rng.standard_normal(shape(S, kd)),
               rng.standard_normal(shape(S, vd)))
    kpm = np.zeros((N, S), bool)
    kpm[0, -2:] = True
    mask = None
    if call.get("float_mask"):
        mask = rng.standard_normal((L, S))
    elif call.get("bool_mask"):
        mask = rng.random((L, S)) < 0.4
        mask[:, 0] = False   # no query loses every key (PyTorch gives NaN rows then)
    (tq, tk, tv, tmask, tkpm), (oq, ok, ov, omask, okpm) = _both(
        torch, [q, k, v, mask, kpm if call.get("kpm") else None])
    kw = {n: call[n] for n in ("need_weights", "average_attn_weights") if n in call}
    to, tw = tm(tq, tk, tv, key_padding_mask=tkpm, attn_mask=tmask, **kw)
    oo, ow = om(oq, ok, ov, key_padding_mask=okpm, attn_mask=omask, **kw)
    np.testing.assert_allclose(arr(oo), to.detach().numpy(), rtol=TOL, atol=TOL)
    assert (ow is None) == (tw is None)
    if tw is not None:
        np.testing.assert_allclose(arr(ow), tw.detach().numpy(), rtol=TOL, atol=TOL)
        (to.pow(2).sum() + tw.sum()).backward()
        (oo.pow(2).sum() + ow.sum()).backward()
    else:
        to.pow(2).sum().backward()
        oo.pow(2).sum().backward()
    _check_grads([tq, tk, tv], [oq, ok, ov], tm, om)


def test_multihead_attention_unbatched_and_under_vmap():
    torch = oracle()
    tm = torch.nn.MultiheadAttention(6, 3, dtype=torch.float64)
    om = nt.nn.MultiheadAttention(6, 3, dtype=nt.float64)
    _load(om, tm)
    x = np.random.default_rng(2).standard_normal((4, 6))
    to, tw = tm(*(torch.tensor(x),) * 3)
    oo, ow = om(*(nt.tensor(x),) * 3)
    np.testing.assert_allclose(arr(oo), to.detach().numpy(), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(arr(ow), tw.detach().numpy(), rtol=TOL, atol=TOL)
    xs = nt.tensor(np.random.default_rng(3).standard_normal((5, 4, 6)))
    per = nt.vmap(lambda s: om(s, s, s)[0])(xs)
    batched = om(*(xs.transpose(0, 1),) * 3)[0].transpose(0, 1)
    np.testing.assert_allclose(arr(per), arr(batched), rtol=1e-12, atol=1e-12)


def test_multihead_attention_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nt.nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nt.nn.MultiheadAttention(0, 1)
    m = nt.nn.MultiheadAttention(4, 2)
    x = nt.randn(3, 2, 4)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is \[2, 2\], but should be \[3, 3\]"):
        m(x, x, x, attn_mask=nt.zeros(2, 2))
    with pytest.raises(AssertionError, match="expecting key_padding_mask shape of"):
        m(x, x, x, key_padding_mask=nt.zeros(3, 3, dtype=nt.bool))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4"):
        m(nt.randn(3, 2, 5), x, x)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(TypeError, match="argument 'key' must be Tensor"):
        m(x, [1.0], x)


# ---------------------------------------------------------------------------------------
# Transformer encoder

@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True, norm_first=True),
                                dict(activation="gelu"), dict(activation="silu_callable")],
                         ids=["post_norm", "batch_first_pre_norm", "gelu", "callable"])
def test_transformer_encoder_matches_torch(kw):
    torch = oracle()
    torch.manual_seed(0)
    okw, tkw = dict(kw), dict(kw)
    if kw.get("activation") == "silu_callable":
        okw["activation"], tkw["activation"] = nt.nn.functional.silu, torch.nn.functional.silu
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=torch.float64, **tkw)
    ol = nt.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=nt.float64, **okw)
    te = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(8, dtype=torch.float64),
                                     enable_nested_tensor=False)
    oe = nt.nn.TransformerEncoder(ol, 2, norm=nt.nn.LayerNorm(8, dtype=nt.float64))
    _load(oe, te)
    rng = np.random.default_rng(0)
    S, N = (5, 3) if kw.get("batch_first") else (3, 5)
    x = rng.standard_normal((N, S, 8) if kw.get("batch_first") else (S, N, 8))
    kpm = np.zeros((N, S))
    kpm[1, -1] = -np.inf
    mask = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=torch.float64).numpy()
    (tx, tmask, tkpm), (ox, omask, okpm) = _both(torch, [x, mask, kpm])
    to = te(tx, mask=tmask.detach(), src_key_padding_mask=tkpm.detach(), is_causal=True)
    oo = oe(ox, mask=omask.detach(), src_key_padding_mask=okpm.detach(), is_causal=True)
    np.testing.assert_allclose(arr(oo), to.detach().numpy(), rtol=TOL, atol=TOL)
    to.pow(2).sum().backward()
    oo.pow(2).sum().backward()
    _check_grads([tx], [ox], te, oe)


def test_transformer_encoder_layer_dropout_and_errors():
    layer = nt.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.5)
    x = nt.randn(3, 2, 4)
    layer.train()
    assert not nt.equal(layer(x), layer(x))   # dropout active when training
    layer.eval()
    assert nt.equal(layer(x), layer(x))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nt.nn.TransformerEncoderLayer(4, 2, activation="tanh")
    with pytest.raises(ValueError, match="argument 'num_layers' must be a positive int"):
        nt.nn.TransformerEncoder(layer, 0)
    with pytest.raises(TypeError, match="argument 'encoder_layer' must be a Module"):
        nt.nn.TransformerEncoder("layer", 2)


# ---------------------------------------------------------------------------------------
# RNN, LSTM, GRU

_RNN = [("RNN", dict()), ("RNN", dict(nonlinearity="relu", num_layers=2)),
        ("RNN", dict(bidirectional=True, bias=False)), ("LSTM", dict()),
        ("LSTM", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(batch_first=True, num_layers=3)),
        ("GRU", dict()), ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
        ("GRU", dict(bias=False))]


@pytest.mark.parametrize("cls, kw", _RNN, ids=[f"{c}-{','.join(k) or 'default'}" for c, k in _RNN])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_recurrent_layers_match_torch(cls, kw, batched):
    torch = oracle()
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(4, 5, dtype=torch.float64, **kw)
    om = getattr(nt.nn, cls)(4, 5, dtype=nt.float64, **kw)
    assert repr(om) == repr(tm)
    _load(om, tm)
    rng = np.random.default_rng(0)
    D = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    if batched:
        x = rng.standard_normal((3, 6, 4) if kw.get("batch_first") else (6, 3, 4))
        hshape = (D * layers, 3, 5)
    else:
        x = rng.standard_normal((6, 4))
        hshape = (D * layers, 5)
    (tx, th, tc), (ox, oh, oc) = _both(torch, [x, rng.standard_normal(hshape),
                                               rng.standard_normal(hshape)])
    if cls == "LSTM":
        to, (thn, tcn) = tm(tx, (th, tc))
        oo, (ohn, ocn) = om(ox, (oh, oc))
        np.testing.assert_allclose(arr(ocn), tcn.detach().numpy(), rtol=TOL, atol=TOL)
        (to.sum() + thn.pow(2).sum() + tcn.sum()).backward()
        (oo.sum() + ohn.pow(2).sum() + ocn.sum()).backward()
    else:
        to, thn = tm(tx, th)
        oo, ohn = om(ox, oh)
        (to.sum() + thn.pow(2).sum()).backward()
        (oo.sum() + ohn.pow(2).sum()).backward()
    np.testing.assert_allclose(arr(oo), to.detach().numpy(), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(arr(ohn), thn.detach().numpy(), rtol=TOL, atol=TOL)
    _check_grads([tx, th] + ([tc] if cls == "LSTM" else []), [ox, oh] + ([oc] if cls == "LSTM" else []),
                 tm, om)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_recurrent_cells_match_torch(cls):
    torch = oracle()
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(4, 5, dtype=torch.float64)
    om = getattr(nt.nn, cls)(4, 5, dtype=nt.float64)
    assert repr(om) == repr(tm)
    _load(om, tm)
    rng = np.random.default_rng(0)
    (tx, th, tc), (ox, oh, oc) = _both(torch, [rng.standard_normal((3, 4)),
                                               rng.standard_normal((3, 5)), rng.standard_normal((3, 5))])
    if cls == "LSTMCell":
        to = sum(v.pow(2).sum() for v in tm(tx, (th, tc)))
        oo = sum(v.pow(2).sum() for v in om(ox, (oh, oc)))
    else:
        to, oo = tm(tx, th).pow(2).sum(), om(ox, oh).pow(2).sum()
    np.testing.assert_allclose(float(oo), float(to), rtol=TOL)
    to.backward()
    oo.backward()
    _check_grads([tx, th], [ox, oh], tm, om)
    # default hidden state and unbatched input
    np.testing.assert_allclose(arr(om(ox[0])[0] if cls == "LSTMCell" else om(ox[0])),
                               (tm(tx[0])[0] if cls == "LSTMCell" else tm(tx[0])).detach().numpy(),
                               rtol=TOL, atol=TOL)


def test_lstm_under_vmap_and_grad_of_functional_call():
    lstm = nt.nn.LSTM(3, 4, num_layers=2, dtype=nt.float64)
    xs = nt.randn(5, 6, 3, dtype=nt.float64)    # 5 unbatched sequences of length 6
    per = nt.vmap(lambda s: lstm(s)[0])(xs)
    batched = lstm(xs.transpose(0, 1))[0].transpose(0, 1)
    np.testing.assert_allclose(arr(per), arr(batched), rtol=1e-12, atol=1e-12)
    params = {k: v.detach() for k, v in lstm.named_parameters()}
    grads = nt.func.grad(lambda p: nt.func.functional_call(lstm, p, (xs[0],))[0].sum())(params)
    lstm(xs[0])[0].sum().backward()
    for name, p in lstm.named_parameters():
        np.testing.assert_allclose(arr(grads[name]), arr(p.grad), rtol=1e-12, atol=1e-12)


def test_recurrent_dropout_between_layers_only_when_training():
    gru = nt.nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = nt.randn(5, 2, 3)
    gru.train()
    assert not nt.equal(gru(x)[0], gru(x)[0])
    gru.eval()
    assert nt.equal(gru(x)[0], gru(x)[0])


def test_recurrent_errors_name_the_argument():
    lstm = nt.nn.LSTM(4, 5, num_layers=2)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 3"):
        lstm(nt.randn(6, 2, 3))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        lstm(nt.randn(1, 6, 2, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 2, 5\), got \[1, 2, 5\]"):
        lstm(nt.randn(6, 2, 4), (nt.zeros(1, 2, 5), nt.zeros(2, 2, 5)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(2, 2, 5\), got \[1, 2, 5\]"):
        lstm(nt.randn(6, 2, 4), (nt.zeros(2, 2, 5), nt.zeros(1, 2, 5)))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 5\), got \[2, 2, 5\]"):
        nt.nn.GRU(4, 5)(nt.randn(6, 2, 4), nt.zeros(2, 2, 5))
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nt.nn.GRU(4, 5, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nt.nn.RNN(4, 0)
    with pytest.raises(TypeError, match="input_size should be of type int"):
        nt.nn.RNN(4.0, 3)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nt.nn.RNN(4, 3, nonlinearity="sigmoid")
    with pytest.raises(RuntimeError, match="input has inconsistent input_size"):
        nt.nn.GRUCell(4, 5)(nt.randn(2, 3))


def test_recurrent_constructors_refuse_what_torch_refuses():
    """Each bad argument raises PyTorch's error (type and message), checked on both."""
    torch = oracle()
    cases = [("LSTM", (4, 5), dict(proj_size=5), ValueError, "proj_size has to be smaller than hidden_size"),
             ("LSTM", (4, 5), dict(proj_size=-1), ValueError, "proj_size should be a positive integer or zero"),
             ("GRU", (4, 5), dict(proj_size=2), ValueError, "proj_size argument is only supported for LSTM"),
             ("RNN", (4, 5), dict(proj_size=2), ValueError, "proj_size argument is only supported for LSTM"),
             ("LSTM", (4, 5), dict(bias=1), TypeError, "bias should be of type bool, got: int"),
             ("GRU", (4, 5), dict(batch_first=None), TypeError, "batch_first should be of type bool, got: NoneType"),
             ("LSTM", (0, 5), dict(), ValueError, "input_size must be greater than zero"),
             ("GRU", (4, 5), dict(num_layers=0), ValueError, "num_layers must be greater than zero"),
             ("RNN", (4, 5), dict(dropout=-0.1), ValueError, "dropout should be a number in range")]
    for cls, args, kw, err, msg in cases:
        for lib in (torch, nt):
            with pytest.raises(err, match=msg):
                getattr(lib.nn, cls)(*args, **kw)
    with pytest.raises(TypeError, match="proj_size should be of type int, got: float"):
        nt.nn.LSTM(4, 5, proj_size=2.0)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nt.nn.LSTM(4, 5, dropout=0.5)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 2\), got \[1, 2, 5\]"):
        nt.nn.LSTM(4, 5, proj_size=2)(nt.randn(6, 2, 4), (nt.zeros(1, 2, 5), nt.zeros(1, 2, 5)))


_PROJ = [dict(), dict(num_layers=2, bidirectional=True), dict(batch_first=True, bias=False),
         dict(num_layers=3)]


@pytest.mark.parametrize("kw", _PROJ, ids=["one_layer", "bidirectional_two_layers", "batch_first_no_bias",
                                           "three_layers"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_lstm_with_projections_matches_torch(kw, batched):
    torch = oracle()
    torch.manual_seed(0)
    tm = torch.nn.LSTM(4, 5, proj_size=3, dtype=torch.float64, **kw)
    om = nt.nn.LSTM(4, 5, proj_size=3, dtype=nt.float64, **kw)
    assert repr(om) == repr(tm)
    assert [tuple(p.shape) for p in om.parameters()] == [tuple(p.shape) for p in tm.parameters()]
    assert [[tuple(w.shape) for w in ws] for ws in om.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in tm.all_weights]
    _load(om, tm)
    rng = np.random.default_rng(0)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    if batched:
        x = rng.standard_normal((3, 6, 4) if kw.get("batch_first") else (6, 3, 4))
        hs, cs = (layers, 3, 3), (layers, 3, 5)
    else:
        x = rng.standard_normal((6, 4))
        hs, cs = (layers, 3), (layers, 5)
    (tx, th, tc), (ox, oh, oc) = _both(torch, [x, rng.standard_normal(hs), rng.standard_normal(cs)])
    to, (thn, tcn) = tm(tx, (th, tc))
    oo, (ohn, ocn) = om(ox, (oh, oc))
    for o, t in ((oo, to), (ohn, thn), (ocn, tcn)):
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(arr(o), t.detach().numpy(), rtol=TOL, atol=TOL)
    (to.sum() + thn.pow(2).sum() + tcn.sum()).backward()
    (oo.sum() + ohn.pow(2).sum() + ocn.sum()).backward()
    _check_grads([tx, th, tc], [ox, oh, oc], tm, om)
    # the default (zero) initial state has the projected size for h
    np.testing.assert_allclose(arr(om(ox)[0]), tm(tx)[0].detach().numpy(), rtol=TOL, atol=TOL)


def test_lstm_with_projections_on_packed_sequences_matches_torch():
    torch = oracle()
    from torch.nn.utils import rnn as TR

    from numtorch.nn.utils import rnn as OR
    torch.manual_seed(0)
    tm = torch.nn.LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True, dtype=torch.float64)
    om = nt.nn.LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True, dtype=nt.float64)
    _load(om, tm)
    lengths = [3, 5, 1, 4]
    (tx,), (ox,) = _both(torch, [np.random.default_rng(1).standard_normal((5, 4, 3))])
    to, (thn, tcn) = tm(TR.pack_padded_sequence(tx, lengths, enforce_sorted=False))
    oo, (ohn, ocn) = om(OR.pack_padded_sequence(ox, lengths, enforce_sorted=False))
    tpad, opad = TR.pad_packed_sequence(to)[0], OR.pad_packed_sequence(oo)[0]
    for o, t in ((opad, tpad), (ohn, thn), (ocn, tcn)):
        np.testing.assert_allclose(arr(o), t.detach().numpy(), rtol=TOL, atol=TOL)
    (tpad.pow(2).sum() + thn.sum() + tcn.sum()).backward()
    (opad.pow(2).sum() + ohn.sum() + ocn.sum()).backward()
    _check_grads([tx], [ox], tm, om)


def test_group_norm_refuses_one_value_per_group_as_torch_does():
    torch = oracle()
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        torch.nn.functional.group_norm(torch.ones(1, 4), 4)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nt.nn.functional.group_norm(nt.ones(1, 4), 4)


# ---------------------------------------------------------------------------------------
# Packed sequences

def test_pack_and_pad_utilities_match_torch():
    torch = oracle()
    from torch.nn.utils import rnn as TR

    from numtorch.nn.utils import rnn as OR
    rng = np.random.default_rng(0)
    lengths = [3, 5, 1, 4]
    x = rng.standard_normal((5, 4, 3))
    tp = TR.pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False)
    op = OR.pack_padded_sequence(nt.tensor(x), lengths, enforce_sorted=False)
    np.testing.assert_array_equal(arr(op.data), tp.data.numpy())
    assert op.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert op.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert op.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    tpad, tl = TR.pad_packed_sequence(tp, batch_first=True, total_length=6)
    opad, ol = OR.pad_packed_sequence(op, batch_first=True, total_length=6)
    np.testing.assert_array_equal(arr(opad), tpad.numpy())
    assert ol.tolist() == tl.tolist()
    seqs = [rng.standard_normal((n, 2)) for n in lengths]
    for kw in (dict(batch_first=True, padding_value=-1.0), dict(padding_side="left")):
        np.testing.assert_array_equal(arr(OR.pad_sequence([nt.tensor(s) for s in seqs], **kw)),
                                      TR.pad_sequence([torch.tensor(s) for s in seqs], **kw).numpy())
    np.testing.assert_array_equal(
        arr(OR.pack_sequence([nt.tensor(s) for s in seqs], enforce_sorted=False).data),
        TR.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False).data.numpy())
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        OR.pack_padded_sequence(nt.tensor(x), lengths)
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        OR.pack_padded_sequence(nt.tensor(x), [3, 0, 1, 1], enforce_sorted=False)
    with pytest.raises(ValueError, match="Expected total_length to be at least"):
        OR.pad_packed_sequence(op, total_length=2)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kw", [dict(), dict(bidirectional=True, num_layers=2)],
                         ids=["one_layer", "bidirectional_two_layers"])
def test_recurrent_layers_on_packed_sequences_match_torch(cls, kw):
    torch = oracle()
    from torch.nn.utils import rnn as TR

    from numtorch.nn.utils import rnn as OR
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(3, 4, dtype=torch.float64, **kw)
    om = getattr(nt.nn, cls)(3, 4, dtype=nt.float64, **kw)
    _load(om, tm)
    rng = np.random.default_rng(1)
    lengths = [3, 5, 1, 4]
    D, L = (2 if kw.get("bidirectional") else 1), kw.get("num_layers", 1)
    (tx, th), (ox, oh) = _both(torch, [rng.standard_normal((5, 4, 3)), rng.standard_normal((D * L, 4, 4))])
    t_hx, o_hx = ((th, th * 0.5), (oh, oh * 0.5)) if cls == "LSTM" else (th, oh)
    to, thn = tm(TR.pack_padded_sequence(tx, lengths, enforce_sorted=False), t_hx)
    oo, ohn = om(OR.pack_padded_sequence(ox, lengths, enforce_sorted=False), o_hx)
    assert isinstance(oo, OR.PackedSequence)
    tpad, _ = TR.pad_packed_sequence(to)
    opad, _ = OR.pad_packed_sequence(oo)
    thn, ohn = (thn[0], ohn[0]) if cls == "LSTM" else (thn, ohn)
    np.testing.assert_allclose(arr(opad), tpad.detach().numpy(), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(arr(ohn), thn.detach().numpy(), rtol=TOL, atol=TOL)
    (tpad.pow(2).sum() + thn.sum()).backward()
    (opad.pow(2).sum() + ohn.sum()).backward()
    _check_grads([tx, th], [ox, oh], tm, om)
