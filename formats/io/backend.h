/* formats/io/backend.h: the internal contract between io.c (generic containers, readers and
 * writers) and the per-format backends (npy.c, npz.c, dir.c, hdf5.c, safetensors.c,
 * cheader.c, raw.c, gguf.c). Not installed. */
#ifndef POSENC_FORMATS_BACKEND_H
#define POSENC_FORMATS_BACKEND_H

#include <stdio.h>

#include "posenc/io.h"

struct pe_backend;
struct pe_strbuf;
struct posenc_gguf_rope;

struct posenc_container {
    const struct pe_backend *be;
    char *path;                   /* file path (no member part); "-" for stdin */
    posenc_read_opts opts;
    size_t n;                     /* arrays indexed by be->open */
    posenc_array_info *arrays;    /* owned, malloc'd by the backend, freed by io.c */
    char *meta;                   /* JSON object text or NULL; owned (malloc) */
    char *meta_types;             /* JSON object key -> type name, or NULL; owned (malloc) */
    void *impl;                   /* backend state, released by be->close */
};

struct posenc_reader {
    posenc_container *c;
    int own_container;            /* close c with the reader (posenc_reader_open) */
    size_t index;                 /* which array of c */
    posenc_array_info info;
    uint64_t nelem;               /* elements in the array */
    uint64_t pos;                 /* elements returned so far (maintained by io.c) */
    void *impl;                   /* backend state, released by be->reader_close */
};

struct posenc_writer {
    const struct pe_backend *be;
    char *path;                   /* final path ("-" = stdout) */
    posenc_write_opts opts;
    size_t n, cap;                /* declared arrays */
    posenc_array_info *arrays;
    uint64_t *nelem;              /* element count of each declared array */
    size_t cur;                   /* array being written */
    uint64_t done;                /* elements of arrays[cur] written so far */
    size_t nmeta;
    char **meta_keys, **meta_vals; /* JSON value texts */
    unsigned char *meta_types;     /* posenc_meta_type of each */
    struct posenc_gguf_rope *gguf_rope; /* posenc_gguf_writer_rope's copy (GGUF), owned */
    int started;                  /* be->w_start has run */
    void *impl;                   /* backend state */
};

typedef struct pe_backend {
    posenc_format format;
    /* Reading (NULL when the format is write-only). */
    posenc_status (*open)(posenc_container *c, posenc_error *err); /* index arrays + meta */
    posenc_status (*reader_open)(posenc_reader *r, posenc_error *err);
    /* Next nelem elements of r's array: C order, native byte order, the array's dtype. */
    posenc_status (*read)(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err);
    void (*reader_close)(posenc_reader *r);
    void (*close)(posenc_container *c);
    /* Writing (NULL when the format is read-only). io.c has checked names, shapes and that
     * every array is declared before w_start; writes arrive in declaration order. */
    posenc_status (*w_start)(posenc_writer *w, posenc_error *err);
    posenc_status (*w_write)(posenc_writer *w, const void *data, uint64_t nelem,
                             posenc_error *err);
    posenc_status (*w_commit)(posenc_writer *w, posenc_error *err); /* finish, rename into place */
    void (*w_abort)(posenc_writer *w);                             /* remove temporaries */
    /* The format's own type name of array i (borrowed), its size in the file and whether posenc
     * can read it; NULL hook for formats without names of their own. */
    const char *(*array_type)(const posenc_container *c, size_t i, uint64_t *nbytes,
                              int *readable);
} pe_backend;

extern const pe_backend pe_backend_npy;
extern const pe_backend pe_backend_npz;
extern const pe_backend pe_backend_dir;
extern const pe_backend pe_backend_hdf5;
extern const pe_backend pe_backend_safetensors;
extern const pe_backend pe_backend_cheader;
extern const pe_backend pe_backend_raw;
extern const pe_backend pe_backend_gguf;

/* ---- the format table (formats/io/registry.c) ---- */

/* The backend of format f; NULL for POSENC_FMT_AUTO. */
const pe_backend *pe_backend_for(posenc_format f);
/* Which format the file at path is, from its first bytes, then its name ("-" is NPY; a pipe or
 * device goes by its name, since peeking would consume it). */
posenc_status pe_format_sniff(const char *path, posenc_format *out, posenc_error *err);

/* ---- helpers shared by backends (formats/io/fileutil.c) ---- */

/* The raw format's data and sidecar paths for path (either one, or a stem): X.bin and X.json;
 * both malloc'd (formats/files/raw.c). */
posenc_status pe_raw_paths(const char *path, char **bin, char **json, posenc_error *err);

/* Open path for reading. regular_only refuses anything but a regular file (a FIFO, a socket, a
 * device) before open(2) could block on it: the files a reader opens by a derived name (a raw
 * sidecar and data file, meta.json, a directory member). A path the user named may be a FIFO. A
 * directory is refused either way. The file is recorded as an input of the run
 * (pe_input_add), so no output can replace it. */
posenc_status pe_open_input(const char *path, int regular_only, FILE **fp, posenc_error *err);

/* Create a temporary file beside final_path (".posenc-tmp-XXXXXX-<basename>") for writing.
 * *tmp_path is malloc'd (caller frees). */
posenc_status pe_tmp_create(const char *final_path, char **tmp_path, FILE **fp,
                                posenc_error *err);
/* Flush, fsync and close fp (may be NULL; tmp_path alone is fsynced by name) and rename
 * tmp_path onto final_path (followed through its symlinks): at once outside a group, at the
 * outermost pe_tmp_group_end inside one. On failure the temporary is removed. tmp_path stays
 * the caller's to free; NULL (a device written in place) only closes fp. */
posenc_status pe_tmp_commit(FILE *fp, const char *tmp_path, const char *final_path,
                                posenc_error *err);
/* A set of outputs committed as one unit (fileutil.c): every pe_tmp_commit between
 * pe_tmp_group_begin and its pe_tmp_group_end is renamed into place together, under a lock
 * of the targets' directories, or none is (the old files kept, those already renamed
 * restored). Groups nest (the outermost end commits); each begin is closed by one end or one
 * abort, and an abort discards the whole queue (an outer end then fails). Per thread. */
void pe_tmp_group_begin(void);
posenc_status pe_tmp_group_end(posenc_error *err);
void pe_tmp_group_abort(void);
/* Close fp (may be NULL) and unlink tmp_path (may be NULL). */
void pe_tmp_discard(FILE *fp, const char *tmp_path);

/* Early write-out of a temporary being streamed: a writer calls pe_tmp_writeout after each
 * n bytes of data it hands to fp (a temporary of pe_tmp_create), with its own pe_writeout
 * (zeroed at the start). Every PE_WRITEOUT_BYTES it flushes fp and asks the kernel to start
 * writing the file's dirty pages to disk without waiting for them (Linux sync_file_range), so
 * that the disk works while the rest is computed and the fsync of pe_tmp_commit waits only
 * for the tail. It never fails: a write error shows in the commit's fflush and fsync, which
 * stay what makes the file durable. */
#define PE_WRITEOUT_BYTES ((uint64_t)8 << 20)
typedef struct pe_writeout {
    uint64_t pending;            /* bytes handed over since the last write-out */
} pe_writeout;
void pe_tmp_writeout(FILE *fp, pe_writeout *wo, uint64_t n);

/* Check that json_value (a JSON text) is a value of type t (posenc_meta_type) and, when out is
 * not NULL, append its GGUF encoding (uint32 type, then the value) to out and add the number of
 * values it holds (1, or 1 + the elements of an array) to *nvalues (may be NULL). A
 * POSENC_META_AUTO null appends nothing. Messages name path and key (formats/files/gguf_write.c). */
posenc_status pe_gguf_meta_encode(struct pe_strbuf *out, int t, const char *json_value,
                                      const char *path, const char *key, uint64_t *nvalues,
                                      posenc_error *err);

/* The writer half of pe_backend_gguf (formats/files/gguf_write.c). */
posenc_status pe_gguf_w_start(posenc_writer *w, posenc_error *err);
posenc_status pe_gguf_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                  posenc_error *err);
posenc_status pe_gguf_w_commit(posenc_writer *w, posenc_error *err);
void pe_gguf_w_abort(posenc_writer *w);

/* The writer's metadata as one JSON object text {"key": value, ...}; malloc'd, caller frees.
 * NULL on allocation failure. */
char *pe_writer_meta_json(const posenc_writer *w);

/* 1 on a little-endian host. */
int pe_host_is_le(void);

/* Readers of little-endian elements stored one after another from an offset of a file
 * (safetensors tensors, GGUF tensors, raw data): pe_span_open opens data_path (a regular file
 * only: a reader reopens the file it indexed, and a FIFO would block or hold other data),
 * seeks to offset and keeps the stream in r->impl; pe_span_read reads exactly nelem
 * elements of r->info.dtype (byteswapped on big-endian hosts), naming `what` ("tensor",
 * "array") when the file is truncated; pe_span_close releases it (a failed open has
 * released it already). */
posenc_status pe_span_open(posenc_reader *r, const char *data_path, uint64_t offset,
                               posenc_error *err);
posenc_status pe_span_read(posenc_reader *r, void *buf, uint64_t nelem, const char *what,
                               posenc_error *err);
void pe_span_close(posenc_reader *r);

/* fread exactly n bytes or fail with "'path': truncated ..." (EFORMAT) or EIO. */
posenc_status pe_read_exact(FILE *fp, void *buf, size_t n, const char *path, const char *what,
                                posenc_error *err);
/* fwrite exactly n bytes or fail with EIO naming path. */
posenc_status pe_write_exact(FILE *fp, const void *buf, size_t n, const char *path,
                                 posenc_error *err);

#endif
