/* lib/encodings/rope_step.h (internal): the exact profile's float32 cos/sin rows by angle
 * addition. A row whose position is 1 to PE_STEP_K - 1 past the last row computed in full (the
 * anchor) is cos/sin(anchor + d) from the anchor's double row and the row of d
 * (lib/core/mathx.h pe_mathx_step_row_f32), each value kept only when proven to round to the
 * float the full computation gives, the rest computed in full: the bits of
 * (float)posenc_rope_cossin(p, POSENC_PREC_EXACT, pos) at about a third of its cost. Used by
 * the apply tables (lib/encodings/apply.c) and the float32 gen tables (lib/encodings/rope.c
 * pe_rope_table_f32). */
#ifndef PE_ROPE_STEP_H
#define PE_ROPE_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"
#include "posenc/model.h"
#include "posenc/rope.h"

#define PE_STEP_K 32

/* The rows of d = 0 .. PE_STEP_K - 1 for the first nf frequencies of p: PE_STEP_K rows of
 * [cos nf | sin nf] doubles, malloc'd (the caller frees), or NULL when out of memory. */
double *pe_rope_step_rows(const posenc_rope_params *p, int nf);

/* One thread's state: the anchor row. */
typedef struct pe_rope_step {
    const posenc_rope_params *p;
    const double *steps; /* pe_rope_step_rows */
    int nf;
    int64_t anchor; /* -1: none yet */
    double ca[POSENC_MAX_FREQ], sa[POSENC_MAX_FREQ];
} pe_rope_step;

void pe_rope_step_init(pe_rope_step *s, const posenc_rope_params *p, int nf,
                       const double *steps);
/* c[i] = (float)cos and sn[i] = (float)sin of the exact profile at pos, i < nf (times the
 * attention scaling, as posenc_rope_cossin). */
void pe_rope_step_row(pe_rope_step *s, int64_t pos, float *c, float *sn);

/* posenc_rope_table for the exact precision with float32 output: each value
 * (float)posenc_rope_table's, computed by steps. steps: pe_rope_step_rows(p, p->n_freq) kept by
 * a caller that fills a table chunk by chunk, or NULL (computed here, for this call). */
posenc_status pe_rope_table_f32(const posenc_rope_params *p, posenc_layout layout,
                                const int64_t *positions, size_t n, float *cos_out,
                                float *sin_out, int nthreads, const double *steps,
                                posenc_error *err);

#endif
