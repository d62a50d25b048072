#!/usr/bin/python3
"""What a user writes instead of posenc verify: load the pre-RoPE q/k and a runtime's rotated
dumps, rotate with transformers' formulas in torch (llama3 scaling, float32) and report the max
abs/rel error. usage: verify_torch.py CONFIG Q K EQ EK"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cli"))
import verify_fixtures as vf  # noqa: E402

cfg, qf, kf, eqf, ekf = sys.argv[1:6]
c = json.load(open(cfg))
vf.HD = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
worst = 0.0
for pre, exp in ((qf, eqf), (kf, ekf)):
    x = torch.from_numpy(np.load(pre))
    e = torch.from_numpy(np.load(exp))
    S = x.shape[2]
    inv, attn, d, style = vf.rope_inv("llama3", c, S)
    r = vf.rotate(x, list(range(S)), inv, attn, d, style)
    err = (r - e).abs().amax(-1) / e.abs().amax(-1)
    worst = max(worst, float(err.max()))
print(f"max rel err {worst:.3g}")
