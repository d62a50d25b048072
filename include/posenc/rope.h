/* posenc/rope.h: RoPE frequencies, attention scaling and cos/sin tables.
 *
 * Four precisions. POSENC_PREC_EXACT computes every value from the exact real-number formula and
 * returns it accurate enough (a double within ~1e-16) that rounding once to f32/f16/bf16 gives
 * the correctly rounded result. POSENC_PREC_HF reproduces transformers' float32 pipeline step by
 * step (f32 exponent, f32 pow and reciprocal, f32 angle product, cos/sin of the f32 angle, f32
 * attention scaling), with correctly rounded pow/cos/sin where torch uses faithful ones.
 * POSENC_PREC_VLLM evaluates the float32 steps the same way on the parameters vLLM computes
 * (posenc/vllm.h posenc_vllm_rope: its inv_freq, base and mscale).
 * POSENC_PREC_GGML reproduces llama.cpp's CPU backend (ggml's portable build, no FMA): the
 * arguments llama.cpp passes to ggml_rope_ext, held in posenc_rope_params.ggml
 * (posenc/ggml.h; posenc/llamacpp.h builds them for a model or a GGUF file), through ggml's float32 steps (lib/encodings/rope_ggml.c). */
#ifndef POSENC_ROPE_H
#define POSENC_ROPE_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"
#include "posenc/ggml.h"
#include "posenc/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum posenc_precision {
    POSENC_PREC_EXACT = 0,
    POSENC_PREC_HF = 1,
    POSENC_PREC_VLLM = 2,
    POSENC_PREC_GGML = 3 /* needs posenc_rope_params.has_ggml */
} posenc_precision;
POSENC_API
const char *posenc_precision_name(posenc_precision p);
POSENC_API POSENC_NODISCARD
posenc_status posenc_precision_parse(const char *s, posenc_precision *out, posenc_error *err);

/* Table layouts: hf = cat(freqs, freqs) (width rotary_dim); half = one copy (width rotary_dim/2,
 * vLLM, FlashAttention); interleaved = each frequency twice side by side (GPT-J, ggml NORM);
 * vllm = vLLM's cos_sin_cache row cat(cos half, sin half) (width rotary_dim): posenc_rope_table
 * writes that row to cos_out and the same row to sin_out. */
typedef enum posenc_layout {
    POSENC_LAYOUT_HF = 0,
    POSENC_LAYOUT_HALF = 1,
    POSENC_LAYOUT_INTERLEAVED = 2,
    POSENC_LAYOUT_VLLM = 3
} posenc_layout;
POSENC_API
const char *posenc_layout_name(posenc_layout l);
POSENC_API POSENC_NODISCARD
posenc_status posenc_layout_parse(const char *s, posenc_layout *out, posenc_error *err);

/* Computed RoPE parameters (value type). Its layout (13 KB) is visible only under
 * POSENC_STATIC_LINKING_ONLY (posenc/export.h); without it, posenc_rope_params_new gives one to
 * hold by pointer and the accessors below read it. */
typedef struct posenc_rope_params posenc_rope_params;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_rope_params {
    posenc_rope_type type;
    posenc_style style;
    int head_dim;
    int rotary_dim;
    int n_freq;                           /* rotary_dim / 2 */
    int64_t seq_len;                      /* sequence length the parameters are for; 0 = load time */
    double theta_used;                    /* base after dynamic scaling (= theta otherwise) */
    int long_factors;                     /* longrope: 1 when long_factor was chosen */
    float inv_freq_f32[POSENC_MAX_FREQ];  /* transformers' float32 inv_freq (hf precision) */
    double inv_hi[POSENC_MAX_FREQ];       /* exact inv_freq = inv_hi + inv_lo (double-double) */
    double inv_lo[POSENC_MAX_FREQ];
    double attention_scaling;             /* multiplies cos and sin (yarn, longrope) */
    float attention_scaling_f32;
    double softmax_scale;                 /* extra factor on the softmax scale outside the tables
                                             (DeepSeek-V3 mscale_all_dim^2); 1.0 when none */
    unsigned char mrope_axis[POSENC_MAX_FREQ]; /* 0/1/2 = t/h/w position axis of frequency i */
    int mrope;                            /* 1 when mrope_axis is meaningful */
    float pos_div_f32;                    /* hf/vllm precision: 0, or the float32 angle is
                                             inv_freq_f32 * f32(f32(pos) / pos_div_f32) (vLLM's
                                             LinearScalingRotaryEmbedding: t / scaling_factor) */
    int has_ggml;                         /* 1 when ggml holds llama.cpp's arguments for this
                                             model (posenc_rope_params_set_ggml) */
    posenc_ggml_rope ggml;                /* what the ggml precision computes from */
};
#endif

/* Compute inv_freq (both precisions), attention scaling and softmax factor for cfg at sequence
 * length seq_len (0 = what transformers computes at load time; dynamic and longrope change past
 * max_position_embeddings / original_max_position_embeddings). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_params_compute(const posenc_rope_config *cfg, int64_t seq_len,
                                         posenc_rope_params *out, posenc_error *err);
/* The same into posenc_rope_params the library allocates, for a program that does not see
 * their layout. Caller frees with posenc_rope_params_free. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_params_new(const posenc_rope_config *cfg, int64_t seq_len,
                                     posenc_rope_params **out, posenc_error *err);
POSENC_API
void posenc_rope_params_free(posenc_rope_params *p);
/* The fields p->type, style, head_dim, rotary_dim and attention_scaling, for the same
 * programs. */
POSENC_API
posenc_rope_type posenc_rope_params_type(const posenc_rope_params *p);
POSENC_API
posenc_style posenc_rope_params_style(const posenc_rope_params *p);
POSENC_API
int posenc_rope_params_head_dim(const posenc_rope_params *p);
POSENC_API
int posenc_rope_params_rotary_dim(const posenc_rope_params *p);
POSENC_API
double posenc_rope_params_attention_scaling(const posenc_rope_params *p);

/* Attach llama.cpp's arguments g to p for the ggml precision (p->ggml, p->has_ggml).
 * POSENC_EUNSUPPORTED when g cannot stand for p: no RoPE or the vision mode, n_dims not
 * p->rotary_dim, a pairing that no weight permutation relates to the config's (NORM is taken
 * on the converter's permuted Q/K for a neox config, which needs the whole head rotated; the
 * half modes need a neox config), a frequency-factor count other than 0 or n_dims / 2, M-RoPE sections that do
 * not cover the frequencies, or values that are not finite and positive where ggml needs them. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_params_set_ggml(posenc_rope_params *p, const posenc_ggml_rope *g,
                                          posenc_error *err);
/* Width of one table row in a layout. */
POSENC_API
int posenc_rope_table_width(const posenc_rope_params *p, posenc_layout layout);

/* Per-frequency cos and sin (n_freq values each, attention_scaling applied) at position pos.
 * exact: accurate doubles; hf and vllm: the float32 values of that pipeline, as doubles; ggml:
 * the float32 values llama.cpp's CPU backend computes (attn_factor applied), as doubles, or NaN
 * when p->has_ggml is 0. */
POSENC_API
void posenc_rope_cossin(const posenc_rope_params *p, posenc_precision prec, int64_t pos,
                        double *cos_f, double *sin_f);
/* Same for 3-axis (t, h, w) multimodal positions; equals posenc_rope_cossin when p->mrope is 0
 * (uses pos3[0]). ggml: ggml's own sections (p->ggml.sections) pick the axis. */
POSENC_API
void posenc_rope_cossin3(const posenc_rope_params *p, posenc_precision prec,
                         const int64_t pos3[3], double *cos_f, double *sin_f);

/* Rows of the cos and sin tables for n positions, each row posenc_rope_table_width() wide,
 * written to cos_out and sin_out (n * width doubles each). Runs on nthreads threads (<=1: one).
 * POSENC_EINVAL for the ggml precision without p->has_ggml. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_table(const posenc_rope_params *p, posenc_precision prec,
                                posenc_layout layout, const int64_t *positions, size_t n,
                                double *cos_out, double *sin_out, int nthreads,
                                posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif
