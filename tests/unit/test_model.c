/* test_model.c: config.json resolution (lib/model/model.c, formats/io/config.c).
 *
 * Every expected value is derived by hand from transformers' own code (modeling_rope_utils.py:
 * convert_rope_params_to_dict, standardize_rope_params and the init functions; each model's
 * configuration_*.py defaults; the comments name the rule) and the config text, never from
 * posenc's own output. JSON literals are written with
 * single quotes and converted to double quotes by J(). */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/config.h"
#include "posenc/model.h"

/* ---- helpers ---- */

static char *J(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    assert_non_null(d);
    for (size_t i = 0; i <= n; i++)
        d[i] = s[i] == '\'' ? '"' : s[i];
    return d;
}

static posenc_model *parse_ok(const char *sq)
{
    char *t = J(sq);
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    posenc_status st = posenc_config_parse(t, strlen(t), "mem.json", NULL, &m, &err);
    if (st != POSENC_OK)
        print_error("parse failed: %s\n  json: %s\n", err.msg, t);
    free(t);
    assert_int_equal(st, POSENC_OK);
    assert_non_null(m);
    return m;
}

static void parse_fail(const char *sq, posenc_status code, const char *want)
{
    char *t = J(sq);
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    posenc_status st = posenc_config_parse(t, strlen(t), "mem.json", NULL, &m, &err);
    if (st != code || !strstr(err.msg, want) || strncmp(err.msg, "'mem.json': ", 12) != 0)
        print_error("json: %s\n  status %d (want %d), message: %s\n  want substring: %s\n", t,
                    (int)st, (int)code, err.msg, want);
    free(t);
    assert_int_equal(st, code);
    assert_null(m);
    assert_non_null(strstr(err.msg, want));
    assert_int_equal(strncmp(err.msg, "'mem.json': ", 12), 0);
}

static posenc_model *load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/configs/%s", tu_data_dir(), name);
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    posenc_status st = posenc_config_load(path, NULL, &m, &err);
    if (st != POSENC_OK)
        print_error("%s: %s\n", path, err.msg);
    assert_int_equal(st, POSENC_OK);
    return m;
}

static posenc_rope_config rope(const posenc_model *m, const char *lt)
{
    posenc_rope_config c;
    posenc_error err = { 0 };
    posenc_status st = posenc_model_rope(m, lt, &c, &err);
    if (st != POSENC_OK)
        print_error("posenc_model_rope(%s): %s\n", lt ? lt : "NULL", err.msg);
    assert_int_equal(st, POSENC_OK);
    return c;
}

static int has_note(const posenc_model *m, const char *sub)
{
    for (size_t i = 0; i < posenc_model_note_count(m); i++)
        if (strstr(posenc_model_note(m, i), sub))
            return 1;
    return 0;
}

#define assert_note(m, sub) assert_true(has_note((m), (sub)))

/* A Llama-style model with head_dim 256 / 4 = 64 and M = 4096. */
#define LL "'model_type':'llama','hidden_size':256,'num_attention_heads':4,'max_position_embeddings':4096"

/* ---- real configs (tests/data/configs) ---- */

static void test_llama31(void **state)
{
    (void)state;
    posenc_model *m = load("llama-3.1-8b.json");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_ROPE);
    assert_string_equal(posenc_model_type(m), "llama");
    assert_int_equal(posenc_model_layer_type_count(m), 0);
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_LLAMA3);     /* rope_scaling.rope_type */
    assert_close(c.theta, 500000.0, 0, 0);            /* top-level rope_theta (dict has none) */
    assert_string_equal(c.theta_source, "rope_theta");
    assert_int_equal(c.head_dim, 128);                /* no head_dim: 4096 / 32 */
    assert_int_equal(c.rotary_dim, 128);              /* prf 1 */
    assert_int_equal(c.exponent_dim, 128);
    assert_int_equal(c.style, POSENC_STYLE_NEOX);     /* llama: rotate_half */
    assert_close(c.factor, 8.0, 0, 0);
    assert_close(c.low_freq_factor, 1.0, 0, 0);
    assert_close(c.high_freq_factor, 4.0, 0, 0);
    assert_int_equal(c.original_max_position_embeddings, 8192); /* dict value, no top-level */
    assert_int_equal(c.max_position_embeddings, 131072);
    assert_int_equal(posenc_model_max_positions(m), 131072);
    posenc_model_free(m);
}

static void test_mixtral_qwen3(void **state)
{
    (void)state;
    posenc_model *m = load("mixtral-8x7b-v0.1.json");
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_DEFAULT);    /* no rope_scaling */
    assert_close(c.theta, 1e6, 0, 0);                 /* rope_theta 1e6 */
    assert_int_equal(c.head_dim, 128);                /* 4096 / 32 */
    assert_int_equal(c.original_max_position_embeddings, 32768); /* filled from M */
    assert_close(c.factor, 1.0, 0, 0);
    posenc_model_free(m);

    m = load("qwen3-8b.json");
    c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_DEFAULT);    /* rope_scaling null */
    assert_close(c.theta, 1e6, 0, 0);
    assert_int_equal(c.head_dim, 128);                /* explicit head_dim */
    assert_int_equal(c.rotary_dim, 128);
    assert_int_equal(c.max_position_embeddings, 40960);
    posenc_model_free(m);
}

static void test_qwen3_next_and_35(void **state)
{
    (void)state;
    posenc_model *m = load("qwen3-next-80b-a3b-thinking.json");
    posenc_rope_config c = rope(m, NULL);
    assert_close(c.theta, 1e7, 0, 0);
    assert_int_equal(c.head_dim, 256);
    assert_close(c.partial_rotary_factor, 0.25, 0, 0);
    assert_int_equal(c.rotary_dim, 64);               /* qwen3_next's default init honours prf */
    assert_int_equal(c.n_mrope_section, 0);
    assert_note(m, "linear_attention");
    posenc_model_free(m);

    static const char *const files[] = { "qwen3.5-27b.json", "qwen3.5-35b-a3b.json" };
    static const char *const types[] = { "qwen3_5_text", "qwen3_5_moe_text" };
    for (int i = 0; i < 2; i++) {
        m = load(files[i]);
        assert_string_equal(posenc_model_type(m), types[i]); /* text_config.model_type */
        c = rope(m, NULL);
        assert_close(c.theta, 1e7, 0, 0);             /* text_config.rope_parameters.rope_theta */
        assert_string_equal(c.theta_source, "text_config.rope_parameters.rope_theta");
        assert_int_equal(c.head_dim, 256);
        assert_int_equal(c.rotary_dim, 64);           /* 256 * 0.25, honoured by its default init */
        assert_int_equal(c.n_mrope_section, 3);
        assert_int_equal(c.mrope_section[0], 11);
        assert_int_equal(c.mrope_section[1], 11);
        assert_int_equal(c.mrope_section[2], 10);
        assert_true(c.mrope_interleaved);
        assert_int_equal(c.max_position_embeddings, 262144);
        /* layer_types names share the one set (flat dict, Case 1) */
        assert_int_equal(posenc_model_layer_type_count(m), 0);
        c = rope(m, "full_attention");
        assert_int_equal(c.rotary_dim, 64);
        posenc_model_free(m);
    }
}

static void test_glm(void **state)
{
    (void)state;
    posenc_model *m = load("glm-4.5.json");
    posenc_rope_config c = rope(m, NULL);
    assert_close(c.theta, 1e6, 0, 0);
    assert_int_equal(c.head_dim, 128);                /* explicit head_dim, not 5120/96 */
    assert_int_equal(c.rotary_dim, 64);               /* glm4_moe honours prf 0.5 */
    assert_int_equal(c.style, POSENC_STYLE_NEOX);     /* glm4_moe is not interleaved */
    posenc_model_free(m);

    m = load("glm-5.json");
    c = rope(m, NULL);
    assert_string_equal(c.theta_source, "rope_parameters.rope_theta");
    assert_close(c.theta, 1e6, 0, 0);
    assert_int_equal(c.head_dim, 64);                 /* qk_rope_head_dim */
    assert_int_equal(c.rotary_dim, 64);
    /* transformers' GlmMoeDsaAttention always de-interleaves (apply_rotary_pos_emb_interleave) */
    assert_int_equal(c.style, POSENC_STYLE_GPTJ);
    assert_int_equal(c.pairing, POSENC_PAIR_DEINTERLEAVE);
    assert_note(m, "apply_rotary_pos_emb_interleave");
    posenc_model_free(m);
}

static void test_gptj_file(void **state)
{
    (void)state;
    posenc_model *m = load("gpt-j-6b.json");
    posenc_rope_config c = rope(m, NULL);
    assert_close(c.theta, 10000.0, 0, 0);             /* hard-coded in GPT-J */
    assert_int_equal(c.head_dim, 256);                /* n_embd 4096 / n_head 16 */
    assert_int_equal(c.rotary_dim, 64);               /* rotary_dim */
    assert_int_equal(c.style, POSENC_STYLE_GPTJ);
    assert_int_equal(c.max_position_embeddings, 2048); /* n_positions */
    posenc_model_free(m);
}

static void test_gpt_oss_file(void **state)
{
    (void)state;
    posenc_model *m = load("gpt-oss-20b.json");
    assert_int_equal(posenc_model_layer_type_count(m), 0); /* flat dict despite layer_types */
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_YARN);
    assert_close(c.theta, 150000.0, 0, 0);
    assert_int_equal(c.head_dim, 64);
    assert_close(c.factor, 32.0, 0, 0);
    assert_close(c.beta_fast, 32.0, 0, 0);
    assert_close(c.beta_slow, 1.0, 0, 0);
    assert_int_equal(c.truncate, 0);                  /* truncate: false */
    assert_int_equal(c.original_max_position_embeddings, 4096);
    assert_int_equal(c.has_attention_factor, 0);
    assert_close(c.mscale, 0, 0, 0);
    c = rope(m, "sliding_attention");                 /* a listed layer type: same set */
    assert_int_equal(c.type, POSENC_ROPE_YARN);
    posenc_error err = { 0 };
    assert_int_equal(posenc_model_rope(m, "global", &c, &err), POSENC_ENOTFOUND);
    assert_non_null(strstr(err.msg, "full_attention"));
    posenc_model_free(m);
}

static void test_deepseek_kimi(void **state)
{
    (void)state;
    posenc_model *m = load("deepseek-v3.json");
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_YARN);       /* legacy "type": "yarn" */
    assert_int_equal(c.head_dim, 64);                 /* qk_rope_head_dim, not 7168/128 = 56 */
    assert_int_equal(c.rotary_dim, 64);
    assert_close(c.theta, 10000.0, 0, 0);
    assert_close(c.factor, 40.0, 0, 0);
    assert_close(c.mscale, 1.0, 0, 0);
    assert_close(c.mscale_all_dim, 1.0, 0, 0);
    assert_int_equal(c.original_max_position_embeddings, 4096);
    assert_int_equal(c.style, POSENC_STYLE_GPTJ);     /* rope_interleave default true */
    assert_int_equal(c.softmax_mscale, 1);            /* mscale_all_dim set */
    assert_int_equal(c.truncate, 1);                  /* default */
    assert_note(m, "permuted");
    posenc_model_free(m);

    m = load("kimi-k2-instruct.json");
    c = rope(m, NULL);
    assert_close(c.theta, 50000.0, 0, 0);
    assert_close(c.beta_fast, 1.0, 0, 0);             /* 1.0 is truthy: kept */
    assert_close(c.beta_slow, 1.0, 0, 0);
    assert_close(c.factor, 32.0, 0, 0);
    assert_int_equal(c.softmax_mscale, 1);
    assert_int_equal(c.head_dim, 64);
    posenc_model_free(m);
}

static void test_llama4(void **state)
{
    (void)state;
    posenc_model *m = load("llama-4-scout-17b-16e-instruct.json");
    assert_string_equal(posenc_model_type(m), "llama4_text");
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_LLAMA3);
    assert_string_equal(c.theta_source, "text_config.rope_theta");
    assert_close(c.theta, 500000.0, 0, 0);
    assert_close(c.factor, 16.0, 0, 0);
    assert_close(c.low_freq_factor, 1.0, 0, 0);
    assert_close(c.high_freq_factor, 1.0, 0, 0);
    assert_int_equal(c.head_dim, 128);
    assert_int_equal(c.style, POSENC_STYLE_GPTJ);     /* complex pairs */
    assert_int_equal(c.max_position_embeddings, 10485760);
    assert_int_equal(c.original_max_position_embeddings, 8192);
    posenc_model_free(m);
}

static void test_mimo(void **state)
{
    (void)state;
    posenc_model *m = load("mimo-v2-flash.json");
    assert_int_equal(posenc_model_layer_type_count(m), 2);
    assert_string_equal(posenc_model_layer_type_name(m, 0), "full_attention");
    assert_string_equal(posenc_model_layer_type_name(m, 1), "sliding_attention");
    posenc_rope_config f = rope(m, "full_attention"), s = rope(m, "sliding_attention");
    assert_close(f.theta, 5e6, 0, 0);                 /* rope_theta */
    assert_close(s.theta, 1e4, 0, 0);                 /* swa_rope_theta */
    assert_string_equal(s.theta_source, "swa_rope_theta");
    assert_int_equal(f.head_dim, 192);
    assert_int_equal(f.rotary_dim, 64);               /* int(192 * 0.334) = int(64.128) */
    assert_int_equal(s.rotary_dim, 64);
    assert_note(m, "swa_rope_theta");
    posenc_error err = { 0 };
    posenc_rope_config c;
    assert_int_equal(posenc_model_rope(m, NULL, &c, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "sliding_attention"));
    posenc_model_free(m);
}

static void test_minimax(void **state)
{
    (void)state;
    posenc_model *m = load("minimax-m2.5.json");
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.head_dim, 128);
    assert_int_equal(c.rotary_dim, 64);               /* model code rotary_dim, not HF's 128 */
    assert_close(c.theta, 5e6, 0, 0);
    assert_note(m, "transformers ignores rotary_dim");
    posenc_model_free(m);
}

static void test_gemma3_file(void **state)
{
    (void)state;
    posenc_model *m = load("gemma-3-27b-it.json");
    assert_string_equal(posenc_model_type(m), "gemma3_text");
    assert_int_equal(posenc_model_layer_type_count(m), 2);
    posenc_rope_config f = rope(m, "full_attention"), s = rope(m, "sliding_attention");
    assert_int_equal(f.type, POSENC_ROPE_LINEAR);     /* legacy rope_scaling -> full only */
    assert_close(f.factor, 8.0, 0, 0);
    assert_close(f.theta, 1e6, 0, 0);                 /* rope_theta */
    assert_int_equal(s.type, POSENC_ROPE_DEFAULT);
    assert_close(s.theta, 1e4, 0, 0);                 /* rope_local_base_freq */
    assert_string_equal(s.theta_source, "text_config.rope_local_base_freq");
    assert_int_equal(f.head_dim, 128);
    assert_int_equal(s.head_dim, 128);
    posenc_error err = { 0 };
    posenc_rope_config c;
    assert_int_equal(posenc_model_rope(m, "local", &c, &err), POSENC_ENOTFOUND);
    assert_non_null(strstr(err.msg, "full_attention, sliding_attention"));
    posenc_model_free(m);
}

/* posenc_model_layer: layer i's type from layer_types, its NoPE flag, the range check */
static void test_layer_of(void **state)
{
    (void)state;
    posenc_model *m = load("gemma-3-27b-it.json");
    const char *t = NULL;
    int nope = -1;
    posenc_error err = { 0 };
    assert_int_equal(posenc_model_layer(m, 0, &t, &nope, &err), POSENC_OK);
    assert_string_equal(t, "sliding_attention");
    assert_int_equal(nope, 0);
    assert_int_equal(posenc_model_layer(m, 5, &t, NULL, &err), POSENC_OK);
    assert_string_equal(t, "full_attention");           /* every sixth layer */
    assert_int_equal(posenc_model_layer(m, 61, &t, NULL, &err), POSENC_OK);
    assert_string_equal(t, "sliding_attention");
    assert_int_equal(posenc_model_layer(m, 62, &t, NULL, &err), POSENC_ERANGE);
    assert_non_null(strstr(err.msg, "layer 62 does not exist (num_hidden_layers has 62"));
    assert_int_equal(posenc_model_layer(m, -1, &t, NULL, &err), POSENC_ERANGE);
    posenc_model_free(m);
    /* Llama 4: no_rope_layers 0 marks a NoPE layer; no layer_types */
    m = parse_ok("{'model_type':'llama4_text','hidden_size':5120,'num_attention_heads':40,"
                 "'head_dim':128,'num_hidden_layers':8,'no_rope_layers':[1,1,1,0,1,1,1,0],"
                 "'rope_theta':500000.0}");
    for (int64_t i = 0; i < 8; i++) {
        t = "x";
        assert_int_equal(posenc_model_layer(m, i, &t, &nope, &err), POSENC_OK);
        assert_null(t);
        assert_int_equal(nope, i == 3 || i == 7);
    }
    assert_int_equal(posenc_model_layer(m, 8, NULL, NULL, &err), POSENC_ERANGE);
    posenc_model_free(m);
    /* no num_hidden_layers, no layer_types: any layer, one parameter set */
    m = parse_ok("{'model_type':'llama','hidden_size':64,'num_attention_heads':2}");
    assert_int_equal(posenc_model_layer(m, 1000, &t, &nope, &err), POSENC_OK);
    assert_null(t);
    assert_int_equal(nope, 0);
    posenc_model_free(m);
    /* ModernBERT without layer_types: ModernBertConfig.__init__ makes layer i full_attention
     * when i % global_attn_every_n_layers == 0 (default 3), sliding_attention otherwise */
    static const char *mb[] = {
        "{'model_type':'modernbert','hidden_size':768,'num_attention_heads':12,"
        "'num_hidden_layers':7,'global_attn_every_n_layers':2}",
        "{'model_type':'modernbert','hidden_size':768,'num_attention_heads':12,"
        "'num_hidden_layers':7}",
    };
    for (int k = 0; k < 2; k++) {
        int every = k == 0 ? 2 : 3;
        m = parse_ok(mb[k]);
        for (int64_t i = 0; i < 7; i++) {
            assert_int_equal(posenc_model_layer(m, i, &t, NULL, &err), POSENC_OK);
            assert_string_equal(t, i % every == 0 ? "full_attention" : "sliding_attention");
        }
        posenc_model_free(m);
    }
    /* a config's own layer_types are kept */
    m = parse_ok("{'model_type':'modernbert','hidden_size':768,'num_attention_heads':12,"
                 "'num_hidden_layers':2,'layer_types':['sliding_attention','full_attention']}");
    assert_int_equal(posenc_model_layer(m, 0, &t, NULL, &err), POSENC_OK);
    assert_string_equal(t, "sliding_attention");
    posenc_model_free(m);
}

static void test_gemma4_file(void **state)
{
    (void)state;
    posenc_model *m = load("gemma-4-26b-a4b.json");
    posenc_rope_config f = rope(m, "full_attention"), s = rope(m, "sliding_attention");
    assert_int_equal(f.type, POSENC_ROPE_PROPORTIONAL);
    assert_close(f.theta, 1e6, 0, 0);
    assert_close(f.partial_rotary_factor, 0.25, 0, 0);
    assert_int_equal(f.head_dim, 512);                /* global_head_dim */
    assert_int_equal(f.rotary_dim, 512);              /* the table is the full head wide */
    assert_int_equal(f.exponent_dim, 512);            /* proportional: exponent over head_dim */
    assert_int_equal(s.type, POSENC_ROPE_DEFAULT);
    assert_close(s.theta, 1e4, 0, 0);
    assert_int_equal(s.head_dim, 256);
    assert_int_equal(s.rotary_dim, 256);
    posenc_model_free(m);
}

static void test_falcon_baichuan_nemotron(void **state)
{
    (void)state;
    posenc_model *m = load("falcon-7b.json");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_ROPE); /* alibi false */
    posenc_rope_config c = rope(m, NULL);
    assert_close(c.theta, 1e4, 0, 0);                 /* no rope_theta: default */
    assert_string_equal(c.theta_source, "default");
    assert_int_equal(c.head_dim, 64);                 /* 4544 / n_head 71 */
    assert_int_equal(c.max_position_embeddings, 2048); /* falcon class default */
    assert_note(m, "class default");
    posenc_model_free(m);

    m = load("baichuan-13b.json");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_ALIBI); /* 5120 hidden, no rope keys */
    const posenc_bias_config *b = posenc_model_bias(m);
    assert_int_equal(b->alibi_kind, POSENC_ALIBI_REFERENCE);
    assert_int_equal(b->heads, 40);
    assert_int_equal(b->max_positions, 4096);         /* model_max_length */
    assert_int_equal(b->d_model, 5120);
    posenc_error err = { 0 };
    assert_int_equal(posenc_model_rope(m, NULL, &c, &err), POSENC_EINVAL);
    posenc_model_free(m);

    m = load("nemotron-3-nano-30b-a3b.json");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_NONE); /* NoPE despite rope_theta */
    assert_note(m, "NoPE");
    assert_int_equal(posenc_model_max_positions(m), 262144);
    posenc_model_free(m);

    m = load("nemotron-h-56b-base-8k.json");                     /* holds a bare Infinity */
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_NONE);
    posenc_model_free(m);
}

/* ---- extra configs (tests/data/configs/extra) ---- */

static void test_extra_nonrope(void **state)
{
    (void)state;
    posenc_model *m = load("extra/gpt2.json");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_LEARNED);
    const posenc_bias_config *b = posenc_model_bias(m);
    assert_string_equal(b->learned_tensor, "wpe.weight");
    assert_int_equal(b->max_positions, 1024);         /* n_positions */
    assert_int_equal(b->d_model, 768);                /* n_embd */
    posenc_model_free(m);

    m = load("extra/bert-base-uncased.json");
    b = posenc_model_bias(m);
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_LEARNED);
    assert_string_equal(b->learned_tensor, "embeddings.position_embeddings.weight");
    assert_int_equal(b->max_positions, 512);
    posenc_model_free(m);

    m = load("extra/t5-small.json");
    b = posenc_model_bias(m);
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_T5);
    assert_int_equal(b->num_buckets, 32);
    assert_int_equal(b->max_distance, 128);           /* default: key absent */
    assert_int_equal(b->heads, 8);
    assert_int_equal(b->d_model, 512);
    assert_int_equal(b->head_dim, 64);                /* d_kv */
    assert_int_equal(b->is_decoder, 0);
    posenc_model_free(m);

    m = load("extra/bloom-560m.json");
    b = posenc_model_bias(m);
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_ALIBI);
    assert_int_equal(b->alibi_kind, POSENC_ALIBI_REFERENCE);
    assert_int_equal(b->heads, 16);                   /* n_head */
    posenc_model_free(m);

    m = load("extra/mpt-7b.json");
    b = posenc_model_bias(m);
    assert_int_equal(b->alibi_kind, POSENC_ALIBI_MPT);
    assert_int_equal(b->heads, 32);                   /* n_heads */
    assert_close(b->alibi_bias_max, 8.0, 0, 0);
    assert_int_equal(b->max_positions, 2048);         /* max_seq_len */
    posenc_model_free(m);

    m = load("extra/falcon-rw-1b.json");
    b = posenc_model_bias(m);
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_ALIBI);
    assert_int_equal(b->alibi_kind, POSENC_ALIBI_FALCON);
    assert_int_equal(b->heads, 32);
    posenc_model_free(m);
}

static void test_extra_rope(void **state)
{
    (void)state;
    posenc_model *m = load("extra/qwen2-vl-7b.json");
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_DEFAULT);    /* mrope -> default */
    assert_int_equal(c.n_mrope_section, 3);
    assert_int_equal(c.mrope_section[0], 16);
    assert_int_equal(c.mrope_section[1], 24);
    assert_int_equal(c.mrope_section[2], 24);
    assert_false(c.mrope_interleaved);
    assert_int_equal(c.head_dim, 128);                /* 3584 / 28 */
    posenc_model_free(m);

    m = load("extra/pythia-1b.json");
    c = rope(m, NULL);
    assert_string_equal(c.theta_source, "rotary_emb_base");
    assert_int_equal(c.head_dim, 256);                /* 2048 / 8 */
    assert_int_equal(c.rotary_dim, 64);               /* rotary_pct 0.25, honoured */
    posenc_model_free(m);

    m = load("extra/llama-dynamic.json");
    c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_DYNAMIC);
    assert_close(c.factor, 2.0, 0, 0);
    assert_note(m, "dynamic");
    posenc_model_free(m);

    m = load("extra/longchat-7b-16k-linear.json");
    c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_LINEAR);
    assert_close(c.factor, 8.0, 0, 0);
    assert_close(c.theta, 1e4, 0, 0);                 /* llama class default */
    assert_note(m, "class default");
    posenc_model_free(m);

    m = load("extra/deepseek-v2-lite.json");
    c = rope(m, NULL);
    assert_int_equal(c.style, POSENC_STYLE_GPTJ);     /* complex pairs */
    assert_int_equal(c.softmax_mscale, 0);            /* HF V2 omits it */
    assert_close(c.mscale, 0.707, 0, 0);
    assert_note(m, "omits");
    posenc_model_free(m);

    m = load("extra/phi-2.json");
    c = rope(m, NULL);
    assert_int_equal(c.head_dim, 80);                 /* 2560 / 32 */
    assert_int_equal(c.rotary_dim, 32);               /* int(80 * 0.4), phi honours prf */
    posenc_model_free(m);

    m = load("extra/phi-3-mini-128k.json");
    c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_LONGROPE);   /* "su" -> longrope */
    assert_int_equal(c.original_max_position_embeddings, 4096);
    assert_close(c.factor, 131072.0 / 4096.0, 0, 0);  /* no factor: M / M0 */
    assert_int_equal(c.n_short_factor, 48);           /* 96 / 2 */
    assert_int_equal(c.n_long_factor, 48);
    assert_close(c.short_factor[0], 1.0, 0, 0);
    assert_close(c.long_factor[0], 1.07, 0, 0);
    assert_note(m, "longrope");
    posenc_model_free(m);
}

/* ---- precedence (convert_rope_params_to_dict, standardize_rope_params) ---- */

static void test_precedence(void **state)
{
    (void)state;
    /* non-empty legacy rope_scaling replaces rope_parameters, theta included */
    posenc_model *m = parse_ok("{" LL ",'rope_scaling':{'rope_type':'linear','factor':2},"
                               "'rope_parameters':{'rope_type':'default','rope_theta':50000}}");
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_LINEAR);
    assert_close(c.theta, 10000.0, 0, 0);
    assert_string_equal(c.theta_source, "default");
    posenc_model_free(m);
    /* an empty rope_scaling does not */
    m = parse_ok("{" LL ",'rope_scaling':{},'rope_parameters':{'rope_type':'linear','factor':3}}");
    c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_LINEAR);
    assert_close(c.factor, 3.0, 0, 0);
    posenc_model_free(m);
    /* "type" alias; "rope_type" wins over it */
    m = parse_ok("{" LL ",'rope_scaling':{'type':'linear','factor':2}}");
    assert_int_equal(rope(m, NULL).type, POSENC_ROPE_LINEAR);
    posenc_model_free(m);
    m = parse_ok("{" LL ",'rope_scaling':{'rope_type':'linear','type':'dynamic','factor':2}}");
    assert_int_equal(rope(m, NULL).type, POSENC_ROPE_LINEAR);
    posenc_model_free(m);
    /* theta inside the dict beats the top-level key */
    m = parse_ok("{" LL ",'rope_theta':10000,'rope_parameters':{'rope_type':'default',"
                 "'rope_theta':500000}}");
    c = rope(m, NULL);
    assert_close(c.theta, 500000.0, 0, 0);
    assert_string_equal(c.theta_source, "rope_parameters.rope_theta");
    posenc_model_free(m);
    m = parse_ok("{" LL ",'rope_theta':250000,'rope_parameters':{'rope_type':'default'}}");
    c = rope(m, NULL);
    assert_close(c.theta, 250000.0, 0, 0);
    assert_string_equal(c.theta_source, "rope_theta");
    posenc_model_free(m);
    /* top-level original_max_position_embeddings beats the dict for llama3/yarn/longrope */
    m = parse_ok("{" LL ",'original_max_position_embeddings':2048,'rope_scaling':{"
                 "'rope_type':'llama3','factor':8,'low_freq_factor':1,'high_freq_factor':4,"
                 "'original_max_position_embeddings':1024}}");
    assert_int_equal(rope(m, NULL).original_max_position_embeddings, 2048);
    posenc_model_free(m);
    /* missing M0 is filled from max_position_embeddings */
    m = parse_ok("{" LL ",'rope_scaling':{'rope_type':'yarn','factor':4}}");
    c = rope(m, NULL);
    assert_int_equal(c.original_max_position_embeddings, 4096);
    assert_note(m, "filled from max_position_embeddings");
    posenc_model_free(m);
}

static void test_text_config(void **state)
{
    (void)state;
    /* top-level keys are not inherited into text_config */
    posenc_model *m = parse_ok("{'model_type':'llava','rope_theta':500000,"
                               "'max_position_embeddings':9999,'text_config':{"
                               "'model_type':'llama','hidden_size':256,'num_attention_heads':4,"
                               "'max_position_embeddings':4096}}");
    assert_string_equal(posenc_model_type(m), "llama");
    posenc_rope_config c = rope(m, NULL);
    assert_close(c.theta, 10000.0, 0, 0);
    assert_int_equal(c.max_position_embeddings, 4096);
    posenc_model_free(m);
    /* a text_config without model_type takes the composite's text class (gemma3 -> gemma3_text:
     * two layer types, full theta default 1e6, sliding 1e4) */
    m = parse_ok("{'model_type':'gemma3','text_config':{'hidden_size':1152,"
                 "'num_attention_heads':4,'max_position_embeddings':32768}}");
    assert_int_equal(posenc_model_layer_type_count(m), 2);
    c = rope(m, "full_attention");
    assert_close(c.theta, 1e6, 0, 0);
    assert_int_equal(c.head_dim, 256);                /* gemma3_text class default */
    assert_close(rope(m, "sliding_attention").theta, 1e4, 0, 0);
    posenc_model_free(m);
    /* flat legacy multimodal config: top-level keys, text class defaults (theta 1e6) */
    m = parse_ok("{'model_type':'qwen2_5_vl','hidden_size':2048,'num_attention_heads':16,"
                 "'max_position_embeddings':128000,'rope_scaling':{'type':'mrope',"
                 "'mrope_section':[16,24,24]}}");
    c = rope(m, NULL);
    assert_close(c.theta, 1e6, 0, 0);
    assert_int_equal(c.type, POSENC_ROPE_DEFAULT);
    assert_int_equal(c.n_mrope_section, 3);
    posenc_model_free(m);
    /* text_config must be an object */
    parse_fail("{'model_type':'x','text_config':3}", POSENC_ECONFIG,
               "text_config must be an object");
}

/* ---- class defaults (head_dim, partial_rotary_factor, default_theta) ---- */

static void test_class_defaults(void **state)
{
    (void)state;
    static const struct { const char *mt; double theta; } th[] = {
        { "mixtral", 1e6 }, { "gpt_oss", 1.5e5 }, { "minimax_m2", 5e6 }, { "cohere", 5e5 },
        { "llama4_text", 5e5 }, { "qwen3_vl_text", 5e5 }, { "smollm3", 2e6 }, { "llama", 1e4 },
    };
    char buf[512];
    for (size_t i = 0; i < sizeof th / sizeof *th; i++) {
        snprintf(buf, sizeof buf, "{'model_type':'%s','hidden_size':1024,'num_attention_heads':8,"
                 "'head_dim':128,'max_position_embeddings':8192,'rope_parameters':"
                 "{'rope_type':'default'}}", th[i].mt);
        posenc_model *m = parse_ok(buf);
        posenc_rope_config c = rope(m, NULL);
        assert_close(c.theta, th[i].theta, 0, 0);
        assert_string_equal(c.theta_source, "default");
        assert_note(m, "class default");
        posenc_model_free(m);
    }
    /* head_dim class defaults vs hidden // heads */
    static const struct { const char *mt; int hd; } hd[] = {
        { "qwen3", 128 }, { "gemma3_text", 256 }, { "gpt_oss", 64 }, { "glm4", 128 },
        { "qwen3_next", 256 }, { "llama", 1024 / 16 }, { "mistral", 1024 / 16 },
    };
    for (size_t i = 0; i < sizeof hd / sizeof *hd; i++) {
        snprintf(buf, sizeof buf, "{'model_type':'%s','hidden_size':1024,'num_attention_heads':16,"
                 "'max_position_embeddings':8192}", hd[i].mt);
        posenc_model *m = parse_ok(buf);
        size_t n = posenc_model_layer_type_count(m);
        posenc_rope_config c = rope(m, n ? posenc_model_layer_type_name(m, 0) : NULL);
        assert_int_equal(c.head_dim, hd[i].hd);
        posenc_model_free(m);
    }
    /* prf class defaults: qwen3_next 0.25, stablelm 0.25, glm 0.5 (and gptj style) */
    posenc_model *m = parse_ok("{'model_type':'stablelm','hidden_size':2048,"
                               "'num_attention_heads':32,'max_position_embeddings':4096}");
    assert_int_equal(rope(m, NULL).rotary_dim, 16);   /* int(64 * 0.25) */
    posenc_model_free(m);
    m = parse_ok("{'model_type':'glm','hidden_size':4096,'num_attention_heads':32,"
                 "'max_position_embeddings':8192}");
    posenc_rope_config c = rope(m, NULL);
    assert_int_equal(c.rotary_dim, 64);               /* head_dim default 128 * 0.5 */
    assert_int_equal(c.style, POSENC_STYLE_GPTJ);     /* interleaved inside apply */
    posenc_model_free(m);
}

/* ---- partial_rotary_factor (default init vs scaled inits) ---- */

static void test_prf(void **state)
{
    (void)state;
    /* llama default ignores prf (note), yarn honours it */
    posenc_model *m = parse_ok("{" LL ",'partial_rotary_factor':0.5}");
    assert_int_equal(rope(m, NULL).rotary_dim, 64);
    assert_note(m, "is ignored");
    posenc_model_free(m);
    m = parse_ok("{" LL ",'partial_rotary_factor':0.5,'rope_scaling':{'rope_type':'yarn',"
                 "'factor':2}}");
    assert_int_equal(rope(m, NULL).rotary_dim, 32);
    posenc_model_free(m);
    /* int() truncates: int(100 * 0.29) = 28, not 29 */
    m = parse_ok("{'model_type':'llama','hidden_size':400,'num_attention_heads':4,"
                 "'max_position_embeddings':4096,'partial_rotary_factor':0.29,"
                 "'rope_scaling':{'rope_type':'linear','factor':2}}");
    assert_int_equal(rope(m, NULL).rotary_dim, 28);
    posenc_model_free(m);
    /* scaled: top-level attribute beats the dict; default (phi): the dict beats top-level */
    m = parse_ok("{" LL ",'partial_rotary_factor':0.5,'rope_parameters':{'rope_type':'linear',"
                 "'factor':2,'partial_rotary_factor':0.25}}");
    assert_int_equal(rope(m, NULL).rotary_dim, 32);
    posenc_model_free(m);
    m = parse_ok("{'model_type':'phi','hidden_size':256,'num_attention_heads':4,"
                 "'partial_rotary_factor':0.5,'rope_parameters':{'rope_type':'default',"
                 "'partial_rotary_factor':0.25}}");
    assert_int_equal(rope(m, NULL).rotary_dim, 16);
    posenc_model_free(m);
    /* MiniMax-M2 without rotary_dim: prf honoured by its default */
    m = parse_ok("{'model_type':'minimax_m2','head_dim':128,'hidden_size':3072,"
                 "'num_attention_heads':48,'partial_rotary_factor':0.5}");
    assert_int_equal(rope(m, NULL).rotary_dim, 64);
    posenc_model_free(m);
}

/* ---- renames (per-model conversions in configuration_*.py) ---- */

static void test_renames(void **state)
{
    (void)state;
    /* GPT-J: rope_theta ignored, rotary_dim null = full head, missing = 64 */
    posenc_model *m = parse_ok("{'model_type':'gptj','n_embd':1024,'n_head':8,'rope_theta':5e5,"
                               "'rotary_dim':null}");
    posenc_rope_config c = rope(m, NULL);
    assert_close(c.theta, 1e4, 0, 0);
    assert_int_equal(c.rotary_dim, 128);
    assert_int_equal(c.max_position_embeddings, 2048); /* n_positions default */
    assert_note(m, "hard-codes");
    posenc_model_free(m);
    m = parse_ok("{'model_type':'codegen','n_embd':1024,'n_head':8,'n_positions':4096}");
    c = rope(m, NULL);
    assert_int_equal(c.rotary_dim, 64);
    assert_int_equal(c.style, POSENC_STYLE_GPTJ);
    assert_int_equal(c.max_position_embeddings, 4096);
    posenc_model_free(m);
    /* GPT-NeoX: rope_theta ignored, rotary_emb_base used, rotary_pct default 0.25 */
    m = parse_ok("{'model_type':'gpt_neox','hidden_size':1024,'num_attention_heads':8,"
                 "'rope_theta':5e5,'rotary_emb_base':20000,'max_position_embeddings':2048}");
    c = rope(m, NULL);
    assert_close(c.theta, 20000.0, 0, 0);
    assert_int_equal(c.rotary_dim, 32);               /* int(128 * 0.25) */
    posenc_model_free(m);
    m = parse_ok("{'model_type':'gpt_neox','hidden_size':1024,'num_attention_heads':8,"
                 "'rope_theta':5e5}");
    assert_close(rope(m, NULL).theta, 10000.0, 0, 0); /* rotary_emb_base default */
    posenc_model_free(m);
    m = parse_ok("{'model_type':'gpt_neox_japanese','hidden_size':1024,"
                 "'num_attention_heads':8}");
    assert_int_equal(rope(m, NULL).rotary_dim, 128);  /* rotary_pct default 1.0 */
    posenc_model_free(m);
    /* Phi-3: 'yarn' -> longrope; M0 field default 4096 beats the dict */
    m = parse_ok("{'model_type':'phi3','hidden_size':32,'num_attention_heads':4,"
                 "'max_position_embeddings':16384,'rope_scaling':{'type':'yarn',"
                 "'original_max_position_embeddings':8192,"
                 "'short_factor':[1,1,1,1],'long_factor':[2,2,2,2]}}");
    c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_LONGROPE);
    assert_int_equal(c.original_max_position_embeddings, 4096);
    assert_close(c.factor, 4.0, 0, 0);                /* 16384 / 4096 */
    posenc_model_free(m);
    /* Qwen3-VL text: default interleaved sections [24, 20, 20] */
    m = parse_ok("{'model_type':'qwen3_vl','text_config':{'model_type':'qwen3_vl_text',"
                 "'hidden_size':4096,'num_attention_heads':32,'head_dim':128,"
                 "'max_position_embeddings':262144}}");
    c = rope(m, NULL);
    assert_int_equal(c.mrope_section[0], 24);
    assert_int_equal(c.mrope_section[1], 20);
    assert_int_equal(c.mrope_section[2], 20);
    assert_true(c.mrope_interleaved);
    assert_close(c.theta, 5e5, 0, 0);
    posenc_model_free(m);
    /* gpt_oss without rope params: yarn 32, truncate false, M0 4096 */
    m = parse_ok("{'model_type':'gpt_oss','hidden_size':2880,'num_attention_heads':64,"
                 "'max_position_embeddings':131072}");
    c = rope(m, NULL);
    assert_int_equal(c.type, POSENC_ROPE_YARN);
    assert_close(c.factor, 32.0, 0, 0);
    assert_int_equal(c.truncate, 0);
    assert_int_equal(c.original_max_position_embeddings, 4096);
    assert_close(c.theta, 1.5e5, 0, 0);
    posenc_model_free(m);
    /* DeepSeek: head_dim = qk_rope_head_dim (default 64), rope_interleave false -> neox */
    m = parse_ok("{'model_type':'deepseek_v3','hidden_size':7168,'num_attention_heads':128,"
                 "'rope_interleave':false,'max_position_embeddings':4096}");
    c = rope(m, NULL);
    assert_int_equal(c.head_dim, 64);
    assert_int_equal(c.style, POSENC_STYLE_NEOX);
    assert_int_equal(c.softmax_mscale, 0);            /* not yarn */
    posenc_model_free(m);
    /* cohere and llama4_text: gptj style */
    m = parse_ok("{'model_type':'cohere','hidden_size':1024,'num_attention_heads':8}");
    assert_int_equal(rope(m, NULL).style, POSENC_STYLE_GPTJ);
    posenc_model_free(m);
    /* ChatGLM2/3: kv_channels, theta 10000 * rope_ratio, half the head rotated */
    m = parse_ok("{'model_type':'chatglm','hidden_size':4096,'num_attention_heads':32,"
                 "'kv_channels':128,'rope_ratio':500,'seq_length':32768}");
    c = rope(m, NULL);
    assert_close(c.theta, 5e6, 0, 0);
    assert_int_equal(c.rotary_dim, 64);
    assert_int_equal(c.style, POSENC_STYLE_GPTJ);
    posenc_model_free(m);
    parse_fail("{'model_type':'chatglm','hidden_size':4096,'num_attention_heads':32,"
               "'position_encoding_2d':true}", POSENC_EUNSUPPORTED, "position_encoding_2d");
}

/* ---- per layer type (standardize_rope_params with layer_types, Gemma) ---- */

static void test_layer_types(void **state)
{
    (void)state;
    posenc_model *m = parse_ok("{" LL ",'rope_theta':500000,'original_max_position_embeddings':"
                               "1024,'layer_types':['full_attention','sliding_attention',"
                               "'full_attention'],'rope_parameters':{'full_attention':{"
                               "'rope_type':'yarn','factor':4,'truncate':false},"
                               "'sliding_attention':{'rope_type':'default'}}}");
    assert_int_equal(posenc_model_layer_type_count(m), 2);
    posenc_rope_config f = rope(m, "full_attention"), s = rope(m, "sliding_attention");
    assert_int_equal(f.type, POSENC_ROPE_YARN);
    assert_close(f.theta, 500000.0, 0, 0);            /* setdefault from rope_theta */
    assert_close(s.theta, 500000.0, 0, 0);
    assert_int_equal(f.original_max_position_embeddings, 4096); /* Case 2: setdefault(M) */
    assert_int_equal(f.truncate, 1);                  /* read from the top level only */
    assert_note(m, "truncate is not read");
    posenc_model_free(m);
    /* keys not a subset of layer_types: one flat dict */
    m = parse_ok("{" LL ",'layer_types':['full_attention'],'rope_parameters':{"
                 "'rope_type':'linear','factor':2}}");
    assert_int_equal(posenc_model_layer_type_count(m), 0);
    assert_int_equal(rope(m, NULL).type, POSENC_ROPE_LINEAR);
    posenc_model_free(m);
    /* gemma3_text flat: defaults 1e6 / 1e4, head_dim 256 */
    m = parse_ok("{'model_type':'gemma3_text','hidden_size':1152,'num_attention_heads':4,"
                 "'max_position_embeddings':32768,'rope_scaling':null}");
    f = rope(m, "full_attention");
    s = rope(m, "sliding_attention");
    assert_close(f.theta, 1e6, 0, 0);
    assert_close(s.theta, 1e4, 0, 0);
    assert_int_equal(f.type, POSENC_ROPE_DEFAULT);
    posenc_model_free(m);
    /* gemma4_text without rope_parameters: full proportional prf 0.25 theta 1e6 on
     * global_head_dim 512; sliding default 1e4 on head_dim 256 */
    m = parse_ok("{'model_type':'gemma4_text','hidden_size':2816,'num_attention_heads':16,"
                 "'max_position_embeddings':131072}");
    f = rope(m, "full_attention");
    s = rope(m, "sliding_attention");
    assert_int_equal(f.type, POSENC_ROPE_PROPORTIONAL);
    assert_close(f.partial_rotary_factor, 0.25, 0, 0);
    assert_int_equal(f.head_dim, 512);
    assert_close(f.theta, 1e6, 0, 0);
    assert_int_equal(s.head_dim, 256);
    assert_close(s.theta, 1e4, 0, 0);
    posenc_model_free(m);
    /* per-layer-looking dict without layer_types: one flat dict (default), with a note */
    m = parse_ok("{" LL ",'rope_parameters':{'full_attention':{'rope_type':'linear',"
                 "'factor':2}}}");
    assert_int_equal(posenc_model_layer_type_count(m), 0);
    assert_int_equal(rope(m, NULL).type, POSENC_ROPE_DEFAULT);
    assert_note(m, "no layer_types");
    posenc_model_free(m);
    /* a per-layer entry must be an object */
    parse_fail("{" LL ",'layer_types':['a','b'],'rope_parameters':{'a':{},'b':3}}",
               POSENC_ECONFIG, "rope_parameters.b must be an object");
}

/* ---- scaled-type keys (the init functions' required and optional keys) ---- */

static void test_yarn_keys(void **state)
{
    (void)state;
    /* beta_fast 0 -> 32 (`or`), beta_slow null -> 1, truncate default true, attention_factor */
    posenc_model *m = parse_ok("{" LL ",'rope_scaling':{'rope_type':'yarn','factor':4,"
                               "'beta_fast':0,'beta_slow':null,'attention_factor':1.5}}");
    posenc_rope_config c = rope(m, NULL);
    assert_close(c.beta_fast, 32.0, 0, 0);
    assert_close(c.beta_slow, 1.0, 0, 0);
    assert_int_equal(c.truncate, 1);
    assert_int_equal(c.has_attention_factor, 1);
    assert_close(c.attention_factor, 1.5, 0, 0);
    posenc_model_free(m);
    /* factor null -> M / M0 */
    m = parse_ok("{" LL ",'rope_scaling':{'rope_type':'yarn','factor':null,"
                 "'original_max_position_embeddings':1024}}");
    assert_close(rope(m, NULL).factor, 4.0, 0, 0);
    posenc_model_free(m);
    /* longrope without factor: M / M0 */
    m = parse_ok("{" LL ",'original_max_position_embeddings':2048,'rope_scaling':{"
                 "'rope_type':'longrope','short_factor':[" "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
                 "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],'long_factor':[2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,"
                 "2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2]}}");
    c = rope(m, NULL);
    assert_close(c.factor, 2.0, 0, 0);
    assert_int_equal(c.n_long_factor, 32);
    posenc_model_free(m);
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    (void)state;
    static const struct { const char *json; posenc_status code; const char *msg; } cases[] = {
        { "{" LL ",'rope_scaling':{'rope_type':'foo'}}", POSENC_ECONFIG,
          "unknown rope_type 'foo' (known: default, linear, dynamic, yarn, longrope, llama3, "
          "proportional)" },
        { "{" LL ",'rope_scaling':{'type':'su','factor':2}}", POSENC_ECONFIG,
          "unknown rope_type 'su'" },                 /* su is Phi-3 only */
        { "{" LL ",'rope_scaling':{'rope_type':'linear','factor':0}}", POSENC_ECONFIG,
          "rope_scaling.factor must be > 0" },
        { "{" LL ",'rope_scaling':{'rope_type':'linear','factor':-2}}", POSENC_ECONFIG,
          "rope_scaling.factor must be > 0" },
        { "{" LL ",'rope_scaling':{'rope_type':'linear'}}", POSENC_ECONFIG,
          "rope_scaling.factor is missing (required for rope_type linear)" },
        { "{" LL ",'rope_scaling':{'rope_type':'yarn'}}", POSENC_ECONFIG,
          "rope_scaling.factor is missing" },
        { "{" LL ",'rope_scaling':{'rope_type':'dynamic','factor':null}}", POSENC_ECONFIG,
          "rope_scaling.factor is missing" },
        { "{" LL ",'rope_scaling':{'rope_type':'llama3','factor':8,'high_freq_factor':4}}",
          POSENC_ECONFIG, "rope_scaling.low_freq_factor is missing" },
        { "{" LL ",'rope_scaling':{'rope_type':'llama3','factor':8,'low_freq_factor':1}}",
          POSENC_ECONFIG, "rope_scaling.high_freq_factor is missing" },
        { "{" LL ",'rope_scaling':{'rope_type':'longrope','short_factor':[1,1],"
          "'long_factor':[1,1]}}", POSENC_ECONFIG,
          "rope_scaling.short_factor has 2 entries, expected rotary_dim/2 = 32" },
        { "{" LL ",'rope_scaling':{'rope_type':'longrope'}}", POSENC_ECONFIG,
          "rope_scaling.short_factor is missing" },
        { "{" LL ",'rope_scaling':{'rope_type':'longrope','short_factor':'x'}}", POSENC_ECONFIG,
          "short_factor must be a list" },
        /* a model_type the registry does not know has no class default to fill it */
        { "{'model_type':'not_a_model','hidden_size':256,'num_attention_heads':4,"
          "'rope_scaling':{'rope_type':'dynamic','factor':2}}", POSENC_ECONFIG,
          "max_position_embeddings is missing" },
        { "{" LL ",'rope_theta':0}", POSENC_ECONFIG, "rope_theta must be > 0" },
        { "{" LL ",'rope_theta':-5}", POSENC_ECONFIG, "rope_theta must be > 0" },
        { "{" LL ",'rope_parameters':{'rope_theta':0}}", POSENC_ECONFIG,
          "rope_parameters.rope_theta must be > 0" },
        { "{" LL ",'rope_theta':'10000'}", POSENC_ECONFIG, "rope_theta must be a number" },
        { "{" LL ",'rope_theta':Infinity}", POSENC_ECONFIG, "rope_theta must be a finite" },
        { "{" LL ",'rope_theta':NaN}", POSENC_ECONFIG, "rope_theta must be a finite" },
        { "{" LL ",'rope_theta':1e999}", POSENC_ECONFIG, "rope_theta must be a finite" },
        { "{" LL ",'head_dim':0}", POSENC_ECONFIG, "head_dim must be an integer in [1, 1024]" },
        { "{" LL ",'head_dim':64.5}", POSENC_ECONFIG, "head_dim must be an integer" },
        { "{" LL ",'head_dim':1e12}", POSENC_ECONFIG, "head_dim must be an integer" },
        { "{" LL ",'head_dim':33}", POSENC_ECONFIG, "rotary dimension 33" },   /* odd */
        { "{" LL ",'partial_rotary_factor':0,'rope_scaling':{'rope_type':'linear','factor':2}}",
          POSENC_ECONFIG, "partial_rotary_factor must be in (0, 1]" },
        { "{" LL ",'partial_rotary_factor':1.5}", POSENC_ECONFIG,
          "partial_rotary_factor must be in (0, 1]" },
        { "{'model_type':'llama','hidden_size':256,'num_attention_heads':4,"
          "'max_position_embeddings':-4}", POSENC_ECONFIG, "max_position_embeddings must be" },
        { "{'model_type':'llama','hidden_size':256,'num_attention_heads':4,"
          "'max_position_embeddings':1e300}", POSENC_ECONFIG, "max_position_embeddings must be" },
        { "{" LL ",'rope_scaling':'linear'}", POSENC_ECONFIG,
          "rope_scaling must be an object or null" },
        { "{" LL ",'rope_scaling':{'rope_type':5}}", POSENC_ECONFIG,
          "rope_scaling.rope_type must be a string" },
        { "{" LL ",'rope_scaling':{'rope_type':'yarn','factor':2,'truncate':'no'}}",
          POSENC_ECONFIG, "rope_scaling.truncate must be true or false" },
        { "{" LL ",'rope_scaling':{'rope_type':'default','mrope_section':[10,10,10]}}",
          POSENC_ECONFIG, "mrope_section [10, 10, 10] sums to 30, expected rotary_dim/2 = 32" },
        { "{" LL ",'rope_scaling':{'type':'mrope'}}", POSENC_ECONFIG,
          "mrope_section is missing" },
        { "{'model_type':'not_a_model','rope_theta':10000}", POSENC_ECONFIG, "cannot determine head_dim" },
        { "{'model_type':'llama','hidden_size':256,'num_attention_heads':0}", POSENC_ECONFIG,
          "num_attention_heads must be an integer" },
        { "{'model_type':5}", POSENC_ECONFIG, "model_type must be a string" },
        { "{'model_type':'t5','relative_attention_num_buckets':2}", POSENC_ECONFIG,
          "relative_attention_num_buckets 2" },
        { "{'model_type':'bloom','hidden_size':64}", POSENC_ECONFIG,
          "num_attention_heads is missing (needed for ALiBi)" },
        { "{'model_type':'mpt','n_heads':8,'d_model':64,'attn_config':{'alibi_bias_max':0}}",
          POSENC_ECONFIG, "attn_config.alibi_bias_max must be > 0" },
        { "{'model_type':'bert','position_embedding_type':'rotary'}", POSENC_ECONFIG,
          "unknown position_embedding_type 'rotary'" },
        { "{" LL ",'layer_types':'full'}", POSENC_ECONFIG, "layer_types must be a list" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        parse_fail(cases[i].json, cases[i].code, cases[i].msg);
}

static void test_non_rope_rules(void **state)
{
    (void)state;
    /* MPT alibi_bias_max; alibi false -> learned */
    posenc_model *m = parse_ok("{'model_type':'mpt','n_heads':12,'d_model':768,'max_seq_len':"
                               "4096,'attn_config':{'alibi':true,'alibi_bias_max':16}}");
    assert_close(posenc_model_bias(m)->alibi_bias_max, 16.0, 0, 0);
    assert_int_equal(posenc_model_bias(m)->heads, 12);
    assert_int_equal(posenc_model_max_positions(m), 4096);
    posenc_model_free(m);
    m = parse_ok("{'model_type':'mpt','n_heads':12,'d_model':768,'attn_config':{'alibi':false}}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_LEARNED);
    posenc_model_free(m);
    /* Baichuan 7B (hidden 4096) and 13B with rope keys use RoPE */
    m = parse_ok("{'model_type':'baichuan','hidden_size':4096,'num_attention_heads':32,"
                 "'max_position_embeddings':4096}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_ROPE);
    assert_int_equal(rope(m, NULL).head_dim, 128);
    posenc_model_free(m);
    m = parse_ok("{'model_type':'baichuan','hidden_size':5120,'num_attention_heads':40,"
                 "'rope_theta':10000,'model_max_length':4096}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_ROPE);
    assert_int_equal(rope(m, NULL).max_position_embeddings, 4096);
    posenc_model_free(m);
    /* legacy Falcon with alibi true */
    m = parse_ok("{'model_type':'RefinedWeb','alibi':true,'n_head':16,'hidden_size':1024}");
    assert_int_equal(posenc_model_bias(m)->alibi_kind, POSENC_ALIBI_FALCON);
    assert_int_equal(posenc_model_bias(m)->heads, 16);
    posenc_model_free(m);
    /* T5 decoder and defaults */
    m = parse_ok("{'model_type':'mt5','is_decoder':true,'relative_attention_max_distance':64}");
    const posenc_bias_config *b = posenc_model_bias(m);
    assert_int_equal(b->is_decoder, 1);
    assert_int_equal(b->num_buckets, 32);
    assert_int_equal(b->max_distance, 64);
    assert_int_equal(b->heads, 8);
    posenc_model_free(m);
    /* BERT relative_key -> Shaw with k = M - 1; RoBERTa padding offset */
    m = parse_ok("{'model_type':'bert','position_embedding_type':'relative_key',"
                 "'hidden_size':768,'num_attention_heads':12,'max_position_embeddings':512}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_SHAW);
    assert_int_equal(posenc_model_bias(m)->max_relative_position, 511);
    posenc_model_free(m);
    m = parse_ok("{'model_type':'roberta','hidden_size':768,'num_attention_heads':12,"
                 "'max_position_embeddings':514,'pad_token_id':1}");
    assert_int_equal(posenc_model_bias(m)->padding_idx, 1);
    posenc_model_free(m);
    m = parse_ok("{'model_type':'opt','hidden_size':768,'num_attention_heads':12,"
                 "'max_position_embeddings':2048}");
    assert_string_equal(posenc_model_bias(m)->learned_tensor, "decoder.embed_positions.weight");
    assert_note(m, "+ 2");
    posenc_model_free(m);
    /* nemotron_h: NoPE; posenc_model_rope refuses */
    m = parse_ok("{'model_type':'nemotron_h','rope_theta':10000,'hidden_size':1024,"
                 "'num_attention_heads':8}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_NONE);
    posenc_rope_config c;
    posenc_error err = { 0 };
    assert_int_equal(posenc_model_rope(m, NULL, &c, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "not RoPE"));
    posenc_model_free(m);
}

/* ---- the reader (formats/io/config.c) ---- */

static void test_reader(void **state)
{
    (void)state;
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    const char *bad = "{\n  \"model_type\": \"llama\",\n  \"x\": [1, 2,,]\n}\n";
    assert_int_equal(posenc_config_parse(bad, strlen(bad), "c.json", NULL, &m, &err), POSENC_ECONFIG);
    assert_string_equal(err.msg, "'c.json': invalid JSON near line 3");
    const char *arr = "[1, 2]";
    assert_int_equal(posenc_config_parse(arr, strlen(arr), "c.json", NULL, &m, &err), POSENC_ECONFIG);
    assert_string_equal(err.msg, "'c.json': top level is not a JSON object");
    assert_int_equal(posenc_config_parse("  \n", 3, "c.json", NULL, &m, &err), POSENC_ECONFIG);
    assert_non_null(strstr(err.msg, "empty"));
    const char *trail = "{}\n{}";
    assert_int_equal(posenc_config_parse(trail, strlen(trail), "c.json", NULL, &m, &err),
                     POSENC_ECONFIG);
    assert_non_null(strstr(err.msg, "invalid JSON near line 2"));
    /* not NUL-terminated: only len bytes are read */
    char buf[64];
    const char *ok = "{\"model_type\":\"gpt2\"}";
    memcpy(buf, ok, strlen(ok));
    memset(buf + strlen(ok), 'x', sizeof buf - strlen(ok));
    assert_int_equal(posenc_config_parse(buf, strlen(ok), "c.json", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_LEARNED);
    posenc_model_free(m);
    m = NULL;
    /* "Infinity" inside a string is left alone */
    const char *str = "{\"model_type\":\"gpt2\",\"note\":\"Infinity \\\" NaN\"}";
    assert_int_equal(posenc_config_parse(str, strlen(str), "c.json", NULL, &m, &err), POSENC_OK);
    posenc_model_free(m);
    m = NULL;
    assert_int_equal(posenc_config_load("no-such-dir/config.json", NULL, &m, &err), POSENC_EIO);
    assert_string_equal(err.msg, "cannot open 'no-such-dir/config.json': No such file or "
                                 "directory");
    assert_int_equal(posenc_config_load(tu_data_dir(), NULL, &m, &err), POSENC_EIO);
    assert_non_null(strstr(err.msg, "a directory without config.json"));
    assert_null(m);
    posenc_model_free(NULL);
}

static void test_names(void **state)
{
    (void)state;
    posenc_encoding e;
    posenc_style s;
    assert_string_equal(posenc_encoding_name(POSENC_ENC_T5), "t5");
    assert_string_equal(posenc_encoding_name(POSENC_ENC_LEARNED), "learned");
    assert_int_equal(posenc_encoding_parse("alibi", &e, NULL), POSENC_OK);
    assert_int_equal(e, POSENC_ENC_ALIBI);
    posenc_error err = { 0 };
    assert_int_equal(posenc_encoding_parse("xpos", &e, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "'xpos'"));
    assert_string_equal(posenc_rope_type_name(POSENC_ROPE_LONGROPE), "longrope");
    assert_string_equal(posenc_rope_type_name(POSENC_ROPE_PROPORTIONAL), "proportional");
    assert_string_equal(posenc_style_name(POSENC_STYLE_GPTJ), "gptj");
    assert_int_equal(posenc_style_parse("neox", &s, NULL), POSENC_OK);
    assert_int_equal(s, POSENC_STYLE_NEOX);
    assert_int_equal(posenc_style_parse("gptj", &s, NULL), POSENC_OK);
    assert_int_equal(s, POSENC_STYLE_GPTJ);
    assert_int_equal(posenc_style_parse("zigzag", &s, &err), POSENC_EINVAL);
}

/* Sinusoidal families: DistilBERT only with sinusoidal_pos_embds (else learned), XLM only with
 * sinusoidal_embeddings, Marian/Pegasus always, FSMT with fairseq's padding_idx = pad_token_id. */
static void test_sinusoidal(void **state)
{
    (void)state;
    posenc_model *m = parse_ok("{'model_type': 'distilbert', 'dim': 768, 'n_heads': 12, "
                               "'max_position_embeddings': 512, 'sinusoidal_pos_embds': true}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_SINUSOIDAL);
    assert_int_equal(posenc_model_bias(m)->d_model, 768);
    assert_int_equal(posenc_model_bias(m)->heads, 12);
    assert_int_equal(posenc_model_max_positions(m), 512);
    assert_int_equal(posenc_model_bias(m)->padding_idx, -1);
    posenc_model_free(m);
    m = parse_ok("{'model_type': 'distilbert', 'dim': 768, 'n_heads': 12, "
                 "'sinusoidal_pos_embds': false}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_LEARNED);
    posenc_model_free(m);
    m = parse_ok("{'model_type': 'xlm', 'emb_dim': 1024, 'n_heads': 8, "
                 "'sinusoidal_embeddings': true}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_SINUSOIDAL);
    assert_int_equal(posenc_model_bias(m)->d_model, 1024);
    posenc_model_free(m);
    m = parse_ok("{'model_type': 'marian', 'd_model': 512, 'encoder_attention_heads': 8}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_SINUSOIDAL);
    assert_int_equal(posenc_model_max_positions(m), 1024); /* MarianConfig default */
    posenc_model_free(m);
    m = parse_ok("{'model_type': 'fsmt', 'd_model': 1024, 'encoder_attention_heads': 16, "
                 "'pad_token_id': 1, 'max_position_embeddings': 1024}");
    assert_int_equal(posenc_model_encoding(m), POSENC_ENC_SINUSOIDAL);
    assert_int_equal(posenc_model_bias(m)->padding_idx, 1);
    assert_true(has_note(m, "padding_idx"));
    posenc_model_free(m);
    /* MarianConfig's d_model default (1024) fills a config that leaves it out */
    m = parse_ok("{'model_type': 'marian', 'encoder_attention_heads': 8}");
    assert_int_equal(posenc_model_bias(m)->d_model, 1024);
    assert_true(has_note(m, "model width (hidden_size) 1024 is the marian class default"));
    posenc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama31),
        cmocka_unit_test(test_mixtral_qwen3),
        cmocka_unit_test(test_qwen3_next_and_35),
        cmocka_unit_test(test_glm),
        cmocka_unit_test(test_gptj_file),
        cmocka_unit_test(test_gpt_oss_file),
        cmocka_unit_test(test_deepseek_kimi),
        cmocka_unit_test(test_llama4),
        cmocka_unit_test(test_mimo),
        cmocka_unit_test(test_minimax),
        cmocka_unit_test(test_gemma3_file),
        cmocka_unit_test(test_layer_of),
        cmocka_unit_test(test_gemma4_file),
        cmocka_unit_test(test_falcon_baichuan_nemotron),
        cmocka_unit_test(test_extra_nonrope),
        cmocka_unit_test(test_extra_rope),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_text_config),
        cmocka_unit_test(test_class_defaults),
        cmocka_unit_test(test_prf),
        cmocka_unit_test(test_renames),
        cmocka_unit_test(test_layer_types),
        cmocka_unit_test(test_yarn_keys),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_non_rope_rules),
        cmocka_unit_test(test_reader),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_sinusoidal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
