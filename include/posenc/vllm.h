/* posenc/vllm.h: RoPE as vLLM computes it (POSENC_PREC_VLLM), and where runtimes differ.
 *
 * vLLM builds one cos_sin_cache per attention layer when the model loads (vllm-project/vllm,
 * vllm/model_executor/layers/rotary_embedding/: get_rope in __init__.py picks a class per
 * rope_type; each class's _compute_inv_freq and _compute_cos_sin_cache fill the cache in float32,
 * which RotaryEmbeddingBase.__init__ then casts to the model dtype) and indexes it by position at
 * every forward. posenc_vllm_rope reproduces the class choice, the cache length, the float32
 * inv_freq and the mscale factor; posenc_rope_table and posenc_apply with POSENC_PREC_VLLM then
 * give the cache rows (f32 angle = f32(position) * inv_freq, cos/sin correctly rounded where
 * torch's are faithful, times f32(mscale)). */
#ifndef POSENC_VLLM_H
#define POSENC_VLLM_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"
#include "posenc/model.h"
#include "posenc/rope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What vLLM builds for one layer type. Strings are borrowed from static storage. */
typedef struct posenc_vllm_info {
    const char *cls;        /* the class get_rope returns, e.g. "YaRNScalingRotaryEmbedding" */
    const char *source;     /* "vllm/model_executor/layers/rotary_embedding/FILE @ COMMIT" */
    int64_t max_model_len;  /* the runtime length that selected LongRoPE's factors */
    int64_t cache_len;      /* rows of the cache a position indexes: positions 0..cache_len-1 */
    int64_t cache_rows;     /* rows vLLM allocates (LongRoPE: short rows + long rows) */
    int64_t cache_offset;   /* row of position 0 in that buffer (LongRoPE long: M0) */
    double base;            /* base of the cache (dynamic NTK: the base fixed at load time) */
    double mscale;          /* python float multiplying cos and sin in the cache (1 = none) */
    int long_factors;       /* LongRoPE: 1 when max_model_len chose long_factor */
    int truncate;           /* YaRN: 1 when the correction range is floored/ceiled */
    char note[256];         /* "" or one line a command must show (a default vLLM fills) */
} posenc_vllm_info;

/* RoPE parameters of cfg as vLLM computes them: out->inv_freq_f32 holds vLLM's float32 inv_freq,
 * out->attention_scaling(_f32) its mscale, the exact fields the same float32 values (vLLM has no
 * exact pipeline). family is posenc_model_family() of the model (it decides DeepSeek's
 * deepseek_yarn); max_model_len <= 0 means max_position_embeddings. POSENC_EUNSUPPORTED, with one
 * message naming the class, when posenc does not reproduce the class vLLM would use (mrope
 * with yarn and attention_factor, mscale or truncate false). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_vllm_rope(const posenc_rope_config *cfg, const char *family,
                               int64_t max_model_len, posenc_rope_params *out,
                               posenc_vllm_info *info, posenc_error *err);

/* Parameters for any precision: posenc_rope_params_compute for exact and hf (seq_len as there),
 * posenc_vllm_rope for vllm (info filled; it may be NULL for the other precisions). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_params_for(const posenc_rope_config *cfg, posenc_precision prec,
                                     const char *family, int64_t seq_len, int64_t max_model_len,
                                     posenc_rope_params *out, posenc_vllm_info *info,
                                     posenc_error *err);

/* One row of the table of definitions on which runtimes differ (posenc info --runtimes). Every
 * pointer is borrowed from static storage; each column names the function it was read from. */
typedef struct posenc_runtime_diff {
    const char *topic;        /* "yarn_truncate", "attention_factor", ... */
    const char *transformers; /* huggingface/transformers */
    const char *vllm;         /* vllm-project/vllm */
    const char *llamacpp;     /* ggml-org/llama.cpp */
} posenc_runtime_diff;

/* How far a precision's cos/sin drift from the exact values of the same definition at position
 * pos: the largest |difference| over the frequencies of cos and sin (attention scaling included).
 * hf: transformers' parameters at sequence length pos + 1 against the exact formula at the same
 * length; vllm: vLLM's cache row against the exact values of vLLM's definition (its base, its
 * LongRoPE factors, its mscale). POSENC_ERANGE when pos is past vLLM's cache. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_drift(const posenc_rope_config *cfg, const char *family,
                                posenc_precision prec, int64_t max_model_len, int64_t pos,
                                double *drift, posenc_error *err);

/* The same largest |difference|, measured against transformers' definition in exact math at
 * sequence length pos + 1 instead of the precision's own: a definition difference (vLLM's
 * LongRoPE factors, a fixed dynamic base) shows here as well as rounding drift. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_gap(const posenc_rope_config *cfg, const char *family,
                              posenc_precision prec, int64_t max_model_len, int64_t pos,
                              double *gap, posenc_error *err);

POSENC_API
size_t posenc_runtime_diff_count(void);
/* Row i (0 <= i < posenc_runtime_diff_count()); POSENC_EINVAL past the end. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_runtime_diff_get(size_t i, posenc_runtime_diff *out, posenc_error *err);
/* 1 when row i concerns cfg (its rope type, mrope, partial rotary, DeepSeek's yarn); every row
 * applies when cfg is NULL. */
POSENC_API
int posenc_runtime_diff_applies(size_t i, const posenc_rope_config *cfg, const char *family);
/* The vLLM commits posenc's vllm precision follows, one line (static storage). */
POSENC_API
const char *posenc_vllm_commits(void);

#ifdef __cplusplus
}
#endif
#endif
