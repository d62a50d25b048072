/* model_setup.c: setting a model up from its registry row (part of config resolution).
 *
 * The encodings that do not rotate (ALiBi, T5, learned and sinusoidal tables, NoPE), the
 * per-layer rules that mark the layers of a RoPE model without RoPE, and setup_row, which
 * dispatches on the row's kind after its pre hook. model_rope.c sets up a RoPE row,
 * model_hooks.c holds the hooks, model.c the JSON helpers and the public API; model_ctx.h
 * declares what they share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/model/model_ctx.h"

/* ---- non-rotary encodings ---- */

posenc_status pe_fill_heads(ctx *c)
{
    int64_t heads, hidden;
    int have;
    TRY(pe_heads_hidden(c, &heads, &hidden, &have));
    c->m->bias.heads = (int)heads;
    c->m->bias.d_model = (int)hidden;
    /* informational here: RoPE models validate head_dim in resolve_head_dim */
    const cJSON *hd = pe_item(c->tc, "head_dim");
    if (hd && cJSON_IsNumber(hd) && hd->valuedouble >= 1 && hd->valuedouble <= (1 << 24) &&
        hd->valuedouble == floor(hd->valuedouble))
        c->m->bias.head_dim = (int)hd->valuedouble;
    else if (heads > 0 && hidden > 0)
        c->m->bias.head_dim = (int)(hidden / heads);
    return POSENC_OK;
}

posenc_status pe_read_max(ctx *c, const char *key, int64_t def)
{
    int64_t v = 0;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, key, 1, (int64_t)1 << 53, &v, &p));
    c->m->max_positions = p ? v : def;
    c->m->bias.max_positions = c->m->max_positions;
    return POSENC_OK;
}

static posenc_status need_heads(ctx *c, const char *what)
{
    if (c->m->bias.heads < 1)
        return pe_cfgerr(c, POSENC_ECONFIG, "%snum_attention_heads is missing (needed for %s)",
                         c->tp, what);
    if (c->m->bias.heads > 65536)
        return pe_cfgerr(c, POSENC_ECONFIG, "%d attention heads is too many for %s",
                         c->m->bias.heads, what);
    return POSENC_OK;
}

posenc_status pe_setup_alibi(ctx *c, posenc_alibi_kind kind)
{
    c->m->enc = POSENC_ENC_ALIBI;
    c->m->bias.alibi_kind = kind;
    c->m->bias.alibi_bias_max = 8.0;
    TRY(pe_fill_heads(c));
    return need_heads(c, "ALiBi");
}

static posenc_status setup_t5(ctx *c)
{
    posenc_model *m = c->m;
    int64_t v;
    int p, b;
    m->enc = POSENC_ENC_T5;
    TRY(pe_get_int(c, c->tc, c->tp, "num_heads", 1, 65536, &v, &p));
    m->bias.heads = p ? (int)v : 8;
    TRY(pe_get_int(c, c->tc, c->tp, "d_model", 1, 1 << 24, &v, &p));
    m->bias.d_model = p ? (int)v : 512;
    TRY(pe_get_int(c, c->tc, c->tp, "d_kv", 1, 1 << 24, &v, &p));
    m->bias.head_dim = p ? (int)v : 64;
    TRY(pe_get_int(c, c->tc, c->tp, "relative_attention_num_buckets", 1, 1 << 20, &v, &p));
    m->bias.num_buckets = p ? (int)v : 32;
    TRY(pe_get_int(c, c->tc, c->tp, "relative_attention_max_distance", 1, 1 << 30, &v, &p));
    m->bias.max_distance = p ? (int)v : 128;
    TRY(pe_get_bool(c, c->tc, c->tp, "is_decoder", &b, &p));
    m->bias.is_decoder = p ? b : 0;
    posenc_error e = { 0 };
    if (posenc_t5_check(!m->bias.is_decoder, m->bias.num_buckets, m->bias.max_distance, &e) !=
        POSENC_OK)
        return pe_cfgerr(c, POSENC_ECONFIG, "relative_attention_num_buckets %d / "
                         "relative_attention_max_distance %d: %s", m->bias.num_buckets,
                         m->bias.max_distance, e.msg);
    if (!m->bias.is_decoder)
        pe_note(c, "is_decoder is false: encoder (bidirectional) buckets; the decoder stack of an "
                   "encoder-decoder model uses causal buckets (posenc gen --decoder writes them; "
                   "posenc verify checks both)");
    return POSENC_OK;
}

posenc_status pe_setup_learned(ctx *c, const char *tensor, const char *max_key,
                               int64_t max_def)
{
    posenc_model *m = c->m;
    m->enc = POSENC_ENC_LEARNED;
    TRY(pe_fill_heads(c));
    TRY(pe_read_max(c, max_key, max_def));
    snprintf(m->bias.learned_tensor, sizeof m->bias.learned_tensor, "%s", tensor ? tensor : "");
    return POSENC_OK;
}

/* The row of position 0 in a learned or fairseq table: .offset, or padding_idx + 1. */
posenc_status pe_table_offset(ctx *c)
{
    posenc_model *m = c->m;
    if (c->f->offset == OFF_PAD) {
        int64_t v;
        int p;
        TRY(pe_get_int(c, c->tc, c->tp, "pad_token_id", 0, 1 << 30, &v, &p));
        m->bias.padding_idx = p ? (int)v : 1;
        m->bias.position_offset = m->bias.padding_idx + 1;
        pe_note(c, "%s positions start at row padding_idx + 1 = %d of the table", c->cls,
                m->bias.position_offset);
    } else if (c->f->offset > 0) {
        m->bias.position_offset = c->f->offset;
        pe_note(c, "%s's table has %d extra rows: position p uses row p + %d", c->cls,
                c->f->offset, c->f->offset);
    }
    return POSENC_OK;
}

/* Fixed sinusoidal tables in the variant of the row. */
posenc_status pe_setup_sinusoidal(ctx *c, int64_t max_def, int padding_idx)
{
    posenc_model *m = c->m;
    m->enc = POSENC_ENC_SINUSOIDAL;
    m->bias.sinusoidal_variant = (posenc_sinusoidal_variant)c->f->sin;
    TRY(pe_fill_heads(c));
    if (m->bias.d_model < 1)
        return pe_cfgerr(c, POSENC_ECONFIG, "the model width (d_model/dim/hidden_size) is missing");
    TRY(pe_read_max(c, c->f->maxpos_key ? c->f->maxpos_key : "max_position_embeddings", max_def));
    m->bias.padding_idx = padding_idx;
    return POSENC_OK;
}

/* A config without any RoPE key says nothing about rotation (NoPE, learned, ...). */
int pe_has_rope_keys(const cJSON *tc)
{
    static const char *const keys[] = { "rope_theta", "rope_parameters", "rope_scaling",
                                        "partial_rotary_factor", "qk_rope_head_dim", NULL };
    for (const char *const *k = keys; *k; k++)
        if (pe_has(tc, *k))
            return 1;
    for (const cJSON *e = tc ? tc->child : NULL; e; e = e->next)
        if (e->string && strncmp(e->string, "rotary_", 7) == 0 && !cJSON_IsNull(e))
            return 1;
    return 0;
}

/* NoPE: fill what the bias config can say and note RoPE keys that are ignored. */
posenc_status pe_setup_none(ctx *c)
{
    c->m->enc = POSENC_ENC_NONE;
    TRY(pe_fill_heads(c));
    TRY(pe_read_max(c, c->f->maxpos_key ? c->f->maxpos_key : "max_position_embeddings",
                    c->f->maxpos));
    if (pe_has_rope_keys(c->tc))
        pe_note(c, "%s attention layers use no position encoding (NoPE): the RoPE keys in the "
                   "config are ignored", c->cls);
    else
        pe_note(c, "%s attention layers use no position encoding (NoPE)", c->cls);
    return POSENC_OK;
}

/* ---- per-layer rules ---- */

static int name_in(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

posenc_status pe_add_nope(ctx *c, int64_t i)
{
    posenc_model *m = c->m;
    int64_t *n = realloc(m->nope, (m->n_nope + 1) * sizeof *n);
    if (!n)
        return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
    m->nope = n;
    m->nope[m->n_nope++] = i;
    return POSENC_OK;
}

static void note_nope(ctx *c, const char *why)
{
    posenc_model *m = c->m;
    char list[200];
    size_t o = 0;
    list[0] = '\0';
    for (size_t i = 0; i < m->n_nope && o < sizeof list - 24; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%lld", i ? ", " : "",
                              (long long)m->nope[i]);
    if (o >= sizeof list - 24)
        snprintf(list + o, sizeof list - o, ", ...");
    pe_note(c, "%zu of %lld layers carry no RoPE (NoPE, %s): %s", m->n_nope,
            (long long)m->n_layers, why, list);
}

/* .dense_rope: the dense-MLP prefix layers rotate whatever their layer type. transformers'
 * models/cohere2_moe/modular_cohere2_moe.py Cohere2MoeAttention: force_rope =
 * mlp_layer_types[layer_idx] == "dense" and prefix_dense_sliding_window_pattern == 1; the
 * config's __post_init__ builds mlp_layer_types from first_k_dense_replace when it has none. */
static posenc_status dense_prefix_rope(ctx *c, char *why, size_t cap)
{
    posenc_model *m = c->m;
    int64_t pat = 1, k = 0;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, "prefix_dense_sliding_window_pattern", 0, MAX_LAYERS, &pat,
                   &p));
    if (!p)
        pat = 1;
    if (pat != 1 || !m->n_nope)
        return POSENC_OK;
    const cJSON *mt = pe_item(c->tc, "mlp_layer_types");
    if (!mt || cJSON_IsNull(mt)) {
        TRY(pe_get_int(c, c->tc, c->tp, "first_k_dense_replace", 0, MAX_LAYERS, &k, &p));
        if (!p)
            k = 0;
    } else if (!cJSON_IsArray(mt)) {
        return pe_cfgerr(c, POSENC_ECONFIG, "%smlp_layer_types must be a list", c->tp);
    }
    size_t kept = 0, forced = 0;
    for (size_t i = 0; i < m->n_nope; i++) {
        int64_t l = m->nope[i];
        const cJSON *e = mt && cJSON_IsArray(mt) ? cJSON_GetArrayItem(mt, (int)l) : NULL;
        int dense = e ? cJSON_IsString(e) && strcmp(e->valuestring, "dense") == 0 : l < k;
        if (dense)
            forced++;
        else
            m->nope[kept++] = l;
    }
    m->n_nope = kept;
    if (forced) {
        size_t o = strlen(why);
        snprintf(why + o, cap - o, ", but not the dense-MLP prefix layers (force_rope)");
        if (!kept)
            pe_note(c, "the dense-MLP prefix layers rotate whatever their layer type (force_rope): "
                       "every layer uses RoPE");
    }
    return POSENC_OK;
}

/* Which layers of a RoPE model carry no RoPE, from the row's per-layer rule. */
posenc_status pe_layer_rules(ctx *c)
{
    const pe_family *f = c->f;
    posenc_model *m = c->m;
    int64_t v;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, "num_hidden_layers", 1, MAX_LAYERS, &v, &p));
    m->n_layers = p ? v : (int64_t)m->n_types;
    if (m->enc != POSENC_ENC_ROPE || f->layers == LAY_ALL || m->n_nope)
        return POSENC_OK;
    const cJSON *lif = f->layers_if ? pe_item(c->tc, f->layers_if) : NULL;
    if (lif && cJSON_IsNull(lif)) {
        pe_note(c, "%s%s is null: every layer uses RoPE", c->tp, f->layers_if);
        return POSENC_OK;
    }
    int64_t every = f->every;
    const cJSON *ek = f->every_key ? pe_item(c->tc, f->every_key) : NULL;
    if (ek && cJSON_IsNumber(ek)) {
        TRY(pe_get_int(c, c->tc, c->tp, f->every_key, 1, MAX_LAYERS, &v, &p));
        every = v;
    } else if (ek && !cJSON_IsNull(ek)) {
        every = 0; /* a pattern string ("LLLG"): only layer_types can tell */
    }
    char why[160];
    const cJSON *ri = f->rope_idx_key ? pe_item(c->tc, f->rope_idx_key) : NULL;
    if (f->layers == LAY_INDEX) {
        const cJSON *l = pe_item(c->tc, f->layers_arg);
        if (l && cJSON_IsArray(l)) {
            for (const cJSON *e = l->child; e; e = e->next) {
                if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > MAX_LAYERS ||
                    e->valuedouble != floor(e->valuedouble))
                    return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of layer indices",
                                     c->tp, f->layers_arg);
                TRY(pe_add_nope(c, (int64_t)e->valuedouble));
            }
            snprintf(why, sizeof why, "listed in %s%s", c->tp, f->layers_arg);
        } else if (f->layers_default) {
            for (const char *s = f->layers_default; *s;) {
                char *end;
                long i = strtol(s, &end, 10);
                TRY(pe_add_nope(c, i));
                s = *end == ',' ? end + 1 : end;
                if (end == s && *s)
                    break;
            }
            snprintf(why, sizeof why, "no %s in the config: the %s default %s", f->layers_arg,
                     c->cls, f->layers_default);
        } else {
            pe_note(c, "%s%s is missing: posenc cannot tell which layers carry no RoPE", c->tp,
                    f->layers_arg);
            return POSENC_OK;
        }
    } else if (f->layers == LAY_ONLY && m->n_types == 0 && ri && cJSON_IsArray(ri)) {
        /* no per-layer types: the indices of the layers that rotate (LFM2 full_attn_idxs,
         * Bamba attn_layer_indices) */
        if (m->n_layers <= 0)
            return pe_cfgerr(c, POSENC_ECONFIG, "%s%s needs num_hidden_layers", c->tp,
                             f->rope_idx_key);
        unsigned char *rot = calloc((size_t)m->n_layers, 1);
        if (!rot)
            return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
        for (const cJSON *e = ri->child; e; e = e->next) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= (double)m->n_layers ||
                e->valuedouble != floor(e->valuedouble)) {
                free(rot);
                return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must list layer indices below %lld",
                                 c->tp, f->rope_idx_key, (long long)m->n_layers);
            }
            rot[(size_t)e->valuedouble] = 1;
        }
        posenc_status st = POSENC_OK;
        for (int64_t i = 0; i < m->n_layers && st == POSENC_OK; i++)
            if (!rot[i])
                st = pe_add_nope(c, i);
        free(rot);
        TRY(st);
        snprintf(why, sizeof why, "not in %s%s", c->tp, f->rope_idx_key);
    } else if (f->layers == LAY_LIST) {
        const cJSON *l = pe_item(c->tc, f->layers_arg);
        /* an empty list is falsy: transformers builds the default (Llama4TextConfig) */
        if (l && !cJSON_IsNull(l) && !(cJSON_IsArray(l) && cJSON_GetArraySize(l) == 0)) {
            if (!cJSON_IsArray(l))
                return pe_cfgerr(c, POSENC_ECONFIG, "%s%s must be a list of 0/1 per layer", c->tp,
                                 f->layers_arg);
            int64_t n = cJSON_GetArraySize(l), i = 0;
            if (m->n_layers && n != m->n_layers)
                return pe_cfgerr(c, POSENC_ECONFIG, "%s%s has %lld entries, num_hidden_layers is "
                                 "%lld", c->tp, f->layers_arg, (long long)n,
                                 (long long)m->n_layers);
            if (n > MAX_LAYERS)
                return pe_cfgerr(c, POSENC_ECONFIG, "%s%s is too long", c->tp, f->layers_arg);
            m->n_layers = n;
            for (const cJSON *e = l->child; e; e = e->next, i++) {
                int use;
                if (cJSON_IsBool(e))
                    use = cJSON_IsTrue(e);
                else if (cJSON_IsNumber(e) && (e->valuedouble == 0 || e->valuedouble == 1))
                    use = e->valuedouble != 0;
                else
                    return pe_cfgerr(c, POSENC_ECONFIG, "%s%s[%lld] must be 0 or 1", c->tp,
                                     f->layers_arg, (long long)i);
                if (!use)
                    TRY(pe_add_nope(c, i));
            }
            snprintf(why, sizeof why, "0 in %s%s", c->tp, f->layers_arg);
        } else if (every > 0 && m->n_layers > 0) {
            for (int64_t i = 0; i < m->n_layers; i++)
                if ((i + 1 - f->every_phase) % every == 0)
                    TRY(pe_add_nope(c, i));
            snprintf(why, sizeof why, "no %s in the config: every %lld-th layer, the %s default",
                     f->layers_arg, (long long)every, c->cls);
        } else {
            pe_note(c, "%s%s and num_hidden_layers are missing: posenc cannot tell which layers "
                       "carry no RoPE", c->tp, f->layers_arg);
            return POSENC_OK;
        }
    } else {
        int only = f->layers == LAY_ONLY;
        if (m->n_types > 0) {
            for (size_t a = 0; a < m->n_alias; a++)
                m->alias_enc[a] = name_in(f->layers_arg, m->alias[a]) == only
                                      ? POSENC_ENC_ROPE : POSENC_ENC_NONE;
            for (size_t i = 0; i < m->n_types; i++)
                if (m->alias_enc[m->type_of[i]] == POSENC_ENC_NONE)
                    TRY(pe_add_nope(c, (int64_t)i));
            size_t o = (size_t)snprintf(why, sizeof why, "layer_types");
            for (size_t a = 0; a < m->n_alias && o < sizeof why; a++)
                if (m->alias_enc[a] == POSENC_ENC_NONE)
                    o += (size_t)snprintf(why + o, sizeof why - o, " %.40s", m->alias[a]);
        } else if (every > 0 && m->n_layers > 0) {
            /* layer i is of type .layers_arg when (i + 1) % every == 0 */
            for (int64_t i = 0; i < m->n_layers; i++)
                if (((i + 1 - f->every_phase) % every == 0) != only)
                    TRY(pe_add_nope(c, i));
            snprintf(why, sizeof why, "no layer_types in the config: every %lld-th layer is %s, "
                     "the %s default", (long long)every, f->layers_arg, c->cls);
        } else {
            pe_note(c, "%slayer_types is missing: posenc cannot tell which layers carry no RoPE "
                       "(%s layers %s)", c->tp, f->layers_arg, only ? "rotate, the others do not"
                                                                     : "carry none");
            return POSENC_OK;
        }
    }
    if (f->dense_rope)
        TRY(dense_prefix_rope(c, why, sizeof why));
    if (m->n_nope) {
        note_nope(c, why);
        if (f->note)
            pe_note(c, "%s: %s", c->cls, f->note);
    }
    return POSENC_OK;
}

/* ---- set-up by row ---- */

posenc_status pe_setup_row(ctx *c)
{
    const pe_family *f = c->f;
    const char *maxkey = f->maxpos_key ? f->maxpos_key : "max_position_embeddings";
    int done = 0;
    if (f->pre) {
        TRY(f->pre(c, NULL, &done));
        if (done)
            return POSENC_OK;
    }
    switch (f->kind) {
    case PE_ROPE:
        return pe_setup_rope(c);
    case PE_ALIBI:
        TRY(pe_setup_alibi(c, (posenc_alibi_kind)f->alibi));
        return pe_read_max(c, maxkey, f->maxpos);
    case PE_T5:
        return setup_t5(c);
    case PE_LEARNED:
        TRY(pe_setup_learned(c, f->tensor, maxkey, f->maxpos));
        return pe_table_offset(c);
    case PE_SIN:
        if (f->sin == POSENC_SIN_FAIRSEQ) {
            int64_t v;
            int p;
            TRY(pe_get_int(c, c->tc, c->tp, "pad_token_id", 0, 1 << 30, &v, &p));
            TRY(pe_setup_sinusoidal(c, f->maxpos, p ? (int)v : 1));
            c->m->bias.position_offset = c->m->bias.padding_idx + 1;
            pe_note(c, "%s uses fairseq sinusoids: row padding_idx (%d) is zero and real tokens "
                       "start at row padding_idx + 1", c->cls, c->m->bias.padding_idx);
            return POSENC_OK;
        }
        TRY(pe_setup_sinusoidal(c, f->maxpos, -1));
        if (f->offset > 0) {
            c->m->bias.position_offset = f->offset;
            pe_note(c, "%s's sinusoidal table starts at row %d for position 0", c->cls, f->offset);
        }
        return POSENC_OK;
    case PE_NONE:
        return pe_setup_none(c);
    case PE_SHAW: /* only through a hook (BERT relative_key) */
    case PE_REL:
    case PE_TEXT:
        break;
    }
    return pe_cfgerr(c, POSENC_EUNSUPPORTED, "model_type '%s' (%s) uses %s, a relative position "
                     "scheme posenc does not generate", c->m->model_type, c->cls,
                     f->scheme ? f->scheme : "an unknown scheme");
}
