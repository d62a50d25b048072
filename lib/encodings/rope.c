/* rope.c: RoPE parameters for every rope_type, in two precisions, and cos/sin tables (the
 * third precision, llama.cpp's ggml, is computed by lib/encodings/rope_ggml.c).
 *
 * Upstream: huggingface/transformers src/transformers/modeling_rope_utils.py (the init functions
 * _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters,
 * _compute_yarn_parameters, _compute_longrope_parameters, _compute_llama3_parameters,
 * _compute_proportional_rope_parameters, and dynamic_rope_update), each model's
 * compute_default_rope_parameters, and LlamaRotaryEmbedding.forward in
 * models/llama/modeling_llama.py for the tables; mrope from models/qwen2_vl/modeling_qwen2_vl.py
 * apply_multimodal_rotary_pos_emb and models/qwen3_vl/modeling_qwen3_vl.py
 * Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope.
 *
 * POSENC_PREC_HF reproduces transformers' float32 pipeline operation by operation. In the
 * comments, f32(x) is rounding to binary32; every float expression below is evaluated in float
 * (C11 on SSE: FLT_EVAL_METHOD 0), so `a * b` of two floats is f32(a*b). Where torch's kernels are
 * only faithful (Sleef powf, cos, sin) we return the correctly rounded value.
 *
 * POSENC_PREC_EXACT evaluates the real-number formula: inv_freq in double-double (about 2^-100
 * relative, from lib/core/mathx.c's exp/log), yarn's correction range and ramp in double-double,
 * llama3's band test in long double, and cos/sin by the row kernel in mathx.c (the angle
 * pos * inv_freq carried exactly and reduced with a 160-bit pi/2: within ~1 ulp of double of the
 * real-number value for angles below 2^49 rad, i.e. every position below 2^48 when inv_freq <= 2).
 *
 * hf precision needs FLT_EVAL_METHOD 0 (x86-64 SSE, aarch64): float operations round to float. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/core/mathx.h"
#include "lib/encodings/profile.h"
#include "lib/encodings/rope_step.h"
#include "lib/encodings/rope_type.h"
#include "posenc/rope.h"

/* Every float expression must round each operation on its own, as torch does: GCC in ISO C mode
 * does not contract a * b + c into an fma (-ffp-contract=off); clang would unless told. */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

#define PI_L 3.141592653589793238462643383279502884L
#define MAX_POSITION 9007199254740992LL /* 2^53: positions are exact as doubles below */

/* 2 pi in double-double */
static const pe_dd TWO_PI_DD = { 0x1.921fb54442d18p+2, 0x1.1a62633145c07p-52 };

/* ---------------------------------------------------------------------------------------------
 * names */

const char *posenc_rope_type_name(posenc_rope_type t)
{
    const pe_rope_type *rt = pe_rope_type_get(t);
    return rt ? rt->name : "unknown";
}

const char *posenc_precision_name(posenc_precision p)
{
    const pe_profile *r = pe_profile_get(p);
    return r ? r->name : "?";
}

posenc_status posenc_precision_parse(const char *s, posenc_precision *out, posenc_error *err)
{
    char names[80] = "";
    for (size_t i = 0; i < pe_n_profiles; i++) {
        const pe_profile *r = &pe_profiles[i];
        if (s && (strcmp(s, r->name) == 0 || (r->alias && strcmp(s, r->alias) == 0))) {
            *out = r->prec;
            return POSENC_OK;
        }
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s", i == 0 ? "" : i + 1 < pe_n_profiles ? ", "
                 : " or ", r->name);
    }
    return posenc_seterr(err, POSENC_EINVAL, "unknown precision '%s' (expected %s)", s ? s : "",
                         names);
}

const char *posenc_layout_name(posenc_layout l)
{
    switch (l) {
    case POSENC_LAYOUT_HF: return "hf";
    case POSENC_LAYOUT_HALF: return "half";
    case POSENC_LAYOUT_INTERLEAVED: return "interleaved";
    case POSENC_LAYOUT_VLLM: return "vllm";
    }
    return "?";
}

posenc_status posenc_layout_parse(const char *s, posenc_layout *out, posenc_error *err)
{
    static const struct {
        const char *name;
        posenc_layout l;
    } names[] = {
        { "hf", POSENC_LAYOUT_HF },     { "half", POSENC_LAYOUT_HALF },
        { "interleaved", POSENC_LAYOUT_INTERLEAVED }, { "vllm", POSENC_LAYOUT_VLLM },
    };
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].l;
            return POSENC_OK;
        }
    }
    return posenc_seterr(err, POSENC_EINVAL,
                         "unknown layout '%s' (expected hf, half, interleaved or vllm)",
                         s ? s : "");
}

/* ---------------------------------------------------------------------------------------------
 * building blocks */

/* hf: e_i = f32(f32(2i) / f32(D)), the torch.arange(0, D, 2).float() / D exponent. */
static float hf_exponent(int i, int D) { return (float)(2 * i) / (float)D; }

/* hf: inv_i = f32(1 / powf(f32(theta), e_i)) (every init function: torch.arange(0, d, 2) / d,
 * then base ** e); powf correctly
 * rounded, the reciprocal in float. */
static float hf_inv(float theta_f, int i, int D)
{
    return 1.0f / pe_mathx_powf_cr(theta_f, hf_exponent(i, D));
}

/* exact: theta^(-2i/D) = exp(-(2i) ln(theta) / D), with ln(theta) given in double-double. */
static pe_dd ex_inv(pe_dd ln_theta, int i, int D)
{
    if (i == 0)
        return dd_from_d(1.0);
    pe_dd a = dd_div_d(dd_mul_d(ln_theta, -2.0 * i), (double)D);
    return pe_mathx_dd_exp(a);
}

/* g(s, m) of yarn/DeepSeek: 1 when s <= 1, else 0.1 * m * ln(s) + 1 (float64 as in python). */
static double yarn_mscale(double s, double m)
{
    if (s <= 1.0)
        return 1.0;
    return 0.1 * m * log(s) + 1.0;
}

static int finite_pos(double x) { return isfinite(x) && x > 0.0; }

/* Store the exact inverse frequency of index i. */
static void set_exact(posenc_rope_params *p, int i, pe_dd v)
{
    p->inv_hi[i] = v.hi;
    p->inv_lo[i] = v.lo;
}

/* ---------------------------------------------------------------------------------------------
 * per rope_type */

/* default, linear and proportional: inv_i, then / factor (linear: `inv_freq /= factor`, i.e.
 * f32(inv_i / f32(factor)); proportional: the first n_live frequencies over exponent_dim, zeros
 * after, all / factor). */
static void compute_plain(const posenc_rope_config *c, posenc_rope_params *p, int D, int n_live,
                          double factor)
{
    float theta_f = (float)c->theta, factor_f = (float)factor;
    pe_dd ln_theta = pe_mathx_dd_log(dd_from_d(c->theta));
    for (int i = 0; i < p->n_freq; i++) {
        if (i >= n_live) {
            p->inv_freq_f32[i] = 0.0f;
            set_exact(p, i, dd_from_d(0.0));
            continue;
        }
        float inv = hf_inv(theta_f, i, D);
        pe_dd ex = ex_inv(ln_theta, i, D);
        if (factor != 1.0) {
            inv = inv / factor_f;
            ex = dd_div_d(ex, factor);
        }
        p->inv_freq_f32[i] = inv;
        set_exact(p, i, ex);
    }
}

/* dynamic (modeling_rope_utils.py _compute_dynamic_ntk_parameters). Stateless: the base
 * changes only when seq_len > M.
 * hf at load time / L <= M: the float64 formula of the init function,
 *   base = theta * ((factor * M / M) - (factor - 1)) ** (d / (d - 2)),
 * and at L > M the forward-time update in float32 0-dim tensors:
 *   s = f32(f32(factor) * f32(L)); s = f32(s / f32(M)); s = f32(s - f32(factor - 1));
 *   s = f32(pow(double(s), d / (d - 2)))  (std::pow(float, double));  base = f32(f32(theta) * s).
 * exact: base = theta * (factor L / M - factor + 1)^(d/(d-2)) for L > M, else theta. */
static void compute_dynamic(const posenc_rope_config *c, int64_t seq_len, posenc_rope_params *p,
                            int D)
{
    int d = c->rotary_dim;
    double M = (double)c->max_position_embeddings, factor = c->factor;
    double expo = (double)d / (double)(d - 2);
    float base_f;
    pe_dd ln_base = pe_mathx_dd_log(dd_from_d(c->theta));
    if (seq_len > c->max_position_embeddings) {
        float s = (float)factor * (float)seq_len;
        s = s / (float)M;
        s = s - (float)(factor - 1.0);
        s = (float)pow((double)s, expo);
        base_f = (float)c->theta * s;
        /* exact: ln base = ln theta + d/(d-2) * ln(factor (L - M) / M + 1) */
        pe_dd x = dd_div_d(dd_mul_d(dd_from_d((double)(seq_len - c->max_position_embeddings)),
                                        factor),
                               M);
        x = dd_add(x, dd_from_d(1.0));
        pe_dd lx = dd_div_d(dd_mul_d(pe_mathx_dd_log(x), (double)d), (double)(d - 2));
        ln_base = dd_add(ln_base, lx);
        p->theta_used = pe_mathx_dd_exp(ln_base).hi;
    } else {
        base_f = (float)(c->theta * pow((factor * M / M) - (factor - 1.0), expo));
        p->theta_used = c->theta;
    }
    for (int i = 0; i < p->n_freq; i++) {
        p->inv_freq_f32[i] = hf_inv(base_f, i, D);
        set_exact(p, i, ex_inv(ln_base, i, D));
    }
}

static int dd_lt(pe_dd a, pe_dd b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }

static pe_dd dd_floor(pe_dd a)
{
    double f = floor(a.hi);
    if (f == a.hi) /* hi is an integer: the low part decides */
        return dd_renorm(f, floor(a.lo));
    return dd_from_d(f);
}

static pe_dd dd_ceil(pe_dd a) { return dd_neg(dd_floor(dd_neg(a))); }

/* yarn's find_correction_dim: d ln(M0 / (r 2 pi)) / (2 ln theta), exact version */
static pe_dd yarn_cd_exact(double r, int d, double M0, pe_dd ln_theta)
{
    pe_dd x = dd_div(dd_from_d(M0), dd_mul_d(TWO_PI_DD, r));
    return dd_div(dd_mul_d(pe_mathx_dd_log(x), (double)d), dd_mul_d(ln_theta, 2.0));
}

/* yarn (modeling_rope_utils.py _compute_yarn_parameters, find_correction_range,
 * linear_ramp_factor, get_mscale).
 *   pos = powf(f32(theta), e_i); extrap = f32(1 / pos); interp = f32(1 / f32(f32(factor) * pos))
 *   cd(r) = d * ln(M0 / (r * 2 * pi)) / (2 ln theta)   (float64, python's operation order)
 *   low = cd(beta_fast), high = cd(beta_slow); truncate: floor / ceil; clamp to [0, d - 1];
 *   low == high: high += 0.001
 *   ramp_j = clamp(f32(f32(f32(j) - f32(low)) / f32(high - low)), 0, 1) for j < d/2
 *   w = f32(1 - ramp); inv = f32(f32(interp * f32(1 - w)) + f32(extrap * w))
 * exact: the same blend with real arithmetic (cd and the ramp in double-double). */
static void compute_yarn(const posenc_rope_config *c, int64_t seq_len, posenc_rope_params *p,
                         int D)
{
    (void)seq_len;
    int d = c->rotary_dim;
    double factor = c->factor, M0 = (double)c->original_max_position_embeddings;
    double beta_fast = c->beta_fast != 0.0 ? c->beta_fast : 32.0; /* `get(...) or 32` */
    double beta_slow = c->beta_slow != 0.0 ? c->beta_slow : 1.0;
    double low = (d * log(M0 / (beta_fast * 2 * M_PI))) / (2 * log(c->theta));
    double high = (d * log(M0 / (beta_slow * 2 * M_PI))) / (2 * log(c->theta));
    pe_dd ln_theta = pe_mathx_dd_log(dd_from_d(c->theta));
    pe_dd lowx = yarn_cd_exact(beta_fast, d, M0, ln_theta);
    pe_dd highx = yarn_cd_exact(beta_slow, d, M0, ln_theta);
    if (c->truncate) {
        low = floor(low);
        high = ceil(high);
        lowx = dd_floor(lowx);
        highx = dd_ceil(highx);
    }
    low = fmax(low, 0.0);
    high = fmin(high, (double)(d - 1));
    if (dd_lt(lowx, dd_from_d(0.0)))
        lowx = dd_from_d(0.0);
    if (dd_lt(dd_from_d((double)(d - 1)), highx))
        highx = dd_from_d((double)(d - 1));
    if (low == high)
        high += 0.001;
    if (lowx.hi == highx.hi && lowx.lo == highx.lo)
        highx = dd_add(highx, dd_from_d(0.001));
    float low_f = (float)low, range_f = (float)(high - low), factor_f = (float)factor;
    float theta_f = (float)c->theta;
    pe_dd lo_dd = lowx, range_dd = dd_sub(highx, lowx);
    for (int i = 0; i < p->n_freq; i++) {
        float pos = pe_mathx_powf_cr(theta_f, hf_exponent(i, D));
        float extrap = 1.0f / pos, interp = 1.0f / (factor_f * pos);
        float ramp = ((float)i - low_f) / range_f;
        ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
        float w = 1.0f - ramp;
        p->inv_freq_f32[i] = interp * (1.0f - w) + extrap * w;

        pe_dd ex = ex_inv(ln_theta, i, D);
        pe_dd rampx = dd_div(dd_sub(dd_from_d((double)i), lo_dd), range_dd);
        if (rampx.hi < 0.0)
            rampx = dd_from_d(0.0);
        else if (rampx.hi > 1.0 || (rampx.hi == 1.0 && rampx.lo > 0.0))
            rampx = dd_from_d(1.0);
        /* interp * ramp + extrap * (1 - ramp) = extrap * (1 - ramp + ramp / factor) */
        pe_dd blend = dd_add(dd_sub(dd_from_d(1.0), rampx), dd_div_d(rampx, factor));
        set_exact(p, i, dd_mul(ex, blend));
    }
    if (c->has_attention_factor)
        p->attention_scaling = c->attention_factor;
    else if (c->mscale != 0.0 && c->mscale_all_dim != 0.0)
        p->attention_scaling = yarn_mscale(factor, c->mscale) / yarn_mscale(factor, c->mscale_all_dim);
    else
        p->attention_scaling = yarn_mscale(factor, 1.0);
}

/* longrope (modeling_rope_utils.py _compute_longrope_parameters; runtime: long factors when
 * seq_len > M0, strict).
 *   ext = f32(long_factor or short_factor); inv = f32(1 / f32(ext * powf(theta, e_i)))
 *   attention = given, else 1 if factor <= 1 else sqrt(1 + ln(factor) / ln(M0)); factor absent
 *   (<= 0 here) means M / M0. The same attention scaling serves short and long. */
static void compute_longrope(const posenc_rope_config *c, int64_t seq_len, posenc_rope_params *p,
                             int D)
{
    int use_long = seq_len > 0 && seq_len > c->original_max_position_embeddings;
    const double *ext = use_long ? c->long_factor : c->short_factor;
    float theta_f = (float)c->theta;
    pe_dd ln_theta = pe_mathx_dd_log(dd_from_d(c->theta));
    p->long_factors = use_long;
    for (int i = 0; i < p->n_freq; i++) {
        float pw = pe_mathx_powf_cr(theta_f, hf_exponent(i, D));
        p->inv_freq_f32[i] = 1.0f / ((float)ext[i] * pw);
        set_exact(p, i, dd_div_d(ex_inv(ln_theta, i, D), ext[i]));
    }
    double factor = c->factor > 0.0 ? c->factor
                                    : (double)c->max_position_embeddings /
                                          (double)c->original_max_position_embeddings;
    if (c->has_attention_factor)
        p->attention_scaling = c->attention_factor;
    else if (factor <= 1.0)
        p->attention_scaling = 1.0;
    else
        p->attention_scaling =
            sqrt(1.0 + log(factor) / log((double)c->original_max_position_embeddings));
}

/* llama3 (modeling_rope_utils.py _compute_llama3_parameters), in torch's float32 steps:
 *   wl = f32(f32(1 / inv) * f32(2 pi))            (python 2*pi / tensor = reciprocal * scalar)
 *   lo_wl = M0 / low, hi_wl = M0 / high (float64), compared with wl as float32
 *   inv_l = wl > lo_wl ? f32(inv / f32(factor)) : inv
 *   s = f32(f32(f32(f32(1 / wl) * f32(M0)) - f32(low)) / f32(high - low))
 *   sm = f32(f32(f32(f32(1 - s) * inv_l) / f32(factor)) + f32(s * inv_l))
 *   medium = !(wl < hi_wl) && !(wl > lo_wl); inv = medium ? sm : inv_l
 * When high == low (Llama-4 Scout: 1.0 / 1.0) s is inf or nan; HF masks it out except at the
 * single point wl == M0 / low, where we take s = 0 (vLLM's rule) instead of a NaN.
 * exact: wl = 2 pi / inv and s = (M0 inv / (2 pi) - low) / (high - low) in real arithmetic. */
static void compute_llama3(const posenc_rope_config *c, int64_t seq_len, posenc_rope_params *p,
                           int D)
{
    (void)seq_len;
    double lowf = c->low_freq_factor, highf = c->high_freq_factor, factor = c->factor;
    double M0 = (double)c->original_max_position_embeddings;
    float lo_wl_f = (float)(M0 / lowf), hi_wl_f = (float)(M0 / highf);
    float twopi_f = (float)(2 * M_PI), M0_f = (float)M0, factor_f = (float)factor;
    float lowf_f = (float)lowf, range_f = (float)(highf - lowf);
    long double lo_wl = M0 / (long double)lowf, hi_wl = M0 / (long double)highf;
    float theta_f = (float)c->theta;
    pe_dd ln_theta = pe_mathx_dd_log(dd_from_d(c->theta));
    for (int i = 0; i < p->n_freq; i++) {
        float inv = hf_inv(theta_f, i, D);
        float wl = (1.0f / inv) * twopi_f;
        float inv_l = wl > lo_wl_f ? inv / factor_f : inv;
        int medium = !(wl < hi_wl_f) && !(wl > lo_wl_f);
        if (medium) {
            float s = range_f != 0.0f ? (((1.0f / wl) * M0_f) - lowf_f) / range_f : 0.0f;
            inv_l = ((1.0f - s) * inv_l) / factor_f + s * inv_l;
        }
        p->inv_freq_f32[i] = inv_l;

        pe_dd ex = ex_inv(ln_theta, i, D);
        long double wlx = 2 * PI_L / dd_to_ld(ex);
        if (wlx > lo_wl) {
            ex = dd_div_d(ex, factor);
        } else if (!(wlx < hi_wl)) {
            pe_dd s = dd_from_d(0.0);
            if (highf != lowf) {
                s = dd_div(dd_mul_d(ex, M0), TWO_PI_DD);
                s = dd_div_d(dd_sub(s, dd_from_d(lowf)), highf - lowf);
            }
            /* (1 - s) inv / factor + s inv */
            pe_dd a = dd_div_d(dd_mul(dd_sub(dd_from_d(1.0), s), ex), factor);
            ex = dd_add(a, dd_mul(s, ex));
        }
        set_exact(p, i, ex);
    }
}

/* mrope (qwen2_vl apply_multimodal_rotary_pos_emb; qwen3_vl apply_interleaved_mrope):
 * frequency i takes its position from axis t, h or w.
 * Contiguous (Qwen2-VL): sections [s0, s1, s2] in order. Interleaved (Qwen3-VL, Qwen3.5):
 * freqs_t[..., 1:3*s_h:3] = freqs_h and freqs_t[..., 2:3*s_w:3] = freqs_w. */
static posenc_status compute_mrope(const posenc_rope_config *c, posenc_rope_params *p,
                                   posenc_error *err)
{
    if (c->n_mrope_section == 0)
        return POSENC_OK;
    if (c->n_mrope_section != 3)
        return posenc_seterr(err, POSENC_ECONFIG,
                             "mrope_section has %d entries, expected 3 (t, h, w)",
                             c->n_mrope_section);
    long sum = 0;
    for (int a = 0; a < 3; a++) {
        if (c->mrope_section[a] < 0)
            return posenc_seterr(err, POSENC_ECONFIG, "mrope_section[%d] is negative (%d)", a,
                                 c->mrope_section[a]);
        sum += c->mrope_section[a];
    }
    if (sum != p->n_freq)
        return posenc_seterr(err, POSENC_ECONFIG,
                             "mrope_section [%d, %d, %d] sums to %ld, expected rotary_dim/2 = %d",
                             c->mrope_section[0], c->mrope_section[1], c->mrope_section[2], sum,
                             p->n_freq);
    for (int i = 0; i < p->n_freq; i++) {
        unsigned char axis;
        if (c->mrope_interleaved) {
            if (i % 3 == 1 && i < 3 * c->mrope_section[1])
                axis = 1;
            else if (i % 3 == 2 && i < 3 * c->mrope_section[2])
                axis = 2;
            else
                axis = 0;
        } else {
            axis = i < c->mrope_section[0] ? 0 : i < c->mrope_section[0] + c->mrope_section[1] ? 1 : 2;
        }
        p->mrope_axis[i] = axis;
    }
    p->mrope = 1;
    return POSENC_OK;
}

/* The rope types' own checks (rope_types.def, .check), each in the order the messages take. */

static posenc_status check_factor(const posenc_rope_config *c, const char *tn, posenc_error *err)
{
    if (!finite_pos(c->factor))
        return posenc_seterr(err, POSENC_ECONFIG, "%s: factor must be positive, not %g", tn,
                             c->factor);
    return POSENC_OK;
}

static posenc_status check_m0(const posenc_rope_config *c, const char *tn, posenc_error *err)
{
    if (c->original_max_position_embeddings <= 0)
        return posenc_seterr(err, POSENC_ECONFIG,
                             "%s: original_max_position_embeddings must be positive", tn);
    return POSENC_OK;
}

static posenc_status check_longrope(const posenc_rope_config *c, const char *tn,
                                    posenc_error *err)
{
    if (check_m0(c, tn, err) != POSENC_OK)
        return POSENC_ECONFIG;
    if (!(c->factor >= 0.0) || isinf(c->factor))
        return posenc_seterr(err, POSENC_ECONFIG, "%s: factor must be positive, not %g", tn,
                             c->factor);
    if (c->factor <= 0.0 && c->max_position_embeddings <= 0)
        return posenc_seterr(err, POSENC_ECONFIG,
                             "%s: no factor and no max_position_embeddings", tn);
    if (c->n_short_factor != c->rotary_dim / 2 || c->n_long_factor != c->rotary_dim / 2)
        return posenc_seterr(err, POSENC_ECONFIG,
                             "%s: short_factor and long_factor need %d entries, not %d and %d",
                             tn, c->rotary_dim / 2, c->n_short_factor, c->n_long_factor);
    for (int i = 0; i < c->rotary_dim / 2; i++)
        if (!finite_pos(c->short_factor[i]) || !finite_pos(c->long_factor[i]))
            return posenc_seterr(err, POSENC_ECONFIG,
                                 "%s: short_factor[%d] and long_factor[%d] must be positive",
                                 tn, i, i);
    return POSENC_OK;
}

static posenc_status check_dynamic(const posenc_rope_config *c, const char *tn,
                                   posenc_error *err)
{
    if (check_factor(c, tn, err) != POSENC_OK)
        return POSENC_ECONFIG;
    if (c->max_position_embeddings <= 0)
        return posenc_seterr(err, POSENC_ECONFIG, "%s: max_position_embeddings must be positive",
                             tn);
    if (c->rotary_dim <= 2)
        return posenc_seterr(err, POSENC_ECONFIG,
                             "%s: rotary dimension must exceed 2 (base ** (d / (d - 2)))", tn);
    return POSENC_OK;
}

static posenc_status check_yarn(const posenc_rope_config *c, const char *tn, posenc_error *err)
{
    if (check_factor(c, tn, err) != POSENC_OK || check_m0(c, tn, err) != POSENC_OK)
        return POSENC_ECONFIG;
    if (!(c->beta_fast >= 0.0) || !(c->beta_slow >= 0.0) || isinf(c->beta_fast) ||
        isinf(c->beta_slow))
        return posenc_seterr(err, POSENC_ECONFIG, "%s: beta_fast and beta_slow must be positive",
                             tn);
    if (c->theta == 1.0)
        return posenc_seterr(err, POSENC_ECONFIG, "%s: rope_theta 1 has no correction range", tn);
    if (!isfinite(c->mscale) || !isfinite(c->mscale_all_dim))
        return posenc_seterr(err, POSENC_ECONFIG, "%s: mscale must be a number", tn);
    return POSENC_OK;
}

static posenc_status check_llama3(const posenc_rope_config *c, const char *tn, posenc_error *err)
{
    if (check_factor(c, tn, err) != POSENC_OK || check_m0(c, tn, err) != POSENC_OK)
        return POSENC_ECONFIG;
    if (!finite_pos(c->low_freq_factor) || !finite_pos(c->high_freq_factor))
        return posenc_seterr(err, POSENC_ECONFIG,
                             "%s: low_freq_factor and high_freq_factor must be positive", tn);
    return POSENC_OK;
}

/* The types whose factor divides inv_freq, and default; D and the live pairs as the row's
 * width says (proportional: int(prf * head_dim // 2) live frequencies, then zeros up to
 * rotary_dim / 2). */
static void compute_default(const posenc_rope_config *c, int64_t seq_len, posenc_rope_params *p,
                            int D)
{
    (void)seq_len;
    compute_plain(c, p, D, p->n_freq, 1.0);
}

static void compute_linear(const posenc_rope_config *c, int64_t seq_len, posenc_rope_params *p,
                           int D)
{
    (void)seq_len;
    compute_plain(c, p, D, p->n_freq, c->factor);
}

static void compute_proportional(const posenc_rope_config *c, int64_t seq_len,
                                 posenc_rope_params *p, int D)
{
    (void)seq_len;
    double live = floor(c->partial_rotary_factor * c->head_dim / 2.0);
    int n_live = live > p->n_freq ? p->n_freq : (int)live;
    compute_plain(c, p, D, n_live, c->factor);
}

/* ---------------------------------------------------------------------------------------------
 * the rope types (rope_types.def) */

const pe_rope_type pe_rope_types[] = {
#define ROPE_TYPE(id, nm, ...) [id] = { .type = id, .name = nm, __VA_ARGS__ },
#include "lib/encodings/rope_types.def"
#undef ROPE_TYPE
};
const size_t pe_n_rope_types = sizeof pe_rope_types / sizeof pe_rope_types[0];

const pe_rope_type *pe_rope_type_get(posenc_rope_type t)
{
    if ((unsigned)t >= pe_n_rope_types || !pe_rope_types[t].name)
        return NULL;
    return &pe_rope_types[t];
}

const pe_rope_type *pe_rope_type_find(const char *name)
{
    for (size_t i = 0; name && i < pe_n_rope_types; i++)
        if (pe_rope_types[i].name && strcmp(name, pe_rope_types[i].name) == 0)
            return &pe_rope_types[i];
    return NULL;
}

char *pe_rope_type_names(char *buf, size_t size)
{
    size_t l = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < pe_n_rope_types && l < size; i++) {
        if (!pe_rope_types[i].name)
            continue;
        int n = snprintf(buf + l, size - l, "%s%s", l ? ", " : "", pe_rope_types[i].name);
        if (n < 0)
            break;
        l += (size_t)n;
    }
    return buf;
}

/* ---------------------------------------------------------------------------------------------
 * parameters */

static posenc_status check_config(const posenc_rope_config *c, int64_t seq_len, posenc_error *err)
{
    const pe_rope_type *rt = pe_rope_type_get(c->type);
    if (!rt)
        return posenc_seterr(err, POSENC_EINVAL, "unknown rope_type %d", (int)c->type);
    const char *tn = rt->name;
    if (c->rotary_dim <= 0 || c->rotary_dim % 2 != 0 || c->rotary_dim > 2 * POSENC_MAX_FREQ)
        return posenc_seterr(err, POSENC_ECONFIG,
                             "rotary dimension %d is not an even number in 2..%d", c->rotary_dim,
                             2 * POSENC_MAX_FREQ);
    if (c->head_dim < c->rotary_dim)
        return posenc_seterr(err, POSENC_ECONFIG, "head_dim %d is smaller than rotary dimension %d",
                             c->head_dim, c->rotary_dim);
    if (c->exponent_dim < 0 || c->exponent_dim > 2 * POSENC_MAX_FREQ)
        return posenc_seterr(err, POSENC_ECONFIG, "exponent dimension %d out of range",
                             c->exponent_dim);
    if (!finite_pos(c->theta))
        return posenc_seterr(err, POSENC_ECONFIG, "rope_theta must be a positive number, not %g",
                             c->theta);
    if (seq_len < 0)
        return posenc_seterr(err, POSENC_EINVAL, "sequence length %lld is negative",
                             (long long)seq_len);
    if (c->style != POSENC_STYLE_NEOX && c->style != POSENC_STYLE_GPTJ)
        return posenc_seterr(err, POSENC_EINVAL, "unknown rotary style %d", (int)c->style);
    posenc_status st = rt->check ? rt->check(c, tn, err) : POSENC_OK;
    if (st != POSENC_OK)
        return st;
    if (c->has_attention_factor && !finite_pos(c->attention_factor))
        return posenc_seterr(err, POSENC_ECONFIG, "attention_factor must be positive, not %g",
                             c->attention_factor);
    if ((rt->keys & RK_PRF) &&
        !(c->partial_rotary_factor > 0.0 && c->partial_rotary_factor <= 1.0))
        return posenc_seterr(err, POSENC_ECONFIG,
                             "%s: partial_rotary_factor must be in (0, 1], not %g", tn,
                             c->partial_rotary_factor);
    return POSENC_OK;
}

posenc_status posenc_rope_params_compute(const posenc_rope_config *cfg, int64_t seq_len,
                                         posenc_rope_params *out, posenc_error *err)
{
    if (!cfg || !out)
        return posenc_seterr(err, POSENC_EINVAL, "no RoPE configuration given");
    posenc_status st = check_config(cfg, seq_len, err);
    if (st != POSENC_OK)
        return st;
    posenc_rope_params *p = calloc(1, sizeof *p); /* ~20 KB: keep it off small thread stacks */
    if (!p)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    p->type = cfg->type;
    p->style = cfg->style;
    p->head_dim = cfg->head_dim;
    p->rotary_dim = cfg->rotary_dim;
    p->n_freq = cfg->rotary_dim / 2;
    p->seq_len = seq_len;
    p->theta_used = cfg->theta;
    p->attention_scaling = 1.0;
    /* D: the exponent's denominator (theta^(-2i/D)). */
    const pe_rope_type *rt = pe_rope_type_get(cfg->type);
    int D = cfg->exponent_dim > 0 ? cfg->exponent_dim
            : rt->width == RW_HEAD ? cfg->head_dim
                                   : cfg->rotary_dim;
    rt->compute(cfg, seq_len, p, D);
    p->attention_scaling_f32 = (float)p->attention_scaling;
    p->softmax_scale = 1.0;
    if (cfg->softmax_mscale) {
        double g = yarn_mscale(cfg->factor, cfg->mscale_all_dim);
        p->softmax_scale = g * g;
    }
    st = compute_mrope(cfg, p, err);
    if (st == POSENC_OK) {
        for (int i = 0; i < p->n_freq; i++) {
            if (!isfinite(p->inv_hi[i]) || !isfinite(p->inv_freq_f32[i])) {
                st = posenc_seterr(err, POSENC_ECONFIG,
                                   "%s: inverse frequency %d is not finite (theta %g)",
                                   posenc_rope_type_name(cfg->type), i, cfg->theta);
                break;
            }
        }
    }
    /* the tables are float32 (hf) or the output dtype: the factors must fit a float32 with
     * room for cos/sin, and so must the softmax factor */
    if (st == POSENC_OK && !(p->attention_scaling > 0.0 && isfinite(p->attention_scaling_f32) &&
                             p->attention_scaling <= 65504.0)) /* f16 tables must hold it */
        st = posenc_seterr(err, POSENC_ECONFIG, "%s: attention scaling %g is not in (0, 65504] "
                           "(the float16 range)", posenc_rope_type_name(cfg->type), p->attention_scaling);
    if (st == POSENC_OK && !(p->softmax_scale > 0.0 && p->softmax_scale < 1e30))
        st = posenc_seterr(err, POSENC_ECONFIG, "%s: softmax factor %g is not a positive "
                           "float32", posenc_rope_type_name(cfg->type), p->softmax_scale);
    if (st == POSENC_OK)
        *out = *p;
    free(p);
    return st;
}

posenc_status posenc_rope_params_new(const posenc_rope_config *cfg, int64_t seq_len,
                                     posenc_rope_params **out, posenc_error *err)
{
    posenc_rope_params *p = malloc(sizeof *p);
    if (!p)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = posenc_rope_params_compute(cfg, seq_len, p, err);
    if (st != POSENC_OK) {
        free(p);
        return st;
    }
    *out = p;
    return POSENC_OK;
}

void posenc_rope_params_free(posenc_rope_params *p)
{
    free(p);
}

posenc_rope_type posenc_rope_params_type(const posenc_rope_params *p) { return p->type; }
posenc_style posenc_rope_params_style(const posenc_rope_params *p) { return p->style; }
int posenc_rope_params_head_dim(const posenc_rope_params *p) { return p->head_dim; }
int posenc_rope_params_rotary_dim(const posenc_rope_params *p) { return p->rotary_dim; }
double posenc_rope_params_attention_scaling(const posenc_rope_params *p)
{
    return p->attention_scaling;
}

int posenc_rope_table_width(const posenc_rope_params *p, posenc_layout layout)
{
    if (!p)
        return 0;
    switch (layout) {
    case POSENC_LAYOUT_HF:
    case POSENC_LAYOUT_INTERLEAVED:
    case POSENC_LAYOUT_VLLM: return 2 * p->n_freq;
    case POSENC_LAYOUT_HALF: return p->n_freq;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * cos / sin */

/* hf (LlamaRotaryEmbedding.forward): angle = f32(inv_f32 * f32(pos)); cos/sin of the float
 * angle, correctly rounded;
 * then f32(value * f32(attention_scaling)). */
static void cossin_hf(const posenc_rope_params *p, int64_t pos, double *c, double *s)
{
    float ang[POSENC_MAX_FREQ], cf[POSENC_MAX_FREQ], sf[POSENC_MAX_FREQ];
    float pf = (float)pos, a = p->attention_scaling_f32;
    if (p->pos_div_f32 > 0.0f) /* vLLM's linear class divides the float32 positions */
        pf = pf / p->pos_div_f32;
    int n = p->n_freq;
    if (n <= 0 || n > POSENC_MAX_FREQ)
        return;
    for (int i = 0; i < n; i++)
        ang[i] = p->inv_freq_f32[i] * pf;
    pe_mathx_cossin_f32_row(ang, (size_t)n, cf, sf);
    for (int i = 0; i < n; i++) {
        c[i] = (double)(cf[i] * a);
        s[i] = (double)(sf[i] * a);
    }
}

static void cossin_exact(const posenc_rope_params *p, int64_t pos, double *c, double *s)
{
    int n = p->n_freq;
    pe_mathx_sincos_row(p->inv_hi, p->inv_lo, (size_t)n, (double)pos, c, s);
    double a = p->attention_scaling;
    if (a != 1.0) {
        for (int i = 0; i < n; i++) {
            c[i] *= a;
            s[i] *= a;
        }
    }
}

/* ---- the exact rows by steps (lib/encodings/rope_step.h) ---- */

double *pe_rope_step_rows(const posenc_rope_params *p, int nf)
{
    double *st = malloc((size_t)PE_STEP_K * 2 * (size_t)nf * sizeof *st);
    if (!st)
        return NULL;
    for (int d = 0; d < PE_STEP_K; d++) {
        double *row = st + (size_t)d * 2 * (size_t)nf;
        pe_mathx_sincos_row(p->inv_hi, p->inv_lo, (size_t)nf, (double)d, row, row + nf);
    }
    return st;
}

void pe_rope_step_init(pe_rope_step *s, const posenc_rope_params *p, int nf, const double *steps)
{
    s->p = p;
    s->steps = steps;
    s->nf = nf;
    s->anchor = -1;
}

/* the float of cossin_exact's value */
static float exact_f32(double v, double a) { return (float)(a != 1.0 ? v * a : v); }

void pe_rope_step_row(pe_rope_step *s, int64_t pos, float *c, float *sn)
{
    const posenc_rope_params *p = s->p;
    const int nf = s->nf;
    const double a = p->attention_scaling;
    int64_t d = pos - s->anchor;
    if (s->anchor < 0 || d < 1 || d >= PE_STEP_K) { /* a new anchor: cossin_exact itself */
        pe_mathx_sincos_row(p->inv_hi, p->inv_lo, (size_t)nf, (double)pos, s->ca, s->sa);
        s->anchor = pos;
        for (int i = 0; i < nf; i++) {
            c[i] = exact_f32(s->ca[i], a);
            sn[i] = exact_f32(s->sa[i], a);
        }
        return;
    }
    uint16_t bad[POSENC_MAX_FREQ];
    const double *st = s->steps + (size_t)d * 2 * (size_t)nf;
    size_t nb = pe_mathx_step_row_f32(s->ca, s->sa, st, st + nf, (size_t)nf, a, c, sn, bad);
    for (size_t k = 0; k < nb; k++) { /* the values the step could not settle */
        int i = bad[k];
        double c1 = s->ca[i], s1 = s->sa[i]; /* a zero frequency's angle is 0 at every position */
        if (p->inv_hi[i] != 0.0 || p->inv_lo[i] != 0.0)
            pe_mathx_sincos_row(p->inv_hi + i, p->inv_lo + i, 1, (double)pos, &c1, &s1);
        c[i] = exact_f32(c1, a);
        sn[i] = exact_f32(s1, a);
    }
}

/* ggml: llama.cpp's CPU numerics (lib/encodings/rope_ggml.c); NaN without its arguments */
static void cossin_ggml(const posenc_rope_params *p, const int64_t pos3[3], double *c, double *s)
{
    if (p->has_ggml && p->ggml.n_dims == 2 * p->n_freq) {
        posenc_ggml_rope_cossin(&p->ggml, pos3, c, s);
        return;
    }
    for (int i = 0; i < p->n_freq; i++)
        c[i] = s[i] = NAN;
}

/* the profiles' cos/sin of one position (pos3[0]; mrope is posenc_rope_cossin3's) */
static void cossin_hf3(const posenc_rope_params *p, const int64_t pos3[3], double *c, double *s)
{
    cossin_hf(p, pos3[0], c, s);
}

static void cossin_exact3(const posenc_rope_params *p, const int64_t pos3[3], double *c,
                          double *s)
{
    cossin_exact(p, pos3[0], c, s);
}

/* ---------------------------------------------------------------------------------------------
 * the runtime profiles (profiles.def) */

const pe_profile pe_profiles[] = {
#define PROFILE(id, build, nm, ...) [id] = { .prec = id, .name = nm, __VA_ARGS__ },
#include "lib/encodings/profiles.def"
#undef PROFILE
};
const size_t pe_n_profiles = sizeof pe_profiles / sizeof pe_profiles[0];

const pe_profile *pe_profile_get(posenc_precision prec)
{
    if ((unsigned)prec >= pe_n_profiles || !pe_profiles[prec].name)
        return NULL;
    return &pe_profiles[prec];
}

void posenc_rope_cossin(const posenc_rope_params *p, posenc_precision prec, int64_t pos,
                        double *cos_f, double *sin_f)
{
    const pe_profile *r = pe_profile_get(prec);
    const int64_t pos3[3] = { pos, pos, pos };
    (r ? r : &pe_profiles[POSENC_PREC_EXACT])->cossin(p, pos3, cos_f, sin_f);
}

void posenc_rope_cossin3(const posenc_rope_params *p, posenc_precision prec,
                         const int64_t pos3[3], double *cos_f, double *sin_f)
{
    const pe_profile *r = pe_profile_get(prec);
    if (r && (r->flags & PF_GGML)) { /* ggml's sections choose the axis of each frequency */
        r->cossin(p, pos3, cos_f, sin_f);
        return;
    }
    if (!p->mrope || (pos3[0] == pos3[1] && pos3[0] == pos3[2])) {
        posenc_rope_cossin(p, prec, pos3[0], cos_f, sin_f);
        return;
    }
    double c[POSENC_MAX_FREQ], s[POSENC_MAX_FREQ];
    for (int a = 0; a < 3; a++) {
        int used = 0;
        for (int i = 0; i < p->n_freq && !used; i++)
            used = p->mrope_axis[i] == a;
        if (!used)
            continue;
        posenc_rope_cossin(p, prec, pos3[a], c, s);
        for (int i = 0; i < p->n_freq; i++) {
            if (p->mrope_axis[i] == a) {
                cos_f[i] = c[i];
                sin_f[i] = s[i];
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * tables */

struct table_job {
    const posenc_rope_params *p;
    posenc_precision prec;
    posenc_layout layout;
    const int64_t *positions;
    size_t begin, end;
    int width;
    double *cos_out, *sin_out;
    float *cos_f32, *sin_f32; /* pe_rope_table_f32: these instead */
    const double *steps;
};

/* Row r of a table in layout L: ROW(pos, cos, sin) writes the n frequencies' values of one
 * position, c and s are the row's two outputs, tc and ts scratch rows of n values. */
#define TABLE_ROW(ROW, L, pos, c, s, n, tc, ts)                                                    \
    switch (L) {                                                                                  \
    case POSENC_LAYOUT_HALF:                                                                      \
        ROW(pos, c, s);                                                                           \
        break;                                                                                    \
    case POSENC_LAYOUT_HF: /* cat(f, f) */                                                        \
        ROW(pos, c, s);                                                                           \
        memcpy(c + n, c, (size_t)n * sizeof *c);                                                  \
        memcpy(s + n, s, (size_t)n * sizeof *s);                                                  \
        break;                                                                                    \
    case POSENC_LAYOUT_VLLM: /* cos_sin_cache row: cat(cos, sin), in both outputs */              \
        ROW(pos, c, c + n);                                                                       \
        memcpy(s, c, 2 * (size_t)n * sizeof *s);                                                  \
        break;                                                                                    \
    case POSENC_LAYOUT_INTERLEAVED: /* f0 f0 f1 f1 ... */                                         \
        ROW(pos, tc, ts);                                                                         \
        for (int i = 0; i < n; i++) {                                                             \
            c[2 * i] = c[2 * i + 1] = tc[i];                                                      \
            s[2 * i] = s[2 * i + 1] = ts[i];                                                      \
        }                                                                                         \
        break;                                                                                    \
    }

static void table_rows(const struct table_job *j)
{
    int n = j->p->n_freq;
    double tc[POSENC_MAX_FREQ], ts[POSENC_MAX_FREQ];
#define FULL_ROW(pos, c_, s_) posenc_rope_cossin(j->p, j->prec, pos, c_, s_)
    for (size_t r = j->begin; r < j->end; r++) {
        double *c = j->cos_out + r * (size_t)j->width, *s = j->sin_out + r * (size_t)j->width;
        TABLE_ROW(FULL_ROW, j->layout, j->positions[r], c, s, n, tc, ts);
    }
#undef FULL_ROW
}

/* table_rows in float32 for the exact precision, each row by steps */
static void table_rows_f32(const struct table_job *j)
{
    int n = j->p->n_freq;
    float tc[POSENC_MAX_FREQ], ts[POSENC_MAX_FREQ];
    pe_rope_step st;
    pe_rope_step_init(&st, j->p, n, j->steps);
#define STEP_ROW(pos, c_, s_) pe_rope_step_row(&st, pos, c_, s_)
    for (size_t r = j->begin; r < j->end; r++) {
        float *c = j->cos_f32 + r * (size_t)j->width, *s = j->sin_f32 + r * (size_t)j->width;
        TABLE_ROW(STEP_ROW, j->layout, j->positions[r], c, s, n, tc, ts);
    }
#undef STEP_ROW
}

static void *table_thread(void *arg)
{
    const struct table_job *j = arg;
    if (j->cos_f32)
        table_rows_f32(j);
    else
        table_rows(j);
    return NULL;
}

#define MAX_THREADS 64

/* posenc_rope_table's checks of its arguments; *width gets the row width */
static posenc_status table_check(const posenc_rope_params *p, posenc_precision prec,
                                 posenc_layout layout, const int64_t *positions, size_t n,
                                 const void *cos_out, const void *sin_out, size_t es, int *width,
                                 posenc_error *err)
{
    if (!p)
        return posenc_seterr(err, POSENC_EINVAL, "no RoPE parameters given");
    if (p->n_freq <= 0 || p->n_freq > POSENC_MAX_FREQ || p->rotary_dim != 2 * p->n_freq)
        return posenc_seterr(err, POSENC_EINVAL, "RoPE parameters have %d frequencies", p->n_freq);
    const pe_profile *prof = pe_profile_get(prec);
    if (!prof)
        return posenc_seterr(err, POSENC_EINVAL, "unknown precision %d", (int)prec);
    if ((prof->flags & PF_GGML) && !p->has_ggml)
        return posenc_seterr(err, POSENC_EINVAL,
                             "the ggml precision needs llama.cpp's RoPE arguments for the model");
    *width = posenc_rope_table_width(p, layout);
    if (*width <= 0)
        return posenc_seterr(err, POSENC_EINVAL, "unknown table layout %d", (int)layout);
    if (n == 0)
        return POSENC_OK;
    if (!positions || !cos_out || !sin_out)
        return posenc_seterr(err, POSENC_EINVAL, "no positions or output buffer given");
    if (n > SIZE_MAX / es / (size_t)*width)
        return posenc_seterr(err, POSENC_ERANGE, "table of %zu rows is too large", n);
    for (size_t r = 0; r < n; r++) {
        if (positions[r] < 0 || positions[r] > MAX_POSITION)
            return posenc_seterr(err, POSENC_EINVAL, "position %lld is out of range 0..2^53",
                                 (long long)positions[r]);
        /* llama.cpp's positions are int32 (llama_pos) */
        if (prof->max_pos > 0 && positions[r] > prof->max_pos)
            return posenc_seterr(err, POSENC_EINVAL,
                                 "position %lld is past llama.cpp's int32 positions (2^31 - 1)",
                                 (long long)positions[r]);
    }
    return POSENC_OK;
}

/* the rows split over nthreads threads, each job from proto */
static void table_run(const struct table_job *proto, size_t n, int nthreads)
{
    struct table_job jobs[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    int started[MAX_THREADS] = { 0 };
    size_t t = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : (size_t)nthreads;
    if (t > n / 64 + 1) /* a thread per 64 rows at least */
        t = n / 64 + 1;
    for (size_t k = 0; k < t; k++) {
        jobs[k] = *proto;
        jobs[k].begin = n * k / t;
        jobs[k].end = n * (k + 1) / t;
    }
    for (size_t k = 1; k < t; k++)
        started[k] = pthread_create(&tids[k], NULL, table_thread, &jobs[k]) == 0;
    table_thread(&jobs[0]);
    for (size_t k = 1; k < t; k++) {
        if (started[k])
            pthread_join(tids[k], NULL);
        else
            table_thread(&jobs[k]); /* could not start a thread: do its share here */
    }
}

posenc_status posenc_rope_table(const posenc_rope_params *p, posenc_precision prec,
                                posenc_layout layout, const int64_t *positions, size_t n,
                                double *cos_out, double *sin_out, int nthreads,
                                posenc_error *err)
{
    int width = 0;
    posenc_status st = table_check(p, prec, layout, positions, n, cos_out, sin_out,
                                   sizeof(double), &width, err);
    if (st != POSENC_OK || n == 0)
        return st;
    const struct table_job proto = { p, prec, layout, positions, 0, 0, width, cos_out, sin_out,
                                     NULL, NULL, NULL };
    table_run(&proto, n, nthreads);
    return POSENC_OK;
}

posenc_status pe_rope_table_f32(const posenc_rope_params *p, posenc_layout layout,
                                const int64_t *positions, size_t n, float *cos_out,
                                float *sin_out, int nthreads, const double *steps,
                                posenc_error *err)
{
    int width = 0;
    posenc_status st = table_check(p, POSENC_PREC_EXACT, layout, positions, n, cos_out, sin_out,
                                   sizeof(float), &width, err);
    if (st != POSENC_OK || n == 0)
        return st;
    double *own = steps ? NULL : pe_rope_step_rows(p, p->n_freq);
    if (!steps && !own)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    const struct table_job proto = { p, POSENC_PREC_EXACT, layout, positions, 0, 0, width, NULL,
                                     NULL, cos_out, sin_out, steps ? steps : own };
    table_run(&proto, n, nthreads);
    free(own);
    return POSENC_OK;
}
