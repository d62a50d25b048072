# The HTML report as a person sees it, in a real browser (headless chromium): a screenshot of a
# passing and of a failing report saved in the test's log directory, no console errors, and
# assertions on the DOM chromium built: the title carries the verdict and the config, the
# header names the dumps and their members, every check is there, plots have their tolerance
# line, and an error of exactly 0 sits on the plot's floor line with the note that says so. The
# first screen is the verdict, the count and what failed, each linked to an anchor that exists,
# before the header and the folded list of dumps (a multi-layer Qwen3.5 report too).
# Skipped (one line) only when chromium is absent; `make test` installs it (.ci/deps.sh test).
. "$SRC/tests/cli/lib.sh"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ]; then
    echo "skipped: no chromium (.ci/deps.sh test installs it)"
    exit 77
fi
shots=${LOGDIR:-$PWD}

# a passing config report; a passing dump report whose dumps are members of one NPZ; a failing
# one (the runtime did not rotate k) with its diagnosis
expect_ok "$POSENC" verify --config "$DATA/configs/llama-3.1-8b.json" --max-position 65536 --report config.html
"$PY" "$SRC/tests/cli/verify_fixtures.py" "default fx" "qwen3.5 none --mistake none --seq 64 --offset 4096"
"$PY" -c 'import numpy as np; np.savez("dumps.npz", **{n: np.load("fx/%s.npy" % n) for n in ("q", "k", "eq", "ek")})'
expect_ok "$POSENC" verify --config fx/config.json --q dumps.npz:q --k dumps.npz:k \
    --expect-q dumps.npz:eq --expect-k dumps.npz:ek --report pass.html --report pass.json
set +e
"$POSENC" verify --config none/config.json --q none/q.npy --k none/k.npy --expect-q none/eq.npy \
    --expect-k none/ek.npy --offset 4096 --report fail.html --report fail.json > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "fail report: exit $rc"; cat out.stdout; exit 1; }
# a multi-layer dump of Qwen3.5 (layer 2 linear attention, layer 3 full attention) whose layer 3
# k the runtime rotated 3 positions late: the first screen names the pair and the check
Q35="$DATA/configs/qwen3.5-27b.json"
"$PY" -c "
import numpy as np; r = np.random.default_rng(5)
np.savez('q35.npz', **{'layers.%d.%s' % (l, n): r.standard_normal((1, h, 8, 256)).astype('f4')
                       for l in (2, 3) for n, h in (('q', 2), ('k', 1))})"
expect_ok "$POSENC" apply q35.npz --config "$Q35" -o q35rot.npz
expect_ok "$POSENC" apply q35.npz:layers.3.q q35.npz:layers.3.k --config "$Q35" --offset 3 -o q35late.npz
"$PY" -c "
import numpy as np
a = {n: v for n, v in np.load('q35rot.npz').items() if n.startswith('layers.')}
a['layers.3.k'] = np.load('q35late.npz')['k']
np.savez('q35bad.npz', **a)"
set +e
"$POSENC" verify --config "$Q35" --q q35.npz --expect-q q35bad.npz --report layers.html \
    --report layers.json > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "layers report: exit $rc"; cat out.stdout; exit 1; }
# self-contained: nothing fetched from anywhere
! grep -qiE 'https?://[^"]*\.(js|css|png|woff)|<script|<link|<img' config.html pass.html fail.html layers.html

browse() { # FILE: screenshot into the log directory, console check, DOM dump
    f=$1
    prof=$(mktemp -d)
    set +e
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$prof" --enable-logging=stderr --v=0 --screenshot="$shots/$f.png" \
        --window-size=1200,2400 "file://$PWD/$f" > "$f.out" 2> "$f.err"
    rc=$?
    prof2=$(mktemp -d)
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$prof2" --dump-dom "file://$PWD/$f" > "$f.dom" 2> "$f.err2"
    rc2=$?
    set -e
    rm -rf "$prof" "$prof2"
    [ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ] || { echo "chromium failed on $f ($rc, $rc2)"; tail "$f.err" "$f.err2"; exit 1; }
    test -s "$shots/$f.png" || { echo "no screenshot of $f"; exit 1; }
    size=$(wc -c < "$shots/$f.png")
    [ "$size" -gt 20000 ] || { echo "screenshot of $f is only $size bytes"; exit 1; }
    head -c 8 "$shots/$f.png" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'
    if grep -E 'CONSOLE' "$f.err" "$f.err2" | grep -qiE 'error|uncaught' || grep -q 'Uncaught' "$f.err" "$f.err2"; then
        echo "console errors in $f:"; grep -E 'CONSOLE|Uncaught' "$f.err" "$f.err2"; exit 1
    fi
    echo "screenshot: $shots/$f.png ($size bytes)"
}
for f in config.html pass.html fail.html layers.html; do browse "$f"; done

# the DOM as chromium parsed it, against the JSON report of the same run
"$PY" - <<'PYEOF'
import json
from html.parser import HTMLParser

class Dom(HTMLParser):
    """elements as (tag, attrs, text, ancestors' tags + classes)"""
    def __init__(self):
        super().__init__()
        self.stack, self.els = [], []
    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "a": dict(attrs), "text": "", "up": list(self.stack)}
        self.els.append(e)
        if tag not in ("line", "circle", "rect", "polyline", "meta", "br"):
            self.stack.append(e)
    def handle_startendtag(self, tag, attrs):
        self.els.append({"tag": tag, "a": dict(attrs), "text": "", "up": list(self.stack)})
    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i]["tag"] == tag:
                del self.stack[i:]
                break
    def handle_data(self, d):
        for e in self.stack:
            e["text"] += d

def dom(path):
    p = Dom()
    p.feed(open(path).read())
    return p.els

def cls(e):
    return e["a"].get("class", "").split()

def svgs(els):
    """each svg with the elements inside it"""
    out = []
    for e in els:
        if e["tag"] == "svg":
            out.append((e, [x for x in els if e in x["up"]]))
    return out

for name, verdict in (("config.html", "PASS ("), ("pass.html", "PASS ("), ("fail.html", "FAIL (")):
    els = dom(name + ".dom")
    title = [e for e in els if e["tag"] == "title" and not any(u["tag"] == "svg" for u in e["up"])][0]["text"]
    assert title.startswith("posenc verify: " + verdict), (name, title)
    assert "config" in title and title.endswith(".json"), (name, title)
    h1 = [e for e in els if e["tag"] == "h1"][0]["text"]
    assert verdict in h1, (name, h1)
    hdr = [e for e in els if e["tag"] == "table" and e["a"].get("id") == "header"][0]["text"]
    assert "config" in hdr and "precision" in hdr, hdr
    plots = svgs(els)
    assert plots, name
    # every plot's points are circles carrying their values; a plot with a tolerance draws it
    for svg, inner in plots:
        pts = [e for e in inner if e["tag"] == "circle" and "pt" in cls(e)]
        assert pts, (name, svg["a"])
    tol_plots = [(s, i) for s, i in plots if any("tolerance" in cls(e) for e in i)]
    assert tol_plots, name
    for svg, inner in tol_plots:
        assert any("tolerance-label" in cls(e) and "tol" in e["text"] for e in inner), name

# the dump reports: header rows, the dump table with files and members, the comparison plots
rep = json.load(open("pass.json"))
els = dom("pass.html.dom")
hdr = [e for e in els if e["tag"] == "table" and e["a"].get("id") == "header"][0]["text"]
assert "bhsd" in hdr and "--offset 0" in hdr and "exact:" in hdr and "VERDICT" in hdr, hdr
rows = [e for e in els if e["tag"] == "tr" and any(u.get("a", {}).get("id") == "dumps" for u in e["up"])]
cells = [[c["text"] for c in els if c["tag"] == "td" and r in c["up"]] for r in rows]
cells = [c for c in cells if c]
assert [c[1:4] for c in cells] == [["q", "dumps.npz", "q"], ["k", "dumps.npz", "k"],
                                   ["expect_q", "dumps.npz", "eq"], ["expect_k", "dumps.npz", "ek"]], cells
assert cells[0][4] == "f32" and cells[0][5] == "1x4x48x64", cells[0]
d = rep["header"]["pairs"][0]["dumps"]
assert [(x["file"], x["member"]) for x in d] == [("dumps.npz", "q"), ("dumps.npz", "k"), ("dumps.npz", "eq"), ("dumps.npz", "ek")]

# a passing comparison has its plot too: the worst error over its bound against position, the
# bound drawn at 1, and the exact rows of position 0 (error 0) on the floor line, with the note
chk = {c["name"]: c for c in rep["checks"]}
for what in ("q", "k"):
    svg, inner = [(s, i) for s, i in svgs(els) if any(e["tag"] == "title" and e["text"] == what + ": worst error over its bound against position" for e in i)][0]
    tol = [e for e in inner if e["tag"] == "line" and "tolerance" in cls(e)]
    assert len(tol) == 1 and float(tol[0]["a"]["data-y"]) == 1, tol
    floor_y = float(svg["a"]["data-floor-y"])
    floor = [e for e in inner if e["tag"] == "line" and "floor" in cls(e)]
    assert len(floor) == 1 and float(floor[0]["a"]["y1"]) == floor_y, floor
    assert any("floor-label" in cls(e) and e["text"].strip() == "0" for e in inner)
    zeros = [e for e in inner if e["tag"] == "circle" and "zero" in cls(e)]
    assert zeros, "no zero point in the %s plot" % what
    for z in zeros:
        assert float(z["a"]["data-y"]) == 0 and float(z["a"]["cy"]) == floor_y, z["a"]
    # the other points lie above the floor, under the tolerance line (the check passed)
    tol_y = float(tol[0]["a"]["y1"])
    rel = [e for e in inner if e["tag"] == "circle" and e["a"].get("data-series") == "0" and "zero" not in cls(e)]
    assert rel and all(tol_y < float(e["a"]["cy"]) < floor_y for e in rel), [e["a"] for e in rel]
    assert any("floor-note" in cls(e) and "exactly 0" in e["text"] for e in inner)
    # the floor is a decade of its own: every non-zero point lies on or above the lowest
    # labelled decade (y axis labels are "1eN" texts 4 px below their grid line)
    ylab = [float(e["a"]["y"]) - 4 for e in inner if e["tag"] == "text" and
            e["a"].get("text-anchor") == "end" and e["text"].startswith("1e")]
    assert ylab and max(ylab) < floor_y, (ylab, floor_y)
    nonzero = [e for e in inner if e["tag"] == "circle" and "zero" not in cls(e)]
    assert all(float(e["a"]["cy"]) <= max(ylab) + 0.05 for e in nonzero), (max(ylab), [e["a"] for e in nonzero])
    # position bucket 0 holds error 0 in the JSON as well
    pr = chk["expect_" + what]["details"]["per_position_range"]
    assert pr[0]["from"] == 0 and pr[0]["max_abs_err"] == 0, pr[0]

# the failing report: its diagnosis names the mistake, the failing checks come first
rep = json.load(open("fail.json"))
els = dom("fail.html.dom")
diag = [e["text"] for e in els if e["tag"] == "div" and "diag" in cls(e)]
assert len(diag) == 2 and all("is not rotated: it equals the pre-RoPE rows" in t for t in diag), diag
assert not any("shifted by" in t for t in diag), diag
h2 = [e["text"] for e in els if e["tag"] == "h2"]
assert h2[:2] == ["expect_q", "expect_k"], h2
hdr = [e for e in els if e["tag"] == "table" and e["a"].get("id") == "header"][0]["text"]
assert "--offset 4096" in hdr and "4096 to 4159" in hdr, hdr
names = {e["text"] for e in els if e["tag"] == "code"}
for n in ("invariance", "invariance_hf", "tables", "expect_q", "expect_k", "none/q.npy", "none/ek.npy"):
    assert n in names, (n, names)

# the first screen of every report: the verdict, the count line, the failed table (failing
# reports only), then the header and the list of dumps, folded (a <details> without "open")
def ids(els):
    return {e["a"]["id"]: i for i, e in enumerate(els) if "id" in e["a"]}
for name in ("config.html", "pass.html", "fail.html", "layers.html"):
    els = dom(name + ".dom")
    at = ids(els)
    h1 = [i for i, e in enumerate(els) if e["tag"] == "h1"][0]
    order = [h1, at["count"]] + ([at["failed"]] if name in ("fail.html", "layers.html") else []) + [at["header"]]
    assert order == sorted(order) and order[-1] < min(i for i, e in enumerate(els) if e["tag"] == "h2"), (name, order)
    if name != "config.html":
        assert at["header"] < at["members"] < at["dumps"] and "open" not in els[at["members"]]["a"], name
    # every link in the page has its target
    for e in els:
        if e["tag"] == "a":
            href = e["a"]["href"]
            assert href.startswith("#") and href[1:] in at, (name, href)
rep = json.load(open("layers.json"))
els = dom("layers.html.dom")
at = ids(els)
failed = [e for e in els if e["tag"] == "tr" and els[at["failed"]] in e["up"]][1:]
cells = [[c["text"] for c in els if c["tag"] == "td" and r in c["up"]] for r in failed]
assert [c[0] for c in cells] == ["pair layers.3", "expect_k@layers.3"], cells
assert cells[0][1] == rep["pairs"][1]["explanation"] and cells[0][1].startswith("expect_k@layers.3: k matches with positions shifted by +3"), cells
assert cells[1][1].startswith("k matches with positions shifted by +3"), cells
links = [e["a"]["href"] for e in els if e["tag"] == "a" and els[at["failed"]] in e["up"]]
assert [els[at[l[1:]]]["tag"] for l in links] == ["tr", "h2"], links
assert rep["pairs"][0]["layer_type"] == "linear_attention" and rep["pairs"][1]["layer_type"] == "full_attention"
PYEOF
