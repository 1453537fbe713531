"""torch.func workloads of issue #3, side by side with torch.func (and JAX when installed).

Registered only when ``numtorch.func`` exists. Targets (checked in ``run.py``): within
1.5x of torch.func on each, and vmap(grad) within 1.1x of hand-vectorised NumPy (Note
[What vmap's per-sample gradients are measured against]). The NumPy column is a hand-written closed form where one is short.
Where numtorch.nn is missing, numtorch's model is the same MLP as a dict of raw tensors.
"""
from __future__ import annotations

import copy

import numpy as np

from .common import add, classification_batch, cross_entropy, has_nn, mlp_apply, mlp_params, \
    mlp_weights, module, numpy_mlp_backprop, sequential_mlp

PSG_MLP, PSG_BATCH = (784, 512, 256, 10), 64
ENSEMBLE_MLP, ENSEMBLE_MODELS, ENSEMBLE_BATCH = (784, 128, 10), 10, 64
JAC_N, HESS_N = 512, 256
HESS_MLP = (128, 256, 1)
PSG_NAME, PSG_LOOP_NAME = "per-sample grads MLP 784-512-256-10 (b=64)", "  same, Python loop of .backward()"
MAML_MLP, MAML_TASKS, MAML_STEPS, MAML_SHOTS, MAML_LR = (1, 40, 40, 1), 32, 5, 10, 0.01


def _uses_nn(lib):
    return lib == "torch" or has_nn()


def _sample_loss(lib, sizes):
    """(params, loss(params, x, y) for ONE example) via functional_call or raw tensors."""
    m, func = module(lib), module(f"{lib}.func")
    if _uses_nn(lib):
        model = sequential_mlp(lib, sizes)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            out = func.functional_call(model, p, (x.unsqueeze(0),))
            return m.nn.functional.cross_entropy(out, y.unsqueeze(0))
        return params, loss
    params = mlp_params(sizes, m.tensor)
    return params, lambda p, x, y: cross_entropy(m, mlp_apply(p, x.unsqueeze(0), m.relu),
                                                  y.unsqueeze(0))


# -- per-sample gradients ---------------------------------------------------------------

def _psg(lib):
    m, func = module(lib), module(f"{lib}.func")
    params, loss = _sample_loss(lib, PSG_MLP)
    xb, yb = classification_batch(PSG_BATCH)
    x, y = m.tensor(xb), m.tensor(yb)
    g = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
    return lambda: g(params, x, y)


def _psg_numpy():
    weights = mlp_weights(PSG_MLP)
    x, y = classification_batch(PSG_BATCH)

    def run():
        _, inputs, deltas = numpy_mlp_backprop(weights, x, y)
        return [(d[:, :, None] * a[:, None, :], d) for a, d in zip(inputs, deltas)]
    return run


def _jax_sample_loss(sizes):
    import jax
    import jax.numpy as jnp
    params = mlp_params(sizes, jnp.asarray)

    def loss(p, x, y):
        logp = jax.nn.log_softmax(mlp_apply(p, x[None], jax.nn.relu), -1)
        return -logp[0, y]
    return params, loss


def _psg_jax():
    import jax
    params, loss = _jax_sample_loss(PSG_MLP)
    xb, yb = classification_batch(PSG_BATCH)
    g = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    return lambda: jax.block_until_ready(g(params, xb, yb))


def _psg_loop(lib):
    """Per-sample gradients the slow way: one ``.backward()`` per example."""
    m = module(lib)
    params, loss = _sample_loss(lib, PSG_MLP)
    leaves = [p.requires_grad_() for p in params.values()]
    xb, yb = classification_batch(PSG_BATCH)
    x, y = m.tensor(xb), m.tensor(yb)

    def run():
        grads = []
        for i in range(PSG_BATCH):
            for p in leaves:
                p.grad = None
            loss(params, x[i], y[i]).backward()
            grads.append([p.grad for p in leaves])
        return grads
    return run


# -- model ensembling -------------------------------------------------------------------

def _ensemble(lib):
    m, func = module(lib), module(f"{lib}.func")
    x = m.tensor(classification_batch(ENSEMBLE_BATCH)[0])
    if _uses_nn(lib):
        models = [sequential_mlp(lib, ENSEMBLE_MLP, seed=i) for i in range(ENSEMBLE_MODELS)]
        params, buffers = func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")
        f = func.vmap(lambda p, b, x: func.functional_call(base, (p, b), (x,)),
                      in_dims=(0, 0, None))
        return lambda: f(params, buffers, x)
    params = _stacked(m.tensor)
    f = func.vmap(lambda p, x: mlp_apply(p, x, m.relu), in_dims=(0, None))
    return lambda: f(params, x)


def _stacked(convert):
    """The ensemble's parameters stacked along a new leading dim, as stack_module_state does."""
    ps = [mlp_params(ENSEMBLE_MLP, seed=i) for i in range(ENSEMBLE_MODELS)]
    return {k: convert(np.stack([p[k] for p in ps])) for k in ps[0]}


def _ensemble_numpy():
    p = _stacked(np.asarray)
    x = classification_batch(ENSEMBLE_BATCH)[0]

    def run():
        h = np.maximum(np.einsum("bi,moi->mbo", x, p["0.weight"]) + p["0.bias"][:, None], 0)
        return np.einsum("mbh,moh->mbo", h, p["2.weight"]) + p["2.bias"][:, None]
    return run


def _ensemble_jax():
    import jax
    import jax.numpy as jnp
    p = _stacked(jnp.asarray)
    x = jnp.asarray(classification_batch(ENSEMBLE_BATCH)[0])
    f = jax.jit(jax.vmap(lambda p, x: mlp_apply(p, x, jax.nn.relu), in_axes=(0, None)))
    return lambda: jax.block_until_ready(f(p, x))


# -- Jacobians and Hessians -------------------------------------------------------------

def _jac_data():
    rng = np.random.default_rng(2)
    return ((rng.standard_normal((JAC_N, JAC_N)) / np.sqrt(JAC_N)).astype(np.float32),
            rng.standard_normal(JAC_N).astype(np.float32),
            rng.standard_normal(JAC_N).astype(np.float32))


def _jacrev(lib):
    m, func = module(lib), module(f"{lib}.func")
    W, b, x = (m.tensor(a) for a in _jac_data())
    j = func.jacrev(lambda x: m.tanh(W @ x + b))
    return lambda: j(x)


def _jacrev_numpy():
    W, b, x = _jac_data()

    def run():
        t = np.tanh(W @ x + b)
        return (1 - t * t)[:, None] * W
    return run


def _jacrev_jax():
    import jax
    import jax.numpy as jnp
    W, b, x = (jnp.asarray(a) for a in _jac_data())
    j = jax.jit(jax.jacrev(lambda x: jnp.tanh(W @ x + b)))
    return lambda: j(x).block_until_ready()


def _hess_x():
    return np.random.default_rng(3).standard_normal(HESS_N).astype(np.float32)


def _hess_sin(lib):
    m, func = module(lib), module(f"{lib}.func")
    x = m.tensor(_hess_x())
    h = func.hessian(lambda x: x.sin().sum())
    return lambda: h(x)


def _hess_sin_jax():
    import jax
    import jax.numpy as jnp
    x = jnp.asarray(_hess_x())
    h = jax.jit(jax.hessian(lambda x: jnp.sin(x).sum()))
    return lambda: h(x).block_until_ready()


def _hess_sin_numpy():
    x = _hess_x()
    return lambda: np.diag(-np.sin(x))


def _hess_mlp_x():
    return np.random.default_rng(4).standard_normal(HESS_MLP[0]).astype(np.float32)


def _hess_mlp(lib):
    m, func = module(lib), module(f"{lib}.func")
    p = mlp_params(HESS_MLP, m.tensor)
    x = m.tensor(_hess_mlp_x())
    h = func.hessian(lambda x: mlp_apply(p, x, m.tanh).sum())
    return lambda: h(x)


def _hess_mlp_numpy():
    (W1, b1), (W2, _) = mlp_weights(HESS_MLP)
    x = _hess_mlp_x()

    def run():
        t = np.tanh(W1 @ x + b1)
        return (W1.T * (W2[0] * -2 * t * (1 - t * t))) @ W1
    return run


def _hess_mlp_jax():
    import jax
    import jax.numpy as jnp
    p = mlp_params(HESS_MLP, jnp.asarray)
    x = jnp.asarray(_hess_mlp_x())
    h = jax.jit(jax.hessian(lambda x: mlp_apply(p, x, jnp.tanh).sum()))
    return lambda: h(x).block_until_ready()


# -- MAML -------------------------------------------------------------------------------

def _maml_data():
    rng = np.random.default_rng(5)
    amp = rng.uniform(0.1, 5.0, (MAML_TASKS, 1, 1))
    phase = rng.uniform(0, np.pi, (MAML_TASKS, 1, 1))
    xs, xq = (rng.uniform(-5, 5, (MAML_TASKS, MAML_SHOTS, 1)) for _ in range(2))
    return tuple(a.astype(np.float32) for a in (xs, amp * np.sin(xs + phase),
                                                xq, amp * np.sin(xq + phase)))


def _maml_meta_grad(grad, vmap, relu, mean):
    """The meta-gradient: grad over the initial params of the mean post-adaptation loss."""
    def loss(p, x, y):
        return mean((mlp_apply(p, x, relu) - y) ** 2)

    def task_loss(p, xs, ys, xq, yq):
        for _ in range(MAML_STEPS):
            g = grad(loss)(p, xs, ys)
            p = {k: p[k] - MAML_LR * g[k] for k in p}
        return loss(p, xq, yq)

    return grad(lambda p, *data: mean(vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(p, *data)))


def _maml(lib):
    m, func = module(lib), module(f"{lib}.func")
    params = mlp_params(MAML_MLP, m.tensor)
    data = [m.tensor(a) for a in _maml_data()]
    meta = _maml_meta_grad(func.grad, func.vmap, m.relu, m.mean)
    return lambda: meta(params, *data)


def _maml_jax():
    import jax
    import jax.numpy as jnp
    params = mlp_params(MAML_MLP, jnp.asarray)
    data = [jnp.asarray(a) for a in _maml_data()]
    vmap = lambda f, in_dims: jax.vmap(f, in_axes=in_dims)  # noqa: E731
    meta = jax.jit(_maml_meta_grad(jax.grad, vmap, jax.nn.relu, jnp.mean))
    return lambda: jax.block_until_ready(meta(params, *data))


def _maml_torch_style(lib):
    """Functorch's maml-regression shape: an nn model, ``functional_call`` inside, and
    ``grad_and_value`` of the mean over tasks outside (the meta-loss comes back too)."""
    m, func = module(lib), module(f"{lib}.func")
    model = sequential_mlp(lib, MAML_MLP)
    params = {k: v.detach() for k, v in model.named_parameters()}
    data = [m.tensor(a) for a in _maml_data()]

    def loss(p, x, y):
        return m.mean((func.functional_call(model, p, (x,)) - y) ** 2)

    def task_loss(p, xs, ys, xq, yq):
        for _ in range(MAML_STEPS):
            g = func.grad(loss)(p, xs, ys)
            p = {k: p[k] - MAML_LR * g[k] for k in p}
        return loss(p, xq, yq)

    meta = func.grad_and_value(
        lambda p, *d: m.mean(func.vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(p, *d)))
    return lambda: meta(params, *data)


def _maml_classic(lib):
    """MAML the pre-functorch way: a Python loop over tasks, inner steps by
    ``autograd.grad(create_graph=True)``, one ``.backward()`` of the meta-loss."""
    m = module(lib)
    params = mlp_params(MAML_MLP, lambda a: m.tensor(a, requires_grad=True))
    keys = list(params)
    data = [m.tensor(a) for a in _maml_data()]

    def loss(p, x, y):
        return m.mean((mlp_apply(p, x, m.relu) - y) ** 2)

    def run():
        for p in params.values():
            p.grad = None
        total = 0
        for t in range(MAML_TASKS):
            xs, ys, xq, yq = (d[t] for d in data)
            p = params
            for _ in range(MAML_STEPS):
                g = m.autograd.grad(loss(p, xs, ys), [p[k] for k in keys], create_graph=True)
                p = {k: p[k] - MAML_LR * gk for k, gk in zip(keys, g)}
            total = total + loss(p, xq, yq)
        (total / MAML_TASKS).backward()
    return run


def _ensemble_loop(lib):
    m = module(lib)
    x = m.tensor(classification_batch(ENSEMBLE_BATCH)[0])
    if _uses_nn(lib):
        models = [sequential_mlp(lib, ENSEMBLE_MLP, seed=i) for i in range(ENSEMBLE_MODELS)]

        def run():
            with m.no_grad():
                return [model(x) for model in models]
        return run
    ps = [mlp_params(ENSEMBLE_MLP, m.tensor, seed=i) for i in range(ENSEMBLE_MODELS)]
    return lambda: [mlp_apply(p, x, m.relu) for p in ps]


def register():
    """Add the torch.func workloads (called by run.py when numtorch.func exists)."""
    group, target = "torch.func", ("torch", 1.5)
    rows = [  # name, factory(lib), NumPy factory, JAX factory
        (PSG_NAME, _psg, _psg_numpy, _psg_jax),
        ("ensemble 10 x MLP 784-128-10 (b=64)", _ensemble, _ensemble_numpy, _ensemble_jax),
        ("  same, Python loop over the models", _ensemble_loop, _ensemble_numpy, None),
        ("jacrev tanh(Wx+b) W 512x512", _jacrev, _jacrev_numpy, _jacrev_jax),
        ("hessian sin(x).sum() n=256", _hess_sin, _hess_sin_numpy, _hess_sin_jax),
        ("hessian MLP 128-256-1 tanh wrt input", _hess_mlp, _hess_mlp_numpy, _hess_mlp_jax),
        ("MAML 32 tasks x 5 steps MLP 1-40-40-1", _maml, None, _maml_jax),
        ("  MAML, grad_and_value(mean(vmap)) + functional_call", _maml_torch_style, None, None),
        ("  MAML, classic autograd.grad(create_graph=True) loop", _maml_classic, None, None),
    ]
    for name, factory, np_factory, jax_factory in rows:
        add(name, group, target=target, numtorch=lambda f=factory: f("numtorch"),
            numpy=np_factory, torch=lambda f=factory: f("torch"), jax=jax_factory)
        if name == PSG_NAME:
            add(PSG_LOOP_NAME, group, note="for comparison with vmap(grad) (Note [What vmap's "
                "per-sample gradients are measured against], run.py)",
                numtorch=lambda: _psg_loop("numtorch"), torch=lambda: _psg_loop("torch"))
