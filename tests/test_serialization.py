"""torch.save / torch.load in PyTorch's checkpoint format: round trips in numtorch, and
checkpoints crossing to and from PyTorch (the oracle) with values, dtypes, views sharing
storage, and a model's outputs after load_state_dict all equal."""
import collections
import io
import pickle
import zipfile

import numpy as np
import pytest

import numtorch
from numtorch import serialization as S


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    numtorch.save(obj, buf)
    buf.seek(0)
    return numtorch.load(buf, **load_kwargs)


def test_roundtrip_values_types_and_shared_views(tmp_path):
    base = numtorch.arange(12.).reshape(3, 4)
    obj = {"w": base, "row": base[1], "col": base[:, 2], "t": base.t(), "flip": numtorch.flip(base, [0]),
           "i": numtorch.tensor([1, 2], dtype=numtorch.int32), "b": numtorch.tensor([True, False]),
           "c": numtorch.tensor([1 + 2j]), "h": numtorch.ones(2, dtype=numtorch.float16),
           "s": numtorch.tensor(2.5), "empty": numtorch.empty(0, 3),
           "p": numtorch.nn.Parameter(numtorch.ones(2)), "size": numtorch.Size([2, 3]),
           "dtype": numtorch.float64, "device": numtorch.device("cpu"),
           "misc": [1, 2.5, "x", b"raw", (None, True), {3, 4}]}
    path = tmp_path / "ckpt.pt"
    numtorch.save(obj, path)
    got = numtorch.load(path)
    for k in ("w", "row", "col", "t", "flip", "i", "b", "c", "h", "s", "empty"):
        assert got[k].dtype == obj[k].dtype and got[k].shape == obj[k].shape, k
        np.testing.assert_array_equal(got[k].numpy(), obj[k].numpy())
    assert isinstance(got["p"], numtorch.nn.Parameter) and got["p"].requires_grad
    assert got["size"] == numtorch.Size([2, 3]) and isinstance(got["size"], numtorch.Size)
    assert got["dtype"] is numtorch.float64 and got["device"] == numtorch.device("cpu")
    assert got["misc"] == obj["misc"]
    # views of one storage still share it: a write through one shows through the others
    got["row"][0] = -1.0
    assert got["w"][1, 0].item() == -1.0 and got["t"][0, 1].item() == -1.0
    assert got["col"][1].item() == 6.0
    # one storage record for all the views of `base` (flip is saved as a copy)
    names = zipfile.ZipFile(path).namelist()
    # base; i, b, c, h, s, empty; p; flip
    assert sum(n.startswith("ckpt/data/") for n in names) == 1 + 6 + 1 + 1


def test_archive_layout_is_pytorchs():
    buf = io.BytesIO()
    numtorch.save({"x": numtorch.ones(3)}, buf)
    zf = zipfile.ZipFile(buf)
    assert zf.namelist() == ["archive/data.pkl", "archive/.format_version",
                             "archive/.storage_alignment", "archive/byteorder", "archive/data/0",
                             "archive/version", "archive/.data/serialization_id"]
    raw = buf.getvalue()
    for info in zf.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        h = info.header_offset
        start = h + 30 + int.from_bytes(raw[h + 26:h + 28], "little") + int.from_bytes(raw[h + 28:h + 30], "little")
        assert start % 64 == 0, info.filename
    assert zf.read("archive/byteorder") == b"little" and zf.read("archive/version") == b"3\n"
    assert zf.read("archive/data/0") == np.ones(3, np.float32).tobytes()


def _torch_model(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def _numtorch_model():
    return numtorch.nn.Sequential(numtorch.nn.Linear(4, 8), numtorch.nn.ReLU(),
                                  numtorch.nn.Linear(8, 2))


def test_pytorch_state_dict_loads_in_numtorch(tmp_path):
    torch = pytest.importorskip("torch")
    model = _torch_model(torch)
    path = tmp_path / "torch_model.pt"
    torch.save(model.state_dict(), path)
    sd = numtorch.load(path)   # weights_only=True by default
    assert list(sd) == list(model.state_dict()) and sd._metadata == model.state_dict()._metadata
    ours = _numtorch_model()
    ours.load_state_dict(sd)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(numtorch.tensor(x)).detach().numpy(),
                               model(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_numtorch_state_dict_loads_in_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    ours = _numtorch_model()
    path = tmp_path / "numtorch_model.pt"
    numtorch.save(ours.state_dict(), path)
    sd = torch.load(path, weights_only=True)   # PyTorch's own safe unpickler accepts the file
    model = _torch_model(torch)
    model.load_state_dict(sd)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(model(torch.tensor(x)).detach().numpy(),
                               ours(numtorch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_checkpoints_cross_both_ways_with_views_dtypes_and_optimizer_state():
    torch = pytest.importorskip("torch")
    x = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    theirs = {"x": x, "slice": x[1:3, ::2], "t": x.t(), "ints": torch.arange(5), "bools": torch.tensor([True]),
              "half": torch.ones(3, dtype=torch.float16), "cplx": torch.tensor([1 + 1j]),
              "param": torch.nn.Parameter(torch.ones(2)), "size": torch.Size([4]),
              "dtype": torch.int16, "epoch": 7, "opt": {"state": {0: {"step": torch.tensor(3.0)}},
                                                        "param_groups": [{"lr": 0.1, "params": [0]}]}}
    buf = io.BytesIO()
    torch.save(theirs, buf)
    buf.seek(0)
    ours = numtorch.load(buf)
    for k in ("x", "slice", "t", "ints", "bools", "half", "cplx"):
        assert str(ours[k].dtype) == str(theirs[k].dtype), k
        np.testing.assert_array_equal(ours[k].numpy(), theirs[k].numpy())
    ours["slice"][0, 0] = 99.0
    assert ours["x"][1, 0].item() == 99.0   # views share storage after loading
    assert isinstance(ours["param"], numtorch.nn.Parameter)
    assert ours["size"] == numtorch.Size([4]) and ours["dtype"] is numtorch.int16
    assert ours["epoch"] == 7 and ours["opt"]["state"][0]["step"].item() == 3.0
    # and back to PyTorch
    buf = io.BytesIO()
    numtorch.save(ours, buf)
    buf.seek(0)
    again = torch.load(buf)
    for k in ("x", "slice", "t", "ints", "bools", "half", "cplx"):
        assert again[k].dtype == theirs[k].dtype and again[k].stride() == theirs[k].stride(), k
        np.testing.assert_array_equal(again[k].numpy(), ours[k].numpy())
    again["slice"][0, 1] = -5.0
    assert again["x"][1, 2].item() == -5.0   # PyTorch sees the views sharing storage too
    assert again["x"].untyped_storage().data_ptr() == again["t"].untyped_storage().data_ptr()
    assert isinstance(again["param"], torch.nn.Parameter) and again["size"] == torch.Size([4])
    assert again["dtype"] is torch.int16 and again["opt"]["param_groups"][0]["lr"] == 0.1


class _Custom:
    def __init__(self, v):
        self.v = v


def test_weights_only_refuses_other_globals_unless_allowlisted():
    buf = io.BytesIO()
    numtorch.save({"obj": _Custom(3)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL .*_Custom.*add_safe_globals"):
        numtorch.load(buf)
    buf.seek(0)
    assert numtorch.load(buf, weights_only=False)["obj"].v == 3
    buf.seek(0)
    with numtorch.serialization.safe_globals([_Custom]):
        assert numtorch.load(buf)["obj"].v == 3
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        numtorch.load(buf)   # the context manager's allowlist is gone again


class _Evil:
    def __reduce__(self):
        import os
        return os.system, ("echo pwned",)


def test_weights_only_does_not_run_code():
    buf = io.BytesIO()
    numtorch.save([_Evil()], buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system"):
        numtorch.load(buf)


class _OutOfBounds:
    """Pickles as a tensor that claims more elements than its storage holds."""

    def __reduce__(self):
        return S._REBUILD_TENSOR_V2, (S._StorageRef(np.zeros(4, np.float32)), 2, (8,), (1,), False,
                                      collections.OrderedDict())


def test_load_refuses_tensors_outside_their_storage():
    buf = io.BytesIO()
    numtorch.save(_OutOfBounds(), buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="does not fit its storage of 4 elements"):
        numtorch.load(buf, weights_only=False)


class _CudaPickler(S._Pickler):
    def persistent_id(self, obj):
        pid = super().persistent_id(obj)
        return pid if pid is None else pid[:3] + ("cuda:0",) + pid[4:]


def _cuda_checkpoint(monkeypatch):
    monkeypatch.setattr(S, "_Pickler", _CudaPickler)
    buf = io.BytesIO()
    numtorch.save({"w": numtorch.arange(3.)}, buf)
    monkeypatch.undo()
    return buf


@pytest.mark.parametrize("map_location", ["cpu", numtorch.device("cpu"), {"cuda:0": "cpu"},
                                          lambda storage, loc: storage])
def test_map_location_brings_cuda_storages_to_cpu(monkeypatch, map_location):
    buf = _cuda_checkpoint(monkeypatch)
    with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
        buf.seek(0)
        numtorch.load(buf)
    buf.seek(0)
    np.testing.assert_array_equal(numtorch.load(buf, map_location=map_location)["w"].numpy(), [0, 1, 2])


def test_argument_errors_name_the_argument(tmp_path):
    with pytest.raises(TypeError, match="expected f to be a file name"):
        numtorch.save({}, 123)
    with pytest.raises(TypeError, match="map_location should be"):
        numtorch.load(io.BytesIO(), map_location=5)
    not_zip = tmp_path / "legacy.pt"
    not_zip.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(RuntimeError, match="not a zip checkpoint"):
        numtorch.load(not_zip)
    with pytest.raises(pickle.PicklingError, match="meta tensor"):
        numtorch.save(numtorch.ones(2, device="meta"), io.BytesIO())


def test_tensors_over_fortran_ordered_or_flipped_memory_save_as_copies():
    f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    obj = {"col": numtorch.from_numpy(f[:, 1]), "whole": numtorch.from_numpy(f),
           "flip": numtorch.from_numpy(f[::-1, ::-2])}
    got = _roundtrip(obj)
    for k, v in obj.items():
        np.testing.assert_array_equal(got[k].numpy(), v.numpy())


def test_a_whole_pytorch_module_loads_as_numtorchs_namesake_with_weights_only_false():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        numtorch.load(buf)   # a module is code: refused by default, as in PyTorch
    buf.seek(0)
    ours = numtorch.load(buf, weights_only=False)
    assert isinstance(ours, numtorch.nn.Sequential) and isinstance(ours[0], numtorch.nn.Linear)
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(numtorch.tensor(x)).detach().numpy(),
                               model(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
