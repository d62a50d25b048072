/* test_gguf_write.c: the GGUF writer (formats/files/gguf_write.c): round trips of every tensor dtype and
 * metadata type through posenc's own GGUF reader, llama.cpp's keys and factor tensors from a
 * hand-filled posenc_gguf_rope, the byte layout (magic, version, counts, alignment), and every
 * limit and bad value refused with one message and no file left. ggml's and gguf-py's readers
 * read these files in tests/cli/t_gguf_write.sh. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fmtutil.h"
#include "posenc/llamacpp.h"

static const pe_backend *be = &pe_backend_gguf;

/* A llama-3-like view with every key and tensor set (values chosen to be exact or not in f32). */
static posenc_gguf_rope rope_fixture(void)
{
    posenc_gguf_rope g;
    memset(&g, 0, sizeof g);
    snprintf(g.arch, sizeof g.arch, "llama");
    g.has = POSENC_GGUF_FREQ_BASE | POSENC_GGUF_DIMENSION_COUNT | POSENC_GGUF_DIMENSION_SECTIONS |
            POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR | POSENC_GGUF_ORIG_CTX |
            POSENC_GGUF_YARN_EXT_FACTOR | POSENC_GGUF_YARN_ATTN_FACTOR |
            POSENC_GGUF_YARN_BETA_FAST | POSENC_GGUF_YARN_BETA_SLOW | POSENC_GGUF_YARN_LOG_MUL |
            POSENC_GGUF_ATTN_FACTOR | POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_KEY_LENGTH |
            POSENC_GGUF_HEAD_COUNT | POSENC_GGUF_EMBEDDING_LENGTH | POSENC_GGUF_FREQ_BASE_SWA;
    g.freq_base = 500000.0;
    g.freq_base_swa = 10000.0;
    g.dimension_count = 128;
    g.n_sections = 4;
    g.sections[0] = 16;
    g.sections[1] = 24;
    g.sections[2] = 24;
    g.sections[3] = 0;
    snprintf(g.scaling_type, sizeof g.scaling_type, "yarn");
    g.scaling_factor = 4.0;
    g.original_context_length = 32768;
    g.yarn_ext_factor = 1.0;
    g.yarn_attn_factor = 0.1; /* not a float32: stored rounded */
    g.yarn_beta_fast = 32.0;
    g.yarn_beta_slow = 1.0;
    g.yarn_log_multiplier = 0.1;
    g.attn_factor = 1.2;
    g.context_length = 131072;
    g.key_length = 128;
    g.head_count = 32;
    g.embedding_length = 4096;
    g.n_rope_freqs = 64;
    for (int i = 0; i < 64; i++)
        g.rope_freqs[i] = 1.0f + (float)i / 7.0f;
    g.n_factors_long = 3;
    g.factors_long[0] = 1.5f;
    g.factors_long[1] = 2.25f;
    g.factors_long[2] = 1e-3f;
    return g;
}

static cJSON *meta_of(const posenc_container *c, int types)
{
    const char *t = types ? posenc_container_meta_types(c) : posenc_container_meta(c);
    assert_non_null(t);
    cJSON *j = cJSON_Parse(t);
    assert_non_null(j);
    return j;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(x))
        fail_msg("no number '%s'", k);
    return x->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(x))
        fail_msg("no string '%s'", k);
    return x->valuestring;
}

static void test_roundtrip(void **state)
{
    (void)state;
    posenc_array_info a[] = {
        fmt_info("cos", POSENC_DT_F32, 2, (int64_t)7, (int64_t)5),
        fmt_info("f16", POSENC_DT_F16, 1, (int64_t)9),
        fmt_info("bf16", POSENC_DT_BF16, 3, (int64_t)2, (int64_t)3, (int64_t)5),
        fmt_info("f64", POSENC_DT_F64, 1, (int64_t)3),
        fmt_info("i32", POSENC_DT_I32, 2, (int64_t)1, (int64_t)11),
        fmt_info("i64", POSENC_DT_I64, 4, (int64_t)1, (int64_t)2, (int64_t)1, (int64_t)3),
        fmt_info("empty", POSENC_DT_F32, 2, (int64_t)0, (int64_t)4),
    };
    size_t n = sizeof a / sizeof a[0];
    void *data[sizeof a / sizeof a[0]];
    for (size_t i = 0; i < n; i++)
        data[i] = fmt_data(a[i].dtype, fmt_nelem(&a[i]), (unsigned)i + 3);
    const char *path = tu_path("rt.gguf");
    posenc_writer *w = fmt_writer(be, path, 0, a, n);
    posenc_error err = { 0 };
    posenc_gguf_rope g = rope_fixture();
    assert_int_equal(posenc_gguf_writer_rope(w, &g, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_writer_rope(w, &g, &err), POSENC_EINVAL); /* once */
    fmt_writer_meta(w, "theta", "500000");
    fmt_writer_meta(w, "style", "\"neox\"");
    fmt_writer_meta(w, "notes", "[\"a\", \"b \\\"q\\\"\"]");
    fmt_writer_meta(w, "section", "[1, 2.5]");
    fmt_writer_meta(w, "flags", "[true, false]");
    fmt_writer_meta(w, "truncate", "false");
    fmt_writer_meta(w, "layer_type", "null");          /* no key */
    fmt_writer_meta(w, "obj", "{\"a\": [1, \"x\"]}");  /* its JSON text */
    fmt_writer_meta(w, "big", "9007199254740993");     /* past 2^53: int64 */
    fmt_writer_meta(w, "huge", "18446744073709551615"); /* uint64 */
    fmt_writer_meta(w, "posenc.kept", "1");            /* already posenc.*: not prefixed twice */
    struct { const char *k; posenc_meta_type t; const char *v; } typed[] = {
        { "u32", POSENC_META_U32, "4294967295" }, { "i32", POSENC_META_I32, "-2147483648" },
        { "u64", POSENC_META_U64, "18446744073709551615" },
        { "i64", POSENC_META_I64, "-9223372036854775808" },
        { "f32", POSENC_META_F32, "0.1" },     { "f64", POSENC_META_F64, "0.1" },
        { "b", POSENC_META_BOOL, "true" },     { "s", POSENC_META_STRING, "\"x y\"" },
        { "ai", POSENC_META_I32_ARRAY, "[1, -2, 2147483647]" },
        { "af", POSENC_META_F32_ARRAY, "[0.1, 3]" },
        { "ad", POSENC_META_F64_ARRAY, "[0.1, 3]" },
        { "as", POSENC_META_STRING_ARRAY, "[\"p\", \"\"]" },
        { "ae", POSENC_META_I32_ARRAY, "[]" },
    };
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
        assert_int_equal(posenc_writer_meta_typed(w, typed[i].k, typed[i].t, typed[i].v, &err),
                         POSENC_OK);
    assert_int_equal(fmt_write_all(w, a, n, (const void *const *)data, 4, &err), POSENC_OK);
    assert_false(tu_tmp_left());

    /* layout: magic, version 3, 7 + 2 tensors, the whole file a multiple of the alignment */
    size_t fsize;
    unsigned char *b = tu_slurp(path, &fsize);
    assert_memory_equal(b, "GGUF\3\0\0\0", 8);
    assert_int_equal(b[8], 9);
    assert_int_equal(fsize % 32, 0);
    free(b);

    posenc_container *c = NULL;
    assert_int_equal(fmt_open(be, path, 0, &c, &err), POSENC_OK);
    assert_int_equal(posenc_container_count(c), n + 2);
    for (size_t i = 0; i < n; i++) {
        const posenc_array_info *ri = posenc_container_array(c, i);
        assert_string_equal(ri->name, a[i].name);
        assert_int_equal(ri->dtype, a[i].dtype);
        assert_int_equal(ri->ndim, a[i].ndim);
        for (int d = 0; d < a[i].ndim; d++)
            assert_int_equal(ri->shape[d], a[i].shape[d]);
        void *back = NULL;
        assert_int_equal(fmt_read(c, i, 5, &back, &err), POSENC_OK);
        assert_memory_equal(back, data[i], fmt_nelem(&a[i]) * posenc_dtype_size(a[i].dtype));
        free(back);
        free(data[i]);
    }
    /* the factor tensors, after the declared arrays */
    const posenc_array_info *rf = posenc_container_array(c, n);
    assert_string_equal(rf->name, "rope_freqs.weight");
    assert_int_equal(rf->dtype, POSENC_DT_F32);
    assert_int_equal(rf->ndim, 1);
    assert_int_equal(rf->shape[0], 64);
    float *fv = NULL;
    assert_int_equal(fmt_read(c, n, 64, (void **)&fv, &err), POSENC_OK);
    assert_memory_equal(fv, g.rope_freqs, 64 * sizeof(float));
    free(fv);
    assert_string_equal(posenc_container_array(c, n + 1)->name, "rope_factors_long.weight");
    assert_int_equal(fmt_read(c, n + 1, 2, (void **)&fv, &err), POSENC_OK);
    assert_memory_equal(fv, g.factors_long, 3 * sizeof(float));
    free(fv);

    cJSON *m = meta_of(c, 0), *t = meta_of(c, 1);
    /* the first keys, in order */
    assert_string_equal(m->child->string, "general.architecture");
    assert_string_equal(m->child->next->string, "general.alignment");
    assert_string_equal(str(m, "general.architecture"), "llama");
    assert_string_equal(str(t, "general.alignment"), "uint32");
    assert_int_equal(num(m, "general.alignment"), 32);
    struct { const char *k, *type; double v; } want[] = {
        { "llama.context_length", "uint32", 131072 },
        { "llama.embedding_length", "uint32", 4096 },
        { "llama.attention.head_count", "uint32", 32 },
        { "llama.attention.key_length", "uint32", 128 },
        { "llama.rope.freq_base", "float32", 500000 },
        { "llama.rope.freq_base_swa", "float32", 10000 },
        { "llama.rope.dimension_count", "uint32", 128 },
        { "llama.rope.scaling.factor", "float32", 4 },
        { "llama.rope.scaling.attn_factor", "float32", (double)1.2f },
        { "llama.rope.scaling.original_context_length", "uint32", 32768 },
        { "llama.rope.scaling.yarn_ext_factor", "float32", 1 },
        { "llama.rope.scaling.yarn_attn_factor", "float32", (double)0.1f },
        { "llama.rope.scaling.yarn_beta_fast", "float32", 32 },
        { "llama.rope.scaling.yarn_beta_slow", "float32", 1 },
        { "llama.rope.scaling.yarn_log_multiplier", "float32", (double)0.1f },
        { "posenc.theta", "float64", 500000 },
        { "posenc.section", "array[float64]", 0 },
        { "posenc.big", "int64", 9007199254740992.0 }, /* as a double: checked as text below */
        { "posenc.huge", "uint64", 18446744073709551615.0 },
        { "posenc.kept", "float64", 1 },
        { "posenc.u32", "uint32", 4294967295.0 },
        { "posenc.i32", "int32", -2147483648.0 },
        { "posenc.u64", "uint64", 18446744073709551615.0 },
        { "posenc.i64", "int64", -9223372036854775808.0 },
        { "posenc.f32", "float32", (double)0.1f },
        { "posenc.f64", "float64", 0.1 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_string_equal(str(t, want[i].k), want[i].type);
        if (strncmp(want[i].type, "array", 5) != 0)
            assert_true(num(m, want[i].k) == want[i].v);
    }
    assert_non_null(strstr(posenc_container_meta(c), "\"posenc.big\":9007199254740993"));
    assert_non_null(strstr(posenc_container_meta(c), "\"posenc.huge\":18446744073709551615"));
    assert_non_null(strstr(posenc_container_meta(c), "\"posenc.i64\":-9223372036854775808"));
    assert_string_equal(str(m, "llama.rope.scaling.type"), "yarn");
    assert_string_equal(str(t, "llama.rope.dimension_sections"), "array[int32]");
    assert_non_null(strstr(posenc_container_meta(c),
                           "\"llama.rope.dimension_sections\":[16,24,24,0]"));
    assert_string_equal(str(m, "posenc.style"), "neox");
    assert_string_equal(str(t, "posenc.notes"), "array[string]");
    assert_non_null(strstr(posenc_container_meta(c), "\"posenc.notes\":[\"a\",\"b \\\"q\\\"\"]"));
    assert_string_equal(str(t, "posenc.flags"), "array[bool]");
    assert_string_equal(str(t, "posenc.truncate"), "bool");
    assert_string_equal(str(m, "posenc.obj"), "{\"a\":[1,\"x\"]}");
    assert_string_equal(str(t, "posenc.ai"), "array[int32]");
    assert_string_equal(str(t, "posenc.af"), "array[float32]");
    assert_string_equal(str(t, "posenc.ad"), "array[float64]");
    assert_string_equal(str(t, "posenc.as"), "array[string]");
    assert_string_equal(str(t, "posenc.ae"), "array[int32]");
    assert_non_null(strstr(posenc_container_meta(c), "\"posenc.af\":[0.10000000149011612,3]"));
    assert_null(cJSON_GetObjectItemCaseSensitive(m, "posenc.layer_type"));
    assert_null(cJSON_GetObjectItemCaseSensitive(m, "posenc.posenc.kept"));
    assert_int_equal(cJSON_GetArraySize(m), 2 + 17 + 23); /* general, llama, posenc */
    cJSON_Delete(m);
    cJSON_Delete(t);
    fmt_close(c);
}

/* Without a posenc_gguf_rope: general.alignment and posenc.* only; no arrays at all is a valid
 * file too (the data section is empty). */
static void test_plain(void **state)
{
    (void)state;
    const char *path = tu_path("plain.gguf");
    posenc_writer *w = fmt_writer(be, path, 0, NULL, 0);
    posenc_error err = { 0 };
    fmt_writer_meta(w, "encoding", "\"alibi\"");
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
    posenc_container *c = NULL;
    assert_int_equal(fmt_open(be, path, 0, &c, &err), POSENC_OK);
    assert_int_equal(posenc_container_count(c), 0);
    assert_string_equal(posenc_container_meta(c),
                        "{\"general.alignment\":32,\"posenc.encoding\":\"alibi\"}");
    fmt_close(c);
}

/* The old {arch}.rope.scale_linear (float32, from scaling_factor) and MLA's key length; a
 * struct with no key bits still names its architecture. */
static void test_rope_minimal(void **state)
{
    (void)state;
    posenc_gguf_rope g;
    memset(&g, 0, sizeof g);
    snprintf(g.arch, sizeof g.arch, "deepseek2");
    g.has = POSENC_GGUF_SCALE_LINEAR | POSENC_GGUF_KEY_LENGTH_MLA;
    g.scaling_factor = 2.5;
    g.key_length_mla = 192;
    const char *path = tu_path("min.gguf");
    posenc_writer *w = fmt_writer(be, path, 0, NULL, 0);
    posenc_error err = { 0 };
    assert_int_equal(posenc_gguf_writer_rope(w, &g, &err), POSENC_OK);
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
    posenc_container *c = NULL;
    assert_int_equal(fmt_open(be, path, 0, &c, &err), POSENC_OK);
    assert_string_equal(posenc_container_meta(c),
                        "{\"general.architecture\":\"deepseek2\",\"general.alignment\":32,"
                        "\"deepseek2.attention.key_length_mla\":192,"
                        "\"deepseek2.rope.scale_linear\":2.5}");
    assert_string_equal(posenc_container_meta_types(c),
                        "{\"general.architecture\":\"string\",\"general.alignment\":\"uint32\","
                        "\"deepseek2.attention.key_length_mla\":\"uint32\","
                        "\"deepseek2.rope.scale_linear\":\"float32\"}");
    assert_int_equal(posenc_container_count(c), 0);
    fmt_close(c);
}

/* A bad typed value: EINVAL naming the key, at the call. */
static void test_bad_meta(void **state)
{
    (void)state;
    struct { posenc_meta_type t; const char *v; } bad[] = {
        { POSENC_META_U32, "-1" },          { POSENC_META_U32, "4294967296" },
        { POSENC_META_U32, "1.5" },         { POSENC_META_U32, "\"1\"" },
        { POSENC_META_I32, "2147483648" },  { POSENC_META_I32, "-2147483649" },
        { POSENC_META_U64, "18446744073709551616" },
        { POSENC_META_I64, "9223372036854775808" },
        { POSENC_META_F32, "1e39" },        { POSENC_META_F32, "null" },
        { POSENC_META_F64, "\"x\"" },       { POSENC_META_BOOL, "1" },
        { POSENC_META_STRING, "5" },        { POSENC_META_I32_ARRAY, "[1.5]" },
        { POSENC_META_I32_ARRAY, "[3000000000]" }, { POSENC_META_F32_ARRAY, "[1, 1e39]" },
        { POSENC_META_F64_ARRAY, "[1, \"x\"]" },   { POSENC_META_STRING_ARRAY, "[1]" },
        { POSENC_META_I32_ARRAY, "1" },
    };
    posenc_write_opts o = { .format = POSENC_FMT_GGUF };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        posenc_writer *w = NULL;
        posenc_error err = { 0 };
        assert_int_equal(posenc_writer_open(tu_path("m.gguf"), &o, &w, &err), POSENC_OK);
        assert_int_equal(posenc_writer_meta_typed(w, "k", bad[i].t, bad[i].v, &err),
                         POSENC_EINVAL);
        assert_non_null(strstr(err.msg, "metadata 'k' is not"));
        assert_null(strchr(err.msg, '\n'));
        posenc_writer_abort(w);
    }
    posenc_writer *w = NULL;
    posenc_error err = { 0 };
    assert_int_equal(posenc_writer_open(tu_path("m.gguf"), &o, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_meta_typed(w, "k", (posenc_meta_type)99, "1", &err),
                     POSENC_EINVAL);
    posenc_writer_abort(w);
    assert_false(tu_exists(tu_path("m.gguf")));
    assert_false(tu_tmp_left());
}

/* A posenc_gguf_rope that cannot be written: refused at posenc_gguf_writer_rope. */
static void test_bad_rope(void **state)
{
    (void)state;
    posenc_write_opts o = { .format = POSENC_FMT_GGUF };
    for (int k = 0; k < 9; k++) {
        posenc_gguf_rope g = rope_fixture();
        posenc_status want = POSENC_EINVAL;
        const char *msg = NULL;
        switch (k) {
        case 0: g.arch[0] = '\0'; msg = "architecture name is empty"; break;
        case 1: snprintf(g.arch, sizeof g.arch, "lla.ma"); msg = "has a character"; break;
        case 2: snprintf(g.arch, sizeof g.arch, "posenc"); msg = "would clash"; break;
        case 3: memset(g.arch, 'a', sizeof g.arch); msg = "too long"; break;
        case 4: g.context_length = (int64_t)1 << 32; want = POSENC_ERANGE;
            msg = "llama.context_length = 4294967296 does not fit GGUF's uint32"; break;
        case 5: g.freq_base = 1e39; want = POSENC_ERANGE; msg = "not a finite float32"; break;
        case 6: g.n_sections = 5; msg = "has 5 values"; break;
        case 7: g.n_rope_freqs = POSENC_MAX_FREQ + 1; msg = "rope_freqs.weight has"; break;
        case 8: g.factors_long[1] = NAN; msg = "rope_factors_long.weight[1] is not finite"; break;
        }
        posenc_writer *w = NULL;
        posenc_error err = { 0 };
        assert_int_equal(posenc_writer_open(tu_path("r.gguf"), &o, &w, &err), POSENC_OK);
        assert_int_equal(posenc_gguf_writer_rope(w, &g, &err), want);
        if (!strstr(err.msg, msg))
            fail_msg("case %d: '%s' lacks '%s'", k, err.msg, msg);
        posenc_writer_abort(w);
    }
    /* another format */
    posenc_gguf_rope g = rope_fixture();
    posenc_writer *w = NULL;
    posenc_error err = { 0 };
    assert_int_equal(posenc_writer_open(tu_path("r.npz"), NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_gguf_writer_rope(w, &g, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "GGUF files only"));
    posenc_writer_abort(w);
    assert_false(tu_tmp_left());
}

/* Arrays GGUF cannot hold: refused when the writer starts, nothing left behind. */
static void test_bad_arrays(void **state)
{
    (void)state;
    char longname[80];
    memset(longname, 'n', 64);
    longname[64] = '\0';
    const int64_t big = (int64_t)1 << 59; /* 2^62 bytes of f64 */
    struct { posenc_array_info a[3]; size_t n; posenc_status st; const char *msg; } cases[] = {
        { { fmt_info("u8", POSENC_DT_U8, 1, (int64_t)4) }, 1, POSENC_EUNSUPPORTED,
          "array 'u8' is u8; GGUF stores f32, f16, bf16, f64, i32 and i64 tensors" },
        { { fmt_info(longname, POSENC_DT_F32, 1, (int64_t)4) }, 1, POSENC_EINVAL,
          "is longer than ggml's 63 bytes" },
        { { fmt_info("d5", POSENC_DT_F32, 5, (int64_t)1, (int64_t)1, (int64_t)1, (int64_t)1,
                     (int64_t)2) }, 1, POSENC_EINVAL, "has 5 dimensions; ggml tensors have at most 4" },
        { { fmt_info("a", POSENC_DT_F64, 1, big), fmt_info("b", POSENC_DT_F64, 1, big),
            fmt_info("c", POSENC_DT_F64, 1, (int64_t)1) }, 3, POSENC_ERANGE,
          "tensor data would pass 2^63 bytes" },
        { { fmt_info("rope_freqs.weight", POSENC_DT_F32, 1, (int64_t)4) }, 1, POSENC_EINVAL,
          "array name 'rope_freqs.weight' used twice" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        posenc_writer *w = fmt_writer(be, tu_path("bad.gguf"), 0, cases[i].a, cases[i].n);
        posenc_error err = { 0 };
        if (i == 4) {
            posenc_gguf_rope g = rope_fixture();
            assert_int_equal(posenc_gguf_writer_rope(w, &g, &err), POSENC_OK);
        }
        float x[4] = { 0 };
        assert_int_equal(posenc_writer_write(w, x, 1, &err), cases[i].st);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        posenc_writer_abort(w);
        assert_false(tu_exists(tu_path("bad.gguf")));
        assert_false(tu_tmp_left());
    }
}

/* An abandoned writer leaves nothing; a failed commit neither. */
static void test_abort(void **state)
{
    (void)state;
    posenc_array_info a = fmt_info("x", POSENC_DT_F32, 1, (int64_t)8);
    posenc_writer *w = fmt_writer(be, tu_path("ab.gguf"), 0, &a, 1);
    posenc_error err = { 0 };
    float x[3] = { 1, 2, 3 };
    assert_int_equal(posenc_writer_write(w, x, 3, &err), POSENC_OK);
    assert_true(tu_tmp_left());
    posenc_writer_abort(w);
    assert_false(tu_tmp_left());
    w = fmt_writer(be, tu_path("ab.gguf"), 0, &a, 1);
    assert_int_equal(posenc_writer_write(w, x, 3, &err), POSENC_OK);
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_EINVAL); /* incomplete */
    assert_false(tu_exists(tu_path("ab.gguf")));
    assert_false(tu_tmp_left());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_rope_minimal),
        cmocka_unit_test(test_bad_meta),
        cmocka_unit_test(test_bad_rope),
        cmocka_unit_test(test_bad_arrays),
        cmocka_unit_test(test_abort),
    };
    return cmocka_run_group_tests_name("gguf_write", tests, tu_setup, tu_teardown);
}
