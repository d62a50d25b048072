/* report_checks.c: the checks of a verify run in the report tree (report.h): a comparison of a
 * runtime's rotated rows (its summary, per-head and per-position-range errors, the plot), a
 * bias-encoding check, a GGUF finding; and the text summary printed from the tree. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/report/report.h"
#include "formats/io/strbuf.h"

char *pe_report_index(char *out, size_t len, const pe_vindex *x, int batch)
{
    int n = 0;
    if (batch)
        n = snprintf(out, len, "batch %" PRId64 ", ", x->b);
    if (n >= 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, "head %" PRId64 ", position %" PRId64 ", dim %" PRId64,
                 x->h, x->pos, x->dim);
    return out;
}

int pe_report_compare_summary(char *out, size_t len, const pe_vstats *st, const char *what,
                              int nope, int64_t layer)
{
    char at[128];
    if (st->nan + st->inf || st->pre_nonfinite) {
        const pe_vindex *f = st->nan + st->inf ? &st->first_nonfinite : &st->first_pre_nonfinite;
        if (st->nan + st->inf)
            snprintf(out, len, "%s has %" PRIu64 " NaN and %" PRIu64 " Inf values, first at %s",
                     what, st->nan, st->inf, pe_report_index(at, sizeof at, f, f->b != 0));
        else
            snprintf(out, len, "the pre-RoPE %s has %" PRIu64 " non-finite values, first at %s: "
                     "nothing can be checked there", what, st->pre_nonfinite,
                     pe_report_index(at, sizeof at, f, f->b != 0));
        return 0;
    }
    int ok = st->elems_bad == 0 && st->rows > 0;
    pe_report_index(at, sizeof at, &st->worst, st->worst.b != 0);
    if (nope && ok)
        snprintf(out, len, "%s is not rotated, as layer %" PRId64 " has no RoPE: every element of "
                 "%" PRIu64 " rows equals the pre-RoPE rows to the dtype's rounding", what, layer,
                 st->rows);
    else if (nope)
        snprintf(out, len, "%s differs from the unrotated %s in %" PRIu64 " of %" PRIu64
                 " rows, but layer %" PRId64 " has no RoPE: worst at %s, error %.3g", what, what,
                 st->bad, st->rows, layer, at, st->worst_err);
    else if (ok)
        snprintf(out, len, "%s is within the bound of a correct implementation: %" PRIu64
                 " elements in %" PRIu64 " rows; worst at %s: error %.3g, bound %.3g (%.2g of it)",
                 what, st->elems, st->rows, at, st->worst_err, st->worst_bound, st->max_ratio);
    else
        snprintf(out, len, "%s: %" PRIu64 " of %" PRIu64 " elements (%" PRIu64 " of %" PRIu64
                 " rows) out of bound; worst at %s: error %.3g, bound %.3g (%.3g times it)",
                 what, st->elems_bad, st->elems, st->bad, st->rows, at, st->worst_err,
                 st->worst_bound, st->max_ratio);
    return ok;
}

static cJSON *index_json(const pe_vindex *x)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "batch", (double)x->b);
    cJSON_AddNumberToObject(o, "head", (double)x->h);
    cJSON_AddNumberToObject(o, "position", (double)x->pos);
    cJSON_AddNumberToObject(o, "dim", (double)x->dim);
    return o;
}

cJSON *pe_report_compare_details(const pe_vstats *st, const posenc_verify_tolerance *tol,
                                 const char *what, int nope)
{
    cJSON *det = cJSON_CreateObject();
    cJSON_AddStringToObject(det, "reference", nope ? "the pre-RoPE rows (the layer has no RoPE)"
                            : "posenc's rotation of the pre-RoPE rows with the exact tables");
    char f[400];
    snprintf(f, sizeof f, "B = %.3g (1 + 2u) [u |y_a| + (2u + u_in)(|x_a c| + |x_b s|) + "
             "2 u32 sigma (|x_a| + |x_b|) + e |y_b| + e^2 |y_a| + eta], e = u32 (8 + |ln w|) "
             "|p w|; u = %.3g, u_in = %.3g, eta = %.3g", tol->scale, tol->u, tol->u_in, tol->eta);
    cJSON_AddStringToObject(det, "bound", f);
    if (tol->extra > 0)
        cJSON_AddNumberToObject(det, "extra_tolerance", tol->extra);
    cJSON_AddNumberToObject(det, "elements", (double)st->elems);
    cJSON_AddNumberToObject(det, "elements_failed", (double)st->elems_bad);
    cJSON_AddNumberToObject(det, "rows", (double)st->rows);
    cJSON_AddNumberToObject(det, "rows_failed", (double)st->bad);
    cJSON_AddItemToObject(det, "max_ratio", pe_report_number(st->max_ratio));
    cJSON *w = index_json(&st->worst);
    cJSON_AddItemToObject(w, "error", pe_report_number(st->worst_err));
    cJSON_AddItemToObject(w, "bound", pe_report_number(st->worst_bound));
    cJSON_AddItemToObject(w, "value", pe_report_number(st->worst_value));
    cJSON_AddItemToObject(w, "reference", pe_report_number(st->worst_ref));
    cJSON_AddItemToObject(det, "worst", w);
    cJSON *nf = cJSON_AddObjectToObject(det, "nonfinite");
    cJSON_AddNumberToObject(nf, "nan", (double)st->nan);
    cJSON_AddNumberToObject(nf, "inf", (double)st->inf);
    cJSON_AddItemToObject(nf, "first", st->nan + st->inf ? index_json(&st->first_nonfinite)
                                                         : cJSON_CreateNull());
    cJSON_AddNumberToObject(det, "pre_nonfinite", (double)st->pre_nonfinite);
    cJSON *ph = cJSON_AddArrayToObject(det, "per_head");
    for (int64_t h = 0; h < st->heads; h++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "head", (double)h);
        cJSON_AddItemToObject(e, "max_abs_err", pe_report_number(st->head_abs[h]));
        cJSON_AddItemToObject(e, "max_rel_err", pe_report_number(st->head_rel[h]));
        cJSON_AddItemToObject(e, "max_ratio", pe_report_number(st->head_ratio[h]));
        cJSON_AddItemToArray(ph, e);
    }
    cJSON *pr = cJSON_AddArrayToObject(det, "per_position_range");
    double xs[PE_VSTATS_BUCKETS], yq[PE_VSTATS_BUCKETS];
    int np = 0;
    for (int b = 0; b < PE_VSTATS_BUCKETS; b++) {
        if (!st->b_rows[b])
            continue;
        int64_t lo, hi;
        pe_vstats_bucket_range(b, &lo, &hi);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "from", (double)lo);
        cJSON_AddNumberToObject(e, "to", (double)hi);
        cJSON_AddNumberToObject(e, "rows", (double)st->b_rows[b]);
        cJSON_AddItemToObject(e, "max_abs_err", pe_report_number(st->b_abs[b]));
        cJSON_AddItemToObject(e, "max_rel_err", pe_report_number(st->b_rel[b]));
        cJSON_AddItemToObject(e, "max_ratio", pe_report_number(st->b_ratio[b]));
        cJSON_AddItemToArray(pr, e);
        xs[np] = (double)hi + 1;
        yq[np] = st->b_ratio[b];
        np++;
    }
    if (st->has_ulp) {
        cJSON *u = cJSON_AddObjectToObject(det, "ulp");
        cJSON_AddNumberToObject(u, "max", st->max_ulp == UINT64_MAX ? -1 : (double)st->max_ulp);
        cJSON_AddItemToObject(u, "worst", index_json(&st->worst_ulp));
        cJSON *hist = cJSON_AddArrayToObject(u, "histogram");
        for (int b = 0; b < PE_ULP_BINS; b++) {
            if (!st->ulp_hist[b])
                continue;
            cJSON *e = cJSON_CreateObject();
            double lo = b == 0 ? 0 : ldexp(1, b - 1), hi = b == 0 ? 0 : ldexp(1, b) - 1;
            if (b == PE_ULP_BINS - 1) {
                cJSON_AddStringToObject(e, "from", "nan");
                cJSON_AddStringToObject(e, "to", "nan");
            } else {
                cJSON_AddNumberToObject(e, "from", lo);
                cJSON_AddNumberToObject(e, "to", hi);
            }
            cJSON_AddNumberToObject(e, "count", (double)st->ulp_hist[b]);
            cJSON_AddItemToArray(hist, e);
        }
    }
    char title[96];
    snprintf(title, sizeof title, "%s: worst error over its bound against position", what);
    cJSON *pl = pe_report_plot(title, "position range end + 1", "error / bound", 1.0,
                               "tolerance: the bound");
    cJSON *ser = cJSON_GetObjectItemCaseSensitive(pl, "series");
    cJSON_AddItemToArray(ser, pe_report_series("max error / bound", xs, yq, np));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(det, "plots"), pl);
    return det;
}

cJSON *pe_report_bias_details(const posenc_bias_check_result *r, const char *what, char *summary,
                              size_t len, int *ok)
{
    *ok = r->violations == 0 && r->checked > 0;
    snprintf(summary, len, "%s: %" PRIu64 " comparisons, %" PRIu64 " outside tolerance, max err "
             "%.3g", what, r->checked, r->violations, r->max_abs_err);
    cJSON *det = cJSON_CreateObject();
    cJSON_AddNumberToObject(det, "checked", (double)r->checked);
    cJSON_AddNumberToObject(det, "violations", (double)r->violations);
    cJSON_AddNumberToObject(det, "worst_i", (double)r->worst_i);
    cJSON_AddNumberToObject(det, "worst_j", (double)r->worst_j);
    return det;
}

cJSON *pe_report_gguf_details(const posenc_gguf_finding *f, char *summary, size_t len)
{
    if (f->ok)
        snprintf(summary, len, "%s (%s)", f->found, f->what);
    else
        snprintf(summary, len, "expected %s, found %s: %s", f->expected, f->found,
                 f->consequence);
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "key", f->key);
    cJSON_AddStringToObject(d, "argument", f->what);
    cJSON_AddStringToObject(d, "expected", f->expected);
    cJSON_AddStringToObject(d, "found", f->found);
    cJSON_AddStringToObject(d, "consequence", f->consequence);
    return d;
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int true_of(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

char *pe_report_text(const cJSON *report, int failed, int n_checks)
{
    pe_strbuf b = { 0 };
    const cJSON *c;
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(report, "config");
    pe_strbuf_printf(&b, "posenc verify: %s (%s)\n", str_of(cfg, "path"), str_of(cfg, "encoding"));
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks"))
    {
        const char *w = true_of(c, "info") ? "info" : true_of(c, "ok") ? "ok" : "FAIL";
        pe_strbuf_printf(&b, "%-5s %-20s %s\n", w, str_of(c, "name"), str_of(c, "summary"));
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "diagnosis");
        if (cJSON_IsObject(d))
            pe_strbuf_printf(&b, "      diagnosis: %s\n", str_of(d, "explanation"));
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "pairs"))
    {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "layer"),
                    *t = cJSON_GetObjectItemCaseSensitive(c, "layer_type");
        char layer[64] = "no layer index";
        if (cJSON_IsNumber(l))
            snprintf(layer, sizeof layer, "layer %.0f", l->valuedouble);
        const char *why = true_of(c, "ok") ? "" : str_of(c, "explanation");
        pe_strbuf_printf(&b, "%-5s pair %-15s %s%s%s%s%s%s\n", true_of(c, "ok") ? "ok" : "FAIL",
                         str_of(c, "group"), layer, cJSON_IsString(t) ? ", " : "",
                         cJSON_IsString(t) ? t->valuestring : "",
                         true_of(c, "has_rope") ? "" : ", no RoPE", why[0] ? ": " : "", why);
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "notes"))
        pe_strbuf_printf(&b, "note: %s\n", cJSON_IsString(c) ? c->valuestring : "");
    if (failed)
        pe_strbuf_printf(&b, "result: FAIL (%d of %d checks failed)\n", failed, n_checks);
    else
        pe_strbuf_printf(&b, "result: PASS (%d checks)\n", n_checks);
    return pe_strbuf_finish(&b);
}

/* ---- what a dump comparison verified: header and inputs ---- */

void pe_report_set_dumps(cJSON *report, cJSON *inputs, const pe_report_dumps *x)
{
    static const char *const role[4] = { "q", "k", "expect_q", "expect_k" };
    pe_report_pair pair = { NULL, 0, { { 0 } } };
    for (int i = 0; i < 4; i++)
        if (x->spec[i])
            pair.dumps[pair.n_dumps++] = (pe_report_dump){
                role[i], x->spec[i], posenc_dtype_name(x->info[i]->dtype), x->info[i]->ndim,
                x->info[i]->shape };
    pe_report_header h = { x->config, x->layer_type, NULL, x->layout, x->positions, x->offset,
                           x->first_position, x->last_position, 1, &pair };
    char prec[300];
    if (x->held)
        snprintf(prec, sizeof prec, "%s: held to posenc's %s rotation, every element within "
                 "that profile's own rounding (posenc-verify(1), VERDICT)",
                 posenc_precision_name(x->prec), posenc_precision_name(x->prec));
    else
        snprintf(prec, sizeof prec, "exact: %s, every element against the bound of a correct "
                 "implementation, and each runtime profile's own rotation (posenc-verify(1), "
                 "VERDICT)", x->rotated ? "the first row of each head undone with the exact "
                 "tables and rotated to every position" : "posenc's rotation of the pre-RoPE "
                 "rows with the exact tables");
    h.precision = prec;
    pe_report_set_header(report, &h);
    for (int i = 0; i < 4; i++)
        if (x->spec[i])
            cJSON_AddStringToObject(inputs, role[i], x->spec[i]);
    cJSON_AddStringToObject(inputs, "layout", x->layout);
    cJSON_AddStringToObject(inputs, "precision", posenc_precision_name(x->prec));
    if (x->prec == POSENC_PREC_GGML)
        cJSON_AddItemToObject(inputs, "ggml", x->ggml_json ? cJSON_CreateRaw(x->ggml_json)
                                                           : cJSON_CreateNull());
    cJSON_AddStringToObject(inputs, "dtype_q", posenc_dtype_name(x->info[0]->dtype));
    cJSON_AddStringToObject(inputs, "dtype_k", posenc_dtype_name(x->info[1]->dtype));
    cJSON_AddNumberToObject(inputs, "batch", (double)x->q->batch);
    cJSON_AddNumberToObject(inputs, "heads_q", (double)x->q->heads);
    cJSON_AddNumberToObject(inputs, "heads_k", (double)x->k->heads);
    cJSON_AddNumberToObject(inputs, "seq", (double)x->q->seq);
    cJSON_AddBoolToObject(inputs, "rotated", x->rotated);
    cJSON_AddNumberToObject(inputs, "first_position", (double)x->first_position);
    cJSON_AddNumberToObject(inputs, "max_position_in_dump", (double)x->max_position);
}

/* ---- one row per q/k pair ---- */

cJSON *pe_report_pair_row(cJSON *report, const char *group, int64_t layer,
                          const char *layer_type, int has_rope)
{
    cJSON *rows = cJSON_GetObjectItemCaseSensitive(report, "pairs");
    if (!rows)
        rows = cJSON_AddArrayToObject(report, "pairs");
    cJSON *row = cJSON_CreateObject();
    cJSON_AddItemToArray(rows, row);
    cJSON_AddStringToObject(row, "group", group);
    if (layer >= 0)
        cJSON_AddNumberToObject(row, "layer", (double)layer);
    else
        cJSON_AddNullToObject(row, "layer");
    if (layer_type)
        cJSON_AddStringToObject(row, "layer_type", layer_type);
    else
        cJSON_AddNullToObject(row, "layer_type");
    cJSON_AddBoolToObject(row, "has_rope", has_rope);
    return row;
}

void pe_report_pairs_run(cJSON *report, cJSON *inputs, const posenc_model *m,
                         const char *layer_type, const char *qpath, const char *epath, size_t n,
                         const char *glob)
{
    cJSON_AddStringToObject(inputs, "dumps", qpath);
    if (epath)
        cJSON_AddStringToObject(inputs, "expect", epath);
    cJSON_AddNumberToObject(inputs, "pairs", (double)n);
    if (glob)
        cJSON_AddStringToObject(inputs, "pairs_glob", glob);
    cJSON *cfgj = cJSON_GetObjectItemCaseSensitive(report, "config");
    size_t nt = posenc_model_layer_type_count(m);
    posenc_rope_config cfg;
    cJSON *ropes = nt > 1 ? cJSON_AddObjectToObject(cfgj, "rope") : NULL;
    for (size_t i = 0; i < nt && ropes; i++) {
        const char *lt = posenc_model_layer_type_name(m, i);
        if (posenc_model_rope(m, lt, &cfg, NULL) == POSENC_OK)
            cJSON_AddItemToObject(ropes, lt, pe_report_rope(&cfg, NULL));
    }
    if (!ropes && posenc_model_rope(m, layer_type, &cfg, NULL) == POSENC_OK)
        cJSON_AddItemToObject(cfgj, "rope", pe_report_rope(&cfg, NULL));
}

void pe_report_pair_header(cJSON *report, cJSON *header_pairs, const char *label)
{
    cJSON *hp = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(report, "header"), "pairs");
    cJSON *one = cJSON_GetArraySize(hp) == 1 ? cJSON_DetachItemFromArray(hp, 0) : NULL;
    if (!one)
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(one, "label");
    cJSON_AddStringToObject(one, "label", label);
    cJSON_AddItemToArray(header_pairs, one);
}

void pe_report_pair_checks(cJSON *report, cJSON *row, int first)
{
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks");
    cJSON *names = cJSON_AddArrayToObject(row, "checks");
    for (int c = first; c < cJSON_GetArraySize(checks); c++)
        cJSON_AddItemToArray(names, cJSON_CreateString(str_of(cJSON_GetArrayItem(checks, c),
                                                              "name")));
}

void pe_report_pair_explain(cJSON *report, cJSON *row, int first)
{
    if (true_of(row, "ok") || cJSON_IsString(cJSON_GetObjectItemCaseSensitive(row, "explanation")))
        return;
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks");
    pe_strbuf b = { 0 };
    for (int c = first; c < cJSON_GetArraySize(checks); c++) {
        const cJSON *ck = cJSON_GetArrayItem(checks, c);
        if (true_of(ck, "ok"))
            continue;
        const char *why = str_of(cJSON_GetObjectItemCaseSensitive(ck, "diagnosis"), "explanation");
        pe_strbuf_printf(&b, "%s%s: %s", b.len ? "; " : "", str_of(ck, "name"),
                         why[0] ? why : str_of(ck, "summary"));
    }
    char *text = pe_strbuf_finish(&b);
    cJSON *e = cJSON_CreateString(text && text[0] ? text : "a check failed");
    if (cJSON_GetObjectItemCaseSensitive(row, "explanation"))
        cJSON_ReplaceItemInObjectCaseSensitive(row, "explanation", e);
    else
        cJSON_AddItemToObject(row, "explanation", e);
    free(text);
}

int pe_report_compare_ok(const cJSON *report, int first, const char *what)
{
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks");
    char e[16], r[16];
    snprintf(e, sizeof e, "expect_%s@", what);
    snprintf(r, sizeof r, "rotated_%s@", what);
    for (int c = first; c < cJSON_GetArraySize(checks); c++) {
        const cJSON *ck = cJSON_GetArrayItem(checks, c);
        const char *nm = str_of(ck, "name");
        if (strncmp(nm, e, strlen(e)) == 0 || strncmp(nm, r, strlen(r)) == 0)
            return true_of(ck, "ok");
    }
    return -1;
}

/* ---- notes on what invariance means for a scaling ---- */

void pe_report_rope_notes(cJSON *report, const posenc_rope_config *cfg,
                          const posenc_rope_params *p, int64_t length, int dumps)
{
    if (cfg->type == POSENC_ROPE_DYNAMIC && dumps)
        pe_report_add_note(report, "dynamic NTK: the base depends on the sequence length (theta "
                           "%.6g used for length %" PRId64 "); scores are relative within one "
                           "length, but a key cached under one base and a query rotated under "
                           "another are not", p->theta_used, length);
    if (dumps)
        return;
    if (cfg->type == POSENC_ROPE_DYNAMIC) {
        posenc_rope_params p0;
        double t0 = cfg->theta;
        if (posenc_rope_params_compute(cfg, 0, &p0, NULL) == POSENC_OK)
            t0 = p0.theta_used;
        pe_report_add_note(report, "dynamic NTK breaks invariance across lengths: the base is "
                           "%.6g up to max_position_embeddings %" PRId64 " and %.6g at length %"
                           PRId64 "; the checks hold within one length only, so a key cached at "
                           "one length and a query rotated at another do not score relatively",
                           t0, cfg->max_position_embeddings, p->theta_used, length);
    }
    if (cfg->type == POSENC_ROPE_LONGROPE)
        pe_report_add_note(report, "longrope: the checked table uses the %s factors (length %"
                           PRId64 " %s original_max_position_embeddings %" PRId64 ")",
                           p->long_factors ? "long" : "short", length,
                           p->long_factors ? ">" : "<=", cfg->original_max_position_embeddings);
}

/* ---- a model that does not rotate ---- */

void pe_report_bias_config(cJSON *report, const pe_bias_run *run)
{
    cJSON *bj = cJSON_CreateObject();
    cJSON_AddNumberToObject(bj, "heads", run->heads);
    cJSON_AddNumberToObject(bj, "max_positions", (double)run->max_positions);
    if (run->enc == POSENC_ENC_ALIBI) {
        cJSON_AddStringToObject(bj, "alibi_kind", run->alibi_kind);
    } else if (run->enc == POSENC_ENC_T5) {
        cJSON_AddNumberToObject(bj, "num_buckets", run->num_buckets);
        cJSON_AddNumberToObject(bj, "max_distance", run->max_distance);
        cJSON_AddBoolToObject(bj, "is_decoder", run->is_decoder);
    } else if (run->enc == POSENC_ENC_SINUSOIDAL) {
        cJSON_AddStringToObject(bj, "variant", posenc_sinusoidal_variant_name(run->variant));
        cJSON_AddNumberToObject(bj, "d_model", run->d_model);
    }
    cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(report, "config"), "bias", bj);
}

/* ---- the model checked ---- */

void pe_report_set_config(cJSON *report, const char *path, const posenc_model *m,
                          const char *layer_type, int gguf)
{
    posenc_encoding enc = posenc_model_encoding(m);
    cJSON *cfgj = cJSON_GetObjectItemCaseSensitive(report, "config");
    /* what a config alone is checked with; a comparison of dumps replaces it with its pairs */
    pe_report_header h = { path, layer_type, NULL, NULL, NULL, 0, 0, 0, 0, NULL };
    h.precision = gguf ? "gguf: the file's keys and tensors against those convert_hf_to_gguf.py "
                         "writes for the config, both as llama.cpp loads them (float32)"
                  : enc == POSENC_ENC_ROPE
                      ? "invariance: posenc's exact tables rounded once to float32 and "
                        "transformers' float32 tables, rotation in float32, scores in double"
                      : "posenc's tables in double against independent evaluations";
    pe_report_set_header(report, &h);
    cJSON_AddStringToObject(cfgj, "path", path);
    pe_report_model(cfgj, m, layer_type); /* the description's report view */
    for (size_t i = 0; i < posenc_model_note_count(m); i++)
        pe_report_add_note(report, "%s", posenc_model_note(m, i));
}

/* "3, 7, 11" of the layers in a that are not in b (at most a line) */
static int layer_diff(char *buf, size_t n, const uint8_t *a, const uint8_t *b, int nl)
{
    size_t l = 0;
    int k = 0;
    buf[0] = '\0';
    for (int i = 0; i < nl; i++)
        if (a[i] && !b[i]) {
            if (l + 16 < n)
                l += (size_t)snprintf(buf + l, n - l, "%s%d", k ? ", " : "", i);
            else if (l + 5 < n && buf[l - 1] != '.')
                l += (size_t)snprintf(buf + l, n - l, ", ...");
            k++;
        }
    return k;
}

/* whether the report already holds the note text */
static int has_note(const cJSON *report, const char *text)
{
    const cJSON *n;
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(report, "notes")) {
        const char *t = cJSON_GetStringValue(n);
        if (t && strcmp(t, text) == 0)
            return 1;
    }
    return 0;
}

static void layers_note(cJSON *report, const posenc_model *m, const posenc_gguf_rope *have)
{
    int64_t nl = posenc_model_layer_count(m);
    if (!(have->has & POSENC_GGUF_BLOCK_COUNT) || nl <= 0)
        return;
    if (nl > have->block_count)
        nl = have->block_count;
    if (nl > POSENC_GGUF_MAX_LAYERS)
        nl = POSENC_GGUF_MAX_LAYERS;
    uint8_t *ls = calloc(4, (size_t)nl);
    if (!ls)
        return;
    uint8_t *lnope = ls + nl, *cs = ls + 2 * nl, *cnope = ls + 3 * nl;
    int has_types = 1;
    for (int64_t i = 0; i < nl; i++) {
        const char *t = NULL;
        int nope = 0;
        if (posenc_model_layer(m, i, &t, &nope, NULL) != POSENC_OK) {
            t = NULL;                 /* a layer the config does not give: no comparison */
            nope = 0;
        }
        if (!t)
            has_types = 0;
        cs[i] = t && (strcmp(t, "sliding_attention") == 0 || strcmp(t, "chunked_attention") == 0);
        cnope[i] = (uint8_t)nope;
    }
    char a[160], b[160];
    if (has_types && posenc_ggml_swa_layers(have, (int)nl, ls)) {
        int na = layer_diff(a, sizeof a, ls, cs, (int)nl), nb = layer_diff(b, sizeof b, cs, ls, (int)nl);
        if (na || nb)
            pe_report_add_note(report, "llama.cpp: the file's sliding-window layers are not the "
                               "config's layer_types: %d run as sliding where the config says "
                               "full (%s), %d as global where it says sliding (%s)", na,
                               na ? a : "none", nb, nb ? b : "none");
    }
    if (posenc_ggml_nope_layers(have, (int)nl, lnope)) {
        int na = layer_diff(a, sizeof a, lnope, cnope, (int)nl), nb = layer_diff(b, sizeof b, cnope, lnope, (int)nl);
        if (na || nb)
            pe_report_add_note(report, "llama.cpp: its layers without RoPE are not the config's: "
                               "%d get none where the config rotates them (%s), %d are rotated "
                               "where the config has none (%s)", na, na ? a : "none", nb,
                               nb ? b : "none");
    }
    free(ls);
}

posenc_status pe_report_gguf_checks(cJSON *report, cJSON *inputs, const posenc_model *m,
                                    const char *layer_type, const char *path,
                                    int64_t original_max_position, int *n_checks, int *failed,
                                    posenc_error *err)
{
    posenc_status st;
    posenc_gguf_rope *want = malloc(sizeof *want), *have = malloc(sizeof *have);
    posenc_gguf_check *chk = malloc(sizeof *chk);
    if (!want || !have || !chk)
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    else if ((st = posenc_gguf_rope_from_model(m, layer_type, want, err)) == POSENC_OK &&
             (st = posenc_gguf_read_rope(path, have, err)) == POSENC_OK &&
             (st = posenc_gguf_compare_layer(want, have, original_max_position, layer_type, chk,
                                             err)) ==
                 POSENC_OK) {
        if (!cJSON_GetObjectItemCaseSensitive(inputs, "gguf")) {
            cJSON_AddStringToObject(inputs, "gguf", path);
            cJSON_AddStringToObject(inputs, "gguf_architecture", have->arch);
            /* the layers as llama.cpp assigns them (the file's pattern, its NoPE rule) against
             * the config's layer_types and NoPE layers: a note where they differ */
            layers_note(report, m, have);
        }
        /* where llama.cpp and transformers differ for the architecture (or for this layer
         * type): one note, not repeated for another layer type with the same one */
        posenc_ggml_rope *lr = malloc(sizeof *lr);
        posenc_rope_config rc;
        if (lr && posenc_ggml_rope_from_gguf_layer(want, 0, layer_type, lr, NULL) == POSENC_OK) {
            if (lr->note && !has_note(report, lr->note))
                pe_report_add_note(report, "%s", lr->note);
            /* the converter's rotated dims against the config's (Bamba: attn_rotary_emb where
             * transformers rotates the whole head) */
            if (posenc_model_rope(m, layer_type, &rc, NULL) == POSENC_OK &&
                rc.rotary_dim != lr->n_dims) {
                char dims[160];
                snprintf(dims, sizeof dims, "llama.cpp: the converter's file rotates %d dims "
                         "of each head where the config rotates %d", lr->n_dims, rc.rotary_dim);
                if (!has_note(report, dims)) /* once, not for each layer type */
                    pe_report_add_note(report, "%s", dims);
            }
        }
        /* a config with one table for every layer: the file's sliding layers too, as the
         * ggml profile takes them (verifyrun.c file_layer_type) */
        uint8_t sl[POSENC_GGUF_MAX_LAYERS];
        int nl = have->block_count > 0 && have->block_count <= POSENC_GGUF_MAX_LAYERS
                     ? (int)have->block_count : 0;
        if (lr && !layer_type && posenc_ggml_swa_layers(have, nl, sl) && memchr(sl, 1, (size_t)nl) &&
            posenc_ggml_rope_from_gguf_layer(have, 0, "sliding_attention", lr, NULL) == POSENC_OK &&
            lr->note && !has_note(report, lr->note))
            pe_report_add_note(report, "%s", lr->note);
        free(lr);
        for (int i = 0; i < chk->n; i++) {
            char summary[800], name[POSENC_NAME_MAX + 64];
            cJSON *d = pe_report_gguf_details(&chk->f[i], summary, sizeof summary);
            /* called once per layer type (a multi-layer dump): a key another layer type
             * checked the same way is not repeated; checked otherwise, it is named KEY@TYPE */
            int dup = 0;
            const cJSON *c;
            snprintf(name, sizeof name, "%s", chk->f[i].key);
            cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks")) {
                const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name"));
                const char *su = cJSON_GetStringValue(
                    cJSON_GetObjectItemCaseSensitive(c, "summary"));
                if (n && strcmp(n, chk->f[i].key) == 0)
                    dup = su && strcmp(su, summary) == 0 ? 2 : 1;
            }
            if (dup == 2) {
                cJSON_Delete(d);
                continue;
            }
            if (dup && layer_type)
                snprintf(name, sizeof name, "%s@%s", chk->f[i].key, layer_type);
            pe_report_add_check(report, name, chk->f[i].ok, 0, NAN, NAN, NAN, summary, d);
            ++*n_checks;
            *failed += !chk->f[i].ok;
        }
    }
    free(want);
    free(have);
    free(chk);
    return st;
}

posenc_status pe_report_bias_checks(cJSON *report, const posenc_model *m, int64_t max_position, const posenc_sinusoidal_variant *var,
                                    uint64_t seed, int *n_checks, int *failed,
                                    posenc_error *err)
{
    pe_bias_run *run = malloc(sizeof *run);
    if (!run)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = pe_verify_bias_run(m, max_position, var, seed, run, err);
    if (st != POSENC_OK) {
        free(run);
        return st;
    }
    pe_report_bias_config(report, run);
    char summary[512];
    for (int i = 0; i < run->n; i++) {
        int ok;
        const posenc_bias_check_result *r = &run->c[i].r;
        cJSON *det = pe_report_bias_details(r, run->c[i].what, summary, sizeof summary, &ok);
        pe_report_add_check(report, run->c[i].name, ok, 0, r->max_abs_err, r->max_rel_err,
                            r->tolerance, summary, det);
        ++*n_checks;
        *failed += !ok;
    }
    if (run->n == 0) {
        posenc_encoding enc = posenc_model_encoding(m);
        snprintf(summary, sizeof summary, "the model uses %s positions: nothing relative to verify",
                 enc == POSENC_ENC_NONE ? "no" : posenc_encoding_name(enc));
        pe_report_add_check(report, "encoding", 1, 1, NAN, NAN, NAN, summary, NULL);
        ++*n_checks;
    }
    free(run);
    return POSENC_OK;
}
