/* test_applyset.c: the engine of posenc apply (formats/engines/applyset.c): output naming, a Q/K pair and
 * every q/k pair of a multi-layer dump (HDF5 and NPZ fixtures written through the public API)
 * rotated per layer type, a NoPE layer copied bit for bit, the metadata each output carries, the
 * output pipeline's size limit over every output, and how failures are classed. Rotated values are checked against RoPE's closed form in long double
 * (NeoX rotate_half, inv_freq = theta^(-2i/d); transformers' modeling_llama.py
 * apply_rotary_pos_emb), computed here without lib/. */
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "testutil.h"
#include "formats/engines/applyset.h"
#include "posenc/config.h"

enum { H = 2, D = 16 };
static int S = 5; /* tokens per dump; test_threaded makes it long */

/* Gemma 3: layers 0 and 3 sliding (theta 1e4), layer 2 full (theta 1e6); head_dim 16 */
static const char *GEMMA3 =
    "{\"model_type\":\"gemma3_text\",\"head_dim\":16,\"num_attention_heads\":2,"
    "\"num_hidden_layers\":4,\"rope_theta\":1000000.0,\"rope_local_base_freq\":10000.0,"
    "\"layer_types\":[\"sliding_attention\",\"sliding_attention\",\"full_attention\","
    "\"sliding_attention\"]}";
/* Llama 4: layer 3 has no RoPE */
static const char *LLAMA4 =
    "{\"model_type\":\"llama4_text\",\"hidden_size\":32,\"num_attention_heads\":2,"
    "\"head_dim\":16,\"num_hidden_layers\":4,\"no_rope_layers\":[1,1,1,0],"
    "\"rope_theta\":500000.0}";

/* A dump [1, H, S, D] of f64 with values that differ per member (seed). */
static void fill(double *x, int seed)
{
    for (int i = 0; i < H * S * D; i++)
        x[i] = 0.25 * ((i * 7 + seed * 13) % 23) - 2.5 + 0.001 * seed;
}

/* Write arrays names[0..n) of shape [1, H, S, D], member i filled with seed i + 1. */
static void write_dump(const char *path, const char *const *names, int n)
{
    posenc_write_opts wo = { POSENC_FMT_AUTO, 0 };
    posenc_writer *w = NULL;
    posenc_error err = { 0 };
    double *x = malloc((size_t)H * S * D * sizeof *x);
    assert_non_null(x);
    assert_int_equal(posenc_writer_open(path, &wo, &w, &err), POSENC_OK);
    for (int i = 0; i < n; i++) {
        posenc_array_info ai = { .dtype = POSENC_DT_F64, .ndim = 4, .shape = { 1, H, S, D } };
        snprintf(ai.name, sizeof ai.name, "%s", names[i]);
        assert_int_equal(posenc_writer_declare(w, &ai, &err), POSENC_OK);
    }
    for (int i = 0; i < n; i++) {
        fill(x, i + 1);
        assert_int_equal(posenc_writer_write(w, x, (uint64_t)H * S * D, &err), POSENC_OK);
    }
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
    free(x);
}

/* write_dump, then the file opened as a container (caller closes it). */
static posenc_container *write_open(const char *path, const char *const *names, int n)
{
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    write_dump(path, names, n);
    assert_int_equal(posenc_container_open(path, NULL, &c, &err), POSENC_OK);
    return c;
}

/* Fail unless spec, of dtype dt, holds fill(seed) rotated by NeoX RoPE with theta at positions off + s
 * (theta 0: unchanged, bit for bit), within tol relative to each value's scale. */
static void expect_rotated_as(const char *spec, posenc_dtype dt, int seed, long double theta,
                              int off, double tol)
{
    posenc_array_info ai;
    void *data = NULL;
    posenc_error err = { 0 };
    posenc_status st = posenc_read_all(spec, NULL, POSENC_DT_F64, 64 << 20, &ai, &data, &err);
    if (st != POSENC_OK)
        print_error("%s: %s\n", spec, err.msg);
    assert_int_equal(st, POSENC_OK);
    assert_int_equal(ai.dtype, dt);
    assert_int_equal(ai.ndim, 4);
    assert_int_equal(ai.shape[2], S);
    const double *y = data;
    double *x = malloc((size_t)H * S * D * sizeof *x);
    assert_non_null(x);
    fill(x, seed);
    for (int h = 0; h < H; h++)
        for (int s = 0; s < S; s++) {
            const double *xv = x + ((size_t)h * S + s) * D, *yv = y + ((size_t)h * S + s) * D;
            for (int i = 0; i < D / 2; i++) {
                if (theta == 0) {
                    assert_memory_equal(&yv[i], &xv[i], sizeof(double));
                    assert_memory_equal(&yv[i + D / 2], &xv[i + D / 2], sizeof(double));
                    continue;
                }
                long double f = powl(theta, -2.0L * i / D), a = (long double)(off + s) * f;
                long double c = cosl(a), sn = sinl(a);
                assert_close(yv[i], (double)(xv[i] * c - xv[i + D / 2] * sn), tol, tol);
                assert_close(yv[i + D / 2], (double)(xv[i + D / 2] * c + xv[i] * sn), tol, tol);
            }
        }
    free(x);
    free(data);
}

static void expect_rotated(const char *spec, int seed, long double theta, int off, double tol)
{
    expect_rotated_as(spec, POSENC_DT_F64, seed, theta, off, tol);
}

static cJSON *meta_of(const char *path)
{
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    assert_int_equal(posenc_container_open(path, NULL, &c, &err), POSENC_OK);
    const char *t = posenc_container_meta(c);
    assert_non_null(t);
    cJSON *j = cJSON_Parse(t);
    assert_non_null(j);
    posenc_container_close(c);
    return j;
}

static const char *meta_str(cJSON *j, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsString(v))
        print_error("metadata '%s' is not a string\n", key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

/* notes the engine hands to the command */
static char notes[4][600];
static int nnotes;
static void take_note(void *ctx, const char *msg)
{
    (void)ctx;
    if (nnotes < 4)
        snprintf(notes[nnotes++], sizeof notes[0], "%s", msg);
}

static pe_apply_req req(const posenc_model *m, const char *config)
{
    pe_apply_req rq = { 0 };
    rq.model = m;
    rq.config = config;
    rq.layout = POSENC_APPLY_BHSD;
    rq.prec = POSENC_PREC_EXACT;
    rq.nthreads = 2;
    rq.note = take_note;
    nnotes = 0;
    return rq;
}

/* Run every stage up to write; offset off, no --positions. */
static posenc_status run(pe_apply_set *s, int off, const char *outp, posenc_error *err)
{
    const posenc_apply_shape *sh = pe_apply_set_shape(s);
    posenc_apply_positions pos = { NULL, off, 1, 1 };
    posenc_write_opts wo = { POSENC_FMT_AUTO, 0 };
    posenc_status st;
    if ((st = pe_apply_set_rotations(s, &pos, off + sh->seq - 1, err)) != POSENC_OK ||
        (st = pe_apply_set_outputs(s, outp, err)) != POSENC_OK)
        return st;
    return pe_apply_set_write(s, &wo, err);
}

static void test_naming(void **state)
{
    (void)state;
    static const struct {
        const char *path, *member;
        int pairs;
        const char *want;
    } rows[] = {
        { "a/b/q.npy", NULL, 0, "a/b/q.rope.npy" },
        { "q.safetensors", NULL, 0, "q.rope.safetensors" },
        { "d/x.npz", "/layer0/q", 0, "d/x.layer0_q.rope.npy" },
        { "x.h5", "a:b/q", 0, "x.a_b_q.rope.npy" },
        { "dump", NULL, 0, "dump.rope.npy" },
        { "q.weird", NULL, 0, "q.weird.rope.npy" },  /* not a format's extension */
        { ".hidden", NULL, 0, ".hidden.rope.npy" },  /* a leading dot is the stem */
        { "a.b/c", NULL, 0, "a.b/c.rope.npy" },      /* a dot in the directory */
        { "d/layers.h5", NULL, 1, "d/layers.rope.h5" },
        { "d/dumpdir", NULL, 1, "d/dumpdir.rope.npz" },
        { "st.safetensors", NULL, 1, "st.rope.safetensors" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *o = pe_apply_output_name(rows[i].path, rows[i].member, rows[i].pairs);
        assert_non_null(o);
        if (strcmp(o, rows[i].want) != 0)
            print_error("'%s' '%s': '%s', want '%s'\n", rows[i].path,
                        rows[i].member ? rows[i].member : "", o, rows[i].want);
        assert_string_equal(o, rows[i].want);
        free(o);
    }
    char dir[64], stem[64], ext[16], name[64];
    pe_apply_split_name("a/b/q.x.npy", dir, sizeof dir, stem, sizeof stem, ext, sizeof ext);
    assert_string_equal(dir, "a/b/");
    assert_string_equal(stem, "q.x");
    assert_string_equal(ext, ".npy");
    pe_apply_member_name("//layers.0/q", name, sizeof name);
    assert_string_equal(name, "layers.0_q");
}

/* Every pair of a Gemma 3 HDF5 dump: each layer with its layer type's theta, one NPZ output. */
static void test_pairs_hdf5(void **state)
{
    (void)state;
    posenc_model *m = tu_model(GEMMA3);
    const char *names[] = { "/layer0/q", "/layer0/k", "/layer2/q", "/layer2/k", "/layer0/v" };
    const char *in = tu_path("g3.h5");
    posenc_container *c = write_open(in, names, 5);
    posenc_error err = { 0 };
    /* a config name that needs escaping in the metadata */
    pe_apply_req rq = req(m, "dir/we\"ird\\.json");
    pe_apply_set *s = pe_apply_set_new(&rq);
    assert_non_null(s);
    assert_int_equal(pe_apply_set_add_pairs(s, c, in, NULL, &err), POSENC_OK);
    assert_int_equal(pe_apply_set_plan(s)->bytes, 4 * H * S * D * 8);
    assert_int_equal(pe_apply_set_mrope(s), 0);
    const char *out = tu_path("g3.rope.npz");
    posenc_status st = run(s, 3, out, &err);
    if (st != POSENC_OK)
        print_error("%s\n", err.msg);
    assert_int_equal(st, POSENC_OK);
    assert_int_equal(pe_apply_set_noutputs(s), 1);
    assert_string_equal(pe_apply_set_output(s, 0), out);
    pe_apply_set_free(s);
    posenc_container_close(c);
    /* the member outside any pair is named in a note and not written */
    assert_int_equal(nnotes, 1);
    assert_non_null(strstr(notes[0], "1 member in no q/k pair is not written ('/layer0/v')"));

    char spec[600];
    static const struct {
        const char *name;
        int seed;
        long double theta;
    } want[] = { { "layer0/q", 1, 1e4L }, { "layer0/k", 2, 1e4L }, { "layer2/q", 3, 1e6L },
                 { "layer2/k", 4, 1e6L } };
    for (int i = 0; i < 4; i++) {
        snprintf(spec, sizeof spec, "%s:%s", out, want[i].name);
        expect_rotated(spec, want[i].seed, want[i].theta, 3, 1e-14);
    }
    cJSON *j = meta_of(out);
    assert_string_equal(meta_str(j, "posenc_apply_config"), "dir/we\"ird\\.json");
    assert_string_equal(meta_str(j, "posenc_apply_style"), "neox");
    assert_string_equal(meta_str(j, "posenc_apply_precision"), "exact");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "posenc_apply_inverse")));
    cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "posenc_apply_layers");
    assert_string_equal(meta_str(l, "/layer0"), "sliding_attention");
    assert_string_equal(meta_str(l, "/layer2"), "full_attention");
    cJSON_Delete(j);
    posenc_model_free(m);
    assert_false(tu_tmp_left());
}

/* An NPZ of Llama 4 layers: layer 2 rotated, NoPE layer 3 copied bit for bit; no -o: X.rope.npz. */
static void test_pairs_nope(void **state)
{
    (void)state;
    posenc_model *m = tu_model(LLAMA4);
    posenc_rope_config rc;
    posenc_error err = { 0 };
    assert_int_equal(posenc_model_rope(m, NULL, &rc, &err), POSENC_OK);
    const char *names[] = { "layers.2.q", "layers.2.k", "layers.3.q", "layers.3.k" };
    const char *in = tu_path("l4.npz");
    posenc_container *c = write_open(in, names, 4);
    pe_apply_req rq = req(m, "l4.json");
    rq.style_set = 1; /* the closed form below is NeoX's; the pairing itself is lib's matter */
    rq.style = POSENC_STYLE_NEOX;
    pe_apply_set *s = pe_apply_set_new(&rq);
    assert_int_equal(pe_apply_set_add_pairs(s, c, in, NULL, &err), POSENC_OK);
    assert_int_equal(run(s, 0, NULL, &err), POSENC_OK);
    pe_apply_set_free(s);
    posenc_container_close(c);
    assert_int_equal(nnotes, 1);
    assert_non_null(strstr(notes[0], "'layers.3' is layer 3, which has no RoPE: copied"));
    const char *out = tu_path("l4.rope.npz");
    char spec[600];
    snprintf(spec, sizeof spec, "%s:layers.2.q", out);
    expect_rotated(spec, 1, (long double)rc.theta, 0, 1e-14);
    snprintf(spec, sizeof spec, "%s:layers.3.k", out);
    expect_rotated(spec, 4, 0, 0, 0);
    cJSON *j = meta_of(out);
    cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "posenc_apply_layers");
    assert_string_equal(meta_str(l, "layers.2"), "rope");
    assert_string_equal(meta_str(l, "layers.3"), "none");
    cJSON_Delete(j);
    posenc_model_free(m);
}

/* An NPZ `file` holding q and k (seeds 1 and 2) and the specs FILE:q, FILE:k naming them. */
static void qk_npz(const char *file, char *q, char *k, size_t len)
{
    const char *names[] = { "q", "k" };
    write_dump(file, names, 2);
    snprintf(q, len, "%s:q", file);
    snprintf(k, len, "%s:k", file);
}

/* A Q/K pair named by members: one NPZ with q and k; or, without -o, one file each. */
static void test_inputs(void **state)
{
    (void)state;
    posenc_model *m = tu_model(GEMMA3);
    const char *in = tu_path("qk.npz");
    char q[600], k[600];
    qk_npz(in, q, k, sizeof q);
    const char *ins[] = { q, k };
    posenc_error err = { 0 };
    pe_apply_req rq = req(m, "g3.json");
    rq.layer_type = "full_attention";
    pe_apply_set *s = pe_apply_set_new(&rq);
    assert_int_equal(pe_apply_set_add_inputs(s, ins, 2, NULL, &err), POSENC_OK);
    const char *out = tu_path("qk.out.npz");
    assert_int_equal(run(s, 7, out, &err), POSENC_OK);
    pe_apply_set_free(s);
    char spec[600];
    snprintf(spec, sizeof spec, "%s:q", out);
    expect_rotated(spec, 1, 1e6L, 7, 1e-14);
    snprintf(spec, sizeof spec, "%s:k", out);
    expect_rotated(spec, 2, 1e6L, 7, 1e-14);
    cJSON *j = meta_of(out);
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "posenc_apply_layers"));
    assert_string_equal(meta_str(j, "posenc_apply_config"), "g3.json");
    cJSON_Delete(j);

    /* no -o: F.npz:M -> F.M.rope.npy beside the input, sliding_attention's theta */
    rq.layer_type = "sliding_attention";
    s = pe_apply_set_new(&rq);
    assert_int_equal(pe_apply_set_add_inputs(s, ins, 2, NULL, &err), POSENC_OK);
    assert_int_equal(run(s, 0, NULL, &err), POSENC_OK);
    assert_int_equal(pe_apply_set_noutputs(s), 2);
    pe_apply_set_free(s);
    expect_rotated(tu_path("qk.q.rope.npy"), 1, 1e4L, 0, 1e-14);
    expect_rotated(tu_path("qk.k.rope.npy"), 2, 1e4L, 0, 1e-14);
    posenc_model_free(m);
}

/* The size limit of the output pipeline (formats/io/out.c), over every output together: a Q/K
 * pair written to two files (2 x 1280 bytes of f64) is refused one byte under its size and
 * leaves neither file; at its size, or with force, both are written. */
static void test_limit(void **state)
{
    (void)state;
    enum { BYTES = 2 * H * 5 * D * 8 }; /* S = 5 tokens */
    static const struct {
        uint64_t limit;
        int force, over;
    } cases[] = { { BYTES - 1, 0, 1 }, { BYTES, 0, 0 }, { BYTES - 1, 1, 0 } };
    posenc_model *m = tu_model(GEMMA3);
    char q[600], k[600];
    qk_npz(tu_path("lim.npz"), q, k, sizeof q);
    const char *ins[] = { q, k }, *outs[] = { tu_path("lim.q.rope.npy"),
                                              tu_path("lim.k.rope.npy") };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pe_apply_req rq = req(m, "g3.json");
        rq.layer_type = "full_attention";
        rq.size_limit = cases[c].limit;
        rq.force = cases[c].force;
        posenc_error err = { 0 };
        pe_apply_set *set = pe_apply_set_new(&rq);
        assert_int_equal(pe_apply_set_add_inputs(set, ins, 2, NULL, &err), POSENC_OK);
        const pe_out *plan = pe_apply_set_plan(set);
        assert_int_equal(plan->bytes, BYTES);
        assert_int_equal(plan->values, BYTES / 8);
        assert_int_equal(plan->nwant, 2);
        assert_int_equal(plan->over_limit, cases[c].over);
        posenc_status st = run(set, 3, NULL, &err);
        pe_apply_set_free(set);
        if (cases[c].over) {
            assert_int_equal(st, POSENC_ERANGE);
            assert_non_null(strstr(err.msg, "the output would be 2.5 KiB, over the 2.5 KiB "
                                            "limit; pass --force"));
            assert_false(tu_exists(outs[0]) || tu_exists(outs[1]) || tu_tmp_left());
            continue;
        }
        assert_int_equal(st, POSENC_OK);
        for (int i = 0; i < 2; i++) {
            expect_rotated(outs[i], i + 1, 1e6L, 3, 1e-14);
            remove(outs[i]);
        }
    }
    posenc_model_free(m);
}

/* Long dumps (1 MiB each, several pipeline chunks) through the two-thread pipeline, f64 in and
 * f32 out (the reader's buffer apart from the output's): a Q/K pair into safetensors and every
 * pair of an NPZ (each member's reader opened when its job starts). */
static void test_threaded(void **state)
{
    (void)state;
    S = 4096;
    posenc_model *m = tu_model(GEMMA3);
    posenc_error err = { 0 };
    const char *names[] = { "layers.0.q", "layers.0.k", "layers.2.q", "layers.2.k" };
    const char *in = tu_path("long.npz");
    posenc_container *c = write_open(in, names, 4);
    pe_apply_req rq = req(m, "g3.json");
    rq.dtype_set = 1;
    rq.out_dtype = POSENC_DT_F32;
    pe_apply_set *s = pe_apply_set_new(&rq);
    assert_int_equal(pe_apply_set_add_pairs(s, c, in, NULL, &err), POSENC_OK);
    assert_int_equal(pe_apply_set_plan(s)->bytes, 4 * (uint64_t)H * S * D * 4);
    const char *out = tu_path("long.rope.npz");
    assert_int_equal(run(s, 100, out, &err), POSENC_OK);
    pe_apply_set_free(s);
    posenc_container_close(c);
    char spec[600];
    for (int i = 0; i < 4; i++) {
        snprintf(spec, sizeof spec, "%s:%s", out, names[i]);
        expect_rotated_as(spec, POSENC_DT_F32, i + 1, i < 2 ? 1e4L : 1e6L, 100, 2e-7);
    }

    char q[600], k[600];
    snprintf(q, sizeof q, "%s:layers.2.q", in);
    snprintf(k, sizeof k, "%s:layers.2.k", in);
    const char *ins[] = { q, k };
    rq.layer_type = "full_attention";
    s = pe_apply_set_new(&rq);
    assert_int_equal(pe_apply_set_add_inputs(s, ins, 2, NULL, &err), POSENC_OK);
    out = tu_path("long.safetensors");
    assert_int_equal(run(s, 0, out, &err), POSENC_OK);
    pe_apply_set_free(s);
    snprintf(spec, sizeof spec, "%s:q", out);
    expect_rotated_as(spec, POSENC_DT_F32, 3, 1e6L, 0, 2e-7);
    snprintf(spec, sizeof spec, "%s:k", out);
    expect_rotated_as(spec, POSENC_DT_F32, 4, 1e6L, 0, 2e-7);
    posenc_model_free(m);
    S = 5;
    assert_false(tu_tmp_left());
}

/* Failures and how the command is to read them. */
static void test_faults(void **state)
{
    (void)state;
    posenc_model *m = tu_model(GEMMA3);
    const char *names[] = { "/layer0/q", "/layer0/k" };
    const char *in = tu_path("f.h5");
    posenc_container *c = write_open(in, names, 2);
    posenc_error err = { 0 };
    pe_apply_req rq = req(m, "g3.json");
    /* a --pairs glob that matches nothing: usage */
    pe_apply_set *s = pe_apply_set_new(&rq);
    assert_int_equal(pe_apply_set_add_pairs(s, c, in, "layer9", &err), POSENC_EINVAL);
    assert_int_equal(pe_apply_set_fault(s), PE_APPLY_FAULT_USAGE);
    pe_apply_set_free(s);
    /* a --layer-type the config lacks: the layer-type rule */
    rq.layer_type = "chunked_attention";
    s = pe_apply_set_new(&rq);
    char spec[600];
    snprintf(spec, sizeof spec, "%s:/layer0/q", in);
    const char *one[] = { spec };
    assert_int_not_equal(pe_apply_set_add_inputs(s, one, 1, NULL, &err), POSENC_OK);
    assert_int_equal(pe_apply_set_fault(s), PE_APPLY_FAULT_ROPE);
    pe_apply_set_free(s);
    /* an output name without a format: usage; nothing is left behind */
    rq.layer_type = "full_attention";
    s = pe_apply_set_new(&rq);
    assert_int_equal(pe_apply_set_add_inputs(s, one, 1, NULL, &err), POSENC_OK);
    assert_int_equal(run(s, 0, tu_path("out.npzz"), &err), POSENC_EINVAL);
    assert_int_equal(pe_apply_set_fault(s), PE_APPLY_FAULT_USAGE);
    assert_non_null(strstr(err.msg, "cannot tell the output format from the name"));
    pe_apply_set_free(s);
    assert_false(tu_exists(tu_path("out.npzz")));
    posenc_container_close(c);
    posenc_model_free(m);
    assert_false(tu_tmp_left());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_naming),
        cmocka_unit_test(test_pairs_hdf5),
        cmocka_unit_test(test_pairs_nope),
        cmocka_unit_test(test_inputs),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_threaded),
        cmocka_unit_test(test_faults),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
