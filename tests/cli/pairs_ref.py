"""Fixtures and references for tests/cli/t_pairs.sh: multi-layer dumps (run with /usr/bin/python3).

  pairs_ref.py make DIR      write the configs and dumps below into DIR
  pairs_ref.py check MODEL IN OUT [GROUPS]
      every q/k pair of IN (an .h5, .safetensors or .npz) against OUT: the same member names,
      each pair rotated with its layer's RoPE parameters (float64 closed form, a few float32
      ulps), a layer without RoPE bit for bit unchanged. GROUPS (comma list of layer indices):
      only those pairs are expected in OUT.
  pairs_ref.py close A B TOL   the same members in A and B, every one within TOL (max abs)
  pairs_ref.py big FILE LAYERS SEQ   a large multi-layer HDF5 (f32 [1, 8, SEQ, 128] q and k)

Nothing here reads posenc's code: the per-layer parameters are written out below from the
configs and transformers' formulas (src/transformers/modeling_rope_utils.py
_compute_default_rope_parameters and _compute_linear_scaling_rope_parameters; Gemma 3 takes
rope_local_base_freq for its sliding layers, models/gemma3/modeling_gemma3.py; SmolLM3 skips
RoPE where no_rope_layers is 0, models/smollm3/modeling_smollm3.py SmolLM3Attention).
"""
import json
import os
import re
import struct
import sys

import h5py
import numpy as np

HD = 16
LAYERS = 4
B, HQ, HK, S = 1, 2, 1, 12

# A Gemma-3-style config: sliding layers (theta 1e4) and full layers (theta 1e6, linear x8)
GEMMA = {
    "model_type": "gemma3_text", "head_dim": HD, "hidden_size": 64, "num_attention_heads": HQ,
    "num_key_value_heads": HK, "num_hidden_layers": LAYERS, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 8.0},
    "max_position_embeddings": 4096,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention",
                    "full_attention"],
}
# SmolLM3: layer 3 has no RoPE
SMOL = {
    "model_type": "smollm3", "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 2, "num_hidden_layers": LAYERS, "no_rope_layers": [1, 1, 1, 0],
    "rope_theta": 2000000.0, "max_position_embeddings": 4096,
}


def layer_params(model, layer):
    """(theta, linear factor) of a layer, or None for a layer without RoPE"""
    if model == "gemma":
        if GEMMA["layer_types"][layer] == "sliding_attention":
            return 10000.0, 1.0
        return 1000000.0, 8.0
    if model == "smol":
        return None if SMOL["no_rope_layers"][layer] == 0 else (2000000.0, 1.0)
    raise SystemExit("model?")


def inv_freq(theta, factor, d=HD):
    return 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d)) / factor


def rotate64(x, theta, factor, pos):
    """float64 closed form, neox pairing; x [B, H, S, D] float64"""
    ang = pos[:, None] * inv_freq(theta, factor)[None]
    c, s = np.cos(ang), np.sin(ang)
    n = HD // 2
    y = x.copy()
    a, b = x[..., :n], x[..., n:]
    y[..., :n], y[..., n:] = a * c - b * s, b * c + a * s
    return y


def rotate_hf(x, theta, factor, pos):
    """transformers' float32 path: inv_freq in float32, the outer product, cos and sin, then
    q * cos + rotate_half(q) * sin (models/llama/modeling_llama.py apply_rotary_pos_emb)"""
    import torch  # here only: the other modes need numpy and h5py, and torch takes a second
    inv = 1.0 / (theta ** (torch.arange(0, HD, 2, dtype=torch.int64).float() / HD)) / factor
    p = torch.tensor(pos, dtype=torch.float32)
    freqs = p[:, None] * inv[None]
    emb = torch.cat((freqs, freqs), -1)
    c, s = emb.cos(), emb.sin()
    t = torch.from_numpy(x)
    x1, x2 = t[..., : HD // 2], t[..., HD // 2:]
    return (t * c + torch.cat((-x2, x1), -1) * s).numpy()


def st_write(path, tensors):
    header, blobs, off = {}, [], 0
    for k, a in tensors.items():
        a = np.ascontiguousarray(a, dtype=np.float32)
        header[k] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def st_read(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    dt = {"F32": np.float32, "F64": np.float64, "F16": np.float16}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[k] = np.frombuffer(data[a:b], dtype=dt[v["dtype"]]).reshape(v["shape"])
    return out


def read_all(path):
    if path.endswith(".h5"):
        out = {}
        with h5py.File(path, "r") as f:
            f.visititems(lambda n, o: out.__setitem__("/" + n, o[()]) if isinstance(o, h5py.Dataset) else None)
        return out
    if path.endswith(".safetensors"):
        return st_read(path)
    if path.endswith(".npz"):
        with np.load(path) as z:
            return {k: z[k] for k in z.files if k != "meta.json"}
    raise SystemExit(f"{path}: format?")


def write_all(path, arrays):
    if path.endswith(".h5"):
        with h5py.File(path, "w") as f:
            for k, a in arrays.items():
                f.create_dataset(k, data=a)
    elif path.endswith(".safetensors"):
        st_write(path, arrays)
    else:
        np.savez(path, **arrays)


def dumps(seed):
    g = np.random.default_rng(seed)
    out = {}
    for i in range(LAYERS):
        out[i] = (g.standard_normal((B, HQ, S, HD)).astype(np.float32),
                  g.standard_normal((B, HK, S, HD)).astype(np.float32))
    return out


def make(d):
    os.makedirs(d, exist_ok=True)
    json.dump(GEMMA, open(f"{d}/gemma.json", "w"))
    json.dump(SMOL, open(f"{d}/smol.json", "w"))
    pos = np.arange(S, dtype=np.float64)
    L = dumps(1)
    h5 = {}
    for i, (q, k) in L.items():
        h5[f"/layer{i}/q"], h5[f"/layer{i}/k"] = q, k
    h5["/layer0/v"] = L[0][1]
    write_all(f"{d}/layers.h5", h5)
    st = {f"layers.{i}.{r}": a for i, (q, k) in L.items() for r, a in (("q", q), ("k", k))}
    write_all(f"{d}/layers.safetensors", st)
    np.savez(f"{d}/layers.npz", **st)
    # a group that names no layer
    write_all(f"{d}/noidx.h5", {"/attn/q": L[0][0], "/attn/k": L[0][1]})
    # an unpaired q: layer 1 lost its k
    write_all(f"{d}/lone.h5", {"/layer0/q": L[0][0], "/layer0/k": L[0][1], "/layer1/q": L[1][0]})
    # what a runtime following transformers writes, per model, and one with a mistake
    for model, ext in (("gemma", "h5"), ("smol", "safetensors")):
        good, bad = {}, {}
        for i, (q, k) in L.items():
            p = layer_params(model, i)
            names = (f"/layer{i}/q", f"/layer{i}/k") if ext == "h5" else (f"layers.{i}.q", f"layers.{i}.k")
            for name, x in zip(names, (q, k)):
                good[name] = x if p is None else rotate_hf(x, p[0], p[1], pos)
                if model == "gemma" and i == 3 and name.endswith("k"):
                    bad[name] = rotate_hf(x, 10000.0, 1.0, pos)  # sliding parameters on a full layer
                elif p is None:
                    bad[name] = rotate_hf(x, 2000000.0, 1.0, pos)  # a NoPE layer rotated anyway
                else:
                    bad[name] = good[name]
        write_all(f"{d}/{model}_rot.{ext}", good)
        write_all(f"{d}/{model}_bad.{ext}", bad)


def check(model, inp, outp, groups=None):
    a, b = read_all(inp), read_all(outp)
    pos = np.arange(S, dtype=np.float64)
    keep = None if groups is None else {int(g) for g in groups.split(",")}
    want = {}
    for name, x in a.items():
        role = name.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
        if role not in ("q", "k"):
            continue
        layer = int(re.search(r"(\d+)", name).group(1))
        if keep is None or layer in keep:
            want[name.lstrip("/")] = (x, layer)
    b = {k.lstrip("/"): v for k, v in b.items()}  # HDF5 paths and flat names alike
    got = set(b)
    if got != set(want):
        sys.exit(f"members {sorted(got)} != {sorted(want)}")
    worst = 0.0
    for name, (x, layer) in want.items():
        y = b[name]
        if y.shape != x.shape or y.dtype != x.dtype:
            sys.exit(f"{name}: {y.dtype}{y.shape} != {x.dtype}{x.shape}")
        p = layer_params(model, layer)
        if p is None:
            if not np.array_equal(x.view(np.uint32), y.view(np.uint32)):
                sys.exit(f"{name}: layer {layer} has no RoPE but changed")
            continue
        ref = rotate64(x.astype(np.float64), p[0], p[1], pos)
        mag = np.abs(x.astype(np.float64)).max(-1, keepdims=True)
        tol = 8 * 2.0 ** -23 * 2 * mag
        err = np.abs(y.astype(np.float64) - ref)
        worst = max(worst, float((err / tol).max()))
        if (err > tol).any():
            sys.exit(f"{name}: layer {layer} max err {err.max():.3g} over {tol.max():.3g}")
        # and it is not the other layer type's rotation
        for q in {layer_params(model, j) for j in range(LAYERS)} - {p, None}:
            if np.abs(y.astype(np.float64) - rotate64(x.astype(np.float64), q[0], q[1], pos)).max() < 1e-3:
                sys.exit(f"{name}: layer {layer} rotated with the parameters {q} of another layer")
    print(f"{len(want)} members ok, worst err/tol {worst:.3g}")


def big(path, layers, seq):
    g = np.random.default_rng(7)
    blk = g.standard_normal((1, 8, seq, 128)).astype(np.float32)
    with h5py.File(path, "w") as f:
        for i in range(layers):
            f.create_dataset(f"/layer{i}/q", data=blk)
            f.create_dataset(f"/layer{i}/k", data=blk)


def main():
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2])
    elif cmd == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    elif cmd == "close":
        a, b, tol = read_all(sys.argv[2]), read_all(sys.argv[3]), float(sys.argv[4])
        if set(a) != set(b):
            sys.exit(f"members {sorted(a)} != {sorted(b)}")
        e = max(float(np.abs(a[k].astype(np.float64) - b[k]).max()) for k in a)
        print(f"max diff {e:.3g}")
        if e > tol:
            sys.exit(f"differ by {e} > {tol}")
    elif cmd == "big":
        big(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("usage: pairs_ref.py make|check|big ...")


if __name__ == "__main__":
    main()
