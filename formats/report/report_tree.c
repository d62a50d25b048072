/* report_tree.c: builds verify's report tree, the schema report.h documents: the root, the
 * header (config, dumps, members, layout, positions, precision; a list of q/k pairs), checks,
 * notes, plots, the resolved RoPE parameters and the diagnosis. cmd/verify.c fills it; the
 * writers in report.c read it. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "formats/report/describe_out.h"
#include "posenc/io.h"
#include "formats/report/report.h"

cJSON *pe_report_number(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}


cJSON *pe_report_new(const char *version)
{
    cJSON *r = cJSON_CreateObject();
    if (!r)
        return NULL;
    cJSON_AddBoolToObject(r, "ok", 1);
    cJSON_AddStringToObject(r, "posenc_version", version);
    cJSON_AddObjectToObject(r, "header");
    cJSON_AddObjectToObject(r, "config");
    cJSON_AddObjectToObject(r, "inputs");
    cJSON_AddArrayToObject(r, "notes");
    cJSON_AddArrayToObject(r, "checks");
    return r;
}

void pe_report_set_ok(cJSON *report, int ok)
{
    cJSON_ReplaceItemInObjectCaseSensitive(report, "ok", cJSON_CreateBool(ok));
}

cJSON *pe_report_add_check(cJSON *report, const char *name, int ok, int info, double abs_err,
                               double rel_err, double tol, const char *summary, cJSON *details)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddBoolToObject(c, "ok", ok);
    cJSON_AddBoolToObject(c, "info", info);
    cJSON_AddStringToObject(c, "summary", summary);
    cJSON_AddItemToObject(c, "max_abs_err", pe_report_number(abs_err));
    cJSON_AddItemToObject(c, "max_rel_err", pe_report_number(rel_err));
    cJSON_AddItemToObject(c, "tolerance", pe_report_number(tol));
    cJSON_AddItemToObject(c, "details", details ? details : cJSON_CreateObject());
    cJSON_AddNullToObject(c, "diagnosis");
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(report, "checks"), c);
    return c;
}

void pe_report_add_note(cJSON *report, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(report, "notes"),
                         cJSON_CreateString(buf));
}

cJSON *pe_report_numbers(const double *x, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, pe_report_number(x[i]));
    return a;
}

cJSON *pe_report_series(const char *label, const double *x, const double *y, int n)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "label", label);
    cJSON_AddItemToObject(s, "x", pe_report_numbers(x, n));
    cJSON_AddItemToObject(s, "y", pe_report_numbers(y, n));
    return s;
}

cJSON *pe_report_plot(const char *title, const char *x_label, const char *y_label,
                          double tolerance, const char *tolerance_label)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "title", title);
    cJSON_AddStringToObject(p, "x_label", x_label);
    cJSON_AddStringToObject(p, "y_label", y_label);
    if (isfinite(tolerance) && tolerance > 0) {
        cJSON_AddNumberToObject(p, "tolerance", tolerance);
        cJSON_AddStringToObject(p, "tolerance_label", tolerance_label ? tolerance_label : "tolerance");
    }
    cJSON_AddItemToObject(p, "series", cJSON_CreateArray());
    return p;
}

void pe_report_plot_add(cJSON *plot, cJSON *series)
{
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(plot, "series"), series);
}

void pe_report_model(cJSON *config, const posenc_model *m, const char *layer_type)
{
    pe_desc *d = pe_describe_new();
    pe_describe_model(d, m);
    if (layer_type)
        pe_describe_str(d, PE_DF_LAYER_TYPE, layer_type);
    pe_describe_json(d, PE_DV_REPORT, config);
    pe_describe_free(d);
}

/* The resolved RoPE parameters: the report view of the one description (lib/describe/describe.def),
 * with p the values at the run's sequence length (exact precision). */
cJSON *pe_report_rope(const posenc_rope_config *c, const posenc_rope_params *p)
{
    cJSON *o = cJSON_CreateObject();
    pe_desc *d = pe_describe_new();
    if (o && d) {
        pe_describe_rope(d, c, p, NULL, POSENC_PREC_EXACT, p ? p->seq_len : 0);
        pe_describe_json(d, PE_DV_REPORT, o);
    }
    pe_describe_free(d);
    return o;
}

void pe_report_runtimes(cJSON *details, const posenc_verify_profiles_result *r)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < r->n; i++) {
        const posenc_profile_fit *f = &r->fit[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "precision", posenc_precision_name(f->prec));
        cJSON_AddStringToObject(e, "runtime", f->runtime);
        cJSON_AddBoolToObject(e, "available", f->available);
        if (!f->available) {
            cJSON_AddStringToObject(e, "why", f->why);
        } else {
            cJSON_AddItemToObject(e, "max_abs_err", pe_report_number(f->max_abs_err));
            cJSON_AddItemToObject(e, "max_rel_err", pe_report_number(f->max_rel_err));
            cJSON_AddNumberToObject(e, "elements_failed", (double)f->elements_failed);
            cJSON_AddNumberToObject(e, "rows_failed", (double)f->rows_failed);
            cJSON_AddItemToObject(e, "max_ratio", pe_report_number(f->ratio));
            cJSON_AddBoolToObject(e, "matches", f->matches);
            cJSON_AddItemToObject(e, "drift", pe_report_number(f->drift));
            cJSON_AddNumberToObject(e, "drift_position", (double)f->drift_pos);
        }
        cJSON_AddItemToArray(a, e);
    }
    cJSON_AddItemToObject(details, "runtimes", a);
    if (r->best >= 0)
        cJSON_AddStringToObject(details, "runtime_match",
                                posenc_precision_name(r->fit[r->best].prec));
    else
        cJSON_AddNullToObject(details, "runtime_match");
    cJSON_AddStringToObject(details, "runtime_explanation", r->explanation);
}

/* the diagnosis' order (lib/verify/verify_diagnose.c): candidates within the bound first, closest fit
 * first; then the others by ratio */
static int cand_before(const posenc_diag_candidate *a, const posenc_diag_candidate *b)
{
    if (a->explains != b->explains)
        return a->explains;
    return a->explains ? a->max_rel_err < b->max_rel_err : a->ratio < b->ratio;
}

cJSON *pe_report_diagnosis(const posenc_diagnosis *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "explanation", d->explanation);
    cJSON_AddStringToObject(o, "evidence", d->evidence);
    cJSON_AddBoolToObject(o, "explained", d->found);
    cJSON_AddStringToObject(o, "best", d->best >= 0 ? d->cand[d->best].name : "");
    if (d->theta_estimate > 0)
        cJSON_AddNumberToObject(o, "theta_estimate", d->theta_estimate);
    else
        cJSON_AddNullToObject(o, "theta_estimate");
    cJSON_AddNumberToObject(o, "magnitude_ratio", d->scale_estimate);
    if (d->shift_valid)
        cJSON_AddNumberToObject(o, "position_shift_estimate", (double)d->shift_estimate);
    else
        cJSON_AddNullToObject(o, "position_shift_estimate");
    cJSON_AddItemToObject(o, "config_max_rel_err", pe_report_number(d->config_rel_err));
    /* candidates, best first (a stable sort: on equal fit the earlier rule stays first) */
    int order[POSENC_VERIFY_MAX_CANDIDATES];
    for (int i = 0; i < d->n_cand; i++)
        order[i] = i;
    for (int i = 1; i < d->n_cand; i++)
        for (int j = i; j > 0 && cand_before(&d->cand[order[j]], &d->cand[order[j - 1]]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < d->n_cand; i++) {
        const posenc_diag_candidate *c = &d->cand[order[i]];
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "name", c->name);
        cJSON_AddStringToObject(k, "description", c->description);
        cJSON_AddItemToObject(k, "max_rel_err", pe_report_number(c->max_rel_err));
        cJSON_AddItemToObject(k, "ratio", pe_report_number(c->ratio));
        cJSON_AddBoolToObject(k, "explains", c->explains);
        cJSON_AddItemToArray(a, k);
    }
    cJSON_AddItemToObject(o, "candidates", a);
    return o;
}

static cJSON *dump_json(const pe_report_dump *d)
{
    cJSON *o = cJSON_CreateObject();
    char path[4096], member[POSENC_NAME_MAX];
    cJSON_AddStringToObject(o, "role", d->role);
    cJSON_AddStringToObject(o, "spec", d->spec);
    if (posenc_spec_split(d->spec, path, sizeof path, member, sizeof member, NULL) == POSENC_OK &&
        member[0]) {
        cJSON_AddStringToObject(o, "file", path);
        cJSON_AddStringToObject(o, "member", member);
    } else {
        cJSON_AddStringToObject(o, "file", d->spec);
        cJSON_AddNullToObject(o, "member");
    }
    cJSON_AddStringToObject(o, "dtype", d->dtype ? d->dtype : "");
    cJSON *sh = cJSON_AddArrayToObject(o, "shape");
    for (int i = 0; i < d->ndim; i++)
        cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)d->shape[i]));
    return o;
}

void pe_report_set_header(cJSON *report, const pe_report_header *h)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "config", h->config);
    if (h->layer_type)
        cJSON_AddStringToObject(o, "layer_type", h->layer_type);
    else
        cJSON_AddNullToObject(o, "layer_type");
    cJSON_AddStringToObject(o, "precision", h->precision ? h->precision : "");
    if (h->n_pairs) {
        cJSON_AddStringToObject(o, "layout", h->layout ? h->layout : "");
        if (h->positions) {
            cJSON_AddNullToObject(o, "offset");
            cJSON_AddStringToObject(o, "positions", h->positions);
        } else {
            cJSON_AddNumberToObject(o, "offset", (double)h->offset);
            cJSON_AddNullToObject(o, "positions");
        }
        cJSON_AddNumberToObject(o, "first_position", (double)h->first_position);
        cJSON_AddNumberToObject(o, "last_position", (double)h->last_position);
    }
    cJSON *pairs = cJSON_AddArrayToObject(o, "pairs");
    for (size_t i = 0; i < h->n_pairs; i++) {
        const pe_report_pair *p = &h->pairs[i];
        cJSON *pj = cJSON_CreateObject();
        if (p->label)
            cJSON_AddStringToObject(pj, "label", p->label);
        else
            cJSON_AddNullToObject(pj, "label");
        cJSON *dumps = cJSON_AddArrayToObject(pj, "dumps");
        for (int j = 0; j < p->n_dumps && j < PE_REPORT_PAIR_DUMPS; j++)
            cJSON_AddItemToArray(dumps, dump_json(&p->dumps[j]));
        cJSON_AddItemToArray(pairs, pj);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(report, "header", o);
}

/* ---- the invariance checks ---- */

/* pe_report_add_check, returning 1 when the check failed */
static int add_check(cJSON *report, const char *name, int ok, int info, double abs_err,
                     double rel_err, double tol, const char *summary, cJSON *details)
{
    pe_report_add_check(report, name, ok, info, abs_err, rel_err, tol, summary, details);
    return !ok;
}

int pe_report_invariance(cJSON *report, const posenc_invariance_result *res,
                             const char *source, int64_t max_position, const char *layer,
                             double tol, double hf_tol)
{
    int failed = 0;
    char nm[3][96];
    snprintf(nm[0], sizeof nm[0], "invariance%s%s", layer ? ":" : "", layer ? layer : "");
    snprintf(nm[1], sizeof nm[1], "invariance_hf%s%s", layer ? ":" : "", layer ? layer : "");
    snprintf(nm[2], sizeof nm[2], "tables%s%s", layer ? ":" : "", layer ? layer : "");
    int n = res->n_offsets;
    double x[POSENC_VERIFY_MAX_OFFSETS];
    for (int i = 0; i < n; i++)
        x[i] = (double)res->offset[i];
    char summary[512];
    /* worst offset of each mode */
    int we = 0, wh = 0;
    for (int i = 0; i < n; i++) {
        if (res->exact.dev[i] > res->exact.dev[we])
            we = i;
        if (res->hf.dev[i] > res->hf.dev[wh])
            wh = i;
    }
    for (int mode = 0; mode < 2; mode++) {
        const posenc_invariance_mode *m = mode == 0 ? &res->exact : &res->hf;
        cJSON *det = cJSON_CreateObject();
        cJSON_AddStringToObject(det, "source", source);
        cJSON_AddStringToObject(det, "tables", mode == 0
                                                   ? "posenc exact, rounded once to float32"
                                                   : "transformers' float32 pipeline");
        cJSON_AddStringToObject(det, "normalisation", "|s(o) - s(0)| / (|q| |k| / sqrt(head_dim))");
        cJSON_AddNumberToObject(det, "max_position", (double)max_position);
        cJSON_AddNumberToObject(det, "scores", (double)res->scores);
        cJSON *offs = cJSON_CreateArray();
        for (int i = 0; i < n; i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "offset", x[i]);
            cJSON_AddItemToObject(e, "deviation", pe_report_number(m->dev[i]));
            cJSON_AddItemToObject(e, "rms_deviation", pe_report_number(m->rms[i]));
            cJSON_AddItemToObject(e, "band_high", pe_report_number(m->band[i][0]));
            cJSON_AddItemToObject(e, "band_mid", pe_report_number(m->band[i][1]));
            cJSON_AddItemToObject(e, "band_low", pe_report_number(m->band[i][2]));
            cJSON_AddItemToObject(e, "table_err", pe_report_number(m->table_err[i]));
            cJSON_AddItemToArray(offs, e);
        }
        cJSON_AddItemToObject(det, "offsets", offs);
        cJSON *bands = cJSON_CreateObject();
        cJSON_AddItemToObject(bands, "high", pe_report_number(m->band_max[0]));
        cJSON_AddItemToObject(bands, "mid", pe_report_number(m->band_max[1]));
        cJSON_AddItemToObject(bands, "low", pe_report_number(m->band_max[2]));
        cJSON_AddItemToObject(det, "bands", bands);
        cJSON_AddItemToObject(det, "max_table_err", pe_report_number(m->max_table_err));
        cJSON *plots = cJSON_CreateArray();
        if (mode == 0) {
            cJSON *pl = pe_report_plot("score deviation against offset", "offset",
                                           "max |s(o) - s(0)| / (|q||k|/sqrt d)", tol,
                                           "exact tol.");
            cJSON *ser = cJSON_GetObjectItemCaseSensitive(pl, "series");
            cJSON_AddItemToArray(ser, pe_report_series("exact tables (f32)", x, res->exact.dev, n));
            cJSON_AddItemToArray(ser, pe_report_series("transformers f32 tables", x, res->hf.dev, n));
            cJSON_AddItemToArray(plots, pl);
            pl = pe_report_plot("table error against long double", "offset",
                                    "max |cos, sin - exact|", NAN, NULL);
            ser = cJSON_GetObjectItemCaseSensitive(pl, "series");
            cJSON_AddItemToArray(ser, pe_report_series("exact tables (f32)", x, res->exact.table_err, n));
            cJSON_AddItemToArray(ser, pe_report_series("transformers f32 tables", x, res->hf.table_err, n));
            cJSON_AddItemToArray(plots, pl);
        }
        cJSON *pl = pe_report_plot(mode == 0 ? "per frequency band, exact tables"
                                                 : "per frequency band, transformers f32 tables",
                                       "offset", "normalised deviation", NAN, NULL);
        cJSON *ser = cJSON_GetObjectItemCaseSensitive(pl, "series");
        static const char *bn[3] = { "high frequencies", "mid frequencies", "low frequencies" };
        for (int b = 0; b < 3; b++) {
            double y[POSENC_VERIFY_MAX_OFFSETS];
            for (int i = 0; i < n; i++)
                y[i] = m->band[i][b];
            cJSON_AddItemToArray(ser, pe_report_series(bn[b], x, y, n));
        }
        cJSON_AddItemToArray(plots, pl);
        cJSON_AddItemToObject(det, "plots", plots);
        int w = mode == 0 ? we : wh;
        /* where the worst deviation is: "at offset O", or that no offset moved the scores */
        char where[128];
        if (n < 2)
            snprintf(where, sizeof where, "nothing to compare (no offset besides 0 below %" PRId64
                     ")", max_position);
        else if (m->max_dev == 0)
            snprintf(where, sizeof where, "at none of %d offsets up to %" PRId64, n - 1,
                     res->offset[n - 1]);
        else
            snprintf(where, sizeof where, "at offset %" PRId64, res->offset[w]);
        if (mode == 0) {
            int ok = m->max_dev <= tol;
            snprintf(summary, sizeof summary,
                     "scores depend only on m - n: max deviation %.3g %s"
                     " (rms %.3g; exact tables in float32; tolerance %.3g)",
                     m->max_dev, where, m->rms[w], tol);
            failed += add_check(report, nm[0], ok, 0, m->max_abs, m->max_dev, tol, summary, det);
        } else {
            int info = !isfinite(hf_tol);
            int ok = info || m->max_dev <= hf_tol;
            /* transformers rounds position_ids to float32 (.float()): above 2^24 not every
             * position is an integer there, which is its behaviour, not posenc's */
            int f32pos = max_position - 1 > ((int64_t)1 << 24);
            snprintf(summary, sizeof summary,
                     "transformers' float32 tables drift by %.3g %s"
                     " (rms %.3g; high %.3g, mid %.3g, low frequencies %.3g)%s%s",
                     m->max_dev, where, m->rms[w], m->band_max[0], m->band_max[1],
                     m->band_max[2],
                     f32pos ? "; positions above 2^24 are rounded to float32 as transformers' "
                              "position_ids are" : "",
                     info ? "; information, see --hf-tolerance" : "");
            failed += add_check(report, nm[1], ok, info, m->max_abs, m->max_dev,
                      info ? NAN : hf_tol, summary, det);
        }
    }
    /* the tables themselves against long double */
    double ttol = 1e-12;
    cJSON *det = cJSON_CreateObject();
    cJSON_AddItemToObject(det, "exact_f64_err", pe_report_number(res->exact_table_f64_err));
    cJSON_AddItemToObject(det, "exact_f32_err", pe_report_number(res->exact.max_table_err));
    cJSON_AddItemToObject(det, "hf_f32_err", pe_report_number(res->hf.max_table_err));
    snprintf(summary, sizeof summary,
             "exact tables within %.3g of long double math (%.3g after rounding to float32); "
             "transformers' float32 tables within %.3g",
             res->exact_table_f64_err, res->exact.max_table_err, res->hf.max_table_err);
    failed += add_check(report, nm[2], res->exact_table_f64_err <= ttol, 0, res->exact_table_f64_err,
              res->exact_table_f64_err, ttol, summary, det);
    return failed;
}
