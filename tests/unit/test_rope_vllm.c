/* test_rope_vllm.c: lib/runtimes/rope_vllm.c against closed forms. The class get_rope picks, the cache
 * length, base and mscale of vLLM's rotary classes (vllm-project/vllm,
 * vllm/model_executor/layers/rotary_embedding/) for published configs, evaluated here in long
 * double from the formulas in those files; the float32 cache rows themselves are checked bit for
 * bit against tests/golden/make_vllm_golden.py by tests/cli/t_gen_vllm.sh. */
#include <stdlib.h>
#include <string.h>

#include "posenc/posenc.h"
#include "testutil.h"

struct loaded {
    posenc_model *m;
    posenc_rope_config cfg;
};

static struct loaded load(const char *rel, const char *layer_type)
{
    char path[512];
    posenc_error err = { 0 };
    struct loaded l = { NULL, { 0 } };
    snprintf(path, sizeof path, "%s/configs/%s", tu_data_dir(), rel);
    if (posenc_config_load(path, NULL, &l.m, &err) != POSENC_OK)
        fail_msg("%s: %s", path, err.msg);
    if (posenc_model_rope(l.m, layer_type, &l.cfg, &err) != POSENC_OK)
        fail_msg("%s: %s", path, err.msg);
    return l;
}

static void vllm(const struct loaded *l, int64_t mml, posenc_rope_params *p, posenc_vllm_info *v)
{
    posenc_error err = { 0 };
    if (posenc_vllm_rope(&l->cfg, posenc_model_family(l->m), mml, p, v, &err) != POSENC_OK)
        fail_msg("%s", err.msg);
}

/* yarn_get_mscale(scale, mscale) */
static long double g(long double s, long double m)
{
    return s <= 1 ? 1.0L : 0.1L * m * logl(s) + 1.0L;
}

static void test_classes_and_lengths(void **state)
{
    (void)state;
    static const struct {
        const char *config, *layer_type, *cls;
        int64_t mml, cache_len, cache_rows, offset;
        int long_factors;
    } cases[] = {
        { "llama-3.1-8b.json", NULL, "Llama3RotaryEmbedding", 0, 131072, 131072, 0, 0 },
        { "gpt-oss-20b.json", NULL, "YaRNScalingRotaryEmbedding", 0, 131072, 131072, 0, 0 },
        { "deepseek-v3.json", NULL, "DeepseekScalingRotaryEmbedding", 0, 4096 * 40, 4096 * 40, 0,
          0 },
        { "kimi-k2-instruct.json", NULL, "DeepseekScalingRotaryEmbedding", 0, 4096 * 32,
          4096 * 32, 0, 0 },
        { "qwen3.5-27b.json", NULL, "MRotaryEmbedding", 0, 4 * 262144, 4 * 262144, 0, 0 },
        { "qwen3-8b.json", NULL, "RotaryEmbedding", 0, 40960, 40960, 0, 0 },
        { "extra/llama-dynamic.json", NULL, "DynamicNTKScalingRotaryEmbedding", 0, 8192, 8192, 0,
          0 },
        /* max_model_len 0: vLLM's default for LongRoPE, original_max_position_embeddings */
        { "extra/phi-3-mini-128k.json", NULL, "Phi3LongRoPEScaledRotaryEmbedding", 0, 4096,
          4096 + 131072, 0, 0 },
        { "extra/longchat-7b-16k-linear.json", NULL, "LinearScalingRotaryEmbedding", 0, 131072,
          131072, 0, 0 },
        { "gemma-4-26b-a4b.json", "full_attention", "Gemma4RotaryEmbedding", 0, 262144, 262144, 0,
          0 },
        { "extra/qwen2-vl-7b-yarn.json", NULL, "MRotaryEmbedding", 0, 4 * 32768 * 4,
          4 * 32768 * 4, 0, 0 },
        { "gemma-3-27b-it.json", "full_attention", "LinearScalingRotaryEmbedding", 0,
          131072 * 8, 131072 * 8, 0, 0 },
        { "extra/phi-3-mini-128k.json", NULL, "Phi3LongRoPEScaledRotaryEmbedding", 4096, 4096,
          4096 + 131072, 0, 0 },
        { "extra/phi-3-mini-128k.json", NULL, "Phi3LongRoPEScaledRotaryEmbedding", 4097, 131072,
          4096 + 131072, 4096, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct loaded l = load(cases[i].config, cases[i].layer_type);
        posenc_rope_params p;
        posenc_vllm_info v;
        vllm(&l, cases[i].mml, &p, &v);
        if (strcmp(v.cls, cases[i].cls) != 0)
            fail_msg("%s: class %s, expected %s", cases[i].config, v.cls, cases[i].cls);
        assert_int_equal(v.cache_len, cases[i].cache_len);
        assert_int_equal(v.cache_rows, cases[i].cache_rows);
        assert_int_equal(v.cache_offset, cases[i].offset);
        assert_int_equal(v.long_factors, cases[i].long_factors);
        int longrope = l.cfg.type == POSENC_ROPE_LONGROPE;
        assert_int_equal(v.max_model_len,
                         cases[i].mml         ? cases[i].mml
                         : longrope ? l.cfg.original_max_position_embeddings
                                    : l.cfg.max_position_embeddings);
        assert_non_null(strstr(v.source, "vllm/model_executor/layers/rotary_embedding/"));
        posenc_model_free(l.m);
    }
}

static void test_mscale_and_base(void **state)
{
    (void)state;
    posenc_rope_params p;
    posenc_vllm_info v;
    /* gpt-oss: no attention_factor, no mscale keys: yarn_get_mscale(32) */
    struct loaded l = load("gpt-oss-20b.json", NULL);
    vllm(&l, 0, &p, &v);
    assert_close(v.mscale, g(32, 1), 1e-15, 0);
    assert_true(p.attention_scaling_f32 == (float)g(32, 1));
    assert_int_equal(v.truncate, 0);
    posenc_model_free(l.m);
    /* DeepSeek-V3: mscale 1, mscale_all_dim 1: ratio 1; softmax scale g(40, 1)^2 */
    l = load("deepseek-v3.json", NULL);
    vllm(&l, 0, &p, &v);
    assert_close(v.mscale, 1.0, 0, 0);
    assert_close(p.softmax_scale, g(40, 1) * g(40, 1), 1e-15, 0);
    /* deepseek_yarn floors/ceils whatever the config says (get_rope passes no truncate) */
    posenc_rope_params p2;
    posenc_vllm_info v2;
    posenc_error err = { 0 };
    l.cfg.truncate = 0;
    assert_int_equal(posenc_vllm_rope(&l.cfg, posenc_model_family(l.m), 0, &p2, &v2, &err),
                     POSENC_OK);
    assert_int_equal(v2.truncate, 1);
    assert_memory_equal(p.inv_freq_f32, p2.inv_freq_f32, sizeof(float) * (size_t)p.n_freq);
    posenc_model_free(l.m);
    /* Phi-3: sqrt(1 + ln(131072 / 4096) / ln 4096) for short and long alike */
    l = load("extra/phi-3-mini-128k.json", NULL);
    vllm(&l, 4096, &p, &v);
    long double want = sqrtl(1.0L + logl(32.0L) / logl(4096.0L));
    assert_close(v.mscale, want, 1e-15, 0);
    for (int i = 0; i < p.n_freq; i++) { /* short factors: 1 / (ext * theta^(2i/d)) */
        float pw = (float)powl(10000.0L, (long double)((float)(2 * i) / (float)p.rotary_dim));
        assert_true(p.inv_freq_f32[i] == 1.0f / ((float)l.cfg.short_factor[i] * pw));
    }
    posenc_model_free(l.m);
    /* dynamic NTK: base fixed for max_len = M * factor: theta * (f^2 - f + 1)^(d / (d - 2)) */
    l = load("extra/llama-dynamic.json", NULL);
    vllm(&l, 0, &p, &v);
    long double base = 10000.0L * powl(3.0L, 128.0L / 126.0L);
    assert_close(v.base, base, 1e-14, 0);
    float bf = (float)v.base;
    for (int i = 0; i < p.n_freq; i++) {
        float e = (float)(2 * i) / 128.0f;
        float pw = (float)powl((long double)bf, (long double)e);
        assert_true(p.inv_freq_f32[i] == 1.0f / pw);
    }
    assert_close(p.attention_scaling, 1.0, 0, 0);
    posenc_model_free(l.m);
}

static void test_refusals(void **state)
{
    (void)state;
    posenc_rope_params p;
    posenc_vllm_info v;
    posenc_error err = { 0 };
    /* mrope with yarn: MRotaryEmbedding; with attention_factor (which the mrope.py posenc
     * follows does not take) refused, naming the class */
    struct loaded l = load("qwen3.5-27b.json", NULL);
    posenc_rope_config c = l.cfg;
    c.type = POSENC_ROPE_YARN;
    c.factor = 4.0;
    c.original_max_position_embeddings = 65536;
    c.truncate = 1; /* the parser's yarn default */
    if (posenc_vllm_rope(&c, "qwen3_5", 0, &p, &v, &err) != POSENC_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(v.cls, "MRotaryEmbedding");
    assert_int_equal(v.cache_len, 4 * 65536 * 4);
    c.has_attention_factor = 1;
    c.attention_factor = 1.2;
    assert_int_equal(posenc_vllm_rope(&c, "qwen3_5", 0, &p, &v, &err), POSENC_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "MRotaryEmbedding"));
    assert_int_equal(posenc_vllm_rope(NULL, "x", 0, &p, &v, &err), POSENC_EINVAL);
    assert_int_equal(posenc_vllm_rope(&l.cfg, "x", 0, &p, NULL, &err), POSENC_EINVAL);
    /* drift: past vLLM's cache is a range error, not a number */
    double d = -1;
    assert_int_equal(posenc_rope_drift(&l.cfg, "qwen3_5", POSENC_PREC_VLLM, 0, 4 * 262144, &d,
                                       &err), POSENC_ERANGE);
    assert_int_equal(posenc_rope_drift(&l.cfg, "qwen3_5", POSENC_PREC_VLLM, 0, 0, &d, &err),
                     POSENC_OK);
    assert_true(d <= 0x1p-24); /* position 0: cos 1, sin 0 up to the exact values' rounding */
    posenc_model_free(l.m);
}

static void test_params_for(void **state)
{
    (void)state;
    struct loaded l = load("llama-3.1-8b.json", NULL);
    posenc_rope_params a, b, c;
    posenc_vllm_info v;
    posenc_error err = { 0 };
    assert_int_equal(posenc_rope_params_compute(&l.cfg, 100, &a, &err), POSENC_OK);
    assert_int_equal(posenc_rope_params_for(&l.cfg, POSENC_PREC_HF, "llama", 100, 0, &b, &v, &err),
                     POSENC_OK);
    assert_memory_equal(a.inv_freq_f32, b.inv_freq_f32, sizeof(float) * (size_t)a.n_freq);
    assert_null(v.cls);
    /* vLLM's llama3 inv_freq is transformers' float32 expression (llama3_rope.py) */
    assert_int_equal(posenc_rope_params_for(&l.cfg, POSENC_PREC_VLLM, "llama", 100, 0, &c, &v, &err),
                     POSENC_OK);
    assert_memory_equal(a.inv_freq_f32, c.inv_freq_f32, sizeof(float) * (size_t)a.n_freq);
    assert_string_equal(v.cls, "Llama3RotaryEmbedding");
    posenc_precision pr;
    assert_int_equal(posenc_precision_parse("vllm", &pr, &err), POSENC_OK);
    assert_int_equal(pr, POSENC_PREC_VLLM);
    assert_string_equal(posenc_precision_name(POSENC_PREC_VLLM), "vllm");
    posenc_layout lay;
    assert_int_equal(posenc_layout_parse("vllm", &lay, &err), POSENC_OK);
    assert_int_equal(posenc_rope_table_width(&c, lay), c.rotary_dim);
    /* the vllm layout row is cat(cos, sin), written to both outputs */
    int64_t pos[2] = { 0, 77 };
    double *co = calloc(2 * (size_t)c.rotary_dim, sizeof *co);
    double *si = calloc(2 * (size_t)c.rotary_dim, sizeof *si);
    double cf[POSENC_MAX_FREQ], sf[POSENC_MAX_FREQ];
    assert_non_null(co);
    assert_non_null(si);
    assert_int_equal(posenc_rope_table(&c, POSENC_PREC_VLLM, lay, pos, 2, co, si, 1, &err),
                     POSENC_OK);
    posenc_rope_cossin(&c, POSENC_PREC_VLLM, 77, cf, sf);
    for (int i = 0; i < c.n_freq; i++) {
        assert_true(co[c.rotary_dim + i] == cf[i]);
        assert_true(co[c.rotary_dim + c.n_freq + i] == sf[i]);
        assert_true(si[c.rotary_dim + i] == cf[i]);
    }
    free(co);
    free(si);
    posenc_model_free(l.m);
}

static void test_runtime_table(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    size_t n = posenc_runtime_diff_count();
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++) {
        posenc_runtime_diff d;
        assert_int_equal(posenc_runtime_diff_get(i, &d, &err), POSENC_OK);
        assert_true(d.topic[0] && d.transformers[0] && d.vllm[0] && d.llamacpp[0]);
        assert_null(strstr(d.vllm, "/work"));
        assert_null(strstr(d.llamacpp, "/work"));
    }
    posenc_runtime_diff d;
    assert_int_equal(posenc_runtime_diff_get(n, &d, &err), POSENC_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_and_lengths),
        cmocka_unit_test(test_mscale_and_base),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_params_for),
        cmocka_unit_test(test_runtime_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
