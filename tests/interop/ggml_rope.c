/* tests/interop/ggml_rope.c: RoPE by llama.cpp's own prebuilt ggml, the reference for posenc's
 * ggml precision (tests/cli/t_interop_ggml.sh builds it with cc at test time).
 *
 *   ggml_rope CPU_LIB [f16] < spec
 *
 * links libggml-base.so, loads the CPU backend CPU_LIB (libggml-cpu-x64.so: the portable build
 * without FMA) with dlopen, builds one graph node ggml_rope_ext (ggml_rope_multi for the M-RoPE
 * modes) on a q tensor [n_tok][n_head][head_dim] and prints the output, one line per token and
 * head, each value in C's %a (exact). The spec on standard input is whitespace-separated:
 *
 *   mode M n_dims N head_dim D n_head H n_ctx_orig C
 *   freq_base F freq_scale F ext_factor F attn_factor F beta_fast F beta_slow F
 *   sections S0 S1 S2 S3
 *   factors K F1 .. FK            (K = 0: no freq_factors tensor)
 *   positions T P1 .. PT          (M-RoPE: 4 * T values, the t, h, w and e blocks)
 *   q V1 .. V(T*H*D)
 *
 * With f16 the q tensor is GGML_TYPE_F16 (the values rounded by ggml_fp32_to_fp16) and so is the
 * output, printed as the float32 values of its halves. Numbers are read with strtof / strtol
 * (hex floats are exact). Exit 0, or 3 with one line on standard error. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-cpu.h"
#include "ggml.h"

static void die(const char *what)
{
    fprintf(stderr, "ggml_rope: %s\n", what);
    exit(3);
}

static char *word(void)
{
    static char buf[128];
    if (scanf("%127s", buf) != 1)
        die("spec ends early");
    return buf;
}

static void key(const char *k)
{
    if (strcmp(word(), k) != 0) {
        fprintf(stderr, "ggml_rope: expected '%s' in the spec\n", k);
        exit(3);
    }
}

static long num_l(void)
{
    char *e, *w = word();
    errno = 0;
    long v = strtol(w, &e, 10);
    if (errno || *e || e == w)
        die("bad integer in the spec");
    return v;
}

static float num_f(void)
{
    char *e, *w = word();
    float v = strtof(w, &e);
    if (*e || e == w)
        die("bad number in the spec");
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 3 && strcmp(argv[2], "f16") == 0))
        die("usage: ggml_rope CPU_LIB [f16] < spec");
    int f16 = argc == 3;
    void *cpu = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!cpu) {
        fprintf(stderr, "ggml_rope: %s\n", dlerror());
        return 3;
    }
    void (*cpu_init)(void) = (void (*)(void))dlsym(cpu, "ggml_cpu_init");
    enum ggml_status (*compute)(struct ggml_context *, struct ggml_cgraph *, int) =
        (enum ggml_status(*)(struct ggml_context *, struct ggml_cgraph *, int))dlsym(
            cpu, "ggml_graph_compute_with_ctx");
    if (!cpu_init || !compute)
        die("the CPU library lacks ggml_cpu_init or ggml_graph_compute_with_ctx");
    cpu_init();

    key("mode"); int mode = (int)num_l();
    key("n_dims"); int n_dims = (int)num_l();
    key("head_dim"); long D = num_l();
    key("n_head"); long H = num_l();
    key("n_ctx_orig"); int n_ctx_orig = (int)num_l();
    key("freq_base"); float freq_base = num_f();
    key("freq_scale"); float freq_scale = num_f();
    key("ext_factor"); float ext_factor = num_f();
    key("attn_factor"); float attn_factor = num_f();
    key("beta_fast"); float beta_fast = num_f();
    key("beta_slow"); float beta_slow = num_f();
    key("sections");
    int sections[GGML_MROPE_SECTIONS];
    for (int i = 0; i < GGML_MROPE_SECTIONS; i++)
        sections[i] = (int)num_l();
    key("factors"); long K = num_l();
    if (K < 0 || K > 4096 || D <= 0 || D > 4096 || H <= 0 || H > 256)
        die("sizes out of range");
    float *fac = malloc((size_t)(K ? K : 1) * sizeof *fac);
    if (!fac)
        die("out of memory");
    for (long i = 0; i < K; i++)
        fac[i] = num_f();
    int multi = (mode & GGML_ROPE_TYPE_MROPE) != 0;
    key("positions"); long n = num_l();
    long T = multi ? n / 4 : n;
    if (n <= 0 || n > (1L << 20) || (multi && n % 4) || T * H * D > (1L << 26))
        die("positions out of range");

    size_t bytes = (size_t)(2 * T * H * D + K + n) * 4 + 16 * ggml_tensor_overhead() +
                   ggml_graph_overhead() + (size_t)(D + 64) * 4 * 8 + (1u << 20);
    struct ggml_init_params ip = { bytes, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    if (!ctx)
        die("ggml_init failed");
    struct ggml_tensor *q = ggml_new_tensor_3d(ctx, f16 ? GGML_TYPE_F16 : GGML_TYPE_F32, D, H, T);
    struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
    struct ggml_tensor *ff = K ? ggml_new_tensor_1d(ctx, GGML_TYPE_F32, K) : NULL;
    for (long i = 0; i < n; i++)
        ((int32_t *)pos->data)[i] = (int32_t)num_l();
    if (ff)
        memcpy(ff->data, fac, (size_t)K * sizeof *fac);
    key("q");
    for (long i = 0; i < T * H * D; i++) {
        float v = num_f();
        if (f16)
            ((ggml_fp16_t *)q->data)[i] = ggml_fp32_to_fp16(v);
        else
            ((float *)q->data)[i] = v;
    }

    struct ggml_tensor *out =
        multi ? ggml_rope_multi(ctx, q, pos, ff, n_dims, sections, mode, n_ctx_orig, freq_base,
                                freq_scale, ext_factor, attn_factor, beta_fast, beta_slow)
              : ggml_rope_ext(ctx, q, pos, ff, n_dims, mode, n_ctx_orig, freq_base, freq_scale,
                              ext_factor, attn_factor, beta_fast, beta_slow);
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    if (compute(ctx, gf, 1) != GGML_STATUS_SUCCESS)
        die("graph compute failed");
    for (long r = 0; r < T * H; r++) {
        for (long d = 0; d < D; d++) {
            long i = r * D + d;
            float v = f16 ? ggml_fp16_to_fp32(((const ggml_fp16_t *)out->data)[i])
                          : ((const float *)out->data)[i];
            printf("%s%a", d ? " " : "", (double)v);
        }
        putchar('\n');
    }
    ggml_free(ctx);
    free(fac);
    if (fflush(stdout) != 0)
        die("cannot write the output");
    return 0;
}
