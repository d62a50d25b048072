# posenc info --runtimes: the table of differences in definition (every row names a source for
# each runtime), each precision's drift from exact math, checked for Qwen3.5 against mpmath on the
# golden vLLM cache rows; info --precision vllm reports vLLM's class, cache and mscale.
. "$SRC/tests/cli/lib.sh"
D="$DATA/configs"
expect_ok "$POSENC" info --runtimes
grep -q '^yarn_truncate$' out.stdout
grep -q '^  llama.cpp    always floorf/ceilf (ggml/src/ggml.c ggml_rope_yarn_corr_dims)$' out.stdout
expect_ok "$POSENC" info --runtimes --json
mv out.stdout rt.json
expect_ok "$POSENC" info --runtimes --config "$D/qwen3.5-27b.json" --json
mv out.stdout qwen.json
expect_ok "$POSENC" info --runtimes --config "$D/llama-3.1-8b.json" --json
mv out.stdout llama.json
expect_ok "$POSENC" info --config "$D/gpt-oss-20b.json" --precision vllm --json
mv out.stdout goss.json
expect_ok "$POSENC" info --runtimes --config "$D/gpt-oss-20b.json" --json
mv out.stdout gossrt.json
expect_ok "$POSENC" info --runtimes --config "$D/gpt-oss-20b.json"
grep -q '^vllm: vllm-project/vllm, .*get_rope @ 0cd57848' out.stdout
grep -q '^yarn_truncate$' out.stdout
if grep -q '^dynamic_ntk$\|^longrope_selection$\|^llama3$\|^linear$' out.stdout; then
    echo "rows that do not apply to gpt-oss"; exit 1; fi
expect_ok "$POSENC" info --runtimes --config "$D/extra/longchat-7b-16k-linear.json"
grep -q '^linear$' out.stdout
grep -q 'freq_scale = 1 / factor' out.stdout
if grep -q '^yarn_truncate$' out.stdout; then echo "yarn row on a linear config"; exit 1; fi
expect_ok "$POSENC" info --config "$D/extra/phi-3-mini-128k.json" --precision vllm --max-model-len 4096 --json
mv out.stdout phi.json
expect_ok "$POSENC" info --config "$D/extra/llama-dynamic.json" --precision vllm
grep -q '^vllm_class          DynamicNTKScalingRotaryEmbedding (vllm/model_executor/layers/rotary_embedding/dynamic_ntk_scaling_rope.py @ 50feac95)$' out.stdout
grep -q '^vllm_cache          8192 rows for positions 0..8191$' out.stdout

"$PY" - <<'PYEOF'
import json, os
import mpmath as mp
import numpy as np

rt = json.load(open("rt.json"))["runtimes"]
topics = [r["topic"] for r in rt]
for t in ("yarn_truncate", "attention_factor", "softmax_scale", "dynamic_ntk", "longrope_selection",
          "llama3", "mrope", "partial_rotary", "cache_dtype", "cache_length"):
    assert t in topics, t
for r in rt:
    assert all(r[k] for k in ("transformers", "vllm", "llamacpp")), r
    assert "/work" not in json.dumps(r), r

# Qwen3.5: vllm drift at 4095, 131071, 1048575 = max |golden cache row - exact| (mpmath)
q = json.load(open("qwen.json"))["drift"]
assert q["positions"] == [4095, 131071, 1048575], q
assert all(isinstance(v, float) for v in q["ggml"]), q  # values: t_ggml_prec.sh
G = np.load(os.path.join(os.environ["DATA"], "golden", "vllm_cache.npz"))
pos = list(G["qwen35_positions"])
rows = G["qwen35_f32"].view(np.float32).astype(np.float64)
mp.mp.prec = 120
for k, p in enumerate(q["positions"]):
    row = rows[pos.index(p)]
    worst = 0.0
    for i in range(32):
        a = mp.mpf(p) * mp.power(mp.mpf(10) ** 7, mp.mpf(-2 * i) / 64)
        worst = max(worst, abs(float(mp.cos(a)) - row[i]), abs(float(mp.sin(a)) - row[32 + i]))
    assert abs(q["vllm"][k] - worst) <= 1e-15, (p, q["vllm"][k], worst)
    # transformers' float32 pipeline is the same arithmetic on this config
    assert q["hf"][k] == q["vllm"][k], (p, q["hf"][k], q["vllm"][k])
assert 1e-3 < q["vllm"][2] < 0.1, q

# Llama-3.1: vLLM's cache holds 131072 rows, so the 1M column is refused, not guessed
l = json.load(open("llama.json"))["drift"]
assert l["vllm"][2] == "past the cache" and isinstance(l["hf"][2], float), l
assert l["vllm"][:2] == l["hf"][:2], l

# gpt-oss: llama.cpp ignores truncate false; against its own definition it drifts by rounding
# only, against transformers' by the definition difference (cos and sin times mscale 1.35)
d = json.load(open("gossrt.json"))["drift"]
assert d["ggml"][0] < 1e-3 and d["ggml"][1] < 1e-2, d
assert d["ggml_vs_hf"][0] > 0.5 and d["ggml_vs_hf"][1] > 2.0, d
assert d["vllm_vs_hf"][:2] == d["vllm"][:2], d  # vLLM honours truncate: the same definition
assert "vllm-project/vllm" in json.load(open("gossrt.json"))["vllm_commits"]
topics = [r["topic"] for r in json.load(open("gossrt.json"))["runtimes"]]
assert "yarn_truncate" in topics and "dynamic_ntk" not in topics, topics
g = json.load(open("goss.json"))
assert g["precision"] == "vllm" and g["vllm"]["class"] == "YaRNScalingRotaryEmbedding", g["vllm"]
assert g["vllm"]["cache_len"] == 131072 and g["vllm"]["truncate"] is False, g["vllm"]
assert abs(float(g["attention_scaling"]) - (0.1 * np.log(32) + 1)) < 1e-7, g["attention_scaling"]
p = json.load(open("phi.json"))
assert p["vllm"]["long_factors"] is False and p["vllm"]["cache_len"] == 4096, p["vllm"]
assert p["vllm"]["max_model_len"] == 4096 and p["vllm"]["cache_rows"] == 4096 + 131072, p["vllm"]
PYEOF

expect_fail 2 "--runtimes takes only" "$POSENC" info --runtimes --seq-len 10
expect_fail 2 "--runtimes takes only" "$POSENC" info --runtimes --precision vllm
expect_fail 2 "--max-model-len applies only to --precision vllm" \
    "$POSENC" info --config "$D/qwen3-8b.json" --max-model-len 10
# linear scaling: vLLM's LinearScalingRotaryEmbedding, max_position * factor cache rows
expect_ok "$POSENC" info --config "$D/extra/longchat-7b-16k-linear.json" --precision vllm
grep -q '^vllm_class  *LinearScalingRotaryEmbedding' out.stdout
grep -q '^vllm_cache  *131072 rows' out.stdout
# Gemma 4's full layers: Gemma4RotaryEmbedding, max_position_embeddings rows
expect_ok "$POSENC" info --config "$D/gemma-4-26b-a4b.json" --layer-type full_attention --precision vllm
grep -q '^vllm_class  *Gemma4RotaryEmbedding' out.stdout
grep -q '^vllm_cache  *262144 rows' out.stdout
