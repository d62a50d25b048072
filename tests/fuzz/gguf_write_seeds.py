#!/usr/bin/python3
"""Write the seed corpus of fuzz_gguf_write into tests/fuzz/corpus/gguf_write/ (run from
anywhere: python3 tests/fuzz/gguf_write_seeds.py). The input layout is the harness's: type,
flags, 8 dimension bytes, a 40-byte rope block when flags & 1, then a JSON value."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "gguf_write")
# posenc_meta_type: AUTO STRING BOOL U32 I32 U64 I64 F32 F64 I32_ARRAY F32_ARRAY F64_ARRAY
# STRING_ARRAY
AUTO, STRING, BOOL, U32, I32, U64, I64, F32, F64, AI32, AF32, AF64, ASTR = range(13)
F32_, F16_, BF16_, F64_, I32_, I64_, U8_ = 0, 1, 2, 3, 4, 5, 7


def seed(t, dtype, dims, text, rope=None):
    flags = (1 if rope else 0) | (dtype << 1) | (len(dims) << 4)
    b = bytes([t, flags]) + bytes(dims + [0] * (8 - len(dims)))
    if rope:
        arch, has, base, ctx, nf, nl, ns, st = rope
        b += arch.ljust(8, b"\0") + struct.pack("<Idq", has, base, ctx) + bytes([nf, nl, ns])
        b += st.ljust(9, b"\0")
    return b + text


LLAMA = (b"llama", 0x7ffff, 500000.0, 131072, 21, 3, 4, b"yarn")
seeds = {
    "auto_string": seed(AUTO, F32_, [3, 4], b'"neox"'),
    "u32_rope": seed(U32, F32_, [5], b"4096", LLAMA),
    "rope_bad_arch": seed(I64, F64_, [2, 2], b"-9223372036854775808",
                          (b"lla.ma", 1, 1e4, 4096, 0, 0, 0, b"none")),
    "rope_u32_overflow": seed(F32, F16_, [1, 7], b"0.1", (b"qwen3", 0x1000, 1e6, 1 << 40, 1, 0, 0, b"")),
    "f32_too_big": seed(AF32, BF16_, [2, 3, 4], b"[1, 1e39]"),
    "u8_refused": seed(STRING, U8_, [4], b'"x"'),
    "ndim5_refused": seed(BOOL, F32_, [1, 1, 1, 2, 2], b"true"),
    "auto_null": seed(AUTO, I32_, [6], b"null"),
    "auto_object": seed(AUTO, I64_, [0, 3], b'{"a": [1, "x"], "b": null}'),
    "auto_bigint": seed(AUTO, F32_, [], b"18446744073709551615"),
    "f64_array": seed(AF64, BF16_, [7, 7, 7], b"[0.1, -3, 1e308]"),
    "i32_array": seed(AI32, F32_, [2], b"[1, -2147483648, 2147483647]"),
    "string_array": seed(ASTR, F16_, [3], b'["a", "b \\"q\\"", ""]'),
    "sections_bad": seed(U64, F32_, [2], b"1", (b"qwen35", 0x4, 1e7, 262144, 0, 0, 9, b"")),
}

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {OUT}")
