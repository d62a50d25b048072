/* formats/zip.h: a ZIP reader and writer sized for NPZ (internal). ZIP64 throughout, stored and
 * deflated members, streaming in both directions, every offset and size checked. */
#ifndef POSENC_FORMATS_ZIP_H
#define POSENC_FORMATS_ZIP_H

#include <stdint.h>
#include <stdio.h>

#include "posenc/error.h"

#define POSENC_ZIP_MAX_MEMBERS 65536
#define POSENC_ZIP_MAX_NAME 4096

typedef struct posenc_zip_entry {
    char *name;               /* NUL-terminated (a name holding a NUL is refused) */
    uint16_t method, flags;
    uint32_t crc;
    uint64_t csize, usize;
    uint64_t offset;          /* of the local header */
} posenc_zip_entry;

typedef struct posenc_zip {
    char *path;
    uint64_t size;            /* file size */
    size_t n;
    posenc_zip_entry *e;
} posenc_zip;

/* Index the central directory of path. Caller frees with posenc_zip_close. */
posenc_status posenc_zip_open(const char *path, posenc_zip **out, posenc_error *err);
void posenc_zip_close(posenc_zip *z);

/* Uncompressed bytes of one member, in order. CRC-32 and the declared size are verified when
 * the last byte has been read; inflating past the declared size is an error. */
typedef struct posenc_zip_stream posenc_zip_stream;
/* fp: a stream on the zip file to use (borrowed), or NULL to open a new one (owned). */
posenc_status posenc_zip_stream_open(const posenc_zip *z, size_t i, FILE *fp,
                                     posenc_zip_stream **out, posenc_error *err);
/* Exactly n bytes or an error (EFORMAT when the member ends first). */
posenc_status posenc_zip_stream_read(posenc_zip_stream *s, void *buf, size_t n,
                                     posenc_error *err);
/* posenc_npy_src-compatible wrapper (ctx = the stream). */
posenc_status posenc_zip_stream_src(void *ctx, void *buf, size_t n, posenc_error *err);
void posenc_zip_stream_close(posenc_zip_stream *s);

/* Writer on a seekable FILE positioned at offset 0 (borrowed; not closed). */
typedef struct posenc_zipw posenc_zipw;
posenc_status posenc_zipw_new(FILE *fp, const char *path, posenc_zipw **out, posenc_error *err);
/* Write the ZIP64 end records even when the archive does not need them (tests, and readers
 * that want to exercise them). */
void posenc_zipw_force_zip64(posenc_zipw *zw);
/* Start a member; deflate = 1 for method 8 (zlib default level), 0 for stored. */
posenc_status posenc_zipw_begin(posenc_zipw *zw, const char *name, int deflate,
                                posenc_error *err);
posenc_status posenc_zipw_data(posenc_zipw *zw, const void *buf, size_t n, posenc_error *err);
/* Finish the current member (patches CRC and sizes in its local header). */
posenc_status posenc_zipw_end(posenc_zipw *zw, posenc_error *err);
/* Write the central directory and end records (ZIP64 ones when needed). */
posenc_status posenc_zipw_finish(posenc_zipw *zw, posenc_error *err);
void posenc_zipw_free(posenc_zipw *zw);

#endif
