#!/usr/bin/python3
"""Golden references for tests/unit/test_diff.c (run with Debian's /usr/bin/python3).

Writes tests/data/golden/diff.txt. Values are written exactly: doubles as Python float.hex(),
float32 arrays as 8-digit hex bit patterns.

ulp lines: the distance in ulps of a dtype between two doubles, each first rounded to the dtype
(round to nearest even, in exact arithmetic; checked against numpy's float16 and float32
casts and torch's bfloat16 cast), computed from
the real values, not from bit patterns: rank(v) counts the representable non-negative values
below |v| (subnormal steps, then 2^m values per binade; +inf one past the largest finite),
negated for v < 0, and the distance is |rank(a) - rank(b)|. The script checks rank against
an enumeration of every float16 and bfloat16 value sorted by numpy, and against np.nextafter
steps for float32 and float64.
    ulp DTYPE A_HEX B_HEX DISTANCE

stats block: two float32 arrays A and B of shape (S, H, D) (with zeros, +-0, NaN, infinities,
nearby and far values) and, for several (atol, rtol, equal_nan), what numpy and torch say:
the count outside np.isclose(a, b, rtol, atol, equal_nan) on float64 copies (the comparison
posenc makes in double; torch.isclose agrees, the script checks), plus the statistics posenc
reports: equal count, max abs err and its flat index (over pairs that are both finite), max rel
err, max ulp (float32), the ulp histogram (bins 0, 1, 2-3, 4-7, ...), the worst 5 by abs error
(non-finite mismatches first, then abs error, ties by index) and, along axis 0, per bucket
[0, 64), [64, 128), [128, S): count, outside, max abs err.
    shape S H D
    a HEX...
    b HEX...
    case ATOL RTOL EQUAL_NAN OUTSIDE NAN_MISMATCH INF_MISMATCH
    bucket LO HI COUNT OUTSIDE MAX_ABS_HEX        (for the case before it)
    equal N
    maxabs HEX FLAT
    maxrel HEX
    maxulp N
    hist BIN COUNT
    worst FLAT...
"""
import math
import os
from fractions import Fraction

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "golden")

# explicit mantissa bits, smallest normal exponent, largest exponent
FMT = {"f16": (10, -14, 15), "bf16": (7, -126, 127), "f32": (23, -126, 127),
       "f64": (52, -1022, 1023)}


def round_exact(dt, x):
    """x rounded once to nearest even in dt, in exact arithmetic."""
    m, emin, emax = FMT[dt]
    if math.isinf(x) or math.isnan(x) or x == 0:
        return x
    v = Fraction(abs(x))
    if v >= Fraction(2) ** (emax + 1) - Fraction(2) ** (emax - m - 1):
        r = math.inf
    else:
        e = emin
        while Fraction(2) ** (e + 1) <= v:
            e += 1
        q = v / Fraction(2) ** (e - m)
        n = math.floor(q)
        if q - n > Fraction(1, 2) or (q - n == Fraction(1, 2) and n % 2 == 1):
            n += 1
        r = float(n * Fraction(2) ** (e - m))
    return -r if x < 0 else r


def round_to(dt, x):
    r = round_exact(dt, x)
    # the casts numpy and torch make agree (torch's double -> bfloat16 goes through float32,
    # so it is compared only on float32 inputs, where no double rounding can happen)
    if dt == "f16":
        assert float(np.float16(x)) == r or (math.isnan(r) and np.isnan(np.float16(x))), x
    elif dt == "f32":
        assert float(np.float32(x)) == r, x
    elif dt == "bf16" and float(np.float32(x)) == x:
        t = float(torch.tensor(x, dtype=torch.float32).to(torch.bfloat16).to(torch.float64))
        assert t == r, (x, t, r)
    return r


def rank(dt, v):
    """Signed count of representable values from 0 to v, from the real value alone."""
    m, emin, emax = FMT[dt]
    if math.isinf(v):
        r = (1 << m) * (emax - emin + 2)
        return r if v > 0 else -r
    x = Fraction(abs(v))
    if x < Fraction(2) ** emin:
        q = x / Fraction(2) ** (emin - m)
        assert q.denominator == 1
        r = int(q)
    else:
        e = emin
        while Fraction(2) ** (e + 1) <= x:
            e += 1
        q = (x - Fraction(2) ** e) / Fraction(2) ** (e - m)
        assert q.denominator == 1
        r = (1 << m) * (e - emin + 1) + int(q)
    return -r if v < 0 else r


def ulp(dt, a, b):
    return abs(rank(dt, round_to(dt, a)) - rank(dt, round_to(dt, b)))


def check_rank():
    # every float16 and bfloat16 value, sorted by numpy: consecutive values are 1 apart
    bits = np.arange(0x10000, dtype=np.uint32)
    h = bits.astype(np.uint16).view(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore"):
        bf = (bits << 16).view(np.float32).astype(np.float64)
    for dt, vals in (("f16", h), ("bf16", bf)):
        vals = np.unique(vals[~np.isnan(vals)])  # -0 and +0 merge
        zero = int(np.searchsorted(vals, 0.0))
        for i in range(0, len(vals), 97):
            assert rank(dt, float(vals[i])) == i - zero, (dt, vals[i])
        assert rank(dt, float(vals[-1])) == len(vals) - 1 - zero
    # float32 / float64: nextafter steps
    rng = np.random.default_rng(7)
    for dt, ty in (("f32", np.float32), ("f64", np.float64)):
        for x in list(rng.standard_normal(50).astype(ty)) + [ty(0), ty(np.finfo(ty).tiny),
                                                              -ty(np.finfo(ty).tiny)]:
            y = x
            for k in range(1, 4):
                y = np.nextafter(y, ty(np.inf))
                assert rank(dt, float(y)) - rank(dt, float(x)) == k
        big = np.finfo(ty).max
        assert rank(dt, math.inf) - rank(dt, float(big)) == 1
        assert rank(dt, float(big)) - rank(dt, float(np.nextafter(big, ty(0)))) == 1


def ulp_cases():
    rng = np.random.default_rng(12)
    cases = []
    special = [0.0, -0.0, 5e-324, -5e-324, 1e-45, 1.401298464324817e-45, 6e-8, 5.960464477539063e-08,
               1.0, -1.0, 1.0009765625, 65504.0, 65520.0, 70000.0, 3.3895313892515355e+38,
               3.4028234663852886e+38, 1.7976931348623157e+308, math.inf, -math.inf,
               2.0 ** -126, 2.0 ** -149, 2.0 ** -14, 2.0 ** -24, 0.1, -0.1, 1e-300]
    for dt in FMT:
        for i, a in enumerate(special):
            for b in special[i:]:
                cases.append((dt, a, b))
        for _ in range(150):
            a = float(rng.standard_normal() * 10.0 ** rng.integers(-8, 8))
            kind = rng.integers(0, 3)
            if kind == 0:
                b = a * (1 + float(rng.standard_normal()) * 1e-3)
            elif kind == 1:
                b = -a * float(rng.random())
            else:
                b = float(rng.standard_normal() * 10.0 ** rng.integers(-8, 8))
            cases.append((dt, a, b))
    return [(dt, a, b, ulp(dt, a, b)) for dt, a, b in cases]


def stats_block(lines):
    rng = np.random.default_rng(3)
    S, H, D = 200, 2, 3
    b = (rng.standard_normal((S, H, D)) * 4).astype(np.float32)
    a = b.copy()
    n = a.size
    fa, fb = a.reshape(-1), b.reshape(-1)
    # small relative noise on a third, a few far values, ties of abs error, specials
    idx = rng.choice(n, n // 3, replace=False)
    fa[idx] = (fb[idx] * (1 + rng.standard_normal(len(idx)) * 3e-6)).astype(np.float32)
    for i in rng.choice(n, 12, replace=False):
        fa[i] = fb[i] + np.float32(rng.standard_normal() * 0.01)
    fb[10], fa[10] = 0.0, 1e-6          # b == 0: rel err inf
    fb[11], fa[11] = 0.0, -0.0          # +0 vs -0: equal, 0 ulp
    fb[12], fa[12] = np.nan, np.nan     # NaN pair
    fb[13], fa[13] = 1.0, np.nan        # NaN mismatch
    fb[14], fa[14] = np.inf, np.inf     # same infinity
    fb[15], fa[15] = np.inf, -np.inf    # opposite infinities
    fb[16], fa[16] = 3.0, np.inf        # inf vs finite
    fb[500], fa[500] = 2.0, 2.5         # tie of abs error 0.5 ...
    fb[900], fa[900] = -2.0, -2.5       # ... with a later index
    fb[1100], fa[1100] = np.nan, 0.0
    lines.append("shape %d %d %d" % (S, H, D))
    lines.append("a " + " ".join("%08x" % x for x in fa.view(np.uint32)))
    lines.append("b " + " ".join("%08x" % x for x in fb.view(np.uint32)))
    da, db = fa.astype(np.float64), fb.astype(np.float64)
    nan_a, nan_b = np.isnan(da), np.isnan(db)
    fin = np.isfinite(da) & np.isfinite(db)
    for atol, rtol, equal_nan in ((1e-5, 1.3e-6, 0), (0.0, 0.0, 0), (1e-3, 1e-3, 1),
                                  (0.6, 0.0, 0), (0.0, 1e-5, 1)):
        close = np.isclose(da, db, rtol=rtol, atol=atol, equal_nan=bool(equal_nan))
        tclose = torch.isclose(torch.from_numpy(da), torch.from_numpy(db), rtol=rtol, atol=atol,
                               equal_nan=bool(equal_nan)).numpy()
        assert np.array_equal(close, tclose), "numpy and torch disagree"
        outside = ~close
        nan_mis = (nan_a | nan_b) & ~(nan_a & nan_b & bool(equal_nan))
        inf_mis = ~(nan_a | nan_b) & ~fin & (da != db)
        lines.append("case %r %r %d %d %d %d" % (atol, rtol, equal_nan, outside.sum(),
                                                 nan_mis.sum(), inf_mis.sum()))
        pos = np.repeat(np.arange(S), H * D)
        abs_err = np.where(fin, np.abs(da - db), 0.0)
        for lo, hi in ((0, 63), (64, 127), (128, S - 1)):
            sel = (pos >= lo) & (pos <= hi)
            lines.append("bucket %d %d %d %d %s" % (lo, hi, sel.sum(), (outside & sel).sum(),
                                                    float(abs_err[sel].max()).hex()))
    equal = (da == db) | (nan_a & nan_b)  # with equal_nan; the test adjusts for the others
    lines.append("equal %d" % (da == db).sum())
    lines.append("equalnan %d" % equal.sum())
    abs_err = np.where(fin, np.abs(da - db), -1.0)
    i = int(np.argmax(abs_err))
    lines.append("maxabs %s %d" % (float(abs_err[i]).hex(), i))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(da == db, 0.0, np.abs(da - db) / np.abs(db))
    rel = np.where(fin, rel, -1.0)
    lines.append("maxrel %s" % float(rel.max()).hex())
    ul = [ulp("f32", float(x), float(y)) for x, y in zip(da, db) if not (np.isnan(x) or np.isnan(y))]
    lines.append("maxulp %d" % max(ul))
    hist = {}
    for u in ul:
        k = u.bit_length()
        hist[k] = hist.get(k, 0) + 1
    for k in sorted(hist):
        lines.append("hist %d %d" % (k, hist[k]))
    # worst 5: differing elements; non-finite mismatches first (by index), then abs err, index
    differ = ~((da == db) | (nan_a & nan_b))
    keyed = []
    for j in np.nonzero(differ)[0]:
        if fin[j]:
            keyed.append((1, -abs(da[j] - db[j]), j))
        else:
            keyed.append((0, 0.0, j))
    keyed.sort()
    lines.append("worst " + " ".join(str(j) for _, _, j in keyed[:5]))


def main():
    np.seterr(all="ignore")
    check_rank()
    os.makedirs(OUT, exist_ok=True)
    lines = ["ulp %s %s %s %d" % (dt, float(a).hex(), float(b).hex(), u)
             for dt, a, b, u in ulp_cases()]
    stats_block(lines)
    with open(os.path.join(OUT, "diff.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
