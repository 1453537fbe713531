"""Collectives on Tensors: ``all_reduce``, ``broadcast``, ``all_gather`` … and point-to-point.

Each function checks its Tensor arguments, then hands MPI the tensors' own NumPy buffers
(no copies, except where MPI needs one contiguous buffer for a list of tensors) through the
process group's communication thread (Note [One communication thread] in _backend.py).
Results are written in place, as PyTorch's collectives do, and bump the tensors' version
counters. This file must not hold process-group state; _backend.py owns it.
"""
from __future__ import annotations

import enum

import numpy as np

from .._core.tensor import Tensor
from ._backend import Work, _mpi, _resolve

__all__ = ["ReduceOp", "all_reduce", "broadcast", "reduce", "all_gather",
           "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather",
           "scatter", "barrier", "send", "recv", "isend", "irecv", "broadcast_object_list",
           "all_gather_object", "gather_object", "scatter_object_list"]


class ReduceOp(enum.Enum):
    """How ``all_reduce``, ``reduce`` and ``reduce_scatter`` combine the ranks' tensors."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self):
        return f"<ReduceOp.{self.name}>"


# ---------------------------------------------------------------------------------------
# Argument checks

def _array(t, arg, fn, *, write=False, contiguous=True):
    """The eager NumPy buffer of Tensor argument ``arg`` of ``fn``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): {arg} must be a Tensor, got {type(t).__name__}")
    d = t._data
    if d.__class__ is not np.ndarray:
        raise RuntimeError(f"{fn}(): {arg} is being traced (inside a transform or compile); "
                           "collectives run on eager tensors only")
    if contiguous and not d.flags.c_contiguous:
        raise ValueError(f"{fn}(): {arg} must be contiguous (Tensors must be contiguous); "
                         "call .contiguous() first")
    if write and not d.flags.writeable:
        raise ValueError(f"{fn}(): {arg} is read-only (an expanded/broadcast view); the "
                         "result is written into it, so pass a tensor with its own memory")
    return d


def _tensor_list(ts, arg, fn, like, n, *, write):
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"{fn}(): {arg} must be a list of Tensors, got {type(ts).__name__}")
    if len(ts) != n:
        raise ValueError(f"{fn}(): {arg} must hold one tensor per rank of the group ({n}), "
                         f"got {len(ts)}")
    arrays = []
    for i, t in enumerate(ts):
        a = _array(t, f"{arg}[{i}]", fn, write=write, contiguous=False)
        if a.shape != like.shape or a.dtype != like.dtype:
            raise ValueError(f"{fn}(): {arg}[{i}] has shape {tuple(a.shape)} and dtype "
                             f"{a.dtype}, expected {tuple(like.shape)} and {like.dtype} (those "
                             "of the tensor)")
        arrays.append(a)
    return arrays


def _same_dtype(a, b, names, fn):
    if a.dtype != b.dtype:
        raise ValueError(f"{fn}(): {names[0]} and {names[1]} must have the same dtype, got "
                         f"{a.dtype} and {b.dtype}")


def _bump(*tensors):
    for t in tensors:
        t._version_counter.value += 1


def _bytes(a):
    """A contiguous array as a flat byte buffer (data movement needs no MPI datatype)."""
    return a.reshape(-1).view(np.uint8)


_plans = {}   # (op name, dtype) -> _reduce_plan's answer: built once, looked up per call


def _reduce_plan(op, dtype, fn):
    """(MPI op, dtype to reduce in or None, divide by the group size?) for ``op`` on ``dtype``.

    float16 has no MPI datatype: it is reduced in float32 and rounded back once. bool
    reduces with logical ops (a SUM of bools is an OR, as in PyTorch).
    """
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{fn}(): op must be a ReduceOp (ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, "
                        f"BAND, BOR, BXOR), got {op!r}")
    key = (op._name_, dtype)   # a str key: a ReduceOp's own hash is Python code
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = _make_reduce_plan(op, dtype, fn)
    return plan


def _make_reduce_plan(op, dtype, fn):
    MPI = _mpi()
    kind = dtype.kind
    if kind == "b":
        table = {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR,
                 ReduceOp.PRODUCT: MPI.LAND, ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND,
                 ReduceOp.BXOR: MPI.LXOR}
        if op not in table:
            raise ValueError(f"{fn}(): {op!r} is not defined for bool tensors")
        return table[op], None, False
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "iu":
        raise ValueError(f"{fn}(): {op!r} needs an integer or bool tensor, got {dtype}")
    if op in (ReduceOp.MIN, ReduceOp.MAX) and kind == "c":
        raise ValueError(f"{fn}(): {op!r} is not defined for complex tensors")
    if op is ReduceOp.AVG and kind not in "fc":
        raise ValueError(f"{fn}(): ReduceOp.AVG needs a floating-point or complex tensor, got "
                         f"{dtype}; use ReduceOp.SUM and divide")
    mpi_op = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
              ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
              ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]
    wide = np.dtype(np.float32) if dtype == np.float16 else None
    return mpi_op, wide, op is ReduceOp.AVG


def _nothing():
    """The finish step of a collective that wrote its result in place."""


def _keep_until_done(buffer):
    """The finish step of a collective whose send buffer was made for it: referring to
    ``buffer`` here keeps it alive until MPI has completed the request."""
    del buffer


def _unstack(everything, outs):
    """Copies the gathered rows of ``everything`` into the output tensors' arrays."""
    for o, part in zip(outs, everything):
        o[...] = part


def _sig(a, *extra):
    """What a collective on array ``a`` must agree on across ranks (Note [Checking that ranks
    agree]): a tuple, hashed once per distinct value, printed only if the ranks differ."""
    return (a.dtype, a.shape, *extra)


# ---------------------------------------------------------------------------------------
# Collectives

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces the tensor data across all machines in such a way that all get the final
    result; ``tensor`` is updated in place on every rank."""
    return _all_reduce(tensor, op, group, async_op, check=True)


def _all_reduce(tensor, op, group, async_op, check):
    """``all_reduce``; ``check=False`` skips Note [Checking that ranks agree], for callers
    that guarantee agreement themselves (DDP verifies its buckets at construction)."""
    pg = _resolve(group)
    if pg is None:
        return None
    a = _array(tensor, "tensor", "all_reduce", write=True)
    MPI = _mpi()
    mpi_op, wide, avg = _reduce_plan(op, a.dtype, "all_reduce")

    def post():   # Note [Blocking collectives run inline]
        work = a if wide is None else a.astype(wide)
        return pg.comm.Iallreduce(MPI.IN_PLACE, work, op=mpi_op), lambda: finish(work)

    def finish(work):
        if avg:
            np.divide(work, pg.size(), out=work)
        if work is not a:
            a[...] = work
    tensor._version_counter.value += 1
    return pg.run("all_reduce", None, (a.dtype, a.shape, op._name_) if check else None, async_op, post)


def broadcast(tensor, src, group=None, async_op=False):
    """Broadcasts ``tensor`` from global rank ``src`` to every rank of the group (in place)."""
    pg = _resolve(group)
    if pg is None:
        return None
    root = pg.group_rank(src, "src")
    a = _array(tensor, "tensor", "broadcast", write=True)
    _bump(tensor)
    return pg.run("broadcast", None, _sig(a, f"src={src}"), async_op,
                  lambda: (pg.comm.Ibcast(_bytes(a), root=root), _nothing))


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across the group; only global rank ``dst`` receives the result."""
    pg = _resolve(group)
    if pg is None:
        return None
    root = pg.group_rank(dst, "dst")
    a = _array(tensor, "tensor", "reduce", write=True)
    MPI = _mpi()
    mpi_op, wide, avg = _reduce_plan(op, a.dtype, "reduce")
    is_root = pg.rank() == root

    def post():   # Note [Blocking collectives run inline]
        work = a if wide is None else a.astype(wide)
        if not is_root:
            return (pg.comm.Ireduce(work, None, op=mpi_op, root=root),
                    lambda: _keep_until_done(work))
        return (pg.comm.Ireduce(MPI.IN_PLACE, work, op=mpi_op, root=root),
                lambda: finish(work))

    def finish(work):
        if avg:
            np.divide(work, pg.size(), out=work)
        if work is not a:
            a[...] = work
    if is_root:
        _bump(tensor)
    return pg.run("reduce", None, _sig(a, op._name_, f"dst={dst}"), async_op, post)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gathers ``tensor`` from every rank into ``tensor_list`` (one tensor per rank)."""
    pg = _resolve(group)
    if pg is None:
        return None
    a = _array(tensor, "tensor", "all_gather")
    outs = _tensor_list(tensor_list, "tensor_list", "all_gather", a, pg.size(), write=True)

    def post():
        everything = np.empty((pg.size(),) + a.shape, a.dtype)
        return (pg.comm.Iallgather(_bytes(a), _bytes(everything)),
                lambda: _unstack(everything, outs))
    _bump(*tensor_list)
    return pg.run("all_gather", None, _sig(a), async_op, post)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gathers ``input_tensor`` from every rank, concatenated in rank order along the first
    dimension (or stacked), into ``output_tensor`` of ``world_size`` times its size."""
    pg = _resolve(group)
    if pg is None:
        return None
    fn = "all_gather_into_tensor"
    a = _array(input_tensor, "input_tensor", fn)
    out = _array(output_tensor, "output_tensor", fn, write=True)
    _same_dtype(out, a, ("output_tensor", "input_tensor"), fn)
    if out.size != a.size * pg.size():
        raise ValueError(f"{fn}(): output_tensor must have world_size ({pg.size()}) times the "
                         f"elements of input_tensor ({a.size}), got {out.size}")
    _bump(output_tensor)
    return pg.run(fn, None, _sig(a), async_op,
                  lambda: (pg.comm.Iallgather(_bytes(a), _bytes(out)), _nothing))


def _reduce_scatter_block(pg, fn, out, inp, op):
    mpi_op, wide, avg = _reduce_plan(op, inp.dtype, fn)

    def post():
        src = inp if wide is None else inp.astype(wide)
        dst = out if wide is None else np.empty(out.shape, wide)
        return (pg.comm.Ireduce_scatter_block(src, dst, op=mpi_op),
                lambda: finish(src, dst))

    def finish(src, dst):   # src passed along only to stay alive until MPI is done
        if avg:
            np.divide(dst, pg.size(), out=dst)
        if dst is not out:
            out[...] = dst
    return post


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input`` (``world_size`` chunks along its first dimension) across ranks and
    leaves chunk ``rank`` of the result in ``output``."""
    pg = _resolve(group)
    if pg is None:
        return None
    fn = "reduce_scatter_tensor"
    inp = _array(input, "input", fn)
    out = _array(output, "output", fn, write=True)
    _same_dtype(out, inp, ("output", "input"), fn)
    if inp.size != out.size * pg.size():
        raise ValueError(f"{fn}(): input must have world_size ({pg.size()}) times the elements "
                         f"of output ({out.size}), got {inp.size}")
    post = _reduce_scatter_block(pg, fn, out, inp, op)
    _bump(output)
    return pg.run(fn, None, _sig(inp, op._name_), async_op, post)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input_list[i]`` across ranks into ``output`` on rank ``i``."""
    pg = _resolve(group)
    if pg is None:
        return None
    fn = "reduce_scatter"
    out = _array(output, "output", fn, write=True)
    ins = _tensor_list(input_list, "input_list", fn, out, pg.size(), write=False)
    inp = np.stack(ins) if ins else np.empty((0,) + out.shape, out.dtype)
    post = _reduce_scatter_block(pg, fn, out, inp, op)
    _bump(output)
    return pg.run(fn, None, _sig(out, op._name_), async_op, post)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Gathers ``tensor`` from every rank into ``gather_list`` on global rank ``dst``."""
    pg = _resolve(group)
    if pg is None:
        return None
    root = pg.group_rank(dst, "dst")
    a = _array(tensor, "tensor", "gather")
    is_root = pg.rank() == root
    if is_root:
        if gather_list is None:
            raise ValueError("gather(): gather_list must be given on the destination rank")
        outs = _tensor_list(gather_list, "gather_list", "gather", a, pg.size(), write=True)
    elif gather_list:
        raise ValueError("gather(): gather_list must NOT be given on non-destination ranks")

    def post():
        if not is_root:
            return pg.comm.Igather(_bytes(a), None, root=root), _nothing
        everything = np.empty((pg.size(),) + a.shape, a.dtype)
        return (pg.comm.Igather(_bytes(a), _bytes(everything), root=root),
                lambda: _unstack(everything, outs))
    if is_root:
        _bump(*gather_list)
    return pg.run("gather", None, _sig(a, f"dst={dst}"), async_op, post)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Scatters ``scatter_list`` (one tensor per rank, given on global rank ``src``): rank
    ``i`` receives ``scatter_list[i]`` into ``tensor``."""
    pg = _resolve(group)
    if pg is None:
        return None
    root = pg.group_rank(src, "src")
    a = _array(tensor, "tensor", "scatter", write=True)
    is_root = pg.rank() == root
    if is_root:
        if scatter_list is None:
            raise ValueError("scatter(): scatter_list must be given on the source rank")
        ins = _tensor_list(scatter_list, "scatter_list", "scatter", a, pg.size(), write=False)
    elif scatter_list:
        raise ValueError("scatter(): scatter_list must NOT be given on non-source ranks")

    def post():
        whole = np.stack(ins) if is_root else None
        request = pg.comm.Iscatter(None if whole is None else _bytes(whole), _bytes(a),
                                   root=root)
        return request, lambda: _keep_until_done(whole)
    _bump(tensor)
    return pg.run("scatter", None, _sig(a, f"src={src}"), async_op, post)


def barrier(group=None, async_op=False, device_ids=None):
    """Blocks until every rank of the group has entered the barrier."""
    pg = _resolve(group)
    if pg is None:
        return None
    return pg.run("barrier", None, "", async_op, lambda: (pg.comm.Ibarrier(), _nothing))


# ---------------------------------------------------------------------------------------
# Point-to-point (MPI's non-blocking calls, polled by Work.wait)

def isend(tensor, dst, group=None, tag=0):
    """Sends ``tensor`` to global rank ``dst`` without blocking; returns a ``Work``."""
    pg = _resolve(group)
    if pg is None:
        return None
    peer = pg.group_rank(dst, "dst")
    a = _array(tensor, "tensor", "isend")
    request = pg.comm.Isend(_bytes(a), dest=peer, tag=tag)
    work = Work("send", pg, request)
    work._buffer = a   # MPI reads it until the send completes
    return work


def irecv(tensor, src=None, group=None, tag=0):
    """Receives into ``tensor`` from global rank ``src`` (any rank if None) without blocking;
    returns a ``Work`` whose ``result()`` is the sender's global rank."""
    pg = _resolve(group)
    if pg is None:
        return None
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None else pg.group_rank(src, "src")
    a = _array(tensor, "tensor", "irecv", write=True)
    request = pg.comm.Irecv(_bytes(a), source=peer, tag=tag)

    def done(status):
        got = status.Get_count(MPI.BYTE)
        if got != a.nbytes:
            raise ValueError(f"recv(): received {got} bytes from rank "
                             f"{pg.ranks[status.Get_source()]} but tensor holds {a.nbytes} "
                             f"({a.dtype} {tuple(a.shape)}): the sent tensor's shape or dtype "
                             "differs")
        return pg.ranks[status.Get_source()]
    _bump(tensor)
    work = Work("recv", pg, request, on_done=done)
    work._buffer = a
    return work


def send(tensor, dst, group=None, tag=0):
    """Sends ``tensor`` to global rank ``dst``; returns once it has been handed over."""
    work = isend(tensor, dst, group, tag)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0):
    """Receives into ``tensor`` from global rank ``src`` (any if None); returns the sender's
    global rank."""
    work = irecv(tensor, src, group, tag)
    return -1 if work is None else work.result()


# ---------------------------------------------------------------------------------------
# Object collectives (pickled by mpi4py)

def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Broadcasts the picklable objects of ``object_list`` from global rank ``src``; every
    rank passes a list of the same length, which is filled in place."""
    pg = _resolve(group)
    if pg is None:
        return
    root = pg.group_rank(src, "src")
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list(): object_list must be a list, got "
                        f"{type(object_list).__name__}")
    mine = object_list if pg.rank() == root else None
    object_list[:] = pg.call("broadcast_object_list", lambda: pg.comm.bcast(mine, root=root),
                             f"len={len(object_list)} src={src}")


def all_gather_object(object_list, obj, group=None):
    """Gathers picklable ``obj`` from every rank into ``object_list`` (length world_size)."""
    pg = _resolve(group)
    if pg is None:
        return
    if not isinstance(object_list, list) or len(object_list) != pg.size():
        raise ValueError(f"all_gather_object(): object_list must be a list of length "
                         f"world_size ({pg.size()}), got {object_list!r}")
    object_list[:] = pg.call("all_gather_object", lambda: pg.comm.allgather(obj), "")


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """Gathers picklable ``obj`` from every rank into ``object_gather_list`` on ``dst``."""
    pg = _resolve(group)
    if pg is None:
        return
    root = pg.group_rank(dst, "dst")
    if pg.rank() == root and (not isinstance(object_gather_list, list)
                              or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object(): object_gather_list must be a list of length "
                         f"world_size ({pg.size()}) on the destination rank")
    everything = pg.call("gather_object", lambda: pg.comm.gather(obj, root=root), f"dst={dst}")
    if pg.rank() == root:
        object_gather_list[:] = everything


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0,
                        group=None):
    """Scatters ``scatter_object_input_list`` (on ``src``): rank ``i`` receives element ``i``
    as ``scatter_object_output_list[0]``."""
    pg = _resolve(group)
    if pg is None:
        return
    root = pg.group_rank(src, "src")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("scatter_object_list(): scatter_object_output_list must be a "
                         "non-empty list")
    if pg.rank() == root and (not isinstance(scatter_object_input_list, list)
                              or len(scatter_object_input_list) != pg.size()):
        raise ValueError(f"scatter_object_list(): scatter_object_input_list must be a list of "
                         f"length world_size ({pg.size()}) on the source rank")
    mine = scatter_object_input_list if pg.rank() == root else None
    scatter_object_output_list[0] = pg.call(
        "scatter_object_list", lambda: pg.comm.scatter(mine, root=root), f"src={src}")
