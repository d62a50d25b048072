/* formats/engines/applyrun.c: the streaming pipeline of posenc apply (formats/engines/applyrun.h). */
#include "formats/engines/applyrun.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES PE_APPLY_CHUNK_BYTES
#define NSLOT PE_APPLY_NSLOT

/* ---- the streaming pipeline ---- */

struct slot {
    unsigned char *buf;        /* rotated output (the input too when element sizes agree) */
    unsigned char *in;         /* input when element sizes differ */
    size_t job;
    uint64_t v, nvec;          /* vectors [v, v + nvec) of the job */
    uint64_t split;            /* the producer rotated the first `split` vectors */
};

struct pipe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct slot slots[NSLOT];
    size_t head, tail, count;
    int failed, done;
    posenc_error err;
    pe_apply_job *jobs;
    size_t njobs;
    size_t chunk_vec;          /* vectors per chunk (all jobs) */
};

/* Rotate vectors [a, b) of the slot's chunk (relative to its first vector). */
static void rotate_part(const pe_apply_job *j, const struct slot *s, uint64_t a, uint64_t b)
{
    size_t ies = posenc_dtype_size(j->in_dt), oes = posenc_dtype_size(j->out_dt);
    const unsigned char *src = ies == oes ? s->buf : s->in;
    if (b > a && !j->ap)
        posenc_dtype_convert(s->buf + a * j->D * oes, j->out_dt, src + a * j->D * ies, j->in_dt,
                             (size_t)((b - a) * j->D));
    else if (b > a)
        posenc_apply_rows(j->ap, &j->sh, s->v + a, b - a, src + a * j->D * ies, j->in_dt,
                          s->buf + a * j->D * oes, j->out_dt);
}

/* Read the next n vectors of job j (starting at v) into slot s and rotate the first `split`
 * of them; the writer side rotates the rest, so both cores share the arithmetic. */
static posenc_status fill(pe_apply_job *j, struct slot *s, size_t ji, uint64_t v, uint64_t n,
                          uint64_t split, posenc_error *err)
{
    size_t ies = posenc_dtype_size(j->in_dt), oes = posenc_dtype_size(j->out_dt);
    posenc_status st;
    if (!j->r && (st = posenc_reader_open_index(j->c, j->index, &j->r, err)) != POSENC_OK)
        return st;
    st = posenc_reader_read(j->r, ies == oes ? s->buf : s->in, n * j->D, err);
    if (st != POSENC_OK)
        return st;
    if (j->c && v + n == j->nvec) {
        posenc_reader_close(j->r); /* the last chunk of this array is read */
        j->r = NULL;
    }
    s->job = ji;
    s->v = v;
    s->nvec = n;
    s->split = split < n ? split : n;
    rotate_part(j, s, 0, s->split);
    return POSENC_OK;
}

static void pipe_fail(struct pipe *p, const posenc_error *e)
{
    pthread_mutex_lock(&p->mu);
    if (!p->failed) {
        p->failed = 1;
        p->err = *e;
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void *producer(void *arg)
{
    struct pipe *p = arg;
    posenc_error e = { 0 };
    for (size_t ji = 0; ji < p->njobs; ji++) {
        pe_apply_job *j = &p->jobs[ji];
        for (uint64_t v = 0; v < j->nvec; v += p->chunk_vec) {
            uint64_t n = j->nvec - v < p->chunk_vec ? j->nvec - v : p->chunk_vec;
            pthread_mutex_lock(&p->mu);
            while (p->count == NSLOT && !p->failed)
                pthread_cond_wait(&p->cv, &p->mu);
            int failed = p->failed;
            struct slot *s = &p->slots[p->head];
            pthread_mutex_unlock(&p->mu);
            if (failed)
                return NULL;
            if (fill(j, s, ji, v, n, n / 2, &e) != POSENC_OK) {
                pipe_fail(p, &e);
                return NULL;
            }
            pthread_mutex_lock(&p->mu);
            p->head = (p->head + 1) % NSLOT;
            p->count++;
            pthread_cond_broadcast(&p->cv);
            pthread_mutex_unlock(&p->mu);
        }
    }
    pthread_mutex_lock(&p->mu);
    p->done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Run every job: threaded when allowed, else read-rotate-write in this thread. */
posenc_status pe_apply_run(pe_apply_job *jobs, size_t njobs, int threaded, posenc_error *err)
{
    struct pipe p;
    memset(&p, 0, sizeof p);
    p.jobs = jobs;
    p.njobs = njobs;
    size_t maxv = 1, maxin = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < njobs; i++) {
        size_t ies = posenc_dtype_size(jobs[i].in_dt), oes = posenc_dtype_size(jobs[i].out_dt);
        size_t vb = jobs[i].D * (ies > oes ? ies : oes);
        if (vb > maxv)
            maxv = vb;
        if (ies != oes && jobs[i].D * ies > maxin)
            maxin = jobs[i].D * ies;
        total += jobs[i].nvec * jobs[i].D * ies;
    }
    p.chunk_vec = CHUNK_BYTES / maxv;
    if (p.chunk_vec == 0)
        p.chunk_vec = 1;
    size_t slotbytes = p.chunk_vec * maxv;
    int nslot = threaded && total > 2 * CHUNK_BYTES ? NSLOT : 1;
    posenc_status st = POSENC_OK;
    for (int i = 0; i < nslot; i++) {
        if (!(p.slots[i].buf = malloc(slotbytes)))
            goto nomem;
        if (maxin && !(p.slots[i].in = malloc(p.chunk_vec * maxin)))
            goto nomem;
    }

    if (nslot == 1) {
        for (size_t ji = 0; ji < njobs && st == POSENC_OK; ji++) {
            pe_apply_job *j = &jobs[ji];
            for (uint64_t v = 0; v < j->nvec && st == POSENC_OK; v += p.chunk_vec) {
                uint64_t n = j->nvec - v < p.chunk_vec ? j->nvec - v : p.chunk_vec;
                st = fill(j, &p.slots[0], ji, v, n, n, err);
                if (st == POSENC_OK)
                    st = posenc_writer_write(j->w, p.slots[0].buf, n * j->D, err);
            }
        }
        goto out;
    }

    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t tid;
    if (pthread_create(&tid, NULL, producer, &p) != 0) {
        pthread_mutex_destroy(&p.mu);
        pthread_cond_destroy(&p.cv);
        st = posenc_seterr(err, POSENC_ENOMEM, "cannot start a thread");
        goto out;
    }
    for (;;) {
        pthread_mutex_lock(&p.mu);
        while (p.count == 0 && !p.done && !p.failed)
            pthread_cond_wait(&p.cv, &p.mu);
        if (p.failed || (p.count == 0 && p.done)) {
            pthread_mutex_unlock(&p.mu);
            break;
        }
        struct slot *s = &p.slots[p.tail];
        pthread_mutex_unlock(&p.mu);
        pe_apply_job *j = &jobs[s->job];
        rotate_part(j, s, s->split, s->nvec);
        posenc_error e = { 0 };
        if (posenc_writer_write(j->w, s->buf, s->nvec * j->D, &e) != POSENC_OK) {
            pipe_fail(&p, &e);
            break;
        }
        pthread_mutex_lock(&p.mu);
        p.tail = (p.tail + 1) % NSLOT;
        p.count--;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
    }
    pthread_join(tid, NULL);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    if (p.failed) {
        if (err)
            *err = p.err;
        st = p.err.code ? p.err.code : POSENC_EIO;
    }
    goto out;
nomem:
    st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
out:
    for (size_t i = 0; i < njobs; i++)
        if (jobs[i].c && jobs[i].r) { /* a failed run: the readers it opened */
            posenc_reader_close(jobs[i].r);
            jobs[i].r = NULL;
        }
    for (int i = 0; i < NSLOT; i++) {
        free(p.slots[i].buf);
        free(p.slots[i].in);
    }
    return st;
}

