/* npy.c: the NPY format (numpy.lib.format versions 1.0, 2.0 and 3.0): a tolerant header parser,
 * a header writer that matches np.save byte for byte, streaming data decoding (byte swapping,
 * Fortran order) and the NPY backend. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "formats/io/backend.h"
#include "formats/io/inputs.h"
#include "formats/files/npyfmt.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NATIVE_ORDER '>'
#else
#define NATIVE_ORDER '<'
#endif

/* ---- header parsing ---- */

struct lexer {
    const char *p, *end;
    const char *path;
};

static void skip_ws(struct lexer *lx)
{
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' ||
                               *lx->p == '\r'))
        lx->p++;
}

static posenc_status bad_header(const struct lexer *lx, const char *what, posenc_error *err)
{
    return posenc_seterr(err, POSENC_EFORMAT, "'%s': malformed NPY header: %s", lx->path, what);
}

/* A quoted Python string without escapes (' or "), at most cap-1 bytes. */
static posenc_status lex_string(struct lexer *lx, char *out, size_t cap, posenc_error *err)
{
    if (lx->p >= lx->end || (*lx->p != '\'' && *lx->p != '"'))
        return bad_header(lx, "expected a quoted string", err);
    char q = *lx->p++;
    size_t n = 0;
    while (lx->p < lx->end && *lx->p != q) {
        if (*lx->p == '\\')
            return bad_header(lx, "escape in a string", err);
        if (n + 1 >= cap)
            return bad_header(lx, "string too long", err);
        out[n++] = *lx->p++;
    }
    if (lx->p >= lx->end)
        return bad_header(lx, "unterminated string", err);
    lx->p++;
    out[n] = '\0';
    return POSENC_OK;
}

static int lex_word(struct lexer *lx, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(lx->end - lx->p) >= n && memcmp(lx->p, w, n) == 0) {
        const char *after = lx->p + n;
        if (after == lx->end || !((*after >= 'a' && *after <= 'z') ||
                                  (*after >= 'A' && *after <= 'Z') || *after == '_')) {
            lx->p = after;
            return 1;
        }
    }
    return 0;
}

/* Largest dimension accepted before the product check: 2^62. */
#define DIM_MAX ((int64_t)1 << 62)

static posenc_status lex_shape(struct lexer *lx, pe_npy_header *h, posenc_error *err)
{
    char close;
    if (lx->p < lx->end && *lx->p == '(')
        close = ')';
    else if (lx->p < lx->end && *lx->p == '[')
        close = ']';
    else
        return bad_header(lx, "shape is not a tuple", err);
    lx->p++;
    int nd = 0;
    for (;;) {
        skip_ws(lx);
        if (lx->p < lx->end && *lx->p == close) {
            lx->p++;
            break;
        }
        int neg = 0;
        if (lx->p < lx->end && (*lx->p == '-' || *lx->p == '+'))
            neg = *lx->p++ == '-';
        if (lx->p >= lx->end || *lx->p < '0' || *lx->p > '9')
            return bad_header(lx, "shape holds a non-integer", err);
        uint64_t v = 0;
        int big = 0;
        while (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9') {
            if (v > (uint64_t)DIM_MAX)
                big = 1;
            else
                v = v * 10 + (uint64_t)(*lx->p - '0');
            lx->p++;
        }
        if (lx->p < lx->end && (*lx->p == 'L' || *lx->p == 'l'))
            lx->p++; /* Python 2 long */
        if (neg && v != 0)
            return posenc_seterr(err, POSENC_EFORMAT, "'%s': negative dimension -%llu in shape",
                                 lx->path, (unsigned long long)v);
        if (big || v > (uint64_t)DIM_MAX)
            return posenc_seterr(err, POSENC_ERANGE, "'%s': dimension %s%llu is too large",
                                 lx->path, big ? ">" : "", (unsigned long long)v);
        if (nd >= POSENC_MAX_DIMS)
            return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': more than %d dimensions",
                                 lx->path, POSENC_MAX_DIMS);
        h->info.shape[nd++] = (int64_t)v;
        skip_ws(lx);
        if (lx->p < lx->end && *lx->p == ',') {
            lx->p++;
            continue;
        }
        if (lx->p < lx->end && *lx->p == close) {
            lx->p++;
            break;
        }
        return bad_header(lx, "shape is not a tuple of integers", err);
    }
    h->info.ndim = nd;
    return POSENC_OK;
}

static posenc_status map_descr(const char *d, const char *path, int assume_bf16,
                               pe_npy_header *h, posenc_error *err)
{
    h->swap = 0;
    if (strcmp(d, "bfloat16") == 0) {
        h->info.dtype = POSENC_DT_BF16;
        return POSENC_OK;
    }
    size_t len = strlen(d);
    char order = d[0];
    if (len >= 2 && (order == '<' || order == '>' || order == '|' || order == '=')) {
        char kind = d[1];
        const char *digits = d + 2;
        int size = 0, ok = *digits != '\0';
        for (const char *p = digits; *p; p++) {
            if (*p < '0' || *p > '9' || size > 1000) {
                ok = 0;
                break;
            }
            size = size * 10 + (*p - '0');
        }
        if (kind == 'O')
            return posenc_seterr(err, POSENC_EUNSUPPORTED,
                                 "'%s': object dtype '%s' is refused (posenc never unpickles)",
                                 path, d);
        if (ok) {
            int dt = -1;
            if (kind == 'f' && size == 2)
                dt = POSENC_DT_F16;
            else if (kind == 'f' && size == 4)
                dt = POSENC_DT_F32;
            else if (kind == 'f' && size == 8)
                dt = POSENC_DT_F64;
            else if (kind == 'i' && size == 4)
                dt = POSENC_DT_I32;
            else if (kind == 'i' && size == 8)
                dt = POSENC_DT_I64;
            else if (kind == 'u' && size == 1)
                dt = POSENC_DT_U8;
            else if (kind == 'V' && size == 2 && order != '>') {
                /* bf16 as numpy saves ml_dtypes' bfloat16, or any 2-byte record: listed with
                 * its shape either way, read only when the caller says it is bf16 */
                h->opaque = !assume_bf16;
                dt = POSENC_DT_BF16;
            }
            if (dt >= 0) {
                h->info.dtype = (posenc_dtype)dt;
                h->swap = size > 1 && kind != 'V' && order != '|' && order != '=' &&
                          order != NATIVE_ORDER;
                return POSENC_OK;
            }
        }
    }
    return posenc_seterr(err, POSENC_EUNSUPPORTED,
                         "'%s': dtype '%s' is not supported (posenc reads f16, bf16, f32, f64, "
                         "i32, i64 and u8)", path, d);
}

posenc_status pe_npy_readable(const pe_npy_header *h, const char *path,
                                  posenc_error *err)
{
    if (!h->opaque)
        return POSENC_OK;
    return posenc_seterr(err, POSENC_EUNSUPPORTED,
                         "'%s': dtype '%s' is opaque; pass --assume-bf16 if it is bfloat16", path,
                         h->descr);
}

const char *pe_npy_array_type(const pe_npy_header *h, uint64_t *nbytes, int *readable)
{
    if (!h->opaque)
        return NULL;
    if (nbytes)
        *nbytes = h->nbytes;
    if (readable)
        *readable = 0;
    return h->descr;
}

posenc_status pe_npy_header_parse(const char *text, size_t len, const char *path,
                                      int assume_bf16, pe_npy_header *h, posenc_error *err)
{
    struct lexer lx = { text, text + len, path };
    int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0;
    char descr[sizeof h->descr] = "";
    posenc_status st;
    memset(&h->info, 0, sizeof h->info);
    h->opaque = 0;
    skip_ws(&lx);
    if (lx.p >= lx.end || *lx.p != '{')
        return bad_header(&lx, "not a dictionary", err);
    lx.p++;
    for (;;) {
        skip_ws(&lx);
        if (lx.p < lx.end && *lx.p == '}') {
            lx.p++;
            break;
        }
        char key[32];
        if ((st = lex_string(&lx, key, sizeof key, err)))
            return st;
        skip_ws(&lx);
        if (lx.p >= lx.end || *lx.p != ':')
            return bad_header(&lx, "expected ':'", err);
        lx.p++;
        skip_ws(&lx);
        if (strcmp(key, "descr") == 0) {
            if (have_descr)
                return bad_header(&lx, "duplicate key 'descr'", err);
            if (lx.p < lx.end && (*lx.p == '[' || *lx.p == '{'))
                return posenc_seterr(err, POSENC_EUNSUPPORTED,
                                     "'%s': structured dtypes are not supported", path);
            if ((st = lex_string(&lx, descr, sizeof descr, err)))
                return st;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (have_fortran)
                return bad_header(&lx, "duplicate key 'fortran_order'", err);
            if (lex_word(&lx, "True"))
                fortran = 1;
            else if (lex_word(&lx, "False"))
                fortran = 0;
            else
                return bad_header(&lx, "fortran_order is not True or False", err);
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape)
                return bad_header(&lx, "duplicate key 'shape'", err);
            if ((st = lex_shape(&lx, h, err)))
                return st;
            have_shape = 1;
        } else {
            return posenc_seterr(err, POSENC_EFORMAT, "'%s': malformed NPY header: unexpected "
                                 "key '%s'", path, key);
        }
        skip_ws(&lx);
        if (lx.p < lx.end && *lx.p == ',') {
            lx.p++;
            continue;
        }
        if (lx.p < lx.end && *lx.p == '}') {
            lx.p++;
            break;
        }
        return bad_header(&lx, "expected ',' or '}'", err);
    }
    skip_ws(&lx);
    while (lx.p < lx.end && *lx.p == '\0') /* some writers pad with NULs */
        lx.p++;
    if (lx.p != lx.end)
        return bad_header(&lx, "text after the dictionary", err);
    if (!have_descr)
        return bad_header(&lx, "missing key 'descr'", err);
    if (!have_fortran)
        return bad_header(&lx, "missing key 'fortran_order'", err);
    if (!have_shape)
        return bad_header(&lx, "missing key 'shape'", err);
    memcpy(h->descr, descr, sizeof descr);
    if ((st = map_descr(descr, path, assume_bf16, h, err)))
        return st;
    posenc_error e2 = { 0 };
    if ((st = posenc_shape_size(h->info.ndim, h->info.shape, h->info.dtype, &h->nelem, &h->nbytes,
                                &e2)))
        return posenc_seterr(err, st, "'%s': %s", path, e2.msg);
    /* Fortran order differs from C order only when two or more dimensions exceed 1. */
    int big_dims = 0;
    for (int i = 0; i < h->info.ndim; i++)
        big_dims += h->info.shape[i] > 1;
    h->fortran = fortran && big_dims > 1;
    if (h->fortran && h->nbytes > PE_NPY_FORTRAN_MAX)
        return posenc_seterr(err, POSENC_ERANGE,
                             "'%s': Fortran-order array of %llu bytes is too large to transpose "
                             "(at most 1 GiB); save it in C order", path,
                             (unsigned long long)h->nbytes);
    return POSENC_OK;
}

posenc_status pe_npy_header_read(pe_npy_src src, void *ctx, const char *path,
                                     int assume_bf16, pe_npy_header *h, posenc_error *err)
{
    unsigned char pre[12];
    posenc_status st;
    if ((st = src(ctx, pre, 8, err)))
        return st;
    if (memcmp(pre, "\x93NUMPY", 6) != 0)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': not an NPY file", path);
    h->major = pre[6];
    h->minor = pre[7];
    uint64_t hlen;
    size_t plen;
    if (h->major == 1) {
        if ((st = src(ctx, pre + 8, 2, err)))
            return st;
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        plen = 10;
    } else if (h->major == 2 || h->major == 3) {
        if ((st = src(ctx, pre + 8, 4, err)))
            return st;
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
               (uint64_t)pre[11] << 24;
        plen = 12;
    } else {
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': NPY version %d.%d is not supported",
                             path, h->major, h->minor);
    }
    if (hlen > PE_NPY_MAX_HEADER)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': NPY header of %llu bytes is too large (at most 1 MiB)", path,
                             (unsigned long long)hlen);
    char *text = malloc(hlen ? hlen : 1);
    if (!text)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    if ((st = src(ctx, text, hlen, err))) {
        free(text);
        return st;
    }
    /* Versions 1 and 2 are latin1, 3 is UTF-8; the keys and values we accept are ASCII. */
    st = pe_npy_header_parse(text, hlen, path, assume_bf16, h, err);
    free(text);
    h->data_offset = plen + hlen;
    return st;
}

/* ---- header writing ---- */

size_t pe_npy_header_format(const posenc_array_info *a, unsigned char *buf)
{
    char descr[16];
    /* bfloat16 is written as '<V2', what numpy saves for ml_dtypes' bfloat16 (its dtype.str); a
     * reader must be told it is bf16 (NPZ and directories say so in meta.json). */
    switch (a->dtype) {
    case POSENC_DT_F16: snprintf(descr, sizeof descr, "%cf2", NATIVE_ORDER); break;
    case POSENC_DT_BF16: snprintf(descr, sizeof descr, "%cV2", NATIVE_ORDER); break;
    case POSENC_DT_F32: snprintf(descr, sizeof descr, "%cf4", NATIVE_ORDER); break;
    case POSENC_DT_F64: snprintf(descr, sizeof descr, "%cf8", NATIVE_ORDER); break;
    case POSENC_DT_I32: snprintf(descr, sizeof descr, "%ci4", NATIVE_ORDER); break;
    case POSENC_DT_I64: snprintf(descr, sizeof descr, "%ci8", NATIVE_ORDER); break;
    default: snprintf(descr, sizeof descr, "|u1"); break;
    }
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr);
    for (int i = 0; i < a->ndim; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                      (long long)a->shape[i]);
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", a->ndim == 1 ? "," : "");
    if (a->ndim > 0) { /* numpy's spare room for growing axis 0 in place */
        char first[24];
        int fl = snprintf(first, sizeof first, "%lld", (long long)a->shape[0]);
        for (int i = fl; i < 21; i++)
            dict[n++] = ' ';
    }
    size_t hlen = (size_t)n + 1; /* + '\n' */
    size_t plen = 10;
    size_t pad = 64 - (plen + hlen) % 64;
    if (hlen + pad > 65535) { /* cannot happen with 8 dims, kept for completeness */
        plen = 12;
        pad = 64 - (plen + hlen) % 64;
    }
    size_t total = hlen + pad; /* header length field */
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = plen == 10 ? 1 : 2;
    buf[7] = 0;
    buf[8] = (unsigned char)(total & 0xff);
    buf[9] = (unsigned char)(total >> 8);
    if (plen == 12) {
        buf[10] = (unsigned char)(total >> 16);
        buf[11] = (unsigned char)(total >> 24);
    }
    memcpy(buf + plen, dict, (size_t)n);
    memset(buf + plen + (size_t)n, ' ', pad);
    buf[plen + total - 1] = '\n';
    return plen + total;
}

/* ---- data ---- */

void pe_npy_data_init(pe_npy_data *d, const pe_npy_header *h, pe_npy_src src,
                          void *ctx, const char *path)
{
    memset(d, 0, sizeof *d);
    d->h = *h;
    d->src = src;
    d->ctx = ctx;
    d->path = path;
}

/* Read the whole Fortran-order array and transpose it to C order. */
static posenc_status load_fortran(pe_npy_data *d, posenc_error *err)
{
    size_t es = posenc_dtype_size(d->h.info.dtype), nb = (size_t)d->h.nbytes;
    /* grow the buffer as data arrives, so that a short stream fails before a large allocation */
    unsigned char *f = NULL, *c = NULL;
    size_t have = 0, cap = 0;
    posenc_status st;
    while (have < nb) {
        if (have == cap) {
            size_t ncap = cap ? cap * 2 : (size_t)1 << 20;
            if (ncap > nb)
                ncap = nb;
            unsigned char *nf = realloc(f, ncap);
            if (!nf) {
                free(f);
                return posenc_seterr(err, POSENC_ENOMEM,
                                     "'%s': out of memory for a Fortran-order array", d->path);
            }
            f = nf;
            cap = ncap;
        }
        if ((st = d->src(d->ctx, f + have, cap - have, err))) {
            free(f);
            return st;
        }
        have = cap;
    }
    c = malloc(nb ? nb : 1);
    if (!c) {
        free(f);
        return posenc_seterr(err, POSENC_ENOMEM, "'%s': out of memory for a Fortran-order array",
                             d->path);
    }
    int nd = d->h.info.ndim;
    const int64_t *s = d->h.info.shape;
    uint64_t fs[POSENC_MAX_DIMS], idx[POSENC_MAX_DIMS] = { 0 }, off = 0;
    fs[0] = 1;
    for (int k = 1; k < nd; k++)
        fs[k] = fs[k - 1] * (uint64_t)s[k - 1];
    for (uint64_t e = 0; e < d->h.nelem; e++) {
        memcpy(c + e * es, f + off * es, es);
        for (int k = nd - 1; k >= 0; k--) {
            idx[k]++;
            off += fs[k];
            if (idx[k] < (uint64_t)s[k])
                break;
            off -= fs[k] * (uint64_t)s[k];
            idx[k] = 0;
        }
    }
    free(f);
    d->cbuf = c;
    return POSENC_OK;
}

posenc_status pe_npy_data_read(pe_npy_data *d, void *buf, uint64_t nelem,
                                   posenc_error *err)
{
    size_t es = posenc_dtype_size(d->h.info.dtype);
    if (nelem > d->h.nelem || nelem * es > d->h.nbytes - d->done)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': reading past the end of the array",
                             d->path);
    size_t nb = (size_t)(nelem * es);
    posenc_status st;
    if (d->h.fortran) {
        if (!d->cbuf && (st = load_fortran(d, err)))
            return st;
        memcpy(buf, d->cbuf + d->done, nb);
    } else if ((st = d->src(d->ctx, buf, nb, err))) {
        return st;
    }
    if (d->h.swap)
        posenc_byteswap(buf, es, (size_t)nelem);
    d->done += nb;
    return POSENC_OK;
}

void pe_npy_data_free(pe_npy_data *d)
{
    free(d->cbuf);
    d->cbuf = NULL;
}

posenc_status pe_npy_fsrc_read(void *ctx, void *buf, size_t n, posenc_error *err)
{
    pe_npy_fsrc *s = ctx;
    return pe_read_exact(s->fp, buf, n, s->path, "NPY file", err);
}

posenc_status pe_npy_open_file(const char *path, int assume_bf16, pe_npy_header *h,
                                   FILE **fp, int *regular, posenc_error *err)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = stdin;
    if (is_stdin) {
        pe_input_add_fd(fileno(stdin), "-"); /* a regular file on stdin is an input too */
    } else {
        posenc_status ost = pe_open_input(path, 0, &f, err);
        if (ost != POSENC_OK)
            return ost;
    }
    struct stat sb;
    int reg = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    if (!is_stdin && fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return posenc_seterr(err, POSENC_EINVAL, "'%s': is a directory", path);
    }
    pe_npy_fsrc src = { f, path };
    posenc_status st = pe_npy_header_read(pe_npy_fsrc_read, &src, path, assume_bf16, h,
                                              err);
    if (!st && reg && !is_stdin) {
        uint64_t have = (uint64_t)sb.st_size > h->data_offset
                            ? (uint64_t)sb.st_size - h->data_offset : 0;
        if (have < h->nbytes) {
            char sh[256];
            posenc_shape_str(h->info.ndim, h->info.shape, sh, sizeof sh);
            st = posenc_seterr(err, POSENC_EFORMAT,
                               "'%s': truncated data: shape %s of %s needs %llu bytes, the file "
                               "holds %llu", path, sh, posenc_dtype_name(h->info.dtype),
                               (unsigned long long)h->nbytes, (unsigned long long)have);
        }
    }
    if (st) {
        if (!is_stdin)
            fclose(f);
        return st;
    }
    *fp = f;
    *regular = reg && !is_stdin;
    return POSENC_OK;
}

posenc_status pe_npy_freader_new(const char *path, FILE *fp, const pe_npy_header *h,
                                     pe_npy_freader **out, posenc_error *err)
{
    pe_npy_freader *r = calloc(1, sizeof *r);
    if (!r)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    if (fp) {
        r->fp = fp;
    } else {
        posenc_status ost = pe_open_input(path, 0, &r->fp, err);
        if (ost != POSENC_OK) {
            free(r);
            return ost;
        }
        r->own = 1;
        size_t vb = h->nbytes + 4096 < PE_IO_BUFSIZE ? (size_t)h->nbytes + 4096
                                                         : PE_IO_BUFSIZE;
        r->vbuf = malloc(vb);
        if (r->vbuf)
            setvbuf(r->fp, r->vbuf, _IOFBF, vb);
        if (fseeko(r->fp, (off_t)h->data_offset, SEEK_SET) != 0) {
            int e = errno;
            pe_npy_freader_free(r);
            return posenc_seterr(err, POSENC_EIO, "cannot read '%s': %s", path, strerror(e));
        }
    }
    r->src.fp = r->fp;
    r->src.path = path;
    pe_npy_data_init(&r->d, h, pe_npy_fsrc_read, &r->src, path);
    *out = r;
    return POSENC_OK;
}

void pe_npy_freader_free(pe_npy_freader *r)
{
    if (!r)
        return;
    pe_npy_data_free(&r->d);
    if (r->own && r->fp)
        fclose(r->fp);
    free(r->vbuf);
    free(r);
}

int pe_npy_dtypes_bf16(const cJSON *meta, const char *name)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(meta, "posenc_dtypes");
    const cJSON *v = cJSON_IsObject(d) ? cJSON_GetObjectItemCaseSensitive(d, name) : NULL;
    return cJSON_IsString(v) && (strcmp(v->valuestring, "bf16") == 0 ||
                                 strcmp(v->valuestring, "bfloat16") == 0);
}

/* ---- the NPY backend: one array per file ---- */

struct npy_cont {
    FILE *fp;       /* kept open only for a stream that cannot be reopened (stdin, a pipe) */
    int regular;
    int taken;      /* the stream was handed to a reader */
    pe_npy_header h;
};

static posenc_status npy_open(posenc_container *c, posenc_error *err)
{
    struct npy_cont *k = calloc(1, sizeof *k);
    c->arrays = calloc(1, sizeof *c->arrays);
    if (!k || !c->arrays) {
        free(k);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    FILE *fp;
    posenc_status st = pe_npy_open_file(c->path, c->opts.assume_bf16, &k->h, &fp,
                                            &k->regular, err);
    if (st) {
        free(k);
        return st;
    }
    if (k->regular)
        fclose(fp);
    else
        k->fp = fp;
    c->arrays[0] = k->h.info;
    /* the array is named after the file: "cos.npy" holds "cos"; stdin's is "arr_0", the name
     * np.savez gives a positional array */
    const char *base = strrchr(c->path, '/');
    base = base ? base + 1 : c->path;
    size_t bl = strlen(base);
    if (bl > 4 && strcasecmp(base + bl - 4, ".npy") == 0)
        bl -= 4;
    if (strcmp(c->path, "-") == 0) {
        base = "arr_0";
        bl = 5;
    }
    if (bl >= POSENC_NAME_MAX)
        bl = POSENC_NAME_MAX - 1;
    memcpy(c->arrays[0].name, base, bl);
    c->arrays[0].name[bl] = '\0';
    c->n = 1;
    c->impl = k;
    return POSENC_OK;
}

static posenc_status npy_reader_open(posenc_reader *r, posenc_error *err)
{
    struct npy_cont *k = r->c->impl;
    FILE *fp = NULL;
    if (!k->regular) {
        if (k->taken)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': a stream can be read only once",
                                 r->c->path);
        fp = k->fp;
        k->taken = 1;
    }
    pe_npy_freader *fr;
    posenc_status st = pe_npy_readable(&k->h, r->c->path, err);
    if (st)
        return st;
    st = pe_npy_freader_new(r->c->path, fp, &k->h, &fr, err);
    if (st)
        return st;
    r->impl = fr;
    return POSENC_OK;
}

static posenc_status npy_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err)
{
    pe_npy_freader *fr = r->impl;
    return pe_npy_data_read(&fr->d, buf, nelem, err);
}

static void npy_reader_close(posenc_reader *r)
{
    pe_npy_freader_free(r->impl);
    r->impl = NULL;
}

static void npy_close(posenc_container *c)
{
    struct npy_cont *k = c->impl;
    if (k && k->fp && k->fp != stdin)
        fclose(k->fp);
    free(k);
    c->impl = NULL;
}

struct npy_writer {
    FILE *fp;
    char *tmp;
    char *vbuf;
    int to_stdout;
    pe_writeout wo;
};

static void npy_w_free(posenc_writer *w, int discard)
{
    struct npy_writer *k = w->impl;
    if (!k)
        return;
    if (discard && !k->to_stdout)
        pe_tmp_discard(k->fp, k->tmp);
    free(k->tmp);
    free(k->vbuf);
    free(k);
    w->impl = NULL;
}

static posenc_status npy_w_start(posenc_writer *w, posenc_error *err)
{
    struct npy_writer *k = calloc(1, sizeof *k);
    if (!k)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    w->impl = k;
    posenc_status st;
    if (strcmp(w->path, "-") == 0) {
        /* inputs opened since the command's own check (a model directory's config) count too */
        if ((st = pe_output_check_fd(fileno(stdout), err))) {
            npy_w_free(w, 0);
            return st;
        }
        k->fp = stdout;
        k->to_stdout = 1;
    } else {
        if ((st = pe_tmp_create(w->path, &k->tmp, &k->fp, err))) {
            npy_w_free(w, 0);
            return st;
        }
        k->vbuf = malloc(PE_IO_BUFSIZE);
        if (k->vbuf)
            setvbuf(k->fp, k->vbuf, _IOFBF, PE_IO_BUFSIZE);
    }
    unsigned char hdr[PE_NPY_HEADER_CAP];
    size_t hl = pe_npy_header_format(&w->arrays[0], hdr);
    if ((st = pe_write_exact(k->fp, hdr, hl, w->path, err))) {
        npy_w_free(w, 1);
        return st;
    }
    return POSENC_OK;
}

static posenc_status npy_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                 posenc_error *err)
{
    struct npy_writer *k = w->impl;
    size_t es = posenc_dtype_size(w->arrays[w->cur].dtype);
    posenc_status st = pe_write_exact(k->fp, data, (size_t)(nelem * es), w->path, err);
    if (st == POSENC_OK && k->tmp)
        pe_tmp_writeout(k->fp, &k->wo, nelem * es);
    return st;
}

static posenc_status npy_w_commit(posenc_writer *w, posenc_error *err)
{
    struct npy_writer *k = w->impl;
    posenc_status st;
    if (k->to_stdout) {
        st = fflush(stdout) != 0 || ferror(stdout)
                 ? posenc_seterr(err, POSENC_EIO, "cannot write to standard output: %s",
                                 strerror(errno ? errno : EIO))
                 : POSENC_OK;
    } else {
        st = pe_tmp_commit(k->fp, k->tmp, w->path, err);
        k->fp = NULL; /* closed by commit, success or not */
    }
    npy_w_free(w, 0);
    return st;
}

static void npy_w_abort(posenc_writer *w) { npy_w_free(w, 1); }

/* An opaque '<V2' array: its NPY descr, not readable (posenc_container_array_type). */
static const char *npy_array_type(const posenc_container *c, size_t i, uint64_t *nbytes,
                                   int *readable)
{
    const struct npy_cont *k = c->impl;
    (void)i;
    return pe_npy_array_type(&k->h, nbytes, readable);
}

const pe_backend pe_backend_npy = {
    .format = POSENC_FMT_NPY,
    .open = npy_open,
    .reader_open = npy_reader_open,
    .read = npy_read,
    .reader_close = npy_reader_close,
    .close = npy_close,
    .w_start = npy_w_start,
    .w_write = npy_w_write,
    .w_commit = npy_w_commit,
    .w_abort = npy_w_abort,
    .array_type = npy_array_type,
};
