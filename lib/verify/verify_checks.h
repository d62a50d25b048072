/* lib/verify/verify_checks.h: the checks posenc verify runs on a model that does not rotate (ALiBi,
 * T5, sinusoidal), as one table; see verify_checks.c.
 *
 * Pure computation (no I/O, no printing): cmd/verify.c runs the plan and formats/report/report.h
 * turns each result into a check of the report. Internal (pe_). */
#ifndef PE_VERIFY_CHECKS_H
#define PE_VERIFY_CHECKS_H

#include <stdint.h>

#include "posenc/model.h"
#include "posenc/verify.h"

#define PE_BIAS_MAX_CHECKS 4

/* One check's result, with its name in the report and what it states. */
typedef struct pe_bias_check {
    char name[64];      /* "alibi_symmetric", "t5_causal", "sinusoidal_rotation" */
    char what[160];     /* "b(i,j) - b(i,i) == -m(i-j) for j <= i, 8 heads", ... */
    posenc_bias_check_result r;
} pe_bias_check;

/* The parameters the checks ran with (what the report lists under config.bias) and their
 * results. */
typedef struct pe_bias_run {
    posenc_encoding enc;
    int64_t max_positions;             /* checked below this position */
    int heads;
    const char *alibi_kind;            /* ALiBi: "reference", "mpt", "falcon" */
    int num_buckets, max_distance, is_decoder;    /* T5 (defaults 32, 128) */
    posenc_sinusoidal_variant variant; /* sinusoidal */
    int d_model;
    int n;                             /* checks run: 0 for an encoding with nothing relative */
    pe_bias_check c[PE_BIAS_MAX_CHECKS];
} pe_bias_run;

/* Run every check of the model's encoding (m's bias config, or defaults without one) below
 * max_position (<= 0: the config's max_positions, else max_position_embeddings, else 2048).
 * variant: the sinusoidal variant to check (NULL: the model's); seed: the sinusoidal check's
 * samples. ALiBi without a head count is POSENC_ECONFIG (the config loader refuses such a
 * config, naming it, so a loaded model never gets here without heads). */
posenc_status pe_verify_bias_run(const posenc_model *m, int64_t max_position,
                                 const posenc_sinusoidal_variant *variant, uint64_t seed,
                                 pe_bias_run *out, posenc_error *err);

#endif
