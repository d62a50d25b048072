/* io.c: the generic layer over every format: containers (sniffing the magic bytes), readers by
 * FILE:MEMBER spec, and checked writers that hand bytes to the per-format backends. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "formats/io/backend.h"
#include "formats/io/inputs.h"
#include "formats/io/iowatch.h"

/* The progress observer (iowatch.h). */
static int watch_what;
static pe_watch_fn watch_fn;
static void *watch_ctx;

void pe_io_watch(int what, pe_watch_fn fn, void *ctx)
{
    watch_what = fn ? what : 0;
    watch_fn = fn;
    watch_ctx = ctx;
}

static void watch(int what, uint64_t add_total, uint64_t add_done)
{
    if (watch_what & what)
        watch_fn(watch_ctx, add_total, add_done);
}

/* ---- containers ---- */

posenc_status posenc_container_open(const char *path, const posenc_read_opts *opts,
                                    posenc_container **out, posenc_error *err)
{
    posenc_read_opts o = { 0, POSENC_FMT_AUTO };
    if (opts)
        o = *opts;
    posenc_format f = o.format;
    posenc_status st;
    if (f == POSENC_FMT_AUTO && (st = pe_format_sniff(path, &f, err)))
        return st;
    const pe_backend *be = pe_backend_for(f);
    if (!be || !be->open)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': cannot read %s files%s", path,
                             posenc_format_name(f), be ? "" : " (not built in)");
    if (strcmp(path, "-") == 0 && !posenc_format_to_stdout(f))
        return posenc_seterr(err, POSENC_EINVAL, "standard input can only be read as NPY");
    posenc_container *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        free(c);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    c->be = be;
    c->opts = o;
    c->opts.format = f;
    if ((st = be->open(c, err))) {
        if (c->impl && be->close)
            be->close(c);
        free(c->arrays);
        free(c->meta);
        free(c->meta_types);
        free(c->path);
        free(c);
        return st;
    }
    pe_input_add(path); /* HDF5 and directories too: no output of this run may replace it */
    *out = c;
    return POSENC_OK;
}

posenc_format posenc_container_format(const posenc_container *c) { return c->be->format; }

posenc_format posenc_reader_format(const posenc_reader *r) { return r->c->be->format; }

posenc_format posenc_writer_format(const posenc_writer *w) { return w->be->format; }

size_t posenc_container_count(const posenc_container *c) { return c->n; }

const posenc_array_info *posenc_container_array(const posenc_container *c, size_t i)
{
    return i < c->n ? &c->arrays[i] : NULL;
}

const char *posenc_container_meta(const posenc_container *c) { return c->meta; }

const char *posenc_container_meta_types(const posenc_container *c) { return c->meta_types; }

const char *posenc_container_array_type(const posenc_container *c, size_t i, uint64_t *nbytes,
                                        int *readable)
{
    if (i >= c->n || !c->be->array_type)
        return NULL;
    return c->be->array_type(c, i, nbytes, readable);
}

void posenc_container_close(posenc_container *c)
{
    if (!c)
        return;
    if (c->be->close)
        c->be->close(c);
    free(c->arrays);
    free(c->meta);
    free(c->meta_types);
    free(c->path);
    free(c);
}

/* ---- readers ---- */

posenc_status posenc_reader_open_index(posenc_container *c, size_t i, posenc_reader **out,
                                       posenc_error *err)
{
    if (i >= c->n)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': no array number %zu (it holds %zu)",
                             c->path, i, c->n);
    posenc_reader *r = calloc(1, sizeof *r);
    if (!r)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    r->c = c;
    r->index = i;
    r->info = c->arrays[i];
    posenc_status st = posenc_shape_size(r->info.ndim, r->info.shape, r->info.dtype, &r->nelem,
                                         NULL, err);
    if (!st)
        st = c->be->reader_open(r, err);
    if (st) {
        free(r);
        return st;
    }
    watch(PE_WATCH_READS, r->nelem * posenc_dtype_size(r->info.dtype), 0);
    *out = r;
    return POSENC_OK;
}

/* Find member in c: exact name, or HDF5-style with or without the leading '/'. */
static int find_member(const posenc_container *c, const char *member, size_t *idx)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->arrays[i].name, member) == 0) {
            *idx = i;
            return 1;
        }
    const char *m = member[0] == '/' ? member + 1 : member;
    for (size_t i = 0; i < c->n; i++) {
        const char *nm = c->arrays[i].name[0] == '/' ? c->arrays[i].name + 1 : c->arrays[i].name;
        if (strcmp(nm, m) == 0) {
            *idx = i;
            return 1;
        }
    }
    return 0;
}

/* "cos, sin, inv_freq" (the first few names) for messages. */
static void list_names(const posenc_container *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->n && off + 1 < len; i++) {
        if (i == 8) {
            snprintf(buf + off, len - off, ", ...");
            return;
        }
        int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", c->arrays[i].name);
        if (n < 0)
            return;
        off += (size_t)n;
    }
}

posenc_status posenc_reader_open(const char *spec, const posenc_read_opts *opts,
                                 posenc_reader **out, posenc_error *err)
{
    char path[4096], member[1024];
    posenc_status st;
    if ((st = posenc_spec_split(spec, path, sizeof path, member, sizeof member, err)))
        return st;
    posenc_container *c;
    if ((st = posenc_container_open(path, opts, &c, err)))
        return st;
    size_t idx = 0;
    if (member[0]) {
        if (!find_member(c, member, &idx)) {
            char names[256];
            list_names(c, names, sizeof names);
            st = posenc_seterr(err, POSENC_ENOTFOUND, "'%s': no array '%s' (it holds %s)", path,
                               member, c->n ? names : "none");
            goto fail;
        }
    } else if (c->n != 1) {
        if (c->n == 0) {
            st = posenc_seterr(err, POSENC_ENOTFOUND, "'%s': holds no arrays", path);
        } else {
            char names[256];
            list_names(c, names, sizeof names);
            st = posenc_seterr(err, POSENC_EINVAL, "'%s': %zu arrays (%s); name one as '%s:NAME'",
                               path, c->n, names, path);
        }
        goto fail;
    }
    posenc_reader *r;
    if ((st = posenc_reader_open_index(c, idx, &r, err)))
        goto fail;
    r->own_container = 1;
    *out = r;
    return POSENC_OK;
fail:
    posenc_container_close(c);
    return st;
}

const posenc_array_info *posenc_reader_info(const posenc_reader *r) { return &r->info; }

posenc_status posenc_reader_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err)
{
    if (nelem > r->nelem - r->pos)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': reading past the end of array '%s' (%llu elements)",
                             r->c->path, r->info.name, (unsigned long long)r->nelem);
    if (nelem == 0)
        return POSENC_OK;
    posenc_status st = r->c->be->read(r, buf, nelem, err);
    if (!st) {
        r->pos += nelem;
        watch(PE_WATCH_READS, 0, nelem * posenc_dtype_size(r->info.dtype));
    }
    return st;
}

void posenc_reader_close(posenc_reader *r)
{
    if (!r)
        return;
    if (r->c->be->reader_close)
        r->c->be->reader_close(r);
    if (r->own_container)
        posenc_container_close(r->c);
    free(r);
}

posenc_status posenc_read_all(const char *spec, const posenc_read_opts *opts, posenc_dtype as,
                              uint64_t max_bytes, posenc_array_info *info, void **data,
                              posenc_error *err)
{
    posenc_reader *r;
    posenc_status st;
    if ((unsigned)as >= POSENC_DT_COUNT)
        return posenc_seterr(err, POSENC_EINVAL, "invalid dtype");
    if ((st = posenc_reader_open(spec, opts, &r, err)))
        return st;
    size_t out_es = posenc_dtype_size(as), in_es = posenc_dtype_size(r->info.dtype);
    uint64_t n = r->nelem;
    unsigned char *buf = NULL, *tmp = NULL;
    if (n > max_bytes / out_es) {
        char sh[256];
        posenc_shape_str(r->info.ndim, r->info.shape, sh, sizeof sh);
        st = posenc_seterr(err, POSENC_ERANGE,
                           "'%s': array %s of shape %s is larger than %llu bytes as %s", spec,
                           r->info.name[0] ? r->info.name : "", sh,
                           (unsigned long long)max_bytes, posenc_dtype_name(as));
        goto out;
    }
    buf = malloc(n ? (size_t)(n * out_es) : 1);
    if (!buf) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    if (as == r->info.dtype) {
        st = posenc_reader_read(r, buf, n, err);
    } else {
        const uint64_t chunk = 1 << 16;
        tmp = malloc((size_t)(chunk * in_es));
        if (!tmp) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            goto out;
        }
        for (uint64_t done = 0; done < n && !st; done += chunk) {
            uint64_t k = n - done < chunk ? n - done : chunk;
            st = posenc_reader_read(r, tmp, k, err);
            if (!st)
                posenc_dtype_convert(buf + done * out_es, as, tmp, r->info.dtype, (size_t)k);
        }
    }
    if (!st) {
        if (info)
            *info = r->info;
        *data = buf;
        buf = NULL;
    }
out:
    free(tmp);
    free(buf);
    posenc_reader_close(r);
    return st;
}

/* ---- writers ---- */

#define DUP_LINEAR 256 /* declare checks names against this many; writer_start sorts the rest */

posenc_status posenc_writer_open(const char *path, const posenc_write_opts *opts,
                                 posenc_writer **out, posenc_error *err)
{
    posenc_write_opts o = { POSENC_FMT_AUTO, 0 };
    if (opts)
        o = *opts;
    if (!path || !*path)
        return posenc_seterr(err, POSENC_EINVAL, "empty output name");
    if (o.format == POSENC_FMT_AUTO)
        o.format = posenc_format_guess(path);
    if (o.format == POSENC_FMT_AUTO)
        return posenc_seterr(err, POSENC_EINVAL,
                             "'%s': cannot tell the format from the name; pass --format", path);
    if (strcmp(path, "-") == 0 && !posenc_format_to_stdout(o.format))
        return posenc_seterr(err, POSENC_EINVAL,
                             "standard output takes one array as NPY, not %s",
                             posenc_format_name(o.format));
    const pe_backend *be = pe_backend_for(o.format);
    if (!be || !be->w_start)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': cannot write %s files%s", path,
                             posenc_format_name(o.format), be ? "" : " (not built in)");
    posenc_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    w->be = be;
    w->opts = o;
    *out = w;
    return POSENC_OK;
}

static void writer_free(posenc_writer *w)
{
    for (size_t i = 0; i < w->nmeta; i++) {
        free(w->meta_keys[i]);
        free(w->meta_vals[i]);
    }
    free(w->meta_keys);
    free(w->meta_vals);
    free(w->meta_types);
    free(w->gguf_rope);
    free(w->arrays);
    free(w->nelem);
    free(w->path);
    free(w);
}

static posenc_status meta_add(posenc_writer *w, const char *key, posenc_meta_type type,
                              const char *json_value, posenc_error *err)
{
    if (w->started)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': metadata must come before the data",
                             w->path);
    if (!key || !*key)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': empty metadata key", w->path);
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(json_value, &end, 1);
    if (!v)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': metadata '%s' is not a JSON value: %.64s",
                             w->path, key, json_value);
    cJSON_Delete(v);
    posenc_status st;
    if (type != POSENC_META_AUTO &&
        (st = pe_gguf_meta_encode(NULL, (int)type, json_value, w->path, key, NULL, err)))
        return st;
    char *k = strdup(key), *val = strdup(json_value);
    if (!k || !val) {
        free(k);
        free(val);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < w->nmeta; i++)
        if (strcmp(w->meta_keys[i], key) == 0) { /* a later value replaces an earlier one */
            free(k);
            free(w->meta_vals[i]);
            w->meta_vals[i] = val;
            w->meta_types[i] = (unsigned char)type;
            return POSENC_OK;
        }
    char **nk = realloc(w->meta_keys, (w->nmeta + 1) * sizeof *nk);
    if (nk)
        w->meta_keys = nk;
    char **nv = nk ? realloc(w->meta_vals, (w->nmeta + 1) * sizeof *nv) : NULL;
    if (nv)
        w->meta_vals = nv;
    unsigned char *nt = nv ? realloc(w->meta_types, w->nmeta + 1) : NULL;
    if (nt)
        w->meta_types = nt;
    if (!nk || !nv || !nt) {
        free(k);
        free(val);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    w->meta_keys[w->nmeta] = k;
    w->meta_vals[w->nmeta] = val;
    w->meta_types[w->nmeta] = (unsigned char)type;
    w->nmeta++;
    return POSENC_OK;
}

posenc_status posenc_writer_meta(posenc_writer *w, const char *key, const char *json_value,
                                 posenc_error *err)
{
    return meta_add(w, key, POSENC_META_AUTO, json_value, err);
}

posenc_status posenc_writer_meta_typed(posenc_writer *w, const char *key, posenc_meta_type type,
                                       const char *json_value, posenc_error *err)
{
    if ((unsigned)type > POSENC_META_STRING_ARRAY)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': metadata '%s' has an invalid type %d",
                             w->path, key ? key : "", (int)type);
    return meta_add(w, key, type, json_value, err);
}

posenc_status posenc_writer_declare(posenc_writer *w, const posenc_array_info *a,
                                    posenc_error *err)
{
    posenc_status st;
    if (w->started)
        return posenc_seterr(err, POSENC_EINVAL,
                             "'%s': declare every array before writing data", w->path);
    if (memchr(a->name, '\0', sizeof a->name) == NULL)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': array name too long", w->path);
    if ((unsigned)a->dtype >= POSENC_DT_COUNT)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': array '%s' has an invalid dtype",
                             w->path, a->name);
    uint64_t n;
    posenc_error e2 = { 0 };
    if ((st = posenc_shape_size(a->ndim, a->shape, a->dtype, &n, NULL, &e2)))
        return posenc_seterr(err, st == POSENC_EFORMAT ? POSENC_EINVAL : st,
                             "'%s': array '%s': %s", w->path, a->name, e2.msg);
    if (posenc_format_one_array(w->opts.format)) {
        if (w->n >= 1)
            return posenc_seterr(err, POSENC_EINVAL,
                                 "'%s': an NPY file holds one array; write several to .npz, "
                                 ".safetensors, .h5 or a directory", w->path);
    } else {
        if (!a->name[0])
            return posenc_seterr(err, POSENC_EINVAL, "'%s': every array needs a name in a %s "
                                 "file", w->path, posenc_format_name(w->opts.format));
        /* duplicates among many arrays are found by sorting when the writer starts */
        for (size_t i = 0; i < w->n && i < DUP_LINEAR; i++)
            if (strcmp(w->arrays[i].name, a->name) == 0)
                return posenc_seterr(err, POSENC_EINVAL, "'%s': array name '%s' used twice",
                                     w->path, a->name);
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        posenc_array_info *na = realloc(w->arrays, cap * sizeof *na);
        if (na)
            w->arrays = na;
        uint64_t *nn = na ? realloc(w->nelem, cap * sizeof *nn) : NULL;
        if (nn)
            w->nelem = nn;
        if (!na || !nn)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        w->cap = cap;
    }
    w->arrays[w->n] = *a;
    w->nelem[w->n] = n;
    w->n++;
    watch(PE_WATCH_WRITES, n * posenc_dtype_size(a->dtype), 0);
    return POSENC_OK;
}

/* Skip completed (and empty) arrays. */
static void advance(posenc_writer *w)
{
    while (w->cur < w->n && w->done == w->nelem[w->cur]) {
        w->cur++;
        w->done = 0;
    }
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp((*(const posenc_array_info *const *)a)->name,
                  (*(const posenc_array_info *const *)b)->name);
}

static posenc_status writer_start(posenc_writer *w, posenc_error *err)
{
    if (w->started)
        return POSENC_OK;
    if (w->n == 0 && posenc_format_one_array(w->opts.format))
        return posenc_seterr(err, POSENC_EINVAL, "'%s': no array to write", w->path);
    if (w->n > DUP_LINEAR) {
        const posenc_array_info **s = malloc(w->n * sizeof *s);
        if (!s)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        for (size_t i = 0; i < w->n; i++)
            s[i] = &w->arrays[i];
        qsort(s, w->n, sizeof *s, cmp_name);
        for (size_t i = 1; i < w->n; i++)
            if (strcmp(s[i - 1]->name, s[i]->name) == 0) {
                posenc_status st = posenc_seterr(err, POSENC_EINVAL,
                                                 "'%s': array name '%s' used twice", w->path,
                                                 s[i]->name);
                free(s);
                return st;
            }
        free(s);
    }
    posenc_status st = w->be->w_start(w, err);
    if (st)
        return st;
    w->started = 1;
    advance(w);
    return POSENC_OK;
}

posenc_status posenc_writer_write(posenc_writer *w, const void *data, uint64_t nelem,
                                  posenc_error *err)
{
    posenc_status st;
    if ((st = writer_start(w, err)))
        return st;
    uint64_t left = 0;
    for (size_t i = w->cur; i < w->n && left <= nelem; i++)
        left += w->nelem[i] - (i == w->cur ? w->done : 0);
    if (nelem > left)
        return posenc_seterr(err, POSENC_EINVAL,
                             "'%s': writing %llu elements past the declared arrays", w->path,
                             (unsigned long long)(nelem - left));
    const unsigned char *p = data;
    while (nelem > 0) {
        uint64_t k = w->nelem[w->cur] - w->done;
        if (k > nelem)
            k = nelem;
        if ((st = w->be->w_write(w, p, k, err)))
            return st;
        watch(PE_WATCH_WRITES, 0, k * posenc_dtype_size(w->arrays[w->cur].dtype));
        p += k * posenc_dtype_size(w->arrays[w->cur].dtype);
        nelem -= k;
        w->done += k;
        advance(w);
    }
    return POSENC_OK;
}

posenc_status posenc_writer_commit(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    if ((st = writer_start(w, err))) {
        writer_free(w);
        return st;
    }
    advance(w);
    if (w->cur < w->n) {
        st = posenc_seterr(err, POSENC_EINVAL,
                           "'%s': array '%s' is incomplete (%llu of %llu elements written)",
                           w->path, w->arrays[w->cur].name, (unsigned long long)w->done,
                           (unsigned long long)w->nelem[w->cur]);
        w->be->w_abort(w);
        writer_free(w);
        return st;
    }
    st = w->be->w_commit(w, err);
    writer_free(w);
    return st;
}

void posenc_writer_abort(posenc_writer *w)
{
    if (!w)
        return;
    if (w->started && w->be->w_abort)
        w->be->w_abort(w);
    writer_free(w);
}
