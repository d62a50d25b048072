/* cpu.c: the instruction-set path of the kernels, chosen once (see posenc/cpu.h). getenv is
 * read here, in lib/, because the choice must hold for every caller of the library alike;
 * nothing is printed: posenc_cpu_env_check hands the message to the program. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/cpu.h"
#include "lib/core/cpu_internal.h"

#define NPATH 4
static const char *const names[NPATH] = { "baseline", "avx2", "avx512", "neon" };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static posenc_cpu_path active = POSENC_CPU_BASELINE;

const char *posenc_cpu_name(posenc_cpu_path p)
{
    return (unsigned)p < NPATH ? names[p] : "?";
}

#if PE_CPU_X86 && defined(__clang__) && __clang_major__ < 15
/* clang 14's __builtin_cpu_supports does not know "f16c" (the fuzz build): CPUID leaf 1 */
#include <cpuid.h>
static int has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#elif PE_CPU_X86
#define has_f16c() __builtin_cpu_supports("f16c")
#endif

#if PE_CPU_X86
#include <cpuid.h>
/* CPUID leaf 7, sub-leaf 1, EAX bit 5: AVX512_BF16; the OS's AVX-512 state is what
 * __builtin_cpu_supports checked for avx512f. Read once. */
static pthread_once_t bf16_once = PTHREAD_ONCE_INIT;
static int bf16_ok;

static void bf16_probe(void)
{
    unsigned a, b, c, d;
    bf16_ok = posenc_cpu_supported(POSENC_CPU_AVX512) && __builtin_cpu_supports("avx512dq") &&
              __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1);
}

int pe_cpu_has_avx512bf16(void)
{
    pthread_once(&bf16_once, bf16_probe);
    return bf16_ok;
}
#else
int pe_cpu_has_avx512bf16(void) { return 0; }
#endif

int posenc_cpu_supported(posenc_cpu_path p)
{
    switch (p) {
    case POSENC_CPU_BASELINE:
        return 1;
#if PE_CPU_X86
    case POSENC_CPU_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
    case POSENC_CPU_AVX512:
        __builtin_cpu_init();
        return posenc_cpu_supported(POSENC_CPU_AVX2) && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw");
#endif
#if PE_CPU_NEON
    case POSENC_CPU_NEON:
        return 1; /* Advanced SIMD is part of every ARMv8-A CPU */
#endif
    default:
        return 0;
    }
}

static posenc_cpu_path best_from(posenc_cpu_path p)
{
    while (p > POSENC_CPU_BASELINE && !posenc_cpu_supported(p))
        p = (posenc_cpu_path)(p - 1);
    return p;
}

/* -1 when s names no path */
static int parse(const char *s)
{
    for (int i = 0; i < NPATH; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static void choose(void)
{
    const char *e = getenv("POSENC_CPU");
    int want = e && *e ? parse(e) : -1;
    active = best_from(want >= 0 ? (posenc_cpu_path)want : (posenc_cpu_path)(NPATH - 1));
}

posenc_cpu_path posenc_cpu_active(void)
{
    pthread_once(&once, choose);
    return active;
}

posenc_status posenc_cpu_set(posenc_cpu_path p, posenc_error *err)
{
    pthread_once(&once, choose);
    if ((unsigned)p >= NPATH)
        return posenc_seterr(err, POSENC_EINVAL, "invalid CPU path %d", (int)p);
    if (!posenc_cpu_supported(p))
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "this CPU or build cannot run the %s path",
                             names[p]);
    active = p;
    return POSENC_OK;
}

posenc_status posenc_cpu_env_check(posenc_error *err)
{
    const char *e = getenv("POSENC_CPU");
    if (!e || !*e)
        return POSENC_OK;
    posenc_cpu_path used = posenc_cpu_active();
    int want = parse(e);
    if (want < 0)
        return posenc_seterr(err, POSENC_EINVAL,
                             "POSENC_CPU=%s: unknown path (expected baseline, avx2, avx512 or neon)",
                             e);
    if (!posenc_cpu_supported((posenc_cpu_path)want))
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "POSENC_CPU=%s: this CPU or build cannot run it; using %s", e,
                             names[used]);
    return POSENC_OK;
}
