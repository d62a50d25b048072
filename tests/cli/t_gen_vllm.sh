# posenc gen --precision vllm: vLLM's cos_sin_cache, bit for bit against the torch port of vLLM's
# rotary classes in tests/golden/make_vllm_golden.py (tests/data/golden/vllm_cache.npz): default
# (the Llama-2-7B shape), llama3 (Llama-3.1-8B), yarn (gpt-oss-20b, truncate false), DeepSeek-V3
# (deepseek_yarn), Qwen3.5 (partial rotary 64 of 256, mrope, 4 x 262144 cache rows: positions up
# to 2^20 - 1), Phi-3 LongRoPE with short and long factors, dynamic NTK, linear (Gemma 3 global
# layers: factor 8, 2^20 cache rows; and factor 3, where vLLM divides the positions), Gemma 4's
# full-attention layers (Gemma4RotaryEmbedding: proportional, 64 of 256 frequencies over
# global_head_dim 512, the rest zero), Qwen2-VL with YaRN (MRotaryEmbedding with scaling_factor:
# the correction range over 4 * original_max_position_embeddings, 4 * 32768 * 4 cache rows);
# float32 and bfloat16.
. "$SRC/tests/cli/lib.sh"
cat > llama2.json <<'JSON'
{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
 "max_position_embeddings": 4096, "rope_theta": 10000.0}
JSON

"$PY" - <<'PYEOF'
import json, os, subprocess, zipfile
import numpy as np

G = np.load(os.path.join(os.environ["DATA"], "golden", "vllm_cache.npz"))
meta = json.loads(bytes(G["meta"]).decode())
assert len(meta) == 12, sorted(meta)
posenc = os.environ["POSENC"]

def gen(args, out):
    r = subprocess.run([posenc, "gen"] + args + ["-o", out], capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stderr)
    with zipfile.ZipFile(out) as z:
        m = json.loads(z.read("meta.json"))
    return np.load(out), m

for name, m in sorted(meta.items()):
    cfg = os.path.join(os.environ["DATA"], "configs", m["config"]) if m["config"] else "llama2.json"
    pos = G[name + "_positions"]
    # Gemma 3's global layers: the full_attention layer type
    lt = ["--layer-type", "full_attention"] if name in ("gemma3_global", "gemma4_full") else []
    args = lt + ["--config", cfg, "--precision", "vllm", "--table-layout", "vllm",
            "--positions", ",".join(str(p) for p in pos)]
    if m["max_model_len"]:
        args += ["--max-model-len", str(m["max_model_len"])]
    for dt, bits in (("f32", np.uint32), ("bf16", np.uint16)):
        z, mt = gen(args + ["--dtype", dt], "%s-%s.npz" % (name, dt))
        got = z["cos_sin_cache"].view(bits)
        want = G[name + "_" + dt]
        assert got.shape == want.shape, (name, dt, got.shape, want.shape)
        nd = int((got != want).sum())
        assert nd == 0, (name, dt, nd, "elements differ from the vLLM port")
        assert mt["vllm_class"] == m["cls"], (name, mt["vllm_class"], m["cls"])
        assert mt["vllm_cache_len"] == m["cache_len"], (name, mt["vllm_cache_len"], m["cache_len"])
        assert mt["vllm_mscale"] == m["mscale"], (name, mt["vllm_mscale"], m["mscale"])
        assert mt["vllm_base"] == m["base"], (name, mt["vllm_base"], m["base"])
        assert "cos" not in z.files and "sin" not in z.files, z.files
        if dt == "f32":
            inv = z["inv_freq"].view(np.uint32)
            assert (inv == G[name + "_inv_freq"]).all(), (name, "inv_freq")
    print("ok", name, m["cls"], got.shape)

# the other layouts carry the same values: hf = cat(cos, cos), half = cos alone
for name in ("qwen35", "phi3_long"):
    m = meta[name]
    cfg = os.path.join(os.environ["DATA"], "configs", m["config"])
    pos = G[name + "_positions"]
    mml = ["--max-model-len", str(m["max_model_len"])] if m["max_model_len"] else []
    z, _ = gen(["--config", cfg, "--precision", "vllm", "--positions",
                ",".join(str(p) for p in pos)] + mml, name + "-hf.npz")
    want = G[name + "_f32"].view(np.float32)
    n = want.shape[1] // 2
    assert (z["cos"] == np.concatenate([want[:, :n], want[:, :n]], 1)).all(), name
    assert (z["sin"] == np.concatenate([want[:, n:], want[:, n:]], 1)).all(), name

# LongRoPE without --max-model-len: vLLM's default max_model_len is
# original_max_position_embeddings (vllm/config/model_arch.py MaxModelLenInfo), so the short
# factors and a 4096-row cache, as phi3_short
phi = os.path.join(os.environ["DATA"], "configs", "extra", "phi-3-mini-128k.json")
z, mt = gen(["--config", phi, "--precision", "vllm", "--table-layout", "vllm", "--positions",
             ",".join(str(p) for p in G["phi3_short_positions"])], "phi-default.npz")
assert mt["vllm_cache_len"] == 4096 and any("max_model_len 4096" in n for n in mt["notes"]), mt
assert (z["cos_sin_cache"].view(np.uint32) == G["phi3_short_f32"]).all()

# without --positions or --seq-len the rows are the whole cache, as vLLM allocates it
z, mt = gen(["--config", "llama2.json", "--precision", "vllm", "--table-layout", "vllm"], "full.npz")
assert z["cos_sin_cache"].shape == (4096, 128), z["cos_sin_cache"].shape
sel = G["llama2_positions"]
assert (z["cos_sin_cache"][sel].view(np.uint32) == G["llama2_f32"]).all()
cfg = os.path.join(os.environ["DATA"], "configs", "extra", "llama-dynamic.json")
z, mt = gen(["--config", cfg, "--precision", "vllm", "--array", "cos_sin_cache", "--table-layout",
             "vllm"], "dyn.npz")
assert z["cos_sin_cache"].shape == (8192, 128) and mt["last_position"] == 8191
PYEOF

# errors: one line, the right exit status, nothing written
D="$DATA/configs"
expect_fail 3 "position 131072 is past vLLM's cos_sin_cache (YaRNScalingRotaryEmbedding: 131072 rows)" \
    "$POSENC" gen --config "$D/gpt-oss-20b.json" --precision vllm --positions 0,131072 -o x.npz
no_file x.npz
expect_fail 3 "position 4096 is past vLLM's cos_sin_cache (Phi3LongRoPEScaledRotaryEmbedding: 4096 rows)" \
    "$POSENC" gen --config "$D/extra/phi-3-mini-128k.json" --precision vllm --max-model-len 4096 \
    --seq-len 4097 -o x.npz
# MRotaryEmbedding with yarn: what the vLLM version posenc follows takes no attention_factor
sed 's/"factor": 4.0,/"factor": 4.0, "attention_factor": 1.2,/' "$D/extra/qwen2-vl-7b-yarn.json" > vlaf.json
expect_fail 3 "vllm: rope_type yarn with mrope_section and attention_factor uses a vLLM MRotaryEmbedding posenc does not reproduce" \
    "$POSENC" gen --config vlaf.json --precision vllm -o x.npz
expect_fail 3 "position 524288 is past vLLM's cos_sin_cache (MRotaryEmbedding: 524288 rows)" \
    "$POSENC" gen --config "$D/extra/qwen2-vl-7b-yarn.json" --precision vllm --positions 524288 -o x.npz
expect_fail 2 "--max-model-len applies only to --precision vllm" \
    "$POSENC" gen --config llama2.json --max-model-len 100 -o x.npz
expect_fail 2 "--array: 'cos' is not an array of a RoPE table with --table-layout vllm" \
    "$POSENC" gen --config llama2.json --precision vllm --table-layout vllm --array cos -o x.npy
expect_fail 2 "--max-model-len" "$POSENC" gen --config llama2.json --precision vllm --max-model-len 0 -o x.npz
expect_fail 2 "unknown precision 'vlm' (expected exact, hf, vllm or ggml)" \
    "$POSENC" gen --config llama2.json --precision vlm -o x.npz
no_file x.npz x.npy
