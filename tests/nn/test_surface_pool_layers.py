"""The 3-d layers (Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d), the
adaptive max pools (nn/_adaptive_max_pool.py) and EmbeddingBag (nn/_embedding_bag.py)
against PyTorch: repr, parameter names and shapes, initialization, and outputs and
gradients on the same weights and inputs."""
import numpy as np
import pytest

import numtorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _twin(make, x, **call):
    ours, theirs = make(numtorch), make(torch)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    for p, q in zip(ours.parameters(), theirs.parameters()):
        p.data = numtorch.tensor(q.detach().numpy().copy())
    floating = x.dtype.kind == "f"
    a = numtorch.tensor(x, requires_grad=floating)
    b = torch.tensor(x, requires_grad=floating)
    oa = ours(a, **{k: numtorch.tensor(v) for k, v in call.items()})
    ob = theirs(b, **{k: torch.tensor(v) for k, v in call.items()})
    oa, ob = (oa if isinstance(oa, tuple) else (oa,)), (ob if isinstance(ob, tuple) else (ob,))
    for u, v in zip(oa, ob):
        assert str(u.dtype) == str(v.dtype) and tuple(u.shape) == tuple(v.shape)
        np.testing.assert_allclose(u.detach().numpy(), v.detach().numpy(), atol=1e-5)
    g = RNG.standard_normal(tuple(ob[0].shape)).astype(np.float32)
    oa[0].backward(numtorch.tensor(g)), ob[0].backward(torch.tensor(g))
    pairs = list(zip(ours.parameters(), theirs.parameters())) + ([(a, b)] if floating else [])
    for p, q in pairs:
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-4)


X5 = RNG.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)


@pytest.mark.parametrize("make, x", [
    (lambda m: m.nn.Conv3d(3, 4, 3), X5),
    (lambda m: m.nn.Conv3d(3, 6, (2, 3, 1), stride=(1, 2, 1), padding=1, groups=3, bias=False), X5),
    (lambda m: m.nn.Conv3d(3, 2, 3, padding="same", padding_mode="reflect", dilation=(1, 2, 1)), X5),
    (lambda m: m.nn.ConvTranspose3d(3, 2, 2, stride=2, padding=1, output_padding=1), X5[:, :, :3]),
    (lambda m: m.nn.MaxPool3d(2), X5),
    (lambda m: m.nn.MaxPool3d((3, 2, 2), stride=2, padding=1, ceil_mode=True), X5),
    (lambda m: m.nn.AvgPool3d(2, stride=1, padding=1, count_include_pad=False), X5),
    (lambda m: m.nn.AdaptiveAvgPool3d((2, None, 3)), X5),
    (lambda m: m.nn.AdaptiveMaxPool1d(4), X5[0, 0]),
    (lambda m: m.nn.AdaptiveMaxPool2d((3, None), return_indices=True), X5[0]),
    (lambda m: m.nn.AdaptiveMaxPool2d(1), X5[:, 0]),
    (lambda m: m.nn.AdaptiveMaxPool3d((2, 3, 4), return_indices=True), X5),
], ids=["conv3d", "conv3d_groups", "conv3d_same_reflect", "conv_transpose3d", "max_pool3d",
        "max_pool3d_ceil", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
        "adaptive_max_pool2d_indices", "adaptive_max_pool2d_global", "adaptive_max_pool3d"])
def test_layer_matches_torch(make, x):
    _twin(make, x)


def test_conv3d_init_is_pytorchs_uniform():
    conv = numtorch.nn.Conv3d(4, 8, 3)
    bound = 1 / np.sqrt(4 * 27)      # kaiming_uniform(a=sqrt(5)): 1 / sqrt(fan_in)
    w, b = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.1 * bound
    assert np.abs(b).max() <= bound


IDX = np.array([1, 2, 4, 5, 4, 3, 2, 0])
OFFSETS = np.array([0, 3, 3, 5])


@pytest.mark.parametrize("make, x, call", [
    (lambda m: m.nn.EmbeddingBag(6, 3), IDX, dict(offsets=OFFSETS)),
    (lambda m: m.nn.EmbeddingBag(6, 3, mode="max", padding_idx=4), IDX, dict(offsets=OFFSETS)),
    (lambda m: m.nn.EmbeddingBag(6, 3, mode="sum", include_last_offset=True), IDX,
     dict(offsets=np.array([0, 3, 3, 5, 8]),
          per_sample_weights=RNG.standard_normal(8).astype(np.float32))),
    (lambda m: m.nn.EmbeddingBag(6, 3, max_norm=0.5, norm_type=1.0), IDX.reshape(2, 4), {}),
], ids=["mean", "max_padding", "sum_weights_last_offset", "max_norm_2d"])
def test_embedding_bag_matches_torch(make, x, call):
    _twin(make, x, **call)


def test_embedding_bag_scale_grad_by_freq_is_documented_semantics():
    # each row's gradient divided by its index's count in the batch (PyTorch 2.13's CPU
    # kernel misattributes the counts: there row 4, used twice, gets 2.0 and row 3 gets 0.5)
    w = numtorch.ones(6, 1, requires_grad=True)
    numtorch.nn.functional.embedding_bag(numtorch.tensor(IDX.reshape(2, 4)), w, mode="sum",
                                         scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy().ravel(), [1, 1, 1, 1, 1, 1])


def test_embedding_bag_init_and_from_pretrained():
    bag = numtorch.nn.EmbeddingBag(400, 50, padding_idx=-1)
    w = bag.weight.detach().numpy()
    assert bag.padding_idx == 399 and not w[399].any()
    assert abs(w[:399].mean()) < 0.02 and abs(w[:399].std() - 1) < 0.02     # N(0, 1)
    pre = numtorch.nn.EmbeddingBag.from_pretrained(numtorch.ones(3, 2), mode="sum")
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.ones(3, 2), mode="sum")
    assert repr(pre) == repr(theirs) and not pre.weight.requires_grad
    out = pre(numtorch.tensor([[0, 2]]))
    np.testing.assert_allclose(out.numpy(), theirs(torch.tensor([[0, 2]])).numpy())


@pytest.mark.parametrize("call", [
    lambda F, t: F.embedding_bag(t.tensor([0, 1]), t.ones(3, 2), mode="sum"),
    lambda F, t: F.embedding_bag(t.tensor([[0, 1]]), t.ones(3, 2), t.tensor([0])),
    lambda F, t: F.embedding_bag(t.tensor([0, 1]), t.ones(3, 2), t.tensor([0]), mode="max",
                                 per_sample_weights=t.ones(2)),
    lambda F, t: F.embedding_bag(t.tensor([0, 1]), t.ones(3, 2), t.tensor([0]), mode="median"),
    lambda F, t: F.embedding_bag(t.tensor([0.0, 1.0]), t.ones(3, 2), t.tensor([0])),
    lambda F, t: F.embedding_bag(t.tensor([0, 1]), t.ones(3, 2), t.tensor([[0]])),
    lambda F, t: F.embedding_bag(t.tensor([0, 1]), t.ones(3, 2), t.tensor([1])),
    lambda F, t: F.embedding_bag(t.tensor([0, 7]), t.ones(3, 2), t.tensor([0])),
    lambda F, t: F.embedding_bag(t.tensor([0, 7]), t.ones(3, 2, dtype=t.float64), t.tensor([0])),
    lambda F, t: F.embedding_bag(t.tensor([0, 1]), t.ones(3, 2), t.tensor([0]), mode="max",
                                 scale_grad_by_freq=True),
    lambda F, t: F.embedding_bag(t.tensor([[[0]]]), t.ones(3, 2)),
    lambda F, t: F.embedding_bag(t.tensor([0, 1]), t.ones(3, 2), t.tensor([0]), mode="sum",
                                 per_sample_weights=t.ones(3)),
    lambda F, t: F.adaptive_max_pool2d(t.ones(4), 2),
    lambda F, t: F.adaptive_max_pool2d(t.ones(2, 3, 4), (2, 2, 2)),
    lambda F, t: F.adaptive_max_pool1d(t.ones(2, 3, 4), (2, 2)),
    lambda F, t: F.adaptive_max_pool2d(t.ones(2, 3, 4, dtype=t.int64), 2),
    lambda F, t: F.adaptive_max_pool2d(t.ones(2, 0, 4), 2),
    lambda F, t: F.adaptive_max_pool2d(t.ones(2, 3, 4), -1),
], ids=["bag_no_offsets", "bag_2d_offsets", "bag_max_weights", "bag_mode", "bag_float_index",
        "bag_offsets_2d", "bag_offsets_start", "bag_index_range", "bag_index_range_f64",
        "bag_max_freq", "bag_3d", "bag_weights_shape",
        "amp_1d_input", "amp_size_len", "amp1d_size_len", "amp_int", "amp_empty", "amp_negative"])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch.nn.functional, torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(numtorch.nn.functional, numtorch)
    assert str(ours.value).splitlines()[0][:40] == str(theirs.value).splitlines()[0][:40]
