# posenc convert: every readable format to every writable one with identical values (read back
# with numpy/h5py), f32 -> f16/bf16 rounding vs numpy/torch, NaN/Inf kept, metadata carried
# over, IN:MEMBER, stdout, and errors that leave no output.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
$PY - <<'PY'
import numpy as np
x = np.array([[0.0, -0.0, 1.5, np.nan, np.inf], [-np.inf, 1e-40, 3.4e38, -2.5, 65504.0],
              [65520.0, 1e-8, 6.1e-5, 0.1, 1 / 3]], dtype=np.float32)
y = np.linspace(-1, 1, 4).astype(np.float64)
z = np.array([[1, -2], [2**31 - 1, -2**31]], dtype=np.int32)
w = np.array([0.5, np.nan, -np.inf], dtype=np.float16)
np.savez("src.npz", x=x, y=y, z=z, w=w)
for k, v in dict(x=x, y=y, z=z, w=w).items():
    np.save(k + ".npy", v)
# many random float32 values over the whole range, plus halfway cases for f16 and bf16
rng = np.random.default_rng(3)
r = rng.standard_normal(20000).astype(np.float32) * np.float32(2.0) ** rng.integers(-30, 30, 20000).astype(np.float32)
bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
ties_bf = (bits & np.uint32(0xFFFF0000)) | np.uint32(0x8000)
ties_h = np.float16(rng.standard_normal(2000)).astype(np.float32).view(np.uint32) | np.uint32(0x1000)
vals = np.concatenate([r, bits.view(np.float32), ties_bf.view(np.float32), ties_h.view(np.float32)])
np.save("many.npy", vals)
PY

# src.npz -> every writable container, then every readable file -> every writable format
for o in npz safetensors h5 bin; do expect_ok "$POSENC" convert src.npz "s.$o"; done
expect_ok "$POSENC" convert src.npz sdir/
for i in src.npz s.npz s.safetensors s.h5 s.bin sdir/; do
    tag=$(echo "$i" | tr './' '__')
    for o in npz safetensors h5 bin; do
        expect_ok "$POSENC" convert "$i" "o_$tag.$o"
    done
    expect_ok "$POSENC" convert "$i" "o_${tag}_dir/"
    case $i in */) m="${i}y.npy" ;; *) m="$i:y" ;; esac
    expect_ok "$POSENC" convert "$m" "o_${tag}_y.npy"
    expect_ok "$POSENC" convert "$i" "o_$tag.h"
    grep -q 'x' "o_$tag.h"
done
for i in x.npy z.npy; do
    for o in npz safetensors h5 bin npy; do expect_ok "$POSENC" convert "$i" "o1_$i.$o"; done
done
$PY - <<'PY'
import glob, numpy as np
from bias_util import load
ref, _ = load("src.npz")
def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True) and \
        np.array_equal(np.signbit(a), np.signbit(b)) if a.dtype.kind == "f" else np.array_equal(a, b)
n = 0
for f in sorted(glob.glob("o_*") + glob.glob("s.*") + ["sdir"]):
    if f.endswith(".h") or f.endswith(".json"):
        continue
    arrs, _ = load(f if not f.endswith("dir") else f + "/")
    arrs = {k.lstrip("/"): v for k, v in arrs.items()}
    if f.endswith("_y.npy"):
        assert same(list(arrs.values())[0], ref["y"]), f
    else:
        assert set(arrs) == set(ref), (f, set(arrs))
        for k in ref:
            assert same(arrs[k], ref[k]), (f, k, arrs[k], ref[k])
    n += 1
for f in glob.glob("o1_*"):
    if f.endswith(".json"):
        continue
    arrs, _ = load(f)
    name = f.split("_")[1].split(".")[0]
    (v,) = arrs.values()
    assert same(v, ref[name]), f
    n += 1
assert n >= 45, n
print(n, "files identical")
PY

# the C header compiles
cc -std=c11 -fsyntax-only -x c o_src_npz.h

# dtype conversion: f32 -> f16 (numpy), f32 -> bf16 (torch), f64 -> f32, ints untouched
expect_ok "$POSENC" convert --dtype f16 many.npy many16.npy
expect_ok "$POSENC" convert --dtype bf16 many.npy manybf.safetensors
expect_ok "$POSENC" convert --dtype bf16 src.npz srcbf.h5
expect_ok "$POSENC" convert --dtype f32 src.npz src32.npz
expect_ok "$POSENC" convert --dtype f64 many.npy many64.npz
$PY - <<'PY'
import numpy as np, torch
from bias_util import load, bf16_bits_to_f32
v = np.load("many.npy")
with np.errstate(over="ignore"):
    h = v.astype(np.float16)
got = np.load("many16.npy")
assert got.dtype == np.float16
assert np.array_equal(got.view(np.uint16)[~np.isnan(h)], h.view(np.uint16)[~np.isnan(h)])
assert np.array_equal(np.isnan(got), np.isnan(h))
a, _ = load("manybf.safetensors")
want = torch.from_numpy(v).bfloat16().float().numpy()
b = list(a.values())[0]
ok = ~np.isnan(want)
assert np.array_equal(b[ok].view(np.uint32), want[ok].view(np.uint32)), "bf16 rounding"
assert np.array_equal(np.isnan(b), np.isnan(want))
a, _ = load("srcbf.h5")
a = {k.lstrip("/"): v for k, v in a.items()}
src, _ = load("src.npz")
assert a["z"].dtype == np.int32 and np.array_equal(a["z"], src["z"])
xb = torch.from_numpy(src["x"]).bfloat16().float().numpy()
assert np.array_equal(a["x"], xb, equal_nan=True)
assert np.isinf(a["x"][0, 4]) and np.isnan(a["x"][0, 3]) and np.isinf(a["x"][1, 0])
a, _ = load("src32.npz")
assert a["y"].dtype == np.float32 and np.array_equal(a["y"], src["y"].astype(np.float32))
assert a["w"].dtype == np.float32 and np.array_equal(a["w"], src["w"].astype(np.float32), equal_nan=True)
assert a["z"].dtype == np.int32
a, _ = load("many64.npz")
assert np.array_equal(a["many"], v.astype(np.float64), equal_nan=True)
print("dtype conversions ok")
PY

# metadata survives npz -> safetensors -> h5 -> dir -> npz
"$POSENC" gen --encoding alibi --heads 3 --seq-len 4 -o g.npz
expect_ok "$POSENC" convert g.npz g.safetensors
expect_ok "$POSENC" convert g.safetensors g.h5
expect_ok "$POSENC" convert g.h5 gdir/
expect_ok "$POSENC" convert gdir/ g2.npz
"$POSENC" ls --json g.npz > m1.json
"$POSENC" ls --json g2.npz > m2.json
$PY - <<'PY'
import json
a, b = json.load(open("m1.json")), json.load(open("m2.json"))
assert a["metadata"] == b["metadata"], (a["metadata"], b["metadata"])
assert a["metadata"]["convention"] == "keyindex" and len(a["metadata"]["slopes"]) == 3
print("metadata ok")
PY

# one array to stdout
"$POSENC" convert src.npz:x - > x_stdout.npy
$PY -c "import numpy as np; assert np.array_equal(np.load('x_stdout.npy'), np.load('x.npy'), equal_nan=True)"
# --assume-bf16 reads ml_dtypes-style '<V2' NPY
$PY -c "import numpy as np; np.save('v2.npy', np.array([0x3f80, 0xc000, 0x7f80], dtype=np.uint16).view('V2'))"
expect_fail 3 "bf16" "$POSENC" convert v2.npy v2.safetensors
no_file v2.safetensors
expect_ok "$POSENC" convert --assume-bf16 --dtype f32 v2.npy v2.npz
$PY -c "import numpy as np; v = np.load('v2.npz')['v2']; assert v.dtype == np.float32 and list(v) == [1.0, -2.0, np.inf], v"

# errors: exit code, one line, input untouched, no output
cp src.npz keep.npz
expect_fail 2 "refusing to overwrite an input" "$POSENC" convert src.npz src.npz
expect_fail 2 "refusing to overwrite an input ('src.npz')" "$POSENC" convert src.npz ./src.npz
cmp src.npz keep.npz
expect_fail 3 "no array 'nope'" "$POSENC" convert src.npz:nope o.npz
expect_fail 2 "NPY holds one" "$POSENC" convert src.npz o.npy
expect_fail 2 "--dtype" "$POSENC" convert --dtype i32 src.npz o.npz
expect_fail 2 "--format" "$POSENC" convert --format xyz src.npz o.npz
expect_fail 2 "cannot tell the output format" "$POSENC" convert src.npz o.weird
expect_fail 2 "missing OUT" "$POSENC" convert src.npz
expect_fail 2 "missing IN and OUT" "$POSENC" convert
expect_fail 2 "unexpected argument" "$POSENC" convert src.npz o.npz extra
expect_fail 3 "'missing.npz'" "$POSENC" convert missing.npz o.npz
# a truncated input fails mid-stream and leaves nothing behind
$PY -c "
d = open('many.npy', 'rb').read()
open('short.npy', 'wb').write(d[:len(d) // 2])"
expect_fail 3 "short.npy" "$POSENC" convert short.npy o.npz
expect_fail 3 "short.npy" "$POSENC" convert short.npy o.h5
no_file o.npz o.npy o.h5 o.weird
"$POSENC" convert --help | grep -q '^usage: posenc convert'
