/* formats/files/zip.h: a ZIP reader and writer sized for NPZ (internal). ZIP64 throughout, stored and
 * deflated members, streaming in both directions, every offset and size checked. */
#ifndef POSENC_FORMATS_ZIP_H
#define POSENC_FORMATS_ZIP_H

#include <stdint.h>
#include <stdio.h>

#include "posenc/error.h"

#define PE_ZIP_MAX_MEMBERS 65536
#define PE_ZIP_MAX_NAME 4096

typedef struct pe_zip_entry {
    char *name;               /* NUL-terminated (a name holding a NUL is refused) */
    uint16_t method, flags;
    uint32_t crc;
    uint64_t csize, usize;
    uint64_t offset;          /* of the local header */
} pe_zip_entry;

typedef struct pe_zip {
    char *path;
    uint64_t size;            /* file size */
    size_t n;
    pe_zip_entry *e;
} pe_zip;

/* Index the central directory of path. Caller frees with pe_zip_close. */
posenc_status pe_zip_open(const char *path, pe_zip **out, posenc_error *err);
void pe_zip_close(pe_zip *z);

/* Uncompressed bytes of one member, in order. CRC-32 and the declared size are verified when
 * the last byte has been read; inflating past the declared size is an error. */
typedef struct pe_zip_stream pe_zip_stream;
/* fp: a stream on the zip file to use (borrowed), or NULL to open a new one (owned). */
posenc_status pe_zip_stream_open(const pe_zip *z, size_t i, FILE *fp,
                                     pe_zip_stream **out, posenc_error *err);
/* Exactly n bytes or an error (EFORMAT when the member ends first). */
posenc_status pe_zip_stream_read(pe_zip_stream *s, void *buf, size_t n,
                                     posenc_error *err);
/* pe_npy_src-compatible wrapper (ctx = the stream). */
posenc_status pe_zip_stream_src(void *ctx, void *buf, size_t n, posenc_error *err);
void pe_zip_stream_close(pe_zip_stream *s);

/* Writer on a seekable FILE positioned at offset 0 (borrowed; not closed). */
typedef struct pe_zipw pe_zipw;
posenc_status pe_zipw_new(FILE *fp, const char *path, pe_zipw **out, posenc_error *err);
/* Write the ZIP64 end records even when the archive does not need them (tests, and readers
 * that want to exercise them). */
void pe_zipw_force_zip64(pe_zipw *zw);
/* Start a member; deflate = 1 for method 8 (zlib default level), 0 for stored. */
posenc_status pe_zipw_begin(pe_zipw *zw, const char *name, int deflate,
                                posenc_error *err);
posenc_status pe_zipw_data(pe_zipw *zw, const void *buf, size_t n, posenc_error *err);
/* Finish the current member (patches CRC and sizes in its local header). */
posenc_status pe_zipw_end(pe_zipw *zw, posenc_error *err);
/* Write the central directory and end records (ZIP64 ones when needed). */
posenc_status pe_zipw_finish(pe_zipw *zw, posenc_error *err);
void pe_zipw_free(pe_zipw *zw);

#endif
