/* test_positions.c: the --positions parser (formats/engines/positions.c): lists and ranges in order,
 * exact integer arithmetic at every edge (no overflow, values and counts past their limits
 * refused), huge ranges counted without being expanded, malformed lists, and positions files
 * (dtypes, shapes, bad values, members, the count limit checked from the declared shape). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmtutil.h"
#include "formats/engines/positions.h"

#define P48 ((int64_t)1 << 48)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Parse s, expecting success; every summary field checked against the expanded values. */
static pe_positions *parse_ok(const char *s, int64_t end, uint64_t max_count)
{
    pe_positions *p = NULL;
    posenc_error err = { 0 };
    posenc_status st = pe_positions_parse(s, end, max_count, &p, &err);
    if (st != POSENC_OK)
        print_error("'%s': %s\n", s, err.msg);
    assert_int_equal(st, POSENC_OK);
    assert_non_null(p);
    assert_int_equal(p->from_file, 0);
    assert_int_equal(p->ndim, 1);
    assert_int_equal(p->shape[0], (int64_t)p->count);
    return p;
}

static void expect_err(const char *s, int64_t end, uint64_t max_count, posenc_status code,
                       const char *want)
{
    pe_positions *p = (pe_positions *)1;
    posenc_error err = { 0 };
    posenc_status st = pe_positions_parse(s, end, max_count, &p, &err);
    if (st != code || !strstr(err.msg, want))
        print_error("'%s': status %d, message '%s' (wanted %d, '%s')\n", s, (int)st, err.msg,
                    (int)code, want);
    assert_int_equal(st, code);
    assert_non_null(strstr(err.msg, want));
    assert_true(p == (pe_positions *)1); /* *out untouched on failure */
    assert_null(memchr(err.msg, '\n', strlen(err.msg)));
}

static void check_values(pe_positions *p, const int64_t *want, size_t n)
{
    assert_int_equal(p->count, n);
    const int64_t *v;
    assert_int_equal(pe_positions_values(p, &v, NULL), POSENC_OK);
    int64_t mn = want[0], mx = want[0];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(v[i], want[i]);
        mn = want[i] < mn ? want[i] : mn;
        mx = want[i] > mx ? want[i] : mx;
    }
    assert_int_equal(p->min, mn);
    assert_int_equal(p->max, mx);
    assert_int_equal(p->first, want[0]);
    assert_int_equal(p->last, want[n - 1]);
    const int64_t *again;
    assert_int_equal(pe_positions_values(p, &again, NULL), POSENC_OK);
    assert_ptr_equal(v, again); /* materialised once */
}

static void test_lists(void **state)
{
    (void)state;
    pe_positions *p = parse_ok("0,1,131071", P48, UINT64_MAX);
    check_values(p, (const int64_t[]){ 0, 1, 131071 }, 3);
    pe_positions_free(p);

    p = parse_ok("0-15,100", P48, UINT64_MAX);
    int64_t w[17];
    for (int i = 0; i < 16; i++)
        w[i] = i;
    w[16] = 100;
    assert_int_equal(pe_positions_at(p, 15), 15);
    assert_int_equal(pe_positions_at(p, 16), 100);
    check_values(p, w, 17);
    pe_positions_free(p);

    /* the order given, repeats allowed, blanks around numbers */
    p = parse_ok("7,0,5-6,63, 5 ,5-5\t", P48, UINT64_MAX);
    check_values(p, (const int64_t[]){ 7, 0, 5, 6, 63, 5, 5 }, 7);
    pe_positions_free(p);

    p = parse_ok("0", 1, 1); /* the smallest range and limit */
    check_values(p, (const int64_t[]){ 0 }, 1);
    pe_positions_free(p);
    p = parse_ok("00042", P48, 1); /* leading zeros are decimal */
    check_values(p, (const int64_t[]){ 42 }, 1);
    pe_positions_free(p);

    /* fill across range boundaries */
    p = parse_ok("0-9,20-29,5", P48, UINT64_MAX);
    int64_t out[13];
    pe_positions_fill(p, 8, 5, out);
    const int64_t want[] = { 8, 9, 20, 21, 22 };
    assert_memory_equal(out, want, sizeof want);
    pe_positions_fill(p, 17, 4, out);
    const int64_t want2[] = { 27, 28, 29, 5 };
    assert_memory_equal(out, want2, sizeof want2);
    pe_positions_fill(p, 0, 0, out);
    for (uint64_t i = 0; i < p->count; i++)
        assert_int_equal(pe_positions_at(p, i), i < 10 ? (int64_t)i : i < 20 ? (int64_t)i + 10 : 5);
    pe_positions_free(p);
    pe_positions_free(NULL);
}

static void test_overflow(void **state)
{
    (void)state;
    /* values past the range, past INT64_MAX and past UINT64_MAX: refused, never wrapped */
    expect_err("9223372036854775807", P48, UINT64_MAX, POSENC_ERANGE,
               "'9223372036854775807': position 9223372036854775807 is outside [0, 2^48)");
    expect_err("9223372036854775808", P48, UINT64_MAX, POSENC_ERANGE, "is outside [0, 2^48)");
    expect_err("18446744073709551616", P48, UINT64_MAX, POSENC_ERANGE, "is outside [0, 2^48)");
    expect_err("0,1,99999999999999999999999999999999999999999999", P48, UINT64_MAX,
               POSENC_ERANGE, "position 999999999999999999999999... is outside");
    expect_err("281474976710656", P48, UINT64_MAX, POSENC_ERANGE, "281474976710656 is outside");
    expect_err("0-281474976710656", P48, UINT64_MAX, POSENC_ERANGE, "281474976710656 is outside");
    expect_err("2147483648", (int64_t)1 << 31, UINT64_MAX, POSENC_ERANGE, "[0, 2^31)");
    expect_err("1000", 1000, UINT64_MAX, POSENC_ERANGE, "1000 is outside [0, 1000)");
    expect_err("10", 9, UINT64_MAX, POSENC_ERANGE, "10 is outside [0, 9)");
    /* the last value below the range is fine, also at end = INT64_MAX */
    pe_positions *p = parse_ok("281474976710655", P48, 1);
    assert_int_equal(p->max, P48 - 1);
    pe_positions_free(p);
    p = parse_ok("9223372036854775806", INT64_MAX, 1);
    assert_int_equal(p->max, INT64_MAX - 1);
    pe_positions_free(p);
    expect_err("9223372036854775807", INT64_MAX, UINT64_MAX, POSENC_ERANGE, "is outside");
    /* the widest range: 2^63 - 1 positions, counted exactly */
    p = parse_ok("0-9223372036854775806", INT64_MAX, UINT64_MAX);
    assert_int_equal(p->count, (uint64_t)INT64_MAX);
    assert_int_equal(pe_positions_at(p, (uint64_t)INT64_MAX - 1), INT64_MAX - 1);
    pe_positions_free(p);
    /* counts that add past 2^64: refused, not wrapped */
    expect_err("0-9223372036854775806,0-9223372036854775806,0-9223372036854775806", INT64_MAX,
               UINT64_MAX, POSENC_ERANGE, "more than 18446744073709551615 positions");
    expect_err("0-281474976710655,0-281474976710655", P48, (uint64_t)P48, POSENC_ERANGE,
               "more than 281474976710656 positions");
    /* exactly the limit is fine, one more is not */
    p = parse_ok("0-9,10", P48, 11);
    pe_positions_free(p);
    expect_err("0-9,10,11", P48, 11, POSENC_ERANGE, "more than 11 positions");
    /* an empty range of values */
    expect_err("0", 0, 1, POSENC_EINVAL, "empty range");
}

static void test_huge_ranges(void **state)
{
    (void)state;
    /* 2^30 + 1 positions (8 GiB as int64): counted, not built, at once */
    double t0 = now();
    pe_positions *p = parse_ok("0-1073741824", P48, (uint64_t)P48);
    double dt = now() - t0;
    assert_true(dt < 0.05);
    assert_int_equal(p->count, ((uint64_t)1 << 30) + 1);
    assert_null(p->values);
    assert_int_equal(p->nranges, 1);
    assert_int_equal(p->first, 0);
    assert_int_equal(p->last, (int64_t)1 << 30);
    assert_int_equal(pe_positions_at(p, (uint64_t)1 << 30), (int64_t)1 << 30);
    int64_t out[4];
    pe_positions_fill(p, ((uint64_t)1 << 30) - 3, 4, out);
    assert_int_equal(out[3], (int64_t)1 << 30);
    assert_null(p->values); /* fill and at never materialise */
    pe_positions_free(p);

    /* a limit the caller passes is checked while counting, before anything is built */
    t0 = now();
    expect_err("0-1073741824", P48, (uint64_t)1 << 20, POSENC_ERANGE,
               "'0-1073741824': more than 1048576 positions");
    expect_err("0-281474976710655", P48, (uint64_t)1 << 30, POSENC_ERANGE, "more than");
    assert_true(now() - t0 < 0.05);

    /* every position below 2^48, as a list: counted in a blink */
    t0 = now();
    p = parse_ok("0-281474976710655", P48, (uint64_t)P48);
    assert_int_equal(p->count, (uint64_t)P48);
    assert_true(now() - t0 < 0.05);
    posenc_error err = { 0 };
    const int64_t *v;
    if (sizeof(size_t) < 8 || (uint64_t)SIZE_MAX / 8 < (uint64_t)P48) {
        assert_int_equal(pe_positions_values(p, &v, &err), POSENC_ERANGE);
    }
    pe_positions_free(p);

    /* many items: the ranges take memory in proportion to the text only */
    size_t n = 100000;
    char *s = malloc(n * 2);
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = (char)('0' + (int)(i % 10));
        s[2 * i + 1] = ',';
    }
    s[2 * n - 1] = '\0';
    p = parse_ok(s, P48, UINT64_MAX);
    assert_int_equal(p->count, n);
    assert_int_equal(pe_positions_at(p, n - 1), (int64_t)((n - 1) % 10));
    free(s);
    pe_positions_free(p);
}

static void test_malformed(void **state)
{
    (void)state;
    static const char *bad[] = {
        "", " ", ",", "1,", ",1", "1,,2", "1-", "-1", "-", "1--2", "1-2-3", "+1", "0x10",
        "1 2", "1.5", "1e3", "a", "1,a", "٣", "0,1,2,3,",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char q[64];
        snprintf(q, sizeof q, "'%s' is not a list of positions", bad[i]);
        expect_err(bad[i], P48, UINT64_MAX, POSENC_EINVAL, q);
    }
    /* control characters are escaped: the message stays one line */
    expect_err("1\n", P48, UINT64_MAX, POSENC_EINVAL, "'1\\n' is not a list");
    expect_err("1-\t", P48, UINT64_MAX, POSENC_EINVAL, "'1-\\t' is not a list");
    expect_err("1\r\x1b", P48, UINT64_MAX, POSENC_EINVAL, "'1\\x0d\\x1b' is not a list");
    expect_err("5-2", P48, UINT64_MAX, POSENC_EINVAL, "'5-2': range 5-2 runs backwards");
    /* a long list is quoted shortened */
    char longs[400];
    for (size_t i = 0; i < sizeof longs; i++)
        longs[i] = i % 2 ? ',' : '1';
    longs[300] = 'x';
    longs[399] = '\0';
    expect_err(longs, P48, UINT64_MAX, POSENC_EINVAL, "...' is not a list");
    pe_positions *p;
    posenc_error err;
    assert_int_equal(pe_positions_parse(longs, P48, UINT64_MAX, &p, &err), POSENC_EINVAL);
    assert_true(strlen(err.msg) < 160);
}

static void test_range_str(void **state)
{
    (void)state;
    char b[48];
    pe_positions_range_str((int64_t)1 << 31, b, sizeof b);
    assert_string_equal(b, "[0, 2^31)");
    pe_positions_range_str(1, b, sizeof b);
    assert_string_equal(b, "[0, 2^0)");
    pe_positions_range_str((int64_t)1 << 62, b, sizeof b);
    assert_string_equal(b, "[0, 2^62)");
    pe_positions_range_str(1000, b, sizeof b);
    assert_string_equal(b, "[0, 1000)");
    pe_positions_range_str(INT64_MAX, b, sizeof b);
    assert_string_equal(b, "[0, 9223372036854775807)");
}

/* ---- files ---- */

static void write_array(const char *path, const char *name, posenc_dtype dt, int ndim,
                        const int64_t *shape, const void *data, uint64_t n)
{
    posenc_writer *w;
    posenc_error err = { 0 };
    posenc_array_info a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "%s", name);
    a.dtype = dt;
    a.ndim = ndim;
    memcpy(a.shape, shape, (size_t)ndim * sizeof *shape);
    assert_int_equal(posenc_writer_open(path, NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, data, n, &err), POSENC_OK);
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
}

static void read_err(const char *spec, int64_t end, uint64_t max_count, posenc_status code,
                     const char *want)
{
    pe_positions *p = NULL;
    posenc_error err = { 0 };
    posenc_status st = pe_positions_read(spec, end, max_count, &p, &err);
    if (st != code || !strstr(err.msg, want))
        print_error("'%s': status %d, message '%s' (wanted %d, '%s')\n", spec, (int)st, err.msg,
                    (int)code, want);
    assert_int_equal(st, code);
    assert_non_null(strstr(err.msg, want));
    assert_null(p);
}

static void test_files(void **state)
{
    (void)state;
    const int64_t v64[] = { 5, 0, 131071, 7 };
    const int32_t v32[] = { 3, 1, 4, 1, 5, 9 };
    const uint8_t v8[] = { 255, 0 };
    const int64_t s1[] = { 4 }, s23[] = { 2, 3 }, s2[] = { 2 };
    char p64[512], p32[512], p8[512], pz[512], spec[600];
    snprintf(p64, sizeof p64, "%s", tu_path("p64.npy"));
    snprintf(p32, sizeof p32, "%s", tu_path("p32.npy"));
    snprintf(p8, sizeof p8, "%s", tu_path("p8.npy"));
    snprintf(pz, sizeof pz, "%s", tu_path("p.npz"));
    write_array(p64, "", POSENC_DT_I64, 1, s1, v64, 4);
    write_array(p32, "", POSENC_DT_I32, 2, s23, v32, 6);
    write_array(p8, "", POSENC_DT_U8, 1, s2, v8, 2);
    write_array(pz, "p", POSENC_DT_I64, 1, s1, v64, 4);

    pe_positions *p;
    posenc_error err = { 0 };
    assert_int_equal(pe_positions_read(p64, P48, 4, &p, &err), POSENC_OK);
    assert_int_equal(p->from_file, 1);
    check_values(p, v64, 4);
    pe_positions_free(p);

    assert_int_equal(pe_positions_read(p32, P48, UINT64_MAX, &p, &err), POSENC_OK);
    assert_int_equal(p->ndim, 2); /* the shape is kept for apply's [batch, seq] and [3, seq] */
    assert_int_equal(p->shape[0], 2);
    assert_int_equal(p->shape[1], 3);
    check_values(p, (const int64_t[]){ 3, 1, 4, 1, 5, 9 }, 6);
    int64_t out[2];
    pe_positions_fill(p, 4, 2, out);
    assert_int_equal(out[0], 5);
    assert_int_equal(out[1], 9);
    pe_positions_free(p);

    assert_int_equal(pe_positions_read(p8, 256, 2, &p, &err), POSENC_OK);
    check_values(p, (const int64_t[]){ 255, 0 }, 2);
    pe_positions_free(p);

    snprintf(spec, sizeof spec, "%s:p", pz);
    assert_int_equal(pe_positions_read(spec, P48, 4, &p, &err), POSENC_OK);
    check_values(p, v64, 4);
    pe_positions_free(p);

    /* limits: the count from the declared shape, the values against end */
    read_err(p64, P48, 3, POSENC_ERANGE, "p64.npy': 4 positions, more than 3");
    read_err(p64, 131071, 4, POSENC_ERANGE, "position 131071 at index 2 is outside [0, 131071)");
    read_err(p8, 255, 4, POSENC_ERANGE, "position 255 at index 0 is outside [0, 255)");

    /* not integers, negative, empty, absent */
    const float vf[] = { 0.5f, 1.0f };
    const int64_t vneg[] = { 0, 3, -1 };
    const int64_t s0[] = { 0 }, s3[] = { 3 };
    char pf[512], pn[512], pe[512];
    snprintf(pf, sizeof pf, "%s", tu_path("f.npy"));
    snprintf(pn, sizeof pn, "%s", tu_path("neg.npy"));
    snprintf(pe, sizeof pe, "%s", tu_path("empty.npy"));
    write_array(pf, "", POSENC_DT_F32, 1, s2, vf, 2);
    write_array(pn, "", POSENC_DT_I64, 1, s3, vneg, 3);
    write_array(pe, "", POSENC_DT_I64, 1, s0, vneg, 0);
    read_err(pf, P48, UINT64_MAX, POSENC_EFORMAT, "f.npy': positions must be integers, not f32");
    read_err(pn, P48, UINT64_MAX, POSENC_ERANGE, "neg.npy': position -1 at index 2 is outside");
    read_err(pe, P48, UINT64_MAX, POSENC_EFORMAT, "empty.npy': no positions");
    read_err(tu_path("absent.npy"), P48, UINT64_MAX, POSENC_EIO, "absent.npy");
    snprintf(spec, sizeof spec, "%s:q", pz);
    read_err(spec, P48, UINT64_MAX, POSENC_ENOTFOUND, "no array 'q'");

    /* a header that declares 2^29 positions over 24 bytes of data: refused, and memory never
     * follows the declaration */
    char lie[512];
    snprintf(lie, sizeof lie, "%s", tu_path("lie.npy"));
    {
        char h[128];
        int hl = snprintf(h, sizeof h, "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }",
                          1 << 29);
        while ((10 + hl + 1) % 64)
            h[hl++] = ' ';
        h[hl++] = '\n';
        unsigned char buf[256];
        memcpy(buf, "\x93NUMPY\x01\x00", 8);
        buf[8] = (unsigned char)(hl & 0xff);
        buf[9] = (unsigned char)(hl >> 8);
        memcpy(buf + 10, h, (size_t)hl);
        memset(buf + 10 + hl, 0, 24);
        tu_write_file(lie, buf, (size_t)(10 + hl + 24));
    }
    read_err(lie, P48, UINT64_MAX, POSENC_EFORMAT, "lie.npy");

    /* file or list */
    assert_int_equal(pe_positions_is_file(p64), 1);
    snprintf(spec, sizeof spec, "%s:p", pz);
    assert_int_equal(pe_positions_is_file(spec), 1);
    snprintf(spec, sizeof spec, "%s:p", tu_path("absent.npz"));
    assert_int_equal(pe_positions_is_file(spec), 0);
    assert_int_equal(pe_positions_is_file(tu_dir), 0); /* a directory is not a positions file */
    assert_int_equal(pe_positions_is_file("0,1,8-15"), 0);
    assert_int_equal(pe_positions_is_file(""), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_huge_ranges),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_range_str),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
