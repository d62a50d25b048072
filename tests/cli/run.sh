#!/bin/sh
# Run every tests/cli/t*.sh in its own temporary directory. Usage: run.sh PATH/TO/posenc
# Each script gets POSENC (absolute binary path), SRC (repo root), DATA (tests/data) and
# PY (Debian's python3 with numpy/h5py), and passes by exiting 0; a test that cannot run here exits
# 77 and counts as skipped (in CI, where everything is installed, a skip fails the run). Ends with
# "cli: N passed, N failed, N skipped".
# The scripts run side by side, CLI_JOBS at a time (default: the number of processors); each line
# "ok|FAIL|skip NAME (SECONDS s)" is printed as a script ends, the failures' logs after the last.
# CLI_ONLY="NAME ..." runs those scripts only. CLI_JOBS=1 runs them one after another, in name order.
# LOGDIR is the test's own log directory for artefacts a person looks at afterwards (the HTML
# report's screenshots): $POSENC_TEST_LOGS/NAME, default build/test-logs/NAME, emptied before
# the test and kept after it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/../.." && pwd)
# --one NAME RESULTS (run.sh calls itself so, with POSENC, DATA and PY exported): run
# tests/cli/NAME.sh, leave its exit status, time and log in $results/NAME.*
if [ "${1:-}" = --one ]; then
    name=$2 results=$3
    dir=$(mktemp -d "${TMPDIR:-/tmp}/posenc-cli.XXXXXX")
    LOGDIR=${POSENC_TEST_LOGS:-$SRC/build/test-logs}/$name
    rm -rf "$LOGDIR" && mkdir -p "$LOGDIR" || { echo "run.sh: cannot make '$LOGDIR'" >&2; exit 3; }
    export LOGDIR
    t0=$(date +%s)
    (cd "$dir" && sh -eu "$here/$name.sh") > "$results/$name.log" 2>&1
    rc=$?
    t=$(($(date +%s) - t0))
    rm -rf "$dir"
    echo "$rc" > "$results/$name.rc"
    case $rc in
    0) echo "ok   $name (${t} s)" ;;
    77) echo "skip $name (${t} s): $(tail -n 1 "$results/$name.log")" ;;
    *) echo "FAIL $name (${t} s)" ;;
    esac
    exit 0
fi

bin=${1:-$SRC/posenc}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
export POSENC="$bin" SRC DATA="$SRC/tests/data" PY=/usr/bin/python3
jobs=${CLI_JOBS:-$(nproc 2> /dev/null || echo 2)}
results=$(mktemp -d "${TMPDIR:-/tmp}/posenc-cli-results.XXXXXX") ||
    { echo "run.sh: cannot make a temporary directory" >&2; exit 3; }
trap 'rm -rf "$results"' EXIT
trap 'exit 130' INT TERM
names=""
for t in "$here"/t*.sh; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .sh)
    if [ -n "${CLI_ONLY:-}" ]; then
        case " $CLI_ONLY " in *" $name "*) ;; *) continue ;; esac
    fi
    names="$names $name"
done
# the longest scripts first, so that the run ends with the short ones on every processor
long="t_install t_verdict_corpus t_interop_ggml t_capture_llama t_vllm_coverage t_real_configs"
order=""
for n in $long; do case " $names " in *" $n "*) order="$order $n" ;; esac; done
for n in $names; do case " $long " in *" $n "*) ;; *) order="$order $n" ;; esac; done
t0=$(date +%s)
printf '%s\n' $order | xargs -r -P "$jobs" -I{} sh "$here/run.sh" --one {} "$results"

pass=0 fail=0 skip=0 failed="" skipped=""
for name in $names; do
    rc=$(cat "$results/$name.rc" 2> /dev/null || echo 1)
    case $rc in
    0) pass=$((pass + 1)) ;;
    77) skip=$((skip + 1)) skipped="$skipped $name" ;;
    *) fail=$((fail + 1)) failed="$failed $name"
       echo "---- $name (exit $rc)"
       sed 's/^/     | /' "$results/$name.log" 2> /dev/null | tail -n 40 ;;
    esac
done
echo "cli: $pass passed, $fail failed, $skip skipped ($(($(date +%s) - t0)) s, $jobs at a time)"
[ "$fail" -eq 0 ] || echo "cli: failed:$failed"
# CI installs everything the tests need (.ci/deps.sh): a skip there is a missing step
if [ -n "${CI:-}" ] && [ "$skip" -gt 0 ]; then
    echo "cli: skipped in CI:$skipped"
    exit 1
fi
[ "$fail" -eq 0 ]
