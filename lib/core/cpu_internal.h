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
} pe_kern;

const pe_kern *pe_kern_get(void);

/* the tables of each path; lib/core/kern_x86.c, lib/core/kern_neon.c */
extern const pe_kern pe_kern_baseline;
#if PE_CPU_X86
extern const pe_kern pe_kern_avx2;
extern const pe_kern pe_kern_avx512;
#endif
#if PE_CPU_NEON
extern const pe_kern pe_kern_neon;
#endif

#endif
