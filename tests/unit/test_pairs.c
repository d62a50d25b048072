/* test_pairs.c: the q/k pairing of multi-layer dumps (formats/engines/pairs.c): member roles, layer
 * indices read from group paths, pairing and its refusals (a query without its key, two pairs in
 * one group, no pair, a --pairs glob that matches nothing), glob selection, the order of the
 * pairs, the two sides of a capture file (pre.*, rope.*), and the layer type / NoPE flag each
 * pair gets from a config. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "formats/engines/pairs.h"
#include "posenc/config.h"

static void test_role(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int role;
        size_t plen;
    } rows[] = {
        { "q", 1, 0 },
        { "k", 2, 0 },
        { "/layer0/q", 1, 8 },
        { "/layer0/k", 2, 8 },
        { "layers.12.q", 1, 10 },
        { "layers.12.k_proj", 2, 10 },
        { "model.layers.3.self_attn.q_proj", 1, 25 },
        { "layer0_query", 1, 7 },
        { "layer0-key", 2, 7 },
        { "h.2.query_states", 1, 4 },
        { "h.2.key_states", 2, 4 },
        { "/layer0/v", 0, 0 },
        { "mask", 0, 0 },       /* ends in k, but not after a separator */
        { "/layer0/kq", 0, 0 },
        { "proj", 0, 0 },
        { "", 0, 0 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t plen = 99;
        int role = pe_pairs_role(rows[i].name, &plen, NULL);
        if (role != rows[i].role)
            print_error("'%s': role %d, want %d\n", rows[i].name, role, rows[i].role);
        assert_int_equal(role, rows[i].role);
        if (role)
            assert_int_equal(plen, rows[i].plen);
    }
}

static void test_layer_index(void **state)
{
    (void)state;
    static const struct {
        const char *group;
        int64_t layer;
    } rows[] = {
        { "/layer0", 0 },
        { "layer17", 17 },
        { "/layer_3", 3 },
        { "block-5", 5 },
        { "layers.12", 12 },
        { "model.layers.7.self_attn", 7 },
        { "h.3", 3 },
        { "blk.11", 11 },
        { "/decoder/layers/4/attn", 4 },
        { "/5", 5 },                    /* one bare number */
        { "12", 12 },
        { "", -1 },
        { "/attn", -1 },
        { "/3/7", -1 },                 /* two bare numbers: ambiguous */
        { "layers.1.experts.2", 1 },    /* the layer word decides */
        { "layers.1.layers.2", -1 },    /* two layer numbers */
        { "layer99999999999", -1 },     /* over 2^31 - 1 */
        { "layers.2147483647", 2147483647 },
        { "layers.2147483648", -1 },
        { "player3", -1 },              /* not a layer word */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t l = pe_pairs_layer_index(rows[i].group);
        if (l != rows[i].layer)
            print_error("'%s': layer %lld, want %lld\n", rows[i].group, (long long)l,
                        (long long)rows[i].layer);
        assert_int_equal(l, rows[i].layer);
    }
}

static pe_pairs *find_ok(const char *const *names, size_t n, const char *glob)
{
    pe_pairs *p = NULL;
    posenc_error err = { 0 };
    posenc_status st = pe_pairs_find_names(names, n, glob, "d.h5", &p, &err);
    if (st != POSENC_OK)
        print_error("%s\n", err.msg);
    assert_int_equal(st, POSENC_OK);
    assert_non_null(p);
    return p;
}

static void find_fail(const char *const *names, size_t n, const char *glob, posenc_status code,
                      const char *want)
{
    pe_pairs *p = NULL;
    posenc_error err = { 0 };
    posenc_status st = pe_pairs_find_names(names, n, glob, "d.h5", &p, &err);
    if (st != code || !strstr(err.msg, want))
        print_error("got %d '%s', want %d '%s'\n", st, err.msg, code, want);
    assert_int_equal(st, code);
    assert_null(p);
    assert_non_null(strstr(err.msg, want));
    assert_int_equal(strncmp(err.msg, "'d.h5': ", 8), 0);
}

static void test_find(void **state)
{
    (void)state;
    /* h5py lists by name: layer10 before layer2; pairs come out by layer index */
    const char *h5[] = { "/layer0/k", "/layer0/q", "/layer0/v", "/layer10/k", "/layer10/q",
                         "/layer2/q", "/layer2/k", "/meta" };
    pe_pairs *p = find_ok(h5, 8, NULL);
    assert_int_equal(p->n, 3);
    assert_string_equal(p->v[0].group, "/layer0");
    assert_int_equal(p->v[0].q, 1);
    assert_int_equal(p->v[0].k, 0);
    assert_int_equal(p->v[0].layer, 0);
    assert_string_equal(p->v[1].group, "/layer2");
    assert_int_equal(p->v[1].q, 5);
    assert_int_equal(p->v[1].k, 6);
    assert_string_equal(p->v[2].group, "/layer10");
    assert_int_equal(p->v[2].layer, 10);
    assert_int_equal(p->n_other, 2);
    assert_string_equal(p->other, "/layer0/v");
    assert_non_null(pe_pairs_get(p, "layer2"));          /* a leading '/' aside */
    assert_int_equal(pe_pairs_get(p, "layer2")->q, 5);
    assert_null(pe_pairs_get(p, "/layer1"));
    pe_pairs_free(p);

    /* safetensors names; glob on the group */
    const char *st[] = { "layers.0.q", "layers.0.k", "layers.1.q", "layers.1.k", "layers.11.q",
                         "layers.11.k" };
    p = find_ok(st, 6, "layers.1*");
    assert_int_equal(p->n, 2);
    assert_string_equal(p->v[0].group, "layers.1");
    assert_string_equal(p->v[1].group, "layers.11");
    pe_pairs_free(p);
    p = find_ok(st, 6, "/layers.0");                      /* HDF5-style glob, flat names */
    assert_int_equal(p->n, 1);
    assert_string_equal(p->v[0].group, "layers.0");
    pe_pairs_free(p);
    p = find_ok(h5, 8, "layer[02]");                      /* flat glob, HDF5 groups */
    assert_int_equal(p->n, 2);
    pe_pairs_free(p);

    /* top-level q and k: one pair, group "" */
    const char *top[] = { "k", "q" };
    p = find_ok(top, 2, NULL);
    assert_int_equal(p->n, 1);
    assert_string_equal(p->v[0].group, "");
    assert_string_equal(pe_pairs_label(&p->v[0]), "(top level)");
    assert_int_equal(p->v[0].layer, -1);
    pe_pairs_free(p);

    /* transformers module names pair with each other, not across rows */
    const char *hf[] = { "model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj",
                         "model.layers.1.self_attn.q_proj", "model.layers.1.self_attn.k_proj" };
    p = find_ok(hf, 4, NULL);
    assert_int_equal(p->n, 2);
    assert_string_equal(p->v[1].group, "model.layers.1.self_attn");
    assert_int_equal(p->v[1].layer, 1);
    pe_pairs_free(p);

    /* refusals */
    const char *lone[] = { "/layer0/q", "/layer0/k", "/layer1/q", "/layer2/q", "/layer2/k" };
    find_fail(lone, 5, NULL, POSENC_EFORMAT, "'/layer1/q' has no key: '/layer1/k' is missing");
    p = find_ok(lone, 5, "layer[02]");                    /* --pairs leaves it out */
    assert_int_equal(p->n, 2);
    pe_pairs_free(p);
    const char *lonek[] = { "layers.3.k_proj", "layers.3.q" };
    find_fail(lonek, 2, NULL, POSENC_EFORMAT, "'layers.3.k_proj' has no query: "
                                              "'layers.3.q_proj' is missing");
    const char *cross[] = { "a/q", "a/key" };             /* q pairs with k, not key */
    find_fail(cross, 2, NULL, POSENC_EFORMAT, "'a/q' has no key: 'a/k' is missing");
    const char *two[] = { "/l0/q", "/l0/k", "/l0/query", "/l0/key" };
    find_fail(two, 4, NULL, POSENC_EFORMAT, "two q/k pairs in group '/l0'");
    const char *none[] = { "cos", "sin" };
    find_fail(none, 2, NULL, POSENC_ENOTFOUND, "no q/k pair among its 2 members");
    find_fail(none, 0, NULL, POSENC_ENOTFOUND, "no q/k pair among its 0 members");
    find_fail(st, 6, "layers.9", POSENC_EINVAL,
              "no q/k pair matches --pairs 'layers.9' (pairs: layers.0, layers.1, layers.11)");
}

static void test_layers(void **state)
{
    (void)state;
    /* Gemma 3: layer_types picks sliding or full per layer */
    posenc_model *m = tu_model(
        "{\"model_type\":\"gemma3_text\",\"head_dim\":32,\"num_attention_heads\":2,"
        "\"num_hidden_layers\":4,\"rope_theta\":1000000.0,\"rope_local_base_freq\":10000.0,"
        "\"layer_types\":[\"sliding_attention\",\"sliding_attention\",\"full_attention\","
        "\"sliding_attention\"]}");
    const char *names[] = { "/layer0/q", "/layer0/k", "/layer2/q", "/layer2/k", "/layer3/q",
                            "/layer3/k" };
    pe_pairs *p = find_ok(names, 6, NULL);
    posenc_error err = { 0 };
    assert_int_equal(pe_pairs_layers(p, m, NULL, "d.h5", &err), POSENC_OK);
    assert_string_equal(p->v[0].layer_type, "sliding_attention");
    assert_string_equal(p->v[1].layer_type, "full_attention");
    assert_string_equal(p->v[2].layer_type, "sliding_attention");
    assert_int_equal(p->v[1].nope, 0);
    assert_string_equal(p->v[1].layer_name, "full_attention");
    /* --layer-type wins for every pair; the name stays the config's */
    assert_int_equal(pe_pairs_layers(p, m, "full_attention", "d.h5", &err), POSENC_OK);
    assert_string_equal(p->v[0].layer_type, "full_attention");
    assert_string_equal(p->v[0].layer_name, "sliding_attention");
    pe_pairs_free(p);
    /* a group without an index, a layer past num_hidden_layers */
    const char *noidx[] = { "/attn/q", "/attn/k" };
    p = find_ok(noidx, 2, NULL);
    assert_int_equal(pe_pairs_layers(p, m, NULL, "d.h5", &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "'d.h5': group '/attn' names no layer index"));
    assert_int_equal(pe_pairs_layers(p, m, "sliding_attention", "d.h5", &err), POSENC_OK);
    pe_pairs_free(p);
    /* top-level q and k: one Q/K pair, no index needed; --layer-type or the model decides */
    const char *top[] = { "q", "k" };
    p = find_ok(top, 2, NULL);
    assert_int_equal(pe_pairs_layers(p, m, NULL, "d.h5", &err), POSENC_OK);
    assert_null(p->v[0].layer_type);
    assert_int_equal(p->v[0].nope, 0);
    pe_pairs_free(p);
    const char *past[] = { "layers.4.q", "layers.4.k" };
    p = find_ok(past, 2, NULL);
    assert_int_equal(pe_pairs_layers(p, m, NULL, "d.h5", &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "group 'layers.4': 'c.json': layer 4 does not exist"));
    pe_pairs_free(p);
    posenc_model_free(m);

    /* Llama 4: no_rope_layers marks layer 3 NoPE; one parameter set */
    m = tu_model("{\"model_type\":\"llama4_text\",\"hidden_size\":256,\"num_attention_heads\":2,"
              "\"head_dim\":128,\"num_hidden_layers\":4,\"no_rope_layers\":[1,1,1,0],"
              "\"rope_theta\":500000.0}");
    const char *l4[] = { "layers.2.q", "layers.2.k", "layers.3.q", "layers.3.k" };
    p = find_ok(l4, 4, NULL);
    assert_int_equal(pe_pairs_layers(p, m, NULL, "d.st", &err), POSENC_OK);
    assert_null(p->v[0].layer_type);
    assert_int_equal(p->v[0].nope, 0);
    assert_int_equal(p->v[1].nope, 1);
    assert_null(p->v[1].layer_name); /* no layer_types */
    pe_pairs_free(p);
    posenc_model_free(m);

    /* Qwen3.5: one parameter set, linear-attention layers without RoPE; every layer keeps
     * its name from layer_types */
    m = tu_model("{\"model_type\":\"qwen3_5_text\",\"hidden_size\":256,"
                 "\"num_attention_heads\":2,\"head_dim\":256,\"num_hidden_layers\":4,"
                 "\"rope_theta\":10000000.0,\"layer_types\":[\"linear_attention\","
                 "\"linear_attention\",\"linear_attention\",\"full_attention\"]}");
    p = find_ok(l4, 4, NULL);
    assert_int_equal(pe_pairs_layers(p, m, NULL, "d.st", &err), POSENC_OK);
    assert_null(p->v[0].layer_type);
    assert_int_equal(p->v[0].nope, 1);
    assert_string_equal(p->v[0].layer_name, "linear_attention");
    assert_int_equal(p->v[1].nope, 0);
    assert_string_equal(p->v[1].layer_name, "full_attention");
    pe_pairs_free(p);
    posenc_model_free(m);

    /* one parameter set, no NoPE layers: no index needed */
    m = tu_model("{\"model_type\":\"llama\",\"hidden_size\":64,\"num_attention_heads\":2}");
    p = find_ok(noidx, 2, NULL);
    assert_int_equal(pe_pairs_layers(p, m, NULL, "d.h5", &err), POSENC_OK);
    assert_null(p->v[0].layer_type);
    assert_int_equal(p->v[0].nope, 0);
    pe_pairs_free(p);
    posenc_model_free(m);
}

/* Which dump arguments name a container to take every pair from (pe_pairs_open). */
/* A capture file with both sides (pre.*, rope.*): each side alone, groups without the side,
 * layer indices kept; files that are not such a split stay as they are. */
static void test_take_side(void **state)
{
    (void)state;
    static const char *const st[] = { "pre.layers.1.q", "pre.layers.1.k", "rope.layers.1.q",
                                       "rope.layers.1.k", "pre.layers.0.q", "pre.layers.0.k",
                                       "rope.layers.0.q", "rope.layers.0.k", "positions" };
    static const char *const h5[] = { "/pre/layer0/q", "/pre/layer0/k", "/rope/layer0/q",
                                       "/rope/layer0/k" };
    for (int side = 1; side <= 2; side++) {
        pe_pairs *p = NULL;
        assert_int_equal(pe_pairs_find_names(st, 9, NULL, "c.safetensors", &p, NULL), POSENC_OK);
        assert_int_equal(p->n, 4);
        assert_int_equal(pe_pairs_take_side(p, side), 1);
        assert_int_equal(p->n, 2);
        for (size_t i = 0; i < 2; i++) {
            char want[32];
            snprintf(want, sizeof want, "layers.%zu", i);
            assert_string_equal(p->v[i].group, want);
            assert_int_equal(p->v[i].layer, (int64_t)i);
            /* the members are the side's own */
            assert_true(strncmp(st[p->v[i].q], side == 1 ? "pre." : "rope.",
                                side == 1 ? 4 : 5) == 0);
            assert_true(strcmp(st[p->v[i].k] + strlen(st[p->v[i].k]) - 1, "k") == 0);
        }
        pe_pairs_free(p);

        assert_int_equal(pe_pairs_find_names(h5, 4, NULL, "c.h5", &p, NULL), POSENC_OK);
        assert_int_equal(pe_pairs_take_side(p, side), 1);
        assert_int_equal(p->n, 1);
        assert_string_equal(p->v[0].group, "/layer0");
        assert_int_equal(p->v[0].layer, 0);
        pe_pairs_free(p);
    }
    /* one side only, or a group outside both: not a split file, left alone */
    static const char *const pre_only[] = { "pre.layers.0.q", "pre.layers.0.k" };
    static const char *const mixed[] = { "pre.layers.0.q", "pre.layers.0.k", "rope.layers.0.q",
                                         "rope.layers.0.k", "layers.0.q", "layers.0.k" };
    static const char *const prefix[] = { "prefix.layers.0.q", "prefix.layers.0.k",
                                          "rope.layers.0.q", "rope.layers.0.k" };
    const struct { const char *const *names; size_t n; } keep[] = {
        { pre_only, 2 }, { mixed, 6 }, { prefix, 4 },
    };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        pe_pairs *p = NULL;
        assert_int_equal(pe_pairs_find_names(keep[i].names, keep[i].n, NULL, "x", &p, NULL),
                         POSENC_OK);
        size_t n = p->n;
        assert_int_equal(pe_pairs_take_side(p, 1), 0);
        assert_int_equal(p->n, n);
        pe_pairs_free(p);
    }
}

static void test_open(void **state)
{
    (void)state;
    posenc_write_opts wo = { POSENC_FMT_AUTO, 0 };
    posenc_error err = { 0 };
    float x[4] = { 1, 2, 3, 4 };
    static const struct {
        const char *file;
        int n;
    } files[] = { { "two.npz", 2 }, { "one.npz", 1 } };
    for (size_t f = 0; f < 2; f++) {
        posenc_writer *w = NULL;
        assert_int_equal(posenc_writer_open(tu_path(files[f].file), &wo, &w, &err), POSENC_OK);
        for (int i = 0; i < files[f].n; i++) {
            posenc_array_info ai = { .dtype = POSENC_DT_F32, .ndim = 1, .shape = { 4 } };
            snprintf(ai.name, sizeof ai.name, "%s", i ? "k" : "q");
            assert_int_equal(posenc_writer_declare(w, &ai, &err), POSENC_OK);
        }
        for (int i = 0; i < files[f].n; i++)
            assert_int_equal(posenc_writer_write(w, x, 4, &err), POSENC_OK);
        assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
    }
    char spec[600], path[600];
    static const struct {
        const char *spec;   /* "@" is the scratch directory */
        const char *glob;
        int must, container;
        posenc_status st;
    } rows[] = {
        { "@/two.npz", NULL, 0, 1, POSENC_OK },     /* several arrays */
        { "@/one.npz", NULL, 0, 0, POSENC_OK },     /* one array: the single-dump path */
        { "@/one.npz", "x*", 0, 1, POSENC_OK },     /* --pairs: a pair run whatever the count */
        { "@/one.npz", NULL, 1, 1, POSENC_OK },     /* must */
        { "@/two.npz:q", NULL, 0, 0, POSENC_OK },   /* a member is one array */
        { "-", NULL, 1, 0, POSENC_OK },             /* stdin never */
        { "@/none.npz", NULL, 0, 0, POSENC_OK },    /* the single-dump path reports it */
        { "@/none.npz", NULL, 1, 0, POSENC_EIO },   /* unless must */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (rows[i].spec[0] == '@')
            snprintf(spec, sizeof spec, "%s%s", tu_dir, rows[i].spec + 1);
        else
            snprintf(spec, sizeof spec, "%s", rows[i].spec);
        posenc_container *c = (posenc_container *)&err; /* must be reset */
        posenc_status st = pe_pairs_open(spec, rows[i].glob, rows[i].must, NULL, path,
                                         sizeof path, &c, &err);
        if (st != rows[i].st || !!c != rows[i].container)
            print_error("'%s': status %d, container %d\n", rows[i].spec, st, !!c);
        assert_int_equal(st, rows[i].st);
        assert_int_equal(!!c, rows[i].container);
        if (c) {
            assert_int_equal(strncmp(path, spec, strlen(path)), 0);
            posenc_container_close(c);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_role),
        cmocka_unit_test(test_layer_index),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_layers),
        cmocka_unit_test(test_take_side),
        cmocka_unit_test(test_open),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
