/* model_keys.c: the config keys as transformers reads them. A key inside a rope dict
 * (rope_scaling, rope_parameters, a per-layer-type dict) that no rope type defines, and a
 * top-level key a small edit away from a RoPE key (rope_scalling, rope_theta_,
 * max_position_embedings), get a warning that names the key and the one it resembles; a legacy
 * rope_scaling without a rope type is refused, as transformers refuses it. */
#include <stdlib.h>
#include <string.h>

#include "lib/model/model_ctx.h"

/* Every key a rope dict may hold: the required and optional keys of each rope type in
 * huggingface/transformers src/transformers/modeling_rope_utils.py (_validate_*_parameters,
 * checked by _check_received_keys, which warns "Unrecognized keys in `rope_scaling`" on the
 * rest), the keys a rope_parameters dict carries since transformers moved rope_theta and
 * partial_rotary_factor into it, the mrope keys of Qwen2-VL's config, and the family keys
 * posenc's hooks read (Hunyuan's alpha, Phi-3's older short/long mscale). */
static const char *const dict_keys[] = {
    "rope_type", "type", "factor", "original_max_position_embeddings", "attention_factor",
    "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate", "short_factor",
    "long_factor", "low_freq_factor", "high_freq_factor", "rope_theta", "partial_rotary_factor",
    "mrope_section", "mrope_interleaved", "alpha", "short_mscale", "long_mscale",
};

/* Top-level keys that decide the tables: a key one or two edits from one of them is most likely
 * that key misspelt, and the config would silently fall back to a default. */
static const char *const top_keys[] = {
    "rope_theta", "rope_scaling", "rope_parameters", "max_position_embeddings",
    "partial_rotary_factor", "rope_local_base_freq", "rotary_emb_base",
    "original_max_position_embeddings",
};

/* Keys of real configs that sit near a top key but are keys in their own right. */
static const char *const top_real[] = {
    "rope_type", "n_positions", "max_position_embedding", "rope_theta_local",
};

static int key_listed(const char *key, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, list[i]) == 0)
            return 1;
    return 0;
}

/* The optimal-string-alignment distance (Levenshtein with adjacent transpositions) of a and b;
 * anything above 2 is reported as 3. Keys longer than 63 bytes are never near. */
static int distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 3;
    if (n > m + 2 || m > n + 2)
        return 3;
    int d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m] > 2 ? 3 : d[n][m];
}

/* The key of list that key is a small edit away from (one edit for names shorter than 12
 * bytes, two for longer ones), or NULL. */
static const char *near(const char *key, const char *const *list, size_t n)
{
    const char *best = NULL;
    int bd = 3;
    for (size_t i = 0; i < n; i++) {
        int lim = strlen(list[i]) < 12 ? 1 : 2;
        int dd = distance(key, list[i]);
        if (dd > 0 && dd <= lim && dd < bd) {
            bd = dd;
            best = list[i];
        }
    }
    return best;
}

#define N_OF(a) (sizeof a / sizeof *a)

const char *pe_rope_dict_key_near(const char *key)
{
    const char *k = near(key, dict_keys, N_OF(dict_keys));
    return k ? k : near(key, top_keys, N_OF(top_keys));
}

/* Is d one of the config's rope dicts (rope_scaling, rope_parameters or one of its per-layer-type
 * dicts, top level or text_config), rather than a class default the registry supplies? */
static int from_config(const ctx *c, const cJSON *d)
{
    static const char *const keys[] = { "rope_scaling", "rope_parameters" };
    const cJSON *objs[] = { c->tc, c->root };
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < 2; k++) {
            const cJSON *it = pe_item(objs[i], keys[k]);
            if (!it)
                continue;
            if (it == d)
                return 1;
            for (const cJSON *e = it->child; e; e = e->next)
                if (e == d)
                    return 1;
        }
    return 0;
}

void pe_check_rope_dict(ctx *c, const cJSON *dict, const char *dpath)
{
    if (!dict || !from_config(c, dict))
        return;
    for (const cJSON *e = dict ? dict->child : NULL; e; e = e->next) {
        if (!e->string || key_listed(e->string, dict_keys, N_OF(dict_keys)))
            continue;
        const char *k = pe_rope_dict_key_near(e->string);
        if (k)
            pe_warn(c, "%s%.60s is not a key of any rope type (did you mean '%s'?); it is ignored",
                    dpath, e->string, k);
        else
            pe_warn(c, "%s%.60s is not a key of any rope type; it is ignored", dpath, e->string);
    }
}

posenc_status pe_check_rope_type(ctx *c, const cJSON *dict, const char *dpath)
{
    if (pe_has(dict, "rope_type") || pe_has(dict, "type"))
        return POSENC_OK;
    /* transformers' rope_config_validation reads a missing type as 'default', whose
     * _validate_default_rope_parameters requires rope_type: _check_received_keys raises
     * KeyError "Missing required keys in `rope_scaling`" (modeling_rope_utils.py) */
    const char *typo = NULL;
    for (const cJSON *e = dict ? dict->child : NULL; e && !typo; e = e->next)
        if (e->string && !key_listed(e->string, dict_keys, N_OF(dict_keys)) &&
            (distance(e->string, "rope_type") <= 2 || distance(e->string, "type") == 1))
            typo = e->string;
    if (typo)
        return pe_cfgerr(c, POSENC_ECONFIG, "%.*s has no rope_type ('%.60s' is not a key; did you "
                         "mean 'rope_type'?): transformers refuses it (missing required key "
                         "'rope_type')", (int)(strlen(dpath) - 1), dpath, typo);
    return pe_cfgerr(c, POSENC_ECONFIG, "%.*s has no rope_type (nor type): transformers refuses "
                     "it (missing required key 'rope_type')", (int)(strlen(dpath) - 1), dpath);
}

void pe_check_top_keys(ctx *c, const cJSON *obj, const char *path)
{
    for (const cJSON *e = obj ? obj->child : NULL; e; e = e->next) {
        if (!e->string || key_listed(e->string, top_keys, N_OF(top_keys)) ||
            key_listed(e->string, top_real, N_OF(top_real)) ||
            key_listed(e->string, dict_keys, N_OF(dict_keys)))
            continue;
        const char *k = near(e->string, top_keys, N_OF(top_keys));
        if (k)
            pe_warn(c, "%s%.60s is not a config key (did you mean '%s'?); it is ignored", path,
                    e->string, k);
    }
}
