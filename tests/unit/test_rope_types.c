/* test_rope_types.c: the rope-type table (lib/encodings/rope_types.def) and the runtime-profile
 * table (lib/encodings/profiles.def), row by row.
 *
 * Every row must be complete (names, functions, sources) and agree with the code that reads it:
 * a name round-trips through the parsers, a config built from a row's key columns validates and
 * fails when one of the keys it claims is taken away, the .seq column says whether the sequence
 * length changes inv_freq, the .vllm column is the class lib/runtimes/rope_vllm.c picks and
 * .gguf the scaling type lib/runtimes/llamacpp.c writes, and config.json rope_types resolve to
 * the row of that name; a profile's cos/sin are the rotation's (closed form cos(p * inv_freq)
 * within float32 rounding) and its position bound is the one posenc_rope_table enforces. A new
 * row without these fails here. */
#include <stdint.h>
#include <string.h>

#include "testutil.h"
#include "lib/encodings/profile.h"
#include "lib/encodings/rope_type.h"
#include "posenc/config.h"
#include "posenc/llamacpp.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "posenc/verify.h"
#include "posenc/vllm.h"

/* A valid config of row t, from the row's own columns: the keys it claims and nothing else. */
static posenc_rope_config config_of(const pe_rope_type *t)
{
    posenc_rope_config c;
    memset(&c, 0, sizeof c);
    c.type = t->type;
    c.theta = 10000.0;
    c.head_dim = 64;
    c.rotary_dim = 64;
    c.style = POSENC_STYLE_NEOX;
    c.factor = t->factor == FAC_NONE ? 1.0 : 4.0;
    c.max_position_embeddings = 4096;
    c.partial_rotary_factor = 1.0;
    c.truncate = 1;
    if (t->keys & RK_M0)
        c.original_max_position_embeddings = 1024;
    if (t->keys & RK_LOWHIGH)
        c.low_freq_factor = 1.0, c.high_freq_factor = 4.0;
    if (t->keys & RK_YARN)
        c.beta_fast = 32.0, c.beta_slow = 1.0;
    if (t->keys & RK_SHORTLONG) {
        c.n_short_factor = c.n_long_factor = 32;
        for (int i = 0; i < 32; i++)
            c.short_factor[i] = 1.0, c.long_factor[i] = 2.0 + i;
    }
    if (t->keys & RK_PRF)
        c.partial_rotary_factor = 0.5;
    if (t->width == RW_HEAD)
        c.exponent_dim = c.head_dim;
    return c;
}

static int compute_ok(const posenc_rope_config *c, int64_t seq_len, posenc_rope_params *p)
{
    posenc_error err = { 0 };
    posenc_status st = posenc_rope_params_compute(c, seq_len, p, &err);
    if (st != POSENC_OK)
        print_error("%s: %s\n", posenc_rope_type_name(c->type), err.msg);
    return st == POSENC_OK;
}

static void test_rope_type_rows(void **state)
{
    (void)state;
    assert_int_equal(pe_n_rope_types, POSENC_ROPE_PROPORTIONAL + 1); /* a row per enum value */
    static posenc_rope_params p0, p1;
    for (size_t i = 0; i < pe_n_rope_types; i++) {
        const pe_rope_type *t = &pe_rope_types[i];
        assert_non_null(t->name);
        assert_int_equal(t->type, (int)i);
        assert_ptr_equal(pe_rope_type_get(t->type), t);
        assert_ptr_equal(pe_rope_type_find(t->name), t); /* the name round-trips, uniquely */
        assert_string_equal(posenc_rope_type_name(t->type), t->name);
        assert_non_null(t->compute);
        /* every type that reads a factor validates it; default has nothing to validate */
        assert_true((t->check != NULL) == (t->factor != FAC_NONE));
        /* default is the class's own init, and only it */
        assert_true((t->width == RW_CLASS) == (t->type == POSENC_ROPE_DEFAULT));
        assert_non_null(t->hf);
        if (t->type == POSENC_ROPE_DEFAULT) {
            assert_non_null(strstr(t->hf, "compute_default_rope_parameters"));
        } else { /* one of modeling_rope_utils.py's ROPE_INIT_FUNCTIONS */
            size_t n = strlen(t->hf);
            assert_true(strncmp(t->hf, "_compute_", 9) == 0 && n > 11 &&
                        strcmp(t->hf + n - 11, "_parameters") == 0);
        }
        /* llama.cpp's llama_rope_scaling_type names (include/llama.h) */
        if (t->gguf)
            assert_true(strcmp(t->gguf, "linear") == 0 || strcmp(t->gguf, "yarn") == 0 ||
                        strcmp(t->gguf, "longrope") == 0);

        /* the key columns suffice */
        posenc_rope_config c = config_of(t);
        assert_true(compute_ok(&c, 0, &p0));
        /* and each key claimed is needed */
        struct { unsigned key; posenc_rope_config c; } drop[5];
        size_t nd = 0;
        drop[nd].key = RK_M0, drop[nd].c = c, drop[nd++].c.original_max_position_embeddings = 0;
        drop[nd].key = RK_MAXPOS, drop[nd].c = c, drop[nd++].c.max_position_embeddings = 0;
        drop[nd].key = RK_LOWHIGH, drop[nd].c = c, drop[nd++].c.low_freq_factor = 0;
        drop[nd].key = RK_SHORTLONG, drop[nd].c = c, drop[nd++].c.n_long_factor = 0;
        drop[nd].key = RK_PRF, drop[nd].c = c, drop[nd++].c.partial_rotary_factor = 0;
        for (size_t k = 0; k < nd; k++) {
            if (!(t->keys & drop[k].key))
                continue;
            posenc_error err = { 0 };
            if (posenc_rope_params_compute(&drop[k].c, 0, &p1, &err) == POSENC_OK)
                fail_msg("%s: key 0x%x claimed but not needed", t->name, drop[k].key);
        }
        if (t->keys & RK_YARN) {
            posenc_rope_config y = c;
            y.beta_fast = -1.0;
            assert_int_equal(posenc_rope_params_compute(&y, 0, &p1, NULL), POSENC_ECONFIG);
        }
        if (t->factor != FAC_NONE) {
            posenc_rope_config f = c;
            f.factor = -1.0;
            assert_int_equal(posenc_rope_params_compute(&f, 0, &p1, NULL), POSENC_ECONFIG);
        }

        /* .seq: whether a long sequence changes inv_freq */
        assert_true(compute_ok(&c, 8 * c.max_position_embeddings, &p1));
        int changed = 0;
        for (int k = 0; k < p0.n_freq; k++)
            changed |= p0.inv_hi[k] != p1.inv_hi[k];
        if (changed != (t->seq != SEQ_NONE))
            fail_msg("%s: .seq %d, but a long sequence %s inv_freq", t->name, t->seq,
                     changed ? "changes" : "keeps");
        /* .width RW_HEAD: the table spans head_dim with trailing zero frequencies */
        if (t->width == RW_HEAD)
            assert_true(p0.inv_hi[0] > 0 && p0.inv_hi[p0.n_freq - 1] == 0.0);

        /* .vllm: the class get_rope builds (lib/runtimes/rope_vllm.c) */
        assert_non_null(t->vllm);
        posenc_vllm_info vi;
        posenc_error err = { 0 };
        if (posenc_vllm_rope(&c, "llama", 0, &p1, &vi, &err) != POSENC_OK)
            fail_msg("%s: vllm: %s", t->name, err.msg);
        assert_string_equal(vi.cls, t->vllm);
    }
    assert_null(pe_rope_type_get((posenc_rope_type)pe_n_rope_types));
    assert_null(pe_rope_type_find("mrope")); /* a config spelling, read as default */
    char names[160];
    assert_string_equal(pe_rope_type_names(names, sizeof names),
                        "default, linear, dynamic, yarn, longrope, llama3, proportional");
}

/* Each row's name in a config.json resolves to that row. */
static void test_rope_type_configs(void **state)
{
    (void)state;
    static const char *const extra[] = {
        [POSENC_ROPE_DEFAULT] = "",
        [POSENC_ROPE_LINEAR] = ",\"factor\":2.0",
        [POSENC_ROPE_DYNAMIC] = ",\"factor\":2.0",
        [POSENC_ROPE_YARN] = ",\"factor\":4.0,\"original_max_position_embeddings\":1024",
        [POSENC_ROPE_LONGROPE] = ",\"original_max_position_embeddings\":1024,\"short_factor\":["
                                 "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],\"long_factor\":[2,2,2,2,2,2,"
                                 "2,2,2,2,2,2,2,2,2,2]",
        [POSENC_ROPE_LLAMA3] = ",\"factor\":8.0,\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,"
                               "\"original_max_position_embeddings\":1024",
        [POSENC_ROPE_PROPORTIONAL] = ",\"partial_rotary_factor\":0.5",
    };
    assert_int_equal(sizeof extra / sizeof *extra, pe_n_rope_types);
    for (size_t i = 0; i < pe_n_rope_types; i++) {
        char json[600];
        snprintf(json, sizeof json,
                 "{\"model_type\":\"llama\",\"hidden_size\":128,\"num_attention_heads\":4,"
                 "\"max_position_embeddings\":4096,\"rope_scaling\":{\"rope_type\":\"%s\"%s}}",
                 pe_rope_types[i].name, extra[i]);
        posenc_model *m = NULL;
        posenc_error err = { 0 };
        posenc_rope_config c;
        if (posenc_config_parse(json, strlen(json), "t.json", NULL, &m, &err) != POSENC_OK ||
            posenc_model_rope(m, NULL, &c, &err) != POSENC_OK)
            fail_msg("%s: %s", pe_rope_types[i].name, err.msg);
        assert_int_equal(c.type, pe_rope_types[i].type);
        /* .gguf: the scaling type lib/runtimes/llamacpp.c writes as llama.cpp's converter does */
        posenc_gguf_rope g;
        if (posenc_gguf_rope_from_model(m, NULL, &g, &err) != POSENC_OK)
            fail_msg("%s: gguf: %s", pe_rope_types[i].name, err.msg);
        const char *want_type = pe_rope_types[i].gguf;
        if (want_type)
            assert_true((g.has & POSENC_GGUF_SCALING_TYPE) &&
                        strcmp(g.scaling_type, want_type) == 0);
        else if (g.has & POSENC_GGUF_SCALING_TYPE)
            fail_msg("%s: the converter writes scaling type '%s', the row none",
                     pe_rope_types[i].name, g.scaling_type);
        posenc_model_free(m);
    }
}

/* What the command line and the runtimes fix, independently of the table: the --precision names
 * (man/posenc-gen.1) and the largest position (llama.cpp's llama_pos is int32_t, include/llama.h). */
static const struct {
    const char *name, *alias;
    int64_t max_pos;
} want[] = {
    [POSENC_PREC_EXACT] = { "exact", NULL, 0 },
    [POSENC_PREC_HF] = { "hf", "transformers", 0 },
    [POSENC_PREC_VLLM] = { "vllm", NULL, 0 },
    [POSENC_PREC_GGML] = { "ggml", "llama.cpp", INT32_MAX },
};

static void test_profile_rows(void **state)
{
    (void)state;
    assert_int_equal(sizeof want / sizeof *want, pe_n_profiles);
    assert_int_equal(pe_n_profiles, POSENC_PREC_GGML + 1);
    assert_int_equal(pe_n_profiles, POSENC_VERIFY_N_PROFILES);
    /* parameters every row can rotate: default RoPE, and llama.cpp's arguments for them */
    posenc_rope_config c = config_of(&pe_rope_types[POSENC_ROPE_DEFAULT]);
    static posenc_rope_params p;
    assert_true(compute_ok(&c, 0, &p));
    posenc_ggml_rope g;
    memset(&g, 0, sizeof g);
    g.mode = POSENC_GGML_ROPE_NEOX;
    g.n_dims = g.head_dim = 64;
    g.n_ctx_orig = 4096;
    g.freq_base = 10000.0f, g.freq_scale = 1.0f, g.attn_factor = 1.0f;
    g.beta_fast = 32.0f, g.beta_slow = 1.0f;
    g.kq_scale = 0.125;
    posenc_error err = { 0 };
    if (posenc_rope_params_set_ggml(&p, &g, &err) != POSENC_OK)
        fail_msg("ggml: %s", err.msg);
    for (size_t i = 0; i < pe_n_profiles; i++) {
        const pe_profile *r = &pe_profiles[i];
        assert_non_null(r->name);
        assert_int_equal(r->prec, (int)i);
        assert_ptr_equal(pe_profile_get(r->prec), r);
        assert_string_equal(posenc_precision_name(r->prec), r->name);
        assert_string_equal(r->name, want[i].name);
        if (want[i].alias || r->alias)
            assert_true(want[i].alias && r->alias && strcmp(r->alias, want[i].alias) == 0);
        assert_int_equal(r->max_pos, want[i].max_pos);
        posenc_precision q = (posenc_precision)-1;
        assert_int_equal(posenc_precision_parse(r->name, &q, NULL), POSENC_OK);
        assert_int_equal(q, r->prec);
        if (r->alias) {
            q = (posenc_precision)-1;
            assert_int_equal(posenc_precision_parse(r->alias, &q, NULL), POSENC_OK);
            assert_int_equal(q, r->prec);
        }
        assert_true(r->runtime && r->runtime[0] && r->drift && r->drift[0]);
        /* the note speaks for the precision by name */
        assert_non_null(r->note);
        assert_true(strncmp(r->note, r->name, strlen(r->name)) == 0 &&
                    r->note[strlen(r->name)] == ':');
        assert_true(!(r->flags & PF_NARROW) || (r->flags & PF_F32)); /* a float32 table, cast */
        assert_non_null(r->cossin);

        /* cos/sin: the rotation's, cos(pos * theta^(-2k/64)), within float32 rounding */
        double cs[POSENC_MAX_FREQ], sn[POSENC_MAX_FREQ];
        const int64_t pos = 7;
        posenc_rope_cossin(&p, r->prec, pos, cs, sn);
        for (int k = 0; k < p.n_freq; k++) {
            long double a = (long double)pos * powl(10000.0L, -2.0L * k / 64.0L);
            assert_close(cs[k], (double)cosl(a), 0, 1e-6);
            assert_close(sn[k], (double)sinl(a), 0, 1e-6);
        }
        /* the position bound is the one posenc_rope_table enforces */
        int64_t past = r->max_pos > 0 ? r->max_pos + 1 : (int64_t)1 << 40;
        double row[128];
        posenc_status st = posenc_rope_table(&p, r->prec, POSENC_LAYOUT_HALF, &past, 1, row,
                                             row + 64, 1, NULL);
        assert_int_equal(st, r->max_pos > 0 ? POSENC_EINVAL : POSENC_OK);
        /* PF_GGML: llama.cpp's arguments are required */
        posenc_rope_params bare = p;
        bare.has_ggml = 0;
        int64_t zero = 0;
        st = posenc_rope_table(&bare, r->prec, POSENC_LAYOUT_HALF, &zero, 1, row, row + 64, 1,
                               NULL);
        assert_int_equal(st, (r->flags & PF_GGML) ? POSENC_EINVAL : POSENC_OK);
        /* and a row that does not ask for them rotates without them */
        for (int k = 0; st == POSENC_OK && k < 64; k++)
            assert_true(isfinite(row[k]));
    }
    assert_null(pe_profile_get((posenc_precision)pe_n_profiles));
    posenc_precision q;
    posenc_error e = { 0 };
    assert_int_equal(posenc_precision_parse("fp8", &q, &e), POSENC_EINVAL);
    assert_string_equal(e.msg, "unknown precision 'fp8' (expected exact, hf, vllm or ggml)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rope_type_rows),
        cmocka_unit_test(test_rope_type_configs),
        cmocka_unit_test(test_profile_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
