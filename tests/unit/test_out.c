/* test_out.c: the output pipeline of formats/io/out.c: the size plan and limit, a committed file
 * that holds every row the source filled (converted once to the output dtype) and the
 * metadata, one array out of several, a failing source or metadata step that leaves no file
 * and no temporary, the stages open/commit/abort of a caller that writes its own values
 * (apply) with the one size-limit message, convert's container source and the learned table's
 * row readers; the early write-out of a streamed temporary, and outputs larger than its step
 * written whole in every format that uses it. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "posenc/bias.h"
#include "posenc/io.h"
#include "formats/io/backend.h"
#include "formats/io/out.h"
#include "formats/engines/weights.h"

static posenc_sinusoidal *sin16;

static int setup(void **state)
{
    if (posenc_sinusoidal_new(POSENC_SIN_VASWANI, 16, -1, &sin16, NULL) != POSENC_OK)
        return -1;
    return tu_setup(state);
}

static int teardown(void **state)
{
    posenc_sinusoidal_free(sin16);
    return tu_teardown(state);
}

/* Write arrays through the public writer: the fixture files of these tests. */
static void write_fixture(const char *path, posenc_format f, size_t n,
                          const posenc_array_info *info, const void *const *data)
{
    posenc_writer *w = NULL;
    posenc_write_opts wo = { f, 0 };
    assert_int_equal(posenc_writer_open(path, &wo, &w, NULL), POSENC_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(posenc_writer_declare(w, &info[i], NULL), POSENC_OK);
    for (size_t i = 0; i < n; i++) {
        uint64_t ne = 0;
        assert_int_equal(posenc_shape_size(info[i].ndim, info[i].shape, info[i].dtype, &ne,
                                           NULL, NULL), POSENC_OK);
        assert_int_equal(posenc_writer_write(w, data[i], ne, NULL), POSENC_OK);
    }
    assert_int_equal(posenc_writer_commit(w, NULL), POSENC_OK);
}

static pe_table sinusoidal(int64_t rows, posenc_dtype dt)
{
    pe_table t;
    pe_table_pos range = { NULL, NULL };
    assert_int_equal(pe_table_sinusoidal(&t, sin16, 16, rows, range, dt, NULL), POSENC_OK);
    return t;
}

static posenc_status meta_one(void *ctx, posenc_writer *w, posenc_error *err)
{
    (void)ctx;
    return posenc_writer_meta(w, "encoding", "\"sinusoidal\"", err);
}

static void test_plan_limit(void **state)
{
    (void)state;
    pe_table t = sinusoidal(1000, POSENC_DT_F64);
    pe_out o = { tu_path("big.npz"), { POSENC_FMT_NPZ, 0 }, &t, NULL, 100000, 0, 0, 0, 0, 0 };
    assert_int_equal(pe_out_plan(&o, NULL), POSENC_OK);
    assert_int_equal(o.bytes, 1000 * 16 * 8);
    assert_int_equal(o.values, 1000 * 16);
    assert_int_equal(o.nwant, 1);
    assert_int_equal(o.over_limit, 1);
    /* the run refuses what the plan found too large, and writes nothing */
    posenc_error err = { 0 };
    assert_int_equal(pe_out_run(&o, meta_one, NULL, &err), POSENC_ERANGE);
    assert_non_null(strstr(err.msg, "125.0 KiB"));
    assert_false(tu_exists(tu_path("big.npz")));
    o.force = 1;
    assert_int_equal(pe_out_plan(&o, NULL), POSENC_OK);
    assert_int_equal(o.over_limit, 0);
    o.force = 0;
    o.size_limit = 1000 * 16 * 8; /* at the limit is within it */
    assert_int_equal(pe_out_plan(&o, NULL), POSENC_OK);
    assert_int_equal(o.over_limit, 0);
    pe_table_free(&t);

    /* shapes whose bytes overflow are refused by the plan */
    pe_table h;
    assert_int_equal(pe_table_init(&h, 2, NULL), POSENC_OK);
    const int64_t huge[2] = { (int64_t)1 << 40, (int64_t)1 << 30 };
    pe_table_add(&h, "a", POSENC_DT_F64, POSENC_DT_F64, 2, huge, huge[1]);
    pe_out oh = { tu_path("h.npz"), { POSENC_FMT_NPZ, 0 }, &h, NULL, 0, 1, 0, 0, 0, 0 };
    assert_int_equal(pe_out_plan(&oh, NULL), POSENC_ERANGE);
    pe_table_free(&h);

    char hs[32];
    pe_out_human_size(12, hs, sizeof hs);
    assert_string_equal(hs, "12 bytes");
    pe_out_human_size((uint64_t)6 << 30, hs, sizeof hs);
    assert_string_equal(hs, "6.0 GiB");
}

static void test_commit(void **state)
{
    (void)state;
    /* 20000 rows: several chunks through the writer thread, converted to f32 */
    pe_table t = sinusoidal(20000, POSENC_DT_F32);
    assert_true(t.pure);
    const char *path = tu_path("pe.npz");
    pe_out o = { path, { POSENC_FMT_NPZ, 0 }, &t, NULL, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(pe_out_plan(&o, NULL), POSENC_OK);
    posenc_error err = { 0 };
    assert_int_equal(pe_out_run(&o, meta_one, NULL, &err), POSENC_OK);
    assert_false(tu_tmp_left());

    posenc_array_info info;
    void *data = NULL;
    char spec[512];
    snprintf(spec, sizeof spec, "%s:pe", path);
    assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F32, 1 << 24, &info, &data, NULL),
                     POSENC_OK);
    assert_int_equal(info.ndim, 2);
    assert_int_equal(info.shape[0], 20000);
    assert_int_equal(info.shape[1], 16);
    const float *f = data;
    double row[16];
    static const int64_t check[] = { 0, 1, 4095, 4096, 12345, 19999 };
    for (size_t k = 0; k < sizeof check / sizeof check[0]; k++) {
        posenc_sinusoidal_fill(sin16, check[k], row);
        for (int c = 0; c < 16; c++)
            assert_true(f[check[k] * 16 + c] == (float)row[c]);
    }
    free(data);
    posenc_container *ct = NULL;
    assert_int_equal(posenc_container_open(path, NULL, &ct, NULL), POSENC_OK);
    assert_non_null(strstr(posenc_container_meta(ct), "\"encoding\""));
    posenc_container_close(ct);
    pe_table_free(&t);
}

static void test_want_one(void **state)
{
    (void)state;
    double slopes[4] = { 0.5, 0.25, 0.125, 0.0625 };
    pe_table t;
    pe_table_pos range = { NULL, NULL };
    assert_int_equal(pe_table_alibi(&t, POSENC_ALIBI_REFERENCE, POSENC_ALIBI_KEYINDEX, slopes, 4,
                                    8, 8, 0, range, POSENC_DT_F64, NULL), POSENC_OK);
    int want[2] = { 1, 0 };
    const char *path = tu_path("slopes.npy");
    pe_out o = { path, { POSENC_FMT_NPY, 0 }, &t, want, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(pe_out_plan(&o, NULL), POSENC_OK);
    assert_int_equal(o.nwant, 1);
    assert_int_equal(o.bytes, 32);
    assert_int_equal(pe_out_run(&o, NULL, NULL, NULL), POSENC_OK);
    posenc_array_info info;
    void *data = NULL;
    assert_int_equal(posenc_read_all(path, NULL, POSENC_DT_F64, 1024, &info, &data, NULL),
                     POSENC_OK);
    assert_int_equal(info.shape[0], 4);
    assert_memory_equal(data, slopes, sizeof slopes);
    free(data);
    pe_table_free(&t);
}

/* A source whose fill fails at row 5000 (after chunks have been written). */
static posenc_status failing_fill(pe_table *t, int which, int64_t row0, int64_t n, void *buf,
                                  posenc_error *err)
{
    (void)t;
    (void)which;
    if (row0 + n > 5000)
        return posenc_seterr(err, POSENC_EIO, "disk on fire");
    memset(buf, 0, (size_t)n * 8 * sizeof(double));
    return POSENC_OK;
}

static posenc_status meta_fails(void *ctx, posenc_writer *w, posenc_error *err)
{
    (void)ctx;
    (void)w;
    return posenc_seterr(err, POSENC_EINVAL, "bad metadata");
}

static void test_failure_leaves_nothing(void **state)
{
    (void)state;
    static const posenc_format fmts[] = { POSENC_FMT_NPZ, POSENC_FMT_HDF5,
                                          POSENC_FMT_SAFETENSORS, POSENC_FMT_DIR };
    static const char *names[] = { "f.npz", "f.h5", "f.safetensors", "fdir" };
    for (int pure = 0; pure < 2; pure++)
        for (size_t i = 0; i < 4; i++) {
            pe_table t;
            assert_int_equal(pe_table_init(&t, 1, NULL), POSENC_OK);
            const int64_t shape[2] = { 100000, 8 };
            pe_table_add(&t, "x", POSENC_DT_F32, POSENC_DT_F64, 2, shape, 8);
            t.fill = failing_fill;
            t.pure = pure;
            t.chunk_rows = 1000;
            const char *path = tu_path(names[i]);
            pe_out o = { path, { fmts[i], 0 }, &t, NULL, 0, 0, 0, 0, 0, 0 };
            posenc_error err = { 0 };
            assert_int_equal(pe_out_plan(&o, NULL), POSENC_OK);
            assert_int_equal(pe_out_run(&o, NULL, NULL, &err), POSENC_EIO);
            assert_string_equal(err.msg, "disk on fire");
            assert_false(tu_exists(path));
            assert_false(tu_tmp_left());
            /* and when the metadata step fails */
            assert_int_equal(pe_out_run(&o, meta_fails, NULL, &err), POSENC_EINVAL);
            assert_false(tu_exists(path));
            assert_false(tu_tmp_left());
            pe_table_free(&t);
        }
}

/* convert's source: two arrays of an NPZ, floats widened to f64, the int array kept */
static void test_container_source(void **state)
{
    (void)state;
    const char *in = tu_path("in.npz"), *out = tu_path("out.npz");
    posenc_write_opts wo = { POSENC_FMT_NPZ, 0 };
    const posenc_array_info arrs[2] = { { "f", POSENC_DT_F16, 2, { 3, 5 } },
                                        { "i", POSENC_DT_I32, 1, { 7 } } };
    uint16_t h[15];
    int32_t iv[7] = { 1, -2, 3, -4, 5, -6, 7 };
    float fref[15];
    for (int k = 0; k < 15; k++) {
        fref[k] = (float)k * 0.5f - 3.0f;
        posenc_dtype_convert(&h[k], POSENC_DT_F16, &fref[k], POSENC_DT_F32, 1);
    }
    write_fixture(in, POSENC_FMT_NPZ, 2, arrs, (const void *const[]){ h, iv });

    posenc_container *ct = NULL;
    assert_int_equal(posenc_container_open(in, NULL, &ct, NULL), POSENC_OK);
    pe_table t;
    assert_int_equal(pe_out_container_table(&t, ct, 0, 2, 1, POSENC_DT_F64, NULL), POSENC_OK);
    assert_int_equal(t.arr[0].info.dtype, POSENC_DT_F64);
    assert_int_equal(t.arr[1].info.dtype, POSENC_DT_I32);
    pe_out o = { out, wo, &t, NULL, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(pe_out_plan(&o, NULL), POSENC_OK);
    assert_int_equal(o.bytes, 15 * 8 + 7 * 4);
    assert_int_equal(pe_out_run(&o, NULL, NULL, NULL), POSENC_OK);
    pe_table_free(&t);
    posenc_container_close(ct);

    posenc_array_info info;
    void *data = NULL;
    char spec[512];
    snprintf(spec, sizeof spec, "%s:f", out);
    assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F64, 1024, &info, &data, NULL),
                     POSENC_OK);
    for (int k = 0; k < 15; k++)
        assert_true(((double *)data)[k] == (double)fref[k]);
    free(data);
    snprintf(spec, sizeof spec, "%s:i", out);
    assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_I32, 1024, &info, &data, NULL),
                     POSENC_OK);
    assert_memory_equal(data, iv, sizeof iv);
    free(data);
}

/* the learned table's row readers: streamed past an offset, and from memory */
static void test_rows(void **state)
{
    (void)state;
    const char *path = tu_path("wpe.npy");
    const posenc_array_info a = { "wpe", POSENC_DT_F32, 2, { 50, 3 } };
    float v[150];
    for (int k = 0; k < 150; k++)
        v[k] = (float)k;
    write_fixture(path, POSENC_FMT_NPY, 1, &a, (const void *const[]){ v });

    pe_out_rows rows = { NULL, 0, 3 };
    assert_int_equal(posenc_reader_open(path, NULL, &rows.r, NULL), POSENC_OK);
    float buf[10 * 3];
    assert_int_equal(pe_out_rows_read(&rows, 7, 4, buf, NULL), POSENC_OK); /* skips 7 rows */
    assert_memory_equal(buf, v + 21, 12 * sizeof(float));
    assert_int_equal(pe_out_rows_read(&rows, 11, 10, buf, NULL), POSENC_OK);
    assert_memory_equal(buf, v + 33, 30 * sizeof(float));
    assert_int_equal(pe_out_rows_read(&rows, 0, 1, buf, NULL), POSENC_EINVAL); /* backwards */
    posenc_reader_close(rows.r);

    pe_out_rows_mem mem = { v, 50, 3 };
    assert_int_equal(pe_out_rows_copy(&mem, 49, 1, buf, NULL), POSENC_OK);
    assert_memory_equal(buf, v + 147, 3 * sizeof(float));
    assert_int_equal(pe_out_rows_copy(&mem, 49, 2, buf, NULL), POSENC_ERANGE);
}

/* the --weights tensors: found with a prefix, checked, read whole or streamed */
static void test_weights(void **state)
{
    (void)state;
    const char *path = tu_path("w.npz");
    const posenc_array_info arrs[2] = { { "transformer.wpe.weight", POSENC_DT_F16, 2, { 5, 3 } },
                                        { "flat", POSENC_DT_F32, 1, { 4 } } };
    uint16_t h[15];
    float f[15], flat[4] = { 0 };
    for (int k = 0; k < 15; k++) {
        f[k] = (float)k - 7.5f;
        posenc_dtype_convert(&h[k], POSENC_DT_F16, &f[k], POSENC_DT_F32, 1);
    }
    write_fixture(path, POSENC_FMT_NPZ, 2, arrs, (const void *const[]){ h, flat });

    const char *names[] = { "wpe.weight", NULL }, *prefixes[] = { "", "transformer.", NULL };
    pe_weights wt;
    posenc_error err = { 0 };
    assert_int_equal(pe_weights_open(&wt, path, names, prefixes, &err), POSENC_OK);
    assert_string_equal(wt.name, "transformer.wpe.weight");
    assert_int_equal(wt.rows, 5);
    assert_int_equal(wt.cols, 3);
    assert_int_equal(pe_weights_load(&wt, &err), POSENC_OK);
    assert_memory_equal(wt.data, f, sizeof f);
    assert_int_equal(pe_weights_stream(&wt, &err), POSENC_OK);
    uint16_t row[3];
    assert_int_equal(pe_out_rows_read(&wt.stream, 4, 1, row, &err), POSENC_OK);
    assert_memory_equal(row, h + 12, sizeof row); /* the stored dtype, unconverted */
    pe_weights_close(&wt);

    const char *exact[] = { "", NULL };
    assert_int_equal(pe_weights_open(&wt, path, names, exact, &err), POSENC_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no tensor 'wpe.weight'; pass --tensor NAME"));
    pe_weights_close(&wt);
    const char *fl[] = { "flat", NULL };
    assert_int_equal(pe_weights_open(&wt, path, fl, exact, &err), POSENC_EFORMAT);
    assert_non_null(strstr(err.msg, "not a 2-D float table"));
    pe_weights_close(&wt);
    size_t n = 0;
    char first[64];
    assert_int_equal(pe_weights_count(path, &n, first, sizeof first, NULL), POSENC_OK);
    assert_int_equal(n, 2);
    assert_string_equal(first, "transformer.wpe.weight");
}

/* The stages apply takes one by one: open (limit, metadata, declare), the caller's own writes,
 * commit or abort. */
static void test_stages(void **state)
{
    (void)state;
    static const posenc_format fmts[] = { POSENC_FMT_NPZ, POSENC_FMT_HDF5,
                                          POSENC_FMT_SAFETENSORS, POSENC_FMT_DIR };
    static const char *names[] = { "s.npz", "s.h5", "s.safetensors", "sdir" };
    pe_table t;
    assert_int_equal(pe_table_init(&t, 2, NULL), POSENC_OK);
    const int64_t shq[3] = { 2, 3, 4 }, shk[3] = { 1, 3, 4 };
    pe_table_add(&t, "q", POSENC_DT_F32, POSENC_DT_F32, 3, shq, 4);
    pe_table_add(&t, "k", POSENC_DT_F64, POSENC_DT_F32, 3, shk, 4);
    float q[24];
    double k[12];
    for (int i = 0; i < 24; i++)
        q[i] = 0.25f * (float)i - 1.0f;
    for (int i = 0; i < 12; i++)
        k[i] = 1.0 / (i + 1);
    posenc_error err = { 0 };

    /* the limit: one message, nothing opened, nothing left */
    pe_out o = { tu_path("lim.npz"), { POSENC_FMT_NPZ, 0 }, &t, NULL, 100, 0, 0, 0, 0, 0 };
    assert_int_equal(pe_out_plan(&o, NULL), POSENC_OK);
    assert_int_equal(o.bytes, 24 * 4 + 12 * 8);
    assert_int_equal(o.over_limit, 1);
    char msg[512];
    pe_out_limit_message(&o, "x.npz", NULL, NULL, msg, sizeof msg);
    assert_string_equal(msg, "'x.npz': the output would be 192 bytes, over the 100 bytes "
                             "limit; pass --force");
    posenc_writer *w = (posenc_writer *)&o; /* set to NULL on every return */
    assert_int_equal(pe_out_open(&o, meta_one, NULL, &w, &err), POSENC_ERANGE);
    assert_null(w);
    char want_msg[512]; /* the same words, naming the file it would have written */
    snprintf(want_msg, sizeof want_msg, "'%s': the output would be 192 bytes, over the 100 "
             "bytes limit; pass --force", tu_path("lim.npz"));
    assert_string_equal(err.msg, want_msg);
    assert_false(tu_exists(tu_path("lim.npz")));
    assert_false(tu_tmp_left());
    /* the default limit reads as --help says it */
    pe_out big = o;
    big.size_limit = 0;
    big.bytes = (uint64_t)9 << 29;
    pe_out_limit_message(&big, "h.npy", NULL, NULL, msg, sizeof msg);
    assert_string_equal(msg, "'h.npy': the output would be 4.5 GiB, over the 4 GiB limit; pass "
                             "--force");
    /* what the bytes are, and what else makes them fewer */
    pe_out_limit_message(&big, "a.npz", "alibi tables", "a smaller --seq-len", msg, sizeof msg);
    assert_string_equal(msg, "'a.npz': the output would be 4.5 GiB (alibi tables), over the 4 GiB "
                             "limit; pass a smaller --seq-len or --force");

    for (size_t f = 0; f < 4; f++) {
        const char *path = tu_path(names[f]);
        pe_out so = { path, { fmts[f], 0 }, &t, NULL, 0, 0, 0, 0, 0, 0 };
        assert_int_equal(pe_out_plan(&so, NULL), POSENC_OK);
        assert_int_equal(so.over_limit, 0);
        /* abort after some values: no file, no temporary */
        assert_int_equal(pe_out_open(&so, meta_one, NULL, &w, &err), POSENC_OK);
        assert_non_null(w);
        assert_int_equal(posenc_writer_write(w, q, 10, &err), POSENC_OK);
        pe_out_abort(&w);
        assert_null(w);
        pe_out_abort(&w); /* NULL is fine */
        assert_false(tu_exists(path));
        assert_false(tu_tmp_left());
        /* a failing metadata step: open aborts itself */
        assert_int_equal(pe_out_open(&so, meta_fails, NULL, &w, &err), POSENC_EINVAL);
        assert_null(w);
        assert_false(tu_exists(path));
        assert_false(tu_tmp_left());
        /* the values written in the declared order are the file's, with the metadata */
        assert_int_equal(pe_out_open(&so, meta_one, NULL, &w, &err), POSENC_OK);
        assert_int_equal(posenc_writer_write(w, q, 24, &err), POSENC_OK);
        assert_int_equal(posenc_writer_write(w, k, 12, &err), POSENC_OK);
        assert_int_equal(pe_out_commit(&w, &err), POSENC_OK);
        assert_null(w);
        assert_false(tu_tmp_left());
        char spec[512];
        posenc_array_info info;
        void *data = NULL;
        const char *sep = fmts[f] == POSENC_FMT_DIR ? "/" : ":",
                   *ext = fmts[f] == POSENC_FMT_DIR ? ".npy" : "";
        snprintf(spec, sizeof spec, "%s%sq%s", path, sep, ext);
        assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F32, 1024, &info, &data, NULL),
                         POSENC_OK);
        assert_int_equal(info.ndim, 3);
        assert_int_equal(info.shape[0], 2);
        assert_memory_equal(data, q, sizeof q);
        free(data);
        snprintf(spec, sizeof spec, "%s%sk%s", path, sep, ext);
        assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F64, 1024, &info, &data, NULL),
                         POSENC_OK);
        assert_int_equal(info.dtype, POSENC_DT_F64);
        assert_int_equal(info.shape[0], 1);
        assert_memory_equal(data, k, sizeof k);
        free(data);
        posenc_container *ct = NULL;
        assert_int_equal(posenc_container_open(path, NULL, &ct, NULL), POSENC_OK);
        assert_int_equal(posenc_container_count(ct), 2);
        assert_non_null(strstr(posenc_container_meta(ct), "\"sinusoidal\""));
        posenc_container_close(ct);
    }
    /* one array of two (apply's Q to one file, K to another) */
    int want[2] = { 0, 1 };
    const char *path = tu_path("konly.npy");
    pe_out ko = { path, { POSENC_FMT_NPY, 0 }, &t, want, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(pe_out_plan(&ko, NULL), POSENC_OK);
    assert_int_equal(ko.bytes, 96);
    assert_int_equal(pe_out_open(&ko, NULL, NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, k, 12, &err), POSENC_OK);
    assert_int_equal(pe_out_commit(&w, &err), POSENC_OK);
    posenc_array_info info;
    void *data = NULL;
    assert_int_equal(posenc_read_all(path, NULL, POSENC_DT_F64, 1024, &info, &data, NULL),
                     POSENC_OK);
    assert_memory_equal(data, k, sizeof k);
    free(data);
    /* a commit before every value is written fails and leaves nothing */
    const char *short_path = tu_path("short.npz");
    pe_out sh = { short_path, { POSENC_FMT_NPZ, 0 }, &t, NULL, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(pe_out_plan(&sh, NULL), POSENC_OK);
    assert_int_equal(pe_out_open(&sh, NULL, NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, q, 24, &err), POSENC_OK);
    assert_int_not_equal(pe_out_commit(&w, &err), POSENC_OK);
    assert_null(w);
    assert_false(tu_exists(short_path));
    assert_false(tu_tmp_left());
    pe_table_free(&t);
}

/* pe_tmp_writeout hands the stream's buffered bytes to the file once PE_WRITEOUT_BYTES have
 * gone by since the last time (and not before), never fails, and the commit still makes the
 * whole file; writers that call it (NPY, DIR, safetensors, raw, NPZ) write every byte of an
 * output several steps long, in order, from pieces that straddle the steps. */
static size_t on_disk(FILE *fp)
{
    struct stat sb;
    assert_int_equal(fstat(fileno(fp), &sb), 0);
    return (size_t)sb.st_size;
}

static void test_writeout(void **state)
{
    (void)state;
    const size_t step = (size_t)PE_WRITEOUT_BYTES, piece = step / 4 + 3;
    const size_t total = 3 * step + 12345;
    unsigned char *buf = malloc(total), *vbuf = malloc(2 * step);
    assert_non_null(buf);
    assert_non_null(vbuf);
    for (size_t i = 0; i < total; i++)
        buf[i] = (unsigned char)(i * 131u + (i >> 13));
    char *tmp = NULL;
    FILE *fp = NULL;
    posenc_error err = { 0 };
    assert_int_equal(pe_tmp_create(tu_path("wo.bin"), &tmp, &fp, &err), POSENC_OK);
    setvbuf(fp, (char *)vbuf, _IOFBF, 2 * step); /* holds everything until written out */
    pe_writeout wo = { 0 };
    size_t done = 0, flushed = 0;
    while (done < total) {
        size_t n = total - done < piece ? total - done : piece;
        assert_int_equal(fwrite(buf + done, 1, n, fp), n);
        done += n;
        uint64_t before = wo.pending;
        pe_tmp_writeout(fp, &wo, n);
        if (before + n >= step) { /* a step went by: every byte so far is in the file */
            assert_int_equal(wo.pending, 0);
            flushed = done;
        } else {
            assert_int_equal(wo.pending, before + n);
        }
        assert_int_equal(on_disk(fp), flushed);
    }
    assert_true(flushed >= 3 * step - piece && flushed < total);
    assert_int_equal(pe_tmp_commit(fp, tmp, tu_path("wo.bin"), &err), POSENC_OK);
    free(tmp);
    size_t n = 0;
    unsigned char *back = tu_slurp(tu_path("wo.bin"), &n);
    assert_int_equal(n, total);
    assert_memory_equal(back, buf, total);
    free(back);
    assert_false(tu_tmp_left());

    /* a NULL stream: nothing; one that is not a file: flushed, no error */
    pe_writeout w2 = { 0 };
    pe_tmp_writeout(NULL, &w2, 2 * step);
    assert_int_equal(w2.pending, 0);
    FILE *null = fopen("/dev/null", "wb");
    assert_non_null(null);
    pe_tmp_writeout(null, &w2, step);
    assert_int_equal(ferror(null), 0);
    fclose(null);

    /* the writers: one float32 array of 2.5 steps, given in pieces that straddle them */
    static const posenc_format fmts[] = { POSENC_FMT_NPY, POSENC_FMT_DIR,
                                          POSENC_FMT_SAFETENSORS, POSENC_FMT_RAW,
                                          POSENC_FMT_NPZ };
    static const char *outs[] = { "wo.npy", "wodir", "wo.safetensors", "wo.raw.bin",
                                  "wo.npz" };
    static const char *specs[] = { "wo.npy", "wodir/x.npy", "wo.safetensors:x", "wo.raw.bin:x",
                                   "wo.npz:x" };
    const int64_t rows = (int64_t)(5 * step / 2 / (64 * 4)), cols = 64;
    float *x = (float *)buf;
    assert_true((size_t)(rows * cols) * 4 <= total);
    for (int64_t i = 0; i < rows * cols; i++)
        x[i] = (float)i * 0.5f - 7.0f;
    for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
        posenc_writer *w = NULL;
        posenc_write_opts wopt = { fmts[f], 0 };
        posenc_array_info a = { .name = "x", .dtype = POSENC_DT_F32, .ndim = 2,
                                .shape = { rows, cols } };
        assert_int_equal(posenc_writer_open(tu_path(outs[f]), &wopt, &w, &err), POSENC_OK);
        assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
        uint64_t left = (uint64_t)(rows * cols), at = 0, pe = piece / 4;
        while (left > 0) {
            uint64_t k = left < pe ? left : pe;
            assert_int_equal(posenc_writer_write(w, x + at, k, &err), POSENC_OK);
            at += k;
            left -= k;
        }
        assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
        char spec[600];
        snprintf(spec, sizeof spec, "%s/%s", tu_dir, specs[f]);
        posenc_array_info info;
        void *d = NULL;
        posenc_status st = posenc_read_all(spec, NULL, POSENC_DT_F32, (uint64_t)1 << 30, &info,
                                           &d, &err);
        if (st != POSENC_OK)
            print_error("%s: %s\n", spec, err.msg);
        assert_int_equal(st, POSENC_OK);
        assert_int_equal(info.shape[0], rows);
        assert_memory_equal(d, x, (size_t)(rows * cols) * 4);
        free(d);
    }
    assert_false(tu_tmp_left());
    free(buf);
    free(vbuf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_limit),
        cmocka_unit_test(test_commit),
        cmocka_unit_test(test_want_one),
        cmocka_unit_test(test_failure_leaves_nothing),
        cmocka_unit_test(test_stages),
        cmocka_unit_test(test_container_source),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_writeout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
