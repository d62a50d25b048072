/* formats/engines/positions.h: the --positions argument of gen, apply and verify: a list such as
 * "0,1,8-15" or a file holding an integer array. Both are counted before anything is
 * materialised, so a caller checks the count (and the table size it implies) first; a list stays
 * a handful of ranges until a caller asks for the values. Internal (pe_ prefix): the commands
 * print the messages. */
#ifndef PE_POSITIONS_H
#define PE_POSITIONS_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/dtype.h"
#include "posenc/error.h"

/* Most positions a file may hold: 2^30 (8 GiB as int64). */
#define PE_POSITIONS_FILE_MAX ((uint64_t)1 << 30)

/* One inclusive range of a list, and the index of its first position in the whole list. */
struct pe_range {
    int64_t lo, hi;
    uint64_t start;
};

/* The fields above the line are the summary callers read; the rest is private. */
typedef struct pe_positions {
    uint64_t count;                 /* how many positions (>= 1) */
    int64_t min, max;               /* the smallest and the largest */
    int64_t first, last;            /* the first and the last, in the order given */
    int from_file;                  /* 1: read from a file (values set), 0: a list */
    int ndim;                       /* a list: 1; a file: its array's shape */
    int64_t shape[POSENC_MAX_DIMS];
    /* ---- */
    size_t nranges;
    struct pe_range *ranges;        /* a list, in order */
    int64_t *values;                /* a file, or a list after pe_positions_values */
} pe_positions;

/* Parse a list: items separated by ',', each a position N or an inclusive range A-B with
 * A <= B, decimal digits only (blanks around a number are allowed). Every position must lie in
 * [0, end) (end >= 1) and there may be at most max_count of them; both are checked with
 * exact integer arithmetic while parsing, before anything but the ranges is allocated (their
 * number is bounded by the length of list). POSENC_EINVAL for a malformed list, POSENC_ERANGE
 * for a position outside [0, end) or more than max_count positions. Caller frees *out with
 * pe_positions_free. */
posenc_status pe_positions_parse(const char *list, int64_t end, uint64_t max_count,
                                 pe_positions **out, posenc_error *err);

/* Read a file (any readable format; "pos.npz:p" names a member) holding an integer array (i32,
 * i64 or u8) of at most max_count elements (checked from the declared shape before reading;
 * memory then grows only as the data is actually read), every one in [0, end). Messages name the
 * file. Caller frees *out with pe_positions_free. */
posenc_status pe_positions_read(const char *spec, int64_t end, uint64_t max_count,
                                pe_positions **out, posenc_error *err);

/* 1 when spec names a file to read positions from (an existing non-directory, or FILE:MEMBER
 * whose FILE exists), 0 when it is to be parsed as a list. */
int pe_positions_is_file(const char *spec);

/* Position i (i < count), in O(log nranges). */
int64_t pe_positions_at(const pe_positions *p, uint64_t i);

/* Positions start .. start + n - 1 (start + n <= count) into out. */
void pe_positions_fill(const pe_positions *p, uint64_t start, size_t n, int64_t *out);

/* All count positions as one array, materialised on the first call; borrowed, valid until p is
 * freed. POSENC_ERANGE when count * 8 bytes cannot be allocated on this machine, POSENC_ENOMEM
 * when the allocation fails. */
posenc_status pe_positions_values(pe_positions *p, const int64_t **out, posenc_error *err);

/* A table's positions, one row each (gen): a list, or a file of shape [S] or [1, S] (a
 * transformers position_ids). Anything else is refused rather than flattened, naming spec:
 * "'pos3.npy': positions of shape (3, 8) are multimodal (t, h, w) positions; a table has one row
 * per position: pass one axis [S] (apply and verify take [3, S])". POSENC_EMISMATCH. */
posenc_status pe_positions_one_axis(const pe_positions *p, const char *spec, posenc_error *err);

/* Write "[0, 2^48)" (a power of two as such) for messages. */
void pe_positions_range_str(int64_t end, char *buf, size_t len);

void pe_positions_free(pe_positions *p); /* NULL is fine */

#endif
