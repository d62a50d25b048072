/* verify_profiles.c: which runtime's numerics a runtime's rotated rows match.
 *
 * Every profile posenc reproduces (exact math; transformers' float32 pipeline; vLLM's
 * cos_sin_cache, lib/runtimes/rope_vllm.c; llama.cpp's CPU numerics, lib/encodings/rope_ggml.c) is a recipe whose
 * tables a comparison pass (verify_stats.c) uses on every row: a row matches a profile when each
 * element is within the profile's own rounding of the profile's rotation (the dump dtype's
 * arithmetic, no angle allowance), so only the profile the runtime really computes fits. A
 * match explains a dump; it never excuses an element outside the verdict's bound unless the
 * whole dump is that runtime's output. The profile's drift from exact math (max |cos, sin -
 * exact| over the rows' positions) is reported beside it: it is what separates float32
 * accumulation from a bug. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/llamacpp.h"
#include "posenc/verify.h"
#include "posenc/vllm.h"
#include "lib/encodings/profile.h"
#include "lib/verify/verify_stats.h"

/* The parameters of one profile for the config (profiles.def's builder column). */
typedef posenc_status (*profile_build)(const posenc_model *m, const char *layer_type,
                                       const posenc_rope_config *cfg, posenc_precision prec,
                                       int64_t seq_len, int64_t n_ctx, posenc_rope_params *p,
                                       posenc_error *err);

/* llama.cpp: its arguments for the model, over transformers' parameters */
static posenc_status build_ggml(const posenc_model *m, const char *layer_type,
                                const posenc_rope_config *cfg, posenc_precision prec,
                                int64_t seq_len, int64_t n_ctx, posenc_rope_params *p,
                                posenc_error *err)
{
    (void)prec;
    posenc_status st = posenc_rope_params_compute(cfg, seq_len, p, err);
    return st ? st : posenc_rope_params_ggml(p, m, layer_type, n_ctx, err);
}

/* exact math and transformers: the parameters at the dumps' sequence length */
static posenc_status build_plain(const posenc_model *m, const char *layer_type,
                                 const posenc_rope_config *cfg, posenc_precision prec,
                                 int64_t seq_len, int64_t n_ctx, posenc_rope_params *p,
                                 posenc_error *err)
{
    (void)layer_type;
    (void)n_ctx; /* llama.cpp's context size matters to llama.cpp alone */
    return posenc_rope_params_for(cfg, prec, posenc_model_family(m), seq_len, 0, p, NULL, err);
}

static posenc_status build_vllm(const posenc_model *m, const char *layer_type,
                                const posenc_rope_config *cfg, posenc_precision prec,
                                int64_t seq_len, int64_t n_ctx, posenc_rope_params *p,
                                posenc_error *err)
{
    (void)layer_type;
    (void)n_ctx;
    /* vLLM served the dumps' sequence, so its max_model_len was at least seq_len (which picks
     * LongRoPE's long factors past original_max_position_embeddings); a cache shorter than the
     * sequence is a server that could not have produced the dumps */
    posenc_vllm_info vi;
    posenc_status st = posenc_rope_params_for(cfg, prec, posenc_model_family(m), seq_len,
                                              seq_len, p, &vi, err);
    if (st == POSENC_OK && seq_len > vi.cache_len)
        st = posenc_seterr(err, POSENC_ERANGE, "vllm: %s's cos_sin_cache has %lld rows, the dumps "
                           "need %lld", vi.cls, (long long)vi.cache_len, (long long)seq_len);
    return st;
}

/* The profiles, in the order a tie is decided: profiles.def's order. */
static const profile_build builders[] = {
#define PROFILE(id, build, ...) [id] = build,
#include "lib/encodings/profiles.def"
#undef PROFILE
};
_Static_assert(sizeof builders / sizeof *builders == POSENC_VERIFY_N_PROFILES,
               "one verify profile per row of profiles.def");

posenc_status posenc_verify_profiles_setup(const posenc_model *m, const char *layer_type,
                                           const posenc_rope_config *cfg, int64_t seq_len,
                                           int64_t n_ctx,
                                           posenc_verify_recipe *rec,
                                           posenc_verify_profiles_result *out,
                                           posenc_error *err)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    posenc_rope_params *exact = malloc(sizeof *exact), *p = malloc(sizeof *p);
    posenc_status st = POSENC_OK;
    if (!exact || !p) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto done;
    }
    if ((st = posenc_rope_params_compute(cfg, seq_len, exact, err)) != POSENC_OK)
        goto done;
    for (int k = 0; k < POSENC_VERIFY_N_PROFILES; k++) {
        posenc_profile_fit *f = &out->fit[out->n++];
        f->prec = pe_profiles[k].prec;
        f->runtime = pe_profiles[k].runtime;
        posenc_error e2 = { 0 };
        if (builders[k](m, layer_type, cfg, f->prec, seq_len, n_ctx ? n_ctx : seq_len, p,
                        &e2) != POSENC_OK ||
            p->head_dim != exact->head_dim || p->n_freq != exact->n_freq) {
            snprintf(f->why, sizeof f->why, "%.199s", e2.msg[0] ? e2.msg : "not comparable");
            continue;
        }
        posenc_verify_recipe_init(&rec[k], p);
        rec[k].prec = f->prec;
        f->available = 1;
    }
done:
    free(exact);
    free(p);
    return st;
}

void posenc_verify_profiles_explain(posenc_verify_profiles_result *out, const char *what,
                                    posenc_dtype dt)
{
    out->best = -1;
    char same[200] = "";
    int nmatch = 0;
    for (int k = 0; k < out->n; k++) {
        posenc_profile_fit *f = &out->fit[k];
        f->matches = f->available && f->elements_failed == 0;
        if (!f->matches)
            continue;
        size_t l = strlen(same);
        snprintf(same + l, sizeof same - l, "%s%s", nmatch ? ", " : "",
                 posenc_precision_name(f->prec));
        nmatch++;
        if (out->best < 0 || f->max_abs_err < out->fit[out->best].max_abs_err)
            out->best = k;
    }
    char undecided[300] = "";
    if (nmatch > 1)
        snprintf(undecided, sizeof undecided, "; in %s the profiles %s all match: the dtype "
                 "cannot tell them apart", posenc_dtype_name(dt), same);
    if (out->best >= 0) {
        const posenc_profile_fit *b = &out->fit[out->best];
        char how[64];
        if (b->max_abs_err == 0)
            snprintf(how, sizeof how, "bit for bit");
        else
            snprintf(how, sizeof how, "element for element (max rel err %.2g)", b->max_rel_err);
        int k = out->best;
        if (b->prec == POSENC_PREC_EXACT) /* the reference itself: no drift to explain */
            snprintf(out->explanation, sizeof out->explanation, "%s matches exact math %s%s",
                     what, how, undecided);
        else
            snprintf(out->explanation, sizeof out->explanation,
                     "%s matches the %s profile (%s) %s; it drifts from exact math by %.2g at "
                     "position %lld, which is %s, not a bug%s",
                     what, posenc_precision_name(b->prec), pe_profiles[k].runtime, how, b->drift,
                     (long long)b->drift_pos, pe_profiles[k].drift, undecided);
    } else {
        /* only the profiles tried; a runtime without rules for the config is said to be so */
        char tried[64] = "", none[200] = "";
        for (int k = 0; k < out->n; k++) {
            const posenc_profile_fit *f = &out->fit[k];
            char *d = f->available ? tried : none;
            size_t dl = f->available ? sizeof tried : sizeof none, l = strlen(d);
            snprintf(d + l, dl - l, "%s%s", l ? ", " : "",
                     f->available ? posenc_precision_name(f->prec) : f->runtime);
        }
        snprintf(out->explanation, sizeof out->explanation,
                 "%s matches no runtime profile (%s) element for element%s%s%s", what,
                 tried[0] ? tried : "none available", none[0] ? "; posenc has no rules of " : "",
                 none, none[0] ? " for this config" : "");
    }
}

/* ---- the layer a pair of a multi-layer dump was rotated as ---- */

size_t pe_verify_layer_alternatives(const posenc_model *m, const char *layer_type, int nope,
                                    int head_dim, pe_layer_alt *out, size_t cap)
{
    size_t nt = posenc_model_layer_type_count(m), n = 0, last = nt ? nt : 1;
    /* i < nt (or i == 0 with one set): rotate with that set; the last: do not rotate */
    for (size_t i = 0; i <= last && n < cap; i++) {
        int no = i == last;
        const char *lt = no || !nt ? NULL : posenc_model_layer_type_name(m, i);
        if (no == nope && (no || !nt || (layer_type && strcmp(lt, layer_type) == 0)))
            continue; /* what was checked */
        pe_layer_alt *a = &out[n];
        /* a NoPE candidate takes the first set's head_dim: only that matters unrotated */
        a->layer_type = no && nt ? posenc_model_layer_type_name(m, 0) : lt;
        if (posenc_model_rope(m, a->layer_type, &a->cfg, NULL) != POSENC_OK ||
            a->cfg.head_dim != head_dim)
            continue;
        a->nope = no;
        if (no)
            snprintf(a->what, sizeof a->what, "not rotated");
        else if (lt)
            snprintf(a->what, sizeof a->what, "rotated with layer type '%s'", lt);
        else
            snprintf(a->what, sizeof a->what, "rotated with the config's RoPE");
        n++;
    }
    return n;
}

int pe_verify_layer_explanation(const char *found_q, const char *found_k, int nope,
                                int64_t layer, const char *layer_type, char *text, size_t tlen,
                                char *said, size_t slen)
{
    if (nope)
        snprintf(said, slen, "layer %lld has no RoPE", (long long)layer);
    else if (layer_type)
        snprintf(said, slen, "layer %lld is %s", (long long)layer, layer_type);
    else
        snprintf(said, slen, "the config rotates it");
    if (found_q[0] && found_k[0] && strcmp(found_q, found_k) == 0)
        snprintf(text, tlen, "q and k match when %s", found_q);
    else if (found_q[0] || found_k[0])
        snprintf(text, tlen, "%s%s%s%s%s", found_q[0] ? "q matches when " : "", found_q,
                 found_q[0] && found_k[0] ? ", " : "", found_k[0] ? "k matches when " : "",
                 found_k);
    else
        return 0;
    return 1;
}
