/* posenc/verify.h: checks that a position encoding behaves as a relative one, comparisons of a
 * runtime's rotated dumps with posenc's rotation, and the diagnosis of the usual mistakes.
 *
 * Pure computation: no file I/O, no printing. cmd/verify.c reads the dumps, streams their rows
 * through these functions and writes the reports (formats/report/report.c).
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

POSENC_API
void posenc_verify_rng_seed(posenc_verify_rng *r, uint64_t seed);
POSENC_API
uint64_t posenc_verify_rng_next(posenc_verify_rng *r);
/* Uniform in (0, 1), never 0. */
POSENC_API
double posenc_verify_rng_uniform(posenc_verify_rng *r);
/* Standard normal. */
POSENC_API
double posenc_verify_rng_normal(posenc_verify_rng *r);

/* ---- rotation kernels ---- */

/* out = R(pos) x for one head vector of head_dim values: n = rotary_dim / 2 frequencies with
 * cos_f[i], sin_f[i]; pairs (i, i + n) for neox, (2i, 2i + 1) for gptj; dims >= 2n pass through.
 * inverse != 0 applies R(-pos) (sin negated). x and out may be the same array. */
POSENC_API
void posenc_verify_rotate(posenc_style style, int head_dim, int rotary_dim, const double *cos_f,
                          const double *sin_f, int inverse, const double *x, double *out);
/* The same as a float32 runtime computes it: x, cos and sin rounded to float, each product and
 * the sum rounded to float (no fused multiply-add); results returned as doubles. */
POSENC_API
void posenc_verify_rotate_f32(posenc_style style, int head_dim, int rotary_dim,
                              const double *cos_f, const double *sin_f, const double *x,
                              double *out);
/* Index of the partner of element j of a rotated pair, and the frequency of j; -1 for a
 * pass-through dim. */
POSENC_API
int posenc_verify_pair_freq(posenc_style style, int rotary_dim, int j);

/* cos and sin in long double straight from the exact inverse frequencies
 * (inv_hi + inv_lo) and attention_scaling: the independent reference for the tables. The angle
 * is reduced in revolutions with exact products, so the values are good to ~1e-18 at every
 * position below 2^48 (~1e-16 where long double is double). */
POSENC_API
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

/* One precision mode: how far scores drift from their offset-0 value. This struct,
 * posenc_invariance_result, posenc_verify_recipe, posenc_diagnosis and
 * posenc_verify_profiles_result are defined only under POSENC_STATIC_LINKING_ONLY
 * (posenc/export.h): their layout may change in any release. */
typedef struct posenc_invariance_mode posenc_invariance_mode;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_invariance_mode {
    double dev[POSENC_VERIFY_MAX_OFFSETS];     /* worst normalised |s(o) - s(0)| per offset */
    double rms[POSENC_VERIFY_MAX_OFFSETS];     /* root mean square of the same over the pairs */
    double band[POSENC_VERIFY_MAX_OFFSETS][POSENC_VERIFY_BANDS]; /* the same per frequency band */
    double table_err[POSENC_VERIFY_MAX_OFFSETS]; /* max |cos, sin - long double| at those positions */
    double max_dev;                            /* over all offsets */
    double max_abs;                            /* worst unnormalised |s(o) - s(0)| */
    double max_table_err;
    double band_max[POSENC_VERIFY_BANDS];
};
#endif

typedef struct posenc_invariance_result posenc_invariance_result;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_invariance_result {
    int n_offsets;
    int64_t offset[POSENC_VERIFY_MAX_OFFSETS];
    /* exact: posenc's exact tables rounded once to float32, rotation in float32 arithmetic;
     * hf: transformers' float32 tables, rotation in float32 arithmetic. Scores are summed in
     * double so only the encoding's error shows. */
    posenc_invariance_mode exact, hf;
    double exact_table_f64_err; /* exact tables before rounding against long double */
    size_t scores;              /* score evaluations per mode */
};
#endif

/* The offset grid: 0, 1, 2, 4, ... < limit, and limit itself (posenc_verify_invariance uses
 * limit = max_position - 1 - (largest - earliest base position) and adds the earliest base
 * position). Returns the count (<= POSENC_VERIFY_MAX_OFFSETS). */
POSENC_API
int posenc_verify_offset_grid(int64_t limit, int64_t *offsets);

/* Check the pairs in `in` against p. POSENC_EINVAL when head_dim disagrees with p or no offset
 * fits below max_position. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_verify_invariance(const posenc_rope_params *p, const posenc_invariance_input *in,
                                       posenc_invariance_result *out, posenc_error *err);

/* From a config alone: `samples` seeded unit-normal (q, k) pairs for each distance m - n of
 * the grid {0, 1, 7, 64, 1000, 4096, 32768} below max_position / 2, checked as above. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_verify_rope_config(const posenc_rope_params *p, int64_t max_position,
                                        uint64_t seed, int samples,
                                        posenc_invariance_result *out, posenc_error *err);

/* Default pass tolerance for the exact-table invariance check, in normalised score units:
 * 16 float32 epsilons (1.9e-6). Rounding the tables and the rotation to float32 leaves about
 * 5e-8 for unit-normal vectors, independent of the position. */
#define POSENC_VERIFY_INVARIANCE_TOL (16.0 * 1.1920928955078125e-07)

/* ---- comparison of a runtime's rotated rows with posenc's rotation ---- */

/* A rotation recipe: the parameters, the pairing and what a runtime may have done differently. */
typedef struct posenc_verify_recipe posenc_verify_recipe;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_verify_recipe {
    posenc_rope_params params;
    posenc_precision prec;  /* the tables: exact, hf, vllm or ggml numerics */
    int64_t shift;          /* added to every position */
    int table_dtype;        /* -1, or POSENC_DT_BF16 / POSENC_DT_F16: cos and sin rounded so */
    int angle_dtype;        /* -1, or POSENC_DT_BF16 / POSENC_DT_F16: the angle computed in that
                               dtype (position, inv_freq and their product rounded to it) */
    double scale;           /* multiplies the rotated vector (1 = none) */
    int no_rotation;        /* 1: cos 1, sin 0 at every position (RoPE skipped) */
    /* set by posenc_verify_recipe_init from params (recompute after changing inv_hi): w_i
     * (8 + |ln w_i|), the float32 angle error per position and u32 of the verdict's bound */
    double angle_w[POSENC_MAX_FREQ];
};
#endif

/* Set a recipe from p: exact tables, no shift, no rounding, scale 1, rotating. */
POSENC_API
void posenc_verify_recipe_init(posenc_verify_recipe *r, const posenc_rope_params *p);
/* cos and sin at position pos (before r->shift is added) as the recipe makes them. */
POSENC_API
void posenc_verify_recipe_cossin(const posenc_verify_recipe *r, int64_t pos, double *cos_f,
                                 double *sin_f);

/* The verdict's bound (posenc-verify(1), VERDICT). Element a of a rotated pair (a, b) of
 * frequency w at position p, pre-RoPE values x_a, x_b, reference output y_a, y_b (the recipe's
 * tables c = s cos(p w), sn = s sin(p w), attention scaling s), may differ from y_a by
 *
 *   B_a = scale * (1 + 2u) * [ u |y_a| + (2u + u_in) (|x_a c| + |x_b sn|) + 2 u32 s (|x_a| + |x_b|)
 *                              + angle * ( e |y_b| + e^2 |y_a| )
 *                              + slack_i (|x_a| + |x_b|) + eta ] + extra * max|y| + floor
 *   e = u32 (8 + |ln w| + angle_acc * i) |p w|
 *
 * u: the unit roundoff of the rotated dump's dtype, at least float32's u32 = 2^-24 (a runtime
 * may compute every operation in the dump dtype: the tables cast to it and the two products
 * rounded, the difference rounded once more to the output); u_in: u when the pre-RoPE dump is
 * of a wider dtype (the runtime rounded its input), else 0; cos and sin evaluated in float32 to
 * one ulp (for a profile: the last bit of its tables under another libm); the angle terms: a
 * float32 angle (inv_freq from a float32 power whose exponent is rounded, |ln w| ulps, and the
 * rounding of the position and of p * w). A dim past the rotated ones may differ by
 * u_in |x| + eta. A non-finite element never passes. */
typedef struct posenc_verify_tolerance {
    double u;           /* unit roundoff of the arithmetic */
    double u_in;        /* rounding of the input to the dump dtype (0 when none) */
    double eta;         /* absolute floor: the dtype's subnormal rounding, per operation */
    double angle;       /* 1: a correct float32 implementation's angle; 0: the recipe's
                           tables are the runtime's own (a runtime profile) */
    double scale;       /* multiplies the bound (1) */
    double extra;       /* allowance relative to the row's largest element (--tolerance; 0) */
    double floor;       /* absolute allowance added to every element (0) */
    const double *slack; /* NULL, or per frequency an absolute error allowed in cos and sin */
    double angle_acc;   /* ulps of the angle per pair index i on top of e (0): llama.cpp's
                           theta accumulated by i float32 multiplications */
} posenc_verify_tolerance;

/* The bound of a correct implementation for a rotated dump of dtype out_dt from pre-RoPE rows
 * of dtype pre_dt: angle 1 as above, angle 0 for a runtime profile's own rounding. */
POSENC_API
void posenc_verify_tolerance_init(posenc_verify_tolerance *t, posenc_dtype pre_dt,
                                  posenc_dtype out_dt, int angle);

/* What one row's comparison found. */
typedef struct posenc_verify_row_result {
    double abs_err;      /* max |reference - expected| over the finite elements */
    double rel_err;      /* abs_err / max|expected| */
    double ratio;        /* worst element error over its bound (<= 1 passes; inf: non-finite) */
    int worst_dim;       /* the element of that ratio */
    double worst_err, worst_bound, worst_value, worst_ref;
    double max_bound;    /* the largest element bound of the row */
    int n_bad;           /* elements over their bound, non-finite ones included */
    int n_nan, n_inf;    /* non-finite elements of the runtime's row */
    int first_nonfinite; /* dim of the first, or -1 */
} posenc_verify_row_result;

/* Compare the runtime's row `expected` with the recipe's rotation of `pre` at pos (cos_f/sin_f
 * from posenc_verify_recipe_cossin, or NULL to compute them) under the bound t. */
POSENC_API
void posenc_verify_row_check(const posenc_verify_recipe *r, const posenc_verify_tolerance *t,
                             int64_t pos, const double *cos_f, const double *sin_f,
                             const double *pre, const double *expected,
                             posenc_verify_row_result *out);

/* The same reduced to three numbers: *abs_err, *rel_err and *ratio of the result (scratch is
 * unused; kept for the API). */
POSENC_API
void posenc_verify_row_error(const posenc_verify_recipe *r, const posenc_verify_tolerance *t,
                             int64_t pos, const double *cos_f, const double *sin_f,
                             const double *pre, const double *expected, double *scratch,
                             double *abs_err, double *rel_err, double *ratio);

/* Distance in units in the last place of dtype dt (f16, bf16, f32, f64) between a and b, both
 * representable in dt; 0 for equal values (and for -0 against +0), UINT64_MAX when exactly one
 * is NaN or their signs differ by more than the range. */
POSENC_API
uint64_t posenc_verify_ulp_distance(double a, double b, posenc_dtype dt);

/* ---- diagnosis ---- */

/* A sampled row: pre-RoPE content, the runtime's rotated row, its position. */
typedef struct posenc_verify_sample {
    int64_t pos;
    int head;
    const double *pre;
    const double *expected;
} posenc_verify_sample;

#define POSENC_VERIFY_MAX_CANDIDATES 64

typedef struct posenc_diag_candidate {
    char name[48];          /* "style_swapped", "theta", "offset", ... */
    char description[200];  /* "--style gptj", "theta 10000 (estimated 1.0001e4)", ... */
    double max_rel_err;     /* worst row rel_err over the samples */
    double ratio;           /* worst element error over its bound; <= 1 matches */
    int explains;           /* ratio <= 1: the candidate fits within the verdict's bound */
} posenc_diag_candidate;

typedef struct posenc_diagnosis posenc_diagnosis;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_diagnosis {
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
    posenc_verify_recipe recipe; /* the best candidate's rotation (valid when best >= 0), for a
                                    caller to confirm it over every row */
    double angle_acc;       /* the bound's angle_acc it was judged with (llama.cpp's numerics) */
};
#endif

/* Try the usual mistakes on the sampled rows of one tensor (`what` is "q" or "k" for the
 * text) and name the best explanation. cfg is the config's resolved layer; seq_len as for
 * posenc_rope_params_compute; t the verdict's bound (angle 1). numerics: NULL, or the recipe of
 * the runtime profile whose numerics the rest of the dump follows (llama.cpp's, say): its
 * per-frequency drift from exact math at each row's position is allowed on top of the bound, so
 * a mistake is named at long positions under that runtime's arithmetic too. A candidate
 * explains the rows only within that bound (ratio <= 1). Candidates (lib/verify/verify_diagnose.c's
 * table, tried in this order, the earlier named on equal fit): not rotated at all; pairing
 * swapped; full head rotated although partial (mrope configs included), the exponent over
 * head_dim, partial although full; theta as estimated from the dumps and common values; a
 * position shift; the scaling ignored, longrope short/long swapped, dynamic NTK's original
 * base; attention scaling missing or a constant magnitude factor; the angle computed in bf16 or
 * f16; and, when no single one explains the rows, the compounds theta with the scaling ignored,
 * theta with a shift, and the pairing swapped with a full-head rotation. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_verify_diagnose(const posenc_rope_config *cfg, int64_t seq_len,
                                     const posenc_verify_tolerance *t,
                                     const posenc_verify_recipe *numerics,
                                     const posenc_verify_sample *rows, size_t n_rows,
                                     const char *what, posenc_diagnosis *out, posenc_error *err);

/* Per-pair angle of the rotation taking pre to expected (atan2 of the cross and dot products of
 * the pair), and the pair-norm ratio, for frequency i. Returns 0 when the pair is too small to
 * measure. */
POSENC_API
int posenc_verify_pair_angle(posenc_style style, int rotary_dim, int i, const double *pre,
                             const double *expected, double *angle, double *ratio);

/* Least-squares theta from inverse frequencies inv[i] = theta^(-2i/exp_dim) measured for i in
 * [1, n) where ok[i] is set. 0 when fewer than two are usable. */
POSENC_API
double posenc_verify_fit_theta(const double *inv, const unsigned char *ok, int n, int exp_dim);

/* ---- which runtime the rows came from ---- */

#define POSENC_VERIFY_N_PROFILES 4 /* exact, hf, vllm, ggml */

/* How one profile's rotation fits a runtime's rows: every element of every row against the
 * profile's rotation under the profile's own rounding (the bound with angle 0). */
typedef struct posenc_profile_fit {
    posenc_precision prec;
    const char *runtime;     /* "exact math", "transformers", "vLLM", "llama.cpp" (static) */
    int available;           /* 0: the profile refuses the config (why says so) */
    char why[200];
    uint64_t elements_failed, rows_failed; /* counted up to the first row off its rounding */
    double max_abs_err, max_rel_err; /* worst row against the profile's rotation */
    double ratio;            /* worst element error over the profile's own rounding */
    int matches;             /* every element within it */
    double drift;            /* the profile's own max |cos, sin - exact| at the rows' positions */
    int64_t drift_pos;       /* where it is largest */
} posenc_profile_fit;

typedef struct posenc_verify_profiles_result posenc_verify_profiles_result;
#ifdef POSENC_STATIC_LINKING_ONLY
struct posenc_verify_profiles_result {
    int n;
    posenc_profile_fit fit[POSENC_VERIFY_N_PROFILES];
    int best;                /* the matching profile with the smallest error, -1 when none */
    char explanation[600];   /* "k matches the ggml profile (llama.cpp) element for element; it
                                drifts from exact math by 3.5e-03 at position 131072, which is
                                llama.cpp's float32 accumulation, not a bug" */
};
#endif

/* The runtime profiles of cfg, in the order exact, hf, vllm, ggml: rec[k] (an array of
 * POSENC_VERIFY_N_PROFILES) is profile k's recipe when out->fit[k].available, else
 * out->fit[k].why says why that runtime does not run the config. The fits' counts are zero for
 * a pass to fill. n_ctx: llama.cpp's context size for the ggml profile (LongRoPE's long or
 * short factors); 0: seq_len. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_verify_profiles_setup(const posenc_model *m, const char *layer_type,
                                           const posenc_rope_config *cfg, int64_t seq_len,
                                           int64_t n_ctx,
                                           posenc_verify_recipe *rec,
                                           posenc_verify_profiles_result *out,
                                           posenc_error *err);

/* Once the fits are counted: matches, the best match (the smallest error; on a tie the earlier
 * profile) and the explanation (what: "q" or "k"). In a dump of dtype dt that several profiles
 * match, the explanation says the dtype cannot tell them apart. */
POSENC_API
void posenc_verify_profiles_explain(posenc_verify_profiles_result *out, const char *what,
                                    posenc_dtype dt);

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
POSENC_API POSENC_NODISCARD
posenc_status posenc_verify_alibi(const posenc_bias_config *b, posenc_alibi_convention conv,
                                  int64_t max_position, posenc_bias_check_result *out,
                                  posenc_error *err);

/* T5: buckets are monotone in |j - i| within each direction, lie in [0, num_buckets), match an
 * independent float32 evaluation of transformers' formula, and depend only on j - i (checked
 * for shifted query positions). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_verify_t5(int num_buckets, int max_distance, int bidirectional,
                               int64_t max_position, posenc_bias_check_result *out,
                               posenc_error *err);

/* Sinusoidal: PE(p + k) == R(k) PE(p) for sampled p, k, where R(k) rotates each (sin, cos)
 * column pair by the angle PE(k) holds. Tolerance 1e-12 * (1 + k w) per element. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_verify_sinusoidal(posenc_sinusoidal_variant v, int d_model, int padding_idx,
                                       int64_t max_position, uint64_t seed,
                                       posenc_bias_check_result *out, posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif
