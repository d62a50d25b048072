# posenc gen output formats: NPZ (stored and --compress), a directory, NPY (--array), NPY on
# stdout, HDF5, safetensors, C header and raw .bin: the same numbers in each, read back by
# numpy/h5py/a hand parser/a C compiler, with metadata where the format carries it.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
cat > tiny.json <<'EOF'
{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
 "max_position_embeddings": 40, "rope_theta": 10000.0}
EOF
g() { expect_ok "$POSENC" gen --config tiny.json "$@"; }

g -o ref.npz
g -o z.npz --compress
g -o d/
mkdir existing
g -o existing
g -o cos.npy --array cos
g -o inv.npy --array inv_freq --dtype f64
g -o sin.bin.npy --format npy --array sin
g -o - --array sin --dtype f16
mv out.stdout stdout.npy
test ! -s out.stderr
g -o sinonly.npz --array sin

"$PY" - <<'EOF'
import zipfile
import numpy as np
import gen_ref as R

ref, meta = R.load("ref.npz")
assert sorted(ref) == ["cos", "inv_freq", "sin"] and meta["rotary_dim"] == 16
with zipfile.ZipFile("ref.npz") as z:
    names = [i.filename for i in z.infolist()]
    assert names[:3] == ["cos.npy", "sin.npy", "inv_freq.npy"], names
    assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
with zipfile.ZipFile("z.npz") as z:
    kinds = {i.filename: i.compress_type for i in z.infolist()}
    assert kinds["cos.npy"] == zipfile.ZIP_DEFLATED, kinds
for f in ("z.npz", "d", "existing"):
    a, m = R.load(f)
    assert sorted(a) == sorted(ref), (f, sorted(a))
    for k in ref:
        assert (a[k] == ref[k]).all(), (f, k)
    assert m == meta, f
# numpy reads them all directly
n = np.load("ref.npz")
assert n["cos"].dtype == np.float32 and n["cos"].shape == (40, 16)
assert (np.load("d/cos.npy") == n["cos"]).all()
assert (np.load("cos.npy") == n["cos"]).all() and np.load("cos.npy").shape == (40, 16)
assert (np.load("sin.bin.npy") == n["sin"]).all()
inv = np.load("inv.npy")
assert inv.dtype == np.float64 and inv.shape == (8,)
R.check_rounded("inv f64", inv, R.inv_default(10000.0, 16), "f64", min_exact=0.9)
s16 = np.load("stdout.npy")
assert s16.dtype == np.float16 and s16.shape == (40, 16)
c, s, err = R.cossin_exact(R.inv_default(10000.0, 16), np.arange(40))
R.check_rounded("stdout f16", s16.astype(np.float64), s, "f16", err, min_exact=1.0)
a, m = R.load("sinonly.npz")
assert sorted(a) == ["sin"] and (a["sin"] == ref["sin"]).all()
EOF

# ---- the other backends: checked whenever they are built into this posenc ----
have() { # have FORMAT FILE: does this posenc write the format?
    "$POSENC" gen --config tiny.json --seq-len 2 --format "$1" -o "probe.$2" 2> probe.err && return 0
    if grep -q "not built\|not supported\|unsupported" probe.err; then
        echo "note: $1 writer not built; skipping"; return 1
    fi
    cat probe.err; exit 1
}

if have hdf5 h5; then
    g -o t.h5
    g -o tz.h5 --compress --dtype bf16
    "$PY" - <<'EOF'
import h5py, numpy as np
import gen_ref as R
ref, meta = R.load("ref.npz")
a, m = R.load("t.h5")
for k in ref:
    assert (a[k] == ref[k]).all(), k
assert m is not None and m.get("rotary_dim") == 16, m
with h5py.File("tz.h5") as f:
    assert f["cos"].compression == "gzip", f["cos"].compression
b, _ = R.load("tz.h5", "bf16")
c, s, err = R.cossin_exact(R.inv_default(10000.0, 16), np.arange(40))
R.check_rounded("h5 bf16 cos", b["cos"], c, "bf16", err, min_exact=1.0)
EOF
fi

if have safetensors safetensors; then
    g -o t.safetensors
    g -o b.safetensors --dtype bf16
    "$PY" - <<'EOF'
import numpy as np
import gen_ref as R
ref, meta = R.load("ref.npz")
a, m = R.load("t.safetensors")
for k in ref:
    assert (a[k] == ref[k]).all(), k
assert m is not None and m["rotary_dim"] == 16 and m["layout"] == "hf", m
b, _ = R.load("b.safetensors", "bf16")
c, s, err = R.cossin_exact(R.inv_default(10000.0, 16), np.arange(40))
R.check_rounded("st bf16 cos", b["cos"], c, "bf16", err, min_exact=1.0)
R.check_rounded("st bf16 sin", b["sin"], s, "bf16", err, min_exact=1.0)
# torch's own reader agrees (safetensors is how PyTorch users would load it)
try:
    from safetensors.numpy import load_file
except ImportError:
    load_file = None
if load_file:
    t = load_file("t.safetensors")
    assert (t["cos"] == ref["cos"]).all()
EOF
fi

if have raw bin; then
    g -o t.bin
    test -s t.bin
    "$PY" - <<'EOF'
import json, os
import numpy as np
import gen_ref as R
ref, meta = R.load("ref.npz")
side = [f for f in ("t.bin.json", "t.json") if os.path.exists(f)]
assert side, "no .json sidecar beside t.bin"
j = json.load(open(side[0]))
buf = open("t.bin", "rb").read()
# the sidecar lists each array with dtype, shape and byte offset
entries = j.get("arrays", j.get("tensors", j))
if isinstance(entries, dict):
    entries = [dict(v, name=k) for k, v in entries.items() if isinstance(v, dict) and "shape" in v]
found = 0
for e in entries:
    name = e["name"]
    if name not in ref:
        continue
    off = e.get("offset", e.get("byte_offset", (e.get("data_offsets") or [None])[0]))
    n = int(np.prod(e["shape"]))
    v = np.frombuffer(buf, dtype="<f4", count=n, offset=off).reshape(e["shape"])
    assert (v == ref[name]).all(), name
    found += 1
assert found == 3, (found, j)
EOF
fi

if have header h; then
    g -o rope.h --seq-len 5
    # the header compiles into a C11 program (warnings are errors) that prints every value
    cat > main.c <<'EOF'
#include <stdio.h>
#include "rope.h"
static void dump(const char *name, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s %a\n", name, (double)v[i]);
}
int main(void)
{
    dump("cos", &posenc_rope_cos[0][0], POSENC_ROPE_COS_DIM0 * POSENC_ROPE_COS_DIM1);
    dump("sin", &posenc_rope_sin[0][0], POSENC_ROPE_SIN_DIM0 * POSENC_ROPE_SIN_DIM1);
    dump("inv_freq", posenc_rope_inv_freq, POSENC_ROPE_INV_FREQ_DIM0);
    return POSENC_ROPE_ROTARY_DIM == 16 && POSENC_ROPE_SEQ_LEN == 5 ? 0 : 1;
}
EOF
    cc -std=c11 -Wall -Wextra -Wpedantic -Werror -o main main.c
    ./main > values.txt
    "$PY" - <<'EOF'
import numpy as np
import gen_ref as R
ref, _ = R.load("ref.npz")
got = {"cos": [], "sin": [], "inv_freq": []}
for line in open("values.txt"):
    k, v = line.split()
    got[k].append(float.fromhex(v))
assert (np.array(got["cos"]) == ref["cos"][:5].ravel()).all()
assert (np.array(got["sin"]) == ref["sin"][:5].ravel()).all()
assert (np.array(got["inv_freq"]) == ref["inv_freq"]).all()
EOF
fi
no_file nothing
