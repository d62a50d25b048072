/* posenc/apply.h: rotate query/key vectors by RoPE, exactly as a model does.
 *
 * A posenc_apply holds the per-position cos/sin rows of one rotation (RoPE parameters, precision,
 * positions, direction) for one dump dtype, computed once: in a [batch, heads, seq, head_dim] dump
 * the same row serves every head and, with shared positions, every batch entry. posenc_apply_rows
 * then rotates any run of head vectors of a dump, in place or into another dtype. Pure
 * computation: callers stream the dump through it in chunks (see formats/engines/applyset.c).
 *
 * Arithmetic. f16, bf16 and f32 dumps are computed in float32, f64 dumps in float64.
 *  - POSENC_PREC_EXACT: cos/sin are the exact values rounded once to float32 (float64 for f64);
 *    y1 = x1*c - x2*s, y2 = x2*c + x1*s in float32, rounded once to the output dtype.
 *  - POSENC_PREC_HF: cos/sin are transformers' float32 values. For f16/bf16 dumps they are cast
 *    to the dump dtype first and every multiply and add is rounded to the dump dtype, as torch
 *    evaluates q*cos + rotate_half(q)*sin on f16/bf16 tensors.
 *  - POSENC_PREC_GGML: cos/sin are ggml's float32 values (p->ggml), and every dump, f64
 *    included, is rotated in float32 as ggml's CPU backend does (ops.cpp rotate_pairs:
 *    x0*c - x1*s, x0*s + x1*c, each product and sum rounded to float32, no FMA), then stored
 *    in the output dtype.
 * Dims past the rotated ones pass through untouched (bit-exact when the output dtype is the
 * input dtype). */
#ifndef POSENC_APPLY_H
#define POSENC_APPLY_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/dtype.h"
#include "posenc/error.h"
#include "posenc/rope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Memory layouts of a Q/K dump (C order, head_dim last). */
typedef enum posenc_apply_layout {
    POSENC_APPLY_BHSD = 0, /* [batch, heads, seq, head_dim]: transformers */
    POSENC_APPLY_BSHD = 1, /* [batch, seq, heads, head_dim]: FlashAttention, vLLM */
    POSENC_APPLY_SHD = 2,  /* [seq, heads, head_dim] */
    POSENC_APPLY_HSD = 3,  /* [heads, seq, head_dim] */
    POSENC_APPLY_SD = 4,   /* [seq, head_dim] */
    POSENC_APPLY_BSF = 5,  /* [batch, seq, heads * head_dim]: a forward hook on q_proj/k_proj */
    POSENC_APPLY_SF = 6,   /* [seq, heads * head_dim]: vLLM's attention ([num_tokens, ...]) */
    POSENC_APPLY_GGML = 7  /* [tokens, heads, head_dim] as llama.cpp holds Q/K (ne = head_dim,
                              heads, tokens): shd's memory order in llama.cpp's pair order for
                              the architecture (posenc_ggml_layout_style, posenc/llamacpp.h);
                              posenc_apply_shape_of reads it as shd */
} posenc_apply_layout;

/* "bhsd", "bshd", "shd", "hsd", "sd", "bsf", "sf", "ggml"; static, never NULL. */
POSENC_API
const char *posenc_apply_layout_name(posenc_apply_layout l);
POSENC_API POSENC_NODISCARD
posenc_status posenc_apply_layout_parse(const char *s, posenc_apply_layout *out,
                                        posenc_error *err);

/* The axis that holds token positions in layout l (bhsd 2, bshd 1, shd 0, hsd 1, sd 0, bsf 1,
 * sf 0, ggml 0); -1 for an invalid l. */
POSENC_API
int posenc_apply_layout_seq_axis(posenc_apply_layout l);

/* 1 for the flat layouts (bsf, sf): the last axis holds every head, heads * head_dim. */
POSENC_API
int posenc_apply_layout_flat(posenc_apply_layout l);

/* A dump's shape read through a layout (absent axes are 1). */
typedef struct posenc_apply_shape {
    posenc_apply_layout layout;
    int64_t batch, heads, seq, head_dim;
} posenc_apply_shape;

/* Interpret shape (ndim dims) in layout. POSENC_EMISMATCH when ndim does not fit the layout
 * ("expected 4 dims [batch, heads, seq, head_dim] for layout bhsd, got (2, 3)"); a zero dim is
 * allowed (nothing to rotate). A flat layout needs the head split: POSENC_EINVAL here, use
 * posenc_apply_shape_split. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_apply_shape_of(posenc_apply_layout layout, int ndim, const int64_t *shape,
                                    posenc_apply_shape *out, posenc_error *err);

/* posenc_apply_shape_of for every layout. A flat layout's last axis F is split into heads
 * vectors of F / heads elements when heads > 0, else into F / head_dim vectors of head_dim
 * (head_dim > 0); out->layout is then the unflattened layout with the same memory order (bsf:
 * bshd, sf: shd), so posenc_apply_rows and every reader of the shape need nothing else.
 * POSENC_EMISMATCH when F does not split ("last axis 4000 is not a multiple of head_dim 128"),
 * POSENC_EINVAL when neither heads nor head_dim is given. Other layouts ignore both. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_apply_shape_split(posenc_apply_layout layout, int ndim, const int64_t *shape,
                                       int64_t heads, int64_t head_dim, posenc_apply_shape *out,
                                       posenc_error *err);

/* Number of head vectors (batch * heads * seq). */
POSENC_API
uint64_t posenc_apply_shape_vectors(const posenc_apply_shape *s);

/* Token positions. values == NULL: token s of every batch entry is at offset + s. Otherwise
 * values holds naxes * rows * seq integers, axis-major: values[(axis * rows + r) * seq + s];
 * rows is 1 (shared by every batch entry) or the batch size; naxes is 1, or 3 for multimodal
 * RoPE (t, h, w; needs p->mrope). Positions must lie in [0, 2^31). */
typedef struct posenc_apply_positions {
    const int64_t *values;
    int64_t offset;
    int64_t rows;
    int naxes;
} posenc_apply_positions;

typedef struct posenc_apply_opts {
    posenc_precision precision;
    int inverse;          /* rotate by -position (undo a rotation) */
    posenc_dtype dtype;   /* the dump dtype the rows serve (decides f64 vs f32 arithmetic and
                             the hf rounding rule) */
} posenc_apply_opts;

typedef struct posenc_apply posenc_apply;

/* Compute the cos/sin rows for positions (rows * seq tokens) under p. p->style picks the pairs
 * (neox: i and i + half, gptj: 2i and 2i + 1); for proportional RoPE the neox pair distance is
 * half the table width. Runs on nthreads threads (<= 1: one). Errors: odd or zero rotary dim,
 * positions out of range, 3-axis positions without mrope (EINVAL). Caller frees with
 * posenc_apply_free. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_apply_new(const posenc_rope_params *p, const posenc_apply_opts *opts,
                               const posenc_apply_positions *pos, int64_t seq, int nthreads,
                               posenc_apply **out, posenc_error *err);
POSENC_API
void posenc_apply_free(posenc_apply *a);

/* head_dim the rows expect of a dump (p->head_dim, or the table width for proportional). */
POSENC_API
int posenc_apply_head_dim(const posenc_apply *a);

/* Check that a dump of shape s can be rotated by a: head_dim matches, seq matches, batch matches
 * the positions' rows (when per batch entry). POSENC_EMISMATCH with a message (no file name). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_apply_check(const posenc_apply *a, const posenc_apply_shape *s,
                                 posenc_error *err);

/* Rotate head vectors [first, first + n) of a dump of shape s (vector v is the v-th run of
 * head_dim elements in C order). in holds n * head_dim elements of in_dt (the dtype a was made
 * for); out receives them in out_dt (any float dtype). in and out may be the same buffer when
 * the element sizes are equal. Thread-safe: several threads may rotate disjoint runs at once. */
POSENC_API
void posenc_apply_rows(const posenc_apply *a, const posenc_apply_shape *s, uint64_t first,
                       uint64_t n, const void *in, posenc_dtype in_dt, void *out,
                       posenc_dtype out_dt);

#ifdef __cplusplus
}
#endif
#endif
