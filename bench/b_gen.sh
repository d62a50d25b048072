# bench/b_gen.sh: posenc gen against the PyTorch code a user would write (bench/gen_torch.py):
# full-length RoPE tables (cos, sin, inv_freq) as NPZ, float32, exact precision.
# Targets: Qwen3.5 (262144 x 64) in <= 0.35 s, >= 3x faster than PyTorch, peak RSS <= 1.2x
# the output size.
. "$SRC/bench/lib.sh"

run_case() {
    label=$1 config=$2 target_s=$3
    out="$BENCH_DIR/gen-$label.npz" ref="$BENCH_DIR/torch-$label.npz"
    echo "$label: $config"
    measure "posenc gen -o $label.npz" "$POSENC" gen --config "$config" -o "$out"
    p_med=$MED p_peak=$PEAK
    # CPU seconds (user + sys) of one run: less sensitive than wall time to a busy machine
    /usr/bin/time -f '%U %S' -o "$BENCH_DIR/cpu" "$POSENC" gen --config "$config" -o "$out"
    p_cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$BENCH_DIR/cpu")
    measure "python3 bench/gen_torch.py (torch f32)" "$PY" "$SRC/bench/gen_torch.py" \
        --config "$config" -o "$ref"
    t_med=$MED
    size=$(stat -c %s "$out")
    size_mib=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')
    speedup=$(ratio "$t_med" "$p_med")
    mem=$(ratio "$p_peak" "$size_mib")
    echo "  output $size_mib MiB; posenc ${p_med} s (${p_cpu} s CPU) vs torch ${t_med} s:" \
         "${speedup}x faster; peak RSS / output = $mem; load average $(cut -d' ' -f1 /proc/loadavg)"
    # the two agree to the float32 drift transformers' own pipeline has at these positions
    "$PY" - "$out" "$ref" <<'PYEOF'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
for k in ("cos", "sin", "inv_freq"):
    assert a[k].shape == b[k].shape, (k, a[k].shape, b[k].shape)
    d = float(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64))))
    print(f"  max |posenc exact - torch f32| {k}: {d:.2e}")
    assert d < 0.1, k
PYEOF
    awk -v t="$p_med" -v lim="$target_s" -v s="$speedup" -v m="$mem" 'BEGIN {
        printf "  targets: time <= %s s %s, speedup >= 3x %s, memory <= 1.2x %s\n", lim,
            (t <= lim ? "met" : "MISSED"), (s >= 3 ? "met" : "MISSED"), (m <= 1.2 ? "met" : "MISSED") }'
    rm -f "$out" "$ref"
}

run_case qwen3.5-27b "$SRC/examples/qwen3.5-27b.json" 0.35
run_case llama-3.1-8b "$SRC/tests/data/configs/llama-3.1-8b.json" 0.35
