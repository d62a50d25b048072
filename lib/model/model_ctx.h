/* model_ctx.h: what the files of config resolution share (internal to lib/model*.c).
 *
 * Resolving a parsed config.json takes four files: model.c (the context's JSON helpers, the
 * registry look-up and the public API), model_rope.c (head_dim, one RoPE parameter set, the
 * per-layer-type dicts and the set-up of a RoPE row), model_setup.c (the non-rotary encodings,
 * the per-layer rules and the set-up by row) and model_hooks.c (the hooks the rows of
 * families.def name, and the table of those rows). This header holds the model's fields, the
 * resolution context, the source of one RoPE parameter set and the functions that cross those
 * files (pe_; the longer comments are at the definitions). */
#ifndef PE_MODEL_CTX_H
#define PE_MODEL_CTX_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "posenc/bias.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "lib/model/family.h"

#define MAX_LT 8        /* layer types with their own RoPE parameters */
#define MAX_ALIAS 16    /* distinct names in layer_types */
#define MAX_NOTES 40
#define MAX_WARNS 8     /* warnings a command shows, one line each */
#define NAME_LEN 64
#define MAX_LAYERS 4096 /* num_hidden_layers that per-layer rules accept */

struct posenc_model {
    posenc_encoding enc;
    char source[256];
    char model_type[NAME_LEN];
    const pe_family *fam;             /* the registry row that resolved it */
    const pe_family *outer;           /* a composite's own row (PE_TEXT), NULL otherwise */
    int generic;                      /* resolved with the generic rules (unknown model_type) */
    char warning[320];
    int64_t max_positions;
    size_t n_lt;                      /* 0: one set of parameters in rope[0] */
    char lt_name[MAX_LT][NAME_LEN];
    posenc_rope_config rope[MAX_LT];
    size_t n_alias;                   /* names in layer_types sharing rope[0] when n_lt == 0 */
    char alias[MAX_ALIAS][NAME_LEN];
    posenc_encoding alias_enc[MAX_ALIAS];
    int64_t n_layers;                 /* num_hidden_layers, 0 when not given */
    size_t n_types;                   /* entries of layer_types (one per layer) */
    unsigned char *type_of;           /* [n_types]: index into alias[] */
    size_t n_nope;
    int64_t *nope;                    /* indices of layers without RoPE */
    posenc_bias_config bias;
    size_t n_notes;
    char *notes[MAX_NOTES];
    size_t n_warns;                   /* warnings besides .warning, each also a note */
    char *warns[MAX_WARNS];
    cJSON *hp;                        /* the keys convert_hf_to_gguf.py reads: the config with its
                                         text_config merged over it (TextModel.__init__) */
};

typedef struct pe_ctx {
    const char *src;
    const cJSON *root;      /* the whole config */
    const cJSON *tc;        /* the (text) config the keys are read from */
    const char *tp;         /* "" or "text_config." for messages */
    const pe_family *f;     /* the registry row */
    const char *cls;        /* its name, for messages */
    posenc_model *m;
    posenc_error *err;
    int64_t max_pos;        /* max_position_embeddings, 0 when absent */
    const char *max_pos_key;
} ctx;

struct pe_ropesrc {
    const cJSON *dict;      /* the rope dict (legacy rope_scaling or rope_parameters[...]) */
    char dpath[128];        /* its name in messages, with trailing '.' */
    int per_layer;          /* Case 2: dict came from a per-layer-type dict */
    int truncate_default;   /* yarn truncate when the dict has none */
    const char *theta_key;  /* top-level fallback key ("rope_theta", "rope_local_base_freq", ...) */
    int theta_dict_first;   /* 1: dict value beats theta_key (the base rule) */
    double theta_default;
    const char *theta_default_src; /* NULL: the class default */
    int theta_fixed;        /* GPT-J / CodeGen: 10000 whatever the config says */
    int head_dim;
    const char *prf_key;    /* top-level partial_rotary_factor key ("rotary_pct" for NeoX) */
    double prf_default;     /* class default, 0 = none */
    int prf_default_rules;  /* 1: dict value beats top-level for default type */
    int rotary_dim_fixed;   /* >0: rotated dims come from the model's own code (MiniMax-M2) */
    int honours;            /* the default rope_type honours the partial factor */
    posenc_style style;
    posenc_pairing pairing;
};

#define TRY(expr)                                                                               \
    do {                                                                                        \
        posenc_status st_ = (expr);                                                             \
        if (st_ != POSENC_OK)                                                                   \
            return st_;                                                                         \
    } while (0)

/* ---- model.c: the context's helpers ---- */

/* The error "'<source>': <message>" in c->err; returns code. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
posenc_status pe_cfgerr(ctx *c, posenc_status code, const char *fmt, ...);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void pe_note(ctx *c, const char *fmt, ...); /* a note on the model (each text once) */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void pe_warn(ctx *c, const char *fmt, ...); /* a warning line, and the same text as a note */
const cJSON *pe_item(const cJSON *obj, const char *key); /* NULL unless obj is an object */
int pe_has(const cJSON *obj, const char *key);
/* obj[key] read as a type (path names obj in messages); *present = 0 when missing or null */
posenc_status pe_get_num(ctx *c, const cJSON *obj, const char *path, const char *key,
                         double *out, int *present);
posenc_status pe_get_int(ctx *c, const cJSON *obj, const char *path, const char *key,
                         int64_t min, int64_t max, int64_t *out, int *present);
posenc_status pe_get_bool(ctx *c, const cJSON *obj, const char *path, const char *key,
                          int *out, int *present);
posenc_status pe_get_str(ctx *c, const cJSON *obj, const char *path, const char *key,
                         const char **out);
posenc_status pe_get_obj(ctx *c, const cJSON *obj, const char *path, const char *key,
                         const cJSON **out);
int pe_obj_empty(const cJSON *o); /* NULL or {} */
posenc_status pe_copy_name(ctx *c, char *dst, const char *s, const char *what);

/* ---- model_rope.c: head_dim and RoPE ---- */

posenc_status pe_heads_hidden(ctx *c, int64_t *heads, int64_t *hidden, int *have);
int pe_in_aliases(const posenc_model *m, const char *name); /* a name in layer_types */
/* The layer_types a config class builds when the config has none: n layers, layer i named
 * `marked` when i % every == 0, else `other`. Only when the config gave no layer_types. */
posenc_status pe_default_layer_types(ctx *c, int64_t n, int64_t every, const char *marked,
                                     const char *other);
/* Resolve s as the parameters of one more RoPE layer type, name. */
posenc_status pe_add_layer(ctx *c, const char *name, const struct pe_ropesrc *s);
/* A RoPE row: max positions, head_dim, pairing, then the row's .rope hook, the standard path
 * and its .post hook. */
posenc_status pe_setup_rope(ctx *c);

/* ---- model_setup.c: the non-rotary encodings, the per-layer rules, the set-up by row ---- */

posenc_status pe_fill_heads(ctx *c);   /* the bias config's heads, d_model, head_dim */
posenc_status pe_read_max(ctx *c, const char *key, int64_t def); /* max_positions, def absent */
posenc_status pe_setup_alibi(ctx *c, posenc_alibi_kind kind);
posenc_status pe_setup_learned(ctx *c, const char *tensor, const char *max_key,
                               int64_t max_def);
posenc_status pe_table_offset(ctx *c);
posenc_status pe_setup_sinusoidal(ctx *c, int64_t max_def, int padding_idx);
int pe_has_rope_keys(const cJSON *tc);

/* ---- model_keys.c: the keys as transformers reads them ---- */

/* A warning for each key of dict (named dpath, with its trailing '.') that no rope type
 * defines, naming the key it resembles. */
void pe_check_rope_dict(ctx *c, const cJSON *dict, const char *dpath);
/* POSENC_ECONFIG when a legacy rope_scaling dict has no rope_type (nor type). */
posenc_status pe_check_rope_type(ctx *c, const cJSON *dict, const char *dpath);
/* A warning for each key of obj a small edit away from a top-level RoPE key. */
void pe_check_top_keys(ctx *c, const cJSON *obj, const char *path);
/* The rope key that key is a small edit away from, or NULL; borrowed (static). */
const char *pe_rope_dict_key_near(const char *key);
posenc_status pe_setup_none(ctx *c);
posenc_status pe_add_nope(ctx *c, int64_t i);       /* layer i carries no RoPE */
posenc_status pe_layer_rules(ctx *c);
posenc_status pe_setup_row(ctx *c);                 /* the row c->f, by its kind */

#endif
