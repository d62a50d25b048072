# The direction of the arrows, cmd -> formats -> lib, held against the code itself:
#  - includes: a lib/ file includes only lib/ and public headers, a formats/ file nothing of cmd/,
#    a public header (include/posenc/) only other public headers; every internal include is a
#    path from the repository root ("lib/verify/verify_stats.h"), never a bare name;
#  - calls, read off the objects the binary under test was built from (nm): no lib/ object uses a
#    symbol defined in formats/ or cmd/, no formats/ object one defined in cmd/;
#  - lib/'s subfolders form no circle, neither by their includes nor by their calls (tsort finds
#    the loop and the test prints it).
# Without the objects (a binary built elsewhere) the include checks run and the test is skipped.
set -eu
w=$(pwd) # the test's scratch directory; the sources are read from $SRC
cd "$SRC"
bad=0
complain() { echo "$*"; bad=1; }

# the quoted includes of a file, one a line
includes() {
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}
# lib/model/model.c -> lib/model; cmd/gen.c -> cmd
unit_folder() {
    case $1 in
    lib/*/* | formats/*/*) echo "$1" | cut -d/ -f1-2 ;;
    *) echo "$1" | cut -d/ -f1 ;;
    esac
}

# ---- includes ----
: > "$w/inc_edges.txt"
for f in $(find lib formats cmd include/posenc -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort); do
    for h in $(includes "$f"); do
        case $f in
        include/posenc/*)
            case $h in
            posenc/*) [ -f "include/$h" ] || complain "$f: '$h' is not a public header" ;;
            *) complain "$f: a public header includes the internal '$h'" ;;
            esac
            continue ;;
        esac
        case $h in
        posenc/*) [ -f "include/$h" ] || complain "$f: '$h' is not a public header"; continue ;;
        */*) [ -f "$h" ] || complain "$f: '$h' is not a path from the repository root" ;;
        *) complain "$f: '$h' by its bare name (write its path from the repository root)"; continue ;;
        esac
        case $f:$h in
        lib/*:formats/* | lib/*:cmd/*) complain "$f includes '$h': lib/ includes only lib/ and include/posenc/" ;;
        formats/*:cmd/*) complain "$f includes '$h': formats/ never includes cmd/" ;;
        esac
        case $f:$h in
        lib/*:lib/*)
            a=$(unit_folder "$f") b=$(unit_folder "$h")
            [ "$a" = "$b" ] || echo "$a $b" >> "$w/inc_edges.txt" ;;
        esac
    done
done
# tsort reads "a b" pairs (a needs b) and fails, naming the loop, when they close a circle
if ! sort -u "$w/inc_edges.txt" | tsort > /dev/null 2> "$w/inc_loop.txt"; then
    complain "lib/ subfolders include each other in a circle:"; sed 's/^tsort: /    /' "$w/inc_loop.txt"
fi

# ---- calls, from the objects ----
# the objects of the binary's libposenc.a: beside it (build-san/posenc: build-san/lib/...), or
# under build/ (./posenc: build/lib/...)
bindir=$(cd "$(dirname "$POSENC")" && pwd)
if [ -f "$bindir/libposenc.a" ]; then objdir=$bindir; else objdir=$bindir/build; fi
objs=$(cd "$objdir" 2> /dev/null && find lib formats cmd -name '*.o' 2> /dev/null | sort || true)
# only the objects of sources that exist: a build directory older than a move of files keeps the
# old objects beside the new ones
live=""
for o in $objs; do [ -f "$SRC/${o%.o}.c" ] && live="$live $o"; done
objs=$live
case $objs in
*lib/*) ;;
*)
    [ "$bad" -eq 0 ] || exit 1
    echo "no objects under $objdir: the include checks passed, the call graph is not checked"
    exit 77 ;;
esac
: > "$w/defs.txt"
: > "$w/uses.txt"
for o in $objs; do
    u=$(unit_folder "$o")
    nm --defined-only -g "$objdir/$o" | awk -v u="$u" -v o="${o%.o}" 'NF == 3 && $2 ~ /^[TDBRVWCG]$/ { print $3, u, o }' >> "$w/defs.txt"
    nm -u "$objdir/$o" | awk -v u="$u" -v o="${o%.o}" '{ print $2, u, o }' >> "$w/uses.txt"
done
sort -k1,1 "$w/defs.txt" > "$w/defs.sorted"
sort -k1,1 "$w/uses.txt" > "$w/uses.sorted"
# symbol, user's folder, user, definer's folder, definer
join "$w/uses.sorted" "$w/defs.sorted" > "$w/calls.txt"
[ -s "$w/calls.txt" ] || complain "no calls found between the objects under $objdir"
awk '$2 ~ /^lib\// && $4 !~ /^lib\// { print $3 ".c uses " $1 " from " $5 ".c: lib/ calls only lib/" }
     $2 ~ /^formats\// && $4 == "cmd" { print $3 ".c uses " $1 " from " $5 ".c: formats/ never calls cmd/" }' "$w/calls.txt" > "$w/back.txt"
if [ -s "$w/back.txt" ]; then complain "calls against the direction:"; cat "$w/back.txt"; fi
awk '$2 ~ /^lib\// && $4 ~ /^lib\// && $2 != $4 { print $2, $4 }' "$w/calls.txt" | sort -u > "$w/call_edges.txt"
if ! tsort "$w/call_edges.txt" > /dev/null 2> "$w/call_loop.txt"; then
    complain "lib/ subfolders call each other in a circle:"; sed 's/^tsort: /    /' "$w/call_loop.txt"
    # the calls between the folders of the loop, for the reader
    sed -n 's/^tsort: \(lib\/.*\)/\1/p' "$w/call_loop.txt" > "$w/loop_folders.txt"
    awk 'NR == FNR { in_loop[$1] = 1; next }
         ($2 in in_loop) && ($4 in in_loop) && $2 != $4 { print "    " $3 ".c -> " $5 ".c (" $1 ")" }' \
        "$w/loop_folders.txt" "$w/calls.txt" | sort -u
fi
# the order the folders stand in, for the log
echo "lib/ from the bottom up: $(tsort "$w/call_edges.txt" | tac | tr '\n' ' ')"
exit "$bad"
