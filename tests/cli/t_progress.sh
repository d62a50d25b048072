# The progress line (posenc(1) PROGRESS): on a terminal (a pseudo-terminal from pty_run.py) gen,
# apply, convert and verify redraw "posenc CMD: DONE of TOTAL (P%), RATE/s, ETA M:SS" in place
# and end with "posenc CMD: TOTAL in S s (RATE/s)" (before verify's summary, when standard output
# is the same terminal); nothing in a pipe, with -q, or within the first second; a failed run
# erases the line before its one error line, and so does SIGINT or SIGTERM. The test knobs
# POSENC_PROGRESS_DELAY=0 and POSENC_PROGRESS_INTERVAL=0 draw at every streamed chunk.
# Also: a reader closing the pipe early ends posenc silently with SIGPIPE (141).
. "$SRC/tests/cli/lib.sh"
CFG="$SRC/examples/qwen3.5-27b.json"
RUN="$SRC/tests/cli/pty_run.py"
$PY - <<'PY'
import numpy as np
rng = np.random.default_rng(0)
np.save("q.npy", rng.standard_normal((1, 4, 1024, 256)).astype(np.float32))
np.save("k.npy", rng.standard_normal((1, 2, 1024, 256)).astype(np.float32))
PY
# check.py CMD TOTAL_TEXT FILE: every redraw has the format, DONE never decreases nor passes
# TOTAL, at least two redraws, and the final line names TOTAL.
cat > check.py <<'PY'
import re, sys
cmd, total, path = sys.argv[1], sys.argv[2], sys.argv[3]
b = open(path, "rb").read().decode()
amount = r"(\d+ B|\d+\.\d (?:KiB|MiB|GiB))"
line = re.compile(r"\rposenc %s: %s of %s \((\d+)%%\), %s/s, ETA (\d+:\d\d|\?)\x1b\[K" % (cmd, amount, re.escape(total), amount))
final = re.compile(r"\r\x1b\[Kposenc %s: %s in \d+\.\d s \(%s/s\)\n$" % (cmd, re.escape(total), amount))
units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
def val(s):
    n, u = s.split()
    return float(n) * units[u]
draws = list(line.finditer(b))
assert len(draws) >= 2, (len(draws), b[:300])
rest = line.sub("", b)
assert final.fullmatch(rest) or final.search(rest) and final.search(rest).start() == 0, repr(rest)
done = [val(m.group(1)) for m in draws]
assert done == sorted(done) and done[-1] <= val(total) * 1.001, done
for m in draws:
    # the percentage is floor(100 done / total); DONE is shown rounded to 0.05 of its unit
    d, p, half = val(m.group(1)), int(m.group(2)), 0.05 * units[m.group(1).split()[1]]
    assert 100 * (d - half) / val(total) - 1 <= p <= 100 * (d + half) / val(total), (p, d)
print(cmd, len(draws), "redraws")
PY
export POSENC_PROGRESS_DELAY=0 POSENC_PROGRESS_INTERVAL=0
# gen: cos + sin [20000, 64] f32 + inv_freq [32] = 10240128 bytes = 9.8 MiB
$PY "$RUN" e.gen out.txt "$POSENC" gen --config "$CFG" -o t.npz --seq-len 20000
$PY check.py gen "9.8 MiB" e.gen
# apply: q [1,4,1024,256] + k [1,2,1024,256] f32 = 6.0 MiB written
$PY "$RUN" e.apply out.txt "$POSENC" apply q.npy k.npy --config "$CFG" -o rot.npz
$PY check.py apply "6.0 MiB" e.apply
# convert: apply's q and k (6.0 MiB, written in chunks of 4 MiB) to HDF5 with gzip
$PY "$RUN" e.convert out.txt "$POSENC" convert rot.npz rot.h5 --compress
$PY check.py convert "6.0 MiB" e.convert
# verify: the dumps it reads, q k and their rotations: 12.0 MiB
"$POSENC" apply q.npy --config "$CFG" -o qr.npy
"$POSENC" apply k.npy --config "$CFG" -o kr.npy
$PY "$RUN" e.verify out.txt "$POSENC" verify --config "$CFG" --q q.npy --k k.npy \
    --expect-q qr.npy --expect-k kr.npy
$PY check.py verify "12.0 MiB" e.verify
grep -q . out.txt # verify's summary still on stdout
# standard output on the same terminal: the progress line is cleared and its final line
# ("12.0 MiB in S s") printed before the summary starts; not a progress byte after that
$PY "$RUN" e.tty tty "$POSENC" verify --config "$CFG" --q q.npy --k k.npy \
    --expect-q qr.npy --expect-k kr.npy
$PY - "$CFG" <<'PY'
import re, sys
b = open("e.tty", "rb").read().decode()
start = b.index("posenc verify: %s (rope)\n" % sys.argv[1])
head, summary = b[:start], b[start:]
assert re.search(r"\r\x1b\[Kposenc verify: 12\.0 MiB in \d+\.\d s \([^)]*/s\)\n$", head), repr(head[-200:])
assert "\r" not in summary and "\x1b" not in summary, repr(summary[:300])
assert summary.rstrip("\n").endswith("result: PASS (5 checks)"), repr(summary[-200:])
PY

# -q: nothing on the terminal
for c in "gen --config $CFG -o t2.npz --seq-len 20000" "apply q.npy --config $CFG -o r2.npy" \
         "convert q.npy q2.h5"; do
    $PY "$RUN" e.quiet out.txt "$POSENC" $c -q
    [ ! -s e.quiet ] || { echo "-q printed: $c"; od -c e.quiet | head; exit 1; }
done
$PY "$RUN" e.quiet out.txt "$POSENC" verify --config "$CFG" --q q.npy --k k.npy \
    --expect-q qr.npy --expect-k kr.npy -q
[ ! -s e.quiet ]
# standard error not a terminal: nothing
"$POSENC" gen --config "$CFG" -o t3.npz --seq-len 20000 2> e.pipe
[ ! -s e.pipe ]
"$POSENC" convert q.npy q3.h5 2>&1 | cat > e.pipe
[ ! -s e.pipe ]
# the default delay: a run done within its first second shows nothing
unset POSENC_PROGRESS_DELAY POSENC_PROGRESS_INTERVAL
$PY "$RUN" e.fast out.txt "$POSENC" gen --config "$CFG" -o t4.npz --seq-len 2000
[ ! -s e.fast ]
export POSENC_PROGRESS_DELAY=0 POSENC_PROGRESS_INTERVAL=0

# a failure mid-stream (standard output closed after 3 MB, SIGPIPE ignored: EPIPE): the line is
# erased ("\r" ESC "[K") and the error is one line of its own
set +e
$PY "$RUN" e.fail close:3000000 "$POSENC" gen --config "$CFG" -o - --array cos --seq-len 200000
rc=$?
set -e
[ "$rc" -eq 3 ] || { echo "closed pipe with SIGPIPE ignored: exit $rc"; exit 1; }
$PY - <<'PY'
b = open("e.fail", "rb").read().decode()
head, sep, tail = b.rpartition("\r\x1b[K")
assert sep and "posenc gen: " in head, repr(b[-200:])
assert tail == "posenc gen: cannot write '-': Broken pipe\n", repr(tail)
PY

# SIGINT or SIGTERM while the line is drawn: it is erased ("\r" ESC "[K", the last bytes on
# the terminal) before posenc dies of the signal (130, 143), its temporary removed
for sig in INT:130 TERM:143; do
    set +e
    $PY "$RUN" --signal "${sig%:*}" e.sig out.txt "$POSENC" gen --config "$CFG" -o sig.npz \
        --seq-len 4000000
    rc=$?
    set -e
    [ "$rc" -eq "${sig#*:}" ] || { echo "SIG${sig%:*}: exit $rc"; exit 1; }
    $PY - <<'PY'
b = open("e.sig", "rb").read().decode()
assert "posenc gen: " in b and b.endswith("\x1b[K\r\x1b[K"), repr(b[-200:])
PY
    no_file sig.npz
done

# bad knob values are refused like POSENC_THREADS
POSENC_PROGRESS_DELAY=soon expect_fail 2 "posenc gen: POSENC_PROGRESS_DELAY: 'soon' is not a number in [0, 3600]" \
    "$POSENC" gen --config "$CFG" -o t5.npz --seq-len 4
POSENC_PROGRESS_INTERVAL=-1 expect_fail 2 "POSENC_PROGRESS_INTERVAL: '-1' is not a number" \
    "$POSENC" gen --config "$CFG" -o t5.npz --seq-len 4
no_file t5.npz

# a reader closing the pipe early (SIGPIPE at its default): killed by SIGPIPE, exit 141, and
# not a byte on standard error (posenc(1) EXIT STATUS)
$PY - "$POSENC" "$CFG" <<'PY'
import signal, subprocess, sys
posenc, cfg = sys.argv[1], sys.argv[2]
p = subprocess.Popen([posenc, "gen", "--config", cfg, "-o", "-", "--array", "cos"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_DFL))
p.stdout.read(10)
p.stdout.close()  # like head -c 10
err = p.stderr.read()
rc = p.wait()
assert rc == -signal.SIGPIPE, rc
assert err == b"", err
PY
no_file .posenc-tmp-x
