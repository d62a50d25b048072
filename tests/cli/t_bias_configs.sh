# gen for every non-RoPE config in tests/data/configs (and its subdirectories): the encoding
# `posenc info` reports, then the tables checked against numpy/torch versions of the models' code.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli:$SRC/tests/golden"
n=0
for cfg in $(find "$DATA/configs" -path "$DATA/configs/refused" -prune -o -name "*.json" -print | sort); do
    "$POSENC" info --json --config "$cfg" > info.json 2> info.err || { echo "info failed: $cfg"; cat info.err; exit 1; }
    enc=$(sed -n 's/^[[:space:]]*"encoding":[[:space:]]*"\([a-z_0-9]*\)".*/\1/p' info.json | head -n 1)
    [ -n "$enc" ] || { echo "no encoding in info --json: $cfg"; exit 1; }
    case $enc in
    rope) continue ;;
    esac
    d=c$n
    mkdir "$d"
    mv info.json "$d/"
    case $enc in
    none)
        expect_fail 3 "NoPE" "$POSENC" gen --config "$cfg" -o x.npz
        no_file x.npz ;;
    learned)
        $PY - "$d" <<'PY'
import json, sys, numpy as np
from bias_util import write_safetensors
i = json.load(open(sys.argv[1] + "/info.json"))
t = np.random.default_rng(1).standard_normal((8, i["d_model"])).astype(np.float32)
np.save(sys.argv[1] + "/table.npy", t)
write_safetensors("w.safetensors", {i["tensor"]: t})
PY
        expect_ok "$POSENC" gen --config "$cfg" --weights w.safetensors -o "$d/x.npz" ;;
    *)
        expect_ok "$POSENC" gen --config "$cfg" --seq-len 8 -o "$d/x.npz" ;;
    esac
    echo "$d $enc $cfg" >> cases.txt
    n=$((n + 1))
done
# the tables against the models' code: one python for every config (torch starts once)
$PY - cases.txt <<'PY'
import json, sys
import numpy as np, torch
from bias_util import load, press_slopes
from make_bias_golden import bucket_numpy, mpt_slopes


def check(d, enc, cfg):
    info = json.load(open(d + "/info.json"))
    if enc == "none":
        return
    a, m = load(d + "/x.npz")
    assert m["encoding"] == enc, (m, enc)
    if enc == "alibi":
        h = m["heads"]
        assert h == info["heads"], (h, info)
        s = {"reference": np.array(press_slopes(h)),
             "mpt": mpt_slopes(h, m.get("alibi_bias_max", 8)).double().numpy(),
             "falcon": torch.tensor(press_slopes(h)).bfloat16().double().numpy()}[m["variant"]]
        np.testing.assert_allclose(a["slopes"], s, rtol=2.5e-7)
        i, j = np.arange(8)[:, None], np.arange(8)[None, :]
        off = {"keyindex": j + 0 * i, "causal": j - i, "symmetric": -abs(i - j)}[m["convention"]]
        np.testing.assert_allclose(a["bias"], s[:, None, None] * off[None], rtol=4e-3 if m["variant"] == "falcon" else 3e-7)
    elif enc == "t5":
        rel = (np.arange(8)[None, :] - np.arange(8)[:, None]).ravel()
        want = bucket_numpy(rel, int(m["bidirectional"]), m["num_buckets"], m["max_distance"]).reshape(8, 8)
        assert np.array_equal(a["buckets"], want)
    elif enc == "shaw":
        k = m["max_relative_position"]
        dist = np.arange(8)[None, :] - np.arange(8)[:, None]  # key - query
        if m["variant"] == "bert":
            dist = -dist
        assert np.array_equal(a["index"], np.clip(dist, -k, k) + k)
    elif enc == "learned":
        off = m.get("row_offset", 0)  # BART/OPT rows 0-1 and RoBERTa padding rows come before position 0
        assert np.array_equal(a["pe"], np.load(d + "/table.npy")[off:])
    elif enc == "sinusoidal":
        # values are checked per variant in t_sinusoidal_configs and t_bias_abs; here the shape
        pad = m.get("padding_idx", -1)
        rows = 8 + (pad + 1 if pad is not None and pad >= 0 else 0)
        assert a["pe"].shape == (rows, info["d_model"]), (a["pe"].shape, rows, info)
        assert np.all(np.isfinite(a["pe"])) and np.abs(a["pe"]).max() <= 1.0
    else:
        sys.exit("unexpected encoding " + enc)


for line in open(sys.argv[1]):
    d, enc, cfg = line.split()
    check(d, enc, cfg)
    print("ok", enc, cfg.split("/configs/")[1])
PY
echo "$n non-RoPE configs"
[ "$n" -ge 12 ]
