"""DistributedSampler: the split across ranks, against PyTorch's sampler."""
import pytest

from numtorch.utils.data import DataLoader, TensorDataset
from numtorch.utils.data.distributed import DistributedSampler


@pytest.mark.parametrize("n,replicas", [(10, 2), (11, 2), (7, 3), (2, 5), (12, 4)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_split_matches_pytorch_without_shuffle(n, replicas, drop_last):
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("n,replicas", [(10, 2), (11, 3), (3, 4)])
def test_shuffled_shares_partition_the_dataset_the_same_way_on_every_rank(n, replicas):
    shares = [list(DistributedSampler(range(n), replicas, r, seed=7)) for r in range(replicas)]
    again = [list(DistributedSampler(range(n), replicas, r, seed=7)) for r in range(replicas)]
    assert shares == again                          # same seed and epoch: same order
    flat = [i for s in shares for i in s]
    assert set(flat) == set(range(n))               # every index is used ...
    per_rank = -(-n // replicas)
    assert all(len(s) == per_rank for s in shares)  # ... and shares are equal (padded)
    if n % replicas == 0:
        assert sorted(flat) == list(range(n))       # no padding: disjoint shares


def test_set_epoch_reshuffles_and_drop_last_drops_the_tail():
    s = DistributedSampler(range(100), 2, 0, seed=1)
    first = list(s)
    assert list(s) == first                         # same epoch: same order
    s.set_epoch(1)
    assert list(s) != first                         # a new epoch: a new order
    d = [list(DistributedSampler(range(11), 2, r, drop_last=True)) for r in range(2)]
    assert len(d[0]) == len(d[1]) == 5 and not set(d[0]) & set(d[1])


def test_with_a_dataloader():
    import numtorch as torch
    ds = TensorDataset(torch.arange(10.0))
    loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 2, 1, shuffle=False))
    assert [b[0].tolist() for b in loader] == [[1.0, 3.0], [5.0, 7.0], [9.0]]


def test_argument_errors():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="num_replicas must be a positive int"):
        DistributedSampler(range(4), num_replicas=0, rank=0)
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))
