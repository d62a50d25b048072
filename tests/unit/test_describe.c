/* test_describe.c: the field table (lib/describe/describe.def), the values lib/describe/describe.c fills in, and
 * their renderings (formats/report/describe_out.c). Values are checked against closed forms in long
 * double, from huggingface/transformers src/transformers/modeling_rope_utils.py:
 * _compute_llama3_parameters (smoothed inv_freq), _compute_yarn_parameters get_mscale and
 * _compute_longrope_parameters (attention factor, short/long factors by seq_len); ALiBi's slopes
 * from src/transformers/models/bloom/modeling_bloom.py build_alibi_tensor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "formats/report/describe_out.h"
#include "lib/encodings/tables.h"
#include "posenc/config.h"
#include "posenc/io.h"
#include "posenc/vllm.h"

static posenc_model *parse(const char *json)
{
    posenc_error err = { 0 };
    posenc_model *m = NULL;
    assert_int_equal(posenc_config_parse(json, strlen(json), "config.json", NULL, &m, &err),
                     POSENC_OK);
    return m;
}

/* The description of m's RoPE at seq_len in prec (with vLLM's info for vllm). */
static pe_desc *describe(const posenc_model *m, posenc_precision prec, int64_t seq_len)
{
    posenc_error err = { 0 };
    static posenc_rope_config c;
    static posenc_rope_params p;
    posenc_vllm_info vi;
    assert_int_equal(posenc_model_rope(m, NULL, &c, &err), POSENC_OK);
    assert_int_equal(posenc_rope_params_for(&c, prec, posenc_model_family(m), seq_len, 0, &p, &vi,
                                            &err), POSENC_OK);
    pe_desc *d = pe_describe_new();
    assert_non_null(d);
    pe_describe_model(d, m);
    pe_describe_rope(d, &c, &p, &vi, prec, seq_len);
    assert_false(pe_describe_oom(d));
    return d;
}

static const pe_dval *get(const pe_desc *d, pe_dfield f)
{
    const pe_dval *v = pe_describe_get(d, f);
    assert_non_null(v);
    return v;
}

/* Every key once per scope and view (but the two pairs a description sets one of), groups
 * hold their members, a legacy row repeats a canonical row of its kind. */
static void test_table(void **state)
{
    (void)state;
    for (int a = 0; a < PE_DF_COUNT; a++) {
        const pe_dfield_def *x = pe_describe_def((pe_dfield)a);
        assert_non_null(x->key);
        assert_true(x->key[0] != '\0' && x->views != 0);
        if (x->parent != PE_DF_NONE)
            assert_int_equal(pe_describe_def(x->parent)->kind, PE_DK_GROUP);
        if (x->of != PE_DF_NONE) {
            assert_int_equal(pe_describe_def(x->of)->kind, x->kind);
            assert_int_equal(pe_describe_def(x->of)->of, PE_DF_NONE);
        }
        for (int b = a + 1; b < PE_DF_COUNT; b++) {
            const pe_dfield_def *y = pe_describe_def((pe_dfield)b);
            if (x->parent != y->parent || !(x->views & y->views) || strcmp(x->key, y->key))
                continue;
            int exclusive = (a == PE_DF_HEAD_DIM && b == PE_DF_BIAS_HEAD_DIM) ||
                            (a == PE_DF_HEADS && b == PE_DF_BIAS_HEADS);
            if (!exclusive)
                fail_msg("key '%s' twice in one scope (rows %d and %d)", x->key, a, b);
        }
    }
    assert_int_equal(pe_describe_find("long_factors_used", PE_DF_NONE, PE_DV_META),
                     PE_DF_LONG_FACTORS_USED);
    assert_int_equal(pe_describe_find("class", PE_DF_VLLM, PE_DV_INFO), PE_DF_VLLM_CLASS);
    assert_int_equal(pe_describe_find("inv_freq", PE_DF_NONE, PE_DV_META), PE_DF_COUNT);
    assert_null(pe_describe_def(PE_DF_COUNT));
}

static const char *LLAMA3 =
    "{\"model_type\":\"llama\",\"hidden_size\":4096,\"num_attention_heads\":32,"
    "\"max_position_embeddings\":131072,\"rope_theta\":500000.0,\"num_hidden_layers\":32,"
    "\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1.0,"
    "\"high_freq_factor\":4.0,\"original_max_position_embeddings\":8192}}";

/* Llama 3: a high frequency keeps theta^(-2i/d), a low one is divided by the factor
 * (_compute_llama3_parameters); the exact values are those rounded once. */
static void test_llama3_values(void **state)
{
    (void)state;
    posenc_model *m = parse(LLAMA3);
    pe_desc *d = describe(m, POSENC_PREC_EXACT, 0);
    assert_string_equal(get(d, PE_DF_ROPE_TYPE)->s, "llama3");
    assert_string_equal(get(d, PE_DF_ENCODING)->s, "rope");
    assert_true(get(d, PE_DF_THETA)->d == 500000.0 && get(d, PE_DF_FACTOR)->d == 8.0);
    assert_true(get(d, PE_DF_LOW_FREQ_FACTOR)->d == 1.0 && get(d, PE_DF_HIGH_FREQ_FACTOR)->d == 4.0);
    assert_int_equal(get(d, PE_DF_HEAD_DIM)->i, 128);
    assert_int_equal(get(d, PE_DF_ROTARY_DIM)->i, 128);
    assert_int_equal(get(d, PE_DF_NUM_LAYERS)->i, 32);
    assert_int_equal(get(d, PE_DF_ORIGINAL_MAX_POSITION_EMBEDDINGS)->i, 8192);
    assert_string_equal(get(d, PE_DF_PRECISION)->s, "exact");
    const pe_dval *inv = get(d, PE_DF_INV_FREQ);
    assert_int_equal(inv->n, 64);
    assert_int_equal(get(d, PE_DF_N_FREQ)->i, 64);
    /* i = 1: wavelength 2 pi / theta^(-2/128) < 8192 / 4: unchanged */
    long double f1 = powl(500000.0L, -2.0L / 128.0L);
    assert_close(inv->v[1], (double)f1, 2e-16, 0);
    /* i = 63: wavelength far above 8192 / 1: divided by 8 */
    long double f63 = powl(500000.0L, -126.0L / 128.0L) / 8.0L;
    assert_close(inv->v[63], (double)f63, 2e-16, 0);
    assert_close(get(d, PE_DF_ATTENTION_SCALING)->d, 1.0, 0, 0);
    assert_null(pe_describe_get(d, PE_DF_LONG_FACTORS_USED)); /* not LongRoPE */
    assert_null(pe_describe_get(d, PE_DF_VLLM));
    pe_describe_free(d);
    /* hf: transformers' float32 values */
    d = describe(m, POSENC_PREC_HF, 0);
    inv = get(d, PE_DF_INV_FREQ);
    assert_true(inv->v[1] == (double)(float)inv->v[1]);
    assert_close(inv->v[1], (double)f1, 1e-7, 0);
    assert_string_equal(get(d, PE_DF_ATTENTION_SCALING)->info_fmt, "%.9g");
    pe_describe_free(d);
    posenc_model_free(m);
}

/* YaRN without mscale: attention scaling 0.1 ln(factor) + 1 (_compute_yarn_parameters
 * get_mscale). */
static void test_yarn_values(void **state)
{
    (void)state;
    posenc_model *m = parse("{\"model_type\":\"qwen2\",\"hidden_size\":1024,\"num_attention_heads\":8,"
                            "\"max_position_embeddings\":16384,\"rope_theta\":1000000.0,"
                            "\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":4.0,"
                            "\"original_max_position_embeddings\":4096}}");
    pe_desc *d = describe(m, POSENC_PREC_EXACT, 0);
    assert_string_equal(get(d, PE_DF_ROPE_TYPE)->s, "yarn");
    assert_close(get(d, PE_DF_ATTENTION_SCALING)->d, (double)(0.1L * logl(4.0L) + 1.0L), 1e-15, 0);
    assert_true(get(d, PE_DF_BETA_FAST)->d == 32.0 && get(d, PE_DF_BETA_SLOW)->d == 1.0);
    assert_int_equal(get(d, PE_DF_TRUNCATE)->i, 1);
    pe_describe_free(d);
    posenc_model_free(m);
}

static const char *PHI3 =
    "{\"model_type\":\"phi3\",\"hidden_size\":64,\"num_attention_heads\":4,"
    "\"max_position_embeddings\":131072,\"original_max_position_embeddings\":4096,"
    "\"rope_theta\":10000.0,\"rope_scaling\":{\"type\":\"longrope\","
    "\"short_factor\":[1,1,1,1,1,1,1,1],\"long_factor\":[1,2,3,4,5,6,7,8]}}";

/* LongRoPE: the long factors past original_max_position_embeddings, one key for that choice
 * (and the legacy names reading the same value); attention scaling sqrt(1 + ln(s)/ln(M0)). */
static void test_longrope_values(void **state)
{
    (void)state;
    posenc_model *m = parse(PHI3);
    pe_desc *d = describe(m, POSENC_PREC_EXACT, 8192);
    assert_int_equal(get(d, PE_DF_LONG_FACTORS_USED)->i, 1);
    assert_int_equal(get(d, PE_DF_LEGACY_LONG_FACTOR_USED)->i, 1);
    assert_string_equal(get(d, PE_DF_LEGACY_LONGROPE_FACTORS)->s, "long");
    assert_int_equal(get(d, PE_DF_LONG_FACTOR)->n, 8);
    assert_true(get(d, PE_DF_LONG_FACTOR)->v[7] == 8.0);
    assert_int_equal(get(d, PE_DF_SEQ_LEN)->i, 8192);
    long double s = 131072.0L / 4096.0L;
    assert_close(get(d, PE_DF_ATTENTION_SCALING)->d, (double)sqrtl(1 + logl(s) / logl(4096.0L)),
                 1e-15, 0);
    /* inv_freq[7] = theta^(-14/16) / long_factor[7] */
    assert_close(get(d, PE_DF_INV_FREQ)->v[7], (double)(powl(10000.0L, -14.0L / 16.0L) / 8.0L),
                 2e-16, 0);
    pe_describe_free(d);
    d = describe(m, POSENC_PREC_EXACT, 4096);
    assert_int_equal(get(d, PE_DF_LONG_FACTORS_USED)->i, 0);
    assert_string_equal(get(d, PE_DF_LEGACY_LONGROPE_FACTORS)->s, "short");
    pe_describe_free(d);
    posenc_model_free(m);
}

/* ALiBi: BLOOM's slopes 2^(-8(i+1)/H) for H a power of two (Press et al.). */
static void test_alibi_values(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_model *m = parse("{\"model_type\":\"bloom\",\"hidden_size\":1024,\"n_head\":16}");
    pe_desc *d = pe_describe_new();
    pe_describe_model(d, m);
    assert_int_equal(pe_describe_bias(d, m, &err), POSENC_OK);
    assert_string_equal(get(d, PE_DF_ENCODING)->s, "alibi");
    assert_string_equal(get(d, PE_DF_VARIANT)->s, "reference");
    assert_string_equal(get(d, PE_DF_LEGACY_ALIBI_KIND)->s, "reference");
    assert_int_equal(get(d, PE_DF_HEADS)->i, 16);
    assert_null(pe_describe_get(d, PE_DF_BIAS_HEADS));
    const pe_dval *s = get(d, PE_DF_SLOPES);
    assert_int_equal(s->n, 16);
    for (int i = 0; i < 16; i++)
        assert_close(s->v[i], (double)powl(2.0L, -8.0L * (i + 1) / 16.0L), 1e-15, 0);
    assert_null(pe_describe_get(d, PE_DF_NOPE_LAYERS)); /* RoPE models only */
    pe_describe_free(d);
    posenc_model_free(m);
}

/* info's description of a non-rotary config (pe_describe_bias). */
static pe_desc *describe_bias(const char *json, posenc_model **mp)
{
    posenc_error err = { 0 };
    posenc_model *m = parse(json);
    pe_desc *d = pe_describe_new();
    assert_non_null(d);
    pe_describe_model(d, m);
    assert_int_equal(pe_describe_bias(d, m, &err), POSENC_OK);
    assert_false(pe_describe_oom(d));
    *mp = m;
    return d;
}

/* Every fact gen's metadata gives a table of m built with no option (pe_table_params_resolve,
 * pe_describe_table_params) that info shows is in info's description d with the same value. */
static void assert_gen_facts_in(const pe_desc *d, const posenc_model *m, const double *slopes)
{
    posenc_error err = { 0 };
    pe_table_params p;
    assert_int_equal(pe_table_params_resolve(&p, posenc_model_encoding(m), NULL,
                                             posenc_model_bias(m), &err), POSENC_OK);
    pe_desc *g = pe_describe_new();
    pe_describe_table_params(g, posenc_model_encoding(m), &p, slopes);
    int n = 0;
    for (int f = 0; f < PE_DF_COUNT; f++) {
        const pe_dval *a = pe_describe_get(g, (pe_dfield)f), *b;
        if (!a || !(pe_describe_def((pe_dfield)f)->views & PE_DV_INFO))
            continue;
        n++;
        b = get(d, (pe_dfield)f);
        switch (pe_describe_def((pe_dfield)f)->kind) {
        case PE_DK_STR: assert_string_equal(a->s, b->s); break;
        case PE_DK_NUM: assert_true(a->d == b->d); break;
        case PE_DK_INT: case PE_DK_BOOL: assert_int_equal(a->i, b->i); break;
        case PE_DK_NUMS:
            assert_int_equal(a->n, b->n);
            for (size_t i = 0; i < a->n; i++)
                assert_true(a->v[i] == b->v[i]);
            break;
        default: fail();
        }
    }
    assert_true(n >= 2);
    pe_describe_free(g);
}

/* The other encodings as info describes them, from the same resolved parameters as gen's
 * metadata, against transformers' code: MPT's slopes (models/mpt/modeling_mpt.py
 * build_mpt_alibi_tensor: 1/2^(k alibi_bias_max/P), P = 2^ceil(log2 H), odd k first when
 * H < P) and its bias m(j - (L-1)), causal; BLOOM's for H not a power of two (build_alibi_tensor:
 * 2^(-8k/P') for P' = 2^floor(log2 H), then odd powers of 2^(-8/2P')); T5's buckets
 * (configuration_t5.py: 32 and 128 when the config does not say); BERT relative_key
 * (modeling_bert.py: distance_embedding(l - r + max_position_embeddings - 1)); FSMT's fairseq
 * sinusoids (padding_idx = pad_token_id, real positions from padding_idx + 1). */
static void test_bias_values(void **state)
{
    (void)state;
    posenc_model *m;
    /* MPT, 12 heads, alibi_bias_max 16: P = 16, k = 2, 4, .., 16 then 1, 3, 5, 7 */
    pe_desc *d = describe_bias("{\"model_type\":\"mpt\",\"d_model\":768,\"n_heads\":12,"
                               "\"max_seq_len\":64,\"attn_config\":{\"alibi_bias_max\":16}}", &m);
    assert_string_equal(get(d, PE_DF_VARIANT)->s, "mpt");
    assert_string_equal(get(d, PE_DF_LEGACY_ALIBI_KIND)->s, "mpt");
    assert_string_equal(get(d, PE_DF_CONVENTION)->s, "causal");
    assert_int_equal(get(d, PE_DF_HEADS)->i, 12);
    assert_true(get(d, PE_DF_ALIBI_BIAS_MAX)->d == 16.0);
    const pe_dval *s = get(d, PE_DF_SLOPES);
    assert_int_equal(s->n, 12);
    for (int h = 0; h < 12; h++) {
        int k = h < 8 ? 2 * (h + 1) : 2 * (h - 8) + 1;
        assert_close(s->v[h], (double)powl(2.0L, -(long double)k * 16.0L / 16.0L), 0, 0);
    }
    assert_int_equal(get(d, PE_DF_MAX_POSITIONS)->i, 64);
    assert_int_equal(get(d, PE_DF_D_MODEL)->i, 768);
    assert_int_equal(get(d, PE_DF_BIAS_HEAD_DIM)->i, 64);
    assert_null(pe_describe_get(d, PE_DF_BIAS_HEADS));
    assert_gen_facts_in(d, m, s->v);
    pe_describe_free(d);
    posenc_model_free(m);

    /* a BERT ALiBi encoder, 6 heads: symmetric; P' = 4: 2^-2k, then 2^(-1), 2^(-3) */
    d = describe_bias("{\"model_type\":\"bert\",\"position_embedding_type\":\"alibi\","
                      "\"hidden_size\":96,\"num_attention_heads\":6,"
                      "\"max_position_embeddings\":128}", &m);
    assert_string_equal(get(d, PE_DF_VARIANT)->s, "reference");
    assert_string_equal(get(d, PE_DF_CONVENTION)->s, "symmetric");
    s = get(d, PE_DF_SLOPES);
    assert_int_equal(s->n, 6);
    const long double bert[6] = { 0x1p-2L, 0x1p-4L, 0x1p-6L, 0x1p-8L, 0x1p-1L, 0x1p-3L };
    for (int h = 0; h < 6; h++)
        assert_close(s->v[h], (double)bert[h], 0, 0);
    /* info's key for every variant; MPT's default, which these slopes do not use */
    assert_true(get(d, PE_DF_ALIBI_BIAS_MAX)->d == 8.0);
    assert_gen_facts_in(d, m, s->v);
    pe_describe_free(d);
    posenc_model_free(m);

    /* T5: a decoder with its own buckets; heads beside them, no max_positions */
    d = describe_bias("{\"model_type\":\"t5\",\"is_decoder\":true,\"num_heads\":6,"
                      "\"d_model\":384,\"d_kv\":64,\"relative_attention_num_buckets\":16,"
                      "\"relative_attention_max_distance\":40}", &m);
    assert_true(get(d, PE_DF_IS_DECODER)->i == 1);
    assert_int_equal(get(d, PE_DF_NUM_BUCKETS)->i, 16);
    assert_int_equal(get(d, PE_DF_MAX_DISTANCE)->i, 40);
    assert_int_equal(get(d, PE_DF_HEADS)->i, 6);
    assert_int_equal(get(d, PE_DF_D_MODEL)->i, 384);
    assert_int_equal(get(d, PE_DF_BIAS_HEAD_DIM)->i, 64);
    assert_null(pe_describe_get(d, PE_DF_BIAS_HEADS));
    assert_null(pe_describe_get(d, PE_DF_MAX_POSITIONS));
    assert_gen_facts_in(d, m, NULL);
    pe_describe_free(d);
    posenc_model_free(m);
    /* T5Config's defaults */
    d = describe_bias("{\"model_type\":\"t5\"}", &m);
    assert_true(get(d, PE_DF_IS_DECODER)->i == 0);
    assert_int_equal(get(d, PE_DF_NUM_BUCKETS)->i, 32);
    assert_int_equal(get(d, PE_DF_MAX_DISTANCE)->i, 128);
    assert_gen_facts_in(d, m, NULL);
    pe_describe_free(d);
    posenc_model_free(m);

    /* BERT relative_key: k = max_position_embeddings - 1, query - key */
    d = describe_bias("{\"model_type\":\"bert\",\"position_embedding_type\":\"relative_key\","
                      "\"hidden_size\":64,\"num_attention_heads\":4,"
                      "\"max_position_embeddings\":16}", &m);
    assert_int_equal(get(d, PE_DF_MAX_RELATIVE_POSITION)->i, 15);
    assert_string_equal(get(d, PE_DF_VARIANT)->s, "bert");
    assert_string_equal(get(d, PE_DF_INDEX_FORMULA)->s, "clip(query - key, -k, k) + k");
    assert_int_equal(get(d, PE_DF_BIAS_HEADS)->i, 4);
    assert_int_equal(get(d, PE_DF_BIAS_HEAD_DIM)->i, 16);
    assert_int_equal(get(d, PE_DF_MAX_POSITIONS)->i, 16);
    assert_null(pe_describe_get(d, PE_DF_HEADS));
    assert_gen_facts_in(d, m, NULL);
    pe_describe_free(d);
    posenc_model_free(m);

    /* FSMT: fairseq sinusoids, padding_idx the config's pad_token_id */
    d = describe_bias("{\"model_type\":\"fsmt\",\"d_model\":1024,\"encoder_attention_heads\":16,"
                      "\"max_position_embeddings\":1024,\"pad_token_id\":3}", &m);
    assert_string_equal(get(d, PE_DF_VARIANT)->s, "fairseq");
    assert_int_equal(get(d, PE_DF_D_MODEL)->i, 1024);
    assert_int_equal(get(d, PE_DF_PADDING_IDX)->i, 3);
    assert_int_equal(get(d, PE_DF_ROW_OFFSET)->i, 4);
    assert_int_equal(get(d, PE_DF_BIAS_HEADS)->i, 16);
    assert_int_equal(get(d, PE_DF_MAX_POSITIONS)->i, 1024);
    assert_gen_facts_in(d, m, NULL);
    pe_describe_free(d);
    posenc_model_free(m);
}

/* The metadata view: keys and types as gen writes them, a group one object, the legacy flat
 * vLLM names with the group's values, no empty list, nothing of the info-only fields. */
struct kv {
    int n;
    char key[80][64];
    char json[80][512];
    posenc_meta_type type[80];
};

static posenc_status collect(void *ctx, const char *key, posenc_meta_type type, const char *json,
                             posenc_error *err)
{
    struct kv *k = ctx;
    (void)err;
    assert_true(k->n < 80);
    snprintf(k->key[k->n], sizeof k->key[0], "%s", key);
    snprintf(k->json[k->n], sizeof k->json[0], "%s", json);
    k->type[k->n++] = type;
    return POSENC_OK;
}

static const char *meta_of(const struct kv *k, const char *key, posenc_meta_type *type)
{
    for (int i = 0; i < k->n; i++)
        if (strcmp(k->key[i], key) == 0) {
            if (type)
                *type = k->type[i];
            return k->json[i];
        }
    return NULL;
}

static void test_meta_view(void **state)
{
    (void)state;
    posenc_model *m = parse(LLAMA3);
    pe_desc *d = describe(m, POSENC_PREC_VLLM, 0);
    pe_describe_str(d, PE_DF_LAYER_TYPE, NULL);
    static struct kv k;
    memset(&k, 0, sizeof k);
    assert_int_equal(pe_describe_meta_each(d, collect, &k, NULL), POSENC_OK);
    posenc_meta_type t;
    assert_string_equal(meta_of(&k, "rope_type", &t), "\"llama3\"");
    assert_int_equal(t, POSENC_META_AUTO);
    assert_string_equal(meta_of(&k, "head_dim", &t), "128");
    assert_int_equal(t, POSENC_META_I64);
    assert_string_equal(meta_of(&k, "theta", NULL), "500000");
    assert_string_equal(meta_of(&k, "layer_type", NULL), "null");
    assert_null(meta_of(&k, "inv_freq", NULL));   /* info only: gen writes the array itself */
    assert_null(meta_of(&k, "nope_layers", NULL)); /* an empty list is left out */
    const char *vg = meta_of(&k, "vllm", NULL);
    assert_non_null(vg);
    assert_non_null(strstr(vg, "\"class\": \"Llama3RotaryEmbedding\""));
    assert_string_equal(meta_of(&k, "vllm_class", NULL), "\"Llama3RotaryEmbedding\"");
    const char *cl = meta_of(&k, "vllm_cache_len", &t);
    assert_string_equal(cl, "131072");
    assert_int_equal(t, POSENC_META_I64);
    /* the same group in info's JSON, without the flat names */
    cJSON *j = cJSON_CreateObject();
    assert_int_equal(pe_describe_json(d, PE_DV_INFO, j), 0);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "vllm");
    assert_true(cJSON_IsObject(v));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(v, "class")->valuestring,
                        "Llama3RotaryEmbedding");
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "vllm_class"));
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "inv_freq")));
    cJSON_Delete(j);
    pe_describe_free(d);
    posenc_model_free(m);
}

/* info's JSON keeps each number's format (float32 values in 9 digits); the report's are cJSON
 * numbers; the text folds theta's source and the partial factor into their lines. */
static void test_renderings(void **state)
{
    (void)state;
    posenc_model *m = parse(LLAMA3);
    pe_desc *d = describe(m, POSENC_PREC_HF, 0);
    cJSON *j = cJSON_CreateObject();
    assert_int_equal(pe_describe_json(d, PE_DV_INFO, j), 0);
    char *s = cJSON_PrintUnformatted(j);
    assert_non_null(strstr(s, "\"inv_freq\":[1,0.814617"));
    assert_non_null(strstr(s, "\"theta\":500000,"));
    free(s);
    cJSON_Delete(j);
    j = cJSON_CreateObject();
    assert_int_equal(pe_describe_json(d, PE_DV_REPORT, j), 0);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "theta")));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "inv_freq"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "precision")); /* info and metadata only */
    cJSON_Delete(j);
    pe_strbuf b = { 0 };
    pe_describe_text(d, &b, "");
    char *t = pe_strbuf_finish(&b);
    assert_non_null(strstr(t, "\nrotary_dim          128 (partial_rotary_factor 1)\n"));
    assert_non_null(strstr(t, "\nfactor              8\n"));
    assert_non_null(strstr(t, "\nseq_len             0 (load time)\n"));
    assert_null(strstr(t, "theta_used")); /* shown only when it differs from theta */
    assert_null(strstr(t, "exponent_dim"));
    free(t);
    pe_describe_free(d);
    posenc_model_free(m);
}

/* The item ns + key of o; fails the test when there is none. */
static const cJSON *item(const cJSON *o, const char *ns, const char *key)
{
    char k[128];
    snprintf(k, sizeof k, "%s%s", ns, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        fail_msg("no metadata key '%s'", k);
    return v;
}

/* pe_describe_meta_write: apply's metadata (config, style, precision, inverse under the key
 * prefix posenc_apply_) through a real writer, read back from NPZ and, typed, from GGUF. */
static void test_meta_write(void **state)
{
    (void)state;
    static const struct { const char *file; posenc_format fmt; const char *ns; } outs[] = {
        { "a.npz", POSENC_FMT_NPZ, "" }, { "a.gguf", POSENC_FMT_GGUF, "posenc." },
    };
    for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++) {
        posenc_error err = { 0 };
        pe_desc *d = pe_describe_new();
        pe_describe_str(d, PE_DF_CONFIG, "dir/q \"x\".json");
        pe_describe_str(d, PE_DF_STYLE, posenc_style_name(POSENC_STYLE_GPTJ));
        pe_describe_str(d, PE_DF_PRECISION, posenc_precision_name(POSENC_PREC_VLLM));
        pe_describe_bool(d, PE_DF_INVERSE, 1);
        pe_describe_int(d, PE_DF_SEQ_LEN, 4096);
        posenc_write_opts o = { .format = outs[k].fmt };
        posenc_writer *w = NULL;
        const char *path = tu_path(outs[k].file);
        assert_int_equal(posenc_writer_open(path, &o, &w, &err), POSENC_OK);
        assert_int_equal(pe_describe_meta_write(d, "posenc_apply_", w, &err), POSENC_OK);
        posenc_array_info ai = { .name = "x", .dtype = POSENC_DT_F32, .ndim = 1, .shape = { 2 } };
        const float x[2] = { 1, 2 };
        assert_int_equal(posenc_writer_declare(w, &ai, &err), POSENC_OK);
        assert_int_equal(posenc_writer_write(w, x, 2, &err), POSENC_OK);
        assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
        pe_describe_free(d);
        posenc_container *c = NULL;
        assert_int_equal(posenc_container_open(path, NULL, &c, &err), POSENC_OK);
        cJSON *mj = cJSON_Parse(posenc_container_meta(c));
        assert_non_null(mj);
#define META(key) item(mj, outs[k].ns, key)
        assert_string_equal(META("posenc_apply_config")->valuestring, "dir/q \"x\".json");
        assert_string_equal(META("posenc_apply_style")->valuestring, "gptj");
        assert_string_equal(META("posenc_apply_precision")->valuestring, "vllm");
        assert_true(cJSON_IsTrue(META("posenc_apply_inverse")));
        assert_true(META("posenc_apply_seq_len")->valuedouble == 4096);
        cJSON_Delete(mj);
        if (outs[k].fmt == POSENC_FMT_GGUF) { /* an integer is int64, a flag a bool */
            cJSON *tj = cJSON_Parse(posenc_container_meta_types(c));
            assert_non_null(tj);
            assert_string_equal(item(tj, "posenc.", "posenc_apply_seq_len")->valuestring, "int64");
            assert_string_equal(item(tj, "posenc.", "posenc_apply_inverse")->valuestring, "bool");
            cJSON_Delete(tj);
        }
#undef META
        posenc_container_close(c);
    }
}

/* Misuse is recorded, never silent: a value of the wrong kind, or set through a legacy row. */
static void test_misuse(void **state)
{
    (void)state;
    pe_desc *d = pe_describe_new();
    pe_describe_str(d, PE_DF_THETA, "1e4");
    assert_true(pe_describe_oom(d));
    pe_describe_free(d);
    d = pe_describe_new();
    pe_describe_bool(d, PE_DF_LEGACY_LONG_FACTOR_USED, 1);
    assert_true(pe_describe_oom(d));
    assert_int_equal(pe_describe_meta_each(d, collect, NULL, NULL), POSENC_ENOMEM);
    pe_describe_free(d);
    pe_describe_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),         cmocka_unit_test(test_llama3_values),
        cmocka_unit_test(test_yarn_values),   cmocka_unit_test(test_longrope_values),
        cmocka_unit_test(test_alibi_values),  cmocka_unit_test(test_meta_view),
        cmocka_unit_test(test_renderings),    cmocka_unit_test(test_meta_write),
        cmocka_unit_test(test_misuse),        cmocka_unit_test(test_bias_values),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
