/* formats/files/npyfmt.h: the NPY header and data codec shared by npy.c, npz.c and dir.c (internal).
 *
 * The codec reads through a byte source (a FILE, a zip member) so the same code parses .npy files,
 * NPZ members and directory entries, streaming, without seeking. */
#ifndef POSENC_FORMATS_NPYFMT_H
#define POSENC_FORMATS_NPYFMT_H

#include <stdint.h>
#include <stdio.h>

#include "posenc/io.h"

#define PE_NPY_MAX_HEADER (1u << 20)           /* header text above 1 MiB is refused */
#define PE_NPY_FORTRAN_MAX ((uint64_t)1 << 30)  /* Fortran arrays are transposed in memory */
#define PE_NPY_HEADER_CAP 640                  /* pe_npy_header_format never needs more */

/* Read exactly n bytes into buf or fail (EFORMAT "'path': truncated ..." / EIO). */
typedef posenc_status (*pe_npy_src)(void *ctx, void *buf, size_t n, posenc_error *err);

typedef struct pe_npy_header {
    posenc_array_info info;   /* dtype, ndim, shape; name left empty */
    int major, minor;         /* version */
    int fortran;              /* fortran_order True and the layout differs from C order */
    int swap;                 /* data byte order differs from the host's */
    uint64_t data_offset;     /* bytes before the data */
    uint64_t nelem, nbytes;
    char descr[40];
    int opaque;               /* '<V2' not known to be bf16: listed (info.dtype bf16 holds its
                               * 2-byte size), refused as data by pe_npy_readable */
} pe_npy_header;

/* Read magic, version and header dict from src. path names the file in messages. */
posenc_status pe_npy_header_read(pe_npy_src src, void *ctx, const char *path,
                                     int assume_bf16, pe_npy_header *h, posenc_error *err);
/* Parse the dict text (len bytes) alone into h (info, fortran, swap, nelem, nbytes, descr). */
posenc_status pe_npy_header_parse(const char *text, size_t len, const char *path,
                                      int assume_bf16, pe_npy_header *h, posenc_error *err);
/* POSENC_OK, or the opaque-dtype error for an array that cannot be read as data. */
posenc_status pe_npy_readable(const pe_npy_header *h, const char *path,
                                  posenc_error *err);
/* The NPY descr of an opaque array ("<V2") with readable 0 and its size, for a backend's
 * array_type hook; NULL for every array posenc reads. */
const char *pe_npy_array_type(const pe_npy_header *h, uint64_t *nbytes, int *readable);

/* Write the header numpy writes for a (version 1.0, or 2.0 when it does not fit) into buf
 * (PE_NPY_HEADER_CAP bytes); returns its length, a multiple of 64. */
size_t pe_npy_header_format(const posenc_array_info *a, unsigned char *buf);

/* Decodes the data part of an NPY stream: byteswaps, transposes Fortran order. */
typedef struct pe_npy_data {
    pe_npy_header h;
    pe_npy_src src;
    void *ctx;
    const char *path;
    unsigned char *cbuf;      /* Fortran arrays: the whole array in C order */
    uint64_t done;            /* bytes handed out */
} pe_npy_data;

void pe_npy_data_init(pe_npy_data *d, const pe_npy_header *h, pe_npy_src src,
                          void *ctx, const char *path);
posenc_status pe_npy_data_read(pe_npy_data *d, void *buf, uint64_t nelem,
                                   posenc_error *err);
void pe_npy_data_free(pe_npy_data *d);

/* A FILE as a byte source (what names the part being read in "truncated" messages). */
typedef struct pe_npy_fsrc {
    FILE *fp;
    const char *path;
} pe_npy_fsrc;
posenc_status pe_npy_fsrc_read(void *ctx, void *buf, size_t n, posenc_error *err);

/* Open path ("-" = stdin) and read its NPY header, leaving *fp at the data. For regular files
 * the data length is checked against the file size. *fp is stdin for "-" (do not fclose it);
 * *regular tells whether the file can be reopened and seeked. */
posenc_status pe_npy_open_file(const char *path, int assume_bf16, pe_npy_header *h,
                                   FILE **fp, int *regular, posenc_error *err);

/* Reader state for a plain .npy file (used by npy.c and dir.c). */
typedef struct pe_npy_freader {
    FILE *fp;
    int own;                  /* fclose fp on close */
    char *vbuf;               /* stdio buffer */
    pe_npy_fsrc src;
    pe_npy_data d;
} pe_npy_freader;
/* Reopen a regular file at its data (h from an earlier pe_npy_open_file) or take over fp
 * (own = 0, already positioned at the data). Caller frees with pe_npy_freader_free. */
posenc_status pe_npy_freader_new(const char *path, FILE *fp, const pe_npy_header *h,
                                     pe_npy_freader **out, posenc_error *err);
void pe_npy_freader_free(pe_npy_freader *r);

/* Does the parsed metadata (NULL: none) say {"posenc_dtypes": {name: "bf16"}}, the way NPZ and
 * directory outputs mark their '<V2' members as bfloat16? */
struct cJSON;
int pe_npy_dtypes_bf16(const struct cJSON *meta, const char *name);

/* Size of the stdio buffers backends install (large writes and reads go straight through). */
#define PE_IO_BUFSIZE ((size_t)1 << 20)

#endif
