/* model.c: resolve a parsed Hugging Face config.json into position-encoding parameters.
 *
 * The rules follow transformers v5 (reference/hf-rope.md §1, §3, §5, §6, §8): which dict holds the
 * RoPE keys (legacy rope_scaling replaces rope_parameters; `type` is an alias of `rope_type`), where
 * rope_theta comes from (inside the dict, then the top-level key, then the class default), which
 * classes honour partial_rotary_factor for rope_type default, head_dim class defaults, per-layer-type
 * dicts, text_config nesting and the per-model renames (GPT-J, GPT-NeoX, Phi-3, Qwen2-VL, Gemma 3/4,
 * DeepSeek, GLM-5, MiniMax-M2, MiMo-V2-Flash). Non-rotary models (ALiBi, T5, learned tables, NoPE)
 * are recognised by model_type. No I/O: formats/config.c reads the file. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "posenc/bias.h"
#include "posenc/model.h"

#define MAX_LT 8        /* layer types with their own RoPE parameters */
#define MAX_ALIAS 16    /* distinct names in layer_types */
#define MAX_NOTES 32
#define NAME_LEN 64

struct posenc_model {
    posenc_encoding enc;
    char source[256];
    char model_type[NAME_LEN];
    int64_t max_positions;
    size_t n_lt;                      /* 0: one set of parameters in rope[0] */
    char lt_name[MAX_LT][NAME_LEN];
    posenc_rope_config rope[MAX_LT];
    size_t n_alias;                   /* names in layer_types sharing rope[0] when n_lt == 0 */
    char alias[MAX_ALIAS][NAME_LEN];
    posenc_bias_config bias;
    size_t n_notes;
    char *notes[MAX_NOTES];
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

/* ---- class tables (hf-rope.md §1.3, §1.4, §3.2, §3.3) ---- */

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

/* default_theta of the config class (§3.3). */
static double class_default_theta(const char *cls)
{
    static const struct { const char *name; double theta; } tab[] = {
        { "apertus", 1.2e7 },
        { "bitnet", 5e5 }, { "blt", 5e5 }, { "cohere", 5e5 }, { "cohere2", 5e5 }, { "csm", 5e5 },
        { "ernie4_5", 5e5 }, { "ernie4_5_moe", 5e5 }, { "evolla", 5e5 }, { "flex_olmo", 5e5 },
        { "llama4_text", 5e5 }, { "mllama_text", 5e5 }, { "paddleocr", 5e5 },
        { "cwm", 1e6 }, { "emu3", 1e6 }, { "lfm2", 1e6 }, { "lfm2_moe", 1e6 }, { "minimax", 1e6 },
        { "mixtral", 1e6 }, { "phimoe", 1e6 }, { "qwen2_vl_text", 1e6 },
        { "qwen2_5_vl_text", 1e6 }, { "qwen2_5_omni", 1e6 }, { "qwen3_omni_moe_text", 1e6 },
        { "solar_open", 1e6 },
        { "qwen3_vl_text", 5e5 }, { "qwen3_vl_moe_text", 5e5 },
        { "gpt_oss", 1.5e5 }, { "helium", 1e5 }, { "fuyu", 25000 },
        { "jina_embeddings_v3", 20000 }, { "longcat_flash", 1e7 }, { "minimax_m2", 5e6 },
        { "smollm3", 2e6 }, { "hy_v3", 11158840 }, { "nomic_bert", 1000 },
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (strcmp(cls, tab[i].name) == 0)
            return tab[i].theta;
    return 10000.0;
}

/* head_dim class default when the JSON has none (§1.4); 0 = hidden_size / num_attention_heads. */
static int class_default_head_dim(const char *cls)
{
    static const struct { const char *name; int hd; } tab[] = {
        { "qwen3", 128 }, { "qwen3_moe", 128 }, { "qwen3_next", 256 }, { "qwen3_5", 256 },
        { "qwen3_5_text", 256 }, { "qwen3_5_moe", 256 }, { "qwen3_5_moe_text", 256 },
        { "gemma", 256 }, { "gemma2", 256 }, { "gemma3_text", 256 }, { "gemma4_text", 256 },
        { "gpt_oss", 64 }, { "minimax_m2", 128 }, { "glm", 128 }, { "glm4", 128 },
        { "llama4_text", 128 }, { "qwen3_vl_text", 128 }, { "qwen3_vl_moe_text", 128 },
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (strcmp(cls, tab[i].name) == 0)
            return tab[i].hd;
    return 0;
}

/* partial_rotary_factor class default (§3.2); 0 = none. */
static double class_default_prf(const char *cls)
{
    static const struct { const char *name; double prf; } tab[] = {
        { "phi", 0.5 }, { "persimmon", 0.5 }, { "stablelm", 0.25 }, { "qwen3_next", 0.25 },
        { "qwen3_5", 0.25 }, { "qwen3_5_text", 0.25 }, { "qwen3_5_moe", 0.25 },
        { "qwen3_5_moe_text", 0.25 }, { "nemotron", 0.5 }, { "glm", 0.5 }, { "glm4", 0.5 },
        { "glm4_moe", 0.5 }, { "glm4v_moe", 0.5 }, { "glm4v_moe_text", 0.5 }, { "glmasr", 0.5 },
        { "fuyu", 0.5 }, { "recurrent_gemma", 0.5 }, { "moonshine", 0.9 }, { "solar_open", 0.5 },
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (strcmp(cls, tab[i].name) == 0)
            return tab[i].prf;
    return 0;
}

/* Classes whose own default RoPE init honours partial_rotary_factor (§1.4). */
static int class_default_honours_prf(const char *cls)
{
    static const char *const list[] = {
        "phi", "phi3", "phi4_multimodal", "persimmon", "stablelm", "gpt_neox", "gpt_neox_japanese",
        "nemotron", "glm", "glm4", "glm4_moe", "glm4_moe_lite", "glm4v", "glm4v_text", "glm4v_moe",
        "glm4v_moe_text", "glm_image", "glm_ocr", "glm_moe_dsa", "glmasr", "qwen3_next", "qwen3_5",
        "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "minimax_m2", "moonshine",
        "moonshine_streaming", "recurrent_gemma", "solar_open", "laguna", "deepseek_v4",
        "efficientloftr", "musicflamingo", "mimo_v2_flash", NULL
    };
    return in_list(cls, list);
}

/* The text sub-config class of a composite model_type (text_config without a model_type, or a
 * flat legacy multimodal config). */
static const char *text_class(const char *mt)
{
    static const struct { const char *outer, *text; } tab[] = {
        { "gemma3", "gemma3_text" }, { "gemma4", "gemma4_text" }, { "llama4", "llama4_text" },
        { "mllama", "mllama_text" }, { "qwen2_vl", "qwen2_vl_text" },
        { "qwen2_5_vl", "qwen2_5_vl_text" }, { "qwen3_vl", "qwen3_vl_text" },
        { "qwen3_vl_moe", "qwen3_vl_moe_text" }, { "qwen3_5", "qwen3_5_text" },
        { "qwen3_5_moe", "qwen3_5_moe_text" }, { "glm4v", "glm4v_text" },
        { "glm4v_moe", "glm4v_moe_text" }, { "RefinedWebModel", "falcon" },
        { "RefinedWeb", "falcon" },
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (strcmp(mt, tab[i].outer) == 0)
            return tab[i].text;
    return mt;
}

/* ---- resolution context and JSON helpers ---- */

typedef struct ctx {
    const char *src;
    const cJSON *tc;        /* the (text) config the keys are read from */
    const char *tp;         /* "" or "text_config." for messages */
    char cls[NAME_LEN];     /* class name for the tables */
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
    const char *k = key ? key : "head_dim";
    TRY(get_int(c, c->tc, c->tp, k, 1, 2 * POSENC_MAX_FREQ, &v, &p));
    if (p) {
        *out = (int)v;
        return POSENC_OK;
    }
    int d = class_default_head_dim(c->cls);
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

struct ropesrc {
    const cJSON *dict;      /* the rope dict (legacy rope_scaling or rope_parameters[...]) */
    char dpath[128];        /* its name in messages, with trailing '.' */
    int per_layer;          /* Case 2: dict came from a per-layer-type dict */
    int truncate_default;   /* yarn truncate when the dict has none */
    const char *theta_key;  /* top-level fallback key ("rope_theta", "rope_local_base_freq", ...) */
    int theta_dict_first;   /* 1: dict value beats theta_key (the base rule) */
    double theta_default;
    int theta_fixed;        /* GPT-J / CodeGen: 10000 whatever the config says */
    int head_dim;
    const char *prf_key;    /* top-level partial_rotary_factor key ("rotary_pct" for NeoX) */
    double prf_default;     /* class default, 0 = none */
    int prf_default_rules;  /* 1: dict value beats top-level for default type */
    int rotary_dim_fixed;   /* >0: rotated dims come from the model's own code (MiniMax-M2) */
    posenc_style style;
};

static posenc_status parse_rope_type(ctx *c, const struct ropesrc *s, posenc_rope_type *t,
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
    static const char *const phi3[] = { "phi3", "phi4_multimodal", NULL };
    if (in_list(c->cls, phi3) && (strcmp(name, "su") == 0 || strcmp(name, "yarn") == 0)) {
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

static posenc_status read_factor_list(ctx *c, const struct ropesrc *s, const char *key, int n,
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

static posenc_status read_mrope(ctx *c, const struct ropesrc *s, posenc_rope_config *r,
                                int forced)
{
    static const char *const v3[] = { "qwen3_vl", "qwen3_vl_text", "qwen3_vl_moe",
                                      "qwen3_vl_moe_text", NULL };
    static const char *const q35[] = { "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
                                       "qwen3_5_moe_text", NULL };
    int interleaved_class = in_list(c->cls, v3) || in_list(c->cls, q35);
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
    } else if (interleaved_class) {
        const int *d = in_list(c->cls, v3) ? (const int[]){ 24, 20, 20 }
                                           : (const int[]){ 11, 11, 10 };
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

static posenc_status resolve_rope(ctx *c, const struct ropesrc *s, posenc_rope_config *r)
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
        if (!found) {
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
     * default init uses the dict value (§1.2 step 5) */
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
        int honours = scaled || class_default_honours_prf(c->cls);
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
    static const char *const phi3[] = { "phi3", "phi4_multimodal", NULL };
    int is_phi3 = in_list(c->cls, phi3);
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
    return POSENC_OK;
}

/* ---- per-model set-up ---- */

static void ropesrc_init(ctx *c, struct ropesrc *s, const cJSON *dict, const char *dictname)
{
    memset(s, 0, sizeof *s);
    s->dict = dict;
    snprintf(s->dpath, sizeof s->dpath, "%s%s.", c->tp, dictname);
    s->truncate_default = 1;
    s->theta_key = "rope_theta";
    s->theta_dict_first = 1;
    s->theta_default = class_default_theta(c->cls);
    s->prf_key = "partial_rotary_factor";
    s->prf_default = class_default_prf(c->cls);
    s->prf_default_rules = 1;
    s->style = POSENC_STYLE_NEOX;
}

static posenc_status add_alias_names(ctx *c)
{
    const cJSON *lt = item(c->tc, "layer_types");
    if (!lt || cJSON_IsNull(lt))
        return POSENC_OK;
    if (!cJSON_IsArray(lt))
        return cfgerr(c, POSENC_ECONFIG, "%slayer_types must be a list of strings", c->tp);
    posenc_model *m = c->m;
    for (const cJSON *e = lt->child; e; e = e->next) {
        if (!cJSON_IsString(e) || !e->valuestring)
            return cfgerr(c, POSENC_ECONFIG, "%slayer_types must be a list of strings", c->tp);
        size_t i;
        for (i = 0; i < m->n_alias; i++)
            if (strcmp(m->alias[i], e->valuestring) == 0)
                break;
        if (i < m->n_alias)
            continue;
        if (m->n_alias >= MAX_ALIAS)
            return cfgerr(c, POSENC_ECONFIG, "%slayer_types has more than %d distinct names",
                          c->tp, MAX_ALIAS);
        TRY(copy_name(c, m->alias[m->n_alias], e->valuestring, "layer type"));
        m->n_alias++;
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

static posenc_status add_layer(ctx *c, const char *name, const struct ropesrc *s)
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
static posenc_status setup_generic(ctx *c, struct ropesrc *base)
{
    const cJSON *rs, *rp, *dict;
    const char *dname;
    TRY(get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    if (!obj_empty(rs)) {
        dict = rs;
        dname = "rope_scaling";
        if (!obj_empty(rp))
            note(c, "legacy rope_scaling replaces rope_parameters (as transformers does)");
    } else {
        dict = rp;
        dname = "rope_parameters";
    }
    /* Case 2: every key of the dict is a layer type */
    int per_layer = c->m->n_alias > 0 && !obj_empty(dict);
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
        struct ropesrc s = *base;
        s.dict = dict;
        snprintf(s.dpath, sizeof s.dpath, "%s%s.", c->tp, dname);
        return resolve_rope(c, &s, &c->m->rope[0]);
    }
    for (const cJSON *e = dict->child; e; e = e->next) {
        struct ropesrc s = *base;
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

/* Gemma 3: full_attention gets rope_theta (1e6) + legacy rope_scaling, sliding_attention gets
 * rope_local_base_freq (1e4). */
static posenc_status setup_gemma3(ctx *c, struct ropesrc *base)
{
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
    if (!obj_empty(rs)) {
        /* full_attention.update(rope_scaling) */
        merged = full ? cJSON_Duplicate(full, 1) : cJSON_CreateObject();
        if (!merged)
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
        for (const cJSON *e = rs->child; e; e = e->next) {
            cJSON *dup = cJSON_Duplicate(e, 1);
            if (!dup) {
                cJSON_Delete(merged);
                return cfgerr(c, POSENC_ENOMEM, "out of memory");
            }
            if (cJSON_GetObjectItemCaseSensitive(merged, e->string))
                cJSON_ReplaceItemInObjectCaseSensitive(merged, e->string, dup);
            else
                cJSON_AddItemToObject(merged, e->string, dup);
        }
    }
    struct ropesrc s = *base;
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
static posenc_status setup_gemma4(ctx *c, struct ropesrc *base)
{
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
    struct ropesrc s = *base;
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
static posenc_status setup_mimo(ctx *c, struct ropesrc *base)
{
    const cJSON *rs, *rp;
    TRY(get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    const cJSON *dict = !obj_empty(rs) ? rs : rp;
    struct ropesrc s = *base;
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
                "encoder-decoder model uses causal buckets (--decoder)");
    return POSENC_OK;
}

static posenc_status setup_learned(ctx *c, const char *tensor, const char *max_key,
                                   int64_t max_def)
{
    posenc_model *m = c->m;
    m->enc = POSENC_ENC_LEARNED;
    TRY(fill_heads(c));
    TRY(read_max(c, max_key, max_def));
    snprintf(m->bias.learned_tensor, sizeof m->bias.learned_tensor, "%s", tensor);
    return POSENC_OK;
}

/* Fixed sinusoidal tables (the variant is chosen by gen from the model type: vaswani for
 * DistilBERT/XLM, marian for Marian/Pegasus, fairseq for FSMT). */
static posenc_status setup_sinusoidal(ctx *c, int64_t max_def, int padding_idx)
{
    posenc_model *m = c->m;
    m->enc = POSENC_ENC_SINUSOIDAL;
    TRY(fill_heads(c));
    if (m->bias.d_model < 1)
        return cfgerr(c, POSENC_ECONFIG, "the model width (d_model/dim/hidden_size) is missing");
    TRY(read_max(c, "max_position_embeddings", max_def));
    m->bias.padding_idx = padding_idx;
    return POSENC_OK;
}

static int is_cls(const ctx *c, const char *name)
{
    return strcmp(c->cls, name) == 0;
}

/* Decide the encoding of non-RoPE families; *done = 1 when handled. */
static posenc_status setup_nonrope(ctx *c, int *done)
{
    posenc_model *m = c->m;
    int p, b;
    *done = 1;
    if (is_cls(c, "bloom")) {
        TRY(setup_alibi(c, POSENC_ALIBI_REFERENCE));
        return read_max(c, "seq_length", 0);
    }
    if (is_cls(c, "mpt")) {
        const cJSON *ac;
        TRY(get_obj(c, c->tc, c->tp, "attn_config", &ac));
        int alibi = 1;
        TRY(get_bool(c, ac, "attn_config.", "alibi", &b, &p));
        if (p)
            alibi = b;
        if (!alibi) {
            note(c, "attn_config.alibi is false: MPT uses a learned position table (wpe)");
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
    if (is_cls(c, "falcon")) {
        TRY(get_bool(c, c->tc, c->tp, "alibi", &b, &p));
        if (p && b) {
            TRY(setup_alibi(c, POSENC_ALIBI_FALCON));
            return read_max(c, "max_position_embeddings", 2048);
        }
        *done = 0;
        return POSENC_OK;
    }
    if (is_cls(c, "baichuan")) {
        int64_t hidden, heads;
        int have;
        TRY(heads_hidden(c, &heads, &hidden, &have));
        int rope_keys = has(c->tc, "rope_theta") || has(c->tc, "rope_scaling") ||
                        has(c->tc, "rope_parameters");
        if (!rope_keys && hidden == 5120) {
            TRY(setup_alibi(c, POSENC_ALIBI_REFERENCE));
            note(c, "baichuan with hidden_size 5120 is Baichuan-13B: ALiBi (the 7B model, "
                    "hidden_size 4096, uses RoPE)");
            if (has(c->tc, "max_position_embeddings"))
                return read_max(c, "max_position_embeddings", 0);
            return read_max(c, "model_max_length", 0);
        }
        *done = 0;
        return POSENC_OK;
    }
    static const char *const t5[] = { "t5", "mt5", "umt5", "longt5", "switch_transformers",
                                      NULL };
    if (in_list(c->cls, t5))
        return setup_t5(c);
    if (is_cls(c, "gpt2"))
        return setup_learned(c, "wpe.weight", "n_positions", 1024);
    if (is_cls(c, "opt")) {
        TRY(setup_learned(c, "decoder.embed_positions.weight", "max_position_embeddings", 2048));
        note(c, "OPT's learned table has max_position_embeddings + 2 rows: position p uses row "
                "p + 2");
        return POSENC_OK;
    }
    static const char *const bert[] = { "bert", "roberta", "xlm-roberta", "camembert", "electra",
                                        "ernie", "xlm-roberta-xl", "data2vec-text", NULL };
    if (in_list(c->cls, bert)) {
        const char *pet;
        TRY(get_str(c, c->tc, c->tp, "position_embedding_type", &pet));
        if (pet && (strcmp(pet, "relative_key") == 0 || strcmp(pet, "relative_key_query") == 0)) {
            m->enc = POSENC_ENC_SHAW;
            TRY(fill_heads(c));
            TRY(read_max(c, "max_position_embeddings", 512));
            m->bias.max_relative_position = (int)(m->max_positions > 1 ? m->max_positions - 1
                                                                       : 1);
            note(c, "position_embedding_type %s: relative distances clipped to +-(max_position_"
                    "embeddings - 1), on top of the absolute table", pet);
            return POSENC_OK;
        }
        if (pet && strcmp(pet, "absolute") != 0)
            return cfgerr(c, POSENC_ECONFIG, "unknown position_embedding_type '%.60s' (known: "
                          "absolute, relative_key, relative_key_query)", pet);
        TRY(setup_learned(c, "embeddings.position_embeddings.weight", "max_position_embeddings",
                          512));
        static const char *const padded[] = { "roberta", "xlm-roberta", "camembert",
                                              "xlm-roberta-xl", "data2vec-text", NULL };
        if (in_list(c->cls, padded)) {
            int64_t v;
            TRY(get_int(c, c->tc, c->tp, "pad_token_id", 0, 1 << 30, &v, &p));
            m->bias.padding_idx = p ? (int)v : 1;
            note(c, "%s positions start at padding_idx + 1 = %d", c->cls,
                 m->bias.padding_idx + 1);
        }
        return POSENC_OK;
    }
    if (is_cls(c, "distilbert")) {
        TRY(get_bool(c, c->tc, c->tp, "sinusoidal_pos_embds", &b, &p));
        if (p && b)
            return setup_sinusoidal(c, 512, -1);
        return setup_learned(c, "embeddings.position_embeddings.weight", "max_position_embeddings",
                             512);
    }
    if (is_cls(c, "xlm")) {
        TRY(get_bool(c, c->tc, c->tp, "sinusoidal_embeddings", &b, &p));
        if (p && b)
            return setup_sinusoidal(c, 512, -1);
        return setup_learned(c, "position_embeddings.weight", "max_position_embeddings", 512);
    }
    static const char *const marian[] = { "marian", "pegasus", NULL };
    if (in_list(c->cls, marian))
        return setup_sinusoidal(c, 1024, -1);
    if (is_cls(c, "fsmt")) {
        int64_t v;
        TRY(get_int(c, c->tc, c->tp, "pad_token_id", 0, 1 << 30, &v, &p));
        TRY(setup_sinusoidal(c, 1024, p ? (int)v : 1));
        note(c, "fsmt uses fairseq sinusoids: row padding_idx (%d) is zero and real tokens "
                "start at row padding_idx + 1", m->bias.padding_idx);
        return POSENC_OK;
    }
    if (is_cls(c, "nemotron_h")) {
        m->enc = POSENC_ENC_NONE;
        TRY(fill_heads(c));
        TRY(read_max(c, "max_position_embeddings", 0));
        if (has(c->tc, "rope_theta") || has(c->tc, "partial_rotary_factor"))
            note(c, "nemotron_h attention layers use no position encoding (NoPE): rope_theta and "
                    "partial_rotary_factor in the config are ignored");
        else
            note(c, "nemotron_h attention layers use no position encoding (NoPE)");
        return POSENC_OK;
    }
    if (is_cls(c, "chatglm")) {
        TRY(get_bool(c, c->tc, c->tp, "position_encoding_2d", &b, &p));
        if (p && b)
            return cfgerr(c, POSENC_EUNSUPPORTED,
                          "ChatGLM-6B 2-D RoPE (position_encoding_2d) is not supported");
    }
    *done = 0;
    return POSENC_OK;
}

/* ---- RoPE models ---- */

static posenc_status setup_rope(ctx *c)
{
    posenc_model *m = c->m;
    struct ropesrc base;
    int p, b;
    int64_t v;
    m->enc = POSENC_ENC_ROPE;
    ropesrc_init(c, &base, NULL, "rope_parameters");
    TRY(fill_heads(c));

    /* max_position_embeddings (with the class renames and defaults) */
    c->max_pos_key = "max_position_embeddings";
    static const char *const gptj[] = { "gptj", "codegen", NULL };
    int is_gptj = in_list(c->cls, gptj);
    if (is_gptj)
        c->max_pos_key = "n_positions";
    else if (is_cls(c, "chatglm"))
        c->max_pos_key = "seq_length";
    else if (is_cls(c, "baichuan") && !has(c->tc, "max_position_embeddings"))
        c->max_pos_key = "model_max_length";
    TRY(get_int(c, c->tc, c->tp, c->max_pos_key, 1, (int64_t)1 << 53, &v, &p));
    if (p) {
        c->max_pos = v;
    } else if (is_gptj || is_cls(c, "falcon")) {
        c->max_pos = 2048;
        note(c, "%s %d is the %s class default (not in the config)", c->max_pos_key, 2048,
             c->cls);
    }
    const cJSON *raw = item(c->tc, c->max_pos_key);
    if (raw && cJSON_IsNumber(raw) && raw->valuedouble < 0)
        return cfgerr(c, POSENC_ECONFIG, "%s%s must be > 0", c->tp, c->max_pos_key);
    m->max_positions = c->max_pos;
    m->bias.max_positions = c->max_pos;

    /* head_dim */
    static const char *const dsv[] = { "deepseek_v2", "deepseek_v3", "kimi_k2", "glm_moe_dsa",
                                       NULL };
    if (in_list(c->cls, dsv)) {
        TRY(get_int(c, c->tc, c->tp, "qk_rope_head_dim", 2, 2 * POSENC_MAX_FREQ, &v, &p));
        if (!p && is_cls(c, "glm_moe_dsa"))
            TRY(get_int(c, c->tc, c->tp, "head_dim", 2, 2 * POSENC_MAX_FREQ, &v, &p));
        if (!p) {
            v = 64;
            note(c, "qk_rope_head_dim 64 is the %s class default (not in the config)", c->cls);
        }
        base.head_dim = (int)v;
    } else if (is_cls(c, "chatglm")) {
        TRY(get_int(c, c->tc, c->tp, "kv_channels", 2, 2 * POSENC_MAX_FREQ, &v, &p));
        if (p)
            base.head_dim = (int)v;
        else
            TRY(resolve_head_dim(c, NULL, &base.head_dim));
    } else {
        TRY(resolve_head_dim(c, NULL, &base.head_dim));
    }
    m->bias.head_dim = base.head_dim;

    /* style */
    static const char *const gptj_style[] = { "gptj", "codegen", "cohere", "cohere2", "glm",
                                              "glm4", "chatglm", "llama4_text", "deepseek_v2",
                                              NULL };
    if (in_list(c->cls, gptj_style))
        base.style = POSENC_STYLE_GPTJ;
    if (is_cls(c, "glm") || is_cls(c, "glm4"))
        note(c, "%s interleaves the first rotary_dim/2 cos/sin entries inside apply: pairs "
                "(2i, 2i+1) (gptj style)", c->cls);
    if (is_cls(c, "llama4_text") || is_cls(c, "deepseek_v2"))
        note(c, "%s rotates complex pairs (2i, 2i+1) (gptj style)", c->cls);
    if (is_cls(c, "deepseek_v3") || is_cls(c, "kimi_k2")) {
        int inter = 1;
        TRY(get_bool(c, c->tc, c->tp, "rope_interleave", &b, &p));
        if (p)
            inter = b;
        if (inter) {
            base.style = POSENC_STYLE_GPTJ;
            note(c, "rope_interleave: pairs (2i, 2i+1) (gptj style); transformers de-interleaves "
                    "q/k first and applies rotate_half, so its output stays permuted");
        }
    }
    if (is_cls(c, "glm_moe_dsa") && has(c->tc, "rope_interleave"))
        note(c, "rope_interleave is not read by transformers' glm_moe_dsa code: neox "
                "(rotate_half) style");

    /* per-model renames */
    if (is_gptj) {
        base.theta_fixed = 1;
        base.style = POSENC_STYLE_GPTJ;
        const cJSON *rd = item(c->tc, "rotary_dim");
        if (rd && cJSON_IsNull(rd)) {
            base.rotary_dim_fixed = base.head_dim;
        } else {
            TRY(get_int(c, c->tc, c->tp, "rotary_dim", 0, 2 * POSENC_MAX_FREQ, &v, &p));
            if (p && v == 0)
                return cfgerr(c, POSENC_ECONFIG, "%srotary_dim must be > 0", c->tp);
            base.rotary_dim_fixed = p ? (int)v : 64;
            if (!p)
                note(c, "rotary_dim 64 is the %s class default (not in the config)", c->cls);
        }
        if (base.rotary_dim_fixed > base.head_dim)
            base.rotary_dim_fixed = base.head_dim; /* GPT-J slices q[..., :rotary_dim] */
    }
    if (is_cls(c, "gpt_neox") || is_cls(c, "gpt_neox_japanese")) {
        base.theta_key = "rotary_emb_base";
        base.prf_key = "rotary_pct";
        base.prf_default = is_cls(c, "gpt_neox") ? 0.25 : 1.0;
        base.prf_default_rules = 0;
    }
    if (is_cls(c, "minimax_m2")) {
        TRY(get_int(c, c->tc, c->tp, "rotary_dim", 1, 2 * POSENC_MAX_FREQ, &v, &p));
        if (p) {
            base.rotary_dim_fixed = (int)v;
            note(c, "rotary_dim %lld: posenc follows the model's own code (rotates %lld dims); "
                    "current transformers ignores rotary_dim and rotates all %d head_dim dims",
                 (long long)v, (long long)v, base.head_dim);
        }
    }
    if (is_cls(c, "mistral4") && has(c->tc, "qk_rope_head_dim") && !has(c->tc,
                                                                          "partial_rotary_factor")) {
        TRY(get_int(c, c->tc, c->tp, "qk_rope_head_dim", 1, 2 * POSENC_MAX_FREQ, &v, &p));
        base.prf_default = (double)v / base.head_dim;
    }
    if (is_cls(c, "chatglm")) {
        double ratio = 1;
        TRY(get_num(c, c->tc, c->tp, "rope_ratio", &ratio, &p));
        if (!p)
            ratio = 1;
        if (!(ratio > 0))
            return cfgerr(c, POSENC_ECONFIG, "%srope_ratio must be > 0", c->tp);
        base.theta_default = 10000.0 * ratio;
        base.theta_key = NULL;
        base.rotary_dim_fixed = base.head_dim / 2;
        note(c, "chatglm (remote code): rotates the first kv_channels/2 dims in adjacent pairs, "
                "theta = 10000 * rope_ratio");
    }
    if (is_cls(c, "llama4_text"))
        note(c, "llama4_text: the layers marked 0 in no_rope_layers (by default every 4th) use "
                "no RoPE");
    if (is_cls(c, "qwen3_next") || strncmp(c->cls, "qwen3_5", 7) == 0)
        note(c, "only the full_attention layers use RoPE (linear_attention layers have none)");

    TRY(add_alias_names(c));
    if (is_cls(c, "gemma3_text"))
        return setup_gemma3(c, &base);
    if (is_cls(c, "gemma4_text"))
        return setup_gemma4(c, &base);
    if (is_cls(c, "mimo_v2_flash"))
        return setup_mimo(c, &base);
    if (is_cls(c, "gpt_oss") && obj_empty(item(c->tc, "rope_scaling")) &&
        obj_empty(item(c->tc, "rope_parameters"))) {
        cJSON *def = cJSON_Parse("{\"rope_type\":\"yarn\",\"factor\":32.0,\"beta_fast\":32.0,"
                                 "\"beta_slow\":1.0,\"truncate\":false,"
                                 "\"original_max_position_embeddings\":4096}");
        if (!def)
            return cfgerr(c, POSENC_ENOMEM, "out of memory");
        struct ropesrc s = base;
        s.dict = def;
        snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.", c->tp);
        note(c, "rope parameters are the gpt_oss default (yarn, factor 32, truncate false, "
                "original_max_position_embeddings 4096)");
        posenc_status st = resolve_rope(c, &s, &m->rope[0]);
        cJSON_Delete(def);
        return st;
    }
    TRY(setup_generic(c, &base));
    if (m->n_lt == 0 && (is_cls(c, "deepseek_v3") || is_cls(c, "kimi_k2")) &&
        m->rope[0].type == POSENC_ROPE_YARN && m->rope[0].mscale_all_dim != 0) {
        m->rope[0].softmax_mscale = 1;
        note(c, "%s multiplies the softmax scale by (0.1 * mscale_all_dim * ln(factor) + 1)^2 "
                "outside the tables", c->cls);
    }
    if (is_cls(c, "deepseek_v2") && m->rope[0].type == POSENC_ROPE_YARN &&
        m->rope[0].mscale_all_dim != 0)
        note(c, "deepseek_v2: transformers omits the mscale_all_dim softmax factor that "
                "DeepSeek-V3 applies");
    return POSENC_OK;
}

/* ---- public API ---- */

posenc_status posenc_model_from_json(const struct cJSON *root, const char *source,
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
    m->bias.padding_idx = -1;
    snprintf(m->source, sizeof m->source, "%s", c.src);

    posenc_status st;
    const char *outer = NULL, *inner = NULL;
    const cJSON *tcfg = NULL;
    c.tc = root;
    c.tp = "";
    if ((st = get_str(&c, root, "", "model_type", &outer)) != POSENC_OK)
        goto fail;
    if ((st = get_obj(&c, root, "", "text_config", &tcfg)) != POSENC_OK)
        goto fail;
    if (tcfg) {
        c.tc = tcfg;
        c.tp = "text_config.";
        if ((st = get_str(&c, tcfg, "text_config.", "model_type", &inner)) != POSENC_OK)
            goto fail;
    }
    const char *mt = inner ? inner : outer ? outer : "";
    if ((st = copy_name(&c, m->model_type, mt, "model_type")) != POSENC_OK)
        goto fail;
    if ((st = copy_name(&c, c.cls, inner ? inner : text_class(mt), "model_type")) != POSENC_OK)
        goto fail;
    if (!*mt)
        note(&c, "no model_type in the config: generic (Llama-style) rules applied");

    int done;
    if ((st = setup_nonrope(&c, &done)) != POSENC_OK)
        goto fail;
    if (!done && (st = setup_rope(&c)) != POSENC_OK)
        goto fail;
    *out = m;
    return POSENC_OK;
fail:
    posenc_model_free(m);
    return st;
}

void posenc_model_free(posenc_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_notes; i++)
        free(m->notes[i]);
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

int64_t posenc_model_max_positions(const posenc_model *m)
{
    return m->max_positions;
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
