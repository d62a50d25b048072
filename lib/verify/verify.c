/* verify.c: relative-invariance checks, row comparisons and the checks of the non-rotary
 * encodings. Computation only (see posenc/verify.h). The diagnosis of RoPE mistakes and its
 * explanations are in verify_diagnose.c; verify_rot.h has the pair layout both use. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/verify.h"
#include "lib/verify/verify_kern.h"
#include "lib/verify/verify_rot.h"

/* ---- random numbers ---- */

void posenc_verify_rng_seed(posenc_verify_rng *r, uint64_t seed)
{
    r->state = seed;
    r->spare = 0;
    r->has_spare = 0;
}

uint64_t posenc_verify_rng_next(posenc_verify_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double posenc_verify_rng_uniform(posenc_verify_rng *r)
{
    /* 53 random bits, shifted by half a step so 0 never occurs */
    return ((double)(posenc_verify_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double posenc_verify_rng_normal(posenc_verify_rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = posenc_verify_rng_uniform(r), u2 = posenc_verify_rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1));
    r->spare = rad * sin(2.0 * M_PI * u2);
    r->has_spare = 1;
    return rad * cos(2.0 * M_PI * u2);
}

/* ---- rotation ---- */

void posenc_verify_rotate(posenc_style style, int head_dim, int rotary_dim, const double *cos_f,
                          const double *sin_f, int inverse, const double *x, double *out)
{
    int n = rotary_dim / 2;
    if (2 * n > head_dim)
        n = head_dim / 2;
    double sg = inverse ? -1.0 : 1.0;
    for (int i = 0; i < n; i++) {
        int a, b;
        pe_pair_index(style, n, i, &a, &b);
        double x1 = x[a], x2 = x[b], c = cos_f[i], s = sg * sin_f[i];
        out[a] = x1 * c - x2 * s;
        out[b] = x2 * c + x1 * s;
    }
    if (out != x)
        for (int j = 2 * n; j < head_dim; j++)
            out[j] = x[j];
}

void posenc_verify_rotate_f32(posenc_style style, int head_dim, int rotary_dim,
                              const double *cos_f, const double *sin_f, const double *x,
                              double *out)
{
    int n = rotary_dim / 2;
    if (2 * n > head_dim)
        n = head_dim / 2;
    for (int i = 0; i < n; i++) {
        int a, b;
        pe_pair_index(style, n, i, &a, &b);
        float x1 = (float)x[a], x2 = (float)x[b], c = (float)cos_f[i], s = (float)sin_f[i];
        volatile float p1 = x1 * c, p2 = x2 * s, p3 = x2 * c, p4 = x1 * s;
        float o1 = p1 - p2, o2 = p3 + p4;
        out[a] = o1;
        out[b] = o2;
    }
    for (int j = 2 * n; j < head_dim; j++)
        out[j] = (float)x[j];
}

int posenc_verify_pair_freq(posenc_style style, int rotary_dim, int j)
{
    int n = rotary_dim / 2;
    if (j < 0 || j >= 2 * n)
        return -1;
    if (style == POSENC_STYLE_GPTJ)
        return j / 2;
    return j < n ? j : j - n;
}

/* The reference for the tables, built unlike lib/core/mathx.c's kernel (no fma, no pi/2 split):
 * the angle in revolutions, t = pos * inv / (2 pi), of which only the fraction matters.
 *
 * w = inv / (2 pi) = (inv_hi + inv_lo) * (C1 + C2 + C3), 1/(2 pi) as three doubles (159 bits),
 * to ~2^-120 relative with a 64-bit long double: Dekker's product gives inv_hi * C1 exactly as
 * wh + e, the rest is small. pos * wh is then taken apart exactly: pos = p1 2^24 + p0 and
 * wh = wa + wb (Veltkamp, <= 32 bits each), so each of the four products has at most 56
 * significant bits, is exact, and so is its fraction x - rintl(x). The fractions, pos * wl
 * and the final multiplication by 2 pi (|angle| <= pi) add ~2^-62 each: the reference is good to
 * ~1e-18 at every position below 2^48 (to ~1e-16 where long double is double). */
#define INV_2PI_1 0x1.45f306dc9c883p-3
#define INV_2PI_2 (-0x1.6b01ec5417056p-57)
#define INV_2PI_3 (-0x1.6447e493ad4cep-111)
#define TWO_PI_L 0x1.921fb54442d1846ap+2L

/* a = hi + lo exactly (Veltkamp), hi with the upper half of the mantissa */
static void split_ld(long double a, long double *hi, long double *lo)
{
    const long double c = ldexpl(1.0L, (LDBL_MANT_DIG + 1) / 2) + 1.0L;
    long double t = c * a;
    *hi = t - (t - a);
    *lo = a - *hi;
}

/* p + e == a * b exactly (Dekker) */
static void two_prod_ld(long double a, long double b, long double *p, long double *e)
{
    long double ah, al, bh, bl;
    split_ld(a, &ah, &al);
    split_ld(b, &bh, &bl);
    *p = a * b;
    *e = ((ah * bh - *p) + ah * bl + al * bh) + al * bl;
}

static long double frac_ld(long double x) { return x - rintl(x); }

void posenc_verify_cossin_ld(const posenc_rope_params *p, int64_t pos, long double *cos_f,
                             long double *sin_f)
{
    long double sc = p->attention_scaling;
    long double p1 = (long double)(pos >> 24) * 0x1p24L, p0 = (long double)(pos & 0xffffff);
    for (int i = 0; i < p->n_freq; i++) {
        long double hi = p->inv_hi[i], lo = p->inv_lo[i], wh, e;
        two_prod_ld(hi, INV_2PI_1, &wh, &e);
        long double rest = e + hi * INV_2PI_2 + lo * INV_2PI_1 + (hi * INV_2PI_3 + lo * INV_2PI_2);
        long double s = wh + rest, wl = rest - (s - wh), wa, wb;
        wh = s;
        split_ld(wh, &wa, &wb);
        long double f = frac_ld(p1 * wa) + frac_ld(p1 * wb) + frac_ld(p0 * wa) +
                        frac_ld(p0 * wb) + (long double)pos * wl;
        long double a = frac_ld(f) * TWO_PI_L;
        cos_f[i] = cosl(a) * sc;
        sin_f[i] = sinl(a) * sc;
    }
}

/* ---- invariance ---- */

int posenc_verify_offset_grid(int64_t limit, int64_t *offsets)
{
    int n = 0;
    if (limit < 0)
        return 0;
    offsets[n++] = 0;
    for (int64_t o = 1; o < limit && n < POSENC_VERIFY_MAX_OFFSETS - 1; o *= 2)
        offsets[n++] = o;
    if (limit > 0)
        offsets[n++] = limit;
    return n;
}

static double round_f32(double x) { return (double)(float)x; }

struct inv_scratch {
    double *cq, *sq, *ck, *sk;       /* n_freq each */
    double *cqe, *sqe, *cke, *ske;   /* exact tables, unrounded */
    double *qr, *kr;                 /* head_dim */
    double *band0;                   /* n_pairs * 3 * 2 base partial scores (exact, hf) */
    double *s0;                      /* n_pairs * 2 */
};

/* The long double tables of the positions the invariance check visits, kept by position: the
 * pairs of a check share their positions (posenc_verify_rope_config puts every n at 0 and m on a
 * grid of seven distances), and each position's table is compared three times (exact table,
 * its float32 rounding, hf), so most look-ups are hits. A slot is position -> cos[n_freq],
 * sin[n_freq] (32 slots: 2^5, the top five bits of a Fibonacci hash of the position); the same
 * values as calling posenc_verify_cossin_ld each time. */
#define LD_SLOTS 32
struct ld_memo {
    int64_t pos[LD_SLOTS];
    int used[LD_SLOTS];
    long double *tab; /* LD_SLOTS * 2 * n_freq */
    int nf;
};

static size_t ld_slot(int64_t pos) { return (size_t)((uint64_t)pos * 0x9e3779b97f4a7c15u >> 59); }

/* the table of pos; keep: a position whose slot must not be taken (the other position of the
 * pair, whose table the caller still holds), when it differs from pos. The spare slot after
 * the LD_SLOTS cached ones takes pos then, uncached. */
static const long double *ld_table(struct ld_memo *mo, const posenc_rope_params *p, int64_t pos,
                                   int64_t keep)
{
    size_t slot = ld_slot(pos);
    long double *t = mo->tab + slot * 2 * (size_t)mo->nf;
    if (keep != pos && ld_slot(keep) == slot) {
        t = mo->tab + (size_t)LD_SLOTS * 2 * (size_t)mo->nf;
        posenc_verify_cossin_ld(p, pos, t, t + mo->nf);
        return t;
    }
    if (!mo->used[slot] || mo->pos[slot] != pos) {
        posenc_verify_cossin_ld(p, pos, t, t + mo->nf);
        mo->pos[slot] = pos;
        mo->used[slot] = 1;
    }
    return t;
}

static void table_errors(const posenc_rope_params *p, const long double *lcs, const double *c_used,
                         const double *s_used, double *err)
{
    const long double *lc = lcs, *ls = lcs + p->n_freq;
    for (int i = 0; i < p->n_freq; i++) {
        double e1 = fabs((double)((long double)c_used[i] - lc[i]));
        double e2 = fabs((double)((long double)s_used[i] - ls[i]));
        if (e1 > *err)
            *err = e1;
        if (e2 > *err)
            *err = e2;
    }
}

/* scores of one pair under one mode: total and per band */
static void mode_score(const posenc_rope_params *p, int hd, const double *q, const double *k,
                       const double *cq, const double *sq, const double *ck, const double *sk,
                       double *qr, double *kr, double *total, double band[3])
{
    int rd = pe_rot_width(p);
    posenc_verify_rotate_f32(p->style, hd, rd, cq, sq, q, qr);
    posenc_verify_rotate_f32(p->style, hd, rd, ck, sk, k, kr);
    double t = 0;
    band[0] = band[1] = band[2] = 0;
    int n = rd / 2;
    for (int j = 0; j < hd; j++) {
        double v = qr[j] * kr[j];
        t += v;
        int i = posenc_verify_pair_freq(p->style, rd, j);
        if (i >= 0)
            band[(int)((int64_t)i * 3 / (n > 0 ? n : 1))] += v;
    }
    *total = t;
}

posenc_status posenc_verify_invariance(const posenc_rope_params *p, const posenc_invariance_input *in,
                                       posenc_invariance_result *out, posenc_error *err)
{
    if (in->head_dim != p->head_dim)
        return posenc_seterr(err, POSENC_EINVAL, "vectors have %d elements but head_dim is %d",
                             in->head_dim, p->head_dim);
    if (in->n_pairs == 0)
        return posenc_seterr(err, POSENC_EINVAL, "no score pairs to check");
    int64_t maxbase = 0, minbase = INT64_MAX;
    for (size_t s = 0; s < in->n_pairs; s++) {
        if (in->m[s] < 0 || in->n[s] < 0)
            return posenc_seterr(err, POSENC_EINVAL, "negative position in score pairs");
        int64_t lo = in->m[s] < in->n[s] ? in->m[s] : in->n[s];
        int64_t hi = in->m[s] < in->n[s] ? in->n[s] : in->m[s];
        maxbase = hi > maxbase ? hi : maxbase;
        minbase = lo < minbase ? lo : minbase;
    }
    if (maxbase >= in->max_position)
        return posenc_seterr(err, POSENC_EINVAL,
                             "position %lld is not below the maximum position %lld",
                             (long long)maxbase, (long long)in->max_position);
    memset(out, 0, sizeof *out);
    /* the pairs moved so that the earliest position is 0, then shifted by each offset; the
     * offset minbase (where the pairs were) is always on the grid */
    out->n_offsets = posenc_verify_offset_grid(in->max_position - 1 - (maxbase - minbase),
                                               out->offset);
    int at = 0;
    while (at < out->n_offsets && out->offset[at] < minbase)
        at++;
    if ((at == out->n_offsets || out->offset[at] != minbase) &&
        out->n_offsets < POSENC_VERIFY_MAX_OFFSETS) {
        memmove(out->offset + at + 1, out->offset + at,
                (size_t)(out->n_offsets - at) * sizeof out->offset[0]);
        out->offset[at] = minbase;
        out->n_offsets++;
    }

    int hd = in->head_dim, nf = p->n_freq > 0 ? p->n_freq : 1;
    struct inv_scratch w;
    double *mem = malloc(sizeof(double) * (8 * (size_t)nf + 2 * (size_t)hd + 8 * in->n_pairs));
    struct ld_memo memo = { .nf = nf };
    long double *lmem = malloc(sizeof(long double) * 2 * (size_t)nf * (LD_SLOTS + 1));
    if (!mem || !lmem) {
        free(mem);
        free(lmem);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    w.cq = mem;
    w.sq = w.cq + nf;
    w.ck = w.sq + nf;
    w.sk = w.ck + nf;
    w.cqe = w.sk + nf;
    w.sqe = w.cqe + nf;
    w.cke = w.sqe + nf;
    w.ske = w.cke + nf;
    w.qr = w.ske + nf;
    w.kr = w.qr + hd;
    w.band0 = w.kr + hd;
    w.s0 = w.band0 + 6 * in->n_pairs;
    memo.tab = lmem;

    for (int oi = 0; oi < out->n_offsets; oi++) {
        int64_t o = out->offset[oi];
        for (size_t s = 0; s < in->n_pairs; s++) {
            const double *q = in->q + s * (size_t)hd, *k = in->k + s * (size_t)hd;
            int64_t pm = in->m[s] - minbase + o, pn = in->n[s] - minbase + o;
            double qn = 0, kn = 0;
            for (int j = 0; j < hd; j++) {
                qn += q[j] * q[j];
                kn += k[j] * k[j];
            }
            double norm = sqrt(qn) * sqrt(kn) / sqrt((double)hd);
            if (norm <= 0)
                norm = 1;
            const long double *lm = ld_table(&memo, p, pm, pm), *ln = ld_table(&memo, p, pn, pm);
            for (int mode = 0; mode < 2; mode++) {
                posenc_invariance_mode *md = mode == 0 ? &out->exact : &out->hf;
                posenc_precision prec = mode == 0 ? POSENC_PREC_EXACT : POSENC_PREC_HF;
                posenc_rope_cossin(p, prec, pm, w.cqe, w.sqe);
                posenc_rope_cossin(p, prec, pn, w.cke, w.ske);
                for (int i = 0; i < p->n_freq; i++) {
                    /* the exact tables as a runtime stores them: rounded once to float32 */
                    w.cq[i] = mode == 0 ? round_f32(w.cqe[i]) : w.cqe[i];
                    w.sq[i] = mode == 0 ? round_f32(w.sqe[i]) : w.sqe[i];
                    w.ck[i] = mode == 0 ? round_f32(w.cke[i]) : w.cke[i];
                    w.sk[i] = mode == 0 ? round_f32(w.ske[i]) : w.ske[i];
                }
                if (mode == 0) {
                    double e = out->exact_table_f64_err;
                    table_errors(p, lm, w.cqe, w.sqe, &e);
                    table_errors(p, ln, w.cke, w.ske, &e);
                    out->exact_table_f64_err = e;
                }
                table_errors(p, lm, w.cq, w.sq, &md->table_err[oi]);
                table_errors(p, ln, w.ck, w.sk, &md->table_err[oi]);
                double tot, band[3];
                mode_score(p, hd, q, k, w.cq, w.sq, w.ck, w.sk, w.qr, w.kr, &tot, band);
                out->scores++;
                double *b0 = w.band0 + (s * 2 + (size_t)mode) * 3;
                double *t0 = w.s0 + s * 2 + (size_t)mode;
                if (oi == 0) {
                    *t0 = tot;
                    memcpy(b0, band, sizeof band);
                    continue;
                }
                double d = fabs(tot - *t0);
                if (d > md->max_abs)
                    md->max_abs = d;
                d /= norm;
                md->rms[oi] += d * d;
                if (d > md->dev[oi])
                    md->dev[oi] = d;
                for (int b = 0; b < 3; b++) {
                    double db = fabs(band[b] - b0[b]) / norm;
                    if (db > md->band[oi][b])
                        md->band[oi][b] = db;
                }
            }
        }
    }
    out->scores /= 2;
    for (int mode = 0; mode < 2; mode++) {
        posenc_invariance_mode *md = mode == 0 ? &out->exact : &out->hf;
        for (int oi = 0; oi < out->n_offsets; oi++) {
            md->rms[oi] = sqrt(md->rms[oi] / (double)in->n_pairs);
            if (md->dev[oi] > md->max_dev)
                md->max_dev = md->dev[oi];
            if (md->table_err[oi] > md->max_table_err)
                md->max_table_err = md->table_err[oi];
            for (int b = 0; b < 3; b++)
                if (md->band[oi][b] > md->band_max[b])
                    md->band_max[b] = md->band[oi][b];
        }
    }
    free(mem);
    free(lmem);
    return POSENC_OK;
}

posenc_status posenc_verify_rope_config(const posenc_rope_params *p, int64_t max_position,
                                        uint64_t seed, int samples,
                                        posenc_invariance_result *out, posenc_error *err)
{
    static const int64_t dist_grid[] = { 0, 1, 7, 64, 1000, 4096, 32768 };
    if (max_position < 2)
        return posenc_seterr(err, POSENC_EINVAL, "maximum position %lld is too small to check",
                             (long long)max_position);
    if (samples < 1)
        return posenc_seterr(err, POSENC_EINVAL, "samples must be at least 1");
    int nd = 0;
    int64_t dists[8];
    for (size_t i = 0; i < sizeof dist_grid / sizeof dist_grid[0]; i++)
        if (dist_grid[i] <= 1 || dist_grid[i] < max_position / 2)
            dists[nd++] = dist_grid[i];
    size_t np = (size_t)nd * (size_t)samples, hd = (size_t)p->head_dim;
    if (hd == 0 || np > ((size_t)1 << 24) / hd)
        return posenc_seterr(err, POSENC_EINVAL, "too many samples (%d) for head_dim %d", samples,
                             p->head_dim);
    double *q = malloc(np * hd * sizeof *q), *k = malloc(np * hd * sizeof *k);
    int64_t *m = malloc(np * sizeof *m), *n = malloc(np * sizeof *n);
    posenc_status st = POSENC_OK;
    if (!q || !k || !m || !n) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    posenc_verify_rng rng;
    posenc_verify_rng_seed(&rng, seed);
    for (size_t s = 0; s < np; s++) {
        m[s] = dists[s / (size_t)samples];
        n[s] = 0;
        for (size_t j = 0; j < hd; j++) {
            q[s * hd + j] = posenc_verify_rng_normal(&rng);
            k[s * hd + j] = posenc_verify_rng_normal(&rng);
        }
    }
    posenc_invariance_input in = { np, p->head_dim, q, k, m, n, max_position };
    st = posenc_verify_invariance(p, &in, out, err);
out:
    free(q);
    free(k);
    free(m);
    free(n);
    return st;
}

/* ---- row comparison ---- */

void posenc_verify_recipe_init(posenc_verify_recipe *r, const posenc_rope_params *p)
{
    r->params = *p;
    r->prec = POSENC_PREC_EXACT;
    r->shift = 0;
    r->table_dtype = -1;
    r->angle_dtype = -1;
    r->scale = 1.0;
    r->no_rotation = 0;
    for (int i = 0; i < p->n_freq && i < POSENC_MAX_FREQ; i++) {
        double w = fabs(p->inv_hi[i] > 0 ? p->inv_hi[i] : (double)p->inv_freq_f32[i]);
        r->angle_w[i] = w > 0 ? w * (8.0 + fabs(log(w))) : 0;
    }
}

static double round_to(double x, int dt)
{
    if (dt == POSENC_DT_BF16)
        return posenc_bf16_to_f32(posenc_f64_to_bf16(x));
    if (dt == POSENC_DT_F16)
        return posenc_f16_to_f32(posenc_f64_to_f16(x));
    return x;
}

/* The angle computed in a 16-bit dtype (the inv_freq buffer and the positions cast to the model
 * dtype, their product rounded to it), cos and sin of that angle in float32, then the attention
 * scaling: the mistake transformers' rotary classes guard against by keeping inv_freq in
 * float32 with autocast off. */
static void angle16_cossin(const posenc_verify_recipe *r, int64_t pos, double *cos_f,
                           double *sin_f)
{
    const posenc_rope_params *p = &r->params;
    double t = round_to((double)pos, r->angle_dtype);
    float sc = p->attention_scaling_f32 > 0 ? p->attention_scaling_f32 : 1.0f;
    for (int i = 0; i < p->n_freq; i++) {
        double w = p->inv_hi[i] > 0 ? p->inv_hi[i] : (double)p->inv_freq_f32[i];
        float a = (float)round_to(t * round_to(w, r->angle_dtype), r->angle_dtype);
        cos_f[i] = (double)(float)(cosf(a) * sc);
        sin_f[i] = (double)(float)(sinf(a) * sc);
    }
}

void posenc_verify_recipe_cossin(const posenc_verify_recipe *r, int64_t pos, double *cos_f,
                                 double *sin_f)
{
    if (r->no_rotation) { /* the identity: what a runtime that skipped RoPE hands on */
        for (int i = 0; i < r->params.n_freq; i++) {
            cos_f[i] = 1.0;
            sin_f[i] = 0.0;
        }
        return;
    }
    int64_t q = pos + r->shift;
    if (q < 0)
        q = 0;
    if (r->angle_dtype == POSENC_DT_BF16 || r->angle_dtype == POSENC_DT_F16)
        angle16_cossin(r, q, cos_f, sin_f);
    else
        posenc_rope_cossin(&r->params, r->prec, q, cos_f, sin_f);
    if (r->table_dtype == POSENC_DT_BF16 || r->table_dtype == POSENC_DT_F16)
        for (int i = 0; i < r->params.n_freq; i++) {
            cos_f[i] = round_to(cos_f[i], r->table_dtype);
            sin_f[i] = round_to(sin_f[i], r->table_dtype);
        }
}

#define U32 0x1p-24 /* float32's unit roundoff */

/* unit roundoff and subnormal step of a dump dtype */
static void dtype_rounding(posenc_dtype dt, double *u, double *sub)
{
    switch (dt) {
    case POSENC_DT_F16:
        *u = 0x1p-11;
        *sub = 0x1p-24;
        return;
    case POSENC_DT_BF16:
        *u = 0x1p-8;
        *sub = 0x1p-133;
        return;
    case POSENC_DT_F64:
        *u = 0x1p-53;
        *sub = 0x1p-1074;
        return;
    default:
        *u = U32;
        *sub = 0x1p-149;
    }
}

#ifndef PE_BOUND_SCALE
#define PE_BOUND_SCALE 1.0 /* a build for the corpus' mutation check sets 0.5 or 2 */
#endif

void posenc_verify_tolerance_init(posenc_verify_tolerance *t, posenc_dtype pre_dt,
                                  posenc_dtype out_dt, int angle)
{
    double u, sub, ui, subi;
    dtype_rounding(out_dt, &u, &sub);
    dtype_rounding(pre_dt, &ui, &subi);
    /* runtimes compute in float32 at best: an f64 dump is held to float32 arithmetic */
    double uc = u > U32 ? u : U32, subc = sub > 0x1p-149 ? sub : 0x1p-149;
    memset(t, 0, sizeof *t);
    t->u = uc;
    t->u_in = ui < u ? uc : 0; /* the pre-RoPE rows are wider than the output */
    t->eta = 2 * subc;         /* half a subnormal step for each of four roundings */
    t->angle = angle ? 1.0 : 0.0;
    t->scale = PE_BOUND_SCALE;
}

/* the per-row terms of the bound here; the element loop, on the CPU path, in verify_kern.h */
void posenc_verify_row_check(const posenc_verify_recipe *r, const posenc_verify_tolerance *t,
                             int64_t pos, const double *cos_f, const double *sin_f,
                             const double *pre, const double *expected,
                             posenc_verify_row_result *o)
{
    const posenc_rope_params *p = &r->params;
    int hd = p->head_dim, rd = pe_rot_width(p), n = rd / 2;
    double cbuf[POSENC_MAX_FREQ], sbuf[POSENC_MAX_FREQ], ew[POSENC_MAX_FREQ];
    memset(o, 0, sizeof *o);
    o->worst_dim = -1;
    o->first_nonfinite = -1;
    if (!cos_f || !sin_f) {
        posenc_verify_recipe_cossin(r, pos, cbuf, sbuf);
        cos_f = cbuf;
        sin_f = sbuf;
    }
    double sc = r->scale, u = t->u;
    double sig = fabs(p->attention_scaling * sc);
    double p_eff = r->no_rotation ? 0 : (double)(pos + r->shift);
    pe_vrow_job j = { hd, n, p->style == POSENC_STYLE_GPTJ, pre, expected, cos_f, sin_f,
                      NULL, t->slack, sc, 0, u, 2 * u + t->u_in, t->scale * (1 + 2 * u),
                      2 * U32 * sig, fabs(sc), t->eta, t->extra, t->floor };
    if (t->angle > 0) {
        /* the float32 angle's error: u32 (8 + |ln w| + acc i) |p w| */
        j.ek = t->angle * U32 * fabs(p_eff);
        for (int i = 0; i < n; i++) {
            double w = p->inv_hi[i] > 0 ? p->inv_hi[i] : (double)p->inv_freq_f32[i];
            ew[i] = r->angle_w[i] + t->angle_acc * i * fabs(w);
        }
        j.ew = ew;
    }
    double rowmax = pe_vrow_check(&j, o);
    double base = t->extra * rowmax;
    for (int k = 2 * n; k < hd; k++) {
        double v = expected[k], x = pre[k];
        double bd = t->scale * (t->u_in * fabs(x) + t->eta) + base + t->floor;
        pe_vrow_note(o, k, isfinite(v) && isfinite(x) ? fabs(x - v) : INFINITY, bd, v, x);
    }
    o->rel_err = o->abs_err / (rowmax > 0 ? rowmax : 1.0);
}

void posenc_verify_row_error(const posenc_verify_recipe *r, const posenc_verify_tolerance *t,
                             int64_t pos, const double *cos_f, const double *sin_f,
                             const double *pre, const double *expected, double *scratch,
                             double *abs_err, double *rel_err, double *ratio)
{
    (void)scratch;
    posenc_verify_row_result o;
    posenc_verify_row_check(r, t, pos, cos_f, sin_f, pre, expected, &o);
    *abs_err = o.abs_err;
    *rel_err = o.rel_err;
    *ratio = o.ratio;
}

/* ordered integer of a value's bit pattern in dtype dt: adjacent values differ by 1 */
static int64_t ordered_bits(double v, posenc_dtype dt)
{
    int64_t b;
    int bits;
    switch (dt) {
    case POSENC_DT_F16:
        b = posenc_f64_to_f16(v);
        bits = 16;
        break;
    case POSENC_DT_BF16:
        b = posenc_f64_to_bf16(v);
        bits = 16;
        break;
    case POSENC_DT_F64: {
        uint64_t x;
        memcpy(&x, &v, 8);
        return (x >> 63) ? -(int64_t)(x & 0x7fffffffffffffffULL) : (int64_t)x;
    }
    default: {
        float f = (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        b = x;
        bits = 32;
    }
    }
    int64_t sign = (int64_t)1 << (bits - 1);
    return (b & sign) ? -(b & (sign - 1)) : b;
}

uint64_t posenc_verify_ulp_distance(double a, double b, posenc_dtype dt)
{
    if (a != a || b != b)
        return a != a && b != b ? 0 : UINT64_MAX;
    int64_t x = ordered_bits(a, dt), y = ordered_bits(b, dt);
    if ((x < 0 && y > 0 && y > INT64_MAX + x) || (x > 0 && y < 0 && x > INT64_MAX + y))
        return UINT64_MAX;
    return x > y ? (uint64_t)(x - y) : (uint64_t)(y - x);
}

/* ---- non-rotary encodings ---- */

static void bias_note(posenc_bias_check_result *o, double err, double rel, double tol, int64_t i,
                      int64_t j)
{
    o->checked++;
    if (err > o->max_abs_err || err != err) {
        o->max_abs_err = err;
        o->worst_i = i;
        o->worst_j = j;
    }
    if (rel > o->max_rel_err || rel != rel)
        o->max_rel_err = rel;
    if (!(err <= tol))
        o->violations++;
}

/* sampled indices in [0, limit]: everything up to 64, then powers of two and limit */
static size_t index_grid(int64_t limit, int64_t *out, size_t cap)
{
    size_t n = 0;
    for (int64_t i = 0; i <= limit && i < 64 && n < cap; i++)
        out[n++] = i;
    for (int64_t i = 64; i < limit && n < cap - 1; i *= 2) {
        out[n++] = i;
        if (i + 1 < limit)
            out[n++] = i + 1;
    }
    if (limit >= 64 && n < cap)
        out[n++] = limit;
    return n;
}

#define ALIBI_MAX_ROW ((int64_t)1 << 20)

posenc_status posenc_verify_alibi(const posenc_bias_config *b, posenc_alibi_convention conv,
                                  int64_t max_position, posenc_bias_check_result *out,
                                  posenc_error *err)
{
    memset(out, 0, sizeof *out);
    out->tolerance = 4 * DBL_EPSILON;
    if (b->heads < 1)
        return posenc_seterr(err, POSENC_EINVAL, "ALiBi needs the number of heads");
    if (max_position < 1)
        return posenc_seterr(err, POSENC_EINVAL, "maximum position must be positive");
    double *slopes = malloc(sizeof(double) * (size_t)b->heads);
    int64_t limit = max_position - 1 < ALIBI_MAX_ROW - 1 ? max_position - 1 : ALIBI_MAX_ROW - 1;
    double *row = malloc(sizeof(double) * (size_t)(limit + 1));
    if (!slopes || !row) {
        free(slopes);
        free(row);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    posenc_status st = posenc_alibi_slopes(b->alibi_kind, b->heads,
                                           b->alibi_bias_max > 0 ? b->alibi_bias_max : 8.0, slopes,
                                           err);
    if (st != POSENC_OK)
        goto out;
    int64_t is[256], js[256];
    size_t ni = index_grid(limit, is, 256);
    for (int h = 0; h < b->heads; h++) {
        double m = slopes[h];
        if (!(m > 0) || !isfinite(m)) {
            bias_note(out, INFINITY, INFINITY, 0, h, -1);
            continue;
        }
        for (size_t a = 0; a < ni; a++) {
            int64_t i = is[a];
            posenc_alibi_row(m, conv, i, i + 1, row);
            size_t nj = index_grid(i, js, 256);
            for (size_t c = 0; c < nj; c++) {
                int64_t j = js[c];
                double want = -m * (double)(i - j), got = row[j] - row[i];
                double e = fabs(got - want);
                double tol = 4 * DBL_EPSILON * (fabs(row[j]) + fabs(row[i]) + fabs(want)) + 1e-300;
                double scale = fabs(want) > m ? fabs(want) : m;
                bias_note(out, e, e / scale, tol, i, j);
            }
        }
    }
out:
    free(slopes);
    free(row);
    return st;
}

/* transformers' _relative_position_bucket in float32, written independently of bias.c */
static int t5_ref_bucket(int64_t rel, int bidirectional, int nb, int md)
{
    int bucket = 0;
    if (bidirectional) {
        nb /= 2;
        if (rel > 0)
            bucket += nb;
        rel = rel < 0 ? -rel : rel;
    } else {
        rel = rel < 0 ? -rel : 0;
    }
    int max_exact = nb / 2;
    if (rel < max_exact)
        return bucket + (int)rel;
    float x = (float)rel / (float)max_exact;
    float lg = (float)log((double)x);
    float den = (float)log((double)md / (double)max_exact);
    float v = lg / den;
    v = v * (float)(nb - max_exact);
    int64_t large = max_exact + (int64_t)v;
    if (large > nb - 1)
        large = nb - 1;
    return bucket + (int)large;
}

posenc_status posenc_verify_t5(int num_buckets, int max_distance, int bidirectional,
                               int64_t max_position, posenc_bias_check_result *out,
                               posenc_error *err)
{
    memset(out, 0, sizeof *out);
    posenc_status st = posenc_t5_check(bidirectional, num_buckets, max_distance, err);
    if (st != POSENC_OK)
        return st;
    if (max_position < 1)
        return posenc_seterr(err, POSENC_EINVAL, "maximum position must be positive");
    int64_t dense = 4 * (int64_t)max_distance + 64;
    if (dense > max_position - 1)
        dense = max_position - 1;
    for (int dir = -1; dir <= 1; dir += 2) {
        int prev = -1;
        int64_t d = 0;
        while (d <= max_position - 1) {
            int64_t rel = dir * d;
            int got = posenc_t5_bucket(rel, bidirectional, num_buckets, max_distance);
            int want = t5_ref_bucket(rel, bidirectional, num_buckets, max_distance);
            double e = fabs((double)(got - want));
            if (got < 0 || got >= num_buckets)
                e = fmax(e, 1.0);
            if (got < prev) /* monotone in |j - i| within the direction */
                e = fmax(e, (double)(prev - got));
            /* depends only on j - i: the same bucket for the pair shifted by an offset */
            int64_t i0 = d * 7 % 1000, j0 = i0 + rel;
            int shifted = posenc_t5_bucket(j0 + 12345 - (i0 + 12345), bidirectional, num_buckets,
                                           max_distance);
            if (shifted != got)
                e = fmax(e, 1.0);
            bias_note(out, e, e, 0.0, 0, rel);
            prev = got;
            d = d < dense ? d + 1 : (d * 5) / 4 + 1;
        }
    }
    return POSENC_OK;
}

/* column of the sin and cos of pair j, or 0 when j is past the last pair */
static int sin_pair(posenc_sinusoidal_variant v, int d, int j, int *cs, int *cc)
{
    int half = d / 2;
    if (j >= half)
        return 0;
    switch (v) {
    case POSENC_SIN_VASWANI:
        *cs = 2 * j;
        *cc = 2 * j + 1;
        return 1;
    case POSENC_SIN_MARIAN:
        *cs = j;
        *cc = half + d % 2 + j;
        return 1;
    default:
        *cs = j;
        *cc = half + j;
        return 1;
    }
}

posenc_status posenc_verify_sinusoidal(posenc_sinusoidal_variant v, int d_model, int padding_idx,
                                       int64_t max_position, uint64_t seed,
                                       posenc_bias_check_result *out, posenc_error *err)
{
    memset(out, 0, sizeof *out);
    out->tolerance = 1e-9;
    if (d_model < 2)
        return posenc_seterr(err, POSENC_EINVAL, "sinusoidal check needs d_model >= 2");
    if (max_position < 3)
        return posenc_seterr(err, POSENC_EINVAL, "maximum position %lld is too small to check",
                             (long long)max_position);
    double *rp = malloc(sizeof(double) * 3 * (size_t)d_model);
    if (!rp)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    double *rk = rp + d_model, *rpk = rk + d_model;
    posenc_verify_rng rng;
    posenc_verify_rng_seed(&rng, seed);
    int64_t grid[64];
    int ng = 0;
    for (int64_t x = 1; x < max_position && ng < 40; x = x < 8 ? x + 1 : x * 2)
        grid[ng++] = x;
    posenc_status st = POSENC_OK;
    int total = ng * ng + 64;
    for (int t = 0; t < total; t++) {
        int64_t p, k;
        if (t < ng * ng) {
            p = grid[t / ng] - 1;
            k = grid[t % ng];
        } else {
            p = (int64_t)(posenc_verify_rng_uniform(&rng) * (double)(max_position - 1));
            k = 1 + (int64_t)(posenc_verify_rng_uniform(&rng) * (double)(max_position - 2));
        }
        if (p + k >= max_position || p < 0)
            continue;
        if (padding_idx >= 0 && (p == padding_idx || k == padding_idx || p + k == padding_idx))
            continue;
        if ((st = posenc_sinusoidal_row(v, d_model, p, padding_idx, rp, err)) != POSENC_OK ||
            (st = posenc_sinusoidal_row(v, d_model, k, padding_idx, rk, err)) != POSENC_OK ||
            (st = posenc_sinusoidal_row(v, d_model, p + k, padding_idx, rpk, err)) != POSENC_OK)
            goto out;
        int cs, cc;
        for (int j = 0; sin_pair(v, d_model, j, &cs, &cc); j++) {
            double sp = rp[cs], cp = rp[cc], sk = rk[cs], ck = rk[cc];
            double ws = sp * ck + cp * sk, wc = cp * ck - sp * sk;
            double e = fmax(fabs(rpk[cs] - ws), fabs(rpk[cc] - wc));
            bias_note(out, e, e, out->tolerance, p, k);
        }
    }
out:
    free(rp);
    return st;
}
