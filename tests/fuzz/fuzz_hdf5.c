/* fuzz_hdf5.c: bytes -> HDF5. The bytes are written to a temporary regular file (libhdf5 opens
 * files by name and resolves the name with realpath(3), so a memfd's /proc/self/fd path does not
 * open), which is opened as a container through the public API: every dataset's info and the
 * root attributes (the metadata) are read, then the first few KiB of each dataset, half the
 * time with --assume-bf16; afterwards no HDF5 id may be left open. libhdf5 1.10 itself
 * crashes, leaks and loops on some hostile files (H5HG_read, H5A__close, H5F__accum_read;
 * leaks on the error paths of H5Fopen, H5Ovisit and H5Dopen2): run with -fork=N
 * -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 to get past them; the seed corpus holds
 * none of them. What posenc can check before calling libhdf5 it does (storage_check). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "posenc/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define READ_CAP ((uint64_t)4 << 10) /* bytes read per dataset */

/* libhdf5 sizes metadata buffers from the file; glibc's malloc returns NULL for an impossible
 * size and libhdf5 reports an error, so let ASan's allocator do the same. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static char path[4096];
static int fd = -1;

static void remove_tmp(void)
{
    if (fd >= 0)
        unlink(path);
}

/* The temporary is fuzz_hdf5.PID.h5: a run that dies in libhdf5 (or under -fork) cannot
 * remove its own, so each run removes those whose process is gone. */
static void remove_stale(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid, n = 0;
        if (sscanf(e->d_name, "fuzz_hdf5.%d.h5%n", &pid, &n) == 1 && e->d_name[n] == '\0' &&
            pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    }
    if (d)
        closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fd < 0) {
        const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        remove_stale(dir);
        snprintf(path, sizeof path, "%s/fuzz_hdf5.%d.h5", dir, (int)getpid());
        if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
            abort();
        atexit(remove_tmp);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();

    posenc_error err;
    posenc_read_opts o = { .assume_bf16 = (int)(size & 1), .format = POSENC_FMT_HDF5 };
    posenc_container *c;
    if (posenc_container_open(path, &o, &c, &err) != POSENC_OK) {
        if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0)
            abort(); /* posenc left an HDF5 id open */
        return 0;
    }
    const char *meta = posenc_container_meta(c);
    if (meta && !*meta)
        abort(); /* metadata is NULL or a JSON object's text */
    static unsigned char buf[READ_CAP];
    for (size_t i = 0; i < posenc_container_count(c); i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        if (!a || a->ndim < 0 || a->ndim > POSENC_MAX_DIMS || !memchr(a->name, '\0', sizeof a->name))
            abort();
        posenc_reader *r;
        if (posenc_reader_open_index(c, i, &r, &err) != POSENC_OK)
            continue;
        uint64_t n;
        if (posenc_shape_size(a->ndim, a->shape, a->dtype, &n, NULL, NULL) != POSENC_OK)
            abort(); /* the reader accepted a shape it cannot size */
        size_t es = posenc_dtype_size(a->dtype);
        uint64_t k = n < sizeof buf / es ? n : sizeof buf / es;
        /* in two pieces: the second starts mid-row */
        /* a malformed file may fail either read (crashes, leaks and open ids are what this
         * looks for); a failure's message must still be a string */
        posenc_status rs = POSENC_OK;
        if (k > 1 && (rs = posenc_reader_read(r, buf, k / 2, &err)) == POSENC_OK)
            rs = posenc_reader_read(r, buf, k - k / 2, &err);
        else if (k == 1)
            rs = posenc_reader_read(r, buf, 1, &err);
        if (rs != POSENC_OK && !memchr(err.msg, '\0', sizeof err.msg))
            abort();
        posenc_reader_close(r);
    }
    posenc_container_close(c);
    if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0)
        abort(); /* posenc left an HDF5 id open */
    return 0;
}
