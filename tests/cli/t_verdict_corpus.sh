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
mkdir corpus/r
: > results.txt
tab=$(printf '\t')
set -f
while IFS= read -r line; do
    oldifs=$IFS
    IFS=$tab
    set -- $line
    IFS=$oldifs
    id=$1
    shift
    set +e
    "$POSENC" verify "$@" --report "corpus/r/$id.json" -q > "corpus/r/$id.out" 2>&1
    rc=$?
    set -e
    echo "$id $rc" >> results.txt
done < cases.tsv
"$PY" "$V/judge.py" judge corpus results.txt
