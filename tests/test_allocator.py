"""Note [Warming the allocator], Note [Keeping freed memory]: after ``import numtorch``,
arrays freed and made again come from malloc's heap, not from the system page by page."""
import os
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
        arrays = [np.ones({size}, np.float32) for _ in range({count})]
        del arrays
rounds(1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
rounds(10)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(setup, size=300 * 256, count=20, env=None):
    code = _LOOP.format(setup=setup, size=size, count=count)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout
    return int(out.split()[-1])


_GLIBC = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                            reason="the thresholds set are glibc malloc's")


@_GLIBC
def test_mid_sized_arrays_stay_on_the_heap_after_import():
    cold = _faults("")
    if cold < 2000:
        pytest.skip(f"this malloc keeps freed 300 KiB arrays without help ({cold} faults)")
    warm = _faults("import numtorch")
    assert warm < 200, (cold, warm)   # the pages are faulted in once, not each round


@_GLIBC
def test_a_hundred_megabytes_freed_at_once_stay_with_the_process():
    """Note [Keeping freed memory]: 70 arrays of 1.6 MB (a per-sample loop's gradients)
    freed together and made again are not returned to the system and faulted back in."""
    big = dict(size=400_000, count=70)
    cold = _faults("", **big)
    if cold < 10000:
        pytest.skip(f"this malloc keeps 112 MB freed at once without help ({cold} faults)")
    warm = _faults("import numtorch", **big)
    assert warm < 500, (cold, warm)


@_GLIBC
def test_a_users_malloc_settings_win():
    env = dict(os.environ, MALLOC_TRIM_THRESHOLD_=str(128 << 10))
    out = subprocess.run([sys.executable, "-c", "import numtorch._allocator as a; "
                          "print(a.keep_freed_memory())"], check=True, capture_output=True,
                         text=True, env=env).stdout
    assert out.split()[-1] == "False"
    assert _faults("import numtorch", size=400_000, count=70, env=env) > 10000
