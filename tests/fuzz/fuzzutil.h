/* fuzzutil.h: what the file-based harnesses share: one scratch directory per process (under
 * $TMPDIR or /tmp, removed at exit), writing an input's bytes to a named file in it, draining a
 * reader, and the invariants every error message keeps. Harnesses include it once. */
#ifndef POSENC_FUZZUTIL_H
#define POSENC_FUZZUTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posenc/io.h"

static char fz_dir[512];

static void fz_rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (unlink(p) != 0)
            fz_rm_tree(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

static void fz_cleanup(void) { fz_rm_tree(fz_dir); }

/* The scratch directory, created on the first call. */
static const char *fz_scratch(void)
{
    if (!fz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fz_dir, sizeof fz_dir, "%s/posenc-fuzz.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(fz_dir))
            abort();
        atexit(fz_cleanup);
    }
    return fz_dir;
}

/* "SCRATCH/name" in one of 8 rotating static buffers. */
static const char *fz_path(const char *name)
{
    static char bufs[8][1024];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", fz_scratch(), name);
    return b;
}

/* Replace path's contents with n bytes (aborts when the scratch directory fails). */
static void fz_write(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp || (n && fwrite(data, 1, n, fp) != n) || fclose(fp) != 0)
        abort();
}

/* An error carries a message: set, NUL-terminated, one line (posenc prints it after
 * "posenc CMD: "). */
static void fz_check_msg(const posenc_error *err)
{
    if (!memchr(err->msg, '\0', sizeof err->msg) || err->msg[0] == '\0' ||
        strchr(err->msg, '\n') || strchr(err->msg, '\r'))
        __builtin_trap();
}

/* Read every element of r in chunks, stopping at cap bytes (a small input may declare far more
 * than it holds) or at the first error. Returns 0 when every element was read. */
static inline int fz_drain(posenc_reader *r, uint64_t cap)
{
    static unsigned char buf[1 << 16];
    const posenc_array_info *a = posenc_reader_info(r);
    uint64_t n;
    posenc_error err = { 0 };
    if (posenc_shape_size(a->ndim, a->shape, a->dtype, &n, NULL, NULL) != POSENC_OK)
        __builtin_trap(); /* a reader was opened on a shape it cannot size */
    size_t es = posenc_dtype_size(a->dtype);
    uint64_t chunk = sizeof buf / es, done = 0;
    while (done < n && done * es < cap) {
        uint64_t k = n - done < chunk ? n - done : chunk;
        if (posenc_reader_read(r, buf, k, &err) != POSENC_OK) {
            fz_check_msg(&err);
            return -1;
        }
        done += k;
    }
    if (done == n && posenc_reader_read(r, buf, 1, &err) == POSENC_OK)
        __builtin_trap(); /* read past the end of the array */
    return done == n ? 0 : -1;
}

#endif
