#!/usr/bin/python3
"""gguf_dump.py FILE.gguf: what gguf-py's GGUFReader sees in a file, in the line format of
tests/interop/ggml_gguf_dump.c (llama.cpp's C reader), so that the two can be compared with cmp.

Run with llama.cpp's gguf-py on PYTHONPATH (tests/interop/fetch.sh src). Type names are ggml's
(ggml/src/gguf.cpp GGUF_TYPE_NAME); float32 values print as %.9g, float64 as %.17g (both exact).
"""
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType

NAMES = {
    GGUFValueType.UINT8: "u8", GGUFValueType.INT8: "i8", GGUFValueType.UINT16: "u16",
    GGUFValueType.INT16: "i16", GGUFValueType.UINT32: "u32", GGUFValueType.INT32: "i32",
    GGUFValueType.FLOAT32: "f32", GGUFValueType.BOOL: "bool", GGUFValueType.STRING: "str",
    GGUFValueType.ARRAY: "arr", GGUFValueType.UINT64: "u64", GGUFValueType.INT64: "i64",
    GGUFValueType.FLOAT64: "f64",
}


def jstr(s):
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def scalar(t, v):
    if t == GGUFValueType.FLOAT32:
        return "%.9g" % float(v)
    if t == GGUFValueType.FLOAT64:
        return "%.17g" % float(v)
    if t == GGUFValueType.BOOL:
        return "true" if v else "false"
    if t == GGUFValueType.STRING:
        return jstr(v)
    return str(int(v))


def main():
    r = GGUFReader(sys.argv[1])
    out = []
    version = r.fields["GGUF.version"].contents()
    out.append("version %d" % version)
    out.append("alignment %d" % r.alignment)
    out.append("data_offset %d" % r.data_offset)
    kv = [f for name, f in r.fields.items() if not name.startswith("GGUF.")]
    out.append("n_kv %d" % len(kv))
    out.append("n_tensors %d" % len(r.tensors))
    for f in kv:
        t = f.types[0]
        if t == GGUFValueType.ARRAY:
            et = f.types[-1]
            vals = f.contents()
            out.append("kv %s array[%s] [%s]" % (f.name, NAMES[et],
                                                 ",".join(scalar(et, v) for v in vals)))
        else:
            out.append("kv %s %s %s" % (f.name, NAMES[t], scalar(t, f.contents())))
    for t in r.tensors:
        ne = [int(d) for d in t.shape.tolist()] + [1] * (4 - len(t.shape))
        rel = int(t.field.parts[-1][0])
        out.append("tensor %s %s %s %d %d" % (t.name, t.tensor_type.name.lower(),
                                              ",".join(map(str, ne)), rel, t.n_bytes))
        d = np.asarray(t.data)
        if t.tensor_type == GGMLQuantizationType.BF16:
            d = (d.reshape(-1).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        d = d.reshape(-1)
        if t.tensor_type in (GGMLQuantizationType.F32, GGMLQuantizationType.F16,
                             GGMLQuantizationType.BF16):
            vals = ["%.9g" % float(x) for x in d]
        elif t.tensor_type == GGMLQuantizationType.F64:
            vals = ["%.17g" % float(x) for x in d]
        elif t.tensor_type in (GGMLQuantizationType.I32, GGMLQuantizationType.I64):
            vals = [str(int(x)) for x in d]
        else:
            continue
        out.append("data %s%s" % (t.name, "".join(" " + v for v in vals)))
    sys.stdout.write("".join(line + "\n" for line in out))


if __name__ == "__main__":
    main()
