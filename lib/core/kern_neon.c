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
 *    so the fused pass (rot_rows, lib/core/kern_rows.h) converts in registers with no test;
 *  - bf16: the portable integer formulas, lane by lane;
 *  - rotation: the same operations with the same operands in the same order, each product and
 *    sum rounded on its own (this file is compiled with -ffp-contract=off: no FMLA);
 *  - tails shorter than a vector run the portable scalar code. */
#include "lib/core/cpu_internal.h"

#if PE_CPU_NEON
#include <arm_neon.h>

#include "lib/core/half.h"
#include "lib/core/kern_rows.h"

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

/* 4 values of a dtype to float and back, from memory (LD/ST) or from 4 halves in a register
 * (CV/NR, for the pairs LD2/ST2 split and interleave). The f16 conversions quiet a signalling
 * NaN, where lib/core/half.h keeps it signalling: right inside the rotation, which stores only
 * arithmetic results and whose products give quiet(x) for a NaN x, quiet or not (AArch64's
 * FPProcessNaNs; cos and sin are never NaN) */
#define CV_F16(h) vcvt_f32_f16(vreinterpret_f16_u16(h))
#define CV_BF16(h) vreinterpretq_f32_u32(vshll_n_u16(h, 16))
#define NR_F16(v) vreinterpret_u16_f16(vcvt_f16_f32(v))
#define NR_BF16(v) vshrn_n_u32(sb_bits(v), 16)
#define LD_F32(p) vld1q_f32(p)
#define LD_F16(p) CV_F16(vld1_u16(p))
#define LD_BF16(p) CV_BF16(vld1_u16(p))
#define ST_F32(p, v) vst1q_f32(p, v)
#define ST_F16(p, v) vst1_u16(p, NR_F16(v))
#define ST_BF16(p, v) vst1_u16(p, NR_BF16(v))
#define LD2_F32(p, a, b)                                                                          \
    do {                                                                                          \
        float32x4x2_t v_ = vld2q_f32(p);                                                          \
        a = v_.val[0], b = v_.val[1];                                                             \
    } while (0)
#define LD2_H(CV, p, a, b)                                                                        \
    do {                                                                                          \
        uint16x4x2_t h_ = vld2_u16(p);                                                            \
        a = CV(h_.val[0]), b = CV(h_.val[1]);                                                     \
    } while (0)
#define LD2_F16(p, a, b) LD2_H(CV_F16, p, a, b)
#define LD2_BF16(p, a, b) LD2_H(CV_BF16, p, a, b)
#define ST2_F32(p, a, b)                                                                          \
    do {                                                                                          \
        float32x4x2_t v_ = { { a, b } };                                                          \
        vst2q_f32(p, v_);                                                                         \
    } while (0)
#define ST2_H(NR, p, a, b)                                                                        \
    do {                                                                                          \
        uint16x4x2_t h_ = { { NR(a), NR(b) } };                                                   \
        vst2_u16(p, h_);                                                                          \
    } while (0)
#define ST2_F16(p, a, b) ST2_H(NR_F16, p, a, b)
#define ST2_BF16(p, a, b) ST2_H(NR_BF16, p, a, b)

/* one head vector (lib/core/kern_rows.h); gptj: LD2/ST2 split the pairs into even and odd
 * lanes and interleave them back */
#define VEC4(SFX, ET, T, R, LDS, STS, RS)                                                         \
    static inline void vneox_##SFX##_neon(const ET *x, ET *y, size_t half, const float *c,        \
                                          const float *s, size_t nf)                              \
    {                                                                                             \
        size_t i = 0;                                                                             \
        for (; i + 4 <= nf; i += 4) {                                                             \
            float32x4_t a = LD_##T(x + i), b = LD_##T(x + half + i), y1, y2;                      \
            float32x4_t cc = vld1q_f32(c + i), ss = vld1q_f32(s + i);                             \
            ROT4(R, a, b, cc, ss, y1, y2);                                                        \
            ST_##T(y + i, y1);                                                                    \
            ST_##T(y + half + i, y2);                                                             \
        }                                                                                         \
        TAIL_NEOX(LDS, STS, RS);                                                                  \
    }                                                                                             \
    static inline void vgptj_##SFX##_neon(const ET *x, ET *y, size_t half, const float *c,        \
                                          const float *s, size_t nf)                              \
    {                                                                                             \
        size_t i = 0;                                                                             \
        (void)half;                                                                               \
        for (; i + 4 <= nf; i += 4) {                                                             \
            float32x4_t a, b, y1, y2;                                                             \
            LD2_##T(x + 2 * i, a, b);                                                             \
            float32x4_t cc = vld1q_f32(c + i), ss = vld1q_f32(s + i);                             \
            ROT4(R, a, b, cc, ss, y1, y2);                                                        \
            ST2_##T(y + 2 * i, y1, y2);                                                           \
        }                                                                                         \
        TAIL_GPTJ(LDS, STS, RS);                                                                  \
    }                                                                                             \
    ROWS(rows_##SFX##_neon, , ET, vneox_##SFX##_neon, vgptj_##SFX##_neon)

#define SAME(v) (v)
VEC4(f32, float, F32, ID, SAME, SAME, PE_R_NONE)
VEC4(f32r16, float, F32, rh4, SAME, SAME, PE_R_F16)
VEC4(f32rb16, float, F32, rb4, SAME, SAME, PE_R_BF16)
VEC4(f16, uint16_t, F16, ID, f16_load, f16_store, PE_R_NONE)
VEC4(f16r, uint16_t, F16, rh4, f16_load, f16_store, PE_R_F16)
VEC4(bf16, uint16_t, BF16, ID, bf16_load, bf16_store, PE_R_NONE)
VEC4(bf16r, uint16_t, BF16, rb4, bf16_load, bf16_store, PE_R_BF16)

FLOATBUF(neox_f32_neon, gptj_f32_neon, , vneox_f32_neon, vgptj_f32_neon)
FLOATBUF(neox_f16_neon, gptj_f16_neon, , vneox_f32r16_neon, vgptj_f32r16_neon)
FLOATBUF(neox_bf16_neon, gptj_bf16_neon, , vneox_f32rb16_neon, vgptj_f32rb16_neon)

static void rot_rows_neon(const pe_rot_job *j)
{
    ROT_DISPATCH(neon);
}

const pe_kern pe_kern_neon = { load_f16_neon, load_bf16_neon, store_f16_neon, store_bf16_neon,
                               neox_f16_neon, neox_bf16_neon, gptj_f16_neon,  gptj_bf16_neon,
                               neox_f32_neon, gptj_f32_neon,  rot_rows_neon };

#else
/* ISO C forbids an empty translation unit */
typedef int pe_kern_neon_unused;
#endif
