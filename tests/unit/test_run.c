/* test_run.c: the steps every command's run shares (formats/engines/run.c): a failure's line and
 * fault (the run's own of any length, or err's), notes, the layer-type rule of a
 * posenc_model_rope failure, loading a config (unknown family, a file that is not there, the
 * warning of an unknown model_type), the outputs against the inputs, --positions. */
#include <string.h>

#include "testutil.h"
#include "posenc/config.h"
#include "posenc/model.h"
#include "formats/engines/run.h"
#include "formats/io/inputs.h"

#define LLAMA                                                                              \
    "{\"model_type\":\"llama\",\"hidden_size\":64,\"num_attention_heads\":4,"              \
    "\"rope_theta\":10000.0,\"max_position_embeddings\":64}"
#define UNKNOWN                                                                            \
    "{\"model_type\":\"zzz_unknown\",\"hidden_size\":64,\"num_attention_heads\":4,"        \
    "\"rope_theta\":10000.0,\"max_position_embeddings\":64}"
#define BLOOM "{\"model_type\":\"bloom\",\"n_head\":4,\"hidden_size\":64}"

/* The notes a step gave, one after the other. */
static char notes[1024];
static void note(void *ctx, const char *msg)
{
    (void)ctx;
    snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "%s\n", msg);
}

static void test_fail(void **state)
{
    (void)state;
    pe_run_fail f = { 0 };
    posenc_error err = { 0 };
    char long_name[POSENC_ERRMSG_MAX * 2];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    /* the run's own line is kept whole, however long (err's is capped) */
    assert_int_equal(pe_run_refuse(&f, &err, PE_RUN_FAULT_USAGE, POSENC_EINVAL, "'%s': no",
                                   long_name), POSENC_EINVAL);
    assert_int_equal(f.fault, PE_RUN_FAULT_USAGE);
    assert_int_equal(strlen(f.msg), strlen(long_name) + 6);
    /* err's line: no message of the run's own */
    assert_int_equal(pe_run_failed(&f, PE_RUN_FAULT_USAGE_ARG, POSENC_EIO), POSENC_EIO);
    assert_null(f.msg);
    assert_int_equal(f.fault, PE_RUN_FAULT_USAGE_ARG);
    pe_run_fail_free(&f);
    pe_run_fail_free(NULL);

    notes[0] = '\0';
    pe_run_notef(note, NULL, "'%s': %d", "a", 7);
    pe_run_notef(NULL, NULL, "dropped");
    assert_string_equal(notes, "'a': 7\n");
}

static void test_rope_fault(void **state)
{
    (void)state;
    posenc_model *rope = tu_model(LLAMA), *alibi = tu_model(BLOOM);
    posenc_error einval = { POSENC_EINVAL, "x" }, eio = { POSENC_EIO, "x" },
                 enotfound = { POSENC_ENOTFOUND, "x" };
    assert_int_equal(pe_run_rope_fault(rope, &einval), PE_RUN_FAULT_USAGE_ARG);
    assert_int_equal(pe_run_rope_fault(rope, &enotfound), PE_RUN_FAULT_USAGE_ARG);
    assert_int_equal(pe_run_rope_fault(rope, &eio), PE_RUN_FAULT_ERROR);
    assert_int_equal(pe_run_rope_fault(alibi, &einval), PE_RUN_FAULT_ERROR); /* the input's fact */
    posenc_model_free(rope);
    posenc_model_free(alibi);
}

static void test_config(void **state)
{
    (void)state;
    pe_run_fail f = { 0 };
    posenc_error err = { 0 };
    posenc_model *m = NULL;
    const char *c = tu_path("c.json"), *u = tu_path("u.json");
    tu_write_file(c, LLAMA, strlen(LLAMA));
    tu_write_file(u, UNKNOWN, strlen(UNKNOWN));

    assert_int_equal(pe_run_config(c, NULL, note, NULL, &m, &f, &err), POSENC_OK);
    assert_non_null(m);
    posenc_model_free(m);

    assert_int_not_equal(pe_run_config(c, "nosuch", note, NULL, &m, &f, &err), POSENC_OK);
    assert_null(m);
    assert_int_equal(f.fault, PE_RUN_FAULT_USAGE);
    assert_non_null(strstr(f.msg, "--family: "));

    assert_int_not_equal(pe_run_config(tu_path("nosuch.json"), NULL, note, NULL, &m, &f, &err),
                         POSENC_OK);
    assert_int_equal(f.fault, PE_RUN_FAULT_ERROR);
    assert_null(f.msg); /* err's line */
    assert_non_null(strstr(err.msg, "nosuch.json"));

    notes[0] = '\0';
    assert_int_equal(pe_run_config(u, NULL, note, NULL, &m, &f, &err), POSENC_OK);
    assert_non_null(strstr(notes, "u.json': model_type 'zzz_unknown'"));
    posenc_model_free(m);
    pe_run_fail_free(&f);
}

static void test_outputs(void **state)
{
    (void)state;
    pe_run_fail f = { 0 };
    posenc_error err = { 0 };
    const char *in = tu_path("in.json"), *out = tu_path("out.npz");
    tu_write_file(in, LLAMA, strlen(LLAMA));
    pe_inputs_guard(1);
    const char *ins[] = { in, NULL };
    assert_int_equal(pe_run_outputs(&out, 1, ins, 2, note, NULL, &f, &err), POSENC_OK);
    assert_int_equal(pe_run_outputs(&in, 1, ins, 2, note, NULL, &f, &err), POSENC_EOVERWRITE);
    assert_int_equal(f.fault, PE_RUN_FAULT_USAGE_ARG); /* exit 2, no help hint */
    assert_null(f.msg);
    pe_inputs_guard(0);
    pe_run_fail_free(&f);
}

static void test_positions(void **state)
{
    (void)state;
    pe_run_fail f = { 0 };
    posenc_error err = { 0 };
    pe_positions *p = NULL;
    assert_int_equal(pe_run_positions("0,5,9", 16, 16, &p, &f, &err), POSENC_OK);
    assert_non_null(p);
    pe_positions_free(p);
    assert_int_not_equal(pe_run_positions("9-3", 16, 16, &p, &f, &err), POSENC_OK);
    assert_null(p);
    assert_int_equal(f.fault, PE_RUN_FAULT_USAGE);
    assert_true(strncmp(f.msg, "--positions: ", 13) == 0);
    assert_int_not_equal(pe_run_positions("20", 16, 16, &p, &f, &err), POSENC_OK);
    assert_int_equal(f.fault, PE_RUN_FAULT_USAGE);
    pe_run_fail_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fail),
        cmocka_unit_test(test_rope_fault),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_outputs),
        cmocka_unit_test(test_positions),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
