/* test_rows.c: the dump reader (formats/engines/rows.c): every layout's coordinates against the C-order
 * index, values across chunk boundaries (partial reads), FILE:MEMBER, the bf16 assumption, bad
 * dumps refused with one message; and the positions of a dump (--offset, lists, files of every
 * accepted shape, 3-axis positions, and the class of each mistake). Fixtures are written
 * through the public writer API, or byte by byte for the opaque '<V2' NPY. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/io.h"
#include "formats/engines/rows.h"

static void expect_open_fail(const char *spec, posenc_apply_layout l, int bf16, const char *want)
{
    pe_rows *d = (pe_rows *)1;
    posenc_error err = { 0 };
    assert_int_not_equal(pe_rows_open(spec, l, bf16, &d, &err), POSENC_OK);
    if (!strstr(err.msg, want))
        print_error("'%s': message '%s', wanted '%s'\n", spec, err.msg, want);
    assert_non_null(strstr(err.msg, want));
    assert_null(strchr(err.msg, '\n'));
    assert_true(d == (pe_rows *)1);
}

/* Every layout: element e of the C-order array holds e; row r's coordinates are those of the
 * C-order index of its first element. */
static void test_layouts(void **state)
{
    (void)state;
    static const struct {
        posenc_apply_layout l;
        int ndim;
        int64_t shape[4];
        int bax, hax, sax; /* axis of batch, heads, seq (-1: absent) */
    } cases[] = {
        { POSENC_APPLY_BHSD, 4, { 2, 3, 5, 4 }, 0, 1, 2 },
        { POSENC_APPLY_BSHD, 4, { 2, 5, 3, 4 }, 0, 2, 1 },
        { POSENC_APPLY_SHD, 3, { 5, 3, 4 }, -1, 1, 0 },
        { POSENC_APPLY_HSD, 3, { 3, 5, 4 }, -1, 0, 1 },
        { POSENC_APPLY_SD, 2, { 5, 4 }, -1, -1, 0 },
    };
    float data[120];
    for (int i = 0; i < 120; i++)
        data[i] = (float)i;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tu_array a = { "x", POSENC_DT_F32, cases[c].ndim, { 0 }, data };
        memcpy(a.shape, cases[c].shape, sizeof a.shape);
        tu_write_arrays(tu_path("l.npy"), &a, 1);
        pe_rows *d;
        posenc_error err = { 0 };
        assert_int_equal(pe_rows_open(tu_path("l.npy"), cases[c].l, 0, &d, &err), POSENC_OK);
        int64_t B = cases[c].bax < 0 ? 1 : cases[c].shape[cases[c].bax];
        int64_t H = cases[c].hax < 0 ? 1 : cases[c].shape[cases[c].hax];
        assert_int_equal(d->shape.batch, B);
        assert_int_equal(d->shape.heads, H);
        assert_int_equal(d->shape.seq, 5);
        assert_int_equal(d->shape.head_dim, 4);
        assert_int_equal(d->total, (uint64_t)(B * H * 5));
        pe_row_at at;
        const double *row;
        uint64_t r = 0;
        while ((row = pe_rows_next(d, &at, &err))) {
            /* unravel r (the index of a head_dim run) over the leading axes */
            int64_t idx[4], rem = (int64_t)r;
            for (int ax = cases[c].ndim - 2; ax >= 0; ax--) {
                idx[ax] = rem % cases[c].shape[ax];
                rem /= cases[c].shape[ax];
            }
            assert_int_equal(at.batch, cases[c].bax < 0 ? 0 : idx[cases[c].bax]);
            assert_int_equal(at.head, cases[c].hax < 0 ? 0 : idx[cases[c].hax]);
            assert_int_equal(at.seq, idx[cases[c].sax]);
            pe_row_at at2 = pe_rows_at(&d->shape, r);
            assert_memory_equal(&at, &at2, sizeof at);
            for (int j = 0; j < 4; j++)
                assert_true(row[j] == (double)(r * 4 + (uint64_t)j));
            r++;
        }
        assert_int_equal(err.code, POSENC_OK);
        assert_int_equal(r, d->total);
        assert_null(pe_rows_next(d, NULL, &err)); /* stays at the end */
        pe_rows_close(d);
    }
}

/* More rows than one chunk: values stay in order across the reads; a file cut short fails at
 * the read that runs out, naming the file. */
static void test_partial_reads(void **state)
{
    (void)state;
    const int64_t S = 300001, D = 2; /* 2^17 rows per read: 3 reads, the last one short */
    double *x = malloc((size_t)(S * D) * sizeof *x);
    assert_non_null(x);
    for (int64_t i = 0; i < S * D; i++)
        x[i] = (double)i * 0.5 - 7;
    tu_array a = { "x", POSENC_DT_F64, 2, { S, D }, x };
    tu_write_arrays(tu_path("big.npy"), &a, 1);
    pe_rows *d;
    posenc_error err = { 0 };
    assert_int_equal(pe_rows_open(tu_path("big.npy"), POSENC_APPLY_SD, 0, &d, &err), POSENC_OK);
    assert_int_equal(d->cap, PE_ROWS_CHUNK / 2);
    const double *row;
    int64_t r = 0;
    while ((row = pe_rows_next(d, NULL, &err))) {
        assert_true(row[0] == x[2 * r] && row[1] == x[2 * r + 1]);
        r++;
    }
    assert_int_equal(err.code, POSENC_OK);
    assert_int_equal(r, S);
    pe_rows_close(d);

    /* the same header over 1000 rows of data */
    size_t n;
    unsigned char *bytes = tu_slurp(tu_path("big.npy"), &n);
    size_t hdr = n - (size_t)(S * D) * 8;
    tu_write_file(tu_path("cut.npy"), bytes, hdr + 1000 * 16);
    free(bytes);
    if (pe_rows_open(tu_path("cut.npy"), POSENC_APPLY_SD, 0, &d, &err) == POSENC_OK) {
        r = 0;
        while ((row = pe_rows_next(d, NULL, &err)))
            r++;
        assert_true(r == 0); /* the first read asks for a whole chunk */
        pe_rows_close(d);
    }
    /* refused at the open (the file is shorter than its header says) or at the first read */
    assert_int_not_equal(err.code, POSENC_OK);
    assert_non_null(strstr(err.msg, "cut.npy"));
    assert_null(strchr(err.msg, '\n'));
    free(x);
}

/* FILE:MEMBER picks one array of a container; f16 values are converted exactly. */
static void test_members(void **state)
{
    (void)state;
    float q[24];
    uint16_t k[12];
    for (int i = 0; i < 24; i++)
        q[i] = (float)i / 8;
    for (int i = 0; i < 12; i++)
        k[i] = (uint16_t)(0x3c00 + i); /* f16 1 + i/1024 */
    tu_array a[] = { { "q", POSENC_DT_F32, 4, { 1, 2, 3, 4 }, q },
                       { "k", POSENC_DT_F16, 4, { 1, 1, 3, 4 }, k } };
    tu_write_arrays(tu_path("qk.npz"), a, 2);
    char spec[512];
    snprintf(spec, sizeof spec, "%s:k", tu_path("qk.npz"));
    pe_rows *d;
    posenc_error err = { 0 };
    assert_int_equal(pe_rows_open(spec, POSENC_APPLY_BHSD, 0, &d, &err), POSENC_OK);
    assert_int_equal(d->info.dtype, POSENC_DT_F16);
    assert_int_equal(d->shape.heads, 1);
    for (int r = 0; r < 3; r++) {
        const double *row = pe_rows_next(d, NULL, &err);
        assert_non_null(row);
        for (int j = 0; j < 4; j++)
            assert_true(row[j] == 1.0 + (r * 4 + j) / 1024.0);
    }
    pe_rows_close(d);
    snprintf(spec, sizeof spec, "%s:q", tu_path("qk.npz"));
    assert_int_equal(pe_rows_open(spec, POSENC_APPLY_BHSD, 0, &d, &err), POSENC_OK);
    assert_int_equal(d->shape.heads, 2);
    pe_rows *e;
    assert_int_equal(pe_rows_open(spec, POSENC_APPLY_BHSD, 0, &e, &err), POSENC_OK);
    assert_true(pe_rows_same_shape(d, e));
    pe_rows_close(e);
    snprintf(spec, sizeof spec, "%s:k", tu_path("qk.npz"));
    assert_int_equal(pe_rows_open(spec, POSENC_APPLY_BHSD, 0, &e, &err), POSENC_OK);
    assert_false(pe_rows_same_shape(d, e));
    pe_rows_close(e);
    pe_rows_close(d);
    snprintf(spec, sizeof spec, "%s:v", tu_path("qk.npz"));
    expect_open_fail(spec, POSENC_APPLY_BHSD, 0, "qk.npz");
}

/* An ml_dtypes bfloat16 NPY ('<V2') is read only when the caller assumes bf16. */
static void test_bf16(void **state)
{
    (void)state;
    char hdr[128];
    const char *dict = "{'descr': '<V2', 'fortran_order': False, 'shape': (2, 2), }";
    size_t hl = sizeof hdr - 10; /* magic 6 + version 2 + length 2, padded to 128 */
    memset(hdr, ' ', sizeof hdr);
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (char)hl;
    hdr[9] = 0;
    memcpy(hdr + 10, dict, strlen(dict));
    hdr[sizeof hdr - 1] = '\n';
    const uint16_t v[4] = { 0x3f80, 0xc000, 0x3fc0, 0x0000 }; /* 1, -2, 1.5, 0 */
    unsigned char file[sizeof hdr + 8];
    memcpy(file, hdr, sizeof hdr);
    memcpy(file + sizeof hdr, v, 8);
    tu_write_file(tu_path("b.npy"), file, sizeof file);
    expect_open_fail(tu_path("b.npy"), POSENC_APPLY_SD, 0, "'<V2' is opaque");
    pe_rows *d;
    posenc_error err = { 0 };
    assert_int_equal(pe_rows_open(tu_path("b.npy"), POSENC_APPLY_SD, 1, &d, &err), POSENC_OK);
    assert_int_equal(d->info.dtype, POSENC_DT_BF16);
    const double *r0 = pe_rows_next(d, NULL, &err);
    assert_true(r0[0] == 1.0 && r0[1] == -2.0);
    const double *r1 = pe_rows_next(d, NULL, &err);
    assert_true(r1[0] == 1.5 && r1[1] == 0.0);
    pe_rows_close(d);
}

/* Bad dumps: one line naming the file and what is wrong. */
static void test_bad(void **state)
{
    (void)state;
    int32_t iv[6] = { 0 };
    float fv[6] = { 0 };
    tu_array i = { "x", POSENC_DT_I32, 2, { 3, 2 }, iv };
    tu_write_arrays(tu_path("i.npy"), &i, 1);
    expect_open_fail(tu_path("i.npy"), POSENC_APPLY_SD, 0, "i.npy': dtype i32 is not a float type");
    tu_array f = { "x", POSENC_DT_F32, 2, { 3, 2 }, fv };
    tu_write_arrays(tu_path("f.npy"), &f, 1);
    expect_open_fail(tu_path("f.npy"), POSENC_APPLY_BHSD, 0,
                     "f.npy': shape (3, 2) does not fit layout bhsd (4 dims)");
    expect_open_fail(tu_path("f.npy"), POSENC_APPLY_SHD, 0, "does not fit layout shd (3 dims)");
    tu_array z = { "x", POSENC_DT_F32, 2, { 0, 2 }, fv };
    tu_write_arrays(tu_path("z.npy"), &z, 1);
    expect_open_fail(tu_path("z.npy"), POSENC_APPLY_SD, 0, "z.npy': empty dump");
    expect_open_fail(tu_path("none.npy"), POSENC_APPLY_SD, 0, "none.npy");
    pe_rows_close(NULL);
}

/* ---- positions ---- */

static pe_dump_positions load_ok(const char *arg, int64_t offset, int mrope, int64_t batch,
                                 int64_t seq)
{
    pe_dump_positions_req q = { arg, offset, (int64_t)1 << 31, mrope, batch, seq };
    pe_dump_positions p;
    posenc_error err = { 0 };
    int usage = -1;
    posenc_status st = pe_dump_positions_load(&q, &p, &usage, &err);
    if (st != POSENC_OK)
        print_error("'%s': %s\n", arg ? arg : "(offset)", err.msg);
    assert_int_equal(st, POSENC_OK);
    return p;
}

static void load_fail(const char *arg, int64_t offset, int mrope, int64_t batch, int64_t seq,
                      int want_usage, const char *want)
{
    pe_dump_positions_req q = { arg, offset, (int64_t)1 << 31, mrope, batch, seq };
    pe_dump_positions p;
    posenc_error err = { 0 };
    int usage = -1;
    assert_int_not_equal(pe_dump_positions_load(&q, &p, &usage, &err), POSENC_OK);
    if (!strstr(err.msg, want) || usage != want_usage)
        print_error("'%s': usage %d, message '%s' (wanted %d, '%s')\n", arg ? arg : "(offset)",
                    usage, err.msg, want_usage, want);
    assert_int_equal(usage, want_usage);
    assert_non_null(strstr(err.msg, want));
    assert_null(strchr(err.msg, '\n'));
    pe_dump_positions_free(&p);
}

static void test_positions(void **state)
{
    (void)state;
    /* --offset: token s at offset + s */
    pe_dump_positions p = load_ok(NULL, 100, 0, 2, 6);
    assert_null(p.apply.values);
    assert_int_equal(p.min, 100);
    assert_int_equal(p.max, 105);
    assert_int_equal(pe_dump_position(&p, 6, 1, 5), 105);
    pe_dump_positions_free(&p);
    load_fail(NULL, ((int64_t)1 << 31) - 3, 0, 1, 4, 1,
              "--offset: positions 2147483645 to 2147483648 are outside [0, 2^31)");
    /* a list, counted against seq */
    p = load_ok("7,3,9-10", 0, 0, 1, 4);
    assert_int_equal(p.first, 7);
    assert_int_equal(p.last, 10);
    assert_int_equal(p.min, 3);
    assert_int_equal(p.max, 10);
    assert_int_equal(pe_dump_position(&p, 4, 0, 1), 3);
    pe_dump_positions_free(&p);
    load_fail("0,1,2", 0, 0, 1, 4, 1, "--positions: 3 positions for a sequence of 4 tokens");
    load_fail("7", 0, 0, 1, 4, 1, "--positions: 1 position for a sequence of 4 tokens");
    load_fail("0-1073741824", 0, 0, 1, 4, 1,
              "--positions: 1073741825 positions for a sequence of 4 tokens");
    load_fail("0,1,2,2147483648", 0, 0, 1, 4, 1, "position 2147483648 is outside [0, 2^31)");
    load_fail("1,,2", 0, 0, 1, 4, 1, "--positions: ");
    /* files: [seq], [1, seq], [batch, seq], [3, seq] and [3, batch, seq] with mrope */
    int64_t v1[4] = { 5, 6, 2, 8 }, v2[8] = { 0, 1, 2, 3, 10, 11, 12, 13 };
    int64_t v3[12] = { 0, 1, 2, 3, 4, 4, 4, 4, 9, 8, 7, 6 };
    tu_array f1 = { "p", POSENC_DT_I64, 1, { 4 }, v1 }, f1b = { "p", POSENC_DT_I64, 2, { 1, 4 }, v1 },
               f2 = { "p", POSENC_DT_I64, 2, { 2, 4 }, v2 }, f3 = { "p", POSENC_DT_I64, 2, { 3, 4 }, v3 },
               f5 = { "p", POSENC_DT_I64, 1, { 5 }, v3 }, f24 = { "p", POSENC_DT_I64, 2, { 2, 2 }, v1 };
    tu_write_arrays(tu_path("p1.npy"), &f1, 1);
    tu_write_arrays(tu_path("p1b.npy"), &f1b, 1);
    tu_write_arrays(tu_path("p2.npy"), &f2, 1);
    tu_write_arrays(tu_path("p3.npy"), &f3, 1);
    tu_write_arrays(tu_path("p5.npy"), &f5, 1);
    tu_write_arrays(tu_path("p22.npy"), &f24, 1);
    p = load_ok(tu_path("p1.npy"), 0, 0, 2, 4);
    assert_int_equal(p.apply.rows, 1);
    assert_int_equal(p.apply.naxes, 1);
    assert_int_equal(p.first, 5);
    assert_int_equal(p.last, 8);
    assert_int_equal(p.min, 2);
    assert_int_equal(pe_dump_position(&p, 4, 1, 2), 2);
    pe_dump_positions_free(&p);
    p = load_ok(tu_path("p1b.npy"), 0, 0, 2, 4);
    assert_int_equal(p.apply.rows, 1);
    pe_dump_positions_free(&p);
    p = load_ok(tu_path("p2.npy"), 0, 0, 2, 4);
    assert_int_equal(p.apply.rows, 2);
    assert_int_equal(pe_dump_position(&p, 4, 1, 3), 13);
    assert_int_equal(p.max, 13);
    pe_dump_positions_free(&p);
    p = load_ok(tu_path("p3.npy"), 0, 1, 1, 4);
    assert_int_equal(p.apply.naxes, 3);
    assert_int_equal(p.max, 9);
    assert_int_equal(pe_dump_position(&p, 4, 0, 3), 3);
    pe_dump_positions_free(&p);
    load_fail(tu_path("p3.npy"), 0, 0, 1, 4, 0,
              "p3.npy': 3-axis (t, h, w) positions need a multimodal (mrope) RoPE config");
    load_fail(tu_path("p5.npy"), 0, 0, 1, 4, 0, "p5.npy': 5 positions for a sequence of 4 tokens");
    load_fail(tu_path("p2.npy"), 0, 0, 3, 4, 0,
              "p2.npy': positions of shape (2, 4) do not fit batch 3 and seq 4 (expected [seq], "
              "[batch, seq])");
    load_fail(tu_path("p22.npy"), 0, 1, 1, 4, 0,
              "(expected [seq], [batch, seq], [3, seq] or [3, batch, seq])");
    load_fail(tu_path("absent.npy:p"), 0, 0, 1, 4, 1, "--positions: ");
    pe_dump_positions_free(NULL);
}

/* The q/k dumps of one comparison: GQA accepted; each mismatch refused naming the file. */
static void qk_fail(const char *q, const char *k, const char *eq, int head_dim,
                    const char *positions, int want_usage, const char *want)
{
    pe_qk_req r = { { q, k, eq, NULL }, POSENC_APPLY_BHSD, 0, head_dim, "c.json", positions, 0,
                    (int64_t)1 << 48, { 0, 0 } };
    pe_qk_dumps x;
    posenc_error err = { 0 };
    int usage = -1;
    assert_int_not_equal(pe_qk_open(&r, &x, &usage, &err), POSENC_OK);
    if (!strstr(err.msg, want))
        print_error("message '%s', wanted '%s'\n", err.msg, want);
    assert_non_null(strstr(err.msg, want));
    assert_int_equal(usage, want_usage);
    assert_null(x.d[0]);
}

static void test_qk(void **state)
{
    (void)state;
    static float z[2 * 4 * 6 * 8];
    tu_array q = { "x", POSENC_DT_F32, 4, { 2, 4, 6, 8 }, z },
               k = { "x", POSENC_DT_F32, 4, { 2, 2, 6, 8 }, z },
               k3 = { "x", POSENC_DT_F32, 4, { 2, 3, 6, 8 }, z },
               ks = { "x", POSENC_DT_F32, 4, { 2, 2, 5, 8 }, z },
               kb = { "x", POSENC_DT_F32, 4, { 1, 2, 6, 8 }, z };
    tu_write_arrays(tu_path("q.npy"), &q, 1);
    tu_write_arrays(tu_path("k.npy"), &k, 1);
    tu_write_arrays(tu_path("k3.npy"), &k3, 1);
    tu_write_arrays(tu_path("ks.npy"), &ks, 1);
    tu_write_arrays(tu_path("kb.npy"), &kb, 1);
    char qp[300], kp[300];
    snprintf(qp, sizeof qp, "%s", tu_path("q.npy"));
    snprintf(kp, sizeof kp, "%s", tu_path("k.npy"));
    pe_qk_req r = { { qp, kp, qp, kp }, POSENC_APPLY_BHSD, 0, 8, "c.json", "10-15", 0,
                    (int64_t)1 << 48, { 0, 0 } };
    pe_qk_dumps x;
    posenc_error err = { 0 };
    int usage;
    assert_int_equal(pe_qk_open(&r, &x, &usage, &err), POSENC_OK);
    assert_int_equal(x.d[0]->shape.heads, 4);
    assert_int_equal(x.d[1]->shape.heads, 2);
    assert_int_equal(x.pos.first, 10);
    assert_int_equal(x.pos.max, 15);
    pe_qk_close(&x);
    pe_qk_close(&x); /* twice is fine */
    qk_fail(qp, kp, NULL, 16, NULL, 0, "q.npy': head_dim 8 does not match head_dim 16 of 'c.json'");
    qk_fail(qp, tu_path("k3.npy"), NULL, 8, NULL, 0, "k3.npy': 3 key heads do not divide 4 query heads");
    qk_fail(qp, tu_path("ks.npy"), NULL, 8, NULL, 0, "ks.npy': batch and sequence (2, 5) differ from");
    qk_fail(qp, tu_path("kb.npy"), NULL, 8, NULL, 0, "kb.npy': batch and sequence (1, 6) differ from");
    qk_fail(qp, kp, kp, 8, NULL, 0, "k.npy': shape differs from '");
    qk_fail(qp, kp, NULL, 8, "0-4", 1, "--positions: 5 positions for a sequence of 6 tokens");
    int64_t pv[12] = { 0 };
    tu_array p26 = { "p", POSENC_DT_I64, 2, { 2, 6 }, pv }, p16 = { "p", POSENC_DT_I64, 2, { 1, 6 }, pv },
               p36 = { "p", POSENC_DT_I64, 2, { 3, 4 }, pv };
    tu_write_arrays(tu_path("p26.npy"), &p26, 1);
    tu_write_arrays(tu_path("p16.npy"), &p16, 1);
    tu_write_arrays(tu_path("p34.npy"), &p36, 1);
    qk_fail(qp, kp, NULL, 8, tu_path("p26.npy"), 0,
            "p26.npy': positions of shape (2, 6) differ per batch entry; a comparison takes one "
            "row [seq] shared by every entry");
    qk_fail(qp, kp, NULL, 8, tu_path("p34.npy"), 0,
            "p34.npy': positions of shape (3, 4) do not fit batch 2 and seq 6");
    r.spec[2] = r.spec[3] = NULL;
    r.positions = tu_path("p16.npy");
    assert_int_equal(pe_qk_open(&r, &x, &usage, &err), POSENC_OK);
    assert_int_equal(x.pos.apply.rows, 1);
    pe_qk_close(&x);
}

/* Both passes streamed from files: rows rotated in long double match everywhere; without
 * rotated dumps only the samples are read; the rows of rotated dumps alone match too. */
static void test_qk_passes(void **state)
{
    (void)state;
    enum { QB = 1, QH = 2, QS = 20, QD = 4 };
    posenc_rope_config cfg = tu_rope_cfg(10000.0, QD, QD, POSENC_STYLE_NEOX);
    posenc_rope_params par = tu_rope_params(&cfg);
    static float q[QB * QH * QS * QD], e[QB * QH * QS * QD], r[QB * QH * QS * QD];
    for (int h = 0; h < QH; h++)
        for (int t = 0; t < QS; t++) {
            float *x = q + (h * QS + t) * QD, *y = e + (h * QS + t) * QD, *z = r + (h * QS + t) * QD;
            long double c[QD / 2], sn[QD / 2];
            posenc_verify_cossin_ld(&par, t + 3, c, sn);
            for (int j = 0; j < QD; j++)
                x[j] = (float)(0.5 + j - 0.25 * h + 0.125 * t);
            for (int i = 0; i < QD / 2; i++) {
                y[i] = (float)(x[i] * c[i] - x[i + 2] * sn[i]);
                y[i + 2] = (float)(x[i + 2] * c[i] + x[i] * sn[i]);
                /* one content per head (that of t = 0), rotated to each position */
                long double u = 0.5 + i - 0.25 * h, w = 2.5 + i - 0.25 * h;
                z[i] = (float)(u * c[i] - w * sn[i]);
                z[i + 2] = (float)(w * c[i] + u * sn[i]);
            }
        }
    tu_array aq = { "x", POSENC_DT_F32, 4, { QB, QH, QS, QD }, q },
               ae = { "x", POSENC_DT_F32, 4, { QB, QH, QS, QD }, e },
               ar = { "x", POSENC_DT_F32, 4, { QB, QH, QS, QD }, r };
    tu_write_arrays(tu_path("pq.npy"), &aq, 1);
    tu_write_arrays(tu_path("pe.npy"), &ae, 1);
    tu_write_arrays(tu_path("pr.npy"), &ar, 1);
    char qp[300], ep[300], rp[300];
    snprintf(qp, sizeof qp, "%s", tu_path("pq.npy"));
    snprintf(ep, sizeof ep, "%s", tu_path("pe.npy"));
    snprintf(rp, sizeof rp, "%s", tu_path("pr.npy"));
    posenc_verify_recipe rec;
    posenc_verify_recipe_init(&rec, &par);
    rec.prec = POSENC_PREC_EXACT;
    const struct { const char *spec[4]; int rotated; uint64_t rows; } cases[] = {
        { { qp, qp, ep, ep }, 0, QB * QH * QS },
        { { qp, qp, NULL, NULL }, 0, 0 },
        { { rp, rp, NULL, NULL }, 1, QB * QH * QS },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        pe_qk_req rq = { { cases[c].spec[0], cases[c].spec[1], cases[c].spec[2], cases[c].spec[3] },
                         POSENC_APPLY_BHSD, 0, QD, "c.json", NULL, 3, (int64_t)1 << 48,
                         { 0, 0 } };
        pe_qk_dumps x;
        posenc_error err = { 0 };
        int usage;
        assert_int_equal(pe_qk_open(&rq, &x, &usage, &err), POSENC_OK);
        pe_vpass *p[2];
        pe_qk_check chk = { &rec, { &rec, NULL, NULL, NULL }, 0, NULL, 0, -1, NULL, NULL };
        assert_int_equal(pe_qk_passes(&x, &chk, cases[c].rotated, p, &err), POSENC_OK);
        for (int t = 0; t < 2; t++) {
            const pe_vstats *st = pe_vpass_stats(p[t]);
            assert_int_equal(st->rows, cases[c].rows);
            assert_int_equal(st->bad, 0);
            assert_true(pe_vpass_tolerance(p[t])->u == 0x1p-24);
            assert_int_equal(st->elems_bad, 0);
            assert_int_equal(st->prof[0].elems_bad, 0);
            const posenc_verify_sample *sm;
            assert_int_equal(pe_vpass_samples(p[t], &sm), 2 * 12); /* 0-7, 8, 10, 14, 19; 2 heads */
            assert_int_equal(sm[0].pos, 3);
        }
        if (cases[c].rows == 0) /* sampled only: the last kept index is the last row */
            assert_int_equal(x.d[0]->next, QB * QH * QS);
        pe_vpass_free(p[0]);
        pe_vpass_free(p[1]);
        pe_qk_close(&x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_partial_reads),
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_qk),
        cmocka_unit_test(test_qk_passes),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
