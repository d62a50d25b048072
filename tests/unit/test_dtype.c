/* test_dtype.c: dtype names, checked shapes and float conversions against closed forms. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/dtype.h"

static void test_names(void **state)
{
    (void)state;
    posenc_dtype dt;
    assert_int_equal(posenc_dtype_parse("bf16", &dt, NULL), POSENC_OK);
    assert_int_equal(dt, POSENC_DT_BF16);
    assert_int_equal(posenc_dtype_parse("float64", &dt, NULL), POSENC_OK);
    assert_int_equal(dt, POSENC_DT_F64);
    posenc_error err = { 0 };
    assert_int_equal(posenc_dtype_parse("f12", &dt, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "'f12'"));
    assert_int_equal(posenc_dtype_size(POSENC_DT_BF16), 2);
}

static void test_shape_overflow(void **state)
{
    (void)state;
    int64_t big[3] = { 1LL << 40, 1LL << 20, 1LL << 10 };
    uint64_t n, b;
    assert_int_equal(posenc_shape_size(3, big, POSENC_DT_F32, &n, &b, NULL), POSENC_ERANGE);
    int64_t neg[2] = { 3, -1 };
    assert_int_not_equal(posenc_shape_size(2, neg, POSENC_DT_F32, &n, &b, NULL), POSENC_OK);
    int64_t ok[2] = { 3, 5 };
    assert_int_equal(posenc_shape_size(2, ok, POSENC_DT_F64, &n, &b, NULL), POSENC_OK);
    assert_int_equal(n, 15);
    assert_int_equal(b, 120);
    assert_int_equal(posenc_shape_size(0, ok, POSENC_DT_F32, &n, &b, NULL), POSENC_OK);
    assert_int_equal(n, 1);
}

/* Exhaustive: every f16 pattern widens and narrows back to itself (NaN stays NaN). */
static void test_f16_roundtrip(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = posenc_f16_to_f32((uint16_t)h);
        uint16_t back = posenc_f32_to_f16(f);
        if (isnan(f))
            assert_true((back & 0x7c00u) == 0x7c00u && (back & 0x3ffu));
        else
            assert_int_equal(back, h);
    }
}

/* Round to nearest even at midpoints, against closed forms. */
static void test_f16_rounding(void **state)
{
    (void)state;
    /* 1 + 2^-11 is the midpoint between 1 and 1 + 2^-10: ties to even (1.0 = 0x3c00). */
    assert_int_equal(posenc_f64_to_f16(1.0 + ldexp(1, -11)), 0x3c00);
    /* 1 + 3*2^-11 is the midpoint between 1+2^-10 (odd) and 1+2^-9 (even). */
    assert_int_equal(posenc_f64_to_f16(1.0 + 3 * ldexp(1, -11)), 0x3c02);
    assert_int_equal(posenc_f64_to_f16(65504.0), 0x7bff);
    assert_int_equal(posenc_f64_to_f16(65519.0), 0x7bff);
    assert_int_equal(posenc_f64_to_f16(65520.0), 0x7c00);
    assert_int_equal(posenc_f64_to_f16(-INFINITY), 0xfc00);
    assert_int_equal(posenc_f64_to_f16(ldexp(1, -24)), 0x0001);
    assert_int_equal(posenc_f64_to_f16(ldexp(1, -25)), 0x0000); /* tie to even (0) */
    assert_int_equal(posenc_f64_to_f16(ldexp(3, -25)), 0x0002);
    assert_true(isnan(posenc_f16_to_f32(posenc_f64_to_f16(NAN))));
}

static void test_bf16_rounding(void **state)
{
    (void)state;
    assert_int_equal(posenc_f32_to_bf16(1.0f), 0x3f80);
    /* 1 + 2^-8 is the midpoint between 1 and 1 + 2^-7: even is 1. */
    assert_int_equal(posenc_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    assert_int_equal(posenc_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);
    assert_int_equal(posenc_f32_to_bf16(INFINITY), 0x7f80);
    assert_true(isnan(posenc_bf16_to_f32(posenc_f32_to_bf16(NAN))));
    /* A double just above a bf16 midpoint whose f32 rounding lands on the midpoint must still
     * round up (no double rounding). */
    double d = 1.0 + ldexp(1, -8) + ldexp(1, -40);
    assert_int_equal(posenc_f64_to_bf16(d), 0x3f81);
    double e = 1.0 + ldexp(1, -8) - ldexp(1, -40);
    assert_int_equal(posenc_f64_to_bf16(e), 0x3f80);
}

static void test_convert(void **state)
{
    (void)state;
    double src[4] = { 1.5, -2.25, 1e30, NAN };
    float f[4];
    posenc_dtype_convert(f, POSENC_DT_F32, src, POSENC_DT_F64, 4);
    assert_true(f[0] == 1.5f && f[1] == -2.25f && isnan(f[3]));
    uint16_t h[4];
    posenc_dtype_convert(h, POSENC_DT_F16, f, POSENC_DT_F32, 4);
    assert_int_equal(h[0], 0x3e00);
    assert_int_equal(h[2], 0x7c00);
    int64_t iv[2] = { 7, -3 };
    double dv[2];
    posenc_dtype_convert(dv, POSENC_DT_F64, iv, POSENC_DT_I64, 2);
    assert_true(dv[0] == 7.0 && dv[1] == -3.0);
    uint32_t be = 0x3f800000u;
    posenc_byteswap(&be, 4, 1);
    assert_int_equal(be, 0x0000803fu);
}

/* f16, bf16 and float32 widened to double (the dumps verify and diff read): the bits of each
 * element's scalar conversion (posenc_f16_to_f32, posenc_bf16_to_f32, a float cast), for every
 * 16-bit pattern (NaN payloads and subnormals included) and for float32 specials, at every
 * offset of a blocked loop's tail */
static void test_convert_widen(void **state)
{
    (void)state;
    enum { N = 65536 + 7 };
    uint16_t *h = malloc(N * sizeof *h);
    float *f = malloc(N * sizeof *f);
    double *d = malloc(N * sizeof *d);
    assert_non_null(h);
    assert_non_null(f);
    assert_non_null(d);
    for (size_t i = 0; i < N; i++)
        h[i] = (uint16_t)(i * 40503u);
    for (int dt = 0; dt < 2; dt++) {
        posenc_dtype st = dt ? POSENC_DT_BF16 : POSENC_DT_F16;
        for (size_t n = N - 7; n <= N; n += 7) {
            posenc_dtype_convert(d, POSENC_DT_F64, h, st, n);
            for (size_t i = 0; i < n; i++) {
                double want = dt ? posenc_bf16_to_f32(h[i]) : posenc_f16_to_f32(h[i]);
                assert_memory_equal(&d[i], &want, sizeof want);
            }
        }
    }
    static const uint32_t special[] = { 0x7f800001u, 0xffa00000u, 0x7fc00001u, 0x00000001u,
                                        0x807fffffu, 0x7f800000u, 0x80000000u, 0x3f800000u };
    for (size_t i = 0; i < N; i++) {
        uint32_t u = i < 8 ? special[i] : (uint32_t)(i * 2654435761u);
        memcpy(&f[i], &u, 4);
    }
    posenc_dtype_convert(d, POSENC_DT_F64, f, POSENC_DT_F32, N);
    for (size_t i = 0; i < N; i++) {
        double want = f[i];
        assert_memory_equal(&d[i], &want, sizeof want);
    }
    free(h);
    free(f);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),          cmocka_unit_test(test_shape_overflow),
        cmocka_unit_test(test_f16_roundtrip),  cmocka_unit_test(test_f16_rounding),
        cmocka_unit_test(test_bf16_rounding),  cmocka_unit_test(test_convert),
        cmocka_unit_test(test_convert_widen),
    };
    return cmocka_run_group_tests_name("dtype", tests, NULL, NULL);
}
