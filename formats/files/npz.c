/* npz.c: NPZ (np.savez / np.savez_compressed): a zip archive of NAME.npy members plus posenc's
 * meta.json member. Reading streams each member through the zip layer and the NPY codec;
 * writing streams members into a temporary file that is renamed into place on commit. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "formats/io/backend.h"
#include "formats/files/npyfmt.h"
#include "formats/files/zip.h"

#define META_NAME "meta.json"
#define META_MAX ((uint64_t)16 << 20)

struct npz_cont {
    pe_zip *z;
    size_t *entry;              /* zip entry of each array */
    pe_npy_header *h;       /* NPY header of each array */
};

struct npz_reader {
    pe_zip_stream *s;
    pe_npy_data d;
    char label[POSENC_NAME_MAX + 64]; /* "x.npz:NAME" for messages */
};

static posenc_status read_meta(posenc_container *c, pe_zip *z, size_t i, posenc_error *err)
{
    if (z->e[i].usize > META_MAX)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': meta.json of %llu bytes is too large",
                             c->path, (unsigned long long)z->e[i].usize);
    size_t n = (size_t)z->e[i].usize;
    char *text = malloc(n + 1);
    if (!text)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    pe_zip_stream *s;
    posenc_status st = pe_zip_stream_open(z, i, NULL, &s, err);
    if (!st) {
        st = pe_zip_stream_read(s, text, n, err);
        pe_zip_stream_close(s);
    }
    if (st) {
        free(text);
        return st;
    }
    text[n] = '\0';
    cJSON *root = memchr(text, '\0', n) ? NULL : cJSON_ParseWithOpts(text, NULL, 1);
    int ok = cJSON_IsObject(root);
    cJSON_Delete(root);
    if (!ok) {
        free(text);
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': meta.json is not a JSON object",
                             c->path);
    }
    c->meta = text;
    return POSENC_OK;
}

static void npz_close(posenc_container *c)
{
    struct npz_cont *k = c->impl;
    if (!k)
        return;
    pe_zip_close(k->z);
    free(k->entry);
    free(k->h);
    free(k);
    c->impl = NULL;
}

static int is_npy_name(const char *name, size_t *stem)
{
    size_t n = strlen(name);
    if (n <= 4 || strcmp(name + n - 4, ".npy") != 0)
        return 0;
    *stem = n - 4;
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static posenc_status npz_open(posenc_container *c, posenc_error *err)
{
    struct npz_cont *k = calloc(1, sizeof *k);
    if (!k)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    c->impl = k;
    posenc_status st = pe_zip_open(c->path, &k->z, err);
    if (st)
        return st;
    pe_zip *z = k->z;
    size_t narr = 0, stem;
    for (size_t i = 0; i < z->n; i++) {
        if (strcmp(z->e[i].name, META_NAME) == 0) {
            if (c->meta)
                return posenc_seterr(err, POSENC_EFORMAT, "'%s': two meta.json members",
                                     c->path);
            if ((st = read_meta(c, z, i, err)))
                return st;
        } else if (is_npy_name(z->e[i].name, &stem)) {
            narr++;
        }
    }
    /* members, none of them NPY: another kind of zip (torch.save writes ARCHIVE/data.pkl and
     * ARCHIVE/data/0), not an NPZ with no arrays (np.savez of nothing has no members at all) */
    if (narr == 0 && z->n > (c->meta ? 1u : 0u))
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': a ZIP archive without .npy members "
                             "(%s: a PyTorch checkpoint or another kind of zip), not NPZ",
                             c->path, z->e[c->meta ? (strcmp(z->e[0].name, META_NAME) == 0)
                                                   : 0].name);
    k->entry = calloc(narr ? narr : 1, sizeof *k->entry);
    k->h = calloc(narr ? narr : 1, sizeof *k->h);
    c->arrays = calloc(narr ? narr : 1, sizeof *c->arrays);
    if (!k->entry || !k->h || !c->arrays)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    cJSON *meta = c->meta ? cJSON_Parse(c->meta) : NULL;
    FILE *fp = fopen(c->path, "rb");
    if (!fp) {
        cJSON_Delete(meta);
        return posenc_seterr(err, POSENC_EIO, "cannot open '%s'", c->path);
    }
    size_t a = 0;
    for (size_t i = 0; i < z->n && !st; i++) {
        const pe_zip_entry *e = &z->e[i];
        if (!is_npy_name(e->name, &stem))
            continue;
        if (stem >= POSENC_NAME_MAX) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': member name '%.64s...' is too long",
                               c->path, e->name);
            break;
        }
        posenc_array_info *info = &c->arrays[a];
        memcpy(info->name, e->name, stem);
        info->name[stem] = '\0';
        int bf16 = c->opts.assume_bf16 || pe_npy_dtypes_bf16(meta, info->name);
        char label[POSENC_NAME_MAX + 64];
        snprintf(label, sizeof label, "%s:%s", c->path, info->name);
        pe_zip_stream *s;
        if ((st = pe_zip_stream_open(z, i, fp, &s, err)))
            break;
        st = pe_npy_header_read(pe_zip_stream_src, s, label, bf16, &k->h[a], err);
        pe_zip_stream_close(s);
        if (st)
            break;
        if (e->usize != k->h[a].data_offset + k->h[a].nbytes) {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': member '%s' declares %llu bytes but its NPY header needs "
                               "%llu", c->path, e->name, (unsigned long long)e->usize,
                               (unsigned long long)(k->h[a].data_offset + k->h[a].nbytes));
            break;
        }
        char name[POSENC_NAME_MAX];
        memcpy(name, info->name, sizeof name);
        *info = k->h[a].info;
        memcpy(info->name, name, sizeof name);
        k->entry[a] = i;
        a++;
    }
    fclose(fp);
    cJSON_Delete(meta);
    c->n = a;
    if (!st && a > 1) { /* duplicate members: sort the names */
        const char **s = malloc(a * sizeof *s);
        if (!s)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        for (size_t i = 0; i < a; i++)
            s[i] = c->arrays[i].name;
        qsort(s, a, sizeof *s, cmp_str);
        for (size_t i = 1; i < a && !st; i++)
            if (strcmp(s[i - 1], s[i]) == 0)
                st = posenc_seterr(err, POSENC_EFORMAT, "'%s': member '%s.npy' appears twice",
                                   c->path, s[i]);
        free(s);
    }
    return st;
}

static posenc_status npz_reader_open(posenc_reader *r, posenc_error *err)
{
    struct npz_cont *k = r->c->impl;
    struct npz_reader *nr = calloc(1, sizeof *nr);
    if (!nr)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    snprintf(nr->label, sizeof nr->label, "%s:%s", r->c->path, r->info.name);
    const pe_npy_header *h = &k->h[r->index];
    posenc_status st = pe_npy_readable(h, nr->label, err);
    if (st) {
        free(nr);
        return st;
    }
    st = pe_zip_stream_open(k->z, k->entry[r->index], NULL, &nr->s, err);
    /* skip the NPY header (it is part of the member's CRC) */
    unsigned char skip[4096];
    for (uint64_t left = h->data_offset; !st && left > 0;) {
        size_t n = left < sizeof skip ? (size_t)left : sizeof skip;
        st = pe_zip_stream_read(nr->s, skip, n, err);
        left -= n;
    }
    if (st) {
        pe_zip_stream_close(nr->s);
        free(nr);
        return st;
    }
    pe_npy_data_init(&nr->d, h, pe_zip_stream_src, nr->s, nr->label);
    r->impl = nr;
    return POSENC_OK;
}

static posenc_status npz_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err)
{
    struct npz_reader *nr = r->impl;
    return pe_npy_data_read(&nr->d, buf, nelem, err);
}

static void npz_reader_close(posenc_reader *r)
{
    struct npz_reader *nr = r->impl;
    if (!nr)
        return;
    pe_npy_data_free(&nr->d);
    pe_zip_stream_close(nr->s);
    free(nr);
    r->impl = NULL;
}

/* ---- writer ---- */

struct npz_writer {
    FILE *fp;
    char *tmp;
    char *vbuf;
    pe_zipw *zw;
    size_t begun;               /* members started */
    int open;                   /* member begun-1 is open */
};

static void npz_w_free(posenc_writer *w, int discard)
{
    struct npz_writer *k = w->impl;
    if (!k)
        return;
    pe_zipw_free(k->zw);
    if (discard)
        pe_tmp_discard(k->fp, k->tmp);
    free(k->tmp);
    free(k->vbuf);
    free(k);
    w->impl = NULL;
}

static posenc_status npz_w_start(posenc_writer *w, posenc_error *err)
{
    struct npz_writer *k = calloc(1, sizeof *k);
    if (!k)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    w->impl = k;
    posenc_status st = pe_tmp_create(w->path, &k->tmp, &k->fp, err);
    if (st) {
        npz_w_free(w, 0);
        return st;
    }
    k->vbuf = malloc(PE_IO_BUFSIZE);
    if (k->vbuf)
        setvbuf(k->fp, k->vbuf, _IOFBF, PE_IO_BUFSIZE);
    if ((st = pe_zipw_new(k->fp, w->path, &k->zw, err))) {
        npz_w_free(w, 1);
        return st;
    }
    return POSENC_OK;
}

/* Start members up to and including array upto (earlier ones are complete: empty arrays have
 * no writes of their own). */
static posenc_status begin_upto(posenc_writer *w, size_t upto, posenc_error *err)
{
    struct npz_writer *k = w->impl;
    posenc_status st;
    while (k->begun <= upto) {
        if (k->open && (st = pe_zipw_end(k->zw, err)))
            return st;
        k->open = 0;
        const posenc_array_info *a = &w->arrays[k->begun];
        size_t nl = strlen(a->name);
        char name[POSENC_NAME_MAX + 8];
        memcpy(name, a->name, nl);
        memcpy(name + nl, ".npy", 5);
        if ((st = pe_zipw_begin(k->zw, name, w->opts.compress, err)))
            return st;
        k->open = 1;
        k->begun++;
        unsigned char hdr[PE_NPY_HEADER_CAP];
        size_t hl = pe_npy_header_format(a, hdr);
        if ((st = pe_zipw_data(k->zw, hdr, hl, err)))
            return st;
    }
    return POSENC_OK;
}

static posenc_status npz_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                 posenc_error *err)
{
    struct npz_writer *k = w->impl;
    posenc_status st = begin_upto(w, w->cur, err);
    if (st)
        return st;
    return pe_zipw_data(k->zw, data,
                            (size_t)(nelem * posenc_dtype_size(w->arrays[w->cur].dtype)), err);
}

/* meta.json: the writer's metadata plus "posenc_dtypes" naming the bf16 arrays (their NPY
 * descr '<V2' does not say it). Caller frees. */
static char *meta_text(const posenc_writer *w)
{
    char *base = pe_writer_meta_json(w);
    cJSON *root = base ? cJSON_Parse(base) : NULL;
    free(base);
    if (!root)
        return NULL;
    cJSON *dts = NULL;
    for (size_t i = 0; i < w->n; i++) {
        if (w->arrays[i].dtype != POSENC_DT_BF16)
            continue;
        if (!dts) {
            cJSON_DeleteItemFromObjectCaseSensitive(root, "posenc_dtypes");
            dts = cJSON_AddObjectToObject(root, "posenc_dtypes");
        }
        if (!dts || !cJSON_AddStringToObject(dts, w->arrays[i].name, "bf16")) {
            cJSON_Delete(root);
            return NULL;
        }
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static posenc_status npz_w_commit(posenc_writer *w, posenc_error *err)
{
    struct npz_writer *k = w->impl;
    posenc_status st = w->n ? begin_upto(w, w->n - 1, err) : POSENC_OK;
    if (!st && k->open)
        st = pe_zipw_end(k->zw, err);
    k->open = 0;
    if (!st) {
        char *meta = meta_text(w);
        if (!meta)
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        if (!st)
            st = pe_zipw_begin(k->zw, META_NAME, 0, err);
        if (!st)
            st = pe_zipw_data(k->zw, meta, strlen(meta), err);
        if (!st)
            st = pe_zipw_end(k->zw, err);
        free(meta);
    }
    if (!st)
        st = pe_zipw_finish(k->zw, err);
    if (st) {
        npz_w_free(w, 1);
        return st;
    }
    st = pe_tmp_commit(k->fp, k->tmp, w->path, err);
    k->fp = NULL;
    npz_w_free(w, 0);
    return st;
}

static void npz_w_abort(posenc_writer *w) { npz_w_free(w, 1); }

/* An opaque '<V2' array: its NPY descr, not readable (posenc_container_array_type). */
static const char *npz_array_type(const posenc_container *c, size_t i, uint64_t *nbytes,
                                   int *readable)
{
    const struct npz_cont *k = c->impl;
    return pe_npy_array_type(&k->h[i], nbytes, readable);
}

const pe_backend pe_backend_npz = {
    .format = POSENC_FMT_NPZ,
    .open = npz_open,
    .reader_open = npz_reader_open,
    .read = npz_read,
    .reader_close = npz_reader_close,
    .close = npz_close,
    .w_start = npz_w_start,
    .w_write = npz_w_write,
    .w_commit = npz_w_commit,
    .w_abort = npz_w_abort,
    .array_type = npz_array_type,
};
