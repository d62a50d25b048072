/* test_npy.c: the generic I/O layer and the NPY and directory formats: round trips for every
 * dtype, header bytes as numpy writes them, versions 1/2/3, big-endian, Fortran order, the
 * tolerant header parser, every malformed input (bytes written here), streaming from a pipe,
 * the writer's checks and its no-partial-file guarantee, and NumPy interop (np.save files read
 * exactly; np.load reads posenc's files bit-identically). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "posenc/io.h"

/* An NPY file: version, dict text (padded by the caller or not), then data. */
static size_t make_npy(unsigned char *out, int major, const char *dict, const void *data,
                       size_t nd)
{
    size_t hl = strlen(dict), p;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    if (major == 1) {
        out[8] = (unsigned char)hl;
        out[9] = (unsigned char)(hl >> 8);
        p = 10;
    } else {
        out[8] = (unsigned char)hl;
        out[9] = (unsigned char)(hl >> 8);
        out[10] = (unsigned char)(hl >> 16);
        out[11] = (unsigned char)(hl >> 24);
        p = 12;
    }
    memcpy(out + p, dict, hl);
    if (nd)
        memcpy(out + p + hl, data, nd);
    return p + hl + nd;
}

/* Number of directory entries in tu_dir whose name contains s. */
static int count_entries(const char *dir, const char *s)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' || strstr(e->d_name, ".posenc-tmp"))
            n += strstr(e->d_name, s) != NULL;
    closedir(d);
    return n;
}

static void fill(posenc_dtype dt, void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case POSENC_DT_F16:
        case POSENC_DT_BF16: ((uint16_t *)buf)[i] = (uint16_t)(i * 7919u + 3); break;
        case POSENC_DT_F32: ((float *)buf)[i] = (float)i * 0.25f - 1.5f; break;
        case POSENC_DT_F64: ((double *)buf)[i] = ((double)i - 20.0) / 7.0 * 1e10; break;
        case POSENC_DT_I32: ((int32_t *)buf)[i] = (int32_t)(i * 100003u) - 7; break;
        case POSENC_DT_I64: ((int64_t *)buf)[i] = ((int64_t)i << 33) - 5; break;
        case POSENC_DT_U8: ((uint8_t *)buf)[i] = (uint8_t)(i * 37); break;
        default: break;
        }
    }
}

static posenc_status write_one(const char *path, const posenc_array_info *a, const void *data,
                               uint64_t n, posenc_error *err)
{
    posenc_writer *w;
    posenc_status st = posenc_writer_open(path, NULL, &w, err);
    if (st)
        return st;
    if ((st = posenc_writer_declare(w, a, err)) || (st = posenc_writer_write(w, data, n, err))) {
        posenc_writer_abort(w);
        return st;
    }
    return posenc_writer_commit(w, err);
}

/* ---- round trips ---- */

static void test_roundtrip_dtypes(void **state)
{
    (void)state;
    for (int dt = 0; dt < POSENC_DT_COUNT; dt++) {
        posenc_array_info a = { .dtype = (posenc_dtype)dt, .ndim = 3, .shape = { 3, 5, 7 } };
        size_t n = 105, es = posenc_dtype_size(a.dtype);
        unsigned char *in = malloc(n * es), *out = malloc(n * es);
        fill(a.dtype, in, n);
        posenc_error err = { 0 };
        const char *p = tu_path("rt.npy");
        assert_int_equal(write_one(p, &a, in, n, &err), POSENC_OK);
        posenc_read_opts o = { .assume_bf16 = dt == POSENC_DT_BF16 };
        posenc_reader *r;
        assert_int_equal(posenc_reader_open(p, &o, &r, &err), POSENC_OK);
        const posenc_array_info *ri = posenc_reader_info(r);
        assert_int_equal(ri->dtype, dt);
        assert_int_equal(ri->ndim, 3);
        assert_int_equal(ri->shape[2], 7);
        assert_string_equal(ri->name, "rt");
        /* in uneven pieces */
        assert_int_equal(posenc_reader_read(r, out, 10, &err), POSENC_OK);
        assert_int_equal(posenc_reader_read(r, out + 10 * es, 95, &err), POSENC_OK);
        assert_memory_equal(in, out, n * es);
        /* one more element is past the end */
        assert_int_equal(posenc_reader_read(r, out, 1, &err), POSENC_EFORMAT);
        assert_non_null(strstr(err.msg, "past the end"));
        posenc_reader_close(r);
        /* data starts at a multiple of 64 */
        size_t len;
        unsigned char *f = tu_slurp(p, &len);
        assert_int_equal((len - n * es) % 64, 0);
        assert_int_equal(f[len - n * es - 1], '\n');
        free(f);
        free(in);
        free(out);
    }
}

/* np.save's bytes for np.arange(12, dtype='<f4').reshape(3, 4) (numpy 1.24). */
static void test_header_bytes(void **state)
{
    (void)state;
    float v[12];
    for (int i = 0; i < 12; i++)
        v[i] = (float)i;
    posenc_array_info a = { .dtype = POSENC_DT_F32, .ndim = 2, .shape = { 3, 4 } };
    assert_int_equal(write_one(tu_path("h.npy"), &a, v, 12, NULL), POSENC_OK);
    size_t len;
    unsigned char *f = tu_slurp(tu_path("h.npy"), &len);
    const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    assert_int_equal(len, 128 + 48);
    assert_memory_equal(f, "\x93NUMPY\x01\x00\x76\x00", 10);
    assert_memory_equal(f + 10, want, strlen(want));
    for (size_t i = 10 + strlen(want); i < 127; i++)
        assert_int_equal(f[i], ' ');
    assert_int_equal(f[127], '\n');
    assert_memory_equal(f + 128, v, 48);
    free(f);
    /* 1-D and 0-D shapes are "(5,)" and "()" */
    posenc_array_info b = { .dtype = POSENC_DT_I64, .ndim = 1, .shape = { 5 } };
    int64_t iv[5] = { 1, 2, 3, 4, 5 };
    assert_int_equal(write_one(tu_path("h1.npy"), &b, iv, 5, NULL), POSENC_OK);
    f = tu_slurp(tu_path("h1.npy"), &len);
    assert_non_null(strstr((char *)f + 10, "'shape': (5,), }"));
    free(f);
    posenc_array_info c = { .dtype = POSENC_DT_F64, .ndim = 0 };
    double d = 2.5;
    assert_int_equal(write_one(tu_path("h0.npy"), &c, &d, 1, NULL), POSENC_OK);
    f = tu_slurp(tu_path("h0.npy"), &len);
    assert_non_null(strstr((char *)f + 10, "'shape': (), }"));
    assert_int_equal(len, 128 + 8); /* 60-byte dict + '\n' does not fit in 64 */
    free(f);
    posenc_array_info info;
    double *back;
    assert_int_equal(posenc_read_all(tu_path("h0.npy"), NULL, POSENC_DT_F64, 64, &info,
                                     (void **)&back, NULL), POSENC_OK);
    assert_int_equal(info.ndim, 0);
    assert_true(back[0] == 2.5);
    free(back);
}

static void test_versions(void **state)
{
    (void)state;
    unsigned char buf[4096];
    const float v[3] = { 1.5f, -2.0f, 3.25f };
    posenc_error err = { 0 };
    float *out;
    posenc_array_info info;
    /* version 2.0 (4-byte length), 3.0 (UTF-8), 1.0 with 16-byte NEP-1 padding */
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }  \n";
    for (int major = 1; major <= 3; major++) {
        size_t n = make_npy(buf, major, dict, v, sizeof v);
        tu_write_file(tu_path("v.npy"), buf, n);
        assert_int_equal(posenc_read_all(tu_path("v.npy"), NULL, POSENC_DT_F32, 1024, &info,
                                         (void **)&out, &err), POSENC_OK);
        assert_memory_equal(out, v, sizeof v);
        free(out);
    }
    /* version 2.0 with a header longer than 65535 bytes */
    size_t big = 70000;
    char *d2 = malloc(big + 1);
    size_t dl = strlen(dict) - 1;
    memcpy(d2, dict, dl);
    memset(d2 + dl, ' ', big - dl - 1);
    d2[big - 1] = '\n';
    d2[big] = '\0';
    unsigned char *b2 = malloc(big + 64);
    size_t n = make_npy(b2, 2, d2, v, sizeof v);
    tu_write_file(tu_path("v2big.npy"), b2, n);
    assert_int_equal(posenc_read_all(tu_path("v2big.npy"), NULL, POSENC_DT_F64, 1024, &info,
                                     (void **)&out, &err), POSENC_OK);
    assert_true(((double *)(void *)out)[2] == 3.25);
    free(out);
    free(d2);
    free(b2);
    /* version 4 does not exist */
    n = make_npy(buf, 2, dict, v, sizeof v);
    buf[6] = 4;
    tu_write_file(tu_path("v4.npy"), buf, n);
    tu_expect_open_error(tu_path("v4.npy"), NULL, POSENC_EUNSUPPORTED, "version 4.0");
}

static void test_tolerant_parser(void **state)
{
    (void)state;
    static const struct {
        const char *dict;
        int ndim;
        int64_t d0;
    } ok[] = {
        { "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f8'}", 2, 2 },
        { "{ \"descr\" : \"<f8\" , \"fortran_order\":False,\"shape\":( 6 , ) ,}\n", 1, 6 },
        { "{'descr':'<f8','fortran_order':False,'shape':(6L,)}", 1, 6 },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 6, 1), }\n\0\0", 3, 1 },
        { "{'descr': '<f8', 'fortran_order': True, 'shape': (6,), }", 1, 6 },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': [2, 3], }", 2, 2 },
    };
    double v[6] = { 1, 2, 3, 4, 5, 6 };
    unsigned char buf[512];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t dl = strlen(ok[i].dict) + (strstr(ok[i].dict, "\\0") ? 0 : 0);
        if (i == 3)
            dl += 2; /* trailing NULs */
        memcpy(buf, "\x93NUMPY\x01\x00", 8);
        buf[8] = (unsigned char)dl;
        buf[9] = 0;
        memcpy(buf + 10, ok[i].dict, dl);
        memcpy(buf + 10 + dl, v, sizeof v);
        tu_write_file(tu_path("tol.npy"), buf, 10 + dl + sizeof v);
        posenc_container *c;
        posenc_error err = { 0 };
        if (posenc_container_open(tu_path("tol.npy"), NULL, &c, &err) != POSENC_OK)
            fail_msg("dict %zu: %s", i, err.msg);
        assert_int_equal(posenc_container_count(c), 1);
        assert_int_equal(posenc_container_array(c, 0)->ndim, ok[i].ndim);
        assert_int_equal(posenc_container_array(c, 0)->shape[0], ok[i].d0);
        assert_int_equal(posenc_container_format(c), POSENC_FMT_NPY);
        assert_null(posenc_container_meta(c));
        posenc_container_close(c);
    }
}

static void test_big_endian(void **state)
{
    (void)state;
    unsigned char buf[512], data[64];
    /* >f8 1.0, -2.5 ; >i4 1, -2 ; >f2 1.0 ; >f4 0.5 */
    static const unsigned char f8[16] = { 0x3f, 0xf0, 0, 0, 0, 0, 0, 0,
                                          0xc0, 0x04, 0, 0, 0, 0, 0, 0 };
    static const unsigned char i4[8] = { 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe };
    memcpy(data, f8, 16);
    size_t n = make_npy(buf, 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }",
                        data, 16);
    tu_write_file(tu_path("be.npy"), buf, n);
    double *d;
    posenc_array_info info;
    assert_int_equal(posenc_read_all(tu_path("be.npy"), NULL, POSENC_DT_F64, 64, &info,
                                     (void **)&d, NULL), POSENC_OK);
    assert_true(d[0] == 1.0 && d[1] == -2.5);
    free(d);
    n = make_npy(buf, 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", i4, 8);
    tu_write_file(tu_path("be.npy"), buf, n);
    int32_t *iv;
    assert_int_equal(posenc_read_all(tu_path("be.npy"), NULL, POSENC_DT_I32, 64, &info,
                                     (void **)&iv, NULL), POSENC_OK);
    assert_int_equal(info.dtype, POSENC_DT_I32);
    assert_true(iv[0] == 1 && iv[1] == -2);
    free(iv);
    static const unsigned char f2[2] = { 0x3c, 0x00 }, f4[4] = { 0x3f, 0, 0, 0 };
    n = make_npy(buf, 1, "{'descr': '>f2', 'fortran_order': False, 'shape': (), }", f2, 2);
    tu_write_file(tu_path("be.npy"), buf, n);
    float *fv;
    assert_int_equal(posenc_read_all(tu_path("be.npy"), NULL, POSENC_DT_F32, 64, &info,
                                     (void **)&fv, NULL), POSENC_OK);
    assert_true(fv[0] == 1.0f);
    free(fv);
    n = make_npy(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", f4, 4);
    tu_write_file(tu_path("be.npy"), buf, n);
    assert_int_equal(posenc_read_all(tu_path("be.npy"), NULL, POSENC_DT_F32, 64, &info,
                                     (void **)&fv, NULL), POSENC_OK);
    assert_true(fv[0] == 0.5f);
    free(fv);
}

static void test_fortran(void **state)
{
    (void)state;
    /* shape (2, 3, 4), element (i, j, k) = 100 i + 10 j + k, stored column-major */
    int32_t f[24];
    for (int k = 0, e = 0; k < 4; k++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 2; i++)
                f[e++] = 100 * i + 10 * j + k;
    unsigned char buf[512];
    size_t n = make_npy(buf, 1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }",
                        f, sizeof f);
    tu_write_file(tu_path("f.npy"), buf, n);
    posenc_reader *r;
    posenc_error err = { 0 };
    assert_int_equal(posenc_reader_open(tu_path("f.npy"), NULL, &r, &err), POSENC_OK);
    int32_t c[24];
    assert_int_equal(posenc_reader_read(r, c, 5, &err), POSENC_OK);
    assert_int_equal(posenc_reader_read(r, c + 5, 19, &err), POSENC_OK);
    posenc_reader_close(r);
    for (int i = 0, e = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++)
                assert_int_equal(c[e++], 100 * i + 10 * j + k);
    /* big-endian and Fortran together */
    double bf[6];
    for (int j = 0, e = 0; j < 3; j++)
        for (int i = 0; i < 2; i++) {
            double v = 10.0 * i + j;
            unsigned char *p = (unsigned char *)&bf[e++], t;
            memcpy(p, &v, 8);
            for (int a = 0; a < 4; a++) {
                t = p[a];
                p[a] = p[7 - a];
                p[7 - a] = t;
            }
        }
    n = make_npy(buf, 1, "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }", bf,
                 sizeof bf);
    tu_write_file(tu_path("f.npy"), buf, n);
    double *d;
    assert_int_equal(posenc_read_all(tu_path("f.npy"), NULL, POSENC_DT_F64, 1024, NULL,
                                     (void **)&d, &err), POSENC_OK);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            assert_true(d[i * 3 + j] == 10.0 * i + j);
    free(d);
    /* a Fortran array over 1 GiB is refused before any allocation */
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (20000, 20000), }",
                 NULL, 0);
    tu_write_file(tu_path("f.npy"), buf, n);
    tu_expect_open_error(tu_path("f.npy"), NULL, POSENC_ERANGE, "at most 1 GiB");
}

static void test_dtypes_descr(void **state)
{
    (void)state;
    unsigned char buf[512], data[8] = { 0x80, 0x3f, 0, 0x40, 0, 0, 0, 0 };
    size_t n;
    /* '<V2' is opaque unless the caller says it is bf16 */
    n = make_npy(buf, 1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", data, 4);
    tu_write_file(tu_path("v2.npy"), buf, n);
    tu_expect_opaque(tu_path("v2.npy"), "dtype '<V2' is opaque; pass --assume-bf16 if it is bfloat16");
    posenc_read_opts o = { .assume_bf16 = 1 };
    float *f;
    posenc_array_info info;
    assert_int_equal(posenc_read_all(tu_path("v2.npy"), &o, POSENC_DT_F32, 64, &info, (void **)&f,
                                     NULL), POSENC_OK);
    assert_int_equal(info.dtype, POSENC_DT_BF16);
    assert_true(f[0] == 1.0f && f[1] == 2.0f);
    free(f);
    n = make_npy(buf, 1, "{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }", data, 4);
    tu_write_file(tu_path("v2.npy"), buf, n);
    assert_int_equal(posenc_read_all(tu_path("v2.npy"), &o, POSENC_DT_F32, 64, &info, (void **)&f,
                                     NULL), POSENC_OK);
    free(f);
    /* the literal 'bfloat16' needs no flag */
    n = make_npy(buf, 1, "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (2,), }",
                 data, 4);
    tu_write_file(tu_path("v2.npy"), buf, n);
    assert_int_equal(posenc_read_all(tu_path("v2.npy"), NULL, POSENC_DT_F32, 64, &info,
                                     (void **)&f, NULL), POSENC_OK);
    assert_true(f[1] == 2.0f);
    free(f);
    /* u1 */
    n = make_npy(buf, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", data, 3);
    tu_write_file(tu_path("u.npy"), buf, n);
    int64_t *iv;
    assert_int_equal(posenc_read_all(tu_path("u.npy"), NULL, POSENC_DT_I64, 64, &info,
                                     (void **)&iv, NULL), POSENC_OK);
    assert_true(iv[0] == 0x80 && iv[1] == 0x3f && iv[2] == 0);
    free(iv);
    /* refused */
    static const struct {
        const char *dict;
        posenc_status code;
        const char *msg;
    } bad[] = {
        { "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", POSENC_EUNSUPPORTED,
          "object dtype '|O' is refused" },
        { "{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }", POSENC_EUNSUPPORTED,
          "dtype '<i2' is not supported" },
        { "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", POSENC_EUNSUPPORTED,
          "dtype '<c8'" },
        { "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
          POSENC_EUNSUPPORTED, "structured" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", POSENC_EFORMAT,
          "negative dimension -3" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
          POSENC_ERANGE, "too large" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
          POSENC_ERANGE, "overflows" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
          POSENC_EUNSUPPORTED, "more than 8 dimensions" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", POSENC_EFORMAT,
          "unexpected key 'x'" },
        { "{'descr': '<f4', 'shape': (1,), }", POSENC_EFORMAT, "missing key 'fortran_order'" },
        { "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", POSENC_EFORMAT,
          "fortran_order is not True or False" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (1, a), }", POSENC_EFORMAT,
          "malformed NPY header" },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x", POSENC_EFORMAT,
          "text after the dictionary" },
        { "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
          POSENC_EFORMAT, "duplicate key" },
        { "{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }", POSENC_EFORMAT,
          "malformed NPY header" },
        { "", POSENC_EFORMAT, "not a dictionary" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = make_npy(buf, 1, bad[i].dict, data, 8);
        tu_write_file(tu_path("bad.npy"), buf, n);
        tu_expect_open_error(tu_path("bad.npy"), NULL, bad[i].code, bad[i].msg);
    }
}

static void test_malformed_files(void **state)
{
    (void)state;
    unsigned char buf[512];
    const float v[4] = { 1, 2, 3, 4 };
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
    /* not NPY at all (forced format) */
    tu_write_file(tu_path("junk.npy"), "hello world, not numpy", 22);
    posenc_read_opts npy = { 0, POSENC_FMT_NPY };
    tu_expect_open_error(tu_path("junk.npy"), &npy, POSENC_EFORMAT, "not an NPY file");
    /* sniffing: .npy goes to the NPY reader, an unknown name is an unknown format */
    tu_expect_open_error(tu_path("junk.npy"), NULL, POSENC_EFORMAT, "not an NPY file");
    tu_write_file(tu_path("junk.dat"), "hello world, not numpy", 22);
    tu_expect_open_error(tu_path("junk.dat"), NULL, POSENC_EFORMAT, "unknown file format");
    /* magic only */
    tu_write_file(tu_path("m.npy"), "\x93NUMPY\x01", 7);
    tu_expect_open_error(tu_path("m.npy"), NULL, POSENC_EFORMAT, "truncated");
    /* header length past the end of the file */
    size_t n = make_npy(buf, 1, dict, NULL, 0);
    buf[8] = 0xff;
    buf[9] = 0x7f;
    tu_write_file(tu_path("hl.npy"), buf, n);
    tu_expect_open_error(tu_path("hl.npy"), NULL, POSENC_EFORMAT, "truncated");
    /* header over 1 MiB (version 2) */
    n = make_npy(buf, 2, dict, NULL, 0);
    buf[10] = 0x20; /* 0x00200000 + len */
    tu_write_file(tu_path("hbig.npy"), buf, n);
    tu_expect_open_error(tu_path("hbig.npy"), NULL, POSENC_EFORMAT, "too large (at most 1 MiB)");
    /* data shorter than the shape says: caught at open for a regular file */
    n = make_npy(buf, 1, dict, v, 12);
    tu_write_file(tu_path("short.npy"), buf, n);
    tu_expect_open_error(tu_path("short.npy"), NULL, POSENC_EFORMAT,
                      "truncated data: shape (4,) of f32 needs 16 bytes, the file holds 12");
    /* trailing bytes after the data are ignored, as numpy does */
    n = make_npy(buf, 1, dict, v, 16);
    memcpy(buf + n, "xyz", 3);
    tu_write_file(tu_path("long.npy"), buf, n + 3);
    float *f;
    assert_int_equal(posenc_read_all(tu_path("long.npy"), NULL, POSENC_DT_F32, 64, NULL,
                                     (void **)&f, NULL), POSENC_OK);
    assert_memory_equal(f, v, 16);
    free(f);
    /* a missing file and a directory named .npy */
    tu_expect_open_error(tu_path("none.npy"), NULL, POSENC_EIO, "No such file or directory");
    /* a member name on a single-array file that does not match */
    posenc_reader *r;
    posenc_error err = { 0 };
    /* read_all refuses arrays over max_bytes */
    assert_int_equal(posenc_read_all(tu_path("long.npy"), NULL, POSENC_DT_F64, 16, NULL,
                                     (void **)&f, &err), POSENC_ERANGE);
    assert_non_null(strstr(err.msg, "larger than 16 bytes"));
    (void)r;
}

/* Feed bytes through a pipe: the reader must stream without seeking and notice truncation. */
static posenc_status read_through_fifo(const unsigned char *bytes, size_t n, float *out,
                                       size_t nelem, int use_stdin, posenc_error *err)
{
    const char *fifo = tu_path("pipe.npy");
    int pfd[2] = { -1, -1 };
    unlink(fifo);
    if (use_stdin)
        assert_int_equal(pipe(pfd), 0);
    else
        assert_int_equal(mkfifo(fifo, 0600), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = use_stdin ? pfd[1] : open(fifo, O_WRONLY);
        if (use_stdin)
            close(pfd[0]);
        size_t off = 0;
        while (off < n) {
            ssize_t k = write(fd, bytes + off, n - off > 1000 ? 1000 : n - off);
            if (k <= 0)
                _exit(1);
            off += (size_t)k;
        }
        _exit(0);
    }
    int saved = -1;
    if (use_stdin) {
        close(pfd[1]);
        saved = dup(0);
        dup2(pfd[0], 0);
        close(pfd[0]);
        clearerr(stdin);
    }
    posenc_reader *r;
    posenc_status st = posenc_reader_open(use_stdin ? "-" : fifo, NULL, &r, err);
    if (!st) {
        st = posenc_reader_read(r, out, nelem, err);
        posenc_reader_close(r);
    }
    if (use_stdin) {
        /* drain so the child never blocks, then restore fd 0 */
        char sink[4096];
        while (fread(sink, 1, sizeof sink, stdin) > 0)
            ;
        dup2(saved, 0);
        close(saved);
        clearerr(stdin);
    } else {
        /* a reader that failed early may leave the writer blocked: open and drain */
        int fd = open(fifo, O_RDONLY | O_NONBLOCK);
        char sink[4096];
        if (fd >= 0) {
            while (read(fd, sink, sizeof sink) > 0)
                ;
            close(fd);
        }
    }
    int status;
    waitpid(pid, &status, 0);
    unlink(fifo);
    return st;
}

static void test_streaming(void **state)
{
    (void)state;
    float v[3000];
    for (int i = 0; i < 3000; i++)
        v[i] = (float)i * 0.5f;
    static unsigned char buf[16384];
    size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3000,), }",
                        v, sizeof v);
    float out[3000];
    posenc_error err = { 0 };
    for (int use_stdin = 0; use_stdin <= 1; use_stdin++) {
        memset(out, 0, sizeof out);
        assert_int_equal(read_through_fifo(buf, n, out, 3000, use_stdin, &err), POSENC_OK);
        assert_memory_equal(out, v, sizeof v);
        /* truncated: caught on read */
        assert_int_equal(read_through_fifo(buf, n - 100, out, 3000, use_stdin, &err),
                         POSENC_EFORMAT);
        assert_non_null(strstr(err.msg, "truncated"));
    }
}

/* ---- writers ---- */

static void test_writer_checks(void **state)
{
    (void)state;
    posenc_writer *w;
    posenc_error err = { 0 };
    posenc_array_info a = { .name = "a", .dtype = POSENC_DT_F32, .ndim = 1, .shape = { 4 } };
    float v[8] = { 0 };
    /* NPY holds one array */
    assert_int_equal(posenc_writer_open(tu_path("w.npy"), NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "holds one array"));
    /* writing past the declared size */
    assert_int_equal(posenc_writer_write(w, v, 5, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "past the declared arrays"));
    assert_int_equal(posenc_writer_write(w, v, 3, &err), POSENC_OK);
    /* a temporary lives beside the target until commit */
    assert_int_equal(count_entries(tu_dir, ".posenc-tmp-"), 1);
    assert_int_equal(count_entries(tu_dir, "-w.npy"), 1);
    /* declare after data */
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "before writing"));
    /* commit with an incomplete array fails and leaves nothing */
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "incomplete (3 of 4"));
    assert_int_equal(count_entries(tu_dir, "w.npy"), 0);
    /* abort leaves nothing */
    assert_int_equal(posenc_writer_open(tu_path("w.npy"), NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, v, 2, &err), POSENC_OK);
    posenc_writer_abort(w);
    assert_int_equal(count_entries(tu_dir, "w.npy"), 0);
    posenc_writer_abort(NULL);
    /* a failed commit leaves no file: the target directory vanished */
    const char *sub = tu_path("gone");
    assert_int_equal(mkdir(sub, 0777), 0);
    char target[600];
    snprintf(target, sizeof target, "%s/x.npy", sub);
    assert_int_equal(posenc_writer_open(target, NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, v, 4, &err), POSENC_OK);
    assert_int_equal(count_entries(sub, ".posenc-tmp-"), 1);
    /* replace the directory by a file so that the rename fails */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "chmod 0500 '%s'", sub);
    assert_int_equal(system(cmd), 0);
    posenc_status st = posenc_writer_commit(w, &err);
    if (geteuid() != 0) { /* root ignores directory permissions */
        assert_int_equal(st, POSENC_EIO);
        assert_non_null(strstr(err.msg, "cannot write"));
    }
    snprintf(cmd, sizeof cmd, "chmod 0700 '%s'", sub);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(count_entries(sub, ".posenc-tmp-"), 0);
    /* invalid shapes and names */
    assert_int_equal(posenc_writer_open(tu_path("w.npz"), NULL, &w, &err), POSENC_OK);
    posenc_array_info neg = { .name = "n", .dtype = POSENC_DT_F32, .ndim = 1, .shape = { -1 } };
    assert_int_equal(posenc_writer_declare(w, &neg, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "negative dimension"));
    posenc_array_info noname = { .dtype = POSENC_DT_F32, .ndim = 1, .shape = { 1 } };
    assert_int_equal(posenc_writer_declare(w, &noname, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "needs a name"));
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "used twice"));
    assert_int_equal(posenc_writer_meta(w, "k", "{bad json", &err), POSENC_EINVAL);
    posenc_writer_abort(w);
    /* unknown extension; stdout takes NPY only */
    assert_int_equal(posenc_writer_open(tu_path("w.xyz"), NULL, &w, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "cannot tell the format"));
    posenc_write_opts zo = { POSENC_FMT_NPZ, 0 };
    assert_int_equal(posenc_writer_open("-", &zo, &w, &err), POSENC_EINVAL);
    /* a full disk is an error at the latest on commit (devices are written in place) */
    if (access("/dev/full", W_OK) == 0) {
        float big[4096] = { 0 };
        posenc_array_info fa = { .dtype = POSENC_DT_F32, .ndim = 1, .shape = { 4096 } };
        posenc_write_opts no = { POSENC_FMT_NPY, 0 };
        assert_int_equal(posenc_writer_open("/dev/full", &no, &w, &err), POSENC_OK);
        assert_int_equal(posenc_writer_declare(w, &fa, &err), POSENC_OK);
        posenc_status fs = posenc_writer_write(w, big, 4096, &err);
        if (fs == POSENC_OK)
            fs = posenc_writer_commit(w, &err);
        else
            posenc_writer_abort(w);
        assert_int_equal(fs, POSENC_EIO);
        assert_non_null(strstr(err.msg, "No space left on device"));
    }
    /* outputs get the mode open(2) would give them, not mkstemp's 0600 */
    {
        mode_t old = umask(022);
        posenc_array_info ma = { .dtype = POSENC_DT_U8, .ndim = 0 };
        uint8_t b = 1;
        assert_int_equal(write_one(tu_path("mode.npy"), &ma, &b, 1, &err), POSENC_OK);
        umask(old);
        struct stat sb;
        assert_int_equal(stat(tu_path("mode.npy"), &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0644);
    }
    /* NPY commit without an array */
    assert_int_equal(posenc_writer_open(tu_path("empty0.npy"), NULL, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_EINVAL);
    assert_int_equal(count_entries(tu_dir, "empty0"), 0);
}

static void test_writer_stdout(void **state)
{
    (void)state;
    /* "-" writes NPY on stdout: redirect fd 1 to a file */
    fflush(stdout);
    int saved = dup(1);
    int fd = open(tu_path("stdout.npy"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    dup2(fd, 1);
    close(fd);
    posenc_array_info a = { .dtype = POSENC_DT_I32, .ndim = 1, .shape = { 3 } };
    int32_t v[3] = { 7, 8, 9 };
    posenc_status st = write_one("-", &a, v, 3, NULL);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    assert_int_equal(st, POSENC_OK);
    int32_t *back;
    assert_int_equal(posenc_read_all(tu_path("stdout.npy"), NULL, POSENC_DT_I32, 64, NULL,
                                     (void **)&back, NULL), POSENC_OK);
    assert_memory_equal(back, v, sizeof v);
    free(back);
}

/* Several arrays in one write call span array boundaries; empty arrays are skipped. */
static void test_dir_format(void **state)
{
    (void)state;
    const char *d = tu_path("tables");
    posenc_writer *w;
    posenc_error err = { 0 };
    posenc_write_opts o = { POSENC_FMT_DIR, 0 };
    assert_int_equal(posenc_writer_open(d, &o, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_meta(w, "theta", "10000", &err), POSENC_OK);
    assert_int_equal(posenc_writer_meta(w, "style", "\"neox\"", &err), POSENC_OK);
    posenc_array_info a = { .name = "cos", .dtype = POSENC_DT_F32, .ndim = 2, .shape = { 2, 3 } };
    posenc_array_info e = { .name = "empty", .dtype = POSENC_DT_F32, .ndim = 2,
                            .shape = { 0, 3 } };
    posenc_array_info b = { .name = "sin", .dtype = POSENC_DT_F32, .ndim = 1, .shape = { 4 } };
    posenc_array_info h = { .name = "half", .dtype = POSENC_DT_BF16, .ndim = 1, .shape = { 2 } };
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &e, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &b, &err), POSENC_OK);
    float v[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    assert_int_equal(posenc_writer_write(w, v, 10, &err), POSENC_OK);
    posenc_writer_abort(w);
    /* abort removed the directory it created */
    struct stat sb;
    assert_int_not_equal(stat(d, &sb), 0);
    assert_int_equal(posenc_writer_open(d, &o, &w, &err), POSENC_OK);
    assert_int_equal(posenc_writer_meta(w, "theta", "10000", &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &a, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &e, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &b, &err), POSENC_OK);
    assert_int_equal(posenc_writer_declare(w, &h, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, v, 7, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, v + 7, 3, &err), POSENC_OK);
    uint16_t hv[2] = { 0x3f80, 0x4000 };
    assert_int_equal(posenc_writer_write(w, hv, 2, &err), POSENC_OK);
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
    assert_int_equal(count_entries(d, ".posenc-tmp"), 0);
    posenc_container *c;
    assert_int_equal(posenc_container_open(d, NULL, &c, &err), POSENC_OK);
    assert_int_equal(posenc_container_format(c), POSENC_FMT_DIR);
    assert_int_equal(posenc_container_count(c), 4);
    assert_string_equal(posenc_container_array(c, 0)->name, "cos"); /* sorted */
    assert_string_equal(posenc_container_array(c, 1)->name, "empty");
    assert_string_equal(posenc_container_array(c, 2)->name, "half");
    assert_int_equal(posenc_container_array(c, 2)->dtype, POSENC_DT_BF16); /* from meta.json */
    assert_non_null(strstr(posenc_container_meta(c), "\"theta\":10000"));
    assert_non_null(strstr(posenc_container_meta(c), "\"posenc_dtypes\":{\"half\":\"bf16\"}"));
    posenc_reader *r;
    float out[6];
    assert_int_equal(posenc_reader_open_index(c, 3, &r, &err), POSENC_OK);
    assert_int_equal(posenc_reader_read(r, out, 4, &err), POSENC_OK);
    assert_memory_equal(out, v + 6, 16);
    posenc_reader_close(r);
    posenc_container_close(c);
    /* by spec: a directory with several arrays needs a member; dirs are not split by
     * posenc_spec_split, so reading one array goes through the container */
    assert_int_equal(posenc_reader_open(d, NULL, &r, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "4 arrays (cos, empty, half, sin)"));
    /* names that cannot be file names */
    assert_int_equal(posenc_writer_open(tu_path("t2"), &o, &w, &err), POSENC_OK);
    posenc_array_info bad = { .name = "a/b", .dtype = POSENC_DT_U8, .ndim = 0 };
    assert_int_equal(posenc_writer_declare(w, &bad, &err), POSENC_OK);
    assert_int_equal(posenc_writer_write(w, v, 1, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "cannot be a file name"));
    posenc_writer_abort(w);
    assert_int_not_equal(stat(tu_path("t2"), &sb), 0);
}

/* ---- NumPy interop ---- */

static int have_numpy(void)
{
    return system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

static const char *script(const char *name)
{
    static char buf[1024];
    const char *src = getenv("POSENC_SRC");
    snprintf(buf, sizeof buf, "%s/tests/interop/%s", src && *src ? src : ".", name);
    return buf;
}

static void expect_pattern(const char *path, posenc_dtype as, int64_t n, const char *what)
{
    double scale = strstr(what, "_i") ? 2 : 1;
    /* npy_make.py stores value(i) = (i % 251) * 0.5 - 60 (exact in every dtype but u8) */
    void *data;
    posenc_array_info info;
    posenc_error err = { 0 };
    posenc_read_opts o = { .assume_bf16 = strstr(what, "bf16") != NULL };
    if (posenc_read_all(path, &o, as, 1 << 24, &info, &data, &err) != POSENC_OK)
        fail_msg("%s: %s", what, err.msg);
    uint64_t nelem;
    assert_int_equal(posenc_shape_size(info.ndim, info.shape, info.dtype, &nelem, NULL, NULL),
                     POSENC_OK);
    assert_int_equal(nelem, n);
    for (int64_t i = 0; i < n; i++) {
        double want = ((double)(i % 251) * 0.5 - 60) * scale;
        double got = as == POSENC_DT_F64 ? ((double *)data)[i] : ((float *)data)[i];
        if (got != want)
            fail_msg("%s: element %lld is %g, want %g", what, (long long)i, got, want);
    }
    free(data);
}

static void test_numpy_interop(void **state)
{
    (void)state;
    if (!have_numpy())
        skip();
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' make '%s'", script("npy_interop.py"),
             tu_dir);
    assert_int_equal(system(cmd), 0);
    /* numpy-written files read exactly */
    static const struct {
        const char *file;
        int64_t n;
    } files[] = {
        { "np_f8.npy", 60 },    { "np_f4.npy", 60 },    { "np_f2.npy", 60 },
        { "np_i4.npy", 60 },    { "np_i8.npy", 60 },    { "np_be_f8.npy", 60 },
        { "np_be_f4.npy", 60 }, { "np_be_i8.npy", 60 }, { "np_fortran.npy", 60 },
        { "np_fortran_be.npy", 60 }, { "np_v2.npy", 60 }, { "np_v3.npy", 60 },
        { "np_v2_big.npy", 60 }, { "np_scalar.npy", 1 }, { "np_bf16_v2.npy", 60 },
        { "np_big.npy", 300000 },
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        expect_pattern(tu_path(files[i].file), POSENC_DT_F64, files[i].n, files[i].file);
    /* numpy reads what posenc writes, bit-identically, and np.save writes the same bytes */
    for (int dt = 0; dt < POSENC_DT_COUNT; dt++) {
        posenc_array_info a = { .dtype = (posenc_dtype)dt, .ndim = 2, .shape = { 4, 15 } };
        unsigned char buf[60 * 8];
        fill(a.dtype, buf, 60);
        char name[64];
        snprintf(name, sizeof name, "pe_%s.npy", posenc_dtype_name(a.dtype));
        assert_int_equal(write_one(tu_path(name), &a, buf, 60, NULL), POSENC_OK);
    }
    posenc_array_info big = { .dtype = POSENC_DT_F32, .ndim = 3, .shape = { 3, 1000, 7 } };
    float *bv = malloc(21000 * sizeof *bv);
    fill(POSENC_DT_F32, bv, 21000);
    assert_int_equal(write_one(tu_path("pe_big.npy"), &big, bv, 21000, NULL), POSENC_OK);
    free(bv);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' check '%s'", script("npy_interop.py"),
             tu_dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_dtypes), cmocka_unit_test(test_header_bytes),
        cmocka_unit_test(test_versions),         cmocka_unit_test(test_tolerant_parser),
        cmocka_unit_test(test_big_endian),       cmocka_unit_test(test_fortran),
        cmocka_unit_test(test_dtypes_descr),     cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_streaming),        cmocka_unit_test(test_writer_checks),
        cmocka_unit_test(test_writer_stdout),    cmocka_unit_test(test_dir_format),
        cmocka_unit_test(test_numpy_interop),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
