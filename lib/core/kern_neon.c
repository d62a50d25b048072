/* kern_neon.c: the aarch64 Advanced SIMD (NEON) kernels of lib/core/cpu_internal.h. NEON is
 * part of every ARMv8-A CPU, so the path is built whenever the compiler targets aarch64 and is
 * the default there (lib/core/cpu.c); elsewhere this file is empty.
 *
 * Same bits as the portable kernels (lib/core/kern.c) on every input, as lib/core/kern_x86.c's:
 *  - f16: FCVTL/FCVTN are exact conversions with round-to-nearest-even (Linux runs user code
 *    with FPCR's rounding mode RNE, FZ and FZ16 clear, DN clear); they differ from
 *    lib/core/half.h only on signalling NaNs (the instructions quiet them, the portable code
 *    keeps the payload), so a block of loads or stores with any NaN takes the portable scalar
 *    code. Inside the rotation every rounded value is the result of an arithmetic operation, a
 *    quiet NaN at worst, whose conversion both ways keeps the payload bits lib/core/half.h keeps;
 *  - bf16: the portable integer formulas, lane by lane;
 *  - rotation: the same operations with the same operands in the same order, each product and
 *    sum rounded on its own (this file is compiled with -ffp-contract=off: no FMLA);
 *  - tails shorter than a vector run the portable scalar code. */
#include "lib/core/cpu_internal.h"

#if PE_CPU_NEON
#include <arm_neon.h>

#include "lib/core/half.h"

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

/* ---- conversions ---- */

/* 1 when any of the 8 halves is a NaN */
static inline int nan8_h(uint16x8_t h)
{
    return vmaxvq_u16(vcgtq_u16(vandq_u16(h, vdupq_n_u16(0x7fff)), vdupq_n_u16(0x7c00))) != 0;
}

/* 1 when any of the 4 floats is a NaN */
static inline int nan4(float32x4_t x)
{
    return vminvq_u32(vceqq_f32(x, x)) == 0;
}

static void load_f16_neon(float *restrict d, const uint16_t *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint16x8_t h = vld1q_u16(s + i);
        if (nan8_h(h)) {
            for (size_t j = i; j < i + 8; j++)
                d[j] = f16_load(s[j]);
            continue;
        }
        float16x8_t f = vreinterpretq_f16_u16(h);
        vst1q_f32(d + i, vcvt_f32_f16(vget_low_f16(f)));
        vst1q_f32(d + i + 4, vcvt_high_f32_f16(f));
    }
    for (; i < n; i++)
        d[i] = f16_load(s[i]);
}

static void store_f16_neon(uint16_t *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        float32x4_t a = vld1q_f32(s + i), b = vld1q_f32(s + i + 4);
        if (nan4(a) || nan4(b)) {
            for (size_t j = i; j < i + 8; j++)
                d[j] = f16_store(s[j]);
            continue;
        }
        vst1q_u16(d + i, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(a), b)));
    }
    for (; i < n; i++)
        d[i] = f16_store(s[i]);
}

static void load_bf16_neon(float *restrict d, const uint16_t *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint16x8_t h = vld1q_u16(s + i);
        vst1q_f32(d + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)));
        vst1q_f32(d + i + 4, vreinterpretq_f32_u32(vshll_high_n_u16(h, 16)));
    }
    for (; i < n; i++)
        d[i] = bf16_load(s[i]);
}

/* lib/core/half.h's round_bf16, four lanes: nearest even, a NaN quieted in place of rounding */
static inline uint32x4_t rb_bits(float32x4_t v)
{
    uint32x4_t u = vreinterpretq_u32_f32(v);
    uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    uint32x4_t r = vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7fff)), lsb);
    uint32x4_t isnan = vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
    uint32x4_t nanv = vorrq_u32(u, vdupq_n_u32(0x400000));
    return vandq_u32(vbslq_u32(isnan, nanv, r), vdupq_n_u32(0xffff0000u));
}

/* lib/core/half.h's bf16_store, four lanes, before the shift: a NaN keeps its payload and is
 * quieted only when the payload would not fit in the 7 bits kept */
static inline uint32x4_t sb_bits(float32x4_t v)
{
    uint32x4_t u = vreinterpretq_u32_f32(v);
    uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    uint32x4_t r = vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7fff)), lsb);
    uint32x4_t isnan = vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
    uint32x4_t lost = vceqq_u32(vandq_u32(u, vdupq_n_u32(0x7f0000)), vdupq_n_u32(0));
    uint32x4_t nanv = vorrq_u32(u, vandq_u32(lost, vdupq_n_u32(0x400000)));
    return vbslq_u32(isnan, nanv, r);
}

static void store_bf16_neon(uint16_t *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint32x4_t a = sb_bits(vld1q_f32(s + i)), b = sb_bits(vld1q_f32(s + i + 4));
        vst1q_u16(d + i, vshrn_high_n_u32(vshrn_n_u32(a, 16), b, 16));
    }
    for (; i < n; i++)
        d[i] = bf16_store(s[i]);
}

/* ---- rotation ---- */

static inline float32x4_t ID(float32x4_t v) { return v; }

static inline float32x4_t rh4(float32x4_t v)
{
    return vcvt_f32_f16(vcvt_f16_f32(v));
}

static inline float32x4_t rb4(float32x4_t v)
{
    return vreinterpretq_f32_u32(rb_bits(v));
}

/* p + q, or p itself when p is a NaN (lib/core/half.h's PE_NEOX_BODY) */
static inline float32x4_t add4(float32x4_t p, float32x4_t q)
{
    return vbslq_f32(vceqq_f32(p, p), vaddq_f32(p, q), p);
}

#define ROT4(R, a, b, cc, ss, y1, y2)                                                             \
    do {                                                                                          \
        y1 = R(vsubq_f32(R(vmulq_f32(a, cc)), R(vmulq_f32(b, ss))));                              \
        y2 = R(add4(R(vmulq_f32(b, cc)), R(vmulq_f32(a, ss))));                                   \
    } while (0)

#define NEOX4(NAME, R, RS)                                                                        \
    static void NAME(float *restrict x1, float *restrict x2, const float *restrict c,             \
                     const float *restrict s, int nf)                                             \
    {                                                                                             \
        size_t i = 0, n = (size_t)nf;                                                             \
        for (; i + 4 <= n; i += 4) {                                                              \
            float32x4_t a = vld1q_f32(x1 + i), b = vld1q_f32(x2 + i);                             \
            float32x4_t cc = vld1q_f32(c + i), ss = vld1q_f32(s + i), y1, y2;                     \
            ROT4(R, a, b, cc, ss, y1, y2);                                                        \
            vst1q_f32(x1 + i, y1);                                                                \
            vst1q_f32(x2 + i, y2);                                                                \
        }                                                                                         \
        for (; i < n; i++)                                                                        \
            PE_NEOX_BODY(float, RS);                                                              \
    }

/* gptj: LD2/ST2 split the pairs into even and odd lanes and interleave them back */
#define GPTJ4(NAME, R, RS)                                                                        \
    static void NAME(float *restrict x, const float *restrict c, const float *restrict s, int nf) \
    {                                                                                             \
        size_t i = 0, n = (size_t)nf;                                                             \
        for (; i + 4 <= n; i += 4) {                                                              \
            float32x4x2_t v = vld2q_f32(x + 2 * i), y;                                            \
            float32x4_t cc = vld1q_f32(c + i), ss = vld1q_f32(s + i);                             \
            ROT4(R, v.val[0], v.val[1], cc, ss, y.val[0], y.val[1]);                              \
            vst2q_f32(x + 2 * i, y);                                                              \
        }                                                                                         \
        for (; i < n; i++)                                                                        \
            PE_GPTJ_BODY(float, RS);                                                              \
    }

NEOX4(neox_f32_neon, ID, PE_R_NONE)
GPTJ4(gptj_f32_neon, ID, PE_R_NONE)
NEOX4(neox_f16_neon, rh4, PE_R_F16)
NEOX4(neox_bf16_neon, rb4, PE_R_BF16)
GPTJ4(gptj_f16_neon, rh4, PE_R_F16)
GPTJ4(gptj_bf16_neon, rb4, PE_R_BF16)

const pe_kern pe_kern_neon = { load_f16_neon, load_bf16_neon, store_f16_neon, store_bf16_neon,
                               neox_f16_neon, neox_bf16_neon, gptj_f16_neon,  gptj_bf16_neon,
                               neox_f32_neon, gptj_f32_neon,  NULL };

#else
/* ISO C forbids an empty translation unit */
typedef int pe_kern_neon_unused;
#endif
