# posenc verify names the mistake: each usual error, made deliberately in the "runtime's" dumps
# by the torch emulation, fails with exit 1 and the right diagnosis (text and JSON).
. "$SRC/tests/cli/lib.sh"
FX="$SRC/tests/cli/verify_fixtures.py"
"$PY" "$FX" "default style --mistake style" "partial rotary_full --mistake rotary_full" \
    "theta5e5 theta --mistake theta" "default offset --mistake offset" \
    "llama3 scaling --mistake scaling --offset 700" "yarn attn --mistake attn --offset 1000" \
    "default bf16 --mistake bf16" "gptj gptjstyle --mistake style" \
    "default rotary_partial --mistake rotary_partial" "linear linscale --mistake scaling" \
    "yarn yarnscale --mistake scaling --offset 1000" "longrope lrshort --mistake longrope_short --offset 600" \
    "llama3 f16 --mistake f16 --offset 100" \
    "qwen3.5 qwenfull --mistake rotary_full" "qwen3.5 none0 --mistake none --seq 256" \
    "qwen3.5 none4096 --mistake none --seq 256 --offset 4096" \
    "qwen3.5 decode5000 --mistake none --seq 1 --offset 5000" "default nonefull --mistake none"

diag() { # DIR OFFSET BEST 'text after "k matches with "' ['whole explanation instead']
    d=$1; off=$2; best=$3; text="k matches with $4"; [ $# -lt 5 ] || text=$5
    set +e
    "$POSENC" verify --config "$d/config.json" --q "$d/q.npy" --k "$d/k.npy" \
        --expect-q "$d/eq.npy" --expect-k "$d/ek.npy" --offset "$off" \
        --report "$d.json" --report "$d.md" > out.stdout 2> out.stderr
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || { echo "$d: expected exit 1, got $rc"; cat out.stdout out.stderr; exit 1; }
    grep -q '^FAIL  expect_k ' out.stdout
    grep -qF "diagnosis: $text" out.stdout || { echo "$d: no diagnosis '$text'"; cat out.stdout; exit 1; }
    grep -qF "$text" "$d.md"
    "$PY" - "$d.json" "$best" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False
c = {c["name"]: c for c in r["checks"]}
for t in ("expect_q", "expect_k"):
    d = c[t]["diagnosis"]
    assert not c[t]["ok"] and d is not None, t
    assert d["explained"] is True and d["best"] == sys.argv[2], (t, d["best"], d["explanation"])
    best = d["candidates"][0]
    assert best["name"] == sys.argv[2] and best["explains"] and best["ratio"] <= 1, best
    assert d["config_max_rel_err"] > 1e-4
    for k in ("explanation", "evidence", "candidates"):
        assert k in d
# invariance of the pre-RoPE dumps is still fine: the mistake is the runtime's
assert c["invariance"]["ok"]
PYEOF
}
diag style 0 style_swapped "--style gptj (max rel err"
diag gptjstyle 0 style_swapped "--style neox (max rel err"
diag rotary_full 0 rotary_dim_full "a full-head rotation (all 64 dims, max rel err"
diag theta 0 theta "theta 10000 (estimated"
diag offset 0 offset "positions shifted by +5"
diag scaling 700 scaling_ignored "plain RoPE (rope_type default, theta 500000): llama3 scaling ignored"
diag attn 1000 attention_scaling_missing "attention scaling 1.13863 missing"
diag bf16 0 tables_bf16 "cos/sin tables rounded to bf16"
diag f16 100 tables_f16 "cos/sin tables rounded to f16"
diag rotary_partial 0 rotary_dim_partial "the partial rotary applied (rotary_dim 32 of 64)"
diag linscale 0 scaling_ignored "plain RoPE (rope_type default, theta 10000): linear scaling ignored"
diag yarnscale 1000 scaling_ignored "plain RoPE (rope_type default, theta 10000): yarn scaling ignored"
diag lrshort 600 longrope_factors "longrope short factors"
# Qwen3.5 (interleaved mrope, 64 of 256 dims): a runtime that rotates all 256 dims
diag qwenfull 0 rotary_dim_full "a full-head rotation (all 256 dims, max rel err"
grep -qF 'full-head rotation (rotary_dim 256 instead of 64)' qwenfull.md
# a runtime that did not rotate at all is "not rotated", never "positions shifted by -pos"
diag none0 0 not_rotated "" 'k is not rotated: it equals the pre-RoPE rows (max rel err 0); the config implies neox RoPE on 64 of 256 dims'
diag none4096 4096 not_rotated "" 'k is not rotated: it equals the pre-RoPE rows (max rel err 0)'
diag decode5000 5000 not_rotated "" 'k is not rotated: it equals the pre-RoPE rows (max rel err 0)'
diag nonefull 0 not_rotated "" 'k is not rotated: it equals the pre-RoPE rows (max rel err 0); the config implies neox RoPE on 64 of 64 dims'
for d in none0 none4096 decode5000 nonefull; do
    ! grep -q 'shifted by' "$d.md" || { echo "$d: a shift is offered although nothing was rotated"; exit 1; }
    "$PY" -c 'import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    d = c["diagnosis"]
    assert d is None or "offset" not in [k["name"] for k in d["candidates"]], (c["name"], d)' "$d.json"
done

# the implied theta is in the report
"$PY" -c 'import json; d=[c for c in json.load(open("theta.json"))["checks"] if c["name"]=="expect_k"][0]["diagnosis"]; assert abs(d["theta_estimate"]-1e4) < 10, d["theta_estimate"]'
"$PY" -c 'import json; d=[c for c in json.load(open("offset.json"))["checks"] if c["name"]=="expect_q"][0]["diagnosis"]; assert d["position_shift_estimate"] == 5'

# garbage (not a usual mistake): exit 1, no false explanation
"$PY" -c 'import numpy as np; np.save("noise.npy", np.random.default_rng(3).standard_normal((1, 2, 48, 64)).astype(np.float32))'
set +e
"$POSENC" verify --config style/config.json --q style/q.npy --k style/k.npy --expect-k noise.npy --report n.json > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ]
grep -q "no usual mistake explains it; closest: " out.stdout
"$PY" -c 'import json; d=[c for c in json.load(open("n.json"))["checks"] if c["name"]=="expect_k"][0]["diagnosis"]; assert d["explained"] is False'
