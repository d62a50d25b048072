# Every subcommand has a man page, and every long option its --help shows is in that page.
. "$SRC/tests/cli/lib.sh"
cmds=$("$POSENC" --help | awk '/^commands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on=0}')
[ -n "$cmds" ]
test -f "$SRC/man/posenc.1"
test -f "$SRC/man/posenc-formats.5"
for c in $cmds; do
    page="$SRC/man/posenc-$c.1"
    test -f "$page" || { echo "no man page for $c"; exit 1; }
    grep -q "posenc $c\|posenc\\\\-$c" "$page" || { echo "$page does not name posenc $c"; exit 1; }
    "$POSENC" "$c" --help > help.txt
    # posenc help CMD is the same text
    "$POSENC" help "$c" | cmp -s - help.txt || { echo "posenc help $c differs from --help"; exit 1; }
    # the option table (posenc help --options CMD) drives --help and is what the page documents
    "$POSENC" help --options "$c" > opts.txt
    [ -s opts.txt ] || { echo "posenc help --options $c lists nothing"; exit 1; }
    sed -n '/^\.SH OPTIONS/,/^\.SH [A-Z]/p' "$page" > options.roff
    [ -s options.roff ] || { echo "$page has no OPTIONS section"; exit 1; }
    while read -r opt; do
        grep -q -- "^ *\(-[a-z], \)\{0,1\}$opt\( \|$\)" help.txt ||
            { echo "posenc $c --help does not show $opt of its option table"; exit 1; }
        esc=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
        grep -q -- "$esc\([^a-z0-9\\]\|\\f\|$\)" options.roff ||
            { echo "man/posenc-$c.1 OPTIONS lacks $opt (in posenc $c's option table)"; exit 1; }
    done < opts.txt
    # and every option the page's OPTIONS section defines (a .TP entry) is in the table
    for opt in $(grep -A1 '^\.TP' options.roff | grep '^\.B' | grep -o -- '\\-\\-[a-z][a-z0-9\\-]*' |
                 sed 's/\\-/-/g' | sort -u); do
        grep -qx -- "$opt" opts.txt ||
            { echo "man/posenc-$c.1 documents $opt but posenc $c's option table lacks it"; exit 1; }
    done
done
# posenc(1) documents help --options
grep -q 'help \\-\\-options' "$SRC/man/posenc.1" || { echo "posenc.1 lacks help --options"; exit 1; }
set +e; "$POSENC" help --options nope 2> err.txt; rc=$?; set -e
[ "$rc" -eq 2 ] && grep -q "^posenc: 'nope' is not a posenc command" err.txt
expect_fail 2 "posenc help: --options takes one COMMAND" "$POSENC" help --options
# usage errors: unknown command and unknown option
set +e; "$POSENC" frobnicate 2> err.txt; rc=$?; set -e
[ "$rc" -eq 2 ] && grep -q "^posenc: 'frobnicate' is not a posenc command" err.txt
for c in $cmds; do
    expect_fail 2 "posenc $c:" "$POSENC" "$c" --no-such-option
done
# every page renders without a groff warning (a string escape such as \*a is "macro 'a' not
# defined" and drops the text), and posenc-gen(1)'s ALiBi formulas render with their products
command -v groff > /dev/null || { echo "groff is needed (.ci/deps.sh test installs groff-base)"; exit 1; }
for page in "$SRC"/man/*.1 "$SRC"/man/*.3 "$SRC"/man/*.5; do
    groff -man -Tutf8 -ww -z "$page" 2> groff.err
    [ ! -s groff.err ] || { echo "groff warns on $page:"; cat groff.err; exit 1; }
done
groff -man -Tutf8 "$SRC/man/posenc-gen.1" 2> /dev/null | sed 's/.\x08//g' > gen.txt
grep -q '(1/2^(k×alibi_bias_max/P) with P' gen.txt
grep -q 'keyindex m×j' gen.txt || tr -s ' \n' ' ' < gen.txt | grep -q 'keyindex m×j'
