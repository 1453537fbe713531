"""The NumPy corpus: short NumPy programs that must give NumPy's values, dtypes and errors.

Each snippet is source text over a module ``np`` and the named inputs below (plain NumPy
arrays and scalars). ``as_function(code)`` turns it into ``f(np, **inputs)``: the last line
is the result, earlier lines are statements. ``tests/test__numpy_corpus.py`` runs every
snippet with ``np = numpy`` (the reference) and with ``np = numtorch._numpy``; running it
compiled is one more way there (``compile(functools.partial(f, tnp))``).
"""
import numpy as np

_rng = np.random.default_rng(1234)

INPUTS = {
    "A": _rng.standard_normal((3, 4)),                      # float64
    "B": _rng.standard_normal(4),
    "C": _rng.standard_normal((2, 3, 4)),
    "F32": _rng.standard_normal((3, 4)).astype(np.float32),
    "F16": _rng.standard_normal(4).astype(np.float16),
    "I32": _rng.integers(1, 5, (3, 4)).astype(np.int32),  # positive: powers, division
    "I64": _rng.integers(1, 5, (3, 4)),
    "N64": _rng.integers(-6, 6, (3, 4)),                     # signed values
    "I8": _rng.integers(1, 5, 4).astype(np.int8),
    "U8": _rng.integers(1, 9, 4).astype(np.uint8),
    "BOOL": _rng.random((3, 4)) > 0.5,
    "Z": (_rng.standard_normal(4) + 1j * _rng.standard_normal(4)),  # complex128
    "P": _rng.random((3, 4)) + 0.5,                          # positive float64
    "U": _rng.random(4) * 1.8 - 0.9,                         # in (-1, 1)
    "SQ": _rng.standard_normal((3, 3)) + 3 * np.eye(3),
    "SPD": (lambda m: m @ m.T + 3 * np.eye(3))(_rng.standard_normal((3, 3))),
    "V3": _rng.standard_normal(3),
    "T": np.array([3, 1, 2, 1, 5, 3]),
    "X": _rng.standard_normal((64, 16)),
    "Y": _rng.standard_normal((64, 16)),
    "S32": np.float32(2.5),
    "S64": np.float64(2.5),
    "SI64": np.int64(3),
    "SI8": np.int8(3),
}


def as_function(code):
    """``def f(np, <inputs>)`` whose body is ``code`` (the last line returned)."""
    lines = code.strip().split("\n")
    body = "\n".join("    " + ln for ln in lines[:-1])
    src = (f"def f(np, {', '.join(INPUTS)}):\n" + (body + "\n" if body else "")
           + f"    return {lines[-1]}\n")
    scope = {}
    exec(compile(src, f"<corpus: {lines[-1][:40]}>", "exec"), scope)
    return scope["f"]


# -- ufuncs: operand dtype mixes, NEP 50 (Python scalars weak, NumPy scalars strong) ----
_PAIRS = ["A, F32", "F32, I32", "I32, I64", "I8, U8", "I8, 3", "I8, 3.5", "F32, 2.5",
          "F32, S64", "I32, SI64", "BOOL, 1", "BOOL, I8", "F16, I8", "I8, SI8", "3, F32",
          "F32, B", "A, B", "Z, F32"]
_BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "less"]
SNIPPETS = [f"np.{u}({p})" for u in _BINARY for p in _PAIRS
            if not (u in ("maximum", "less") and p.startswith("Z"))]
SNIPPETS += [f"np.{u}({p})" for u in ("floor_divide", "remainder", "power", "fmod")
             for p in ("I32, I64", "I8, 2", "F32, I32", "A, 1.5", "P, 2", "I32, 2.5")]
SNIPPETS += [f"np.{u}({p})" for u in ("arctan2", "hypot", "logaddexp")
             for p in ("A, F32", "F32, 2", "I32, I8")]
SNIPPETS += [f"np.{u}({p})" for u in ("bitwise_and", "bitwise_or", "bitwise_xor",
                                      "logical_and", "logical_xor")
             for p in ("I32, I64", "BOOL, BOOL", "I8, 6")]
SNIPPETS += [f"np.{u}({x})" for u in ("sin", "exp", "tanh", "negative", "absolute", "square",
                                      "floor", "sign")
             for x in ("A", "F32", "I32", "F16")]
SNIPPETS += [f"np.{u}({x})" for u in ("sqrt", "log", "log1p", "reciprocal") for x in ("P",)]
SNIPPETS += ["np.sin(BOOL)", "np.sqrt(I8)", "np.absolute(Z)", "np.negative(N64)",
             "np.arcsin(U)", "np.arctanh(U)", "np.isnan(A)", "np.isfinite(I32)",
             "np.invert(I8)", "np.invert(BOOL)", "np.logical_not(A)", "np.rint(A * 3)",
             "np.conjugate(Z)", "np.exp2(I8)", "np.equal(I32, 2.0)", "np.not_equal(A, B)",
             "np.add(F32, F32, dtype=np.float64)", "np.multiply(I32, 2, dtype=np.float32)",
             "out = np.zeros((3, 4))\nnp.add(A, 1, out=out)\nout",
             "out = np.zeros((3, 4), dtype=np.float32)\nr = np.multiply(I32, 2, out=out)\n(r, out)",
             "out = np.ones((3, 4))\nnp.add(A, 10, out=out, where=A > 0)\nout",
             "a = np.asarray(I64).copy()\na += 2\na",
             "a = np.asarray(F32).copy()\na *= 3\na",
             "np.asarray(A) * 2 + 1", "2 ** np.asarray(I8)", "-np.asarray(A) / 3",
             "np.asarray(I32) // 2", "np.asarray(I32) % 3", "abs(np.asarray(N64))",
             "np.asarray(A) > 0", "(np.asarray(A) > 0) & (np.asarray(A) < 1)",
             "np.asarray(A) @ np.asarray(B)", "np.asarray(I32) @ np.asarray(F32).T",
             "np.matmul(C, B)", "np.matmul(F32, I32.T)",
             "np.add.reduce(A, axis=1)", "np.multiply.accumulate(I32, axis=0)",
             "np.multiply.outer(B, V3)", "np.maximum.reduce(A, axis=None)"]

# -- reductions with axis / keepdims / dtype ---------------------------------------------
for _f in ("sum", "mean", "max", "min", "prod", "std", "var"):
    for _args in ("A", "A, axis=0", "A, axis=-1", "C, axis=(0, 2)", "A, axis=1, keepdims=True",
                  "I32, axis=0"):
        SNIPPETS.append(f"np.{_f}({_args})")
SNIPPETS += ["np.sum(I8)", "np.sum(BOOL, axis=0)", "np.sum(F32, dtype=np.float64)",
             "np.sum(I32, axis=1, dtype=np.int32)", "np.mean(F32, axis=0)", "np.mean(BOOL)",
             "np.var(A, ddof=1)", "np.std(I32, axis=0, ddof=1)", "np.prod(I8)",
             "np.argmax(A)", "np.argmax(A, axis=0)", "np.argmin(A, axis=-1, keepdims=True)",
             "np.all(BOOL, axis=0)", "np.any(A > 1, axis=1)", "np.all(I32)",
             "np.cumsum(A, axis=1)", "np.cumsum(I8)", "np.cumprod(I32, axis=0)",
             "np.nansum(A)", "np.ptp(A, axis=0)", "np.count_nonzero(BOOL, axis=1)",
             "np.asarray(A).sum(axis=0)", "np.asarray(I32).mean()", "np.asarray(A).max(1)",
             "np.asarray(C).std(axis=(1, 2), keepdims=True)", "np.asarray(A).argmin()",
             "np.trace(SQ)", "np.trace(I32)"]

# -- indexing and assignment ---------------------------------------------------------------
_A = "a = np.asarray(A).copy()\n"
_I = "a = np.asarray(I64).copy()\n"
SNIPPETS += ["np.asarray(A)[0]", "np.asarray(A)[1, 2]", "np.asarray(A)[:, 1]",
             "np.asarray(A)[::2]", "np.asarray(A)[::-1]", "np.asarray(A)[1:, ::-2]",
             "np.asarray(A)[..., None]", "np.asarray(A)[None, :, 2]",
             "np.asarray(A)[[0, 2]]", "np.asarray(A)[np.asarray(A) > 0]",
             "np.asarray(A)[[0, 1], [1, 2]]", "np.asarray(C)[:, [0, 2], 1:3]",
             "np.asarray(C)[..., -1]", "np.asarray(A)[-1, -1]", "np.asarray(I8)[1:3]",
             "np.asarray(B)[np.asarray(T)[:3]]", "np.asarray(A)[BOOL]",
             _A + "a[0] = 5\na", _A + "a[:, 1] = 2.7\na", _I + "a[:, 1] = 2.7\na",
             _A + "a[a > 0] = 0\na", _A + "a[::-1, 0] = [1, 2, 3]\na",
             _A + "a[[0, 2]] += 1\na", _A + "a[...] = B\na", _I + "a[0, 0] = np.int8(-3)\na",
             _A + "v = a[1]\nv[:] = 7\na", _A + "v = a.T\nv[0, 0] = -1\na",
             _A + "a.fill(2)\na", _I + "a[a > 2] = -a[a > 2]\na", _A + "a[1:, 2:] *= 2\na"]

# -- shape: reshape / transpose / concatenate / stack ------------------------------------
SNIPPETS += ["np.reshape(A, (4, 3))", "np.reshape(A, -1)", "np.asarray(C).reshape(6, -1)",
             "np.asarray(A).reshape((2, 2, 3))", "np.transpose(C)", "np.transpose(C, (1, 0, 2))",
             "np.asarray(A).T", "np.swapaxes(C, 0, 2)", "np.moveaxis(C, 0, -1)",
             "np.ravel(C)", "np.asarray(C).flatten()", "np.squeeze(np.asarray(A)[:, None])",
             "np.expand_dims(A, 0)", "np.expand_dims(B, (0, 2))",
             "np.concatenate([A, F32])", "np.concatenate([A, A], axis=1)",
             "np.concatenate([I32, I8[None, :]])", "np.concatenate([B, V3], axis=None)",
             "np.stack([B, B])", "np.stack([I8, U8], axis=1)", "np.stack([A, F32], axis=-1)",
             "np.vstack([A, B])", "np.hstack([B, I8])", "np.column_stack([B, B])",
             "np.atleast_2d(B)", "np.broadcast_to(B, (3, 4))", "np.flip(A, 0)", "np.flip(C)",
             "np.roll(B, 1)", "np.tile(B, 2)", "np.repeat(I8, 2)", "np.split(B, 2)",
             "np.diag(V3)", "np.diag(SQ)", "np.tril(SQ)", "np.triu(SQ, 1)",
             "np.asarray(A).astype(np.int32)", "np.asarray(I8).astype(np.float32)",
             "np.copy(A)", "np.meshgrid(V3, B)", "np.broadcast_arrays(B, A)"]

# -- where / clip / comparison / creation -------------------------------------------------
SNIPPETS += ["np.where(A > 0, A, 0)", "np.where(BOOL, I32, 2.5)", "np.where(BOOL, F32, I8)",
             "np.where(BOOL, 1, 0)", "np.where(A > 0)", "np.where(BOOL, F32, S64)",
             "np.clip(A, -0.5, 0.5)", "np.clip(I32, 2, 3)", "np.clip(F32, 0, None)",
             "np.round(A, 2)", "np.isclose(A, A + 1e-9)", "np.allclose(A, F32, atol=1e-6)",
             "np.array_equal(I32, I64)", "np.nonzero(BOOL)", "np.argwhere(BOOL)",
             "np.unique(T)", "np.take(B, [0, 3])", "np.take_along_axis(A, np.argsort(A, axis=1), axis=1)",
             "np.zeros((2, 3))", "np.ones(3, dtype=np.int32)", "np.full((2, 2), 7)",
             "np.full(3, 1.5)", "np.arange(5)", "np.arange(0, 1, 0.25)", "np.arange(2, 11, 3)",
             "np.linspace(0, 1, 5)", "np.eye(3)", "np.identity(2, dtype=np.int64)",
             "np.zeros_like(I32)", "np.ones_like(A, dtype=np.float32)", "np.full_like(F32, 3)",
             "np.array([1, 2, 3])", "np.array([1.0, 2])", "np.array([[1, 2], [3, 4]], dtype=np.float32)",
             "np.asarray([True, False])", "np.array(3.5)", "np.zeros(3) + 1"]

# -- sorting -------------------------------------------------------------------------------
SNIPPETS += ["np.sort(A)", "np.sort(A, axis=0)", "np.sort(T)", "np.sort(C, axis=None)",
             "np.argsort(T, kind='stable')", "np.argsort(A, axis=0)",
             "a = np.asarray(T).copy()\na.sort()\na", "np.sort(I8)[::-1]"]

# -- linalg / einsum / contractions --------------------------------------------------------
SNIPPETS += ["np.dot(A, B)", "np.dot(SQ, SQ)", "np.dot(I32, B)", "np.dot(V3, V3)",
             "np.dot(A, 2)", "np.vdot(Z, Z)", "np.inner(B, B)", "np.outer(V3, B)",
             "np.tensordot(C, A, axes=([1, 2], [0, 1]))", "np.einsum('ij,j->i', A, B)",
             "np.einsum('bij,jk->bik', C, A.T)", "np.einsum('ii->', SQ)",
             "np.einsum('ij->ji', I32)", "np.einsum('i,i->', F32[0], I32[0])",
             "np.linalg.norm(A)", "np.linalg.norm(B)", "np.linalg.norm(A, axis=1)",
             "np.linalg.norm(B, ord=1)", "np.linalg.inv(SQ)", "np.linalg.det(SQ)",
             "np.linalg.solve(SQ, V3)", "np.linalg.cholesky(SPD)", "np.linalg.eigh(SPD)[0]",
             "np.abs(np.linalg.qr(SQ)[1])", "np.linalg.svd(SQ)[1]", "np.linalg.inv(np.eye(3, dtype=np.int64))",
             "np.linalg.det(I32[:3, :3])"]

# -- the FAQ's NumPy example ---------------------------------------------------------------
SNIPPETS += ["np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))",
             "np.mean(np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1)))"]

# -- errors: the exception type must be NumPy's ------------------------------------------
ERRORS = ["np.add(A, V3)", "np.asarray(A) + np.asarray(V3)", "np.sum(A, axis=2)",
          "np.mean(A, axis=-3)", "np.reshape(A, (5, 3))", "np.concatenate([A, C])",
          "np.concatenate([A, V3[None, :]])", "np.matmul(A, A)", "np.asarray(A) @ np.asarray(V3)",
          "np.add(I8, 1000)", "np.bitwise_and(A, 1)", "np.transpose(C, (0, 1))",
          "np.stack([A, B])", "np.squeeze(A, axis=0)", "np.linalg.inv(A)",
          "np.asarray(A)[3]", "np.asarray(A)[0, 0, 0]", "np.argmax(A, axis=2)",
          "np.max(np.zeros((0,)))", "np.cumsum(A, axis=3)",
          "out = np.zeros((3, 4), dtype=np.int64)\nnp.add(I64, 1.5, out=out)",
          "np.dot(A, A)", "np.where(A > 0, A, V3)", "np.expand_dims(B, 3)", "np.sort(A, axis=2)"]
