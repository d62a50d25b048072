# posenc gen --precision hf: transformers' float32 pipeline. Checked two ways: against a numpy
# float32 emulation of each step with correctly rounded pow/cos/sin (what hf precision promises,
# so nearly bit-exact), and against real torch code as transformers runs it, within the tolerance
# torch's faithfully rounded pow allows (|d| <= p * max ulp(inv_freq) + 2 ulp).
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
cat > tiny.json <<'EOF'
{"model_type": "llama", "hidden_size": 128, "num_attention_heads": 4,
 "max_position_embeddings": 4096, "rope_theta": 500000.0}
EOF
Q="$DATA/configs/qwen3.5-27b.json"
L="$DATA/configs/llama-3.1-8b.json"
P=0,1,2,3,100,1000,4095,8191,8192,65535,100000,131071,200000,262143

expect_ok "$POSENC" gen --config tiny.json --precision hf -o tiny.npz
expect_ok "$POSENC" gen --config tiny.json --precision hf --dtype bf16 --table-layout half -o tiny-bf16.npz
expect_ok "$POSENC" gen --config "$Q" --precision hf --positions $P -o qwen.npz
expect_ok "$POSENC" gen --config "$Q" --positions $P -o qwen-exact.npz
expect_ok "$POSENC" gen --config "$L" --precision hf --positions $P -o llama.npz
expect_ok "$POSENC" gen --config "$L" --precision hf --positions $P --dtype f16 --table-layout interleaved -o llama16.npz

"$PY" - <<'EOF'
import numpy as np
import gen_ref as R

P = [0, 1, 2, 3, 100, 1000, 4095, 8191, 8192, 65535, 100000, 131071, 200000, 262143]

def same(name, got, want, max_ulp=1, min_exact=0.999):
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    d = np.abs(got - want)
    u = R.ulp(want, "f32")
    assert (d <= max_ulp * u).all(), (name, float((d / u).max()))
    frac = (got == want).mean()
    assert frac >= min_exact, (name, frac)

def torch_close(name, got, inv32, pos, tc, ts):
    """torch's tables may differ from hf's by the angle error of a 1-ulp inv_freq difference."""
    tol = np.asarray(pos, dtype=np.float64)[:, None] * np.spacing(np.abs(inv32)).max() + 2 * 6e-8
    for k, ref in (("cos", tc), ("sin", ts)):
        d = np.abs(got[k] - ref.astype(np.float64))
        assert (d <= tol).all(), (name, k, float((d - tol).max()))

# tiny llama, theta 5e5, head_dim 32, positions 0..4095
t, meta = R.load("tiny.npz")
assert meta["precision"] == "hf"
inv = R.hf_inv_default(500000.0, 32)
same("tiny inv_freq", t["inv_freq"], inv, max_ulp=0, min_exact=1.0)
c, s = R.hf_cossin(inv, np.arange(4096))
same("tiny cos", t["cos"], c)
same("tiny sin", t["sin"], s)
tc, ts = R.torch_tables(R.torch_inv_default(500000.0, 32), np.arange(4096))
torch_close("tiny", t, inv, np.arange(4096), tc, ts)
# bf16 in hf precision = the f32 values rounded to bf16 (tensor.to(torch.bfloat16))
import torch
b, _ = R.load("tiny-bf16.npz", "bf16")
c16, s16 = R.hf_cossin(inv, np.arange(4096), "half")
for k, ref in (("cos", c16), ("sin", s16)):
    want = torch.tensor(ref).to(torch.bfloat16).float().numpy().astype(np.float64)
    same("tiny bf16 " + k, b[k], want, max_ulp=0, min_exact=0.999)
want = torch.tensor(inv).to(torch.bfloat16).float().numpy().astype(np.float64)
assert (b["inv_freq"] == want).all()

# Qwen3.5 (theta 1e7, 64 rotary dims) at long positions
q, meta = R.load("qwen.npz")
inv = R.hf_inv_default(1e7, 64)
same("qwen inv_freq", q["inv_freq"], inv, max_ulp=0, min_exact=1.0)
c, s = R.hf_cossin(inv, P)
same("qwen cos", q["cos"], c)
same("qwen sin", q["sin"], s)
tc, ts = R.torch_tables(R.torch_inv_default(1e7, 64), P)
torch_close("qwen", q, inv, P, tc, ts)
# the f32 drift PRECISION in the man page talks about: hf differs from exact by ~1e-2 at 262143
e, _ = R.load("qwen-exact.npz")
drift = np.abs(q["cos"] - e["cos"])
assert drift[:4].max() < 1e-6, drift[:4].max()
assert 1e-4 < drift[-1].max() < 5e-2, drift[-1].max()

# Llama 3.1 (llama3 scaling): inv_freq against transformers' code in torch float32
l, meta = R.load("llama.npz")
assert meta["rope_type"] == "llama3" and meta["precision"] == "hf"
import math
inv_t = torch.tensor(R.hf_inv_default(500000.0, 128))
factor, low, high, m0 = 8.0, 1.0, 4.0, 8192
low_wl, high_wl = m0 / low, m0 / high
wavelen = 2 * math.pi / inv_t
inv_l = torch.where(wavelen > low_wl, inv_t / factor, inv_t)
smooth = (m0 / wavelen - low) / (high - low)
smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
inv = torch.where(medium, smoothed, inv_l).numpy()
same("llama inv_freq", l["inv_freq"], inv, max_ulp=1, min_exact=0.95)
inv_hf = l["inv_freq"].astype(np.float32)
c, s = R.hf_cossin(inv_hf, P)
same("llama cos", l["cos"], c)
same("llama sin", l["sin"], s)
tc, ts = R.torch_tables(inv, P)
torch_close("llama", l, inv_hf, P, tc, ts)
l16, _ = R.load("llama16.npz", "f16")
c, s = R.hf_cossin(inv_hf, P, "interleaved")
for k, ref in (("cos", c), ("sin", s)):
    want = ref.astype(np.float16).astype(np.float64)
    assert (l16[k] == want).mean() >= 0.999, k
EOF
