# posenc gen, exact precision: cos/sin/inv_freq against long double closed forms, every layout,
# every dtype (one rounding), --seq-len, --positions lists and files, partial rotary, positions
# past 2^17, and the metadata that explains the table.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
cat > tiny.json <<'EOF'
{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
 "max_position_embeddings": 64, "rope_theta": 10000.0}
EOF
cat > neox.json <<'EOF'
{"model_type": "gpt_neox", "hidden_size": 128, "num_attention_heads": 4, "rotary_pct": 0.25,
 "rotary_emb_base": 500, "max_position_embeddings": 100}
EOF

expect_ok "$POSENC" gen --config tiny.json -o t.npz
test ! -s out.stdout
for layout in hf half interleaved; do
    for dt in f32 f64 f16 bf16; do
        expect_ok "$POSENC" gen --config tiny.json --table-layout $layout --dtype $dt -o "t-$layout-$dt.npz"
    done
done
expect_ok "$POSENC" gen --config tiny.json --seq-len 10 -o s10.npz
expect_ok "$POSENC" gen --config tiny.json --positions 7,0,5-6,63,1000,131071 -o pl.npz
"$PY" -c "
import numpy as np
np.save('p64.npy', np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], dtype=np.int64))
np.savez('p.npz', q=np.array([[0, 17, 4096, 65535]], dtype=np.int32))
np.save('p8.npy', np.arange(0, 250, 7, dtype=np.uint8))"
expect_ok "$POSENC" gen --config tiny.json --positions p64.npy -o pf.npz
expect_ok "$POSENC" gen --config tiny.json --positions p.npz:q -o pz.npz
expect_ok "$POSENC" gen --config tiny.json --positions p8.npy --dtype bf16 --table-layout interleaved -o p8.npz
expect_ok "$POSENC" gen --config neox.json -o neox.npz
# inv_freq[0] = 1/factor lies within 1e-16 of 261/256, a bfloat16 midpoint: only the exact value
# (not its nearest double) says which way to round
cat > tie.json <<'EOF'
{"model_type": "llama", "hidden_size": 16, "num_attention_heads": 4,
 "max_position_embeddings": 4, "rope_theta": 10000.0,
 "rope_scaling": {"type": "linear", "factor": 0.9808429118773946}}
EOF
expect_ok "$POSENC" gen --config tie.json --dtype bf16 -o tie.npz
expect_ok "$POSENC" gen --config "$DATA/configs/qwen3.5-27b.json" \
    --positions 0,1,4095,131071,262142,262143 -o qwen.npz
expect_ok "$POSENC" gen --config "$DATA/configs/qwen3.5-27b.json" \
    --positions 0,1,4095,131071,262142,262143 --dtype f16 --table-layout half -o qwen16.npz

"$PY" - <<'EOF'
import numpy as np
import gen_ref as R

inv = R.inv_default(10000.0, 16)
for layout in ("hf", "half", "interleaved"):
    for dt in ("f32", "f64", "f16", "bf16"):
        a, meta = R.load(f"t-{layout}-{dt}.npz", dt)
        assert sorted(a) == ["cos", "inv_freq", "sin"], sorted(a)
        c, s, err = R.cossin_exact(inv, np.arange(64), layout)
        w = 8 if layout == "half" else 16
        assert a["cos"].shape == (64, w) and a["sin"].shape == (64, w), a["cos"].shape
        assert a["inv_freq"].shape == (8,)
        if dt == "f64":
            for k, ref in (("cos", c), ("sin", s)):
                lim = 2 * R.ulp(ref, "f64") + err
                d = np.abs(a[k].astype(R.LD) - ref).astype(np.float64)
                assert (d <= lim).all(), (k, layout, d.max())
            d = np.abs(a["inv_freq"].astype(R.LD) - inv).astype(np.float64)
            assert (d <= R.ulp(inv, "f64")).all()
        else:
            R.check_rounded(f"cos {layout} {dt}", a["cos"], c, dt, err)
            R.check_rounded(f"sin {layout} {dt}", a["sin"], s, dt, err)
            R.check_rounded(f"inv_freq {dt}", a["inv_freq"], inv, dt, min_exact=1.0)
        assert meta["layout"] == layout and meta["dtype"] == dt and meta["precision"] == "exact"
        # layouts are the same numbers rearranged
        if layout == "interleaved":
            assert (a["cos"][:, 0::2] == a["cos"][:, 1::2]).all()
        if layout == "hf":
            assert (a["sin"][:, :8] == a["sin"][:, 8:]).all()

# the default file: f32, hf layout, positions 0..max_position_embeddings-1, and its metadata
a, meta = R.load("t.npz", "f32")
b, _ = R.load("t-hf-f32.npz", "f32")
for k in a:
    assert (a[k] == b[k]).all(), k
assert a["cos"][0].tolist() == [1.0] * 16 and a["sin"][0].tolist() == [0.0] * 16
want = {"encoding": "rope", "rope_type": "default", "model_type": "llama", "config": "tiny.json",
        "theta": 10000, "theta_used": 10000, "head_dim": 16, "rotary_dim": 16, "layout": "hf",
        "precision": "exact", "dtype": "f32", "attention_scaling": 1, "softmax_scale": 1,
        "max_position_embeddings": 64, "seq_len": 64, "n_positions": 64, "first_position": 0,
        "last_position": 63, "style": "neox", "factor": 1, "layer_type": None}
for k, v in want.items():
    assert k in meta, k
    assert meta[k] == v, (k, meta[k], v)
assert isinstance(meta["notes"], list) and all(isinstance(n, str) for n in meta["notes"])
assert isinstance(meta["posenc_version"], str) and meta["posenc_version"]
# numpy itself reads the member (the man page's recipe)
import json
assert json.loads(np.load("t.npz")["meta.json"])["rotary_dim"] == 16
assert np.load("t.npz")["cos"].dtype == np.float32

# --seq-len: the first rows of the full table
s10, meta = R.load("s10.npz")
assert s10["cos"].shape == (10, 16)
assert (s10["cos"] == a["cos"][:10]).all() and (s10["sin"] == a["sin"][:10]).all()
assert meta["seq_len"] == 10 and meta["n_positions"] == 10 and meta["last_position"] == 9

# position lists and files: rows in the order given, seq_len = max + 1
for f, pos in (("pl.npz", [7, 0, 5, 6, 63, 1000, 131071]),
               ("pf.npz", [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]),
               ("pz.npz", [0, 17, 4096, 65535])):
    t, meta = R.load(f)
    c, s, err = R.cossin_exact(inv, pos, "hf")
    R.check_rounded(f + " cos", t["cos"], c, "f32", err)
    R.check_rounded(f + " sin", t["sin"], s, "f32", err)
    assert meta["n_positions"] == len(pos) and meta["seq_len"] == max(pos) + 1, meta
    assert meta["first_position"] == pos[0] and meta["last_position"] == pos[-1]
    assert meta["positions"] == "list"
t, _ = R.load("p8.npz", "bf16")
c, s, err = R.cossin_exact(inv, np.arange(0, 250, 7), "interleaved")
R.check_rounded("p8 cos bf16", t["cos"], c, "bf16", err, min_exact=1.0)
R.check_rounded("p8 sin bf16", t["sin"], s, "bf16", err, min_exact=1.0)

# partial rotary (GPT-NeoX rotary_pct 0.25, rotary_emb_base 500): 8 of 32 dims
t, meta = R.load("neox.npz")
assert meta["head_dim"] == 32 and meta["rotary_dim"] == 8 and meta["theta"] == 500, meta
ni = R.inv_default(500.0, 8)
c, s, err = R.cossin_exact(ni, np.arange(100), "hf")
R.check_rounded("neox cos", t["cos"], c, "f32", err)
R.check_rounded("neox sin", t["sin"], s, "f32", err)
R.check_rounded("neox inv", t["inv_freq"], ni, "f32", min_exact=1.0)

# Qwen3.5 at positions up to 262143: theta 1e7, head_dim 256, partial 0.25 -> 64 rotary dims,
# text positions (all three mrope axes equal) -> plain RoPE
qi = R.inv_default(1e7, 64)
pos = [0, 1, 4095, 131071, 262142, 262143]
t, meta = R.load("qwen.npz")
assert meta["rotary_dim"] == 64 and meta["head_dim"] == 256 and meta["theta"] == 1e7, meta
c, s, err = R.cossin_exact(qi, pos, "hf")
R.check_rounded("qwen cos", t["cos"], c, "f32", err)
R.check_rounded("qwen sin", t["sin"], s, "f32", err)
R.check_rounded("qwen inv", t["inv_freq"], qi, "f32", min_exact=1.0)
t, _ = R.load("qwen16.npz", "f16")
c, s, err = R.cossin_exact(qi, pos, "half")
R.check_rounded("qwen cos f16", t["cos"], c, "f16", err, min_exact=1.0)
R.check_rounded("qwen sin f16", t["sin"], s, "f16", err, min_exact=1.0)
R.check_rounded("qwen inv f16", t["inv_freq"], qi, "f16", min_exact=1.0)

# the tie: exact 1/factor is just above 261/256, so bf16 rounds up to 1 + 3/128 (ties-to-even on
# the double 261/256 would give 1 + 2/128)
from fractions import Fraction
f = 0.9808429118773946
assert 1 / f == 261 / 256 and 1 / Fraction(f) > Fraction(261, 256)
t, _ = R.load("tie.npz", "bf16")
assert t["inv_freq"][0] == 1 + 3 / 128, t["inv_freq"][0]

# spot check the long double reference itself with mpmath at the largest position
import mpmath
mpmath.mp.prec = 200
i = 5
x = mpmath.mpf(262143) * mpmath.power(mpmath.mpf(10) ** 7, -mpmath.mpf(2 * i) / 64)
assert abs(float(mpmath.cos(x)) - float(c[-1][i])) < 1e-15
EOF
