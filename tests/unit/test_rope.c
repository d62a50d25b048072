/* test_rope.c: RoPE parameters, cos/sin and tables against independent references:
 * tests/data/golden/rope.json (transformers' float32 pipeline re-run in torch, and mpmath values
 * of the exact formulas; made by tests/golden/make_rope_golden.py) and long double closed forms. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"
#include "lib/core/mathx.h"
#include "lib/encodings/rope_step.h"
#include "posenc/config.h"
#include "posenc/cpu.h"
#include "posenc/rope.h"

/* ---------------------------------------------------------------------------------------------
 * helpers */

static posenc_rope_config base_config(posenc_rope_type type, double theta, int rotary_dim)
{
    posenc_rope_config c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.theta = theta;
    c.head_dim = c.rotary_dim = c.exponent_dim = rotary_dim;
    c.partial_rotary_factor = 1.0;
    c.style = POSENC_STYLE_NEOX;
    c.factor = 1.0;
    c.beta_fast = 32.0;
    c.beta_slow = 1.0;
    c.truncate = 1;
    c.max_position_embeddings = 4096;
    c.original_max_position_embeddings = 4096;
    return c;
}

static void compute_ok(const posenc_rope_config *c, int64_t seq_len, posenc_rope_params *p)
{
    posenc_error err = { 0 };
    posenc_status st = posenc_rope_params_compute(c, seq_len, p, &err);
    if (st != POSENC_OK)
        print_error("posenc_rope_params_compute: %s\n", err.msg);
    assert_int_equal(st, POSENC_OK);
}

static double ulpf(float x)
{
    float a = fabsf(x);
    return (double)nextafterf(a, INFINITY) - (double)a;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static double num(const cJSON *o, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static posenc_rope_type type_of(const char *s)
{
    static const char *names[] = { "default", "linear", "dynamic", "yarn",
                                   "longrope", "llama3", "proportional" };
    for (int i = 0; i < 7; i++)
        if (strcmp(s, names[i]) == 0)
            return (posenc_rope_type)i;
    fail_msg("unknown type %s", s);
    return POSENC_ROPE_DEFAULT;
}

/* The golden case as the posenc_rope_config model.c would fill. */
static posenc_rope_config config_of(const cJSON *k)
{
    const char *t = cJSON_GetObjectItemCaseSensitive(k, "type")->valuestring;
    posenc_rope_config c = base_config(type_of(t), num(k, "theta", 0),
                                       (int)num(k, "rotary_dim", 0));
    c.head_dim = (int)num(k, "head_dim", c.rotary_dim);
    c.exponent_dim = (int)num(k, "exponent_dim", c.rotary_dim);
    c.partial_rotary_factor = num(k, "prf", 1.0);
    c.factor = num(k, "factor", c.type == POSENC_ROPE_LONGROPE ? 0.0 : 1.0);
    c.max_position_embeddings = (int64_t)num(k, "M", 4096);
    c.original_max_position_embeddings = (int64_t)num(k, "M0", (double)c.max_position_embeddings);
    c.low_freq_factor = num(k, "low", 0);
    c.high_freq_factor = num(k, "high", 0);
    c.beta_fast = num(k, "beta_fast", 32);
    c.beta_slow = num(k, "beta_slow", 1);
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(k, "truncate");
    c.truncate = tr ? cJSON_IsTrue(tr) : 1;
    c.mscale = num(k, "mscale", 0);
    c.mscale_all_dim = num(k, "mscale_all_dim", 0);
    const cJSON *af = cJSON_GetObjectItemCaseSensitive(k, "attention_factor");
    c.has_attention_factor = cJSON_IsNumber(af);
    c.attention_factor = c.has_attention_factor ? af->valuedouble : 0.0;
    c.softmax_mscale = (int)num(k, "softmax_mscale", 0);
    const cJSON *sf = cJSON_GetObjectItemCaseSensitive(k, "short_factor");
    const cJSON *lf = cJSON_GetObjectItemCaseSensitive(k, "long_factor");
    if (sf && lf) {
        c.n_short_factor = cJSON_GetArraySize(sf);
        c.n_long_factor = cJSON_GetArraySize(lf);
        for (int i = 0; i < c.n_short_factor; i++)
            c.short_factor[i] = cJSON_GetArrayItem(sf, i)->valuedouble;
        for (int i = 0; i < c.n_long_factor; i++)
            c.long_factor[i] = cJSON_GetArrayItem(lf, i)->valuedouble;
    }
    return c;
}

/* ---------------------------------------------------------------------------------------------
 * golden: every rope type, both precisions */

static void test_golden(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/golden/rope.json", tu_data_dir());
    char *text = read_text(path);
    if (!text)
        fail_msg("cannot read %s", path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
    assert_true(cJSON_GetArraySize(cases) >= 20);
    int torch_ulp_diffs = 0, torch_checked = 0, far_checked = 0;
    const cJSON *k;
    cJSON_ArrayForEach(k, cases)
    {
        const char *name = cJSON_GetObjectItemCaseSensitive(k, "name")->valuestring;
        posenc_rope_config c = config_of(k);
        posenc_rope_params p;
        compute_ok(&c, (int64_t)num(k, "seq_len", 0), &p);
        int n = p.n_freq;
        const cJSON *inv_cr = cJSON_GetObjectItemCaseSensitive(k, "inv_cr");
        const cJSON *inv_t = cJSON_GetObjectItemCaseSensitive(k, "inv_torch");
        const cJSON *inv_ex = cJSON_GetObjectItemCaseSensitive(k, "inv_exact");
        assert_int_equal(cJSON_GetArraySize(inv_cr), n);
        for (int i = 0; i < n; i++) {
            float cr = (float)cJSON_GetArrayItem(inv_cr, i)->valuedouble;
            float tv = inv_t ? (float)cJSON_GetArrayItem(inv_t, i)->valuedouble : cr;
            /* hf: exactly transformers' pipeline with correctly rounded pow */
            if (p.inv_freq_f32[i] != cr)
                fail_msg("%s: inv_freq_f32[%d] = %.9g, expected %.9g", name, i,
                         p.inv_freq_f32[i], cr);
            /* and within 1 ulp of torch's (Sleef pow is faithful only) */
            assert_close(p.inv_freq_f32[i], tv, 0, ulpf(tv) * 1.0001);
            torch_ulp_diffs += p.inv_freq_f32[i] != tv;
            /* exact: double-double against mpmath (long double parse, 2^-63 relative) */
            long double ex = strtold(cJSON_GetArrayItem(inv_ex, i)->valuestring, NULL);
            long double mine = (long double)p.inv_hi[i] + (long double)p.inv_lo[i];
            if (fabsl(mine - ex) > 4e-19L * fabsl(ex))
                fail_msg("%s: exact inv[%d] = %.21Lg, expected %.21Lg", name, i, mine, ex);
            assert_true(fabs(p.inv_lo[i]) <= 0.5 * (nextafter(fabs(p.inv_hi[i]), INFINITY) -
                                                    fabs(p.inv_hi[i])));
        }
        assert_close(p.attention_scaling, num(k, "attention_scaling", -1), 1e-15, 0);
        assert_true(p.attention_scaling_f32 == (float)p.attention_scaling);
        assert_close(p.softmax_scale, num(k, "softmax_scale", -1), 1e-15, 0);
        assert_int_equal(p.long_factors, (int)num(k, "long_factors", -1));

        /* exact at far positions (up to 2^35): still within ~1 ulp of double */
        const cJSON *far = cJSON_GetObjectItemCaseSensitive(k, "far_positions");
        for (int r = 0; far && r < cJSON_GetArraySize(far); r++) {
            int64_t pp = (int64_t)cJSON_GetArrayItem(far, r)->valuedouble;
            const cJSON *fc = cJSON_GetObjectItemCaseSensitive(k, "far_cos_exact");
            const cJSON *fs = cJSON_GetObjectItemCaseSensitive(k, "far_sin_exact");
            const cJSON *fi = cJSON_GetObjectItemCaseSensitive(k, "freq_index");
            double ce[POSENC_MAX_FREQ], se[POSENC_MAX_FREQ];
            posenc_rope_cossin(&p, POSENC_PREC_EXACT, pp, ce, se);
            for (int j = 0; j < cJSON_GetArraySize(fi); j++) {
                int i = cJSON_GetArrayItem(fi, j)->valueint;
                assert_close(ce[i], cJSON_GetArrayItem(cJSON_GetArrayItem(fc, r), j)->valuedouble,
                             0, 3.4e-16);
                assert_close(se[i], cJSON_GetArrayItem(cJSON_GetArrayItem(fs, r), j)->valuedouble,
                             0, 3.4e-16);
                far_checked++;
            }
        }

        const cJSON *pos = cJSON_GetObjectItemCaseSensitive(k, "positions");
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(k, "freq_index");
        const cJSON *ccr = cJSON_GetObjectItemCaseSensitive(k, "cos_cr");
        const cJSON *scr = cJSON_GetObjectItemCaseSensitive(k, "sin_cr");
        const cJSON *cex = cJSON_GetObjectItemCaseSensitive(k, "cos_exact");
        const cJSON *sex = cJSON_GetObjectItemCaseSensitive(k, "sin_exact");
        const cJSON *cto = cJSON_GetObjectItemCaseSensitive(k, "cos_torch");
        const cJSON *sto = cJSON_GetObjectItemCaseSensitive(k, "sin_torch");
        double att = p.attention_scaling;
        for (int r = 0; r < cJSON_GetArraySize(pos); r++) {
            int64_t pp = (int64_t)cJSON_GetArrayItem(pos, r)->valuedouble;
            double ch[POSENC_MAX_FREQ], sh[POSENC_MAX_FREQ], ce[POSENC_MAX_FREQ],
                se[POSENC_MAX_FREQ];
            posenc_rope_cossin(&p, POSENC_PREC_HF, pp, ch, sh);
            posenc_rope_cossin(&p, POSENC_PREC_EXACT, pp, ce, se);
            for (int j = 0; j < cJSON_GetArraySize(idx); j++) {
                int i = cJSON_GetArrayItem(idx, j)->valueint;
                double tc = cJSON_GetArrayItem(cJSON_GetArrayItem(ccr, r), j)->valuedouble;
                double ts = cJSON_GetArrayItem(cJSON_GetArrayItem(scr, r), j)->valuedouble;
                /* same f32 angle; torch's cos/sin are within 1 ulp, ours correctly rounded:
                 * well inside the 2.4e-7 required below position 8192, at every position.
                 * Where inv_torch == inv_cr (most cases) these are transformers' tables. */
                assert_close(ch[i], (float)tc, 0, 2.4e-7 * att);
                assert_close(sh[i], (float)ts, 0, 2.4e-7 * att);
                assert_true(ch[i] == (double)(float)ch[i]); /* hf values are float32 */
                double xc = cJSON_GetArrayItem(cJSON_GetArrayItem(cex, r), j)->valuedouble;
                double xs = cJSON_GetArrayItem(cJSON_GetArrayItem(sex, r), j)->valuedouble;
                assert_close(ce[i], xc, 0, 3.4e-16 * att);
                assert_close(se[i], xs, 0, 3.4e-16 * att);
                if (cto) {
                    /* transformers' actual tables: where Sleef's pow is 1 ulp off, the angle
                     * moves by p * |d inv| plus one rounding of the angle (torch's CPU pow is Sleef's faithful powf) */
                    float ti = (float)cJSON_GetArrayItem(inv_t, i)->valuedouble;
                    double dinv = fabs((double)p.inv_freq_f32[i] - (double)ti);
                    double tol = 2.4e-7 * att;
                    if (dinv != 0.0)
                        tol += att * ((double)pp * dinv + ulpf(ti * (float)pp));
                    double uc = cJSON_GetArrayItem(cJSON_GetArrayItem(cto, r), j)->valuedouble;
                    double us = cJSON_GetArrayItem(cJSON_GetArrayItem(sto, r), j)->valuedouble;
                    assert_close(ch[i], (float)uc, 0, tol);
                    assert_close(sh[i], (float)us, 0, tol);
                    torch_checked++;
                }
            }
        }
    }
    assert_true(far_checked > 0);
    /* the golden set does contain Sleef's 1-ulp pow cases, so the 1-ulp allowance is exercised */
    assert_true(torch_ulp_diffs > 0 && torch_checked > 0);
    cJSON_Delete(root);
}

/* ---------------------------------------------------------------------------------------------
 * exact: long double closed form, 1 ulp of float32 up to 2^20 */

/* cos/sin(p * theta^(-2i/d)) in long double: the angle as a long double product and an explicit
 * Cody-Waite reduction by 2pi (first part with 37 significant bits, so k * TP1 is exact). */
static void ref_cossin(long double theta, int i, int d, int64_t p, long double *c, long double *s)
{
    const long double TP1 = 0x1.921fb5444p+2L; /* 2pi to 37 bits: k * TP1 exact for k < 2^27 */
    const long double TWO_PI = 6.283185307179586476925286766559005768L;
    const long double TP2 = TWO_PI - TP1;
    long double inv = powl(theta, -(long double)(2 * i) / d);
    long double a = (long double)p * inv;
    long double k = nearbyintl(a / TWO_PI);
    long double r = (a - k * TP1) - k * TP2;
    *c = cosl(r);
    *s = sinl(r);
}

static void test_exact_closed_form(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_DEFAULT, 5e5, 128);
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    int64_t fixed[] = { 0, 1, 4095, 131071, 131072, 262143, 1048575 };
    int64_t positions[64];
    size_t np = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        positions[np++] = fixed[i];
    srand(12345);
    while (np < 64)
        positions[np++] = ((int64_t)rand() << 8 ^ rand()) % 1048576;
    double worst = 0;
    for (size_t r = 0; r < np; r++) {
        double ce[64], se[64];
        posenc_rope_cossin(&p, POSENC_PREC_EXACT, positions[r], ce, se);
        for (int i = 0; i < 64; i++) {
            long double rc, rs;
            ref_cossin(5e5L, i, 128, positions[r], &rc, &rs);
            float fc = (float)ce[i], fs = (float)se[i], gc = (float)rc, gs = (float)rs;
            /* rounded once to float: at most 1 ulp apart (equal unless at a midpoint) */
            assert_close(fc, gc, 0, ulpf(gc) * 1.0001);
            assert_close(fs, gs, 0, ulpf(gs) * 1.0001);
            /* and the doubles agree to the reference's own accuracy (~|angle| * 2^-63) */
            double tol = 1e-17 + (double)positions[r] * 3e-19;
            assert_close(ce[i], (double)rc, 0, tol);
            assert_close(se[i], (double)rs, 0, tol);
            if (fabs(ce[i] - (double)rc) > worst)
                worst = fabs(ce[i] - (double)rc);
        }
    }
    assert_true(worst < 1e-12);
}

/* The far end of the position range (up to 2^48 - 1) against mpmath at 300 bits
 * (tests/data/golden/rope_far.txt, made by tests/golden/make_rope_far_golden.py): the exact
 * tables round to the correctly rounded float32 and are within 1e-15 in double. */
static float f32_from_hex(const char *h)
{
    uint32_t u = (uint32_t)strtoul(h, NULL, 16);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_exact_far(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/golden/rope_far.txt", tu_data_dir());
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot read %s", path);
    char line[512], cs[80], ss[80], ch[16], sh[16];
    double theta, factor, worst = 0;
    int d, i, n = 0;
    long long pos;
    while (fgets(line, sizeof line, fp)) {
        assert_int_equal(sscanf(line, "%lf %d %lf %d %lld %79s %79s %15s %15s", &theta, &d,
                                &factor, &i, &pos, cs, ss, ch, sh),
                         9);
        posenc_rope_config c = base_config(factor == 1 ? POSENC_ROPE_DEFAULT : POSENC_ROPE_LINEAR,
                                           theta, d);
        c.factor = factor;
        posenc_rope_params p;
        compute_ok(&c, 0, &p);
        double ce[POSENC_MAX_FREQ], se[POSENC_MAX_FREQ];
        posenc_rope_cossin(&p, POSENC_PREC_EXACT, (int64_t)pos, ce, se);
        double xc = strtod(cs, NULL), xs = strtod(ss, NULL);
        if (fabs(ce[i] - xc) > worst)
            worst = fabs(ce[i] - xc);
        if (fabs(se[i] - xs) > worst)
            worst = fabs(se[i] - xs);
        assert_close(ce[i], xc, 0, 1e-15);
        assert_close(se[i], xs, 0, 1e-15);
        assert_true((float)ce[i] == f32_from_hex(ch));
        assert_true((float)se[i] == f32_from_hex(sh));
        n++;
    }
    fclose(fp);
    assert_int_equal(n, 190);
    assert_true(worst < 3e-16);
}

/* transformers' float32 tables drift at long positions: at 131072 (d 128, theta 5e5) the hf
 * values differ from the exact ones by more than 1e-3, while exact stays within 1 ulp. */
static void test_hf_drift(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_DEFAULT, 5e5, 128);
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    double ch[64], sh[64], ce[64], se[64];
    posenc_rope_cossin(&p, POSENC_PREC_HF, 131072, ch, sh);
    posenc_rope_cossin(&p, POSENC_PREC_EXACT, 131072, ce, se);
    double worst = 0;
    for (int i = 0; i < 64; i++) {
        worst = fmax(worst, fmax(fabs(ch[i] - ce[i]), fabs(sh[i] - se[i])));
        long double rc, rs;
        ref_cossin(5e5L, i, 128, 131072, &rc, &rs);
        assert_close((float)ce[i], (float)rc, 0, ulpf((float)rc) * 1.0001);
    }
    assert_true(worst > 1e-3);
    assert_true(worst < 2e-2);
}

/* ---------------------------------------------------------------------------------------------
 * kernels */

/* Correct rounding of float32 cos/sin: every float in [1024, 1536) and a strided sample of
 * [2^-20, 2^24), against cosl/sinl rounded once. */
static void check_f32_range(uint32_t lo_bits, uint32_t hi_bits, uint32_t stride)
{
    enum { B = 4096 };
    float x[B], c[B], s[B];
    uint32_t b = lo_bits;
    while (b < hi_bits) {
        size_t n = 0;
        for (; n < B && b < hi_bits; n++, b += stride)
            memcpy(&x[n], &b, sizeof b);
        pe_mathx_cossin_f32_row(x, n, c, s);
        for (size_t i = 0; i < n; i++) {
            float rc = (float)cosl((long double)x[i]), rs = (float)sinl((long double)x[i]);
            if (c[i] != rc || s[i] != rs)
                fail_msg("x = %a: cos %a sin %a, expected %a %a", (double)x[i], (double)c[i],
                         (double)s[i], (double)rc, (double)rs);
        }
    }
}

static void test_f32_cossin_correctly_rounded(void **state)
{
    (void)state;
    float one = 1024.0f, two = 1536.0f, lo = 0x1p-20f, hi = 0x1p24f;
    uint32_t a, b, l, h;
    memcpy(&a, &one, 4);
    memcpy(&b, &two, 4);
    memcpy(&l, &lo, 4);
    memcpy(&h, &hi, 4);
    check_f32_range(a, b, 1); /* exhaustive on half a binade: 2^22 values */
    check_f32_range(l, h, 211);
    float special[] = { 0.0f, -0.0f, 1e-30f, 0x1p-140f, 3.14159274f, 1.5707964f, 1e30f };
    /* alone (a short row: the scalar rounding) and each in a full row of 64 ordinary values
     * (the SIMD paths round a row of 64 at once when none needs more than a cast) */
    float c[64], s[64], x[64];
    pe_mathx_cossin_f32_row(special, 7, c, s);
    for (int i = 0; i < 7; i++) {
        assert_true(c[i] == (float)cosl((long double)special[i]));
        assert_true(s[i] == (float)sinl((long double)special[i]));
    }
    assert_true(signbit(s[1]));
    for (int k = 0; k < 7; k++) {
        for (int i = 0; i < 64; i++)
            x[i] = 0.37f * (float)(i + 1);
        x[5 * k + 3] = special[k];
        pe_mathx_cossin_f32_row(x, 64, c, s);
        for (int i = 0; i < 64; i++) {
            float rc = (float)cosl((long double)x[i]), rs = (float)sinl((long double)x[i]);
            if (memcmp(&c[i], &rc, 4) != 0 || memcmp(&s[i], &rs, 4) != 0)
                fail_msg("x = %a in a row of 64: cos %a sin %a, expected %a %a", (double)x[i],
                         (double)c[i], (double)s[i], (double)rc, (double)rs);
        }
    }
}

/* powf_cr against mpmath-free closed forms: exact powers and powl rounded once. */
static void test_powf(void **state)
{
    (void)state;
    assert_true(pe_mathx_powf_cr(10000.0f, 0.5f) == 100.0f);
    assert_true(pe_mathx_powf_cr(16.0f, 0.25f) == 2.0f);
    assert_true(pe_mathx_powf_cr(5e5f, 0.0f) == 1.0f);
    int diff = 0;
    for (int d = 8; d <= 256; d *= 2) {
        for (int i = 0; i < d / 2; i++) {
            float e = (float)(2 * i) / (float)d;
            float mine = pe_mathx_powf_cr(500000.0f, e);
            long double ref = powl(500000.0L, (long double)e);
            assert_close(mine, (double)ref, 0, ulpf(mine) * 0.5 + 1e-20 * (double)ref);
            diff += mine != (float)ref;
        }
    }
    assert_int_equal(diff, 0);
    /* double-double exp/log round trip */
    pe_dd l = pe_mathx_dd_log(dd_from_d(123456.789));
    pe_dd e = pe_mathx_dd_exp(l);
    assert_close(e.hi, 123456.789, 0, 0);
    assert_true(fabs(e.lo) < 1e-20);
}

/* The AVX2, AVX-512 and portable kernels perform the same operations: bitwise equal. The
 * positions past 2^48 put angles past the fast path's limit in some lanes of a block. */
static void test_simd_matches_portable(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_YARN, 1e4, 64);
    c.factor = 40;
    c.original_max_position_embeddings = 4096;
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    int64_t pos[] = { 0, 1, 7, 4095, 131072, 262143, 1048575, 2147483647LL,
                      1LL << 45, (1LL << 48) - 1, 1LL << 50 };
    int compared = 0;
    posenc_cpu_path was = posenc_cpu_active();
    for (int path = POSENC_CPU_AVX2; path <= POSENC_CPU_AVX512; path++) {
        if (posenc_cpu_set((posenc_cpu_path)path, NULL) != POSENC_OK)
            continue; /* not on this machine */
        for (size_t r = 0; r < sizeof pos / sizeof pos[0]; r++) {
            double c1[32], s1[32], c2[32], s2[32];
            compared += pe_mathx_simd(1);
            pe_mathx_sincos_row(p.inv_hi, p.inv_lo, 31, (double)pos[r], c1, s1);
            pe_mathx_simd(0);
            pe_mathx_sincos_row(p.inv_hi, p.inv_lo, 31, (double)pos[r], c2, s2);
            pe_mathx_simd(-1);
            assert_memory_equal(c1, c2, sizeof(double) * 31);
            assert_memory_equal(s1, s2, sizeof(double) * 31);
            for (int i = 0; i < 31; i++)
                assert_close(c1[i] * c1[i] + s1[i] * s1[i], 1.0, 0, 4e-16);
        }
    }
    assert_int_equal(posenc_cpu_set(was, NULL), POSENC_OK);
    if (!compared)
        print_message("no SIMD row kernel on this machine: nothing compared\n");
}

/* pe_mathx_step_row_f32 keeps a value only when every double within its bound (2^-46, times
 * |a| above 1) rounds to one float: a product on a float rounding midpoint, or within 2^-47 of
 * one, goes to bad[]; 2^-40 away it is kept, rounded. The planted value walks every lane of
 * the SIMD blocks and the scalar tail, on every path; a non-finite scaling sends every index. */
static void test_step_row_midpoints(void **state)
{
    (void)state;
    enum { N = 19 };
    const double mid = 0.75 + 0x1p-25; /* halfway between the floats 0.75 and 0.75 + 2^-24 */
    const struct {
        double cd, a;
        int sure;
        float want;
    } cases[] = {
        { mid, 1.0, 0, 0 },
        { mid + 0x1p-47, 1.0, 0, 0 },
        { mid - 0x1p-47, 1.0, 0, 0 },
        { mid + 0x1p-40, 1.0, 1, 0.75f + 0x1p-24f },
        { mid - 0x1p-40, 1.0, 1, 0.75f },
        { mid / 1.5 + 0x1p-48, 1.5, 0, 0 }, /* |a| > 1 widens the bound: 1.5 * 2^-48 ... */
        { mid / 1.5 + 0x1p-40, 1.5, 1, 0.75f + 0x1p-24f },
        { 0x1p-60, 1.0, 0, 0 }, /* a bound wider than the value: both signs in reach */
    };
    posenc_cpu_path was = posenc_cpu_active();
    for (int path = POSENC_CPU_BASELINE; path <= POSENC_CPU_AVX512; path++) {
        if (posenc_cpu_set((posenc_cpu_path)path, NULL) != POSENC_OK)
            continue;
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            for (int at = 0; at < N; at++) {
                double ca[N], sa[N], cd[N], sd[N];
                float c[N], sn[N];
                uint16_t bad[N];
                for (int i = 0; i < N; i++) { /* (cos, sin) = (0.5, 0.25) elsewhere: sure */
                    ca[i] = 1.0;
                    sa[i] = 0.0;
                    cd[i] = 0.5;
                    sd[i] = 0.25;
                }
                cd[at] = cases[k].cd; /* the cosine; the sine stays 0.25 */
                size_t nb = pe_mathx_step_row_f32(ca, sa, cd, sd, N, cases[k].a, c, sn, bad);
                if (cases[k].a == 1.0)
                    for (int i = 0; i < N; i++)
                        if (i != at) {
                            assert_true(c[i] == 0.5f);
                            assert_true(sn[i] == 0.25f);
                        }
                if (cases[k].sure) {
                    assert_int_equal(nb, 0);
                    if (c[at] != cases[k].want)
                        fail_msg("path %s case %zu lane %d: %a, want %a",
                                 posenc_cpu_name((posenc_cpu_path)path), k, at, (double)c[at],
                                 (double)cases[k].want);
                } else {
                    if (nb != 1 || bad[0] != at)
                        fail_msg("path %s case %zu lane %d: %zu values sent back, want lane %d",
                                 posenc_cpu_name((posenc_cpu_path)path), k, at, nb, at);
                }
            }
        double one[3] = { 1, 1, 1 }, zero[3] = { 0, 0, 0 };
        float c[3], sn[3];
        uint16_t bad[3];
        assert_int_equal(pe_mathx_step_row_f32(one, zero, one, zero, 3, NAN, c, sn, bad), 3);
        assert_int_equal(pe_mathx_step_row_f32(one, zero, one, zero, 3, INFINITY, c, sn, bad), 3);
        assert_int_equal(bad[2], 2);
    }
    assert_int_equal(posenc_cpu_set(was, NULL), POSENC_OK);
}

/* pe_rope_table_f32 (the float32 gen tables of the exact precision, by steps) holds, value for
 * value, the floats of posenc_rope_table's doubles: every layout, default, YaRN (attention
 * scaling 1.5) and proportional RoPE (192 zero frequencies), a run of positions, one ending at
 * 2^31 - 1, and a scattered array, on 1 and 3 threads; the step rows only ever replace full
 * ones, so any difference is the steps'. */
static void test_table_f32_steps(void **state)
{
    (void)state;
    enum { N = 700 };
    static int64_t pos[N];
    static double cd[N * 512], sd[N * 512];
    static float cf[N * 512], sf[N * 512];
    posenc_rope_config cfgs[3] = { base_config(POSENC_ROPE_DEFAULT, 5e5, 128),
                                   base_config(POSENC_ROPE_YARN, 1e4, 64),
                                   base_config(POSENC_ROPE_PROPORTIONAL, 1e6, 512) };
    cfgs[1].factor = 4;
    cfgs[1].has_attention_factor = 1;
    cfgs[1].attention_factor = 1.5;
    cfgs[2].partial_rotary_factor = 0.25;
    const posenc_layout layouts[] = { POSENC_LAYOUT_HF, POSENC_LAYOUT_HALF, POSENC_LAYOUT_VLLM,
                                      POSENC_LAYOUT_INTERLEAVED };
    posenc_error err = { 0 };
    size_t checked = 0;
    for (int ci = 0; ci < 3; ci++) {
        posenc_rope_params p;
        compute_ok(&cfgs[ci], 0, &p);
        for (int pm = 0; pm < 3; pm++) {
            for (int r = 0; r < N; r++)
                pos[r] = pm == 0   ? r
                         : pm == 1 ? INT32_MAX - (N - 1) + r
                                   : (int64_t)(r * 7919) % 100003 + (r % 9 == 0 ? r : 0);
            for (size_t li = 0; li < sizeof layouts / sizeof *layouts; li++) {
                int w = posenc_rope_table_width(&p, layouts[li]);
                assert_int_equal(posenc_rope_table(&p, POSENC_PREC_EXACT, layouts[li], pos, N,
                                                   cd, sd, 1, &err),
                                 POSENC_OK);
                assert_int_equal(pe_rope_table_f32(&p, layouts[li], pos, N, cf, sf,
                                                   1 + 2 * (pm == 2), NULL, &err),
                                 POSENC_OK);
                for (size_t k = 0; k < (size_t)N * (size_t)w; k++) {
                    float c = (float)cd[k], sn = (float)sd[k];
                    if (memcmp(&c, &cf[k], 4) != 0 || memcmp(&sn, &sf[k], 4) != 0)
                        fail_msg("config %d positions %d layout %zu: row %zu column %zu: (%a, "
                                 "%a), want (%a, %a)",
                                 ci, pm, li, k / (size_t)w, k % (size_t)w, (double)cf[k],
                                 (double)sf[k], (double)c, (double)sn);
                }
                checked += (size_t)N * (size_t)w;
            }
        }
        /* refusals as posenc_rope_table's */
        int64_t bad = -1;
        assert_int_equal(pe_rope_table_f32(&p, POSENC_LAYOUT_HF, &bad, 1, cf, sf, 1, NULL, &err),
                         POSENC_EINVAL);
        assert_int_equal(pe_rope_table_f32(&p, POSENC_LAYOUT_HF, pos, 0, cf, sf, 1, NULL, &err),
                         POSENC_OK);
    }
    assert_true(checked > 3000000);
}

/* ---------------------------------------------------------------------------------------------
 * parameters of real models */

static void test_llama31(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_LLAMA3, 5e5, 128);
    c.factor = 8;
    c.low_freq_factor = 1;
    c.high_freq_factor = 4;
    c.original_max_position_embeddings = 8192;
    c.max_position_embeddings = 131072;
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    int low = 0, high = 0, mid = 0;
    for (int i = 0; i < 64; i++) {
        long double inv = powl(5e5L, -(long double)(2 * i) / 128);
        long double wl = 2 * 3.14159265358979323846L / inv;
        long double got = (long double)p.inv_hi[i] + p.inv_lo[i];
        if (wl < 8192.0L / 4) { /* high frequency: unchanged */
            assert_close((double)got, (double)inv, 1e-15, 0);
            high++;
        } else if (wl > 8192.0L) { /* low frequency: / factor */
            assert_close((double)got, (double)(inv / 8), 1e-15, 0);
            low++;
        } else { /* smooth blend: s = (8192 / wl - 1) / 3 */
            long double s = (8192.0L / wl - 1) / 3;
            assert_close((double)got, (double)((1 - s) * inv / 8 + s * inv), 1e-15, 0);
            mid++;
        }
    }
    assert_true(low > 0 && high > 0 && mid > 0);
    assert_true(p.attention_scaling == 1.0 && p.softmax_scale == 1.0);
}

/* Llama-4 Scout: low_freq_factor == high_freq_factor == 1, factor 16: no medium band, no NaN. */
static void test_llama4_scout(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_LLAMA3, 5e5, 128);
    c.factor = 16;
    c.low_freq_factor = c.high_freq_factor = 1;
    c.original_max_position_embeddings = 8192;
    c.max_position_embeddings = 10485760;
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    for (int i = 0; i < 64; i++) {
        long double inv = powl(5e5L, -(long double)(2 * i) / 128);
        long double wl = 2 * 3.14159265358979323846L / inv;
        long double want = wl > 8192 ? inv / 16 : inv;
        assert_close(p.inv_hi[i], (double)want, 1e-15, 0);
        assert_true(isfinite(p.inv_freq_f32[i]));
        assert_close(p.inv_freq_f32[i], (double)want, 2e-7, 0);
    }
}

static void test_yarn_models(void **state)
{
    (void)state;
    /* DeepSeek-V3: mscale == mscale_all_dim -> attention 1; softmax (1 + 0.1 ln 40)^2 */
    posenc_rope_config c = base_config(POSENC_ROPE_YARN, 1e4, 64);
    c.factor = 40;
    c.mscale = c.mscale_all_dim = 1;
    c.softmax_mscale = 1;
    c.original_max_position_embeddings = 4096;
    c.max_position_embeddings = 163840;
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    assert_true(p.attention_scaling == 1.0);
    double g = 1 + 0.1 * log(40.0);
    assert_close(p.softmax_scale, g * g, 1e-15, 0);
    assert_close(p.softmax_scale, 1.8739, 0, 5e-5);
    /* extrapolated (high) frequencies unchanged, interpolated (low) ones / 40:
     * low = floor(cd(32)) = 10, high = ceil(cd(1)) = 23 for d 64, theta 1e4, M0 4096 */
    for (int i = 0; i < 32; i++) {
        long double inv = powl(1e4L, -(long double)(2 * i) / 64);
        long double ramp = i <= 10 ? 0 : i >= 23 ? 1 : (i - 10) / 13.0L;
        long double want = inv / 40 * ramp + inv * (1 - ramp);
        assert_close(p.inv_hi[i], (double)want, 1e-17, 0);
    }

    /* GPT-OSS: truncate false, attention 0.1 ln 32 + 1 */
    c = base_config(POSENC_ROPE_YARN, 150000, 64);
    c.factor = 32;
    c.truncate = 0;
    c.original_max_position_embeddings = 4096;
    compute_ok(&c, 0, &p);
    assert_close(p.attention_scaling, 0.1 * log(32.0) + 1, 1e-16, 0);
    assert_close(p.attention_scaling, 1.3466, 0, 1e-4);
    assert_true(p.softmax_scale == 1.0);
    {
        /* fractional ramp bounds */
        long double lo = 64 * logl(4096 / (32 * 2 * 3.14159265358979323846L)) / (2 * logl(150000));
        long double hi = 64 * logl(4096 / (1 * 2 * 3.14159265358979323846L)) / (2 * logl(150000));
        for (int i = 0; i < 32; i++) {
            long double inv = powl(150000.0L, -(long double)(2 * i) / 64);
            long double ramp = (i - lo) / (hi - lo);
            ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
            assert_close(p.inv_hi[i], (double)(inv / 32 * ramp + inv * (1 - ramp)), 1e-17, 0);
        }
    }

    /* Kimi-K2: beta_fast = beta_slow = 1: correction range [19, 20] */
    c = base_config(POSENC_ROPE_YARN, 50000, 64);
    c.factor = 32;
    c.beta_fast = c.beta_slow = 1;
    c.mscale = c.mscale_all_dim = 1;
    c.softmax_mscale = 1;
    c.original_max_position_embeddings = 4096;
    compute_ok(&c, 0, &p);
    for (int i = 0; i < 32; i++) {
        long double inv = powl(50000.0L, -(long double)(2 * i) / 64);
        long double want = i <= 19 ? inv : inv / 32;
        assert_close(p.inv_hi[i], (double)want, 1e-15, 0);
    }
    g = 1 + 0.1 * log(32.0);
    assert_close(p.softmax_scale, g * g, 1e-15, 0);
    assert_close(p.softmax_scale, 1.8133, 0, 1e-4);

    /* low == high after clamping (truncate false, equal betas): high += 0.001, a step ramp */
    c = base_config(POSENC_ROPE_YARN, 1e4, 32);
    c.factor = 8;
    c.truncate = 0;
    c.beta_fast = c.beta_slow = 2;
    c.original_max_position_embeddings = 2048;
    compute_ok(&c, 0, &p);
    long double cd = 32 * logl(2048 / (2 * 2 * 3.14159265358979323846L)) / (2 * logl(1e4L));
    for (int i = 0; i < 16; i++) {
        long double inv = powl(1e4L, -(long double)(2 * i) / 32);
        long double ramp = (i - cd) / 0.001L;
        ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
        assert_close(p.inv_hi[i], (double)(inv / 8 * ramp + inv * (1 - ramp)), 1e-15, 0);
    }
}

static void test_longrope_switch(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_LONGROPE, 1e4, 8);
    c.max_position_embeddings = 131072;
    c.original_max_position_embeddings = 4096;
    c.factor = 0; /* not given: M / M0 = 32 */
    c.n_short_factor = c.n_long_factor = 4;
    for (int i = 0; i < 4; i++) {
        c.short_factor[i] = 1.0 + 0.1 * i;
        c.long_factor[i] = 2.0 + i;
    }
    posenc_rope_params p;
    int64_t lens[] = { 0, 1, 4095, 4096, 4097, 100000 };
    for (size_t k = 0; k < 6; k++) {
        compute_ok(&c, lens[k], &p);
        int want_long = lens[k] > 4096; /* strict */
        assert_int_equal(p.long_factors, want_long);
        for (int i = 0; i < 4; i++) {
            double f = want_long ? c.long_factor[i] : c.short_factor[i];
            long double inv = powl(1e4L, -(long double)(2 * i) / 8) / f;
            assert_close(p.inv_hi[i], (double)inv, 1e-15, 0);
        }
        /* applied to short sequences too */
        assert_close(p.attention_scaling, sqrt(1 + log(32.0) / log(4096.0)), 1e-15, 0);
    }
    c.has_attention_factor = 1;
    c.attention_factor = 1.19;
    compute_ok(&c, 0, &p);
    assert_true(p.attention_scaling == 1.19);
    assert_true(p.attention_scaling_f32 == 1.19f);
    c.has_attention_factor = 0;
    c.factor = 0.5; /* <= 1: no scaling */
    compute_ok(&c, 0, &p);
    assert_true(p.attention_scaling == 1.0);
}

static void test_dynamic(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_DYNAMIC, 1e4, 64);
    c.factor = 4;
    c.max_position_embeddings = 2048;
    posenc_rope_params p0, pM, pL;
    compute_ok(&c, 0, &p0);
    compute_ok(&c, 2048, &pM);
    compute_ok(&c, 8192, &pL);
    assert_true(p0.theta_used == 1e4 && pM.theta_used == 1e4);
    assert_memory_equal(p0.inv_hi, pM.inv_hi, sizeof p0.inv_hi);
    assert_memory_equal(p0.inv_freq_f32, pM.inv_freq_f32, sizeof p0.inv_freq_f32);
    /* above M: theta * (4 * 8192 / 2048 - 3)^(64/62) = theta * 13^(32/31) */
    long double th = 1e4L * powl(13.0L, 64.0L / 62.0L);
    assert_close(pL.theta_used, (double)th, 1e-15, 0);
    for (int i = 0; i < 32; i++) {
        long double inv = powl(th, -(long double)(2 * i) / 64);
        assert_close(pL.inv_hi[i], (double)inv, 2e-16, 0);
        assert_close(pL.inv_freq_f32[i], (double)inv, 3e-7, 0);
        if (i > 0)
            assert_true(pL.inv_hi[i] < p0.inv_hi[i]);
    }
}

/* Gemma-4 full attention: head_dim 512, prf 0.25, theta 1e6 -> 64 live pairs, then 192 zeros
 * (cos 1, sin 0 at every position). */
static void test_proportional(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_PROPORTIONAL, 1e6, 512);
    c.partial_rotary_factor = 0.25;
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    assert_int_equal(p.n_freq, 256);
    for (int i = 0; i < 256; i++) {
        if (i < 64) {
            long double inv = powl(1e6L, -(long double)(2 * i) / 512);
            assert_close(p.inv_hi[i], (double)inv, 1e-15, 0);
            assert_true(p.inv_freq_f32[i] > 0);
        } else {
            assert_true(p.inv_hi[i] == 0 && p.inv_lo[i] == 0 && p.inv_freq_f32[i] == 0);
        }
    }
    for (int prec = 0; prec < 2; prec++) {
        double cs[256], sn[256];
        posenc_rope_cossin(&p, (posenc_precision)prec, 123457, cs, sn);
        for (int i = 64; i < 256; i++)
            assert_true(cs[i] == 1.0 && sn[i] == 0.0);
        assert_true(sn[1] != 0.0);
    }
}

/* ---------------------------------------------------------------------------------------------
 * layouts, threads, mrope */

static void test_layouts(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_YARN, 1e4, 16);
    c.factor = 4;
    c.has_attention_factor = 1;
    c.attention_factor = 1.5;
    c.original_max_position_embeddings = 64;
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    assert_int_equal(posenc_rope_table_width(&p, POSENC_LAYOUT_HF), 16);
    assert_int_equal(posenc_rope_table_width(&p, POSENC_LAYOUT_HALF), 8);
    assert_int_equal(posenc_rope_table_width(&p, POSENC_LAYOUT_INTERLEAVED), 16);
    int64_t pos[5] = { 0, 3, 4095, 8191, 70000 };
    for (int prec = 0; prec < 2; prec++) {
        double hc[5 * 16], hs[5 * 16], fc[5 * 8], fs[5 * 8], ic[5 * 16], is[5 * 16];
        assert_int_equal(posenc_rope_table(&p, prec, POSENC_LAYOUT_HF, pos, 5, hc, hs, 1, NULL), 0);
        assert_int_equal(posenc_rope_table(&p, prec, POSENC_LAYOUT_HALF, pos, 5, fc, fs, 2, NULL), 0);
        assert_int_equal(
            posenc_rope_table(&p, prec, POSENC_LAYOUT_INTERLEAVED, pos, 5, ic, is, 3, NULL), 0);
        for (int r = 0; r < 5; r++) {
            double c1[8], s1[8];
            posenc_rope_cossin(&p, prec, pos[r], c1, s1);
            for (int i = 0; i < 8; i++) {
                assert_true(fc[r * 8 + i] == c1[i] && fs[r * 8 + i] == s1[i]);
                assert_true(hc[r * 16 + i] == c1[i] && hc[r * 16 + 8 + i] == c1[i]);
                assert_true(hs[r * 16 + i] == s1[i] && hs[r * 16 + 8 + i] == s1[i]);
                assert_true(ic[r * 16 + 2 * i] == c1[i] && ic[r * 16 + 2 * i + 1] == c1[i]);
                assert_true(is[r * 16 + 2 * i] == s1[i] && is[r * 16 + 2 * i + 1] == s1[i]);
            }
        }
        /* attention scaling applied: position 0 gives cos = 1.5, sin = 0 */
        assert_true(fc[0] == 1.5 && fs[0] == 0.0);
    }
}

static void test_threads(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_DEFAULT, 1e7, 64);
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    size_t n = 5000;
    int64_t *pos = malloc(n * sizeof *pos);
    double *a = malloc(n * 64 * sizeof *a), *b = malloc(n * 64 * sizeof *b);
    double *a2 = malloc(n * 64 * sizeof *a), *b2 = malloc(n * 64 * sizeof *b);
    assert_true(pos && a && b && a2 && b2);
    for (size_t i = 0; i < n; i++)
        pos[i] = (int64_t)(i * 977 % 262144);
    for (int prec = 0; prec < 2; prec++) {
        assert_int_equal(posenc_rope_table(&p, prec, POSENC_LAYOUT_HF, pos, n, a, b, 1, NULL), 0);
        assert_int_equal(posenc_rope_table(&p, prec, POSENC_LAYOUT_HF, pos, n, a2, b2, 7, NULL), 0);
        assert_memory_equal(a, a2, n * 64 * sizeof *a);
        assert_memory_equal(b, b2, n * 64 * sizeof *b);
    }
    free(pos);
    free(a);
    free(b);
    free(a2);
    free(b2);
}

static void test_mrope(void **state)
{
    (void)state;
    /* Qwen3.5: head_dim 256, prf 0.25 -> rotary 64, sections [11, 11, 10], interleaved */
    posenc_rope_config c = base_config(POSENC_ROPE_DEFAULT, 1e7, 64);
    c.head_dim = 256;
    c.n_mrope_section = 3;
    c.mrope_section[0] = 11;
    c.mrope_section[1] = 11;
    c.mrope_section[2] = 10;
    c.mrope_interleaved = 1;
    posenc_rope_params p;
    compute_ok(&c, 0, &p);
    assert_int_equal(p.mrope, 1);
    static const unsigned char qwen35[32] = { 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0,
                                              1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1 };
    assert_memory_equal(p.mrope_axis, qwen35, 32);
    int count[3] = { 0 };
    for (int i = 0; i < 32; i++)
        count[p.mrope_axis[i]]++;
    assert_true(count[0] == 11 && count[1] == 11 && count[2] == 10);
    int64_t pos3[3] = { 100, 7, 33 };
    for (int prec = 0; prec < 2; prec++) {
        double c3[32], s3[32], ca[3][32], sa[3][32];
        posenc_rope_cossin3(&p, prec, pos3, c3, s3);
        for (int a = 0; a < 3; a++)
            posenc_rope_cossin(&p, prec, pos3[a], ca[a], sa[a]);
        for (int i = 0; i < 32; i++) {
            assert_true(c3[i] == ca[p.mrope_axis[i]][i]);
            assert_true(s3[i] == sa[p.mrope_axis[i]][i]);
        }
    }

    /* Qwen2-VL: head_dim 128, sections [16, 24, 24], contiguous */
    c = base_config(POSENC_ROPE_DEFAULT, 1e6, 128);
    c.n_mrope_section = 3;
    c.mrope_section[0] = 16;
    c.mrope_section[1] = 24;
    c.mrope_section[2] = 24;
    compute_ok(&c, 0, &p);
    for (int i = 0; i < 64; i++)
        assert_int_equal(p.mrope_axis[i], i < 16 ? 0 : i < 40 ? 1 : 2);
    /* text-only positions (all axes equal) give the 1-D values */
    int64_t same[3] = { 4242, 4242, 4242 };
    double c1[64], s1[64], c2[64], s2[64];
    posenc_rope_cossin3(&p, POSENC_PREC_EXACT, same, c1, s1);
    posenc_rope_cossin(&p, POSENC_PREC_EXACT, 4242, c2, s2);
    assert_memory_equal(c1, c2, sizeof c1);
    assert_memory_equal(s1, s2, sizeof s1);

    /* no mrope: cossin3 uses pos3[0] */
    c.n_mrope_section = 0;
    compute_ok(&c, 0, &p);
    assert_int_equal(p.mrope, 0);
    posenc_rope_cossin3(&p, POSENC_PREC_HF, pos3, c1, s1);
    posenc_rope_cossin(&p, POSENC_PREC_HF, 100, c2, s2);
    assert_memory_equal(c1, c2, sizeof c1);
}

/* ---------------------------------------------------------------------------------------------
 * names and errors */

static void test_names(void **state)
{
    (void)state;
    posenc_precision pr;
    posenc_layout l;
    posenc_error err = { 0 };
    assert_int_equal(posenc_precision_parse("hf", &pr, NULL), 0);
    assert_int_equal(pr, POSENC_PREC_HF);
    assert_int_equal(posenc_precision_parse("exact", &pr, NULL), 0);
    assert_int_equal(pr, POSENC_PREC_EXACT);
    assert_int_equal(posenc_precision_parse("fast", &pr, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "'fast'"));
    assert_string_equal(posenc_precision_name(POSENC_PREC_HF), "hf");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(posenc_layout_parse(posenc_layout_name((posenc_layout)i), &l, NULL), 0);
        assert_int_equal(l, i);
    }
    assert_int_equal(posenc_layout_parse("neox", &l, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "'neox'"));
    assert_null(strchr(err.msg, '\n'));
}

static void expect_err(const posenc_rope_config *c, int64_t seq_len, posenc_status code,
                       const char *needle)
{
    posenc_rope_params p;
    posenc_error err = { 0 };
    posenc_status st = posenc_rope_params_compute(c, seq_len, &p, &err);
    if (st != code || !strstr(err.msg, needle))
        fail_msg("status %d message '%s', expected %d with '%s'", st, err.msg, code, needle);
    assert_null(strchr(err.msg, '\n'));
}

static void test_errors(void **state)
{
    (void)state;
    posenc_rope_config c = base_config(POSENC_ROPE_DEFAULT, 1e4, 64);
    c.rotary_dim = 63;
    expect_err(&c, 0, POSENC_ECONFIG, "rotary dimension 63");
    c.rotary_dim = 0;
    expect_err(&c, 0, POSENC_ECONFIG, "rotary dimension 0");
    c.rotary_dim = c.head_dim = 2048;
    expect_err(&c, 0, POSENC_ECONFIG, "rotary dimension 2048");
    c = base_config(POSENC_ROPE_DEFAULT, 0, 64);
    expect_err(&c, 0, POSENC_ECONFIG, "rope_theta");
    c.theta = NAN;
    expect_err(&c, 0, POSENC_ECONFIG, "rope_theta");
    c = base_config(POSENC_ROPE_DEFAULT, 1e4, 64);
    expect_err(&c, -1, POSENC_EINVAL, "sequence length -1");
    c.head_dim = 32;
    expect_err(&c, 0, POSENC_ECONFIG, "head_dim 32");
    c = base_config(POSENC_ROPE_LINEAR, 1e4, 64);
    c.factor = 0;
    expect_err(&c, 0, POSENC_ECONFIG, "linear: factor");
    c = base_config(POSENC_ROPE_YARN, 1e4, 64);
    c.factor = -2;
    expect_err(&c, 0, POSENC_ECONFIG, "yarn: factor");
    c = base_config(POSENC_ROPE_LONGROPE, 1e4, 8);
    c.n_short_factor = 4;
    c.n_long_factor = 3;
    for (int i = 0; i < 4; i++)
        c.short_factor[i] = c.long_factor[i] = 1;
    expect_err(&c, 0, POSENC_ECONFIG, "need 4 entries");
    c.n_long_factor = 4;
    c.long_factor[2] = 0;
    expect_err(&c, 0, POSENC_ECONFIG, "long_factor[2]");
    c = base_config(POSENC_ROPE_LLAMA3, 1e4, 64);
    c.factor = 8;
    expect_err(&c, 0, POSENC_ECONFIG, "low_freq_factor");
    c = base_config(POSENC_ROPE_DYNAMIC, 1e4, 2);
    c.factor = 2;
    expect_err(&c, 0, POSENC_ECONFIG, "exceed 2");
    c = base_config(POSENC_ROPE_DEFAULT, 1e4, 64);
    c.n_mrope_section = 3;
    c.mrope_section[0] = 16;
    c.mrope_section[1] = 8;
    c.mrope_section[2] = 8;
    c.mrope_section[0] = 10;
    expect_err(&c, 0, POSENC_ECONFIG, "sums to 26");
    c.n_mrope_section = 2;
    expect_err(&c, 0, POSENC_ECONFIG, "mrope_section has 2");

    posenc_rope_params p;
    c = base_config(POSENC_ROPE_DEFAULT, 1e4, 8);
    compute_ok(&c, 0, &p);
    int64_t pos[2] = { 5, -3 };
    double out_c[16], out_s[16];
    posenc_error err = { 0 };
    assert_int_equal(posenc_rope_table(&p, POSENC_PREC_EXACT, POSENC_LAYOUT_HF, pos, 2, out_c,
                                       out_s, 1, &err),
                     POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "position -3"));
    assert_int_equal(posenc_rope_table(&p, POSENC_PREC_EXACT, (posenc_layout)9, pos, 1, out_c,
                                       out_s, 1, &err),
                     POSENC_EINVAL);
    assert_int_equal(posenc_rope_table(&p, POSENC_PREC_EXACT, POSENC_LAYOUT_HF, pos, 0, NULL,
                                       NULL, 1, &err),
                     POSENC_OK);
    assert_int_equal(posenc_rope_params_compute(NULL, 0, &p, &err), POSENC_EINVAL);
}

/* posenc_rope_config_new and posenc_rope_params_new (for programs built without
 * POSENC_STATIC_LINKING_ONLY) give what posenc_model_rope and posenc_rope_params_compute fill
 * in place, and the accessors read the fields; on failure *out is left alone. A partial
 * rotary yarn config, so that head_dim, rotary_dim and attention_scaling tell fields apart. */
static void test_by_pointer(void **state)
{
    (void)state;
    static const char json[] =
        "{\"model_type\": \"gpt_neox\", \"hidden_size\": 512, \"num_attention_heads\": 8, "
        "\"rotary_pct\": 0.25, \"max_position_embeddings\": 8192, \"rope_scaling\": "
        "{\"rope_type\": \"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 2048}}";
    posenc_error err = { 0 };
    posenc_model *m = NULL;
    if (posenc_config_parse(json, strlen(json), "neox.json", NULL, &m, &err) != POSENC_OK)
        print_error("%s\n", err.msg);
    assert_non_null(m);

    posenc_rope_config want_c, *c = NULL;
    assert_int_equal(posenc_model_rope(m, NULL, &want_c, &err), POSENC_OK);
    assert_int_equal(posenc_rope_config_new(m, NULL, &c, &err), POSENC_OK);
    assert_non_null(c);
    assert_memory_equal(c, &want_c, sizeof want_c); /* both copies of the model's own */

    posenc_rope_params want, *p = NULL;
    compute_ok(&want_c, 0, &want);
    assert_int_equal(posenc_rope_params_new(c, 0, &p, &err), POSENC_OK);
    assert_non_null(p);
    assert_int_equal(posenc_rope_params_type(p), POSENC_ROPE_YARN);
    assert_int_equal(posenc_rope_params_style(p), POSENC_STYLE_NEOX);
    assert_int_equal(posenc_rope_params_head_dim(p), 64);
    assert_int_equal(posenc_rope_params_rotary_dim(p), 16);
    assert_true(posenc_rope_params_attention_scaling(p) == want.attention_scaling);
    assert_true(want.attention_scaling > 1.1); /* 0.1 ln 4 + 1 */
    assert_int_equal(p->n_freq, 8);
    assert_memory_equal(p->inv_hi, want.inv_hi, sizeof want.inv_hi[0] * 8);
    assert_memory_equal(p->inv_lo, want.inv_lo, sizeof want.inv_lo[0] * 8);
    assert_memory_equal(p->inv_freq_f32, want.inv_freq_f32, sizeof want.inv_freq_f32[0] * 8);

    /* failures leave *out alone */
    posenc_rope_params *p2 = p;
    assert_int_equal(posenc_rope_params_new(NULL, 0, &p2, &err), POSENC_EINVAL);
    assert_ptr_equal(p2, p);
    posenc_rope_config *c2 = c;
    assert_int_equal(posenc_rope_config_new(m, "no_such_layer", &c2, &err), POSENC_ENOTFOUND);
    assert_ptr_equal(c2, c);
    posenc_model *g = NULL;
    static const char gpt2[] = "{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_head\": 4}";
    assert_int_equal(posenc_config_parse(gpt2, strlen(gpt2), "gpt2.json", NULL, &g, &err),
                     POSENC_OK);
    assert_int_equal(posenc_rope_config_new(g, NULL, &c2, &err), POSENC_EINVAL);
    assert_ptr_equal(c2, c);

    posenc_rope_params_free(p);
    posenc_rope_config_free(c);
    posenc_rope_params_free(NULL);
    posenc_rope_config_free(NULL);
    posenc_model_free(g);
    posenc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_exact_closed_form),
        cmocka_unit_test(test_exact_far),
        cmocka_unit_test(test_hf_drift),
        cmocka_unit_test(test_f32_cossin_correctly_rounded),
        cmocka_unit_test(test_powf),
        cmocka_unit_test(test_simd_matches_portable),
        cmocka_unit_test(test_llama31),
        cmocka_unit_test(test_llama4_scout),
        cmocka_unit_test(test_yarn_models),
        cmocka_unit_test(test_longrope_switch),
        cmocka_unit_test(test_dynamic),
        cmocka_unit_test(test_proportional),
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_step_row_midpoints),
        cmocka_unit_test(test_table_f32_steps),
        cmocka_unit_test(test_mrope),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_by_pointer),
    };
    return cmocka_run_group_tests_name("rope", tests, NULL, NULL);
}
