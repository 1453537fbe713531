"""The kernels' own OpenMP runtime (Note [The kernels' own OpenMP runtime], openmp.py).

With PyTorch imported first, before this runtime existed, the kernels ran on torch's
libgomp, whose workers spin after every parallel region: the subprocess tests measure the
CPU the process burns while it sleeps right after a kernel call, which is what that
spinning costs, and which runtimes the process has mapped.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from numtorch._inductor import build, openmp

needs_gcc = pytest.mark.skipif(
    build.compiler() is None or openmp._private_copy(build.compiler(), build.cache_dir()) is None,
    reason="no GCC with a libgomp to copy")

SCRIPT = r"""
import json, os, sys, time
if sys.argv[1] == "torch_first":
    import torch as real_torch
import numtorch
from numtorch._inductor import openmp
x = numtorch.randn(256, 40, 40)
# batched small products run in OpenMP regions (gemm.py); other kernels run on the pool
f = numtorch.compile(lambda x: x @ x, backend="inductor")
f(x)
if sys.argv[1] == "torch_after":
    import torch as real_torch
    real_torch.ones(1 << 20).add_(1)     # torch's own runtime runs a parallel region
idle = []
for _ in range(7):
    f(x)
    c0 = time.process_time()
    time.sleep(0.05)
    idle.append(time.process_time() - c0)
print(json.dumps({"idle_ms": sorted(idle)[3] * 1e3, "maps": openmp.loaded_runtimes(),
                  "policy": os.environ.get("OMP_WAIT_POLICY"),
                  "spin": os.environ.get("GOMP_SPINCOUNT")}))
"""


def _run(order, tmp_path, **variables):
    env = dict(os.environ, NUMTORCH_CACHE_DIR=str(tmp_path), NUMTORCH_NUM_THREADS="2")
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("GOMP_SPINCOUNT", None)
    env.update(variables)
    out = subprocess.run([sys.executable, "-c", SCRIPT, order], env=env, capture_output=True,
                         text=True, timeout=300, cwd=os.path.dirname(os.path.dirname(
                             os.path.dirname(os.path.abspath(__file__)))))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@needs_gcc
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: libgomp throttles its spin")
def test_kernels_do_not_spin_on_torchs_runtime_when_torch_is_imported_first(tmp_path):
    pytest.importorskip("torch")
    r = _run("torch_first", tmp_path)
    ours = [m for m in r["maps"] if m.startswith(str(tmp_path))]
    assert ours and len(r["maps"]) == 2, r["maps"]     # ours beside torch's libgomp.so.1
    # a worker spinning libgomp's default 300000 pause loops burns 3.5-9 ms of CPU after
    # each region; ours sleeps at once (0.08-0.09 ms measured; Note [A short spin],
    # openmp.py)
    assert r["idle_ms"] < 1.0, r
    assert r["policy"] is None and r["spin"] is None    # the environment is left as it was


@needs_gcc
def test_torch_imported_after_a_kernel_gets_its_own_runtime_and_environment(tmp_path):
    pytest.importorskip("torch")
    r = _run("torch_after", tmp_path)
    assert any(m.startswith(str(tmp_path)) for m in r["maps"]), r["maps"]
    assert any("torch" in m for m in r["maps"]), r["maps"]
    assert r["policy"] is None        # torch's libgomp read the user's environment, not ours
    assert r["idle_ms"] < 1.0, r


@needs_gcc
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: libgomp throttles its spin")
def test_a_wait_policy_the_user_set_is_kept(tmp_path):
    """And the measurement above sees spinning workers when there are some."""
    r = _run("numtorch_only", tmp_path, OMP_WAIT_POLICY="active")
    assert r["policy"] == "active" and r["idle_ms"] > 2.5, r


@needs_gcc
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: libgomp throttles its spin")
def test_a_spin_count_the_user_set_is_kept(tmp_path):
    """Ours is short (Note [A short spin]); a long one the user set is libgomp's to run."""
    r = _run("numtorch_only", tmp_path, GOMP_SPINCOUNT="30000000000")
    assert r["spin"] == "30000000000" and r["idle_ms"] > 2.5, r


def test_without_a_copy_the_policy_is_set_for_the_shared_runtime(monkeypatch):
    monkeypatch.setattr(openmp, "_STATE", {})
    monkeypatch.setattr(openmp, "_private_copy", lambda cc, directory: None)
    monkeypatch.setenv("OMP_WAIT_POLICY", "")          # so that teardown removes it again
    monkeypatch.delenv("OMP_WAIT_POLICY")
    assert openmp.load_runtime("cc", "/nonexistent") is None
    assert os.environ["OMP_WAIT_POLICY"] == "passive"


@needs_gcc
def test_the_copy_has_a_new_soname_and_the_same_code():
    path = openmp._private_copy(build.compiler(), build.cache_dir())
    with open(path, "rb") as f:
        data = f.read()
    readelf = shutil.which("readelf")
    if readelf:                                         # an independent reader of the file
        dyn = subprocess.run([readelf, "-d", path], capture_output=True, text=True).stdout
        assert "[libnt_gomp.1]" in dyn and "libgomp.so.1" not in dyn
    original = subprocess.run([build.compiler(), "-print-file-name=libgomp.so.1"],
                              capture_output=True, text=True).stdout.strip()
    with open(os.path.realpath(original), "rb") as f:
        before = f.read()
    assert len(before) == len(data)
    assert sum(a != b for a, b in zip(before, data)) <= len(b"libgomp.so.1")


def test_rename_soname_rejects_what_it_cannot_patch():
    with pytest.raises(ValueError, match="ELF64"):
        openmp.rename_soname(b"not an elf file at all" * 4, b"x")
    if build.compiler() is not None:
        path = openmp._private_copy(build.compiler(), build.cache_dir())
        if path is not None:
            with open(path, "rb") as f, pytest.raises(ValueError, match="longer"):
                openmp.rename_soname(f.read(), b"a-much-longer-soname.so.1")
