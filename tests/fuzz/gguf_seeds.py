#!/usr/bin/python3
"""Write the seed corpus of fuzz_gguf into tests/fuzz/corpus/gguf/ (run from anywhere:
python3 tests/fuzz/gguf_seeds.py). GGUF bytes come from tests/cli/gguf_make.py (struct.pack, no
gguf-py, no posenc). Valid files first (every metadata type, nested arrays, v2, custom alignment,
F32/F16/F64/I32/Q8_0 tensors, no tensors), then a few broken ones; each under 20 KB."""
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from gguf_make import *  # noqa: E402,F403

seeds = {
    "small": small(),
    "every_type": gguf([kv("u8", U8, 1), kv("i8", I8, -1), kv("u16", U16, 2), kv("i16", I16, -2),
                        kv("u32", U32, 3), kv("i32", I32, -3), kv("f32", F32, 0.5),
                        kv("b", BOOL, True), kv("s", STR, "h\u00e9\0\x01"), kv("u64", U64, 2**64 - 1),
                        kv("i64", I64, -2**63), kv("f64", F64, float("nan")),
                        kv("a", ARR, (F64, [1.0, float("inf")])),
                        kv("nest", ARR, (ARR, [(U8, [1, 2]), (STR, ["x"]), (ARR, [])]))],
                       [("x", np.arange(3, dtype=np.float64))]),
    "v2_align64": gguf([kv("general.alignment", U32, 64)],
                       [("a", np.arange(5, dtype=np.int32)),
                        ("b", np.ones((2, 2, 2, 2), dtype=np.float32))], version=2, alignment=64),
    "q8": gguf([], [("q", ([64, 2], 8, 136)), ("f", np.zeros(4, dtype=np.float16))]),
    "no_tensors": gguf([kv("general.architecture", STR, "qwen3")], []),
    "empty_tensor": gguf([], [("z", ([0, 4], 0, 0)), ("s", ([], 0, 4))]),
    "trunc": small()[:150],
    "dup": gguf([], [("x", np.zeros(8, np.float32)), ("x", np.zeros(8, np.float32))]),
    "lying_kv": gguf([kv("k", U8, 1)], [], n_kv=5),
    "bad_type": gguf([], [("x", ([8], 5, 32))]),
}
d = os.path.join(HERE, "corpus", "gguf")
os.makedirs(d, exist_ok=True)
for name, data in seeds.items():
    assert len(data) < 20000, name
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
