# posenc gen with scaled RoPE types, exact precision: dynamic and longrope depend on the sequence
# length L = max(position) + 1 (--seq-len N gives L = N; the default table L =
# max_position_embeddings), llama3, yarn (attention scaling in the tables) and linear, all
# against long double closed forms written here from the papers/transformers formulas.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
C="$DATA/configs"
cat > dyn.json <<'EOF'
{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
 "max_position_embeddings": 32, "rope_theta": 10000.0,
 "rope_scaling": {"type": "dynamic", "factor": 2.0}}
EOF
cat > longrope.json <<'EOF'
{"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 4,
 "max_position_embeddings": 64, "original_max_position_embeddings": 16, "rope_theta": 10000.0,
 "rope_scaling": {"type": "longrope",
   "short_factor": [1.0, 1.1, 1.2, 1.3, 1.5, 1.8, 2.0, 2.5],
   "long_factor": [1.0, 1.5, 2.5, 4.0, 6.0, 9.0, 12.0, 16.0]}}
EOF
cat > yarn.json <<'EOF'
{"model_type": "llama", "hidden_size": 128, "num_attention_heads": 4,
 "max_position_embeddings": 256, "rope_theta": 10000.0,
 "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}}
EOF

# dynamic: unscaled up to max_position_embeddings (32), scaled for L = 64 and L = 101
expect_ok "$POSENC" gen --config dyn.json --seq-len 32 -o dyn32.npz
expect_ok "$POSENC" gen --config dyn.json -o dyn-default.npz
expect_ok "$POSENC" gen --config dyn.json --seq-len 64 -o dyn64.npz
expect_ok "$POSENC" gen --config dyn.json --positions 0,3,100 -o dyn101.npz
# longrope: short factors up to original_max_position_embeddings (16), long past it
expect_ok "$POSENC" gen --config longrope.json --seq-len 16 -o lr16.npz
expect_ok "$POSENC" gen --config longrope.json --seq-len 17 -o lr17.npz
expect_ok "$POSENC" gen --config longrope.json -o lr-default.npz
expect_ok "$POSENC" gen --config longrope.json --positions 15,2 -o lr-pos16.npz
expect_ok "$POSENC" gen --config longrope.json --positions 2,16 -o lr-pos17.npz
# yarn, llama3, linear
expect_ok "$POSENC" gen --config yarn.json -o yarn.npz
expect_ok "$POSENC" gen --config "$C/llama-3.1-8b.json" --positions 0,1,8191,8192,131071 -o llama3.npz
expect_ok "$POSENC" gen --config "$C/gemma-3-27b-it.json" --layer-type full_attention \
    --positions 0,7,131071 -o gemma-full.npz
expect_ok "$POSENC" gen --config "$C/gemma-3-27b-it.json" --layer-type sliding_attention \
    --positions 0,7,131071 -o gemma-sliding.npz

"$PY" - <<'EOF'
import math
import numpy as np
import gen_ref as R
LD = R.LD

def check(f, inv, pos, scale=1.0, layout="hf"):
    t, meta = R.load(f)
    c, s, err = R.cossin_exact(inv, pos, layout, scale)
    R.check_rounded(f + " inv_freq", t["inv_freq"], inv, "f32", min_exact=1.0)
    R.check_rounded(f + " cos", t["cos"], c, "f32", err)
    R.check_rounded(f + " sin", t["sin"], s, "f32", err)
    return t, meta

# ---- dynamic (d = 16, M = 32, factor 2)
inv = R.inv_default(10000.0, 16)
for f, L in (("dyn32.npz", 32), ("dyn-default.npz", 32)):
    t, meta = check(f, inv, np.arange(L))
    assert meta["rope_type"] == "dynamic" and meta["seq_len"] == 32 and meta["theta_used"] == 10000
for f, pos in (("dyn64.npz", list(range(64))), ("dyn101.npz", [0, 3, 100])):
    L = max(pos) + 1
    th = R.theta_dynamic(10000.0, 2.0, L, 32, 16)
    assert th > 10000
    t, meta = check(f, 1 / np.power(th, np.arange(0, 16, 2).astype(LD) / 16), pos)
    assert meta["seq_len"] == L
    assert abs(meta["theta_used"] - float(th)) <= 1e-9 * float(th), (meta["theta_used"], th)

# ---- longrope (d = 16, M = 64, M0 = 16): scaling sqrt(1 + ln(64/16)/ln 16) in both cases
short = np.array([1.0, 1.1, 1.2, 1.3, 1.5, 1.8, 2.0, 2.5], dtype=LD)
long_ = np.array([1.0, 1.5, 2.5, 4.0, 6.0, 9.0, 12.0, 16.0], dtype=LD)
base = np.power(LD(10000), np.arange(0, 16, 2).astype(LD) / 16)
scale = float(np.sqrt(1 + np.log(LD(64) / 16) / np.log(LD(16))))
for f, pos, use_long in (("lr16.npz", range(16), False), ("lr17.npz", range(17), True),
                         ("lr-default.npz", range(64), True), ("lr-pos16.npz", [15, 2], False),
                         ("lr-pos17.npz", [2, 16], True)):
    pos = list(pos)
    inv = 1 / ((long_ if use_long else short) * base)
    t, meta = check(f, inv, pos, scale)
    assert meta["rope_type"] == "longrope", meta["rope_type"]
    assert meta["long_factors_used"] is use_long, (f, meta["long_factors_used"])
    assert meta["seq_len"] == max(pos) + 1
    assert abs(meta["attention_scaling"] - scale) < 1e-12, meta["attention_scaling"]
    assert meta["original_max_position_embeddings"] == 16
    assert meta["short_factor"] == [float(x) for x in short]

# ---- yarn (d = 32, factor 4, M0 = 64): ramp between the correction dims, scaling 0.1 ln 4 + 1
inv, att = R.yarn(10000.0, 32, 4.0, 64)
t, meta = check("yarn.npz", inv, np.arange(256), att)
assert abs(meta["attention_scaling"] - att) < 1e-12 and meta["rope_type"] == "yarn"
assert meta["beta_fast"] == 32 and meta["beta_slow"] == 1 and meta["truncate"] is True

# ---- llama3 (Llama 3.1: theta 5e5, d 128, factor 8, low 1, high 4, M0 8192)
inv = R.inv_llama3(R.inv_default(500000.0, 128), 8.0, 1.0, 4.0, 8192)
t, meta = check("llama3.npz", inv, [0, 1, 8191, 8192, 131071])
assert meta["low_freq_factor"] == 1 and meta["high_freq_factor"] == 4 and meta["factor"] == 8

# ---- linear (Gemma 3 full layers: theta 1e6 / factor 8) and its sliding layers (theta 1e4)
inv = R.inv_default(1e6, 128) / 8
t, meta = check("gemma-full.npz", inv, [0, 7, 131071])
assert meta["layer_type"] == "full_attention" and meta["rope_type"] == "linear"
t, meta = check("gemma-sliding.npz", R.inv_default(1e4, 128), [0, 7, 131071])
assert meta["layer_type"] == "sliding_attention" and meta["theta"] == 10000
EOF
