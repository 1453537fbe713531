"""Model ensembling: stack_module_state + vmap(functional_call) over a base model on 'meta'.

Checked against running each model separately.
Run: python examples/ensembling.py
"""
import copy

import numtorch as torch
import numtorch.nn as nn
from numtorch.func import functional_call, stack_module_state, vmap


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.fc1(x.flatten(1)).relu())


def main(num_models=10):
    torch.manual_seed(0)
    models = [MLP() for _ in range(num_models)]
    minibatches = torch.randn(num_models, 64, 1, 28, 28)   # a different batch per model
    same_batch = minibatches[0]

    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")   # holds no memory

    def fmodel(params, buffers, x):
        return functional_call(base, (params, buffers), (x,))

    different = vmap(fmodel)(params, buffers, minibatches)
    same = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, same_batch)
    print("different minibatches:", tuple(different.shape), " same minibatch:", tuple(same.shape))
    err_d = max((different[i] - m(minibatches[i])).abs().max().item() for i, m in enumerate(models))
    err_s = max((same[i] - m(same_batch)).abs().max().item() for i, m in enumerate(models))
    print("max |vmap - per-model loop| =", max(err_d, err_s))
    assert max(err_d, err_s) < 1e-5
    print("ok")


if __name__ == "__main__":
    main()
