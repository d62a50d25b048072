/* test_verify_checks.c: the table of checks for models that do not rotate
 * (lib/verify/verify_checks.c): which checks each encoding runs, in which order and with which words,
 * the parameters and defaults they run with (T5 32 buckets / 128 distance, the position limit
 * from --max-position, the config or 2048), each result equal to a direct call of the check
 * (lib/verify/verify.c), ALiBi without heads refused, nothing to run for an absolute encoding. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/config.h"
#include "lib/verify/verify_checks.h"

static posenc_model *load(const char *name, const char *json)
{
    const char *path = tu_path(name);
    tu_write_file(path, json, strlen(json));
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    posenc_load_opts lo;
    memset(&lo, 0, sizeof lo);
    if (posenc_config_load(path, &lo, &m, &err) != POSENC_OK)
        print_error("%s: %s\n", name, err.msg);
    assert_non_null(m);
    return m;
}

static void same_result(const posenc_bias_check_result *a, const posenc_bias_check_result *b)
{
    assert_int_equal(a->checked, b->checked);
    assert_int_equal(a->violations, b->violations);
    assert_true(a->max_abs_err == b->max_abs_err);
    assert_int_equal(a->worst_i, b->worst_i);
    assert_int_equal(a->worst_j, b->worst_j);
}

static void test_alibi(void **state)
{
    (void)state;
    posenc_model *m = load("bloom.json", "{\"model_type\": \"bloom\", \"n_head\": 8, "
                                         "\"hidden_size\": 512}");
    pe_bias_run run;
    posenc_error err = { 0 };
    assert_int_equal(pe_verify_bias_run(m, 300, NULL, 1, &run, &err), POSENC_OK);
    assert_int_equal(run.enc, POSENC_ENC_ALIBI);
    assert_int_equal(run.max_positions, 300);
    assert_int_equal(run.heads, 8);
    assert_string_equal(run.alibi_kind, "reference");
    assert_int_equal(run.n, 3);
    static const posenc_alibi_convention conv[] = { POSENC_ALIBI_SYMMETRIC, POSENC_ALIBI_CAUSAL,
                                                    POSENC_ALIBI_KEYINDEX };
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "alibi_%s", posenc_alibi_convention_name(conv[i]));
        assert_string_equal(run.c[i].name, name);
        assert_string_equal(run.c[i].what, "b(i,j) - b(i,i) == -m(i-j) for j <= i, 8 heads");
        posenc_bias_check_result r;
        assert_int_equal(posenc_verify_alibi(posenc_model_bias(m), conv[i], 300, &r, &err),
                         POSENC_OK);
        same_result(&run.c[i].r, &r);
        assert_int_equal(r.violations, 0);
    }
    /* no --max-position: 2048 when the config names no limit */
    assert_int_equal(pe_verify_bias_run(m, 0, NULL, 1, &run, &err), POSENC_OK);
    assert_int_equal(run.max_positions, 2048);
    posenc_model_free(m);
}

static void test_t5(void **state)
{
    (void)state;
    posenc_model *m = load("t5.json", "{\"model_type\": \"t5\", \"num_heads\": 8, "
                                      "\"d_model\": 512, \"d_kv\": 64, \"is_decoder\": true}");
    pe_bias_run run;
    posenc_error err = { 0 };
    assert_int_equal(pe_verify_bias_run(m, 200, NULL, 1, &run, &err), POSENC_OK);
    assert_int_equal(run.enc, POSENC_ENC_T5);
    assert_int_equal(run.num_buckets, 32); /* T5's defaults, absent from the config */
    assert_int_equal(run.max_distance, 128);
    assert_int_equal(run.is_decoder, 1);
    assert_int_equal(run.n, 2);
    assert_string_equal(run.c[0].name, "t5_bidirectional");
    assert_string_equal(run.c[1].name, "t5_causal");
    for (int i = 0; i < 2; i++) {
        posenc_bias_check_result r;
        assert_int_equal(posenc_verify_t5(32, 128, i == 0, 200, &r, &err), POSENC_OK);
        same_result(&run.c[i].r, &r);
    }
    posenc_model_free(m);
}

static void test_sinusoidal(void **state)
{
    (void)state;
    posenc_model *m = load("marian.json", "{\"model_type\": \"marian\", \"d_model\": 64, "
                                          "\"encoder_attention_heads\": 4, "
                                          "\"max_position_embeddings\": 128, "
                                          "\"pad_token_id\": 5}");
    pe_bias_run run;
    posenc_error err = { 0 };
    assert_int_equal(pe_verify_bias_run(m, 0, NULL, 7, &run, &err), POSENC_OK);
    assert_int_equal(run.enc, POSENC_ENC_SINUSOIDAL);
    assert_int_equal(run.n, 1);
    assert_string_equal(run.c[0].name, "sinusoidal_rotation");
    assert_int_equal(run.d_model, 64);
    assert_int_equal(run.max_positions, 128);
    posenc_bias_check_result r;
    assert_int_equal(posenc_verify_sinusoidal(run.variant, 64, -1, 128, 7, &r, &err), POSENC_OK);
    same_result(&run.c[0].r, &r);
    /* a variant given: fairseq checks with the padding index */
    posenc_sinusoidal_variant v = POSENC_SIN_FAIRSEQ;
    assert_int_equal(pe_verify_bias_run(m, 0, &v, 7, &run, &err), POSENC_OK);
    assert_int_equal(run.variant, POSENC_SIN_FAIRSEQ);
    assert_int_equal(posenc_verify_sinusoidal(v, 64, posenc_model_bias(m)->padding_idx, 128, 7,
                                              &r, &err), POSENC_OK);
    same_result(&run.c[0].r, &r);
    posenc_model_free(m);
}

static void test_others(void **state)
{
    (void)state;
    posenc_model *m = load("gpt2.json", "{\"model_type\": \"gpt2\", \"n_embd\": 64, "
                                        "\"n_head\": 4, \"n_positions\": 256}");
    pe_bias_run run;
    posenc_error err = { 0 };
    assert_int_equal(pe_verify_bias_run(m, 0, NULL, 1, &run, &err), POSENC_OK);
    assert_int_equal(run.n, 0);
    assert_int_equal(run.max_positions, 256);
    posenc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alibi),
        cmocka_unit_test(test_t5),
        cmocka_unit_test(test_sinusoidal),
        cmocka_unit_test(test_others),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
