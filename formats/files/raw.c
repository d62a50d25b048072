/* raw.c: raw little-endian arrays in OUT.bin described by a JSON sidecar OUT.json.
 *
 * OUT.bin holds the arrays back to back, each starting at a 64-byte aligned offset (zero bytes
 * between them). OUT.json is
 *   {"format": "posenc-raw", "version": 1,
 *    "arrays": [{"name": "cos", "dtype": "f32", "shape": [4096, 128], "offset": 0,
 *                "nbytes": 2097152}, ...],
 *    "metadata": {...}}
 * Opening either X.bin or X.json finds the other (same stem; a path with neither extension gets
 * PATH.json as its sidecar). Both files are written to temporary files and committed as one
 * unit (pe_tmp_group_begin): both are replaced, or neither. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "formats/io/backend.h"
#include "formats/io/inputs.h"
#include "formats/io/jsondup.h"

#define RAW_ALIGN 64
#define RAW_EXACT_MAX 9007199254740992.0 /* 2^53 */
#define RAW_SWAP_BLOCK (1u << 20)

static int ends_with(const char *s, const char *ext)
{
    size_t n = strlen(s), m = strlen(ext);
    return n > m && strcasecmp(s + n - m, ext) == 0;
}

static char *concat(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    char *s = malloc(alen + blen + 1);
    if (s) {
        memcpy(s, a, alen);
        memcpy(s + alen, b, blen + 1);
    }
    return s;
}

/* The data and sidecar paths for path (either one); both malloc'd. */
posenc_status pe_raw_paths(const char *path, char **bin, char **json, posenc_error *err)
{
    size_t n = strlen(path);
    if (ends_with(path, ".json")) {
        *bin = concat(path, n - 5, ".bin");
        *json = strdup(path);
    } else if (ends_with(path, ".bin")) {
        *bin = strdup(path);
        *json = concat(path, n - 4, ".json");
    } else {
        *bin = strdup(path);
        *json = concat(path, n, ".json");
    }
    if (!*bin || !*json) {
        free(*bin);
        free(*json);
        *bin = *json = NULL;
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    return POSENC_OK;
}

/* ---------------------------------------------------------------- reading */

typedef struct raw_file {
    char *bin;
    uint64_t *offsets;
} raw_file;

static int get_u53(const cJSON *item, uint64_t *out)
{
    if (!cJSON_IsNumber(item))
        return -1;
    double d = item->valuedouble;
    if (!(d >= 0) || d > RAW_EXACT_MAX || d != (double)(uint64_t)d)
        return -1;
    *out = (uint64_t)d;
    return 0;
}

static int cmp_info_name(const void *a, const void *b)
{
    const posenc_array_info *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

static void raw_close(posenc_container *c)
{
    raw_file *rf = c->impl;
    if (rf) {
        free(rf->bin);
        free(rf->offsets);
        free(rf);
    }
    c->impl = NULL;
}

static posenc_status parse_array(const cJSON *e, size_t i, const char *json, uint64_t binsize,
                                 const char *bin, posenc_array_info *a, uint64_t *offset,
                                 posenc_error *err)
{
    memset(a, 0, sizeof *a);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "offset");
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(e, "nbytes");
    if (!cJSON_IsObject(e) || !cJSON_IsString(name))
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': arrays[%zu] has no name", json, i);
    if (strlen(name->valuestring) >= POSENC_NAME_MAX)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': arrays[%zu] has a name over %d bytes",
                             json, i, POSENC_NAME_MAX - 1);
    strcpy(a->name, name->valuestring);
    posenc_error e2;
    if (!cJSON_IsString(dtype) || posenc_dtype_parse(dtype->valuestring, &a->dtype, &e2))
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': array '%s' has an invalid dtype", json,
                             a->name);
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > POSENC_MAX_DIMS)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': array '%s' has an invalid shape", json,
                             a->name);
    for (const cJSON *d = shape->child; d; d = d->next) {
        uint64_t v;
        if (get_u53(d, &v) != 0)
            return posenc_seterr(err, POSENC_EFORMAT, "'%s': array '%s' has an invalid shape",
                                 json, a->name);
        a->shape[a->ndim++] = (int64_t)v;
    }
    uint64_t want, o, n;
    if (posenc_shape_size(a->ndim, a->shape, a->dtype, NULL, &want, &e2) != POSENC_OK)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': array '%s': %s", json, a->name, e2.msg);
    if (get_u53(off, &o) != 0 || get_u53(nb, &n) != 0)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': array '%s' has an invalid offset or nbytes",
                             json, a->name);
    if (n != want)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': array '%s' has nbytes %" PRIu64 " but its shape needs %" PRIu64,
                             json, a->name, n, want);
    if (o > binsize || n > binsize - o)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': array '%s' (bytes %" PRIu64 "..%" PRIu64
                             ") lies past the end of the file (%" PRIu64 " bytes)",
                             bin, a->name, o, o + n, binsize);
    *offset = o;
    return POSENC_OK;
}

static posenc_status raw_open(posenc_container *c, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    char *bin = NULL, *json = NULL, *text = NULL;
    cJSON *root = NULL;
    raw_file *rf = NULL;
    posenc_array_info *arrays = NULL;
    const posenc_array_info **sorted = NULL;
    char *meta = NULL;
    FILE *fp = NULL;
    size_t n = 0;

    if ((st = pe_raw_paths(c->path, &bin, &json, err)) != POSENC_OK)
        return st;
    pe_input_add(bin); /* opened later by the reader; never an output of this run */
    posenc_error oe = { 0 };
    if (pe_open_input(json, 1, &fp, &oe) != POSENC_OK) {
        /* "cannot open 'x.json': ..." reads better naming the sidecar */
        st = oe.code == POSENC_EIO ? posenc_seterr(err, POSENC_EIO, "cannot open sidecar %s",
                                                   oe.msg + sizeof "cannot open " - 1)
                                   : posenc_seterr(err, oe.code, "%s", oe.msg);
        goto out;
    }
    size_t len;
    if ((st = pe_meta_read(fp, json, "sidecar", &text, &len, err)) != POSENC_OK)
        goto out;
    fclose(fp);
    fp = NULL;
    root = cJSON_ParseWithLength(text, len);
    if (pe_json_last_wins(root, NULL, 0) < 0) { /* a repeated key: the last, as Python's json */
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "arrays");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    if (!cJSON_IsObject(root) || !cJSON_IsString(fmt) ||
        strcmp(fmt->valuestring, "posenc-raw") != 0) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': not a posenc-raw sidecar", json);
        goto out;
    }
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
        st = posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': unsupported posenc-raw version",
                           json);
        goto out;
    }
    if (!cJSON_IsArray(arr)) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': \"arrays\" is not a list", json);
        goto out;
    }
    if (md && !cJSON_IsNull(md)) {
        if (!cJSON_IsObject(md)) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': \"metadata\" is not an object", json);
            goto out;
        }
        if (!(meta = cJSON_PrintUnformatted(md))) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            goto out;
        }
    }
    struct stat sb;
    if (stat(bin, &sb) != 0) {
        st = posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", bin, strerror(errno));
        goto out;
    }
    uint64_t binsize = (uint64_t)sb.st_size;
    size_t count = (size_t)cJSON_GetArraySize(arr);
    if (count > PE_META_MAX / (sizeof *arrays + sizeof *sorted + sizeof *rf->offsets)) {
        st = posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': %zu arrays take more than %zu MiB "
                           "of metadata; posenc reads at most that", json, count,
                           PE_META_MAX >> 20);
        goto out;
    }
    arrays = malloc((count ? count : 1) * sizeof *arrays);
    sorted = malloc((count ? count : 1) * sizeof *sorted);
    rf = calloc(1, sizeof *rf);
    if (rf)
        rf->offsets = malloc((count ? count : 1) * sizeof *rf->offsets);
    if (!arrays || !sorted || !rf || !rf->offsets) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    for (const cJSON *e = arr->child; e && n < count; e = e->next, n++)
        if ((st = parse_array(e, n, json, binsize, bin, &arrays[n], &rf->offsets[n], err)) !=
            POSENC_OK)
            goto out;
    for (size_t i = 0; i < n; i++)
        sorted[i] = &arrays[i];
    qsort(sorted, n, sizeof *sorted, cmp_info_name);
    for (size_t i = 1; i < n; i++)
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': duplicate array name '%s'", json,
                               sorted[i]->name);
            goto out;
        }
    rf->bin = bin;
    bin = NULL;
    c->n = n;
    c->arrays = arrays;
    c->meta = meta;
    c->impl = rf;
    arrays = NULL;
    meta = NULL;
    rf = NULL;
out:
    if (fp)
        fclose(fp);
    if (rf) {
        free(rf->offsets);
        free(rf);
    }
    free(sorted);
    free(arrays);
    free(meta);
    cJSON_Delete(root);
    free(text);
    free(bin);
    free(json);
    return st;
}

static posenc_status raw_reader_open(posenc_reader *r, posenc_error *err)
{
    raw_file *rf = r->c->impl;
    return pe_span_open(r, rf->bin, rf->offsets[r->index], err);
}

static posenc_status raw_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err)
{
    return pe_span_read(r, buf, nelem, "array", err);
}

/* ---------------------------------------------------------------- writing */

typedef struct raw_writer {
    char *bin, *json;
    char *tmp;
    FILE *fp;
    uint64_t *offsets;
    uint64_t pos; /* bytes written to the .bin */
    size_t cur;
    uint64_t done;
    unsigned char *swap;
    pe_writeout wo;
} raw_writer;

static void raw_writer_free(posenc_writer *w, int remove_tmp)
{
    raw_writer *rw = w->impl;
    if (!rw)
        return;
    if (remove_tmp)
        pe_tmp_discard(rw->fp, rw->tmp);
    free(rw->bin);
    free(rw->json);
    free(rw->tmp);
    free(rw->offsets);
    free(rw->swap);
    free(rw);
    w->impl = NULL;
}

static posenc_status raw_w_start(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    raw_writer *rw = calloc(1, sizeof *rw);
    if (!rw)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    w->impl = rw;
    if ((st = pe_raw_paths(w->path, &rw->bin, &rw->json, err)) != POSENC_OK)
        goto fail;
    rw->offsets = malloc((w->n ? w->n : 1) * sizeof *rw->offsets);
    if (!rw->offsets) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    uint64_t off = 0;
    for (size_t i = 0; i < w->n; i++) {
        uint64_t nb;
        if ((st = posenc_shape_size(w->arrays[i].ndim, w->arrays[i].shape, w->arrays[i].dtype,
                                    NULL, &nb, err)) != POSENC_OK)
            goto fail;
        off = (off + RAW_ALIGN - 1) / RAW_ALIGN * RAW_ALIGN;
        rw->offsets[i] = off;
        if (nb > (uint64_t)RAW_EXACT_MAX - off) {
            st = posenc_seterr(err, POSENC_ERANGE, "'%s': arrays exceed 2^53 bytes", w->path);
            goto fail;
        }
        off += nb;
    }
    if ((st = pe_tmp_create(rw->bin, &rw->tmp, &rw->fp, err)) != POSENC_OK)
        goto fail;
    setvbuf(rw->fp, NULL, _IOFBF, 1u << 20);
    return POSENC_OK;
fail:
    raw_writer_free(w, 1);
    return st;
}

static posenc_status pad_to(raw_writer *rw, uint64_t target, const char *path, posenc_error *err)
{
    static const unsigned char zeros[RAW_ALIGN];
    while (rw->pos < target) {
        size_t k = target - rw->pos < RAW_ALIGN ? (size_t)(target - rw->pos) : RAW_ALIGN;
        posenc_status st = pe_write_exact(rw->fp, zeros, k, path, err);
        if (st != POSENC_OK)
            return st;
        rw->pos += k;
    }
    return POSENC_OK;
}

static posenc_status raw_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                 posenc_error *err)
{
    raw_writer *rw = w->impl;
    const unsigned char *p = data;
    posenc_status st;
    while (nelem > 0) {
        while (rw->cur < w->n && rw->done >= w->nelem[rw->cur]) {
            rw->cur++;
            rw->done = 0;
        }
        if (rw->cur >= w->n)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': more data than declared", w->path);
        size_t i = rw->cur;
        if (rw->done == 0 && (st = pad_to(rw, rw->offsets[i], rw->bin, err)) != POSENC_OK)
            return st;
        uint64_t take = w->nelem[i] - rw->done;
        if (take > nelem)
            take = nelem;
        size_t es = posenc_dtype_size(w->arrays[i].dtype);
        if (pe_host_is_le() || es == 1) {
            if ((st = pe_write_exact(rw->fp, p, (size_t)(take * es), rw->bin, err)) !=
                POSENC_OK)
                return st;
        } else {
            if (!rw->swap && !(rw->swap = malloc(RAW_SWAP_BLOCK)))
                return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            for (uint64_t k = 0; k < take;) {
                size_t m = RAW_SWAP_BLOCK / es;
                if (m > take - k)
                    m = (size_t)(take - k);
                memcpy(rw->swap, p + k * es, m * es);
                posenc_byteswap(rw->swap, es, m);
                if ((st = pe_write_exact(rw->fp, rw->swap, m * es, rw->bin, err)) !=
                    POSENC_OK)
                    return st;
                k += m;
            }
        }
        if (rw->tmp)
            pe_tmp_writeout(rw->fp, &rw->wo, take * es);
        rw->pos += take * es;
        p += take * es;
        nelem -= take;
        rw->done += take;
    }
    return POSENC_OK;
}

/* The sidecar text; malloc'd. */
static char *sidecar_text(const posenc_writer *w, const raw_writer *rw)
{
    char *text = NULL;
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_CreateArray();
    cJSON *md = cJSON_CreateObject();
    if (!root || !arr || !md) {
        cJSON_Delete(root);
        cJSON_Delete(arr);
        cJSON_Delete(md);
        return NULL;
    }
    cJSON_AddStringToObject(root, "format", "posenc-raw");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddItemToObject(root, "arrays", arr);
    for (size_t i = 0; i < w->n; i++) {
        const posenc_array_info *a = &w->arrays[i];
        cJSON *e = cJSON_CreateObject(), *shape = cJSON_CreateArray();
        if (!e || !shape) {
            cJSON_Delete(e);
            cJSON_Delete(shape);
            goto out;
        }
        cJSON_AddItemToArray(arr, e);
        cJSON_AddStringToObject(e, "name", a->name);
        cJSON_AddStringToObject(e, "dtype", posenc_dtype_name(a->dtype));
        for (int k = 0; k < a->ndim; k++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)a->shape[k]));
        cJSON_AddItemToObject(e, "shape", shape);
        cJSON_AddNumberToObject(e, "offset", (double)rw->offsets[i]);
        cJSON_AddNumberToObject(e, "nbytes",
                                (double)(w->nelem[i] * posenc_dtype_size(a->dtype)));
    }
    for (size_t i = 0; i < w->nmeta; i++) {
        cJSON *v = cJSON_Parse(w->meta_vals[i]);
        if (!v)
            v = cJSON_CreateString(w->meta_vals[i]);
        if (v)
            cJSON_AddItemToObject(md, w->meta_keys[i], v);
    }
    cJSON_AddItemToObject(root, "metadata", md);
    md = NULL;
    text = cJSON_Print(root);
out:
    cJSON_Delete(md);
    cJSON_Delete(root);
    return text;
}

static posenc_status raw_w_commit(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    if (!w->impl && (st = raw_w_start(w, err)) != POSENC_OK)
        return st;
    raw_writer *rw = w->impl;
    char *jtmp = NULL;
    FILE *jfp = NULL;
    /* zero-sized trailing arrays still need their (aligned) offset inside the file */
    uint64_t end = 0;
    for (size_t i = 0; i < w->n; i++) {
        uint64_t e = rw->offsets[i] + w->nelem[i] * posenc_dtype_size(w->arrays[i].dtype);
        if (e > end)
            end = e;
    }
    char *text = sidecar_text(w, rw);
    if (!text) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    if ((st = pad_to(rw, end, rw->bin, err)) != POSENC_OK)
        goto fail;
    /* write the sidecar completely, then commit the pair as one unit */
    if ((st = pe_tmp_create(rw->json, &jtmp, &jfp, err)) != POSENC_OK ||
        (st = pe_write_exact(jfp, text, strlen(text), rw->json, err)) != POSENC_OK ||
        (st = pe_write_exact(jfp, "\n", 1, rw->json, err)) != POSENC_OK)
        goto fail;
    pe_tmp_group_begin();
    st = pe_tmp_commit(rw->fp, rw->tmp, rw->bin, err);
    rw->fp = NULL;
    free(rw->tmp);
    rw->tmp = NULL; /* the group's, or removed */
    if (st != POSENC_OK) {
        pe_tmp_group_abort();
        goto fail;
    }
    st = pe_tmp_commit(jfp, jtmp, rw->json, err);
    jfp = NULL;
    free(jtmp);
    jtmp = NULL;
    if (st != POSENC_OK) {
        pe_tmp_group_abort();
        goto fail;
    }
    st = pe_tmp_group_end(err);
    free(text);
    raw_writer_free(w, 0);
    return st;
fail:
    if (jtmp)
        pe_tmp_discard(jfp, jtmp);
    free(jtmp);
    free(text);
    raw_writer_free(w, 1);
    return st;
}

static void raw_w_abort(posenc_writer *w) { raw_writer_free(w, 1); }

const pe_backend pe_backend_raw = {
    .format = POSENC_FMT_RAW,
    .open = raw_open,
    .reader_open = raw_reader_open,
    .read = raw_read,
    .reader_close = pe_span_close,
    .close = raw_close,
    .w_start = raw_w_start,
    .w_write = raw_w_write,
    .w_commit = raw_w_commit,
    .w_abort = raw_w_abort,
};
