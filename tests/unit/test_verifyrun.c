/* test_verifyrun.c: the engine of posenc verify (formats/engines/verifyrun.c) driven directly: the
 * checks of a config alone (one parameter set, several layer types), of Q/K dumps against
 * their rotation (a correct runtime passes, one that pairs dims GPT-J style where the config
 * says NeoX fails with a diagnosis), the fault each failure reads as, and which dump arguments
 * open as a container of pairs. Dumps are written through the public writer API; the
 * runtime's rotated dumps are made with the public rotation API (transformers' numerics). */
#include <string.h>

#include <cJSON.h>

#include "testutil.h"
#include "posenc/apply.h"
#include "posenc/config.h"
#include "posenc/model.h"
#include "formats/engines/verifyrun.h"

/* Llama-style: head_dim 64 / 4 = 16, theta 1e4, 64 positions */
#define LLAMA                                                                              \
    "{\"model_type\":\"llama\",\"hidden_size\":64,\"num_attention_heads\":4,"              \
    "\"rope_theta\":10000.0,\"max_position_embeddings\":64}"
/* Gemma 3: sliding layers use rope_local_base_freq, full layers rope_theta */
#define GEMMA3                                                                             \
    "{\"model_type\":\"gemma3_text\",\"head_dim\":16,\"num_attention_heads\":2,"           \
    "\"num_hidden_layers\":2,\"layer_types\":[\"sliding_attention\",\"full_attention\"],"  \
    "\"rope_theta\":1000000.0,\"rope_local_base_freq\":10000.0,"                           \
    "\"max_position_embeddings\":64}"

enum { H = 2, S = 8, D = 16, N = H * S * D }; /* a [1, H, S, D] dump (bhsd) */

static pe_vrun_req req(void)
{
    pe_vrun_req r;
    memset(&r, 0, sizeof r);
    r.config = "c.json";
    r.layout = POSENC_APPLY_BHSD;
    r.seed = 1;
    r.samples = 4;
    return r;
}

/* The check named name in the report (fails the test when absent). */
static const cJSON *check(const pe_vrun *v, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(v->root, "checks"))
        if (strcmp(cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring, name) == 0)
            return c;
    fail_msg("no check '%s'", name);
    return NULL;
}

static int check_ok(const pe_vrun *v, const char *name)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(check(v, name), "ok"));
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(x))
        fail_msg("'%s' is not a number", key);
    return x->valuedouble;
}

static int report_ok(const pe_vrun *v)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v->root, "ok"));
}

static void exec_ok(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m)
{
    posenc_error err = { 0 };
    if (pe_vrun_exec(v, rq, m, &err) != POSENC_OK)
        fail_msg("pe_vrun_exec: %s", err.msg);
}

/* A run that fails with fault and a message containing want (and want2 when not NULL). */
static void exec_fails(const pe_vrun_req *rq, const posenc_model *m, int fault,
                       const char *want, const char *want2)
{
    pe_vrun v;
    posenc_error err = { 0 };
    assert_int_not_equal(pe_vrun_exec(&v, rq, m, &err), POSENC_OK);
    if (!strstr(err.msg, want) || (want2 && !strstr(err.msg, want2)))
        fail_msg("message '%s' lacks '%s' / '%s'", err.msg, want, want2 ? want2 : "");
    assert_int_equal(v.fault, fault);
    assert_null(strchr(err.msg, '\n'));
    pe_vrun_free(&v);
}

/* Deterministic values in [-1, 1). */
static void fill(float *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) / 8388608.0 - 1.0);
    }
}

/* Write x as file in the scratch directory; its path, kept in buf (tu_path's buffers are
 * reused after eight calls). */
static const char *write_dump(const char *file, const float *x, char *buf, size_t len)
{
    tu_array a = { "x", POSENC_DT_F32, 4, { 1, H, S, D }, x };
    snprintf(buf, len, "%s", tu_path(file));
    tu_write_arrays(buf, &a, 1);
    return buf;
}

/* x rotated as transformers does (hf precision) at positions offset.., with the config's
 * parameters, its pairing replaced by style, its theta by theta when > 0. */
static void rotate(const posenc_model *m, posenc_style style, double theta, int64_t offset,
                   const float *x, float *y)
{
    posenc_rope_config cfg;
    posenc_rope_params p;
    posenc_error err = { 0 };
    assert_int_equal(posenc_model_rope(m, NULL, &cfg, &err), POSENC_OK);
    cfg.style = style;
    if (theta > 0)
        cfg.theta = theta;
    assert_int_equal(posenc_rope_params_compute(&cfg, 0, &p, &err), POSENC_OK);
    posenc_apply_opts o = { POSENC_PREC_HF, 0, POSENC_DT_F32 };
    posenc_apply_positions pos = { NULL, offset, 1, 1 };
    posenc_apply *a = NULL;
    assert_int_equal(posenc_apply_new(&p, &o, &pos, S, 1, &a, &err), POSENC_OK);
    posenc_apply_shape sh = { POSENC_APPLY_BHSD, 1, H, S, D };
    posenc_apply_rows(a, &sh, 0, H * S, x, POSENC_DT_F32, y, POSENC_DT_F32);
    posenc_apply_free(a);
}

/* A config alone, one parameter set: three invariance checks of seeded random pairs up to
 * max_position_embeddings; an exact rotation is exactly relative, so the deviation is float32
 * rounding only. */
static void test_config(void **state)
{
    (void)state;
    posenc_model *m = tu_model(LLAMA);
    pe_vrun_req rq = req();
    rq.seed = 7;
    pe_vrun v;
    exec_ok(&v, &rq, m);
    assert_int_equal(v.n_checks, 3);
    assert_int_equal(v.failed, 0);
    assert_true(report_ok(&v));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v.root, "checks")), 3);
    const char *names[] = { "invariance", "invariance_hf", "tables" };
    for (int i = 0; i < 3; i++)
        assert_true(check_ok(&v, names[i]));
    const cJSON *inv = check(&v, "invariance");
    assert_true(num(inv, "max_rel_err") < 1e-5);
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(inv, "details");
    assert_int_equal(num(det, "max_position"), 64);
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(det, "source")->valuestring,
                           "4 seeded unit-normal (q, k) pairs per distance, seed 7"));
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(v.root, "inputs");
    assert_int_equal(num(inputs, "seed"), 7);
    assert_int_equal(num(inputs, "samples"), 4);
    const cJSON *rope =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v.root, "config"), "rope");
    assert_true(cJSON_IsObject(rope));
    assert_int_equal(num(rope, "theta"), 10000);
    assert_int_equal(num(rope, "head_dim"), 16);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(rope, "style")->valuestring, "neox");
    pe_vrun_free(&v);

    /* --max-position bounds the offsets checked */
    rq.max_position = 32;
    exec_ok(&v, &rq, m);
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(check(&v, "invariance"), "details"),
                         "max_position"), 32);
    pe_vrun_free(&v);
    pe_vrun_free(&v); /* twice is harmless */
    posenc_model_free(m);
}

/* Several layer types: the three checks per layer type, NAME:LAYER_TYPE, and config.rope keyed
 * by layer type with each type's own theta. One --layer-type: that type's checks alone. */
static void test_layer_types(void **state)
{
    (void)state;
    posenc_model *m = tu_model(GEMMA3);
    pe_vrun_req rq = req();
    pe_vrun v;
    exec_ok(&v, &rq, m);
    assert_int_equal(v.n_checks, 6);
    assert_int_equal(v.failed, 0);
    assert_true(report_ok(&v));
    static const struct { const char *lt; double theta; } lts[] = {
        { "sliding_attention", 1e4 }, { "full_attention", 1e6 } };
    const cJSON *ropes =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v.root, "config"), "rope");
    assert_int_equal(cJSON_GetArraySize(ropes), 2);
    for (int i = 0; i < 2; i++) {
        char name[96];
        const char *base[] = { "invariance", "invariance_hf", "tables" };
        for (int b = 0; b < 3; b++) {
            snprintf(name, sizeof name, "%s:%s", base[b], lts[i].lt);
            assert_true(check_ok(&v, name));
        }
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(ropes, lts[i].lt);
        assert_true(cJSON_IsObject(r));
        assert_int_equal(num(r, "theta"), lts[i].theta);
    }
    pe_vrun_free(&v);

    rq.layer_type = "full_attention";
    exec_ok(&v, &rq, m);
    assert_int_equal(v.n_checks, 3);
    assert_true(check_ok(&v, "invariance"));
    const cJSON *rope =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v.root, "config"), "rope");
    assert_int_equal(num(rope, "theta"), 1e6);
    pe_vrun_free(&v);
    posenc_model_free(m);
}

/* Pre-RoPE dumps and a runtime's rotated ones: transformers' rotation passes both comparisons;
 * a runtime that pairs dims (2i, 2i+1) where the config says (i, i + 8) fails k and the
 * diagnosis names the swapped style; one that used theta 5e5 fails and the theta is implied. */
static void test_dumps(void **state)
{
    (void)state;
    posenc_model *m = tu_model(LLAMA);
    float q[N], k[N], eq[N], ek[N], bad[N];
    fill(q, N, 1);
    fill(k, N, 2);
    rotate(m, POSENC_STYLE_NEOX, 0, 0, q, eq);
    rotate(m, POSENC_STYLE_NEOX, 0, 0, k, ek);
    /* the fixture is RoPE: head 0, position 1, pair (0, 8) turns by inv_freq[0] = 1 radian */
    assert_close(eq[D + 0], q[D + 0] * cos(1.0) - q[D + 8] * sin(1.0), 1e-6, 1e-6);
    assert_close(eq[D + 8], q[D + 8] * cos(1.0) + q[D + 0] * sin(1.0), 1e-6, 1e-6);
    char files[4][512];
    pe_vrun_req rq = req();
    rq.q = write_dump("q.npy", q, files[0], sizeof files[0]);
    rq.k = write_dump("k.npy", k, files[1], sizeof files[1]);
    rq.eq = write_dump("eq.npy", eq, files[2], sizeof files[2]);
    rq.ek = write_dump("ek.npy", ek, files[3], sizeof files[3]);
    pe_vrun v;
    exec_ok(&v, &rq, m);
    /* invariance of the sampled pre-RoPE rows (3) and the two comparisons */
    assert_int_equal(v.n_checks, 5);
    assert_int_equal(v.failed, 0);
    assert_true(report_ok(&v));
    assert_true(check_ok(&v, "invariance"));
    assert_true(check_ok(&v, "expect_q"));
    assert_true(check_ok(&v, "expect_k"));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(check(&v, "expect_k"), "diagnosis")));
    const cJSON *rope =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v.root, "config"), "rope");
    assert_int_equal(num(rope, "theta"), 10000);
    pe_vrun_free(&v);

    /* k rotated GPT-J style: q still passes, k fails, explained by the swapped style */
    rotate(m, POSENC_STYLE_GPTJ, 0, 0, k, bad);
    rq.ek = write_dump("ek_gptj.npy", bad, files[3], sizeof files[3]);
    exec_ok(&v, &rq, m);
    assert_int_equal(v.n_checks, 5);
    assert_int_equal(v.failed, 1);
    assert_false(report_ok(&v));
    assert_true(check_ok(&v, "expect_q"));
    assert_false(check_ok(&v, "expect_k"));
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(check(&v, "expect_k"), "diagnosis");
    assert_true(cJSON_IsObject(d));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "explained")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(d, "best")->valuestring,
                        "style_swapped");
    assert_true(num(d, "config_max_rel_err") > 1e-3);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(check(&v, "expect_q"), "diagnosis")));
    pe_vrun_free(&v);

    /* both rotated with theta 5e5 (at positions 2.., so the angles differ enough) */
    rq.offset = 2;
    rotate(m, POSENC_STYLE_NEOX, 5e5, 2, q, bad);
    rq.eq = write_dump("eq_theta.npy", bad, files[2], sizeof files[2]);
    rotate(m, POSENC_STYLE_NEOX, 5e5, 2, k, bad);
    rq.ek = write_dump("ek_theta.npy", bad, files[3], sizeof files[3]);
    exec_ok(&v, &rq, m);
    assert_int_equal(v.failed, 2);
    assert_false(report_ok(&v));
    d = cJSON_GetObjectItemCaseSensitive(check(&v, "expect_q"), "diagnosis");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(d, "best")->valuestring, "theta");
    assert_close(num(d, "theta_estimate"), 5e5, 0.01, 0);
    pe_vrun_free(&v);
    posenc_model_free(m);
}

/* How each failure reads: the layer-type rule, usage, a plain error. */
static void test_faults(void **state)
{
    (void)state;
    posenc_model *g = tu_model(GEMMA3);
    pe_vrun_req rq = req();
    rq.layer_type = "chunked_attention";
    exec_fails(&rq, g, PE_VRUN_FAULT_ROPE, "unknown layer type 'chunked_attention'", NULL);
    posenc_model_free(g);

    /* dumps of an ALiBi model: nothing to rotate */
    posenc_model *b = tu_model("{\"model_type\":\"bloom\",\"hidden_size\":64,\"n_head\":4}");
    assert_int_equal(posenc_model_encoding(b), POSENC_ENC_ALIBI);
    rq = req();
    rq.q = rq.k = "q.npy";
    exec_fails(&rq, b, PE_VRUN_FAULT_USAGE, "a RoPE model", "'c.json' uses alibi");
    posenc_model_free(b);

    /* vLLM's cache holds max_position_embeddings (64) rows; positions 100..107 are past it */
    posenc_model *m = tu_model(LLAMA);
    float x[N];
    fill(x, N, 3);
    char files[3][512];
    rq = req();
    rq.q = rq.k = rq.eq = rq.ek = write_dump("x.npy", x, files[0], sizeof files[0]);
    rq.offset = 100;
    rq.has_prec = 1;
    rq.prec = POSENC_PREC_VLLM;
    exec_fails(&rq, m, PE_VRUN_FAULT_ERROR, "'c.json': position 107 is past vLLM's cos_sin_cache",
               "64 rows");
    /* the same positions with transformers' numerics are fine: the limit is vLLM's */
    rq.prec = POSENC_PREC_HF;
    rotate(m, POSENC_STYLE_NEOX, 0, 100, x, x);
    rq.eq = rq.ek = write_dump("ex.npy", x, files[1], sizeof files[1]);
    pe_vrun v;
    exec_ok(&v, &rq, m);
    assert_int_equal(v.failed, 0);
    pe_vrun_free(&v);

    /* a dump that is not there: named */
    snprintf(files[2], sizeof files[2], "%s", tu_path("missing.npy"));
    rq.k = files[2];
    exec_fails(&rq, m, PE_VRUN_FAULT_ERROR, files[2], NULL);
    posenc_model_free(m);
}

/* Which dump arguments are containers of pairs, and a pairs run through the engine. */
static void test_open_pairs(void **state)
{
    (void)state;
    float q[N], k[N];
    fill(q, N, 4);
    fill(k, N, 5);
    tu_array a[4] = { { "layers.0.q", POSENC_DT_F32, 4, { 1, H, S, D }, q },
                      { "layers.0.k", POSENC_DT_F32, 4, { 1, H, S, D }, k },
                      { "layers.1.q", POSENC_DT_F32, 4, { 1, H, S, D }, k },
                      { "layers.1.k", POSENC_DT_F32, 4, { 1, H, S, D }, q } };
    tu_write_arrays(tu_path("p.npz"), a, 4);
    tu_write_arrays(tu_path("one.npy"), a, 1);
    posenc_container *c = NULL;
    pe_pairs *p = NULL;
    char path[600];
    int usage = -1;
    posenc_error err = { 0 };
    assert_int_equal(pe_vrun_open_pairs(tu_path("p.npz"), NULL, 0, 0, &c, &p, path, sizeof path,
                                        &usage, &err), POSENC_OK);
    assert_non_null(c);
    assert_non_null(p);
    assert_int_equal(usage, 0);
    assert_int_equal(p->n, 2);
    assert_string_equal(p->v[0].group, "layers.0");
    assert_string_equal(p->v[1].group, "layers.1");

    /* the engine checks each pair with its own row, checks named NAME@GROUP */
    posenc_model *m = tu_model(LLAMA);
    pe_vrun_req rq = req();
    rq.q = rq.k = tu_path("p.npz");
    rq.qc = c;
    rq.qpairs = p;
    rq.qpath = path;
    pe_vrun v;
    exec_ok(&v, &rq, m);
    assert_int_equal(v.n_checks, 6);
    assert_int_equal(v.failed, 0);
    assert_true(check_ok(&v, "invariance@layers.0"));
    assert_true(check_ok(&v, "tables@layers.1"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v.root, "pairs")), 2);
    pe_vrun_free(&v);
    posenc_model_free(m);
    pe_pairs_free(p);
    posenc_container_close(c);

    /* one array: not a container of pairs */
    c = NULL;
    p = (pe_pairs *)1;
    assert_int_equal(pe_vrun_open_pairs(tu_path("one.npy"), NULL, 0, 0, &c, &p, path,
                                        sizeof path, &usage, &err), POSENC_OK);
    assert_null(p);
    assert_int_equal(usage, 0);
    posenc_container_close(c);

    /* --pairs matching no group: a usage error naming the glob */
    c = NULL;
    assert_int_not_equal(pe_vrun_open_pairs(tu_path("p.npz"), "layers.9*", 0, 0, &c, &p, path,
                                            sizeof path, &usage, &err), POSENC_OK);
    assert_int_equal(usage, 1);
    assert_non_null(strstr(err.msg, "layers.9*"));
    assert_null(p);
    posenc_container_close(c);

    /* a container that must be opened and is not there: an error, not usage */
    c = NULL;
    usage = -1;
    assert_int_not_equal(pe_vrun_open_pairs(tu_path("none.npz"), NULL, 1, 0, &c, &p, path,
                                            sizeof path, &usage, &err), POSENC_OK);
    assert_int_equal(usage, 0);
    assert_non_null(strstr(err.msg, "none.npz"));
    posenc_container_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_layer_types),
        cmocka_unit_test(test_dumps),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_open_pairs),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
