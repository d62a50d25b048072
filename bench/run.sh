#!/bin/sh
# make bench: run every bench/b_*.sh. Each compares posenc with the PyTorch/NumPy code users
# would otherwise write, in the same run, and prints its figures. Usage: run.sh PATH/TO/posenc
# Work files go to $BENCH_DIR (default: a fresh directory under /tmp, removed afterwards).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/.." && pwd)
bin=${1:-$SRC/posenc}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
export POSENC="$bin" SRC PY=/usr/bin/python3
export BENCH_RUNS=${BENCH_RUNS:-5}
keep=${BENCH_DIR:+1}
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /var/tmp/posenc-bench.XXXXXX)}
export BENCH_DIR
mkdir -p "$BENCH_DIR"
echo "posenc bench: $(nproc) cores, $BENCH_RUNS runs each, median wall time and peak RSS"
for b in "$here"/b_*.sh; do
    [ -e "$b" ] || continue
    if [ -n "${BENCH_ONLY:-}" ] && [ "$(basename "$b" .sh)" != "$BENCH_ONLY" ]; then continue; fi
    echo
    echo "== $(basename "$b" .sh)"
    sh -eu "$b"
done
[ -n "$keep" ] || rm -rf "$BENCH_DIR"
