/* posenc/model.h: what a Hugging Face config.json implies about position encoding.
 *
 * posenc_model_from_json resolves a parsed config.json the way transformers v5 does (key
 * precedence, per-model defaults, text_config nesting, per-layer-type dicts) and answers which
 * encoding the model uses and with which parameters. Reading the file is formats/' job
 * (posenc_config_load in posenc/config.h); this module only looks at the parsed tree. */
#ifndef POSENC_MODEL_H
#define POSENC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/dtype.h"
#include "posenc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cJSON;

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
const char *posenc_encoding_name(posenc_encoding e);
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

const char *posenc_rope_type_name(posenc_rope_type t);

/* Which elements form a rotated pair: neox = (i, i + d/2) (rotate_half), gptj = (2i, 2i + 1). */
typedef enum posenc_style { POSENC_STYLE_NEOX = 0, POSENC_STYLE_GPTJ = 1 } posenc_style;
const char *posenc_style_name(posenc_style s);
posenc_status posenc_style_parse(const char *s, posenc_style *out, posenc_error *err);

#define POSENC_MAX_FREQ 512 /* rotary_dim / 2 at most; head_dim up to 1024 */

/* The resolved RoPE parameters of one layer type: every key transformers reads, after
 * precedence and defaults. A plain value type (no pointers), so it can be copied freely. */
typedef struct posenc_rope_config {
    posenc_rope_type type;
    double theta;
    char theta_source[64];          /* "rope_parameters.rope_theta", "rope_theta", "default", ... */
    int head_dim;                   /* per-head size the table serves */
    int rotary_dim;                 /* rotated dims; head_dim - rotary_dim pass through */
    int exponent_dim;               /* D in theta^(-2i/D): rotary_dim, or head_dim (proportional) */
    double partial_rotary_factor;   /* 1.0 when absent */
    posenc_style style;
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
} posenc_rope_config;

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
    char learned_tensor[POSENC_NAME_MAX]; /* checkpoint tensor of the learned table */
    int padding_idx;                /* fairseq sinusoidal; -1 when none */
} posenc_bias_config;

typedef struct posenc_model posenc_model;

/* Resolve a parsed config.json. `source` names the file in messages. On success *out is set;
 * caller frees with posenc_model_free. Unknown rope_type, missing required keys and nonsense
 * values are POSENC_ECONFIG with a message naming the key. */
posenc_status posenc_model_from_json(const struct cJSON *root, const char *source,
                                     posenc_model **out, posenc_error *err);
void posenc_model_free(posenc_model *m);

posenc_encoding posenc_model_encoding(const posenc_model *m);
/* The model_type that decided the resolution (text_config's when nested); borrowed. */
const char *posenc_model_type(const posenc_model *m);
int64_t posenc_model_max_positions(const posenc_model *m);

/* Layer types with their own RoPE parameters (Gemma 3/4 full/sliding, MiMo full/swa). 0 for
 * configs with one set of parameters. Names borrowed. */
size_t posenc_model_layer_type_count(const posenc_model *m);
const char *posenc_model_layer_type_name(const posenc_model *m, size_t i);

/* RoPE parameters for layer_type (NULL: the only set; an error naming the choices when the
 * config has several). POSENC_EINVAL when the model does not use RoPE. */
posenc_status posenc_model_rope(const posenc_model *m, const char *layer_type,
                                posenc_rope_config *out, posenc_error *err);

/* Non-rotary parameters; borrowed, valid for any encoding (fields 0 when unknown). */
const posenc_bias_config *posenc_model_bias(const posenc_model *m);

/* Human notes: where posenc followed the model's code over transformers, defaults it filled,
 * what changes past original_max_position_embeddings. Borrowed. */
size_t posenc_model_note_count(const posenc_model *m);
const char *posenc_model_note(const posenc_model *m, size_t i);

#ifdef __cplusplus
}
#endif
#endif
