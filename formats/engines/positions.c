/* positions.c: --positions lists ("0,1,8-15") and files of integer positions, counted with
 * exact integer arithmetic before anything is materialised (see positions.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "posenc/io.h"
#include "formats/engines/positions.h"

#define QUOTE_MAX 48 /* characters of a list quoted in a message */

void pe_positions_range_str(int64_t end, char *buf, size_t len)
{
    if (end > 0 && (end & (end - 1)) == 0) {
        int k = 0;
        while (((int64_t)1 << k) != end)
            k++;
        snprintf(buf, len, "[0, 2^%d)", k);
    } else {
        snprintf(buf, len, "[0, %" PRId64 ")", end);
    }
}

/* "'0,1,2'" or "'0,1,2,3,...'": at most QUOTE_MAX characters of s, control characters
 * written as \n, \t or \xNN so that a message stays one line. len >= QUOTE_MAX * 4 + 8. */
static void quote(const char *s, char *buf, size_t len)
{
    size_t o = 0, i = 0;
    buf[o++] = '\'';
    for (; s[i] && i < QUOTE_MAX && o + 8 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || c == '\t') {
            buf[o++] = '\\';
            buf[o++] = c == '\n' ? 'n' : 't';
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    if (s[i]) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
}

void pe_positions_free(pe_positions *p)
{
    if (!p)
        return;
    free(p->ranges);
    free(p->values);
    free(p);
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* One decimal number at *pp (after blanks). Sets *v (or *over when it is >= end) and the span
 * of its digits for messages; returns 0, or -1 when there are no digits. */
static int parse_num(const char **pp, int64_t end, int64_t *v, int *over, const char **tok,
                     size_t *toklen)
{
    const char *p = *pp;
    while (is_blank(*p))
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    int64_t x = 0;
    *over = 0;
    *tok = p;
    for (; *p >= '0' && *p <= '9'; p++) {
        int d = *p - '0';
        if (*over)
            continue;
        if (x > (INT64_MAX - d) / 10) {
            *over = 1;
            continue;
        }
        x = x * 10 + d;
        if (x >= end)
            *over = 1;
    }
    *toklen = (size_t)(p - *tok);
    while (is_blank(*p))
        p++;
    *pp = p;
    *v = x;
    return 0;
}

posenc_status pe_positions_parse(const char *list, int64_t end, uint64_t max_count,
                                 pe_positions **out, posenc_error *err)
{
    char q[QUOTE_MAX * 4 + 8], rs[48];
    quote(list, q, sizeof q);
    if (end < 1)
        return posenc_seterr(err, POSENC_EINVAL, "positions: empty range [0, %" PRId64 ")", end);
    /* the number of items bounds the number of ranges: one allocation, sized by the text */
    size_t items = 1;
    for (const char *s = list; *s; s++)
        items += *s == ',';
    pe_positions *p = calloc(1, sizeof *p);
    if (p)
        p->ranges = malloc(items * sizeof *p->ranges);
    if (!p || !p->ranges) {
        pe_positions_free(p);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    posenc_status st = POSENC_OK;
    const char *s = list;
    uint64_t count = 0;
    for (;;) {
        int64_t lo, hi;
        int over;
        const char *tok;
        size_t tl;
        if (parse_num(&s, end, &lo, &over, &tok, &tl) != 0)
            goto bad;
        if (over)
            goto range;
        hi = lo;
        if (*s == '-') {
            s++;
            if (parse_num(&s, end, &hi, &over, &tok, &tl) != 0)
                goto bad;
            if (over)
                goto range;
            if (hi < lo) {
                st = posenc_seterr(err, POSENC_EINVAL,
                                   "%s: range %" PRId64 "-%" PRId64 " runs backwards", q, lo, hi);
                goto fail;
            }
        }
        /* hi - lo + 1 <= end <= INT64_MAX: no overflow; count stays <= max_count */
        uint64_t n = (uint64_t)(hi - lo) + 1;
        if (n > max_count - count) {
            st = posenc_seterr(err, POSENC_ERANGE, "%s: more than %" PRIu64 " positions", q,
                               max_count);
            goto fail;
        }
        if (p->nranges == 0) {
            p->min = lo;
            p->max = hi;
            p->first = lo;
        }
        if (lo < p->min)
            p->min = lo;
        if (hi > p->max)
            p->max = hi;
        p->last = hi;
        p->ranges[p->nranges++] = (struct pe_range){ lo, hi, count };
        count += n;
        if (*s == '\0')
            break;
        if (*s != ',' || p->nranges == items)
            goto bad;
        s++;
        continue;
    range:
        pe_positions_range_str(end, rs, sizeof rs);
        st = posenc_seterr(err, POSENC_ERANGE, "%s: position %.*s%s is outside %s", q,
                           (int)(tl < 24 ? tl : 24), tok, tl > 24 ? "..." : "", rs);
        goto fail;
    }
    p->count = count;
    p->ndim = 1;
    p->shape[0] = (int64_t)count;
    *out = p;
    return POSENC_OK;
bad:
    st = posenc_seterr(err, POSENC_EINVAL,
                       "%s is not a list of positions like 0,1,8-15 or a file of integers", q);
fail:
    pe_positions_free(p);
    return st;
}

int pe_positions_is_file(const char *spec)
{
    struct stat st;
    if (stat(spec, &st) == 0)
        return !S_ISDIR(st.st_mode);
    char path[4096], member[POSENC_NAME_MAX];
    /* a member spec like pos.npz:p names a file too */
    return posenc_spec_split(spec, path, sizeof path, member, sizeof member, NULL) == POSENC_OK &&
           member[0] != '\0' && stat(path, &st) == 0;
}

#define READ_CHUNK ((uint64_t)1 << 16) /* elements per read */

posenc_status pe_positions_read(const char *spec, int64_t end, uint64_t max_count,
                                pe_positions **out, posenc_error *err)
{
    posenc_reader *r = NULL;
    pe_positions *p = NULL;
    unsigned char *tmp = NULL;
    posenc_status st;
    char rs[48];
    if (end < 1)
        return posenc_seterr(err, POSENC_EINVAL, "positions: empty range [0, %" PRId64 ")", end);
    if ((st = posenc_reader_open(spec, NULL, &r, err)) != POSENC_OK)
        return st;
    const posenc_array_info *info = posenc_reader_info(r);
    if (!(info->dtype == POSENC_DT_I32 || info->dtype == POSENC_DT_I64 ||
          info->dtype == POSENC_DT_U8)) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': positions must be integers, not %s", spec,
                           posenc_dtype_name(info->dtype));
        goto out;
    }
    uint64_t n;
    if ((st = posenc_shape_size(info->ndim, info->shape, POSENC_DT_I64, &n, NULL, err)) !=
        POSENC_OK) {
        posenc_error_prefix(err, st, "'%s': ", spec);
        goto out;
    }
    if (n == 0) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': no positions", spec);
        goto out;
    }
    if (n > max_count) {
        st = posenc_seterr(err, POSENC_ERANGE, "'%s': %" PRIu64 " positions, more than %" PRIu64,
                           spec, n, max_count);
        goto out;
    }
    if (n > SIZE_MAX / sizeof(int64_t)) {
        st = posenc_seterr(err, POSENC_ERANGE, "'%s': %" PRIu64 " positions do not fit in memory",
                           spec, n);
        goto out;
    }
    p = calloc(1, sizeof *p);
    size_t es = posenc_dtype_size(info->dtype);
    tmp = malloc((size_t)READ_CHUNK * es);
    if (!p || !tmp) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    /* grow with what the file really holds, not with what its header declares */
    size_t cap = 0;
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < READ_CHUNK ? n - done : READ_CHUNK;
        if ((st = posenc_reader_read(r, tmp, k, err)) != POSENC_OK)
            goto out;
        if (done + k > cap) {
            size_t ncap = cap ? cap : (size_t)READ_CHUNK;
            while (ncap < done + k)
                ncap *= 2;
            if (ncap > n)
                ncap = (size_t)n;
            int64_t *nv = realloc(p->values, ncap * sizeof *nv);
            if (!nv) {
                st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
                goto out;
            }
            p->values = nv;
            cap = ncap;
        }
        posenc_dtype_convert(p->values + done, POSENC_DT_I64, tmp, info->dtype, (size_t)k);
        for (uint64_t i = done; i < done + k; i++) {
            int64_t v = p->values[i];
            if (v < 0 || v >= end) {
                pe_positions_range_str(end, rs, sizeof rs);
                st = posenc_seterr(err, POSENC_ERANGE,
                                   "'%s': position %" PRId64 " at index %" PRIu64 " is outside %s",
                                   spec, v, i, rs);
                goto out;
            }
            if (i == 0 || v < p->min)
                p->min = v;
            if (i == 0 || v > p->max)
                p->max = v;
        }
        done += k;
    }
    p->count = n;
    p->first = p->values[0];
    p->last = p->values[n - 1];
    p->from_file = 1;
    p->ndim = info->ndim;
    memcpy(p->shape, info->shape, sizeof p->shape);
    *out = p;
    p = NULL;
out:
    free(tmp);
    pe_positions_free(p);
    posenc_reader_close(r);
    return st;
}

/* The range holding position index i: the last one whose start is <= i. */
static const struct pe_range *range_of(const pe_positions *p, uint64_t i)
{
    size_t lo = 0, hi = p->nranges;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->ranges[mid].start <= i)
            lo = mid;
        else
            hi = mid;
    }
    return &p->ranges[lo];
}

int64_t pe_positions_at(const pe_positions *p, uint64_t i)
{
    if (p->values)
        return p->values[i];
    const struct pe_range *r = range_of(p, i);
    return r->lo + (int64_t)(i - r->start);
}

void pe_positions_fill(const pe_positions *p, uint64_t start, size_t n, int64_t *out)
{
    if (n == 0)
        return;
    if (p->values) {
        memcpy(out, p->values + start, n * sizeof *out);
        return;
    }
    const struct pe_range *r = range_of(p, start);
    const struct pe_range *e = p->ranges + p->nranges;
    uint64_t i = start;
    for (size_t o = 0; o < n && r < e; r++) {
        for (int64_t v = r->lo + (int64_t)(i - r->start); o < n; v++) {
            out[o++] = v;
            i++;
            if (v == r->hi)
                break;
        }
    }
}

posenc_status pe_positions_values(pe_positions *p, const int64_t **out, posenc_error *err)
{
    if (!p->values) {
        if (p->count > SIZE_MAX / sizeof *p->values)
            return posenc_seterr(err, POSENC_ERANGE,
                                 "%" PRIu64 " positions do not fit in memory", p->count);
        int64_t *v = malloc((size_t)p->count * sizeof *v);
        if (!v)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        pe_positions_fill(p, 0, (size_t)p->count, v);
        p->values = v;
    }
    *out = p->values;
    return POSENC_OK;
}

posenc_status pe_positions_one_axis(const pe_positions *p, const char *spec, posenc_error *err)
{
    if (!p->from_file || p->ndim <= 1 || (p->ndim == 2 && p->shape[0] == 1))
        return POSENC_OK;
    char buf[160];
    posenc_shape_str(p->ndim, p->shape, buf, sizeof buf);
    if (p->shape[0] == 3 && p->ndim <= 3)
        return posenc_seterr(err, POSENC_EMISMATCH, "'%s': positions of shape %s are multimodal "
                             "(t, h, w) positions; a table has one row per position: pass one "
                             "axis [S] (apply and verify take [3, S])", spec, buf);
    return posenc_seterr(err, POSENC_EMISMATCH, "'%s': positions of shape %s; a table has one "
                         "row per position: pass a file of shape [S] or [1, S]", spec, buf);
}
