# bench/b_table.sh: the RoPE table kernel alone (posenc_rope_table, no file writing) for the
# Qwen3.5 table (262144 positions x 32 frequencies, cos and sin), against the NumPy float64 and
# PyTorch float32 code a user would write. Target: exact tables well under 0.1 s on 2 cores.
# Wall time is the best of $BENCH_RUNS; cpu is process CPU time (all threads), which stays
# meaningful when the machine is shared.
# Links a small driver against the libposenc.a next to $POSENC (or build/libposenc.a).
. "$SRC/bench/lib.sh"

lib=$(dirname "$POSENC")/libposenc.a
[ -f "$lib" ] || lib=$SRC/build/libposenc.a
drv=$BENCH_DIR/b_table
cat > "$drv.c" <<'EOF'
#define POSENC_STATIC_LINKING_ONLY /* a posenc_rope_config filled here; libposenc.a */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "posenc/rope.h"

static double now(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    posenc_rope_config c;
    memset(&c, 0, sizeof c);
    c.type = POSENC_ROPE_DEFAULT; /* Qwen3.5: theta 1e7, head_dim 256, prf 0.25 -> 64 dims */
    c.theta = 1e7;
    c.head_dim = 256;
    c.rotary_dim = c.exponent_dim = 64;
    c.partial_rotary_factor = 0.25;
    c.factor = 1;
    posenc_rope_params p;
    posenc_error err;
    if (posenc_rope_params_compute(&c, 0, &p, &err) != POSENC_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    size_t n = 262144;
    int64_t *pos = malloc(n * sizeof *pos);
    double *co = malloc(n * 32 * sizeof *co), *si = malloc(n * 32 * sizeof *si);
    if (!pos || !co || !si)
        return 1;
    for (size_t i = 0; i < n; i++)
        pos[i] = (int64_t)i;
    memset(co, 0, n * 32 * sizeof *co);
    memset(si, 0, n * 32 * sizeof *si);
    for (int prec = 0; prec < 2; prec++) {
        for (int th = 1; th <= 2; th++) {
            double best = 1e9, cpu = 1e9;
            for (int r = 0; r < runs; r++) {
                double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
                if (posenc_rope_table(&p, (posenc_precision)prec, POSENC_LAYOUT_HALF, pos, n, co,
                                      si, th, &err) != POSENC_OK) {
                    fprintf(stderr, "%s\n", err.msg);
                    return 1;
                }
                double t = now(CLOCK_MONOTONIC) - t0, u = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
                best = t < best ? t : best;
                cpu = u < cpu ? u : cpu;
            }
            printf("  posenc_rope_table %-5s %d thread%s %22.4f s (cpu %.4f s, %.2f ns/value)\n",
                   posenc_precision_name((posenc_precision)prec), th, th > 1 ? "s" : " ", best,
                   cpu, cpu / (double)n / 32 * 1e9);
        }
    }
    return 0;
}
EOF
cc -std=c11 -D_GNU_SOURCE -O2 -I"$SRC/include" -o "$drv" "$drv.c" "$lib" \
    $(pkg-config --libs libcjson zlib hdf5 2>/dev/null) -lpthread -lm
"$drv" "$BENCH_RUNS"

"$PY" - "$BENCH_RUNS" <<'PYEOF'
import sys, time
import numpy as np, torch
runs = int(sys.argv[1])
torch.set_num_threads(2)

def best(f):
    t = c = 1e9
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        f()
        t, c = min(t, time.perf_counter() - t0), min(c, time.process_time() - c0)
    return t, c

pos = np.arange(262144, dtype=np.float64)
inv = 1e7 ** (-np.arange(0, 64, 2, dtype=np.float64) / 64)
def numpy_f64():
    a = np.outer(pos, inv); np.cos(a); np.sin(a)
inv_t = 1.0 / (1e7 ** (torch.arange(0, 64, 2, dtype=torch.int64).float() / 64))
pos_t = torch.arange(262144).float()
def torch_f32():
    a = torch.outer(pos_t, inv_t); a.cos(); a.sin()
print("  %-40s %12.4f s (cpu %.4f s)" % (("numpy float64 outer + cos + sin",) + best(numpy_f64)))
print("  %-40s %12.4f s (cpu %.4f s)" % (("torch float32 outer + cos + sin (2 thr)",) + best(torch_f32)))
PYEOF
