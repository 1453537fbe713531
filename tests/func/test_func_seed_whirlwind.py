"""The code blocks of the torch.func whirlwind tour (shared/seeds), run with numtorch."""
import numtorch as torch
from numtorch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap


def test_grad_block():
    x = torch.randn([])
    cos_x = grad(lambda x: torch.sin(x))(x)
    assert torch.allclose(cos_x, x.cos())
    neg_sin_x = grad(grad(lambda x: torch.sin(x)))(x)
    assert torch.allclose(neg_sin_x, -x.sin())


def test_vmap_block():
    batch_size, feature_size = 3, 5
    weights = torch.randn(feature_size, requires_grad=True)

    def model(feature_vec):
        assert feature_vec.dim() == 1
        return feature_vec.dot(weights).relu()

    examples = torch.randn(batch_size, feature_size)
    result = vmap(model)(examples)
    expected = torch.stack([model(e) for e in examples])
    assert torch.allclose(result, expected)
    result.sum().backward()   # closure over a tensor that requires grad, as in PyTorch
    loop = torch.zeros(feature_size)
    for e in examples:
        loop = loop + (e if e.dot(weights) > 0 else torch.zeros(feature_size))
    assert torch.allclose(weights.grad, loop)


def test_per_sample_gradients_block():
    batch_size, feature_size = 3, 5

    def model(weights, feature_vec):
        assert feature_vec.dim() == 1
        return feature_vec.dot(weights).relu()

    def compute_loss(weights, example, target):
        y = model(weights, example)
        return ((y - target) ** 2).mean()

    weights = torch.randn(feature_size, requires_grad=True)
    examples = torch.randn(batch_size, feature_size)
    targets = torch.randn(batch_size)
    inputs = (weights, examples, targets)
    grad_weight_per_example = vmap(grad(compute_loss), in_dims=(None, 0, 0))(*inputs)
    assert grad_weight_per_example.shape == (batch_size, feature_size)
    for i in range(batch_size):
        w = weights.detach().clone().requires_grad_()
        compute_loss(w, examples[i], targets[i]).backward()
        assert torch.allclose(grad_weight_per_example[i], w.grad)


def test_vjp_block():
    inputs = torch.randn(3)
    func = torch.sin
    cotangents = (torch.randn(3),)
    outputs, vjp_fn = vjp(func, inputs)
    vjps = vjp_fn(*cotangents)
    assert torch.allclose(outputs, inputs.sin())
    assert torch.allclose(vjps[0], cotangents[0] * inputs.cos())


def test_jvp_block():
    x = torch.randn(5)
    y = torch.randn(5)
    f = lambda x, y: (x * y)  # noqa: E731
    _, out_tangent = jvp(f, (x, y), (torch.ones(5), torch.ones(5)))
    assert torch.allclose(out_tangent, x + y)


def test_jacrev_blocks():
    x = torch.randn(5)
    jacobian = jacrev(torch.sin)(x)
    expected = torch.diag(torch.cos(x))
    assert torch.allclose(jacobian, expected)
    x = torch.randn(64, 5)
    jacobian = vmap(jacrev(torch.sin))(x)
    assert jacobian.shape == (64, 5, 5)


def test_jacfwd_block():
    x = torch.randn(5)
    jacobian = jacfwd(torch.sin)(x)
    expected = torch.diag(torch.cos(x))
    assert torch.allclose(jacobian, expected)


def test_hessian_blocks():
    def f(x):
        return x.sin().sum()

    x = torch.randn(5)
    hessian0 = jacrev(jacrev(f))(x)
    hessian1 = jacfwd(jacrev(f))(x)
    hess = hessian(f)(x)
    expected = torch.diag(-x.sin())
    for h in (hessian0, hessian1, hess):
        assert torch.allclose(h, expected)
