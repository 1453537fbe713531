"""``torch.save`` / ``torch.load`` in PyTorch's own file format, so checkpoints cross between
numtorch and PyTorch in both directions.

This module owns the file format and the (safe) unpickling; it must not depend on PyTorch
being installed: the names PyTorch's pickles refer to (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.Size``, …) are written and read as plain names here.

Note [PyTorch's checkpoint format]
A file is a zip archive (entries stored, not compressed) whose entries all sit under one
folder, ``<stem of the file name>/`` (``archive/`` for file objects):

* ``data.pkl`` — the object, pickled with protocol 2. Each tensor is reduced to
  ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  OrderedDict())`` (a Parameter wraps that in ``torch._utils._rebuild_parameter(tensor,
  requires_grad, OrderedDict())``). A storage is not pickled: it is a *persistent id*, the
  tuple ``('storage', torch.FloatStorage, key, location, numel)``.
* ``data/<key>`` — the raw bytes of each storage, in the byte order of ``byteorder``.
  Views of one storage name the same key, so they still share memory after loading.
* ``byteorder`` (``little``), ``version`` (``3``), ``.format_version`` (``1``),
  ``.storage_alignment`` (``64``) and ``.data/serialization_id``.

Every entry's data starts at a multiple of 64 bytes (the local header's extra field is a
padding record with id ``FB``), which lets PyTorch memory-map the file.

Note [weights_only]
As in PyTorch ≥ 2.6, ``load`` defaults to ``weights_only=True``: the unpickler resolves
only an allowlist of names (containers, tensors, dtypes, ``torch.Size``/``device``, the
rebuild functions) plus what `add_safe_globals` adds, so a checkpoint cannot run code. The
rebuild checks that every tensor lies inside its storage before viewing it, whatever
``weights_only`` is, so a corrupt file cannot read memory it does not own.
"""
from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import random
import sys
import zipfile

import numpy as np

from ._core import dtypes as _dt
from ._core.tensor import Size, Tensor, device as _device

DEFAULT_PROTOCOL = 2
_ALIGNMENT = 64

# PyTorch's legacy storage class names, one per dtype numtorch has.
_STORAGE_DTYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
}
_STORAGE_NAMES = {np.dtype(v): k for k, v in _STORAGE_DTYPES.items()}
_DTYPE_NAMES = {"float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                "bool", "complex64", "complex128"}


class _TorchName:
    """A stand-in for an object of PyTorch's that a pickle names (``torch.FloatStorage``,
    ``torch._utils._rebuild_tensor_v2``): the pickler writes it as that global."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args):   # pickle requires a reduce function to be callable
        raise TypeError(f"{self!r} is a name written into checkpoints, not a function")


_REBUILD_TENSOR_V2 = _TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")
_TORCH_SIZE = _TorchName("torch", "Size")
_TORCH_DEVICE = _TorchName("torch", "device")
_STORAGE_TYPE = {np.dtype(v): _TorchName("torch", k) for k, v in _STORAGE_DTYPES.items()}
_TORCH_DTYPE = {name: _TorchName("torch", name) for name in _DTYPE_NAMES}


# ---------------------------------------------------------------------------------------
# Saving

def _storage_of(arr):
    """The array whose buffer ``arr`` views, and ``arr``'s offset and strides in elements of
    it; or None when ``arr`` cannot be described as a strided view of it (then it is saved
    as a storage of its own)."""
    base = arr   # the outermost array of the same dtype that ``arr`` views
    while isinstance(base.base, np.ndarray) and base.base.dtype == arr.dtype:
        base = base.base
    if base is arr:
        return (arr, 0, tuple(s // arr.itemsize for s in arr.strides)) \
            if arr.flags.c_contiguous else None
    item = arr.itemsize
    if not base.flags.c_contiguous or any(s % item or s < 0 for s in arr.strides):
        return None
    offset = arr.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if offset % item or offset < 0:
        return None
    offset, stride = offset // item, tuple(s // item for s in arr.strides)
    if arr.size and offset + sum((n - 1) * s for n, s in zip(arr.shape, stride)) >= base.size:
        return None
    return base, offset, stride


class _Pickler(pickle._Pickler):
    """Pickles numtorch objects under PyTorch's names (Note [PyTorch's checkpoint format]).

    The pure-Python pickler is used because the C one checks each global by importing it,
    and PyTorch need not be installed."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}   # id(base array) -> (key, base array)

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, _TorchName):
            return self._save_torch_name(obj)
        if isinstance(obj, _dt.dtype):
            if obj.name not in _TORCH_DTYPE:
                raise pickle.PicklingError(f"torch.save: cannot save dtype {obj}")
            return self._save_torch_name(_TORCH_DTYPE[obj.name])
        return super().save(obj, save_persistent_id)

    def _save_torch_name(self, obj):
        memo = self.memo.get(id(obj))
        if memo is not None:
            self.write(self.get(memo[0]))
            return
        self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
        self.memoize(obj)

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            base = obj.array
            entry = self.storages.get(id(base))
            if entry is None:
                entry = self.storages[id(base)] = (str(len(self.storages)), base)
            return ("storage", _STORAGE_TYPE[base.dtype], entry[0], "cpu", base.size)
        return None

    def reducer_override(self, obj):
        from .nn.parameter import Parameter
        if isinstance(obj, Parameter):
            data = Tensor.detach(obj)
            return _REBUILD_PARAMETER, (data, obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if type(obj) is Size:
            return _TORCH_SIZE, (tuple(obj),)
        if type(obj) is _device:
            return _TORCH_DEVICE, (str(obj),)
        return NotImplemented

    def _reduce_tensor(self, t):
        arr = t._data
        if not isinstance(arr, np.ndarray):
            raise pickle.PicklingError(
                f"torch.save: cannot save a tensor whose data is {type(arr).__name__} (a meta "
                f"tensor, or a tensor inside a transform); save a tensor with values")
        if arr.dtype not in _STORAGE_TYPE:
            raise pickle.PicklingError(f"torch.save: cannot save a tensor of dtype {arr.dtype}")
        where = _storage_of(arr)
        if where is None:   # not a strided view of a contiguous buffer: a storage of its own
            where = _storage_of(np.array(arr, order="C", copy=True))   # owns its memory
        base, offset, stride = where
        if arr.ndim == 0:
            stride = ()
        elif arr.size <= 1:   # NumPy's strides of size-1 dims are arbitrary: use contiguous ones
            stride = tuple(int(np.prod(arr.shape[i + 1:])) for i in range(arr.ndim))
        return _REBUILD_TENSOR_V2, (_StorageRef(base), offset, tuple(arr.shape), stride,
                                    bool(t.requires_grad), collections.OrderedDict())


class _StorageRef:
    """A storage to be written: pickled as a persistent id, never by value."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def _zip_name(f):
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return stem or "archive"
    return "archive"


def _write_record(zf, name, data):
    """Writes one stored entry whose data starts at a multiple of `_ALIGNMENT` bytes."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    offset = zf.fp.tell() + 30 + len(name.encode())
    pad = (-(offset + 4)) % _ALIGNMENT
    info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    zf.writestr(info, data)


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    r"""Saves an object to a disk file.

    The file is in PyTorch's own format (Note [PyTorch's checkpoint format]), so PyTorch's
    ``torch.load`` reads it, and numtorch's `load` reads files PyTorch saved.

    Args:
        obj: saved object
        f: a file-like object (has to implement write and flush) or a string or
           os.PathLike object containing a file name
        pickle_module: module used for pickling metadata and objects (only Python's
           ``pickle`` is supported)
        pickle_protocol: can be specified to override the default protocol

    >>> import io, numtorch as torch
    >>> buffer = io.BytesIO()
    >>> torch.save({"w": torch.arange(3.)}, buffer)
    >>> _ = buffer.seek(0)
    >>> torch.load(buffer)
    {'w': tensor([0., 1., 2.])}
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError(f"torch.save: pickle_module must be Python's pickle module (numtorch "
                         f"writes PyTorch's format with its own pickler), got {pickle_module!r}")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("torch.save: the legacy (non-zip) format is not supported in "
                                  "numtorch; use the default _use_new_zipfile_serialization=True")
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise TypeError(f"torch.save: expected f to be a file name (str or os.PathLike) or a "
                        f"file-like object with a write method, got {type(f).__name__}")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    prefix = _zip_name(f) + "/"
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(f, "wb")) if isinstance(f, (str, os.PathLike)) else f
        zf = stack.enter_context(zipfile.ZipFile(out, "w", zipfile.ZIP_STORED))
        _write_record(zf, prefix + "data.pkl", buf.getvalue())
        _write_record(zf, prefix + ".format_version", b"1")
        _write_record(zf, prefix + ".storage_alignment", str(_ALIGNMENT).encode())
        if not _disable_byteorder_record:
            _write_record(zf, prefix + "byteorder", sys.byteorder.encode())
        for key, base in pickler.storages.values():
            _write_record(zf, f"{prefix}data/{key}", np.ascontiguousarray(base).tobytes())
        _write_record(zf, prefix + "version", b"3\n")
        _write_record(zf, prefix + ".data/serialization_id",
                      str(random.getrandbits(128)).zfill(40).encode())


from ._serialization_load import (load, add_safe_globals, get_safe_globals,  # noqa: E402,F401
                                  clear_safe_globals, safe_globals)
