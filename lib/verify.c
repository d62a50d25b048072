/* verify.c: relative-invariance checks, row comparisons and the diagnosis of RoPE mistakes.
 * Computation only (see posenc/verify.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/verify.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

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

static inline void pair_index(posenc_style style, int n, int i, int *a, int *b)
{
    if (style == POSENC_STYLE_GPTJ) {
        *a = 2 * i;
        *b = 2 * i + 1;
    } else {
        *a = i;
        *b = i + n;
    }
}

void posenc_verify_rotate(posenc_style style, int head_dim, int rotary_dim, const double *cos_f,
                          const double *sin_f, int inverse, const double *x, double *out)
{
    int n = rotary_dim / 2;
    if (2 * n > head_dim)
        n = head_dim / 2;
    double sg = inverse ? -1.0 : 1.0;
    for (int i = 0; i < n; i++) {
        int a, b;
        pair_index(style, n, i, &a, &b);
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
        pair_index(style, n, i, &a, &b);
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

void posenc_verify_cossin_ld(const posenc_rope_params *p, int64_t pos, long double *cos_f,
                             long double *sin_f)
{
    long double sc = p->attention_scaling;
    for (int i = 0; i < p->n_freq; i++) {
        long double inv = (long double)p->inv_hi[i] + (long double)p->inv_lo[i];
        long double a = (long double)pos * inv;
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

/* rotary width actually rotated for params p */
static int rot_width(const posenc_rope_params *p)
{
    int rd = 2 * p->n_freq;
    return rd > p->head_dim ? p->head_dim - p->head_dim % 2 : rd;
}

struct inv_scratch {
    double *cq, *sq, *ck, *sk;       /* n_freq each */
    double *cqe, *sqe, *cke, *ske;   /* exact tables, unrounded */
    long double *lc, *ls;
    double *qr, *kr;                 /* head_dim */
    double *band0;                   /* n_pairs * 3 * 2 base partial scores (exact, hf) */
    double *s0;                      /* n_pairs * 2 */
};

static void table_errors(const posenc_rope_params *p, int64_t pos, const double *c_used,
                         const double *s_used, long double *lc, long double *ls, double *err)
{
    posenc_verify_cossin_ld(p, pos, lc, ls);
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
    int rd = rot_width(p);
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
    int64_t maxbase = 0;
    for (size_t s = 0; s < in->n_pairs; s++) {
        if (in->m[s] < 0 || in->n[s] < 0)
            return posenc_seterr(err, POSENC_EINVAL, "negative position in score pairs");
        if (in->m[s] > maxbase)
            maxbase = in->m[s];
        if (in->n[s] > maxbase)
            maxbase = in->n[s];
    }
    if (maxbase >= in->max_position)
        return posenc_seterr(err, POSENC_EINVAL,
                             "position %lld is not below the maximum position %lld",
                             (long long)maxbase, (long long)in->max_position);
    memset(out, 0, sizeof *out);
    out->n_offsets = posenc_verify_offset_grid(in->max_position - 1 - maxbase, out->offset);

    int hd = in->head_dim, nf = p->n_freq > 0 ? p->n_freq : 1;
    struct inv_scratch w;
    double *mem = malloc(sizeof(double) * (8 * (size_t)nf + 2 * (size_t)hd + 8 * in->n_pairs));
    long double *lmem = malloc(sizeof(long double) * 2 * (size_t)nf);
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
    w.lc = lmem;
    w.ls = lmem + nf;

    for (int oi = 0; oi < out->n_offsets; oi++) {
        int64_t o = out->offset[oi];
        for (size_t s = 0; s < in->n_pairs; s++) {
            const double *q = in->q + s * (size_t)hd, *k = in->k + s * (size_t)hd;
            int64_t pm = in->m[s] + o, pn = in->n[s] + o;
            double qn = 0, kn = 0;
            for (int j = 0; j < hd; j++) {
                qn += q[j] * q[j];
                kn += k[j] * k[j];
            }
            double norm = sqrt(qn) * sqrt(kn) / sqrt((double)hd);
            if (norm <= 0)
                norm = 1;
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
                    table_errors(p, pm, w.cqe, w.sqe, w.lc, w.ls, &e);
                    table_errors(p, pn, w.cke, w.ske, w.lc, w.ls, &e);
                    out->exact_table_f64_err = e;
                }
                table_errors(p, pm, w.cq, w.sq, w.lc, w.ls, &md->table_err[oi]);
                table_errors(p, pn, w.ck, w.sk, w.lc, w.ls, &md->table_err[oi]);
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
    r->prec = POSENC_PREC_HF;
    r->shift = 0;
    r->table_dtype = -1;
    r->scale = 1.0;
    r->no_rotation = 0;
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
    posenc_rope_cossin(&r->params, r->prec, q, cos_f, sin_f);
    if (r->table_dtype == POSENC_DT_BF16 || r->table_dtype == POSENC_DT_F16) {
        for (int i = 0; i < r->params.n_freq; i++) {
            if (r->table_dtype == POSENC_DT_BF16) {
                cos_f[i] = posenc_bf16_to_f32(posenc_f64_to_bf16(cos_f[i]));
                sin_f[i] = posenc_bf16_to_f32(posenc_f64_to_bf16(sin_f[i]));
            } else {
                cos_f[i] = posenc_f16_to_f32(posenc_f64_to_f16(cos_f[i]));
                sin_f[i] = posenc_f16_to_f32(posenc_f64_to_f16(sin_f[i]));
            }
        }
    }
}

double posenc_verify_default_tol(posenc_dtype dt)
{
    switch (dt) {
    case POSENC_DT_F16:
        return 8.0 * 9.765625e-04;
    case POSENC_DT_BF16:
        return 8.0 * 7.8125e-03;
    default:
        return 8.0 * 1.1920928955078125e-07;
    }
}

void posenc_verify_row_error(const posenc_verify_recipe *r, const posenc_verify_tolerance *t,
                             int64_t pos, const double *cos_f, const double *sin_f,
                             const double *pre, const double *expected, double *scratch,
                             double *abs_err, double *rel_err, double *ratio)
{
    const posenc_rope_params *p = &r->params;
    int hd = p->head_dim, rd = rot_width(p), n = rd / 2;
    double cbuf[POSENC_MAX_FREQ], sbuf[POSENC_MAX_FREQ];
    if (!cos_f || !sin_f) {
        posenc_verify_recipe_cossin(r, pos, cbuf, sbuf);
        cos_f = cbuf;
        sin_f = sbuf;
    }
    /* one pass: rotate, scale, and collect |expected| max, per-pair errors and pair norms */
    double rowmax = 0, refmax = 0, maxe = 0, sc = r->scale;
    double slack = r->no_rotation ? 0 : t->angle_slack * fabs((double)(pos + r->shift));
    int gptj = p->style == POSENC_STYLE_GPTJ;
    /* scratch[2i] = max pair error, scratch[2i + 1] = angle allowance of the pair */
    for (int i = 0; i < n; i++) {
        int a = gptj ? 2 * i : i, b = gptj ? 2 * i + 1 : i + n;
        double x1 = pre[a], x2 = pre[b], c = cos_f[i], s = sin_f[i];
        double y1 = (x1 * c - x2 * s) * sc, y2 = (x2 * c + x1 * s) * sc;
        double u = expected[a], v = expected[b];
        double au = fabs(u), av = fabs(v), ay1 = fabs(y1), ay2 = fabs(y2);
        rowmax = au > rowmax ? au : rowmax;
        rowmax = av > rowmax ? av : rowmax;
        refmax = ay1 > refmax ? ay1 : refmax;
        refmax = ay2 > refmax ? ay2 : refmax;
        double e1 = fabs(y1 - u), e2 = fabs(y2 - v);
        double e = e1 > e2 ? e1 : e2;
        if (e != e || au != au || av != av)
            e = INFINITY;
        maxe = e > maxe ? e : maxe;
        double inv = p->inv_hi[i] > 0 ? p->inv_hi[i] : (double)p->inv_freq_f32[i];
        scratch[2 * i] = e;
        scratch[2 * i + 1] = slack * inv * sqrt(u * u + v * v);
    }
    double pass_e = 0;
    for (int j = 2 * n; j < hd; j++) {
        double u = expected[j], e = fabs(pre[j] - u);
        if (e != e || u != u)
            e = INFINITY;
        double au = fabs(u), ay = fabs(pre[j]);
        rowmax = au > rowmax ? au : rowmax;
        refmax = ay > refmax ? ay : refmax;
        pass_e = e > pass_e ? e : pass_e;
    }
    maxe = pass_e > maxe ? pass_e : maxe;
    if (!(rowmax > 0))
        rowmax = refmax > 0 ? refmax : 1.0;
    double base = t->tol * rowmax, worst = 0;
    for (int i = 0; i < n; i++) {
        double allow = base + scratch[2 * i + 1], e = scratch[2 * i];
        double q = allow > 0 ? e / allow : (e > 0 ? INFINITY : 0);
        worst = q > worst || q != q ? q : worst;
    }
    if (pass_e > 0) {
        double q = base > 0 ? pass_e / base : INFINITY;
        worst = q > worst || q != q ? q : worst;
    }
    *abs_err = maxe;
    *rel_err = maxe / rowmax;
    *ratio = worst;
}

/* ---- diagnosis ---- */

int posenc_verify_pair_angle(posenc_style style, int rotary_dim, int i, const double *pre,
                             const double *expected, double *angle, double *ratio)
{
    int n = rotary_dim / 2, a, b;
    if (i < 0 || i >= n)
        return 0;
    pair_index(style, n, i, &a, &b);
    double x = pre[a], y = pre[b], u = expected[a], v = expected[b];
    double r0 = hypot(x, y), r1 = hypot(u, v);
    if (!(r0 > 1e-20) || !(r1 > 1e-20))
        return 0;
    /* (u, v) = s R(phi) (x, y): cross = r0 r1 sin(phi), dot = r0 r1 cos(phi) */
    *angle = atan2(x * v - y * u, x * u + y * v);
    *ratio = r1 / r0;
    return 1;
}

double posenc_verify_fit_theta(const double *inv, const unsigned char *ok, int n, int exp_dim)
{
    /* ln inv_i = -(2i/D) ln theta: least squares through the origin in x = 2i/D */
    double sxy = 0, sxx = 0;
    int cnt = 0;
    for (int i = 1; i < n; i++) {
        if (!ok[i] || !(inv[i] > 0))
            continue;
        double x = 2.0 * i / exp_dim, y = log(inv[i]);
        sxy += x * y;
        sxx += x * x;
        cnt++;
    }
    if (cnt < 2 || !(sxx > 0))
        return 0;
    return exp(-sxy / sxx);
}

struct diag_ctx {
    const posenc_verify_tolerance *t;
    const posenc_verify_sample *rows;
    size_t n;
    double *scratch;
};

static void eval_recipe(const struct diag_ctx *c, const posenc_verify_recipe *r, double *rel,
                        double *ratio)
{
    double wr = 0, wq = 0;
    /* a candidate that rounds the tables is allowed one rounding step of its dtype: a runtime's
     * float32 cos/sin one ulp away from posenc's may round to the neighbouring 16-bit value */
    posenc_verify_tolerance t = *c->t;
    if (r->table_dtype == POSENC_DT_BF16 && t.tol < 0x1p-7)
        t.tol = 0x1p-7;
    if (r->table_dtype == POSENC_DT_F16 && t.tol < 0x1p-10)
        t.tol = 0x1p-10;
    for (size_t s = 0; s < c->n; s++) {
        double a, e, q;
        posenc_verify_row_error(r, &t, c->rows[s].pos, NULL, NULL, c->rows[s].pre,
                                c->rows[s].expected, c->scratch, &a, &e, &q);
        if (e > wr || e != e)
            wr = e;
        if (q > wq || q != q)
            wq = q;
    }
    *rel = wr;
    *ratio = wq;
}

static double round_sig(double x, int digits)
{
    if (!(x > 0))
        return x;
    double e = floor(log10(x)) - (digits - 1), f = pow(10.0, e);
    return round(x / f) * f;
}

static int add_cand(posenc_diagnosis *d, const struct diag_ctx *c, const posenc_verify_recipe *r,
                    const char *name, const char *desc)
{
    if (d->n_cand >= POSENC_VERIFY_MAX_CANDIDATES)
        return -1;
    posenc_diag_candidate *k = &d->cand[d->n_cand];
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(k->description, sizeof k->description, "%s", desc);
    eval_recipe(c, r, &k->max_rel_err, &k->ratio);
    k->explains = k->ratio <= POSENC_VERIFY_EXPLAIN_RATIO;
    return d->n_cand++;
}

/* Build a recipe for a modified config; returns 0 when the config is not computable. */
static int cfg_recipe(const posenc_rope_config *cfg, int64_t seq_len, posenc_verify_recipe *r)
{
    posenc_rope_params p;
    if (posenc_rope_params_compute(cfg, seq_len, &p, NULL) != POSENC_OK)
        return 0;
    posenc_verify_recipe_init(r, &p);
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Estimate the true position of a row from the angles of the config's frequencies, slowest
 * first, unwrapping as the precision grows. -1 when nothing could be measured. */
static double estimate_position(const posenc_rope_params *p, const double *pre,
                                const double *expected)
{
    int rd = rot_width(p), n = rd / 2;
    double est = -1;
    for (int i = n - 1; i >= 0; i--) {
        double inv = p->inv_hi[i];
        double ang, ratio;
        if (!(inv > 0) || !posenc_verify_pair_angle(p->style, rd, i, pre, expected, &ang, &ratio))
            continue;
        if (ang < 0)
            ang += 2 * M_PI;
        if (est < 0) {
            est = ang / inv;
            continue;
        }
        double k = round((est * inv - ang) / (2 * M_PI));
        est = (ang + 2 * M_PI * k) / inv;
    }
    return est;
}

/* What a candidate's mutation sees: the config, its parameters, the recipe posenc checks with,
 * the sampled rows and what has been measured and tried so far. */
struct diag_env {
    const posenc_rope_config *cfg;
    int64_t seq_len;
    const posenc_rope_params *bp;
    const posenc_verify_recipe *base;
    const posenc_verify_sample *rows;
    size_t n_rows;
    const posenc_diagnosis *d;
    const char *what;
};

enum { CAND_END = -1, CAND_SKIP = 0, CAND_TRY = 1 };

/* A hypothesised mistake: variant v (0, 1, ...) of the mutation fills the recipe that builds the
 * expected rows under that mistake and its description; CAND_SKIP when the variant does not
 * apply to this config, CAND_END after the last variant. */
typedef int (*cand_mutate)(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                           size_t len);
/* The one-line explanation when the candidate is the best explanation. */
typedef void (*cand_explain)(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                             size_t len);

static const char *style_word(posenc_style s) { return s == POSENC_STYLE_GPTJ ? "gptj" : "neox"; }

static int found_explaining(const posenc_diagnosis *d, const char *name)
{
    for (int i = 0; i < d->n_cand; i++)
        if (d->cand[i].explains && strcmp(d->cand[i].name, name) == 0)
            return 1;
    return 0;
}

/* The config with another rotary width. Positions are one-dimensional in a dump, where mrope
 * (all of t, h, w equal) is plain RoPE with the same frequencies (transformers
 * models/qwen2_vl/modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb, qwen3_vl
 * apply_interleaved_mrope): its sections, which must sum to rotary_dim / 2, are dropped. */
static int width_recipe(const struct diag_env *e, int rotary_dim, int exponent_dim,
                        posenc_verify_recipe *r)
{
    posenc_rope_config cc = *e->cfg;
    cc.rotary_dim = rotary_dim;
    cc.exponent_dim = exponent_dim;
    cc.partial_rotary_factor = (double)rotary_dim / cc.head_dim;
    cc.n_mrope_section = 0;
    cc.mrope_interleaved = 0;
    return cfg_recipe(&cc, e->seq_len, r);
}

static int mut_not_rotated(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                           size_t len)
{
    if (v > 0)
        return CAND_END;
    *r = *e->base;
    r->no_rotation = 1;
    snprintf(desc, len, "not rotated (the rows equal the pre-RoPE rows)");
    return CAND_TRY;
}

static int mut_style(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                     size_t len)
{
    if (v > 0)
        return CAND_END;
    *r = *e->base;
    r->params.style = e->bp->style == POSENC_STYLE_GPTJ ? POSENC_STYLE_NEOX : POSENC_STYLE_GPTJ;
    snprintf(desc, len, "--style %s", style_word(r->params.style));
    return CAND_TRY;
}

static int mut_full_head(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                         size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->rotary_dim >= c->head_dim)
        return CAND_END;
    if (!width_recipe(e, c->head_dim, c->head_dim, r))
        return CAND_SKIP;
    snprintf(desc, len, "full-head rotation (rotary_dim %d instead of %d)", c->head_dim,
             c->rotary_dim);
    return CAND_TRY;
}

static int mut_exponent(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                        size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->rotary_dim >= c->head_dim || c->exponent_dim == c->head_dim)
        return CAND_END;
    if (!width_recipe(e, c->rotary_dim, c->head_dim, r))
        return CAND_SKIP;
    snprintf(desc, len, "exponent over head_dim (theta^(-2i/%d)) on rotary_dim %d", c->head_dim,
             c->rotary_dim);
    return CAND_TRY;
}

static int mut_partial(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                       size_t len)
{
    const posenc_rope_config *c = e->cfg;
    int div = 2 << v; /* a half, then a quarter of the head */
    if (c->rotary_dim < c->head_dim || div > 4)
        return CAND_END;
    if (c->head_dim % (2 * div) || !width_recipe(e, c->head_dim / div, c->head_dim / div, r))
        return CAND_SKIP;
    snprintf(desc, len, "partial rotary applied (rotary_dim %d of %d)", c->head_dim / div,
             c->head_dim);
    return CAND_TRY;
}

static int mut_theta(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                     size_t len)
{
    static const double common[] = { 1e4, 1e5, 5e5, 1e6, 5e6, 1e7 };
    const int nc = (int)(sizeof common / sizeof common[0]);
    double est = e->d->theta_estimate > 1.0 ? round_sig(e->d->theta_estimate, 3) : 0;
    /* variant 0: the estimate; 1..nc: the common values */
    if (v > nc)
        return CAND_END;
    double th = v == 0 ? est : common[v - 1];
    if (!(th > 0) || fabs(th - e->cfg->theta) <= 1e-9 * e->cfg->theta || (v > 0 && th == est))
        return CAND_SKIP;
    posenc_rope_config cc = *e->cfg;
    cc.theta = th;
    if (!cfg_recipe(&cc, e->seq_len, r))
        return CAND_SKIP;
    if (v == 0)
        snprintf(desc, len, "theta %.6g (estimated %.6g from per-pair angles)", th,
                 e->d->theta_estimate);
    else
        snprintf(desc, len, "theta %.6g", th);
    return CAND_TRY;
}

/* Positions off by a constant: only when no rotation at all and no full-head rotation explains
 * the rows (either makes the angle-based estimate meaningless: a row that was not rotated looks
 * like position 0, i.e. "shifted by -pos"), and only when every shifted position exists. */
static int mut_offset(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                      size_t len)
{
    if (v > 0 || !e->d->shift_valid || e->d->shift_estimate == 0)
        return CAND_END;
    if (found_explaining(e->d, "not_rotated") || found_explaining(e->d, "rotary_dim_full"))
        return CAND_END;
    for (size_t s = 0; s < e->n_rows; s++)
        if (e->rows[s].pos + e->d->shift_estimate < 0)
            return CAND_END;
    *r = *e->base;
    r->shift = e->d->shift_estimate;
    snprintf(desc, len, "positions shifted by %+lld", (long long)r->shift);
    return CAND_TRY;
}

static int mut_scaling_ignored(const struct diag_env *e, int v, posenc_verify_recipe *r,
                               char *desc, size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->type == POSENC_ROPE_DEFAULT)
        return CAND_END;
    posenc_rope_config cc = *c;
    cc.type = POSENC_ROPE_DEFAULT;
    cc.factor = 1.0;
    cc.has_attention_factor = 0;
    cc.mscale = cc.mscale_all_dim = 0;
    if (!cfg_recipe(&cc, e->seq_len, r))
        return CAND_SKIP;
    snprintf(desc, len, "plain RoPE (rope_type default, theta %.6g): %s scaling ignored", c->theta,
             posenc_rope_type_name(c->type));
    return CAND_TRY;
}

static int mut_longrope(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                        size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->type != POSENC_ROPE_LONGROPE)
        return CAND_END;
    /* the other factor set: short ones at length 0, long ones past original_max */
    int64_t other = e->bp->long_factors ? 0 : c->original_max_position_embeddings + 1;
    if (!cfg_recipe(c, other, r))
        return CAND_SKIP;
    snprintf(desc, len, "longrope %s factors", e->bp->long_factors ? "short" : "long");
    return CAND_TRY;
}

static int mut_dynamic_base(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                            size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->type != POSENC_ROPE_DYNAMIC || e->seq_len <= 0)
        return CAND_END;
    if (!cfg_recipe(c, 0, r))
        return CAND_SKIP;
    snprintf(desc, len, "dynamic NTK base of the original length (theta %.6g)", c->theta);
    return CAND_TRY;
}

static int mut_attention_missing(const struct diag_env *e, int v, posenc_verify_recipe *r,
                                 char *desc, size_t len)
{
    double a = e->bp->attention_scaling;
    if (v > 0 || fabs(a - 1.0) <= 1e-9)
        return CAND_END;
    *r = *e->base;
    r->scale = 1.0 / a;
    snprintf(desc, len, "attention scaling %.6g missing", a);
    return CAND_TRY;
}

static int mut_magnitude(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                         size_t len)
{
    double a = e->bp->attention_scaling, m = e->d->scale_estimate;
    if (v > 0 || !(m > 0) || !(a > 0))
        return CAND_END;
    double f = m / a;
    /* a constant factor that is not just the missing attention scaling */
    if (!(fabs(f - 1.0) > 1e-4 && (fabs(a - 1.0) <= 1e-9 || fabs(m - 1.0) > 1e-4)))
        return CAND_END;
    *r = *e->base;
    r->scale = f;
    snprintf(desc, len, "magnitudes off by a constant factor %.6g", f);
    return CAND_TRY;
}

static int mut_tables16(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                        size_t len, posenc_dtype dt)
{
    if (v > 0)
        return CAND_END;
    *r = *e->base;
    r->table_dtype = dt;
    snprintf(desc, len, "cos/sin tables rounded to %s", posenc_dtype_name(dt));
    return CAND_TRY;
}

static int mut_bf16(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                    size_t len)
{
    return mut_tables16(e, v, r, desc, len, POSENC_DT_BF16);
}

static int mut_f16(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                   size_t len)
{
    return mut_tables16(e, v, r, desc, len, POSENC_DT_F16);
}

/* ---- explanations ---- */

static void exp_not_rotated(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                            size_t len)
{
    snprintf(out, len,
             "%s is not rotated: it equals the pre-RoPE rows (max rel err %.3g); the config "
             "implies %s RoPE on %d of %d dims",
             e->what, b->max_rel_err, style_word(e->bp->style), 2 * e->bp->n_freq,
             e->cfg->head_dim);
}

static void exp_style(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                      size_t len)
{
    snprintf(out, len, "%s matches with %s (max rel err %.3g); the config implies %s", e->what,
             b->description, b->max_rel_err, style_word(e->bp->style));
}

static void exp_full_head(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                          size_t len)
{
    snprintf(out, len,
             "%s matches with a full-head rotation (all %d dims, max rel err %.3g); the config "
             "implies partial rotary: rotary_dim %d of head_dim %d",
             e->what, e->cfg->head_dim, b->max_rel_err, e->cfg->rotary_dim, e->cfg->head_dim);
}

static void exp_width(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                      size_t len)
{
    snprintf(out, len,
             "%s matches with the %s (max rel err %.3g); the config implies rotary_dim %d of "
             "head_dim %d",
             e->what, b->description, b->max_rel_err, e->cfg->rotary_dim, e->cfg->head_dim);
}

static void exp_theta(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                      size_t len)
{
    snprintf(out, len, "%s matches with %s (max rel err %.3g); the config implies theta %.6g",
             e->what, b->description, b->max_rel_err, e->cfg->theta);
}

static void exp_offset(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                       size_t len)
{
    snprintf(out, len,
             "%s matches with positions shifted by %+lld (max rel err %.3g); the dump's "
             "positions are off by that much (see --offset, --positions)",
             e->what, (long long)e->d->shift_estimate, b->max_rel_err);
}

static void exp_scaling(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                        size_t len)
{
    snprintf(out, len, "%s matches with %s (max rel err %.3g); the config implies %s", e->what,
             b->description, b->max_rel_err, posenc_rope_type_name(e->cfg->type));
}

static void exp_magnitude(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                          size_t len)
{
    snprintf(out, len,
             "%s matches with %s (max rel err %.3g); the config implies %s with its attention "
             "scaling",
             e->what, b->description, b->max_rel_err, posenc_rope_type_name(e->cfg->type));
}

static void exp_tables(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                       size_t len)
{
    snprintf(out, len,
             "%s matches with %s (max rel err %.3g); the config implies %s with float32 tables",
             e->what, b->description, b->max_rel_err, posenc_rope_type_name(e->cfg->type));
}

/* The usual mistakes, tried in this order; on equal fit the earlier one is named, so "not
 * rotated" (the simplest) comes first. */
static const struct diag_rule {
    const char *name;
    cand_mutate mutate;
    cand_explain explain;
} diag_rules[] = {
    { "not_rotated", mut_not_rotated, exp_not_rotated },
    { "style_swapped", mut_style, exp_style },
    { "rotary_dim_full", mut_full_head, exp_full_head },
    { "rotary_dim_exponent", mut_exponent, exp_width },
    { "rotary_dim_partial", mut_partial, exp_width },
    { "theta", mut_theta, exp_theta },
    { "offset", mut_offset, exp_offset },
    { "scaling_ignored", mut_scaling_ignored, exp_scaling },
    { "longrope_factors", mut_longrope, exp_scaling },
    { "dynamic_base", mut_dynamic_base, exp_scaling },
    { "attention_scaling_missing", mut_attention_missing, exp_magnitude },
    { "magnitude", mut_magnitude, exp_magnitude },
    { "tables_bf16", mut_bf16, exp_tables },
    { "tables_f16", mut_f16, exp_tables },
};

/* The most common position shift over the rows, when it covers at least half of them (and two
 * rows when there are two or more): a row that was not rotated at all implies position 0, a
 * different "shift" per row, which is no shift. */
static void estimate_shift(const posenc_rope_params *bp, const posenc_verify_sample *rows,
                           size_t n_rows, int64_t *shifts, posenc_diagnosis *out)
{
    size_t ns = 0;
    for (size_t s = 0; s < n_rows; s++) {
        double e = estimate_position(bp, rows[s].pre, rows[s].expected);
        if (e >= 0)
            shifts[ns++] = (int64_t)llround(e) - rows[s].pos;
    }
    if (!ns)
        return;
    qsort(shifts, ns, sizeof *shifts, cmp_i64);
    size_t bi = 0, bl = 0;
    for (size_t i = 0; i < ns;) {
        size_t j = i;
        while (j < ns && shifts[j] == shifts[i])
            j++;
        if (j - i > bl) {
            bl = j - i;
            bi = i;
        }
        i = j;
    }
    if (2 * bl >= n_rows && (bl >= 2 || n_rows == 1)) {
        out->shift_estimate = shifts[bi];
        out->shift_valid = 1;
    }
}

posenc_status posenc_verify_diagnose(const posenc_rope_config *cfg, int64_t seq_len,
                                     const posenc_verify_tolerance *t,
                                     const posenc_verify_sample *rows, size_t n_rows,
                                     const char *what, posenc_diagnosis *out, posenc_error *err)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    if (n_rows == 0)
        return posenc_seterr(err, POSENC_EINVAL, "no sampled rows to diagnose");
    posenc_verify_recipe base;
    posenc_rope_params bp;
    posenc_status st = posenc_rope_params_compute(cfg, seq_len, &bp, err);
    if (st != POSENC_OK)
        return st;
    posenc_verify_recipe_init(&base, &bp);
    int hd = bp.head_dim, rd = rot_width(&bp), n = rd / 2;
    double *scratch = malloc(sizeof(double) * (size_t)(hd > 0 ? hd : 1));
    double *tmp = malloc(sizeof(double) * (n_rows + 1));
    int64_t *shifts = malloc(sizeof(int64_t) * (n_rows + 1));
    if (!scratch || !tmp || !shifts) {
        free(scratch);
        free(tmp);
        free(shifts);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    struct diag_ctx c = { t, rows, n_rows, scratch };
    eval_recipe(&c, &base, &out->config_rel_err, &out->config_ratio);

    /* magnitude: |expected| / |pre| over the rotated dims, median over rows */
    size_t nm = 0;
    for (size_t s = 0; s < n_rows; s++) {
        double a = 0, b = 0;
        for (int j = 0; j < rd; j++) {
            a += rows[s].expected[j] * rows[s].expected[j];
            b += rows[s].pre[j] * rows[s].pre[j];
        }
        if (b > 0)
            tmp[nm++] = sqrt(a / b);
    }
    if (nm) {
        qsort(tmp, nm, sizeof *tmp, cmp_double);
        out->scale_estimate = tmp[nm / 2];
    }

    /* theta from per-pair angles at the smallest positive position */
    size_t best_row = n_rows;
    for (size_t s = 0; s < n_rows; s++)
        if (rows[s].pos > 0 && (best_row == n_rows || rows[s].pos < rows[best_row].pos))
            best_row = s;
    if (best_row < n_rows && n > 2) {
        double inv[POSENC_MAX_FREQ];
        unsigned char ok[POSENC_MAX_FREQ];
        double pos = (double)rows[best_row].pos;
        for (int i = 0; i < n; i++) {
            double ang, ratio;
            ok[i] = 0;
            inv[i] = 0;
            if (posenc_verify_pair_angle(bp.style, rd, i, rows[best_row].pre,
                                         rows[best_row].expected, &ang, &ratio) &&
                ang > 0 && pos * bp.inv_hi[i] < 1.0) {
                inv[i] = ang / pos;
                ok[i] = 1;
            }
        }
        int ed = cfg->exponent_dim > 0 ? cfg->exponent_dim : rd;
        out->theta_estimate = posenc_verify_fit_theta(inv, ok, n, ed);
    }
    estimate_shift(&bp, rows, n_rows, shifts, out);

    /* every rule's variants, in table order */
    struct diag_env env = { cfg, seq_len, &bp, &base, rows, n_rows, out, what };
    int rule_of[POSENC_VERIFY_MAX_CANDIDATES];
    for (size_t ri = 0; ri < sizeof diag_rules / sizeof diag_rules[0]; ri++) {
        for (int v = 0;; v++) {
            posenc_verify_recipe r;
            char desc[200];
            int k = diag_rules[ri].mutate(&env, v, &r, desc, sizeof desc);
            if (k == CAND_END)
                break;
            if (k == CAND_SKIP)
                continue;
            int idx = add_cand(out, &c, &r, diag_rules[ri].name, desc);
            if (idx < 0)
                break;
            rule_of[idx] = (int)ri;
        }
    }

    /* pick: the lowest allowance ratio, the earlier rule on a tie */
    for (int i = 0; i < out->n_cand; i++)
        if (out->best < 0 || out->cand[i].ratio < out->cand[out->best].ratio)
            out->best = i;
    const posenc_diag_candidate *b = out->best >= 0 ? &out->cand[out->best] : NULL;
    out->found = b && b->explains && out->config_ratio > 1.0 && b->ratio < out->config_ratio;

    char ev[512];
    int len = snprintf(ev, sizeof ev,
                       "the config's rotation (%s, rotary_dim %d, theta %.6g) misses %s by max rel "
                       "err %.3g over %zu sampled rows",
                       style_word(bp.style), rd, cfg->theta, what, out->config_rel_err, n_rows);
    if (out->theta_estimate > 0 && len < (int)sizeof ev)
        len += snprintf(ev + len, sizeof ev - (size_t)len, "; per-pair angles imply theta %.6g",
                        out->theta_estimate);
    if (out->scale_estimate > 0 && len < (int)sizeof ev)
        len += snprintf(ev + len, sizeof ev - (size_t)len, "; magnitude ratio %.6g (config %.6g)",
                        out->scale_estimate, bp.attention_scaling);
    if (b && len < (int)sizeof ev)
        snprintf(ev + len, sizeof ev - (size_t)len, "; best candidate %s: max rel err %.3g",
                 b->description, b->max_rel_err);
    snprintf(out->evidence, sizeof out->evidence, "%s", ev);

    if (out->found)
        diag_rules[rule_of[out->best]].explain(&env, b, out->explanation,
                                               sizeof out->explanation);
    else
        snprintf(out->explanation, sizeof out->explanation,
                 "%s differs from the config's rotation (max rel err %.3g) and no single usual "
                 "mistake explains it",
                 what, out->config_rel_err);
    free(scratch);
    free(tmp);
    free(shifts);
    return POSENC_OK;
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
