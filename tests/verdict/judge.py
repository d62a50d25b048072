#!/usr/bin/python3
"""Judge posenc verify's verdicts on the corpus of make_corpus.py.

usage: judge.py commands OUTDIR
           one line per case: its id, then the verify arguments, separated by tabs (the
           config's path from the repository root, the dumps' from OUTDIR)
       judge.py judge OUTDIR RESULTS [REPORTS]
           RESULTS has a line "ID EXIT" per case, and REPORTS/ID.json (default OUTDIR/r) is the
           case's JSON report.
           Prints a line per wrong case, then the confusion matrix. Exit 1 on a false verdict
           (a PASS that must FAIL or the reverse), an unnamed mistake or an error (exit status
           other than 0 and 1); else 0. With VERDICT_EXPECT_MISTAKES=1 in the environment:
           exit 0 only when there was at least one false verdict (a mutated verdict, e.g. the
           bound scaled by 0.5 or 2, must be caught); cases RESULTS leaves out are then left out
           of the matrix.

A failing mistake is named when every check in its "fail" list (expect_q, expect_k) failed with
a diagnosis whose best is one of the case's names, and every check in its "passing" list passed.
"""
import json
import os
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def commands(out):
    with open(os.path.join(out, "manifest.json")) as f:
        cases = json.load(f)
    for c in cases:
        args = ["--config", os.path.join(REPO, c["config"])]
        for role in ("q", "k", "expect_q", "expect_k"):
            args += ["--" + role.replace("_", "-"), os.path.join(out, c[role])]
        args += ["--offset", str(c["offset"])] + c["args"]
        for a in [c["id"]] + args:
            if "\t" in a or "\n" in a:
                raise SystemExit("judge.py: a tab or newline in '%s'" % a)
        print("\t".join([c["id"]] + args))


def check_of(report, role):
    for ch in report.get("checks", []):
        if ch["name"] == "expect_" + role:
            return ch
    return None


def said(report):
    """What posenc said about the comparisons, in one line."""
    if report is None:
        return "no report"
    parts = []
    for role in ("q", "k"):
        ch = check_of(report, role)
        if ch is None:
            parts.append("expect_%s missing" % role)
            continue
        d = ch.get("diagnosis") or {}
        err = ch.get("max_rel_err")
        s = "expect_%s %s (max_rel_err %s" % (role, "ok" if ch["ok"] else "FAIL",
                                              "%.3g" % err if isinstance(err, (int, float)) else err)
        if not ch["ok"]:
            s += ", best %r, explained %s" % (d.get("best"), d.get("explained"))
        parts.append(s + ")")
    others = [ch["name"] for ch in report.get("checks", [])
              if not ch["ok"] and not ch["name"].startswith("expect_")]
    if others:
        parts.append("also failed: " + ", ".join(others))
    return "; ".join(parts)


def judge(out, results, rdir=None):
    with open(os.path.join(out, "manifest.json")) as f:
        cases = json.load(f)
    rcs = {}
    with open(results) as f:
        for line in f:
            cid, rc = line.split()
            rcs[cid] = int(rc)
    cats = ["correct", "mistake", "corruption", "probe"]
    cols = ["cases", "PASS", "FAIL", "falsePASS", "falseFAIL", "named", "unnamed", "error"]
    m = {c: dict.fromkeys(cols, 0) for c in cats}
    wrong = []
    subset = os.environ.get("VERDICT_EXPECT_MISTAKES") == "1"
    for c in cases:
        if subset and c["id"] not in rcs:
            continue  # a mutant runs the probes only (t_verdict_corpus.sh)
        row = m[c["category"]]
        row["cases"] += 1
        rc = rcs.get(c["id"])
        path = os.path.join(rdir or os.path.join(out, "r"), c["id"] + ".json")
        report = None
        if os.path.exists(path):
            with open(path) as f:
                report = json.load(f)
        if rc not in (0, 1) or report is None or report.get("ok") is not (rc == 0):
            row["error"] += 1
            wrong.append(("error", c, "exit %s, report ok %s" % (rc, None if report is None
                                                                  else report.get("ok"))))
            continue
        if rc == 0:
            row["PASS"] += 1
            if c["expect"] == "fail":
                row["falsePASS"] += 1
                wrong.append(("false PASS", c, said(report)))
            continue
        row["FAIL"] += 1
        if c["expect"] == "pass":
            row["falseFAIL"] += 1
            wrong.append(("false FAIL", c, said(report)))
            continue
        if c["category"] != "mistake":
            continue
        ok = True
        for role in c["fail"]:
            ch = check_of(report, role)
            d = (ch or {}).get("diagnosis") or {}
            ok = ok and ch is not None and not ch["ok"] and d.get("best") in c["names"]
        for role in c.get("passing", []):
            ch = check_of(report, role)
            ok = ok and ch is not None and ch["ok"]
        if ok:
            row["named"] += 1
        else:
            row["unnamed"] += 1
            want = "want %s named %s" % ("/".join(c["fail"]), " or ".join(c["names"]))
            if c.get("passing"):
                want += ", %s passing" % "/".join(c["passing"])
            wrong.append(("unnamed", c, want + "; " + said(report)))

    for kind, c, text in wrong:
        extra = ""
        if c["category"] == "probe":
            p = c["probe"]
            extra = " [q element head %d pos %d dim %d off by %g x bound %.3g]" % (
                p["head"], p["position"], p["dim"], p["factor"], p["bound"])
        elif c.get("note"):
            extra = " [%s]" % c["note"]
        print("%-10s %s%s: %s" % (kind, c["id"], extra, text))
    # the matrix last, where a log's tail shows it
    print("verdict corpus: %d cases" % len(cases))
    print("%-11s" % "category" + "".join("%10s" % k for k in cols))
    for cat in cats:
        print("%-11s" % cat + "".join("%10d" % m[cat][k] for k in cols))
    false = sum(m[c]["falsePASS"] + m[c]["falseFAIL"] for c in cats)
    errors = sum(m[c]["error"] for c in cats)
    unnamed = m["mistake"]["unnamed"]
    print("false verdicts %d, unnamed mistakes %d, errors %d" % (false, unnamed, errors))
    if os.environ.get("VERDICT_EXPECT_MISTAKES") == "1":
        print("VERDICT_EXPECT_MISTAKES=1: %s" % ("caught: a false verdict occurred" if false
                                                 else "NOT caught: no false verdict"))
        return 0 if false else 1
    return 1 if false or unnamed or errors else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "commands":
        commands(argv[2])
        return 0
    if len(argv) in (4, 5) and argv[1] == "judge":
        return judge(argv[2], argv[3], argv[4] if len(argv) == 5 else None)
    sys.stderr.write("usage: judge.py commands OUTDIR | judge.py judge OUTDIR RESULTS [REPORTS]\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
