/* llamacpp_check.c: a GGUF file's RoPE against what the converter writes (posenc_gguf_compare).
 *
 * Both sides go through posenc_ggml_rope_from_gguf, so a key counts as wrong only when llama.cpp
 * computes something different from it (a key left out whose llama.cpp default equals the
 * converter's value is fine); each ggml_rope_ext argument is blamed on the key that feeds it.
 * The factor tensors are compared whole, both LongRoPE halves whatever the context. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/model/llama_arch.h"
#include "posenc/llamacpp.h"

#if defined(__GNUC__)
__attribute__((format(printf, 7, 8)))
#endif
static void add(posenc_gguf_check *c, const char *arch, const char *suffix, const char *what,
                const char *expected, const char *found, const char *fmt, ...)
{
    if (c->n >= POSENC_GGUF_MAX_FINDINGS)
        return;
    posenc_gguf_finding *f = &c->f[c->n++];
    memset(f, 0, sizeof *f);
    if (arch)
        snprintf(f->key, sizeof f->key, "%s.%s", arch, suffix);
    else
        snprintf(f->key, sizeof f->key, "%s", suffix);
    snprintf(f->what, sizeof f->what, "%s", what);
    snprintf(f->expected, sizeof f->expected, "%s", expected);
    snprintf(f->found, sizeof f->found, "%s", found);
    f->ok = fmt == NULL;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->consequence, sizeof f->consequence, fmt, ap);
        va_end(ap);
        c->n_failed++;
    }
}

static const char *pairs_of(posenc_ggml_mode m)
{
    switch (m) {
    case POSENC_GGML_ROPE_NORM: return "pairs (2i, 2i+1)";
    case POSENC_GGML_ROPE_NEOX: return "pairs (i, i+n/2)";
    case POSENC_GGML_ROPE_MROPE: return "multimodal sections, pairs (i, i+n/2)";
    case POSENC_GGML_ROPE_IMROPE: return "interleaved multimodal sections, pairs (i, i+n/2)";
    case POSENC_GGML_ROPE_VISION: return "vision sections";
    case POSENC_GGML_ROPE_NONE: return "no rotation";
    }
    return "?";
}

static void fmt_f(char *b, size_t n, double v)
{
    snprintf(b, n, "%.9g", v);
}

/* float32 vectors: "" when equal, else where they first differ */
static int vec_diff(const float *a, int na, const float *b, int nb, char *why, size_t n)
{
    if (na != nb) {
        snprintf(why, n, "%d values instead of %d", nb, na);
        return 1;
    }
    for (int i = 0; i < na; i++)
        if (a[i] != b[i] && !(isnan(a[i]) && isnan(b[i]))) {
            snprintf(why, n, "value %d is %.9g instead of %.9g", i, (double)b[i], (double)a[i]);
            return 1;
        }
    return 0;
}

static void vec_text(char *b, size_t n, const float *v, int k)
{
    if (k == 0)
        snprintf(b, n, "absent");
    else
        snprintf(b, n, "%d F32 values [%.7g, %.7g, ..., %.7g]", k, (double)v[0],
                 (double)(k > 1 ? v[1] : v[0]), (double)v[k - 1]);
}

static void tensors(posenc_gguf_check *c, const posenc_gguf_rope *w, const posenc_gguf_rope *h,
                    int64_t orig)
{
    char e[160], f[160], why[120];
    char past[64] = "past the original context";
    if (orig > 0)
        snprintf(past, sizeof past, "past %lld tokens", (long long)orig);
    vec_text(e, sizeof e, w->rope_freqs, w->n_rope_freqs);
    vec_text(f, sizeof f, h->rope_freqs, h->n_rope_freqs);
    if (!vec_diff(w->rope_freqs, w->n_rope_freqs, h->rope_freqs, h->n_rope_freqs, why, sizeof why))
        add(c, NULL, "rope_freqs.weight", "freq_factors", e, f, NULL);
    else if (h->n_rope_freqs == 0)
        add(c, NULL, "rope_freqs.weight", "freq_factors", e, f,
            "no rope_freqs.weight: llama.cpp will not apply llama3 scaling; output degrades %s",
            past);
    else if (w->n_rope_freqs == 0)
        add(c, NULL, "rope_freqs.weight", "freq_factors", e, f,
            "llama.cpp divides the frequencies by rope_freqs.weight although the converter "
            "writes none for this config: every position > 0 rotates wrongly");
    else
        add(c, NULL, "rope_freqs.weight", "freq_factors", e, f,
            "rope_freqs.weight differs (%s): llama.cpp scales those frequencies wrongly", why);

    int swapped = w->n_factors_long > 0 &&
                  !vec_diff(w->factors_long, w->n_factors_long, h->factors_short,
                            h->n_factors_short, why, sizeof why) &&
                  !vec_diff(w->factors_short, w->n_factors_short, h->factors_long,
                            h->n_factors_long, why, sizeof why) &&
                  vec_diff(w->factors_long, w->n_factors_long, w->factors_short,
                           w->n_factors_short, why, sizeof why);
    static const char *const names[2] = { "rope_factors_long.weight", "rope_factors_short.weight" };
    for (int k = 0; k < 2; k++) {
        const float *wv = k ? w->factors_short : w->factors_long;
        const float *hv = k ? h->factors_short : h->factors_long;
        int wn = k ? w->n_factors_short : w->n_factors_long;
        int hn = k ? h->n_factors_short : h->n_factors_long;
        vec_text(e, sizeof e, wv, wn);
        vec_text(f, sizeof f, hv, hn);
        if (!vec_diff(wv, wn, hv, hn, why, sizeof why))
            add(c, NULL, names[k], "freq_factors", e, f, NULL);
        else if (swapped)
            add(c, NULL, names[k], "freq_factors", e, f,
                "rope_factors_long and rope_factors_short are swapped: llama.cpp uses the short "
                "factors %s and the long ones below it", past);
        else if (hn == 0)
            add(c, NULL, names[k], "freq_factors", e, f,
                "no %s: llama.cpp applies no LongRoPE factors %s the original context",
                names[k], k ? "within" : "past");
        else
            add(c, NULL, names[k], "freq_factors", e, f,
                "%s differs (%s): LongRoPE frequencies %s the original context are wrong",
                names[k], wn ? why : "the converter writes none", k ? "within" : "past");
    }
}

/* "full: 3, 7, 11 (of 48 layers)": the layers that are not sliding, as much as fits */
/* 1 when llama.cpp ropes layer 0 of a file holding g, by posenc_ggml_nope_layers' rules (the
 * whole-file switches: granite's rope.scaling.finetuned, baichuan's layer count) */
static int ropes_layer0(const posenc_gguf_rope *g)
{
    uint8_t nope = 0; /* left alone where no rule applies */
    posenc_ggml_nope_layers(g, 1, &nope);
    return !nope;
}

static void layers_text(char *b, size_t n, const uint8_t *s, int nl)
{
    size_t l = (size_t)snprintf(b, n, "full:");
    int k = 0;
    for (int i = 0; i < nl && l + 24 < n; i++)
        if (!s[i])
            l += (size_t)snprintf(b + l, n - l, "%s %d", k++ ? "," : "", i);
    if (l + 24 >= n)
        l += (size_t)snprintf(b + l, n - l, ", ...");
    snprintf(b + l, n - l, "%s (of %d layers)", k ? "" : " none", nl);
}

/* The tables themselves: cos and sin of every frequency by ggml's numerics (rope_ggml.c) from
 * both sides' arguments, at positions 0-63 and the powers of two up to the context, and its last
 * position. Any argument that changes what llama.cpp computes shows here as a number. */
static void tables(posenc_gguf_check *c, const posenc_ggml_rope *W, const posenc_ggml_rope *H,
                   int64_t ctx)
{
    static const char *what = "cos/sin (ggml numerics)";
    char e[160], f[160];
    if (W->n_dims != H->n_dims || W->n_dims < 2 || W->mode == POSENC_GGML_ROPE_NONE ||
        W->mode == POSENC_GGML_ROPE_VISION || H->mode == POSENC_GGML_ROPE_NONE ||
        H->mode == POSENC_GGML_ROPE_VISION) {
        add(c, NULL, what, "tables", "comparable tables", "not compared",
            "%s", W->n_dims != H->n_dims ? "the rotated dims differ (above), so the tables are "
                                           "not comparable frequency by frequency"
                  : W->n_dims < 2            ? "fewer than 2 rotated dims: there is no frequency "
                                               "to compare"
                                             : "ggml's numerics are not computed for this rope mode");
        return;
    }
    if (ctx <= 0)
        ctx = 131072;
    int nf = W->n_dims / 2;
    double wc[POSENC_MAX_FREQ], ws[POSENC_MAX_FREQ], hc[POSENC_MAX_FREQ], hs[POSENC_MAX_FREQ];
    int64_t pos[64 + 64 + 1];
    int npos = 0;
    for (int64_t p = 0; p < ctx && p < 64; p++)
        pos[npos++] = p;
    for (int64_t p = 64; p < ctx - 1; p *= 2)
        pos[npos++] = p;
    if (ctx - 1 >= 64)
        pos[npos++] = ctx - 1;
    double worst = 0; /* NaN on either side counts as infinitely far */
    int64_t worst_pos = 0;
    int worst_i = 0;
    for (int k = 0; k < npos; k++) {
        int64_t p3[3] = { pos[k], pos[k], pos[k] };
        posenc_ggml_rope_cossin(W, p3, wc, ws);
        posenc_ggml_rope_cossin(H, p3, hc, hs);
        for (int i = 0; i < nf; i++) {
            double d = fmax(fabs(wc[i] - hc[i]), fabs(ws[i] - hs[i]));
            if (isnan(d))
                d = INFINITY;
            if (d > worst) {
                worst = d;
                worst_pos = pos[k];
                worst_i = i;
            }
        }
    }
    snprintf(e, sizeof e, "the converter's tables at %lld positions to %lld", (long long)npos,
             (long long)(ctx - 1));
    if (worst == 0) {
        add(c, NULL, what, "tables", e, "equal (0 difference)", NULL);
        return;
    }
    snprintf(f, sizeof f, "max |difference| %.3g (position %lld, frequency %d)", worst,
             (long long)worst_pos, worst_i);
    add(c, NULL, what, "tables", e, f,
        "llama.cpp's cos and sin from this file differ from the config's by up to %.3g (position "
        "%lld, frequency %d of %d)", worst, (long long)worst_pos, worst_i, nf);
}

posenc_status posenc_gguf_compare(const posenc_gguf_rope *want, const posenc_gguf_rope *have,
                                  int64_t orig_ctx, posenc_gguf_check *out, posenc_error *err)
{
    return posenc_gguf_compare_layer(want, have, orig_ctx, NULL, out, err);
}

posenc_status posenc_gguf_compare_layer(const posenc_gguf_rope *want, const posenc_gguf_rope *have,
                                        int64_t orig_ctx, const char *layer_type,
                                        posenc_gguf_check *out, posenc_error *err)
{
    memset(out, 0, sizeof *out);
    posenc_ggml_rope W, H;
    posenc_status st = posenc_ggml_rope_from_gguf(want, 0, &W, err);
    if (st != POSENC_OK)
        return st;
    const char *A = have->arch; /* the keys are named as the file holds them */
    char e[160], f[160];
    posenc_ggml_arch wa, ha;
    posenc_ggml_arch_info(want->arch, &wa);
    posenc_ggml_arch_info(have->arch, &ha);
    snprintf(e, sizeof e, "%s (rope mode %s)", want->arch, posenc_ggml_mode_name(W.mode));
    if (strcmp(want->arch, have->arch) == 0)
        add(out, NULL, "general.architecture", "mode", e, e, NULL);
    else {
        snprintf(f, sizeof f, "%s (rope mode %s)", have->arch,
                 ha.known ? posenc_ggml_mode_name(ha.mode) : "unknown");
        if (!ha.known)
            add(out, NULL, "general.architecture", "mode", e, f,
                "llama.cpp has no architecture '%s' and refuses the file", have->arch);
        else if (ha.mode != W.mode)
            add(out, NULL, "general.architecture", "mode", e, f,
                "llama.cpp rotates %s (%s) instead of %s (%s): the rotation is wrong at every "
                "position > 0",
                pairs_of(ha.mode), posenc_ggml_mode_name(ha.mode), pairs_of(W.mode),
                posenc_ggml_mode_name(W.mode));
        else
            add(out, NULL, "general.architecture", "mode", e, f,
                "llama.cpp builds the %s graph, not %s, and reads its keys under '%s.'",
                have->arch, want->arch, have->arch);
    }
    /* the file as llama.cpp derives it, at the converter's context length */
    st = posenc_ggml_rope_from_gguf(have, want->context_length, &H, err);
    if (st != POSENC_OK) {
        add(out, NULL, "(load)", "load", "llama.cpp loads the file", "refused", "%s", err->msg);
        return POSENC_OK;
    }
    /* one finding per ggml_rope_ext argument, named by the key that feeds it */
#define CMPI(field, suffix, what, ...)                                                   \
    do {                                                                                 \
        snprintf(e, sizeof e, "%lld", (long long)W.field);                              \
        snprintf(f, sizeof f, "%lld", (long long)H.field);                              \
        if (W.field == H.field)                                                          \
            add(out, A, suffix, what, e, f, NULL);                                       \
        else                                                                             \
            add(out, A, suffix, what, e, f, __VA_ARGS__);                                \
    } while (0)
#define CMPF(field, suffix, what, ...)                                                   \
    do {                                                                                 \
        fmt_f(e, sizeof e, (double)W.field);                                             \
        fmt_f(f, sizeof f, (double)H.field);                                             \
        if (W.field == H.field)                                                          \
            add(out, A, suffix, what, e, f, NULL);                                       \
        else                                                                             \
            add(out, A, suffix, what, e, f, __VA_ARGS__);                                \
    } while (0)
    snprintf(e, sizeof e, "%lld", (long long)want->context_length);
    snprintf(f, sizeof f, "%lld", (long long)have->context_length);
    if (want->context_length == have->context_length)
        add(out, A, "context_length", "n_ctx_train", e, f, NULL);
    else
        add(out, A, "context_length", "n_ctx_train", e, f,
            "llama.cpp's default context is %lld tokens instead of %lld (and YaRN's original "
            "context when the file names none)",
            (long long)have->context_length, (long long)want->context_length);
    CMPI(head_dim, "attention.key_length", "head_dim",
         "llama.cpp takes heads of %d values instead of %d: Q and K split into heads wrongly",
         H.head_dim, W.head_dim);
    CMPI(n_dims, "rope.dimension_count", "n_dims",
         "llama.cpp rotates %d dims of each head instead of %d: the rotation is wrong at every "
         "position > 0",
         H.n_dims, W.n_dims);
    /* the base is blamed on rope.scaling.alpha where that differs (hunyuan-vl.cpp folds it
     * into the base) */
    const char *base_key = ((want->has ^ have->has) & POSENC_GGUF_SCALING_ALPHA) ||
                                   ((want->has & POSENC_GGUF_SCALING_ALPHA) &&
                                    want->scaling_alpha != have->scaling_alpha)
                               ? "rope.scaling.alpha"
                               : "rope.freq_base";
    CMPF(freq_base, base_key, "freq_base",
         "llama.cpp uses theta %g instead of %g: every frequency but the first is wrong, so "
         "attention drifts from the first positions on and long prompts degrade",
         (double)H.freq_base, (double)W.freq_base);
    const pe_arch_row *wrow = pe_llama_arch(want->arch);
    if (wrow && wrow->swa && strcmp(want->arch, have->arch) == 0) {
        /* the sliding layers' own base (src/models/gemma3.cpp): rope.freq_base_swa when the
         * file has a sliding window, else every layer is global */
        posenc_ggml_rope WS, HS;
        if (posenc_ggml_rope_from_gguf_layer(want, 0, "sliding_attention", &WS, err) ==
                POSENC_OK &&
            posenc_ggml_rope_from_gguf_layer(have, want->context_length, "sliding_attention",
                                             &HS, err) == POSENC_OK) {
            int nowin = !(have->has & POSENC_GGUF_SLIDING_WINDOW) || have->sliding_window <= 0;
            const char *key = nowin && !(want->has & POSENC_GGUF_SLIDING_WINDOW) ? "rope.freq_base_swa"
                              : nowin ? "attention.sliding_window"
                                      : "rope.freq_base_swa";
            fmt_f(e, sizeof e, (double)WS.freq_base);
            fmt_f(f, sizeof f, (double)HS.freq_base);
            if (WS.freq_base == HS.freq_base && WS.freq_scale == HS.freq_scale)
                add(out, A, key, "freq_base (sliding layers)", e, f, NULL);
            else
                add(out, A, key, "freq_base (sliding layers)", e, f,
                    "llama.cpp runs the sliding-window layers with theta %g and freq_scale %g "
                    "instead of %g and %g%s",
                    (double)HS.freq_base, (double)HS.freq_scale, (double)WS.freq_base,
                    (double)WS.freq_scale,
                    nowin ? ": without a sliding window every layer is global" : "");
        }
    }
    /* the file's layers, for the per-layer checks below (0: no block_count) */
    int nl = !(have->has & POSENC_GGUF_BLOCK_COUNT) || have->block_count <= 0 ? 0
             : have->block_count > POSENC_GGUF_MAX_LAYERS ? POSENC_GGUF_MAX_LAYERS
                                                          : (int)have->block_count;
    int same_arch = strcmp(want->arch, have->arch) == 0;
    if (wrow && wrow->swa && same_arch && nl) {
        /* which layers are sliding (llama_hparams::is_swa): the pattern key as the loader
         * reads it, over the file's layers */
        uint8_t ws[POSENC_GGUF_MAX_LAYERS], hs[POSENC_GGUF_MAX_LAYERS];
        posenc_ggml_swa_layers(want, nl, ws);
        posenc_ggml_swa_layers(have, nl, hs);
        layers_text(e, sizeof e, ws, nl);
        layers_text(f, sizeof f, hs, nl);
        int first = -1, nd = 0;
        for (int i = 0; i < nl; i++)
            if (ws[i] != hs[i]) {
                nd++;
                if (first < 0)
                    first = i;
            }
        /* exaone4.cpp: the layer count itself decides whether there are sliding layers;
         * afmoe.cpp: the window */
        int wwin = (want->has & POSENC_GGUF_SLIDING_WINDOW) && want->sliding_window > 0;
        int hwin = (have->has & POSENC_GGUF_SLIDING_WINDOW) && have->sliding_window > 0;
        const char *pkey = wrow->swa_n_layer > 0 && want->block_count != have->block_count
                               ? "block_count"
                           : wrow->swa_window && wwin != hwin ? "attention.sliding_window"
                                                              : "attention.sliding_window_pattern";
        if (!nd)
            add(out, A, pkey, "sliding layers", e, f, NULL);
        else
            add(out, A, pkey, "sliding layers", e, f,
                "llama.cpp runs %d layer(s) with the other layer type's RoPE and attention "
                "(the first: layer %d as %s)", nd, first,
                hs[first] ? "sliding-window" : "global");
    }
    if (wrow && wrow->nope == NOPE_GLOBAL_DENSE && same_arch && nl) {
        /* cohere2moe.cpp: the leading dense layers are rotated whatever their type */
        uint8_t wn[POSENC_GGUF_MAX_LAYERS], hn[POSENC_GGUF_MAX_LAYERS];
        posenc_ggml_nope_layers(want, nl, wn);
        posenc_ggml_nope_layers(have, nl, hn);
        snprintf(e, sizeof e, "%lld", (long long)want->dense_lead);
        snprintf(f, sizeof f, "%lld", (long long)have->dense_lead);
        int nd = 0, first = -1;
        for (int i = 0; i < nl; i++)
            if (wn[i] != hn[i] && nd++ == 0)
                first = i;
        if (!nd || want->dense_lead == have->dense_lead)
            add(out, A, "leading_dense_block_count", "rotated layers", e, f, NULL);
        else
            add(out, A, "leading_dense_block_count", "rotated layers", e, f,
                "llama.cpp %s %d layer(s) the converter's file %s (the first: layer %d; "
                "src/models/cohere2moe.cpp ropes the first leading_dense_block_count layers)",
                hn[first] ? "leaves without RoPE" : "rotates", nd,
                hn[first] ? "rotates" : "leaves without RoPE", first);
    }
    if (wrow && wrow->rope_switch && same_arch) {
        /* granite.cpp, granite-hybrid.cpp: RoPE only while rope.scaling.finetuned is true */
        int wr = ropes_layer0(want), hr = ropes_layer0(have);
        snprintf(e, sizeof e, "%s", wr ? "true (RoPE)" : "false (no RoPE)");
        snprintf(f, sizeof f, "%s%s", hr ? "true (RoPE)" : "false (no RoPE)",
                 have->has & POSENC_GGUF_ROPE_FINETUNED ? "" : ", absent");
        if (wr == hr)
            add(out, A, "rope.scaling.finetuned", "rotated layers", e, f, NULL);
        else
            add(out, A, "rope.scaling.finetuned", "rotated layers", e, f,
                "llama.cpp %s (src/models/granite.cpp, granite-hybrid.cpp: "
                "rope.scaling.finetuned switches RoPE for every layer)",
                hr ? "rotates layers the converter's file leaves without RoPE"
                   : "applies no RoPE to any layer");
    }
    if (wrow && wrow->rope_n_layer > 0 && same_arch) {
        /* baichuan.cpp: whether the graph ropes at all is the layer count's */
        int wr = ropes_layer0(want), hr = ropes_layer0(have);
        snprintf(e, sizeof e, "%lld (%s)", (long long)want->block_count,
                 wr ? "every layer rotated" : "no RoPE");
        snprintf(f, sizeof f, "%lld (%s)", (long long)have->block_count,
                 hr ? "every layer rotated" : "no RoPE");
        if (wr == hr)
            add(out, A, "block_count", "rotated layers", e, f, NULL);
        else
            add(out, A, "block_count", "rotated layers", e, f,
                "llama.cpp %s (src/models/%s.cpp ropes only files of %d layers)",
                hr ? "rotates layers the converter's file leaves without RoPE"
                   : "applies no RoPE to any layer",
                have->arch, wrow->rope_n_layer);
    }
    snprintf(e, sizeof e, "factor %.9g (freq_scale %.9g)", 1.0 / W.freq_scale, (double)W.freq_scale);
    snprintf(f, sizeof f, "factor %.9g (freq_scale %.9g)", 1.0 / H.freq_scale, (double)H.freq_scale);
    if (W.freq_scale == H.freq_scale)
        add(out, A, "rope.scaling.factor", "freq_scale", e, f, NULL);
    else
        add(out, A, "rope.scaling.factor", "freq_scale", e, f,
         "llama.cpp scales positions by %g instead of %g (scaling factor %g instead of %g)",
         (double)H.freq_scale, (double)W.freq_scale, 1.0 / H.freq_scale, 1.0 / W.freq_scale);
    snprintf(e, sizeof e, "%s (ext_factor %g)",
             want->has & POSENC_GGUF_SCALING_TYPE ? want->scaling_type : "absent", (double)W.ext_factor);
    snprintf(f, sizeof f, "%s (ext_factor %g)",
             have->has & POSENC_GGUF_SCALING_TYPE ? have->scaling_type : "absent", (double)H.ext_factor);
    if (W.ext_factor == H.ext_factor)
        add(out, A, "rope.scaling.type", "ext_factor", e, f, NULL);
    else
        add(out, A, "rope.scaling.type", "ext_factor", e, f,
         "YaRN's ramp is %s (ext_factor %g instead of %g): frequencies are %s",
         H.ext_factor != 0 ? "on" : "off", (double)H.ext_factor, (double)W.ext_factor,
         H.ext_factor != 0 ? "extrapolated where the model interpolates"
                           : "interpolated uniformly, not by YaRN");
    if (W.ext_factor != 0 || H.ext_factor != 0) {
        CMPI(n_ctx_orig, "rope.scaling.original_context_length", "n_ctx_orig",
             "YaRN's correction dims come from a context of %d instead of %d: the ramp between "
             "interpolated and extrapolated dims moves",
             H.n_ctx_orig, W.n_ctx_orig);
        CMPF(beta_fast, "rope.scaling.yarn_beta_fast", "beta_fast",
             "YaRN's ramp starts at beta_fast %g instead of %g", (double)H.beta_fast,
             (double)W.beta_fast);
        CMPF(beta_slow, "rope.scaling.yarn_beta_slow", "beta_slow",
             "YaRN's ramp ends at beta_slow %g instead of %g", (double)H.beta_slow,
             (double)W.beta_slow);
    }
    else if (want->n_factors_long > 0 || have->n_factors_long > 0)
        /* LongRoPE: src/llama-model.cpp llama_model::get_rope_factors takes rope_factors_long
         * when n_ctx_seq > n_ctx_orig_yarn (rope.scaling.original_context_length, else
         * context_length), rope_factors_short otherwise */
        CMPI(n_ctx_orig, "rope.scaling.original_context_length", "n_ctx_orig",
             "llama.cpp switches from the short to the long factors past a context of %d "
             "tokens instead of %d: a context between the two is rotated with the wrong "
             "factors",
             H.n_ctx_orig, W.n_ctx_orig);
    const char *kq_key = NULL;
    {
        /* attn_factor: blame the first attention key that differs */
        static const struct { const char *suffix; unsigned bit; size_t off; } ak[] = {
            { "rope.scaling.yarn_log_multiplier", POSENC_GGUF_YARN_LOG_MUL,
              offsetof(posenc_gguf_rope, yarn_log_multiplier) },
            { "rope.scaling.attn_factor", POSENC_GGUF_ATTN_FACTOR,
              offsetof(posenc_gguf_rope, attn_factor) },
            { "rope.scaling.yarn_attn_factor", POSENC_GGUF_YARN_ATTN_FACTOR,
              offsetof(posenc_gguf_rope, yarn_attn_factor) },
        };
        const char *suffix = NULL;
        for (size_t i = 0; !suffix && i < sizeof ak / sizeof *ak; i++) {
            double wv = *(const double *)(const void *)((const char *)want + ak[i].off);
            double hv = *(const double *)(const void *)((const char *)have + ak[i].off);
            if ((want->has & ak[i].bit) != (have->has & ak[i].bit) || wv != hv)
                suffix = ak[i].suffix;
        }
        for (size_t i = 0; !suffix && i < sizeof ak / sizeof *ak; i++)
            if (want->has & ak[i].bit)
                suffix = ak[i].suffix;
        if (!suffix)
            suffix = "rope.scaling.attn_factor";
        double ratio = W.attn_factor != 0 ? (double)H.attn_factor / W.attn_factor : 0;
        kq_key = suffix;
        CMPF(attn_factor, suffix, "attn_factor",
             "llama.cpp scales cos and sin by %.7g instead of %.7g: attention logits are off by "
             "a factor %.5g, the softmax too %s",
             (double)H.attn_factor, (double)W.attn_factor, ratio * ratio,
             ratio > 1 ? "sharp" : "flat");
    }
    if (W.kq_scale != 0 && H.kq_scale != 0) {
        /* the graph's softmax scale (DeepSeek: from yarn_log_multiplier and key_length_mla) */
        fmt_f(e, sizeof e, W.kq_scale);
        fmt_f(f, sizeof f, H.kq_scale);
        /* blamed on what it is computed from: the head size, n_rot, the attention keys,
         * key_length_mla */
        int attn_differs = ((want->has ^ have->has) & (POSENC_GGUF_YARN_LOG_MUL |
                                                       POSENC_GGUF_ATTN_FACTOR |
                                                       POSENC_GGUF_YARN_ATTN_FACTOR)) ||
                           want->yarn_log_multiplier != have->yarn_log_multiplier ||
                           want->attn_factor != have->attn_factor ||
                           want->yarn_attn_factor != have->yarn_attn_factor;
        if (W.head_dim != H.head_dim)
            kq_key = "attention.key_length";
        else if (W.n_dims != H.n_dims)
            kq_key = "rope.dimension_count";
        else if (attn_differs)
            ; /* kq_key: the attention key found above */
        else if (want->key_length_mla != have->key_length_mla)
            kq_key = "attention.key_length_mla";
        else
            kq_key = NULL;
        if (W.kq_scale == H.kq_scale)
            add(out, kq_key ? A : NULL, kq_key ? kq_key : "softmax scale (graph)", "kq_scale", e,
                f, NULL);
        else
            add(out, kq_key ? A : NULL, kq_key ? kq_key : "softmax scale (graph)", "kq_scale", e,
                f,
                "llama.cpp's softmax scale is %.7g instead of %.7g: attention is %s", H.kq_scale,
                W.kq_scale, H.kq_scale > W.kq_scale ? "too sharp" : "too flat");
    }
    snprintf(e, sizeof e, "[%d, %d, %d, %d]", W.sections[0], W.sections[1], W.sections[2],
             W.sections[3]);
    snprintf(f, sizeof f, "[%d, %d, %d, %d]", H.sections[0], H.sections[1], H.sections[2],
             H.sections[3]);
    if (memcmp(W.sections, H.sections, sizeof W.sections) == 0)
        add(out, A, "rope.dimension_sections", "sections", e, f, NULL);
    else
        add(out, A, "rope.dimension_sections", "sections", e, f,
            "llama.cpp splits the rotated dims into sections %s instead of %s (rope mode %s): "
            "image and video positions rotate the wrong dims; text, whose three position axes "
            "agree, is affected only when the mode changes",
            f, e, posenc_ggml_mode_name(H.mode));
#undef CMPI
#undef CMPF
    tensors(out, want, have, orig_ctx);
    if (layer_type) {
        /* the tables of that layer type, as llama.cpp runs it (both sides' own rules) */
        posenc_ggml_rope WL, HL;
        posenc_error le;
        if (posenc_ggml_rope_from_gguf_layer(want, 0, layer_type, &WL, &le) != POSENC_OK) {
            if (le.code == POSENC_EUNSUPPORTED) {
                add(out, NULL, "cos/sin (ggml numerics)", "tables", "no RoPE", "not compared",
                    NULL);
                return POSENC_OK;
            }
            return posenc_seterr(err, le.code, "%s", le.msg);
        }
        if (posenc_ggml_rope_from_gguf_layer(have, want->context_length, layer_type, &HL, &le) !=
            POSENC_OK) {
            add(out, NULL, "cos/sin (ggml numerics)", "tables", "llama.cpp loads the file",
                "refused", "%s", le.msg);
            return POSENC_OK;
        }
        tables(out, &WL, &HL, want->context_length);
        return POSENC_OK;
    }
    tables(out, &W, &H, want->context_length);
    return POSENC_OK;
}
