/* mathx.c: double-double exp/log, correctly rounded float32 pow/cos/sin, and the fast exact
 * sin/cos row kernel used by the RoPE tables (see mathx.h). No file I/O, no globals other than
 * the test switch for the SIMD path. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "posenc/cpu.h"
#include "lib/core/mathx.h"

/* Every float expression must round each operation on its own, as torch does: GCC in ISO C mode
 * does not contract a * b + c into an fma (-ffp-contract=off); clang would unless told. */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

/* ln 2 and pi/2 as sums of three doubles (computed with mpmath at 400 bits). */
#define LN2_1 0x1.62e42fefa39efp-1
#define LN2_2 0x1.abc9e3b39803fp-56
#define LN2_3 0x1.7b57a079a1934p-111
#define PIO2_1 0x1.921fb54442d18p+0
#define PIO2_2 0x1.1a62633145c07p-54
#define PIO2_3 (-0x1.f1976b7ed8fbcp-110)
#define TWO_OVER_PI 0x1.45f306dc9c883p-1
/* x + 1.5*2^52 - 1.5*2^52 rounds x to the nearest integer (ties to even) for |x| < 2^51, and the
 * low mantissa bits of the intermediate hold that integer modulo 2^51 (two's complement). */
#define RND_MAGIC 0x1.8p52
/* Angles below this take the fast path; see the reduction comment in sincos_one. */
#define FAST_LIMIT 0x1p49

/* ---------------------------------------------------------------------------------------------
 * exp / log in double-double */

pe_dd pe_mathx_dd_exp(pe_dd x)
{
    if (isnan(x.hi))
        return x;
    if (x.hi > 709.0)
        return dd_from_d(INFINITY);
    if (x.hi < -745.0)
        return dd_from_d(0.0);
    /* x = k ln2 + r, |r| <= ln2/2; k ln2 subtracted with a three-part ln2 (two_prod is exact). */
    double k = nearbyint(x.hi / LN2_1);
    pe_dd r = dd_sub(x, dd_two_prod(k, LN2_1));
    r = dd_sub(r, dd_two_prod(k, LN2_2));
    r = dd_sub(r, dd_from_d(k * LN2_3));
    /* r / 2^10 (exact), so |r| < 3.4e-4 and nine Taylor terms leave < 2^-130. */
    r.hi *= 0x1p-10;
    r.lo *= 0x1p-10;
    /* expm1(r) = r (1 + r/2 (1 + r/3 (1 + ... (1 + r/9)))) */
    pe_dd t = dd_from_d(1.0);
    for (int n = 9; n >= 2; n--)
        t = dd_add(dd_from_d(1.0), dd_div_d(dd_mul(t, r), (double)n));
    pe_dd m = dd_mul(r, t);
    /* (1 + m)^2 - 1 = m (m + 2), ten times: keeps the small quantity instead of 1 + m. */
    for (int i = 0; i < 10; i++)
        m = dd_mul(m, dd_add(m, dd_from_d(2.0)));
    pe_dd e = dd_add(dd_from_d(1.0), m);
    e.hi = ldexp(e.hi, (int)k);
    e.lo = ldexp(e.lo, (int)k);
    return e;
}

pe_dd pe_mathx_dd_log(pe_dd x)
{
    if (!(x.hi > 0.0) || isinf(x.hi))
        return dd_from_d(x.hi == 0.0 ? -INFINITY : isinf(x.hi) ? INFINITY : NAN);
    /* Start from the long double log (64 bits on x86, 53 elsewhere) and take two Newton steps
     * y += x e^-y - 1; each squares the relative error. */
    pe_dd y = dd_from_ld(logl((long double)x.hi) + (long double)x.lo / (long double)x.hi);
    for (int i = 0; i < 2; i++) {
        pe_dd d = dd_sub(dd_mul(x, pe_mathx_dd_exp(dd_neg(y))), dd_from_d(1.0));
        y = dd_add(y, d);
    }
    return y;
}

float pe_mathx_dd_to_f32(pe_dd a)
{
    float f = (float)a.hi;
    double fd = (double)f;
    if (fd == a.hi || a.lo == 0.0 || isinf(f) || isnan(f))
        return f;
    /* hi rounds to f; hi + lo can round elsewhere only when hi is exactly halfway between f and
     * its neighbour g (|lo| <= ulp(hi)/2 cannot carry the sum across any other midpoint). */
    float g = nextafterf(f, a.hi > fd ? INFINITY : -INFINITY);
    if (a.hi - fd != (double)g - a.hi)
        return f;
    if ((a.lo > 0.0) == ((double)g > fd))
        return g;
    return f;
}

float pe_mathx_powf_cr(float x, float y)
{
    if (y == 0.0f || x == 1.0f)
        return 1.0f;
    if (!(x > 0.0f))
        return powf(x, y); /* not used by RoPE; keep libm's special cases */
    pe_dd l = pe_mathx_dd_log(dd_from_d((double)x));
    return pe_mathx_dd_to_f32(pe_mathx_dd_exp(dd_mul_d(l, (double)y)));
}

/* ---------------------------------------------------------------------------------------------
 * sin/cos kernel
 *
 * fdlibm/FreeBSD __kernel_sin and __kernel_cos: minimax polynomials on [-pi/4, pi/4] with
 * |error| < 2^-58 for the polynomial part; the tail argument y (the low word of the reduced
 * argument) is folded in to first order. The result is within ~0.6 ulp of double. */
#define S1 -1.66666666666666324348e-01
#define S2 8.33333333332248946124e-03
#define S3 -1.98412698298579493134e-04
#define S4 2.75573137070700676789e-06
#define S5 -2.50507602534068634195e-08
#define S6 1.58969099521155010221e-10
#define C1 4.16666666666666019037e-02
#define C2 -1.38888888888741095749e-03
#define C3 2.48015872894767294178e-05
#define C4 -2.75573143513906633035e-07
#define C5 2.08757232129817482790e-09
#define C6 -1.13596475577881948265e-11

/* Angles of 2^49 rad and more (no position below 2^48 reaches them unless inv_freq > 2): the
 * angle as the exact double ah = p*hi plus b = fma error + p*lo in long double, and
 * cos(ah + b) = cos(ah) cos(b) - sin(ah) sin(b) with glibc's cosl/sinl (exact Payne-Hanek
 * reduction of an argument that is exact here). Error ~2^-62 with a 64-bit long double. */
static void sincos_slow(double p, double hi, double lo, double *co, double *si)
{
    double ah = p * hi;
    long double b = (long double)fma(p, hi, -ah) + (long double)p * lo;
    long double ca = cosl((long double)ah), sa = sinl((long double)ah);
    long double cb = cosl(b), sb = sinl(b);
    *co = (double)(ca * cb - sa * sb);
    *si = (double)(sa * cb + ca * sb);
}

/* One element of the row kernel. The SIMD version below performs the same operations in the
 * same order, so both paths give bitwise identical results.
 *
 * Angle: A = p * (hi + lo) = ah + e + bh + bl, every part exact: ah = p*hi rounded, e its error
 * (fma), bh = p*lo rounded, bl its error (fma). The only error left is inv_freq's own (hi + lo
 * is ~2^-106 relative: below 2^-57 absolute for A < 2^49).
 *
 * Reduction (Cody-Waite with an FMA first step): k = the integer nearest to (ah + m) * 2/pi,
 * m = e + bh (one fma rounds the product to an integer: k is within 0.53 of A * 2/pi below 2^49,
 * so |r| < pi/4 + 0.05), and r = A - k*pi/2 with pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (~160 bits).
 *   t1 = fma(-k, PIO2_1, ah) is exact: for ah >= 1, ah and k*PIO2_1 are multiples of 2^-52 and
 *   |t1| <= |r| + |m| + k*|PIO2_1 - pi/2| < 1 for ah < 2^49 (k < 2^49 * 2/pi, |m| < 2^-3), so t1
 *   fits in 52 bits (for ah < 1, k is 0 or 1 and the same holds with 2^-53).
 *   k*PIO2_2 is split exactly by fma; k*PIO2_3 (< 2^-60) needs no split. The parts of similar size
 *   (t1, k*PIO2_2, e, bh) are added with two_sums, the small rest (below 2^-50) in plain doubles,
 *   and r is left as rh + rl: ~2^-100 absolute, at every angle below 2^49.
 * Quadrant: q = k mod 4 from the rounding trick's low bits, branch-free (swap, sign flips). */
static inline void sincos_one(double p, double hi, double lo, double *co, double *si)
{
    double ah = p * hi;
    if (!(fabs(ah) < FAST_LIMIT)) {
        sincos_slow(p, hi, lo, co, si);
        return;
    }
    double e = fma(p, hi, -ah), bh = p * lo, bl = fma(p, lo, -bh);
    double m = e + bh, bm = m - e, em = (e - (m - bm)) + (bh - bm);
    double kb = fma(ah + m, TWO_OVER_PI, RND_MAGIC);
    double k = kb - RND_MAGIC;
    uint64_t q;
    memcpy(&q, &kb, sizeof q);
    q &= 3;
    double t1 = fma(-k, PIO2_1, ah);
    double ph = k * PIO2_2, pl = fma(k, PIO2_2, -ph);
    double s1 = t1 - ph, b1 = s1 - t1, e1 = (t1 - (s1 - b1)) + (-ph - b1);
    double u = s1 + m, bu = u - s1, eu = (s1 - (u - bu)) + (m - bu);
    double tail = ((eu + e1) + (em + bl)) - pl - k * PIO2_3;
    double rh = u + tail, b2 = rh - u, rl = (u - (rh - b2)) + (tail - b2);

    double z = rh * rh, w = z * z;
    double r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    double v = z * rh;
    double sn = rh - ((z * (0.5 * rl - v * r) - rl) - v * S1);
    double rc = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    double hz = 0.5 * z, wc = 1.0 - hz;
    double cs = wc + (((1.0 - wc) - hz) + (z * rc - rh * rl));

    double sv = (q & 1) ? cs : sn, cv = (q & 1) ? sn : cs;
    uint64_t sb, cb;
    memcpy(&sb, &sv, sizeof sb);
    memcpy(&cb, &cv, sizeof cb);
    sb ^= (q & 2) << 62;       /* sin is negative in quadrants 2 and 3 */
    cb ^= ((q + 1) & 2) << 62; /* cos is negative in quadrants 1 and 2 */
    memcpy(si, &sb, sizeof sb);
    memcpy(co, &cb, sizeof cb);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_KERNEL 1
#include <immintrin.h>

#define AVX2F __attribute__((target("avx2,fma")))
#define AVX512F __attribute__((target("avx2,fma,avx512f")))

/* sincos_one on W lanes: the same operations in the same order (the vector operators of GCC
 * and clang for the plain arithmetic, the ISA's FMA where sincos_one calls fma); a block with
 * an angle past FAST_LIMIT takes sincos_one lane by lane, and so does the tail. ALLFAST(ah) is
 * 1 when every |ah| < FAST_LIMIT; QUAD(kb, sn, cs, s, c) swaps and signs by the quadrant in
 * kb's low bits and stores. */
#define SINCOS_ROW(NAME, ATTR, V, W, SET1, LOADU, FMS, FMA, FNMA, ALLFAST, QUAD)                   \
    ATTR static void NAME(const double *hi, const double *lo, size_t n, double p, double *c,      \
                          double *s)                                                              \
    {                                                                                             \
        const V vp = SET1(p), magic = SET1(RND_MAGIC), twoopi = SET1(TWO_OVER_PI);                \
        const V p1 = SET1(PIO2_1), p2 = SET1(PIO2_2), p3 = SET1(PIO2_3);                          \
        const V half = SET1(0.5), one = SET1(1.0);                                                \
        size_t i = 0;                                                                             \
        for (; i + W <= n; i += W) {                                                              \
            V h = LOADU(hi + i), l = LOADU(lo + i);                                               \
            V ah = vp * h;                                                                        \
            if (!ALLFAST(ah)) {                                                                   \
                for (size_t j = i; j < i + W; j++)                                                \
                    sincos_one(p, hi[j], lo[j], c + j, s + j);                                    \
                continue;                                                                         \
            }                                                                                     \
            V e = FMS(vp, h, ah), bh = vp * l, bl = FMS(vp, l, bh);                               \
            V m = e + bh, bm = m - e, em = (e - (m - bm)) + (bh - bm);                            \
            V kb = FMA(ah + m, twoopi, magic);                                                    \
            V k = kb - magic;                                                                     \
            V t1 = FNMA(k, p1, ah);                                                               \
            V ph = k * p2, pl = FMS(k, p2, ph);                                                   \
            V s1 = t1 - ph, b1 = s1 - t1, e1 = (t1 - (s1 - b1)) + (-ph - b1);                     \
            V u = s1 + m, bu = u - s1, eu = (s1 - (u - bu)) + (m - bu);                           \
            V tail = ((eu + e1) + (em + bl)) - pl - k * p3;                                       \
            V rh = u + tail, b2 = rh - u, rl = (u - (rh - b2)) + (tail - b2);                     \
                                                                                                  \
            V z = rh * rh, w = z * z;                                                             \
            V r = SET1(S2) + z * (SET1(S3) + z * SET1(S4)) + z * w * (SET1(S5) + z * SET1(S6));   \
            V v = z * rh;                                                                         \
            V sn = rh - ((z * (half * rl - v * r) - rl) - v * SET1(S1));                          \
            V rc = z * (SET1(C1) + z * (SET1(C2) + z * SET1(C3))) +                               \
                   w * w * (SET1(C4) + z * (SET1(C5) + z * SET1(C6)));                            \
            V hz = half * z, wc = one - hz;                                                       \
            V cs = wc + (((one - wc) - hz) + (z * rc - rh * rl));                                 \
            QUAD(kb, sn, cs, s + i, c + i);                                                       \
        }                                                                                         \
        for (; i < n; i++)                                                                        \
            sincos_one(p, hi[i], lo[i], c + i, s + i);                                            \
    }

AVX2F static inline int allfast4(__m256d ah)
{
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    __m256d ok = _mm256_cmp_pd(_mm256_and_pd(ah, absmask), _mm256_set1_pd(FAST_LIMIT),
                               _CMP_LT_OQ);
    return _mm256_movemask_pd(ok) == 0xf;
}

AVX2F static inline void quad4(__m256d kb, __m256d sn, __m256d cs, double *s, double *c)
{
    const __m256i i1 = _mm256_set1_epi64x(1), i2 = _mm256_set1_epi64x(2);
    __m256i q = _mm256_and_si256(_mm256_castpd_si256(kb), _mm256_set1_epi64x(3));
    __m256d odd = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(q, i1), i1));
    __m256d sv = _mm256_blendv_pd(sn, cs, odd), cv = _mm256_blendv_pd(cs, sn, odd);
    __m256d ssign = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_and_si256(q, i2), 62));
    __m256d csign = _mm256_castsi256_pd(
        _mm256_slli_epi64(_mm256_and_si256(_mm256_add_epi64(q, i1), i2), 62));
    _mm256_storeu_pd(s, _mm256_xor_pd(sv, ssign));
    _mm256_storeu_pd(c, _mm256_xor_pd(cv, csign));
}

AVX512F static inline int allfast8(__m512d ah)
{
    return _mm512_cmp_pd_mask(_mm512_abs_pd(ah), _mm512_set1_pd(FAST_LIMIT), _CMP_LT_OQ) == 0xff;
}

AVX512F static inline void quad8(__m512d kb, __m512d sn, __m512d cs, double *s, double *c)
{
    const __m512i i1 = _mm512_set1_epi64(1), i2 = _mm512_set1_epi64(2);
    __m512i q = _mm512_and_si512(_mm512_castpd_si512(kb), _mm512_set1_epi64(3));
    __mmask8 odd = _mm512_test_epi64_mask(q, i1);
    __m512d sv = _mm512_mask_blend_pd(odd, sn, cs), cv = _mm512_mask_blend_pd(odd, cs, sn);
    __m512i ssign = _mm512_slli_epi64(_mm512_and_si512(q, i2), 62);
    __m512i csign = _mm512_slli_epi64(_mm512_and_si512(_mm512_add_epi64(q, i1), i2), 62);
    _mm512_storeu_pd(s, _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(sv), ssign)));
    _mm512_storeu_pd(c, _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(cv), csign)));
}

SINCOS_ROW(sincos_row_avx2, AVX2F, __m256d, 4, _mm256_set1_pd, _mm256_loadu_pd, _mm256_fmsub_pd,
           _mm256_fmadd_pd, _mm256_fnmadd_pd, allfast4, quad4)
SINCOS_ROW(sincos_row_avx512, AVX512F, __m512d, 8, _mm512_set1_pd, _mm512_loadu_pd,
           _mm512_fmsub_pd, _mm512_fmadd_pd, _mm512_fnmadd_pd, allfast8, quad8)
#endif

static int simd_mode = -1;

/* the row kernels: AVX2 on the avx2 path, AVX-512 on the avx512 one (lib/core/cpu.c,
 * POSENC_CPU) */
static int simd_available(void)
{
#ifdef HAVE_AVX2_KERNEL
    return posenc_cpu_active() >= POSENC_CPU_AVX2;
#else
    return 0;
#endif
}

int pe_mathx_simd(int mode)
{
    simd_mode = mode;
    return mode != 0 && simd_available();
}

void pe_mathx_sincos_row(const double *hi, const double *lo, size_t n, double p, double *c,
                             double *s)
{
#ifdef HAVE_AVX2_KERNEL
    posenc_cpu_path cpu = posenc_cpu_active(); /* once per row */
    if (simd_mode != 0 && cpu >= POSENC_CPU_AVX2) {
        if (cpu == POSENC_CPU_AVX512)
            sincos_row_avx512(hi, lo, n, p, c, s);
        else
            sincos_row_avx2(hi, lo, n, p, c, s);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        sincos_one(p, hi[i], lo[i], c + i, s + i);
}

/* ---------------------------------------------------------------------------------------------
 * Float32 rows by angle addition (pe_mathx_step_row_f32).
 *
 * v = a * (ca cd - sa sd) for the cosine, a * (sa cd + ca sd) for the sine. The four inputs are
 * pe_mathx_sincos_row values, each within 2^-50 of its exact value (fast path ~0.6 ulp of
 * double; long double path a few ulp; all |values| <= 1), so each product is within 2^-49 +
 * 2^-100 of the exact product, each product rounds by at most 2^-53 and the sum by 2^-52:
 * |y - exact| <= 1.125 * 2^-48, and the anchor row's own value y0 (the exact path's) is within
 * 2^-50 of it, so |y - y0| <= 1.375 * 2^-48 (less with FMA contraction, which the SIMD paths
 * may use here: the bound covers both). Times a, with the two products' roundings:
 * |v - v0| < |a| * 2^-47. STEP_B = 2^-46 * max(1, |a|) covers that and the rounding of v +- B
 * itself (<= 2^-52 * max(1, |a|)); float rounding is monotone, so when v - B and v + B round
 * to the same float, (float)v0 is that float too: the exact path's bits. (B still holds with
 * inputs twice as far off, 2^-49.) Otherwise the index
 * goes to bad[] for the caller to compute exactly (~2^-25 of the values near 0.5; values
 * below ~2^-21 always). */
static double step_b(double a)
{
    double m = fabs(a);
    return 0x1p-46 * (m > 1.0 ? m : 1.0);
}

static inline int step_one(double ca, double sa, double cd, double sd, double a, double b,
                           float *c, float *s)
{
    double vc = (ca * cd - sa * sd) * a, vs = (sa * cd + ca * sd) * a;
    float cl = (float)(vc - b), ch = (float)(vc + b), sl = (float)(vs - b), sh = (float)(vs + b);
    uint32_t ucl, uch, usl, ush;
    memcpy(&ucl, &cl, 4);
    memcpy(&uch, &ch, 4);
    memcpy(&usl, &sl, 4);
    memcpy(&ush, &sh, 4);
    *c = (float)vc;
    *s = (float)vs;
    return ucl == uch && usl == ush;
}

#ifdef HAVE_AVX2_KERNEL
/* step_one on W lanes; SURE(lo, hi) is the lane mask of equal float bits */
#define STEP_ROW(NAME, ATTR, V, W, SET1, LOADU, CVT, FV, STOREF, SURE)                            \
    ATTR static size_t NAME(const double *ca, const double *sa, const double *cd,                 \
                            const double *sd, size_t n, double a, float *c, float *s,             \
                            uint16_t *bad)                                                        \
    {                                                                                             \
        const V va = SET1(a), vb = SET1(step_b(a));                                               \
        const unsigned all = (1u << W) - 1;                                                       \
        size_t i = 0, nb = 0;                                                                     \
        for (; i + W <= n; i += W) {                                                              \
            V xc = LOADU(ca + i), xs = LOADU(sa + i), dc = LOADU(cd + i), ds = LOADU(sd + i);     \
            V vc = (xc * dc - xs * ds) * va, vs = (xs * dc + xc * ds) * va;                       \
            FV cl = CVT(vc - vb), ch = CVT(vc + vb), sl = CVT(vs - vb), sh = CVT(vs + vb);        \
            unsigned ok = SURE(cl, ch) & SURE(sl, sh);                                            \
            STOREF(c + i, CVT(vc));                                                               \
            STOREF(s + i, CVT(vs));                                                               \
            if (ok != all)                                                                        \
                for (unsigned k = 0; k < W; k++)                                                  \
                    if (!(ok >> k & 1))                                                           \
                        bad[nb++] = (uint16_t)(i + k);                                            \
        }                                                                                         \
        for (; i < n; i++)                                                                        \
            if (!step_one(ca[i], sa[i], cd[i], sd[i], a, step_b(a), c + i, s + i))                \
                bad[nb++] = (uint16_t)i;                                                          \
        return nb;                                                                                \
    }

AVX2F static inline unsigned sure4(__m128 lo, __m128 hi)
{
    return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
        _mm_cmpeq_epi32(_mm_castps_si128(lo), _mm_castps_si128(hi))));
}

AVX512F static inline unsigned sure8(__m256 lo, __m256 hi)
{
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_castps_si256(lo), _mm256_castps_si256(hi))));
}

STEP_ROW(step_row_avx2, AVX2F, __m256d, 4, _mm256_set1_pd, _mm256_loadu_pd, _mm256_cvtpd_ps,
         __m128, _mm_storeu_ps, sure4)
STEP_ROW(step_row_avx512, AVX512F, __m512d, 8, _mm512_set1_pd, _mm512_loadu_pd,
         _mm512_cvtpd_ps, __m256, _mm256_storeu_ps, sure8)
#endif

size_t pe_mathx_step_row_f32(const double *ca, const double *sa, const double *cd,
                             const double *sd, size_t n, double a, float *c, float *s,
                             uint16_t *bad)
{
    if (!isfinite(a)) { /* every value to the exact path */
        for (size_t i = 0; i < n; i++)
            bad[i] = (uint16_t)i;
        return n;
    }
#ifdef HAVE_AVX2_KERNEL
    posenc_cpu_path cpu = posenc_cpu_active();
    if (simd_mode != 0 && cpu >= POSENC_CPU_AVX2)
        return (cpu == POSENC_CPU_AVX512 ? step_row_avx512 : step_row_avx2)(ca, sa, cd, sd, n, a,
                                                                             c, s, bad);
#endif
    size_t nb = 0;
    double b = step_b(a);
    for (size_t i = 0; i < n; i++)
        if (!step_one(ca[i], sa[i], cd[i], sd[i], a, b, c + i, s + i))
            bad[nb++] = (uint16_t)i;
    return nb;
}

/* ---------------------------------------------------------------------------------------------
 * Correctly rounded float32 cos/sin.
 *
 * Argument: a float x is a double, so the row kernel gets A = x exactly (p = 1, lo = 0), and for
 * |x| < 2^49 its result y is within ~1 ulp of double of cos(x) (the reduction is good to ~2^-100
 * absolute here, the polynomial to 2^-58, plus the final rounding); larger x take its long double
 * path, cosl/sinl of x itself. Rounding y to float gives
 * the correctly rounded result unless the exact value and y lie on different sides of a
 * float rounding midpoint; a midpoint is a double whose 29 bits below the float mantissa are
 * 1000...0, so when y's low 29 bits are within 16 units (16 ulps of double, far above the error)
 * of that pattern we recompute with cosl/sinl (64-bit mantissa, glibc's exact reduction) and
 * round that instead. Results below 2^-126 (float subnormals) also take the long double path.
 * The long double value could itself be ambiguous only if cos(x) were within ~2^-62 relative of
 * a midpoint; binary32 inputs are too few for that to happen (hardest known cases are ~2^-55).
 * tests/unit/test_rope.c compares against (float)cosl(x) exhaustively on whole binades. */
static float round_f32(double y, float x, int is_cos)
{
    if (fabs(y) >= 0x1p-126) {
        uint64_t b;
        memcpy(&b, &y, sizeof b);
        int64_t d = (int64_t)(b & 0x1fffffffu) - 0x10000000;
        if (d > 16 || d < -16)
            return (float)y;
    } else if (y == 0.0) {
        return is_cos ? (float)y : x; /* sin(+-0) = +-0: the only float with a zero sine */
    }
    return (float)(is_cos ? cosl((long double)x) : sinl((long double)x));
}

#ifdef HAVE_AVX2_KERNEL
/* round_f32 on the 64 values of y, 4 lanes at a time, when none of them needs more than
 * (float)y: every value's low 29 bits at least 17 away from a midpoint's, and 2^-126 <= |y| <=
 * inf (no NaN). Returns 0, having stored nothing, otherwise. */
AVX2F static int round_f32_64(const double *y, float *f)
{
    const __m256i low = _mm256_set1_epi64x(0x1fffffff), mid = _mm256_set1_epi64x(0x10000000);
    const __m256i lo = _mm256_set1_epi64x(-17), hi = _mm256_set1_epi64x(17);
    const __m256i absm = _mm256_set1_epi64x(0x7fffffffffffffffLL);
    const __m256i tiny = _mm256_set1_epi64x(0x3810000000000000LL); /* 2^-126 */
    const __m256i inf = _mm256_set1_epi64x(0x7ff0000000000000LL);
    __m256i hard = _mm256_setzero_si256();
    for (size_t j = 0; j < 64; j += 4) {
        __m256i b = _mm256_castpd_si256(_mm256_loadu_pd(y + j));
        __m256i d = _mm256_sub_epi64(_mm256_and_si256(b, low), mid);
        __m256i near = _mm256_and_si256(_mm256_cmpgt_epi64(d, lo), _mm256_cmpgt_epi64(hi, d));
        __m256i a = _mm256_and_si256(b, absm);
        __m256i odd = _mm256_or_si256(_mm256_cmpgt_epi64(tiny, a), _mm256_cmpgt_epi64(a, inf));
        hard = _mm256_or_si256(hard, _mm256_or_si256(near, odd));
    }
    if (!_mm256_testz_si256(hard, hard))
        return 0;
    for (size_t j = 0; j < 64; j += 4)
        _mm_storeu_ps(f + j, _mm256_cvtpd_ps(_mm256_loadu_pd(y + j)));
    return 1;
}
#endif

void pe_mathx_cossin_f32_row(const float *x, size_t n, float *c, float *s)
{
    static const double zeros[64];
    double xd[64], cd[64], sd[64];
    for (size_t off = 0; off < n; off += 64) {
        size_t m = n - off < 64 ? n - off : 64;
        for (size_t j = 0; j < m; j++)
            xd[j] = (double)x[off + j];
        pe_mathx_sincos_row(xd, zeros, m, 1.0, cd, sd);
#ifdef HAVE_AVX2_KERNEL
        if (m == 64 && simd_mode != 0 && simd_available() && round_f32_64(cd, c + off) &&
            round_f32_64(sd, s + off))
            continue; /* (a hard sin after easy cos: the loop below redoes both) */
#endif
        for (size_t j = 0; j < m; j++) {
            c[off + j] = round_f32(cd[j], x[off + j], 1);
            s[off + j] = round_f32(sd[j], x[off + j], 0);
        }
    }
}
