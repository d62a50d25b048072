/* formats/io/out.h (internal): the one output pipeline of gen, apply and convert.
 *
 *     plan:    pe_out_plan       which arrays (want), their bytes, the size limit (--force)
 *     write:   pe_out_run        open the writer (a temporary renamed into place on commit,
 *                                removed on failure or a signal: io.h), metadata (a callback),
 *                                declare the arrays, stream their rows from a table source
 *                                (lib/encodings/tables.h) through ONE writer thread, commit
 *
 * pe_out_run is three stages a caller that streams its own values can take one by one (apply,
 * whose rotation is split between two threads, formats/engines/applyrun.c):
 *
 *     pe_out_open    the limit's refusal, open, metadata, declare; on failure nothing is left
 *     (the caller writes the declared arrays' values in order: posenc_writer_write)
 *     pe_out_commit  rename into place, or pe_out_abort: remove the temporary
 *                    (pe_out_commit_all: several writers as one unit)
 *
 * The thread: the producer fills the rows of chunk k+1 while the writer thread converts chunk k
 * to the output dtype and writes it (the conversion, NPZ CRC and page-cache copy cost about as
 * much as the trigonometry). Two slots; rows are written in order. A source that does I/O itself
 * (t->pure == 0: convert, a learned table streamed from its checkpoint) runs without the thread,
 * so no format library is ever called from two threads. */
#ifndef PE_OUT_H
#define PE_OUT_H

#include <stdint.h>

#include "posenc/io.h"
#include "formats/engines/positions.h"
#include "lib/encodings/tables.h"

#define PE_OUT_SIZE_LIMIT ((uint64_t)4 << 30) /* bytes of output without --force */

typedef struct pe_out {
    /* set by the caller */
    const char *path;            /* "-": NPY on stdout */
    posenc_write_opts wopts;     /* format resolved (not AUTO) */
    pe_table *t;
    const int *want;             /* t->narr flags, NULL = every array */
    uint64_t size_limit;         /* 0: PE_OUT_SIZE_LIMIT */
    int force;                   /* --force: no size limit */
    /* set by pe_out_plan */
    uint64_t bytes, values;      /* of the wanted arrays, as written */
    int nwant;
    int over_limit;              /* bytes > size_limit without force */
} pe_out;

/* Size the wanted arrays: bytes, values, nwant, and over_limit when the bytes exceed the limit
 * without force (the command words the refusal; pe_out_run then refuses too). POSENC_ERANGE
 * when a shape or the sum overflows. */
posenc_status pe_out_plan(pe_out *o, posenc_error *err);

/* Metadata before the arrays are declared: cmd's posenc_writer_meta calls. */
typedef posenc_status (*pe_out_meta_fn)(void *ctx, posenc_writer *w, posenc_error *err);

/* Open, metadata (meta may be NULL), declare, stream, commit, after pe_out_plan. On failure
 * nothing is left at o->path. */
posenc_status pe_out_run(pe_out *o, pe_out_meta_fn meta, void *ctx, posenc_error *err);

/* The stages of pe_out_run. pe_out_open, after pe_out_plan: refuses a plan over the limit
 * (POSENC_ERANGE, pe_out_limit_message's words), opens o->path, writes the metadata (meta may
 * be NULL), declares the wanted arrays of o->t (their info; t->fill is not called) and sets *w;
 * on failure the writer is aborted and nothing is left at o->path. pe_out_commit renames the
 * temporary into place (removed when that fails) and pe_out_abort removes it; both free *w and
 * set it to NULL (a NULL *w is fine). */
posenc_status pe_out_open(pe_out *o, pe_out_meta_fn meta, void *ctx, posenc_writer **w,
                          posenc_error *err);
posenc_status pe_out_commit(posenc_writer **w, posenc_error *err);
void pe_out_abort(posenc_writer **w);
/* pe_out_commit of the n writers w[0..n-1] as one unit: every file of every writer replaced,
 * or none (the old files kept); on failure the writers not yet committed are aborted. All
 * w[i] are NULL afterwards. */
posenc_status pe_out_commit_all(posenc_writer **w, size_t n, posenc_error *err);

/* The refusal of a plan over the limit, the one wording of gen, apply, convert and pe_out_open:
 * "'PATH': the output would be 6.0 GiB (DETAIL), over the 4 GiB limit; pass HINT or --force".
 * detail (what the bytes are, "262144 x 8192 x 2 arrays, f32") and hint (what else makes the
 * output smaller, "a smaller --seq-len") may be NULL. */
void pe_out_limit_message(const pe_out *o, const char *path, const char *detail,
                          const char *hint, char *buf, size_t len);

/* "6.0 GiB", "512.0 MiB", "12 bytes" */
void pe_out_human_size(uint64_t n, char *buf, size_t len);

/* The query positions of --positions (p borrowed; NULL = 0..n-1) as a table's position source. */
pe_table_pos pe_out_positions(const pe_positions *p);

/* A stored table read row by row from an open reader (rows asked in increasing order; rows
 * before the next one asked are read and dropped), values in the reader's dtype: the row
 * source of a learned table streamed from its checkpoint. */
typedef struct pe_out_rows {
    posenc_reader *r;
    int64_t next;                /* the next row the reader would return */
    int64_t width;
} pe_out_rows;
posenc_status pe_out_rows_read(void *ctx, int64_t row0, int64_t n, void *buf,
                               posenc_error *err);

/* A whole float32 table in memory ([rows, width]): the row source of a learned table at
 * --positions. ctx is a pe_out_rows_mem. */
typedef struct pe_out_rows_mem {
    const float *data;
    int64_t rows, width;
} pe_out_rows_mem;
posenc_status pe_out_rows_copy(void *ctx, int64_t row0, int64_t n, void *buf,
                               posenc_error *err);

/* Convert's source: arrays first..first+count-1 of c, floats as out_dt when dtype_set (integers
 * keep their type), names without HDF5's leading '/'. Streams each array from its own reader;
 * c must outlive t. */
posenc_status pe_out_container_table(pe_table *t, posenc_container *c, size_t first,
                                     size_t count, int dtype_set, posenc_dtype out_dt,
                                     posenc_error *err);

#endif
