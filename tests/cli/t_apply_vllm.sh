# posenc apply --precision vllm: RotaryEmbedding.forward_native with the cache cast to the model
# dtype, bit for bit against the port in tests/golden/make_vllm_golden.py: Qwen3.5 (bf16, 64 of
# 256 dims rotated, positions to 2^20 - 1, and 3-axis mrope positions), Llama-3.1 (bf16), gpt-oss
# (f32), Llama-2 shape (f16).
. "$SRC/tests/cli/lib.sh"
cat > llama2.json <<'JSON'
{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
 "max_position_embeddings": 4096, "rope_theta": 10000.0}
JSON
"$PY" - <<'PYEOF'
import json, os, subprocess
import numpy as np

D = os.environ["DATA"]
G = np.load(os.path.join(D, "golden", "vllm_cache.npz"))
meta = json.loads(bytes(G["meta"]).decode())
n = 0
for name, m in sorted(meta.items()):
    if "apply_dtype" not in m:
        continue
    dt = m["apply_dtype"]
    cfg = os.path.join(D, "configs", m["config"]) if m["config"] else "llama2.json"
    q = G["apply_%s_q" % name]
    np.save("q.npy", q.view({"bfloat16": "V2", "float16": "<f2", "float32": "<f4"}[dt]))
    np.save("p.npy", G["apply_%s_positions" % name])
    args = [os.environ["POSENC"], "apply", "q.npy", "--config", cfg, "--precision", "vllm",
            "--layout", "shd", "--positions", "p.npy", "-o", "o.npy"]
    if dt == "bfloat16":
        args.append("--assume-bf16")
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, (name, r.stderr)
    got = np.load("o.npy")
    got = got.view(np.uint32 if dt == "float32" else np.uint16)
    want = G["apply_%s_out" % name]
    assert got.shape == want.shape, (name, got.shape, want.shape)
    nd = int((got != want).sum())
    assert nd == 0, (name, dt, nd, "elements differ from vLLM's forward_native")
    n += 1
assert n == 4, n

# Qwen3.5 with (t, h, w) positions [3, seq]: MRotaryEmbedding's interleaved sections
np.save("q.npy", G["apply3_qwen35_q"].view("V2"))
np.save("p.npy", G["apply3_qwen35_positions"])
r = subprocess.run([os.environ["POSENC"], "apply", "q.npy", "--config",
                    os.path.join(D, "configs", "qwen3.5-27b.json"), "--precision", "vllm",
                    "--layout", "shd", "--positions", "p.npy", "--assume-bf16", "-o", "o.npy"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr
got = np.load("o.npy").view(np.uint16)
assert (got == G["apply3_qwen35_out"]).all(), int((got != G["apply3_qwen35_out"]).sum())
PYEOF
"$PY" -c "import numpy as np; np.save('q.npy', np.ones((2, 1, 64), np.float32)); np.save('p.npy', np.array([0, 131072]))"
expect_fail 3 "position 131072 is past vLLM's cos_sin_cache (YaRNScalingRotaryEmbedding: 131072 rows)" \
    "$POSENC" apply q.npy --config "$DATA/configs/gpt-oss-20b.json" --precision vllm --layout shd \
    --positions p.npy -o out.npy
expect_fail 2 "--max-model-len applies only to --precision vllm" \
    "$POSENC" apply q.npy --config llama2.json --max-model-len 10 --layout shd -o out.npy
no_file out.npy
