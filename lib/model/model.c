/* model.c: resolve a parsed Hugging Face config.json into position-encoding parameters.
 *
 * The engine follows transformers v5 (huggingface/transformers, src/transformers/
 * modeling_rope_utils.py: the rope_parameters standardisation and the ROPE_INIT_FUNCTIONS; each
 * model's configuration_*.py for its defaults): which dict holds the RoPE keys (legacy
 * rope_scaling replaces rope_parameters; `type` is an alias of `rope_type`), where rope_theta comes
 * from (inside the dict, then the top-level key, then the class default), which classes honour
 * partial_rotary_factor for rope_type default, per-layer-type dicts and text_config nesting.
 *
 * What differs by model is data: one row per model_type in lib/model/families.def (lib/model/family.h has
 * the columns). Behaviour that is not data is a named hook the row points to (model_hooks.c).
 * No other function compares a model_type. No I/O: formats/io/config.c reads the file.
 *
 * This file holds the names, the resolution context's JSON helpers, the registry look-up and
 * the public API (pe_model_from_json drives the resolution); model_rope.c resolves head_dim
 * and the RoPE parameters, model_setup.c sets up a row by its kind and applies the per-layer
 * rules, model_hooks.c holds the hooks and the table of rows; model_ctx.h is what they share. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/model/llama_arch.h"
#include "lib/model/model_ctx.h"
#include "lib/model/model_json.h"

/* ---- names ---- */

static const char *const encoding_names[] = { "none", "rope", "alibi", "t5", "learned",
                                              "sinusoidal", "shaw" };

const char *posenc_encoding_name(posenc_encoding e)
{
    if ((unsigned)e < sizeof encoding_names / sizeof *encoding_names)
        return encoding_names[e];
    return "unknown";
}

posenc_status posenc_encoding_parse(const char *s, posenc_encoding *out, posenc_error *err)
{
    for (size_t i = 0; s && i < sizeof encoding_names / sizeof *encoding_names; i++) {
        if (strcmp(s, encoding_names[i]) == 0) {
            *out = (posenc_encoding)i;
            return POSENC_OK;
        }
    }
    return posenc_seterr(err, POSENC_EINVAL,
                         "unknown encoding '%s' (known: none, rope, alibi, t5, learned, sinusoidal, "
                         "shaw)", s ? s : "");
}

const char *posenc_style_name(posenc_style s)
{
    return s == POSENC_STYLE_GPTJ ? "gptj" : s == POSENC_STYLE_NEOX ? "neox" : "unknown";
}

posenc_status posenc_style_parse(const char *s, posenc_style *out, posenc_error *err)
{
    if (s && (strcmp(s, "neox") == 0 || strcmp(s, "half") == 0)) {
        *out = POSENC_STYLE_NEOX;
        return POSENC_OK;
    }
    if (s && (strcmp(s, "gptj") == 0 || strcmp(s, "interleaved") == 0)) {
        *out = POSENC_STYLE_GPTJ;
        return POSENC_OK;
    }
    return posenc_seterr(err, POSENC_EINVAL, "unknown style '%s' (known: neox, gptj)",
                         s ? s : "");
}

/* ---- resolution context and JSON helpers ---- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
posenc_status pe_cfgerr(ctx *c, posenc_status code, const char *fmt, ...)
{
    if (c->err) {
        char msg[POSENC_ERRMSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        posenc_seterr(c->err, code, "'%s': %s", c->src, msg);
    }
    return code;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void pe_note(ctx *c, const char *fmt, ...)
{
    posenc_model *m = c->m;
    if (m->n_notes >= MAX_NOTES)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < m->n_notes; i++)
        if (strcmp(m->notes[i], buf) == 0)
            return; /* the same note from two layer types */
    char *s = malloc(strlen(buf) + 1);
    if (!s)
        return; /* notes are advisory; an allocation failure only drops one */
    memcpy(s, buf, strlen(buf) + 1);
    m->notes[m->n_notes++] = s;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void pe_warn(ctx *c, const char *fmt, ...)
{
    posenc_model *m = c->m;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < m->n_warns; i++)
        if (strcmp(m->warns[i], buf) == 0)
            return;
    pe_note(c, "%s", buf);
    char *s = m->n_warns < MAX_WARNS ? malloc(strlen(buf) + 1) : NULL;
    if (!s)
        return;
    memcpy(s, buf, strlen(buf) + 1);
    m->warns[m->n_warns++] = s;
}

posenc_status pe_model_add_warning(posenc_model *m, const char *text)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    size_t n = m->n_warns;
    pe_warn(&c, "%s", text);
    return m->n_warns > n || m->n_warns == MAX_WARNS ? POSENC_OK : POSENC_ENOMEM;
}

const cJSON *pe_item(const cJSON *obj, const char *key)
{
    return obj && cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* A present, non-null key. */
int pe_has(const cJSON *obj, const char *key)
{
    const cJSON *it = pe_item(obj, key);
    return it && !cJSON_IsNull(it);
}

/* Number at obj[key] (path names obj in messages, e.g. "rope_scaling."); *present = 0 when the
 * key is missing or null. */
posenc_status pe_get_num(ctx *c, const cJSON *obj, const char *path, const char *key,
                         double *out, int *present)
{
    const cJSON *it = pe_item(obj, key);
    *present = 0;
    if (!it || cJSON_IsNull(it))
        return POSENC_OK;
    if (!cJSON_IsNumber(it))
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be a number", path, key);
    if (!isfinite(it->valuedouble))
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be a finite number", path, key);
    *out = it->valuedouble;
    *present = 1;
    return POSENC_OK;
}

posenc_status pe_get_int(ctx *c, const cJSON *obj, const char *path, const char *key,
                         int64_t min, int64_t max, int64_t *out, int *present)
{
    double v;
    posenc_status st = pe_get_num(c, obj, path, key, &v, present);
    if (st != POSENC_OK || !*present)
        return st;
    if (v != floor(v) || v < (double)min || v > (double)max)
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be an integer in [%lld, %lld], not %.17g",
                         path, key, (long long)min, (long long)max, v);
    *out = (int64_t)v;
    return POSENC_OK;
}

/* JSON true/false (0/1 accepted too). */
posenc_status pe_get_bool(ctx *c, const cJSON *obj, const char *path, const char *key,
                          int *out, int *present)
{
    const cJSON *it = pe_item(obj, key);
    *present = 0;
    if (!it || cJSON_IsNull(it))
        return POSENC_OK;
    if (cJSON_IsBool(it))
        *out = cJSON_IsTrue(it);
    else if (cJSON_IsNumber(it) && (it->valuedouble == 0 || it->valuedouble == 1))
        *out = it->valuedouble != 0;
    else
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be true or false", path, key);
    *present = 1;
    return POSENC_OK;
}

posenc_status pe_get_str(ctx *c, const cJSON *obj, const char *path, const char *key,
                         const char **out)
{
    const cJSON *it = pe_item(obj, key);
    *out = NULL;
    if (!it || cJSON_IsNull(it))
        return POSENC_OK;
    if (!cJSON_IsString(it) || !it->valuestring)
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be a string", path, key);
    *out = it->valuestring;
    return POSENC_OK;
}

/* Object at obj[key]; NULL when missing or null. */
posenc_status pe_get_obj(ctx *c, const cJSON *obj, const char *path, const char *key,
                         const cJSON **out)
{
    const cJSON *it = pe_item(obj, key);
    *out = NULL;
    if (!it || cJSON_IsNull(it))
        return POSENC_OK;
    if (!cJSON_IsObject(it))
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be an object or null", path, key);
    *out = it;
    return POSENC_OK;
}

int pe_obj_empty(const cJSON *o)
{
    return !o || !o->child;
}

/* Copy a name into a fixed buffer; error when it does not fit. */
posenc_status pe_copy_name(ctx *c, char *dst, const char *s, const char *what)
{
    size_t n = strlen(s);
    if (n >= NAME_LEN)
        return pe_cfgerr(c, POSENC_ECONFIG, "%s '%.40s...' is too long", what, s);
    memcpy(dst, s, n + 1);
    return POSENC_OK;
}

/* ---- the registry (its rows are in model_hooks.c, beside their hooks) ---- */

/* The rules for a model_type the registry does not know (explicit RoPE keys only). */
static const pe_family generic_family = {
    .name = "generic", .kind = PE_ROPE,
    .note = "unknown model_type with explicit RoPE keys: rotate_half over head_dim (or "
            "hidden_size // num_attention_heads), rope_theta default 10000",
    .src = "src/transformers/modeling_rope_utils.py (the generic rules)",
};

static const pe_family *family_find(const char *name)
{
    if (!name)
        return NULL;
    if (strcmp(name, generic_family.name) == 0)
        return &generic_family;
    for (size_t i = 0; i < pe_n_families; i++)
        if (strcmp(pe_families[i].name, name) == 0)
            return &pe_families[i];
    return NULL;
}

int pe_family_vllm_deepseek(const char *family)
{
    const pe_family *f = family_find(family);
    return f && (f->flags & F_VLLM_DEEPSEEK);
}

/* Follow alias rows to the row that holds the data. */
static const pe_family *family_resolve(const pe_family *f)
{
    for (int hops = 0; f && f->alias && hops < 4; hops++)
        f = family_find(f->alias);
    return f;
}

/* ---- public API ---- */

/* The config as convert_hf_to_gguf.py sees it (ggml-org/llama.cpp conversion/base.py
 * TextModel.__init__: hparams = {**hparams, **hparams["text_config"]}), kept for lib/runtimes/llamacpp.c. */
static posenc_status keep_hparams(ctx *c, const cJSON *root)
{
    cJSON *hp = cJSON_Duplicate(root, 1);
    if (!hp)
        return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
    for (const cJSON *e = c->tc != root ? c->tc->child : NULL; e; e = e->next) {
        cJSON *dup = cJSON_Duplicate(e, 1);
        if (!dup || !e->string) {
            cJSON_Delete(dup);
            cJSON_Delete(hp);
            return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
        }
        cJSON_DeleteItemFromObjectCaseSensitive(hp, e->string);
        cJSON_AddItemToObject(hp, e->string, dup);
    }
    c->m->hp = hp;
    return POSENC_OK;
}

const cJSON *pe_model_hparams(const posenc_model *m)
{
    return m->hp;
}

/* a composite's class (registered for its ConditionalGeneration name) decides the
 * architecture when the registry names one for it (Qwen2-VL, Mistral 3); else the text row's */
const char *pe_model_gguf_arch(const posenc_model *m)
{
    if (m->fam && !m->generic && m->outer && m->outer->gguf_arch)
        return m->outer->gguf_arch;
    return m->fam && !m->generic ? m->fam->gguf_arch : NULL;
}

int pe_model_gguf_log_mul(const posenc_model *m)
{
    return m->fam && !m->generic && m->fam->gguf_log_mul;
}

posenc_status pe_model_from_json(const cJSON *root, const char *source, const char *family,
                                 posenc_model **out, posenc_error *err)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.src = source ? source : "config.json";
    c.err = err;
    if (!root || !cJSON_IsObject(root))
        return pe_cfgerr(&c, POSENC_ECONFIG, "top level is not a JSON object");
    posenc_model *m = calloc(1, sizeof *m);
    if (!m)
        return pe_cfgerr(&c, POSENC_ENOMEM, "out of memory");
    c.m = m;
    c.root = root;
    c.f = &generic_family;
    c.cls = generic_family.name;
    m->bias.padding_idx = -1;
    snprintf(m->source, sizeof m->source, "%s", c.src);

    posenc_status st;
    const char *outer = NULL, *inner = NULL;
    const cJSON *tcfg = NULL;
    cJSON *merged = NULL; /* a text_config with the composite's defaults filled in */
    const pe_family *f = NULL;
    c.tc = root;
    c.tp = "";
    if ((st = pe_get_str(&c, root, "", "model_type", &outer)) != POSENC_OK)
        goto fail;
    if (family) {
        f = family_find(family);
        if (!f) {
            st = posenc_seterr(err, POSENC_EINVAL, "unknown family '%.60s' (posenc info "
                               "--models lists them)", family);
            goto fail;
        }
    } else {
        f = family_find(outer);
    }
    f = family_resolve(f);

    const pe_family *outer_row = f && f->kind == PE_TEXT ? f : NULL;
    /* composite configs: the language model is a text sub-config (a dotted .text_key walks
     * nested dicts: thinker_config.text_config) */
    const char *tkey = f && f->kind == PE_TEXT && f->text_key ? f->text_key : "text_config";
    char tpath[NAME_LEN + 2];
    tcfg = root;
    for (const char *k = tkey; tcfg && *k;) {
        const char *dot = strchr(k, '.');
        char part[NAME_LEN];
        size_t n = dot ? (size_t)(dot - k) : strlen(k);
        snprintf(part, sizeof part, "%.*s", (int)(n < NAME_LEN ? n : NAME_LEN - 1), k);
        if ((st = pe_get_obj(&c, tcfg, "", part, &tcfg)) != POSENC_OK)
            goto fail;
        k = dot ? dot + 1 : k + n;
    }
    if (tcfg == root)
        tcfg = NULL;
    if (f && f->kind == PE_TEXT && f->text_defaults) {
        /* the composite fills its own defaults under the text_config's keys */
        merged = cJSON_Parse(f->text_defaults);
        if (!merged) {
            st = pe_cfgerr(&c, POSENC_ENOMEM, "out of memory");
            goto fail;
        }
        for (const cJSON *e = tcfg ? tcfg->child : NULL; e; e = e->next) {
            cJSON *dup = cJSON_Duplicate(e, 1);
            if (!dup || !e->string) {
                cJSON_Delete(dup);
                st = pe_cfgerr(&c, POSENC_ENOMEM, "out of memory");
                goto fail;
            }
            cJSON_DeleteItemFromObjectCaseSensitive(merged, e->string);
            cJSON_AddItemToObject(merged, e->string, dup);
        }
        pe_note(&c, "%s fills the keys its text_config leaves out from its own defaults", f->name);
        tcfg = merged;
    }
    if (tcfg && (!f || f->kind == PE_TEXT)) {
        snprintf(tpath, sizeof tpath, "%.60s.", tkey);
        c.tc = tcfg;
        c.tp = tpath;
        if ((st = pe_get_str(&c, tcfg, c.tp, "model_type", &inner)) != POSENC_OK)
            goto fail;
        if (f && (f->flags & F_TEXT_FIXED)) {
            if (inner && *inner && strcmp(inner, f->text) != 0)
                pe_note(&c, "%s builds %s whatever %smodel_type says ('%s')", f->name, f->text,
                        c.tp, inner);
            f = family_resolve(family_find(f->text));
            inner = NULL;
        } else if (inner && *inner) {
            f = family_resolve(family_find(inner));
        } else if (f) {
            f = family_resolve(family_find(f->text));
            if (f)
                pe_note(&c, "%s has no model_type: read as %s, the %s default", tkey, f->name,
                        outer ? outer : "composite");
        }
    } else if (f && f->kind == PE_TEXT) {
        /* a flat legacy config (Qwen2-VL without text_config): its own keys */
        f = family_resolve(family_find(f->text));
    }
    const char *mt = inner && *inner ? inner : outer ? outer : "";
    if ((st = pe_copy_name(&c, m->model_type, mt, "model_type")) != POSENC_OK)
        goto fail;
    if (family && outer && strcmp(family, mt) != 0)
        pe_note(&c, "resolved as family '%s' (--family); the config's model_type is '%s'", family,
                mt);

    if (!f || f->kind == PE_TEXT) {
        /* not in the registry: the generic rules, only when the config asks for RoPE */
        if (!pe_has_rope_keys(c.tc)) {
            if (*mt)
                st = pe_cfgerr(&c, POSENC_EUNSUPPORTED, "model_type '%.60s' is not known and the "
                               "config has no RoPE keys (rope_theta, rope_parameters, "
                               "rope_scaling, rotary_*): posenc cannot tell its position "
                               "encoding; pass --family NAME (posenc info --models)", mt);
            else
                st = pe_cfgerr(&c, POSENC_EUNSUPPORTED, "no model_type and no RoPE keys "
                               "(rope_theta, rope_parameters, rope_scaling, rotary_*): posenc "
                               "cannot tell the position encoding; pass --family NAME (posenc info "
                               "--models)");
            goto fail;
        }
        f = &generic_family;
        m->generic = 1;
        snprintf(m->warning, sizeof m->warning, "%s%.60s%s; resolved with the generic RoPE rules "
                 "(neox, full rotary)%s; pass --family NAME to choose", *mt ? "model_type '" :
                 "", *mt ? mt : "the config has no model_type", *mt ? "' is not known" : "",
                 pe_has(c.tc, "qk_rope_head_dim") ? " although qk_rope_head_dim is set (MLA models "
                 "such as deepseek_v3 rotate only that slice)" : "");
        pe_note(&c, "%s", m->warning);
    }
    c.f = f;
    c.cls = f->name;
    m->fam = f;
    m->outer = outer_row;
    if ((st = pe_setup_row(&c)) != POSENC_OK)
        goto fail;
    pe_check_top_keys(&c, c.tc, c.tp);
    if (c.tc != root)
        pe_check_top_keys(&c, root, "");
    if ((st = pe_layer_rules(&c)) != POSENC_OK)
        goto fail;
    if ((st = keep_hparams(&c, root)) != POSENC_OK)
        goto fail;
    cJSON_Delete(merged);
    *out = m;
    return POSENC_OK;
fail:
    cJSON_Delete(merged);
    posenc_model_free(m);
    return st;
}

void posenc_model_free(posenc_model *m)
{
    if (!m)
        return;
    cJSON_Delete(m->hp);
    for (size_t i = 0; i < m->n_notes; i++)
        free(m->notes[i]);
    for (size_t i = 0; i < m->n_warns; i++)
        free(m->warns[i]);
    free(m->type_of);
    free(m->nope);
    free(m);
}

posenc_encoding posenc_model_encoding(const posenc_model *m)
{
    return m->enc;
}

const char *posenc_model_type(const posenc_model *m)
{
    return m->model_type;
}

const char *posenc_model_family(const posenc_model *m)
{
    return m->fam ? m->fam->name : generic_family.name;
}

int posenc_model_is_generic(const posenc_model *m)
{
    return m->generic;
}

const char *posenc_model_warning(const posenc_model *m)
{
    return posenc_model_warning_at(m, 0);
}

const char *posenc_model_warning_at(const posenc_model *m, size_t i)
{
    if (m->warning[0]) {
        if (i == 0)
            return m->warning;
        i--;
    }
    return i < m->n_warns ? m->warns[i] : NULL;
}

int64_t posenc_model_max_positions(const posenc_model *m)
{
    return m->max_positions;
}

int64_t posenc_model_layer_count(const posenc_model *m)
{
    return m->n_layers;
}

/* A positive integer key of the merged config, 0 when absent or not one. */
static int64_t hp_count(const cJSON *hp, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hp, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= (double)(1 << 20)) ||
        v->valuedouble != floor(v->valuedouble))
        return 0;
    return (int64_t)v->valuedouble;
}

void posenc_model_heads(const posenc_model *m, const char *layer_type, int64_t *q, int64_t *kv)
{
    static const char *const qkeys[] = { "num_attention_heads", "n_head", "num_heads", "n_heads" };
    static const char *const kvkeys[] = { "num_key_value_heads", "num_kv_heads", "n_head_kv" };
    const cJSON *hp = m->hp;
    *q = *kv = 0;
    for (size_t i = 0; hp && i < sizeof qkeys / sizeof *qkeys && !*q; i++)
        *q = hp_count(hp, qkeys[i]);
    for (size_t i = 0; hp && i < sizeof kvkeys / sizeof *kvkeys && !*kv; i++)
        *kv = hp_count(hp, kvkeys[i]);
    if (!*kv && hp && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hp, "multi_query")))
        *kv = 1; /* Falcon's multi-query attention */
    /* transformers models/gemma4/modeling_gemma4.py Gemma4TextAttention.__init__: a layer that
     * is not sliding, with attention_k_eq_v, has num_global_key_value_heads when set */
    if (hp && layer_type && strcmp(layer_type, "sliding_attention") != 0 &&
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hp, "attention_k_eq_v")) &&
        hp_count(hp, "num_global_key_value_heads"))
        *kv = hp_count(hp, "num_global_key_value_heads");
    if (!*kv)
        *kv = *q;
}

size_t posenc_model_nope_layers(const posenc_model *m, const int64_t **idx)
{
    if (idx)
        *idx = m->nope;
    return m->n_nope;
}

size_t posenc_model_layer_name_count(const posenc_model *m)
{
    return m->n_alias;
}

const char *posenc_model_layer_name(const posenc_model *m, size_t i)
{
    return i < m->n_alias ? m->alias[i] : NULL;
}

posenc_encoding posenc_model_layer_name_encoding(const posenc_model *m, size_t i)
{
    return i < m->n_alias ? m->alias_enc[i] : POSENC_ENC_NONE;
}

posenc_status posenc_model_layer(const posenc_model *m, int64_t layer, const char **type,
                                 int *nope, posenc_error *err)
{
    int64_t n = m->n_layers > 0 ? m->n_layers : (int64_t)m->n_types;
    if (layer < 0 || (n > 0 && layer >= n))
        return posenc_seterr(err, POSENC_ERANGE, "'%s': layer %lld does not exist (%s has %lld "
                             "layers)", m->source, (long long)layer,
                             m->n_layers > 0 ? "num_hidden_layers" : "layer_types", (long long)n);
    if (type)
        *type = (uint64_t)layer < m->n_types ? m->alias[m->type_of[layer]] : NULL;
    if (nope) {
        *nope = 0;
        for (size_t i = 0; i < m->n_nope; i++)
            if (m->nope[i] == layer)
                *nope = 1;
    }
    return POSENC_OK;
}

size_t posenc_model_layer_type_count(const posenc_model *m)
{
    return m->n_lt;
}

const char *posenc_model_layer_type_name(const posenc_model *m, size_t i)
{
    return i < m->n_lt ? m->lt_name[i] : NULL;
}

static void list_names(const posenc_model *m, char *buf, size_t cap)
{
    size_t n = m->n_lt ? m->n_lt : m->n_alias;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", m->n_lt ? m->lt_name[i]
                                                                       : m->alias[i]);
    }
}

posenc_status posenc_model_rope(const posenc_model *m, const char *layer_type,
                                posenc_rope_config *out, posenc_error *err)
{
    char names[320];
    if (m->enc != POSENC_ENC_ROPE)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': model_type '%s' uses %s, not RoPE",
                             m->source, m->model_type, posenc_encoding_name(m->enc));
    if (m->n_lt == 0) {
        for (size_t i = 0; layer_type && i < m->n_alias; i++)
            if (strcmp(m->alias[i], layer_type) == 0 && m->alias_enc[i] != POSENC_ENC_ROPE)
                return posenc_seterr(err, POSENC_EINVAL, "'%s': layer type '%s' carries no "
                                     "RoPE", m->source, layer_type);
        if (!layer_type || pe_in_aliases(m, layer_type)) {
            *out = m->rope[0];
            return POSENC_OK;
        }
        list_names(m, names, sizeof names);
        if (m->n_alias)
            return posenc_seterr(err, POSENC_ENOTFOUND,
                                 "'%s': unknown layer type '%s' (layer types: %s)", m->source,
                                 layer_type, names);
        return posenc_seterr(err, POSENC_ENOTFOUND,
                             "'%s': unknown layer type '%s' (the config has no layer types)",
                             m->source, layer_type);
    }
    list_names(m, names, sizeof names);
    if (!layer_type)
        return posenc_seterr(err, POSENC_EINVAL,
                             "'%s': several RoPE layer types (%s): choose one", m->source, names);
    for (size_t i = 0; i < m->n_lt; i++) {
        if (strcmp(m->lt_name[i], layer_type) == 0) {
            *out = m->rope[i];
            return POSENC_OK;
        }
    }
    return posenc_seterr(err, POSENC_ENOTFOUND, "'%s': unknown layer type '%s' (layer types: %s)",
                         m->source, layer_type, names);
}

posenc_status posenc_rope_config_new(const posenc_model *m, const char *layer_type,
                                     posenc_rope_config **out, posenc_error *err)
{
    posenc_rope_config *c = malloc(sizeof *c);
    if (!c)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = posenc_model_rope(m, layer_type, c, err);
    if (st != POSENC_OK) {
        free(c);
        return st;
    }
    *out = c;
    return POSENC_OK;
}

void posenc_rope_config_free(posenc_rope_config *c)
{
    free(c);
}

const posenc_bias_config *posenc_model_bias(const posenc_model *m)
{
    return &m->bias;
}

size_t posenc_model_note_count(const posenc_model *m)
{
    return m->n_notes;
}

const char *posenc_model_note(const posenc_model *m, size_t i)
{
    return i < m->n_notes ? m->notes[i] : NULL;
}

/* ---- registry listing ---- */

static void family_info(const pe_family *f, posenc_family_info *o)
{
    static const char *const kinds[] = { "", "rope", "alibi", "t5", "shaw", "sinusoidal",
                                         "learned", "none", "relative", "text" };
    static const char *const pairs[] = { "half", "pairs", "repeat_interleave",
                                         "glm_interleave", "deinterleave" };
    const pe_family *d = family_resolve(f);
    if (!d)
        d = f;
    memset(o, 0, sizeof *o);
    o->name = f->name;
    o->encoding = (unsigned)d->kind < sizeof kinds / sizeof *kinds ? kinds[d->kind] : "";
    o->pairing = d->kind == PE_ROPE && (unsigned)d->pair < sizeof pairs / sizeof *pairs
                     ? pairs[d->pair] : "";
    o->alias_of = f->alias ? f->alias : "";
    o->text = d->kind == PE_TEXT && d->text ? d->text : "";
    o->notes = f->note ? f->note : d->note ? d->note : "";
    o->gguf_arch = f->gguf_arch ? f->gguf_arch : "";
    {
        const pe_arch_row *r = pe_llama_arch(o->gguf_arch);
        o->llama_rules = r && r->conv != CV_NONE;
    }
    o->source = f->src ? f->src : d->src ? d->src : "";
}

size_t posenc_family_count(void)
{
    return pe_n_families;
}

posenc_status posenc_family_get(size_t i, posenc_family_info *out, posenc_error *err)
{
    if (i >= pe_n_families)
        return posenc_seterr(err, POSENC_EINVAL, "family %zu is past the %zu registry rows", i,
                             pe_n_families);
    family_info(&pe_families[i], out);
    return POSENC_OK;
}

posenc_status posenc_family_find(const char *name, posenc_family_info *out, posenc_error *err)
{
    const pe_family *f = family_find(name);
    if (!f)
        return posenc_seterr(err, POSENC_ENOTFOUND, "unknown family '%.60s' (posenc info "
                             "--models lists them)", name ? name : "");
    family_info(f, out);
    return POSENC_OK;
}

const char *posenc_pairing_name(posenc_pairing p)
{
    static const char *const names[] = { "half", "pairs", "repeat_interleave", "glm_interleave",
                                         "deinterleave" };
    return (unsigned)p < sizeof names / sizeof *names ? names[p] : "unknown";
}
