/* formats/engines/gentables.h (internal): gen's engine. From what gen was asked (pe_gen_args: the model,
 * the positions, the encoding's parameters) it builds the table source of the encoding
 * (lib/encodings/tables.h) with its rows planned, the checkpoint tensors it needs read (formats/engines/weights.h)
 * and its metadata described (lib/describe/describe.h), ready for the output pipeline (formats/io/out.h):
 *
 *     pe_gen g;
 *     if (pe_gen_build(&g, &args, &err) != POSENC_OK)   g.usage: a usage error (exit 2)
 *         ...
 *     pe_out o = { .t = &g.t, ... };  pe_out_plan(&o, &err);  pe_out_run(&o, pe_gen_meta, &g, &err);
 *     pe_gen_free(&g);
 *
 * RoPE in formats/engines/genrope.c, the other encodings in formats/engines/gentables.c. Prints nothing: the
 * lines a user must see (vLLM's note, a GGUF without llama.cpp's keys) are in g.warn. */
#ifndef PE_GENTABLES_H
#define PE_GENTABLES_H

#include "formats/report/describe_out.h"
#include "formats/io/out.h"
#include "posenc/posenc.h"
#include "formats/engines/weights.h"

/* Largest position and --seq-len of a table (2^48). */
#define PE_GEN_POS_MAX ((int64_t)1 << 48)

typedef struct pe_gen_args {
    const char *config;            /* the config's path (messages, metadata), or NULL */
    const posenc_model *m;         /* the resolved config, or NULL without --config */
    posenc_encoding encoding;
    const char *out;               /* -o (messages) */
    posenc_format format;          /* resolved output format (GGUF adds llama.cpp's keys) */
    posenc_dtype dtype;
    int64_t seq_len;               /* --seq-len, 0 when not given */
    const pe_positions *positions; /* --positions (borrowed), NULL when not given */
    /* RoPE */
    const char *layer_type;
    posenc_precision precision;
    posenc_layout layout;
    int64_t max_model_len;         /* 0 when not given */
    int64_t n_ctx;                 /* ggml: llama.cpp's n_ctx, 0: the sequence length */
    int nthreads;
    /* the other encodings: --heads, --variant, ... (lib/encodings/tables.h) */
    pe_table_args p;
    const char *weights;           /* --weights FILE */
    const char *tensor;            /* --tensor NAME */
} pe_gen_args;

#define PE_GEN_WARN_MAX 2
enum { PE_GEN_USAGE = 1, PE_GEN_USAGE_ARG = 2 };

typedef struct pe_gen {
    pe_table t;                    /* the source */
    pe_desc *d;                    /* its metadata (view PE_DV_META) */
    const char *label;             /* "rope", "alibi", ... for messages */
    const char *hint;              /* non-rotary: what makes the table smaller */
    int rope;
    int usage;                     /* the failure is a usage error: PE_GEN_USAGE (with the help
                                    * hint), PE_GEN_USAGE_ARG (a value of the config: the layer
                                    * type) */
    int64_t nq, k_len;             /* query rows (or table rows), key columns */
    char warn[PE_GEN_WARN_MAX][POSENC_ERRMSG_MAX + 64];
    int nwarn;
    /* what the source reads */
    pe_table_params par;
    posenc_rope_config cfg;
    posenc_rope_params rp;
    posenc_vllm_info vi;
    posenc_gguf_rope gr;
    int has_gr;
    pe_weights w;
    pe_out_rows_mem rows_mem;
    posenc_sinusoidal *sin;
    double *slopes;
} pe_gen;

/* Build g (zeroed first) for a. On failure err says why in one line and g.usage tells a usage
 * error from another; free g with pe_gen_free whatever the result. */
posenc_status pe_gen_build(pe_gen *g, const pe_gen_args *a, posenc_error *err);
/* The metadata step of pe_out_run (ctx: the pe_gen): the description, then llama.cpp's keys. */
posenc_status pe_gen_meta(void *ctx, posenc_writer *w, posenc_error *err);
void pe_gen_free(pe_gen *g);

/* ---- shared by the two builders (formats/engines/gentables.c) ---- */
/* Rows of a table: --positions, else 0..L-1 with L = --seq-len or max_default (0: none). */
posenc_status pe_gen_plan_rows(pe_gen *g, const pe_gen_args *a, int64_t max_default,
                               posenc_error *err);
/* A usage error: sets g->usage. */
posenc_status pe_gen_usage(pe_gen *g, posenc_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The version, the config's file name and (m set) the model and its notes. */
void pe_gen_describe_model(pe_gen *g, const pe_gen_args *a);
/* RoPE (formats/engines/genrope.c). */
posenc_status pe_gen_rope(pe_gen *g, const pe_gen_args *a, posenc_error *err);

#endif
