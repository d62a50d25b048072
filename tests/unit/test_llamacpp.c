/* test_llamacpp.c: llama.cpp's view of RoPE (lib/runtimes/llamacpp.c, lib/runtimes/llamacpp_check.c).
 *
 * posenc_ggml_rope_from_gguf on hand-made key sets, against closed forms read from
 * ggml-org/llama.cpp: the defaults of load_hparams (src/llama-model.cpp: freq_base 10000, n_rot
 * = head size, freq_scale = 1 / factor, n_ctx_orig_yarn = context_length), the cparams rules of
 * src/llama-context.cpp (ext_factor 1 for yarn, else 0; attn_factor = get_mscale(...) / (1 + 0.1
 * ln factor) times rope.scaling.attn_factor), DeepSeek-V2's yarn_log_multiplier / 0.1 and kq_scale
 * (src/models/deepseek2.cpp), get_rope_factors' long/short choice; posenc_gguf_rope_from_model on
 * small configs (what conversion/MODEL.py writes, worked out by hand); and posenc_gguf_compare. The
 * converter itself is driven in tests/cli/t_gguf_verify.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/config.h"
#include "posenc/llamacpp.h"

static posenc_gguf_rope *base(const char *arch)
{
    posenc_gguf_rope *g = calloc(1, sizeof *g);
    assert_non_null(g);
    snprintf(g->arch, sizeof g->arch, "%s", arch);
    g->context_length = 8192;
    g->embedding_length = 4096;
    g->head_count = 32;
    g->has = POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_EMBEDDING_LENGTH | POSENC_GGUF_HEAD_COUNT;
    return g;
}

static void test_modes(void **state)
{
    (void)state;
    posenc_ggml_arch a;
    assert_string_equal(posenc_ggml_mode_name(POSENC_GGML_ROPE_NEOX), "neox");
    assert_string_equal(posenc_ggml_mode_name(POSENC_GGML_ROPE_IMROPE), "imrope");
    posenc_ggml_arch_info("llama", &a);
    assert_true(a.known && a.mode == POSENC_GGML_ROPE_NORM && a.converter && a.kq_known);
    posenc_ggml_arch_info("qwen3", &a);
    assert_true(a.known && a.mode == POSENC_GGML_ROPE_NEOX);
    posenc_ggml_arch_info("qwen35", &a);
    assert_true(a.mode == POSENC_GGML_ROPE_IMROPE && a.reads_sections);
    posenc_ggml_arch_info("glm4", &a); /* use_mrope() ? MROPE : NORM */
    assert_true(a.mode == POSENC_GGML_ROPE_NORM && a.mode_sections == POSENC_GGML_ROPE_MROPE);
    posenc_ggml_arch_info("gpt2", &a);
    assert_true(a.known && a.mode == POSENC_GGML_ROPE_NONE && !a.converter);
    posenc_ggml_arch_info("no-such-arch", &a);
    assert_false(a.known);
}

/* Gemma 3 per layer type (src/models/gemma3.cpp load_arch_hparams and graph<iswa>,
 * src/llama-model.cpp get_rope_freq_base / get_rope_freq_scale, src/llama-hparams.h defaults) */
static void test_gemma3_layers(void **state)
{
    (void)state;
    posenc_ggml_rope r;
    posenc_error err = { 0 };
    posenc_gguf_rope *g = base("gemma3");
    g->has |= POSENC_GGUF_FREQ_BASE | POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR |
              POSENC_GGUF_SLIDING_WINDOW;
    g->freq_base = 1e6;
    snprintf(g->scaling_type, sizeof g->scaling_type, "linear");
    g->scaling_factor = 8;
    g->sliding_window = 1024;
    /* no freq_base_swa key: 10000, scale 1 */
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.mode == POSENC_GGML_ROPE_NEOX && r.freq_base == 10000.0f && r.freq_scale == 1.0f);
    g->has |= POSENC_GGUF_FREQ_BASE_SWA;
    g->freq_base_swa = 20000;
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 20000.0f && r.freq_scale == 1.0f && r.ext_factor == 0.0f);
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "full_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 1e6f && r.freq_scale == 0.125f);
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, NULL, &r, &err), POSENC_OK);
    assert_true(r.freq_base == 1e6f && r.freq_scale == 0.125f);
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "chunked", &r, &err), POSENC_EINVAL);
    /* no window (or 0): the non-iswa graph, every layer global */
    g->sliding_window = 0;
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 1e6f && r.freq_scale == 0.125f);
    /* an architecture without the rule runs every layer alike */
    snprintf(g->arch, sizeof g->arch, "llama");
    g->sliding_window = 1024;
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 1e6f && r.freq_scale == 0.125f);
    free(g);
}

/* the other sliding-window rules (lib/model/llama_arch.def .swa, .nope), each from its graph:
 * gemma2.cpp / llama4.cpp SWA_TRAIN, gemma3n.cpp / mimo2.cpp SWA_DEFAULT, olmo2.cpp SWA_OLMO2,
 * cohere2.cpp SWA_CTX with no RoPE on the full layers */
static void test_swa_rules(void **state)
{
    (void)state;
    posenc_ggml_rope r;
    posenc_error err = { 0 };
    posenc_gguf_rope *g = base("gemma2");
    g->has |= POSENC_GGUF_FREQ_BASE | POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR |
              POSENC_GGUF_SLIDING_WINDOW | POSENC_GGUF_ORIG_CTX;
    g->freq_base = 5e5;
    snprintf(g->scaling_type, sizeof g->scaling_type, "yarn");
    g->scaling_factor = 4;
    g->original_context_length = 2048;
    g->sliding_window = 4096;
    /* SWA_TRAIN: the file's base and scale without the key, the key's base with it */
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 5e5f && r.freq_scale == 0.25f && r.ext_factor == 1.0f);
    g->has |= POSENC_GGUF_FREQ_BASE_SWA;
    g->freq_base_swa = 10000;
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 10000.0f && r.freq_scale == 0.25f);
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "full_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 5e5f && r.freq_scale == 0.25f);
    /* SWA_DEFAULT: the key, else 10000; scale 1. mimo2.cpp reads the per-layer pattern array
     * as required: without it llama.cpp refuses the file, and so does posenc */
    snprintf(g->arch, sizeof g->arch, "mimo2");
    g->freq_base_swa = 20000;
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err),
                     POSENC_EFORMAT);
    assert_non_null(strstr(err.msg, "mimo2.attention.sliding_window_pattern is required"));
    g->has |= POSENC_GGUF_SWA_PATTERN;
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 20000.0f && r.freq_scale == 1.0f);
    g->has &= ~(unsigned)POSENC_GGUF_SWA_PATTERN;
    snprintf(g->arch, sizeof g->arch, "gemma3n");
    g->has &= ~(unsigned)POSENC_GGUF_FREQ_BASE_SWA;
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 10000.0f && r.freq_scale == 1.0f);
    /* SWA_OLMO2: the context's base, scale 1, no YaRN ramp, attn_factor 1 */
    snprintf(g->arch, sizeof g->arch, "olmo2");
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 5e5f && r.freq_scale == 1.0f && r.ext_factor == 0.0f &&
                r.attn_factor == 1.0f);
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "full_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_scale == 0.25f && r.ext_factor == 1.0f);
    /* SWA_CTX: the sliding layers take the context's arguments even with the key; the full
     * ones have no RoPE */
    snprintf(g->arch, sizeof g->arch, "cohere2");
    g->has |= POSENC_GGUF_FREQ_BASE_SWA;
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "sliding_attention", &r, &err), POSENC_OK);
    assert_true(r.mode == POSENC_GGML_ROPE_NORM && r.freq_base == 5e5f && r.freq_scale == 0.25f);
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "full_attention", &r, &err),
                     POSENC_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "no RoPE to cohere2's full_attention layers"));
    /* which layers are sliding (llama_hparams::set_swa_pattern: il % p < p - 1) */
    uint8_t s[12];
    snprintf(g->arch, sizeof g->arch, "cohere2"); /* default period 4 */
    assert_int_equal(posenc_ggml_swa_layers(g, 8, s), 1);
    assert_true(s[0] && s[1] && s[2] && !s[3] && s[4] && !s[7]);
    g->has |= POSENC_GGUF_SWA_PATTERN;
    g->swa_period = 2;
    assert_int_equal(posenc_ggml_swa_layers(g, 8, s), 1);
    assert_true(s[0] && !s[1] && s[2] && !s[3]);
    /* an array is ignored where the loader reads a scalar, read where it reads an array */
    g->swa_period = 0;
    g->n_swa_layers = 3;
    g->swa_layers[0] = 0;
    g->swa_layers[1] = g->swa_layers[2] = 1;
    assert_int_equal(posenc_ggml_swa_layers(g, 4, s), 1);
    assert_true(s[0] && s[1] && s[2] && !s[3]);
    snprintf(g->arch, sizeof g->arch, "mimo2");
    assert_int_equal(posenc_ggml_swa_layers(g, 4, s), 1);
    assert_true(!s[0] && s[1] && s[2] && !s[3]);
    /* olmo2 and gemma3 without a window: none */
    snprintf(g->arch, sizeof g->arch, "olmo2");
    g->sliding_window = 0;
    assert_int_equal(posenc_ggml_swa_layers(g, 4, s), 1);
    assert_true(!s[0] && !s[1] && !s[2]);
    g->sliding_window = 4096;
    snprintf(g->arch, sizeof g->arch, "qwen3");
    assert_int_equal(posenc_ggml_swa_layers(g, 4, s), 0);
    /* llama4: chunked layers named either way */
    snprintf(g->arch, sizeof g->arch, "llama4");
    assert_int_equal(posenc_ggml_rope_from_gguf_layer(g, 0, "chunked_attention", &r, &err), POSENC_OK);
    assert_true(r.freq_base == 20000.0f && r.freq_scale == 0.25f);
    free(g);
}

static void test_defaults(void **state)
{
    (void)state;
    posenc_ggml_rope r;
    posenc_error err = { 0 };
    posenc_gguf_rope *g = base("llama");
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_true(r.mode == POSENC_GGML_ROPE_NORM);
    assert_int_equal(r.head_dim, 128); /* n_embd / n_head */
    assert_int_equal(r.n_dims, 128);
    assert_int_equal(r.n_ctx_orig, 8192);
    assert_true(r.freq_base == 10000.0f && r.freq_scale == 1.0f && r.ext_factor == 0.0f);
    assert_true(r.attn_factor == 1.0f && r.beta_fast == 32.0f && r.beta_slow == 1.0f);
    assert_true(r.n_freq_factors == 0);
    assert_true((float)r.kq_scale == 1.0f / sqrtf(128.0f));
    /* linear: freq_scale = 1 / factor */
    g->has |= POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR;
    snprintf(g->scaling_type, sizeof g->scaling_type, "linear");
    g->scaling_factor = 4;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_true(r.freq_scale == 0.25f && r.ext_factor == 0.0f);
    /* none: never scale */
    snprintf(g->scaling_type, sizeof g->scaling_type, "none");
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_true(r.freq_scale == 1.0f);
    /* an unknown scaling type: llama.cpp asserts */
    snprintf(g->scaling_type, sizeof g->scaling_type, "ntk");
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_EFORMAT);
    assert_non_null(strstr(err.msg, "'ntk'"));
    /* llama requires n_rot == head size */
    g->has &= ~POSENC_GGUF_SCALING_TYPE;
    g->has |= POSENC_GGUF_DIMENSION_COUNT;
    g->dimension_count = 64;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_EFORMAT);
    assert_non_null(strstr(err.msg, "invalid n_rot: 64, expected 128"));
    /* qwen3 does not */
    snprintf(g->arch, sizeof g->arch, "qwen3");
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_int_equal(r.n_dims, 64);
    assert_true(r.mode == POSENC_GGML_ROPE_NEOX);
    /* required keys, unknown architectures */
    g->has &= ~POSENC_GGUF_CONTEXT_LENGTH;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_EFORMAT);
    snprintf(g->arch, sizeof g->arch, "qwen9");
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_EUNSUPPORTED);
    free(g);
}

static void test_yarn(void **state)
{
    (void)state;
    posenc_ggml_rope r;
    posenc_error err = { 0 };
    posenc_gguf_rope *g = base("gpt-oss");
    g->has |= POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR | POSENC_GGUF_ORIG_CTX |
              POSENC_GGUF_YARN_BETA_FAST | POSENC_GGUF_YARN_ATTN_FACTOR;
    snprintf(g->scaling_type, sizeof g->scaling_type, "yarn");
    g->scaling_factor = 32;
    g->original_context_length = 4096;
    g->yarn_beta_fast = 99;  /* not read for gpt-oss (only grok and mistral3 read it) */
    g->yarn_attn_factor = 7; /* nor this */
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_true(r.ext_factor == 1.0f && r.freq_scale == 1.0f / 32.0f && r.n_ctx_orig == 4096);
    assert_true(r.beta_fast == 32.0f);
    /* get_mscale(32, 1) / (1 + 0.1 ln 32) = 1, in float32 */
    float m = 0.1f * logf(32.0f) + 1.0f;
    assert_true(r.attn_factor == m * (1.0f / (1.0f + 0.1f * logf(32.0f))));
    /* DeepSeek-V3: yarn_log_multiplier 0.1 (0.1 * mscale_all_dim 1) -> 1 after / 0.1 */
    snprintf(g->arch, sizeof g->arch, "deepseek2");
    g->scaling_factor = 40;
    g->has |= POSENC_GGUF_YARN_LOG_MUL | POSENC_GGUF_KEY_LENGTH | POSENC_GGUF_KEY_LENGTH_MLA |
              POSENC_GGUF_DIMENSION_COUNT;
    g->yarn_log_multiplier = (double)0.1f;
    g->key_length = 576;
    g->key_length_mla = 192;
    g->dimension_count = 64;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    float a = 1.0f / (1.0f + 0.1f * logf(40.0f));
    assert_true(r.attn_factor == a);
    assert_true(r.mode == POSENC_GGML_ROPE_NORM && r.n_dims == 64 && r.head_dim == 576);
    /* kq_scale = (1 + 0.1 ln 40)^2 / sqrt(192): transformers' DeepSeek-V3 softmax_scale */
    double kq = pow(1 + 0.1 * log(40.0), 2) / sqrt(192.0);
    assert_close(r.kq_scale, kq, 1e-6, 0);
    /* a legacy file with yarn_log_multiplier 1 (no 0.1): mscale 10 / 10 leaves attn_factor,
     * but kq_scale grows by (1 + ln 40)^2 / (1 + 0.1 ln 40)^2 */
    g->yarn_log_multiplier = 1;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_true(r.attn_factor == a);
    assert_close(r.kq_scale, pow(1 + log(40.0), 2) / sqrt(192.0), 1e-6, 0);
    /* Ministral 3 (mistral3): yarn_log_multiplier 1 read as is; without it attn_factor is 1 */
    snprintf(g->arch, sizeof g->arch, "mistral3");
    g->has &= ~(POSENC_GGUF_KEY_LENGTH | POSENC_GGUF_KEY_LENGTH_MLA | POSENC_GGUF_DIMENSION_COUNT);
    g->scaling_factor = 16;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_true(r.attn_factor == 1.0f / (1.0f + 0.1f * logf(16.0f)));
    assert_true(r.beta_fast == 99.0f); /* mistral3 reads yarn_beta_fast */
    g->has &= ~POSENC_GGUF_YARN_LOG_MUL;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_close(r.attn_factor, 1.0, 1e-7, 0);
    free(g);
}

static void test_longrope_choice(void **state)
{
    (void)state;
    posenc_ggml_rope r;
    posenc_error err = { 0 };
    posenc_gguf_rope *g = base("phi3");
    g->context_length = 131072;
    g->embedding_length = 3072;
    g->has |= POSENC_GGUF_ORIG_CTX | POSENC_GGUF_ATTN_FACTOR;
    g->original_context_length = 4096;
    g->attn_factor = 1.25;
    g->n_factors_long = g->n_factors_short = 48;
    for (int i = 0; i < 48; i++) {
        g->factors_long[i] = 2.0f + (float)i;
        g->factors_short[i] = 1.0f;
    }
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 0, &r, &err), POSENC_OK);
    assert_true(r.mode == POSENC_GGML_ROPE_NEOX && r.n_dims == 96);
    assert_true(r.n_freq_factors == 48 && r.freq_factors[5] == 7.0f); /* 131072 > 4096: long */
    assert_true(r.attn_factor == 1.25f && r.ext_factor == 0.0f);
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 4096, &r, &err), POSENC_OK);
    assert_true(r.freq_factors[5] == 1.0f); /* n_ctx 4096 is not past 4096: short */
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 4097, &r, &err), POSENC_OK);
    assert_true(r.freq_factors[5] == 7.0f); /* 4097, padded to 4352, is past it: long */
    /* src/llama-context.cpp pads n_ctx to a multiple of 256 before n_ctx_seq is compared:
     * with an original context of 4000, n_ctx 3900 and 4000 become 4096, past it */
    g->original_context_length = 4000;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 3900, &r, &err), POSENC_OK);
    assert_true(r.freq_factors[5] == 7.0f);
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 3840, &r, &err), POSENC_OK);
    assert_true(r.freq_factors[5] == 1.0f); /* 3840 is a multiple of 256, not past 4000 */
    g->original_context_length = 4096;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, (int64_t)1 << 32, &r, &err), POSENC_EINVAL);
    /* a factor tensor of the wrong length: llama.cpp refuses the shape */
    g->n_factors_short = 47;
    assert_int_equal(posenc_ggml_rope_from_gguf(g, 4096, &r, &err), POSENC_EFORMAT);
    free(g);
}

static void test_from_model(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_model *m = NULL;
    posenc_gguf_rope g;
    /* LlamaModel: dimension_count = hidden_size / heads; freq_base from rope_theta; linear */
    const char *llama = "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\","
                        "\"hidden_size\":2048,\"num_attention_heads\":16,\"max_position_embeddings\":4096,"
                        "\"rope_theta\":250000.0,\"rope_scaling\":{\"type\":\"linear\",\"factor\":2.0}}";
    assert_int_equal(posenc_config_parse(llama, strlen(llama), "l.json", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_rope_from_model(m, NULL, &g, &err), POSENC_OK);
    assert_string_equal(g.arch, "llama");
    assert_true((g.has & POSENC_GGUF_DIMENSION_COUNT) && g.dimension_count == 128);
    assert_true((g.has & POSENC_GGUF_FREQ_BASE) && g.freq_base == 250000.0);
    assert_string_equal(g.scaling_type, "linear");
    assert_true(g.scaling_factor == 2.0 && g.context_length == 4096 && g.n_rope_freqs == 0);
    assert_false(g.has & POSENC_GGUF_KEY_LENGTH); /* no head_dim key */
    posenc_model_free(m);
    /* Qwen3-Next: int(head_dim * 0.25) by default */
    const char *qn = "{\"model_type\":\"qwen3_next\",\"hidden_size\":2048,\"num_attention_heads\":16,"
                     "\"head_dim\":256,\"max_position_embeddings\":262144,\"rope_theta\":10000000}";
    assert_int_equal(posenc_config_parse(qn, strlen(qn), "q.json", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_rope_from_model(m, NULL, &g, &err), POSENC_OK);
    assert_string_equal(g.arch, "qwen3next");
    assert_true(g.dimension_count == 64 && g.key_length == 256);
    posenc_model_free(m);
    /* no rope_theta: the converter run with transformers writes AutoConfig's class default
     * (Mixtral: 1e6); the expectation is that value, not llama.cpp's 10000 */
    const char *mx = "{\"model_type\":\"mixtral\",\"hidden_size\":4096,\"num_attention_heads\":32,"
                     "\"max_position_embeddings\":32768}";
    assert_int_equal(posenc_config_parse(mx, strlen(mx), "m.json", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_rope_from_model(m, NULL, &g, &err), POSENC_OK);
    assert_true((g.has & POSENC_GGUF_FREQ_BASE) && g.freq_base == 1e6);
    posenc_model_free(m);
    /* a model_type the converter has no class for, and one whose class posenc has not read */
    const char *gj = "{\"model_type\":\"gptj\",\"n_embd\":4096,\"n_head\":16,\"rotary_dim\":64}";
    assert_int_equal(posenc_config_parse(gj, strlen(gj), "g.json", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_rope_from_model(m, NULL, &g, &err), POSENC_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "model_type 'gptj': convert_hf_to_gguf.py has no class for it"));
    posenc_model_free(m);
    const char *ge = "{\"model_type\":\"gemma4_text\",\"hidden_size\":2048,"
                     "\"num_attention_heads\":8,\"head_dim\":256}";
    assert_int_equal(posenc_config_parse(ge, strlen(ge), "g.json", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_rope_from_model(m, NULL, &g, &err), POSENC_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "writes architecture 'gemma4', whose RoPE rules posenc has not read"));
    posenc_model_free(m);
    /* Falcon: FalconModel's own keys, context 2048 whatever the config, no freq_base */
    const char *fa = "{\"model_type\":\"falcon\",\"hidden_size\":4544,\"num_attention_heads\":71,"
                     "\"max_position_embeddings\":8192,\"rope_theta\":500000}";
    assert_int_equal(posenc_config_parse(fa, strlen(fa), "f.json", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_rope_from_model(m, NULL, &g, &err), POSENC_OK);
    assert_true(!(g.has & POSENC_GGUF_FREQ_BASE) && g.context_length == 2048 &&
                g.embedding_length == 4544 && g.head_count == 71 &&
                !(g.has & POSENC_GGUF_DIMENSION_COUNT));
    posenc_model_free(m);
    /* Gemma: GemmaModel's own keys, hparams[k] (KeyError when absent), no freq_base */
    const char *gm = "{\"model_type\":\"gemma\",\"hidden_size\":2048,\"num_attention_heads\":8,"
                     "\"head_dim\":256,\"max_position_embeddings\":8192,\"rope_theta\":10000}";
    assert_int_equal(posenc_config_parse(gm, strlen(gm), "g.json", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_rope_from_model(m, NULL, &g, &err), POSENC_OK);
    assert_true(!(g.has & POSENC_GGUF_FREQ_BASE) && g.key_length == 256 && g.context_length == 8192 &&
                !(g.has & POSENC_GGUF_SLIDING_WINDOW));
    posenc_model_free(m);
}

/* the pair order of llama.cpp's own q/k: NORM pairs neighbours (the converter permuted a neox
 * config), the other modes halves; no rules: one line naming the architecture */
static void test_layout_style(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_style s;
    int perm = -1;
    assert_int_equal(posenc_ggml_layout_style("llama", 0, POSENC_STYLE_NEOX, &s, &perm, &err),
                     POSENC_OK);
    assert_int_equal(s, POSENC_STYLE_GPTJ);
    assert_int_equal(perm, 1);
    assert_int_equal(posenc_ggml_layout_style("deepseek2", 0, POSENC_STYLE_GPTJ, &s, &perm,
                                              &err), POSENC_OK);
    assert_int_equal(s, POSENC_STYLE_GPTJ);
    assert_int_equal(perm, 0);
    assert_int_equal(posenc_ggml_layout_style("qwen2", 0, POSENC_STYLE_NEOX, &s, &perm, &err),
                     POSENC_OK);
    assert_int_equal(s, POSENC_STYLE_NEOX);
    assert_int_equal(perm, 0);
    assert_int_equal(posenc_ggml_layout_style("glm4", 1, POSENC_STYLE_NEOX, &s, NULL, &err),
                     POSENC_OK);
    assert_int_equal(s, POSENC_STYLE_NEOX); /* MROPE with sections */
    assert_int_equal(posenc_ggml_layout_style("qwen2", 0, POSENC_STYLE_GPTJ, &s, NULL, &err),
                     POSENC_EUNSUPPORTED);
    assert_int_equal(posenc_ggml_layout_style("qwen9", 0, POSENC_STYLE_NEOX, &s, NULL, &err),
                     POSENC_EUNSUPPORTED);
    assert_string_equal(err.msg, "llama.cpp: posenc has no rules for architecture qwen9");
    assert_int_equal(posenc_ggml_layout_style("bloom", 0, POSENC_STYLE_NEOX, &s, NULL, &err),
                     POSENC_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "applies no RoPE"));
}

static void test_compare(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_gguf_check *c = malloc(sizeof *c);
    posenc_gguf_rope *w = base("llama"), *h = base("llama");
    assert_non_null(c);
    w->has |= POSENC_GGUF_FREQ_BASE;
    w->freq_base = 10000; /* the converter writes the default; the file leaves it out: fine */
    assert_int_equal(posenc_gguf_compare(w, h, 0, c, &err), POSENC_OK);
    assert_int_equal(c->n_failed, 0);
    assert_true(c->n >= 10);
    h->has |= POSENC_GGUF_FREQ_BASE;
    h->freq_base = 500000;
    assert_int_equal(posenc_gguf_compare(w, h, 0, c, &err), POSENC_OK);
    /* the key, and the tables it changes: cos and sin by ggml's numerics differ at once */
    assert_int_equal(c->n_failed, 2);
    int seen = 0;
    for (int i = 0; i < c->n; i++)
        if (!c->f[i].ok && strcmp(c->f[i].what, "tables") == 0) {
            assert_string_equal(c->f[i].key, "cos/sin (ggml numerics)");
            assert_non_null(strstr(c->f[i].found, "max |difference| "));
            seen |= 2;
        } else if (!c->f[i].ok) {
            assert_string_equal(c->f[i].key, "llama.rope.freq_base");
            assert_string_equal(c->f[i].expected, "10000");
            assert_string_equal(c->f[i].found, "500000");
            seen |= 1;
        }
    assert_int_equal(seen, 3);
    free(w);
    free(h);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_yarn),
        cmocka_unit_test(test_longrope_choice),
        cmocka_unit_test(test_from_model),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_layout_style),
        cmocka_unit_test(test_gemma3_layers),
        cmocka_unit_test(test_swa_rules),
    };
    return cmocka_run_group_tests_name("llamacpp", tests, NULL, NULL);
}
