# The README's examples, run as written on bundled configs (config.json = Llama 3.1, and so on).
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
cp "$C/llama-3.1-8b.json" config.json
cp "$C/gemma-3-27b-it.json" gemma3.json
cp "$C/extra/phi-3-mini-128k.json" phi3.json
cp "$C/bias/bloom-560m.json" bloom.json
cp "$C/bias/t5-small.json" t5.json
P="$POSENC"
expect_ok "$P" info --config config.json
grep -q llama3 out.stdout
expect_ok "$P" info --config gemma3.json --json
"$PY" -c "import json; d=json.load(open('out.stdout')); assert set(d['layers']) == {'full_attention', 'sliding_attention'}"
expect_ok "$P" info --config gemma3.json --layer-type sliding_attention
expect_ok "$P" info --config phi3.json --seq-len 8192
expect_ok "$P" info --config phi3.json --precision vllm --max-model-len 4096
grep -q '^vllm_class          Phi3LongRoPEScaledRotaryEmbedding' out.stdout
expect_ok "$P" info --runtimes --config config.json
grep -q '^drift (max |cos, sin error|) from exact math, and from transformers' out.stdout
expect_ok "$P" gen --config config.json --precision vllm --table-layout vllm --dtype bf16 -o cache.npz
"$PY" -c "import numpy as np; assert np.load('cache.npz')['cos_sin_cache'].shape == (131072, 128)"
expect_ok "$P" info --config config.json --precision ggml
grep -q '^ggml_rope_ext  *mode norm, n_dims 128, n_ctx_orig 131072, freq_base 500000' out.stdout
expect_ok "$P" gen --config config.json -o rope.npz --seq-len 4096
expect_ok "$P" gen --config config.json -o rope.safetensors --dtype bf16 --table-layout half --seq-len 512
expect_ok "$P" gen --config config.json -o rope.h --seq-len 64
expect_ok "$P" gen --config config.json -o rope.gguf --seq-len 4096
expect_ok "$P" ls --meta rope.gguf
grep -q '^general.architecture  *string  *"llama"$' out.stdout
expect_ok "$P" gen --config config.json --positions 0,1,131071 --array cos -o cos3.npy
"$P" gen --config config.json --positions 0,1,131071 --array cos -o - > cos.npy
cmp cos.npy cos3.npy
expect_ok "$P" gen --config config.json --precision ggml -o rope-llamacpp.npz --seq-len 4096
expect_ok "$P" gen --config bloom.json -o alibi.npz --seq-len 128
# T5 bias with weights: a [num_buckets, heads] table written as safetensors by numpy
"$PY" - <<'PY'
import json, struct, numpy as np
w = np.random.default_rng(0).standard_normal((32, 8)).astype(np.float32)
name = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
hdr = json.dumps({name: {"dtype": "F32", "shape": [32, 8], "data_offsets": [0, w.nbytes]}}).encode()
hdr += b" " * (-len(hdr) % 8)
open("model.safetensors", "wb").write(struct.pack("<Q", len(hdr)) + hdr + w.tobytes())
PY
expect_ok "$P" gen --config t5.json -o t5.npz --seq-len 64 --weights model.safetensors
expect_ok "$P" gen --encoding sinusoidal --variant fairseq --d-model 512 --seq-len 1024 -o pe.npz
# apply and verify on dumps made here
"$PY" - <<'PY'
import numpy as np
r = np.random.default_rng(1)
np.save("q.npy", r.standard_normal((1, 32, 16, 128)).astype(np.float32))
np.save("k.npy", r.standard_normal((1, 8, 16, 128)).astype(np.float32))
np.save("qs.npy", r.standard_normal((1, 16, 32, 128)).astype(np.float32))
PY
expect_ok "$P" apply q.npy k.npy --config config.json -o rotated.npz
expect_ok "$P" apply qs.npy --config config.json -o q_rot.npy --offset 4096 --layout bshd
expect_ok "$P" apply q.npy --config config.json
test -s q.rope.npy
"$P" apply - --config config.json -o - < q.npy > q_rot_pipe.npy
"$P" convert rotated.npz:q q_from_npz.npy
cmp q_rot_pipe.npy q_from_npz.npy
expect_ok "$P" apply q.npy --config config.json --precision ggml -o q_llamacpp.npy
# every layer's pairs in one file (HDF5 groups for Gemma 3, flat safetensors names)
"$PY" - <<'PY'
import json, struct, h5py, numpy as np
r = np.random.default_rng(2)
with h5py.File("layers.h5", "w") as f:
    for i in range(6):
        f[f"/layer{i}/q"] = r.standard_normal((1, 4, 8, 128)).astype(np.float32)
        f[f"/layer{i}/k"] = r.standard_normal((1, 2, 8, 128)).astype(np.float32)
hdr, blobs, off = {}, [], 0
for i in range(12):
    for n in "qk":
        a = r.standard_normal((1, 2, 8, 128)).astype(np.float32)
        hdr[f"layers.{i}.{n}"] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes()); off += a.nbytes
h = json.dumps(hdr).encode(); h += b" " * (-len(h) % 8)
open("layers.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
PY
cp config.json c.json
expect_ok "$P" apply layers.h5 --config gemma3.json -o layers_rot.h5
"$PY" -c "
import json, h5py
f = h5py.File('layers_rot.h5', 'r')
assert sorted(f) == ['layer%d' % i for i in range(6)] and f['layer5/k'].shape == (1, 2, 8, 128)
assert json.loads(f.attrs['posenc_apply_layers'])['/layer5'] == 'full_attention'"
expect_ok "$P" apply layers.safetensors --config c.json --pairs 'layers.1*'
"$P" ls layers.rope.safetensors | grep -c '^layers\.1' | grep -qx 6
expect_ok "$P" verify --config gemma3.json --q layers.h5 --expect-q layers_rot.h5 --report layers.json
"$PY" -c "import json; d=json.load(open('layers.json')); assert d['ok'] and len(d['pairs']) == 6"
expect_ok "$P" verify --config config.json --report verify.html --max-position 65536
test -s verify.html
"$P" convert rotated.npz:q runtime_q.npy
"$P" convert rotated.npz:k runtime_k.npy
expect_ok "$P" verify --config config.json --q q.npy --k k.npy \
    --expect-q runtime_q.npy --expect-k runtime_k.npy --report verify.json
"$PY" -c "import json; d=json.load(open('verify.json')); assert d['ok'] is True"
"$P" verify --config config.json --q q.npy --k k.npy \
    --expect-q runtime_q.npy --expect-k runtime_k.npy --report - | gzip > verify.json.gz
"$PY" -c "import gzip, json; assert json.load(gzip.open('verify.json.gz')) == json.load(open('verify.json'))"
expect_ok "$P" verify --config config.json --q q.npy --k k.npy \
    --expect-q runtime_q.npy --expect-k runtime_k.npy --report verify.json --report verify.md -q
test ! -s out.stdout
expect_ok "$P" ls rope.npz
expect_ok "$P" convert rotated.npz:q q.h5
expect_ok "$P" convert rope.npz rope2.safetensors --dtype bf16
# diff: the runtime's copy is the same array; a bf16 copy is 0 ulp of bf16 from the f32 table
expect_ok "$P" diff runtime_q.npy rotated.npz:q
grep -q '^result: ok' out.stdout
expect_ok "$P" diff --layout bhsd --top 10 runtime_q.npy rotated.npz:q
grep -q '^  0-15 ' out.stdout
"$P" convert rope.npz rope_bf16.safetensors --dtype bf16
expect_ok "$P" diff rope_bf16.safetensors:cos rope.npz:cos --max-ulp 0 --dtype bf16
"$PY" -c "
import numpy as np
np.save('a.npy', np.ones((4, 3), np.float32))
import h5py
with h5py.File('b.h5', 'w') as f: f['x'] = np.ones((4, 3), np.float32) + 1e-4"
expect_ok "$P" diff --atol 1e-3 --rtol 0 --json a.npy b.h5:/x
"$PY" -c "import json; d = json.load(open('out.stdout')); assert d['pass'] is True and d['differ'] == 12"
