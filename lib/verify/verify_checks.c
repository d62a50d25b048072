/* lib/verify/verify_checks.c: the checks of a model that does not rotate (see verify_checks.h): one
 * row per check, {encoding, name, what it states, how it runs}; the checks themselves are in
 * lib/verify/verify.c (posenc_verify_alibi, posenc_verify_t5, posenc_verify_sinusoidal). */
#include <stdio.h>
#include <string.h>

#include "lib/verify/verify_checks.h"

/* What a row runs: the check of run->enc with argument arg (an ALiBi convention, T5's
 * bidirectional flag). */
typedef posenc_status (*bias_fn)(const posenc_bias_config *b, const pe_bias_run *run, int arg,
                                 uint64_t seed, posenc_bias_check_result *out, posenc_error *err);

static posenc_status run_alibi(const posenc_bias_config *b, const pe_bias_run *run, int arg,
                               uint64_t seed, posenc_bias_check_result *out, posenc_error *err)
{
    (void)seed;
    return posenc_verify_alibi(b, (posenc_alibi_convention)arg, run->max_positions, out, err);
}

static posenc_status run_t5(const posenc_bias_config *b, const pe_bias_run *run, int arg,
                            uint64_t seed, posenc_bias_check_result *out, posenc_error *err)
{
    (void)b;
    (void)seed;
    return posenc_verify_t5(run->num_buckets, run->max_distance, arg, run->max_positions, out,
                            err);
}

static posenc_status run_sin(const posenc_bias_config *b, const pe_bias_run *run, int arg,
                             uint64_t seed, posenc_bias_check_result *out, posenc_error *err)
{
    (void)arg;
    return posenc_verify_sinusoidal(run->variant, run->d_model,
                                    run->variant == POSENC_SIN_FAIRSEQ ? b->padding_idx : -1,
                                    run->max_positions, seed, out, err);
}

/* name NULL: "alibi_" + the convention's name; what with "%d": the head count */
static const struct {
    posenc_encoding enc;
    const char *name, *what;
    bias_fn fn;
    int arg;
} checks[] = {
    { POSENC_ENC_ALIBI, NULL, "b(i,j) - b(i,i) == -m(i-j) for j <= i, %d heads", run_alibi,
      POSENC_ALIBI_SYMMETRIC },
    { POSENC_ENC_ALIBI, NULL, "b(i,j) - b(i,i) == -m(i-j) for j <= i, %d heads", run_alibi,
      POSENC_ALIBI_CAUSAL },
    { POSENC_ENC_ALIBI, NULL, "b(i,j) - b(i,i) == -m(i-j) for j <= i, %d heads", run_alibi,
      POSENC_ALIBI_KEYINDEX },
    { POSENC_ENC_T5, "t5_bidirectional", "buckets depend only on j-i, monotone in |j-i|, match "
      "transformers' float32 formula", run_t5, 1 },
    { POSENC_ENC_T5, "t5_causal", "buckets depend only on j-i, monotone in |j-i|, match "
      "transformers' float32 formula", run_t5, 0 },
    { POSENC_ENC_SINUSOIDAL, "sinusoidal_rotation", "PE(p+k) is the rotation of PE(p) by "
      "PE(k)'s angles", run_sin, 0 },
};

posenc_status pe_verify_bias_run(const posenc_model *m, int64_t max_position,
                                 const posenc_sinusoidal_variant *variant, uint64_t seed,
                                 pe_bias_run *out, posenc_error *err)
{
    static const char *const kinds[] = { "reference", "mpt", "falcon" };
    const posenc_bias_config *b = posenc_model_bias(m);
    posenc_bias_config dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!b)
        b = &dflt;
    memset(out, 0, sizeof *out);
    out->enc = posenc_model_encoding(m);
    out->max_positions = max_position;
    if (out->max_positions <= 0)
        out->max_positions = b->max_positions > 0 ? b->max_positions
                                                  : posenc_model_max_positions(m);
    if (out->max_positions <= 0)
        out->max_positions = 2048;
    out->heads = b->heads;
    out->alibi_kind = kinds[(unsigned)b->alibi_kind <= 2 ? b->alibi_kind : 0];
    out->num_buckets = b->num_buckets > 0 ? b->num_buckets : 32;
    out->max_distance = b->max_distance > 0 ? b->max_distance : 128;
    out->is_decoder = b->is_decoder;
    out->variant = variant ? *variant : b->sinusoidal_variant; /* the model's, from the registry */
    out->d_model = b->d_model > 0 ? b->d_model : b->heads * b->head_dim;
    if (out->enc == POSENC_ENC_ALIBI && b->heads < 1)
        return posenc_seterr(err, POSENC_ECONFIG, "ALiBi check needs the number of attention "
                             "heads");
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
        if (checks[i].enc != out->enc)
            continue;
        pe_bias_check *c = &out->c[out->n];
        if (checks[i].name)
            snprintf(c->name, sizeof c->name, "%s", checks[i].name);
        else
            snprintf(c->name, sizeof c->name, "alibi_%s",
                     posenc_alibi_convention_name((posenc_alibi_convention)checks[i].arg));
        snprintf(c->what, sizeof c->what, checks[i].what, b->heads);
        posenc_status st = checks[i].fn(b, out, checks[i].arg, seed, &c->r, err);
        if (st != POSENC_OK)
            return st;
        out->n++;
    }
    return POSENC_OK;
}
