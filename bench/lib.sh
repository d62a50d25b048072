# bench/lib.sh: timing helpers for bench/b_*.sh; source with `. "$SRC/bench/lib.sh"`.

# measure LABEL CMD...: run CMD $BENCH_RUNS times (after one warm-up run), print
# "LABEL  median_s  peak_MiB", and leave the median seconds in $MED and peak MiB in $PEAK.
measure() {
    label=$1; shift
    "$@" > /dev/null 2>&1 || { echo "bench: command failed: $*" >&2; "$@" >&2 || true; return 1; }
    : > "$BENCH_DIR/times"
    i=0
    while [ "$i" -lt "$BENCH_RUNS" ]; do
        /usr/bin/time -f '%e %M' -o "$BENCH_DIR/one" "$@" > /dev/null 2>&1
        cat "$BENCH_DIR/one" >> "$BENCH_DIR/times"
        i=$((i + 1))
    done
    MED=$(sort -n "$BENCH_DIR/times" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    PEAK=$(awk 'BEGIN{m=0} {if ($2>m) m=$2} END {printf "%.1f", m/1024}' "$BENCH_DIR/times")
    printf '  %-44s %8.3f s %9s MiB\n' "$label" "$MED" "$PEAK"
}

# ratio A B: print A/B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
