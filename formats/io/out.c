/* formats/io/out.c: the output pipeline (out.h): plan, open, metadata, declare, stream rows from a
 * table source through one writer thread, commit; the stages open/commit/abort for a caller
 * that streams its own values. */
#include "formats/io/out.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io/backend.h"

#define CHUNK_BYTES ((size_t)4 << 20) /* per slot, for sources without a preferred chunk */

void pe_out_human_size(uint64_t n, char *buf, size_t len)
{
    static const char *unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (n < 1024) {
        snprintf(buf, len, "%" PRIu64 " bytes", n);
        return;
    }
    double v = (double)n;
    int u = -1;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, unit[u]);
}

static int wanted(const pe_out *o, int i)
{
    return !o->want || o->want[i];
}

posenc_status pe_out_plan(pe_out *o, posenc_error *err)
{
    const pe_table *t = o->t;
    o->bytes = o->values = 0;
    o->nwant = 0;
    o->over_limit = 0;
    for (int i = 0; i < t->narr; i++) {
        if (!wanted(o, i))
            continue;
        const posenc_array_info *a = &t->arr[i].info;
        uint64_t ne, nb;
        posenc_status st = posenc_shape_size(a->ndim, a->shape, a->dtype, &ne, &nb, err);
        if (st != POSENC_OK)
            return st;
        if (nb > UINT64_MAX - o->bytes)
            return posenc_seterr(err, POSENC_ERANGE, "the output would be larger than 2^63 bytes");
        o->bytes += nb;
        o->values += ne;
        o->nwant++;
    }
    uint64_t lim = o->size_limit ? o->size_limit : PE_OUT_SIZE_LIMIT;
    o->over_limit = o->bytes > lim && !o->force;
    return POSENC_OK;
}

/* ---------------------------------------------------------------- the writer thread */

/* Two slots: the producer fills an empty slot and submits it; the writer thread converts full
 * slots to the output dtype and writes them in order. Without a thread (not wanted, or
 * pthread_create failed) submit writes synchronously. */
struct sink {
    posenc_writer *w;
    void *obuf;                  /* conversion buffer of the writer */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void *slot[2];
    const void *ptr[2];
    uint64_t nelem[2];
    posenc_dtype src[2], dst[2];
    int full[2];
    int cur;                     /* slot the producer fills next */
    int done;                    /* producer finished */
    int threaded;
    posenc_status st;            /* first write error */
    posenc_error err;
};

static posenc_status sink_write(struct sink *s, int i)
{
    if (s->src[i] == s->dst[i])
        return posenc_writer_write(s->w, s->ptr[i], s->nelem[i], &s->err);
    posenc_dtype_convert(s->obuf, s->dst[i], s->ptr[i], s->src[i], (size_t)s->nelem[i]);
    return posenc_writer_write(s->w, s->obuf, s->nelem[i], &s->err);
}

static void *sink_main(void *arg)
{
    struct sink *s = arg;
    int i = 0;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->full[i] && !s->done)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->full[i]) {
            pthread_mutex_unlock(&s->mu);
            break;
        }
        pthread_mutex_unlock(&s->mu);
        posenc_status st = sink_write(s, i);
        pthread_mutex_lock(&s->mu);
        s->full[i] = 0;
        if (st != POSENC_OK)
            s->st = st;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (st != POSENC_OK)
            break;
        i ^= 1;
    }
    return NULL;
}

static void sink_start(struct sink *s, int thread)
{
    s->st = POSENC_OK;
    if (!thread || pthread_mutex_init(&s->mu, NULL) != 0)
        return;
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        pthread_mutex_destroy(&s->mu);
        return;
    }
    s->threaded = pthread_create(&s->th, NULL, sink_main, s) == 0;
    if (!s->threaded) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
    }
}

/* Wait until slot s->cur is free; 0 when the writer has failed. */
static int sink_acquire(struct sink *s)
{
    if (!s->threaded)
        return s->st == POSENC_OK;
    pthread_mutex_lock(&s->mu);
    while (s->full[s->cur] && s->st == POSENC_OK)
        pthread_cond_wait(&s->cv, &s->mu);
    int ok = s->st == POSENC_OK;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

static void sink_submit(struct sink *s, uint64_t n, posenc_dtype src, posenc_dtype dst)
{
    int i = s->cur;
    if (s->threaded)
        pthread_mutex_lock(&s->mu);
    s->ptr[i] = s->slot[i];
    s->nelem[i] = n;
    s->src[i] = src;
    s->dst[i] = dst;
    if (!s->threaded) {
        if (s->st == POSENC_OK)
            s->st = sink_write(s, i);
        return;
    }
    s->full[i] = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    s->cur ^= 1;
}

/* Let the writer drain and stop; the first write error, if any (its message into err). */
static posenc_status sink_finish(struct sink *s, posenc_error *err)
{
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        s->done = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->th, NULL);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        s->threaded = 0;
    }
    if (s->st != POSENC_OK && err)
        *err = s->err;
    return s->st;
}

/* ---------------------------------------------------------------- the pipeline */

static int64_t chunk_rows(const pe_table *t, const pe_table_array *a)
{
    if (a->rows <= 0)
        return 1;
    int64_t cr = t->chunk_rows;
    if (cr <= 0) {
        size_t es = posenc_dtype_size(a->src), ds = posenc_dtype_size(a->info.dtype);
        size_t per_row = (size_t)a->rowlen * (es > ds ? es : ds);
        cr = per_row ? (int64_t)(CHUNK_BYTES / per_row) : 1;
        if (cr < 1)
            cr = 1;
    }
    return cr < a->rows ? cr : a->rows;
}

/* Stream every wanted array of the table through the sink. */
static posenc_status stream(pe_out *o, struct sink *s, posenc_error *err)
{
    pe_table *t = o->t;
    for (int i = 0; i < t->narr; i++) {
        const pe_table_array *a = &t->arr[i];
        if (!wanted(o, i))
            continue;
        int64_t cr = chunk_rows(t, a);
        for (int64_t r0 = 0; r0 < a->rows; r0 += cr) {
            int64_t k = a->rows - r0 < cr ? a->rows - r0 : cr;
            if (!sink_acquire(s))
                return POSENC_OK; /* the writer's error, reported by sink_finish */
            posenc_status st = t->fill(t, i, r0, k, s->slot[s->cur], err);
            if (st != POSENC_OK)
                return st;
            sink_submit(s, (uint64_t)k * (uint64_t)a->rowlen, a->src, a->info.dtype);
        }
    }
    return POSENC_OK;
}

void pe_out_limit_message(const pe_out *o, const char *path, const char *detail,
                          const char *hint, char *buf, size_t len)
{
    uint64_t lim = o->size_limit ? o->size_limit : PE_OUT_SIZE_LIMIT;
    char hs[32], hl[32];
    pe_out_human_size(o->bytes, hs, sizeof hs);
    if (lim % ((uint64_t)1 << 30) == 0) /* "4 GiB", as --help says it */
        snprintf(hl, sizeof hl, "%" PRIu64 " GiB", lim >> 30);
    else
        pe_out_human_size(lim, hl, sizeof hl);
    snprintf(buf, len, "'%s': the output would be %s%s%s%s, over the %s limit; pass %s%s--force",
             path, hs, detail ? " (" : "", detail ? detail : "", detail ? ")" : "", hl,
             hint ? hint : "", hint ? " or " : "");
}

posenc_status pe_out_open(pe_out *o, pe_out_meta_fn meta, void *ctx, posenc_writer **w,
                          posenc_error *err)
{
    posenc_writer *wr = NULL;
    posenc_status st;
    *w = NULL;
    if (o->over_limit) { /* pe_out_plan's verdict */
        char msg[POSENC_ERRMSG_MAX];
        pe_out_limit_message(o, o->path, NULL, NULL, msg, sizeof msg);
        return posenc_seterr(err, POSENC_ERANGE, "%s", msg);
    }
    if ((st = posenc_writer_open(o->path, &o->wopts, &wr, err)) != POSENC_OK)
        return st;
    if (meta && (st = meta(ctx, wr, err)) != POSENC_OK)
        goto fail;
    for (int i = 0; i < o->t->narr; i++)
        if (wanted(o, i) && (st = posenc_writer_declare(wr, &o->t->arr[i].info, err)) !=
            POSENC_OK)
            goto fail;
    *w = wr;
    return POSENC_OK;
fail:
    pe_out_abort(&wr);
    return st;
}

posenc_status pe_out_commit(posenc_writer **w, posenc_error *err)
{
    posenc_status st = posenc_writer_commit(*w, err); /* frees; removes the temporary on failure */
    *w = NULL;
    return st;
}

posenc_status pe_out_commit_all(posenc_writer **w, size_t n, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    pe_tmp_group_begin();
    for (size_t i = 0; i < n; i++) {
        if (st == POSENC_OK)
            st = pe_out_commit(&w[i], err);
        else
            pe_out_abort(&w[i]);
    }
    if (st != POSENC_OK) {
        pe_tmp_group_abort();
        return st;
    }
    return pe_tmp_group_end(err);
}

void pe_out_abort(posenc_writer **w)
{
    posenc_writer_abort(*w);
    *w = NULL;
}

posenc_status pe_out_run(pe_out *o, pe_out_meta_fn meta, void *ctx, posenc_error *err)
{
    pe_table *t = o->t;
    struct sink s;
    posenc_status st;
    size_t slot_bytes = 1, obuf_bytes = 1;

    memset(&s, 0, sizeof s);
    for (int i = 0; i < t->narr; i++) {
        const pe_table_array *a = &t->arr[i];
        if (!wanted(o, i))
            continue;
        size_t ne = (size_t)chunk_rows(t, a) * (size_t)a->rowlen;
        size_t sb = ne * posenc_dtype_size(a->src), ob = ne * posenc_dtype_size(a->info.dtype);
        slot_bytes = sb > slot_bytes ? sb : slot_bytes;
        obuf_bytes = ob > obuf_bytes ? ob : obuf_bytes;
    }
    if ((st = pe_out_open(o, meta, ctx, &s.w, err)) != POSENC_OK)
        goto out;
    s.slot[0] = malloc(slot_bytes);
    s.slot[1] = t->pure ? malloc(slot_bytes) : s.slot[0];
    s.obuf = malloc(obuf_bytes);
    if (!s.slot[0] || !s.slot[1] || !s.obuf) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    sink_start(&s, t->pure);
    st = stream(o, &s, err);
    if (st != POSENC_OK) {
        sink_finish(&s, NULL);
        goto fail;
    }
    if ((st = sink_finish(&s, err)) != POSENC_OK)
        goto fail;
    st = pe_out_commit(&s.w, err);
    goto out;
fail:
    pe_out_abort(&s.w);
out:
    if (s.slot[1] != s.slot[0])
        free(s.slot[1]);
    free(s.slot[0]);
    free(s.obuf);
    return st;
}

/* ---------------------------------------------------------------- sources over files */

static void positions_fn(const void *ctx, uint64_t row0, size_t n, int64_t *out)
{
    pe_positions_fill(ctx, row0, n, out);
}

pe_table_pos pe_out_positions(const pe_positions *p)
{
    pe_table_pos tp = { p ? positions_fn : NULL, p };
    return tp;
}

posenc_status pe_out_rows_read(void *ctx, int64_t row0, int64_t n, void *buf, posenc_error *err)
{
    pe_out_rows *s = ctx;
    if (row0 < s->next)
        return posenc_seterr(err, POSENC_EINVAL, "rows asked out of order");
    while (s->next < row0) { /* rows before the ones asked (a position offset): dropped */
        int64_t k = row0 - s->next < n ? row0 - s->next : n;
        posenc_status st = posenc_reader_read(s->r, buf, (uint64_t)(k * s->width), err);
        if (st != POSENC_OK)
            return st;
        s->next += k;
    }
    s->next += n;
    return posenc_reader_read(s->r, buf, (uint64_t)(n * s->width), err);
}

posenc_status pe_out_rows_copy(void *ctx, int64_t row0, int64_t n, void *buf, posenc_error *err)
{
    const pe_out_rows_mem *m = ctx;
    if (row0 < 0 || n < 0 || row0 > m->rows - n)
        return posenc_seterr(err, POSENC_ERANGE, "row %" PRId64 " is past the table's %" PRId64
                             " rows", row0 + n - 1, m->rows);
    memcpy(buf, m->data + (size_t)row0 * (size_t)m->width,
           (size_t)n * (size_t)m->width * sizeof(float));
    return POSENC_OK;
}

struct container_state {
    posenc_container *c;
    size_t first;
    int cur;                     /* array the reader reads, -1 none */
    posenc_reader *r;
};

static void container_free(void *p)
{
    struct container_state *s = p;
    if (s)
        posenc_reader_close(s->r);
    free(s);
}

static posenc_status container_fill(pe_table *t, int which, int64_t row0, int64_t n, void *buf,
                                    posenc_error *err)
{
    struct container_state *s = t->state;
    (void)row0; /* arrays are streamed in order, each from its start */
    if (which != s->cur) {
        posenc_reader_close(s->r);
        s->r = NULL;
        s->cur = -1;
        posenc_status st = posenc_reader_open_index(s->c, s->first + (size_t)which, &s->r, err);
        if (st != POSENC_OK)
            return st;
        s->cur = which;
    }
    return posenc_reader_read(s->r, buf, (uint64_t)n, err);
}

posenc_status pe_out_container_table(pe_table *t, posenc_container *c, size_t first,
                                     size_t count, int dtype_set, posenc_dtype out_dt,
                                     posenc_error *err)
{
    if (count > (size_t)INT32_MAX)
        return posenc_seterr(err, POSENC_ERANGE, "%zu arrays is too many", count);
    struct container_state *s = NULL;
    posenc_status st = pe_table_begin(t, (int)count, sizeof *s, container_fill, container_free,
                                      (void **)&s, err);
    if (st != POSENC_OK)
        return st;
    s->c = c;
    s->first = first;
    s->cur = -1;
    for (size_t i = first; i < first + count; i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        /* HDF5 lists "/x": other formats (and HDF5 itself) take the name without the root */
        const char *name = a->name[0] == '/' && a->name[1] ? a->name + 1 : a->name;
        posenc_dtype dt = dtype_set && posenc_dtype_is_float(a->dtype) ? out_dt : a->dtype;
        pe_table_add(t, name, dt, a->dtype, a->ndim, a->shape, 1);
    }
    return POSENC_OK;
}
