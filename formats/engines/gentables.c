/* formats/engines/gentables.c: gen's engine for the non-rotary encodings (gentables.h): ALiBi slopes
 * and bias, T5 buckets and bias, Shaw indices and gathered embeddings, sinusoidal and learned
 * absolute tables. Each builder takes its parameters from lib/model/tableparams.c's one table (option,
 * else config, else default), checks the --weights tensor's shape against them, builds the
 * source and describes it (lib/describe/describe.c). */
#include "formats/engines/gentables.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The relative_attention_bias of the first block, the one T5 computes the bias in
 * (transformers models/t5/modeling_t5.py T5Attention, has_relative_attention_bias) */
#define T5_ENCODER_TENSOR "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
#define T5_DECODER_TENSOR "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"

posenc_status pe_gen_usage(pe_gen *g, posenc_error *err, const char *fmt, ...)
{
    char msg[POSENC_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    g->usage = PE_GEN_USAGE;
    return posenc_seterr(err, POSENC_EINVAL, "%s", msg);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The config file gen read, by its base name; a model directory ("models/llama/") is named by
 * its last component and the file read in it ("llama/config.json"). */
static void config_name(const char *path, char *out, size_t cap)
{
    struct stat sb;
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        const char *s = path + n;
        while (s > path && s[-1] != '/')
            s--;
        snprintf(out, cap, "%.*s/config.json", (int)(path + n - s), s);
        return;
    }
    snprintf(out, cap, "%s", base_name(path));
}

void pe_gen_describe_model(pe_gen *g, const pe_gen_args *a)
{
    pe_describe_str(g->d, PE_DF_POSENC_VERSION, posenc_version());
    if (a->config) {
        char name[512];
        config_name(a->config, name, sizeof name);
        pe_describe_str(g->d, PE_DF_CONFIG, name);
    }
    if (a->m)
        pe_describe_model(g->d, a->m);
}

/* One limit for every encoding: an option past PE_GEN_POS_MAX is refused by option parsing,
 * the config's maximum past it here (exit 3). */
posenc_status pe_gen_plan_rows(pe_gen *g, const pe_gen_args *a, int64_t max_default,
                               posenc_error *err)
{
    if (a->positions) { /* counted, in [0, PE_GEN_POS_MAX), never materialised */
        g->nq = (int64_t)a->positions->count;
        g->k_len = a->positions->max + 1;
        return POSENC_OK;
    }
    int64_t L = a->seq_len > 0 ? a->seq_len : max_default;
    if (L <= 0) {
        if (g->rope)
            return posenc_seterr(err, POSENC_ECONFIG, "'%s': no max_position_embeddings in the "
                                 "config; pass --seq-len or --positions", a->config);
        if (a->config)
            return pe_gen_usage(g, err, "'%s' gives no maximum position: pass --seq-len N",
                                a->config);
        return pe_gen_usage(g, err, "%s tables need --seq-len N", g->label);
    }
    if (L > PE_GEN_POS_MAX)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': max_position_embeddings %" PRId64
                             " is too large; pass --seq-len or --positions", a->config, L);
    g->nq = g->k_len = L;
    return POSENC_OK;
}

static posenc_status plan_positions(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    const posenc_bias_config *bc = a->m ? posenc_model_bias(a->m) : NULL;
    return pe_gen_plan_rows(g, a, bc ? bc->max_positions : 0, err);
}

/* Find the --weights tensor (names tried with each prefix) and read it whole as float32. */
static posenc_status load_weights(pe_gen *g, const pe_gen_args *a, const char *const *names,
                                  posenc_error *err)
{
    const char *prefixes[] = { "", NULL };
    posenc_status st = pe_weights_open(&g->w, a->weights, names, prefixes, err);
    return st == POSENC_OK ? pe_weights_load(&g->w, err) : st;
}

static void describe_shape(pe_gen *g, int64_t q_len)
{
    pe_describe_int(g->d, PE_DF_Q_LEN, q_len);
    pe_describe_int(g->d, PE_DF_K_LEN, g->k_len);
}

/* ---- ALiBi ---- */

static posenc_status gen_alibi(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    const pe_table_params *p = &g->par;
    int heads = PE_TP_INT(p, PE_TP_HEADS), bc = p->v[PE_TP_BROADCAST] != 0;
    if (heads <= 0)
        return pe_gen_usage(g, err, "ALiBi tables need --heads N%s",
                            a->config ? " (the config gives no number of heads)" : "");
    if (heads > (1 << 16))
        return pe_gen_usage(g, err, "%d ALiBi heads is too many", heads);
    if (!(g->slopes = malloc((size_t)heads * sizeof *g->slopes)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = posenc_alibi_slopes(p->alibi_kind, heads, p->v[PE_TP_ALIBI_BIAS_MAX],
                                           g->slopes, err);
    if (st == POSENC_OK)
        st = plan_positions(g, a, err);
    if (st == POSENC_OK)
        st = pe_table_alibi(&g->t, p->alibi_kind, p->convention, g->slopes, heads, g->nq,
                            g->k_len, bc, pe_out_positions(a->positions), a->dtype, err);
    if (st != POSENC_OK)
        return st;
    pe_describe_table_params(g->d, a->encoding, p, g->slopes);
    describe_shape(g, bc ? 1 : g->nq);
    if (bc)
        pe_describe_int(g->d, PE_DF_BROADCAST_QUERY, g->k_len - 1);
    g->hint = "a smaller --seq-len, --broadcast, --array slopes";
    return POSENC_OK;
}

/* ---- T5 ---- */

static posenc_status gen_t5(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    const pe_table_params *p = &g->par;
    int heads = 0, nb = PE_TP_INT(p, PE_TP_NUM_BUCKETS), md = PE_TP_INT(p, PE_TP_MAX_DISTANCE);
    int decoder = p->v[PE_TP_DECODER] != 0, bidir = !decoder;
    posenc_status st = posenc_t5_check(bidir, nb, md, err);
    if (st != POSENC_OK) {
        if ((p->from_option & (PE_TP_BIT(PE_TP_NUM_BUCKETS) | PE_TP_BIT(PE_TP_MAX_DISTANCE))) ||
            !a->config)
            g->usage = PE_GEN_USAGE;
        else
            posenc_error_prefix(err, st, "'%s': ", a->config);
        return st;
    }
    if ((p->from_option & PE_TP_BIT(PE_TP_HEADS)) && !a->weights)
        return pe_gen_usage(g, err, "--heads applies to T5 tables only with --weights");
    if (a->weights) {
        const char *names[] = { a->tensor ? a->tensor : decoder ? T5_DECODER_TENSOR
                                                                : T5_ENCODER_TENSOR, NULL };
        if ((st = load_weights(g, a, names, err)) != POSENC_OK)
            return st;
        if (g->w.rows != nb)
            return posenc_seterr(err, POSENC_EMISMATCH, "'%s': tensor '%s' has %" PRId64
                                 " rows, but there are %d buckets (shape must be [num_buckets, "
                                 "heads])", a->weights, names[0], g->w.rows, nb);
        int want_heads = PE_TP_INT(p, PE_TP_HEADS);
        if (want_heads && g->w.cols != want_heads)
            return posenc_seterr(err, POSENC_EMISMATCH, "'%s': tensor '%s' has %" PRId64
                                 " heads (columns), not %d", a->weights, names[0], g->w.cols,
                                 want_heads);
        if (g->w.cols < 1 || g->w.cols > (1 << 16))
            return posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%s' has %" PRId64
                                 " columns", a->weights, names[0], g->w.cols);
        heads = (int)g->w.cols;
        pe_describe_str(g->d, PE_DF_WEIGHTS, a->weights);
        pe_describe_str(g->d, PE_DF_TENSOR, names[0]);
    }
    if ((st = plan_positions(g, a, err)) != POSENC_OK ||
        (st = pe_table_t5(&g->t, bidir, nb, md, g->w.data, heads, g->nq, g->k_len,
                          pe_out_positions(a->positions), a->dtype, err)) != POSENC_OK)
        return st;
    pe_describe_table_params(g->d, a->encoding, p, NULL);
    describe_shape(g, g->nq);
    if (heads)
        pe_describe_int(g->d, PE_DF_HEADS, heads);
    g->hint = "a smaller --seq-len";
    return POSENC_OK;
}

/* ---- Shaw ---- */

static posenc_status gen_shaw(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    const pe_table_params *p = &g->par;
    int64_t k = (int64_t)p->v[PE_TP_MAX_REL];
    posenc_status st;
    if (k <= 0)
        return pe_gen_usage(g, err, "Shaw tables need --max-relative-position K%s",
                            a->config ? " (the config gives none)" : "");
    if (k > (1 << 30))
        return pe_gen_usage(g, err, "--max-relative-position %" PRId64 " is too large", k);
    if (a->weights) {
        /* one tensor in the file needs no name */
        char name[POSENC_NAME_MAX];
        snprintf(name, sizeof name, "%s", a->tensor ? a->tensor : "");
        size_t n = 1;
        if (!a->tensor) {
            if ((st = pe_weights_count(a->weights, &n, name, sizeof name, err)) != POSENC_OK)
                return st;
            if (n != 1)
                return pe_gen_usage(g, err, "'%s' holds %zu tensors: pass --tensor NAME (the "
                                    "[2k+1, depth] table)", a->weights, n);
        }
        const char *names[] = { name, NULL };
        if ((st = load_weights(g, a, names, err)) != POSENC_OK)
            return st;
        if (g->w.rows != 2 * k + 1)
            return posenc_seterr(err, POSENC_EMISMATCH, "'%s': the relative embedding table "
                                 "has %" PRId64 " rows, but max_relative_position %" PRId64
                                 " needs 2k+1 = %" PRId64, a->weights, g->w.rows, k, 2 * k + 1);
        pe_describe_str(g->d, PE_DF_TENSOR, name);
        pe_describe_str(g->d, PE_DF_WEIGHTS, a->weights);
    }
    if ((st = plan_positions(g, a, err)) != POSENC_OK ||
        (st = pe_table_shaw(&g->t, k, p->shaw_bert, g->w.data, g->w.cols, g->nq, g->k_len,
                            pe_out_positions(a->positions), a->dtype, err)) != POSENC_OK)
        return st;
    pe_describe_table_params(g->d, a->encoding, p, NULL);
    describe_shape(g, g->nq);
    g->hint = "a smaller --seq-len";
    return POSENC_OK;
}

/* ---- sinusoidal ---- */

static posenc_status gen_sinusoidal(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    const pe_table_params *p = &g->par;
    int d_model = PE_TP_INT(p, PE_TP_D_MODEL);
    int fairseq = p->sin_variant == POSENC_SIN_FAIRSEQ;
    int pad = fairseq ? PE_TP_INT(p, PE_TP_PADDING_IDX) : -1;
    posenc_status st;
    if (d_model <= 0)
        return pe_gen_usage(g, err, "sinusoidal tables need --d-model N%s",
                            a->config ? " (the config gives no width)" : "");
    if ((st = posenc_sinusoidal_new(p->sin_variant, d_model, pad, &g->sin, err)) != POSENC_OK) {
        if ((p->from_option & PE_TP_BIT(PE_TP_D_MODEL)) || !a->config)
            g->usage = PE_GEN_USAGE;
        return st;
    }
    if ((st = plan_positions(g, a, err)) != POSENC_OK)
        return st;
    /* fairseq: rows are embedding indices and real tokens start at padding_idx + 1, so L
     * positions need L + padding_idx + 1 rows (fairseq's init_size) */
    if (fairseq && !a->positions)
        g->nq += pad + 1;
    if ((st = pe_table_sinusoidal(&g->t, g->sin, d_model, g->nq, pe_out_positions(a->positions),
                                  a->dtype, err)) != POSENC_OK)
        return st;
    pe_describe_table_params(g->d, a->encoding, p, NULL);
    pe_describe_int(g->d, PE_DF_N_POSITIONS, g->nq);
    g->hint = "a smaller --seq-len";
    return POSENC_OK;
}

/* ---- learned ---- */

static posenc_status gen_learned(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    const posenc_bias_config *bc = a->m ? posenc_model_bias(a->m) : NULL;
    int d_model = PE_TP_INT(&g->par, PE_TP_D_MODEL);
    posenc_status st;
    if (!a->weights)
        return pe_gen_usage(g, err, "learned tables are copied from a checkpoint: pass "
                            "--weights model.safetensors");
    const char *name = a->tensor;
    if (!name && bc && bc->learned_tensor[0])
        name = bc->learned_tensor;
    if (!name)
        return pe_gen_usage(g, err, "no tensor name for the learned table: pass --tensor NAME");
    /* the config's name, and the same without the wrapper prefix a checkpoint may lack */
    const char *bare = name;
    if (!a->tensor && strncmp(name, "transformer.", 12) == 0)
        bare = name + 12;
    else if (!a->tensor && strncmp(name, "bert.", 5) == 0)
        bare = name + 5;
    const char *names[] = { name, bare, NULL };
    const char *prefixes_model[] = { "", "transformer.", "bert.", NULL };
    const char *prefixes_exact[] = { "", NULL };
    if ((st = pe_weights_open(&g->w, a->weights, names,
                              a->tensor ? prefixes_exact : prefixes_model, err)) != POSENC_OK)
        return st;
    const int64_t cols = g->w.cols;
    /* --d-model, when given, must be the tensor's width */
    if ((g->par.from_option & PE_TP_BIT(PE_TP_D_MODEL)) && d_model != cols)
        return posenc_seterr(err, POSENC_EMISMATCH, "'%s': tensor '%s' is %" PRId64
                             " wide, not --d-model %d", a->weights, name, cols, d_model);
    /* the model's positions start at row position_offset of its table */
    int64_t row_offset = bc ? bc->position_offset : 0;
    if (row_offset >= g->w.rows)
        return posenc_seterr(err, POSENC_EMISMATCH, "'%s': tensor '%s' has %" PRId64 " rows, "
                             "but the model's positions start at row %" PRId64, a->weights,
                             name, g->w.rows, row_offset);
    int64_t npos = g->w.rows - row_offset;
    if (a->positions) { /* rows in any order: the table read whole */
        if (a->positions->max >= npos)
            return posenc_seterr(err, POSENC_ERANGE, "'%s': position %" PRId64 " is past the %"
                                 PRId64 " positions of the learned table", a->weights,
                                 a->positions->max, npos);
        if ((st = pe_weights_load(&g->w, err)) != POSENC_OK ||
            (st = plan_positions(g, a, err)) != POSENC_OK)
            return st;
        g->rows_mem = (pe_out_rows_mem){ g->w.data, g->w.rows, cols };
        st = pe_table_learned(&g->t, pe_out_rows_copy, &g->rows_mem, POSENC_DT_F32, cols,
                              g->nq, row_offset, pe_out_positions(a->positions), a->dtype, err);
    } else { /* the first rows, streamed straight from the checkpoint */
        g->nq = a->seq_len ? a->seq_len : npos;
        if (g->nq > npos)
            return posenc_seterr(err, POSENC_ERANGE, "'%s': --seq-len %" PRId64 " is past the %"
                                 PRId64 " positions of the learned table", a->weights, g->nq,
                                 npos);
        if ((st = pe_weights_stream(&g->w, err)) != POSENC_OK)
            return st;
        st = pe_table_learned(&g->t, pe_out_rows_read, &g->w.stream,
                              posenc_reader_info(g->w.stream.r)->dtype, cols, g->nq, row_offset,
                              pe_out_positions(NULL), a->dtype, err);
    }
    if (st != POSENC_OK)
        return st;
    pe_describe_str(g->d, PE_DF_WEIGHTS, a->weights);
    pe_describe_str(g->d, PE_DF_TENSOR, name);
    pe_describe_int(g->d, PE_DF_D_MODEL, cols);
    pe_describe_int(g->d, PE_DF_N_POSITIONS, g->nq);
    pe_describe_int(g->d, PE_DF_ROW_OFFSET, row_offset);
    g->hint = "a smaller --seq-len";
    return POSENC_OK;
}

/* ---- one builder per encoding ---- */

static const struct {
    posenc_encoding e;
    posenc_status (*build)(pe_gen *g, const pe_gen_args *a, posenc_error *err);
} builders[] = {
    { POSENC_ENC_ROPE, pe_gen_rope },
    { POSENC_ENC_ALIBI, gen_alibi },
    { POSENC_ENC_T5, gen_t5 },
    { POSENC_ENC_SHAW, gen_shaw },
    { POSENC_ENC_SINUSOIDAL, gen_sinusoidal },
    { POSENC_ENC_LEARNED, gen_learned },
};

posenc_status pe_gen_build(pe_gen *g, const pe_gen_args *a, posenc_error *err)
{
    memset(g, 0, sizeof *g);
    g->label = posenc_encoding_name(a->encoding);
    g->rope = a->encoding == POSENC_ENC_ROPE;
    if (!(g->d = pe_describe_new()))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    if (!g->rope) {
        /* options that do not apply to this encoding are usage errors, not ignored */
        int p = pe_table_param_refused(a->p.given, a->encoding);
        if (p >= 0)
            return pe_gen_usage(g, err, "%s does not apply to %s tables",
                                pe_table_param_name((pe_table_param)p),
                                pe_table_label(a->encoding));
        if (a->tensor && !a->weights)
            return pe_gen_usage(g, err, "--tensor needs --weights FILE");
        posenc_status st = pe_table_params_resolve(&g->par, a->encoding, &a->p,
                                                   a->m ? posenc_model_bias(a->m) : NULL, err);
        if (st != POSENC_OK) {
            g->usage = PE_GEN_USAGE;
            return st;
        }
        pe_gen_describe_model(g, a);
        if (a->m)
            pe_describe_model_notes(g->d, a->m);
        pe_describe_str(g->d, PE_DF_ENCODING, g->label); /* the table's, e.g. Whisper's encoder */
    }
    for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++)
        if (builders[i].e == a->encoding)
            return builders[i].build(g, a, err);
    return posenc_seterr(err, POSENC_EUNSUPPORTED, "%s has no table to generate", g->label);
}

posenc_status pe_gen_meta(void *ctx, posenc_writer *w, posenc_error *err)
{
    const pe_gen *g = ctx;
    posenc_status st = pe_describe_meta_write(g->d, "", w, err);
    if (st == POSENC_OK && g->has_gr)
        st = posenc_gguf_writer_rope(w, &g->gr, err);
    return st;
}

void pe_gen_free(pe_gen *g)
{
    if (!g)
        return;
    pe_table_free(&g->t);
    pe_describe_free(g->d);
    pe_weights_close(&g->w);
    posenc_sinusoidal_free(g->sin);
    free(g->slopes);
    memset(g, 0, sizeof *g);
}
