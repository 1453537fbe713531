"""The README tells the truth: its Python blocks run, its commands are the ones CI runs,
and the demo and benchmark commands it gives work."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
CI = (ROOT / ".ci" / "run").read_text()


def _blocks(lang):
    return re.findall(rf"^```{lang}\n(.*?)^```", README, re.M | re.S)


def _commands(prefix):
    return [line.split("#")[0].strip() for block in _blocks("bash") for line in block.splitlines()
            if line.startswith(prefix)]


def _ci_variable(name):
    m = re.search(rf'^{name}="(.*)"$', CI, re.M)
    assert m, f".ci/run does not define {name}"
    return m.group(1)


PYTHON_BLOCKS = _blocks("python")


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_runs(index):
    code = compile(PYTHON_BLOCKS[index], f"README.md (python block {index})", "exec")
    exec(code, {"__name__": "__readme__"})


def test_readme_commands_are_the_ones_ci_runs():
    demo, test = _commands("pip install")
    assert demo == "pip install -e . && python -m numtorch"
    assert test == "pip install -e '.[test]' && python -m pytest"
    assert _ci_variable("DEMO_COMMAND") == demo
    assert _ci_variable("TEST_COMMAND") == test
    assert 'eval "$DEMO_COMMAND"' in CI and 'eval "$TEST_COMMAND"' in CI


def test_ci_script_is_strict_executable_and_guards_the_torch_download():
    assert os.access(ROOT / ".ci" / "run", os.X_OK)
    assert CI.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in CI
    assert "python3 -m venv" in CI.replace('"$PYTHON"', "python3").replace("${PYTHON:-python3}", "python3")
    # torch is only ever installed from a local wheel file, never by name from an index
    assert "ls /opt/wheels/torch-2.13.0*cp311*.whl" in CI
    assert not re.search(r"pip install[^\n]*torch==", CI)


def _run(args, timeout):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_demo_runs_and_its_checks_pass():
    r = _run(["-m", "numtorch"], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 failed checks" in r.stdout
    for section in ("Tensors and broadcasting", "Autograd", "MLP", "torch.func", "NumPy"):
        assert section in r.stdout


def test_benchmark_commands_in_readme_exist():
    cmds = _commands("python -m benchmarks") + _commands("python benchmarks/run.py")
    assert len(cmds) >= 3
    for cmd in cmds:
        r = _run(shlex.split(cmd)[1:] + ["--help"], timeout=60)
        assert r.returncode == 0 and "--quick" in r.stdout, r.stderr


def test_benchmark_runner_times_a_workload(tmp_path):
    out = tmp_path / "bench.json"
    r = _run(["benchmarks/run.py", "--quick", "--filter", "x + y (10)",
              "--frameworks", "numtorch,numpy", "--json", str(out)], timeout=120)
    assert r.returncode == 0, r.stderr
    assert "x + y (10)" in r.stdout and "nt/NumPy" in r.stdout
    import json
    data = json.loads(out.read_text())
    (result,) = data["results"]
    assert set(result["times"]) == {"numtorch", "numpy"}
    assert all(0 < t < 1e-3 for t in result["times"].values())
    assert data["machine"]["cpu_count"] >= 1 and data["date"]


def test_benchmark_runner_isolates_frameworks(tmp_path):
    # Note [One process per framework]: each column's cells run in an interpreter that has
    # not imported the other frameworks, and one process gives the same row shape.
    pytest.importorskip("torch")
    out = tmp_path / "bench.json"
    r = _run(["benchmarks/run.py", "--quick", "--filter", "x + y (10)",
              "--frameworks", "numtorch,torch", "--json", str(out)], timeout=180)
    assert r.returncode == 0, r.stderr
    import json
    (result,) = json.loads(out.read_text())["results"]
    assert set(result["times"]) == {"numtorch", "torch"}
    loaded = result["frameworks_loaded"]
    assert "torch" not in loaded["numtorch"] and "torch" in loaded["torch"]
    r = _run(["benchmarks/run.py", "--quick", "--filter", "x + y (10)", "--isolate", "none",
              "--frameworks", "numtorch,numpy", "--json", str(out)], timeout=120)
    assert r.returncode == 0, r.stderr
    (result,) = json.loads(out.read_text())["results"]
    assert set(result["times"]) == {"numtorch", "numpy"} and "frameworks_loaded" not in result


def test_benchmark_rounds_report_the_median_of_each_cells_rounds(tmp_path):
    # Note [Rounds]: every round's time is kept, and the reported time is their median.
    import json
    import statistics
    out = tmp_path / "bench.json"
    r = _run(["benchmarks/run.py", "--quick", "--filter", "x + y (10)", "--rounds", "3",
              "--frameworks", "numtorch,numpy", "--json", str(out)], timeout=180)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    (result,) = data["results"]
    assert data["rounds"] == 3
    for fw in ("numtorch", "numpy"):
        assert len(result["rounds"][fw]) == 3
        assert result["times"][fw] == statistics.median(result["rounds"][fw])
    r = _run(["benchmarks/run.py", "--rounds", "2", "--isolate", "none"], timeout=60)
    assert r.returncode != 0 and "--rounds needs --isolate framework" in r.stderr
