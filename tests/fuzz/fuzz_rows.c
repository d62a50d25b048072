/* fuzz_rows.c: bytes -> a dump (formats/engines/rows.c), as NPY, or NPZ when they start like a zip
 * (read whole and as member "q").
 *   1. pe_rows_open in every layout, with and without the bf16 assumption: a refusal carries a
 *      one-line message and leaves *out alone; an open dump has total = batch * heads * seq
 *      and the last dim as head_dim, and its rows (up to a cap) come with the coordinates
 *      pe_rows_at gives, inside the shape, until the end or an error with a message.
 *   2. pe_dump_positions_load of the same file as a positions file, for a seq, batch and mrope
 *      flag taken from the bytes: on success every position lies in [0, end), min <= first,
 *      last <= max, and the accepted shape is one the rules name (naxes 1 or 3, rows 1 or
 *      batch).
 *   3. pe_qk_open of the file as q and k in bhsd with its own head_dim: it opens whenever the
 *      dump does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "formats/engines/rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROW_CAP 4096

static void fuzz_open(const char *spec, posenc_apply_layout l, int bf16)
{
    pe_rows *d = (pe_rows *)1;
    posenc_error err = { 0 };
    if (pe_rows_open(spec, l, bf16, &d, &err) != POSENC_OK) {
        fz_check_msg(&err);
        if (d != (pe_rows *)1)
            __builtin_trap();
        return;
    }
    const posenc_apply_shape *s = &d->shape;
    if (s->layout != l || s->head_dim != d->info.shape[d->info.ndim - 1] || s->head_dim < 1 ||
        d->total != (uint64_t)s->batch * (uint64_t)s->heads * (uint64_t)s->seq || d->total < 1)
        __builtin_trap();
    pe_row_at at;
    uint64_t r = 0;
    while (r < ROW_CAP) {
        const double *row = pe_rows_next(d, &at, &err);
        if (!row) {
            if (err.code != POSENC_OK)
                fz_check_msg(&err);
            else if (r != d->total)
                __builtin_trap(); /* the end came early without an error */
            break;
        }
        pe_row_at want = pe_rows_at(s, r);
        if (memcmp(&at, &want, sizeof at) != 0 || at.batch < 0 || at.batch >= s->batch ||
            at.head < 0 || at.head >= s->heads || at.seq < 0 || at.seq >= s->seq)
            __builtin_trap();
        r++;
        if (d->next != r)
            __builtin_trap();
    }
    pe_rows_close(d);
}

static void fuzz_positions(const char *spec, const uint8_t *data, size_t size)
{
    pe_dump_positions_req q = { spec, 0, (int64_t)1 << 31, (int)(size & 2), 1, 1 };
    if (size > 8) {
        q.seq = 1 + data[size - 1] % 64;
        q.batch = 1 + data[size - 2] % 4;
    }
    pe_dump_positions p;
    posenc_error err = { 0 };
    int usage = -1;
    if (pe_dump_positions_load(&q, &p, &usage, &err) != POSENC_OK) {
        fz_check_msg(&err);
        if (usage != 0 && usage != 1)
            __builtin_trap();
        return;
    }
    const posenc_apply_positions *a = &p.apply;
    if ((a->naxes != 1 && (a->naxes != 3 || !q.mrope)) || (a->rows != 1 && a->rows != q.batch) ||
        !a->values || p.min < 0 || p.max >= q.end || p.min > p.first || p.first > p.max ||
        p.min > p.last || p.last > p.max)
        __builtin_trap();
    for (int64_t b = 0; b < a->rows; b++)
        for (int64_t s = 0; s < q.seq; s++) {
            int64_t v = pe_dump_position(&p, q.seq, b, s);
            if (v < p.min || v > p.max)
                __builtin_trap();
        }
    pe_dump_positions_free(&p);
}

static void fuzz_qk(const char *spec)
{
    pe_rows *d;
    if (pe_rows_open(spec, POSENC_APPLY_BHSD, 0, &d, NULL) != POSENC_OK)
        return;
    int hd = d->shape.head_dim > 1 << 20 ? -1 : (int)d->shape.head_dim;
    pe_rows_close(d);
    pe_qk_req q = { { spec, spec, NULL, NULL }, POSENC_APPLY_BHSD, 0, hd, "c.json", NULL, 0,
                    (int64_t)1 << 48, { 0, 0 } };
    pe_qk_dumps x;
    posenc_error err = { 0 };
    int usage;
    posenc_status st = pe_qk_open(&q, &x, &usage, &err);
    if (hd > 0 && st != POSENC_OK && err.code != POSENC_ERANGE)
        __builtin_trap(); /* the same dump twice fits itself (only --offset + seq may not) */
    if (st != POSENC_OK)
        fz_check_msg(&err);
    else
        pe_qk_close(&x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int zip = size >= 2 && data[0] == 'P' && data[1] == 'K';
    const char *path = fz_path(zip ? "d.npz" : "d.npy");
    char member[1100];
    fz_write(path, data, size);
    snprintf(member, sizeof member, "%s:q", path);
    const char *specs[] = { path, zip ? member : NULL };
    for (int i = 0; i < 2 && specs[i]; i++) {
        for (int l = 0; l < 5; l++)
            fuzz_open(specs[i], (posenc_apply_layout)l, (int)(size & 1));
        fuzz_positions(specs[i], data, size);
        fuzz_qk(specs[i]);
    }
    return 0;
}
