/* test_diff.c: the comparison engine of posenc diff: the ulp mapping against closed forms and
 * against tests/data/golden/diff.txt (made by tests/golden/make_diff_golden.py from the real
 * values, not the bit patterns), and the statistics against numpy.isclose / torch.isclose. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/diff.h"

static uint64_t ulp32(float a, float b) { return posenc_diff_ulp(POSENC_DT_F32, a, b); }

static void test_ulp_closed_forms(void **state)
{
    (void)state;
    /* +0 and -0 are one value; the smallest subnormals either side of zero are 2 apart */
    assert_int_equal(ulp32(0.0f, -0.0f), 0);
    assert_int_equal(posenc_diff_ulp_order(POSENC_DT_F64, -0.0), 0);
    assert_int_equal(ulp32(ldexpf(1, -149), -ldexpf(1, -149)), 2);
    assert_int_equal(ulp32(1.0f, nextafterf(1.0f, 2.0f)), 1);
    assert_int_equal(ulp32(1.0f, nextafterf(1.0f, 0.0f)), 1);
    /* one binade: 2^23 steps from 1 to 2; FLT_MAX is one step below +inf */
    assert_int_equal(ulp32(1.0f, 2.0f), 1u << 23);
    assert_int_equal(ulp32(FLT_MAX, INFINITY), 1);
    assert_int_equal(ulp32(-1.0f, 1.0f), 2ull * 0x3f800000u);
    /* the largest distance there is: -inf to +inf in f64, 2 * 0x7ff0000000000000 */
    assert_true(posenc_diff_ulp(POSENC_DT_F64, -INFINITY, INFINITY) ==
                2 * UINT64_C(0x7ff0000000000000));
    assert_true(posenc_diff_ulp(POSENC_DT_F64, 1.0, nextafter(1.0, 2.0)) == 1);
    assert_true(posenc_diff_ulp(POSENC_DT_F32, NAN, 1.0) == POSENC_DIFF_NO_ULP);
    assert_true(posenc_diff_ulp(POSENC_DT_F16, NAN, NAN) == POSENC_DIFF_NO_ULP);
    /* f16: 1 + 2^-10 is the next value; 1 + 2^-12 rounds to 1; 65520 rounds to +inf, one past
     * 65504 */
    assert_int_equal(posenc_diff_ulp(POSENC_DT_F16, 1.0, 1.0 + ldexp(1, -10)), 1);
    assert_int_equal(posenc_diff_ulp(POSENC_DT_F16, 1.0, 1.0 + ldexp(1, -12)), 0);
    assert_int_equal(posenc_diff_ulp(POSENC_DT_F16, 65504.0, 65520.0), 1);
    /* bf16: 8 bits of precision, 1 + 2^-7 next; f16 and bf16 of 1.0 are 0x3c00 and 0x3f80 */
    assert_int_equal(posenc_diff_ulp(POSENC_DT_BF16, 1.0, 1.0 + ldexp(1, -7)), 1);
    assert_int_equal(posenc_diff_ulp_order(POSENC_DT_F16, -1.0), -0x3c00);
    assert_int_equal(posenc_diff_ulp_order(POSENC_DT_BF16, 1.0), 0x3f80);
    /* histogram bins 0, 1, 2-3, 4-7, ... */
    assert_int_equal(posenc_diff_hist_bin(0), 0);
    assert_int_equal(posenc_diff_hist_bin(1), 1);
    assert_int_equal(posenc_diff_hist_bin(2), 2);
    assert_int_equal(posenc_diff_hist_bin(3), 2);
    assert_int_equal(posenc_diff_hist_bin(4), 3);
    assert_int_equal(posenc_diff_hist_bin(UINT64_MAX), 64);
}

static FILE *open_golden(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/golden/diff.txt", tu_data_dir());
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    return fp;
}

static char line[1 << 16];

static void test_ulp_golden(void **state)
{
    (void)state;
    FILE *fp = open_golden();
    int n = 0;
    while (fgets(line, sizeof line, fp)) {
        char dt_s[8], a_s[64], b_s[64];
        unsigned long long want;
        if (strncmp(line, "ulp ", 4) != 0)
            continue;
        assert_int_equal(sscanf(line, "ulp %7s %63s %63s %llu", dt_s, a_s, b_s, &want), 4);
        posenc_dtype dt;
        assert_int_equal(posenc_dtype_parse(dt_s, &dt, NULL), POSENC_OK);
        double a = strtod(a_s, NULL), b = strtod(b_s, NULL);
        uint64_t got = posenc_diff_ulp(dt, a, b);
        if (got != want)
            fail_msg("%s ulp(%s, %s) = %llu, the golden file says %llu", dt_s, a_s, b_s,
                     (unsigned long long)got, want);
        assert_true(posenc_diff_ulp(dt, b, a) == got); /* symmetric */
        n++;
    }
    fclose(fp);
    assert_true(n >= 2000);
}

/* the order of a float-valued x in a 16-bit dtype dt (diff's fast rounding) is the order of
 * round(x) (posenc_f64_to_f16 or _bf16): every finite value below top (load: its float), the
 * midpoints between neighbours (ties both ways), a double just off each midpoint (left to
 * round), the floats just off it, and the values of more (positive) */
static void check_rounding16(posenc_dtype dt, uint32_t top, float (*load)(uint16_t),
                             uint16_t (*round)(double), const double *more, size_t n_more)
{
    for (uint32_t h = 0; h < top; h++) {
        double v = load((uint16_t)h), w = load((uint16_t)(h + 1));
        double xs[] = { v, (v + w) / 2, nextafter((v + w) / 2, 0), nextafter((v + w) / 2, 1e300),
                        (double)nextafterf((float)((v + w) / 2), 0.0f),
                        (double)nextafterf((float)((v + w) / 2), 1e30f) };
        for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
            for (int sg = 0; sg < 2; sg++) {
                double x = sg ? -xs[i] : xs[i];
                uint16_t r = round(x);
                int64_t want = (r & 0x8000u) ? -(int64_t)(r & 0x7fffu) : (int64_t)(r & 0x7fffu);
                assert_int_equal(posenc_diff_ulp_order(dt, x), want);
            }
    }
    for (size_t i = 0; i < n_more; i++) {
        uint16_t r = round(more[i]);
        assert_int_equal(posenc_diff_ulp_order(dt, more[i]), (int64_t)(r & 0x7fffu));
    }
}

/* f16: float subnormals and values past the largest finite f16 */
static void test_ulp_f16_rounding(void **state)
{
    (void)state;
    static const double more[] = { 0x1p-149, 0x1p-126, 0x1p-25, 0x1.0000000000001p-25, 65519.99,
                                   65520.0, 65536.0, 1e38, 0x1.fffffep127 };
    check_rounding16(POSENC_DT_F16, 0x7c00u, posenc_f16_to_f32, posenc_f64_to_f16, more,
                     sizeof more / sizeof *more);
}

/* bf16: subnormals and values past the largest finite bf16 */
static void test_ulp_bf16_rounding(void **state)
{
    (void)state;
    static const double more[] = { 0x1p-149, 0x1p-133, 0x1.fffffep127, 0x1.ff8p127, 1e300 };
    check_rounding16(POSENC_DT_BF16, 0x7f80u, posenc_bf16_to_f32, posenc_f64_to_bf16, more,
                     sizeof more / sizeof *more);
}

static void test_default_tol(void **state)
{
    (void)state;
    double r, a;
    posenc_diff_default_tol(POSENC_DT_F32, POSENC_DT_F32, &r, &a);
    assert_true(r == 1.3e-6 && a == 1e-5);
    posenc_diff_default_tol(POSENC_DT_F32, POSENC_DT_BF16, &r, &a); /* the looser of the two */
    assert_true(r == 1.6e-2 && a == 1e-5);
    posenc_diff_default_tol(POSENC_DT_F64, POSENC_DT_F64, &r, &a);
    assert_true(r == 1e-7 && a == 1e-7);
    posenc_diff_default_tol(POSENC_DT_F16, POSENC_DT_I32, &r, &a);
    assert_true(r == 1e-3 && a == 1e-5);
    posenc_diff_default_tol(POSENC_DT_I64, POSENC_DT_I32, &r, &a);
    assert_true(r == 0 && a == 0);
}

/* the stats block of the golden file */
struct golden {
    int64_t shape[3];
    size_t n;
    float *a, *b;
};

static void read_hex_floats(char *s, float *out, size_t n)
{
    char *save = NULL, *tok = strtok_r(s, " \n", &save);
    for (size_t i = 0; i < n; i++) {
        tok = strtok_r(NULL, " \n", &save);
        assert_non_null(tok);
        uint32_t u = (uint32_t)strtoul(tok, NULL, 16);
        memcpy(&out[i], &u, 4);
    }
}

/* Run the engine over the golden arrays, fed in chunks of 7 elements. */
static posenc_diff *run(const struct golden *g, const posenc_diff_opts *o, posenc_diff_result *r)
{
    posenc_diff *d;
    assert_int_equal(posenc_diff_new(o, 3, g->shape, &d, NULL), POSENC_OK);
    for (size_t i = 0; i < g->n; i += 7) {
        size_t k = g->n - i < 7 ? g->n - i : 7;
        assert_int_equal(posenc_diff_feed(d, g->a + i, POSENC_DT_F32, g->b + i, POSENC_DT_F32, k,
                                          NULL), POSENC_OK);
    }
    posenc_diff_result_get(d, r);
    return d;
}

static void test_stats_golden(void **state)
{
    (void)state;
    FILE *fp = open_golden();
    struct golden g = { { 0 }, 0, NULL, NULL };
    posenc_diff_opts o = { 0 };
    posenc_diff_result r;
    posenc_diff *d = NULL;
    int ncases = 0, nbucket = 0, nworst = 0;
    unsigned long long equal = 0;
    while (fgets(line, sizeof line, fp)) {
        if (strncmp(line, "shape ", 6) == 0) {
            long long s, h, dd;
            assert_int_equal(sscanf(line, "shape %lld %lld %lld", &s, &h, &dd), 3);
            g.shape[0] = s, g.shape[1] = h, g.shape[2] = dd;
            g.n = (size_t)(s * h * dd);
            g.a = malloc(g.n * 4);
            g.b = malloc(g.n * 4);
        } else if (line[0] == 'a' && line[1] == ' ') {
            read_hex_floats(line, g.a, g.n);
        } else if (line[0] == 'b' && line[1] == ' ') {
            read_hex_floats(line, g.b, g.n);
        } else if (strncmp(line, "case ", 5) == 0) {
            double atol, rtol;
            int en;
            unsigned long long outside, nanm, infm;
            assert_int_equal(sscanf(line, "case %lf %lf %d %llu %llu %llu", &atol, &rtol, &en,
                                    &outside, &nanm, &infm), 6);
            posenc_diff_opts c = { .use_tol = 1, .atol = atol, .rtol = rtol, .equal_nan = en,
                                   .ulp_dtype = POSENC_DT_F32, .top_k = 5, .seq_axis = 0 };
            o = c;
            posenc_diff_free(d);
            d = run(&g, &o, &r);
            assert_int_equal(r.count, g.n);
            assert_int_equal(r.outside, outside);
            assert_int_equal(r.nan_mismatch, nanm);
            assert_int_equal(r.inf_mismatch, infm);
            assert_int_equal(r.n_buckets, 3);
            nbucket = 0;
            ncases++;
        } else if (strncmp(line, "bucket ", 7) == 0) {
            long long lo, hi;
            unsigned long long cnt, outside;
            char mx[64];
            assert_int_equal(sscanf(line, "bucket %lld %lld %llu %llu %63s", &lo, &hi, &cnt,
                                    &outside, mx), 5);
            const posenc_diff_bucket *b = &r.buckets[nbucket++];
            assert_int_equal(b->lo, lo);
            assert_int_equal(b->hi, hi);
            assert_int_equal(b->count, cnt);
            assert_int_equal(b->outside, outside);
            assert_true(b->max_abs == strtod(mx, NULL));
        } else if (strncmp(line, "equal ", 6) == 0) {
            assert_int_equal(sscanf(line, "equal %llu", &equal), 1);
        } else if (strncmp(line, "equalnan ", 9) == 0) {
            unsigned long long en;
            assert_int_equal(sscanf(line, "equalnan %llu", &en), 1);
            /* the last case has equal_nan set; the first does not */
            assert_true(o.equal_nan);
            assert_int_equal(r.equal, en);
            posenc_diff_result r0;
            posenc_diff_opts c = o;
            c.equal_nan = 0;
            posenc_diff *d0 = run(&g, &c, &r0);
            assert_int_equal(r0.equal, equal);
            posenc_diff_free(d0);
        } else if (strncmp(line, "maxabs ", 7) == 0) {
            char v[64];
            unsigned long long at;
            assert_int_equal(sscanf(line, "maxabs %63s %llu", v, &at), 2);
            assert_true(r.max_abs == strtod(v, NULL));
            assert_int_equal(r.max_abs_at, at);
        } else if (strncmp(line, "maxrel ", 7) == 0) {
            char v[64];
            assert_int_equal(sscanf(line, "maxrel %63s", v), 1);
            assert_true(r.max_rel == strtod(v, NULL));
        } else if (strncmp(line, "maxulp ", 7) == 0) {
            unsigned long long u;
            assert_int_equal(sscanf(line, "maxulp %llu", &u), 1);
            assert_int_equal(r.max_ulp, u);
        } else if (strncmp(line, "hist ", 5) == 0) {
            int k;
            unsigned long long cnt;
            assert_int_equal(sscanf(line, "hist %d %llu", &k, &cnt), 2);
            assert_int_equal(r.hist[k], cnt);
        } else if (strncmp(line, "worst ", 6) == 0) {
            char *save = NULL, *tok = strtok_r(line, " \n", &save);
            assert_int_equal(r.n_worst, 5);
            for (int i = 0; (tok = strtok_r(NULL, " \n", &save)); i++) {
                assert_true(i < 5);
                assert_int_equal(r.worst[i].flat, strtoull(tok, NULL, 10));
                nworst++;
            }
        }
    }
    fclose(fp);
    assert_int_equal(ncases, 5);
    assert_int_equal(nworst, 5);
    /* the histogram and the counts add up */
    uint64_t h = 0;
    for (int k = 0; k < POSENC_DIFF_HIST_BINS; k++)
        h += r.hist[k];
    assert_int_equal(h, r.ulp_pairs);
    assert_int_equal(r.ulp_pairs + r.nan_mismatch + r.nan_equal, r.count);
    posenc_diff_free(d);
    free(g.a);
    free(g.b);
}

/* A in f64 against B in f16: the ulp is B's, after rounding A once; errors stay exact. */
static void test_mixed_dtypes(void **state)
{
    (void)state;
    double a[3] = { 1.0 + ldexp(1, -12), 1.0 + ldexp(1, -10), -2.0 };
    uint16_t b[3] = { 0x3c00, 0x3c00, 0xc000 }; /* 1, 1, -2 */
    int64_t shape[1] = { 3 };
    posenc_diff_opts o = { .use_ulp = 1, .max_ulp = 0, .ulp_dtype = POSENC_DT_F16, .top_k = 3,
                           .seq_axis = -1 };
    posenc_diff *d;
    posenc_diff_result r;
    assert_int_equal(posenc_diff_new(&o, 1, shape, &d, NULL), POSENC_OK);
    assert_int_equal(posenc_diff_feed(d, a, POSENC_DT_F64, b, POSENC_DT_F16, 3, NULL), POSENC_OK);
    posenc_diff_result_get(d, &r);
    assert_int_equal(r.equal, 1);
    assert_int_equal(r.outside, 1); /* only the element 1 ulp of f16 away */
    assert_int_equal(r.first_outside, 1);
    assert_true(r.max_abs == ldexp(1, -10));
    assert_int_equal(r.max_ulp, 1);
    assert_int_equal(r.hist[0], 2);
    assert_int_equal(r.n_worst, 2);
    assert_int_equal(r.worst[0].flat, 1);
    assert_true(r.worst[1].abs_err == ldexp(1, -12) && !r.worst[1].outside);
    assert_close(r.mean_abs, (ldexp(1, -12) + ldexp(1, -10)) / 3, 1e-15, 0);
    posenc_diff_free(d);
}

/* No criterion: an exact comparison; equal infinities and +-0 are equal. */
static void test_exact_and_infinities(void **state)
{
    (void)state;
    float a[5] = { 0.0f, INFINITY, -INFINITY, 1.0f, 5.0f };
    float b[5] = { -0.0f, INFINITY, INFINITY, nextafterf(1.0f, 2.0f), 0.0f };
    int64_t shape[1] = { 5 };
    posenc_diff_opts o = { .ulp_dtype = POSENC_DT_F32, .top_k = 5, .seq_axis = -1 };
    posenc_diff *d;
    posenc_diff_result r;
    assert_int_equal(posenc_diff_new(&o, 1, shape, &d, NULL), POSENC_OK);
    assert_int_equal(posenc_diff_feed(d, a, POSENC_DT_F32, b, POSENC_DT_F32, 5, NULL), POSENC_OK);
    posenc_diff_result_get(d, &r);
    assert_int_equal(r.equal, 2);
    assert_int_equal(r.outside, 3);
    assert_int_equal(r.inf_mismatch, 1);
    assert_int_equal(r.finite, 3);
    assert_true(isinf(r.max_rel) && r.max_rel_at == 4); /* b == 0 */
    assert_int_equal(r.worst[0].flat, 2);                /* the infinity first */
    assert_int_equal(r.worst[1].flat, 4);
    assert_int_equal(r.worst[2].flat, 3);
    /* a huge tolerance does not forgive an infinity */
    posenc_diff_free(d);
    o.use_tol = 1;
    o.atol = 1e30;
    assert_int_equal(posenc_diff_new(&o, 1, shape, &d, NULL), POSENC_OK);
    assert_int_equal(posenc_diff_feed(d, a, POSENC_DT_F32, b, POSENC_DT_F32, 5, NULL), POSENC_OK);
    posenc_diff_result_get(d, &r);
    assert_int_equal(r.outside, 1);
    assert_int_equal(r.first_outside, 2);
    posenc_diff_free(d);
}

/* Buckets of a fixed width along axis 0 of (25, 2), and the power-of-two default. */
static void test_buckets(void **state)
{
    (void)state;
    int64_t shape[2] = { 25, 2 };
    double a[50], b[50];
    for (int i = 0; i < 50; i++) {
        b[i] = i;
        a[i] = i + (i / 2) * 1e-3; /* error grows with the position */
    }
    posenc_diff_opts o = { .ulp_dtype = POSENC_DT_F64, .seq_axis = 0, .bucket_width = 10 };
    posenc_diff *d;
    posenc_diff_result r;
    assert_int_equal(posenc_diff_new(&o, 2, shape, &d, NULL), POSENC_OK);
    assert_int_equal(posenc_diff_feed(d, a, POSENC_DT_F64, b, POSENC_DT_F64, 50, NULL), POSENC_OK);
    posenc_diff_result_get(d, &r);
    assert_int_equal(r.n_buckets, 3);
    assert_int_equal(r.buckets[2].lo, 20);
    assert_int_equal(r.buckets[2].hi, 24);
    assert_int_equal(r.buckets[0].count, 20);
    assert_int_equal(r.buckets[2].count, 10);
    assert_int_equal(r.buckets[0].outside, 18); /* position 0 is exact */
    assert_close(r.buckets[1].max_abs, 19e-3, 1e-12, 0);
    assert_close(r.buckets[2].max_abs, 24e-3, 1e-12, 0);
    posenc_diff_free(d);
    /* axis 1 of (2, 300): buckets 0-63, 64-127, 128-255, 256-299 */
    int64_t s2[2] = { 2, 300 };
    posenc_diff_opts p = { .ulp_dtype = POSENC_DT_F64, .seq_axis = 1 };
    assert_int_equal(posenc_diff_new(&p, 2, s2, &d, NULL), POSENC_OK);
    static double z[600];
    assert_int_equal(posenc_diff_feed(d, z, POSENC_DT_F64, z, POSENC_DT_F64, 600, NULL), POSENC_OK);
    posenc_diff_result_get(d, &r);
    assert_int_equal(r.n_buckets, 4);
    assert_int_equal(r.buckets[1].lo, 64);
    assert_int_equal(r.buckets[2].hi, 255);
    assert_int_equal(r.buckets[3].hi, 299);
    assert_int_equal(r.buckets[3].count, 88);
    assert_int_equal(r.buckets[0].count, 128);
    posenc_diff_free(d);
}

static void test_errors(void **state)
{
    (void)state;
    int64_t shape[2] = { 100000, 2 };
    posenc_diff *d = NULL;
    posenc_error err = { 0 };
    posenc_diff_opts o = { .ulp_dtype = POSENC_DT_F32, .seq_axis = 0, .bucket_width = 1 };
    assert_int_equal(posenc_diff_new(&o, 2, shape, &d, &err), POSENC_ERANGE);
    assert_null(d);
    o.seq_axis = 2;
    assert_int_equal(posenc_diff_new(&o, 2, shape, &d, &err), POSENC_EINVAL);
    o.seq_axis = -1;
    o.top_k = POSENC_DIFF_MAX_TOP + 1;
    assert_int_equal(posenc_diff_new(&o, 2, shape, &d, &err), POSENC_EINVAL);
    o.top_k = 0;
    o.ulp_dtype = POSENC_DT_I32;
    assert_int_equal(posenc_diff_new(&o, 2, shape, &d, &err), POSENC_EINVAL);
    /* a shape whose product overflows */
    int64_t huge[3] = { INT64_C(1) << 40, INT64_C(1) << 30, 1 << 10 };
    o.ulp_dtype = POSENC_DT_F32;
    assert_int_equal(posenc_diff_new(&o, 3, huge, &d, &err), POSENC_ERANGE);
    /* more elements than the shape */
    int64_t two[1] = { 2 };
    float x[3] = { 1, 2, 3 };
    assert_int_equal(posenc_diff_new(&o, 1, two, &d, &err), POSENC_OK);
    assert_int_equal(posenc_diff_feed(d, x, POSENC_DT_F32, x, POSENC_DT_F32, 3, &err),
                     POSENC_EINVAL);
    posenc_diff_free(d);
    posenc_diff_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ulp_closed_forms), cmocka_unit_test(test_ulp_golden),
        cmocka_unit_test(test_ulp_f16_rounding), cmocka_unit_test(test_ulp_bf16_rounding),
        cmocka_unit_test(test_default_tol),      cmocka_unit_test(test_stats_golden),
        cmocka_unit_test(test_mixed_dtypes),     cmocka_unit_test(test_exact_and_infinities),
        cmocka_unit_test(test_buckets),          cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
