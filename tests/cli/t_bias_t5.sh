# gen for T5 buckets/bias and Shaw indices/embeddings, against numpy reimplementations of
# transformers' and tensor2tensor's code, with weights from small safetensors checkpoints.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
export PYTHONPATH="$SRC/tests/cli:$SRC/tests/golden"

$PY - <<'PY'
import numpy as np
from bias_util import write_safetensors, f32_to_bf16_bits
rng = np.random.default_rng(5)
enc = rng.standard_normal((32, 8)).astype(np.float32)
dec = rng.standard_normal((32, 8)).astype(np.float32)
write_safetensors("t5.safetensors", {
    "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight": enc,
    "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight": dec,
    "shared.weight": rng.standard_normal((10, 4)).astype(np.float32)})
np.save("enc.npy", enc)
np.save("dec.npy", dec)
write_safetensors("t5bf16.safetensors", {
    "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight":
        ("BF16", f32_to_bf16_bits(enc))})
write_safetensors("t5bad.safetensors", {
    "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight": enc[:16]})
rk = rng.standard_normal((7, 5)).astype(np.float32)
np.save("rk.npy", rk)
write_safetensors("shaw.safetensors", {"rel_k": rk})
write_safetensors("shaw2.safetensors", {"rel_k": rk, "rel_v": rk[:5]})
PY

expect_ok "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 300 -o enc.npz
expect_ok "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 300 --decoder -o dec.npz
expect_ok "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 40 --weights t5.safetensors -o encw.npz
expect_ok "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 40 --decoder --weights t5.safetensors --dtype f64 -o decw.h5
expect_ok "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 12 --weights t5bf16.safetensors -o encbf.safetensors
expect_ok "$POSENC" gen --encoding t5 --num-buckets 16 --max-distance 25 --positions 0,5,40,99 -o grid.npz
expect_ok "$POSENC" gen --config "$C/bias/bert-relative.json" --seq-len 30 -o bertrel.npz
expect_ok "$POSENC" gen --config "$C/bias/bert-relative.json" --seq-len 30 --variant shaw -o bertshaw.npz
expect_ok "$POSENC" gen --encoding shaw --max-relative-position 3 --seq-len 10 --weights shaw.safetensors -o shaw.npz
expect_ok "$POSENC" gen --encoding shaw --max-relative-position 3 --seq-len 10 --weights shaw2.safetensors --tensor rel_k --dtype f16 -o shaw16.npz

$PY - <<'PY'
import numpy as np
from bias_util import load
from make_bias_golden import bucket_numpy

def buckets(q, k, bidir, nb=32, md=128):
    rel = np.arange(k)[None, :] - np.asarray(q)[:, None]
    return bucket_numpy(rel.ravel(), bidir, nb, md).reshape(rel.shape)

a, m = load("enc.npz")
assert a["buckets"].dtype == np.int32 and a["buckets"].shape == (300, 300)
assert m["kind"] == "encoder" and m["bidirectional"] is True and m["num_buckets"] == 32
assert np.array_equal(a["buckets"], buckets(range(300), 300, 1))
a, m = load("dec.npz")
assert m["kind"] == "decoder"
assert np.array_equal(a["buckets"], buckets(range(300), 300, 0))

enc, dec = np.load("enc.npy"), np.load("dec.npy")
a, m = load("encw.npz")
b = buckets(range(40), 40, 1)
assert a["bias"].shape == (8, 40, 40) and a["bias"].dtype == np.float32
# transformers: values = relative_attention_bias(buckets).permute([2, 0, 1])
assert np.array_equal(a["bias"], np.transpose(enc[b], (2, 0, 1)))
a, m = load("decw.h5")
assert a["bias"].dtype == np.float64
assert np.array_equal(a["bias"], np.transpose(dec[buckets(range(40), 40, 0)], (2, 0, 1)))
a, m = load("encbf.safetensors")
encbf = enc.view(np.uint32) + 0x7FFF + ((enc.view(np.uint32) >> 16) & 1)
encbf = (encbf & 0xFFFF0000).view(np.float32)
assert np.array_equal(a["bias"], np.transpose(encbf[buckets(range(12), 12, 1)], (2, 0, 1)))

a, m = load("grid.npz")
assert a["buckets"].shape == (4, 100)
assert np.array_equal(a["buckets"], buckets([0, 5, 40, 99], 100, 1, 16, 25))

a, m = load("bertrel.npz")
k = m["max_relative_position"]
assert k == 15 and a["index"].shape == (30, 30) and m["variant"] == "bert"
# transformers BertSelfAttention (relative_key): distance = position_ids_l - position_ids_r,
# distance_embedding(distance + max_position_embeddings - 1); clipped past the table
l = np.arange(30).reshape(-1, 1)
r = np.arange(30).reshape(1, -1)
assert np.array_equal(a["index"], np.clip(l - r, -k, k) + 16 - 1)
assert np.array_equal(a["index"][:16, :16], (l - r + 16 - 1)[:16, :16])
a, m = load("bertshaw.npz")
assert m["variant"] == "shaw"
assert np.array_equal(a["index"], np.clip(r - l, -k, k) + k)

rk = np.load("rk.npy")
a, m = load("shaw.npz")
idx = np.clip(np.arange(10)[None, :] - np.arange(10)[:, None], -3, 3) + 3
assert np.array_equal(a["index"], idx) and a["index"].min() == 0 and a["index"].max() == 6
assert a["rk"].shape == (10, 10, 5) and np.array_equal(a["rk"], rk[idx])
a, m = load("shaw16.npz")
assert a["rk"].dtype == np.float16 and np.array_equal(a["rk"], rk[idx].astype(np.float16))
print("t5/shaw ok")
PY

# bad inputs: one line, right exit code, no output
expect_fail 3 "has 16 rows" "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 8 --weights t5bad.safetensors -o o.npz
expect_fail 3 "no tensor 'nope'" "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 8 --weights t5.safetensors --tensor nope -o o.npz
expect_fail 3 "no tensor 'decoder.block.0" "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 8 --weights t5bf16.safetensors --decoder -o o.npz
expect_fail 3 "has 8 heads (columns), not 4" "$POSENC" gen --encoding t5 --heads 4 --seq-len 8 --weights t5.safetensors -o o.npz
expect_fail 2 "need at least 4" "$POSENC" gen --encoding t5 --num-buckets 3 --seq-len 8 -o o.npz
expect_fail 2 "max_distance 8 must exceed" "$POSENC" gen --encoding t5 --num-buckets 32 --max-distance 8 --seq-len 8 -o o.npz
expect_ok "$POSENC" gen --encoding t5 --num-buckets 32 --max-distance 9 --seq-len 8 -o ok.npz
expect_fail 2 "max_distance 16 must exceed" "$POSENC" gen --encoding t5 --decoder --num-buckets 32 --max-distance 16 --seq-len 8 -o o.npz
expect_fail 2 "--num-buckets" "$POSENC" gen --encoding t5 --decoder --num-buckets 1 --seq-len 8 -o o.npz
expect_fail 2 "--seq-len" "$POSENC" gen --config "$C/bias/t5-small.json" -o o.npz
expect_fail 2 "--convention does not apply to T5 tables" "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 8 --convention causal -o o.npz
expect_fail 2 "--array" "$POSENC" gen --config "$C/bias/t5-small.json" --seq-len 8 --weights t5.safetensors -o o.npy
expect_fail 2 "holds 2 tensors" "$POSENC" gen --encoding shaw --max-relative-position 3 --seq-len 4 --weights shaw2.safetensors -o o.npz
expect_fail 3 "has 5 rows, but max_relative_position 3 needs 2k+1 = 7" "$POSENC" gen --encoding shaw --max-relative-position 3 --seq-len 4 --weights shaw2.safetensors --tensor rel_v -o o.npz
expect_fail 2 "--max-relative-position" "$POSENC" gen --encoding shaw --seq-len 4 -o o.npz
expect_fail 2 "unknown Shaw variant 'x'" "$POSENC" gen --encoding shaw --max-relative-position 2 --seq-len 4 --variant x -o o.npz
expect_fail 3 "cannot open" "$POSENC" gen --encoding shaw --max-relative-position 3 --seq-len 4 --weights missing.safetensors -o o.npz
no_file o.npz o.npy
