/* rope_ggml.c: llama.cpp's CPU RoPE numerics, step by step, and the check that attaches ggml's
 * arguments to RoPE parameters (the arguments a model gets are built in lib/runtimes/rope_llamacpp.c).
 *
 * Upstream (ggml-org/llama.cpp, the release node-llama-cpp 3.21.1 bundles):
 *   ggml/src/ggml-cpu/ops.cpp  ggml_compute_forward_rope_flt (theta_scale, the cache per position),
 *                              ggml_rope_cache_init, ggml_mrope_cache_init, rope_yarn,
 *                              rope_yarn_ramp;
 *   ggml/src/ggml.c            ggml_rope_yarn_corr_dim, ggml_rope_yarn_corr_dims;
 *   ggml/src/ggml-impl.h       MIN, MAX (the macros, whose mixed int/float operands decide the
 *                              types below);
 *   src/llama-graph.cpp        llm_graph_input_pos::set_input (text tokens of an M-RoPE model:
 *                              t = h = w = the position, the fourth position 0).
 *
 * Every expression is written as ggml writes it, in float: C11 on SSE evaluates float expressions
 * in float (FLT_EVAL_METHOD 0), so each operation rounds to binary32 as in ggml's portable CPU
 * build. That build (libggml-cpu-x64.so) has no FMA instructions; this file is compiled with
 * -ffp-contract=off (Makefile) and the pragma below, so that no a * b + c is fused here either.
 * The transcendental functions are the C library's own powf, logf, cosf and sinf, as ggml calls
 * them (the prebuilt libraries link glibc's libm.so.6 dynamically, so both resolve to the same
 * code on one machine). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "posenc/llamacpp.h"
#include "posenc/rope.h"

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

/* ggml-impl.h */
#define GGML_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GGML_MAX(a, b) ((a) > (b) ? (a) : (b))
#define GGML_PI 3.14159265358979323846 /* M_PI */

/* ggml.c ggml_rope_yarn_corr_dim: the dimension whose wavelength fits n_rot turns of n_ctx_orig */
static float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base)
{
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)GGML_PI)) / (2 * logf(base));
}

/* ggml.c ggml_rope_yarn_corr_dims: floor / ceil, clamped to [0, n_dims - 1] (as floats) */
static void corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast,
                      float beta_slow, float dims[2])
{
    float start = floorf(corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
    float end = ceilf(corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
    dims[0] = GGML_MAX(0, start);
    dims[1] = GGML_MIN(n_dims - 1, end);
}

/* ops.cpp rope_yarn_ramp: i0 is the even dimension index 2i, (i0 / 2) an int */
static float yarn_ramp(const float low, const float high, const int i0)
{
    const float y = (i0 / 2 - low) / GGML_MAX(0.001f, high - low);
    return 1 - GGML_MIN(1, GGML_MAX(0, y));
}

/* ops.cpp rope_yarn, split in two: the angle (interpolated and extrapolated angles mixed by the
 * ramp) and the magnitude mscale, then cos and sin of the angle times mscale */
static float yarn_angle(float theta_extrap, float freq_scale, const float cd[2], int64_t i0,
                        float ext_factor)
{
    float theta_interp = freq_scale * theta_extrap;
    float theta = theta_interp;
    if (ext_factor != 0.0f) {
        float ramp_mix = yarn_ramp(cd[0], cd[1], (int)i0) * ext_factor;
        theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
    }
    return theta;
}

static float yarn_mscale(float freq_scale, float ext_factor, float mscale)
{
    if (ext_factor != 0.0f)
        mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
    return mscale;
}

static int is_mrope(posenc_ggml_mode m)
{
    return m == POSENC_GGML_ROPE_MROPE || m == POSENC_GGML_ROPE_IMROPE;
}

/* ops.cpp ggml_mrope_cache_init: which of the four accumulated angles frequency `sector` takes
 * (0..3 = t, h, w, e) */
static int mrope_axis(const int sections[4], int sector, int imrope)
{
    int sec_w = sections[1] + sections[0];
    if (imrope) { /* qwen3vl interleaved */
        if (sector % 3 == 1 && sector < 3 * sections[1])
            return 1;
        if (sector % 3 == 2 && sector < 3 * sections[2])
            return 2;
        if (sector % 3 == 0 && sector < 3 * sections[0])
            return 0;
        return 3;
    }
    if (sector >= sections[0] && sector < sec_w)
        return 1;
    if (sector >= sec_w && sector < sec_w + sections[2])
        return 2;
    if (sector >= sec_w + sections[2])
        return 3;
    return 0;
}

/* ggml_rope_cache_init / ggml_mrope_cache_init for the first n_dims / 2 frequencies: the angles
 * (angle != NULL) or cos and sin times mscale */
static void cache_init(const posenc_ggml_rope *r, const int64_t pos3[3], double *cos_f,
                       double *sin_f, double *angle)
{
    int n_dims = r->n_dims;
    if (n_dims <= 0 || n_dims / 2 > POSENC_MAX_FREQ)
        return;
    int mrope = is_mrope(r->mode), imrope = r->mode == POSENC_GGML_ROPE_IMROPE;
    int sect_dims = r->sections[0] + r->sections[1] + r->sections[2] + r->sections[3];
    if (r->mode == POSENC_GGML_ROPE_VISION || r->mode == POSENC_GGML_ROPE_NONE ||
        (mrope && sect_dims <= 0)) {
        /* a vision encoder's rope (n_dims frequencies over the whole head, sections restarted),
         * none, or M-RoPE without sections (ggml asserts one): not computed here, and never
         * passed off as numbers */
        for (int i = 0; i < n_dims / 2; i++) {
            if (angle)
                angle[i] = NAN;
            else
                cos_f[i] = sin_f[i] = NAN;
        }
        return;
    }
    const float mscale = yarn_mscale(r->freq_scale, r->ext_factor, r->attn_factor);
    /* ops.cpp ggml_compute_forward_rope_flt */
    const float theta_scale = powf(r->freq_base, -2.0f / n_dims);
    float cd[2];
    corr_dims(n_dims, r->n_ctx_orig, r->freq_base, r->beta_fast, r->beta_slow, cd);
    const float *ff = r->n_freq_factors > 0 ? r->freq_factors : NULL;
    /* the angles start at the positions (int64 -> float, as the call converts them); an M-RoPE
     * model gets t, h, w and a fourth position, 0 for text tokens (llama-graph.cpp) */
    float theta[4] = { (float)pos3[0], (float)pos3[0], (float)pos3[0], (float)pos3[0] };
    if (mrope) {
        theta[1] = (float)pos3[1];
        theta[2] = (float)pos3[2];
        theta[3] = 0.0f;
    }
    for (int64_t i0 = 0; i0 < n_dims; i0 += 2) {
        const float f = ff && i0 / 2 < r->n_freq_factors ? ff[i0 / 2] : 1.0f;
        float th = theta[0];
        if (mrope) {
            int sector = (int)((i0 / 2) % sect_dims);
            th = theta[mrope_axis(r->sections, sector, imrope)];
        }
        float ang = yarn_angle(th / f, r->freq_scale, cd, i0, r->ext_factor);
        if (angle) {
            angle[i0 / 2] = (double)ang;
        } else {
            cos_f[i0 / 2] = (double)(cosf(ang) * mscale);
            sin_f[i0 / 2] = (double)(sinf(ang) * mscale);
        }
        for (int k = 0; k < 4; k++)
            theta[k] *= theta_scale;
    }
}

void posenc_ggml_rope_cossin(const posenc_ggml_rope *r, const int64_t pos3[3], double *cos_f,
                             double *sin_f)
{
    cache_init(r, pos3, cos_f, sin_f, NULL);
}

void posenc_ggml_rope_angles(const posenc_ggml_rope *r, const int64_t pos3[3], double *angle)
{
    cache_init(r, pos3, NULL, NULL, angle);
}

double posenc_ggml_rope_mscale(const posenc_ggml_rope *r)
{
    return (double)yarn_mscale(r->freq_scale, r->ext_factor, r->attn_factor);
}

/* ---------------------------------------------------------------------------------------------
 * the ggml precision's parameters */

static int pos_finite(float v) { return isfinite(v) && v > 0.0f; }

posenc_status posenc_rope_params_set_ggml(posenc_rope_params *p, const posenc_ggml_rope *g,
                                          posenc_error *err)
{
    if (!p || !g)
        return posenc_seterr(err, POSENC_EINVAL, "no RoPE parameters given");
    if (g->mode == POSENC_GGML_ROPE_NONE)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "llama.cpp applies no RoPE to this model");
    if (g->mode != POSENC_GGML_ROPE_NORM && g->mode != POSENC_GGML_ROPE_NEOX &&
        g->mode != POSENC_GGML_ROPE_MROPE && g->mode != POSENC_GGML_ROPE_IMROPE)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "ggml rope mode %d is not a text model's (norm, neox, mrope, imrope)",
                             (int)g->mode);
    if (g->n_dims != p->rotary_dim || g->n_dims <= 0 || g->n_dims % 2)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "llama.cpp rotates %d dims where the config rotates %d", g->n_dims,
                             p->rotary_dim);
    /* the pairing in transformers' layout: NORM pairs (2i, 2i+1) of what ggml is given. For a
     * gptj config those are the config's own pairs; for a neox config they are the pairs of
     * Q/K weights the converter permuted (convert_hf_to_gguf.py LlamaModel.permute interleaves
     * the two halves of the whole head), which un-permuted are the neox pairs (i, i + d/2) --
     * when the whole head rotates. The other modes pair (i, i + n_dims/2) of what they get:
     * the config's pairs for neox, and nothing posenc knows of for gptj. */
    if (g->mode == POSENC_GGML_ROPE_NORM && p->style == POSENC_STYLE_NEOX &&
        p->rotary_dim != p->head_dim)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "llama.cpp rotates interleaved pairs and the config rotates %d of %d "
                             "dims in halves: no weight permutation maps one to the other",
                             p->rotary_dim, p->head_dim);
    if (g->mode != POSENC_GGML_ROPE_NORM && p->style == POSENC_STYLE_GPTJ)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "llama.cpp rotates halves (%s) where the config pairs neighbours "
                             "(gptj): the converter's layout of Q/K for that is not known",
                             g->mode == POSENC_GGML_ROPE_NEOX ? "neox" : "mrope");
    if (g->n_freq_factors != 0 && g->n_freq_factors != g->n_dims / 2)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "%d frequency factors for %d rotated dims (ggml needs %d)",
                             g->n_freq_factors, g->n_dims, g->n_dims / 2);
    for (int i = 0; i < g->n_freq_factors; i++)
        if (!pos_finite(g->freq_factors[i]))
            return posenc_seterr(err, POSENC_EUNSUPPORTED,
                                 "frequency factor %d is %g (ggml divides by it)", i,
                                 (double)g->freq_factors[i]);
    if (!pos_finite(g->freq_base) || !pos_finite(g->freq_scale) || !isfinite(g->ext_factor) ||
        !isfinite(g->attn_factor) || !isfinite(g->beta_fast) || !isfinite(g->beta_slow))
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "ggml_rope_ext arguments are not finite (freq_base %g, freq_scale "
                             "%g, ext_factor %g, attn_factor %g)", (double)g->freq_base,
                             (double)g->freq_scale, (double)g->ext_factor,
                             (double)g->attn_factor);
    if (is_mrope(g->mode)) {
        int64_t sum = 0;
        for (int k = 0; k < 4; k++) {
            if (g->sections[k] < 0)
                return posenc_seterr(err, POSENC_EUNSUPPORTED, "negative M-RoPE section");
            sum += g->sections[k];
        }
        if (sum <= 0 || sum > g->head_dim)
            return posenc_seterr(err, POSENC_EUNSUPPORTED,
                                 "M-RoPE sections %d %d %d %d do not fit head_dim %d",
                                 g->sections[0], g->sections[1], g->sections[2], g->sections[3],
                                 g->head_dim);
    }
    p->ggml = *g;
    p->has_ggml = 1;
    return POSENC_OK;
}
