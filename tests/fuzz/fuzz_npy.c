/* fuzz_npy.c: bytes -> NPY. Three paths: the header dict parser on the raw bytes, the public
 * reader on the bytes as a regular file (header, size checks, byte swapping, Fortran order), and
 * the streaming decoder on the bytes as a non-seekable stream (truncation found on read). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "posenc/io.h"
#include "formats/files/npyfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct memsrc {
    const uint8_t *p;
    size_t n, off;
};

static posenc_status mem_read(void *ctx, void *buf, size_t n, posenc_error *err)
{
    struct memsrc *m = ctx;
    if (n > m->n - m->off)
        return posenc_seterr(err, POSENC_EFORMAT, "'mem': truncated");
    memcpy(buf, m->p + m->off, n);
    m->off += n;
    return POSENC_OK;
}

/* Read every element in chunks (at most 64 MiB in all: inputs are small, but Fortran arrays
 * may claim more than they hold). */
static void drain_reader(posenc_reader *r)
{
    const posenc_array_info *a = posenc_reader_info(r);
    uint64_t n;
    if (posenc_shape_size(a->ndim, a->shape, a->dtype, &n, NULL, NULL) != POSENC_OK)
        abort(); /* the reader accepted a shape it cannot size */
    size_t es = posenc_dtype_size(a->dtype);
    static unsigned char buf[1 << 16];
    uint64_t chunk = sizeof buf / es;
    for (uint64_t done = 0; done < n && done * es < ((uint64_t)64 << 20);) {
        uint64_t k = n - done < chunk ? n - done : chunk;
        if (posenc_reader_read(r, buf, k, NULL) != POSENC_OK)
            return;
        done += k;
    }
}

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pe_npy_header h;
    posenc_error err;
    /* 1. the dict parser alone */
    pe_npy_header_parse((const char *)data, size, "fuzz", (int)(size & 1), &h, &err);

    /* 2. the bytes as a regular file, through the public API */
    if (memfd < 0 && (memfd = memfd_create("fuzz_npy", 0)) < 0)
        abort();
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    posenc_read_opts o = { .assume_bf16 = (int)(size & 1), .format = POSENC_FMT_NPY };
    posenc_container *c;
    if (posenc_container_open(path, &o, &c, &err) == POSENC_OK) {
        if (posenc_container_count(c) != 1)
            abort();
        posenc_reader *r;
        if (posenc_reader_open_index(c, 0, &r, &err) == POSENC_OK) {
            drain_reader(r);
            posenc_reader_close(r);
        }
        posenc_container_close(c);
    }

    /* 3. the bytes as a stream: header, then the data decoder reading until it fails */
    struct memsrc m = { data, size, 0 };
    if (pe_npy_header_read(mem_read, &m, "fuzz", 1, &h, &err) == POSENC_OK) {
        pe_npy_data d;
        pe_npy_data_init(&d, &h, mem_read, &m, "fuzz");
        size_t es = posenc_dtype_size(h.info.dtype);
        static unsigned char buf[1 << 16];
        uint64_t chunk = sizeof buf / es;
        for (uint64_t done = 0; done < h.nelem;) {
            uint64_t k = h.nelem - done < chunk ? h.nelem - done : chunk;
            if (pe_npy_data_read(&d, buf, k, &err) != POSENC_OK)
                break;
            done += k;
        }
        pe_npy_data_free(&d);
    }
    return 0;
}
