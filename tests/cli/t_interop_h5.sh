# HDF5, safetensors and raw files through the CLI: h5py's nested groups and opaque bf16 read by
# FILE:MEMBER, the one-line errors for bad files (exit 3, nothing left behind), and a bad raw
# sidecar.
. "$SRC/tests/cli/lib.sh"

if "$PY" -c 'import numpy, h5py' 2>/dev/null; then
    "$PY" - <<'EOF'
import numpy as np, h5py
with h5py.File("py.h5", "w") as f:
    f["layer0/q"] = np.arange(24, dtype=">f4").reshape(2, 3, 4) / 8
    f.create_dataset("layer0/k", data=np.arange(4000, dtype="<f8").reshape(40, 100),
                     chunks=(7, 9), compression="gzip", shuffle=True)
    f["opaque"] = np.array([0x3f80, 0xc040], dtype="<u2").view("V2")
    f.attrs["theta"] = "10000"
EOF
    expect_ok "$POSENC" ls py.h5
    grep -q '/layer0/q' out.stdout
    grep -q '/layer0/k' out.stdout
    expect_ok "$POSENC" convert py.h5:/layer0/q q.npy
    expect_ok "$POSENC" convert py.h5:layer0/k k.safetensors
    expect_ok "$POSENC" convert --assume-bf16 py.h5:/opaque b.safetensors
    "$PY" - <<'EOF'
import json, struct, numpy as np
assert (np.load("q.npy") == np.arange(24, dtype="f4").reshape(2, 3, 4) / 8).all()
b = open("k.safetensors", "rb").read()
n, = struct.unpack("<Q", b[:8])
h = json.loads(b[8:8 + n])
e = [v for k, v in h.items() if k != "__metadata__"][0]
assert e["dtype"] == "F64" and e["shape"] == [40, 100], e
assert (np.frombuffer(b[8 + n:], "<f8") == np.arange(4000)).all()
b = open("b.safetensors", "rb").read()
n, = struct.unpack("<Q", b[:8])
e = [v for k, v in json.loads(b[8:8 + n]).items() if k != "__metadata__"][0]
assert e["dtype"] == "BF16", e
assert np.frombuffer(b[8 + n:], "<u2").tolist() == [0x3f80, 0xc040]
EOF
    expect_fail 3 "no array '/layer0/v'" "$POSENC" convert py.h5:/layer0/v v.npy
    no_file v.npy
    # without --assume-bf16 the opaque dataset is not listed
    expect_fail 3 "no array '/opaque'" "$POSENC" convert py.h5:/opaque v.npy
    no_file v.npy

    # a 1,400-byte file declaring 2^40 unwritten elements (8 TB of fill values) is refused
    # when opened, before anything is written; so is a dataset of unallocated chunks
    "$PY" - <<'EOF'
import os, h5py
with h5py.File("small.h5", "w") as f:
    f.create_dataset("x", shape=(2**40,), dtype="f8")
assert os.path.getsize("small.h5") == 1400, os.path.getsize("small.h5")
with h5py.File("chunks.h5", "w") as f:
    f.create_dataset("x", shape=(2**40,), dtype="f8", chunks=(1024,))[:1024] = 1
EOF
    set +e
    timeout 60 "$POSENC" convert small.h5 out.npy > /dev/null 2> err.txt
    rc=$?
    set -e
    [ "$rc" -eq 3 ] || { echo "2^40 unwritten elements: exit $rc"; cat err.txt; exit 1; }
    [ "$(cat err.txt)" = "posenc convert: 'small.h5': dataset '/x' declares 8796093022208 bytes, but the file (1400 bytes) holds at most 0 of them (the rest was never written)" ] ||
        { cat err.txt; exit 1; }
    no_file out.npy
    expect_fail 3 "'chunks.h5': dataset '/x' declares 8796093022208 bytes, but the file" \
        timeout 60 "$POSENC" convert chunks.h5 out.npz
    [ "$(wc -l < out.stderr)" -eq 1 ] || { cat out.stderr; exit 1; }
    no_file out.npz
fi

# not HDF5, truncated HDF5
printf 'just text\n' > notes.h5
expect_fail 3 "'notes.h5': not an HDF5 file" "$POSENC" ls notes.h5
"$POSENC" gen --config "$DATA/configs/llama-3.1-8b.json" --seq-len 64 -o t.h5
head -c 3000 t.h5 > cut.h5
set +e
"$POSENC" convert cut.h5:cos cut.npy > /dev/null 2> err.txt
rc=$?
set -e
[ "$rc" -eq 3 ] || { echo "truncated HDF5: exit $rc"; cat err.txt; exit 1; }
grep -q "^posenc convert: .*cut.h5" err.txt || { cat err.txt; exit 1; }
[ "$(wc -l < err.txt)" -eq 1 ] || { echo "more than one error line"; cat err.txt; exit 1; }
no_file cut.npy

# safetensors: a hole in the offsets, a header length past the end
"$PY" - <<'EOF'
import json, struct
h = json.dumps({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}).encode()
open("hole.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + bytes(8))
open("past.safetensors", "wb").write(struct.pack("<Q", 4096) + b"{}")
EOF
expect_fail 3 "'hole.safetensors': tensor 'a' starts at byte 4 of the buffer, expected 0 (hole)" \
    "$POSENC" ls hole.safetensors
expect_fail 3 "'past.safetensors': safetensors header length 4096 runs past the end" \
    "$POSENC" convert past.safetensors out.npz
no_file out.npz

# raw: a sidecar that promises more bytes than the .bin holds
"$POSENC" gen --config "$DATA/configs/llama-3.1-8b.json" --seq-len 8 -o r.bin
test -s r.bin && test -s r.json
expect_ok "$POSENC" ls r.json
grep -q cos out.stdout
sed 's/"nbytes":[[:space:]]*[0-9]*/"nbytes": 999999/' r.json > r2.json
cp r.bin r2.bin
expect_fail 3 "'r2.json': array 'cos' has nbytes 999999" "$POSENC" ls r2.bin
truncate -s 100 r.bin
expect_fail 3 "lies past the end of the file (100 bytes)" "$POSENC" convert r.bin:sin s.npy
no_file s.npy

# C header output compiles and names the prefix after the file
"$POSENC" gen --config "$DATA/configs/llama-3.1-8b.json" --seq-len 4 -o my-rope.h
grep -q '^#define POSENC_MY_ROPE_COS_DIM0 4$' my-rope.h
printf '#include "my-rope.h"\nfloat f(void) { return posenc_my_rope_cos[3][1]; }\n' > use.c
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -c use.c -o use.o
