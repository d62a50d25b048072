/* safetensors.c: the safetensors format (read and write).
 *
 * Layout: 8-byte little-endian header length N, N bytes of UTF-8 JSON starting with '{' (may be
 * padded with spaces), then the byte buffer. Every entry is
 *   "name": {"dtype": "F32", "shape": [..], "data_offsets": [BEGIN, END]}
 * with offsets relative to the buffer, END exclusive. The reader enforces what the reference
 * implementation (huggingface/safetensors tensor.rs) enforces: header at most 100 MB, offsets
 * contiguous from 0 without holes or overlaps and covering the buffer exactly, END - BEGIN equal to
 * the tensor's byte size, no duplicate names, __metadata__ a string->string map. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "formats/io/backend.h"
#include "formats/io/strbuf.h"

#define ST_MAX_HEADER 100000000ULL /* MAX_HEADER_SIZE of the reference implementation */
#define ST_EXACT_MAX 9007199254740992.0 /* 2^53: JSON numbers are exact up to here */
#define ST_IO_BLOCK (4u << 20)

static const struct {
    const char *name;
    int dtype; /* posenc_dtype, or -1 when the spec knows it but posenc does not */
} st_dtypes[] = {
    { "F16", POSENC_DT_F16 }, { "BF16", POSENC_DT_BF16 }, { "F32", POSENC_DT_F32 },
    { "F64", POSENC_DT_F64 }, { "I32", POSENC_DT_I32 },   { "I64", POSENC_DT_I64 },
    { "U8", POSENC_DT_U8 },   { "BOOL", -1 },             { "F4", -1 },
    { "F6_E2M3", -1 },        { "F6_E3M2", -1 },          { "I8", -1 },
    { "F8_E5M2", -1 },        { "F8_E4M3", -1 },          { "F8_E8M0", -1 },
    { "F8_E4M3FNUZ", -1 },    { "F8_E5M2FNUZ", -1 },      { "I16", -1 },
    { "U16", -1 },            { "U32", -1 },              { "C64", -1 },
    { "U64", -1 },
};

static const char *st_dtype_name(posenc_dtype dt)
{
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (st_dtypes[i].dtype == (int)dt)
            return st_dtypes[i].name;
    return NULL;
}

/* ---------------------------------------------------------------- reading */

typedef struct st_entry {
    posenc_array_info info;
    uint64_t begin, end; /* relative to the buffer */
} st_entry;

typedef struct st_file {
    uint64_t data_start; /* absolute offset of the byte buffer */
    uint64_t *offsets;   /* absolute offset of each array, indexed like c->arrays */
} st_file;

/* A JSON number that must be an integer in [0, 2^53]. */
static int get_u53(const cJSON *item, uint64_t *out)
{
    if (!cJSON_IsNumber(item))
        return -1;
    double d = item->valuedouble;
    if (!(d >= 0) || d > ST_EXACT_MAX || d != (double)(uint64_t)d)
        return -1;
    *out = (uint64_t)d;
    return 0;
}

static int utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t len;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            len = 2;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            len = 3;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (n - i < len)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += len;
    }
    return 1;
}

static int cmp_name(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

static int cmp_offsets(const void *a, const void *b)
{
    const st_entry *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return 0;
}

/* __metadata__ (string -> string) as a JSON object; values that are valid JSON texts are kept as
 * JSON values, the rest become strings. */
static posenc_status parse_metadata(const cJSON *md, const char *path, char **out,
                                    posenc_error *err)
{
    if (!cJSON_IsObject(md))
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': __metadata__ is not an object", path);
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    for (const cJSON *m = md->child; m; m = m->next) {
        if (!cJSON_IsString(m)) {
            cJSON_Delete(obj);
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': __metadata__ value of '%.64s' is not a string", path,
                                 m->string);
        }
        const char *end = NULL;
        cJSON *v = cJSON_ParseWithOpts(m->valuestring, &end, 1);
        if (!v)
            v = cJSON_CreateString(m->valuestring);
        if (!v || !cJSON_AddItemToObject(obj, m->string, v)) {
            cJSON_Delete(v);
            cJSON_Delete(obj);
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        }
    }
    char *text = cJSON_PrintUnformatted(obj);
    cJSON_Delete(obj);
    if (!text)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    *out = text;
    return POSENC_OK;
}

/* One header entry: dtype, shape and data_offsets, checked. */
static posenc_status parse_entry(const cJSON *e, const char *path, st_entry *out,
                                 posenc_error *err)
{
    const char *name = e->string;
    memset(out, 0, sizeof *out);
    if (strlen(name) >= POSENC_NAME_MAX)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "'%s': tensor name '%.64s...' is longer than %d bytes", path, name,
                             POSENC_NAME_MAX - 1);
    strcpy(out->info.name, name);
    if (!cJSON_IsObject(e))
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': entry '%.64s' is not an object", path,
                             name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dt))
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%.64s' has no dtype string",
                             path, name);
    int found = 0;
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++) {
        if (strcmp(dt->valuestring, st_dtypes[i].name) != 0)
            continue;
        if (st_dtypes[i].dtype < 0)
            return posenc_seterr(err, POSENC_EUNSUPPORTED,
                                 "'%s': tensor '%.64s' has dtype %s, which posenc does not "
                                 "support",
                                 path, name, st_dtypes[i].name);
        out->info.dtype = (posenc_dtype)st_dtypes[i].dtype;
        found = 1;
        break;
    }
    if (!found)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%.64s' has unknown dtype '%.32s'",
                             path, name, dt->valuestring);
    if (!cJSON_IsArray(shape))
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%.64s' has no shape list", path,
                             name);
    int nd = cJSON_GetArraySize(shape);
    if (nd > POSENC_MAX_DIMS)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "'%s': tensor '%.64s' has %d dimensions (at most %d)", path, name, nd,
                             POSENC_MAX_DIMS);
    out->info.ndim = nd;
    int k = 0;
    for (const cJSON *d = shape->child; d; d = d->next, k++) {
        uint64_t v;
        if (get_u53(d, &v) != 0 || v > (uint64_t)INT64_MAX)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': tensor '%.64s' has an invalid dimension", path, name);
        out->info.shape[k] = (int64_t)v;
    }
    uint64_t nbytes;
    posenc_error e2;
    if (posenc_shape_size(nd, out->info.shape, out->info.dtype, NULL, &nbytes, &e2) != POSENC_OK)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%.64s': %s", path, name, e2.msg);
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
        get_u53(offs->child, &out->begin) != 0 || get_u53(offs->child->next, &out->end) != 0)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': tensor '%.64s' has invalid data_offsets", path, name);
    if (out->end < out->begin || out->end - out->begin != nbytes)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': tensor '%.64s': data_offsets [%" PRIu64 ", %" PRIu64
                             "] do not span its %" PRIu64 " bytes",
                             path, name, out->begin, out->end, nbytes);
    return POSENC_OK;
}

static posenc_status st_open(posenc_container *c, posenc_error *err)
{
    const char *path = c->path;
    posenc_status st = POSENC_OK;
    char *hdr = NULL;
    cJSON *root = NULL;
    const cJSON **items = NULL;
    st_entry *ents = NULL;
    st_file *sf = NULL;
    posenc_array_info *arrays = NULL;
    char *meta = NULL;
    size_t n = 0;

    FILE *fp;
    posenc_status ost = pe_open_input(path, 0, &fp, err);
    if (ost != POSENC_OK)
        return ost;
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': not a regular file", path);
        goto out;
    }
    uint64_t fsize = (uint64_t)sb.st_size;
    unsigned char lenb[8];
    if (fsize < 8 || fread(lenb, 1, 8, fp) != 8) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': truncated safetensors header length",
                           path);
        goto out;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | lenb[i];
    if (hlen > ST_MAX_HEADER) {
        st = posenc_seterr(err, POSENC_EFORMAT,
                           "'%s': safetensors header length %" PRIu64 " exceeds 100 MB", path,
                           hlen);
        goto out;
    }
    if (hlen > fsize - 8) {
        st = posenc_seterr(err, POSENC_EFORMAT,
                           "'%s': safetensors header length %" PRIu64
                           " runs past the end of the file (%" PRIu64 " bytes)",
                           path, hlen, fsize);
        goto out;
    }
    hdr = malloc(hlen + 1);
    if (!hdr) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    if (fread(hdr, 1, hlen, fp) != hlen) {
        st = posenc_seterr(err, POSENC_EIO, "'%s': read error", path);
        goto out;
    }
    hdr[hlen] = '\0';
    if (hlen == 0 || hdr[0] != '{') {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': safetensors header does not start with '{'",
                           path);
        goto out;
    }
    if (!utf8_valid((const unsigned char *)hdr, hlen)) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': safetensors header is not valid UTF-8",
                           path);
        goto out;
    }
    const char *end = NULL;
    root = cJSON_ParseWithLengthOpts(hdr, hlen, &end, 0);
    if (!root) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': safetensors header is not valid JSON",
                           path);
        goto out;
    }
    /* the spec pads with spaces; serde_json, which the reference reader uses, also takes any
     * other JSON whitespace after the object */
    for (const char *p = end; p < hdr + hlen; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': trailing bytes after the safetensors header", path);
            goto out;
        }
    if (!cJSON_IsObject(root)) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': safetensors header is not an object",
                           path);
        goto out;
    }
    /* duplicates: sort the keys and compare neighbours */
    size_t nkeys = 0;
    for (const cJSON *e = root->child; e; e = e->next)
        nkeys++;
    items = malloc((nkeys ? nkeys : 1) * sizeof *items);
    ents = malloc((nkeys ? nkeys : 1) * sizeof *ents);
    if (!items || !ents) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    nkeys = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (!e->string) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': malformed safetensors header", path);
            goto out;
        }
        items[nkeys++] = e;
    }
    qsort(items, nkeys, sizeof *items, cmp_name);
    for (size_t i = 1; i < nkeys; i++)
        if (strcmp(items[i - 1]->string, items[i]->string) == 0) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': duplicate tensor name '%.64s'", path,
                               items[i]->string);
            goto out;
        }
    for (const cJSON *e = root->child; e; e = e->next) {
        if (strcmp(e->string, "__metadata__") == 0) {
            if ((st = parse_metadata(e, path, &meta, err)) != POSENC_OK)
                goto out;
            continue;
        }
        if ((st = parse_entry(e, path, &ents[n], err)) != POSENC_OK)
            goto out;
        n++;
    }
    /* offsets: contiguous from 0, no holes or overlaps, covering the buffer exactly */
    qsort(ents, n, sizeof *ents, cmp_offsets);
    uint64_t bufsize = fsize - 8 - hlen, pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (ents[i].begin != pos) {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': tensor '%.64s' starts at byte %" PRIu64 " of the buffer, "
                               "expected %" PRIu64 " (%s)",
                               path, ents[i].info.name, ents[i].begin, pos,
                               ents[i].begin > pos ? "hole" : "overlap");
            goto out;
        }
        pos = ents[i].end;
        if (pos > bufsize) {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': tensor '%.64s' ends at byte %" PRIu64
                               ", past the end of the %" PRIu64 "-byte buffer",
                               path, ents[i].info.name, pos, bufsize);
            goto out;
        }
    }
    if (pos != bufsize) {
        st = posenc_seterr(err, POSENC_EFORMAT,
                           "'%s': tensors cover %" PRIu64 " of the %" PRIu64
                           " buffer bytes (incomplete buffer)",
                           path, pos, bufsize);
        goto out;
    }
    arrays = malloc((n ? n : 1) * sizeof *arrays);
    sf = calloc(1, sizeof *sf);
    if (sf)
        sf->offsets = malloc((n ? n : 1) * sizeof *sf->offsets);
    if (!arrays || !sf || !sf->offsets) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    sf->data_start = 8 + hlen;
    for (size_t i = 0; i < n; i++) {
        arrays[i] = ents[i].info;
        sf->offsets[i] = sf->data_start + ents[i].begin;
    }
    c->n = n;
    c->arrays = arrays;
    c->meta = meta;
    c->impl = sf;
    arrays = NULL;
    meta = NULL;
    sf = NULL;
out:
    if (sf)
        free(sf->offsets);
    free(sf);
    free(arrays);
    free(meta);
    free(items);
    free(ents);
    cJSON_Delete(root);
    free(hdr);
    fclose(fp);
    return st;
}

static void st_close(posenc_container *c)
{
    st_file *sf = c->impl;
    if (sf)
        free(sf->offsets);
    free(sf);
    c->impl = NULL;
}

static posenc_status st_reader_open(posenc_reader *r, posenc_error *err)
{
    st_file *sf = r->c->impl;
    return pe_span_open(r, r->c->path, sf->offsets[r->index], err);
}

static posenc_status st_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err)
{
    return pe_span_read(r, buf, nelem, "tensor", err);
}

/* ---------------------------------------------------------------- writing */

typedef struct st_writer {
    char *tmp;
    FILE *fp;
    size_t cur;    /* our own cursor over w->arrays */
    uint64_t done; /* elements of arrays[cur] written */
    unsigned char *swap;
    pe_writeout wo;
} st_writer;

static void st_writer_free(posenc_writer *w, int remove_tmp)
{
    st_writer *sw = w->impl;
    if (!sw)
        return;
    if (remove_tmp)
        pe_tmp_discard(sw->fp, sw->tmp);
    free(sw->tmp);
    free(sw->swap);
    free(sw);
    w->impl = NULL;
}

static posenc_status st_w_start(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    pe_strbuf b = { 0 };
    st_writer *sw = calloc(1, sizeof *sw);
    if (!sw)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    w->impl = sw;
    pe_strbuf_puts(&b, "{");
    int first = 1;
    if (w->nmeta > 0) {
        pe_strbuf_puts(&b, "\"__metadata__\":{");
        for (size_t i = 0; i < w->nmeta; i++) {
            if (i)
                pe_strbuf_puts(&b, ",");
            pe_strbuf_json_string(&b, w->meta_keys[i]);
            pe_strbuf_puts(&b, ":");
            /* safetensors holds strings only: a string as its plain text ("half", not
             * "\"half\""), anything else as its JSON text ("1e7", "[0, 1]"). A string whose
             * plain text would read back as another JSON value ("123", "true") keeps its
             * quotes, since parse_metadata takes a value that parses as JSON for that value. */
            cJSON *v = cJSON_Parse(w->meta_vals[i]);
            const char *end = NULL;
            cJSON *again = cJSON_IsString(v) ? cJSON_ParseWithOpts(v->valuestring, &end, 1)
                                             : NULL;
            pe_strbuf_json_string(&b, cJSON_IsString(v) && !again ? v->valuestring
                                                                      : w->meta_vals[i]);
            cJSON_Delete(again);
            cJSON_Delete(v);
        }
        pe_strbuf_puts(&b, "}");
        first = 0;
    }
    uint64_t off = 0;
    for (size_t i = 0; i < w->n; i++) {
        const posenc_array_info *a = &w->arrays[i];
        const char *dn = st_dtype_name(a->dtype);
        uint64_t nbytes;
        if (!dn) {
            st = posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': dtype %s cannot be stored", w->path,
                               posenc_dtype_name(a->dtype));
            goto fail;
        }
        if ((st = posenc_shape_size(a->ndim, a->shape, a->dtype, NULL, &nbytes, err)) != POSENC_OK)
            goto fail;
        if (!first)
            pe_strbuf_puts(&b, ",");
        first = 0;
        pe_strbuf_json_string(&b, a->name);
        pe_strbuf_puts(&b, ":{\"dtype\":\"");
        pe_strbuf_puts(&b, dn);
        pe_strbuf_puts(&b, "\",\"shape\":[");
        for (int k = 0; k < a->ndim; k++) {
            if (k)
                pe_strbuf_puts(&b, ",");
            pe_strbuf_printf(&b, "%" PRIu64, (uint64_t)a->shape[k]);
        }
        pe_strbuf_puts(&b, "],\"data_offsets\":[");
        pe_strbuf_printf(&b, "%" PRIu64, off);
        pe_strbuf_puts(&b, ",");
        if (nbytes > UINT64_MAX - off) {
            st = posenc_seterr(err, POSENC_ERANGE, "'%s': total size overflows", w->path);
            goto fail;
        }
        off += nbytes;
        pe_strbuf_printf(&b, "%" PRIu64, off);
        pe_strbuf_puts(&b, "]}");
    }
    pe_strbuf_puts(&b, "}");
    while (!b.oom && b.len % 8 != 0)
        pe_strbuf_puts(&b, " ");
    if (b.oom) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    if ((st = pe_tmp_create(w->path, &sw->tmp, &sw->fp, err)) != POSENC_OK)
        goto fail;
    setvbuf(sw->fp, NULL, _IOFBF, 1u << 20);
    unsigned char lenb[8];
    for (int i = 0; i < 8; i++)
        lenb[i] = (unsigned char)((uint64_t)b.len >> (8 * i));
    if ((st = pe_write_exact(sw->fp, lenb, 8, w->path, err)) != POSENC_OK ||
        (st = pe_write_exact(sw->fp, b.p, b.len, w->path, err)) != POSENC_OK)
        goto fail;
    free(b.p);
    return POSENC_OK;
fail:
    free(b.p);
    st_writer_free(w, 1);
    return st;
}

static posenc_status st_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                posenc_error *err)
{
    st_writer *sw = w->impl;
    const unsigned char *p = data;
    while (nelem > 0) {
        while (sw->cur < w->n && sw->done >= w->nelem[sw->cur]) {
            sw->cur++;
            sw->done = 0;
        }
        if (sw->cur >= w->n)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': more data than declared", w->path);
        uint64_t take = w->nelem[sw->cur] - sw->done;
        if (take > nelem)
            take = nelem;
        size_t es = posenc_dtype_size(w->arrays[sw->cur].dtype);
        if (pe_host_is_le() || es == 1) {
            posenc_status st = pe_write_exact(sw->fp, p, (size_t)(take * es), w->path, err);
            if (st != POSENC_OK)
                return st;
        } else {
            if (!sw->swap && !(sw->swap = malloc(ST_IO_BLOCK)))
                return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            for (uint64_t k = 0; k < take;) {
                size_t m = ST_IO_BLOCK / es;
                if (m > take - k)
                    m = (size_t)(take - k);
                memcpy(sw->swap, p + k * es, m * es);
                posenc_byteswap(sw->swap, es, m);
                posenc_status st = pe_write_exact(sw->fp, sw->swap, m * es, w->path, err);
                if (st != POSENC_OK)
                    return st;
                k += m;
            }
        }
        if (sw->tmp)
            pe_tmp_writeout(sw->fp, &sw->wo, take * es);
        p += take * es;
        nelem -= take;
        sw->done += take;
    }
    return POSENC_OK;
}

static posenc_status st_w_commit(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    if (!w->impl && (st = st_w_start(w, err)) != POSENC_OK)
        return st;
    st_writer *sw = w->impl;
    st = pe_tmp_commit(sw->fp, sw->tmp, w->path, err);
    sw->fp = NULL; /* closed by pe_tmp_commit either way */
    st_writer_free(w, st != POSENC_OK);
    return st;
}

static void st_w_abort(posenc_writer *w) { st_writer_free(w, 1); }

const pe_backend pe_backend_safetensors = {
    .format = POSENC_FMT_SAFETENSORS,
    .open = st_open,
    .reader_open = st_reader_open,
    .read = st_read,
    .reader_close = pe_span_close,
    .close = st_close,
    .w_start = st_w_start,
    .w_write = st_w_write,
    .w_commit = st_w_commit,
    .w_abort = st_w_abort,
};
