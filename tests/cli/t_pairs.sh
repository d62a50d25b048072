# posenc apply and verify on multi-layer dumps: every q/k pair of an HDF5, safetensors or NPZ file
# in one run, each with its layer's parameters (tests/cli/pairs_ref.py makes the fixtures and the
# references: a float64 closed form and transformers' float32 path in torch).
. "$SRC/tests/cli/lib.sh"
REF="$SRC/tests/cli/pairs_ref.py"
$PY "$REF" make .
G=gemma.json      # Gemma-3-style: layers 0, 2 sliding (theta 1e4), 1, 3 full (1e6, linear x8)
SM=smol.json      # SmolLM3: layer 3 has no RoPE
# CMD must exit 1 (a check failed) with nothing on stderr
expect_check_fail() {
    set +e
    "$@" > out.stdout 2> out.stderr
    rc=$?
    set -e
    if [ "$rc" -ne 1 ] || [ -s out.stderr ]; then
        echo "expected exit 1 and no message, got $rc: $*"; cat out.stderr; return 1
    fi
}
sum0=$(cat layers.h5 layers.safetensors layers.npz | cksum)

# ---- apply: HDF5 with /layer0..3/{q,k} and a /layer0/v -> one HDF5 keeping the groups
expect_ok "$POSENC" apply layers.h5 --config $G -o out.h5
grep -qF "posenc apply: 'layers.h5': 1 member in no q/k pair is not written ('/layer0/v')" out.stderr
$PY "$REF" check gemma layers.h5 out.h5
# the same values transformers' float32 code gives (torch), to float32 rounding
$PY "$REF" close out.h5 gemma_rot.h5 1e-6
"$POSENC" ls out.h5 > ls.txt
grep -q '^/layer3/k ' ls.txt
grep -qF '"/layer0":"sliding_attention","/layer1":"full_attention"' ls.txt
# --precision hf: transformers' float32 tables
expect_ok "$POSENC" apply layers.h5 --config $G -o hf.h5 --precision hf
$PY "$REF" close hf.h5 gemma_rot.h5 1e-6

# ---- safetensors layers.N.q / layers.N.k, default output beside it
expect_ok "$POSENC" apply layers.safetensors --config $G
$PY "$REF" check gemma layers.safetensors layers.rope.safetensors

# ---- NPZ through a config with a NoPE layer: layer 3 copied bit for bit, and said so
expect_ok "$POSENC" apply layers.npz --config $SM -o smol.npz
grep -qF "posenc apply: 'layers.npz': 'layers.3' is layer 3, which has no RoPE: copied unchanged" out.stderr
$PY "$REF" check smol layers.npz smol.npz
"$POSENC" ls smol.npz | grep -qF '"layers.3":"none"'

# --precision vllm: each pair as vLLM's cache rotates it, the same bytes as one pair at a time
expect_ok "$POSENC" apply layers.npz --config $SM -o vllm.npz --precision vllm
expect_ok "$POSENC" apply layers.npz:layers.1.q layers.npz:layers.1.k --config $SM \
    --precision vllm -o vllm1.npz
$PY "$SRC/tests/cli/apply_ref.py" same vllm.npz:layers.1.q vllm1.npz:q
$PY "$SRC/tests/cli/apply_ref.py" same vllm.npz:layers.1.k vllm1.npz:k
$PY "$SRC/tests/cli/apply_ref.py" same vllm.npz:layers.3.k layers.npz:layers.3.k
# --precision ggml likewise (llama.cpp's tables per layer)
expect_ok "$POSENC" apply layers.npz --config $SM -o ggml.npz --precision ggml
expect_ok "$POSENC" apply layers.npz:layers.2.q layers.npz:layers.2.k --config $SM \
    --precision ggml -o ggml2.npz
$PY "$SRC/tests/cli/apply_ref.py" same ggml.npz:layers.2.q ggml2.npz:q
$PY "$SRC/tests/cli/apply_ref.py" same ggml.npz:layers.2.k ggml2.npz:k
# and verify --precision checks each pair against that runtime's rotation
expect_ok "$POSENC" verify --config $SM --q layers.npz --expect-q vllm.npz --precision vllm
expect_ok "$POSENC" verify --config $SM --q layers.npz --expect-q ggml.npz --precision ggml
# a NaN in one layer's rows fails that pair, the run and the JSON alike, with counts
"$PY" -c "
import numpy as np
d = {n: v for n, v in np.load('ggml.npz').items() if n.startswith('layers.')}
q = d['layers.1.q'].copy(); q[..., 3:5, :] = np.nan; d['layers.1.q'] = q
np.savez('ggmlnan.npz', **d)"
expect_check_fail "$POSENC" verify --config $SM --q layers.npz --expect-q ggmlnan.npz \
    --report nan.json
"$PY" - <<'PY'
import json
r = json.load(open("nan.json"))
assert r["ok"] is False
p = {x["group"]: x for x in r["pairs"]}
assert p["layers.1"]["ok"] is False and all(p[g]["ok"] for g in p if g != "layers.1"), p
c = {x["name"]: x for x in r["checks"]}["expect_q@layers.1"]
n = c["details"]["nonfinite"]
assert not c["ok"] and n["nan"] > 0 and n["first"]["position"] == 3, n
assert c["details"]["rows_failed"] > 0 and c["details"]["elements_failed"] == n["nan"], c["details"]
PY

# ---- --pairs chooses; HDF5 groups into flat safetensors names
expect_ok "$POSENC" apply layers.h5 --config $G -o some.safetensors --pairs '/layer[13]'
$PY "$REF" check gemma layers.h5 some.safetensors 1,3
expect_ok "$POSENC" apply layers.safetensors --config $G -o two.h5 --pairs 'layers.2'
$PY "$REF" check gemma layers.safetensors two.h5 2

# ---- refusals: one line, nothing written
expect_fail 3 "posenc apply: 'lone.h5': '/layer1/q' has no key: '/layer1/k' is missing" \
    "$POSENC" apply lone.h5 --config $G -o x.h5
expect_fail 2 "no q/k pair matches --pairs 'layer9' (pairs: /layer0, /layer1, /layer2, /layer3)" \
    "$POSENC" apply layers.h5 --config $G -o x.h5 --pairs layer9
expect_fail 3 "'x.npy': 4 q/k pairs need a container output" \
    "$POSENC" apply layers.h5 --config $G -o x.npy
expect_fail 2 "--pairs needs one container" \
    "$POSENC" apply layers.h5:/layer0/q layers.h5:/layer0/k --config $G -o x.h5 --pairs 'layer*'
expect_fail 3 "group '/attn' names no layer index" "$POSENC" apply noidx.h5 --config $G -o x.h5
expect_fail 3 "'/layer0/q': head_dim 16 does not match" \
    "$POSENC" apply layers.h5 --config "$DATA/configs/llama-3.1-8b.json" -o x.h5
expect_fail 2 "refusing to overwrite an input" "$POSENC" apply layers.h5 --config $G -o layers.h5
no_file x.h5 x.npy
# lone.h5 without its broken layer
expect_ok "$POSENC" apply lone.h5 --config $G -o lone0.h5 --pairs layer0
$PY "$REF" check gemma lone.h5 lone0.h5 0
# --layer-type sets every pair: the noindex group then works
expect_ok "$POSENC" apply noidx.h5 --config $G -o noidx.rope.h5 --layer-type full_attention

# ---- verify: one run, one report, a row per pair
expect_ok "$POSENC" verify --config $G --q layers.h5 --expect-q gemma_rot.h5 --report r.json \
    --report r.md
grep -q '^ok    pair /layer1  *layer 1, full_attention' out.stdout
grep -q '^result: PASS' out.stdout
$PY - << 'EOF'
import json
r = json.load(open("r.json"))
assert r["ok"] is True
rows = r["pairs"]
assert [p["group"] for p in rows] == ["/layer0", "/layer1", "/layer2", "/layer3"], rows
assert [p["layer_type"] for p in rows] == ["sliding_attention", "full_attention"] * 2
assert all(p["ok"] and p["has_rope"] for p in rows)
assert rows[1]["rope"]["theta"] == 1e6 and rows[1]["rope"]["factor"] == 8
assert rows[0]["rope"]["theta"] == 1e4
assert rows[2]["q"] == "layers.h5:/layer2/q" and rows[2]["expect_k"] == "gemma_rot.h5:/layer2/k"
names = [c["name"] for c in r["checks"]]
assert "expect_k@/layer3" in names and "invariance@/layer0" in names, names
assert r["inputs"]["pairs"] == 4
# the header lists every pair's dumps under its group
hp = r["header"]["pairs"]
assert [p["label"] for p in hp] == ["/layer0", "/layer1", "/layer2", "/layer3"], hp
assert [d["member"] for d in hp[3]["dumps"]] == ["/layer3/q", "/layer3/k"] * 2, hp[3]
EOF
grep -qF '`expect_q@/layer2`' r.md
grep -qF '| /layer1 | 1 | full_attention | yes | layers.h5:/layer1/q | layers.h5:/layer1/k | ok |' r.md
# a full layer rotated with the sliding parameters: exit 1, the report names it
expect_check_fail "$POSENC" verify --config $G --q layers.h5 --expect-q gemma_bad.h5 --report bad.json
grep -q '^FAIL  expect_k@/layer3 ' out.stdout
grep -q '^FAIL  pair /layer3 ' out.stdout
grep -q '^ok    pair /layer2 ' out.stdout
# and says which parameters the runtime used
grep -qF "note: /layer3: k matches when rotated with layer type 'sliding_attention'; layer 3 is full_attention" out.stdout
$PY - << 'EOF'
import json
r = json.load(open("bad.json"))
assert r["ok"] is False
assert [p["ok"] for p in r["pairs"]] == [True, True, True, False]
bad = [c["name"] for c in r["checks"] if not c["ok"]]
assert bad == ["expect_k@/layer3"], bad
assert r["pairs"][3]["explanation"] == "k matches when rotated with layer type 'sliding_attention'"
assert r["pairs"][2]["explanation"] is None if "explanation" in r["pairs"][2] else True
EOF
# the pair line of the summary carries the explanation; every failed pair has one
grep -qF "FAIL  pair /layer3         layer 3, full_attention: k matches when rotated with layer type 'sliding_attention'" out.stdout
# Qwen3.5: linear_attention layers (no RoPE) and full_attention layers share one parameter set;
# every row names its layer type. A full layer rotated 3 positions late: no other layer type
# explains it, so the explanation is the failing check's diagnosis, prefixed by its name
Q35="$DATA/configs/qwen3.5-27b.json"
$PY -c "
import numpy as np; r = np.random.default_rng(5)
np.savez('q35.npz', **{'layers.%d.%s' % (l, n): r.standard_normal((1, h, 8, 256)).astype('f4')
                       for l in (2, 3) for n, h in (('q', 2), ('k', 1))})"
expect_ok "$POSENC" apply q35.npz --config "$Q35" -o q35rot.npz
expect_ok "$POSENC" apply q35.npz:layers.3.q q35.npz:layers.3.k --config "$Q35" --offset 3 -o q35late.npz
$PY -c "
import numpy as np
a = {n: v for n, v in np.load('q35rot.npz').items() if n.startswith('layers.')}
a['layers.3.k'] = np.load('q35late.npz')['k']
np.savez('q35bad.npz', **a)"
expect_check_fail "$POSENC" verify --config "$Q35" --q q35.npz --expect-q q35bad.npz \
    --report q35.json --report q35.md --report q35.html
grep -q '^ok    pair layers.2  *layer 2, linear_attention, no RoPE$' out.stdout
grep -q "^FAIL  pair layers.3  *layer 3, full_attention: expect_k@layers.3: k matches with positions shifted by +3" out.stdout
$PY - << 'EOF2'
import json, re
r = json.load(open("q35.json"))
rows = r["pairs"]
assert [(p["layer_type"], p["has_rope"], p["ok"]) for p in rows] == \
    [("linear_attention", False, True), ("full_attention", True, False)], rows
assert rows[1]["explanation"].startswith("expect_k@layers.3: k matches with positions shifted by +3"), rows[1]
# Markdown: the first screen (count, failed table) before the pairs, checks and folded dumps;
# every link goes to a heading's anchor (GitHub's rules: lower case, spaces to '-', other
# punctuation than '-' and '_' dropped, a repeat suffixed -1, -2 ...)
md = open("q35.md").read()
first = md.index("| failed | diagnosis |")
assert md.index("1 of 7 checks failed (1 of 2 q/k pairs).") < first < md.index("### Pairs") \
    < md.index("### Checks") < md.index("<details><summary>Dumps: 2 pairs, 8 arrays</summary>")
seen, anchors = {}, set()
for h in re.findall(r"^#+ (.*)$", md, re.M):
    s = re.sub(r"[^\w\- ]", "", h.replace("`", "").lower(), flags=re.A).replace(" ", "-")
    a = s if s not in seen else "%s-%d" % (s, seen[s] + 1)
    seen[s] = seen.get(s, -1) + 1
    anchors.add(a)
links = re.findall(r"\]\(#([^)]*)\)", md)
assert "pair-layers3" in links and "check-expect_klayers3" in links, links
assert all(l in anchors for l in links), (links, anchors)
EOF2
# SmolLM3: the NoPE layer must come back unrotated
expect_ok "$POSENC" verify --config $SM --q layers.safetensors --expect-q smol_rot.safetensors
grep -q '^ok    expect_q@layers.3 .*q is not rotated, as layer 3 has no RoPE' out.stdout
grep -q '^ok    pair layers.3  *layer 3, no RoPE' out.stdout
expect_check_fail "$POSENC" verify --config $SM --q layers.safetensors \
    --expect-q smol_bad.safetensors --report smolr.json
grep -q '^FAIL  expect_k@layers.3 .*but layer 3 has no RoPE' out.stdout
grep -qF "note: layers.3: q and k match when rotated with the config's RoPE; layer 3 has no RoPE" out.stdout
$PY -c "
import json; r = json.load(open('smolr.json'))
assert [p['has_rope'] for p in r['pairs']] == [True, True, True, False]
assert [p['ok'] for p in r['pairs']] == [True, True, True, False]
assert r['pairs'][3]['rope'] is None"
# the NPZ dump alone (invariance of every pair), --pairs, --k naming the same file
expect_ok "$POSENC" verify --config $G --q layers.npz
grep -q '^ok    invariance@layers.3 ' out.stdout
expect_ok "$POSENC" verify --config $G --q layers.h5 --k layers.h5 --pairs 'layer[12]' \
    --expect-q gemma_rot.h5 --report some.json
$PY -c "
import json; r = json.load(open('some.json'))
assert [p['group'] for p in r['pairs']] == ['/layer1', '/layer2']"
# apply's output verifies against its own input
expect_ok "$POSENC" verify --config $G --q layers.safetensors --expect-q layers.rope.safetensors
expect_fail 3 "posenc verify: 'lone.h5': '/layer1/q' has no key: '/layer1/k' is missing" \
    "$POSENC" verify --config $G --q lone.h5
expect_fail 3 "'lone.h5': no q/k pair for group '/layer2' of 'layers.h5'" \
    "$POSENC" verify --config $G --q layers.h5 --expect-q lone.h5 --pairs 'layer[02]'
expect_fail 2 "--pairs needs --q naming a container" "$POSENC" verify --config $G --pairs 'x'
expect_fail 2 "no q/k pair matches --pairs 'z*'" "$POSENC" verify --config $G --q layers.h5 --pairs 'z*'
expect_fail 2 "give their rotated pairs as one --expect-q container" \
    "$POSENC" verify --config $G --q layers.h5 --expect-q gemma_rot.h5 --expect-k x.h5
# a file of one top-level pair is one Q/K pair: same bytes as naming the two members
$PY -c "
import numpy as np; r = np.random.default_rng(3)
np.savez('qk.npz', q=r.standard_normal((1, 4, 5, 16)).astype('f4'), k=r.standard_normal((1, 2, 5, 16)).astype('f4'))"
expect_ok "$POSENC" apply qk.npz --config $SM
expect_ok "$POSENC" apply qk.npz:q qk.npz:k --config $SM -o qk2.npz
$PY "$SRC/tests/cli/apply_ref.py" same qk.rope.npz:q qk2.npz:q
$PY "$SRC/tests/cli/apply_ref.py" same qk.rope.npz:k qk2.npz:k
expect_ok "$POSENC" verify --config $SM --q qk.npz --expect-q qk.rope.npz
grep -q '^ok    expect_k@top ' out.stdout
expect_fail 2 "several RoPE layer types" "$POSENC" apply qk.npz --config $G -o qk3.npz
# --rotated on every pair: position-independent content (one token repeated), rotated by torch
$PY - "$REF" << 'EOF'
import importlib.util, sys, numpy as np, h5py
spec = importlib.util.spec_from_file_location("ref", sys.argv[1])
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
pos = np.arange(ref.S, dtype=np.float64)
r = np.random.default_rng(4)
with h5py.File("rep.h5", "w") as f:
    for i in range(ref.LAYERS):
        th, fa = ref.layer_params("gemma", i)
        for n, h in (("q", ref.HQ), ("k", ref.HK)):
            x = np.repeat(r.standard_normal((1, h, 1, ref.HD)), ref.S, axis=2).astype(np.float32)
            f[f"/layer{i}/{n}"] = ref.rotate_hf(x, th, fa, pos)
EOF
expect_ok "$POSENC" verify --config $G --q rep.h5 --rotated
grep -q '^ok    rotated_k@/layer3 ' out.stdout
grep -q '^ok    rotated_q@/layer0 ' out.stdout
# the inputs were never touched
[ "$(cat layers.h5 layers.safetensors layers.npz | cksum)" = "$sum0" ]

# ---- memory stays bounded: 128 MiB of dumps, peak RSS far below
$PY "$REF" big big.h5 8 2048
$PY - << 'EOF'
import json
c = json.load(open("gemma.json"))
c.update(head_dim=128, num_hidden_layers=8, layer_types=c["layer_types"] * 2)
json.dump(c, open("g8.json", "w"))
EOF
# peak RSS in kB of CMD (which must exit 0) into rss.txt; a sanitizer build keeps at most 4 MiB
# of freed memory in quarantine, so its peak measures what the run holds, not what it freed
cat > rss.py << 'EOF'
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:])
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"peak RSS {kb} kB, exit {r.returncode}: {' '.join(sys.argv[1:3])}")
open("rss.txt", "w").write(str(kb))
sys.exit(r.returncode != 0)
EOF
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"
# every run of 8 layers (128 MiB) stays below half the file and within 8 MiB of one pair's run
limit=$(($(stat -c %s big.h5) / 2048))
check_rss() {
    kb=$(cat rss.txt)
    [ "$kb" -le "$limit" ] && [ "$kb" -le $(($1 + 8192)) ] ||
        { echo "peak RSS $kb kB: over $limit kB or one pair's $1 kB + 8 MiB"; return 1; }
}
$PY rss.py "$POSENC" apply big.h5:/layer1/q big.h5:/layer1/k --config g8.json \
    --layer-type full_attention -o one.h5
one=$(cat rss.txt)
$PY rss.py "$POSENC" apply big.h5 --config g8.json -o big.rope.h5
check_rss "$one"
$PY rss.py "$POSENC" apply big.h5 --config g8.json -o big.rope.safetensors
check_rss "$one"
$PY rss.py "$POSENC" verify --config g8.json --layer-type full_attention -q \
    --q big.h5:/layer1/q --k big.h5:/layer1/k --expect-q one.h5:q --expect-k one.h5:k
one=$(cat rss.txt)
$PY rss.py "$POSENC" verify --config g8.json --q big.h5 --expect-q big.rope.h5 -q
check_rss "$one"
rm -f big.h5 big.rope.h5 big.rope.safetensors one.h5
