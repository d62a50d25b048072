# Standard output is an output like any other (issue 25): when a shell redirection makes it one
# of the run's inputs ('>> q.npy', '1<> q.npy'), the run refuses before writing a byte, with the
# line and exit status of '-o FILE' onto an input; a pipe or a new file is still written.
. "$SRC/tests/cli/lib.sh"
cat > c.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_theta": 10000.0}
J
$PY -c "
import numpy as np
np.save('q.npy', np.ones((1, 4, 8, 64), np.float32))
np.save('k.npy', np.ones((1, 4, 8, 64), np.float32))
"
mkdir md && cp c.json md/config.json
touch -d '2020-01-01 00:00:00' c.json q.npy k.npy md/config.json
snap() { for f in c.json q.npy k.npy md/config.json; do printf '%s %s %s\n' "$f" "$(sha256sum < "$f")" "$(stat -c %Y "$f")"; done; }
snap > before.txt
same() { snap > after.txt; cmp before.txt after.txt || { echo "an input changed"; diff before.txt after.txt; exit 1; }; }
one_line() { test "$(wc -l < out.stderr)" -eq 1 || { echo "want one stderr line:"; cat out.stderr; exit 1; }; }

# the reference: -o /dev/stdout onto an input was already refused this way
expect_fail 2 "posenc apply: '/dev/stdout': refusing to overwrite an input ('q.npy')" \
    sh -c "'$POSENC' apply q.npy -c c.json --layout bhsd -o /dev/stdout >> q.npy"
one_line; same
# '-o -' appended to an input
expect_fail 2 "posenc apply: '-': refusing to overwrite an input ('q.npy')" \
    sh -c "'$POSENC' apply q.npy -c c.json --layout bhsd -o - >> q.npy"
one_line; same
# the dump opened read-write as standard output
expect_fail 2 "posenc apply: '-': refusing to overwrite an input ('q.npy')" \
    sh -c "'$POSENC' apply q.npy -c c.json --layout bhsd -o - 1<> q.npy"
one_line; same
# gen's table appended to its config, named directly or read from a model directory
expect_fail 2 "posenc gen: '-': refusing to overwrite an input ('c.json')" \
    sh -c "'$POSENC' gen -c c.json --seq-len 4 --array cos --format npy -o - >> c.json"
one_line; same
expect_fail 2 "posenc gen: '-': refusing to overwrite an input ('md/config.json')" \
    sh -c "'$POSENC' gen -c md/ --seq-len 4 --array cos --format npy -o - >> md/config.json"
one_line; same
# convert to stdout onto its source; verify's JSON report onto its config
expect_fail 2 "posenc convert: '-': refusing to overwrite an input ('q.npy')" \
    sh -c "'$POSENC' convert q.npy - 1<> q.npy"
one_line; same
expect_fail 2 "posenc verify: '-': refusing to overwrite an input ('c.json')" \
    sh -c "'$POSENC' verify -c c.json --report - >> c.json"
one_line; same
# stdin and stdout the same file
expect_fail 2 "refusing to overwrite an input" \
    sh -c "'$POSENC' apply - -c c.json --layout bhsd -o - < q.npy 1<> q.npy"
one_line; same
no_file x

# standard output elsewhere still works: a new file, an unrelated file appended, a pipe
expect_ok sh -c "'$POSENC' apply q.npy -c c.json --layout bhsd -o - > new.npy"
test "$(wc -c < new.npy)" -eq "$(wc -c < q.npy)"
: > other.bin
expect_ok sh -c "'$POSENC' gen -c c.json --seq-len 4 --array cos --format npy -o - >> other.bin"
test -s other.bin
n=$("$POSENC" apply q.npy -c c.json --layout bhsd -o - | wc -c)
test "$n" -eq "$(wc -c < q.npy)"
same
