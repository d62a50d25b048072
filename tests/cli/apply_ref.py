"""Independent references for tests/cli/t_apply*.sh (run with Debian's /usr/bin/python3).

  apply_ref.py gen OUT SHAPE DTYPE SEED
      random N(0,1) data; SHAPE like 1,4,9,128; DTYPE f16|bf16|f32|f64. OUT .npy, or
      .safetensors (tensor "x"; the only way numpy-side tools store bf16).
  apply_ref.py check MODEL IN OUT POS LAYOUT PREC [inverse|-] [NEED]
      recompute the rotation of IN for MODEL's RoPE and compare with OUT.
      POS: offset:N or a .npy of int positions ([S], [B, S], [3, S]). PREC exact compares with a
      float64 closed form (tolerance: a few float32 ulps of the pair, plus output rounding);
      PREC hf evaluates transformers' own float32 code path in torch (inv_freq, matmul tables,
      cast to the dump dtype, q*cos + rotate_half(q)*sin) and requires most elements to match
      exactly and the rest to stay within the float32-angle slack.
  apply_ref.py rotate MODEL IN OUT POS LAYOUT
      write the float64 closed-form rotation of IN (rounded once to IN's dtype, in LAYOUT) to
      OUT (.npy), a runtime's rotated dump made outside posenc
  apply_ref.py same A B      arrays equal bit for bit (npy/safetensors/npz:member)
  apply_ref.py close A B TOL max |A - B| <= TOL
  apply_ref.py batch         the commands above, one per stdin line (torch imported once)

Nothing here reads posenc's code: the RoPE parameters of each model are written out below from
its config.json and transformers' formulas.
"""
import json
import math
import os
import shlex
import struct
import sys

import numpy as np
import torch

# model -> (head_dim, rotary_dim, style, theta, kind, extra)
MODELS = {
    "llama-3.1-8b": dict(hd=128, d=128, style="neox", theta=500000.0, kind="llama3",
                         factor=8.0, low=1.0, high=4.0, m0=8192),
    "qwen3.5-27b": dict(hd=256, d=64, style="neox", theta=10000000.0, kind="default",
                        mrope=[11, 11, 10]),
    "gpt-j-6b": dict(hd=256, d=64, style="gptj", theta=10000.0, kind="gptj"),
    "glm-4.5": dict(hd=128, d=64, style="neox", theta=1000000.0, kind="default"),
    "tiny": dict(hd=16, d=8, style="neox", theta=10000.0, kind="default"),
    # yarn without truncation; cos and sin scaled by 0.1 ln 32 + 1
    "gpt-oss-20b": dict(hd=64, d=64, style="neox", theta=150000.0, kind="yarn", factor=32.0,
                        beta_fast=32.0, beta_slow=1.0, m0=4096, truncate=False,
                        scale=0.1 * math.log(32.0) + 1),
    # Gemma 4 full attention: proportional RoPE, 64 frequencies over a 512-wide head, the
    # other 192 pairs have frequency 0; sliding attention: default RoPE on 256 dims
    "gemma-4-full": dict(hd=512, d=512, style="neox", theta=1000000.0, kind="proportional",
                         angles=64),
    # dynamic NTK: base theta * (factor L / M - (factor - 1))^(d / (d - 2)) once L > M, with
    # L = max position + 1 (or APPLY_SEQ_LEN, posenc's --seq-len)
    "tiny-dynamic": dict(hd=16, d=16, style="neox", theta=10000.0, kind="dynamic", factor=2.0,
                         m=16),
    "gemma-4-sliding": dict(hd=256, d=256, style="neox", theta=10000.0, kind="default"),
}

ST_DT = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "F64": torch.float64}
ST_NAME = {v: k for k, v in ST_DT.items()}


# ---------------------------------------------------------------- I/O
def st_write(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": ST_NAME[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def st_read(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        a, b = v["data_offsets"]
        buf = bytearray(data[8 + n + a:8 + n + b])
        t = torch.frombuffer(buf, dtype=ST_DT[v["dtype"]]) if buf else torch.empty(0, dtype=ST_DT[v["dtype"]])
        out[name] = t.reshape(v["shape"])
    return out


def load(spec):
    """torch tensor from file.npy, file.safetensors[:name], file.npz:name"""
    path, _, member = spec.partition(":") if (".npz:" in spec or ".safetensors:" in spec) else (spec, "", "")
    if path.endswith(".safetensors"):
        d = st_read(path)
        return d[member] if member else next(iter(d.values()))
    if path.endswith(".npz"):
        return torch.from_numpy(np.load(path)[member].copy())
    a = np.load(path)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:  # bfloat16 as NPY '<V2' (ml_dtypes style)
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def bits(t):
    return t.contiguous().view(torch.uint8)


# ---------------------------------------------------------------- RoPE parameters
def inv_exact(m):
    d, theta = m["d"], m["theta"]
    if m["kind"] == "dynamic" and m["L"] > m["m"]:
        theta = theta * (m["factor"] * m["L"] / m["m"] - (m["factor"] - 1)) ** (d / (d - 2))
    inv = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    if m["kind"] == "proportional":
        inv[m["angles"]:] = 0.0
    if m["kind"] == "yarn":
        f, m0 = m["factor"], m["m0"]
        pos_freqs = theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
        extrap, interp = 1.0 / pos_freqs, 1.0 / (f * pos_freqs)
        cd = lambda r: d * math.log(m0 / (r * 2 * math.pi)) / (2 * math.log(theta))
        low, high = cd(m["beta_fast"]), cd(m["beta_slow"])
        if m["truncate"]:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0, 1)
        w = 1 - ramp
        inv = interp * (1 - w) + extrap * w
    if m["kind"] == "llama3":
        f, lo, hi, m0 = m["factor"], m["low"], m["high"], m["m0"]
        wl = 2 * math.pi / inv
        inv_l = np.where(wl > m0 / lo, inv / f, inv)
        s = (m0 / wl - lo) / (hi - lo)
        sm = (1 - s) * inv_l / f + s * inv_l
        med = ~(wl < m0 / hi) & ~(wl > m0 / lo)
        inv = np.where(med, sm, inv_l)
    return inv


def inv_hf(m):
    """transformers' float32 inv_freq"""
    d, theta = m["d"], m["theta"]
    if m["kind"] == "gptj":
        return 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.int64) / d))
    if m["kind"] == "proportional":
        n = m["angles"]
        inv = 1.0 / (theta ** (torch.arange(0, 2 * n, 2, dtype=torch.int64).float() / d))
        return torch.cat((inv, torch.zeros(d // 2 - n)))
    if m["kind"] == "yarn":
        raise SystemExit("no hf reference for yarn here")
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).to(dtype=torch.float) / d))
    if m["kind"] == "llama3":
        f, lo, hi, m0 = m["factor"], m["low"], m["high"], m["m0"]
        low_wl, high_wl = m0 / lo, m0 / hi
        wl = 2 * math.pi / inv
        inv_l = torch.where(wl > low_wl, inv / f, inv)
        s = (m0 / wl - lo) / (hi - lo)
        sm = (1 - s) * inv_l / f + s * inv_l
        med = ~(wl < high_wl) * ~(wl > low_wl)
        inv = torch.where(med, sm, inv_l)
    return inv


def mrope_axis(m):
    """axis of each frequency for interleaved mrope (Qwen3-VL / Qwen3.5)"""
    n = m["d"] // 2
    ax = np.zeros(n, dtype=np.int64)
    for dim, off in ((1, 1), (2, 2)):
        ax[off:m["mrope"][dim] * 3:3] = dim
    return ax


def positions(spec, B, S, m):
    """-> int64 array [3, B', S] (axes t,h,w; B' = 1 or B)"""
    if spec.startswith("offset:"):
        p = np.arange(S, dtype=np.int64) + int(spec[7:])
        return np.broadcast_to(p, (3, 1, S)).copy()
    p = np.load(spec).astype(np.int64)
    if p.ndim == 1:
        return np.broadcast_to(p, (3, 1, S)).copy()
    if p.ndim == 2 and m.get("mrope") and p.shape[0] == 3:
        return p[:, None, :]
    if p.ndim == 2:
        return np.broadcast_to(p, (3,) + p.shape).copy()
    return p


def angles_exact(m, pos):
    inv = inv_exact(m)
    ax = mrope_axis(m) if m.get("mrope") else np.zeros(len(inv), dtype=np.int64)
    # [B', S, n]: position of the frequency's axis times its inv_freq, in float64 (exact to 1e-16)
    p = pos.astype(np.float64)  # [3, B', S]
    return np.stack([p[ax[i]] * inv[i] for i in range(len(inv))], axis=-1)


def tables_hf(m, pos):
    """transformers' float32 cos/sin [B', S, n] (before any cast)"""
    inv = inv_hf(m).float()
    if m["kind"] == "gptj":
        # sinusoid_inp = einsum(positions.float(), inv_freq); GPT-J indexes a table by position
        p = torch.from_numpy(pos[0]).float()
        ang = torch.einsum("bs,j->bsj", p, inv).float()
        return torch.cos(ang), torch.sin(ang)
    P = torch.from_numpy(pos)  # [3, B', S]
    Bp, S = P.shape[1], P.shape[2]
    if m.get("mrope"):
        ie = inv[None, None, :, None].expand(3, Bp, -1, 1)
        pe = P[:, :, None, :].float()
        freqs = (ie @ pe).transpose(2, 3)  # [3, B', S, n]
        ft = freqs[0].clone()
        for dim, off in ((1, 1), (2, 2)):
            idx = slice(off, m["mrope"][dim] * 3, 3)
            ft[..., idx] = freqs[dim, ..., idx]
        freqs = ft
    else:
        ie = inv[None, :, None].expand(Bp, -1, 1)
        pe = P[0][:, None, :].float()
        freqs = (ie @ pe).transpose(1, 2)  # [B', S, n]
    return freqs.cos() * 1.0, freqs.sin() * 1.0


# ---------------------------------------------------------------- layouts
def to_bhsd(x, layout, hd=None):
    """x [B,H,S,D]; the flat layouts bsf [B, S, H*hd] and sf [S, H*hd] split by the model's
    head_dim hd, as a hook's view(*shape, -1, head_dim) does"""
    if layout == "bsf":
        return x.reshape(x.shape[0], x.shape[1], -1, hd).transpose(1, 2)
    if layout == "sf":
        return x.reshape(x.shape[0], -1, hd).transpose(0, 1)[None]
    if layout == "bhsd":
        return x
    if layout == "bshd":
        return x.transpose(1, 2)
    if layout == "shd":
        return x.transpose(0, 1)[None]
    if layout == "hsd":
        return x[None]
    if layout == "sd":
        return x[None, None]
    raise SystemExit("layout?")


def from_bhsd(y, layout):
    """the inverse of to_bhsd for y [B,H,S,D]"""
    B, H, S, D = y.shape
    if layout == "bsf":
        return y.transpose(1, 2).reshape(B, S, H * D)
    if layout == "sf":
        return y[0].transpose(0, 1).reshape(S, H * D)
    if layout == "bshd":
        return y.transpose(1, 2)
    if layout == "shd":
        return y[0].transpose(0, 1)
    if layout == "hsd":
        return y[0]
    if layout == "sd":
        return y[0, 0]
    return y


# ---------------------------------------------------------------- checks
def rotate_exact(m, x, pos, inverse):
    """float64 closed form; x [B,H,S,D] float64 numpy"""
    d, n = m["d"], m["d"] // 2
    ang = angles_exact(m, pos) * (-1.0 if inverse else 1.0)  # [B', S, n]
    sc = m.get("scale", 1.0)
    c, s = sc * np.cos(ang)[:, None], sc * np.sin(ang)[:, None]  # [B', 1, S, n]
    y = x.copy()
    if m["style"] == "gptj":
        a, b = x[..., 0:d:2], x[..., 1:d:2]
        y[..., 0:d:2], y[..., 1:d:2] = a * c - b * s, b * c + a * s
    else:
        a, b = x[..., :n], x[..., n:d]
        y[..., :n], y[..., n:d] = a * c - b * s, b * c + a * s
    return y


def rotate_hf(m, x, pos, inverse):
    """transformers' apply in the dump dtype; x [B,H,S,D] torch"""
    d = m["d"]
    cos, sin = tables_hf(m, pos)
    if inverse:
        sin = -sin
    if m["style"] == "gptj":
        cos = torch.repeat_interleave(cos, 2, -1)
        sin = torch.repeat_interleave(sin, 2, -1)
    else:
        cos = torch.cat((cos, cos), -1)
        sin = torch.cat((sin, sin), -1)
    cos = cos.to(x.dtype)[:, None]
    sin = sin.to(x.dtype)[:, None]
    xr, xp = x[..., :d], x[..., d:]
    if m["style"] == "gptj":
        x1, x2 = xr[..., ::2], xr[..., 1::2]
        rot = torch.stack((-x2, x1), dim=-1).flatten(-2)
    else:
        x1, x2 = xr[..., : d // 2], xr[..., d // 2:]
        rot = torch.cat((-x2, x1), dim=-1)
    return torch.cat(((xr * cos) + (rot * sin), xp), dim=-1)


EPS = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8, torch.float32: 2.0 ** -24,
       torch.float64: 2.0 ** -53}


def check(model, inp, outp, posspec, layout, prec, inverse, need=0.9):
    m = MODELS[model]
    x = to_bhsd(load(inp), layout, m["hd"])
    y = to_bhsd(load(outp), layout, m["hd"])
    if y.shape != x.shape:
        sys.exit(f"shape {tuple(y.shape)} != {tuple(x.shape)}")
    B, H, S, D = x.shape
    if D != m["hd"]:
        sys.exit(f"head_dim {D} != {m['hd']}")
    pos = positions(posspec, B, S, m)
    m["L"] = int(os.environ.get("APPLY_SEQ_LEN") or pos.max() + 1)
    d = m["d"]
    # pass-through dims: bit for bit when the dtype is kept
    if x.dtype == y.dtype and not torch.equal(bits(x[..., d:]), bits(y[..., d:])):
        sys.exit("pass-through dims changed")
    yd = y.double().numpy()
    if prec == "exact":
        ref = rotate_exact(m, x.double().numpy(), pos, inverse)
        xd = x.double().numpy()
        mag = np.abs(xd[..., :d]).max(-1, keepdims=True)
        cd = 2.0 ** -52 if x.dtype == torch.float64 else 2.0 ** -23
        # the float64 reference's own angle error (p * inv rounded, inv to 1e-16) matters for
        # f64 dumps at large positions
        amax = np.abs(angles_exact(m, pos)).max()
        mag = mag * m.get("scale", 1.0)
        tol = 6 * cd * 2 * mag + EPS[y.dtype] * np.abs(ref[..., :d]) + mag * amax * 2.0 ** -49 + 1e-30
        err = np.abs(yd[..., :d] - ref[..., :d])
        bad = err > tol
        print(f"exact: max err {err.max():.3g}, max err/tol {(err / tol).max():.3g}")
        if bad.any():
            i = np.argwhere(bad)[0]
            sys.exit(f"mismatch at {tuple(i)}: got {yd[tuple(i)]!r}, want {ref[tuple(i)]!r}")
    else:
        ref = rotate_hf(m, x, pos, inverse)
        rd = ref.double().numpy()
        same = (yd[..., :d] == rd[..., :d]).mean()
        err = np.abs(yd[..., :d] - rd[..., :d])
        # torch's Sleef powf/cosf may be 1 ulp off: the angle moves by <= angle * 2^-23
        pmax = float(pos.max())
        mag = np.abs(x.double().numpy()[..., :d]).max(-1, keepdims=True)
        tol = mag * 2 * (pmax * 2.0 ** -22 + 8 * EPS[x.dtype]) + 1e-30
        print(f"hf: {same * 100:.2f}% identical, max err {err.max():.3g}, max pos {pmax:.0f}")
        if (err > tol).any():
            i = np.argwhere(err > tol)[0]
            sys.exit(f"mismatch at {tuple(i)}: got {yd[tuple(i)]!r}, want {rd[tuple(i)]!r}")
        if same < need:
            sys.exit(f"only {same * 100:.2f}% identical (need {need * 100:.0f}%)")


def run(argv):
    cmd = argv[0]
    if cmd == "gen":
        out, shape, dt, seed = argv[1], [int(s) for s in argv[2].split(",")], argv[3], int(argv[4])
        g = torch.Generator().manual_seed(seed)
        t = torch.randn(shape, generator=g, dtype=torch.float64)
        t = t.to({"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
                  "f64": torch.float64}[dt])
        if out.endswith(".safetensors"):
            st_write(out, {"x": t})
        else:
            np.save(out, t.numpy())
    elif cmd == "check":
        # check MODEL IN OUT POS LAYOUT PREC [inverse|-] [NEED]
        inverse = len(argv) > 7 and argv[7] == "inverse"
        need = float(argv[8]) if len(argv) > 8 else 0.9
        check(argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], inverse, need)
    elif cmd == "rotate":
        # rotate MODEL IN OUT POS LAYOUT
        m, layout = MODELS[argv[1]], argv[5]
        x = to_bhsd(load(argv[2]), layout, m["hd"])
        pos = positions(argv[4], x.shape[0], x.shape[2], m)
        m["L"] = int(pos.max() + 1)
        y = torch.from_numpy(rotate_exact(m, x.double().numpy(), pos, False)).to(x.dtype)
        np.save(argv[3], from_bhsd(y, layout).contiguous().numpy())
    elif cmd == "same":
        a, b = load(argv[1]), load(argv[2])
        if a.dtype != b.dtype or a.shape != b.shape or not torch.equal(bits(a), bits(b)):
            sys.exit(f"arrays differ: {a.dtype}{tuple(a.shape)} vs {b.dtype}{tuple(b.shape)}")
    elif cmd == "close":
        a, b, tol = load(argv[1]).double(), load(argv[2]).double(), float(argv[3])
        e = (a - b).abs().max().item()
        print(f"max diff {e:.3g}")
        if a.shape != b.shape or e > tol:
            sys.exit(f"differ by {e} > {tol}")
    elif cmd == "batch":
        # one command per stdin line (leading VAR=value words set the environment): torch is
        # imported once for the whole test
        for line in sys.stdin:
            words = shlex.split(line)
            if not words:
                continue
            env = {}
            while words and "=" in words[0]:
                k, _, v = words.pop(0).partition("=")
                env[k] = v
            print("+", line.strip(), flush=True)
            old = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                run(words)
            finally:
                for k, v in old.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
    else:
        sys.exit("usage: apply_ref.py gen|check|same|close|batch ...")


def main():
    run(sys.argv[1:])


if __name__ == "__main__":
    main()
