"""einsum: values vs NumPy and PyTorch (with gradients), transforms, meta shapes, errors."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

rng = np.random.default_rng(0)

EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ij->", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("Ab", [(2, 3)]),
    ("bA,Ab", [(2, 3), (3, 2)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (1, 3, 4)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    ("ij...,j...->i...", [(3, 4, 5), (4,)]),
    ("ij->j...", [(2, 3)]),
    ("ij,...->j", [(2, 3), (2, 3)]),
    ("i ,j-> ij", [(2,), (3,)]),
    ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,de,ea->b", [(2, 3, 4), (4, 5), (5, 6), (6, 2)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 6)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ii,jj->ij", [(2, 2), (3, 3)]),
    ("i,jk->", [(2,), (3, 4)]),
    ("i,i->", [(3,), (1,)]),           # size-1 dims broadcast, as in PyTorch
    ("ij,jk->ik", [(2, 1), (3, 4)]),
]


def _numpy_einsum(eq, arrays):
    # NumPy does not broadcast size-1 labels against larger ones: expand them first.
    if eq == "i,i->":
        arrays = [arrays[0], np.broadcast_to(arrays[1], (3,))]
    if eq == "ij,jk->ik" and arrays[0].shape == (2, 1):
        arrays = [np.broadcast_to(arrays[0], (2, 3)), arrays[1]]
    if eq == "ij,...->j":   # NumPy cannot sum an ellipsis away: it is a plain sum here
        return arrays[0].sum(0) * arrays[1].sum()
    return np.einsum(eq.replace(" ", ""), *arrays)


@pytest.mark.parametrize("eq,shapes", EQUATIONS)
def test_values_match_numpy(eq, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    out = torch.einsum(eq, *[torch.tensor(a) for a in arrays])
    ref = _numpy_einsum(eq, arrays)
    assert tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eq,shapes", EQUATIONS)
def test_values_and_gradients_match_torch(eq, shapes):
    pt = pytest.importorskip("torch")
    arrays = [rng.standard_normal(s) for s in shapes]
    ts = [pt.tensor(a, requires_grad=True) for a in arrays]
    ns = [torch.tensor(a, requires_grad=True) for a in arrays]
    yt, yn = pt.einsum(eq, *ts), torch.einsum(eq, *ns)
    np.testing.assert_allclose(yn.detach().numpy(), yt.detach().numpy(), atol=1e-12)
    w = rng.standard_normal(tuple(yt.shape))
    gt = pt.autograd.grad((yt * pt.tensor(w)).sum(), ts)
    gn = torch.autograd.grad((yn * torch.tensor(w)).sum(), ns)
    for a, b in zip(gt, gn):
        np.testing.assert_allclose(b.numpy(), a.numpy(), atol=1e-12)


def test_operand_list_sublist_format_and_scalars():
    a, b = torch.randn(2, 3), torch.randn(3, 4)
    ref = torch.einsum("ij,jk->ik", a, b)
    assert torch.allclose(torch.einsum("ij,jk->ik", [a, b]), ref)
    assert torch.allclose(torch.einsum(a, [0, 1], b, [1, 2], [0, 2]), ref)
    assert torch.einsum(a, [0, Ellipsis], [Ellipsis]).shape == (3,)
    assert torch.einsum("->", torch.tensor(2.0)).item() == 2.0
    ints = torch.einsum("ij,jk->ik", torch.ones(2, 3, dtype=torch.int64), torch.ones(3, 4, dtype=torch.int64))
    assert ints.dtype == torch.int64 and ints.tolist() == [[3] * 4] * 2


def test_contraction_order_follows_numpy_greedy_path():
    from numtorch._ops.einsum import _path
    shapes = ((2, 100), (100, 3), (3, 50))
    labels = ((0, 1), (1, 2), (2, 3))
    expected = np.einsum_path("ab,bc,cd", *[np.empty(s) for s in shapes], optimize="greedy")[0][1:]
    assert list(_path(labels, shapes)) == [tuple(p) for p in expected]


def test_jvp_vjp_vmap_and_hessian():
    a, b, c = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64), \
        torch.randn(5, dtype=torch.float64)

    def f(a, b, c):
        return torch.einsum("ij,jk,k->i", a, b, c)
    ta, tb, tc = (torch.randn(*x.shape, dtype=torch.float64) for x in (a, b, c))
    out, tangent = jvp(f, (a, b, c), (ta, tb, tc))
    _, pullback = vjp(f, a, b, c)
    u = torch.randn(3, dtype=torch.float64)
    ga, gb, gc = pullback(u)
    lhs = ((ga * ta).sum() + (gb * tb).sum() + (gc * tc).sum()).item()
    assert abs(lhs - (u * tangent).sum().item()) < 1e-10 * max(1.0, abs(lhs))
    xs = torch.randn(6, 3, 4, dtype=torch.float64)
    batched = vmap(f, in_dims=(0, None, None))(xs, b, c)
    np.testing.assert_allclose(batched.numpy(), torch.stack([f(x, b, c) for x in xs]).numpy(), atol=1e-12)
    ys = torch.randn(6, 4, 5, dtype=torch.float64)
    both = vmap(lambda x, y: torch.einsum("ii,ij->j", x[:, :3], y[:3]))(xs[:, :3], ys)
    ref = torch.stack([torch.einsum("ii,ij->j", x[:, :3], y[:3]) for x, y in zip(xs[:, :3], ys)])
    np.testing.assert_allclose(both.numpy(), ref.numpy(), atol=1e-12)

    def scalar(a):
        return torch.einsum("ij,ij,jk->", a, a, b).sin()
    h = hessian(scalar)(a)
    np.testing.assert_allclose(h.numpy(), jacfwd(jacrev(scalar))(a).numpy(), atol=1e-10)
    g = vmap(grad(scalar))(xs)
    np.testing.assert_allclose(g.numpy(), torch.stack([grad(scalar)(x) for x in xs]).numpy(), atol=1e-12)


def test_meta_shapes():
    out = torch.einsum("bij,bjk->bik", torch.randn(4, 2, 3, device="meta"), torch.randn(4, 3, 5, device="meta"))
    assert out.shape == (4, 2, 5) and out.is_meta
    assert torch.einsum("ii->i", torch.randn(3, 3, device="meta")).shape == (3,)


@pytest.mark.parametrize("args,error,message", [
    (("ij->ij", torch.randn(2, 3, 4)), RuntimeError,
     "einsum(): the number of subscripts in the equation (2) does not match the number of "
     "dimensions (3) for operand 0 and no ellipsis was given"),
    (("ijk...->i", torch.randn(2, 3)), RuntimeError,
     "einsum(): the number of subscripts in the equation (3) is more than the number of dimensions "
     "(2) for operand 0"),
    (("ij,jk->ik", torch.randn(2, 3), torch.randn(4, 4)), RuntimeError,
     "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen "
     "size 3"),
    (("...ij,...jk->...ik", torch.randn(5, 2, 3), torch.randn(4, 3, 4)), RuntimeError,
     "einsum(): dimension 0 covered by ellipsis in operand 1has size 4 which does not broadcast "
     "with previously seen ellipsis with size 5 for the respective dimension"),
    (("ij,jk->ik", torch.randn(2, 3)), RuntimeError,
     "einsum(): fewer operands were provided than specified in the equation"),
    (("ij", torch.randn(2, 3), torch.randn(3, 4)), RuntimeError,
     "einsum(): more operands were provided than specified in the equation"),
    (("ij->ix", torch.randn(2, 3)), RuntimeError,
     "einsum(): output subscript x does not appear in the equation for any input operand"),
    (("ij->ii", torch.randn(2, 3)), RuntimeError,
     "einsum(): output subscript i appears more than once in the output"),
    (("i.j->ij", torch.randn(2, 3)), RuntimeError,
     "einsum(): found '.' for operand 0 that is not part of any ellipsis"),
    (("ij...k...", torch.randn(2, 3)), RuntimeError,
     "einsum(): found '.' for operand 0 for which an ellipsis was already found"),
    (("ij->...i...", torch.randn(2, 3)), RuntimeError,
     "einsum(): found '.' for output but an ellipsis (...) was already found"),
    ((" ij ; ", torch.randn(2, 3)), RuntimeError,
     "einsum(): invalid subscript given at index 4 in the equation string, subscripts must be in "
     "[a-zA-Z]"),
    (("ii->i", torch.randn(2, 3)), RuntimeError,
     "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    (("ij,jk->ik", torch.randn(2, 3), torch.randn(3, 4, dtype=torch.float64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (("ij",), ValueError, "einsum(): must specify the equation string and at least one operand"),
    (("ij", 3), TypeError, "expected Tensor as element 0 in argument 1, but got int"),
])
def test_error_messages(args, error, message):
    with pytest.raises(error) as info:
        torch.einsum(*args)
    assert message in str(info.value)
