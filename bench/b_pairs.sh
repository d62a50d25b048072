# bench/b_pairs.sh: a multi-layer dump (16 layers of Llama 3.1 8B q (1, 32, 1024, 128) and k
# (1, 8, 1024, 128), f32, in one HDF5 file with /layerN/{q,k}): posenc apply and verify over every
# pair in one run, against the shell loop users wrote before (one run per layer, naming the
# members) and against copying the bytes (cat). Target: one run no slower than the loop, peak RSS
# independent of the number of layers (<= 64 MiB).
. "$SRC/bench/lib.sh"
L="$SRC/tests/data/configs/llama-3.1-8b.json"
D="$BENCH_DIR/pairs"
mkdir -p "$D"
"$PY" - "$D" <<'PYEOF'
import sys, h5py, numpy as np
d = sys.argv[1]
g = np.random.default_rng(0)
with h5py.File(f"{d}/layers.h5", "w") as f:
    for i in range(16):
        f[f"/layer{i}/q"] = g.standard_normal((1, 32, 1024, 128), dtype=np.float32)
        f[f"/layer{i}/k"] = g.standard_normal((1, 8, 1024, 128), dtype=np.float32)
PYEOF
cat > "$D/loop.sh" <<LOOP
for i in \$(seq 0 15); do
    "$POSENC" apply "$D/layers.h5:/layer\$i/q" "$D/layers.h5:/layer\$i/k" --config "$L" \
        -o "$D/loop\$i.h5" || exit 1
done
LOOP
echo "16 layers, $(($(stat -c %s "$D/layers.h5") / 1048576)) MiB of f32 HDF5"
measure "posenc apply layers.h5 -o out.h5" "$POSENC" apply "$D/layers.h5" --config "$L" -o "$D/out.h5"
p1=$MED p1_peak=$PEAK
measure "shell loop: 16 x posenc apply F:q F:k" sh "$D/loop.sh"
p16=$MED
measure "cat layers.h5 > out (copy the bytes)" sh -c "cat '$D/layers.h5' > '$D/cat.out'"
c=$MED
measure "posenc verify --q layers.h5 --expect-q out.h5" "$POSENC" verify --config "$L" \
    --q "$D/layers.h5" --expect-q "$D/out.h5" -q
v=$MED v_peak=$PEAK
echo "  one run: $(ratio "$p1" "$c")x the copy, $(ratio "$p16" "$p1")x faster than the loop, peak ${p1_peak} MiB; verify peak ${v_peak} MiB"
awk -v a="$p1" -v b="$p16" -v pk="$p1_peak" -v vk="$v_peak" 'BEGIN {
    printf "  targets: one run <= loop %s; peak <= 64 MiB %s (apply), %s (verify)\n",
        (a <= b * 1.05 ? "met" : "MISSED"), (pk <= 64 ? "met" : "MISSED"), (vk <= 64 ? "met" : "MISSED") }'
rm -rf "$D"
