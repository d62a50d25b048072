# bench/b_diff.sh: posenc diff of two 256 MiB f32 arrays (NPY) against the numpy and torch code a
# user would write for the same answer (np.isclose + max abs error and its index;
# torch.testing.assert_close), and against cat of the same bytes (the cost of reading them).
# Targets: faster than numpy, peak RSS a few MiB whatever the input size (numpy and torch hold
# both arrays, and their float64 differences, in memory). Every element differs here (the
# slowest case: each one's ulp distance, histogram bin and sums); reading is the cat line.
. "$SRC/bench/lib.sh"
D="$BENCH_DIR/diff"
mkdir -p "$D"

"$PY" - "$D" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
g = np.random.default_rng(0)
shape = (8, 32, 2048, 128)
a = np.lib.format.open_memmap(f"{d}/a.npy", mode="w+", dtype=np.float32, shape=shape)
b = np.lib.format.open_memmap(f"{d}/b.npy", mode="w+", dtype=np.float32, shape=shape)
for i in range(8):
    x = g.standard_normal(shape[1:], dtype=np.float32)
    a[i] = x
    b[i] = x * np.float32(1 + 2e-7)          # about 1 ulp apart: every element differs
b[7, 31, 2047, 127] += np.float32(1e-3)      # one element outside the default tolerance
a.flush(); b.flush()
PYEOF
sync
echo "inputs: a.npy, b.npy f32 (8, 32, 2048, 128), $(($(stat -c %s "$D/a.npy") / 1048576)) MiB each"

measure "cat a.npy b.npy (reading both)" sh -c "cat '$D/a.npy' '$D/b.npy' > /dev/null"
cat_t=$MED
measure "posenc diff a.npy b.npy" sh -c "'$POSENC' diff '$D/a.npy' '$D/b.npy' || true"
pd_t=$MED pd_peak=$PEAK
measure "posenc diff --layout bhsd a.npy b.npy" sh -c "'$POSENC' diff --layout bhsd '$D/a.npy' '$D/b.npy' || true"
pl_t=$MED pl_peak=$PEAK
measure "numpy: isclose + abs err max/argmax" "$PY" -c "
import numpy as np
a = np.load('$D/a.npy'); b = np.load('$D/b.npy')
d = np.abs(a.astype(np.float64) - b)
bad = ~np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=1.3e-6, atol=1e-5)
print(bad.sum(), d.max(), np.unravel_index(d.argmax(), d.shape))
"
np_t=$MED np_peak=$PEAK
measure "torch: testing.assert_close" "$PY" -c "
import numpy as np, torch
a = torch.from_numpy(np.load('$D/a.npy')); b = torch.from_numpy(np.load('$D/b.npy'))
try:
    torch.testing.assert_close(a, b)
except AssertionError as e:
    print(e)
"
t_t=$MED t_peak=$PEAK

echo
echo "  time vs cat: posenc $(ratio "$pd_t" "$cat_t")x, with --layout $(ratio "$pl_t" "$cat_t")x"
echo "  posenc vs numpy: time $(ratio "$pd_t" "$np_t")x, peak RSS $pd_peak MiB vs $np_peak MiB"
echo "  posenc vs torch: time $(ratio "$pd_t" "$t_t")x, peak RSS $pd_peak MiB vs $t_peak MiB"
rm -f "$D/a.npy" "$D/b.npy"
