# bench/b_convert.sh: posenc convert of a 1 GiB f32 NPY to safetensors, HDF5 and NPY against
# copying the same file (cp), and against numpy/h5py doing the same conversion in memory.
# Targets: within ~1.5x of cp, peak RSS <= 64 MiB whatever the input size.
# Each timed command ends with `sync`, so every run pays for writing its own 1 GiB back to disk
# instead of leaving dirty pages for the next run to wait on (which made the order of the runs
# decide the figures).
. "$SRC/bench/lib.sh"
D="$BENCH_DIR/convert"
mkdir -p "$D"

"$PY" - "$D" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
g = np.random.default_rng(0)
x = np.lib.format.open_memmap(f"{d}/big.npy", mode="w+", dtype=np.float32, shape=(8, 32, 8192, 128))
for b in range(8):
    x[b] = g.standard_normal((32, 8192, 128), dtype=np.float32)
x.flush()
PYEOF
sync
echo "input: big.npy f32 (8, 32, 8192, 128), $(($(stat -c %s "$D/big.npy") / 1048576)) MiB"

measure "cp big.npy copy.npy" sh -c "cp '$D/big.npy' '$D/copy.npy' && sync"
cp_t=$MED cp_peak=$PEAK
rm -f "$D/copy.npy"
measure "posenc convert big.npy big.safetensors" sh -c "'$POSENC' convert '$D/big.npy' '$D/big.safetensors' && sync"
st_t=$MED st_peak=$PEAK
rm -f "$D/big.safetensors"
measure "posenc convert big.npy big.h5" sh -c "'$POSENC' convert '$D/big.npy' '$D/big.h5' && sync"
h5_t=$MED h5_peak=$PEAK
rm -f "$D/big.h5"
measure "posenc convert big.npy out.npy" sh -c "'$POSENC' convert '$D/big.npy' '$D/out.npy' && sync"
npy_t=$MED npy_peak=$PEAK
rm -f "$D/out.npy"
measure "posenc convert --dtype bf16 big.npy bf16.safetensors" sh -c "'$POSENC' convert --dtype bf16 '$D/big.npy' '$D/bf16.safetensors' && sync"
bf_t=$MED bf_peak=$PEAK
rm -f "$D/bf16.safetensors"
measure "numpy+h5py: h5py.File(...)['big'] = np.load(big.npy)" sh -c "'$PY' -c \"
import numpy as np, h5py
with h5py.File('$D/py.h5', 'w') as f:
    f['big'] = np.load('$D/big.npy')
\" && sync"
py_t=$MED py_peak=$PEAK
rm -f "$D/py.h5"

echo
echo "  time vs cp:   safetensors $(ratio "$st_t" "$cp_t")x, h5 $(ratio "$h5_t" "$cp_t")x, npy $(ratio "$npy_t" "$cp_t")x, bf16 safetensors $(ratio "$bf_t" "$cp_t")x"
echo "  h5: posenc vs numpy+h5py time $(ratio "$h5_t" "$py_t")x, peak RSS $h5_peak MiB vs $py_peak MiB"
echo "  peak RSS (MiB): cp $cp_peak, safetensors $st_peak, h5 $h5_peak, npy $npy_peak, bf16 $bf_peak (target <= 64)"
rm -f "$D/big.npy"
