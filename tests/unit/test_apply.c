/* test_apply.c: the RoPE apply kernel against an independent long double reference, for every
 * layout, style, partial rotary, dtype, offset, position array (shared and per batch row),
 * inverse, and the hf-precision f16/bf16 rounding rule. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "posenc/apply.h"
#include "posenc/cpu.h"
#include "posenc/dtype.h"
#include "posenc/rope.h"

#define THETA 10000.0

/* deterministic pseudo-random doubles in [-2, 2) */
static uint64_t rng_state = 88172645463325252ull;
static double rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 4.0 - 2.0;
}

/* flat offset (in vectors) of (b, h, s) in a layout */
static size_t vec_index(posenc_apply_layout l, int64_t B, int64_t H, int64_t S, int64_t b,
                        int64_t h, int64_t s)
{
    (void)B;
    switch (l) {
    case POSENC_APPLY_BHSD: return (size_t)((b * H + h) * S + s);
    case POSENC_APPLY_BSHD: return (size_t)((b * S + s) * H + h);
    case POSENC_APPLY_SHD:
    case POSENC_APPLY_GGML: return (size_t)(s * H + h);
    case POSENC_APPLY_HSD: return (size_t)(h * S + s);
    case POSENC_APPLY_SD: return (size_t)s;
    case POSENC_APPLY_BSF: return (size_t)((b * S + s) * H + h); /* bshd's bytes */
    case POSENC_APPLY_SF: return (size_t)(s * H + h);             /* shd's */
    }
    return 0;
}

static int shape_for(posenc_apply_layout l, int64_t B, int64_t H, int64_t S, int64_t D,
                     int64_t *shape)
{
    switch (l) {
    case POSENC_APPLY_BHSD: shape[0] = B; shape[1] = H; shape[2] = S; shape[3] = D; return 4;
    case POSENC_APPLY_BSHD: shape[0] = B; shape[1] = S; shape[2] = H; shape[3] = D; return 4;
    case POSENC_APPLY_SHD:
    case POSENC_APPLY_GGML: shape[0] = S; shape[1] = H; shape[2] = D; return 3;
    case POSENC_APPLY_HSD: shape[0] = H; shape[1] = S; shape[2] = D; return 3;
    case POSENC_APPLY_SD: shape[0] = S; shape[1] = D; return 2;
    case POSENC_APPLY_BSF: shape[0] = B; shape[1] = S; shape[2] = H * D; return 3;
    case POSENC_APPLY_SF: shape[0] = S; shape[1] = H * D; return 2;
    }
    return 0;
}

static double out_eps(posenc_dtype dt)
{
    switch (dt) {
    case POSENC_DT_BF16: return 0x1p-8;
    case POSENC_DT_F16: return 0x1p-11;
    case POSENC_DT_F32: return 0x1p-24;
    default: return 0x1p-53;
    }
}

enum pos_mode { POS_OFFSET, POS_SHARED, POS_PER_BATCH };

struct case_ {
    posenc_apply_layout layout;
    posenc_style style;
    int head_dim, rotary_dim;
    posenc_dtype in_dt, out_dt;
    enum pos_mode pm;
    int64_t offset;
    int inverse;
    int threads;
};

static void run_case(const struct case_ *k)
{
    const int64_t B = 2, H = 3, S = 5, D = k->head_dim;
    int64_t shape[4];
    int ndim = shape_for(k->layout, B, H, S, D, shape);
    posenc_apply_shape sh;
    posenc_error err = { 0 };
    assert_int_equal(posenc_apply_shape_split(k->layout, ndim, shape, 0, D, &sh, &err),
                     POSENC_OK);
    int64_t Bn = sh.batch, Hn = sh.heads;
    size_t nvec = (size_t)posenc_apply_shape_vectors(&sh), n = nvec * (size_t)D;

    posenc_rope_config cfg = tu_rope_cfg(THETA, k->head_dim, k->rotary_dim, k->style);
    posenc_rope_params p = tu_rope_params(&cfg);

    /* positions */
    int64_t posv[2 * 5];
    posenc_apply_positions ap = { NULL, k->offset, 1, 1 };
    if (k->pm != POS_OFFSET) {
        ap.values = posv;
        ap.rows = k->pm == POS_PER_BATCH ? Bn : 1;
        for (int64_t i = 0; i < ap.rows * S; i++)
            posv[i] = (i * 7919 + 13) % 3000; /* scrambled, with large values */
    }

    /* input data */
    double *xd = malloc(n * sizeof *xd);
    void *x = malloc(n * 8), *y = malloc(n * 8);
    assert_non_null(xd);
    assert_non_null(x);
    assert_non_null(y);
    for (size_t i = 0; i < n; i++)
        xd[i] = rnd();
    posenc_dtype_convert(x, k->in_dt, xd, POSENC_DT_F64, n);
    posenc_dtype_convert(xd, POSENC_DT_F64, x, k->in_dt, n); /* the values actually stored */

    posenc_apply_opts o = { POSENC_PREC_EXACT, k->inverse, k->in_dt };
    posenc_apply *a = NULL;
    assert_int_equal(posenc_apply_new(&p, &o, &ap, S, k->threads, &a, &err), POSENC_OK);
    assert_int_equal(posenc_apply_head_dim(a), D);
    assert_int_equal(posenc_apply_check(a, &sh, &err), POSENC_OK);

    /* rotate in two uneven pieces to exercise `first` */
    size_t cut = nvec / 3, ies = posenc_dtype_size(k->in_dt), oes = posenc_dtype_size(k->out_dt);
    int inplace = ies == oes;
    if (inplace)
        memcpy(y, x, n * ies);
    posenc_apply_rows(a, &sh, 0, cut, inplace ? y : x, k->in_dt, y, k->out_dt);
    posenc_apply_rows(a, &sh, cut, nvec - cut,
                      (unsigned char *)(inplace ? y : x) + cut * (size_t)D * ies, k->in_dt,
                      (unsigned char *)y + cut * (size_t)D * oes, k->out_dt);
    double *yd = malloc(n * sizeof *yd);
    assert_non_null(yd);
    posenc_dtype_convert(yd, POSENC_DT_F64, y, k->out_dt, n);

    const int nf = k->rotary_dim / 2;
    const double ceps = k->in_dt == POSENC_DT_F64 ? 0x1p-52 : 0x1p-23;
    const double oeps = out_eps(k->out_dt);
    for (int64_t b = 0; b < Bn; b++)
        for (int64_t h = 0; h < Hn; h++)
            for (int64_t s = 0; s < S; s++) {
                size_t v = vec_index(k->layout, Bn, Hn, S, b, h, s);
                const double *xv = xd + v * (size_t)D;
                const double *yv = yd + v * (size_t)D;
                int64_t pos = k->pm == POS_OFFSET ? k->offset + s
                              : posv[(k->pm == POS_PER_BATCH ? b : 0) * S + s];
                char *done = calloc((size_t)D, 1);
                for (int i = 0; i < nf; i++) {
                    int i1 = k->style == POSENC_STYLE_GPTJ ? 2 * i : i;
                    int i2 = k->style == POSENC_STYLE_GPTJ ? 2 * i + 1 : i + nf;
                    long double inv = powl((long double)THETA, -2.0L * i / k->rotary_dim);
                    long double ang = (long double)pos * inv * (k->inverse ? -1 : 1);
                    long double c = cosl(ang), sn = sinl(ang);
                    long double r1 = xv[i1] * c - xv[i2] * sn, r2 = xv[i2] * c + xv[i1] * sn;
                    double tol = 4 * ceps * (fabs(xv[i1]) + fabs(xv[i2]));
                    assert_close(yv[i1], (double)r1, oeps, tol + 1e-300);
                    assert_close(yv[i2], (double)r2, oeps, tol + 1e-300);
                    done[i1] = done[i2] = 1;
                }
                for (int i = 0; i < D; i++)
                    if (!done[i]) /* pass-through: exact (values fit the output dtype) */
                        assert_true(yv[i] == xv[i] || k->out_dt != k->in_dt);
                if (k->out_dt != k->in_dt)
                    for (int i = 0; i < D; i++)
                        if (!done[i])
                            assert_close(yv[i], xv[i], oeps, 0);
                free(done);
            }
    free(xd);
    free(yd);
    free(x);
    free(y);
    posenc_apply_free(a);
}

static void test_all_combinations(void **state)
{
    (void)state;
    static const posenc_dtype dts[] = { POSENC_DT_F16, POSENC_DT_BF16, POSENC_DT_F32,
                                        POSENC_DT_F64 };
    int ncase = 0;
    for (int l = 0; l < 7; l++) /* every layout, the flat ones included */
        for (int st = 0; st < 2; st++)
            for (int partial = 0; partial < 2; partial++)
                for (int d = 0; d < 4; d++)
                    for (int pm = 0; pm < 3; pm++)
                        for (int inv = 0; inv < 2; inv++) {
                            struct case_ k = { (posenc_apply_layout)l, (posenc_style)st,
                                               partial ? 12 : 8, 8, dts[d], dts[d],
                                               (enum pos_mode)pm, pm == 0 ? 1000 : 0, inv,
                                               1 + (ncase % 3) };
                            run_case(&k);
                            ncase++;
                        }
    assert_int_equal(ncase, 7 * 2 * 2 * 4 * 3 * 2);
}

static void test_dtype_change(void **state)
{
    (void)state;
    static const posenc_dtype dts[] = { POSENC_DT_F16, POSENC_DT_BF16, POSENC_DT_F32,
                                        POSENC_DT_F64 };
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int st = 0; st < 2; st++) {
                struct case_ k = { POSENC_APPLY_BSHD, (posenc_style)st, 10, 6, dts[a], dts[b],
                                   POS_SHARED, 0, 0, 1 };
                run_case(&k);
            }
}

/* Pass-through elements convert exactly (the fast f16/bf16 paths against lib/core/dtype.c). */
static void test_conversions(void **state)
{
    (void)state;
    posenc_rope_config cfg = tu_rope_cfg(THETA, 64, 2, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&cfg);
    posenc_apply_positions ap = { NULL, 0, 1, 1 };
    posenc_error err = { 0 };
    const size_t D = 64, nvec = 1024, n = D * nvec; /* 65536 elements */
    int64_t shape[2] = { (int64_t)nvec, (int64_t)D };
    posenc_apply_shape sh;
    assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_SD, 2, shape, &sh, &err), POSENC_OK);
    uint16_t *h = malloc(n * 2), *h2 = malloc(n * 2);
    float *f = malloc(n * 4);
    uint32_t *bits = malloc(n * 4);
    assert_non_null(h);
    assert_non_null(h2);
    assert_non_null(f);
    assert_non_null(bits);

    for (int dt = POSENC_DT_F16; dt <= POSENC_DT_BF16; dt++) {
        posenc_apply *a = NULL;
        posenc_apply_opts o = { POSENC_PREC_EXACT, 0, (posenc_dtype)dt };
        /* every 16-bit pattern in, f32 out */
        assert_int_equal(posenc_apply_new(&p, &o, &ap, (int64_t)nvec, 1, &a, &err), POSENC_OK);
        for (size_t i = 0; i < n; i++)
            h[i] = (uint16_t)i;
        posenc_apply_rows(a, &sh, 0, nvec, h, (posenc_dtype)dt, f, POSENC_DT_F32);
        for (size_t i = 0; i < n; i++) {
            if (i % D < 2)
                continue; /* rotated */
            float want = dt == POSENC_DT_F16 ? posenc_f16_to_f32(h[i]) : posenc_bf16_to_f32(h[i]);
            if (isnan(want))
                assert_true(isnan(f[i]));
            else
                assert_memory_equal(&f[i], &want, 4);
        }
        posenc_apply_free(a);

        /* f32 patterns across the whole range, narrow out */
        o.dtype = POSENC_DT_F32;
        assert_int_equal(posenc_apply_new(&p, &o, &ap, (int64_t)nvec, 1, &a, &err), POSENC_OK);
        for (int round = 0; round < 64; round++) {
            for (size_t i = 0; i < n; i++)
                bits[i] = (uint32_t)(i * 65537u + (uint32_t)round * 1048573u) ^
                          (round & 1 ? 0x80000000u : 0);
            /* exact ties and the f16 subnormal/overflow boundaries */
            bits[5] = 0x3f808000u; bits[6] = 0x3f818000u; bits[7] = 0x33000000u;
            bits[8] = 0x477ff000u; bits[9] = 0x477fefffu; bits[10] = 0x7fc00001u;
            bits[11] = 0x387fe000u; bits[12] = 0x33800001u;
            memcpy(f, bits, n * 4);
            posenc_apply_rows(a, &sh, 0, nvec, f, POSENC_DT_F32, h2, (posenc_dtype)dt);
            for (size_t i = 0; i < n; i++) {
                if (i % D < 2)
                    continue;
                uint16_t want = dt == POSENC_DT_F16 ? posenc_f32_to_f16(f[i])
                                                    : posenc_f32_to_bf16(f[i]);
                if (isnan(f[i]))
                    assert_true((h2[i] & 0x7fffu) > (dt == POSENC_DT_F16 ? 0x7c00u : 0x7f80u));
                else if (h2[i] != want)
                    fail_msg("f32 %08x -> %s: got %04x, want %04x", bits[i],
                             posenc_dtype_name((posenc_dtype)dt), h2[i], want);
            }
        }
        posenc_apply_free(a);
    }
    free(h);
    free(h2);
    free(f);
    free(bits);
}

/* hf precision on bf16/f16 dumps: tables cast to the dump dtype, every op rounded to it. The
 * reference evaluates torch's expression with lib/core/dtype.c's conversions. */
static float rnd_dt(float v, posenc_dtype dt)
{
    return dt == POSENC_DT_BF16 ? posenc_bf16_to_f32(posenc_f32_to_bf16(v))
                                : posenc_f16_to_f32(posenc_f32_to_f16(v));
}

static void test_hf_narrow(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    for (int dt = POSENC_DT_F16; dt <= POSENC_DT_F32; dt++)
        for (int st = 0; st < 2; st++) {
            posenc_rope_config cfg = tu_rope_cfg(THETA, 16, 16, (posenc_style)st);
            posenc_rope_params p = tu_rope_params(&cfg);
            const int64_t S = 40, D = 16;
            int64_t shape[2] = { S, D };
            posenc_apply_shape sh;
            assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_SD, 2, shape, &sh, &err),
                             POSENC_OK);
            posenc_apply_positions ap = { NULL, 123, 1, 1 };
            posenc_apply_opts o = { POSENC_PREC_HF, 0, (posenc_dtype)dt };
            posenc_apply *a = NULL;
            assert_int_equal(posenc_apply_new(&p, &o, &ap, S, 2, &a, &err), POSENC_OK);
            double xd[40 * 16];
            float xf[40 * 16], yf[40 * 16];
            unsigned char buf[40 * 16 * 4];
            for (int i = 0; i < S * D; i++)
                xd[i] = rnd() * 3;
            posenc_dtype_convert(buf, (posenc_dtype)dt, xd, POSENC_DT_F64, (size_t)(S * D));
            posenc_dtype_convert(xf, POSENC_DT_F32, buf, (posenc_dtype)dt, (size_t)(S * D));
            posenc_apply_rows(a, &sh, 0, (uint64_t)S, buf, (posenc_dtype)dt, buf,
                              (posenc_dtype)dt);
            posenc_dtype_convert(yf, POSENC_DT_F32, buf, (posenc_dtype)dt, (size_t)(S * D));
            int nf = 8;
            for (int64_t s = 0; s < S; s++)
                for (int i = 0; i < nf; i++) {
                    float ang = p.inv_freq_f32[i] * (float)(123 + s); /* one f32 rounding */
                    float c = (float)cosl((long double)ang), sn = (float)sinl((long double)ang);
                    int i1 = st ? 2 * i : i, i2 = st ? 2 * i + 1 : i + nf;
                    float a1 = xf[s * D + i1], a2 = xf[s * D + i2], r1, r2;
                    if (dt == POSENC_DT_F32) {
                        r1 = a1 * c - a2 * sn;
                        r2 = a2 * c + a1 * sn;
                    } else {
                        posenc_dtype t = (posenc_dtype)dt;
                        float cc = rnd_dt(c, t), ss = rnd_dt(sn, t);
                        r1 = rnd_dt(rnd_dt(a1 * cc, t) + rnd_dt(-a2 * ss, t), t);
                        r2 = rnd_dt(rnd_dt(a2 * cc, t) + rnd_dt(a1 * ss, t), t);
                    }
                    assert_close(yf[s * D + i1], r1, 0, 0);
                    assert_close(yf[s * D + i2], r2, 0, 0);
                }
            posenc_apply_free(a);
        }
}

/* Qwen3.5-style interleaved mrope: frequency i takes the h axis for i % 3 == 1 (i < 3 s_h),
 * w for i % 3 == 2 (i < 3 s_w), t otherwise. */
static void test_mrope_interleaved(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_rope_config cfg = tu_rope_cfg(THETA, 256, 64, POSENC_STYLE_NEOX);
    cfg.n_mrope_section = 3;
    cfg.mrope_section[0] = 11;
    cfg.mrope_section[1] = 11;
    cfg.mrope_section[2] = 10;
    cfg.mrope_interleaved = 1;
    posenc_rope_params p = tu_rope_params(&cfg);
    assert_int_equal(p.mrope, 1);
    const int64_t S = 6, D = 256;
    int64_t shape[2] = { S, D };
    posenc_apply_shape sh;
    assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_SD, 2, shape, &sh, &err), POSENC_OK);
    int64_t pos3[3 * 6];
    for (int i = 0; i < 3 * S; i++)
        pos3[i] = i < S ? 10 + i : i < 2 * S ? 3 * i : 500 - i;
    posenc_apply_positions ap = { pos3, 0, 1, 3 };
    posenc_apply_opts o = { POSENC_PREC_EXACT, 0, POSENC_DT_F64 };
    posenc_apply *a = NULL;
    assert_int_equal(posenc_apply_new(&p, &o, &ap, S, 1, &a, &err), POSENC_OK);
    double x[6 * 256], y[6 * 256];
    for (int i = 0; i < S * D; i++)
        x[i] = rnd();
    posenc_apply_rows(a, &sh, 0, (uint64_t)S, x, POSENC_DT_F64, y, POSENC_DT_F64);
    for (int64_t s = 0; s < S; s++) {
        for (int i = 0; i < 32; i++) {
            int axis = (i % 3 == 1 && i < 33) ? 1 : (i % 3 == 2 && i < 30) ? 2 : 0;
            long double ang = (long double)pos3[axis * S + s] * powl(THETA, -2.0L * i / 64);
            long double c = cosl(ang), sn = sinl(ang);
            double a1 = x[s * D + i], a2 = x[s * D + i + 32];
            assert_close(y[s * D + i], (double)(a1 * c - a2 * sn), 1e-14, 1e-14);
            assert_close(y[s * D + i + 32], (double)(a2 * c + a1 * sn), 1e-14, 1e-14);
        }
        for (int i = 64; i < D; i++)
            assert_true(y[s * D + i] == x[s * D + i]);
    }
    posenc_apply_free(a);

    /* 3-axis positions on a config without mrope are refused */
    posenc_rope_config plain = tu_rope_cfg(THETA, 64, 64, POSENC_STYLE_NEOX);
    posenc_rope_params pp = tu_rope_params(&plain);
    assert_int_equal(posenc_apply_new(&pp, &o, &ap, S, 1, &a, &err), POSENC_EINVAL);
}

static void test_inverse_roundtrip(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_rope_config cfg = tu_rope_cfg(THETA, 128, 128, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&cfg);
    const int64_t S = 64, D = 128;
    int64_t shape[2] = { S, D };
    posenc_apply_shape sh;
    assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_SD, 2, shape, &sh, &err), POSENC_OK);
    posenc_apply_positions ap = { NULL, 100000, 1, 1 };
    posenc_apply_opts fwd = { POSENC_PREC_EXACT, 0, POSENC_DT_F32 },
                      inv = { POSENC_PREC_EXACT, 1, POSENC_DT_F32 };
    posenc_apply *a = NULL, *b = NULL;
    assert_int_equal(posenc_apply_new(&p, &fwd, &ap, S, 1, &a, &err), POSENC_OK);
    assert_int_equal(posenc_apply_new(&p, &inv, &ap, S, 1, &b, &err), POSENC_OK);
    static float x[64 * 128], y[64 * 128];
    for (int i = 0; i < S * D; i++)
        x[i] = y[i] = (float)rnd();
    posenc_apply_rows(a, &sh, 0, (uint64_t)S, y, POSENC_DT_F32, y, POSENC_DT_F32);
    posenc_apply_rows(b, &sh, 0, (uint64_t)S, y, POSENC_DT_F32, y, POSENC_DT_F32);
    for (int i = 0; i < S * D; i++) /* within 2 ulp of the pair's magnitude */
        assert_close(y[i], x[i], 0, 2 * 0x1p-23 * 2);
    posenc_apply_free(a);
    posenc_apply_free(b);
}

/* The exact float32 table is built by angle addition from an anchor row every 32 positions
 * (lib/encodings/rope_step.h): every row must hold the bits of the full computation,
 * (float)posenc_rope_cossin, whatever the positions (pm: a run from 0, a run below 2^31, gaps
 * and repeats, a descending array), the attention scaling, inverse, threads and CPU path (each
 * this machine runs). A vector (1, 0) in neox pairs rotates to (cos, sin) exactly: y1 = 1*c -
 * 0*s and y2 = 0*c + 1*s (a zero sine, at position 0 only, compares as a value). */
static void check_stepped(const char *path, double theta, double scale, int pm, int inv)
{
    enum { S = 1500, D = 128, NF = 64 };
    static int64_t vals[S];
    static float x[S * D];
    double ce[POSENC_MAX_FREQ], se[POSENC_MAX_FREQ];
    posenc_error err = { 0 };
    posenc_rope_config cfg = tu_rope_cfg(theta, D, D, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&cfg);
    p.attention_scaling = scale;
    posenc_apply_positions ap = { NULL, 0, 1, 1 };
    if (pm == 1) {
        ap.offset = (INT64_C(1) << 31) - S; /* the largest positions */
    } else if (pm >= 2) {
        for (int r = 0; r < S; r++)
            vals[r] = pm == 2 ? (int64_t)r * 7 / 3 + (r % 5 == 0 ? 40 : 0)
                              : (int64_t)(S - r) * 1000003;
        ap.values = vals;
    }
    posenc_apply_opts o = { POSENC_PREC_EXACT, inv, POSENC_DT_F32 };
    int64_t shape[2] = { S, D };
    posenc_apply_shape sh;
    assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_SD, 2, shape, &sh, &err), POSENC_OK);
    posenc_apply *a = NULL;
    assert_int_equal(posenc_apply_new(&p, &o, &ap, S, 1 + (pm & 1), &a, &err), POSENC_OK);
    for (int r = 0; r < S; r++)
        for (int i = 0; i < D; i++)
            x[r * D + i] = i < NF ? 1.0f : 0.0f;
    posenc_apply_rows(a, &sh, 0, S, x, POSENC_DT_F32, x, POSENC_DT_F32);
    posenc_apply_free(a);
    for (int r = 0; r < S; r++) {
        int64_t pos = ap.values ? vals[r] : ap.offset + r;
        posenc_rope_cossin(&p, POSENC_PREC_EXACT, pos, ce, se);
        for (int i = 0; i < NF; i++) {
            float c = (float)ce[i], sn = (float)(inv ? -se[i] : se[i]);
            if (memcmp(&c, &x[r * D + i], 4) != 0 || sn != x[r * D + NF + i] ||
                (sn != 0 && memcmp(&sn, &x[r * D + NF + i], 4) != 0))
                fail_msg("path %s, theta %g scale %g positions %d inverse %d: row %d (position "
                         "%lld) pair %d: (%a, %a), want (%a, %a)",
                         path, theta, scale, pm, inv, r, (long long)pos, i, (double)x[r * D + i],
                         (double)x[r * D + NF + i], (double)c, (double)sn);
        }
    }
}

static void test_stepped_table(void **state)
{
    (void)state;
    const double thetas[] = { 10000.0, 1e6 };
    const double scales[] = { 1.0, 1.2079441541679836, 0.7 };
    posenc_cpu_path was = posenc_cpu_active();
    for (int path = POSENC_CPU_BASELINE; path <= POSENC_CPU_NEON; path++) {
        if (posenc_cpu_set((posenc_cpu_path)path, NULL) != POSENC_OK)
            continue; /* not on this machine */
        for (int ti = 0; ti < 2; ti++)
            for (int si = 0; si < 3; si++)
                for (int pm = 0; pm < 4; pm++)
                    for (int inv = 0; inv < 2; inv++)
                        check_stepped(posenc_cpu_name((posenc_cpu_path)path), thetas[ti],
                                      scales[si], pm, inv);
    }
    assert_int_equal(posenc_cpu_set(was, NULL), POSENC_OK);
}

static void test_errors(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_apply_shape sh;
    int64_t s3[3] = { 2, 3, 4 };
    assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_BHSD, 3, s3, &sh, &err),
                     POSENC_EMISMATCH);
    assert_non_null(strstr(err.msg, "bhsd"));
    posenc_apply_layout l;
    assert_int_equal(posenc_apply_layout_parse("bshd", &l, &err), POSENC_OK);
    assert_int_equal(l, POSENC_APPLY_BSHD);
    assert_int_equal(posenc_apply_layout_parse("bsdh", &l, &err), POSENC_EINVAL);
    /* llama.cpp's layout: [tokens, heads, head_dim], read in shd's memory order */
    assert_int_equal(posenc_apply_layout_parse("ggml", &l, &err), POSENC_OK);
    assert_int_equal(l, POSENC_APPLY_GGML);
    assert_string_equal(posenc_apply_layout_name(l), "ggml");
    assert_int_equal(posenc_apply_layout_seq_axis(l), 0);
    assert_int_equal(posenc_apply_shape_of(l, 3, s3, &sh, &err), POSENC_OK);
    assert_int_equal(sh.layout, POSENC_APPLY_SHD);
    assert_true(sh.seq == 2 && sh.heads == 3 && sh.head_dim == 4 && sh.batch == 1);

    posenc_rope_config cfg = tu_rope_cfg(THETA, 8, 8, POSENC_STYLE_NEOX);
    posenc_rope_params p = tu_rope_params(&cfg);
    posenc_apply_opts o = { POSENC_PREC_EXACT, 0, POSENC_DT_F32 };
    posenc_apply *a = NULL;
    int64_t bad[2] = { 0, -1 };
    posenc_apply_positions ap = { bad, 0, 1, 1 };
    assert_int_equal(posenc_apply_new(&p, &o, &ap, 2, 1, &a, &err), POSENC_ERANGE);
    bad[1] = INT64_C(1) << 31;
    assert_int_equal(posenc_apply_new(&p, &o, &ap, 2, 1, &a, &err), POSENC_ERANGE);
    posenc_apply_positions off = { NULL, (INT64_C(1) << 31) - 1, 1, 1 };
    assert_int_equal(posenc_apply_new(&p, &o, &off, 2, 1, &a, &err), POSENC_ERANGE);
    o.dtype = POSENC_DT_I32;
    assert_int_equal(posenc_apply_new(&p, &o, &off, 1, 1, &a, &err), POSENC_EINVAL);
    o.dtype = POSENC_DT_F32;
    p.rotary_dim = 7;
    assert_int_equal(posenc_apply_new(&p, &o, &off, 1, 1, &a, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "odd"));

    /* head_dim / seq / batch mismatch */
    p = tu_rope_params(&cfg);
    posenc_apply_positions two = { NULL, 0, 1, 1 };
    assert_int_equal(posenc_apply_new(&p, &o, &two, 4, 1, &a, &err), POSENC_OK);
    int64_t s4[4] = { 1, 2, 4, 16 };
    assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_BHSD, 4, s4, &sh, &err), POSENC_OK);
    assert_int_equal(posenc_apply_check(a, &sh, &err), POSENC_EMISMATCH);
    assert_non_null(strstr(err.msg, "head_dim 16"));
    s4[3] = 8;
    s4[2] = 5;
    assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_BHSD, 4, s4, &sh, &err), POSENC_OK);
    assert_int_equal(posenc_apply_check(a, &sh, &err), POSENC_EMISMATCH);
    posenc_apply_free(a);
    posenc_apply_free(NULL);
}

/* bsf and sf: the flat axis split by head_dim or a head count, read as bshd and shd */
static void test_flat_layouts(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_apply_shape sh;
    posenc_apply_layout l;
    int64_t bsf[3] = { 2, 5, 4096 }, sf[2] = { 7, 1024 };
    assert_int_equal(posenc_apply_layout_parse("bsf", &l, &err), POSENC_OK);
    assert_int_equal(l, POSENC_APPLY_BSF);
    assert_true(posenc_apply_layout_flat(l) && !posenc_apply_layout_flat(POSENC_APPLY_BSHD));
    assert_int_equal(posenc_apply_layout_seq_axis(POSENC_APPLY_BSF), 1);
    assert_int_equal(posenc_apply_layout_seq_axis(POSENC_APPLY_SF), 0);
    assert_int_equal(posenc_apply_shape_split(POSENC_APPLY_BSF, 3, bsf, 0, 128, &sh, &err),
                     POSENC_OK);
    assert_int_equal(sh.layout, POSENC_APPLY_BSHD);
    assert_true(sh.batch == 2 && sh.seq == 5 && sh.heads == 32 && sh.head_dim == 128);
    assert_int_equal(posenc_apply_shape_split(POSENC_APPLY_SF, 2, sf, 8, 0, &sh, &err),
                     POSENC_OK);
    assert_int_equal(sh.layout, POSENC_APPLY_SHD);
    assert_true(sh.batch == 1 && sh.seq == 7 && sh.heads == 8 && sh.head_dim == 128);
    /* refusals: no split given, a split that does not divide, the wrong number of dims */
    assert_int_equal(posenc_apply_shape_of(POSENC_APPLY_SF, 2, sf, &sh, &err), POSENC_EINVAL);
    assert_int_equal(posenc_apply_shape_split(POSENC_APPLY_SF, 2, sf, 0, 96, &sh, &err),
                     POSENC_EMISMATCH);
    assert_non_null(strstr(err.msg, "last axis 1024 of layout sf is not a multiple of head_dim 96"));
    assert_int_equal(posenc_apply_shape_split(POSENC_APPLY_BSF, 2, sf, 0, 128, &sh, &err),
                     POSENC_EMISMATCH);
    assert_non_null(strstr(err.msg, "[batch, seq, heads * head_dim]"));
    /* other layouts ignore the split */
    int64_t s4[4] = { 1, 2, 3, 16 };
    assert_int_equal(posenc_apply_shape_split(POSENC_APPLY_BHSD, 4, s4, 5, 7, &sh, &err),
                     POSENC_OK);
    assert_true(sh.heads == 2 && sh.head_dim == 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_combinations), cmocka_unit_test(test_dtype_change),
        cmocka_unit_test(test_conversions),      cmocka_unit_test(test_hf_narrow),
        cmocka_unit_test(test_mrope_interleaved), cmocka_unit_test(test_inverse_roundtrip),
        cmocka_unit_test(test_stepped_table),
        cmocka_unit_test(test_errors),           cmocka_unit_test(test_flat_layouts),
    };
    return cmocka_run_group_tests_name("apply", tests, NULL, NULL);
}
