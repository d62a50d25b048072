# verify names the runtime whose numerics a dump holds: exact math, transformers (hf), vLLM or
# llama.cpp (ggml). The dumps come from outside posenc: the upstream formulas in numpy/torch of
# tests/verdict/make_corpus.py (float64 exact math; transformers' float32 forward; vLLM's
# cos_sin_cache in float32; ggml-cpu's theta accumulation with convert_hf_to_gguf.py's llama3
# rope_freqs). A correct llama.cpp dump at position 131072 passes although it is 1.6e-2 from
# transformers' rotation, a wrong theta matches no profile and fails, --precision holds the dump
# to one profile.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
L="$C/llama-3.1-8b.json"
"$PY" - "$SRC" <<'PY'
import sys
import numpy as np
import torch
sys.path.insert(0, sys.argv[1] + "/tests/verdict")
import make_corpus as mc
rng = np.random.default_rng(7)
q = rng.standard_normal((1, 4, 48, 128)).astype("f4")
k = rng.standard_normal((1, 2, 48, 128)).astype("f4")
np.save("q.npy", q)
np.save("k.npy", k)
r = mc.Rope("llama-3.1-8b.json")
pos = list(range(131024, 131024 + 48))
def dump(name, c, s, dt=torch.float32):
    rot = {t: mc.rotate(torch.from_numpy(x).to(dt), c, s, r.pairing, r.rotary_dim).float().numpy()
           for t, x in (("q", q), ("k", k))}
    np.savez(name + ".npz", **rot)
# exact: float64 tables and rotation, rounded to float32 once
c, s = mc.tables_f64(mc.inv_freq_exact(r, 131072), pos, 1.0)
dump("exact", torch.from_numpy(c), torch.from_numpy(s), torch.float64)
dump("hf", *mc.tables_hf32(mc.inv_freq_hf(r, 131072), pos, 1.0))
dump("vllm", *mc.tables_vllm(r, pos, torch.float32))
dump("ggml", *[torch.from_numpy(t) for t in mc.tables_ggml(r, pos)])
r.theta = 10000.0  # the mistake: Llama 2's theta in a Llama 3.1 runtime
dump("bad", *[torch.from_numpy(t) for t in mc.tables_ggml(r, pos)])
PY

run() { # run DUMP EXIT [options]: verify q/k of DUMP.npz, the report in DUMP.json
    d=$1 want=$2
    shift 2
    set +e
    "$POSENC" verify --config "$L" --q q.npy --k k.npy --expect-q $d.npz:q --expect-k $d.npz:k \
        --offset 131024 --report $d.json "$@" > $d.out 2> $d.err
    rc=$?
    set -e
    [ "$rc" -eq "$want" ] || { echo "$d: exit $rc, not $want"; cat $d.out $d.err; exit 1; }
}
run ggml 0
grep -q '^ok    expect_k .*k matches the ggml profile (llama.cpp).*not a bug' ggml.out || { cat ggml.out; exit 1; }
run exact 0
grep -q '^ok    expect_q .*q matches exact math' exact.out || { cat exact.out; exit 1; }
run hf 0
run vllm 0
run bad 1
grep -q '^FAIL  expect_q .*matches no runtime profile' bad.out || { cat bad.out; exit 1; }
# held to one profile: the llama.cpp dump fails against hf and passes against ggml
run ggml 1 --precision hf
grep -q '^FAIL  expect_q .*q matches the ggml profile' ggml.out || { cat ggml.out; exit 1; }
run ggml 0 --precision ggml

"$PY" - <<'PY'
import json
def check(name, role):
    r = json.load(open(name + ".json"))
    return [c for c in r["checks"] if c["name"] == "expect_" + role][0]
for role in ("q", "k"):
    d = check("bad", role)["details"]
    assert d["runtime_match"] is None and not any(f.get("matches") for f in d["runtimes"]), d["runtimes"]
    fits = {f["precision"]: f for f in check("exact", role)["details"]["runtimes"]}
    assert set(fits) == {"exact", "hf", "vllm", "ggml"}, fits
    assert fits["exact"]["matches"] and fits["exact"]["drift"] == 0, fits["exact"]
    # transformers' and llama.cpp's float32 pipelines drift from exact math at 131072 by ~1e-2
    assert 1e-3 < fits["hf"]["drift"] < 5e-2 and 1e-3 < fits["ggml"]["drift"] < 5e-2, fits
    assert not fits["hf"]["matches"] and not fits["ggml"]["matches"], fits
PY
# the ggml dump matches ggml only; the hf dump matches hf and vLLM (the same float32 pipeline
# for Llama 3.1) and names hf
"$PY" - <<'PY'
import json
for name, want, also in (("ggml", "ggml", set()), ("hf", "hf", {"vllm"}), ("vllm", "hf", {"vllm"})):
    r = json.load(open(name + ".json"))
    for c in r["checks"]:
        if c["name"].startswith("expect_"):
            d = c["details"]
            m = {f["precision"] for f in d["runtimes"] if f.get("matches")}
            assert d["runtime_match"] == want and m == {want} | also, (name, d["runtime_match"], m)
PY

# --max-ulp: the bit-exact verdict against posenc apply's own rotation under --precision (that
# this rotation is llama.cpp's to the bit is t_interop_ggml's proof, against the real ggml). The
# numpy emulation of ggml above is not bit-exact (it matches the profile to its rounding, up to
# 128 ulp from ggml), so this part takes posenc apply's dump: 0 ulp from it passes --max-ulp 0; one
# element moved by one ulp fails --max-ulp 0 and passes --max-ulp 1, and the histogram counts
# every element.
expect_ok "$POSENC" apply q.npy k.npy --config "$L" --precision ggml --offset 131024 -o ggmlp.npz
run ggml 1 --precision ggml --max-ulp 0
grep -q "^FAIL  expect_q .* ulp at most from posenc's ggml rotation, over --max-ulp 0" ggml.out || { cat ggml.out; exit 1; }
run ggmlp 0 --precision ggml --max-ulp 0
grep -q "^ok    expect_q .*0 ulp at most from posenc's ggml rotation, within --max-ulp 0" ggmlp.out || { cat ggmlp.out; exit 1; }
"$PY" -c "
import numpy as np
d = {n: np.load('ggmlp.npz')[n] for n in ('q', 'k')}; q = d['q'].copy()
q[0, 2, 40, 5] = np.nextafter(q[0, 2, 40, 5], np.float32(np.inf))
d['q'] = q; np.savez('ulp1.npz', **d)"
run ulp1 1 --precision ggml --max-ulp 0
grep -q "^FAIL  expect_q .*1 ulp at most from posenc's ggml rotation, over --max-ulp 0" ulp1.out || { cat ulp1.out; exit 1; }
run ulp1 0 --precision ggml --max-ulp 1
"$PY" - <<'PY'
import json
r = json.load(open("ulp1.json"))
c = {c["name"]: c for c in r["checks"]}
u = c["expect_q"]["details"]["ulp"]
assert u["max"] == 1 and u["worst"] == {"batch": 0, "head": 2, "position": 131064, "dim": 5}, u
assert u["histogram"] == [{"from": 0, "to": 0, "count": 4 * 48 * 128 - 1}, {"from": 1, "to": 1, "count": 1}], u
assert c["expect_k"]["details"]["ulp"]["histogram"] == [{"from": 0, "to": 0, "count": 2 * 48 * 128}]
PY
expect_fail 2 "--max-ulp needs --precision" "$POSENC" verify --config "$L" --q q.npy --k k.npy \
    --expect-q ggml.npz:q --expect-k ggml.npz:k --max-ulp 0
expect_fail 2 "--max-ulp needs --expect-q/--expect-k" "$POSENC" verify --config "$L" --q q.npy \
    --k k.npy --rotated --precision ggml --max-ulp 0

# every mode fails on a NaN: pairs, --precision and --rotated
"$PY" -c "
import numpy as np
d = {n: np.load('ggml.npz')[n] for n in ('q', 'k')}; q = d['q'].copy(); q[0, 1, 10:20, :] = np.nan
d['q'] = q; np.savez('nan.npz', **d)
np.save('nanq.npy', q); np.save('nank.npy', d['k'])"
run nan 1
grep -q "^FAIL  expect_q .*q has 1280 NaN and 0 Inf values, first at head 1, position 131034, dim 0" nan.out || { cat nan.out; exit 1; }
run nan 1 --precision ggml
grep -q "^FAIL  expect_q .*q has 1280 NaN" nan.out || { cat nan.out; exit 1; }
set +e
"$POSENC" verify --config "$L" --q nanq.npy --k nank.npy --rotated --precision ggml --offset 131024 > rot.out
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "^FAIL  rotated_q .*q has 1280 NaN" rot.out || { echo "rotated: exit $rc"; cat rot.out; exit 1; }
