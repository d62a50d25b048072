# posenc ls: arrays and metadata of every readable format, text and JSON; errors.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
$PY - <<'PY'
import numpy as np, h5py
from bias_util import write_safetensors
np.save("a.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
np.savez("b.npz", x=np.arange(6, dtype=np.float64), y=np.ones((2, 3), dtype=np.int32))
with h5py.File("c.h5", "w") as f:
    f.create_dataset("g/x", data=np.zeros((2, 5, 7), dtype=np.float16))
    f.attrs["note"] = "hello"
write_safetensors("d.safetensors", {"wpe.weight": np.zeros((16, 4), dtype=np.float32)},
                  metadata={"format": "pt"})
np.save("v2.npy", np.zeros(5, dtype="V2"))
with open("trunc.npy", "wb") as f:
    f.write(open("a.npy", "rb").read()[:20])
PY
"$POSENC" gen --encoding alibi --heads 4 --seq-len 3 -o g.npz
"$POSENC" convert b.npz raw.bin
"$POSENC" convert b.npz dir/

expect_ok "$POSENC" ls a.npy
grep -q '^name  *dtype  *shape  *bytes$' out.stdout
grep -q '^a  *f32  *(3, 4)  *48$' out.stdout
expect_ok "$POSENC" ls b.npz
grep -q '^x  *f64  *(6,)  *48$' out.stdout
grep -q '^y  *i32  *(2, 3)  *24$' out.stdout
[ "$(wc -l < out.stdout)" -eq 3 ]
expect_ok "$POSENC" ls c.h5
grep -q 'g/x  *f16  *(2, 5, 7)  *140$' out.stdout
grep -q 'note: "hello"' out.stdout
expect_ok "$POSENC" ls d.safetensors
grep -q '^wpe.weight  *f32  *(16, 4)  *256$' out.stdout
grep -q 'format: "pt"' out.stdout
expect_ok "$POSENC" ls raw.bin
grep -q '^y  *i32  *(2, 3)  *24$' out.stdout
expect_ok "$POSENC" ls dir/
grep -q '^x  *f64  *(6,)  *48$' out.stdout
expect_ok "$POSENC" ls g.npz
grep -q '^bias  *f32  *(4, 3, 3)  *144$' out.stdout
grep -q '^metadata:$' out.stdout
grep -q '^  encoding: "alibi"$' out.stdout
grep -q '^  heads: 4$' out.stdout
expect_ok "$POSENC" ls --assume-bf16 v2.npy
grep -q '^v2  *bf16  *(5,)  *10$' out.stdout

# --json
"$POSENC" ls --json g.npz > g.json
"$POSENC" ls --json c.h5 > c.json
"$POSENC" ls --json a.npy > a.json
$PY - <<'PY'
import json
g = json.load(open("g.json"))
assert g["file"] == "g.npz" and g["format"] == "npz", g
assert g["arrays"] == [{"name": "slopes", "dtype": "f32", "shape": [4], "bytes": 16},
                       {"name": "bias", "dtype": "f32", "shape": [4, 3, 3], "bytes": 144}], g
assert g["metadata"]["encoding"] == "alibi" and g["metadata"]["heads"] == 4
assert len(g["metadata"]["slopes"]) == 4
c = json.load(open("c.json"))
assert c["format"] == "hdf5" and c["arrays"][0]["shape"] == [2, 5, 7] and c["arrays"][0]["dtype"] == "f16"
assert c["metadata"]["note"] == "hello"
a = json.load(open("a.json"))
assert a["format"] == "npy" and a["metadata"] == {} and a["arrays"][0]["bytes"] == 48
print("json ok")
PY

# errors: one line, exit code, nothing on stdout
expect_fail 3 "'missing.npy'" "$POSENC" ls missing.npy
[ ! -s out.stdout ]
expect_fail 3 "'trunc.npy'" "$POSENC" ls trunc.npy
[ ! -s out.stdout ]
# an opaque '|V2' array is listed as such, with one line naming --assume-bf16; its data is refused
expect_ok "$POSENC" ls v2.npy
grep -q '^v2  *|V2  *(5,)  *10$' out.stdout
[ "$(wc -l < out.stderr)" -eq 1 ]
grep -q "^posenc ls: 'v2.npy': array 'v2' has the opaque NPY dtype '|V2' .*pass --assume-bf16" out.stderr
expect_ok "$POSENC" ls --json v2.npy
$PY -c "import json; a = json.load(open('out.stdout'))['arrays'][0]; assert a['dtype'] == '|V2' and a['readable'] is False and a['bytes'] == 10, a"
expect_fail 3 "pass --assume-bf16" "$POSENC" convert v2.npy v2-out.npy
no_file v2-out.npy
echo "not an array" > junk.npy
expect_fail 3 "'junk.npy'" "$POSENC" ls junk.npy
expect_fail 2 "missing FILE" "$POSENC" ls
expect_fail 2 "unexpected argument 'b.npz'" "$POSENC" ls a.npy b.npz
expect_fail 2 "--dtype: only bf16" "$POSENC" ls --dtype f16 a.npy
expect_fail 2 "unknown option" "$POSENC" ls --frobnicate a.npy
"$POSENC" ls --help | grep -q '^usage: posenc ls'
