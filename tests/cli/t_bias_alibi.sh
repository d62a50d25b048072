# gen for ALiBi configs: slopes and bias against the models' own formulas (numpy/torch).
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
export PYTHONPATH="$SRC/tests/cli:$SRC/tests/golden"

# BLOOM (16 heads), keyindex m*j by default; Baichuan-13B (40 heads, not a power of two)
expect_ok "$POSENC" gen --config "$C/bias/bloom-560m.json" --seq-len 37 -o bloom.npz
expect_ok "$POSENC" gen --config "$C/baichuan-13b.json" --seq-len 19 -o baichuan.safetensors
# MPT: 12 heads with alibi_bias_max 16 (reordered slopes), causal convention by default
expect_ok "$POSENC" gen --config "$C/bias/mpt-12heads.json" --seq-len 23 -o mpt.h5
expect_ok "$POSENC" gen --config "$C/bias/mpt-7b.json" --seq-len 5 -o mpt7.npz
# Falcon: bf16 slopes and products; broadcast row covers positions past 256 (not bf16-exact)
expect_ok "$POSENC" gen --config "$C/bias/falcon-rw-1b.json" --seq-len 300 --broadcast -o falcon.npz
# conventions and flags without a config
expect_ok "$POSENC" gen --encoding alibi --heads 12 --seq-len 20 --convention symmetric -o sym.npz
expect_ok "$POSENC" gen --encoding alibi --heads 12 --seq-len 20 --convention causal -o cau.npz
expect_ok "$POSENC" gen --encoding alibi --heads 6 --seq-len 9 --convention causal --broadcast -o bc.npz
expect_ok "$POSENC" gen --encoding alibi --heads 5 --variant mpt --positions 3,7,10 -o pos.npz
expect_ok "$POSENC" gen --encoding alibi --heads 8 --seq-len 16 --dtype bf16 -o bf.safetensors
expect_ok "$POSENC" gen --encoding alibi --heads 8 --seq-len 16 --array slopes -o slopes.npy

$PY - <<'PY'
import math, json
import numpy as np, torch
from bias_util import load, press_slopes, f32_to_bf16_bits, bf16_bits_to_f32
from make_bias_golden import mpt_slopes, bloom_slopes

def check_bias(b, slopes, conv, rows, k_len, tol=1e-7):
    i = np.array(rows, dtype=np.float64)[:, None]
    j = np.arange(k_len, dtype=np.float64)[None, :]
    off = {"keyindex": j + 0 * i, "causal": j - i, "symmetric": -np.abs(i - j)}[conv]
    want = np.asarray(slopes, dtype=np.float64)[:, None, None] * off[None]
    assert b.shape == want.shape, (b.shape, want.shape)
    np.testing.assert_allclose(b, want, rtol=tol, atol=0)
    # causal softmax is the same for every convention: b(i,j) - b(i,i) = -m (i - j), j <= i

a, m = load("bloom.npz")
assert m["encoding"] == "alibi" and m["convention"] == "keyindex" and m["variant"] == "reference", m
assert m["heads"] == 16 and a["slopes"].dtype == np.float32
np.testing.assert_allclose(a["slopes"], press_slopes(16), rtol=1e-7)
np.testing.assert_allclose(a["slopes"], bloom_slopes(16).numpy(), rtol=1e-6)
check_bias(a["bias"], press_slopes(16), "keyindex", range(37), 37)
# f32 values: exactly the float64 product rounded once
want = (np.array(press_slopes(16))[:, None, None] * np.arange(37)[None, None, :]).astype(np.float32)
assert np.array_equal(a["bias"], np.broadcast_to(want, a["bias"].shape))

a, m = load("baichuan.safetensors")
assert a["slopes"].shape == (40,) and a["bias"].shape == (40, 19, 19)
np.testing.assert_allclose(a["slopes"], press_slopes(40), rtol=1e-7)
check_bias(a["bias"], press_slopes(40), "keyindex", range(19), 19)

a, m = load("mpt.h5")
assert a["slopes"].shape == (12,)
np.testing.assert_allclose(a["slopes"], mpt_slopes(12, 16).numpy(), rtol=2.5e-7)
check_bias(a["bias"], mpt_slopes(12, 16).double().numpy(), "causal", range(23), 23, tol=3e-7)
# MPT's own table is slopes * (j - (L-1)): our causal last row
L = 23
mpt_row = mpt_slopes(12, 16)[:, None] * (torch.arange(L) - (L - 1))[None, :]
np.testing.assert_allclose(a["bias"][:, L - 1, :], mpt_row.numpy(), rtol=3e-7)

a, m = load("mpt7.npz")
np.testing.assert_allclose(a["slopes"], press_slopes(32), rtol=1e-7)  # bias_max 8 = reference

a, m = load("falcon.npz")
assert a["bias"].shape == (32, 1, 300) and m["variant"] == "falcon", a["bias"].shape
# transformers' Falcon build_alibi_tensor: slopes.bfloat16() * arange (int64 -> bf16)
s = bloom_slopes(32)
want = (s[..., None].bfloat16() * torch.arange(300)[None, :]).float().numpy()
assert np.array_equal(a["bias"][:, 0, :], want), np.abs(a["bias"][:, 0, :] - want).max()
assert np.array_equal(a["slopes"], s.bfloat16().float().numpy())

for f, conv in (("sym.npz", "symmetric"), ("cau.npz", "causal")):
    a, m = load(f)
    assert m["convention"] == conv
    check_bias(a["bias"], press_slopes(12), conv, range(20), 20)
    b = a["bias"].astype(np.float64)
    for i in range(20):
        np.testing.assert_allclose(b[:, i, :i + 1] - b[:, i, i:i + 1],
                                   -np.array(press_slopes(12))[:, None] * (i - np.arange(i + 1)),
                                   rtol=1e-6, atol=1e-7)

a, m = load("bc.npz")
assert a["bias"].shape == (6, 1, 9)
check_bias(a["bias"], press_slopes(6), "causal", [8], 9)

a, m = load("pos.npz")
assert a["bias"].shape == (5, 3, 11) and m["variant"] == "mpt" and m["convention"] == "causal"
check_bias(a["bias"], mpt_slopes(5).double().numpy(), "causal", [3, 7, 10], 11, tol=3e-7)

a, m = load("bf.safetensors")
exact = np.array(press_slopes(8))[:, None, None] * np.arange(16)[None, None, :]
want = bf16_bits_to_f32(f32_to_bf16_bits(np.broadcast_to(exact, (8, 16, 16)).astype(np.float32)))
# every value here is exact in f32 (power-of-two slopes), so one rounding to bf16 is torch's
assert np.array_equal(a["bias"], want.reshape(8, 16, 16))

s = np.load("slopes.npy")
assert s.shape == (8,)
np.testing.assert_allclose(s, press_slopes(8), rtol=0)
print("alibi ok")
PY

# NoPE: nothing to generate
expect_fail 3 "NoPE" "$POSENC" gen --config "$C/nemotron-h-56b-base-8k.json" -o nope.npz
no_file nope.npz
expect_fail 3 "NoPE" "$POSENC" gen --config "$C/bias/nemotron-h-tiny.json" -o nope.npz
no_file nope.npz

# bad inputs: one line, right exit code, no output
expect_fail 2 "unknown ALiBi convention 'sym'" "$POSENC" gen --encoding alibi --heads 4 --seq-len 4 --convention sym -o o.npz
expect_fail 2 "unknown ALiBi variant 'gpt'" "$POSENC" gen --encoding alibi --heads 4 --seq-len 4 --variant gpt -o o.npz
expect_fail 2 "--heads" "$POSENC" gen --encoding alibi --heads 0 --seq-len 4 -o o.npz
expect_fail 2 "ALiBi tables need --heads" "$POSENC" gen --encoding alibi --seq-len 4 -o o.npz
expect_fail 2 "--seq-len" "$POSENC" gen --encoding alibi --heads 4 -o o.npz
expect_fail 2 "--num-buckets does not apply to ALiBi tables" "$POSENC" gen --encoding alibi --heads 4 --seq-len 4 --num-buckets 8 -o o.npz
expect_fail 2 "pass --array (slopes, bias)" "$POSENC" gen --encoding alibi --heads 4 --seq-len 4 -o o.npy
expect_fail 2 "--array: alibi tables hold slopes, bias, not 'cos'" "$POSENC" gen --encoding alibi --heads 4 --seq-len 4 --array cos -o o.npz
# Baichuan-13B at its full 4096 context: 40 x 4096 x 4096 x 8 bytes = 5 GiB, over the 4 GiB limit
expect_fail 3 "(alibi tables), over the 4 GiB limit; pass a smaller --seq-len, --broadcast, --array slopes or --force" "$POSENC" gen --config "$C/baichuan-13b.json" --dtype f64 -o o.npz
no_file o.npz o.npy
# the broadcast form of the same table is small
expect_ok "$POSENC" gen --config "$C/baichuan-13b.json" --broadcast -o full.npz
$PY -c "
import numpy as np, sys
sys.path.insert(0, '$SRC/tests/cli')
from bias_util import load, press_slopes
a, m = load('full.npz')
assert a['bias'].shape == (40, 1, 4096) and m['k_len'] == 4096
np.testing.assert_allclose(a['bias'][:, 0, :], np.array(press_slopes(40))[:, None] * np.arange(4096)[None, :], rtol=1e-7)
"

# the metadata name the config by its file name, not the path it was given by (no machine paths)
"$POSENC" ls --meta bloom.npz > meta.txt
grep -Eq '^config +string +"bloom-560m.json"$' meta.txt || { cat meta.txt; exit 1; }
