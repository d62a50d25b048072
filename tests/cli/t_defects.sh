# The new-user defects of issue 12, one check each (every one failed before its fix):
# apply without -o, a typo'd output extension, a default-sized C header, ls of a file or
# directory that holds no arrays, posenc's own bf16 .npy in ls, binary on a terminal, a bad
# POSENC_THREADS, --config DIR/.
. "$SRC/tests/cli/lib.sh"
CFG="$SRC/examples/qwen3.5-27b.json"
$PY - <<'PY'
import numpy as np
rng = np.random.default_rng(1)
np.save("q.npy", rng.standard_normal((1, 2, 8, 256)).astype(np.float32))
np.save("k.npy", rng.standard_normal((1, 1, 8, 256)).astype(np.float32))
PY

# apply X without -o writes X.rope.EXT beside it, the same values as -o
expect_ok "$POSENC" apply q.npy --config "$CFG"
expect_ok "$POSENC" apply q.npy --config "$CFG" -o q-o.npy
cmp q.rope.npy q-o.npy
# a typo'd extension is refused (exit 2), for Q K too, and creates nothing
expect_fail 2 "'rotated.npzz': cannot tell the output format from the name" \
    "$POSENC" apply q.npy k.npy --config "$CFG" -o rotated.npzz
no_file rotated.npzz
expect_fail 2 "'r.npzz': cannot tell the output format" "$POSENC" apply q.npy --config "$CFG" -o r.npzz
no_file r.npzz
# a name without an extension is still a new directory of q.npy and k.npy
expect_ok "$POSENC" apply q.npy k.npy --config "$CFG" -o rotated
test -f rotated/q.npy && test -f rotated/k.npy

# gen -o X.h without --seq-len: Qwen3.5's 262144 default rows would be a ~480 MiB header
expect_fail 3 "'big.h': a C header of all 262144 default positions would hold 33554464 values (about 480.0 MiB of text); pass --seq-len N, --positions or --force" \
    "$POSENC" gen --config "$CFG" -o big.h
no_file big.h
expect_ok "$POSENC" gen --config "$CFG" -o small.h --seq-len 16
grep -q '^#define POSENC_SMALL_COS_DIM0 16$' small.h
# a small model's default rows are fine (falcon-7b: 2048 x 64 x 2 values)
expect_ok "$POSENC" gen --config "$DATA/configs/falcon-7b.json" -o falcon.h
test -s falcon.h

# ls of a file or directory without arrays fails with one line instead of an empty table
$PY -c "import torch; torch.save({'a': torch.zeros(3)}, 'real.pt')"
expect_fail 3 "'real.pt': a ZIP archive without .npy members (real/data.pkl: a PyTorch checkpoint or another kind of zip), not NPZ" \
    "$POSENC" ls real.pt
[ ! -s out.stdout ]
mkdir etc && echo x > etc/passwd
expect_fail 3 "'etc': a directory without .npy files or meta.json, not a directory of arrays" \
    "$POSENC" ls etc
[ ! -s out.stdout ]
# an NPZ of no arrays (np.savez()) is still an empty listing
$PY -c "import numpy as np; np.savez('empty.npz')"
expect_ok "$POSENC" ls empty.npz

# posenc's own bf16 .npy is listed without a flag (dtype <V2 and one line on stderr), and a
# directory with one such member lists every member
expect_ok "$POSENC" gen --config "$CFG" --seq-len 4 --array cos --dtype bf16 -o cos16.npy
expect_ok "$POSENC" ls cos16.npy
grep -q '^cos16  *<V2  *(4, 64)  *512$' out.stdout
grep -q "^posenc ls: 'cos16.npy': array 'cos16' has the opaque NPY dtype '<V2'.*pass --assume-bf16" out.stderr
mkdir mixed && cp cos16.npy mixed/ && cp q.npy mixed/
expect_ok "$POSENC" ls mixed
grep -q '^cos16  *<V2  *(4, 64)  *512$' out.stdout
grep -q '^q  *f32  *(1, 2, 8, 256)  *16384$' out.stdout
expect_ok "$POSENC" ls --assume-bf16 mixed
grep -q '^cos16  *bf16  *(4, 64)  *512$' out.stdout
[ ! -s out.stderr ]

# POSENC_THREADS must be an integer in [1, 64]
for v in abc 0 65 2x; do
    POSENC_THREADS=$v expect_fail 2 "posenc gen: POSENC_THREADS: '$v' is not an integer in [1, 64]" \
        "$POSENC" gen --config "$CFG" --seq-len 4 -o thr.npz
done
no_file thr.npz
POSENC_THREADS=3 expect_ok "$POSENC" gen --config "$CFG" --seq-len 4 -o thr.npz

# --config DIR/ reads DIR/config.json in every command that takes one
mkdir model && cp "$CFG" model/config.json
expect_ok "$POSENC" gen --config model/ --seq-len 4 -o m1.npz
expect_ok "$POSENC" gen --config "$CFG" --seq-len 4 -o m2.npz
expect_ok "$POSENC" apply q.npy --config model -o qd.npy
cmp qd.npy q-o.npy
expect_ok "$POSENC" info --config model/
expect_ok "$POSENC" verify --config model/ -q
mkdir nomodel
expect_fail 3 "nomodel" "$POSENC" gen --config nomodel/ --seq-len 4 -o m3.npz

# '-o -' (binary NPY) onto a terminal is refused (exit 2, nothing written); a pipe still works
cat > tty_out.py <<'PY'
import os, subprocess, sys, tty
master, slave = os.openpty()
tty.setraw(slave)
p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
os.close(slave)
os.set_blocking(master, False)
try:
    got = os.read(master, 1 << 16)
except OSError:  # EAGAIN or EIO: nothing was written to the terminal
    got = b""
assert p.returncode == 2, (p.returncode, p.stderr)
assert got == b"", got[:40]
err = p.stderr.decode()
assert err.startswith("posenc ") and "'-': standard output is a terminal and NPY is binary" in err, err
PY
$PY tty_out.py "$POSENC" gen --config "$CFG" --array cos --seq-len 2 -o -
$PY tty_out.py "$POSENC" apply q.npy --config "$CFG" -o -
$PY tty_out.py "$POSENC" convert q.npy -
"$POSENC" gen --config "$CFG" --array cos --seq-len 2 -o - | cat > cos-pipe.npy
$PY -c "import numpy as np; assert np.load('cos-pipe.npy').shape == (2, 64)"

# metadata keep their JSON types where the format allows: safetensors strings are plain text
# ('neox', not '"neox"'), HDF5 attributes are typed (theta 10000000 an int64, not '10000000');
# posenc reads both back as the values of the NPZ's meta.json. The config is named "1e7" so
# that its name (a string that reads as a number) must keep its quotes.
cp "$CFG" 1e7
for f in m.npz m.safetensors m.h5; do
    expect_ok "$POSENC" gen --config 1e7 --seq-len 4 -o "$f"
    "$POSENC" ls --json "$f" > "$f.json"
done
$PY - <<'PY'
import json, struct, h5py, numpy as np, zipfile
ref = json.load(open("m.npz.json"))["metadata"]
assert ref == json.loads(zipfile.ZipFile("m.npz").read("meta.json")), "ls of npz != meta.json"
for f in ("m.safetensors", "m.h5"):
    got = json.load(open(f + ".json"))["metadata"]
    assert got == ref, (f, {k: (ref[k], got.get(k)) for k in ref if ref[k] != got.get(k)})
b = open("m.safetensors", "rb").read()
md = json.loads(b[8:8 + struct.unpack("<Q", b[:8])[0]])["__metadata__"]
assert md["style"] == "neox" and md["family"] == "qwen3_5_text" and md["theta"] == "10000000", md
assert md["config"] == '"1e7"' and md["mrope_section"] == "[11, 11, 10]", md
assert md["layer_type"] == "null" and md["mrope_interleaved"] == "true", md
with h5py.File("m.h5", "r") as h:
    a = h.attrs
    assert a["theta"] == 10000000 and a["theta"].dtype == np.int64, repr(a["theta"])
    assert a["style"] == "neox" and a["config"] == '"1e7"', (a["style"], a["config"])
    assert a["partial_rotary_factor"] == 0.25 and a["partial_rotary_factor"].dtype == np.float64
    assert a["mrope_interleaved"].dtype == np.bool_ and bool(a["mrope_interleaved"])
    assert a["mrope_section"].tolist() == [11, 11, 10]
    assert isinstance(a["layer_type"], h5py.Empty)
    assert [str(x) for x in a["notes"]] == ref["notes"]
PY
