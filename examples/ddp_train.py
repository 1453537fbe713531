"""Data-parallel training with DistributedDataParallel, checked against one process.

    python -m numtorch.distributed.run --nproc-per-node 2 examples/ddp_train.py

Each rank trains the same MLP on its own share of the data (``DistributedSampler`` with a
``DataLoader``, shuffled per epoch with the same seed on every rank); DDP averages the
gradients during backward, so after every step all ranks hold the same weights — the
weights one process gets by training on the whole batches (the union of the ranks' batches
of a step is the single process's batch of that step). Rank 0 trains that single-process model too
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
from numtorch.utils.data import DataLoader, TensorDataset
from numtorch.utils.data.distributed import DistributedSampler

EPOCHS, SAMPLES, GLOBAL_BATCH, LR = 3, 320, 32, 0.1


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32, dtype=torch.float64), nn.Tanh(),
                         nn.Linear(32, 32, dtype=torch.float64), nn.Tanh(),
                         nn.Linear(32, 1, dtype=torch.float64))


def dataset():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((SAMPLES, 8))
    y = np.sin(x @ rng.standard_normal((8, 1))) + 0.1 * rng.standard_normal((SAMPLES, 1))
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(y))


def train(model, data, replicas, rank):
    """SGD over the epochs on this rank's share (of ``replicas``); returns the losses."""
    sampler = DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=GLOBAL_BATCH // replicas, sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)   # a new order each epoch, the same on every rank
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def main():
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if GLOBAL_BATCH % world:
        raise SystemExit(f"the global batch ({GLOBAL_BATCH}) must split evenly over {world} ranks")
    data = dataset()
    ddp = nn.parallel.DistributedDataParallel(make_model())
    losses = train(ddp, data, world, rank)
    losses = torch.tensor(losses, dtype=torch.float64)
    dist.all_reduce(losses, op=dist.ReduceOp.AVG)   # each step's loss on the whole batch
    weights = [p.detach().numpy() for p in ddp.module.parameters()]
    everyone = [None] * world
    dist.all_gather_object(everyone, weights)
    if rank == 0:
        assert all(np.array_equal(a, b) for w in everyone for a, b in zip(weights, w)), \
            "ranks diverged"
        single = make_model()
        single_losses = train(single, data, 1, 0)
        diff = max(float(np.max(np.abs(a - p.detach().numpy())))
                   for a, p in zip(weights, single.parameters()))
        k = len(single_losses) // EPOCHS   # steps per epoch
        first, last = losses.numpy()[:k].mean(), losses.numpy()[-k:].mean()
        print(f"{world} ranks, {EPOCHS} epochs of {k} steps: mean loss {first:.4f} (first "
              f"epoch) -> {last:.4f} (last); single process: {np.mean(single_losses[:k]):.4f} "
              f"-> {np.mean(single_losses[-k:]):.4f}; max |weight difference| vs single "
              f"process = {diff:.1e}")
        assert diff < 1e-10, diff
        np.testing.assert_allclose(losses.numpy(), single_losses, rtol=1e-10)
        assert last < first   # training helps
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
        losses = train(make_model(), dataset(), 1, 0)
        print(f"MPI unavailable ({mpi_missing()}): single-process training only, loss "
              f"{losses[0]:.4f} -> {losses[-1]:.4f}")
        assert np.mean(losses[-len(losses) // EPOCHS:]) < np.mean(losses[:len(losses) // EPOCHS])
        print("ok")
    else:
        launch_myself()
        print("ok")
