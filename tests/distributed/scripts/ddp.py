"""DistributedDataParallel on every rank against single-process training.

Run by tests/distributed/test_ddp.py as ``mpiexec -n 2 python ddp.py OUT``. The reference
for training is one process doing the same steps on the concatenated batch (every rank
can build it: the data and rank 0's initial weights are seeded).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _checks import check, main  # noqa: E402

import numtorch as torch  # noqa: E402
import numtorch.distributed as dist  # noqa: E402
from numtorch import nn  # noqa: E402
from numtorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

R = N = None
B = 4   # rows per rank


def mlp(seed, widths=(5, 16, 16, 3)):
    torch.manual_seed(seed)
    layers = []
    for a, b in zip(widths[:-1], widths[1:]):
        layers += [nn.Linear(a, b, dtype=torch.float64), nn.Tanh()]
    return nn.Sequential(*layers[:-1])


def batch(step, rows=B * 2):
    rng = np.random.default_rng(1000 + step)
    return (torch.from_numpy(rng.standard_normal((rows, 5))),
            torch.from_numpy(rng.standard_normal((rows, 3))))


def mine(x):
    return x[R * B:(R + 1) * B]


def params_of(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def same_on_every_rank(arrays):
    everyone = [None] * N
    dist.all_gather_object(everyone, arrays)
    for other in everyone[1:]:
        for a, b in zip(everyone[0], other):
            np.testing.assert_array_equal(a, b)


def close(a, b, tol=1e-10):
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def train_reference(steps, lr=0.1, model=None):
    ref = model or mlp(0)
    opt = torch.optim.SGD(ref.parameters(), lr=lr)
    for s in range(steps):
        x, y = batch(s)
        opt.zero_grad()
        nn.functional.mse_loss(ref(x), y).backward()
        opt.step()
    return ref


@check
def construction_broadcasts_rank0_weights():
    model = mlp(seed=R)   # different on each rank before DDP
    ddp = DDP(model)
    close(params_of(model), params_of(mlp(0)), tol=0)
    assert ddp.module is model
    same_on_every_rank(params_of(model))


@check
def training_equals_single_process_on_the_concatenated_batch():
    for cap in (25, 0.0005):   # one bucket; a bucket per parameter (0.5 KiB cap)
        ddp = DDP(mlp(seed=R), bucket_cap_mb=cap)
        if cap < 1:
            assert len(ddp._buckets) > 2
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        for s in range(5):
            x, y = batch(s)
            opt.zero_grad()
            loss = nn.functional.mse_loss(ddp(mine(x)), mine(y))
            loss.backward()
            opt.step()
        close(params_of(ddp.module), params_of(train_reference(5)))
        same_on_every_rank(params_of(ddp.module))


@check
def buckets_follow_reverse_parameter_order_and_launch_during_backward():
    ddp = DDP(mlp(seed=0), bucket_cap_mb=0.0005)
    params = list(ddp.module.parameters())
    order = [p for b in ddp._buckets for p in b.params]
    assert order == params[::-1]
    first_weight = params[0]
    seen = []
    original = ddp._launch_ready_buckets

    def spy():
        before = ddp._next_bucket
        original()
        for b in ddp._buckets[before:ddp._next_bucket]:
            seen.append((b.index, first_weight.grad is None))
    ddp._launch_ready_buckets = spy
    x, y = batch(0)
    nn.functional.mse_loss(ddp(mine(x)), mine(y)).backward()
    assert [i for i, _ in seen] == list(range(len(ddp._buckets)))
    # the last layer's bucket was all-reduced while the first layer's gradient did not
    # exist yet: communication overlapped the rest of backward
    assert seen[0][1] is True
    assert all(b.work.is_completed() for b in ddp._buckets)


@check
def no_sync_accumulates_locally_then_averages():
    ddp = DDP(mlp(seed=R))
    ref = mlp(0)
    micro = [batch(10 + k) for k in range(3)]
    with ddp.no_sync():
        for x, y in micro[:2]:
            nn.functional.mse_loss(ddp(mine(x)), mine(y)).backward()
    local = [p.grad.numpy().copy() for p in ddp.module.parameters()]
    everyone = [None] * N
    dist.all_gather_object(everyone, local)
    assert not all(np.array_equal(a, b) for a, b in zip(*everyone)), "no_sync synced"
    x, y = micro[2]
    nn.functional.mse_loss(ddp(mine(x)), mine(y)).backward()
    for x, y in micro:
        nn.functional.mse_loss(ref(x), y).backward()
    close([p.grad.numpy() for p in ddp.module.parameters()],
          [p.grad.numpy() for p in ref.parameters()])


def pieces_implied_by(cap_mb, model):
    """How many buckets (so graph pieces) ``bucket_cap_mb=cap_mb`` makes of ``model``'s
    parameters, counted in reverse registration order as PyTorch's Reducer does: a bucket
    closes once it holds the cap (the first one: min(1 MiB, cap))."""
    cap = int(cap_mb * 1024 * 1024)
    limit, n, filled = min(1024 * 1024, cap), 0, 0
    for p in reversed(list(model.parameters())):
        filled += p.numel() * p.element_size()
        if filled >= limit:
            n, filled, limit = n + 1, 0, cap
    return n + (filled > 0)


class Counting:
    """A backend recording the parameters each graph it compiles reads; runs aot_eager."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append({id(c.value) for c in gm._graph.consts})
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)


def train(model, ddp, steps=4):
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for s in range(steps):
        x, y = batch(s)
        opt.zero_grad()
        nn.functional.mse_loss(model(mine(x)), mine(y)).backward()
        opt.step()


@check
def compiled_ddp_trains_like_eager_ddp_with_one_graph_per_bucket():
    # torch.compile(ddp): the forward graph is split at the bucket boundaries
    # (numtorch/_dynamo/ddp_optimizer.py), each piece compiled by the backend on its own
    for cap, pieces in ((25, 1), (0.0005, 3), (0.0001, 5)):
        assert pieces_implied_by(cap, mlp(0)) == pieces
        eager = DDP(mlp(seed=R), bucket_cap_mb=cap)
        train(eager, eager)
        ddp = DDP(mlp(seed=R), bucket_cap_mb=cap)
        backend = Counting()
        train(torch.compile(ddp, backend=backend), ddp)
        assert len(ddp._buckets) == pieces
        assert len(backend.graphs) == pieces, (cap, len(backend.graphs))
        # each piece reads exactly one bucket's parameters
        assert sorted(map(sorted, backend.graphs)) == \
            sorted(sorted(id(p) for p in b.params) for b in ddp._buckets)
        close(params_of(ddp.module), params_of(eager.module))
        close(params_of(ddp.module), params_of(train_reference(4)))
        same_on_every_rank(params_of(ddp.module))


@check
def ddp_of_a_compiled_module_trains_like_one_process():
    # DDP(torch.compile(model)): the compiled module is an nn.Module whose parameters are
    # the original's, so DDP's gradient hooks see them; its forward is one compiled graph
    compiled = torch.compile(mlp(seed=R), backend="aot_eager")
    ddp = DDP(compiled)
    train(ddp, ddp)
    close(params_of(compiled), params_of(train_reference(4)))
    same_on_every_rank(params_of(compiled))
    assert list(ddp.state_dict())[0] == "module._orig_mod.0.weight"


def backward_events(ddp, compiled):
    """Run one forward/backward; the order of the compiled pieces' backward nodes ("bwd")
    and of DDP's bucket all-reduce launches ("launch", bucket index)."""
    events = []
    launch = ddp._launch_ready_buckets

    def spy():
        before = ddp._next_bucket
        launch()
        events.extend(("launch", b.index) for b in ddp._buckets[before:ddp._next_bucket])
    ddp._launch_ready_buckets = spy
    x, y = batch(0)
    out = compiled(mine(x))
    nodes, stack = [], [out.grad_fn]
    while stack:   # the compiled regions' backward nodes, from the output down
        node = stack.pop()
        if node is None or node in nodes or not hasattr(node, "register_prehook"):
            continue
        nodes.append(node)
        stack.extend(e[0] for e in node.next_functions if e)
    for node in nodes:
        node.register_prehook(lambda grads: events.append(("bwd",)))
    nn.functional.mse_loss(out, mine(y)).backward()
    del ddp._launch_ready_buckets
    return events


@check
def compiled_ddp_launches_each_bucket_before_backward_ends():
    ddp = DDP(mlp(seed=R), bucket_cap_mb=0.0005)
    events = backward_events(ddp, torch.compile(ddp, backend="aot_eager"))
    # one backward node per piece, and each bucket's all-reduce is launched as soon as its
    # piece's backward has run, while the earlier pieces' backward is still to come
    assert events == [("bwd",), ("launch", 0), ("bwd",), ("launch", 1), ("bwd",),
                      ("launch", 2)], events
    assert all(b.work.is_completed() for b in ddp._buckets)


@check
def optimize_ddp_false_compiles_one_graph():
    ddp = DDP(mlp(seed=R), bucket_cap_mb=0.0005)
    backend = Counting()
    torch._dynamo.config.optimize_ddp = False
    try:
        compiled = torch.compile(ddp, backend=backend)
        events = backward_events(ddp, compiled)
    finally:
        torch._dynamo.config.optimize_ddp = True
    assert len(backend.graphs) == 1 and len(ddp._buckets) == 3
    # a single backward node: every all-reduce starts after all of backward's compute
    assert events == [("bwd",), ("launch", 0), ("launch", 1), ("launch", 2)], events
    ref = mlp(0)
    x, y = batch(0)
    nn.functional.mse_loss(ref(x), y).backward()
    close([p.grad.numpy() for p in ddp.module.parameters()],
          [p.grad.numpy() for p in ref.parameters()])


@check
def optimize_ddp_python_reducer_modes():
    # Note [optimize_ddp modes]: "python_reducer_without_compiled_forward" acts as
    # "no_optimization" (one graph); "python_reducer" makes DDP average each gradient with
    # its own all-reduce from its hook (no buckets, no graph split, no buffer broadcast in
    # forward), eagerly and under compile, and still trains like one process
    x, y = batch(0)
    old, reduced = torch._dynamo.config.optimize_ddp, []
    all_reduce = dist.all_reduce

    def spy(tensor, *args, **kwargs):
        reduced.append(tuple(tensor.shape))
        return all_reduce(tensor, *args, **kwargs)
    try:
        torch._dynamo.config.optimize_ddp = "python_reducer_without_compiled_forward"
        ddp, backend = DDP(mlp(seed=R), bucket_cap_mb=0.0005), Counting()
        train(torch.compile(ddp, backend=backend), ddp, steps=2)
        plain_graphs, plain_buckets = len(backend.graphs), len(ddp._buckets)
        close(params_of(ddp.module), params_of(train_reference(2)))

        torch._dynamo.config.optimize_ddp = "python_reducer"
        dist.all_reduce = spy
        for compiled in (False, True):
            ddp, backend = DDP(mlp(seed=R), bucket_cap_mb=0.0005), Counting()
            train(torch.compile(ddp, backend=backend) if compiled else ddp, ddp)
            close(params_of(ddp.module), params_of(train_reference(4)))
            same_on_every_rank(params_of(ddp.module))
            assert ddp._use_python_reducer and ddp._buckets == []
            assert len(backend.graphs) == int(compiled)
        # one all-reduce per parameter and backward, in the order backward makes the grads
        shapes = [tuple(p.shape) for p in mlp(0).parameters()]
        assert len(reduced) == 8 * len(shapes) and set(reduced) == set(shapes), reduced
        # no_sync: no all-reduce; buffers are not broadcast by forward (as in PyTorch)
        del reduced[:]
        ddp = DDP(WithBuffer(value=2.0))
        ddp.module.scale.fill_(10.0 + R)
        with ddp.no_sync():
            ddp(torch.ones(2, 5, dtype=torch.float64)).sum().backward()
        assert reduced == [] and ddp.module.scale.tolist() == [10.0 + R] * 3
    finally:
        torch._dynamo.config.optimize_ddp = old
        dist.all_reduce = all_reduce
    assert (plain_graphs, plain_buckets) == (1, 3)


class Branchy(nn.Module):
    """``extra`` is used only when ``use_extra``; ``never`` is never used."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Linear(5, 3, dtype=torch.float64)
        self.extra = nn.Linear(3, 3, dtype=torch.float64)
        self.never = nn.Linear(3, 3, dtype=torch.float64)
        self.use_extra = True

    def forward(self, x):
        h = self.body(x)
        return self.extra(h) if self.use_extra else h


def local_grads(model, x, y):
    model.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    return {n: None if p.grad is None else p.grad.numpy().copy()
            for n, p in model.named_parameters()}


@check
def unused_parameters_are_found_and_averaged():
    model = Branchy()
    model.use_extra = R == 0     # extra is used on rank 0 only; never on no rank
    plain = Branchy()
    plain.use_extra = model.use_extra
    x, y = batch(3)
    expect = [None] * N
    dist.all_gather_object(expect, local_grads(plain, mine(x), mine(y)))
    ddp = DDP(model, find_unused_parameters=True)
    nn.functional.mse_loss(ddp(mine(x)), mine(y)).backward()
    got = {n: p.grad for n, p in model.named_parameters()}
    assert got["never.weight"] is None and got["never.bias"] is None
    for name in ("body.weight", "body.bias", "extra.weight", "extra.bias"):
        parts = [e[name] if e[name] is not None else 0 for e in expect]
        np.testing.assert_allclose(got[name].numpy(), sum(parts) / N, rtol=1e-12, atol=1e-14)


@check
def unused_parameter_without_the_flag_is_a_clear_error():
    model = Branchy()
    ddp = DDP(model)
    x, y = batch(4)
    try:
        nn.functional.mse_loss(ddp(mine(x)), mine(y)).backward()
    except RuntimeError as e:
        assert "never.weight" in str(e) and "find_unused_parameters=True" in str(e), e
    else:
        raise AssertionError("expected an error naming the unused parameters")


class Mixed(nn.Module):
    """A float32 layer feeding a float64 one: two buckets of different dtypes."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(5, 4, dtype=torch.float32)
        self.b = nn.Linear(4, 3, dtype=torch.float64)

    def forward(self, x):
        return self.b(self.a(x.float()).double())


@check
def gradient_as_bucket_view_and_mixed_dtypes():
    model = Mixed()
    ddp = DDP(model, gradient_as_bucket_view=True)
    assert {b.flat.dtype for b in ddp._buckets} == {np.dtype(np.float32), np.dtype(np.float64)}
    x, y = batch(5)
    nn.functional.mse_loss(ddp(mine(x)), mine(y)).backward()
    for p in model.parameters():
        bucket, _ = ddp._where[id(p)]
        assert np.shares_memory(p.grad._data, bucket.flat)
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    same_on_every_rank(grads)
    ref = Mixed()
    nn.functional.mse_loss(ref(x), y).backward()
    close(grads, [p.grad.numpy() for p in ref.parameters()], tol=1e-5)


class WithBuffer(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.lin = nn.Linear(5, 3, dtype=torch.float64)
        self.register_buffer("scale", torch.full((3,), value, dtype=torch.float64))

    def forward(self, x):
        return self.lin(x) * self.scale


@check
def buffers_broadcast_from_rank0():
    model = WithBuffer(value=float(R + 2))
    ddp = DDP(model)
    assert model.scale.tolist() == [2.0] * 3   # at construction
    model.scale.fill_(10.0 + R)                # drift, e.g. running statistics
    ddp(torch.zeros(1, 5, dtype=torch.float64))
    assert model.scale.tolist() == [10.0] * 3  # each forward re-broadcasts
    quiet = DDP(WithBuffer(value=float(R + 2)), broadcast_buffers=False)
    quiet.module.scale.fill_(10.0 + R)
    quiet(torch.zeros(1, 5, dtype=torch.float64))
    assert quiet.module.scale.tolist() == [10.0 + R] * 3


def bn_model(seed):
    torch.manual_seed(seed)
    f64 = torch.float64
    return nn.Sequential(nn.Linear(5, 16, dtype=f64), nn.BatchNorm1d(16, dtype=f64), nn.Tanh(),
                         nn.Linear(16, 3, dtype=f64))


def buffers_of(model):
    return [b.detach().numpy().copy() for b in model.buffers()]


def train_bn_reference(steps, lr=0.1):
    """One process, the concatenated batch cut in the ranks' shards: each shard is normalized
    by its own statistics (DDP without SyncBatchNorm does so, as in PyTorch), the shards'
    gradients are averaged, and the running statistics are rank 0's, because DDP broadcasts
    rank 0's buffers before every forward (broadcast_buffers=True)."""
    ref = bn_model(0)
    opt = torch.optim.SGD(ref.parameters(), lr=lr)
    for s in range(steps):
        x, y = batch(s)
        start = [b.clone() for b in ref.buffers()]
        grads = []
        for r in reversed(range(N)):   # rank 0 last: its update of the buffers is kept
            for b, b0 in zip(ref.buffers(), start):
                b.copy_(b0)
            opt.zero_grad()
            nn.functional.mse_loss(ref(x[r * B:(r + 1) * B]), y[r * B:(r + 1) * B]).backward()
            grads.append([p.grad.clone() for p in ref.parameters()])
        for p, *gs in zip(ref.parameters(), *grads):
            p.grad = sum(gs) / N
        opt.step()
    return ref


@check
def batchnorm_trains_like_one_process_eager_and_compiled():
    # BatchNorm's running statistics are buffers: DDP broadcasts rank 0's before each
    # forward; under compile the BatchNorm buffer writes are captured in the graph (and the
    # graph is split at the buckets: cap 0.0005 gives several pieces around the BatchNorm)
    steps = 4
    ref = train_bn_reference(steps)
    x, _ = batch(99)
    ref.eval()
    ref_eval = ref(mine(x)).detach().numpy()
    for how in ("eager", "compile(ddp)", "ddp(compile)"):
        model, backend = bn_model(seed=R), Counting()
        if how == "ddp(compile)":
            ddp = DDP(torch.compile(model, backend=backend), bucket_cap_mb=0.0005)
            run = ddp
        else:
            ddp = DDP(model, bucket_cap_mb=0.0005)
            run = torch.compile(ddp, backend=backend) if how == "compile(ddp)" else ddp
        train(run, ddp, steps)
        trained, graphs = buffers_of(model), len(backend.graphs)
        model.eval()   # the next forward broadcasts rank 0's statistics, then uses them
        out = run(mine(x)).detach().numpy()
        # the collectives are done: a failure below can't leave the other rank waiting
        same_on_every_rank(params_of(model))
        same_on_every_rank(buffers_of(model))
        close(params_of(model), params_of(ref))
        if R == 0:   # rank 1's buffers held its own last update until the eval forward
            close(trained, buffers_of(ref))
        assert int(model[1].num_batches_tracked) == steps
        close([out], [ref_eval])
        assert len(ddp._buckets) > 1
        if how != "eager":   # split at the buckets, BatchNorm's writes and all
            assert graphs == len(ddp._buckets), (graphs, len(ddp._buckets))


@check
def state_dict_has_the_module_prefix():
    from numtorch.nn.parallel import consume_prefix_in_state_dict_if_present
    ddp = DDP(mlp(seed=0))
    sd = ddp.state_dict()
    assert all(k.startswith("module.") for k in sd)
    consume_prefix_in_state_dict_if_present(sd, "module.")
    plain = mlp(seed=5)
    plain.load_state_dict(sd)
    close(params_of(plain), params_of(ddp.module), tol=0)


@check
def mismatched_models_are_rejected_at_construction():
    model = nn.Linear(4 + R, 2)
    try:
        DDP(model)
    except ValueError as e:
        assert "differs across ranks" in str(e) and "weight" in str(e), e
    else:
        raise AssertionError("expected a ValueError")


@check
def argument_errors():
    for kwargs, words in (({"device_ids": [0]}, "device_ids"),
                          ({"bucket_cap_mb": 0}, "bucket_cap_mb")):
        try:
            DDP(mlp(0), **kwargs)
        except ValueError as e:
            assert words in str(e), e
        else:
            raise AssertionError(f"expected a ValueError for {kwargs}")
    try:
        DDP("not a module")
    except TypeError as e:
        assert "module must be an nn.Module" in str(e)
    else:
        raise AssertionError("expected a TypeError")


@check
def distributed_sampler_takes_its_rank_from_the_process_group():
    from numtorch.utils.data import DistributedSampler
    sampler = DistributedSampler(range(10), seed=3)   # num_replicas, rank: from dist
    assert (sampler.num_replicas, sampler.rank) == (N, R)
    shares = [None] * N
    dist.all_gather_object(shares, list(sampler))
    assert sorted(i for share in shares for i in share) == list(range(10))


def setup():
    global R, N
    dist.init_process_group("mpi")
    R, N = dist.get_rank(), dist.get_world_size()
    return R


if __name__ == "__main__":
    main(sys.argv[1], setup, dist.destroy_process_group)
