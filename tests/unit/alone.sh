#!/bin/sh
# tests/unit/alone.sh BIN...: run every test of each cmocka binary alone (PE_TEST_ONLY, see
# tests/unit/testutil.c), each in a scratch TMPDIR of its own, so that a test which needs a file an
# earlier test wrote, or state an earlier test left, fails here although the whole binary passes.
# Prints "alone: N tests, N failed" and exits 1 when one failed.
set -u
n=0 fail=0
top=$(mktemp -d "${TMPDIR:-/tmp}/posenc-alone.XXXXXX") || exit 3
trap 'rm -rf "$top"' EXIT
for bin in "$@"; do
    names=$(PE_TEST_LIST=1 "$bin") || { echo "alone: $bin cannot list its tests"; exit 1; }
    for t in $names; do
        n=$((n + 1))
        d=$(mktemp -d "$top/t.XXXXXX")
        if ! TMPDIR=$d PE_TEST_ONLY=$t "$bin" > "$d.log" 2>&1; then
            fail=$((fail + 1))
            echo "FAIL $(basename "$bin") $t (alone)"
            tail -n 15 "$d.log" | sed 's/^/     | /'
        fi
        rm -rf "$d" "$d.log"
    done
done
echo "alone: $n tests, $fail failed"
[ "$fail" -eq 0 ]
