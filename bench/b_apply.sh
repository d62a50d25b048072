# bench/b_apply.sh: posenc apply against the PyTorch code a user would write (bench/apply_torch.py)
# and against copying the same bytes (cat): Llama 3.1 8B q (1, 32, 8192, 128) and k (1, 8, 8192,
# 128), f32 NPY and bf16 safetensors; then a 1 GiB f32 dump (NPY in, NPY out) for peak memory.
# Targets: whole process <= 1.5x the copy, >= 5x faster than PyTorch, peak RSS <= 64 MiB for the
# 1 GiB dump, bf16 at the f32 bytes/s (1 GiB bf16 against 1 GiB f32).
. "$SRC/bench/lib.sh"
L="$SRC/tests/data/configs/llama-3.1-8b.json"
D="$BENCH_DIR/apply"
mkdir -p "$D"

"$PY" - "$D" <<'PYEOF'
import sys, json, struct, numpy as np, torch
d = sys.argv[1]
g = np.random.default_rng(0)
for name, h in (("q", 32), ("k", 8)):
    x = g.standard_normal((1, h, 8192, 128), dtype=np.float32)
    np.save(f"{d}/{name}.npy", x)
    raw = torch.from_numpy(x).bfloat16().view(torch.uint8).numpy().tobytes()
    hd = json.dumps({"x": {"dtype": "BF16", "shape": list(x.shape), "data_offsets": [0, len(raw)]}}).encode()
    hd += b" " * ((8 - len(hd) % 8) % 8)
    with open(f"{d}/{name}.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(hd)) + hd + raw)
# 1 GiB dump, written in slabs
x = np.lib.format.open_memmap(f"{d}/big.npy", mode="w+", dtype=np.float32, shape=(8, 32, 8192, 128))
for b in range(8):
    x[b] = g.standard_normal((32, 8192, 128), dtype=np.float32)
x.flush()
del x
# 1 GiB bf16 dump (16, 32, 8192, 128) as safetensors, for bytes/s against the f32 one
shape = [16, 32, 8192, 128]
nbytes = 2 * 16 * 32 * 8192 * 128
hd = json.dumps({"x": {"dtype": "BF16", "shape": shape, "data_offsets": [0, nbytes]}}).encode()
hd += b" " * ((8 - len(hd) % 8) % 8)
with open(f"{d}/big16.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(hd)) + hd)
    for b in range(16):
        slab = torch.from_numpy(g.standard_normal((32, 8192, 128), dtype=np.float32)).bfloat16()
        f.write(slab.view(torch.uint8).numpy().tobytes())
PYEOF

mib() { awk -v s="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", s / 1048576 }'; }

echo "f32 NPY pair, q (1, 32, 8192, 128) + k (1, 8, 8192, 128): $(($(stat -c %s "$D/q.npy") / 1048576 + $(stat -c %s "$D/k.npy") / 1048576)) MiB"
measure "posenc apply q.npy k.npy -o dir/" "$POSENC" apply "$D/q.npy" "$D/k.npy" --config "$L" -o "$D/out32/"
p32=$MED p32_peak=$PEAK
measure "python3 bench/apply_torch.py (torch f32)" "$PY" "$SRC/bench/apply_torch.py" --config "$L" \
    "$D/q.npy" "$D/k.npy" "$D/torch32"
t32=$MED
measure "cat q.npy k.npy > out (copy the bytes)" sh -c "cat '$D/q.npy' '$D/k.npy' > '$D/cat.out'"
c32=$MED
"$PY" - "$D" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
for n in "qk":
    a, b = np.load(f"{d}/out32/{n}.npy"), np.load(f"{d}/torch32/{n}.npy")
    e = float(np.abs(a.astype(np.float64) - b).max())
    print(f"  max |posenc - torch| {n}: {e:.2e}")
    assert e < 5e-3, e
PYEOF

echo "bf16 safetensors pair (same shapes)"
measure "posenc apply q.st k.st -o out.safetensors" "$POSENC" apply "$D/q.safetensors" \
    "$D/k.safetensors" --config "$L" -o "$D/out16.safetensors"
p16=$MED
measure "python3 bench/apply_torch.py (torch bf16)" "$PY" "$SRC/bench/apply_torch.py" --config "$L" \
    "$D/q.safetensors" "$D/k.safetensors" "$D/torch16"
t16=$MED
measure "cat q.st k.st > out (copy the bytes)" sh -c "cat '$D/q.safetensors' '$D/k.safetensors' > '$D/cat.out'"
c16=$MED

echo "1 GiB f32 dump (8, 32, 8192, 128), NPY in, NPY out"
measure "posenc apply big.npy -o out.npy" "$POSENC" apply "$D/big.npy" --config "$L" -o "$D/bigr.npy"
pb=$MED pb_peak=$PEAK
measure "cat big.npy > out" sh -c "cat '$D/big.npy' > '$D/cat.out'"
cb=$MED
big=$(mib "$D/big.npy")
echo "1 GiB bf16 dump (16, 32, 8192, 128), safetensors in and out"
measure "posenc apply big16.safetensors -o out" "$POSENC" apply "$D/big16.safetensors" --config "$L" \
    -o "$D/big16r.safetensors"
pb16=$MED pb16_peak=$PEAK
measure "posenc apply ... --precision hf" "$POSENC" apply "$D/big16.safetensors" --config "$L" \
    --precision hf -o "$D/big16r.safetensors"
pb16hf=$MED
measure "cat big16.safetensors > out" sh -c "cat '$D/big16.safetensors' > '$D/cat.out'"
cb16=$MED

r32=$(ratio "$p32" "$c32") s32=$(ratio "$t32" "$p32") r16=$(ratio "$p16" "$c16") s16=$(ratio "$t16" "$p16")
rb=$(ratio "$pb" "$cb") rb16=$(ratio "$pb16" "$cb16") rb16hf=$(ratio "$pb16hf" "$cb16")
mbs32=$(awk -v t="$pb" 'BEGIN { printf "%.0f", 1024 / t }')
mbs16=$(awk -v t="$pb16" 'BEGIN { printf "%.0f", 1024 / t }')
mbs16hf=$(awk -v t="$pb16hf" 'BEGIN { printf "%.0f", 1024 / t }')
echo "  f32 pair: ${r32}x the copy, ${s32}x faster than torch, peak ${p32_peak} MiB"
echo "  bf16 pair: ${r16}x the copy, ${s16}x faster than torch"
echo "  1 GiB f32 ($big MiB): ${rb}x the copy, ${mbs32} MiB/s, peak RSS ${pb_peak} MiB"
echo "  1 GiB bf16: ${rb16}x the copy, ${mbs16} MiB/s (hf: ${rb16hf}x, ${mbs16hf} MiB/s), peak RSS ${pb16_peak} MiB"
awk -v r32="$r32" -v s32="$s32" -v pk="$pb_peak" -v rb="$rb" -v m32="$mbs32" -v m16="$mbs16" 'BEGIN {
    printf "  targets: <= 1.5x copy %s (f32 pair), %s (1 GiB); >= 5x torch %s; peak <= 64 MiB %s; bf16 bytes/s >= f32 %s\n",
        (r32 <= 1.5 ? "met" : "MISSED"), (rb <= 1.5 ? "met" : "MISSED"), (s32 >= 5 ? "met" : "MISSED"),
        (pk <= 64 ? "met" : "MISSED"), (m16 >= 0.9 * m32 ? "met" : "MISSED") }'
rm -rf "$D"
