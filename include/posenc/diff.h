/* posenc/diff.h: element-wise comparison of two arrays of the same shape, streamed.
 *
 * A posenc_diff accumulates, over chunks of A ("actual") and B ("expected") fed in C order,
 * everything `posenc diff` reports: counts, max absolute / relative error and where, the
 * distance in ulps in one float dtype with its histogram, the K worst elements, and the error
 * per position bucket along a sequence axis. Memory is fixed at creation (K entries, at most
 * POSENC_DIFF_MAX_BUCKETS buckets), whatever the arrays' size. Pure computation.
 *
 * Semantics (torch.testing.assert_close / numpy.isclose):
 *  - values are compared as doubles (exact for every float dtype and integers up to 2^53);
 *  - an element is close when |a - b| <= atol + rtol * |b|;
 *  - NaN is never close to anything, a NaN included, unless equal_nan (then NaN matches NaN);
 *  - an infinity is close only to the same infinity (whatever the tolerances); +0 == -0;
 *  - with max_ulp set, an element is also outside when its ulp distance exceeds max_ulp (an
 *    element must pass every criterion that is set);
 *  - rel error is |a - b| / |b| (0 when a == b, +inf when b == 0 and a != 0).
 * The ulp distance: a and b are each rounded once (to nearest even) to the ulp dtype, mapped
 * to ordered integers (the magnitude bits, negated for negative values, so +0 and -0 are both
 * 0 and consecutive floats are consecutive integers; +inf is one past the largest finite
 * value) and subtracted. Pairs with a NaN have no ulp distance. */
#ifndef POSENC_DIFF_H
#define POSENC_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/dtype.h"
#include "posenc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POSENC_DIFF_MAX_TOP 1000      /* largest top_k */
#define POSENC_DIFF_MAX_BUCKETS 65536 /* largest number of position buckets */
#define POSENC_DIFF_HIST_BINS 65      /* ulp bins: 0, 1, 2-3, 4-7, ..., 2^63..2^64-1 */
#define POSENC_DIFF_NO_ULP UINT64_MAX /* ulp distance of a pair with a NaN */

/* Ordered-integer image of x rounded once to dt (f16, bf16, f32 or f64); 0 for NaN (check
 * isnan first). -0 and +0 give 0. */
POSENC_API
int64_t posenc_diff_ulp_order(posenc_dtype dt, double x);
/* Distance in ulps of dt between a and b, each rounded once to dt; POSENC_DIFF_NO_ULP when
 * either is NaN. The largest, -inf to +inf in f64, is 2^64 - 2^53: it always fits. */
POSENC_API
uint64_t posenc_diff_ulp(posenc_dtype dt, double a, double b);
/* The histogram bin of an ulp distance: 0 for 0, k for [2^(k-1), 2^k - 1]. */
POSENC_API
int posenc_diff_hist_bin(uint64_t ulp);

/* torch.testing.assert_close's default rtol and atol for comparing dtypes a and b (the larger
 * of each pair's, as torch takes for mixed dtypes): f16 1e-3/1e-5, bf16 1.6e-2/1e-5,
 * f32 1.3e-6/1e-5, f64 1e-7/1e-7, integers 0/0 (pytorch/pytorch torch/testing/_comparison.py
 * _DTYPE_PRECISIONS and default_tolerances). */
POSENC_API
void posenc_diff_default_tol(posenc_dtype a, posenc_dtype b, double *rtol, double *atol);

typedef struct posenc_diff_opts {
    int use_tol;          /* apply atol/rtol */
    double atol, rtol;
    int use_ulp;          /* apply max_ulp */
    uint64_t max_ulp;
    int equal_nan;
    posenc_dtype ulp_dtype; /* f16, bf16, f32 or f64 */
    int top_k;            /* worst elements kept, 0..POSENC_DIFF_MAX_TOP */
    int seq_axis;         /* axis of the shape that holds positions, -1 for none */
    int64_t bucket_width; /* > 0: buckets [0, w), [w, 2w), ...; 0: [0, 64), [64, 128),
                             [128, 256), ... (bounds at powers of two) */
} posenc_diff_opts;

/* One element as the report shows it. */
typedef struct posenc_diff_elem {
    uint64_t flat;        /* index in C order */
    double a, b;
    double abs_err, rel_err; /* NaN when a NaN is involved */
    uint64_t ulp;         /* POSENC_DIFF_NO_ULP when a NaN is involved */
    int outside;          /* fails the criteria */
} posenc_diff_elem;

typedef struct posenc_diff_bucket {
    int64_t lo, hi;       /* positions [lo, hi] */
    uint64_t count, outside, nonfinite;
    double max_abs, max_rel; /* over pairs that are both finite */
    uint64_t max_ulp;     /* over pairs without NaN */
} posenc_diff_bucket;

typedef struct posenc_diff_result {
    uint64_t count;       /* elements compared */
    uint64_t equal;       /* a == b (NaN pairs under equal_nan included) */
    uint64_t outside;     /* elements that fail the criteria */
    uint64_t nan_mismatch; /* a NaN on one side, or on both without equal_nan */
    uint64_t nan_equal;   /* NaN on both sides, with equal_nan */
    uint64_t inf_mismatch; /* an infinity against anything but itself (no NaN involved) */
    uint64_t finite;      /* pairs where both are finite: the max/mean statistics cover these */
    double max_abs, max_rel, mean_abs, rms;
    uint64_t max_abs_at, max_rel_at; /* flat indices (valid when finite > 0) */
    uint64_t max_ulp, max_ulp_at; /* over pairs without NaN (max_ulp_at valid when ulp_pairs) */
    uint64_t ulp_pairs;
    uint64_t first_outside; /* flat index of the first element outside (when outside > 0) */
    uint64_t hist[POSENC_DIFF_HIST_BINS];
    const posenc_diff_elem *worst; /* n_worst entries, worst first: non-finite mismatches, then
                                      by abs error, ties by index; borrowed */
    int n_worst;
    const posenc_diff_bucket *buckets; /* n_buckets (0 without seq_axis); borrowed */
    int64_t n_buckets;
} posenc_diff_result;

typedef struct posenc_diff posenc_diff;

/* A comparison of two arrays of shape (ndim, shape). With neither use_tol nor use_ulp, every
 * difference is outside (an exact comparison; NaN as equal_nan says). EINVAL for bad options (a seq_axis outside
 * the shape, a non-float ulp dtype, top_k out of range); ERANGE when the buckets would exceed
 * POSENC_DIFF_MAX_BUCKETS. Caller frees with posenc_diff_free. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_diff_new(const posenc_diff_opts *opts, int ndim, const int64_t *shape,
                              posenc_diff **out, posenc_error *err);
/* Compare the next n elements: a holds n elements of a_dt, b n of b_dt (native order). More
 * elements than the shape holds is EINVAL. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_diff_feed(posenc_diff *d, const void *a, posenc_dtype a_dt, const void *b,
                               posenc_dtype b_dt, size_t n, posenc_error *err);
/* The statistics so far; the pointers in *out are borrowed from d and valid until the next
 * feed or free. */
POSENC_API
void posenc_diff_result_get(posenc_diff *d, posenc_diff_result *out);
POSENC_API
void posenc_diff_free(posenc_diff *d);

#ifdef __cplusplus
}
#endif
#endif
