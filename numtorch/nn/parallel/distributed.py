"""``DistributedDataParallel``: data-parallel training over ``numtorch.distributed``.

Every rank holds a replica of the module and runs forward and backward on its own slice of
the batch; DDP makes the replicas start equal (a broadcast from rank 0 at construction) and
stay equal (the gradients are averaged across ranks before ``backward()`` returns, so each
optimizer step is the same everywhere). It owns the bucketing and the gradient hooks; the
collectives themselves are ``numtorch.distributed``'s, and the hooks are autograd's
(Note [Post-accumulate-grad hooks] in autograd/engine.py).

Note [Gradient buckets]
As in PyTorch's Reducer, the parameters are packed, in *reverse* registration order (the
order backward produces their gradients), into flat buckets of about ``bucket_cap_mb``
MiB, the first one capped at 1 MiB (or less) so that communication starts early. When the last
gradient of a bucket has been accumulated during backward, the gradients are copied into
the bucket and its average is all-reduced with ``async_op=True``: the all-reduce runs on
the communication thread while backward computes the earlier layers. Buckets are launched
strictly in index order (a bucket that fills early waits for its predecessors), so every
rank issues the same all-reduces in the same order, whatever order its hooks fire in. A
callback queued on the autograd engine waits for the last all-reduce when backward ends and
writes the averages into ``p.grad`` (or points ``p.grad`` at the bucket with
``gradient_as_bucket_view=True``). The bucket size trades latency (each all-reduce has a
fixed cost) against overlap (a bucket can only start once all of its gradients exist).
Under compile the same overlap needs the captured graph cut at these buckets
(Note [DDP under compile]).

Note [Unused parameters]
A parameter that did not take part in the forward pass never gets a gradient, so its bucket
would never be launched. With ``find_unused_parameters=True`` DDP walks the autograd graph
from the forward outputs, marks the parameters it does not reach as ready at the start of
backward (contributing zeros) and all-reduces a "used" flag per parameter: a parameter
unused on *every* rank keeps ``grad=None``, as in PyTorch. Without the flag such a
parameter makes backward raise, naming it, instead of leaving the ranks' gradients unequal.
"""
from __future__ import annotations

import weakref
from contextlib import contextmanager

import numpy as np

from ..._core.tensor import Tensor, wrap
from ...autograd import engine
from ...autograd.grad_mode import is_grad_enabled
from ..._dynamo.api import disable as _dynamo_disable
from ..._dynamo.ddp_optimizer import optimize_ddp_mode
from ..modules.module import Module

__all__ = ["DistributedDataParallel", "consume_prefix_in_state_dict_if_present"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024   # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES


def _dist():
    from ... import distributed
    return distributed


class _Bucket:
    """A flat buffer holding some parameters' gradients (Note [Gradient buckets])."""

    def __init__(self, index, params, dtype):
        self.index = index
        self.params = params
        self.offsets = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p._data.size
        self.flat = np.zeros(n, dtype)
        self.tensor = wrap(self.flat)
        self.pending = len(params)
        self.work = None

    def slot(self, i):
        p = self.params[i]
        return self.flat[self.offsets[i]:self.offsets[i] + p._data.size].reshape(p._data.shape)


class DistributedDataParallel(Module):
    """Implements distributed data parallelism at the module level
    (``torch.nn.parallel.DistributedDataParallel``).

    Gradients are averaged across the ranks of ``process_group`` during ``backward()``,
    bucket by bucket as they become ready (Note [Gradient buckets]). The wrapped module is
    ``ddp.module``; ``ddp.state_dict()`` keys therefore start with ``module.``, as in
    PyTorch (load them into a plain module with ``consume_prefix_in_state_dict_if_present``).
    """

    # the live instances, which compile's DDPOptimizer asks whose parameters a graph reads
    # (Note [DDP under compile])
    _live = weakref.WeakSet()

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        dist = _dist()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel(): module must be an nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids not in (None, [], ["cpu"]) or output_device not in (None, "cpu"):
            raise ValueError("DistributedDataParallel(): device_ids and output_device must be "
                             f"None for CPU modules, got device_ids={device_ids!r}, "
                             f"output_device={output_device!r}")
        if bucket_cap_mb is None:
            bucket_cap_mb = 25
        if not isinstance(bucket_cap_mb, (int, float)) or bucket_cap_mb <= 0:
            raise ValueError(f"DistributedDataParallel(): bucket_cap_mb must be a positive "
                             f"number, got {bucket_cap_mb!r}")
        self.module = module
        self.process_group = process_group
        self._pg = dist._backend._resolve(process_group)
        if self._pg is None:
            raise ValueError("DistributedDataParallel(): this rank is not in process_group")
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph   # accepted; this implementation needs no hint
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self.require_backward_grad_sync = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._param_names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._verify_same_shapes_across_ranks()
        self._sync_module_states(list(module.parameters()) + list(module.buffers()))
        # Note [optimize_ddp modes] in _dynamo/ddp_optimizer.py: read once, as PyTorch does
        self._use_python_reducer = optimize_ddp_mode() == "python_reducer"
        if self._use_python_reducer:
            self._buckets, self._where = [], {}
        else:
            self._build_buckets()
        # weak: a dropped DDP must not stay alive (and hooked) through its parameters
        me = weakref.ref(self)
        hook = lambda p: (lambda ddp: ddp is not None and ddp._grad_ready(p))(me())  # noqa: E731
        self._hooks = [p.register_post_accumulate_grad_hook(hook) for p in self._params]
        self._armed = False          # a forward with sync on has prepared a backward
        self._started = False        # the current backward has fired a hook
        self._unused = []            # params found unused by the last forward
        self._used_work = None
        self._ready = set()
        self._last_wait_seconds = 0.0   # exposed communication, for benchmarks
        DistributedDataParallel._live.add(self)

    def _owns(self, t):
        """Whether ``t`` is one of the parameters whose gradients this DDP averages."""
        where = self._where.get(id(t))
        return where is not None and where[0].params[where[1]] is t

    def _param_name(self, t):
        return next(n for n, p in zip(self._param_names, self._params) if p is t)

    # -- construction -----------------------------------------------------------------
    def _verify_same_shapes_across_ranks(self):
        dist = _dist()
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in zip(self._param_names,
                                                                   self._params)]
        everyone = [None] * self._pg.size()
        dist.all_gather_object(everyone, mine, group=self.process_group)
        for r, theirs in enumerate(everyone):
            if theirs != everyone[0]:
                diff = next(((a, b) for a, b in zip(everyone[0], theirs) if a != b),
                            (len(everyone[0]), len(theirs)))
                raise ValueError(f"DistributedDataParallel(): the module differs across ranks: "
                                 f"rank {self._pg.ranks[0]} has {diff[0]}, rank "
                                 f"{self._pg.ranks[r]} has {diff[1]}")

    def _sync_module_states(self, tensors):
        """Broadcast ``tensors`` from the group's first rank, one flat buffer per dtype."""
        dist = _dist()
        by_dtype = {}
        for t in tensors:
            if t._data.__class__ is np.ndarray:
                by_dtype.setdefault(t._data.dtype, []).append(t)
        for dtype, ts in by_dtype.items():
            flat = np.concatenate([t._data.reshape(-1) for t in ts]) if ts else None
            dist.broadcast(wrap(flat), src=self._pg.ranks[0], group=self.process_group)
            offset = 0
            for t in ts:
                n = t._data.size
                t._data[...] = flat[offset:offset + n].reshape(t._data.shape)
                t._version_counter.value += 1
                offset += n

    def _build_buckets(self):
        """Note [Gradient buckets]: reverse parameter order, split by size and dtype."""
        self._buckets, self._where = [], {}
        open_ = {}   # dtype -> params of the bucket being filled
        cap = min(_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)

        def close(dtype):
            params = open_.pop(dtype)
            bucket = _Bucket(len(self._buckets), params, dtype)
            for i, p in enumerate(params):
                self._where[id(p)] = (bucket, i)
            self._buckets.append(bucket)

        sizes = {}
        for p in reversed(self._params):
            dtype = p._data.dtype
            open_.setdefault(dtype, []).append(p)
            sizes[dtype] = sizes.get(dtype, 0) + p._data.nbytes
            if sizes[dtype] >= cap:
                close(dtype)
                sizes[dtype] = 0
                cap = self.bucket_bytes_cap
        for dtype in list(open_):
            close(dtype)

    # -- forward ----------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._use_python_reducer:   # no reducer to prepare, no buffer broadcast
            return self.module(*inputs, **kwargs)
        self._pre_forward()
        out = self.module(*inputs, **kwargs)
        self._post_forward(out)
        return out

    # Note [DDP under compile]
    # compile(ddp) captures this forward: the bookkeeping before and after the module call
    # (buffer broadcast, arming the hooks, the unused-parameter walk of the real autograd
    # graph) runs eagerly, as graph breaks (PyTorch skips DDP's forward frame in dynamo for
    # the same reason), and the wrapped module's forward in between is captured into a
    # graph. Its backend is wrapped by numtorch/_dynamo/ddp_optimizer.py, which splits that
    # graph at this DDP's bucket boundaries so the buckets' all-reduces overlap backward.
    @_dynamo_disable
    def _pre_forward(self):
        if self.broadcast_buffers and self._pg.size() > 1:
            buffers = list(self.module.buffers())
            if buffers:
                self._sync_module_states(buffers)

    @_dynamo_disable
    def _post_forward(self, out):
        self._armed = is_grad_enabled() and self.require_backward_grad_sync
        if self._armed:
            self._started = False
            self._ready = set()
            for b in self._buckets:
                b.pending = len(b.params)
                b.work = None
            self._next_bucket = 0
            self._unused = self._find_unused(out) if self.find_unused_parameters else []

    def _find_unused(self, outputs):
        """Parameters not reachable from the outputs' autograd graph (Note [Unused parameters])."""
        from ..._core import pytree
        reached, seen = set(), set()
        stack = [t.grad_fn for t in pytree.tree_leaves(outputs)
                 if isinstance(t, Tensor) and t.grad_fn is not None]
        reached.update(id(t) for t in pytree.tree_leaves(outputs)
                       if isinstance(t, Tensor) and t.grad_fn is None)
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            for e in node.next_edges:
                if e is None:
                    continue
                if e[0].__class__ is engine.Node:
                    stack.append(e[0])
                else:
                    reached.add(id(e[0]))
        return [p for p in self._params if id(p) not in reached]

    @contextmanager
    def no_sync(self):
        """A context manager in which gradients accumulate locally, without all-reduce; the
        first backward after it (of a forward outside it) averages the accumulated sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # -- backward: hooks, launches, the final wait ---------------------------------------
    def _grad_ready(self, p):
        if self._use_python_reducer:
            self._reduce_one(p)
            return
        if not self._armed:
            return
        if not self._started:
            self._started = True
            engine.queue_callback(self._finalize)
            if self.find_unused_parameters:
                self._start_used_flags()
                for q in self._unused:
                    self._mark_ready(q)
        self._mark_ready(p)

    def _mark_ready(self, p):
        if id(p) in self._ready:
            raise RuntimeError("DistributedDataParallel: a parameter's gradient was produced "
                               "twice in one backward (backward of the same forward twice, or "
                               "a shared parameter): call forward again before backward")
        self._ready.add(id(p))
        bucket, i = self._where[id(p)]
        g = p._grad
        if g is None:
            bucket.slot(i)[...] = 0
        else:
            bucket.slot(i)[...] = g._data
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()

    def _reduce_one(self, p):
        """optimize_ddp="python_reducer" (Note [optimize_ddp modes]): average ``p``'s gradient
        with its own all-reduce, as soon as it has been accumulated. The all-reduce is the
        checked one: nothing here guarantees that the ranks reduce the same parameters."""
        if not self.require_backward_grad_sync or p._grad is None:
            return
        avg = p._grad._data / self._pg.size()   # a fresh contiguous array
        _dist().all_reduce(wrap(avg), group=self.process_group)
        self._set_grad(p, avg)

    @staticmethod
    def _set_grad(p, avg):
        """Write the averaged gradient ``avg`` into ``p.grad`` (in place where it can)."""
        if p._grad is not None and p._grad._data.flags.writeable \
                and p._grad._data.shape == avg.shape:
            p._grad._data[...] = avg
            p._grad._version_counter.value += 1
        else:
            p._grad = wrap(avg.copy())

    def _launch_ready_buckets(self):
        dist = _dist()
        while self._next_bucket < len(self._buckets):
            b = self._buckets[self._next_bucket]
            if b.pending:
                return
            # no per-bucket agreement check: _verify_same_shapes_across_ranks made the
            # buckets equal on every rank, and they are launched in index order
            b.work = dist._collectives._all_reduce(b.tensor, dist.ReduceOp.AVG,
                                                   self.process_group, True, check=False)
            self._next_bucket += 1

    def _start_used_flags(self):
        dist = _dist()
        unused = {id(p) for p in self._unused}
        self._used = wrap(np.array([id(p) not in unused for p in self._params], np.uint8))
        self._used_work = dist.all_reduce(self._used, op=dist.ReduceOp.MAX,
                                          group=self.process_group, async_op=True)

    def _finalize(self):
        import time
        self._armed = False
        missing = [n for n, p in zip(self._param_names, self._params) if id(p) not in self._ready]
        if missing:
            raise RuntimeError(
                "DistributedDataParallel: these parameters did not receive a gradient in this "
                f"backward pass on rank {self._pg.ranks[self._pg.rank()]}: {missing}. Their "
                "gradients can't be averaged, so the replicas would diverge. If the module "
                "has parameters not used in producing the loss, pass "
                "find_unused_parameters=True to DistributedDataParallel; otherwise make sure "
                "all forward outputs take part in the loss.")
        start = time.perf_counter()
        for b in self._buckets:
            b.work.wait()
        used = None
        if self._used_work is not None:
            self._used_work.wait()
            used = self._used._data
            self._used_work = None
        self._last_wait_seconds = time.perf_counter() - start
        for k, p in enumerate(self._params):
            if used is not None and not used[k]:
                continue   # unused on every rank: grad stays as it was (None)
            bucket, i = self._where[id(p)]
            avg = bucket.slot(i)
            if self.gradient_as_bucket_view:
                p._grad = wrap(avg)
            else:
                self._set_grad(p, avg)

    def __del__(self):
        for h in getattr(self, "_hooks", ()):
            h.remove()


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips ``prefix`` (e.g. ``"module."``, which a ``DistributedDataParallel`` state dict
    has) from the keys of ``state_dict`` in place, where present (PyTorch's
    ``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present``)."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if key == prefix.rstrip(".") or key.startswith(prefix):
                new = "" if key == prefix.rstrip(".") else key[len(prefix):]
                metadata[new] = metadata.pop(key)
