# Outputs of several files commit as one unit (issue 25): a directory output, the raw .bin +
# .json pair and the set of --report files are all replaced or none; two concurrent writers of
# one raw output never leave a mixed pair; a signal after the commit ends the run with its own
# status, not the signal's.
. "$SRC/tests/cli/lib.sh"

cat > c.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_theta": 10000.0}
J
"$PY" -c "
import numpy as np
np.save('q.npy', np.ones((1, 4, 8, 64), np.float32))
np.save('k.npy', np.full((1, 4, 8, 64), 2, np.float32))
"
one_line() { test "$(wc -l < out.stderr)" -eq 1 || { echo "want one stderr line:"; cat out.stderr; exit 1; }; }
sums() { for f in "$@"; do sha256sum "$f"; done; }
no_tmp() { ! ls -a "$@" | grep -q '\.posenc-tmp' || { echo "temporary left in $*"; ls -a "$@"; exit 1; }; }

# gen -o od/ when od/sin.npy is a directory: exit 3, the old cos.npy and meta.json kept
"$POSENC" gen --config c.json --seq-len 4 -o od/ 2> /dev/null
rm od/sin.npy && mkdir od/sin.npy
sums od/cos.npy od/inv_freq.npy od/meta.json > before.txt
expect_fail 3 "cannot write 'od/sin.npy': Is a directory" "$POSENC" gen --config c.json --seq-len 8 -o od/
one_line; sums od/cos.npy od/inv_freq.npy od/meta.json | cmp - before.txt; no_tmp od

# apply q k -o oq/ when oq/k.npy is a directory: the old oq/q.npy kept
"$POSENC" apply q.npy k.npy --config c.json --layout bhsd -o oq/ 2> /dev/null
test -f oq/q.npy
rm oq/k.npy && mkdir oq/k.npy
sums oq/q.npy oq/meta.json > before.txt
expect_fail 3 "cannot write 'oq/k.npy': Is a directory" "$POSENC" apply q.npy k.npy --config c.json --layout bhsd --offset 3 -o oq/
one_line; sums oq/q.npy oq/meta.json | cmp - before.txt; no_tmp oq

# gen -o out.bin when out.json is a directory: the old out.bin kept
"$POSENC" gen --config c.json --seq-len 4 -o out.bin 2> /dev/null
rm out.json && mkdir out.json
sums out.bin > before.txt
expect_fail 3 "cannot write 'out.json': Is a directory" "$POSENC" gen --config c.json --seq-len 8 -o out.bin
one_line; sums out.bin | cmp - before.txt; no_tmp .
rmdir out.json

# verify --report r.md --report r.html --report d.json with d.json a directory: r.md and r.html
# kept
"$POSENC" verify --config c.json --report r.md --report r.html -q
touch -d '2020-01-01 00:00:00' r.md r.html
mkdir d.json
sums r.md r.html > before.txt
stat -c %Y r.md r.html >> before.txt
expect_fail 3 "cannot write 'd.json': Is a directory" "$POSENC" verify --config c.json --report r.md --report r.html --report d.json -q
one_line
{ sums r.md r.html; stat -c %Y r.md r.html; } | cmp - before.txt; no_tmp .
rmdir d.json

# two concurrent writers of one raw output, 100 rounds: the pair is always one run's
"$POSENC" gen --config c.json --seq-len 4 -o a.bin 2> /dev/null
"$POSENC" gen --config c.json --seq-len 40 -o b.bin 2> /dev/null
pair() { cat "$1.bin" "$1.json" | sha256sum | cut -c1-64; }
ra=$(pair a) rb=$(pair b)
round=0
while [ $round -lt 100 ]; do
    "$POSENC" gen --config c.json --seq-len 4 -o w.bin 2> /dev/null &
    p1=$!
    "$POSENC" gen --config c.json --seq-len 40 -o w.bin 2> /dev/null &
    p2=$!
    wait $p1; wait $p2
    rw=$(pair w)
    if [ "$rw" != "$ra" ] && [ "$rw" != "$rb" ]; then
        "$POSENC" ls w.bin || true
        echo "round $round: a mixed pair"; exit 1
    fi
    round=$((round + 1))
done
no_tmp .

# a signal after the commit: the run ends with its status (0), not 143. verify's summary goes to
# a FIFO whose pipe is already full, so the run waits there, after the reports are committed.
if command -v mkfifo > /dev/null; then
    mkfifo fifo
    exec 3<> fifo
    head -c 65536 /dev/zero >&3
    rm -f s.json
    "$POSENC" verify --config c.json --report s.json > fifo 2> s.err &
    pid=$!
    n=0
    while [ ! -f s.json ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
    test -f s.json || { echo "no report"; exit 1; }
    sleep 0.3
    kill -TERM $pid
    set +e; wait $pid; rc=$?; set -e
    exec 3<&-
    test "$rc" -eq 0 || { echo "exit $rc after the commit, want 0"; cat s.err; exit 1; }
    test ! -s s.err || { echo "stderr:"; cat s.err; exit 1; }
fi
