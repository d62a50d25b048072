/* half.h (internal): the portable f16/bf16 <-> float32 conversions of the bulk paths, exact
 * and branch-free, as static inline functions (lib/core/dtype.c has the scalar reference ones).
 * lib/encodings/apply.c and the dispatched kernels (lib/core/kern.c, lib/core/kern_x86.c) share them: the SIMD
 * paths fall back to these on NaN lanes and in loop tails, so every path gives these bits. */
#ifndef POSENC_HALF_H
#define POSENC_HALF_H

#include <stdint.h>
#include <string.h>

#include "posenc/dtype.h"

static inline uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float bf16_load(uint16_t b) { return bitsf((uint32_t)b << 16); }

/* The conversions are branch-free (both sides computed, then selected) so that the loops
 * over them vectorise. NaN payloads survive a narrow -> f32 -> narrow round trip bit for bit;
 * a NaN whose payload does not fit gets the quiet bit. */
/* c ? a : b without a branch (c is 0 or 1) */
static inline uint32_t sel(uint32_t c, uint32_t a, uint32_t b)
{
    uint32_t m = 0u - c;
    return (a & m) | (b & ~m);
}

static inline uint16_t bf16_store(float f)
{
    uint32_t u = fbits(f);
    uint32_t r = u + 0x7fffu + ((u >> 16) & 1u);
    uint32_t nan = u | sel(((u >> 16) & 0x7fu) == 0, 0x400000u, 0);
    /* the high half, taken by an arithmetic shift so SSE2 can pack it with packssdw */
    return (uint16_t)((int32_t)sel((u & 0x7fffffffu) > 0x7f800000u, nan, r) >> 16);
}

static inline float f16_load(uint16_t h)
{
    uint32_t o = (uint32_t)(h & 0x7fffu) << 13;
    uint32_t e = o & (0x7c00u << 13);
    o += (uint32_t)(127 - 15) << 23;
    uint32_t infnan = o + ((uint32_t)(128 - 16) << 23);
    /* zero or subnormal: renormalise through the FPU */
    uint32_t sub = fbits(bitsf(o + (1u << 23)) - bitsf(113u << 23));
    o = sel(e == (0x7c00u << 13), infnan, sel(e == 0, sub, o));
    return bitsf(o | ((uint32_t)(h & 0x8000u) << 16));
}

static inline uint16_t f16_store(float f)
{
    const uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    uint32_t u = fbits(f);
    uint32_t sign = u & 0x80000000u;
    u ^= sign;
    uint32_t man = (u >> 13) & 0x3ffu;
    uint32_t big = sel(u > 0x7f800000u, 0x7c00u | man | sel(man == 0, 0x200u, 0), 0x7c00u);
    uint32_t sub = fbits(bitsf(u) + bitsf(magic)) - magic; /* subnormal half: the FPU rounds */
    uint32_t norm = (u + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((u >> 13) & 1u)) >> 13;
    uint32_t o = sel(u >= (127u + 16u) << 23, big, sel(u < (113u << 23), sub, norm));
    return (uint16_t)(o | (sign >> 16));
}

/* f rounded to bfloat16 (nearest even), staying in float: no packing to 16 bits */
static inline float round_bf16(float f)
{
    uint32_t u = fbits(f);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    uint32_t nan = (u | 0x400000u) & 0xffff0000u;
    return bitsf(sel((u & 0x7fffffffu) > 0x7f800000u, nan, r));
}

static inline float round_to(float f, int dt)
{
    return dt == POSENC_DT_BF16 ? round_bf16(f) : f16_load(f16_store(f));
}

/* GCC -O2 vectorises only loops whose trip count it knows ("very cheap" cost model), so every
 * hot loop runs in fixed blocks of BLK elements (the inner loop is unrolled and
 * SLP-vectorised) followed by a scalar tail. */
#define BLK 8

#define BLOCKED(n, i, BODY)                                                                       \
    do {                                                                                          \
        size_t i##_b = 0;                                                                         \
        for (; i##_b + BLK <= (size_t)(n); i##_b += BLK)                                          \
            for (size_t i = i##_b; i < i##_b + BLK; i++) {                                        \
                BODY;                                                                             \
            }                                                                                     \
        for (size_t i = i##_b; i < (size_t)(n); i++) {                                            \
            BODY;                                                                                 \
        }                                                                                         \
    } while (0)

/* One pair of the rotation, x1*c - x2*s and x2*c + x1*s, R rounding each product and sum: to
 * the dump dtype in hf mode (torch on bf16/f16 tensors), nothing otherwise. When both terms of
 * the sum are NaN the result is the first one's, stated explicitly: a compiler may swap the
 * operands of an addition, and the hardware returns the first NaN operand, so without the
 * select the payload would depend on the code generated (the difference, not commutative,
 * keeps its order). */
#define PE_NEOX_BODY(T, R)                                                                        \
    {                                                                                             \
        T a_ = x1[i], b_ = x2[i], t_ = R(b_ * c[i]), u_ = R(a_ * s[i]);                           \
        x1[i] = R(R(a_ * c[i]) - R(b_ * s[i]));                                                   \
        x2[i] = R(t_ != t_ ? t_ : t_ + u_);                                                       \
    }
#define PE_GPTJ_BODY(T, R)                                                                        \
    {                                                                                             \
        T a_ = x[2 * i], b_ = x[2 * i + 1], t_ = R(b_ * c[i]), u_ = R(a_ * s[i]);                 \
        x[2 * i] = R(R(a_ * c[i]) - R(b_ * s[i]));                                                \
        x[2 * i + 1] = R(t_ != t_ ? t_ : t_ + u_);                                                \
    }
#define PE_R_NONE(v) (v)
#define PE_R_BF16(v) round_to((v), POSENC_DT_BF16)
#define PE_R_F16(v) round_to((v), POSENC_DT_F16)

#endif
