# bench/b_ggml.sh: posenc gen --precision ggml (llama.cpp's CPU numerics: per row, the float32
# angle accumulation and glibc's sincosf for every frequency) against the exact and hf
# precisions on the same full-length table (Llama-3.1-8B: 131072 x 128, NPZ, float32).
# Target: ggml no slower than hf (both run a float32 pipeline with a libm-grade sin/cos per
# value; exact's row kernel is faster than either).
. "$SRC/bench/lib.sh"
config="$SRC/tests/data/configs/llama-3.1-8b.json"
echo "llama-3.1-8b: $config"
for prec in exact hf ggml; do
    measure "posenc gen --precision $prec" "$POSENC" gen --config "$config" --precision "$prec" \
        -o "$BENCH_DIR/ggml-$prec.npz"
    eval "t_$prec=\$MED"
    rm -f "$BENCH_DIR/ggml-$prec.npz"
done
r=$(ratio "$t_ggml" "$t_hf")
awk -v r="$r" -v e="$(ratio "$t_ggml" "$t_exact")" 'BEGIN {
    printf "  ggml / hf time %s (ggml / exact %s): target <= 1 %s\n", r, e, (r <= 1 ? "met" : "MISSED") }'
