"""What runs inside a DataLoader worker process: `get_worker_info`, the fetchers that turn
indices into batches, and the worker loop.

This module owns the worker's side of the protocol with `_MultiProcessingDataLoaderIter`
(dataloader.py); it must not decide order or batching (the main process sends each task).

Note [Worker protocol]
The main process sends ``(task_id, indices)`` on a worker's own index queue: for a
map-style dataset ``indices`` is the batch's index list (or one index when batching is
off); for an iterable dataset it is None and means "your next batch". The worker answers
``(task_id, data)`` on the one shared data queue, where ``data`` may be an
`ExceptionWrapper` (re-raised in the main process) or `_IterableDatasetStopIteration`
(this worker's copy of the iterable is exhausted). `_ResumeIteration` restarts the
iterable for the next epoch of persistent workers; None asks the worker to exit.
"""
from __future__ import annotations

import os
import queue
import random
import sys
import traceback

import numpy as np

from ._collate import default_collate


_STATUS_CHECK_INTERVAL = 0.5   # seconds between a waiting worker's checks of its parent


class WorkerInfo:
    """What `get_worker_info` returns in a worker process: ``id``, ``num_workers``,
    ``seed`` and ``dataset`` (this worker's copy)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_info = None


def get_worker_info():
    r"""Returns the information about the current
    :class:`~numtorch.utils.data.DataLoader` iterator worker process.

    When called in a worker, this returns an object guaranteed to have the following
    attributes:

    * :attr:`id`: the current worker id.
    * :attr:`num_workers`: the total number of workers.
    * :attr:`seed`: the random seed set for the current worker. This value is determined
      by main process RNG and the worker id.
    * :attr:`dataset`: the copy of the dataset object in **this** process.

    When called in the main process, this returns ``None``.
    """
    return _worker_info


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class ExceptionWrapper:
    """Wraps an exception plus traceback to communicate across processes."""

    def __init__(self, exc_info, where="in background"):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)   # KeyError prints repr(message): keep it readable
        try:
            exception = self.exc_type(msg)
        except Exception:   # an exception type whose constructor needs more than a message
            raise RuntimeError(msg) from None
        raise exception


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    pass


def _tensor_dataset_batch(dataset, indices):
    """Note [TensorDataset batches]: ``default_collate`` of the samples of a TensorDataset
    (possibly under Subsets) is, per tensor, the rows at ``indices`` stacked, which one
    gather computes: ``[t[indices] for t in tensors]``, the same values (and a list, as
    default_collate makes of tuples) without a Tensor per sample. Returns None for any
    other dataset."""
    from .dataset import Subset, TensorDataset
    while type(dataset) is Subset:
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:
        return None
    from ..._ops.creation import tensor
    index = tensor(indices)
    return [t[index] for t in dataset.tensors]


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if self.collate_fn is default_collate:
                batch = _tensor_dataset_batch(self.dataset, possibly_batched_index)
                if batch is not None:
                    return batch
            getitems = getattr(self.dataset, "__getitems__", None)
            if callable(getitems):
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _make_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if is_iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_worker(base_seed, worker_id):
    """Seeds Python's `random`, numtorch's default generator and NumPy's global state, as
    PyTorch's workers do, so workers draw different numbers and runs are reproducible."""
    from ... import manual_seed
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32])
                   .generate_state(4))
    return seed


def _worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 batch_size):
    global _worker_info
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _make_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(sys.exc_info(),
                                              where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        parent = os.getppid()
        while True:
            # Poll, so that a worker whose main process died or gave up (the done event is
            # set but the exit request was lost with its queue) still exits.
            try:
                r = index_queue.get(timeout=_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set() or os.getppid() != parent:
                    break
                continue
            if r is None:          # the main process asks us to exit
                break
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _make_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    batch_index = index if index is not None else [None] * (batch_size or 1)
                    if is_iterable and not auto_collation:
                        batch_index = None
                    data = fetcher.fetch(batch_index)
                except StopIteration:
                    if is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(sys.exc_info(),
                                                where=f"in DataLoader worker process {worker_id}")
                except Exception:
                    data = ExceptionWrapper(sys.exc_info(),
                                            where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
