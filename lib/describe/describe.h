/* lib/describe/describe.h (internal): one description of a resolved model, the values of the field table
 * lib/describe/describe.def. The fill functions compute the values from the model, a RoPE parameter set
 * or a non-rotary encoding; formats/report/describe_out.h renders a description as info's text, as
 * JSON (info --json, verify's report) and as file metadata (gen, apply). lib/ prints nothing.
 *
 * Usage:
 *     pe_desc *d = pe_describe_new();
 *     pe_describe_model(d, m);
 *     pe_describe_rope(d, &cfg, &params, NULL, POSENC_PREC_EXACT, seq_len);
 *     pe_describe_str(d, PE_DF_DTYPE, "f32");           (a fact of the output itself)
 *     ... pe_describe_meta_write(d, "posenc_", w, &err) (formats/report/describe_out.h)
 *     pe_describe_free(d);
 */
#ifndef POSENC_LIB_DESCRIBE_H
#define POSENC_LIB_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/llamacpp.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "posenc/vllm.h"

typedef enum pe_dfield {
#define X(id, key, label, kind, parent, views, of) PE_DF_##id,
#include "lib/describe/describe.def"
#undef X
    PE_DF_COUNT,
    PE_DF_NONE = PE_DF_COUNT /* "no parent" */
} pe_dfield;

typedef enum pe_dkind {
    PE_DK_STR,
    PE_DK_NUM,
    PE_DK_INT,
    PE_DK_BOOL,
    PE_DK_NUMS,
    PE_DK_STRS,
    PE_DK_GROUP
} pe_dkind;

/* Views: where a field appears. */
enum {
    PE_DV_INFO = 1u,   /* posenc info, text and --json */
    PE_DV_META = 2u,   /* file metadata (gen, apply) */
    PE_DV_REPORT = 4u, /* verify's report, the "rope" section */
    PE_DV_TEXT = 8u    /* info's text only */
};

/* One row of the table (static). */
typedef struct pe_dfield_def {
    const char *key;
    const char *label; /* info's text label, NULL when folded into another line */
    pe_dkind kind;
    pe_dfield parent;  /* PE_DF_NONE at the top level, else a PE_DK_GROUP row */
    unsigned views;
    pe_dfield of;      /* a legacy row: the row whose value it shows (else PE_DF_NONE) */
} pe_dfield_def;

/* The row of field f (borrowed, static); NULL when f is out of range. */
const pe_dfield_def *pe_describe_def(pe_dfield f);
/* The field named key under parent (PE_DF_NONE: top level) visible in view, else PE_DF_COUNT. */
pe_dfield pe_describe_find(const char *key, pe_dfield parent, unsigned view);

/* One value. A number's fmt is the printf format of every output (NULL: the shortest text that
 * reads back as the same double); info_fmt, when set, replaces it in info's text and JSON. */
typedef struct pe_dval {
    int set;
    const char *s;      /* STR: owned by the description; NULL = JSON null */
    double d;           /* NUM */
    int64_t i;          /* INT, BOOL (0/1) */
    double *v;          /* NUMS (owned) */
    char **sv;          /* STRS (owned) */
    size_t n;           /* NUMS, STRS: count */
    const char *fmt;    /* static */
    const char *info_fmt;
} pe_dval;

typedef struct pe_desc pe_desc;

/* A new empty description (caller frees with pe_describe_free), or NULL when out of memory. */
pe_desc *pe_describe_new(void);
void pe_describe_free(pe_desc *d);
/* 1 when a value could not be stored (out of memory); the renderers then fail. */
int pe_describe_oom(const pe_desc *d);
/* The value of f (borrowed until d is freed or f is set again), NULL when f is not set; a
 * legacy row's is the value of the row it repeats. */
const pe_dval *pe_describe_get(const pe_desc *d, pe_dfield f);

/* Set one value (copied). A group row is set when one of its members is. */
void pe_describe_str(pe_desc *d, pe_dfield f, const char *s);
void pe_describe_num(pe_desc *d, pe_dfield f, double v, const char *fmt);
void pe_describe_int(pe_desc *d, pe_dfield f, int64_t v);
void pe_describe_bool(pe_desc *d, pe_dfield f, int v);
void pe_describe_nums(pe_desc *d, pe_dfield f, const double *v, size_t n, const char *fmt);
/* Append s to the string list f. */
void pe_describe_strs_add(pe_desc *d, pe_dfield f, const char *s);
/* Give an already set number (or numbers) of f its own format in info's text and JSON. */
void pe_describe_info_fmt(pe_desc *d, pe_dfield f, const char *fmt);

/* ---- filling a description ---- */

/* The model: encoding, model_type, family, the registry's warning for an unknown model_type,
 * and for RoPE models num_layers (when the config gives it) and nope_layers. */
void pe_describe_model(pe_desc *d, const posenc_model *m);
/* The model's notes (posenc_model_note) as "notes". */
void pe_describe_model_notes(pe_desc *d, const posenc_model *m);

/* One RoPE parameter set. p NULL: the config's values only (no seq_len, theta_used, scaling or
 * inv_freq). vi: vLLM's class when prec is POSENC_PREC_VLLM (else NULL). seq_len: what the
 * parameters were computed for (0 = load time). inv_freq and attention_scaling are the values of
 * prec: exact (double-double summed), transformers' or vLLM's float32, or, for ggml (p->has_ggml),
 * ggml's float32 angle at position 1 and its mscale, with ggml's arguments as the "ggml" group. */
void pe_describe_rope(pe_desc *d, const posenc_rope_config *c, const posenc_rope_params *p,
                      const posenc_vllm_info *vi, posenc_precision prec, int64_t seq_len);
/* The notes a RoPE table depends on (appended to "notes"): which dynamic-NTK base or LongRoPE
 * factors the sequence length selected, vLLM's note, extra (may be NULL, e.g. the GGUF
 * writer's), then what the precision computes. */
void pe_describe_rope_notes(pe_desc *d, const posenc_rope_config *c, const posenc_rope_params *p,
                            const posenc_vllm_info *vi, posenc_precision prec, int64_t seq_len,
                            const char *extra);
/* llama.cpp's ggml_rope_ext arguments of p (p->has_ggml) as the "ggml" group. */
void pe_describe_ggml(pe_desc *d, const posenc_rope_params *p);
/* The one line every ggml output carries (static). */
const char *pe_describe_ggml_note(const posenc_rope_params *p);

/* The parameters of a non-rotary encoding (any but RoPE) as info reports them: the model's own
 * table, resolved as gen resolves its parameters with no option given (pe_table_params_resolve:
 * the config's value, else the table's default) and described by pe_describe_table_params, so
 * info and gen's metadata say the same; then the config's own facts: alibi_kind (legacy) and
 * alibi_bias_max of every ALiBi variant, T5's heads, the learned tensor, row_offset, heads,
 * max_positions, d_model, head_dim and padding_idx. */
posenc_status pe_describe_bias(pe_desc *d, const posenc_model *m, posenc_error *err);

/* The parameters a non-rotary table of encoding e was built with (lib/encodings/tables.h, resolved from
 * gen's options and the config), under the keys info uses for the model's: ALiBi's variant,
 * convention, heads, alibi_bias_max (MPT's only) and slopes (heads values, borrowed); T5's
 * is_decoder (and gen's legacy kind and bidirectional), num_buckets and max_distance; Shaw's
 * max_relative_position, variant and index_formula; sinusoidal's variant, d_model and
 * padding_idx (fairseq). The table's own facts (q_len, k_len, weights, ...) the caller adds. */
struct pe_table_params;
void pe_describe_table_params(pe_desc *d, posenc_encoding e, const struct pe_table_params *p,
                              const double *slopes);

#endif
