/* test_verify.c: lib/verify/verify.c and lib/verify/verify_diagnose.c against closed forms: the PRNG, the
 * rotation kernels, scores and their invariance, the row comparison with its angle allowance,
 * angle/theta estimation, the diagnosis of deliberately wrong rotations, and the
 * ALiBi/T5/sinusoidal checks. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "posenc/posenc.h"
#include "posenc/verify.h"

static void test_rng(void **state)
{
    (void)state;
    posenc_verify_rng r;
    posenc_verify_rng_seed(&r, 0);
    /* Vigna's splitmix64 reference sequence for seed 0 */
    assert_true(posenc_verify_rng_next(&r) == 0xE220A8397B1DCDAFULL);
    assert_true(posenc_verify_rng_next(&r) == 0x6E789E6AA1B965F4ULL);
    assert_true(posenc_verify_rng_next(&r) == 0x06C45D188009454FULL);
    /* normal: mean 0, variance 1, deterministic */
    posenc_verify_rng_seed(&r, 42);
    double s = 0, s2 = 0, first = 0;
    int n = 200000;
    for (int i = 0; i < n; i++) {
        double x = posenc_verify_rng_normal(&r);
        if (i == 0)
            first = x;
        s += x;
        s2 += x * x;
    }
    assert_close(s / n, 0.0, 0, 0.01);
    assert_close(s2 / n, 1.0, 0, 0.015);
    posenc_verify_rng_seed(&r, 42);
    assert_true(posenc_verify_rng_normal(&r) == first);
    for (int i = 0; i < 1000; i++) {
        double u = posenc_verify_rng_uniform(&r);
        assert_true(u > 0 && u < 1);
    }
}

static void test_rotate(void **state)
{
    (void)state;
    /* head_dim 6, rotary_dim 4: 2 frequencies, dims 4 and 5 pass through */
    double c[2] = { cos(0.3), cos(1.1) }, s[2] = { sin(0.3), sin(1.1) };
    double x[6] = { 1, 2, 3, 4, 5, 6 }, y[6], z[6];
    /* neox: pairs (0, 2) and (1, 3) */
    posenc_verify_rotate(POSENC_STYLE_NEOX, 6, 4, c, s, 0, x, y);
    assert_close(y[0], 1 * c[0] - 3 * s[0], 0, 1e-15);
    assert_close(y[2], 3 * c[0] + 1 * s[0], 0, 1e-15);
    assert_close(y[1], 2 * c[1] - 4 * s[1], 0, 1e-15);
    assert_close(y[3], 4 * c[1] + 2 * s[1], 0, 1e-15);
    assert_true(y[4] == 5 && y[5] == 6);
    posenc_verify_rotate(POSENC_STYLE_NEOX, 6, 4, c, s, 1, y, z);
    for (int j = 0; j < 6; j++)
        assert_close(z[j], x[j], 0, 1e-14);
    /* gptj: pairs (0, 1) and (2, 3) */
    posenc_verify_rotate(POSENC_STYLE_GPTJ, 6, 4, c, s, 0, x, y);
    assert_close(y[0], 1 * c[0] - 2 * s[0], 0, 1e-15);
    assert_close(y[1], 2 * c[0] + 1 * s[0], 0, 1e-15);
    assert_close(y[2], 3 * c[1] - 4 * s[1], 0, 1e-15);
    assert_close(y[3], 4 * c[1] + 3 * s[1], 0, 1e-15);
    /* in place */
    memcpy(z, x, sizeof x);
    posenc_verify_rotate(POSENC_STYLE_GPTJ, 6, 4, c, s, 0, z, z);
    for (int j = 0; j < 6; j++)
        assert_true(z[j] == y[j]);
    /* float32 arithmetic: within a few float ulps of the double result */
    posenc_verify_rotate_f32(POSENC_STYLE_GPTJ, 6, 4, c, s, x, z);
    for (int j = 0; j < 6; j++) {
        assert_close(z[j], y[j], 4e-7, 0);
        assert_true(z[j] == (double)(float)z[j]);
    }
    assert_int_equal(posenc_verify_pair_freq(POSENC_STYLE_NEOX, 4, 3), 1);
    assert_int_equal(posenc_verify_pair_freq(POSENC_STYLE_GPTJ, 4, 3), 1);
    assert_int_equal(posenc_verify_pair_freq(POSENC_STYLE_GPTJ, 4, 2), 1);
    assert_int_equal(posenc_verify_pair_freq(POSENC_STYLE_NEOX, 4, 2), 0);
    assert_int_equal(posenc_verify_pair_freq(POSENC_STYLE_NEOX, 4, 4), -1);
}

static void test_offset_grid(void **state)
{
    (void)state;
    int64_t o[POSENC_VERIFY_MAX_OFFSETS];
    int n = posenc_verify_offset_grid(10, o);
    int64_t want[] = { 0, 1, 2, 4, 8, 10 };
    assert_int_equal(n, 6);
    for (int i = 0; i < n; i++)
        assert_true(o[i] == want[i]);
    assert_int_equal(posenc_verify_offset_grid(0, o), 1);
    assert_int_equal(posenc_verify_offset_grid(-1, o), 0);
    n = posenc_verify_offset_grid((int64_t)1 << 40, o);
    assert_true(n <= POSENC_VERIFY_MAX_OFFSETS && o[n - 1] == (int64_t)1 << 40);
}

/* <R_m q, R_n k> = <q, R_(n-m) k> in long double straight from the angles (m - n) w_i:
 * per pair (qa ka + qb kb) cos d + (qa kb - qb ka) sin d, d = (m - n) w_i */
static long double closed_score(const posenc_rope_params *p, const double *q, const double *k,
                                int64_t m, int64_t n)
{
    int nf = p->n_freq, hd = p->head_dim;
    long double s = 0;
    for (int i = 0; i < nf; i++) {
        int a = p->style == POSENC_STYLE_GPTJ ? 2 * i : i, b = p->style == POSENC_STYLE_GPTJ ? 2 * i + 1 : i + nf;
        long double w = (long double)p->inv_hi[i] + p->inv_lo[i], d = (long double)(m - n) * w;
        long double sc = (long double)p->attention_scaling * p->attention_scaling;
        s += sc * ((q[a] * (long double)k[a] + q[b] * (long double)k[b]) * cosl(d) +
                   (q[a] * (long double)k[b] - q[b] * (long double)k[a]) * sinl(d));
    }
    for (int j = 2 * nf; j < hd; j++)
        s += q[j] * (long double)k[j];
    return s;
}

static void test_scores_closed_form(void **state)
{
    (void)state;
    for (int style = 0; style < 2; style++) {
        posenc_rope_config c = tu_rope_cfg(10000, 64, 32, (posenc_style)style);
        posenc_rope_params p = tu_rope_params(&c);
        posenc_verify_rng r;
        posenc_verify_rng_seed(&r, 9);
        double q[64], k[64], qr[64], kr[64], cq[32], sq[32], ck[32], sk[32];
        for (int j = 0; j < 64; j++) {
            q[j] = posenc_verify_rng_normal(&r);
            k[j] = posenc_verify_rng_normal(&r);
        }
        int64_t ms[] = { 0, 5, 1000, 70000 }, ns[] = { 0, 3, 999, 12345 };
        for (int t = 0; t < 4; t++) {
            posenc_rope_cossin(&p, POSENC_PREC_EXACT, ms[t], cq, sq);
            posenc_rope_cossin(&p, POSENC_PREC_EXACT, ns[t], ck, sk);
            posenc_verify_rotate(p.style, 64, 32, cq, sq, 0, q, qr);
            posenc_verify_rotate(p.style, 64, 32, ck, sk, 0, k, kr);
            double s = 0;
            for (int j = 0; j < 64; j++)
                s += qr[j] * kr[j];
            assert_close(s, (double)closed_score(&p, q, k, ms[t], ns[t]), 0, 1e-12);
        }
        /* the long double tables agree with the exact ones */
        long double lc[32], ls[32];
        posenc_verify_cossin_ld(&p, 123456, lc, ls);
        posenc_rope_cossin(&p, POSENC_PREC_EXACT, 123456, cq, sq);
        for (int i = 0; i < 16; i++) {
            assert_close(cq[i], (double)lc[i], 0, 1e-13);
            assert_close(sq[i], (double)ls[i], 0, 1e-13);
        }
    }
}

/* The tables' reference at the far end of the position range: against mpmath at 300 bits
 * (tests/data/golden/rope_far.txt, tests/golden/make_rope_far_golden.py), and able to catch
 * tables whose angle was rounded to long double (what the exact tables did past 2^40). */
static void test_cossin_ld_far(void **state)
{
    (void)state;
    char path[1024], line[512], cs[80], ss[80];
    snprintf(path, sizeof path, "%s/golden/rope_far.txt", tu_data_dir());
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot read %s", path);
    double theta, factor, worst_ref = 0, worst_exact = 0, worst_planted = 0;
    int d, i, n = 0;
    long long pos;
    while (fgets(line, sizeof line, fp)) {
        assert_int_equal(sscanf(line, "%lf %d %lf %d %lld %79s %79s", &theta, &d, &factor, &i,
                                &pos, cs, ss),
                         7);
        posenc_rope_config c = tu_rope_cfg(theta, d, d, POSENC_STYLE_NEOX);
        if (factor != 1) {
            c.type = POSENC_ROPE_LINEAR;
            c.factor = factor;
        }
        posenc_rope_params p = tu_rope_params(&c);
        long double lc[POSENC_MAX_FREQ], ls[POSENC_MAX_FREQ];
        double ce[POSENC_MAX_FREQ], se[POSENC_MAX_FREQ];
        posenc_verify_cossin_ld(&p, (int64_t)pos, lc, ls);
        posenc_rope_cossin(&p, POSENC_PREC_EXACT, (int64_t)pos, ce, se);
        long double xc = strtold(cs, NULL), xs = strtold(ss, NULL);
        worst_ref = fmax(worst_ref, (double)fmaxl(fabsl(lc[i] - xc), fabsl(ls[i] - xs)));
        worst_exact = fmax(worst_exact, fmax(fabs(ce[i] - (double)lc[i]),
                                             fabs(se[i] - (double)ls[i])));
        /* planted: the angle as one long double product, then cosl */
        long double a = (long double)pos * ((long double)p.inv_hi[i] + p.inv_lo[i]);
        worst_planted = fmax(worst_planted, (double)fabsl(cosl(a) - lc[i]));
        n++;
    }
    fclose(fp);
    assert_int_equal(n, 190);
    /* the reference: ~2^-62 (1e-16 where long double is double) */
    assert_true(worst_ref < (LDBL_MANT_DIG >= 64 ? 1e-17 : 3e-16));
    /* the exact tables: within ~1 ulp of double, far inside the check's 1e-12 */
    assert_true(worst_exact < 3e-16);
    /* the planted error is ~1e-5 at 2^48: the check fails on it */
    assert_true(worst_planted > 1e-12);
}

static void test_invariance_reference(void **state)
{
    (void)state;
    /* the reference: head_dim 128, theta 5e5, unit-normal q and k */
    posenc_rope_config c = tu_rope_cfg(500000, 128, 128, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&c);
    posenc_invariance_result *res = malloc(sizeof *res);
    posenc_error err = { 0 };
    assert_int_equal(posenc_verify_rope_config(&p, 1100000, 7, 4, res, &err), POSENC_OK);
    int i131 = -1, i1m = -1, i1 = -1;
    for (int i = 0; i < res->n_offsets; i++) {
        if (res->offset[i] == 131072)
            i131 = i;
        if (res->offset[i] == 1048576)
            i1m = i;
        if (res->offset[i] == 1)
            i1 = i;
    }
    assert_true(i131 > 0 && i1m > 0 && i1 > 0);
    /* exact tables rounded to float32: ~5e-8 at any offset, under the default tolerance */
    assert_true(res->exact.max_dev <= POSENC_VERIFY_INVARIANCE_TOL);
    assert_true(res->exact.rms[i131] > 1e-8 && res->exact.rms[i131] < 2e-7);
    assert_true(res->exact.rms[i1m] > 1e-8 && res->exact.rms[i1m] < 2e-7);
    /* transformers' float32 tables: ~1e-3 at 131072, ~1e-2 at 1M, growing with the offset */
    assert_true(res->hf.rms[i131] > 3e-4 && res->hf.rms[i131] < 3e-3);
    assert_true(res->hf.rms[i1m] > 2e-3 && res->hf.rms[i1m] < 3e-2);
    assert_true(res->hf.dev[i1m] > 10 * res->hf.dev[i1]);
    /* the drift is in the high frequencies (band 0), the low ones barely move */
    assert_true(res->hf.band[i1m][0] > 100 * res->hf.band[i1m][2]);
    /* tables: exact within 1e-13 of long double, within half a float ulp after rounding */
    assert_true(res->exact_table_f64_err < 1e-13);
    assert_true(res->exact.max_table_err <= 6.0e-8);
    assert_true(res->hf.max_table_err > 1e-3);
    assert_int_equal(res->offset[0], 0);
    assert_true(res->exact.dev[0] == 0 && res->hf.dev[0] == 0);
    free(res);
}

/* Pairs that start far out (dumps written with --offset 2147483600): the grid starts from the
 * pairs moved to position 0 and passes through where they were, so transformers' float32
 * tables drift there (position_ids above 2^24 are rounded to float32) and the exact ones do not. */
static void test_invariance_far_pairs(void **state)
{
    (void)state;
    posenc_rope_config c = tu_rope_cfg(500000, 64, 64, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&c);
    enum { NP = 8, HD = 64 };
    const int64_t base = 2147483600;
    double q[NP * HD], k[NP * HD];
    int64_t m[NP], n[NP];
    posenc_verify_rng r;
    posenc_verify_rng_seed(&r, 3);
    for (int s = 0; s < NP; s++) {
        m[s] = base + 5 * s + 7;
        n[s] = base + 3 * s;
        for (int j = 0; j < HD; j++) {
            q[s * HD + j] = posenc_verify_rng_normal(&r);
            k[s * HD + j] = posenc_verify_rng_normal(&r);
        }
    }
    posenc_invariance_input in = { NP, HD, q, k, m, n, base + 64 };
    posenc_invariance_result *res = malloc(sizeof *res);
    posenc_error err = { 0 };
    assert_int_equal(posenc_verify_invariance(&p, &in, res, &err), POSENC_OK);
    int at = -1;
    for (int i = 0; i < res->n_offsets; i++) {
        if (i > 0)
            assert_true(res->offset[i] > res->offset[i - 1]);
        if (res->offset[i] == base)
            at = i;
    }
    assert_int_equal(res->offset[0], 0);
    /* the pairs span positions base .. base + 42: the last offset keeps them below base + 64 */
    assert_true(at > 0 && res->offset[res->n_offsets - 1] == base + 21);
    assert_true(res->exact.max_dev <= POSENC_VERIFY_INVARIANCE_TOL);
    assert_true(res->hf.dev[at] > 1e-2);
    assert_true(res->exact_table_f64_err < 1e-15);
    free(res);
}

static void test_invariance_input_errors(void **state)
{
    (void)state;
    posenc_rope_config c = tu_rope_cfg(10000, 8, 8, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&c);
    double q[8] = { 1, 0, 0, 0, 0, 0, 0, 0 }, k[8] = { 0, 0, 0, 0, 1, 0, 0, 0 };
    int64_t m = 3, n = 0;
    posenc_invariance_result *res = malloc(sizeof *res);
    posenc_error err = { 0 };
    posenc_invariance_input in = { 1, 4, q, k, &m, &n, 100 };
    assert_int_equal(posenc_verify_invariance(&p, &in, res, &err), POSENC_EINVAL);
    in.head_dim = 8;
    in.max_position = 3;
    assert_int_equal(posenc_verify_invariance(&p, &in, res, &err), POSENC_EINVAL);
    in.max_position = 100;
    assert_int_equal(posenc_verify_invariance(&p, &in, res, &err), POSENC_OK);
    /* one pair: q = e0 at 3, k = e4 at 0: score = -sin(3 w0) = -sin(3); offsets up to 96 */
    assert_int_equal(res->offset[res->n_offsets - 1], 96);
    assert_true(res->exact.max_dev < 1e-6);
    free(res);
}

/* The verdict's bound of element a (pair partner b) in closed form, as posenc-verify(1) VERDICT
 * writes it, for a float32 dump of f32 pre-RoPE rows (u = 2^-24, u_in = 0) and no scaling. */
static double bound_of(double xa, double xb, double c, double s, double w, double pos)
{
    double u = 0x1p-24, ya = xa * c - xb * s, yb = xb * c + xa * s;
    double e = u * (8 + fabs(log(w))) * fabs(pos * w);
    return (1 + 2 * u) * (u * fabs(ya) + 2 * u * (fabs(xa * c) + fabs(xb * s)) +
                          2 * u * (fabs(xa) + fabs(xb)) + e * fabs(yb) + e * e * fabs(ya) +
                          2 * 0x1p-149);
}

static void test_row_error(void **state)
{
    (void)state;
    posenc_rope_config c = tu_rope_cfg(10000, 16, 16, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&c);
    posenc_verify_recipe r;
    posenc_verify_recipe_init(&r, &p);
    posenc_verify_tolerance t;
    posenc_verify_tolerance_init(&t, POSENC_DT_F32, POSENC_DT_F32, 1);
    assert_true(t.u == 0x1p-24 && t.u_in == 0 && t.angle == 1 && t.scale == 1);
    double pre[16], exp_[16], cs[8], sn[8], scratch[16], a, e, q;
    for (int j = 0; j < 16; j++)
        pre[j] = (j % 5) - 2.0 + 0.25 * j;
    int64_t pos = 1000;
    posenc_verify_recipe_cossin(&r, pos, cs, sn);
    posenc_verify_rotate(POSENC_STYLE_NEOX, 16, 16, cs, sn, 0, pre, exp_);
    posenc_verify_row_error(&r, &t, pos, NULL, NULL, pre, exp_, scratch, &a, &e, &q);
    assert_true(a == 0 && e == 0 && q == 0);
    /* an error of exactly 0.9 and 1.1 of element 3's bound (pair 3: elements 3 and 11) */
    double w3 = pow(10000.0, -6.0 / 16);
    double b3 = bound_of(pre[3], pre[11], cs[3], sn[3], w3, (double)pos);
    posenc_verify_row_result o;
    double y3 = exp_[3];
    exp_[3] = y3 + 0.9 * b3;
    posenc_verify_row_check(&r, &t, pos, cs, sn, pre, exp_, &o);
    assert_int_equal(o.worst_dim, 3);
    assert_close(o.worst_bound, b3, 1e-9, 0);
    assert_close(o.ratio, 0.9, 1e-6, 0);
    assert_int_equal(o.n_bad, 0);
    exp_[3] = y3 - 1.1 * b3;
    posenc_verify_row_check(&r, &t, pos, cs, sn, pre, exp_, &o);
    assert_close(o.ratio, 1.1, 1e-6, 0);
    assert_int_equal(o.n_bad, 1);
    /* the same error without the angle allowance (a profile's own rounding) is far over it */
    posenc_verify_tolerance t0;
    posenc_verify_tolerance_init(&t0, POSENC_DT_F32, POSENC_DT_F32, 0);
    exp_[3] = y3 + 0.9 * b3;
    posenc_verify_row_check(&r, &t0, pos, cs, sn, pre, exp_, &o);
    assert_true(o.ratio > 10);
    exp_[3] = y3;
    /* a non-finite element never passes, counted with its index */
    exp_[9] = NAN;
    exp_[12] = INFINITY;
    posenc_verify_row_check(&r, &t, pos, cs, sn, pre, exp_, &o);
    assert_int_equal(o.n_nan, 1);
    assert_int_equal(o.n_inf, 1);
    assert_int_equal(o.first_nonfinite, 9);
    assert_int_equal(o.n_bad, 2);
    assert_true(isinf(o.ratio));
    /* the dtypes: bf16 output of f32 rows rounds the input too; f64 is held to float32 */
    posenc_verify_tolerance_init(&t, POSENC_DT_F32, POSENC_DT_BF16, 1);
    assert_true(t.u == 0x1p-8 && t.u_in == 0x1p-8);
    posenc_verify_tolerance_init(&t, POSENC_DT_F64, POSENC_DT_F64, 1);
    assert_true(t.u == 0x1p-24 && t.u_in == 0);
    posenc_verify_tolerance_init(&t, POSENC_DT_F16, POSENC_DT_F16, 1);
    assert_true(t.u == 0x1p-11 && t.u_in == 0 && t.eta == 0x1p-23);
}

static void test_ulp_distance(void **state)
{
    (void)state;
    assert_true(posenc_verify_ulp_distance(1.0, 1.0, POSENC_DT_F32) == 0);
    assert_true(posenc_verify_ulp_distance(1.0, nextafterf(1.0f, 2.0f), POSENC_DT_F32) == 1);
    assert_true(posenc_verify_ulp_distance(-0.0, 0.0, POSENC_DT_F32) == 0);
    /* the smallest subnormals either side of zero are two steps apart */
    assert_true(posenc_verify_ulp_distance(-0x1p-149, 0x1p-149, POSENC_DT_F32) == 2);
    assert_true(posenc_verify_ulp_distance(1.0, 1.0 + 0x1p-7, POSENC_DT_BF16) == 1);
    assert_true(posenc_verify_ulp_distance(1.0, 1.0 + 0x1p-10, POSENC_DT_F16) == 1);
    assert_true(posenc_verify_ulp_distance(1.0, 1.0 + 0x1p-51, POSENC_DT_F64) == 2);
    assert_true(posenc_verify_ulp_distance(NAN, 1.0, POSENC_DT_F32) == UINT64_MAX);
    assert_true(posenc_verify_ulp_distance(NAN, NAN, POSENC_DT_F32) == 0);
}

static void test_angle_theta(void **state)
{
    (void)state;
    double pre[8] = { 1, 2, 0.5, -1, 3, -2, 1, 1 }, ex[8];
    double phi = 0.7, sc = 1.5;
    /* gptj pair 1 = (2, 3) rotated by phi and scaled */
    memcpy(ex, pre, sizeof pre);
    ex[2] = sc * (pre[2] * cos(phi) - pre[3] * sin(phi));
    ex[3] = sc * (pre[3] * cos(phi) + pre[2] * sin(phi));
    double ang, ratio;
    assert_true(posenc_verify_pair_angle(POSENC_STYLE_GPTJ, 8, 1, pre, ex, &ang, &ratio));
    assert_close(ang, phi, 0, 1e-14);
    assert_close(ratio, sc, 1e-14, 0);
    double z[8] = { 0 };
    assert_false(posenc_verify_pair_angle(POSENC_STYLE_GPTJ, 8, 1, z, ex, &ang, &ratio));
    /* theta from exact inverse frequencies */
    double inv[32];
    unsigned char ok[32];
    for (int i = 0; i < 32; i++) {
        inv[i] = pow(123456.0, -2.0 * i / 64);
        ok[i] = 1;
    }
    assert_close(posenc_verify_fit_theta(inv, ok, 32, 64), 123456.0, 1e-10, 0);
    memset(ok, 0, sizeof ok);
    ok[3] = 1;
    assert_true(posenc_verify_fit_theta(inv, ok, 32, 64) == 0);
}

/* rows of a "runtime" that rotates with recipe rr; diagnose against cfg */
static void diagnose_case(const posenc_rope_config *cfg, const posenc_verify_recipe *rr,
                          int64_t first_pos, const char *want, posenc_diagnosis *d)
{
    enum { N = 24 };
    int hd = cfg->head_dim;
    double *pre = malloc(sizeof(double) * N * hd), *ex = malloc(sizeof(double) * N * hd);
    double cs[POSENC_MAX_FREQ], sn[POSENC_MAX_FREQ];
    posenc_verify_sample rows[N];
    posenc_verify_rng r;
    posenc_verify_rng_seed(&r, 5);
    for (int s = 0; s < N; s++) {
        int64_t pos = first_pos + (s < 8 ? s : (int64_t)s * s * 3);
        for (int j = 0; j < hd; j++) /* a float32 dump's values */
            pre[s * hd + j] = (float)posenc_verify_rng_normal(&r);
        posenc_verify_recipe_cossin(rr, pos, cs, sn);
        posenc_verify_rotate(rr->params.style, hd, 2 * rr->params.n_freq, cs, sn, 0, pre + s * hd,
                             ex + s * hd);
        for (int j = 0; j < 2 * rr->params.n_freq; j++)
            ex[s * hd + j] *= rr->scale;
        for (int j = 0; j < hd; j++) /* as the runtime stores it: float32 */
            ex[s * hd + j] = (float)ex[s * hd + j];
        rows[s].pos = pos;
        rows[s].head = 0;
        rows[s].pre = pre + s * hd;
        rows[s].expected = ex + s * hd;
    }
    posenc_verify_tolerance t;
    posenc_verify_tolerance_init(&t, POSENC_DT_F32, POSENC_DT_F32, 1);
    posenc_error err = { 0 };
    assert_int_equal(posenc_verify_diagnose(cfg, 0, &t, NULL, rows, N, "k", d, &err), POSENC_OK);
    if (want) {
        if (!d->found || strcmp(d->cand[d->best].name, want) != 0)
            print_error("want %s, got: %s\n", want, d->explanation);
        assert_true(d->found);
        assert_string_equal(d->cand[d->best].name, want);
        assert_true(d->cand[d->best].max_rel_err < 1e-6);
        assert_true(d->config_rel_err > 1e-3);
    }
    free(pre);
    free(ex);
}

static void test_diagnose(void **state)
{
    (void)state;
    posenc_diagnosis *d = malloc(sizeof *d);
    posenc_rope_config cfg = tu_rope_cfg(500000, 64, 64, POSENC_STYLE_NEOX);
    posenc_verify_recipe rr;

    /* pairing swapped */
    posenc_rope_config w = cfg;
    w.style = POSENC_STYLE_GPTJ;
    posenc_rope_params p = tu_rope_params(&w);
    posenc_verify_recipe_init(&rr, &p);
    diagnose_case(&cfg, &rr, 0, "style_swapped", d);
    assert_non_null(strstr(d->explanation, "k matches with --style gptj"));
    assert_non_null(strstr(d->explanation, "the config implies neox"));

    /* wrong theta: estimated from the angles at position 1 */
    w = cfg;
    w.theta = 10000;
    p = tu_rope_params(&w);
    posenc_verify_recipe_init(&rr, &p);
    diagnose_case(&cfg, &rr, 0, "theta", d);
    assert_close(d->theta_estimate, 10000, 1e-3, 0);
    assert_non_null(strstr(d->explanation, "theta 10000"));

    /* position shift of +37 */
    p = tu_rope_params(&cfg);
    posenc_verify_recipe_init(&rr, &p);
    rr.shift = 37;
    diagnose_case(&cfg, &rr, 0, "offset", d);
    assert_true(d->shift_valid && d->shift_estimate == 37);

    /* partial config (rotary 32 of 64), runtime rotates all 64 */
    posenc_rope_config part = tu_rope_cfg(10000, 64, 32, POSENC_STYLE_NEOX);
    w = tu_rope_cfg(10000, 64, 64, POSENC_STYLE_NEOX);
    p = tu_rope_params(&w);
    posenc_verify_recipe_init(&rr, &p);
    diagnose_case(&part, &rr, 0, "rotary_dim_full", d);

    /* the same with interleaved mrope (Qwen3.5: 64 of 256 dims, sections 11, 11, 10): the
     * full-head hypothesis drops the sections, which cannot sum to 128 */
    posenc_rope_config mr = tu_rope_cfg(1e7, 256, 64, POSENC_STYLE_NEOX);
    mr.n_mrope_section = 3;
    mr.mrope_section[0] = 11;
    mr.mrope_section[1] = 11;
    mr.mrope_section[2] = 10;
    mr.mrope_interleaved = 1;
    w = tu_rope_cfg(1e7, 256, 256, POSENC_STYLE_NEOX);
    p = tu_rope_params(&w);
    posenc_verify_recipe_init(&rr, &p);
    diagnose_case(&mr, &rr, 0, "rotary_dim_full", d);
    assert_non_null(strstr(d->explanation, "full-head rotation (all 256 dims"));

    /* no rotation at all, at positions 0.. and 4096..: "not rotated", and no shift offered */
    for (int64_t first = 0; first <= 4096; first += 4096) {
        p = tu_rope_params(&mr);
        posenc_verify_recipe_init(&rr, &p);
        rr.no_rotation = 1;
        diagnose_case(&mr, &rr, first, "not_rotated", d);
        assert_non_null(strstr(d->explanation, "k is not rotated"));
        for (int i = 0; i < d->n_cand; i++)
            assert_string_not_equal(d->cand[i].name, "offset");
    }

    /* full config, runtime rotates half */
    w = tu_rope_cfg(10000, 64, 32, POSENC_STYLE_NEOX);
    p = tu_rope_params(&w);
    posenc_verify_recipe_init(&rr, &p);
    posenc_rope_config full = tu_rope_cfg(10000, 64, 64, POSENC_STYLE_NEOX);
    diagnose_case(&full, &rr, 0, "rotary_dim_partial", d);

    /* constant magnitude factor 0.5 */
    p = tu_rope_params(&cfg);
    posenc_verify_recipe_init(&rr, &p);
    rr.scale = 0.5;
    diagnose_case(&cfg, &rr, 0, "magnitude", d);
    assert_close(d->scale_estimate, 0.5, 1e-6, 0);

    /* bf16 tables */
    posenc_verify_recipe_init(&rr, &p);
    rr.table_dtype = POSENC_DT_BF16;
    diagnose_case(&cfg, &rr, 0, "tables_bf16", d);

    /* the right rotation: nothing to explain */
    posenc_verify_recipe_init(&rr, &p);
    diagnose_case(&cfg, &rr, 0, NULL, d);
    assert_false(d->found);
    assert_true(d->config_ratio <= 1.0);
    free(d);
}

static void test_bias_checks(void **state)
{
    (void)state;
    posenc_bias_config b;
    memset(&b, 0, sizeof b);
    b.heads = 12;
    b.alibi_kind = POSENC_ALIBI_MPT;
    b.alibi_bias_max = 8;
    posenc_bias_check_result r;
    posenc_error err = { 0 };
    for (int conv = 0; conv < 3; conv++) {
        assert_int_equal(posenc_verify_alibi(&b, (posenc_alibi_convention)conv, 5000, &r, &err), POSENC_OK);
        assert_true(r.checked > 12 * 1000);
        assert_int_equal(r.violations, 0);
    }
    b.heads = 0;
    assert_int_equal(posenc_verify_alibi(&b, POSENC_ALIBI_CAUSAL, 100, &r, &err), POSENC_EINVAL);
    for (int bidir = 0; bidir < 2; bidir++) {
        assert_int_equal(posenc_verify_t5(32, 128, bidir, 100000, &r, &err), POSENC_OK);
        assert_int_equal(r.violations, 0);
        assert_true(r.checked > 2 * 512);
    }
    assert_int_not_equal(posenc_verify_t5(1, 128, 1, 1000, &r, &err), POSENC_OK);
    for (int v = 0; v < 4; v++)
        for (int d = 7; d <= 8; d++) {
            int pad = v == POSENC_SIN_FAIRSEQ ? 1 : -1;
            assert_int_equal(posenc_verify_sinusoidal((posenc_sinusoidal_variant)v, d, pad, 100000, 3, &r, &err),
                             POSENC_OK);
            assert_int_equal(r.violations, 0);
            assert_true(r.checked > 500);
            assert_true(r.max_abs_err < 1e-12);
        }
    assert_int_equal(posenc_verify_sinusoidal(POSENC_SIN_VASWANI, 1, -1, 100, 3, &r, &err), POSENC_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng),
        cmocka_unit_test(test_rotate),
        cmocka_unit_test(test_offset_grid),
        cmocka_unit_test(test_scores_closed_form),
        cmocka_unit_test(test_cossin_ld_far),
        cmocka_unit_test(test_invariance_reference),
        cmocka_unit_test(test_invariance_far_pairs),
        cmocka_unit_test(test_invariance_input_errors),
        cmocka_unit_test(test_row_error),
        cmocka_unit_test(test_ulp_distance),
        cmocka_unit_test(test_angle_theta),
        cmocka_unit_test(test_diagnose),
        cmocka_unit_test(test_bias_checks),
    };
    return cmocka_run_group_tests_name("verify", tests, NULL, NULL);
}
