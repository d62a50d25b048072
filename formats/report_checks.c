/* report_checks.c: the checks of a verify run in the report tree (report.h): a comparison of a
 * runtime's rotated rows (its summary, per-head and per-position-range errors, the plot), a
 * bias-encoding check, a GGUF finding; and the text summary printed from the tree. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "strbuf.h"

int pe_report_compare_summary(char *out, size_t len, const pe_vstats *st, const char *what,
                              int nope, int64_t layer)
{
    int ok = st->max_ratio <= 1.0 && st->rows > 0;
    if (nope && ok)
        snprintf(out, len, "%s is not rotated, as layer %" PRId64 " has no RoPE: max rel err %.3g "
                 "over %" PRIu64 " rows", what, layer, st->max_rel, st->rows);
    else if (nope)
        snprintf(out, len, "%s differs from the unrotated %s in %" PRIu64 " of %" PRIu64
                 " rows, but layer %" PRId64 " has no RoPE: max rel err %.3g (worst at head %"
                 PRId64 ", position %" PRId64 ")", what, what, st->bad, st->rows, layer,
                 st->max_rel, st->worst_h, st->worst_pos);
    else if (ok)
        snprintf(out, len, "%s matches posenc's rotation: max rel err %.3g over %" PRIu64 " rows",
                 what, st->max_rel, st->rows);
    else
        snprintf(out, len, "%s differs from posenc's rotation in %" PRIu64 " of %" PRIu64
                 " rows: max rel err %.3g (worst at head %" PRId64 ", position %" PRId64 ")",
                 what, st->bad, st->rows, st->max_rel, st->worst_h, st->worst_pos);
    return ok;
}

cJSON *pe_report_compare_details(const pe_vstats *st, const posenc_verify_tolerance *tol,
                                 const char *what, int nope)
{
    cJSON *det = cJSON_CreateObject();
    cJSON_AddStringToObject(det, "reference", nope ? "the pre-RoPE rows (the layer has no RoPE)"
                            : "posenc's rotation of the pre-RoPE rows with transformers' float32 tables");
    cJSON_AddNumberToObject(det, "rows", (double)st->rows);
    cJSON_AddNumberToObject(det, "rows_failed", (double)st->bad);
    cJSON_AddItemToObject(det, "max_allowance_ratio", pe_report_number(st->max_ratio));
    cJSON_AddNumberToObject(det, "angle_slack", tol->angle_slack);
    cJSON *w = cJSON_AddObjectToObject(det, "worst");
    cJSON_AddNumberToObject(w, "batch", (double)st->worst_b);
    cJSON_AddNumberToObject(w, "head", (double)st->worst_h);
    cJSON_AddNumberToObject(w, "position", (double)st->worst_pos);
    cJSON *ph = cJSON_AddArrayToObject(det, "per_head");
    for (int64_t h = 0; h < st->heads; h++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "head", (double)h);
        cJSON_AddItemToObject(e, "max_abs_err", pe_report_number(st->head_abs[h]));
        cJSON_AddItemToObject(e, "max_rel_err", pe_report_number(st->head_rel[h]));
        cJSON_AddItemToArray(ph, e);
    }
    cJSON *pr = cJSON_AddArrayToObject(det, "per_position_range");
    double xs[PE_VSTATS_BUCKETS], ya[PE_VSTATS_BUCKETS], yr[PE_VSTATS_BUCKETS];
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
        cJSON_AddItemToArray(pr, e);
        xs[np] = (double)hi + 1;
        ya[np] = st->b_abs[b];
        yr[np] = st->b_rel[b];
        np++;
    }
    char title[96];
    snprintf(title, sizeof title, "%s: error against position", what);
    cJSON *pl = pe_report_plot(title, "position range end + 1", "max error", tol->tol,
                               "rel tolerance");
    cJSON *ser = cJSON_GetObjectItemCaseSensitive(pl, "series");
    cJSON_AddItemToArray(ser, pe_report_series("max rel err", xs, yr, np));
    cJSON_AddItemToArray(ser, pe_report_series("max abs err", xs, ya, np));
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
    h.precision = x->rotated ? "hf: transformers' float32 tables; the first row of each head "
                               "undone with them, every row compared with posenc's rotation of it"
                             : "hf: posenc's rotation of the pre-RoPE rows with transformers' "
                               "float32 tables, compared in double";
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
             (st = posenc_gguf_compare(want, have, original_max_position, chk, err)) ==
                 POSENC_OK) {
        cJSON_AddStringToObject(inputs, "gguf", path);
        cJSON_AddStringToObject(inputs, "gguf_architecture", have->arch);
        for (int i = 0; i < chk->n; i++) {
            char summary[800];
            cJSON *d = pe_report_gguf_details(&chk->f[i], summary, sizeof summary);
            pe_report_add_check(report, chk->f[i].key, chk->f[i].ok, 0, NAN, NAN, NAN, summary,
                                d);
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
