#!/bin/sh
# tests/interop/fetch.sh src|libs: print the directory of a pinned llama.cpp piece, fetching it once.
#
#   src   the llama.cpp source tree that the npm package node-llama-cpp (pinned) bundles as
#         llama/gitRelease.bundle, cloned: gguf-py, convert_hf_to_gguf.py, ggml headers.
#   libs  llama.cpp's prebuilt CPU libraries from the npm package @node-llama-cpp/linux-x64 (pinned):
#         libggml-base.so, libggml-cpu-*.so (libggml-cpu-x64.so is the portable, non-FMA build).
#
# Both are kept under build/ of the repository (or $GGUF_CACHE for src, $GGML_CACHE for libs).
# When npm, git or the network is missing the script prints one line "skipped: ..." on standard
# output and exits 77; any other failure exits 1.
set -eu
SRC_PIN=node-llama-cpp@3.21.1
LIB_PIN=@node-llama-cpp/linux-x64@3.21.1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
what=${1:?usage: fetch.sh src|libs}

skip() { echo "skipped: $*"; exit 77; }

# lock DIR: hold an exclusive lock on DIR/.lock until the script exits, so that tests run in
# parallel (tests/cli/run.sh) fetch once and never see a half-moved tree
lock() {
    mkdir -p "$1"
    exec 9> "$1/.lock"
    if command -v flock > /dev/null 2>&1; then flock 9; fi
}

# pack PIN DIR: npm pack PIN into the fresh directory DIR
pack() {
    command -v npm > /dev/null 2>&1 || skip "npm is not installed (.ci/deps.sh test installs it)"
    if ! (cd "$2" && timeout 300 npm pack --silent "$1" > pack.log 2>&1); then
        skip "npm pack $1 failed (offline?): $(tail -n 1 "$2/pack.log")"
    fi
}

case $what in
src)
    cache=${GGUF_CACHE:-$root/build/gguf-cache}
    lock "$cache"
    if [ ! -f "$cache/llama.cpp/gguf-py/gguf/gguf_writer.py" ]; then
        command -v git > /dev/null 2>&1 || skip "git is not installed"
        mkdir -p "$cache"
        tmp=$(mktemp -d "$cache/fetch.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
        pack "$SRC_PIN" "$tmp"
        tar -xzf "$tmp"/node-llama-cpp-*.tgz -C "$tmp" package/llama/gitRelease.bundle ||
            skip "$SRC_PIN has no llama/gitRelease.bundle"
        git clone -q "$tmp/package/llama/gitRelease.bundle" "$tmp/llama.cpp" 2> "$tmp/clone.log" ||
            { cat "$tmp/clone.log" >&2; exit 1; }
        rm -rf "$cache/llama.cpp"
        mv "$tmp/llama.cpp" "$cache/llama.cpp"
    fi
    echo "$cache/llama.cpp"
    ;;
libs)
    cache=${GGML_CACHE:-$root/build/ggml-cache}
    lock "$cache"
    if [ ! -f "$cache/linux-x64/libggml-base.so" ]; then
        [ "$(uname -m)" = x86_64 ] || skip "the prebuilt ggml libraries are for x86_64 only"
        mkdir -p "$cache"
        tmp=$(mktemp -d "$cache/fetch.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
        pack "$LIB_PIN" "$tmp"
        tar -xzf "$tmp"/node-llama-cpp-linux-x64-*.tgz -C "$tmp" package/bins/linux-x64 ||
            skip "$LIB_PIN has no bins/linux-x64"
        rm -rf "$cache/linux-x64"
        mv "$tmp/package/bins/linux-x64" "$cache/linux-x64"
    fi
    echo "$cache/linux-x64"
    ;;
*) echo "usage: fetch.sh src|libs" >&2; exit 2 ;;
esac
