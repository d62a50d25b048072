# posenc verify's verdict against a corpus made independently of posenc (tests/verdict/
# make_corpus.py: correct runtimes, usual mistakes, corrupted dumps and probes of the bound, from
# the formulas of transformers, vLLM and llama.cpp in numpy/torch). Every correct runtime must
# PASS, every mistake, corruption and probe past its bound must FAIL, and a mistake must be named.
# Prints the confusion matrix and one line per wrong case. VERDICT_EXPECT_MISTAKES=1 turns it
# round for a mutated posenc (the bound scaled by 0.5 or 2): exit 0 only if a verdict was false.
V="$SRC/tests/verdict"
if ! "$PY" -c 'import numpy, torch, mpmath' 2>/dev/null; then
    echo "skip: $PY lacks numpy, torch or mpmath"
    exit 77
fi
"$PY" "$V/make_corpus.py" corpus
# the corpus checks itself against mpmath and a second float32 implementation first
"$PY" "$V/check_corpus.py" corpus
"$PY" "$V/judge.py" commands corpus > cases.tsv
tab=$(printf '\t')
# run BINARY DIR [CASES]: every case of CASES (default cases.tsv) through BINARY, reports in
# DIR, "ID EXIT" lines in DIR.txt
run() {
    bin=$1 dir=$2 list=${3:-cases.tsv}
    mkdir "$dir"
    : > "$dir.txt"
    set -f
    while IFS= read -r line; do
        oldifs=$IFS
        IFS=$tab
        set -- $line
        IFS=$oldifs
        id=$1
        shift
        set +e
        "$bin" verify "$@" --report "$dir/$id.json" -q > "$dir/$id.out" 2>&1
        rc=$?
        set -e
        echo "$id $rc" >> "$dir.txt"
    done < "$list"
    set +f
}
run "$POSENC" corpus/r
"$PY" "$V/judge.py" judge corpus corpus/r.txt corpus/r
[ -n "${VERDICT_EXPECT_MISTAKES:-}" ] && exit 0
# The mutation check: the bound weakened and tightened by 2 (make mutants) must each give a
# false verdict on this corpus, or the corpus could not tell a wrong bound from the right one.
# The probes are the cases made for it (an element at 0.75 and at 1.5 times its bound), so the
# mutants run those only; judge.py leaves the other cases out of a mutant's matrix.
grep -- '-probe' cases.tsv > probes.tsv
[ -s probes.tsv ] || { echo "mutation check: the corpus has no probes"; exit 1; }
for m in 0.5 2; do
    bin=$SRC/build/mut-$m/posenc
    [ -x "$bin" ] || { echo "mutation check: $bin is missing (make mutants)"; exit 1; }
    run "$bin" "corpus/m$m" probes.tsv
    echo "mutant: the bound scaled by $m"
    set +e
    VERDICT_EXPECT_MISTAKES=1 "$PY" "$V/judge.py" judge corpus "corpus/m$m.txt" "corpus/m$m" \
        > "m$m.log"
    rc=$?
    set -e
    tail -n 7 "m$m.log"
    [ "$rc" -eq 0 ] || { echo "mutation check: the bound scaled by $m was not caught"; exit 1; }
done
