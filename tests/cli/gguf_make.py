"""GGUF bytes by hand (struct.pack), independent of posenc and of gguf-py: for the hostile-file
test (t_gguf_hostile.sh) and the fuzz seeds (tests/fuzz/gguf_seeds.py). Layout from
ggml-org/ggml docs/gguf.md: "GGUF", u32 version, u64 n_tensors, u64 n_kv, key-value pairs,
tensor infos (name, u32 n_dims, u64 dims innermost first, u32 ggml type, u64 offset), padding to
the alignment, data."""
import struct

import numpy as np

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
       U64: "<Q", I64: "<q", F64: "<d"}
GGML = {"F32": 0, "F16": 1, "Q8_0": 8, "BF16": 30, "F64": 28, "I32": 26}


def s(text):
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def val(t, v):
    if t == STR:
        return s(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(val(et, x) for x in items)
    return struct.pack(FMT[t], v)


def kv(key, t, v):
    return s(key) + struct.pack("<I", t) + val(t, v)


def tinfo(name, ne, gtype, offset):
    return (s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<q", d) for d in ne) +
            struct.pack("<IQ", gtype, offset))


def pad(n, a):
    return (a - n % a) % a


def gguf(kvs, tensors, version=3, alignment=32, n_tensors=None, n_kv=None, tail=b""):
    """kvs: list of kv() bytes. tensors: list of (name, numpy array or (ne, gtype, nbytes)),
    laid out one after another, each aligned. Returns the file's bytes."""
    infos, blobs, off = [], [], 0
    for name, a in tensors:
        if isinstance(a, np.ndarray):
            gtype = {np.float32: 0, np.float16: 1, np.float64: 28, np.int32: 26}[a.dtype.type]
            ne, data = list(a.shape[::-1]), a.astype(a.dtype.newbyteorder("<")).tobytes()
        else:
            ne, gtype, nbytes = a
            data = bytes(range(256)) * (nbytes // 256) + bytes(nbytes % 256)
        infos.append(tinfo(name, ne, gtype, off))
        data += bytes(pad(len(data), alignment))
        blobs.append(data)
        off += len(data)
    head = b"GGUF" + struct.pack("<IQQ", version,
                                 len(tensors) if n_tensors is None else n_tensors,
                                 len(kvs) if n_kv is None else n_kv)
    head += b"".join(kvs) + b"".join(infos)
    if tensors:
        head += bytes(pad(len(head), alignment))
    return head + b"".join(blobs) + tail


def small():
    """A small valid file: two F32 tensors, an F16 one, a few keys of several types."""
    return gguf([kv("general.architecture", STR, "llama"),
                 kv("llama.rope.freq_base", F32, 10000.0),
                 kv("t.arr", ARR, (I32, [1, 2, 3])),
                 kv("t.strs", ARR, (STR, ["a", "bc"]))],
                [("rope_freqs.weight", np.arange(8, dtype=np.float32)),
                 ("w", np.arange(6, dtype=np.float32).reshape(2, 3)),
                 ("h", np.arange(16, dtype=np.float16))])  # ends aligned: no trailing padding
