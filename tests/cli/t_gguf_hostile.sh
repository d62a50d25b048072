# t_gguf_hostile.sh: broken and lying GGUF files (made by hand with tests/cli/gguf_make.py,
# independent of posenc): a small valid file truncated at every byte, lying counts and lengths,
# huge dimensions, misaligned, overlapping and out-of-file tensors, unknown types, duplicates,
# v1 and big-endian files. Each is one line on stderr, exit 3, and no output file.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"

"$PY" - <<'PY'
import struct
import numpy as np
from gguf_make import *

ok = small()
open("ok.gguf", "wb").write(ok)
for n in range(len(ok)):
    open(f"cut{n:05d}.gguf", "wb").write(ok[:n])

a = np.arange(8, dtype=np.float32)
bad = {
    "many_kv": gguf([], [("x", a)], n_kv=1 << 60),
    "many_tensors": gguf([], [("x", a)], n_tensors=1 << 40),
    "key_len": b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 62) + b"k" * 20,
    "str_len": gguf([kv("k", STR, "x")[:-9] + struct.pack("<Q", 1 << 50) + b"x"], []),
    "arr_len": gguf([s("k") + struct.pack("<IIQ", ARR, U32, 1 << 61)], []),
    "arr_type": gguf([kv("k", ARR, (U8, [1]))[:-13] + struct.pack("<IQ", 99, 1) + b"\0"], []),
    "kv_type": gguf([s("k") + struct.pack("<I", 13) + b"\0" * 8], []),
    "deep": gguf([s("k") + struct.pack("<I", ARR) + struct.pack("<IQ", ARR, 1) * 20 +
                  struct.pack("<IQ", U8, 0)], []),
    "dup_key": gguf([kv("k", U8, 1), kv("k", U8, 2)], []),
    "empty_key": gguf([kv("", U8, 1)], []),
    "dup_tensor": gguf([], [("x", a), ("x", a)]),
    "huge_dims": gguf([], [("x", ([1 << 40, 1 << 40], 0, 0))]),
    "neg_dim": gguf([], [("x", ([-1], 0, 0))]),
    "five_dims": gguf([], [("x", ([1, 1, 1, 1, 1], 0, 4))]),
    "bad_ggml_type": gguf([], [("x", ([8], 4, 32))]),
    "ggml_type_huge": gguf([], [("x", ([8], 1000, 32))]),
    "q8_row": gguf([], [("x", ([33], 8, 34))]),
    "align_type": gguf([kv("general.alignment", U64, 32)], [("x", a)]),
    "align_zero": gguf([kv("general.alignment", U32, 0)], [("x", a)]),
    "align_odd": gguf([kv("general.alignment", U32, 24)], [("x", a)]),
    "v1": gguf([], [("x", a)], version=1),
    "v4": gguf([], [("x", a)], version=4),
    "big_endian": b"GGUF" + struct.pack(">IQQ", 3, 0, 0),
    "nul_name": gguf([], [("a\0b", a)]),
}
# tensors misaligned, overlapping, past the end: rewrite the offsets of a valid two-tensor file
def with_offsets(offs, size=None):
    infos = b"".join(tinfo(n, [8], 0, o) for n, o in zip("xy", offs))
    head = b"GGUF" + struct.pack("<IQQ", 3, 2, 0) + infos
    head += bytes(pad(len(head), 32))
    return head + bytes(64 if size is None else size)
bad["misaligned"] = with_offsets([0, 36])
bad["overlap"] = with_offsets([32, 32])
bad["past_end"] = with_offsets([0, 64])
bad["offset_huge"] = with_offsets([0, (1 << 64) - 32])
bad["no_data"] = with_offsets([0, 32], size=0)
# an overlap through a larger tensor: x is 16 floats (64 bytes) at 0, y at 32
infos = tinfo("x", [16], 0, 0) + tinfo("y", [8], 0, 32)
head = b"GGUF" + struct.pack("<IQQ", 3, 2, 0) + infos
bad["overlap_big"] = head + bytes(pad(len(head), 32)) + bytes(96)
for k, v in bad.items():
    open(f"bad_{k}.gguf", "wb").write(v)
PY

expect_ok "$POSENC" ls ok.gguf
grep -q '^rope_freqs.weight  *f32  *(8,)  *32$' out.stdout
grep -q '^w  *f32  *(2, 3)  *24$' out.stdout
expect_ok "$POSENC" convert ok.gguf:w w.npy
"$PY" -c "import numpy as np; assert np.array_equal(np.load('w.npy'), np.arange(6, dtype=np.float32).reshape(2, 3))"

# every proper prefix is refused with one line, exit 3, and no output
n=0
for f in cut*.gguf; do
    set +e
    "$POSENC" convert "$f:w" out.npy > out.stdout 2> out.stderr
    rc=$?
    set -e
    if [ "$rc" -ne 3 ] || [ "$(wc -l < out.stderr)" -ne 1 ] || ! grep -q "^posenc convert: '$f': " out.stderr; then
        echo "$f: exit $rc"; cat out.stderr; exit 1
    fi
    [ ! -s out.stdout ]
    no_file out.npy
    n=$((n + 1))
done
[ "$n" -gt 200 ]
expect_fail 3 "truncated GGUF file" "$POSENC" ls cut00100.gguf

check() { # NAME 'message'
    expect_fail 3 "$2" "$POSENC" convert "bad_$1.gguf" "out_$1.npz"
    [ "$(wc -l < out.stderr)" -eq 1 ] || { cat out.stderr; exit 1; }
    [ ! -s out.stdout ]
    no_file "out_$1.npz"
    expect_fail 3 "$2" "$POSENC" ls "bad_$1.gguf"
    [ ! -s out.stdout ]
}
check many_kv "claims 1152921504606846976 metadata keys"
check many_tensors "claims 1099511627776 tensors"
check key_len "past the end of the file"
check str_len "past the end of the file"
check arr_len "array elements, more than the file holds"
check arr_type "array of unknown GGUF type 99"
check kv_type "unknown GGUF type 13"
check deep "nests arrays more than"
check dup_key "duplicate metadata key 'k'"
check empty_key "is empty"
check dup_tensor "duplicate tensor name 'x'"
check huge_dims "tensor 'x'"
check neg_dim "negative dimension"
check five_dims "has 5 dimensions"
check bad_ggml_type "unknown ggml type 4"
check ggml_type_huge "unknown ggml type 1000"
check q8_row "not a multiple of its block size 32"
check align_type "general.alignment is uint64, not uint32"
check align_zero "alignment 0 is not a power of two"
check align_odd "alignment 24 is not a power of two"
check v1 "GGUF version 1"
check v4 "GGUF version 4"
check big_endian "big-endian GGUF"
check nul_name "NUL byte"
check misaligned "not aligned to 32 bytes"
check overlap "overlap"
check overlap_big "tensors 'x' and 'y' overlap"
check past_end "runs past the end"
check offset_huge "runs past the end"
check no_data "runs past the end"
