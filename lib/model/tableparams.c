/* lib/model/tableparams.c: the parameters of each encoding's table (tables.h), one table: which
 * encoding takes which gen option, and where a parameter not given comes from (the config's
 * value, else the default of the model's own code). */
#include "lib/encodings/tables.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define E(x) (1u << POSENC_ENC_##x)
#define CFG_I(f) offsetof(posenc_bias_config, f), 'i' /* an int field of the config */
#define CFG_D(f) offsetof(posenc_bias_config, f), 'd' /* a double field */
#define NO_CFG 0, 0
/* Which encoding takes which gen option, and where a parameter not given comes from: the
 * config's field when it is set (> 0, or >= 0 with zero_ok), else dflt (0: none). The one
 * place this is decided; the named parameters (variant, convention) resolve below from their
 * own enums. */
static const struct {
    const char *name;
    unsigned encodings;
    size_t cfg;
    char cfg_type;
    int zero_ok;
    double dflt;
} params[PE_TP_COUNT] = {
    [PE_TP_LAYER_TYPE] = { "--layer-type", E(ROPE), NO_CFG, 0, 0 },
    [PE_TP_PRECISION] = { "--precision", E(ROPE), NO_CFG, 0, 0 },
    [PE_TP_LAYOUT] = { "--table-layout", E(ROPE), NO_CFG, 0, 0 },
    [PE_TP_HEADS] = { "--heads", E(ALIBI) | E(T5), CFG_I(heads), 0, 0 },
    [PE_TP_D_MODEL] = { "--d-model", E(SINUSOIDAL) | E(LEARNED), CFG_I(d_model), 0, 0 },
    /* transformers models/t5/configuration_t5.py T5Config: relative_attention_num_buckets = 32,
     * relative_attention_max_distance = 128 */
    [PE_TP_NUM_BUCKETS] = { "--num-buckets", E(T5), CFG_I(num_buckets), 0, 32 },
    [PE_TP_MAX_DISTANCE] = { "--max-distance", E(T5), CFG_I(max_distance), 0, 128 },
    [PE_TP_MAX_REL] = { "--max-relative-position", E(SHAW), CFG_I(max_relative_position), 0, 0 },
    [PE_TP_CONVENTION] = { "--convention", E(ALIBI), NO_CFG, 0, 0 },
    [PE_TP_VARIANT] = { "--variant", E(ALIBI) | E(SHAW) | E(SINUSOIDAL), NO_CFG, 0, 0 },
    [PE_TP_WEIGHTS] = { "--weights", E(T5) | E(SHAW) | E(LEARNED), NO_CFG, 0, 0 },
    [PE_TP_TENSOR] = { "--tensor", E(T5) | E(SHAW) | E(LEARNED), NO_CFG, 0, 0 },
    [PE_TP_DECODER] = { "--decoder", E(T5), CFG_I(is_decoder), 0, 0 },
    [PE_TP_BROADCAST] = { "--broadcast", E(ALIBI), NO_CFG, 0, 0 },
    [PE_TP_MAX_MODEL_LEN] = { "--max-model-len", E(ROPE), NO_CFG, 0, 0 },
    /* transformers models/mpt/configuration_mpt.py MptAttentionConfig: alibi_bias_max = 8 */
    [PE_TP_ALIBI_BIAS_MAX] = { NULL, E(ALIBI), CFG_D(alibi_bias_max), 0, 8 },
    /* fairseq's sinusoids skip padding_idx + 1 rows; transformers
     * models/fsmt/configuration_fsmt.py FSMTConfig: pad_token_id = 1 */
    [PE_TP_PADDING_IDX] = { NULL, E(SINUSOIDAL), CFG_I(padding_idx), 1, 1 },
};

const char *pe_table_param_name(pe_table_param p)
{
    return p >= 0 && p < PE_TP_COUNT ? params[p].name : "?";
}

int pe_table_param_refused(unsigned given, posenc_encoding e)
{
    for (int p = 0; p < PE_TP_COUNT; p++)
        if ((given & PE_TP_BIT(p)) && !(params[p].encodings & (1u << e)))
            return p;
    return -1;
}

unsigned pe_table_rope_only(void)
{
    unsigned m = 0;
    for (int p = 0; p < PE_TP_COUNT; p++)
        if (params[p].encodings == E(ROPE))
            m |= PE_TP_BIT(p);
    return m;
}

static double config_value(int p, const posenc_bias_config *bc, int *set)
{
    *set = 0;
    if (!bc || !params[p].cfg_type)
        return 0;
    const char *base = (const char *)bc + params[p].cfg;
    double v;
    if (params[p].cfg_type == 'i') {
        int iv;
        memcpy(&iv, base, sizeof iv);
        v = iv;
    } else {
        memcpy(&v, base, sizeof v);
    }
    *set = v > 0 || (params[p].zero_ok && v == 0);
    return v;
}

/* An enum parser's message as the option's: "--variant: unknown ..." (EINVAL). */
static posenc_status option_err(posenc_error *err, const char *opt)
{
    posenc_error_prefix(err, POSENC_EINVAL, "%s: ", opt);
    if (err)
        err->code = POSENC_EINVAL;
    return POSENC_EINVAL;
}

posenc_status pe_table_params_resolve(pe_table_params *out, posenc_encoding e,
                                      const pe_table_args *a, const posenc_bias_config *bc,
                                      posenc_error *err)
{
    memset(out, 0, sizeof *out);
    for (int p = 0; p < PE_TP_COUNT; p++) {
        int set;
        double cv = config_value(p, bc, &set);
        if (a && (a->given & PE_TP_BIT(p))) {
            out->v[p] = a->v[p];
            out->from_option |= PE_TP_BIT(p);
        } else {
            out->v[p] = set ? cv : params[p].dflt;
        }
    }
    const char *variant = a ? a->variant : NULL;
    /* ALiBi: the model's slopes (registry); its convention what the model's own code builds
     * (MPT: m(j - i) at the last query; BLOOM, Baichuan, Falcon and the Press reference: m * j;
     * a bidirectional BERT-style encoder: -m|i - j|) */
    out->alibi_kind = bc ? bc->alibi_kind : POSENC_ALIBI_REFERENCE;
    if (e == POSENC_ENC_ALIBI && variant) {
        posenc_status st = posenc_alibi_kind_parse(variant, &out->alibi_kind, err);
        if (st != POSENC_OK)
            return option_err(err, "--variant");
    }
    out->convention = bc && bc->alibi_symmetric                  ? POSENC_ALIBI_SYMMETRIC
                      : out->alibi_kind == POSENC_ALIBI_MPT ? POSENC_ALIBI_CAUSAL
                                                                 : POSENC_ALIBI_KEYINDEX;
    if (e == POSENC_ENC_ALIBI && a && a->convention) {
        posenc_status st = posenc_alibi_convention_parse(a->convention, &out->convention, err);
        if (st != POSENC_OK)
            return option_err(err, "--convention");
    }
    /* Shaw: BERT's relative_key embeds query - key (distance_embedding(l - r + max_pos - 1));
     * Shaw et al. and tensor2tensor key - query. Default: what the config's model does. */
    out->shaw_bert = bc && bc->max_relative_position > 0 && bc->shaw_query_minus_key;
    if (e == POSENC_ENC_SHAW && variant) {
        if (strcmp(variant, "bert") == 0 || strcmp(variant, "shaw") == 0)
            out->shaw_bert = variant[0] == 'b';
        else
            return posenc_seterr(err, POSENC_EINVAL, "--variant: unknown Shaw variant '%s' "
                                 "(shaw: key - query, or bert: query - key)", variant);
    }
    /* sinusoidal: the model's own variant (registry), else the original Transformer's */
    out->sin_variant = bc ? bc->sinusoidal_variant : POSENC_SIN_VASWANI;
    if (e == POSENC_ENC_SINUSOIDAL && variant) {
        posenc_status st = posenc_sinusoidal_variant_parse(variant, &out->sin_variant, err);
        if (st != POSENC_OK)
            return option_err(err, "--variant");
    }
    return POSENC_OK;
}

const char *pe_table_label(posenc_encoding e)
{
    switch (e) {
    case POSENC_ENC_ROPE: return "RoPE";
    case POSENC_ENC_ALIBI: return "ALiBi";
    case POSENC_ENC_T5: return "T5";
    case POSENC_ENC_SHAW: return "Shaw";
    case POSENC_ENC_SINUSOIDAL: return "sinusoidal";
    case POSENC_ENC_LEARNED: return "learned";
    default: return posenc_encoding_name(e);
    }
}
