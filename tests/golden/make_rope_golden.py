#!/usr/bin/python3
"""Golden values for tests/unit/test_rope.c: tests/data/golden/rope.json.

Run with Debian's python (numpy, torch 1.13, mpmath):
    /usr/bin/python3 tests/golden/make_rope_golden.py

For each case (a RoPE config and a sequence length) it records
  * inv_torch (only when it differs from inv_cr): transformers' float32 inv_freq, by re-running
    the init functions of transformers v5 modeling_rope_utils.py in torch
    float32, op for op. torch's CPU pow is Sleef (faithfully rounded), so posenc may differ by 1 ulp here.
  * inv_cr: the same torch pipeline with only pow replaced by the correctly rounded float32
    pow (mpmath at 200 bits, then rounded once). posenc's hf precision must match this exactly.
  * cos_torch / sin_torch (only when inv_torch != inv_cr): the same forward on inv_torch, i.e.
    transformers' actual tables.
  * cos_cr / sin_cr: LlamaRotaryEmbedding.forward (models/llama/modeling_llama.py) in torch float32 on inv_cr
    (f32 angle by the K=1 matmul, torch.cos/sin, times f32(attention_scaling)). torch's cos/sin
    are faithful (<= 1 ulp), posenc's are correctly rounded.
  * inv_exact, cos_exact, sin_exact: the real-number formulas evaluated with mpmath at 200 bits,
    inv_exact written with 22 significant digits, independent of posenc's double-double code.
  * attention_scaling, softmax_scale, long_factors.
Tables are recorded for a subset of frequencies (freq_index) to keep the file small.
"""
import json
import math
import os

import mpmath as mp
import numpy as np
import torch

mp.mp.prec = 200
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "golden", "rope.json")
POSITIONS = [0, 1, 4095, 8191, 131072, 1048575]
FAR_POSITIONS = [262143, 2147483647, 34359738375]


def f32(x):
    return float(np.float32(x))


def short32(x):
    """A float32 value as the shortest decimal that rounds back to it (smaller file)."""
    return float(repr(np.float32(x)))


# ----- pow: torch's, or correctly rounded ------------------------------------------------------

def pow_torch(base, expo):
    """`base ** expo` as transformers writes it (base: python float or 0-dim f32 tensor)."""
    return base ** expo


def pow_cr(base, expo):
    b = float(base) if not torch.is_tensor(base) else float(base.item())
    b = mp.mpf(f32(b))
    out = [f32(mp.power(b, mp.mpf(float(e)))) for e in expo.tolist()]
    return torch.tensor(out, dtype=torch.float32)


# ----- transformers' init functions (v5), parameterised by pow --------------------------------

def arange_expo(dim):
    return torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim


def init_default(c, POW, seq_len=None):
    dim = c["rotary_dim"]
    return 1.0 / POW(c["theta"], arange_expo(dim)), 1.0


def init_linear(c, POW, seq_len=None):
    inv, att = init_default(c, POW)
    inv /= c["factor"]
    return inv, att


def init_dynamic(c, POW, seq_len=None):
    base, dim, M, factor = c["theta"], c["rotary_dim"], c["M"], c["factor"]
    if seq_len is None or seq_len <= M:
        # load time (the forward-time update only fires for seq_len > M)
        base = base * ((factor * M / M) - (factor - 1)) ** (dim / (dim - 2))
    else:
        L = torch.tensor(seq_len, dtype=torch.int64)
        L = torch.maximum(L, torch.tensor(M, dtype=L.dtype))
        base = base * ((factor * L / M) - (factor - 1)) ** (dim / (dim - 2))
    return 1.0 / POW(base, arange_expo(dim)), 1.0


def get_mscale(scale, mscale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def init_yarn(c, POW, seq_len=None):
    base, dim, factor, M0 = c["theta"], c["rotary_dim"], c["factor"], c["M0"]
    attention_factor = c.get("attention_factor")
    mscale, mscale_all_dim = c.get("mscale"), c.get("mscale_all_dim")
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = c.get("beta_fast") or 32
    beta_slow = c.get("beta_slow") or 1

    def find_correction_dim(num_rotations):
        return (dim * math.log(M0 / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, truncate):
        low = find_correction_dim(low_rot)
        high = find_correction_dim(high_rot)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(mn, mx, n):
        if mn == mx:
            mx += 0.001
        linear_func = (torch.arange(n, dtype=torch.float32) - mn) / (mx - mn)
        return torch.clamp(linear_func, 0, 1)

    pos_freqs = POW(base, torch.arange(0, dim, 2).to(dtype=torch.float) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = find_correction_range(beta_fast, beta_slow, c.get("truncate", True))
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).to(dtype=torch.float)
    inv_freq = (inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
                + inv_freq_extrapolation * inv_freq_extrapolation_factor)
    return inv_freq, attention_factor


def init_longrope(c, POW, seq_len=None):
    base, dim, M0 = c["theta"], c["rotary_dim"], c["M0"]
    factor = c.get("factor")
    attention_factor = c.get("attention_factor")
    if factor is None:
        factor = c["M"] / M0
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(M0))
    if seq_len and seq_len > M0:
        ext_factors = torch.tensor(c["long_factor"], dtype=torch.float32)
    else:
        ext_factors = torch.tensor(c["short_factor"], dtype=torch.float32)
    inv_freq_shape = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    return 1.0 / (ext_factors * POW(base, inv_freq_shape)), attention_factor


def init_llama3(c, POW, seq_len=None):
    inv_freq, att = init_default(c, POW)
    factor, low_freq_factor, high_freq_factor = c["factor"], c["low"], c["high"]
    old_context_len = c["M0"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    return inv_freq_llama, att


def init_proportional(c, POW, seq_len=None):
    base, head_dim, prf, factor = c["theta"], c["head_dim"], c["prf"], c.get("factor", 1.0)
    rope_angles = int(prf * head_dim // 2)
    inv_rot = 1.0 / POW(base, torch.arange(0, 2 * rope_angles, 2, dtype=torch.float) / head_dim)
    nope = head_dim // 2 - rope_angles
    inv = torch.cat((inv_rot, torch.zeros(nope, dtype=torch.float32)))
    return inv / factor, 1.0


INIT = {"default": init_default, "linear": init_linear, "dynamic": init_dynamic,
        "yarn": init_yarn, "longrope": init_longrope, "llama3": init_llama3,
        "proportional": init_proportional}


def forward(inv_freq, att, positions):
    """LlamaRotaryEmbedding.forward: f32 angle (K=1 matmul), cos/sin, times attention_scaling."""
    inv_expanded = inv_freq[None, :, None].float()
    pos_expanded = torch.tensor(positions, dtype=torch.int64)[None, None, :].float()
    freqs = (inv_expanded @ pos_expanded).transpose(1, 2)[0]
    return freqs.cos() * att, freqs.sin() * att


# ----- exact formulas (mpmath) -----------------------------------------------------------------

def exact_inv(c, seq_len):
    t, theta = c["type"], mp.mpf(c["theta"])
    d, n = c["rotary_dim"], c["rotary_dim"] // 2
    D = c.get("exponent_dim") or d

    def base_inv(i, th=theta):
        return mp.power(th, -mp.mpf(2 * i) / D)

    if t == "default":
        return [base_inv(i) for i in range(n)]
    if t == "linear":
        return [base_inv(i) / mp.mpf(c["factor"]) for i in range(n)]
    if t == "proportional":
        live = int(math.floor(c["prf"] * c["head_dim"] / 2))
        return [base_inv(i) / mp.mpf(c.get("factor", 1.0)) if i < live else mp.mpf(0)
                for i in range(n)]
    if t == "dynamic":
        th = theta
        if seq_len and seq_len > c["M"]:
            f = mp.mpf(c["factor"])
            th = theta * (f * seq_len / c["M"] - f + 1) ** (mp.mpf(d) / (d - 2))
        return [base_inv(i, th) for i in range(n)]
    if t == "longrope":
        ext = c["long_factor"] if seq_len and seq_len > c["M0"] else c["short_factor"]
        return [base_inv(i) / mp.mpf(ext[i]) for i in range(n)]
    if t == "yarn":
        f = mp.mpf(c["factor"])
        bf, bs = c.get("beta_fast") or 32, c.get("beta_slow") or 1

        def cd(r):
            return (d * mp.log(mp.mpf(c["M0"]) / (r * 2 * mp.pi))) / (2 * mp.log(theta))
        low, high = cd(bf), cd(bs)
        if c.get("truncate", True):
            low, high = mp.floor(low), mp.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += mp.mpf(0.001)
        out = []
        for i in range(n):
            ramp = min(max((i - low) / (high - low), 0), 1)
            ex = base_inv(i)
            out.append(ex / f * ramp + ex * (1 - ramp))
        return out
    if t == "llama3":
        f, lo, hi, M0 = mp.mpf(c["factor"]), mp.mpf(c["low"]), mp.mpf(c["high"]), mp.mpf(c["M0"])
        out = []
        for i in range(n):
            inv = base_inv(i)
            wl = 2 * mp.pi / inv
            if wl > M0 / lo:
                out.append(inv / f)
            elif wl < M0 / hi:
                out.append(inv)
            else:
                s = (M0 / wl - lo) / (hi - lo) if hi != lo else mp.mpf(0)
                out.append((1 - s) * inv / f + s * inv)
        return out
    raise ValueError(t)


def exact_att(c):
    t = c["type"]
    if c.get("attention_factor") is not None:
        return mp.mpf(c["attention_factor"])
    if t == "yarn":
        f = mp.mpf(c["factor"])

        def g(s, m):
            return mp.mpf(1) if s <= 1 else mp.mpf("0.1") * m * mp.log(s) + 1
        if c.get("mscale") and c.get("mscale_all_dim"):
            return g(f, mp.mpf(c["mscale"])) / g(f, mp.mpf(c["mscale_all_dim"]))
        return g(f, 1)
    if t == "longrope":
        f = mp.mpf(c["factor"]) if c.get("factor") is not None else mp.mpf(c["M"]) / c["M0"]
        return mp.mpf(1) if f <= 1 else mp.sqrt(1 + mp.log(f) / mp.log(c["M0"]))
    return mp.mpf(1)


# ----- cases -----------------------------------------------------------------------------------

def case(name, seq_len=0, **c):
    c.setdefault("head_dim", c["rotary_dim"])
    c["name"], c["seq_len"] = name, seq_len
    return c


def cases():
    lf = [1.0, 1.1, 1.3, 1.8, 2.5, 4.0, 6.5, 9.0]
    sf = [1.0, 1.0, 1.05, 1.1, 1.2, 1.35, 1.5, 1.7]
    out = [
        case("default-d8", type="default", theta=10000.0, rotary_dim=8),
        case("default-llama3-base", type="default", theta=500000.0, rotary_dim=128),
        case("default-qwen3.5", type="default", theta=10000000.0, rotary_dim=64, head_dim=256),
        case("linear", type="linear", theta=10000.0, rotary_dim=32, factor=4.0),
        case("proportional-gemma4", type="proportional", theta=1000000.0, rotary_dim=512,
             head_dim=512, exponent_dim=512, prf=0.25, factor=1.0),
        case("proportional-factor", type="proportional", theta=10000.0, rotary_dim=64,
             head_dim=64, exponent_dim=64, prf=0.5, factor=2.0),
        case("yarn-deepseek-v3", type="yarn", theta=10000.0, rotary_dim=64, factor=40.0, M0=4096,
             M=163840, beta_fast=32.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0,
             softmax_mscale=1),
        case("yarn-gpt-oss", type="yarn", theta=150000.0, rotary_dim=64, factor=32.0, M0=4096,
             M=131072, beta_fast=32.0, beta_slow=1.0, truncate=False),
        case("yarn-kimi-k2", type="yarn", theta=50000.0, rotary_dim=64, factor=32.0, M0=4096,
             M=131072, beta_fast=1.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0,
             softmax_mscale=1),
        case("yarn-low-eq-high", type="yarn", theta=10000.0, rotary_dim=32, factor=8.0, M0=2048,
             M=16384, beta_fast=2.0, beta_slow=2.0, truncate=False),
        case("yarn-attention-factor", type="yarn", theta=10000.0, rotary_dim=16, factor=4.0,
             M0=1024, M=4096, attention_factor=1.25, mscale=0.707, mscale_all_dim=0.0),
        case("llama3-llama3.1", type="llama3", theta=500000.0, rotary_dim=128, factor=8.0,
             low=1.0, high=4.0, M0=8192, M=131072),
        # theta 1e4 makes the float32 order of 2*pi/inv (reciprocal, then * f32(2 pi)) visible
        case("llama3-theta1e4", type="llama3", theta=10000.0, rotary_dim=128, factor=8.0,
             low=1.0, high=4.0, M0=8192, M=65536),
        # fractional ramp bounds where the float32 ramp steps differ from a float64 ramp
        case("yarn-no-truncate", type="yarn", theta=10000.0, rotary_dim=64, factor=16.0,
             M0=4096, M=65536, truncate=False),
        case("llama3-llama4-scout", type="llama3", theta=500000.0, rotary_dim=128, factor=16.0,
             low=1.0, high=1.0, M0=8192, M=10485760),
    ]
    for L in (0, 2048, 3000, 100000):
        out.append(case("dynamic-L%d" % L, seq_len=L, type="dynamic", theta=10000.0,
                        rotary_dim=32, factor=2.0, M=2048))
    for L in (0, 4096, 4097):
        out.append(case("longrope-L%d" % L, seq_len=L, type="longrope", theta=10000.0,
                        rotary_dim=16, M=16384, M0=4096, short_factor=sf, long_factor=lf))
    out.append(case("longrope-factor-L5000", seq_len=5000, type="longrope", theta=10000.0,
                    rotary_dim=16, M=16384, M0=4096, factor=2.0, short_factor=sf, long_factor=lf))
    return out


def freq_subset(n):
    if n <= 12:
        return list(range(n))
    return sorted(set([round(k * (n - 1) / 9) for k in range(10)] + [n // 4 - 1, n // 4]))


def main():
    res = []
    for c in cases():
        L = c["seq_len"]
        init = INIT[c["type"]]
        inv_t, att = init(c, pow_torch, L or None)
        inv_cr, att2 = init(c, pow_cr, L or None)
        assert att == att2
        inv_t = inv_t.to(torch.float32)
        inv_cr = inv_cr.to(torch.float32)
        cos_cr, sin_cr = forward(inv_cr, att, POSITIONS)
        idx = freq_subset(len(inv_cr))
        ex = exact_inv(c, L)
        ea = exact_att(c)
        cos_ex = [[float(ea * mp.cos(p * ex[i])) for i in idx] for p in POSITIONS]
        sin_ex = [[float(ea * mp.sin(p * ex[i])) for i in idx] for p in POSITIONS]
        sm = 1.0
        if c.get("softmax_mscale"):
            g = get_mscale(c["factor"], c.get("mscale_all_dim") or 0)
            sm = g * g
        entry = dict(c)
        entry.update({
            "attention_scaling": float(att),
            "softmax_scale": sm,
            "long_factors": int(c["type"] == "longrope" and bool(L) and L > c["M0"]),
            "inv_cr": [short32(v) for v in inv_cr.tolist()],
            "inv_exact": [mp.nstr(v, 22) for v in ex],
            "positions": POSITIONS,
            "freq_index": idx,
            "cos_cr": [[short32(cos_cr[r, i]) for i in idx] for r in range(len(POSITIONS))],
            "sin_cr": [[short32(sin_cr[r, i]) for i in idx] for r in range(len(POSITIONS))],
            "cos_exact": cos_ex,
            "sin_exact": sin_ex,
        })
        if c["name"] == "default-llama3-base":
            # far positions up to 2^35 (make_rope_far_golden.py covers up to 2^48 - 1)
            entry["far_positions"] = FAR_POSITIONS
            entry["far_cos_exact"] = [[float(ea * mp.cos(p * ex[i])) for i in idx]
                                      for p in FAR_POSITIONS]
            entry["far_sin_exact"] = [[float(ea * mp.sin(p * ex[i])) for i in idx]
                                      for p in FAR_POSITIONS]
        nd = int((inv_t != inv_cr).sum())
        if nd:
            entry["inv_torch"] = [short32(v) for v in inv_t.tolist()]
            # transformers' own tables (Sleef pow): only where they differ from the above
            cos_t, sin_t = forward(inv_t, att, POSITIONS)
            entry["cos_torch"] = [[short32(cos_t[r, i]) for i in idx] for r in range(len(POSITIONS))]
            entry["sin_torch"] = [[short32(sin_t[r, i]) for i in idx] for r in range(len(POSITIONS))]
        res.append(entry)
        print("%-24s n_freq %3d  att %.6f  torch pow differs from correctly rounded in %d"
              % (c["name"], len(inv_cr), att, nd))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generator": "tests/golden/make_rope_golden.py", "torch": torch.__version__,
                   "cases": res}, f, separators=(",", ":"))
        f.write("\n")
    print("wrote %s (%d bytes)" % (OUT, os.path.getsize(OUT)))


if __name__ == "__main__":
    main()
