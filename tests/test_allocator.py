"""Note [Warming the allocator]: after ``import numtorch``, mid-sized arrays freed and made
again come from malloc's heap, not from the system page by page."""
import platform
import subprocess
import sys

import pytest

# Rounds of 20 arrays of 300 KiB (written, as results are) made and then all freed: with
# glibc's start-up thresholds each round maps and faults in ~1,500 pages again.
_LOOP = """
import resource, numpy as np
{setup}
def rounds(n):
    for _ in range(n):
        arrays = [np.ones(300 * 256, np.float32) for _ in range(20)]
        del arrays
rounds(1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
rounds(10)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(setup):
    out = subprocess.run([sys.executable, "-c", _LOOP.format(setup=setup)], check=True,
                         capture_output=True, text=True).stdout
    return int(out.split()[-1])


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="the thresholds warmed are glibc malloc's")
def test_mid_sized_arrays_stay_on_the_heap_after_import():
    cold = _faults("")
    if cold < 2000:
        pytest.skip(f"this malloc keeps freed 300 KiB arrays without help ({cold} faults)")
    warm = _faults("import numtorch")
    assert warm < 200, (cold, warm)   # the pages are faulted in once, not each round
