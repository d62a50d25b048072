/* formats/report/describe_out.c: a description (lib/describe/describe.h) as info's text, JSON and file
 * metadata. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/report/describe_out.h"

const char *pe_describe_num_text(double v, const char *fmt, char *buf, size_t cap)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "null");
        return buf;
    }
    if (fmt) {
        snprintf(buf, cap, fmt, v);
        return buf;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

static int visible(const pe_desc *d, int f, pe_dfield parent, unsigned view)
{
    const pe_dfield_def *def = pe_describe_def((pe_dfield)f);
    return def->parent == parent && (def->views & view) && pe_describe_get(d, (pe_dfield)f);
}

/* ---- JSON text (metadata) ---- */

static void json_value(pe_strbuf *b, const pe_desc *d, int f, const char *fmt_override);

static void json_group(pe_strbuf *b, const pe_desc *d, int g)
{
    int any = 0;
    pe_strbuf_puts(b, "{");
    for (int f = 0; f < PE_DF_COUNT; f++) {
        if (!visible(d, f, (pe_dfield)g, PE_DV_META))
            continue;
        pe_strbuf_puts(b, any++ ? ", " : "");
        pe_strbuf_json_string(b, pe_describe_def((pe_dfield)f)->key);
        pe_strbuf_puts(b, ": ");
        json_value(b, d, f, NULL);
    }
    pe_strbuf_puts(b, "}");
}

static void json_value(pe_strbuf *b, const pe_desc *d, int f, const char *fmt_override)
{
    const pe_dval *v = pe_describe_get(d, (pe_dfield)f);
    const char *fmt = fmt_override ? fmt_override : v->fmt;
    char t[64];
    switch (pe_describe_def((pe_dfield)f)->kind) {
    case PE_DK_STR:
        if (v->s)
            pe_strbuf_json_string(b, v->s);
        else
            pe_strbuf_puts(b, "null");
        break;
    case PE_DK_NUM:
        pe_strbuf_puts(b, pe_describe_num_text(v->d, fmt, t, sizeof t));
        break;
    case PE_DK_INT:
        pe_strbuf_printf(b, "%" PRId64, v->i);
        break;
    case PE_DK_BOOL:
        pe_strbuf_puts(b, v->i ? "true" : "false");
        break;
    case PE_DK_NUMS:
        pe_strbuf_puts(b, "[");
        for (size_t i = 0; i < v->n; i++) {
            pe_strbuf_puts(b, i ? ", " : "");
            pe_strbuf_puts(b, pe_describe_num_text(v->v[i], fmt, t, sizeof t));
        }
        pe_strbuf_puts(b, "]");
        break;
    case PE_DK_STRS:
        pe_strbuf_puts(b, "[");
        for (size_t i = 0; i < v->n; i++) {
            pe_strbuf_puts(b, i ? ", " : "");
            pe_strbuf_json_string(b, v->sv[i]);
        }
        pe_strbuf_puts(b, "]");
        break;
    case PE_DK_GROUP:
        json_group(b, d, f);
        break;
    }
}

posenc_status pe_describe_meta_each(const pe_desc *d, pe_describe_meta_fn fn, void *ctx,
                                    posenc_error *err)
{
    if (pe_describe_oom(d))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    for (int f = 0; f < PE_DF_COUNT; f++) {
        if (!visible(d, f, PE_DF_NONE, PE_DV_META))
            continue;
        const pe_dfield_def *def = pe_describe_def((pe_dfield)f);
        const pe_dval *v = pe_describe_get(d, (pe_dfield)f);
        if ((def->kind == PE_DK_NUMS || def->kind == PE_DK_STRS) && v->n == 0)
            continue;
        pe_strbuf b = { 0 };
        json_value(&b, d, f, NULL);
        char *json = pe_strbuf_finish(&b);
        if (!json)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        posenc_status st = fn(ctx, def->key, def->kind == PE_DK_INT ? POSENC_META_I64
                                                                    : POSENC_META_AUTO,
                              json, err);
        free(json);
        if (st != POSENC_OK)
            return st;
    }
    return POSENC_OK;
}

char *pe_describe_field_json(const pe_desc *d, pe_dfield f)
{
    if (pe_describe_oom(d) || !pe_describe_get(d, f))
        return NULL;
    pe_strbuf b = { 0 };
    json_value(&b, d, (int)f, NULL);
    return pe_strbuf_finish(&b);
}

char *pe_describe_ggml_json(const posenc_rope_params *p)
{
    pe_desc *d = pe_describe_new();
    char *t = NULL;
    if (d) {
        pe_describe_ggml(d, p);
        t = pe_describe_field_json(d, PE_DF_GGML);
    }
    pe_describe_free(d);
    return t;
}

struct write_ctx {
    posenc_writer *w;
    const char *prefix;
};

static posenc_status write_one(void *ctx, const char *key, posenc_meta_type type,
                               const char *json, posenc_error *err)
{
    const struct write_ctx *c = ctx;
    char k[256];
    snprintf(k, sizeof k, "%s%s", c->prefix, key);
    return posenc_writer_meta_typed(c->w, k, type, json, err);
}

posenc_status pe_describe_meta_write(const pe_desc *d, const char *prefix, posenc_writer *w,
                                     posenc_error *err)
{
    struct write_ctx c = { w, prefix ? prefix : "" };
    return pe_describe_meta_each(d, write_one, &c, err);
}

/* ---- cJSON (info --json, verify's report) ---- */

static cJSON *cj_num(double x, const char *fmt, unsigned view)
{
    char t[64];
    if (!isfinite(x))
        return cJSON_CreateNull();
    if (view == PE_DV_REPORT)
        return cJSON_CreateNumber(x);
    return cJSON_CreateRaw(pe_describe_num_text(x, fmt, t, sizeof t));
}

static cJSON *cj_value(const pe_desc *d, int f, unsigned view)
{
    const pe_dval *v = pe_describe_get(d, (pe_dfield)f);
    const char *fmt = view == PE_DV_INFO && v->info_fmt ? v->info_fmt : v->fmt;
    cJSON *a;
    switch (pe_describe_def((pe_dfield)f)->kind) {
    case PE_DK_STR:
        return v->s ? cJSON_CreateString(v->s) : cJSON_CreateNull();
    case PE_DK_NUM:
        return cj_num(v->d, fmt, view);
    case PE_DK_INT: {
        char t[32];
        if (view == PE_DV_REPORT)
            return cJSON_CreateNumber((double)v->i);
        snprintf(t, sizeof t, "%" PRId64, v->i);
        return cJSON_CreateRaw(t);
    }
    case PE_DK_BOOL:
        return cJSON_CreateBool((int)v->i);
    case PE_DK_NUMS:
        a = cJSON_CreateArray();
        for (size_t i = 0; a && i < v->n; i++)
            cJSON_AddItemToArray(a, cj_num(v->v[i], fmt, view));
        return a;
    case PE_DK_STRS:
        a = cJSON_CreateArray();
        for (size_t i = 0; a && i < v->n; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(v->sv[i]));
        return a;
    case PE_DK_GROUP:
        a = cJSON_CreateObject();
        for (int c = 0; a && c < PE_DF_COUNT; c++)
            if (visible(d, c, (pe_dfield)f, view))
                cJSON_AddItemToObject(a, pe_describe_def((pe_dfield)c)->key, cj_value(d, c, view));
        return a;
    }
    return NULL;
}

int pe_describe_json(const pe_desc *d, unsigned view, cJSON *obj)
{
    if (!obj || pe_describe_oom(d))
        return -1;
    for (int f = 0; f < PE_DF_COUNT; f++) {
        if (!visible(d, f, PE_DF_NONE, view))
            continue;
        cJSON *it = cj_value(d, f, view);
        if (!it || !cJSON_AddItemToObject(obj, pe_describe_def((pe_dfield)f)->key, it)) {
            cJSON_Delete(it);
            return -1;
        }
    }
    return 0;
}

/* ---- info's text ---- */

/* Six numbers a line, continuation lines indented by pad. */
static void text_list(pe_strbuf *b, const double *v, size_t n, const char *fmt, const char *pad)
{
    for (size_t i = 0; i < n; i++) {
        if (i % 6 == 0)
            pe_strbuf_printf(b, "%s%s", i ? "\n" : "", i ? pad : "");
        else
            pe_strbuf_puts(b, " ");
        pe_strbuf_printf(b, fmt, v[i]);
    }
    pe_strbuf_puts(b, "\n");
}

static const pe_dval *val(const pe_desc *d, pe_dfield f)
{
    static const pe_dval none = { 0 };
    const pe_dval *v = pe_describe_get(d, f);
    return v ? v : &none;
}

/* The value of f after its label: 0 when the line is left out. The fields folded into another
 * line, and the lines shown only when they add something, are here; every other field prints
 * its value. */
static int text_value(pe_strbuf *b, const pe_desc *d, int f, const char *pad)
{
    const pe_dval *v = pe_describe_get(d, (pe_dfield)f);
    char t[64], u[64];
#define NUM(x) pe_describe_num_text((x), NULL, t, sizeof t)
    switch ((pe_dfield)f) {
    case PE_DF_FAMILY:
        pe_strbuf_printf(b, "%s%s\n", v->s ? v->s : "", v->s && strcmp(v->s, "generic") == 0
                                             ? " (model_type not known: generic RoPE rules)"
                                             : "");
        return 1;
    case PE_DF_LAYER_TYPE:
        if (!v->s)
            return 0;
        break;
    case PE_DF_LAYER_NAMES:
        for (size_t i = 0; i < v->n; i++)
            pe_strbuf_printf(b, "%s%s", i ? ", " : "", v->sv[i]);
        pe_strbuf_puts(b, "\n");
        return 1;
    case PE_DF_NOPE_LAYERS:
        if (v->n == 0)
            return 0;
        for (size_t i = 0; i < v->n; i++)
            pe_strbuf_printf(b, "%s%lld", i ? "," : "", (long long)v->v[i]);
        pe_strbuf_printf(b, " (%zu of %lld layers carry no RoPE)\n", v->n,
                         (long long)val(d, PE_DF_NUM_LAYERS)->i);
        return 1;
    case PE_DF_THETA:
        pe_strbuf_printf(b, "%s (%s)\n", NUM(v->d), val(d, PE_DF_THETA_SOURCE)->s);
        return 1;
    case PE_DF_THETA_USED:
        if (v->d == val(d, PE_DF_THETA)->d)
            return 0;
        pe_strbuf_printf(b, "%s (at seq_len %" PRId64 ")\n", NUM(v->d), val(d, PE_DF_SEQ_LEN)->i);
        return 1;
    case PE_DF_ROTARY_DIM:
        pe_strbuf_printf(b, "%" PRId64 " (partial_rotary_factor %g)\n", v->i,
                         val(d, PE_DF_PARTIAL_ROTARY_FACTOR)->d);
        return 1;
    case PE_DF_EXPONENT_DIM:
        if (v->i == val(d, PE_DF_ROTARY_DIM)->i)
            return 0;
        break;
    case PE_DF_FACTOR: {
        const char *rt = val(d, PE_DF_ROPE_TYPE)->s;
        if (rt && strcmp(rt, "default") == 0)
            return 0;
        break;
    }
    case PE_DF_LONG_FACTORS_USED:
        pe_strbuf_puts(b, v->i ? "long\n" : "short\n");
        return 1;
    case PE_DF_MROPE_SECTION:
        if (v->n != 3)
            return 0;
        pe_strbuf_printf(b, "[%lld, %lld, %lld]%s\n", (long long)v->v[0], (long long)v->v[1],
                         (long long)v->v[2], val(d, PE_DF_MROPE_INTERLEAVED)->i ? " interleaved"
                                                                                : "");
        return 1;
    case PE_DF_VLLM_CLASS:
        pe_strbuf_printf(b, "%s (%s)\n", v->s, val(d, PE_DF_VLLM_SOURCE)->s);
        return 1;
    case PE_DF_VLLM_CACHE_LEN:
        pe_strbuf_printf(b, "%" PRId64 " rows for positions 0..%" PRId64 "\n",
                         val(d, PE_DF_VLLM_CACHE_ROWS)->i, v->i - 1);
        return 1;
    case PE_DF_GGML: {
        const pe_dval *s = val(d, PE_DF_GGML_SECTIONS);
        pe_strbuf_printf(b, "mode %s, n_dims %" PRId64 ", n_ctx_orig %" PRId64 ", freq_base %.9g, "
                         "freq_scale %.9g, ext_factor %.9g, attn_factor %.9g, beta_fast %.9g, "
                         "beta_slow %.9g, %zu freq_factors",
                         val(d, PE_DF_GGML_MODE)->s, val(d, PE_DF_GGML_N_DIMS)->i,
                         val(d, PE_DF_GGML_N_CTX_ORIG)->i, val(d, PE_DF_GGML_FREQ_BASE)->d,
                         val(d, PE_DF_GGML_FREQ_SCALE)->d, val(d, PE_DF_GGML_EXT_FACTOR)->d,
                         val(d, PE_DF_GGML_ATTN_FACTOR)->d, val(d, PE_DF_GGML_BETA_FAST)->d,
                         val(d, PE_DF_GGML_BETA_SLOW)->d, val(d, PE_DF_GGML_FREQ_FACTORS)->n);
        const char *mode = val(d, PE_DF_GGML_MODE)->s;
        if (mode && s->n == 4 && (strcmp(mode, "mrope") == 0 || strcmp(mode, "imrope") == 0))
            pe_strbuf_printf(b, ", sections [%lld, %lld, %lld, %lld]", (long long)s->v[0],
                             (long long)s->v[1], (long long)s->v[2], (long long)s->v[3]);
        pe_strbuf_puts(b, "\n");
        return 1;
    }
    case PE_DF_SEQ_LEN:
        pe_strbuf_printf(b, "%" PRId64 "%s\n", v->i, v->i ? "" : " (load time)");
        return 1;
    case PE_DF_INV_FREQ:
        pe_strbuf_printf(b, "(%zu, %s) ", v->n, val(d, PE_DF_PRECISION)->s);
        if (v->n)
            text_list(b, v->v, v->n, v->fmt ? v->fmt : "%.9g", pad);
        else
            pe_strbuf_puts(b, "\n");
        return 1;
    case PE_DF_ALIBI_BIAS_MAX:
        pe_strbuf_printf(b, "%g\n", v->d);
        return 1;
    default:
        break;
    }
    switch (pe_describe_def((pe_dfield)f)->kind) {
    case PE_DK_STR:
        pe_strbuf_printf(b, "%s\n", v->s ? v->s : "null");
        break;
    case PE_DK_NUM:
        pe_strbuf_printf(b, "%s\n", pe_describe_num_text(v->d, v->info_fmt ? v->info_fmt : v->fmt,
                                                         u, sizeof u));
        break;
    case PE_DK_INT:
        pe_strbuf_printf(b, "%" PRId64 "\n", v->i);
        break;
    case PE_DK_BOOL:
        pe_strbuf_puts(b, v->i ? "true\n" : "false\n");
        break;
    case PE_DK_NUMS:
        text_list(b, v->v, v->n, v->info_fmt ? v->info_fmt : v->fmt ? v->fmt : "%.9g", pad);
        break;
    default:
        return 0;
    }
    return 1;
#undef NUM
}

static void text_fields(pe_strbuf *b, const pe_desc *d, pe_dfield parent, const char *indent,
                        const char *pad)
{
    for (int f = 0; f < PE_DF_COUNT; f++) {
        if (!visible(d, f, parent, PE_DV_INFO | PE_DV_TEXT))
            continue;
        const pe_dfield_def *def = pe_describe_def((pe_dfield)f);
        if (def->label) {
            pe_strbuf bl = { 0 };
            pe_strbuf_printf(&bl, "%s%-20s", indent, def->label);
            if (text_value(&bl, d, f, pad)) {
                char *s = pe_strbuf_finish(&bl);
                pe_strbuf_puts(b, s ? s : "");
                if (!s)
                    b->oom = 1;
                free(s);
            } else {
                free(pe_strbuf_finish(&bl));
            }
        }
        if (def->kind == PE_DK_GROUP)
            text_fields(b, d, (pe_dfield)f, indent, pad);
    }
}

void pe_describe_text(const pe_desc *d, pe_strbuf *b, const char *indent)
{
    char pad[64];
    snprintf(pad, sizeof pad, "%s%-20s", indent, "");
    if (pe_describe_oom(d)) {
        b->oom = 1;
        return;
    }
    text_fields(b, d, PE_DF_NONE, indent, pad);
    const pe_dval *n = pe_describe_get(d, PE_DF_NOTES);
    if (n && n->n) {
        pe_strbuf_puts(b, "notes:\n");
        for (size_t i = 0; i < n->n; i++)
            pe_strbuf_printf(b, "  - %s\n", n->sv[i]);
    }
}
