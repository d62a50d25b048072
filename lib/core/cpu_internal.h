/* cpu_internal.h (internal): what the dispatched kernels share.
 *
 * PE_CPU_X86 is 1 when the compiler can emit the x86-64 AVX2/AVX-512 paths (GCC or clang
 * target attributes); PE_CPU_NEON is 1 when it targets aarch64, whose CPUs all have NEON.
 * pe_kern_get returns the kernel table of the active path (posenc_cpu_active), borrowed from
 * static storage. Every entry gives the same bits as the portable scalar code of
 * lib/core/half.h on every input, NaN payloads included. */
#ifndef POSENC_CPU_INTERNAL_H
#define POSENC_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PE_CPU_X86 1
#else
#define PE_CPU_X86 0
#endif
#if defined(__aarch64__) && defined(__ARM_NEON) && (defined(__GNUC__) || defined(__clang__))
#define PE_CPU_NEON 1
#else
#define PE_CPU_NEON 0
#endif

/* One fused pass of pe_kern.rot_rows over m head vectors of D elements stored in dtype dt
 * (POSENC_DT_F32, F16 or BF16; the same in src and dst): vector k is read from src + k * D, each
 * pair is converted to float in registers, rotated by the row cs[k] ([cos nf | sin nf]) and
 * converted back to dst + k * D. src and dst are equal (in place) or do not overlap. Only the
 * rotated elements of dst are written (neox: [0, nf) and [half, half + nf); gptj: [0, 2 nf)).
 * round: the dtype every product and sum is rounded to: POSENC_DT_F32 (the float32 rotation),
 * or F16 or BF16 (hf; equal to dt, or dt is F32). The same bits as the portable
 * load, rotation and store of lib/core/kern.c: every stored value is the result of an
 * arithmetic operation (a quiet NaN at worst), whose conversion is the same in the portable
 * code and the instructions, so no lane needs a NaN test. */
typedef struct pe_rot_job {
    int dt, round, gptj;
    int nf, half;
    size_t D, m;
    const void *src;
    void *dst;
    const float *const *cs;
} pe_rot_job;

typedef struct pe_kern {
    /* n halves (f16 or bf16 bits) to float, and back (round to nearest even) */
    void (*load_f16)(float *restrict dst, const uint16_t *restrict src, size_t n);
    void (*load_bf16)(float *restrict dst, const uint16_t *restrict src, size_t n);
    void (*store_f16)(uint16_t *restrict dst, const float *restrict src, size_t n);
    void (*store_bf16)(uint16_t *restrict dst, const float *restrict src, size_t n);
    /* the hf rotation on an f16 / bf16 dump: every product and sum rounded to the dump dtype
     * (neox: halves x1 and x2; gptj: pairs x[2i], x[2i+1]); c and s are already rounded */
    void (*neox_f16)(float *restrict x1, float *restrict x2, const float *restrict c,
                     const float *restrict s, int nf);
    void (*neox_bf16)(float *restrict x1, float *restrict x2, const float *restrict c,
                      const float *restrict s, int nf);
    void (*gptj_f16)(float *restrict x, const float *restrict c, const float *restrict s, int nf);
    void (*gptj_bf16)(float *restrict x, const float *restrict c, const float *restrict s,
                      int nf);
    /* the float32 rotation (exact and ggml precisions, every dump but f64), no rounding
     * between the operations but float32's own */
    void (*neox_f32)(float *restrict x1, float *restrict x2, const float *restrict c,
                     const float *restrict s, int nf);
    void (*gptj_f32)(float *restrict x, const float *restrict c, const float *restrict s, int nf);
    /* the fused pass (pe_rot_job); NULL on the baseline path (posenc_apply_rows then
     * converts through a float buffer with the entries above) */
    void (*rot_rows)(const pe_rot_job *j);
} pe_kern;

const pe_kern *pe_kern_get(void);
/* 1 when this CPU has AVX512_BF16 and AVX512DQ on top of the avx512 path's features */
int pe_cpu_has_avx512bf16(void);
/* Tests: 0 keeps pe_kern_get from the AVX512_BF16 kernels, 1 (the default) lets it use them
 * where the CPU has them. Not thread-safe. */
void pe_kern_bf16_insn(int on);

/* the tables of each path; lib/core/kern_x86.c, lib/core/kern_neon.c */
extern const pe_kern pe_kern_baseline;
#if PE_CPU_X86
extern const pe_kern pe_kern_avx2;
extern const pe_kern pe_kern_avx512;
/* pe_kern_avx512 with the fused bf16 stores by VCVTNEPS2BF16: pe_kern_get's choice on the
 * avx512 path when the CPU has AVX512_BF16 and AVX512DQ */
extern const pe_kern pe_kern_avx512bf16;
#endif
#if PE_CPU_NEON
extern const pe_kern pe_kern_neon;
#endif

#endif
