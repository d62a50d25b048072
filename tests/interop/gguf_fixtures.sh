#!/bin/sh
# tests/interop/gguf_fixtures.sh OUTDIR: write GGUF files with llama.cpp's own gguf-py writer.
#
# The llama.cpp source comes from tests/interop/fetch.sh src (the source tree npm's node-llama-cpp
# bundles, fetched once). Then tests/interop/gguf_write.py runs with that gguf-py on
# PYTHONPATH (it needs only numpy). When npm, git or the network is missing, the script prints one
# line "skipped: ..." on standard output and exits 77; any other failure exits 1.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: gguf_fixtures.sh OUTDIR}
py=${PY:-/usr/bin/python3}

set +e
llama=$(sh "$here/fetch.sh" src)
rc=$?
set -e
[ "$rc" -eq 0 ] || { [ "$rc" -eq 77 ] && echo "$llama"; exit "$rc"; }
PYTHONPATH="$llama/gguf-py" "$py" "$here/gguf_write.py" "$out"
