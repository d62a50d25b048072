/* lib/encodings/tables.c: the table sources of every encoding (tables.h). Each builder declares the
 * arrays and keeps what its fill needs; the values come from the encoding's own kernel
 * (posenc_rope_table, posenc_alibi_row_kind, posenc_t5_*_row, posenc_shaw_index,
 * posenc_sinusoidal_fill), so a table filled in chunks is the table filled at once. */
#include "lib/encodings/tables.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/encodings/profile.h"
#include "lib/encodings/rope_step.h"
#include "posenc/llamacpp.h"

void pe_table_free(pe_table *t)
{
    if (!t)
        return;
    if (t->free_state)
        t->free_state(t->state);
    free(t->arr);
    memset(t, 0, sizeof *t);
}

posenc_status pe_table_init(pe_table *t, int cap, posenc_error *err)
{
    memset(t, 0, sizeof *t);
    t->arr = calloc((size_t)(cap > 0 ? cap : 1), sizeof *t->arr);
    if (!t->arr)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    t->cap = cap;
    return POSENC_OK;
}

posenc_status pe_table_begin(pe_table *t, int cap, size_t state_size, pe_fill_fn fill,
                             void (*free_state)(void *), void **state, posenc_error *err)
{
    posenc_status st = pe_table_init(t, cap, err);
    if (st != POSENC_OK)
        return st;
    if (!(t->state = calloc(1, state_size))) {
        pe_table_free(t);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    t->fill = fill;
    t->free_state = free_state ? free_state : free;
    *state = t->state;
    return POSENC_OK;
}

int pe_table_add(pe_table *t, const char *name, posenc_dtype dtype, posenc_dtype src, int ndim,
                 const int64_t *shape, int64_t rowlen)
{
    int i = t->narr++;
    pe_table_array *a = &t->arr[i];
    memset(a, 0, sizeof *a);
    snprintf(a->info.name, sizeof a->info.name, "%s", name);
    a->info.dtype = dtype;
    a->info.ndim = ndim;
    /* the element count; a product past INT64_MAX is left to the pipeline's size check */
    uint64_t n = 1;
    int big = 0;
    for (int k = 0; k < ndim; k++) {
        a->info.shape[k] = shape[k];
        uint64_t d = shape[k] > 0 ? (uint64_t)shape[k] : 0;
        if (d && n > UINT64_MAX / d)
            big = 1;
        n = big ? n : n * d;
    }
    a->src = src;
    a->rowlen = rowlen;
    a->rows = big || rowlen <= 0 ? 0 : (int64_t)(n / (uint64_t)rowlen);
    return i;
}

static int add_array(pe_table *t, const char *name, posenc_dtype dtype, posenc_dtype src,
                     int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t rowlen)
{
    const int64_t shape[3] = { d0, d1, d2 };
    return pe_table_add(t, name, dtype, src, ndim, shape, rowlen);
}

static void fill_pos(const pe_table_pos *p, int64_t row0, int64_t n, int64_t *out)
{
    if (p->fn) {
        p->fn(p->ctx, (uint64_t)row0, (size_t)n, out);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        out[i] = row0 + i;
}

static int64_t pos_at(const pe_table_pos *p, int64_t r)
{
    int64_t v;
    fill_pos(p, r, 1, &v);
    return v;
}

/* Scratch that grows to the largest request and is kept (fill runs on one thread). */
static void *grow(void **buf, size_t *cap, size_t bytes)
{
    if (bytes > *cap) {
        void *nb = realloc(*buf, bytes ? bytes : 1);
        if (!nb)
            return NULL;
        *buf = nb;
        *cap = bytes;
    }
    return *buf;
}

void pe_round_dd(double hi, double lo, posenc_dtype dt, void *dst)
{
    posenc_dtype_convert(dst, dt, &hi, POSENC_DT_F64, 1);
    if (lo == 0 || dt == POSENC_DT_F64)
        return;
    double r, s, back;
    unsigned char tmp[8];
    posenc_dtype_convert(&r, POSENC_DT_F64, dst, dt, 1);
    if (r == hi || !isfinite(r))
        return;
    s = 2 * hi - r; /* the other neighbour when hi is the midpoint of r and s */
    posenc_dtype_convert(tmp, dt, &s, POSENC_DT_F64, 1);
    posenc_dtype_convert(&back, POSENC_DT_F64, tmp, dt, 1);
    if (back != s)
        return;
    double want = lo > 0 ? fmax(r, s) : fmin(r, s);
    posenc_dtype_convert(dst, dt, &want, POSENC_DT_F64, 1);
}

/* ---------------------------------------------------------------- RoPE */

#define ROPE_CHUNK_ELEMS ((size_t)1 << 18) /* doubles per chunk (2 MiB) */
#define ROPE_CHUNK_ROWS_MAX 4096

struct rope_state {
    const posenc_rope_params *p;
    posenc_precision prec;
    posenc_layout layout;
    pe_table_pos pos;
    int width, nthreads, inv;  /* inv: index of inv_freq */
    int f32;                   /* float32 rows of the exact precision, by steps */
    double *steps;             /* their rows of d (pe_rope_step_rows), once for every chunk */
    posenc_dtype dtype;
    int64_t *posbuf;
    size_t poscap;
    double *other;             /* the array not asked for (posenc_rope_table writes both) */
    size_t othercap;
};

static void rope_free(void *s)
{
    struct rope_state *r = s;
    if (!r)
        return;
    free(r->posbuf);
    free(r->other);
    free(r->steps);
    free(r);
}

static posenc_status rope_fill(pe_table *t, int which, int64_t row0, int64_t n, void *buf,
                               posenc_error *err)
{
    struct rope_state *r = t->state;
    if (which == r->inv) {
        const posenc_rope_params *p = r->p;
        unsigned char *o = buf;
        size_t es = posenc_dtype_size(t->arr[which].src);
        const pe_profile *prof = pe_profile_get(r->prec);
        unsigned pf = prof ? prof->flags : PF_F32;
        if (pf & PF_GGML) {
            const int64_t one[3] = { 1, 1, 1 };
            double ga[POSENC_MAX_FREQ];
            posenc_ggml_rope_angles(&p->ggml, one, ga);
            memcpy(o, ga, (size_t)p->n_freq * sizeof(double));
        } else if (pf & PF_F32) {
            memcpy(o, p->inv_freq_f32, (size_t)p->n_freq * sizeof(float));
        } else {
            for (int i = 0; i < p->n_freq; i++)
                pe_round_dd(p->inv_hi[i], p->inv_lo[i], r->dtype, o + (size_t)i * es);
        }
        (void)row0;
        (void)n;
        return POSENC_OK;
    }
    size_t ne = (size_t)n * (size_t)r->width;
    if (!grow((void **)&r->posbuf, &r->poscap, (size_t)n * sizeof(int64_t)) ||
        !grow((void **)&r->other, &r->othercap, ne * sizeof(double)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    fill_pos(&r->pos, row0, n, r->posbuf);
    if (r->f32) {
        float *c = which == 0 ? buf : (void *)r->other, *s = which == 0 ? (void *)r->other : buf;
        return pe_rope_table_f32(r->p, r->layout, r->posbuf, (size_t)n, c, s, r->nthreads,
                                 r->steps, err);
    }
    double *c = which == 0 ? buf : r->other, *s = which == 0 ? r->other : buf;
    return posenc_rope_table(r->p, r->prec, r->layout, r->posbuf, (size_t)n, c, s, r->nthreads,
                             err);
}

posenc_status pe_table_rope(pe_table *t, const posenc_rope_params *p, posenc_precision prec,
                            posenc_layout layout, int64_t n_pos, pe_table_pos pos,
                            posenc_dtype dtype, int nthreads, posenc_error *err)
{
    memset(t, 0, sizeof *t);
    int width = posenc_rope_table_width(p, layout);
    if (width <= 0 || p->n_freq <= 0 || p->n_freq > POSENC_MAX_FREQ)
        return posenc_seterr(err, POSENC_EINVAL, "RoPE parameters give an empty table "
                             "(rotary_dim %d)", p->rotary_dim);
    struct rope_state *r = NULL;
    posenc_status st = pe_table_begin(t, 3, sizeof *r, rope_fill, rope_free, (void **)&r, err);
    if (st != POSENC_OK)
        return st;
    r->p = p;
    r->prec = prec;
    r->layout = layout;
    r->pos = pos;
    r->width = width;
    r->nthreads = nthreads;
    r->dtype = dtype;
    /* a float32 table of the exact precision: the rows in float32 by steps, each value the
     * float the double row would round to (lib/encodings/rope_step.h) */
    r->f32 = prec == POSENC_PREC_EXACT && dtype == POSENC_DT_F32;
    if (r->f32 && !(r->steps = pe_rope_step_rows(p, p->n_freq))) {
        pe_table_free(t);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    posenc_dtype csrc = r->f32 ? POSENC_DT_F32 : POSENC_DT_F64;
    if (layout == POSENC_LAYOUT_VLLM) {
        add_array(t, "cos_sin_cache", dtype, csrc, 2, n_pos, width, 0, width);
    } else {
        add_array(t, "cos", dtype, csrc, 2, n_pos, width, 0, width);
        add_array(t, "sin", dtype, csrc, 2, n_pos, width, 0, width);
    }
    const pe_profile *prof = pe_profile_get(prec);
    unsigned pf = prof ? prof->flags : PF_F32;
    posenc_dtype isrc = pf & PF_GGML  ? POSENC_DT_F64
                        : pf & PF_F32 ? POSENC_DT_F32
                                      : dtype;
    r->inv = add_array(t, "inv_freq", dtype, isrc, 1, p->n_freq, 0, 0, p->n_freq);
    int64_t rows = (int64_t)(ROPE_CHUNK_ELEMS / (size_t)width);
    t->chunk_rows = rows > ROPE_CHUNK_ROWS_MAX ? ROPE_CHUNK_ROWS_MAX : rows < 1 ? 1 : rows;
    t->pure = 1;
    return POSENC_OK;
}

/* ---------------------------------------------------------------- relative encodings */

/* One state for ALiBi, T5 and Shaw: each fills query rows of k_len keys. */
struct rel_state {
    pe_table_pos pos;
    int64_t n_q, k_len;
    /* ALiBi */
    posenc_alibi_kind kind;
    posenc_alibi_convention conv;
    double *slopes;
    int heads, broadcast;
    /* T5 */
    int bidir, num_buckets, max_distance;
    /* Shaw */
    int64_t k, depth;
    int bert;
    const float *weights;
};

static void rel_free(void *s)
{
    struct rel_state *r = s;
    if (r)
        free(r->slopes);
    free(r);
}

static posenc_status rel_new(pe_table *t, pe_table_pos pos, int64_t n_q, int64_t k_len,
                             pe_fill_fn fill, struct rel_state **out, posenc_error *err)
{
    struct rel_state *r = NULL;
    posenc_status st = pe_table_begin(t, 2, sizeof *r, fill, rel_free, (void **)&r, err);
    if (st != POSENC_OK)
        return st;
    r->pos = pos;
    r->n_q = n_q;
    r->k_len = k_len;
    t->pure = 1;
    *out = r;
    return POSENC_OK;
}

static posenc_status alibi_fill(pe_table *t, int which, int64_t row0, int64_t n, void *buf,
                                posenc_error *err)
{
    struct rel_state *r = t->state;
    (void)err;
    if (which == 0) {
        memcpy(buf, r->slopes, (size_t)r->heads * sizeof(double));
        return POSENC_OK;
    }
    int64_t qrows = r->broadcast ? 1 : r->n_q;
    double *o = buf;
    for (int64_t i = 0; i < n; i++, o += r->k_len) {
        int64_t row = row0 + i, h = row / qrows;
        int64_t q = r->broadcast ? r->k_len - 1 : pos_at(&r->pos, row % qrows);
        posenc_alibi_row_kind(r->kind, r->slopes[h], r->conv, q, r->k_len, o);
    }
    return POSENC_OK;
}

posenc_status pe_table_alibi(pe_table *t, posenc_alibi_kind kind, posenc_alibi_convention conv,
                             const double *slopes, int heads, int64_t n_q, int64_t k_len,
                             int broadcast, pe_table_pos pos, posenc_dtype dtype,
                             posenc_error *err)
{
    struct rel_state *r = NULL;
    posenc_status st = rel_new(t, pos, n_q, k_len, alibi_fill, &r, err);
    if (st != POSENC_OK)
        return st;
    r->kind = kind;
    r->conv = conv;
    r->heads = heads;
    r->broadcast = broadcast;
    r->slopes = malloc((size_t)(heads > 0 ? heads : 1) * sizeof(double));
    if (!r->slopes) {
        pe_table_free(t);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    memcpy(r->slopes, slopes, (size_t)heads * sizeof(double));
    add_array(t, "slopes", dtype, POSENC_DT_F64, 1, heads, 0, 0, heads);
    add_array(t, "bias", dtype, POSENC_DT_F64, 3, heads, broadcast ? 1 : n_q, k_len, k_len);
    return POSENC_OK;
}

static posenc_status t5_fill(pe_table *t, int which, int64_t row0, int64_t n, void *buf,
                             posenc_error *err)
{
    struct rel_state *r = t->state;
    (void)err;
    for (int64_t i = 0; i < n; i++) {
        int64_t row = row0 + i;
        if (which == 0) {
            posenc_t5_bucket_row(pos_at(&r->pos, row), r->k_len, r->bidir, r->num_buckets,
                                 r->max_distance, (int32_t *)buf + i * r->k_len);
        } else {
            int h = (int)(row / r->n_q);
            posenc_t5_bias_row(r->weights, r->heads, h, pos_at(&r->pos, row % r->n_q),
                               r->k_len, r->bidir, r->num_buckets, r->max_distance,
                               (float *)buf + i * r->k_len);
        }
    }
    return POSENC_OK;
}

posenc_status pe_table_t5(pe_table *t, int bidirectional, int num_buckets, int max_distance,
                          const float *weights, int heads, int64_t n_q, int64_t k_len,
                          pe_table_pos pos, posenc_dtype dtype, posenc_error *err)
{
    struct rel_state *r = NULL;
    posenc_status st = posenc_t5_check(bidirectional, num_buckets, max_distance, err);
    if (st == POSENC_OK)
        st = rel_new(t, pos, n_q, k_len, t5_fill, &r, err);
    if (st != POSENC_OK)
        return st;
    r->bidir = bidirectional;
    r->num_buckets = num_buckets;
    r->max_distance = max_distance;
    r->weights = weights;
    r->heads = heads;
    add_array(t, "buckets", POSENC_DT_I32, POSENC_DT_I32, 2, n_q, k_len, 0, k_len);
    if (weights)
        add_array(t, "bias", dtype, POSENC_DT_F32, 3, heads, n_q, k_len, k_len);
    return POSENC_OK;
}

static int64_t shaw_index(const struct rel_state *r, int64_t q, int64_t key)
{
    return r->bert ? posenc_shaw_index(key, q, r->k) : posenc_shaw_index(q, key, r->k);
}

static posenc_status shaw_fill(pe_table *t, int which, int64_t row0, int64_t n, void *buf,
                               posenc_error *err)
{
    struct rel_state *r = t->state;
    (void)err;
    if (which == 0) {
        int32_t *o = buf;
        for (int64_t i = 0; i < n; i++) {
            int64_t q = pos_at(&r->pos, row0 + i);
            for (int64_t c = 0; c < r->k_len; c++)
                *o++ = (int32_t)shaw_index(r, q, c);
        }
        return POSENC_OK;
    }
    /* rk: one row per (query, key) pair, depth values each */
    float *o = buf;
    int64_t qrow = -1, q = 0;
    for (int64_t i = 0; i < n; i++, o += r->depth) {
        int64_t row = row0 + i;
        if (row / r->k_len != qrow) {
            qrow = row / r->k_len;
            q = pos_at(&r->pos, qrow);
        }
        int64_t idx = shaw_index(r, q, row % r->k_len);
        memcpy(o, r->weights + (size_t)idx * (size_t)r->depth, (size_t)r->depth * sizeof *o);
    }
    return POSENC_OK;
}

posenc_status pe_table_shaw(pe_table *t, int64_t k, int bert, const float *weights,
                            int64_t depth, int64_t n_q, int64_t k_len, pe_table_pos pos,
                            posenc_dtype dtype, posenc_error *err)
{
    struct rel_state *r = NULL;
    if (k <= 0)
        return posenc_seterr(err, POSENC_EINVAL, "Shaw tables need max_relative_position > 0");
    posenc_status st = rel_new(t, pos, n_q, k_len, shaw_fill, &r, err);
    if (st != POSENC_OK)
        return st;
    r->k = k;
    r->bert = bert;
    r->weights = weights;
    r->depth = depth;
    add_array(t, "index", POSENC_DT_I32, POSENC_DT_I32, 2, n_q, k_len, 0, k_len);
    if (weights)
        add_array(t, "rk", dtype, POSENC_DT_F32, 3, n_q, k_len, depth, depth);
    return POSENC_OK;
}

/* ---------------------------------------------------------------- absolute tables */

struct abs_state {
    pe_table_pos pos;
    const posenc_sinusoidal *sin;
    int64_t width, row_offset;
    pe_rows_fn rows;
    void *ctx;
    size_t es;
};

static posenc_status sinusoidal_fill(pe_table *t, int which, int64_t row0, int64_t n,
                                     void *buf, posenc_error *err)
{
    struct abs_state *a = t->state;
    (void)which;
    (void)err;
    double *o = buf;
    for (int64_t i = 0; i < n; i++, o += a->width)
        posenc_sinusoidal_fill(a->sin, pos_at(&a->pos, row0 + i), o);
    return POSENC_OK;
}

static posenc_status learned_fill(pe_table *t, int which, int64_t row0, int64_t n, void *buf,
                                  posenc_error *err)
{
    struct abs_state *a = t->state;
    (void)which;
    if (!a->pos.fn) /* a range: the stored rows in order */
        return a->rows(a->ctx, a->row_offset + row0, n, buf, err);
    unsigned char *o = buf;
    for (int64_t i = 0; i < n; i++, o += (size_t)a->width * a->es) {
        posenc_status st = a->rows(a->ctx, a->row_offset + pos_at(&a->pos, row0 + i), 1, o, err);
        if (st != POSENC_OK)
            return st;
    }
    return POSENC_OK;
}

static posenc_status abs_new(pe_table *t, pe_table_pos pos, int64_t width, pe_fill_fn fill,
                             struct abs_state **out, posenc_error *err)
{
    struct abs_state *a = NULL;
    posenc_status st = pe_table_begin(t, 1, sizeof *a, fill, NULL, (void **)&a, err);
    if (st != POSENC_OK)
        return st;
    a->pos = pos;
    a->width = width;
    *out = a;
    return POSENC_OK;
}

posenc_status pe_table_sinusoidal(pe_table *t, const posenc_sinusoidal *s, int d_model,
                                  int64_t n_q, pe_table_pos pos, posenc_dtype dtype,
                                  posenc_error *err)
{
    struct abs_state *a = NULL;
    posenc_status st = abs_new(t, pos, d_model, sinusoidal_fill, &a, err);
    if (st != POSENC_OK)
        return st;
    a->sin = s;
    t->pure = 1;
    add_array(t, "pe", dtype, POSENC_DT_F64, 2, n_q, d_model, 0, d_model);
    return POSENC_OK;
}

posenc_status pe_table_learned(pe_table *t, pe_rows_fn rows, void *ctx, posenc_dtype src,
                               int64_t width, int64_t n_q, int64_t row_offset,
                               pe_table_pos pos, posenc_dtype dtype, posenc_error *err)
{
    struct abs_state *a = NULL;
    posenc_status st = abs_new(t, pos, width, learned_fill, &a, err);
    if (st != POSENC_OK)
        return st;
    a->rows = rows;
    a->ctx = ctx;
    a->row_offset = row_offset;
    a->es = posenc_dtype_size(src);
    add_array(t, "pe", dtype, src, 2, n_q, width, 0, width);
    return POSENC_OK;
}
