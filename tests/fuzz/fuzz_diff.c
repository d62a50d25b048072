/* fuzz_diff.c: bytes -> lib/verify/diff.c, the engine of posenc diff, on arbitrary bit patterns (NaN
 * payloads, infinities, subnormals, -0) of every float dtype.
 * Input: byte 0 = a_dt (bits 0-1), b_dt (2-3), ulp dtype (4-5), equal_nan (6), max_ulp set (7);
 * byte 1 = top_k (bits 0-3), bucket width (4-7, 0 = powers of two); byte 2 = max_ulp; then n
 * elements of A followed by n elements of B (n as many as the rest holds), shape (n / 2, 2)
 * with the positions on axis 0.
 * Checks: the result does not depend on how the input is split into feeds; the counts add up
 * (histogram = ulp pairs, ulp pairs + NaN pairs = count, buckets sum to count, equal + outside
 * <= count); the worst list is sorted, holds only differing elements, and its ulps agree with
 * posenc_diff_ulp; the maxima agree with a brute-force pass; ulp(x, y) = ulp(y, x), ulp(x, x) = 0. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const posenc_dtype dts[4] = { POSENC_DT_F16, POSENC_DT_BF16, POSENC_DT_F32, POSENC_DT_F64 };

static double value(posenc_dtype dt, const uint8_t *p)
{
    double d;
    posenc_dtype_convert(&d, POSENC_DT_F64, p, dt, 1);
    return d;
}

static void run(const posenc_diff_opts *o, const int64_t *shape, const uint8_t *a,
                posenc_dtype adt, const uint8_t *b, posenc_dtype bdt, size_t n, size_t split,
                posenc_diff **d, posenc_diff_result *r)
{
    if (posenc_diff_new(o, 2, shape, d, NULL) != POSENC_OK)
        abort();
    size_t ea = posenc_dtype_size(adt), eb = posenc_dtype_size(bdt);
    if (posenc_diff_feed(*d, a, adt, b, bdt, split, NULL) != POSENC_OK ||
        posenc_diff_feed(*d, a + split * ea, adt, b + split * eb, bdt, n - split, NULL) !=
            POSENC_OK)
        abort();
    posenc_diff_result_get(*d, r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    posenc_dtype adt = dts[data[0] & 3], bdt = dts[(data[0] >> 2) & 3];
    posenc_diff_opts o = { .use_tol = 1, .atol = 1e-5, .rtol = 1e-3,
                           .use_ulp = data[0] >> 7, .max_ulp = data[2],
                           .equal_nan = (data[0] >> 6) & 1, .ulp_dtype = dts[(data[0] >> 4) & 3],
                           .top_k = data[1] & 15, .seq_axis = 0, .bucket_width = data[1] >> 4 };
    size_t ea = posenc_dtype_size(adt), eb = posenc_dtype_size(bdt);
    size_t n = (size - 3) / (ea + eb) / 2 * 2;
    /* aligned copies, as the readers' buffers are */
    uint8_t *a = malloc(n * ea + 1), *b = malloc(n * eb + 1);
    if (!a || !b)
        abort();
    memcpy(a, data + 3, n * ea);
    memcpy(b, data + 3 + n * ea, n * eb);
    int64_t shape[2] = { (int64_t)(n / 2), 2 };
    posenc_diff *d1, *d2;
    posenc_diff_result r1, r2;
    run(&o, shape, a, adt, b, bdt, n, n, &d1, &r1);
    run(&o, shape, a, adt, b, bdt, n, n / 3, &d2, &r2);
    /* split-invariance */
    if (r1.count != n || r2.count != n || r1.equal != r2.equal || r1.outside != r2.outside ||
        r1.nan_mismatch != r2.nan_mismatch || r1.inf_mismatch != r2.inf_mismatch ||
        r1.max_ulp != r2.max_ulp || r1.n_worst != r2.n_worst || r1.n_buckets != r2.n_buckets ||
        memcmp(r1.hist, r2.hist, sizeof r1.hist) != 0 ||
        !(r1.max_abs == r2.max_abs) || !(r1.max_rel == r2.max_rel))
        abort();
    for (int i = 0; i < r1.n_worst; i++)
        if (r1.worst[i].flat != r2.worst[i].flat)
            abort();
    /* the counts add up */
    uint64_t h = 0, bc = 0;
    for (int k = 0; k < POSENC_DIFF_HIST_BINS; k++)
        h += r1.hist[k];
    for (int64_t i = 0; i < r1.n_buckets; i++)
        bc += r1.buckets[i].count;
    if (h != r1.ulp_pairs || r1.ulp_pairs + r1.nan_mismatch + r1.nan_equal != n ||
        (n && bc != n) || r1.equal + r1.outside > n || (o.top_k && r1.n_worst > o.top_k))
        abort();
    /* brute force: maxima, equal count, ulp symmetry */
    double max_abs = 0;
    uint64_t equal = 0, max_ulp = 0;
    for (size_t i = 0; i < n; i++) {
        double x = value(adt, a + i * ea), y = value(bdt, b + i * eb);
        uint64_t u = posenc_diff_ulp(o.ulp_dtype, x, y);
        if (u != posenc_diff_ulp(o.ulp_dtype, y, x))
            abort();
        if (!isnan(x) && posenc_diff_ulp(o.ulp_dtype, x, x) != 0)
            abort();
        if (u != POSENC_DIFF_NO_ULP && u > max_ulp)
            max_ulp = u;
        if (x == y || (o.equal_nan && isnan(x) && isnan(y)))
            equal++;
        if (isfinite(x) && isfinite(y) && fabs(x - y) > max_abs)
            max_abs = fabs(x - y);
    }
    if (equal != r1.equal || (r1.ulp_pairs && max_ulp != r1.max_ulp) || max_abs != r1.max_abs)
        abort();
    for (int i = 0; i < r1.n_worst; i++) {
        const posenc_diff_elem *e = &r1.worst[i];
        double x = value(adt, a + e->flat * ea), y = value(bdt, b + e->flat * eb);
        if (e->flat >= n || x == y || e->ulp != posenc_diff_ulp(o.ulp_dtype, x, y))
            abort();
        if (i && !isfinite(e->abs_err) && isfinite(r1.worst[i - 1].abs_err))
            abort(); /* non-finite mismatches come first */
        if (i && isfinite(e->abs_err) && e->abs_err > r1.worst[i - 1].abs_err)
            abort();
    }
    posenc_diff_free(d1);
    posenc_diff_free(d2);
    free(a);
    free(b);
    return 0;
}
