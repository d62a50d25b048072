/* gguf_rope.c: the RoPE keys and tensors of a GGUF file (posenc_gguf_read_rope).
 *
 * Built on the GGUF reader (gguf.c): its typed metadata (posenc_container_meta and _meta_types)
 * and its tensors. A key must have the GGUF type llama.cpp's loader reads it as, since the loader
 * refuses any other ("key %s has wrong type %s but expected type %s", ggml-org/llama.cpp
 * src/llama-model-loader.cpp get_arr_n / get_key): uint32 for counts and lengths, float32 for
 * every float, a string for rope.scaling.type, an int32 array of at most 4 for
 * rope.dimension_sections; attention.head_count may be a per-layer uint32 array (its first value
 * is n_head()). The factor tensors must be F32 vectors (ggml_rope_ext asserts F32 freq
 * factors). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "posenc/io.h"
#include "formats/files/gguf_keys.h"
#include "formats/io/jsondup.h"
#include "formats/files/gguf_rope.h"
#include "posenc/llamacpp.h"

static posenc_status bad_type(const char *path, const char *key, const char *type,
                              const char *want, posenc_error *err)
{
    return posenc_seterr(err, POSENC_EFORMAT, "'%s': key '%.80s' is %.40s; llama.cpp reads it as %s",
                         path, key, type, want);
}

static posenc_status read_key(const char *path, const cJSON *meta, const cJSON *types,
                              const char *arch, const pe_gguf_key *k, posenc_gguf_rope *g,
                              posenc_error *err)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", arch, k->suffix);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(types, key);
    if (!v)
        return POSENC_OK;
    const char *ty = cJSON_IsString(t) ? t->valuestring : "?";
    char *base = (char *)g + k->off;
    switch (k->type) {
    case PE_GK_U32:
        if (strcmp(ty, "uint32") != 0 || !cJSON_IsNumber(v))
            return bad_type(path, key, ty, "uint32", err);
        *(int64_t *)(void *)base = (int64_t)v->valuedouble;
        break;
    case PE_GK_HEADS:
        if (strcmp(ty, "uint32") == 0 && cJSON_IsNumber(v))
            *(int64_t *)(void *)base = (int64_t)v->valuedouble;
        else if (strcmp(ty, "array[uint32]") == 0 && cJSON_IsArray(v) && cJSON_IsNumber(v->child))
            *(int64_t *)(void *)base = (int64_t)v->child->valuedouble;
        else
            return bad_type(path, key, ty, "uint32 or a non-empty array of uint32", err);
        break;
    case PE_GK_BOOL:
        if (strcmp(ty, "bool") != 0 || !cJSON_IsBool(v))
            return bad_type(path, key, ty, "bool", err);
        *(int64_t *)(void *)base = cJSON_IsTrue(v);
        break;
    case PE_GK_F32:
        if (strcmp(ty, "float32") == 0 && cJSON_IsNull(v)) /* the reader's NaN or infinity */
            return posenc_seterr(err, POSENC_EFORMAT, "'%s': key '%.80s' is a float32 NaN or "
                                 "infinity; llama.cpp needs a finite value", path, key);
        if (strcmp(ty, "float32") != 0 || !cJSON_IsNumber(v))
            return bad_type(path, key, ty, "float32", err);
        *(double *)(void *)base = v->valuedouble;
        break;
    case PE_GK_STR:
        if (strcmp(ty, "string") != 0 || !cJSON_IsString(v))
            return bad_type(path, key, ty, "string", err);
        if (strlen(v->valuestring) >= sizeof g->scaling_type)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': key '%.80s' is '%.40s', not none, linear, yarn or longrope",
                                 path, key, v->valuestring);
        snprintf(g->scaling_type, sizeof g->scaling_type, "%s", v->valuestring);
        break;
    case PE_GK_PATTERN: {
        if (strcmp(ty, "uint32") == 0 && cJSON_IsNumber(v)) {
            g->swa_period = (int64_t)v->valuedouble;
            g->n_swa_layers = 0;
            break;
        }
        int isint = strcmp(ty, "array[int32]") == 0;
        if ((!isint && strcmp(ty, "array[bool]") != 0) || !cJSON_IsArray(v))
            return bad_type(path, key, ty, "uint32 or an array of bool or int32", err);
        int n = cJSON_GetArraySize(v), i = 0;
        if (n > POSENC_GGUF_MAX_LAYERS)
            return posenc_seterr(err, POSENC_EFORMAT, "'%s': key '%.80s' holds %d values "
                                 "(posenc reads at most %d layers)", path, key, n,
                                 POSENC_GGUF_MAX_LAYERS);
        for (const cJSON *e = v->child; e; e = e->next)
            g->swa_layers[i++] = (uint8_t)(cJSON_IsTrue(e) || (cJSON_IsNumber(e) &&
                                                                e->valuedouble != 0));
        g->n_swa_layers = n;
        g->swa_layers_int32 = isint;
        g->swa_period = 0;
        break;
    }
    case PE_GK_SECTIONS: {
        if (strcmp(ty, "array[int32]") != 0 || !cJSON_IsArray(v))
            return bad_type(path, key, ty, "an array of int32", err);
        int n = cJSON_GetArraySize(v);
        if (n > 4)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': key '%.80s' holds %d values; llama.cpp reads at most 4",
                                 path, key, n);
        int i = 0;
        memset(g->sections, 0, sizeof g->sections);
        for (const cJSON *e = v->child; e; e = e->next)
            g->sections[i++] = (int32_t)e->valuedouble;
        g->n_sections = n;
        break;
    }
    }
    g->has |= k->bit;
    return POSENC_OK;
}

static posenc_status read_factors(posenc_container *c, const char *path, const char *name,
                                  float *dst, int *n, posenc_error *err)
{
    for (size_t i = 0; i < posenc_container_count(c); i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        if (strcmp(a->name, name) != 0)
            continue;
        const char *ty = posenc_container_array_type(c, i, NULL, NULL);
        if (!ty || strcmp(ty, "F32") != 0 || a->ndim != 1 || a->shape[0] < 1 ||
            a->shape[0] > POSENC_MAX_FREQ)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': tensor '%s' must be an F32 vector of 1 to %d values "
                                 "(it is %s with %d dimensions)",
                                 path, name, POSENC_MAX_FREQ, ty ? ty : "?", a->ndim);
        posenc_reader *r;
        posenc_status st = posenc_reader_open_index(c, i, &r, err);
        if (st != POSENC_OK)
            return st;
        st = posenc_reader_read(r, dst, (uint64_t)a->shape[0], err);
        posenc_reader_close(r);
        if (st != POSENC_OK)
            return st;
        *n = (int)a->shape[0];
        return POSENC_OK;
    }
    return POSENC_OK;
}

posenc_status posenc_gguf_read_rope(const char *path, posenc_gguf_rope *out, posenc_error *err)
{
    posenc_read_opts ro = { 0 };
    ro.format = POSENC_FMT_GGUF;
    posenc_container *c = NULL;
    cJSON *meta = NULL, *types = NULL;
    char *names = NULL;
    const char **want = NULL;
    posenc_gguf_rope *g = calloc(1, sizeof *g);
    if (!g)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = posenc_container_open(path, &ro, &c, err);
    if (st != POSENC_OK)
        goto out;
    /* only the keys read below are parsed, not the whole metadata (a tokenizer of 262144
     * tokens is ~70 MB as a cJSON tree) */
    const char *mt = posenc_container_meta(c), *tt = posenc_container_meta_types(c);
    static const char *const arch_key[] = { "general.architecture" };
    meta = pe_json_pick(mt, arch_key, 1);
    types = pe_json_pick(tt, arch_key, 1);
    if (!meta || !types) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(meta, "general.architecture");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(types, "general.architecture");
    if (!a) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': no general.architecture key", path);
        goto out;
    }
    if (!cJSON_IsString(a) || !cJSON_IsString(at) || strcmp(at->valuestring, "string") != 0) {
        st = bad_type(path, "general.architecture", cJSON_IsString(at) ? at->valuestring : "?",
                      "string", err);
        goto out;
    }
    if (strlen(a->valuestring) >= sizeof g->arch || !*a->valuestring) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': general.architecture '%.64s' is %s", path,
                           a->valuestring, *a->valuestring ? "too long" : "empty");
        goto out;
    }
    snprintf(g->arch, sizeof g->arch, "%s", a->valuestring);
    size_t nw = pe_gguf_rope_nkeys + 1;
    names = calloc(nw, 160);
    want = calloc(nw, sizeof *want);
    if (!names || !want) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nw; i++) {
        const pe_gguf_key *k = i < pe_gguf_rope_nkeys ? &pe_gguf_rope_keys[i]
                                                      : &pe_gguf_scale_linear;
        snprintf(names + 160 * i, 160, "%s.%s", g->arch, k->suffix);
        want[i] = names + 160 * i;
    }
    cJSON_Delete(meta);
    cJSON_Delete(types);
    meta = pe_json_pick(mt, want, nw);
    types = pe_json_pick(tt, want, nw);
    if (!meta || !types) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < pe_gguf_rope_nkeys; i++)
        if ((st = read_key(path, meta, types, g->arch, &pe_gguf_rope_keys[i], g, err)) !=
            POSENC_OK)
            goto out;
    /* the old key name, read when rope.scaling.factor is absent (load_hparams) */
    if (!(g->has & POSENC_GGUF_SCALING_FACTOR)) {
        if ((st = read_key(path, meta, types, g->arch, &pe_gguf_scale_linear, g, err)) !=
            POSENC_OK)
            goto out;
    }
    if ((st = read_factors(c, path, "rope_freqs.weight", g->rope_freqs, &g->n_rope_freqs, err)) !=
            POSENC_OK ||
        (st = read_factors(c, path, "rope_factors_long.weight", g->factors_long,
                           &g->n_factors_long, err)) != POSENC_OK ||
        (st = read_factors(c, path, "rope_factors_short.weight", g->factors_short,
                           &g->n_factors_short, err)) != POSENC_OK)
        goto out;
    *out = *g;
out:
    free(names);
    free(want);
    cJSON_Delete(meta);
    cJSON_Delete(types);
    posenc_container_close(c);
    free(g);
    return st;
}

/* ---- description for posenc info --gguf ---- */

static cJSON *key_num(const posenc_gguf_rope *g, unsigned bit, double v)
{
    return g->has & bit ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *float_array(const float *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

cJSON *pe_gguf_rope_json(const posenc_gguf_rope *g, int64_t n_ctx, const char *layer_type)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    posenc_ggml_rope r;
    posenc_error e = { 0 };
    int ok = posenc_ggml_rope_from_gguf_layer(g, n_ctx, layer_type, &r, &e) == POSENC_OK;
    cJSON_AddStringToObject(j, "architecture", g->arch);
    cJSON_AddItemToObject(j, "layer_type",
                          layer_type ? cJSON_CreateString(layer_type) : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "rope_mode",
                          ok ? cJSON_CreateString(posenc_ggml_mode_name(r.mode)) : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "freq_base", key_num(g, POSENC_GGUF_FREQ_BASE, g->freq_base));
    cJSON_AddItemToObject(j, "freq_base_swa", key_num(g, POSENC_GGUF_FREQ_BASE_SWA, g->freq_base_swa));
    cJSON_AddItemToObject(j, "sliding_window",
                          key_num(g, POSENC_GGUF_SLIDING_WINDOW, (double)g->sliding_window));
    cJSON_AddItemToObject(j, "rotary_dim", ok ? cJSON_CreateNumber(r.n_dims) : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "dimension_count",
                          key_num(g, POSENC_GGUF_DIMENSION_COUNT, (double)g->dimension_count));
    cJSON_AddItemToObject(j, "head_dim", ok ? cJSON_CreateNumber(r.head_dim) : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "scaling_type", g->has & POSENC_GGUF_SCALING_TYPE
                                                 ? cJSON_CreateString(g->scaling_type)
                                                 : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "factor", key_num(g, POSENC_GGUF_SCALING_FACTOR | POSENC_GGUF_SCALE_LINEAR,
                                               g->scaling_factor));
    cJSON_AddItemToObject(j, "original_context_length",
                          key_num(g, POSENC_GGUF_ORIG_CTX, (double)g->original_context_length));
    cJSON_AddItemToObject(j, "context_length",
                          key_num(g, POSENC_GGUF_CONTEXT_LENGTH, (double)g->context_length));
    cJSON_AddItemToObject(j, "yarn_ext_factor", key_num(g, POSENC_GGUF_YARN_EXT_FACTOR, g->yarn_ext_factor));
    cJSON_AddItemToObject(j, "yarn_attn_factor",
                          key_num(g, POSENC_GGUF_YARN_ATTN_FACTOR, g->yarn_attn_factor));
    cJSON_AddItemToObject(j, "yarn_beta_fast", key_num(g, POSENC_GGUF_YARN_BETA_FAST, g->yarn_beta_fast));
    cJSON_AddItemToObject(j, "yarn_beta_slow", key_num(g, POSENC_GGUF_YARN_BETA_SLOW, g->yarn_beta_slow));
    cJSON_AddItemToObject(j, "yarn_log_multiplier",
                          key_num(g, POSENC_GGUF_YARN_LOG_MUL, g->yarn_log_multiplier));
    cJSON_AddItemToObject(j, "rope_scaling_attn_factor", key_num(g, POSENC_GGUF_ATTN_FACTOR, g->attn_factor));
    if (g->n_sections > 0) {
        int s[4] = { 0 };
        for (int i = 0; i < g->n_sections && i < 4; i++)
            s[i] = g->sections[i];
        cJSON_AddItemToObject(j, "dimension_sections", cJSON_CreateIntArray(s, g->n_sections));
    } else
        cJSON_AddNullToObject(j, "dimension_sections");
    cJSON_AddBoolToObject(j, "has_rope_freqs", g->n_rope_freqs > 0);
    cJSON_AddBoolToObject(j, "has_rope_factors_long", g->n_factors_long > 0);
    cJSON_AddBoolToObject(j, "has_rope_factors_short", g->n_factors_short > 0);
    /* what llama.cpp derives (ggml_rope_ext's arguments) */
    cJSON *d = cJSON_AddObjectToObject(j, "llama_cpp");
    if (ok && d) {
        cJSON_AddNumberToObject(d, "n_ctx", n_ctx > 0 ? (double)n_ctx : (double)g->context_length);
        cJSON_AddNumberToObject(d, "freq_base", (double)r.freq_base);
        cJSON_AddNumberToObject(d, "freq_scale", (double)r.freq_scale);
        cJSON_AddNumberToObject(d, "ext_factor", (double)r.ext_factor);
        cJSON_AddNumberToObject(d, "attn_factor", (double)r.attn_factor);
        cJSON_AddNumberToObject(d, "beta_fast", (double)r.beta_fast);
        cJSON_AddNumberToObject(d, "beta_slow", (double)r.beta_slow);
        cJSON_AddNumberToObject(d, "n_ctx_orig_yarn", r.n_ctx_orig);
        cJSON_AddItemToObject(d, "sections", cJSON_CreateIntArray(r.sections, 4));
        cJSON_AddItemToObject(d, "kq_scale", r.kq_scale != 0 ? cJSON_CreateNumber(r.kq_scale)
                                                             : cJSON_CreateNull());
        /* llama_model::get_rope_factors, as posenc_ggml_rope_from_gguf chose */
        int64_t ctx = n_ctx > 0 ? n_ctx : g->context_length;
        int64_t orig = g->has & POSENC_GGUF_ORIG_CTX ? g->original_context_length : g->context_length;
        const char *src = g->n_rope_freqs                         ? "rope_freqs.weight"
                          : ctx > orig && g->n_factors_long > 0    ? "rope_factors_long.weight"
                          : g->n_factors_short > 0                 ? "rope_factors_short.weight"
                                                                   : NULL;
        cJSON_AddItemToObject(d, "freq_factors", src ? cJSON_CreateString(src) : cJSON_CreateNull());
        cJSON_AddItemToObject(d, "freq_factor_values", float_array(r.freq_factors, r.n_freq_factors));
    }
    cJSON_AddItemToObject(j, "freq_scale", ok ? cJSON_CreateNumber((double)r.freq_scale) : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "ext_factor", ok ? cJSON_CreateNumber((double)r.ext_factor) : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "attn_factor", ok ? cJSON_CreateNumber((double)r.attn_factor) : cJSON_CreateNull());
    cJSON *inv = cJSON_AddArrayToObject(j, "inv_freq");
    for (int i = 0; ok && inv && i < r.n_dims / 2; i++) {
        double v = pow((double)r.freq_base, -2.0 * i / r.n_dims);
        if (r.n_freq_factors)
            v /= (double)r.freq_factors[i];
        cJSON_AddItemToArray(inv, cJSON_CreateNumber(v));
    }
    cJSON_AddStringToObject(j, "inv_freq_note",
                            "freq_base^(-2i/n_dims) / freq_factors[i] in double, before "
                            "freq_scale and YaRN's ramp; ggml itself computes in float32");
    /* values llama.cpp loads but computes nonsense from (or divides by zero with) */
    cJSON *ws = cJSON_AddArrayToObject(j, "warnings");
    char wb[200];
    if (ws && (g->has & POSENC_GGUF_FREQ_BASE) && !(g->freq_base > 0)) {
        snprintf(wb, sizeof wb, "%s.rope.freq_base is %g: llama.cpp's angles would be NaN",
                 g->arch, g->freq_base);
        cJSON_AddItemToArray(ws, cJSON_CreateString(wb));
    }
    if (ws && (g->has & POSENC_GGUF_HEAD_COUNT) && g->head_count <= 0) {
        snprintf(wb, sizeof wb, "%s.attention.head_count is %lld: llama.cpp divides by it",
                 g->arch, (long long)g->head_count);
        cJSON_AddItemToArray(ws, cJSON_CreateString(wb));
    }
    for (int i = 0; ws && i < g->n_rope_freqs; i++)
        if (!isfinite(g->rope_freqs[i]) || !(g->rope_freqs[i] != 0)) {
            snprintf(wb, sizeof wb, "rope_freqs.weight[%d] is %g: llama.cpp divides the "
                     "frequency by it", i, (double)g->rope_freqs[i]);
            cJSON_AddItemToArray(ws, cJSON_CreateString(wb));
            break;
        }
    if (!ok)
        cJSON_AddStringToObject(j, "warning", e.msg);
    else {
        posenc_ggml_arch a;
        posenc_ggml_arch_info(g->arch, &a);
        if (!a.kq_known)
            cJSON_AddStringToObject(j, "note", "posenc has not read this architecture's graph: "
                                               "its softmax scale (kq_scale) is not known");
    }
    return j;
}
