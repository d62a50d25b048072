/* formats/engines/rows.h: a Q/K dump read as head vectors, and the token positions of a dump.
 *
 * The one dump reader of apply and verify. A dump is one float array (FILE, FILE:MEMBER or "-")
 * in a layout of posenc/apply.h (bhsd, bshd, shd, hsd, sd, and the flat bsf and sf, whose last
 * axis is split into vectors of the config's head_dim); its shape is read through
 * posenc_apply_shape_split, so batch, heads, seq and head_dim mean the same in every command.
 * pe_rows_next streams its head vectors in file order, converted to double, in bounded memory
 * (PE_ROWS_CHUNK elements are read at a time), each with its (batch, head, seq index).
 *
 * pe_dump_positions resolves --positions / --offset for a dump once, with the same rules,
 * messages and exit classes in every command: a list is counted against seq before it is
 * expanded; a file may hold [seq] or [batch, seq] and, for multimodal RoPE, [3, seq] or
 * [3, batch, seq] (t, h, w).
 *
 * Internal (pe_ prefix); messages name the file and never print: the commands do. */
#ifndef PE_ROWS_H
#define PE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "formats/engines/positions.h"
#include "posenc/apply.h"
#include "posenc/io.h"
#include "lib/verify/verify_stats.h"

/* Elements read from a dump at a time (2 MiB as double). */
#define PE_ROWS_CHUNK ((size_t)1 << 18)

/* Where a head vector sits in its dump. */
typedef struct pe_row_at {
    int64_t batch, head, seq;
} pe_row_at;

/* The fields above the line are the summary callers read; the rest is private. */
typedef struct pe_rows {
    const char *spec;            /* borrowed from pe_rows_open's caller */
    posenc_array_info info;      /* the stored array: dtype, ndim, shape */
    posenc_apply_shape shape;    /* batch, heads, seq, head_dim through the layout */
    uint64_t total;              /* head vectors: batch * heads * seq (>= 1) */
    uint64_t next;               /* index of the row pe_rows_next returns next */
    /* ---- */
    posenc_reader *r;
    unsigned char *raw;
    double *buf;
    size_t cap, have, used;      /* rows buf holds at most / holds now / has handed out */
} pe_rows;

/* Open spec as a dump in layout. Refused, with one message naming spec: an unreadable file, a
 * dtype that is not a float type ("'q.npy': dtype i32 is not a float type"), a shape that does
 * not fit the layout ("'q.npy': shape (2, 3) does not fit layout bhsd (4 dims)"), an empty dump
 * ("'q.npy': empty dump"). assume_bf16 reads NPY '<V2' arrays as bfloat16. Caller frees *out
 * with pe_rows_close. */
posenc_status pe_rows_open(const char *spec, posenc_apply_layout layout, int assume_bf16,
                           pe_rows **out, posenc_error *err);
/* The same with head_dim (> 0) splitting a flat layout's last axis (posenc_apply_shape_split):
 * "'q.npy': last axis 4000 of layout bsf is not a multiple of head_dim 128". */
posenc_status pe_rows_open_split(const char *spec, posenc_apply_layout layout, int64_t head_dim,
                                 int assume_bf16, pe_rows **out, posenc_error *err);

/* The next head vector (shape.head_dim doubles, borrowed until the next call) and, when at is
 * not NULL, its coordinates. NULL with err set when the file ends early or cannot be read, and
 * NULL with err->code POSENC_OK after the last row. */
const double *pe_rows_next(pe_rows *d, pe_row_at *at, posenc_error *err);

/* Coordinates of head vector r (r < total) of a dump of shape s. */
pe_row_at pe_rows_at(const posenc_apply_shape *s, uint64_t r);

/* 1 when a and b hold arrays of the same shape. */
int pe_rows_same_shape(const pe_rows *a, const pe_rows *b);

void pe_rows_close(pe_rows *d); /* NULL is fine */

/* ---- which layout a dump is in ---- */

/* The first layout other than given (bhsd, bshd, bsf, shd, hsd, sf, sd) in which q holds
 * heads[0] vectors of head_dim per token and, when k is not NULL, k holds heads[1] with q's
 * batch and seq; -1 when there is none or heads[0] or head_dim is unknown (0). heads are the
 * config's (posenc_model_heads). */
int pe_rows_layout_fit(posenc_apply_layout given, const posenc_array_info *q,
                       const posenc_array_info *k, const int64_t heads[2], int64_t head_dim);

/* When pe_rows_layout_fit finds a layout, append to err's message "; the dumps fit layout bshd
 * (32 query and 8 key heads of head_dim 128 in 'c.json'): give --layout bshd" (with k NULL:
 * "the dump fits ... (32 heads ...)") and return 1; else leave err alone and return 0. */
int pe_rows_layout_hint(posenc_error *err, posenc_apply_layout given, const posenc_array_info *q,
                        const posenc_array_info *k, const int64_t heads[2], int64_t head_dim,
                        const char *config);

/* 1 when a dump read with `heads` heads cannot be the config's want heads or a share of them
 * (a tensor-parallel rank holds want / tp): want is known and heads does not divide it. */
int pe_rows_heads_foreign(int64_t heads, int64_t want);

/* ---- positions ---- */

/* What a command asks: --positions (arg, or NULL) or --offset, the bound every position must
 * lie below, whether 3-axis positions are allowed (an mrope config), and the dump's batch and
 * seq. */
typedef struct pe_dump_positions_req {
    const char *arg;     /* --positions: a list or a file (pe_positions_is_file); NULL: offset */
    int64_t offset;      /* token s at offset + s when arg is NULL */
    int64_t end;         /* positions lie in [0, end); end a power of two for the messages */
    int mrope;           /* 3-axis (t, h, w) files allowed */
    int64_t batch, seq;  /* of the dump */
} pe_dump_positions_req;

/* The resolved positions. apply points at them (values borrowed from list, or NULL for
 * offset + s); min and max over every axis and row; first and last of axis 0, row 0. */
typedef struct pe_dump_positions {
    posenc_apply_positions apply;
    int64_t min, max, first, last;
    /* ---- */
    pe_positions *list;
} pe_dump_positions;

/* Resolve req into *out. On failure err names what is wrong and *usage tells its class: 1 for a
 * mistake on the command line (a malformed list, a position outside [0, end), a list of another
 * length than seq, --offset + seq past end; exit 2), 0 for one in a file (unreadable, wrong
 * count or shape, 3-axis positions without mrope; exit 3). Messages: "--positions: 3 positions
 * for a sequence of 4 tokens", "'p5.npy': 5 positions for a sequence of 4 tokens", "'p.npy':
 * positions of shape (2, 3) do not fit batch 1 and seq 4 (expected [seq], [batch, seq])". Free
 * with pe_dump_positions_free. */
posenc_status pe_dump_positions_load(const pe_dump_positions_req *req, pe_dump_positions *out,
                                     int *usage, posenc_error *err);

/* Position of token s (s < seq) of batch entry b, axis 0 (t for 3-axis positions). */
int64_t pe_dump_position(const pe_dump_positions *p, int64_t seq, int64_t b, int64_t s);

void pe_dump_positions_free(pe_dump_positions *p); /* NULL and a zeroed struct are fine */

/* ---- the q/k dumps of one comparison (verify) ---- */

typedef struct pe_qk_req {
    const char *spec[4];       /* q, k (required), the runtime's rotated q and k (or NULL) */
    posenc_apply_layout layout;
    int assume_bf16;
    int head_dim;              /* the config's */
    const char *config;        /* named in the head_dim message */
    const char *positions;     /* --positions, or NULL */
    int64_t offset, end;       /* --offset; positions lie in [0, end) */
    int64_t heads[2];          /* the config's query and key heads (posenc_model_heads), 0:
                                  unknown; dumps that fit them only in another layout are
                                  refused naming it (pe_rows_layout_hint) */
} pe_qk_req;

typedef struct pe_qk_dumps {
    const char *spec[4];       /* borrowed from the request */
    pe_rows *d[4];             /* NULL where spec is NULL */
    pe_dump_positions pos;     /* one position per token, shared by every batch entry */
    unsigned char *keep;       /* the sample plan of pe_qk_passes */
} pe_qk_dumps;

/* Open the dumps of req and resolve their positions (a flat layout split by req->head_dim).
 * Refused, naming the file: any dump pe_rows_open refuses; q's or k's head_dim not the
 * config's; k's batch or seq not q's; k's heads not dividing q's (GQA); heads that are no
 * share of the config's (pe_rows_heads_foreign) when the dumps fit another layout; each shape
 * refusal names the layout the dumps fit when there is one (pe_rows_layout_hint); a rotated
 * dump of another shape than its pre-RoPE one; the mistakes of pe_dump_positions_load (its *usage); positions that differ per batch entry (a
 * file [batch, seq] with batch > 1: one row is shared by every entry). Close with
 * pe_qk_close. */
posenc_status pe_qk_open(const pe_qk_req *req, pe_qk_dumps *out, int *usage, posenc_error *err);
void pe_qk_close(pe_qk_dumps *x); /* NULL and a closed set are fine */

/* What the passes of pe_qk_passes hold the rows to (every pointer borrowed; each must outlive
 * the passes). */
typedef struct pe_qk_check {
    const posenc_verify_recipe *rec;   /* the reference: the config's exact rotation */
    const posenc_verify_recipe *prof[POSENC_VERIFY_N_PROFILES]; /* NULL: that runtime does
                                          not run the config, or no profiles (a layer without
                                          RoPE) */
    double extra;                      /* --tolerance: allowance relative to the row's largest
                                          element on top of the bound (0: none) */
    const posenc_verify_recipe *ulp;   /* NULL, or the profile ulp distances are taken from
                                          (posenc apply's rotation under it, --max-ulp) */
    double angle_acc;                  /* the bound's angle_acc (0) */
    int held;                          /* the profile --precision holds the rows to, or -1 */
    const posenc_verify_recipe *slack_a, *slack_b; /* NULL, or pe_vpass_spec's */
} pe_qk_check;

/* Stream q's, then k's rows of x (opened, not yet read) through a pass of lib/verify/verify_stats.h
 * each: pre-RoPE rows from q and k and compared rows from the rotated dumps when given; with
 * rotated, the rows of q and k are the compared ones. The bound is the verdict's for the
 * compared dump's dtype (posenc_verify_tolerance_init). A pass without compared rows stops
 * reading once it holds its samples. out[0], out[1] are q's and k's passes (k reads q's cos/sin
 * caches); they borrow x's sample plan: free them (pe_vpass_free) before pe_qk_close. */
posenc_status pe_qk_passes(pe_qk_dumps *x, const pe_qk_check *chk, int rotated, pe_vpass **out,
                           posenc_error *err);

#endif
