/* mathx.h (internal): double-double arithmetic, correctly rounded float32 pow/cos/sin, and the
 * fast exact sin/cos kernel behind the RoPE tables.
 *
 * A double-double (dd) value is hi + lo with |lo| <= ulp(hi)/2: about 106 significant bits. The
 * inline operations below are the classic error-free transformations (Dekker, Knuth, Shewchuk);
 * two_prod uses fma(), which is exact and is a single instruction where the CPU has FMA. */
#ifndef POSENC_MATHX_H
#define POSENC_MATHX_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pe_dd {
    double hi, lo;
} pe_dd;

/* s + e == a + b exactly (Knuth). */
static inline pe_dd dd_two_sum(double a, double b)
{
    double s = a + b, bb = s - a;
    pe_dd r = { s, (a - (s - bb)) + (b - bb) };
    return r;
}

/* p + e == a * b exactly. */
static inline pe_dd dd_two_prod(double a, double b)
{
    double p = a * b;
    pe_dd r = { p, fma(a, b, -p) };
    return r;
}

static inline pe_dd dd_renorm(double hi, double lo)
{
    double s = hi + lo;
    pe_dd r = { s, lo - (s - hi) };
    return r;
}

static inline pe_dd dd_from_d(double a)
{
    pe_dd r = { a, 0.0 };
    return r;
}

/* Exact: a long double has at most 64 significant bits. */
static inline pe_dd dd_from_ld(long double a)
{
    double hi = (double)a;
    pe_dd r = { hi, (double)(a - (long double)hi) };
    return r;
}

static inline long double dd_to_ld(pe_dd a) { return (long double)a.hi + (long double)a.lo; }

static inline pe_dd dd_add(pe_dd a, pe_dd b)
{
    pe_dd s = dd_two_sum(a.hi, b.hi), t = dd_two_sum(a.lo, b.lo);
    s.lo += t.hi;
    s = dd_renorm(s.hi, s.lo);
    s.lo += t.lo;
    return dd_renorm(s.hi, s.lo);
}

static inline pe_dd dd_neg(pe_dd a)
{
    pe_dd r = { -a.hi, -a.lo };
    return r;
}

static inline pe_dd dd_sub(pe_dd a, pe_dd b) { return dd_add(a, dd_neg(b)); }

static inline pe_dd dd_mul(pe_dd a, pe_dd b)
{
    pe_dd p = dd_two_prod(a.hi, b.hi);
    p.lo += a.hi * b.lo + a.lo * b.hi;
    return dd_renorm(p.hi, p.lo);
}

static inline pe_dd dd_mul_d(pe_dd a, double b)
{
    pe_dd p = dd_two_prod(a.hi, b);
    p.lo += a.lo * b;
    return dd_renorm(p.hi, p.lo);
}

static inline pe_dd dd_div(pe_dd a, pe_dd b)
{
    double q1 = a.hi / b.hi;
    pe_dd r = dd_sub(a, dd_mul_d(b, q1));
    double q2 = r.hi / b.hi;
    r = dd_sub(r, dd_mul_d(b, q2));
    double q3 = r.hi / b.hi;
    pe_dd q = dd_renorm(q1, q2);
    return dd_add(q, dd_from_d(q3));
}

static inline pe_dd dd_div_d(pe_dd a, double b) { return dd_div(a, dd_from_d(b)); }

/* exp and log in double-double, relative error below ~2^-100 for the arguments RoPE needs
 * (|x| < 700; log of a positive finite value). */
pe_dd pe_mathx_dd_exp(pe_dd x);
pe_dd pe_mathx_dd_log(pe_dd x);

/* Round hi + lo to the nearest float (ties to even on the exact sum). */
float pe_mathx_dd_to_f32(pe_dd a);

/* x^y for float x > 0, correctly rounded to float (exp(y ln x) in double-double). */
float pe_mathx_powf_cr(float x, float y);

/* cos(p * (hi[i] + lo[i])) and sin(...) for i < n, each within ~1 ulp of double of the exact
 * value (the angle is carried exactly, so only hi + lo's own error, ~2^-106 relative, adds), for
 * integers 0 <= p <= 2^53. The fast path (exact angle in four doubles, Cody-Waite reduction with
 * a three-part pi/2 and an exact FMA first step, fdlibm polynomials) covers angles below 2^49 rad:
 * every position below 2^48 when inv_freq <= 2. Larger angles take a long double path (angle
 * addition on cosl/sinl of exact arguments), within a few ulp of double. Uses AVX2+FMA (4 lanes)
 * when the active CPU path is avx2, AVX-512 (8 lanes) when it is avx512 (posenc/cpu.h): the
 * same bits. */
void pe_mathx_sincos_row(const double *hi, const double *lo, size_t n, double p, double *c,
                             double *s);

/* The float32 row of cos and sin at position P0 + d by angle addition, from the double rows of
 * P0 (ca, sa) and of d (cd, sd), both pe_mathx_sincos_row's, times a (the attention scaling):
 * c[i] = (float)(a * (ca cd - sa sd)), s[i] likewise, each stored only as a value proven equal
 * to the exact path's (float)(a * pe_mathx_sincos_row at P0 + d): when every double within the
 * error bound of the step's result rounds to the same float (see mathx.c). The indices of the
 * other values (and every index when a is not finite) go to bad[] (room for n): the caller
 * computes those exactly. Returns their count. n <= 65536. */
size_t pe_mathx_step_row_f32(const double *ca, const double *sa, const double *cd,
                             const double *sd, size_t n, double a, float *c, float *s,
                             uint16_t *bad);

/* Correctly rounded float32 cos and sin of float arguments (n values). */
void pe_mathx_cossin_f32_row(const float *x, size_t n, float *c, float *s);

/* Tests: -1 = pick by CPU (default), 0 = force the portable path, 1 = SIMD if available.
 * Returns 1 when the SIMD path is active after the call. Not thread-safe. */
int pe_mathx_simd(int mode);

#endif
