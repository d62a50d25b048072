/* test_bias.c: ALiBi slopes and rows, T5 buckets, Shaw indices, sinusoidal tables.
 * References: closed forms in long double written out here independently of lib/encodings/bias.c, and
 * golden files made by tests/golden/make_bias_golden.py (numpy/torch running the models' code). */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/bias.h"
#include "posenc/dtype.h"

/* ---- ALiBi ---- */

/* Press et al. get_slopes, transcribed in long double. */
static void press_slopes(int n, long double *out)
{
    long double l2 = log2l((long double)n);
    if (floorl(l2) == l2) {
        long double start = powl(2.0L, -powl(2.0L, -(l2 - 3.0L)));
        for (int i = 0; i < n; i++)
            out[i] = start * powl(start, (long double)i);
        return;
    }
    int p = 1 << (int)floorl(l2);
    press_slopes(p, out);
    long double *tmp = malloc(sizeof *tmp * 2 * (size_t)p);
    press_slopes(2 * p, tmp);
    for (int i = 0; i < n - p; i++)
        out[p + i] = tmp[2 * i];
    free(tmp);
}

static void test_reference_slopes(void **state)
{
    (void)state;
    double s[128];
    long double ref[128];
    for (int h = 1; h <= 128; h++) {
        assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_REFERENCE, h, 8, s, NULL), POSENC_OK);
        press_slopes(h, ref);
        for (int i = 0; i < h; i++)
            assert_close(s[i], (double)ref[i], 1e-15, 0);
    }
    /* n = 8 gives 1/2 ... 1/256 exactly; n = 12 adds 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 */
    assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_REFERENCE, 8, 8, s, NULL), POSENC_OK);
    for (int i = 0; i < 8; i++)
        assert_true(s[i] == ldexp(1.0, -(i + 1)));
    assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_REFERENCE, 12, 8, s, NULL), POSENC_OK);
    for (int i = 0; i < 4; i++)
        assert_close(s[8 + i], pow(2.0, -0.5 - i), 1e-16, 0);
}

/* llm-foundry gen_slopes in long double. */
static void mpt_closed(int n, double bias_max, long double *out)
{
    int p = 1;
    while (p < n)
        p *= 2;
    long double *all = malloc(sizeof *all * (size_t)p);
    for (int k = 1; k <= p; k++)
        all[k - 1] = 1.0L / powl(2.0L, (long double)k * (long double)bias_max / p);
    if (p == n) {
        memcpy(out, all, sizeof *all * (size_t)n);
    } else {
        int m = 0;
        for (int i = 1; i < p && m < n; i += 2)
            out[m++] = all[i];
        for (int i = 0; i < p && m < n; i += 2)
            out[m++] = all[i];
    }
    free(all);
}

static void test_mpt_slopes(void **state)
{
    (void)state;
    double s[128], r[128];
    long double ref[128];
    for (int h = 1; h <= 128; h++) {
        /* alibi_bias_max 8 is the reference, for every head count */
        assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_MPT, h, 8, s, NULL), POSENC_OK);
        assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_REFERENCE, h, 8, r, NULL), POSENC_OK);
        for (int i = 0; i < h; i++)
            assert_close(s[i], r[i], 1e-15, 0);
        const double maxes[] = { 4, 12, 16, 6.5 };
        for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++) {
            assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_MPT, h, maxes[m], s, NULL),
                             POSENC_OK);
            mpt_closed(h, maxes[m], ref);
            for (int i = 0; i < h; i++)
                assert_close(s[i], (double)ref[i], 1e-15, 0);
        }
    }
    posenc_error err = { 0 };
    assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_MPT, 4, 0, s, &err), POSENC_EINVAL);
    assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_REFERENCE, 0, 8, s, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "at least one head"));
}

static void test_falcon_slopes(void **state)
{
    (void)state;
    double s[128];
    long double ref[128];
    for (int h = 1; h <= 128; h++) {
        assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_FALCON, h, 8, s, NULL), POSENC_OK);
        press_slopes(h, ref);
        for (int i = 0; i < h; i++) {
            /* the bf16 value nearest the exact slope, and it is a bf16 value */
            uint16_t b = posenc_f64_to_bf16((double)ref[i]);
            assert_true(s[i] == (double)posenc_bf16_to_f32(b));
            assert_close(s[i], (double)ref[i], 1.0 / 256, 0);
        }
    }
}

static float f32_from_hex(const char *tok)
{
    uint32_t u = (uint32_t)strtoul(tok, NULL, 16);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Slopes as BLOOM, Falcon and MPT compute them in torch (golden file). */
static void test_slopes_golden(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/golden/bias_slopes.txt", tu_data_dir());
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    static char line[1 << 16];
    int nlines = 0;
    double s[128];
    while (fgets(line, sizeof line, fp)) {
        char *save = NULL, *tok = strtok_r(line, " \n", &save);
        char kind[16];
        snprintf(kind, sizeof kind, "%s", tok);
        int h = atoi(strtok_r(NULL, " \n", &save));
        assert_true(h >= 1 && h <= 128);
        if (strcmp(kind, "mpt") == 0) {
            double bmax = atof(strtok_r(NULL, " \n", &save));
            assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_MPT, h, bmax, s, NULL), POSENC_OK);
        } else {
            posenc_alibi_kind k = strcmp(kind, "falcon") == 0 ? POSENC_ALIBI_FALCON
                                                              : POSENC_ALIBI_REFERENCE;
            assert_int_equal(posenc_alibi_slopes(k, h, 8, s, NULL), POSENC_OK);
        }
        for (int i = 0; i < h; i++) {
            tok = strtok_r(NULL, " \n", &save);
            assert_non_null(tok);
            float g = f32_from_hex(tok);
            if (strcmp(kind, "falcon") == 0)
                assert_true((float)s[i] == g); /* bf16 values: exact */
            else if (strcmp(kind, "bloom") == 0)
                /* BLOOM raises the float32-rounded base to the k-th power: k/2 ulp apart */
                assert_close(s[i], g, 6e-8 * (i + 2), 0);
            else
                assert_close(s[i], g, 2.5e-7, 0); /* torch float32 pow: within an ulp */
        }
        assert_null(strtok_r(NULL, " \n", &save));
        nlines++;
    }
    fclose(fp);
    assert_true(nlines >= 100);
}

static void test_alibi_rows(void **state)
{
    (void)state;
    double out[6];
    posenc_alibi_row(0.5, POSENC_ALIBI_SYMMETRIC, 2, 6, out);
    const double sym[] = { -1, -0.5, 0, -0.5, -1, -1.5 };
    for (int j = 0; j < 6; j++)
        assert_true(out[j] == sym[j]);
    posenc_alibi_row(0.5, POSENC_ALIBI_CAUSAL, 2, 6, out);
    const double cau[] = { -1, -0.5, 0, 0.5, 1, 1.5 };
    for (int j = 0; j < 6; j++)
        assert_true(out[j] == cau[j]);
    posenc_alibi_row(0.25, POSENC_ALIBI_KEYINDEX, 4, 6, out);
    for (int j = 0; j < 6; j++)
        assert_true(out[j] == 0.25 * j);
    /* every convention gives the same causal softmax: b(i,j) - b(i,i) = -m(i-j) for j <= i */
    const posenc_alibi_convention convs[] = { POSENC_ALIBI_SYMMETRIC, POSENC_ALIBI_CAUSAL,
                                              POSENC_ALIBI_KEYINDEX };
    double row[50];
    for (size_t c = 0; c < 3; c++) {
        for (int64_t i = 0; i < 50; i++) {
            posenc_alibi_row(0.0625, convs[c], i, 50, row);
            for (int64_t j = 0; j <= i; j++)
                assert_close(row[j] - row[i], -0.0625 * (double)(i - j), 0, 1e-12);
        }
    }
    /* non-kind rows equal posenc_alibi_row */
    double a[6], b[6];
    posenc_alibi_row(0.3, POSENC_ALIBI_CAUSAL, 3, 6, a);
    posenc_alibi_row_kind(POSENC_ALIBI_MPT, 0.3, POSENC_ALIBI_CAUSAL, 3, 6, b);
    assert_memory_equal(a, b, sizeof a);

    const char *names[] = { "symmetric", "causal", "keyindex" };
    for (int c = 0; c < 3; c++) {
        posenc_alibi_convention cv;
        assert_int_equal(posenc_alibi_convention_parse(names[c], &cv, NULL), POSENC_OK);
        assert_string_equal(posenc_alibi_convention_name(cv), names[c]);
    }
    posenc_error err = { 0 };
    posenc_alibi_convention cv;
    assert_int_equal(posenc_alibi_convention_parse("sym", &cv, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "'sym'"));
    posenc_alibi_kind k;
    assert_int_equal(posenc_alibi_kind_parse("bloom", &k, NULL), POSENC_OK);
    assert_int_equal(k, POSENC_ALIBI_REFERENCE);
    assert_int_equal(posenc_alibi_kind_parse("falcon", &k, NULL), POSENC_OK);
    assert_int_equal(k, POSENC_ALIBI_FALCON);
    assert_int_equal(posenc_alibi_kind_parse("xx", &k, &err), POSENC_EINVAL);
}

/* Falcon: bf16(slope) * bf16(position), rounded to bf16. */
static void test_falcon_rows(void **state)
{
    (void)state;
    double s[5];
    assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_FALCON, 5, 8, s, NULL), POSENC_OK);
    double out[300];
    posenc_alibi_row_kind(POSENC_ALIBI_FALCON, s[4], POSENC_ALIBI_KEYINDEX, 0, 300, out);
    for (int j = 0; j < 300; j++) {
        float pos = posenc_bf16_to_f32(posenc_f32_to_bf16((float)j));
        float prod = (float)s[4] * pos; /* exact: two 8-bit significands */
        float want = posenc_bf16_to_f32(posenc_f32_to_bf16(prod));
        assert_true(out[j] == (double)want);
    }
    /* 257 is not a bf16 number: it becomes 256 (ties to even) before the product */
    assert_true(out[257] == out[256]);
    assert_true(s[4] == 0.5); /* H = 5: 2^-2, 2^-4, 2^-6, 2^-8, then 2^-1 */
}

/* ---- T5 ---- */

static void test_t5_golden(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/golden/bias_t5.txt", tu_data_dir());
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    static char line[1 << 16];
    int nlines = 0, bidir_seen[2] = { 0, 0 };
    while (fgets(line, sizeof line, fp)) {
        char *p = line, *end;
        int bidir = (int)strtol(p, &end, 10);
        p = end;
        int nb = (int)strtol(p, &end, 10);
        p = end;
        int md = (int)strtol(p, &end, 10);
        p = end;
        long lo = strtol(p, &end, 10);
        p = end;
        long hi = strtol(p, &end, 10);
        p = end;
        assert_int_equal(lo, -2L * md);
        assert_int_equal(hi, 2L * md);
        assert_int_equal(posenc_t5_check(bidir, nb, md, NULL), POSENC_OK);
        for (long rel = lo; rel <= hi; rel++) {
            long want = strtol(p, &end, 10);
            assert_true(end != p);
            p = end;
            int got = posenc_t5_bucket(rel, bidir, nb, md);
            if (got != want)
                print_error("bidir %d nb %d md %d rel %ld: %d, want %ld\n", bidir, nb, md, rel,
                            got, want);
            assert_int_equal(got, want);
        }
        bidir_seen[bidir] = 1;
        nlines++;
    }
    fclose(fp);
    assert_true(nlines >= 10 && bidir_seen[0] && bidir_seen[1]);
}

static void test_t5_rules(void **state)
{
    (void)state;
    /* defaults 32/128: encoder exact buckets 0..7 for rel <= 0 side, 16.. for rel > 0 */
    assert_int_equal(posenc_t5_bucket(0, 1, 32, 128), 0);
    assert_int_equal(posenc_t5_bucket(-3, 1, 32, 128), 3);
    assert_int_equal(posenc_t5_bucket(3, 1, 32, 128), 19);
    assert_int_equal(posenc_t5_bucket(-100000, 1, 32, 128), 15);
    assert_int_equal(posenc_t5_bucket(100000, 1, 32, 128), 31);
    assert_int_equal(posenc_t5_bucket(INT64_MIN, 1, 32, 128), 15);
    assert_int_equal(posenc_t5_bucket(INT64_MAX, 1, 32, 128), 31);
    /* decoder: future keys share bucket 0 */
    assert_int_equal(posenc_t5_bucket(5, 0, 32, 128), 0);
    assert_int_equal(posenc_t5_bucket(-15, 0, 32, 128), 15);
    assert_int_equal(posenc_t5_bucket(-1000000, 0, 32, 128), 31);
    posenc_error err = { 0 };
    assert_int_equal(posenc_t5_check(0, 1, 128, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "at least 2"));
    assert_int_equal(posenc_t5_check(1, 3, 128, &err), POSENC_EINVAL);
    assert_int_equal(posenc_t5_check(0, 2, 2, &err), POSENC_OK);
    assert_int_equal(posenc_t5_check(1, 4, 2, &err), POSENC_OK);
    assert_int_equal(posenc_t5_check(1, 32, 8, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "max_distance 8"));
    assert_int_equal(posenc_t5_check(1, 32, 9, &err), POSENC_OK);
    assert_int_equal(posenc_t5_check(0, 32, 16, &err), POSENC_EINVAL);
    assert_int_equal(posenc_t5_check(0, 32, 17, &err), POSENC_OK);

    int32_t row[40];
    posenc_t5_bucket_row(7, 40, 1, 32, 128, row);
    for (int j = 0; j < 40; j++)
        assert_int_equal(row[j], posenc_t5_bucket(j - 7, 1, 32, 128));
    float w[32 * 3], brow[40];
    for (int i = 0; i < 32 * 3; i++)
        w[i] = (float)i * 0.5f;
    posenc_t5_bias_row(w, 3, 2, 7, 40, 1, 32, 128, brow);
    for (int j = 0; j < 40; j++)
        assert_true(brow[j] == w[row[j] * 3 + 2]);
}

/* ---- Shaw ---- */

static void test_shaw(void **state)
{
    (void)state;
    for (int64_t k = 0; k <= 5; k++)
        for (int64_t i = 0; i < 20; i++)
            for (int64_t j = 0; j < 20; j++) {
                int64_t d = j - i, want = (d < -k ? -k : d > k ? k : d) + k;
                int64_t got = posenc_shaw_index(i, j, k);
                assert_int_equal(got, want);
                assert_true(got >= 0 && got <= 2 * k);
            }
    assert_int_equal(posenc_shaw_index(10, 0, 4), 0);
    assert_int_equal(posenc_shaw_index(0, 10, 4), 8);
    assert_int_equal(posenc_shaw_index(3, 3, 4), 4);
}

/* ---- sinusoidal ---- */

/* Closed forms in long double, straight from each variant's code. */
static long double freq_ld(posenc_sinusoidal_variant v, int d, int k)
{
    if (v == POSENC_SIN_VASWANI || v == POSENC_SIN_MARIAN)
        return powl(10000.0L, -2.0L * k / d);
    int half = d / 2, den = half - 1 > 1 ? half - 1 : 1;
    return expl(-(long double)k * logl(10000.0L) / den);
}

static long double closed(posenc_sinusoidal_variant v, int d, int64_t pos, int pad, int j)
{
    if (v == POSENC_SIN_FAIRSEQ && pos == pad)
        return 0;
    long double p = (long double)pos;
    switch (v) {
    case POSENC_SIN_VASWANI:
        return j % 2 == 0 ? sinl(p * freq_ld(v, d, j / 2)) : cosl(p * freq_ld(v, d, j / 2));
    case POSENC_SIN_MARIAN: {
        int sentinel = d / 2 + d % 2;
        return j < sentinel ? sinl(p * freq_ld(v, d, j)) : cosl(p * freq_ld(v, d, j - sentinel));
    }
    case POSENC_SIN_T2T:
    case POSENC_SIN_FAIRSEQ: {
        int half = d / 2;
        if (j >= 2 * half)
            return 0;
        return j < half ? sinl(p * freq_ld(v, d, j)) : cosl(p * freq_ld(v, d, j - half));
    }
    case POSENC_SIN_COS_SIN: { /* MusicGen: torch.cat([cos, sin]), t2t exponents */
        int half = d / 2;
        if (j >= 2 * half)
            return 0;
        return j < half ? cosl(p * freq_ld(v, d, j)) : sinl(p * freq_ld(v, d, j - half));
    }
    }
    return NAN;
}

static void test_sinusoidal_known(void **state)
{
    (void)state;
    double out[8];
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_VASWANI, 4, 0, -1, out, NULL), POSENC_OK);
    const double zero[] = { 0, 1, 0, 1 };
    assert_memory_equal(out, zero, sizeof zero);
    /* position 1, d 4: [sin 1, cos 1, sin 0.01, cos 0.01] */
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_VASWANI, 4, 1, -1, out, NULL), POSENC_OK);
    assert_close(out[0], sin(1.0), 1e-16, 0);
    assert_close(out[1], cos(1.0), 1e-16, 0);
    assert_close(out[2], sin(0.01), 1e-16, 0);
    assert_close(out[3], cos(0.01), 1e-16, 0);
    /* t2t d 4: frequencies 1 and 1e-4 (the last is exactly 1/10000), [sin | cos] */
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_T2T, 4, 1, -1, out, NULL), POSENC_OK);
    assert_close(out[0], sin(1.0), 1e-16, 0);
    assert_close(out[1], (double)sinl(1.0L / 10000), 1e-16, 0);
    assert_close(out[2], cos(1.0), 1e-16, 0);
    assert_close(out[3], (double)cosl(1.0L / 10000), 1e-16, 0);
    /* marian d 5: sin columns 0..2 (exponents 0, 2/5, 4/5), cos columns 3..4 */
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_MARIAN, 5, 3, -1, out, NULL), POSENC_OK);
    assert_close(out[0], sin(3.0), 1e-15, 0);
    assert_close(out[2], sin(3.0 * pow(10000.0, -0.8)), 1e-15, 0);
    assert_close(out[3], cos(3.0), 1e-15, 0);
    assert_close(out[4], cos(3.0 * pow(10000.0, -0.4)), 1e-15, 0);
    /* fairseq: row padding_idx is zero; the first real position padding_idx+1 is sin/cos(2) */
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_FAIRSEQ, 6, 1, 1, out, NULL), POSENC_OK);
    for (int j = 0; j < 6; j++)
        assert_true(out[j] == 0.0);
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_FAIRSEQ, 6, 2, 1, out, NULL), POSENC_OK);
    assert_close(out[0], sin(2.0), 1e-16, 0);
    assert_close(out[3], cos(2.0), 1e-16, 0);
    assert_close(out[2], (double)sinl(2.0L / 10000), 1e-16, 0);
    /* padding only matters for fairseq */
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_T2T, 6, 1, 1, out, NULL), POSENC_OK);
    assert_close(out[0], sin(1.0), 1e-16, 0);

    posenc_error err = { 0 };
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_FAIRSEQ, 3, 0, 1, out, &err),
                     POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "d_model >= 4"));
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_VASWANI, 0, 0, -1, out, &err),
                     POSENC_EINVAL);
    assert_int_equal(posenc_sinusoidal_row(POSENC_SIN_VASWANI, 4, -1, -1, out, &err),
                     POSENC_EINVAL);
    posenc_sinusoidal_variant v;
    const char *names[] = { "vaswani", "t2t", "fairseq", "marian" };
    for (int i = 0; i < 4; i++) {
        assert_int_equal(posenc_sinusoidal_variant_parse(names[i], &v, NULL), POSENC_OK);
        assert_string_equal(posenc_sinusoidal_variant_name(v), names[i]);
    }
    assert_int_equal(posenc_sinusoidal_variant_parse("bert", &v, &err), POSENC_EINVAL);
}

static void test_sinusoidal_closed(void **state)
{
    (void)state;
    const posenc_sinusoidal_variant vs[] = { POSENC_SIN_VASWANI, POSENC_SIN_T2T,
                                             POSENC_SIN_FAIRSEQ, POSENC_SIN_MARIAN,
                                             POSENC_SIN_COS_SIN };
    const int ds[] = { 1, 2, 3, 4, 5, 6, 7, 16, 63, 512 };
    const int64_t ps[] = { 0, 1, 2, 3, 17, 100, 511, 1000, 4095 };
    double *out = malloc(512 * sizeof *out);
    for (size_t a = 0; a < sizeof vs / sizeof *vs; a++) {
        for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++) {
            int d = ds[b];
            posenc_sinusoidal *s;
            posenc_status st = posenc_sinusoidal_new(vs[a], d, 1, &s, NULL);
            if (vs[a] == POSENC_SIN_FAIRSEQ && d < 4) {
                assert_int_equal(st, POSENC_EINVAL);
                continue;
            }
            assert_int_equal(st, POSENC_OK);
            for (size_t c = 0; c < sizeof ps / sizeof ps[0]; c++) {
                posenc_sinusoidal_fill(s, ps[c], out);
                for (int j = 0; j < d; j++) {
                    /* the naive long double angle carries ~pos * 2^-64 of error itself */
                    double want = (double)closed(vs[a], d, ps[c], 1, j);
                    assert_close(out[j], want, 0, 2.3e-16 + (double)ps[c] * 2e-19);
                }
            }
            posenc_sinusoidal_free(s);
        }
    }
    free(out);
}

/* Large positions: sin^2 + cos^2 = 1 and the angle addition formula hold to double precision,
 * which a float32 or plain double angle would break. */
static void test_sinusoidal_large(void **state)
{
    (void)state;
    posenc_sinusoidal *s;
    assert_int_equal(posenc_sinusoidal_new(POSENC_SIN_T2T, 64, -1, &s, NULL), POSENC_OK);
    double r1[64], r2[64], r3[64];
    const int64_t a = 1234567, b = 7654321;
    posenc_sinusoidal_fill(s, a, r1);
    posenc_sinusoidal_fill(s, b, r2);
    posenc_sinusoidal_fill(s, a + b, r3);
    for (int k = 0; k < 32; k++) {
        assert_close(r1[k] * r1[k] + r1[32 + k] * r1[32 + k], 1.0, 0, 4e-16);
        /* sin(x + y) = sin x cos y + cos x sin y */
        long double want = (long double)r1[k] * r2[32 + k] + (long double)r1[32 + k] * r2[k];
        assert_close(r3[k], (double)want, 0, 6e-16);
    }
    /* frequency 1 at position 1e6: sin(1e6) known to 20 digits */
    posenc_sinusoidal_fill(s, 1000000, r1);
    assert_close(r1[0], -0.34999350217129295211765, 0, 1.2e-16);
    posenc_sinusoidal_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_slopes), cmocka_unit_test(test_mpt_slopes),
        cmocka_unit_test(test_falcon_slopes),    cmocka_unit_test(test_slopes_golden),
        cmocka_unit_test(test_alibi_rows),       cmocka_unit_test(test_falcon_rows),
        cmocka_unit_test(test_t5_golden),        cmocka_unit_test(test_t5_rules),
        cmocka_unit_test(test_shaw),             cmocka_unit_test(test_sinusoidal_known),
        cmocka_unit_test(test_sinusoidal_closed), cmocka_unit_test(test_sinusoidal_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
