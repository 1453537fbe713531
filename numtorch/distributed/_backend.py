"""Process groups on MPI: initialisation, groups, ``Work`` and the communication thread.

This file owns the state of ``numtorch.distributed`` (the default group, the groups made by
``new_group``), the one thread that runs collectives, and the errors users see. It knows
nothing about Tensors: ``_collectives.py`` turns Tensor calls into functions on NumPy
buffers and submits them here. mpi4py is imported only when a process group is created
(``import numtorch`` must stay fast and must work without MPI).

Note [One communication thread]
Every collective of every group runs, in the order the program issued it, on one daemon
thread per process (PyTorch's ProcessGroup worker). MPI requires all ranks to enter the
collectives of a communicator in the same order; a single FIFO keeps the program's order,
so ``async_op=True`` is ordered exactly like the blocking calls around it. The thread calls
MPI's *blocking* collectives: mpi4py releases the GIL inside MPI, and NumPy releases it
inside large kernels, so a collective progresses while the main thread keeps computing —
that is what lets DistributedDataParallel overlap its all-reduces with backward. The
caller waits on an Event with the group's timeout, so a collective that the other ranks
never join raises ``DistBackendError`` instead of hanging. Point-to-point calls do not use
the thread (a blocking send queued before the matching receive would deadlock it): they
are MPI's non-blocking ``Isend``/``Irecv``, polled with the same timeout.

Note [Blocking collectives run inline]
A blocking collective (``async_op=False``: all_reduce, broadcast, reduce, the gathers,
scatters and reduce-scatters, barrier; not the object collectives, which pickle) issued
while the thread has nothing queued does not go through it: the calling thread posts MPI's
non-blocking form (``Iallreduce``, ``Ibcast``, ...) and polls it (``Test``) until it
completes or the group's timeout passes. The order is still the
program's (nothing is queued before it, and the thread waits while an inline collective
runs), the timeout still raises, and two costs go: the hand-off to the thread and back (two
wake-ups, each a scheduling delay on a busy machine), and MPICH's blocking wait, which in
MPI_THREAD_MULTIPLE mode yields the processor between polls — on the loaded 2-core machine
the fixed cost of a 1 KB blocking all_reduce fell from ~200 us to ~15-20 us (best of 31,
checks on), the median from ~250 to ~140-200 us (benchmarks/distributed.py measures both
paths; results/2026-11-23-2core-load7-distributed.json). The poll tests a few times,
then yields the processor between tests: on a loaded machine both ranks often share one
core, and then a rank spinning in Python holds off the peer it waits for. Measured with
both ranks pinned to one core (taskset), a 1 KB round trip took 50 us when the poll spun
256 tests before yielding, 13 us after 32 and 10 us after 2; from 1 MB the early yield
matched MPI's blocking Allreduce (418 vs 405 us at 1 MB, 1335 vs 1312 us at 4 MB) where
32 spins lost ~10%. With the ranks on separate cores the spin count made no difference
(2-4 us at 1 KB). The agreement check (Note [Checking that ranks agree]) is polled the same
way. Asynchronous collectives keep the
thread, which waits inside MPI without the GIL so that backward computes meanwhile. MPI
never matches a blocking collective with a non-blocking one, so every collective and every
agreement check is the non-blocking call, whichever thread waits for it. A send buffer made
for the call (a widened float16 copy, a stacked scatter list) is referenced by the finish
step, so it lives until MPI has completed the request.

Note [Checking that ranks agree]
Before each collective the ranks all-reduce (MIN) a 32-bit signature of what they are
about to do — the operation, shapes, dtypes, root and reduce op — together with its
negation, so one small MPI call tells every rank whether all signatures were equal (the MIN
of -h is minus the MAX of h). If not, every rank learns it at the same moment, the ranks
exchange their descriptions and all raise the same clear error naming what differs ("rank 0:
all_reduce float64 (3,) SUM; rank 1: all_reduce float64 (4,) SUM"), where
MPI alone would truncate, corrupt or hang. The check cannot ride along with the payload (both
posted at once): a mismatched collective, once posted, stays pending in MPI and wedges the
communicator, so the check must finish before the payload is posted — one extra round trip.
It is kept cheap: the signature is a tuple (dtype, shape, extras) whose CRC-32 is computed
once per distinct value (``_signatures``; Python's own str hash differs between processes),
the 16 bytes live in one preallocated array per group, and nothing is pickled unless the
ranks differ.

Cost, measured on 2 ranks of the shared 2-core machine (1 KB all_reduce, best of 31 repeats
of 200 calls, load 7-8; benchmarks/distributed.py's 'vs polled' column measures the same
difference at every size): raw ``Iallreduce`` polled as numtorch polls 2.1-2.2 us; numtorch
without the check 4.8-5.0 us, with it 7.6-7.9 us. So the check costs ~3 us (a 16-byte
all-reduce round trip is 1.7 us; the rest is Python). Against the payloads the target counts
(from 1 MB: raw MPI took ~144 us for 1 MB and ~435 us for 4 MB on the quiet machine) that is
2% and 0.7%, and numtorch's whole fixed cost, 5.7 us, 4% and 1.3%.
PyTorch runs such a check only under TORCH_DISTRIBUTED_DEBUG=DETAIL. Here it fits within
the issue's overhead budget (<= 5% above raw MPI from 1 MB), so it stays on by default: a
mismatch is a clear error on every rank instead of a hang or silently wrong numbers.
``NUMTORCH_DISTRIBUTED_CHECKS=0`` turns it off (tests run both modes), and DDP's own bucket
all-reduces skip it (it verifies its buckets at construction).

Note [A failing rank aborts the job]
A rank that dies of an uncaught exception leaves the others blocked in their next
collective, and its own interpreter then hangs in MPI_Finalize waiting for them. So
``init_process_group`` installs an excepthook that prints the traceback under a "rank R"
header and calls ``MPI_Abort``: the launcher (mpiexec) then ends every rank of the job, and
the job's exit status is non-zero. ``destroy_process_group`` restores the previous hook.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import zlib
from collections import deque
from datetime import timedelta

__all__ = ["DistError", "DistBackendError", "Work", "ProcessGroup", "GroupMember", "group",
           "is_available", "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "init_process_group", "is_initialized", "destroy_process_group", "new_group",
           "get_rank", "get_world_size", "get_backend", "get_process_group_ranks",
           "default_pg_timeout"]

default_pg_timeout = timedelta(minutes=30)   # PyTorch's default


class DistError(RuntimeError):
    """Base class of numtorch.distributed's errors (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective failed or timed out in the MPI backend (``torch.distributed.DistBackendError``)."""


_MPI = None


def _mpi():
    """mpi4py's MPI module, imported (and MPI initialised) on first use."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:   # mpi4py missing, or no MPI library for it to load
            raise RuntimeError(
                "numtorch.distributed runs on MPI through mpi4py, which could not be "
                f"imported ({e}). Install it with: pip install 'numtorch[distributed]' "
                "(mpi4py and the mpich wheel), or pip install mpi4py against your "
                "system's MPI.") from e
        _MPI = MPI
    return _MPI


def is_available() -> bool:
    """Returns True if the distributed package can be used (mpi4py and an MPI library load)."""
    try:
        _mpi()
    except RuntimeError:
        return False
    return True


def is_mpi_available() -> bool:
    """Returns True if the MPI backend is available."""
    return is_available()


def is_gloo_available() -> bool:
    """numtorch has the MPI backend only."""
    return False


def is_nccl_available() -> bool:
    """numtorch has the MPI backend only."""
    return False


# ---------------------------------------------------------------------------------------
# Work and the communication thread (Note [One communication thread])

def _seconds(timeout, name="timeout"):
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        return float(timeout)
    raise TypeError(f"{name} must be a datetime.timedelta (or a positive number of seconds), "
                    f"got {timeout!r}")


class Work:
    """A pending collective (``torch.distributed.Work``), returned when ``async_op=True``.

    ``wait()`` blocks until the operation has finished on this rank (its output tensors then
    hold the result) and raises ``DistBackendError`` if it failed or timed out;
    ``is_completed()`` asks without blocking.
    """

    def __init__(self, name, group, request=None, on_done=None):
        self._name = name
        self._group = group
        self._event = threading.Event()
        self._error = None
        self._result = None
        self._request = request        # an MPI request (point-to-point), or None
        self._on_done = on_done        # for requests: run once, in the waiting thread
        self._started = self._ended = None   # when the communication thread ran it

    def is_completed(self) -> bool:
        """Returns True once the operation has finished (successfully or not)."""
        if self._request is not None and not self._event.is_set():
            self._poll_request()
        return self._event.is_set()

    def is_success(self) -> bool:
        """Returns True if the operation finished without an error."""
        return self.is_completed() and self._error is None

    def exception(self):
        """The error the operation failed with, or None."""
        return self._error

    def wait(self, timeout=None) -> bool:
        """Blocks until the operation completes; raises ``DistBackendError`` if it failed or
        did not complete within ``timeout`` (default: the process group's timeout)."""
        limit = self._group.timeout if timeout is None else _seconds(timeout)
        if self._request is not None:
            done = self._wait_request(limit)
        else:
            done = self._event.wait(limit)
        if not done:
            raise _timed_out(self._name, self._group, limit)
        if self._error is not None:
            raise DistBackendError(f"{self._name} failed on rank {_world.rank}: "
                                   f"{self._error}") from self._error
        return True

    def result(self):
        """The operation's result (a list of output tensors in PyTorch; here its value)."""
        self.wait()
        return self._result

    def _finish(self, result=None, error=None):
        self._result, self._error = result, error
        self._event.set()

    # point-to-point requests are polled by whoever waits (Note [One communication thread])
    def _poll_request(self):
        try:
            status = _mpi().Status()
            if self._request.Test(status):
                self._finish(self._on_done(status) if self._on_done else None)
        except Exception as e:  # noqa: BLE001 — reported by wait()
            self._finish(error=e)
        return self._event.is_set()

    def _wait_request(self, limit):
        start, pause = time.perf_counter(), 0.0
        while not self._poll_request():
            elapsed = time.perf_counter() - start
            if elapsed > limit:
                return False
            if elapsed > 1e-3:   # spin first (latency), then back off (CPU shared with peers)
                pause = min(max(pause * 2, 1e-5), 1e-3)
                time.sleep(pause)
        return True


def _timed_out(name, group, limit):
    return DistBackendError(
        f"{name} timed out after {limit:g} s on rank {_world.rank} "
        f"(group of {group.size()} ranks): the other ranks did not join it in time — a rank "
        "skipped this collective, called a different one, failed, or is still "
        "computing. Pass a longer timeout= to init_process_group/new_group if it is "
        "just slow. The communicator can't be used after this; end the job.")


def _complete(post):
    request, finish = post()
    request.Wait()
    finish()


def _poll(request, deadline):
    """Test ``request`` until it completes (True) or ``deadline`` passes (False); after a
    few tests, yield the processor between tests (Note [Blocking collectives run inline])."""
    test, clock, give_way, n = request.Test, time.monotonic, os.sched_yield, 0
    while not test():
        n += 1
        if n > 4:
            give_way()   # the peer rank may be waiting for this processor
            if n & 1023 == 0 and clock() > deadline:
                return False
    return True


class _CommThread:
    """The daemon thread that runs collectives in issue order (Note [One communication thread])."""

    def __init__(self):
        self._queue = deque()
        self._lock = threading.Lock()   # taken directly on the inline path: a Condition's
        self._wake = threading.Condition(self._lock)   # own __enter__ is Python code
        self._stopped = False
        self._inline = False     # a blocking collective runs on its caller's thread
        self._busy = False       # this thread is running a collective
        self._thread = threading.Thread(target=self._loop, name="numtorch-distributed",
                                        daemon=True)
        self._thread.start()

    def submit(self, work, fn, first=False):
        with self._wake:
            if self._stopped:
                raise RuntimeError("the process group has been destroyed")
            if first:   # the rest of an inline collective that timed out
                self._queue.appendleft((work, fn))
            else:
                self._queue.append((work, fn))
            self._wake.notify()
        return work

    def enter_inline(self):
        """Claim MPI for a collective on the calling thread if nothing is queued or running
        here (Note [Blocking collectives run inline]); True if claimed."""
        with self._lock:
            if self._queue or self._busy or self._inline or self._stopped:
                return False
            self._inline = True
            return True

    def leave_inline(self):
        with self._lock:
            self._inline = False
            if self._queue:   # only then has the thread something to do: waking it for
                self._wake.notify()   # nothing costs a context switch and the GIL per call

    def stop(self, timeout):
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self._thread.join(timeout)

    def _loop(self):
        while True:
            with self._wake:
                while (not self._queue or self._inline) and not self._stopped:
                    self._wake.wait()
                if not self._queue:
                    return
                work, fn = self._queue.popleft()
                self._busy = True
            work._started = time.perf_counter()   # for benchmarks: busy time per op
            result = error = None
            try:
                result = fn()
            except BaseException as e:  # noqa: BLE001 — delivered to the waiting thread
                error = e
            work._ended = time.perf_counter()
            with self._wake:
                self._busy = False   # before the waiter wakes: its next call may run inline
            work._finish(result, error)


# ---------------------------------------------------------------------------------------
# Process groups

class ProcessGroup:
    """A set of ranks with its own MPI communicator (``torch.distributed.ProcessGroup``)."""

    def __init__(self, comm, ranks, timeout):
        self.comm = comm
        self.ranks = list(ranks)              # global ranks, in group-rank order
        self.timeout = timeout                # seconds
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        # Note [Checking that ranks agree]: the signature and its negation, all-reduced
        # with MIN in place; one buffer per group, reused by every check
        import numpy as np
        self._agree = np.zeros(2, np.int64)

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return "mpi"

    def __repr__(self):
        return f"ProcessGroup(backend='mpi', ranks={self.ranks})"

    def group_rank(self, global_rank, arg):
        """The rank inside this group of global rank ``global_rank`` (argument ``arg``)."""
        if not isinstance(global_rank, int) or isinstance(global_rank, bool):
            raise TypeError(f"{arg} must be an int rank, got {global_rank!r}")
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{arg}={global_rank} is not a rank of this process group "
                             f"(its global ranks are {self.ranks})") from None

    def run(self, name, fn, signature, async_op, post=None):
        """Submit ``fn`` (a function of no arguments, on NumPy buffers) as collective ``name``.

        ``signature`` describes what this rank does, for Note [Checking that ranks agree];
        returns a ``Work`` if ``async_op`` else waits for it and returns None. ``post``, if
        given, replaces ``fn`` by its non-blocking form: it starts the operation and returns
        ``(MPI request, finish)``; a blocking call then runs inline when it can (Note
        [Blocking collectives run inline]).
        """
        if post is not None:
            if not async_op and _world.thread.enter_inline():
                try:
                    self._run_inline(name, post, signature)
                finally:
                    _world.thread.leave_inline()
                return None
            # MPI never matches a blocking collective with a non-blocking one: on the
            # thread too, the operation is the non-blocking one, waited for
            fn = lambda: _complete(post)  # noqa: E731
        if _checks_enabled and signature is not None and self._size > 1:
            inner = fn
            fn = lambda: (self._check_agreement(name, signature), inner())[1]  # noqa: E731
        work = _world.thread.submit(Work(name, self), fn)
        if async_op:
            return work
        work.wait()
        return None

    def call(self, name, fn, signature):
        """Run ``fn`` as collective ``name`` (like ``run``), wait, and return its result."""
        work = self.run(name, fn, signature, async_op=True)
        work.wait()
        return work._result

    def _run_inline(self, name, post, signature):
        deadline = time.monotonic() + self.timeout
        try:
            if signature is not None and _checks_enabled and self._size > 1:
                h, request = self._post_agreement(name, signature)
                if not _poll(request, deadline):
                    self._abandon(name, request, lambda: (self._verify(name, signature, h),
                                                          _complete(post)))
                self._verify(name, signature, h)
            request, finish = post()
            if not _poll(request, deadline):
                self._abandon(name, request, finish)
            finish()
        except DistBackendError:
            raise
        except Exception as e:  # noqa: BLE001 — reported as wait() reports it
            raise DistBackendError(f"{name} failed on rank {_world.rank}: {e}") from e

    def _abandon(self, name, request, rest):
        """An inline collective timed out. MPI still holds ``request``: the thread waits for
        it, then runs ``rest`` (the collective's remaining steps), once the other ranks join,
        so the ranks' sequences of collectives stay aligned. Raises the timeout error."""
        _world.thread.submit(Work(name, self), lambda: (request.Wait(), rest()), first=True)
        raise _timed_out(name, self, self.timeout)

    def _check_agreement(self, name, signature):
        h, request = self._post_agreement(name, signature)
        request.Wait()
        self._verify(name, signature, h)

    def _post_agreement(self, name, signature):
        """Note [Checking that ranks agree]: starts the all-reduce (MIN) of the signature's
        hash and of its negation; returns the hash and the MPI request."""
        h = _signatures.get((name, signature))
        if h is None:
            h = _signature_hash(name, signature)
        both = self._agree
        both[0] = h
        both[1] = -h
        return h, self.comm.Iallreduce(_MPI.IN_PLACE, both, op=_MPI.MIN)

    def _verify(self, name, signature, h):
        """After ``_post_agreement``'s request completed: raise unless every rank had ``h``."""
        low, minus_high = self._agree.tolist()
        if low != h or minus_high != -h:
            everyone = self.comm.allgather(_describe(name, signature))
            lines = "; ".join(f"rank {r}: {t}" for r, t in zip(self.ranks, everyone))
            raise ValueError(f"the ranks of the group called different collectives or passed "
                             f"different shapes/dtypes/arguments: {lines}")


_signatures = {}   # (collective name, signature) -> its 32-bit hash, the same on every rank


def _describe(name, signature):
    """What a collective's signature says, as the mismatch error prints it."""
    if isinstance(signature, tuple):
        return " ".join([name, *map(str, signature)])
    return f"{name} {signature}" if signature else name


def _signature_hash(name, signature):
    """The CRC-32 of the description: Python's own hash of a str differs between processes."""
    h = zlib.crc32(_describe(name, signature).encode())
    if len(_signatures) > 4096:   # programs with ever-new shapes: keep the table small
        _signatures.clear()
    _signatures[(name, signature)] = h
    return h


class _NonGroupMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """``GroupMember.WORLD`` is the default group; ``NON_GROUP_MEMBER`` is what ``new_group``
    returns on ranks that are not in the new group."""
    WORLD = None
    NON_GROUP_MEMBER = _NonGroupMember()


class group:   # noqa: N801 — PyTorch's name: ``dist.group.WORLD``
    WORLD = None


_group_namespace = group   # ``group`` is also a parameter name below


class _World:
    """Everything ``init_process_group`` sets up, and ``destroy_process_group`` tears down."""
    default = None        # the default ProcessGroup
    thread = None
    rank = -1
    groups = []
    previous_excepthook = None


_world = _World()
_checks_enabled = os.environ.get("NUMTORCH_DISTRIBUTED_CHECKS", "1") != "0"


def _default_group():
    if _world.default is None:
        raise RuntimeError("Default process group has not been initialized, please make sure "
                           "to call init_process_group.")
    return _world.default


def _resolve(group):
    """The ProcessGroup for a ``group=`` argument, or None on a non-member rank."""
    if group is None or group is GroupMember.WORLD:
        return _default_group()
    _default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group() or None, got {group!r}")
    if group.comm is None:
        raise RuntimeError("this process group has been destroyed")
    return group


def _launcher_value(name):
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Initializes the default distributed process group.

    The processes are those MPI started (``mpiexec -n N`` or ``python -m
    numtorch.distributed.run --nproc-per-node N``); rank and world size come from MPI, and
    ``rank``/``world_size`` or the launcher's ``RANK``/``WORLD_SIZE`` variables, when given,
    must agree with it. ``timeout`` (a ``timedelta``, default 30 minutes) bounds every
    collective: one that the other ranks do not join in time raises ``DistBackendError``.
    """
    if _world.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None and str(backend).lower() not in ("mpi", "cpu:mpi"):
        raise ValueError(f"init_process_group(): backend={backend!r} is not available: "
                         "numtorch.distributed runs on MPI only; pass backend='mpi' (or None)")
    if init_method not in (None, "env://"):
        raise ValueError(f"init_process_group(): init_method={init_method!r} is not supported: "
                         "MPI's launcher (mpiexec, or python -m numtorch.distributed.run) "
                         "connects the processes; leave init_method=None")
    if store is not None:
        raise ValueError("init_process_group(): store= is not supported by the MPI backend")
    seconds = _seconds(default_pg_timeout if timeout is None else timeout)
    MPI = _mpi()
    comm = MPI.COMM_WORLD.Dup()   # our own context: the user's mpi4py traffic can't mix in
    mpi_rank, mpi_size = comm.Get_rank(), comm.Get_size()
    _check_matches("rank argument", rank, mpi_rank, mpi_rank, mpi_size)
    _check_matches("world_size argument", world_size, mpi_size, mpi_rank, mpi_size)
    for var, mine in (("RANK", mpi_rank), ("WORLD_SIZE", mpi_size)):
        _check_matches(f"environment variable {var}", _launcher_value(var), mine, mpi_rank,
                       mpi_size)
    _set_launcher_variables(MPI, mpi_rank, mpi_size)
    _world.thread = _CommThread()
    _world.rank = mpi_rank
    _world.default = ProcessGroup(comm, range(mpi_size), seconds)
    _world.groups = [_world.default]
    GroupMember.WORLD = group.WORLD = _world.default
    _world.previous_excepthook = sys.excepthook
    sys.excepthook = _abort_on_uncaught


def _set_launcher_variables(MPI, rank, size):
    """Under plain ``mpiexec`` nobody set torchrun's variables: set those missing, so scripts
    reading ``os.environ["LOCAL_RANK"]`` after ``init_process_group`` work either way."""
    if "LOCAL_RANK" not in os.environ or "LOCAL_WORLD_SIZE" not in os.environ:
        node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
        local = (node.Get_rank(), node.Get_size())
        node.Free()
    else:
        local = (None, None)
    for name, value in (("RANK", rank), ("WORLD_SIZE", size), ("LOCAL_RANK", local[0]),
                        ("LOCAL_WORLD_SIZE", local[1])):
        if name not in os.environ and value is not None:
            os.environ[name] = str(value)


def _check_matches(what, given, actual, mpi_rank, mpi_size):
    if given is None or given == -1 or given == actual:
        return
    raise ValueError(
        f"init_process_group(): {what} is {given}, but MPI started this process as rank "
        f"{mpi_rank} of {mpi_size}: ranks and the world size come from MPI's launcher. Start "
        f"the processes with `python -m numtorch.distributed.run --nproc-per-node N script.py` "
        f"or `mpiexec -n N python script.py`, and leave rank/world_size at their defaults.")


def _abort_on_uncaught(exc_type, exc, tb):
    """Note [A failing rank aborts the job]."""
    import traceback
    size = _world.default.size() if _world.default is not None else "?"
    # one write: mpiexec may drop output still buffered when the abort kills the job
    sys.stderr.write(f"\n[numtorch.distributed] rank {_world.rank} of {size} raised an "
                     "uncaught exception; aborting all ranks (MPI_Abort) so that the others "
                     "do not wait for it:\n"
                     + "".join(traceback.format_exception(exc_type, exc, tb)))
    sys.stderr.flush()
    sys.stdout.flush()
    _mpi().COMM_WORLD.Abort(1)


def is_initialized() -> bool:
    """Returns True if the default process group has been initialized."""
    return _world.default is not None


def destroy_process_group(group=None):
    """Destroys ``group``, or with no argument the default group and every other group
    (after which ``init_process_group`` may be called again)."""
    default = _default_group()
    if group is not None and group is not default:
        pg = _resolve(group)
        if pg is not None and pg.comm is not None:
            comm, pg.comm = pg.comm, None
            _world.thread.submit(Work("destroy_process_group", default), comm.Free).wait()
        return
    comms = [pg.comm for pg in _world.groups if pg.comm is not None]
    for pg in _world.groups:
        pg.comm = None

    def free_all():
        for comm in reversed(comms):
            comm.Free()
    _world.thread.submit(Work("destroy_process_group", default), free_all).wait()
    _world.thread.stop(default.timeout)
    if sys.excepthook is _abort_on_uncaught:
        sys.excepthook = _world.previous_excepthook
    _world.default = _world.thread = None
    _world.groups = []
    _world.rank = -1
    GroupMember.WORLD = _group_namespace.WORLD = None


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None):
    """Creates a process group of the global ``ranks`` (default: all). Every rank of the
    default group must call it, in the same order; ranks outside ``ranks`` get
    ``GroupMember.NON_GROUP_MEMBER``."""
    world = _default_group()
    if backend is not None and str(backend).lower() != "mpi":
        raise ValueError(f"new_group(): backend={backend!r} is not available; numtorch.distributed "
                         "runs on MPI only")
    n = world.size()
    if ranks is None:
        ranks = list(range(n))
    ranks = list(ranks)
    for r in ranks:
        if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < n:
            raise ValueError(f"new_group(): ranks must be distinct ints in [0, {n}), got {ranks}")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group(): ranks must be distinct ints in [0, {n}), got {ranks}")
    seconds = world.timeout if timeout is None else _seconds(timeout)

    def create():
        mpi_group = world.comm.Get_group().Incl(ranks)
        try:
            return world.comm.Create(mpi_group)   # collective over the whole world
        finally:
            mpi_group.Free()
    comm = world.call("new_group", create, f"ranks={ranks}")
    if comm == _mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, seconds)
    _world.groups.append(pg)
    return pg


def get_rank(group=None) -> int:
    """Returns the rank of this process in ``group`` (default: the world); -1 if not a member."""
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    """Returns the number of processes in ``group`` (default: the world); -1 if not a member."""
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    """Returns the backend of ``group``: always ``"mpi"``."""
    _resolve(group)
    return "mpi"


def get_process_group_ranks(group) -> list:
    """The global ranks of ``group``, in group-rank order."""
    pg = _resolve(group)
    if pg is None:
        raise ValueError("this rank is not a member of the group")
    return list(pg.ranks)
