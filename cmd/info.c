/* cmd/info.c: posenc info: what a config.json implies about position encoding, as text or JSON. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fileno, open_memstream under plain -std=c11 */
#endif
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common.h"
#include "opts.h"
#include "gguf_rope.h"
#include "posenc/llamacpp.h"
#include "posenc/vllm.h"

/* Text and JSON are written to a memory stream and copied to stdout only when the whole report
 * succeeded, so an error leaves no partial report on stdout. */
static FILE *g_out;

struct info_opts {
    const char *config;
    const char *layer_type;
    int64_t seq_len;
    posenc_precision prec;
    int json;
    const char *family;
    int models;
    int runtimes;
    int64_t max_model_len;
    const char *gguf;
};

/* ---- JSON helpers ---- */

/* Shortest of %.15g / %.16g / %.17g that reads back as v (so 0.707 prints as 0.707). */
static const char *fmt_double(double v, char *buf, size_t cap)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

/* fmt NULL: the shortest round-trip form. */
static cJSON *num_raw(double v, const char *fmt)
{
    char buf[64];
    if (!isfinite(v))
        return cJSON_CreateNull();
    if (fmt)
        snprintf(buf, sizeof buf, fmt, v);
    else
        fmt_double(v, buf, sizeof buf);
    return cJSON_CreateRaw(buf);
}

static void add_num(cJSON *o, const char *key, double v)
{
    cJSON_AddItemToObject(o, key, num_raw(v, NULL));
}

static void add_int(cJSON *o, const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    cJSON_AddItemToObject(o, key, cJSON_CreateRaw(buf));
}

static cJSON *num_array(const double *v, int n, const char *fmt)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, num_raw(v[i], fmt));
    return a;
}

/* ---- one RoPE parameter set ---- */

struct rope_report {
    posenc_rope_config cfg;
    posenc_rope_params par;
    posenc_vllm_info vi;
    double inv[POSENC_MAX_FREQ];
    double att;
};

static int compute_rope(const struct info_opts *o, const posenc_model *m, const char *lt,
                        struct rope_report *r)
{
    posenc_error err = { 0 };
    if (posenc_model_rope(m, lt, &r->cfg, &err) != POSENC_OK)
        return cmd_rope_fail("info", m, &err);
    if (posenc_rope_params_for(&r->cfg, o->prec, posenc_model_family(m), o->seq_len,
                               o->max_model_len, &r->par, &r->vi, &err) != POSENC_OK) {
        cmd_msg("info", "'%s': %s", o->config, err.msg);
        return CMD_EXIT_ERROR;
    }
    int n = r->par.n_freq;
    if (n < 0 || n > POSENC_MAX_FREQ)
        n = 0;
    r->par.n_freq = n;
    if (o->prec == POSENC_PREC_GGML) {
        int rc = cmd_ggml_params("info", o->config, m, lt, o->seq_len, &r->par);
        if (rc != CMD_EXIT_OK)
            return rc;
        const int64_t one[3] = { 1, 1, 1 };
        posenc_ggml_rope_angles(&r->par.ggml, one, r->inv);
        r->att = posenc_ggml_rope_mscale(&r->par.ggml);
        return 0;
    }
    for (int i = 0; i < n; i++)
        r->inv[i] = o->prec != POSENC_PREC_EXACT ? (double)r->par.inv_freq_f32[i]
                                                 : r->par.inv_hi[i] + r->par.inv_lo[i];
    r->att = o->prec != POSENC_PREC_EXACT ? (double)r->par.attention_scaling_f32
                                          : r->par.attention_scaling;
    return 0;
}

static const char *inv_fmt(const struct info_opts *o)
{
    return o->prec != POSENC_PREC_EXACT ? "%.9g" : "%.17g";
}

static cJSON *rope_json(const struct info_opts *o, const struct rope_report *r)
{
    const posenc_rope_config *c = &r->cfg;
    const posenc_rope_params *p = &r->par;
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "rope_type", posenc_rope_type_name(c->type));
    add_num(j, "theta", c->theta);
    cJSON_AddStringToObject(j, "theta_source", c->theta_source);
    if (p->theta_used != c->theta)
        add_num(j, "theta_used", p->theta_used);
    add_int(j, "head_dim", c->head_dim);
    add_int(j, "rotary_dim", c->rotary_dim);
    add_int(j, "exponent_dim", c->exponent_dim);
    add_num(j, "partial_rotary_factor", c->partial_rotary_factor);
    cJSON_AddStringToObject(j, "style", posenc_style_name(c->style));
    cJSON_AddStringToObject(j, "pairing", posenc_pairing_name(c->pairing));
    add_int(j, "max_position_embeddings", c->max_position_embeddings);
    add_int(j, "original_max_position_embeddings", c->original_max_position_embeddings);
    if (c->type != POSENC_ROPE_DEFAULT)
        add_num(j, "factor", c->factor);
    if (c->type == POSENC_ROPE_LLAMA3) {
        add_num(j, "low_freq_factor", c->low_freq_factor);
        add_num(j, "high_freq_factor", c->high_freq_factor);
    }
    if (c->type == POSENC_ROPE_YARN) {
        add_num(j, "beta_fast", c->beta_fast);
        add_num(j, "beta_slow", c->beta_slow);
        cJSON_AddBoolToObject(j, "truncate", c->truncate);
        add_num(j, "mscale", c->mscale);
        add_num(j, "mscale_all_dim", c->mscale_all_dim);
    }
    if (c->has_attention_factor)
        add_num(j, "attention_factor", c->attention_factor);
    if (c->type == POSENC_ROPE_LONGROPE) {
        cJSON_AddItemToObject(j, "short_factor", num_array(c->short_factor, c->n_short_factor, NULL));
        cJSON_AddItemToObject(j, "long_factor", num_array(c->long_factor, c->n_long_factor, NULL));
        cJSON_AddBoolToObject(j, "long_factor_used", p->long_factors);
    }
    if (c->n_mrope_section) {
        double s[4];
        for (int i = 0; i < c->n_mrope_section && i < 4; i++)
            s[i] = c->mrope_section[i];
        cJSON_AddItemToObject(j, "mrope_section", num_array(s, c->n_mrope_section, NULL));
        cJSON_AddBoolToObject(j, "mrope_interleaved", c->mrope_interleaved);
    }
    add_int(j, "seq_len", o->seq_len);
    cJSON_AddStringToObject(j, "precision", posenc_precision_name(o->prec));
    add_int(j, "n_freq", p->n_freq);
    cJSON_AddItemToObject(j, "inv_freq", num_array(r->inv, p->n_freq, inv_fmt(o)));
    cJSON_AddItemToObject(j, "attention_scaling", num_raw(r->att, inv_fmt(o)));
    if (o->prec == POSENC_PREC_GGML) {
        pe_strbuf b = { 0 };
        cmd_ggml_json(&b, p);
        char *t = pe_strbuf_finish(&b);
        cJSON_AddItemToObject(j, "ggml", t ? cJSON_CreateRaw(t) : cJSON_CreateNull());
        free(t);
    }
    add_num(j, "softmax_scale", p->softmax_scale);
    if (o->prec == POSENC_PREC_VLLM) {
        const posenc_vllm_info *v = &r->vi;
        cJSON *vj = cJSON_AddObjectToObject(j, "vllm");
        cJSON_AddStringToObject(vj, "class", v->cls);
        cJSON_AddStringToObject(vj, "source", v->source);
        add_int(vj, "max_model_len", v->max_model_len);
        add_int(vj, "cache_len", v->cache_len);
        add_int(vj, "cache_rows", v->cache_rows);
        add_int(vj, "cache_offset", v->cache_offset);
        add_num(vj, "base", v->base);
        add_num(vj, "mscale", v->mscale);
        cJSON_AddBoolToObject(vj, "long_factors", v->long_factors);
        cJSON_AddBoolToObject(vj, "truncate", v->truncate);
        if (v->note[0])
            cJSON_AddStringToObject(vj, "note", v->note);
    }
    return j;
}

static void print_list(const double *v, int n, const char *fmt, const char *indent)
{
    for (int i = 0; i < n; i++) {
        if (i % 6 == 0)
            fprintf(g_out, "%s%s", i ? "\n" : "", i ? indent : "");
        else
            fputc(' ', g_out);
        fprintf(g_out, fmt, v[i]);
    }
    fputc('\n', g_out);
}

static void rope_text(const struct info_opts *o, const struct rope_report *r, const char *ind)
{
    const posenc_rope_config *c = &r->cfg;
    const posenc_rope_params *p = &r->par;
    char pad[64], nb[64];
#define D(v) fmt_double((v), nb, sizeof nb)
    snprintf(pad, sizeof pad, "%s%-20s", ind, "");
#define F(name) fprintf(g_out, "%s%-20s", ind, name)
    F("rope_type"); fprintf(g_out, "%s\n", posenc_rope_type_name(c->type));
    F("theta"); fprintf(g_out, "%s (%s)\n", D(c->theta), c->theta_source);
    if (p->theta_used != c->theta) {
        F("theta_used"); fprintf(g_out, "%s (at seq_len %" PRId64 ")\n", D(p->theta_used), o->seq_len);
    }
    F("head_dim"); fprintf(g_out, "%d\n", c->head_dim);
    F("rotary_dim"); fprintf(g_out, "%d (partial_rotary_factor %g)\n", c->rotary_dim,
                            c->partial_rotary_factor);
    if (c->exponent_dim != c->rotary_dim) {
        F("exponent_dim"); fprintf(g_out, "%d\n", c->exponent_dim);
    }
    F("style"); fprintf(g_out, "%s\n", posenc_style_name(c->style));
    F("pairing"); fprintf(g_out, "%s\n", posenc_pairing_name(c->pairing));
    F("max_positions"); fprintf(g_out, "%" PRId64 "\n", c->max_position_embeddings);
    F("original_max_pos"); fprintf(g_out, "%" PRId64 "\n", c->original_max_position_embeddings);
    if (c->type != POSENC_ROPE_DEFAULT) {
        F("factor"); fprintf(g_out, "%s\n", D(c->factor));
    }
    if (c->type == POSENC_ROPE_LLAMA3) {
        F("low_freq_factor"); fprintf(g_out, "%s\n", D(c->low_freq_factor));
        F("high_freq_factor"); fprintf(g_out, "%s\n", D(c->high_freq_factor));
    }
    if (c->type == POSENC_ROPE_YARN) {
        F("beta_fast"); fprintf(g_out, "%s\n", D(c->beta_fast));
        F("beta_slow"); fprintf(g_out, "%s\n", D(c->beta_slow));
        F("truncate"); fprintf(g_out, "%s\n", c->truncate ? "true" : "false");
        F("mscale"); fprintf(g_out, "%s\n", D(c->mscale));
        F("mscale_all_dim"); fprintf(g_out, "%s\n", D(c->mscale_all_dim));
    }
    if (c->has_attention_factor) {
        F("attention_factor"); fprintf(g_out, "%s\n", D(c->attention_factor));
    }
    if (c->type == POSENC_ROPE_LONGROPE) {
        F("short_factor"); print_list(c->short_factor, c->n_short_factor, "%.9g", pad);
        F("long_factor"); print_list(c->long_factor, c->n_long_factor, "%.9g", pad);
        F("factors used"); fprintf(g_out, "%s\n", p->long_factors ? "long" : "short");
    }
    if (c->n_mrope_section == 3) {
        F("mrope_section"); fprintf(g_out, "[%d, %d, %d]%s\n", c->mrope_section[0], c->mrope_section[1],
                                   c->mrope_section[2], c->mrope_interleaved ? " interleaved" : "");
    }
    F("attention_scaling"); fprintf(g_out, inv_fmt(o), r->att); fputc('\n', g_out);
    if (o->prec == POSENC_PREC_VLLM) {
        const posenc_vllm_info *v = &r->vi;
        F("vllm_class"); fprintf(g_out, "%s (%s)\n", v->cls, v->source);
        F("max_model_len"); fprintf(g_out, "%" PRId64 "\n", v->max_model_len);
        F("vllm_cache"); fprintf(g_out, "%" PRId64 " rows for positions 0..%" PRId64 "\n",
                                 v->cache_rows, v->cache_len - 1);
        F("vllm_base"); fprintf(g_out, "%s\n", D(v->base));
        F("vllm_mscale"); fprintf(g_out, "%s\n", D(v->mscale));
        if (v->note[0]) {
            F("vllm_note"); fprintf(g_out, "%s\n", v->note);
        }
    }
    if (o->prec == POSENC_PREC_GGML) {
        const posenc_ggml_rope *g = &p->ggml;
        F("ggml_rope_ext"); fprintf(g_out, "mode %s, n_dims %d, n_ctx_orig %d, freq_base %.9g, "
                                    "freq_scale %.9g, ext_factor %.9g, attn_factor %.9g, "
                                    "beta_fast %.9g, beta_slow %.9g, %d freq_factors",
                                    posenc_ggml_mode_name(g->mode), g->n_dims, g->n_ctx_orig,
                                    (double)g->freq_base, (double)g->freq_scale,
                                    (double)g->ext_factor, (double)g->attn_factor,
                                    (double)g->beta_fast, (double)g->beta_slow, g->n_freq_factors);
        if (g->mode == POSENC_GGML_ROPE_MROPE || g->mode == POSENC_GGML_ROPE_IMROPE)
            fprintf(g_out, ", sections [%d, %d, %d, %d]", g->sections[0], g->sections[1],
                    g->sections[2], g->sections[3]);
        fputc('\n', g_out);
        F("ggml_note"); fprintf(g_out, "%s\n", cmd_ggml_note(p));
    }
    F("softmax_scale"); fprintf(g_out, "%s\n", D(p->softmax_scale));
    F("seq_len"); fprintf(g_out, "%" PRId64 "%s\n", o->seq_len, o->seq_len ? "" : " (load time)");
    F("inv_freq"); fprintf(g_out, "(%d, %s) ", p->n_freq, posenc_precision_name(o->prec));
    if (p->n_freq > 0)
        print_list(r->inv, p->n_freq, inv_fmt(o), pad);
    else
        fputc('\n', g_out);
#undef F
#undef D
}

/* ---- non-RoPE encodings ---- */

static int bias_report(const struct info_opts *o, const posenc_model *m, cJSON *j)
{
    const posenc_bias_config *b = posenc_model_bias(m);
    posenc_encoding e = posenc_model_encoding(m);
    posenc_error err = { 0 };
    if (e == POSENC_ENC_ALIBI) {
        double *s = malloc((size_t)(b->heads > 0 ? b->heads : 1) * sizeof *s);
        if (!s) {
            cmd_msg("info", "out of memory");
            return CMD_EXIT_ERROR;
        }
        if (posenc_alibi_slopes(b->alibi_kind, b->heads, b->alibi_bias_max, s, &err) !=
            POSENC_OK) {
            free(s);
            return cmd_fail("info", &err);
        }
        if (j) {
            cJSON_AddStringToObject(j, "alibi_kind", posenc_alibi_kind_name(b->alibi_kind));
            add_int(j, "heads", b->heads);
            add_num(j, "alibi_bias_max", b->alibi_bias_max);
            cJSON_AddItemToObject(j, "slopes", num_array(s, b->heads, NULL));
        } else {
            fprintf(g_out, "%-20s%s\n", "alibi_kind", posenc_alibi_kind_name(b->alibi_kind));
            fprintf(g_out, "%-20s%d\n", "heads", b->heads);
            fprintf(g_out, "%-20s%g\n", "alibi_bias_max", b->alibi_bias_max);
            fprintf(g_out, "%-20s", "slopes");
            print_list(s, b->heads, "%.9g", "                    ");
        }
        free(s);
    } else if (e == POSENC_ENC_T5) {
        if (j) {
            add_int(j, "num_buckets", b->num_buckets);
            add_int(j, "max_distance", b->max_distance);
            add_int(j, "heads", b->heads);
            cJSON_AddBoolToObject(j, "is_decoder", b->is_decoder);
        } else {
            fprintf(g_out, "%-20s%d\n%-20s%d\n%-20s%d\n%-20s%s\n", "num_buckets", b->num_buckets,
                   "max_distance", b->max_distance, "heads", b->heads, "is_decoder",
                   b->is_decoder ? "true" : "false");
        }
    } else if (e == POSENC_ENC_LEARNED) {
        if (j) {
            cJSON_AddStringToObject(j, "tensor", b->learned_tensor);
        } else {
            fprintf(g_out, "%-20s%s\n", "tensor", b->learned_tensor);
        }
    } else if (e == POSENC_ENC_SHAW) {
        if (j)
            add_int(j, "max_relative_position", b->max_relative_position);
        else
            fprintf(g_out, "%-20s%d\n", "max_relative_pos", b->max_relative_position);
    }
    if (j) {
        if (e != POSENC_ENC_T5)
            add_int(j, "max_positions", b->max_positions);
        add_int(j, "d_model", b->d_model);
        add_int(j, "head_dim", b->head_dim);
        if (e != POSENC_ENC_ALIBI && e != POSENC_ENC_T5)
            add_int(j, "heads", b->heads);
        if (b->padding_idx >= 0)
            add_int(j, "padding_idx", b->padding_idx);
    } else {
        if (e != POSENC_ENC_T5)
            fprintf(g_out, "%-20s%" PRId64 "\n", "max_positions", b->max_positions);
        fprintf(g_out, "%-20s%d\n%-20s%d\n", "d_model", b->d_model, "head_dim", b->head_dim);
        if (e != POSENC_ENC_ALIBI && e != POSENC_ENC_T5)
            fprintf(g_out, "%-20s%d\n", "heads", b->heads);
        if (b->padding_idx >= 0)
            fprintf(g_out, "%-20s%d\n", "padding_idx", b->padding_idx);
    }
    (void)o;
    return 0;
}

/* ---- main ---- */

/* Layer types with their encodings and the NoPE layers (RoPE models). */
static int layers_report(const posenc_model *m, cJSON *j)
{
    const int64_t *nope;
    size_t nn = posenc_model_nope_layers(m, &nope);
    size_t nt = posenc_model_layer_name_count(m);
    int64_t nl = posenc_model_layer_count(m);
    if (posenc_model_encoding(m) != POSENC_ENC_ROPE)
        return 0;
    if (j) {
        if (nl > 0)
            cJSON_AddNumberToObject(j, "num_layers", (double)nl);
        cJSON *a = cJSON_AddArrayToObject(j, "nope_layers");
        for (size_t i = 0; a && i < nn; i++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber((double)nope[i]));
        if (nt && posenc_model_layer_type_count(m) == 0) {
            cJSON *lt = cJSON_AddObjectToObject(j, "layers");
            for (size_t i = 0; lt && i < nt; i++) {
                cJSON *o = cJSON_AddObjectToObject(lt, posenc_model_layer_name(m, i));
                if (o)
                    cJSON_AddStringToObject(o, "encoding", posenc_encoding_name(
                                                posenc_model_layer_name_encoding(m, i)));
            }
        }
        return a ? 0 : -1;
    }
    if (nt) {
        fprintf(g_out, "%-20s", "layer_types");
        for (size_t i = 0; i < nt; i++)
            fprintf(g_out, "%s%s (%s)", i ? ", " : "", posenc_model_layer_name(m, i),
                    posenc_encoding_name(posenc_model_layer_name_encoding(m, i)));
        fputc('\n', g_out);
    }
    if (nn) {
        fprintf(g_out, "%-20s", "nope_layers");
        for (size_t i = 0; i < nn; i++)
            fprintf(g_out, "%s%lld", i ? "," : "", (long long)nope[i]);
        fprintf(g_out, " (%zu of %lld layers carry no RoPE)\n", nn, (long long)nl);
    }
    return 0;
}

/* posenc info --models: the registry as a table. */
static int models_report(const struct info_opts *o)
{
    size_t n = posenc_family_count();
    cJSON *arr = o->json ? cJSON_CreateArray() : NULL;
    if (o->json && !arr)
        return -1;
    if (!o->json)
        fprintf(g_out, "%-24s %-10s %-17s %s\n", "model_type", "encoding", "pairing",
                "notes [source]");
    for (size_t i = 0; i < n; i++) {
        posenc_family_info fi;
        if (posenc_family_get(i, &fi, NULL) != POSENC_OK)
            break;
        if (arr) {
            cJSON *r = cJSON_CreateObject();
            if (!r) {
                cJSON_Delete(arr);
                return -1;
            }
            cJSON_AddStringToObject(r, "model_type", fi.name);
            cJSON_AddStringToObject(r, "encoding", fi.encoding);
            cJSON_AddStringToObject(r, "pairing", fi.pairing);
            if (*fi.alias_of)
                cJSON_AddStringToObject(r, "alias_of", fi.alias_of);
            if (*fi.text)
                cJSON_AddStringToObject(r, "text_model_type", fi.text);
            cJSON_AddStringToObject(r, "notes", fi.notes);
            cJSON_AddStringToObject(r, "source", fi.source);
            cJSON_AddItemToArray(arr, r);
        } else {
            char enc[40];
            snprintf(enc, sizeof enc, "%s%s%s", fi.encoding, *fi.text ? ":" : "", fi.text);
            fprintf(g_out, "%-24s %-10s %-17s %s%s%s [%s]\n", fi.name, enc,
                    *fi.pairing ? fi.pairing : "-", *fi.alias_of ? "as " : "", fi.alias_of,
                    *fi.alias_of ? "" : fi.notes, fi.source);
        }
    }
    if (arr) {
        char *s = cJSON_Print(arr);
        cJSON_Delete(arr);
        if (!s)
            return -1;
        fprintf(g_out, "%s\n", s);
        cJSON_free(s);
    }
    return 0;
}

static int report(const struct info_opts *o, const posenc_model *m)
{
    posenc_encoding e = posenc_model_encoding(m);
    size_t nlt = posenc_model_layer_type_count(m);
    cJSON *j = NULL;
    int rc = 0;
    if (o->json) {
        j = cJSON_CreateObject();
        if (!j)
            goto nomem;
        cJSON_AddStringToObject(j, "config", o->config);
        cJSON_AddStringToObject(j, "encoding", posenc_encoding_name(e));
        cJSON_AddStringToObject(j, "model_type", posenc_model_type(m));
        cJSON_AddStringToObject(j, "family", posenc_model_family(m));
        if (posenc_model_warning(m))
            cJSON_AddStringToObject(j, "warning", posenc_model_warning(m));
    } else {
        fprintf(g_out, "%-20s%s\n%-20s%s\n%-20s%s%s\n%-20s%s\n", "config", o->config,
                "model_type", posenc_model_type(m), "family", posenc_model_family(m),
                posenc_model_is_generic(m) ? " (model_type not known: generic RoPE rules)" : "",
                "encoding", posenc_encoding_name(e));
    }
    if (layers_report(m, j) != 0)
        goto nomem;
    if (e != POSENC_ENC_ROPE) {
        if (o->layer_type) {
            cmd_msg("info", "'%s': model_type '%s' uses %s: --layer-type does not apply",
                       o->config, posenc_model_type(m), posenc_encoding_name(e));
            cJSON_Delete(j);
            return CMD_EXIT_ERROR;
        }
        if ((rc = bias_report(o, m, j)) != 0) {
            cJSON_Delete(j);
            return rc;
        }
    } else if (nlt == 0 || o->layer_type) {
        struct rope_report *r = malloc(sizeof *r);
        if (!r)
            goto nomem;
        if ((rc = compute_rope(o, m, o->layer_type, r)) != 0) {
            free(r);
            cJSON_Delete(j);
            return rc;
        }
        if (j) {
            if (o->layer_type)
                cJSON_AddStringToObject(j, "layer_type", o->layer_type);
            cJSON *rj = rope_json(o, r);
            if (!rj) {
                free(r);
                goto nomem;
            }
            /* flatten the per-set fields into the top-level object */
            while (rj->child) {
                cJSON *it = cJSON_DetachItemViaPointer(rj, rj->child);
                cJSON_AddItemToObject(j, it->string, it);
                /* AddItemToObject copies the key; the detached item keeps its own */
            }
            cJSON_Delete(rj);
        } else {
            if (o->layer_type)
                fprintf(g_out, "%-20s%s\n", "layer_type", o->layer_type);
            rope_text(o, r, "");
        }
        free(r);
    } else {
        struct rope_report *r = malloc(sizeof *r);
        if (!r)
            goto nomem;
        cJSON *layers = NULL, *names = NULL;
        if (j) {
            names = cJSON_AddArrayToObject(j, "layer_types");
            layers = cJSON_AddObjectToObject(j, "layers");
        }
        for (size_t i = 0; i < nlt; i++) {
            const char *name = posenc_model_layer_type_name(m, i);
            if ((rc = compute_rope(o, m, name, r)) != 0) {
                free(r);
                cJSON_Delete(j);
                return rc;
            }
            if (j) {
                cJSON_AddItemToArray(names, cJSON_CreateString(name));
                cJSON_AddItemToObject(layers, name, rope_json(o, r));
            } else {
                fprintf(g_out, "layer_type %s:\n", name);
                rope_text(o, r, "  ");
            }
        }
        free(r);
    }
    size_t nn = posenc_model_note_count(m);
    if (j) {
        cJSON *notes = cJSON_AddArrayToObject(j, "notes");
        for (size_t i = 0; i < nn; i++)
            cJSON_AddItemToArray(notes, cJSON_CreateString(posenc_model_note(m, i)));
        char *s = cJSON_Print(j);
        cJSON_Delete(j);
        if (!s)
            goto nomem;
        fprintf(g_out, "%s\n", s);
        cJSON_free(s);
    } else if (nn) {
        fprintf(g_out, "notes:\n");
        for (size_t i = 0; i < nn; i++)
            fprintf(g_out, "  - %s\n", posenc_model_note(m, i));
    }
    return 0;
nomem:
    cJSON_Delete(j);
    cmd_msg("info", "out of memory");
    return CMD_EXIT_ERROR;
}

/* ---- --runtimes: the table of differences in definition, and each precision's drift ---- */

static const int64_t DRIFT_LEN[] = { 4096, 131072, 1048576 };
#define N_DRIFT (sizeof DRIFT_LEN / sizeof DRIFT_LEN[0])

static int runtimes_report(const struct info_opts *o, const posenc_model *m)
{
    posenc_error err = { 0 };
    cJSON *j = o->json ? cJSON_CreateObject() : NULL, *rows = NULL;
    if (o->json && !(j && (rows = cJSON_AddArrayToObject(j, "runtimes"))))
        goto nomem;
    for (size_t i = 0; i < posenc_runtime_diff_count(); i++) {
        posenc_runtime_diff d;
        if (posenc_runtime_diff_get(i, &d, &err) != POSENC_OK)
            break;
        if (j) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "topic", d.topic);
            cJSON_AddStringToObject(r, "transformers", d.transformers);
            cJSON_AddStringToObject(r, "vllm", d.vllm);
            cJSON_AddStringToObject(r, "llamacpp", d.llamacpp);
            cJSON_AddItemToArray(rows, r);
        } else {
            fprintf(g_out, "%s\n  %-13s%s\n  %-13s%s\n  %-13s%s\n", d.topic, "transformers",
                    d.transformers, "vllm", d.vllm, "llama.cpp", d.llamacpp);
        }
    }
    if (m) {
        posenc_rope_config cfg;
        if (posenc_model_rope(m, o->layer_type, &cfg, &err) != POSENC_OK) {
            cJSON_Delete(j);
            return cmd_rope_fail("info", m, &err);
        }
        static const posenc_precision profs[] = { POSENC_PREC_HF, POSENC_PREC_VLLM };
        cJSON *dj = j ? cJSON_AddObjectToObject(j, "drift") : NULL;
        if (j) {
            cJSON_AddStringToObject(dj, "config", o->config);
            cJSON *pl = cJSON_AddArrayToObject(dj, "positions");
            for (size_t k = 0; k < N_DRIFT; k++)
                cJSON_AddItemToArray(pl, cJSON_CreateNumber((double)(DRIFT_LEN[k] - 1)));
        } else {
            fprintf(g_out, "drift from exact math (max |cos, sin error|) at positions");
            for (size_t k = 0; k < N_DRIFT; k++)
                fprintf(g_out, " %" PRId64, DRIFT_LEN[k] - 1);
            fputc('\n', g_out);
        }
        for (size_t p = 0; p < sizeof profs / sizeof profs[0]; p++) {
            cJSON *arr = j ? cJSON_AddArrayToObject(dj, posenc_precision_name(profs[p])) : NULL;
            if (!j)
                fprintf(g_out, "  %-13s", posenc_precision_name(profs[p]));
            for (size_t k = 0; k < N_DRIFT; k++) {
                double dr = 0.0;
                posenc_status st = posenc_rope_drift(&cfg, posenc_model_family(m), profs[p],
                                                     o->max_model_len, DRIFT_LEN[k] - 1, &dr,
                                                     &err);
                const char *why = st == POSENC_ERANGE ? "past the cache"
                                  : st == POSENC_EUNSUPPORTED ? "not reproduced"
                                                              : "error";
                if (j)
                    cJSON_AddItemToArray(arr, st == POSENC_OK ? cJSON_CreateNumber(dr)
                                                              : cJSON_CreateString(why));
                else if (st == POSENC_OK)
                    fprintf(g_out, " %-10.3g", dr);
                else
                    fprintf(g_out, " %-10s", why);
            }
            if (!j)
                fputc('\n', g_out);
        }
        /* llama.cpp: the ggml precision, from the converter's keys for the config */
        cJSON *ga = j ? cJSON_AddArrayToObject(dj, "ggml") : NULL;
        if (!j)
            fprintf(g_out, "  %-13s", "ggml");
        char gwhy[POSENC_ERRMSG_MAX] = "";
        for (size_t k = 0; k < N_DRIFT; k++) {
            double dr = 0.0;
            posenc_error ge = { 0 };
            posenc_status st = posenc_ggml_rope_drift(m, o->layer_type, DRIFT_LEN[k] - 1, &dr, &ge);
            if (st != POSENC_OK && !gwhy[0])
                snprintf(gwhy, sizeof gwhy, "%s", ge.msg);
            if (j)
                cJSON_AddItemToArray(ga, st == POSENC_OK ? cJSON_CreateNumber(dr)
                                                         : cJSON_CreateString("not reproduced"));
            else if (st == POSENC_OK)
                fprintf(g_out, " %-10.3g", dr);
            else
                fprintf(g_out, " %-10s", "not reproduced");
        }
        if (j) {
            if (gwhy[0])
                cJSON_AddStringToObject(dj, "ggml_note", gwhy);
        } else {
            fputc('\n', g_out);
            if (gwhy[0])
                fprintf(g_out, "  %-13s%s\n", "", gwhy);
        }
    }
    if (j) {
        char *txt = cJSON_Print(j);
        cJSON_Delete(j);
        if (!txt)
            goto nomem;
        fprintf(g_out, "%s\n", txt);
        cJSON_free(txt);
    }
    return 0;
nomem:
    cJSON_Delete(j);
    cmd_msg("info", "out of memory");
    return CMD_EXIT_ERROR;
}

/* --gguf: the file's RoPE (formats/gguf_rope.c describes it) as JSON or one line per key */
static int gguf_report(const struct info_opts *o)
{
    posenc_error err = { 0 };
    posenc_gguf_rope *g = malloc(sizeof *g);
    if (!g) {
        cmd_msg("info", "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (posenc_gguf_read_rope(o->gguf, g, &err) != POSENC_OK) {
        free(g);
        return cmd_fail("info", &err);
    }
    cJSON *j = pe_gguf_rope_json(g, o->seq_len);
    free(g);
    if (!j) {
        cmd_msg("info", "out of memory");
        return CMD_EXIT_ERROR;
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "warning");
    if (cJSON_IsString(w))
        cmd_msg("info", "'%s': %s; rope mode unknown", o->gguf, w->valuestring);
    if (!o->json)
        fprintf(g_out, "gguf: %s\n", o->gguf);
    for (const cJSON *e = o->json ? NULL : j->child; e; e = e->next) {
        int sub = cJSON_IsObject(e);
        for (const cJSON *k = sub ? e->child : e; k; k = sub ? k->next : NULL) {
            char *t = cJSON_IsString(k) ? NULL : cJSON_PrintUnformatted(k);
            fprintf(g_out, "%s%s%s: %s\n", sub ? e->string : "", sub ? "." : "", k->string,
                    cJSON_IsString(k) ? k->valuestring : t ? t : "?");
            free(t);
        }
    }
    char *t = o->json ? cJSON_PrintUnformatted(j) : NULL;
    if (t)
        fprintf(g_out, "%s\n", t);
    free(t);
    cJSON_Delete(j);
    return 0;
}

enum { OPT_MODELS = 256, OPT_RUNTIMES };

static const struct cmd_opt info_opts[] = {
    CMD_OPT_GROUP("options:"),
    { .id = CMD_O_CONFIG, .help = "config.json to read (required)" },
    { .id = CMD_O_LAYER_TYPE, .short_opt = 'l', .arg = "T",
      .help = "report only layer type T (Gemma 3/4, MiMo full/sliding)" },
    { .id = CMD_O_SEQ_LEN, .short_opt = 'n',
      .help = "parameters at sequence length N (dynamic, longrope);\n"
              "default: what transformers computes at load time" },
    { .id = CMD_O_PRECISION, .short_opt = 'p',
      .help = "inv_freq values: hf (transformers' float32, default),\n"
              "exact (double), vllm (vLLM's float32, with its class,\n"
              "cache length, base and mscale) or ggml (llama.cpp's\n"
              "ggml_rope_ext arguments for the GGUF its converter\n"
              "writes, and ggml's float32 angles at position 1)" },
    { .id = CMD_O_MAX_MODEL_LEN },
    { OPT_RUNTIMES, "runtimes", 0, NULL, CMD_T_FLAG, 0, 0,
      "where transformers, vLLM and llama.cpp differ in\n"
      "definition; with --config, each precision's drift from\n"
      "exact math at 4096, 131072 and 1048576 positions", NULL },
    { .id = CMD_O_FAMILY, .help = "resolve the config as this registry row, whatever its\n"
                                  "model_type says" },
    { .id = CMD_O_GGUF, .help = "a llama.cpp GGUF file: its RoPE keys and tensors and what\n"
                                "llama.cpp derives from them (rope mode, freq_scale,\n"
                                "ext_factor, attn_factor); --seq-len is then the context" },
    { OPT_MODELS, "models", 0, NULL, CMD_T_FLAG, 0, 0,
      "list the model-family registry (model_type, encoding,\n"
      "pairing, notes, source file)", NULL },
    { .id = CMD_O_JSON, .short_opt = 'j', .help = "print one JSON object instead of text" },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_info_spec = {
    "info",
    "usage: posenc info --config FILE [--layer-type T] [--seq-len N]\n"
    "                   [--precision exact|hf|vllm|ggml] [--max-model-len N]\n"
    "                   [--family NAME] [--json]\n"
    "       posenc info --gguf FILE [--seq-len N] [--json]\n"
    "       posenc info --models [--json]\n"
    "       posenc info --runtimes [--config FILE [--layer-type T]] [--json]\n"
    "\n"
    "Resolve a Hugging Face config.json the way transformers does and report the position\n"
    "encoding: RoPE type, theta and where it came from, head and rotary dims, pairing style,\n"
    "scaling parameters, inv_freq and attention scaling (or the ALiBi, T5 or learned-table\n"
    "parameters), plus notes on defaults posenc filled in.\n"
    "\n",
    26, info_opts
};

int cmd_info(int argc, char **argv)
{
    struct info_opts o = { .prec = POSENC_PREC_HF };
    int c, prec_given = 0;
    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_info_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_CONFIG: o.config = p.arg; break;
        case CMD_O_LAYER_TYPE: o.layer_type = p.arg; break;
        case CMD_O_FAMILY: o.family = p.arg; break;
        case OPT_MODELS: o.models = 1; break;
        case CMD_O_GGUF: o.gguf = p.arg; break;
        case OPT_RUNTIMES: o.runtimes = 1; break;
        case CMD_O_MAX_MODEL_LEN: o.max_model_len = p.i64; break;
        case CMD_O_SEQ_LEN: o.seq_len = p.i64; break;
        case CMD_O_PRECISION: o.prec = p.precision; prec_given = 1; break;
        case CMD_O_JSON: o.json = 1; break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (cmd_opts_max_args(&p, 0))
        return CMD_EXIT_USAGE;
    if (o.models && (o.config || o.family || o.layer_type || o.seq_len))
        return cmd_usage_error("info", "--models lists the registry: it takes no config "
                                          "options (only --json)");
    if (o.runtimes && (o.models || o.seq_len || prec_given))
        return cmd_usage_error("info", "--runtimes takes only --config, --layer-type, "
                                          "--family, --max-model-len and --json");
    if (o.max_model_len && o.prec != POSENC_PREC_VLLM && !o.runtimes)
        return cmd_usage_error("info", "--max-model-len applies only to --precision vllm "
                                          "and --runtimes");
    if (o.gguf && (o.config || o.models || o.runtimes || o.family || o.layer_type || prec_given ||
                   o.max_model_len))
        return cmd_usage_error("info", "--gguf FILE reads a GGUF file: it takes only "
                                          "--seq-len and --json");
    if (!o.config && !o.models && !o.runtimes && !o.gguf)
        return cmd_usage_error("info", "--config FILE is required");
    if (o.runtimes && !o.config && (o.layer_type || o.family))
        return cmd_usage_error("info", "--layer-type and --family need --config");
    posenc_model *m = NULL;
    if (!o.models && o.config) {
        int lrc = cmd_load_config("info", o.config, o.family, &m);
        if (lrc)
            return lrc;
    }
    char *text = NULL;
    size_t tlen = 0;
    g_out = open_memstream(&text, &tlen);
    if (!g_out) {
        posenc_model_free(m);
        cmd_msg("info", "out of memory");
        return CMD_EXIT_ERROR;
    }
    int rc = o.gguf       ? gguf_report(&o)
             : o.models   ? (models_report(&o) ? (cmd_msg("info", "out of memory"),
                                                  CMD_EXIT_ERROR) : 0)
             : o.runtimes ? runtimes_report(&o, m)
                          : report(&o, m);
    posenc_model_free(m);
    if (fclose(g_out) != 0 && rc == 0) {
        cmd_msg("info", "out of memory");
        rc = CMD_EXIT_ERROR;
    }
    g_out = NULL;
    if (rc == 0 && text)
        fwrite(text, 1, tlen, stdout);
    free(text);
    return rc;
}
