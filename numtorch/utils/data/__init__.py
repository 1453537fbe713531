"""``torch.utils.data``: datasets, samplers and the DataLoader.

This package only re-exports; dataset.py owns what a dataset is, sampler.py the order of
indices, _collate.py how samples become batches, dataloader.py and _worker.py the
iteration (in the main process or in worker processes).
"""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset,  # noqa: F401
                      ConcatDataset, ChainDataset, Subset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,  # noqa: F401
                      WeightedRandomSampler, BatchSampler)
from ._collate import default_collate, default_convert  # noqa: F401
from ._worker import get_worker_info  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .distributed import DistributedSampler  # noqa: F401  (imports no MPI)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "default_collate", "default_convert", "get_worker_info", "DataLoader",
           "DistributedSampler"]
