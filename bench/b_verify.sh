# bench/b_verify.sh: posenc verify --expect-q/--expect-k on Llama 3.1 8B dumps, q (1, 32, 8192,
# 128) and k (1, 8, 8192, 128) f32 (pre-RoPE and a runtime's rotation, made by the torch emulation
# of transformers in tests/cli/verify_fixtures.py), against the PyTorch code a user would write
# (bench/verify_torch.py) and against reading the same bytes (cat). Target: whole process <= 3 s,
# peak RSS bounded (streamed: independent of the dump size).
. "$SRC/bench/lib.sh"
L="$SRC/tests/data/configs/llama-3.1-8b.json"
D="$BENCH_DIR/verify"
mkdir -p "$D"
"$PY" - "$D" "$L" "$SRC/tests/cli" <<'PYEOF'
import json, sys, numpy as np, torch
d, cfg = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import verify_fixtures as vf
vf.HD = 128
c = json.load(open(cfg))
g = np.random.default_rng(0)
S = 8192
inv, attn, dim, style = vf.rope_inv("llama3", c, S)
for name, h in (("q", 32), ("k", 8)):
    x = g.standard_normal((1, h, S, 128), dtype=np.float32)
    np.save(f"{d}/{name}.npy", x)
    np.save(f"{d}/e{name}.npy", vf.rotate(torch.from_numpy(x), list(range(S)), inv, attn, dim, style).numpy())
PYEOF
echo "f32 NPY, q (1, 32, 8192, 128) + k (1, 8, 8192, 128) and their rotations: $(du -cm "$D"/*.npy | tail -1 | cut -f1) MiB"
measure "posenc verify --expect-q --expect-k" "$POSENC" verify -q --config "$L" --q "$D/q.npy" \
    --k "$D/k.npy" --expect-q "$D/eq.npy" --expect-k "$D/ek.npy" --report "$D/v.json"
p=$MED ppeak=$PEAK
measure "python3 bench/verify_torch.py (torch f32)" "$PY" "$SRC/bench/verify_torch.py" "$L" \
    "$D/q.npy" "$D/k.npy" "$D/eq.npy" "$D/ek.npy"
t=$MED
measure "cat the four dumps (read the bytes)" sh -c "cat '$D'/q.npy '$D'/k.npy '$D'/eq.npy '$D'/ek.npy > /dev/null"
c=$MED
"$PY" -c "import json; r=json.load(open('$D/v.json')); assert r['ok'], [c['summary'] for c in r['checks']]; print('  report ok:', [c['name'] for c in r['checks']])"
echo "  posenc / cat: $(ratio "$p" "$c")x, torch / posenc: $(ratio "$t" "$p")x, posenc peak ${ppeak} MiB"
awk -v p="$p" 'BEGIN { if (p > 3.0) print "  target missed: posenc verify took " p " s > 3 s (wall; see the CPU time on a loaded machine)"; else print "  target met: " p " s <= 3 s" }'
