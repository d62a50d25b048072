/* posenc/io.h: reading and writing arrays in every format posenc speaks.
 *
 * One abstraction for NPY, NPZ, a directory of NPY files, HDF5, safetensors, C headers and raw
 * little-endian .bin + .json sidecars. Readers and writers stream: no call needs a whole array in
 * memory. Writers write to a temporary file beside the target and rename it into place on commit,
 * so a failed run leaves no partial output. */
#ifndef POSENC_IO_H
#define POSENC_IO_H

#include <stdint.h>
#include <stdio.h>

#include "posenc/dtype.h"
#include "posenc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum posenc_format {
    POSENC_FMT_AUTO = 0,
    POSENC_FMT_NPY,
    POSENC_FMT_NPZ,
    POSENC_FMT_DIR,         /* a directory: one NAME.npy per array plus meta.json */
    POSENC_FMT_HDF5,
    POSENC_FMT_SAFETENSORS,
    POSENC_FMT_CHEADER,     /* .h: static const arrays plus #defines (write only) */
    POSENC_FMT_RAW,         /* .bin + .json sidecar (dtype, shape, byte offset per array) */
    POSENC_FMT_GGUF         /* llama.cpp's GGUF model files (reads v2/v3, writes v3) */
} posenc_format;

/* "npy", "npz", "dir", "hdf5"/"h5", "safetensors", "header"/"h", "raw"/"bin", "gguf". */
POSENC_API POSENC_NODISCARD
posenc_status posenc_format_parse(const char *s, posenc_format *out, posenc_error *err);
POSENC_API
const char *posenc_format_name(posenc_format f);
/* By extension of path (.npy .npz .h5 .hdf5 .safetensors .h .bin
 * .gguf); "-" is NPY; an existing
 * directory or a path ending in '/' is DIR. POSENC_FMT_AUTO when nothing matches. */
POSENC_API
posenc_format posenc_format_guess(const char *path);
/* 1 when format f's library may be called beside other threads (0 for HDF5). */
POSENC_API
int posenc_format_thread_safe(posenc_format f);
/* 1 when a file of format f holds exactly one array (NPY). */
POSENC_API
int posenc_format_one_array(posenc_format f);
/* 1 when "-" (standard input or output, one array) can be format f (NPY only). */
POSENC_API
int posenc_format_to_stdout(posenc_format f);

/* Split "file.npz:q" / "file.h5:/a/b" / "file.safetensors:name" into path and member. The member
 * part is recognised only after a known container extension, so "C:\x" or "a:b.npy" stay whole.
 * path and member are written NUL-terminated (member "" when absent). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_spec_split(const char *spec, char *path, size_t path_len, char *member,
                                size_t member_len, posenc_error *err);

typedef struct posenc_read_opts {
    int assume_bf16;           /* read NPY '<V2'/'|V2' as bfloat16 (ml_dtypes files) */
    posenc_format format;      /* POSENC_FMT_AUTO: sniff the magic bytes */
} posenc_read_opts;

/* ---- containers: list what a file holds ---- */
typedef struct posenc_container posenc_container;

/* Open any readable file (or "-" for NPY on stdin) and index its arrays without reading data.
 * Caller frees with posenc_container_close. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_container_open(const char *path, const posenc_read_opts *opts,
                                    posenc_container **out, posenc_error *err);
POSENC_API
posenc_format posenc_container_format(const posenc_container *c);
POSENC_API
size_t posenc_container_count(const posenc_container *c);
/* Borrowed; valid until the container is closed. */
POSENC_API
const posenc_array_info *posenc_container_array(const posenc_container *c, size_t i);
/* Metadata as a JSON object text (NPZ/dir meta.json, safetensors __metadata__, HDF5 attributes,
 * raw sidecar "metadata", GGUF key-value pairs); borrowed; NULL when the file carries none. */
POSENC_API
const char *posenc_container_meta(const posenc_container *c);
/* The type of each metadata key, for formats whose metadata is typed (GGUF): a JSON object
 * {"key": "uint32", "k2": "array[string]", ...} in the file's order, naming the same keys as
 * posenc_container_meta; borrowed; NULL for other formats. */
POSENC_API
const char *posenc_container_meta_types(const posenc_container *c);
/* The format's own element type of array i, for formats that have their own names (GGUF: "F32",
 * "BF16", "Q8_0"); borrowed; NULL for other formats or a bad i. *nbytes (may be NULL) gets the
 * array's size in the file and *readable (may be NULL) 0 when posenc cannot read its data: a
 * quantized GGUF tensor is listed with its logical shape and dtype u8 as a placeholder, and
 * opening a reader on it fails with POSENC_EUNSUPPORTED. */
POSENC_API
const char *posenc_container_array_type(const posenc_container *c, size_t i, uint64_t *nbytes,
                                        int *readable);
POSENC_API
void posenc_container_close(posenc_container *c);

/* ---- readers: stream one array ---- */
typedef struct posenc_reader posenc_reader;

/* Open one array by spec ("q.npy", "dump.npz:q", "x.h5:/layer0/q", "m.safetensors:wpe.weight",
 * "-" for NPY on stdin). A container with exactly one array needs no member name.
 * Caller frees with posenc_reader_close. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_reader_open(const char *spec, const posenc_read_opts *opts,
                                 posenc_reader **out, posenc_error *err);
/* Open array i of an open container (the container must outlive the reader). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_reader_open_index(posenc_container *c, size_t i, posenc_reader **out,
                                       posenc_error *err);
/* Borrowed; valid until the reader is closed. */
POSENC_API
const posenc_array_info *posenc_reader_info(const posenc_reader *r);
/* The format of the file the reader reads (detected from its bytes when it was opened). */
POSENC_API
posenc_format posenc_reader_format(const posenc_reader *r);
/* Read the next nelem elements in C order, native byte order, in the array's own dtype.
 * Reading past the end, or a file shorter than its header says, is POSENC_EFORMAT. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_reader_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err);
POSENC_API
void posenc_reader_close(posenc_reader *r);

/* Read a whole (small) array converted to dtype `as`; caller frees *data with free(). Refuses
 * arrays larger than max_bytes after conversion. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_read_all(const char *spec, const posenc_read_opts *opts, posenc_dtype as,
                              uint64_t max_bytes, posenc_array_info *info, void **data,
                              posenc_error *err);

/* ---- writers ---- */
typedef struct posenc_writer posenc_writer;

typedef struct posenc_write_opts {
    posenc_format format;   /* POSENC_FMT_AUTO: from the extension */
    int compress;           /* NPZ: deflate members; HDF5: chunked gzip + shuffle (level 4) */
} posenc_write_opts;

/* Start writing path ("-" = one array as NPY on stdout). Nothing appears at path until commit;
 * the commit replaces a file already there (posenc(1) refuses to replace one of its run's
 * inputs: that rule is the program's, not the library's). Caller ends with
 * posenc_writer_commit or posenc_writer_abort (both free the writer). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_writer_open(const char *path, const posenc_write_opts *opts,
                                 posenc_writer **out, posenc_error *err);
/* Attach metadata: key and a JSON value text ("1e7", "\"neox\"", "[1,2]"). Call before the first
 * write. Formats store it as they can (see posenc-formats(5)); NPY alone drops it. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_writer_meta(posenc_writer *w, const char *key, const char *json_value,
                                 posenc_error *err);
/* The GGUF type a metadata value gets (posenc-formats(5)); the other formats keep the JSON text
 * either way. POSENC_META_AUTO follows the JSON value: a string, a bool, a number as float64, an
 * array of strings, bools or numbers (float64) as an array of that type; anything else as a
 * string holding the JSON text; null leaves the key out of a GGUF file. */
typedef enum posenc_meta_type {
    POSENC_META_AUTO = 0,
    POSENC_META_STRING,
    POSENC_META_BOOL,
    POSENC_META_U32,
    POSENC_META_I32,
    POSENC_META_U64,
    POSENC_META_I64,
    POSENC_META_F32,
    POSENC_META_F64,
    POSENC_META_I32_ARRAY,
    POSENC_META_F32_ARRAY,
    POSENC_META_F64_ARRAY,
    POSENC_META_STRING_ARRAY
} posenc_meta_type;
/* posenc_writer_meta with a type: POSENC_EINVAL when the value is not of that type (an integer
 * out of the type's range, a float32 beyond FLT_MAX, a string for a number...). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_writer_meta_typed(posenc_writer *w, const char *key, posenc_meta_type type,
                                       const char *json_value, posenc_error *err);
/* Declare every array before writing any data; arrays are then written in declaration order. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_writer_declare(posenc_writer *w, const posenc_array_info *a,
                                    posenc_error *err);
/* Append nelem elements (declared dtype, native order) to the current array; moves on to the
 * next declared array when one is complete. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_writer_write(posenc_writer *w, const void *data, uint64_t nelem,
                                  posenc_error *err);
/* Finish: every declared array must be complete. Flushes, renames into place, frees w. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_writer_commit(posenc_writer *w, posenc_error *err);
/* Remove the temporary file and free w. NULL is fine. */
POSENC_API
void posenc_writer_abort(posenc_writer *w);
/* The format the writer writes. */
POSENC_API
posenc_format posenc_writer_format(const posenc_writer *w);

/* ---- temporaries ----
 * Every writer writes to a temporary beside its target (".posenc-tmp-PID-XXXXXX-NAME") that is
 * renamed into place on commit and removed on failure. */

/* Remove every temporary of this run that is still open. Async-signal-safe: a program's
 * SIGINT/SIGTERM/SIGHUP/SIGPIPE handler calls it before re-raising the signal. */
POSENC_API
void posenc_tmp_remove_all(void);

/* What a program's signal handler does with sig (async-signal-safe):
 *   POSENC_TMP_SIGNAL_DIE   the run's temporaries are removed; die of the signal
 *   POSENC_TMP_SIGNAL_HELD  outputs are being renamed into place: return; the signal is raised
 *                           again when the renames end
 *   POSENC_TMP_SIGNAL_DONE  the run's outputs are committed: the old files are gone, so the
 *                           run ends with the status it had decided, not of the signal */
enum { POSENC_TMP_SIGNAL_DIE = 0, POSENC_TMP_SIGNAL_HELD = 1, POSENC_TMP_SIGNAL_DONE = 2 };
POSENC_API
int posenc_tmp_signal(int sig);

/* Temporaries left by interrupted runs (their process is gone, or older than a day) are removed
 * when a writer first creates one in the same directory. The number removed since the last call,
 * and the first directory (into dir[cap]); resets the count. */
POSENC_API
size_t posenc_tmp_stale_removed(char *dir, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
