"""torch.utils.data: datasets, samplers, default_collate, DataLoader in the main process and
in worker processes. Structures and batches are compared with PyTorch's where the result
does not depend on the random generator (Note [Shuffle order] in sampler.py)."""
import collections
import doctest
import importlib
import warnings

import numpy as np
import pytest

import numtorch
from numtorch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                                 IterableDataset, RandomSampler, SequentialSampler, Subset,
                                 SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                                 default_collate, default_convert, get_worker_info,
                                 random_split)

Point = collections.namedtuple("Point", "x y")


def _plain(x):
    """A structure with tensors replaced by (dtype name, nested list), to compare with
    PyTorch's."""
    if hasattr(x, "numpy") and hasattr(x, "dtype"):
        return ("tensor", str(x.dtype).replace("torch.", ""), x.detach().numpy().tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("namedtuple", type(x).__name__, tuple(_plain(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_plain(v) for v in x])
    return x


@pytest.mark.parametrize("module", ["dataset", "sampler", "_collate", "dataloader"])
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"numtorch.utils.data.{module}")
    result = doctest.testmod(mod)
    assert result.attempted > 0 and result.failed == 0


def _batches():
    return [
        [1, 2, 3],
        [1.5, 2.5],
        [True, False],
        [np.float32(1.0), np.float32(2.0)],
        [np.array([1, 2]), np.array([3, 4])],
        [(1, "a"), (2, "b")],
        [{"x": np.ones(2, np.float32), "y": 3}, {"x": np.zeros(2, np.float32), "y": 4}],
        [Point(1, 2.0), Point(3, 4.0)],
        [[1, 2], [3, 4]],
        [{"nested": (np.int64(1), [0.5, 1.5])}, {"nested": (np.int64(2), [2.5, 3.5])}],
        ["s", "t"],
    ]


@pytest.mark.parametrize("index", range(len(_batches())))
def test_default_collate_matches_pytorch(index):
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud
    batch = _batches()[index]
    assert _plain(default_collate(batch)) == _plain(tud.default_collate(batch))


def test_default_collate_stacks_tensors_and_keeps_grad():
    a = numtorch.ones(2, requires_grad=True)
    out = default_collate([a, a * 2])
    assert out.shape == (2, 2)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0])


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_matches_pytorch():
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud
    for data in [np.arange(3), {"a": np.ones(2), "b": "s"}, (np.int32(4), [np.zeros(1)]),
                 Point(np.ones(1), 2)]:
        assert _plain(default_convert(data)) == _plain(tud.default_convert(data))


def test_tensor_dataset_and_combinators():
    x, y = numtorch.arange(12.).reshape(6, 2), numtorch.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6 and ds[2][1].item() == 2
    np.testing.assert_array_equal(ds[1:3][0].numpy(), x.numpy()[1:3])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, numtorch.arange(5))
    with pytest.raises(TypeError, match="argument 1 is list"):
        TensorDataset(x, [1, 2])
    sub = Subset(ds, [5, 0])
    assert len(sub) == 2 and sub[0][1].item() == 5
    cat = ds + sub
    assert isinstance(cat, ConcatDataset) and len(cat) == 8
    assert cat[6][1].item() == 5 and cat[-1][1].item() == 0
    with pytest.raises(ValueError, match="should not exceed dataset length"):
        cat[-9]
    with pytest.raises(AssertionError, match="empty iterable"):
        ConcatDataset([])


def test_random_split_lengths_fractions_and_errors():
    g = numtorch.Generator().manual_seed(3)
    parts = random_split(range(10), [0.3, 0.3, 0.4], generator=g)
    assert [len(p) for p in parts] == [3, 3, 4]
    assert sorted(i for p in parts for i in p) == list(range(10))
    again = random_split(range(10), [0.3, 0.3, 0.4], generator=numtorch.Generator().manual_seed(3))
    assert [list(p) for p in again] == [list(p) for p in parts]
    # fractions whose floors leave a remainder: one each, round robin (as PyTorch)
    assert [len(p) for p in random_split(range(5), [0.5, 0.5])] == [3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])


def test_samplers():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    g = numtorch.Generator().manual_seed(0)
    perm = list(RandomSampler(range(7), generator=g))
    assert sorted(perm) == list(range(7))
    # each epoch continues the generator: a new permutation, the same on a re-seeded run
    perm2 = list(RandomSampler(range(7), generator=g))
    g2 = numtorch.Generator().manual_seed(0)
    s = RandomSampler(range(7), generator=g2)
    assert [list(s), list(s)] == [perm, perm2]
    with_repl = list(RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(with_repl) == 70 and set(with_repl) == {0, 1, 2}
    longer = list(RandomSampler(range(3), num_samples=7, generator=g))
    assert len(longer) == 7 and sorted(longer[:3]) == [0, 1, 2]
    assert sorted(SubsetRandomSampler([4, 8, 9], generator=g)) == [4, 8, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=g))
    assert set(w) == {1, 3} and 120 < w.count(3) < 180
    wn = list(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g))
    assert sorted(wn) == [0, 1, 2]
    assert list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    assert len(BatchSampler(range(5), 2, True)) == 2


def test_unseeded_random_sampler_follows_manual_seed():
    numtorch.manual_seed(5)
    a = list(RandomSampler(range(20)))
    numtorch.manual_seed(5)
    assert list(RandomSampler(range(20))) == a


def test_sampler_errors_name_the_argument():
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, None)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(2, 1\)"):
        WeightedRandomSampler([[1.0], [2.0]], 2)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return {"i": i, "sq": np.array([i * i], dtype=np.float32), "p": Point(i, float(i))}

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=None), dict(batch_size=4)])
def test_dataloader_batches_match_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud
    ours = list(DataLoader(Squares(10), **kwargs))
    theirs = list(tud.DataLoader(Squares(10), **kwargs))
    assert _plain(ours) == _plain(theirs)
    assert len(DataLoader(Squares(10), **kwargs)) == len(tud.DataLoader(Squares(10), **kwargs))


def test_dataloader_shuffle_with_generator_is_reproducible_and_reshuffles():
    ds = TensorDataset(numtorch.arange(20))

    def epochs(g):
        loader = DataLoader(ds, batch_size=5, shuffle=True, generator=g)
        return [[b.tolist() for (b,) in loader] for _ in range(2)]
    e1 = epochs(numtorch.Generator().manual_seed(7))
    assert e1 == epochs(numtorch.Generator().manual_seed(7))
    assert e1[0] != e1[1]
    for epoch in e1:
        assert sorted(sum(epoch, [])) == list(range(20))


def test_dataloader_sampler_batch_sampler_collate_fn():
    ds = TensorDataset(numtorch.arange(6))
    got = [b.tolist() for (b,) in DataLoader(ds, sampler=[5, 4, 3], batch_size=2)]
    assert got == [[5, 4], [3]]
    got = [b.tolist() for (b,) in DataLoader(ds, batch_sampler=[[0, 5], [1]])]
    assert got == [[0, 5], [1]]
    got = list(DataLoader(range(4), batch_size=2, collate_fn=lambda b: sum(b)))
    assert got == [1, 5]


def test_dataloader_argument_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud
    ds = list(range(4))

    class It(IterableDataset):
        def __iter__(self):
            return iter(range(3))
    cases = [dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
             dict(persistent_workers=True), dict(sampler=[0], shuffle=True),
             dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True)]
    for kw in cases:
        with pytest.raises(ValueError) as theirs:
            tud.DataLoader(ds, **kw)
        with pytest.raises(ValueError) as ours:
            DataLoader(ds, **kw)
        # our message starts with PyTorch's (and may add the value that was given)
        assert str(ours.value).split(" (got")[0] == str(theirs.value).split(" (got")[0], kw
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        DataLoader(It(), shuffle=True)
    with pytest.raises(ValueError, match="sampler option"):
        DataLoader(It(), sampler=[0])
    loader = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 3
    with pytest.warns(UserWarning, match="pin_memory"):
        DataLoader(ds, pin_memory=True)


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_iterable_dataset_single_process():
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]
    assert len(DataLoader(Stream(5), batch_size=2)) == 3


class _Failing(Dataset):
    def __getitem__(self, i):
        if i == 3:
            raise KeyError("no sample 3")
        return i

    def __len__(self):
        return 6


def _record_seed(worker_id):
    import random
    info = get_worker_info()
    assert info.id == worker_id
    np.save  # noqa: B018 (numpy is importable in the worker)
    random.random()


class _SeedProbe(Dataset):
    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.seed, numtorch.rand(()).item())

    def __len__(self):
        return 4


def test_worker_processes_map_style_in_order_and_errors():
    ds = Squares(11)
    single = list(DataLoader(ds, batch_size=3))
    multi = list(DataLoader(ds, batch_size=3, num_workers=2, worker_init_fn=_record_seed))
    assert _plain(multi) == _plain(single)
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(DataLoader(_Failing(), batch_size=2, num_workers=2))
    # each worker is seeded differently (base seed + worker id), as PyTorch's
    probes = [tuple(x) for b in DataLoader(_SeedProbe(), batch_size=1, num_workers=2) for x in zip(*b)]
    by_worker = {wid: (seed, r) for wid, seed, r in [(int(a), int(b), float(c)) for a, b, c in probes]}
    assert set(by_worker) == {0, 1}
    assert by_worker[1][0] == by_worker[0][0] + 1 and by_worker[0][1] != by_worker[1][1]


def test_worker_processes_iterable_and_persistent():
    got = sorted(sum((b.tolist() for b in DataLoader(Stream(7), batch_size=2, num_workers=2)), []))
    assert got == list(range(7))
    loader = DataLoader(Squares(7), batch_size=2, num_workers=2, persistent_workers=True)
    first = _plain(list(loader))
    it = iter(loader)
    next(it)   # stop an epoch early: the next one must start from the beginning
    assert _plain(list(loader)) == first
    stream = DataLoader(Stream(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [sorted(sum((b.tolist() for b in stream), [])) for _ in range(2)] == [list(range(5))] * 2


def test_worker_timeout_is_checked():
    with pytest.raises(ValueError, match="timeout option should be 0 for single-process"):
        iter(DataLoader([1, 2], timeout=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [b.tolist() for b in DataLoader([1, 2, 3], batch_size=2, num_workers=1, timeout=30)] == [[1, 2], [3]]


def test_tensor_dataset_batches_equal_per_sample_collation():
    """Note [TensorDataset batches]: the one-gather fast path gives what default_collate of
    the samples gives (forced through a wrapping collate_fn), under Subsets too."""
    x = numtorch.randn(23, 3, requires_grad=True)
    ds = TensorDataset(x, numtorch.arange(23), numtorch.rand(23) > 0.5)
    for data in (ds, Subset(ds, list(range(20, 2, -1))), random_split(ds, [0.5, 0.5])[1]):
        fast = DataLoader(data, batch_size=4, shuffle=True, generator=numtorch.Generator().manual_seed(3))
        slow = DataLoader(data, batch_size=4, shuffle=True, generator=numtorch.Generator().manual_seed(3),
                          collate_fn=lambda b: default_collate(b))
        for a, b in zip(fast, slow, strict=True):
            assert type(a) is type(b) is list and len(a) == len(b) == 3
            for u, v in zip(a, b):
                assert u.dtype == v.dtype and u.shape == v.shape
                np.testing.assert_array_equal(u.detach().numpy(), v.detach().numpy())
    (first,) = [b[0] for b in DataLoader(ds, batch_size=23)]
    first.sum().backward()   # gradients flow back to the dataset's tensor, as with stacking
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((23, 3), np.float32))
