/* diff.c: the comparison engine behind `posenc diff` (see posenc/diff.h for the semantics).
 *
 * Chunks of A and B are widened to double (exact for every float dtype), compared element by
 * element and folded into fixed-size state: counters, maxima with their flat index, the ulp
 * histogram, a min-heap of the K worst elements and one record per position bucket. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/diff.h"
#include "lib/core/half.h"

#define CHUNK 4096 /* elements widened to double at a time */

struct posenc_diff {
    posenc_diff_opts o;
    uint64_t total;                 /* elements the shape holds */
    posenc_diff_result r;
    long double sum_abs, sum_sq;
    posenc_diff_elem *heap;         /* min-heap on "worseness": heap[0] is the mildest */
    posenc_diff_elem *sorted;       /* the heap sorted worst first, for the result */
    int nheap;
    posenc_diff_bucket *buckets;
    int64_t nbuckets;
    uint64_t inner, in_cnt;         /* elements per position step; position within it */
    int64_t seqn, pos, cur;         /* positions along seq_axis; current one; its bucket */
    double a[CHUNK], b[CHUNK];
};

/* ---- ulp ---- */

#if defined(__GNUC__)
#define HOT static inline __attribute__((always_inline))
#else
#define HOT static inline
#endif

/* The ordered integer of non-NaN x rounded to dt: inlined into the loops, one per dtype. */
HOT int64_t order_of(posenc_dtype dt, double x)
{
    uint64_t mag;
    unsigned neg;
    switch (dt) {
    case POSENC_DT_F16: {
        /* x is mostly a float (every f16, bf16 and f32 input): then lib/core/half.h's one rounding
         * to f16, the same result as posenc_f64_to_f16's without its frexp/ldexp */
        float f = (float)x;
        uint16_t h = (double)f == x ? f16_store(f) : posenc_f64_to_f16(x);
        neg = h >> 15;
        mag = h & 0x7fffu;
        break;
    }
    case POSENC_DT_BF16: {
        /* likewise: a float's one rounding to bf16 is posenc_f64_to_bf16's */
        float f = (float)x;
        uint16_t h = (double)f == x ? bf16_store(f) : posenc_f64_to_bf16(x);
        neg = h >> 15;
        mag = h & 0x7fffu;
        break;
    }
    case POSENC_DT_F32: {
        float f = (float)x; /* an exact double rounded once to nearest even */
        uint32_t u;
        memcpy(&u, &f, 4);
        neg = u >> 31;
        mag = u & 0x7fffffffu;
        break;
    }
    default: {
        uint64_t u;
        memcpy(&u, &x, 8);
        neg = (unsigned)(u >> 63);
        mag = u & 0x7fffffffffffffffu;
        break;
    }
    }
    /* -mag when neg, without a branch (the signs of random data are not predictable) */
    int64_t m = -(int64_t)neg;
    return ((int64_t)mag ^ m) - m;
}

/* |x - y| without overflow: the magnitudes are below 2^63, so the distance is below 2^64 and
 * the difference of the larger and the smaller modulo 2^64 is it */
HOT uint64_t order_dist(int64_t x, int64_t y)
{
    return x >= y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x;
}

int64_t posenc_diff_ulp_order(posenc_dtype dt, double x)
{
    return isnan(x) ? 0 : order_of(dt, x);
}

uint64_t posenc_diff_ulp(posenc_dtype dt, double a, double b)
{
    if (isnan(a) || isnan(b))
        return POSENC_DIFF_NO_ULP;
    return order_dist(order_of(dt, a), order_of(dt, b));
}

/* the bit length of ulp */
HOT int hist_bin(uint64_t ulp)
{
#if defined(__GNUC__)
    return ulp ? 64 - __builtin_clzll(ulp) : 0;
#else
    int k = 0;
    while (ulp) {
        k++;
        ulp >>= 1;
    }
    return k;
#endif
}

int posenc_diff_hist_bin(uint64_t ulp) { return hist_bin(ulp); }

void posenc_diff_default_tol(posenc_dtype a, posenc_dtype b, double *rtol, double *atol)
{
    /* pytorch/pytorch torch/testing/_comparison.py _DTYPE_PRECISIONS: {float16: (0.001, 1e-05), bfloat16:
     * (0.016, 1e-05), float32: (1.3e-06, 1e-05), float64: (1e-07, 1e-07)}; other dtypes 0, 0 */
    static const double tab[][2] = {
        [POSENC_DT_F16] = { 1e-3, 1e-5 }, [POSENC_DT_BF16] = { 1.6e-2, 1e-5 },
        [POSENC_DT_F32] = { 1.3e-6, 1e-5 }, [POSENC_DT_F64] = { 1e-7, 1e-7 },
    };
    double ra = posenc_dtype_is_float(a) ? tab[a][0] : 0, aa = posenc_dtype_is_float(a) ? tab[a][1] : 0;
    double rb = posenc_dtype_is_float(b) ? tab[b][0] : 0, ab = posenc_dtype_is_float(b) ? tab[b][1] : 0;
    *rtol = ra > rb ? ra : rb;
    *atol = aa > ab ? aa : ab;
}

/* ---- the worst elements ---- */

/* 1 when x is worse than y: non-finite mismatches first, then larger abs error, then the
 * earlier index. */
static int worse(const posenc_diff_elem *x, const posenc_diff_elem *y)
{
    int fx = !isfinite(x->abs_err), fy = !isfinite(y->abs_err);
    if (fx != fy)
        return fx;
    if (!fx && x->abs_err != y->abs_err)
        return x->abs_err > y->abs_err;
    return x->flat < y->flat;
}

static void heap_down(posenc_diff_elem *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && worse(&h[m], &h[l]))
            m = l;
        if (r < n && worse(&h[m], &h[r]))
            m = r;
        if (m == i)
            return;
        posenc_diff_elem t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void keep_worst(posenc_diff *d, const posenc_diff_elem *e)
{
    int k = d->o.top_k;
    if (k == 0)
        return;
    /* the common case: a finite error no larger than the mildest kept one (which, being equal,
     * has the earlier index) */
    if (d->nheap == k && isfinite(e->abs_err) &&
        (!isfinite(d->heap[0].abs_err) || e->abs_err <= d->heap[0].abs_err))
        return;
    if (d->nheap < k) {
        int i = d->nheap++;
        d->heap[i] = *e;
        while (i > 0 && worse(&d->heap[(i - 1) / 2], &d->heap[i])) {
            posenc_diff_elem t = d->heap[i];
            d->heap[i] = d->heap[(i - 1) / 2];
            d->heap[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else if (worse(e, &d->heap[0])) {
        d->heap[0] = *e;
        heap_down(d->heap, d->nheap, 0);
    }
}

static int cmp_worst(const void *x, const void *y)
{
    const posenc_diff_elem *a = x, *b = y;
    return worse(a, b) ? -1 : worse(b, a) ? 1 : 0;
}

/* ---- position buckets ---- */

static int64_t bucket_of(const posenc_diff *d, int64_t pos)
{
    if (d->o.bucket_width > 0)
        return pos / d->o.bucket_width;
    if (pos < 64)
        return 0;
    return posenc_diff_hist_bin((uint64_t)pos) - 7 + 1; /* [64, 127] -> 1, [128, 255] -> 2 */
}

static posenc_status make_buckets(posenc_diff *d, int ndim, const int64_t *shape,
                                  posenc_error *err)
{
    int ax = d->o.seq_axis;
    if (ax < 0)
        return POSENC_OK;
    if (ax >= ndim)
        return posenc_seterr(err, POSENC_EINVAL, "sequence axis %d outside a %d-dim shape", ax,
                             ndim);
    d->seqn = shape[ax];
    d->inner = 1;
    for (int i = ax + 1; i < ndim; i++)
        d->inner *= (uint64_t)shape[i]; /* the caller checked the whole product */
    if (d->seqn == 0 || d->inner == 0)
        return POSENC_OK;
    int64_t nb = bucket_of(d, d->seqn - 1) + 1;
    if (nb > POSENC_DIFF_MAX_BUCKETS)
        return posenc_seterr(err, POSENC_ERANGE, "%lld positions in buckets of %lld make %lld "
                             "buckets, more than %d", (long long)d->seqn,
                             (long long)d->o.bucket_width, (long long)nb, POSENC_DIFF_MAX_BUCKETS);
    if (!(d->buckets = calloc((size_t)nb, sizeof *d->buckets)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    d->nbuckets = nb;
    for (int64_t i = 0; i < nb; i++) {
        posenc_diff_bucket *b = &d->buckets[i];
        if (d->o.bucket_width > 0) {
            b->lo = i * d->o.bucket_width;
            b->hi = b->lo + d->o.bucket_width - 1;
        } else {
            b->lo = i == 0 ? 0 : (int64_t)64 << (i - 1);
            b->hi = ((int64_t)64 << i) - 1;
        }
        if (b->hi > d->seqn - 1)
            b->hi = d->seqn - 1;
    }
    return POSENC_OK;
}

posenc_status posenc_diff_new(const posenc_diff_opts *opts, int ndim, const int64_t *shape,
                              posenc_diff **out, posenc_error *err)
{
    uint64_t total;
    if (!posenc_dtype_is_float(opts->ulp_dtype))
        return posenc_seterr(err, POSENC_EINVAL, "ulp dtype must be f16, bf16, f32 or f64");
    if (opts->top_k < 0 || opts->top_k > POSENC_DIFF_MAX_TOP)
        return posenc_seterr(err, POSENC_EINVAL, "top %d outside [0, %d]", opts->top_k,
                             POSENC_DIFF_MAX_TOP);
    if (opts->bucket_width < 0 || (opts->use_tol && !(opts->atol >= 0 && opts->rtol >= 0)))
        return posenc_seterr(err, POSENC_EINVAL, "negative bucket width or tolerance");
    posenc_status st = posenc_shape_size(ndim, shape, POSENC_DT_U8, &total, NULL, err);
    if (st != POSENC_OK)
        return st;
    posenc_diff *d = calloc(1, sizeof *d);
    if (!d)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    d->o = *opts;
    d->total = total;
    d->cur = -1;
    if (opts->top_k && (!(d->heap = calloc((size_t)opts->top_k, sizeof *d->heap)) ||
                        !(d->sorted = calloc((size_t)opts->top_k, sizeof *d->sorted)))) {
        posenc_diff_free(d);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    if ((st = make_buckets(d, ndim, shape, err)) != POSENC_OK) {
        posenc_diff_free(d);
        return st;
    }
    d->r.max_abs = d->r.max_rel = -1;
    *out = d;
    return POSENC_OK;
}

void posenc_diff_free(posenc_diff *d)
{
    if (!d)
        return;
    free(d->heap);
    free(d->sorted);
    free(d->buckets);
    free(d);
}

static void mark_outside(posenc_diff *d, posenc_diff_bucket *bk, posenc_diff_elem *e,
                         int nonfinite)
{
    e->outside = 1;
    if (d->r.outside++ == 0)
        d->r.first_outside = e->flat;
    if (bk) {
        bk->outside++;
        bk->nonfinite += (uint64_t)nonfinite;
    }
    keep_worst(d, e);
}

/* The figures of d->r that every pair moves, held in locals over a chunk (stored to d->r
 * at its end): the compiler keeps them in registers, where d->r's would be reloaded after
 * every store to the histogram or the buckets. The chunk's histogram counts are added to
 * d->r's at its end too (a sum of counts is the same in any order). */
struct run {
    uint64_t equal, finite, ulp_pairs, max_ulp, max_ulp_at, max_abs_at, max_rel_at;
    double max_abs, max_rel;
    double sum_abs, sum_sq; /* the chunk's sums */
    uint64_t hist[POSENC_DIFF_HIST_BINS];
};

HOT void run_load(struct run *u, const posenc_diff_result *r)
{
    memset(u, 0, sizeof *u);
    u->equal = r->equal;
    u->finite = r->finite;
    u->ulp_pairs = r->ulp_pairs;
    u->max_ulp = r->max_ulp;
    u->max_ulp_at = r->max_ulp_at;
    u->max_abs_at = r->max_abs_at;
    u->max_rel_at = r->max_rel_at;
    u->max_abs = r->max_abs;
    u->max_rel = r->max_rel;
}

HOT void run_store(const struct run *u, posenc_diff_result *r)
{
    r->equal = u->equal;
    r->finite = u->finite;
    r->ulp_pairs = u->ulp_pairs;
    r->max_ulp = u->max_ulp;
    r->max_ulp_at = u->max_ulp_at;
    r->max_abs_at = u->max_abs_at;
    r->max_rel_at = u->max_rel_at;
    r->max_abs = u->max_abs;
    r->max_rel = u->max_rel;
    for (int b = 0; b < POSENC_DIFF_HIST_BINS; b++)
        r->hist[b] += u->hist[b];
}

/* Fold a finite pair's errors into the maxima and the chunk's sums. */
HOT void finite_stats(struct run *r, posenc_diff_bucket *bk, const posenc_diff_elem *e)
{
    r->finite++;
    r->sum_abs += e->abs_err;
    r->sum_sq += e->abs_err * e->abs_err;
    if (e->abs_err > r->max_abs) {
        r->max_abs = e->abs_err;
        r->max_abs_at = e->flat;
    }
    if (e->rel_err > r->max_rel) {
        r->max_rel = e->rel_err;
        r->max_rel_at = e->flat;
    }
    if (bk) {
        if (e->abs_err > bk->max_abs)
            bk->max_abs = e->abs_err;
        if (e->rel_err > bk->max_rel)
            bk->max_rel = e->rel_err;
    }
}

/* The bucket of the next element (NULL without buckets); advances the position counter. */
HOT posenc_diff_bucket *next_bucket(posenc_diff *d)
{
    if (!d->buckets)
        return NULL;
    if (d->cur < 0 || d->pos > d->buckets[d->cur].hi || d->pos < d->buckets[d->cur].lo)
        d->cur = bucket_of(d, d->pos);
    posenc_diff_bucket *bk = &d->buckets[d->cur];
    bk->count++;
    if (++d->in_cnt == d->inner) {
        d->in_cnt = 0;
        if (++d->pos == d->seqn)
            d->pos = 0;
    }
    return bk;
}

/* Compare one pair; flat is its index; udt is d->o.ulp_dtype (a constant where inlined); u the
 * running figures. */
HOT void one(posenc_diff *d, struct run *u, uint64_t flat, double x, double y, posenc_dtype udt)
{
    posenc_diff_result *r = &d->r;
    posenc_diff_bucket *bk = next_bucket(d);
    posenc_diff_elem e = { flat, x, y, NAN, NAN, POSENC_DIFF_NO_ULP, 0 };
    if (isnan(x) || isnan(y)) {
        if (isnan(x) && isnan(y) && d->o.equal_nan) {
            r->nan_equal++;
            u->equal++;
        } else {
            r->nan_mismatch++;
            mark_outside(d, bk, &e, 1);
        }
        return;
    }
    e.ulp = x == y ? 0 : order_dist(order_of(udt, x), order_of(udt, y));
    u->hist[hist_bin(e.ulp)]++;
    if (u->ulp_pairs++ == 0 || e.ulp > u->max_ulp) {
        u->max_ulp = e.ulp;
        u->max_ulp_at = flat;
    }
    if (bk && e.ulp > bk->max_ulp)
        bk->max_ulp = e.ulp;
    int fin = isfinite(x) && isfinite(y);
    if (fin) {
        e.abs_err = fabs(x - y);
        e.rel_err = x == y ? 0 : e.abs_err / fabs(y); /* +inf for y == 0 */
        finite_stats(u, bk, &e);
    }
    if (x == y) { /* +0 == -0; an infinity against itself */
        u->equal++;
        return;
    }
    if (!fin) {
        r->inf_mismatch++;
        e.abs_err = e.rel_err = INFINITY;
        mark_outside(d, bk, &e, 1);
        return;
    }
    int out = !d->o.use_tol && !d->o.use_ulp; /* no criterion: exact comparison */
    if (d->o.use_tol && !(e.abs_err <= d->o.atol + d->o.rtol * fabs(y)))
        out = 1;
    if (d->o.use_ulp && e.ulp > d->o.max_ulp)
        out = 1;
    if (out)
        mark_outside(d, bk, &e, 0);
    else if (d->o.top_k && !(d->nheap == d->o.top_k && isfinite(d->heap[0].abs_err) &&
                             e.abs_err <= d->heap[0].abs_err))
        keep_worst(d, &e); /* (its common case, no worse than the mildest kept, tested here) */
}

/* The k pairs of d->a and d->b from flat index f, in order; the chunk's sums in double. */
HOT void run_chunk(posenc_diff *d, uint64_t f, size_t k, posenc_dtype udt, double *sum_abs,
                   double *sum_sq)
{
    struct run u;
    run_load(&u, &d->r);
    for (size_t i = 0; i < k; i++)
        one(d, &u, f + i, d->a[i], d->b[i], udt);
    run_store(&u, &d->r);
    *sum_abs = u.sum_abs;
    *sum_sq = u.sum_sq;
}

posenc_status posenc_diff_feed(posenc_diff *d, const void *a, posenc_dtype a_dt, const void *b,
                               posenc_dtype b_dt, size_t n, posenc_error *err)
{
    if ((unsigned)a_dt >= POSENC_DT_COUNT || (unsigned)b_dt >= POSENC_DT_COUNT)
        return posenc_seterr(err, POSENC_EINVAL, "invalid dtype");
    if (n > d->total - d->r.count)
        return posenc_seterr(err, POSENC_EINVAL, "%zu elements past the %llu of the shape", n,
                             (unsigned long long)d->total);
    const unsigned char *pa = a, *pb = b;
    size_t ea = posenc_dtype_size(a_dt), eb = posenc_dtype_size(b_dt);
    while (n) {
        size_t k = n < CHUNK ? n : CHUNK;
        posenc_dtype_convert(d->a, POSENC_DT_F64, pa, a_dt, k);
        posenc_dtype_convert(d->b, POSENC_DT_F64, pb, b_dt, k);
        if (a_dt == POSENC_DT_I64 && b_dt == POSENC_DT_I64) {
            /* int64 beyond 2^53 rounds to the same double: two that differ stay apart, by
             * the double spacing at their magnitude (the nearest double that is not equal) */
            for (size_t i = 0; i < k; i++) {
                int64_t xa, xb;
                memcpy(&xa, pa + i * ea, sizeof xa);
                memcpy(&xb, pb + i * eb, sizeof xb);
                if (xa != xb && d->a[i] == d->b[i])
                    d->b[i] = nextafter(d->b[i], xb < xa ? -INFINITY : INFINITY);
            }
        }
        /* sums of a chunk in double (4096 terms), of the chunks in long double */
        double sa = 0, sq = 0;
        uint64_t f = d->r.count;
        switch (d->o.ulp_dtype) {
        case POSENC_DT_F16:
            run_chunk(d, f, k, POSENC_DT_F16, &sa, &sq);
            break;
        case POSENC_DT_BF16:
            run_chunk(d, f, k, POSENC_DT_BF16, &sa, &sq);
            break;
        case POSENC_DT_F32:
            run_chunk(d, f, k, POSENC_DT_F32, &sa, &sq);
            break;
        default:
            run_chunk(d, f, k, POSENC_DT_F64, &sa, &sq);
            break;
        }
        d->sum_abs += sa;
        d->sum_sq += sq;
        d->r.count += k;
        pa += k * ea;
        pb += k * eb;
        n -= k;
    }
    return POSENC_OK;
}

void posenc_diff_result_get(posenc_diff *d, posenc_diff_result *out)
{
    *out = d->r;
    if (d->r.finite == 0) {
        out->max_abs = out->max_rel = 0;
        out->mean_abs = out->rms = 0;
    } else {
        out->mean_abs = (double)(d->sum_abs / (long double)d->r.finite);
        out->rms = sqrt((double)(d->sum_sq / (long double)d->r.finite));
    }
    /* worst first, in a copy: the heap stays a heap for later feeds */
    if (d->nheap) { /* (top_k 0: both are NULL, which memcpy and qsort must not see) */
        memcpy(d->sorted, d->heap, (size_t)d->nheap * sizeof *d->heap);
        qsort(d->sorted, (size_t)d->nheap, sizeof *d->sorted, cmp_worst);
    }
    out->worst = d->sorted;
    out->n_worst = d->nheap;
    out->buckets = d->buckets;
    out->n_buckets = d->nbuckets;
}
