/* cmd/gen.h: the contract between cmd/gen.c (option parsing, RoPE tables, writing) and
 * cmd/gen_bias.c (ALiBi, T5, Shaw, sinusoidal and learned tables). */
#ifndef POSENC_CMD_GEN_H
#define POSENC_CMD_GEN_H

#include <stdint.h>

#include "posenc/posenc.h"

struct gen_args {
    const char *config;            /* --config FILE, or NULL */
    const char *out;               /* -o OUT ("-" = one array as NPY on stdout) */
    const char *array;             /* --array NAME: write only this array (NULL = all) */
    posenc_write_opts wopts;       /* --format, --compress */
    posenc_dtype dtype;            /* --dtype (default f32) */
    int64_t seq_len;               /* --seq-len, 0 when not given */
    const int64_t *positions;      /* --positions, NULL when not given */
    size_t n_positions;
    int force;                     /* --force: allow tables past the size limit */
    uint64_t size_limit;           /* bytes a table may have without --force */
    posenc_encoding encoding;      /* from the config, or --encoding */
    int encoding_forced;           /* --encoding given */
    /* non-rotary parameters; 0 / NULL = from the config or the encoding's default */
    int heads;                     /* --heads */
    int d_model;                   /* --d-model */
    int num_buckets;               /* --num-buckets */
    int max_distance;              /* --max-distance */
    int max_relative_position;     /* --max-relative-position */
    const char *convention;        /* --convention symmetric|causal|keyindex (ALiBi) */
    const char *variant;           /* --variant (ALiBi kind or sinusoidal variant) */
    const char *weights;           /* --weights model.safetensors */
    const char *tensor;            /* --tensor NAME in --weights */
    int decoder;                   /* --decoder: T5 causal buckets (default from config) */
    int broadcast;                 /* --broadcast: ALiBi bias as [heads, 1, k_len] */
};

/* Write the tables of a non-rotary encoding (a->encoding != POSENC_ENC_ROPE). m may be NULL when
 * no --config was given. Prints its own errors; returns an exit status. */
int gen_nonrope(const struct gen_args *a, const posenc_model *m);

#endif
