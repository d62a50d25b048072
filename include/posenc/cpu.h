/* posenc/cpu.h: which instruction-set path the kernels run on.
 *
 * The hot loops (f16/bf16 conversion and rotation in posenc_apply_rows, the sin/cos rows of the
 * exact and hf tables) have a portable path and, on x86-64, AVX2 (with FMA and F16C) and AVX-512
 * (F and BW; with AVX512_BF16 and DQ, its fused bf16 stores take VCVTNEPS2BF16) paths, chosen
 * once, at the first call into the library, from what the CPU
 * supports; on aarch64 a NEON path for the apply kernels, always supported there. Every path gives the same bits as the portable one in every precision and dtype:
 * the paths differ in speed only.
 *
 * The environment variable POSENC_CPU=baseline|avx2|avx512|neon forces a path (tests,
 * benchmarks). The library never fails on it: an unknown name is ignored (the best supported
 * path is used), and a path the CPU cannot run falls back to the best one below it (in the
 * order of posenc_cpu_path); posenc_cpu_env_check
 * says so, for a program to tell its user (posenc refuses an unknown name, exit 2, and warns
 * of a fallback). */
#ifndef POSENC_CPU_H
#define POSENC_CPU_H

#include "posenc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum posenc_cpu_path {
    POSENC_CPU_BASELINE = 0, /* portable C (SSE2 on x86-64, what the compiler targets) */
    POSENC_CPU_AVX2 = 1,     /* x86-64 AVX2 + FMA + F16C */
    POSENC_CPU_AVX512 = 2,   /* x86-64 AVX-512 F + BW, on top of the AVX2 path's features */
    POSENC_CPU_NEON = 3      /* aarch64 Advanced SIMD (every ARMv8-A CPU has it) */
} posenc_cpu_path;

/* "baseline", "avx2", "avx512", "neon"; static, never NULL ("?" for an invalid path). */
POSENC_API
const char *posenc_cpu_name(posenc_cpu_path p);
/* 1 when this build and this CPU can run path p (baseline always). */
POSENC_API
int posenc_cpu_supported(posenc_cpu_path p);
/* The path in use (chosen at the first call: POSENC_CPU, else the best supported one). */
POSENC_API
posenc_cpu_path posenc_cpu_active(void);
/* Force path p, for tests and benchmarks (not thread-safe: call before any kernel runs).
 * POSENC_EUNSUPPORTED, and no change, when the CPU or the build cannot run it. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_cpu_set(posenc_cpu_path p, posenc_error *err);
/* POSENC_OK when POSENC_CPU is unset or names a path that runs here; otherwise POSENC_EINVAL
 * with "POSENC_CPU=avx9: unknown path (expected baseline, avx2, avx512 or neon)", or
 * POSENC_EUNSUPPORTED with "POSENC_CPU=avx512: this CPU or build cannot run it; using avx2". */
POSENC_API POSENC_NODISCARD
posenc_status posenc_cpu_env_check(posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif
