/* posenc/ggml.h: the arguments llama.cpp passes to ggml_rope_ext, as values: what the ggml
 * precision of posenc/rope.h computes from. How a model or a GGUF file gets them is
 * posenc/llamacpp.h. */
#ifndef POSENC_GGML_H
#define POSENC_GGML_H

#include "posenc/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ggml's rope modes (ggml.h GGML_ROPE_TYPE_*); -1 when llama.cpp applies no RoPE. */
typedef enum posenc_ggml_mode {
    POSENC_GGML_ROPE_NONE = -1,
    POSENC_GGML_ROPE_NORM = 0,
    POSENC_GGML_ROPE_NEOX = 2,
    POSENC_GGML_ROPE_MROPE = 8,
    POSENC_GGML_ROPE_VISION = 24,
    POSENC_GGML_ROPE_IMROPE = 40
} posenc_ggml_mode;
POSENC_API
const char *posenc_ggml_mode_name(posenc_ggml_mode m); /* "norm", "neox", ... */

/* The arguments of ggml_rope_ext for one model and context (value type). */
typedef struct posenc_ggml_rope posenc_ggml_rope;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_ggml_rope {
    posenc_ggml_mode mode;
    int n_dims;                       /* rotated dims (n_rot) */
    int head_dim;                     /* n_embd_head_k */
    int n_ctx_orig;                   /* n_ctx_orig_yarn */
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int sections[4];                  /* mrope/imrope/vision */
    int n_freq_factors;               /* 0, or n_dims / 2 factors dividing theta (rope_freqs) */
    float freq_factors[POSENC_MAX_FREQ];
    double kq_scale;                  /* softmax scale llama.cpp uses (1/sqrt(head_dim) unless the
                                         model's graph changes it) */
    const char *note;                 /* where llama.cpp and transformers differ for this
                                         architecture (lib/model/llama_arch.def .note), NULL:
                                         nothing known. Borrowed (static). */
};
#endif

/* cos and sin of frequency i at position pos as ggml's CPU backend computes them (float32,
 * attn_factor applied), for i < n_dims / 2, written as doubles. Three-axis positions for
 * mrope/imrope in pos3 (pos3[0] for the others; the fourth M-RoPE position is 0, as llama.cpp
 * sets it for text tokens). The vision mode and POSENC_GGML_ROPE_NONE are not computed: every
 * value is NaN. Portable (no FMA) build's semantics; see lib/encodings/rope_ggml.c. */
POSENC_API
void posenc_ggml_rope_cossin(const posenc_ggml_rope *r, const int64_t pos3[3], double *cos_f,
                             double *sin_f);
/* The float32 angles ggml takes cos and sin of (same positions and rule), as doubles; at
 * position 1 they are ggml's per-token angle steps, its counterpart of inv_freq (ggml
 * accumulates each angle from the position itself, so p times them is not ggml's angle at p). */
POSENC_API
void posenc_ggml_rope_angles(const posenc_ggml_rope *r, const int64_t pos3[3], double *angle);
/* The magnitude ggml multiplies cos and sin by: attn_factor, times 1 + 0.1 ln(1 / freq_scale)
 * when ext_factor is not 0 (ops.cpp rope_yarn), in float32. */
POSENC_API
double posenc_ggml_rope_mscale(const posenc_ggml_rope *r);

#ifdef __cplusplus
}
#endif

#endif
