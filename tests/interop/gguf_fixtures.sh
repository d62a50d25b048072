#!/bin/sh
# tests/interop/gguf_fixtures.sh OUTDIR: write GGUF files with llama.cpp's own gguf-py writer.
#
# The llama.cpp source comes from the npm package node-llama-cpp (pinned), which bundles it as
# llama/gitRelease.bundle; it is fetched once into build/gguf-cache/ of the repository (or
# $GGUF_CACHE) and cloned there. Then tests/interop/gguf_write.py runs with that gguf-py on
# PYTHONPATH (it needs only numpy). When npm, git or the network is missing, the script prints one
# line "skipped: ..." on standard output and exits 77; any other failure exits 1.
set -eu
PIN=node-llama-cpp@3.21.1
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out=${1:?usage: gguf_fixtures.sh OUTDIR}
cache=${GGUF_CACHE:-$src/build/gguf-cache}
py=${PY:-/usr/bin/python3}

skip() { echo "skipped: $*"; exit 77; }

if [ ! -f "$cache/llama.cpp/gguf-py/gguf/gguf_writer.py" ]; then
    command -v npm > /dev/null 2>&1 || skip "npm is not installed (.ci/deps.sh test installs it)"
    command -v git > /dev/null 2>&1 || skip "git is not installed"
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/fetch.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    if ! (cd "$tmp" && timeout 300 npm pack --silent "$PIN" > pack.log 2>&1); then
        skip "npm pack $PIN failed (offline?): $(tail -n 1 "$tmp/pack.log")"
    fi
    tar -xzf "$tmp"/node-llama-cpp-*.tgz -C "$tmp" package/llama/gitRelease.bundle ||
        skip "$PIN has no llama/gitRelease.bundle"
    git clone -q "$tmp/package/llama/gitRelease.bundle" "$tmp/llama.cpp" 2> "$tmp/clone.log" ||
        { cat "$tmp/clone.log" >&2; exit 1; }
    rm -rf "$cache/llama.cpp"
    mv "$tmp/llama.cpp" "$cache/llama.cpp"
fi
PYTHONPATH="$cache/llama.cpp/gguf-py" "$py" "$here/gguf_write.py" "$out"
