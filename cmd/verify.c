/* cmd/verify.c: posenc verify: prove relative invariance from a config, check a runtime's Q/K
 * dumps against posenc's rotation, diagnose the likely mistake, write reports for CI.
 *
 * Computation lives in lib/verify.c; this file reads the dumps (streaming, bounded memory),
 * builds the report tree (formats/report.h) and picks the exit status. */
#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "opts.h"
#include "posenc/verify.h"
#include "posenc/llamacpp.h"
#include "pairs.h"
#include "report.h"

#define CMD "verify"
#define MAX_REPORTS 8
#define CHUNK_ELEMS ((size_t)1 << 18)            /* elements per read of one dump */
#define COSSIN_CACHE_BYTES ((uint64_t)64 << 20)  /* per-position cos/sin kept in memory */
#define MAX_SAMPLE_S 48                           /* sampled sequence indices per head */
#define NBUCKET 65
#define POS_END ((int64_t)1 << 48)                /* --positions lie in [0, 2^48), as in gen */

/* ---- options ---- */
enum layout { L_BHSD, L_BSHD, L_SHD, L_HSD, L_SD };
static const char *const layout_names[] = { "bhsd", "bshd", "shd", "hsd", "sd" };
static const int layout_ndim[] = { 4, 4, 3, 3, 2 };

struct opts {
    const char *config, *layer_type, *q, *k, *eq, *ek, *positions_spec, *variant, *family, *gguf,
               *glob;
    const char *reports[MAX_REPORTS];
    int n_reports;
    int64_t max_position, offset;
    int64_t seq_len;       /* --seq-len: the dumps' sequence length (0: largest position + 1) */
    uint64_t seed;
    int samples, quiet, rotated, has_tol, has_hf_tol, has_style, assume_bf16, has_prec;
    int report_stdout;     /* --report -: the JSON report is stdout, the summary is not printed */
    posenc_precision prec;
    double tol, hf_tol;
    posenc_style style;
    enum layout layout;
};

/* ---- report state: the tree (formats/report_tree.c) and the failure count ---- */
struct vstate {
    cJSON *root;
    int failed, n_checks;
    /* one pair of a multi-layer dump (verify_pairs): check names get "@GROUP", the dump's rope
     * parameters go to its row, and a layer without RoPE is checked as not rotated */
    const char *suffix;
    cJSON *row;
    int nope;
    int64_t layer;
};

static cJSON *add_check(struct vstate *v, const char *name, int ok, int info, double abs_err,
                        double rel_err, double tol, const char *summary, cJSON *details)
{
    char full[POSENC_NAME_MAX + 96];
    snprintf(full, sizeof full, "%s%s%s", name, v->suffix ? "@" : "", v->suffix ? v->suffix : "");
    v->n_checks++;
    v->failed += !ok;
    return pe_report_add_check(v->root, full, ok, info, abs_err, rel_err, tol, summary,
                                   details);
}

/* ---- dumps ---- */
struct dump {
    const char *spec;
    posenc_reader *r;
    posenc_array_info info;
    int64_t B, H, S, D;
    unsigned char *raw;
    double *buf;
    size_t buf_rows;   /* rows currently in buf */
    size_t buf_next;   /* next row to hand out */
    uint64_t rows_left;
};

static int dump_open(const char *spec, enum layout lay, int assume_bf16, struct dump *d)
{
    posenc_error err = { 0 };
    posenc_read_opts ro = { assume_bf16, POSENC_FMT_AUTO };
    memset(d, 0, sizeof *d);
    d->spec = spec;
    if (posenc_reader_open(spec, &ro, &d->r, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    d->info = *posenc_reader_info(d->r);
    const posenc_array_info *a = &d->info;
    if (!posenc_dtype_is_float(a->dtype)) {
        cmd_msg(CMD, "'%s': dtype %s is not a float type", spec, posenc_dtype_name(a->dtype));
        return CMD_EXIT_ERROR;
    }
    if (a->ndim != layout_ndim[lay]) {
        char sh[128];
        cmd_msg(CMD, "'%s': shape %s does not fit layout %s (%d dims)", spec,
                   posenc_shape_str(a->ndim, a->shape, sh, sizeof sh), layout_names[lay],
                   layout_ndim[lay]);
        return CMD_EXIT_ERROR;
    }
    const int64_t *s = a->shape;
    d->B = 1;
    d->H = 1;
    switch (lay) {
    case L_BHSD: d->B = s[0]; d->H = s[1]; d->S = s[2]; d->D = s[3]; break;
    case L_BSHD: d->B = s[0]; d->S = s[1]; d->H = s[2]; d->D = s[3]; break;
    case L_SHD: d->S = s[0]; d->H = s[1]; d->D = s[2]; break;
    case L_HSD: d->H = s[0]; d->S = s[1]; d->D = s[2]; break;
    case L_SD: d->S = s[0]; d->D = s[1]; break;
    }
    uint64_t nelem;
    if (posenc_shape_size(a->ndim, a->shape, a->dtype, &nelem, NULL, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    if (d->D < 1 || nelem == 0) {
        cmd_msg(CMD, "'%s': empty dump", spec);
        return CMD_EXIT_ERROR;
    }
    d->rows_left = nelem / (uint64_t)d->D;
    size_t rows = CHUNK_ELEMS / (size_t)d->D;
    if (rows < 1)
        rows = 1;
    d->raw = malloc(rows * (size_t)d->D * posenc_dtype_size(a->dtype));
    d->buf = malloc(rows * (size_t)d->D * sizeof(double));
    if (!d->raw || !d->buf) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    return 0;
}

static void dump_close(struct dump *d)
{
    posenc_reader_close(d->r);
    free(d->raw);
    free(d->buf);
    memset(d, 0, sizeof *d);
}

/* Next row of the dump as doubles (borrowed until the next call); NULL + *rc on error. */
static const double *dump_row(struct dump *d, int *rc)
{
    if (d->buf_next == d->buf_rows) {
        size_t cap = CHUNK_ELEMS / (size_t)d->D;
        if (cap < 1)
            cap = 1;
        uint64_t n = d->rows_left < cap ? d->rows_left : cap;
        if (n == 0) {
            cmd_msg(CMD, "'%s': fewer rows than its shape says", d->spec);
            *rc = CMD_EXIT_ERROR;
            return NULL;
        }
        posenc_error err = { 0 };
        uint64_t ne = n * (uint64_t)d->D;
        if (posenc_reader_read(d->r, d->raw, ne, &err) != POSENC_OK) {
            *rc = cmd_fail(CMD, &err);
            return NULL;
        }
        posenc_dtype_convert(d->buf, POSENC_DT_F64, d->raw, d->info.dtype, (size_t)ne);
        d->rows_left -= n;
        d->buf_rows = (size_t)n;
        d->buf_next = 0;
    }
    return d->buf + (d->buf_next++) * (size_t)d->D;
}

static void row_coords(enum layout lay, const struct dump *d, uint64_t r, int64_t *b, int64_t *h,
                       int64_t *s)
{
    uint64_t S = (uint64_t)d->S, H = (uint64_t)d->H;
    switch (lay) {
    case L_BHSD: *s = (int64_t)(r % S); *h = (int64_t)(r / S % H); *b = (int64_t)(r / S / H); break;
    case L_BSHD: *h = (int64_t)(r % H); *s = (int64_t)(r / H % S); *b = (int64_t)(r / H / S); break;
    case L_SHD: *h = (int64_t)(r % H); *s = (int64_t)(r / H); *b = 0; break;
    case L_HSD: *s = (int64_t)(r % S); *h = (int64_t)(r / S); *b = 0; break;
    default: *s = (int64_t)r; *h = 0; *b = 0; break;
    }
}

/* ---- one tensor's pass ---- */
struct stats {
    double max_abs, max_rel, max_ratio;
    uint64_t rows, bad;
    int64_t worst_b, worst_h, worst_pos;
    double *head_abs, *head_rel;
    double b_abs[NBUCKET], b_rel[NBUCKET];
    uint64_t b_rows[NBUCKET];
};

struct sample {
    int64_t pos;
    int head;
    double *pre, *expected;
};

struct pass {
    const char *what;              /* "q" or "k" */
    struct dump *pre, *cmp;        /* pre-RoPE dump (NULL with --rotated), compared dump */
    const int64_t *positions;      /* S of them */
    const posenc_verify_recipe *rec;
    posenc_verify_tolerance tol;
    const unsigned char *keep_s;   /* sequence indices to sample */
    struct stats st;
    struct sample *samples;
    size_t n_samples, cap_samples;
    double *cache_c, *cache_s;     /* S * n_freq, or NULL */
    unsigned char *cache_ok;
    int own_cache;                 /* 0 when borrowed from the other pass */
};

static int bucket_of(int64_t pos)
{
    if (pos <= 0)
        return 0;
    int b = 0;
    while (pos) {
        b++;
        pos >>= 1;
    }
    return b < NBUCKET ? b : NBUCKET - 1;
}

static int keep_sample(struct pass *p, int64_t pos, int head, const double *pre,
                       const double *expected, size_t D)
{
    if (p->n_samples == p->cap_samples)
        return 0;
    struct sample *s = &p->samples[p->n_samples];
    s->pre = malloc(D * sizeof(double));
    s->expected = expected ? malloc(D * sizeof(double)) : NULL;
    if (!s->pre || (expected && !s->expected)) {
        free(s->pre);
        free(s->expected);
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    memcpy(s->pre, pre, D * sizeof(double));
    if (expected)
        memcpy(s->expected, expected, D * sizeof(double));
    s->pos = pos;
    s->head = head;
    p->n_samples++;
    return 0;
}

static void cossin_at(struct pass *p, int64_t s, double **c, double **sn, double *lc, double *ls)
{
    int nf = p->rec->params.n_freq;
    if (p->cache_c) {
        double *cc = p->cache_c + (size_t)s * (size_t)nf, *ss = p->cache_s + (size_t)s * (size_t)nf;
        if (!p->cache_ok[s]) {
            posenc_verify_recipe_cossin(p->rec, p->positions[s], cc, ss);
            p->cache_ok[s] = 1;
        }
        *c = cc;
        *sn = ss;
        return;
    }
    posenc_verify_recipe_cossin(p->rec, p->positions[s], lc, ls);
    *c = lc;
    *sn = ls;
}

/* Stream the pass: compare rows (when cmp is set), collect samples. */
static int run_pass(struct pass *p, enum layout lay, int need_samples_only)
{
    struct dump *main = p->pre ? p->pre : p->cmp;
    size_t D = (size_t)main->D;
    uint64_t total = (uint64_t)main->B * (uint64_t)main->H * (uint64_t)main->S;
    int nf = p->rec->params.n_freq;
    double lc[POSENC_MAX_FREQ], ls[POSENC_MAX_FREQ];
    double *scratch = malloc(D * sizeof(double));
    double *ref = NULL; /* --rotated: de-rotated first row of each (b, h) */
    unsigned char *ref_ok = NULL;
    int rc = 0;
    struct stats *st = &p->st;
    st->head_abs = calloc((size_t)main->H, sizeof(double));
    st->head_rel = calloc((size_t)main->H, sizeof(double));
    if (!p->pre) {
        ref = malloc((size_t)main->B * (size_t)main->H * D * sizeof(double));
        ref_ok = calloc((size_t)main->B * (size_t)main->H, 1);
    }
    if (!scratch || !st->head_abs || !st->head_rel || (!p->pre && (!ref || !ref_ok))) {
        cmd_msg(CMD, "out of memory");
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    uint64_t want = 0;
    for (int64_t s = 0; s < main->S; s++)
        want += p->keep_s[s] ? (main->H > 1 ? 2 : 1) : 0;
    for (uint64_t r = 0; r < total; r++) {
        int64_t b, h, s;
        row_coords(lay, main, r, &b, &h, &s);
        const double *pre = NULL, *exp = NULL;
        if (p->pre && !(pre = dump_row(p->pre, &rc)))
            goto out;
        if (p->cmp && !(exp = dump_row(p->cmp, &rc)))
            goto out;
        int64_t pos = p->positions[s];
        double *c = NULL, *sn = NULL;
        if (!p->pre) {
            size_t bh = (size_t)b * (size_t)main->H + (size_t)h;
            double *rr = ref + bh * D;
            if (!ref_ok[bh]) {
                /* first row of this head: undo R(pos) * scaling with the config */
                cossin_at(p, s, &c, &sn, lc, ls);
                double a = p->rec->params.attention_scaling;
                double a2 = a * a > 0 ? a * a : 1;
                posenc_verify_rotate(p->rec->params.style, (int)D, 2 * nf, c, sn, 1, exp, rr);
                for (int j = 0; j < 2 * nf && j < (int)D; j++)
                    rr[j] /= a2 / p->rec->scale;
                ref_ok[bh] = 1;
            }
            pre = rr;
        }
        int sampled = b == 0 && (h == 0 || h == main->H - 1) && p->keep_s[s];
        if (sampled && (rc = keep_sample(p, pos, (int)h, pre, exp, D)) != 0)
            goto out;
        if (!exp) {
            if (need_samples_only && p->n_samples >= want)
                break;
            continue;
        }
        if (!c)
            cossin_at(p, s, &c, &sn, lc, ls);
        double ae, re, q;
        posenc_verify_row_error(p->rec, &p->tol, pos, c, sn, pre, exp, scratch, &ae, &re, &q);
        st->rows++;
        if (!(q <= 1.0))
            st->bad++;
        if (ae > st->max_abs || ae != ae)
            st->max_abs = ae;
        if (re > st->max_rel || re != re)
            st->max_rel = re;
        if (q > st->max_ratio || q != q || st->rows == 1) {
            if (q > st->max_ratio || q != q) {
                st->max_ratio = q;
            }
            if (st->rows == 1 || q >= st->max_ratio || q != q) {
                st->worst_b = b;
                st->worst_h = h;
                st->worst_pos = pos;
            }
        }
        if (ae > st->head_abs[h])
            st->head_abs[h] = ae;
        if (re > st->head_rel[h])
            st->head_rel[h] = re;
        int bk = bucket_of(pos);
        st->b_rows[bk]++;
        if (ae > st->b_abs[bk])
            st->b_abs[bk] = ae;
        if (re > st->b_rel[bk])
            st->b_rel[bk] = re;
    }
out:
    free(scratch);
    free(ref);
    free(ref_ok);
    return rc;
}

static void pass_free(struct pass *p)
{
    for (size_t i = 0; i < p->n_samples; i++) {
        free(p->samples[i].pre);
        free(p->samples[i].expected);
    }
    free(p->samples);
    free(p->st.head_abs);
    free(p->st.head_rel);
    if (p->own_cache) {
        free(p->cache_c);
        free(p->cache_s);
        free(p->cache_ok);
    }
}

/* The comparison check of one pass (expect_q / rotated_k ...), with its diagnosis. */
static int compare_check(struct vstate *v, const struct opts *o, const posenc_model *m,
                         struct pass *p, const char *kind, const posenc_rope_config *cfg,
                         int64_t seq_len)
{
    struct stats *st = &p->st;
    struct dump *main = p->pre ? p->pre : p->cmp;
    char name[32], summary[512];
    snprintf(name, sizeof name, "%s_%s", kind, p->what);
    int ok = st->max_ratio <= 1.0 && st->rows > 0;
    if (v->nope && ok)
        snprintf(summary, sizeof summary,
                 "%s is not rotated, as layer %" PRId64 " has no RoPE: max rel err %.3g over %"
                 PRIu64 " rows", p->what, v->layer, st->max_rel, st->rows);
    else if (v->nope)
        snprintf(summary, sizeof summary,
                 "%s differs from the unrotated %s in %" PRIu64 " of %" PRIu64 " rows, but layer %"
                 PRId64 " has no RoPE: max rel err %.3g (worst at head %" PRId64 ", position %"
                 PRId64 ")", p->what, p->what, st->bad, st->rows, v->layer, st->max_rel,
                 st->worst_h, st->worst_pos);
    else if (ok)
        snprintf(summary, sizeof summary,
                 "%s matches posenc's rotation: max rel err %.3g over %" PRIu64 " rows", p->what,
                 st->max_rel, st->rows);
    else
        snprintf(summary, sizeof summary,
                 "%s differs from posenc's rotation in %" PRIu64 " of %" PRIu64
                 " rows: max rel err %.3g (worst at head %" PRId64 ", position %" PRId64 ")",
                 p->what, st->bad, st->rows, st->max_rel, st->worst_h, st->worst_pos);
    cJSON *det = cJSON_CreateObject();
    cJSON_AddStringToObject(det, "reference", v->nope ? "the pre-RoPE rows (the layer has no RoPE)"
                            : "posenc's rotation of the pre-RoPE rows with transformers' float32 tables");
    cJSON_AddNumberToObject(det, "rows", (double)st->rows);
    cJSON_AddNumberToObject(det, "rows_failed", (double)st->bad);
    cJSON_AddItemToObject(det, "max_allowance_ratio", pe_report_number(st->max_ratio));
    cJSON_AddNumberToObject(det, "angle_slack", p->tol.angle_slack);
    cJSON *w = cJSON_CreateObject();
    cJSON_AddNumberToObject(w, "batch", (double)st->worst_b);
    cJSON_AddNumberToObject(w, "head", (double)st->worst_h);
    cJSON_AddNumberToObject(w, "position", (double)st->worst_pos);
    cJSON_AddItemToObject(det, "worst", w);
    cJSON *ph = cJSON_CreateArray();
    for (int64_t h = 0; h < main->H; h++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "head", (double)h);
        cJSON_AddItemToObject(e, "max_abs_err", pe_report_number(st->head_abs[h]));
        cJSON_AddItemToObject(e, "max_rel_err", pe_report_number(st->head_rel[h]));
        cJSON_AddItemToArray(ph, e);
    }
    cJSON_AddItemToObject(det, "per_head", ph);
    cJSON *pr = cJSON_CreateArray();
    double xs[NBUCKET], ya[NBUCKET], yr[NBUCKET];
    int np = 0;
    for (int b = 0; b < NBUCKET; b++) {
        if (!st->b_rows[b])
            continue;
        int64_t lo = b == 0 ? 0 : (int64_t)1 << (b - 1), hi = b == 0 ? 0 : ((int64_t)1 << b) - 1;
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
    cJSON_AddItemToObject(det, "per_position_range", pr);
    cJSON *plots = cJSON_CreateArray();
    char title[96];
    snprintf(title, sizeof title, "%s: error against position", p->what);
    cJSON *pl = pe_report_plot(title, "position range end + 1", "max error", p->tol.tol,
                                   "rel tolerance");
    cJSON *ser = cJSON_GetObjectItemCaseSensitive(pl, "series");
    cJSON_AddItemToArray(ser, pe_report_series("max rel err", xs, yr, np));
    cJSON_AddItemToArray(ser, pe_report_series("max abs err", xs, ya, np));
    cJSON_AddItemToArray(plots, pl);
    cJSON_AddItemToObject(det, "plots", plots);
    posenc_verify_sample *rows = malloc((p->n_samples + 1) * sizeof *rows);
    if (!rows) {
        cJSON_Delete(det);
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    for (size_t i = 0; i < p->n_samples; i++) {
        rows[i].pos = p->samples[i].pos;
        rows[i].head = p->samples[i].head;
        rows[i].pre = p->samples[i].pre;
        rows[i].expected = p->samples[i].expected;
    }
    posenc_error err = { 0 };
    /* which runtime's numerics the rows are (pre-RoPE dumps given, a layer with RoPE): a dump
     * that is exactly one runtime's output passes however far that runtime drifts from
     * transformers, unless --precision names the one to hold it to */
    if (p->pre && !v->nope && p->n_samples > 0) {
        posenc_verify_profiles_result fits;
        if (posenc_verify_profiles(m, o->layer_type, cfg, seq_len, p->tol.tol, rows,
                                   p->n_samples, p->what, &fits, &err) != POSENC_OK) {
            free(rows);
            cJSON_Delete(det);
            return cmd_fail(CMD, &err);
        }
        pe_report_runtimes(det, &fits);
        const posenc_profile_fit *b = fits.best >= 0 ? &fits.fit[fits.best] : NULL;
        if (!ok && !o->has_prec && b) {
            ok = 1;
            snprintf(summary, sizeof summary, "%s (posenc's hf rotation differs by max rel err "
                     "%.3g)", fits.explanation, st->max_rel);
        } else if (!b || b->prec != (o->has_prec ? o->prec : POSENC_PREC_HF)) {
            /* no profile fits, or another than the one the rows were held to */
            size_t len = strlen(summary);
            snprintf(summary + len, sizeof summary - len, "; %s", fits.explanation);
        }
    }
    cJSON *c = add_check(v, name, ok, 0, st->max_abs, st->max_rel, p->tol.tol, summary, det);
    if (ok || p->n_samples == 0 || v->nope) {
        free(rows);
        return 0;
    }
    posenc_diagnosis *d = malloc(sizeof *d);
    if (!d) {
        free(rows);
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    posenc_status s = posenc_verify_diagnose(cfg, seq_len, &p->tol, rows, p->n_samples, p->what, d, &err);
    free(rows);
    if (s != POSENC_OK) {
        free(d);
        return cmd_fail(CMD, &err);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(c, "diagnosis", pe_report_diagnosis(d));
    free(d);
    return 0;
}

/* ---- invariance checks (config alone, or sampled dump rows) ---- */
static void invariance_checks(struct vstate *v, const struct opts *o,
                              const posenc_invariance_result *res, const char *source,
                              int64_t max_position, const char *layer)
{
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(v->root, "checks");
    int first = cJSON_GetArraySize(checks);
    v->failed += pe_report_invariance(v->root, res, source, max_position, layer,
                                          o->has_tol ? o->tol : POSENC_VERIFY_INVARIANCE_TOL,
                                          o->has_hf_tol ? o->hf_tol : NAN);
    v->n_checks += 3;
    /* one pair of a multi-layer dump: NAME@GROUP, as add_check names the others */
    for (int c = first; v->suffix && c < cJSON_GetArraySize(checks); c++) {
        cJSON *ck = cJSON_GetArrayItem(checks, c);
        char full[POSENC_NAME_MAX + 96];
        snprintf(full, sizeof full, "%s@%s",
                 cJSON_GetObjectItemCaseSensitive(ck, "name")->valuestring, v->suffix);
        cJSON_ReplaceItemInObjectCaseSensitive(ck, "name", cJSON_CreateString(full));
    }
}

/* ---- non-rotary encodings ---- */
static void bias_check(struct vstate *v, const char *name, const posenc_bias_check_result *r,
                       const char *what)
{
    char summary[512];
    int ok = r->violations == 0 && r->checked > 0;
    snprintf(summary, sizeof summary, "%s: %" PRIu64 " comparisons, %" PRIu64
             " outside tolerance, max err %.3g", what, r->checked, r->violations, r->max_abs_err);
    cJSON *det = cJSON_CreateObject();
    cJSON_AddNumberToObject(det, "checked", (double)r->checked);
    cJSON_AddNumberToObject(det, "violations", (double)r->violations);
    cJSON_AddNumberToObject(det, "worst_i", (double)r->worst_i);
    cJSON_AddNumberToObject(det, "worst_j", (double)r->worst_j);
    add_check(v, name, ok, 0, r->max_abs_err, r->max_rel_err, r->tolerance, summary, det);
}

static int verify_bias(struct vstate *v, const struct opts *o, const posenc_model *m,
                       posenc_encoding enc)
{
    const posenc_bias_config *b = posenc_model_bias(m);
    posenc_bias_config dflt = { 0 };
    if (!b)
        b = &dflt;
    posenc_error err = { 0 };
    posenc_bias_check_result r;
    int64_t maxp = o->max_position;
    if (maxp <= 0)
        maxp = b->max_positions > 0 ? b->max_positions : posenc_model_max_positions(m);
    if (maxp <= 0)
        maxp = 2048;
    cJSON *bj = cJSON_CreateObject();
    cJSON_AddNumberToObject(bj, "heads", b->heads);
    cJSON_AddNumberToObject(bj, "max_positions", (double)maxp);
    cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(v->root, "config"), "bias", bj);
    if (enc == POSENC_ENC_ALIBI) {
        static const char *kinds[] = { "reference", "mpt", "falcon" };
        cJSON_AddStringToObject(bj, "alibi_kind", kinds[b->alibi_kind <= 2 ? b->alibi_kind : 0]);
        if (b->heads < 1) {
            cmd_msg(CMD, "'%s': ALiBi check needs the number of attention heads", o->config);
            return CMD_EXIT_ERROR;
        }
        static const posenc_alibi_convention convs[] = { POSENC_ALIBI_SYMMETRIC, POSENC_ALIBI_CAUSAL,
                                                         POSENC_ALIBI_KEYINDEX };
        for (int i = 0; i < 3; i++) {
            if (posenc_verify_alibi(b, convs[i], maxp, &r, &err) != POSENC_OK)
                return cmd_fail(CMD, &err);
            char name[64], what[128];
            snprintf(name, sizeof name, "alibi_%s", posenc_alibi_convention_name(convs[i]));
            snprintf(what, sizeof what, "b(i,j) - b(i,i) == -m(i-j) for j <= i, %d heads", b->heads);
            bias_check(v, name, &r, what);
        }
    } else if (enc == POSENC_ENC_T5) {
        int nb = b->num_buckets > 0 ? b->num_buckets : 32, md = b->max_distance > 0 ? b->max_distance : 128;
        cJSON_AddNumberToObject(bj, "num_buckets", nb);
        cJSON_AddNumberToObject(bj, "max_distance", md);
        cJSON_AddBoolToObject(bj, "is_decoder", b->is_decoder);
        for (int bidir = 1; bidir >= 0; bidir--) {
            if (posenc_verify_t5(nb, md, bidir, maxp, &r, &err) != POSENC_OK)
                return cmd_fail(CMD, &err);
            bias_check(v, bidir ? "t5_bidirectional" : "t5_causal", &r,
                       "buckets depend only on j-i, monotone in |j-i|, match transformers' float32 formula");
        }
    } else if (enc == POSENC_ENC_SINUSOIDAL) {
        posenc_sinusoidal_variant var = b->sinusoidal_variant; /* the model's, from the registry */
        if (o->variant && posenc_sinusoidal_variant_parse(o->variant, &var, &err) != POSENC_OK)
            return cmd_usage_error(CMD, "--variant: %s", err.msg);
        int d = b->d_model > 0 ? b->d_model : (b->heads * b->head_dim);
        cJSON_AddStringToObject(bj, "variant", posenc_sinusoidal_variant_name(var));
        cJSON_AddNumberToObject(bj, "d_model", d);
        if (posenc_verify_sinusoidal(var, d, var == POSENC_SIN_FAIRSEQ ? b->padding_idx : -1, maxp,
                                     o->seed, &r, &err) != POSENC_OK)
            return cmd_fail(CMD, &err);
        bias_check(v, "sinusoidal_rotation", &r, "PE(p+k) is the rotation of PE(p) by PE(k)'s angles");
    } else {
        char summary[256];
        snprintf(summary, sizeof summary, "the model uses %s positions: nothing relative to verify",
                 enc == POSENC_ENC_NONE ? "no" : posenc_encoding_name(enc));
        add_check(v, "encoding", 1, 1, NAN, NAN, NAN, summary, NULL);
    }
    return 0;
}

/* ---- main flow for RoPE ---- */
/* Positions of the S tokens: --positions (counted against S before it is expanded), else
 * --offset + s. *out is malloc'd (caller frees). */
static int read_positions(const struct opts *o, int64_t S, int64_t **out)
{
    int64_t *p = NULL;
    if (o->positions_spec) {
        pe_positions *pp;
        const int64_t *v;
        posenc_error err = { 0 };
        int rc = cmd_parse_positions(CMD, o->positions_spec, POS_END, UINT64_MAX, &pp);
        if (rc)
            return rc;
        if (pp->count != (uint64_t)S) {
            uint64_t n = pp->count;
            int file = pp->from_file;
            pe_positions_free(pp);
            if (!file)
                return cmd_usage_error(CMD, "--positions: %" PRIu64 " position%s for a "
                                               "sequence of %" PRId64 " token%s", n,
                                          n == 1 ? "" : "s", S, S == 1 ? "" : "s");
            cmd_msg(CMD, "'%s': %" PRIu64 " position%s for a sequence of %" PRId64 " token%s",
                       o->positions_spec, n, n == 1 ? "" : "s", S, S == 1 ? "" : "s");
            return CMD_EXIT_ERROR;
        }
        if (pe_positions_values(pp, &v, &err) != POSENC_OK ||
            !(p = malloc((size_t)S * sizeof *p))) {
            pe_positions_free(pp);
            if (err.msg[0])
                return cmd_fail(CMD, &err);
            cmd_msg(CMD, "out of memory");
            return CMD_EXIT_ERROR;
        }
        memcpy(p, v, (size_t)S * sizeof *p);
        pe_positions_free(pp);
    } else {
        p = malloc((size_t)S * sizeof *p);
        if (!p) {
            cmd_msg(CMD, "out of memory");
            return CMD_EXIT_ERROR;
        }
        for (int64_t s = 0; s < S; s++)
            p[s] = o->offset + s;
    }
    *out = p;
    return 0;
}

static int setup_pass(struct pass *p, const char *what, struct dump *pre, struct dump *cmp,
                      const int64_t *positions, const posenc_verify_recipe *rec, double tol,
                      const unsigned char *keep_s, int64_t S, const struct pass *share)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->pre = pre;
    p->cmp = cmp;
    p->positions = positions;
    p->rec = rec;
    p->tol.tol = tol;
    p->tol.angle_slack = POSENC_VERIFY_ANGLE_SLACK;
    p->keep_s = keep_s;
    p->cap_samples = 2 * MAX_SAMPLE_S + 4;
    p->samples = calloc(p->cap_samples, sizeof *p->samples);
    int nf = rec->params.n_freq > 0 ? rec->params.n_freq : 1;
    if (share) { /* same recipe and positions: one cos/sin cache serves q and k */
        p->cache_c = share->cache_c;
        p->cache_s = share->cache_s;
        p->cache_ok = share->cache_ok;
    } else if ((uint64_t)S * (uint64_t)nf * 16 <= COSSIN_CACHE_BYTES) {
        p->own_cache = 1;
        p->cache_c = malloc((size_t)S * (size_t)nf * sizeof(double));
        p->cache_s = malloc((size_t)S * (size_t)nf * sizeof(double));
        p->cache_ok = calloc((size_t)S, 1);
        if (!p->cache_c || !p->cache_s || !p->cache_ok) {
            free(p->cache_c);
            free(p->cache_s);
            free(p->cache_ok);
            p->cache_c = p->cache_s = NULL;
            p->cache_ok = NULL;
        }
    }
    if (!p->samples) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    return 0;
}

static int same_shape(const struct dump *a, const struct dump *b)
{
    if (a->info.ndim != b->info.ndim)
        return 0;
    for (int i = 0; i < a->info.ndim; i++)
        if (a->info.shape[i] != b->info.shape[i])
            return 0;
    return 1;
}

static int verify_dumps(struct vstate *v, const struct opts *o, const posenc_model *m,
                        const posenc_rope_config *cfg, cJSON *inputs)
{
    struct dump dq = { 0 }, dk = { 0 }, deq = { 0 }, dek = { 0 };
    int64_t *positions = NULL;
    unsigned char *keep = NULL;
    struct pass pq, pk;
    memset(&pq, 0, sizeof pq);
    memset(&pk, 0, sizeof pk);
    posenc_error err = { 0 };
    int rc;
    if ((rc = dump_open(o->q, o->layout, o->assume_bf16, &dq)) || (rc = dump_open(o->k, o->layout, o->assume_bf16, &dk)))
        goto out;
    if (o->eq && (rc = dump_open(o->eq, o->layout, o->assume_bf16, &deq)))
        goto out;
    if (o->ek && (rc = dump_open(o->ek, o->layout, o->assume_bf16, &dek)))
        goto out;
    if (dq.D != cfg->head_dim || dk.D != cfg->head_dim) {
        cmd_msg(CMD, "'%s': head_dim %" PRId64 " does not match head_dim %d of '%s'",
                   dq.D != cfg->head_dim ? o->q : o->k, dq.D != cfg->head_dim ? dq.D : dk.D,
                   cfg->head_dim, o->config);
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    if (dq.B != dk.B || dq.S != dk.S) {
        cmd_msg(CMD, "'%s': batch and sequence (%" PRId64 ", %" PRId64 ") differ from '%s' (%" PRId64
                   ", %" PRId64 ")", o->k, dk.B, dk.S, o->q, dq.B, dq.S);
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    if (dq.H % dk.H != 0) {
        cmd_msg(CMD, "'%s': %" PRId64 " key heads do not divide %" PRId64 " query heads", o->k,
                   dk.H, dq.H);
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    if ((o->eq && !same_shape(&dq, &deq)) || (o->ek && !same_shape(&dk, &dek))) {
        const char *bad = o->eq && !same_shape(&dq, &deq) ? o->eq : o->ek;
        cmd_msg(CMD, "'%s': shape differs from '%s'", bad, bad == o->eq ? o->q : o->k);
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    int64_t S = dq.S;
    if ((rc = read_positions(o, S, &positions)))
        goto out;
    int64_t maxpos = 0;
    for (int64_t s = 0; s < S; s++)
        if (positions[s] > maxpos)
            maxpos = positions[s];
    int64_t seq_len = o->seq_len ? o->seq_len : maxpos + 1;
    posenc_rope_params params;
    posenc_vllm_info vi;
    posenc_precision prec = o->has_prec ? o->prec : POSENC_PREC_HF;
    if (posenc_rope_params_for(cfg, prec, posenc_model_family(m), seq_len, 0, &params, &vi,
                               &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    if (prec == POSENC_PREC_VLLM && maxpos >= vi.cache_len) {
        cmd_msg(CMD, "'%s': position %" PRId64 " is past vLLM's cos_sin_cache (%s: %" PRId64
                        " rows)", o->config, maxpos, vi.cls, vi.cache_len);
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    if (o->has_prec && o->prec == POSENC_PREC_GGML &&
        (rc = cmd_ggml_params(CMD, o->config, m, o->layer_type, seq_len, &params)) != 0)
        goto out;
    if (v->row) {
        cJSON_AddItemToObject(v->row, "rope", v->nope ? cJSON_CreateNull() : pe_report_rope(cfg, &params));
    } else {
        cJSON *cj = cJSON_GetObjectItemCaseSensitive(v->root, "config");
        cJSON_ReplaceItemInObjectCaseSensitive(cj, "rope", pe_report_rope(cfg, &params));
    }
    if (v->nope) {
        /* a layer without RoPE: the reference is the unrotated row */
        params.n_freq = 0;
        params.rotary_dim = 0;
        params.attention_scaling = 1;
    }
    posenc_verify_recipe rec;
    posenc_verify_recipe_init(&rec, &params);
    if (o->has_prec)
        rec.prec = o->prec;

    /* sampled sequence indices: the first 8, then log-spaced, and the last */
    keep = calloc((size_t)S, 1);
    if (!keep) {
        cmd_msg(CMD, "out of memory");
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    int nk = 0;
    for (int64_t s = 0; s < S && s < 8; s++, nk++)
        keep[s] = 1;
    for (double x = 8; x < (double)S && nk < MAX_SAMPLE_S - 1; x *= 1.35) {
        int64_t s = (int64_t)x;
        if (!keep[s]) {
            keep[s] = 1;
            nk++;
        }
    }
    keep[S - 1] = 1;

    {
        pe_report_pair pair = { NULL, 0, { { 0 } } };
        const struct { const char *role, *spec; const struct dump *d; } ds[] = {
            { "q", o->q, &dq }, { "k", o->k, &dk }, { "expect_q", o->eq, &deq }, { "expect_k", o->ek, &dek },
        };
        for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
            if (ds[i].spec)
                pair.dumps[pair.n_dumps++] = (pe_report_dump){
                    ds[i].role, ds[i].spec, posenc_dtype_name(ds[i].d->info.dtype),
                    ds[i].d->info.ndim, ds[i].d->info.shape };
        pe_report_header h = { o->config, o->layer_type, NULL, layout_names[o->layout],
                                   o->positions_spec, o->offset, positions[0], positions[S - 1],
                                   1, &pair };
        h.precision = o->rotated
                          ? "hf: transformers' float32 tables; the first row of each head undone "
                            "with them, every row compared with posenc's rotation of it"
                          : "hf: posenc's rotation of the pre-RoPE rows with transformers' "
                            "float32 tables, compared in double";
        pe_report_set_header(v->root, &h);
    }
    cJSON_AddStringToObject(inputs, "q", o->q);
    cJSON_AddStringToObject(inputs, "k", o->k);
    if (o->eq)
        cJSON_AddStringToObject(inputs, "expect_q", o->eq);
    if (o->ek)
        cJSON_AddStringToObject(inputs, "expect_k", o->ek);
    cJSON_AddStringToObject(inputs, "layout", layout_names[o->layout]);
    cJSON_AddStringToObject(inputs, "precision", posenc_precision_name(rec.prec));
    if (rec.prec == POSENC_PREC_GGML) {
        pe_strbuf gb = { 0 };
        cmd_ggml_json(&gb, &params);
        char *t = pe_strbuf_finish(&gb);
        cJSON_AddItemToObject(inputs, "ggml", t ? cJSON_CreateRaw(t) : cJSON_CreateNull());
        free(t);
    }
    cJSON_AddStringToObject(inputs, "dtype_q", posenc_dtype_name(dq.info.dtype));
    cJSON_AddStringToObject(inputs, "dtype_k", posenc_dtype_name(dk.info.dtype));
    cJSON_AddNumberToObject(inputs, "batch", (double)dq.B);
    cJSON_AddNumberToObject(inputs, "heads_q", (double)dq.H);
    cJSON_AddNumberToObject(inputs, "heads_k", (double)dk.H);
    cJSON_AddNumberToObject(inputs, "seq", (double)S);
    cJSON_AddBoolToObject(inputs, "rotated", o->rotated);
    cJSON_AddNumberToObject(inputs, "first_position", (double)positions[0]);
    cJSON_AddNumberToObject(inputs, "max_position_in_dump", (double)maxpos);

    const char *kind = o->rotated ? "rotated" : "expect";
    double tq = o->has_tol ? o->tol : posenc_verify_default_tol((o->rotated ? dq : (o->eq ? deq : dq)).info.dtype);
    double tk = o->has_tol ? o->tol : posenc_verify_default_tol((o->rotated ? dk : (o->ek ? dek : dk)).info.dtype);
    if ((rc = setup_pass(&pq, "q", o->rotated ? NULL : &dq, o->rotated ? &dq : (o->eq ? &deq : NULL),
                         positions, &rec, tq, keep, S, NULL)))
        goto out;
    if ((rc = setup_pass(&pk, "k", o->rotated ? NULL : &dk, o->rotated ? &dk : (o->ek ? &dek : NULL),
                         positions, &rec, tk, keep, S, &pq)))
        goto out;
    if ((rc = run_pass(&pq, o->layout, 1)) || (rc = run_pass(&pk, o->layout, 1)))
        goto out;

    if (v->nope && !pq.cmp) {
        char summary[256];
        snprintf(summary, sizeof summary, "layer %" PRId64 " has no RoPE: the dumps are not "
                 "rotated, nothing relative to check", v->layer);
        add_check(v, "no_rope", 1, 1, NAN, NAN, NAN, summary, NULL);
    } else if (!o->rotated && !v->nope) {
        /* scores of sampled pre-RoPE rows: head 0 of q against head 0 of k */
        size_t nqs = 0, nks = 0;
        size_t D = (size_t)dq.D;
        const struct sample *qs[2 * MAX_SAMPLE_S + 4], *ks[2 * MAX_SAMPLE_S + 4];
        for (size_t i = 0; i < pq.n_samples; i++)
            if (pq.samples[i].head == 0)
                qs[nqs++] = &pq.samples[i];
        for (size_t i = 0; i < pk.n_samples; i++)
            if (pk.samples[i].head == 0)
                ks[nks++] = &pk.samples[i];
        size_t npair = nqs * nks < 96 ? nqs * nks : 96;
        double *qv = malloc(npair * D * sizeof(double)), *kv = malloc(npair * D * sizeof(double));
        int64_t *mm = malloc(npair * sizeof(int64_t)), *nn = malloc(npair * sizeof(int64_t));
        if (!qv || !kv || !mm || !nn) {
            free(qv);
            free(kv);
            free(mm);
            free(nn);
            cmd_msg(CMD, "out of memory");
            rc = CMD_EXIT_ERROR;
            goto out;
        }
        for (size_t t = 0; t < npair; t++) {
            const struct sample *a = qs[t % nqs], *b = ks[(t / nqs + t * 7) % nks];
            memcpy(qv + t * D, a->pre, D * sizeof(double));
            memcpy(kv + t * D, b->pre, D * sizeof(double));
            mm[t] = a->pos;
            nn[t] = b->pos;
        }
        int64_t maxp = o->max_position > 0 ? o->max_position : cfg->max_position_embeddings;
        if (maxp < maxpos + 2)
            maxp = maxpos + 2;
        posenc_invariance_input in = { npair, (int)D, qv, kv, mm, nn, maxp };
        posenc_invariance_result *res = malloc(sizeof *res);
        posenc_status st = res ? posenc_verify_invariance(&params, &in, res, &err)
                               : posenc_seterr(&err, POSENC_ENOMEM, "out of memory");
        free(qv);
        free(kv);
        free(mm);
        free(nn);
        if (st != POSENC_OK) {
            free(res);
            rc = cmd_fail(CMD, &err);
            goto out;
        }
        invariance_checks(v, o, res, "sampled rows of the pre-RoPE dumps", maxp, NULL);
        free(res);
    }
    if (pq.cmp && (rc = compare_check(v, o, m, &pq, kind, cfg, seq_len)))
        goto out;
    if (pk.cmp && (rc = compare_check(v, o, m, &pk, kind, cfg, seq_len)))
        goto out;
    if (cfg->type == POSENC_ROPE_DYNAMIC)
        pe_report_add_note(v->root, "dynamic NTK: the base depends on the sequence length (theta %.6g used for "
                    "length %" PRId64 "); scores are relative within one length, but a key "
                    "cached under one base and a query rotated under another are not",
                 params.theta_used, seq_len);
out:
    pass_free(&pq);
    pass_free(&pk);
    free(positions);
    free(keep);
    dump_close(&dq);
    dump_close(&dk);
    dump_close(&deq);
    dump_close(&dek);
    return rc;
}

/* ---- every q/k pair of a multi-layer dump ---- */

/* Open o->q (and o->eq) as containers and find their pairs; NULL *pairs when o->q is one array
 * (the single-pair path). Returns an exit status. */
static int open_pairs(const struct opts *o, const char *spec, int must, posenc_container **c,
                      pe_pairs **pairs, char *path, size_t plen)
{
    char member[POSENC_NAME_MAX];
    posenc_error err = { 0 };
    posenc_read_opts ro = { o->assume_bf16, POSENC_FMT_AUTO };
    *c = NULL;
    *pairs = NULL;
    if (strcmp(spec, "-") == 0 ||
        posenc_spec_split(spec, path, plen, member, sizeof member, &err) != POSENC_OK ||
        member[0])
        return 0;
    if (posenc_container_open(path, &ro, c, &err) != POSENC_OK)
        return must ? cmd_fail(CMD, &err) : 0; /* else the single-dump path says it */
    if (posenc_container_count(*c) < 2 && !o->glob && !must) {
        posenc_container_close(*c);
        *c = NULL;
        return 0;
    }
    if (pe_pairs_find(*c, path, o->glob, pairs, &err) != POSENC_OK)
        return err.code == POSENC_EINVAL ? cmd_usage_error(CMD, "%s", err.msg)
                                         : cmd_fail(CMD, &err);
    return 0;
}

/* 1 when the compare check of `what` ("q" or "k") among checks[first..] passed (-1: none). */
static int compare_ok(const cJSON *checks, int first, const char *what)
{
    for (int c = first; c < cJSON_GetArraySize(checks); c++) {
        const cJSON *ck = cJSON_GetArrayItem(checks, c);
        const char *nm = cJSON_GetObjectItemCaseSensitive(ck, "name")->valuestring;
        char e[16], r[16];
        snprintf(e, sizeof e, "expect_%s@", what);
        snprintf(r, sizeof r, "rotated_%s@", what);
        if (strncmp(nm, e, strlen(e)) == 0 || strncmp(nm, r, strlen(r)) == 0)
            return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ck, "ok"));
    }
    return -1;
}

/* A failed pair: would another layer type's parameters, no rotation (a RoPE layer) or the
 * config's rotation (a layer without RoPE) have passed q or k? The likely mistake: a runtime
 * that swaps Gemma's sliding and full parameters, or ignores a NoPE layer. Checked quietly in a
 * scratch report; the answer goes to the pair's row ("explanation") and the notes. */
static void explain_pair(struct vstate *v, const struct opts *po, const posenc_model *m,
                         const pe_pair *pr, int head_dim, int first, cJSON *row)
{
    size_t nt = posenc_model_layer_type_count(m);
    const char *role[2] = { "q", "k" };
    char found[2][160] = { "", "" };
    int todo[2];
    for (int r = 0; r < 2; r++)
        todo[r] = compare_ok(cJSON_GetObjectItemCaseSensitive(v->root, "checks"), first,
                             role[r]) == 0;
    for (size_t i = 0; i <= (nt ? nt : 1) && (todo[0] || todo[1]); i++) {
        /* i < nt (or i == 0 with one set): rotate with that set; the last: do not rotate */
        int nope = i == (nt ? nt : 1);
        const char *lt = nope || !nt ? NULL : posenc_model_layer_type_name(m, i);
        if (nope == pr->nope && (nope || !nt || (pr->layer_type && strcmp(lt, pr->layer_type) == 0)))
            continue; /* what was checked */
        posenc_rope_config cfg;
        if (posenc_model_rope(m, nope && nt ? posenc_model_layer_type_name(m, 0) : lt, &cfg,
                              NULL) != POSENC_OK || cfg.head_dim != head_dim)
            continue;
        if (po->has_style)
            cfg.style = po->style;
        struct vstate sv = { 0 };
        if (!(sv.root = pe_report_new(posenc_version())))
            break;
        sv.row = cJSON_AddObjectToObject(sv.root, "row");
        sv.suffix = "";
        sv.nope = nope;
        sv.layer = pr->layer;
        struct opts so = *po;
        so.layer_type = nope && nt ? posenc_model_layer_type_name(m, 0) : lt;
        if (verify_dumps(&sv, &so, m, &cfg, sv.row) == 0)
            for (int r = 0; r < 2; r++)
                if (todo[r] && compare_ok(cJSON_GetObjectItemCaseSensitive(sv.root, "checks"), 0,
                                          role[r]) == 1) {
                    todo[r] = 0;
                    if (nope)
                        snprintf(found[r], sizeof found[r], "not rotated");
                    else if (lt)
                        snprintf(found[r], sizeof found[r], "rotated with layer type '%s'", lt);
                    else
                        snprintf(found[r], sizeof found[r], "rotated with the config's RoPE");
                }
        cJSON_Delete(sv.root);
    }
    char said[160], text[400];
    if (pr->nope)
        snprintf(said, sizeof said, "layer %lld has no RoPE", (long long)pr->layer);
    else if (pr->layer_type)
        snprintf(said, sizeof said, "layer %lld is %s", (long long)pr->layer, pr->layer_type);
    else
        snprintf(said, sizeof said, "the config rotates it");
    if (found[0][0] && found[1][0] && strcmp(found[0], found[1]) == 0)
        snprintf(text, sizeof text, "q and k match when %s", found[0]);
    else if (found[0][0] || found[1][0])
        snprintf(text, sizeof text, "%s%s%s%s%s", found[0][0] ? "q matches when " : "",
                 found[0], found[0][0] && found[1][0] ? ", " : "",
                 found[1][0] ? "k matches when " : "", found[1]);
    else {
        cJSON_AddNullToObject(row, "explanation");
        return;
    }
    cJSON_AddStringToObject(row, "explanation", text);
    pe_report_add_note(v->root, "%s: %s; %s", pe_pairs_label(pr), text, said);
}

/* Verify every pair of o->q (against the same groups of o->eq): one row per pair in the report's
 * "pairs", its checks named CHECK@GROUP. */
static int verify_pairs(struct vstate *v, const struct opts *o, const posenc_model *m,
                        posenc_container *cq, pe_pairs *pq, const char *qpath, cJSON *inputs)
{
    posenc_container *ce = NULL;
    pe_pairs *pe = NULL;
    posenc_error err = { 0 };
    char epath[4096];
    int rc = 0;
    if (pe_pairs_layers(pq, m, o->layer_type, qpath, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    if (o->eq) {
        if ((rc = open_pairs(o, o->eq, 1, &ce, &pe, epath, sizeof epath)))
            goto out;
        if (!pe) {
            cmd_msg(CMD, "'%s': --q names a container of q/k pairs, so --expect-q needs one "
                            "too (not a member)", o->eq);
            rc = CMD_EXIT_USAGE;
            goto out;
        }
    }
    cJSON_AddStringToObject(inputs, "dumps", qpath);
    if (o->eq)
        cJSON_AddStringToObject(inputs, "expect", epath);
    cJSON_AddNumberToObject(inputs, "pairs", (double)pq->n);
    if (o->glob)
        cJSON_AddStringToObject(inputs, "pairs_glob", o->glob);
    cJSON *rows = cJSON_AddArrayToObject(v->root, "pairs");
    cJSON *header_pairs = cJSON_CreateArray();
    size_t len = strlen(qpath) + (o->eq ? strlen(epath) : 0) + POSENC_NAME_MAX + 8;
    char *spec[4];
    for (int i = 0; i < 4; i++)
        if (!(spec[i] = malloc(len))) {
            for (int j = 0; j < i; j++)
                free(spec[j]);
            cmd_msg(CMD, "out of memory");
            rc = CMD_EXIT_ERROR;
            goto out;
        }
    for (size_t i = 0; i < pq->n && rc == 0; i++) {
        const pe_pair *pr = &pq->v[i];
        const pe_pair *er = pe ? pe_pairs_get(pe, pr->group) : NULL;
        if (pe && !er) {
            cmd_msg(CMD, "'%s': no q/k pair for group '%s' of '%s'", epath,
                       pe_pairs_label(pr), qpath);
            rc = CMD_EXIT_ERROR;
            break;
        }
        snprintf(spec[0], len, "%s:%s", qpath, posenc_container_array(cq, pr->q)->name);
        snprintf(spec[1], len, "%s:%s", qpath, posenc_container_array(cq, pr->k)->name);
        if (er) {
            snprintf(spec[2], len, "%s:%s", epath, posenc_container_array(ce, er->q)->name);
            snprintf(spec[3], len, "%s:%s", epath, posenc_container_array(ce, er->k)->name);
        }
        struct opts po = *o;
        po.q = spec[0];
        po.k = spec[1];
        po.eq = er ? spec[2] : NULL;
        po.ek = er ? spec[3] : NULL;
        cJSON *row = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, row);
        cJSON_AddStringToObject(row, "group", pr->group);
        if (pr->layer >= 0)
            cJSON_AddNumberToObject(row, "layer", (double)pr->layer);
        else
            cJSON_AddNullToObject(row, "layer");
        if (pr->layer_type)
            cJSON_AddStringToObject(row, "layer_type", pr->layer_type);
        else
            cJSON_AddNullToObject(row, "layer_type");
        cJSON_AddBoolToObject(row, "has_rope", !pr->nope);
        posenc_rope_config cfg;
        const char *lt = pr->layer_type;
        if (pr->nope && !lt && posenc_model_layer_type_count(m) > 1)
            lt = posenc_model_layer_type_name(m, 0); /* only head_dim matters */
        if (posenc_model_rope(m, lt, &cfg, &err) != POSENC_OK) {
            rc = cmd_rope_fail(CMD, m, &err);
            break;
        }
        if (o->has_style)
            cfg.style = o->style;
        cJSON *checks = cJSON_GetObjectItemCaseSensitive(v->root, "checks");
        int before = v->failed, first = cJSON_GetArraySize(checks);
        v->suffix = pr->group[0] ? pr->group : "top";
        v->row = row;
        v->nope = pr->nope;
        v->layer = pr->layer;
        po.layer_type = lt; /* the pair's own, for --precision ggml's arguments */
        rc = verify_dumps(v, &po, m, &cfg, row);
        /* verify_dumps set the header to this pair alone: keep it, labelled, with the others */
        cJSON *hp = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v->root, "header"), "pairs");
        cJSON *one = cJSON_GetArraySize(hp) == 1 ? cJSON_DetachItemFromArray(hp, 0) : NULL;
        if (one) {
            cJSON_DeleteItemFromObjectCaseSensitive(one, "label");
            cJSON_AddStringToObject(one, "label", pe_pairs_label(pr));
            cJSON_AddItemToArray(header_pairs, one);
        }
        cJSON_AddBoolToObject(row, "ok", v->failed == before);
        if (rc == 0 && v->failed != before && (po.eq || po.rotated))
            explain_pair(v, &po, m, pr, cfg.head_dim, first, row);
        cJSON *names = cJSON_AddArrayToObject(row, "checks");
        for (int c = first; c < cJSON_GetArraySize(checks); c++)
            cJSON_AddItemToArray(names, cJSON_CreateString(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetArrayItem(checks, c), "name")->valuestring));
    }
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(v->root, "header"),
                                           "pairs", header_pairs);
    v->suffix = NULL;
    v->row = NULL;
    v->nope = 0;
    for (int i = 0; i < 4; i++)
        free(spec[i]);
out:
    pe_pairs_free(pe);
    posenc_container_close(ce);
    return rc;
}

/* layer: NULL for the only parameter set, else the layer type (checks are suffixed with it and
 * config.rope becomes an object keyed by layer type) */
static int verify_rope_config(struct vstate *v, const struct opts *o, const posenc_rope_config *cfg,
                              const char *layer)
{
    posenc_error err = { 0 };
    int64_t maxp = o->max_position > 0 ? o->max_position : cfg->max_position_embeddings;
    if (maxp <= 0)
        maxp = 4096;
    posenc_rope_params params;
    if (posenc_rope_params_compute(cfg, maxp, &params, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    cJSON *cj = cJSON_GetObjectItemCaseSensitive(v->root, "config");
    if (layer)
        cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(cj, "rope"), layer,
                                               pe_report_rope(cfg, &params));
    else
        cJSON_ReplaceItemInObjectCaseSensitive(cj, "rope", pe_report_rope(cfg, &params));
    posenc_invariance_result *res = malloc(sizeof *res);
    if (!res) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (posenc_verify_rope_config(&params, maxp, o->seed, o->samples, res, &err) != POSENC_OK) {
        free(res);
        return cmd_fail(CMD, &err);
    }
    char src[160];
    snprintf(src, sizeof src, "%d seeded unit-normal (q, k) pairs per distance, seed %" PRIu64,
             o->samples, o->seed);
    invariance_checks(v, o, res, src, maxp, layer);
    free(res);
    if (cfg->type == POSENC_ROPE_DYNAMIC) {
        posenc_rope_params p0;
        double t0 = cfg->theta;
        if (posenc_rope_params_compute(cfg, 0, &p0, NULL) == POSENC_OK)
            t0 = p0.theta_used;
        pe_report_add_note(v->root, "dynamic NTK breaks invariance across lengths: the base is %.6g up to "
                    "max_position_embeddings %" PRId64 " and %.6g at length %" PRId64 "; the checks "
                    "hold within one length only, so a key cached at one length and a query "
                    "rotated at another do not score relatively",
                 t0, cfg->max_position_embeddings, params.theta_used, maxp);
    }
    if (cfg->type == POSENC_ROPE_LONGROPE)
        pe_report_add_note(v->root, "longrope: the checked table uses the %s factors (length %" PRId64 " %s "
                    "original_max_position_embeddings %" PRId64 ")",
                 params.long_factors ? "long" : "short", maxp, params.long_factors ? ">" : "<=",
                 cfg->original_max_position_embeddings);
    return 0;
}

/* ---- output ---- */
/* --gguf: one check per key or tensor (lib/llamacpp_check.c compares) */
static int verify_gguf(struct vstate *v, const struct opts *o, const posenc_model *m,
                       const posenc_rope_config *cfg, cJSON *inputs)
{
    posenc_error err = { 0 };
    int rc = 0;
    posenc_gguf_rope *want = malloc(sizeof *want), *have = malloc(sizeof *have);
    posenc_gguf_check *chk = malloc(sizeof *chk);
    if (!want || !have || !chk) {
        cmd_msg(CMD, "out of memory");
        rc = CMD_EXIT_ERROR;
    } else if (posenc_gguf_rope_from_model(m, o->layer_type, want, &err) != POSENC_OK ||
               posenc_gguf_read_rope(o->gguf, have, &err) != POSENC_OK ||
               posenc_gguf_compare(want, have, cfg->original_max_position_embeddings, chk,
                                   &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
    } else {
        cJSON_AddStringToObject(inputs, "gguf", o->gguf);
        cJSON_AddStringToObject(inputs, "gguf_architecture", have->arch);
        for (int i = 0; i < chk->n; i++) {
            const posenc_gguf_finding *f = &chk->f[i];
            char summary[800];
            if (f->ok)
                snprintf(summary, sizeof summary, "%s (%s)", f->found, f->what);
            else
                snprintf(summary, sizeof summary, "expected %s, found %s: %s", f->expected,
                         f->found, f->consequence);
            cJSON *d = cJSON_CreateObject();
            cJSON_AddStringToObject(d, "key", f->key);
            cJSON_AddStringToObject(d, "argument", f->what);
            cJSON_AddStringToObject(d, "expected", f->expected);
            cJSON_AddStringToObject(d, "found", f->found);
            cJSON_AddStringToObject(d, "consequence", f->consequence);
            add_check(v, f->key, f->ok, 0, NAN, NAN, NAN, summary, d);
        }
    }
    free(want);
    free(have);
    free(chk);
    return rc;
}

static void print_summary(const struct vstate *v)
{
    const cJSON *c;
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(v->root, "config");
    printf("posenc verify: %s (%s)\n", cJSON_GetObjectItemCaseSensitive(cfg, "path")->valuestring,
           cJSON_GetObjectItemCaseSensitive(cfg, "encoding")->valuestring);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(v->root, "checks"))
    {
        const char *w = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "info")) ? "info"
                        : cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok")) ? "ok"
                                                                                   : "FAIL";
        printf("%-5s %-20s %s\n", w, cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring,
               cJSON_GetObjectItemCaseSensitive(c, "summary")->valuestring);
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "diagnosis");
        if (cJSON_IsObject(d))
            printf("      diagnosis: %s\n",
                   cJSON_GetObjectItemCaseSensitive(d, "explanation")->valuestring);
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(v->root, "pairs"))
    {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "layer"),
                    *t = cJSON_GetObjectItemCaseSensitive(c, "layer_type");
        char layer[64] = "no layer index";
        if (cJSON_IsNumber(l))
            snprintf(layer, sizeof layer, "layer %.0f", l->valuedouble);
        printf("%-5s pair %-15s %s%s%s%s\n",
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok")) ? "ok" : "FAIL",
               cJSON_GetObjectItemCaseSensitive(c, "group")->valuestring, layer,
               cJSON_IsString(t) ? ", " : "", cJSON_IsString(t) ? t->valuestring : "",
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "has_rope")) ? "" : ", no RoPE");
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(v->root, "notes"))
        printf("note: %s\n", c->valuestring);
    if (v->failed)
        printf("result: FAIL (%d of %d checks failed)\n", v->failed, v->n_checks);
    else
        printf("result: PASS (%d checks)\n", v->n_checks);
}

/* Free what open_pairs made; returns rc. */
static int pairs_done(posenc_container *c, pe_pairs *p, int rc)
{
    pe_pairs_free(p);
    posenc_container_close(c);
    return rc;
}

enum {
    O_MAXPOS = 256, O_SEED, O_SAMPLES, O_TOL, O_HFTOL, O_Q, O_K, O_ROTATED, O_EQ, O_EK, O_REPORT
};

static const struct cmd_opt verify_opts[] = {
    CMD_OPT_GROUP("options:"),
    { .id = CMD_O_CONFIG },
    { .id = CMD_O_LAYER_TYPE },
    { .id = CMD_O_FAMILY },
    { .id = CMD_O_STYLE },
    { O_MAXPOS, "max-position", 0, "N", CMD_T_I64, 2, (int64_t)1 << 40,
      "largest offset checked (default: max_position_embeddings)", NULL },
    { O_SEED, "seed", 0, "S", CMD_T_I64, 0, INT64_MAX, "seed of the random q and k (default 1)",
      NULL },
    { O_SAMPLES, "samples", 0, "N", CMD_T_I64, 1, 4096,
      "random (q, k) pairs per distance (default 16)", NULL },
    { O_TOL, "tolerance", 0, "X", CMD_T_NUM, 0, 0,
      "pass tolerance (default: see posenc-verify(1) CHECKS)", NULL },
    { O_HFTOL, "hf-tolerance", 0, "X", CMD_T_NUM, 0, 0,
      "make the float32-table drift a failing check at X", NULL },
    { O_Q, "q", 0, "FILE", CMD_T_STR, 0, 0, "query dump (pre-RoPE unless --rotated)", NULL },
    { O_K, "k", 0, "FILE", CMD_T_STR, 0, 0, "key dump (pre-RoPE unless --rotated)", NULL },
    { .id = CMD_O_DUMP_LAYOUT },
    { .id = CMD_O_ASSUME_BF16 },
    { .id = CMD_O_OFFSET },
    { .id = CMD_O_POSITIONS },
    { .id = CMD_O_SEQ_LEN, .help = "sequence length the runtime ran at, for dynamic/longrope\n"
                                   "selection (default: largest position + 1)" },
    { O_ROTATED, "rotated", 0, NULL, CMD_T_FLAG, 0, 0,
      "the dumps are already rotated (of position-independent\n"
      "content, e.g. layer 0 of a repeated token)", NULL },
    { O_EQ, "expect-q", 0, "FILE", CMD_T_STR, 0, 0,
      "the runtime's rotated q to compare with posenc's rotation", NULL },
    { O_EK, "expect-k", 0, "FILE", CMD_T_STR, 0, 0, "the runtime's rotated k", NULL },
    { .id = CMD_O_GGUF, .help = "check a llama.cpp GGUF file's RoPE keys and tensors against\n"
                                "what convert_hf_to_gguf.py writes for the config" },
    { .id = CMD_O_PRECISION,
      .help = "posenc's rotation the dumps are compared with: hf\n"
              "(default, transformers' float32 tables), exact, vllm\n"
              "(vLLM's cos_sin_cache) or ggml (llama.cpp's CPU numerics)" },
    { .id = CMD_O_VARIANT,
      .help = "sinusoidal variant: vaswani, t2t, fairseq, marian, cos_sin" },
    { .id = CMD_O_PAIRS, .help = "only the pairs of DUMPS whose group matches GLOB" },
    { O_REPORT, "report", 0, "FILE", CMD_T_STR, 0, 0,
      "write a report (.json, .md or .html; repeatable);\n"
      "- writes the JSON report to stdout instead of the summary", NULL },
    { .id = CMD_O_QUIET, .help = "no summary on stdout, no progress line on a terminal" },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_verify_spec = {
    "verify",
    "usage: posenc verify --config FILE [options]\n"
    "   or: posenc verify --config FILE --q Q --k K [--expect-q Q2 --expect-k K2 | --rotated]\n"
    "   or: posenc verify --config FILE --gguf MODEL.gguf\n"
    "   or: posenc verify --config FILE --q DUMPS [--expect-q ROTATED | --rotated] [--pairs GLOB]\n"
    "\n"
    "Check that the config's position encoding is relative (scores depend only on m - n),\n"
    "check a runtime's Q/K dumps against posenc's rotation, and name the likely mistake\n"
    "when they differ. DUMPS, a container of several arrays, has every q/k pair checked\n"
    "(grouped by path as in posenc apply; ROTATED holds the runtime's pairs under the\n"
    "same groups), each with its layer's parameters, into one report with a row per\n"
    "pair. Exit status: 0 every check passed, 1 a check failed, 2 usage error, 3 any\n"
    "other error.\n"
    "\n",
    26, verify_opts
};

int cmd_verify(int argc, char **argv)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.samples = 16;
    o.layout = L_BHSD;
    posenc_error err = { 0 };
    int c;
    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_verify_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_CONFIG: o.config = p.arg; break;
        case CMD_O_LAYER_TYPE: o.layer_type = p.arg; break;
        case CMD_O_FAMILY: o.family = p.arg; break;
        case CMD_O_STYLE: o.style = p.style; o.has_style = 1; break;
        case O_MAXPOS: o.max_position = p.i64; break;
        case O_SEED: o.seed = (uint64_t)p.i64; break;
        case O_SAMPLES: o.samples = (int)p.i64; break;
        case O_TOL:
        case O_HFTOL: {
            double x = p.num;
            if (!(x > 0))
                return cmd_usage_error(CMD, "%s: '%s' must be positive",
                                          c == O_TOL ? "--tolerance" : "--hf-tolerance", p.arg);
            if (c == O_TOL) {
                o.tol = x;
                o.has_tol = 1;
            } else {
                o.hf_tol = x;
                o.has_hf_tol = 1;
            }
            break;
        }
        case O_Q: o.q = p.arg; break;
        case O_K: o.k = p.arg; break;
        case CMD_O_DUMP_LAYOUT: o.layout = (enum layout)p.dump_layout; break;
        case CMD_O_OFFSET: o.offset = p.i64; break;
        case CMD_O_POSITIONS: o.positions_spec = p.arg; break;
        case CMD_O_SEQ_LEN: o.seq_len = p.i64; break;
        case O_ROTATED: o.rotated = 1; break;
        case CMD_O_ASSUME_BF16: o.assume_bf16 = 1; break;
        case CMD_O_PRECISION: o.prec = p.precision; o.has_prec = 1; break;
        case O_EQ: o.eq = p.arg; break;
        case O_EK: o.ek = p.arg; break;
        case CMD_O_VARIANT: o.variant = p.arg; break;
        case CMD_O_GGUF: o.gguf = p.arg; break;
        case CMD_O_PAIRS: o.glob = p.arg; break;
        case O_REPORT: {
            pe_report_kind kind;
            if (o.n_reports == MAX_REPORTS)
                return cmd_usage_error(CMD, "--report: at most %d reports", MAX_REPORTS);
            if (pe_report_kind_of(p.arg, &kind, &err) != POSENC_OK)
                return cmd_usage_error(CMD, "--report: %s", err.msg);
            if (strcmp(p.arg, "-") == 0) {
                if (o.report_stdout)
                    return cmd_usage_error(CMD, "--report: '-' given twice");
                o.report_stdout = 1;
            }
            o.reports[o.n_reports++] = p.arg;
            break;
        }
        case CMD_O_QUIET:
            o.quiet = 1;
            cmd_progress_quiet();
            break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (cmd_opts_max_args(&p, 0))
        return CMD_EXIT_USAGE;
    if (!o.config)
        return cmd_usage_error(CMD, "--config is required");
    /* --q naming a container of several arrays: every q/k pair in it */
    posenc_container *pc = NULL;
    pe_pairs *pp = NULL;
    char qpath[4096];
    if (o.q && (!o.k || cmd_same_file(o.k, o.q))) {
        int prc = open_pairs(&o, o.q, 0, &pc, &pp, qpath, sizeof qpath);
        if (prc) {
            posenc_container_close(pc);
            return prc;
        }
    }
    if (pp) {
        if (o.ek && (!o.eq || !cmd_same_file(o.ek, o.eq))) {
            pe_pairs_free(pp);
            posenc_container_close(pc);
            return cmd_usage_error(CMD, "--q names a container of q/k pairs: give their "
                                           "rotated pairs as one --expect-q container");
        }
        o.k = o.q;
        o.ek = o.eq;
    } else if (o.glob) {
        posenc_container_close(pc);
        return cmd_usage_error(CMD, "--pairs needs --q naming a container of q/k pairs");
    }
    if (!o.q != !o.k) {
        posenc_container_close(pc);
        return cmd_usage_error(CMD, "--q and --k go together");
    }
    if ((o.eq || o.ek) && !o.q)
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--expect-q/--expect-k need --q and --k (the pre-RoPE dumps)"));
    if (o.rotated && !o.q)
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--rotated needs --q and --k"));
    if (o.has_prec && !(o.eq || o.ek))
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--precision needs --expect-q/--expect-k (it picks the "
                                       "rotation the runtime's dumps are compared with)"));
    if (o.rotated && (o.eq || o.ek))
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--rotated and --expect-q/--expect-k exclude each other"));
    if (o.positions_spec && o.offset)
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--positions and --offset exclude each other"));
    if (o.gguf && (o.q || o.k || o.eq || o.ek || o.rotated || o.positions_spec))
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--gguf checks a GGUF file against the config: it takes "
                                       "no dumps (--q, --k, --expect-q/k, --rotated, --positions)"));

    {
        const char *ins[] = { o.config, o.q, o.k, o.eq, o.ek, o.positions_spec, o.gguf };
        int crc = cmd_check_outputs(CMD, o.reports, (size_t)o.n_reports, ins,
                                    sizeof ins / sizeof *ins);
        if (crc)
            return pairs_done(pc, pp, crc);
    }
    posenc_model *m = NULL;
    int lrc = cmd_load_config(CMD, o.config, o.family, &m);
    if (lrc)
        return pairs_done(pc, pp, lrc);
    struct vstate v = { 0 };
    posenc_encoding enc = posenc_model_encoding(m);
    if (!(v.root = pe_report_new(posenc_version()))) {
        posenc_model_free(m);
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    cJSON *cfgj = cJSON_GetObjectItemCaseSensitive(v.root, "config");
    cJSON *inputs = cJSON_GetObjectItemCaseSensitive(v.root, "inputs");
    {
        /* what a config alone is checked with; verify_dumps replaces it with its pairs */
        pe_report_header h = { o.config, o.layer_type, NULL, NULL, NULL, 0, 0, 0, 0, NULL };
        h.precision = o.gguf ? "gguf: the file's keys and tensors against those "
                               "convert_hf_to_gguf.py writes for the config, both as llama.cpp "
                               "loads them (float32)"
                      : enc == POSENC_ENC_ROPE
                          ? "invariance: posenc's exact tables rounded once to float32 and "
                            "transformers' float32 tables, rotation in float32, scores in double"
                          : "posenc's tables in double against independent evaluations";
        pe_report_set_header(v.root, &h);
    }
    cJSON_AddStringToObject(cfgj, "path", o.config);
    pe_report_model(cfgj, m, o.layer_type);
    for (size_t i = 0; i < posenc_model_note_count(m); i++)
        pe_report_add_note(v.root, "%s", posenc_model_note(m, i));
    cJSON_AddNumberToObject(inputs, "seed", (double)o.seed);
    cJSON_AddNumberToObject(inputs, "samples", o.samples);
    int rc = 0;
    if (enc == POSENC_ENC_ROPE && !o.q && !o.gguf && !o.layer_type &&
        posenc_model_layer_type_count(m) > 1) {
        /* a config alone with several layer types: check each */
        cJSON *ropes = cJSON_AddObjectToObject(cfgj, "rope");
        for (size_t i = 0; i < posenc_model_layer_type_count(m) && rc == 0; i++) {
            const char *lt = posenc_model_layer_type_name(m, i);
            posenc_rope_config cfg;
            if (posenc_model_rope(m, lt, &cfg, &err) != POSENC_OK) {
                rc = cmd_fail(CMD, &err);
                break;
            }
            if (o.has_style)
                cfg.style = o.style;
            cJSON_AddItemToObject(ropes, lt, pe_report_rope(&cfg, NULL));
            rc = verify_rope_config(&v, &o, &cfg, lt);
        }
    } else if (enc == POSENC_ENC_ROPE && o.gguf) {
        posenc_rope_config cfg;
        if (posenc_model_rope(m, o.layer_type, &cfg, &err) != POSENC_OK) {
            rc = cmd_rope_fail(CMD, m, &err);
            goto out;
        }
        cJSON_AddItemToObject(cfgj, "rope", pe_report_rope(&cfg, NULL));
        rc = verify_gguf(&v, &o, m, &cfg, inputs);
    } else if (enc == POSENC_ENC_ROPE && pp) {
        /* the parameters of every layer type; each pair's row says which it used */
        cJSON *ropes = posenc_model_layer_type_count(m) > 1 ? cJSON_AddObjectToObject(cfgj, "rope")
                                                            : NULL;
        for (size_t i = 0; i < posenc_model_layer_type_count(m) && ropes; i++) {
            posenc_rope_config cfg;
            const char *lt = posenc_model_layer_type_name(m, i);
            if (posenc_model_rope(m, lt, &cfg, &err) == POSENC_OK)
                cJSON_AddItemToObject(ropes, lt, pe_report_rope(&cfg, NULL));
        }
        posenc_rope_config cfg;
        if (!ropes && posenc_model_rope(m, o.layer_type, &cfg, &err) == POSENC_OK)
            cJSON_AddItemToObject(cfgj, "rope", pe_report_rope(&cfg, NULL));
        rc = verify_pairs(&v, &o, m, pc, pp, qpath, inputs);
    } else if (enc == POSENC_ENC_ROPE) {
        posenc_rope_config cfg;
        if (posenc_model_rope(m, o.layer_type, &cfg, &err) != POSENC_OK) {
            rc = cmd_rope_fail(CMD, m, &err);
            goto out;
        }
        if (o.has_style)
            cfg.style = o.style;
        cJSON_AddItemToObject(cfgj, "rope", pe_report_rope(&cfg, NULL));
        rc = o.q ? verify_dumps(&v, &o, m, &cfg, inputs) : verify_rope_config(&v, &o, &cfg, NULL);
    } else {
        if (o.q || o.gguf) {
            rc = cmd_usage_error(CMD, "--%s a RoPE model; '%s' uses %s",
                                    o.q ? "q/--k need" : "gguf needs", o.config,
                                    posenc_encoding_name(enc));
            goto out;
        }
        rc = verify_bias(&v, &o, m, enc);
    }
    if (rc)
        goto out;
    cJSON_ReplaceItemInObjectCaseSensitive(v.root, "ok", cJSON_CreateBool(v.failed == 0));
    for (int i = 0; i < o.n_reports; i++)
        if (pe_report_write(v.root, o.reports[i], &err) != POSENC_OK) {
            rc = cmd_fail(CMD, &err);
            goto out;
        }
    if (!o.quiet && !o.report_stdout)
        print_summary(&v);
    rc = v.failed ? CMD_EXIT_CHECK : CMD_EXIT_OK;
out:
    cJSON_Delete(v.root);
    posenc_model_free(m);
    return pairs_done(pc, pp, rc);
}
