/* llamacpp.c: RoPE as llama.cpp's converter writes it and its loader reads it (posenc/llamacpp.h).
 *
 * posenc_gguf_rope_from_model follows ggml-org/llama.cpp's convert_hf_to_gguf.py (the model
 * classes in conversion/MODEL.py) on the config it reads: the config.json keys with text_config's
 * merged over them (conversion/base.py TextModel.__init__), not transformers' resolution, which
 * the converter does not use for RoPE keys. Which rules apply is the .conv column of the
 * architecture's row in lib/model/llama_arch.def (lib/model/llama_arch.c). No I/O here. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "lib/model/llama_arch.h"
#include "lib/model/model_json.h"
#include "posenc/llamacpp.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

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
    const posenc_rope_config *rc; /* transformers' resolution (posenc_model_rope) */
    int ignore_head_dim;          /* Granite: head_dim popped from the hparams */
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
    return (double)pe_tof(x);
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
    /* A config without rope_theta: run with transformers installed, the converter reads the
     * config through AutoConfig (ModelBase.load_hparams), whose to_dict() carries the class
     * default theta, and writes it; without transformers it writes no key and llama.cpp uses
     * 10000. The expected value is the one that matches the model: transformers' theta. */
    if (!num(val(rp, "rope_theta"), &d))
        d = c->rc->theta;
    g->freq_base = f32(d);
    g->has |= POSENC_GGUF_FREQ_BASE;
    if (num(val(get(c->rp, "sliding_attention"), "rope_theta"), &d)) {
        g->freq_base_swa = f32(d);
        g->has |= POSENC_GGUF_FREQ_BASE_SWA;
    }
    if (!c->ignore_head_dim && hp_int(val(c->hp, "head_dim"), &v)) {
        g->key_length = v;
        g->has |= POSENC_GGUF_KEY_LENGTH;
    }
    return POSENC_OK;
}

/* hparams.get("head_dim") or hidden_size // num_attention_heads (LlamaModel, Qwen3NextModel) */
static posenc_status rope_dim(conv *c, int64_t *out)
{
    int64_t hd, hs, nh;
    if (!c->ignore_head_dim && hp_int(val(c->hp, "head_dim"), &hd)) {
        *out = hd;
        return POSENC_OK;
    }
    if (!hp_int(get(c->hp, "hidden_size"), &hs) || !hp_int(get(c->hp, "num_attention_heads"), &nh) ||
        nh <= 0)
        return convfail(c, "no head_dim and no hidden_size / num_attention_heads");
    *out = hs / nh;
    return POSENC_OK;
}

/* hparams[key] when the config has it, else hidden_size // num_attention_heads (Jais2Model's
 * hparams.get("head_dim", ...), ChatGLMModel's "attention_dim" in hparams) */
static posenc_status dim_or_split(conv *c, const char *key, int64_t *out)
{
    int64_t hs, nh;
    if (get(c->hp, key)) {
        if (hp_int(get(c->hp, key), out))
            return POSENC_OK;
        char msg[64];
        snprintf(msg, sizeof msg, "%s is not an integer", key);
        return convfail(c, msg);
    }
    if (!hp_int(get(c->hp, "hidden_size"), &hs) || !hp_int(get(c->hp, "num_attention_heads"), &nh) ||
        nh <= 0)
        return convfail(c, "KeyError: 'hidden_size' or 'num_attention_heads'");
    *out = hs / nh;
    return POSENC_OK;
}

/* conversion/granite.py GraniteHybridModel, after GraniteMoeModel's keys: dimension_count
 * attn_rotary_emb when the config has it; the attention layers from layer_types
 * ("attention"), else attn_layer_indices, else attn_layer_period / attn_layer_offset; without
 * an SSM layer the file is architecture granitemoe (num_experts_per_tok or _per_token set)
 * or granite; rope.scaling.finetuned = BambaForCausalLM in architectures or no SSM layer,
 * and without it context_length 2**20 */
static posenc_status granite_hybrid(conv *c)
{
    static const char *const k_blocks[] = { "n_layers", "num_hidden_layers", "n_layer",
                                            "num_layers", NULL };
    static const char *const k_exp[] = { "num_experts_per_tok", "num_experts_per_token",
                                         "mamba_num_experts_per_tok",
                                         "mamba_num_experts_per_token", NULL };
    posenc_gguf_rope *g = c->g;
    const cJSON *lt = val(c->hp, "layer_types"), *ai = val(c->hp, "attn_layer_indices");
    int64_t nl, n_attn = 0, period, offset, v;
    if (hp_int(val(c->hp, "attn_rotary_emb"), &v) && v) {
        g->dimension_count = v;
        g->has |= POSENC_GGUF_DIMENSION_COUNT;
    }
    if (!hp_int(find_hparam(c->hp, k_blocks), &nl) || nl < 0)
        return convfail(c, "no num_hidden_layers");
    if (cJSON_IsArray(lt) && lt->child) {
        for (const cJSON *e = lt->child; e; e = e->next)
            n_attn += cJSON_IsString(e) && strcmp(e->valuestring, "attention") == 0;
    } else if (cJSON_IsArray(ai) && ai->child) {
        for (const cJSON *e = ai->child; e; e = e->next)
            n_attn += hp_int(e, &v) && v >= 0 && v < nl;
    } else if (hp_int(val(c->hp, "attn_layer_period"), &period) && period > 0 &&
               hp_int(get(c->hp, "attn_layer_offset"), &offset)) {
        for (int64_t i = 0; i < nl; i++)
            n_attn += i % period == offset;
    } else {
        return convfail(c, "Didn't find attn_layer_indices or attn_layer_period");
    }
    int hybrid = n_attn < nl, bamba = 0;
    const cJSON *ex = find_hparam(c->hp, k_exp), *archs = get(c->hp, "architectures");
    for (const cJSON *e = cJSON_IsArray(archs) ? archs->child : NULL; e; e = e->next)
        bamba |= cJSON_IsString(e) && strcmp(e->valuestring, "BambaForCausalLM") == 0;
    if (!hybrid)
        snprintf(g->arch, sizeof g->arch, "%s",
                 ex && !cJSON_IsFalse(ex) && !(cJSON_IsNumber(ex) && ex->valuedouble == 0)
                     ? "granitemoe"
                     : "granite");
    g->rope_finetuned = bamba || !hybrid;
    g->has |= POSENC_GGUF_ROPE_FINETUNED;
    if (!g->rope_finetuned) {
        g->context_length = 1 << 20;
        g->has |= POSENC_GGUF_CONTEXT_LENGTH;
    }
    return POSENC_OK;
}

/* LlamaModel.generate_extra_tensors: llama3's rope_freqs, in torch's float32 arithmetic:
 * freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)) is float32
 * (the Python scalar base is cast to float32 for the pow); each per-frequency expression mixes
 * a 0-dim float32 tensor with Python floats, which torch evaluates in float32 with the scalars
 * cast to float32; `scalar / tensor` is tensor.reciprocal() * scalar (torch/_tensor.py
 * __rdiv__). */
static posenc_status llama3_freqs(conv *c, int64_t dim, double factor)
{
    const cJSON *rp = c->full;
    /* rope_params.get("rope_theta", 10000.0); AutoConfig fills the class default; factor's
     * default is the class's (LlamaModel 8.0, Exaone4Model 16.0) */
    double base = c->rc->theta, lo = 1.0, hi = 4.0, old = 8192;
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
        float fr = 1.0f / powf(pe_tof(base), e);
        float wl = (1.0f / fr) * (float)(2 * M_PI);
        float r;
        if (wl < pe_tof(hi_wl))
            r = 1.0f;
        else if (wl > pe_tof(lo_wl))
            r = pe_tof(factor);
        else {
            float smooth = ((1.0f / wl) * pe_tof(old) - pe_tof(lo)) / pe_tof(hi - lo);
            r = 1.0f / ((1.0f - smooth) / pe_tof(factor) + smooth);
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
        dst[k++] = pe_tof(d);
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
        theta = c->rc->theta; /* AutoConfig's class default (see text_params) */
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

/* attention.sliding_window_pattern as a class writes it: a bool per entry of layer_types
 * (== "sliding_attention"), else, with every_full > 0, every every_full-th layer full; with
 * n_extra trailing 1s as int32 instead (conversion/mimo.py MimoV2Model: hybrid_layer_pattern
 * + [1] * _n_nextn) */
static posenc_status swa_pattern(conv *c, const char *lt_key, int every_full, int n_extra)
{
    posenc_gguf_rope *g = c->g;
    const cJSON *lt = get(c->hp, lt_key);
    int n = 0;
    if (cJSON_IsArray(lt)) {
        for (const cJSON *e = lt->child; e; e = e->next, n++) {
            if (n >= POSENC_GGUF_MAX_LAYERS - n_extra)
                return convfail(c, "too many layers");
            g->swa_layers[n] = n_extra ? (uint8_t)(cJSON_IsNumber(e) && e->valuedouble != 0)
                                       : (uint8_t)(cJSON_IsString(e) &&
                                                   strcmp(e->valuestring, "sliding_attention") == 0);
        }
    } else if (every_full > 0) {
        int64_t nl;
        if (!hp_int(get(c->hp, "num_hidden_layers"), &nl) || nl < 0 ||
            nl > POSENC_GGUF_MAX_LAYERS)
            return convfail(c, "KeyError: 'num_hidden_layers'");
        for (; n < nl; n++)
            g->swa_layers[n] = (n + 1) % every_full != 0;
    } else {
        char msg[64];
        snprintf(msg, sizeof msg, "KeyError: '%s'", lt_key);
        return convfail(c, msg);
    }
    for (int i = 0; i < n_extra; i++)
        g->swa_layers[n++] = 1;
    g->n_swa_layers = n;
    g->swa_layers_int32 = n_extra > 0;
    g->swa_period = 0;
    g->has |= POSENC_GGUF_SWA_PATTERN;
    return POSENC_OK;
}

/* The classes that write their own keys with a partial rotary dimension count and no
 * rope.freq_base (llama.cpp then uses 10000, src/llama-model.cpp load_hparams):
 *   conversion/phi.py Phi2Model: context n_positions or max_position_embeddings,
 *       dimension_count = int(partial_rotary_factor * n_embd) // n_head;
 *   conversion/gptneox.py GPTNeoXModel: context max_position_embeddings,
 *       dimension_count = int(rotary_pct * (hidden_size // num_attention_heads));
 *   conversion/stablelm.py StableLMModel: context max_position_embeddings,
 *       dimension_count = int(partial_rotary_factor * (hidden_size // num_attention_heads)).
 * partial_rotary_factor is self.rope_parameters' (mirrored from the config's key). */
static posenc_status partial_params(conv *c, int conv_rule)
{
    static const char *const k_phi2_ctx[] = { "n_positions", "max_position_embeddings", NULL };
    posenc_gguf_rope *g = c->g;
    int64_t ctx, embd, heads;
    double f;
    const cJSON *fv = conv_rule == CV_GPTNEOX ? val(c->hp, "rotary_pct")
                                              : val(c->rp, "partial_rotary_factor");
    const cJSON *cv = conv_rule == CV_PHI2 ? find_hparam(c->hp, k_phi2_ctx)
                                           : val(c->hp, "max_position_embeddings");
    if (!num(fv, &f))
        return convfail(c, conv_rule == CV_GPTNEOX ? "no rotary_pct"
                                                   : "no partial_rotary_factor");
    if (!hp_int(cv, &ctx))
        return convfail(c, "no max_position_embeddings");
    if (!hp_int(find_hparam(c->hp, k_embd), &embd) || !hp_int(find_hparam(c->hp, k_head), &heads) ||
        heads <= 0)
        return convfail(c, "no hidden_size / num_attention_heads");
    g->context_length = ctx;
    g->embedding_length = embd;
    g->head_count = heads;
    g->dimension_count = conv_rule == CV_PHI2 ? (int64_t)floor(f * (double)embd) / heads
                                              : (int64_t)floor(f * (double)(embd / heads));
    g->has |= POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_EMBEDDING_LENGTH |
              POSENC_GGUF_HEAD_COUNT | POSENC_GGUF_DIMENSION_COUNT;
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
                             "(lib/model/families.def names no gguf_arch)",
                             *mt ? mt : posenc_model_family(m));
    const pe_arch_row *row = pe_llama_arch(arch);
    if (!row || row->conv == CV_NONE)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "llama.cpp: posenc has no rules for architecture %s (model_type "
                             "'%.60s': convert_hf_to_gguf.py writes architecture '%s', whose "
                             "RoPE rules posenc has not read, lib/model/llama_arch.def)",
                             arch, mt, arch);
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
    conv c = { m, pe_model_hparams(m), NULL, NULL, NULL, &g, err, &rc, 0 };
    if (!c.hp)
        return posenc_seterr(err, POSENC_EINVAL, "the model was not read from a config.json");
    if ((st = mirror(&c)) != POSENC_OK)
        goto out;
    int64_t dim;
    switch (row->conv) {
    case CV_PHI3:
        st = phi3_params(&c);
        break;
    case CV_PHI2:
    case CV_GPTNEOX:
    case CV_STABLELM:
        st = partial_params(&c, row->conv);
        break;
    case CV_COMMANDR: {
        /* conversion/command_r.py CommandR2Model.__init__: max_position_embeddings =
         * find_hparam(["model_max_length", "max_position_embeddings"]); then TextModel's keys
         * and rope.scaling.type none */
        static const char *const k_cr_ctx[] = { "model_max_length", "max_position_embeddings",
                                                NULL };
        int64_t v;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (hp_int(find_hparam(c.hp, k_cr_ctx), &v)) {
            g.context_length = v;
            g.has |= POSENC_GGUF_CONTEXT_LENGTH;
        }
        snprintf(g.scaling_type, sizeof g.scaling_type, "none");
        g.has |= POSENC_GGUF_SCALING_TYPE;
        g.has &= ~(unsigned)POSENC_GGUF_SCALING_FACTOR;
        break;
    }
    case CV_GEMMA3:
    case CV_GEMMA3N: {
        /* conversion/gemma.py Gemma3Model.set_gguf_parameters, after TextModel's (which wrote
         * rope.freq_base_swa from the sliding rope_theta): hparams.get(k, default) */
        int64_t v;
        double d = 1000000.0;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        g.context_length = 131072;
        g.head_count = 8;
        g.key_length = 256;
        if (get(c.hp, "max_position_embeddings") &&
            !hp_int(get(c.hp, "max_position_embeddings"), &g.context_length))
            st = convfail(&c, "max_position_embeddings is not an integer");
        if (get(c.hp, "num_attention_heads") &&
            !hp_int(get(c.hp, "num_attention_heads"), &g.head_count))
            st = convfail(&c, "num_attention_heads is not an integer");
        if (get(c.hp, "head_dim") && !hp_int(get(c.hp, "head_dim"), &g.key_length))
            st = convfail(&c, "head_dim is not an integer");
        if (st != POSENC_OK)
            break;
        g.has |= POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_HEAD_COUNT | POSENC_GGUF_KEY_LENGTH;
        /* self.rope_parameters.get("full_attention", self.rope_parameters)
         *     .get("rope_theta", 1_000_000.0) */
        const cJSON *t = get(c.full, "rope_theta");
        if (t && !num(t, &d))
            d = c.rc->theta;
        g.freq_base = f32(d);
        g.has |= POSENC_GGUF_FREQ_BASE;
        /* if hparams.get("sliding_window_pattern") != 1: add_sliding_window(hparams[...]) */
        double pat;
        if (!(num(get(c.hp, "sliding_window_pattern"), &pat) && pat == 1.0)) {
            if (!hp_int(get(c.hp, "sliding_window"), &v)) {
                st = convfail(&c, "KeyError: 'sliding_window'");
                break;
            }
            g.sliding_window = v;
            g.has |= POSENC_GGUF_SLIDING_WINDOW;
        }
        /* conversion/gemma.py Gemma3NModel: [t == "sliding_attention" for t in layer_types] */
        if (row->conv == CV_GEMMA3N)
            st = swa_pattern(&c, "layer_types", 0, 0);
        break;
    }
    case CV_GEMMA:
    case CV_GEMMA2: {
        /* conversion/gemma.py Gemma2Model.set_gguf_parameters: its own keys, hparams[k]
         * (KeyError when absent), no TextModel call, so no rope.freq_base */
        static const struct { const char *k; int64_t *dst; unsigned bit; } req[] = {
            { "max_position_embeddings", NULL, POSENC_GGUF_CONTEXT_LENGTH },
            { "hidden_size", NULL, POSENC_GGUF_EMBEDDING_LENGTH },
            { "num_attention_heads", NULL, POSENC_GGUF_HEAD_COUNT },
            { "head_dim", NULL, POSENC_GGUF_KEY_LENGTH },
            { "sliding_window", NULL, POSENC_GGUF_SLIDING_WINDOW },
        };
        int64_t *dst[] = { &g.context_length, &g.embedding_length, &g.head_count, &g.key_length,
                           &g.sliding_window };
        /* GemmaModel: the same keys without sliding_window */
        size_t nreq = sizeof req / sizeof *req - (row->conv == CV_GEMMA);
        for (size_t i = 0; i < nreq && st == POSENC_OK; i++) {
            if (!hp_int(get(c.hp, req[i].k), dst[i])) {
                char msg[64];
                snprintf(msg, sizeof msg, "KeyError: '%s'", req[i].k);
                st = convfail(&c, msg);
                break;
            }
            g.has |= req[i].bit;
        }
        break;
    }
    case CV_COHERE2: {
        /* conversion/command_r.py Cohere2Model.set_gguf_parameters: TextModel's keys, then
         * sliding_window, dimension_count int(rotary_pct * (hidden_size // heads)), scaling
         * type none */
        int64_t hs, nh;
        double pct;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (!hp_int(get(c.hp, "sliding_window"), &g.sliding_window) ||
            !num(get(c.hp, "rotary_pct"), &pct) || !hp_int(get(c.hp, "hidden_size"), &hs) ||
            !hp_int(get(c.hp, "num_attention_heads"), &nh) || nh <= 0) {
            st = convfail(&c, "Cohere2Model needs sliding_window, rotary_pct, hidden_size and "
                              "num_attention_heads");
            break;
        }
        g.dimension_count = (int64_t)floor(pct * (double)(hs / nh));
        snprintf(g.scaling_type, sizeof g.scaling_type, "none");
        g.has |= POSENC_GGUF_SLIDING_WINDOW | POSENC_GGUF_DIMENSION_COUNT |
                 POSENC_GGUF_SCALING_TYPE;
        g.has &= ~(unsigned)POSENC_GGUF_SCALING_FACTOR;
        break;
    }
    case CV_OLMO2:
        /* conversion/olmo.py Olmo2Model: sliding_window when "sliding_window" in hparams */
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (get(c.hp, "sliding_window")) {
            if (!hp_int(get(c.hp, "sliding_window"), &g.sliding_window)) {
                st = convfail(&c, "sliding_window is not an integer");
                break;
            }
            g.has |= POSENC_GGUF_SLIDING_WINDOW;
            /* layer_types, else every 4th layer full ("Olmo3 defaults ...") */
            st = swa_pattern(&c, "layer_types", 4, 0);
        }
        break;
    case CV_NEMOTRON: {
        /* conversion/nemotron.py NemotronModel: dimension_count int(rope_parameters[
         * "partial_rotary_factor"] * n_embd) // n_head; scaling type linear with
         * hparams.get("factor") or rope_parameters.get("factor"), else none */
        static const char *const k_embd2[] = { "hidden_size", "n_embd", NULL };
        static const char *const k_head2[] = { "num_attention_heads", "n_head", NULL };
        int64_t embd, nh;
        double prf, fac;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (!num(get(c.rp, "partial_rotary_factor"), &prf) ||
            !hp_int(find_hparam(c.hp, k_embd2), &embd) ||
            !hp_int(find_hparam(c.hp, k_head2), &nh) || nh <= 0) {
            st = convfail(&c, "NemotronModel needs partial_rotary_factor, hidden_size and "
                              "num_attention_heads");
            break;
        }
        g.dimension_count = (int64_t)floor(prf * (double)embd) / nh;
        g.has |= POSENC_GGUF_DIMENSION_COUNT | POSENC_GGUF_SCALING_TYPE;
        if ((num(val(c.hp, "factor"), &fac) && fac != 0) || num(val(c.rp, "factor"), &fac)) {
            snprintf(g.scaling_type, sizeof g.scaling_type, "linear");
            g.scaling_factor = f32(fac);
            g.has |= POSENC_GGUF_SCALING_FACTOR;
        } else {
            snprintf(g.scaling_type, sizeof g.scaling_type, "none");
        }
        break;
    }
    case CV_BITNET:
        /* conversion/bitnet.py BitnetModel: TextModel's keys, then scaling type linear,
         * factor 1.0 */
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        snprintf(g.scaling_type, sizeof g.scaling_type, "linear");
        g.scaling_factor = 1.0;
        g.has |= POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR;
        break;
    case CV_DBRX: {
        /* conversion/dbrx.py DbrxModel.set_gguf_parameters: its own keys, hparams[k]:
         * context max_seq_len, embedding d_model, head_count n_heads, freq_base
         * attn_config["rope_theta"]; no dimension_count */
        const cJSON *ac = get(c.hp, "attn_config");
        double th;
        if (!hp_int(get(c.hp, "max_seq_len"), &g.context_length) ||
            !hp_int(get(c.hp, "d_model"), &g.embedding_length) ||
            !hp_int(get(c.hp, "n_heads"), &g.head_count) || !num(get(ac, "rope_theta"), &th)) {
            st = convfail(&c, "DbrxModel needs max_seq_len, d_model, n_heads and "
                              "attn_config.rope_theta");
            break;
        }
        g.freq_base = f32(th);
        g.has |= POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_EMBEDDING_LENGTH |
                 POSENC_GGUF_HEAD_COUNT | POSENC_GGUF_FREQ_BASE;
        break;
    }
    case CV_FALCON:
        /* conversion/falcon.py FalconModel.set_gguf_parameters: its own keys: context 2048
         * ("not in config.json"), embedding hidden_size, head_count num_attention_heads (else
         * n_head); no rope.freq_base (llama.cpp: 10000) */
        g.context_length = 2048;
        if (!hp_int(get(c.hp, "hidden_size"), &g.embedding_length) ||
            !hp_int(val(c.hp, "num_attention_heads") ? val(c.hp, "num_attention_heads")
                                                     : get(c.hp, "n_head"),
                    &g.head_count)) {
            st = convfail(&c, "FalconModel needs hidden_size and num_attention_heads");
            break;
        }
        g.has |= POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_EMBEDDING_LENGTH |
                 POSENC_GGUF_HEAD_COUNT;
        break;
    case CV_JAIS2: {
        /* conversion/jais.py Jais2Model: dimension_count hparams.get("head_dim", hidden_size
         * // num_attention_heads) */
        if ((st = text_params(&c)) != POSENC_OK ||
            (st = dim_or_split(&c, "head_dim", &g.dimension_count)) != POSENC_OK)
            break;
        g.has |= POSENC_GGUF_DIMENSION_COUNT;
        break;
    }
    case CV_HUNYUAN:
    case CV_HUNYUAN_MOE: {
        /* conversion/hunyuan.py HunYuanModel (dense: rope_type dynamic or xdrope, alpha
         * default 50, dim head_dim) and HunYuanMoEModel (dynamic only, alpha default 1000, dim
         * hidden_size // num_attention_heads): freq_base = rope_theta * alpha ** (dim / (dim -
         * 2)), scaling type none, factor 1; with dynamic, context and original context 256 *
         * 1024, after an assert on the values the rule was written for */
        int moe = row->conv == CV_HUNYUAN_MOE;
        const cJSON *rt = val(c.rp, "rope_type");
        const char *t = cJSON_IsString(rt) ? rt->valuestring : "";
        int dynamic = strcmp(t, "dynamic") == 0;
        double alpha = moe ? 1000.0 : 50.0, base = 10000.0, mp = 0;
        int64_t d, hs, nh;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (!dynamic && (moe || strcmp(t, "xdrope") != 0))
            break;
        if (get(c.rp, "alpha") && !num(get(c.rp, "alpha"), &alpha))
            st = convfail(&c, "rope alpha is not a number");
        if (get(c.rp, "rope_theta") && !num(get(c.rp, "rope_theta"), &base))
            st = convfail(&c, "rope_theta is not a number");
        if (st != POSENC_OK)
            break;
        if (moe) {
            if (!hp_int(get(c.hp, "hidden_size"), &hs) ||
                !hp_int(get(c.hp, "num_attention_heads"), &nh) || nh <= 0) {
                st = convfail(&c, "KeyError: 'hidden_size'");
                break;
            }
            d = hs / nh;
        } else if (!hp_int(get(c.hp, "head_dim"), &d)) {
            st = convfail(&c, "KeyError: 'head_dim'");
            break;
        }
        num(get(c.hp, "max_position_embeddings"), &mp);
        if (dynamic && (base != 10000.0 || (mp != 32768 && mp != 262144) ||
                        (moe && (alpha != 1000.0 || d != 128)))) {
            st = convfail(&c, "HunYuan dynamic RoPE scaling assumptions changed");
            break;
        }
        if (d == 2) {
            st = convfail(&c, "ZeroDivisionError");
            break;
        }
        g.freq_base = f32(base * pow(alpha, (double)d / (double)(d - 2)));
        snprintf(g.scaling_type, sizeof g.scaling_type, "none");
        g.scaling_factor = 1.0;
        g.has |= POSENC_GGUF_FREQ_BASE | POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_SCALING_FACTOR;
        if (dynamic) {
            g.context_length = g.original_context_length = 256 * 1024;
            g.has |= POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_ORIG_CTX;
        }
        break;
    }
    case CV_CHATGLM: {
        /* conversion/chatglm.py ChatGLMModel.set_gguf_parameters: its own keys: context
         * seq_length (else the embedding length), embedding hidden_size (else n_embed),
         * head_count n_head (else num_attention_heads), dimension_count int((attention_dim or
         * hidden_size // num_attention_heads) * rope_parameters.get("partial_rotary_factor",
         * 0.5)), freq_base 10000 * rope_ratio; no key_length */
        const cJSON *e = get(c.hp, "hidden_size") ? get(c.hp, "hidden_size") : get(c.hp, "n_embed");
        const cJSON *h = get(c.hp, "n_head") ? get(c.hp, "n_head") : get(c.hp, "num_attention_heads");
        int64_t rd;
        double prf = 0.5, ratio = 1.0;
        if (!hp_int(e, &g.embedding_length) || !hp_int(h, &g.head_count)) {
            st = convfail(&c, "ChatGLMModel needs hidden_size and num_attention_heads");
            break;
        }
        g.context_length = g.embedding_length;
        if (get(c.hp, "seq_length") && !hp_int(get(c.hp, "seq_length"), &g.context_length)) {
            st = convfail(&c, "seq_length is not an integer");
            break;
        }
        if ((st = dim_or_split(&c, "attention_dim", &rd)) != POSENC_OK)
            break;
        num(val(c.rp, "partial_rotary_factor"), &prf);
        if (get(c.hp, "rope_ratio") && !num(get(c.hp, "rope_ratio"), &ratio)) {
            st = convfail(&c, "rope_ratio is not a number");
            break;
        }
        g.dimension_count = (int64_t)floor((double)rd * prf);
        g.freq_base = f32(10000.0 * ratio);
        g.has |= POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_EMBEDDING_LENGTH |
                 POSENC_GGUF_HEAD_COUNT | POSENC_GGUF_DIMENSION_COUNT | POSENC_GGUF_FREQ_BASE;
        break;
    }
    case CV_EXAONE4:
    case CV_EXAONE_MOE: {
        /* conversion/exaone.py Exaone4Model: sliding_window when not None, with a pattern
         * from layer_types, else from sliding_window_pattern ("LLLG" or a period) when it
         * covers every layer; generate_extra_tensors: llama3's rope_freqs as LlamaModel's with
         * factor default 16.0 */
        static const char *const k_blocks[] = { "n_layers", "num_hidden_layers", "n_layer",
                                                "num_layers", NULL };
        const cJSON *sw = val(c.hp, "sliding_window"), *sp = get(c.hp, "sliding_window_pattern");
        int64_t nl;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        /* ModelBase.__init__: block_count, which exaone4.cpp's layer rule reads */
        if (hp_int(find_hparam(c.hp, k_blocks), &g.block_count))
            g.has |= POSENC_GGUF_BLOCK_COUNT;
        if (sw) {
            if (!hp_int(sw, &g.sliding_window)) {
                st = convfail(&c, "sliding_window is not an integer");
                break;
            }
            g.has |= POSENC_GGUF_SLIDING_WINDOW;
            if (get(c.hp, "layer_types")) {
                if ((st = swa_pattern(&c, "layer_types", 0, 0)) != POSENC_OK)
                    break;
            } else if ((cJSON_IsString(sp) || cJSON_IsNumber(sp)) &&
                       hp_int(get(c.hp, "num_hidden_layers"), &nl) && nl > 0 &&
                       nl <= POSENC_GGUF_MAX_LAYERS) {
                size_t len = cJSON_IsString(sp) ? strlen(sp->valuestring) : 0;
                double p = cJSON_IsNumber(sp) ? sp->valuedouble : 0;
                if (len > 0 || (p == floor(p) && p != 0)) {
                    for (int i = 0; i < nl; i++)
                        g.swa_layers[i] = len ? sp->valuestring[(size_t)i % len] == 'L'
                                              : fmod((double)(i + 1), p) != 0;
                    g.n_swa_layers = (int)nl;
                    g.swa_layers_int32 = 0;
                    g.has |= POSENC_GGUF_SWA_PATTERN;
                }
            }
        }
        const cJSON *t = val(c.full, "rope_type");
        if (cJSON_IsString(t) && strcasecmp(t->valuestring, "llama3") == 0 &&
            (st = rope_dim(&c, &dim)) == POSENC_OK)
            st = llama3_freqs(&c, dim, 16.0);
        /* ExaoneMoEModel.set_gguf_parameters, after Exaone4Model's: scaling type none */
        if (row->conv == CV_EXAONE_MOE) {
            snprintf(g.scaling_type, sizeof g.scaling_type, "none");
            g.has |= POSENC_GGUF_SCALING_TYPE;
        }
        break;
    }
    case CV_MELLUM: {
        /* conversion/mellum.py MellumModel: sliding_window when use_sliding_window is True or
         * None and sliding_window is not None, with a bool per layer_types entry */
        const cJSON *use = get(c.hp, "use_sliding_window"), *sw = val(c.hp, "sliding_window");
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if ((!use || cJSON_IsNull(use) || cJSON_IsTrue(use)) && sw) {
            if (!hp_int(sw, &g.sliding_window)) {
                st = convfail(&c, "sliding_window is not an integer");
                break;
            }
            g.has |= POSENC_GGUF_SLIDING_WINDOW;
            st = swa_pattern(&c, "layer_types", 0, 0);
        }
        break;
    }
    case CV_BAICHUAN: {
        /* conversion/baichuan.py BaichuanModel: TextModel's keys, dimension_count
         * hparams["hidden_size"] // hparams["num_attention_heads"]; block_count (ModelBase),
         * which decides whether baichuan.cpp ropes at all */
        static const char *const k_blocks[] = { "n_layers", "num_hidden_layers", "n_layer",
                                                "num_layers", NULL };
        int64_t hs, nh;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (!hp_int(get(c.hp, "hidden_size"), &hs) ||
            !hp_int(get(c.hp, "num_attention_heads"), &nh) || nh <= 0) {
            st = convfail(&c, "KeyError: 'hidden_size' or 'num_attention_heads'");
            break;
        }
        g.dimension_count = hs / nh;
        g.has |= POSENC_GGUF_DIMENSION_COUNT;
        if (hp_int(find_hparam(c.hp, k_blocks), &g.block_count))
            g.has |= POSENC_GGUF_BLOCK_COUNT;
        break;
    }
    case CV_COHERE2MOE: {
        /* conversion/command_r.py Cohere2MoeModel: TextModel's keys, sliding_window and a bool
         * per layer_types entry (hparams[k]), leading_dense_block_count from mlp_layer_types
         * (the first non-"dense" entry), else first_k_dense_replace (0), dimension_count
         * head_dim, scaling type none */
        const cJSON *mlt = get(c.hp, "mlp_layer_types");
        int64_t lead = 0;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (!hp_int(get(c.hp, "sliding_window"), &g.sliding_window) ||
            !hp_int(get(c.hp, "head_dim"), &g.dimension_count)) {
            st = convfail(&c, "Cohere2MoeModel needs sliding_window and head_dim");
            break;
        }
        if (cJSON_IsArray(mlt)) {
            for (const cJSON *e = mlt->child; e; e = e->next, lead++)
                if (!cJSON_IsString(e) || strcmp(e->valuestring, "dense") != 0)
                    break;
        } else if (get(c.hp, "first_k_dense_replace") &&
                   !hp_int(get(c.hp, "first_k_dense_replace"), &lead)) {
            st = convfail(&c, "first_k_dense_replace is not an integer");
            break;
        }
        g.dense_lead = lead;
        snprintf(g.scaling_type, sizeof g.scaling_type, "none");
        g.has |= POSENC_GGUF_SLIDING_WINDOW | POSENC_GGUF_DIMENSION_COUNT |
                 POSENC_GGUF_SCALING_TYPE | POSENC_GGUF_DENSE_LEAD;
        st = swa_pattern(&c, "layer_types", 0, 0);
        break;
    }
    case CV_EUROBERT:
    case CV_MODERNBERT:
        /* conversion/bert.py EuroBertModel: TextModel's keys, scaling type none;
         * ModernBertModel (BertModel's, TextModel's keys) adds sliding_window local_attention
         * (hparams[k]) and, when the config has it, global_attn_every_n_layers as the uint32
         * sliding_window_pattern */
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        snprintf(g.scaling_type, sizeof g.scaling_type, "none");
        g.has |= POSENC_GGUF_SCALING_TYPE;
        if (row->conv == CV_MODERNBERT) {
            const cJSON *ge = val(c.hp, "global_attn_every_n_layers");
            if (!hp_int(get(c.hp, "local_attention"), &g.sliding_window)) {
                st = convfail(&c, "KeyError: 'local_attention'");
                break;
            }
            g.has |= POSENC_GGUF_SLIDING_WINDOW;
            if (ge) {
                if (!hp_int(ge, &g.swa_period) || g.swa_period < 0) {
                    st = convfail(&c, "global_attn_every_n_layers is not a count");
                    break;
                }
                g.n_swa_layers = 0;
                g.has |= POSENC_GGUF_SWA_PATTERN;
            }
        }
        break;
    case CV_FALCONH1: {
        /* conversion/falcon_h1.py FalconH1Model, over Mamba2Model's (conversion/mamba.py): no
         * TextModel keys; context hparams.get("max_position_embeddings", 0), embedding
         * hidden_size (d_model, dim), head_count num_attention_heads, key_length head_dim,
         * freq_base rope_parameters["rope_theta"]; no dimension_count */
        static const char *const k_dm[] = { "hidden_size", "d_model", "dim", NULL };
        const cJSON *mp = get(c.hp, "max_position_embeddings");
        double th;
        g.context_length = 0;
        if ((mp && !hp_int(mp, &g.context_length)) ||
            !hp_int(find_hparam(c.hp, k_dm), &g.embedding_length) ||
            !hp_int(get(c.hp, "num_attention_heads"), &g.head_count) ||
            !hp_int(get(c.hp, "head_dim"), &g.key_length) || !num(get(c.rp, "rope_theta"), &th)) {
            st = convfail(&c, "FalconH1Model needs hidden_size, num_attention_heads, head_dim "
                              "and rope_theta");
            break;
        }
        g.freq_base = f32(th);
        g.has |= POSENC_GGUF_CONTEXT_LENGTH | POSENC_GGUF_EMBEDDING_LENGTH |
                 POSENC_GGUF_HEAD_COUNT | POSENC_GGUF_KEY_LENGTH | POSENC_GGUF_FREQ_BASE;
        break;
    }
    case CV_MINIMAXM2: {
        /* conversion/minimax.py MiniMaxM2Model: find_hparam(["rotary_dim"]) (required) */
        static const char *const k_rd[] = { "rotary_dim", NULL };
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (!hp_int(find_hparam(c.hp, k_rd), &g.dimension_count)) {
            st = convfail(&c, "could not find any of: ['rotary_dim']");
            break;
        }
        g.has |= POSENC_GGUF_DIMENSION_COUNT;
        break;
    }
    case CV_MIMO2: {
        /* conversion/mimo.py MimoV2Model: sliding_window, dimension_count
         * int(head_dim * rope_parameters["partial_rotary_factor"]) */
        int64_t hd;
        double prf;
        if ((st = text_params(&c)) != POSENC_OK)
            break;
        if (!hp_int(get(c.hp, "sliding_window"), &g.sliding_window) ||
            !hp_int(get(c.hp, "head_dim"), &hd) ||
            !num(get(c.rp, "partial_rotary_factor"), &prf)) {
            st = convfail(&c, "MimoV2Model needs sliding_window, head_dim and "
                              "partial_rotary_factor");
            break;
        }
        g.dimension_count = (int64_t)floor((double)hd * prf);
        g.has |= POSENC_GGUF_SLIDING_WINDOW | POSENC_GGUF_DIMENSION_COUNT;
        st = swa_pattern(&c, "hybrid_layer_pattern", 0, 3); /* _n_nextn = 3 */
        break;
    }
    case CV_GLM4: {
        /* conversion/glm.py Glm4Model / Glm4MoeModel: dimension_count int((head_dim or
         * hidden_size // heads) * rope_parameters.get("partial_rotary_factor", 0.5)) */
        double prf = 0.5;
        if ((st = text_params(&c)) != POSENC_OK || (st = rope_dim(&c, &dim)) != POSENC_OK)
            break;
        num(val(c.rp, "partial_rotary_factor"), &prf);
        g.dimension_count = (int64_t)floor((double)dim * prf);
        g.has |= POSENC_GGUF_DIMENSION_COUNT;
        break;
    }
    case CV_DEEPSEEK2:
    case CV_GLMDSA:
        if ((st = text_params(&c)) == POSENC_OK)
            st = deepseek2_params(&c);
        if (st == POSENC_OK && row->conv == CV_GLMDSA) {
            /* conversion/glm.py GlmMoeDsaModel.set_gguf_parameters, after DeepseekV2Model's */
            double prf = 1.0;
            num(val(c.rp, "partial_rotary_factor"), &prf);
            g.dimension_count = (int64_t)floor((double)g.dimension_count * prf);
        }
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
    case CV_GRANITE:
    case CV_GRANITEHYBRID:
    case CV_LLAMA4:
    case CV_AFMOE:
        /* conversion/granite.py GraniteModel.set_gguf_parameters pops head_dim before
         * LlamaModel's: the dimension count is hidden_size / num_attention_heads */
        if (row->conv == CV_GRANITE || row->conv == CV_GRANITEHYBRID)
            c.ignore_head_dim = 1;
        if ((st = text_params(&c)) != POSENC_OK || (st = rope_dim(&c, &dim)) != POSENC_OK)
            break;
        g.dimension_count = dim;
        g.has |= POSENC_GGUF_DIMENSION_COUNT;
        if (row->conv == CV_MINISTRAL3 && pe_model_gguf_log_mul(m)) {
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
        if (row->conv == CV_GRANITEHYBRID && (st = granite_hybrid(&c)) != POSENC_OK)
            break;
        /* conversion/afmoe.py AfmoeModel: sliding_window when not None */
        if (row->conv == CV_AFMOE && val(c.hp, "sliding_window")) {
            if (!hp_int(val(c.hp, "sliding_window"), &g.sliding_window)) {
                st = convfail(&c, "sliding_window is not an integer");
                break;
            }
            g.has |= POSENC_GGUF_SLIDING_WINDOW;
        }
        if (row->conv == CV_LLAMA4) {
            /* conversion/llama.py Llama4Model: sliding_window 0 when every layer_types entry
             * is full_attention (MobileLLM) */
            const cJSON *lt = get(c.hp, "layer_types");
            int all_full = cJSON_IsArray(lt) && lt->child;
            for (const cJSON *e = all_full ? lt->child : NULL; e; e = e->next)
                if (!cJSON_IsString(e) || strcmp(e->valuestring, "full_attention") != 0)
                    all_full = 0;
            if (all_full) {
                g.sliding_window = 0;
                g.has |= POSENC_GGUF_SLIDING_WINDOW;
            }
        }
        {
            const cJSON *t = val(c.full, "rope_type");
            if (cJSON_IsString(t) && strcasecmp(t->valuestring, "llama3") == 0) {
                int64_t d3;
                if ((st = rope_dim(&c, &d3)) == POSENC_OK)
                    st = llama3_freqs(&c, d3, 8.0);
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

