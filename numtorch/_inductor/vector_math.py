"""The kernels' math functions: the inline float32 exp of the prelude (Note [Inline float
exp]) and the declarations that let vectorised loops call glibc's libmvec (Note [Vector
math]), and which pointwise C calls a math function per element. codegen.py puts these in
the prelude; this module writes no loop.
"""
from __future__ import annotations

import re

# the prelude's part (codegen.PRELUDE includes it)
EXP_PRELUDE = r"""/* exp: float32 by nt_expf (Note [Inline float exp]), float64 by libm/libmvec */
#define nt_exp(x) _Generic((x), float: nt_expf((float)(x)), default: exp(x))
static inline __attribute__((always_inline)) float nt_expf(float x) {
    float k = rintf(x * 0x1.715476p+0f);      /* x = k ln2 + r, |r| <= ln2 / 2 */
    float r = fmaf(k, -0x1.62e400p-1f, x);    /* ln2's high part: k * it is exact */
    r = fmaf(k, -0x1.7f7d1cp-20f, r);         /* ln2's low part */
    float p = 0x1.6a2434p-10f;                /* exp(r) = 1 + r + r^2 P(r): */
    p = fmaf(p, r, 0x1.1239e2p-7f);           /* Note [Inline float exp] */
    p = fmaf(p, r, 0x1.5558f2p-5f);
    p = fmaf(p, r, 0x1.555492p-3f);
    p = fmaf(p, r, 0x1.fffffcp-2f);
    p = fmaf(p, r * r, r) + 1.0f;
    int32_t ki = (int32_t)k, k1 = ki >> 1, pb, b2 = (ki - k1 + 127) << 23;
    float s2;                                 /* 2^k: 2^k1 exactly into p's exponent, */
    __builtin_memcpy(&pb, &p, 4);             /* then 2^(k-k1), the one rounding */
    pb += k1 * (1 << 23);
    __builtin_memcpy(&p, &pb, 4);
    __builtin_memcpy(&s2, &b2, 4);
    p = p * s2;
    p = x < -104.0f ? 0.0f : p;               /* exp rounds to 0 below -104 */
    return x > 89.0f ? INFINITY : p;          /* and to inf above 89 (NaN passes both) */
}
"""


# Note [Inline float exp]
# exp of float32 is the kernels' most common transcendental (softmax, log_softmax and
# sigmoid). libmvec's vector expf is accurate and vectorises (Note [Vector math]),
# but it is a call: the loop spills its accumulators around every call. The prelude's
# nt_expf is inline C: Cody-Waite reduction x = k ln2 + r (ln2 in two parts, k ln2's high
# part exact), exp(r) = 1 + r + r^2 P(r) with P of degree 4 evaluated with explicit fmaf
# (IEEE fused multiply-adds, not -ffp-contract), and 2^k applied in two steps: 2^(k>>1) added
# into p's exponent bits (exact: the product stays normal), then a multiplication by the
# normal 2^(k - (k>>1)), the one rounding (also into denormals or inf). Below -104 exp
# rounds to 0 and above 89 to inf: two selects on x at the end give those, overriding
# whatever the arithmetic made of a huge or infinite x, and NaN passes both. (The first
# version clamped x to [-104, 89] before the arithmetic and multiplied by two powers of
# two: gcc vectorises two clamps in a row into eight mask and blend instructions, against
# four for the selects. The two give the same bits on all 2^32 inputs, checked by a C
# loop over every pattern, vectorised and scalar; row softmax 4096x1024, one thread, C
# harness: 2.71-2.84 against 2.93-3.08 ms.) Checked against the correctly rounded exp on
# every 13th float32 bit pattern (1e9 values): at most 1 ulp (tests/inductor/test_vector_math.py
# checks every 997th and the edges). One row of a 1024-wide softmax: 5% faster (one
# thread's CPU time, in L2). Float64 exp stays libm's/libmvec's (a float64 polynomial
# needs about twice the terms; no workload here needs it). P's coefficients: a fit of (exp(r) - 1 - r) / r^2 on
# |r| <= ln2/2 minimising the largest relative error of exp(r) (least squares at 4000
# Chebyshev points, reweighted toward the worst points, Lawson's iteration), rounded to
# float32. Cephes' P has degree 5: one fused multiply-add more for the same bound. Against
# float64 exp rounded to float32 on all 2^32 inputs (C loop, vectorised): at most 1 ulp
# with either P, 17.35 million results off by one with this one against 17.24 million
# with Cephes'. Row softmax 4096x1024, one thread's CPU, C harness, 9 alternating rounds
# (load 3-4): 2.14 against 2.20 ms. P of degree 3 was 2.05 ms, but up to 2 ulp (106
# million results off), so it was left.


# Note [Vector math]
# libm's scalar expf/tanhf/erff calls keep a loop from vectorising (25x slower on the
# GELU*sigmoid+tanh mix). glibc's libmvec has SIMD versions of them (documented errors of
# at most 4 ulp, NaN/inf/zero handled like the scalar ones), but <math.h> declares them only
# under -ffast-math, which we do not use (Note [Exact math in kernels], codegen.py). Declaring the
# functions `omp declare simd` ourselves lets `#pragma omp simd` loops call them without any
# fast-math licence (names in parentheses: <tgmath.h> makes them macros). Where libmvec is
# missing, or a symbol is, the library builds without these lines.
VECTOR_FUNCTIONS = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
                    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                    "erf")
VECTOR_MATH = "".join(
    f"#pragma omp declare simd notinbranch\n{t} ({f}{suffix})({t});\n"
    for f in VECTOR_FUNCTIONS for t, suffix in (("float", "f"), ("double", ""))) + "".join(
    f"#pragma omp declare simd notinbranch\n{t} ({f}{suffix})({t}, {t});\n"
    for f in ("pow", "atan2") for t, suffix in (("float", "f"), ("double", "")))


# a call of a math function in a pointwise rule's C (Note [Streaming stores])
MATH_CALL = re.compile(r"\b(nt_exp|nt_rem|erfc|lgamma|fmod|%s)\(" % "|".join(VECTOR_FUNCTIONS + ("pow", "atan2")))
