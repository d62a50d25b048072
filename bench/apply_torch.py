"""The PyTorch code a user writes to rotate Q/K dumps the way transformers does (bench baseline
for posenc apply): load q and k, build cos/sin as LlamaRotaryEmbedding does (default or llama3
inv_freq, float32), apply_rotary_pos_emb (q*cos + rotate_half(q)*sin), save.

  apply_torch.py --config config.json Q K OUTDIR    (Q/K: .npy, or .safetensors holding "x";
                                                     OUTDIR receives q.npy/k.npy or
                                                     q.safetensors/k.safetensors)
"""
import argparse
import json
import math
import os
import struct

import numpy as np
import torch

ST_DT = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "F64": torch.float64}


def st_load(path):  # the safetensors package is not installed here: its file format by hand
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
        data = bytearray(f.read())
    (name, v), = [(k, v) for k, v in h.items() if k != "__metadata__"]
    a, b = v["data_offsets"]
    return torch.frombuffer(data[a:b], dtype=ST_DT[v["dtype"]]).reshape(v["shape"])


def st_save(path, t):
    name = {v: k for k, v in ST_DT.items()}[t.dtype]
    raw = t.contiguous().view(torch.uint8).numpy().tobytes()
    h = json.dumps({"x": {"dtype": name, "shape": list(t.shape), "data_offsets": [0, len(raw)]}}).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.write(raw)


def load(path):
    return st_load(path) if path.endswith(".safetensors") else torch.from_numpy(np.load(path))


def save(path, t):
    if path.endswith(".safetensors"):
        st_save(path, t)
    else:
        np.save(path, t.numpy())


def inv_freq_for(cfg):
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    base = cfg.get("rope_theta", 10000.0)
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    rs = cfg.get("rope_scaling") or {}
    if rs.get("rope_type", rs.get("type")) == "llama3":
        factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wl, high_wl = old / lo, old / hi
        wl = 2 * math.pi / inv
        inv_l = torch.where(wl > low_wl, inv / factor, inv)
        smooth = (old / wl - lo) / (hi - lo)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wl < high_wl) * ~(wl > low_wl)
        inv = torch.where(medium, smoothed, inv_l)
    return inv


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("q")
    ap.add_argument("k")
    ap.add_argument("outdir")
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    cfg = json.load(open(a.config))
    q, k = load(a.q), load(a.k)
    B, _, S, _ = q.shape
    inv = inv_freq_for(cfg)
    position_ids = torch.arange(S)[None].expand(B, -1)
    inv_e = inv[None, :, None].float().expand(B, -1, 1)
    freqs = (inv_e @ position_ids[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(q.dtype)[:, None], emb.sin().to(q.dtype)[:, None]
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    os.makedirs(a.outdir, exist_ok=True)
    ext = ".safetensors" if a.q.endswith(".safetensors") else ".npy"
    save(os.path.join(a.outdir, "q" + ext), q_embed)
    save(os.path.join(a.outdir, "k" + ext), k_embed)


if __name__ == "__main__":
    main()
