#!/usr/bin/python3
"""Write the seed corpora of fuzz_positions, fuzz_spec, fuzz_raw, fuzz_dir, fuzz_diff and fuzz_pairs into
tests/fuzz/corpus/NAME/ (run from anywhere: python3 tests/fuzz/seeds.py). Each seed is small;
valid inputs come first, then one or two of each way the format can be wrong. The input layouts
are the harnesses' (see the comment at the top of each tests/fuzz/fuzz_NAME.c). Files named
found_* beside them are inputs the fuzzers found that once failed; this script keeps them."""
import io
import json
import os
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def out(name, files):
    d = os.path.join(HERE, "corpus", name)
    os.makedirs(d, exist_ok=True)
    for fn, data in files.items():
        with open(os.path.join(d, fn), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def npz(**arrays):
    b = io.BytesIO()
    np.savez(b, **arrays)
    return b.getvalue()


def npy_header(descr, shape, data=b""):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h = d + " " * (64 - (10 + len(d) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + data


# ---- positions: lists, then files --------------------------------------------------------
out("positions", {
    "list_simple": "0,1,131071",
    "list_ranges": "0-15,100",
    "list_order": "7,0,5-6,63,1000,131071",
    "list_blanks": " 1, 2 ,3-4\t",
    "list_huge_range": "0-1073741824",
    "list_edge_2_48": "281474976710655,0-281474976710655",
    "bad_int64_max": "9223372036854775807",
    "bad_uint64_over": "18446744073709551616",
    "bad_backwards": "5-2",
    "bad_empty_item": "1,,x",
    "bad_trailing": "0,1,",
    "bad_sign": "-3,+4",
    "file_i64.npy": npy(np.arange(5, dtype="<i8")),
    "file_i32_2d.npy": npy(np.arange(6, dtype="<i4").reshape(2, 3)),
    "file_u8.npy": npy(np.array([255, 0], dtype="u1")),
    "file_member.npz": npz(p=np.array([3, 1, 2])),
    "file_two.npz": npz(p=np.arange(4), q=np.arange(2)),
    "bad_float.npy": npy(np.array([0.5, 1.0], dtype="<f4")),
    "bad_negative.npy": npy(np.array([0, 3, -1])),
    "bad_big.npy": npy(np.array([2**31, 2**48])),
    "bad_empty.npy": npy(np.zeros(0, dtype="<i8")),
    "bad_lying.npy": npy_header("<i8", "(536870912,)", bytes(24)),
})

# ---- spec: two bytes pick the path and member buffer sizes, then the spec -----------------
def spec(plen, mlen, s):
    return bytes([plen, mlen // 4]) + s.encode()


out("spec", {
    "npz_member": spec(255, 1020, "dump.npz:q"),
    "h5_path": spec(255, 1020, "acts.h5:/layer0/q"),
    "safetensors": spec(255, 1020, "m.safetensors:wpe.weight"),
    "raw_member": spec(255, 1020, "x.bin:cos"),
    "upper_ext": spec(255, 1020, "X.NPZ:q"),
    "last_colon": spec(255, 1020, "a.npz:b.npz:c"),
    "no_container": spec(255, 1020, "a:b.npy"),
    "windows": spec(255, 1020, "C:\\x.npy"),
    "empty_member": spec(255, 1020, "x.hdf5:"),
    "plain": spec(255, 1020, "q.npy"),
    "tight_path": spec(6, 1020, "x.npz:q"),
    "short_path": spec(5, 1020, "x.npz:q"),
    "tight_member": spec(255, 4, "x.npz:abc"),
    "short_member": spec(255, 4, "x.npz:abcd"),
    "no_member_room": spec(255, 0, "x.npz"),
    "nothing": spec(0, 0, ""),
})

# ---- raw: the sidecar, a NUL, the .bin -------------------------------------------------
def raw(arrays, meta=None, tweak=None):
    off, blobs, entries = 0, [], []
    for name, a in arrays:
        off = (off + 63) // 64 * 64
        b = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        entries.append({"name": name, "dtype": {"f2": "f16", "f4": "f32", "f8": "f64", "i4": "i32",
                        "i8": "i64", "u1": "u8"}[a.dtype.str[1:]], "shape": list(a.shape),
                        "offset": off, "nbytes": len(b)})
        blobs.append((off, b))
        off += len(b)
    data = bytearray(off)
    for o, b in blobs:
        data[o:o + len(b)] = b
    side = {"format": "posenc-raw", "version": 1, "arrays": entries, "metadata": meta or {}}
    if tweak:
        tweak(side)
    return json.dumps(side).encode() + b"\0" + bytes(data)


cos = np.cos(np.arange(12, dtype="f4")).reshape(3, 4)
two = [("cos", cos), ("inv_freq", np.array([1.0, 0.01], dtype="f8"))]


def setk(path, v):
    def f(side):
        o = side
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = v
    return f


out("raw", {
    "two_arrays": raw(two, {"rope_type": "default", "theta": 10000.0}),
    "dtypes": raw([("a", np.arange(3, dtype="<i4")), ("b", np.arange(2, dtype="u1")),
                   ("c", np.ones(2, dtype="<f2")), ("d", np.arange(4, dtype="<i8"))]),
    "bf16": raw([("x", np.ones(2, dtype="f4"))], tweak=lambda s: s["arrays"][0].update(
        dtype="bf16", shape=[4], nbytes=8)),
    "scalar_and_empty": raw([("s", np.array(1.5, dtype="f4")), ("e", np.zeros((0, 3), "f4"))]),
    "no_metadata": raw(two, tweak=lambda s: s.pop("metadata")),
    "bad_version": raw(two, tweak=setk(["version"], 2)),
    "bad_format": raw(two, tweak=setk(["format"], "npz")),
    "bad_nbytes": raw(two, tweak=setk(["arrays", 0, "nbytes"], 47)),
    "bad_past_end": raw(two, tweak=setk(["arrays", 1, "offset"], 4096)),
    "bad_dup": raw(two, tweak=setk(["arrays", 1, "name"], "cos")),
    "bad_dtype": raw(two, tweak=setk(["arrays", 0, "dtype"], "c64")),
    "bad_shape_9d": raw(two, tweak=setk(["arrays", 0, "shape"], [1] * 9)),
    "bad_shape_2_53": raw(two, tweak=setk(["arrays", 0, "shape"], [2**53 + 2, 2**10])),
    "bad_negative": raw(two, tweak=setk(["arrays", 0, "offset"], -64)),
    "bad_meta_list": raw(two, tweak=setk(["metadata"], [1, 2])),
    "bad_json": b'{"format": "posenc-raw", "version": 1, "arrays": [' + b"\0" + bytes(8),
    "bad_no_nul": b'{"format": "posenc-raw", "version": 1, "arrays": []}',
})

# ---- dir: meta.json, a NUL, NPY files (each starts at the NPY magic) -----------------------
def dirin(meta, *arrays):
    m = b"" if meta is None else (meta if isinstance(meta, bytes) else json.dumps(meta).encode())
    return m + b"\0" + b"".join(a if isinstance(a, bytes) else npy(a) for a in arrays)


out("dir", {
    "two_arrays": dirin({"posenc_version": "1", "theta": 10000.0}, cos, np.arange(4)),
    "bf16_meta": dirin({"posenc_dtypes": {"a": "bf16"}}, np.zeros(3, dtype="V2")),
    "four_arrays": dirin({}, np.arange(2), np.ones((2, 2), "f2"), np.zeros(0, "f8"),
                         np.array(7, dtype="u1")),
    "no_meta": dirin(None, np.arange(3, dtype="<i4")),
    "meta_only": json.dumps({"a": 1}).encode(),
    "bad_meta_list": dirin([1, 2], np.arange(2)),
    "bad_meta_json": dirin(b'{"a": ', np.arange(2)),
    "bad_npy": dirin({}, b"\x93NUMPY\x01\x00\xff\xff{'descr'"),
    "bad_truncated": dirin({}, npy(np.arange(100))[:-8]),
    "bad_fortran_lie": dirin({}, npy_header("<f8", "(1048576, 1048576)", bytes(16))),
})


# ---- diff: 3 option bytes, then n elements of A and n of B (see fuzz_diff.c) ---------------
def diffin(flags, top_bw, max_ulp, a, b):
    return bytes([flags, top_bw, max_ulp]) + a.tobytes() + b.tobytes()


np.seterr(over="ignore")
_x = np.array([0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, 1e-45, 3.4e38], dtype="<f4")
_y = np.array([-0.0, 0.0, np.nextafter(np.float32(1), np.float32(2)), np.nan, np.inf, np.inf,
               -1e-45, np.inf], dtype="<f4")
out("diff", {
    "f32_specials": diffin(0x0a | 0x20, 0x05, 1, _x, _y),
    "f32_equal_nan_ulp": diffin(0x0a | 0x20 | 0x40 | 0x80, 0x25, 0, _x, _y),
    "f16_vs_f32": diffin(0x08, 0x13, 2, _x.astype("<f2"), _y),  # 3.4e38 -> inf in f16
    "bf16_ulps": diffin(0x05 | 0x10, 0x0f, 3, (_x.view("<u4") >> 16).astype("<u2"),
                        (_y.view("<u4") >> 16).astype("<u2")),
    "f64_random": diffin(0x0f | 0x30, 0x4a, 0, np.random.default_rng(1).standard_normal(64),
                         np.random.default_rng(2).standard_normal(64)),
    "empty": bytes([0, 0, 0]),
})


# ---- pairs: a --pairs glob line (empty: none), then member names, one a line ---------------
out("pairs", {
    "h5_layers": "\n/layer0/q\n/layer0/k\n/layer1/q\n/layer1/k\n/layer0/v\n",
    "st_layers": "\nlayers.0.q\nlayers.0.k\nlayers.3.k\nlayers.3.q\nlayers.2.q\nlayers.2.k\n",
    "hf_names": "\nmodel.layers.1.self_attn.q_proj\nmodel.layers.1.self_attn.k_proj\n",
    "states": "\nh.2.query_states\nh.2.key_states\nblk.3-q\nblk.3-k\nlayer_1_query\nlayer_1_key\n",
    "glob": "layer[01]\n/layer0/q\n/layer0/k\n/layer1/q\n/layer1/k\n/layer2/q\n",
    "glob_slash": "/layers.*\nlayers.0.q\nlayers.0.k\n",
    "glob_none": "zz*\n/layer0/q\n/layer0/k\n",
    "top": "\nq\nk\n",
    "no_index": "\nattn/q\nattn/k\n",
    "past_layers": "\nlayers.9.q\nlayers.9.k\n",
    "bad_lone_q": "\n/layer0/q\n/layer0/k\n/layer1/q\n",
    "bad_lone_k": "\nlayers.3.k_proj\nlayers.3.q\n",
    "bad_two_rows": "\na/q\na/k\na/query\na/key\n",
    "bad_none": "\ncos\nsin\n",
    "bad_huge_index": "\nlayers.99999999999.q\nlayers.99999999999.k\n/3/7/q\n/3/7/k\n",
})


# ---- rows: a dump (NPY, or NPZ with member q), read in every layout and as positions --------
_g = np.random.default_rng(3)
out("rows", {
    "bhsd.npy": npy(_g.standard_normal((1, 2, 5, 4)).astype("<f4")),
    "shd_f16.npy": npy(_g.standard_normal((6, 2, 8)).astype("<f2")),
    "sd_f64.npy": npy(_g.standard_normal((7, 2))),
    "bf16_v2.npy": npy_header("<V2", "(3, 4)", bytes(24)),
    "qk.npz": npz(q=_g.standard_normal((1, 1, 3, 4)).astype("<f4"), k=np.zeros((1, 1, 3, 4), "<f4")),
    "pos_1d.npy": npy(np.arange(5, dtype="<i8")),
    "pos_mrope.npy": npy(np.arange(15, dtype="<i4").reshape(3, 5)),
    "pos_batch.npy": npy(np.arange(10, dtype="<i8").reshape(2, 5) + 7),
    "bad_int.npy": npy(np.arange(6, dtype="<i4").reshape(3, 2)),
    "bad_empty.npy": npy(np.zeros((0, 4), "<f4")),
    "bad_truncated.npy": npy(np.ones((2, 3, 4), "<f4"))[:-5],
    "bad_negative.npy": npy(np.array([3, -1, 2], "<i8")),
})
