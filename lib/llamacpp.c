/* llamacpp.c: RoPE as llama.cpp's converter writes it and its loader reads it (posenc/llamacpp.h).
 *
 * posenc_gguf_rope_from_model follows ggml-org/llama.cpp's convert_hf_to_gguf.py (the model
 * classes in conversion/MODEL.py) on the config it reads: the config.json keys with text_config's
 * merged over them (conversion/base.py TextModel.__init__), not transformers' resolution, which
 * the converter does not use for RoPE keys. posenc_ggml_rope_from_gguf follows
 * src/llama-model.cpp load_hparams, the per-architecture load_arch_hparams (src/models/) and
 * src/llama-context.cpp's cparams, in float32 where they are float32. What each architecture
 * does is one row of lib/llama_arch.def. No I/O here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "model_json.h"
#include "posenc/llamacpp.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- the architecture table (lib/llama_arch.def) ---- */

enum { CV_NONE = 0, CV_TEXT, CV_LLAMA, CV_MINISTRAL3, CV_QWEN3NEXT, CV_QWEN35, CV_PHI3,
       CV_DEEPSEEK2 };
enum { LD_BASE = 0, LD_MISTRAL3, LD_DEEPSEEK2, LD_GROK };
enum { KQ_UNREAD = 0, KQ_HEAD, KQ_ROT, KQ_MLA };
enum { SEC_NONE = 0, SEC_OPTIONAL, SEC_REQUIRED };

typedef struct arch_row {
    const char *name;
    int mode;           /* posenc_ggml_mode */
    int mode_sections;  /* 0: the same as mode */
    int conv, load, kq, nrot_full, sections;
    int mscale_log_mul; /* YaRN's mscale = yarn_log_mul when it is not 1 (llama-context.cpp:
                           "special-case DEEPSEEK v2", LLM_ARCH_DEEPSEEK2 only) */
} arch_row;

#define NONE POSENC_GGML_ROPE_NONE
#define NORM POSENC_GGML_ROPE_NORM
#define NEOX POSENC_GGML_ROPE_NEOX
#define MROPE POSENC_GGML_ROPE_MROPE
#define IMROPE POSENC_GGML_ROPE_IMROPE
#define VISION POSENC_GGML_ROPE_VISION
#define ARCH(n, ...) { .name = n, .mode = __VA_ARGS__ },
static const arch_row arch_rows[] = {
#include "llama_arch.def"
};
#undef ARCH
#undef NONE
#undef NORM
#undef NEOX
#undef MROPE
#undef IMROPE
#undef VISION

static const arch_row *arch_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof arch_rows / sizeof *arch_rows; i++)
        if (strcmp(arch_rows[i].name, name) == 0)
            return &arch_rows[i];
    return NULL;
}

void posenc_ggml_arch_info(const char *arch, posenc_ggml_arch *out)
{
    const arch_row *r = arch_find(arch);
    memset(out, 0, sizeof *out);
    out->mode = POSENC_GGML_ROPE_NONE;
    out->mode_sections = POSENC_GGML_ROPE_NONE;
    if (!r)
        return;
    out->known = 1;
    out->mode = (posenc_ggml_mode)r->mode;
    out->mode_sections = (posenc_ggml_mode)(r->mode_sections ? r->mode_sections : r->mode);
    out->converter = r->conv != CV_NONE;
    out->kq_known = r->kq != KQ_UNREAD;
    out->reads_sections = r->sections != SEC_NONE;
}

const char *posenc_ggml_mode_name(posenc_ggml_mode m)
{
    switch (m) {
    case POSENC_GGML_ROPE_NONE: return "none";
    case POSENC_GGML_ROPE_NORM: return "norm";
    case POSENC_GGML_ROPE_NEOX: return "neox";
    case POSENC_GGML_ROPE_MROPE: return "mrope";
    case POSENC_GGML_ROPE_VISION: return "vision";
    case POSENC_GGML_ROPE_IMROPE: return "imrope";
    }
    return "unknown";
}

/* ---- the converter's view of the config ---- */

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* Python's d.get(k) is not None */
static const cJSON *val(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* ModelBase.find_hparam(keys, optional=True): the first key present (even when null) */
static const cJSON *find_hparam(const cJSON *hp, const char *const *keys)
{
    for (; *keys; keys++) {
        const cJSON *v = get(hp, *keys);
        if (v)
            return cJSON_IsNull(v) ? NULL : v;
    }
    return NULL;
}

static int num(const cJSON *v, double *out)
{
    if (!cJSON_IsNumber(v))
        return 0;
    *out = v->valuedouble;
    return 1;
}

typedef struct conv {
    const posenc_model *m;
    const cJSON *hp;
    const cJSON *rp;      /* self.rope_parameters (mirrored) */
    const cJSON *full;    /* rope_parameters.get("full_attention", rope_parameters) */
    cJSON *own;           /* the mirrored rope_parameters, owned */
    posenc_gguf_rope *g;
    posenc_error *err;
} conv;

static posenc_status convfail(conv *c, const char *what)
{
    return posenc_seterr(c->err, POSENC_ECONFIG,
                         "model_type '%.60s': convert_hf_to_gguf.py (%s, architecture %s) fails "
                         "on this config: %s",
                         posenc_model_type(c->m), "conversion/", c->g->arch, what);
}

static const char *const k_theta[] = { "global_rope_theta", "rope_global_theta", "rope_theta_global",
                                       "rope_theta", "rotary_emb_base", NULL };
static const char *const k_local_theta[] = { "local_rope_theta", "rope_local_theta",
                                             "rope_theta_local", "swa_rope_theta",
                                             "rope_local_base_freq", NULL };
static const char *const k_prf[] = { "partial_rotary_factor", "rope_pct", "rope_percent", NULL };
static const char *const k_ctx[] = { "max_position_embeddings", "n_ctx", "n_positions",
                                     "max_length", "max_sequence_length", "model_max_length",
                                     NULL };
static const char *const k_embd[] = { "hidden_size", "n_embd", "dim", NULL };
static const char *const k_head[] = { "num_attention_heads", "n_head", "n_heads", NULL };

/* TextModel.__init__: self.rope_parameters, with the global keys mirrored into it */
static posenc_status mirror(conv *c)
{
    const cJSON *hp = c->hp, *src = NULL;
    if (get(hp, "rope_parameters"))
        src = get(hp, "rope_parameters");
    else
        src = get(hp, "rope_scaling");
    /* `... or {}`: null, an empty dict, anything falsy */
    c->own = cJSON_IsObject(src) && src->child ? cJSON_Duplicate(src, 1) : cJSON_CreateObject();
    if (!c->own)
        return posenc_seterr(c->err, POSENC_ENOMEM, "out of memory");
    cJSON *rp = c->own;
    if (!get(rp, "full_attention") && !get(rp, "sliding_attention")) {
        const cJSON *lt = find_hparam(hp, k_local_theta), *t = find_hparam(hp, k_theta);
        const cJSON *prf = find_hparam(hp, k_prf);
        const cJSON *omax = val(hp, "original_max_position_embeddings");
        if (lt) {
            cJSON *sw = cJSON_AddObjectToObject(rp, "sliding_attention");
            if (sw)
                cJSON_AddItemToObject(sw, "rope_theta", cJSON_Duplicate(lt, 1));
        }
        if (!get(rp, "rope_theta") && t)
            cJSON_AddItemToObject(rp, "rope_theta", cJSON_Duplicate(t, 1));
        if (!get(rp, "rope_type") && val(rp, "type"))
            cJSON_AddItemToObject(rp, "rope_type", cJSON_Duplicate(val(rp, "type"), 1));
        if (!get(rp, "partial_rotary_factor") && prf)
            cJSON_AddItemToObject(rp, "partial_rotary_factor", cJSON_Duplicate(prf, 1));
        if (!get(rp, "original_max_position_embeddings") && omax)
            cJSON_AddItemToObject(rp, "original_max_position_embeddings",
                                  cJSON_Duplicate(omax, 1));
    }
    c->rp = rp;
    c->full = get(rp, "full_attention") ? get(rp, "full_attention") : rp;
    return POSENC_OK;
}

static double f32(double x)
{
    return (double)(float)x;
}

static int hp_int(const cJSON *v, int64_t *out)
{
    double d;
    if (!num(v, &d) || d != floor(d) || fabs(d) > 9e15)
        return 0;
    *out = (int64_t)d;
    return 1;
}

/* TextModel.set_gguf_parameters: the RoPE keys and the shapes they need */
static posenc_status text_params(conv *c)
{
    posenc_gguf_rope *g = c->g;
    int64_t v;
    double d;
    if (hp_int(find_hparam(c->hp, k_ctx), &v)) {
        g->context_length = v;
        g->has |= POSENC_GGUF_CONTEXT_LENGTH;
    }
    if (hp_int(find_hparam(c->hp, k_embd), &v)) {
        g->embedding_length = v;
        g->has |= POSENC_GGUF_EMBEDDING_LENGTH;
    }
    if (hp_int(find_hparam(c->hp, k_head), &v)) {
        g->head_count = v;
        g->has |= POSENC_GGUF_HEAD_COUNT;
    }
    const cJSON *rp = c->full, *rt = val(rp, "rope_type");
    if (cJSON_IsString(rt)) {
        const cJSON *fac = val(rp, "factor");
        const char *t = rt->valuestring;
        if (strcmp(t, "linear") == 0 && fac) {
            if (!num(fac, &d))
                return convfail(c, "rope factor is not a number");
            snprintf(g->scaling_type, sizeof g->scaling_type, "linear");
            g->scaling_factor = f32(d);
            g->has |= POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR;
        } else if (strcmp(t, "yarn") == 0 && fac) {
            if (!num(fac, &d))
                return convfail(c, "rope factor is not a number");
            snprintf(g->scaling_type, sizeof g->scaling_type, "yarn");
            g->scaling_factor = f32(d);
            g->has |= POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR;
            if (!hp_int(get(rp, "original_max_position_embeddings"), &v))
                return convfail(c, "yarn needs rope_parameters['original_max_position_embeddings']");
            g->original_context_length = v;
            g->has |= POSENC_GGUF_ORIG_CTX;
            const cJSON *af = val(rp, "attention_factor");
            if (!get(rp, "attention_factor"))
                af = val(rp, "attn_factor");
            struct { const cJSON *v; double *dst; unsigned bit; } y[] = {
                { val(rp, "extrapolation_factor"), &g->yarn_ext_factor, POSENC_GGUF_YARN_EXT_FACTOR },
                { af, &g->yarn_attn_factor, POSENC_GGUF_YARN_ATTN_FACTOR },
                { val(rp, "beta_fast"), &g->yarn_beta_fast, POSENC_GGUF_YARN_BETA_FAST },
                { val(rp, "beta_slow"), &g->yarn_beta_slow, POSENC_GGUF_YARN_BETA_SLOW },
            };
            for (size_t i = 0; i < sizeof y / sizeof *y; i++)
                if (y[i].v && num(y[i].v, &d)) {
                    *y[i].dst = f32(d);
                    g->has |= y[i].bit;
                }
        } else if (strcmp(t, "su") == 0 || strcmp(t, "longrope") == 0) {
            snprintf(g->scaling_type, sizeof g->scaling_type, "longrope");
            g->has |= POSENC_GGUF_SCALING_TYPE;
        }
        /* dynamic (HunYuan's class), llama3 (generate_extra_tensors) and unknown types: no key */
    }
    const cJSON *ms = get(c->rp, "mrope_section");
    if (cJSON_IsArray(ms)) {
        int n = 0;
        for (const cJSON *e = ms->child; e && n < 4; e = e->next, n++) {
            if (!hp_int(e, &v))
                return convfail(c, "mrope_section holds a non-integer");
            g->sections[n] = (int32_t)v;
        }
        g->n_sections = 4; /* padded with zeros to [time, height, width, extra] */
        g->has |= POSENC_GGUF_DIMENSION_SECTIONS;
    }
    if (num(val(rp, "rope_theta"), &d)) {
        g->freq_base = f32(d);
        g->has |= POSENC_GGUF_FREQ_BASE;
    }
    if (num(val(get(c->rp, "sliding_attention"), "rope_theta"), &d)) {
        g->freq_base_swa = f32(d);
        g->has |= POSENC_GGUF_FREQ_BASE_SWA;
    }
    if (hp_int(val(c->hp, "head_dim"), &v)) {
        g->key_length = v;
        g->has |= POSENC_GGUF_KEY_LENGTH;
    }
    return POSENC_OK;
}

/* hparams.get("head_dim") or hidden_size // num_attention_heads (LlamaModel, Qwen3NextModel) */
static posenc_status rope_dim(conv *c, int64_t *out)
{
    int64_t hd, hs, nh;
    if (hp_int(val(c->hp, "head_dim"), &hd)) {
        *out = hd;
        return POSENC_OK;
    }
    if (!hp_int(get(c->hp, "hidden_size"), &hs) || !hp_int(get(c->hp, "num_attention_heads"), &nh) ||
        nh <= 0)
        return convfail(c, "no head_dim and no hidden_size / num_attention_heads");
    *out = hs / nh;
    return POSENC_OK;
}

/* LlamaModel.generate_extra_tensors: llama3's rope_freqs, in torch's float32 arithmetic:
 * freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)) is float32
 * (the Python scalar base is cast to float32 for the pow); each per-frequency expression mixes
 * a 0-dim float32 tensor with Python floats, which torch evaluates in float32 with the scalars
 * cast to float32; `scalar / tensor` is tensor.reciprocal() * scalar (torch/_tensor.py
 * __rdiv__). */
static posenc_status llama3_freqs(conv *c, int64_t dim)
{
    const cJSON *rp = c->full;
    double base = 10000.0, factor = 8.0, lo = 1.0, hi = 4.0, old = 8192;
    num(val(rp, "rope_theta"), &base);
    num(val(rp, "factor"), &factor);
    num(val(rp, "low_freq_factor"), &lo);
    num(val(rp, "high_freq_factor"), &hi);
    num(val(rp, "original_max_position_embeddings"), &old);
    if (dim <= 0 || dim / 2 > POSENC_MAX_FREQ || dim % 2)
        return convfail(c, "llama3 rope_freqs needs an even head dimension");
    double lo_wl = old / lo, hi_wl = old / hi;
    int n = (int)(dim / 2);
    for (int i = 0; i < n; i++) {
        float e = (float)(2 * i) / (float)dim;
        float fr = 1.0f / powf((float)base, e);
        float wl = (1.0f / fr) * (float)(2 * M_PI);
        float r;
        if (wl < (float)hi_wl)
            r = 1.0f;
        else if (wl > (float)lo_wl)
            r = (float)factor;
        else {
            float smooth = ((1.0f / wl) * (float)old - (float)lo) / (float)(hi - lo);
            r = 1.0f / ((1.0f - smooth) / (float)factor + smooth);
        }
        c->g->rope_freqs[i] = r;
    }
    c->g->n_rope_freqs = n;
    return POSENC_OK;
}

static posenc_status factor_list(conv *c, const cJSON *a, float *dst, int *n, const char *name)
{
    int k = 0;
    for (const cJSON *e = cJSON_IsArray(a) ? a->child : NULL; e; e = e->next) {
        double d;
        if (k >= POSENC_MAX_FREQ || !num(e, &d)) {
            char msg[96];
            snprintf(msg, sizeof msg, "rope %s is not a list of numbers", name);
            return convfail(c, msg);
        }
        dst[k++] = (float)d;
    }
    *n = k;
    return POSENC_OK;
}

/* Phi3MiniModel.set_gguf_parameters and generate_extra_tensors (conversion/phi.py) */
static posenc_status phi3_params(conv *c)
{
    static const char *const k_embd3[] = { "hidden_size", "n_embd", NULL };
    static const char *const k_head3[] = { "num_attention_heads", "n_head", NULL };
    static const char *const k_ctx3[] = { "n_positions", "max_position_embeddings", NULL };
    posenc_gguf_rope *g = c->g;
    int64_t embd, nh, ctx, orig;
    double prf = 1.0, theta;
    if (!hp_int(find_hparam(c->hp, k_embd3), &embd) || !hp_int(find_hparam(c->hp, k_head3), &nh) ||
        nh <= 0 || !hp_int(find_hparam(c->hp, k_ctx3), &ctx))
        return convfail(c, "Phi3MiniModel needs hidden_size, num_attention_heads and "
                           "max_position_embeddings");
    if (!hp_int(get(c->rp, "original_max_position_embeddings"), &orig))
        return convfail(c, "Phi3MiniModel needs original_max_position_embeddings");
    if (!num(get(c->full, "rope_theta"), &theta))
        return convfail(c, "Phi3MiniModel needs rope_theta");
    num(val(c->rp, "partial_rotary_factor"), &prf);
    int64_t dims = (int64_t)(prf * (double)embd) / nh;
    g->context_length = ctx;
    g->original_context_length = orig;
    g->embedding_length = embd;
    g->head_count = nh;
    g->dimension_count = dims;
    g->freq_base = f32(theta);
    g->has |= POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_ORIG_CTX | POSENC_GGUF_EMBEDDING_LENGTH |
              POSENC_GGUF_HEAD_COUNT | POSENC_GGUF_DIMENSION_COUNT | POSENC_GGUF_FREQ_BASE;
    const cJSON *lf = val(c->rp, "long_factor"), *sf = val(c->rp, "short_factor");
    if (!cJSON_IsArray(lf) || !lf->child)
        return POSENC_OK; /* `if not long_factors: return` */
    double scale = (double)ctx / (double)orig, attn;
    const cJSON *rt = val(c->rp, "rope_type");
    const char *t = cJSON_IsString(rt) ? rt->valuestring : "";
    if (!*t)
        return convfail(c, "Missing the required key rope_scaling.type");
    if (strcmp(t, "su") == 0 || strcmp(t, "longrope") == 0)
        attn = scale > 1.0 ? sqrt(1 + log(scale) / log((double)orig)) : 1.0;
    else if (strcmp(t, "yarn") == 0)
        attn = scale > 1.0 ? 0.1 * log(scale) + 1.0 : 1.0;
    else
        return convfail(c, "The rope scaling type is not supported yet");
    g->attn_factor = f32(attn);
    g->has |= POSENC_GGUF_ATTN_FACTOR;
    posenc_status st;
    if ((st = factor_list(c, lf, g->factors_long, &g->n_factors_long, "long_factor")) != POSENC_OK ||
        (st = factor_list(c, sf, g->factors_short, &g->n_factors_short, "short_factor")) != POSENC_OK)
        return st;
    if (g->n_factors_long != g->n_factors_short || 2 * (int64_t)g->n_factors_long != dims)
        return convfail(c, "The length of rope long and short factors must be rope_dims / 2");
    return POSENC_OK;
}

/* DeepseekV2Model.set_gguf_parameters (conversion/deepseek.py), after TextModel's */
static posenc_status deepseek2_params(conv *c)
{
    posenc_gguf_rope *g = c->g;
    int64_t rope, nope, lora = 512;
    double ms;
    if (!hp_int(get(c->hp, "qk_rope_head_dim"), &rope) || !hp_int(get(c->hp, "qk_nope_head_dim"), &nope))
        return convfail(c, "DeepseekV2Model needs qk_rope_head_dim and qk_nope_head_dim");
    if (get(c->hp, "kv_lora_rank") && !hp_int(get(c->hp, "kv_lora_rank"), &lora))
        return convfail(c, "kv_lora_rank is not an integer");
    g->key_length = lora + rope;
    g->key_length_mla = nope + rope;
    g->dimension_count = rope;
    g->has |= POSENC_GGUF_KEY_LENGTH | POSENC_GGUF_KEY_LENGTH_MLA | POSENC_GGUF_DIMENSION_COUNT;
    if (num(val(c->rp, "mscale_all_dim"), &ms)) {
        /* TAG_DEEPSEEK2_YARN_LOG_MUL_FIX: 0.1 * mscale_all_dim, divided again by the loader */
        g->yarn_log_multiplier = f32(0.1 * ms);
        g->has |= POSENC_GGUF_YARN_LOG_MUL;
    }
    return POSENC_OK;
}

posenc_status posenc_gguf_rope_from_model(const posenc_model *m, const char *layer_type,
                                          posenc_gguf_rope *out, posenc_error *err)
{
    const char *arch = pe_model_gguf_arch(m);
    const char *mt = posenc_model_type(m);
    if (!arch)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "model_type '%.60s': convert_hf_to_gguf.py has no class for it "
                             "(lib/families.def names no gguf_arch)",
                             *mt ? mt : posenc_model_family(m));
    const arch_row *row = arch_find(arch);
    if (!row || row->conv == CV_NONE)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "model_type '%.60s': convert_hf_to_gguf.py writes architecture '%s', "
                             "whose RoPE rules posenc has not read (lib/llama_arch.def)",
                             mt, arch);
    if (posenc_model_encoding(m) != POSENC_ENC_ROPE)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "model_type '%.60s' does not use RoPE", mt);
    /* the layer type must exist (the converter writes the full-attention parameters) */
    posenc_rope_config rc;
    posenc_status st = posenc_model_rope(m, layer_type, &rc, err);
    if (st != POSENC_OK)
        return st;
    posenc_gguf_rope g;
    memset(&g, 0, sizeof g);
    snprintf(g.arch, sizeof g.arch, "%s", arch);
    conv c = { m, pe_model_hparams(m), NULL, NULL, NULL, &g, err };
    if (!c.hp)
        return posenc_seterr(err, POSENC_EINVAL, "the model was not read from a config.json");
    if ((st = mirror(&c)) != POSENC_OK)
        goto out;
    int64_t dim;
    switch (row->conv) {
    case CV_PHI3:
        st = phi3_params(&c);
        break;
    case CV_DEEPSEEK2:
        if ((st = text_params(&c)) == POSENC_OK)
            st = deepseek2_params(&c);
        break;
    case CV_QWEN3NEXT:
    case CV_QWEN35: {
        double prf = 0.25;
        if ((st = text_params(&c)) != POSENC_OK || (st = rope_dim(&c, &dim)) != POSENC_OK)
            break;
        num(val(c.rp, "partial_rotary_factor"), &prf);
        g.dimension_count = (int64_t)((double)dim * prf);
        g.has |= POSENC_GGUF_DIMENSION_COUNT;
        if (row->conv == CV_QWEN35 && !get(c.rp, "mrope_section")) {
            static const int32_t dflt[4] = { 11, 11, 10, 0 };
            memcpy(g.sections, dflt, sizeof dflt);
            g.n_sections = 4;
            g.has |= POSENC_GGUF_DIMENSION_SECTIONS;
        }
        break;
    }
    case CV_LLAMA:
    case CV_MINISTRAL3:
        if ((st = text_params(&c)) != POSENC_OK || (st = rope_dim(&c, &dim)) != POSENC_OK)
            break;
        g.dimension_count = dim;
        g.has |= POSENC_GGUF_DIMENSION_COUNT;
        if (row->conv == CV_MINISTRAL3 && cJSON_IsString(get(c.hp, "model_type")) &&
            strcmp(get(c.hp, "model_type")->valuestring, "ministral3") == 0) {
            double ms;
            const cJSON *t = val(c.rp, "rope_type");
            if (!cJSON_IsString(t) || strcmp(t->valuestring, "yarn") != 0 ||
                !num(get(c.rp, "mscale_all_dim"), &ms)) {
                st = convfail(&c, "ministral3 must have a yarn rope_parameters with mscale_all_dim");
                break;
            }
            g.yarn_log_multiplier = f32(ms);
            g.has |= POSENC_GGUF_YARN_LOG_MUL;
        }
        {
            const cJSON *t = val(c.full, "rope_type");
            if (cJSON_IsString(t) && strcasecmp(t->valuestring, "llama3") == 0) {
                int64_t d3;
                if ((st = rope_dim(&c, &d3)) == POSENC_OK)
                    st = llama3_freqs(&c, d3);
            }
        }
        break;
    default:
        st = text_params(&c);
        break;
    }
out:
    cJSON_Delete(c.own);
    if (st == POSENC_OK)
        *out = g;
    return st;
}

/* ---- what llama.cpp derives ---- */

static float get_mscale(float scale, float mscale)
{
    return scale <= 1.0f ? 1.0f : (0.1f * mscale * logf(scale) + 1.0f);
}

posenc_status posenc_ggml_rope_from_gguf(const posenc_gguf_rope *g, int64_t n_ctx,
                                         posenc_ggml_rope *out, posenc_error *err)
{
    const arch_row *row = arch_find(g->arch);
    if (!row)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "architecture '%.60s' is not one llama.cpp knows (src/llama-arch.cpp)",
                             g->arch);
    if (!(g->has & POSENC_GGUF_CONTEXT_LENGTH) || !(g->has & POSENC_GGUF_EMBEDDING_LENGTH))
        return posenc_seterr(err, POSENC_EFORMAT,
                             "llama.cpp refuses the file: %s.context_length and %s.embedding_length "
                             "are required (src/llama-model.cpp load_hparams)",
                             g->arch, g->arch);
    posenc_ggml_rope r;
    memset(&r, 0, sizeof r);
    /* load_hparams */
    uint32_t n_ctx_train = (uint32_t)g->context_length;
    uint32_t n_ctx_orig_yarn = g->has & POSENC_GGUF_ORIG_CTX ? (uint32_t)g->original_context_length
                                                             : n_ctx_train;
    float freq_base = g->has & POSENC_GGUF_FREQ_BASE ? (float)g->freq_base : 10000.0f;
    const char *stype = g->has & POSENC_GGUF_SCALING_TYPE ? g->scaling_type : "linear";
    int yarn = strcmp(stype, "yarn") == 0, none = strcmp(stype, "none") == 0;
    if (!yarn && !none && strcmp(stype, "linear") != 0 && strcmp(stype, "longrope") != 0)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "llama.cpp refuses the file: %s.rope.scaling.type '%.16s' is not "
                             "none, linear, yarn or longrope",
                             g->arch, stype);
    float ropescale = 0.0f;
    if (g->has & POSENC_GGUF_SCALING_FACTOR)
        ropescale = (float)g->scaling_factor;
    else if (g->has & POSENC_GGUF_SCALE_LINEAR)
        ropescale = (float)g->scaling_factor;
    float freq_scale_train = ropescale == 0.0f ? 1.0f : 1.0f / ropescale;
    float rope_attn_factor = g->has & POSENC_GGUF_ATTN_FACTOR ? (float)g->attn_factor : 1.0f;
    uint32_t n_embd = (uint32_t)g->embedding_length;
    uint32_t n_head = g->has & POSENC_GGUF_HEAD_COUNT ? (uint32_t)g->head_count : 0;
    uint32_t head_k = 0, n_rot = 0;
    if (n_head > 0) {
        head_k = g->has & POSENC_GGUF_KEY_LENGTH ? (uint32_t)g->key_length : n_embd / n_head;
        n_rot = g->has & POSENC_GGUF_DIMENSION_COUNT ? (uint32_t)g->dimension_count : head_k;
        if (row->nrot_full && n_rot != head_k)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "llama.cpp refuses the file: invalid n_rot: %u, expected %u "
                                 "(%s requires rope.dimension_count = the head size)",
                                 n_rot, head_k, g->arch);
    }
    /* per-architecture keys (src/models/ARCH.cpp load_arch_hparams) */
    float yarn_ext = -1.0f, yarn_attn = 1.0f, beta_fast = 32.0f, beta_slow = 1.0f, log_mul = 0.0f;
    if (row->load == LD_MISTRAL3 || row->load == LD_GROK) {
        if (g->has & POSENC_GGUF_YARN_BETA_FAST)
            beta_fast = (float)g->yarn_beta_fast;
        if (g->has & POSENC_GGUF_YARN_BETA_SLOW)
            beta_slow = (float)g->yarn_beta_slow;
    }
    if (row->load == LD_GROK) {
        if (g->has & POSENC_GGUF_YARN_EXT_FACTOR)
            yarn_ext = (float)g->yarn_ext_factor;
        if (g->has & POSENC_GGUF_YARN_ATTN_FACTOR)
            yarn_attn = (float)g->yarn_attn_factor;
    }
    if (row->load == LD_MISTRAL3 && (g->has & POSENC_GGUF_YARN_LOG_MUL))
        log_mul = (float)g->yarn_log_multiplier;
    if (row->load == LD_DEEPSEEK2 && (g->has & POSENC_GGUF_YARN_LOG_MUL))
        log_mul = (float)g->yarn_log_multiplier / 0.1f;
    int sections[4] = { 0 };
    if (row->sections) {
        if (g->n_sections > 0)
            for (int i = 0; i < 4 && i < g->n_sections; i++)
                sections[i] = g->sections[i];
        else if (row->sections == SEC_REQUIRED)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "llama.cpp refuses the file: %s.rope.dimension_sections is "
                                 "required",
                                 g->arch);
    }
    r.mode = (posenc_ggml_mode)row->mode;
    if (row->mode_sections && sections[0] > 0 && sections[1] > 0)
        r.mode = (posenc_ggml_mode)row->mode_sections;
    memcpy(r.sections, sections, sizeof sections);
    /* llama_context's cparams (src/llama-context.cpp), default context parameters */
    uint32_t ctx = n_ctx > 0 ? (uint32_t)n_ctx : n_ctx_train;
    float freq_scale = freq_scale_train;
    uint32_t n_ctx_orig = n_ctx_orig_yarn != 0 ? n_ctx_orig_yarn : n_ctx_train;
    if (none)
        freq_scale = 1.0f;
    float ext = yarn_ext, attn = yarn_attn;
    if (ext < 0.0f)
        ext = yarn ? 1.0f : 0.0f;
    if (ext != 0) {
        const float factor = 1.0f / freq_scale;
        if (log_mul != 0.0f) {
            float mscale = 1.0f;
            if (row->mscale_log_mul && log_mul != 1.0f)
                mscale = log_mul;
            attn = get_mscale(factor, mscale) / get_mscale(factor, log_mul);
        } else {
            attn = get_mscale(factor, 1.0f);
        }
        attn *= 1.0f / (1.0f + 0.1f * logf(factor));
    }
    attn *= rope_attn_factor;
    r.n_dims = (int)n_rot;
    r.head_dim = (int)head_k;
    r.n_ctx_orig = (int)n_ctx_orig;
    r.freq_base = freq_base;
    r.freq_scale = freq_scale;
    r.ext_factor = ext;
    r.attn_factor = attn;
    r.beta_fast = beta_fast;
    r.beta_slow = beta_slow;
    /* llama_model::get_rope_factors: rope_freqs, else long past n_ctx_orig_yarn, else short */
    const float *ff = NULL;
    int nf = 0;
    if (g->n_rope_freqs > 0) {
        ff = g->rope_freqs;
        nf = g->n_rope_freqs;
    } else if (ctx > n_ctx_orig_yarn && g->n_factors_long > 0) {
        ff = g->factors_long;
        nf = g->n_factors_long;
    } else if (g->n_factors_short > 0) {
        ff = g->factors_short;
        nf = g->n_factors_short;
    }
    if (ff) {
        if (nf != (int)n_rot / 2)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "llama.cpp refuses the file: a RoPE factor tensor holds %d "
                                 "values, not n_rot / 2 = %u",
                                 nf, n_rot / 2);
        memcpy(r.freq_factors, ff, (size_t)nf * sizeof *ff);
        r.n_freq_factors = nf;
    }
    switch (row->kq) {
    case KQ_HEAD:
        r.kq_scale = head_k ? 1.0f / sqrtf((float)head_k) : 0;
        break;
    case KQ_ROT:
        r.kq_scale = n_rot ? 1.0f / sqrtf((float)n_rot) : 0;
        break;
    case KQ_MLA: {
        uint32_t kmla = g->has & POSENC_GGUF_KEY_LENGTH_MLA ? (uint32_t)g->key_length_mla : head_k;
        const float attn_org = attn * (1.0f + 0.1f * logf(1.0f / freq_scale));
        const float mscale = attn_org * (1.0f + 0.1f * log_mul * logf(1.0f / freq_scale));
        r.kq_scale = kmla ? 1.0f * mscale * mscale / sqrtf((float)kmla) : 0;
        break;
    }
    default:
        r.kq_scale = 0; /* not read */
    }
    *out = r;
    return POSENC_OK;
}
