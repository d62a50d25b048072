/* model_hooks.c: the hooks of the model-family registry, and the registry's table of rows.
 *
 * Behaviour that is not data is a named hook a row of families.def points to (.pre before the
 * encoding's set-up, .rope after the base RoPE parameters, .post after resolution; the type
 * pe_hook is in family.h). The table of rows is built here, where the hooks it names are
 * visible. model.c looks rows up and has the public API, model_rope.c and model_setup.c hold
 * the set-up the hooks call; model_ctx.h declares what they share. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/model/model_ctx.h"

/* ---- per-model set-up: layer types with their own keys ---- */

/* dict.update(rope_scaling), as the configs that merge a legacy rope_scaling into one layer
 * type's parameters do: a new object (caller frees with cJSON_Delete), or NULL without memory. */
static cJSON *merge_scaling(const cJSON *dict, const cJSON *rs)
{
    cJSON *merged = dict ? cJSON_Duplicate(dict, 1) : cJSON_CreateObject();
    for (const cJSON *e = rs ? rs->child : NULL; merged && e; e = e->next) {
        cJSON *dup = cJSON_Duplicate(e, 1);
        if (!dup) {
            cJSON_Delete(merged);
            return NULL;
        }
        if (cJSON_GetObjectItemCaseSensitive(merged, e->string))
            cJSON_ReplaceItemInObjectCaseSensitive(merged, e->string, dup);
        else
            cJSON_AddItemToObject(merged, e->string, dup);
    }
    return merged;
}

/* rope_parameters.full_attention and .sliding_attention of rp (each NULL when absent). */
static posenc_status layer_dicts(ctx *c, const cJSON *rp, const cJSON **full, const cJSON **slide)
{
    *full = *slide = NULL;
    if (!rp)
        return POSENC_OK;
    TRY(pe_get_obj(c, rp, "rope_parameters.", "full_attention", full));
    return pe_get_obj(c, rp, "rope_parameters.", "sliding_attention", slide);
}

/* Layer type name read from dict, updated by a legacy rope_scaling rs when that has keys
 * (merge_scaling), its theta from theta_key (NULL: base's) or else theta_default. */
static posenc_status add_typed_layer(ctx *c, const struct pe_ropesrc *base, const char *name,
                                     const cJSON *dict, const cJSON *rs, const char *theta_key,
                                     double theta_default)
{
    cJSON *merged = NULL;
    if (!pe_obj_empty(rs) && !(merged = merge_scaling(dict, rs)))
        return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
    struct pe_ropesrc s = *base;
    s.dict = merged ? merged : dict;
    s.per_layer = 1;
    if (theta_key)
        s.theta_key = theta_key;
    s.theta_default = theta_default;
    snprintf(s.dpath, sizeof s.dpath, "%s%s%s.", c->tp,
             merged ? "rope_scaling" : "rope_parameters.", merged ? "" : name);
    posenc_status st = pe_add_layer(c, name, &s);
    cJSON_Delete(merged);
    return st;
}

/* Gemma 3: full_attention gets rope_theta (1e6) + legacy rope_scaling, sliding_attention gets
 * rope_local_base_freq (1e4). */
static posenc_status hook_gemma3(ctx *c, struct pe_ropesrc *base, int *done)
{
    *done = 1;
    const cJSON *rs, *rp, *full = NULL, *slide = NULL;
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    TRY(layer_dicts(c, rp, &full, &slide));
    if (rp && !full && !slide && !pe_obj_empty(rp))
        full = rp; /* a flat dict: the global layers' parameters */
    /* a legacy rope_scaling updates full_attention only */
    TRY(add_typed_layer(c, base, "full_attention", full, rs, NULL, 1e6));
    return add_typed_layer(c, base, "sliding_attention", slide, NULL, "rope_local_base_freq",
                           1e4);
}

/* Gemma 4: rope_parameters per layer type (default: sliding default 1e4, full proportional 0.25
 * 1e6); full layers use global_head_dim. */
static posenc_status hook_gemma4(ctx *c, struct pe_ropesrc *base, int *done)
{
    *done = 1;
    const cJSON *rp, *full = NULL, *slide = NULL;
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    TRY(layer_dicts(c, rp, &full, &slide));
    if (pe_has(c->tc, "rope_scaling"))
        pe_note(c, "rope_scaling is ignored: gemma4_text has no legacy conversion");
    int64_t ghd;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, "global_head_dim", 2, 2 * POSENC_MAX_FREQ, &ghd, &p));
    if (!p) {
        ghd = 512;
        pe_note(c, "global_head_dim 512 is the gemma4_text class default (not in the config)");
    }
    cJSON *deffull = NULL;
    if (!full) {
        deffull = cJSON_Parse("{\"rope_type\":\"proportional\",\"partial_rotary_factor\":0.25,"
                              "\"rope_theta\":1000000.0}");
        if (!deffull)
            return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
        pe_note(c, "full_attention parameters are the gemma4_text default (proportional, "
                   "partial_rotary_factor 0.25, theta 1e6)");
    }
    struct pe_ropesrc s = *base;
    s.dict = full ? full : deffull;
    s.per_layer = 1;
    s.head_dim = (int)ghd;
    s.prf_default_rules = 1;
    s.theta_default = 1e6;
    snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.full_attention.", c->tp);
    posenc_status st = pe_add_layer(c, "full_attention", &s);
    cJSON_Delete(deffull);
    TRY(st);
    s = *base;
    s.dict = slide;
    s.per_layer = 1;
    s.theta_default = 1e4;
    snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.sliding_attention.", c->tp);
    return pe_add_layer(c, "sliding_attention", &s);
}

/* MiMo-V2-Flash (remote code): full layers rope_theta, SWA layers swa_rope_theta. */
static posenc_status hook_mimo(ctx *c, struct pe_ropesrc *base, int *done)
{
    *done = 1;
    const cJSON *rs, *rp;
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    const cJSON *dict = !pe_obj_empty(rs) ? rs : rp;
    struct pe_ropesrc s = *base;
    s.dict = dict;
    snprintf(s.dpath, sizeof s.dpath, "%s%s.", c->tp, !pe_obj_empty(rs) ? "rope_scaling"
                                                                     : "rope_parameters");
    TRY(pe_add_layer(c, "full_attention", &s));
    int swa_hd = base->head_dim;
    int64_t v;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, "swa_head_dim", 2, 2 * POSENC_MAX_FREQ, &v, &p));
    if (p)
        swa_hd = (int)v;
    s.head_dim = swa_hd;
    s.theta_key = "swa_rope_theta";
    s.theta_dict_first = 0; /* swa_rope_theta beats a theta in the shared dict */
    s.theta_default = 1e4;
    TRY(pe_add_layer(c, "sliding_attention", &s));
    pe_note(c, "sliding_attention layers (hybrid_layer_pattern 1) use swa_rope_theta, as the "
               "model's own code does (mimo_v2_flash is not in transformers)");
    return POSENC_OK;
}

/* ---- hooks: behaviour that is not data, named by registry rows ---- */

/* ESM (models/esm/modeling_esm.py EsmEmbeddings, EsmRotaryEmbedding): position_embedding_type
 * rotary (ESM-2: rotate_half over head_dim, rope_theta) or absolute (a learned table with
 * RoBERTa's padding offset). */
static posenc_status hook_esm(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    const char *pet;
    TRY(pe_get_str(c, c->tc, c->tp, "position_embedding_type", &pet));
    if (pet && strcmp(pet, "rotary") == 0) {
        *done = 1;
        return pe_setup_rope(c);
    }
    if (pet && strcmp(pet, "absolute") != 0)
        return pe_cfgerr(c, POSENC_EUNSUPPORTED, "position_embedding_type '%.40s' (relative "
                         "distance embeddings) is not generated by posenc", pet);
    *done = 1;
    TRY(pe_setup_learned(c, c->f->tensor, "max_position_embeddings", c->f->maxpos));
    TRY(pe_table_offset(c));
    return POSENC_OK;
}

/* DBRX (remote code databricks/dbrx-base modeling_dbrx.py; transformers v4 models/dbrx):
 * theta is attn_config.rope_theta. transformers v5 reads only rope_parameters. */
static posenc_status hook_dbrx(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    const cJSON *ac;
    double v;
    int p;
    TRY(pe_get_obj(c, c->tc, c->tp, "attn_config", &ac));
    TRY(pe_get_num(c, ac, "attn_config.", "rope_theta", &v, &p));
    if (p && !pe_has(c->tc, "rope_theta") && pe_obj_empty(pe_item(c->tc, "rope_parameters"))) {
        if (!(v > 0))
            return pe_cfgerr(c, POSENC_ECONFIG, "attn_config.rope_theta must be > 0");
        base->theta_default = v;
        base->theta_default_src = "attn_config.rope_theta";
        pe_note(c, "theta %g from attn_config.rope_theta, as DBRX's own code reads it; "
                   "transformers v5 reads only rope_parameters and would use 10000", v);
    }
    return POSENC_OK;
}

/* ModernBERT (models/modernbert/configuration_modernbert.py convert_rope_params_to_dict):
 * full_attention layers theta global_rope_theta (160000), sliding_attention layers
 * local_rope_theta (10000); a legacy rope_scaling updates both. */
static posenc_status hook_modernbert(ctx *c, struct pe_ropesrc *base, int *done)
{
    const cJSON *rs, *rp, *full = NULL, *slide = NULL;
    *done = 1;
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    TRY(layer_dicts(c, rp, &full, &slide));
    /* a legacy rope_scaling updates both */
    TRY(add_typed_layer(c, base, "full_attention", full, rs, "global_rope_theta", 160000.0));
    TRY(add_typed_layer(c, base, "sliding_attention", slide, rs, "local_rope_theta", 10000.0));
    /* without layer_types, ModernBertConfig.__init__ builds them: layer i is sliding_attention
     * when i % global_attn_every_n_layers (default 3) != 0, else full_attention */
    int64_t n, every;
    int pn, pe;
    TRY(pe_get_int(c, c->tc, c->tp, "num_hidden_layers", 1, MAX_LAYERS, &n, &pn));
    TRY(pe_get_int(c, c->tc, c->tp, "global_attn_every_n_layers", 1, MAX_LAYERS, &every, &pe));
    if (!pe)
        every = 3;
    if (c->m->n_types == 0 && pn) {
        pe_note(c, "layer_types as ModernBertConfig builds them: layer i is full_attention "
                "when i %% %lld == 0, else sliding_attention (global_attn_every_n_layers%s)",
                (long long)every, pe ? "" : ": the class default 3");
        TRY(pe_default_layer_types(c, n, every, "full_attention", "sliding_attention"));
    }
    return POSENC_OK;
}

/* nanochat (models/nanochat/modeling_nanochat.py rotate_half returns cat(x2, -x1)): every pair
 * turns by -theta * pos. posenc's tables and apply turn by +theta, so it refuses rather than give
 * tables that look right and are mirrored. */
static posenc_status hook_nanochat(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    return pe_cfgerr(c, POSENC_EUNSUPPORTED, "nanochat rotates every pair by -theta * pos "
                     "(rotate_half with flipped signs); posenc's tables turn by +theta: not "
                     "supported");
}

/* Rows whose config class keeps rope_parameters per layer type and ignores the top-level keys
 * (convert_rope_params_to_dict is a no-op: models/laguna, models/mellum): a rope_parameters
 * keyed by layer type replaces .type_defaults whole. */
static posenc_status hook_type_dicts(ctx *c, struct pe_ropesrc *base, int *done)
{
    const cJSON *rp;
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    int keyed = rp && rp->child;
    for (const cJSON *e = rp ? rp->child : NULL; e; e = e->next)
        keyed &= cJSON_IsObject(e);
    cJSON *def = NULL;
    if (!keyed) {
        def = cJSON_Parse(c->f->type_defaults);
        if (!def)
            return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
        pe_note(c, "rope parameters per layer type are the %s defaults%s", c->cls,
                pe_has(c->tc, "rope_theta") || rp ? " (the class ignores top-level rope_theta "
                                                  "and a flat rope_parameters)" : "");
    }
    *done = 1;
    posenc_status st = POSENC_OK;
    for (const cJSON *e = keyed ? rp->child : def->child; e && st == POSENC_OK; e = e->next) {
        struct pe_ropesrc s = *base;
        s.dict = e;
        s.per_layer = 1;
        s.theta_key = NULL;
        s.honours = 1;
        snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.%.60s.", c->tp, e->string);
        st = pe_add_layer(c, e->string, &s);
    }
    cJSON_Delete(def);
    return st;
}

/* DeepSeek-V4 (models/deepseek_v4/configuration_deepseek_v4.py __post_init__,
 * modeling_deepseek_v4.py apply_rotary_pos_emb): the rope slice is the LAST
 * int(head_dim * partial_rotary_factor) channels of each head (default 64 of 512), rotated in
 * adjacent pairs from repeat_interleave tables. sliding_attention layers use the "main" rope
 * (rope_theta, default, unscaled); compressed_sparse_attention and heavily_compressed_attention
 * layers the "compress" rope (compress_rope_theta, 160000, with the config's scaling; yarn gets
 * attention_factor 1.0). posenc's head_dim here is the rope slice. */
static posenc_status hook_deepseek_v4(ctx *c, struct pe_ropesrc *base, int *done)
{
    double prf = 0, v;
    int p;
    TRY(pe_get_num(c, c->tc, c->tp, "partial_rotary_factor", &prf, &p));
    if (!p) {
        TRY(pe_get_num(c, c->tc, c->tp, "qk_rope_head_dim", &v, &p));
        prf = p ? v / base->head_dim : 64.0 / 512.0;
    }
    int rot = (int)(base->head_dim * prf);
    if (rot < 2 || rot % 2 || rot > base->head_dim)
        return pe_cfgerr(c, POSENC_ECONFIG, "the rope slice int(head_dim %d * "
                         "partial_rotary_factor %g) = %d must be even, >= 2 and <= head_dim",
                         base->head_dim, prf, rot);
    pe_note(c, "deepseek_v4 rotates the last %d of each head's %d channels ([nope | rope]): "
               "posenc's head_dim is that slice", rot, base->head_dim);
    base->head_dim = rot;
    c->m->bias.head_dim = rot;
    base->prf_default = 0;
    const cJSON *rs, *rp;
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_scaling", &rs));
    TRY(pe_get_obj(c, c->tc, c->tp, "rope_parameters", &rp));
    const cJSON *main_d = NULL, *comp_d = NULL;
    if (rp) {
        TRY(pe_get_obj(c, rp, "rope_parameters.", "main", &main_d));
        TRY(pe_get_obj(c, rp, "rope_parameters.", "compress", &comp_d));
    }
    cJSON *comp = NULL, *mainj = NULL;
    if (!main_d || !comp_d) {
        /* build the two dicts as __post_init__ does */
        const cJSON *scale = !pe_obj_empty(rs) ? rs : rp;
        comp = scale ? cJSON_Duplicate(scale, 1) : cJSON_CreateObject();
        mainj = cJSON_Parse("{\"rope_type\":\"default\"}");
        if (!comp || !mainj) {
            cJSON_Delete(comp);
            cJSON_Delete(mainj);
            return pe_cfgerr(c, POSENC_ENOMEM, "out of memory");
        }
        cJSON_DeleteItemFromObjectCaseSensitive(comp, "rope_theta");
        cJSON_DeleteItemFromObjectCaseSensitive(comp, "partial_rotary_factor");
        const cJSON *rt = pe_item(comp, "rope_type") ? pe_item(comp, "rope_type")
                                                     : pe_item(comp, "type");
        if (rt && cJSON_IsString(rt) && strcmp(rt->valuestring, "yarn") == 0 &&
            !pe_item(comp, "attention_factor"))
            cJSON_AddNumberToObject(comp, "attention_factor", 1.0);
        main_d = mainj;
        comp_d = comp;
    }
    *done = 1;
    static const char *const types[] = { "sliding_attention", "compressed_sparse_attention",
                                         "heavily_compressed_attention" };
    /* the layer types the model has: layer_types, else the default schedule (two HCA layers,
     * then CSA/HCA interleaved) */
    int present[3] = { 0, c->m->n_alias == 0, c->m->n_alias == 0 };
    for (size_t a = 0; a < c->m->n_alias; a++)
        for (int i = 0; i < 3; i++)
            if (strcmp(c->m->alias[a], types[i]) == 0)
                present[i] = 1;
    posenc_status st = POSENC_OK;
    for (int i = 0; i < 3 && st == POSENC_OK; i++) {
        if (!present[i])
            continue;
        struct pe_ropesrc s = *base;
        s.dict = i == 0 ? main_d : comp_d;
        s.per_layer = 0;
        s.rotary_dim_fixed = rot;
        s.theta_key = i == 0 ? "rope_theta" : "compress_rope_theta";
        s.theta_dict_first = comp ? 0 : 1;
        s.theta_default = i == 0 ? 10000.0 : 160000.0;
        snprintf(s.dpath, sizeof s.dpath, "%srope_parameters.%s.", c->tp, i ? "compress" : "main");
        st = pe_add_layer(c, types[i], &s);
    }
    cJSON_Delete(comp);
    cJSON_Delete(mainj);
    return st;
}

/* RecurrentGemma (models/recurrent_gemma/configuration_recurrent_gemma.py layers_block_type):
 * block_types repeat over the layers; only "attention" blocks have attention (and RoPE). */
static posenc_status post_recurrent_gemma(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    posenc_model *m = c->m;
    static const char *const def[] = { "recurrent", "recurrent", "attention" };
    const char *types[64];
    int nt = 0;
    const cJSON *bt = pe_item(c->tc, "block_types");
    if (bt && cJSON_IsArray(bt)) {
        for (const cJSON *e = bt->child; e && nt < 64; e = e->next) {
            if (!cJSON_IsString(e))
                return pe_cfgerr(c, POSENC_ECONFIG, "%sblock_types must be a list of strings",
                                 c->tp);
            types[nt++] = e->valuestring;
        }
    }
    if (nt == 0)
        for (nt = 0; nt < 3; nt++)
            types[nt] = def[nt];
    int64_t v;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, "num_hidden_layers", 1, MAX_LAYERS, &v, &p));
    if (!p)
        v = 26;
    m->n_layers = v;
    for (int64_t i = 0; i < v; i++)
        if (strcmp(types[i % nt], "attention") != 0)
            TRY(pe_add_nope(c, i));
    pe_note(c, "only the attention blocks of block_types use RoPE; the %zu recurrent layers have "
               "no attention", m->n_nope);
    return POSENC_OK;
}

/* BERT family (models/bert/modeling_bert.py BertEmbeddings, BertSelfAttention):
 * position_embedding_type absolute | relative_key | relative_key_query; "alibi" is the remote
 * jina-bert / MosaicBERT code that keeps model_type bert (symmetric -m|i-j| bias). */
static posenc_status hook_bert(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    posenc_model *m = c->m;
    const char *pet;
    TRY(pe_get_str(c, c->tc, c->tp, "position_embedding_type", &pet));
    if (pet && (strcmp(pet, "relative_key") == 0 || strcmp(pet, "relative_key_query") == 0)) {
        m->enc = POSENC_ENC_SHAW;
        TRY(pe_fill_heads(c));
        TRY(pe_read_max(c, "max_position_embeddings", c->f->maxpos));
        m->bias.max_relative_position = (int)(m->max_positions > 1 ? m->max_positions - 1 : 1);
        m->bias.shaw_query_minus_key = 1;
        pe_note(c, "position_embedding_type %s: relative distances clipped to +-(max_position_"
                   "embeddings - 1), on top of the absolute table (transformers v4's "
                   "BertSelfAttention distance_embedding; v5 no longer reads the key)", pet);
        *done = 1;
        return POSENC_OK;
    }
    if (pet && strcmp(pet, "alibi") == 0) {
        TRY(pe_setup_alibi(c, POSENC_ALIBI_REFERENCE));
        TRY(pe_read_max(c, "max_position_embeddings", c->f->maxpos));
        m->bias.alibi_symmetric = 1;
        pe_note(c, "position_embedding_type alibi (remote code such as jina-bert or MosaicBERT, "
                   "not transformers): symmetric bias -m|i-j| over a bidirectional encoder, no "
                   "absolute table");
        *done = 1;
        return POSENC_OK;
    }
    if (pet && strcmp(pet, "absolute") != 0)
        return pe_cfgerr(c, POSENC_ECONFIG, "unknown position_embedding_type '%.60s' (known: "
                         "absolute, relative_key, relative_key_query, alibi)", pet);
    return POSENC_OK;
}

/* A learned table that a boolean key (.sin_key) fills with fixed sinusoids instead: DistilBERT
 * sinusoidal_pos_embds (models/distilbert/modeling_distilbert.py Embeddings), XLM and FlauBERT
 * sinusoidal_embeddings (models/xlm/modeling_xlm.py create_sinusoidal_embeddings). */
static posenc_status hook_sin_switch(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    int b, p;
    TRY(pe_get_bool(c, c->tc, c->tp, c->f->sin_key, &b, &p));
    if (p && b) {
        *done = 1;
        return pe_setup_sinusoidal(c, c->f->maxpos, -1);
    }
    return POSENC_OK;
}

/* MPT (models/mpt/modeling_mpt.py build_mpt_alibi_tensor): attn_config.alibi, else a learned
 * table wpe. */
static posenc_status hook_mpt(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    posenc_model *m = c->m;
    const cJSON *ac;
    int b, p;
    *done = 1;
    TRY(pe_get_obj(c, c->tc, c->tp, "attn_config", &ac));
    int alibi = 1;
    TRY(pe_get_bool(c, ac, "attn_config.", "alibi", &b, &p));
    if (p)
        alibi = b;
    if (!alibi) {
        pe_note(c, "attn_config.alibi is false: llm-foundry's MPT adds the learned table wpe "
                   "(transformers' port ignores the flag and always adds ALiBi)");
        return pe_setup_learned(c, "transformer.wpe.weight", "max_seq_len", 2048);
    }
    TRY(pe_setup_alibi(c, POSENC_ALIBI_MPT));
    double v;
    TRY(pe_get_num(c, ac, "attn_config.", "alibi_bias_max", &v, &p));
    if (p) {
        if (!(v > 0))
            return pe_cfgerr(c, POSENC_ECONFIG, "attn_config.alibi_bias_max must be > 0");
        m->bias.alibi_bias_max = v;
    }
    return pe_read_max(c, "max_seq_len", 2048);
}

/* Falcon (models/falcon/modeling_falcon.py FalconAttention): alibi true, else RoPE. */
static posenc_status hook_falcon(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    int b, p;
    TRY(pe_get_bool(c, c->tc, c->tp, "alibi", &b, &p));
    if (p && b) {
        *done = 1;
        TRY(pe_setup_alibi(c, POSENC_ALIBI_FALCON));
        return pe_read_max(c, "max_position_embeddings", 2048);
    }
    return POSENC_OK;
}

/* Baichuan (remote code, baichuan-inc/Baichuan-13B-Base modeling_baichuan.py): the 13B model
 * (hidden_size 5120) uses ALiBi, the 7B model RoPE; both say model_type baichuan. */
static posenc_status hook_baichuan(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    int64_t hidden, heads;
    int have;
    TRY(pe_heads_hidden(c, &heads, &hidden, &have));
    int rope_keys = pe_has(c->tc, "rope_theta") || pe_has(c->tc, "rope_scaling") ||
                    pe_has(c->tc, "rope_parameters");
    if (!rope_keys && hidden == 5120) {
        *done = 1;
        TRY(pe_setup_alibi(c, POSENC_ALIBI_REFERENCE));
        pe_note(c, "baichuan with hidden_size 5120 is Baichuan-13B: ALiBi (the 7B model, "
                   "hidden_size 4096, uses RoPE)");
        if (pe_has(c->tc, "max_position_embeddings"))
            return pe_read_max(c, "max_position_embeddings", 0);
        return pe_read_max(c, "model_max_length", 0);
    }
    if (!pe_has(c->tc, "max_position_embeddings"))
        c->max_pos_key = "model_max_length";
    return POSENC_OK;
}

/* Whisper (models/whisper/modeling_whisper.py sinusoids, WhisperPositionalEmbedding): a fixed
 * sinusoidal encoder ([sin | cos], exponent k/(d/2 - 1)) and a learned decoder table. */
static posenc_status hook_whisper(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    posenc_bias_config *b = &c->m->bias;
    int64_t v;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, "max_source_positions", 1, (int64_t)1 << 40, &v, &p));
    b->has_encoder = 1;
    b->encoder_encoding = POSENC_ENC_SINUSOIDAL;
    b->encoder_variant = POSENC_SIN_T2T;
    b->encoder_max_positions = p ? v : 1500;
    pe_note(c, "the encoder adds fixed sinusoids (t2t variant: [sin | cos], exponent "
               "k/(d_model/2 - 1)) for %lld positions; the decoder's table is learned",
            (long long)b->encoder_max_positions);
    return POSENC_OK;
}

/* Zamba2's attention_head_dim is always 2 * hidden_size // num_attention_heads. */
static posenc_status hook_zamba2_hd(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int64_t heads, hidden;
    int have;
    TRY(pe_heads_hidden(c, &heads, &hidden, &have));
    if (!have || 2 * hidden / heads < 2 || 2 * hidden / heads > 2 * POSENC_MAX_FREQ)
        return pe_cfgerr(c, POSENC_ECONFIG, "zamba2 needs hidden_size and num_attention_heads "
                         "with 2 * hidden_size / heads in [2, %d]", 2 * POSENC_MAX_FREQ);
    base->head_dim = (int)(2 * hidden / heads);
    c->m->bias.head_dim = base->head_dim;
    pe_note(c, "zamba2 attention_head_dim = 2 * hidden_size / num_attention_heads = %d",
            base->head_dim);
    return POSENC_OK;
}

/* Zamba2 (models/zamba2/configuration_zamba2.py, modeling_zamba2.py Zamba2Attention): the shared
 * attention blocks rotate only with use_mem_rope (default false); head_dim is always
 * 2 * hidden_size // num_attention_heads. */
static posenc_status hook_zamba2(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    int b = 0, p;
    TRY(pe_get_bool(c, c->tc, c->tp, "use_mem_rope", &b, &p));
    if (!p || !b) {
        *done = 1;
        TRY(pe_setup_none(c));
        pe_note(c, "use_mem_rope is %s: the shared attention blocks carry no RoPE",
                p ? "false" : "not set (default false)");
    }
    return POSENC_OK;
}

/* GraniteMoeHybrid (models/granitemoehybrid/modeling_granitemoehybrid.py):
 * position_embedding_type "nope" turns RoPE off in the attention layers. */
static posenc_status hook_granite_hybrid(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    const char *pet;
    TRY(pe_get_str(c, c->tc, c->tp, "position_embedding_type", &pet));
    if (pet && strcmp(pet, "rope") != 0) {
        *done = 1;
        TRY(pe_setup_none(c));
        pe_note(c, "position_embedding_type '%.40s': the attention layers carry no RoPE", pet);
    }
    return POSENC_OK;
}

/* ChatGLM2/3 (remote code, THUDM/chatglm2-6b modeling_chatglm.py RotaryEmbedding): the first
 * kv_channels/2 dims rotate in adjacent pairs, theta = 10000 * rope_ratio. ChatGLM-6B's 2-D
 * RoPE (position_encoding_2d) is refused. */
static posenc_status hook_chatglm(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int b, p;
    TRY(pe_get_bool(c, c->tc, c->tp, "position_encoding_2d", &b, &p));
    if (p && b)
        return pe_cfgerr(c, POSENC_EUNSUPPORTED,
                         "ChatGLM-6B 2-D RoPE (position_encoding_2d) is not supported");
    double ratio = 1;
    TRY(pe_get_num(c, c->tc, c->tp, "rope_ratio", &ratio, &p));
    if (!p)
        ratio = 1;
    if (!(ratio > 0))
        return pe_cfgerr(c, POSENC_ECONFIG, "%srope_ratio must be > 0", c->tp);
    base->theta_default = 10000.0 * ratio;
    base->theta_key = NULL;
    base->rotary_dim_fixed = base->head_dim / 2;
    pe_note(c, "chatglm (remote code): rotates the first kv_channels/2 dims in adjacent pairs, "
               "theta = 10000 * rope_ratio");
    return POSENC_OK;
}

/* MiniMax-M2 (remote code MiniMaxAI/MiniMax-M2 modeling_minimax_m2.py): rotary_dim. Current
 * transformers (models/minimax_m2) ignores it. */
static posenc_status hook_minimax_m2(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int64_t v = 0;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, "rotary_dim", 1, 2 * POSENC_MAX_FREQ, &v, &p));
    if (p) {
        base->rotary_dim_fixed = (int)v;
        pe_note(c, "rotary_dim %lld: posenc follows the model's own code (rotates %lld dims); "
                   "current transformers ignores rotary_dim and rotates all %d head_dim dims",
                (long long)v, (long long)v, base->head_dim);
    }
    return POSENC_OK;
}

/* MiniMax (models/minimax/modeling_minimax.py): transformers rotates the whole head and does
 * not read rotary_dim; the original remote code of the family (MiniMaxAI/MiniMax-M1
 * modeling_minimax_m1.py MiniMaxM1Attention) rotates rotary_dim. Say so when they differ. */
static posenc_status post_minimax(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    int64_t v = 0;
    int p;
    TRY(pe_get_int(c, c->tc, c->tp, "rotary_dim", 1, 2 * POSENC_MAX_FREQ, &v, &p));
    if (p && c->m->n_lt == 0 && v != c->m->rope[0].rotary_dim)
        pe_note(c, "rotary_dim %lld is not read by transformers' minimax (it rotates all %d dims); "
                   "the original remote code rotates %lld: --family minimax_m1 follows it",
                (long long)v, c->m->rope[0].rotary_dim, (long long)v);
    return POSENC_OK;
}

/* Mistral 4 (models/mistral4/configuration_mistral4.py): partial_rotary_factor =
 * qk_rope_head_dim / head_dim. */
static posenc_status hook_mistral4(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int64_t r = 64, n = 64;
    int pr, pn;
    TRY(pe_get_int(c, c->tc, c->tp, "qk_rope_head_dim", 1, 2 * POSENC_MAX_FREQ, &r, &pr));
    TRY(pe_get_int(c, c->tc, c->tp, "qk_nope_head_dim", 0, 2 * POSENC_MAX_FREQ, &n, &pn));
    if (!pr)
        r = 64;
    if (!pn)
        n = 64;
    if (r + n > 2 * POSENC_MAX_FREQ)
        return pe_cfgerr(c, POSENC_ECONFIG, "qk_nope_head_dim + qk_rope_head_dim is too large");
    base->head_dim = (int)(r + n); /* __post_init__: head_dim = qk_nope + qk_rope */
    if (!pe_has(c->tc, "partial_rotary_factor"))
        base->prf_default = (double)r / (double)(r + n);
    return POSENC_OK;
}

/* DeepSeek-V3 and its copies (models/deepseek_v3/modeling_deepseek_v3.py
 * apply_rotary_pos_emb_interleave): rope_interleave (default true) de-interleaves q/k and
 * rotates halves, so the pairs of the checkpoint layout are (2i, 2i+1). */
static posenc_status hook_deepseek_v3(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int b, p, inter = 1;
    TRY(pe_get_bool(c, c->tc, c->tp, "rope_interleave", &b, &p));
    if (p)
        inter = b;
    if (inter) {
        pe_note(c, "rope_interleave: pairs (2i, 2i+1) (gptj style); transformers de-interleaves "
                   "q/k first and applies rotate_half, so its output stays permuted");
    } else {
        base->style = POSENC_STYLE_NEOX;
        base->pairing = POSENC_PAIR_HALF;
    }
    return POSENC_OK;
}

/* DeepSeek-V3 (DeepseekV3Attention.__init__): softmax_scale *= yarn_get_mscale(factor,
 * mscale_all_dim)^2. */
static posenc_status post_deepseek_v3(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    posenc_model *m = c->m;
    if (m->n_lt == 0 && m->rope[0].type == POSENC_ROPE_YARN && m->rope[0].mscale_all_dim != 0) {
        m->rope[0].softmax_mscale = 1;
        pe_note(c, "%s multiplies the softmax scale by (0.1 * mscale_all_dim * ln(factor) + 1)^2 "
                   "outside the tables", c->cls);
    }
    return POSENC_OK;
}

/* DeepSeek-V2 (models/deepseek_v2/modeling_deepseek_v2.py): transformers leaves out the
 * softmax factor of the original code. */
static posenc_status post_deepseek_v2(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    if (c->m->rope[0].type == POSENC_ROPE_YARN && c->m->rope[0].mscale_all_dim != 0)
        pe_note(c, "deepseek_v2: transformers omits the mscale_all_dim softmax factor that "
                   "DeepSeek-V3 applies");
    return POSENC_OK;
}

/* GLM-5 (models/glm_moe_dsa/configuration_glm_moe_dsa.py attribute_map head_dim ->
 * qk_rope_head_dim; modular_glm_moe_dsa.py GlmMoeDsaAttention: the MLA slice goes through
 * apply_rotary_pos_emb_interleave whatever rope_interleave says). */
static posenc_status hook_glm_moe_dsa(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)done;
    int64_t v;
    int p;
    if (!pe_has(c->tc, "qk_rope_head_dim")) {
        TRY(pe_get_int(c, c->tc, c->tp, "head_dim", 2, 2 * POSENC_MAX_FREQ, &v, &p));
        if (p)
            base->head_dim = (int)v;
    }
    pe_note(c, "glm_moe_dsa's MLA de-interleaves q/k and applies rotate_half "
               "(apply_rotary_pos_emb_interleave; rope_interleave is not read): pairs (2i, 2i+1); "
               "the DSA indexer rotates with plain rotate_half");
    return POSENC_OK;
}

/* Hunyuan (models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py HunYuanDenseV1RotaryEmbedding):
 * rope_scaling {type: dynamic, alpha}: base = theta * alpha^(d / (d - 2)) from the start, with
 * no further dynamic rescaling. */
static posenc_status post_hunyuan(ctx *c, struct pe_ropesrc *base, int *done)
{
    (void)base;
    (void)done;
    posenc_rope_config *r = &c->m->rope[0];
    const cJSON *rs = pe_item(c->tc, "rope_scaling");
    if (!rs || !cJSON_IsObject(rs))
        rs = pe_item(c->tc, "rope_parameters");
    double alpha;
    int p;
    TRY(pe_get_num(c, rs, "rope_scaling.", "alpha", &alpha, &p));
    if (!p || c->m->n_lt != 0)
        return POSENC_OK;
    if (!(alpha > 0))
        return pe_cfgerr(c, POSENC_ECONFIG, "%srope_scaling.alpha must be > 0", c->tp);
    int d = r->rotary_dim;
    if (d <= 2)
        return pe_cfgerr(c, POSENC_ECONFIG, "rope_scaling.alpha needs a rotary dimension > 2");
    double theta = r->theta * pow(alpha, (double)d / (double)(d - 2));
    if (!isfinite(theta) || !(theta > 0))
        return pe_cfgerr(c, POSENC_ECONFIG, "rope_scaling.alpha %g makes theta non-finite", alpha);
    pe_note(c, "rope_scaling.alpha %g: theta = %g * alpha^(%d/%d) = %.10g from the start "
               "(Hunyuan's NTK-alpha rule; the dynamic rescaling does not apply)", alpha, r->theta,
            d, d - 2, theta);
    r->theta = theta;
    snprintf(r->theta_source, sizeof r->theta_source, "%.40srope_scaling.alpha", c->tp);
    r->type = POSENC_ROPE_DEFAULT;
    r->factor = 1.0;
    return POSENC_OK;
}

/* ---- the registry ---- */

#define FAMILY(n, k, ...) { .name = n, .kind = k, __VA_ARGS__ },
const pe_family pe_families[] = {
#include "lib/model/families.def"
};
#undef FAMILY
const size_t pe_n_families = sizeof pe_families / sizeof *pe_families;
