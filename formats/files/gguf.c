/* gguf.c: reading llama.cpp's GGUF model files, versions 2 and 3, little-endian (gguf_write.c
 * writes them).
 *
 * Layout (ggml-org/ggml docs/gguf.md; the reader to agree with is gguf_init_from_reader in
 * ggml/src/gguf.cpp): "GGUF", uint32 version, uint64 tensor count, uint64 key-value count; the
 * key-value pairs (string key, uint32 value type, value); the tensor infos (string name, uint32
 * n_dims, n_dims uint64 dimensions innermost first, uint32 ggml type, uint64 offset relative to
 * the data section); padding to general.alignment (uint32, a power of two, default 32); the data
 * section. A string is a uint64 length and that many bytes (no NUL); an array is a uint32
 * element type, a uint64 count and the elements, which may themselves be arrays.
 *
 * Tensors are presented in C order: ggml's ne = [64, 32] (ne[0] varies fastest) is shape
 * (32, 64), as gguf-py's GGUFReader and numpy show it. F32, F16, BF16, F64, I32 and I64 data is
 * read; quantized tensors are listed (dtype u8 as a placeholder, their ggml type name through
 * posenc_container_array_type) and refused as data.
 *
 * Every count, length, dimension and offset is checked against the bytes left in the file before
 * anything is allocated for it. Metadata becomes a JSON object text (c->meta) and a second object
 * naming each key's GGUF type (c->meta_types). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/io/backend.h"
#include "formats/io/strbuf.h"

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4          /* GGML_MAX_DIMS */
#define GGUF_MAX_DEPTH 8         /* nesting of arrays of arrays */
#define GGUF_MAX_VALUES (1u << 24) /* metadata values in all (real models hold ~2 million) */
#define GGUF_META_MAX ((size_t)64 << 20) /* bytes of metadata as JSON text (posenc-formats(5)) */

enum {
    GT_UINT8 = 0, GT_INT8, GT_UINT16, GT_INT16, GT_UINT32, GT_INT32, GT_FLOAT32, GT_BOOL,
    GT_STRING, GT_ARRAY, GT_UINT64, GT_INT64, GT_FLOAT64, GT_COUNT
};

static const char *const gt_names[GT_COUNT] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool", "string", "array", "uint64", "int64", "float64",
};

/* smallest encoding of one value of each type (a string: its length; an array: type + count) */
static const unsigned gt_min[GT_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 8, 12, 8, 8, 8 };

/* ggml types: name, block size, bytes per block, posenc dtype (-1: listed, not read).
 * From GGML_QUANT_SIZES in gguf-py/gguf/constants.py (ggml type_traits in ggml/src/ggml.c). */
static const struct {
    const char *name;
    unsigned blck, size;
    int dtype;
} ggml_types[] = {
    [0] = { "F32", 1, 4, POSENC_DT_F32 },      [1] = { "F16", 1, 2, POSENC_DT_F16 },
    [2] = { "Q4_0", 32, 18, -1 },              [3] = { "Q4_1", 32, 20, -1 },
    [6] = { "Q5_0", 32, 22, -1 },              [7] = { "Q5_1", 32, 24, -1 },
    [8] = { "Q8_0", 32, 34, -1 },              [9] = { "Q8_1", 32, 40, -1 },
    [10] = { "Q2_K", 256, 84, -1 },            [11] = { "Q3_K", 256, 110, -1 },
    [12] = { "Q4_K", 256, 144, -1 },           [13] = { "Q5_K", 256, 176, -1 },
    [14] = { "Q6_K", 256, 210, -1 },           [15] = { "Q8_K", 256, 292, -1 },
    [16] = { "IQ2_XXS", 256, 66, -1 },         [17] = { "IQ2_XS", 256, 74, -1 },
    [18] = { "IQ3_XXS", 256, 98, -1 },         [19] = { "IQ1_S", 256, 50, -1 },
    [20] = { "IQ4_NL", 32, 18, -1 },           [21] = { "IQ3_S", 256, 110, -1 },
    [22] = { "IQ2_S", 256, 82, -1 },           [23] = { "IQ4_XS", 256, 136, -1 },
    [24] = { "I8", 1, 1, -1 },                 [25] = { "I16", 1, 2, -1 },
    [26] = { "I32", 1, 4, POSENC_DT_I32 },     [27] = { "I64", 1, 8, POSENC_DT_I64 },
    [28] = { "F64", 1, 8, POSENC_DT_F64 },     [29] = { "IQ1_M", 256, 56, -1 },
    [30] = { "BF16", 1, 2, POSENC_DT_BF16 },   [34] = { "TQ1_0", 256, 54, -1 },
    [35] = { "TQ2_0", 256, 66, -1 },           [39] = { "MXFP4", 32, 17, -1 },
    [40] = { "NVFP4", 64, 36, -1 },            [41] = { "Q1_0", 128, 18, -1 },
    [42] = { "Q2_0", 64, 18, -1 },
};
#define N_GGML_TYPES (sizeof ggml_types / sizeof ggml_types[0])

typedef struct gguf_tensor {
    uint64_t offset;  /* absolute */
    uint64_t nbytes;
    uint32_t type;
    size_t index;     /* in c->arrays */
} gguf_tensor;

typedef struct gguf_file {
    uint32_t version;
    uint64_t alignment, data_start;
    gguf_tensor *t;   /* indexed like c->arrays */
} gguf_file;

/* A bounded cursor over the file. */
typedef struct rd {
    FILE *fp;
    const char *path;
    uint64_t pos, size;
    uint64_t nvalues;
    posenc_error *err;
} rd;

static uint64_t left(const rd *r) { return r->size - r->pos; }

static posenc_status get(rd *r, void *buf, size_t n, const char *what)
{
    if (n > left(r))
        return posenc_seterr(r->err, POSENC_EFORMAT,
                             "'%s': truncated GGUF file (%s at byte %" PRIu64 " needs %zu bytes, "
                             "%" PRIu64 " left)",
                             r->path, what, r->pos, n, left(r));
    posenc_status st = pe_read_exact(r->fp, buf, n, r->path, what, r->err);
    if (st == POSENC_OK)
        r->pos += n;
    return st;
}

static uint64_t le(const unsigned char *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static posenc_status get_u32(rd *r, uint32_t *v, const char *what)
{
    unsigned char b[4];
    posenc_status st = get(r, b, 4, what);
    if (st == POSENC_OK)
        *v = (uint32_t)le(b, 4);
    return st;
}

static posenc_status get_u64(rd *r, uint64_t *v, const char *what)
{
    unsigned char b[8];
    posenc_status st = get(r, b, 8, what);
    if (st == POSENC_OK)
        *v = le(b, 8);
    return st;
}

static posenc_status meta_too_big(rd *r)
{
    return posenc_seterr(r->err, POSENC_EUNSUPPORTED, "'%s': metadata larger than %zu MiB; "
                         "posenc reads at most that", r->path, GGUF_META_MAX >> 20);
}

/* A GGUF string: malloc'd, NUL-terminated (*len bytes; may hold NULs). */
static posenc_status get_string(rd *r, char **out, uint64_t *len, const char *what)
{
    uint64_t n;
    posenc_status st = get_u64(r, &n, what);
    if (st != POSENC_OK)
        return st;
    if (n > left(r))
        return posenc_seterr(r->err, POSENC_EFORMAT,
                             "'%s': %s at byte %" PRIu64 " claims %" PRIu64
                             " bytes, past the end of the file",
                             r->path, what, r->pos - 8, n);
    if (n > GGUF_META_MAX)
        return meta_too_big(r);
    char *s = malloc((size_t)n + 1);
    if (!s)
        return posenc_seterr(r->err, POSENC_ENOMEM, "out of memory");
    if ((st = get(r, s, (size_t)n, what)) != POSENC_OK) {
        free(s);
        return st;
    }
    s[n] = '\0';
    *out = s;
    *len = n;
    return POSENC_OK;
}

/* s[0..n) as a JSON string: NULs and control characters escaped, bytes that are not UTF-8
 * become U+FFFD. */
static void json_bytes(pe_strbuf *b, const unsigned char *s, size_t n)
{
    pe_strbuf_add(b, "\"", 1);
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            char esc[2] = { '\\', (char)c };
            pe_strbuf_add(b, esc, 2);
            i++;
            continue;
        }
        if (c < 0x20) {
            pe_strbuf_printf(b, "\\u%04x", c);
            i++;
            continue;
        }
        if (c < 0x80) {
            pe_strbuf_add(b, (const char *)&s[i], 1);
            i++;
            continue;
        }
        size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        uint32_t cp = len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
        int ok = len != 0 && n - i >= len;
        for (size_t k = 1; ok && k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                ok = 0;
            else
                cp = (cp << 6) | (s[i + k] & 0x3fu);
        }
        if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
                   (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)))
            ok = 0;
        if (ok) {
            pe_strbuf_add(b, (const char *)&s[i], len);
            i += len;
        } else {
            pe_strbuf_add(b, "\xef\xbf\xbd", 3);
            i++;
        }
    }
    pe_strbuf_add(b, "\"", 1);
}

static void json_double(pe_strbuf *b, double d, int digits)
{
    if (!isfinite(d))
        pe_strbuf_puts(b, "null"); /* JSON has no NaN or infinity */
    else
        pe_strbuf_printf(b, "%.*g", digits, d);
}

static posenc_status count_value(rd *r, uint64_t n)
{
    if (n > GGUF_MAX_VALUES - r->nvalues)
        return posenc_seterr(r->err, POSENC_EUNSUPPORTED,
                             "'%s': metadata holds more than %u values", r->path, GGUF_MAX_VALUES);
    r->nvalues += n;
    return POSENC_OK;
}

/* One value of type t as JSON into v; its type name into ty (arrays: "array[uint32]"). For the
 * alignment key, *u32 gets the value when t is uint32. */
static posenc_status read_value(rd *r, uint32_t t, int depth, pe_strbuf *v, pe_strbuf *ty,
                                const char *key, uint32_t *u32)
{
    posenc_status st;
    unsigned char b[8];
    if (t >= GT_COUNT)
        return posenc_seterr(r->err, POSENC_EFORMAT, "'%s': key '%.64s' has unknown GGUF type %" PRIu32,
                             r->path, key, t);
    if (ty)
        pe_strbuf_puts(ty, gt_names[t]);
    if ((st = count_value(r, 1)) != POSENC_OK)
        return st;
    switch (t) {
    case GT_UINT8: case GT_INT8: case GT_UINT16: case GT_INT16: case GT_UINT32: case GT_INT32:
    case GT_UINT64: case GT_INT64: case GT_BOOL: {
        int n = (int)gt_min[t];
        if ((st = get(r, b, (size_t)n, "metadata value")) != POSENC_OK)
            return st;
        uint64_t x = le(b, n);
        if (t == GT_BOOL)
            pe_strbuf_puts(v, x ? "true" : "false");
        else if (t == GT_INT8 || t == GT_INT16 || t == GT_INT32 || t == GT_INT64) {
            int64_t s = n == 8 ? (int64_t)x : (int64_t)(x ^ (1ull << (8 * n - 1))) - (int64_t)(1ull << (8 * n - 1));
            pe_strbuf_printf(v, "%" PRId64, s);
        } else
            pe_strbuf_printf(v, "%" PRIu64, x);
        if (t == GT_UINT32 && u32)
            *u32 = (uint32_t)x;
        return POSENC_OK;
    }
    case GT_FLOAT32: {
        if ((st = get(r, b, 4, "metadata value")) != POSENC_OK)
            return st;
        uint32_t x = (uint32_t)le(b, 4);
        float f;
        memcpy(&f, &x, 4);
        json_double(v, f, 17); /* the float32's exact value as a double */
        return POSENC_OK;
    }
    case GT_FLOAT64: {
        if ((st = get(r, b, 8, "metadata value")) != POSENC_OK)
            return st;
        uint64_t x = le(b, 8);
        double d;
        memcpy(&d, &x, 8);
        json_double(v, d, 17);
        return POSENC_OK;
    }
    case GT_STRING: {
        char *s;
        uint64_t n;
        if ((st = get_string(r, &s, &n, "metadata string")) != POSENC_OK)
            return st;
        json_bytes(v, (const unsigned char *)s, (size_t)n);
        free(s);
        return POSENC_OK;
    }
    case GT_ARRAY: {
        uint32_t et;
        uint64_t n;
        if (depth >= GGUF_MAX_DEPTH)
            return posenc_seterr(r->err, POSENC_EFORMAT,
                                 "'%s': key '%.64s' nests arrays more than %d deep", r->path, key,
                                 GGUF_MAX_DEPTH);
        if ((st = get_u32(r, &et, "array type")) != POSENC_OK ||
            (st = get_u64(r, &n, "array length")) != POSENC_OK)
            return st;
        if (et >= GT_COUNT)
            return posenc_seterr(r->err, POSENC_EFORMAT,
                                 "'%s': key '%.64s' is an array of unknown GGUF type %" PRIu32,
                                 r->path, key, et);
        if (n > left(r) / gt_min[et])
            return posenc_seterr(r->err, POSENC_EFORMAT,
                                 "'%s': key '%.64s' claims %" PRIu64
                                 " array elements, more than the file holds",
                                 r->path, key, n);
        if ((st = count_value(r, 0)) != POSENC_OK)
            return st;
        if (ty) {
            pe_strbuf_puts(ty, "[");
            if (et != GT_ARRAY)
                pe_strbuf_puts(ty, gt_names[et]);
        }
        pe_strbuf_puts(v, "[");
        /* an array of arrays: each element carries its own type; name the first one's */
        for (uint64_t i = 0; i < n; i++) {
            if (i)
                pe_strbuf_puts(v, ",");
            if ((st = read_value(r, et, depth + 1, v, et == GT_ARRAY && i == 0 ? ty : NULL, key,
                                 NULL)) != POSENC_OK)
                return st;
            if (v->oom)
                return posenc_seterr(r->err, POSENC_ENOMEM, "out of memory");
            if (v->len > GGUF_META_MAX)
                return meta_too_big(r);
        }
        if (ty && et == GT_ARRAY && n == 0)
            pe_strbuf_puts(ty, "array");
        pe_strbuf_puts(v, "]");
        if (ty)
            pe_strbuf_puts(ty, "]");
        return POSENC_OK;
    }
    }
    return POSENC_OK;
}

typedef struct kv_key {
    char *s;
    size_t i;
} kv_key;

static int cmp_key(const void *a, const void *b)
{
    return strcmp(((const kv_key *)a)->s, ((const kv_key *)b)->s);
}

static int cmp_tensor_off(const void *a, const void *b)
{
    const gguf_tensor *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_name(const void *a, const void *b)
{
    const posenc_array_info *x = *(const posenc_array_info *const *)a;
    const posenc_array_info *y = *(const posenc_array_info *const *)b;
    return strcmp(x->name, y->name);
}

static posenc_status gguf_open(posenc_container *c, posenc_error *err)
{
    const char *path = c->path;
    posenc_status st = POSENC_OK;
    pe_strbuf meta = { 0 }, types = { 0 };
    kv_key *keys = NULL;
    uint64_t nkeys = 0;
    posenc_array_info *arrays = NULL;
    const posenc_array_info **byname = NULL;
    gguf_tensor *ts = NULL, *sorted = NULL;
    gguf_file *gf = NULL;
    char *name = NULL;

    FILE *fp;
    if ((st = pe_open_input(path, 0, &fp, err)) != POSENC_OK)
        return st;
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': not a regular file", path);
        goto out;
    }
    setvbuf(fp, NULL, _IOFBF, 1u << 16);
    rd r = { fp, path, 0, (uint64_t)sb.st_size, 0, err };
    unsigned char magic[4];
    uint32_t version;
    uint64_t n_tensors, n_kv;
    if ((st = get(&r, magic, 4, "magic")) != POSENC_OK)
        goto out;
    if (memcmp(magic, "GGUF", 4) != 0) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': not a GGUF file (no \"GGUF\" magic)", path);
        goto out;
    }
    if ((st = get_u32(&r, &version, "version")) != POSENC_OK)
        goto out;
    if (version != 0 && (version & 0xffffu) == 0) {
        st = posenc_seterr(err, POSENC_EUNSUPPORTED,
                           "'%s': big-endian GGUF file (version 0x%08" PRIx32
                           "); posenc reads little-endian GGUF only",
                           path, version);
        goto out;
    }
    if (version != 2 && version != 3) {
        st = posenc_seterr(err, version == 1 || version > 3 ? POSENC_EUNSUPPORTED : POSENC_EFORMAT,
                           "'%s': GGUF version %" PRIu32 "; posenc reads versions 2 and 3", path,
                           version);
        goto out;
    }
    if ((st = get_u64(&r, &n_tensors, "tensor count")) != POSENC_OK ||
        (st = get_u64(&r, &n_kv, "key-value count")) != POSENC_OK)
        goto out;
    /* a key-value pair takes at least 13 bytes (8-byte key length, type, a 1-byte value),
     * a tensor info at least 24 (8-byte length, n_dims, type, offset) */
    if (n_kv > left(&r) / 13) {
        st = posenc_seterr(err, POSENC_EFORMAT,
                           "'%s': GGUF header claims %" PRIu64 " metadata keys, more than the %" PRIu64
                           "-byte file can hold",
                           path, n_kv, r.size);
        goto out;
    }
    if (n_tensors > left(&r) / 24) {
        st = posenc_seterr(err, POSENC_EFORMAT,
                           "'%s': GGUF header claims %" PRIu64 " tensors, more than the %" PRIu64
                           "-byte file can hold",
                           path, n_tensors, r.size);
        goto out;
    }

    /* ---- metadata ---- */
    uint64_t alignment = GGUF_DEFAULT_ALIGNMENT;
    keys = malloc((size_t)(n_kv ? n_kv : 1) * sizeof *keys);
    if (!keys) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    pe_strbuf_puts(&meta, "{");
    pe_strbuf_puts(&types, "{");
    for (uint64_t i = 0; i < n_kv; i++) {
        uint64_t klen;
        uint32_t t, u32 = 0;
        if ((st = get_string(&r, &name, &klen, "metadata key")) != POSENC_OK)
            goto out;
        if (klen == 0 || memchr(name, '\0', (size_t)klen)) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': metadata key %" PRIu64 " is %s", path,
                               i, klen ? "not a string (holds a NUL byte)" : "empty");
            goto out;
        }
        keys[nkeys].s = name;
        keys[nkeys].i = (size_t)i;
        nkeys++;
        const char *key = name;
        name = NULL;
        if ((st = get_u32(&r, &t, "metadata type")) != POSENC_OK)
            goto out;
        if (i)
            pe_strbuf_puts(&meta, ","), pe_strbuf_puts(&types, ",");
        json_bytes(&meta, (const unsigned char *)key, (size_t)klen);
        json_bytes(&types, (const unsigned char *)key, (size_t)klen);
        pe_strbuf_puts(&meta, ":");
        pe_strbuf_puts(&types, ":\"");
        if ((st = read_value(&r, t, 0, &meta, &types, key, &u32)) != POSENC_OK)
            goto out;
        pe_strbuf_puts(&types, "\"");
        if (meta.len + types.len > GGUF_META_MAX) {
            st = meta_too_big(&r);
            goto out;
        }
        if (meta.oom || types.oom) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            goto out;
        }
        if (strcmp(key, "general.alignment") == 0) {
            if (t != GT_UINT32) {
                st = posenc_seterr(err, POSENC_EFORMAT,
                                   "'%s': general.alignment is %s, not uint32", path, gt_names[t]);
                goto out;
            }
            if (u32 == 0 || (u32 & (u32 - 1)) != 0) {
                st = posenc_seterr(err, POSENC_EFORMAT,
                                   "'%s': general.alignment %" PRIu32 " is not a power of two",
                                   path, u32);
                goto out;
            }
            alignment = u32;
        }
    }
    pe_strbuf_puts(&meta, "}");
    pe_strbuf_puts(&types, "}");
    if (meta.oom || types.oom) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    qsort(keys, (size_t)nkeys, sizeof *keys, cmp_key);
    for (uint64_t i = 1; i < nkeys; i++)
        if (strcmp(keys[i - 1].s, keys[i].s) == 0) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': duplicate metadata key '%.64s'", path,
                               keys[i].s);
            goto out;
        }

    /* ---- tensor infos ---- */
    if (n_tensors > GGUF_META_MAX / (sizeof(posenc_array_info) + sizeof(gguf_tensor))) {
        st = posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': %" PRIu64 " tensors take more than "
                           "%zu MiB of metadata; posenc reads at most that", path, n_tensors,
                           GGUF_META_MAX >> 20);
        goto out;
    }
    size_t nt = (size_t)n_tensors;
    arrays = calloc(nt ? nt : 1, sizeof *arrays);
    ts = calloc(nt ? nt : 1, sizeof *ts);
    gf = calloc(1, sizeof *gf);
    if (!arrays || !ts || !gf) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nt; i++) {
        uint64_t nlen;
        uint32_t nd, type;
        posenc_array_info *a = &arrays[i];
        if ((st = get_string(&r, &name, &nlen, "tensor name")) != POSENC_OK)
            goto out;
        if (memchr(name, '\0', (size_t)nlen)) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor %zu's name holds a NUL byte",
                               path, i);
            goto out;
        }
        if (nlen >= POSENC_NAME_MAX) {
            st = posenc_seterr(err, POSENC_EUNSUPPORTED,
                               "'%s': tensor name '%.64s...' is longer than %d bytes", path, name,
                               POSENC_NAME_MAX - 1);
            goto out;
        }
        memcpy(a->name, name, (size_t)nlen + 1);
        free(name);
        name = NULL;
        if ((st = get_u32(&r, &nd, "tensor n_dims")) != POSENC_OK)
            goto out;
        if (nd > GGUF_MAX_DIMS) {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': tensor '%.64s' has %" PRIu32 " dimensions (ggml allows %d)",
                               path, a->name, nd, GGUF_MAX_DIMS);
            goto out;
        }
        uint64_t ne[GGUF_MAX_DIMS];
        for (uint32_t d = 0; d < nd; d++) {
            if ((st = get_u64(&r, &ne[d], "tensor dimension")) != POSENC_OK)
                goto out;
            if (ne[d] > (uint64_t)INT64_MAX) {
                st = posenc_seterr(err, POSENC_EFORMAT,
                                   "'%s': tensor '%.64s' has a negative dimension", path, a->name);
                goto out;
            }
        }
        if ((st = get_u32(&r, &type, "tensor type")) != POSENC_OK ||
            (st = get_u64(&r, &ts[i].offset, "tensor offset")) != POSENC_OK)
            goto out;
        if (type >= N_GGML_TYPES || !ggml_types[type].name) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%.64s' has unknown ggml type %" PRIu32,
                               path, a->name, type);
            goto out;
        }
        a->ndim = (int)nd;
        for (uint32_t d = 0; d < nd; d++)
            a->shape[nd - 1 - d] = (int64_t)ne[d]; /* innermost last: C order */
        int dt = ggml_types[type].dtype;
        a->dtype = dt >= 0 ? (posenc_dtype)dt : POSENC_DT_U8;
        uint64_t nelem;
        posenc_error e2;
        if (posenc_shape_size(a->ndim, a->shape, POSENC_DT_U8, &nelem, NULL, &e2) != POSENC_OK) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%.64s': %s", path, a->name,
                               e2.msg);
            goto out;
        }
        unsigned blck = ggml_types[type].blck;
        uint64_t ne0 = nd ? ne[0] : 1;
        if (ne0 % blck != 0) {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': tensor '%.64s' of type %s has %" PRIu64
                               " elements per row, not a multiple of its block size %u",
                               path, a->name, ggml_types[type].name, ne0, blck);
            goto out;
        }
        uint64_t blocks = nelem / blck;
        if (blocks > UINT64_MAX / ggml_types[type].size) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%.64s' is too large", path,
                               a->name);
            goto out;
        }
        ts[i].nbytes = blocks * ggml_types[type].size;
        ts[i].type = type;
        ts[i].index = i;
        if (ts[i].offset % alignment != 0) {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': tensor '%.64s' at offset %" PRIu64
                               " is not aligned to %" PRIu64 " bytes",
                               path, a->name, ts[i].offset, alignment);
            goto out;
        }
    }
    /* duplicate names */
    byname = malloc((nt ? nt : 1) * sizeof *byname);
    if (!byname) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nt; i++)
        byname[i] = &arrays[i];
    qsort(byname, nt, sizeof *byname, cmp_name);
    for (size_t i = 1; i < nt; i++)
        if (strcmp(byname[i - 1]->name, byname[i]->name) == 0) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': duplicate tensor name '%.64s'", path,
                               byname[i]->name);
            goto out;
        }

    /* ---- data section: aligned start, every tensor inside the file, no overlaps ---- */
    uint64_t data_start = r.pos;
    if (data_start % alignment)
        data_start += alignment - data_start % alignment;
    if (nt > 0 && data_start > r.size) {
        st = posenc_seterr(err, POSENC_EFORMAT,
                           "'%s': truncated GGUF file (the data section would start at byte %" PRIu64
                           " of %" PRIu64 ")",
                           path, data_start, r.size);
        goto out;
    }
    uint64_t data_size = nt > 0 ? r.size - data_start : 0;
    for (size_t i = 0; i < nt; i++) {
        if (ts[i].offset > data_size || ts[i].nbytes > data_size - ts[i].offset) {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': tensor '%.64s' (%" PRIu64 " bytes at offset %" PRIu64
                               ") runs past the end of the %" PRIu64 "-byte data section",
                               path, arrays[i].name, ts[i].nbytes, ts[i].offset, data_size);
            goto out;
        }
    }
    sorted = malloc((nt ? nt : 1) * sizeof *sorted);
    if (!sorted) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(sorted, ts, nt * sizeof *sorted);
    qsort(sorted, nt, sizeof *sorted, cmp_tensor_off);
    const gguf_tensor *prev = NULL;
    for (size_t i = 0; i < nt; i++) {
        if (sorted[i].nbytes == 0)
            continue;
        if (prev && sorted[i].offset < prev->offset + prev->nbytes) {
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': tensors '%.64s' and '%.64s' overlap (offsets %" PRIu64
                               " and %" PRIu64 ")",
                               path, arrays[prev->index].name, arrays[sorted[i].index].name,
                               prev->offset, sorted[i].offset);
            goto out;
        }
        prev = &sorted[i];
    }
    for (size_t i = 0; i < nt; i++)
        ts[i].offset += data_start;
    gf->version = version;
    gf->alignment = alignment;
    gf->data_start = data_start;
    gf->t = ts;
    ts = NULL;
    c->n = nt;
    c->arrays = arrays;
    arrays = NULL;
    c->meta = pe_strbuf_finish(&meta);
    c->meta_types = pe_strbuf_finish(&types);
    meta.p = types.p = NULL;
    c->impl = gf;
    gf = NULL;
    if (!c->meta || !c->meta_types)
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
out:
    free(meta.p);
    free(types.p);
    for (uint64_t i = 0; i < nkeys; i++)
        free(keys[i].s);
    free(keys);
    free(name);
    free(arrays);
    free(byname);
    free(ts);
    free(sorted);
    free(gf);
    fclose(fp);
    return st;
}

static void gguf_close(posenc_container *c)
{
    gguf_file *gf = c->impl;
    if (gf)
        free(gf->t);
    free(gf);
    c->impl = NULL;
}

static const char *gguf_array_type(const posenc_container *c, size_t i, uint64_t *nbytes,
                                   int *readable)
{
    const gguf_file *gf = c->impl;
    const gguf_tensor *t = &gf->t[i];
    if (nbytes)
        *nbytes = t->nbytes;
    if (readable)
        *readable = ggml_types[t->type].dtype >= 0;
    return ggml_types[t->type].name;
}

static posenc_status gguf_reader_open(posenc_reader *r, posenc_error *err)
{
    const gguf_file *gf = r->c->impl;
    const gguf_tensor *t = &gf->t[r->index];
    const char *tn = ggml_types[t->type].name;
    if (ggml_types[t->type].dtype < 0)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "'%s': tensor '%s' is %s; posenc reads F32, F16, BF16, F64, I32 and "
                             "I64 GGUF tensors, not quantized or 8/16-bit integer data",
                             r->c->path, r->info.name, tn);
    return pe_span_open(r, r->c->path, t->offset, err);
}

static posenc_status gguf_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err)
{
    return pe_span_read(r, buf, nelem, "tensor", err);
}

const pe_backend pe_backend_gguf = {
    .format = POSENC_FMT_GGUF,
    .open = gguf_open,
    .reader_open = gguf_reader_open,
    .read = gguf_read,
    .reader_close = pe_span_close,
    .close = gguf_close,
    .w_start = pe_gguf_w_start,   /* writing: gguf_write.c */
    .w_write = pe_gguf_w_write,
    .w_commit = pe_gguf_w_commit,
    .w_abort = pe_gguf_w_abort,
    .array_type = gguf_array_type,
};
