/* lib/encodings/tables.h (internal): one table source for every encoding. A source declares its arrays
 * (name, the dtype the output holds, shape, and how the array splits into rows) and fills rows
 * of one array on demand, in any order and any chunking:
 *
 *     t->fill(t, which, row0, n, buf, err)   writes rows [row0, row0 + n) of array `which`
 *                                            as n * rowlen[which] values of dtype src[which]
 *
 * The output pipeline (formats/io/out.h) converts src to arr[].dtype and writes. RoPE (each
 * precision and layout), ALiBi, T5, Shaw, sinusoidal and learned tables are sources built here;
 * lib/ does no I/O, so the learned table's rows (and convert's arrays, formats/io/out.c) come
 * through a row callback the caller supplies. Query positions come through a position callback
 * (NULL: row r of a table is position r). */
#ifndef PE_TABLES_H
#define PE_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/bias.h"
#include "posenc/dtype.h"
#include "posenc/error.h"
#include "posenc/model.h"
#include "posenc/rope.h"

/* Positions of rows [row0, row0 + n) of the query axis into out. */
typedef void (*pe_pos_fn)(const void *ctx, uint64_t row0, size_t n, int64_t *out);
typedef struct pe_table_pos {
    pe_pos_fn fn;      /* NULL: row r is position r */
    const void *ctx;
} pe_table_pos;

/* Rows [row0, row0 + n) of a stored table (the learned embedding), values of the dtype the
 * source was given, row after row. Called with increasing row0 when positions are a range. */
typedef posenc_status (*pe_rows_fn)(void *ctx, int64_t row0, int64_t n, void *buf,
                                    posenc_error *err);

typedef struct pe_table pe_table;
typedef posenc_status (*pe_fill_fn)(pe_table *t, int which, int64_t row0, int64_t n, void *buf,
                                    posenc_error *err);

typedef struct pe_table_array {
    posenc_array_info info; /* as declared to the writer */
    posenc_dtype src;       /* the dtype fill writes */
    int64_t rows, rowlen;   /* rows * rowlen = the array's elements */
} pe_table_array;

struct pe_table {
    int narr, cap;
    pe_table_array *arr;    /* narr arrays, in the order they are written */
    int64_t chunk_rows;  /* rows per fill call the source prefers (0: the pipeline decides) */
    int pure;            /* fill does no I/O: it may run beside a writer thread */
    pe_fill_fn fill;
    void (*free_state)(void *state);
    void *state;
};

/* Free a source's arrays and state (t may be NULL, zeroed or never built). */
void pe_table_free(pe_table *t);
/* For sources built outside lib/ (convert's arrays): zero t and make room for cap arrays. */
posenc_status pe_table_init(pe_table *t, int cap, posenc_error *err);
/* pe_table_init, then a zeroed state of state_size bytes (*state) that fill reads and
 * free_state (NULL: free) frees with the table. */
posenc_status pe_table_begin(pe_table *t, int cap, size_t state_size, pe_fill_fn fill,
                             void (*free_state)(void *), void **state, posenc_error *err);
/* Append an array of rowlen values per row (shape[ndim - 1] for a table, 1 for a flat stream);
 * its index. There must be room (pe_table_init's cap). */
int pe_table_add(pe_table *t, const char *name, posenc_dtype dtype, posenc_dtype src, int ndim,
                 const int64_t *shape, int64_t rowlen);

/* Every builder below sets *t (zeroed first) and returns POSENC_OK, or an error and leaves *t
 * empty. Tables are float arrays of `dtype` (f32, f64, f16, bf16); indices are int32. */

/* RoPE: cos and sin [n_pos, width] (with POSENC_LAYOUT_VLLM one cos_sin_cache instead) and
 * inv_freq [n_freq] as the precision defines it (exact: the double-double inverse frequency
 * rounded once to dtype; hf/vllm: transformers' float32 values; ggml: ggml's float32 angle at
 * position 1). p must outlive t. */
posenc_status pe_table_rope(pe_table *t, const posenc_rope_params *p, posenc_precision prec,
                            posenc_layout layout, int64_t n_pos, pe_table_pos pos,
                            posenc_dtype dtype, int nthreads, posenc_error *err);

/* ALiBi: slopes [heads] and bias [heads, q, k_len] (q = n_q, or 1 with broadcast: the bias row of
 * the last query k_len - 1). slopes is copied. */
posenc_status pe_table_alibi(pe_table *t, posenc_alibi_kind kind, posenc_alibi_convention conv,
                             const double *slopes, int heads, int64_t n_q, int64_t k_len,
                             int broadcast, pe_table_pos pos, posenc_dtype dtype,
                             posenc_error *err);

/* T5: buckets [n_q, k_len] int32 and, with weights ([num_buckets, heads] float32, borrowed), bias
 * [heads, n_q, k_len]. */
posenc_status pe_table_t5(pe_table *t, int bidirectional, int num_buckets, int max_distance,
                          const float *weights, int heads, int64_t n_q, int64_t k_len,
                          pe_table_pos pos, posenc_dtype dtype, posenc_error *err);

/* Shaw: index [n_q, k_len] int32 = clip(key - query, -k, k) + k (bert: query - key) and, with
 * weights ([2k+1, depth] float32, borrowed), rk [n_q, k_len, depth] = weights[index]. */
posenc_status pe_table_shaw(pe_table *t, int64_t k, int bert, const float *weights,
                            int64_t depth, int64_t n_q, int64_t k_len, pe_table_pos pos,
                            posenc_dtype dtype, posenc_error *err);

/* Sinusoidal: pe [n_q, d_model] from s (borrowed). */
posenc_status pe_table_sinusoidal(pe_table *t, const posenc_sinusoidal *s, int d_model,
                                  int64_t n_q, pe_table_pos pos, posenc_dtype dtype,
                                  posenc_error *err);

/* Learned: pe [n_q, width] = stored rows row_offset + position, read through rows(ctx, ...) in
 * dtype src. Not pure: the callback may read a file. */
posenc_status pe_table_learned(pe_table *t, pe_rows_fn rows, void *ctx, posenc_dtype src,
                               int64_t width, int64_t n_q, int64_t row_offset,
                               pe_table_pos pos, posenc_dtype dtype, posenc_error *err);

/* Round the double-double hi + lo (|lo| <= ulp(hi)/2) to dt once: hi rounded unless hi lies
 * exactly halfway between two dt values, where the sign of lo decides. */
void pe_round_dd(double hi, double lo, posenc_dtype dt, void *dst);

/* ---- lib/model/tableparams.c: the parameters of each encoding (gen's options), one table: which
 * encoding takes which option, and where a parameter not given comes from (the config's
 * value, else the model code's default) ---- */
typedef enum pe_table_param {
    PE_TP_LAYER_TYPE, PE_TP_PRECISION, PE_TP_LAYOUT, PE_TP_HEADS, PE_TP_D_MODEL,
    PE_TP_NUM_BUCKETS, PE_TP_MAX_DISTANCE, PE_TP_MAX_REL, PE_TP_CONVENTION, PE_TP_VARIANT,
    PE_TP_WEIGHTS, PE_TP_TENSOR, PE_TP_DECODER, PE_TP_BROADCAST, PE_TP_MAX_MODEL_LEN,
    /* parameters without an option (their value always comes from the config or the table) */
    PE_TP_ALIBI_BIAS_MAX, PE_TP_PADDING_IDX,
    PE_TP_COUNT
} pe_table_param;
#define PE_TP_BIT(p) (1u << (p))

/* The option of a parameter ("--heads"), NULL for one without an option; static. */
const char *pe_table_param_name(pe_table_param p);
/* The first parameter in `given` (a mask of PE_TP_BIT) that encoding e does not take, or -1. */
int pe_table_param_refused(unsigned given, posenc_encoding e);
/* The mask of the parameters only RoPE takes. */
unsigned pe_table_rope_only(void);
/* "ALiBi", "T5", "Shaw", "sinusoidal", "learned", "RoPE": the encoding as messages name it. */
const char *pe_table_label(posenc_encoding e);

/* What was given for the non-rotary parameters: v[p] for the numeric ones and flags (1 for
 * --decoder, --broadcast) when PE_TP_BIT(p) is in given; the two named ones as text. */
typedef struct pe_table_args {
    unsigned given;
    double v[PE_TP_COUNT];
    const char *variant;       /* --variant */
    const char *convention;    /* --convention */
} pe_table_args;

/* The parameters of one non-rotary table, each from its option, else the config (bc, may be
 * NULL), else the table's default (0 = none: the table needs the option). */
typedef struct pe_table_params {
    double v[PE_TP_COUNT];
    unsigned from_option;                /* PE_TP_BIT of the parameters an option gave */
    posenc_alibi_kind alibi_kind;        /* --variant for ALiBi */
    posenc_alibi_convention convention;  /* --convention */
    int shaw_bert;                       /* --variant bert (query - key) for Shaw */
    posenc_sinusoidal_variant sin_variant; /* --variant for sinusoidal */
} pe_table_params;

/* Resolve the parameters of encoding e. POSENC_EINVAL names the option whose value is bad
 * (an unknown --variant or --convention). */
posenc_status pe_table_params_resolve(pe_table_params *out, posenc_encoding e,
                                      const pe_table_args *a, const posenc_bias_config *bc,
                                      posenc_error *err);
/* out->v[p] as an int */
#define PE_TP_INT(out, p) ((int)(out)->v[p])

#endif
