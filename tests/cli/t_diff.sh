# posenc diff: the statistics of every format posenc reads (members included) against numpy
# (np.isclose on float64 copies, ulps by numpy int views of the values rounded to the ulp dtype),
# bf16 and f16 inputs, position buckets, NaN/Inf rules, exit codes, one-line errors, hostile
# headers, bounded memory on a large input, --json parsed by python.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
$PY - <<'PY'
import json
import numpy as np, h5py, torch
from bias_util import write_safetensors
from gguf_make import gguf

rng = np.random.default_rng(5)
b = rng.standard_normal((2, 3, 70, 8)).astype(np.float32)        # bhsd, 70 positions
a = b.copy()
fa, fb = a.reshape(-1), b.reshape(-1)
i = rng.choice(a.size, 400, replace=False)
fa[i] = (fb[i] * (1 + rng.standard_normal(400) * 4e-6)).astype(np.float32)
pos = np.arange(a.size) // 8 % 70
far = np.nonzero(pos >= 64)[0][:3]                               # late positions drift more
fa[far] += np.float32(0.25)
fa[17] = np.float32(fb[17] + 1e-3)
np.save("a.npy", a); np.save("b.npy", b)
np.savez("ab.npz", q=a, k=b)
with h5py.File("ab.h5", "w") as f:
    f.create_dataset("g/a", data=a)
    f.create_dataset("g/b", data=b, chunks=(1, 1, 35, 8), compression="gzip")
bf = torch.from_numpy(b).to(torch.bfloat16)
bf_bits = bf.view(torch.int16).numpy().view(np.uint16)
write_safetensors("ab.safetensors", {"a": a, "b": b, "b16": ("BF16", bf_bits),
                                     "h": b.astype(np.float16)})
np.save("b_bf16.npy", bf_bits.view("V2"))
np.save("b_f16.npy", b.astype(np.float16))
open("ab.gguf", "wb").write(gguf([], [("a", a), ("b", b), ("h", b.astype(np.float16))]))

def ordered(x, dt):
    """numpy's own bit patterns of x rounded to dt, as ordered integers"""
    if dt == "bf16":
        bits = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().astype(np.int64)
        m = 0x7fff
    elif dt == "f16":
        bits, m = x.astype(np.float16).view(np.int16).astype(np.int64), 0x7fff
    else:
        bits, m = x.astype(np.float32).view(np.int32).astype(np.int64), 0x7fffffff
    return np.where(bits < 0, -(bits & m), bits)

def expect(a, b, dt, rtol, atol, top=5):
    da, db = a.astype(np.float64).reshape(-1), b.astype(np.float64).reshape(-1)
    ab = np.abs(da - db)
    close = np.isclose(da, db, rtol=rtol, atol=atol)
    u = np.abs(ordered(a.reshape(-1), dt) - ordered(b.reshape(-1), dt))
    hist = {}
    for k, n in zip(*np.unique([int(x).bit_length() for x in u], return_counts=True)):
        hist[int(k)] = int(n)
    order = sorted(np.nonzero(da != db)[0], key=lambda j: (-ab[j], j))[:top]
    p = np.arange(a.size) // 8 % 70
    buckets = [[int((~close & (p >= lo) & (p <= hi)).sum()), float(ab[(p >= lo) & (p <= hi)].max())]
               for lo, hi in ((0, 63), (64, 69))]
    return {"outside": int((~close).sum()), "equal": int((da == db).sum()),
            "max_abs_err": float(ab.max()), "max_abs_flat": int(np.argmax(ab)),
            "max_rel_err": float((ab / np.abs(db)).max()), "max_ulp": int(u.max()),
            "hist": hist, "worst": [int(j) for j in order], "buckets": buckets}

exp = {"f32": expect(a, b, "f32", 1.3e-6, 1e-5),
       "bf16": expect(a, bf.to(torch.float32).numpy(), "bf16", 1.6e-2, 1e-5),
       "f16": expect(a, b.astype(np.float16), "f16", 1e-3, 1e-5),
       "f32_loose": expect(a, b, "f32", 0, 0.3)}
json.dump(exp, open("expect.json", "w"))
PY

# expect_rc CODE CMD...: CMD exits CODE with nothing on stderr (a difference is not an error)
expect_rc() {
    code=$1; shift
    set +e; "$@" > out.stdout 2> out.stderr; rc=$?; set -e
    [ "$rc" -eq "$code" ] && [ ! -s out.stderr ] || { echo "expected exit $code, got $rc: $*"; cat out.stderr; return 1; }
}

check() { # check NAME KIND: out.json against expect.json[KIND]
    $PY - "$1" "$2" <<'PY'
import json, sys
name, kind = sys.argv[1], sys.argv[2]
j = json.load(open(name))
e = json.load(open("expect.json"))[kind]
assert j["same_shape"] and j["elements"] == 3360, j
assert j["outside"] == e["outside"], (j["outside"], e["outside"])
assert j["pass"] == (e["outside"] == 0)
assert j["equal"] == e["equal"], (j["equal"], e["equal"])
assert j["max_abs_err"] == e["max_abs_err"], (j["max_abs_err"], e["max_abs_err"])
f = e["max_abs_flat"]
assert j["max_abs_index"] == [f // 1680, f // 560 % 3, f // 8 % 70, f % 8], j["max_abs_index"]
assert abs(j["max_rel_err"] - e["max_rel_err"]) <= 1e-15 * e["max_rel_err"]
assert j["max_ulp"] == e["max_ulp"], (j["max_ulp"], e["max_ulp"])
hist = {h["hi"].bit_length(): h["count"] for h in j["ulp_histogram"]}
assert hist == {int(k): v for k, v in e["hist"].items()}, (hist, e["hist"])
assert [w["flat"] for w in j["worst"]] == e["worst"], ([w["flat"] for w in j["worst"]], e["worst"])
assert all(w["index"][3] == w["flat"] % 8 for w in j["worst"])
if j["positions"] is not None:
    got = [[k["outside"], k["max_abs_err"]] for k in j["positions"]["buckets"]]
    assert got == e["buckets"], (got, e["buckets"])
    assert [(k["lo"], k["hi"]) for k in j["positions"]["buckets"]] == [(0, 63), (64, 69)]
PY
}

# the same comparison from every format, members included: exit 1 (elements outside)
for pair in "a.npy b.npy" "ab.npz:q ab.npz:k" "ab.h5:/g/a ab.h5:/g/b" \
            "ab.safetensors:a ab.safetensors:b" "ab.gguf:a ab.gguf:b" "a.npy ab.h5:g/b"; do
    # shellcheck disable=SC2086
    set +e; "$POSENC" diff --json --layout bhsd $pair > out.json; rc=$?; set -e
    [ "$rc" -eq 1 ] || { echo "diff $pair: exit $rc"; exit 1; }
    check out.json f32
done
# raw .bin + .json, written by posenc convert
"$POSENC" convert ab.npz raw.bin
set +e; "$POSENC" diff --json raw.bin:q raw.bin:k > out.json; rc=$?; set -e
[ "$rc" -eq 1 ] && check out.json f32
# stdin
set +e; "$POSENC" diff --json - b.npy < a.npy > out.json; rc=$?; set -e
[ "$rc" -eq 1 ] && check out.json f32
# bf16 (safetensors BF16, NPY '<V2' with --assume-bf16) and f16 B: ulps in B's dtype
for b in ab.safetensors:b16 b_bf16.npy; do
    set +e; "$POSENC" diff --json --layout bhsd --assume-bf16 a.npy $b > out.json; rc=$?; set -e
    [ "$rc" -eq 1 ] && check out.json bf16
    $PY -c "import json; j = json.load(open('out.json')); assert j['ulp_dtype'] == 'bf16' and j['tolerance']['rtol'] == 0.016 and not j['same_dtype'], j['tolerance']"
done
expect_fail 3 "pass --assume-bf16" "$POSENC" diff a.npy b_bf16.npy
for b in b_f16.npy ab.safetensors:h ab.gguf:h; do
    set +e; "$POSENC" diff --json --layout bhsd a.npy $b > out.json; rc=$?; set -e
    [ "$rc" -eq 1 ] && check out.json f16
done
# tolerances from options: every element within 0.3 absolute
expect_ok "$POSENC" diff --json --layout bhsd --atol 0.3 --rtol 0 a.npy b.npy
cp out.stdout out.json && check out.json f32_loose
grep -q '"source": "options"' out.json
# --dtype picks the ulp dtype: B's f32 values seen in f16
set +e; "$POSENC" diff --json --dtype f16 a.npy b.npy > out.json; set -e
$PY -c "import json; j = json.load(open('out.json')); assert j['ulp_dtype'] == 'f16' and j['max_ulp'] < 2000, j['max_ulp']"

# text: the summary, histogram, worst list and buckets a person reads
set +e; "$POSENC" diff --layout bhsd --top 3 a.npy b.npy > out.txt; rc=$?; set -e
[ "$rc" -eq 1 ]
grep -q '^a: a.npy  f32  (2, 3, 70, 8)$' out.txt
grep -q '^tolerance: |a - b| <= 1e-05 + 1.3e-06 \* |b| (torch defaults); NaN != NaN$' out.txt
grep -q '^max abs err: 0.25' out.txt
grep -q '^ulp histogram (f32):$' out.txt
grep -q '^  0  ' out.txt
grep -q '^worst 3 by abs error:$' out.txt
grep -q '^positions (layout bhsd, axis 2):$' out.txt
grep -q '^  64-69 ' out.txt
grep -q '^result: FAIL, ' out.txt
[ "$(grep -c '^  (.*  outside$' out.txt)" -eq 3 ]
expect_ok "$POSENC" diff a.npy a.npy
grep -q '^result: ok, every element within the tolerance$' out.stdout
expect_rc 1 "$POSENC" diff --top 0 a.npy b.npy
! grep -q '^worst' out.stdout
expect_ok "$POSENC" diff -q --atol 1 --rtol 0 a.npy b.npy
[ ! -s out.stdout ]
# --buckets N: fixed-width buckets
set +e; "$POSENC" diff --json --layout bhsd --buckets 32 a.npy b.npy > out.json; set -e
$PY -c "
import json; j = json.load(open('out.json'))['positions']
assert j['bucket_width'] == 32 and [(k['lo'], k['hi'], k['count']) for k in j['buckets']] == [(0, 31, 1536), (32, 63, 1536), (64, 69, 288)], j"

# NaN and Inf: NaN never equal unless --equal-nan; infinities must match, whatever the tolerance
$PY -c "
import numpy as np
np.save('n1.npy', np.array([np.nan, 1, np.inf, -np.inf, 0.0, 5], dtype=np.float32))
np.save('n2.npy', np.array([np.nan, 1, np.inf, np.inf, -0.0, 5], dtype=np.float32))
np.save('n3.npy', np.array([np.nan, 1, np.inf, -np.inf, -0.0, 5], dtype=np.float32))"
set +e; "$POSENC" diff --json --atol 1e30 --rtol 1 n1.npy n2.npy > out.json; rc=$?; set -e
[ "$rc" -eq 1 ]
$PY -c "
import json; j = json.load(open('out.json'))
assert j['outside'] == 2 and j['nan_mismatch'] == 1 and j['inf_mismatch'] == 1 and j['equal'] == 4, j
assert j['worst'][0]['index'] == [0] and j['worst'][0]['a'] == 'nan' and j['worst'][0]['ulp'] is None
assert j['worst'][1]['b'] == 'inf' and j['worst'][1]['a'] == '-inf'
assert j['ulp_histogram'][0] == {'lo': 0, 'hi': 0, 'count': 4}, j['ulp_histogram']"
expect_rc 1 "$POSENC" diff n1.npy n3.npy
expect_ok "$POSENC" diff --equal-nan n1.npy n3.npy
grep -q 'NaN == NaN' out.stdout
# --max-ulp alone is the only criterion; with --atol/--rtol both must hold
$PY -c "
import numpy as np
x = np.array([1, 2, 3], dtype=np.float32)
np.save('u0.npy', x); np.save('u1.npy', np.nextafter(x, np.float32(9)))"
expect_ok "$POSENC" diff --max-ulp 1 u0.npy u1.npy
grep -q 'at most 1 ulp (f32)' out.stdout
expect_rc 1 "$POSENC" diff --max-ulp 0 u0.npy u1.npy
expect_rc 1 "$POSENC" diff --max-ulp 1 --atol 0 --rtol 0 u0.npy u1.npy
expect_ok "$POSENC" diff --max-ulp 1 --atol 1 --rtol 0 u0.npy u1.npy

# integers: compared as doubles, ulps in f64, and the output says so; empty arrays pass
$PY -c "
import numpy as np
np.save('i1.npy', np.array([1, 2, 3], np.int64)); np.save('i2.npy', np.array([1, 2, 4], np.int32))
np.save('z1.npy', np.zeros((0, 3), np.float32)); np.save('z2.npy', np.zeros((0, 3), np.float16))"
set +e; "$POSENC" diff --json i1.npy i2.npy > out.json; rc=$?; set -e
[ "$rc" -eq 1 ]
$PY -c "
import json; j = json.load(open('out.json'))
assert j['ulp_dtype'] == 'f64' and j['max_ulp'] == 2 ** 51 and j['max_abs_index'] == [2], j
assert j['tolerance']['atol'] == 0 and j['tolerance']['rtol'] == 0 and len(j['notes']) == 2, j['notes']
assert j['notes'][0].startswith('B holds integers') and 'exact up to 2^53' in j['notes'][1]"
expect_rc 1 "$POSENC" diff i1.npy i2.npy
grep -q '^note: B holds integers: ulps are counted in f64' out.stdout
grep -q '^max abs err: 1 at (2,)$' out.stdout
expect_ok "$POSENC" diff --layout sd z1.npy z2.npy
grep -q '^elements: 0, equal 0, differ 0 (the dtypes differ)$' out.stdout
grep -q '^note: the values are rounded to the ulp dtype before ulps are counted$' out.stdout

# shapes differ: a difference (exit 1), one line on stdout; --json says so
np_T() { $PY -c "import numpy as np; np.save('t.npy', np.load('a.npy').reshape(2, 3, 8, 70))"; }
np_T
set +e; "$POSENC" diff a.npy t.npy > out.txt 2> err.txt; rc=$?; set -e
[ "$rc" -eq 1 ] && [ ! -s err.txt ]
[ "$(cat out.txt)" = "shapes differ: 'a.npy' (2, 3, 70, 8), 't.npy' (2, 3, 8, 70)" ]
set +e; "$POSENC" diff --json a.npy t.npy > out.json; rc=$?; set -e
[ "$rc" -eq 1 ]
$PY -c "import json; j = json.load(open('out.json')); assert j['same_shape'] is False and j['pass'] is False and j['b']['shape'] == [2, 3, 8, 70]"

# unreadable inputs: exit 3, one line naming the file
expect_fail 3 "'missing.npy'" "$POSENC" diff a.npy missing.npy
[ ! -s out.stdout ]
echo "not an array" > junk.npy
expect_fail 3 "'junk.npy'" "$POSENC" diff junk.npy a.npy
expect_fail 3 "" "$POSENC" diff ab.npz:nope a.npy
head -c 3000 b.npy > cut.npy
$PY -c "import numpy as np; np.save('cut_ref.npy', np.zeros((2, 3, 70, 8), np.float32))"
expect_fail 3 "'cut.npy'" "$POSENC" diff cut_ref.npy cut.npy
# a header claiming a huge shape fails cleanly, without allocating it
$PY - <<'PY'
hdr = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1048576), }"
hdr += b" " * (117 - len(hdr)) + b"\n"
open("huge.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr + b"\0" * 64)
hdr = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296,), }"
hdr += b" " * (117 - len(hdr)) + b"\n"
open("big.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr + b"\0" * 64)
PY
expect_fail 3 "'huge.npy'" "$POSENC" diff huge.npy huge.npy
expect_fail 3 "'big.npy'" "$POSENC" diff big.npy big.npy
expect_fail 3 "--layout bhsd" "$POSENC" diff --layout bhsd n1.npy n1.npy

# usage errors: exit 2
expect_fail 2 "need two arrays" "$POSENC" diff a.npy
expect_fail 2 "too many arguments" "$POSENC" diff a.npy b.npy b.npy
expect_fail 2 "--atol and --rtol go together" "$POSENC" diff --atol 1 a.npy b.npy
expect_fail 2 "--rtol: '-1' is negative" "$POSENC" diff --atol 1 --rtol -1 a.npy b.npy
expect_fail 2 "--rtol: 'x'" "$POSENC" diff --atol 1 --rtol x a.npy b.npy
expect_fail 2 "--buckets needs --layout" "$POSENC" diff --buckets 8 a.npy b.npy
expect_fail 2 "--buckets" "$POSENC" diff --layout bhsd --buckets 0 a.npy b.npy
expect_fail 2 "unknown layout 'bsd'" "$POSENC" diff --layout bsd a.npy b.npy
expect_fail 2 "--top" "$POSENC" diff --top 1001 a.npy b.npy
expect_fail 2 "--dtype: 'i32' is not a float dtype" "$POSENC" diff --dtype i32 a.npy b.npy
expect_fail 2 "--max-ulp" "$POSENC" diff --max-ulp -1 a.npy b.npy
expect_fail 2 "only one input can be '-'" "$POSENC" diff - -
expect_fail 2 "unknown option" "$POSENC" diff --frobnicate a.npy b.npy
"$POSENC" diff --help | grep -q '^usage: posenc diff'
"$POSENC" help | grep -q '^  diff '

# memory stays bounded: two 48 MB arrays are compared with a few MB of buffers
$PY - <<'PY'
import numpy as np
n = 12 << 20
x = np.lib.format.open_memmap("big_a.npy", mode="w+", dtype=np.float32, shape=(n,))
x[:] = np.arange(n, dtype=np.float32)
x.flush(); del x
y = np.lib.format.open_memmap("big_b.npy", mode="w+", dtype=np.float32, shape=(n,))
y[:] = np.arange(n, dtype=np.float32); y[n - 1] = -1
y.flush(); del y
PY
$PY - "$POSENC" <<'PY'
import json, resource, subprocess, sys
p = subprocess.run([sys.argv[1], "diff", "--json", "big_a.npy", "big_b.npy"], capture_output=True)
assert p.returncode == 1, p
j = json.loads(p.stdout)
assert j["elements"] == 12 << 20 and j["equal"] == (12 << 20) - 1 and j["max_abs_index"] == [(12 << 20) - 1]
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB
assert rss < 40 * 1024, "peak RSS %d KiB for 96 MB of input" % rss
print("peak RSS", rss, "KiB")
PY
rm -f big_a.npy big_b.npy
