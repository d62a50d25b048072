/* verify_profiles.c: which runtime's numerics a runtime's rotated rows match.
 *
 * Every profile posenc reproduces (exact math; transformers' float32 pipeline; vLLM's
 * cos_sin_cache, lib/rope_vllm.c; llama.cpp's CPU numerics, lib/rope_ggml.c) rotates the sampled
 * pre-RoPE rows, and each is compared with the runtime's rows under a strict tolerance (the
 * dump dtype's, no angle allowance), so only the profile the runtime really computes fits; a
 * dump that matches a profile is a correct output of that runtime, however far the profile
 * itself drifts from exact math at those positions. That drift (max |cos, sin - exact| over the
 * rows' positions) is reported beside it: it is what separates float32 accumulation from a bug. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/verify.h"
#include "posenc/vllm.h"
#include "verify_stats.h"

/* The profiles, in the order a tie is decided. */
static const struct {
    posenc_precision prec;
    const char *runtime;     /* who computes it */
    const char *drift_cause; /* what its drift from exact math is */
} profiles[POSENC_VERIFY_N_PROFILES] = {
    { POSENC_PREC_EXACT, "exact math", "none: the exact values" },
    { POSENC_PREC_HF, "transformers", "transformers' float32 pipeline" },
    { POSENC_PREC_VLLM, "vLLM", "vLLM's float32 cos_sin_cache" },
    { POSENC_PREC_GGML, "llama.cpp",
      "llama.cpp's own numerics (float32 angle accumulation; YaRN's correction range always "
      "rounded)" },
};

static posenc_status params_of(const posenc_model *m, const char *layer_type,
                               const posenc_rope_config *cfg, posenc_precision prec,
                               int64_t seq_len, posenc_rope_params *p, posenc_error *err)
{
    if (prec == POSENC_PREC_GGML) {
        posenc_status st = posenc_rope_params_compute(cfg, seq_len, p, err);
        return st ? st : posenc_rope_params_ggml(p, m, layer_type, seq_len, err);
    }
    return posenc_rope_params_for(cfg, prec, posenc_model_family(m), seq_len, 0, p, NULL, err);
}

posenc_status posenc_verify_profiles(const posenc_model *m, const char *layer_type,
                                     const posenc_rope_config *cfg, int64_t seq_len, double tol,
                                     const posenc_verify_sample *rows, size_t n_rows,
                                     const char *what, posenc_verify_profiles_result *out,
                                     posenc_error *err)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    if (n_rows == 0)
        return posenc_seterr(err, POSENC_EINVAL, "no rows to compare");
    posenc_rope_params exact;
    posenc_status st = posenc_rope_params_compute(cfg, seq_len, &exact, err);
    if (st != POSENC_OK)
        return st;
    double *scratch = malloc(2 * sizeof(double) * (size_t)(exact.head_dim > 0 ? exact.head_dim : 1));
    if (!scratch)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_verify_tolerance strict = { tol, 0 };
    for (int k = 0; k < POSENC_VERIFY_N_PROFILES; k++) {
        posenc_profile_fit *f = &out->fit[out->n++];
        f->prec = profiles[k].prec;
        f->runtime = profiles[k].runtime;
        posenc_rope_params p;
        posenc_error e2 = { 0 };
        if (params_of(m, layer_type, cfg, f->prec, seq_len, &p, &e2) != POSENC_OK ||
            p.head_dim != exact.head_dim || p.n_freq != exact.n_freq) {
            snprintf(f->why, sizeof f->why, "%.199s", e2.msg[0] ? e2.msg : "not comparable");
            continue;
        }
        posenc_verify_recipe r;
        posenc_verify_recipe_init(&r, &p);
        r.prec = f->prec;
        f->available = 1;
        double ec[POSENC_MAX_FREQ], es[POSENC_MAX_FREQ], pc[POSENC_MAX_FREQ], ps[POSENC_MAX_FREQ];
        for (size_t i = 0; i < n_rows; i++) {
            double a, rel, q;
            posenc_verify_recipe_cossin(&r, rows[i].pos, pc, ps);
            posenc_verify_row_error(&r, &strict, rows[i].pos, pc, ps, rows[i].pre,
                                    rows[i].expected, scratch, &a, &rel, &q);
            if (rel > f->max_rel_err || rel != rel)
                f->max_rel_err = rel;
            if (a > f->max_abs_err || a != a)
                f->max_abs_err = a;
            if (q > f->ratio || q != q)
                f->ratio = q;
            posenc_rope_cossin(&exact, POSENC_PREC_EXACT, rows[i].pos, ec, es);
            for (int j = 0; j < p.n_freq; j++) {
                double d = fmax(fabs(pc[j] - ec[j]), fabs(ps[j] - es[j]));
                if (d > f->drift || d != d) {
                    f->drift = d;
                    f->drift_pos = rows[i].pos;
                }
            }
        }
        f->matches = f->ratio <= 1.0;
        if (f->matches && (out->best < 0 || f->max_abs_err < out->fit[out->best].max_abs_err))
            out->best = out->n - 1;
    }
    free(scratch);
    if (out->best >= 0) {
        const posenc_profile_fit *b = &out->fit[out->best];
        char how[64];
        if (b->max_abs_err == 0)
            snprintf(how, sizeof how, "bit for bit");
        else
            snprintf(how, sizeof how, "to max rel err %.2g", b->max_rel_err);
        int k = out->best;
        if (b->prec == POSENC_PREC_EXACT)
            snprintf(out->explanation, sizeof out->explanation,
                     "%s matches exact math %s", what, how);
        else
            snprintf(out->explanation, sizeof out->explanation,
                     "%s matches the %s profile (%s) %s; it drifts from exact math by %.2g at "
                     "position %lld, which is %s, not a bug",
                     what, posenc_precision_name(b->prec), profiles[k].runtime, how, b->drift,
                     (long long)b->drift_pos, profiles[k].drift_cause);
    } else {
        snprintf(out->explanation, sizeof out->explanation,
                 "%s matches no runtime profile (exact, hf, vllm, ggml) within %.2g: not a "
                 "runtime's rounding", what, tol);
    }
    return POSENC_OK;
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

int pe_verify_profiles_verdict(const posenc_verify_profiles_result *fits, int ok, int held,
                               posenc_precision prec, double max_rel, char *summary, size_t len)
{
    const posenc_profile_fit *b = fits->best >= 0 ? &fits->fit[fits->best] : NULL;
    if (!ok && !held && b) {
        snprintf(summary, len, "%s (posenc's hf rotation differs by max rel err %.3g)",
                 fits->explanation, max_rel);
        return 1;
    }
    if (!b || b->prec != (held ? prec : POSENC_PREC_HF)) {
        /* no profile fits, or another than the one the rows were held to */
        size_t n = strlen(summary);
        if (n < len)
            snprintf(summary + n, len - n, "; %s", fits->explanation);
    }
    return ok;
}
