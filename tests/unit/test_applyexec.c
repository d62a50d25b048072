/* test_applyexec.c: the engine of posenc apply (formats/engines/applyexec.c) driven directly:
 * one dump rotated into -o OUT and beside itself, a Q/K pair into one container, and each
 * refusal with its fault (the usage rules of '-', positions that do not fit the dump, a config
 * with several layer types and none chosen, a model without RoPE, an output that is an input),
 * none of which leaves a file. The notes go to the request's note function. */
#include <string.h>

#include "testutil.h"
#include "formats/engines/applyexec.h"
#include "formats/io/inputs.h"

#define LLAMA                                                                              \
    "{\"model_type\":\"llama\",\"hidden_size\":64,\"num_attention_heads\":4,"              \
    "\"rope_theta\":10000.0,\"max_position_embeddings\":64}"
#define GEMMA3                                                                             \
    "{\"model_type\":\"gemma3_text\",\"head_dim\":16,\"num_attention_heads\":4,"           \
    "\"num_hidden_layers\":2,\"layer_types\":[\"sliding_attention\",\"full_attention\"],"  \
    "\"rope_theta\":1000000.0,\"rope_local_base_freq\":10000.0,"                           \
    "\"max_position_embeddings\":64}"
#define BLOOM "{\"model_type\":\"bloom\",\"n_head\":4,\"hidden_size\":64}"

enum { H = 4, S = 8, D = 16, N = H * S * D }; /* a [1, H, S, D] dump (bhsd) */

static pe_arun_req req(const char *config, const char *in0, const char *in1, const char *out)
{
    pe_arun_req r;
    memset(&r, 0, sizeof r);
    r.set.config = config;
    r.set.layout = POSENC_APPLY_BHSD;
    r.set.style = POSENC_STYLE_NEOX;
    r.set.prec = POSENC_PREC_EXACT;
    r.set.nthreads = 1;
    r.in[0] = in0;
    r.in[1] = in1;
    r.nin = in1 ? 2 : 1;
    r.out = out;
    return r;
}

/* Run r; expect a failure of fault whose line (the run's own or err's) holds what, and no
 * file at r->out. */
static void refused(const pe_arun_req *r, int fault, const char *what)
{
    pe_run_fail f;
    posenc_error err = { 0 };
    assert_int_not_equal(pe_arun_exec(r, &f, &err), POSENC_OK);
    assert_int_equal(f.fault, fault);
    const char *line = f.msg ? f.msg : err.msg;
    if (!strstr(line, what))
        fail_msg("'%s' does not say '%s'", line, what);
    pe_run_fail_free(&f);
    if (r->out && strcmp(r->out, "-") != 0 && strcmp(r->out, r->in[0]) != 0)
        assert_false(tu_exists(r->out));
    assert_false(tu_tmp_left());
}

static void ok(const pe_arun_req *r)
{
    pe_run_fail f;
    posenc_error err = { 0 };
    if (pe_arun_exec(r, &f, &err) != POSENC_OK)
        fail_msg("%s", f.msg ? f.msg : err.msg);
    pe_run_fail_free(&f);
}

static void write_fixtures(void)
{
    static float q[N];
    for (int i = 0; i < N; i++)
        q[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    tu_array a = { "q", POSENC_DT_F32, 4, { 1, H, S, D }, q };
    tu_write_arrays(tu_path("q.npy"), &a, 1);
    tu_write_arrays(tu_path("k.npy"), &a, 1);
    tu_write_file(tu_path("c.json"), LLAMA, strlen(LLAMA));
    tu_write_file(tu_path("g.json"), GEMMA3, strlen(GEMMA3));
    tu_write_file(tu_path("b.json"), BLOOM, strlen(BLOOM));
}

static void test_write(void **state)
{
    (void)state;
    write_fixtures();
    pe_arun_req r = req(tu_path("c.json"), tu_path("q.npy"), NULL, tu_path("qr.npy"));
    ok(&r);
    assert_true(tu_exists(r.out));
    r = req(tu_path("c.json"), tu_path("q.npy"), NULL, NULL); /* beside the input */
    ok(&r);
    assert_true(tu_exists(tu_path("q.rope.npy")));
    r = req(tu_path("c.json"), tu_path("q.npy"), tu_path("k.npy"), tu_path("qk.npz"));
    r.offset = 5;
    ok(&r);
    assert_true(tu_exists(r.out));
    r = req(tu_path("g.json"), tu_path("q.npy"), NULL, tu_path("qg.npy"));
    r.set.layer_type = "sliding_attention";
    ok(&r);
    assert_true(tu_exists(r.out));
}

static void test_refusals(void **state)
{
    (void)state;
    write_fixtures();
    pe_arun_req r = req(tu_path("c.json"), "-", NULL, NULL);
    refused(&r, PE_RUN_FAULT_USAGE, "reading stdin needs -o OUT");
    r = req(tu_path("c.json"), "-", "-", tu_path("o.npz"));
    refused(&r, PE_RUN_FAULT_USAGE, "only one input can be '-'");
    r = req(tu_path("c.json"), tu_path("q.npy"), tu_path("k.npy"), "-");
    refused(&r, PE_RUN_FAULT_USAGE, "'-o -' writes one tensor");
    r = req(tu_path("c.json"), tu_path("q.npy"), NULL, tu_path("o.npy"));
    r.glob = "x*";
    refused(&r, PE_RUN_FAULT_USAGE, "no q/k pair matches --pairs");
    r = req(tu_path("c.json"), tu_path("q.npy"), NULL, tu_path("o.npy"));
    r.set.positions_arg = "0-3";
    refused(&r, PE_RUN_FAULT_USAGE, "--positions: 4 positions for a sequence of 8 tokens");
    r = req(tu_path("g.json"), tu_path("q.npy"), NULL, tu_path("o.npy"));
    refused(&r, PE_RUN_FAULT_USAGE_ARG, "several RoPE layer types");
    r = req(tu_path("b.json"), tu_path("q.npy"), NULL, tu_path("o.npy"));
    refused(&r, PE_RUN_FAULT_ERROR, "uses alibi, not RoPE");
    r = req(tu_path("c.json"), tu_path("q.npy"), NULL, tu_path("o.npy"));
    r.family = "nosuch";
    refused(&r, PE_RUN_FAULT_USAGE, "--family: ");
    pe_inputs_guard(1);
    r = req(tu_path("c.json"), tu_path("q.npy"), NULL, tu_path("q.npy"));
    refused(&r, PE_RUN_FAULT_USAGE_ARG, "refusing to overwrite an input");
    pe_inputs_guard(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
