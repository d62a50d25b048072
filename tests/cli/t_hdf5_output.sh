# HDF5 output that cannot be written. A full file system (a small tmpfs, mounted when run as
# root): gen, gen --compress and convert exit 3 with exactly one stderr line naming the file and
# the errno text, leave no file and no temporary, and do not die of a signal (libhdf5 1.10
# crashed in its atexit handler after a failed write: exit 139). Pipes, FIFOs and character
# devices are refused with one line before anything is written; a symlink to a regular file is
# written through and stays a link.
. "$SRC/tests/cli/lib.sh"
CFG="$DATA/configs/llama-3.1-8b.json"

# fails_with CODE 'the whole stderr line' CMD...: exit CODE and stderr is exactly that line
fails_with() {
    code=$1; want=$2; shift 2
    set +e
    "$@" > out.stdout 2> out.stderr
    rc=$?
    set -e
    if [ "$rc" -ne "$code" ]; then
        echo "expected exit $code, got $rc: $*"; cat out.stderr; return 1
    fi
    if [ "$(cat out.stderr)" != "$want" ] || [ "$(wc -l < out.stderr)" -ne 1 ]; then
        echo "stderr is not the one line '$want': $*"; cat out.stderr; return 1
    fi
}

# empty_dir DIR: nothing at all in DIR (no output, no .posenc-tmp-* temporary)
empty_dir() {
    if [ -n "$(ls -A "$1")" ]; then echo "left in $1:"; ls -la "$1"; return 1; fi
}

"$POSENC" gen --config "$CFG" --seq-len 64 --array cos -o q.npy

# ---- a full file system ----
if [ "$(id -u)" -eq 0 ] && mkdir full && mount -t tmpfs -o size=256k tmpfs full 2>/dev/null; then
    trap 'umount full 2>/dev/null || true' EXIT
    nospc=$("$PY" -c 'import os, errno; print(os.strerror(errno.ENOSPC))')
    # the data does not fit (8 MB of tables on 256 KiB)
    fails_with 3 "posenc gen: cannot write 'full/x.h5': $nospc" \
        "$POSENC" gen --config "$CFG" --seq-len 4096 -o full/x.h5
    empty_dir full
    fails_with 3 "posenc gen: cannot write 'full/x.h5': $nospc" \
        "$POSENC" gen --config "$CFG" --seq-len 4096 --compress -o full/x.h5
    empty_dir full
    "$POSENC" gen --config "$CFG" --seq-len 4096 -o big.npz
    fails_with 3 "posenc convert: cannot write 'full/x.h5': $nospc" \
        "$POSENC" convert big.npz full/x.h5
    empty_dir full
    # a file system full before the run: the superblock cannot be written
    dd if=/dev/zero of=full/fill bs=4k count=64 2>/dev/null || true
    fails_with 3 "posenc gen: cannot write 'full/x.h5': $nospc" \
        "$POSENC" gen --config "$CFG" --seq-len 64 -o full/x.h5
    fails_with 3 "posenc convert: cannot write 'full/x.h5': $nospc" \
        "$POSENC" convert q.npy full/x.h5
    rm full/fill
    empty_dir full
    # the metadata is written last (at close): leave room for the data only, page by page
    n=0
    for pages in 12 16 20 24 28 32 36 40 44; do
        dd if=/dev/zero of=full/fill bs=4k count=$((64 - pages)) 2>/dev/null || true
        set +e
        "$POSENC" gen --config "$CFG" --seq-len 64 -o full/x.h5 2> err.txt
        rc=$?
        set -e
        rm full/fill
        if [ "$rc" -eq 0 ]; then
            rm full/x.h5; n=$((n + 1)); continue
        fi
        [ "$rc" -eq 3 ] || { echo "$pages free pages: exit $rc"; cat err.txt; exit 1; }
        [ "$(cat err.txt)" = "posenc gen: cannot write 'full/x.h5': $nospc" ] ||
            { echo "$pages free pages:"; cat err.txt; exit 1; }
        empty_dir full
    done
    [ "$n" -ge 1 ] || { echo "the output never fit"; exit 1; }
    # the same tmpfs takes a file that fits
    expect_ok "$POSENC" gen --config "$CFG" --seq-len 16 -o full/ok.h5
    expect_ok "$POSENC" ls full/ok.h5
    grep -q cos out.stdout
    rm full/ok.h5
    umount full
    trap - EXIT
else
    echo "skipped: the full-disk cases need root and a tmpfs mount"
fi

# ---- pipes, FIFOs and devices: refused before anything is written ----
set +e
("$POSENC" gen --config "$CFG" --seq-len 16 --format hdf5 -o /dev/stdout 2> err.txt
 echo $? > rc.txt) | cat > piped.out
set -e
[ "$(cat rc.txt)" -eq 3 ] || { echo "/dev/stdout on a pipe: exit $(cat rc.txt)"; exit 1; }
[ "$(cat err.txt)" = "posenc gen: '/dev/stdout': HDF5 output needs a seekable regular file, not a pipe" ] ||
    { cat err.txt; exit 1; }
[ ! -s piped.out ] || { echo "bytes on the pipe"; exit 1; }
fails_with 3 "posenc gen: '/dev/full': HDF5 output needs a seekable regular file, not a character device" \
    "$POSENC" gen --config "$CFG" --seq-len 16 --format hdf5 -o /dev/full
fails_with 3 "posenc convert: '/dev/null': HDF5 output needs a seekable regular file, not a character device" \
    "$POSENC" convert q.npy /dev/null --format hdf5
mkfifo fifo.h5
fails_with 3 "posenc gen: 'fifo.h5': HDF5 output needs a seekable regular file, not a pipe" \
    timeout 20 "$POSENC" gen --config "$CFG" --seq-len 16 -o fifo.h5
rm fifo.h5
expect_fail 2 "writes NPY only, not hdf5" "$POSENC" gen --config "$CFG" --seq-len 16 --format hdf5 -o -
no_file x.h5

# ---- a symlink to a regular file: written through, the link stays ----
printf 'old\n' > real.h5
ln -s real.h5 link.h5
expect_ok "$POSENC" gen --config "$CFG" --seq-len 16 -o link.h5
[ -L link.h5 ] || { echo "the symlink was replaced"; exit 1; }
expect_ok "$POSENC" ls real.h5
grep -q cos out.stdout
no_file x.h5

# ---- reproducible: no object timestamps, so the same run a second later gives the same bytes
# (HDF5 records creation times in seconds unless H5Pset_obj_track_times turns them off) ----
expect_ok "$POSENC" gen --config "$CFG" --seq-len 16 -o rep1.h5
sleep 1.1
expect_ok "$POSENC" gen --config "$CFG" --seq-len 16 -o rep2.h5
cmp rep1.h5 rep2.h5 || { echo "two runs of gen -o x.h5 differ"; exit 1; }
expect_ok "$POSENC" convert rep1.h5 conv1.h5
sleep 1.1
expect_ok "$POSENC" convert rep1.h5 conv2.h5
cmp conv1.h5 conv2.h5 || { echo "two runs of convert to HDF5 differ"; exit 1; }
