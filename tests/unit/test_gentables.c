/* test_gentables.c: gen's engine (formats/engines/gentables.c, genrope.c) and the parameter table it
 * reads (lib/model/tableparams.c). The defaults against the configs and the model code's own
 * defaults (T5Config's 32 buckets / 128 distance, MPT's alibi_bias_max 8, FSMT's pad 1); the
 * tables the engine builds against closed forms (BLOOM's slopes 2^(-8(h+1)/n) and m * key,
 * transformers' T5 _relative_position_bucket in double, the RoPE cos in long double, fairseq's
 * padding_idx + 1 extra rows); the metadata against the keys info uses; the failures a user
 * sees as usage errors against the others. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "formats/engines/gentables.h"
#include "posenc/bias.h"

static const char BLOOM[] = "{\"model_type\": \"bloom\", \"n_head\": 16, \"hidden_size\": 1024}";
static const char MPT[] = "{\"model_type\": \"mpt\", \"n_heads\": 12, \"d_model\": 768, "
                          "\"attn_config\": {\"alibi\": true, \"alibi_bias_max\": 16}}";
static const char T5[] = "{\"model_type\": \"t5\", \"num_heads\": 8, \"d_model\": 512, "
                         "\"n_positions\": 512}";
static const char T5_16[] = "{\"model_type\": \"t5\", \"num_heads\": 8, \"d_model\": 512, "
                            "\"relative_attention_num_buckets\": 16, "
                            "\"relative_attention_max_distance\": 64}";
static const char FSMT[] = "{\"model_type\": \"fsmt\", \"d_model\": 32, \"encoder_attention_heads\""
                           ": 4, \"max_position_embeddings\": 64, \"pad_token_id\": 1}";
static const char FSMT0[] = "{\"model_type\": \"fsmt\", \"d_model\": 32, \"encoder_attention_heads\""
                            ": 4, \"max_position_embeddings\": 64, \"pad_token_id\": 0}";
static const char BERT_REL[] = "{\"model_type\": \"bert\", \"hidden_size\": 64, "
                               "\"num_attention_heads\": 4, \"max_position_embeddings\": 64, "
                               "\"position_embedding_type\": \"relative_key\"}";
static const char LLAMA[] = "{\"model_type\": \"llama\", \"hidden_size\": 64, "
                            "\"num_attention_heads\": 1, \"rope_theta\": 10000.0, "
                            "\"max_position_embeddings\": 16}";

static void resolve(pe_table_params *p, posenc_encoding e, const pe_table_args *a,
                    const char *json)
{
    posenc_model *m = json ? tu_model(json) : NULL;
    assert_int_equal(pe_table_params_resolve(p, e, a, m ? posenc_model_bias(m) : NULL, NULL),
                     POSENC_OK);
    posenc_model_free(m);
}

/* ---- the parameter table: option, else config, else the default ---- */

static void test_defaults(void **state)
{
    (void)state;
    pe_table_params p;
    /* T5: the config's, else T5Config's 32 and 128 */
    resolve(&p, POSENC_ENC_T5, NULL, T5);
    assert_int_equal(PE_TP_INT(&p, PE_TP_NUM_BUCKETS), 32);
    assert_int_equal(PE_TP_INT(&p, PE_TP_MAX_DISTANCE), 128);
    assert_int_equal(PE_TP_INT(&p, PE_TP_HEADS), 8);
    assert_int_equal(PE_TP_INT(&p, PE_TP_DECODER), 0);
    assert_int_equal(p.from_option, 0);
    resolve(&p, POSENC_ENC_T5, NULL, T5_16);
    assert_int_equal(PE_TP_INT(&p, PE_TP_NUM_BUCKETS), 16);
    assert_int_equal(PE_TP_INT(&p, PE_TP_MAX_DISTANCE), 64);
    resolve(&p, POSENC_ENC_T5, NULL, NULL); /* no config */
    assert_int_equal(PE_TP_INT(&p, PE_TP_NUM_BUCKETS), 32);
    assert_int_equal(PE_TP_INT(&p, PE_TP_HEADS), 0);
    /* an option wins over the config and is marked */
    pe_table_args a = { 0 };
    a.given = PE_TP_BIT(PE_TP_NUM_BUCKETS) | PE_TP_BIT(PE_TP_DECODER);
    a.v[PE_TP_NUM_BUCKETS] = 64;
    a.v[PE_TP_DECODER] = 1;
    resolve(&p, POSENC_ENC_T5, &a, T5_16);
    assert_int_equal(PE_TP_INT(&p, PE_TP_NUM_BUCKETS), 64);
    assert_int_equal(PE_TP_INT(&p, PE_TP_MAX_DISTANCE), 64);
    assert_int_equal(PE_TP_INT(&p, PE_TP_DECODER), 1);
    assert_int_equal(p.from_option, a.given);

    /* ALiBi: BLOOM's reference slopes over key indices; MPT's causal m(j - i), its bias max */
    resolve(&p, POSENC_ENC_ALIBI, NULL, BLOOM);
    assert_int_equal(PE_TP_INT(&p, PE_TP_HEADS), 16);
    assert_int_equal(p.alibi_kind, POSENC_ALIBI_REFERENCE);
    assert_int_equal(p.convention, POSENC_ALIBI_KEYINDEX);
    assert_close(p.v[PE_TP_ALIBI_BIAS_MAX], 8, 0, 0);
    resolve(&p, POSENC_ENC_ALIBI, NULL, MPT);
    assert_int_equal(PE_TP_INT(&p, PE_TP_HEADS), 12);
    assert_int_equal(p.alibi_kind, POSENC_ALIBI_MPT);
    assert_int_equal(p.convention, POSENC_ALIBI_CAUSAL);
    assert_close(p.v[PE_TP_ALIBI_BIAS_MAX], 16, 0, 0);
    resolve(&p, POSENC_ENC_ALIBI, NULL, NULL);
    assert_int_equal(p.alibi_kind, POSENC_ALIBI_REFERENCE);
    assert_int_equal(p.convention, POSENC_ALIBI_KEYINDEX);
    assert_close(p.v[PE_TP_ALIBI_BIAS_MAX], 8, 0, 0);
    memset(&a, 0, sizeof a);
    a.variant = "mpt"; /* the variant picks the convention the model's code builds */
    resolve(&p, POSENC_ENC_ALIBI, &a, NULL);
    assert_int_equal(p.convention, POSENC_ALIBI_CAUSAL);
    a.convention = "symmetric";
    resolve(&p, POSENC_ENC_ALIBI, &a, BLOOM);
    assert_int_equal(p.alibi_kind, POSENC_ALIBI_MPT);
    assert_int_equal(p.convention, POSENC_ALIBI_SYMMETRIC);

    /* Shaw: BERT's relative_key is query - key; --variant shaw turns it back */
    resolve(&p, POSENC_ENC_SHAW, NULL, BERT_REL);
    assert_int_equal(p.shaw_bert, 1);
    assert_int_equal(PE_TP_INT(&p, PE_TP_MAX_REL), 63); /* max_position_embeddings - 1 */
    memset(&a, 0, sizeof a);
    a.variant = "shaw";
    resolve(&p, POSENC_ENC_SHAW, &a, BERT_REL);
    assert_int_equal(p.shaw_bert, 0);

    /* sinusoidal: the model's fairseq sinusoids and its pad, 0 included; Vaswani's without */
    resolve(&p, POSENC_ENC_SINUSOIDAL, NULL, FSMT);
    assert_int_equal(p.sin_variant, POSENC_SIN_FAIRSEQ);
    assert_int_equal(PE_TP_INT(&p, PE_TP_PADDING_IDX), 1);
    assert_int_equal(PE_TP_INT(&p, PE_TP_D_MODEL), 32);
    resolve(&p, POSENC_ENC_SINUSOIDAL, NULL, FSMT0);
    assert_int_equal(PE_TP_INT(&p, PE_TP_PADDING_IDX), 0);
    resolve(&p, POSENC_ENC_SINUSOIDAL, NULL, NULL);
    assert_int_equal(p.sin_variant, POSENC_SIN_VASWANI);
    assert_int_equal(PE_TP_INT(&p, PE_TP_PADDING_IDX), 1);
    assert_int_equal(PE_TP_INT(&p, PE_TP_D_MODEL), 0);

    /* bad names are EINVAL naming the option */
    posenc_error err = { 0 };
    memset(&a, 0, sizeof a);
    a.variant = "nope";
    assert_int_equal(pe_table_params_resolve(&p, POSENC_ENC_SHAW, &a, NULL, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "--variant: unknown Shaw variant 'nope'"));
    assert_int_equal(pe_table_params_resolve(&p, POSENC_ENC_SINUSOIDAL, &a, NULL, &err),
                     POSENC_EINVAL);
    assert_true(strncmp(err.msg, "--variant: ", 11) == 0);
    a.variant = NULL;
    a.convention = "sym";
    assert_int_equal(pe_table_params_resolve(&p, POSENC_ENC_ALIBI, &a, NULL, &err), POSENC_EINVAL);
    assert_true(strncmp(err.msg, "--convention: ", 14) == 0);
    /* the parameters without an option have no name and are never refused */
    assert_null(pe_table_param_name(PE_TP_ALIBI_BIAS_MAX));
    assert_int_equal(pe_table_rope_only() & PE_TP_BIT(PE_TP_PADDING_IDX), 0);
}

/* ---- the engine ---- */

static void *fill(pe_table *t, int which)
{
    const pe_table_array *a = &t->arr[which];
    void *buf = malloc((size_t)(a->rows * a->rowlen) * posenc_dtype_size(a->src) + 1);
    assert_non_null(buf);
    assert_int_equal(t->fill(t, which, 0, a->rows, buf, NULL), POSENC_OK);
    return buf;
}

static pe_gen_args args(const posenc_model *m, posenc_encoding e, int64_t seq_len)
{
    pe_gen_args a;
    memset(&a, 0, sizeof a);
    a.config = m ? "c.json" : NULL;
    a.m = m;
    a.encoding = e;
    a.out = "o.npz";
    a.format = POSENC_FMT_NPZ;
    a.dtype = POSENC_DT_F32;
    a.seq_len = seq_len;
    a.precision = POSENC_PREC_EXACT;
    a.layout = POSENC_LAYOUT_HF;
    a.nthreads = 1;
    return a;
}

static void test_alibi(void **state)
{
    (void)state;
    posenc_model *m = tu_model(BLOOM);
    pe_gen_args a = args(m, POSENC_ENC_ALIBI, 8);
    pe_gen g;
    assert_int_equal(pe_gen_build(&g, &a, NULL), POSENC_OK);
    assert_int_equal(g.t.narr, 2);
    assert_int_equal(g.t.arr[1].info.shape[0], 16);
    assert_int_equal(g.t.arr[1].info.shape[1], 8);
    assert_int_equal(g.t.arr[1].info.shape[2], 8);
    double *s = fill(&g.t, 0), *b = fill(&g.t, 1);
    const pe_dval *sv = pe_describe_get(g.d, PE_DF_SLOPES);
    assert_non_null(sv);
    assert_int_equal(sv->n, 16);
    for (int h = 0; h < 16; h++) {
        /* Press et al. for a power of two: 2^(-8(h+1)/n) */
        double want = (double)powl(2.0L, -8.0L * (h + 1) / 16);
        assert_close(s[h], want, 1e-15, 0);
        assert_close(sv->v[h], want, 1e-15, 0);
        for (int q = 0; q < 8; q++)
            for (int k = 0; k < 8; k++) /* BLOOM: m * key index */
                assert_close(b[(h * 8 + q) * 8 + k], want * k, 1e-15, 0);
    }
    free(s);
    free(b);
    assert_string_equal(pe_describe_get(g.d, PE_DF_VARIANT)->s, "reference");
    assert_string_equal(pe_describe_get(g.d, PE_DF_CONVENTION)->s, "keyindex");
    assert_string_equal(pe_describe_get(g.d, PE_DF_ENCODING)->s, "alibi");
    assert_int_equal(pe_describe_get(g.d, PE_DF_HEADS)->i, 16);
    assert_int_equal(pe_describe_get(g.d, PE_DF_Q_LEN)->i, 8);
    assert_int_equal(pe_describe_get(g.d, PE_DF_K_LEN)->i, 8);
    assert_null(pe_describe_get(g.d, PE_DF_ALIBI_BIAS_MAX)); /* MPT's only */
    assert_null(pe_describe_get(g.d, PE_DF_BROADCAST_QUERY));
    pe_gen_free(&g);

    /* --broadcast: one query row, the last one's */
    a.p.given = PE_TP_BIT(PE_TP_BROADCAST);
    a.p.v[PE_TP_BROADCAST] = 1;
    assert_int_equal(pe_gen_build(&g, &a, NULL), POSENC_OK);
    assert_int_equal(g.t.arr[1].info.shape[1], 1);
    assert_int_equal(pe_describe_get(g.d, PE_DF_Q_LEN)->i, 1);
    assert_int_equal(pe_describe_get(g.d, PE_DF_BROADCAST_QUERY)->i, 7);
    pe_gen_free(&g);

    /* usage errors: no heads without a config; an option ALiBi does not take */
    posenc_error err = { 0 };
    pe_gen_args none = args(NULL, POSENC_ENC_ALIBI, 8);
    assert_int_not_equal(pe_gen_build(&g, &none, &err), POSENC_OK);
    assert_int_equal(g.usage, PE_GEN_USAGE);
    assert_string_equal(err.msg, "ALiBi tables need --heads N");
    pe_gen_free(&g);
    a.p.given = PE_TP_BIT(PE_TP_NUM_BUCKETS);
    assert_int_not_equal(pe_gen_build(&g, &a, &err), POSENC_OK);
    assert_int_equal(g.usage, PE_GEN_USAGE);
    assert_string_equal(err.msg, "--num-buckets does not apply to ALiBi tables");
    pe_gen_free(&g);
    posenc_model_free(m);
}

/* transformers models/t5/modeling_t5.py T5Attention._relative_position_bucket, in double */
static int t5_bucket(int64_t rel, int bidir, int nb, int md)
{
    int ret = 0;
    if (bidir) {
        nb /= 2;
        ret += rel > 0 ? nb : 0;
        rel = rel < 0 ? -rel : rel;
    } else {
        rel = rel < 0 ? -rel : 0;
    }
    int max_exact = nb / 2;
    if (rel < max_exact)
        return ret + (int)rel;
    int large = max_exact + (int)(log((double)rel / max_exact) / log((double)md / max_exact) *
                                  (nb - max_exact));
    return ret + (large < nb - 1 ? large : nb - 1);
}

static void test_t5(void **state)
{
    (void)state;
    posenc_model *m = tu_model(T5);
    pe_gen_args a = args(m, POSENC_ENC_T5, 200);
    pe_gen g;
    assert_int_equal(pe_gen_build(&g, &a, NULL), POSENC_OK);
    assert_int_equal(g.t.narr, 1); /* buckets only without --weights */
    int32_t *bk = fill(&g.t, 0);
    for (int64_t q = 0; q < 200; q += 7)
        for (int64_t k = 0; k < 200; k++)
            assert_int_equal(bk[q * 200 + k], t5_bucket(k - q, 1, 32, 128));
    free(bk);
    assert_int_equal(pe_describe_get(g.d, PE_DF_IS_DECODER)->i, 0);
    assert_string_equal(pe_describe_get(g.d, PE_DF_LEGACY_T5_KIND)->s, "encoder");
    assert_int_equal(pe_describe_get(g.d, PE_DF_LEGACY_T5_BIDIRECTIONAL)->i, 1);
    assert_int_equal(pe_describe_get(g.d, PE_DF_NUM_BUCKETS)->i, 32);
    assert_int_equal(pe_describe_get(g.d, PE_DF_MAX_DISTANCE)->i, 128);
    assert_null(pe_describe_get(g.d, PE_DF_HEADS)); /* the bias's heads come with --weights */
    pe_gen_free(&g);

    /* --decoder: causal buckets, and the description says so under both names */
    a.p.given = PE_TP_BIT(PE_TP_DECODER);
    a.p.v[PE_TP_DECODER] = 1;
    a.seq_len = 40;
    assert_int_equal(pe_gen_build(&g, &a, NULL), POSENC_OK);
    bk = fill(&g.t, 0);
    for (int64_t q = 0; q < 40; q++)
        for (int64_t k = 0; k < 40; k++)
            assert_int_equal(bk[q * 40 + k], t5_bucket(k - q, 0, 32, 128));
    free(bk);
    assert_int_equal(pe_describe_get(g.d, PE_DF_IS_DECODER)->i, 1);
    assert_string_equal(pe_describe_get(g.d, PE_DF_LEGACY_T5_KIND)->s, "decoder");
    assert_int_equal(pe_describe_get(g.d, PE_DF_LEGACY_T5_BIDIRECTIONAL)->i, 0);
    pe_gen_free(&g);

    /* --heads without --weights is a usage error; a bad bucket count from an option too */
    posenc_error err = { 0 };
    a.p.given = PE_TP_BIT(PE_TP_HEADS);
    a.p.v[PE_TP_HEADS] = 8;
    assert_int_not_equal(pe_gen_build(&g, &a, &err), POSENC_OK);
    assert_int_equal(g.usage, PE_GEN_USAGE);
    assert_string_equal(err.msg, "--heads applies to T5 tables only with --weights");
    pe_gen_free(&g);
    a.p.given = PE_TP_BIT(PE_TP_NUM_BUCKETS) | PE_TP_BIT(PE_TP_MAX_DISTANCE);
    a.p.v[PE_TP_NUM_BUCKETS] = 4;
    a.p.v[PE_TP_MAX_DISTANCE] = 1;
    assert_int_not_equal(pe_gen_build(&g, &a, &err), POSENC_OK);
    assert_int_equal(g.usage, PE_GEN_USAGE);
    pe_gen_free(&g);
    posenc_model_free(m);
}

static void test_shaw_sinusoidal(void **state)
{
    (void)state;
    posenc_model *m = tu_model(BERT_REL);
    pe_gen_args a = args(m, POSENC_ENC_SHAW, 100);
    pe_gen g;
    assert_int_equal(pe_gen_build(&g, &a, NULL), POSENC_OK);
    int32_t *ix = fill(&g.t, 0);
    for (int64_t q = 0; q < 100; q += 3)
        for (int64_t k = 0; k < 100; k++) { /* BERT: clip(query - key, -63, 63) + 63 */
            int64_t d = q - k;
            assert_int_equal(ix[q * 100 + k], (d < -63 ? -63 : d > 63 ? 63 : d) + 63);
        }
    free(ix);
    assert_string_equal(pe_describe_get(g.d, PE_DF_VARIANT)->s, "bert");
    assert_string_equal(pe_describe_get(g.d, PE_DF_INDEX_FORMULA)->s,
                        "clip(query - key, -k, k) + k");
    assert_int_equal(pe_describe_get(g.d, PE_DF_MAX_RELATIVE_POSITION)->i, 63);
    pe_gen_free(&g);
    posenc_model_free(m);

    /* fairseq: L positions need L + padding_idx + 1 rows; the padding rows are zero */
    m = tu_model(FSMT);
    a = args(m, POSENC_ENC_SINUSOIDAL, 10);
    assert_int_equal(pe_gen_build(&g, &a, NULL), POSENC_OK);
    assert_int_equal(g.t.arr[0].info.shape[0], 12);
    assert_int_equal(g.t.arr[0].info.shape[1], 32);
    double *pe = fill(&g.t, 0);
    for (int c = 0; c < 32; c++)
        assert_close(pe[1 * 32 + c], 0, 0, 0);
    /* fairseq's get_embedding: row r (an embedding index; position p is row padding_idx +
     * 1 + p) is sin(r w_i) | cos(r w_i), w_i = 1e4^(-i/(h-1)), the padding row zero */
    for (int r = 0; r < 12; r++)
        for (int i = 0; i < 16 && r != 1; i++) {
            long double w = expl(-logl(10000.0L) * i / 15);
            assert_close(pe[r * 32 + i], (double)sinl(r * w), 1e-14, 1e-15);
            assert_close(pe[r * 32 + 16 + i], (double)cosl(r * w), 1e-14, 1e-15);
        }
    free(pe);
    assert_string_equal(pe_describe_get(g.d, PE_DF_VARIANT)->s, "fairseq");
    assert_int_equal(pe_describe_get(g.d, PE_DF_PADDING_IDX)->i, 1);
    assert_int_equal(pe_describe_get(g.d, PE_DF_N_POSITIONS)->i, 12);
    pe_gen_free(&g);
    posenc_model_free(m);
}

static void test_rope(void **state)
{
    (void)state;
    posenc_model *m = tu_model(LLAMA);
    pe_gen_args a = args(m, POSENC_ENC_ROPE, 0); /* rows: max_position_embeddings */
    pe_gen g;
    assert_int_equal(pe_gen_build(&g, &a, NULL), POSENC_OK);
    assert_int_equal(g.t.narr, 3);
    assert_int_equal(g.t.arr[0].info.shape[0], 16);
    assert_int_equal(g.t.arr[0].info.shape[1], 64);
    assert_int_equal(g.t.arr[0].src, POSENC_DT_F32); /* float32 output: float32 rows */
    float *c = fill(&g.t, 0);
    for (int p = 0; p < 16; p++)
        for (int i = 0; i < 32; i++) { /* hf layout: cat(freqs, freqs), each rounded once */
            long double ang = p * powl(10000.0L, -2.0L * i / 64);
            assert_close(c[p * 64 + i], (double)cosl(ang), 0, 0x1p-25);
            assert_true(c[p * 64 + 32 + i] == c[p * 64 + i]);
        }
    free(c);
    assert_int_equal(pe_describe_get(g.d, PE_DF_SEQ_LEN)->i, 16);
    assert_int_equal(pe_describe_get(g.d, PE_DF_N_POSITIONS)->i, 16);
    assert_int_equal(pe_describe_get(g.d, PE_DF_LAST_POSITION)->i, 15);
    assert_string_equal(pe_describe_get(g.d, PE_DF_POSITIONS)->s, "range");
    assert_string_equal(pe_describe_get(g.d, PE_DF_CONFIG)->s, "c.json");
    assert_int_equal(g.nwarn, 0);
    pe_gen_free(&g);

    /* --max-model-len without vllm, no config: usage errors; a GGUF gets llama.cpp's keys */
    posenc_error err = { 0 };
    a.max_model_len = 64;
    assert_int_not_equal(pe_gen_build(&g, &a, &err), POSENC_OK);
    assert_int_equal(g.usage, PE_GEN_USAGE);
    pe_gen_free(&g);
    a.max_model_len = 0;
    a.format = POSENC_FMT_GGUF;
    assert_int_equal(pe_gen_build(&g, &a, NULL), POSENC_OK);
    assert_int_equal(g.has_gr, 1);
    pe_gen_free(&g);
    pe_gen_args b = args(NULL, POSENC_ENC_ROPE, 8);
    assert_int_not_equal(pe_gen_build(&g, &b, &err), POSENC_OK);
    assert_int_equal(g.usage, PE_GEN_USAGE);
    pe_gen_free(&g);
    posenc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults), cmocka_unit_test(test_alibi), cmocka_unit_test(test_t5),
        cmocka_unit_test(test_shaw_sinusoidal), cmocka_unit_test(test_rope),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
