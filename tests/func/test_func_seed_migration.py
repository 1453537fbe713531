"""The code of the functorch -> torch.func migration guide (shared/seeds), run with numtorch."""
import copy

import numtorch as torch


def test_functional_call_replaces_make_functional():
    inputs = torch.randn(64, 3)
    targets = torch.randn(64, 3)
    model = torch.nn.Linear(3, 3)

    params = dict(model.named_parameters())

    def compute_loss(params, inputs, targets):
        prediction = torch.func.functional_call(model, params, (inputs,))
        return torch.nn.functional.mse_loss(prediction, targets)

    grads = torch.func.grad(compute_loss)(params, inputs, targets)
    # reference: eager autograd on the module itself
    torch.nn.functional.mse_loss(model(inputs), targets).backward()
    assert set(grads) == {"weight", "bias"}
    assert torch.allclose(grads["weight"], model.weight.grad)
    assert torch.allclose(grads["bias"], model.bias.grad)


def test_jacobians_with_respect_to_parameters():
    from numtorch.func import functional_call, jacrev
    inputs = torch.randn(64, 3)
    model = torch.nn.Linear(3, 3)
    params = dict(model.named_parameters())
    jacobians = jacrev(functional_call, argnums=1)(model, params, (inputs,))
    assert jacobians["weight"].shape == (64, 3, 3, 3)
    assert jacobians["bias"].shape == (64, 3, 3)
    # d out[n, i] / d W[j, k] = delta_ij * x[n, k]; d out[n, i] / d b[j] = delta_ij
    eye = torch.eye(3)
    expected_w = eye[None, :, :, None] * inputs[:, None, None, :]
    assert torch.allclose(jacobians["weight"], expected_w)
    assert torch.allclose(jacobians["bias"], eye.expand(64, 3, 3))


def test_stack_module_state_replaces_combine_state_for_ensemble():
    num_models = 5
    batch_size = 64
    in_features, out_features = 3, 3
    models = [torch.nn.Linear(in_features, out_features) for i in range(num_models)]
    data = torch.randn(batch_size, 3)

    base_model = copy.deepcopy(models[0])
    base_model.to("meta")

    params, buffers = torch.func.stack_module_state(models)

    def call_single_model(params, buffers, data):
        return torch.func.functional_call(base_model, (params, buffers), (data,))

    output = torch.vmap(call_single_model, (0, 0, None))(params, buffers, data)
    assert output.shape == (num_models, batch_size, out_features)
    for i, m in enumerate(models):
        assert torch.allclose(output[i], m(data))
    assert base_model.weight.is_meta   # the base model holds no memory and was restored
    assert params["weight"].shape == (num_models, out_features, in_features)
    assert params["weight"].requires_grad
