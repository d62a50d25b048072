/* test_hdf5.c: the HDF5 backend: round trips of every dtype (contiguous and chunked gzip+shuffle),
 * reads in pieces that cut rows and planes, metadata attributes, files written by h5py (half,
 * big-endian, chunked/compressed, nested groups, opaque bf16, attributes) and posenc's files read
 * by h5py, and bad input (not HDF5, truncated, unsupported types). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <hdf5.h>

#include <cjson/cJSON.h>

#include "fmtutil.h"

/* Metadata of every JSON kind, written as typed HDF5 attributes (posenc-formats(5) HDF5). */
static const char *const typed_meta[][2] = {
    { "factor", "0.5" },          { "flag", "true" },
    { "dims", "[11, 11, 10]" },   { "mixed_nums", "[1, 2.5]" },
    { "notes", "[\"a\", \"b \\\"c\\\"\"]" }, { "none", "null" },
    { "num_text", "\"123\"" },   { "obj", "{\"a\":1}" },
    { "empty", "[]" },            { "big", "4503599627370496" },
};

static const pe_backend *be = &pe_backend_hdf5;

static void roundtrip(int compress)
{
    posenc_array_info a[] = {
        fmt_info("f16", POSENC_DT_F16, 2, (int64_t)3, (int64_t)5),
        fmt_info("bf16", POSENC_DT_BF16, 1, (int64_t)7),
        fmt_info("layer0/f32", POSENC_DT_F32, 3, (int64_t)4, (int64_t)5, (int64_t)6),
        fmt_info("/layer0/sub/f64", POSENC_DT_F64, 2, (int64_t)4, (int64_t)3),
        fmt_info("i32", POSENC_DT_I32, 1, (int64_t)9),
        fmt_info("i64", POSENC_DT_I64, 1, (int64_t)5),
        fmt_info("u8", POSENC_DT_U8, 2, (int64_t)3, (int64_t)3),
        fmt_info("scalar", POSENC_DT_F64, 0),
        fmt_info("empty", POSENC_DT_F32, 2, (int64_t)0, (int64_t)4),
        /* 1.2 MB: several 1 MiB-ish chunks when compressed */
        fmt_info("big", POSENC_DT_F32, 2, (int64_t)300, (int64_t)1000),
    };
    size_t n = sizeof a / sizeof a[0];
    void *data[sizeof a / sizeof a[0]];
    for (size_t i = 0; i < n; i++)
        data[i] = fmt_data(a[i].dtype, fmt_nelem(&a[i]), (unsigned)i + 11);
    const char *path = tu_path(compress ? "rtz.h5" : "rt.h5");
    posenc_writer *w = fmt_writer(be, path, compress, a, n);
    fmt_writer_meta(w, "theta", "500000");
    fmt_writer_meta(w, "layout", "\"half\"");
    fmt_writer_meta(w, "factors", "[1, 2.5]");
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(w, a, n, (const void *const *)data, 7777, &err), POSENC_OK);
    assert_false(tu_tmp_left());

    posenc_container *c = NULL;
    assert_int_equal(fmt_open(be, path, 0, &c, &err), POSENC_OK);
    assert_int_equal(c->n, n);
    assert_non_null(c->meta);
    assert_non_null(strstr(c->meta, "\"theta\":500000"));
    assert_non_null(strstr(c->meta, "\"layout\":\"half\""));
    assert_non_null(strstr(c->meta, "\"factors\":[1,2.5]"));
    static const uint64_t pieces[] = { 1, 7, 13, 1000000 };
    for (size_t i = 0; i < n; i++) {
        char want[2 * POSENC_NAME_MAX];
        snprintf(want, sizeof want, "/%.250s", a[i].name[0] == '/' ? a[i].name + 1 : a[i].name);
        int k = fmt_find(c, want);
        if (k < 0)
            print_error("no array '%s'\n", want);
        assert_int_equal(k, (int)i); /* listed in creation order */
        assert_int_equal(c->arrays[k].dtype, a[i].dtype);
        assert_int_equal(c->arrays[k].ndim, a[i].ndim);
        for (int d = 0; d < a[i].ndim; d++)
            assert_int_equal(c->arrays[k].shape[d], a[i].shape[d]);
        for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
            if (pieces[p] == 1 && fmt_nelem(&a[i]) > 1000)
                continue;
            void *back = NULL;
            assert_int_equal(fmt_read(c, (size_t)k, pieces[p], &back, &err), POSENC_OK);
            assert_memory_equal(back, data[i], fmt_nelem(&a[i]) * posenc_dtype_size(a[i].dtype));
            free(back);
        }
        free(data[i]);
    }
    fmt_close(c);
}

static void test_roundtrip(void **state)
{
    (void)state;
    roundtrip(0);
}

static void test_roundtrip_gzip(void **state)
{
    (void)state;
    roundtrip(1);
}

static void test_abort(void **state)
{
    (void)state;
    fmt_expect_abort_clean(be, tu_path("abort.h5"), NULL);
}

/* a dataset and a group of the same name cannot both exist: a clean error, no file */
static void test_name_clash(void **state)
{
    (void)state;
    posenc_array_info a[] = { fmt_info("a", POSENC_DT_F32, 1, (int64_t)2),
                              fmt_info("a/b", POSENC_DT_F32, 1, (int64_t)2) };
    const char *path = tu_path("clash.h5");
    posenc_writer *w = fmt_writer(be, path, 0, a, 2);
    float v[2] = { 1, 2 };
    const void *data[] = { v, v };
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(w, a, 2, data, 2, &err), POSENC_EIO);
    assert_non_null(strstr(err.msg, "cannot create dataset 'a/b'"));
    assert_false(tu_exists(path));
    assert_false(tu_tmp_left());
}

static void expect_bad(const char *path, int assume_bf16, posenc_status code, const char *substr)
{
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    posenc_status st = fmt_open(be, path, assume_bf16, &c, &err);
    if (st == POSENC_OK)
        fmt_close(c);
    if (st != code || !strstr(err.msg, substr))
        print_error("got %d '%s', want %d containing '%s'\n", st, err.msg, code, substr);
    assert_int_equal(st, code);
    assert_non_null(strstr(err.msg, substr));
}

static void test_bad(void **state)
{
    (void)state;
    tu_write_file(tu_path("text.h5"), "hello, this is not HDF5\n", 24);
    expect_bad(tu_path("text.h5"), 0, POSENC_EFORMAT, "not an HDF5 file");
    tu_write_file(tu_path("empty.h5"), "", 0);
    expect_bad(tu_path("empty.h5"), 0, POSENC_EFORMAT, "not an HDF5 file");
    expect_bad(tu_path("missing.h5"), 0, POSENC_EIO, "No such file");

    /* truncated: a valid file cut in half either fails to open or fails to read */
    posenc_array_info a = fmt_info("x", POSENC_DT_F64, 1, (int64_t)4096);
    double *v = fmt_data(POSENC_DT_F64, 4096, 3);
    const void *data[] = { v };
    posenc_writer *w = fmt_writer(be, tu_path("trunc.h5"), 0, &a, 1);
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(w, &a, 1, data, 4096, &err), POSENC_OK);
    free(v);
    assert_int_equal(truncate(tu_path("trunc.h5"), 20000), 0);
    posenc_container *c = NULL;
    posenc_status st = fmt_open(be, tu_path("trunc.h5"), 0, &c, &err);
    if (st == POSENC_OK) {
        void *d = NULL;
        st = fmt_read(c, 0, 4096, &d, &err);
        free(d);
        fmt_close(c);
    }
    assert_int_equal(st, POSENC_EFORMAT);
    assert_non_null(strstr(err.msg, "trunc.h5"));
}

/* Through the public API (io.c): a one-dataset file needs no path; a missing path is
 * ENOTFOUND naming it; a path without its leading '/' is found. */
static void test_public_api(void **state)
{
    (void)state;
    posenc_array_info a[] = { fmt_info("g/x", POSENC_DT_F64, 1, (int64_t)3) };
    double v[3] = { 1.5, -2, 1e300 };
    const void *data[] = { v };
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(fmt_writer(be, tu_path("one.h5"), 0, a, 1), a, 1, data, 3, &err),
                     POSENC_OK);
    posenc_array_info info;
    void *d = NULL;
    assert_int_equal(posenc_read_all(tu_path("one.h5"), NULL, POSENC_DT_F64, 1000, &info, &d, &err),
                     POSENC_OK);
    assert_string_equal(info.name, "/g/x");
    assert_memory_equal(d, v, sizeof v);
    free(d);
    char spec[600];
    snprintf(spec, sizeof spec, "%s:g/x", tu_path("one.h5"));
    assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F32, 1000, &info, &d, &err), POSENC_OK);
    assert_true(((float *)d)[1] == -2.0f);
    free(d);
    snprintf(spec, sizeof spec, "%s:/a/b", tu_path("one.h5"));
    assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F64, 1000, &info, &d, &err),
                     POSENC_ENOTFOUND);
    assert_non_null(strstr(err.msg, "'/a/b'"));
}

struct thread_read {
    posenc_container *c;
    size_t index;
    posenc_status st;
    posenc_error err;
};

static void *read_thread(void *arg)
{
    struct thread_read *t = arg;
    void *d = NULL;
    t->st = fmt_read(t->c, t->index, 1000, &d, &t->err);
    free(d);
    return NULL;
}

/* Files written by h5py. */
static void test_h5py_files(void **state)
{
    (void)state;
    tu_python("numpy, h5py",
        "import numpy as np, h5py\n"
        "with h5py.File(D + '/py.h5', 'w') as f:\n"
        "    f['half'] = (np.arange(12, dtype='f2') / 8).reshape(3, 4)\n"
        "    f['be/f4'] = np.arange(10, dtype='>f4') * 0.25\n"
        "    f['be/f8'] = np.arange(6, dtype='>f8').reshape(2, 3) - 2.5\n"
        "    f['be/i4'] = np.arange(5, dtype='>i4') - 1000\n"
        "    f['be/i8'] = np.arange(5, dtype='>i8') * -(2**40)\n"
        "    f['be/f2'] = np.arange(4, dtype='>f2') * 1.5\n"
        "    f['u1'] = np.arange(7, dtype='u1')\n"
        "    f.create_dataset('deep/er/z', data=np.arange(40000, dtype='<f4').reshape(200, 200),\n"
        "                     chunks=(7, 33), compression='gzip', compression_opts=9, shuffle=True)\n"
        "    f.create_dataset('fl', data=np.arange(5000, dtype='<f8'), fletcher32=True, chunks=(100,))\n"
        "    f['opaque'] = np.array([0x3f80, 0x4000], dtype='<u2').view('V2')\n"
        "    f['i16'] = np.arange(3, dtype='<i2')\n"
        "    f.create_dataset('lzf', data=np.arange(100, dtype='<f4'), compression='lzf')\n"
        "    f['strings'] = np.array([b'a', b'bc'])\n"
        "    f.attrs['name'] = 'llama'\n"
        "    f.attrs['json'] = '{\"a\": 1}'\n"
        "    f.attrs['theta'] = 500000.0\n"
        "    f.attrs['dim'] = np.int64(128)\n"
        "    f.attrs['vec'] = np.array([1.5, 2.5])\n"
        "    f.attrs['fixed'] = np.bytes_(b'ascii')\n"
        "with h5py.File(D + '/opaque.h5', 'w') as f:\n"
        "    f['b'] = np.array([0x3f80, 0xc040], dtype='<u2').view('V2')\n"
        "with h5py.File(D + '/i16.h5', 'w') as f:\n"
        "    f['x'] = np.arange(3, dtype='<i2')\n");
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    assert_int_equal(fmt_open(be, tu_path("py.h5"), 0, &c, &err), POSENC_OK);
    /* opaque, i16 and strings are not listed without --assume-bf16 */
    assert_int_equal(c->n, 10);
    assert_int_equal(fmt_find(c, "/opaque"), -1);
    assert_int_equal(fmt_find(c, "/i16"), -1);
    assert_non_null(c->meta);
    assert_non_null(strstr(c->meta, "\"name\":\"llama\""));
    assert_non_null(strstr(c->meta, "\"json\":{\"a\":1}"));
    assert_non_null(strstr(c->meta, "\"theta\":500000"));
    assert_non_null(strstr(c->meta, "\"dim\":128"));
    assert_non_null(strstr(c->meta, "\"vec\":[1.5,2.5]"));
    assert_non_null(strstr(c->meta, "\"fixed\":\"ascii\""));
    void *d = NULL;
    int k = fmt_find(c, "/half");
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_F16);
    assert_int_equal(fmt_read(c, (size_t)k, 5, &d, &err), POSENC_OK);
    for (int i = 0; i < 12; i++)
        assert_true(posenc_f16_to_f32(((uint16_t *)d)[i]) == i / 8.0f);
    free(d);
    k = fmt_find(c, "/be/f2");
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_F16);
    assert_int_equal(fmt_read(c, (size_t)k, 3, &d, &err), POSENC_OK);
    for (int i = 0; i < 4; i++)
        assert_true(posenc_f16_to_f32(((uint16_t *)d)[i]) == i * 1.5f);
    free(d);
    k = fmt_find(c, "/be/f4");
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_F32);
    assert_int_equal(fmt_read(c, (size_t)k, 3, &d, &err), POSENC_OK);
    for (int i = 0; i < 10; i++)
        assert_true(((float *)d)[i] == i * 0.25f);
    free(d);
    k = fmt_find(c, "/be/f8");
    assert_int_equal(c->arrays[k].ndim, 2);
    assert_int_equal(fmt_read(c, (size_t)k, 4, &d, &err), POSENC_OK);
    for (int i = 0; i < 6; i++)
        assert_true(((double *)d)[i] == i - 2.5);
    free(d);
    k = fmt_find(c, "/be/i4");
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_I32);
    assert_int_equal(fmt_read(c, (size_t)k, 2, &d, &err), POSENC_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(((int32_t *)d)[i], i - 1000);
    free(d);
    k = fmt_find(c, "/be/i8");
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_I64);
    assert_int_equal(fmt_read(c, (size_t)k, 2, &d, &err), POSENC_OK);
    for (int i = 0; i < 5; i++)
        assert_true(((int64_t *)d)[i] == (int64_t)i * -(1LL << 40));
    free(d);
    k = fmt_find(c, "/u1");
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_U8);
    assert_int_equal(fmt_read(c, (size_t)k, 2, &d, &err), POSENC_OK);
    for (int i = 0; i < 7; i++)
        assert_int_equal(((uint8_t *)d)[i], i);
    free(d);
    k = fmt_find(c, "/deep/er/z");
    assert_int_equal(c->arrays[k].shape[0], 200);
    static const uint64_t pieces[] = { 13, 199, 200, 4567, 40000 };
    for (size_t p = 0; p < 5; p++) {
        assert_int_equal(fmt_read(c, (size_t)k, pieces[p], &d, &err), POSENC_OK);
        for (int i = 0; i < 40000; i++)
            if (((float *)d)[i] != (float)i)
                fail_msg("z[%d] = %g", i, ((float *)d)[i]);
        free(d);
    }
    k = fmt_find(c, "/fl");
    assert_int_equal(fmt_read(c, (size_t)k, 333, &d, &err), POSENC_OK);
    for (int i = 0; i < 5000; i++)
        assert_true(((double *)d)[i] == i);
    free(d);

    /* lzf is an h5py-only filter: reading it fails with one message and HDF5 prints nothing,
     * also on a thread other than the one that opened the file (apply reads on its own) */
    k = fmt_find(c, "/lzf");
    assert_true(k >= 0);
    struct thread_read tr = { c, (size_t)k, POSENC_OK, { 0 } };
    fflush(stderr);
    int saved = dup(2);
    FILE *errf = fopen(tu_path("stderr.txt"), "w+");
    assert_non_null(errf);
    dup2(fileno(errf), 2);
    pthread_t tid;
    assert_int_equal(pthread_create(&tid, NULL, read_thread, &tr), 0);
    pthread_join(tid, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fseek(errf, 0, SEEK_END);
    long printed = ftell(errf);
    fclose(errf);
    assert_int_equal(printed, 0);
    if (tr.st != POSENC_OK) {
        assert_int_equal(tr.st, POSENC_EFORMAT);
        assert_non_null(strstr(tr.err.msg, "cannot read dataset '/lzf' ("));
        assert_non_null(strstr(tr.err.msg, "lzf' is not registered)"));
    }
    fmt_close(c);

    /* the opaque dataset is bf16 only when asked */
    assert_int_equal(fmt_open(be, tu_path("py.h5"), 1, &c, &err), POSENC_OK);
    k = fmt_find(c, "/opaque");
    assert_true(k >= 0);
    assert_int_equal(c->arrays[k].dtype, POSENC_DT_BF16);
    assert_int_equal(fmt_read(c, (size_t)k, 2, &d, &err), POSENC_OK);
    assert_true(posenc_bf16_to_f32(((uint16_t *)d)[0]) == 1.0f);
    assert_true(posenc_bf16_to_f32(((uint16_t *)d)[1]) == 2.0f);
    free(d);
    fmt_close(c);
    expect_bad(tu_path("opaque.h5"), 0, POSENC_EUNSUPPORTED, "--assume-bf16");
    expect_bad(tu_path("i16.h5"), 0, POSENC_EUNSUPPORTED, "signed 16-bit integers");
}

/* posenc's files read by h5py: values, the half type, filters, attributes. */
static void test_h5py_reads(void **state)
{
    (void)state;
    posenc_array_info a[] = {
        fmt_info("cos", POSENC_DT_F32, 2, (int64_t)600, (int64_t)512),
        fmt_info("g/inv_freq", POSENC_DT_F64, 1, (int64_t)4),
        fmt_info("h", POSENC_DT_F16, 1, (int64_t)3),
        fmt_info("b", POSENC_DT_BF16, 1, (int64_t)3),
        fmt_info("pos", POSENC_DT_I64, 1, (int64_t)3),
    };
    float *f = malloc(600 * 512 * sizeof *f);
    for (int i = 0; i < 600 * 512; i++)
        f[i] = (float)i / 7.0f;
    double g[4] = { 1, 0.5, 0.25, 0.125 };
    uint16_t h[3] = { 0x3c00, 0xc000, 0x3800 };  /* 1, -2, 0.5 */
    uint16_t bb[3] = { 0x3f80, 0xc000, 0x3f00 }; /* 1, -2, 0.5 */
    int64_t pos[3] = { -1, 0, 1LL << 50 };
    const void *data[] = { f, g, h, bb, pos };
    for (int z = 0; z < 2; z++) {
        posenc_writer *w = fmt_writer(be, tu_path(z ? "cz.h5" : "c.h5"), z, a, 5);
        fmt_writer_meta(w, "rope_theta", "10000");
        fmt_writer_meta(w, "style", "\"neox\"");
        for (size_t k = 0; k < sizeof typed_meta / sizeof *typed_meta; k++)
            fmt_writer_meta(w, typed_meta[k][0], typed_meta[k][1]);
        posenc_error err = { 0 };
        assert_int_equal(fmt_write_all(w, a, 5, data, 100003, &err), POSENC_OK);
    }
    free(f);
    tu_python("numpy, h5py",
        "import numpy as np, h5py\n"
        "for name, z in (('c.h5', False), ('cz.h5', True)):\n"
        "    with h5py.File(D + '/' + name, 'r') as f:\n"
        "        c = f['cos']\n"
        "        assert c.dtype == np.dtype('<f4') and c.shape == (600, 512)\n"
        "        assert (c[...] == (np.arange(600 * 512, dtype='f4') / np.float32(7)).reshape(600, 512)).all()\n"
        "        if z:\n"
        "            assert c.compression == 'gzip' and c.compression_opts == 4 and c.shuffle, c\n"
        "            assert c.chunks[1] == 512 and c.chunks[0] * 512 * 4 <= 1 << 20, c.chunks\n"
        "        else:\n"
        "            assert c.chunks is None and c.compression is None\n"
        "        assert f['g/inv_freq'][...].tolist() == [1, 0.5, 0.25, 0.125]\n"
        "        assert f['h'].dtype == np.dtype('<f2'), f['h'].dtype\n"
        "        assert f['h'][...].tolist() == [1, -2, 0.5]\n"
        "        assert f['pos'][...].tolist() == [-1, 0, 2**50]\n"
        "        b = f['b']\n"
        "        ft = b.id.get_type()\n"
        "        assert ft.get_size() == 2 and ft.get_fields() == (15, 7, 8, 0, 7) and ft.get_ebias() == 127\n"
        "        assert b.dtype == np.dtype('f4') and b[...].tolist() == [1, -2, 0.5], b[...]  # exact\n"
        "        a = f.attrs\n"
        "        assert a['rope_theta'] == 10000 and a['rope_theta'].dtype == np.int64, dict(a)\n"
        "        assert a['style'] == 'neox' and a['factor'] == 0.5 and a['factor'].dtype == np.float64\n"
        "        assert a['flag'].dtype == np.bool_ and bool(a['flag']) is True, repr(a['flag'])\n"
        "        assert a['dims'].dtype == np.int64 and a['dims'].tolist() == [11, 11, 10]\n"
        "        assert a['mixed_nums'].dtype == np.float64 and a['mixed_nums'].tolist() == [1, 2.5]\n"
        "        assert list(a['notes']) == ['a', 'b \"c\"'], repr(a['notes'])\n"
        "        assert isinstance(a['none'], h5py.Empty), repr(a['none'])\n"
        "        assert a['num_text'] == '\"123\"' and a['obj'] == '{\"a\":1}' and a['empty'] == '[]'\n"
        "        assert a['big'] == 2**52, a['big']\n");
    /* and posenc reads every value back as the JSON value it was given */
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    assert_int_equal(fmt_open(be, tu_path("c.h5"), 0, &c, &err), POSENC_OK);
    cJSON *m = cJSON_Parse(c->meta);
    assert_non_null(m);
    for (size_t k = 0; k < sizeof typed_meta / sizeof *typed_meta; k++) {
        cJSON *want = cJSON_Parse(typed_meta[k][1]);
        const cJSON *got = cJSON_GetObjectItemCaseSensitive(m, typed_meta[k][0]);
        if (!cJSON_Compare(want, got, 1))
            fail_msg("metadata '%s': wrote %s, read %s", typed_meta[k][0], typed_meta[k][1],
                     got ? cJSON_PrintUnformatted(got) : "nothing");
        cJSON_Delete(want);
    }
    cJSON_Delete(m);
    fmt_close(c);
}

/* Declared sizes against the file's size: a 1,400-byte file declaring 2^40 unwritten elements,
 * a chunked one with one chunk written, a contiguous dataset past a (patched) end of file, an
 * uncompressed chunk stored short, compact data shorter than the extent and chunks larger than
 * a fixed extent (the last three read past their buffers by libhdf5) are refused with one line when the file is opened; small unwritten
 * datasets, zeros compressed by gzip and compact data are read; external storage is not
 * listed. */
static void test_declared_sizes(void **state)
{
    (void)state;
    tu_python("numpy, h5py",
        "import numpy as np, h5py, os, struct\n"
        "with h5py.File(D + '/huge.h5', 'w') as f:\n"
        "    f.create_dataset('x', shape=(2**40,), dtype='f8')\n"
        "assert os.path.getsize(D + '/huge.h5') < 4096\n"
        "with h5py.File(D + '/hugec.h5', 'w') as f:\n"
        "    d = f.create_dataset('x', shape=(2**40,), dtype='f8', chunks=(1024,))\n"
        "    d[:1024] = 1\n"
        "with h5py.File(D + '/cont.h5', 'w') as f:\n"
        "    f['x'] = np.arange(131072, dtype='<f8')\n"
        "    off = f['x'].id.get_offset()\n"
        "b = bytearray(open(D + '/cont.h5', 'rb').read()[:off + 4096])\n"
        "assert b[8] == 0  # superblock version 0: the end-of-file address at byte 40\n"
        "struct.pack_into('<Q', b, 40, len(b))\n"
        "open(D + '/cut.h5', 'wb').write(b)\n"
        "with h5py.File(D + '/fine.h5', 'w') as f:\n"
        "    f.create_dataset('unwritten', shape=(1000,), dtype='f4', fillvalue=2.5)\n"
        "    d = f.create_dataset('partial', shape=(100000,), dtype='f4', chunks=(1000,))\n"
        "    d[:1000] = 1\n"
        "    f.create_dataset('zeros', data=np.zeros(4 << 20, 'f4'), chunks=(1 << 18,),\n"
        "                     compression='gzip', shuffle=True)\n"
        "    f.create_dataset('ext', shape=(10,), dtype='f8', external=[(D + '/cont.h5', 0, 80)])\n"
        "    sp = h5py.h5s.create_simple((50,))\n"
        "    pl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)\n"
        "    pl.set_layout(h5py.h5d.COMPACT)\n"
        "    c = h5py.h5d.create(f.id, b'compact', h5py.h5t.IEEE_F64LE, sp, pl)\n"
        "    c.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(50.0))\n"
        "with h5py.File(D + '/ext.h5', 'w') as f:\n"
        "    f.create_dataset('x', shape=(10,), dtype='f8', external=[('/etc/passwd', 0, 80)])\n"
        "# an uncompressed chunk stored short (libhdf5 copies a whole chunk out of it)\n"
        "with h5py.File(D + '/short.h5', 'w') as f:\n"
        "    d = f.create_dataset('x', shape=(64,), dtype='<f4', chunks=(16,))\n"
        "    d[16:] = 1\n"
        "    d.id.write_direct_chunk((0,), b'short')\n"
        "# compact data shorter than the extent: the dataspace's dims patched from 10 to 1000\n"
        "with h5py.File(D + '/compact.h5', 'w') as f:\n"
        "    sp = h5py.h5s.create_simple((10,))\n"
        "    pl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)\n"
        "    pl.set_layout(h5py.h5d.COMPACT)\n"
        "    c = h5py.h5d.create(f.id, b'x', h5py.h5t.IEEE_F64LE, sp, pl)\n"
        "    c.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(10.0))\n"
        "b = bytearray(open(D + '/compact.h5', 'rb').read())\n"
        "ten = struct.pack('<Q', 10)\n"
        "i = b.index(ten + ten)  # current and maximum dims\n"
        "b[i:i + 8] = struct.pack('<Q', 1000)\n"
        "open(D + '/compact.h5', 'wb').write(b)\n"
        "with h5py.File(D + '/compact.h5', 'r') as f:\n"
        "    assert f['x'].shape == (1000,)\n"
        "# a chunk larger than the fixed extent: the layout's chunk dims patched (4, 16) -> (4, 1040)\n"
        "with h5py.File(D + '/bigchunk.h5', 'w') as f:\n"
        "    f.create_dataset('x', data=np.arange(64, dtype='<f4').reshape(4, 16), chunks=(4, 16),\n"
        "                     compression='gzip')\n"
        "b = bytearray(open(D + '/bigchunk.h5', 'rb').read())\n"
        "dims = struct.pack('<III', 4, 16, 4)\n"
        "assert b.count(dims) == 1\n"
        "i = b.index(dims)\n"
        "b[i:i + 12] = struct.pack('<III', 4, 1040, 4)\n"
        "open(D + '/bigchunk.h5', 'wb').write(b)\n"
        "with h5py.File(D + '/bigchunk.h5', 'r') as f:\n"
        "    assert f['x'].chunks == (4, 1040)\n");
    char want[800];
    snprintf(want, sizeof want, "'%s': dataset '/x' declares 8796093022208 bytes, but the file ",
             tu_path("huge.h5"));
    expect_bad(tu_path("huge.h5"), 0, POSENC_EFORMAT, want);
    expect_bad(tu_path("huge.h5"), 0, POSENC_EFORMAT, "holds at most 0 of them");
    expect_bad(tu_path("hugec.h5"), 0, POSENC_EFORMAT, "holds at most 8192 of them");
    snprintf(want, sizeof want, "'%s': dataset '/x' needs 1048576 bytes at offset 2048, past the "
             "end of the file (6144 bytes)", tu_path("cut.h5"));
    expect_bad(tu_path("cut.h5"), 0, POSENC_EFORMAT, want);
    expect_bad(tu_path("ext.h5"), 0, POSENC_EUNSUPPORTED, "dataset '/x' has its data in external "
                                                           "files");
    expect_bad(tu_path("short.h5"), 0, POSENC_EFORMAT,
               "dataset '/x' stores 197 bytes in 4 uncompressed chunks of 64 bytes");
    expect_bad(tu_path("compact.h5"), 0, POSENC_EFORMAT,
               "dataset '/x' declares 8000 bytes but its compact storage holds 80");
    expect_bad(tu_path("bigchunk.h5"), 0, POSENC_EFORMAT,
               "dataset '/x' has chunks that do not fit its shape");

    posenc_container *c = NULL;
    posenc_error err = { 0 };
    assert_int_equal(fmt_open(be, tu_path("fine.h5"), 0, &c, &err), POSENC_OK);
    assert_int_equal(c->n, 4); /* not /ext */
    assert_int_equal(fmt_find(c, "/ext"), -1);
    void *d = NULL;
    int k = fmt_find(c, "/unwritten");
    assert_int_equal(fmt_read(c, (size_t)k, 300, &d, &err), POSENC_OK);
    assert_true(((float *)d)[999] == 2.5f);
    free(d);
    k = fmt_find(c, "/partial");
    assert_int_equal(fmt_read(c, (size_t)k, 30000, &d, &err), POSENC_OK);
    assert_true(((float *)d)[999] == 1 && ((float *)d)[1000] == 0);
    free(d);
    k = fmt_find(c, "/zeros");
    assert_int_equal(fmt_read(c, (size_t)k, 1 << 20, &d, &err), POSENC_OK);
    assert_true(((float *)d)[(4 << 20) - 1] == 0);
    free(d);
    k = fmt_find(c, "/compact");
    assert_int_equal(fmt_read(c, (size_t)k, 7, &d, &err), POSENC_OK);
    assert_true(((double *)d)[49] == 49);
    free(d);
    fmt_close(c);
}

/* Every write failure, at every point of the file: a file size limit (RLIMIT_FSIZE, the way a
 * full disk fails a write) cut at each KiB of the output. Each attempt fails with one line that
 * names the file and the errno text, leaves no temporary, and closes every HDF5 id; the library
 * still writes a good file afterwards, and this process exits cleanly (libhdf5 1.10 used to
 * crash in its atexit handler after a failed flush). */
static void write_failures(int compress)
{
    posenc_array_info a[] = {
        fmt_info("cos", POSENC_DT_F32, 2, (int64_t)64, (int64_t)128),
        fmt_info("layer/sin", POSENC_DT_F32, 2, (int64_t)64, (int64_t)128),
        fmt_info("inv_freq", POSENC_DT_F64, 1, (int64_t)64),
        fmt_info("h", POSENC_DT_F16, 1, (int64_t)300),
    };
    size_t n = sizeof a / sizeof a[0];
    void *data[sizeof a / sizeof a[0]];
    for (size_t i = 0; i < n; i++)
        data[i] = fmt_data(a[i].dtype, fmt_nelem(&a[i]), (unsigned)i + 3);
    const char *path = tu_path(compress ? "limitz.h5" : "limit.h5");
    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
    int failed = 0, passed = 0;
    for (rlim_t limit = 0; limit < (200u << 10) && passed < 2; limit += 1024) {
        posenc_writer *w = fmt_writer(be, path, compress, a, n);
        for (int k = 0; k < 20; k++) {
            char key[32], val[64];
            snprintf(key, sizeof key, "key%d", k);
            snprintf(val, sizeof val, "\"value number %d of the metadata\"", k);
            fmt_writer_meta(w, key, val);
        }
        struct rlimit rl = { limit < saved.rlim_max ? limit : saved.rlim_max, saved.rlim_max };
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
        posenc_error err = { 0 };
        posenc_status st = fmt_write_all(w, a, n, (const void *const *)data, 1000, &err);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
        if (st == POSENC_OK) {
            passed++;
        } else {
            failed++;
            char want[600];
            snprintf(want, sizeof want, "cannot write '%s': %s", path, strerror(EFBIG));
            if (st != POSENC_EIO || strcmp(err.msg, want) != 0)
                fail_msg("limit %lu: status %d, '%s'", (unsigned long)limit, st, err.msg);
            assert_false(tu_exists(path));
        }
        assert_false(tu_tmp_left());
        assert_int_equal(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
        unlink(path);
    }
    signal(SIGXFSZ, old);
    assert_true(failed > 20); /* every KiB up to the file's size */
    assert_true(passed > 0);
    /* the library still works: write and read back */
    posenc_writer *w = fmt_writer(be, path, compress, a, n);
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(w, a, n, (const void *const *)data, 777, &err), POSENC_OK);
    posenc_container *c = NULL;
    assert_int_equal(fmt_open(be, path, 0, &c, &err), POSENC_OK);
    assert_int_equal(c->n, n);
    for (size_t i = 0; i < n; i++) {
        void *back = NULL;
        assert_int_equal(fmt_read(c, i, 100, &back, &err), POSENC_OK);
        assert_memory_equal(back, data[i], fmt_nelem(&a[i]) * posenc_dtype_size(a[i].dtype));
        free(back);
        free(data[i]);
    }
    fmt_close(c);
    assert_int_equal(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
}

static void test_write_failures(void **state)
{
    (void)state;
    write_failures(0);
}

static void test_write_failures_gzip(void **state)
{
    (void)state;
    write_failures(1);
}

/* HDF5 cannot be written to a pipe, a device, a directory or standard output: refused before
 * anything is written. A symlink to a regular file is written through and stays a link. */
static void expect_refused(const char *path, const char *substr)
{
    posenc_array_info a = fmt_info("x", POSENC_DT_F32, 1, (int64_t)4);
    posenc_write_opts o = { .format = be->format };
    posenc_writer *w = NULL;
    float v[4] = { 1, 2, 3, 4 };
    const void *data[] = { v };
    posenc_error err = { 0 };
    /* refused when the writer opens (io.c) or when the backend starts (hdf5.c) */
    posenc_status st = posenc_writer_open(path, &o, &w, &err);
    if (st == POSENC_OK && (st = posenc_writer_declare(w, &a, &err)) != POSENC_OK)
        posenc_writer_abort(w);
    else if (st == POSENC_OK)
        st = fmt_write_all(w, &a, 1, data, 4, &err);
    if (st != POSENC_EINVAL || !strstr(err.msg, substr))
        fail_msg("'%s': status %d, '%s' (want '%s')", path, st, err.msg, substr);
    assert_null(strchr(err.msg, '\n'));
    assert_false(tu_tmp_left());
    assert_int_equal(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
}

static void test_unseekable_targets(void **state)
{
    (void)state;
    char want[600];
    const char *fifo = tu_path("fifo.h5");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(want, sizeof want, "'%s': HDF5 output needs a seekable regular file, not a pipe",
             fifo);
    expect_refused(fifo, want);
    expect_refused("/dev/null", "'/dev/null': HDF5 output needs a seekable regular file, not a "
                                "character device");
    expect_refused(tu_dir, "HDF5 output needs a seekable regular file, not a directory");
    expect_refused("-", "standard output takes one array as NPY, not hdf5");
    unlink(fifo);

    const char *real = tu_path("real.h5"), *link = tu_path("link.h5");
    tu_write_file(real, "old", 3);
    assert_int_equal(symlink("real.h5", link), 0);
    posenc_array_info a = fmt_info("x", POSENC_DT_F32, 1, (int64_t)4);
    float v[4] = { 1, 2, 3, 4 };
    const void *data[] = { v };
    posenc_error err = { 0 };
    assert_int_equal(fmt_write_all(fmt_writer(be, link, 0, &a, 1), &a, 1, data, 4, &err), POSENC_OK);
    struct stat sb;
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    posenc_container *c = NULL;
    assert_int_equal(fmt_open(be, real, 0, &c, &err), POSENC_OK);
    assert_int_equal(c->n, 1);
    fmt_close(c);
    assert_false(tu_tmp_left());
    unlink(link);
    unlink(real);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_roundtrip_gzip),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_name_clash),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_public_api),
        cmocka_unit_test(test_h5py_files),
        cmocka_unit_test(test_h5py_reads),
        cmocka_unit_test(test_declared_sizes),
        cmocka_unit_test(test_write_failures),
        cmocka_unit_test(test_write_failures_gzip),
        cmocka_unit_test(test_unseekable_targets),
    };
    return cmocka_run_group_tests_name("hdf5", tests, tu_setup, tu_teardown);
}
