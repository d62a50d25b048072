/* test_genrun.c: the engine of posenc gen (formats/engines/genrun.c) driven directly: a RoPE
 * table written, and each refusal with its fault and line (a name without a format, '-o -'
 * for several arrays, --array naming no array, a parameter of another encoding, the size
 * limit, a C header of every default position, a config without position encoding), none of
 * which leaves a file. */
#include <string.h>

#include "testutil.h"
#include "formats/engines/genrun.h"

#define LLAMA                                                                              \
    "{\"model_type\":\"llama\",\"hidden_size\":64,\"num_attention_heads\":4,"              \
    "\"rope_theta\":10000.0,\"max_position_embeddings\":64}"
/* a long context: a C header of every default position is over the limit */
#define LLAMA_LONG                                                                         \
    "{\"model_type\":\"llama\",\"hidden_size\":512,\"num_attention_heads\":4,"             \
    "\"rope_theta\":10000.0,\"max_position_embeddings\":131072}"
#define NOPE "{\"model_type\":\"nemotron_h\",\"hidden_size\":64,\"num_attention_heads\":4}"

static pe_grun_req req(const char *config, const char *out)
{
    pe_grun_req r;
    memset(&r, 0, sizeof r);
    r.a.config = config;
    r.a.out = out;
    r.a.dtype = POSENC_DT_F32;
    r.a.encoding = POSENC_ENC_ROPE;
    r.a.precision = POSENC_PREC_EXACT;
    r.a.layout = POSENC_LAYOUT_HF;
    r.a.nthreads = 1;
    r.wopts.format = POSENC_FMT_AUTO;
    return r;
}

/* Run r; expect a failure of fault whose line (the run's own or err's) holds what. */
static void refused(const pe_grun_req *r, int fault, const char *what)
{
    pe_run_fail f;
    posenc_error err = { 0 };
    assert_int_not_equal(pe_grun_exec(r, &f, &err), POSENC_OK);
    assert_int_equal(f.fault, fault);
    const char *line = f.msg ? f.msg : err.msg;
    if (!strstr(line, what))
        fail_msg("'%s' does not say '%s'", line, what);
    pe_run_fail_free(&f);
    assert_false(tu_exists(r->a.out));
}

static void test_write(void **state)
{
    (void)state;
    const char *c = tu_path("c.json");
    tu_write_file(c, LLAMA, strlen(LLAMA));
    pe_grun_req r = req(c, tu_path("t.npz"));
    r.a.seq_len = 8;
    pe_run_fail f;
    posenc_error err = { 0 };
    assert_int_equal(pe_grun_exec(&r, &f, &err), POSENC_OK);
    assert_null(f.msg);
    assert_true(tu_exists(r.a.out));
    assert_false(tu_tmp_left());
}

static void test_refusals(void **state)
{
    (void)state;
    const char *c = tu_path("c.json"), *cl = tu_path("long.json"), *n = tu_path("nope.json");
    tu_write_file(c, LLAMA, strlen(LLAMA));
    tu_write_file(cl, LLAMA_LONG, strlen(LLAMA_LONG));
    tu_write_file(n, NOPE, strlen(NOPE));
    pe_grun_req r = req(c, tu_path("t.xyz"));
    refused(&r, PE_RUN_FAULT_USAGE, "cannot tell the output format from the name");
    r = req(c, tu_path("t.npy"));
    refused(&r, PE_RUN_FAULT_USAGE, "an NPY file holds one array: pass --array");
    r = req(c, tu_path("r.npz"));
    r.array = "foo";
    refused(&r, PE_RUN_FAULT_USAGE, "--array: 'foo' is not an array of a RoPE table");
    r = req(c, tu_path("r.npz"));
    r.a.p.given = PE_TP_BIT(PE_TP_HEADS);
    refused(&r, PE_RUN_FAULT_USAGE, "--heads does not apply to RoPE tables");
    r = req(c, tu_path("r.npz"));
    r.a.seq_len = (int64_t)1 << 40;
    refused(&r, PE_RUN_FAULT_ERROR, "over the 4 GiB limit; pass --force");
    r = req(cl, tu_path("t.h"));
    refused(&r, PE_RUN_FAULT_ERROR, "a C header of all 131072 default positions");
    r = req(n, tu_path("r.npz"));
    refused(&r, PE_RUN_FAULT_ERROR, "uses no position encoding (NoPE)");
    r = req(tu_path("nosuch.json"), tu_path("r.npz"));
    refused(&r, PE_RUN_FAULT_ERROR, "nosuch.json");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
