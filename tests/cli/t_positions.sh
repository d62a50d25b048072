# --positions in gen, apply and verify: lists are parsed with exact integer arithmetic and
# counted before anything is built, so a huge value or range is refused at once, in one line,
# with little memory; files are read as far as they really go, not as far as they claim.
. "$SRC/tests/cli/lib.sh"
L="$DATA/configs/llama-3.1-8b.json"
"$PY" - <<'PY'
import numpy as np
np.save("q.npy", np.zeros((1, 2, 4, 128), np.float32))
np.save("p4.npy", np.arange(4))
np.save("p5.npy", np.arange(5))
# NPY headers that declare far more positions than the file holds
def lying(path, n):
    d = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % n
    h = d + " " * (64 - (10 + len(d) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode())
        f.write(np.arange(3, dtype="<i8").tobytes())
lying("lie29.npy", 1 << 29)   # 4 GiB declared, 24 bytes present
# a sparse file that truly holds 2^31 positions: over the 2^30 a file may hold
d = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % (1 << 31)
h = d + " " * (64 - (10 + len(d) + 1) % 64) + "\n"
with open("sparse31.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode())
    f.truncate(10 + len(h) + (8 << 31))
PY

# one 'posenc CMD:' message line (a usage error adds the usual "try" line, nothing else)
one_line() {
    n=$(grep -v "^posenc $1: try 'posenc $1 --help'\$" out.stderr | wc -l)
    if [ "$n" -ne 1 ]; then echo "expected one message line:"; cat out.stderr; return 1; fi
}
# expect_small_fail CODE 'substring' CMD...: expect_fail's checks, with CMD run under timeout 10
# and /usr/bin/time -v; its peak RSS must stay under 100 MB
expect_small_fail() {
    code=$1; want=$2; shift 2
    set +e
    timeout 10 /usr/bin/time -v -o time.txt "$@" > out.stdout 2> out.stderr
    rc=$?
    set -e
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)
    if [ -z "$kb" ] || [ "$kb" -ge 102400 ]; then
        echo "peak RSS ${kb:-?} KB (exit $rc): $*"; cat out.stderr; return 1
    fi
    if [ "$rc" -ne "$code" ]; then echo "expected exit $code, got $rc: $*"; cat out.stderr; return 1; fi
    grep -qF -- "$want" out.stderr || { echo "stderr lacks '$want': $*"; cat out.stderr; return 1; }
    head -n 1 out.stderr | grep -q '^posenc '
}

# ---- gen: the two reproducers of issue 11 ----
# INT64_MAX once overflowed the range loop (signed overflow), then appended until memory ran out
expect_small_fail 2 "--positions: '9223372036854775807': position 9223372036854775807 is outside [0, 2^48)" \
    "$POSENC" gen --config "$L" --positions 9223372036854775807 -o x.npz
one_line gen
no_file x.npz
# 0-1073741824 once built 4.2 GB of positions before the size check; now it is counted
expect_small_fail 3 "the output would be 1.0 TiB (1073741825 x 128 x 2 arrays, f32), over the 4 GiB limit; pass --force" \
    "$POSENC" gen --config "$L" --positions 0-1073741824 -o x.npz
one_line gen
no_file x.npz
expect_small_fail 3 "the output would be 381.5 GiB (400000001 x 128 x 2 arrays" \
    "$POSENC" gen --config "$L" --positions 0-400000000 -o x.npz
no_file x.npz
# the same for the bias tables, which read positions row by row
expect_small_fail 3 "tables would be" \
    "$POSENC" gen --encoding alibi --heads 8 --positions 0-1073741824 -o x.npz
no_file x.npz

# every value past the range, however long, and counts past 2^48
for v in 9223372036854775808 18446744073709551616 99999999999999999999999999999999 281474976710656; do
    expect_fail 2 "is outside [0, 2^48)" "$POSENC" gen --config "$L" --positions "$v" -o x.npz
    one_line gen
done
expect_fail 2 "position 9223372036854775807 is outside" \
    "$POSENC" gen --config "$L" --positions 0-9223372036854775807 -o x.npz
expect_fail 2 "more than 281474976710656 positions" \
    "$POSENC" gen --config "$L" --positions 0-281474976710655,0-281474976710655 -o x.npz
no_file x.npz
# the largest position accepted still works, and its table is one row
expect_ok "$POSENC" gen --config "$L" --positions 281474976710655 --array cos -o edge.npy
"$PY" -c "import numpy as np; assert np.load('edge.npy').shape == (1, 128)"

# malformed lists: one line, exit 2, no file
for bad in "" "," "1," ",1" "1,,2" "1-" "-1" "1--2" "1-2-3" "+1" "0x10" "1 2" "1.5" "a" "5-2"; do
    expect_fail 2 "--positions: '$bad'" "$POSENC" gen --config "$L" --positions "$bad" -o x.npz
    one_line gen
done
no_file x.npz
# blanks around numbers are fine (strtoll allowed leading ones)
expect_ok "$POSENC" gen --config "$L" --positions " 1, 2 ,3-4" --array cos -o blanks.npy
"$PY" -c "import numpy as np; assert np.load('blanks.npy').shape == (4, 128)"
# a long list is quoted shortened in the message
long=$(seq -s, 0 200)x
expect_fail 2 "'0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,1...' is not a list" \
    "$POSENC" gen --config "$L" --positions "$long" -o x.npz

# ---- positions files: counted from the header, read as far as the data goes ----
expect_small_fail 3 "'lie29.npy': truncated" "$POSENC" gen --config "$L" --positions lie29.npy -o x.npz
one_line gen
expect_small_fail 3 "'sparse31.npy': 2147483648 positions, more than 1073741824" \
    "$POSENC" gen --config "$L" --positions sparse31.npy -o x.npz
one_line gen
no_file x.npz

# ---- apply and verify: a list is counted against the sequence length first ----
expect_small_fail 2 "--positions: 1073741825 positions for a sequence of 4 tokens" \
    "$POSENC" apply q.npy --config "$L" --positions 0-1073741824 -o r.npy
one_line apply
expect_fail 2 "--positions: 3 positions for a sequence of 4 tokens" \
    "$POSENC" apply q.npy --config "$L" --positions 0,1,2 -o r.npy
expect_fail 2 "--positions: 1 position for a sequence of 4 tokens" \
    "$POSENC" apply q.npy --config "$L" --positions 7 -o r.npy
expect_fail 2 "position 9223372036854775807 is outside [0, 2^31)" \
    "$POSENC" apply q.npy --config "$L" --positions 0,1,2,9223372036854775807 -o r.npy
expect_small_fail 3 "'lie29.npy'" "$POSENC" apply q.npy --config "$L" --positions lie29.npy -o r.npy
no_file r.npy
expect_ok "$POSENC" apply q.npy --config "$L" --positions 5-8 -o r.npy
# verify: the same mistakes, the same exit codes and words
expect_small_fail 2 "--positions: 1073741825 positions for a sequence of 4 tokens" \
    "$POSENC" verify --config "$L" --q q.npy --k q.npy --positions 0-1073741824
one_line verify
expect_fail 2 "--positions: 1 position for a sequence of 4 tokens" \
    "$POSENC" verify --config "$L" --q q.npy --k q.npy --positions 0
expect_fail 2 "position 9223372036854775807 is outside [0, 2^48)" \
    "$POSENC" verify --config "$L" --q q.npy --k q.npy --positions 0,1,2,9223372036854775807
expect_fail 3 "'p5.npy': 5 positions for a sequence of 4 tokens" \
    "$POSENC" verify --config "$L" --q q.npy --k q.npy --positions p5.npy
expect_ok "$POSENC" verify --config "$L" --q q.npy --k q.npy --positions p4.npy
expect_ok "$POSENC" verify --config "$L" --q q.npy --k q.npy --positions 100-103
# gen: one position limit for every encoding. A config maximum past 2^48 is exit 3 with the
# same words for RoPE and the other tables (ALiBi/T5/Shaw/absolute once stopped at 2^40, exit 2);
# --seq-len past it is a usage error for all
sed 's/"max_position_embeddings": 512/"max_position_embeddings": 562949953421312/' \
    "$DATA/configs/sinusoidal/marian.json" > huge-sin.json
expect_fail 3 "'huge-sin.json': max_position_embeddings 562949953421312 is too large; pass --seq-len or --positions" \
    "$POSENC" gen --config huge-sin.json -o x.npz
one_line gen
no_file x.npz
sed 's/"max_position_embeddings": *[0-9]*/"max_position_embeddings": 562949953421312/' "$L" > huge-rope.json
expect_fail 3 "'huge-rope.json': max_position_embeddings 562949953421312 is too large; pass --seq-len or --positions" \
    "$POSENC" gen --config huge-rope.json -o x.npz
expect_fail 2 "--seq-len" "$POSENC" gen --encoding alibi --heads 2 --seq-len 281474976710657 -o x.npz
expect_fail 2 "--seq-len" "$POSENC" gen --encoding sinusoidal --d-model 8 --seq-len 281474976710657 -o x.npz
expect_fail 3 "tables would be" "$POSENC" gen --encoding alibi --heads 2 --seq-len 281474976710656 -o x.npz
no_file x.npz
