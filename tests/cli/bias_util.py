"""Helpers for the bias/ls/convert CLI tests (run with Debian's /usr/bin/python3).

load(path) reads what posenc wrote in any readable format independently of posenc:
numpy for NPY/NPZ/directories, h5py for HDF5, a few lines of struct/json for safetensors and
raw .bin + .json. bf16 comes back as float32 (exact)."""
import json
import os
import struct

import numpy as np

ST_DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I32": np.int32,
             "I64": np.int64, "U8": np.uint8, "BF16": "bf16"}


def bf16_bits_to_f32(u16):
    return (u16.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(x):
    """Round float32 to bfloat16 (nearest even), as torch does."""
    import torch
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).bfloat16()
    return t.view(torch.int16).numpy().view(np.uint16)


def write_safetensors(path, tensors, metadata=None):
    """tensors: {name: ndarray} (float16/32/64, int32/64) or {name: ("BF16", uint16 array)}."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, arr in tensors.items():
        if isinstance(arr, tuple):
            dt, arr = arr
        else:
            dt = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32",
                  np.dtype(np.float64): "F64", np.dtype(np.int32): "I32",
                  np.dtype(np.int64): "I64"}[arr.dtype]
        b = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    out = {}
    for name, d in header.items():
        b0, b1 = d["data_offsets"]
        raw = data[b0:b1]
        if d["dtype"] == "BF16":
            a = bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2"))
        else:
            a = np.frombuffer(raw, dtype=np.dtype(ST_DTYPES[d["dtype"]]).newbyteorder("<"))
        out[name] = a.reshape(d["shape"])
    return out, meta


def _npy_bf16(a, is_bf16):
    if a.dtype.kind == "V" and a.dtype.itemsize == 2 or is_bf16:
        return bf16_bits_to_f32(a.view(np.uint16))
    return a


def load(path):
    """{name: array}, metadata dict"""
    if os.path.isdir(path):
        meta = {}
        if os.path.exists(os.path.join(path, "meta.json")):
            meta = json.load(open(os.path.join(path, "meta.json")))
        out = {}
        for f in sorted(os.listdir(path)):
            if f.endswith(".npy"):
                out[f[:-4]] = _npy_bf16(np.load(os.path.join(path, f)), False)
        return out, meta
    if path.endswith(".npy"):
        return {os.path.basename(path)[:-4]: _npy_bf16(np.load(path), False)}, {}
    if path.endswith(".npz"):
        z = np.load(path)
        meta = {}
        out = {}
        for k in z.files:
            if k == "meta.json":
                continue
            out[k] = _npy_bf16(z[k], False)
        import zipfile
        with zipfile.ZipFile(path) as zf:
            if "meta.json" in zf.namelist():
                meta = json.loads(zf.read("meta.json"))
        return out, meta
    if path.endswith(".h5") or path.endswith(".hdf5"):
        import h5py
        out, meta = {}, {}
        with h5py.File(path, "r") as f:
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset):
                    a = obj[()]
                    if a.dtype.kind == "V" or obj.attrs.get("dtype") in ("bf16", b"bf16"):
                        a = bf16_bits_to_f32(np.asarray(a).view(np.uint16))
                    out[name] = np.asarray(a)
            f.visititems(visit)
            for k, v in f.attrs.items():
                meta[k] = v
        return out, meta
    if path.endswith(".safetensors"):
        return read_safetensors(path)
    if path.endswith(".bin") or path.endswith(".json"):
        stem = path[:-4] if path.endswith(".bin") else path[:-5]
        side = json.load(open(stem + ".json"))
        data = open(stem + ".bin", "rb").read()
        out = {}
        for a in side["arrays"]:
            raw = data[a["offset"]:a["offset"] + a["nbytes"]]
            if a["dtype"] == "bf16":
                v = bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2"))
            else:
                v = np.frombuffer(raw, dtype={"f16": "<f2", "f32": "<f4", "f64": "<f8",
                                              "i32": "<i4", "i64": "<i8", "u8": "u1"}[a["dtype"]])
            out[a["name"]] = v.reshape(a["shape"])
        return out, side.get("metadata", {})
    raise ValueError("unknown format: " + path)


def press_slopes(n):
    """Press et al. get_slopes (float64)."""
    import math

    def p2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return p2(n)
    c = 2 ** math.floor(math.log2(n))
    return p2(c) + press_slopes(2 * c)[0::2][:n - c]
