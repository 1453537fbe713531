"""nn.Module and nn.Parameter: registration, traversal order and names, state_dict,
conversions (double, meta), deepcopy, hooks, modes, containers — PyTorch's behaviour."""
import copy
import pickle

import numpy as np
import pytest

import numtorch as nt
import numtorch.nn as nn
from nn_helpers import oracle


def build(lib):
    """A nested model exercising every registration path, in numtorch or PyTorch."""
    N = lib.nn

    class Inner(N.Module):
        def __init__(self):
            super().__init__()
            self.proj = N.Linear(4, 3)
            self.scale = N.Parameter(lib.ones(3))
            self.register_buffer("offset", lib.zeros(3))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)
            self.norm = N.LayerNorm(3)

        def forward(self, x):
            return self.norm(self.proj(x) * self.scale + self.offset)

    class Outer(N.Module):
        def __init__(self):
            super().__init__()
            self.embed = N.Linear(5, 4, bias=False)
            self.blocks = N.ModuleList([Inner(), Inner()])
            self.heads = N.ModuleDict({"b": N.Linear(3, 2), "a": N.Sequential(N.ReLU(), N.Linear(3, 1))})
            self.bn = N.BatchNorm1d(3)
            self.tied = self.embed  # the same module twice: deduplicated in traversal

        def forward(self, x):
            h = self.embed(x)
            for b in self.blocks:
                h = b(h[..., :4] if h.shape[-1] == 4 else lib.cat([h, h[..., :1]], -1))
            h = self.bn(h)
            return self.heads["b"](h).sum(-1) + self.heads["a"](h)[..., 0]

    return Outer()


def copy_state(ours, theirs):
    """Copy PyTorch's parameters and buffers into the numtorch model (same names)."""
    sd = {k: nt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(sd)


def test_named_parameters_buffers_modules_match_torch_names_and_order():
    torch = oracle()
    ours, theirs = build(nt), build(torch)
    for method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        assert [n for n, _ in getattr(ours, method)()] == [n for n, _ in getattr(theirs, method)()]
    assert [n for n, _ in ours.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in theirs.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in ours.named_parameters(prefix="m", recurse=False)] == []
    assert [n for n, _ in ours.blocks[0].named_parameters(prefix="x", recurse=False)] == ["x.scale"]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]


@pytest.mark.parametrize("dtype,rtol,atol", [("float64", 1e-10, 1e-12)])
def test_model_forward_backward_matches_torch_after_copying_state(dtype, rtol, atol):
    # float64 only: the tiny LayerNorm(3) after BatchNorm amplifies float32 rounding ~1e3x.
    torch = oracle()
    torch.manual_seed(0)    # the weights must not depend on which tests ran before
    ours, theirs = build(nt).to(getattr(nt, dtype)), build(torch).to(getattr(torch, dtype))
    copy_state(ours, theirs)
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(dtype)
    out, ref = ours(nt.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=rtol, atol=atol)
    out.sum().backward()
    ref.sum().backward()
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        # An element whose gradient nearly cancels to 0 keeps the rounding of the sum's
        # largest terms: atol is relative to the tensor's largest gradient (over 30 seeds
        # the worst such element was 1.7e-12 beside a largest gradient of 4.6).
        scale = max(1.0, float(np.abs(q.grad.numpy()).max()))
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=atol * scale,
                                   err_msg=n)
    for (n, b), (_, c) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=rtol, atol=atol, err_msg=n)


def test_repr_matches_torch():
    torch = oracle()
    assert repr(build(nt)) == repr(build(torch))


# ---------------------------------------------------------------------------------------
# Parameter

def test_parameter_is_a_leaf_tensor_sharing_storage():
    torch = oracle()
    data = nt.zeros(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, nt.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    data[0, 0] = 5.0
    assert p[0, 0].item() == 5.0
    assert not isinstance(p * 2, nn.Parameter)
    assert not nn.Parameter(nt.ones(1), requires_grad=False).requires_grad
    assert tuple(nn.Parameter().shape) == (0,)
    assert repr(nn.Parameter(nt.tensor([1.0, 2.0]))) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        nn.Parameter(nt.tensor([1, 2]))


def test_parameter_survives_deepcopy_and_pickle():
    p = nn.Parameter(nt.randn(3))
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert isinstance(q, nn.Parameter) and q.requires_grad
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())


def test_is_param_flag_makes_a_tensor_count_as_parameter():
    t = nt.ones(2)
    assert not isinstance(t, nn.Parameter)
    t._is_param = True
    assert isinstance(t, nn.Parameter)


# ---------------------------------------------------------------------------------------
# registration

def test_attribute_assignment_routes_to_the_right_dict():
    m = nn.Module()
    m.w = nn.Parameter(nt.ones(2))
    m.sub = nn.Linear(2, 2)
    m.buf = nn.Buffer(nt.zeros(2))
    m.temp = nn.Buffer(nt.zeros(1), persistent=False)
    m.plain = nt.ones(3)
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"]
    assert list(m._buffers) == ["buf", "temp"] and "plain" in m.__dict__
    assert list(m.state_dict()) == ["w", "buf", "sub.weight", "sub.bias"]
    m.buf = nt.ones(2)                      # a tensor assigned to a buffer name stays a buffer
    assert m._buffers["buf"].tolist() == [1.0, 1.0]
    m.w = None
    assert m._parameters["w"] is None and "w" not in dict(m.named_parameters())
    m.sub = nn.Parameter(nt.ones(1))        # re-assigning as another kind moves the name
    assert "sub" not in m._modules and "sub" in m._parameters
    del m.sub, m.buf, m.plain
    assert "sub" not in m._parameters and "buf" not in m._buffers and not hasattr(m, "plain")


def test_registration_errors_match_torch():
    m = nn.Linear(3, 4)
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'weight' "
                                        r"\(torch.nn.Parameter or None expected\)"):
        m.weight = nt.zeros(1)
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.register_buffer("weight", nt.zeros(1))
    with pytest.raises(KeyError, match=r'parameter name can.*t contain "\."'):
        m.register_parameter("a.b", None)
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' object to parameter 'x'"):
        nn.Module().register_parameter("x", nt.zeros(1))
    with pytest.raises(TypeError, match=r"cannot assign 'int' object to buffer 'x' \(torch Tensor or None required\)"):
        nn.Module().register_buffer("x", 3)
    with pytest.raises(TypeError, match="module name should be a string. Got int"):
        nn.Module().add_module(3, None)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        nn.Module().add_module("x", 3)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'foo'"):
        m.foo
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'p'"):
        nn.Module().register_parameter("p", _nonleaf_param())

    class NoInit(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(nt.ones(1))
    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        NoInit()
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


def _nonleaf_param():
    p = nn.Parameter(nt.ones(1))
    q = p * 2
    q.__class__ = nn.Parameter
    return q


def test_get_submodule_parameter_buffer():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    assert m.get_submodule("") is m and m.get_submodule("1") is m[1]
    assert m.get_parameter("0.weight") is m[0].weight
    assert m.get_buffer("1.running_mean") is m[1].running_mean
    with pytest.raises(AttributeError, match="Linear has no attribute `foo`"):
        m.get_submodule("0.foo")
    with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
        m.get_parameter("5.weight")
    with pytest.raises(AttributeError, match="`in_features` is not an nn.Parameter"):
        m.get_parameter("0.in_features")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        m.get_buffer("1.weight")


# ---------------------------------------------------------------------------------------
# state_dict

def test_state_dict_round_trip_restores_outputs():
    src, dst = build(nt), build(nt)
    x = nt.randn(4, 5)
    src.eval(), dst.eval()
    sd = src.state_dict()
    assert all(not v.requires_grad for v in sd.values())
    assert sd["embed.weight"].numpy() is not None and "blocks.0.scratch" not in sd
    result = dst.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    np.testing.assert_array_equal(src(x).detach().numpy(), dst(x).detach().numpy())
    sd["embed.weight"][0, 0] = 123.0      # state_dict values share storage with parameters
    assert src.embed.weight[0, 0].item() == 123.0
    assert dst.embed.weight[0, 0].item() != 123.0
    kv = src.state_dict(keep_vars=True)
    assert kv["embed.weight"] is src.embed.weight


def test_load_state_dict_strict_errors_match_torch():
    torch = oracle()
    extra = {"weight": nt.zeros(4, 3), "foo": nt.zeros(1)}
    with pytest.raises(RuntimeError) as ours:
        nn.Linear(3, 4).load_state_dict(extra)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Linear(3, 4).load_state_dict({"weight": torch.zeros(4, 3), "foo": torch.zeros(1)})
    assert str(ours.value) == str(theirs.value)
    assert 'Missing key(s) in state_dict: "bias"' in str(ours.value)
    with pytest.raises(RuntimeError) as ours:
        nn.Linear(3, 4).load_state_dict({"weight": nt.zeros(3, 3), "bias": nt.zeros(4)})
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Linear(3, 4).load_state_dict({"weight": torch.zeros(3, 3), "bias": torch.zeros(4)})
    assert str(ours.value) == str(theirs.value)
    r = nn.Linear(3, 4).load_state_dict({"weight": nt.zeros(4, 3), "foo": nt.zeros(1)}, strict=False)
    assert r.missing_keys == ["bias"] and r.unexpected_keys == ["foo"]


def test_load_state_dict_copies_in_place_or_assigns():
    m = nn.Linear(2, 2)
    w = m.weight
    m.load_state_dict({"weight": nt.ones(2, 2), "bias": nt.zeros(2)})
    assert m.weight is w and m.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    new_w = nt.full((2, 2), 3.0)
    m.load_state_dict({"weight": new_w, "bias": nt.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight is not w and m.weight[0, 0].item() == 3.0


# ---------------------------------------------------------------------------------------
# conversions

def test_double_converts_floats_in_place_keeping_parameter_identity():
    m = build(nt)
    params = list(m.parameters())
    m(nt.randn(3, 5)).sum().backward()
    assert m.double() is m
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert all(p.dtype == nt.float64 and p.grad.dtype == nt.float64 for p in m.parameters())
    assert m.bn.running_mean.dtype == nt.float64 and m.bn.num_batches_tracked.dtype == nt.int64
    assert m(nt.randn(3, 5, dtype=nt.float64)).dtype == nt.float64
    m.float()
    assert all(p.dtype == nt.float32 for p in m.parameters())
    m.to(nt.float16)
    assert m.embed.weight.dtype == nt.float16
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex "
                                        "dtypes, but got desired dtype=torch.int64"):
        m.to(nt.int64)


def test_to_meta_keeps_shapes_and_identity_and_runs_shape_only():
    m = build(nt)
    w = m.embed.weight
    shapes = {n: tuple(p.shape) for n, p in m.named_parameters()}
    m.to("meta")
    assert m.embed.weight is w and w.is_meta and w.requires_grad
    assert {n: tuple(p.shape) for n, p in m.named_parameters()} == shapes
    assert all(b.is_meta for b in m.buffers())
    m.eval()
    out = m(nt.randn(7, 5, device="meta"))
    assert out.is_meta and tuple(out.shape) == (7,)
    with pytest.raises(RuntimeError, match="meta"):
        w.item()
    with pytest.warns(UserWarning, match="copying from a non-meta parameter in the checkpoint to "
                                         "a meta parameter"):
        m.load_state_dict(build(nt).state_dict())
    assert m.embed.weight.is_meta


def test_modules_built_on_meta_have_no_data_and_to_empty_materializes():
    m = nn.Linear(3, 4, device="meta")
    assert m.weight.is_meta and tuple(m.weight.shape) == (4, 3)
    m.to_empty(device="cpu")
    assert not m.weight.is_meta and tuple(m.weight.shape) == (4, 3)
    m.load_state_dict(nn.Linear(3, 4).state_dict())


# ---------------------------------------------------------------------------------------
# deepcopy, modes, grads

def test_deepcopy_is_independent_and_keeps_ties():
    m = build(nt)
    m(nt.randn(2, 5)).sum().backward()
    c = copy.deepcopy(m)
    running = m.bn.running_mean.numpy().copy()
    assert c.tied is c.embed and c.embed is not m.embed
    for (n, p), (_, q) in zip(m.named_parameters(), c.named_parameters()):
        assert p is not q and isinstance(q, nn.Parameter) and q.requires_grad
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    with nt.no_grad():
        c.embed.weight.fill_(7.0)
        c.bn.running_mean.fill_(3.0)
    assert m.embed.weight[0, 0].item() != 7.0
    np.testing.assert_array_equal(m.bn.running_mean.numpy(), running)


def test_train_eval_requires_grad_zero_grad_apply():
    m = build(nt)
    assert m.training and all(x.training for x in m.modules())
    m.eval()
    assert not any(x.training for x in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(1)
    m.train()
    m(nt.randn(3, 5)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    seen = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen[-1] == "Outer" and seen.count("Linear") == 5


# ---------------------------------------------------------------------------------------
# hooks

def test_forward_hooks_fire_modify_and_remove():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre") or (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append("post") or out + 1)
    h3 = m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    out = m(nt.ones(1, 2))
    assert calls == ["pre", "first", "post"]
    np.testing.assert_allclose(out.detach().numpy(), m.bias.detach().numpy()[None] + 1)
    for h in (h1, h2, h3):
        h.remove()
    calls.clear()
    m(nt.ones(1, 2))
    assert calls == []


def test_hooks_with_kwargs_and_always_call():
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            if factor < 0:
                raise ValueError("negative")
            return x * factor

    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": kwargs["factor"] * 2}),
                                with_kwargs=True)
    seen = []
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append((kwargs["factor"], out)),
                            with_kwargs=True, always_call=True)
    assert m(nt.ones(1), factor=3.0).item() == 6.0
    with pytest.raises(ValueError):
        m(nt.ones(1), factor=-1.0)
    assert seen[0][0] == 6.0 and seen[1] == (-2.0, None)


# ---------------------------------------------------------------------------------------
# containers

def test_sequential_indexing_slicing_and_editing():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and list(s) == [a, b, c]
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    assert [n for n, _ in sub.named_parameters()] == ["2.weight", "2.bias"]
    x = nt.randn(4, 2)
    np.testing.assert_allclose(s(x).detach().numpy(), c(b(a(x))).detach().numpy())
    s.append(nn.Sigmoid())
    assert len(s) == 4
    del s[1]
    assert list(s._modules) == ["0", "1", "2"] and s[1] is c
    s.insert(1, nn.Tanh())
    assert isinstance(s[1], nn.Tanh) and len(s) == 4
    named = nn.Sequential(__import__("collections").OrderedDict([("fc", a), ("act", b)]))
    assert named.fc is a and [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]
    assert len(s + named) == 6
    with pytest.raises(IndexError, match="index 9 is out of range"):
        s[9]


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml.insert(0, nn.Sigmoid())
    assert len(ml) == 6 and isinstance(ml[0], nn.Sigmoid) and isinstance(ml[-1], nn.Tanh)
    assert [n for n, _ in ml.named_parameters()][:2] == ["1.weight", "1.bias"]
    assert len(ml[1:3]) == 2
    md = nn.ModuleDict({"x": nn.ReLU()})
    md["y"] = nn.Linear(2, 2)
    md.update([("z", nn.Tanh())])
    assert list(md.keys()) == ["x", "y", "z"] and "y" in md and len(md) == 3
    assert md.pop("x").__class__ is nn.ReLU and list(md) == ["y", "z"]
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        nn.ModuleList([3])


def test_container_reprs_match_torch():
    torch = oracle()
    for lib_build in (lambda L: L.nn.ModuleList([L.nn.Linear(2, 2)] * 3 + [L.nn.ReLU()]),
                      lambda L: L.nn.ModuleDict({"a": L.nn.ReLU(), "b": L.nn.Linear(1, 2)}),
                      lambda L: L.nn.ParameterList([L.nn.Parameter(L.zeros(2)),
                                                    L.nn.Parameter(L.zeros(2, 3, dtype=L.float64))]),
                      lambda L: L.nn.ParameterDict({"a": L.nn.Parameter(L.zeros(2))})):
        assert repr(lib_build(nt)) == repr(lib_build(torch))


def test_parameter_list_and_dict_register_parameters():
    pl = nn.ParameterList([nt.ones(2), nn.Parameter(nt.zeros(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(nt.ones(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    pd = nn.ParameterDict({"a": nt.ones(2)})
    pd["b"] = nn.Parameter(nt.zeros(1))
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["a"], nn.Parameter)
    m = nn.Module()
    m.params = pd
    assert [n for n, _ in m.named_parameters()] == ["params.a", "params.b"]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)
