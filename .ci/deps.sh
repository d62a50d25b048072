#!/bin/sh
# Install the Debian packages a task needs, only those missing. Usage: deps.sh build [test] [fuzz] [bench]
set -e
want=""
for group in "$@"; do
    case $group in
    build) want="$want gcc make pkg-config libcjson-dev zlib1g-dev libhdf5-dev" ;;
    test)  want="$want libcmocka-dev python3-numpy python3-h5py python3-torch python3-mpmath python3-yaml chromium git groff-base g++"
           # tests/cli/t_neon_qemu.sh: the aarch64 NEON kernels, cross-compiled, under qemu-user
           want="$want gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
           # npm fetches llama.cpp's gguf-py for the GGUF interop test; a nodejs that brings its
           # own npm (NodeSource's) must not get Debian's npm package on top
           command -v npm > /dev/null 2>&1 || want="$want nodejs npm" ;;
    fuzz)  want="$want clang libclang-rt-14-dev" ;;
    bench) want="$want python3-numpy python3-torch time" ;;
    *) echo "deps.sh: unknown group '$group'" >&2; exit 2 ;;
    esac
done
missing=""
for p in $want; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
if [ "$(id -u)" != 0 ]; then
    echo "deps.sh: missing packages:$missing (run as root, or install them)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
