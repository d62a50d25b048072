/* lib/verify/verify_x86.c: the AVX2 element loop of posenc_verify_row_check (verify_kern.h),
 * built for baseline x86-64 with a target attribute and taken on the avx2 and avx512 paths of
 * lib/core/cpu.c.
 *
 * Four pairs a step, in lanes: the portable loop's products and sums in its order, each
 * rounded on its own (this file is compiled with -ffp-contract=off and the target leaves FMA
 * out), a non-finite operand selected to an infinite error as there. The largest error, bound
 * and row magnitude are lane maxima folded at the end (a maximum is the same in any order; the
 * comparisons skip NaN as the portable ones do). An element within its bound and no worse than
 * the worst so far is the portable loop's common case, which changes nothing else; the others
 * of a block are ranked one by one in the portable order. A block of the scan with a non-finite
 * value, a block whose rotation or bound is a NaN (its sign and payload are the compiler's
 * choice of operand order) and the tails run the portable code. */
#include "lib/core/cpu_internal.h"
#include "lib/verify/verify_kern.h"

#if PE_CPU_X86
#include <immintrin.h>

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

#define AVX2 __attribute__((target("avx2")))

AVX2 static inline __m256d vabs(__m256d x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }

/* lanes with a finite x */
AVX2 static inline __m256d vfinite(__m256d x)
{
    return _mm256_cmp_pd(vabs(x), _mm256_set1_pd(DBL_MAX), _CMP_LE_OQ);
}

/* acc with the lanes of x that are larger (NaN never is) */
AVX2 static inline __m256d vmax_keep(__m256d acc, __m256d x, __m256d also)
{
    return _mm256_blendv_pd(acc, x, _mm256_and_pd(_mm256_cmp_pd(x, acc, _CMP_GT_OQ), also));
}

/* the largest lane of acc above *m */
AVX2 static inline void fold_max(__m256d acc, double *m)
{
    double a[4];
    _mm256_storeu_pd(a, acc);
    for (int l = 0; l < 4; l++)
        if (a[l] > *m)
            *m = a[l];
}

/* pairs i .. i + 3 of a gptj row: x[2i], x[2i + 1] as (first, second) in lane order */
AVX2 static inline void load_gptj(const double *x, __m256d *first, __m256d *second)
{
    __m256d lo = _mm256_loadu_pd(x), hi = _mm256_loadu_pd(x + 4);
    *first = _mm256_permute4x64_pd(_mm256_unpacklo_pd(lo, hi), 0xd8);
    *second = _mm256_permute4x64_pd(_mm256_unpackhi_pd(lo, hi), 0xd8);
}

AVX2 double pe_vrow_check_avx2(const pe_vrow_job *j, posenc_verify_row_result *o)
{
    const __m256d zero = _mm256_setzero_pd(), all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    const __m256d big = _mm256_set1_pd(DBL_MAX), inf = _mm256_set1_pd(INFINITY);
    double rowmax = 0;
    __m256d racc = zero;
    int k = 0;
    for (; k + 4 <= j->hd; k += 4) {
        __m256d av = vabs(_mm256_loadu_pd(j->exp + k));
        if (_mm256_movemask_pd(_mm256_cmp_pd(av, big, _CMP_LE_OQ)) != 0xf) {
            for (int m = k; m < k + 4; m++)
                pe_vrow_scan1(j, o, m, &rowmax);
            continue;
        }
        racc = vmax_keep(racc, av, all);
    }
    for (; k < j->hd; k++)
        pe_vrow_scan1(j, o, k, &rowmax);
    fold_max(racc, &rowmax);

    double base = j->extra * rowmax;
    const __m256d sc = _mm256_set1_pd(j->sc), ek = _mm256_set1_pd(j->ek);
    const __m256d u = _mm256_set1_pd(j->u), k2 = _mm256_set1_pd(j->k2);
    const __m256d mul = _mm256_set1_pd(j->mul), cs = _mm256_set1_pd(j->cs);
    const __m256d slk = _mm256_set1_pd(j->slk), eta = _mm256_set1_pd(j->eta);
    const __m256d vbase = _mm256_set1_pd(base), vfloor = _mm256_set1_pd(j->floor);
    __m256d eacc = zero, bacc = zero;
    int n = j->n, i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d x1, x2, u1, u2;
        if (j->gptj) {
            load_gptj(j->pre + 2 * i, &x1, &x2);
            load_gptj(j->exp + 2 * i, &u1, &u2);
        } else {
            x1 = _mm256_loadu_pd(j->pre + i);
            x2 = _mm256_loadu_pd(j->pre + i + n);
            u1 = _mm256_loadu_pd(j->exp + i);
            u2 = _mm256_loadu_pd(j->exp + i + n);
        }
        __m256d c = _mm256_mul_pd(_mm256_loadu_pd(j->cos_f + i), sc);
        __m256d s = _mm256_mul_pd(_mm256_loadu_pd(j->sin_f + i), sc);
        __m256d x1c = _mm256_mul_pd(x1, c), x2s = _mm256_mul_pd(x2, s);
        __m256d x2c = _mm256_mul_pd(x2, c), x1s = _mm256_mul_pd(x1, s);
        __m256d y1 = _mm256_sub_pd(x1c, x2s), y2 = _mm256_add_pd(x2c, x1s);
        __m256d e = j->ew ? _mm256_mul_pd(ek, _mm256_loadu_pd(j->ew + i)) : zero;
        __m256d ax = _mm256_add_pd(vabs(x1), vabs(x2));
        __m256d sl = j->slack
                         ? _mm256_mul_pd(_mm256_mul_pd(_mm256_loadu_pd(j->slack + i), slk), ax)
                         : zero;
        __m256d common = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(cs, ax), sl), eta);
        __m256d ee = _mm256_mul_pd(e, e), ay1 = vabs(y1), ay2 = vabs(y2);
        __m256d t1 = _mm256_add_pd(_mm256_mul_pd(u, ay1),
                                   _mm256_mul_pd(k2, _mm256_add_pd(vabs(x1c), vabs(x2s))));
        t1 = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(t1, _mm256_mul_pd(e, ay2)),
                                         _mm256_mul_pd(ee, ay1)), common);
        __m256d t2 = _mm256_add_pd(_mm256_mul_pd(u, ay2),
                                   _mm256_mul_pd(k2, _mm256_add_pd(vabs(x2c), vabs(x1s))));
        t2 = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(t2, _mm256_mul_pd(e, ay1)),
                                         _mm256_mul_pd(ee, ay2)), common);
        __m256d b1 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(mul, t1), vbase), vfloor);
        __m256d b2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(mul, t2), vbase), vfloor);
        /* a NaN's sign and payload follow the operand order the compiler picked for the
         * portable code: a block with a NaN rotation or bound runs that code */
        __m256d nan = _mm256_or_pd(_mm256_cmp_pd(y1, y2, _CMP_UNORD_Q),
                                   _mm256_cmp_pd(b1, b2, _CMP_UNORD_Q));
        if (_mm256_movemask_pd(nan)) {
            for (int l = i; l < i + 4; l++)
                pe_vrow_pair(j, base, l, o);
            continue;
        }
        __m256d fx = _mm256_and_pd(vfinite(x1), vfinite(x2));
        __m256d e1 = _mm256_blendv_pd(inf, vabs(_mm256_sub_pd(y1, u1)),
                                      _mm256_and_pd(vfinite(u1), fx));
        __m256d e2 = _mm256_blendv_pd(inf, vabs(_mm256_sub_pd(y2, u2)),
                                      _mm256_and_pd(vfinite(u2), fx));
        eacc = vmax_keep(eacc, e1, _mm256_cmp_pd(e1, big, _CMP_LE_OQ));
        eacc = vmax_keep(eacc, e2, _mm256_cmp_pd(e2, big, _CMP_LE_OQ));
        bacc = vmax_keep(bacc, b1, all);
        bacc = vmax_keep(bacc, b2, all);
        /* an element within its bound and no worse than the worst at the block's start stays
         * so at its turn: the worst ratio only grows, and its product with a bound above 0
         * with it (a bound of 0 passes with an error of 0 alone, whose ranking changes
         * nothing). Only the others are ranked. */
        __m256d r = _mm256_set1_pd(o->ratio);
        __m256d ok1 = _mm256_and_pd(_mm256_cmp_pd(e1, b1, _CMP_LE_OQ),
                                    _mm256_cmp_pd(e1, _mm256_mul_pd(r, b1), _CMP_LE_OQ));
        __m256d ok2 = _mm256_and_pd(_mm256_cmp_pd(e2, b2, _CMP_LE_OQ),
                                    _mm256_cmp_pd(e2, _mm256_mul_pd(r, b2), _CMP_LE_OQ));
        int m1 = _mm256_movemask_pd(ok1), m2 = _mm256_movemask_pd(ok2);
        if (o->worst_dim < 0)
            m1 = m2 = 0;
        if ((m1 & m2) == 0xf)
            continue;
        double ve1[4], vb1[4], vu1[4], vy1[4], ve2[4], vb2[4], vu2[4], vy2[4];
        _mm256_storeu_pd(ve1, e1);
        _mm256_storeu_pd(vb1, b1);
        _mm256_storeu_pd(vu1, u1);
        _mm256_storeu_pd(vy1, y1);
        _mm256_storeu_pd(ve2, e2);
        _mm256_storeu_pd(vb2, b2);
        _mm256_storeu_pd(vu2, u2);
        _mm256_storeu_pd(vy2, y2);
        for (int l = 0; l < 4; l++) {
            int a = j->gptj ? 2 * (i + l) : i + l, b = j->gptj ? a + 1 : i + l + n;
            if (!(m1 >> l & 1))
                pe_vrow_rank(o, a, ve1[l], vb1[l], vu1[l], vy1[l]);
            if (!(m2 >> l & 1))
                pe_vrow_rank(o, b, ve2[l], vb2[l], vu2[l], vy2[l]);
        }
    }
    for (; i < n; i++)
        pe_vrow_pair(j, base, i, o);
    fold_max(eacc, &o->abs_err);
    fold_max(bacc, &o->max_bound);
    return rowmax;
}
#endif
