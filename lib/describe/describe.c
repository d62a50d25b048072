/* lib/describe/describe.c: the field table (describe.def) and the values of one description of a resolved
 * model: what gen's metadata, info's text and JSON and verify's report all say about it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/describe/describe.h"
#include "posenc/bias.h"
#include "lib/encodings/profile.h"
#include "lib/encodings/rope_type.h"
#include "lib/encodings/tables.h"

static const pe_dfield_def fields[PE_DF_COUNT] = {
#define I PE_DV_INFO
#define M PE_DV_META
#define R PE_DV_REPORT
#define T PE_DV_TEXT
#define X(id, key_, label_, kind_, parent_, views_, of_) \
    [PE_DF_##id] = { key_, label_, PE_DK_##kind_, PE_DF_##parent_, views_, PE_DF_##of_ },
#include "lib/describe/describe.def"
#undef X
#undef I
#undef M
#undef R
#undef T
};

struct pe_desc {
    pe_dval val[PE_DF_COUNT];
    int oom;
};

const pe_dfield_def *pe_describe_def(pe_dfield f)
{
    return (unsigned)f < PE_DF_COUNT ? &fields[f] : NULL;
}

pe_dfield pe_describe_find(const char *key, pe_dfield parent, unsigned view)
{
    for (int f = 0; f < PE_DF_COUNT; f++)
        if (fields[f].parent == parent && (fields[f].views & view) && strcmp(fields[f].key, key) == 0)
            return (pe_dfield)f;
    return PE_DF_COUNT;
}

pe_desc *pe_describe_new(void)
{
    return calloc(1, sizeof(pe_desc));
}

static void clear(pe_dval *v)
{
    free((char *)v->s);
    free(v->v);
    for (size_t i = 0; v->sv && i < v->n; i++)
        free(v->sv[i]);
    free(v->sv);
    memset(v, 0, sizeof *v);
}

void pe_describe_free(pe_desc *d)
{
    if (!d)
        return;
    for (int f = 0; f < PE_DF_COUNT; f++)
        clear(&d->val[f]);
    free(d);
}

int pe_describe_oom(const pe_desc *d)
{
    return !d || d->oom;
}

const pe_dval *pe_describe_get(const pe_desc *d, pe_dfield f)
{
    if ((unsigned)f < PE_DF_COUNT && fields[f].of != PE_DF_NONE)
        f = fields[f].of;
    return d && (unsigned)f < PE_DF_COUNT && d->val[f].set ? &d->val[f] : NULL;
}

/* The slot of f, cleared, of kind k (NULL for a wrong kind: a caller's mistake, recorded as a
 * failure so that it cannot go unnoticed); its group is marked set. */
static pe_dval *slot(pe_desc *d, pe_dfield f, pe_dkind k)
{
    if (!d || (unsigned)f >= PE_DF_COUNT || fields[f].kind != k || fields[f].of != PE_DF_NONE) {
        if (d)
            d->oom = 1;
        return NULL;
    }
    pe_dval *v = &d->val[f];
    clear(v);
    v->set = 1;
    if (fields[f].parent != PE_DF_NONE)
        d->val[fields[f].parent].set = 1;
    return v;
}

void pe_describe_str(pe_desc *d, pe_dfield f, const char *s)
{
    pe_dval *v = slot(d, f, PE_DK_STR);
    if (v && s && !(v->s = strdup(s)))
        d->oom = 1;
}

void pe_describe_num(pe_desc *d, pe_dfield f, double x, const char *fmt)
{
    pe_dval *v = slot(d, f, PE_DK_NUM);
    if (v) {
        v->d = x;
        v->fmt = fmt;
    }
}

void pe_describe_int(pe_desc *d, pe_dfield f, int64_t x)
{
    pe_dval *v = slot(d, f, PE_DK_INT);
    if (v)
        v->i = x;
}

void pe_describe_bool(pe_desc *d, pe_dfield f, int x)
{
    pe_dval *v = slot(d, f, PE_DK_BOOL);
    if (v)
        v->i = x != 0;
}

void pe_describe_nums(pe_desc *d, pe_dfield f, const double *x, size_t n, const char *fmt)
{
    pe_dval *v = slot(d, f, PE_DK_NUMS);
    if (!v)
        return;
    v->fmt = fmt;
    if (n == 0)
        return;
    if (!(v->v = malloc(n * sizeof *v->v))) {
        d->oom = 1;
        return;
    }
    memcpy(v->v, x, n * sizeof *x);
    v->n = n;
}

void pe_describe_strs_add(pe_desc *d, pe_dfield f, const char *s)
{
    if (!d || (unsigned)f >= PE_DF_COUNT || fields[f].kind != PE_DK_STRS) {
        if (d)
            d->oom = 1;
        return;
    }
    pe_dval *v = &d->val[f];
    v->set = 1;
    char **sv = realloc(v->sv, (v->n + 1) * sizeof *sv);
    char *c = strdup(s ? s : "");
    if (!sv || !c) {
        free(c);
        if (sv)
            v->sv = sv;
        d->oom = 1;
        return;
    }
    v->sv = sv;
    v->sv[v->n++] = c;
}

void pe_describe_info_fmt(pe_desc *d, pe_dfield f, const char *fmt)
{
    if (d && (unsigned)f < PE_DF_COUNT)
        d->val[f].info_fmt = fmt;
}

/* ---- the model ---- */

void pe_describe_model(pe_desc *d, const posenc_model *m)
{
    posenc_encoding e = posenc_model_encoding(m);
    if (posenc_model_type(m))
        pe_describe_str(d, PE_DF_MODEL_TYPE, posenc_model_type(m));
    pe_describe_str(d, PE_DF_FAMILY, posenc_model_family(m));
    pe_describe_str(d, PE_DF_ENCODING, posenc_encoding_name(e));
    if (posenc_model_warning(m))
        pe_describe_str(d, PE_DF_WARNING, posenc_model_warning(m));
    if (e != POSENC_ENC_ROPE)
        return;
    for (size_t i = 0; i < posenc_model_layer_name_count(m); i++) {
        char t[POSENC_NAME_MAX + 32];
        snprintf(t, sizeof t, "%s (%s)", posenc_model_layer_name(m, i),
                 posenc_encoding_name(posenc_model_layer_name_encoding(m, i)));
        pe_describe_strs_add(d, PE_DF_LAYER_NAMES, t);
    }
    if (posenc_model_layer_count(m) > 0)
        pe_describe_int(d, PE_DF_NUM_LAYERS, posenc_model_layer_count(m));
    const int64_t *nope;
    size_t nn = posenc_model_nope_layers(m, &nope);
    double *v = nn ? malloc(nn * sizeof *v) : NULL;
    if (nn && !v) {
        d->oom = 1;
        return;
    }
    for (size_t i = 0; i < nn; i++)
        v[i] = (double)nope[i];
    pe_describe_nums(d, PE_DF_NOPE_LAYERS, v, nn, NULL);
    free(v);
}

void pe_describe_model_notes(pe_desc *d, const posenc_model *m)
{
    if (!d)
        return;
    d->val[PE_DF_NOTES].set = 1; /* an empty list is still a list */
    for (size_t i = 0; i < posenc_model_note_count(m); i++)
        pe_describe_strs_add(d, PE_DF_NOTES, posenc_model_note(m, i));
}

/* ---- one RoPE parameter set ---- */

static void describe_vllm(pe_desc *d, const posenc_vllm_info *v)
{
    pe_describe_str(d, PE_DF_VLLM_CLASS, v->cls);
    pe_describe_str(d, PE_DF_VLLM_SOURCE, v->source);
    pe_describe_int(d, PE_DF_VLLM_MAX_MODEL_LEN, v->max_model_len);
    pe_describe_int(d, PE_DF_VLLM_CACHE_LEN, v->cache_len);
    pe_describe_int(d, PE_DF_VLLM_CACHE_ROWS, v->cache_rows);
    pe_describe_int(d, PE_DF_VLLM_CACHE_OFFSET, v->cache_offset);
    pe_describe_num(d, PE_DF_VLLM_BASE, v->base, NULL);
    pe_describe_num(d, PE_DF_VLLM_MSCALE, v->mscale, NULL);
    pe_describe_bool(d, PE_DF_VLLM_LONG_FACTORS_USED, v->long_factors);
    pe_describe_bool(d, PE_DF_VLLM_TRUNCATE, v->truncate);
    if (v->note[0])
        pe_describe_str(d, PE_DF_VLLM_NOTE, v->note);
}

const char *pe_describe_ggml_note(const posenc_rope_params *p)
{
    if (p->ggml.mode == POSENC_GGML_ROPE_NORM && p->style == POSENC_STYLE_NEOX)
        return "ggml: llama.cpp's CPU numerics (portable build, no FMA) from the GGUF keys "
               "convert_hf_to_gguf.py writes for this config; llama.cpp rotates interleaved "
               "pairs of the converter's permuted Q/K, which in transformers' layout are the neox "
               "pairs posenc rotates";
    return "ggml: llama.cpp's CPU numerics (portable build, no FMA) from the GGUF keys "
           "convert_hf_to_gguf.py writes for this config";
}

/* llama.cpp's ggml_rope_ext arguments: the floats as ggml holds them (%.9g reads back as the
 * same float). */
void pe_describe_ggml(pe_desc *d, const posenc_rope_params *p)
{
    const posenc_ggml_rope *g = &p->ggml;
    pe_describe_str(d, PE_DF_GGML_MODE, posenc_ggml_mode_name(g->mode));
    pe_describe_int(d, PE_DF_GGML_N_DIMS, g->n_dims);
    pe_describe_int(d, PE_DF_GGML_HEAD_DIM, g->head_dim);
    pe_describe_int(d, PE_DF_GGML_N_CTX_ORIG, g->n_ctx_orig);
    pe_describe_num(d, PE_DF_GGML_FREQ_BASE, (double)g->freq_base, "%.9g");
    pe_describe_num(d, PE_DF_GGML_FREQ_SCALE, (double)g->freq_scale, "%.9g");
    pe_describe_num(d, PE_DF_GGML_EXT_FACTOR, (double)g->ext_factor, "%.9g");
    pe_describe_num(d, PE_DF_GGML_ATTN_FACTOR, (double)g->attn_factor, "%.9g");
    pe_describe_num(d, PE_DF_GGML_BETA_FAST, (double)g->beta_fast, "%.9g");
    pe_describe_num(d, PE_DF_GGML_BETA_SLOW, (double)g->beta_slow, "%.9g");
    pe_describe_num(d, PE_DF_GGML_MSCALE, posenc_ggml_rope_mscale(g), "%.9g");
    double s[4], ff[POSENC_MAX_FREQ];
    for (int i = 0; i < 4; i++)
        s[i] = g->sections[i];
    pe_describe_nums(d, PE_DF_GGML_SECTIONS, s, 4, NULL);
    int nf = g->n_freq_factors < 0 ? 0 : g->n_freq_factors > POSENC_MAX_FREQ ? POSENC_MAX_FREQ
                                                                          : g->n_freq_factors;
    for (int i = 0; i < nf; i++)
        ff[i] = (double)g->freq_factors[i];
    pe_describe_nums(d, PE_DF_GGML_FREQ_FACTORS, ff, (size_t)nf, "%.9g");
    pe_describe_num(d, PE_DF_GGML_KQ_SCALE, g->kq_scale, NULL);
    pe_describe_str(d, PE_DF_GGML_NOTE, pe_describe_ggml_note(p));
    if (g->note)
        pe_describe_str(d, PE_DF_GGML_DIFFERS, g->note);
}

void pe_describe_rope(pe_desc *d, const posenc_rope_config *c, const posenc_rope_params *p,
                      const posenc_vllm_info *vi, posenc_precision prec, int64_t seq_len)
{
    pe_describe_str(d, PE_DF_ROPE_TYPE, posenc_rope_type_name(c->type));
    pe_describe_num(d, PE_DF_THETA, c->theta, NULL);
    pe_describe_str(d, PE_DF_THETA_SOURCE, c->theta_source);
    if (p)
        pe_describe_num(d, PE_DF_THETA_USED, p->theta_used, NULL);
    pe_describe_int(d, PE_DF_HEAD_DIM, c->head_dim);
    pe_describe_int(d, PE_DF_ROTARY_DIM, c->rotary_dim);
    pe_describe_num(d, PE_DF_PARTIAL_ROTARY_FACTOR, c->partial_rotary_factor, NULL);
    pe_describe_int(d, PE_DF_EXPONENT_DIM, c->exponent_dim);
    pe_describe_str(d, PE_DF_STYLE, posenc_style_name(c->style));
    pe_describe_str(d, PE_DF_PAIRING, posenc_pairing_name(c->pairing));
    pe_describe_int(d, PE_DF_MAX_POSITION_EMBEDDINGS, c->max_position_embeddings);
    pe_describe_int(d, PE_DF_ORIGINAL_MAX_POSITION_EMBEDDINGS, c->original_max_position_embeddings);
    pe_describe_num(d, PE_DF_FACTOR, c->factor, NULL);
    const pe_rope_type *rt = pe_rope_type_get(c->type);
    unsigned keys = rt ? rt->keys : 0;
    if (keys & RK_LOWHIGH) {
        pe_describe_num(d, PE_DF_LOW_FREQ_FACTOR, c->low_freq_factor, NULL);
        pe_describe_num(d, PE_DF_HIGH_FREQ_FACTOR, c->high_freq_factor, NULL);
    }
    if (keys & RK_YARN) {
        pe_describe_num(d, PE_DF_BETA_FAST, c->beta_fast, NULL);
        pe_describe_num(d, PE_DF_BETA_SLOW, c->beta_slow, NULL);
        pe_describe_bool(d, PE_DF_TRUNCATE, c->truncate);
        pe_describe_num(d, PE_DF_MSCALE, c->mscale, NULL);
        pe_describe_num(d, PE_DF_MSCALE_ALL_DIM, c->mscale_all_dim, NULL);
    }
    if (c->has_attention_factor)
        pe_describe_num(d, PE_DF_ATTENTION_FACTOR, c->attention_factor, NULL);
    if (keys & RK_SHORTLONG) {
        pe_describe_nums(d, PE_DF_SHORT_FACTOR, c->short_factor, (size_t)c->n_short_factor, NULL);
        pe_describe_nums(d, PE_DF_LONG_FACTOR, c->long_factor, (size_t)c->n_long_factor, NULL);
        if (p) {
            pe_describe_bool(d, PE_DF_LONG_FACTORS_USED, p->long_factors);
            /* legacy, with its own value type */
            pe_describe_str(d, PE_DF_LEGACY_LONGROPE_FACTORS, p->long_factors ? "long" : "short");
        }
    }
    if (c->n_mrope_section > 0) {
        double s[4];
        int n = c->n_mrope_section < 4 ? c->n_mrope_section : 4;
        for (int i = 0; i < n; i++)
            s[i] = c->mrope_section[i];
        pe_describe_nums(d, PE_DF_MROPE_SECTION, s, (size_t)n, NULL);
        pe_describe_bool(d, PE_DF_MROPE_INTERLEAVED, c->mrope_interleaved);
    }
    if (!p)
        return;
    /* the values of the precision: info prints float32 values with 9 digits, exact with 17 */
    const pe_profile *prof = pe_profile_get(prec);
    unsigned pf = prof ? prof->flags : PF_F32; /* not a precision: as the float32 ones */
    const char *ifmt = pf & PF_F32 ? "%.9g" : "%.17g";
    int ggml = (pf & PF_GGML) && p->has_ggml;
    int n = p->n_freq < 0 ? 0 : p->n_freq > POSENC_MAX_FREQ ? POSENC_MAX_FREQ : p->n_freq;
    double inv[POSENC_MAX_FREQ], att;
    if (ggml) {
        const int64_t one[3] = { 1, 1, 1 };
        posenc_ggml_rope_angles(&p->ggml, one, inv);
        att = posenc_ggml_rope_mscale(&p->ggml);
    } else {
        for (int i = 0; i < n; i++)
            inv[i] = pf & PF_F32 ? (double)p->inv_freq_f32[i]
                                 : p->inv_hi[i] + p->inv_lo[i];
        att = pf & PF_F32 ? (double)p->attention_scaling_f32 : p->attention_scaling;
    }
    pe_describe_num(d, PE_DF_ATTENTION_SCALING, att, NULL);
    pe_describe_info_fmt(d, PE_DF_ATTENTION_SCALING, ifmt);
    if (prec == POSENC_PREC_VLLM && vi)
        describe_vllm(d, vi);
    if (ggml)
        pe_describe_ggml(d, p);
    pe_describe_num(d, PE_DF_SOFTMAX_SCALE, p->softmax_scale, NULL);
    pe_describe_int(d, PE_DF_SEQ_LEN, seq_len);
    pe_describe_str(d, PE_DF_PRECISION, posenc_precision_name(prec));
    pe_describe_int(d, PE_DF_N_FREQ, n);
    pe_describe_nums(d, PE_DF_INV_FREQ, inv, (size_t)n, ifmt);
}

void pe_describe_rope_notes(pe_desc *d, const posenc_rope_config *c, const posenc_rope_params *p,
                            const posenc_vllm_info *vi, posenc_precision prec, int64_t seq_len,
                            const char *extra)
{
    char t[256] = "";
    const pe_rope_type *rt = pe_rope_type_get(c->type);
    int seq = rt ? rt->seq : SEQ_NONE; /* what the sequence length changes, said in a note */
    if (prec == POSENC_PREC_VLLM && vi) {
        if (seq == SEQ_FACTORS)
            snprintf(t, sizeof t, "vllm: %s factors for every position (max_model_len %lld"
                     " %s original_max_position_embeddings %lld)",
                     vi->long_factors ? "long" : "short", (long long)vi->max_model_len,
                     vi->long_factors ? ">" : "<=", (long long)c->original_max_position_embeddings);
        else if (seq == SEQ_BASE)
            snprintf(t, sizeof t, "vllm: dynamic NTK base fixed at load: %.17g", vi->base);
    } else if (seq == SEQ_BASE) {
        snprintf(t, sizeof t, "dynamic: base for seq_len %lld (scaled only past "
                 "max_position_embeddings %lld)", (long long)seq_len,
                 (long long)c->max_position_embeddings);
    } else if (seq == SEQ_FACTORS) {
        snprintf(t, sizeof t, "longrope: %s factors for seq_len %lld (long only past "
                 "original_max_position_embeddings %lld)", p->long_factors ? "long" : "short",
                 (long long)seq_len, (long long)c->original_max_position_embeddings);
    }
    if (t[0])
        pe_describe_strs_add(d, PE_DF_NOTES, t);
    if (vi && vi->note[0])
        pe_describe_strs_add(d, PE_DF_NOTES, vi->note);
    if (extra)
        pe_describe_strs_add(d, PE_DF_NOTES, extra);
    const pe_profile *prof = pe_profile_get(prec);
    if (!prof) /* not a precision: hf's note, as before the table */
        prof = pe_profile_get(POSENC_PREC_HF);
    if (prof->flags & PF_GGML) {
        pe_describe_strs_add(d, PE_DF_NOTES, pe_describe_ggml_note(p));
        if (p->ggml.note) /* where llama.cpp and transformers differ (lib/model/llama_arch.def) */
            pe_describe_strs_add(d, PE_DF_NOTES, p->ggml.note);
    }
    pe_describe_strs_add(d, PE_DF_NOTES, prof->note);
}

/* ---- the other encodings ---- */

/* The model's own table: its parameters resolved as gen resolves them with no option given
 * (lib/model/tableparams.c: the config's value, else the table's default), described by
 * pe_describe_table_params as gen's metadata is; then the facts only the config has. */
posenc_status pe_describe_bias(pe_desc *d, const posenc_model *m, posenc_error *err)
{
    const posenc_bias_config *b = posenc_model_bias(m);
    posenc_encoding e = posenc_model_encoding(m);
    const pe_table_args none = { 0 };
    pe_table_params p;
    double *s = NULL;
    posenc_status st = pe_table_params_resolve(&p, e, &none, b, err);
    if (st != POSENC_OK)
        return st;
    if (e == POSENC_ENC_ALIBI) {
        int heads = PE_TP_INT(&p, PE_TP_HEADS);
        if (!(s = malloc((size_t)(heads > 0 ? heads : 1) * sizeof *s)))
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        st = posenc_alibi_slopes(p.alibi_kind, heads, p.v[PE_TP_ALIBI_BIAS_MAX], s, err);
        if (st != POSENC_OK) {
            free(s);
            return st;
        }
    }
    pe_describe_table_params(d, e, &p, s);
    free(s);
    switch (e) {
    case POSENC_ENC_ALIBI:
        pe_describe_str(d, PE_DF_LEGACY_ALIBI_KIND, posenc_alibi_kind_name(p.alibi_kind));
        /* info names alibi_bias_max for every variant (posenc-info(1)); only MPT's slopes,
         * which pe_describe_table_params gave it for, depend on it */
        if (!pe_describe_get(d, PE_DF_ALIBI_BIAS_MAX))
            pe_describe_num(d, PE_DF_ALIBI_BIAS_MAX, p.v[PE_TP_ALIBI_BIAS_MAX], NULL);
        break;
    case POSENC_ENC_LEARNED:
        pe_describe_str(d, PE_DF_TENSOR, b->learned_tensor);
        pe_describe_int(d, PE_DF_ROW_OFFSET, b->position_offset);
        break;
    case POSENC_ENC_SINUSOIDAL:
        pe_describe_int(d, PE_DF_ROW_OFFSET, b->position_offset);
        break;
    default:
        break;
    }
    /* the config's own facts; heads, d_model and padding_idx only where the table's do not
     * already say them (T5's heads beside its buckets, the others' with the widths) */
    if (e == POSENC_ENC_T5)
        pe_describe_int(d, PE_DF_HEADS, b->heads);
    else if (e != POSENC_ENC_ALIBI)
        pe_describe_int(d, PE_DF_BIAS_HEADS, b->heads);
    if (e != POSENC_ENC_T5)
        pe_describe_int(d, PE_DF_MAX_POSITIONS, b->max_positions);
    if (!pe_describe_get(d, PE_DF_D_MODEL))
        pe_describe_int(d, PE_DF_D_MODEL, b->d_model);
    pe_describe_int(d, PE_DF_BIAS_HEAD_DIM, b->head_dim);
    if (b->padding_idx >= 0 && !pe_describe_get(d, PE_DF_PADDING_IDX))
        pe_describe_int(d, PE_DF_PADDING_IDX, b->padding_idx);
    return POSENC_OK;
}

void pe_describe_table_params(pe_desc *d, posenc_encoding e, const pe_table_params *p,
                              const double *slopes)
{
    switch (e) {
    case POSENC_ENC_ALIBI: {
        int heads = PE_TP_INT(p, PE_TP_HEADS);
        pe_describe_str(d, PE_DF_VARIANT, posenc_alibi_kind_name(p->alibi_kind));
        pe_describe_str(d, PE_DF_CONVENTION, posenc_alibi_convention_name(p->convention));
        pe_describe_int(d, PE_DF_HEADS, heads);
        if (p->alibi_kind == POSENC_ALIBI_MPT) /* the only slopes it changes */
            pe_describe_num(d, PE_DF_ALIBI_BIAS_MAX, p->v[PE_TP_ALIBI_BIAS_MAX], NULL);
        pe_describe_nums(d, PE_DF_SLOPES, slopes, (size_t)(heads > 0 ? heads : 0), NULL);
        break;
    }
    case POSENC_ENC_T5: {
        int dec = p->v[PE_TP_DECODER] != 0;
        pe_describe_bool(d, PE_DF_IS_DECODER, dec);
        pe_describe_str(d, PE_DF_LEGACY_T5_KIND, dec ? "decoder" : "encoder");
        pe_describe_bool(d, PE_DF_LEGACY_T5_BIDIRECTIONAL, !dec);
        pe_describe_int(d, PE_DF_NUM_BUCKETS, PE_TP_INT(p, PE_TP_NUM_BUCKETS));
        pe_describe_int(d, PE_DF_MAX_DISTANCE, PE_TP_INT(p, PE_TP_MAX_DISTANCE));
        break;
    }
    case POSENC_ENC_SHAW:
        pe_describe_int(d, PE_DF_MAX_RELATIVE_POSITION, PE_TP_INT(p, PE_TP_MAX_REL));
        pe_describe_str(d, PE_DF_VARIANT, p->shaw_bert ? "bert" : "shaw");
        pe_describe_str(d, PE_DF_INDEX_FORMULA, p->shaw_bert ? "clip(query - key, -k, k) + k"
                                                             : "clip(key - query, -k, k) + k");
        break;
    case POSENC_ENC_SINUSOIDAL:
        pe_describe_str(d, PE_DF_VARIANT, posenc_sinusoidal_variant_name(p->sin_variant));
        pe_describe_int(d, PE_DF_D_MODEL, PE_TP_INT(p, PE_TP_D_MODEL));
        if (p->sin_variant == POSENC_SIN_FAIRSEQ)
            pe_describe_int(d, PE_DF_PADDING_IDX, PE_TP_INT(p, PE_TP_PADDING_IDX));
        break;
    default:
        break;
    }
}
