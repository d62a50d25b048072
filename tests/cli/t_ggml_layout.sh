# t_ggml_layout.sh: --layout ggml, q/k as llama.cpp holds them ([tokens, heads, head_dim], the
# converter's permuted order for Llama rotated in NORM pairs), against numpy references
# (tests/cli/ggml_layout_ref.py); llama.cpp's positions tensor; verify --gguf with dumps in one
# report; the note of apply --precision ggml in transformers' layout.
. "$SRC/tests/cli/lib.sh"
REF="$SRC/tests/cli/ggml_layout_ref.py"
$PY "$REF" make .
V="$POSENC verify --config llama.json --q q.npy --k k.npy --positions pos.npy --layout ggml"

# apply: llama.cpp's order in, llama.cpp's order out
expect_ok "$POSENC" apply q.npy k.npy --config llama.json --layout ggml --positions pos.npy -o r.npz
[ ! -s out.stderr ]
$PY "$REF" close r.npz:q q_rot.npy 1e-6
$PY "$REF" close r.npz:k k_rot.npy 1e-6
expect_ok "$POSENC" apply q_qwen.npy k_qwen.npy --config qwen2.json --layout ggml --positions pos.npy -o rq.npz
$PY "$REF" close rq.npz:q q_qwen_rot.npy 1e-6
# --precision ggml in transformers' layout on a permuting architecture: one note
expect_ok "$POSENC" apply q.npy --config llama.json --layout shd --precision ggml --positions pos.npy -o x.npy
[ "$(wc -l < out.stderr)" -eq 1 ]
grep -qF "posenc apply: 'llama.json': llama.cpp's own q/k of architecture llama are in the converter's permuted order (rotated as NORM pairs): for dumps taken from llama.cpp give --layout ggml" out.stderr
expect_ok "$POSENC" apply q.npy --config qwen2.json --layout shd --precision ggml --positions pos.npy -o x.npy
[ ! -s out.stderr ]
# no llama.cpp architecture: one line
expect_fail 3 "'gptj.json': llama.cpp: the config names no architecture" \
    "$POSENC" apply q.npy --config gptj.json --layout ggml -o x.npy
expect_fail 2 "--gguf applies only to --layout ggml and --precision ggml" \
    "$POSENC" apply q.npy --config llama.json --gguf x.gguf -o x.npy

# verify: the correct dumps pass, the NORM/NEOX mistake fails and is named
expect_ok $V --expect-q q_rot.npy --expect-k k_rot.npy
grep -q '^result: PASS' out.stdout
grep -qF 'note: --layout ggml: q/k as llama.cpp holds them for architecture llama, [tokens, heads, head_dim], rotated in NORM (2i, 2i+1) pairs; the converter permuted q/k' out.stdout
set +e
$V --expect-q q_bug.npy --expect-k k_bug.npy > bug.txt
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat bug.txt; exit 1; }
grep -q 'diagnosis: q matches with --style neox' bug.txt || { cat bug.txt; exit 1; }
# the same dumps read in transformers' pairing fail (what --layout shd says of them)
set +e
"$POSENC" verify --config llama.json --q q.npy --k k.npy --positions pos.npy --layout shd \
    --expect-q q_rot.npy --expect-k k_rot.npy > shd.txt
rc=$?
set -e
[ "$rc" -eq 1 ]
# llama.cpp's positions tensor: 4 rows (or 4 * n values) read as is
expect_ok "$POSENC" verify --config llama.json --q q.npy --k k.npy --positions pos4.npy \
    --layout ggml --expect-q q_rot.npy --expect-k k_rot.npy
expect_ok "$POSENC" verify --config llama.json --q q.npy --k k.npy --positions pos4flat.npy \
    --layout ggml --expect-q q_rot.npy --expect-k k_rot.npy
expect_fail 3 "'pos4img.npy': llama.cpp's 4 position rows differ (image tokens)" \
    "$POSENC" verify --config llama.json --q q.npy --k k.npy --positions pos4img.npy \
    --layout ggml --expect-q q_rot.npy --expect-k k_rot.npy
expect_ok "$POSENC" verify --config llama.json --q q.npy --k k.npy --positions pos4zero.npy \
    --layout ggml --expect-q q_rot.npy --expect-k k_rot.npy
expect_fail 3 "'pos4imgzero.npy': llama.cpp's 4 position rows differ (image tokens)" \
    "$POSENC" verify --config llama.json --q q.npy --k k.npy --positions pos4imgzero.npy \
    --layout ggml --expect-q q_rot.npy --expect-k k_rot.npy
expect_ok "$POSENC" apply q.npy --config llama.json --layout ggml --positions pos4.npy -o r4.npy
$PY "$REF" close r4.npy q_rot.npy 1e-6

# verify --gguf with dumps: the file against the config and the dumps, one report
expect_ok "$POSENC" gen --config llama.json -o llama.gguf
expect_ok "$POSENC" gen --config llama_theta.json -o theta.gguf
expect_ok $V --gguf llama.gguf --expect-q q_rot.npy --expect-k k_rot.npy --report both.json
grep -q '^ok    llama.rope.freq_base' out.stdout
grep -q '^ok    expect_q' out.stdout
$PY -c "
import json; r = json.load(open('both.json'))
assert r['ok'] and r['inputs']['gguf'] == 'llama.gguf', r['inputs']
names = [c['name'] for c in r['checks']]
assert 'llama.rope.freq_base' in names and 'expect_q' in names, names"
# a file with the wrong theta: its check is named; the config's dumps still pass
set +e
$V --gguf theta.gguf --expect-q q_rot.npy --expect-k k_rot.npy > theta.txt
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat theta.txt; exit 1; }
grep -q '^FAIL  llama.rope.freq_base .*expected 10000, found 20000' theta.txt || { cat theta.txt; exit 1; }
grep -q '^ok    expect_q' theta.txt
# --precision ggml --max-ulp 0 follows the file: the config's dumps are not that file's output
set +e
$V --gguf theta.gguf --expect-q q_rot.npy --expect-k k_rot.npy --precision ggml > thp.txt
rc=$?
set -e
[ "$rc" -eq 1 ]
grep -q '^FAIL  expect_q .*differs from the ggml profile' thp.txt || { cat thp.txt; exit 1; }

# One capture file (pre.* before RoPE, rope.* after, positions: what examples/capture_llama.c
# writes) of a Gemma 3 model, checked with --gguf in one command: each layer is held to its own
# type's llama.cpp arguments (sliding layer 0: freq_base_swa 10000, scale 1; full layer 5: 1e6,
# linear 8), and the file is checked for each layer type
cp "$DATA/configs/gemma-3-27b-it.json" g3.json
expect_ok "$POSENC" gen --config g3.json -o g3.gguf --seq-len 4096 --layer-type full_attention
$PY - << 'EOF'
import json, struct
import numpy as np

def save(path, arrays):
    header, blobs, off = {}, [], 0
    for name, a in arrays.items():
        raw = a.tobytes()
        header[name] = {"dtype": {"float32": "F32", "int32": "I32"}[a.dtype.name],
                        "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

rng = np.random.default_rng(5)
a = {}
for layer in (0, 5):
    a[f"layers.{layer}.q"] = rng.standard_normal((8, 32, 128)).astype(np.float32)
    a[f"layers.{layer}.k"] = rng.standard_normal((8, 16, 128)).astype(np.float32)
save("g3pre.safetensors", a)
np.save("g3pos.npy", np.array([0, 1, 2, 3, 40000, 40001, 40002, 40003], np.int32))
EOF
expect_ok "$POSENC" apply g3pre.safetensors --config g3.json --layout ggml --precision ggml \
    --positions g3pos.npy --seq-len 40192 -o g3rot.safetensors
# apply --gguf rotates each layer as llama.cpp does with the file, as apply from the config does
expect_ok "$POSENC" apply g3pre.safetensors --config g3.json --gguf g3.gguf --layout ggml \
    --precision ggml --positions g3pos.npy --seq-len 40192 -o g3rot_gguf.safetensors
for m in layers.0.q layers.0.k layers.5.q layers.5.k; do
    expect_ok "$POSENC" diff --max-ulp 0 g3rot.safetensors:$m g3rot_gguf.safetensors:$m
done
$PY - << 'EOF'
import json, struct
import numpy as np

def load(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    return {k: (v, b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
            for k, v in h.items() if k != "__metadata__"}

out, off, blobs = {}, 0, []
for side, path in (("pre", "g3pre.safetensors"), ("rope", "g3rot.safetensors")):
    for k, (v, raw) in load(path).items():
        out[f"{side}.{k}"] = {"dtype": v["dtype"], "shape": v["shape"],
                              "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
raw = np.load("g3pos.npy").tobytes()
out["positions"] = {"dtype": "I32", "shape": [8], "data_offsets": [off, off + len(raw)]}
blobs.append(raw)
h = json.dumps(out).encode()
h += b" " * ((8 - len(h) % 8) % 8)
open("g3cap.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
EOF
expect_ok "$POSENC" verify --config g3.json --gguf g3.gguf --q g3cap.safetensors --layout ggml \
    --seq-len 40192 --precision ggml --max-ulp 0
grep -q '^ok    gemma3.rope.freq_base_swa 10000' out.stdout || { cat out.stdout; exit 1; }
grep -q '^ok    pair layers.0 .*sliding_attention' out.stdout || { cat out.stdout; exit 1; }
grep -q '^ok    pair layers.5 .*full_attention' out.stdout || { cat out.stdout; exit 1; }
[ "$(grep -c '0 ulp at most from posenc.s ggml rotation, within --max-ulp 0' out.stdout)" -eq 4 ] ||
    { cat out.stdout; exit 1; }
grep -q '^result: PASS' out.stdout
# --rotated makes no sense for such a file
expect_fail 2 "holds the dumps before and after RoPE: --rotated does not apply" \
    "$POSENC" verify --config g3.json --q g3cap.safetensors --layout ggml --rotated
