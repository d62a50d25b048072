/* neon_kernels.c: the NEON kernels (lib/core/kern_neon.c) against the portable ones
 * (lib/core/kern.c), bit for bit, for tests/cli/t_neon_qemu.sh, which cross-compiles this file
 * with lib/core/kern.c, lib/core/kern_neon.c, lib/core/cpu.c and lib/core/error.c for aarch64
 * and runs it under qemu-user (no cmocka or other library of the target there). It checks that
 * the path is the default and what pe_kern_get hands out, then compares every entry: the f16
 * and bf16 loads on all 65536 bit patterns at three alignments, the stores on special values
 * (NaN payloads, signalling NaNs, infinities, -0, subnormals, the largest finite f16, every
 * rounding boundary near a few exponents) and random bits, and the six rotations on random,
 * special and dtype-rounded values (NaN payloads in the dump, never in cos and sin) at lengths
 * that leave tails, and the fused pass (rot_rows) against the portable load, rotation and store.
 * Prints "neon: N values compared, 0 differ" and exits 0, or names the first
 * difference and exits 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/cpu.h"
#include "posenc/dtype.h"
#include "lib/core/cpu_internal.h"

#if !PE_CPU_NEON
#error "build this for aarch64"
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static unsigned long long compared;
static int bad;

/* compare n elements of size es; name the first difference */
static void same(const char *what, const void *a, const void *b, size_t n, size_t es)
{
    compared += n;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *x = (const unsigned char *)a + i * es,
                            *y = (const unsigned char *)b + i * es;
        if (memcmp(x, y, es) != 0) {
            uint32_t u = 0, v = 0;
            memcpy(&u, x, es);
            memcpy(&v, y, es);
            printf("neon: %s differs at %zu: portable 0x%08x, neon 0x%08x\n", what, i, u, v);
            bad = 1;
            return;
        }
    }
}

static const uint32_t special[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
    0x7f800001u, 0x7fa00000u, 0xff812345u, 0x7fbfffffu, 0x7fc00001u, 0x7f802000u,
    0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477fffffu, 0x47800000u, 0x7f7fffffu,
    0x7f7f8000u, 0x7f7f7fffu, 0x00000001u, 0x007fffffu, 0x33800000u, 0x33000000u,
    0x33000001u, 0x387fe000u, 0x387ff000u, 0x38800000u, 0xb87ff000u, 0x3f808000u,
    0x3f818000u, 0x3f800fffu, 0x3f801000u, 0x3f803000u, 0x3f7fffffu,
};
#define NSPECIAL (sizeof special / sizeof *special)

static size_t store_inputs(float *x, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < NSPECIAL && n < cap; i++)
        x[n++] = bitsf(special[i]);
    static const uint32_t bases[] = { 0x3f800000u, 0x38800000u, 0x47000000u, 0x33800000u,
                                      0x00000000u, 0x7f000000u };
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++)
        for (uint32_t lo = 0; lo < 0x10000u && n + 2 <= cap; lo += 7) {
            x[n++] = bitsf(bases[b] | lo);
            x[n++] = bitsf((bases[b] | lo) ^ 0x80000000u);
        }
    while (n < cap)
        x[n++] = bitsf(rnd32());
    return n;
}

/* one rotation input: mostly ordinary values, some random bits, some specials */
static float value(void)
{
    uint32_t r = rnd32() % 16;
    if (r == 0)
        return bitsf(special[rnd32() % NSPECIAL]);
    if (r == 1)
        return bitsf(rnd32());
    return (float)((int32_t)rnd32()) / 1073741824.0f; /* [-2, 2) */
}

/* a cos or sin value: any value but a NaN (a table never holds one, and with NaNs on both
 * sides of a product C leaves the payload to the order the compiler picks for the operands,
 * in the portable code as much as in any other) */
static float table_value(void)
{
    float v;
    do
        v = value();
    while (v != v);
    return v;
}

enum { NF = 67, ROWS = 4000 };

/* each row: x (2 NF values, the halves or the pairs), c, s (NF each); for f16/bf16 every
 * value rounded to the dtype first, as lib/encodings/apply.c hands them over */
static void rotations(const pe_kern *b, const pe_kern *k)
{
    float *x1 = malloc(2 * NF * 4), *x2 = malloc(2 * NF * 4), *c = malloc(NF * 4),
          *s = malloc(NF * 4);
    uint16_t *h = malloc(2 * NF * 2);
    if (!x1 || !x2 || !c || !s || !h) {
        printf("neon: out of memory\n");
        exit(1);
    }
    for (int row = 0; row < ROWS; row++) {
        int nf = row % 3 == 0 ? NF : row % 3 == 1 ? 64 : 1 + (int)(rnd32() % NF);
        for (int dt = 0; dt < 3; dt++) { /* f32, f16, bf16 */
            for (int i = 0; i < 2 * nf; i++)
                x1[i] = value();
            for (int i = 0; i < nf; i++) {
                c[i] = table_value();
                s[i] = table_value();
            }
            if (dt > 0) { /* round every input through the portable conversions */
                void (*st)(uint16_t *, const float *, size_t) = dt == 1 ? b->store_f16
                                                                        : b->store_bf16;
                void (*ld)(float *, const uint16_t *, size_t) = dt == 1 ? b->load_f16
                                                                        : b->load_bf16;
                st(h, x1, (size_t)(2 * nf));
                ld(x1, h, (size_t)(2 * nf));
                st(h, c, (size_t)nf);
                ld(c, h, (size_t)nf);
                st(h, s, (size_t)nf);
                ld(s, h, (size_t)nf);
            }
            static const char *neox_name[] = { "neox_f32", "neox_f16", "neox_bf16" };
            static const char *gptj_name[] = { "gptj_f32", "gptj_f16", "gptj_bf16" };
            typedef void (*neox_fn)(float *, float *, const float *, const float *, int);
            typedef void (*gptj_fn)(float *, const float *, const float *, int);
            neox_fn nb[] = { b->neox_f32, b->neox_f16, b->neox_bf16 };
            neox_fn nk[] = { k->neox_f32, k->neox_f16, k->neox_bf16 };
            gptj_fn gb[] = { b->gptj_f32, b->gptj_f16, b->gptj_bf16 };
            gptj_fn gk[] = { k->gptj_f32, k->gptj_f16, k->gptj_bf16 };
            memcpy(x2, x1, (size_t)(2 * nf) * 4);
            nb[dt](x1, x1 + nf, c, s, nf);
            nk[dt](x2, x2 + nf, c, s, nf);
            same(neox_name[dt], x1, x2, (size_t)(2 * nf), 4);
            memcpy(x2, x1, (size_t)(2 * nf) * 4);
            gb[dt](x1, c, s, nf);
            gk[dt](x2, c, s, nf);
            same(gptj_name[dt], x1, x2, (size_t)(2 * nf), 4);
            if (bad)
                exit(1);
        }
    }
    free(x1), free(x2), free(c), free(s), free(h);
}

/* the fused pass (rot_rows) against the portable load, rotation and store of each vector, in
 * place, for every storage dtype and rounding it takes, both pair styles, with pass-through
 * dims and tails: M vectors of D values, neox pairs i and HALF + i for i < NFN, gptj pairs
 * 2i, 2i + 1 for i < NFG */
enum { M = 7, D = 80, HALF = 37, NFN = 35, NFG = 38 };

static void fused(const pe_kern *b, const pe_kern *k)
{
    static const int combos[][2] = { /* storage, rounding (cpu_internal.h pe_rot_job) */
        { POSENC_DT_F32, POSENC_DT_F32 },  { POSENC_DT_F32, POSENC_DT_F16 },
        { POSENC_DT_F32, POSENC_DT_BF16 }, { POSENC_DT_F16, POSENC_DT_F32 },
        { POSENC_DT_F16, POSENC_DT_F16 },  { POSENC_DT_BF16, POSENC_DT_F32 },
        { POSENC_DT_BF16, POSENC_DT_BF16 },
    };
    static float tab[M][2 * NFG], xf[D];
    static unsigned char want[M * D * 4], got[M * D * 4];
    const float *cs[M];
    for (int rep = 0; rep < 200; rep++)
        for (size_t ci = 0; ci < sizeof combos / sizeof *combos; ci++)
            for (int gptj = 0; gptj < 2; gptj++) {
                int dt = combos[ci][0], rd = combos[ci][1], nf = gptj ? NFG : NFN;
                size_t es = dt == POSENC_DT_F32 ? 4 : 2;
                for (int v = 0; v < M; v++) {
                    for (int i = 0; i < 2 * nf; i++)
                        tab[v][i] = table_value();
                    if (rd != POSENC_DT_F32) { /* the hf tables: cos/sin in the dtype */
                        uint16_t hh[2 * NFG];
                        (rd == POSENC_DT_F16 ? b->store_f16 : b->store_bf16)(hh, tab[v],
                                                                             (size_t)(2 * nf));
                        (rd == POSENC_DT_F16 ? b->load_f16 : b->load_bf16)(tab[v], hh,
                                                                           (size_t)(2 * nf));
                    }
                    cs[v] = tab[v];
                }
                for (size_t i = 0; i < M * D; i++) {
                    float f = value();
                    uint16_t r16 = (uint16_t)rnd32();
                    if (dt == POSENC_DT_F32)
                        memcpy(want + 4 * i, &f, 4);
                    else
                        memcpy(want + 2 * i, &r16, 2); /* any bits, NaN payloads included */
                }
                memcpy(got, want, M * D * es);
                for (int v = 0; v < M; v++) {
                    unsigned char *p = want + (size_t)v * D * es;
                    if (dt == POSENC_DT_F16)
                        b->load_f16(xf, (const uint16_t *)(const void *)p, D);
                    else if (dt == POSENC_DT_BF16)
                        b->load_bf16(xf, (const uint16_t *)(const void *)p, D);
                    else
                        memcpy(xf, p, D * 4);
                    const float *c = cs[v], *sn = c + nf;
                    if (gptj)
                        (rd == POSENC_DT_F16 ? b->gptj_f16 : rd == POSENC_DT_BF16 ? b->gptj_bf16
                                                                                  : b->gptj_f32)(
                            xf, c, sn, nf);
                    else
                        (rd == POSENC_DT_F16 ? b->neox_f16 : rd == POSENC_DT_BF16 ? b->neox_bf16
                                                                                  : b->neox_f32)(
                            xf, xf + HALF, c, sn, nf);
                    if (dt == POSENC_DT_F16)
                        b->store_f16((uint16_t *)(void *)p, xf, D);
                    else if (dt == POSENC_DT_BF16)
                        b->store_bf16((uint16_t *)(void *)p, xf, D);
                    else
                        memcpy(p, xf, D * 4);
                }
                const pe_rot_job job = { dt, rd, gptj, nf, HALF, D, M, got, got, cs };
                k->rot_rows(&job);
                static const char *const names[] = { "f16", "bf16", "f32" };
                same(dt == POSENC_DT_F16 ? "rot_rows f16" : dt == POSENC_DT_BF16 ? "rot_rows bf16"
                                                                                  : "rot_rows f32",
                     want, got, M * D, es);
                if (bad) {
                    printf("neon: (rounding to %s, %s)\n", names[rd], gptj ? "gptj" : "neox");
                    exit(1);
                }
            }
}

int main(void)
{
    if (posenc_cpu_active() != POSENC_CPU_NEON || pe_kern_get() != &pe_kern_neon) {
        printf("neon: the default path is %s, not neon\n", posenc_cpu_name(posenc_cpu_active()));
        return 1;
    }
    const pe_kern *b = &pe_kern_baseline, *k = &pe_kern_neon;
    enum { N = 1 << 16 };
    uint16_t *h = malloc(N * 2), *o1 = malloc(N * 2), *o2 = malloc(N * 2);
    float *f1 = malloc(N * 4), *f2 = malloc(N * 4), *x = malloc(N * 4);
    if (!h || !o1 || !o2 || !f1 || !f2 || !x) {
        printf("neon: out of memory\n");
        return 1;
    }
    for (uint32_t i = 0; i < N; i++)
        h[i] = (uint16_t)i;
    for (size_t off = 0; off < 3; off++) {
        b->load_f16(f1, h + off, N - off);
        k->load_f16(f2, h + off, N - off);
        same("load_f16", f1, f2, N - off, 4);
        b->load_bf16(f1, h + off, N - off);
        k->load_bf16(f2, h + off, N - off);
        same("load_bf16", f1, f2, N - off, 4);
    }
    size_t nx = store_inputs(x, N - 3);
    b->store_f16(o1, x, nx);
    k->store_f16(o2, x, nx);
    same("store_f16", o1, o2, nx, 2);
    b->store_bf16(o1, x, nx);
    k->store_bf16(o2, x, nx);
    same("store_bf16", o1, o2, nx, 2);
    if (bad)
        return 1;
    rotations(b, k);
    fused(b, k);
    printf("neon: %llu values compared, 0 differ\n", compared);
    free(h), free(o1), free(o2), free(f1), free(f2), free(x);
    return 0;
}
