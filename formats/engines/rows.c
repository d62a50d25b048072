/* formats/engines/rows.c: a Q/K dump read as head vectors, and the token positions of a dump (see
 * rows.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/engines/rows.h"

static const int layout_ndim[] = { 4, 4, 3, 3, 2, 3, 2, 3 };

posenc_status pe_rows_open(const char *spec, posenc_apply_layout layout, int assume_bf16,
                           pe_rows **out, posenc_error *err)
{
    return pe_rows_open_split(spec, layout, 0, assume_bf16, out, err);
}

posenc_status pe_rows_open_split(const char *spec, posenc_apply_layout layout, int64_t head_dim,
                                 int assume_bf16, pe_rows **out, posenc_error *err)
{
    posenc_read_opts ro = { assume_bf16, POSENC_FMT_AUTO };
    posenc_status st;
    if ((unsigned)layout >= sizeof layout_ndim / sizeof *layout_ndim)
        return posenc_seterr(err, POSENC_EINVAL, "invalid layout");
    pe_rows *d = calloc(1, sizeof *d);
    if (!d)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    d->spec = spec;
    if ((st = posenc_reader_open(spec, &ro, &d->r, err)) != POSENC_OK)
        goto fail;
    d->info = *posenc_reader_info(d->r);
    const posenc_array_info *a = &d->info;
    if (!posenc_dtype_is_float(a->dtype)) {
        st = posenc_seterr(err, POSENC_EINVAL, "'%s': dtype %s is not a float type", spec,
                           posenc_dtype_name(a->dtype));
        goto fail;
    }
    posenc_error e2 = { 0 };
    if (posenc_apply_shape_split(layout, a->ndim, a->shape, 0, head_dim, &d->shape, &e2) !=
        POSENC_OK) {
        char sh[128];
        if (a->ndim != layout_ndim[layout])
            st = posenc_seterr(err, POSENC_EMISMATCH, "'%s': shape %s does not fit layout %s "
                               "(%d dims)", spec, posenc_shape_str(a->ndim, a->shape, sh, sizeof sh),
                               posenc_apply_layout_name(layout), layout_ndim[layout]);
        else
            st = posenc_seterr(err, e2.code, "'%s': %s", spec, e2.msg);
        goto fail;
    }
    uint64_t nelem;
    if ((st = posenc_shape_size(a->ndim, a->shape, a->dtype, &nelem, NULL, err)) != POSENC_OK)
        goto fail;
    if (d->shape.head_dim < 1 || nelem == 0) {
        st = posenc_seterr(err, POSENC_EINVAL, "'%s': empty dump", spec);
        goto fail;
    }
    d->total = nelem / (uint64_t)d->shape.head_dim;
    d->cap = PE_ROWS_CHUNK / (size_t)d->shape.head_dim;
    if (d->cap < 1)
        d->cap = 1;
    if ((uint64_t)d->cap > d->total)
        d->cap = (size_t)d->total;
    size_t n = d->cap * (size_t)d->shape.head_dim;
    d->raw = malloc(n * posenc_dtype_size(a->dtype));
    d->buf = malloc(n * sizeof(double));
    if (!d->raw || !d->buf) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    *out = d;
    return POSENC_OK;
fail:
    pe_rows_close(d);
    return st;
}

const double *pe_rows_next(pe_rows *d, pe_row_at *at, posenc_error *err)
{
    size_t hd = (size_t)d->shape.head_dim;
    if (d->next >= d->total) {
        if (err)
            err->code = POSENC_OK;
        return NULL;
    }
    if (d->used == d->have) {
        uint64_t left = d->total - d->next;
        size_t n = left < (uint64_t)d->cap ? (size_t)left : d->cap;
        if (posenc_reader_read(d->r, d->raw, (uint64_t)n * hd, err) != POSENC_OK)
            return NULL;
        posenc_dtype_convert(d->buf, POSENC_DT_F64, d->raw, d->info.dtype, n * hd);
        d->have = n;
        d->used = 0;
    }
    if (at)
        *at = pe_rows_at(&d->shape, d->next);
    d->next++;
    return d->buf + (d->used++) * hd;
}

pe_row_at pe_rows_at(const posenc_apply_shape *s, uint64_t r)
{
    uint64_t S = (uint64_t)s->seq, H = (uint64_t)s->heads;
    pe_row_at a = { 0, 0, 0 };
    switch (s->layout) {
    case POSENC_APPLY_BHSD:
        a.seq = (int64_t)(r % S); a.head = (int64_t)(r / S % H); a.batch = (int64_t)(r / S / H);
        break;
    case POSENC_APPLY_BSHD:
        a.head = (int64_t)(r % H); a.seq = (int64_t)(r / H % S); a.batch = (int64_t)(r / H / S);
        break;
    case POSENC_APPLY_SHD: a.head = (int64_t)(r % H); a.seq = (int64_t)(r / H); break;
    case POSENC_APPLY_HSD: a.seq = (int64_t)(r % S); a.head = (int64_t)(r / S); break;
    default: a.seq = (int64_t)r; break;
    }
    return a;
}

int pe_rows_same_shape(const pe_rows *a, const pe_rows *b)
{
    if (a->info.ndim != b->info.ndim)
        return 0;
    for (int i = 0; i < a->info.ndim; i++)
        if (a->info.shape[i] != b->info.shape[i])
            return 0;
    return 1;
}

void pe_rows_close(pe_rows *d)
{
    if (!d)
        return;
    posenc_reader_close(d->r);
    free(d->raw);
    free(d->buf);
    free(d);
}

/* ---- which layout a dump is in ---- */

/* 1 when a holds heads vectors of head_dim per token in layout l; *s its shape then */
static int fits(posenc_apply_layout l, const posenc_array_info *a, int64_t heads,
                int64_t head_dim, posenc_apply_shape *s)
{
    return posenc_apply_shape_split(l, a->ndim, a->shape, 0, head_dim, s, NULL) == POSENC_OK &&
           s->heads == heads && s->head_dim == head_dim;
}

int pe_rows_layout_fit(posenc_apply_layout given, const posenc_array_info *q,
                       const posenc_array_info *k, const int64_t heads[2], int64_t head_dim)
{
    static const posenc_apply_layout order[] = { POSENC_APPLY_BHSD, POSENC_APPLY_BSHD,
                                                 POSENC_APPLY_BSF, POSENC_APPLY_SHD,
                                                 POSENC_APPLY_HSD, POSENC_APPLY_SF,
                                                 POSENC_APPLY_SD };
    if (!q || heads[0] <= 0 || head_dim <= 0 || (k && heads[1] <= 0))
        return -1;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        posenc_apply_shape a, b;
        if (order[i] == given || !fits(order[i], q, heads[0], head_dim, &a))
            continue;
        if (k && (!fits(order[i], k, heads[1], head_dim, &b) || a.batch != b.batch ||
                  a.seq != b.seq))
            continue;
        return (int)order[i];
    }
    return -1;
}

int pe_rows_layout_hint(posenc_error *err, posenc_apply_layout given, const posenc_array_info *q,
                        const posenc_array_info *k, const int64_t heads[2], int64_t head_dim,
                        const char *config)
{
    int l = pe_rows_layout_fit(given, q, k, heads, head_dim);
    if (l < 0 || !err)
        return l >= 0;
    const char *name = posenc_apply_layout_name((posenc_apply_layout)l);
    char counts[96], was[POSENC_ERRMSG_MAX];
    if (k)
        snprintf(counts, sizeof counts, "%" PRId64 " query and %" PRId64 " key heads", heads[0],
                 heads[1]);
    else
        snprintf(counts, sizeof counts, "%" PRId64 " heads", heads[0]);
    snprintf(was, sizeof was, "%s", err->msg);
    posenc_seterr(err, err->code, "%s; the dump%s fit%s layout %s (%s of head_dim %" PRId64
                  " in '%s'): give --layout %s", was, k ? "s" : "", k ? "" : "s", name, counts,
                  head_dim, config ? config : "the config", name);
    return 1;
}

int pe_rows_heads_foreign(int64_t heads, int64_t want)
{
    return want > 0 && (heads <= 0 || want % heads != 0);
}

/* ---- positions ---- */

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* llama.cpp's positions tensor as its graph holds it (inp_pos): n_tokens values, or for M-RoPE
 * n_pos_per_embd (4) rows of n_tokens, section-major (src/llama-batch.cpp
 * llama_batch_allocr::split_reorder: udata->pos[j*n_tokens + i], a text token's position
 * repeated in every row; the graph's inp_pos, ROPE's src[1], has a fourth row of 0 instead). A
 * file of 4 * seq values, or shaped [4, seq] or [3, seq] for a dump of one batch entry, becomes
 * [seq] when its first three rows are equal and the fourth equals them or is 0 (text tokens),
 * else [3, seq] (t, h, w) where 3-axis positions are allowed and a fourth row repeats the first
 * or is 0. Returns 0 when pp is
 * not of that form, 1 when rewritten, -1 with err set when it cannot be read so. */
static int llama_positions(pe_positions *pp, const pe_dump_positions_req *q, posenc_error *err)
{
    int64_t S = q->seq, rows;
    if (!pp->from_file || q->batch != 1 || S < 1)
        return 0;
    if (pp->ndim == 1 && pp->count == 4 * (uint64_t)S)
        rows = 4;
    else if (pp->ndim == 2 && (pp->shape[0] == 4 || pp->shape[0] == 3) && pp->shape[1] == S &&
             !(q->mrope && pp->shape[0] == 3))
        rows = pp->shape[0];
    else
        return 0;
    const int64_t *v = pp->values;
    /* the graph's own tensor, which ROPE reads (src/llama-graph.cpp llm_graph_input_pos::
     * set_input), has a fourth row of 0 for text tokens: no section rotates with it */
    int same = 1, fourth = 1, zero4 = rows == 4;
    for (int64_t i = 0; zero4 && i < S; i++)
        zero4 = v[3 * S + i] == 0;
    for (int64_t j = 1; j < rows; j++)
        for (int64_t i = 0; i < S; i++) {
            if (v[j * S + i] != v[i] && !(j == 3 && zero4))
                same = 0;
            if (j == 3 && v[j * S + i] != v[i] && !zero4)
                fourth = 0;
        }
    if (same) {
        pp->ndim = 1;
        pp->shape[0] = S;
        pp->count = (uint64_t)S;
        return 1;
    }
    if (rows == 3)
        return 0; /* [3, seq] t, h, w: read as such, or refused without mrope */
    if (!q->mrope) {
        posenc_seterr(err, POSENC_EMISMATCH, "'%s': llama.cpp's %" PRId64 " position rows "
                      "differ (image tokens); posenc compares text tokens, whose rows are "
                      "equal, and rotates 3-axis (t, h, w) positions only with a multimodal "
                      "(mrope) config in posenc apply", q->arg, rows);
        return -1;
    }
    if (!fourth) {
        posenc_seterr(err, POSENC_EMISMATCH, "'%s': the fourth row of llama.cpp's positions "
                      "differs from the first; posenc rotates three axes (t, h, w)", q->arg);
        return -1;
    }
    pp->ndim = 2;
    pp->shape[0] = 3;
    pp->shape[1] = S;
    pp->count = 3 * (uint64_t)S;
    return 1;
}

posenc_status pe_dump_positions_load(const pe_dump_positions_req *q, pe_dump_positions *out,
                                     int *usage, posenc_error *err)
{
    char range[64];
    memset(out, 0, sizeof *out);
    out->apply.rows = 1;
    out->apply.naxes = 1;
    *usage = 1;
    pe_positions_range_str(q->end, range, sizeof range);
    if (!q->arg) {
        if (q->offset < 0 || q->offset > q->end - q->seq)
            return posenc_seterr(err, POSENC_ERANGE, "--offset: positions %" PRId64 " to %"
                                 PRId64 " are outside %s", q->offset, q->offset + q->seq - 1,
                                 range);
        out->apply.offset = q->offset;
        out->min = out->first = q->offset;
        out->max = out->last = q->seq ? q->offset + q->seq - 1 : q->offset;
        return POSENC_OK;
    }
    pe_positions *pp = NULL;
    posenc_status st;
    if (pe_positions_is_file(q->arg)) {
        *usage = 0;
        st = pe_positions_read(q->arg, q->end, PE_POSITIONS_FILE_MAX, &pp, err);
    } else {
        st = pe_positions_parse(q->arg, q->end, UINT64_MAX, &pp, err);
        if (st == POSENC_EINVAL || st == POSENC_ERANGE)
            posenc_error_prefix(err, st, "--positions: ");
        else
            *usage = 0;
    }
    if (st != POSENC_OK)
        return st;
    if (llama_positions(pp, q, err) < 0) {
        *usage = 0;
        pe_positions_free(pp);
        return err ? err->code : POSENC_EMISMATCH;
    }
    const int64_t *sh = pp->shape;
    int nd = pp->ndim, ok = 0;
    if (pp->count != (uint64_t)q->seq && (!pp->from_file || nd == 1)) {
        uint64_t n = pp->count;
        *usage = !pp->from_file;
        if (pp->from_file)
            posenc_seterr(err, POSENC_EMISMATCH, "'%s': %" PRIu64 " position%s for a sequence "
                          "of %" PRId64 " token%s", q->arg, n, plural(n), q->seq,
                          plural((uint64_t)q->seq));
        else
            posenc_seterr(err, POSENC_ERANGE, "--positions: %" PRIu64 " position%s for a "
                          "sequence of %" PRId64 " token%s", n, plural(n), q->seq,
                          plural((uint64_t)q->seq));
        pe_positions_free(pp);
        return err ? err->code : POSENC_EMISMATCH;
    }
    *usage = 0;
    if (nd == 1 && sh[0] == q->seq) {
        ok = 1;
    } else if (nd == 2 && q->mrope && sh[0] == 3 && sh[1] == q->seq) {
        out->apply.naxes = 3;
        ok = 1;
    } else if (nd == 2 && sh[1] == q->seq && (sh[0] == q->batch || sh[0] == 1)) {
        out->apply.rows = sh[0];
        ok = 1;
    } else if (nd == 3 && q->mrope && sh[0] == 3 && sh[2] == q->seq &&
               (sh[1] == q->batch || sh[1] == 1)) {
        out->apply.naxes = 3;
        out->apply.rows = sh[1];
        ok = 1;
    }
    if (!ok) {
        char buf[160];
        posenc_shape_str(nd, sh, buf, sizeof buf);
        if (!q->mrope && nd >= 2 && sh[0] == 3 && sh[nd - 1] == q->seq)
            posenc_seterr(err, POSENC_EINVAL, "'%s': 3-axis (t, h, w) positions need a "
                          "multimodal (mrope) RoPE config", q->arg);
        else
            posenc_seterr(err, POSENC_EMISMATCH, "'%s': positions of shape %s do not fit batch %"
                          PRId64 " and seq %" PRId64 " (expected [seq], [batch, seq]%s)", q->arg,
                          buf, q->batch, q->seq, q->mrope ? ", [3, seq] or [3, batch, seq]" : "");
        pe_positions_free(pp);
        return err ? err->code : POSENC_EMISMATCH;
    }
    if ((st = pe_positions_values(pp, &out->apply.values, err)) != POSENC_OK) {
        pe_positions_free(pp);
        return st;
    }
    out->list = pp;
    out->min = pp->min;
    out->max = pp->max;
    out->first = out->apply.values[0];
    out->last = out->apply.values[q->seq - 1];
    return POSENC_OK;
}

int64_t pe_dump_position(const pe_dump_positions *p, int64_t seq, int64_t b, int64_t s)
{
    if (!p->apply.values)
        return p->apply.offset + s;
    int64_t r = p->apply.rows > 1 ? b : 0;
    return p->apply.values[r * seq + s];
}

void pe_dump_positions_free(pe_dump_positions *p)
{
    if (!p)
        return;
    pe_positions_free(p->list);
    memset(p, 0, sizeof *p);
    p->apply.rows = 1;
    p->apply.naxes = 1;
}

/* ---- the q/k dumps of one comparison ---- */

/* The header of spec: from its open dump, else read for the hint (never "-": stdin is read
 * once). 1 when *out is set. */
static int info_of(const pe_qk_req *q, const pe_qk_dumps *x, int i, posenc_array_info *out)
{
    if (x->d[i]) {
        *out = x->d[i]->info;
        return 1;
    }
    posenc_read_opts ro = { q->assume_bf16, POSENC_FMT_AUTO };
    posenc_reader *r = NULL;
    if (!q->spec[i] || strcmp(q->spec[i], "-") == 0 ||
        posenc_reader_open(q->spec[i], &ro, &r, NULL) != POSENC_OK)
        return 0;
    *out = *posenc_reader_info(r);
    posenc_reader_close(r);
    return 1;
}

/* A shape refusal of q's dumps: name the layout they fit, when one does. */
static void qk_hint(const pe_qk_req *q, const pe_qk_dumps *x, posenc_error *err)
{
    posenc_array_info a[2];
    if (err && err->code == POSENC_EMISMATCH && info_of(q, x, 0, &a[0]))
        pe_rows_layout_hint(err, q->layout, &a[0], info_of(q, x, 1, &a[1]) ? &a[1] : NULL,
                            q->heads, q->head_dim, q->config);
}

posenc_status pe_qk_open(const pe_qk_req *q, pe_qk_dumps *out, int *usage, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    memset(out, 0, sizeof *out);
    out->pos.apply.rows = out->pos.apply.naxes = 1;
    *usage = 0;
    for (int i = 0; i < 4; i++) {
        out->spec[i] = q->spec[i];
        if (q->spec[i] && (st = pe_rows_open_split(q->spec[i], q->layout, q->head_dim,
                                                   q->assume_bf16, &out->d[i], err)) !=
                              POSENC_OK) {
            if (i < 2)
                qk_hint(q, out, err);
            goto fail;
        }
    }
    const posenc_apply_shape *sq = &out->d[0]->shape, *sk = &out->d[1]->shape;
    if (sq->head_dim != q->head_dim || sk->head_dim != q->head_dim) {
        int bad = sq->head_dim != q->head_dim ? 0 : 1;
        st = posenc_seterr(err, POSENC_EMISMATCH, "'%s': head_dim %" PRId64 " does not match "
                           "head_dim %d of '%s'", q->spec[bad], out->d[bad]->shape.head_dim,
                           q->head_dim, q->config);
        qk_hint(q, out, err);
        goto fail;
    }
    if (sq->batch != sk->batch || sq->seq != sk->seq) {
        st = posenc_seterr(err, POSENC_EMISMATCH, "'%s': batch and sequence (%" PRId64 ", %"
                           PRId64 ") differ from '%s' (%" PRId64 ", %" PRId64 ")", q->spec[1],
                           sk->batch, sk->seq, q->spec[0], sq->batch, sq->seq);
        qk_hint(q, out, err);
        goto fail;
    }
    if (sq->heads % sk->heads != 0) {
        st = posenc_seterr(err, POSENC_EMISMATCH, "'%s': %" PRId64 " key heads do not divide %"
                           PRId64 " query heads", q->spec[1], sk->heads, sq->heads);
        qk_hint(q, out, err);
        goto fail;
    }
    /* heads that are no share of the config's: a layout mix-up when another layout fits */
    for (int i = 0; i < 2; i++) {
        const posenc_apply_shape *sh = i ? sk : sq;
        if (!pe_rows_heads_foreign(sh->heads, q->heads[i]))
            continue;
        posenc_error e2 = { 0 };
        char shs[160];
        const posenc_array_info *ai = &out->d[i]->info;
        posenc_seterr(&e2, POSENC_EMISMATCH, "'%s': shape %s read as layout %s has %" PRId64
                      " heads, which are not the %" PRId64 " %s heads of '%s' nor a share of "
                      "them", q->spec[i], posenc_shape_str(ai->ndim, ai->shape, shs, sizeof shs),
                      posenc_apply_layout_name(q->layout), sh->heads, q->heads[i],
                      i ? "key" : "query", q->config);
        if (pe_rows_layout_hint(&e2, q->layout, &out->d[0]->info, &out->d[1]->info, q->heads,
                                q->head_dim, q->config)) {
            if (err)
                *err = e2;
            st = POSENC_EMISMATCH;
            goto fail;
        }
    }
    for (int i = 2; i < 4; i++)
        if (out->d[i] && !pe_rows_same_shape(out->d[i - 2], out->d[i])) {
            st = posenc_seterr(err, POSENC_EMISMATCH, "'%s': shape differs from '%s'",
                               q->spec[i], q->spec[i - 2]);
            goto fail;
        }
    pe_dump_positions_req pr = { q->positions, q->offset, q->end, 0, sq->batch, sq->seq };
    if ((st = pe_dump_positions_load(&pr, &out->pos, usage, err)) != POSENC_OK)
        goto fail;
    if (out->pos.apply.rows > 1) {
        st = posenc_seterr(err, POSENC_EMISMATCH, "'%s': positions of shape (%" PRId64 ", %"
                           PRId64 ") differ per batch entry; a comparison takes one row [seq] "
                           "shared by every entry", q->positions, out->pos.apply.rows, sq->seq);
        goto fail;
    }
    return POSENC_OK;
fail:
    pe_qk_close(out);
    return st;
}

void pe_qk_close(pe_qk_dumps *x)
{
    if (!x)
        return;
    for (int i = 0; i < 4; i++)
        pe_rows_close(x->d[i]);
    pe_dump_positions_free(&x->pos);
    free(x->keep);
    x->keep = NULL;
    memset(x->d, 0, sizeof x->d);
}

/* the rows of pre and cmp (either may be NULL) through p, in file order */
static posenc_status stream(pe_vpass *p, pe_rows *pre, pe_rows *cmp, posenc_error *err)
{
    pe_rows *d = pre ? pre : cmp;
    for (uint64_t r = 0; r < d->total && !pe_vpass_done(p); r++) {
        pe_row_at at = pe_rows_at(&d->shape, r);
        const double *x = NULL, *y = NULL;
        if ((pre && !(x = pe_rows_next(pre, NULL, err))) ||
            (cmp && !(y = pe_rows_next(cmp, NULL, err))))
            return err && err->code ? err->code : POSENC_EFORMAT;
        posenc_status st = pe_vpass_row(p, at.batch, at.head, at.seq, x, y, err);
        if (st != POSENC_OK)
            return st;
    }
    return POSENC_OK;
}

posenc_status pe_qk_passes(pe_qk_dumps *x, const pe_qk_check *chk, int rotated, pe_vpass **out,
                           posenc_error *err)
{
    static const char *const role[2] = { "q", "k" };
    int64_t S = x->d[0]->shape.seq;
    posenc_status st = POSENC_OK;
    out[0] = out[1] = NULL;
    if (!x->keep && !(x->keep = malloc((size_t)S)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    pe_vpass_sample_plan(S, x->keep);
    for (int t = 0; t < 2 && st == POSENC_OK; t++) {
        pe_rows *pre = rotated ? NULL : x->d[t], *cmp = rotated ? x->d[t] : x->d[t + 2];
        const posenc_apply_shape *s = &x->d[t]->shape;
        posenc_dtype pdt = (pre ? pre : cmp)->info.dtype, cdt = (cmp ? cmp : pre)->info.dtype;
        /* k reads q's cos/sin caches: the same recipes and positions */
        pe_vpass_spec ps = { .what = role[t], .rec = chk->rec, .pre_dt = pdt, .cmp_dt = cdt,
                             .positions = x->pos.apply, .batch = s->batch, .heads = s->heads,
                             .seq = S, .head_dim = s->head_dim, .has_pre = pre != NULL,
                             .has_cmp = cmp != NULL, .keep = x->keep,
                             .share = t ? out[0] : NULL };
        posenc_verify_tolerance_init(&ps.tol, pdt, cdt, 1);
        ps.tol.extra = chk->extra;
        ps.tol.angle_acc = chk->angle_acc;
        ps.held = chk->held;
        ps.slack_a = chk->slack_a;
        ps.slack_b = chk->slack_b;
        posenc_verify_tolerance_init(&ps.ptol, pdt, cdt, 0);
        for (int k = 0; k < POSENC_VERIFY_N_PROFILES; k++)
            ps.prof[k] = chk->prof[k];
        posenc_apply *ua = NULL;
        if (chk->ulp && pre && cmp) {
            posenc_apply_opts ao = { chk->ulp->prec, 0, pdt };
            if ((st = posenc_apply_new(&chk->ulp->params, &ao, &x->pos.apply, S, 1, &ua, err)) !=
                POSENC_OK) {
                posenc_error_prefix(err, st, "--max-ulp: posenc apply's rotation: ");
                break;
            }
            ps.ulp = ua;
        }
        if ((st = pe_vpass_new(&ps, &out[t], err)) == POSENC_OK)
            st = stream(out[t], pre, cmp, err);
        posenc_apply_free(ua);
    }
    if (st != POSENC_OK) {
        pe_vpass_free(out[1]);
        pe_vpass_free(out[0]);
        out[0] = out[1] = NULL;
    }
    return st;
}
