#!/usr/bin/python3
"""Fixtures for tests/cli/t_verify*.sh: a config.json, pre-RoPE q/k dumps and the "runtime's"
rotated dumps, made by an independent torch emulation of transformers' RoPE (the formulas of
transformers' rope init functions and apply_rotary_pos_emb, float32 as torch computes them).

usage: verify_fixtures.py 'KIND OUTDIR [--mistake M] [--rotated] [--offset N] [--seq S] [--layout L]' ...
(one quoted spec per fixture, so one torch start-up serves a whole test)
KIND: default linear dynamic yarn longrope llama3 partial gptj theta5e5 qwen3.5 (the bundled
Qwen3.5-27B config: head_dim 256, rotary_dim 64, interleaved mrope, theta 1e7)
M: style rotary_full rotary_partial theta offset scaling attn bf16 f16 longrope_short
   none (the runtime did not rotate: eq/ek are q/k as they are)
Writes OUTDIR/config.json, q.npy, k.npy, eq.npy, ek.npy (eq/ek = the runtime's rotated dumps;
with --rotated, q.npy/k.npy are rotated dumps of position-independent content)."""
import argparse
import json
import math
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
HD = 64
BASE = {"hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": HD,
        "max_position_embeddings": 2048}


def config_for(kind):
    if kind == "qwen3.5":
        with open(os.path.join(HERE, "..", "data", "configs", "qwen3.5-27b.json")) as f:
            return json.load(f)
    c = dict(BASE, model_type="llama", rope_theta=10000.0)
    if kind == "linear":
        c["rope_scaling"] = {"rope_type": "linear", "factor": 4.0}
    elif kind == "dynamic":
        c["rope_scaling"] = {"rope_type": "dynamic", "factor": 2.0}
    elif kind == "yarn":
        c["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 512}
    elif kind == "longrope":
        c = dict(BASE, model_type="phi3", rope_theta=10000.0, original_max_position_embeddings=512)
        n = HD // 2
        c["rope_scaling"] = {"type": "longrope",
                             "short_factor": [1.0 + 0.01 * i for i in range(n)],
                             "long_factor": [1.0 + 0.5 * i for i in range(n)]}
    elif kind == "llama3":
        c["rope_theta"] = 500000.0
        c["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 512}
    elif kind == "partial":
        c = {"model_type": "phi", "hidden_size": 256, "num_attention_heads": 4,
             "num_key_value_heads": 2, "partial_rotary_factor": 0.5, "rope_theta": 10000.0,
             "max_position_embeddings": 2048}
    elif kind == "gptj":
        c = {"model_type": "gptj", "n_embd": 256, "n_head": 4, "rotary_dim": 32, "n_positions": 2048}
    elif kind == "theta5e5":
        c["rope_theta"] = 500000.0
    return c


def base_inv(theta, d):
    # torch: 1.0 / (base ** (arange(0, d, 2).float() / d)), python float base -> float32
    e = torch.arange(0, d, 2, dtype=torch.int64).to(torch.float32) / d
    return 1.0 / (torch.tensor(theta, dtype=torch.float32) ** e)


def head_dim(kind, c):
    return c["text_config"]["head_dim"] if kind == "qwen3.5" else HD


def theta_of(kind, c):
    return c["text_config"]["rope_parameters"]["rope_theta"] if kind == "qwen3.5" else c["rope_theta"]


def rope_inv(kind, c, seq_len):
    """inv_freq (float32), attention scaling, rotary dim, style."""
    if kind == "qwen3.5":
        # Qwen3.5 text positions: mrope with t = h = w, i.e. plain RoPE on the rotary dims
        # (transformers qwen3_5 apply_interleaved_mrope picks each frequency from one axis)
        rp = c["text_config"]["rope_parameters"]
        d = int(head_dim(kind, c) * rp["partial_rotary_factor"])
        return base_inv(float(rp["rope_theta"]), d), 1.0, d, "neox"
    if kind == "gptj":
        d = c["rotary_dim"]
        return 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.int64) / d)).float(), 1.0, d, "gptj"
    if kind == "partial":
        d = int(HD * c["partial_rotary_factor"])
        return base_inv(c["rope_theta"], d), 1.0, d, "neox"
    d = HD
    theta = c["rope_theta"]
    rs = c.get("rope_scaling") or {}
    if kind in ("default", "theta5e5"):
        return base_inv(theta, d), 1.0, d, "neox"
    if kind == "linear":
        return base_inv(theta, d) / rs["factor"], 1.0, d, "neox"
    if kind == "dynamic":
        M, f = c["max_position_embeddings"], rs["factor"]
        if seq_len > M:
            f32 = lambda x: torch.tensor(x, dtype=torch.float32)
            s = f32(f) * f32(float(seq_len))
            s = s / f32(float(M))
            s = s - f32(f - 1)
            s = f32(float(s.item()) ** (d / (d - 2)))
            theta = (f32(theta) * s).item()
        return base_inv(theta, d), 1.0, d, "neox"
    if kind == "yarn":
        f, M0 = rs["factor"], rs["original_max_position_embeddings"]
        pos_freqs = torch.tensor(theta, dtype=torch.float32) ** (torch.arange(0, d, 2).float() / d)
        extrap = 1.0 / pos_freqs
        interp = 1.0 / (f * pos_freqs)
        cd = lambda r: (d * math.log(M0 / (r * 2 * math.pi))) / (2 * math.log(theta))
        low, high = math.floor(cd(32)), math.ceil(cd(1))
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(d // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        w = 1 - ramp
        inv = interp * (1 - w) + extrap * w
        return inv, 0.1 * math.log(f) + 1.0, d, "neox"
    if kind == "longrope":
        M, M0 = c["max_position_embeddings"], c["original_max_position_embeddings"]
        ext = torch.tensor(rs["long_factor"] if seq_len > M0 else rs["short_factor"], dtype=torch.float32)
        inv = 1.0 / (ext * (torch.tensor(theta, dtype=torch.float32) ** (torch.arange(0, d, 2).float() / d)))
        fac = M / M0
        return inv, math.sqrt(1 + math.log(fac) / math.log(M0)), d, "neox"
    if kind == "llama3":
        f, lo, hi, M0 = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"], rs["original_max_position_embeddings"]
        inv = base_inv(theta, d)
        lwl, hwl = M0 / lo, M0 / hi
        wl = 2 * math.pi / inv
        inv_l = torch.where(wl > lwl, inv / f, inv)
        sm = (M0 / wl - lo) / (hi - lo)
        smoothed = (1 - sm) * inv_l / f + sm * inv_l
        med = ~(wl < hwl) * ~(wl > lwl)
        return torch.where(med, smoothed, inv_l), 1.0, d, "neox"
    raise SystemExit("unknown kind " + kind)


def rotate(x, pos, inv, attn, d, style, bf16=False):
    """transformers: cos = cos(f32(inv * f32(pos))) * attn, q' = q*cos + rotate_half(q)*sin."""
    p = torch.tensor(pos, dtype=torch.float32)
    freqs = p[:, None] * inv[None, :]
    cos, sin = freqs.cos() * attn, freqs.sin() * attn
    if bf16:
        t = torch.bfloat16 if bf16 == "bf16" else torch.float16
        cos, sin = cos.to(t).float(), sin.to(t).float()
    if x.dtype != torch.float32:  # transformers casts the tables to the activations' dtype
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    xr, xp = x[..., :d], x[..., d:]
    if style == "neox":
        emb_c, emb_s = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1)
        x1, x2 = xr[..., : d // 2], xr[..., d // 2:]
        rh = torch.cat((-x2, x1), -1)
    else:
        emb_c, emb_s = cos.repeat_interleave(2, -1), sin.repeat_interleave(2, -1)
        x1, x2 = xr[..., ::2], xr[..., 1::2]
        rh = torch.stack((-x2, x1), -1).flatten(-2)
    return torch.cat((xr * emb_c + rh * emb_s, xp), -1)


def make(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("kind")
    ap.add_argument("out")
    ap.add_argument("--mistake", default="")
    ap.add_argument("--rotated", action="store_true")
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--seq", type=int, default=48)
    ap.add_argument("--layout", default="bhsd")
    ap.add_argument("--dtype", default="float32")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    c = config_for(a.kind)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(c, f)
    g = torch.Generator().manual_seed(1234)
    S, H, HK = a.seq, 4, 2
    HD = head_dim(a.kind, c)
    if a.rotated:  # position-independent content: one vector per head, repeated
        q = torch.randn(1, H, 1, HD, generator=g).expand(1, H, S, HD).contiguous()
        k = torch.randn(1, HK, 1, HD, generator=g).expand(1, HK, S, HD).contiguous()
    else:
        q = torch.randn(1, H, S, HD, generator=g)
        k = torch.randn(1, HK, S, HD, generator=g)
    if a.dtype == "bfloat16":  # a bf16 model: activations and arithmetic in bf16
        q, k = q.bfloat16(), k.bfloat16()
    pos = [a.offset + s for s in range(S)]
    kind = a.kind
    inv, attn, d, style = rope_inv(kind, c, max(pos) + 1)
    m = a.mistake
    rpos = pos
    bf16 = False
    if m == "style":
        style = "gptj" if style == "neox" else "neox"
    elif m == "rotary_full":
        inv, d = base_inv(theta_of(kind, c), HD), HD
    elif m == "rotary_partial":  # a partial rotary applied to a full-head model
        d = HD // 2
        inv = base_inv(c["rope_theta"], d)
    elif m == "longrope_short":  # short factors past original_max_position_embeddings
        inv, attn, d, style = rope_inv(kind, c, 1)
    elif m == "theta":
        inv = base_inv(10000.0, d)
    elif m == "offset":
        rpos = [p + 5 for p in pos]
    elif m == "scaling":
        inv, attn = base_inv(c["rope_theta"], d), 1.0
    elif m == "attn":
        attn = 1.0
    elif m in ("bf16", "f16"):
        bf16 = m
    elif m and m != "none":
        raise SystemExit("unknown mistake " + m)
    if m == "none":
        eq, ek = q.clone(), k.clone()
    else:
        eq = rotate(q, rpos, inv, attn, d, style, bf16)
        ek = rotate(k, rpos, inv, attn, d, style, bf16)
    dt = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": None}[a.dtype]

    def save(name, t):
        if t.dtype == torch.bfloat16:  # ml_dtypes-style NPY: '<V2' holding the bf16 bits
            t = t.view(torch.int16)
        x = t.numpy()
        if t.dtype == torch.int16:
            x = x.view(np.dtype("V2"))
        if a.layout == "bshd":
            x = x.transpose(0, 2, 1, 3)
        elif a.layout == "hsd":
            x = x[0]
        elif a.layout == "shd":
            x = x[0].transpose(1, 0, 2)
        x = np.ascontiguousarray(x)
        np.save(os.path.join(a.out, name), x if dt is None else x.astype(dt))

    if a.rotated:
        save("q.npy", eq)
        save("k.npy", ek)
    else:
        save("q.npy", q)
        save("k.npy", k)
        save("eq.npy", eq)
        save("ek.npy", ek)


if __name__ == "__main__":
    import shlex
    import sys
    for spec in sys.argv[1:]:
        make(shlex.split(spec))
