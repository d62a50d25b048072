/* formats/report/report.h: verify reports as JSON, Markdown or a self-contained HTML page, and the
 * tree they are written from.
 *
 * The report is a cJSON tree with the schema documented in posenc-verify(1) (REPORTS):
 *   { "ok", "posenc_version",
 *     "header": { "config", "layer_type", "precision", "layout", "offset" | "positions",
 *                 "first_position", "last_position",
 *                 "pairs": [ { "label", "dumps": [ { "role", "spec", "file", "member", "dtype",
 *                                                    "shape" } ] } ] },
 *     "config": {...}, "inputs": {...}, "notes": [...],
 *     "checks": [ { "name", "ok", "info", "summary", "max_abs_err", "max_rel_err", "tolerance",
 *                   "details": { ..., "plots": [ { "title", "x_label", "y_label",
 *                                                 "tolerance", "tolerance_label",
 *                                                 "series": [ { "label", "x": [], "y": [] } ] } ] },
 *                   "diagnosis": null | { "explanation", "evidence", "candidates": [...] } } ] }
 * report_tree.c builds it (pe_report_new ... pe_report_set_header); the Markdown and
 * HTML writers read only those fields. Not installed. */
#ifndef POSENC_FORMATS_REPORT_H
#define POSENC_FORMATS_REPORT_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"
#include "posenc/rope.h"
#include "posenc/verify.h"
#include "posenc/apply.h"
#include "posenc/llamacpp.h"
#include "lib/verify/verify_checks.h"
#include "lib/verify/verify_stats.h"

typedef enum pe_report_kind {
    PE_REPORT_JSON = 0,
    PE_REPORT_MARKDOWN = 1,
    PE_REPORT_HTML = 2
} pe_report_kind;

/* ---- the tree (report_tree.c) ---- */

/* A new report: ok true, the version, empty header, config, inputs, notes and checks. Caller
 * frees with cJSON_Delete; NULL when out of memory. */
cJSON *pe_report_new(const char *version);
void pe_report_set_ok(cJSON *report, int ok);
/* Append a check; details (owned by the report afterwards) may be NULL. Non-finite numbers
 * become null. Returns the check (borrowed) so a diagnosis can be put in its place. */
cJSON *pe_report_add_check(cJSON *report, const char *name, int ok, int info, double abs_err,
                               double rel_err, double tol, const char *summary, cJSON *details);
void pe_report_add_note(cJSON *report, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* New nodes, owned by the caller until added to the tree. A number that is not finite is
 * null. */
cJSON *pe_report_number(double v);
cJSON *pe_report_numbers(const double *x, int n);
cJSON *pe_report_series(const char *label, const double *x, const double *y, int n);
/* A plot; tolerance (drawn as a line) is left out when not finite and positive. */
cJSON *pe_report_plot(const char *title, const char *x_label, const char *y_label,
                          double tolerance, const char *tolerance_label);
void pe_report_plot_add(cJSON *plot, cJSON *series);
/* The model into the report's config object: model_type, encoding, family, the registry's
 * warning, num_layers and nope_layers (RoPE), layer_type when given (lib/describe/describe.def). */
void pe_report_model(cJSON *config, const posenc_model *m, const char *layer_type);
/* One RoPE parameter set (p NULL: the config's values only), the same keys as info --json. */
cJSON *pe_report_rope(const posenc_rope_config *c, const posenc_rope_params *p);
cJSON *pe_report_diagnosis(const posenc_diagnosis *d);
/* Add to a comparison check's details "runtimes" (one object per profile: precision,
 * runtime, available, why, max_abs_err, max_rel_err, matches, drift, drift_position),
 * "runtime_match" (the best matching precision or null) and "runtime_explanation". */
void pe_report_runtimes(cJSON *details, const posenc_verify_profiles_result *r);

/* The three checks of an invariance result (lib/verify/verify.c posenc_verify_invariance), named
 * invariance, invariance_hf and tables (":LAYER" appended when layer is set), with their
 * details and plots: invariance fails above tol (normalised score deviation of the exact
 * tables); invariance_hf is information unless hf_tol is finite; tables fails when the exact
 * tables are more than 1e-12 from long double math. Returns the number of failed checks. */
int pe_report_invariance(cJSON *report, const posenc_invariance_result *res,
                             const char *source, int64_t max_position, const char *layer,
                             double tol, double hf_tol);

/* The header: what was verified. One pair per q/k comparison (verify of a config alone has
 * none); each pair lists its dumps in the order given. Strings are borrowed for the call. */
typedef struct pe_report_dump {
    const char *role;          /* "q", "k", "expect_q", "expect_k" */
    const char *spec;          /* FILE or FILE:MEMBER as given; split into file and member */
    const char *dtype;         /* posenc_dtype_name of the stored dtype */
    int ndim;
    const int64_t *shape;
} pe_report_dump;

#define PE_REPORT_PAIR_DUMPS 4

typedef struct pe_report_pair {
    const char *label;         /* NULL for the only pair */
    int n_dumps;
    pe_report_dump dumps[PE_REPORT_PAIR_DUMPS];
} pe_report_pair;

typedef struct pe_report_header {
    const char *config;
    const char *layer_type;    /* NULL: the config's only (or every) layer type */
    const char *precision;     /* how posenc's reference values are computed */
    const char *layout;        /* dump layout; with pairs only */
    const char *positions;     /* the --positions argument, or NULL for --offset */
    int64_t offset;
    int64_t first_position, last_position;
    size_t n_pairs;
    const pe_report_pair *pairs;
} pe_report_header;

/* Replace the report's header with h. */
void pe_report_set_header(cJSON *report, const pe_report_header *h);

/* ---- the checks of a verify run (report_checks.c) ---- */

/* The summary line of a comparison check of `what` ("q", "k") into out, from its statistics
 * (lib/verify/verify_stats.h) against the verdict's bound; nope: the layer (index layer) has no RoPE,
 * the reference is the unrotated row. Returns 1 when every element is finite and within its
 * bound. A dump with non-finite values is summarised by their count and first index. */
int pe_report_compare_summary(char *out, size_t len, const pe_vstats *st, const char *what,
                              int nope, int64_t layer);
/* "head 1, position 131028, dim 5" (batch too when batch is set) into out; returns out. */
char *pe_report_index(char *out, size_t len, const pe_vindex *x, int batch);
/* A comparison check's details: reference, bound (the formula), elements, elements_failed,
 * rows, rows_failed, max_ratio, worst {batch, head, position, dim, error, bound, value,
 * reference}, nonfinite {nan, inf, first {batch, head, position, dim}}, pre_nonfinite,
 * per_head [{head, max_abs_err, max_rel_err, max_ratio}], per_position_range [{from, to, rows,
 * max_abs_err, max_rel_err, max_ratio}], with ulp distances ulp {max, worst, histogram
 * [{from, to, count}]}, and one plot of the worst error over its bound against the position
 * range, the bound drawn at 1. Caller owns the node. */
cJSON *pe_report_compare_details(const pe_vstats *st, const posenc_verify_tolerance *tol,
                                 const char *what, int nope);
/* A bias-encoding check (lib/verify/verify.c posenc_verify_alibi, _t5, _sinusoidal): the summary
 * ("WHAT: N comparisons, N outside tolerance, max err X") into summary, *ok, and the details
 * {checked, violations, worst_i, worst_j} (caller owns). */
cJSON *pe_report_bias_details(const posenc_bias_check_result *r, const char *what, char *summary,
                              size_t len, int *ok);
/* One GGUF finding (lib/runtimes/llamacpp_check.c): its summary and details {key, argument, expected,
 * found, consequence} (caller owns). */
cJSON *pe_report_gguf_details(const posenc_gguf_finding *f, char *summary, size_t len);
/* verify --gguf: what convert_hf_to_gguf.py writes for m's layer_type (NULL: the config's) against
 * the RoPE keys and tensors of the GGUF file at path (lib/runtimes/llamacpp_check.c compares), one check
 * per key or tensor added to report, inputs' gguf and gguf_architecture set. *n_checks and
 * *failed grow by the checks added and those that failed. */
posenc_status pe_report_gguf_checks(cJSON *report, cJSON *inputs, const posenc_model *m,
                                    const char *layer_type, const char *path,
                                    int64_t original_max_position, int *n_checks, int *failed,
                                    posenc_error *err);
/* The text summary of a report: a line per check (ok, FAIL or info; its diagnosis), per q/k
 * pair (a failed one with its explanation) and per note, and the result line. Caller frees with free(); NULL when out of memory. */
char *pe_report_text(const cJSON *report, int failed, int n_checks);

/* What a comparison of one q/k pair's dumps verified, for pe_report_set_dumps. Strings and
 * arrays are borrowed for the call. */
typedef struct pe_report_dumps {
    const char *config, *layer_type, *layout;
    const char *positions;                  /* --positions, or NULL for offset */
    int64_t offset, first_position, last_position, max_position;
    int rotated;
    posenc_precision prec;
    int held;                               /* --precision holds the dumps to prec */
    const char *ggml_json;                  /* with POSENC_PREC_GGML: llama.cpp's arguments */
    const char *spec[4];                    /* q, k, expect_q, expect_k (NULL: not given) */
    const posenc_array_info *info[4];       /* their stored arrays */
    const posenc_apply_shape *q, *k;        /* q's and k's shapes through the layout */
} pe_report_dumps;
/* The header (one pair, its dumps) and the inputs (specs, layout, precision, dtypes, batch,
 * heads_q, heads_k, seq, rotated, first_position, max_position_in_dump) of a comparison. */
void pe_report_set_dumps(cJSON *report, cJSON *inputs, const pe_report_dumps *x);

/* A row of the report's "pairs" (created on the first call): group, layer (null when < 0),
 * layer_type (null when NULL), has_rope. Borrowed; the caller adds rope, ok, explanation
 * (pe_report_pair_explain). */
cJSON *pe_report_pair_row(cJSON *report, const char *group, int64_t layer,
                          const char *layer_type, int has_rope);
/* A run over the pairs of a container: inputs' dumps, expect (NULL: none), pairs (n) and
 * pairs_glob (NULL: none); config.rope: every layer type's parameters keyed by layer type when
 * the model has several, else the parameters of layer_type (NULL: the only set). Each pair's row
 * then says which it used. */
void pe_report_pairs_run(cJSON *report, cJSON *inputs, const posenc_model *m,
                         const char *layer_type, const char *qpath, const char *epath, size_t n,
                         const char *glob);
/* After one pair is verified: move the header's only pair, labelled, to header_pairs. */
void pe_report_pair_header(cJSON *report, cJSON *header_pairs, const char *label);
/* The row's "checks": the names of the report's checks from index first on. */
void pe_report_pair_checks(cJSON *report, cJSON *row, int first);
/* A failed pair's row without an explanation (no other layer type's parameters pass it, or
 * none were tried): its failing checks from index first on, each as "NAME: " and its
 * diagnosis' explanation (else its summary), joined by "; ". Passing rows are left alone. */
void pe_report_pair_explain(cJSON *report, cJSON *row, int first);
/* 1 when the comparison check of `what` ("q" or "k": expect_q@..., rotated_k@...) from check
 * index first on passed, 0 when it failed, -1 when there is none. */
int pe_report_compare_ok(const cJSON *report, int first, const char *what);

/* The notes on what invariance means for the config's scaling at length: dumps 1 (a comparison
 * of dumps: dynamic NTK's base at that length), 0 (a config alone: dynamic NTK across lengths,
 * LongRoPE's factor set). */
void pe_report_rope_notes(cJSON *report, const posenc_rope_config *cfg,
                          const posenc_rope_params *p, int64_t length, int dumps);

/* config.bias of a model that does not rotate: heads, max_positions and the parameters its
 * checks ran with (lib/verify/verify_checks.h): alibi_kind; num_buckets, max_distance, is_decoder;
 * variant, d_model. */
void pe_report_bias_config(cJSON *report, const pe_bias_run *run);
/* verify of a model without RoPE: the checks of lib/verify/verify_checks.c pe_verify_bias_run (ALiBi,
 * T5, sinusoidal with var, NULL: the config's variant) added to report with its config, or one
 * informational "encoding" check when the encoding has nothing relative to verify. *n_checks
 * and *failed grow by the checks added and those that failed. */
posenc_status pe_report_bias_checks(cJSON *report, const posenc_model *m, int64_t max_position, const posenc_sinusoidal_variant *var,
                                    uint64_t seed, int *n_checks, int *failed,
                                    posenc_error *err);

/* What a run checks: the header of a config alone (its precision line: gguf, invariance or
 * the bias checks; a comparison of dumps replaces it), config.path and the model
 * (pe_report_model), and the model's notes. */
void pe_report_set_config(cJSON *report, const char *path, const posenc_model *m,
                          const char *layer_type, int gguf);

/* ---- the writers (report.c) ---- */

/* By extension: .json; .md / .markdown; .html / .htm. POSENC_EINVAL naming the file otherwise. */
posenc_status pe_report_kind_of(const char *path, pe_report_kind *out, posenc_error *err);

/* The report as text; caller frees with free(). NULL when out of memory. */
char *pe_report_json(const cJSON *report);
char *pe_report_markdown(const cJSON *report);
char *pe_report_html(const cJSON *report);

/* One plot of the tree (title, labels, tolerance, series) as an inline SVG appended to b
 * (report_svg.c): log10 x, log10 y; exact zeros on a floor decade labelled 0 with a note; the
 * tolerance as a dashed line; each point a circle with data-x and data-y. */
struct pe_strbuf;
void pe_report_svg(struct pe_strbuf *b, const cJSON *plot);

/* Write the report to path in the kind its extension names, through a temporary file beside
 * it that is renamed into place, so a failed write leaves no partial file. "-" writes the JSON
 * report to stdout. */
posenc_status pe_report_write(const cJSON *report, const char *path, posenc_error *err);
/* pe_report_write of every path as one unit: the files all replaced or none (the old ones
 * kept), then "-" (if among them) on stdout. */
posenc_status pe_report_write_all(const cJSON *report, const char *const *paths, size_t n,
                                  posenc_error *err);

#endif
