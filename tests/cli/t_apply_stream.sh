# posenc apply on dumps larger than a few pipeline slots: the two-thread pipeline (reader/rotator
# and rotator/writer) gives the same bytes as one thread, in every dtype path, and matches the
# reference.
. "$SRC/tests/cli/lib.sh"
REF="$SRC/tests/cli/apply_ref.py"
# every input, generated with one torch import
$PY "$REF" batch > gen.log << 'EOF_GEN'
gen q.npy 2,8,200,128 f32 1      # 1.6 MB: several 256 KiB slots
gen k.npy 2,2,200,128 f32 2
gen h.npy 2,8,200,128 f16 3
EOF_GEN
# reference checks are queued and run at the end, in one python process
chk() { printf '%s\n' "$*" >> checks.txt; }
: > checks.txt
L="$DATA/configs/llama-3.1-8b.json"

for extra in "" "--dtype bf16" "--dtype f64" "--precision hf"; do
    # shellcheck disable=SC2086
    POSENC_THREADS=2 "$POSENC" apply q.npy k.npy --config "$L" --offset 7000 $extra -o t2.npz
    # shellcheck disable=SC2086
    POSENC_THREADS=1 "$POSENC" apply q.npy k.npy --config "$L" --offset 7000 $extra -o t1.npz
    cmp t2.npz t1.npz || { echo "threaded output differs ($extra)"; exit 1; }
done
POSENC_THREADS=2 "$POSENC" apply q.npy k.npy --config "$L" --offset 7000 --dtype bf16 -o out/
chk check llama-3.1-8b q.npy out/q.npy offset:7000 bhsd exact
chk check llama-3.1-8b k.npy out/k.npy offset:7000 bhsd exact
for extra in "" "--precision hf" "--dtype f32"; do
    # shellcheck disable=SC2086
    POSENC_THREADS=2 "$POSENC" apply h.npy --config "$L" $extra -o h2.npy
    # shellcheck disable=SC2086
    POSENC_THREADS=1 "$POSENC" apply h.npy --config "$L" $extra -o h1.npy
    cmp h2.npy h1.npy || { echo "threaded f16 output differs ($extra)"; exit 1; }
done
chk check llama-3.1-8b h.npy h2.npy offset:0 bhsd exact
# through a pipe, threaded
POSENC_THREADS=2 "$POSENC" apply - --config "$L" --offset 7000 -o - < q.npy > piped.npy
POSENC_THREADS=1 "$POSENC" apply q.npy --config "$L" --offset 7000 -o single.npy
chk same piped.npy single.npy
# a truncated large dump fails cleanly in the middle of the stream
head -c 1000000 q.npy > cut.npy
POSENC_THREADS=2 expect_fail 3 "'cut.npy'" "$POSENC" apply cut.npy --config "$L" -o cut_r.npy
no_file cut_r.npy

# ---- run the queued reference checks
$PY "$REF" batch < checks.txt
