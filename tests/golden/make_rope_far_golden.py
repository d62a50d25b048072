#!/usr/bin/python3
"""Golden values for tests/unit/test_rope.c test_exact_far: tests/data/golden/rope_far.txt.

Run with Debian's python (mpmath only):
    /usr/bin/python3 tests/golden/make_rope_far_golden.py

posenc's exact tables at the far end of the position range gen, apply and verify accept
([0, 2^48)): cos and sin of pos * inv_freq[i] for the default rope type, inv_freq[i] =
theta^(-2i/d) / factor (factor 1 = default, else linear scaling), evaluated with mpmath at 300
bits, independent of posenc's double-double code and of any argument reduction. One line per
(theta, head_dim, factor, i, pos):
    theta head_dim factor i pos cos sin cos_f32 sin_f32
cos and sin with 50 significant digits, cos_f32 and sin_f32 the correctly rounded float32 values
as 8-digit hex bit patterns (rounded once by mpmath, not through a double).
"""
import os
import struct

import mpmath as mp

mp.mp.prec = 300
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "golden", "rope_far.txt")

POSITIONS = [2**24 + 1, 2**33 + 7, 2**40, 2**44 + 3, 2**48 - 1]
CASES = [  # theta, head_dim, linear factor, frequency indices
    (10000.0, 128, 1, [0, 1, 2, 5, 13, 31, 47, 63]),
    (500000.0, 128, 1, [0, 1, 3, 8, 21, 40, 55, 63]),
    (1000000.0, 128, 1, [0, 1, 2, 7, 16, 33, 50, 63]),
    (10000000.0, 256, 1, [0, 1, 4, 9, 30, 64, 100, 127]),
    (10000.0, 64, 8, [0, 1, 3, 11, 19, 31]),
]


def f32_hex(x):
    """x rounded once to binary32 (|x| is far above the subnormal range here)."""
    with mp.workprec(24):
        r = +x
    return "%08x" % struct.unpack("<I", struct.pack("<f", float(r)))[0]


def main():
    lines = []
    for theta, d, factor, idx in CASES:
        for i in idx:
            inv = mp.power(mp.mpf(theta), -mp.mpf(2 * i) / d) / factor
            for pos in POSITIONS:
                a = pos * inv
                c, s = mp.cos(a), mp.sin(a)
                lines.append("%g %d %g %d %d %s %s %s %s" % (
                    theta, d, factor, i, pos, mp.nstr(c, 50, min_fixed=-1, max_fixed=1),
                    mp.nstr(s, 50, min_fixed=-1, max_fixed=1), f32_hex(c), f32_hex(s)))
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d values to %s" % (len(lines), OUT))


if __name__ == "__main__":
    main()
