#!/usr/bin/python3
"""Write the seeds that reach the metadata budget (posenc-formats(5), METADATA BUDGET) into
tests/fuzz/corpus/{gguf,gguf_rope,safetensors,raw,dir,npz}/big_* (run from anywhere: python3
tests/fuzz/big_seeds.py). Each is a few hundred bytes: a "\\xffBIG" description that the
harness expands (tests/fuzz/fuzzbig.h) into the large input, past a cap or just under it. The
NPZ seeds need no expansion: a deflated meta.json of 65 MiB is 65 KB. The harnesses expand
only with POSENC_FUZZ_BIG=1 (make check sets it). GGUF bytes come from
tests/cli/gguf_make.py."""
import json
import os
import struct
import sys
import zipfile
import io

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from gguf_make import *  # noqa: E402,F403

MAX = 160 << 20  # FZ_BIG_MAX


def big(prefix, chunk, reps, suffix=b""):
    """prefix + chunk * reps + suffix, as fuzzbig.h describes it."""
    assert len(prefix) + len(chunk) * reps + len(suffix) <= MAX
    return (b"\xffBIG" + struct.pack("<III", reps, len(prefix), len(chunk)) + prefix + chunk +
            suffix)


def write(name, files, max_len=None):
    """max_len: the harness's -max_len (fuzz-options), which libFuzzer cuts its seeds to."""
    d = os.path.join(HERE, "corpus", name)
    os.makedirs(d, exist_ok=True)
    for fn, data in files.items():
        assert len(data) <= (max_len or 80000), fn
        with open(os.path.join(d, fn), "wb") as f:
            f.write(data)


# ---- GGUF: an array of n bools, a long string, many tensor infos ----
def gguf_bools(n, rope=False):
    keys = [kv("general.architecture", STR, "llama")]
    if rope:
        keys += [kv("llama.rope.freq_base", F32, 10000.0), kv("llama.attention.head_count", U32, 4),
                 kv("llama.embedding_length", U32, 256), kv("llama.context_length", U32, 64)]
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, len(keys) + 1) + b"".join(keys)
    head += s("k") + struct.pack("<IIQ", ARR, BOOL, n)
    assert n % 1024 == 0
    return big(head, bytes(1024), n // 1024)


def gguf_string(n):
    head = (b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + kv("general.architecture", STR, "llama") +
            s("k") + struct.pack("<IQ", STR, n))
    return big(head, b"a" * 1024, n // 1024)


def gguf_tensors(n):
    head = (b"GGUF" + struct.pack("<IQQ", 3, n, 1) + kv("general.architecture", STR, "llama") +
            tinfo("t", [1], 0, 0))
    return big(head, bytes(1024), 24 * n // 1024 + 1)  # room the header says n infos need


gg = {
    "big_bools_16m": gguf_bools(1 << 24),           # 96 MiB as JSON text: past 64 MiB
    "big_bools_1_5m": gguf_bools(1_503_232),        # 9 MB of text, ~115 MiB parsed: read
    "big_bools_2m": gguf_bools(2_002_944),          # ~153 MiB parsed: past 128 MiB
    "big_string_128m": gguf_string(128 << 20),      # a 128 MiB string
    "big_tensors_1m": gguf_tensors(1_000_000),      # 1M tensor infos claimed
}
write("gguf", gg, 4096)
write("gguf_rope", {"big_rope_bools_1_5m": gguf_bools(1_503_232, rope=True),
                    "big_rope_bools_16m": gguf_bools(1 << 24, rope=True)}, 8192)

# ---- safetensors: a header of 99999992 bytes (the format's 100 MB cap, past posenc's 64 MiB),
# a dense header under 64 MiB that would parse past 128 MiB, one that parses within it ----
def st(fill, reps, total=None, close=b"]}"):
    body = b'{"__metadata__":{"a":"b"},"x":['
    n = len(body) + len(fill) * reps + len(close)
    if total:
        close = close + b" " * (total - n)
        n = total
    return big(struct.pack("<Q", n) + body, fill, reps, close)


write("safetensors", {
    "big_header_99mb": st(b"  ", 49_999_970, total=99_999_992),
    "big_dense_60mb": st(b"0,", 30 << 20, close=b"0]}"),
    "big_dense_1_5m": st(b"0,", 1_500_000, close=b"0]}"),
})

# ---- raw: a sidecar of 200000 arrays (the harness splits sidecar and .bin at the first NUL),
# and one of 65 MiB (spaces) ----
arr = b'{"name":"a","dtype":"f32","shape":[1],"offset":0,"nbytes":4},'
write("raw", max_len=16384, files={
    "big_sidecar_200k": big(b'{"format":"posenc-raw","version":1,"arrays":[', arr, 200_000,
                            b'{"name":"b","dtype":"f32","shape":[1],"offset":0,"nbytes":4}]}'
                            b"\0" + bytes(4)),
    "big_sidecar_65m": big(b'{"format":"posenc-raw","version":1,"arrays":[]', b" " * 4096,
                           (65 << 20) // 4096, b"}\0"),
})

# ---- directory: meta.json (before the first NUL) dense past the parsed cap, and within it ----
write("dir", max_len=16384, files={
    "big_meta_dense_60m": big(b'{"k":[', b"0," * 2048, (60 << 20) // 4096, b'0]}'),
    "big_meta_dense_1_5m": big(b'{"k":[', b"0," * 2048, 1_500_000 // 2048, b'0]}'),
})

# ---- NPZ: a deflated meta.json past 64 MiB, and a dense one of 1.5M numbers ----
def npz_meta(text):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("meta.json", text)
    return b.getvalue()


write("npz", {
    "big_meta_65m.npz": npz_meta('{"k":"' + "x" * (65 << 20) + '"}'),
    "big_meta_dense.npz": npz_meta('{"k":[' + "0," * 1_500_000 + '0]}'),
    "big_meta_dense_60m.npz": npz_meta('{"k":[' + "0," * (30 << 20) + '0]}'),
})
