/* fuzz_npz.c: bytes -> zip/NPZ. The bytes are an archive on a regular file (a memfd): index it
 * as NPZ through the public API and read every array, then walk every zip member with the zip
 * layer itself (stored and deflated streams, CRC checks, size limits). */
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
#include "formats/files/zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define READ_CAP ((uint64_t)16 << 20) /* bytes read per member (a small input can inflate far) */

static int memfd = -1;
static unsigned char buf[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    posenc_error err;
    if (memfd < 0 && (memfd = memfd_create("fuzz_npz", 0)) < 0)
        abort();
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);

    posenc_read_opts o = { .assume_bf16 = (int)(size & 1), .format = POSENC_FMT_NPZ };
    posenc_container *c;
    if (posenc_container_open(path, &o, &c, &err) == POSENC_OK) {
        (void)posenc_container_meta(c);
        for (size_t i = 0; i < posenc_container_count(c); i++) {
            posenc_reader *r;
            if (posenc_reader_open_index(c, i, &r, &err) != POSENC_OK)
                continue;
            const posenc_array_info *a = posenc_reader_info(r);
            uint64_t n;
            if (posenc_shape_size(a->ndim, a->shape, a->dtype, &n, NULL, NULL) != POSENC_OK)
                abort();
            size_t es = posenc_dtype_size(a->dtype);
            uint64_t chunk = sizeof buf / es;
            for (uint64_t done = 0; done < n && done * es < READ_CAP;) {
                uint64_t k = n - done < chunk ? n - done : chunk;
                if (posenc_reader_read(r, buf, k, &err) != POSENC_OK)
                    break;
                done += k;
            }
            posenc_reader_close(r);
        }
        posenc_container_close(c);
    }

    pe_zip *z;
    if (pe_zip_open(path, &z, &err) == POSENC_OK) {
        for (size_t i = 0; i < z->n; i++) {
            pe_zip_stream *s;
            if (pe_zip_stream_open(z, i, NULL, &s, &err) != POSENC_OK)
                continue;
            uint64_t left = z->e[i].usize < READ_CAP ? z->e[i].usize : READ_CAP;
            while (left > 0) {
                size_t k = left < sizeof buf ? (size_t)left : sizeof buf;
                if (pe_zip_stream_read(s, buf, k, &err) != POSENC_OK)
                    break;
                left -= k;
            }
            pe_zip_stream_close(s);
        }
        pe_zip_close(z);
    }
    return 0;
}
