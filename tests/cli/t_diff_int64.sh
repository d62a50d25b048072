# diff of int64 arrays is exact (issue 25): values above 2^53 that differ by one round to the
# same double, and once printed "result: ok".
. "$SRC/tests/cli/lib.sh"
$PY -c "
import numpy as np
a = np.array([2**53, 2**53 + 1, 2**62 + 1, -2**62 - 1, 7], np.int64)
b = a.copy(); b[1] -= 1; b[2] += 1; b[3] += 1
np.save('a.npy', a); np.save('b.npy', b); np.save('c.npy', a.copy())
"
set +e
"$POSENC" diff a.npy b.npy > out.stdout 2> out.stderr
rc=$?
set -e
test "$rc" -eq 1 || { echo "exit $rc, want 1"; cat out.stdout out.stderr; exit 1; }
grep -q "^result: FAIL, 3 of 5 elements outside the tolerance (first at (1,))" out.stdout
expect_ok "$POSENC" diff a.npy c.npy
