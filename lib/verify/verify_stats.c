/* lib/verify/verify_stats.c: the statistics of one comparison pass of posenc verify (see
 * verify_stats.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/verify/verify_rot.h"
#include "lib/verify/verify_stats.h"

#define N_TAB (1 + POSENC_VERIFY_N_PROFILES) /* the reference, then each profile */

/* cos/sin of one recipe per sequence index, filled on first use */
struct tabcache {
    double *c, *s;
    unsigned char *ok;
    double *drift; /* profiles: max |cos, sin - reference| at that index */
};

struct pe_vpass {
    pe_vpass_spec s;
    pe_vstats st;
    posenc_verify_sample *samples;
    size_t n_samples, want;
    double *ref;                   /* rotated rows alone: the de-rotated first row of each head */
    double *ref_floor;             /* and what its error adds to every later row's bound */
    unsigned char *ref_ok;
    struct tabcache tab[N_TAB];    /* a NULL c: computed per row */
    int own_cache;
    void *ulp_in, *ulp_out;        /* one row in pre_dt, one in cmp_dt */
    double *ulp_ref;
};

int pe_vstats_ulp_bin(uint64_t d)
{
    if (d == UINT64_MAX)
        return PE_ULP_BINS - 1;
    int b = 0;
    while (d && b < PE_ULP_BINS - 2) {
        b++;
        d >>= 1;
    }
    return b;
}

static const posenc_verify_recipe *tab_recipe(const pe_vpass *p, int t)
{
    return t == 0 ? p->s.rec : p->s.prof[t - 1];
}

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

static void free_caches(pe_vpass *p)
{
    for (int t = 0; t < N_TAB; t++) {
        free(p->tab[t].c);
        free(p->tab[t].s);
        free(p->tab[t].ok);
        free(p->tab[t].drift);
        memset(&p->tab[t], 0, sizeof p->tab[t]);
    }
}

/* one cache per recipe when all fit in PE_VPASS_CACHE_BYTES, else none (computed per row) */
static void alloc_caches(pe_vpass *p)
{
    const pe_vpass_spec *s = p->s.share ? &p->s.share->s : &p->s;
    if (p->s.share) {
        memcpy(p->tab, p->s.share->tab, sizeof p->tab);
        return;
    }
    int nf = s->rec->params.n_freq > 0 ? s->rec->params.n_freq : 1, nt = 0;
    for (int t = 0; t < N_TAB; t++)
        nt += tab_recipe(p, t) != NULL;
    if ((uint64_t)s->seq * (uint64_t)nf * 24 * (uint64_t)nt > PE_VPASS_CACHE_BYTES)
        return;
    p->own_cache = 1;
    size_t n = (size_t)s->seq * (size_t)nf;
    for (int t = 0; t < N_TAB; t++) {
        if (!tab_recipe(p, t))
            continue;
        struct tabcache *c = &p->tab[t];
        c->c = malloc(n * sizeof(double));
        c->s = malloc(n * sizeof(double));
        c->ok = calloc((size_t)s->seq, 1);
        c->drift = malloc((size_t)s->seq * sizeof(double));
        if (!c->c || !c->s || !c->ok || !c->drift) {
            free_caches(p);
            p->own_cache = 0;
            return;
        }
    }
}

posenc_status pe_vpass_new(const pe_vpass_spec *s, pe_vpass **out, posenc_error *err)
{
    if (!s->has_pre && !s->has_cmp)
        return posenc_seterr(err, POSENC_EINVAL, "a verify pass needs pre-RoPE or rotated rows");
    pe_vpass *p = calloc(1, sizeof *p);
    if (!p)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    p->s = *s;
    size_t D = (size_t)s->head_dim, bh = (size_t)s->batch * (size_t)s->heads;
    p->st.heads = s->heads;
    p->st.head_abs = calloc((size_t)s->heads, sizeof(double));
    p->st.head_rel = calloc((size_t)s->heads, sizeof(double));
    p->st.head_ratio = calloc((size_t)s->heads, sizeof(double));
    p->samples = calloc(PE_VPASS_MAX_SAMPLES, sizeof *p->samples);
    if (!s->has_pre) {
        p->ref = malloc(bh * D * sizeof(double));
        p->ref_floor = calloc(bh, sizeof(double));
        p->ref_ok = calloc(bh, 1);
    }
    if (s->ulp) {
        p->ulp_in = malloc(D * 8);
        p->ulp_out = malloc(D * 8);
        p->ulp_ref = malloc(D * sizeof(double));
        p->st.has_ulp = 1;
    }
    for (int k = 0; k < POSENC_VERIFY_N_PROFILES; k++)
        p->st.prof[k].on = s->prof[k] != NULL && s->has_cmp;
    for (int64_t q = 0; q < s->seq; q++)
        p->want += s->keep[q] ? (s->heads > 1 ? 2 : 1) : 0;
    alloc_caches(p);
    if (!p->st.head_abs || !p->st.head_rel || !p->st.head_ratio || !p->samples ||
        (!s->has_pre && (!p->ref || !p->ref_ok || !p->ref_floor)) ||
        (s->ulp && (!p->ulp_in || !p->ulp_out || !p->ulp_ref))) {
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

/* the largest |cos, sin - reference| of a profile's tables */
static double table_drift(int nf, const double *c, const double *s, const double *rc,
                          const double *rs)
{
    double d = 0;
    for (int i = 0; i < nf; i++) {
        double e = fmax(fabs(c[i] - rc[i]), fabs(s[i] - rs[i]));
        if (e > d || e != e)
            d = e;
    }
    return d;
}

/* cos and sin of recipe t at seq index s: from the cache, filled on first use, or into lc, ls.
 * For a profile (t > 0), rc and rs are the reference's tables at s and *drift the profile's
 * drift from them there; for the reference (t 0, rc NULL) *drift is 0. */
static void cossin_at(const pe_vpass *p, int t, int64_t s, const double *rc, const double *rs,
                      double **c, double **sn, double *lc, double *ls, double *drift)
{
    const posenc_verify_recipe *r = tab_recipe(p, t);
    int nf = r->params.n_freq;
    const struct tabcache *k = &p->tab[t];
    if (k->c) {
        double *cc = k->c + (size_t)s * (size_t)nf, *ss = k->s + (size_t)s * (size_t)nf;
        if (!k->ok[s]) {
            posenc_verify_recipe_cossin(r, position_of(p, s), cc, ss);
            k->drift[s] = rc ? table_drift(nf, cc, ss, rc, rs) : 0;
            k->ok[s] = 1;
        }
        *c = cc;
        *sn = ss;
        *drift = k->drift[s];
        return;
    }
    posenc_verify_recipe_cossin(r, position_of(p, s), lc, ls);
    *c = lc;
    *sn = ls;
    *drift = rc ? table_drift(nf, lc, ls, rc, rs) : 0;
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

static void set_index(pe_vindex *x, int64_t b, int64_t h, int64_t pos, int64_t dim)
{
    x->b = b;
    x->h = h;
    x->pos = pos;
    x->dim = dim;
}

static void account(pe_vstats *st, const posenc_verify_row_result *r, int64_t b, int64_t h,
                    int64_t pos, int64_t D)
{
    double ae = r->abs_err, re = r->rel_err, q = r->ratio;
    st->rows++;
    st->elems += (uint64_t)D;
    st->elems_bad += (uint64_t)r->n_bad;
    if (r->n_bad)
        st->bad++;
    if (r->n_nan + r->n_inf) {
        if (st->nan + st->inf == 0)
            set_index(&st->first_nonfinite, b, h, pos, r->first_nonfinite);
        st->nan += (uint64_t)r->n_nan;
        st->inf += (uint64_t)r->n_inf;
    }
    if (ae > st->max_abs)
        st->max_abs = ae;
    if (re > st->max_rel)
        st->max_rel = re;
    if (q > st->max_ratio || st->rows == 1) {
        st->max_ratio = q > st->max_ratio || st->rows == 1 ? q : st->max_ratio;
        set_index(&st->worst, b, h, pos, r->worst_dim);
        st->worst_b = b;
        st->worst_h = h;
        st->worst_pos = pos;
        st->worst_err = r->worst_err;
        st->worst_bound = r->worst_bound;
        st->worst_value = r->worst_value;
        st->worst_ref = r->worst_ref;
    }
    if (ae > st->head_abs[h])
        st->head_abs[h] = ae;
    if (re > st->head_rel[h])
        st->head_rel[h] = re;
    if (q > st->head_ratio[h])
        st->head_ratio[h] = q;
    int bk = pe_vstats_bucket(pos);
    st->b_rows[bk]++;
    if (ae > st->b_abs[bk])
        st->b_abs[bk] = ae;
    if (re > st->b_rel[bk])
        st->b_rel[bk] = re;
    if (q > st->b_ratio[bk])
        st->b_ratio[bk] = q;
}

static void account_prof(pe_vprof *f, const posenc_verify_row_result *r, double drift,
                         int64_t pos)
{
    f->elems_bad += (uint64_t)r->n_bad;
    f->rows_bad += r->n_bad > 0;
    if (r->abs_err > f->max_abs)
        f->max_abs = r->abs_err;
    if (r->rel_err > f->max_rel)
        f->max_rel = r->rel_err;
    if (r->ratio > f->max_ratio)
        f->max_ratio = r->ratio;
    if (drift > f->drift || drift != drift) {
        f->drift = drift;
        f->drift_pos = pos;
    }
}

/* ulp distances of the runtime's row from posenc apply's rotation of pre (v: the head vector
 * index of (b, h, s) in [batch, heads, seq, head_dim] order) */
static void account_ulp(pe_vpass *p, uint64_t v, int64_t b, int64_t h, int64_t pos,
                        const double *pre, const double *cmp)
{
    const pe_vpass_spec *s = &p->s;
    size_t D = (size_t)s->head_dim;
    posenc_apply_shape sh = { POSENC_APPLY_BHSD, s->batch, s->heads, s->seq, s->head_dim };
    posenc_dtype_convert(p->ulp_in, s->pre_dt, pre, POSENC_DT_F64, D);
    posenc_apply_rows(s->ulp, &sh, v, 1, p->ulp_in, s->pre_dt, p->ulp_out, s->cmp_dt);
    posenc_dtype_convert(p->ulp_ref, POSENC_DT_F64, p->ulp_out, s->cmp_dt, D);
    for (size_t j = 0; j < D; j++) {
        uint64_t d = posenc_verify_ulp_distance(cmp[j], p->ulp_ref[j], s->cmp_dt);
        p->st.ulp_hist[pe_vstats_ulp_bin(d)]++;
        if (d > p->st.max_ulp || (d == 0 && p->st.max_ulp == 0 && p->st.rows == 1 && j == 0)) {
            p->st.max_ulp = d;
            set_index(&p->st.worst_ulp, b, h, pos, (int64_t)j);
        }
    }
}

posenc_status pe_vpass_row(pe_vpass *p, int64_t b, int64_t h, int64_t s, const double *pre,
                           const double *cmp, posenc_error *err)
{
    const posenc_verify_recipe *rec = p->s.rec;
    size_t D = (size_t)p->s.head_dim;
    int nf = rec->params.n_freq;
    double lc[POSENC_MAX_FREQ], ls[POSENC_MAX_FREQ], dr;
    double *c = NULL, *sn = NULL;
    int64_t pos = position_of(p, s);
    double floor = 0;
    if (!pre) {
        /* rotated rows alone: the first row of this head, R(pos) * scaling undone */
        size_t bh = (size_t)b * (size_t)p->s.heads + (size_t)h;
        double *rr = p->ref + bh * D;
        if (!p->ref_ok[bh]) {
            cossin_at(p, 0, s, NULL, NULL, &c, &sn, lc, ls, &dr);
            double a = rec->params.attention_scaling;
            double a2 = a * a > 0 ? a * a : 1;
            posenc_verify_rotate(rec->params.style, (int)D, 2 * nf, c, sn, 1, cmp, rr);
            for (int j = 0; j < 2 * nf && j < (int)D; j++)
                rr[j] /= a2 / rec->scale;
            /* the first row's own error, up to its bound, rotates into every later row */
            posenc_verify_row_result r0;
            posenc_verify_row_check(rec, &p->s.tol, pos, c, sn, rr, cmp, &r0);
            p->ref_floor[bh] = 1.5 * r0.max_bound;
            p->ref_ok[bh] = 1;
        }
        pre = rr;
        floor = p->ref_floor[bh];
    } else {
        for (size_t j = 0; j < D; j++)
            if (!isfinite(pre[j])) {
                if (!p->st.pre_nonfinite)
                    set_index(&p->st.first_pre_nonfinite, b, h, pos, (int64_t)j);
                p->st.pre_nonfinite++;
            }
    }
    int sampled = b == 0 && (h == 0 || h == p->s.heads - 1) && p->s.keep[s];
    posenc_status st;
    if (sampled && (st = keep_sample(p, pos, (int)h, pre, cmp, err)) != POSENC_OK)
        return st;
    if (!cmp)
        return POSENC_OK;
    if (!c)
        cossin_at(p, 0, s, NULL, NULL, &c, &sn, lc, ls, &dr);
    posenc_verify_row_result r;
    posenc_verify_tolerance t = p->s.tol;
    t.floor += floor;
    double slack[POSENC_MAX_FREQ], s16 = pe_recipe_step16(rec);
    if (s16 > 0 && !(p->s.slack_a && p->s.slack_b)) {
        for (int i = 0; i < nf; i++)
            slack[i] = s16;
        t.slack = slack;
    }
    if (p->s.slack_a && p->s.slack_b) {
        double ac[POSENC_MAX_FREQ], as[POSENC_MAX_FREQ], bc[POSENC_MAX_FREQ], bs[POSENC_MAX_FREQ];
        int n = p->s.slack_a->params.n_freq < p->s.slack_b->params.n_freq
                    ? p->s.slack_a->params.n_freq : p->s.slack_b->params.n_freq;
        posenc_verify_recipe_cossin(p->s.slack_a, pos, ac, as);
        posenc_verify_recipe_cossin(p->s.slack_b, pos, bc, bs);
        for (int i = 0; i < nf; i++) {
            double d = i < n ? fmax(fabs(ac[i] - bc[i]), fabs(as[i] - bs[i])) : 0;
            slack[i] = (d == d ? d : 0) + s16;
        }
        t.slack = slack;
    }
    posenc_verify_row_check(rec, &t, pos, c, sn, pre, cmp, &r);
    account(&p->st, &r, b, h, pos, (int64_t)D);
    posenc_verify_tolerance pt = p->s.ptol;
    pt.floor += floor;
    for (int k = 0; k < POSENC_VERIFY_N_PROFILES; k++) {
        /* a profile is followed over every row while it matches; its first row off its own
         * rounding settles that it does not, and it is not evaluated further */
        if (!p->st.prof[k].on || (p->st.prof[k].rows_bad && k != p->s.held))
            continue;
        double pc[POSENC_MAX_FREQ], ps[POSENC_MAX_FREQ], *kc, *ks;
        cossin_at(p, k + 1, s, c, sn, &kc, &ks, pc, ps, &dr);
        posenc_verify_row_check(p->s.prof[k], &pt, pos, kc, ks, pre, cmp, &r);
        account_prof(&p->st.prof[k], &r, dr, pos);
    }
    if (p->s.ulp && p->s.has_pre) {
        uint64_t v = ((uint64_t)b * (uint64_t)p->s.heads + (uint64_t)h) * (uint64_t)p->s.seq +
                     (uint64_t)s;
        account_ulp(p, v, b, h, pos, pre, cmp);
    }
    return POSENC_OK;
}

int pe_vpass_done(const pe_vpass *p) { return !p->s.has_cmp && p->n_samples >= p->want; }

const pe_vstats *pe_vpass_stats(const pe_vpass *p) { return &p->st; }

const posenc_verify_tolerance *pe_vpass_tolerance(const pe_vpass *p) { return &p->s.tol; }

void pe_vpass_profiles(const pe_vpass *p, posenc_verify_profiles_result *fits, posenc_dtype dt)
{
    for (int k = 0; k < fits->n && k < POSENC_VERIFY_N_PROFILES; k++) {
        posenc_profile_fit *f = &fits->fit[k];
        const pe_vprof *v = &p->st.prof[k];
        if (!f->available || !v->on)
            continue;
        f->elements_failed = v->elems_bad;
        f->rows_failed = v->rows_bad;
        f->max_abs_err = v->max_abs;
        f->max_rel_err = v->max_rel;
        f->ratio = v->max_ratio;
        f->drift = v->drift;
        f->drift_pos = v->drift_pos;
    }
    posenc_verify_profiles_explain(fits, p->s.what, dt);
}

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
    free(p->st.head_ratio);
    free(p->ref);
    free(p->ref_floor);
    free(p->ref_ok);
    free(p->ulp_in);
    free(p->ulp_out);
    free(p->ulp_ref);
    if (p->own_cache)
        free_caches(p);
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
