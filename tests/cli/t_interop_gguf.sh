# t_interop_gguf.sh: GGUF files written by llama.cpp's own writer (gguf-py's GGUFWriter, from the
# llama.cpp source node-llama-cpp bundles; tests/interop/gguf_fixtures.sh fetches it) go through
# posenc ls, ls --meta, ls --json, convert and apply; numpy checks tensors, shapes, metadata types
# and values against what the writer was given. Skipped (with a line saying why) without npm or
# the network.
. "$SRC/tests/cli/lib.sh"

set +e
sh "$SRC/tests/interop/gguf_fixtures.sh" g > fixtures.log 2>&1
rc=$?
set -e
if [ "$rc" -eq 77 ]; then
    cat fixtures.log
    exit 77
fi
[ "$rc" -eq 0 ] || { cat fixtures.log; exit 1; }

for v in v3 v2; do
    expect_ok "$POSENC" ls g/$v.gguf
    cp out.stdout ls_$v.txt
    grep -q '^blk.0.q8.weight  *Q8_0  *(2, 64)  *136$' out.stdout
    grep -q '^token_embd.weight  *f16  *(4, 6)  *48$' out.stdout
    grep -q '^blk.0.ffn.bf16  *bf16  *(2, 3, 4)  *48$' out.stdout
    grep -q '^  t.arr_long: \[0, 1, 2, 3, 4, 5, 6, 7, ... (100 values)\]$' out.stdout
    expect_ok "$POSENC" ls --meta g/$v.gguf
    cp out.stdout meta_$v.txt
    grep -q '^t.nested  *array\[array\[int32\]\]  *\[\[1, 2\], \[3, 4, 5\]\]$' out.stdout
    grep -q '^t.u64  *uint64  *9007199254740992$' out.stdout
    expect_ok "$POSENC" ls --json g/$v.gguf
    cp out.stdout ls_$v.json
    expect_ok "$POSENC" ls --json --meta g/$v.gguf
    cp out.stdout meta_$v.json
    for t in rope_freqs.weight blk.0.attn_q.weight token_embd.weight blk.0.ffn.bf16; do
        expect_ok "$POSENC" convert "g/$v.gguf:$t" "${v}_$(echo $t | tr . _).npy"
    done
    expect_fail 3 "tensor 'blk.0.q8.weight' is Q8_0" "$POSENC" convert "g/$v.gguf:blk.0.q8.weight" q8.npy
    no_file q8.npy
    expect_fail 3 "is Q8_0" "$POSENC" convert "g/$v.gguf" all.npz
    no_file all.npz
done
cmp ls_v2.txt ls_v3.txt
cmp meta_v2.txt meta_v3.txt

"$PY" - <<'PY'
import json
import numpy as np
exp = json.load(open("g/expect.json"))
for v in ("v3", "v2"):
    ls = json.load(open(f"ls_{v}.json"))
    assert ls["format"] == "gguf", ls["format"]
    arrays = {a["name"]: a for a in ls["arrays"]}
    assert list(arrays) == list(exp["tensors"]), (list(arrays), list(exp["tensors"]))
    for name, e in exp["tensors"].items():
        a = arrays[name]
        assert a["dtype"] == e["dtype"] and a["shape"] == e["shape"], (name, a, e)
        assert a["ggml_type"] == e["ggml_type"], (name, a)
        if e["dtype"] == "Q8_0":
            continue
        got = np.load(f"{v}_{name.replace('.', '_')}.npy")
        want = np.load(f"g/T_{name.replace('.', '_')}.npy")
        assert got.shape == want.shape, (name, got.shape, want.shape)
        if e["dtype"] == "bf16":  # posenc writes bf16 NPY as '<V2' (ml_dtypes' layout)
            assert got.dtype.kind == "V" and got.dtype.itemsize == 2, got.dtype
            got = (got.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        assert np.array_equal(got.astype(np.float64), want.astype(np.float64)), name
    meta = json.load(open(f"meta_{v}.json"))
    assert "arrays" not in meta
    for m in (ls, meta):
        md, ty = m["metadata"], m["metadata_types"]
        assert list(md) == list(ty)
        for key, (t, val) in exp["metadata"].items():
            assert ty[key] == t, (key, ty[key], t)
            assert md[key] == val, (key, md[key], val)
        assert set(md) == set(exp["metadata"]), set(md) ^ set(exp["metadata"])
print("ok")
PY

# default alignment (32), a one-tensor file needs no member name
expect_ok "$POSENC" ls g/default.gguf
grep -q '^rope_freqs.weight  *f32  *(32,)  *128$' out.stdout
expect_ok "$POSENC" convert g/default.gguf one.npy
"$PY" -c "import numpy as np; assert np.array_equal(np.load('one.npy'), np.load('g/T_rope_freqs_weight.npy'))"

# a GGUF tensor feeds apply exactly as the same tensor in NPY does
cat > c.json <<'J'
{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_theta": 10000.0}
J
expect_ok "$POSENC" apply "g/v3.gguf:blk.0.attn_q.weight" --layout sd --config c.json -o rot_g.npy
expect_ok "$POSENC" apply g/T_blk_0_attn_q_weight.npy --layout sd --config c.json -o rot_n.npy
cmp rot_g.npy rot_n.npy
