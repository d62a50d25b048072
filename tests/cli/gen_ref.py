"""tests/cli/gen_ref.py: independent references for the posenc gen CLI tests (t_gen*.sh).

Nothing here calls posenc: exact values come from closed forms in numpy long double (x87, 64-bit
mantissa) or mpmath, the hf values from a numpy float32 emulation of transformers' pipeline with
correctly rounded pow/cos/sin, and files are decoded by hand (NPY, NPZ, directories, safetensors,
HDF5 via h5py, raw .bin), so a bug in posenc's readers cannot hide one in its writers.

Used as `import gen_ref as R` from `$PY - <<EOF` blocks with sys.path set to tests/cli.
"""
import ast
import json
import os
import struct
import zipfile

import numpy as np

LD = np.longdouble
PREC_BITS = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}
EMIN = {"f16": -14, "bf16": -126, "f32": -126, "f64": -1022}
ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}


# ---------------------------------------------------------------- reading files by hand

def parse_npy(buf):
    """(descr, shape, data bytes) of an NPY byte string."""
    assert buf[:6] == b"\x93NUMPY", "not an NPY file"
    major = buf[6]
    if major == 1:
        hl, off = struct.unpack("<H", buf[8:10])[0], 10
    else:
        hl, off = struct.unpack("<I", buf[8:12])[0], 12
    assert (off + hl) % 16 == 0, "NPY header not aligned"
    hdr = ast.literal_eval(buf[off:off + hl].decode("latin1"))
    assert set(hdr) == {"descr", "fortran_order", "shape"}, hdr
    assert hdr["fortran_order"] is False
    return hdr["descr"], tuple(hdr["shape"]), buf[off + hl:]


def decode(raw, dt, shape):
    """Little-endian bytes of dtype name dt ('f32', 'bf16', ...) as a float64 array."""
    n = int(np.prod(shape)) if len(shape) else 1
    assert len(raw) == n * ITEMSIZE[dt], (len(raw), n, dt)
    if dt == "bf16":
        u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return u.view(np.float32).astype(np.float64).reshape(shape)
    np_dt = {"f16": "<f2", "f32": "<f4", "f64": "<f8"}[dt]
    return np.frombuffer(raw, dtype=np_dt).astype(np.float64).reshape(shape)


NPY_DESCR = {"f16": {"<f2"}, "f32": {"<f4"}, "f64": {"<f8"},
             "bf16": {"<V2", "|V2", "bfloat16", "<u2", "<bf16"}}


def npy_array(buf, dt):
    descr, shape, data = parse_npy(buf)
    assert descr in NPY_DESCR[dt], (descr, dt)
    return decode(data, dt, shape)


def _json_or_text(v):
    """A metadata string: the JSON value it holds, or the string itself."""
    try:
        return json.loads(v)
    except ValueError:
        return v


def load(path, dt="f32", fmt=None):
    """{name: float64 array} and the metadata dict (or None) of a posenc output file."""
    if fmt is None:
        fmt = ("dir" if os.path.isdir(path) else os.path.splitext(path)[1].lstrip(".") or "npy")
    arrays, meta = {}, None
    if fmt == "npz":
        with zipfile.ZipFile(path) as z:
            assert z.testzip() is None, "bad CRC in NPZ"
            for name in z.namelist():
                data = z.read(name)
                if name.endswith(".npy"):
                    arrays[name[:-4]] = npy_array(data, dt)
                elif name == "meta.json":
                    meta = json.loads(data)
                else:
                    raise AssertionError("unexpected NPZ member " + name)
    elif fmt == "dir":
        for name in sorted(os.listdir(path)):
            full = os.path.join(path, name)
            if name.endswith(".npy"):
                arrays[name[:-4]] = npy_array(open(full, "rb").read(), dt)
            elif name == "meta.json":
                meta = json.load(open(full))
            else:
                raise AssertionError("unexpected file in directory: " + name)
    elif fmt == "npy":
        arrays[""] = npy_array(open(path, "rb").read(), dt)
    elif fmt == "safetensors":
        buf = open(path, "rb").read()
        n = struct.unpack("<Q", buf[:8])[0]
        hdr = json.loads(buf[8:8 + n])
        base = 8 + n
        st = {"f16": "F16", "bf16": "BF16", "f32": "F32", "f64": "F64"}[dt]
        covered = 0
        for name, e in hdr.items():
            if name == "__metadata__":
                # strings are plain text, other values JSON text (posenc-formats(5))
                meta = {k: _json_or_text(v) for k, v in e.items()}
                continue
            assert e["dtype"] == st, (name, e["dtype"])
            b, en = e["data_offsets"]
            covered += en - b
            arrays[name] = decode(buf[base + b:base + en], dt, tuple(e["shape"]))
        assert covered == len(buf) - base, "safetensors buffer not fully covered"
    elif fmt in ("h5", "hdf5"):
        import h5py
        with h5py.File(path, "r") as f:
            for name, ds in f.items():
                v = ds[()]
                if dt == "bf16":
                    # stored as a 2-byte custom float; h5py widens it to float32 exactly
                    assert ds.id.get_type().get_size() == 2, name
                    v = v.astype(np.float64)
                    assert (round_to(v, "bf16") == v).all(), "not bfloat16 values"
                    arrays[name] = v
                else:
                    assert v.dtype.itemsize == ITEMSIZE[dt] and v.dtype.kind == "f", v.dtype
                    arrays[name] = v.astype(np.float64)
            attrs = dict(f.attrs)
            if attrs:
                meta = {}
                for k, v in attrs.items():
                    # typed attributes (posenc-formats(5)): numbers, strings, bools, 1-D
                    # arrays, h5py.Empty for null; other values as JSON text
                    if isinstance(v, h5py.Empty):
                        meta[k] = None
                    elif isinstance(v, (bytes, str)):
                        meta[k] = _json_or_text(v.decode() if isinstance(v, bytes) else v)
                    elif isinstance(v, np.ndarray):
                        meta[k] = [x.decode() if isinstance(x, bytes) else x for x in v.tolist()]
                    else:
                        meta[k] = v.item() if hasattr(v, "item") else v
    else:
        raise AssertionError("unknown format " + fmt)
    return arrays, meta


# ---------------------------------------------------------------- rounding and ulps

def round_to(x, dt):
    """Round exact values x (long double) once to dt; returned as float64 (exact)."""
    x = np.asarray(x, dtype=LD)
    if dt == "f64":
        return x.astype(np.float64)
    p, emin = PREC_BITS[dt], EMIN[dt]
    _, e = np.frexp(x)
    q = np.maximum(e - p, emin - p + 1)
    return np.ldexp(np.rint(np.ldexp(x, -q)), q).astype(np.float64)


def ulp(x, dt):
    """Spacing of dt at |x| (the quantum of the binade x lies in)."""
    x = np.asarray(x, dtype=LD)
    p, emin = PREC_BITS[dt], EMIN[dt]
    _, e = np.frexp(np.abs(x))
    e = np.where(x == 0, emin + 1, e)
    q = np.maximum(e - p, emin - p + 1)
    return np.ldexp(np.ones_like(x), q).astype(np.float64)


def check_rounded(name, got, exact, dt, ref_err=None, min_exact=0.999):
    """got must be the correctly rounded exact value in at least min_exact of the entries and
    within 1 ulp (+ the reference's own error bound ref_err) everywhere."""
    got = np.asarray(got, dtype=np.float64)
    exact = np.asarray(exact, dtype=LD)
    assert got.shape == exact.shape, (name, got.shape, exact.shape)
    want = round_to(exact, dt)
    same = got == want
    diff = np.abs(got.astype(LD) - exact).astype(np.float64)
    lim = ulp(exact, dt) + (0 if ref_err is None else ref_err)
    bad = diff > lim
    if bad.any():
        i = np.argwhere(bad)[0]
        raise AssertionError(f"{name}: {bad.sum()} values off by more than 1 ulp ({dt}); first at "
                             f"{tuple(i)}: got {got[tuple(i)]!r}, exact {float(exact[tuple(i)])!r}")
    frac = same.mean() if same.size else 1.0
    assert frac >= min_exact, f"{name}: only {frac:.5f} correctly rounded ({dt})"
    return frac


# ---------------------------------------------------------------- RoPE references

def inv_default(theta, d, expo_dim=None):
    """Exact theta^(-2i/D) for i < ceil(d/2), D = expo_dim or d."""
    D = LD(expo_dim or d)
    i = np.arange(0, d, 2).astype(LD)
    return LD(1) / np.power(LD(theta), i / D)


def inv_llama3(inv, factor, low, high, m0):
    inv = np.asarray(inv, dtype=LD)
    pi_ld = LD("3.14159265358979323846264338327950288")
    wl = 2 * pi_ld / inv
    lo_wl, hi_wl = LD(m0) / LD(low), LD(m0) / LD(high)
    out = np.where(wl > lo_wl, inv / LD(factor), inv)
    if high != low:
        s = (LD(m0) / wl - LD(low)) / (LD(high) - LD(low))
        sm = (1 - s) * out / LD(factor) + s * out
        med = ~(wl < hi_wl) & ~(wl > lo_wl)
        out = np.where(med, sm, out)
    return out


def theta_dynamic(theta, factor, seq_len, m, d):
    if seq_len <= m:
        return LD(theta)
    s = LD(factor) * LD(seq_len) / LD(m) - (LD(factor) - 1)
    return LD(theta) * np.power(s, LD(d) / LD(d - 2))


def yarn(theta, d, factor, m0, beta_fast=32.0, beta_slow=1.0, truncate=True,
         mscale=None, mscale_all_dim=None, attention_factor=None):
    """(exact inv_freq, attention factor) of transformers' yarn, in long double."""
    import math
    pos = np.power(LD(theta), np.arange(0, d, 2).astype(LD) / LD(d))
    extrap = 1 / pos
    interp = 1 / (LD(factor) * pos)

    def cd(r):
        return (d * math.log(m0 / (r * 2 * math.pi))) / (2 * math.log(theta))
    low, high = cd(beta_fast), cd(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    j = np.arange(d // 2).astype(LD)
    ramp = np.clip((j - LD(low)) / (LD(high) - LD(low)), 0, 1)
    w = 1 - ramp
    inv = interp * (1 - w) + extrap * w

    def g(s, m=1.0):
        return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = g(factor, mscale) / g(factor, mscale_all_dim)
        else:
            attention_factor = g(factor)
    return inv, attention_factor


def cossin_exact(inv, positions, layout="hf", scale=1.0):
    """Exact cos and sin tables (long double) for positions in a layout, and a bound on the
    reference's own error (long double angle rounding) per entry."""
    p = np.asarray(positions, dtype=np.int64).astype(LD)
    ang = p[:, None] * np.asarray(inv, dtype=LD)[None, :]
    c, s = np.cos(ang) * LD(scale), np.sin(ang) * LD(scale)
    err = (np.abs(ang) * LD(2.0 ** -60) + LD(2.0 ** -62)).astype(np.float64) * max(1.0, scale)
    return expand(c, layout), expand(s, layout), expand(err, layout)


def expand(t, layout):
    if layout == "hf":
        return np.concatenate([t, t], axis=1)
    if layout == "half":
        return t
    if layout == "interleaved":
        return np.repeat(t, 2, axis=1)
    raise ValueError(layout)


# ---- transformers' float32 pipeline, correctly rounded at each step (what --precision hf is)

def f32(x):
    return np.asarray(x, dtype=LD).astype(np.float32)


def hf_inv_default(theta, d):
    """f32(1 / f32(powf(f32(theta), f32(f32(2i) / f32(d))))) with correctly rounded powf."""
    e = np.arange(0, d, 2).astype(np.float32) / np.float32(d)
    pw = f32(np.power(LD(np.float32(theta)), e.astype(LD)))
    return (np.float32(1) / pw).astype(np.float32)


def hf_cossin(inv32, positions, layout="hf", scale=1.0):
    """cos/sin of the f32 angle f32(inv * f32(p)), correctly rounded, times f32(scale) in f32."""
    p32 = np.asarray(positions, dtype=np.int64).astype(np.float32)
    ang = (p32[:, None] * np.asarray(inv32, dtype=np.float32)[None, :]).astype(np.float32)
    c = f32(np.cos(ang.astype(LD)))
    s = f32(np.sin(ang.astype(LD)))
    if scale != 1.0:
        c = (c * np.float32(scale)).astype(np.float32)
        s = (s * np.float32(scale)).astype(np.float32)
    return expand(c, layout), expand(s, layout)


def torch_tables(inv32, positions, scale=1.0):
    """transformers' LlamaRotaryEmbedding.forward on the CPU, torch float32 (hf layout)."""
    import torch
    inv = torch.tensor(np.asarray(inv32, dtype=np.float32))
    pos = torch.tensor(np.asarray(positions, dtype=np.int64))
    freqs = (inv[None, :, None].float() @ pos[None, None, :].float()).transpose(1, 2)[0]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * scale).numpy(), (emb.sin() * scale).numpy()


def torch_inv_default(theta, d):
    import torch
    return (1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))).numpy()


def write_config(path, **kw):
    with open(path, "w") as f:
        json.dump(kw, f)
