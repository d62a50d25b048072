/* posenc/model.h: what a Hugging Face config.json implies about position encoding.
 *
 * A posenc_model is a config.json resolved the way transformers v5 does (key precedence,
 * per-model defaults, text_config nesting, per-layer-type dicts), driven by the model-family
 * registry (lib/model/families.def: one row per model_type). It answers which encoding the model uses,
 * with which parameters, and which layers carry none. Build one with posenc_config_load or
 * posenc_config_parse (posenc/config.h). */
#ifndef POSENC_MODEL_H
#define POSENC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/dtype.h"
#include "posenc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum posenc_encoding {
    POSENC_ENC_NONE = 0,     /* NoPE: the attention layers carry no position encoding */
    POSENC_ENC_ROPE,
    POSENC_ENC_ALIBI,
    POSENC_ENC_T5,           /* T5 relative buckets */
    POSENC_ENC_LEARNED,      /* learned absolute table (GPT-2, BERT) */
    POSENC_ENC_SINUSOIDAL,   /* fixed absolute sinusoids */
    POSENC_ENC_SHAW          /* Shaw et al. clipped relative positions */
} posenc_encoding;

/* "none", "rope", "alibi", "t5", "learned", "sinusoidal", "shaw". */
POSENC_API
const char *posenc_encoding_name(posenc_encoding e);
POSENC_API POSENC_NODISCARD
posenc_status posenc_encoding_parse(const char *s, posenc_encoding *out, posenc_error *err);

typedef enum posenc_rope_type {
    POSENC_ROPE_DEFAULT = 0,
    POSENC_ROPE_LINEAR,
    POSENC_ROPE_DYNAMIC,
    POSENC_ROPE_YARN,
    POSENC_ROPE_LONGROPE,
    POSENC_ROPE_LLAMA3,
    POSENC_ROPE_PROPORTIONAL
} posenc_rope_type;

POSENC_API
const char *posenc_rope_type_name(posenc_rope_type t);

/* Which elements form a rotated pair: neox = (i, i + d/2) (rotate_half), gptj = (2i, 2i + 1). */
typedef enum posenc_style { POSENC_STYLE_NEOX = 0, POSENC_STYLE_GPTJ = 1 } posenc_style;
POSENC_API
const char *posenc_style_name(posenc_style s);
POSENC_API POSENC_NODISCARD
posenc_status posenc_style_parse(const char *s, posenc_style *out, posenc_error *err);

/* How the model forms and applies its pairs (the style above says which elements pair):
 * half = rotate_half (neox); pairs = rotate_every_two or complex multiplication (GPT-J, Llama 4,
 * DeepSeek-V2); repeat_interleave = repeat_interleave(2) tables with pairwise rotation (Cohere);
 * glm_interleave = cat-layout tables interleaved inside apply (GLM-4); deinterleave = q/k
 * de-interleaved, then rotate_half, output left permuted (DeepSeek-V3 rope_interleave). */
typedef enum posenc_pairing {
    POSENC_PAIR_HALF = 0,
    POSENC_PAIR_PAIRS,
    POSENC_PAIR_REPEAT_INTERLEAVE,
    POSENC_PAIR_GLM_INTERLEAVE,
    POSENC_PAIR_DEINTERLEAVE
} posenc_pairing;
POSENC_API
const char *posenc_pairing_name(posenc_pairing p);

#define POSENC_MAX_FREQ 512 /* rotary_dim / 2 at most; head_dim up to 1024 */

/* The resolved RoPE parameters of one layer type: every key transformers reads, after
 * precedence and defaults. A plain value type (no pointers), so it can be copied freely. Its
 * layout (8 KB) is visible only under POSENC_STATIC_LINKING_ONLY (posenc/export.h); without
 * it, posenc_rope_config_new gives one to hold by pointer. */
typedef struct posenc_rope_config posenc_rope_config;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_rope_config {
    posenc_rope_type type;
    double theta;
    char theta_source[64];          /* "rope_parameters.rope_theta", "rope_theta", "default", ... */
    int head_dim;                   /* per-head size the table serves */
    int rotary_dim;                 /* rotated dims; head_dim - rotary_dim pass through */
    int exponent_dim;               /* D in theta^(-2i/D): rotary_dim, or head_dim (proportional) */
    double partial_rotary_factor;   /* 1.0 when absent */
    posenc_style style;
    posenc_pairing pairing;
    int64_t max_position_embeddings;
    int64_t original_max_position_embeddings; /* M0; filled from max_position_embeddings */
    double factor;                  /* scaling factor; 1.0 for default */
    double low_freq_factor, high_freq_factor;  /* llama3 */
    double beta_fast, beta_slow;    /* yarn (defaults 32 and 1) */
    int truncate;                   /* yarn (default 1) */
    double mscale, mscale_all_dim;  /* yarn/DeepSeek; 0 when absent */
    double attention_factor;        /* explicit attention_factor; valid when has_attention_factor */
    int has_attention_factor;
    int n_short_factor, n_long_factor;          /* longrope: both rotary_dim/2 long */
    double short_factor[POSENC_MAX_FREQ];
    double long_factor[POSENC_MAX_FREQ];
    int n_mrope_section;            /* 0, or 3 for Qwen2-VL/Qwen3-VL/Qwen3.5 multimodal RoPE */
    int mrope_section[4];
    int mrope_interleaved;          /* Qwen3-VL/Qwen3.5: THWTHW... instead of TTT..HHH..WWW */
    int softmax_mscale;             /* DeepSeek-V3: softmax scale *= g(factor, mscale_all_dim)^2 */
};
#endif

/* Fixed sinusoidal tables (posenc/bias.h computes them). */
typedef enum posenc_sinusoidal_variant {
    POSENC_SIN_VASWANI = 0, /* sin/cos interleaved, exponent 2(j//2)/d */
    POSENC_SIN_T2T,         /* [sin | cos], exponent k/(d/2 - 1), zero column when d is odd */
    POSENC_SIN_FAIRSEQ,     /* as t2t; row padding_idx zero; real positions start at
                               padding_idx + 1 */
    POSENC_SIN_MARIAN,      /* [sin | cos], exponent 2k/d, odd d: extra sin column */
    POSENC_SIN_COS_SIN      /* [cos | sin], exponent k/(d/2 - 1), zero column when d is odd
                               (MusicGen) */
} posenc_sinusoidal_variant;

typedef enum posenc_alibi_kind {
    POSENC_ALIBI_REFERENCE = 0,     /* Press et al., BLOOM, Baichuan: 2^(-8/P) powers */
    POSENC_ALIBI_MPT,               /* 1/2^(k*alibi_bias_max/P), P = 2^ceil(log2 H) */
    POSENC_ALIBI_FALCON             /* reference slopes, product in bfloat16 */
} posenc_alibi_kind;

/* Parameters of the non-rotary encodings, as far as the config says (0 = not given). */
typedef struct posenc_bias_config {
    int heads;
    int head_dim;
    int d_model;
    int64_t max_positions;
    posenc_alibi_kind alibi_kind;
    double alibi_bias_max;          /* MPT, default 8 */
    int num_buckets;                /* T5 relative_attention_num_buckets */
    int max_distance;               /* T5 relative_attention_max_distance */
    int is_decoder;                 /* T5 decoder (causal buckets) */
    int max_relative_position;      /* Shaw k */
    int shaw_query_minus_key;       /* BERT relative_key indexes query - key (Shaw: key - query) */
    char learned_tensor[POSENC_NAME_MAX]; /* checkpoint tensor of the learned table */
    int padding_idx;                /* fairseq sinusoidal; -1 when none */
    int position_offset;            /* learned/sinusoidal: table row of position 0 (BART, OPT: 2;
                                       RoBERTa: padding_idx + 1) */
    posenc_sinusoidal_variant sinusoidal_variant; /* the model's own sinusoids */
    int alibi_symmetric;            /* ALiBi -m|i-j| of a bidirectional encoder (BERT alibi) */
    /* Encoder-decoder models whose encoder uses another encoding (Whisper: sinusoidal encoder,
     * learned decoder). encoder_encoding is POSENC_ENC_NONE with has_encoder = 0 otherwise. */
    int has_encoder;
    posenc_encoding encoder_encoding;
    posenc_sinusoidal_variant encoder_variant;
    int64_t encoder_max_positions;
} posenc_bias_config;

typedef struct posenc_model posenc_model;

POSENC_API
void posenc_model_free(posenc_model *m);

POSENC_API
posenc_encoding posenc_model_encoding(const posenc_model *m);
/* The model_type that decided the resolution (text_config's when nested); borrowed. "" when
 * the config has none. */
POSENC_API
const char *posenc_model_type(const posenc_model *m);
/* The registry row that resolved the model ("llama", "gpt_neox", ...), or "generic" when the
 * model_type is not in the registry and the generic RoPE rules were used; borrowed. */
POSENC_API
const char *posenc_model_family(const posenc_model *m);
/* 1 when resolved with the generic rules (an unknown model_type with explicit RoPE keys). */
POSENC_API
int posenc_model_is_generic(const posenc_model *m);
/* One line that a command must show the user (an unknown model_type resolved with the generic
 * rules), without the file name; NULL when there is none. Borrowed. */
POSENC_API
const char *posenc_model_warning(const posenc_model *m);
/* The i-th such line (0 is posenc_model_warning's), NULL past the last: also a key that no
 * rope type defines, a key a small edit from a RoPE key (rope_scalling), a duplicate key.
 * Borrowed. */
POSENC_API
const char *posenc_model_warning_at(const posenc_model *m, size_t i);
POSENC_API
int64_t posenc_model_max_positions(const posenc_model *m);

/* Layers. num_hidden_layers (0 when the config does not say) and the indices of the layers that
 * carry no RoPE in a RoPE model (NoPE layers: SmolLM3 no_rope_layers, Llama 4 every 4th layer,
 * EXAONE-4 global layers, linear-attention and convolution layers of hybrids); *idx borrowed. */
POSENC_API
int64_t posenc_model_layer_count(const posenc_model *m);

/* The attention head counts of layer_type (NULL: the model's) as the config gives them: *q
 * num_attention_heads (n_head, num_heads, n_heads), *kv num_key_value_heads (num_kv_heads,
 * n_head_kv; 1 with multi_query; else *q), and for a layer type that is not sliding_attention
 * of a config with attention_k_eq_v, num_global_key_value_heads when set (Gemma 4). 0 when the
 * config does not say. Used to split and check flat Q/K dumps (posenc/apply.h). */
POSENC_API
void posenc_model_heads(const posenc_model *m, const char *layer_type, int64_t *q, int64_t *kv);
POSENC_API
size_t posenc_model_nope_layers(const posenc_model *m, const int64_t **idx);
/* Every distinct name in the config's layer_types (RoPE or not), with its encoding. */
POSENC_API
size_t posenc_model_layer_name_count(const posenc_model *m);
POSENC_API
const char *posenc_model_layer_name(const posenc_model *m, size_t i);
POSENC_API
posenc_encoding posenc_model_layer_name_encoding(const posenc_model *m, size_t i);
/* Layer `layer` (0-based) as the config describes it: *type gets its name in layer_types
 * (borrowed; NULL when the config has no layer_types or they end before this layer) and *nope
 * 1 when it is one of posenc_model_nope_layers (either may be NULL). POSENC_ERANGE when layer
 * is negative or not below num_hidden_layers (or the length of layer_types when the config
 * gives no num_hidden_layers); a config that gives neither accepts any layer >= 0. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_model_layer(const posenc_model *m, int64_t layer, const char **type,
                                 int *nope, posenc_error *err);

/* Layer types with their own RoPE parameters (Gemma 3/4 full/sliding, MiMo full/swa). 0 for
 * configs with one set of parameters. Names borrowed. */
POSENC_API
size_t posenc_model_layer_type_count(const posenc_model *m);
POSENC_API
const char *posenc_model_layer_type_name(const posenc_model *m, size_t i);

/* RoPE parameters for layer_type (NULL: the only set; an error naming the choices when the
 * config has several). POSENC_EINVAL when the model does not use RoPE. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_model_rope(const posenc_model *m, const char *layer_type,
                                posenc_rope_config *out, posenc_error *err);
/* The same into a posenc_rope_config the library allocates, for a program that does not see its
 * layout. Caller frees with posenc_rope_config_free. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_rope_config_new(const posenc_model *m, const char *layer_type,
                                     posenc_rope_config **out, posenc_error *err);
POSENC_API
void posenc_rope_config_free(posenc_rope_config *c);

/* Non-rotary parameters; borrowed, valid for any encoding (fields 0 when unknown). */
POSENC_API
const posenc_bias_config *posenc_model_bias(const posenc_model *m);

/* Human notes: where posenc followed the model's code over transformers, defaults it filled,
 * what changes past original_max_position_embeddings. Borrowed. */
POSENC_API
size_t posenc_model_note_count(const posenc_model *m);
POSENC_API
const char *posenc_model_note(const posenc_model *m, size_t i);

/* ---- the model-family registry (lib/model/families.def) ---- */

/* One registry row as text, for listings. Every pointer is borrowed from static storage. */
typedef struct posenc_family_info {
    const char *name;       /* model_type */
    const char *encoding;   /* rope, alibi, ..., "text" (reads a text sub-config),
                               "relative" (a scheme posenc does not generate) */
    const char *pairing;    /* RoPE rows: half, pairs, repeat_interleave, glm_interleave,
                               deinterleave; "" otherwise */
    const char *alias_of;   /* "" or the row this model_type resolves as */
    const char *text;       /* "text" rows: the model_type of a text_config without one */
    const char *notes;      /* one line: what is special */
    const char *source;     /* where the row was read: a path in huggingface/transformers
                               (src/transformers/models/...) or "REPO: FILE" for remote code */
    const char *gguf_arch;  /* "" or the llama.cpp architecture convert_hf_to_gguf.py writes */
    int llama_rules;        /* 1: posenc has read the converter's RoPE rules for gguf_arch
                               (lib/model/llama_arch.def .conv), so --precision ggml, verify --gguf and
                               --layout ggml know what llama.cpp computes */
} posenc_family_info;

POSENC_API
size_t posenc_family_count(void);
/* Row i (0 <= i < posenc_family_count()); POSENC_EINVAL past the end. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_family_get(size_t i, posenc_family_info *out, posenc_error *err);
/* The row named name (a model_type or an alias); POSENC_ENOTFOUND when there is none. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_family_find(const char *name, posenc_family_info *out, posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif
