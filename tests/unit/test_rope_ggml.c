/* test_rope_ggml.c: lib/encodings/rope_ggml.c, llama.cpp's CPU RoPE numerics, against closed forms in long
 * double and against the rules of ggml-org/llama.cpp ggml/src/ggml-cpu/ops.cpp and ggml/src/ggml.c.
 * The bit-for-bit comparison with the real ggml is tests/cli/t_interop_ggml.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/posenc.h"
#include "testutil.h"

static posenc_ggml_rope neox(int n_dims, float base)
{
    posenc_ggml_rope g;
    memset(&g, 0, sizeof g);
    g.mode = POSENC_GGML_ROPE_NEOX;
    g.n_dims = g.head_dim = n_dims;
    g.n_ctx_orig = 4096;
    g.freq_base = base;
    g.freq_scale = 1.0f;
    g.attn_factor = 1.0f;
    g.beta_fast = 32.0f;
    g.beta_slow = 1.0f;
    return g;
}

/* default RoPE: ggml's float32 values stay within its drift of the exact ones at 0..63 (the
 * float32 theta accumulation; about 1e-5 for head_dim 128) and are exact for frequency 0 */
static void test_closed_form(void **state)
{
    (void)state;
    posenc_ggml_rope g = neox(128, 500000.0f);
    double c[64], s[64], worst = 0;
    for (int64_t p = 0; p < 64; p++) {
        int64_t p3[3] = { p, p, p };
        posenc_ggml_rope_cossin(&g, p3, c, s);
        assert_true(c[0] == (double)cosf((float)p) && s[0] == (double)sinf((float)p));
        for (int i = 0; i < 64; i++) {
            long double a = (long double)p * powl(500000.0L, -(long double)(2 * i) / 128.0L);
            double e = fabs(c[i] - (double)cosl(a)) + fabs(s[i] - (double)sinl(a));
            if (e > worst)
                worst = e;
        }
    }
    assert_true(worst > 1e-7 && worst < 3e-5); /* float32 drift: present, and small */
}

/* the angles accumulate by float32 multiplication: theta_{i+1} = f32(theta_i * theta_scale) */
static void test_accumulation(void **state)
{
    (void)state;
    posenc_ggml_rope g = neox(64, 10000.0f);
    double ang[32];
    int64_t p3[3] = { 131071, 131071, 131071 };
    posenc_ggml_rope_angles(&g, p3, ang);
    float scale = powf(10000.0f, -2.0f / 64), t = 131071.0f;
    for (int i = 0; i < 32; i++) {
        assert_true(ang[i] == (double)t);
        t *= scale;
    }
}

/* freq_factors divide the angle in float32 (llama3 rope_freqs, LongRoPE) */
static void test_freq_factors(void **state)
{
    (void)state;
    posenc_ggml_rope g = neox(64, 10000.0f), h;
    double a0[32], a1[32];
    int64_t p3[3] = { 4097, 4097, 4097 };
    posenc_ggml_rope_angles(&g, p3, a0);
    h = g;
    h.n_freq_factors = 32;
    for (int i = 0; i < 32; i++)
        h.freq_factors[i] = 1.0f + (float)i / 7.0f;
    posenc_ggml_rope_angles(&h, p3, a1);
    for (int i = 0; i < 32; i++)
        assert_true(a1[i] == (double)((float)a0[i] / h.freq_factors[i]));
}

/* YaRN (gpt-oss-20b: 64 dims, base 150000, factor 32, original context 4096): ggml's corr dims
 * are floor(8.09) = 8 and ceil(17.4) = 18 (ggml_rope_yarn_corr_dims); below 8 the angle is
 * extrapolated (unscaled), from 18 on interpolated (times freq_scale); mscale = attn_factor *
 * (1 + 0.1 ln 32) */
static void test_yarn(void **state)
{
    (void)state;
    posenc_ggml_rope g = neox(64, 150000.0f), plain;
    g.freq_scale = 1.0f / 32;
    g.ext_factor = 1.0f;
    g.attn_factor = 0.75f;
    plain = neox(64, 150000.0f);
    double a[32], a0[32];
    int64_t p3[3] = { 1000, 1000, 1000 };
    posenc_ggml_rope_angles(&g, p3, a);
    posenc_ggml_rope_angles(&plain, p3, a0);
    long double lo = 64 * logl(4096.0L / (32 * 2 * 3.14159265358979323846L)) / (2 * logl(150000.0L));
    long double hi = 64 * logl(4096.0L / (1 * 2 * 3.14159265358979323846L)) / (2 * logl(150000.0L));
    assert_int_equal((int)floorl(lo), 8);
    assert_int_equal((int)ceill(hi), 18);
    for (int i = 0; i < 32; i++) {
        if (i <= 8)
            assert_true(a[i] == a0[i]);
        else if (i >= 18)
            assert_true(a[i] == (double)((float)a0[i] * (1.0f / 32)));
        else
            assert_true(a[i] < a0[i] && a[i] > a0[i] / 32);
    }
    assert_close(posenc_ggml_rope_mscale(&g), 0.75 * (1 + 0.1 * log(32.0)), 1e-6, 0);
    double c[32], s[32];
    posenc_ggml_rope_cossin(&g, p3, c, s);
    for (int i = 0; i < 32; i++)
        assert_close(hypot(c[i], s[i]), 0.75 * (1 + 0.1 * log(32.0)), 1e-6, 0);
}

/* M-RoPE: each frequency takes the t, h or w angle by ggml's sections */
static void test_mrope_axes(void **state)
{
    (void)state;
    posenc_ggml_rope g = neox(128, 1000000.0f);
    g.mode = POSENC_GGML_ROPE_MROPE;
    g.sections[0] = 16, g.sections[1] = 24, g.sections[2] = 24;
    int64_t p3[3] = { 500, 300, 200 }, pt[3] = { 500, 500, 500 }, ph[3] = { 300, 300, 300 },
            pw[3] = { 200, 200, 200 };
    double a[64], at[64], ah[64], aw[64];
    posenc_ggml_rope_angles(&g, p3, a);
    posenc_ggml_rope_angles(&g, pt, at);
    posenc_ggml_rope_angles(&g, ph, ah);
    posenc_ggml_rope_angles(&g, pw, aw);
    for (int i = 0; i < 64; i++)
        assert_true(a[i] == (i < 16 ? at[i] : i < 40 ? ah[i] : aw[i]));
    /* interleaved (Qwen3.5: 11 11 10 over 32 frequencies): h at i % 3 == 1, w at i % 3 == 2 */
    g = neox(64, 10000000.0f);
    g.head_dim = 256;
    g.mode = POSENC_GGML_ROPE_IMROPE;
    g.sections[0] = 11, g.sections[1] = 11, g.sections[2] = 10;
    posenc_ggml_rope_angles(&g, p3, a);
    posenc_ggml_rope_angles(&g, pt, at);
    posenc_ggml_rope_angles(&g, ph, ah);
    posenc_ggml_rope_angles(&g, pw, aw);
    for (int i = 0; i < 32; i++)
        assert_true(a[i] == (i % 3 == 1 ? ah[i] : i % 3 == 2 ? aw[i] : at[i]));
    /* Qwen3-VL (24 20 20 over 64): frequencies 61 and 62 fall past 3 * 20 and take ggml's
     * fourth angle, whose position llama.cpp sets to 0 for text tokens (angle 0, cos 1) */
    g = neox(128, 5000000.0f);
    g.mode = POSENC_GGML_ROPE_IMROPE;
    g.sections[0] = 24, g.sections[1] = 20, g.sections[2] = 20;
    posenc_ggml_rope_angles(&g, pt, a);
    assert_true(a[61] == 0.0 && a[62] == 0.0 && a[60] > 0.0 && a[63] > 0.0);
}

static void test_params(void **state)
{
    (void)state;
    posenc_precision pr;
    assert_int_equal(posenc_precision_parse("ggml", &pr, NULL), POSENC_OK);
    assert_int_equal(pr, POSENC_PREC_GGML);
    assert_string_equal(posenc_precision_name(POSENC_PREC_GGML), "ggml");
    posenc_rope_params *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->type = POSENC_ROPE_DEFAULT;
    p->style = POSENC_STYLE_NEOX;
    p->head_dim = p->rotary_dim = 64;
    p->n_freq = 32;
    p->attention_scaling = 1.0;
    /* without llama.cpp's arguments the ggml precision refuses, or gives NaN, never numbers */
    double c[32], s[32], tc[64], ts[64];
    int64_t pos = 5;
    posenc_rope_cossin(p, POSENC_PREC_GGML, 5, c, s);
    assert_true(isnan(c[0]) && isnan(s[31]));
    posenc_error err = { 0 };
    assert_int_equal(posenc_rope_table(p, POSENC_PREC_GGML, POSENC_LAYOUT_HF, &pos, 1, tc, ts, 1,
                                       &err), POSENC_EINVAL);
    posenc_ggml_rope g = neox(64, 10000.0f), b;
    b = g, b.n_dims = 32;
    assert_int_equal(posenc_rope_params_set_ggml(p, &b, &err), POSENC_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "rotates 32 dims where the config rotates 64"));
    b = g, b.mode = POSENC_GGML_ROPE_VISION;
    assert_int_equal(posenc_rope_params_set_ggml(p, &b, &err), POSENC_EUNSUPPORTED);
    b = g, b.mode = POSENC_GGML_ROPE_NONE;
    assert_int_equal(posenc_rope_params_set_ggml(p, &b, &err), POSENC_EUNSUPPORTED);
    b = g, b.n_freq_factors = 16;
    assert_int_equal(posenc_rope_params_set_ggml(p, &b, &err), POSENC_EUNSUPPORTED);
    b = g, b.n_freq_factors = 32;
    assert_int_equal(posenc_rope_params_set_ggml(p, &b, &err), POSENC_EUNSUPPORTED); /* zeros */
    b = g, b.mode = POSENC_GGML_ROPE_MROPE;
    assert_int_equal(posenc_rope_params_set_ggml(p, &b, &err), POSENC_EUNSUPPORTED); /* no sections */
    int64_t q3[3] = { 3, 3, 3 };
    posenc_ggml_rope_cossin(&b, q3, c, s); /* M-RoPE without sections: NaN, not numbers */
    assert_true(isnan(c[0]) && isnan(s[31]));
    b = g, b.mode = POSENC_GGML_ROPE_VISION;
    posenc_ggml_rope_cossin(&b, q3, c, s);
    assert_true(isnan(c[0]) && isnan(s[31]));
    b = g, b.freq_base = NAN;
    assert_int_equal(posenc_rope_params_set_ggml(p, &b, &err), POSENC_EUNSUPPORTED);
    assert_int_equal(p->has_ggml, 0);
    assert_int_equal(posenc_rope_params_set_ggml(p, &g, &err), POSENC_OK);
    assert_int_equal(p->has_ggml, 1);
    /* the table rows are ggml's values in the chosen layout */
    assert_int_equal(posenc_rope_table(p, POSENC_PREC_GGML, POSENC_LAYOUT_HF, &pos, 1, tc, ts, 1,
                                       &err), POSENC_OK);
    int64_t p3[3] = { 5, 5, 5 };
    posenc_ggml_rope_cossin(&g, p3, c, s);
    for (int i = 0; i < 32; i++)
        assert_true(tc[i] == c[i] && tc[32 + i] == c[i] && ts[i] == s[i] && ts[32 + i] == s[i]);
    free(p);
}

/* llama.cpp's arguments from a Gemma 3 GGUF attached per layer type: sliding layers get
 * freq_base_swa and scale 1, global ones (and NULL, as posenc_rope_params_ggml_gguf) freq_base and
 * the linear scale */
static void test_params_gguf_layer(void **state)
{
    (void)state;
    posenc_gguf_rope *g = calloc(1, sizeof *g);
    posenc_rope_params *p = calloc(1, sizeof *p);
    assert_non_null(g);
    assert_non_null(p);
    snprintf(g->arch, sizeof g->arch, "gemma3");
    g->context_length = 131072;
    g->embedding_length = 1024;
    g->head_count = 4;
    g->key_length = 256;
    g->freq_base = 1e6;
    g->freq_base_swa = 1e4;
    snprintf(g->scaling_type, sizeof g->scaling_type, "linear");
    g->scaling_factor = 8;
    g->sliding_window = 512;
    g->has = POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_EMBEDDING_LENGTH | POSENC_GGUF_HEAD_COUNT |
             POSENC_GGUF_KEY_LENGTH | POSENC_GGUF_FREQ_BASE | POSENC_GGUF_FREQ_BASE_SWA |
             POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR | POSENC_GGUF_SLIDING_WINDOW;
    p->type = POSENC_ROPE_DEFAULT;
    p->style = POSENC_STYLE_NEOX;
    p->head_dim = p->rotary_dim = 256;
    p->n_freq = 128;
    p->attention_scaling = 1.0;
    posenc_error err = { 0 };
    assert_int_equal(posenc_rope_params_ggml_gguf_layer(p, g, 4096, "sliding_attention", &err),
                     POSENC_OK);
    assert_true(p->has_ggml && p->ggml.freq_base == 1e4f && p->ggml.freq_scale == 1.0f);
    assert_int_equal(posenc_rope_params_ggml_gguf_layer(p, g, 4096, "full_attention", &err),
                     POSENC_OK);
    assert_true(p->ggml.freq_base == 1e6f && p->ggml.freq_scale == 0.125f);
    p->has_ggml = 0;
    assert_int_equal(posenc_rope_params_ggml_gguf(p, g, 4096, &err), POSENC_OK);
    assert_true(p->has_ggml && p->ggml.freq_base == 1e6f && p->ggml.freq_scale == 0.125f);
    assert_int_equal(posenc_rope_params_ggml_gguf_layer(p, g, 4096, "chunked", &err),
                     POSENC_EINVAL);
    free(g);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_form), cmocka_unit_test(test_accumulation),
        cmocka_unit_test(test_freq_factors), cmocka_unit_test(test_yarn),
        cmocka_unit_test(test_mrope_axes), cmocka_unit_test(test_params),
        cmocka_unit_test(test_params_gguf_layer),
    };
    return cmocka_run_group_tests_name("rope_ggml", tests, NULL, NULL);
}
