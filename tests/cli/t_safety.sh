# Nothing lost, nothing hung (issue 11): no output of a run replaces one of its inputs, by any
# name (raw sidecars, reports, stdin included); a symlink to a device is written through, never
# replaced; signals remove the run's temporaries and exit 128 + the signal; stale temporaries
# of killed runs are swept; FIFOs never hang a reader.
. "$SRC/tests/cli/lib.sh"

# a config and dumps; the inputs' bytes and mtimes must survive every refusal
cat > c.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_theta": 10000.0}
J
touch -d '2020-01-01 00:00:00' c.json
"$PY" -c "
import numpy as np
np.save('in.npy', np.ones((3, 64), np.float32))
np.save('q.npy', np.ones((1, 4, 8, 64), np.float32))
"
touch -d '2020-01-01 00:00:00' in.npy q.npy
snap() { for f in "$@"; do printf '%s %s\n' "$(sha256sum < "$f")" "$(stat -c %Y "$f")"; done; }
snap c.json in.npy q.npy > before.txt
same() { snap c.json in.npy q.npy > after.txt; cmp before.txt after.txt || { echo "an input changed"; exit 1; }; }
one_line() { test "$(wc -l < out.stderr)" -eq 1 || { echo "want one stderr line:"; cat out.stderr; exit 1; }; }

# gen -o c.bin: the raw writer's sidecar c.json is the config
expect_fail 2 "'c.json': refusing to overwrite an input" "$POSENC" gen --config c.json --seq-len 4 -o c.bin
one_line; same; no_file c.bin
# apply -o c.bin: the same sidecar
expect_fail 2 "refusing to overwrite an input" "$POSENC" apply in.npy --layout sd --config c.json -o c.bin
one_line; same; no_file c.bin
# verify --report onto the config
expect_fail 2 "'c.json': refusing to overwrite an input" "$POSENC" verify --config c.json --report c.json
one_line; same
# convert a raw pair onto itself (its own .bin, named through the sidecar)
"$POSENC" convert in.npy r.bin > /dev/null 2>&1
snap r.json r.bin > raw_before.txt
expect_fail 2 "refusing to overwrite an input" "$POSENC" convert r.json r.bin --dtype bf16
one_line; snap r.json r.bin > raw_after.txt; cmp raw_before.txt raw_after.txt
expect_fail 2 "refusing to overwrite an input" "$POSENC" convert in.npy in.npy
one_line; same
# stdin is the output file
expect_fail 2 "'in.npy': refusing to overwrite an input" sh -c "'$POSENC' apply - --layout sd --config c.json -o in.npy < in.npy"
one_line; same
# a second name for an input (a hard link, a symlink) is the same file
ln c.json c-link.json
ln -s in.npy in-sym.npy
expect_fail 2 "refusing to overwrite an input" "$POSENC" gen --config c.json --seq-len 4 --array cos --format npy -o c-link.json
expect_fail 2 "refusing to overwrite an input" "$POSENC" apply in-sym.npy --layout sd --config c.json -o in.npy
same

# a --report symlink to /dev/full: written through, fails, and the link stays a link
if [ -w /dev/full ]; then
    ln -s /dev/full full.json
    expect_fail 3 "No space left on device" "$POSENC" verify --config c.json --report full.json -q
    one_line
    test -L full.json || { echo "the symlink was replaced"; exit 1; }
fi
ls -a | grep -q '\.posenc-tmp' && { echo "temporary left"; ls -a; exit 1; }

# ---- signals: the run's temporaries go, the exit status is 128 + the signal ----
for s in INT:130 TERM:143 HUP:129; do
    sig=${s%%:*} want=${s#*:}
    set +e
    timeout --preserve-status -s "$sig" 1 "$POSENC" gen --config c.json --seq-len 50000000 --force -o big.npz 2> sig.err
    rc=$?
    set -e
    test "$rc" -eq "$want" || { echo "$sig: exit $rc, want $want"; cat sig.err; exit 1; }
    no_file big.npz
done

# ---- stale temporaries of runs that died (pid gone, or older than a day) are removed once ----
touch .posenc-tmp-999999999-abcdef-x.npz
touch -d '3 days ago' .posenc-tmp-oldabc-y.npz
touch ".posenc-tmp-$$-zzzzzz-live.npz"   # this shell is alive: not stale
expect_ok "$POSENC" gen --config c.json --seq-len 4 -o t.npz
grep -qF "posenc gen: '.': removed 2 stale temporaries left by interrupted runs" out.stderr
test -e ".posenc-tmp-$$-zzzzzz-live.npz"
rm -f ".posenc-tmp-$$-zzzzzz-live.npz" t.npz

# ---- FIFOs never hang a reader ----
mkdir d && cp in.npy d/a.npy && mkfifo d/b.npy
expect_fail 3 "'d/b.npy': not a regular file" timeout 10 "$POSENC" ls d
one_line
rm d/b.npy && mkfifo d/meta.json
expect_fail 3 "'d/meta.json': not a regular file (a FIFO)" timeout 10 "$POSENC" ls d
one_line
mkdir e && "$POSENC" convert in.npy e/r.bin > /dev/null 2>&1 && rm e/r.bin && mkfifo e/r.bin
expect_fail 3 "'e/r.bin': " timeout 10 "$POSENC" convert e/r.json x.npy
one_line; no_file x.npy
mkdir f && "$POSENC" convert in.npy f/r.bin > /dev/null 2>&1 && rm f/r.json && mkfifo f/r.json
expect_fail 3 "not a regular file (a FIFO)" timeout 10 "$POSENC" convert f/r.bin x.npy
one_line; no_file x.npy
# a FIFO the user names is read as it is written (as cat does)
mkfifo cfg.fifo
(sleep 1; cat c.json > cfg.fifo) &
expect_ok timeout 10 "$POSENC" info --config cfg.fifo
wait

# ---- bounded work: the output size comes from the declared shapes, before anything is written
"$PY" -c "
import numpy as np, os
# a sparse 4.4 GB NPY: a valid file that takes no disk
np.lib.format.open_memmap('huge.npy', mode='w+', dtype=np.float32, shape=(17000000, 64))
"
expect_fail 3 "over the 4 GiB limit; pass --force" "$POSENC" convert huge.npy h.safetensors
one_line; no_file h.safetensors
expect_fail 3 "over the 4 GiB limit; pass --force" "$POSENC" apply huge.npy --layout sd --config c.json -o h.npy
one_line; no_file h.npy
rm -f huge.npy
# a deflated NPZ member that declares more than deflate can expand is a lie
"$PY" -c "
import zipfile, struct, numpy as np, io
b = io.BytesIO(); np.save(b, np.zeros(1000, np.float32)); raw = b.getvalue()
z = zipfile.ZipFile('bomb.npz', 'w', zipfile.ZIP_DEFLATED); z.writestr('x.npy', raw); z.close()
data = bytearray(open('bomb.npz', 'rb').read())
cd = data.rfind(b'PK\x01\x02')
struct.pack_into('<I', data, cd + 24, 0xfffffff0)   # central directory: uncompressed size
open('bomb.npz', 'wb').write(bytes(data))
"
expect_fail 3 "more than deflate can expand" "$POSENC" convert bomb.npz b.npy
one_line; no_file b.npy

# ---- derived values that are not finite are errors naming the file and the keys
cat > yarn.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_scaling": {"rope_type": "yarn", "factor": 4, "mscale": 1e308, "mscale_all_dim": 1e-308,
                  "original_max_position_embeddings": 16}}
J
expect_fail 3 "'yarn.json': yarn: attention scaling" "$POSENC" gen --config yarn.json --seq-len 4 -o y.npz
grep -q "mscale" out.stderr; one_line; no_file y.npz
for t in 1e308 1e-300; do
    printf '{"model_type":"llama","hidden_size":256,"num_attention_heads":4,"max_position_embeddings":64,"rope_theta":%s}' $t > t.json
    expect_fail 3 "'t.json': default: inverse frequency 1 is not finite" "$POSENC" info --config t.json
    grep -q "check rope_theta" out.stderr; one_line
done

# ---- a config is parsed within a memory budget: 20 MB of one-digit numbers is refused cheaply
"$PY" -c "
open('bigcfg.json', 'w').write('{\"model_type\": \"llama\", \"x\": [' + ','.join(['1'] * 10000000) + ']}')
"
set +e
/usr/bin/time -v "$POSENC" info --config bigcfg.json > /dev/null 2> time.err; rc=$?
set -e
test "$rc" -eq 3
grep -q "more than 1000000 JSON values" time.err
kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.err)
test "$kb" -lt 200000 || { echo "config parse used $kb KiB"; exit 1; }
rm -f bigcfg.json

# ---- the same mistake, the same exit code and one line in every command
G="$DATA/configs/gemma-3-27b-it.json"
for cmd in "info --config $G" "gen --config $G -o lt.npz" "verify --config $G -q" "apply q.npy --config $G -o lt.npy"; do
    expect_fail 2 "unknown layer type 'nope'" "$POSENC" $cmd --layer-type nope
    one_line
done
no_file lt.npz lt.npy

# ---- a full disk: one line, exit 3, nothing left (root only: a tmpfs of 256 KiB)
if [ "$(id -u)" = 0 ] && mkdir full && mount -t tmpfs -o size=256k tmpfs full 2>/dev/null; then
    trap 'umount full 2>/dev/null' EXIT
    for out in full/t.npz full/t.safetensors full/t.bin full/t.npy full/tdir/; do
        arr=""; case $out in *.npy) arr="--array cos" ;; esac
        expect_fail 3 "No space left on device" "$POSENC" gen --config c.json --seq-len 20000 $arr -o "$out"
        one_line
        test -z "$(ls -A full)" || { echo "left in the full disk: $(ls -A full)"; umount full; exit 1; }
    done
    "$PY" -c "import numpy as np; np.save('mid.npy', np.ones((4096, 64), np.float32))"
    expect_fail 3 "No space left on device" "$POSENC" convert mid.npy full/x.npz
    one_line
    test -z "$(ls -A full)"
    umount full
    trap - EXIT
else
    echo "skipped: full-disk cases need root and tmpfs"
fi
