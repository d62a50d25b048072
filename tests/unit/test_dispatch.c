/* test_dispatch.c: every CPU path this machine can run (posenc/cpu.h) gives the portable path's
 * bits: the kernels on every f16/bf16 bit pattern and on special float32 values, and
 * posenc_apply_rows in every precision, style and in/out dtype, on random values, random bit
 * patterns and the special ones (subnormals, inf, NaN with payloads, -0, the largest finite
 * f16 and bf16). A path the CPU lacks is reported and skipped. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "posenc/apply.h"
#include "posenc/config.h"
#include "posenc/cpu.h"
#include "posenc/dtype.h"
#include "posenc/llamacpp.h"
#include "posenc/rope.h"
#include "posenc/verify.h"
#include "lib/core/cpu_internal.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static const pe_kern *path_kern(posenc_cpu_path p)
{
    assert_int_equal(posenc_cpu_set(p, NULL), POSENC_OK);
    return pe_kern_get();
}

/* float32 inputs of the stores: specials, every rounding boundary of f16 and bf16 near a few
 * exponents, and random bit patterns */
static size_t store_inputs(float *x, size_t cap)
{
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
        0x7f800001u, 0x7fa00000u, 0xff812345u, 0x7fbfffffu, 0x7fc00001u, 0x7f802000u,
        0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477fffffu, 0x47800000u, 0x7f7fffffu,
        0x7f7f8000u, 0x7f7f7fffu, 0x00000001u, 0x007fffffu, 0x33800000u, 0x33000000u,
        0x33000001u, 0x387fe000u, 0x387ff000u, 0x38800000u, 0xb87ff000u, 0x3f808000u,
        0x3f818000u, 0x3f800fffu, 0x3f801000u, 0x3f803000u, 0x3f7fffffu,
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof special / sizeof *special && n < cap; i++)
        x[n++] = bitsf(special[i]);
    /* every low-16-bit pattern around 1.0, a tiny and a huge exponent (both signs) */
    static const uint32_t bases[] = { 0x3f800000u, 0x38800000u, 0x47000000u, 0x33800000u,
                                      0x00000000u, 0x7f000000u };
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++)
        for (uint32_t lo = 0; lo < 0x10000u && n + 2 <= cap; lo += 7) {
            x[n++] = bitsf(bases[b] | lo);
            x[n++] = bitsf((bases[b] | lo) ^ 0x80000000u);
        }
    while (n < cap)
        x[n++] = bitsf(rnd32());
    return n;
}

static void test_kernels(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    uint16_t *h = malloc(N * 2), *o1 = malloc(N * 2), *o2 = malloc(N * 2);
    float *f1 = malloc(N * 4), *f2 = malloc(N * 4), *x = malloc(N * 4);
    assert_non_null(h && o1 && o2 && f1 && f2 && x);
    for (uint32_t i = 0; i < N; i++)
        h[i] = (uint16_t)i;
    size_t nx = store_inputs(x, N - 3); /* an odd length: tails too */
    const pe_kern *base = path_kern(POSENC_CPU_BASELINE);
    for (int p = POSENC_CPU_AVX2; p <= POSENC_CPU_NEON; p++) {
        if (!posenc_cpu_supported((posenc_cpu_path)p)) {
            print_message("cpu path %s: not on this machine, skipped\n",
                          posenc_cpu_name((posenc_cpu_path)p));
            continue;
        }
        const pe_kern *k = path_kern((posenc_cpu_path)p);
        assert_ptr_not_equal(k, base);
        /* every bit pattern, from several alignments and lengths */
        for (size_t off = 0; off < 3; off++) {
            base->load_f16(f1, h + off, N - off);
            k->load_f16(f2, h + off, N - off);
            assert_memory_equal(f1, f2, (N - off) * 4);
            base->load_bf16(f1, h + off, N - off);
            k->load_bf16(f2, h + off, N - off);
            assert_memory_equal(f1, f2, (N - off) * 4);
        }
        base->store_f16(o1, x, nx);
        k->store_f16(o2, x, nx);
        assert_memory_equal(o1, o2, nx * 2);
        base->store_bf16(o1, x, nx);
        k->store_bf16(o2, x, nx);
        assert_memory_equal(o1, o2, nx * 2);
    }
    assert_int_equal(posenc_cpu_set(POSENC_CPU_BASELINE, NULL), POSENC_OK);
    free(h), free(o1), free(o2), free(f1), free(f2), free(x);
}

/* the float-buffer rotations on float32 values of every kind (NaNs with any payload, whose
 * products keep low bits that the rounding to f16 or bf16 must not carry into the high half),
 * cos/sin rounded to the dtype as the hf tables are */
static void test_rotations(void **state)
{
    (void)state;
    enum { NF = 1000, N = 2 * NF * 4 };
    float *x = malloc(N * 4), *c = malloc(NF * 4), *s = malloc(NF * 4), *want = malloc(N * 4),
          *got = malloc(N * 4);
    assert_non_null(x && c && s && want && got);
    size_t nx = store_inputs(x, N);
    const pe_kern *base = path_kern(POSENC_CPU_BASELINE);
    for (int p = POSENC_CPU_AVX2; p <= POSENC_CPU_NEON; p++) {
        if (!posenc_cpu_supported((posenc_cpu_path)p))
            continue;
        const pe_kern *k = path_kern((posenc_cpu_path)p);
        for (size_t off = 0; off + 2 * NF <= nx; off += 2 * NF)
            for (int r = 0; r < 3; r++) { /* r: the float32 rotation, f16's, bf16's */
                for (int i = 0; i < NF; i++) {
                    float a = (float)(rnd32() >> 8) * 0x1p-23f - 1.0f, b = sqrtf(1.0f - a * a);
                    if (r == 1) {
                        a = posenc_f16_to_f32(posenc_f32_to_f16(a));
                        b = posenc_f16_to_f32(posenc_f32_to_f16(b));
                    } else if (r == 2) {
                        a = posenc_bf16_to_f32(posenc_f32_to_bf16(a));
                        b = posenc_bf16_to_f32(posenc_f32_to_bf16(b));
                    }
                    c[i] = a, s[i] = b;
                }
                for (int g = 0; g < 2; g++) {
                    const pe_kern *ks[2] = { base, k };
                    float *bufs[2] = { want, got };
                    for (int w = 0; w < 2; w++) {
                        const pe_kern *q = ks[w];
                        float *v = bufs[w];
                        memcpy(v, x + off, 2 * NF * 4);
                        if (g)
                            (r == 0   ? q->gptj_f32
                             : r == 1 ? q->gptj_f16
                                      : q->gptj_bf16)(v, c, s, NF);
                        else
                            (r == 0   ? q->neox_f32
                             : r == 1 ? q->neox_f16
                                      : q->neox_bf16)(v, v + NF, c, s, NF);
                    }
                    if (memcmp(want, got, 2 * NF * 4) != 0) {
                        size_t e = 0;
                        while (memcmp(want + e, got + e, 4) == 0)
                            e++;
                        uint32_t wb, gb, ib;
                        memcpy(&wb, want + e, 4), memcpy(&gb, got + e, 4);
                        memcpy(&ib, x + off + e, 4);
                        fail_msg("path %s, %s, rounding %d: element %zu (input %#x): baseline "
                                 "%#x, got %#x", posenc_cpu_name((posenc_cpu_path)p),
                                 g ? "gptj" : "neox", r, e, ib, wb, gb);
                    }
                }
            }
    }
    assert_int_equal(posenc_cpu_set(POSENC_CPU_BASELINE, NULL), POSENC_OK);
    free(x), free(c), free(s), free(want), free(got);
}

/* ---- posenc_apply_rows, whole ---- */

#define S 37     /* tokens: not a multiple of any vector width */
#define H 3
#define D 80     /* head_dim */

/* model_type: gpt_neox and gptj honour a partial rotary dim, llama rotates the whole head */
static void params(const char *model_type, int rotary, posenc_rope_params *p)
{
    char cfg[512];
    snprintf(cfg, sizeof cfg,
             "{\"model_type\": \"%s\", \"hidden_size\": %d, \"num_attention_heads\": 1, "
             "\"head_dim\": %d, \"rope_theta\": 10000.0, \"max_position_embeddings\": 4096, "
             "\"partial_rotary_factor\": %g, \"rotary_dim\": %d, \"rotary_pct\": %g}",
             model_type, D, D, (double)rotary / D, rotary,
             (double)rotary / D);
    posenc_model *m;
    posenc_rope_config rc;
    posenc_error err;
    assert_int_equal(posenc_config_parse(cfg, strlen(cfg), "test", NULL, &m, &err), POSENC_OK);
    assert_int_equal(posenc_model_rope(m, NULL, &rc, &err), POSENC_OK);
    assert_int_equal(posenc_rope_params_compute(&rc, 0, p, &err), POSENC_OK);
    if (posenc_rope_params_ggml(p, m, NULL, 0, &err) != POSENC_OK)
        p->has_ggml = 0;
    posenc_model_free(m);
}

/* fill n elements of dt: kind 0 random values in [-3, 3), 1 random bit patterns, 2 specials */
static void fill(void *buf, posenc_dtype dt, size_t n, int kind)
{
    static const uint16_t sp16[] = { 0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff,
                                     0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x7d55,
                                     0xfdff, 0x3c00, 0x3555 };
    static const uint16_t spb[] = { 0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x7f7f,
                                    0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0x7fa5,
                                    0xffbf, 0x3f80, 0x3eab };
    static const uint32_t sp32[] = { 0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu,
                                     0x7f7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                     0x7f800001u, 0xffa5a5a5u, 0x477fe000u, 0x477ff000u,
                                     0x33000000u, 0x3f800000u, 0xbf7fffffu, 0x38000000u };
    static const uint64_t sp64[] = { 0, 0x8000000000000000ull, 1, 0x7fefffffffffffffull,
                                     0x7ff0000000000000ull, 0xfff0000000000000ull,
                                     0x7ff8000000000000ull, 0x7ff0000000000001ull,
                                     0x3ff0000000000000ull, 0x40effc0000000000ull };
    for (size_t i = 0; i < n; i++) {
        double v = (double)(rnd32() >> 8) * 0x1p-24 * 6.0 - 3.0;
        switch (dt) {
        case POSENC_DT_F16: {
            uint16_t b = kind == 0   ? posenc_f64_to_f16(v)
                         : kind == 1 ? (uint16_t)rnd32()
                                     : sp16[rnd32() % (sizeof sp16 / sizeof *sp16)];
            ((uint16_t *)buf)[i] = b;
            break;
        }
        case POSENC_DT_BF16: {
            uint16_t b = kind == 0   ? posenc_f64_to_bf16(v)
                         : kind == 1 ? (uint16_t)rnd32()
                                     : spb[rnd32() % (sizeof spb / sizeof *spb)];
            ((uint16_t *)buf)[i] = b;
            break;
        }
        case POSENC_DT_F32: {
            uint32_t b = kind == 1 ? rnd32() : sp32[rnd32() % (sizeof sp32 / sizeof *sp32)];
            float f = (float)v;
            if (kind)
                memcpy(&f, &b, 4);
            ((float *)buf)[i] = f;
            break;
        }
        default: {
            uint64_t b = kind == 1 ? ((uint64_t)rnd32() << 32 | rnd32())
                                   : sp64[rnd32() % (sizeof sp64 / sizeof *sp64)];
            if (kind)
                memcpy(&v, &b, 8);
            ((double *)buf)[i] = v;
            break;
        }
        }
    }
}

static void test_apply_paths(void **state)
{
    (void)state;
    static const posenc_dtype dts[] = { POSENC_DT_F16, POSENC_DT_BF16, POSENC_DT_F32,
                                        POSENC_DT_F64 };
    static const posenc_precision precs[] = { POSENC_PREC_EXACT, POSENC_PREC_HF,
                                              POSENC_PREC_VLLM, POSENC_PREC_GGML };
    const size_t n = (size_t)S * H * D;
    unsigned char *in = malloc(n * 8), *ref = malloc(n * 8), *got = malloc(n * 8);
    assert_non_null(in && ref && got);
    int compared = 0, bf16_compared = 0;
    /* neox with pass-through dims (gpt_neox, rotary 56), gptj with pass-through dims (rotary
     * 48), neox over the whole head (llama); the rotated pairs (28, 24, 40) leave tails shorter
     * than a vector */
    for (int st = 0; st < 3; st++) {
        posenc_style style = st == 1 ? POSENC_STYLE_GPTJ : POSENC_STYLE_NEOX;
        posenc_rope_params p;
        params(st == 0 ? "gpt_neox" : st == 1 ? "gptj" : "llama", st == 0 ? 56 : st == 1 ? 48 : D,
               &p);
        assert_int_equal(p.style, style);
        assert_int_equal(p.n_freq, st == 0 ? 28 : st == 1 ? 24 : 40);
        /* the heads of a token side by side (shd) or a head's tokens (hsd); in place or into
         * another buffer; the vectors in one call or in two, the second from an odd vector */
        int64_t shape[3] = { st == 2 ? H : S, st == 2 ? S : H, D };
        posenc_apply_shape sh;
        assert_int_equal(posenc_apply_shape_of(st == 2 ? POSENC_APPLY_HSD : POSENC_APPLY_SHD, 3,
                                               shape, &sh, NULL),
                         POSENC_OK);
        for (size_t pi = 0; pi < sizeof precs / sizeof *precs; pi++) {
            if (precs[pi] == POSENC_PREC_GGML && !p.has_ggml)
                continue;
            for (size_t a = 0; a < 4; a++)
                for (size_t b = 0; b < 4; b++)
                    for (int kind = 0; kind < 3; kind++) {
                        posenc_apply_opts o = { precs[pi], kind == 2, dts[a] };
                        posenc_apply_positions pos = { NULL, 1000 * kind, 1, 1 };
                        fill(in, dts[a], n, kind);
                        size_t oes = posenc_dtype_size(dts[b]);
                        int inplace = oes == posenc_dtype_size(dts[a]) && kind != 1;
                        uint64_t cut = kind == 1 ? (uint64_t)S * H / 2 + 1 : (uint64_t)S * H;
                        /* the paths, and avx512 once more with the AVX512_BF16 stores */
                        for (int slot = 0; slot <= POSENC_CPU_NEON + 1; slot++) {
                            int bf = slot == POSENC_CPU_AVX512 + 1,
                                path = slot <= POSENC_CPU_AVX512 ? slot
                                       : bf                      ? POSENC_CPU_AVX512
                                                                 : slot - 1;
                            if (!posenc_cpu_supported((posenc_cpu_path)path) ||
                                (bf && !pe_cpu_has_avx512bf16()))
                                continue;
                            assert_int_equal(posenc_cpu_set((posenc_cpu_path)path, NULL),
                                             POSENC_OK);
                            pe_kern_bf16_insn(bf);
                            posenc_apply *ap;
                            posenc_error err;
                            assert_int_equal(posenc_apply_new(&p, &o, &pos, S, 2, &ap, &err),
                                             POSENC_OK);
                            unsigned char *dst = path ? got : ref;
                            const unsigned char *src = in;
                            size_t ies = posenc_dtype_size(dts[a]);
                            if (inplace) { /* as posenc apply does */
                                memcpy(dst, in, n * oes);
                                src = dst;
                            }
                            posenc_apply_rows(ap, &sh, 0, cut, src, dts[a], dst, dts[b]);
                            posenc_apply_rows(ap, &sh, cut, (uint64_t)S * H - cut,
                                              src + cut * D * ies, dts[a], dst + cut * D * oes,
                                              dts[b]);
                            posenc_apply_free(ap);
                            if (path && memcmp(ref, got, n * oes) != 0) {
                                size_t e = 0;
                                while (memcmp(ref + e * oes, got + e * oes, oes) == 0)
                                    e++;
                                uint64_t rb = 0, gb = 0, ib = 0;
                                memcpy(&rb, ref + e * oes, oes);
                                memcpy(&gb, got + e * oes, oes);
                                memcpy(&ib, in + e * posenc_dtype_size(dts[a]),
                                       posenc_dtype_size(dts[a]));
                                print_error("input %#llx, baseline %#llx, got %#llx\n",
                                            (unsigned long long)ib, (unsigned long long)rb,
                                            (unsigned long long)gb);
                                fail_msg("path %s%s, %s (case %d), %s, %s -> %s, inputs %d: "
                                         "element %zu differs from the baseline path",
                                         posenc_cpu_name((posenc_cpu_path)path),
                                         bf ? " (AVX512_BF16 stores)" : "",
                                         posenc_style_name(style), st,
                                         posenc_precision_name(precs[pi]),
                                         posenc_dtype_name(dts[a]), posenc_dtype_name(dts[b]),
                                         kind, e);
                            }
                            compared += path != 0;
                            bf16_compared += bf;
                        }
                    }
        }
    }
    pe_kern_bf16_insn(1);
    assert_int_equal(posenc_cpu_set(POSENC_CPU_BASELINE, NULL), POSENC_OK);
    if (!bf16_compared)
        print_message("no AVX512_BF16 on this machine: its stores not compared\n");
    if (!compared)
        print_message("no SIMD path on this machine: nothing compared\n");
    free(in), free(ref), free(got);
}

/* ---- posenc_verify_row_check (lib/verify/verify_kern.h) ---- */

/* a double of row kind k: 0 and 1 are numbers (k 1 with a few elements far off); 2 random bit
 * patterns; 3 specials (NaN, inf, -0, subnormals, huge values whose products overflow) */
static double row_value(int k)
{
    static const double sp[] = { NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0x1p-1074,
                                 -0x1p-1070, 1e300, -1e300, 1.0, -3.5, 0x1p-149, 1e-30 };
    uint64_t b = (uint64_t)rnd32() << 32 | rnd32();
    double v;
    switch (k) {
    case 2:
        memcpy(&v, &b, 8);
        return v;
    case 3:
        if (rnd32() % 3)
            return sp[rnd32() % (sizeof sp / sizeof *sp)];
        /* fall through */
    default:
        return ((double)(b >> 11) * 0x1p-53 - 0.5) * 8;
    }
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static int same_result(const posenc_verify_row_result *a, const posenc_verify_row_result *b)
{
    return same_double(a->abs_err, b->abs_err) && same_double(a->rel_err, b->rel_err) &&
           same_double(a->ratio, b->ratio) && a->worst_dim == b->worst_dim &&
           same_double(a->worst_err, b->worst_err) && same_double(a->worst_bound, b->worst_bound) &&
           same_double(a->worst_value, b->worst_value) && same_double(a->worst_ref, b->worst_ref) &&
           same_double(a->max_bound, b->max_bound) && a->n_bad == b->n_bad &&
           a->n_nan == b->n_nan && a->n_inf == b->n_inf && a->first_nonfinite == b->first_nonfinite;
}

/* every path's row check gives the portable one's result, field by field and bit for bit: neox
 * and gptj, pairs that leave tails shorter than a vector and pass-through dims, the bound with
 * and without the angle error, its accumulation, slack, an allowance, a floor and a zero scale
 * (bounds of 0); rows that match the rotation to the last bit, within rounding, far off, random
 * bit patterns and special values */
static void test_row_check_paths(void **state)
{
    (void)state;
    static const int dims[][3] = { /* head_dim, rotary_dim, gptj */
        { 128, 128, 0 }, { 128, 128, 1 }, { 80, 56, 0 }, { 64, 48, 1 }, { 6, 6, 0 }, { 12, 10, 1 },
    };
    double pre[128], exp_[128], y[128], cs[64], sn[64], slack[64];
    int compared = 0, slow = 0;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
        posenc_style style = dims[di][2] ? POSENC_STYLE_GPTJ : POSENC_STYLE_NEOX;
        posenc_rope_config c = tu_rope_cfg(500000, dims[di][0], dims[di][1], style);
        posenc_rope_params p = tu_rope_params(&c);
        for (int variant = 0; variant < 8; variant++) {
            posenc_verify_recipe r;
            posenc_verify_recipe_init(&r, &p);
            r.scale = variant == 3 ? 0.75 : 1.0;
            r.shift = variant == 4 ? 3 : 0;
            r.no_rotation = variant == 5;
            posenc_verify_tolerance t;
            posenc_verify_tolerance_init(&t, variant == 6 ? POSENC_DT_F32 : POSENC_DT_BF16,
                                         variant == 6 ? POSENC_DT_BF16 : POSENC_DT_F32,
                                         variant != 1);
            t.angle_acc = variant == 2 ? 2 : 0;
            t.extra = variant == 3 ? 1e-3 : 0;
            t.floor = variant == 4 ? 1e-6 : 0;
            t.scale = variant == 7 ? 0 : 1;
            for (int i = 0; i < p.n_freq; i++)
                slack[i] = 0x1p-9 * (i % 3);
            t.slack = variant == 2 || variant == 6 ? slack : NULL;
            for (int row = 0; row < 200; row++) {
                int kind = row % 5 < 2 ? row % 5 : row % 5 - 1, hd = p.head_dim;
                int64_t pos = row % 7 ? (int64_t)(rnd32() % 1000000) : 0;
                posenc_verify_recipe_cossin(&r, pos, cs, sn);
                for (int j = 0; j < hd; j++)
                    pre[j] = row_value(kind < 2 ? 0 : kind);
                posenc_verify_rotate(style, hd, 2 * p.n_freq, cs, sn, 0, pre, y);
                for (int j = 0; j < hd; j++) {
                    /* kind 0: the rotation, or one float32 rounding of it; 1: far off */
                    double noise = row % 10 == 0 ? 0 : (double)(float)y[j] - y[j];
                    exp_[j] = kind == 0   ? y[j] + noise
                              : kind == 1 ? y[j] * (1 + 1e-3 * row_value(0))
                                          : row_value(kind);
                }
                posenc_verify_row_result ref, got;
                assert_int_equal(posenc_cpu_set(POSENC_CPU_BASELINE, NULL), POSENC_OK);
                posenc_verify_row_check(&r, &t, pos, cs, sn, pre, exp_, &ref);
                slow += ref.n_bad > 0;
                for (int path = POSENC_CPU_AVX2; path <= POSENC_CPU_NEON; path++) {
                    if (!posenc_cpu_supported((posenc_cpu_path)path))
                        continue;
                    assert_int_equal(posenc_cpu_set((posenc_cpu_path)path, NULL), POSENC_OK);
                    posenc_verify_row_check(&r, &t, pos, cs, sn, pre, exp_, &got);
                    if (!same_result(&ref, &got))
                        fail_msg("path %s, head_dim %d rotary %d %s, variant %d, row %d (kind "
                                 "%d): ratio %a worst %d bad %d bound %a ref %a against ratio "
                                 "%a worst %d bad %d bound %a ref %a",
                                 posenc_cpu_name((posenc_cpu_path)path), hd, dims[di][1],
                                 posenc_style_name(style), variant, row, kind, ref.ratio,
                                 ref.worst_dim, ref.n_bad, ref.worst_bound, ref.worst_ref,
                                 got.ratio, got.worst_dim, got.n_bad, got.worst_bound,
                                 got.worst_ref);
                    compared++;
                }
            }
        }
    }
    assert_int_equal(posenc_cpu_set(POSENC_CPU_BASELINE, NULL), POSENC_OK);
    assert_true(slow > 0); /* some rows fail the check: the ranking is exercised */
    if (!compared)
        print_message("no SIMD path on this machine: nothing compared\n");
}

static void test_select(void **state)
{
    (void)state;
    posenc_error err;
    assert_string_equal(posenc_cpu_name(POSENC_CPU_BASELINE), "baseline");
    assert_string_equal(posenc_cpu_name(POSENC_CPU_AVX2), "avx2");
    assert_string_equal(posenc_cpu_name(POSENC_CPU_AVX512), "avx512");
    assert_string_equal(posenc_cpu_name(POSENC_CPU_NEON), "neon");
    assert_string_equal(posenc_cpu_name((posenc_cpu_path)7), "?");
    assert_int_equal(posenc_cpu_supported(POSENC_CPU_BASELINE), 1);
    assert_int_equal(posenc_cpu_set((posenc_cpu_path)7, &err), POSENC_EINVAL);
    for (int p = 0; p <= POSENC_CPU_NEON; p++) {
        posenc_status want = posenc_cpu_supported((posenc_cpu_path)p) ? POSENC_OK
                                                                      : POSENC_EUNSUPPORTED;
        assert_int_equal(posenc_cpu_set((posenc_cpu_path)p, &err), want);
        if (want == POSENC_OK)
            assert_int_equal(posenc_cpu_active(), p);
    }
    /* avx512 implies avx2; neon is aarch64's, the x86 paths x86-64's */
    if (posenc_cpu_supported(POSENC_CPU_AVX512))
        assert_true(posenc_cpu_supported(POSENC_CPU_AVX2));
    if (posenc_cpu_supported(POSENC_CPU_NEON))
        assert_false(posenc_cpu_supported(POSENC_CPU_AVX2));
    setenv("POSENC_CPU", "avx9", 1);
    assert_int_equal(posenc_cpu_env_check(&err), POSENC_EINVAL);
    assert_string_equal(err.msg,
                        "POSENC_CPU=avx9: unknown path (expected baseline, avx2, avx512 or neon)");
    setenv("POSENC_CPU", "baseline", 1);
    assert_int_equal(posenc_cpu_env_check(&err), POSENC_OK);
    unsetenv("POSENC_CPU");
    assert_int_equal(posenc_cpu_env_check(&err), POSENC_OK);
    assert_int_equal(posenc_cpu_set(POSENC_CPU_BASELINE, NULL), POSENC_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_rotations),
        cmocka_unit_test(test_apply_paths),
        cmocka_unit_test(test_row_check_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
