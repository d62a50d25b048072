/* model.c: resolve a parsed Hugging Face config.json into position-encoding parameters.
 *
 * The engine follows transformers v5 (huggingface/transformers, src/transformers/
 * modeling_rope_utils.py: the rope_parameters standardisation and the ROPE_INIT_FUNCTIONS; each
 * model's configuration_*.py for its defaults): which dict holds the RoPE keys (legacy
 * rope_scaling replaces rope_parameters; `type` is an alias of `rope_type`), where rope_theta comes
 * from (inside the dict, then the top-level key, then the class default), which classes honour
 * partial_rotary_factor for rope_type default, per-layer-type dicts and text_config nesting.
 *
 * What differs by model is data: one row per model_type in lib/families.def (lib/family.h has
 * the columns). Behaviour that is not data is a named hook the row points to (the "hooks"
 * section below). No other function compares a model_type. No I/O: formats/config.c reads the
 * file. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "posenc/bias.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "family.h"
#include "model_json.h"

#define MAX_LT 8        /* layer types with their own RoPE parameters */
#define MAX_ALIAS 16    /* distinct names in layer_types */
#define MAX_NOTES 40
#define NAME_LEN 64
#define MAX_LAYERS 4096 /* num_hidden_layers that per-layer rules accept */

struct posenc_model {
    posenc_encoding enc;
    char source[256];
    char model_type[NAME_LEN];
    const pe_family *fam;             /* the registry row that resolved it */
    int generic;                      /* resolved with the generic rules (unknown model_type) */
    char warning[320];
    int64_t max_positions;
    size_t n_lt;                      /* 0: one set of parameters in rope[0] */
    char lt_name[MAX_LT][NAME_LEN];
    posenc_rope_config rope[MAX_LT];
    size_t n_alias;                   /* names in layer_types sharing rope[0] when n_lt == 0 */
    char alias[MAX_ALIAS][NAME_LEN];
    posenc_encoding alias_enc[MAX_ALIAS];
    int64_t n_layers;                 /* num_hidden_layers, 0 when not given */
    size_t n_types;                   /* entries of layer_types (one per layer) */
    unsigned char *type_of;           /* [n_types]: index into alias[] */
    size_t n_nope;
    int64_t *nope;                    /* indices of layers without RoPE */
    posenc_bias_config bias;
    size_t n_notes;
    char *notes[MAX_NOTES];
    cJSON *hp;                        /* the keys convert_hf_to_gguf.py reads: the config with its
                                         text_config merged over it (TextModel.__init__) */
};

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

const char *posenc_rope_type_name(posenc_rope_type t)
{
    switch (t) {
    case POSENC_ROPE_DEFAULT: return "default";
    case POSENC_ROPE_LINEAR: return "linear";
    case POSENC_ROPE_DYNAMIC: return "dynamic";
    case POSENC_ROPE_YARN: return "yarn";
    case POSENC_ROPE_LONGROPE: return "longrope";
    case POSENC_ROPE_LLAMA3: return "llama3";
    case POSENC_ROPE_PROPORTIONAL: return "proportional";
    }
    return "unknown";
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

typedef struct pe_ctx {
    const char *src;
    const cJSON *root;      /* the whole config */
    const cJSON *tc;        /* the (text) config the keys are read from */
    const char *tp;         /* "" or "text_config." for messages */
    const pe_family *f;     /* the registry row */
    const char *cls;        /* its name, for messages */
    posenc_model *m;
    posenc_error *err;
    int64_t max_pos;        /* max_position_embeddings, 0 when absent */
    const char *max_pos_key;
} ctx;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static posenc_status cfgerr(ctx *c, posenc_status code, const char *fmt, ...)
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
static void note(ctx *c, const char *fmt, ...)
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

static const cJSON *item(const cJSON *obj, const char *key)
{
    return obj && cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* A present, non-null key. */
static int has(const cJSON *obj, const char *key)
{
    const cJSON *it = item(obj, key);
    return it && !cJSON_IsNull(it);
}

/* Number at obj[key] (path names obj in messages, e.g. "rope_scaling."); *present = 0 when the
 * key is missing or null. */
static posenc_status get_num(ctx *c, const cJSON *obj, const char *path, const char *key,
                             double *out, int *present)
{
    const cJSON *it = item(obj, key);
    *present = 0;
    if (!it || cJSON_IsNull(it))
        return POSENC_OK;
    if (!cJSON_IsNumber(it))
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be a number", path, key);
    if (!isfinite(it->valuedouble))
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be a finite number", path, key);
    *out = it->valuedouble;
    *present = 1;
    return POSENC_OK;
}

static posenc_status get_int(ctx *c, const cJSON *obj, const char *path, const char *key,
                             int64_t min, int64_t max, int64_t *out, int *present)
{
    double v;
    posenc_status st = get_num(c, obj, path, key, &v, present);
    if (st != POSENC_OK || !*present)
        return st;
    if (v != floor(v) || v < (double)min || v > (double)max)
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be an integer in [%lld, %lld], not %.17g",
                      path, key, (long long)min, (long long)max, v);
    *out = (int64_t)v;
    return POSENC_OK;
}

/* JSON true/false (0/1 accepted too). */
static posenc_status get_bool(ctx *c, const cJSON *obj, const char *path, const char *key,
                              int *out, int *present)
{
    const cJSON *it = item(obj, key);
    *present = 0;
    if (!it || cJSON_IsNull(it))
        return POSENC_OK;
    if (cJSON_IsBool(it))
        *out = cJSON_IsTrue(it);
    else if (cJSON_IsNumber(it) && (it->valuedouble == 0 || it->valuedouble == 1))
        *out = it->valuedouble != 0;
    else
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be true or false", path, key);
    *present = 1;
    return POSENC_OK;
}

static posenc_status get_str(ctx *c, const cJSON *obj, const char *path, const char *key,
                             const char **out)
{
    const cJSON *it = item(obj, key);
    *out = NULL;
    if (!it || cJSON_IsNull(it))
        return POSENC_OK;
    if (!cJSON_IsString(it) || !it->valuestring)
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be a string", path, key);
    *out = it->valuestring;
    return POSENC_OK;
}

/* Object at obj[key]; NULL when missing or null. */
static posenc_status get_obj(ctx *c, const cJSON *obj, const char *path, const char *key,
                             const cJSON **out)
{
    const cJSON *it = item(obj, key);
    *out = NULL;
    if (!it || cJSON_IsNull(it))
        return POSENC_OK;
    if (!cJSON_IsObject(it))
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be an object or null", path, key);
    *out = it;
    return POSENC_OK;
}

#define TRY(expr)                                                                               \
    do {                                                                                        \
        posenc_status st_ = (expr);                                                             \
        if (st_ != POSENC_OK)                                                                   \
            return st_;                                                                         \
    } while (0)

static int obj_empty(const cJSON *o)
{
    return !o || !o->child;
}

/* Copy a name into a fixed buffer; error when it does not fit. */
static posenc_status copy_name(ctx *c, char *dst, const char *s, const char *what)
{
    size_t n = strlen(s);
    if (n >= NAME_LEN)
        return cfgerr(c, POSENC_ECONFIG, "%s '%.40s...' is too long", what, s);
    memcpy(dst, s, n + 1);
    return POSENC_OK;
}
/* ---- head_dim, heads, hidden size ---- */

/* hidden_size / num_attention_heads with the class renames. */
static posenc_status heads_hidden(ctx *c, int64_t *heads, int64_t *hidden, int *have)
{
    const char *tp = c->tp;
    int ph = 0, pn = 0;
    const char *hkey = "num_attention_heads", *dkey = "hidden_size";
    *heads = 0;
    *hidden = 0;
    if (!has(c->tc, hkey)) {
        if (has(c->tc, "n_head"))
            hkey = "n_head";        /* GPT-J, GPT-2, BLOOM, legacy Falcon */
        else if (has(c->tc, "num_heads"))
            hkey = "num_heads";     /* T5 */
        else if (has(c->tc, "n_heads"))
            hkey = "n_heads";       /* MPT, DistilBERT, XLM */
        else if (has(c->tc, "encoder_attention_heads"))
            hkey = "encoder_attention_heads"; /* Marian, Pegasus, FSMT */
    }
    if (!has(c->tc, dkey)) {
        if (has(c->tc, "n_embd"))
            dkey = "n_embd";        /* GPT-J, GPT-2 */
        else if (has(c->tc, "n_embed"))
            dkey = "n_embed";       /* BLOOM */
        else if (has(c->tc, "d_model"))
            dkey = "d_model";       /* T5, MPT, Marian, Pegasus, FSMT */
        else if (has(c->tc, "dim"))
            dkey = "dim";           /* DistilBERT */
        else if (has(c->tc, "emb_dim"))
            dkey = "emb_dim";       /* XLM */
    }
    TRY(get_int(c, c->tc, tp, hkey, 1, 1 << 20, heads, &pn));
    TRY(get_int(c, c->tc, tp, dkey, 1, (int64_t)1 << 30, hidden, &ph));
    /* a key the config leaves out takes the config class's default, as transformers fills it
     * (LLaVA's text_config often holds only a few keys) */
    if (!pn && c->f->heads > 0) {
        *heads = c->f->heads;
        pn = 1;
        note(c, "the attention head count (%s%s) %d is the %s class default (not in the "
                "config)", tp, hkey, c->f->heads, c->cls);
    }
    if (!ph && c->f->hidden > 0) {
        *hidden = c->f->hidden;
        ph = 1;
        note(c, "the model width (%s%s) %d is the %s class default (not in the config)", tp,
             dkey, c->f->hidden, c->cls);
    }
    *have = pn && ph;
    if (!pn)
        *heads = 0;
    if (!ph)
        *hidden = 0;
    return POSENC_OK;
}

/* Resolve head_dim from key (NULL: "head_dim"), the class default or hidden_size / heads. */
static posenc_status resolve_head_dim(ctx *c, const char *key, int *out)
{
    int64_t v, heads, hidden;
    int p, have;
    const char *k = key ? key : c->f->head_dim_key ? c->f->head_dim_key : "head_dim";
    if (c->f->hd != HD_HIDDEN) {
        TRY(get_int(c, c->tc, c->tp, k, 1, 2 * POSENC_MAX_FREQ, &v, &p));
        if (p) {
            *out = (int)v;
            return POSENC_OK;
        }
    }
    int d = c->f->hd == HD_KEY ? c->f->head_dim : 0;
    if (d > 0) {
        note(c, "head_dim %d is the %s class default (not in the config)", d, c->cls);
        *out = d;
        return POSENC_OK;
    }
    TRY(heads_hidden(c, &heads, &hidden, &have));
    if (!have)
        return cfgerr(c, POSENC_ECONFIG,
                      "cannot determine head_dim: %shead_dim, hidden_size or num_attention_heads "
                      "is missing", c->tp);
    v = hidden / heads;
    if (v < 1 || v > 2 * POSENC_MAX_FREQ)
        return cfgerr(c, POSENC_ECONFIG,
                      "head_dim = hidden_size / num_attention_heads = %lld / %lld = %lld is not in "
                      "[1, %d]", (long long)hidden, (long long)heads, (long long)v,
                      2 * POSENC_MAX_FREQ);
    *out = (int)v;
    return POSENC_OK;
}
/* ---- one RoPE parameter set ---- */

struct pe_ropesrc {
    const cJSON *dict;      /* the rope dict (legacy rope_scaling or rope_parameters[...]) */
    char dpath[128];        /* its name in messages, with trailing '.' */
    int per_layer;          /* Case 2: dict came from a per-layer-type dict */
    int truncate_default;   /* yarn truncate when the dict has none */
    const char *theta_key;  /* top-level fallback key ("rope_theta", "rope_local_base_freq", ...) */
    int theta_dict_first;   /* 1: dict value beats theta_key (the base rule) */
    double theta_default;
    const char *theta_default_src; /* NULL: the class default */
    int theta_fixed;        /* GPT-J / CodeGen: 10000 whatever the config says */
    int head_dim;
    const char *prf_key;    /* top-level partial_rotary_factor key ("rotary_pct" for NeoX) */
    double prf_default;     /* class default, 0 = none */
    int prf_default_rules;  /* 1: dict value beats top-level for default type */
    int rotary_dim_fixed;   /* >0: rotated dims come from the model's own code (MiniMax-M2) */
    int honours;            /* the default rope_type honours the partial factor */
    posenc_style style;
    posenc_pairing pairing;
};

static posenc_status parse_rope_type(ctx *c, const struct pe_ropesrc *s, posenc_rope_type *t,
                                     int *mrope)
{
    const char *name = NULL, *key = "rope_type";
    *mrope = 0;
    TRY(get_str(c, s->dict, s->dpath, "rope_type", &name));
    if (!name) {
        key = "type";
        TRY(get_str(c, s->dict, s->dpath, "type", &name));
    }
    if (!name)
        name = "default";
    if ((c->f->flags & F_PHI3) && (strcmp(name, "su") == 0 || strcmp(name, "yarn") == 0)) {
        note(c, "%s%s '%s' is read as longrope (as transformers' %s config does)", s->dpath, key,
             name, c->cls);
        name = "longrope";
    }
    if (strcmp(name, "mrope") == 0) {
        note(c, "%s%s 'mrope' is default RoPE over 3-D (t, h, w) positions split by "
                "mrope_section; text-only positions make it plain 1-D RoPE", s->dpath, key);
        name = "default"; /* Qwen2-VL: mrope is default RoPE with mrope_section */
        *mrope = 1;
    }
    static const char *const names[] = { "default", "linear", "dynamic", "yarn", "longrope",
                                         "llama3", "proportional" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (strcmp(name, names[i]) == 0) {
            *t = (posenc_rope_type)i;
            return POSENC_OK;
        }
    }
    return cfgerr(c, POSENC_ECONFIG,
                  "unknown rope_type '%.60s' (known: default, linear, dynamic, yarn, longrope, "
                  "llama3, proportional)", name);
}

static posenc_status read_factor_list(ctx *c, const struct pe_ropesrc *s, const char *key, int n,
                                      double *out, int *count)
{
    const cJSON *it = item(s->dict, key);
    if (!it || cJSON_IsNull(it))
        return cfgerr(c, POSENC_ECONFIG, "%s%s is missing (required for rope_type longrope)",
                      s->dpath, key);
    if (!cJSON_IsArray(it))
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of numbers", s->dpath, key);
    int len = cJSON_GetArraySize(it);
    if (len != n)
        return cfgerr(c, POSENC_ECONFIG, "%s%s has %d entries, expected rotary_dim/2 = %d",
                      s->dpath, key, len, n);
    int i = 0;
    for (const cJSON *e = it->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || !(e->valuedouble > 0))
            return cfgerr(c, POSENC_ECONFIG, "%s%s[%d] must be a positive number", s->dpath,
                          key, i);
        out[i] = e->valuedouble;
    }
    *count = n;
    return POSENC_OK;
}

static posenc_status read_mrope(ctx *c, const struct pe_ropesrc *s, posenc_rope_config *r,
                                int forced)
{
    int interleaved_class = (c->f->flags & F_MROPE_IL) != 0;
    const cJSON *it = item(s->dict, "mrope_section");
    if (it && !cJSON_IsNull(it)) {
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 3)
            return cfgerr(c, POSENC_ECONFIG, "%smrope_section must be a list of 3 integers",
                          s->dpath);
        int i = 0;
        for (const cJSON *e = it->child; e; e = e->next, i++) {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) ||
                e->valuedouble < 0 || e->valuedouble > POSENC_MAX_FREQ)
                return cfgerr(c, POSENC_ECONFIG, "%smrope_section must be a list of 3 integers",
                              s->dpath);
            r->mrope_section[i] = (int)e->valuedouble;
        }
        r->n_mrope_section = 3;
    } else if (c->f->mrope[0] > 0) {
        const int *d = c->f->mrope;
        memcpy(r->mrope_section, d, 3 * sizeof *d);
        r->n_mrope_section = 3;
        note(c, "mrope_section [%d, %d, %d] is the %s default (not in the config)", d[0], d[1],
             d[2], c->cls);
    } else if (forced) {
        return cfgerr(c, POSENC_ECONFIG, "%smrope_section is missing (required for mrope)",
                      s->dpath);
    }
    if (!r->n_mrope_section)
        return POSENC_OK;
    int flag = 0, p = 0;
    TRY(get_bool(c, s->dict, s->dpath, "mrope_interleaved", &flag, &p));
    r->mrope_interleaved = interleaved_class || (p && flag);
    int sum = r->mrope_section[0] + r->mrope_section[1] + r->mrope_section[2];
    if (sum != r->rotary_dim / 2)
        return cfgerr(c, POSENC_ECONFIG,
                      "%smrope_section [%d, %d, %d] sums to %d, expected rotary_dim/2 = %d",
                      s->dpath, r->mrope_section[0], r->mrope_section[1], r->mrope_section[2], sum,
                      r->rotary_dim / 2);
    return POSENC_OK;
}

/* Every value derived from the keys must be finite and fit the float32 tables: compute the
 * parameters once and name the keys when they do not (a yarn mscale of 1e308, theta 1e-300). */
static posenc_status check_derived(ctx *c, const struct pe_ropesrc *s,
                                   const posenc_rope_config *r)
{
    posenc_rope_params *p = malloc(sizeof *p);
    if (!p)
        return cfgerr(c, POSENC_ENOMEM, "out of memory");
    posenc_error e = { 0 };
    int64_t L = r->type == POSENC_ROPE_DYNAMIC || r->type == POSENC_ROPE_LONGROPE
                    ? (r->max_position_embeddings > 0 ? 2 * r->max_position_embeddings : 0) : 0;
    posenc_status st = posenc_rope_params_compute(r, 0, p, &e);
    if (st == POSENC_OK && L > 0) /* the long-sequence parameters too */
        st = posenc_rope_params_compute(r, L, p, &e);
    free(p);
    if (st == POSENC_OK)
        return POSENC_OK;
    const char *keys = strstr(e.msg, "attention scaling") ? "factor, mscale, mscale_all_dim, attention_factor"
                       : strstr(e.msg, "softmax") ? "factor, mscale_all_dim"
                       : strstr(e.msg, "inverse frequency") ? r->theta_source
                       : "the rope parameters";
    return cfgerr(c, POSENC_ECONFIG, "%s (check %s%s)", e.msg,
                  strstr(e.msg, "inverse frequency") ? "" : s->dpath, keys);
}

static posenc_status resolve_rope(ctx *c, const struct pe_ropesrc *s, posenc_rope_config *r)
{
    const cJSON *d = s->dict;
    const char *dp = s->dpath, *tp = c->tp;
    int p, mrope;
    double v;
    char buf[160];

    memset(r, 0, sizeof *r);
    TRY(parse_rope_type(c, s, &r->type, &mrope));
    int scaled = r->type != POSENC_ROPE_DEFAULT;

    /* theta: inside the dict, then the top-level key, then the class default */
    if (s->theta_fixed) {
        r->theta = 10000.0;
        snprintf(r->theta_source, sizeof r->theta_source, "fixed (%.40s)", c->cls);
        if (has(c->tc, "rope_theta") || has(d, "rope_theta"))
            note(c, "rope_theta is ignored: %s hard-codes theta 10000", c->cls);
    } else {
        int found = 0;
        if (s->theta_dict_first) {
            TRY(get_num(c, d, dp, "rope_theta", &v, &p));
            if (p) {
                r->theta = v;
                snprintf(buf, sizeof buf, "%srope_theta", dp);
                found = 1;
            }
        }
        if (!found && s->theta_key) {
            TRY(get_num(c, c->tc, tp, s->theta_key, &v, &p));
            if (p) {
                r->theta = v;
                snprintf(buf, sizeof buf, "%s%s", tp, s->theta_key);
                found = 1;
            }
        }
        if (!found && !s->theta_dict_first) {
            TRY(get_num(c, d, dp, "rope_theta", &v, &p));
            if (p) {
                r->theta = v;
                snprintf(buf, sizeof buf, "%srope_theta", dp);
                found = 1;
            }
        }
        if (!found && s->theta_default_src) {
            r->theta = s->theta_default;
            snprintf(buf, sizeof buf, "%s", s->theta_default_src);
        } else if (!found) {
            r->theta = s->theta_default;
            snprintf(buf, sizeof buf, "default");
            note(c, "theta %g is the %s class default (no %s in the config)", s->theta_default,
                 c->cls, s->theta_key ? s->theta_key : "rope_theta");
        }
        snprintf(r->theta_source, sizeof r->theta_source, "%.63s", buf);
        if (!(r->theta > 0))
            return cfgerr(c, POSENC_ECONFIG, "%s must be > 0", buf);
        if (s->theta_key && strcmp(s->theta_key, "rope_theta") != 0 && has(c->tc, "rope_theta"))
            note(c, "%srope_theta does not apply to the layers whose theta is %s%s", tp, tp,
                 s->theta_key);
    }

    /* partial_rotary_factor: scaled inits re-read the top-level attribute (it wins); the
     * default init uses the dict value (PreTrainedConfig.__post_init__: leftover kwargs become attributes after standardize_rope_params) */
    double ptop = 0, pdict = 0;
    int htop = 0, hdict = 0;
    if (s->prf_key)
        TRY(get_num(c, c->tc, tp, s->prf_key, &ptop, &htop));
    TRY(get_num(c, d, dp, "partial_rotary_factor", &pdict, &hdict));
    double prf = 1.0;
    const char *prf_src = NULL;
    if (scaled || !s->prf_default_rules) {
        if (htop)
            prf = ptop, prf_src = s->prf_key;
        else if (hdict)
            prf = pdict, prf_src = "partial_rotary_factor";
    } else {
        if (hdict)
            prf = pdict, prf_src = "partial_rotary_factor";
        else if (htop)
            prf = ptop, prf_src = s->prf_key;
    }
    if (!prf_src && s->prf_default > 0) {
        prf = s->prf_default;
        prf_src = "class default";
    }
    if (!(prf > 0 && prf <= 1))
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be in (0, 1], not %g",
                      prf_src == s->prf_key ? tp : dp,
                      prf_src == s->prf_key && s->prf_key ? s->prf_key : "partial_rotary_factor",
                      prf);
    r->partial_rotary_factor = prf;
    r->head_dim = s->head_dim;
    r->style = s->style;
    r->pairing = s->pairing;
    if (s->head_dim < 2)
        return cfgerr(c, POSENC_ECONFIG, "head_dim must be >= 2, not %d", s->head_dim);

    if (r->type == POSENC_ROPE_PROPORTIONAL) {
        /* Gemma 4: the table is head_dim wide; int(prf*hd // 2) pairs rotate with exponents over
         * head_dim, the rest get frequency 0 */
        r->rotary_dim = s->head_dim;
        r->exponent_dim = s->head_dim;
        int n = (int)floor(prf * s->head_dim / 2);
        if (n < 1)
            return cfgerr(c, POSENC_ECONFIG,
                          "%spartial_rotary_factor %g leaves no rotated pair of head_dim %d", dp,
                          prf, s->head_dim);
    } else {
        int honours = scaled || s->honours;
        if (s->rotary_dim_fixed > 0)
            r->rotary_dim = s->rotary_dim_fixed;
        else if (honours)
            r->rotary_dim = (int)(s->head_dim * prf); /* int() truncates, as Python does */
        else
            r->rotary_dim = s->head_dim;
        if (!honours && prf != 1.0 && s->rotary_dim_fixed <= 0)
            note(c, "partial_rotary_factor %g is ignored: %s's default RoPE rotates all %d "
                    "head_dim dims (scaled rope types would rotate int(%d * %g) = %d)",
                 prf, c->cls, s->head_dim, s->head_dim, prf, (int)(s->head_dim * prf));
        if (r->rotary_dim < 2 || r->rotary_dim % 2 || r->rotary_dim > s->head_dim)
            return cfgerr(c, POSENC_ECONFIG,
                          "rotary dimension %d (head_dim %d, partial_rotary_factor %g) must be "
                          "even, >= 2 and <= head_dim", r->rotary_dim, s->head_dim, prf);
        r->exponent_dim = r->rotary_dim;
    }
    int nfreq = r->rotary_dim / 2;

    /* max_position_embeddings and M0 */
    r->max_position_embeddings = c->max_pos;
    int64_t m0 = 0;
    int hm0d = 0, hm0t = 0;
    int64_t m0d = 0, m0t = 0;
    TRY(get_int(c, d, dp, "original_max_position_embeddings", 1, (int64_t)1 << 53, &m0d, &hm0d));
    TRY(get_int(c, c->tc, tp, "original_max_position_embeddings", 1, (int64_t)1 << 53, &m0t,
                &hm0t));
    int is_phi3 = (c->f->flags & F_PHI3) != 0;
    if (is_phi3 && !hm0t) {
        m0t = 4096;
        hm0t = 1;
        if (r->type == POSENC_ROPE_LONGROPE)
            note(c, "original_max_position_embeddings 4096 is the %s class default (a field that "
                    "overrides %soriginal_max_position_embeddings)", c->cls, dp);
    }
    int needs_m0 = r->type == POSENC_ROPE_LLAMA3 || r->type == POSENC_ROPE_YARN ||
                   r->type == POSENC_ROPE_LONGROPE;
    if (needs_m0 && !s->per_layer && hm0t)
        m0 = m0t;                   /* the top-level attribute overwrites the dict (Phi-3 rule) */
    else if (hm0d)
        m0 = m0d;
    else if (hm0t && !(needs_m0 && s->per_layer)) /* per-layer dicts: setdefault(M) only */
        m0 = m0t;
    else if (c->max_pos > 0) {
        m0 = c->max_pos;
        if (needs_m0)
            note(c, "original_max_position_embeddings filled from max_position_embeddings %lld "
                    "(as transformers does)", (long long)c->max_pos);
    } else if (needs_m0) {
        return cfgerr(c, POSENC_ECONFIG,
                      "%soriginal_max_position_embeddings and %smax_position_embeddings are "
                      "missing (rope_type %s needs one)", dp, tp, posenc_rope_type_name(r->type));
    }
    r->original_max_position_embeddings = m0;

    /* type-specific keys */
    r->factor = 1.0;
    const cJSON *fit = item(d, "factor");
    switch (r->type) {
    case POSENC_ROPE_DEFAULT:
        break;
    case POSENC_ROPE_LINEAR:
    case POSENC_ROPE_DYNAMIC:
    case POSENC_ROPE_LLAMA3:
    case POSENC_ROPE_YARN:
        if (!fit)
            return cfgerr(c, POSENC_ECONFIG, "%sfactor is missing (required for rope_type %s)",
                          dp, posenc_rope_type_name(r->type));
        TRY(get_num(c, d, dp, "factor", &v, &p));
        if (p) {
            r->factor = v;
        } else if (r->type == POSENC_ROPE_YARN) {
            r->factor = (double)c->max_pos / (double)m0;
            note(c, "%sfactor is null: using max_position_embeddings / "
                    "original_max_position_embeddings = %g", dp, r->factor);
        } else {
            return cfgerr(c, POSENC_ECONFIG, "%sfactor is missing (required for rope_type %s)",
                          dp, posenc_rope_type_name(r->type));
        }
        break;
    case POSENC_ROPE_LONGROPE:
        TRY(get_num(c, d, dp, "factor", &v, &p));
        if (p) {
            r->factor = v;
        } else {
            if (c->max_pos <= 0)
                return cfgerr(c, POSENC_ECONFIG,
                              "%sfactor and %smax_position_embeddings are missing (longrope "
                              "needs one)", dp, tp);
            r->factor = (double)c->max_pos / (double)m0;
        }
        break;
    case POSENC_ROPE_PROPORTIONAL:
        TRY(get_num(c, d, dp, "factor", &v, &p));
        if (p)
            r->factor = v;
        break;
    }
    if (!(r->factor > 0) || !isfinite(r->factor))
        return cfgerr(c, POSENC_ECONFIG, "%sfactor must be > 0", dp);

    if (r->type == POSENC_ROPE_DYNAMIC) {
        if (c->max_pos <= 0)
            return cfgerr(c, POSENC_ECONFIG,
                          "%smax_position_embeddings is missing (required for rope_type dynamic)",
                          tp);
        note(c, "dynamic: theta is scaled once the sequence is longer than "
                "max_position_embeddings %lld; without --seq-len the load-time (unscaled) "
                "frequencies are reported", (long long)c->max_pos);
    }
    if (r->type == POSENC_ROPE_LLAMA3) {
        static const char *const keys[] = { "low_freq_factor", "high_freq_factor" };
        double *dst[] = { &r->low_freq_factor, &r->high_freq_factor };
        for (int i = 0; i < 2; i++) {
            TRY(get_num(c, d, dp, keys[i], dst[i], &p));
            if (!p)
                return cfgerr(c, POSENC_ECONFIG, "%s%s is missing (required for rope_type llama3)",
                              dp, keys[i]);
            if (!(*dst[i] > 0))
                return cfgerr(c, POSENC_ECONFIG, "%s%s must be > 0", dp, keys[i]);
        }
    }
    if (r->type == POSENC_ROPE_YARN) {
        TRY(get_num(c, d, dp, "beta_fast", &v, &p));
        r->beta_fast = p && v != 0 ? v : 32.0;    /* `or 32` */
        TRY(get_num(c, d, dp, "beta_slow", &v, &p));
        r->beta_slow = p && v != 0 ? v : 1.0;     /* `or 1` */
        if (!(r->beta_fast > 0) || !(r->beta_slow > 0))
            return cfgerr(c, POSENC_ECONFIG, "%sbeta_fast and beta_slow must be > 0", dp);
        int t = 1;
        r->truncate = s->truncate_default;
        TRY(get_bool(c, d, dp, "truncate", &t, &p));
        if (p && !s->per_layer)
            r->truncate = t;
        else if (p && t != r->truncate)
            note(c, "%struncate is not read: transformers reads truncate from the top level of "
                    "rope_parameters, which has none for per-layer-type dicts (truncate true)", dp);
        TRY(get_num(c, d, dp, "mscale", &v, &p));
        r->mscale = p ? v : 0;
        TRY(get_num(c, d, dp, "mscale_all_dim", &v, &p));
        r->mscale_all_dim = p ? v : 0;
        if (r->mscale < 0 || r->mscale_all_dim < 0)
            return cfgerr(c, POSENC_ECONFIG, "%smscale and mscale_all_dim must be >= 0", dp);
    }
    if (r->type == POSENC_ROPE_YARN || r->type == POSENC_ROPE_LONGROPE) {
        TRY(get_num(c, d, dp, "attention_factor", &v, &p));
        if (p) {
            if (!(v > 0))
                return cfgerr(c, POSENC_ECONFIG, "%sattention_factor must be > 0", dp);
            r->attention_factor = v;
            r->has_attention_factor = 1;
        }
    }
    if (r->type == POSENC_ROPE_LONGROPE) {
        TRY(read_factor_list(c, s, "short_factor", nfreq, r->short_factor, &r->n_short_factor));
        TRY(read_factor_list(c, s, "long_factor", nfreq, r->long_factor, &r->n_long_factor));
        note(c, "longrope: long_factor applies once the sequence is longer than "
                "original_max_position_embeddings %lld; without --seq-len the load-time "
                "short_factor frequencies are reported (attention scaling applies to both)",
             (long long)m0);
    }
    if (needs_m0 && c->max_pos > 0 && m0 > c->max_pos)
        note(c, "original_max_position_embeddings %lld exceeds max_position_embeddings %lld",
             (long long)m0, (long long)c->max_pos);
    TRY(read_mrope(c, s, r, mrope));
    return check_derived(c, s, r);
}
/* ---- per-model set-up ---- */

static void ropesrc_init(ctx *c, struct pe_ropesrc *s, const cJSON *dict, const char *dictname)
{
    memset(s, 0, sizeof *s);
    s->dict = dict;
    snprintf(s->dpath, sizeof s->dpath, "%s%s.", c->tp, dictname);
    s->truncate_default = 1;
    s->theta_key = c->f->theta_key ? c->f->theta_key : "rope_theta";
    s->theta_dict_first = 1;
    s->theta_default = c->f->theta > 0 ? c->f->theta : 10000.0;
    s->theta_fixed = c->f->theta_fixed;
    s->prf_key = c->f->rot == ROT_PCT ? "rotary_pct" : "partial_rotary_factor";
    s->prf_default = c->f->prf;
    s->prf_default_rules = c->f->rot != ROT_PCT;
    s->honours = c->f->honours;
    s->style = c->f->pair == PAIR_HALF ? POSENC_STYLE_NEOX : POSENC_STYLE_GPTJ;
    s->pairing = (posenc_pairing)c->f->pair;
}

static posenc_status add_alias_names(ctx *c)
{
    const char *key = c->f->types_key && has(c->tc, c->f->types_key) ? c->f->types_key
                                                                       : "layer_types";
    const cJSON *lt = item(c->tc, key);
    if (!lt || cJSON_IsNull(lt))
        return POSENC_OK;
    if (!cJSON_IsArray(lt))
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of strings", c->tp, key);
    posenc_model *m = c->m;
    int n = cJSON_GetArraySize(lt);
    if (n > MAX_LAYERS)
        return cfgerr(c, POSENC_ECONFIG, "%slayer_types has %d entries (at most %d)", c->tp, n,
                      MAX_LAYERS);
    free(m->type_of);
    m->n_types = 0;
    m->type_of = n > 0 ? malloc((size_t)n) : NULL;
    if (n > 0 && !m->type_of)
        return cfgerr(c, POSENC_ENOMEM, "out of memory");
    for (const cJSON *e = lt->child; e; e = e->next) {
        if (!cJSON_IsString(e) || !e->valuestring)
            return cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of strings", c->tp, key);
        size_t i;
        for (i = 0; i < m->n_alias; i++)
            if (strcmp(m->alias[i], e->valuestring) == 0)
                break;
        if (i == m->n_alias) {
            if (m->n_alias >= MAX_ALIAS)
                return cfgerr(c, POSENC_ECONFIG, "%slayer_types has more than %d distinct names",
                              c->tp, MAX_ALIAS);
            TRY(copy_name(c, m->alias[m->n_alias], e->valuestring, "layer type"));
            m->alias_enc[m->n_alias] = POSENC_ENC_ROPE;
            m->n_alias++;
        }
        m->type_of[m->n_types++] = (unsigned char)i;
    }
    return POSENC_OK;
}

static int in_aliases(const posenc_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_alias; i++)
        if (strcmp(m->alias[i], name) == 0)
            return 1;
    return 0;
}

static posenc_status add_layer(ctx *c, const char *name, const struct pe_ropesrc *s)
{
    posenc_model *m = c->m;
    if (m->n_lt >= MAX_LT)
        return cfgerr(c, POSENC_ECONFIG, "more than %d RoPE layer types", MAX_LT);
    TRY(copy_name(c, m->lt_name[m->n_lt], name, "layer type"));
    TRY(resolve_rope(c, s, &m->rope[m->n_lt]));
    m->n_lt++;
    return POSENC_OK;
}

/* The standard path: legacy rope_scaling or rope_parameters, flat or per layer type. */
static posenc_status setup_generic(ctx *c, struct pe_ropesrc *base)
{
    const cJSON *rs, *rp, *dict;
    const char *dname;
    TRY(get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    cJSON *def = NULL;
    if (!obj_empty(rs)) {
        dict = rs;
        dname = "rope_scaling";
        if (!obj_empty(rp))
            note(c, "legacy rope_scaling replaces rope_parameters (as transformers does)");
    } else if (obj_empty(rp) && c->f->rope_default) {
        /* the config class installs its own rope_parameters when the config has none */
        def = cJSON_Parse(c->f->rope_default);
        if (!def)
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
        dict = def;
        dname = "rope_parameters";
        const cJSON *rt = item(def, "rope_type") ? item(def, "rope_type") : item(def, "type");
        note(c, "no rope parameters in the config: the %s class default (%s%s) applies", c->cls,
             rt && cJSON_IsString(rt) ? rt->valuestring : "default",
             has(def, "rope_theta") ? ", with its own rope_theta" : "");
        if (has(def, "rope_theta") && has(c->tc, "rope_theta"))
            note(c, "%srope_theta is ignored: the class default rope_parameters carry their "
                    "own", c->tp);
    } else {
        dict = rp;
        dname = "rope_parameters";
    }
    /* Case 2: every key of the dict is a layer type */
    int per_layer = !def && c->m->n_alias > 0 && !obj_empty(dict);
    for (const cJSON *e = dict ? dict->child : NULL; per_layer && e; e = e->next)
        if (!e->string || !in_aliases(c->m, e->string))
            per_layer = 0;
    if (!per_layer && c->m->n_alias == 0 && !obj_empty(dict) && !has(dict, "rope_type") &&
        !has(dict, "type")) {
        int all_obj = 1;
        for (const cJSON *e = dict->child; e; e = e->next)
            all_obj &= cJSON_IsObject(e);
        if (all_obj)
            note(c, "%s looks keyed by layer type but the config has no layer_types: read as "
                    "one dict (as transformers does), the nested entries are ignored", dname);
    }
    if (!per_layer) {
        struct pe_ropesrc s = *base;
        s.dict = dict;
        snprintf(s.dpath, sizeof s.dpath, "%s%s.", c->tp, dname);
        posenc_status st = resolve_rope(c, &s, &c->m->rope[0]);
        cJSON_Delete(def);
        return st;
    }
    for (const cJSON *e = dict->child; e; e = e->next) {
        struct pe_ropesrc s = *base;
        if (!cJSON_IsObject(e))
            return cfgerr(c, POSENC_ECONFIG, "%s%s.%s must be an object", c->tp, dname,
                          e->string);
        s.dict = e;
        s.per_layer = 1;
        snprintf(s.dpath, sizeof s.dpath, "%s%s.%.60s.", c->tp, dname, e->string);
        TRY(add_layer(c, e->string, &s));
    }
    return POSENC_OK;
}

/* dict.update(rope_scaling), as the configs that merge a legacy rope_scaling into one layer
 * type's parameters do: a new object (caller frees with cJSON_Delete), or NULL without memory. */
static cJSON *merge_scaling(const cJSON *dict, const cJSON *rs)
{
    cJSON *merged = dict ? cJSON_Duplicate(dict, 1) : cJSON_CreateObject();
    for (const cJSON *e = rs ? rs->child : NULL; merged && e; e = e->next) {
        cJSON *dup = cJSON_Duplicate(e, 1);
        if (!dup) {
            cJSON_Delete(merged);
            return NULL;
        }
        if (cJSON_GetObjectItemCaseSensitive(merged, e->string))
            cJSON_ReplaceItemInObjectCaseSensitive(merged, e->string, dup);
        else
            cJSON_AddItemToObject(merged, e->string, dup);
    }
    return merged;
}

/* Gemma 3: full_attention gets rope_theta (1e6) + legacy rope_scaling, sliding_attention gets
 * rope_local_base_freq (1e4). */
static posenc_status hook_gemma3(ctx *c, struct pe_ropesrc *base, int *done)
{
    *done = 1;
    const cJSON *rs, *rp, *full = NULL, *slide = NULL;
    TRY(get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    if (rp) {
        TRY(get_obj(c, rp, "rope_parameters.", "full_attention", &full));
        TRY(get_obj(c, rp, "rope_parameters.", "sliding_attention", &slide));
        if (!full && !slide && !obj_empty(rp))
            full = rp; /* a flat dict: the global layers' parameters */
    }
    cJSON *merged = NULL;
    if (!obj_empty(rs) && !(merged = merge_scaling(full, rs))) /* full_attention.update() */
        return cfgerr(c, POSENC_ENOMEM, "out of memory");
    struct pe_ropesrc s = *base;
    s.dict = merged ? merged : full;
    s.per_layer = 1;
    snprintf(s.dpath, sizeof s.dpath, "%s%s.", c->tp,
             merged ? "rope_scaling" : "rope_parameters.full_attention");
    s.theta_default = 1e6;
    posenc_status st = add_layer(c, "full_attention", &s);
    cJSON_Delete(merged);
    TRY(st);
    s = *base;
    s.dict = slide;
    s.per_layer = 1;
    snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.sliding_attention.", c->tp);
    s.theta_key = "rope_local_base_freq";
    s.theta_default = 1e4;
    return add_layer(c, "sliding_attention", &s);
}

/* Gemma 4: rope_parameters per layer type (default: sliding default 1e4, full proportional 0.25
 * 1e6); full layers use global_head_dim. */
static posenc_status hook_gemma4(ctx *c, struct pe_ropesrc *base, int *done)
{
    *done = 1;
    const cJSON *rp, *full = NULL, *slide = NULL;
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    if (rp) {
        TRY(get_obj(c, rp, "rope_parameters.", "full_attention", &full));
        TRY(get_obj(c, rp, "rope_parameters.", "sliding_attention", &slide));
    }
    if (has(c->tc, "rope_scaling"))
        note(c, "rope_scaling is ignored: gemma4_text has no legacy conversion");
    int64_t ghd;
    int p;
    TRY(get_int(c, c->tc, c->tp, "global_head_dim", 2, 2 * POSENC_MAX_FREQ, &ghd, &p));
    if (!p) {
        ghd = 512;
        note(c, "global_head_dim 512 is the gemma4_text class default (not in the config)");
    }
    cJSON *deffull = NULL;
    if (!full) {
        deffull = cJSON_Parse("{\"rope_type\":\"proportional\",\"partial_rotary_factor\":0.25,"
                              "\"rope_theta\":1000000.0}");
        if (!deffull)
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
        note(c, "full_attention parameters are the gemma4_text default (proportional, "
                "partial_rotary_factor 0.25, theta 1e6)");
    }
    struct pe_ropesrc s = *base;
    s.dict = full ? full : deffull;
    s.per_layer = 1;
    s.head_dim = (int)ghd;
    s.prf_default_rules = 1;
    s.theta_default = 1e6;
    snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.full_attention.", c->tp);
    posenc_status st = add_layer(c, "full_attention", &s);
    cJSON_Delete(deffull);
    TRY(st);
    s = *base;
    s.dict = slide;
    s.per_layer = 1;
    s.theta_default = 1e4;
    snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.sliding_attention.", c->tp);
    return add_layer(c, "sliding_attention", &s);
}

/* MiMo-V2-Flash (remote code): full layers rope_theta, SWA layers swa_rope_theta. */
static posenc_status hook_mimo(ctx *c, struct pe_ropesrc *base, int *done)
{
    *done = 1;
    const cJSON *rs, *rp;
    TRY(get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    const cJSON *dict = !obj_empty(rs) ? rs : rp;
    struct pe_ropesrc s = *base;
    s.dict = dict;
    snprintf(s.dpath, sizeof s.dpath, "%s%s.", c->tp, !obj_empty(rs) ? "rope_scaling"
                                                                     : "rope_parameters");
    TRY(add_layer(c, "full_attention", &s));
    int swa_hd = base->head_dim;
    int64_t v;
    int p;
    TRY(get_int(c, c->tc, c->tp, "swa_head_dim", 2, 2 * POSENC_MAX_FREQ, &v, &p));
    if (p)
        swa_hd = (int)v;
    s.head_dim = swa_hd;
    s.theta_key = "swa_rope_theta";
    s.theta_dict_first = 0; /* swa_rope_theta beats a theta in the shared dict */
    s.theta_default = 1e4;
    TRY(add_layer(c, "sliding_attention", &s));
    note(c, "sliding_attention layers (hybrid_layer_pattern 1) use swa_rope_theta, as the model's "
            "own code does (mimo_v2_flash is not in transformers)");
    return POSENC_OK;
}

/* ---- non-rotary encodings ---- */

static posenc_status fill_heads(ctx *c)
{
    int64_t heads, hidden;
    int have;
    TRY(heads_hidden(c, &heads, &hidden, &have));
    c->m->bias.heads = (int)heads;
    c->m->bias.d_model = (int)hidden;
    /* informational here: RoPE models validate head_dim in resolve_head_dim */
    const cJSON *hd = item(c->tc, "head_dim");
    if (hd && cJSON_IsNumber(hd) && hd->valuedouble >= 1 && hd->valuedouble <= (1 << 24) &&
        hd->valuedouble == floor(hd->valuedouble))
        c->m->bias.head_dim = (int)hd->valuedouble;
    else if (heads > 0 && hidden > 0)
        c->m->bias.head_dim = (int)(hidden / heads);
    return POSENC_OK;
}

static posenc_status read_max(ctx *c, const char *key, int64_t def)
{
    int64_t v = 0;
    int p;
    TRY(get_int(c, c->tc, c->tp, key, 1, (int64_t)1 << 53, &v, &p));
    c->m->max_positions = p ? v : def;
    c->m->bias.max_positions = c->m->max_positions;
    return POSENC_OK;
}

static posenc_status need_heads(ctx *c, const char *what)
{
    if (c->m->bias.heads < 1)
        return cfgerr(c, POSENC_ECONFIG, "%snum_attention_heads is missing (needed for %s)",
                      c->tp, what);
    if (c->m->bias.heads > 65536)
        return cfgerr(c, POSENC_ECONFIG, "%d attention heads is too many for %s",
                      c->m->bias.heads, what);
    return POSENC_OK;
}

static posenc_status setup_alibi(ctx *c, posenc_alibi_kind kind)
{
    c->m->enc = POSENC_ENC_ALIBI;
    c->m->bias.alibi_kind = kind;
    c->m->bias.alibi_bias_max = 8.0;
    TRY(fill_heads(c));
    return need_heads(c, "ALiBi");
}

static posenc_status setup_t5(ctx *c)
{
    posenc_model *m = c->m;
    int64_t v;
    int p, b;
    m->enc = POSENC_ENC_T5;
    TRY(get_int(c, c->tc, c->tp, "num_heads", 1, 65536, &v, &p));
    m->bias.heads = p ? (int)v : 8;
    TRY(get_int(c, c->tc, c->tp, "d_model", 1, 1 << 24, &v, &p));
    m->bias.d_model = p ? (int)v : 512;
    TRY(get_int(c, c->tc, c->tp, "d_kv", 1, 1 << 24, &v, &p));
    m->bias.head_dim = p ? (int)v : 64;
    TRY(get_int(c, c->tc, c->tp, "relative_attention_num_buckets", 1, 1 << 20, &v, &p));
    m->bias.num_buckets = p ? (int)v : 32;
    TRY(get_int(c, c->tc, c->tp, "relative_attention_max_distance", 1, 1 << 30, &v, &p));
    m->bias.max_distance = p ? (int)v : 128;
    TRY(get_bool(c, c->tc, c->tp, "is_decoder", &b, &p));
    m->bias.is_decoder = p ? b : 0;
    posenc_error e = { 0 };
    if (posenc_t5_check(!m->bias.is_decoder, m->bias.num_buckets, m->bias.max_distance, &e) !=
        POSENC_OK)
        return cfgerr(c, POSENC_ECONFIG, "relative_attention_num_buckets %d / "
                      "relative_attention_max_distance %d: %s", m->bias.num_buckets,
                      m->bias.max_distance, e.msg);
    if (!m->bias.is_decoder)
        note(c, "is_decoder is false: encoder (bidirectional) buckets; the decoder stack of an "
                "encoder-decoder model uses causal buckets (posenc gen --decoder writes them; "
                "posenc verify checks both)");
    return POSENC_OK;
}

static posenc_status setup_learned(ctx *c, const char *tensor, const char *max_key,
                                   int64_t max_def)
{
    posenc_model *m = c->m;
    m->enc = POSENC_ENC_LEARNED;
    TRY(fill_heads(c));
    TRY(read_max(c, max_key, max_def));
    snprintf(m->bias.learned_tensor, sizeof m->bias.learned_tensor, "%s", tensor ? tensor : "");
    return POSENC_OK;
}

/* The row of position 0 in a learned or fairseq table: .offset, or padding_idx + 1. */
static posenc_status table_offset(ctx *c)
{
    posenc_model *m = c->m;
    if (c->f->offset == OFF_PAD) {
        int64_t v;
        int p;
        TRY(get_int(c, c->tc, c->tp, "pad_token_id", 0, 1 << 30, &v, &p));
        m->bias.padding_idx = p ? (int)v : 1;
        m->bias.position_offset = m->bias.padding_idx + 1;
        note(c, "%s positions start at row padding_idx + 1 = %d of the table", c->cls,
             m->bias.position_offset);
    } else if (c->f->offset > 0) {
        m->bias.position_offset = c->f->offset;
        note(c, "%s's table has %d extra rows: position p uses row p + %d", c->cls,
             c->f->offset, c->f->offset);
    }
    return POSENC_OK;
}

/* Fixed sinusoidal tables in the variant of the row. */
static posenc_status setup_sinusoidal(ctx *c, int64_t max_def, int padding_idx)
{
    posenc_model *m = c->m;
    m->enc = POSENC_ENC_SINUSOIDAL;
    m->bias.sinusoidal_variant = (posenc_sinusoidal_variant)c->f->sin;
    TRY(fill_heads(c));
    if (m->bias.d_model < 1)
        return cfgerr(c, POSENC_ECONFIG, "the model width (d_model/dim/hidden_size) is missing");
    TRY(read_max(c, c->f->maxpos_key ? c->f->maxpos_key : "max_position_embeddings", max_def));
    m->bias.padding_idx = padding_idx;
    return POSENC_OK;
}

/* A config without any RoPE key says nothing about rotation (NoPE, learned, ...). */
static int has_rope_keys(const cJSON *tc)
{
    static const char *const keys[] = { "rope_theta", "rope_parameters", "rope_scaling",
                                        "partial_rotary_factor", "qk_rope_head_dim", NULL };
    for (const char *const *k = keys; *k; k++)
        if (has(tc, *k))
            return 1;
    for (const cJSON *e = tc ? tc->child : NULL; e; e = e->next)
        if (e->string && strncmp(e->string, "rotary_", 7) == 0 && !cJSON_IsNull(e))
            return 1;
    return 0;
}

/* NoPE: fill what the bias config can say and note RoPE keys that are ignored. */
static posenc_status setup_none(ctx *c)
{
    c->m->enc = POSENC_ENC_NONE;
    TRY(fill_heads(c));
    TRY(read_max(c, c->f->maxpos_key ? c->f->maxpos_key : "max_position_embeddings",
                 c->f->maxpos));
    if (has_rope_keys(c->tc))
        note(c, "%s attention layers use no position encoding (NoPE): the RoPE keys in the "
                "config are ignored", c->cls);
    else
        note(c, "%s attention layers use no position encoding (NoPE)", c->cls);
    return POSENC_OK;
}

/* ---- hooks: behaviour that is not data, named by registry rows ---- */

static posenc_status setup_rope(ctx *c);
static posenc_status setup_row(ctx *c);
static posenc_status add_nope(ctx *c, int64_t i);

/* ESM (models/esm/modeling_esm.py EsmEmbeddings, EsmRotaryEmbedding): position_embedding_type
 * rotary (ESM-2: rotate_half over head_dim, rope_theta) or absolute (a learned table with
 * RoBERTa's padding offset). */
static posenc_status hook_esm(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    const char *pet;
    TRY(get_str(c, c->tc, c->tp, "position_embedding_type", &pet));
    if (pet && strcmp(pet, "rotary") == 0) {
        *done = 1;
        return setup_rope(c);
    }
    if (pet && strcmp(pet, "absolute") != 0)
        return cfgerr(c, POSENC_EUNSUPPORTED, "position_embedding_type '%.40s' (relative "
                      "distance embeddings) is not generated by posenc", pet);
    *done = 1;
    TRY(setup_learned(c, c->f->tensor, "max_position_embeddings", c->f->maxpos));
    TRY(table_offset(c));
    return POSENC_OK;
}

/* DBRX (remote code databricks/dbrx-base modeling_dbrx.py; transformers v4 models/dbrx):
 * theta is attn_config.rope_theta. transformers v5 reads only rope_parameters. */
static posenc_status hook_dbrx(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    const cJSON *ac;
    double v;
    int p;
    TRY(get_obj(c, c->tc, c->tp, "attn_config", &ac));
    TRY(get_num(c, ac, "attn_config.", "rope_theta", &v, &p));
    if (p && !has(c->tc, "rope_theta") && obj_empty(item(c->tc, "rope_parameters"))) {
        if (!(v > 0))
            return cfgerr(c, POSENC_ECONFIG, "attn_config.rope_theta must be > 0");
        base->theta_default = v;
        base->theta_default_src = "attn_config.rope_theta";
        note(c, "theta %g from attn_config.rope_theta, as DBRX's own code reads it; "
                "transformers v5 reads only rope_parameters and would use 10000", v);
    }
    return POSENC_OK;
}

/* ModernBERT (models/modernbert/configuration_modernbert.py convert_rope_params_to_dict):
 * full_attention layers theta global_rope_theta (160000), sliding_attention layers
 * local_rope_theta (10000); a legacy rope_scaling updates both. */
static posenc_status hook_modernbert(ctx *c, struct pe_ropesrc *base, int *done)
{
    const cJSON *rs, *rp, *full = NULL, *slide = NULL;
    *done = 1;
    TRY(get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    if (rp) {
        TRY(get_obj(c, rp, "rope_parameters.", "full_attention", &full));
        TRY(get_obj(c, rp, "rope_parameters.", "sliding_attention", &slide));
    }
    static const char *const names[] = { "full_attention", "sliding_attention" };
    static const char *const keys[] = { "global_rope_theta", "local_rope_theta" };
    static const double defs[] = { 160000.0, 10000.0 };
    const cJSON *dicts[] = { full, slide };
    for (int i = 0; i < 2; i++) {
        struct pe_ropesrc s = *base;
        cJSON *merged = NULL;
        if (!obj_empty(rs) && !(merged = merge_scaling(dicts[i], rs)))
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
        s.dict = merged ? merged : dicts[i];
        s.per_layer = 1;
        s.theta_key = keys[i];
        s.theta_default = defs[i];
        snprintf(s.dpath, sizeof s.dpath, "%s%s%s.", c->tp, merged ? "rope_scaling" :
                 "rope_parameters.", merged ? "" : names[i]);
        posenc_status st = add_layer(c, names[i], &s);
        cJSON_Delete(merged);
        TRY(st);
    }
    return POSENC_OK;
}

/* nanochat (models/nanochat/modeling_nanochat.py rotate_half returns cat(x2, -x1)): every pair
 * turns by -theta * pos. posenc's tables and apply turn by +theta, so it refuses rather than give
 * tables that look right and are mirrored. */
static posenc_status hook_nanochat(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    return cfgerr(c, POSENC_EUNSUPPORTED, "nanochat rotates every pair by -theta * pos "
                  "(rotate_half with flipped signs); posenc's tables turn by +theta: not "
                  "supported");
}

/* Rows whose config class keeps rope_parameters per layer type and ignores the top-level keys
 * (convert_rope_params_to_dict is a no-op: models/laguna, models/mellum): a rope_parameters
 * keyed by layer type replaces .type_defaults whole. */
static posenc_status hook_type_dicts(ctx *c, struct pe_ropesrc *base, int *done)
{
    const cJSON *rp;
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    int keyed = rp && rp->child;
    for (const cJSON *e = rp ? rp->child : NULL; e; e = e->next)
        keyed &= cJSON_IsObject(e);
    cJSON *def = NULL;
    if (!keyed) {
        def = cJSON_Parse(c->f->type_defaults);
        if (!def)
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
        note(c, "rope parameters per layer type are the %s defaults%s", c->cls,
             has(c->tc, "rope_theta") || rp ? " (the class ignores top-level rope_theta and a "
                                               "flat rope_parameters)" : "");
    }
    *done = 1;
    posenc_status st = POSENC_OK;
    for (const cJSON *e = keyed ? rp->child : def->child; e && st == POSENC_OK; e = e->next) {
        struct pe_ropesrc s = *base;
        s.dict = e;
        s.per_layer = 1;
        s.theta_key = NULL;
        s.honours = 1;
        snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.%.60s.", c->tp, e->string);
        st = add_layer(c, e->string, &s);
    }
    cJSON_Delete(def);
    return st;
}

/* DeepSeek-V4 (models/deepseek_v4/configuration_deepseek_v4.py __post_init__,
 * modeling_deepseek_v4.py apply_rotary_pos_emb): the rope slice is the LAST
 * int(head_dim * partial_rotary_factor) channels of each head (default 64 of 512), rotated in
 * adjacent pairs from repeat_interleave tables. sliding_attention layers use the "main" rope
 * (rope_theta, default, unscaled); compressed_sparse_attention and heavily_compressed_attention
 * layers the "compress" rope (compress_rope_theta, 160000, with the config's scaling; yarn gets
 * attention_factor 1.0). posenc's head_dim here is the rope slice. */
static posenc_status hook_deepseek_v4(ctx *c, struct pe_ropesrc *base, int *done)
{
    double prf = 0, v;
    int p;
    TRY(get_num(c, c->tc, c->tp, "partial_rotary_factor", &prf, &p));
    if (!p) {
        TRY(get_num(c, c->tc, c->tp, "qk_rope_head_dim", &v, &p));
        prf = p ? v / base->head_dim : 64.0 / 512.0;
    }
    int rot = (int)(base->head_dim * prf);
    if (rot < 2 || rot % 2 || rot > base->head_dim)
        return cfgerr(c, POSENC_ECONFIG, "the rope slice int(head_dim %d * partial_rotary_factor "
                      "%g) = %d must be even, >= 2 and <= head_dim", base->head_dim, prf, rot);
    note(c, "deepseek_v4 rotates the last %d of each head's %d channels ([nope | rope]): "
            "posenc's head_dim is that slice", rot, base->head_dim);
    base->head_dim = rot;
    c->m->bias.head_dim = rot;
    base->prf_default = 0;
    const cJSON *rs, *rp;
    TRY(get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    const cJSON *main_d = NULL, *comp_d = NULL;
    if (rp) {
        TRY(get_obj(c, rp, "rope_parameters.", "main", &main_d));
        TRY(get_obj(c, rp, "rope_parameters.", "compress", &comp_d));
    }
    cJSON *comp = NULL, *mainj = NULL;
    if (!main_d || !comp_d) {
        /* build the two dicts as __post_init__ does */
        const cJSON *scale = !obj_empty(rs) ? rs : rp;
        comp = scale ? cJSON_Duplicate(scale, 1) : cJSON_CreateObject();
        mainj = cJSON_Parse("{\"rope_type\":\"default\"}");
        if (!comp || !mainj) {
            cJSON_Delete(comp);
            cJSON_Delete(mainj);
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
        }
        cJSON_DeleteItemFromObjectCaseSensitive(comp, "rope_theta");
        cJSON_DeleteItemFromObjectCaseSensitive(comp, "partial_rotary_factor");
        const cJSON *rt = item(comp, "rope_type") ? item(comp, "rope_type") : item(comp, "type");
        if (rt && cJSON_IsString(rt) && strcmp(rt->valuestring, "yarn") == 0 &&
            !item(comp, "attention_factor"))
            cJSON_AddNumberToObject(comp, "attention_factor", 1.0);
        main_d = mainj;
        comp_d = comp;
    }
    *done = 1;
    static const char *const types[] = { "sliding_attention", "compressed_sparse_attention",
                                         "heavily_compressed_attention" };
    /* the layer types the model has: layer_types, else the default schedule (two HCA layers,
     * then CSA/HCA interleaved) */
    int present[3] = { 0, c->m->n_alias == 0, c->m->n_alias == 0 };
    for (size_t a = 0; a < c->m->n_alias; a++)
        for (int i = 0; i < 3; i++)
            if (strcmp(c->m->alias[a], types[i]) == 0)
                present[i] = 1;
    posenc_status st = POSENC_OK;
    for (int i = 0; i < 3 && st == POSENC_OK; i++) {
        if (!present[i])
            continue;
        struct pe_ropesrc s = *base;
        s.dict = i == 0 ? main_d : comp_d;
        s.per_layer = 0;
        s.rotary_dim_fixed = rot;
        s.theta_key = i == 0 ? "rope_theta" : "compress_rope_theta";
        s.theta_dict_first = comp ? 0 : 1;
        s.theta_default = i == 0 ? 10000.0 : 160000.0;
        snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.%s.", c->tp, i ? "compress" : "main");
        st = add_layer(c, types[i], &s);
    }
    cJSON_Delete(comp);
    cJSON_Delete(mainj);
    return st;
}

/* RecurrentGemma (models/recurrent_gemma/configuration_recurrent_gemma.py layers_block_type):
 * block_types repeat over the layers; only "attention" blocks have attention (and RoPE). */
static posenc_status post_recurrent_gemma(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    posenc_model *m = c->m;
    static const char *const def[] = { "recurrent", "recurrent", "attention" };
    const char *types[64];
    int nt = 0;
    const cJSON *bt = item(c->tc, "block_types");
    if (bt && cJSON_IsArray(bt)) {
        for (const cJSON *e = bt->child; e && nt < 64; e = e->next) {
            if (!cJSON_IsString(e))
                return cfgerr(c, POSENC_ECONFIG, "%sblock_types must be a list of strings",
                              c->tp);
            types[nt++] = e->valuestring;
        }
    }
    if (nt == 0)
        for (nt = 0; nt < 3; nt++)
            types[nt] = def[nt];
    int64_t v;
    int p;
    TRY(get_int(c, c->tc, c->tp, "num_hidden_layers", 1, MAX_LAYERS, &v, &p));
    if (!p)
        v = 26;
    m->n_layers = v;
    for (int64_t i = 0; i < v; i++)
        if (strcmp(types[i % nt], "attention") != 0)
            TRY(add_nope(c, i));
    note(c, "only the attention blocks of block_types use RoPE; the %zu recurrent layers have no "
            "attention", m->n_nope);
    return POSENC_OK;
}

/* BERT family (models/bert/modeling_bert.py BertEmbeddings, BertSelfAttention):
 * position_embedding_type absolute | relative_key | relative_key_query; "alibi" is the remote
 * jina-bert / MosaicBERT code that keeps model_type bert (symmetric -m|i-j| bias). */
static posenc_status hook_bert(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    posenc_model *m = c->m;
    const char *pet;
    TRY(get_str(c, c->tc, c->tp, "position_embedding_type", &pet));
    if (pet && (strcmp(pet, "relative_key") == 0 || strcmp(pet, "relative_key_query") == 0)) {
        m->enc = POSENC_ENC_SHAW;
        TRY(fill_heads(c));
        TRY(read_max(c, "max_position_embeddings", c->f->maxpos));
        m->bias.max_relative_position = (int)(m->max_positions > 1 ? m->max_positions - 1 : 1);
        m->bias.shaw_query_minus_key = 1;
        note(c, "position_embedding_type %s: relative distances clipped to +-(max_position_"
                "embeddings - 1), on top of the absolute table (transformers v4's "
                "BertSelfAttention distance_embedding; v5 no longer reads the key)", pet);
        *done = 1;
        return POSENC_OK;
    }
    if (pet && strcmp(pet, "alibi") == 0) {
        TRY(setup_alibi(c, POSENC_ALIBI_REFERENCE));
        TRY(read_max(c, "max_position_embeddings", c->f->maxpos));
        m->bias.alibi_symmetric = 1;
        note(c, "position_embedding_type alibi (remote code such as jina-bert or MosaicBERT, "
                "not transformers): symmetric bias -m|i-j| over a bidirectional encoder, no "
                "absolute table");
        *done = 1;
        return POSENC_OK;
    }
    if (pet && strcmp(pet, "absolute") != 0)
        return cfgerr(c, POSENC_ECONFIG, "unknown position_embedding_type '%.60s' (known: "
                      "absolute, relative_key, relative_key_query, alibi)", pet);
    return POSENC_OK;
}

/* A learned table that a boolean key (.sin_key) fills with fixed sinusoids instead: DistilBERT
 * sinusoidal_pos_embds (models/distilbert/modeling_distilbert.py Embeddings), XLM and FlauBERT
 * sinusoidal_embeddings (models/xlm/modeling_xlm.py create_sinusoidal_embeddings). */
static posenc_status hook_sin_switch(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    int b, p;
    TRY(get_bool(c, c->tc, c->tp, c->f->sin_key, &b, &p));
    if (p && b) {
        *done = 1;
        return setup_sinusoidal(c, c->f->maxpos, -1);
    }
    return POSENC_OK;
}

/* MPT (models/mpt/modeling_mpt.py build_mpt_alibi_tensor): attn_config.alibi, else a learned
 * table wpe. */
static posenc_status hook_mpt(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    posenc_model *m = c->m;
    const cJSON *ac;
    int b, p;
    *done = 1;
    TRY(get_obj(c, c->tc, c->tp, "attn_config", &ac));
    int alibi = 1;
    TRY(get_bool(c, ac, "attn_config.", "alibi", &b, &p));
    if (p)
        alibi = b;
    if (!alibi) {
        note(c, "attn_config.alibi is false: llm-foundry's MPT adds the learned table wpe (transformers' "
                "port ignores the flag and always adds ALiBi)");
        return setup_learned(c, "transformer.wpe.weight", "max_seq_len", 2048);
    }
    TRY(setup_alibi(c, POSENC_ALIBI_MPT));
    double v;
    TRY(get_num(c, ac, "attn_config.", "alibi_bias_max", &v, &p));
    if (p) {
        if (!(v > 0))
            return cfgerr(c, POSENC_ECONFIG, "attn_config.alibi_bias_max must be > 0");
        m->bias.alibi_bias_max = v;
    }
    return read_max(c, "max_seq_len", 2048);
}

/* Falcon (models/falcon/modeling_falcon.py FalconAttention): alibi true, else RoPE. */
static posenc_status hook_falcon(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    int b, p;
    TRY(get_bool(c, c->tc, c->tp, "alibi", &b, &p));
    if (p && b) {
        *done = 1;
        TRY(setup_alibi(c, POSENC_ALIBI_FALCON));
        return read_max(c, "max_position_embeddings", 2048);
    }
    return POSENC_OK;
}

/* Baichuan (remote code, baichuan-inc/Baichuan-13B-Base modeling_baichuan.py): the 13B model
 * (hidden_size 5120) uses ALiBi, the 7B model RoPE; both say model_type baichuan. */
static posenc_status hook_baichuan(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    int64_t hidden, heads;
    int have;
    TRY(heads_hidden(c, &heads, &hidden, &have));
    int rope_keys = has(c->tc, "rope_theta") || has(c->tc, "rope_scaling") ||
                    has(c->tc, "rope_parameters");
    if (!rope_keys && hidden == 5120) {
        *done = 1;
        TRY(setup_alibi(c, POSENC_ALIBI_REFERENCE));
        note(c, "baichuan with hidden_size 5120 is Baichuan-13B: ALiBi (the 7B model, "
                "hidden_size 4096, uses RoPE)");
        if (has(c->tc, "max_position_embeddings"))
            return read_max(c, "max_position_embeddings", 0);
        return read_max(c, "model_max_length", 0);
    }
    if (!has(c->tc, "max_position_embeddings"))
        c->max_pos_key = "model_max_length";
    return POSENC_OK;
}

/* Whisper (models/whisper/modeling_whisper.py sinusoids, WhisperPositionalEmbedding): a fixed
 * sinusoidal encoder ([sin | cos], exponent k/(d/2 - 1)) and a learned decoder table. */
static posenc_status hook_whisper(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    posenc_bias_config *b = &c->m->bias;
    int64_t v;
    int p;
    TRY(get_int(c, c->tc, c->tp, "max_source_positions", 1, (int64_t)1 << 40, &v, &p));
    b->has_encoder = 1;
    b->encoder_encoding = POSENC_ENC_SINUSOIDAL;
    b->encoder_variant = POSENC_SIN_T2T;
    b->encoder_max_positions = p ? v : 1500;
    note(c, "the encoder adds fixed sinusoids (t2t variant: [sin | cos], exponent "
            "k/(d_model/2 - 1)) for %lld positions; the decoder's table is learned",
         (long long)b->encoder_max_positions);
    return POSENC_OK;
}

/* Zamba2's attention_head_dim is always 2 * hidden_size // num_attention_heads. */
static posenc_status hook_zamba2_hd(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int64_t heads, hidden;
    int have;
    TRY(heads_hidden(c, &heads, &hidden, &have));
    if (!have || 2 * hidden / heads < 2 || 2 * hidden / heads > 2 * POSENC_MAX_FREQ)
        return cfgerr(c, POSENC_ECONFIG, "zamba2 needs hidden_size and num_attention_heads "
                      "with 2 * hidden_size / heads in [2, %d]", 2 * POSENC_MAX_FREQ);
    base->head_dim = (int)(2 * hidden / heads);
    c->m->bias.head_dim = base->head_dim;
    note(c, "zamba2 attention_head_dim = 2 * hidden_size / num_attention_heads = %d",
         base->head_dim);
    return POSENC_OK;
}

/* Zamba2 (models/zamba2/configuration_zamba2.py, modeling_zamba2.py Zamba2Attention): the shared
 * attention blocks rotate only with use_mem_rope (default false); head_dim is always
 * 2 * hidden_size // num_attention_heads. */
static posenc_status hook_zamba2(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    int b = 0, p;
    TRY(get_bool(c, c->tc, c->tp, "use_mem_rope", &b, &p));
    if (!p || !b) {
        *done = 1;
        TRY(setup_none(c));
        note(c, "use_mem_rope is %s: the shared attention blocks carry no RoPE",
             p ? "false" : "not set (default false)");
    }
    return POSENC_OK;
}

/* GraniteMoeHybrid (models/granitemoehybrid/modeling_granitemoehybrid.py):
 * position_embedding_type "nope" turns RoPE off in the attention layers. */
static posenc_status hook_granite_hybrid(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    const char *pet;
    TRY(get_str(c, c->tc, c->tp, "position_embedding_type", &pet));
    if (pet && strcmp(pet, "rope") != 0) {
        *done = 1;
        TRY(setup_none(c));
        note(c, "position_embedding_type '%.40s': the attention layers carry no RoPE", pet);
    }
    return POSENC_OK;
}

/* ChatGLM2/3 (remote code, THUDM/chatglm2-6b modeling_chatglm.py RotaryEmbedding): the first
 * kv_channels/2 dims rotate in adjacent pairs, theta = 10000 * rope_ratio. ChatGLM-6B's 2-D
 * RoPE (position_encoding_2d) is refused. */
static posenc_status hook_chatglm(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int b, p;
    TRY(get_bool(c, c->tc, c->tp, "position_encoding_2d", &b, &p));
    if (p && b)
        return cfgerr(c, POSENC_EUNSUPPORTED,
                      "ChatGLM-6B 2-D RoPE (position_encoding_2d) is not supported");
    double ratio = 1;
    TRY(get_num(c, c->tc, c->tp, "rope_ratio", &ratio, &p));
    if (!p)
        ratio = 1;
    if (!(ratio > 0))
        return cfgerr(c, POSENC_ECONFIG, "%srope_ratio must be > 0", c->tp);
    base->theta_default = 10000.0 * ratio;
    base->theta_key = NULL;
    base->rotary_dim_fixed = base->head_dim / 2;
    note(c, "chatglm (remote code): rotates the first kv_channels/2 dims in adjacent pairs, "
            "theta = 10000 * rope_ratio");
    return POSENC_OK;
}

/* MiniMax-M2 (remote code MiniMaxAI/MiniMax-M2 modeling_minimax_m2.py): rotary_dim. Current
 * transformers (models/minimax_m2) ignores it. */
static posenc_status hook_minimax_m2(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int64_t v = 0;
    int p;
    TRY(get_int(c, c->tc, c->tp, "rotary_dim", 1, 2 * POSENC_MAX_FREQ, &v, &p));
    if (p) {
        base->rotary_dim_fixed = (int)v;
        note(c, "rotary_dim %lld: posenc follows the model's own code (rotates %lld dims); "
                "current transformers ignores rotary_dim and rotates all %d head_dim dims",
             (long long)v, (long long)v, base->head_dim);
    }
    return POSENC_OK;
}

/* MiniMax (models/minimax/modeling_minimax.py): transformers rotates the whole head and does
 * not read rotary_dim; the original remote code of the family (MiniMaxAI/MiniMax-M1
 * modeling_minimax_m1.py MiniMaxM1Attention) rotates rotary_dim. Say so when they differ. */
static posenc_status post_minimax(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    int64_t v = 0;
    int p;
    TRY(get_int(c, c->tc, c->tp, "rotary_dim", 1, 2 * POSENC_MAX_FREQ, &v, &p));
    if (p && c->m->n_lt == 0 && v != c->m->rope[0].rotary_dim)
        note(c, "rotary_dim %lld is not read by transformers' minimax (it rotates all %d dims); "
                "the original remote code rotates %lld: --family minimax_m1 follows it",
             (long long)v, c->m->rope[0].rotary_dim, (long long)v);
    return POSENC_OK;
}

/* Mistral 4 (models/mistral4/configuration_mistral4.py): partial_rotary_factor =
 * qk_rope_head_dim / head_dim. */
static posenc_status hook_mistral4(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int64_t r = 64, n = 64;
    int pr, pn;
    TRY(get_int(c, c->tc, c->tp, "qk_rope_head_dim", 1, 2 * POSENC_MAX_FREQ, &r, &pr));
    TRY(get_int(c, c->tc, c->tp, "qk_nope_head_dim", 0, 2 * POSENC_MAX_FREQ, &n, &pn));
    if (!pr)
        r = 64;
    if (!pn)
        n = 64;
    if (r + n > 2 * POSENC_MAX_FREQ)
        return cfgerr(c, POSENC_ECONFIG, "qk_nope_head_dim + qk_rope_head_dim is too large");
    base->head_dim = (int)(r + n); /* __post_init__: head_dim = qk_nope + qk_rope */
    if (!has(c->tc, "partial_rotary_factor"))
        base->prf_default = (double)r / (double)(r + n);
    return POSENC_OK;
}

/* DeepSeek-V3 and its copies (models/deepseek_v3/modeling_deepseek_v3.py
 * apply_rotary_pos_emb_interleave): rope_interleave (default true) de-interleaves q/k and
 * rotates halves, so the pairs of the checkpoint layout are (2i, 2i+1). */
static posenc_status hook_deepseek_v3(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int b, p, inter = 1;
    TRY(get_bool(c, c->tc, c->tp, "rope_interleave", &b, &p));
    if (p)
        inter = b;
    if (inter) {
        note(c, "rope_interleave: pairs (2i, 2i+1) (gptj style); transformers de-interleaves "
                "q/k first and applies rotate_half, so its output stays permuted");
    } else {
        base->style = POSENC_STYLE_NEOX;
        base->pairing = POSENC_PAIR_HALF;
    }
    return POSENC_OK;
}

/* DeepSeek-V3 (DeepseekV3Attention.__init__): softmax_scale *= yarn_get_mscale(factor,
 * mscale_all_dim)^2. */
static posenc_status post_deepseek_v3(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    posenc_model *m = c->m;
    if (m->n_lt == 0 && m->rope[0].type == POSENC_ROPE_YARN && m->rope[0].mscale_all_dim != 0) {
        m->rope[0].softmax_mscale = 1;
        note(c, "%s multiplies the softmax scale by (0.1 * mscale_all_dim * ln(factor) + 1)^2 "
                "outside the tables", c->cls);
    }
    return POSENC_OK;
}

/* DeepSeek-V2 (models/deepseek_v2/modeling_deepseek_v2.py): transformers leaves out the
 * softmax factor of the original code. */
static posenc_status post_deepseek_v2(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    if (c->m->rope[0].type == POSENC_ROPE_YARN && c->m->rope[0].mscale_all_dim != 0)
        note(c, "deepseek_v2: transformers omits the mscale_all_dim softmax factor that "
                "DeepSeek-V3 applies");
    return POSENC_OK;
}

/* GLM-5 (models/glm_moe_dsa/configuration_glm_moe_dsa.py attribute_map head_dim ->
 * qk_rope_head_dim; modular_glm_moe_dsa.py GlmMoeDsaAttention: the MLA slice goes through
 * apply_rotary_pos_emb_interleave whatever rope_interleave says). */
static posenc_status hook_glm_moe_dsa(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int64_t v;
    int p;
    if (!has(c->tc, "qk_rope_head_dim")) {
        TRY(get_int(c, c->tc, c->tp, "head_dim", 2, 2 * POSENC_MAX_FREQ, &v, &p));
        if (p)
            base->head_dim = (int)v;
    }
    note(c, "glm_moe_dsa's MLA de-interleaves q/k and applies rotate_half "
            "(apply_rotary_pos_emb_interleave; rope_interleave is not read): pairs (2i, 2i+1); "
            "the DSA indexer rotates with plain rotate_half");
    return POSENC_OK;
}

/* Hunyuan (models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py HunYuanDenseV1RotaryEmbedding):
 * rope_scaling {type: dynamic, alpha}: base = theta * alpha^(d / (d - 2)) from the start, with
 * no further dynamic rescaling. */
static posenc_status post_hunyuan(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    posenc_rope_config *r = &c->m->rope[0];
    const cJSON *rs = item(c->tc, "rope_scaling");
    if (!rs || !cJSON_IsObject(rs))
        rs = item(c->tc, "rope_parameters");
    double alpha;
    int p;
    TRY(get_num(c, rs, "rope_scaling.", "alpha", &alpha, &p));
    if (!p || c->m->n_lt != 0)
        return POSENC_OK;
    if (!(alpha > 0))
        return cfgerr(c, POSENC_ECONFIG, "%srope_scaling.alpha must be > 0", c->tp);
    int d = r->rotary_dim;
    if (d <= 2)
        return cfgerr(c, POSENC_ECONFIG, "rope_scaling.alpha needs a rotary dimension > 2");
    double theta = r->theta * pow(alpha, (double)d / (double)(d - 2));
    if (!isfinite(theta) || !(theta > 0))
        return cfgerr(c, POSENC_ECONFIG, "rope_scaling.alpha %g makes theta non-finite", alpha);
    note(c, "rope_scaling.alpha %g: theta = %g * alpha^(%d/%d) = %.10g from the start "
            "(Hunyuan's NTK-alpha rule; the dynamic rescaling does not apply)", alpha, r->theta,
         d, d - 2, theta);
    r->theta = theta;
    snprintf(r->theta_source, sizeof r->theta_source, "%.40srope_scaling.alpha", c->tp);
    r->type = POSENC_ROPE_DEFAULT;
    r->factor = 1.0;
    return POSENC_OK;
}

/* ---- the registry ---- */

#define FAMILY(n, k, ...) { .name = n, .kind = k, __VA_ARGS__ },
static const pe_family families[] = {
#include "families.def"
};
#undef FAMILY
#define N_FAMILIES (sizeof families / sizeof *families)

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
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (strcmp(families[i].name, name) == 0)
            return &families[i];
    return NULL;
}

/* Follow alias rows to the row that holds the data. */
static const pe_family *family_resolve(const pe_family *f)
{
    for (int hops = 0; f && f->alias && hops < 4; hops++)
        f = family_find(f->alias);
    return f;
}

/* ---- per-layer rules ---- */

static int name_in(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static posenc_status add_nope(ctx *c, int64_t i)
{
    posenc_model *m = c->m;
    int64_t *n = realloc(m->nope, (m->n_nope + 1) * sizeof *n);
    if (!n)
        return cfgerr(c, POSENC_ENOMEM, "out of memory");
    m->nope = n;
    m->nope[m->n_nope++] = i;
    return POSENC_OK;
}

static void note_nope(ctx *c, const char *why)
{
    posenc_model *m = c->m;
    char list[200];
    size_t o = 0;
    list[0] = '\0';
    for (size_t i = 0; i < m->n_nope && o < sizeof list - 24; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%lld", i ? ", " : "",
                              (long long)m->nope[i]);
    if (o >= sizeof list - 24)
        snprintf(list + o, sizeof list - o, ", ...");
    note(c, "%zu of %lld layers carry no RoPE (NoPE, %s): %s", m->n_nope,
         (long long)m->n_layers, why, list);
}

/* Which layers of a RoPE model carry no RoPE, from the row's per-layer rule. */
static posenc_status layer_rules(ctx *c)
{
    const pe_family *f = c->f;
    posenc_model *m = c->m;
    int64_t v;
    int p;
    TRY(get_int(c, c->tc, c->tp, "num_hidden_layers", 1, MAX_LAYERS, &v, &p));
    m->n_layers = p ? v : (int64_t)m->n_types;
    if (m->enc != POSENC_ENC_ROPE || f->layers == LAY_ALL || m->n_nope)
        return POSENC_OK;
    const cJSON *lif = f->layers_if ? item(c->tc, f->layers_if) : NULL;
    if (lif && cJSON_IsNull(lif)) {
        note(c, "%s%s is null: every layer uses RoPE", c->tp, f->layers_if);
        return POSENC_OK;
    }
    int64_t every = f->every;
    const cJSON *ek = f->every_key ? item(c->tc, f->every_key) : NULL;
    if (ek && cJSON_IsNumber(ek)) {
        TRY(get_int(c, c->tc, c->tp, f->every_key, 1, MAX_LAYERS, &v, &p));
        every = v;
    } else if (ek && !cJSON_IsNull(ek)) {
        every = 0; /* a pattern string ("LLLG"): only layer_types can tell */
    }
    char why[160];
    const cJSON *ri = f->rope_idx_key ? item(c->tc, f->rope_idx_key) : NULL;
    if (f->layers == LAY_INDEX) {
        const cJSON *l = item(c->tc, f->layers_arg);
        if (l && cJSON_IsArray(l)) {
            for (const cJSON *e = l->child; e; e = e->next) {
                if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > MAX_LAYERS ||
                    e->valuedouble != floor(e->valuedouble))
                    return cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of layer indices",
                                  c->tp, f->layers_arg);
                TRY(add_nope(c, (int64_t)e->valuedouble));
            }
            snprintf(why, sizeof why, "listed in %s%s", c->tp, f->layers_arg);
        } else if (f->layers_default) {
            for (const char *s = f->layers_default; *s;) {
                char *end;
                long i = strtol(s, &end, 10);
                TRY(add_nope(c, i));
                s = *end == ',' ? end + 1 : end;
                if (end == s && *s)
                    break;
            }
            snprintf(why, sizeof why, "no %s in the config: the %s default %s", f->layers_arg,
                     c->cls, f->layers_default);
        } else {
            note(c, "%s%s is missing: posenc cannot tell which layers carry no RoPE", c->tp,
                 f->layers_arg);
            return POSENC_OK;
        }
    } else if (f->layers == LAY_ONLY && m->n_types == 0 && ri && cJSON_IsArray(ri)) {
        /* no per-layer types: the indices of the layers that rotate (LFM2 full_attn_idxs,
         * Bamba attn_layer_indices) */
        if (m->n_layers <= 0)
            return cfgerr(c, POSENC_ECONFIG, "%s%s needs num_hidden_layers", c->tp,
                          f->rope_idx_key);
        unsigned char *rot = calloc((size_t)m->n_layers, 1);
        if (!rot)
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
        for (const cJSON *e = ri->child; e; e = e->next) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= (double)m->n_layers ||
                e->valuedouble != floor(e->valuedouble)) {
                free(rot);
                return cfgerr(c, POSENC_ECONFIG, "%s%s must list layer indices below %lld",
                              c->tp, f->rope_idx_key, (long long)m->n_layers);
            }
            rot[(size_t)e->valuedouble] = 1;
        }
        posenc_status st = POSENC_OK;
        for (int64_t i = 0; i < m->n_layers && st == POSENC_OK; i++)
            if (!rot[i])
                st = add_nope(c, i);
        free(rot);
        TRY(st);
        snprintf(why, sizeof why, "not in %s%s", c->tp, f->rope_idx_key);
    } else if (f->layers == LAY_LIST) {
        const cJSON *l = item(c->tc, f->layers_arg);
        /* an empty list is falsy: transformers builds the default (Llama4TextConfig) */
        if (l && !cJSON_IsNull(l) && !(cJSON_IsArray(l) && cJSON_GetArraySize(l) == 0)) {
            if (!cJSON_IsArray(l))
                return cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of 0/1 per layer", c->tp,
                              f->layers_arg);
            int64_t n = cJSON_GetArraySize(l), i = 0;
            if (m->n_layers && n != m->n_layers)
                return cfgerr(c, POSENC_ECONFIG, "%s%s has %lld entries, num_hidden_layers is "
                              "%lld", c->tp, f->layers_arg, (long long)n,
                              (long long)m->n_layers);
            if (n > MAX_LAYERS)
                return cfgerr(c, POSENC_ECONFIG, "%s%s is too long", c->tp, f->layers_arg);
            m->n_layers = n;
            for (const cJSON *e = l->child; e; e = e->next, i++) {
                int use;
                if (cJSON_IsBool(e))
                    use = cJSON_IsTrue(e);
                else if (cJSON_IsNumber(e) && (e->valuedouble == 0 || e->valuedouble == 1))
                    use = e->valuedouble != 0;
                else
                    return cfgerr(c, POSENC_ECONFIG, "%s%s[%lld] must be 0 or 1", c->tp,
                                  f->layers_arg, (long long)i);
                if (!use)
                    TRY(add_nope(c, i));
            }
            snprintf(why, sizeof why, "0 in %s%s", c->tp, f->layers_arg);
        } else if (every > 0 && m->n_layers > 0) {
            for (int64_t i = 0; i < m->n_layers; i++)
                if ((i + 1 - f->every_phase) % every == 0)
                    TRY(add_nope(c, i));
            snprintf(why, sizeof why, "no %s in the config: every %lld-th layer, the %s default",
                     f->layers_arg, (long long)every, c->cls);
        } else {
            note(c, "%s%s and num_hidden_layers are missing: posenc cannot tell which layers "
                    "carry no RoPE", c->tp, f->layers_arg);
            return POSENC_OK;
        }
    } else {
        int only = f->layers == LAY_ONLY;
        if (m->n_types > 0) {
            for (size_t a = 0; a < m->n_alias; a++)
                m->alias_enc[a] = name_in(f->layers_arg, m->alias[a]) == only
                                      ? POSENC_ENC_ROPE : POSENC_ENC_NONE;
            for (size_t i = 0; i < m->n_types; i++)
                if (m->alias_enc[m->type_of[i]] == POSENC_ENC_NONE)
                    TRY(add_nope(c, (int64_t)i));
            size_t o = (size_t)snprintf(why, sizeof why, "layer_types");
            for (size_t a = 0; a < m->n_alias && o < sizeof why; a++)
                if (m->alias_enc[a] == POSENC_ENC_NONE)
                    o += (size_t)snprintf(why + o, sizeof why - o, " %.40s", m->alias[a]);
        } else if (every > 0 && m->n_layers > 0) {
            /* layer i is of type .layers_arg when (i + 1) % every == 0 */
            for (int64_t i = 0; i < m->n_layers; i++)
                if (((i + 1 - f->every_phase) % every == 0) != only)
                    TRY(add_nope(c, i));
            snprintf(why, sizeof why, "no layer_types in the config: every %lld-th layer is %s, "
                     "the %s default", (long long)every, f->layers_arg, c->cls);
        } else {
            note(c, "%slayer_types is missing: posenc cannot tell which layers carry no RoPE "
                    "(%s layers %s)", c->tp, f->layers_arg, only ? "rotate, the others do not"
                                                                  : "carry none");
            return POSENC_OK;
        }
    }
    if (m->n_nope) {
        note_nope(c, why);
        if (f->note)
            note(c, "%s: %s", c->cls, f->note);
    }
    return POSENC_OK;
}

/* ---- set-up by row ---- */

static posenc_status setup_rope(ctx *c)
{
    posenc_model *m = c->m;
    const pe_family *f = c->f;
    struct pe_ropesrc base;
    int p, done = 0;
    int64_t v;
    m->enc = POSENC_ENC_ROPE;
    ropesrc_init(c, &base, NULL, "rope_parameters");
    TRY(fill_heads(c));

    /* max_position_embeddings (with the class renames and defaults) */
    if (!c->max_pos_key)
        c->max_pos_key = f->maxpos_key ? f->maxpos_key : "max_position_embeddings";
    TRY(get_int(c, c->tc, c->tp, c->max_pos_key, 1, (int64_t)1 << 53, &v, &p));
    if (p) {
        c->max_pos = v;
    } else if (f->maxpos > 0) {
        c->max_pos = f->maxpos;
        note(c, "%s %lld is the %s class default (not in the config)", c->max_pos_key,
             (long long)f->maxpos, c->cls);
    }
    const cJSON *raw = item(c->tc, c->max_pos_key);
    if (raw && cJSON_IsNumber(raw) && raw->valuedouble < 0)
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be > 0", c->tp, c->max_pos_key);
    m->max_positions = c->max_pos;
    m->bias.max_positions = c->max_pos;

    /* head_dim */
    if (f->hd == HD_QK_ROPE) {
        TRY(get_int(c, c->tc, c->tp, "qk_rope_head_dim", 2, 2 * POSENC_MAX_FREQ, &v, &p));
        if (!p) {
            v = f->head_dim > 0 ? f->head_dim : 64;
            note(c, "qk_rope_head_dim %lld is the %s class default (not in the config)",
                 (long long)v, c->cls);
        }
        base.head_dim = (int)v;
    } else if (f->hd == HD_KV) {
        TRY(get_int(c, c->tc, c->tp, "kv_channels", 2, 2 * POSENC_MAX_FREQ, &v, &p));
        if (p)
            base.head_dim = (int)v;
        else
            TRY(resolve_head_dim(c, NULL, &base.head_dim));
    } else {
        TRY(resolve_head_dim(c, NULL, &base.head_dim));
    }

    /* how the pairs are applied */
    static const char *const pair_note[] = {
        NULL,
        "rotates adjacent pairs (2i, 2i+1) (gptj style)",
        "builds repeat_interleave(2) cos/sin tables and rotates adjacent pairs (2i, 2i+1) "
        "(gptj style)",
        "interleaves the first rotary_dim/2 cos/sin entries inside apply: pairs (2i, 2i+1) "
        "(gptj style)",
        NULL, /* the DeepSeek-V3 hook says it, depending on rope_interleave */
    };
    if ((unsigned)f->pair < sizeof pair_note / sizeof *pair_note && pair_note[f->pair])
        note(c, "%s %s", c->cls, pair_note[f->pair]);

    /* rotary_dim as an integer (GPT-J, CodeGen) */
    if (f->rot == ROT_DIM) {
        const cJSON *rd = item(c->tc, "rotary_dim");
        if (rd && cJSON_IsNull(rd)) {
            base.rotary_dim_fixed = base.head_dim;
        } else {
            TRY(get_int(c, c->tc, c->tp, "rotary_dim", 0, 2 * POSENC_MAX_FREQ, &v, &p));
            if (p && v == 0)
                return cfgerr(c, POSENC_ECONFIG, "%srotary_dim must be > 0", c->tp);
            base.rotary_dim_fixed = p ? (int)v : f->rotary_dim;
            if (!p)
                note(c, "rotary_dim %d is the %s class default (not in the config)",
                     f->rotary_dim, c->cls);
        }
        if (base.rotary_dim_fixed > base.head_dim)
            base.rotary_dim_fixed = base.head_dim; /* q[..., :rotary_dim] */
    }
    m->bias.head_dim = base.head_dim;

    TRY(add_alias_names(c));
    if (f->rope) {
        TRY(f->rope(c, &base, &done));
        if (done)
            return POSENC_OK;
    }
    TRY(setup_generic(c, &base));
    if (f->post)
        TRY(f->post(c, &base, &done));
    return POSENC_OK;
}

static posenc_status setup_row(ctx *c)
{
    const pe_family *f = c->f;
    const char *maxkey = f->maxpos_key ? f->maxpos_key : "max_position_embeddings";
    int done = 0;
    if (f->pre) {
        TRY(f->pre(c, NULL, &done));
        if (done)
            return POSENC_OK;
    }
    switch (f->kind) {
    case PE_ROPE:
        return setup_rope(c);
    case PE_ALIBI:
        TRY(setup_alibi(c, (posenc_alibi_kind)f->alibi));
        return read_max(c, maxkey, f->maxpos);
    case PE_T5:
        return setup_t5(c);
    case PE_LEARNED:
        TRY(setup_learned(c, f->tensor, maxkey, f->maxpos));
        return table_offset(c);
    case PE_SIN:
        if (f->sin == POSENC_SIN_FAIRSEQ) {
            int64_t v;
            int p;
            TRY(get_int(c, c->tc, c->tp, "pad_token_id", 0, 1 << 30, &v, &p));
            TRY(setup_sinusoidal(c, f->maxpos, p ? (int)v : 1));
            c->m->bias.position_offset = c->m->bias.padding_idx + 1;
            note(c, "%s uses fairseq sinusoids: row padding_idx (%d) is zero and real tokens "
                    "start at row padding_idx + 1", c->cls, c->m->bias.padding_idx);
            return POSENC_OK;
        }
        TRY(setup_sinusoidal(c, f->maxpos, -1));
        if (f->offset > 0) {
            c->m->bias.position_offset = f->offset;
            note(c, "%s's sinusoidal table starts at row %d for position 0", c->cls, f->offset);
        }
        return POSENC_OK;
    case PE_NONE:
        return setup_none(c);
    case PE_SHAW: /* only through a hook (BERT relative_key) */
    case PE_REL:
    case PE_TEXT:
        break;
    }
    return cfgerr(c, POSENC_EUNSUPPORTED, "model_type '%s' (%s) uses %s, a relative position "
                  "scheme posenc does not generate", c->m->model_type, c->cls,
                  f->scheme ? f->scheme : "an unknown scheme");
}

/* ---- public API ---- */

/* The config as convert_hf_to_gguf.py sees it (ggml-org/llama.cpp conversion/base.py
 * TextModel.__init__: hparams = {**hparams, **hparams["text_config"]}), kept for lib/llamacpp.c. */
static posenc_status keep_hparams(ctx *c, const cJSON *root)
{
    cJSON *hp = cJSON_Duplicate(root, 1);
    if (!hp)
        return cfgerr(c, POSENC_ENOMEM, "out of memory");
    for (const cJSON *e = c->tc != root ? c->tc->child : NULL; e; e = e->next) {
        cJSON *dup = cJSON_Duplicate(e, 1);
        if (!dup || !e->string) {
            cJSON_Delete(dup);
            cJSON_Delete(hp);
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
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

const char *pe_model_gguf_arch(const posenc_model *m)
{
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
        return cfgerr(&c, POSENC_ECONFIG, "top level is not a JSON object");
    posenc_model *m = calloc(1, sizeof *m);
    if (!m)
        return cfgerr(&c, POSENC_ENOMEM, "out of memory");
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
    if ((st = get_str(&c, root, "", "model_type", &outer)) != POSENC_OK)
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
        if ((st = get_obj(&c, tcfg, "", part, &tcfg)) != POSENC_OK)
            goto fail;
        k = dot ? dot + 1 : k + n;
    }
    if (tcfg == root)
        tcfg = NULL;
    if (f && f->kind == PE_TEXT && f->text_defaults) {
        /* the composite fills its own defaults under the text_config's keys */
        merged = cJSON_Parse(f->text_defaults);
        if (!merged) {
            st = cfgerr(&c, POSENC_ENOMEM, "out of memory");
            goto fail;
        }
        for (const cJSON *e = tcfg ? tcfg->child : NULL; e; e = e->next) {
            cJSON *dup = cJSON_Duplicate(e, 1);
            if (!dup || !e->string) {
                cJSON_Delete(dup);
                st = cfgerr(&c, POSENC_ENOMEM, "out of memory");
                goto fail;
            }
            cJSON_DeleteItemFromObjectCaseSensitive(merged, e->string);
            cJSON_AddItemToObject(merged, e->string, dup);
        }
        note(&c, "%s fills the keys its text_config leaves out from its own defaults", f->name);
        tcfg = merged;
    }
    if (tcfg && (!f || f->kind == PE_TEXT)) {
        snprintf(tpath, sizeof tpath, "%.60s.", tkey);
        c.tc = tcfg;
        c.tp = tpath;
        if ((st = get_str(&c, tcfg, c.tp, "model_type", &inner)) != POSENC_OK)
            goto fail;
        if (f && (f->flags & F_TEXT_FIXED)) {
            if (inner && *inner && strcmp(inner, f->text) != 0)
                note(&c, "%s builds %s whatever %smodel_type says ('%s')", f->name, f->text,
                     c.tp, inner);
            f = family_resolve(family_find(f->text));
            inner = NULL;
        } else if (inner && *inner) {
            f = family_resolve(family_find(inner));
        } else if (f) {
            f = family_resolve(family_find(f->text));
            if (f)
                note(&c, "%s has no model_type: read as %s, the %s default", tkey, f->name,
                     outer ? outer : "composite");
        }
    } else if (f && f->kind == PE_TEXT) {
        /* a flat legacy config (Qwen2-VL without text_config): its own keys */
        f = family_resolve(family_find(f->text));
    }
    const char *mt = inner && *inner ? inner : outer ? outer : "";
    if ((st = copy_name(&c, m->model_type, mt, "model_type")) != POSENC_OK)
        goto fail;
    if (family && outer && strcmp(family, mt) != 0)
        note(&c, "resolved as family '%s' (--family); the config's model_type is '%s'", family,
             mt);

    if (!f || f->kind == PE_TEXT) {
        /* not in the registry: the generic rules, only when the config asks for RoPE */
        if (!has_rope_keys(c.tc)) {
            if (*mt)
                st = cfgerr(&c, POSENC_EUNSUPPORTED, "model_type '%.60s' is not known and the "
                            "config has no RoPE keys (rope_theta, rope_parameters, rope_scaling, "
                            "rotary_*): posenc cannot tell its position encoding; pass --family "
                            "NAME (posenc info --models)", mt);
            else
                st = cfgerr(&c, POSENC_EUNSUPPORTED, "no model_type and no RoPE keys "
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
                 has(c.tc, "qk_rope_head_dim") ? " although qk_rope_head_dim is set (MLA models "
                 "such as deepseek_v3 rotate only that slice)" : "");
        note(&c, "%s", m->warning);
    }
    c.f = f;
    c.cls = f->name;
    m->fam = f;
    if ((st = setup_row(&c)) != POSENC_OK)
        goto fail;
    if ((st = layer_rules(&c)) != POSENC_OK)
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
    return m->warning[0] ? m->warning : NULL;
}

int64_t posenc_model_max_positions(const posenc_model *m)
{
    return m->max_positions;
}

int64_t posenc_model_layer_count(const posenc_model *m)
{
    return m->n_layers;
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
        if (!layer_type || in_aliases(m, layer_type)) {
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
    o->source = f->src ? f->src : d->src ? d->src : "";
}

size_t posenc_family_count(void)
{
    return N_FAMILIES;
}

posenc_status posenc_family_get(size_t i, posenc_family_info *out, posenc_error *err)
{
    if (i >= N_FAMILIES)
        return posenc_seterr(err, POSENC_EINVAL, "family %zu is past the %zu registry rows", i,
                             N_FAMILIES);
    family_info(&families[i], out);
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
