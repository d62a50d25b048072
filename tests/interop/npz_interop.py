#!/usr/bin/python3
"""NumPy side of the NPZ interop tests (tests/unit/test_npz.c).

  npz_interop.py make DIR    np.savez / np.savez_compressed archives for posenc to read
  npz_interop.py check DIR   np.load and zipfile read posenc's pe_*.npz and z64.npz
"""
import json
import sys
import zipfile

import numpy as np


def make(d):
    i = np.arange(1000 * 64)
    arrays = {
        "cos": ((i % 997) * 0.001).astype("<f4").reshape(1000, 64),
        "pos": np.arange(100, dtype="<i8") * 3 - 50,
        "be": (np.arange(24) * 0.25).astype(">f8").reshape(4, 6),
        "fort": np.asfortranarray((np.arange(24) * 1.5).reshape(4, 6)),
        "h": (np.arange(10) - 4.5).astype("<f2"),
    }
    np.savez(f"{d}/np_savez.npz", **arrays)
    np.savez_compressed(f"{d}/np_savez_compressed.npz", **arrays)
    with zipfile.ZipFile(f"{d}/np_savez_compressed.npz") as z:
        assert all(m.compress_type == zipfile.ZIP_DEFLATED for m in z.infolist())


def fill(dt, n, seed):
    """posenc's test values (fill() in test_npz.c)."""
    i = np.arange(n, dtype=np.int64)
    if dt in ("f16", "bf16"):
        v = ((i * 7919 + 3 + seed) & 0xFFFF).astype("<u2")
        return v.view("<f2") if dt == "f16" else v
    if dt == "f32":
        return (i.astype("<f4") * np.float32(0.25) - np.float32(1.5)) + np.float32(seed)
    if dt == "f64":
        return (i.astype("<f8") - 20.0) / 7.0 * 1e10 + seed
    if dt == "i32":
        return ((i * 100003) & 0xFFFFFFFF).astype("<u4").view("<i4") - np.int32(7) + np.int32(seed)
    if dt == "i64":
        return (i << 33) - 5 + seed
    if dt == "u8":
        return ((i * 37 + seed) & 0xFF).astype("u1")
    raise ValueError(dt)


def check(d):
    bad = 0
    dts = ["f16", "bf16", "f32", "f64", "i32", "i64", "u8"]
    for name, method in (("pe_stored.npz", zipfile.ZIP_STORED),
                         ("pe_deflated.npz", zipfile.ZIP_DEFLATED)):
        path = f"{d}/{name}"
        with zipfile.ZipFile(path) as z:
            if z.testzip() is not None:
                print(f"{name}: zipfile finds a bad CRC", file=sys.stderr)
                bad += 1
            for m in z.infolist():
                want = zipfile.ZIP_STORED if m.filename == "meta.json" else method
                if m.compress_type != want:
                    print(f"{name}: {m.filename} compress_type {m.compress_type}", file=sys.stderr)
                    bad += 1
        f = np.load(path)
        want_keys = {f"a_{t}" for t in dts} | {"empty", "meta.json"}
        if set(f.files) != want_keys:
            print(f"{name}: members {sorted(f.files)}", file=sys.stderr)
            bad += 1
        for seed, t in enumerate(dts):
            a = f[f"a_{t}"]
            want = fill(t, 2050, seed).reshape(50, 41)
            if a.shape != (50, 41) or a.tobytes() != want.tobytes():
                print(f"{name}: a_{t} differs", file=sys.stderr)
                bad += 1
            if t != "bf16" and a.dtype != want.dtype:
                print(f"{name}: a_{t} dtype {a.dtype}", file=sys.stderr)
                bad += 1
        if f["empty"].shape != (0, 4):
            bad += 1
        meta = json.loads(f["meta.json"])
        if meta != {"theta": 500000, "note": 'a "quoted" word',
                    "posenc_dtypes": {"a_bf16": "bf16"}}:
            print(f"{name}: meta.json {meta}", file=sys.stderr)
            bad += 1
    # ZIP64 end record and locator (test_zip64_end_records)
    z64 = np.load(f"{d}/z64.npz")
    for k, n in (("m0", 100), ("m1", 200), ("m2", 300)):
        if not np.array_equal(z64[k], (np.arange(n) * 0.5).astype("<f4")):
            print(f"z64.npz: {k} differs", file=sys.stderr)
            bad += 1
    with zipfile.ZipFile(f"{d}/z64.npz") as z:
        if z.testzip() is not None:
            bad += 1
    return bad


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(1 if check(sys.argv[2]) else 0)
