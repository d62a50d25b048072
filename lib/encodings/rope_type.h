/* rope_type.h: the rope-type table's row type (internal to lib/).
 *
 * What posenc knows about a rope_type (which keys it reads, how wide it rotates, its inv_freq
 * function, the transformers function, vLLM class and GGUF scaling type it corresponds to) is
 * one row of lib/encodings/rope_types.def; the rows are instantiated in lib/encodings/rope.c,
 * where their functions are. A switch on the rope type elsewhere is logic particular to that
 * type, not knowledge. */
#ifndef PE_ROPE_TYPE_H
#define PE_ROPE_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/rope.h"

/* How the config's factor is read (rope_types.def, .factor). */
enum pe_rt_factor {
    FAC_NONE = 0,   /* not read: 1 */
    FAC_REQUIRED,   /* required, a number */
    FAC_NULL_M,     /* required; null: max_position_embeddings / original_max_position_embeddings */
    FAC_OR_M,       /* absent or null: max_position_embeddings / original_max_position_embeddings */
    FAC_OPTIONAL    /* read when present */
};

/* The other keys a type reads (rope_types.def, .keys). */
#define RK_M0       0x01u /* original_max_position_embeddings */
#define RK_MAXPOS   0x02u /* max_position_embeddings is required */
#define RK_LOWHIGH  0x04u /* low_freq_factor, high_freq_factor */
#define RK_YARN     0x08u /* beta_fast, beta_slow, truncate, mscale, mscale_all_dim */
#define RK_ATTN     0x10u /* attention_factor */
#define RK_SHORTLONG 0x20u /* short_factor, long_factor */
#define RK_PRF      0x40u /* partial_rotary_factor in (0, 1] */

/* How wide the rotation is (.width). */
enum pe_rt_width {
    RW_CLASS = 0,   /* the model class decides whether partial_rotary_factor applies */
    RW_PRF,         /* int(head_dim * partial_rotary_factor) */
    RW_HEAD         /* head_dim wide, exponents over head_dim, trailing zero frequencies */
};

/* What the sequence length changes (.seq). */
enum pe_rt_seq {
    SEQ_NONE = 0,
    SEQ_BASE,       /* theta rescaled past max_position_embeddings (dynamic NTK) */
    SEQ_FACTORS     /* long_factor past original_max_position_embeddings (longrope) */
};

/* inv_freq and attention scaling of one type into p; D is the exponent's denominator. */
typedef void (*pe_rt_compute)(const posenc_rope_config *c, int64_t seq_len,
                              posenc_rope_params *p, int D);
/* The type's own validation; tn is the type's name for the message. */
typedef posenc_status (*pe_rt_check)(const posenc_rope_config *c, const char *tn,
                                     posenc_error *err);

typedef struct pe_rope_type {
    posenc_rope_type type;
    const char *name;       /* rope_type in config.json */
    pe_rt_compute compute;
    pe_rt_check check;      /* NULL: nothing of its own */
    int factor;             /* enum pe_rt_factor */
    unsigned keys;          /* RK_* */
    int width;              /* enum pe_rt_width */
    int seq;                /* enum pe_rt_seq */
    const char *hf;         /* the transformers function it mirrors */
    const char *vllm;       /* vLLM's class (no mrope_section, not DeepSeek's model code) */
    const char *gguf;       /* rope.scaling.type llama.cpp's converter writes; NULL: none */
} pe_rope_type;

/* The rows of rope_types.def, in posenc_rope_type's order (lib/encodings/rope.c). */
extern const pe_rope_type pe_rope_types[];
extern const size_t pe_n_rope_types;

/* The row of t; NULL when t is not a rope type. Borrowed (static). */
const pe_rope_type *pe_rope_type_get(posenc_rope_type t);

/* The row named name (a config's rope_type); NULL when none is. Borrowed (static). */
const pe_rope_type *pe_rope_type_find(const char *name);

/* The names of every row, "default, linear, ...", into buf (for messages); returns buf. */
char *pe_rope_type_names(char *buf, size_t size);

#endif
