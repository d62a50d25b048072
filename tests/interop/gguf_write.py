#!/usr/bin/python3
"""Write small GGUF files with llama.cpp's own writer (gguf-py's GGUFWriter) and what they hold.

Usage: PYTHONPATH=LLAMA_CPP/gguf-py gguf_write.py OUTDIR

Writes into OUTDIR:
  v3.gguf      F32, F16 and BF16 tensors (1-, 2- and 3-D), a Q8_0 tensor, metadata of every
               GGUF type: each scalar type, strings (UTF-8, empty), arrays of each type, an array
               of strings and an array of arrays; general.alignment 64
  v2.gguf      the same file with the version field set to 2 (gguf-py writes version 3 only;
               versions 2 and 3 differ only in that v3 may be big-endian)
  default.gguf one F32 tensor "rope_freqs.weight", default alignment (32), few keys
  T_NAME.npy   the numpy array each readable tensor was written from (name with '.' -> '_')
  expect.json  {"tensors": {name: {"dtype", "shape", "ggml_type"}}, "metadata": {key: [type,
               value]}} as the test meant them (floats as written, after float32 rounding)
"""
import json
import os
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType as T

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(14)

tensors = {
    "rope_freqs.weight": rng.standard_normal(32).astype(np.float32),
    "blk.0.attn_q.weight": rng.standard_normal((8, 16)).astype(np.float32),
    "token_embd.weight": rng.standard_normal((4, 6)).astype(np.float16),
    "blk.0.ffn.bf16": rng.standard_normal((2, 3, 4)).astype(np.float32),  # stored as BF16
}
ggml_names = {"rope_freqs.weight": "F32", "blk.0.attn_q.weight": "F32",
              "token_embd.weight": "F16", "blk.0.ffn.bf16": "BF16", "blk.0.q8.weight": "Q8_0"}


def bf16_bits(a):
    """float32 -> bfloat16 bit patterns (round to nearest even), as uint16."""
    u = a.astype(np.float32).view(np.uint32)
    r = ((u >> 16) & 1) + 0x7FFF
    return ((u + r) >> 16).astype(np.uint16)


meta = [  # key, GGUF type name, value, writer call
    ("general.architecture", "string", "llama"),
    ("t.u8", "uint8", 200), ("t.i8", "int8", -100), ("t.u16", "uint16", 60000),
    ("t.i16", "int16", -30000), ("t.u32", "uint32", 4000000000), ("t.i32", "int32", -2000000000),
    ("t.f32", "float32", 0.1), ("t.bool", "bool", True), ("t.bool0", "bool", False),
    ("t.str", "string", "h\u00e9llo \"w\" \\ \u4e16\u754c"), ("t.empty", "string", ""),
    ("t.u64", "uint64", 2**53), ("t.i64", "int64", -(2**53)), ("t.f64", "float64", 1e-300),
    ("llama.rope.freq_base", "float32", 500000.0),
    ("llama.rope.dimension_sections", "array[int32]", [16, 24, 24, 0]),
    ("t.arr_u8", "array[uint8]", [0, 1, 255]), ("t.arr_f32", "array[float32]", [0.5, -1.25, 3.0]),
    ("t.arr_f64", "array[float64]", [1.5, 2.5]), ("t.arr_bool", "array[bool]", [True, False, True]),
    ("t.arr_str", "array[string]", ["a", "", "\u00fc"]),
    ("t.arr_i64", "array[int64]", [-1, 2**40]), ("t.arr_u16", "array[uint16]", [7, 65535]),
    ("t.arr_long", "array[uint32]", list(range(100))),
    ("t.nested", "array[array[int32]]", [[1, 2], [3, 4, 5]]),
]
setters = {"uint8": T.UINT8, "int8": T.INT8, "uint16": T.UINT16, "int16": T.INT16,
           "uint32": T.UINT32, "int32": T.INT32, "float32": T.FLOAT32, "bool": T.BOOL,
           "string": T.STRING, "uint64": T.UINT64, "int64": T.INT64, "float64": T.FLOAT64}


def write_full(path):
    w = gguf.GGUFWriter(path, "llama")  # adds general.architecture itself
    w.add_custom_alignment(64)
    for key, ty, val in meta:
        if key == "general.architecture":
            continue
        if ty.startswith("array[array"):
            w.add_key_value(key, val, T.ARRAY, sub_type=T.ARRAY)
        elif ty.startswith("array["):
            w.add_key_value(key, val, T.ARRAY, sub_type=setters[ty[6:-1]])
        else:
            w.add_key_value(key, val, setters[ty])
    for name, a in tensors.items():
        if name.endswith(".bf16"):
            w.add_tensor(name, bf16_bits(a), raw_shape=a.shape, raw_dtype=Q.BF16)
        else:
            w.add_tensor(name, a)
    q = rng.standard_normal((2, 64)).astype(np.float32)
    try:
        from gguf import quants
        qb = quants.quantize(q, Q.Q8_0)
    except Exception:  # no quants module: 2 rows of 2 blocks of (f16 scale + 32 int8)
        qb = np.zeros((2, 68), dtype=np.uint8)
    w.add_tensor("blk.0.q8.weight", qb, raw_shape=qb.shape, raw_dtype=Q.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


write_full(os.path.join(out, "v3.gguf"))
data = bytearray(open(os.path.join(out, "v3.gguf"), "rb").read())
assert data[:4] == b"GGUF" and int.from_bytes(data[4:8], "little") == 3
data[4:8] = (2).to_bytes(4, "little")
open(os.path.join(out, "v2.gguf"), "wb").write(bytes(data))

w = gguf.GGUFWriter(os.path.join(out, "default.gguf"), "llama")
w.add_float32("llama.rope.freq_base", 10000.0)
w.add_tensor("rope_freqs.weight", tensors["rope_freqs.weight"])
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()

expect = {"tensors": {}, "metadata": {}}
for name, a in tensors.items():
    if name.endswith(".bf16"):
        v = (bf16_bits(a).astype(np.uint32) << 16).view(np.float32)
        np.save(os.path.join(out, "T_" + name.replace(".", "_") + ".npy"), v)
        dt = "bf16"
    else:
        np.save(os.path.join(out, "T_" + name.replace(".", "_") + ".npy"), a)
        dt = {np.float32: "f32", np.float16: "f16"}[a.dtype.type]
    expect["tensors"][name] = {"dtype": dt, "shape": list(a.shape), "ggml_type": ggml_names[name]}
expect["tensors"]["blk.0.q8.weight"] = {"dtype": "Q8_0", "shape": [2, 64], "ggml_type": "Q8_0"}
for key, ty, val in meta:
    if ty == "float32":
        val = float(np.float32(val))
    if ty == "array[float32]":
        val = [float(np.float32(x)) for x in val]
    expect["metadata"][key] = [ty, val]
expect["metadata"]["general.alignment"] = ["uint32", 64]
json.dump(expect, open(os.path.join(out, "expect.json"), "w"), indent=1)
