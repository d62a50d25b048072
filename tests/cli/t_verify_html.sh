# The HTML report renders in a real browser (headless chromium): a screenshot that is not blank,
# no console errors, and the DOM holds the SVG plots and every check name. Skipped only when
# chromium is absent (CI installs it).
. "$SRC/tests/cli/lib.sh"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ]; then
    echo "skipped: no chromium"
    exit 0
fi
# a passing config report and a failing dump report with a diagnosis
expect_ok "$POSENC" verify --config "$DATA/configs/llama-3.1-8b.json" --max-position 65536 --report pass.html
"$PY" - <<'PYEOF'
import json, numpy as np
json.dump({"model_type": "llama", "rope_theta": 10000.0, "hidden_size": 256, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 64, "max_position_embeddings": 2048}, open("c.json", "w"))
g = np.random.default_rng(7)
q = g.standard_normal((1, 4, 32, 64)).astype(np.float32)
k = g.standard_normal((1, 2, 32, 64)).astype(np.float32)
np.save("q.npy", q); np.save("k.npy", k)
# the runtime "forgot" RoPE on k: a failure with a diagnosis section
np.save("ek.npy", k)
PYEOF
set +e
"$POSENC" verify --config c.json --q q.npy --k k.npy --expect-k ek.npy --report fail.html --report fail.json > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ]
grep -q '<svg' fail.html
! grep -qiE 'https?://[^"]*\.(js|css|png|woff)|<script|<link|<img' fail.html pass.html

browse() { # FILE: screenshot + console check + DOM dump
    f=$1
    prof=$(mktemp -d)
    set +e
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$prof" --enable-logging=stderr --v=0 --screenshot="$PWD/$f.png" \
        --window-size=1200,1600 "file://$PWD/$f" > "$f.out" 2> "$f.err"
    rc=$?
    prof2=$(mktemp -d)
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$prof2" --dump-dom "file://$PWD/$f" > "$f.dom" 2> "$f.err2"
    rc2=$?
    set -e
    rm -rf "$prof" "$prof2"
    [ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ] || { echo "chromium failed on $f ($rc, $rc2)"; tail "$f.err" "$f.err2"; exit 1; }
    test -s "$f.png" || { echo "no screenshot of $f"; exit 1; }
    size=$(wc -c < "$f.png")
    [ "$size" -gt 20000 ] || { echo "screenshot of $f is only $size bytes"; exit 1; }
    head -c 8 "$f.png" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'
    if grep -E 'CONSOLE' "$f.err" "$f.err2" | grep -qiE 'error|uncaught' || grep -q 'Uncaught' "$f.err" "$f.err2"; then
        echo "console errors in $f:"; grep -E 'CONSOLE|Uncaught' "$f.err" "$f.err2"; exit 1
    fi
    grep -q '<svg' "$f.dom" || { echo "no svg in the DOM of $f"; exit 1; }
    grep -q '<polyline' "$f.dom"
}
browse pass.html
for n in invariance invariance_hf tables; do grep -q "<code>$n</code>" pass.html.dom; done
grep -q 'PASS' pass.html.dom
browse fail.html
for n in invariance invariance_hf tables expect_k; do grep -q "<code>$n</code>" fail.html.dom; done
grep -q 'class="diag"' fail.html.dom
grep -q 'FAIL' fail.html.dom
