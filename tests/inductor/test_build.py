"""The inductor's build side: one C function per distinct kernel, segments as tables
(launcher.py), the pointer-array fallback of the per-call path, and compile's ``mode=`` /
``options=`` reaching the backend's config.

Results are compared with eager (independent of the generated code); skipped, not failed,
where there is no C compiler.
"""
from __future__ import annotations

import logging

import numpy as np

import pytest

import numtorch as torch
from numtorch._inductor import build, compile_graph, config, launcher, runner
from numtorch.func import make_graph
from numtorch.testing import assert_close

needs_cc = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


@pytest.fixture
def matmul_externs(monkeypatch):
    """Products are NumPy externs again (Note [Small products in C] and Note [BLAS calls
    in segments], gemm.py), so that they separate segments."""
    monkeypatch.setattr(config.cpp, "small_products", False)
    monkeypatch.setattr(config.cpp, "blas_in_segments", False)


def _three_steps(x, w):
    """Three identical pointwise kernels on other buffers, separated by matmuls (externs
    under ``matmul_externs``)."""
    for _ in range(3):
        x = torch.tanh(x * 0.5 + 1) @ w
    return x


def test_kernel_key_ignores_names_and_comments_only():
    a = ("    float *restrict buf3 = b[0];\n    float *restrict buf7 = b[1];\n"
         "    for (int64_t v12_i0 = 0; v12_i0 < 8; v12_i0++) {  /* v12 = tanh */\n"
         "        buf7[v12_i0] = tanh(buf3[v12_i0]);\n    }\n}")
    b = a.replace("buf3", "buf40").replace("buf7", "buf41").replace("v12", "v99")
    assert launcher.kernel_key(a) == launcher.kernel_key(b)
    for changed in (a.replace("tanh(", "exp("), a.replace("< 8", "< 9"),
                    a.replace("float *restrict buf7", "double *restrict buf7"),
                    # the same names in the other roles: another kernel
                    a.replace("buf7[v12_i0] = tanh(buf3", "buf3[v12_i0] = tanh(buf7")):
        assert launcher.kernel_key(changed) != launcher.kernel_key(a)


@needs_cc
def test_identical_kernels_are_one_function(matmul_externs):
    """Note [One function per distinct kernel]: the three kernels run one C function, on
    their own buffers, with eager's results."""
    x, w = torch.randn(6, 5), torch.randn(5, 5) * 0.3
    c = compile_graph(make_graph(_three_steps)(x, w))
    assert c.kernel_count == 3 and c.extern_count == 3
    assert c.source.count("NT_KERNEL void kernel") == 2, c.source   # and its prototype
    assert "also runs kernel1, kernel2" in c.source
    assert_close(c(x, w), (_three_steps(x, w),))
    x2 = torch.randn(6, 5)
    assert_close(c(x2, w), (_three_steps(x2, w),))


@needs_cc
def test_segments_take_their_own_buffers_only(matmul_externs):
    """Note [Segments as data]: each segment's call passes the buffers its kernels use."""
    x, w = torch.randn(6, 5), torch.randn(5, 5) * 0.3
    c = compile_graph(make_graph(_three_steps)(x, w))
    calls = [line.strip() for line in c.python_code.splitlines() if "_seg(" in line]
    assert len(calls) == 3
    for line in calls:            # an input (or the previous matmul) and the kernel's output
        arrays = [a for a in line.split(", (", 1)[1].rstrip(")").split(", ") if a]
        assert len(arrays) == 2, c.python_code


@needs_cc
@pytest.mark.parametrize("small_products", [False, True])
def test_pointer_array_path_gives_the_same_results(monkeypatch, small_products):
    """Where the tuple/array layout probe disagrees, the runner passes data pointers (to
    segments of kernels between externs, or of kernels and products)."""
    monkeypatch.setattr(runner, "_reads_objects", lambda lib: False)
    monkeypatch.setattr(config.cpp, "small_products", small_products)
    x, w = torch.randn(6, 5), torch.randn(5, 5) * 0.3
    c = compile_graph(make_graph(_three_steps)(x, w))
    assert ".ctypes.data" in c.python_code and c.product_count == 3 * small_products
    assert_close(c(x, w), (_three_steps(x, w),))


def _output_code(caplog, fn, *args, **compile_kwargs):
    caplog.set_level(logging.INFO, logger="numtorch._inductor.output_code")
    caplog.clear()
    out = torch.compile(fn, **compile_kwargs)(*args)
    return out, "\n".join(r.getMessage() for r in caplog.records
                          if r.name == "numtorch._inductor.output_code")


@needs_cc
def test_compile_options_reach_the_backend(caplog):
    """``compile(options={"debug": True})`` sets the inductor's config for that compile:
    generated locals are commented with their graph values; the global config is unchanged."""
    f = lambda x: (x * 3.25).sin() + 1          # noqa: E731 - one graph
    x = torch.randn(5, 4)
    out, code = _output_code(caplog, f, x, options={"debug": True})
    assert_close(out, f(x))
    assert "= sin */" in code, code
    assert config.debug is False
    out, code = _output_code(caplog, lambda x: (x * 3.25).sin() + 1, x)
    assert "= sin */" not in code and "kernel0" in code


def test_compile_checks_mode_and_options():
    with pytest.raises(ValueError, match="unknown inductor option 'cpp.nope'"):
        torch.compile(lambda x: x, options={"cpp.nope": 1})
    with pytest.raises(ValueError, match="unknown mode"):
        torch.compile(lambda x: x, mode="fastest")


@needs_cc
def test_kernel_temporaries_are_kept_and_outputs_are_fresh():
    """Note [Kernel temporaries are kept]: the kernels' intermediate buffers are allocated
    once; every call returns new output memory, and a call from inside a running call
    (the kept buffers busy) gets fresh temporaries."""
    x, w = torch.randn(6, 5), torch.randn(5, 5) * 0.3
    c = compile_graph(make_graph(_three_steps)(x, w))
    assert "_kept" in c.python_code and "_fresh()" in c.python_code
    a = c(x, w)[0]
    x2 = torch.randn(6, 5)
    b = c(x2, w)[0]
    assert a.numpy() is not b.numpy() and not np.shares_memory(a.numpy(), b.numpy())
    assert_close(a, _three_steps(x, w))
    assert_close(b, _three_steps(x2, w))
    lock = c.run.__globals__["_lock"]
    lock.acquire()
    try:
        assert_close(c(x2, w), (_three_steps(x2, w),))
    finally:
        lock.release()


@needs_cc
def test_mode_max_autotune_reaches_the_config(monkeypatch):
    seen = []
    real = runner.schedule

    def spy(*args, **kwargs):
        seen.append(config.max_autotune)
        return real(*args, **kwargs)
    monkeypatch.setattr(runner, "schedule", spy)
    x = torch.randn(3, 4)
    assert_close(torch.compile(lambda x: x.exp() * 2, mode="max-autotune")(x), x.exp() * 2)
    assert_close(torch.compile(lambda x: x.exp() * 3)(x), x.exp() * 3)
    assert seen == [True, False] and config.max_autotune is False


@needs_cc
def test_a_library_split_into_units_links_and_shares_the_thread_count(monkeypatch, tmp_path,
                                                                  same_bits_at_one_and_two_threads):
    """Note [Parallel builds]: kernels compiled in two units and linked into one library
    (one thread count, defined in the first unit) give eager's results, the same bits at 1
    and 2 threads."""
    monkeypatch.setenv("NUMTORCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(launcher, "SPLIT_BYTES", 1)
    monkeypatch.setattr(config, "compile_threads", 2)
    monkeypatch.setattr(config.cpp, "parallel_threshold", 32768)     # parallel kernels too
    from numtorch._ops import _threaded
    _threaded.available()          # the pool (Note [Kernels on the pool]) is built already
    built = []
    real = build._compile
    monkeypatch.setattr(build, "_compile", lambda units, *a: built.append(len(units)) or
                        real(units, *a))
    x = torch.randn(32, 64, 64)
    f = lambda x: (torch.softmax(x, 1), (x * 2).tanh().sum(-1))    # noqa: E731
    c = compile_graph(make_graph(f)(x))
    assert built == [2] and c.kernel_count >= 2
    assert "_part, b, " in c.source          # parallel: Note [Kernels on the pool]
    assert_close(same_bits_at_one_and_two_threads(c, x), f(x), rtol=1e-5, atol=1e-5)


def test_a_callable_backend_receives_options_as_pytorch_passes_them():
    seen = []

    def backend(gm, example_inputs, options=None):
        seen.append(options)
        return gm.forward
    x = torch.randn(3)
    assert_close(torch.compile(lambda x: x * 2, backend=backend, options={"k": 1})(x), x * 2)
    assert_close(torch.compile(lambda x: x * 3, backend=backend)(x), x * 3)
    assert seen == [{"k": 1}, None]


@needs_cc
@pytest.mark.skipif(not build.has_libmvec(), reason="no libmvec")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sin_and_cos_of_one_value_stay_vector_calls(dtype, monkeypatch):
    """Note [No sincos] (build.py): a kernel computing sin(x) and cos(x) calls the SIMD
    versions, not a scalar sincos (GCC's rewrite of the pair); values as eager's."""
    libs = []
    load = build.load

    def recording(*args, **kwargs):
        libs.append(load(*args, **kwargs))
        return libs[-1]
    monkeypatch.setattr(build, "load", recording)
    x = torch.linspace(-20, 20, 4096, dtype=getattr(torch, dtype)).reshape(8, 512)
    c = compile_graph(make_graph(lambda z: z.sin() * z + z.cos())(x))
    assert_close(c(x)[0], x.sin() * x + x.cos())
    with open(libs[-1]._name, "rb") as f:
        text = f.read()
    assert b"sincos" not in text                 # no import of sincos or sincosf
    assert b"_ZGV" in text and b"v_cos" in text   # libmvec's vector cos (_ZGV..v_cosf)
