# Outputs by any name (issue 25): a valid name of 232-255 bytes works (the temporary keeps its
# last bytes); a symlinked output is written through its link; a read-only output, or one owned
# by another user, is refused (exit 2, one line, the old file kept) unless --force; a replaced
# file keeps its mode.
. "$SRC/tests/cli/lib.sh"
cat > c.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_theta": 10000.0}
J
one_line() { test "$(wc -l < out.stderr)" -eq 1 || { echo "want one stderr line:"; cat out.stderr; exit 1; }; }
max=$(getconf NAME_MAX . 2>/dev/null || echo 255)
for n in 232 240 251; do
    name=$(printf "%${n}s" "" | tr ' ' a).npz
    test ${#name} -le "$max" || continue
    expect_ok "$POSENC" gen -c c.json --seq-len 4 -o "$name"
    test -s "$name"
    expect_ok "$POSENC" gen -c c.json --seq-len 4 -o "$name"  # and replacing it
    rm -f "$name"
done
no_file x
# through a symlink: the target replaced, the link kept (relative and absolute, two hops)
echo old > real.npz
ln -s real.npz link.npz
ln -s "$(pwd)/link.npz" link2.npz
expect_ok "$POSENC" gen -c c.json --seq-len 4 -o link2.npz
test -L link.npz && test -L link2.npz && test ! -L real.npz
"$POSENC" ls real.npz > /dev/null
# a dangling link: the file is created where it points
ln -s made.npz dangling.npz
expect_ok "$POSENC" gen -c c.json --seq-len 4 -o dangling.npz
test -L dangling.npz && test -f made.npz
no_file x
# read-only: refused, kept; --force replaces it and the mode stays 0444
echo old > ro.npz
chmod 444 ro.npz
expect_fail 2 "posenc gen: 'ro.npz': refusing to replace a read-only file; pass --force" \
    "$POSENC" gen -c c.json --seq-len 4 -o ro.npz
one_line
test "$(cat ro.npz)" = old
expect_ok "$POSENC" gen -c c.json --seq-len 4 -o ro.npz --force
test "$(stat -c %a ro.npz)" = 444
"$POSENC" ls ro.npz > /dev/null
# a replaced file keeps its mode
echo old > priv.npz
chmod 600 priv.npz
expect_ok "$POSENC" gen -c c.json --seq-len 4 -o priv.npz
test "$(stat -c %a priv.npz)" = 600
# apply too, and the raw pair's sidecar
$PY -c "import numpy as np; np.save('q.npy', np.ones((1, 4, 8, 64), np.float32))"
echo old > rq.npy
chmod 444 rq.npy
expect_fail 2 "'rq.npy': refusing to replace a read-only file; pass --force" \
    "$POSENC" apply q.npy -c c.json -o rq.npy
one_line
expect_ok "$POSENC" apply q.npy -c c.json -o rq.npy --force
echo old > pair.json
chmod 444 pair.json
expect_fail 2 "'pair.json': refusing to replace a read-only file; pass --force" \
    "$POSENC" gen -c c.json --seq-len 4 -o pair.bin
one_line; no_file pair.bin
# another user's file (needs root to make one)
if [ "$(id -u)" = 0 ]; then
    echo old > theirs.npz
    chown 12345 theirs.npz
    expect_fail 2 "posenc gen: 'theirs.npz': refusing to replace a file owned by another user (uid 12345); pass --force" \
        "$POSENC" gen -c c.json --seq-len 4 -o theirs.npz
    one_line
    test "$(cat theirs.npz)" = old
    test "$(stat -c %u theirs.npz)" = 12345
fi
no_file x
