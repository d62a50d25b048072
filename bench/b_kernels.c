/* bench/b_kernels.c: the rotation kernels in memory, no file I/O: posenc_apply_new +
 * posenc_apply_rows on a [tokens, heads, head_dim] tensor in f32, f16 and bf16, against
 * memcpy of the same bytes and against llama.cpp's ggml_rope_ext (f32, f16) computed by a
 * prebuilt ggml CPU backend, on 1 and 2 threads. bench/b_kernels.sh builds and runs it.
 *
 *   b_kernels [-t TOKENS] [-r RUNS] [GGML_BASE_SO GGML_CPU_SO]
 *
 * The ggml libraries are loaded with dlopen (no link-time dependency); without them, or when
 * the program was built without ggml's headers (no HAVE_GGML), the ggml column says
 * "skipped". Times are the median of RUNS runs (default 7) after one warm-up; each line
 * prints ns/element and the ratios to memcpy and to ggml. posenc's time is the whole of it:
 * the cos/sin table (posenc_apply_new, also shown alone in the "table" column) and the
 * rotation; ggml's graph computes its cos/sin too. posenc rotates in place (as
 * formats/engines/applyset.c does), reading and writing each byte once, as memcpy does from
 * one buffer to another (glibc's large copies use non-temporal stores: no read of the
 * destination); ggml writes a new tensor, as its graph does. posenc and memcpy each run right
 * after the same copy of fresh values into the buffer they read, so both find the same part
 * of it in the caches (timing memcpy right after the rotation would hand it a source whose
 * last megabytes the rotation left in the cache). Model: plain RoPE, theta 10000, neox
 * pairing, head_dim 128, 32 heads, default precision (exact) and hf. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "posenc/apply.h"
#include "posenc/config.h"
#include "posenc/posenc.h"

#ifdef HAVE_GGML
#include "ggml-cpu.h"
#include "ggml.h"
#endif

#define HEADS 32
#define HEAD_DIM 128

static int64_t tokens = 8192;
static int runs = 7;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    return t[(n - 1) / 2];
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "b_kernels: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(3);
}

/* ---- memcpy, split over threads ---- */

struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
};

static void *copy_thread(void *arg)
{
    struct copy_job *j = arg;
    memcpy(j->dst, j->src, j->n);
    return NULL;
}

static void par_copy(void *dst, const void *src, size_t n, int nt)
{
    struct copy_job jobs[2];
    pthread_t tid;
    for (int t = 0; t < nt; t++) {
        size_t a = n * (size_t)t / (size_t)nt, b = n * (size_t)(t + 1) / (size_t)nt;
        a &= ~(size_t)63;
        b = t == nt - 1 ? n : b & ~(size_t)63;
        jobs[t] = (struct copy_job){ (unsigned char *)dst + a, (const unsigned char *)src + a,
                                     b - a };
    }
    if (nt > 1 && pthread_create(&tid, NULL, copy_thread, &jobs[1]) != 0)
        die("pthread_create failed", NULL);
    copy_thread(&jobs[0]);
    if (nt > 1)
        pthread_join(tid, NULL);
}

/* ---- posenc: table + rotation, the vectors split over threads ---- */

struct rot_job {
    const posenc_apply *a;
    const posenc_apply_shape *s;
    uint64_t first, n;
    void *buf;
    posenc_dtype dt;
};

static void *rot_thread(void *arg)
{
    struct rot_job *j = arg;
    size_t es = posenc_dtype_size(j->dt);
    unsigned char *p = (unsigned char *)j->buf + j->first * HEAD_DIM * es;
    posenc_apply_rows(j->a, j->s, j->first, j->n, p, j->dt, p, j->dt);
    return NULL;
}

/* the table (posenc_apply_new) and the rotation; returns the seconds the table took */
static double posenc_rotate(const posenc_rope_params *p, posenc_precision prec, void *buf,
                            posenc_dtype dt, int nt)
{
    posenc_apply_opts o = { prec, 0, dt };
    posenc_apply_positions pos = { NULL, 0, 1, 1 };
    posenc_apply *a;
    posenc_error err;
    double t0 = now();
    if (posenc_apply_new(p, &o, &pos, tokens, nt, &a, &err) != POSENC_OK)
        die("posenc_apply_new", err.msg);
    double table = now() - t0;
    int64_t shape[3] = { tokens, HEADS, HEAD_DIM };
    posenc_apply_shape s;
    if (posenc_apply_shape_of(POSENC_APPLY_SHD, 3, shape, &s, &err) != POSENC_OK)
        die("posenc_apply_shape_of", err.msg);
    uint64_t nv = posenc_apply_shape_vectors(&s);
    struct rot_job jobs[2];
    pthread_t tid;
    for (int t = 0; t < nt; t++) {
        uint64_t a0 = nv * (uint64_t)t / (uint64_t)nt, a1 = nv * (uint64_t)(t + 1) / (uint64_t)nt;
        jobs[t] = (struct rot_job){ a, &s, a0, a1 - a0, buf, dt };
    }
    if (nt > 1 && pthread_create(&tid, NULL, rot_thread, &jobs[1]) != 0)
        die("pthread_create failed", NULL);
    rot_thread(&jobs[0]);
    if (nt > 1)
        pthread_join(tid, NULL);
    posenc_apply_free(a);
    return table;
}

/* ---- ggml through dlopen ---- */

#ifdef HAVE_GGML
static struct {
    int ok;
    struct ggml_context *(*init)(struct ggml_init_params);
    void (*free_ctx)(struct ggml_context *);
    struct ggml_tensor *(*new3d)(struct ggml_context *, enum ggml_type, int64_t, int64_t,
                                 int64_t);
    struct ggml_tensor *(*new1d)(struct ggml_context *, enum ggml_type, int64_t);
    struct ggml_tensor *(*rope_ext)(struct ggml_context *, struct ggml_tensor *,
                                    struct ggml_tensor *, struct ggml_tensor *, int, int, int,
                                    float, float, float, float, float, float);
    struct ggml_cgraph *(*new_graph)(struct ggml_context *);
    void (*expand)(struct ggml_cgraph *, struct ggml_tensor *);
    size_t (*tensor_overhead)(void);
    size_t (*graph_overhead)(void);
    enum ggml_status (*compute)(struct ggml_context *, struct ggml_cgraph *, int);
} G;

#define SYM(lib, field, name)                                                                     \
    do {                                                                                          \
        *(void **)(&G.field) = dlsym(lib, name);                                                  \
        if (!G.field)                                                                             \
            return name;                                                                          \
    } while (0)

static const char *ggml_load(const char *base_so, const char *cpu_so)
{
    void *base = dlopen(base_so, RTLD_NOW | RTLD_GLOBAL);
    if (!base)
        return dlerror();
    void *cpu = dlopen(cpu_so, RTLD_NOW | RTLD_LOCAL);
    if (!cpu)
        return dlerror();
    void (*cpu_init)(void);
    *(void **)(&cpu_init) = dlsym(cpu, "ggml_cpu_init");
    if (!cpu_init)
        return "ggml_cpu_init";
    SYM(base, init, "ggml_init");
    SYM(base, free_ctx, "ggml_free");
    SYM(base, new3d, "ggml_new_tensor_3d");
    SYM(base, new1d, "ggml_new_tensor_1d");
    SYM(base, rope_ext, "ggml_rope_ext");
    SYM(base, new_graph, "ggml_new_graph");
    SYM(base, expand, "ggml_build_forward_expand");
    SYM(base, tensor_overhead, "ggml_tensor_overhead");
    SYM(base, graph_overhead, "ggml_graph_overhead");
    SYM(cpu, compute, "ggml_graph_compute_with_ctx");
    cpu_init();
    G.ok = 1;
    return NULL;
}

/* ns per element of ggml_rope_ext on a [tokens, HEADS, HEAD_DIM] tensor of f16 or f32, or -1 */
static double ggml_time(int f16, const void *init, int nt)
{
    size_t n = (size_t)tokens * HEADS * HEAD_DIM, es = f16 ? 2 : 4;
    struct ggml_init_params ip = { 2 * n * es + (size_t)tokens * 4 + 16 * G.tensor_overhead() +
                                       G.graph_overhead() + (1u << 20),
                                   NULL, false };
    struct ggml_context *ctx = G.init(ip);
    if (!ctx)
        return -1;
    struct ggml_tensor *q = G.new3d(ctx, f16 ? GGML_TYPE_F16 : GGML_TYPE_F32, HEAD_DIM, HEADS,
                                    tokens);
    struct ggml_tensor *pos = G.new1d(ctx, GGML_TYPE_I32, tokens);
    memcpy(q->data, init, n * es);
    for (int64_t i = 0; i < tokens; i++)
        ((int32_t *)pos->data)[i] = (int32_t)i;
    struct ggml_tensor *out = G.rope_ext(ctx, q, pos, NULL, HEAD_DIM, GGML_ROPE_TYPE_NEOX, 8192,
                                         10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    struct ggml_cgraph *gf = G.new_graph(ctx);
    G.expand(gf, out);
    double t[64];
    for (int r = -1; r < runs; r++) {
        double t0 = now();
        if (G.compute(ctx, gf, nt) != GGML_STATUS_SUCCESS) {
            G.free_ctx(ctx);
            return -1;
        }
        if (r >= 0)
            t[r] = now() - t0;
    }
    G.free_ctx(ctx);
    return median(t, runs) * 1e9 / (double)n;
}
#endif

/* ---- the runs ---- */

static uint16_t f32_to_f16_bits(float f) { return posenc_f32_to_f16(f); }

int main(int argc, char **argv)
{
    const char *base_so = NULL, *cpu_so = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (i + 1 >= argc)
            die("usage: b_kernels [-t TOKENS] [-r RUNS] [GGML_BASE_SO GGML_CPU_SO]", NULL);
        long v = strtol(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "-t") == 0 && v > 0 && v <= 1 << 20)
            tokens = v;
        else if (strcmp(argv[i], "-r") == 0 && v > 0 && v <= 63)
            runs = (int)v;
        else
            die("bad option", argv[i]);
    }
    if (argc - i == 2) {
        base_so = argv[i];
        cpu_so = argv[i + 1];
    }
    const char *ggml_why = "built without ggml's headers";
#ifdef HAVE_GGML
    if (base_so)
        ggml_why = ggml_load(base_so, cpu_so);
    else
        ggml_why = "no ggml libraries given";
#else
    (void)base_so, (void)cpu_so; /* named on the command line, nothing to load them into */
#endif

    static const char cfg[] = "{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                              "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                              "\"head_dim\": 128, \"rope_theta\": 10000.0, "
                              "\"max_position_embeddings\": 8192}";
    posenc_model *m;
    posenc_rope_config rc;
    posenc_rope_params p;
    posenc_error err;
    if (posenc_config_parse(cfg, sizeof cfg - 1, "bench", NULL, &m, &err) != POSENC_OK ||
        posenc_model_rope(m, NULL, &rc, &err) != POSENC_OK ||
        posenc_rope_params_compute(&rc, 0, &p, &err) != POSENC_OK)
        die("config", err.msg);
    posenc_model_free(m);

    size_t n = (size_t)tokens * HEADS * HEAD_DIM;
    float *x32 = malloc(n * 4), *w32 = malloc(n * 4), *d32 = malloc(n * 4);
    uint16_t *x16 = malloc(n * 2), *xb16 = malloc(n * 2);
    if (!x32 || !w32 || !d32 || !x16 || !xb16)
        die("out of memory", NULL);
    uint64_t st = 0x9e3779b97f4a7c15u;
    for (size_t k = 0; k < n; k++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        x32[k] = (float)((double)(st >> 11) * 0x1p-53 * 4.0 - 2.0);
        x16[k] = f32_to_f16_bits(x32[k]);
        xb16[k] = posenc_f32_to_bf16(x32[k]);
    }
    memset(w32, 0, n * 4);
    memset(d32, 0, n * 4);

#ifdef POSENC_CPU_H
    const char *path = posenc_cpu_name(posenc_cpu_active());
#else
    const char *path = "baseline (a build without dispatch)";
#endif
    printf("tensor [%lld tokens, %d heads, %d], %zu elements; median of %d runs; posenc CPU path %s\n",
           (long long)tokens, HEADS, HEAD_DIM, n, runs, path);
    if (ggml_why)
        printf("ggml_rope_ext: skipped (%s)\n", ggml_why);
    printf("  %-6s %-5s %2s %10s %8s %10s %10s %9s %9s\n", "dtype", "prec", "th", "posenc",
           "table", "memcpy", "ggml", "/memcpy", "ggml/pe");
    static const struct {
        posenc_dtype dt;
        posenc_precision prec;
        int ggml_f16; /* -1: ggml has no such rope */
    } rows[] = {
        { POSENC_DT_F32, POSENC_PREC_EXACT, 0 },  { POSENC_DT_F16, POSENC_PREC_EXACT, 1 },
        { POSENC_DT_BF16, POSENC_PREC_EXACT, -1 }, { POSENC_DT_F16, POSENC_PREC_HF, -1 },
        { POSENC_DT_BF16, POSENC_PREC_HF, -1 },
    };
    for (int nt = 1; nt <= 2; nt++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            posenc_dtype dt = rows[r].dt;
            size_t es = posenc_dtype_size(dt);
            const void *init = dt == POSENC_DT_F32 ? (const void *)x32
                               : dt == POSENC_DT_F16 ? (const void *)x16 : (const void *)xb16;
            double tp[64], tt[64], tc[64];
            for (int k = -1; k < runs; k++) {
                /* each timed operation right after the same copy of fresh values into w32, so
                 * both find the same bytes of w32 in the caches */
                memcpy(w32, init, n * es);
                double t0 = now();
                double tab = posenc_rotate(&p, rows[r].prec, w32, dt, nt);
                double t1 = now();
                memcpy(w32, init, n * es);
                double t2 = now();
                par_copy(d32, w32, n * es, nt);
                double t3 = now();
                if (k >= 0) {
                    tp[k] = t1 - t0;
                    tt[k] = tab;
                    tc[k] = t3 - t2;
                }
            }
            double pe = median(tp, runs) * 1e9 / (double)n, mc = median(tc, runs) * 1e9 / (double)n;
            double tb = median(tt, runs) * 1e9 / (double)n;
            double gg = -1;
#ifdef HAVE_GGML
            if (G.ok && rows[r].ggml_f16 >= 0)
                gg = ggml_time(rows[r].ggml_f16, init, nt);
#endif
            char gs[32] = "-", gr[32] = "-";
            if (gg > 0) {
                snprintf(gs, sizeof gs, "%.3f", gg);
                snprintf(gr, sizeof gr, "%.2fx", gg / pe);
            } else if (rows[r].ggml_f16 >= 0) {
                snprintf(gs, sizeof gs, "skipped");
            }
            printf("  %-6s %-5s %2d %10.3f %8.3f %10.3f %10s %8.2fx %9s\n", posenc_dtype_name(dt),
                   posenc_precision_name(rows[r].prec), nt, pe, tb, mc, gs, pe / mc, gr);
            fflush(stdout);
        }
    free(x32);
    free(w32);
    free(d32);
    free(x16);
    free(xb16);
    return 0;
}
