# posenc gen works on every real RoPE config in tests/data/configs (--seq-len 16; each layer type
# of multi-type configs), and the tables agree with the parameters read off the config by hand:
# the expected theta and rotary dims below come from the JSON files and transformers' rules.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
n=0
for cfg in "$DATA"/configs/*.json; do
    name=$(basename "$cfg" .json)
    case $name in
    baichuan-13b | nemotron-h-56b-base-8k | nemotron-3-nano-30b-a3b) continue ;; # not RoPE
    esac
    if "$POSENC" gen --config "$cfg" --seq-len 16 -o "$name.npz" 2> err; then
        n=$((n + 1))
        continue
    fi
    # several layer types: the error lists them; generate each
    types=$(sed -n 's/.*several layer types (\(.*\)); pass --layer-type.*/\1/p' err | tr -d ,)
    if [ -z "$types" ]; then echo "$name:"; cat err; exit 1; fi
    for t in $types; do
        expect_ok "$POSENC" gen --config "$cfg" --seq-len 16 --layer-type "$t" -o "$name@$t.npz"
        n=$((n + 1))
    done
done
echo "$n tables"
[ "$n" -ge 18 ]
# the three non-RoPE configs: ALiBi goes to the bias tables, NoPE is an error
expect_fail 3 "no position encoding" "$POSENC" gen --config "$DATA/configs/nemotron-h-56b-base-8k.json" --seq-len 16 -o x.npz
no_file x.npz

"$PY" - <<'EOF'
import glob
import os
import numpy as np
import gen_ref as R

# name: (theta, rotary_dim, head_dim, rope_type, style) from the config files and transformers' rules
want = {
    "deepseek-v3": (10000, 64, 64, "yarn", None),
    "falcon-7b": (10000, 64, 64, "default", "neox"),
    "gemma-3-27b-it@full_attention": (1e6, 128, 128, "linear", "neox"),
    "gemma-3-27b-it@sliding_attention": (1e4, 128, 128, "default", "neox"),
    "gemma-4-26b-a4b@sliding_attention": (1e4, 256, 256, "default", "neox"),
    "glm-4.5": (1e6, 64, 128, "default", "neox"),
    "glm-5": (1e6, 64, 64, "default", None),
    "gpt-j-6b": (10000, 64, 256, "default", "gptj"),
    "gpt-oss-20b": (150000, 64, 64, "yarn", "neox"),
    "kimi-k2-instruct": (50000, 64, 64, "yarn", None),
    "llama-3.1-8b": (500000, 128, 128, "llama3", "neox"),
    "llama-4-scout-17b-16e-instruct": (500000, 128, 128, "llama3", None),
    "mixtral-8x7b-v0.1": (1e6, 128, 128, "default", "neox"),
    "qwen3-8b": (1e6, 128, 128, "default", "neox"),
    "qwen3-next-80b-a3b-thinking": (1e7, 64, 256, "default", "neox"),
    "qwen3.5-27b": (1e7, 64, 256, "default", "neox"),
    "qwen3.5-35b-a3b": (1e7, 64, 256, "default", "neox"),
}
files = sorted(glob.glob("*.npz"))
seen = set()
for f in files:
    name = f[:-4]
    a, meta = R.load(f)
    w = meta["rotary_dim"]
    assert a["cos"].shape == (16, w) and a["sin"].shape == (16, w), (f, a["cos"].shape)
    assert a["inv_freq"].shape == (meta["n_freq"],), f
    assert meta["seq_len"] == 16 and meta["encoding"] == "rope", f
    assert np.isfinite(a["cos"]).all() and np.isfinite(a["sin"]).all(), f
    # row 0 is cos = scaling, sin = 0; cos^2 + sin^2 = scaling^2 everywhere
    sc = meta["attention_scaling"]
    assert np.allclose(a["cos"][0], sc, atol=1e-7) and np.abs(a["sin"][0]).max() == 0, f
    assert np.allclose(a["cos"] ** 2 + a["sin"] ** 2, sc * sc, rtol=1e-6), f
    # the table is cos/sin of position * inv_freq (hf layout, exact)
    inv = a["inv_freq"].astype(R.LD)
    ang = np.arange(16).astype(R.LD)[:, None] * inv[None, :]
    assert np.allclose(a["cos"], R.expand(np.cos(ang), "hf") * R.LD(sc), atol=2e-6), f
    if name in want:
        seen.add(name)
        theta, rot, hd, typ, style = want[name]
        assert meta["theta"] == theta, (name, meta["theta"])
        assert meta["rotary_dim"] == rot and meta["head_dim"] == hd, (name, meta["rotary_dim"], meta["head_dim"])
        assert meta["rope_type"] == typ, (name, meta["rope_type"])
        if style:
            assert meta["style"] == style, (name, meta["style"])
        if typ == "default" and name != "gemma-4-26b-a4b@full_attention":
            R.check_rounded(name + " inv", a["inv_freq"], R.inv_default(theta, rot), "f32", min_exact=1.0)
missing = set(want) - seen
assert not missing, missing
print(len(files), "configs checked")
EOF
