/* test_verify_stats.c: the statistics of a verify pass (lib/verify/verify_stats.c): position ranges,
 * the sample plan (by hand), a comparison's worst errors overall, per head and per position
 * range and its worst row against rows rotated in long double (posenc_verify_cossin_ld, the
 * independent reference) with two known perturbations, the rotated-only mode (one content per
 * head, undone from its first row), the early end of a sampling pass, and the q/k pairing of
 * the invariance check on samples. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "lib/verify/verify_stats.h"

#define B 2
#define H 3
#define S 5
#define D 4

static const int64_t POS[S] = { 0, 1, 7, 100, 4000 };

static void test_buckets(void **state)
{
    (void)state;
    static const struct { int64_t pos; int b; } c[] = {
        { -5, 0 }, { 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 2 }, { 4, 3 }, { 7, 3 }, { 100, 7 },
        { 4000, 12 }, { 4095, 12 }, { 4096, 13 }, { INT64_MAX, 63 },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        int b = pe_vstats_bucket(c[i].pos);
        assert_int_equal(b, c[i].b);
        int64_t lo, hi;
        pe_vstats_bucket_range(b, &lo, &hi);
        if (c[i].pos >= 0)
            assert_true(lo <= c[i].pos && c[i].pos <= hi);
    }
    int64_t lo, hi;
    pe_vstats_bucket_range(7, &lo, &hi);
    assert_int_equal(lo, 64);
    assert_int_equal(hi, 127);
    pe_vstats_bucket_range(63, &lo, &hi); /* the last range ends at INT64_MAX */
    assert_true(lo == (int64_t)1 << 62 && hi == INT64_MAX);
}

static void test_sample_plan(void **state)
{
    (void)state;
    unsigned char keep[1000];
    /* 8 * 1.35^k: 10.8, 14.58, 19.68, 26.57, 35.87, 48.43, then 65.4 is past 63 */
    static const int want64[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 14, 19, 26, 35, 48, 63 };
    assert_int_equal(pe_vpass_sample_plan(64, keep), 16);
    int n = 0;
    for (int s = 0; s < 64; s++)
        if (keep[s]) {
            assert_int_equal(s, want64[n]);
            n++;
        }
    assert_int_equal(n, 16);
    assert_int_equal(pe_vpass_sample_plan(1, keep), 1);
    assert_int_equal(keep[0], 1);
    assert_int_equal(pe_vpass_sample_plan(5, keep), 5);
    /* a long sequence: at most PE_VPASS_SAMPLE_SEQ indices, the last one kept */
    int k = pe_vpass_sample_plan(1000, keep);
    assert_true(k <= PE_VPASS_SAMPLE_SEQ);
    assert_int_equal(keep[999], 1);
    n = 0;
    for (int s = 0; s < 1000; s++)
        n += keep[s];
    assert_int_equal(n, k);
}

static double content(int64_t b, int64_t h, int64_t s, int j)
{
    return 0.25 + 0.5 * (double)j - 0.3 * (double)h + 0.1 * (double)b + 0.01 * (double)s;
}

/* neox rotation of x at pos in long double: pairs (i, i + D/2) */
static void rotate_ld(const posenc_rope_params *p, int64_t pos, const double *x, double *out)
{
    long double c[D / 2], s[D / 2];
    posenc_verify_cossin_ld(p, pos, c, s);
    for (int i = 0; i < D / 2; i++) {
        long double x1 = x[i], x2 = x[i + D / 2];
        out[i] = (double)(x1 * c[i] - x2 * s[i]);
        out[i + D / 2] = (double)(x2 * c[i] + x1 * s[i]);
    }
}

static unsigned char KEEP[S]; /* the sample plan of S tokens: every index */

/* The parameters of a neox RoPE of D dims and theta, a recipe of them with exact tables, and
 * KEEP. */
static void recipe(double theta, posenc_rope_params *par, posenc_verify_recipe *rec)
{
    pe_vpass_sample_plan(S, KEEP);
    posenc_rope_config cfg = tu_rope_cfg(theta, D, D, POSENC_STYLE_NEOX);
    *par = tu_rope_params(&cfg);
    posenc_verify_recipe_init(rec, par);
    rec->prec = POSENC_PREC_EXACT;
}

static pe_vpass *new_pass(const posenc_verify_recipe *rec, const unsigned char *keep, int pre,
                          int cmp, int64_t seq, const int64_t *pos)
{
    pe_vpass_spec sp = { .what = "q", .rec = rec, .pre_dt = POSENC_DT_F32, .cmp_dt = POSENC_DT_F32,
                         .positions = { pos, 0, 1, 1 }, .batch = B, .heads = H, .seq = seq,
                         .head_dim = D, .has_pre = pre, .has_cmp = cmp, .keep = keep };
    posenc_verify_tolerance_init(&sp.tol, POSENC_DT_F32, POSENC_DT_F32, 1);
    posenc_verify_tolerance_init(&sp.ptol, POSENC_DT_F32, POSENC_DT_F32, 0);
    sp.prof[0] = rec; /* the exact profile: the reference itself */
    sp.held = -1;
    pe_vpass *p = NULL;
    posenc_error err = { 0 };
    assert_int_equal(pe_vpass_new(&sp, &p, &err), POSENC_OK);
    return p;
}

/* Rows rotated in long double; row (1, 2, s=3) element 0 off by 1e-3, row (0, 1, s=4) element
 * 3 (the slow pair, whose angle allowance stays small) off by 5e-4: exactly those two fail, and the statistics name them. */
static void test_compare(void **state)
{
    (void)state;
    posenc_rope_params par;
    posenc_verify_recipe rec;
    recipe(10000.0, &par, &rec);
    pe_vpass *p = new_pass(&rec, KEEP, 1, 1, S, POS);
    posenc_error err = { 0 };
    double max_cmp = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t s = 0; s < S; s++) {
                double x[D], y[D];
                for (int j = 0; j < D; j++)
                    x[j] = content(b, h, s, j);
                rotate_ld(&par, POS[s], x, y);
                if (b == 1 && h == 2 && s == 3)
                    y[0] += 1e-3;
                if (b == 0 && h == 1 && s == 4)
                    y[3] += 5e-4;
                if (b == 1 && h == 2 && s == 3)
                    for (int j = 0; j < D; j++)
                        max_cmp = fabs(y[j]) > max_cmp ? fabs(y[j]) : max_cmp;
                assert_int_equal(pe_vpass_row(p, b, h, s, x, y, &err), POSENC_OK);
            }
    assert_false(pe_vpass_done(p)); /* a comparison reads every row */
    const pe_vstats *st = pe_vpass_stats(p);
    assert_int_equal(st->rows, B * H * S);
    assert_int_equal(st->bad, 2);
    assert_int_equal(st->elems, B * H * S * D);
    assert_int_equal(st->elems_bad, 2);
    assert_int_equal(st->nan + st->inf + st->pre_nonfinite, 0);
    /* the exact profile (the same tables, its own rounding) fails at the first of them, and
     * is not followed further */
    assert_true(st->prof[0].on && !st->prof[1].on);
    assert_int_equal(st->prof[0].rows_bad, 1);
    assert_int_equal(st->prof[0].elems_bad, 1);
    assert_true(st->prof[0].drift == 0);
    assert_close(st->max_abs, 1e-3, 1e-9, 0);
    assert_close(st->max_rel, 1e-3 / max_cmp, 1e-9, 0);
    assert_true(st->max_ratio > 1);
    assert_int_equal(st->worst_b, 1);
    assert_int_equal(st->worst_h, 2);
    assert_int_equal(st->worst_pos, 100);
    assert_int_equal(st->heads, H);
    assert_true(st->head_abs[0] < 1e-12);
    assert_close(st->head_abs[1], 5e-4, 1e-9, 0);
    assert_close(st->head_abs[2], 1e-3, 1e-9, 0);
    /* position ranges: 0 -> 0, 1 -> 1, 7 -> 3, 100 -> 7, 4000 -> 12; B * H rows each */
    for (int b = 0; b < PE_VSTATS_BUCKETS; b++) {
        int used = b == 0 || b == 1 || b == 3 || b == 7 || b == 12;
        assert_int_equal(st->b_rows[b], used ? B * H : 0);
    }
    assert_close(st->b_abs[7], 1e-3, 1e-9, 0);
    assert_close(st->b_abs[12], 5e-4, 1e-9, 0);
    assert_true(st->b_abs[3] < 1e-12 && st->b_rel[1] < 1e-12);
    /* samples: batch 0, heads 0 and 2, every index (S <= 8), copies of the rows */
    const posenc_verify_sample *sm;
    size_t n = pe_vpass_samples(p, &sm);
    assert_int_equal(n, 2 * S);
    for (size_t i = 0; i < n; i++) {
        int64_t s = (int64_t)(i % S);
        int h = i < S ? 0 : 2;
        assert_int_equal(sm[i].head, h);
        assert_int_equal(sm[i].pos, POS[s]);
        for (int j = 0; j < D; j++)
            assert_true(sm[i].pre[j] == content(0, h, s, j));
        assert_non_null(sm[i].expected);
    }
    assert_true(pe_vpass_tolerance(p)->u == 0x1p-24);
    assert_true(pe_vpass_tolerance(p)->angle == 1);
    pe_vpass_free(p);
}

/* --rotated: the rows are one content per head rotated to each position; the first row of each
 * head, rotated back, stands for the rest. A changed content at one position fails that row. */
static void test_rotated(void **state)
{
    (void)state;
    posenc_rope_params par;
    posenc_verify_recipe rec;
    recipe(500000.0, &par, &rec);
    pe_vpass *p = new_pass(&rec, KEEP, 0, 1, S, POS);
    posenc_error err = { 0 };
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t s = 0; s < S; s++) {
                double x[D], y[D];
                for (int j = 0; j < D; j++)
                    x[j] = content(b, h, 0, j) + (b == 1 && h == 0 && s == 2 && j == 1 ? 0.01 : 0);
                rotate_ld(&par, POS[s], x, y);
                assert_int_equal(pe_vpass_row(p, b, h, s, NULL, y, &err), POSENC_OK);
            }
    const pe_vstats *st = pe_vpass_stats(p);
    assert_int_equal(st->rows, B * H * S);
    assert_int_equal(st->bad, 1);
    assert_int_equal(st->worst_b, 1);
    assert_int_equal(st->worst_h, 0);
    assert_int_equal(st->worst_pos, 7);
    /* the content error 0.01 on dim 1 (pair 1, inverse frequency 500000^-1/2) comes out
     * rotated by position 7: its larger element is 0.01 cos(7 / sqrt(500000)) */
    assert_close(st->max_abs, (double)(0.01L * cosl(7.0L / sqrtl(500000.0L))), 1e-9, 0);
    assert_true(st->head_abs[1] < 1e-12 && st->head_abs[2] < 1e-12);
    /* the samples hold the de-rotated content */
    const posenc_verify_sample *sm;
    size_t n = pe_vpass_samples(p, &sm);
    assert_int_equal(n, 2 * S);
    for (int j = 0; j < D; j++)
        assert_close(sm[3].pre[j], content(0, 0, 0, j), 0, 1e-12);
    pe_vpass_free(p);
}

/* A pass without rotated rows stops once it holds its samples: heads 0 and H - 1 of batch 0. */
static void test_done(void **state)
{
    (void)state;
    enum { LS = 64 };
    posenc_rope_params par;
    posenc_verify_recipe rec;
    recipe(10000.0, &par, &rec);
    unsigned char keep[LS];
    pe_vpass_sample_plan(LS, keep);
    pe_vpass *p = new_pass(&rec, keep, 1, 0, LS, NULL); /* offset 0: position = s */
    posenc_error err = { 0 };
    double x[D] = { 1, 2, 3, 4 };
    int64_t r = 0;
    for (int64_t h = 0; h < H && !pe_vpass_done(p); h++)
        for (int64_t s = 0; s < LS && !pe_vpass_done(p); s++, r++)
            assert_int_equal(pe_vpass_row(p, 0, h, s, x, NULL, &err), POSENC_OK);
    assert_true(pe_vpass_done(p));
    assert_int_equal(r, 3 * LS); /* ended at the last sampled index of the last head */
    const posenc_verify_sample *sm;
    assert_int_equal(pe_vpass_samples(p, &sm), 32);
    assert_int_equal(sm[15].pos, 63);
    assert_null(sm[0].expected);
    assert_int_equal(pe_vpass_stats(p)->rows, 0);
    pe_vpass_free(p);
    pe_vpass_spec bad = { .what = "q", .rec = &rec, .positions = { NULL, 0, 1, 1 }, .batch = 1,
                          .heads = 1, .seq = 1, .head_dim = D, .keep = keep };
    assert_int_equal(pe_vpass_new(&bad, &p, &err), POSENC_EINVAL);
    pe_vpass_free(NULL);
}

/* The invariance check on samples pairs q sample t % nq with k sample (t / nq + 7t) % nk: the
 * same result as posenc_verify_invariance on those pairs built here. */
static void test_invariance(void **state)
{
    (void)state;
    posenc_rope_params par;
    posenc_verify_recipe rec;
    recipe(10000.0, &par, &rec);
    pe_vpass *q = new_pass(&rec, KEEP, 1, 0, S, POS), *k = new_pass(&rec, KEEP, 1, 0, S, POS);
    posenc_verify_rng g;
    posenc_verify_rng_seed(&g, 3);
    double qx[H][S][D], kx[H][S][D];
    posenc_error err = { 0 };
    for (int64_t h = 0; h < H; h++)
        for (int64_t s = 0; s < S; s++) {
            for (int j = 0; j < D; j++) {
                qx[h][s][j] = posenc_verify_rng_normal(&g);
                kx[h][s][j] = posenc_verify_rng_normal(&g);
            }
            assert_int_equal(pe_vpass_row(q, 0, h, s, qx[h][s], NULL, &err), POSENC_OK);
            assert_int_equal(pe_vpass_row(k, 0, h, s, kx[h][s], NULL, &err), POSENC_OK);
        }
    posenc_invariance_result *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_int_equal(pe_vpass_invariance(q, k, &par, 4096, a, &err), POSENC_OK);
    enum { NP = S * S };
    double qv[NP * D], kv[NP * D];
    int64_t m[NP], n[NP];
    for (int t = 0; t < NP; t++) {
        int iq = t % S, ik = (t / S + t * 7) % S;
        memcpy(qv + t * D, qx[0][iq], sizeof qx[0][iq]);
        memcpy(kv + t * D, kx[0][ik], sizeof kx[0][ik]);
        m[t] = POS[iq];
        n[t] = POS[ik];
    }
    posenc_invariance_input in = { NP, D, qv, kv, m, n, 4096 };
    assert_int_equal(posenc_verify_invariance(&par, &in, b, &err), POSENC_OK);
    assert_int_equal(a->n_offsets, b->n_offsets);
    assert_int_equal(a->scores, b->scores);
    assert_true(a->exact.max_dev == b->exact.max_dev && a->hf.max_dev == b->hf.max_dev);
    assert_true(a->exact.max_dev < POSENC_VERIFY_INVARIANCE_TOL);
    free(a);
    free(b);
    pe_vpass_free(q);
    pe_vpass_free(k);
}

/* Non-finite values: counted, the first named by index, and the row fails. */
static void test_nonfinite(void **state)
{
    (void)state;
    posenc_rope_params par;
    posenc_verify_recipe rec;
    recipe(10000.0, &par, &rec);
    pe_vpass *p = new_pass(&rec, KEEP, 1, 1, S, POS);
    posenc_error err = { 0 };
    for (int64_t h = 0; h < H; h++)
        for (int64_t s = 0; s < S; s++) {
            double x[D], y[D];
            for (int j = 0; j < D; j++)
                x[j] = content(0, h, s, j);
            rotate_ld(&par, POS[s], x, y);
            if (h == 1 && s >= 2)
                y[1] = NAN;
            if (h == 2 && s == 0)
                y[2] = -INFINITY;
            assert_int_equal(pe_vpass_row(p, 0, h, s, x, y, &err), POSENC_OK);
        }
    const pe_vstats *st = pe_vpass_stats(p);
    assert_int_equal(st->nan, S - 2);
    assert_int_equal(st->inf, 1);
    assert_int_equal(st->first_nonfinite.h, 1);
    assert_int_equal(st->first_nonfinite.pos, POS[2]);
    assert_int_equal(st->first_nonfinite.dim, 1);
    assert_int_equal(st->bad, S - 1);
    assert_true(isinf(st->max_ratio));
    pe_vpass_free(p);
}

/* The profiles' explanation: the best match named; several matches in a 16-bit dump said to be
 * indistinguishable; none matching said so. */
static void test_profiles_explain(void **state)
{
    (void)state;
    posenc_verify_profiles_result f;
    memset(&f, 0, sizeof f);
    f.n = 4;
    for (int k = 0; k < 4; k++) {
        f.fit[k].prec = (posenc_precision)k;
        f.fit[k].available = k != 3;
        f.fit[k].elements_failed = k == 2 ? 5 : 0;
        f.fit[k].runtime = k == 1 ? "transformers" : "x";
    }
    f.fit[0].max_abs_err = 0.5;
    f.fit[1].max_abs_err = 0.25;
    posenc_verify_profiles_explain(&f, "k", POSENC_DT_BF16);
    assert_int_equal(f.best, 1);
    assert_true(f.fit[0].matches && f.fit[1].matches && !f.fit[2].matches && !f.fit[3].matches);
    assert_non_null(strstr(f.explanation, "k matches the hf profile (transformers)"));
    assert_non_null(strstr(f.explanation, "in bf16 the profiles exact, hf all match: the dtype "
                                          "cannot tell them apart"));
    f.fit[0].elements_failed = f.fit[1].elements_failed = 1;
    posenc_verify_profiles_explain(&f, "k", POSENC_DT_F32);
    assert_int_equal(f.best, -1);
    assert_string_equal(f.explanation, "k matches no runtime profile (exact, hf, vllm) element "
                                       "for element; posenc has no rules of x for this config");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),   cmocka_unit_test(test_sample_plan),
        cmocka_unit_test(test_compare),   cmocka_unit_test(test_rotated),
        cmocka_unit_test(test_done),      cmocka_unit_test(test_invariance),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_profiles_explain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
