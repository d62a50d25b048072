/* fuzz_positions.c: bytes -> --positions (formats/engines/positions.c), two ways.
 *   1. The bytes as a list ("0,1,8-15"), parsed under several ranges [0, end) and count limits
 *      and checked against a reference written here with 128-bit arithmetic: the same verdict
 *      (ok, malformed, a value out of range, too many), the same count, and on success the
 *      summary (min, max, first, last) and pe_positions_at/fill agree with the values.
 *   2. The bytes as a positions file (NPY, or NPZ when they start like a zip, read both whole
 *      and as the member "p"): a file that reads holds integers in range, count = its shape.
 * Every failure carries a one-line message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "formats/engines/positions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__extension__ typedef unsigned __int128 u128; /* GCC and Clang; -Wpedantic asks for the mark */

enum { REF_OK, REF_BAD, REF_RANGE, REF_COUNT };

static int blank(char c) { return c == ' ' || c == '\t'; }

/* One number: blanks, digits, blanks. -1 when there are no digits. */
static int ref_num(const char **pp, u128 *v)
{
    const char *p = *pp;
    while (blank(*p))
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    u128 x = 0, cap = (u128)1 << 100;
    for (; *p >= '0' && *p <= '9'; p++) {
        x = x * 10 + (u128)(*p - '0');
        if (x > cap)
            x = cap; /* saturate far past any end */
    }
    while (blank(*p))
        p++;
    *pp = p;
    *v = x;
    return 0;
}

/* The documented grammar, left to right: item (',' item)*, item = N | A-B with A <= B. */
static int ref_parse(const char *s, int64_t end, uint64_t max_count, u128 *count)
{
    *count = 0;
    for (;;) {
        u128 lo, hi;
        if (ref_num(&s, &lo) != 0)
            return REF_BAD;
        if (lo >= (u128)end)
            return REF_RANGE;
        hi = lo;
        if (*s == '-') {
            s++;
            if (ref_num(&s, &hi) != 0)
                return REF_BAD;
            if (hi >= (u128)end)
                return REF_RANGE;
            if (hi < lo)
                return REF_BAD;
        }
        *count += hi - lo + 1;
        if (*count > (u128)max_count)
            return REF_COUNT;
        if (*s == '\0')
            return REF_OK;
        if (*s != ',')
            return REF_BAD;
        s++;
    }
}

static void check_summary(pe_positions *p, int64_t end)
{
    if (p->count == 0 || p->min < 0 || p->max >= end || p->min > p->max || p->first < p->min ||
        p->first > p->max || p->last < p->min || p->last > p->max)
        __builtin_trap();
    if (pe_positions_at(p, 0) != p->first || pe_positions_at(p, p->count - 1) != p->last)
        __builtin_trap();
    if (p->count > ((uint64_t)1 << 16))
        return; /* counted, never expanded here */
    const int64_t *v;
    posenc_error err = { 0 };
    if (pe_positions_values(p, &v, &err) != POSENC_OK) {
        fz_check_msg(&err);
        return;
    }
    int64_t mn = v[0], mx = v[0];
    for (uint64_t i = 0; i < p->count; i++) {
        if (v[i] < 0 || v[i] >= end)
            __builtin_trap();
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
    }
    if (mn != p->min || mx != p->max || v[0] != p->first || v[p->count - 1] != p->last)
        __builtin_trap();
    /* fill from a few starts, lengths crossing ranges */
    static int64_t out[64];
    for (uint64_t start = 0; start < p->count; start += 1 + p->count / 7) {
        size_t n = p->count - start < 64 ? (size_t)(p->count - start) : 64;
        pe_positions_fill(p, start, n, out);
        if (memcmp(out, v + start, n * sizeof *out) != 0)
            __builtin_trap();
    }
}

static void fuzz_list(const char *s)
{
    static const int64_t ends[] = { 1, 1000, (int64_t)1 << 31, (int64_t)1 << 48, INT64_MAX };
    static const uint64_t limits[] = { 1, 100, (uint64_t)1 << 48, UINT64_MAX };
    for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++)
        for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
            pe_positions *p = NULL;
            posenc_error err = { 0 };
            posenc_status st = pe_positions_parse(s, ends[e], limits[l], &p, &err);
            u128 count;
            int ref = ref_parse(s, ends[e], limits[l], &count);
            /* ERANGE: "...: more than N positions" or "...: position N is outside [0, E)" */
            size_t ml = strlen(err.msg);
            int count_msg = ml > 10 && strcmp(err.msg + ml - 10, " positions") == 0;
            int got = st == POSENC_OK       ? REF_OK
                      : st == POSENC_EINVAL ? REF_BAD
                      : st == POSENC_ERANGE ? (count_msg ? REF_COUNT : REF_RANGE)
                                            : -1;
            if (st == POSENC_ENOMEM)
                continue;
            if (got != ref)
                __builtin_trap(); /* differs from the reference */
            if (st != POSENC_OK) {
                fz_check_msg(&err);
                if (p)
                    __builtin_trap(); /* *out is set only on success */
                continue;
            }
            if ((u128)p->count != count || p->from_file || p->ndim != 1)
                __builtin_trap();
            check_summary(p, ends[e]);
            pe_positions_free(p);
        }
}

static void fuzz_file(const uint8_t *data, size_t size)
{
    int zip = size >= 2 && data[0] == 'P' && data[1] == 'K';
    const char *path = fz_path(zip ? "pos.npz" : "pos.npy");
    char member[1100];
    fz_write(path, data, size);
    if (!pe_positions_is_file(path))
        __builtin_trap();
    snprintf(member, sizeof member, "%s:p", path);
    const char *specs[] = { path, zip ? member : NULL };
    for (int i = 0; i < 2 && specs[i]; i++) {
        pe_positions *p = NULL;
        posenc_error err = { 0 };
        int64_t end = size & 1 ? (int64_t)1 << 31 : (int64_t)1 << 48;
        if (pe_positions_read(specs[i], end, (uint64_t)1 << 20, &p, &err) != POSENC_OK) {
            fz_check_msg(&err);
            if (p)
                __builtin_trap();
            continue;
        }
        uint64_t n;
        if (!p->from_file ||
            posenc_shape_size(p->ndim, p->shape, POSENC_DT_I64, &n, NULL, NULL) != POSENC_OK ||
            n != p->count || p->count > ((uint64_t)1 << 20))
            __builtin_trap();
        check_summary(p, end);
        pe_positions_free(p);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0'; /* a NUL inside ends the list, as in argv */
    fuzz_list(s);
    free(s);
    fuzz_file(data, size);
    return 0;
}
