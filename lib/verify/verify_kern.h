/* lib/verify/verify_kern.h: the element loop of posenc_verify_row_check, the hot loop of
 * posenc verify (every element of every row, once for the reference and once for each runtime
 * profile still followed), on the CPU path of lib/core/cpu.c.
 *
 * pe_vrow_check scans the runtime's row (its largest finite magnitude, its non-finite elements)
 * and holds every rotated pair to its bound; the elements past the rotated width stay in
 * verify.c. The portable loop (verify_kern.c) is the reference; the AVX2 one (verify_x86.c,
 * taken on the avx2 and avx512 paths) gives its bits on every input: the same products and sums
 * in the same order, each rounded on its own (no FMA, -ffp-contract=off), the maxima taken
 * over lanes (a maximum does not depend on the order), and every block of four pairs where an
 * element is out of its bound or the worst so far replayed element by element in the portable
 * order. Internal (pe_). */
#ifndef PE_VERIFY_KERN_H
#define PE_VERIFY_KERN_H

#include <float.h>
#include <math.h>

#include "lib/core/cpu_internal.h"
#include "posenc/verify.h"

/* One row under one recipe and bound: what posenc_verify_row_check derives once per row. */
typedef struct pe_vrow_job {
    int hd, n, gptj;              /* head_dim, rotated pairs, pair layout */
    const double *pre, *exp;      /* the pre-RoPE row, the runtime's row (hd each) */
    const double *cos_f, *sin_f;  /* the recipe's tables at the row's position (n each) */
    const double *ew;             /* n: the float32 angle's weight of each pair (its error is
                                     ek * ew[i]), or NULL: no angle error */
    const double *slack;          /* n: absolute error allowed in cos and sin, or NULL */
    double sc;                    /* the recipe's scale of the tables */
    double ek;                    /* angle * u32 * |position| */
    double u, k2, mul, cs, slk;   /* u, 2u + u_in, scale (1 + 2u), 2 u32 |attention scaling|,
                                     |sc| */
    double eta, extra, floor;     /* the bound's terms (posenc_verify_tolerance) */
} pe_vrow_job;

/* Scan j->exp into o (zeroed, worst_dim and first_nonfinite -1) and note every rotated pair;
 * returns the row's largest finite magnitude. */
double pe_vrow_check(const pe_vrow_job *j, posenc_verify_row_result *o);

/* the loops of each path */
double pe_vrow_check_c(const pe_vrow_job *j, posenc_verify_row_result *o);
#if PE_CPU_X86
double pe_vrow_check_avx2(const pe_vrow_job *j, posenc_verify_row_result *o);
#endif

static inline void pe_vrow_nonfinite(double v, posenc_verify_row_result *o, int j)
{
    if (v != v)
        o->n_nan++;
    else
        o->n_inf++;
    if (o->first_nonfinite < 0)
        o->first_nonfinite = j;
}

/* element j that is out of its bound or the worst so far: error e against bound bd (value v,
 * reference y) */
static inline void pe_vrow_slow(posenc_verify_row_result *o, int j, double e, double bd, double v,
                                double y)
{
    double q = e != e || bd != bd ? INFINITY : bd > 0 ? e / bd : (e > 0 ? INFINITY : 0);
    if (!(q <= 1.0))
        o->n_bad++;
    if (q > o->ratio || o->worst_dim < 0) {
        o->ratio = q > o->ratio ? q : o->ratio;
        o->worst_dim = j;
        o->worst_err = e;
        o->worst_bound = bd;
        o->worst_value = v;
        o->worst_ref = y;
    }
}

/* element j past the maxima: the common case (within its bound, not the worst) returns */
static inline void pe_vrow_rank(posenc_verify_row_result *o, int j, double e, double bd, double v,
                                double y)
{
    if (e <= bd && e <= o->ratio * bd && o->worst_dim >= 0)
        return;
    pe_vrow_slow(o, j, e, bd, v, y);
}

/* note element j: the maxima, then its rank */
static inline void pe_vrow_note(posenc_verify_row_result *o, int j, double e, double bd, double v,
                                double y)
{
    if (e > o->abs_err && e <= DBL_MAX)
        o->abs_err = e;
    if (bd > o->max_bound)
        o->max_bound = bd;
    pe_vrow_rank(o, j, e, bd, v, y);
}

/* element j of the scan: a non-finite value counted, else the row's maximum */
static inline void pe_vrow_scan1(const pe_vrow_job *j, posenc_verify_row_result *o, int k,
                                 double *rowmax)
{
    double v = j->exp[k];
    if (!isfinite(v))
        pe_vrow_nonfinite(v, o, k);
    else if (fabs(v) > *rowmax)
        *rowmax = fabs(v);
}

/* pair i, both elements noted (the portable loop and the vector loops' tails) */
static inline void pe_vrow_pair(const pe_vrow_job *j, double base, int i,
                                posenc_verify_row_result *o)
{
    int a = j->gptj ? 2 * i : i, b = j->gptj ? 2 * i + 1 : i + j->n;
    double x1 = j->pre[a], x2 = j->pre[b], c = j->cos_f[i] * j->sc, s = j->sin_f[i] * j->sc;
    double y1 = x1 * c - x2 * s, y2 = x2 * c + x1 * s;
    /* the float32 angle's error: u32 (8 + |ln w| + acc i) |p w| */
    double e = j->ew ? j->ek * j->ew[i] : 0;
    double ax = fabs(x1) + fabs(x2);
    /* cos and sin to one float32 ulp: a correct implementation's evaluation, and for a
     * profile the last bit of its tables under another libm */
    double common = j->cs * ax + (j->slack ? j->slack[i] * j->slk * ax : 0) + j->eta;
    double b1 = j->mul * (j->u * fabs(y1) + j->k2 * (fabs(x1 * c) + fabs(x2 * s)) + e * fabs(y2) +
                          e * e * fabs(y1) + common) + base + j->floor;
    double b2 = j->mul * (j->u * fabs(y2) + j->k2 * (fabs(x2 * c) + fabs(x1 * s)) + e * fabs(y1) +
                          e * e * fabs(y2) + common) + base + j->floor;
    double u1 = j->exp[a], u2 = j->exp[b];
    if (isfinite(u1) && isfinite(x1) && isfinite(x2))
        pe_vrow_note(o, a, fabs(y1 - u1), b1, u1, y1);
    else
        pe_vrow_note(o, a, INFINITY, b1, u1, y1);
    if (isfinite(u2) && isfinite(x1) && isfinite(x2))
        pe_vrow_note(o, b, fabs(y2 - u2), b2, u2, y2);
    else
        pe_vrow_note(o, b, INFINITY, b2, u2, y2);
}

#endif
