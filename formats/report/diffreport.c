/* formats/report/diffreport.c: `posenc diff`'s report, as text and as JSON (see diffreport.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/report/diffreport.h"
#include "formats/io/strbuf.h"

/* JSON number text, shortest round trip (cmd/common.c has the same for the commands) */
static void json_num(pe_strbuf *b, double v)
{
    char t[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, v);
        if (strtod(t, NULL) == v)
            break;
    }
    pe_strbuf_puts(b, t);
}

/* v with the fewest digits that read back as the same value of dtype dt. */
const char *pe_diff_fmt_val(double v, posenc_dtype dt, char *buf, size_t len)
{
    if (isnan(v) || isinf(v)) {
        snprintf(buf, len, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return buf;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        double back = strtod(buf, NULL), r;
        unsigned char t[8];
        posenc_dtype_convert(t, dt, &back, POSENC_DT_F64, 1);
        posenc_dtype_convert(&r, POSENC_DT_F64, t, dt, 1);
        if (r == v)
            break;
    }
    return buf;
}

/* Flat C-order index -> "(i, j, k)" or, for JSON, "[i, j, k]". */
const char *pe_diff_fmt_index(const posenc_array_info *a, uint64_t flat, int json, char *buf,
                             size_t len)
{
    int64_t idx[POSENC_MAX_DIMS];
    for (int i = a->ndim - 1; i >= 0; i--) {
        idx[i] = a->shape[i] ? (int64_t)(flat % (uint64_t)a->shape[i]) : 0;
        flat = a->shape[i] ? flat / (uint64_t)a->shape[i] : 0;
    }
    size_t o = (size_t)snprintf(buf, len, "%c", json ? '[' : '(');
    for (int i = 0; i < a->ndim && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, i ? ", " : "", idx[i]);
    if (o < len)
        snprintf(buf + o, len - o, "%s", json ? "]" : a->ndim == 1 ? ",)" : ")");
    return buf;
}


/* ---- JSON ---- */

/* a number; infinities and NaN as the strings "inf", "-inf", "nan" (JSON has no literal) */
static void jnum(pe_strbuf *b, double v)
{
    if (isnan(v) || isinf(v))
        pe_strbuf_printf(b, "\"%s\"", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    else
        json_num(b, v);
}

static void jshape(pe_strbuf *b, const posenc_array_info *a)
{
    pe_strbuf_puts(b, "[");
    for (int i = 0; i < a->ndim; i++)
        pe_strbuf_printf(b, "%s%" PRId64, i ? ", " : "", a->shape[i]);
    pe_strbuf_puts(b, "]");
}

static void jindex(pe_strbuf *b, const posenc_array_info *a, uint64_t flat, int valid)
{
    char t[256];
    pe_strbuf_puts(b, valid ? pe_diff_fmt_index(a, flat, 1, t, sizeof t) : "null");
}

static void jinput(pe_strbuf *b, const char *key, const char *spec,
                   const posenc_array_info *a)
{
    pe_strbuf_printf(b, "\"%s\": {\"spec\": ", key);
    pe_strbuf_json_string(b, spec);
    pe_strbuf_printf(b, ", \"dtype\": \"%s\", \"shape\": ", posenc_dtype_name(a->dtype));
    jshape(b, a);
    pe_strbuf_puts(b, "}, ");
}

static void jult(pe_strbuf *b, const char *key, uint64_t u)
{
    if (u == POSENC_DIFF_NO_ULP)
        pe_strbuf_printf(b, "\"%s\": null", key);
    else
        pe_strbuf_printf(b, "\"%s\": %" PRIu64, key, u);
}

char *pe_diff_report_json(const pe_diff_report *u)
{
    const posenc_array_info *a = u->info[1];
    const posenc_diff_result *r = u->r;
    pe_strbuf b = { 0 };
    pe_strbuf_puts(&b, "{");
    jinput(&b, "a", u->spec[0], u->info[0]);
    jinput(&b, "b", u->spec[1], u->info[1]);
    if (!r) {
        pe_strbuf_printf(&b, "\"same_shape\": false, \"same_dtype\": %s, \"pass\": false}\n",
                             u->info[0]->dtype == a->dtype ? "true" : "false");
        return pe_strbuf_finish(&b);
    }
    pe_strbuf_printf(&b, "\"same_shape\": true, \"same_dtype\": %s, \"elements\": %" PRIu64
                         ", \"equal\": %" PRIu64 ", \"differ\": %" PRIu64 ", \"outside\": %" PRIu64
                         ", \"first_outside_index\": ",
                         u->info[0]->dtype == a->dtype ? "true" : "false", r->count, r->equal,
                         r->count - r->equal, r->outside);
    jindex(&b, a, r->first_outside, r->outside > 0);
    pe_strbuf_printf(&b, ", \"nan_mismatch\": %" PRIu64 ", \"nan_equal\": %" PRIu64
                         ", \"inf_mismatch\": %" PRIu64 ", \"finite_pairs\": %" PRIu64
                         ", \"max_abs_err\": ", r->nan_mismatch, r->nan_equal, r->inf_mismatch,
                         r->finite);
    jnum(&b, r->max_abs);
    pe_strbuf_puts(&b, ", \"max_abs_index\": ");
    jindex(&b, a, r->max_abs_at, r->finite > 0);
    pe_strbuf_puts(&b, ", \"max_rel_err\": ");
    jnum(&b, r->max_rel);
    pe_strbuf_puts(&b, ", \"max_rel_index\": ");
    jindex(&b, a, r->max_rel_at, r->finite > 0);
    pe_strbuf_puts(&b, ", \"mean_abs_err\": ");
    jnum(&b, r->mean_abs);
    pe_strbuf_puts(&b, ", \"rms_err\": ");
    jnum(&b, r->rms);
    pe_strbuf_printf(&b, ", \"ulp_dtype\": \"%s\", ", posenc_dtype_name(u->opts->ulp_dtype));
    jult(&b, "max_ulp", r->ulp_pairs ? r->max_ulp : POSENC_DIFF_NO_ULP);
    pe_strbuf_puts(&b, ", \"max_ulp_index\": ");
    jindex(&b, a, r->max_ulp_at, r->ulp_pairs > 0);
    pe_strbuf_puts(&b, ", \"ulp_histogram\": [");
    for (int k = 0, n = 0; k < POSENC_DIFF_HIST_BINS; k++)
        if (r->hist[k])
            pe_strbuf_printf(&b, "%s{\"lo\": %" PRIu64 ", \"hi\": %" PRIu64 ", \"count\": %"
                                 PRIu64 "}", n++ ? ", " : "", k ? (uint64_t)1 << (k - 1) : 0,
                                 k ? ((uint64_t)1 << (k - 1)) * 2 - 1 : 0, r->hist[k]);
    pe_strbuf_puts(&b, "], \"tolerance\": {\"atol\": ");
    if (u->tol_src) {
        jnum(&b, u->opts->atol);
        pe_strbuf_puts(&b, ", \"rtol\": ");
        jnum(&b, u->opts->rtol);
        pe_strbuf_printf(&b, ", \"source\": \"%s\", ", u->tol_src);
    } else {
        pe_strbuf_puts(&b, "null, \"rtol\": null, \"source\": null, ");
    }
    jult(&b, "max_ulp", u->opts->use_ulp ? u->opts->max_ulp : POSENC_DIFF_NO_ULP);
    pe_strbuf_printf(&b, ", \"equal_nan\": %s}, \"worst\": [", u->opts->equal_nan ? "true" : "false");
    for (int i = 0; i < r->n_worst; i++) {
        const posenc_diff_elem *e = &r->worst[i];
        pe_strbuf_puts(&b, i ? ", {\"index\": " : "{\"index\": ");
        jindex(&b, a, e->flat, 1);
        pe_strbuf_printf(&b, ", \"flat\": %" PRIu64 ", \"a\": ", e->flat);
        jnum(&b, e->a);
        pe_strbuf_puts(&b, ", \"b\": ");
        jnum(&b, e->b);
        pe_strbuf_puts(&b, ", \"abs_err\": ");
        jnum(&b, e->abs_err);
        pe_strbuf_puts(&b, ", \"rel_err\": ");
        jnum(&b, e->rel_err);
        pe_strbuf_puts(&b, ", ");
        jult(&b, "ulp", e->ulp);
        pe_strbuf_printf(&b, ", \"outside\": %s}", e->outside ? "true" : "false");
    }
    pe_strbuf_puts(&b, "], \"positions\": ");
    if (!u->layout) {
        pe_strbuf_puts(&b, "null");
    } else {
        pe_strbuf_printf(&b, "{\"layout\": \"%s\", \"axis\": %d, \"bucket_width\": ", u->layout,
                             u->opts->seq_axis);
        if (u->opts->bucket_width)
            pe_strbuf_printf(&b, "%" PRId64, u->opts->bucket_width);
        else
            pe_strbuf_puts(&b, "null");
        pe_strbuf_puts(&b, ", \"buckets\": [");
        for (int64_t i = 0; i < r->n_buckets; i++) {
            const posenc_diff_bucket *k = &r->buckets[i];
            pe_strbuf_printf(&b, "%s{\"lo\": %" PRId64 ", \"hi\": %" PRId64 ", \"count\": %"
                                 PRIu64 ", \"outside\": %" PRIu64 ", \"nonfinite\": %" PRIu64
                                 ", \"max_abs_err\": ", i ? ", " : "", k->lo, k->hi, k->count,
                                 k->outside, k->nonfinite);
            jnum(&b, k->max_abs);
            pe_strbuf_puts(&b, ", \"max_rel_err\": ");
            jnum(&b, k->max_rel);
            pe_strbuf_printf(&b, ", \"max_ulp\": %" PRIu64 "}", k->max_ulp);
        }
        pe_strbuf_puts(&b, "]}");
    }
    pe_strbuf_puts(&b, ", \"notes\": [");
    for (int i = 0; i < u->n_notes; i++) {
        pe_strbuf_puts(&b, i ? ", " : "");
        pe_strbuf_json_string(&b, u->notes[i]);
    }
    pe_strbuf_printf(&b, "], \"pass\": %s}\n", u->pass ? "true" : "false");
    return pe_strbuf_finish(&b);
}

/* ---- text ---- */

static void tline_input(pe_strbuf *b, const char *key, const char *spec,
                        const posenc_array_info *a)
{
    char sh[200];
    pe_strbuf_printf(b, "%s: %s  %s  %s\n", key, spec, posenc_dtype_name(a->dtype),
                         posenc_shape_str(a->ndim, a->shape, sh, sizeof sh));
}

static void tcriteria(pe_strbuf *b, const pe_diff_report *u)
{
    const posenc_diff_opts *o = u->opts;
    pe_strbuf_puts(b, "tolerance: ");
    if (u->tol_src)
        pe_strbuf_printf(b, "|a - b| <= %g + %g * |b| (%s)%s", o->atol, o->rtol, u->tol_src,
                             o->use_ulp ? " and " : "");
    if (o->use_ulp)
        pe_strbuf_printf(b, "at most %" PRIu64 " ulp (%s)", o->max_ulp,
                             posenc_dtype_name(o->ulp_dtype));
    if (!u->tol_src && !o->use_ulp)
        pe_strbuf_puts(b, "none (every difference counts)");
    pe_strbuf_printf(b, "; NaN %s NaN\n", o->equal_nan ? "==" : "!=");
}

/* "0", "1", "2-3", "4-7", ...: the ulps of histogram bin k */
static const char *hist_label(int k, char *buf, size_t len)
{
    uint64_t lo = k ? (uint64_t)1 << (k - 1) : 0, hi = k ? lo + (lo - 1) : 0;
    if (lo == hi)
        snprintf(buf, len, "%" PRIu64, lo);
    else
        snprintf(buf, len, "%" PRIu64 "-%" PRIu64, lo, hi);
    return buf;
}

char *pe_diff_report_text(const pe_diff_report *u)
{
    const posenc_array_info *a = u->info[1];
    const posenc_diff_result *r = u->r;
    posenc_dtype ad = u->info[0]->dtype, bd = a->dtype;
    char t1[256], t2[64], t3[64], t4[64], t5[64];
    pe_strbuf b = { 0 };
    if (!r) {
        char sa[200], sb[200];
        pe_strbuf_printf(&b, "shapes differ: '%s' %s, '%s' %s\n", u->spec[0],
                             posenc_shape_str(u->info[0]->ndim, u->info[0]->shape, sa, sizeof sa),
                             u->spec[1], posenc_shape_str(a->ndim, a->shape, sb, sizeof sb));
        return pe_strbuf_finish(&b);
    }
    tline_input(&b, "a", u->spec[0], u->info[0]);
    tline_input(&b, "b", u->spec[1], a);
    pe_strbuf_printf(&b, "elements: %" PRIu64 ", equal %" PRIu64 ", differ %" PRIu64 "%s\n",
                         r->count, r->equal, r->count - r->equal,
                         ad != bd ? " (the dtypes differ)" : "");
    tcriteria(&b, u);
    for (int i = 0; i < u->n_notes; i++)
        pe_strbuf_printf(&b, "note: %s\n", u->notes[i]);
    if (r->finite) {
        pe_strbuf_printf(&b, "max abs err: %.6g at %s\n", r->max_abs,
                             pe_diff_fmt_index(a, r->max_abs_at, 0, t1, sizeof t1));
        pe_strbuf_printf(&b, "max rel err: %.6g at %s\n", r->max_rel,
                             pe_diff_fmt_index(a, r->max_rel_at, 0, t1, sizeof t1));
        pe_strbuf_printf(&b, "mean abs err: %.6g, rms %.6g\n", r->mean_abs, r->rms);
    }
    if (r->ulp_pairs)
        pe_strbuf_printf(&b, "max ulp (%s): %" PRIu64 " at %s\n",
                             posenc_dtype_name(u->opts->ulp_dtype), r->max_ulp,
                             pe_diff_fmt_index(a, r->max_ulp_at, 0, t1, sizeof t1));
    if (r->nan_mismatch || r->nan_equal || r->inf_mismatch)
        pe_strbuf_printf(&b, "non-finite: %" PRIu64 " NaN mismatched, %" PRIu64
                             " NaN pairs equal, %" PRIu64 " Inf mismatched\n", r->nan_mismatch,
                             r->nan_equal, r->inf_mismatch);
    if (r->ulp_pairs) {
        int w = 12;
        for (int k = 0; k < POSENC_DIFF_HIST_BINS; k++)
            if (r->hist[k] && (int)strlen(hist_label(k, t1, sizeof t1)) > w)
                w = (int)strlen(t1);
        pe_strbuf_printf(&b, "ulp histogram (%s):\n  %-*s %14s %8s\n",
                             posenc_dtype_name(u->opts->ulp_dtype), w, "ulp", "count", "share");
        for (int k = 0; k < POSENC_DIFF_HIST_BINS; k++)
            if (r->hist[k])
                pe_strbuf_printf(&b, "  %-*s %14" PRIu64 " %7.3f%%\n", w,
                                     hist_label(k, t1, sizeof t1), r->hist[k],
                                     100.0 * (double)r->hist[k] / (double)r->ulp_pairs);
    }
    if (r->n_worst) {
        pe_strbuf_printf(&b, "worst %d by abs error:\n  %-18s %-14s %-14s %-10s %-10s %s\n",
                             r->n_worst, "index", "a", "b", "abs err", "rel err", "ulp");
        for (int i = 0; i < r->n_worst; i++) {
            const posenc_diff_elem *e = &r->worst[i];
            snprintf(t4, sizeof t4, "%.3g", e->abs_err);
            snprintf(t5, sizeof t5, "%.3g", e->rel_err);
            char ulp[24];
            snprintf(ulp, sizeof ulp, e->ulp == POSENC_DIFF_NO_ULP ? "-" : "%" PRIu64, e->ulp);
            pe_strbuf_printf(&b, "  %-18s %-14s %-14s %-10s %-10s %s%s\n",
                                 pe_diff_fmt_index(a, e->flat, 0, t1, sizeof t1),
                                 pe_diff_fmt_val(e->a, ad, t2, sizeof t2),
                                 pe_diff_fmt_val(e->b, bd, t3, sizeof t3), t4, t5, ulp,
                                 e->outside ? "  outside" : "");
        }
    }
    if (u->layout) {
        pe_strbuf_printf(&b, "positions (layout %s, axis %d):\n  %-18s %14s %-12s %-12s "
                             "%-10s %s\n", u->layout, u->opts->seq_axis, "positions", "elements",
                             "max abs err", "max rel err", "max ulp", "outside");
        for (int64_t i = 0; i < r->n_buckets; i++) {
            const posenc_diff_bucket *k = &r->buckets[i];
            snprintf(t1, sizeof t1, "%" PRId64 "-%" PRId64, k->lo, k->hi);
            snprintf(t4, sizeof t4, "%.3g", k->max_abs);
            snprintf(t5, sizeof t5, "%.3g", k->max_rel);
            pe_strbuf_printf(&b, "  %-18s %14" PRIu64 " %-12s %-12s %-10" PRIu64 " %" PRIu64
                                 "\n", t1, k->count, t4, t5, k->max_ulp, k->outside);
        }
    }
    if (u->pass)
        pe_strbuf_puts(&b, "result: ok, every element within the tolerance\n");
    else
        pe_strbuf_printf(&b, "result: FAIL, %" PRIu64 " of %" PRIu64 " elements outside "
                             "the tolerance (first at %s)\n", r->outside, r->count,
                             pe_diff_fmt_index(a, r->first_outside, 0, t1, sizeof t1));
    return pe_strbuf_finish(&b);
}
