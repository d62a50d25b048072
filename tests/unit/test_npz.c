/* test_npz.c: the NPZ format and the zip layer under it: stored and deflated round trips for
 * every dtype, the ZIP64 fields posenc writes, archives built byte by byte here (ZIP64 central
 * directory and end records, comments, data descriptors) and every malformed one (bad CRC,
 * corrupt and oversized deflate streams, sizes that disagree with the NPY header, offsets out of
 * bounds, member and name caps), metadata, the writer's no-partial-file guarantee, and NumPy
 * interop (np.savez / np.savez_compressed read exactly; np.load reads posenc's archives). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"
#include "posenc/io.h"
#include "formats/files/zip.h"

static int count_entries(const char *dir, const char *s)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        n += strstr(e->d_name, s) != NULL;
    closedir(d);
    return n;
}

static void fill(posenc_dtype dt, void *buf, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case POSENC_DT_F16:
        case POSENC_DT_BF16: ((uint16_t *)buf)[i] = (uint16_t)(i * 7919u + 3 + seed); break;
        case POSENC_DT_F32: ((float *)buf)[i] = (float)i * 0.25f - 1.5f + (float)seed; break;
        case POSENC_DT_F64: ((double *)buf)[i] = ((double)i - 20.0) / 7.0 * 1e10 + seed; break;
        case POSENC_DT_I32: ((int32_t *)buf)[i] = (int32_t)(i * 100003u) - 7 + seed; break;
        case POSENC_DT_I64: ((int64_t *)buf)[i] = ((int64_t)i << 33) - 5 + seed; break;
        case POSENC_DT_U8: ((uint8_t *)buf)[i] = (uint8_t)(i * 37 + (size_t)seed); break;
        default: break;
        }
    }
}

/* Read every element of array name of path; returns the status of the first failure. */
static posenc_status read_member(const char *spec, void *buf, uint64_t n, posenc_error *err)
{
    posenc_reader *r;
    posenc_status st = posenc_reader_open(spec, NULL, &r, err);
    if (st)
        return st;
    st = posenc_reader_read(r, buf, n, err);
    posenc_reader_close(r);
    return st;
}

/* ---- round trips ---- */

/* Write one array of every dtype (seeded patterns), plus metadata, to path. */
static void write_all_dtypes(const char *path, int compress)
{
    posenc_write_opts o = { POSENC_FMT_AUTO, compress };
    posenc_writer *w;
    posenc_error err = { 0 };
    assert_int_equal(posenc_writer_open(path, &o, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_meta(w, "theta", "500000", &err), POSENC_OK);
    assert_int_equal(posenc_writer_meta(w, "note", "\"a \\\"quoted\\\" word\"", &err), POSENC_OK);
    for (int dt = 0; dt < POSENC_DT_COUNT; dt++) {
        posenc_array_info a = { .dtype = (posenc_dtype)dt, .ndim = 2, .shape = { 50, 41 } };
        snprintf(a.name, sizeof a.name, "a_%s", posenc_dtype_name(a.dtype));
        assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    }
    posenc_array_info empty = { .name = "empty", .dtype = POSENC_DT_F32, .ndim = 2,
                                .shape = { 0, 4 } };
    assert_int_equal(posenc_writer_declare(w, &empty, &err), POSENC_OK);
    unsigned char *buf = malloc(2050 * 8);
    for (int dt = 0; dt < POSENC_DT_COUNT; dt++) {
        fill((posenc_dtype)dt, buf, 2050, dt);
        /* in two pieces, the second one crossing into nothing else */
        assert_int_equal(posenc_writer_write(w, buf, 1000, &err), POSENC_OK);
        assert_int_equal(posenc_writer_write(w, buf + 1000 * posenc_dtype_size((posenc_dtype)dt),
                                             1050, &err), POSENC_OK);
    }
    free(buf);
    if (posenc_writer_commit(w, &err) != POSENC_OK)
        fail_msg("%s", err.msg);
}

static void check_all_dtypes(const char *path)
{
    posenc_container *c;
    posenc_error err = { 0 };
    assert_int_equal(posenc_container_open(path, NULL, &c, &err), POSENC_OK);
    assert_int_equal(posenc_container_format(c), POSENC_FMT_NPZ);
    assert_int_equal(posenc_container_count(c), POSENC_DT_COUNT + 1);
    const char *meta = posenc_container_meta(c);
    assert_non_null(meta);
    assert_non_null(strstr(meta, "\"theta\":500000"));
    assert_non_null(strstr(meta, "\"posenc_dtypes\":{\"a_bf16\":\"bf16\"}"));
    unsigned char *want = malloc(2050 * 8), *got = malloc(2050 * 8);
    for (int dt = 0; dt < POSENC_DT_COUNT; dt++) {
        const posenc_array_info *a = posenc_container_array(c, (size_t)dt);
        char name[64];
        snprintf(name, sizeof name, "a_%s", posenc_dtype_name((posenc_dtype)dt));
        assert_string_equal(a->name, name);
        assert_int_equal(a->dtype, dt); /* bf16 from meta.json's posenc_dtypes */
        assert_int_equal(a->ndim, 2);
        assert_int_equal(a->shape[1], 41);
        fill((posenc_dtype)dt, want, 2050, dt);
        posenc_reader *r;
        assert_int_equal(posenc_reader_open_index(c, (size_t)dt, &r, &err), POSENC_OK);
        size_t es = posenc_dtype_size((posenc_dtype)dt);
        assert_int_equal(posenc_reader_read(r, got, 7, &err), POSENC_OK);
        assert_int_equal(posenc_reader_read(r, got + 7 * es, 2043, &err), POSENC_OK);
        assert_memory_equal(want, got, 2050 * es);
        assert_int_equal(posenc_reader_read(r, got, 1, &err), POSENC_EFORMAT);
        posenc_reader_close(r);
    }
    assert_int_equal(posenc_container_array(c, POSENC_DT_COUNT)->shape[0], 0);
    posenc_container_close(c);
    free(want);
    free(got);
}

/* The archive NAME of write_all_dtypes, made here when this test runs alone (tests/unit/alone.sh)
 * or after the test that writes it. */
static void need_archive(const char *name, int deflate)
{
    if (!tu_exists(tu_path(name)))
        write_all_dtypes(tu_path(name), deflate);
}

static void test_roundtrip_stored(void **state)
{
    (void)state;
    write_all_dtypes(tu_path("s.npz"), 0);
    check_all_dtypes(tu_path("s.npz"));
    assert_int_equal(count_entries(tu_dir, ".posenc-tmp"), 0);
}

static void test_roundtrip_deflated(void **state)
{
    (void)state;
    write_all_dtypes(tu_path("d.npz"), 1);
    check_all_dtypes(tu_path("d.npz"));
    need_archive("s.npz", 0);
    struct stat a, b;
    assert_int_equal(stat(tu_path("s.npz"), &a), 0);
    assert_int_equal(stat(tu_path("d.npz"), &b), 0);
    assert_true(b.st_size < a.st_size); /* really compressed */
}

/* Readers of one container are independent: interleaved reads of two members. */
static void test_interleaved_readers(void **state)
{
    (void)state;
    need_archive("d.npz", 1);
    posenc_container *c;
    posenc_error err = { 0 };
    assert_int_equal(posenc_container_open(tu_path("d.npz"), NULL, &c, &err), POSENC_OK);
    posenc_reader *r1, *r2;
    assert_int_equal(posenc_reader_open_index(c, 2, &r1, &err), POSENC_OK); /* f32 */
    assert_int_equal(posenc_reader_open_index(c, 3, &r2, &err), POSENC_OK); /* f64 */
    float f[2050], fw[2050];
    double d[2050], dw[2050];
    fill(POSENC_DT_F32, fw, 2050, 2);
    fill(POSENC_DT_F64, dw, 2050, 3);
    for (int k = 0; k < 2050; k += 410) {
        assert_int_equal(posenc_reader_read(r1, f + k, 410, &err), POSENC_OK);
        assert_int_equal(posenc_reader_read(r2, d + k, 410, &err), POSENC_OK);
    }
    assert_memory_equal(f, fw, sizeof f);
    assert_memory_equal(d, dw, sizeof d);
    posenc_reader_close(r1);
    posenc_reader_close(r2);
    posenc_container_close(c);
}

static void test_member_specs(void **state)
{
    (void)state;
    need_archive("s.npz", 0);
    need_archive("d.npz", 1);
    posenc_error err = { 0 };
    float f[2050], fw[2050];
    fill(POSENC_DT_F32, fw, 2050, 2);
    assert_int_equal(read_member(tu_path("s.npz:a_f32"), f, 2050, &err), POSENC_OK);
    assert_memory_equal(f, fw, sizeof f);
    /* several arrays need a name */
    assert_int_equal(read_member(tu_path("s.npz"), f, 1, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "8 arrays (a_f16, a_bf16, a_f32, a_f64, a_i32, a_i64, a_u8, "
                                    "empty); name one as '"));
    assert_non_null(strstr(err.msg, "s.npz:NAME'"));
    /* a missing member is ENOTFOUND naming it */
    assert_int_equal(read_member(tu_path("s.npz:nope"), f, 1, &err), POSENC_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no array 'nope'"));
    /* read_all converts */
    double *d;
    posenc_array_info info;
    assert_int_equal(posenc_read_all(tu_path("d.npz:a_f32"), NULL, POSENC_DT_F64, 1 << 20, &info,
                                     (void **)&d, &err), POSENC_OK);
    for (int i = 0; i < 2050; i++)
        assert_true(d[i] == (double)fw[i]);
    free(d);
    assert_string_equal(info.name, "a_f32");
}

/* The local headers posenc writes carry ZIP64 extra fields, as numpy's (force_zip64). */
static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static void test_zip64_local_headers(void **state)
{
    (void)state;
    need_archive("d.npz", 1);
    size_t n;
    unsigned char *z = tu_slurp(tu_path("d.npz"), &n);
    size_t off = 0;
    int members = 0;
    /* walk the local headers: each has a ZIP64 extra with the real sizes */
    while (off + 30 <= n && rd32(z + off) == 0x04034b50u) {
        uint16_t nl = rd16(z + off + 26), xl = rd16(z + off + 28);
        assert_int_equal(rd32(z + off + 18), 0xffffffffu);
        assert_int_equal(rd32(z + off + 22), 0xffffffffu);
        assert_int_equal(xl, 20);
        const unsigned char *x = z + off + 30 + nl;
        assert_int_equal(rd16(x), 1);
        assert_int_equal(rd16(x + 2), 16);
        uint64_t usize = rd64(x + 4), csize = rd64(x + 12);
        const unsigned char *data = x + 20;
        int is_meta = nl == 9 && memcmp(z + off + 30, "meta.json", 9) == 0;
        assert_int_equal(rd16(z + off + 8), is_meta ? 0 : 8);
        /* the CRC in the header matches the (inflated) data */
        unsigned char *u = malloc(usize + 1);
        uLongf ul = (uLongf)usize;
        if (!is_meta) {
            z_stream s = { 0 };
            assert_int_equal(inflateInit2(&s, -MAX_WBITS), Z_OK);
            s.next_in = (unsigned char *)data;
            s.avail_in = (uInt)csize;
            s.next_out = u;
            s.avail_out = (uInt)usize;
            assert_int_equal(inflate(&s, Z_FINISH), Z_STREAM_END);
            assert_int_equal(s.total_out, usize);
            inflateEnd(&s);
        } else {
            memcpy(u, data, usize);
        }
        assert_int_equal(crc32(crc32(0, NULL, 0), u, (uInt)ul), rd32(z + off + 14));
        if (!is_meta)
            assert_memory_equal(u, "\x93NUMPY\x01\x00", 8);
        free(u);
        off = (size_t)(data - z) + csize;
        members++;
    }
    assert_int_equal(members, POSENC_DT_COUNT + 2);
    assert_int_equal(rd32(z + off), 0x02014b50u); /* central directory follows */
    assert_int_equal(rd32(z + n - 22), 0x06054b50u);
    free(z);
}

/* ---- archives built by hand ---- */

struct zm {
    const char *name;
    const unsigned char *data;  /* uncompressed member */
    size_t n;
    int deflate;
    int cd_zip64;               /* 0xFFFFFFFF in the central directory + ZIP64 extra */
    int descriptor;             /* bit 3: sizes after the data, zeros in the local header */
    uint32_t crc_xor;           /* corrupt the CRC */
    int64_t usize;              /* declared uncompressed size (-1: the real one) */
    const unsigned char *comp;  /* raw compressed bytes instead of deflating data */
    size_t ncomp;
    uint16_t method;            /* 0: from deflate */
    uint64_t offset_add;        /* corrupt the local header offset */
};

struct zb {
    unsigned char *p;
    size_t n;
};

static void put(struct zb *b, const void *d, size_t n)
{
    if (n == 0)
        return;
    b->p = realloc(b->p, b->n + n);
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void put16(struct zb *b, uint16_t v)
{
    unsigned char x[2] = { (unsigned char)v, (unsigned char)(v >> 8) };
    put(b, x, 2);
}
static void put32(struct zb *b, uint32_t v)
{
    put16(b, (uint16_t)v);
    put16(b, (uint16_t)(v >> 16));
}
static void put64(struct zb *b, uint64_t v)
{
    put32(b, (uint32_t)v);
    put32(b, (uint32_t)(v >> 32));
}

static unsigned char *raw_deflate(const unsigned char *d, size_t n, size_t *out_n)
{
    z_stream s = { 0 };
    assert_int_equal(deflateInit2(&s, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&s, (uLong)n) + 16;
    unsigned char *o = malloc(cap);
    s.next_in = (unsigned char *)d;
    s.avail_in = (uInt)n;
    s.next_out = o;
    s.avail_out = (uInt)cap;
    assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
    *out_n = s.total_out;
    deflateEnd(&s);
    return o;
}

/* Build a zip of the members; zip64_end adds the ZIP64 end record and locator; comment is
 * appended to the end record. */
static void build_zip(const char *path, struct zm *m, size_t nm, int zip64_end,
                      const char *comment)
{
    struct zb b = { 0 }, cd = { 0 };
    for (size_t i = 0; i < nm; i++) {
        size_t cn;
        unsigned char *comp = NULL;
        const unsigned char *c;
        uint16_t method = m[i].method ? m[i].method : (m[i].deflate ? 8 : 0);
        if (m[i].comp) {
            c = m[i].comp;
            cn = m[i].ncomp;
        } else if (m[i].deflate) {
            comp = raw_deflate(m[i].data, m[i].n, &cn);
            c = comp;
        } else {
            c = m[i].data;
            cn = m[i].n;
        }
        uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), m[i].data, (uInt)m[i].n) ^ m[i].crc_xor;
        uint64_t usize = m[i].usize >= 0 ? (uint64_t)m[i].usize : m[i].n;
        uint64_t off = b.n;
        uint16_t flags = m[i].descriptor ? 8 : 0;
        size_t nl = strlen(m[i].name);
        put32(&b, 0x04034b50u);
        put16(&b, 20);
        put16(&b, flags);
        put16(&b, method);
        put32(&b, 0);
        put32(&b, m[i].descriptor ? 0 : crc);
        put32(&b, m[i].descriptor ? 0 : (uint32_t)cn);
        put32(&b, m[i].descriptor ? 0 : (uint32_t)usize);
        put16(&b, (uint16_t)nl);
        put16(&b, 4); /* an unknown extra field the reader must skip */
        put(&b, m[i].name, nl);
        put16(&b, 0xcafe);
        put16(&b, 0);
        put(&b, c, cn);
        if (m[i].descriptor) {
            put32(&b, 0x08074b50u);
            put32(&b, crc);
            put32(&b, (uint32_t)cn);
            put32(&b, (uint32_t)usize);
        }
        free(comp);
        put32(&cd, 0x02014b50u);
        put16(&cd, 20);
        put16(&cd, m[i].cd_zip64 ? 45 : 20);
        put16(&cd, flags);
        put16(&cd, method);
        put32(&cd, 0);
        put32(&cd, crc);
        put32(&cd, m[i].cd_zip64 ? 0xffffffffu : (uint32_t)cn);
        put32(&cd, m[i].cd_zip64 ? 0xffffffffu : (uint32_t)usize);
        put16(&cd, (uint16_t)nl);
        put16(&cd, m[i].cd_zip64 ? 28 + 4 : 0);
        put16(&cd, 0);
        put16(&cd, 0);
        put16(&cd, 0);
        put32(&cd, 0);
        put32(&cd, m[i].cd_zip64 ? 0xffffffffu : (uint32_t)(off + m[i].offset_add));
        put(&cd, m[i].name, nl);
        if (m[i].cd_zip64) {
            put16(&cd, 0x5455); /* another extra first: extended timestamp */
            put16(&cd, 0);
            put16(&cd, 1);
            put16(&cd, 24);
            put64(&cd, usize);
            put64(&cd, cn);
            put64(&cd, off + m[i].offset_add);
        }
    }
    uint64_t cd_off = b.n;
    put(&b, cd.p, cd.n);
    if (zip64_end) {
        uint64_t rec = b.n;
        put32(&b, 0x06064b50u);
        put64(&b, 44);
        put16(&b, 45);
        put16(&b, 45);
        put32(&b, 0);
        put32(&b, 0);
        put64(&b, nm);
        put64(&b, nm);
        put64(&b, cd.n);
        put64(&b, cd_off);
        put32(&b, 0x07064b50u);
        put32(&b, 0);
        put64(&b, rec);
        put32(&b, 1);
    }
    size_t cl = comment ? strlen(comment) : 0;
    put32(&b, 0x06054b50u);
    put16(&b, 0);
    put16(&b, 0);
    put16(&b, zip64_end ? 0xffff : (uint16_t)nm);
    put16(&b, zip64_end ? 0xffff : (uint16_t)nm);
    put32(&b, zip64_end ? 0xffffffffu : (uint32_t)cd.n);
    put32(&b, zip64_end ? 0xffffffffu : (uint32_t)cd_off);
    put16(&b, (uint16_t)cl);
    if (cl)
        put(&b, comment, cl);
    tu_write_file(path, b.p, b.n);
    free(b.p);
    free(cd.p);
}

/* An NPY member: dict padded to 64, then n floats 0.5 * i. */
static unsigned char *npy_member(const char *descr, int64_t n, size_t *len)
{
    char dict[128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': "
                      "(%lld,), }", descr, (long long)n);
    size_t hl = 64 * (((size_t)dl + 11) / 64 + 1) - 10;
    size_t es = 4;
    unsigned char *p = malloc(10 + hl + (size_t)n * es);
    memcpy(p, "\x93NUMPY\x01\x00", 8);
    p[8] = (unsigned char)hl;
    p[9] = (unsigned char)(hl >> 8);
    memset(p + 10, ' ', hl);
    memcpy(p + 10, dict, (size_t)dl);
    p[10 + hl - 1] = '\n';
    for (int64_t i = 0; i < n; i++) {
        float v = 0.5f * (float)i;
        memcpy(p + 10 + hl + (size_t)i * es, &v, 4);
    }
    *len = 10 + hl + (size_t)n * es;
    return p;
}

static void check_floats(const char *spec, int64_t n)
{
    float *f;
    posenc_error err = { 0 };
    if (posenc_read_all(spec, NULL, POSENC_DT_F32, 1 << 24, NULL, (void **)&f, &err))
        fail_msg("%s: %s", spec, err.msg);
    for (int64_t i = 0; i < n; i++)
        assert_true(f[i] == 0.5f * (float)i);
    free(f);
}

static void test_handmade_archives(void **state)
{
    (void)state;
    size_t la, lb;
    unsigned char *a = npy_member("<f4", 1000, &la), *b = npy_member("<f4", 3, &lb);
    /* ZIP64 central directory, ZIP64 end record, a comment, a data descriptor, extra fields */
    struct zm m[] = {
        { .name = "a.npy", .data = a, .n = la, .deflate = 1, .cd_zip64 = 1, .usize = -1 },
        { .name = "b.npy", .data = b, .n = lb, .descriptor = 1, .usize = -1 },
        { .name = "notes.txt", .data = (const unsigned char *)"hi", .n = 2, .usize = -1 },
        { .name = "meta.json", .data = (const unsigned char *)"{\"k\": [1, 2]}", .n = 13,
          .usize = -1 },
    };
    build_zip(tu_path("h.npz"), m, 4, 1, "a comment with PK\x05\x06 inside");
    posenc_container *c;
    posenc_error err = { 0 };
    if (posenc_container_open(tu_path("h.npz"), NULL, &c, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(posenc_container_count(c), 2); /* notes.txt is not an array */
    assert_string_equal(posenc_container_meta(c), "{\"k\": [1, 2]}");
    posenc_container_close(c);
    check_floats(tu_path("h.npz:a"), 1000);
    check_floats(tu_path("h.npz:b"), 3);
    /* a deflated member with a data descriptor */
    m[0].cd_zip64 = 0;
    m[0].descriptor = 1;
    build_zip(tu_path("h2.npz"), m, 2, 0, NULL);
    check_floats(tu_path("h2.npz:a"), 1000);
    /* an empty archive (PK\5\6 only) */
    build_zip(tu_path("empty.npz"), m, 0, 0, NULL);
    assert_int_equal(posenc_container_open(tu_path("empty.npz"), NULL, &c, &err), POSENC_OK);
    assert_int_equal(posenc_container_count(c), 0);
    posenc_container_close(c);
    posenc_reader *r;
    assert_int_equal(posenc_reader_open(tu_path("empty.npz"), NULL, &r, &err), POSENC_ENOTFOUND);
    free(a);
    free(b);
}

static void test_bad_archives(void **state)
{
    (void)state;
    size_t la;
    unsigned char *a = npy_member("<f4", 1000, &la);
    posenc_error err = { 0 };
    float *buf = malloc(1000 * sizeof *buf);
    struct zm m = { .name = "a.npy", .data = a, .n = la, .usize = -1 };
    /* no end of central directory */
    static const char noeocd[] = "PK\x03\x04 and nothing else, really nothing at all";
    tu_write_file(tu_path("x.npz"), noeocd, sizeof noeocd - 1);
    tu_expect_open_error(tu_path("x.npz"), NULL, POSENC_EFORMAT, "no end of central directory");
    tu_write_file(tu_path("x.npz"), "PK\x03\x04", 4);
    tu_expect_open_error(tu_path("x.npz"), NULL, POSENC_EFORMAT, "too short");
    /* CRC mismatch: stored and deflated, found when the member has been read to its end */
    for (int def = 0; def <= 1; def++) {
        m.deflate = def;
        m.crc_xor = 0x10;
        build_zip(tu_path("crc.npz"), &m, 1, 0, NULL);
        assert_int_equal(read_member(tu_path("crc.npz"), buf, 999, &err), POSENC_OK);
        assert_int_equal(read_member(tu_path("crc.npz"), buf, 1000, &err), POSENC_EFORMAT);
        assert_non_null(strstr(err.msg, "fails its CRC-32 check"));
        m.crc_xor = 0;
    }
    /* flipped data bytes in a stored member: CRC */
    build_zip(tu_path("flip.npz"), &m, 1, 0, NULL);
    {
        size_t n;
        unsigned char *z = tu_slurp(tu_path("flip.npz"), &n);
        z[30 + 5 + 4 + 500] ^= 1;
        tu_write_file(tu_path("flip.npz"), z, n);
        free(z);
    }
    assert_int_equal(read_member(tu_path("flip.npz"), buf, 1000, &err), POSENC_EFORMAT);
    assert_non_null(strstr(err.msg, "CRC-32"));
    /* corrupt deflate data */
    size_t cn;
    unsigned char *comp = raw_deflate(a, la, &cn);
    unsigned char *bad = malloc(cn);
    memcpy(bad, comp, cn);
    for (size_t i = cn / 3; i < cn; i++)
        bad[i] = 0xff;
    struct zm d = { .name = "a.npy", .data = a, .n = la, .deflate = 1, .comp = bad, .ncomp = cn,
                    .usize = -1 };
    build_zip(tu_path("cor.npz"), &d, 1, 0, NULL);
    posenc_status st = read_member(tu_path("cor.npz"), buf, 1000, &err);
    assert_int_equal(st, POSENC_EFORMAT);
    /* truncated deflate data (the archive itself is consistent) */
    d.comp = comp;
    d.ncomp = cn / 2;
    build_zip(tu_path("tr.npz"), &d, 1, 0, NULL);
    assert_int_equal(read_member(tu_path("tr.npz"), buf, 1000, &err), POSENC_EFORMAT);
    assert_non_null(strstr(err.msg, "truncated"));
    /* a zip bomb: the stream inflates to more than declared */
    {
        size_t big = la + 100000, bn;
        unsigned char *bomb = calloc(1, big);
        memcpy(bomb, a, la);
        unsigned char *bc = raw_deflate(bomb, big, &bn);
        struct zm zb = { .name = "a.npy", .data = a, .n = la, .deflate = 1, .comp = bc,
                         .ncomp = bn, .usize = -1 };
        build_zip(tu_path("bomb.npz"), &zb, 1, 0, NULL);
        assert_int_equal(read_member(tu_path("bomb.npz"), buf, 1000, &err), POSENC_EFORMAT);
        assert_non_null(strstr(err.msg, "inflates to more than its declared"));
        free(bomb);
        free(bc);
    }
    /* declared size disagrees with the NPY header's shape */
    m.usize = (int64_t)la + 4000;
    build_zip(tu_path("sz.npz"), &m, 1, 0, NULL);
    tu_expect_open_error(tu_path("sz.npz"), NULL, POSENC_EFORMAT, "but its NPY header needs");
    m.usize = -1;
    /* the local header offset points past the central directory */
    m.offset_add = 1u << 20;
    build_zip(tu_path("off.npz"), &m, 1, 0, NULL);
    tu_expect_open_error(tu_path("off.npz"), NULL, POSENC_EFORMAT, "lies outside the file");
    m.offset_add = 3; /* a bogus local header */
    build_zip(tu_path("off.npz"), &m, 1, 0, NULL);
    tu_expect_open_error(tu_path("off.npz"), NULL, POSENC_EFORMAT, "no local header");
    m.offset_add = 0;
    /* unsupported compression method */
    m.method = 12;
    build_zip(tu_path("bz.npz"), &m, 1, 0, NULL);
    tu_expect_open_error(tu_path("bz.npz"), NULL, POSENC_EUNSUPPORTED, "compression method 12");
    m.method = 0;
    /* '<V2' without a sidecar, then with meta.json naming it bf16 */
    static const char bf16_meta[] = "{\"posenc_dtypes\":{\"h\":\"bf16\"}}";
    size_t lv;
    unsigned char *v = npy_member("<V2", 10, &lv);
    lv = lv - 40 + 20; /* 10 elements of 2 bytes */
    struct zm vm[2] = {
        { .name = "h.npy", .data = v, .n = lv, .usize = -1 },
        { .name = "meta.json", .data = (const unsigned char *)bf16_meta,
          .n = sizeof bf16_meta - 1, .usize = -1 },
    };
    build_zip(tu_path("v2.npz"), vm, 1, 0, NULL);
    tu_expect_opaque(tu_path("v2.npz"), "'<V2' is opaque; pass --assume-bf16");
    build_zip(tu_path("v2.npz"), vm, 2, 0, NULL);
    posenc_container *c;
    if (posenc_container_open(tu_path("v2.npz"), NULL, &c, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(posenc_container_array(c, 0)->dtype, POSENC_DT_BF16);
    posenc_container_close(c);
    /* meta.json that is not a JSON object */
    vm[1].data = (const unsigned char *)"[1, 2, 3]";
    vm[1].n = 9;
    build_zip(tu_path("mj.npz"), vm, 2, 0, NULL);
    tu_expect_open_error(tu_path("mj.npz"), NULL, POSENC_EFORMAT, "meta.json is not a JSON object");
    free(v);
    /* a malformed NPY header inside a member names the member */
    static const char junk[] = "\x93NUMPY\x01\x00\x28\x00"
                               "{'descr': '<q7', 'fortran_order': False}";
    struct zm jm = { .name = "j.npy", .data = (const unsigned char *)junk,
                     .n = sizeof junk - 1, .usize = -1 };
    build_zip(tu_path("j.npz"), &jm, 1, 0, NULL);
    tu_expect_open_error(tu_path("j.npz"), NULL, POSENC_EFORMAT, "j.npz:j'");
    /* member count cap and central directory bounds: patch the end record */
    build_zip(tu_path("cap.npz"), &m, 1, 1, NULL);
    {
        size_t n;
        unsigned char *z = tu_slurp(tu_path("cap.npz"), &n);
        unsigned char *rec = z + n - 22 - 20 - 56;
        assert_int_equal(rd32(rec), 0x06064b50u);
        rec[32 + 2] = 0x10; /* 1 + 0x100000 members */
        tu_write_file(tu_path("cap.npz"), z, n);
        tu_expect_open_error(tu_path("cap.npz"), NULL, POSENC_ERANGE, "zip members (at most 65536)");
        rec[32 + 2] = 0;
        rec[48 + 3] = 0x40; /* central directory offset far past the end */
        tu_write_file(tu_path("cap.npz"), z, n);
        tu_expect_open_error(tu_path("cap.npz"), NULL, POSENC_EFORMAT,
                          "central directory lies outside");
        free(z);
    }
    /* a name over the cap (4096 bytes) */
    {
        char *longname = malloc(5001);
        memset(longname, 'n', 5000);
        memcpy(longname + 4996, ".npy", 5);
        struct zm ln = { .name = longname, .data = a, .n = la, .usize = -1 };
        build_zip(tu_path("ln.npz"), &ln, 1, 0, NULL);
        tu_expect_open_error(tu_path("ln.npz"), NULL, POSENC_EFORMAT, "too long");
        free(longname);
    }
    /* the central directory truncated: claimed entry count exceeds its size */
    {
        struct zm two[2] = { m, m };
        two[1].name = "b.npy";
        build_zip(tu_path("cd.npz"), two, 2, 0, NULL);
        size_t n;
        unsigned char *z = tu_slurp(tu_path("cd.npz"), &n);
        z[n - 22 + 8] = 3;
        z[n - 22 + 10] = 3;
        tu_write_file(tu_path("cd.npz"), z, n);
        tu_expect_open_error(tu_path("cd.npz"), NULL, POSENC_EFORMAT, "central directory");
        free(z);
    }
    free(comp);
    free(bad);
    free(a);
    free(buf);
}

static void test_writer_no_partial(void **state)
{
    (void)state;
    posenc_writer *w;
    posenc_error err = { 0 };
    posenc_array_info a = { .name = "x", .dtype = POSENC_DT_F64, .ndim = 1, .shape = { 100 } };
    double v[100] = { 0 };
    for (int compress = 0; compress <= 1; compress++) {
        posenc_write_opts o = { POSENC_FMT_NPZ, compress };
        assert_int_equal(posenc_writer_open(tu_path("partial.npz"), &o, &w, &err), POSENC_OK);
        assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
        assert_int_equal(posenc_writer_write(w, v, 50, &err), POSENC_OK);
        assert_int_equal(count_entries(tu_dir, ".posenc-tmp-"), 1);
        assert_int_equal(count_entries(tu_dir, "-partial.npz"), 1);
        posenc_writer_abort(w);
        assert_int_equal(count_entries(tu_dir, "partial.npz"), 0);
        /* incomplete at commit */
        assert_int_equal(posenc_writer_open(tu_path("partial.npz"), &o, &w, &err), POSENC_OK);
        assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
        assert_int_equal(posenc_writer_write(w, v, 99, &err), POSENC_OK);
        assert_int_equal(posenc_writer_commit(w, &err), POSENC_EINVAL);
        assert_int_equal(count_entries(tu_dir, "partial.npz"), 0);
    }
    /* an existing file is replaced only by a complete one */
    tu_write_file(tu_path("keep.npz"), "old", 3);
    assert_int_equal(posenc_writer_open(tu_path("keep.npz"), NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, v, 10, &err), POSENC_OK);
    posenc_writer_abort(w);
    size_t n;
    unsigned char *k = tu_slurp(tu_path("keep.npz"), &n);
    assert_int_equal(n, 3);
    free(k);
    /* an archive with only metadata (no arrays) is valid */
    assert_int_equal(posenc_writer_open(tu_path("m.npz"), NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_meta(w, "only", "true", &err), POSENC_OK);
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
    posenc_container *c;
    assert_int_equal(posenc_container_open(tu_path("m.npz"), NULL, &c, &err), POSENC_OK);
    assert_int_equal(posenc_container_count(c), 0);
    assert_string_equal(posenc_container_meta(c), "{\"only\":true}");
    posenc_container_close(c);
}

/* The ZIP64 end record and locator, as the zip writer emits them past 65534 entries or 4 GiB
 * (forced here so the test stays small); posenc and Python's zipfile must both follow them. */
static void write_z64(void)
{
    posenc_error err = { 0 };
    FILE *fp = fopen(tu_path("z64.npz"), "wb");
    assert_non_null(fp);
    pe_zipw *zw;
    assert_int_equal(pe_zipw_new(fp, "z64.npz", &zw, &err), POSENC_OK);
    pe_zipw_force_zip64(zw);
    for (int i = 0; i < 3; i++) {
        size_t len;
        unsigned char *m = npy_member("<f4", 100 * (i + 1), &len);
        char name[16];
        snprintf(name, sizeof name, "m%d.npy", i);
        assert_int_equal(pe_zipw_begin(zw, name, i == 1, &err), POSENC_OK);
        assert_int_equal(pe_zipw_data(zw, m, 7, &err), POSENC_OK);
        assert_int_equal(pe_zipw_data(zw, m + 7, len - 7, &err), POSENC_OK);
        assert_int_equal(pe_zipw_end(zw, &err), POSENC_OK);
        free(m);
    }
    assert_int_equal(pe_zipw_finish(zw, &err), POSENC_OK);
    pe_zipw_free(zw);
    assert_int_equal(fclose(fp), 0);
}

static void test_zip64_end_records(void **state)
{
    (void)state;
    write_z64();
    size_t n;
    unsigned char *z = tu_slurp(tu_path("z64.npz"), &n);
    assert_int_equal(rd32(z + n - 22), 0x06054b50u);
    assert_int_equal(rd32(z + n - 22 - 20), 0x07064b50u);
    const unsigned char *rec = z + rd64(z + n - 22 - 20 + 8);
    assert_int_equal(rd32(rec), 0x06064b50u);
    assert_int_equal(rd64(rec + 32), 3);
    free(z);
    check_floats(tu_path("z64.npz:m0"), 100);
    check_floats(tu_path("z64.npz:m1"), 200);
    check_floats(tu_path("z64.npz:m2"), 300);
}

/* ---- NumPy interop ---- */

static int have_numpy(void)
{
    return system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

static const char *script(void)
{
    static char buf[1024];
    const char *src = getenv("POSENC_SRC");
    snprintf(buf, sizeof buf, "%s/tests/interop/npz_interop.py", src && *src ? src : ".");
    return buf;
}

static void test_numpy_interop(void **state)
{
    (void)state;
    if (!have_numpy())
        skip();
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' make '%s'", script(), tu_dir);
    assert_int_equal(system(cmd), 0);
    /* np.savez and np.savez_compressed: every array exactly (npz_interop.py's values) */
    static const char *files[] = { "np_savez.npz", "np_savez_compressed.npz" };
    for (int f = 0; f < 2; f++) {
        posenc_container *c;
        posenc_error err = { 0 };
        if (posenc_container_open(tu_path(files[f]), NULL, &c, &err))
            fail_msg("%s: %s", files[f], err.msg);
        assert_int_equal(posenc_container_count(c), 5);
        posenc_container_close(c);
        char spec[600];
        double *d;
        posenc_array_info info;
        snprintf(spec, sizeof spec, "%s:cos", tu_path(files[f]));
        assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F64, 1 << 26, &info, (void **)&d,
                                         &err), POSENC_OK);
        assert_int_equal(info.dtype, POSENC_DT_F32);
        assert_int_equal(info.shape[0], 1000);
        for (int i = 0; i < 1000 * 64; i++)
            assert_true(d[i] == (double)(float)((double)(i % 997) * 0.001));
        free(d);
        snprintf(spec, sizeof spec, "%s:pos", tu_path(files[f]));
        assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F64, 1 << 20, &info, (void **)&d,
                                         &err), POSENC_OK);
        assert_int_equal(info.dtype, POSENC_DT_I64);
        for (int i = 0; i < 100; i++)
            assert_true(d[i] == 3.0 * i - 50);
        free(d);
        snprintf(spec, sizeof spec, "%s:be", tu_path(files[f]));
        assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F64, 1 << 20, &info, (void **)&d,
                                         &err), POSENC_OK);
        for (int i = 0; i < 24; i++)
            assert_true(d[i] == i * 0.25);
        free(d);
        snprintf(spec, sizeof spec, "%s:fort", tu_path(files[f]));
        assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F64, 1 << 20, &info, (void **)&d,
                                         &err), POSENC_OK);
        for (int i = 0; i < 24; i++)
            assert_true(d[i] == i * 1.5);
        free(d);
        snprintf(spec, sizeof spec, "%s:h", tu_path(files[f]));
        assert_int_equal(posenc_read_all(spec, NULL, POSENC_DT_F64, 1 << 20, &info, (void **)&d,
                                         &err), POSENC_OK);
        assert_int_equal(info.dtype, POSENC_DT_F16);
        for (int i = 0; i < 10; i++)
            assert_true(d[i] == i - 4.5);
        free(d);
    }
    /* numpy reads posenc's archives (s.npz, d.npz from the round trips; written again here) */
    write_all_dtypes(tu_path("pe_stored.npz"), 0);
    write_all_dtypes(tu_path("pe_deflated.npz"), 1);
    if (!tu_exists(tu_path("z64.npz")))
        write_z64(); /* test_zip64_end_records's archive, when this test runs alone */
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' check '%s'", script(), tu_dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_stored),    cmocka_unit_test(test_roundtrip_deflated),
        cmocka_unit_test(test_interleaved_readers), cmocka_unit_test(test_member_specs),
        cmocka_unit_test(test_zip64_local_headers), cmocka_unit_test(test_handmade_archives),
        cmocka_unit_test(test_bad_archives),        cmocka_unit_test(test_writer_no_partial),
        cmocka_unit_test(test_zip64_end_records),   cmocka_unit_test(test_numpy_interop),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
