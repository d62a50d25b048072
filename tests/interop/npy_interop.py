#!/usr/bin/python3
"""NumPy side of the NPY interop tests (tests/unit/test_npy.c).

  npy_interop.py make DIR    write np_*.npy with numpy (every version, byte order, Fortran order)
  npy_interop.py check DIR   np.load posenc's pe_*.npy and compare with what np.save writes

Values: pattern(i) = (i % 251) * 0.5 - 60 for float files, twice that for integer files; exact
in every dtype used. posenc's files follow fill() in test_npy.c.
"""
import io
import sys

import numpy as np
from numpy.lib import format as npf


def pattern(n, dtype, scale=1):
    i = np.arange(n)
    return (((i % 251) * 0.5 - 60) * scale).astype(dtype)


def save(path, arr, version=None):
    with open(path, "wb") as f:
        if version is None:
            np.save(f, arr)
        else:
            npf.write_array(f, arr, version=version)


def make(d):
    p = lambda name: f"{d}/{name}"
    save(p("np_f8.npy"), pattern(60, "<f8").reshape(4, 15))
    save(p("np_f4.npy"), pattern(60, "<f4").reshape(3, 4, 5))
    save(p("np_f2.npy"), pattern(60, "<f2").reshape(60))
    save(p("np_i4.npy"), pattern(60, "<i4", 2).reshape(6, 10))
    save(p("np_i8.npy"), pattern(60, "<i8", 2).reshape(6, 10))
    save(p("np_be_f8.npy"), pattern(60, ">f8").reshape(4, 15))
    save(p("np_be_f4.npy"), pattern(60, ">f4").reshape(4, 15))
    save(p("np_be_i8.npy"), pattern(60, ">i8", 2).reshape(4, 15))
    save(p("np_fortran.npy"), np.asfortranarray(pattern(60, "<f8").reshape(3, 4, 5)))
    save(p("np_fortran_be.npy"), np.asfortranarray(pattern(60, ">f4").reshape(4, 15)))
    save(p("np_v2.npy"), pattern(60, "<f8").reshape(4, 15), (2, 0))
    save(p("np_v3.npy"), pattern(60, "<f4").reshape(4, 15), (3, 0))
    save(p("np_scalar.npy"), np.float64(-60.0))
    save(p("np_big.npy"), pattern(300000, "<f4").reshape(300, 1000))
    # bfloat16 as numpy stores it without ml_dtypes: 2-byte void
    bf = (pattern(60, "<f4").view("<u4") >> 16).astype("<u2")
    save(p("np_bf16_v2.npy"), bf.view("V2").reshape(4, 15))
    # a version 2.0 header longer than 65535 bytes (padding), which numpy itself reads
    arr = pattern(60, "<f8").reshape(4, 15)
    d0 = "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 15), }"
    hlen = 70000 - 12
    hlen += (64 - (12 + hlen) % 64) % 64
    hdr = d0 + " " * (hlen - len(d0) - 1) + "\n"
    with open(p("np_v2_big.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x02\x00" + len(hdr).to_bytes(4, "little") + hdr.encode("latin1"))
        f.write(arr.tobytes())
    back = np.load(p("np_v2_big.npy"), max_header_size=200000)
    assert np.array_equal(back, arr)
    for name in ("np_v2.npy", "np_v3.npy"):
        with open(p(name), "rb") as f:
            assert f.read(8)[6] == int(name[4]), name


def fill(dt, n):
    """posenc's test values (fill() in test_npy.c)."""
    i = np.arange(n, dtype=np.int64)
    if dt in ("f16", "bf16"):
        return ((i * 7919 + 3) & 0xFFFF).astype("<u2")
    if dt == "f32":
        return (i.astype("<f4") * np.float32(0.25) - np.float32(1.5)).astype("<f4")
    if dt == "f64":
        return (i.astype("<f8") - 20.0) / 7.0 * 1e10
    if dt == "i32":
        return ((i * 100003) & 0xFFFFFFFF).astype("<u4").view("<i4") - np.int32(7)
    if dt == "i64":
        return (i << 33) - 5
    if dt == "u8":
        return ((i * 37) & 0xFF).astype("u1")
    raise ValueError(dt)


def check(d):
    bad = 0
    descr = {"f16": "<f2", "bf16": "<V2", "f32": "<f4", "f64": "<f8", "i32": "<i4",
             "i64": "<i8", "u8": "|u1"}
    for dt, want_descr in descr.items():
        path = f"{d}/pe_{dt}.npy"
        raw = open(path, "rb").read()
        a = np.load(path)
        want = fill(dt, 60)
        if dt == "f16":
            want = want.view("<f2")
        want = want.reshape(4, 15)
        if a.shape != (4, 15) or a.tobytes() != want.tobytes():
            print(f"{path}: data differs from numpy's", file=sys.stderr)
            bad += 1
        if dt == "bf16":
            # numpy reads '<V2' as 2-byte void; the header is np.save's apart from the descr
            if a.dtype.kind != "V" or a.dtype.itemsize != 2 or b"'descr': '<V2'" not in raw[:128]:
                print(f"{path}: bf16 not stored as '<V2'", file=sys.stderr)
                bad += 1
            continue
        buf = io.BytesIO()
        np.save(buf, want)
        if buf.getvalue() != raw:
            print(f"{path}: bytes differ from np.save's", file=sys.stderr)
            bad += 1
        if a.dtype.str != want_descr:
            print(f"{path}: dtype {a.dtype.str}", file=sys.stderr)
            bad += 1
    a = np.load(f"{d}/pe_big.npy")
    want = fill("f32", 21000).reshape(3, 1000, 7)
    buf = io.BytesIO()
    np.save(buf, want)
    if buf.getvalue() != open(f"{d}/pe_big.npy", "rb").read():
        print("pe_big.npy: bytes differ from np.save's", file=sys.stderr)
        bad += 1
    return bad


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(1 if check(sys.argv[2]) else 0)
