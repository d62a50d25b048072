# The docs agree with behaviour (issue 25): convert onto its input exits 2 as posenc-convert(1)
# says; gen's unknown-extension message names every output format; gen -c DIR/ records the file
# it read; the Markdown report never passes HTML from the inputs through; and the Python lines of
# posenc-formats(5)'s EXAMPLES run as written.
. "$SRC/tests/cli/lib.sh"
cat > c.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_theta": 10000.0}
J
$PY -c "import numpy as np; np.save('q.npy', np.ones((1, 4, 8, 64), np.float32))"
expect_fail 2 "refusing to overwrite an input" "$POSENC" convert q.npy q.npy
grep -q "OUT the same" "$SRC/man/posenc-convert.1"
sed -n '/^\.B 2$/,/^\.B 3$/p' "$SRC/man/posenc-convert.1" | grep -q "OUT the same"
expect_fail 2 ".hdf5, .safetensors, .h, .bin, .gguf or /" "$POSENC" gen -c c.json -o t.weird
expect_fail 2 ".hdf5, .safetensors, .h, .bin, .gguf or /" "$POSENC" convert q.npy t.weird
# gen -c DIR/ records the file it read, by the directory's name
mkdir -p models/tiny && cp c.json models/tiny/config.json
for d in models/tiny/ models/tiny; do
    expect_ok "$POSENC" gen -c "$d" --seq-len 4 -o m.npz
    $PY -c "
import json, numpy as np
assert json.loads(np.load('m.npz')['meta.json'])['config'] == 'tiny/config.json'
"
done
# HTML in a model_type and a member name is text in the Markdown report
sed 's/"llama"/"llama<script>alert(1)<\/script>"/' c.json > x.json
$PY -c "
import numpy as np
np.savez('d.npz', **{'<script>q': np.ones((1, 4, 8, 64), np.float32)})
"
set +e
"$POSENC" verify -c x.json --family llama --q 'd.npz:<script>q' --k 'd.npz:<script>q' --rotated \
    --report r.md -q > /dev/null 2>&1
set -e
test -s r.md
# outside code spans as entities; inside one (a member name) it is inert text
if sed 's/`[^`]*`//g' r.md | grep -n "<script"; then echo "raw HTML in the Markdown report"; exit 1; fi
grep -q "llama&lt;script&gt;alert(1)&lt;/script&gt;" r.md
grep -q '`<script>q`' r.md
# posenc-formats(5) EXAMPLES: the commands, then the Python lines
"$POSENC" gen --config c.json --seq-len 64 --compress -o rope.h5
"$POSENC" gen --config c.json --seq-len 64 -o rope.npz
sed -n '/^Reading posenc.s files from Python:/,/^\.fi/p' "$SRC/man/posenc-formats.5" |
    sed -e '1,/^\.nf/d' -e '/^\.fi/d' > ex.py
test -s ex.py
{ echo "import json, h5py, numpy as np"; sed 's/^/print(/; s/   #.*$//; s/$/)/' ex.py; } > ex_run.py
$PY ex_run.py > ex.out
test "$(wc -l < ex.out)" -ge 3
