/* testutil.h: what every cmocka unit test shares (the functions are in testutil.c, linked into
 * every test binary). */
#ifndef POSENC_TESTUTIL_H
#define POSENC_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "posenc/io.h"
#include "posenc/rope.h"

/* Fail unless |a - b| <= atol + rtol * |b| (NaN equals NaN; infinities must match). */
#define assert_close(a, b, rtol, atol) \
    tu_assert_close_at((double)(a), (double)(b), (rtol), (atol), #a, #b, __FILE__, __LINE__)

static inline void tu_assert_close_at(double a, double b, double rtol, double atol,
                                            const char *ea, const char *eb, const char *file,
                                            int line)
{
    if (isnan(a) && isnan(b))
        return;
    if (isinf(a) || isinf(b)) {
        if (a == b)
            return;
    } else if (fabs(a - b) <= atol + rtol * fabs(b)) {
        return;
    }
    print_error("%s = %.17g is not close to %s = %.17g (rtol %g, atol %g, diff %.3g)\n", ea, a,
                   eb, b, rtol, atol, fabs(a - b));
    _fail(file, line);
}

/* Directory holding test data (tests/data), from POSENC_TEST_DATA or the source layout. */
static inline const char *tu_data_dir(void)
{
    const char *d = getenv("POSENC_TEST_DATA");
    return d && *d ? d : "tests/data";
}

/* ---- a scratch directory per test binary (tests/unit/testutil.c) ---- */

#define TU_PY "/usr/bin/python3" /* Debian's python3, with numpy and h5py */

extern char tu_dir[256];
/* Create / remove the scratch directory; use as the group setup and teardown. */
int tu_setup(void **state);
int tu_teardown(void **state);
/* Path of name in the scratch directory (a rotation of 8 static buffers). */
const char *tu_path(const char *name);
int tu_exists(const char *path);
/* 1 when a temporary (a name containing "posenc-tmp") is left in the scratch directory. */
int tu_tmp_left(void);
void tu_write_file(const char *path, const void *data, size_t n);
/* The whole file, NUL-terminated; *n = its length. Caller frees. */
unsigned char *tu_slurp(const char *path, size_t *n);
/* Run a Python snippet after importing `modules` (comma separated); the snippet gets D = the
 * scratch directory. 77 when python3 or a module is missing, else the exit status. */
int tu_python_run(const char *modules, const char *code);
/* The same, skipping the calling test on 77 and failing it on any other non-zero status. */
#define tu_python(modules, code)                                                            \
    do {                                                                                     \
        int rc_ = tu_python_run((modules), (code));                                          \
        if (rc_ == 77)                                                                       \
            skip();                                                                          \
        assert_int_equal(rc_, 0);                                                            \
    } while (0)

/* An opaque '<V2' array (NPY without --assume-bf16): the container at path lists it (its NPY
 * descr, not readable, 2-byte elements) and opening a reader on it fails with msg. */
void tu_expect_opaque(const char *path, const char *msg);
/* Opening path with o (NULL: defaults) fails with code and a message containing msg. */
void tu_expect_open_error(const char *path, const posenc_read_opts *o, posenc_status code,
                          const char *msg);

/* One array for tu_write_arrays: name, dtype, shape (ndim dims), C-order data. */
typedef struct tu_array {
    const char *name;
    posenc_dtype dt;
    int ndim;
    int64_t shape[4];
    const void *data;
} tu_array;
/* Write n arrays to path through the public writer (format from the extension); fails the test
 * when the writer refuses. */
void tu_write_arrays(const char *path, const tu_array *a, int n);

/* ---- RoPE fixtures ---- */

/* A model from config.json text (named "c.json" in messages); fails the test when it does not
 * load. Caller frees with posenc_model_free. */
struct posenc_model *tu_model(const char *json);

/* A default-RoPE config: theta, head_dim, rotary_dim (exponent over rotary_dim), pairing style,
 * 4096 positions, yarn defaults (beta 32/1, truncate). */
posenc_rope_config tu_rope_cfg(double theta, int head_dim, int rotary_dim, posenc_style style);
/* posenc_rope_params_compute(c, 0): fails the test when it fails. */
posenc_rope_params tu_rope_params(const posenc_rope_config *c);

#endif
