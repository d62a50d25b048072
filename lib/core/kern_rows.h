/* kern_rows.h (internal): what the SIMD kernel files (lib/core/kern_x86.c, lib/core/kern_neon.c)
 * share: the scalar tails (lib/core/half.h's conversions and PE_NEOX_BODY's arithmetic), the
 * walk over the vectors of a pe_rot_job (lib/core/cpu_internal.h), the float-buffer entries of
 * pe_kern and the choice of kernel. A kernel vneox/vgptj rotates one head vector read from x into
 * y (x itself, or a buffer it does not overlap); ET is the element type, LDS/STS the scalar
 * conversions. Macros only: each file instantiates them under its own target attributes. */
#ifndef POSENC_KERN_ROWS_H
#define POSENC_KERN_ROWS_H

#include <stdint.h>

#include "lib/core/cpu_internal.h"

#define TAIL_NEOX(LDS, STS, RS)                                                                   \
    for (; i < nf; i++) {                                                                         \
        float a_ = LDS(x[i]), b_ = LDS(x[half + i]), t_ = RS(b_ * c[i]), u_ = RS(a_ * s[i]);      \
        y[i] = STS(RS(RS(a_ * c[i]) - RS(b_ * s[i])));                                            \
        y[half + i] = STS(RS(t_ != t_ ? t_ : t_ + u_));                                           \
    }
#define TAIL_GPTJ(LDS, STS, RS)                                                                   \
    for (; i < nf; i++) {                                                                         \
        float a_ = LDS(x[2 * i]), b_ = LDS(x[2 * i + 1]), t_ = RS(b_ * c[i]), u_ = RS(a_ * s[i]); \
        y[2 * i] = STS(RS(RS(a_ * c[i]) - RS(b_ * s[i])));                                        \
        y[2 * i + 1] = STS(RS(t_ != t_ ? t_ : t_ + u_));                                          \
    }

/* The walk asks for the source PF_AHEAD bytes ahead of the vector it rotates: on x86 the hardware
 * prefetchers alone left a float32 rotation out of memory 10-25% slower than with it (1 thread,
 * [8192, 32, 128], AVX-512, a shared machine; no change for f16, a little for bf16; 1 to 8 KiB
 * ahead all alike). A prefetch never faults, past the end of the buffer included (the address
 * is computed as an integer: no pointer past the object). */
#define PF_AHEAD 2048
#define ROWS(NAME, ATTR, ET, VN, VG)                                                              \
    ATTR static void NAME(const pe_rot_job *j)                                                    \
    {                                                                                             \
        const size_t nf = (size_t)j->nf, half = (size_t)j->half;                                  \
        for (size_t k = 0; k < j->m; k++) {                                                       \
            const ET *x = (const ET *)j->src + k * j->D;                                          \
            ET *y = (ET *)j->dst + k * j->D;                                                      \
            const float *c = j->cs[k];                                                            \
            for (size_t o_ = 0; o_ < j->D * sizeof(ET); o_ += 64)                                 \
                __builtin_prefetch((const void *)((uintptr_t)x + PF_AHEAD + o_), 0, 3);           \
            if (j->gptj)                                                                          \
                VG(x, y, half, c, c + nf, nf);                                                    \
            else                                                                                  \
                VN(x, y, half, c, c + nf, nf);                                                    \
        }                                                                                         \
    }

/* the float-buffer entries of pe_kern: one vector in place */
#define FLOATBUF(NEOX, GPTJ, ATTR, VN, VG)                                                        \
    ATTR static void NEOX(float *restrict x1, float *restrict x2, const float *restrict c,        \
                          const float *restrict s, int nf)                                        \
    {                                                                                             \
        VN(x1, x1, (size_t)(x2 - x1), c, s, (size_t)nf);                                          \
    }                                                                                             \
    ATTR static void GPTJ(float *restrict x, const float *restrict c, const float *restrict s,    \
                          int nf)                                                                 \
    {                                                                                             \
        VG(x, x, 0, c, s, (size_t)nf);                                                            \
    }

#define ROT_DISPATCH(ISA)                                                                         \
    switch (j->dt) {                                                                              \
    case POSENC_DT_F16:                                                                           \
        (j->round == POSENC_DT_F16 ? rows_f16r_##ISA : rows_f16_##ISA)(j);                       \
        break;                                                                                    \
    case POSENC_DT_BF16:                                                                          \
        (j->round == POSENC_DT_BF16 ? rows_bf16r_##ISA : rows_bf16_##ISA)(j);                     \
        break;                                                                                    \
    default:                                                                                      \
        (j->round == POSENC_DT_F16    ? rows_f32r16_##ISA                                         \
         : j->round == POSENC_DT_BF16 ? rows_f32rb16_##ISA                                        \
                                      : rows_f32_##ISA)(j);                                       \
        break;                                                                                    \
    }

#endif
