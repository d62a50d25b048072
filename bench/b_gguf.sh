# bench/b_gguf.sh: posenc gen to GGUF against the same tables to safetensors (the same bytes of
# data behind a different header): full-length Qwen3.5 RoPE tables (262144 x 64, f32). The GGUF
# writer streams like the safetensors one: target time <= 1.2x and peak RSS <= 1.2x safetensors'.
. "$SRC/bench/lib.sh"

config="$SRC/examples/qwen3.5-27b.json"
measure "posenc gen -o rope.safetensors" "$POSENC" gen --config "$config" \
    -o "$BENCH_DIR/rope.safetensors"
s_med=$MED s_peak=$PEAK
measure "posenc gen -o rope.gguf" "$POSENC" gen --config "$config" -o "$BENCH_DIR/rope.gguf"
g_med=$MED g_peak=$PEAK
size=$(stat -c %s "$BENCH_DIR/rope.gguf")
echo "  gguf $(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }') MiB;" \
     "time gguf / safetensors $(ratio "$g_med" "$s_med"), peak RSS $(ratio "$g_peak" "$s_peak");" \
     "load average $(cut -d' ' -f1 /proc/loadavg)"
awk -v t="$(ratio "$g_med" "$s_med")" -v m="$(ratio "$g_peak" "$s_peak")" 'BEGIN {
    printf "  targets: time <= 1.2x %s, memory <= 1.2x %s\n", (t <= 1.2 ? "met" : "MISSED"),
        (m <= 1.2 ? "met" : "MISSED") }'
rm -f "$BENCH_DIR/rope.gguf" "$BENCH_DIR/rope.safetensors"
