/* formats/engines/genrope.c: gen's engine for RoPE tables (gentables.h): the layer type, the rows and
 * the sequence length that picks the parameters (transformers' max(position) + 1), the
 * parameters of the precision (vLLM's cache bounds the rows, ggml's arguments from the GGUF
 * llama.cpp's converter writes), the table source, llama.cpp's keys for a GGUF output and the
 * description of it all (the fields info --json shows). */
#include "formats/engines/gentables.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* --layer-type against the config's layer types: required when it has several, known. */
static posenc_status check_layer_type(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    size_t nlt = posenc_model_layer_type_count(a->m);
    if (nlt == 0)
        return POSENC_OK;
    char list[1024];
    size_t off = 0;
    int found = 0;
    list[0] = '\0';
    for (size_t i = 0; i < nlt; i++) {
        const char *name = posenc_model_layer_type_name(a->m, i);
        if (a->layer_type && strcmp(name, a->layer_type) == 0)
            found = 1;
        int k = snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", name);
        if (k > 0 && (size_t)k < sizeof list - off)
            off += (size_t)k;
    }
    g->usage = PE_GEN_USAGE_ARG;
    if (!a->layer_type)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': the config has several layer types "
                             "(%s); pass --layer-type", a->config, list);
    if (!found)
        return posenc_seterr(err, POSENC_ENOTFOUND, "'%s': unknown layer type '%s' (layer "
                             "types: %s)", a->config, a->layer_type, list);
    g->usage = 0;
    return POSENC_OK;
}

static void warn(pe_gen *g, const char *fmt, const char *s1, const char *s2, const char *s3)
{
    if (g->nwarn < PE_GEN_WARN_MAX)
        snprintf(g->warn[g->nwarn++], sizeof g->warn[0], fmt, s1, s2, s3);
}

/* The description of a RoPE table: the model, the parameter set, the table and the notes it
 * depends on (the same fields info --json shows). */
static void describe(pe_gen *g, const pe_gen_args *a, int64_t seq_len, int64_t first,
                     int64_t last, const char *gguf_note)
{
    pe_desc *d = g->d;
    pe_gen_describe_model(g, a);
    pe_describe_str(d, PE_DF_LAYER_TYPE, a->layer_type);
    pe_describe_rope(d, &g->cfg, &g->rp, &g->vi, a->precision, seq_len);
    pe_describe_str(d, PE_DF_LAYOUT, posenc_layout_name(a->layout));
    pe_describe_str(d, PE_DF_DTYPE, posenc_dtype_name(a->dtype));
    pe_describe_int(d, PE_DF_N_POSITIONS, a->positions ? (int64_t)a->positions->count : seq_len);
    pe_describe_int(d, PE_DF_FIRST_POSITION, first);
    pe_describe_int(d, PE_DF_LAST_POSITION, last);
    pe_describe_str(d, PE_DF_POSITIONS, a->positions ? "list" : "range");
    pe_describe_model_notes(d, a->m);
    pe_describe_rope_notes(d, &g->cfg, &g->rp, &g->vi, a->precision, seq_len, gguf_note);
}

posenc_status pe_gen_rope(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    posenc_status st;
    if (!a->m)
        return pe_gen_usage(g, err, "missing --config FILE (RoPE tables need a model config)");
    if (a->max_model_len && a->precision != POSENC_PREC_VLLM)
        return pe_gen_usage(g, err, "--max-model-len applies only to --precision vllm");
    if ((st = check_layer_type(g, a, err)) != POSENC_OK)
        return st;
    if ((st = posenc_model_rope(a->m, a->layer_type, &g->cfg, err)) != POSENC_OK) {
        /* a model that does not rotate is the input's fact (exit 3); the rest is the layer
         * type's */
        if (posenc_model_encoding(a->m) == POSENC_ENC_ROPE &&
            (st == POSENC_ENOTFOUND || st == POSENC_EINVAL))
            g->usage = PE_GEN_USAGE_ARG;
        return st;
    }
    /* positions and the sequence length L = max(position) + 1 (transformers' rule) */
    if ((st = pe_gen_plan_rows(g, a, posenc_model_max_positions(a->m), err)) != POSENC_OK)
        return st;
    int64_t n_pos = g->nq, seq_len = g->k_len;
    int64_t first = a->positions ? a->positions->first : 0;
    int64_t last = a->positions ? a->positions->last : seq_len - 1;
    if ((st = posenc_rope_params_for(&g->cfg, a->precision, posenc_model_family(a->m), seq_len,
                                     a->max_model_len, &g->rp, &g->vi, err)) != POSENC_OK)
        return posenc_error_prefix(err, st, "'%s': ", a->config);
    if (a->precision == POSENC_PREC_VLLM) {
        /* vLLM indexes its cache: rows default to the cache, positions must lie inside it */
        const posenc_vllm_info *vi = &g->vi;
        if (!a->positions && a->seq_len <= 0) {
            seq_len = n_pos = vi->cache_len;
            last = seq_len - 1;
        }
        if (last >= vi->cache_len || (a->positions && a->positions->max >= vi->cache_len))
            return posenc_seterr(err, POSENC_ERANGE, "'%s': position %" PRId64 " is past "
                                 "vLLM's cos_sin_cache (%s: %" PRId64 " rows)", a->config,
                                 a->positions ? a->positions->max : last, vi->cls,
                                 vi->cache_len);
        if (vi->note[0])
            warn(g, "'%s': %s%s", a->config, vi->note, "");
    }
    if (a->precision == POSENC_PREC_GGML &&
        (st = posenc_rope_params_ggml(&g->rp, a->m, a->layer_type, a->n_ctx ? a->n_ctx : seq_len,
                                      err)) != POSENC_OK)
        return posenc_error_prefix(err, st, "'%s': --precision ggml: ", a->config);
    if ((st = pe_table_rope(&g->t, &g->rp, a->precision, a->layout, n_pos,
                            pe_out_positions(a->positions), a->dtype, a->nthreads, err)) !=
        POSENC_OK)
        return posenc_error_prefix(err, st, "'%s': ", a->config);

    /* GGUF: llama.cpp's keys and tensors for the model, as its converter writes them */
    char gguf_note[POSENC_ERRMSG_MAX + 32];
    gguf_note[0] = '\0';
    if (a->format == POSENC_FMT_GGUF) {
        posenc_error ge = { 0 };
        st = posenc_gguf_rope_from_model(a->m, a->layer_type, &g->gr, &ge);
        if (st == POSENC_OK) {
            g->has_gr = 1;
        } else if (st == POSENC_EUNSUPPORTED) {
            snprintf(gguf_note, sizeof gguf_note, "gguf: no llama.cpp keys: %s", ge.msg);
            warn(g, "'%s': %s; '%s' holds posenc's arrays and keys only", a->config, ge.msg,
                 a->out);
        } else {
            *err = ge;
            return st;
        }
    }
    describe(g, a, seq_len, first, last, gguf_note[0] ? gguf_note : NULL);
    return POSENC_OK;
}
