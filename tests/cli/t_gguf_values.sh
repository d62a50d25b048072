# t_gguf_values.sh: GGUF keys of the right type whose values llama.cpp cannot use (issue 25): a
# float32 key that is NaN or infinite is named as such (exit 3, one line); info --gguf warns, one
# line each and in --json "warnings", on a negative freq_base, head_count 0 and a NaN in
# rope_freqs.weight, and still exits 0.
. "$SRC/tests/cli/lib.sh"
export PYTHONPATH="$SRC/tests/cli"

"$PY" - <<'PY'
import numpy as np
from gguf_make import *

def model(base=10000.0, heads=4, freqs=None):
    kvs = [kv("general.architecture", STR, "llama"),
           kv("llama.rope.freq_base", F32, base),
           kv("llama.attention.head_count", U32, heads),
           kv("llama.embedding_length", U32, 256),
           kv("llama.rope.dimension_count", U32, 64),
           kv("llama.context_length", U32, 64)]
    ts = [("rope_freqs.weight", freqs)] if freqs is not None else []
    return gguf(kvs, ts)

open("nan.gguf", "wb").write(model(base=float("nan")))
open("inf.gguf", "wb").write(model(base=float("inf")))
open("neg.gguf", "wb").write(model(base=-10000.0))
open("heads0.gguf", "wb").write(model(heads=0))
f = np.ones(32, np.float32)
f[3] = np.nan
open("freqnan.gguf", "wb").write(model(freqs=f))
PY

for f in nan inf; do
    expect_fail 3 "key 'llama.rope.freq_base' is a float32 NaN or infinity" "$POSENC" info --gguf $f.gguf
    test "$(wc -l < out.stderr)" -eq 1
done

warns() { # FILE 'warning text'
    "$POSENC" info --gguf "$1" > out.txt 2> out.stderr
    grep -qF "posenc info: '$1': warning: $2" out.stderr || { echo "no warning for $1"; cat out.stderr; exit 1; }
    test "$(grep -c warning: out.stderr)" -eq 1 || { cat out.stderr; exit 1; }
    "$POSENC" info --gguf "$1" --json > out.json 2> /dev/null
    "$PY" -c "
import json, sys
w = json.load(open('out.json'))['warnings']
assert len(w) == 1 and sys.argv[1] in w[0], w
" "$2"
}
warns neg.gguf "llama.rope.freq_base is -10000"
warns heads0.gguf "llama.attention.head_count is 0"
warns freqnan.gguf "rope_freqs.weight[3] is nan"

# metadata past the 64 MiB cap (posenc-formats(5)): one line, exit 3, not gigabytes
"$PY" - <<'PY'
import struct
from gguf_make import *
n = (1 << 24) - 16
open("bools.gguf", "wb").write(gguf([kv("general.architecture", STR, "llama"),
                                     s("k") + struct.pack("<IIQ", ARR, BOOL, n) + bytes(n)], []))
PY
expect_fail 3 "'bools.gguf': metadata larger than 64 MiB" "$POSENC" ls bools.gguf
test "$(wc -l < out.stderr)" -eq 1

# more rotated dims than posenc's tables hold (2 * POSENC_MAX_FREQ): said in one line, not a
# stack overflow in verify's table comparison (found by fuzz_gguf_rope)
"$PY" - <<'PY'
from gguf_make import *
open("dims.gguf", "wb").write(gguf([kv("general.architecture", STR, "llama"),
                                    kv("llama.attention.head_count", U32, 1),
                                    kv("llama.embedding_length", U32, 16480),
                                    kv("llama.rope.dimension_count", U32, 16480),
                                    kv("llama.context_length", U32, 64)], []))
PY
"$POSENC" info --gguf dims.gguf > out.stdout 2> out.stderr
grep -qF "posenc info: 'dims.gguf': 16480 rotated dims (llama.rope.dimension_count or the head size); posenc computes at most 1024" out.stderr
