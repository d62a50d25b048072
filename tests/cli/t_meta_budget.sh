# t_meta_budget.sh: the metadata budget of posenc-formats(5) (issue 25), measured. Inputs are
# generated here: metadata past a cap (a GGUF array of 16M bools, a 128 MiB GGUF string, 1M GGUF
# tensor infos, a safetensors header just under the format's 100 MB, a raw sidecar of 200000
# arrays, 64 MiB of zeros in meta.json) is refused with one line and exit 3, inputs unchanged,
# nothing left behind; metadata just under the caps is read. Every run's peak RSS, from
# /usr/bin/time, stays under the documented 320 MiB, and info --gguf, which parses only the
# RoPE keys, under 64 MiB.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing (apt-get install time)"; exit 77; }

BUDGET_KB=$((320 * 1024))
INFO_KB=$((64 * 1024))
# Under AddressSanitizer (make check runs this script with build-san/posenc) every allocation
# carries redzones and freed memory waits in a quarantine: the budget is the program's, so a
# sanitized binary is held to three times it (the refusals and exit codes are the same).
if nm "$POSENC" 2> /dev/null | grep -q '__asan_init'; then
    BUDGET_KB=$((BUDGET_KB * 3)) INFO_KB=$((INFO_KB * 3))
fi

"$PY" - <<'PY'
import json, os, struct, zipfile
from gguf_make import *

def bools(path, n):
    open(path, "wb").write(gguf([kv("general.architecture", STR, "llama"),
                                 kv("llama.rope.freq_base", F32, 10000.0),
                                 kv("llama.attention.head_count", U32, 4),
                                 kv("llama.embedding_length", U32, 256),
                                 kv("llama.context_length", U32, 64),
                                 s("k") + struct.pack("<IIQ", ARR, BOOL, n) + bytes(n)], []))

bools("bools16m.gguf", 1 << 24)
bools("bools1m.gguf", 1_500_000)              # 9 MB of JSON text, ~115 MiB parsed: read
open("str.gguf", "wb").write(gguf([kv("general.architecture", STR, "llama"),
                                   kv("k", STR, b"a" * (128 << 20))], []))
nt = 1_000_000
head = (b"GGUF" + struct.pack("<IQQ", 3, nt, 1) + kv("general.architecture", STR, "llama") +
        b"".join(tinfo("t%d" % i, [1], 0, 32 * i) for i in range(nt)))
open("tensors.gguf", "wb").write(head + bytes(pad(len(head), 32)) + bytes(32 * nt))

def st(path, ntens, meta, size=None):
    parts = ['"t%d":{"dtype":"F32","shape":[1],"data_offsets":[%d,%d]}' % (i, 4 * i, 4 * i + 4)
             for i in range(ntens)]
    h = ('{"__metadata__":' + json.dumps(meta) + "".join("," + p for p in parts) + "}").encode()
    h += b" " * ((size - len(h)) if size else (8 - len(h) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + bytes(4 * ntens))

st("big.safetensors", 1_400_000, {"a": "b"}, size=99_999_992)  # just under the spec's 100 MB
st("meta63.safetensors", 1, {"a": "x" * (63 << 20)})           # a 63 MiB metadata string

na = 200_000
json.dump({"format": "posenc-raw", "version": 1, "metadata": {},
           "arrays": [{"name": "a%d" % k, "dtype": "f32", "shape": [1], "offset": 64 * k,
                       "nbytes": 4} for k in range(na)]}, open("side.json", "w"))
open("side.bin", "wb").write(bytes(64 * na))

os.makedirs("zeros", exist_ok=True)               # 64 MiB of [0,0,...]: 2.7 GB as cJSON
with open("zeros/meta.json", "w") as f:
    f.write('{"k":[' + "0," * ((64 << 20) // 2 - 8) + '0]}')
os.makedirs("dense", exist_ok=True)               # 1.5M numbers: read
json.dump({"k": [0] * 1_500_000}, open("dense/meta.json", "w"))
with zipfile.ZipFile("m.npz", "w") as z:          # a 63 MiB meta.json string in an NPZ
    z.writestr("meta.json", json.dumps({"k": "x" * (63 << 20)}))
PY
# listing: every path but the test's own bookkeeping
listing() { find . | grep -v '^\./\(before\.list\|after\.list\|inputs\.md5\)$' | sort; }
listing > before.list
md5sum bools16m.gguf bools1m.gguf str.gguf tensors.gguf big.safetensors meta63.safetensors \
    side.json side.bin zeros/meta.json dense/meta.json m.npz > inputs.md5

# rss KB CMD...: run CMD under /usr/bin/time; its peak RSS in kB into $rss, exit code into $rc,
# stdout and stderr into out.stdout and out.stderr
rss() {
    set +e
    /usr/bin/time -f '%M' -o time.out "$@" > out.stdout 2> out.stderr
    rc=$?
    set -e
    rss=$(tail -n 1 time.out)
    echo "rss $rss kB exit $rc: $*"
    if [ "$rss" -ge "$BUDGET_KB" ]; then
        echo "over the budget ($BUDGET_KB kB): $rss kB: $*"; return 1
    fi
}

# refused: exit 3, one line naming the file, within the budget
refused() {
    want=$1; shift
    rss "$@"
    if [ "$rc" -ne 3 ]; then echo "expected exit 3, got $rc: $*"; cat out.stderr; return 1; fi
    if [ "$(wc -l < out.stderr)" -ne 1 ] || ! grep -qF -- "$want" out.stderr ||
        ! grep -q '^posenc ' out.stderr; then
        echo "stderr is not one line with '$want': $*"; cat out.stderr; return 1
    fi
    test ! -s out.stdout
}

refused "'bools16m.gguf': metadata larger than 64 MiB" "$POSENC" ls bools16m.gguf
refused "'bools16m.gguf': metadata larger than 64 MiB" "$POSENC" info --gguf bools16m.gguf
refused "'str.gguf': metadata larger than 64 MiB" "$POSENC" ls --json str.gguf
refused "'tensors.gguf': 1000000 tensors take more than 64 MiB" "$POSENC" ls tensors.gguf
refused "'big.safetensors': safetensors header of 99999992 bytes is larger than 64 MiB" \
    "$POSENC" ls big.safetensors
refused "'side.json': sidecar would take" "$POSENC" ls side.bin
refused "'side.json': sidecar would take" "$POSENC" convert side.bin:a0 a0.npy
refused "'zeros/meta.json': meta.json would take" "$POSENC" ls zeros

# read: within the budget
for args in "ls --json bools1m.gguf" "ls --meta bools1m.gguf" "ls --json meta63.safetensors" \
            "ls --meta dense" "ls --json m.npz"; do
    # shellcheck disable=SC2086
    rss "$POSENC" $args
    if [ "$rc" -ne 0 ]; then echo "expected exit 0: $args"; cat out.stderr; exit 1; fi
done
# a command that needs a few keys parses only those: info --gguf on 1.5M bools
rss "$POSENC" info --gguf bools1m.gguf --json
[ "$rc" -eq 0 ] || { cat out.stderr; exit 1; }
[ "$rss" -lt "$INFO_KB" ] || { echo "info --gguf took $rss kB"; exit 1; }
grep -q '"freq_base"' out.stdout

# inputs unchanged, no file added or left behind
md5sum -c --quiet inputs.md5
rm -f out.stdout out.stderr time.out
listing > after.list
diff before.list after.list
no_file a0.npy
