/* test_safetensors.c: the safetensors backend: round trips of every dtype, the header layout the
 * spec asks of writers, metadata, files written and read by a numpy+json reader/writer, and every
 * malformed header the reference implementation refuses. */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "fmtutil.h"

static const pe_backend *be = &pe_backend_safetensors;

/* Every dtype, a scalar, an empty array and a 3-D array; odd piece sizes. */
static void test_roundtrip(void **state)
{
    (void)state;
    posenc_array_info a[FMT_EVERY_DTYPE_N + 1];
    size_t n = fmt_every_dtype(a);
    a[n++] = fmt_info("layer.0/q \"x\"", POSENC_DT_F32, 1, (int64_t)2);
    void *data[FMT_EVERY_DTYPE_N + 1];
    for (size_t i = 0; i < n; i++)
        data[i] = fmt_data(a[i].dtype, fmt_nelem(&a[i]), (unsigned)i + 1);
    const char *path = tu_path("rt.safetensors");
    posenc_writer *w = fmt_writer(be, path, 0, a, n);
    fmt_writer_meta(w, "theta", "500000");
    fmt_writer_meta(w, "layout", "\"half\"");
    fmt_writer_meta(w, "dims", "[1, 2]");
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(w, a, n, (const void *const *)data, 5, &err), POSENC_OK);
    assert_false(tu_tmp_left());

    /* header layout: length, '{', __metadata__ first, padded with spaces to 8 */
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    unsigned char lenb[8];
    assert_int_equal(fread(lenb, 1, 8, fp), 8);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | lenb[i];
    assert_int_equal(hlen % 8, 0);
    char *hdr = calloc(1, hlen + 1);
    assert_int_equal(fread(hdr, 1, hlen, fp), hlen);
    fclose(fp);
    assert_memory_equal(hdr, "{\"__metadata__\":{\"theta\":\"500000\"", 33);
    assert_non_null(strstr(hdr, "\"layout\":\"half\""));
    assert_non_null(strstr(hdr, "\"dims\":\"[1, 2]\""));
    assert_non_null(strstr(hdr, "\"f16\":{\"dtype\":\"F16\",\"shape\":[3,5],\"data_offsets\":[0,30]}"));
    assert_non_null(strstr(hdr, "\"scalar\":{\"dtype\":\"F64\",\"shape\":[]"));
    free(hdr);

    posenc_container *c = NULL;
    assert_int_equal(fmt_open(be, path, 0, &c, &err), POSENC_OK);
    assert_int_equal(c->n, n);
    assert_non_null(c->meta);
    assert_non_null(strstr(c->meta, "\"theta\":500000"));
    assert_non_null(strstr(c->meta, "\"layout\":\"half\""));
    assert_non_null(strstr(c->meta, "\"dims\":[1,2]"));
    for (size_t i = 0; i < n; i++) {
        int k = fmt_find(c, a[i].name);
        assert_true(k >= 0);
        const posenc_array_info *ri = &c->arrays[k];
        assert_int_equal(ri->dtype, a[i].dtype);
        assert_int_equal(ri->ndim, a[i].ndim);
        for (int d = 0; d < a[i].ndim; d++)
            assert_int_equal(ri->shape[d], a[i].shape[d]);
        void *back = NULL;
        assert_int_equal(fmt_read(c, (size_t)k, 4, &back, &err), POSENC_OK);
        assert_memory_equal(back, data[i], fmt_nelem(&a[i]) * posenc_dtype_size(a[i].dtype) + 0);
        free(back);
        free(data[i]);
    }
    fmt_close(c);
}

/* abort leaves nothing: neither the target nor a temporary file */
static void test_abort(void **state)
{
    (void)state;
    fmt_expect_abort_clean(be, tu_path("abort.safetensors"), NULL);
}

/* ---- malformed files ---- */

/* Write 8-byte length + header text + nbuf buffer bytes; the length field says hlen_override
 * when nonzero. */
static const char *craft(const char *name, const char *header, size_t nbuf, uint64_t hlen_override)
{
    const char *path = tu_path(name);
    size_t hl = strlen(header);
    uint64_t len = hlen_override ? hlen_override : hl;
    unsigned char *b = calloc(1, 8 + hl + nbuf + 1);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(len >> (8 * i));
    memcpy(b + 8, header, hl);
    tu_write_file(path, b, 8 + hl + nbuf);
    free(b);
    return path;
}

static void expect_bad(const char *path, posenc_status code, const char *substr)
{
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    posenc_status st = fmt_open(be, path, 0, &c, &err);
    if (st == POSENC_OK)
        fmt_close(c);
    if (st != code || !strstr(err.msg, substr))
        print_error("got %d '%s', want %d containing '%s'\n", st, err.msg, code, substr);
    assert_int_equal(st, code);
    assert_non_null(strstr(err.msg, substr));
}

#define E1 "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"

static void test_bad_headers(void **state)
{
    (void)state;
    /* sanity: a valid crafted file opens */
    {
        posenc_container *c = NULL;
        assert_int_equal(fmt_open(be, craft("ok.st", E1 "}  ", 8, 0), 0, &c, NULL), POSENC_OK);
        assert_int_equal(c->n, 1);
        fmt_close(c);
        /* serde_json (the reference reader) takes any JSON whitespace after the object */
        assert_int_equal(fmt_open(be, craft("nl.st", E1 "}\n\t", 8, 0), 0, &c, NULL), POSENC_OK);
        fmt_close(c);
    }
    tu_write_file(tu_path("short.st"), "\x05\0\0", 3);
    expect_bad(tu_path("short.st"), POSENC_EFORMAT, "truncated safetensors header length");
    expect_bad(craft("past.st", E1 "}", 8, 4096), POSENC_EFORMAT, "past the end of the file");
    expect_bad(craft("huge.st", E1 "}", 8, 200000000), POSENC_EFORMAT, "exceeds 100 MB");
    expect_bad(craft("arr.st", "[1, 2]", 0, 0), POSENC_EFORMAT, "does not start with '{'");
    expect_bad(craft("sp.st", " {}", 0, 0), POSENC_EFORMAT, "does not start with '{'");
    expect_bad(craft("json.st", "{\"a\": ", 0, 0), POSENC_EFORMAT, "not valid JSON");
    expect_bad(craft("trail.st", "{} x", 0, 0), POSENC_EFORMAT, "trailing bytes");
    expect_bad(craft("utf8.st", "{\"\xff\":1}", 0, 0), POSENC_EFORMAT, "not valid UTF-8");
    expect_bad(craft("dtype.st", "{\"a\":{\"dtype\":\"F12\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, 0),
               POSENC_EFORMAT, "unknown dtype 'F12'");
    expect_bad(craft("i16.st", "{\"a\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, 0),
               POSENC_EUNSUPPORTED, "dtype I16");
    expect_bad(craft("ovf.st",
                     "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
                     "\"data_offsets\":[0,8]}}",
                     8, 0),
               POSENC_EFORMAT, "overflows");
    expect_bad(craft("neg.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, 0),
               POSENC_EFORMAT, "invalid dimension");
    expect_bad(craft("frac.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8, 0),
               POSENC_EFORMAT, "invalid dimension");
    expect_bad(craft("size.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, 0),
               POSENC_EFORMAT, "do not span");
    expect_bad(craft("rev.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,0]}}", 8, 0),
               POSENC_EFORMAT, "do not span");
    expect_bad(craft("offs.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, 0),
               POSENC_EFORMAT, "invalid data_offsets");
    expect_bad(craft("hole.st",
                     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}",
                     16, 0),
               POSENC_EFORMAT, "hole");
    expect_bad(craft("start.st", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, 0),
               POSENC_EFORMAT, "hole");
    expect_bad(craft("overlap.st",
                     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                     12, 0),
               POSENC_EFORMAT, "overlap");
    expect_bad(craft("oob.st", E1 "}", 4, 0), POSENC_EFORMAT, "past the end of the 4-byte buffer");
    expect_bad(craft("cover.st", E1 "}", 12, 0), POSENC_EFORMAT, "incomplete buffer");
    expect_bad(craft("dup.st",
                     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                     "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                     8, 0),
               POSENC_EFORMAT, "duplicate tensor name 'a'");
    expect_bad(craft("md.st", "{\"__metadata__\":{\"k\":1}}", 0, 0), POSENC_EFORMAT,
               "is not a string");
    expect_bad(craft("md2.st", "{\"__metadata__\":[]}", 0, 0), POSENC_EFORMAT, "not an object");
    expect_bad(craft("ent.st", "{\"a\":[]}", 0, 0), POSENC_EFORMAT, "not an object");
    expect_bad(craft("big.st", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1e300],\"data_offsets\":[0,1]}}", 1, 0),
               POSENC_EFORMAT, "invalid dimension");
    expect_bad(tu_path("missing.st"), POSENC_EIO, "No such file");
}

/* A file shortened after it was opened reads as truncated, not as garbage. */
static void test_truncated_read(void **state)
{
    (void)state;
    const char *path = craft("trunc.st", E1 "}", 8, 0);
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    assert_int_equal(fmt_open(be, path, 0, &c, &err), POSENC_OK);
    assert_int_equal(truncate(path, (off_t)(8 + strlen(E1 "}") + 4)), 0);
    void *d = NULL;
    assert_int_equal(fmt_read(c, 0, 2, &d, &err), POSENC_EFORMAT);
    assert_non_null(strstr(err.msg, "truncated"));
    fmt_close(c);
}

/* Interop: a numpy+json writer (the reference writer's conventions: tensors sorted by dtype
 * alignment then name, metadata strings) read by posenc, and posenc's file read by a numpy+json
 * reader that checks every rule. */
static void test_python(void **state)
{
    (void)state;
    tu_python("numpy",
        "import json, struct, numpy as np\n"
        "ts = {'w.f32': np.arange(12, dtype='<f4').reshape(3, 4) / 8,\n"
        "      'w.f64': np.arange(6, dtype='<f8') * -1.25,\n"
        "      'idx': np.arange(5, dtype='<i8') - 2,\n"
        "      'h': (np.arange(6, dtype='<f2') / 4).reshape(2, 3),\n"
        "      'b': np.array([0x3f80, 0xc000, 0x0000], dtype='<u2'),\n"
        "      'u': np.arange(4, dtype='u1')}\n"
        "dt = {'w.f32': 'F32', 'w.f64': 'F64', 'idx': 'I64', 'h': 'F16', 'b': 'BF16',"
        " 'u': 'U8'}\n"
        "order = sorted(ts, key=lambda k: (-ts[k].dtype.itemsize, k))\n"
        "hdr = {'__metadata__': {'format': 'pt', 'theta': '10000.0'}}\n"
        "off = 0\n"
        "for k in order:\n"
        "    n = ts[k].nbytes\n"
        "    hdr[k] = {'dtype': dt[k], 'shape': list(ts[k].shape), 'data_offsets': [off, off + n]}\n"
        "    off += n\n"
        "h = json.dumps(hdr).encode()\n"
        "h += b' ' * (-len(h) % 8)\n"
        "with open(D + '/py.safetensors', 'wb') as f:\n"
        "    f.write(struct.pack('<Q', len(h)) + h)\n"
        "    for k in order: f.write(ts[k].tobytes())\n");
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    assert_int_equal(fmt_open(be, tu_path("py.safetensors"), 0, &c, &err), POSENC_OK);
    assert_int_equal(c->n, 6);
    assert_non_null(strstr(c->meta, "\"format\":\"pt\""));
    assert_non_null(strstr(c->meta, "\"theta\":10000"));
    void *d = NULL;
    int k = fmt_find(c, "w.f32");
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_F32);
    assert_int_equal(fmt_read(c, (size_t)k, 5, &d, &err), POSENC_OK);
    for (int i = 0; i < 12; i++)
        assert_true(((float *)d)[i] == (float)i / 8);
    free(d);
    k = fmt_find(c, "w.f64");
    assert_int_equal(fmt_read(c, (size_t)k, 100, &d, &err), POSENC_OK);
    for (int i = 0; i < 6; i++)
        assert_true(((double *)d)[i] == i * -1.25);
    free(d);
    k = fmt_find(c, "idx");
    assert_int_equal(fmt_read(c, (size_t)k, 2, &d, &err), POSENC_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(((int64_t *)d)[i], i - 2);
    free(d);
    k = fmt_find(c, "h");
    assert_int_equal(c->arrays[k].ndim, 2);
    assert_int_equal(fmt_read(c, (size_t)k, 4, &d, &err), POSENC_OK);
    for (int i = 0; i < 6; i++)
        assert_true(posenc_f16_to_f32(((uint16_t *)d)[i]) == i / 4.0f);
    free(d);
    k = fmt_find(c, "b");
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_BF16);
    assert_int_equal(fmt_read(c, (size_t)k, 4, &d, &err), POSENC_OK);
    assert_true(posenc_bf16_to_f32(((uint16_t *)d)[0]) == 1.0f);
    assert_true(posenc_bf16_to_f32(((uint16_t *)d)[1]) == -2.0f);
    free(d);
    fmt_close(c);

    /* posenc writes; the numpy reader checks the layout rules and the values */
    posenc_array_info a[] = {
        fmt_info("cos", POSENC_DT_F32, 2, (int64_t)3, (int64_t)4),
        fmt_info("inv_freq", POSENC_DT_F64, 1, (int64_t)4),
        fmt_info("pos", POSENC_DT_I32, 1, (int64_t)3),
        fmt_info("hb", POSENC_DT_BF16, 1, (int64_t)2),
    };
    float f[12];
    double g[4];
    int32_t p[3] = { -7, 0, 2147483647 };
    uint16_t hb[2] = { 0x3f80, 0xbfc0 }; /* 1.0, -1.5 */
    for (int i = 0; i < 12; i++)
        f[i] = (float)i / 3.0f;
    for (int i = 0; i < 4; i++)
        g[i] = 1.0 / (i + 3);
    const void *data[] = { f, g, p, hb };
    posenc_writer *w = fmt_writer(be, tu_path("c.safetensors"), 0, a, 4);
    fmt_writer_meta(w, "rope_theta", "10000");
    fmt_writer_meta(w, "style", "\"neox\"");
    fmt_writer_meta(w, "num_text", "\"123\""); /* plain 123 would read back as a number */
    fmt_writer_meta(w, "flag", "true");
    fmt_writer_meta(w, "word", "\"true story\"");
    assert_int_equal(fmt_write_all(w, a, 4, data, 7, &err), POSENC_OK);
    tu_python("numpy",
        "import json, struct, numpy as np\n"
        "b = open(D + '/c.safetensors', 'rb').read()\n"
        "n, = struct.unpack('<Q', b[:8])\n"
        "assert n % 8 == 0 and b[8:9] == b'{'\n"
        "h = json.loads(b[8:8 + n].decode('utf-8'))\n"
        "assert list(h)[0] == '__metadata__', list(h)\n"
        "assert h['__metadata__'] == {'rope_theta': '10000', 'style': 'neox', 'num_text': '\"123\"',\n"
        "                             'flag': 'true', 'word': 'true story'}, h['__metadata__']\n"
        "buf = b[8 + n:]\n"
        "npt = {'F32': '<f4', 'F64': '<f8', 'I32': '<i4', 'BF16': '<u2'}\n"
        "ends = sorted(v['data_offsets'] for k, v in h.items() if k != '__metadata__')\n"
        "assert ends[0][0] == 0 and ends[-1][1] == len(buf)\n"
        "assert all(a[1] == b[0] for a, b in zip(ends, ends[1:]))\n"
        "def t(k):\n"
        "    e = h[k]; s, e2 = e['data_offsets']\n"
        "    return np.frombuffer(buf[s:e2], npt[e['dtype']]).reshape(e['shape'])\n"
        "assert (t('cos') == (np.arange(12, dtype='f4') / np.float32(3)).reshape(3, 4)).all()\n"
        "assert (t('inv_freq') == 1.0 / (np.arange(4) + 3)).all()\n"
        "assert t('pos').tolist() == [-7, 0, 2147483647]\n"
        "bf = (t('hb').astype('<u4') << 16).view('<f4')\n"
        "assert bf.tolist() == [1.0, -1.5]\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_truncated_read),
        cmocka_unit_test(test_python),
    };
    return cmocka_run_group_tests_name("safetensors", tests, tu_setup, tu_teardown);
}
