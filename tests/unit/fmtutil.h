/* fmtutil.h: helpers for the format backend tests (test_hdf5, test_safetensors,
 * test_cheader_raw): array descriptions, and writing through the public writer API
 * (posenc/io.h) with the backend's format forced, in pieces that stay within one array. The
 * scratch directory and Python runner are testutil.h's. */
#ifndef POSENC_TEST_FMTUTIL_H
#define POSENC_TEST_FMTUTIL_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "formats/io/backend.h"
#include "posenc/io.h"

static inline posenc_array_info fmt_info(const char *name, posenc_dtype dt, int ndim, ...)
{
    posenc_array_info a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "%s", name);
    a.dtype = dt;
    a.ndim = ndim;
    va_list ap;
    va_start(ap, ndim);
    for (int i = 0; i < ndim; i++)
        a.shape[i] = va_arg(ap, int64_t);
    va_end(ap);
    return a;
}

static inline uint64_t fmt_nelem(const posenc_array_info *a)
{
    uint64_t n = 1;
    for (int i = 0; i < a->ndim; i++)
        n *= (uint64_t)a->shape[i];
    return n;
}

/* ---- writing through the public writer API ---- */

/* Open a writer for path in be's format and declare the arrays; the caller may add metadata
 * (fmt_writer_meta) and then calls fmt_write_all, or writes and commits or aborts itself. */
static inline posenc_writer *fmt_writer(const pe_backend *be, const char *path, int compress,
                                        const posenc_array_info *arrays, size_t n)
{
    posenc_write_opts o = { .format = be->format, .compress = compress };
    posenc_writer *w = NULL;
    posenc_error err = { 0 };
    if (posenc_writer_open(path, &o, &w, &err) != POSENC_OK)
        fail_msg("posenc_writer_open: %s", err.msg);
    for (size_t i = 0; i < n; i++)
        if (posenc_writer_declare(w, &arrays[i], &err) != POSENC_OK)
            fail_msg("posenc_writer_declare: %s", err.msg);
    return w;
}

static inline void fmt_writer_meta(posenc_writer *w, const char *key, const char *val)
{
    posenc_error err = { 0 };
    if (posenc_writer_meta(w, key, val, &err) != POSENC_OK)
        fail_msg("posenc_writer_meta: %s", err.msg);
}

/* Write every array (data[i] in the declared dtype) in pieces of at most `piece` elements, each
 * within one array, then commit. w is freed; returns the first failure or the commit status. */
static inline posenc_status fmt_write_all(posenc_writer *w, const posenc_array_info *arrays,
                                          size_t n, const void *const *data, uint64_t piece,
                                          posenc_error *err)
{
    for (size_t i = 0; i < n; i++) {
        size_t es = posenc_dtype_size(arrays[i].dtype);
        uint64_t total = fmt_nelem(&arrays[i]);
        for (uint64_t done = 0; done < total;) {
            uint64_t k = total - done < piece ? total - done : piece;
            posenc_status st = posenc_writer_write(w, (const char *)data[i] + done * es, k, err);
            if (st != POSENC_OK) {
                posenc_writer_abort(w);
                return st;
            }
            done += k;
        }
    }
    return posenc_writer_commit(w, err);
}

/* ---- reading through the public container and reader API, the backend's format forced ---- */

static inline posenc_status fmt_open(const pe_backend *be, const char *path, int assume_bf16,
                                     posenc_container **out, posenc_error *err)
{
    posenc_read_opts o = { .assume_bf16 = assume_bf16, .format = be->format };
    return posenc_container_open(path, &o, out, err);
}

static inline void fmt_close(posenc_container *c)
{
    posenc_container_close(c);
}

/* Index of the array named name, or -1. */
static inline int fmt_find(const posenc_container *c, const char *name)
{
    for (size_t i = 0; i < posenc_container_count(c); i++)
        if (strcmp(posenc_container_array(c, i)->name, name) == 0)
            return (int)i;
    return -1;
}

/* Read array i whole, in pieces of `piece` elements; caller frees. */
static inline posenc_status fmt_read(posenc_container *c, size_t i, uint64_t piece, void **data,
                                     posenc_error *err)
{
    posenc_reader *r = NULL;
    posenc_status st = posenc_reader_open_index(c, i, &r, err);
    if (st != POSENC_OK)
        return st;
    const posenc_array_info *info = posenc_reader_info(r);
    uint64_t n = fmt_nelem(info);
    size_t es = posenc_dtype_size(info->dtype);
    char *buf = malloc(n * es + 1);
    assert_non_null(buf);
    for (uint64_t done = 0; done < n && st == POSENC_OK;) {
        uint64_t k = n - done < piece ? n - done : piece;
        st = posenc_reader_read(r, buf + done * es, k, err);
        done += k;
    }
    posenc_reader_close(r);
    if (st != POSENC_OK) {
        free(buf);
        return st;
    }
    *data = buf;
    return POSENC_OK;
}

/* Deterministic test data for any dtype: n elements, seeded. */
static inline void *fmt_data(posenc_dtype dt, uint64_t n, unsigned seed)
{
    size_t es = posenc_dtype_size(dt);
    unsigned char *p = malloc(n * es + 1);
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 1000.0;
        switch (dt) {
        case POSENC_DT_F16: {
            uint16_t h = posenc_f64_to_f16(v);
            memcpy(p + i * 2, &h, 2);
            break;
        }
        case POSENC_DT_BF16: {
            uint16_t h = posenc_f64_to_bf16(v);
            memcpy(p + i * 2, &h, 2);
            break;
        }
        case POSENC_DT_F32: {
            float f = (float)v;
            memcpy(p + i * 4, &f, 4);
            break;
        }
        case POSENC_DT_F64: memcpy(p + i * 8, &v, 8); break;
        case POSENC_DT_I32: {
            int32_t k = (int32_t)(x >> 32);
            memcpy(p + i * 4, &k, 4);
            break;
        }
        case POSENC_DT_I64: {
            int64_t k = (int64_t)x;
            memcpy(p + i * 8, &k, 8);
            break;
        }
        case POSENC_DT_U8: p[i] = (unsigned char)x; break;
        default: break;
        }
    }
    return p;
}

/* The arrays every round-trip test writes: each dtype, a scalar and an empty array. Fills out
 * (room for FMT_EVERY_DTYPE_N entries) and returns FMT_EVERY_DTYPE_N; a test appends its own. */
#define FMT_EVERY_DTYPE_N 9
static inline size_t fmt_every_dtype(posenc_array_info *out)
{
    out[0] = fmt_info("f16", POSENC_DT_F16, 2, (int64_t)3, (int64_t)5);
    out[1] = fmt_info("bf16", POSENC_DT_BF16, 1, (int64_t)7);
    out[2] = fmt_info("f32", POSENC_DT_F32, 3, (int64_t)2, (int64_t)3, (int64_t)4);
    out[3] = fmt_info("f64", POSENC_DT_F64, 2, (int64_t)4, (int64_t)3);
    out[4] = fmt_info("i32", POSENC_DT_I32, 1, (int64_t)9);
    out[5] = fmt_info("i64", POSENC_DT_I64, 1, (int64_t)5);
    out[6] = fmt_info("u8", POSENC_DT_U8, 2, (int64_t)3, (int64_t)3);
    out[7] = fmt_info("scalar", POSENC_DT_F64, 0);
    out[8] = fmt_info("empty", POSENC_DT_F32, 2, (int64_t)0, (int64_t)4);
    return FMT_EVERY_DTYPE_N;
}

/* Start writing a 100-element f32 array to path in be's format, write a piece, abort: neither
 * path, nor the optional sidecar (a raw file's .json), nor a temporary may be left. */
static inline void fmt_expect_abort_clean(const pe_backend *be, const char *path,
                                          const char *sidecar)
{
    posenc_array_info a = fmt_info("x", POSENC_DT_F32, 1, (int64_t)100);
    posenc_writer *w = fmt_writer(be, path, 0, &a, 1);
    posenc_error err = { 0 };
    float v[10] = { 0 };
    assert_int_equal(posenc_writer_write(w, v, 10, &err), POSENC_OK);
    assert_true(tu_tmp_left());
    posenc_writer_abort(w);
    assert_false(tu_exists(path));
    if (sidecar)
        assert_false(tu_exists(sidecar));
    assert_false(tu_tmp_left());
}

#endif
