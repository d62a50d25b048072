#!/usr/bin/python3
"""gguf_check.py [--untyped] [--no-theta] [--gguf-note TEXT] DUMP REF.safetensors [CONVERTER_DUMP]: check, value by value, that a GGUF file posenc
wrote holds what posenc meant to write.

DUMP is what llama.cpp's reader saw in the file (tests/interop/ggml_gguf_dump.c; gguf-py's reader
prints the same lines, compared by the caller). REF.safetensors is the same `posenc gen` run
written as safetensors: its arrays and __metadata__ are what the GGUF file must hold:

  - version 3, general.alignment uint32 32, the data section and every tensor aligned to 32;
  - one key posenc.KEY per metadata key whose value is not null, with the type
    posenc-formats(5) gives it: strings, bools, arrays of strings; the keys gen records as
    integers (INT_KEYS) int64 (with --untyped, for files posenc convert wrote, float64 too);
    every other number float64, arrays of numbers array[float64];
    objects and mixed arrays a string of their JSON text; the value equal (float64 exactly);
  - the arrays as tensors, in order, ggml type from the dtype, ne the reversed shape,
    offsets consecutive and padded to 32, and their data equal element by element.

--no-theta: the config has no rope_theta. posenc then writes {arch}.rope.freq_base 10000,
transformers' class default that the converter reads through AutoConfig; the test's converter
runs with a stub transformers and writes none (llama.cpp then also uses 10000).

--gguf-note TEXT: posenc.notes holds, besides the reference's notes, one that starts with TEXT
(gen's reason for writing no llama.cpp keys).

CONVERTER_DUMP, when given, is the dump of the file llama.cpp's convert_hf_to_gguf.py writes for
the same config (tests/interop/gguf_convert.py): general.architecture, every {arch}.* key of
posenc's file and the rope_freqs / rope_factors_long / rope_factors_short tensors must be there
with the same type and value, and every RoPE key the converter wrote ({arch}.rope.*,
context_length, embedding_length, attention.head_count, attention.key_length) must be in posenc's
file. Without it posenc's file must hold no key outside general.* and posenc.*.
Prints "ok" or raises.
"""
import json
import re
import struct
import sys

import numpy as np

# the metadata keys gen writes as int64 in GGUF (the integer rows of lib/describe/describe.def)
INT_KEYS = {
    "broadcast_query", "d_model", "exponent_dim", "first_position", "head_dim", "heads", "k_len",
    "last_position", "max_model_len", "num_layers", "vllm_cache_len", "vllm_cache_offset",
    "vllm_cache_rows", "max_distance", "max_position_embeddings", "max_relative_position", "n_freq",
    "n_positions", "num_buckets", "original_max_position_embeddings", "padding_idx", "q_len",
    "rotary_dim", "row_offset", "seq_len",
}
GGML = {"float32": "f32", "float16": "f16", "float64": "f64", "int32": "i32", "int64": "i64",
        "bf16": "bf16"}
ROPE_KEY = re.compile(r"^[^.]+\.(rope\..*|context_length|embedding_length|"
                      r"attention\.head_count|attention\.key_length)$")


def parse_dump(path):
    head, kv, tensors, data = {}, {}, [], {}
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        tag, rest = line.split(" ", 1)
        if tag == "kv":
            key, typ, val = rest.split(" ", 2)
            assert key not in kv, ("duplicate key", key)
            kv[key] = (typ, val)
        elif tag == "tensor":
            name, typ, ne, off, nbytes = rest.split(" ")
            tensors.append((name, typ, [int(x) for x in ne.split(",")], int(off), int(nbytes)))
        elif tag == "data":
            name, _, vals = rest.partition(" ")
            data[name] = vals.split(" ") if vals else []
        else:
            head[tag] = int(rest)
    return head, kv, tensors, data


def jstr(s):
    return json.dumps(s, ensure_ascii=False)


UNTYPED = False  # --untyped: metadata given as JSON only (posenc convert): numbers are float64


def expect_kv(key, v):
    """(type, value text) posenc's writer gives the metadata value v; None: no key."""
    if v is None:
        return None
    if isinstance(v, bool):
        return ("bool", "true" if v else "false")
    if isinstance(v, str):
        return ("str", jstr(v))
    if isinstance(v, (int, float)):
        if key in INT_KEYS and not UNTYPED:
            assert float(v) == int(v), (key, v)
            return ("i64", str(int(v)))
        return ("f64", "%.17g" % float(v))
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        return ("array[str]", "[" + ",".join(jstr(x) for x in v) + "]")
    if isinstance(v, list) and v and all(isinstance(x, bool) for x in v):
        return ("array[bool]", "[" + ",".join("true" if x else "false" for x in v) + "]")
    if isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                   for x in v):
        return ("array[f64]", "[" + ",".join("%.17g" % float(x) for x in v) + "]")
    return ("str", jstr(json.dumps(v, separators=(",", ":"), ensure_ascii=False)))


def json_or_str(v):
    """A __metadata__ value as posenc reads it back: its JSON value when it is one, else the
    string itself (posenc stores JSON strings unquoted, as Hugging Face's writers do)."""
    try:
        return json.loads(v)
    except ValueError:
        return v


def load_safetensors(path):
    """The arrays (in order) and the metadata of a posenc safetensors file: its __metadata__
    holds each value's JSON text exactly as gen made it (NPZ's meta.json is re-printed by cJSON,
    whose 15-digit shortcut can be 1 ulp off)."""
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    buf = b[8 + n:]
    meta = {k: json_or_str(v) for k, v in h.pop("__metadata__", {}).items()}
    npt = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I32": "<i4", "I64": "<i8", "BF16": "<V2"}
    arrays = []
    for name, e in h.items():
        s0, s1 = e["data_offsets"]
        arrays.append((name, np.frombuffer(buf[s0:s1], npt[e["dtype"]]).reshape(e["shape"])))
    return arrays, meta


def values_of(a):
    if a.dtype.kind == "V":  # bf16
        f = (a.reshape(-1).view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        return ["%.9g" % float(x) for x in f], "bf16"
    flat = a.reshape(-1)
    if a.dtype == np.float64:
        return ["%.17g" % float(x) for x in flat], "f64"
    if a.dtype.kind == "f":
        return ["%.9g" % float(x) for x in flat], GGML[a.dtype.name]
    return [str(int(x)) for x in flat], GGML[a.dtype.name]


def main():
    global UNTYPED
    args = sys.argv[1:]
    note = None
    no_theta = False
    while args and args[0].startswith("--"):
        if args[0] == "--untyped":
            UNTYPED = True
            args = args[1:]
        elif args[0] == "--no-theta":
            no_theta = True
            args = args[1:]
        elif args[0] == "--gguf-note":
            note, args = args[1], args[2:]
        else:
            raise SystemExit("unknown option " + args[0])
    head, kv, tensors, data = parse_dump(args[0])
    arrays, meta = load_safetensors(args[1])
    conv = parse_dump(args[2]) if len(args) > 2 else None

    assert head["version"] == 3, head
    assert head["alignment"] == 32, head
    assert head["data_offset"] % 32 == 0, head
    assert kv.get("general.alignment") == ("u32", "32"), kv.get("general.alignment")
    assert head["n_kv"] == len(kv) and head["n_tensors"] == len(tensors), head

    # posenc's metadata
    want = {}
    for k, v in meta.items():
        e = expect_kv(k, v)
        if e is not None:
            want["posenc." + k] = e
    got = {k: v for k, v in kv.items() if k.startswith("posenc.")}
    if note is not None:  # the one note GGUF output adds: why the file has no llama.cpp keys
        t, text = got["posenc.notes"]
        notes = json.loads(text)
        extra = [n for n in notes if n.startswith("gguf: ")]
        assert len(extra) == 1 and extra[0].startswith(note), (extra, note)
        notes.remove(extra[0])
        got["posenc.notes"] = (t, "[" + ",".join(jstr(n) for n in notes) + "]")
    assert set(got) == set(want), ("posenc keys differ", set(got) ^ set(want))
    for k, e in want.items():
        assert got[k] == e, (k, got[k], e)

    # posenc's arrays, then (with a converter file) the rope factor tensors
    off = 0
    for i, (name, a) in enumerate(arrays):
        tname, typ, ne, toff, nbytes = tensors[i]
        vals, gt = values_of(a)
        assert tname == name, (i, tname, name)
        assert typ == gt, (name, typ, gt)
        assert ne == list(reversed(a.shape)) + [1] * (4 - a.ndim), (name, ne, a.shape)
        assert toff == off, (name, toff, off)
        assert nbytes == a.nbytes, (name, nbytes, a.nbytes)
        assert data[name] == vals, (name, "data differs")
        off += (nbytes + 31) // 32 * 32
    rest = tensors[len(arrays):]
    for name, typ, ne, toff, nbytes in rest:
        assert toff == off, (name, toff, off)
        off += (nbytes + 31) // 32 * 32

    llama = {k: v for k, v in kv.items() if not k.startswith(("posenc.", "general.alignment"))}
    if conv is None:
        assert not llama and not rest, ("llama.cpp keys or tensors without a reference",
                                        list(llama), rest)
        print("ok")
        return
    _, ckv, ctensors, cdata = conv
    assert "general.architecture" in llama, "no general.architecture"
    for k, v in llama.items():
        if no_theta and k.endswith(".rope.freq_base") and k not in ckv:
            assert v == ("f32", "10000"), (k, v)
            continue
        assert k in ckv, ("key the converter does not write", k, v)
        assert ckv[k] == v, (k, v, ckv[k])
    for k in ckv:
        if ROPE_KEY.match(k):
            assert k in llama, ("converter key missing", k, ckv[k])
    crope = {t[0]: t for t in ctensors if t[0].startswith("rope_")}
    ours = {t[0]: t for t in rest}
    assert set(crope) == set(ours), ("rope tensors differ", set(crope) ^ set(ours))
    for name, t in ours.items():
        c = crope[name]
        assert (t[1], t[2], t[4]) == (c[1], c[2], c[4]), (name, t, c)
        assert data[name] == cdata[name], (name, "factor data differs")
    print("ok")


if __name__ == "__main__":
    main()
