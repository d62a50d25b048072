/* fmtutil.h: helpers for the format backend tests (test_hdf5, test_safetensors,
 * test_cheader_raw). They drive a backend through formats/backend.h the way io.c does, so each
 * backend is tested on its own; a scratch directory per test binary; Python (Debian's
 * /usr/bin/python3 with numpy/h5py) for interop. */
#ifndef POSENC_TEST_FMTUTIL_H
#define POSENC_TEST_FMTUTIL_H

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "backend.h"

#define FMT_PY "/usr/bin/python3"

static char fmt_dir[256];

/* Create the scratch directory; call from a group setup. */
static inline int fmt_setup(void **state)
{
    (void)state;
    snprintf(fmt_dir, sizeof fmt_dir, "%s/posenc-fmt.XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(fmt_dir) ? 0 : -1;
}

static inline int fmt_teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fmt_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Path of a file in the scratch directory (static buffer rotation of 8). */
static inline const char *fmt_path(const char *name)
{
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", fmt_dir, name);
    return b;
}

static inline int fmt_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* 1 when a temporary file (name containing "posenc-tmp") is left in the scratch directory. */
static inline int fmt_tmp_left(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q posenc-tmp", fmt_dir);
    return system(cmd) == 0;
}

static inline void fmt_write_bytes(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

/* Run a Python snippet with Debian's python3 after importing `modules` (comma separated); the
 * snippet gets D = the scratch directory. Skips the calling test when python3 or a module is
 * missing; otherwise returns the exit status (0 = the snippet's assertions held). */
#define fmt_python(modules, code)                                                           \
    do {                                                                                     \
        int rc_ = fmt_python_run((modules), (code));                                         \
        if (rc_ == 77)                                                                       \
            skip();                                                                          \
        assert_int_equal(rc_, 0);                                                            \
    } while (0)

static inline int fmt_python_run(const char *modules, const char *code)
{
    if (access(FMT_PY, X_OK) != 0)
        return 77;
    char script[600];
    snprintf(script, sizeof script, "%s/snippet.py", fmt_dir);
    FILE *fp = fopen(script, "w");
    if (!fp)
        return -1;
    fprintf(fp, "import sys\ntry:\n    import %s\nexcept ImportError:\n    sys.exit(77)\n", modules);
    fprintf(fp, "D = '%s'\n%s\n", fmt_dir, code);
    fclose(fp);
    char cmd[800];
    snprintf(cmd, sizeof cmd, FMT_PY " '%s'", script);
    int rc = system(cmd);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

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

/* ---- writing through a backend the way io.c does ---- */

/* Build a writer; the caller then sets meta and calls fmt_write_all or drives it. */
static inline posenc_writer *fmt_writer(const posenc_backend *be, const char *path, int compress,
                                        const posenc_array_info *arrays, size_t n)
{
    posenc_writer *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->be = be;
    w->path = strdup(path);
    w->opts.format = be->format;
    w->opts.compress = compress;
    w->n = w->cap = n;
    w->arrays = calloc(n ? n : 1, sizeof *w->arrays);
    w->nelem = calloc(n ? n : 1, sizeof *w->nelem);
    for (size_t i = 0; i < n; i++) {
        w->arrays[i] = arrays[i];
        w->nelem[i] = fmt_nelem(&arrays[i]);
    }
    return w;
}

static inline void fmt_writer_meta(posenc_writer *w, const char *key, const char *val)
{
    w->meta_keys = realloc(w->meta_keys, (w->nmeta + 1) * sizeof *w->meta_keys);
    w->meta_vals = realloc(w->meta_vals, (w->nmeta + 1) * sizeof *w->meta_vals);
    w->meta_keys[w->nmeta] = strdup(key);
    w->meta_vals[w->nmeta] = strdup(val);
    w->nmeta++;
}

static inline void fmt_writer_free(posenc_writer *w)
{
    for (size_t i = 0; i < w->nmeta; i++) {
        free(w->meta_keys[i]);
        free(w->meta_vals[i]);
    }
    free(w->meta_keys);
    free(w->meta_vals);
    free(w->arrays);
    free(w->nelem);
    free(w->path);
    free(w);
}

/* Write every array (data[i] in the declared dtype) in pieces of `piece` elements that cross
 * array boundaries the way io.c may pass them: each w_write call stays within one array. Commits
 * and frees w; returns the commit status (or the first failure). */
static inline posenc_status fmt_write_all(posenc_writer *w, const void *const *data, uint64_t piece,
                                          posenc_error *err)
{
    posenc_status st = w->be->w_start(w, err);
    if (st != POSENC_OK) {
        fmt_writer_free(w);
        return st;
    }
    w->started = 1;
    for (size_t i = 0; i < w->n; i++) {
        w->cur = i;
        w->done = 0;
        size_t es = posenc_dtype_size(w->arrays[i].dtype);
        while (w->done < w->nelem[i]) {
            uint64_t k = w->nelem[i] - w->done < piece ? w->nelem[i] - w->done : piece;
            st = w->be->w_write(w, (const char *)data[i] + w->done * es, k, err);
            if (st != POSENC_OK) {
                w->be->w_abort(w);
                fmt_writer_free(w);
                return st;
            }
            w->done += k;
        }
    }
    st = w->be->w_commit(w, err);
    if (st != POSENC_OK)
        w->be->w_abort(w);
    fmt_writer_free(w);
    return st;
}

/* ---- reading through a backend ---- */

static inline posenc_status fmt_open(const posenc_backend *be, const char *path, int assume_bf16,
                                     posenc_container **out, posenc_error *err)
{
    posenc_container *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->be = be;
    c->path = strdup(path);
    c->opts.format = be->format;
    c->opts.assume_bf16 = assume_bf16;
    posenc_status st = be->open(c, err);
    if (st != POSENC_OK) {
        be->close(c);
        free(c->arrays);
        free(c->meta);
        free(c->path);
        free(c);
        return st;
    }
    *out = c;
    return POSENC_OK;
}

static inline void fmt_close(posenc_container *c)
{
    if (!c)
        return;
    c->be->close(c);
    free(c->arrays);
    free(c->meta);
    free(c->path);
    free(c);
}

/* Index of the array named name, or -1. */
static inline int fmt_find(const posenc_container *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->arrays[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Read array i whole, in pieces of `piece` elements; caller frees. */
static inline posenc_status fmt_read(posenc_container *c, size_t i, uint64_t piece, void **data,
                                     posenc_error *err)
{
    posenc_reader r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.index = i;
    r.info = c->arrays[i];
    r.nelem = fmt_nelem(&r.info);
    size_t es = posenc_dtype_size(r.info.dtype);
    char *buf = malloc(r.nelem * es + 1);
    assert_non_null(buf);
    posenc_status st = c->be->reader_open(&r, err);
    if (st != POSENC_OK) {
        free(buf);
        return st;
    }
    while (r.pos < r.nelem) {
        uint64_t k = r.nelem - r.pos < piece ? r.nelem - r.pos : piece;
        st = c->be->read(&r, buf + r.pos * es, k, err);
        if (st != POSENC_OK)
            break;
        r.pos += k;
    }
    c->be->reader_close(&r);
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

#endif
