/* test_verifyset.c: verify's iteration over the pairs of a multi-layer dump
 * (formats/engines/verifyset.c): the member specs of each pair and of the same group's expected pair,
 * the layer type each pair is rotated with, and the refusal of an expect container that lacks a
 * group. Fixtures are NPZ files written through the public writer API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "formats/engines/verifyset.h"
#include "posenc/config.h"

static void write_npz(const char *file, const char *const *names, int n)
{
    posenc_write_opts wo = { POSENC_FMT_AUTO, 0 };
    posenc_error err = { 0 };
    posenc_writer *w = NULL;
    float x[4] = { 1, 2, 3, 4 };
    assert_int_equal(posenc_writer_open(tu_path(file), &wo, &w, &err), POSENC_OK);
    for (int i = 0; i < n; i++) {
        posenc_array_info ai = { .dtype = POSENC_DT_F32, .ndim = 1, .shape = { 4 } };
        snprintf(ai.name, sizeof ai.name, "%s", names[i]);
        assert_int_equal(posenc_writer_declare(w, &ai, &err), POSENC_OK);
    }
    for (int i = 0; i < n; i++)
        assert_int_equal(posenc_writer_write(w, x, 4, &err), POSENC_OK);
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
}

static posenc_container *open_pairs(const char *file, pe_pairs **p, char *path, size_t plen)
{
    posenc_error err = { 0 };
    posenc_container *c = NULL;
    assert_int_equal(pe_pairs_open(tu_path(file), NULL, 1, NULL, path, plen, &c, &err),
                     POSENC_OK);
    assert_non_null(c);
    assert_int_equal(pe_pairs_find(c, path, NULL, p, &err), POSENC_OK);
    return c;
}

static void test_items(void **state)
{
    (void)state;
    /* Gemma 3, three layers: layer 0 sliding, layer 2 full */
    posenc_model *m = tu_model("{\"model_type\":\"gemma3_text\",\"head_dim\":16,"
                               "\"num_attention_heads\":4,\"num_hidden_layers\":3,"
                               "\"layer_types\":[\"sliding_attention\",\"full_attention\","
                               "\"full_attention\"]}");
    const char *dn[] = { "layers.0.q", "layers.0.k", "layers.2.q_proj", "layers.2.k_proj" };
    const char *en[] = { "layers.2.query", "layers.2.key", "layers.0.q", "layers.0.k" };
    write_npz("d.npz", dn, 4);
    write_npz("e.npz", en, 4);
    write_npz("e1.npz", en, 2); /* layer 2 only */
    char qpath[600], epath[600], want[1400];
    pe_pairs *pq = NULL, *pe = NULL;
    posenc_container *cq = open_pairs("d.npz", &pq, qpath, sizeof qpath);
    posenc_container *ce = open_pairs("e.npz", &pe, epath, sizeof epath);
    posenc_error err = { 0 };
    assert_int_equal(pe_pairs_layers(pq, m, NULL, qpath, &err), POSENC_OK);
    assert_int_equal(pq->n, 2);

    /* with an expect container: its pair of the same group, whatever its member names */
    pe_vset *s = NULL;
    pe_vset_item it;
    assert_int_equal(pe_vset_new(m, cq, pq, qpath, ce, pe, epath, &s, &err), POSENC_OK);
    static const struct {
        const char *q, *k, *eq, *ek, *lt;
    } rows[] = {
        { "layers.0.q", "layers.0.k", "layers.0.q", "layers.0.k", "sliding_attention" },
        { "layers.2.q_proj", "layers.2.k_proj", "layers.2.query", "layers.2.key",
          "full_attention" },
    };
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(pe_vset_item_at(s, i, &it, &err), POSENC_OK);
        assert_ptr_equal(it.pair, &pq->v[i]);
        const char *w[4] = { rows[i].q, rows[i].k, rows[i].eq, rows[i].ek };
        for (int r = 0; r < 4; r++) {
            snprintf(want, sizeof want, "%s:%s", r < 2 ? qpath : epath, w[r]);
            assert_string_equal(it.spec[r], want);
        }
        assert_string_equal(it.layer_type, rows[i].lt);
    }
    pe_vset_free(s);

    /* without one: no expect specs */
    assert_int_equal(pe_vset_new(m, cq, pq, qpath, NULL, NULL, NULL, &s, &err), POSENC_OK);
    assert_int_equal(pe_vset_item_at(s, 1, &it, &err), POSENC_OK);
    snprintf(want, sizeof want, "%s:layers.2.k_proj", qpath);
    assert_string_equal(it.spec[1], want);
    assert_null(it.spec[2]);
    assert_null(it.spec[3]);
    pe_vset_free(s);
    pe_pairs_free(pe);
    posenc_container_close(ce);

    /* an expect container without layer 0: refused, naming it, the group and the dumps */
    ce = open_pairs("e1.npz", &pe, epath, sizeof epath);
    assert_int_equal(pe_vset_new(m, cq, pq, qpath, ce, pe, epath, &s, &err), POSENC_OK);
    assert_int_equal(pe_vset_item_at(s, 0, &it, &err), POSENC_ENOTFOUND);
    snprintf(want, sizeof want, "'%s': no q/k pair for group 'layers.0' of '%s'", epath, qpath);
    assert_string_equal(err.msg, want);
    assert_int_equal(pe_vset_item_at(s, 1, &it, &err), POSENC_OK);
    assert_string_equal(it.layer_type, "full_attention");
    pe_vset_free(s);
    pe_vset_free(NULL);
    pe_pairs_free(pe);
    posenc_container_close(ce);
    pe_pairs_free(pq);
    posenc_container_close(cq);
    posenc_model_free(m);
}

/* a NoPE layer of a model with one parameter set (Llama 4 no_rope_layers) */
static void test_nope(void **state)
{
    (void)state;
    posenc_model *m = tu_model(
        "{\"model_type\":\"llama4_text\",\"hidden_size\":256,\"num_attention_heads\":2,"
        "\"head_dim\":128,\"num_hidden_layers\":4,\"no_rope_layers\":[1,1,1,0],"
        "\"rope_theta\":500000.0}");
    const char *dn[] = { "layers.2.q", "layers.2.k", "layers.3.q", "layers.3.k" };
    write_npz("n.npz", dn, 4);
    char qpath[600];
    pe_pairs *pq = NULL;
    posenc_container *cq = open_pairs("n.npz", &pq, qpath, sizeof qpath);
    posenc_error err = { 0 };
    assert_int_equal(pe_pairs_layers(pq, m, NULL, qpath, &err), POSENC_OK);
    pe_vset *s = NULL;
    pe_vset_item it;
    assert_int_equal(pe_vset_new(m, cq, pq, qpath, NULL, NULL, NULL, &s, &err), POSENC_OK);
    assert_int_equal(pe_vset_item_at(s, 1, &it, &err), POSENC_OK);
    assert_int_equal(it.pair->nope, 1);
    /* one parameter set: the NoPE pair keeps NULL (the config's only set) */
    assert_true(posenc_model_layer_type_count(m) <= 1);
    assert_null(it.layer_type);
    pe_vset_free(s);
    pe_pairs_free(pq);
    posenc_container_close(cq);
    posenc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items),
        cmocka_unit_test(test_nope),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
