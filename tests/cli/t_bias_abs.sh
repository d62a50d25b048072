# gen for absolute tables: sinusoidal variants against numpy versions of HF / tensor2tensor /
# fairseq code and a 60-digit Decimal reference; learned tables copied from safetensors.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
export PYTHONPATH="$SRC/tests/cli:$SRC/tests/golden"

expect_ok "$POSENC" gen --encoding sinusoidal --d-model 16 --seq-len 200 -o vas.npz
expect_ok "$POSENC" gen --encoding sinusoidal --d-model 16 --seq-len 200 --variant vaswani --dtype f64 -o vas64.npz
expect_ok "$POSENC" gen --encoding sinusoidal --d-model 7 --seq-len 50 --variant marian -o mar.npz
expect_ok "$POSENC" gen --encoding sinusoidal --d-model 12 --seq-len 50 --variant t2t -o t2t.npz
expect_ok "$POSENC" gen --encoding sinusoidal --d-model 9 --seq-len 50 --variant t2t -o t2todd.npz
expect_ok "$POSENC" gen --encoding sinusoidal --d-model 10 --seq-len 40 --variant fairseq -o fs.npz
expect_ok "$POSENC" gen --encoding sinusoidal --d-model 8 --positions 0,1,1000,123456,1000000 --variant t2t --dtype f64 -o big.npz
expect_ok "$POSENC" gen --encoding sinusoidal --d-model 4 --seq-len 3 --dtype bf16 -o vbf.safetensors

$PY - <<'PY'
import math
import numpy as np
from bias_util import load, bf16_bits_to_f32, f32_to_bf16_bits

def vaswani(n, d):  # HF create_sinusoidal_embeddings
    pe = np.array([[p / np.power(10000, 2 * (j // 2) / d) for j in range(d)] for p in range(n)])
    out = np.zeros((n, d))
    out[:, 0::2] = np.sin(pe[:, 0::2])
    out[:, 1::2] = np.cos(pe[:, 1::2])
    return out

def marian(n, d):  # HF MarianSinusoidalPositionalEmbedding._init_weight
    pe = np.array([[p / np.power(10000, 2 * (j // 2) / d) for j in range(d)] for p in range(n)])
    out = np.zeros((n, d))
    sentinel = d // 2 if d % 2 == 0 else d // 2 + 1
    out[:, 0:sentinel] = np.sin(pe[:, 0::2])
    out[:, sentinel:] = np.cos(pe[:, 1::2])
    return out

def t2t(n, d):  # tensor2tensor get_timing_signal_1d in float64
    nt = d // 2
    inc = math.log(10000.0) / max(nt - 1, 1)
    inv = np.exp(np.arange(nt) * -inc)
    st = np.arange(n)[:, None] * inv[None, :]
    sig = np.concatenate([np.sin(st), np.cos(st)], axis=1)
    return np.pad(sig, [[0, 0], [0, d % 2]])

def fairseq(num, d, pad):  # fairseq SinusoidalPositionalEmbedding.get_embedding in float64
    half = d // 2
    e = math.log(10000) / (half - 1)
    e = np.exp(np.arange(half) * -e)
    e = np.arange(num)[:, None] * e[None, :]
    e = np.concatenate([np.sin(e), np.cos(e)], axis=1)
    if d % 2:
        e = np.concatenate([e, np.zeros((num, 1))], axis=1)
    e[pad, :] = 0
    return e

def close32(got, ref):
    assert got.dtype == np.float32 and got.shape == ref.shape, (got.dtype, got.shape, ref.shape)
    r = ref.astype(np.float32)
    diff = np.abs(got.astype(np.float64) - r)
    # numpy's float64 angle is itself off by ~1e-16 * pos; at most a rare tie may differ by an ulp
    assert diff.max() <= 6e-8, diff.max()
    assert (got == r).mean() > 0.999, (got == r).mean()

a, m = load("vas.npz")
assert m["variant"] == "vaswani" and m["d_model"] == 16 and m["encoding"] == "sinusoidal"
close32(a["pe"], vaswani(200, 16))
assert np.array_equal(a["pe"][0], np.array([0, 1] * 8, dtype=np.float32))
a, m = load("vas64.npz")
np.testing.assert_allclose(a["pe"], vaswani(200, 16), rtol=0, atol=1e-13)
a, m = load("mar.npz")
close32(a["pe"], marian(50, 7))
a, m = load("t2t.npz")
close32(a["pe"], t2t(50, 12))
a, m = load("t2todd.npz")
close32(a["pe"], t2t(50, 9))
assert np.all(a["pe"][:, 8] == 0)
a, m = load("fs.npz")
# 40 real positions need 40 + padding_idx + 1 rows; row padding_idx (1) is zero
assert m["padding_idx"] == 1 and a["pe"].shape == (42, 10), a["pe"].shape
close32(a["pe"], fairseq(42, 10, 1))
assert np.all(a["pe"][1] == 0) and a["pe"][2, 5] == np.float32(math.cos(2))

# large positions in f64 against a 60-digit Decimal computation: correctly rounded
from decimal import Decimal as D, getcontext
getcontext().prec = 60
def dpi():
    getcontext().prec += 2
    three = D(3); lasts, t, s, n, na, d, da = 0, three, 3, 1, 0, 0, 24
    while s != lasts:
        lasts = s; n, na = n + na, na + 8; d, da = d + da, da + 32; t = (t * n) / d; s += t
    getcontext().prec -= 2
    return +s
def dexp(x):
    i, lasts, s, fact, num = 0, 0, D(1), 1, D(1)
    while s != lasts:
        lasts = s; i += 1; fact *= i; num *= x; s += num / fact
    return +s
def dsin(x):
    x = x % (2 * dpi())
    i, lasts, s, fact, num, sign = 1, 0, x, 1, x, 1
    while s != lasts:
        lasts = s; i += 2; fact *= i * (i - 1); num *= x * x; sign *= -1; s += num / fact * sign
    return +s
def dcos(x):
    x = x % (2 * dpi())
    i, lasts, s, fact, num, sign = 0, 0, D(1), 1, D(1), 1
    while s != lasts:
        lasts = s; i += 2; fact *= i * (i - 1); num *= x * x; sign *= -1; s += num / fact * sign
    return +s
a, m = load("big.npz")
pos = [0, 1, 1000, 123456, 1000000]
ln = D(10000).ln()
for r, p in enumerate(pos):
    for k in range(4):
        w = dexp(-k * ln / 3)
        s, c = float(dsin(p * w)), float(dcos(p * w))
        assert a["pe"][r, k] == s, (p, k, a["pe"][r, k], s)
        assert a["pe"][r, 4 + k] == c, (p, k, a["pe"][r, 4 + k], c)
a, m = load("vbf.safetensors")
want = bf16_bits_to_f32(f32_to_bf16_bits(vaswani(3, 4).astype(np.float32)))
# bf16 of the exact value; f32 first then bf16 could double-round, but not for these values
assert np.array_equal(a["pe"], want.reshape(3, 4)), (a["pe"], want)
print("sinusoidal ok")
PY

# learned tables: GPT-2 wpe (also under transformer.), BERT (under bert.), f16 checkpoint
$PY - <<'PY'
import numpy as np
from bias_util import write_safetensors
rng = np.random.default_rng(7)
wpe = rng.standard_normal((64, 16)).astype(np.float32)
np.save("wpe.npy", wpe)
write_safetensors("gpt2.safetensors", {"wte.weight": rng.standard_normal((10, 16)).astype(np.float32),
                                       "wpe.weight": wpe})
write_safetensors("gpt2pfx.safetensors", {"transformer.wpe.weight": wpe.astype(np.float16)})
write_safetensors("bert.safetensors", {"bert.embeddings.position_embeddings.weight": wpe[:32]})
write_safetensors("bad.safetensors", {"wpe.weight": wpe[0]})
PY
expect_ok "$POSENC" gen --config "$C/bias/gpt2.json" --weights gpt2.safetensors -o g.npz
expect_ok "$POSENC" gen --config "$C/bias/gpt2.json" --weights gpt2pfx.safetensors --seq-len 10 -o g16.npz
expect_ok "$POSENC" gen --config "$C/bias/gpt2.json" --weights gpt2.safetensors --positions 3,5,63 --dtype f64 -o gpos.h5
expect_ok "$POSENC" gen --config "$C/bias/bert-base.json" --weights bert.safetensors -o b.safetensors
expect_ok "$POSENC" gen --encoding learned --weights gpt2.safetensors --tensor wte.weight -o wte.npz
$PY - <<'PY'
import numpy as np
from bias_util import load
wpe = np.load("wpe.npy")
a, m = load("g.npz")
assert m["encoding"] == "learned" and m["tensor"] == "wpe.weight"
assert np.array_equal(a["pe"], wpe)
a, m = load("g16.npz")
assert np.array_equal(a["pe"], wpe[:10].astype(np.float16).astype(np.float32))
a, m = load("gpos.h5")
assert a["pe"].dtype == np.float64 and np.array_equal(a["pe"], wpe[[3, 5, 63]])
a, m = load("b.safetensors")
assert np.array_equal(a["pe"], wpe[:32])
a, m = load("wte.npz")
assert a["pe"].shape == (10, 16)
print("learned ok")
PY
expect_fail 2 "--weights" "$POSENC" gen --config "$C/bias/gpt2.json" -o o.npz
expect_fail 3 "no tensor 'wpe.weight' (nor with a transformer./bert. prefix)" "$POSENC" gen --config "$C/bias/gpt2.json" --weights bert.safetensors -o o.npz
expect_fail 3 "not a 2-D float table" "$POSENC" gen --config "$C/bias/gpt2.json" --weights bad.safetensors -o o.npz
expect_fail 3 "past the 64 positions" "$POSENC" gen --config "$C/bias/gpt2.json" --weights gpt2.safetensors --seq-len 65 -o o.npz
expect_fail 3 "position 64 is past the 64 positions" "$POSENC" gen --config "$C/bias/gpt2.json" --weights gpt2.safetensors --positions 1,64 -o o.npz
expect_fail 2 "unknown sinusoidal variant 'bert'" "$POSENC" gen --encoding sinusoidal --d-model 8 --seq-len 4 --variant bert -o o.npz
expect_fail 2 "d_model >= 4" "$POSENC" gen --encoding sinusoidal --d-model 3 --seq-len 4 --variant fairseq -o o.npz
expect_fail 2 "--d-model" "$POSENC" gen --encoding sinusoidal --seq-len 4 -o o.npz
expect_fail 2 "--heads does not apply to sinusoidal tables" "$POSENC" gen --encoding sinusoidal --d-model 8 --heads 2 --seq-len 4 -o o.npz
no_file o.npz
