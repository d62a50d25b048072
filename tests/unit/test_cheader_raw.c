/* test_cheader_raw.c: the C header writer (compiles warning-free under -Werror, every value read
 * back exactly by the compiler, identifiers and metadata) and the raw .bin + .json format (round
 * trips, 64-byte alignment, sidecar fields, numpy reading it, malformed sidecars). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "fmtutil.h"

/* ---------------------------------------------------------------- C header */

static void test_cheader(void **state)
{
    (void)state;
    const pe_backend *be = &pe_backend_cheader;
    assert_null(be->open);
    posenc_array_info a[] = {
        fmt_info("cos", POSENC_DT_F32, 2, (int64_t)3, (int64_t)4),
        fmt_info("sin", POSENC_DT_F64, 3, (int64_t)2, (int64_t)2, (int64_t)3),
        fmt_info("layer.0/q", POSENC_DT_F16, 1, (int64_t)4),
        fmt_info("layer_0_q", POSENC_DT_BF16, 1, (int64_t)2),
        fmt_info("0idx", POSENC_DT_I32, 1, (int64_t)4),
        fmt_info("i64", POSENC_DT_I64, 1, (int64_t)5),
        fmt_info("u8", POSENC_DT_U8, 1, (int64_t)3),
        fmt_info("scale", POSENC_DT_F32, 0),
        fmt_info("empty", POSENC_DT_F32, 2, (int64_t)0, (int64_t)2),
        fmt_info("big", POSENC_DT_F32, 1, (int64_t)1000),
    };
    float nanf_ = 0;
    uint32_t qnan = 0x7fc00000u;
    memcpy(&nanf_, &qnan, 4);
    float cosv[12] = { 0.1f, -0.0f, FLT_MIN, FLT_TRUE_MIN, FLT_MAX, -FLT_MAX, 1.0f, 3.0f,
                       (float)INFINITY, -(float)INFINITY, nanf_, 1e-30f };
    double sinv[12] = { 0.1, 1.0 / 3, DBL_MIN, 4.9e-324, DBL_MAX, -1e300, 2, -0.0,
                        1e22, 123456789.123456789, -7.5e-8, 1 };
    uint16_t q[4] = { 0x3c00, 0x7c00, 0xfc00, 0x0001 };
    uint16_t bq[2] = { 0x3f80, 0xc2f7 };
    int32_t idx[4] = { INT32_MIN, -1, 0, INT32_MAX };
    int64_t i64[5] = { INT64_MIN, -(1LL << 40), 2147483648LL, INT64_MAX, 7 };
    uint8_t u8[3] = { 0, 128, 255 };
    float scale = 1.2345678f;
    float *big = fmt_data(POSENC_DT_F32, 1000, 9);
    const void *data[] = { cosv, sinv, q, bq, idx, i64, u8, &scale, NULL, big };
    const char *path = tu_path("rope.h");
    posenc_writer *w = fmt_writer(be, path, 0, a, sizeof a / sizeof a[0]);
    fmt_writer_meta(w, "theta", "500000");
    fmt_writer_meta(w, "attention_scaling", "1.0");
    fmt_writer_meta(w, "rotary_dim", "64");
    fmt_writer_meta(w, "offset", "-3");
    fmt_writer_meta(w, "big", "1e400");
    fmt_writer_meta(w, "huge_int", "5000000000");
    fmt_writer_meta(w, "layout", "\"half */ #error x ?\?/\"");
    fmt_writer_meta(w, "factors", "{\"a\": [1, 2]}");
    fmt_writer_meta(w, "rotary-dim", "65");   /* same macro as rotary_dim: stays a comment */
    fmt_writer_meta(w, "cos_dim0", "99");     /* would redefine POSENC_ROPE_COS_DIM0 */
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(w, a, sizeof a / sizeof a[0], data, 5, &err), POSENC_OK);
    assert_false(tu_tmp_left());

    char *text = (char *)tu_slurp(path, &(size_t){ 0 });
    assert_non_null(text);
    assert_non_null(strstr(text, "#ifndef POSENC_ROPE_H"));
    assert_non_null(strstr(text, "#include <stdint.h>"));
    assert_non_null(strstr(text, "#define POSENC_ROPE_THETA 500000\n"));
    assert_non_null(strstr(text, "#define POSENC_ROPE_ATTENTION_SCALING 1.0\n"));
    assert_non_null(strstr(text, "#define POSENC_ROPE_OFFSET (-3)\n"));
    assert_non_null(strstr(text, "#define POSENC_ROPE_HUGE_INT 5000000000LL\n"));
    assert_null(strstr(text, "POSENC_ROPE_BIG "));
    assert_non_null(strstr(text, "#define POSENC_ROPE_COS_DIM1 4\n"));
    assert_non_null(strstr(text, "static const float posenc_rope_cos[POSENC_ROPE_COS_DIM0][POSENC_ROPE_COS_DIM1]"));
    assert_non_null(strstr(text, "static const uint16_t posenc_rope_layer_0_q[POSENC_ROPE_LAYER_0_Q_DIM0]"));
    assert_non_null(strstr(text, "posenc_rope_layer_0_q_2["));
    assert_non_null(strstr(text, "posenc_rope_0idx["));
    assert_non_null(strstr(text, "factors: {\"a\": [1, 2]}"));
    assert_null(strstr(text, "half */"));
    assert_non_null(strstr(text, "rotary-dim: 65"));
    assert_non_null(strstr(text, "cos_dim0: 99"));
    free(text);

    /* compile with -Werror, then a program that dumps every array's bytes */
    FILE *fp = fopen(tu_path("check.c"), "w");
    assert_non_null(fp);
    fprintf(fp,
            "#include <stdio.h>\n#include <math.h>\n#include \"rope.h\"\n#include \"rope.h\"\n"
            "_Static_assert(POSENC_ROPE_THETA == 500000, \"theta\");\n"
            "_Static_assert(POSENC_ROPE_ROTARY_DIM == 64, \"rotary_dim\");\n"
            "_Static_assert(POSENC_ROPE_OFFSET == -3, \"offset\");\n"
            "_Static_assert(POSENC_ROPE_SIN_DIM2 == 3, \"dim\");\n"
            "#define PUT(x) fwrite(&(x), sizeof(x), 1, f)\n"
            "int main(int argc, char **argv) {\n"
            "    FILE *f = fopen(argv[argc - 1], \"wb\");\n"
            "    if (!f) return 1;\n"
            "    PUT(posenc_rope_cos); PUT(posenc_rope_sin); PUT(posenc_rope_layer_0_q);\n"
            "    PUT(posenc_rope_layer_0_q_2); PUT(posenc_rope_0idx); PUT(posenc_rope_i64);\n"
            "    PUT(posenc_rope_u8); PUT(posenc_rope_scale); PUT(posenc_rope_big);\n"
            "    return fclose(f) != 0;\n}\n");
    fclose(fp);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && cc -std=c11 -Wall -Wextra -Wpedantic -Werror -c check.c -o check.o && "
             "cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 check.c -o check -lm && "
             "./check dump.bin",
             tu_dir);
    assert_int_equal(system(cmd), 0);
    size_t len;
    unsigned char *dump = (unsigned char *)(char *)tu_slurp(tu_path("dump.bin"), &len);
    assert_non_null(dump);
    size_t off = 0;
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        if (!data[i])
            continue;
        size_t nb = fmt_nelem(&a[i]) * posenc_dtype_size(a[i].dtype);
        assert_true(off + nb <= len);
        if (memcmp(dump + off, data[i], nb) != 0)
            fail_msg("array '%s' differs after compiling", a[i].name);
        off += nb;
    }
    assert_int_equal(off, len);
    free(dump);
    free(big);
}

/* an empty header (no arrays) still compiles; abort leaves nothing */
static void test_cheader_empty_abort(void **state)
{
    (void)state;
    const pe_backend *be = &pe_backend_cheader;
    posenc_writer *w = fmt_writer(be, tu_path("none.h"), 0, NULL, 0);
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(w, NULL, 0, NULL, 1, &err), POSENC_OK);
    char cmd[700];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '#include \"none.h\"\\nint x;\\n' > n.c && "
             "cc -std=c11 -Wall -Wextra -Wpedantic -Werror -c n.c -o n.o",
             tu_dir);
    assert_int_equal(system(cmd), 0);

    fmt_expect_abort_clean(be, tu_path("abort.h"), NULL);
}

/* ---------------------------------------------------------------- raw */

static const pe_backend *raw = &pe_backend_raw;

static void test_raw_roundtrip(void **state)
{
    (void)state;
    posenc_array_info a[FMT_EVERY_DTYPE_N];
    size_t n = fmt_every_dtype(a);
    void *data[FMT_EVERY_DTYPE_N];
    for (size_t i = 0; i < n; i++)
        data[i] = fmt_data(a[i].dtype, fmt_nelem(&a[i]), (unsigned)i + 21);
    posenc_writer *w = fmt_writer(raw, tu_path("t.bin"), 0, a, n);
    fmt_writer_meta(w, "theta", "10000");
    fmt_writer_meta(w, "style", "\"gptj\"");
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(w, a, n, (const void *const *)data, 6, &err), POSENC_OK);
    assert_true(tu_exists(tu_path("t.json")));
    assert_false(tu_tmp_left());
    static const char *opens[] = { "t.bin", "t.json" };
    for (int o = 0; o < 2; o++) {
        posenc_container *c = NULL;
        assert_int_equal(fmt_open(raw, tu_path(opens[o]), 0, &c, &err), POSENC_OK);
        assert_int_equal(c->n, n);
        assert_non_null(strstr(c->meta, "\"theta\":10000"));
        assert_non_null(strstr(c->meta, "\"style\":\"gptj\""));
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(c->arrays[i].name, a[i].name);
            assert_int_equal(c->arrays[i].dtype, a[i].dtype);
            assert_int_equal(c->arrays[i].ndim, a[i].ndim);
            void *back = NULL;
            assert_int_equal(fmt_read(c, i, 4, &back, &err), POSENC_OK);
            assert_memory_equal(back, data[i], fmt_nelem(&a[i]) * posenc_dtype_size(a[i].dtype));
            free(back);
        }
        fmt_close(c);
    }
    for (size_t i = 0; i < n; i++)
        free(data[i]);
    /* numpy reads it from the sidecar alone; offsets are 64-byte aligned */
    tu_python("numpy",
        "import json, numpy as np\n"
        "j = json.load(open(D + '/t.json'))\n"
        "assert j['format'] == 'posenc-raw' and j['version'] == 1\n"
        "assert j['metadata'] == {'theta': 10000, 'style': 'gptj'}\n"
        "npt = {'f16': '<f2', 'bf16': '<u2', 'f32': '<f4', 'f64': '<f8', 'i32': '<i4', "
        "'i64': '<i8', 'u8': 'u1'}\n"
        "size = len(open(D + '/t.bin', 'rb').read())\n"
        "for e in j['arrays']:\n"
        "    assert e['offset'] % 64 == 0, e\n"
        "    a = np.fromfile(D + '/t.bin', dtype=npt[e['dtype']], count=int(np.prod(e['shape'])),"
        " offset=e['offset']).reshape(e['shape'])\n"
        "    assert a.nbytes == e['nbytes'] and e['offset'] + e['nbytes'] <= size\n"
        "f = j['arrays'][2]\n"
        "assert f['name'] == 'f32' and f['shape'] == [2, 3, 4] and f['nbytes'] == 96\n");
}

static void raw_bad(const char *sidecar, size_t binsize, posenc_status code, const char *substr)
{
    tu_write_file(tu_path("bad.json"), sidecar, strlen(sidecar));
    unsigned char *z = calloc(1, binsize + 1);
    tu_write_file(tu_path("bad.bin"), z, binsize);
    free(z);
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    posenc_status st = fmt_open(raw, tu_path("bad.bin"), 0, &c, &err);
    if (st == POSENC_OK)
        fmt_close(c);
    if (st != code || !strstr(err.msg, substr))
        print_error("got %d '%s', want %d containing '%s'\n", st, err.msg, code, substr);
    assert_int_equal(st, code);
    assert_non_null(strstr(err.msg, substr));
}

#define RAW_HEAD "{\"format\":\"posenc-raw\",\"version\":1,\"arrays\":["
#define RAW_A "{\"name\":\"a\",\"dtype\":\"f32\",\"shape\":[2],\"offset\":0,\"nbytes\":8}"

static void test_raw_bad(void **state)
{
    (void)state;
    raw_bad(RAW_HEAD RAW_A "]}", 8, POSENC_OK, "");
    raw_bad("{\"format\":\"npy\",\"version\":1,\"arrays\":[]}", 8, POSENC_EFORMAT,
            "not a posenc-raw sidecar");
    raw_bad("{\"format\":\"posenc-raw\",\"version\":2,\"arrays\":[]}", 8, POSENC_EUNSUPPORTED,
            "version");
    raw_bad("{\"format\":\"posenc-raw\",", 8, POSENC_EFORMAT, "not a posenc-raw sidecar");
    raw_bad(RAW_HEAD RAW_A "]}", 4, POSENC_EFORMAT, "past the end of the file (4 bytes)");
    raw_bad(RAW_HEAD "{\"name\":\"a\",\"dtype\":\"f32\",\"shape\":[3],\"offset\":0,\"nbytes\":8}]}",
            16, POSENC_EFORMAT, "nbytes 8 but its shape needs 12");
    raw_bad(RAW_HEAD "{\"name\":\"a\",\"dtype\":\"f12\",\"shape\":[2],\"offset\":0,\"nbytes\":8}]}",
            8, POSENC_EFORMAT, "invalid dtype");
    raw_bad(RAW_HEAD "{\"name\":\"a\",\"dtype\":\"f32\",\"shape\":[2],\"offset\":-64,\"nbytes\":8}]}",
            8, POSENC_EFORMAT, "invalid offset");
    raw_bad(RAW_HEAD "{\"name\":\"a\",\"dtype\":\"f32\",\"shape\":[4294967296,4294967296],"
                     "\"offset\":0,\"nbytes\":8}]}",
            8, POSENC_EFORMAT, "overflows");
    raw_bad(RAW_HEAD RAW_A "," RAW_A "]}", 8, POSENC_EFORMAT, "duplicate array name 'a'");
    raw_bad(RAW_HEAD "{\"dtype\":\"f32\"}]}", 8, POSENC_EFORMAT, "has no name");
    raw_bad(RAW_HEAD RAW_A "],\"metadata\":[1]}", 8, POSENC_EFORMAT, "not an object");
    raw_bad("{\"format\":\"posenc-raw\",\"version\":1,\"arrays\":{}}", 8, POSENC_EFORMAT,
            "not a list");
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    assert_int_equal(fmt_open(raw, tu_path("nothing.bin"), 0, &c, &err), POSENC_EIO);
    assert_non_null(strstr(err.msg, "nothing.json"));
    raw_bad(RAW_HEAD RAW_A "]}", 8, POSENC_OK, "");
    unlink(tu_path("bad.bin"));
    assert_int_equal(fmt_open(raw, tu_path("bad.json"), 0, &c, &err), POSENC_EIO);
    assert_non_null(strstr(err.msg, "bad.bin"));
}

static void test_raw_abort(void **state)
{
    (void)state;
    fmt_expect_abort_clean(raw, tu_path("ab.bin"), tu_path("ab.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cheader),
        cmocka_unit_test(test_cheader_empty_abort),
        cmocka_unit_test(test_raw_roundtrip),
        cmocka_unit_test(test_raw_bad),
        cmocka_unit_test(test_raw_abort),
    };
    return cmocka_run_group_tests_name("cheader_raw", tests, tu_setup, tu_teardown);
}
