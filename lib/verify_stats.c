/* lib/verify_stats.c: the statistics of one comparison pass of posenc verify (see
 * verify_stats.h). */
#include <stdlib.h>
#include <string.h>

#include "verify_stats.h"

struct pe_vpass {
    pe_vpass_spec s;
    posenc_verify_tolerance tol;
    pe_vstats st;
    posenc_verify_sample *samples;
    size_t n_samples, want;
    double *scratch;
    double *ref;                   /* rotated rows alone: the de-rotated first row of each head */
    unsigned char *ref_ok;
    double *cache_c, *cache_s;     /* seq * n_freq, or NULL */
    unsigned char *cache_ok;
    int own_cache;
};

int pe_vstats_bucket(int64_t pos)
{
    if (pos <= 0)
        return 0;
    int b = 0;
    while (pos) {
        b++;
        pos >>= 1;
    }
    return b < PE_VSTATS_BUCKETS ? b : PE_VSTATS_BUCKETS - 1;
}

void pe_vstats_bucket_range(int b, int64_t *lo, int64_t *hi)
{
    *lo = b == 0 ? 0 : (int64_t)((uint64_t)1 << (b - 1));
    *hi = b == 0 ? 0 : b >= 63 ? INT64_MAX : (int64_t)((uint64_t)1 << b) - 1;
}

int pe_vpass_sample_plan(int64_t seq, unsigned char *keep)
{
    int nk = 0;
    memset(keep, 0, (size_t)seq);
    for (int64_t s = 0; s < seq && s < 8; s++, nk++)
        keep[s] = 1;
    for (double x = 8; x < (double)seq && nk < PE_VPASS_SAMPLE_SEQ - 1; x *= 1.35) {
        int64_t s = (int64_t)x;
        if (!keep[s]) {
            keep[s] = 1;
            nk++;
        }
    }
    if (!keep[seq - 1])
        nk++;
    keep[seq - 1] = 1;
    return nk;
}

posenc_status pe_vpass_new(const pe_vpass_spec *s, pe_vpass **out, posenc_error *err)
{
    if (!s->has_pre && !s->has_cmp)
        return posenc_seterr(err, POSENC_EINVAL, "a verify pass needs pre-RoPE or rotated rows");
    pe_vpass *p = calloc(1, sizeof *p);
    if (!p)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    p->s = *s;
    p->tol.tol = s->tol;
    p->tol.angle_slack = POSENC_VERIFY_ANGLE_SLACK;
    size_t D = (size_t)s->head_dim, bh = (size_t)s->batch * (size_t)s->heads;
    p->st.heads = s->heads;
    p->st.head_abs = calloc((size_t)s->heads, sizeof(double));
    p->st.head_rel = calloc((size_t)s->heads, sizeof(double));
    p->samples = calloc(PE_VPASS_MAX_SAMPLES, sizeof *p->samples);
    p->scratch = malloc(D * sizeof(double));
    if (!s->has_pre) {
        p->ref = malloc(bh * D * sizeof(double));
        p->ref_ok = calloc(bh, 1);
    }
    for (int64_t q = 0; q < s->seq; q++)
        p->want += s->keep[q] ? (s->heads > 1 ? 2 : 1) : 0;
    int nf = s->rec->params.n_freq > 0 ? s->rec->params.n_freq : 1;
    if (s->share) { /* same recipe and positions: one cos/sin cache serves q and k */
        p->cache_c = s->share->cache_c;
        p->cache_s = s->share->cache_s;
        p->cache_ok = s->share->cache_ok;
    } else if ((uint64_t)s->seq * (uint64_t)nf * 16 <= PE_VPASS_CACHE_BYTES) {
        p->own_cache = 1;
        p->cache_c = malloc((size_t)s->seq * (size_t)nf * sizeof(double));
        p->cache_s = malloc((size_t)s->seq * (size_t)nf * sizeof(double));
        p->cache_ok = calloc((size_t)s->seq, 1);
        if (!p->cache_c || !p->cache_s || !p->cache_ok) { /* computed per row instead */
            free(p->cache_c);
            free(p->cache_s);
            free(p->cache_ok);
            p->cache_c = p->cache_s = NULL;
            p->cache_ok = NULL;
        }
    }
    if (!p->st.head_abs || !p->st.head_rel || !p->samples || !p->scratch ||
        (!s->has_pre && (!p->ref || !p->ref_ok))) {
        pe_vpass_free(p);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    *out = p;
    return POSENC_OK;
}

static int64_t position_of(const pe_vpass *p, int64_t s)
{
    const posenc_apply_positions *a = &p->s.positions;
    return a->values ? a->values[s] : a->offset + s;
}

/* cos and sin of seq index s: from the cache, filled on first use, or into lc, ls */
static void cossin_at(const pe_vpass *p, int64_t s, double **c, double **sn, double *lc,
                      double *ls)
{
    int nf = p->s.rec->params.n_freq;
    if (p->cache_c) {
        double *cc = p->cache_c + (size_t)s * (size_t)nf, *ss = p->cache_s + (size_t)s * (size_t)nf;
        if (!p->cache_ok[s]) {
            posenc_verify_recipe_cossin(p->s.rec, position_of(p, s), cc, ss);
            p->cache_ok[s] = 1;
        }
        *c = cc;
        *sn = ss;
        return;
    }
    posenc_verify_recipe_cossin(p->s.rec, position_of(p, s), lc, ls);
    *c = lc;
    *sn = ls;
}

static posenc_status keep_sample(pe_vpass *p, int64_t pos, int head, const double *pre,
                                 const double *cmp, posenc_error *err)
{
    size_t D = (size_t)p->s.head_dim;
    if (p->n_samples == PE_VPASS_MAX_SAMPLES)
        return POSENC_OK;
    double *a = malloc(D * sizeof(double)), *b = cmp ? malloc(D * sizeof(double)) : NULL;
    if (!a || (cmp && !b)) {
        free(a);
        free(b);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    memcpy(a, pre, D * sizeof(double));
    if (cmp)
        memcpy(b, cmp, D * sizeof(double));
    p->samples[p->n_samples++] = (posenc_verify_sample){ pos, head, a, b };
    return POSENC_OK;
}

static void account(pe_vstats *st, double ae, double re, double q, int64_t b, int64_t h,
                    int64_t pos)
{
    st->rows++;
    if (!(q <= 1.0))
        st->bad++;
    if (ae > st->max_abs || ae != ae)
        st->max_abs = ae;
    if (re > st->max_rel || re != re)
        st->max_rel = re;
    if (q > st->max_ratio || q != q || st->rows == 1) {
        if (q > st->max_ratio || q != q)
            st->max_ratio = q;
        if (st->rows == 1 || q >= st->max_ratio || q != q) {
            st->worst_b = b;
            st->worst_h = h;
            st->worst_pos = pos;
        }
    }
    if (ae > st->head_abs[h])
        st->head_abs[h] = ae;
    if (re > st->head_rel[h])
        st->head_rel[h] = re;
    int bk = pe_vstats_bucket(pos);
    st->b_rows[bk]++;
    if (ae > st->b_abs[bk])
        st->b_abs[bk] = ae;
    if (re > st->b_rel[bk])
        st->b_rel[bk] = re;
}

posenc_status pe_vpass_row(pe_vpass *p, int64_t b, int64_t h, int64_t s, const double *pre,
                           const double *cmp, posenc_error *err)
{
    const posenc_verify_recipe *rec = p->s.rec;
    size_t D = (size_t)p->s.head_dim;
    int nf = rec->params.n_freq;
    double lc[POSENC_MAX_FREQ], ls[POSENC_MAX_FREQ];
    double *c = NULL, *sn = NULL;
    int64_t pos = position_of(p, s);
    if (!pre) {
        /* rotated rows alone: the first row of this head, R(pos) * scaling undone */
        size_t bh = (size_t)b * (size_t)p->s.heads + (size_t)h;
        double *rr = p->ref + bh * D;
        if (!p->ref_ok[bh]) {
            cossin_at(p, s, &c, &sn, lc, ls);
            double a = rec->params.attention_scaling;
            double a2 = a * a > 0 ? a * a : 1;
            posenc_verify_rotate(rec->params.style, (int)D, 2 * nf, c, sn, 1, cmp, rr);
            for (int j = 0; j < 2 * nf && j < (int)D; j++)
                rr[j] /= a2 / rec->scale;
            p->ref_ok[bh] = 1;
        }
        pre = rr;
    }
    int sampled = b == 0 && (h == 0 || h == p->s.heads - 1) && p->s.keep[s];
    posenc_status st;
    if (sampled && (st = keep_sample(p, pos, (int)h, pre, cmp, err)) != POSENC_OK)
        return st;
    if (!cmp)
        return POSENC_OK;
    if (!c)
        cossin_at(p, s, &c, &sn, lc, ls);
    double ae, re, q;
    posenc_verify_row_error(rec, &p->tol, pos, c, sn, pre, cmp, p->scratch, &ae, &re, &q);
    account(&p->st, ae, re, q, b, h, pos);
    return POSENC_OK;
}

int pe_vpass_done(const pe_vpass *p) { return !p->s.has_cmp && p->n_samples >= p->want; }

const pe_vstats *pe_vpass_stats(const pe_vpass *p) { return &p->st; }

const posenc_verify_tolerance *pe_vpass_tolerance(const pe_vpass *p) { return &p->tol; }

size_t pe_vpass_samples(const pe_vpass *p, const posenc_verify_sample **rows)
{
    *rows = p->samples;
    return p->n_samples;
}

void pe_vpass_free(pe_vpass *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_samples; i++) {
        free((double *)p->samples[i].pre);
        free((double *)p->samples[i].expected);
    }
    free(p->samples);
    free(p->st.head_abs);
    free(p->st.head_rel);
    free(p->scratch);
    free(p->ref);
    free(p->ref_ok);
    if (p->own_cache) {
        free(p->cache_c);
        free(p->cache_s);
        free(p->cache_ok);
    }
    free(p);
}

posenc_status pe_vpass_invariance(const pe_vpass *q, const pe_vpass *k,
                                  const posenc_rope_params *params, int64_t max_position,
                                  posenc_invariance_result *out, posenc_error *err)
{
    const posenc_verify_sample *qs[PE_VPASS_MAX_SAMPLES], *ks[PE_VPASS_MAX_SAMPLES];
    size_t nqs = 0, nks = 0, D = (size_t)q->s.head_dim;
    for (size_t i = 0; i < q->n_samples; i++)
        if (q->samples[i].head == 0)
            qs[nqs++] = &q->samples[i];
    for (size_t i = 0; i < k->n_samples; i++)
        if (k->samples[i].head == 0)
            ks[nks++] = &k->samples[i];
    if (!nqs || !nks || (size_t)k->s.head_dim != D)
        return posenc_seterr(err, POSENC_EINVAL, "no pre-RoPE samples of head 0 to check");
    size_t npair = nqs * nks < 96 ? nqs * nks : 96;
    double *qv = malloc(npair * D * sizeof(double)), *kv = malloc(npair * D * sizeof(double));
    int64_t *mm = malloc(npair * sizeof(int64_t)), *nn = malloc(npair * sizeof(int64_t));
    posenc_status st;
    if (!qv || !kv || !mm || !nn) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t t = 0; t < npair; t++) {
        const posenc_verify_sample *a = qs[t % nqs], *b = ks[(t / nqs + t * 7) % nks];
        memcpy(qv + t * D, a->pre, D * sizeof(double));
        memcpy(kv + t * D, b->pre, D * sizeof(double));
        mm[t] = a->pos;
        nn[t] = b->pos;
    }
    posenc_invariance_input in = { npair, (int)D, qv, kv, mm, nn, max_position };
    st = posenc_verify_invariance(params, &in, out, err);
out:
    free(qv);
    free(kv);
    free(mm);
    free(nn);
    return st;
}
