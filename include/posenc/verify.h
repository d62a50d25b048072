/* posenc/verify.h: checks that a position encoding behaves as a relative one, comparisons of a
 * runtime's rotated dumps with posenc's rotation, and the diagnosis of the usual mistakes.
 *
 * Pure computation: no file I/O, no printing. cmd/verify.c reads the dumps, streams their rows
 * through these functions and writes the reports (formats/report.c).
 *
 * Score normalisation used throughout: a score difference |s - s0| is divided by
 * |q| |k| / sqrt(head_dim), which equals sqrt(head_dim) for unit-normal q and k, so the numbers
 * compare directly with "score deviation over sqrt(d)". */
#ifndef POSENC_VERIFY_H
#define POSENC_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/bias.h"
#include "posenc/dtype.h"
#include "posenc/error.h"
#include "posenc/model.h"
#include "posenc/rope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- deterministic random numbers (splitmix64 + Box-Muller) ---- */
typedef struct posenc_verify_rng {
    uint64_t state;
    double spare;
    int has_spare;
} posenc_verify_rng;

void posenc_verify_rng_seed(posenc_verify_rng *r, uint64_t seed);
uint64_t posenc_verify_rng_next(posenc_verify_rng *r);
/* Uniform in (0, 1), never 0. */
double posenc_verify_rng_uniform(posenc_verify_rng *r);
/* Standard normal. */
double posenc_verify_rng_normal(posenc_verify_rng *r);

/* ---- rotation kernels ---- */

/* out = R(pos) x for one head vector of head_dim values: n = rotary_dim / 2 frequencies with
 * cos_f[i], sin_f[i]; pairs (i, i + n) for neox, (2i, 2i + 1) for gptj; dims >= 2n pass through.
 * inverse != 0 applies R(-pos) (sin negated). x and out may be the same array. */
void posenc_verify_rotate(posenc_style style, int head_dim, int rotary_dim, const double *cos_f,
                          const double *sin_f, int inverse, const double *x, double *out);
/* The same as a float32 runtime computes it: x, cos and sin rounded to float, each product and
 * the sum rounded to float (no fused multiply-add); results returned as doubles. */
void posenc_verify_rotate_f32(posenc_style style, int head_dim, int rotary_dim,
                              const double *cos_f, const double *sin_f, const double *x,
                              double *out);
/* Index of the partner of element j of a rotated pair, and the frequency of j; -1 for a
 * pass-through dim. */
int posenc_verify_pair_freq(posenc_style style, int rotary_dim, int j);

/* cos and sin in long double straight from the exact inverse frequencies
 * (inv_hi + inv_lo) and attention_scaling: the independent reference for the tables. The angle
 * is reduced in revolutions with exact products, so the values are good to ~1e-18 at every
 * position below 2^48 (~1e-16 where long double is double). */
void posenc_verify_cossin_ld(const posenc_rope_params *p, int64_t pos, long double *cos_f,
                             long double *sin_f);

/* ---- relative invariance of RoPE scores ---- */

#define POSENC_VERIFY_MAX_OFFSETS 64
#define POSENC_VERIFY_BANDS 3 /* 0 = high frequencies (first third of i), 1 = mid, 2 = low */

/* Pairs of vectors whose scores are checked: q[i] sits at base position m[i], k[i] at n[i]. The
 * pairs are moved together so that the earliest base position is 0, then shifted by every
 * offset o of the grid with the latest position below max_position; offset o puts the earliest
 * position at o, and the grid always holds the offset where the pairs were. */
typedef struct posenc_invariance_input {
    size_t n_pairs;
    int head_dim;
    const double *q; /* n_pairs * head_dim */
    const double *k;
    const int64_t *m;
    const int64_t *n;
    int64_t max_position;
} posenc_invariance_input;

/* One precision mode: how far scores drift from their offset-0 value. */
typedef struct posenc_invariance_mode {
    double dev[POSENC_VERIFY_MAX_OFFSETS];     /* worst normalised |s(o) - s(0)| per offset */
    double rms[POSENC_VERIFY_MAX_OFFSETS];     /* root mean square of the same over the pairs */
    double band[POSENC_VERIFY_MAX_OFFSETS][POSENC_VERIFY_BANDS]; /* the same per frequency band */
    double table_err[POSENC_VERIFY_MAX_OFFSETS]; /* max |cos, sin - long double| at those positions */
    double max_dev;                            /* over all offsets */
    double max_abs;                            /* worst unnormalised |s(o) - s(0)| */
    double max_table_err;
    double band_max[POSENC_VERIFY_BANDS];
} posenc_invariance_mode;

typedef struct posenc_invariance_result {
    int n_offsets;
    int64_t offset[POSENC_VERIFY_MAX_OFFSETS];
    /* exact: posenc's exact tables rounded once to float32, rotation in float32 arithmetic;
     * hf: transformers' float32 tables, rotation in float32 arithmetic. Scores are summed in
     * double so only the encoding's error shows. */
    posenc_invariance_mode exact, hf;
    double exact_table_f64_err; /* exact tables before rounding against long double */
    size_t scores;              /* score evaluations per mode */
} posenc_invariance_result;

/* The offset grid: 0, 1, 2, 4, ... < limit, and limit itself (posenc_verify_invariance uses
 * limit = max_position - 1 - (largest - earliest base position) and adds the earliest base
 * position). Returns the count (<= POSENC_VERIFY_MAX_OFFSETS). */
int posenc_verify_offset_grid(int64_t limit, int64_t *offsets);

/* Check the pairs in `in` against p. POSENC_EINVAL when head_dim disagrees with p or no offset
 * fits below max_position. */
posenc_status posenc_verify_invariance(const posenc_rope_params *p, const posenc_invariance_input *in,
                                       posenc_invariance_result *out, posenc_error *err);

/* From a config alone: `samples` seeded unit-normal (q, k) pairs for each distance m - n of
 * the grid {0, 1, 7, 64, 1000, 4096, 32768} below max_position / 2, checked as above. */
posenc_status posenc_verify_rope_config(const posenc_rope_params *p, int64_t max_position,
                                        uint64_t seed, int samples,
                                        posenc_invariance_result *out, posenc_error *err);

/* Default pass tolerance for the exact-table invariance check, in normalised score units:
 * 16 float32 epsilons (1.9e-6). Rounding the tables and the rotation to float32 leaves about
 * 5e-8 for unit-normal vectors, independent of the position. */
#define POSENC_VERIFY_INVARIANCE_TOL (16.0 * 1.1920928955078125e-07)

/* ---- comparison of a runtime's rotated rows with posenc's rotation ---- */

/* A rotation recipe: the parameters, the pairing and what a runtime may have done differently. */
typedef struct posenc_verify_recipe {
    posenc_rope_params params;
    posenc_precision prec;  /* tables: hf (float32 pipeline) or exact */
    int64_t shift;          /* added to every position */
    int table_dtype;        /* -1, or POSENC_DT_BF16 / POSENC_DT_F16: cos and sin rounded so */
    double scale;           /* multiplies the rotated vector (1 = none) */
    int no_rotation;        /* 1: cos 1, sin 0 at every position (RoPE skipped) */
} posenc_verify_recipe;

/* Set a recipe from p: hf precision, no shift, no rounding, scale 1, rotating. */
void posenc_verify_recipe_init(posenc_verify_recipe *r, const posenc_rope_params *p);
/* cos and sin at position pos (before r->shift is added) as the recipe makes them. */
void posenc_verify_recipe_cossin(const posenc_verify_recipe *r, int64_t pos, double *cos_f,
                                 double *sin_f);

/* How far one rotated row may be from the reference. Each element error is allowed
 * tol * max|expected row| plus, for a rotated pair of frequency i at position p,
 * angle_slack * p * inv_i * |expected pair| (float32 angle rounding and a 1-ulp inv_freq in the
 * runtime grow with the angle). */
typedef struct posenc_verify_tolerance {
    double tol;          /* relative to the row's largest element */
    double angle_slack;  /* per radian of angle; 2^-22 by default */
} posenc_verify_tolerance;

/* Default tol for dumps of dtype dt: 8 epsilons of dt (f32 9.5e-7, f16 7.8e-3, bf16 6.3e-2;
 * f64 uses the f32 value since runtimes compute RoPE in float32 at best). */
double posenc_verify_default_tol(posenc_dtype dt);
#define POSENC_VERIFY_ANGLE_SLACK (1.0 / 4194304.0)

/* Error of one row: ref = recipe rotation of pre at pos (cos_f/sin_f from
 * posenc_verify_recipe_cossin, or NULL to compute them), compared with expected.
 * *abs_err = max |ref - expected|, *rel_err = that / max|expected|, *ratio = worst element
 * error over its allowance (<= 1 passes). scratch holds head_dim doubles. */
void posenc_verify_row_error(const posenc_verify_recipe *r, const posenc_verify_tolerance *t,
                             int64_t pos, const double *cos_f, const double *sin_f,
                             const double *pre, const double *expected, double *scratch,
                             double *abs_err, double *rel_err, double *ratio);

/* ---- diagnosis ---- */

/* A sampled row: pre-RoPE content, the runtime's rotated row, its position. */
typedef struct posenc_verify_sample {
    int64_t pos;
    int head;
    const double *pre;
    const double *expected;
} posenc_verify_sample;

#define POSENC_VERIFY_MAX_CANDIDATES 40

typedef struct posenc_diag_candidate {
    char name[48];          /* "style_swapped", "theta", "offset", ... */
    char description[200];  /* "--style gptj", "theta 10000 (estimated 1.0001e4)", ... */
    double max_rel_err;     /* worst row rel_err over the samples */
    double ratio;           /* worst allowance ratio; <= 1 matches within tolerance */
    int explains;           /* ratio <= POSENC_VERIFY_EXPLAIN_RATIO */
} posenc_diag_candidate;

/* A candidate explains the data when its worst allowance ratio is at most this. */
#define POSENC_VERIFY_EXPLAIN_RATIO 4.0

typedef struct posenc_diagnosis {
    int found;              /* 1 when the best candidate explains the data */
    int best;               /* index into cand, -1 when none */
    int n_cand;
    posenc_diag_candidate cand[POSENC_VERIFY_MAX_CANDIDATES];
    double config_rel_err;  /* the config's own recipe, for comparison */
    double config_ratio;
    double theta_estimate;  /* implied by per-pair angles; 0 when none could be measured */
    double scale_estimate;  /* |expected| / |rotated pre|, median over rows */
    int64_t shift_estimate; /* position shift implied by the slowest frequencies */
    int shift_valid;
    char explanation[512];  /* "k matches with --style gptj (max rel err 3e-07); the config implies neox" */
    char evidence[512];
} posenc_diagnosis;

/* Try the usual mistakes on the sampled rows of one tensor (`what` is "q" or "k" for the
 * text) and name the best explanation. cfg is the config's resolved layer; seq_len as for
 * posenc_rope_params_compute. Candidates (lib/verify_diagnose.c's table, tried in this order, the
 * earlier named on equal fit): not rotated at all (the rows equal the pre-RoPE rows); pairing
 * swapped; full head rotated although partial (mrope configs included), the exponent over
 * head_dim, partial although full; theta as estimated from the dumps and common values; a
 * position shift (only when neither "not rotated" nor the full head explains the rows, and only
 * a shift every row's position survives); the scaling ignored (default RoPE with the same
 * theta), longrope short/long swapped, dynamic NTK's original base; attention scaling missing
 * or a constant magnitude factor; tables rounded to bf16 or f16. */
posenc_status posenc_verify_diagnose(const posenc_rope_config *cfg, int64_t seq_len,
                                     const posenc_verify_tolerance *t,
                                     const posenc_verify_sample *rows, size_t n_rows,
                                     const char *what, posenc_diagnosis *out, posenc_error *err);

/* Per-pair angle of the rotation taking pre to expected (atan2 of the cross and dot products of
 * the pair), and the pair-norm ratio, for frequency i. Returns 0 when the pair is too small to
 * measure. */
int posenc_verify_pair_angle(posenc_style style, int rotary_dim, int i, const double *pre,
                             const double *expected, double *angle, double *ratio);

/* Least-squares theta from inverse frequencies inv[i] = theta^(-2i/exp_dim) measured for i in
 * [1, n) where ok[i] is set. 0 when fewer than two are usable. */
double posenc_verify_fit_theta(const double *inv, const unsigned char *ok, int n, int exp_dim);

/* ---- which runtime the rows came from ---- */

#define POSENC_VERIFY_N_PROFILES 4 /* exact, hf, vllm, ggml */

/* How one profile's rotation fits a runtime's rows. */
typedef struct posenc_profile_fit {
    posenc_precision prec;
    const char *runtime;     /* "exact math", "transformers", "vLLM", "llama.cpp" (static) */
    int available;           /* 0: the profile refuses the config (why says so) */
    char why[200];
    double max_abs_err, max_rel_err; /* worst row against the profile's rotation */
    double ratio;            /* worst allowance ratio at the dump dtype's tolerance, no angle
                                allowance; <= 1 matches */
    int matches;
    double drift;            /* the profile's own max |cos, sin - exact| at the rows' positions */
    int64_t drift_pos;       /* where it is largest */
} posenc_profile_fit;

typedef struct posenc_verify_profiles_result {
    int n;
    posenc_profile_fit fit[POSENC_VERIFY_N_PROFILES];
    int best;                /* the matching profile with the smallest error, -1 when none */
    char explanation[400];   /* "k matches the ggml profile (llama.cpp) bit for bit; it drifts
                                from exact math by 3.5e-03 at position 131072, which is
                                llama.cpp's float32 accumulation, not a bug" */
} posenc_verify_profiles_result;

/* Try every profile on the sampled rows (what: "q" or "k"): a row matches a profile when it is
 * within tol of that profile's rotation (tol relative to the row's largest element, as
 * posenc_verify_default_tol gives for the dump dtype). ggml and vllm refuse configs their
 * runtime does not run (fit.available 0). */
posenc_status posenc_verify_profiles(const posenc_model *m, const char *layer_type,
                                     const posenc_rope_config *cfg, int64_t seq_len, double tol,
                                     const posenc_verify_sample *rows, size_t n_rows,
                                     const char *what, posenc_verify_profiles_result *out,
                                     posenc_error *err);

/* ---- non-rotary encodings ---- */

typedef struct posenc_bias_check_result {
    double max_abs_err;
    double max_rel_err;
    uint64_t checked;      /* comparisons made */
    uint64_t violations;   /* comparisons outside tolerance */
    int64_t worst_i, worst_j;
    double tolerance;
} posenc_bias_check_result;

/* ALiBi: b(i, j) - b(i, i) == -m (i - j) for j <= i, sampled rows i < max_position, every head.
 * Tolerance 4 ulp of m (i - j) in double. */
posenc_status posenc_verify_alibi(const posenc_bias_config *b, posenc_alibi_convention conv,
                                  int64_t max_position, posenc_bias_check_result *out,
                                  posenc_error *err);

/* T5: buckets are monotone in |j - i| within each direction, lie in [0, num_buckets), match an
 * independent float32 evaluation of transformers' formula, and depend only on j - i (checked
 * for shifted query positions). */
posenc_status posenc_verify_t5(int num_buckets, int max_distance, int bidirectional,
                               int64_t max_position, posenc_bias_check_result *out,
                               posenc_error *err);

/* Sinusoidal: PE(p + k) == R(k) PE(p) for sampled p, k, where R(k) rotates each (sin, cos)
 * column pair by the angle PE(k) holds. Tolerance 1e-12 * (1 + k w) per element. */
posenc_status posenc_verify_sinusoidal(posenc_sinusoidal_variant v, int d_model, int padding_idx,
                                       int64_t max_position, uint64_t seed,
                                       posenc_bias_check_result *out, posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif
