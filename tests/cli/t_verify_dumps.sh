# posenc verify on dumps: correct dumps of every RoPE type pass (the "runtime" is an independent
# torch emulation of transformers), in every layout, as f16 too, and as --rotated dumps.
. "$SRC/tests/cli/lib.sh"
FX="$SRC/tests/cli/verify_fixtures.py"
"$PY" "$FX" "default default" "linear linear" "dynamic dynamic --offset 3000" \
    "yarn yarn --offset 1000" "longrope lshort" "longrope llong --offset 600" \
    "llama3 llama3 --offset 700" "partial partial" "gptj gptj --offset 100" \
    "default bshd --layout bshd" "default hsd --layout hsd" "default shd --layout shd" \
    "llama3 f16 --dtype float16 --offset 300" "yarn rot --rotated --offset 0" \
    "gptj rotbad --rotated --mistake style" "llama3 bf16 --dtype bfloat16 --offset 300" \
    "default bf16style --dtype bfloat16 --mistake style" "llama3 far --offset 2147483600"

run() { # DIR OFFSET [extra options]
    d=$1; off=$2; shift 2
    expect_ok "$POSENC" verify --config "$d/config.json" --q "$d/q.npy" --k "$d/k.npy" \
        --expect-q "$d/eq.npy" --expect-k "$d/ek.npy" --offset "$off" --report "$d.json" "$@"
    grep -q '^ok    expect_q ' out.stdout || { echo "$d: expect_q not ok"; cat out.stdout; exit 1; }
    grep -q '^ok    expect_k ' out.stdout || { echo "$d: expect_k not ok"; cat out.stdout; exit 1; }
    grep -q '^ok    invariance ' out.stdout
    grep -q '^result: PASS (5 checks)' out.stdout
}
run default 0
run linear 0
run dynamic 3000
run yarn 1000
run lshort 0
run llong 600
run llama3 700
run partial 0
run gptj 100
run bshd 0 --layout bshd
run hsd 0 --layout hsd
run shd 0 --layout shd
run f16 300
# a bf16 model: bf16 activations and tables, bf16 arithmetic (ml_dtypes '<V2' NPY)
run bf16 300 --assume-bf16
set +e
"$POSENC" verify --config bf16style/config.json --q bf16style/q.npy --k bf16style/k.npy \
    --expect-q bf16style/eq.npy --expect-k bf16style/ek.npy --assume-bf16 > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ]
grep -q 'diagnosis: k matches with --style gptj' out.stdout

# dumps written far out (--offset 2147483600): the invariance grid runs from the pairs moved to
# 0 up to where they were, so transformers' float32 tables show their drift there (it read
# "drift by 0 at offset 0": offsets 0 and 1 only, f32 positions equal at 2^31)
expect_ok "$POSENC" verify --config far/config.json --q far/q.npy --k far/k.npy \
    --offset 2147483600 --report far.json
grep -q '^ok    invariance  *scores depend only on m - n: max deviation [0-9.e-]* at offset [1-9]' out.stdout
grep -q '^info  invariance_hf  *transformers.* drift by [1-9][0-9.e-]* at offset [1-9][0-9]* (rms' out.stdout
grep -q '^ok    tables ' out.stdout
grep -q '^result: PASS (3 checks)' out.stdout
"$PY" - <<'PYEOF'
import json
c = {c["name"]: c for c in json.load(open("far.json"))["checks"]}
offs = {o["offset"]: o for o in c["invariance_hf"]["details"]["offsets"]}
assert 0 in offs and 2147483600 in offs and len(offs) > 30, sorted(offs)
assert offs[2147483600]["deviation"] > 1e-2 and offs[1]["deviation"] < 1e-4, offs
assert c["invariance"]["max_rel_err"] <= c["invariance"]["tolerance"]
PYEOF

# the report records what was compared
"$PY" - <<'PYEOF'
import json
r = json.load(open("yarn.json"))
assert r["ok"] and r["inputs"]["expect_q"] == "yarn/eq.npy" and r["inputs"]["heads_k"] == 2
rope = r["config"]["rope"]
assert rope["rope_type"] == "yarn" and abs(rope["attention_scaling"] - (0.1 * __import__("math").log(4) + 1)) < 1e-12
c = {c["name"]: c for c in r["checks"]}
eq = c["expect_q"]
assert eq["ok"] and eq["details"]["rows"] == 4 * 48 and len(eq["details"]["per_head"]) == 4
assert eq["max_rel_err"] < 1e-4 and eq["tolerance"] is None
assert eq["details"]["max_ratio"] <= 1 and eq["details"]["elements_failed"] == 0
assert eq["details"]["elements"] == 4 * 48 * 64 and "u = 5.96e-08" in eq["details"]["bound"]
assert r["checks"][0]["details"]["source"].startswith("sampled rows")
assert json.load(open("llong.json"))["config"]["rope"]["longrope_factors"] == "long"
assert json.load(open("lshort.json"))["config"]["rope"]["longrope_factors"] == "short"
assert "u = 0.000488" in json.load(open("f16.json"))["checks"][3]["details"]["bound"]
b = json.load(open("bf16.json"))
assert b["inputs"]["dtype_q"] == "bf16" and "u = 0.00391" in b["checks"][3]["details"]["bound"]
PYEOF

# --positions gives the same answer as --offset
"$PY" -c 'import numpy as np; np.save("pos.npy", np.arange(700, 748, dtype=np.int64))'
expect_ok "$POSENC" verify --config llama3/config.json --q llama3/q.npy --k llama3/k.npy \
    --expect-q llama3/eq.npy --expect-k llama3/ek.npy --positions pos.npy
# ... and the wrong positions fail
expect_fail 2 "--positions: 10 positions for a sequence of 48 tokens" "$POSENC" verify --config llama3/config.json --q llama3/q.npy \
    --k llama3/k.npy --positions 0-9
set +e
"$POSENC" verify -q --config llama3/config.json --q llama3/q.npy --k llama3/k.npy \
    --expect-q llama3/eq.npy --expect-k llama3/ek.npy --offset 0
rc=$?
set -e
[ "$rc" -eq 1 ]

# pre-RoPE dumps alone: the invariance of their scores
expect_ok "$POSENC" verify --config default/config.json --q default/q.npy --k default/k.npy
grep -q '^result: PASS (3 checks)' out.stdout

# --rotated: de-rotating the first row and rotating it to every position reproduces the dump
expect_ok "$POSENC" verify --config rot/config.json --q rot/q.npy --k rot/k.npy --rotated
grep -q '^ok    rotated_q ' out.stdout
grep -q '^ok    rotated_k ' out.stdout
set +e
"$POSENC" verify --config rotbad/config.json --q rotbad/q.npy --k rotbad/k.npy --rotated > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ]
grep -q 'diagnosis: k matches with --style neox' out.stdout

# shape errors: exit 3 with the file named
"$PY" -c 'import numpy as np; np.save("q32.npy", np.zeros((1, 4, 48, 32), np.float32)); np.save("i.npy", np.zeros((1, 4, 48, 64), np.int32)); np.save("k3.npy", np.zeros((1, 3, 48, 64), np.float32))'
expect_fail 3 "'q32.npy': head_dim 32 does not match head_dim 64" "$POSENC" verify \
    --config default/config.json --q q32.npy --k default/k.npy
expect_fail 3 "'i.npy': dtype i32 is not a float type" "$POSENC" verify \
    --config default/config.json --q i.npy --k default/k.npy
expect_fail 3 "'k3.npy': 3 key heads do not divide 4 query heads" "$POSENC" verify \
    --config default/config.json --q default/q.npy --k k3.npy
expect_fail 3 "does not fit layout sd" "$POSENC" verify \
    --config default/config.json --q default/q.npy --k default/k.npy --layout sd
expect_fail 3 "'default/ek.npy': shape differs from 'default/q.npy'" "$POSENC" verify \
    --config default/config.json --q default/q.npy --k default/k.npy --expect-q default/ek.npy
