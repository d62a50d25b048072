/* cheader.c: arrays as a C header (write only).
 *
 * For OUT/rope.h the prefix is POSENC_ROPE (macros) and posenc_rope (identifiers):
 *
 *   #ifndef POSENC_ROPE_H ... #include <math.h> / <stdint.h>
 *   #define POSENC_ROPE_THETA 10000            one per numeric scalar metadata value
 *   #define POSENC_ROPE_COS_DIM0 4096          one per dimension of every array
 *   static const float posenc_rope_cos[POSENC_ROPE_COS_DIM0][POSENC_ROPE_COS_DIM1] = {{...}};
 *
 * Other metadata goes into the leading comment. f32 values are printed with %.9g and f64 with
 * %.17g, so a compiler reads back exactly the stored values; f16 and bf16 are written as uint16_t
 * bit patterns; NaN and infinities use <math.h>'s NAN and INFINITY. Every array is prefixed,
 * because names like "cos" and "sin" would clash with <math.h>. The header compiles without
 * warnings under -std=c11 -Wall -Wextra -Wpedantic. Data stream into the file as they arrive. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "formats/io/backend.h"
#include "posenc/posenc.h"

#define CH_PER_LINE 8

typedef struct ch_array {
    char ident[2 * POSENC_NAME_MAX + 32]; /* lower-case C identifier */
    char macro[2 * POSENC_NAME_MAX + 32]; /* upper-case macro stem */
    uint64_t blk[POSENC_MAX_DIMS];    /* elements per index of each axis */
} ch_array;

typedef struct ch_writer {
    char *tmp;
    FILE *fp;
    char prefix[POSENC_NAME_MAX];      /* POSENC_ROPE */
    char lprefix[POSENC_NAME_MAX];     /* posenc_rope */
    ch_array *arrays;
    char (*meta_macro)[POSENC_NAME_MAX + 8]; /* per metadata key: its #define name, or "" */
    size_t cur;
    uint64_t done;
    int opened;
} ch_writer;

/* Upper- or lower-case s into a C identifier fragment: [A-Za-z0-9_], others become '_'. */
static void sanitize(const char *s, char *out, size_t len, int upper)
{
    size_t j = 0;
    for (; *s && j + 1 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) && c < 0x80)
            out[j++] = (char)(upper ? toupper(c) : tolower(c));
        else if (j == 0 || out[j - 1] != '_')
            out[j++] = '_';
    }
    out[j] = '\0';
}

/* Write s into a block comment: no "*" "/" pair can end it early, no "??" trigraph. */
static void comment_text(FILE *fp, const char *s)
{
    for (; *s; s++) {
        fputc(*s, fp);
        if ((*s == '*' && s[1] == '/') || (*s == '?' && s[1] == '?'))
            fputc(' ', fp);
        if (*s == '\n')
            fputs(" *   ", fp);
    }
}

static const char *c_type(posenc_dtype dt)
{
    switch (dt) {
    case POSENC_DT_F16:
    case POSENC_DT_BF16: return "uint16_t";
    case POSENC_DT_F32: return "float";
    case POSENC_DT_F64: return "double";
    case POSENC_DT_I32: return "int32_t";
    case POSENC_DT_I64: return "int64_t";
    case POSENC_DT_U8: return "uint8_t";
    default: return "?";
    }
}

/* A JSON number text as a C constant; 0 when it cannot be one (then it stays a comment). */
static int c_number(const char *json, char *out, size_t len)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(json, &end, 1);
    int ok = 0;
    if (v && cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
        const char *t = json;
        while (isspace((unsigned char)*t))
            t++;
        int integral = strpbrk(t, ".eE") == NULL;
        char num[64];
        if (integral) {
            errno = 0;
            long long ll = strtoll(t, NULL, 10);
            if (errno == 0 && ll > INT32_MIN && ll <= INT32_MAX)
                snprintf(num, sizeof num, "%lld", ll);
            else if (errno == 0 && ll != LLONG_MIN)
                snprintf(num, sizeof num, "%lldLL", ll);
            else
                integral = 0;
        }
        if (!integral) {
            snprintf(num, sizeof num, "%.17g", v->valuedouble);
            if (!strpbrk(num, ".e"))
                strcat(num, ".0");
        }
        if (num[0] == '-')
            snprintf(out, len, "(%s)", num);
        else
            snprintf(out, len, "%s", num);
        ok = 1;
    }
    cJSON_Delete(v);
    return ok;
}

static void ch_writer_free(posenc_writer *w, int remove_tmp)
{
    ch_writer *cw = w->impl;
    if (!cw)
        return;
    if (remove_tmp)
        pe_tmp_discard(cw->fp, cw->tmp);
    free(cw->tmp);
    free(cw->arrays);
    free(cw->meta_macro);
    free(cw);
    w->impl = NULL;
}

/* Is macro m already used: the guard, the UNUSED macro, a dimension macro, or the #define of
 * an earlier metadata key (0 .. upto-1)? */
static int macro_taken(const posenc_writer *w, const ch_writer *cw, const char *m, size_t upto)
{
    char t[2 * POSENC_NAME_MAX + 48];
    snprintf(t, sizeof t, "%s_H", cw->prefix);
    if (strcmp(m, t) == 0)
        return 1;
    snprintf(t, sizeof t, "%s_UNUSED", cw->prefix);
    if (strcmp(m, t) == 0)
        return 1;
    for (size_t i = 0; i < w->n; i++)
        for (int k = 0; k < w->arrays[i].ndim; k++) {
            snprintf(t, sizeof t, "%s_DIM%d", cw->arrays[i].macro, k);
            if (strcmp(m, t) == 0)
                return 1;
        }
    for (size_t i = 0; i < upto; i++)
        if (strcmp(m, cw->meta_macro[i]) == 0)
            return 1;
    return 0;
}

static void make_prefix(const char *path, ch_writer *cw)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char stem[POSENC_NAME_MAX];
    snprintf(stem, sizeof stem, "%s", base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem)
        *dot = '\0';
    char up[POSENC_NAME_MAX - 8];
    sanitize(stem, up, sizeof up, 1);
    if (strncmp(up, "POSENC", 6) == 0)
        snprintf(cw->prefix, sizeof cw->prefix, "%s", up);
    else
        snprintf(cw->prefix, sizeof cw->prefix, "POSENC_%s", up[0] == '_' ? up + 1 : up);
    size_t n = strlen(cw->prefix);
    while (n > 0 && cw->prefix[n - 1] == '_')
        cw->prefix[--n] = '\0';
    for (size_t i = 0; i <= n; i++)
        cw->lprefix[i] = (char)tolower((unsigned char)cw->prefix[i]);
}

static posenc_status ch_w_start(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    ch_writer *cw = calloc(1, sizeof *cw);
    if (!cw)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    w->impl = cw;
    cw->arrays = calloc(w->n ? w->n : 1, sizeof *cw->arrays);
    if (!cw->arrays) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    make_prefix(w->path, cw);
    /* identifiers, unique after sanitizing */
    for (size_t i = 0; i < w->n; i++) {
        ch_array *a = &cw->arrays[i];
        char frag[POSENC_NAME_MAX];
        sanitize(w->arrays[i].name[0] ? w->arrays[i].name : "data", frag, sizeof frag, 0);
        const char *f = frag;
        while (*f == '_')
            f++;
        if (!*f)
            f = "data";
        for (int suffix = 1;; suffix++) {
            if (suffix == 1)
                snprintf(a->ident, sizeof a->ident, "%s_%s", cw->lprefix, f);
            else
                snprintf(a->ident, sizeof a->ident, "%s_%s_%d", cw->lprefix, f, suffix);
            size_t j = 0;
            while (j < i && strcmp(cw->arrays[j].ident, a->ident) != 0)
                j++;
            if (j == i)
                break;
        }
        for (size_t k = 0; k <= strlen(a->ident); k++)
            a->macro[k] = (char)toupper((unsigned char)a->ident[k]);
        uint64_t p = 1;
        for (int k = w->arrays[i].ndim - 1; k >= 0; k--) {
            a->blk[k] = p;
            p *= (uint64_t)w->arrays[i].shape[k];
        }
    }
    /* numeric metadata become #defines unless the name is taken (by a dimension macro, the
     * guard, or an earlier key that sanitizes the same way): then they stay in the comment */
    cw->meta_macro = calloc(w->nmeta ? w->nmeta : 1, sizeof *cw->meta_macro);
    if (!cw->meta_macro) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    char num[80];
    for (size_t i = 0; i < w->nmeta; i++) {
        if (!c_number(w->meta_vals[i], num, sizeof num))
            continue;
        char key[POSENC_NAME_MAX];
        sanitize(w->meta_keys[i], key, sizeof key, 1);
        char *m = cw->meta_macro[i];
        snprintf(m, sizeof cw->meta_macro[i], "%.200s_%.50s", cw->prefix,
                 key[0] == '_' ? key + 1 : key);
        if (macro_taken(w, cw, m, i))
            m[0] = '\0';
    }
    if ((st = pe_tmp_create(w->path, &cw->tmp, &cw->fp, err)) != POSENC_OK)
        goto fail;
    setvbuf(cw->fp, NULL, _IOFBF, 1u << 20);
    FILE *fp = cw->fp;
    const char *base = strrchr(w->path, '/');
    base = base ? base + 1 : w->path;
    fputs("/* ", fp);
    comment_text(fp, base);
    fputs(": written by posenc " POSENC_VERSION "; do not edit.\n", fp);
    int any = 0;
    for (size_t i = 0; i < w->nmeta; i++) {
        if (cw->meta_macro[i][0])
            continue;
        if (!any)
            fputs(" *\n * metadata:\n", fp);
        any = 1;
        fputs(" *   ", fp);
        comment_text(fp, w->meta_keys[i]);
        fputs(": ", fp);
        comment_text(fp, w->meta_vals[i]);
        fputs("\n", fp);
    }
    fprintf(fp, " */\n#ifndef %s_H\n#define %s_H\n\n#include <math.h>\n#include <stdint.h>\n\n",
            cw->prefix, cw->prefix);
    any = 0;
    for (size_t i = 0; i < w->nmeta; i++) {
        if (!cw->meta_macro[i][0] || !c_number(w->meta_vals[i], num, sizeof num))
            continue;
        fprintf(fp, "#define %s %s\n", cw->meta_macro[i], num);
        any = 1;
    }
    if (any)
        fputs("\n", fp);
    for (size_t i = 0; i < w->n; i++) {
        for (int k = 0; k < w->arrays[i].ndim; k++)
            fprintf(fp, "#define %s_DIM%d %" PRId64 "\n", cw->arrays[i].macro, k,
                    w->arrays[i].shape[k]);
    }
    fprintf(fp,
            "\n#if defined(__GNUC__)\n#define %s_UNUSED __attribute__((unused))\n#else\n"
            "#define %s_UNUSED\n#endif\n",
            cw->prefix, cw->prefix);
    if (ferror(fp)) {
        st = posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", w->path, strerror(errno));
        goto fail;
    }
    return POSENC_OK;
fail:
    ch_writer_free(w, 1);
    return st;
}

static void open_array(posenc_writer *w, ch_writer *cw, size_t i)
{
    const posenc_array_info *a = &w->arrays[i];
    FILE *fp = cw->fp;
    char shp[256];
    fputs("\n/* ", fp);
    comment_text(fp, a->name);
    fprintf(fp, ": %s %s", posenc_dtype_name(a->dtype),
            posenc_shape_str(a->ndim, a->shape, shp, sizeof shp));
    if (a->dtype == POSENC_DT_F16)
        fputs(", IEEE binary16 bit patterns (posenc_f16_to_f32 decodes them)", fp);
    else if (a->dtype == POSENC_DT_BF16)
        fputs(", bfloat16 bit patterns (the high half of a float)", fp);
    if (w->nelem[i] == 0) {
        fputs("; empty, so not defined (C has no zero-length arrays) */\n", fp);
        return;
    }
    fprintf(fp, " */\nstatic const %s %s", c_type(a->dtype), cw->arrays[i].ident);
    for (int k = 0; k < a->ndim; k++)
        fprintf(fp, "[%s_DIM%d]", cw->arrays[i].macro, k);
    fprintf(fp, " %s_UNUSED = ", cw->prefix);
    if (a->ndim > 0)
        fputs("{\n", fp);
}

static void close_array(posenc_writer *w, ch_writer *cw, size_t i)
{
    if (w->nelem[i] == 0)
        return;
    fputs(w->arrays[i].ndim > 0 ? "\n};\n" : ";\n", cw->fp);
}

static void put_value(FILE *fp, posenc_dtype dt, const unsigned char *p)
{
    char buf[64];
    switch (dt) {
    case POSENC_DT_F16:
    case POSENC_DT_BF16: {
        uint16_t v;
        memcpy(&v, p, 2);
        fprintf(fp, "0x%04x", v);
        return;
    }
    case POSENC_DT_F32:
    case POSENC_DT_F64: {
        double d;
        if (dt == POSENC_DT_F32) {
            float f;
            memcpy(&f, p, 4);
            d = f;
        } else {
            memcpy(&d, p, 8);
        }
        if (isnan(d)) {
            fputs("NAN", fp);
            return;
        }
        if (isinf(d)) {
            fputs(d < 0 ? "-INFINITY" : "INFINITY", fp);
            return;
        }
        snprintf(buf, sizeof buf, dt == POSENC_DT_F32 ? "%.9g" : "%.17g", d);
        if (!strpbrk(buf, ".e"))
            strcat(buf, ".0");
        if (dt == POSENC_DT_F32)
            strcat(buf, "f");
        fputs(buf, fp);
        return;
    }
    case POSENC_DT_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        if (v == INT32_MIN)
            fputs("(-2147483647 - 1)", fp);
        else
            fprintf(fp, "%" PRId32, v);
        return;
    }
    case POSENC_DT_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        if (v == INT64_MIN)
            fputs("(-INT64_C(9223372036854775807) - 1)", fp);
        else if (v > INT32_MAX || v < -INT32_MAX)
            fprintf(fp, "INT64_C(%" PRId64 ")", v);
        else
            fprintf(fp, "%" PRId64, v);
        return;
    }
    case POSENC_DT_U8: fprintf(fp, "%u", (unsigned)*p); return;
    default: return;
    }
}

/* Open and close the empty arrays in front of the cursor. */
static void skip_empty(posenc_writer *w, ch_writer *cw)
{
    while (cw->cur < w->n && w->nelem[cw->cur] == 0) {
        open_array(w, cw, cw->cur);
        close_array(w, cw, cw->cur);
        cw->cur++;
        cw->done = 0;
    }
}

static posenc_status ch_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                posenc_error *err)
{
    ch_writer *cw = w->impl;
    const unsigned char *p = data;
    FILE *fp = cw->fp;
    while (nelem > 0) {
        skip_empty(w, cw);
        if (cw->cur >= w->n)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': more data than declared", w->path);
        size_t i = cw->cur;
        const posenc_array_info *a = &w->arrays[i];
        const ch_array *ca = &cw->arrays[i];
        size_t es = posenc_dtype_size(a->dtype);
        if (!cw->opened) {
            open_array(w, cw, i);
            cw->opened = 1;
        }
        uint64_t total = w->nelem[i];
        for (; nelem > 0 && cw->done < total; nelem--, p += es) {
            uint64_t e = cw->done;
            if (a->ndim > 0 && e == 0)
                fputs("    ", fp);
            for (int k = 1; k < a->ndim; k++)
                if (e % ca->blk[k - 1] == 0)
                    fputc('{', fp);
            put_value(fp, a->dtype, p);
            int closed = 0;
            for (int k = a->ndim - 1; k >= 1; k--)
                if ((e + 1) % ca->blk[k - 1] == 0) {
                    fputc('}', fp);
                    closed = 1;
                }
            if (e + 1 < total)
                fputs(closed || (e + 1) % CH_PER_LINE == 0 ? ",\n    " : ", ", fp);
            cw->done++;
        }
        if (cw->done == total) {
            close_array(w, cw, i);
            cw->opened = 0;
            cw->cur++;
            cw->done = 0;
        }
        if (ferror(fp))
            return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", w->path,
                                 strerror(errno));
    }
    return POSENC_OK;
}

static posenc_status ch_w_commit(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    if (!w->impl && (st = ch_w_start(w, err)) != POSENC_OK)
        return st;
    ch_writer *cw = w->impl;
    skip_empty(w, cw);
    fprintf(cw->fp, "\n#endif /* %s_H */\n", cw->prefix);
    if (ferror(cw->fp)) {
        st = posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", w->path, strerror(errno));
        ch_writer_free(w, 1);
        return st;
    }
    st = pe_tmp_commit(cw->fp, cw->tmp, w->path, err);
    cw->fp = NULL;
    ch_writer_free(w, st != POSENC_OK);
    return st;
}

static void ch_w_abort(posenc_writer *w) { ch_writer_free(w, 1); }

const pe_backend pe_backend_cheader = {
    .format = POSENC_FMT_CHEADER,
    .w_start = ch_w_start,
    .w_write = ch_w_write,
    .w_commit = ch_w_commit,
    .w_abort = ch_w_abort,
};
