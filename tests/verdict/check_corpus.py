#!/usr/bin/python3
"""Self-checks of the verdict corpus, independent of posenc.

usage: check_corpus.py OUTDIR   (a corpus written by make_corpus.py)

1. The exact inverse frequencies and the f64 runtime against mpmath (50 digits) at a few
   elements per config, each case's config, rope type and factors re-derived here.
2. The transformers float32 pipeline (torch) against a second implementation in numpy float32.
3. Each case's worst error against exact math, as a multiple of bound() (for float32 dumps plus
   the final rounding to float32): correct runtimes and probes at 0.75 should stay below 1,
   mistakes, corruptions and probes at 1.5 above. Prints the worst ratio per runtime and
   category; exits 1 when a self-check (1, 2) fails or a mistake is within its bound.
"""
import json
import math
import os
import sys

import mpmath
import numpy as np
import torch

sys.dont_write_bytecode = True  # nothing written beside the sources during a test
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_corpus as mc  # noqa: E402

mpmath.mp.dps = 50


def mp_inv_freq(r, i, seq_len):
    """The pair's inverse frequency after scaling, in mpmath (the formulas in make_corpus.py's
    docstring, evaluated again)."""
    d = r.rotary_dim
    w = mpmath.power(mpmath.mpf(r.theta), -mpmath.mpf(2 * i) / d)
    if r.rope_type == "llama3":
        p = r.rp
        old = mpmath.mpf(p["original_max_position_embeddings"])
        wl = 2 * mpmath.pi / w
        if wl < old / p["high_freq_factor"]:
            pass
        elif wl > old / p["low_freq_factor"]:
            w = w / p["factor"]
        else:
            sm = (old / wl - p["low_freq_factor"]) / (p["high_freq_factor"] - p["low_freq_factor"])
            w = (1 - sm) * w / p["factor"] + sm * w
    elif r.rope_type == "yarn":
        lo, hi = r.yarn_range()
        ramp = min(max((mpmath.mpf(i) - lo) / (hi - lo), 0), 1)
        w = w / r.rp["factor"] * ramp + w * (1 - ramp)
    elif r.rope_type == "longrope":
        f = r.rp["long_factor" if seq_len > r.orig else "short_factor"][i]
        w = w / mpmath.mpf(f)
    return w


def mp_rotate(r, x, pos, j, seq_len):
    i, o, sign = mc.pair_of(r, j)
    w = mp_inv_freq(r, i, seq_len)
    s = mpmath.mpf(r.attention_scaling())
    phi = pos * w
    return mpmath.mpf(float(x[j])) * s * mpmath.cos(phi) + sign * mpmath.mpf(float(x[o])) * s * mpmath.sin(phi)


def hf32_numpy_inv(r, seq_len):
    """transformers' float32 inv_freq again, in numpy float32 (default, llama3, yarn, longrope)."""
    d = r.rotary_dim
    f32 = np.float32
    expo = (np.arange(0, d, 2).astype(f32) / f32(d)).astype(f32)
    base = np.power(f32(r.theta), expo).astype(f32)
    inv = (f32(1.0) / base).astype(f32)
    if r.rope_type == "llama3":
        p = r.rp
        wl = (f32(2 * math.pi) / inv).astype(f32)
        old = f32(p["original_max_position_embeddings"])
        lf, hf, fac = f32(p["low_freq_factor"]), f32(p["high_freq_factor"]), f32(p["factor"])
        sm = ((old / wl - lf) / (hf - lf)).astype(f32)
        mid = ((f32(1) - sm) * (inv / fac) + sm * inv).astype(f32)
        inv = np.where(wl < old / hf, inv, np.where(wl > old / lf, inv / fac, mid)).astype(f32)
    elif r.rope_type == "yarn":
        fac = f32(r.rp["factor"])
        lo, hi = r.yarn_range()
        ramp = np.clip((np.arange(d // 2).astype(f32) - f32(lo)) / f32(hi - lo), 0, 1).astype(f32)
        extra = f32(1) - ramp
        inv = ((f32(1) / (fac * base)) * (f32(1) - extra) + (f32(1) / base) * extra).astype(f32)
    elif r.rope_type == "longrope":
        fs = np.array(r.rp["long_factor" if seq_len > r.orig else "short_factor"], f32)
        inv = (f32(1) / (fs * base)).astype(f32)
    return inv


def hf32_numpy(r, x, pos, inv):
    """transformers' float32 angles, tables and rotation again, in numpy float32."""
    f32 = np.float32
    d = r.rotary_dim
    ang = np.asarray(pos, f32)[:, None] * inv[None, :]
    s = f32(r.attention_scaling())
    c, sn = (np.cos(ang) * s).astype(f32), (np.sin(ang) * s).astype(f32)
    return mc.rotate(torch.from_numpy(x.astype(f32)), torch.from_numpy(c), torch.from_numpy(sn),
                     r.pairing, d).numpy()


def exact_and_bound(r, x, pos, seq_len, u_ops, u_out):
    """Exact rotation of x (float64 numpy [H, S, D]) and each element's bound: bound() with u_ops
    for the rounding of the products and the sum (a 16-bit dump's unit roundoff there, for
    illustration), plus u_out|y| for a last rounding of the dump; pass-through dims get u_out|x|."""
    w = mc.inv_freq_exact(r, seq_len)
    s = r.attention_scaling()
    d = r.rotary_dim
    c, sn = mc.tables_f64(w, pos, s)
    y = mc.rotate(torch.from_numpy(x[None]), c, sn, r.pairing, d).numpy()[0]
    u = mc.U32
    # bound() vectorised over every element
    idx = np.arange(d)
    if r.pairing == "neox":
        h = d // 2
        pi = np.where(idx < h, idx, idx - h)
        other = np.where(idx < h, idx + h, idx - h)
        sign = np.where(idx < h, -1.0, 1.0)
    else:
        pi, other, sign = idx // 2, idx ^ 1, np.where(idx % 2 == 0, -1.0, 1.0)
    phi = np.asarray(pos, np.float64)[:, None] * w[pi][None, :]
    cc, ss = s * np.cos(phi), s * np.sin(phi)
    xs, xo = x[..., :d], x[..., other]
    yy = xs * cc + sign * xo * ss
    y2 = xo * cc - sign * xs * ss
    e = u * (8 + np.abs(np.log(w[pi])))[None, :] * np.abs(phi)
    b = (u_ops * abs(yy) + 2 * u_ops * (abs(xs * cc) + abs(xo * ss)) + 2 * u * s * (abs(xs) + abs(xo))
         + e * abs(y2) + e * e * abs(yy))
    bound = np.concatenate([b, np.zeros_like(x[..., d:])], -1) + u_out * np.abs(y)
    return y, bound


def load(out, rel):
    a = np.load(os.path.join(out, rel))
    if a.dtype.kind == "V":
        a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)


def main(argv):
    out = argv[1]
    with open(os.path.join(out, "manifest.json")) as f:
        cases = json.load(f)
    bad = 0
    ropes = {}

    # 1, 2: per config, the last block
    for name, (rel, blocks, _) in mc.CONFIGS.items():
        r = ropes.setdefault("tests/data/configs/" + rel, mc.Rope(rel))
        corpus = mc.Corpus(None)
        q, _ = corpus.inputs(r, "f32")
        worst64 = worsthf = 0.0
        worstulp = 0
        for off in (blocks[0], blocks[-1]):
            pos, sl = mc.positions(off), off + mc.SEQ
            y = mc.run_runtime(r, "f64", q, pos, sl).numpy()[0]
            x = q[0].double().numpy()
            for h, row, j in ((0, 0, 0), (1, 63, 1), (3, 17, r.rotary_dim // 2 - 1),
                              (2, 63, r.rotary_dim - 1), (1, 40, r.rotary_dim // 3)):
                ex = mp_rotate(r, x[h, row], pos[row], j, sl)
                err = abs(float(y[h, row, j]) - float(ex)) / max(abs(float(ex)), 1e-30)
                worst64 = max(worst64, err)
            inv_t = mc.inv_freq_hf(r, sl).numpy()
            inv_n = hf32_numpy_inv(r, sl)
            ulps = np.abs(inv_t.view(np.int32).astype(np.int64) - inv_n.view(np.int32))
            worstulp = max(worstulp, int(ulps.max()))
            # the angles, tables and rotation from the same inv_freq: only cos/sin's last ulp
            hf = mc.run_runtime(r, "hf32", q, pos, sl).numpy()
            npy = hf32_numpy(r, q.numpy()[0], pos, inv_t)[None]
            worsthf = max(worsthf, float(np.max(np.abs(hf - npy))))
        ok64 = worst64 <= 1.01 * 2.0 ** -24
        okhf = worsthf <= 1e-6 and worstulp <= 2  # pow, cos, sin and 1/x may each differ by an ulp
        print("selfcheck %-8s f64 vs mpmath max rel err %.3g (%s); hf32 torch vs numpy: inv_freq "
              "within %d ulp, output max abs diff %.3g (%s)"
              % (name, worst64, "ok" if ok64 else "BAD", worstulp, worsthf, "ok" if okhf else "BAD"))
        bad += (not ok64) + (not okhf)

    # 3: every case against exact math, in units of the bound
    worst = {}
    for c in cases:
        rel = c["config"][len("tests/data/configs/"):]
        r = ropes.setdefault(c["config"], mc.Rope(rel))
        pos = mc.positions(c["offset"])
        sl = c.get("seq_len", c["offset"] + mc.SEQ)
        u_ops, u_out = {"f64": (mc.U32, 0.0), "f32": (mc.U32, mc.U32), "bf16": (2.0 ** -8, 0.0),
                        "f16": (2.0 ** -11, 0.0)}[c["dtype"]]
        ratios = []
        for role in ("q", "k"):
            x = load(out, c[role])[0]
            got = load(out, c["expect_" + role])[0]
            y, b = exact_and_bound(r, x, pos, sl, u_ops, u_out)
            with np.errstate(invalid="ignore"):
                rr = np.abs(got - y) / np.maximum(b, 1e-300)
            ratios.append(float(np.nanmax(np.where(np.isfinite(got), rr, np.inf))))
        key = (c["category"], c["runtime"] if c["category"] == "correct" else
               c["id"].split("-")[1] if c["category"] == "mistake" else c["expect"])
        worst.setdefault(key, []).append((max(ratios), c["id"], ratios))
        if c["category"] == "mistake":
            for role, rt in zip(("q", "k"), ratios):
                if role in c["fail"] and rt < 4:
                    print("mistake within 4x its bound: %s %s ratio %.3g" % (c["id"], role, rt))
                    bad += 1
    print("worst |dump - exact| / bound (f64 dumps: bound(); f32 dumps: bound() + u|y|; 16-bit "
          "dumps, for illustration: bound() with the dtype's u for the products and the sum):")
    for key in sorted(worst):
        v = sorted(worst[key])
        print("  %-10s %-14s n=%-3d min %-9.3g max %-9.3g (%s)" % (key[0], key[1], len(v), v[0][0],
                                                                  v[-1][0], v[-1][1]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
