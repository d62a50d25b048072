#!/usr/bin/python3
"""What a user writes without posenc: RoPE cos/sin/inv_freq tables the transformers way.

usage: gen_torch.py --config config.json -o out.npz [--seq-len N]

torch float32 inv_freq = 1 / theta ** (arange(0, d, 2) / d) with partial rotary
(d = int(head_dim * partial_rotary_factor)) and llama3 frequency scaling as in
transformers' _compute_llama3_parameters; angles = outer(positions, inv_freq);
emb = cat(freqs, freqs); cos/sin in float32; np.savez of cos, sin and inv_freq.
Positions default to 0..max_position_embeddings-1, as posenc gen does.
"""
import argparse
import json
import math

import numpy as np
import torch


def llama3(inv_freq, rp):
    factor = rp["factor"]
    low, high = rp["low_freq_factor"], rp["high_freq_factor"]
    old_ctx = rp["original_max_position_embeddings"]
    low_wl, high_wl = old_ctx / low, old_ctx / high
    wavelen = 2 * math.pi / inv_freq
    inv_l = torch.where(wavelen > low_wl, inv_freq / factor, inv_freq)
    smooth = (old_ctx / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
    return torch.where(medium, smoothed, inv_l)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("-o", required=True)
    ap.add_argument("--seq-len", type=int)
    a = ap.parse_args()
    cfg = json.load(open(a.config))
    tc = cfg.get("text_config", cfg)
    rp = tc.get("rope_parameters") or tc.get("rope_scaling") or {}
    theta = rp.get("rope_theta", tc.get("rope_theta", 10000.0))
    head_dim = tc.get("head_dim") or tc["hidden_size"] // tc["num_attention_heads"]
    prf = rp.get("partial_rotary_factor", tc.get("partial_rotary_factor", 1.0))
    dim = int(head_dim * prf)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    if rp.get("rope_type", rp.get("type")) == "llama3":
        inv_freq = llama3(inv_freq, rp)
    n = a.seq_len or tc["max_position_embeddings"]
    t = torch.arange(n, dtype=torch.int64).float()
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    np.savez(a.o, cos=emb.cos().numpy(), sin=emb.sin().numpy(), inv_freq=inv_freq.numpy())


if __name__ == "__main__":
    main()
