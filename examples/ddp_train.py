"""Data-parallel training with DistributedDataParallel, checked against one process.

    python -m numtorch.distributed.run --nproc-per-node 2 examples/ddp_train.py

Each rank trains the same MLP on its own half of every batch; DDP averages the gradients
during backward, so after every step all ranks hold the same weights — the weights one
process gets by training on the whole batches. Rank 0 trains that single-process model too
and checks the two agree to 1e-10 (float64). Started without a launcher (``python
examples/ddp_train.py``), the script launches itself on 2 ranks.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import numtorch as torch
import numtorch.distributed as dist
from numtorch import nn

STEPS, GLOBAL_BATCH, LR = 20, 32, 0.05


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32, dtype=torch.float64), nn.Tanh(),
                         nn.Linear(32, 32, dtype=torch.float64), nn.Tanh(),
                         nn.Linear(32, 1, dtype=torch.float64))


def dataset():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((STEPS * GLOBAL_BATCH, 8))
    y = np.sin(x @ rng.standard_normal((8, 1))) + 0.1 * rng.standard_normal((len(x), 1))
    return torch.from_numpy(x), torch.from_numpy(y)


def train(model, x, y, rows):
    """SGD over the steps; ``rows(step)`` picks this process's rows of the step's batch."""
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(STEPS):
        idx = rows(step)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if GLOBAL_BATCH % world:
        raise SystemExit(f"the global batch ({GLOBAL_BATCH}) must split evenly over {world} ranks")
    x, y = dataset()
    per_rank = GLOBAL_BATCH // world
    ddp = nn.parallel.DistributedDataParallel(make_model())
    losses = train(ddp, x, y, lambda s: slice(s * GLOBAL_BATCH + rank * per_rank,
                                              s * GLOBAL_BATCH + (rank + 1) * per_rank))
    losses = torch.tensor(losses, dtype=torch.float64)
    dist.all_reduce(losses, op=dist.ReduceOp.AVG)   # each step's loss on the whole batch
    weights = [p.detach().numpy() for p in ddp.module.parameters()]
    everyone = [None] * world
    dist.all_gather_object(everyone, weights)
    if rank == 0:
        assert all(np.array_equal(a, b) for w in everyone for a, b in zip(weights, w)), \
            "ranks diverged"
        single = make_model()
        single_losses = train(single, x, y, lambda s: slice(s * GLOBAL_BATCH,
                                                            (s + 1) * GLOBAL_BATCH))
        diff = max(float(np.max(np.abs(a - p.detach().numpy())))
                   for a, p in zip(weights, single.parameters()))
        print(f"{world} ranks, {STEPS} steps: loss {losses[0]:.4f} -> {losses[-1]:.4f} "
              f"(single process: {single_losses[0]:.4f} -> {single_losses[-1]:.4f}); "
              f"max |weight difference| vs single process = {diff:.1e}")
        assert diff < 1e-10, diff
        np.testing.assert_allclose(losses.numpy(), single_losses, rtol=1e-10)
        assert single_losses[-1] < single_losses[0]
    dist.destroy_process_group()


def mpi_missing():
    """Why this machine can't start MPI ranks, or None (without starting MPI here)."""
    import importlib.util
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed"
    from numtorch.distributed.run import find_mpiexec
    try:
        find_mpiexec()
    except SystemExit as e:
        return str(e)
    return None


def launch_myself(nproc=2):
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    r = subprocess.run([sys.executable, "-m", "numtorch.distributed.run", "--nproc-per-node",
                        str(nproc), __file__], capture_output=True, text=True, env=env,
                       timeout=300)
    print(r.stdout.strip(), flush=True)
    if r.returncode != 0:
        raise SystemExit(f"the {nproc}-rank run failed:\n{r.stderr}")


if __name__ == "__main__":
    if any(v in os.environ for v in ("WORLD_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_RANK")):
        main()                      # one rank of a launched job
    elif mpi_missing():
        # no MPI here (pip install -e '.[distributed]'): train in one process only
        x, y = dataset()
        losses = train(make_model(), x, y, lambda s: slice(s * GLOBAL_BATCH, (s + 1) * GLOBAL_BATCH))
        print(f"MPI unavailable ({mpi_missing()}): single-process training only, loss "
              f"{losses[0]:.4f} -> {losses[-1]:.4f}")
        assert losses[-1] < losses[0]
        print("ok")
    else:
        launch_myself()
        print("ok")
