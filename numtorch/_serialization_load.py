"""``torch.load``: reads PyTorch's checkpoint format (Note [PyTorch's checkpoint format] in
serialization.py) with a safe unpickler by default (Note [weights_only]).

This module owns reading and the allowlist of globals; writing is serialization.py's.
"""
from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import zipfile

import numpy as np

from ._core import dtypes as _dt
from ._core.tensor import Size, Tensor, device as _device

_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only "
    "if you got the file from a trusted source.")

_user_safe_globals = {}   # "module.name" -> object, from add_safe_globals


def add_safe_globals(safe_globals):
    """Marks the given globals as safe for ``weights_only`` load. For example, functions
    added to this list can be called during unpickling, classes could be instantiated and
    have state set.

    Each item in the list can either be a function/class or a tuple of the form
    (function/class, string) where string is the full path of the function/class.
    """
    if not isinstance(safe_globals, (list, tuple, set)):
        raise TypeError(f"add_safe_globals: expected a list of functions/classes, got "
                        f"{type(safe_globals).__name__}")
    for g in safe_globals:
        if isinstance(g, tuple):
            obj, name = g
        else:
            obj, name = g, f"{g.__module__}.{g.__qualname__}"
        _user_safe_globals[name] = obj


def get_safe_globals():
    """Returns the list of user-added globals that are safe for ``weights_only`` load."""
    return list(_user_safe_globals.values())


def clear_safe_globals():
    """Clears the list of globals that are safe for ``weights_only`` load."""
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(globals_list):
    """Context-manager that adds certain globals as safe for ``weights_only`` load."""
    saved = dict(_user_safe_globals)
    add_safe_globals(globals_list)
    try:
        yield
    finally:
        _user_safe_globals.clear()
        _user_safe_globals.update(saved)


# ---------------------------------------------------------------------------------------
# What the names in a PyTorch pickle become in numtorch

class _StorageType:
    """What ``torch.FloatStorage`` (and the other legacy storage classes) resolve to."""

    def __init__(self, name, np_dtype):
        self.name, self.dtype = name, np.dtype(np_dtype)


class _LoadedStorage:
    """One storage of a checkpoint: a flat writable array, shared by every tensor that
    views it, and one version counter for all of them."""

    def __init__(self, array):
        from ._core.tensor import VersionCounter
        self.array = array
        self.version_counter = VersionCounter()

    # map_location callables receive a storage and may call these (PyTorch's API)
    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        from ._core.tensor import CudaNotAvailableError
        raise CudaNotAvailableError("torch.load: map_location moved a storage to CUDA, which "
                                    "is not available in numtorch (it runs on the CPU only)")


def _check_int_tuple(name, value):
    if not isinstance(value, (tuple, list, Size)) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise pickle.UnpicklingError(f"torch.load: a tensor's {name} must be a tuple of "
                                     f"non-negative ints, got {value!r}")
    return tuple(value)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    """PyTorch's ``torch._utils._rebuild_tensor_v2``: a strided view of a storage."""
    from ._core.tensor import wrap
    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError("torch.load: _rebuild_tensor_v2 expected a storage as its "
                                     f"first argument, got {type(storage).__name__}")
    size, stride = _check_int_tuple("size", size), _check_int_tuple("stride", stride)
    if len(size) != len(stride) or not isinstance(storage_offset, int) or storage_offset < 0:
        raise pickle.UnpicklingError(f"torch.load: inconsistent tensor geometry: size {size}, "
                                     f"stride {stride}, storage_offset {storage_offset!r}")
    base = storage.array
    numel = int(np.prod(size)) if size else 1
    if numel > 0:
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= base.size:   # Note [weights_only]: never view memory outside the storage
            raise pickle.UnpicklingError(
                f"torch.load: a tensor of size {size}, stride {stride} and offset "
                f"{storage_offset} does not fit its storage of {base.size} elements")
        # a view whose .base is the storage array, so saving it again finds the storage
        arr = np.ndarray(size, base.dtype, buffer=base, offset=storage_offset * base.itemsize,
                         strides=[s * base.itemsize for s in stride])
    else:
        arr = np.empty(size, base.dtype)
    t = wrap(arr)
    t._version_counter = storage.version_counter   # views of one storage share it
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    """PyTorch's ``torch._utils._rebuild_parameter`` (and ``_with_state``)."""
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"torch.load: _rebuild_parameter expected a tensor, got "
                                     f"{type(data).__name__}")
    p = Parameter(data, bool(requires_grad))
    for k, v in (state or {}).items() if isinstance(state, dict) else ():
        setattr(p, k, v)
    return p


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _rebuild_parameter(data, requires_grad, backward_hooks, state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """PyTorch's ``torch._tensor._rebuild_from_type_v2``: a Tensor, Parameter or subclass."""
    from .nn.parameter import Parameter
    if func not in (_rebuild_tensor_v2, _rebuild_parameter, _rebuild_parameter_with_state):
        raise pickle.UnpicklingError(f"torch.load: unsupported tensor rebuild function {func!r}")
    ret = func(*args)
    if new_type is Parameter and not isinstance(ret, Parameter):
        ret = Parameter(ret, ret.requires_grad)
    if isinstance(state, dict):
        for k, v in state.items():
            setattr(ret, k, v)
    return ret


def _torch_device(*args):
    """``torch.device`` as a checkpoint names it: CPU devices only (the CUDA error is
    raised when a tensor would be placed there, not when a device object is read)."""
    return _device(*args)


def _encode(obj, encoding="latin1"):
    # protocol 2 pickles bytes as _codecs.encode(str, 'latin1')
    import codecs
    return codecs.encode(obj, encoding)


def _allowed_globals():
    from .nn.parameter import Parameter
    g = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _torch_device,
        "_codecs.encode": _encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    from .serialization import _STORAGE_DTYPES, _DTYPE_NAMES
    for name, np_dtype in _STORAGE_DTYPES.items():
        g[f"torch.{name}"] = _StorageType(name, np_dtype)
    for name in _DTYPE_NAMES:
        g[f"torch.{name}"] = getattr(_dt, "bool_" if name == "bool" else name)
    return g


_ALLOWED = None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, zf, prefix, map_location, weights_only):
        super().__init__(file, encoding="utf-8")
        self.zf, self.prefix, self.map_location = zf, prefix, map_location
        self.weights_only = weights_only
        self.storages = {}

    def find_class(self, module, name):
        global _ALLOWED
        if _ALLOWED is None:
            _ALLOWED = _allowed_globals()
        if module == "__builtin__":   # Python 2 names, which protocol 2 writes (fix_imports)
            module = "builtins"
        full = f"{module}.{name}"
        if full in _ALLOWED:
            return _ALLOWED[full]
        if full in _user_safe_globals:
            return _user_safe_globals[full]
        if full.startswith("torch.") and full[6:] in ("bfloat16", "BFloat16Storage", "uint16",
                                                      "uint32", "uint64", "float8_e4m3fn",
                                                      "float8_e5m2"):
            raise pickle.UnpicklingError(f"torch.load: the checkpoint uses {full}, a dtype that "
                                         f"numtorch does not have")
        if self.weights_only:
            raise pickle.UnpicklingError(
                f"Weights only load failed. {_UNSAFE_MESSAGE}\n\nUnsupported global: GLOBAL "
                f"{full} was not an allowed global by default. Please use "
                f"`torch.serialization.add_safe_globals([{name}])` or the "
                f"`torch.serialization.safe_globals([{name}])` context manager to allowlist "
                f"this global if you trust this class/function.")
        if module == "torch" or module.startswith("torch."):
            # a whole module or another PyTorch object: numtorch's namesake, if it has one
            import importlib
            try:
                return getattr(importlib.import_module("num" + module), name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(f"torch.load: the checkpoint refers to {full}, "
                                             f"which numtorch does not have") from None
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"torch.load: unsupported persistent id {pid!r}")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"torch.load: unsupported storage type {storage_type!r}")
        if key in self.storages:
            return self.storages[key]
        dtype = storage_type.dtype.newbyteorder("<" if self.byteorder == "little" else ">")
        try:
            arr = _read_record(self.zf, f"{self.prefix}data/{key}", dtype)
        except KeyError:
            raise pickle.UnpicklingError(f"torch.load: the archive has no record data/{key}") from None
        if not dtype.isnative:
            arr = arr.astype(dtype.newbyteorder("="))
        if not isinstance(numel, int) or arr.size != numel:
            raise pickle.UnpicklingError(f"torch.load: storage {key} has {arr.size} elements, "
                                         f"the pickle says {numel!r}")
        storage = _LoadedStorage(arr)
        storage = _apply_map_location(storage, location, self.map_location)
        self.storages[key] = storage
        return storage


def _read_record(zf, name, dtype):
    """A record's bytes as a new, writable, owning 1-D array of ``dtype``.

    Stored records (all of PyTorch's) are read straight from the file: ``ZipFile.read``
    would also verify the CRC-32, which costs more than the read itself (several times
    the time of PyTorch's load for large checkpoints), and PyTorch's reader does not check
    it either. Anything else goes through zipfile."""
    info = zf.getinfo(name)
    if info.file_size % dtype.itemsize:
        raise pickle.UnpicklingError(f"torch.load: record {name} has {info.file_size} bytes, "
                                     f"not a whole number of {dtype} elements")
    if info.compress_type != zipfile.ZIP_STORED:
        return np.frombuffer(zf.read(name), dtype).copy()
    fp = zf.fp
    fp.seek(info.header_offset)
    header = fp.read(30)
    if header[:4] != b"PK\x03\x04":
        raise pickle.UnpicklingError(f"torch.load: bad local header for record {name}")
    skip = int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30], "little")
    fp.seek(info.header_offset + 30 + skip)
    arr = np.empty(info.file_size // dtype.itemsize, dtype)   # the read fills it
    if fp.readinto(memoryview(arr).cast("B")) != info.file_size:
        raise pickle.UnpicklingError(f"torch.load: record {name} is truncated")
    return arr


def _apply_map_location(storage, location, map_location):
    if isinstance(map_location, dict):
        location = map_location.get(location, location)
        map_location = None
    if callable(map_location) and not isinstance(map_location, (str, _device)):
        result = map_location(storage, location)
        if result is not None:
            if not isinstance(result, _LoadedStorage):
                raise TypeError(f"torch.load: map_location returned {type(result).__name__}; "
                                f"expected the storage it was given (or None)")
            return result
        map_location = None
    if map_location is not None:
        location = str(_device(map_location))
    kind = str(location).split(":")[0]
    if kind == "cpu":
        return storage
    if kind in ("cuda", "mps"):
        from ._core.tensor import CudaNotAvailableError
        raise CudaNotAvailableError(
            f"Attempting to deserialize object on a {kind.upper()} device but numtorch runs on "
            f"the CPU only. If you are running on a CPU-only machine, please use torch.load "
            f"with map_location=torch.device('cpu') to map your storages to the CPU.")
    raise RuntimeError(f"torch.load: don't know how to restore data location {location!r}")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    r"""Loads an object saved with ``torch.save`` (PyTorch's or numtorch's) from a file.

    By default ``weights_only=True``: only tensors, primitive types, dictionaries and the
    types added by ``torch.serialization.add_safe_globals`` are loaded (Note
    [weights_only] in serialization.py). Storages saved on CUDA need a ``map_location``.

    Args:
        f: a file-like object (has to implement :meth:`read`, :meth:`readline`,
            :meth:`tell`, and :meth:`seek`), or a string or os.PathLike object containing
            a file name
        map_location: a function, :class:`torch.device`, string or a dict specifying how
            to remap storage locations
        pickle_module: module used for unpickling metadata and objects (only Python's
            ``pickle``; passing it makes ``weights_only`` default to ``False``, as PyTorch)
        weights_only: Indicates whether unpickler should be restricted to loading only
            tensors, primitive types, dictionaries and any types added via
            :func:`torch.serialization.add_safe_globals`.
        mmap: accepted; the storages are read into memory either way.
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError(f"torch.load: pickle_module must be Python's pickle module, got "
                         f"{pickle_module!r}")
    if weights_only is None:
        weights_only = pickle_module is None
        env = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower()
        if env in ("1", "y", "yes", "true"):
            weights_only = False
    if os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in ("1", "y", "yes", "true"):
        weights_only = True
    if map_location is not None and not (isinstance(map_location, (str, _device, dict))
                                         or callable(map_location)):
        raise TypeError(f"torch.load: map_location should be a string, torch.device, dict or "
                        f"callable, got {type(map_location).__name__}")
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "read"):
        raise TypeError(f"torch.load: expected f to be a file name (str or os.PathLike) or a "
                        f"file-like object with read/seek, got {type(f).__name__}")
    with contextlib.ExitStack() as stack:
        src = stack.enter_context(open(f, "rb")) if isinstance(f, (str, os.PathLike)) else f
        if not zipfile.is_zipfile(src):
            raise RuntimeError("torch.load: this is not a zip checkpoint; numtorch reads the "
                               "format PyTorch has written since 1.6, not the legacy one (load "
                               "it in PyTorch and save it again)")
        src.seek(0)
        zf = stack.enter_context(zipfile.ZipFile(src))
        names = zf.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pkl:
            hint = " (a TorchScript archive?)" if any(n.endswith("constants.pkl") for n in names) else ""
            raise RuntimeError(f"torch.load: the archive has no data.pkl record{hint}")
        prefix = pkl[0][: -len("data.pkl")]
        byteorder = "little"
        if prefix + "byteorder" in names:
            byteorder = zf.read(prefix + "byteorder").decode()
        unpickler = _Unpickler(io.BytesIO(zf.read(pkl[0])), zf, prefix, map_location,
                               weights_only)
        unpickler.byteorder = byteorder
        return unpickler.load()
