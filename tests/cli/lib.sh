# tests/cli/lib.sh: helpers for CLI tests; source with `. "$SRC/tests/cli/lib.sh"`.

# expect_fail CODE 'stderr substring' CMD...: CMD must exit CODE and print the substring on stderr
# in exactly one line that starts with "posenc ".
expect_fail() {
    code=$1; want=$2; shift 2
    set +e
    "$@" > out.stdout 2> out.stderr
    rc=$?
    set -e
    if [ "$rc" -ne "$code" ]; then
        echo "expected exit $code, got $rc: $*"; cat out.stderr; return 1
    fi
    if ! grep -qF -- "$want" out.stderr; then
        echo "stderr lacks '$want': $*"; cat out.stderr; return 1
    fi
    if ! head -n 1 out.stderr | grep -q '^posenc '; then
        echo "stderr does not start with 'posenc ': $*"; cat out.stderr; return 1
    fi
}

# expect_ok CMD...: CMD must exit 0.
expect_ok() {
    if ! "$@" > out.stdout 2> out.stderr; then
        echo "failed: $*"; cat out.stderr; return 1
    fi
}

# no_file PATH...: none of the paths (nor temporary siblings) may exist.
no_file() {
    for f in "$@"; do
        if [ -e "$f" ]; then echo "unexpected output file: $f"; return 1; fi
    done
    if ls -a . | grep -q '\.posenc-tmp'; then echo "temporary file left behind"; ls -a; return 1; fi
}
