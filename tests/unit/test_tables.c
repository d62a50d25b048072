/* test_tables.c: the table sources of lib/encodings/tables.c. Values against closed forms in long double
 * (RoPE cos/sin and inv_freq, ALiBi key-index bias, Shaw's clipped index, the Vaswani
 * sinusoids) or lib's own row kernels (T5 buckets, Falcon's rounding), and every source filled
 * in odd chunks at odd row0 equal to the same source filled at once. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/bias.h"
#include "posenc/vllm.h"
#include "lib/encodings/tables.h"

/* Fill array `which` whole, as `chunk` rows per call (0: one call). Caller frees. */
static void *fill_all(pe_table *t, int which, int64_t chunk)
{
    const pe_table_array *a = &t->arr[which];
    size_t es = posenc_dtype_size(a->src), row = (size_t)a->rowlen * es;
    unsigned char *buf = malloc((size_t)a->rows * row + 1);
    assert_non_null(buf);
    if (chunk <= 0)
        chunk = a->rows;
    for (int64_t r0 = 0; r0 < a->rows; r0 += chunk) {
        int64_t n = a->rows - r0 < chunk ? a->rows - r0 : chunk;
        assert_int_equal(t->fill(t, which, r0, n, buf + (size_t)r0 * row, NULL), POSENC_OK);
    }
    return buf;
}

/* Every array: chunks of 1, 3 and 7 rows (odd row0 throughout) give the one-shot bytes. */
static void check_chunking(pe_table *t)
{
    for (int i = 0; i < t->narr; i++) {
        const pe_table_array *a = &t->arr[i];
        size_t bytes = (size_t)a->rows * (size_t)a->rowlen * posenc_dtype_size(a->src);
        unsigned char *once = fill_all(t, i, 0);
        static const int64_t chunks[] = { 1, 3, 7 };
        for (size_t c = 0; c < 3; c++) {
            unsigned char *parts = fill_all(t, i, chunks[c]);
            assert_memory_equal(once, parts, bytes);
            free(parts);
        }
        /* and a single row in the middle, alone */
        if (a->rows > 5) {
            size_t row = (size_t)a->rowlen * posenc_dtype_size(a->src);
            unsigned char *one = malloc(row);
            assert_int_equal(t->fill(t, i, 5, 1, one, NULL), POSENC_OK);
            assert_memory_equal(one, once + 5 * row, row);
            free(one);
        }
        free(once);
    }
}

/* positions 3, 10, 11, 40, 1000, ... (a list, as --positions gives) */
static void list_pos(const void *ctx, uint64_t row0, size_t n, int64_t *out)
{
    const int64_t *v = ctx;
    for (size_t i = 0; i < n; i++)
        out[i] = v[row0 + i];
}
static const int64_t positions[] = { 3, 10, 11, 40, 1000, 4095, 0, 7, 131071 };
#define NPOS ((int64_t)(sizeof positions / sizeof positions[0]))

static void test_rope_exact(void **state)
{
    (void)state;
    posenc_rope_config c = tu_rope_cfg(500000.0, 128, 128, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&c);
    pe_table t;
    pe_table_pos pos = { list_pos, positions };
    assert_int_equal(pe_table_rope(&t, &p, POSENC_PREC_EXACT, POSENC_LAYOUT_HF, NPOS, pos,
                                   POSENC_DT_F32, 1, NULL), POSENC_OK);
    assert_int_equal(t.narr, 3);
    assert_string_equal(t.arr[0].info.name, "cos");
    assert_string_equal(t.arr[1].info.name, "sin");
    assert_string_equal(t.arr[2].info.name, "inv_freq");
    assert_int_equal(t.arr[0].info.shape[0], NPOS);
    assert_int_equal(t.arr[0].info.shape[1], 128);
    assert_int_equal(t.arr[0].rows, NPOS);
    assert_int_equal(t.arr[2].src, POSENC_DT_F32); /* exact: rounded once, to the output dtype */
    /* a float32 table of the exact precision comes as float32 rows (lib/encodings/rope_step.h),
     * each the rounding of the double row: within half an ulp of float of the exact value
     * (2^-25 above 1/2, 2^-26 below) */
    assert_int_equal(t.arr[0].src, POSENC_DT_F32);
    assert_int_equal(t.arr[1].src, POSENC_DT_F32);
    float *cs = fill_all(&t, 0, 0), *sn = fill_all(&t, 1, 0);
    float *inv = fill_all(&t, 2, 0);
    for (int64_t r = 0; r < NPOS; r++)
        for (int i = 0; i < 128; i++) {
            long double f = powl(500000.0L, -(long double)(2 * (i % 64)) / 128.0L);
            long double ang = (long double)positions[r] * f;
            long double ce = cosl(ang), se = sinl(ang);
            assert_close(cs[r * 128 + i], (double)ce, 0, 0x1p-25 * (fabsl(ce) > 0.5L ? 1 : 0.5));
            assert_close(sn[r * 128 + i], (double)se, 0, 0x1p-25 * (fabsl(se) > 0.5L ? 1 : 0.5));
        }
    for (int i = 0; i < 64; i++)
        assert_true(inv[i] == (float)powl(500000.0L, -(long double)(2 * i) / 128.0L));
    /* other dtypes take the double rows, rounded once to them (f16 from a float32 row would be
     * rounded twice) */
    for (posenc_dtype dt = POSENC_DT_F16; dt <= POSENC_DT_F64; dt++) {
        pe_table t2;
        if (dt == POSENC_DT_F32 || !posenc_dtype_is_float(dt))
            continue;
        assert_int_equal(pe_table_rope(&t2, &p, POSENC_PREC_EXACT, POSENC_LAYOUT_HF, NPOS, pos,
                                       dt, 1, NULL), POSENC_OK);
        assert_int_equal(t2.arr[0].src, POSENC_DT_F64);
        pe_table_free(&t2);
    }
    free(cs);
    free(sn);
    free(inv);
    check_chunking(&t);
    pe_table_free(&t);
}

static void test_rope_precisions(void **state)
{
    (void)state;
    posenc_rope_config c = tu_rope_cfg(10000.0, 64, 64, POSENC_STYLE_GPTJ);
    posenc_rope_params p;
    posenc_vllm_info vi;
    assert_int_equal(posenc_rope_params_for(&c, POSENC_PREC_HF, "llama", 4096, 0, &p, &vi, NULL),
                     POSENC_OK);
    pe_table t;
    pe_table_pos range = { NULL, NULL };
    assert_int_equal(pe_table_rope(&t, &p, POSENC_PREC_HF, POSENC_LAYOUT_HALF, 100, range,
                                   POSENC_DT_BF16, 2, NULL), POSENC_OK);
    /* hf: transformers' float32 inv_freq as it is; rows as posenc_rope_table gives them */
    assert_int_equal(t.arr[2].src, POSENC_DT_F32);
    float *inv = fill_all(&t, 2, 0);
    assert_memory_equal(inv, p.inv_freq_f32, 32 * sizeof(float));
    free(inv);
    int64_t pos[100];
    double c_ref[100 * 32], s_ref[100 * 32];
    for (int i = 0; i < 100; i++)
        pos[i] = i;
    assert_int_equal(posenc_rope_table(&p, POSENC_PREC_HF, POSENC_LAYOUT_HALF, pos, 100, c_ref,
                                       s_ref, 1, NULL), POSENC_OK);
    double *cs = fill_all(&t, 0, 9), *sn = fill_all(&t, 1, 13);
    assert_memory_equal(cs, c_ref, sizeof c_ref);
    assert_memory_equal(sn, s_ref, sizeof s_ref);
    free(cs);
    free(sn);
    check_chunking(&t);
    pe_table_free(&t);

    /* vllm layout: one cos_sin_cache array */
    assert_int_equal(pe_table_rope(&t, &p, POSENC_PREC_HF, POSENC_LAYOUT_VLLM, 10, range,
                                   POSENC_DT_F32, 1, NULL), POSENC_OK);
    assert_int_equal(t.narr, 2);
    assert_string_equal(t.arr[0].info.name, "cos_sin_cache");
    assert_int_equal(t.arr[0].info.shape[1], 64);
    check_chunking(&t);
    pe_table_free(&t);
}

static void test_alibi(void **state)
{
    (void)state;
    double slopes[12];
    assert_int_equal(posenc_alibi_slopes(POSENC_ALIBI_REFERENCE, 12, 8, slopes, NULL), POSENC_OK);
    pe_table t;
    pe_table_pos pos = { list_pos, positions };
    assert_int_equal(pe_table_alibi(&t, POSENC_ALIBI_REFERENCE, POSENC_ALIBI_KEYINDEX, slopes, 12,
                                    4, 50, 0, pos, POSENC_DT_F32, NULL), POSENC_OK);
    assert_int_equal(t.arr[1].rows, 12 * 4);
    double *s = fill_all(&t, 0, 0), *b = fill_all(&t, 1, 0);
    assert_memory_equal(s, slopes, sizeof slopes);
    for (int h = 0; h < 12; h++)
        for (int q = 0; q < 4; q++)
            for (int k = 0; k < 50; k++) /* BLOOM: m * key index, whatever the query */
                assert_close(b[(h * 4 + q) * 50 + k], (double)((long double)slopes[h] * k), 1e-16, 0);
    free(s);
    free(b);
    check_chunking(&t);
    pe_table_free(&t);

    /* broadcast, causal: one row per head, the last query's m(j - i) */
    assert_int_equal(pe_table_alibi(&t, POSENC_ALIBI_MPT, POSENC_ALIBI_CAUSAL, slopes, 12, 4, 50,
                                    1, pos, POSENC_DT_F32, NULL), POSENC_OK);
    assert_int_equal(t.arr[1].info.shape[1], 1);
    b = fill_all(&t, 1, 0);
    for (int h = 0; h < 12; h++)
        for (int k = 0; k < 50; k++)
            assert_close(b[h * 50 + k], slopes[h] * (double)(k - 49), 1e-15, 0);
    free(b);
    pe_table_free(&t);
}

static void test_t5(void **state)
{
    (void)state;
    float w[32 * 6];
    for (int i = 0; i < 32 * 6; i++)
        w[i] = (float)i * 0.25f - 7.0f;
    pe_table t;
    pe_table_pos pos = { list_pos, positions };
    assert_int_equal(pe_table_t5(&t, 1, 32, 128, w, 6, NPOS, 300, pos, POSENC_DT_F64, NULL),
                     POSENC_OK);
    assert_int_equal(t.narr, 2);
    int32_t *bk = fill_all(&t, 0, 0);
    float *bias = fill_all(&t, 1, 0);
    for (int64_t r = 0; r < NPOS; r++)
        for (int64_t k = 0; k < 300; k++) {
            int b = posenc_t5_bucket(k - positions[r], 1, 32, 128);
            assert_int_equal(bk[r * 300 + k], b);
            for (int h = 0; h < 6; h++)
                assert_true(bias[((int64_t)h * NPOS + r) * 300 + k] == w[b * 6 + h]);
        }
    free(bk);
    free(bias);
    check_chunking(&t);
    pe_table_free(&t);
    /* bad parameters are refused by the builder */
    assert_int_equal(pe_table_t5(&t, 1, 2, 128, NULL, 0, 4, 4, pos, POSENC_DT_F32, NULL),
                     POSENC_EINVAL);
}

static void test_shaw(void **state)
{
    (void)state;
    const int64_t K = 5, depth = 3;
    float w[11 * 3];
    for (int i = 0; i < 33; i++)
        w[i] = (float)i;
    pe_table t;
    pe_table_pos pos = { list_pos, positions };
    for (int bert = 0; bert < 2; bert++) {
        assert_int_equal(pe_table_shaw(&t, K, bert, w, depth, 5, 60, pos, POSENC_DT_F32, NULL),
                         POSENC_OK);
        assert_int_equal(t.arr[1].rows, 5 * 60);
        int32_t *ix = fill_all(&t, 0, 0);
        float *rk = fill_all(&t, 1, 0);
        for (int64_t r = 0; r < 5; r++)
            for (int64_t k = 0; k < 60; k++) {
                int64_t d = bert ? positions[r] - k : k - positions[r];
                int64_t want = (d < -K ? -K : d > K ? K : d) + K;
                assert_int_equal(ix[r * 60 + k], want);
                for (int64_t c = 0; c < depth; c++)
                    assert_true(rk[(r * 60 + k) * depth + c] == w[want * depth + c]);
            }
        free(ix);
        free(rk);
        check_chunking(&t);
        pe_table_free(&t);
    }
}

static void test_sinusoidal(void **state)
{
    (void)state;
    posenc_sinusoidal *s = NULL;
    assert_int_equal(posenc_sinusoidal_new(POSENC_SIN_VASWANI, 16, -1, &s, NULL), POSENC_OK);
    pe_table t;
    pe_table_pos pos = { list_pos, positions };
    assert_int_equal(pe_table_sinusoidal(&t, s, 16, NPOS, pos, POSENC_DT_F32, NULL), POSENC_OK);
    double *pe = fill_all(&t, 0, 0);
    for (int64_t r = 0; r < NPOS; r++)
        for (int i = 0; i < 8; i++) { /* PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos */
            long double a = (long double)positions[r] / powl(10000.0L, (long double)(2 * i) / 16);
            assert_close(pe[r * 16 + 2 * i], (double)sinl(a), 0, 1e-13);
            assert_close(pe[r * 16 + 2 * i + 1], (double)cosl(a), 0, 1e-13);
        }
    free(pe);
    check_chunking(&t);
    pe_table_free(&t);
    posenc_sinusoidal_free(s);
}

/* The learned table's rows: a [rows, 4] table in memory, each value 100 * row + column. */
struct mem_rows {
    const float *data;
    int64_t rows, calls;
};
static posenc_status mem_rows(void *ctx, int64_t row0, int64_t n, void *buf, posenc_error *err)
{
    struct mem_rows *m = ctx;
    if (row0 < 0 || row0 + n > m->rows)
        return posenc_seterr(err, POSENC_ERANGE, "past the table");
    memcpy(buf, m->data + row0 * 4, (size_t)n * 4 * sizeof(float));
    m->calls++;
    return POSENC_OK;
}

static void test_learned(void **state)
{
    (void)state;
    float data[2000 * 4];
    for (int r = 0; r < 2000; r++)
        for (int c = 0; c < 4; c++)
            data[r * 4 + c] = (float)(100 * r + c);
    struct mem_rows m = { data, 2000, 0 };
    pe_table t;
    /* at positions (sparse), with BART's offset of 2 */
    pe_table_pos pos = { list_pos, positions };
    assert_int_equal(pe_table_learned(&t, mem_rows, &m, POSENC_DT_F32, 4, 5, 2, pos,
                                      POSENC_DT_F16, NULL), POSENC_OK);
    assert_int_equal(t.pure, 0);
    float *pe = fill_all(&t, 0, 0);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 4; c++)
            assert_true(pe[r * 4 + c] == (float)(100 * (positions[r] + 2) + c));
    assert_int_equal(t.fill(&t, 0, 5, 1, pe, NULL), POSENC_ERANGE); /* 4095 is past the table */
    free(pe);
    check_chunking(&t);
    pe_table_free(&t);
    /* a range: the stored rows in order, one callback per chunk */
    pe_table_pos range = { NULL, NULL };
    m.calls = 0;
    assert_int_equal(pe_table_learned(&t, mem_rows, &m, POSENC_DT_F32, 4, 1998, 2, range,
                                      POSENC_DT_F32, NULL), POSENC_OK);
    pe = fill_all(&t, 0, 500);
    assert_int_equal(m.calls, 4);
    assert_memory_equal(pe, data + 8, 1998 * 4 * sizeof(float));
    free(pe);
    pe_table_free(&t);
}

static void test_params(void **state)
{
    (void)state;
    unsigned ro = pe_table_rope_only();
    assert_int_equal(ro, PE_TP_BIT(PE_TP_LAYER_TYPE) | PE_TP_BIT(PE_TP_PRECISION) |
                         PE_TP_BIT(PE_TP_LAYOUT) | PE_TP_BIT(PE_TP_MAX_MODEL_LEN));
    assert_int_equal(pe_table_param_refused(PE_TP_BIT(PE_TP_HEADS), POSENC_ENC_ALIBI), -1);
    assert_int_equal(pe_table_param_refused(PE_TP_BIT(PE_TP_HEADS), POSENC_ENC_T5), -1);
    assert_int_equal(pe_table_param_refused(PE_TP_BIT(PE_TP_HEADS), POSENC_ENC_SHAW), PE_TP_HEADS);
    assert_int_equal(pe_table_param_refused(PE_TP_BIT(PE_TP_HEADS), POSENC_ENC_ROPE), PE_TP_HEADS);
    /* the first refused in option order */
    assert_int_equal(pe_table_param_refused(PE_TP_BIT(PE_TP_BROADCAST) | PE_TP_BIT(PE_TP_VARIANT) |
                                                PE_TP_BIT(PE_TP_D_MODEL),
                                            POSENC_ENC_SHAW),
                     PE_TP_D_MODEL);
    assert_int_equal(pe_table_param_refused(PE_TP_BIT(PE_TP_WEIGHTS) | PE_TP_BIT(PE_TP_TENSOR) |
                                                PE_TP_BIT(PE_TP_D_MODEL),
                                            POSENC_ENC_LEARNED),
                     -1);
    assert_string_equal(pe_table_param_name(PE_TP_MAX_REL), "--max-relative-position");
    assert_string_equal(pe_table_label(POSENC_ENC_ALIBI), "ALiBi");
}

static void test_round_dd(void **state)
{
    (void)state;
    /* 1 + 2^-24 is halfway between two floats: the sign of lo decides */
    double hi = 1.0 + ldexp(1.0, -24);
    float f;
    pe_round_dd(hi, 1e-30, POSENC_DT_F32, &f);
    assert_true(f == 1.0f + ldexpf(1.0f, -23));
    pe_round_dd(hi, -1e-30, POSENC_DT_F32, &f);
    assert_true(f == 1.0f);
    pe_round_dd(hi, 0, POSENC_DT_F32, &f); /* ties to even */
    assert_true(f == 1.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rope_exact), cmocka_unit_test(test_rope_precisions),
        cmocka_unit_test(test_alibi),      cmocka_unit_test(test_t5),
        cmocka_unit_test(test_shaw),       cmocka_unit_test(test_sinusoidal),
        cmocka_unit_test(test_learned),    cmocka_unit_test(test_params),
        cmocka_unit_test(test_round_dd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
