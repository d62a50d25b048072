/* test_report_checks.c: the checks of a verify run as formats/report/report_checks.c puts them into
 * the report tree: pe_report_bias_checks (ALiBi, T5, sinusoidal, an encoding with nothing
 * relative; config.bias; counters that grow; errors), pe_report_gguf_checks (a GGUF file written
 * here with the keys convert_hf_to_gguf.py writes for a Llama config, the same with a wrong
 * freq_base, a missing file), pe_report_pairs_run (inputs, config.rope of one layer type and
 * keyed by layer type with several) and pe_report_pair_explain (a failed pair's explanation,
 * also on its line of the text summary). Expected values come from the configs and closed forms. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/config.h"
#include "posenc/llamacpp.h"
#include "formats/report/report.h"

/* o[key], failing the test when absent */
static cJSON *at(const cJSON *o, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        fail_msg("no '%s'", key);
    return v;
}

static double num_at(const cJSON *o, const char *key)
{
    if (!cJSON_IsNumber(at(o, key)))
        fail_msg("'%s' is not a number", key);
    return at(o, key)->valuedouble;
}

static const char *str_at(const cJSON *o, const char *key)
{
    if (!cJSON_IsString(at(o, key)))
        fail_msg("'%s' is not a string", key);
    return at(o, key)->valuestring;
}

#define checks_of(report) at((report), "checks")

/* The check named name, or NULL */
static const cJSON *check_named(const cJSON *report, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, checks_of(report))
        if (strcmp(str_at(c, "name"), name) == 0)
            return c;
    return NULL;
}

/* A bias check passed over `checked` comparisons: ok, not information, the summary saying so
 * after what it states, details agreeing. */
static void expect_bias_check(const cJSON *c, const char *name, const char *what, double checked)
{
    assert_string_equal(str_at(c, "name"), name);
    assert_true(cJSON_IsTrue(at(c, "ok")));
    assert_true(cJSON_IsFalse(at(c, "info")));
    char want[400];
    snprintf(want, sizeof want, "%s: %.0f comparisons, 0 outside tolerance, max err ", what,
             checked);
    assert_int_equal(strncmp(str_at(c, "summary"), want, strlen(want)), 0);
    const cJSON *d = at(c, "details");
    assert_true(num_at(d, "checked") == checked);
    assert_true(num_at(d, "violations") == 0);
}

/* pe_report_bias_checks of m into a new report, which it returns; fails the test on an error */
static cJSON *bias_run(const posenc_model *m, int64_t max_position,
                       const posenc_sinusoidal_variant *var, int *n, int *failed)
{
    cJSON *r = pe_report_new("9.9");
    posenc_error err = { 0 };
    if (pe_report_bias_checks(r, m, max_position, var, 7, n, failed, &err) != POSENC_OK)
        fail_msg("pe_report_bias_checks: %s", err.msg);
    return r;
}

/* BLOOM, 8 heads, checked below position 16: the three conventions, each over every head and
 * every pair j <= i < 16 (the grid is dense below 64): 8 * 16 * 17 / 2 comparisons. */
static void test_bias_alibi(void **state)
{
    (void)state;
    posenc_model *m = tu_model("{\"model_type\":\"bloom\",\"n_head\":8,\"hidden_size\":512}");
    int n = 2, failed = 1; /* the counters grow from what they were */
    cJSON *r = bias_run(m, 16, NULL, &n, &failed);
    assert_int_equal(n, 5);
    assert_int_equal(failed, 1);
    const cJSON *checks = checks_of(r);
    assert_int_equal(cJSON_GetArraySize(checks), 3);
    static const char *const names[] = { "alibi_symmetric", "alibi_causal", "alibi_keyindex" };
    for (int i = 0; i < 3; i++) {
        const cJSON *c = cJSON_GetArrayItem(checks, i);
        expect_bias_check(c, names[i], "b(i,j) - b(i,i) == -m(i-j) for j <= i, 8 heads",
                          8 * 16 * 17 / 2);
        assert_true(num_at(c, "tolerance") == 4 * DBL_EPSILON);
    }
    const cJSON *b = at(at(r, "config"), "bias");
    assert_true(num_at(b, "heads") == 8); /* one slope per head */
    assert_true(num_at(b, "max_positions") == 16);
    assert_string_equal(str_at(b, "alibi_kind"), "reference");
    assert_null(cJSON_GetObjectItemCaseSensitive(b, "num_buckets"));
    cJSON_Delete(r);
    posenc_model_free(m);

    /* MPT with alibi_bias_max 5000 and 4 heads: every slope 2^(-k 5000 / 4), k = 1..4, is
     * below 2^-1074 and so 0 in double; each head is then one comparison and one violation,
     * and every check fails */
    m = tu_model("{\"model_type\":\"mpt\",\"d_model\":256,\"n_heads\":4,\"max_seq_len\":64,"
                 "\"attn_config\":{\"alibi_bias_max\":5000}}");
    n = failed = 1;
    r = bias_run(m, 0, NULL, &n, &failed);
    assert_int_equal(n, 4);
    assert_int_equal(failed, 4);
    const cJSON *c;
    cJSON_ArrayForEach(c, checks_of(r))
    {
        assert_true(cJSON_IsFalse(at(c, "ok")));
        assert_true(num_at(at(c, "details"), "violations") == 4);
        assert_non_null(strstr(str_at(c, "summary"), "4 heads: 4 comparisons, 4 outside "
                                                     "tolerance, max err inf"));
    }
    b = at(at(r, "config"), "bias");
    assert_string_equal(str_at(b, "alibi_kind"), "mpt");
    assert_true(num_at(b, "max_positions") == 64); /* max_seq_len */
    cJSON_Delete(r);
    posenc_model_free(m);
}

/* An ALiBi config without heads never becomes a model: the loader refuses it naming the file
 * and the key, so the report's own wording of that error (naming config_path) is not reached
 * through a loaded model. */
static void test_bias_alibi_no_heads(void **state)
{
    (void)state;
    const char *json = "{\"model_type\":\"bloom\",\"hidden_size\":512}";
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    assert_int_equal(posenc_config_parse(json, strlen(json), "noheads.json", NULL, &m, &err),
                     POSENC_ECONFIG);
    assert_null(m);
    assert_non_null(strstr(err.msg, "'noheads.json': num_attention_heads is missing (needed for "
                                    "ALiBi)"));
}

/* T5 with its bucket parameters from the config; below position 100 every distance is checked
 * (the dense part reaches 4 * 64 + 64), in both directions: 2 * 100 comparisons per check. */
static void test_bias_t5(void **state)
{
    (void)state;
    posenc_model *m = tu_model("{\"model_type\":\"t5\",\"num_heads\":6,\"d_model\":384,"
                               "\"relative_attention_num_buckets\":16,"
                               "\"relative_attention_max_distance\":64,\"is_decoder\":true}");
    int n = 0, failed = 0;
    cJSON *r = bias_run(m, 100, NULL, &n, &failed);
    assert_int_equal(n, 2);
    assert_int_equal(failed, 0);
    const char *what = "buckets depend only on j-i, monotone in |j-i|, match transformers' "
                       "float32 formula";
    expect_bias_check(cJSON_GetArrayItem(checks_of(r), 0), "t5_bidirectional", what, 200);
    expect_bias_check(cJSON_GetArrayItem(checks_of(r), 1), "t5_causal", what, 200);
    const cJSON *b = at(at(r, "config"), "bias");
    assert_true(num_at(b, "heads") == 6);
    assert_true(num_at(b, "num_buckets") == 16);
    assert_true(num_at(b, "max_distance") == 64);
    assert_true(cJSON_IsTrue(at(b, "is_decoder")));
    assert_true(num_at(b, "max_positions") == 100);
    assert_null(cJSON_GetObjectItemCaseSensitive(b, "alibi_kind"));
    cJSON_Delete(r);
    posenc_model_free(m);
}

/* Marian: the registry's variant unless one is given; the limit from max_position_embeddings.
 * A limit too small to check is the check's error, and the report is left as it was. */
static void test_bias_sinusoidal(void **state)
{
    (void)state;
    posenc_model *m = tu_model("{\"model_type\":\"marian\",\"d_model\":64,"
                               "\"encoder_attention_heads\":4,\"max_position_embeddings\":128}");
    int n = 0, failed = 0;
    cJSON *r = bias_run(m, 0, NULL, &n, &failed);
    assert_int_equal(n, 1);
    assert_int_equal(failed, 0);
    const cJSON *c = cJSON_GetArrayItem(checks_of(r), 0);
    assert_string_equal(str_at(c, "name"), "sinusoidal_rotation");
    assert_true(cJSON_IsTrue(at(c, "ok")));
    assert_true(num_at(at(c, "details"), "checked") > 0);
    assert_non_null(strstr(str_at(c, "summary"), "PE(p+k) is the rotation of PE(p) by PE(k)'s "
                                                 "angles: "));
    const cJSON *b = at(at(r, "config"), "bias");
    assert_string_equal(str_at(b, "variant"), "marian");
    assert_true(num_at(b, "d_model") == 64);
    assert_true(num_at(b, "max_positions") == 128);
    cJSON_Delete(r);

    posenc_sinusoidal_variant v = POSENC_SIN_VASWANI;
    r = bias_run(m, 0, &v, &n, &failed);
    assert_string_equal(str_at(at(at(r, "config"), "bias"), "variant"), "vaswani");
    assert_int_equal(n, 2);
    cJSON_Delete(r);

    r = pe_report_new("9.9");
    posenc_error err = { 0 };
    assert_int_equal(pe_report_bias_checks(r, m, 2, NULL, 7, &n, &failed, &err),
                     POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "too small to check"));
    assert_int_equal(n, 2);
    assert_int_equal(failed, 0);
    assert_int_equal(cJSON_GetArraySize(checks_of(r)), 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(at(r, "config"), "bias"));
    cJSON_Delete(r);
    posenc_model_free(m);
}

/* Learned positions (GPT-2) and none (Mamba): one informational check, which fails nothing. */
static void test_bias_nothing_relative(void **state)
{
    (void)state;
    static const struct { const char *json, *words; } cases[] = {
        { "{\"model_type\":\"gpt2\",\"n_embd\":64,\"n_head\":4,\"n_positions\":256}", "learned" },
        { "{\"model_type\":\"mamba\",\"hidden_size\":64}", "no" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        posenc_model *m = tu_model(cases[i].json);
        int n = 3, failed = 1;
        cJSON *r = bias_run(m, 0, NULL, &n, &failed);
        assert_int_equal(n, 4);
        assert_int_equal(failed, 1);
        assert_int_equal(cJSON_GetArraySize(checks_of(r)), 1);
        const cJSON *c = cJSON_GetArrayItem(checks_of(r), 0);
        assert_string_equal(str_at(c, "name"), "encoding");
        assert_true(cJSON_IsTrue(at(c, "ok")) && cJSON_IsTrue(at(c, "info")));
        char want[200];
        snprintf(want, sizeof want, "the model uses %s positions: nothing relative to verify",
                 cases[i].words);
        assert_string_equal(str_at(c, "summary"), want);
        cJSON_Delete(r);
        posenc_model_free(m);
    }
}

/* ---- verify --gguf ---- */

/* A Llama config: 4 heads of 256 / 4 = 64 dims, theta 500000, context 2048. */
#define LLAMA_JSON                                                                          \
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":256," \
    "\"num_attention_heads\":4,\"max_position_embeddings\":2048,\"rope_theta\":500000.0}"

/* A GGUF file with the keys LlamaModel.set_gguf_parameters writes for LLAMA_JSON (no rope
 * scaling), the base freq_base. */
static void write_llama_gguf(const char *path, const char *arch, double freq_base)
{
    posenc_gguf_rope g = { .has = POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_EMBEDDING_LENGTH |
                                  POSENC_GGUF_HEAD_COUNT | POSENC_GGUF_FREQ_BASE |
                                  POSENC_GGUF_DIMENSION_COUNT,
                           .context_length = 2048, .embedding_length = 256, .head_count = 4,
                           .freq_base = freq_base, .dimension_count = 64 };
    snprintf(g.arch, sizeof g.arch, "%s", arch);
    posenc_write_opts o = { .format = POSENC_FMT_GGUF };
    posenc_writer *w = NULL;
    posenc_error err = { 0 };
    assert_int_equal(posenc_writer_open(path, &o, &w, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_writer_rope(w, &g, &err), POSENC_OK);
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
}

/* Each check's details name its key; n and failed grew by the checks and the failed ones. */
static void expect_consistent(const cJSON *r, int n, int failed, int n0, int failed0)
{
    const cJSON *c;
    int k = 0, bad = 0;
    cJSON_ArrayForEach(c, checks_of(r))
    {
        assert_string_equal(str_at(at(c, "details"), "key"), str_at(c, "name"));
        assert_true(cJSON_IsFalse(at(c, "info")));
        k++;
        bad += !cJSON_IsTrue(at(c, "ok"));
    }
    assert_int_equal(n, n0 + k);
    assert_int_equal(failed, failed0 + bad);
}

/* pe_report_gguf_checks of the Llama model against path into a new report *r, counters from 0 */
static posenc_status gguf_run(const posenc_model *m, const char *path, cJSON **r, int *n,
                              int *failed, posenc_error *err)
{
    *r = pe_report_new("9.9");
    *n = *failed = 0;
    return pe_report_gguf_checks(*r, at(*r, "inputs"), m, NULL, path, 0, n, failed, err);
}

static void test_gguf(void **state)
{
    (void)state;
    posenc_model *m = tu_model(LLAMA_JSON);
    const char *good = tu_path("good.gguf"), *bad = tu_path("bad.gguf");
    write_llama_gguf(good, "llama", 500000);
    write_llama_gguf(bad, "llama", 10000);
    posenc_error err = { 0 };
    cJSON *r;
    int n, failed;

    r = pe_report_new("9.9");
    n = 3; /* the counters grow from what they were */
    failed = 1;
    assert_int_equal(pe_report_gguf_checks(r, at(r, "inputs"), m, NULL, good, 0, &n, &failed,
                                           &err), POSENC_OK);
    assert_string_equal(str_at(at(r, "inputs"), "gguf"), good);
    assert_string_equal(str_at(at(r, "inputs"), "gguf_architecture"), "llama");
    expect_consistent(r, n, failed, 3, 1);
    assert_int_equal(failed, 1); /* none failed */
    assert_non_null(check_named(r, "general.architecture"));
    assert_non_null(check_named(r, "llama.context_length"));
    const cJSON *d = at(check_named(r, "llama.rope.freq_base"), "details");
    assert_string_equal(str_at(d, "expected"), "500000");
    assert_string_equal(str_at(d, "found"), "500000");
    assert_string_equal(str_at(d, "argument"), "freq_base");
    assert_string_equal(str_at(at(check_named(r, "llama.rope.dimension_count"), "details"),
                               "found"), "64");
    cJSON_Delete(r);

    /* theta 10000 in the file: its key fails, and so do ggml's tables computed from it */
    assert_int_equal(gguf_run(m, bad, &r, &n, &failed, &err), POSENC_OK);
    expect_consistent(r, n, failed, 0, 0);
    assert_int_equal(failed, 2);
    const cJSON *c = check_named(r, "llama.rope.freq_base");
    assert_non_null(c);
    assert_true(cJSON_IsFalse(at(c, "ok")));
    assert_string_equal(str_at(at(c, "details"), "expected"), "500000");
    assert_string_equal(str_at(at(c, "details"), "found"), "10000");
    assert_non_null(strstr(str_at(c, "summary"), "expected 500000, found 10000: llama.cpp uses "
                                                 "theta 10000 instead of 500000"));
    assert_true(cJSON_IsFalse(at(check_named(r, "cos/sin (ggml numerics)"), "ok")));
    assert_true(cJSON_IsTrue(at(check_named(r, "llama.context_length"), "ok")));
    cJSON_Delete(r);

    /* the architecture named is the file's, and so are the keys' names */
    const char *qw = tu_path("qwen2.gguf");
    write_llama_gguf(qw, "qwen2", 500000);
    assert_int_equal(gguf_run(m, qw, &r, &n, &failed, &err), POSENC_OK);
    assert_string_equal(str_at(at(r, "inputs"), "gguf_architecture"), "qwen2");
    assert_true(cJSON_IsFalse(at(check_named(r, "general.architecture"), "ok")));
    assert_non_null(check_named(r, "qwen2.rope.freq_base"));
    expect_consistent(r, n, failed, 0, 0);
    cJSON_Delete(r);

    /* no such file: the error names it, the report gets nothing */
    const char *missing = tu_path("missing.gguf");
    assert_int_not_equal(gguf_run(m, missing, &r, &n, &failed, &err), POSENC_OK);
    assert_non_null(strstr(err.msg, missing));
    assert_int_equal(n, 0);
    assert_int_equal(cJSON_GetArraySize(checks_of(r)), 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(at(r, "inputs"), "gguf"));
    cJSON_Delete(r);
    posenc_model_free(m);
}

/* ---- a run over the pairs of a container ---- */

static void test_pairs_run_one_type(void **state)
{
    (void)state;
    posenc_model *m = tu_model(LLAMA_JSON);
    cJSON *r = pe_report_new("9.9"), *inputs = at(r, "inputs");
    pe_report_pairs_run(r, inputs, m, NULL, "d.h5", "e.h5", 3, "layers.*");
    assert_string_equal(str_at(inputs, "dumps"), "d.h5");
    assert_string_equal(str_at(inputs, "expect"), "e.h5");
    assert_true(num_at(inputs, "pairs") == 3);
    assert_string_equal(str_at(inputs, "pairs_glob"), "layers.*");
    const cJSON *rope = at(at(r, "config"), "rope");
    assert_true(num_at(rope, "theta") == 500000); /* rope_theta */
    assert_true(num_at(rope, "head_dim") == 64);  /* 256 / 4 */
    assert_string_equal(str_at(rope, "rope_type"), "default");
    cJSON_Delete(r);

    /* no expect container, no glob: neither key */
    r = pe_report_new("9.9");
    inputs = at(r, "inputs");
    pe_report_pairs_run(r, inputs, m, NULL, "d.npz", NULL, 1, NULL);
    assert_string_equal(str_at(inputs, "dumps"), "d.npz");
    assert_true(num_at(inputs, "pairs") == 1);
    assert_null(cJSON_GetObjectItemCaseSensitive(inputs, "expect"));
    assert_null(cJSON_GetObjectItemCaseSensitive(inputs, "pairs_glob"));
    cJSON_Delete(r);
    posenc_model_free(m);
}

/* Gemma 3: sliding layers use rope_local_base_freq, full layers rope_theta with the legacy
 * rope_scaling; config.rope holds both, keyed by layer type, whichever layer type is named. */
static void test_pairs_run_layer_types(void **state)
{
    (void)state;
    posenc_model *m = tu_model("{\"model_type\":\"gemma3_text\",\"head_dim\":16,"
                               "\"num_attention_heads\":4,\"num_hidden_layers\":3,"
                               "\"rope_theta\":1000000.0,\"rope_local_base_freq\":10000.0,"
                               "\"rope_scaling\":{\"rope_type\":\"linear\",\"factor\":8.0},"
                               "\"layer_types\":[\"sliding_attention\",\"sliding_attention\","
                               "\"full_attention\"]}");
    for (int named = 0; named < 2; named++) {
        cJSON *r = pe_report_new("9.9"), *inputs = at(r, "inputs");
        pe_report_pairs_run(r, inputs, m, named ? "sliding_attention" : NULL, "d.npz", NULL, 2,
                            NULL);
        assert_true(num_at(inputs, "pairs") == 2);
        const cJSON *rope = at(at(r, "config"), "rope");
        assert_int_equal(cJSON_GetArraySize(rope), 2);
        assert_null(cJSON_GetObjectItemCaseSensitive(rope, "theta")); /* not one set */
        const cJSON *s = at(rope, "sliding_attention"), *f = at(rope, "full_attention");
        assert_true(num_at(s, "theta") == 10000);
        assert_string_equal(str_at(s, "rope_type"), "default");
        assert_true(num_at(f, "theta") == 1000000);
        assert_string_equal(str_at(f, "rope_type"), "linear");
        assert_true(num_at(f, "factor") == 8);
        assert_true(num_at(s, "head_dim") == 16 && num_at(f, "head_dim") == 16);
        cJSON_Delete(r);
    }
    posenc_model_free(m);
}

/* A failed pair always says why: another layer type's explanation stays; else its failing
 * checks' diagnoses (or summaries), each prefixed by the check's name. The text summary puts it
 * on the pair's line. */
static void test_pair_explain(void **state)
{
    (void)state;
    cJSON *r = pe_report_new("9.9");
    pe_report_add_check(r, "before", 0, 0, 1, 1, 1, "an earlier pair's check", NULL);
    pe_report_add_check(r, "invariance@/l1", 1, 0, 0, 0, 1, "fine", NULL);
    cJSON *d = pe_report_add_check(r, "expect_q@/l1", 0, 0, 1, 1, 1, "q differs", NULL);
    cJSON_ReplaceItemInObjectCaseSensitive(d, "diagnosis",
                                           cJSON_Parse("{\"explanation\":\"q is not rotated\"}"));
    pe_report_add_check(r, "expect_k@/l1", 0, 0, 1, 1, 1, "k differs in 3 rows", NULL);
    cJSON *row = pe_report_pair_row(r, "/l1", 1, "full_attention", 1);
    cJSON_AddBoolToObject(row, "ok", 0);
    cJSON_AddNullToObject(row, "explanation"); /* no other layer type passed it */
    pe_report_pair_explain(r, row, 1);
    assert_string_equal(str_at(row, "explanation"), "expect_q@/l1: q is not rotated; "
                                                    "expect_k@/l1: k differs in 3 rows");
    /* an explanation already there stays; a passing pair gets none */
    cJSON_ReplaceItemInObjectCaseSensitive(row, "explanation",
                                           cJSON_CreateString("k matches when rotated with "
                                                              "layer type 'sliding_attention'"));
    pe_report_pair_explain(r, row, 1);
    assert_string_equal(str_at(row, "explanation"), "k matches when rotated with layer type "
                                                    "'sliding_attention'");
    cJSON *good = pe_report_pair_row(r, "/l2", 2, "linear_attention", 0);
    cJSON_AddBoolToObject(good, "ok", 1);
    pe_report_pair_explain(r, good, 4);
    assert_null(cJSON_GetObjectItemCaseSensitive(good, "explanation"));
    char *t = pe_report_text(r, 3, 4);
    assert_non_null(t);
    assert_non_null(strstr(t, "\nFAIL  pair /l1             layer 1, full_attention: k matches "
                              "when rotated with layer type 'sliding_attention'\n"));
    assert_non_null(strstr(t, "\nok    pair /l2             layer 2, linear_attention, no "
                              "RoPE\n"));
    free(t);
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bias_alibi),
        cmocka_unit_test(test_bias_alibi_no_heads),
        cmocka_unit_test(test_bias_t5),
        cmocka_unit_test(test_bias_sinusoidal),
        cmocka_unit_test(test_bias_nothing_relative),
        cmocka_unit_test(test_gguf),
        cmocka_unit_test(test_pairs_run_one_type),
        cmocka_unit_test(test_pairs_run_layer_types),
        cmocka_unit_test(test_pair_explain),
    };
    return cmocka_run_group_tests_name("report_checks", tests, tu_setup, tu_teardown);
}
