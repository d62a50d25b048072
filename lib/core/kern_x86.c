/* kern_x86.c: the AVX2 (+F16C) and AVX-512 (F, BW) kernels of lib/core/cpu_internal.h, built for
 * baseline x86-64 with GCC/clang target attributes and picked at run time (lib/core/cpu.c).
 *
 * Same bits as the portable kernels (lib/core/kern.c) on every input:
 *  - f16: VCVTPH2PS/VCVTPS2PH are exact conversions with round-to-nearest-even (the immediate,
 *    not MXCSR), as lib/core/half.h's; they differ from it only on signalling NaNs (the
 *    instructions quiet them, the portable code keeps the payload), so a block of the bare
 *    conversions with any NaN takes the portable scalar code, while the fused pass (rot_rows)
 *    needs no test: it stores only arithmetic results, never a signalling NaN, and x86 gives
 *    an arithmetic operation on a NaN the same result whether that NaN was quieted or not;
 *  - bf16: the portable integer formulas, lane by lane; the fused stores by VCVTNEPS2BF16 where
 *    the CPU has AVX512_BF16 (pe_kern_avx512bf16, below: subnormals take the formulas);
 *  - rotation: the same operations in the same order, each product and sum rounded on its own
 *    (this file is compiled with -ffp-contract=off, and the targets leave FMA out);
 *  - tails shorter than a vector run the portable scalar code. */
#include "lib/core/cpu_internal.h"

#if PE_CPU_X86
#include <immintrin.h>

#include "lib/core/half.h"
#include "lib/core/kern_rows.h"

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

#define AVX2 __attribute__((target("avx2,f16c")))
#define AVX512 __attribute__((target("avx2,f16c,avx512f,avx512bw")))

/* ---------------------------------------------------------------------------------------------
 * AVX2 + F16C: 8 lanes */

/* 1 when any of the 8 halves is a NaN */
AVX2 static inline int nan8_h(__m128i h)
{
    __m128i m = _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
    return _mm_movemask_epi8(m) != 0;
}

AVX2 static inline int nan8(__m256 x)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)) != 0;
}

AVX2 static void load_f16_avx2(float *restrict d, const uint16_t *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        if (nan8_h(h)) {
            for (size_t j = i; j < i + 8; j++)
                d[j] = f16_load(s[j]);
            continue;
        }
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; i++)
        d[i] = f16_load(s[i]);
}

AVX2 static void store_f16_avx2(uint16_t *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(s + i);
        if (nan8(x)) {
            for (size_t j = i; j < i + 8; j++)
                d[j] = f16_store(s[j]);
            continue;
        }
        _mm_storeu_si128((__m128i *)(void *)(d + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++)
        d[i] = f16_store(s[i]);
}

AVX2 static void load_bf16_avx2(float *restrict d, const uint16_t *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
        _mm256_storeu_ps(d + i, _mm256_castsi256_ps(w));
    }
    for (; i < n; i++)
        d[i] = bf16_load(s[i]);
}

/* lib/core/half.h bf16_store on 8 lanes, the results in the high halves of the 32-bit lanes */
AVX2 static inline __m256i bf16_round8(__m256i u)
{
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb);
    __m256i isnan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                       _mm256_set1_epi32(0x7f800000));
    __m256i top0 = _mm256_cmpeq_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7f0000)),
                                      _mm256_setzero_si256());
    __m256i nanv = _mm256_or_si256(u, _mm256_and_si256(top0, _mm256_set1_epi32(0x400000)));
    return _mm256_blendv_epi8(r, nanv, isnan);
}

AVX2 static void store_bf16_avx2(uint16_t *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i o = _mm256_srli_epi32(bf16_round8(_mm256_castps_si256(_mm256_loadu_ps(s + i))), 16);
        __m128i p = _mm_packus_epi32(_mm256_castsi256_si128(o), _mm256_extracti128_si256(o, 1));
        _mm_storeu_si128((__m128i *)(void *)(d + i), p);
    }
    for (; i < n; i++)
        d[i] = bf16_store(s[i]);
}

/* round_to(v, f16) and round_to(v, bf16) of lib/core/half.h on 8 lanes (v is an arithmetic result:
 * a NaN is quiet, and the F16C round trip keeps its payload as the portable one does) */
AVX2 static inline __m256 rh8(__m256 v)
{
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

/* (round_bf16 before the cut to the high half: the increment 0x7fff + lsb goes to the numbers
 * only; a NaN, quiet already, keeps its high half, as (v | quiet bit) & 0xffff0000 does, and as
 * bf16_store does with a quiet NaN: so the stores of the rotation take it too) */
AVX2 static inline __m256i rbits8(__m256 v)
{
    __m256i u = _mm256_castps_si256(v);
    __m256i ord = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_ORD_Q));
    __m256i inc = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1)),
                                   _mm256_set1_epi32(0x7fff));
    return _mm256_add_epi32(u, _mm256_and_si256(inc, ord));
}

AVX2 static inline __m256 rb8(__m256 v)
{
    return _mm256_castsi256_ps(_mm256_and_si256(rbits8(v), _mm256_set1_epi32((int)0xffff0000u)));
}

/* p + q, p itself when p is a NaN (lib/core/half.h PE_NEOX_BODY: whatever order the compiler
 * gives the operands of the addition) */
AVX2 static inline __m256 add8(__m256 p, __m256 q)
{
    return _mm256_blendv_ps(_mm256_add_ps(p, q), p, _mm256_cmp_ps(p, p, _CMP_UNORD_Q));
}

/* y1 = R(R(a*c) - R(b*s)), y2 = R(R(b*c) + R(a*s)) */
#define ROT8(R, a, b, cc, ss, y1, y2)                                                             \
    do {                                                                                          \
        y1 = R(_mm256_sub_ps(R(_mm256_mul_ps(a, cc)), R(_mm256_mul_ps(b, ss))));                  \
        y2 = R(add8(R(_mm256_mul_ps(b, cc)), R(_mm256_mul_ps(a, ss))));                           \
    } while (0)

/* 8 values of a dtype to float and back. The f16 store (VCVTPS2PH) is lib/core/half.h's on
 * every value but a signalling NaN, and the loads quiet one (VCVTPH2PS), where the portable
 * code keeps it signalling: both are right inside the rotation, which stores only arithmetic
 * results and gives the same result for a NaN operand quiet or not (x86 returns the first NaN
 * operand, quieted) */
#define LD8_F32(p) _mm256_loadu_ps(p)
#define LD8_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define LD8_BF16(p)                                                                               \
    _mm256_castsi256_ps(_mm256_slli_epi32(                                                        \
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))), 16))
#define ST8_F32(p, v) _mm256_storeu_ps(p, v)
#define ST8_F16(p, v)                                                                             \
    _mm_storeu_si128((__m128i *)(void *)(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT))
#define ST8_BF16(p, v) st8_bf16(p, v)

AVX2 static inline void st8_bf16(uint16_t *d, __m256 v)
{
    __m256i o = _mm256_srli_epi32(rbits8(v), 16);
    __m128i p = _mm_packus_epi32(_mm256_castsi256_si128(o), _mm256_extracti128_si256(o, 1));
    _mm_storeu_si128((__m128i *)(void *)d, p);
}

/* gptj: 8 pairs in two vectors; the even/odd split leaves the pairs in the order 0 1 4 5 |
 * 2 3 6 7, so c and s are permuted alike, and unpacking puts the pairs back in place */
#define PERM8(p) _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_loadu_ps(p)), 0xd8))

#define VEC8(SFX, ET, LD, ST, R, LDS, STS, RS)                                                    \
    AVX2 static inline void vneox_##SFX##_avx2(const ET *x, ET *y, size_t half, const float *c,   \
                                               const float *s, size_t nf)                         \
    {                                                                                             \
        size_t i = 0;                                                                             \
        for (; i + 8 <= nf; i += 8) {                                                             \
            __m256 a = LD(x + i), b = LD(x + half + i), y1, y2;                                   \
            __m256 cc = _mm256_loadu_ps(c + i), ss = _mm256_loadu_ps(s + i);                      \
            ROT8(R, a, b, cc, ss, y1, y2);                                                        \
            ST(y + i, y1);                                                                        \
            ST(y + half + i, y2);                                                                 \
        }                                                                                         \
        TAIL_NEOX(LDS, STS, RS);                                                                  \
    }                                                                                             \
    AVX2 static inline void vgptj_##SFX##_avx2(const ET *x, ET *y, size_t half, const float *c,   \
                                               const float *s, size_t nf)                         \
    {                                                                                             \
        size_t i = 0;                                                                             \
        (void)half;                                                                               \
        for (; i + 8 <= nf; i += 8) {                                                             \
            __m256 v0 = LD(x + 2 * i), v1 = LD(x + 2 * i + 8), y1, y2;                            \
            __m256 a = _mm256_shuffle_ps(v0, v1, 0x88), b = _mm256_shuffle_ps(v0, v1, 0xdd);      \
            __m256 cc = PERM8(c + i), ss = PERM8(s + i);                                          \
            ROT8(R, a, b, cc, ss, y1, y2);                                                        \
            ST(y + 2 * i, _mm256_unpacklo_ps(y1, y2));                                            \
            ST(y + 2 * i + 8, _mm256_unpackhi_ps(y1, y2));                                        \
        }                                                                                         \
        TAIL_GPTJ(LDS, STS, RS);                                                                  \
    }                                                                                             \
    ROWS(rows_##SFX##_avx2, AVX2, ET, vneox_##SFX##_avx2, vgptj_##SFX##_avx2)

#define ID(v) (v)
VEC8(f32, float, LD8_F32, ST8_F32, ID, ID, ID, PE_R_NONE)
VEC8(f32r16, float, LD8_F32, ST8_F32, rh8, ID, ID, PE_R_F16)
VEC8(f32rb16, float, LD8_F32, ST8_F32, rb8, ID, ID, PE_R_BF16)
VEC8(f16, uint16_t, LD8_F16, ST8_F16, ID, f16_load, f16_store, PE_R_NONE)
VEC8(f16r, uint16_t, LD8_F16, ST8_F16, rh8, f16_load, f16_store, PE_R_F16)
VEC8(bf16, uint16_t, LD8_BF16, ST8_BF16, ID, bf16_load, bf16_store, PE_R_NONE)
VEC8(bf16r, uint16_t, LD8_BF16, ST8_BF16, rb8, bf16_load, bf16_store, PE_R_BF16)

FLOATBUF(neox_f32_avx2, gptj_f32_avx2, AVX2, vneox_f32_avx2, vgptj_f32_avx2)
FLOATBUF(neox_f16_avx2, gptj_f16_avx2, AVX2, vneox_f32r16_avx2, vgptj_f32r16_avx2)
FLOATBUF(neox_bf16_avx2, gptj_bf16_avx2, AVX2, vneox_f32rb16_avx2, vgptj_f32rb16_avx2)

AVX2 static void rot_rows_avx2(const pe_rot_job *j)
{
    ROT_DISPATCH(avx2);
}

const pe_kern pe_kern_avx2 = { load_f16_avx2,  load_bf16_avx2, store_f16_avx2, store_bf16_avx2,
                               neox_f16_avx2,  neox_bf16_avx2, gptj_f16_avx2,  gptj_bf16_avx2,
                               neox_f32_avx2,  gptj_f32_avx2,  rot_rows_avx2 };

/* ---------------------------------------------------------------------------------------------
 * AVX-512 F + BW: 16 lanes */

AVX512 static void load_f16_avx512(float *restrict d, const uint16_t *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        __m256i m = _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
                                       _mm256_set1_epi16(0x7c00));
        if (_mm256_movemask_epi8(m)) {
            for (size_t j = i; j < i + 16; j++)
                d[j] = f16_load(s[j]);
            continue;
        }
        _mm512_storeu_ps(d + i, _mm512_cvtph_ps(h));
    }
    for (; i < n; i++)
        d[i] = f16_load(s[i]);
}

AVX512 static void store_f16_avx512(uint16_t *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(s + i);
        if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q)) {
            for (size_t j = i; j < i + 16; j++)
                d[j] = f16_store(s[j]);
            continue;
        }
        _mm256_storeu_si256((__m256i *)(void *)(d + i),
                            _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++)
        d[i] = f16_store(s[i]);
}

AVX512 static void load_bf16_avx512(float *restrict d, const uint16_t *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        _mm512_storeu_si512(d + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    for (; i < n; i++)
        d[i] = bf16_load(s[i]);
}

AVX512 static inline __m512i bf16_round16(__m512i u)
{
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
    __mmask16 isnan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                              _mm512_set1_epi32(0x7f800000));
    __mmask16 top0 = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f0000));
    __m512i nanv = _mm512_mask_or_epi32(u, top0, u, _mm512_set1_epi32(0x400000));
    return _mm512_mask_blend_epi32(isnan, r, nanv);
}

AVX512 static void store_bf16_avx512(uint16_t *restrict d, const float *restrict s, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i o = bf16_round16(_mm512_castps_si512(_mm512_loadu_ps(s + i)));
        _mm256_storeu_si256((__m256i *)(void *)(d + i),
                            _mm512_cvtepi32_epi16(_mm512_srli_epi32(o, 16)));
    }
    for (; i < n; i++)
        d[i] = bf16_store(s[i]);
}

AVX512 static inline __m512 rh16(__m512 v)
{
    return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

/* as rbits8 and rb8 */
AVX512 static inline __m512i rbits16(__m512 v)
{
    __m512i u = _mm512_castps_si512(v);
    __mmask16 ord = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    __m512i inc = _mm512_add_epi32(_mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1)),
                                   _mm512_set1_epi32(0x7fff));
    return _mm512_mask_add_epi32(u, ord, u, inc);
}

AVX512 static inline __m512 rb16(__m512 v)
{
    return _mm512_castsi512_ps(_mm512_and_si512(rbits16(v), _mm512_set1_epi32((int)0xffff0000u)));
}

AVX512 static inline __m512 add16(__m512 p, __m512 q)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(p, p, _CMP_UNORD_Q), _mm512_add_ps(p, q), p);
}

#define ROT16(R, a, b, cc, ss, y1, y2)                                                            \
    do {                                                                                          \
        y1 = R(_mm512_sub_ps(R(_mm512_mul_ps(a, cc)), R(_mm512_mul_ps(b, ss))));                  \
        y2 = R(add16(R(_mm512_mul_ps(b, cc)), R(_mm512_mul_ps(a, ss))));                          \
    } while (0)

/* as LD8_* and ST8_* */
#define LD16_F32(p) _mm512_loadu_ps(p)
#define LD16_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define LD16_BF16(p)                                                                              \
    _mm512_castsi512_ps(_mm512_slli_epi32(                                                        \
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(p))), 16))
#define ST16_F32(p, v) _mm512_storeu_ps(p, v)
#define ST16_F16(p, v)                                                                            \
    _mm256_storeu_si256((__m256i *)(void *)(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT))
#define ST16_BF16(p, v)                                                                           \
    _mm256_storeu_si256((__m256i *)(void *)(p),                                                   \
                        _mm512_cvtepi32_epi16(_mm512_srli_epi32(rbits16(v), 16)))

/* gptj: the even and odd elements of 16 pairs gathered by two-source permutes, and scattered
 * back the same way */
#define VEC16(SFX, ET, LD, ST, R, LDS, STS, RS)                                                   \
    AVX512 static inline void vneox_##SFX##_avx512(const ET *x, ET *y, size_t half,               \
                                                   const float *c, const float *s, size_t nf)     \
    {                                                                                             \
        size_t i = 0;                                                                             \
        for (; i + 16 <= nf; i += 16) {                                                           \
            __m512 a = LD(x + i), b = LD(x + half + i), y1, y2;                                   \
            __m512 cc = _mm512_loadu_ps(c + i), ss = _mm512_loadu_ps(s + i);                      \
            ROT16(R, a, b, cc, ss, y1, y2);                                                       \
            ST(y + i, y1);                                                                        \
            ST(y + half + i, y2);                                                                 \
        }                                                                                         \
        TAIL_NEOX(LDS, STS, RS);                                                                  \
    }                                                                                             \
    AVX512 static inline void vgptj_##SFX##_avx512(const ET *x, ET *y, size_t half,               \
                                                   const float *c, const float *s, size_t nf)     \
    {                                                                                             \
        const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,   \
                                             28, 30);                                             \
        const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,   \
                                             29, 31);                                             \
        const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7,  \
                                             23);                                                 \
        const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14,    \
                                             30, 15, 31);                                         \
        size_t i = 0;                                                                             \
        (void)half;                                                                               \
        for (; i + 16 <= nf; i += 16) {                                                           \
            __m512 v0 = LD(x + 2 * i), v1 = LD(x + 2 * i + 16), y1, y2;                           \
            __m512 a = _mm512_permutex2var_ps(v0, ev, v1), b = _mm512_permutex2var_ps(v0, od, v1); \
            __m512 cc = _mm512_loadu_ps(c + i), ss = _mm512_loadu_ps(s + i);                      \
            ROT16(R, a, b, cc, ss, y1, y2);                                                       \
            ST(y + 2 * i, _mm512_permutex2var_ps(y1, lo, y2));                                    \
            ST(y + 2 * i + 16, _mm512_permutex2var_ps(y1, hi, y2));                               \
        }                                                                                         \
        TAIL_GPTJ(LDS, STS, RS);                                                                  \
    }                                                                                             \
    ROWS(rows_##SFX##_avx512, AVX512, ET, vneox_##SFX##_avx512, vgptj_##SFX##_avx512)

VEC16(f32, float, LD16_F32, ST16_F32, ID, ID, ID, PE_R_NONE)
VEC16(f32r16, float, LD16_F32, ST16_F32, rh16, ID, ID, PE_R_F16)
VEC16(f32rb16, float, LD16_F32, ST16_F32, rb16, ID, ID, PE_R_BF16)
VEC16(f16, uint16_t, LD16_F16, ST16_F16, ID, f16_load, f16_store, PE_R_NONE)
VEC16(f16r, uint16_t, LD16_F16, ST16_F16, rh16, f16_load, f16_store, PE_R_F16)
VEC16(bf16, uint16_t, LD16_BF16, ST16_BF16, ID, bf16_load, bf16_store, PE_R_NONE)
VEC16(bf16r, uint16_t, LD16_BF16, ST16_BF16, rb16, bf16_load, bf16_store, PE_R_BF16)

FLOATBUF(neox_f32_avx512, gptj_f32_avx512, AVX512, vneox_f32_avx512, vgptj_f32_avx512)
FLOATBUF(neox_f16_avx512, gptj_f16_avx512, AVX512, vneox_f32r16_avx512, vgptj_f32r16_avx512)
FLOATBUF(neox_bf16_avx512, gptj_bf16_avx512, AVX512, vneox_f32rb16_avx512,
         vgptj_f32rb16_avx512)

AVX512 static void rot_rows_avx512(const pe_rot_job *j)
{
    ROT_DISPATCH(avx512);
}

/* ---------------------------------------------------------------------------------------------
 * AVX-512 with AVX512_BF16 (and DQ): the fused bf16 stores by VCVTNEPS2BF16, one instruction
 * for ST16_BF16's five. It rounds to nearest even as bf16_store does, and a quiet NaN keeps its
 * top half as there (the fused pass stores arithmetic results only: every NaN is quiet); but it
 * flushes float32 subnormals to zero, so a vector holding one (VFPCLASSPS, class 0x20) takes
 * ST16_BF16. Selected with the avx512 path when the CPU has the instruction (pe_kern_get). */
#define AVX512BF __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512dq,avx512bf16")))

AVX512BF static inline void st16_bf16n(uint16_t *d, __m512 v)
{
    __m256i h;
    if (_mm512_fpclass_ps_mask(v, 0x20))
        h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(rbits16(v), 16));
    else
        h = (__m256i)_mm512_cvtneps_pbh(v);
    _mm256_storeu_si256((__m256i *)(void *)d, h);
}
#define ST16_BF16N(p, v) st16_bf16n(p, v)

#undef AVX512
#define AVX512 AVX512BF /* VEC16 instantiates its functions under this name's target */
VEC16(bf16n, uint16_t, LD16_BF16, ST16_BF16N, ID, bf16_load, bf16_store, PE_R_NONE)
VEC16(bf16rn, uint16_t, LD16_BF16, ST16_BF16N, rb16, bf16_load, bf16_store, PE_R_BF16)

AVX512BF static void rot_rows_avx512bf16(const pe_rot_job *j)
{
    if (j->dt == POSENC_DT_BF16)
        (j->round == POSENC_DT_BF16 ? rows_bf16rn_avx512 : rows_bf16n_avx512)(j);
    else
        rot_rows_avx512(j);
}

const pe_kern pe_kern_avx512 = { load_f16_avx512, load_bf16_avx512, store_f16_avx512,
                                 store_bf16_avx512, neox_f16_avx512, neox_bf16_avx512,
                                 gptj_f16_avx512,  gptj_bf16_avx512, neox_f32_avx512,
                                 gptj_f32_avx512,  rot_rows_avx512 };
const pe_kern pe_kern_avx512bf16 = { load_f16_avx512, load_bf16_avx512, store_f16_avx512,
                                     store_bf16_avx512, neox_f16_avx512, neox_bf16_avx512,
                                     gptj_f16_avx512,  gptj_bf16_avx512, neox_f32_avx512,
                                     gptj_f32_avx512,  rot_rows_avx512bf16 };

#else
/* ISO C forbids an empty translation unit */
typedef int pe_kern_x86_unused;
#endif
