"""Every collective of numtorch.distributed against a NumPy reference, on all ranks.

Run by tests/distributed/test_collectives.py as ``mpiexec -n 2 python collectives.py OUT``.
Each rank can compute every rank's input (``data(r, ...)``), so the reference is NumPy
applied to all of them.
"""
import sys
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _checks import check, main  # noqa: E402

import numtorch as torch  # noqa: E402
import numtorch.distributed as dist  # noqa: E402

R = N = None


def data(r, shape=(3, 4), dtype=np.float64):
    rng = np.random.default_rng(100 + r)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 7, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def everyone(shape=(3, 4), dtype=np.float64):
    return [data(r, shape, dtype) for r in range(N)]


def t(a):
    return torch.from_numpy(np.array(a, copy=True))


def close(got, want, tol=1e-12):
    got = got.numpy() if isinstance(got, torch.Tensor) else got
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)


def raises(exc, words, fn):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), f"{w!r} not in the error: {e}"
        return e
    raise AssertionError(f"expected {exc.__name__}")


REDUCE = {"SUM": lambda xs: np.sum(xs, 0), "PRODUCT": lambda xs: np.prod(xs, 0),
          "MIN": lambda xs: np.min(xs, 0), "MAX": lambda xs: np.max(xs, 0),
          "AVG": lambda xs: np.mean(xs, 0)}


@check
def init_state():
    assert dist.is_available() and dist.is_initialized()
    assert dist.get_world_size() == N == 2 and dist.get_rank() == R
    assert dist.get_backend() == "mpi"
    import os
    assert os.environ["RANK"] == str(R) and os.environ["WORLD_SIZE"] == str(N)
    raises(ValueError, ["twice"], lambda: dist.init_process_group("mpi"))


@check
def all_reduce_ops_float64():
    for name, ref in REDUCE.items():
        x = t(data(R))
        assert dist.all_reduce(x, op=getattr(dist.ReduceOp, name)) is None
        close(x, ref(everyone()))


@check
def all_reduce_dtypes():
    for dtype, ops in ((np.float32, ["SUM", "AVG", "MAX"]), (np.int64, ["SUM", "PRODUCT", "MIN"]),
                       (np.int32, ["MAX"]), (np.complex128, ["SUM", "AVG", "PRODUCT"]),
                       (np.float16, ["SUM", "AVG"])):
        for name in ops:
            x = t(data(R, dtype=dtype))
            dist.all_reduce(x, op=getattr(dist.ReduceOp, name))
            want = REDUCE[name](np.stack(everyone(dtype=dtype)).astype(
                np.float32 if dtype == np.float16 else dtype)).astype(dtype)
            close(x, want, tol=1e-3 if dtype == np.float16 else 1e-5)
    b = t(data(R, dtype=bool))
    dist.all_reduce(b)   # a SUM of bools is an OR, as in PyTorch
    close(b, np.logical_or.reduce(everyone(dtype=bool)))
    x = t(data(R, dtype=np.int64))
    dist.all_reduce(x, op=dist.ReduceOp.BXOR)
    close(x, np.bitwise_xor.reduce(everyone(dtype=np.int64)))


@check
def all_reduce_0d_and_empty():
    x = torch.tensor(float(R + 1), dtype=torch.float64)
    dist.all_reduce(x)
    close(x, np.float64(sum(range(1, N + 1))))
    e = torch.zeros(0, 3)
    dist.all_reduce(e)
    assert tuple(e.shape) == (0, 3)


@check
def all_reduce_async_work():
    x = t(data(R, (1000,)))
    version = x._version
    work = dist.all_reduce(x, op=dist.ReduceOp.AVG, async_op=True)
    assert isinstance(work, dist.Work)
    assert work.wait() is True and work.is_completed() and work.is_success()
    close(x, np.mean(everyone((1000,)), 0))
    assert x._version > version   # an in-place write, as autograd sees it
    works = [dist.all_reduce(y, async_op=True) for y in (t(data(R, (5,))), t(data(R, (7,))))]
    for w in works:
        w.wait(timeout=timedelta(seconds=60))


@check
def broadcast_from_each_rank():
    for src in range(N):
        x = t(data(R, (4, 5)))
        dist.broadcast(x, src=src)
        close(x, data(src, (4, 5)))
    x = t(data(R, (3,), np.int64))
    dist.broadcast(x, src=1, async_op=True).wait()
    close(x, data(1, (3,), np.int64))


@check
def reduce_to_one_rank():
    x = t(data(R))
    dist.reduce(x, dst=1, op=dist.ReduceOp.MAX)
    if R == 1:
        close(x, np.max(everyone(), 0))
    y = t(data(R))
    dist.reduce(y, dst=0, op=dist.ReduceOp.AVG)
    if R == 0:
        close(y, np.mean(everyone(), 0))


@check
def all_gather_list_and_into_tensor():
    outs = [torch.zeros(3, 4, dtype=torch.float64) for _ in range(N)]
    dist.all_gather(outs, t(data(R)))
    for r in range(N):
        close(outs[r], data(r))
    cat = torch.zeros(3 * N, 4, dtype=torch.float64)
    dist.all_gather_into_tensor(cat, t(data(R)))
    close(cat, np.concatenate(everyone()))
    stacked = torch.zeros(N, 3, 4, dtype=torch.float64)
    dist.all_gather_into_tensor(stacked, t(data(R)), async_op=True).wait()
    close(stacked, np.stack(everyone()))


@check
def reduce_scatter_tensor_and_list():
    full = [data(r, (2 * N, 3)) for r in range(N)]
    out = torch.zeros(2, 3, dtype=torch.float64)
    dist.reduce_scatter_tensor(out, t(full[R]))
    close(out, np.sum(full, 0)[2 * R:2 * R + 2])
    dist.reduce_scatter_tensor(out, t(full[R]), op=dist.ReduceOp.AVG)
    close(out, np.mean(full, 0)[2 * R:2 * R + 2])
    pieces = [t(data(10 * R + i, (5,))) for i in range(N)]
    out = torch.zeros(5, dtype=torch.float64)
    dist.reduce_scatter(out, pieces, op=dist.ReduceOp.MIN)
    close(out, np.min([data(10 * r + R, (5,)) for r in range(N)], 0))


@check
def gather_and_scatter():
    got = [torch.zeros(3, 4, dtype=torch.float64) for _ in range(N)] if R == 1 else None
    dist.gather(t(data(R)), got, dst=1)
    if R == 1:
        for r in range(N):
            close(got[r], data(r))
    mine = torch.zeros(2, 2, dtype=torch.float64)
    parts = [t(data(50 + r, (2, 2))) for r in range(N)] if R == 0 else None
    dist.scatter(mine, parts, src=0)
    close(mine, data(50 + R, (2, 2)))


@check
def send_recv_both_ways_without_deadlock():
    big = (1 << 20,)   # 8 MB: MPI's rendezvous protocol, which deadlocks if sends block
    peer = 1 - R
    out = t(data(R, big))
    into = torch.zeros(big, dtype=torch.float64)
    s = dist.isend(out, dst=peer, tag=7)
    r = dist.irecv(into, src=peer, tag=7)
    s.wait()
    assert r.result() == peer
    close(into, data(peer, big))
    if R == 0:
        dist.send(t(data(0, (3,))), dst=1)
    else:
        x = torch.zeros(3, dtype=torch.float64)
        assert dist.recv(x) == 0   # src=None: any sender, who is returned
        close(x, data(0, (3,)))


@check
def object_collectives():
    objs = [{"rank": R}, "x" * R, None]
    dist.broadcast_object_list(objs, src=1)
    assert objs == [{"rank": 1}, "x", None]
    everyone_objs = [None] * N
    dist.all_gather_object(everyone_objs, ("hello", R, np.arange(R + 1)))
    assert [o[1] for o in everyone_objs] == list(range(N))
    assert all(np.array_equal(o[2], np.arange(r + 1)) for r, o in enumerate(everyone_objs))
    gathered = [None] * N if R == 0 else None
    dist.gather_object(R * 10, gathered, dst=0)
    if R == 0:
        assert gathered == [r * 10 for r in range(N)]
    out = [None]
    dist.scatter_object_list(out, [f"to {r}" for r in range(N)] if R == 1 else None, src=1)
    assert out == [f"to {R}"]


@check
def groups_subsets_and_order():
    only0 = dist.new_group([0])
    reversed_group = dist.new_group([1, 0])
    if R == 0:
        assert dist.get_world_size(only0) == 1 and dist.get_rank(only0) == 0
        x = t(data(0))
        dist.all_reduce(x, group=only0)
        close(x, data(0))
    else:
        assert only0 is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(only0) == -1
        assert dist.all_reduce(t(data(1)), group=only0) is None   # non-members do nothing
    assert dist.get_rank(reversed_group) == 1 - R
    assert dist.get_process_group_ranks(reversed_group) == [1, 0]
    x = t(data(R))
    dist.broadcast(x, src=1, group=reversed_group)   # src is a global rank
    close(x, data(1))
    raises(ValueError, ["src=5", "not a rank"], lambda: dist.broadcast(x, src=5))
    dist.barrier(group=reversed_group)
    dist.destroy_process_group(reversed_group)


@check
def barrier_orders_side_effects():
    import os
    import tempfile
    flag = os.path.join(tempfile.gettempdir(), f"numtorch-barrier-{os.getppid()}")
    if R == 0:
        time.sleep(0.2)
        open(flag, "w").close()
    dist.barrier()
    assert os.path.exists(flag)
    dist.barrier()
    if R == 0:
        os.remove(flag)


@check
def errors_found_locally():
    x = t(data(R, (4, 4)))
    raises(ValueError, ["contiguous"], lambda: dist.all_reduce(x.t()))
    raises(ValueError, ["read-only"], lambda: dist.all_reduce(torch.ones(3).expand(1, 3)))
    raises(TypeError, ["tensor must be a Tensor"], lambda: dist.all_reduce(np.ones(3)))
    raises(TypeError, ["op must be a ReduceOp"], lambda: dist.all_reduce(x, op="sum"))
    raises(ValueError, ["AVG", "int64"],
           lambda: dist.all_reduce(torch.ones(3, dtype=torch.int64), op=dist.ReduceOp.AVG))
    raises(ValueError, ["tensor_list", "one tensor per rank"],
           lambda: dist.all_gather([torch.zeros(3)], torch.zeros(3)))
    raises(ValueError, ["output_tensor", "world_size"],
           lambda: dist.all_gather_into_tensor(torch.zeros(5), torch.zeros(3)))
    raises(ValueError, ["dst=7"], lambda: dist.reduce(x, dst=7))


@check
def mismatch_across_ranks_is_an_error_on_every_rank():
    e = raises(dist.DistBackendError, ["rank 0: all_reduce float64 (3,)",
                                       "rank 1: all_reduce float64 (4,)"],
               lambda: dist.all_reduce(torch.zeros(3 + R, dtype=torch.float64)))
    assert "different" in str(e)
    raises(dist.DistBackendError, ["float32", "float64"],
           lambda: dist.all_reduce(torch.zeros(3, dtype=[torch.float64, torch.float32][R])))
    # rank 0 reduces, rank 1 broadcasts: MPI would hang or corrupt; both are told
    x = torch.zeros(3)
    raises(dist.DistBackendError, ["all_reduce", "broadcast"],
           lambda: dist.all_reduce(x) if R == 0 else dist.broadcast(x, src=0))
    # the group still works afterwards
    y = t(data(R))
    dist.all_reduce(y)
    close(y, np.sum(everyone(), 0))


@check
def mismatched_reduce_op_and_async_mismatch_are_errors_too():
    x = t(data(R, (5,)))
    raises(dist.DistBackendError, ["rank 0: all_reduce float64 (5,) SUM",
                                   "rank 1: all_reduce float64 (5,) MAX"],
           lambda: dist.all_reduce(x, op=[dist.ReduceOp.SUM, dist.ReduceOp.MAX][R]))
    # through the communication thread (async_op=True): wait() raises the same error
    w = dist.all_reduce(torch.zeros(2 + R), async_op=True)
    raises(dist.DistBackendError, ["(2,)", "(3,)"], w.wait)
    raises(dist.DistBackendError, ["src=0", "src=1"],
           lambda: dist.broadcast(torch.zeros(2), src=R))


@check
def agreement_check_runs_once_per_collective_and_can_be_turned_off():
    # Note [Checking that ranks agree]: on by default, one signature all-reduce per tensor
    # collective (inline or on the thread); NUMTORCH_DISTRIBUTED_CHECKS=0 (here the flag it
    # sets) skips it, and the collectives still give NumPy's results
    from numtorch.distributed import _backend
    cls = _backend.ProcessGroup
    original, calls = cls._post_agreement, []

    def counting(self, name, signature):
        calls.append(name)
        return original(self, name, signature)

    def some_collectives():
        x, y, z = t(data(R)), t(data(R, (7,))), t(data(R, (2, 2)))
        dist.all_reduce(x)
        dist.all_reduce(y, op=dist.ReduceOp.MAX, async_op=True).wait()
        dist.broadcast(z, src=1)
        close(x, np.sum(everyone(), 0))
        close(y, np.max(everyone((7,)), 0))
        close(z, data(1, (2, 2)))

    cls._post_agreement = counting
    try:
        some_collectives()
        assert calls == ["all_reduce", "all_reduce", "broadcast"], calls
        del calls[:]
        _backend._checks_enabled = False
        some_collectives()
        assert calls == [], calls
    finally:
        cls._post_agreement = original
        _backend._checks_enabled = True


@check
def recv_of_the_wrong_size():
    if R == 0:
        dist.send(torch.zeros(3, dtype=torch.float64), dst=1)
    else:
        raises(dist.DistBackendError, ["received 24 bytes", "holds 32"],
               lambda: dist.recv(torch.zeros(4, dtype=torch.float64), src=0))


@check
def blocking_and_async_all_reduces_interleave_in_order():
    # a blocking all_reduce runs on the caller's thread only when nothing is queued (Note
    # [Blocking collectives run inline]); the ranks take different paths here (rank 1 lets
    # its queue drain, rank 0 does not), and every result must still be the right sum
    shapes = [(5,), (3, 4), (1000,), (2,), (70, 3)]
    xs = [t(data(R, s)) for s in shapes * 3]
    works = []
    for k, x in enumerate(xs):
        if k % 3 == 1:
            if R == 1:
                time.sleep(0.01)
            dist.all_reduce(x)
        else:
            works.append(dist.all_reduce(x, async_op=True))
    for w in works:
        w.wait()
    for x, s in zip(xs, shapes * 3):
        close(x, np.sum(everyone(s), 0))


@check
def every_blocking_collective_among_queued_async_ones():
    # every collective is MPI's non-blocking call, waited for inline or on the communication
    # thread (Note [Blocking collectives run inline]); here rank 1 lets its queue drain before
    # each blocking call and rank 0 does not, so the ranks take different paths for the same
    # call, and float16 reductions go through a widened temporary that must stay alive
    half = np.float16
    pending = []

    def queue_some():
        for s in [(4,), (300,)]:
            x = t(data(R, s))
            pending.append((x, s, dist.all_reduce(x, async_op=True)))
        if R == 1:
            time.sleep(0.01)

    queue_some()
    x = t(data(R, (4, 5)))
    dist.broadcast(x, src=1)
    close(x, data(1, (4, 5)))
    queue_some()
    y = t(data(R, (6,), half))
    dist.reduce(y, dst=0, op=dist.ReduceOp.AVG)
    if R == 0:
        close(y, np.mean(np.array(everyone((6,), half), np.float32), 0).astype(half), tol=1e-3)
    queue_some()
    outs = [torch.zeros(3, 4, dtype=torch.float64) for _ in range(N)]
    dist.all_gather(outs, t(data(R)))
    for r in range(N):
        close(outs[r], data(r))
    queue_some()
    full = [data(r, (2 * N, 3), half) for r in range(N)]
    out = torch.zeros(2, 3, dtype=torch.float16)
    dist.reduce_scatter_tensor(out, t(full[R]), op=dist.ReduceOp.AVG)
    close(out, np.mean(np.array(full, np.float32), 0)[2 * R:2 * R + 2].astype(half), tol=1e-3)
    queue_some()
    got = [torch.zeros(2, dtype=torch.float64) for _ in range(N)] if R == 0 else None
    dist.gather(t(data(R, (2,))), got, dst=0)
    if R == 0:
        for r in range(N):
            close(got[r], data(r, (2,)))
    queue_some()
    mine = torch.zeros(3, dtype=torch.float64)
    dist.scatter(mine, [t(data(70 + r, (3,))) for r in range(N)] if R == 1 else None, src=1)
    close(mine, data(70 + R, (3,)))
    queue_some()
    dist.barrier()
    for x, s, w in pending:
        w.wait()
        close(x, np.sum(everyone(s), 0))


@check
def timeout_instead_of_a_hang():
    slow = dist.new_group([0, 1], timeout=timedelta(seconds=0.5))
    x = t(data(R, (6,)))
    if R == 0:
        raises(dist.DistBackendError, ["timed out after 0.5 s", "all_reduce"],
               lambda: dist.all_reduce(x, group=slow))
        # the operation is still pending in MPI; once rank 1 joins, it completes
        w = dist.barrier(async_op=True)
        w.wait(timeout=timedelta(seconds=60))
    else:
        time.sleep(2.0)      # joins late: rank 0 has given up waiting by then (margin for load)
        dist.all_reduce(x, group=slow)
        dist.barrier()
        close(x, np.sum(everyone((6,)), 0))


@check
def work_wait_timeout():
    x = t(data(R, (2,)))
    if R == 0:
        w = dist.all_reduce(x, async_op=True)
        raises(dist.DistBackendError, ["timed out"], lambda: w.wait(timeout=timedelta(seconds=0.3)))
        assert not w.is_completed()
        w.wait(timeout=timedelta(seconds=60))   # rank 1 arrives later
    else:
        time.sleep(1.5)
        dist.all_reduce(x)
    close(x, np.sum(everyone((2,)), 0))


@check
def destroy_and_init_again():
    import sys as _sys
    dist.destroy_process_group()
    assert not dist.is_initialized() and _sys.excepthook is _sys.__excepthook__
    raises(RuntimeError, ["not been initialized"], lambda: dist.all_reduce(torch.ones(1)))
    dist.init_process_group("mpi", timeout=timedelta(seconds=60))
    x = t(data(R))
    dist.all_reduce(x)
    close(x, np.sum(everyone(), 0))


def setup():
    global R, N
    dist.init_process_group(backend="mpi")
    R, N = dist.get_rank(), dist.get_world_size()
    return R


def teardown():
    dist.destroy_process_group()
    assert not dist.is_initialized()


if __name__ == "__main__":
    main(sys.argv[1], setup, teardown)
