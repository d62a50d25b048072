# t_interop_ggml.sh: posenc's --precision ggml against llama.cpp's own prebuilt ggml (npm's
# @node-llama-cpp/linux-x64, the portable CPU build libggml-cpu-x64.so without FMA; headers from
# the llama.cpp source node-llama-cpp bundles; tests/interop/fetch.sh fetches both).
# tests/interop/ggml_rope.c runs ggml_rope_ext / ggml_rope_multi; tests/interop/ggml_check.py
# compares it with posenc on the same hand-filled ggml_rope_ext arguments (ggml_posenc.c, linked
# with libposenc.a), and with posenc gen/apply --precision ggml from the published configs
# (converter -> loader -> numerics). Skipped, with one line saying why, when fetch.sh exits 77.
. "$SRC/tests/cli/lib.sh"

for what in libs src; do
    set +e
    sh "$SRC/tests/interop/fetch.sh" $what > fetch_$what.txt 2> fetch.err
    rc=$?
    set -e
    if [ "$rc" -eq 77 ]; then cat fetch_$what.txt; exit 77; fi
    [ "$rc" -eq 0 ] || { cat fetch.err; exit 1; }
done
libs=$(cat fetch_libs.txt)
src=$(cat fetch_src.txt)
cc=${CC:-cc}

# the harness: ggml only
$cc -std=c11 -O2 -o ggml_rope "$SRC/tests/interop/ggml_rope.c" -I"$src/ggml/include" \
    -L"$libs" -l:libggml-base.so -Wl,-rpath,"$libs" -ldl

# posenc's side: the library the binary under test was built with (build-san/ holds a
# sanitized libposenc.a beside its posenc; ./posenc uses build/libposenc.a)
bindir=$(dirname "$POSENC")
if [ -f "$bindir/libposenc.a" ]; then arch="$bindir/libposenc.a"; else arch="$bindir/build/libposenc.a"; fi
[ -f "$arch" ] || { echo "no libposenc.a beside $POSENC"; exit 1; }
san=
if nm "$arch" 2> /dev/null | grep -q __asan_init; then
    san="-fsanitize=address,undefined -fno-sanitize-recover=all"
fi
# shellcheck disable=SC2086
$cc -std=c11 -O2 $san -I"$SRC/include" -o ggml_posenc "$SRC/tests/interop/ggml_posenc.c" "$arch" \
    $(pkg-config --libs libcjson zlib hdf5) -lpthread -lm

$PY "$SRC/tests/interop/ggml_check.py" ./ggml_rope "$libs/libggml-cpu-x64.so" ./ggml_posenc \
    "$DATA/configs" "$POSENC" | tee check.txt
# 30 hand-filled cases, 26 of them also end to end through gen and apply, through verify on
# ggml's own output and in llama.cpp's own layout, one through apply with 3-axis positions
[ "$(grep -c '^ok ' check.txt)" -eq 109 ]
[ "$(grep -c 'via posenc verify on ggml' check.txt)" -eq 26 ]
[ "$(grep -c 'via posenc gen/apply' check.txt)" -eq 26 ]
[ "$(grep -c 'via posenc apply .*\[3, seq\] positions' check.txt)" -eq 1 ]
[ "$(grep -c 'via posenc verify/apply --layout ggml' check.txt)" -eq 26 ]
