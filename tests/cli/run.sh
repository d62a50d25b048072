#!/bin/sh
# Run every tests/cli/t*.sh in its own temporary directory. Usage: run.sh PATH/TO/posenc
# Each script gets POSENC (absolute binary path), SRC (repo root), DATA (tests/data) and
# PY (Debian's python3 with numpy/h5py), and passes by exiting 0; a test that cannot run here exits
# 77 and counts as skipped (in CI, where everything is installed, a skip fails the run). Ends with
# "cli: N passed, N failed, N skipped".
# LOGDIR is the test's own log directory for artefacts a person looks at afterwards (the HTML
# report's screenshots): $POSENC_TEST_LOGS/NAME, default build/test-logs/NAME, emptied before
# the test and kept after it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/../.." && pwd)
bin=${1:-$SRC/posenc}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
export POSENC="$bin" SRC DATA="$SRC/tests/data" PY=/usr/bin/python3
pass=0 fail=0 skip=0 failed="" skipped=""
for t in "$here"/t*.sh; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .sh)
    if [ -n "${CLI_ONLY:-}" ] && [ "$name" != "$CLI_ONLY" ]; then continue; fi
    dir=$(mktemp -d "${TMPDIR:-/tmp}/posenc-cli.XXXXXX")
    LOGDIR=${POSENC_TEST_LOGS:-$SRC/build/test-logs}/$name
    rm -rf "$LOGDIR" && mkdir -p "$LOGDIR" || { echo "run.sh: cannot make '$LOGDIR'" >&2; exit 3; }
    export LOGDIR
    (cd "$dir" && sh -eu "$t") > "$dir.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        pass=$((pass + 1))
        echo "ok   $name"
    elif [ "$rc" -eq 77 ]; then
        # the test could not run here (a tool or the network missing): skipped, never passed
        skip=$((skip + 1))
        skipped="$skipped $name"
        echo "skip $name: $(tail -n 1 "$dir.log")"
    else
        fail=$((fail + 1))
        failed="$failed $name"
        echo "FAIL $name"
        sed 's/^/     | /' "$dir.log" | tail -n 40
    fi
    rm -rf "$dir" "$dir.log"
done
echo "cli: $pass passed, $fail failed, $skip skipped"
# CI installs everything the tests need (.ci/deps.sh): a skip there is a missing step
if [ -n "${CI:-}" ] && [ "$skip" -gt 0 ]; then
    echo "cli: skipped in CI:$skipped"
    exit 1
fi
[ "$fail" -eq 0 ]
