/* lib/verify/verify_stats.h: the statistics of one comparison pass of posenc verify.
 *
 * A pass takes the head vectors of one tensor (q or k) in any order, with their (batch, head,
 * seq index) coordinates: the pre-RoPE row and the runtime's rotated row (a comparison), or the
 * pre-RoPE row alone (samples for the invariance check), or the rotated row alone (--rotated:
 * the first row of each head, rotated back with the exact tables, stands for the content of
 * every row of that head, and the bound of that first row is added to every later one).
 *
 * Every element of every row is held to the verdict's bound (posenc/verify.h,
 * posenc_verify_tolerance: a correct implementation's arithmetic) around the reference
 * recipe's rotation, and to each runtime profile's own rounding around that profile's
 * rotation; non-finite values are counted with their first index; with a ulp reference (the
 * rotation posenc apply computes under a precision) each element's distance in ulps is binned.
 * It also keeps a bounded set of sampled rows for the diagnosis and the invariance check.
 * Memory is bounded by the head count, the sequence length (one cos/sin row per position and
 * recipe, up to PE_VPASS_CACHE_BYTES) and the samples, never by the dump size.
 *
 * Pure computation (no I/O, no printing): formats/engines/rows.c streams the dumps through it and
 * formats/report/report_checks.c turns the result into the report. Internal (pe_). */
#ifndef PE_VERIFY_STATS_H
#define PE_VERIFY_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/apply.h"
#include "posenc/model.h"
#include "posenc/verify.h"

#define PE_VSTATS_BUCKETS 65                  /* position ranges: {0}, [1, 1], [2, 3], [4, 7]... */
#define PE_VPASS_SAMPLE_SEQ 48                /* sampled sequence indices at most */
#define PE_VPASS_MAX_SAMPLES (2 * PE_VPASS_SAMPLE_SEQ + 4)
#define PE_VPASS_CACHE_BYTES ((uint64_t)64 << 20) /* per-position cos/sin kept in memory */
#define PE_ULP_BINS 34                        /* 0, 1, 2-3, 4-7, ..., 2^31 and more, NaN */

/* An element's index. */
typedef struct pe_vindex {
    int64_t b, h, pos, dim;
} pe_vindex;

/* One runtime profile, followed over every row while it matches (its own rounding); counting
 * stops at its first row off it, so a profile that does not match has rows_bad 1 and the
 * elements of that row, unless the rows are held to it (pe_vpass_spec.held): then every row. */
typedef struct pe_vprof {
    int on;                                  /* the profile was evaluated */
    uint64_t elems_bad, rows_bad;
    double max_abs, max_rel, max_ratio;
    double drift;                            /* max |cos, sin - exact| at the rows' positions */
    int64_t drift_pos;
} pe_vprof;

/* What one pass measured, against the verdict's bound around the reference recipe. */
typedef struct pe_vstats {
    double max_abs, max_rel, max_ratio;      /* worst over the rows */
    uint64_t rows, bad;                      /* rows compared, rows with an element out of bound */
    uint64_t elems, elems_bad;               /* elements compared, out of bound */
    pe_vindex worst;                         /* the element of the worst ratio */
    double worst_err, worst_bound, worst_value, worst_ref;
    int64_t worst_b, worst_h, worst_pos;     /* = worst.b, .h, .pos */
    uint64_t nan, inf;                       /* non-finite values in the runtime's rows */
    pe_vindex first_nonfinite;
    uint64_t pre_nonfinite;                  /* non-finite values in the pre-RoPE rows */
    pe_vindex first_pre_nonfinite;
    int64_t heads;
    double *head_abs, *head_rel, *head_ratio; /* heads of each: worst per head */
    double b_abs[PE_VSTATS_BUCKETS], b_rel[PE_VSTATS_BUCKETS], b_ratio[PE_VSTATS_BUCKETS];
    uint64_t b_rows[PE_VSTATS_BUCKETS];      /* per position range (pe_vstats_bucket) */
    pe_vprof prof[POSENC_VERIFY_N_PROFILES];
    int has_ulp;                             /* ulp distances against the ulp reference */
    uint64_t ulp_hist[PE_ULP_BINS];
    uint64_t max_ulp;
    pe_vindex worst_ulp;
} pe_vstats;

/* The bin of a ulp distance in pe_vstats.ulp_hist: 0 for 0, k for [2^(k-1), 2^k - 1] up to
 * PE_ULP_BINS - 2, the last for UINT64_MAX (a NaN against a number). */
int pe_vstats_ulp_bin(uint64_t d);

/* The position range of pos: 0 for pos <= 0, else the bit length of pos (capped at
 * PE_VSTATS_BUCKETS - 1); range b > 0 holds [2^(b-1), 2^b - 1]. */
int pe_vstats_bucket(int64_t pos);
void pe_vstats_bucket_range(int b, int64_t *lo, int64_t *hi);

/* The sequence indices a pass samples, for a sequence of seq >= 1 tokens: the first 8, then
 * every floor(8 * 1.35^k) below seq until PE_VPASS_SAMPLE_SEQ - 1 are kept, and the last.
 * keep holds seq bytes, set to 0 or 1. Returns how many are kept. */
int pe_vpass_sample_plan(int64_t seq, unsigned char *keep);

typedef struct pe_vpass pe_vpass;

/* What a pass is given. positions: token positions with rows 1 and naxes 1 (values NULL: offset
 * + s). keep: the sample plan (borrowed, seq bytes). share: another pass of the same recipes and
 * positions whose cos/sin caches this one reads (it must outlive this one), or NULL. */
typedef struct pe_vpass_spec {
    const char *what;                        /* "q" or "k" (borrowed) */
    const posenc_verify_recipe *rec;         /* the reference (exact tables; borrowed) */
    posenc_verify_tolerance tol;             /* the verdict's bound (angle 1) */
    /* the runtime profiles, NULL for one that does not run the config (borrowed), and their
     * own rounding (angle 0) */
    const posenc_verify_recipe *prof[POSENC_VERIFY_N_PROFILES];
    posenc_verify_tolerance ptol;
    int held;                                /* the profile (index) the rows are held to, counted
                                                over every row; -1: none */
    /* NULL, or the rotation the ulp distances are taken against: posenc apply's under a
     * precision for pre_dt rows, written in cmp_dt (borrowed) */
    const posenc_apply *ulp;
    /* NULL, or two recipes whose per-frequency table difference at each row's position is
     * allowed on top of the bound (a diagnosis confirmed under llama.cpp's numerics: its tables
     * and the config's exact ones; borrowed) */
    const posenc_verify_recipe *slack_a, *slack_b;
    posenc_dtype pre_dt, cmp_dt;
    posenc_apply_positions positions;
    int64_t batch, heads, seq, head_dim;
    int has_pre, has_cmp;                    /* rows come with pre-RoPE / rotated values */
    const unsigned char *keep;
    const pe_vpass *share;
} pe_vpass_spec;

/* Caller frees *out with pe_vpass_free. POSENC_EINVAL for a spec without rows (neither pre nor
 * cmp), POSENC_ENOMEM when out of memory. */
posenc_status pe_vpass_new(const pe_vpass_spec *s, pe_vpass **out, posenc_error *err);

/* One head vector at (b, h, seq index s): pre (head_dim doubles, or NULL when the spec has no
 * pre-RoPE rows) and cmp (the runtime's rotated row, or NULL when it has none). Compares and
 * samples. POSENC_ENOMEM when a sample cannot be kept. */
posenc_status pe_vpass_row(pe_vpass *p, int64_t b, int64_t h, int64_t s, const double *pre,
                           const double *cmp, posenc_error *err);

/* 1 when the pass compares nothing and holds every sample it wants: the rest of the dump need
 * not be read. */
int pe_vpass_done(const pe_vpass *p);

/* Borrowed, valid until p is freed. */
const pe_vstats *pe_vpass_stats(const pe_vpass *p);
const posenc_verify_tolerance *pe_vpass_tolerance(const pe_vpass *p);
/* The sampled rows: head 0 and the last head of batch entry 0 at the sampled sequence indices
 * (pre-RoPE content, the rotated row when compared, the position); borrowed. */
size_t pe_vpass_samples(const pe_vpass *p, const posenc_verify_sample **rows);

void pe_vpass_free(pe_vpass *p); /* NULL is fine */

/* The invariance check on sampled pre-RoPE rows: head 0 of q's samples against head 0 of k's,
 * up to 96 (q, k) pairs (q sample t % nq with k sample (t / nq + 7t) % nk), checked with
 * posenc_verify_invariance under params up to max_position. POSENC_EINVAL when a pass has no
 * pre-RoPE samples of head 0. */
posenc_status pe_vpass_invariance(const pe_vpass *q, const pe_vpass *k,
                                  const posenc_rope_params *params, int64_t max_position,
                                  posenc_invariance_result *out, posenc_error *err);

/* ---- the layer a pair of a multi-layer dump was rotated as (verify_profiles.c) ---- */

/* One other way a runtime may have treated a layer. */
typedef struct pe_layer_alt {
    posenc_rope_config cfg;   /* the parameters to check the pair with */
    const char *layer_type;   /* the set they come from (borrowed from the model), or NULL */
    int nope;                 /* 1: not rotated at all */
    char what[160];           /* "not rotated", "rotated with layer type 'X'", "rotated with the
                                 config's RoPE" */
} pe_layer_alt;

/* The alternatives to a pair's own treatment (layer_type, NULL for the config's only set;
 * nope, the layer has no RoPE): every other layer type's parameters, the config's single set,
 * and no rotation, in that order, leaving out the pair's own and any whose head_dim is not
 * head_dim (a NoPE alternative takes the first layer type's config). Up to cap into out;
 * returns how many. */
size_t pe_verify_layer_alternatives(const posenc_model *m, const char *layer_type, int nope,
                                    int head_dim, pe_layer_alt *out, size_t cap);

/* The explanation of a failed pair from what q and k matched under (found_q, found_k: an
 * alternative's `what`, or "" when none did): text "q and k match when X" or "q matches when
 * X, k matches when Y", and said, what the config says of the layer ("layer 3 is
 * full_attention", "layer 3 has no RoPE", "the config rotates it"). Returns 0 (text unset)
 * when neither matched. */
int pe_verify_layer_explanation(const char *found_q, const char *found_k, int nope,
                                int64_t layer, const char *layer_type, char *text, size_t tlen,
                                char *said, size_t slen);

/* Copy a pass's per-profile counts into fits (from posenc_verify_profiles_setup) and explain
 * them (posenc_verify_profiles_explain) for the rows of dtype dt. */
void pe_vpass_profiles(const pe_vpass *p, posenc_verify_profiles_result *fits, posenc_dtype dt);

#endif
