/* posenc/bias.h: bias and absolute encodings: ALiBi, T5 buckets, Shaw relative positions,
 * sinusoidal tables. Pure computation; tables are produced in caller-supplied buffers, row by
 * row, so callers can stream them to a writer. */
#ifndef POSENC_BIAS_H
#define POSENC_BIAS_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"
#include "posenc/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ALiBi ---- */

/* Bias convention for b(i, j), query i, key j, slope m:
 * symmetric -m|i-j| (llama.cpp, FlashAttention, MPT full); causal m(j-i) for j <= i (and the same
 * formula past the diagonal); keyindex m*j (Press reference, BLOOM, Baichuan). */
typedef enum posenc_alibi_convention {
    POSENC_ALIBI_SYMMETRIC = 0,
    POSENC_ALIBI_CAUSAL = 1,
    POSENC_ALIBI_KEYINDEX = 2
} posenc_alibi_convention;
POSENC_API
const char *posenc_alibi_convention_name(posenc_alibi_convention c);
POSENC_API POSENC_NODISCARD
posenc_status posenc_alibi_convention_parse(const char *s, posenc_alibi_convention *out,
                                            posenc_error *err);

/* Slopes for `heads` heads (exact values as doubles; for POSENC_ALIBI_FALCON the bf16 values
 * Falcon multiplies with). bias_max is MPT's alibi_bias_max (8 = the reference slopes).
 * POSENC_EINVAL for heads < 1. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_alibi_slopes(posenc_alibi_kind kind, int heads, double bias_max,
                                  double *slopes, posenc_error *err);

/* One row i of the bias for one head: out[j] for j in [0, k_len). */
POSENC_API
void posenc_alibi_row(double slope, posenc_alibi_convention conv, int64_t i, int64_t k_len,
                      double *out);
/* As posenc_alibi_row, and for POSENC_ALIBI_FALCON each value rounded the way Falcon computes
 * it: the float32 product of the bf16 slope and the offset, rounded to bfloat16. slope is the
 * value posenc_alibi_slopes returned for that kind. */
POSENC_API
void posenc_alibi_row_kind(posenc_alibi_kind kind, double slope, posenc_alibi_convention conv,
                           int64_t i, int64_t k_len, double *out);

/* "reference", "mpt", "falcon"; parse also accepts "bloom" and "baichuan" for reference. */
POSENC_API
const char *posenc_alibi_kind_name(posenc_alibi_kind k);
POSENC_API POSENC_NODISCARD
posenc_status posenc_alibi_kind_parse(const char *s, posenc_alibi_kind *out, posenc_error *err);

/* ---- T5 relative buckets ---- */

/* Bucket of relative position rel = key - query, as transformers' _relative_position_bucket
 * (float32 log, truncation). bidirectional = encoder. */
POSENC_API
int posenc_t5_bucket(int64_t rel, int bidirectional, int num_buckets, int max_distance);
/* Validate the parameters. With n = num_buckets, halved (integer division) when bidirectional,
 * and max_exact = n / 2, transformers needs max_exact >= 1 (so num_buckets >= 2, or >= 4 when
 * bidirectional; otherwise it divides by zero) and max_distance > max_exact (otherwise the log
 * ratio is 0 or negative). POSENC_EINVAL with a message naming the failed rule. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_t5_check(int bidirectional, int num_buckets, int max_distance,
                              posenc_error *err);
/* Buckets of one query row: out[j] = posenc_t5_bucket(j - i, ...) for j in [0, k_len). */
POSENC_API
void posenc_t5_bucket_row(int64_t i, int64_t k_len, int bidirectional, int num_buckets,
                          int max_distance, int32_t *out);
/* Bias of one query row for head h, gathered from the learned table weights[num_buckets][heads]
 * (row-major, as relative_attention_bias.weight): out[j] = weights[bucket(j - i)][h]. */
POSENC_API
void posenc_t5_bias_row(const float *weights, int heads, int h, int64_t i, int64_t k_len,
                        int bidirectional, int num_buckets, int max_distance, float *out);

/* ---- Shaw et al. ---- */

/* Clipped relative index clip(j - i, -k, k) + k, in [0, 2k]. */
POSENC_API
int64_t posenc_shaw_index(int64_t i, int64_t j, int64_t k);

/* ---- sinusoidal absolute ---- */

/* posenc_sinusoidal_variant is declared in posenc/model.h. */
POSENC_API
const char *posenc_sinusoidal_variant_name(posenc_sinusoidal_variant v);
POSENC_API POSENC_NODISCARD
posenc_status posenc_sinusoidal_variant_parse(const char *s, posenc_sinusoidal_variant *out,
                                              posenc_error *err);

/* Row for position pos (table row index; for fairseq the row index, so row padding_idx is all
 * zeros), d_model wide, exact values (doubles accurate to ~1e-16 so one rounding to the output
 * dtype is correct). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_sinusoidal_row(posenc_sinusoidal_variant v, int d_model, int64_t pos,
                                    int padding_idx, double *out, posenc_error *err);

/* The same for many rows: the frequencies are computed once (in ~128-bit arithmetic), then each
 * row costs one sin and one cos per frequency. d_model >= 1 (fairseq: >= 4, it divides by
 * half_dim - 1); padding_idx < 0 = none (fairseq only). Caller frees with
 * posenc_sinusoidal_free. */
typedef struct posenc_sinusoidal posenc_sinusoidal;
POSENC_API POSENC_NODISCARD
posenc_status posenc_sinusoidal_new(posenc_sinusoidal_variant v, int d_model, int padding_idx,
                                    posenc_sinusoidal **out, posenc_error *err);
/* Row pos (pos >= 0) into out[d_model]. */
POSENC_API
void posenc_sinusoidal_fill(const posenc_sinusoidal *s, int64_t pos, double *out);
POSENC_API
void posenc_sinusoidal_free(posenc_sinusoidal *s);

#ifdef __cplusplus
}
#endif
#endif
