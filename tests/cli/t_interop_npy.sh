# t_interop_npy.sh: NumPy <-> posenc through the CLI. Files np.save/np.savez wrote (versions
# 1/2/3, a header over 64 KiB, big-endian, Fortran order, stored and deflated archives, void bf16)
# go through posenc ls/convert, and numpy checks every output exactly; broken files give one
# error line and leave no output behind.
. "$SRC/tests/cli/lib.sh"

"$PY" - <<'PYEOF'
import numpy as np
from numpy.lib import format as npf
i = np.arange(240)
v = ((i % 251) * 0.5 - 60)
np.save("v1.npy", v.astype("<f4").reshape(4, 6, 10))
with open("v2.npy", "wb") as f:
    npf.write_array(f, v.reshape(24, 10), version=(2, 0))
with open("v3.npy", "wb") as f:
    npf.write_array(f, v.astype("<f2").reshape(240), version=(3, 0))
np.save("be.npy", v.astype(">f8").reshape(12, 20))
np.save("bei.npy", (i * 3 - 7).astype(">i4").reshape(12, 20))
np.save("fort.npy", np.asfortranarray(v.reshape(8, 30)))
np.save("scalar.npy", np.float64(2.5))
np.save("u8.npy", (i % 256).astype("u1"))
# version 2.0 with a header longer than 65535 bytes
d0 = "{'descr': '<f8', 'fortran_order': False, 'shape': (240,), }"
hlen = 70000 + (64 - (12 + 70000) % 64) % 64
hdr = d0 + " " * (hlen - len(d0) - 1) + "\n"
with open("big_header.npy", "wb") as f:
    f.write(b"\x93NUMPY\x02\x00" + len(hdr).to_bytes(4, "little") + hdr.encode())
    f.write(v.tobytes())
assert np.array_equal(np.load("big_header.npy", max_header_size=10**6), v)
arrs = {"cos": v.astype("<f4").reshape(20, 12), "pos": (i - 5).astype("<i8"),
        "be": v.astype(">f8"), "fort": np.asfortranarray(v.reshape(10, 24))}
np.savez("s.npz", **arrs)
np.savez_compressed("c.npz", **arrs)
bf = (v.astype("<f4").view("<u4") >> 16).astype("<u2")
np.save("bf.npy", bf.view("V2"))
raw = open("v1.npy", "rb").read()
open("trunc.npy", "wb").write(raw[:-7])
z = bytearray(open("c.npz", "rb").read())
z[200] ^= 0x55
open("corrupt.npz", "wb").write(bytes(z))
PYEOF

# ls sees what numpy wrote
expect_ok "$POSENC" ls big_header.npy
grep -q '(240,)' out.stdout
expect_ok "$POSENC" ls --json s.npz
grep -q '"cos"' out.stdout
grep -q '"fort"' out.stdout

# NPY -> NPY, -> NPZ (stored and deflated), -> directory; back through numpy exactly
for f in v1 v2 v3 be bei fort scalar u8 big_header; do
    expect_ok "$POSENC" convert "$f.npy" "out_$f.npy"
done
expect_ok "$POSENC" convert s.npz out_s.npz
expect_ok "$POSENC" convert --compress c.npz out_c.npz
expect_ok "$POSENC" convert s.npz out_dir/
# stdin and stdout
"$POSENC" convert s.npz:cos - > out_cos.npy
"$POSENC" convert - out_stdin.npy < be.npy
cat fort.npy | "$POSENC" convert - out_pipe.npz
# bf16 stored as void needs the flag
expect_fail 3 "pass --assume-bf16" "$POSENC" convert bf.npy out_bf.npy
no_file out_bf.npy
expect_ok "$POSENC" convert --assume-bf16 --dtype f32 bf.npy out_bf.npy

"$PY" - <<'PYEOF'
import json, zipfile
import numpy as np
def same(a, b, what):
    assert a.shape == b.shape, (what, a.shape, b.shape)
    assert a.dtype.kind == b.dtype.kind and a.dtype.itemsize == b.dtype.itemsize, (what, a.dtype, b.dtype)
    assert np.array_equal(a, b), what
    assert a.dtype.byteorder in "<|=", (what, a.dtype)   # posenc writes native little-endian
for f in "v1 v2 v3 be bei fort scalar u8".split():
    same(np.load(f"out_{f}.npy"), np.load(f"{f}.npy"), f)
same(np.load("out_big_header.npy"), np.load("big_header.npy", max_header_size=10**6), "big")
src = np.load("s.npz")
for out in ("out_s.npz", "out_c.npz"):
    o = np.load(out)
    for k in ("cos", "pos", "be", "fort"):
        same(o[k], src[k], f"{out}:{k}")
    json.loads(o["meta.json"])
with zipfile.ZipFile("out_c.npz") as z:
    assert z.testzip() is None
    assert z.getinfo("cos.npy").compress_type == zipfile.ZIP_DEFLATED
for k in ("cos", "pos", "be", "fort"):
    same(np.load(f"out_dir/{k}.npy"), src[k], f"dir:{k}")
same(np.load("out_cos.npy"), src["cos"], "stdout")
same(np.load("out_stdin.npy"), np.load("be.npy"), "stdin")
p = np.load("out_pipe.npz")
same(p["arr_0"], np.load("fort.npy"), "pipe")
bf = np.load("out_bf.npy")
v = ((np.arange(240) % 251) * 0.5 - 60).astype("<f4")
assert bf.dtype == np.float32 and np.array_equal(bf, v)
PYEOF

# broken inputs: one line, exit 3, nothing written
expect_fail 3 "truncated data" "$POSENC" convert trunc.npy out_t.npy
no_file out_t.npy
expect_fail 3 "corrupt" "$POSENC" convert corrupt.npz out_x.npz
no_file out_x.npz
[ "$(wc -l < out.stderr)" -eq 1 ]
expect_fail 3 "no array 'nope'" "$POSENC" convert s.npz:nope out_n.npy
no_file out_n.npy
