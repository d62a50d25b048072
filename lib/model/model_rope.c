/* model_rope.c: head_dim and the RoPE parameters of a config (part of config resolution).
 *
 * How a RoPE row's keys become posenc_rope_config values: head_dim, heads and hidden size with
 * the class renames; one RoPE parameter set (rope_type, theta, the partial factor, M0 and the
 * type-specific keys, as transformers' modeling_rope_utils.py reads them); the standard path
 * through legacy rope_scaling or rope_parameters, flat or per layer type; and the set-up of a
 * RoPE row, which calls the row's hooks. model.c has the JSON helpers and the public API,
 * model_setup.c the other encodings and the per-layer rules, model_hooks.c the hooks;
 * model_ctx.h declares what they share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/encodings/rope_type.h"
#include "lib/model/model_ctx.h"

/* ---- head_dim, heads, hidden size ---- */

/* hidden_size / num_attention_heads with the class renames. */
posenc_status pe_heads_hidden(ctx *c, int64_t *heads, int64_t *hidden, int *have)
{
    const char *tp = c->tp;
    int ph = 0, pn = 0;
    const char *hkey = "num_attention_heads", *dkey = "hidden_size";
    *heads = 0;
    *hidden = 0;
    if (!pe_has(c->tc, hkey)) {
        if (pe_has(c->tc, "n_head"))
            hkey = "n_head";        /* GPT-J, GPT-2, BLOOM, legacy Falcon */
        else if (pe_has(c->tc, "num_heads"))
            hkey = "num_heads";     /* T5 */
        else if (pe_has(c->tc, "n_heads"))
            hkey = "n_heads";       /* MPT, DistilBERT, XLM */
        else if (pe_has(c->tc, "encoder_attention_heads"))
            hkey = "encoder_attention_heads"; /* Marian, Pegasus, FSMT */
    }
    if (!pe_has(c->tc, dkey)) {
        if (pe_has(c->tc, "n_embd"))
            dkey = "n_embd";        /* GPT-J, GPT-2 */
        else if (pe_has(c->tc, "n_embed"))
            dkey = "n_embed";       /* BLOOM */
        else if (pe_has(c->tc, "d_model"))
            dkey = "d_model";       /* T5, MPT, Marian, Pegasus, FSMT */
        else if (pe_has(c->tc, "dim"))
            dkey = "dim";           /* DistilBERT */
        else if (pe_has(c->tc, "emb_dim"))
            dkey = "emb_dim";       /* XLM */
    }
    TRY(pe_get_int(c, c->tc, tp, hkey, 1, 1 << 20, heads, &pn));
    TRY(pe_get_int(c, c->tc, tp, dkey, 1, (int64_t)1 << 30, hidden, &ph));
    /* a key the config leaves out takes the config class's default, as transformers fills it
     * (LLaVA's text_config often holds only a few keys) */
    if (!pn && c->f->heads > 0) {
        *heads = c->f->heads;
        pn = 1;
        pe_note(c, "the attention head count (%s%s) %d is the %s class default (not in the "
                   "config)", tp, hkey, c->f->heads, c->cls);
    }
    if (!ph && c->f->hidden > 0) {
        *hidden = c->f->hidden;
        ph = 1;
        pe_note(c, "the model width (%s%s) %d is the %s class default (not in the config)", tp,
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
        TRY(pe_get_int(c, c->tc, c->tp, k, 1, 2 * POSENC_MAX_FREQ, &v, &p));
        if (p) {
            *out = (int)v;
            return POSENC_OK;
        }
    }
    int d = c->f->hd == HD_KEY ? c->f->head_dim : 0;
    if (d > 0) {
        pe_note(c, "head_dim %d is the %s class default (not in the config)", d, c->cls);
        *out = d;
        return POSENC_OK;
    }
    TRY(pe_heads_hidden(c, &heads, &hidden, &have));
    if (!have)
        return pe_cfgerr(c, POSENC_ECONFIG,
                         "cannot determine head_dim: %shead_dim, hidden_size or "
                         "num_attention_heads is missing", c->tp);
    v = hidden / heads;
    if (v < 1 || v > 2 * POSENC_MAX_FREQ)
        return pe_cfgerr(c, POSENC_ECONFIG,
                         "head_dim = hidden_size / num_attention_heads = %lld / %lld = %lld is "
                         "not in [1, %d]", (long long)hidden, (long long)heads, (long long)v,
                         2 * POSENC_MAX_FREQ);
    *out = (int)v;
    return POSENC_OK;
}
/* ---- one RoPE parameter set ---- */

static posenc_status parse_rope_type(ctx *c, const struct pe_ropesrc *s, posenc_rope_type *t,
                                     int *mrope)
{
    const char *name = NULL, *key = "rope_type";
    *mrope = 0;
    TRY(pe_get_str(c, s->dict, s->dpath, "rope_type", &name));
    if (!name) {
        key = "type";
        TRY(pe_get_str(c, s->dict, s->dpath, "type", &name));
    }
    if (!name)
        name = "default";
    if ((c->f->flags & F_PHI3) && (strcmp(name, "su") == 0 || strcmp(name, "yarn") == 0)) {
        pe_note(c, "%s%s '%s' is read as longrope (as transformers' %s config does)", s->dpath, key,
                name, c->cls);
        name = "longrope";
    }
    if (strcmp(name, "mrope") == 0) {
        pe_note(c, "%s%s 'mrope' is default RoPE over 3-D (t, h, w) positions split by "
                   "mrope_section; text-only positions make it plain 1-D RoPE", s->dpath, key);
        name = "default"; /* Qwen2-VL: mrope is default RoPE with mrope_section */
        *mrope = 1;
    }
    const pe_rope_type *rt = pe_rope_type_find(name);
    if (rt) {
        *t = rt->type;
        return POSENC_OK;
    }
    char known[160];
    return pe_cfgerr(c, POSENC_ECONFIG, "unknown rope_type '%.60s' (known: %s)", name,
                     pe_rope_type_names(known, sizeof known));
}

static posenc_status read_factor_list(ctx *c, const struct pe_ropesrc *s, const char *key, int n,
                                      double *out, int *count)
{
    const cJSON *it = pe_item(s->dict, key);
    if (!it || cJSON_IsNull(it))
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s is missing (required for rope_type longrope)",
                         s->dpath, key);
    if (!cJSON_IsArray(it))
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of numbers", s->dpath, key);
    int len = cJSON_GetArraySize(it);
    if (len != n)
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s has %d entries, expected rotary_dim/2 = %d",
                         s->dpath, key, len, n);
    int i = 0;
    for (const cJSON *e = it->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || !(e->valuedouble > 0))
            return pe_cfgerr(c, POSENC_ECONFIG, "%s%s[%d] must be a positive number", s->dpath,
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
    const cJSON *it = pe_item(s->dict, "mrope_section");
    if (it && !cJSON_IsNull(it)) {
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 3)
            return pe_cfgerr(c, POSENC_ECONFIG, "%smrope_section must be a list of 3 integers",
                             s->dpath);
        int i = 0;
        for (const cJSON *e = it->child; e; e = e->next, i++) {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) ||
                e->valuedouble < 0 || e->valuedouble > POSENC_MAX_FREQ)
                return pe_cfgerr(c, POSENC_ECONFIG, "%smrope_section must be a list of 3 integers",
                                 s->dpath);
            r->mrope_section[i] = (int)e->valuedouble;
        }
        r->n_mrope_section = 3;
    } else if (c->f->mrope[0] > 0) {
        const int *d = c->f->mrope;
        memcpy(r->mrope_section, d, 3 * sizeof *d);
        r->n_mrope_section = 3;
        pe_note(c, "mrope_section [%d, %d, %d] is the %s default (not in the config)", d[0], d[1],
                d[2], c->cls);
    } else if (forced) {
        return pe_cfgerr(c, POSENC_ECONFIG, "%smrope_section is missing (required for mrope)",
                         s->dpath);
    }
    if (!r->n_mrope_section)
        return POSENC_OK;
    int flag = 0, p = 0;
    TRY(pe_get_bool(c, s->dict, s->dpath, "mrope_interleaved", &flag, &p));
    r->mrope_interleaved = interleaved_class || (p && flag);
    int sum = r->mrope_section[0] + r->mrope_section[1] + r->mrope_section[2];
    if (sum != r->rotary_dim / 2)
        return pe_cfgerr(c, POSENC_ECONFIG,
                         "%smrope_section [%d, %d, %d] sums to %d, expected rotary_dim/2 = %d",
                         s->dpath, r->mrope_section[0], r->mrope_section[1], r->mrope_section[2],
                         sum, r->rotary_dim / 2);
    return POSENC_OK;
}

/* Every value derived from the keys must be finite and fit the float32 tables: compute the
 * parameters once and name the keys when they do not (a yarn mscale of 1e308, theta 1e-300). */
static posenc_status check_derived(ctx *c, const struct pe_ropesrc *s,
                                   const posenc_rope_config *r)
{
    posenc_rope_params *p = malloc(sizeof *p);
    if (!p)
        return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
    posenc_error e = { 0 };
    int64_t L = pe_rope_type_get(r->type)->seq != SEQ_NONE
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
    return pe_cfgerr(c, POSENC_ECONFIG, "%s (check %s%s)", e.msg,
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
    pe_check_rope_dict(c, d, dp); /* a dict of the config, never a class default */
    TRY(parse_rope_type(c, s, &r->type, &mrope));
    const pe_rope_type *rt = pe_rope_type_get(r->type);
    const char *tn = rt->name;
    int scaled = rt->width != RW_CLASS; /* an init of ROPE_INIT_FUNCTIONS, not the class's own */

    /* theta: inside the dict, then the top-level key, then the class default */
    if (s->theta_fixed) {
        r->theta = 10000.0;
        snprintf(r->theta_source, sizeof r->theta_source, "fixed (%.40s)", c->cls);
        if (pe_has(c->tc, "rope_theta") || pe_has(d, "rope_theta"))
            pe_note(c, "rope_theta is ignored: %s hard-codes theta 10000", c->cls);
    } else {
        int found = 0;
        if (s->theta_dict_first) {
            TRY(pe_get_num(c, d, dp, "rope_theta", &v, &p));
            if (p) {
                r->theta = v;
                snprintf(buf, sizeof buf, "%srope_theta", dp);
                found = 1;
            }
        }
        if (!found && s->theta_key) {
            TRY(pe_get_num(c, c->tc, tp, s->theta_key, &v, &p));
            if (p) {
                r->theta = v;
                snprintf(buf, sizeof buf, "%s%s", tp, s->theta_key);
                found = 1;
            }
        }
        if (!found && !s->theta_dict_first) {
            TRY(pe_get_num(c, d, dp, "rope_theta", &v, &p));
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
            pe_note(c, "theta %g is the %s class default (no %s in the config)", s->theta_default,
                    c->cls, s->theta_key ? s->theta_key : "rope_theta");
        }
        snprintf(r->theta_source, sizeof r->theta_source, "%.63s", buf);
        if (!(r->theta > 0))
            return pe_cfgerr(c, POSENC_ECONFIG, "%s must be > 0", buf);
        if (s->theta_key && strcmp(s->theta_key, "rope_theta") != 0 && pe_has(c->tc, "rope_theta"))
            pe_note(c, "%srope_theta does not apply to the layers whose theta is %s%s", tp, tp,
                    s->theta_key);
    }

    /* partial_rotary_factor: scaled inits re-read the top-level attribute (it wins); the
     * default init uses the dict value (PreTrainedConfig.__post_init__: leftover kwargs become attributes after standardize_rope_params) */
    double ptop = 0, pdict = 0;
    int htop = 0, hdict = 0;
    if (s->prf_key)
        TRY(pe_get_num(c, c->tc, tp, s->prf_key, &ptop, &htop));
    TRY(pe_get_num(c, d, dp, "partial_rotary_factor", &pdict, &hdict));
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
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be in (0, 1], not %g",
                         prf_src == s->prf_key ? tp : dp,
                         prf_src == s->prf_key && s->prf_key ? s->prf_key : "partial_rotary_factor",
                         prf);
    r->partial_rotary_factor = prf;
    r->head_dim = s->head_dim;
    r->style = s->style;
    r->pairing = s->pairing;
    if (s->head_dim < 2)
        return pe_cfgerr(c, POSENC_ECONFIG, "head_dim must be >= 2, not %d", s->head_dim);

    if (rt->width == RW_HEAD) {
        /* Gemma 4: the table is head_dim wide; int(prf*hd // 2) pairs rotate with exponents over
         * head_dim, the rest get frequency 0 */
        r->rotary_dim = s->head_dim;
        r->exponent_dim = s->head_dim;
        int n = (int)floor(prf * s->head_dim / 2);
        if (n < 1)
            return pe_cfgerr(c, POSENC_ECONFIG,
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
            pe_note(c, "partial_rotary_factor %g is ignored: %s's default RoPE rotates all %d "
                       "head_dim dims (scaled rope types would rotate int(%d * %g) = %d)",
                    prf, c->cls, s->head_dim, s->head_dim, prf, (int)(s->head_dim * prf));
        if (r->rotary_dim < 2 || r->rotary_dim % 2 || r->rotary_dim > s->head_dim)
            return pe_cfgerr(c, POSENC_ECONFIG,
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
    TRY(pe_get_int(c, d, dp, "original_max_position_embeddings", 1, (int64_t)1 << 53, &m0d, &hm0d));
    TRY(pe_get_int(c, c->tc, tp, "original_max_position_embeddings", 1, (int64_t)1 << 53, &m0t,
                   &hm0t));
    int is_phi3 = (c->f->flags & F_PHI3) != 0;
    if (is_phi3 && !hm0t) {
        m0t = 4096;
        hm0t = 1;
        if (r->type == POSENC_ROPE_LONGROPE) /* Phi-3's rule for its longrope */
            pe_note(c, "original_max_position_embeddings 4096 is the %s class default (a field "
                       "that overrides %soriginal_max_position_embeddings)", c->cls, dp);
    }
    int needs_m0 = (rt->keys & RK_M0) != 0;
    if (needs_m0 && !s->per_layer && hm0t)
        m0 = m0t;                   /* the top-level attribute overwrites the dict (Phi-3 rule) */
    else if (hm0d)
        m0 = m0d;
    else if (hm0t && !(needs_m0 && s->per_layer)) /* per-layer dicts: setdefault(M) only */
        m0 = m0t;
    else if (c->max_pos > 0) {
        m0 = c->max_pos;
        if (needs_m0)
            pe_note(c, "original_max_position_embeddings filled from max_position_embeddings %lld "
                       "(as transformers does)", (long long)c->max_pos);
    } else if (needs_m0) {
        return pe_cfgerr(c, POSENC_ECONFIG,
                         "%soriginal_max_position_embeddings and %smax_position_embeddings are "
                         "missing (rope_type %s needs one)", dp, tp, tn);
    }
    r->original_max_position_embeddings = m0;

    /* type-specific keys */
    r->factor = 1.0;
    const cJSON *fit = pe_item(d, "factor");
    switch (rt->factor) {
    case FAC_NONE:
        break;
    case FAC_REQUIRED:
    case FAC_NULL_M:
        if (!fit)
            return pe_cfgerr(c, POSENC_ECONFIG, "%sfactor is missing (required for rope_type %s)",
                             dp, tn);
        TRY(pe_get_num(c, d, dp, "factor", &v, &p));
        if (p) {
            r->factor = v;
        } else if (rt->factor == FAC_NULL_M) {
            r->factor = (double)c->max_pos / (double)m0;
            pe_note(c, "%sfactor is null: using max_position_embeddings / "
                       "original_max_position_embeddings = %g", dp, r->factor);
        } else {
            return pe_cfgerr(c, POSENC_ECONFIG, "%sfactor is missing (required for rope_type %s)",
                             dp, tn);
        }
        break;
    case FAC_OR_M:
        TRY(pe_get_num(c, d, dp, "factor", &v, &p));
        if (p) {
            r->factor = v;
        } else {
            if (c->max_pos <= 0)
                return pe_cfgerr(c, POSENC_ECONFIG,
                                 "%sfactor and %smax_position_embeddings are missing (%s "
                                 "needs one)", dp, tp, tn);
            r->factor = (double)c->max_pos / (double)m0;
        }
        break;
    case FAC_OPTIONAL:
        TRY(pe_get_num(c, d, dp, "factor", &v, &p));
        if (p)
            r->factor = v;
        break;
    }
    if (!(r->factor > 0) || !isfinite(r->factor))
        return pe_cfgerr(c, POSENC_ECONFIG, "%sfactor must be > 0", dp);

    if (rt->keys & RK_MAXPOS) {
        if (c->max_pos <= 0)
            return pe_cfgerr(c, POSENC_ECONFIG,
                             "%smax_position_embeddings is missing (required for rope_type "
                             "%s)", tp, tn);
    }
    if (rt->seq == SEQ_BASE) {
        pe_note(c, "dynamic: theta is scaled once the sequence is longer than "
                   "max_position_embeddings %lld; without --seq-len the load-time (unscaled) "
                   "frequencies are reported", (long long)c->max_pos);
    }
    if (rt->keys & RK_LOWHIGH) {
        static const char *const keys[] = { "low_freq_factor", "high_freq_factor" };
        double *dst[] = { &r->low_freq_factor, &r->high_freq_factor };
        for (int i = 0; i < 2; i++) {
            TRY(pe_get_num(c, d, dp, keys[i], dst[i], &p));
            if (!p)
                return pe_cfgerr(c, POSENC_ECONFIG,
                                 "%s%s is missing (required for rope_type %s)", dp, keys[i],
                                 tn);
            if (!(*dst[i] > 0))
                return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be > 0", dp, keys[i]);
        }
    }
    if (rt->keys & RK_YARN) {
        TRY(pe_get_num(c, d, dp, "beta_fast", &v, &p));
        r->beta_fast = p && v != 0 ? v : 32.0;    /* `or 32` */
        TRY(pe_get_num(c, d, dp, "beta_slow", &v, &p));
        r->beta_slow = p && v != 0 ? v : 1.0;     /* `or 1` */
        if (!(r->beta_fast > 0) || !(r->beta_slow > 0))
            return pe_cfgerr(c, POSENC_ECONFIG, "%sbeta_fast and beta_slow must be > 0", dp);
        int t = 1;
        r->truncate = s->truncate_default;
        TRY(pe_get_bool(c, d, dp, "truncate", &t, &p));
        if (p && !s->per_layer)
            r->truncate = t;
        else if (p && t != r->truncate)
            pe_note(c, "%struncate is not read: transformers reads truncate from the top level "
                       "of rope_parameters, which has none for per-layer-type dicts (truncate "
                       "true)", dp);
        TRY(pe_get_num(c, d, dp, "mscale", &v, &p));
        r->mscale = p ? v : 0;
        TRY(pe_get_num(c, d, dp, "mscale_all_dim", &v, &p));
        r->mscale_all_dim = p ? v : 0;
        if (r->mscale < 0 || r->mscale_all_dim < 0)
            return pe_cfgerr(c, POSENC_ECONFIG, "%smscale and mscale_all_dim must be >= 0", dp);
    }
    if (rt->keys & RK_ATTN) {
        TRY(pe_get_num(c, d, dp, "attention_factor", &v, &p));
        if (p) {
            if (!(v > 0))
                return pe_cfgerr(c, POSENC_ECONFIG, "%sattention_factor must be > 0", dp);
            r->attention_factor = v;
            r->has_attention_factor = 1;
        }
    }
    if (rt->keys & RK_SHORTLONG) {
        TRY(read_factor_list(c, s, "short_factor", nfreq, r->short_factor, &r->n_short_factor));
        TRY(read_factor_list(c, s, "long_factor", nfreq, r->long_factor, &r->n_long_factor));
    }
    if (rt->seq == SEQ_FACTORS) {
        pe_note(c, "longrope: long_factor applies once the sequence is longer than "
                   "original_max_position_embeddings %lld; without --seq-len the load-time "
                   "short_factor frequencies are reported (attention scaling applies to both)",
                (long long)m0);
    }
    if (needs_m0 && c->max_pos > 0 && m0 > c->max_pos)
        pe_note(c, "original_max_position_embeddings %lld exceeds max_position_embeddings %lld",
                (long long)m0, (long long)c->max_pos);
    TRY(read_mrope(c, s, r, mrope));
    return check_derived(c, s, r);
}
/* ---- per-model set-up (the hooks that set up their own layer types: model_hooks.c) ---- */

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

/* the index of name among the layer type names, added when new */
static posenc_status alias_index(ctx *c, const char *name, size_t *at)
{
    posenc_model *m = c->m;
    for (*at = 0; *at < m->n_alias; ++*at)
        if (strcmp(m->alias[*at], name) == 0)
            return POSENC_OK;
    if (m->n_alias >= MAX_ALIAS)
        return pe_cfgerr(c, POSENC_ECONFIG, "%slayer_types has more than %d distinct names",
                         c->tp, MAX_ALIAS);
    TRY(pe_copy_name(c, m->alias[m->n_alias], name, "layer type"));
    m->alias_enc[m->n_alias] = POSENC_ENC_ROPE;
    m->n_alias++;
    return POSENC_OK;
}

static posenc_status add_alias_names(ctx *c)
{
    const char *key = c->f->types_key && pe_has(c->tc, c->f->types_key) ? c->f->types_key
                                                                          : "layer_types";
    const cJSON *lt = pe_item(c->tc, key);
    if (!lt || cJSON_IsNull(lt))
        return POSENC_OK;
    if (!cJSON_IsArray(lt))
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of strings", c->tp, key);
    posenc_model *m = c->m;
    int n = cJSON_GetArraySize(lt);
    if (n > MAX_LAYERS)
        return pe_cfgerr(c, POSENC_ECONFIG, "%slayer_types has %d entries (at most %d)", c->tp, n,
                         MAX_LAYERS);
    free(m->type_of);
    m->n_types = 0;
    m->type_of = n > 0 ? malloc((size_t)n) : NULL;
    if (n > 0 && !m->type_of)
        return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
    for (const cJSON *e = lt->child; e; e = e->next) {
        if (!cJSON_IsString(e) || !e->valuestring)
            return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of strings", c->tp, key);
        size_t i;
        TRY(alias_index(c, e->valuestring, &i));
        m->type_of[m->n_types++] = (unsigned char)i;
    }
    return POSENC_OK;
}

posenc_status pe_default_layer_types(ctx *c, int64_t n, int64_t every, const char *marked,
                                     const char *other)
{
    posenc_model *m = c->m;
    size_t im, io;
    if (m->n_types > 0 || n <= 0 || n > MAX_LAYERS || every <= 0)
        return POSENC_OK;
    TRY(alias_index(c, marked, &im));
    TRY(alias_index(c, other, &io));
    free(m->type_of);
    if (!(m->type_of = malloc((size_t)n)))
        return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++)
        m->type_of[m->n_types++] = (unsigned char)(i % every == 0 ? im : io);
    return POSENC_OK;
}

int pe_in_aliases(const posenc_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_alias; i++)
        if (strcmp(m->alias[i], name) == 0)
            return 1;
    return 0;
}

posenc_status pe_add_layer(ctx *c, const char *name, const struct pe_ropesrc *s)
{
    posenc_model *m = c->m;
    if (m->n_lt >= MAX_LT)
        return pe_cfgerr(c, POSENC_ECONFIG, "more than %d RoPE layer types", MAX_LT);
    TRY(pe_copy_name(c, m->lt_name[m->n_lt], name, "layer type"));
    TRY(resolve_rope(c, s, &m->rope[m->n_lt]));
    m->n_lt++;
    return POSENC_OK;
}

/* The standard path: legacy rope_scaling or rope_parameters, flat or per layer type. */
static posenc_status setup_generic(ctx *c, struct pe_ropesrc *base)
{
    const cJSON *rs, *rp, *dict;
    const char *dname;
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    cJSON *def = NULL;
    if (!pe_obj_empty(rs)) {
        dict = rs;
        dname = "rope_scaling";
        if (!pe_obj_empty(rp))
            pe_note(c, "legacy rope_scaling replaces rope_parameters (as transformers does)");
    } else if (pe_obj_empty(rp) && c->f->rope_default) {
        /* the config class installs its own rope_parameters when the config has none */
        def = cJSON_Parse(c->f->rope_default);
        if (!def)
            return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
        dict = def;
        dname = "rope_parameters";
        const cJSON *rt = pe_item(def, "rope_type") ? pe_item(def, "rope_type")
                                                    : pe_item(def, "type");
        pe_note(c, "no rope parameters in the config: the %s class default (%s%s) applies", c->cls,
                rt && cJSON_IsString(rt) ? rt->valuestring : "default",
                pe_has(def, "rope_theta") ? ", with its own rope_theta" : "");
        if (pe_has(def, "rope_theta") && pe_has(c->tc, "rope_theta"))
            pe_note(c, "%srope_theta is ignored: the class default rope_parameters carry their "
                       "own", c->tp);
    } else {
        dict = rp;
        dname = "rope_parameters";
    }
    /* Case 2: every key of the dict is a layer type */
    int per_layer = !def && c->m->n_alias > 0 && !pe_obj_empty(dict);
    for (const cJSON *e = dict ? dict->child : NULL; per_layer && e; e = e->next)
        if (!e->string || !pe_in_aliases(c->m, e->string))
            per_layer = 0;
    if (!per_layer && c->m->n_alias == 0 && !pe_obj_empty(dict) && !pe_has(dict, "rope_type") &&
        !pe_has(dict, "type")) {
        int all_obj = 1;
        for (const cJSON *e = dict->child; e; e = e->next)
            all_obj &= cJSON_IsObject(e);
        if (all_obj)
            pe_note(c, "%s looks keyed by layer type but the config has no layer_types: read as "
                       "one dict (as transformers does), the nested entries are ignored", dname);
    }
    if (!per_layer) {
        struct pe_ropesrc s = *base;
        s.dict = dict;
        snprintf(s.dpath, sizeof s.dpath, "%s%s.", c->tp, dname);
        if (dict && dict == rs) {
            posenc_status st = pe_check_rope_type(c, dict, s.dpath);
            if (st != POSENC_OK) {
                cJSON_Delete(def);
                return st;
            }
        }
        posenc_status st = resolve_rope(c, &s, &c->m->rope[0]);
        cJSON_Delete(def);
        return st;
    }
    for (const cJSON *e = dict->child; e; e = e->next) {
        struct pe_ropesrc s = *base;
        if (!cJSON_IsObject(e))
            return pe_cfgerr(c, POSENC_ECONFIG, "%s%s.%s must be an object", c->tp, dname,
                             e->string);
        s.dict = e;
        s.per_layer = 1;
        snprintf(s.dpath, sizeof s.dpath, "%s%s.%.60s.", c->tp, dname, e->string);
        TRY(pe_add_layer(c, e->string, &s));
    }
    return POSENC_OK;
}

/* ---- set-up by row: a RoPE row (model_setup.c has the others) ---- */

posenc_status pe_setup_rope(ctx *c)
{
    posenc_model *m = c->m;
    const pe_family *f = c->f;
    struct pe_ropesrc base;
    int p, done = 0;
    int64_t v;
    m->enc = POSENC_ENC_ROPE;
    ropesrc_init(c, &base, NULL, "rope_parameters");
    TRY(pe_fill_heads(c));

    /* max_position_embeddings (with the class renames and defaults) */
    if (!c->max_pos_key)
        c->max_pos_key = f->maxpos_key ? f->maxpos_key : "max_position_embeddings";
    TRY(pe_get_int(c, c->tc, c->tp, c->max_pos_key, 1, (int64_t)1 << 53, &v, &p));
    if (p) {
        c->max_pos = v;
    } else if (f->maxpos > 0) {
        c->max_pos = f->maxpos;
        pe_note(c, "%s %lld is the %s class default (not in the config)", c->max_pos_key,
                (long long)f->maxpos, c->cls);
    }
    const cJSON *raw = pe_item(c->tc, c->max_pos_key);
    if (raw && cJSON_IsNumber(raw) && raw->valuedouble < 0)
        return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be > 0", c->tp, c->max_pos_key);
    m->max_positions = c->max_pos;
    m->bias.max_positions = c->max_pos;

    /* head_dim */
    if (f->hd == HD_QK_ROPE) {
        TRY(pe_get_int(c, c->tc, c->tp, "qk_rope_head_dim", 2, 2 * POSENC_MAX_FREQ, &v, &p));
        if (!p) {
            v = f->head_dim > 0 ? f->head_dim : 64;
            pe_note(c, "qk_rope_head_dim %lld is the %s class default (not in the config)",
                    (long long)v, c->cls);
        }
        base.head_dim = (int)v;
    } else if (f->hd == HD_KV) {
        TRY(pe_get_int(c, c->tc, c->tp, "kv_channels", 2, 2 * POSENC_MAX_FREQ, &v, &p));
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
        pe_note(c, "%s %s", c->cls, pair_note[f->pair]);

    /* rotary_dim as an integer (GPT-J, CodeGen) */
    if (f->rot == ROT_DIM) {
        const cJSON *rd = pe_item(c->tc, "rotary_dim");
        if (rd && cJSON_IsNull(rd)) {
            base.rotary_dim_fixed = base.head_dim;
        } else {
            TRY(pe_get_int(c, c->tc, c->tp, "rotary_dim", 0, 2 * POSENC_MAX_FREQ, &v, &p));
            if (p && v == 0)
                return pe_cfgerr(c, POSENC_ECONFIG, "%srotary_dim must be > 0", c->tp);
            base.rotary_dim_fixed = p ? (int)v : f->rotary_dim;
            if (!p)
                pe_note(c, "rotary_dim %d is the %s class default (not in the config)",
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
