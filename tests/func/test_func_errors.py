"""Bad input to the transforms gets a clear error naming what was expected."""
import pytest

import numtorch as torch
from numtorch.func import grad, jacrev, jvp, vjp, vmap


def test_grad_of_non_scalar_output():
    with pytest.raises(RuntimeError, match="scalar Tensor, got tensor with 1 dims"):
        grad(lambda x: x * 2)(torch.randn(3))


def test_grad_of_non_tensor_output():
    with pytest.raises(RuntimeError, match="to return a Tensor, got float"):
        grad(lambda x: 1.0)(torch.randn(3))


def test_grad_argnums_out_of_range():
    with pytest.raises(RuntimeError, match="Got argnums=2, but only 1 positional inputs"):
        grad(lambda x: x.sum(), argnums=2)(torch.randn(3))


def test_grad_of_integer_input():
    with pytest.raises(RuntimeError, match="floating point"):
        grad(lambda x: x.sum())(torch.arange(3))


def test_vmap_in_dims_structure_mismatch():
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        vmap(lambda a, b: a + b, in_dims=(0,))(torch.randn(2), torch.randn(2))


def test_vmap_in_dim_out_of_range():
    with pytest.raises(ValueError, match=r"expected in_dim to satisfy -1 <= in_dim < 1"):
        vmap(torch.sin, in_dims=1)(torch.randn(3))


def test_vmap_sizes_differ():
    with pytest.raises(ValueError, match=r"same size in the mapped dimension, got sizes \[2, 3\]"):
        vmap(torch.add)(torch.randn(2), torch.randn(3))


def test_vmap_in_dim_for_non_tensor():
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        vmap(lambda a, n: a * n, in_dims=(0, 0))(torch.randn(2), 3)


def test_vmap_item_and_control_flow_point_to_where():
    with pytest.raises(RuntimeError, match=r"\.item\(\).*torch.where"):
        vmap(lambda r: r.sum().item())(torch.randn(2, 3))
    with pytest.raises(RuntimeError, match="torch.where"):
        vmap(lambda r: r * 2 if r.sum() > 0 else r)(torch.randn(2, 3))


def test_vmap_output_must_be_tensor():
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda r: 3)(torch.randn(2))


def test_vmap_random_in_error_mode():
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda r: torch.randn(3) + r)(torch.randn(2, 3))


def test_vmap_bad_randomness_string():
    with pytest.raises(RuntimeError, match="'error', 'different', or 'same'"):
        vmap(torch.sin, randomness="sometimes")


def test_writing_batched_value_into_captured_tensor():
    captured = torch.zeros(3)

    def f(r):
        captured.add_(r)
        return r
    with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
        vmap(f)(torch.randn(2, 3))


def test_escaped_tracer():
    leaked = []

    def f(x):
        leaked.append(x)
        return (x * 2).sum()
    grad(f)(torch.randn(3))
    with pytest.raises(RuntimeError, match="escaped tracer"):
        leaked[0] + 1


def test_jvp_shape_and_structure_mismatch():
    with pytest.raises(RuntimeError, match="same shape"):
        jvp(torch.sin, (torch.randn(3),), (torch.randn(4),))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        jvp(torch.sin, torch.randn(3), (torch.randn(3),))
    with pytest.raises(RuntimeError, match="same python structure"):
        jvp(torch.add, (torch.randn(3), torch.randn(3)), (torch.randn(3),))


def test_vjp_cotangent_shape_mismatch():
    _, fn = vjp(torch.sin, torch.randn(3))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        fn(torch.randn(4))


def test_jacrev_of_non_tensor_output():
    with pytest.raises(RuntimeError, match="Expected f to be a function that has only Tensor outputs"):
        jacrev(lambda x: 3)(torch.randn(2))
