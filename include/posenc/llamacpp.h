/* posenc/llamacpp.h: RoPE as llama.cpp sees it.
 *
 * Three steps, each its own function, so that a GGUF file can be checked against a config at
 * every step:
 *   config  -> posenc_gguf_rope   what convert_hf_to_gguf.py writes for the config (the RoPE keys
 *                                 and tensors of a GGUF file), posenc_gguf_rope_from_model;
 *   GGUF    -> posenc_gguf_rope   what a file holds (formats/: posenc_gguf_read_rope);
 *   posenc_gguf_rope -> posenc_ggml_rope
 *                                 the ggml_rope_ext arguments llama.cpp derives from those keys
 *                                 (src/llama-model.cpp load_hparams and llama_model_rope_type,
 *                                 src/llama-context.cpp's cparams), posenc_ggml_rope_from_gguf;
 *   posenc_ggml_rope -> cos/sin   ggml's CPU numerics (ggml/src/ggml-cpu/ops.cpp
 *                                 ggml_rope_cache_init, rope_yarn; ggml/src/ggml.c
 *                                 ggml_rope_yarn_corr_dims), posenc_ggml_rope_cossin
 *                                 (posenc/ggml.h).
 * All in ggml-org/llama.cpp. */
#ifndef POSENC_LLAMACPP_H
#define POSENC_LLAMACPP_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"
#include "posenc/ggml.h"
#include "posenc/io.h"
#include "posenc/model.h"
#include "posenc/rope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which keys of posenc_gguf_rope are present (bits of .has). */
enum {
    POSENC_GGUF_FREQ_BASE = 1u << 0,
    POSENC_GGUF_DIMENSION_COUNT = 1u << 1,
    POSENC_GGUF_DIMENSION_SECTIONS = 1u << 2,
    POSENC_GGUF_SCALING_TYPE = 1u << 3,
    POSENC_GGUF_SCALING_FACTOR = 1u << 4,
    POSENC_GGUF_ORIG_CTX = 1u << 5,
    POSENC_GGUF_YARN_EXT_FACTOR = 1u << 6,
    POSENC_GGUF_YARN_ATTN_FACTOR = 1u << 7,
    POSENC_GGUF_YARN_BETA_FAST = 1u << 8,
    POSENC_GGUF_YARN_BETA_SLOW = 1u << 9,
    POSENC_GGUF_YARN_LOG_MUL = 1u << 10,
    POSENC_GGUF_ATTN_FACTOR = 1u << 11,     /* {arch}.rope.scaling.attn_factor */
    POSENC_GGUF_CONTEXT_LENGTH = 1u << 12,
    POSENC_GGUF_KEY_LENGTH = 1u << 13,      /* {arch}.attention.key_length */
    POSENC_GGUF_HEAD_COUNT = 1u << 14,
    POSENC_GGUF_EMBEDDING_LENGTH = 1u << 15,
    POSENC_GGUF_FREQ_BASE_SWA = 1u << 16,
    POSENC_GGUF_SCALE_LINEAR = 1u << 17,    /* the old {arch}.rope.scale_linear */
    POSENC_GGUF_KEY_LENGTH_MLA = 1u << 18,  /* {arch}.attention.key_length_mla (DeepSeek MLA) */
    POSENC_GGUF_SLIDING_WINDOW = 1u << 19,  /* {arch}.attention.sliding_window */
    POSENC_GGUF_SWA_PATTERN = 1u << 20,     /* {arch}.attention.sliding_window_pattern */
    POSENC_GGUF_BLOCK_COUNT = 1u << 21,     /* {arch}.block_count */
    POSENC_GGUF_SCALING_ALPHA = 1u << 22,   /* {arch}.rope.scaling.alpha (NTK alpha) */
    POSENC_GGUF_DENSE_LEAD = 1u << 23,      /* {arch}.leading_dense_block_count */
    POSENC_GGUF_ROPE_FINETUNED = 1u << 24   /* {arch}.rope.scaling.finetuned (bool) */
};

#define POSENC_GGUF_MAX_LAYERS 1024

#define POSENC_GGUF_ARCH_MAX 64

/* The RoPE-relevant contents of a GGUF file (value type). Keys are {arch}.rope.* unless noted;
 * a field is meaningful when its bit is set in .has; tensors are present when n_* > 0. This
 * struct, posenc_ggml_rope and posenc_gguf_check are defined only under
 * POSENC_STATIC_LINKING_ONLY (posenc/export.h): their layout may change in any release. */
typedef struct posenc_gguf_rope posenc_gguf_rope;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_gguf_rope {
    char arch[POSENC_GGUF_ARCH_MAX];  /* general.architecture */
    unsigned has;
    double freq_base;                 /* rope.freq_base (f32 in the file) */
    double freq_base_swa;
    int64_t dimension_count;          /* rope.dimension_count */
    int n_sections;
    int32_t sections[4];              /* rope.dimension_sections */
    char scaling_type[16];            /* rope.scaling.type: none, linear, yarn, longrope */
    double scaling_factor;            /* rope.scaling.factor (or scale_linear) */
    int64_t original_context_length;  /* rope.scaling.original_context_length */
    double yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow, yarn_log_multiplier;
    double attn_factor;               /* rope.scaling.attn_factor */
    double scaling_alpha;             /* rope.scaling.alpha */
    int64_t rope_finetuned;           /* rope.scaling.finetuned: 0 or 1 */
    int64_t context_length;           /* {arch}.context_length */
    int64_t key_length;               /* {arch}.attention.key_length */
    int64_t head_count;               /* {arch}.attention.head_count */
    int64_t embedding_length;         /* {arch}.embedding_length */
    int64_t key_length_mla;           /* {arch}.attention.key_length_mla */
    int64_t sliding_window;           /* {arch}.attention.sliding_window */
    int64_t block_count;              /* {arch}.block_count (layers, MTP layers included) */
    int64_t dense_lead;               /* {arch}.leading_dense_block_count */
    int64_t swa_period;               /* attention.sliding_window_pattern as a uint32 (0 when
                                         it is an array) */
    int n_swa_layers;                 /* ... as an array of n_swa_layers flags, 1 = sliding */
    int swa_layers_int32;             /* the array is int32 (MiMo-V2), else bool */
    uint8_t swa_layers[POSENC_GGUF_MAX_LAYERS];
    int n_rope_freqs;                 /* rope_freqs.weight (llama3, Phi-3 style factors) */
    float rope_freqs[POSENC_MAX_FREQ];
    int n_factors_long;               /* rope_factors_long.weight (LongRoPE) */
    float factors_long[POSENC_MAX_FREQ];
    int n_factors_short;              /* rope_factors_short.weight */
    float factors_short[POSENC_MAX_FREQ];
};
#endif

/* What convert_hf_to_gguf.py writes for the model (layer_type as posenc_model_rope).
 * POSENC_EUNSUPPORTED with a one-line reason when the converter has no rule for the model. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_gguf_rope_from_model(const posenc_model *m, const char *layer_type,
                                          posenc_gguf_rope *out, posenc_error *err);

/* Give a GGUF writer (posenc_writer_open with format gguf; before its first write) the llama.cpp
 * keys and tensors of g: general.architecture, every {arch}.* key whose bit is set in g->has with
 * the type gguf-py's GGUFWriter gives it (uint32 lengths, float32 frequencies and factors, the
 * string scaling type, int32 dimension sections), and the F32 tensors rope_freqs.weight,
 * rope_factors_long.weight and rope_factors_short.weight of g's n_* factors, stored after the
 * declared arrays (formats/files/gguf_write.c). POSENC_EINVAL for a writer of another format, a second
 * call, or a value that does not fit its GGUF type. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_gguf_writer_rope(posenc_writer *w, const posenc_gguf_rope *g,
                                      posenc_error *err);

/* What llama.cpp passes to ggml_rope_ext for a file holding g, with context n_ctx (0: the
 * file's context_length). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_ggml_rope_from_gguf(const posenc_gguf_rope *g, int64_t n_ctx,
                                         posenc_ggml_rope *out, posenc_error *err);

/* The same for the layers of type layer_type ("sliding_attention", "full_attention"; NULL: the
 * global layers, as posenc_ggml_rope_from_gguf). Where llama.cpp gives sliding layers their own
 * RoPE (Gemma 3: rope.freq_base_swa and freq_scale 1 when the file has a sliding window), a
 * sliding layer gets those; an architecture without such a rule runs every layer alike. Another
 * name is POSENC_EINVAL for an architecture with the rule. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_ggml_rope_from_gguf_layer(const posenc_gguf_rope *g, int64_t n_ctx,
                                               const char *layer_type, posenc_ggml_rope *out,
                                               posenc_error *err);

/* Which of the first n layers llama.cpp runs as sliding-window layers for a file holding g
 * (hparams.is_swa(il): the uint32 attention.sliding_window_pattern p, else the architecture's
 * default, makes the layers il % p < p - 1 sliding, src/llama-hparams.cpp set_swa_pattern; an
 * array is read only where the loader reads one (MiMo-V2), else ignored; Gemma 3 and OLMo 3
 * without a window have none). sliding[il] = 1 for a sliding layer. Returns 0 when the
 * architecture has no sliding-window rule posenc has read (then nothing is written), else 1. */
POSENC_API
int posenc_ggml_swa_layers(const posenc_gguf_rope *g, int n, uint8_t *sliding);

/* Which of the first n layers llama.cpp rotates with no RoPE for a file holding g: Cohere 2's
 * non-sliding layers (src/models/cohere2.cpp), Llama 4's every 4th ((il + 1) % 4 == 0;
 * none when attention.sliding_window is 0, src/models/llama4.cpp). nope[il] = 1 for such a
 * layer. Returns 0 (nothing written) for an architecture without such a rule. */
POSENC_API
int posenc_ggml_nope_layers(const posenc_gguf_rope *g, int n, uint8_t *nope);

/* Read the RoPE keys and tensors of a GGUF file (formats/). Every key's GGUF type is checked
 * (an unsigned integer where llama.cpp reads one, float32 for floats, a string for the scaling
 * type, an int32 array of at most 4 for the sections); a wrong type is POSENC_EFORMAT naming the
 * key. Tensors must be F32 vectors of at most POSENC_MAX_FREQ values. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_gguf_read_rope(const char *path, posenc_gguf_rope *out, posenc_error *err);

/* The llama.cpp facts of one architecture (lib/model/llama_arch.def). known = 0: llama.cpp has no
 * such architecture (mode POSENC_GGML_ROPE_NONE then means nothing). converter = 0: posenc has
 * not read the converter's RoPE rules for it; kq_known = 0: nor the graph's softmax scale. */
typedef struct posenc_ggml_arch {
    int known;
    posenc_ggml_mode mode;            /* without rope sections */
    posenc_ggml_mode mode_sections;   /* with sections[0], [1] > 0 */
    int converter, kq_known, reads_sections;
} posenc_ggml_arch;
POSENC_API
void posenc_ggml_arch_info(const char *arch, posenc_ggml_arch *out);

/* The llama.cpp architecture convert_hf_to_gguf.py writes for m (lib/model/families.def gguf_arch),
 * NULL when the registry names none. Borrowed (static). */
POSENC_API
const char *posenc_ggml_model_arch(const posenc_model *m);

/* The pair order of Q/K in llama.cpp's own tensors (the dump layout POSENC_APPLY_GGML) for
 * architecture arch and a config pairing style (has_sections: the file has rope sections):
 * gptj for NORM (pairs (2i, 2i+1)), neox for NEOX, MROPE and IMROPE. *permuted (may be NULL)
 * is 1 when the converter permuted q/k into that order (a neox config under NORM:
 * convert_hf_to_gguf.py LlamaModel.permute), so transformers' dumps and llama.cpp's differ in
 * element order. POSENC_EUNSUPPORTED "llama.cpp: posenc has no rules for architecture X" for an
 * architecture llama.cpp does not have (or NULL), and for one without RoPE or a gptj config
 * under a halves mode. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_ggml_layout_style(const char *arch, int has_sections, posenc_style style,
                                       posenc_style *out, int *permuted, posenc_error *err);

/* ---- verify --gguf: the file against what the converter writes for the config ---- */

#define POSENC_GGUF_MAX_FINDINGS 32

/* One comparison: a GGUF key or tensor, what the converter writes (expected), what the file
 * holds (found), and when they differ what llama.cpp then does differently. */
typedef struct posenc_gguf_finding {
    char key[96];              /* "llama.rope.freq_base", "rope_freqs.weight" */
    char what[48];             /* the ggml_rope_ext argument it feeds: "freq_base", ... */
    int ok;
    char expected[160], found[160];
    char consequence[320];     /* "" when ok */
} posenc_gguf_finding;

typedef struct posenc_gguf_check posenc_gguf_check;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_gguf_check {
    int n, n_failed;
    posenc_gguf_finding f[POSENC_GGUF_MAX_FINDINGS];
};
#endif

/* Compare the file's keys (have) with the converter's (want, from posenc_gguf_rope_from_model)
 * as llama.cpp reads them: each ggml_rope_ext argument both derive (posenc_ggml_rope_from_gguf
 * at want's context length), the LongRoPE factors of both halves, the softmax scale and the
 * architecture. orig_ctx names the context past which llama3 / LongRoPE scaling matters in
 * the consequences (0: not known). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_gguf_compare(const posenc_gguf_rope *want, const posenc_gguf_rope *have,
                                  int64_t orig_ctx, posenc_gguf_check *out, posenc_error *err);
/* The same for the layers of type layer_type (posenc_ggml_rope_from_gguf_layer; NULL: as
 * posenc_gguf_compare): the cos/sin check compares both sides' tables with that layer type's
 * arguments (Gemma 3's sliding layers: freq_base_swa and scale 1). A layer type llama.cpp
 * rotates with no RoPE (Cohere 2's full_attention) compares no tables and says so. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_gguf_compare_layer(const posenc_gguf_rope *want, const posenc_gguf_rope *have,
                                        int64_t orig_ctx, const char *layer_type,
                                        posenc_gguf_check *out, posenc_error *err);

/* The ggml precision's parameters (lib/runtimes/rope_llamacpp.c): posenc_rope_params_set_ggml
 * (posenc/rope.h) from the model, what convert_hf_to_gguf.py writes for it
 * (posenc_gguf_rope_from_model), read as llama.cpp reads it with context n_ctx
 * (posenc_ggml_rope_from_gguf; 0: the file's context_length), attached to p (computed for the
 * same layer type). The converter's or loader's refusal is returned as they give it. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_params_ggml(posenc_rope_params *p, const posenc_model *m,
                                      const char *layer_type, int64_t n_ctx, posenc_error *err);
/* The same from a GGUF file's keys g (posenc_gguf_read_rope): what llama.cpp computes with that
 * file, whatever the config says. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_params_ggml_gguf(posenc_rope_params *p, const posenc_gguf_rope *g,
                                           int64_t n_ctx, posenc_error *err);
/* The same for the layers of type layer_type (posenc_ggml_rope_from_gguf_layer: Gemma 3's
 * sliding layers run rope.freq_base_swa with scale 1; NULL: the global layers, as above). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_params_ggml_gguf_layer(posenc_rope_params *p,
                                                 const posenc_gguf_rope *g, int64_t n_ctx,
                                                 const char *layer_type, posenc_error *err);

/* ggml's drift from exact math at position pos: max |cos, sin (ggml) - exact| over the
 * frequencies, with the parameters and context of pos + 1 (as posenc gen --positions pos), the
 * exact values of llama.cpp's definition (YaRN's correction range always rounded, as
 * ggml_rope_yarn_corr_dims does, whatever the config's truncate says). The refusals of
 * posenc_rope_params_ggml, as it gives them. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_ggml_rope_drift(const posenc_model *m, const char *layer_type, int64_t pos,
                                     double *drift, posenc_error *err);
/* The same, against transformers' definition (the config's truncate as it is): where llama.cpp
 * defines RoPE differently (gpt-oss: truncate false ignored) the gap is that difference. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_ggml_rope_gap(const posenc_model *m, const char *layer_type, int64_t pos,
                                   double *gap, posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif
