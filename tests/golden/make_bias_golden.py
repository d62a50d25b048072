#!/usr/bin/python3
"""Golden references for tests/unit/test_bias.c (run with Debian's /usr/bin/python3).

Writes tests/data/golden/bias_t5.txt and tests/data/golden/bias_slopes.txt.

bias_t5.txt: T5 relative position buckets computed with numpy float32, mirroring transformers'
T5Attention._relative_position_bucket line by line (float32 log, float32 divide by the float32
cast of math.log(max_distance / max_exact), float32 multiply, truncation, cap). The same buckets are
recomputed with torch (the code transformers actually runs) and the script fails if the two
disagree anywhere. One line per (bidirectional, num_buckets, max_distance):
    bidirectional num_buckets max_distance rel_min rel_max bucket(rel_min) ... bucket(rel_max)
with rel = key - query over [-2*max_distance, 2*max_distance].

bias_slopes.txt: ALiBi slopes as the models' own code computes them (torch, float32), for the
head counts in HEADS:
    mpt  H alibi_bias_max s_0 ... s_{H-1}   (llm-foundry gen_slopes)
    falcon H s_0 ... s_{H-1}                (Falcon build_alibi_tensor slopes, .bfloat16())
    bloom H s_0 ... s_{H-1}                 (BLOOM build_alibi_tensor slopes)
Each value is the float32 bit pattern in hex (8 digits), so it round-trips exactly.
"""
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "golden")

HEADS = list(range(1, 21)) + [24, 31, 32, 33, 40, 48, 63, 64, 71, 96, 100, 127, 128]
# The later pairs hold exact bucket boundaries where a float64 log would pick a different bucket.
PAIRS = [(32, 128), (32, 64), (16, 64), (64, 256), (8, 20), (10, 7), (6, 10), (128, 1000),
         (4, 18), (6, 9), (8, 18), (16, 25), (16, 50), (10, 160)]


def bucket_numpy(rel, bidirectional, num_buckets, max_distance):
    rel = rel.astype(np.int64)
    buckets = np.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).astype(np.int64) * num_buckets
        rel = np.abs(rel)
    else:
        rel = -np.minimum(rel, np.zeros_like(rel))
    max_exact = num_buckets // 2
    is_small = rel < max_exact
    with np.errstate(divide="ignore"):
        lg = np.log(rel.astype(np.float32) / np.float32(max_exact))
    lg = lg.astype(np.float32)
    ratio = (lg / np.float32(math.log(max_distance / max_exact))).astype(np.float32)
    prod = (ratio * np.float32(num_buckets - max_exact)).astype(np.float32)
    with np.errstate(invalid="ignore"):
        large = max_exact + np.where(np.isfinite(prod), prod, 0).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    buckets += np.where(is_small, rel, large)
    return buckets


def bucket_torch(rel, bidirectional, num_buckets, max_distance):
    # transformers/models/t5/modeling_t5.py T5Attention._relative_position_bucket
    relative_position = torch.tensor(rel, dtype=torch.long)
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets.numpy()


def mpt_slopes(n_heads, alibi_bias_max=8):
    # llm-foundry / transformers MPT build_mpt_alibi_tensor
    _n_heads = 2 ** math.ceil(math.log2(n_heads))
    m = torch.arange(1, _n_heads + 1, dtype=torch.float32)
    m = m.mul(alibi_bias_max / _n_heads)
    slopes = 1.0 / torch.pow(2, m)
    if _n_heads != n_heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:n_heads]
    return slopes


def bloom_slopes(num_heads):
    # transformers BLOOM / Falcon build_alibi_tensor
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(
            2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    return slopes


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = []
    for bidirectional in (1, 0):
        for nb, md in PAIRS:
            rel = np.arange(-2 * md, 2 * md + 1, dtype=np.int64)
            a = bucket_numpy(rel, bidirectional, nb, md)
            b = bucket_torch(rel, bidirectional, nb, md)
            if not np.array_equal(a, b):
                bad = rel[a != b]
                sys.exit("numpy and torch disagree for %s: rel %s" % ((bidirectional, nb, md), bad))
            lines.append("%d %d %d %d %d %s" % (bidirectional, nb, md, rel[0], rel[-1],
                                                 " ".join(str(int(x)) for x in a)))
    with open(os.path.join(OUT, "bias_t5.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

    def bits(t):
        return " ".join("%08x" % int(x) for x in t.float().numpy().view(np.uint32))

    lines = []
    for h in HEADS:
        lines.append("bloom %d %s" % (h, bits(bloom_slopes(h))))
        lines.append("falcon %d %s" % (h, bits(bloom_slopes(h).bfloat16())))
        for bmax in (8, 12):
            lines.append("mpt %d %d %s" % (h, bmax, bits(mpt_slopes(h, bmax))))
    with open(os.path.join(OUT, "bias_slopes.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
