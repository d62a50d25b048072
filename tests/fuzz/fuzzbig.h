/* fuzzbig.h: inputs large enough to reach the metadata budget (posenc-formats(5), METADATA
 * BUDGET: 64 MiB of text, 128 MiB parsed) from a seed of a few kilobytes. An input that starts
 * with the magic "\xff" "BIG" is a description of a larger one:
 *
 *   "\xffBIG", uint32 reps, uint32 at, uint32 len (little-endian), then PAYLOAD
 *   expands to PAYLOAD[0, at) + PAYLOAD[at, at + len) * reps + PAYLOAD[at + len, end)
 *
 * (at most FZ_BIG_MAX bytes; past it, or with at + len outside PAYLOAD, the input is used as it
 * is). A harness calls fz_big_expand first and frees *owned after its run. The expansion is on
 * only with POSENC_FUZZ_BIG=1 in the environment (make check's replay sets it): a fuzzing run
 * whose mutants of these seeds each wrote 100 MB would run a few inputs a second. Every other
 * input is untouched, so the mutators still see the plain formats. tests/fuzz/big_seeds.py writes the
 * seeds (a GGUF array of 16M bools, a 99 MB safetensors header, a sidecar of 200000 arrays...). */
#ifndef POSENC_FUZZBIG_H
#define POSENC_FUZZBIG_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FZ_BIG_MAX ((uint64_t)160 << 20)

static inline uint32_t fz_big_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Replace *data and *size by the expansion of a "\xffBIG" input; *owned (caller frees) holds the
 * new bytes, NULL when the input is used as it is. */
static inline void fz_big_expand(const uint8_t **data, size_t *size, uint8_t **owned)
{
    *owned = NULL;
    const uint8_t *d = *data;
    size_t n = *size;
    const char *on = getenv("POSENC_FUZZ_BIG");
    if (n < 16 || memcmp(d, "\xff" "BIG", 4) != 0 || !on || strcmp(on, "1") != 0)
        return;
    uint64_t reps = fz_big_u32(d + 4), at = fz_big_u32(d + 8), len = fz_big_u32(d + 12);
    const uint8_t *p = d + 16;
    uint64_t pn = n - 16;
    if (at > pn || len > pn - at || len == 0 || reps > FZ_BIG_MAX / len ||
        pn - len + reps * len > FZ_BIG_MAX)
        return;
    uint64_t total = pn - len + reps * len;
    uint8_t *out = malloc(total ? (size_t)total : 1);
    if (!out)
        abort();
    uint8_t *q = out;
    memcpy(q, p, (size_t)at);
    q += at;
    for (uint64_t r = 0; r < reps; r++, q += len)
        memcpy(q, p + at, (size_t)len);
    memcpy(q, p + at + len, (size_t)(pn - at - len));
    *data = out;
    *size = (size_t)total;
    *owned = out;
}

#endif
