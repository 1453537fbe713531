"""`DataLoader`: combines a dataset and a sampler, and provides an iterable over the given
dataset, in the main process or in worker processes.

This module owns argument checking, choosing the sampler and collate function, and the
two iterators (single-process, and multi-process with in-order reassembly). What runs
inside a worker is in _worker.py (Note [Worker protocol]). Semantics, argument errors and
``len`` follow ``torch.utils.data.dataloader`` of PyTorch 2.13; the shuffle order differs
(Note [Shuffle order] in sampler.py).
"""
from __future__ import annotations

import itertools
import queue
import warnings

from . import _worker
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: yields None forever (the dataset decides when to
    stop)."""

    def __iter__(self):
        while True:
            yield None


def _draw_base_seed(generator):
    from ..._ops.creation import randint
    return int(randint(0, 2 ** 63 - 1, (), generator=generator).item())


class DataLoader:
    r"""Data loader combines a dataset and a sampler, and provides an iterable over the
    given dataset.

    The :class:`~numtorch.utils.data.DataLoader` supports both map-style and
    iterable-style datasets with single- or multi-process loading, customizing loading
    order and optional automatic batching (collation).

    Args:
        dataset (Dataset): dataset from which to load the data.
        batch_size (int, optional): how many samples per batch to load (default: ``1``).
        shuffle (bool, optional): set to ``True`` to have the data reshuffled at every
            epoch (default: ``False``).
        sampler (Sampler or Iterable, optional): defines the strategy to draw samples from
            the dataset. Can be any ``Iterable`` with ``__len__`` implemented. If
            specified, :attr:`shuffle` must not be specified.
        batch_sampler (Sampler or Iterable, optional): like :attr:`sampler`, but returns
            a batch of indices at a time. Mutually exclusive with :attr:`batch_size`,
            :attr:`shuffle`, :attr:`sampler`, and :attr:`drop_last`.
        num_workers (int, optional): how many subprocesses to use for data loading. ``0``
            means that the data will be loaded in the main process. (default: ``0``)
        collate_fn (Callable, optional): merges a list of samples to form a mini-batch of
            Tensor(s). Used when using batched loading from a map-style dataset.
        pin_memory (bool, optional): accepted for compatibility; numtorch tensors live in
            host memory already, so it changes nothing (PyTorch warns the same way when
            no accelerator is present).
        drop_last (bool, optional): set to ``True`` to drop the last incomplete batch, if
            the dataset size is not divisible by the batch size. (default: ``False``)
        timeout (numeric, optional): if positive, the timeout value for collecting a batch
            from workers. Should always be non-negative. (default: ``0``)
        worker_init_fn (Callable, optional): If not ``None``, this will be called on each
            worker subprocess with the worker id (an int in ``[0, num_workers - 1]``) as
            input, after seeding and before data loading. (default: ``None``)
        multiprocessing_context (str or multiprocessing.context.BaseContext, optional):
            If ``None``, the default multiprocessing context of your operating system
            will be used. (default: ``None``)
        generator (Generator, optional): If not ``None``, this RNG will be used by
            RandomSampler to generate random indexes and multiprocessing to generate
            ``base_seed`` for workers. (default: ``None``)
        prefetch_factor (int, optional, keyword-only arg): Number of batches loaded in
            advance by each worker. (default value depends on the set value for
            num_workers. If value of num_workers=0 default is ``None``. Otherwise, if value
            of ``num_workers > 0`` default is ``2``).
        persistent_workers (bool, optional): If ``True``, the data loader will not shut
            down the worker processes after a dataset has been consumed once.
            (default: ``False``)
        pin_memory_device (str, optional): accepted and ignored, as :attr:`pin_memory`.
        in_order (bool, optional): If ``False``, the data loader will not enforce that
            batches are returned in a first-in, first-out order. (default: ``True``)

    >>> import numtorch as torch
    >>> from numtorch.utils.data import TensorDataset
    >>> loader = DataLoader(TensorDataset(torch.arange(5.)), batch_size=2)
    >>> [x for (x,) in loader]
    [tensor([0., 1.]), tensor([2., 3.]), tensor([4.])]
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             f"disable multiprocessing. (got num_workers={num_workers!r})")
        if timeout < 0:
            raise ValueError(f"timeout option should be non-negative (got timeout={timeout!r})")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError(f"prefetch_factor option should be non-negative (got "
                             f"prefetch_factor={prefetch_factor!r})")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._initialized = True

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == "iterable":
            length = len(self.dataset)   # may raise TypeError, as in PyTorch
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._is_iterable = loader._dataset_kind == "iterable"
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_base_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._batch_size = loader.batch_size
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)   # may raise StopIteration

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise ValueError("timeout option should be 0 for single-process data loading "
                             f"(num_workers=0), got timeout={self._timeout!r}")
        self._fetcher = _worker._make_fetcher(self._is_iterable, self._dataset,
                                              self._auto_collation, self._collate_fn,
                                              self._drop_last)

    def _next_data(self):
        index = self._next_index()   # may raise StopIteration
        return self._fetcher.fetch(index)   # may raise StopIteration (iterable datasets)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Worker processes fetch batches; this iterator hands out tasks and yields results in
    task order (Note [Worker protocol]). At most ``prefetch_factor * num_workers`` tasks are
    outstanding at any time."""

    _POLL_S = 5.0   # how often a blocked get checks that the workers are still alive

    def __init__(self, loader):
        import multiprocessing as mp
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = mp.get_context()
        elif isinstance(ctx, str):
            ctx = mp.get_context(ctx)
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(target=_worker._worker_loop,
                            args=(self._is_iterable, self._dataset, index_queue,
                                  self._worker_result_queue, self._workers_done_event,
                                  self._auto_collation, self._collate_fn, self._drop_last,
                                  self._base_seed, loader.worker_init_fn, i, self._num_workers,
                                  self._batch_size))
            w.daemon = True
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0   # next task id to send
        self._rcvd_idx = 0   # next task id to yield
        self._task_info = {}   # task id -> (worker id,) while outstanding, + (data,) when back
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: restart every worker's iterable and wait for each to confirm
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            resume_left = self._num_workers
            while resume_left > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _worker._ResumeIteration):
                    resume_left -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout):
        try:
            return True, self._worker_result_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [w for w in self._workers if not w.is_alive()]
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if not success:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            success, data = self._try_get_data(self._POLL_S)
            if success:
                return data

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):   # the next worker still producing
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return   # every worker is done: nothing left to ask for
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self):
        while True:
            # skip the tasks of workers whose iterable has ended
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                if info is not None:   # sent to a worker that has ended: it never answers
                    self._tasks_outstanding -= 1
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:   # it came back earlier
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if self._in_order:
                    self._task_info[idx] += (data,)   # keep until its turn
                    continue
                del self._task_info[idx]
                return self._process_data(data)
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for q in self._index_queues:
                q.put(None)
            for w in self._workers:
                w.join(timeout=5.0)
                if w.is_alive():
                    w.terminate()
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        except Exception:   # interpreter shutdown: the queues may already be gone
            pass

    def __del__(self):
        self._shutdown_workers()
