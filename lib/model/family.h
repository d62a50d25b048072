/* family.h: the model-family registry's row type (internal to lib/model*.c).
 *
 * Every fact posenc knows about a model_type is one row of lib/model/families.def. A row holds data
 * (the columns below, zero meaning "the usual") and, for behaviour that is not data, named hooks
 * (lib/model/model_hooks.c). Nothing else in the tree compares a model_type string. */
#ifndef PE_FAMILY_H
#define PE_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"

/* What a row resolves to. */
enum pe_kind {
    PE_ROPE = 1,
    PE_ALIBI,
    PE_T5,
    PE_SHAW,
    PE_SIN,         /* fixed sinusoidal absolute table */
    PE_LEARNED,     /* learned absolute table */
    PE_NONE,        /* NoPE: the attention layers carry no position encoding */
    PE_REL,         /* a relative scheme posenc does not generate (.scheme names it) */
    PE_TEXT         /* a composite (multimodal) config: the language model is a text sub-config */
};

/* How RoPE pairs are formed and applied (posenc_style: HALF is neox, the others gptj). */
enum pe_pair {
    PAIR_HALF = 0,  /* rotate_half: (i, i + d/2) */
    PAIR_PAIRS,     /* rotate_every_two or complex multiplication: (2i, 2i + 1) */
    PAIR_REPEAT,    /* Cohere: repeat_interleave(2) tables, pairwise rotation: (2i, 2i + 1) */
    PAIR_GLM,       /* GLM-4: cat-layout tables interleaved inside apply: (2i, 2i + 1) */
    PAIR_DEINT      /* DeepSeek-V3 rope_interleave: q/k de-interleaved, then rotate_half */
};

/* Where head_dim comes from. */
enum pe_hd {
    HD_KEY = 0,     /* head_dim, else the class default, else hidden_size // num_attention_heads */
    HD_HIDDEN,      /* hidden_size // num_attention_heads (a head_dim key is not read) */
    HD_QK_ROPE,     /* qk_rope_head_dim (MLA: only that slice rotates), class default .head_dim */
    HD_KV           /* kv_channels (ChatGLM) */
};

/* Which key gives a partial rotary dimension. */
enum pe_rot {
    ROT_PRF = 0,    /* partial_rotary_factor */
    ROT_PCT,        /* rotary_pct (GPT-NeoX) */
    ROT_DIM         /* rotary_dim, an integer (GPT-J, CodeGen); null means head_dim */
};

/* Which layers carry RoPE (in a RoPE model). */
enum pe_layers {
    LAY_ALL = 0,
    LAY_ONLY,       /* only the layer_types named in .layers_arg rotate; the others are NoPE */
    LAY_EXCEPT,     /* the layer_types named in .layers_arg are NoPE */
    LAY_LIST,       /* .layers_arg names a 0/1 list per layer, 1 = RoPE (no_rope_layers) */
    LAY_INDEX       /* .layers_arg lists the indices of the layers without RoPE */
};

#define OFF_PAD (-1) /* learned table: position 0 is row padding_idx + 1 (RoBERTa) */

/* row flags */
#define F_PHI3      0x01 /* rope_type su/yarn read as longrope; M0 is a field (default 4096) */
#define F_MROPE_IL  0x02 /* multimodal RoPE is interleaved (THWTHW..., Qwen3-VL, Qwen3.5) */
#define F_TEXT_FIXED 0x04 /* PE_TEXT: the text config is always built as .text, whatever its
                             model_type says (Gemma4Unified, MiniMax-M3-VL, Ovis2) */
#define F_VLLM_DEEPSEEK 0x08 /* vLLM's model code sends rope_type yarn to
                                DeepseekScalingRotaryEmbedding and scales the softmax by
                                yarn_get_mscale(factor, mscale_all_dim)^2
                                (vllm/model_executor/models/deepseek_v2.py: "deepseek_yarn"); read
                                for the row of that exact name, never through an alias */

struct pe_ctx;
struct pe_ropesrc;
typedef posenc_status (*pe_hook)(struct pe_ctx *c, struct pe_ropesrc *base, int *done);

typedef struct pe_family {
    const char *name;       /* model_type */
    int kind;               /* enum pe_kind */
    const char *alias;      /* resolve as that row (legacy names) */
    int pair;               /* enum pe_pair */
    int hd;                 /* enum pe_hd */
    int head_dim;           /* class default head_dim (HD_QK_ROPE: of qk_rope_head_dim) */
    const char *head_dim_key; /* HD_KEY's key (NULL: head_dim; Hunyuan attention_head_dim) */
    int rot;                /* enum pe_rot */
    double prf;             /* class default partial_rotary_factor / rotary_pct (0: none) */
    int honours;            /* the default rope_type honours the partial factor */
    int rotary_dim;         /* ROT_DIM: class default rotary_dim */
    int theta_fixed;        /* theta is hard-coded to .theta; config keys are ignored */
    const char *theta_key;  /* NULL: rope_theta */
    double theta;           /* class default theta (0: 10000) */
    const char *maxpos_key; /* NULL: max_position_embeddings */
    int64_t maxpos;         /* class default max positions (0: none) */
    int hidden, heads;      /* class defaults that fill a sparse config (0: none) */
    int offset;             /* learned/sinusoidal table row of position 0, or OFF_PAD */
    int sin;                /* posenc_sinusoidal_variant of PE_SIN rows */
    int alibi;              /* posenc_alibi_kind of PE_ALIBI rows */
    const char *tensor;     /* learned table's checkpoint tensor */
    const char *sin_key;    /* a boolean key that makes the learned table fixed sinusoids */
    int layers;             /* enum pe_layers */
    const char *layers_arg; /* layer type names ("full_attention") or the LAY_LIST key */
    const char *every_key;  /* when the config has no per-layer list: every k-th layer (i+1) % k
                               == 0 is the marked one (LAY_LIST: NoPE; LAY_ONLY/EXCEPT: of type
                               .layers_arg), k from this key, default .every */
    int every;
    int every_phase;        /* the marked layers are those with (i + 1 - phase) % k == 0 */
    const char *types_key;  /* the per-layer type list (NULL: layer_types) */
    const char *rope_idx_key; /* LAY_ONLY without a type list: indices of the RoPE layers */
    const char *layers_default; /* LAY_INDEX: the class default list ("3,8,13") */
    const char *layers_if;  /* the per-layer rule is off when this key is null in the config
                               (absent: the class default, which turns it on) */
    int dense_rope;         /* the dense-MLP prefix layers rotate whatever their layer type
                               (mlp_layer_types "dense", else the first first_k_dense_replace)
                               while prefix_dense_sliding_window_pattern is 1 (its default) */
    const char *rope_default;  /* JSON: the rope_parameters __post_init__ installs when the config
                                  has none (Apertus, CWM llama3; GPT-OSS yarn); legacy
                                  rope_scaling still replaces it */
    const char *text_defaults; /* PE_TEXT JSON: keys the composite fills into its text_config
                                  (Voxtral, GLM-ASR _default_text_config_kwargs) */
    const char *type_defaults; /* JSON: rope_parameters per layer type when the config has none
                                  (Laguna, Mellum); a keyed rope_parameters replaces it whole */
    int mrope[3];           /* default mrope_section */
    int flags;              /* F_* */
    const char *text;       /* PE_TEXT: model_type of a text sub-config that has none */
    const char *text_key;   /* PE_TEXT: NULL = text_config; a dotted path reaches a nested one
                               (Qwen2.5-Omni thinker_config.text_config) */
    const char *scheme;     /* PE_REL: the scheme, for the refusal */
    pe_hook pre;            /* before the encoding's set-up: may switch or finish it */
    pe_hook rope;           /* RoPE: after the base parameters, before resolution */
    pe_hook post;           /* RoPE: after resolution */
    const char *gguf_arch;  /* the llama.cpp architecture convert_hf_to_gguf.py writes
                               (general.architecture), from the @ModelBase.register class of
                               the model's HF architectures name (.gguf_hf); NULL: not converted */
    const char *gguf_hf;    /* that HF architectures name */
    int gguf_log_mul;       /* the converter writes yarn_log_multiplier = mscale_all_dim for this
                               model_type (Mistral3Model.Ministral3Model: model_type ministral3) */
    const char *note;       /* one line for `posenc info --models` */
    const char *src;        /* the file the row was read from (see posenc_family_info) */
} pe_family;

/* The rows of families.def, in its order (lib/model/model_hooks.c, where the hooks they name are). */
extern const pe_family pe_families[];
extern const size_t pe_n_families;

#endif
