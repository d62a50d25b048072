/* rope_vllm.c: RoPE as vLLM computes it (POSENC_PREC_VLLM), and the table of definitions on which
 * transformers, vLLM and llama.cpp differ.
 *
 * Upstream: vllm-project/vllm, vllm/model_executor/layers/rotary_embedding/, read at the commit
 * each file was last changed in the index we read from (one snapshot of the package was not
 * available; the pairs below are consistent with each other):
 *   __init__.py get_rope                                         @ 0cd5784803d83f81fac0794b82cb592d4317d4bf
 *   yarn_scaling_rope.py YaRNScalingRotaryEmbedding              @ 0cd5784803d83f81fac0794b82cb592d4317d4bf
 *   base.py RotaryEmbeddingBase, RotaryEmbedding.forward_static  @ 072d10a084c2b89e63323c781eacd7d7e218ba2b
 *   common.py yarn_find_correction_range, yarn_get_mscale        @ 002d181a55a03803d7d69547846630069d2378b8
 *   deepseek_scaling_rope.py DeepseekScalingRotaryEmbedding      @ 7bc8d408139110c389bea6028e9fdfadb1eb7641
 *   llama3_rope.py Llama3RotaryEmbedding                         @ 045d7575500e01e0f4a7ff84e039a9f7f7dc3bd0
 *   dynamic_ntk_scaling_rope.py DynamicNTKScalingRotaryEmbedding @ 50feac95f9e53a97d6ed27fee6bfe3b163d18594
 *   phi3_long_rope_scaled_rope.py Phi3LongRoPEScaledRotaryEmbedding @ 63c2b7abcd705edb754604f83ac72a4269c05a52
 *   mrope.py MRotaryEmbedding                                    @ dba39a557eabb84d809fc4ac86d5afd0b6bc5b84
 *     with yarn: YaRNScalingRotaryEmbedding's methods as that mrope.py calls them, read in
 *     yarn_scaling_rope.py                                       @ ffdc985737c94233f2c88629c4450022e5bf4925
 *     (the version whose attributes that MRotaryEmbedding sets: extrapolation_factor, attn_factor)
 *   gemma4_rope.py Gemma4RotaryEmbedding                         @ 41c5903d049b80b83a6e570f52f0f55e31316e49
 *     (get_rope's "proportional" branch: __init__.py @ 0cd5784; the model passes global_head_dim
 *     and the full_attention rope_parameters: vllm/model_executor/models/gemma4.py
 *     Gemma4DecoderLayer, Gemma4Attention @ 001cabc1be16a59a70d720ed61a13b678c060a18)
 *   linear_scaling_rope.py LinearScalingRotaryEmbedding          @ 0f17ee061e413bf8ab7927f926f69cdff24dc63e
 *   vllm/config/model_arch.py MaxModelLenInfo (default max_model_len) @ 77ff9878a7334ea15578f0fd01aa858b52acebc4
 * tests/golden/make_vllm_golden.py ports the same classes to torch.
 *
 * One step is inferred, not read: common.py @ 002d181 floors/ceils the yarn correction range
 * unconditionally, while yarn_scaling_rope.py @ 0cd5784 passes self.truncate to it as a sixth
 * argument, so the common.py it calls takes truncate; posenc floors/ceils iff truncate, as
 * transformers' find_correction_range does. Every config without "truncate": false is unaffected.
 *
 * Float32 steps. vLLM's inv_freq expressions are transformers' for default, llama3, yarn and
 * longrope, operation for operation (1.0 / (base ** (arange(0, d, 2).float() / d)); yarn's
 * 1 / (factor * pos_freqs) blend with the clamped linear ramp; llama3's 2 pi / inv_freq as
 * reciprocal times scalar and its nested torch.where; longrope's 1 / (ext * pow)), so those come
 * from posenc_rope_params_compute; what differs is the base (dynamic NTK), the factor selection
 * (LongRoPE by max_model_len), the mscale and the cache length, computed here. The cache row of
 * position t is f32(f32(t) * inv_freq) (torch.einsum("i,j -> ij", t, inv_freq): one product per
 * element), cos and sin of it, each times f32(mscale) when the class multiplies
 * (`freqs.cos() * self.mscale`: a python float against a float32 tensor computes in float32). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/core/mathx.h"
#include "lib/model/model_json.h"
#include "posenc/vllm.h"

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

#define VDIR "vllm/model_executor/layers/rotary_embedding/"

/* How a class sizes its cache, scales it and picks inv_freq. */
enum vllm_len {
    LEN_MAX_POS,        /* torch.arange(max_position_embeddings) */
    LEN_MAX_POS_X4,     /* MRotaryEmbedding: cache_max_position_num = max_position_embeddings * 4 */
    LEN_M_X_FACTOR,     /* DynamicNTK: arange(max_position_embeddings * scaling_factor) */
    LEN_M0_X_FACTOR_OR_M, /* YaRN: max(ceil(M0 * factor), max_position) */
    LEN_M0_X_FACTOR,    /* Deepseek: arange(M0 * scaling_factor) */
    LEN_LONGROPE,       /* Phi3LongRoPE: short cache M0 rows, then long cache M rows */
    LEN_M0_X4_X_FACTOR  /* MRotaryEmbedding with yarn: arange(4 * M0 * scaling_factor) */
};
enum vllm_mscale { MS_NONE, MS_YARN, MS_DEEPSEEK, MS_LONGROPE, MS_MROPE_YARN };
enum vllm_inv { INV_HF, INV_DYNAMIC_FIXED, INV_LONGROPE, INV_LINEAR_T, INV_MROPE_YARN,
                INV_PROPORTIONAL };

/* get_rope's choice (__init__.py @ 0cd5784): one row per (rope_type, mrope, deepseek model).
 * supported = 0: posenc does not port that class; cmd shows the reason. */
static const struct vllm_class {
    posenc_rope_type type;
    int mrope;      /* 1: "mrope_section" in rope_parameters */
    int deepseek;   /* 1: the model code renames yarn to deepseek_yarn */
    const char *cls;
    const char *source;
    enum vllm_len len;
    enum vllm_mscale ms;
    enum vllm_inv inv;
    int supported;
} CLASSES[] = {
    { POSENC_ROPE_DEFAULT, 0, 0, "RotaryEmbedding", VDIR "base.py @ 072d10a0", LEN_MAX_POS,
      MS_NONE, INV_HF, 1 },
    { POSENC_ROPE_DEFAULT, 1, 0, "MRotaryEmbedding", VDIR "mrope.py @ dba39a55", LEN_MAX_POS_X4,
      MS_NONE, INV_HF, 1 },
    { POSENC_ROPE_LLAMA3, 0, 0, "Llama3RotaryEmbedding", VDIR "llama3_rope.py @ 045d7575",
      LEN_MAX_POS, MS_NONE, INV_HF, 1 },
    { POSENC_ROPE_DYNAMIC, 0, 0, "DynamicNTKScalingRotaryEmbedding",
      VDIR "dynamic_ntk_scaling_rope.py @ 50feac95", LEN_M_X_FACTOR, MS_NONE, INV_DYNAMIC_FIXED, 1 },
    { POSENC_ROPE_YARN, 0, 0, "YaRNScalingRotaryEmbedding", VDIR "yarn_scaling_rope.py @ 0cd57848",
      LEN_M0_X_FACTOR_OR_M, MS_YARN, INV_HF, 1 },
    { POSENC_ROPE_YARN, 0, 1, "DeepseekScalingRotaryEmbedding",
      VDIR "deepseek_scaling_rope.py @ 7bc8d408", LEN_M0_X_FACTOR, MS_DEEPSEEK, INV_HF, 1 },
    { POSENC_ROPE_LONGROPE, 0, 0, "Phi3LongRoPEScaledRotaryEmbedding",
      VDIR "phi3_long_rope_scaled_rope.py @ 63c2b7ab", LEN_LONGROPE, MS_LONGROPE, INV_LONGROPE, 1 },
    { POSENC_ROPE_LINEAR, 0, 0, "LinearScalingRotaryEmbedding",
      VDIR "linear_scaling_rope.py @ 0f17ee06", LEN_M_X_FACTOR, MS_NONE, INV_LINEAR_T, 1 },
    { POSENC_ROPE_YARN, 1, 0, "MRotaryEmbedding",
      VDIR "mrope.py @ dba39a55 + yarn_scaling_rope.py @ ffdc9857", LEN_M0_X4_X_FACTOR,
      MS_MROPE_YARN, INV_MROPE_YARN, 1 },
    { POSENC_ROPE_PROPORTIONAL, 0, 0, "Gemma4RotaryEmbedding", VDIR "gemma4_rope.py @ 41c5903d",
      LEN_MAX_POS, MS_NONE, INV_PROPORTIONAL, 1 },
};

/* Model families whose vLLM model code sends yarn to DeepseekScalingRotaryEmbedding: the
 * registry's F_VLLM_DEEPSEEK column (lib/model/families.def). */
static int is_deepseek(const char *family)
{
    return pe_family_vllm_deepseek(family);
}

/* yarn_get_mscale(scale, mscale) of common.py / deepseek_scaling_rope.py (python float64). */
static double get_mscale(double scale, double mscale)
{
    if (scale <= 1.0)
        return 1.0;
    return 0.1 * mscale * log(scale) + 1.0;
}

/* torch.arange(x) for a python float x: ceil(x) elements. */
static int64_t arange_len(double x) { return x <= 0.0 ? 0 : (int64_t)ceil(x); }

posenc_status posenc_vllm_rope(const posenc_rope_config *cfg, const char *family,
                               int64_t max_model_len, posenc_rope_params *out,
                               posenc_vllm_info *info, posenc_error *err)
{
    if (!cfg || !out || !info)
        return posenc_seterr(err, POSENC_EINVAL, "no RoPE configuration given");
    posenc_vllm_info v;
    memset(&v, 0, sizeof v);
    int mrope = cfg->n_mrope_section > 0, ds = cfg->type == POSENC_ROPE_YARN && is_deepseek(family);
    const struct vllm_class *k = NULL;
    for (size_t i = 0; i < sizeof CLASSES / sizeof *CLASSES && !k; i++)
        if (CLASSES[i].type == cfg->type && CLASSES[i].mrope == mrope && CLASSES[i].deepseek == ds)
            k = &CLASSES[i];
    const char *tn = posenc_rope_type_name(cfg->type);
    if (!k)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "vllm: no vLLM class for rope_type %s%s",
                             tn, mrope ? " with mrope_section" : "");
    if (!k->supported)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "vllm: rope_type %s%s uses vLLM's %s, which posenc does not "
                             "reproduce", tn, mrope ? " with mrope_section" : "", k->cls);
    /* MRotaryEmbedding @ dba39a55 takes scaling_factor, extrapolation_factor, attn_factor,
     * beta_fast and beta_slow only, and YaRN's methods @ ffdc9857 always floor/ceil; a newer
     * get_rope (@ 0cd5784) passes attention_factor, mscale, mscale_all_dim and truncate to a
     * newer MRotaryEmbedding posenc could not read, so a config that sets them is refused */
    if (k->inv == INV_MROPE_YARN &&
        (cfg->has_attention_factor || cfg->mscale != 0.0 || cfg->mscale_all_dim != 0.0 ||
         !cfg->truncate))
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "vllm: rope_type yarn with mrope_section and %s uses a vLLM "
                             "MRotaryEmbedding posenc does not reproduce (posenc follows mrope.py "
                             "@ dba39a55, which takes none of attention_factor, mscale, "
                             "mscale_all_dim, truncate)",
                             cfg->has_attention_factor ? "attention_factor"
                             : !cfg->truncate          ? "truncate false"
                                                       : "mscale");
    if (cfg->type == POSENC_ROPE_YARN && cfg->softmax_mscale && !ds)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "vllm: family '%s' scales the softmax like DeepSeek, but posenc does "
                             "not know whether vLLM gives it YaRNScalingRotaryEmbedding or "
                             "DeepseekScalingRotaryEmbedding", family ? family : "");
    /* RotaryEmbeddingBase._compute_inv_freq divides the exponent by rotary_dim */
    if (cfg->exponent_dim > 0 && cfg->exponent_dim != cfg->rotary_dim)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "vllm: the model's exponent uses dimension %d, vLLM's "
                             "_compute_inv_freq rotary_dim %d", cfg->exponent_dim, cfg->rotary_dim);
    int64_t M = cfg->max_position_embeddings, M0 = cfg->original_max_position_embeddings;
    if (M <= 0)
        return posenc_seterr(err, POSENC_ECONFIG,
                             "vllm: get_rope needs max_position_embeddings (max_position)");
    /* vLLM's default max_model_len: max_position_embeddings, but for LongRoPE models
     * original_max_position_embeddings "to avoid performance degradation" (vllm/config/
     * model_arch.py @ 77ff9878 MaxModelLenInfo.default), so Phi-3 starts on its short factors */
    v.max_model_len = max_model_len > 0 ? max_model_len : k->inv == INV_LONGROPE && M0 > 0 ? M0 : M;
    v.cls = k->cls;
    v.source = k->source;
    v.base = cfg->theta;
    v.mscale = 1.0;
    v.truncate = cfg->truncate;

    /* inv_freq: transformers' float32 expressions where vLLM's are the same */
    posenc_rope_config c = *cfg;
    int64_t seq_len = 0;
    if (k->inv == INV_LONGROPE) {
        /* Phi3LongRoPE.__init__: use_long_rope = max_model_len > original_max_position_embeddings;
         * transformers' longrope picks long when seq_len > M0: the same strict test */
        v.long_factors = v.max_model_len > M0;
        seq_len = v.long_factors ? M0 + 1 : 1;
    }
    if (ds) /* get_rope passes deepseek_yarn no "truncate": yarn_find_correction_range floors */
        c.truncate = 1, v.truncate = 1;
    if (k->inv == INV_LINEAR_T) /* the base's inv_freq; the factor divides the positions */
        c.type = POSENC_ROPE_DEFAULT;
    if (k->inv == INV_MROPE_YARN) {
        /* MRotaryEmbedding.__init__ passes max_position_embeddings * 4 to the base class, so
         * YaRN's _compute_inv_freq finds the correction range over self.max_position_embeddings
         * = 4 * original_max_position_embeddings (get_rope passes the original as max_position) */
        if (M0 <= 0 || M0 > INT64_MAX / 4)
            return posenc_seterr(err, POSENC_ECONFIG, "vllm: %s needs "
                                 "original_max_position_embeddings", k->cls);
        c.original_max_position_embeddings = 4 * M0;
        c.truncate = 1, v.truncate = 1;
    }
    if (k->inv == INV_PROPORTIONAL && cfg->factor != 1.0) {
        /* Gemma4RotaryEmbedding takes no factor: 1 / base ** (arange(0, 2 * rope_angles, 2) /
         * head_size), zeros after */
        c.factor = 1.0;
        snprintf(v.note, sizeof v.note, "vllm: Gemma4RotaryEmbedding ignores the config's factor "
                 "%g", cfg->factor);
    }
    posenc_status st = posenc_rope_params_compute(&c, seq_len, out, err);
    if (st != POSENC_OK)
        return st;

    switch (k->inv) {
    case INV_DYNAMIC_FIXED: {
        /* DynamicNTKScalingRotaryEmbedding._compute_cos_sin_cache, python float64:
         *   max_len = M * factor
         *   base = theta * ((factor * max_len / M) - (factor - 1)) ** (d / (d - 2))
         * then _compute_inv_freq(base): 1.0 / (f32(base) ** (arange(0, d, 2).float() / d)) */
        double f = cfg->factor, max_len = (double)M * f;
        int d = cfg->rotary_dim;
        v.base = cfg->theta * pow((f * max_len / (double)M) - (f - 1.0), (double)d / (double)(d - 2));
        float base_f = (float)v.base;
        if (!isfinite(base_f) || !(base_f > 0.0f))
            return posenc_seterr(err, POSENC_ECONFIG, "vllm: dynamic base %g is not a float32",
                                 v.base);
        out->theta_used = v.base;
        for (int i = 0; i < out->n_freq; i++) {
            float e = (float)(2 * i) / (float)d;
            out->inv_freq_f32[i] = 1.0f / pe_mathx_powf_cr(base_f, e);
        }
        break;
    }
    case INV_LINEAR_T:
        /* LinearScalingRotaryEmbedding._compute_cos_sin_cache: t = arange(max_len, float) /
         * scaling_factor (float32 / python float: a float32 division), freqs = einsum(t,
         * inv_freq) with the base's _compute_inv_freq */
        out->pos_div_f32 = (float)cfg->factor;
        out->type = POSENC_ROPE_LINEAR;
        if (!(out->pos_div_f32 > 0.0f) || !isfinite(out->pos_div_f32))
            return posenc_seterr(err, POSENC_ECONFIG, "vllm: linear factor %g is not a positive "
                                 "float32", cfg->factor);
        break;
    case INV_HF:
    case INV_LONGROPE:
    case INV_MROPE_YARN:
    case INV_PROPORTIONAL:
        break;
    }

    switch (k->ms) {
    case MS_NONE:
        break;
    case MS_YARN: /* YaRNScalingRotaryEmbedding.__init__ @ 0cd5784 */
        if (cfg->has_attention_factor)
            v.mscale = cfg->attention_factor;
        else if (cfg->mscale != 0.0 && cfg->mscale_all_dim != 0.0)
            v.mscale = get_mscale(cfg->factor, cfg->mscale) /
                       get_mscale(cfg->factor, cfg->mscale_all_dim);
        else
            v.mscale = get_mscale(cfg->factor, 1.0);
        break;
    case MS_DEEPSEEK: {
        /* DeepseekScalingRotaryEmbedding.__init__: yarn_get_mscale(f, mscale) /
         * yarn_get_mscale(f, mscale_all_dim) * attn_factor; mscale defaults to 1, mscale_all_dim
         * to 0, attn_factor to 1 (get_rope does not pass it) */
        double ms = cfg->mscale;
        if (ms == 0.0) {
            ms = 1.0;
            snprintf(v.note, sizeof v.note,
                     "vllm: mscale absent (or 0) in the config: taken as vLLM's default 1");
        }
        v.mscale = get_mscale(cfg->factor, ms) / get_mscale(cfg->factor, cfg->mscale_all_dim) * 1.0;
        break;
    }
    case MS_MROPE_YARN: /* MRotaryEmbedding.__init__: yarn_get_mscale(scaling_factor) * attn_factor
                         * (attn_factor 1: posenc reads no attn_factor key) */
        v.mscale = get_mscale(cfg->factor, 1.0) * 1.0;
        break;
    case MS_LONGROPE: {
        /* Phi3LongRoPE.__init__: scale = M / M0; 1 when <= 1, else sqrt(1 + ln scale / ln M0);
         * config keys short_mscale / long_mscale would override (posenc does not read them) */
        double scale = (double)M / (double)M0;
        v.mscale = scale <= 1.0 ? 1.0 : sqrt(1.0 + log(scale) / log((double)M0));
        if (cfg->has_attention_factor || cfg->factor > 0.0)
            snprintf(v.note, sizeof v.note,
                     "vllm: Phi3LongRoPEScaledRotaryEmbedding ignores the config's %s; mscale from "
                     "max_position_embeddings / original_max_position_embeddings",
                     cfg->has_attention_factor ? "attention_factor" : "factor");
        break;
    }
    }
    out->attention_scaling = v.mscale;
    out->attention_scaling_f32 = (float)v.mscale;
    out->softmax_scale = 1.0;
    if (ds) /* deepseek_v2.py: self.scaling *= yarn_get_mscale(factor, mscale_all_dim) ** 2 */
        out->softmax_scale = get_mscale(cfg->factor, cfg->mscale_all_dim) *
                             get_mscale(cfg->factor, cfg->mscale_all_dim);
    if (!isfinite(out->attention_scaling_f32) || !(out->attention_scaling > 0.0) ||
        out->attention_scaling > 65504.0)
        return posenc_seterr(err, POSENC_ECONFIG, "vllm: mscale %g is not in (0, 65504]",
                             v.mscale);

    switch (k->len) {
    case LEN_MAX_POS:
        v.cache_len = M;
        break;
    case LEN_MAX_POS_X4:
        v.cache_len = M > INT64_MAX / 4 ? INT64_MAX : 4 * M;
        break;
    case LEN_M_X_FACTOR:
        v.cache_len = arange_len((double)M * cfg->factor);
        break;
    case LEN_M0_X_FACTOR_OR_M: {
        int64_t n = arange_len((double)M0 * cfg->factor);
        v.cache_len = n > M ? n : M;
        break;
    }
    case LEN_M0_X_FACTOR:
        v.cache_len = arange_len((double)M0 * cfg->factor);
        break;
    case LEN_LONGROPE:
        v.cache_len = v.long_factors ? M : M0;
        v.cache_offset = v.long_factors ? M0 : 0;
        break;
    case LEN_M0_X4_X_FACTOR: /* YaRN's _compute_cos_sin_cache @ ffdc9857 on 4 * M0 */
        v.cache_len = arange_len((double)(4 * M0) * cfg->factor);
        break;
    }
    v.cache_rows = k->len == LEN_LONGROPE ? M0 + M : v.cache_len;
    if (v.cache_len <= 0)
        return posenc_seterr(err, POSENC_ECONFIG, "vllm: %s would build an empty cache", k->cls);

    /* vLLM has no exact pipeline: the exact fields carry the float32 values */
    for (int i = 0; i < out->n_freq; i++) {
        if (!isfinite(out->inv_freq_f32[i]))
            return posenc_seterr(err, POSENC_ECONFIG, "vllm: inverse frequency %d is not finite",
                                 i);
        /* the effective inverse frequency: the linear class's positions are divided */
        out->inv_hi[i] = (double)out->inv_freq_f32[i] /
                         (out->pos_div_f32 > 0.0f ? (double)out->pos_div_f32 : 1.0);
        out->inv_lo[i] = 0.0;
    }
    out->seq_len = v.max_model_len;
    *info = v;
    return POSENC_OK;
}

posenc_status posenc_rope_params_for(const posenc_rope_config *cfg, posenc_precision prec,
                                     const char *family, int64_t seq_len, int64_t max_model_len,
                                     posenc_rope_params *out, posenc_vllm_info *info,
                                     posenc_error *err)
{
    if (prec == POSENC_PREC_VLLM) {
        posenc_vllm_info tmp;
        return posenc_vllm_rope(cfg, family, max_model_len, out, info ? info : &tmp, err);
    }
    if (info)
        memset(info, 0, sizeof *info);
    return posenc_rope_params_compute(cfg, seq_len, out, err);
}

static double max_diff(const double *a, const double *b, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (d > m || isnan(d))
            m = d;
    }
    return m;
}

static posenc_status drift_impl(const posenc_rope_config *cfg, const char *family,
                                posenc_precision prec, int64_t max_model_len, int64_t pos,
                                int vs_hf, double *drift, posenc_error *err)
{
    if (!cfg || !drift || pos < 0)
        return posenc_seterr(err, POSENC_EINVAL, "no configuration or a negative position");
    /* about 40 KB: off small thread stacks */
    struct work {
        posenc_rope_params p, x;
        double c[POSENC_MAX_FREQ], s[POSENC_MAX_FREQ], cx[POSENC_MAX_FREQ], sx[POSENC_MAX_FREQ];
    } *w = malloc(sizeof *w);
    if (!w)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st;
    if (prec == POSENC_PREC_VLLM) {
        posenc_vllm_info v;
        st = posenc_vllm_rope(cfg, family, max_model_len, &w->p, &v, err);
        if (st == POSENC_OK && pos >= v.cache_len)
            st = posenc_seterr(err, POSENC_ERANGE, "position %lld is past vLLM's cos_sin_cache "
                               "(%s: %lld rows)", (long long)pos, v.cls, (long long)v.cache_len);
        if (st == POSENC_OK && vs_hf) {
            /* transformers' definition at sequence length pos + 1, in exact math */
            st = posenc_rope_params_compute(cfg, pos + 1, &w->x, err);
        } else if (st == POSENC_OK) {
            /* the exact math of vLLM's definition: dynamic's base is transformers' at sequence
             * length max_position * factor; LongRoPE's factors as max_model_len chose them */
            int64_t L = 0;
            if (cfg->type == POSENC_ROPE_DYNAMIC)
                L = arange_len((double)cfg->max_position_embeddings * cfg->factor);
            else if (cfg->type == POSENC_ROPE_LONGROPE)
                L = v.long_factors ? cfg->original_max_position_embeddings + 1 : 1;
            posenc_rope_config c = *cfg;
            if (cfg->type == POSENC_ROPE_YARN)
                c.truncate = v.truncate;
            if (cfg->type == POSENC_ROPE_YARN && cfg->n_mrope_section > 0) /* over 4 * M0 */
                c.original_max_position_embeddings = 4 * cfg->original_max_position_embeddings;
            if (cfg->type == POSENC_ROPE_PROPORTIONAL) /* Gemma4RotaryEmbedding: no factor */
                c.factor = 1.0;
            st = posenc_rope_params_compute(&c, L, &w->x, err);
            w->x.attention_scaling = v.mscale;
        }
    } else {
        st = posenc_rope_params_compute(cfg, pos + 1, &w->p, err);
        if (st == POSENC_OK)
            w->x = w->p;
    }
    if (st == POSENC_OK) {
        posenc_rope_cossin(&w->p, prec, pos, w->c, w->s);
        posenc_rope_cossin(&w->x, POSENC_PREC_EXACT, pos, w->cx, w->sx);
        double a = max_diff(w->c, w->cx, w->p.n_freq), b = max_diff(w->s, w->sx, w->p.n_freq);
        *drift = a > b ? a : b;
    }
    free(w);
    return st;
}

posenc_status posenc_rope_drift(const posenc_rope_config *cfg, const char *family,
                                posenc_precision prec, int64_t max_model_len, int64_t pos,
                                double *drift, posenc_error *err)
{
    return drift_impl(cfg, family, prec, max_model_len, pos, 0, drift, err);
}

posenc_status posenc_rope_gap(const posenc_rope_config *cfg, const char *family,
                              posenc_precision prec, int64_t max_model_len, int64_t pos,
                              double *gap, posenc_error *err)
{
    return drift_impl(cfg, family, prec, max_model_len, pos, 1, gap, err);
}

/* ---------------------------------------------------------------------------------------------
 * Where the runtimes differ in definition (posenc info --runtimes). transformers: huggingface/
 * transformers src/transformers/modeling_rope_utils.py unless named; vLLM: the files above;
 * llama.cpp: ggml-org/llama.cpp at the commit node-llama-cpp 3.21.1 bundles (80fb11ac). */
#define T_(t) (1u << (t))
#define T_ANY 0xffffu
enum { F_NONE = 0, F_MROPE = 1, F_PARTIAL = 2, F_DEEPSEEK = 4, F_SOFTMAX = 8, F_TRUNC_FALSE = 16 };
/* applies: the rope types a row concerns (T_ANY: all) and flags the config must have (any one of
 * them when several); a row with neither applies to every config */
static const struct diff_row {
    posenc_runtime_diff d;
    unsigned types, flags;
} DIFFS[] = {
    { { "yarn_truncate",
      "floor/ceil of the correction range only when truncate (default true) "
      "(_compute_yarn_parameters, find_correction_range)",
      "YaRNScalingRotaryEmbedding passes truncate to yarn_find_correction_range; deepseek_yarn gets "
      "no truncate and always floors/ceils (__init__.py get_rope)",
      "always floorf/ceilf (ggml/src/ggml.c ggml_rope_yarn_corr_dims)" },
      T_(POSENC_ROPE_YARN), F_NONE },
    { { "attention_factor",
      "attention_factor, else get_mscale(f, mscale)/get_mscale(f, mscale_all_dim) when both set, "
      "else 0.1 ln f + 1; multiplies cos and sin (_compute_yarn_parameters)",
      "same rule, multiplied into the cache (yarn_scaling_rope.py __init__); deepseek_yarn: "
      "get_mscale(f, mscale)/get_mscale(f, mscale_all_dim) with mscale default 1 "
      "(deepseek_scaling_rope.py)",
      "yarn_attn_factor = get_mscale(f, 1), or the mscale ratio when rope_yarn_log_mul is set, "
      "divided by 1 + 0.1 ln f which ggml multiplies back (src/llama-context.cpp "
      "llama_context::llama_context)" },
      T_(POSENC_ROPE_YARN), F_NONE },
    { { "softmax_scale",
      "DeepSeek-V3: scaling *= get_mscale(f, mscale_all_dim)^2 (models/deepseek_v3/"
      "modeling_deepseek_v3.py DeepseekV3Attention.__init__)",
      "deepseek_v2.py attention: scaling *= yarn_get_mscale(f, mscale_all_dim)^2",
      "kq_scale = mscale^2 / sqrt(head_dim), mscale = 1 + 0.1 rope_yarn_log_mul ln(1 / freq_scale) "
      "(src/models/deepseek2.cpp)" },
      T_(POSENC_ROPE_YARN), F_DEEPSEEK | F_SOFTMAX },
    { { "dynamic_ntk",
      "base recomputed per forward when seq_len > max_position_embeddings (dynamic_rope_update)",
      "base fixed at load for max_len = max_position * factor: theta * (factor^2 - factor + 1)^"
      "(d/(d-2)); cache max_position * factor rows (dynamic_ntk_scaling_rope.py "
      "_compute_cos_sin_cache)",
      "no dynamic NTK scaling type (include/llama.h llama_rope_scaling_type: none, linear, yarn, "
      "longrope)" },
      T_(POSENC_ROPE_DYNAMIC), F_NONE },
    { { "longrope_selection",
      "long_factor when the forward's seq_len > original_max_position_embeddings "
      "(_compute_longrope_parameters, dynamic_rope_update)",
      "long_factor for every position when max_model_len > original_max_position_embeddings "
      "(phi3_long_rope_scaled_rope.py __init__); mscale from max_position / M0 only",
      "rope_long when n_ctx_seq > n_ctx_orig_yarn, for every position (src/llama-model.cpp "
      "llama_model::get_rope_factors)" },
      T_(POSENC_ROPE_LONGROPE), F_NONE },
    { { "llama3",
      "inv_freq smoothed in float32 (_compute_llama3_parameters)",
      "the same float32 expressions (llama3_rope.py _compute_inv_freq)",
      "a rope_freqs tensor of per-frequency divisors written by the converter "
      "(conversion/llama.py LlamaModel.generate_extra_tensors), applied by ggml_rope_ext" },
      T_(POSENC_ROPE_LLAMA3), F_NONE },
    { { "mrope",
      "sections from mrope_section; interleaved for Qwen3-VL/Qwen3.5 (models/qwen3_vl/"
      "modeling_qwen3_vl.py apply_interleaved_mrope)",
      "MRotaryEmbedding: cache 4 * max_position rows, same section selection (mrope.py "
      "apply_interleaved_rope, forward_native)",
      "hparams.rope_sections passed to ggml_rope_multi (src/llama-hparams.h, e.g. "
      "src/models/glm4-moe.cpp)" },
      T_ANY, F_MROPE },
    { { "partial_rotary",
      "rotary_dim = int(head_dim * partial_rotary_factor) (_compute_default_rope_parameters)",
      "rotary_dim = int(head_size * partial_rotary_factor), or rope_dim (__init__.py get_rope)",
      "n_rot from the GGUF rope.dimension_count key, default the head size (src/llama-model.cpp "
      "llama_model::load_hparams)" },
      T_ANY, F_PARTIAL },
    { { "cache_dtype",
      "float32 cos/sin every forward, cast to the activations' dtype after attention_scaling "
      "(models/llama/modeling_llama.py LlamaRotaryEmbedding.forward)",
      "float32 cache cast once to the model dtype at load (base.py RotaryEmbeddingBase.__init__ "
      "cache.to(dtype)); the rotation in the query dtype (common.py apply_rotary_emb_torch)",
      "no table: ggml computes cos/sin per row in float (ggml/src/ggml-cpu/ops.cpp rope_yarn)" },
      T_ANY, F_NONE },
    { { "cache_length",
      "no cache: any position",
      "positions must be below the cache length: max_position (default, llama3), 4 * max_position "
      "(mrope), max(ceil(M0 * factor), max_position) (yarn), M0 * factor (deepseek_yarn)",
      "no cache: any position" },
      T_ANY, F_NONE },
    { { "linear",
        "inv_freq divided by the factor in float32 (_compute_linear_scaling_rope_parameters)",
        "the float32 positions divided by the factor, the base's inv_freq; cache max_position * "
        "factor rows (linear_scaling_rope.py LinearScalingRotaryEmbedding._compute_cos_sin_cache)",
        "freq_scale = 1 / factor multiplies the position in ggml_rope_ext (src/llama-model.cpp "
        "llama_model::load_hparams rope_freq_scale_train)" },
      T_(POSENC_ROPE_LINEAR), F_NONE },
};

const char *posenc_vllm_commits(void)
{
    return "vllm-project/vllm, vllm/model_executor/layers/rotary_embedding/: __init__.py get_rope "
           "@ 0cd57848, each class file at the commit vllm_class names";
}

size_t posenc_runtime_diff_count(void) { return sizeof DIFFS / sizeof *DIFFS; }

posenc_status posenc_runtime_diff_get(size_t i, posenc_runtime_diff *out, posenc_error *err)
{
    if (i >= posenc_runtime_diff_count() || !out)
        return posenc_seterr(err, POSENC_EINVAL, "runtime difference %zu out of range", i);
    *out = DIFFS[i].d;
    return POSENC_OK;
}

int posenc_runtime_diff_applies(size_t i, const posenc_rope_config *cfg, const char *family)
{
    if (i >= posenc_runtime_diff_count())
        return 0;
    if (!cfg)
        return 1;
    const struct diff_row *r = &DIFFS[i];
    if (!(r->types & T_((unsigned)cfg->type)))
        return 0;
    if (r->flags == F_NONE)
        return 1;
    unsigned f = (cfg->n_mrope_section > 0 ? F_MROPE : 0) |
                 (cfg->rotary_dim < cfg->head_dim ? F_PARTIAL : 0) |
                 (is_deepseek(family) ? F_DEEPSEEK : 0) | (cfg->softmax_mscale ? F_SOFTMAX : 0) |
                 (!cfg->truncate ? F_TRUNC_FALSE : 0);
    return (r->flags & f) != 0;
}
