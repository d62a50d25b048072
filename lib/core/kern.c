/* kern.c: the portable f16/bf16 kernels of posenc_apply_rows and the table of the active path
 * (lib/core/cpu_internal.h). The x86-64 paths live in lib/core/kern_x86.c, the aarch64 one in
 * lib/core/kern_neon.c. */
#include "posenc/cpu.h"
#include "lib/core/cpu_internal.h"
#include "lib/core/half.h"

static void load_f16_c(float *restrict d, const uint16_t *restrict s, size_t n)
{
    BLOCKED(n, i, d[i] = f16_load(s[i]));
}

static void load_bf16_c(float *restrict d, const uint16_t *restrict s, size_t n)
{
    BLOCKED(n, i, d[i] = bf16_load(s[i]));
}

static void store_f16_c(uint16_t *restrict d, const float *restrict s, size_t n)
{
    BLOCKED(n, i, d[i] = f16_store(s[i]));
}

static void store_bf16_c(uint16_t *restrict d, const float *restrict s, size_t n)
{
    BLOCKED(n, i, d[i] = bf16_store(s[i]));
}

static void neox_f16_c(float *restrict x1, float *restrict x2, const float *restrict c,
                       const float *restrict s, int nf)
{
    BLOCKED(nf, i, PE_NEOX_BODY(float, PE_R_F16));
}

static void neox_bf16_c(float *restrict x1, float *restrict x2, const float *restrict c,
                        const float *restrict s, int nf)
{
    BLOCKED(nf, i, PE_NEOX_BODY(float, PE_R_BF16));
}

static void gptj_f16_c(float *restrict x, const float *restrict c, const float *restrict s, int nf)
{
    BLOCKED(nf, i, PE_GPTJ_BODY(float, PE_R_F16));
}

static void gptj_bf16_c(float *restrict x, const float *restrict c, const float *restrict s,
                        int nf)
{
    BLOCKED(nf, i, PE_GPTJ_BODY(float, PE_R_BF16));
}

static void neox_f32_c(float *restrict x1, float *restrict x2, const float *restrict c,
                       const float *restrict s, int nf)
{
    BLOCKED(nf, i, PE_NEOX_BODY(float, PE_R_NONE));
}

static void gptj_f32_c(float *restrict x, const float *restrict c, const float *restrict s, int nf)
{
    BLOCKED(nf, i, PE_GPTJ_BODY(float, PE_R_NONE));
}

const pe_kern pe_kern_baseline = { load_f16_c, load_bf16_c, store_f16_c, store_bf16_c,
                                   neox_f16_c, neox_bf16_c, gptj_f16_c,  gptj_bf16_c,
                                   neox_f32_c, gptj_f32_c,  NULL };

static int bf16_insn = 1;

void pe_kern_bf16_insn(int on) { bf16_insn = on; }

const pe_kern *pe_kern_get(void)
{
    switch (posenc_cpu_active()) {
#if PE_CPU_X86
    case POSENC_CPU_AVX512:
        return bf16_insn && pe_cpu_has_avx512bf16() ? &pe_kern_avx512bf16 : &pe_kern_avx512;
    case POSENC_CPU_AVX2:
        return &pe_kern_avx2;
#endif
#if PE_CPU_NEON
    case POSENC_CPU_NEON:
        return &pe_kern_neon;
#endif
    default:
        return &pe_kern_baseline;
    }
}
