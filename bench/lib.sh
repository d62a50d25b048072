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

# measure_vs LABEL_A "CMD_A" LABEL_B "CMD_B": run the two shell commands in turn, A B A B ...,
# $BENCH_RUNS times each (after one warm-up of each), so that both see the same machine. The
# machine is shared and others' work only ever adds time, so each is quoted by its best run
# (the clock read in nanoseconds: these runs take a tenth of a second), with the ratio of the
# bests and, as a check on the noise, the median of the per-pair ratios A/B. Leaves
# $BEST_A, $BEST_B, $RATIO (of the bests) and $RATIO_MED. The pairs' times go to
# $BENCH_DIR/vs.times (not .../pairs: a script's work directory is named after it, b_pairs).
measure_vs() {
    la=$1 ca=$2 lb=$3 cb=$4
    sh -c "$ca" > /dev/null 2>&1 || { echo "bench: command failed: $ca" >&2; sh -c "$ca" >&2 || true; return 1; }
    sh -c "$cb" > /dev/null 2>&1 || { echo "bench: command failed: $cb" >&2; return 1; }
    : > "$BENCH_DIR/vs.times"
    i=0
    while [ "$i" -lt "$BENCH_RUNS" ]; do
        t0=$(date +%s%N); sh -c "$ca" > /dev/null 2>&1; t1=$(date +%s%N)
        sh -c "$cb" > /dev/null 2>&1; t2=$(date +%s%N)
        awk -v a=$((t1 - t0)) -v b=$((t2 - t1)) 'BEGIN { printf "%.4f %.4f\n", a / 1e9, b / 1e9 }' \
            >> "$BENCH_DIR/vs.times"
        i=$((i + 1))
    done
    BEST_A=$(awk 'NR == 1 || $1 < m { m = $1 } END { printf "%.3f", m }' "$BENCH_DIR/vs.times")
    BEST_B=$(awk 'NR == 1 || $2 < m { m = $2 } END { printf "%.3f", m }' "$BENCH_DIR/vs.times")
    RATIO=$(awk -v a="$BEST_A" -v b="$BEST_B" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    RATIO_MED=$(awk '$2 > 0 { printf "%.4f\n", $1 / $2 }' "$BENCH_DIR/vs.times" | sort -g |
        awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }')
    printf '  %-52s %7s s best of %s\n  %-52s %7s s   A/B %sx (median of pairs %sx)\n' "$la" \
        "$BEST_A" "$BENCH_RUNS" "$lb" "$BEST_B" "$RATIO" "$RATIO_MED"
}
