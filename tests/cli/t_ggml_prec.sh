# t_ggml_prec.sh: --precision ggml on gen, apply, info and verify without llama.cpp itself (the
# values against real ggml are t_interop_ggml.sh): metadata and JSON carry llama.cpp's
# ggml_rope_ext arguments; a config the converter has no rule for is one line, exit 3, no
# output; verify compares llama.cpp-style dumps with ggml's rotation; usage errors exit 2.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
P="$POSENC"

# info: the arguments as llama.cpp's loader derives them from the converter's keys
expect_ok "$P" info --config "$C/gpt-oss-20b.json" --precision ggml --json
"$PY" - <<'PY'
import json, math
d = json.load(open("out.stdout"))
g = d["ggml"] if "ggml" in d else d["rope"]["ggml"]
assert g["mode"] == "neox" and g["n_dims"] == 64 and g["n_ctx_orig"] == 4096, g
assert g["freq_base"] == 150000 and g["freq_scale"] == 0.03125 and g["ext_factor"] == 1, g
# ggml's magnitude: attn_factor * (1 + 0.1 ln 32) = transformers' yarn attention factor
assert abs(g["mscale"] - (1 + 0.1 * math.log(32))) < 1e-6, g
PY
expect_ok "$P" info --config "$C/llama-3.1-8b.json" --precision ggml
grep -q '^ggml_note .*permuted Q/K' out.stdout
grep -q '^inv_freq  *(64, ggml) 1 ' out.stdout

# gen: ggml tables, with the arguments in the metadata
expect_ok "$P" gen --config "$C/qwen3-8b.json" --precision ggml --positions 0-7,131072 -o t.npz
"$PY" - <<'PY'
import json, numpy as np
z = np.load("t.npz")
m = json.loads(z["meta.json"])
assert m["precision"] == "ggml" and m["ggml"]["mode"] == "neox" and m["ggml"]["freq_base"] == 1e6, m
assert any("ggml" in n for n in m["notes"]), m["notes"]
c, s = z["cos"].astype(np.float64), z["sin"].astype(np.float64)
# frequency 0 is the position itself: cosf/sinf of it
assert c[1, 0] == np.float32(np.cos(1.0)) and s[7, 0] == np.float32(np.sin(7.0))
# the float32 accumulation drifts from the exact values, by a few e-3 at 131072
inv = 1e6 ** (-np.arange(64) / 64.0)
e = np.abs(c[8, :64] - np.cos(131072 * inv)).max()
assert 1e-4 < e < 5e-2, e
PY

# info --runtimes: ggml's drift is max |gen --precision ggml - gen --precision exact| (f64 tables,
# positions 4095, 131071 and 1048575 one at a time: their own context lengths)
expect_ok "$P" info --runtimes --config "$C/qwen3-8b.json" --json
cp out.stdout rt.json
for p in 4095 131071 1048575; do
    expect_ok "$P" gen --config "$C/qwen3-8b.json" --precision ggml --dtype f64 --positions $p -o g$p.npz
    expect_ok "$P" gen --config "$C/qwen3-8b.json" --precision exact --dtype f64 --positions $p -o x$p.npz
done
"$PY" - <<'PY'
import json, numpy as np
d = json.load(open("rt.json"))["drift"]
for k, p in enumerate(d["positions"]):
    g, x = np.load("g%d.npz" % p), np.load("x%d.npz" % p)
    want = max(np.abs(g["cos"] - x["cos"]).max(), np.abs(g["sin"] - x["sin"]).max())
    assert abs(d["ggml"][k] - want) <= 1e-15 * want, (p, d["ggml"][k], want)  # JSON, 1 ulp
assert 1e-5 < d["ggml"][0] < d["ggml"][1] < d["ggml"][2] < 0.2, d["ggml"]
PY
# Qwen2-VL: Qwen2VLModel (registered for Qwen2VLForConditionalGeneration) converts it
expect_ok "$P" info --runtimes --config "$C/extra/qwen2-vl-7b.json" --json
"$PY" -c "
import json; d = json.load(open('out.stdout'))['drift']
assert all(isinstance(v, float) for v in d['ggml']) and 'ggml_note' not in d, d"
# an architecture the converter writes whose rules posenc has not read: one line naming it
expect_ok "$P" info --runtimes --config "$C/gemma-4-26b-a4b.json" --layer-type full_attention --json
"$PY" -c "
import json; d = json.load(open('out.stdout'))['drift']
assert d['ggml'] == ['not reproduced'] * 3, d
assert d['ggml_note'].startswith('llama.cpp: posenc has no rules for architecture gemma4'), d"
expect_fail 3 "--precision ggml: llama.cpp: posenc has no rules for architecture gemma4" \
    "$P" gen --config "$C/gemma-4-26b-a4b.json" --layer-type full_attention --precision ggml --seq-len 4 \
    -o no.npz
[ "$(wc -l < out.stderr)" -eq 1 ]
no_file no.npz

# a model llama.cpp's converter has no class for: one line, exit 3, nothing written
expect_fail 3 "--precision ggml: model_type 'gptj': convert_hf_to_gguf.py has no class for it" \
    "$P" gen --config "$C/gpt-j-6b.json" --precision ggml --seq-len 4 -o no.npz
[ "$(wc -l < out.stderr)" -eq 1 ]
no_file no.npz
expect_fail 3 "--precision ggml" "$P" info --config "$C/gpt-j-6b.json" --precision ggml
test ! -s out.stdout

# llama.cpp's positions are int32
expect_fail 3 "past llama.cpp's int32 positions" "$P" gen --config "$C/qwen3-8b.json" \
    --precision ggml --positions 2147483648 -o big.npz
no_file big.npz

# apply, then verify the llama.cpp-style dump against ggml's rotation
"$PY" - <<'PY'
import numpy as np
r = np.random.default_rng(5)
np.save("q.npy", r.standard_normal((1, 4, 16, 128)).astype(np.float32))
np.save("k.npy", r.standard_normal((1, 2, 16, 128)).astype(np.float32))
PY
expect_ok "$P" apply q.npy k.npy --config "$C/llama-3.1-8b.json" --precision ggml --offset 131000 -o g.npz
expect_ok "$P" apply q.npy k.npy --config "$C/llama-3.1-8b.json" --precision exact --offset 131000 -o x.npz
"$PY" - <<'PY'
import json, numpy as np
g, x = np.load("g.npz"), np.load("x.npz")
m = json.loads(g["meta.json"])
assert m["posenc_apply_precision"] == "ggml", m
d = np.abs(g["q"].astype(np.float64) - x["q"]).max()
assert 1e-5 < d < 0.5, d          # ggml is not exact at 131000
PY
"$P" convert g.npz:q gq.npy
"$P" convert g.npz:k gk.npy
expect_ok "$P" verify --config "$C/llama-3.1-8b.json" --q q.npy --k k.npy --offset 131000 \
    --expect-q gq.npy --expect-k gk.npy --precision ggml --report v.json -q
"$PY" -c "
import json; d = json.load(open('v.json')); assert d['ok'] is True
assert d['inputs']['precision'] == 'ggml' and d['inputs']['ggml']['mode'] == 'norm', d['inputs']"

# and tells them apart: the exact rotation is not llama.cpp's at 131000, nor ggml's transformers'
"$P" convert x.npz:q xq.npy
"$P" convert x.npz:k xk.npy
set +e
"$P" verify --config "$C/llama-3.1-8b.json" --q q.npy --k k.npy --offset 131000 \
    --expect-q xq.npy --expect-k xk.npy --precision ggml -q; rc1=$?
"$P" verify --config "$C/llama-3.1-8b.json" --q q.npy --k k.npy --offset 131000 \
    --expect-q gq.npy --expect-k gk.npy --precision hf -q; rc2=$?
# without --precision verify names the runtime the dump matches (t_verify_runtime) and passes it
"$P" verify --config "$C/llama-3.1-8b.json" --q q.npy --k k.npy --offset 131000 \
    --expect-q gq.npy --expect-k gk.npy -q; rc4=$?
set -e
[ "$rc1" -eq 1 ] && [ "$rc2" -eq 1 ] && [ "$rc4" -eq 0 ]
# verify --precision vllm: vLLM's rotation passes its own dump and tells ggml's apart
expect_ok "$P" apply q.npy k.npy --config "$C/llama-3.1-8b.json" --precision vllm --offset 131000 -o v.npz
"$P" convert v.npz:q vq.npy
"$P" convert v.npz:k vk.npy
expect_ok "$P" verify --config "$C/llama-3.1-8b.json" --q q.npy --k k.npy --offset 131000 \
    --expect-q vq.npy --expect-k vk.npy --precision vllm -q
set +e
"$P" verify --config "$C/llama-3.1-8b.json" --q q.npy --k k.npy --offset 131000 \
    --expect-q gq.npy --expect-k gk.npy --precision vllm -q; rc3=$?
set -e
[ "$rc3" -eq 1 ]

# usage errors
expect_fail 2 "--precision: unknown precision 'gguf' (expected exact, hf, vllm or ggml)" \
    "$P" gen --config "$C/qwen3-8b.json" --precision gguf -o t2.npz
expect_fail 2 "--precision needs --expect-q/--expect-k" \
    "$P" verify --config "$C/qwen3-8b.json" --precision ggml

# --n-ctx: llama.cpp picks LongRoPE's factors by its context, not by the positions
# (src/llama-model.cpp get_rope_factors: long when n_ctx_seq > n_ctx_orig_yarn, 4096 for
# Phi-3-mini-128k; src/llama-context.cpp pads n_ctx to 256)
PHI="$C/extra/phi-3-mini-128k.json"
expect_ok "$P" gen --config "$PHI" --precision ggml --positions 0-3,131000 --n-ctx 512 -o n512.npz
expect_ok "$P" gen --config "$PHI" --precision ggml --positions 0-3,131000 -o nnone.npz
expect_ok "$P" gen --config "$PHI" --precision ggml --seq-len 4096 -o s4096.npz
expect_ok "$P" gen --config "$PHI" --precision ggml --positions 0-3,131000 --n-ctx 4097 -o n4097.npz
"$PY" - <<'PY'
import json, numpy as np
a, b, s, l = (np.load(f) for f in ("n512.npz", "nnone.npz", "s4096.npz", "n4097.npz"))
# n_ctx 512: the short factors, the same angles as a 4096-token context
assert np.array_equal(a["cos"][:4], s["cos"][:4]) and np.array_equal(a["sin"][:4], s["sin"][:4])
# without --n-ctx the context is the largest position + 1: long factors; 4097 is past 4096 too
assert not np.array_equal(a["cos"][1], b["cos"][1]) and np.array_equal(b["cos"], l["cos"])
ma, mb = json.loads(a["meta.json"]), json.loads(b["meta.json"])
assert ma["ggml"]["freq_factors"] != mb["ggml"]["freq_factors"], (ma["ggml"], mb["ggml"])
PY
# dumps llama.cpp rotated at n_ctx 512 (here posenc's ggml numerics; the real ggml is
# t_interop_ggml.sh) at positions past 131000: verify names llama.cpp with --n-ctx 512, and
# without it (long factors, as the positions imply) they fail
"$PY" -c "
import numpy as np
rng = np.random.default_rng(7)
np.save('pq.npy', rng.standard_normal((1, 4, 8, 96)).astype(np.float32))"
expect_ok "$P" apply pq.npy pq.npy --config "$PHI" --precision ggml --n-ctx 512 --offset 131000 -o pr.npz
"$PY" -c "
import numpy as np; z = np.load('pr.npz'); names = sorted(n for n in z.files if n != 'meta.json')
assert len(names) == 2, z.files
np.save('prq.npy', z[names[0]]); np.save('prk.npy', z[names[1]])"
expect_ok "$P" verify --config "$PHI" --q pq.npy --k pq.npy --expect-q prq.npy --expect-k prk.npy \
    --offset 131000 --n-ctx 512
grep -q 'ggml profile (llama.cpp)' out.stdout || { cat out.stdout; exit 1; }
expect_ok "$P" verify --config "$PHI" --q pq.npy --k pq.npy --expect-q prq.npy --expect-k prk.npy \
    --offset 131000 --n-ctx 512 --precision ggml --max-ulp 0
set +e
"$P" verify --config "$PHI" --q pq.npy --k pq.npy --expect-q prq.npy --expect-k prk.npy \
    --offset 131000 > out.stdout 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "without --n-ctx: exit $rc"; cat out.stdout; exit 1; }
expect_fail 2 "--n-ctx applies only to --precision ggml" "$P" gen --config "$PHI" --n-ctx 512 \
    --seq-len 4 -o x.npz
expect_fail 2 "--n-ctx applies only to --precision ggml" "$P" apply pq.npy --config "$PHI" \
    --n-ctx 512 -o x.npy
expect_fail 2 "--n-ctx" "$P" gen --config "$PHI" --precision ggml --n-ctx 0 --seq-len 4 -o x.npz
