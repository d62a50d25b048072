#!/usr/bin/python3
"""Verdict corpus for `posenc verify`: Q/K dumps of correct and wrong runtimes, made from the
formulas of the upstream code in numpy/torch (never by running posenc, never from its C code).

usage: make_corpus.py OUTDIR

Writes OUTDIR/manifest.json (a list of cases) and the NPY dumps the cases name (identical arrays
are written once). Every dump is layout bhsd [1, heads, 64, head_dim]: q has 4 heads, k 2 (GQA).
The pre-RoPE content is standard normal from a seed per config. Each case gives its config (a
path under tests/data/configs, relative to the repository), the four dumps, the first position
(--offset; positions are contiguous), extra verify arguments, the verdict it must get ("pass" or
"fail") and a category:

  correct     a correct runtime; must PASS
  mistake     a usual mistake; must FAIL, and each check in "fail" must be named by its
              diagnosis.best being one of "names"; a check in "pass" must pass
  corruption  damaged output of a correct runtime; must FAIL (any diagnosis)
  probe       exact math in float64 dumps plus, on one element, F times that element's bound
              (bound() below): F = 0.75 must PASS, F = 1.5 must FAIL

Configs and their RoPE, as transformers defines them:
  qwen3-8b              plain RoPE, theta 1e6
  llama-3.1-8b          llama3 scaling: transformers src/transformers/modeling_rope_utils.py,
                        _compute_llama3_parameters
  gpt-oss-20b           YaRN, attention scaling 0.1 ln(factor) + 1, truncate: false (correction
                        range not rounded): modeling_rope_utils.py, _compute_yarn_parameters
  extra/phi-3-mini-128k LongRoPE: modeling_rope_utils.py, _compute_longrope_parameters; short
                        factors while the sequence length is at most
                        original_max_position_embeddings, long ones past it (the longrope branch
                        of dynamic_rope_update); attention scaling sqrt(1 + ln(s)/ln(orig))
  qwen3.5-27b           partial rotary, 64 of 256 dims, interleaved mrope: with text positions
                        (t = h = w) it is plain RoPE on the first 64 dims
  gpt-j-6b              GPT-J pairing (rotate_every_two in src/transformers/models/gptj/
                        modeling_gptj.py), rotary_dim 64 of 256, create_sinusoidal_positions
  extra/qwen2-vl-7b     mrope (apply_multimodal_rotary_pos_emb in src/transformers/models/
                        qwen2_vl/modeling_qwen2_vl.py); text positions: plain RoPE on 128 dims
Every config but GPT-J pairs dim j with j + rotary_dim/2 (rotate_half in each model's
apply_rotary_pos_emb); dims past rotary_dim pass through.

Correct runtimes (category "correct"):
  f64       inv_freq, angles, cos/sin and the rotation in float64, stored as float32
  hf32      transformers' float32 pipeline: inv_freq as the rope init function above computes it
            in torch float32, angle = inv_freq @ position_ids in float32 (the rotary embedding's
            forward, e.g. LlamaRotaryEmbedding.forward in models/llama/modeling_llama.py),
            cos/sin in float32 times attention_scaling, q*cos + rotate_half(q)*sin in float32
  cuda32    a CUDA-style float32 kernel: inv_freq correctly rounded to float32 from float64
            math, angle = f32(pos) * f32(inv_freq) in float32, cosf/sinf, rotation in float32
  ggml      llama.cpp's CPU rope (ggml/src/ggml-cpu/ops.cpp, ggml_rope_cache_init and
            rope_yarn): theta_scale = powf(freq_base, -2.0f/n_dims), theta = pos, theta *=
            theta_scale per pair in float32; llama3 through rope_freqs (theta / factor, the
            factors as convert_hf_to_gguf.py's LlamaModel.generate_extra_tensors computes them
            in torch float32); cosf/sinf; rotation in float32 without FMA. llama.cpp's pairing
            on the converter's permuted weights is the neox pairing in transformers' layout,
            which the dumps keep. Plain and llama3 configs only.
  hf_bf16, hf_f16
            transformers with the model in bf16/f16: tables computed in float32 as in hf32,
            cast to the dtype (cos.to(x.dtype)), q*cos + rotate_half(q)*sin with every op in
            the dtype (torch semantics); all four dumps in the dtype. (transformers' GPT-J
            keeps its sinusoid table in float32, so its rotation promotes to float32; for
            GPT-J these cases are the generic form above, as a bf16/f16 runtime computes it.)
  kern_bf16 a bf16 kernel with float32 math: bf16 in, cuda32's tables and rotation, bf16 out
  vllm_bf16 vLLM's RotaryEmbedding.forward_native (vllm-project/vllm vllm/model_executor/
            layers/rotary_embedding/base.py; apply_rotary_emb_torch in common.py):
            cos_sin_cache in float32 from inv_freq = 1/(base ** (arange(0, rotary_dim, 2,
            float32) / rotary_dim)) and t = arange(max_position, float32), cast to bf16, then
            x1*cos - x2*sin in bf16. Llama3RotaryEmbedding (llama3_rope.py) and
            YaRNScalingRotaryEmbedding (yarn_scaling_rope.py: correction range over
            original_max_position_embeddings, cos/sin times mscale in float32) for llama-3.1 and
            gpt-oss; the plain class for qwen3-8b and gpt-j-6b.

Mistakes (category "mistake"; the accepted diagnosis names in brackets). Each is transformers'
float32 pipeline (hf32) with one thing wrong unless said otherwise:
  theta          theta 1e4 instead of the config's (1e6 for GPT-J, whose theta is 1e4) [theta]
  scaling        rope_type default with the config's theta on a llama3/yarn/longrope config, no
                 attention scaling [scaling_ignored]
  theta_scaling  llama-3.1 as plain RoPE with theta 1e4 [theta+scaling_ignored]
  style          neox and GPT-J pairing swapped [style_swapped]
  offset1        q and k rotated at position + 1 [offset]
  kshift3        k rotated at position + 3, q right: q must pass its check [offset]
  none           not rotated: the dumps equal the pre-RoPE ones [not_rotated]
  fullhead       a partial-rotary config rotated over the whole head [rotary_dim_full]
  attn           YaRN/LongRoPE attention scaling missing [attention_scaling_missing]
  lrshort        LongRoPE short factors used past the original context [longrope_factors]
  angle_bf16, angle_f16
                 the classic low-precision bug: the inv_freq buffer and the positions cast to
                 the model dtype and freqs = outer(t, inv_freq) in that dtype, cos/sin of that
                 (rounded to the dtype), rotation in the dtype; dumps in the dtype
                 [angle_bf16, angle_f16]

Corruptions (category "corruption", from the f64 runtime's f32 dumps): NaN rows (every q head
at 10 positions), one Inf in k, one q element off by +1.0, one q element off by 1e-3 relative
(placed where its bound is far below that), a zeroed k head.

Probes: see bound(). bf16 dumps are NPY '|V2' (bfloat16 bits) and need --assume-bf16, which
the case's args carry (posenc-formats(5), BFLOAT16).
"""
import hashlib
import json
import math
import os
import sys

import numpy as np
import torch

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SEQ, HQ, HK = 64, 4, 2
U32 = 2.0 ** -24  # float32 unit roundoff


# --- configs, read as transformers reads them -------------------------------------------------

class Rope:
    """The RoPE of one config: dims, pairing, rope type and its parameters (float64)."""

    def __init__(self, rel):
        self.rel = "tests/data/configs/" + rel
        with open(os.path.join(REPO, self.rel)) as f:
            top = json.load(f)
        c = dict(top)
        c.update(top.get("text_config") or {})
        self.model_type = top["model_type"]
        rp = c.get("rope_parameters") or c.get("rope_scaling") or {}
        self.rp = rp
        self.theta = float(c.get("rope_theta", rp.get("rope_theta", 10000.0)))
        heads = c.get("num_attention_heads", c.get("n_head"))
        hidden = c.get("hidden_size", c.get("n_embd"))
        self.head_dim = int(c.get("head_dim") or hidden // heads)
        if self.model_type == "gptj":
            self.rotary_dim = int(c["rotary_dim"])
        else:
            partial = rp.get("partial_rotary_factor", c.get("partial_rotary_factor", 1.0))
            self.rotary_dim = int(self.head_dim * partial)
        self.pairing = "gptj" if self.model_type == "gptj" else "neox"
        self.max_pos = int(c.get("max_position_embeddings", c.get("n_positions", 2048)))
        t = rp.get("rope_type", rp.get("type", "default"))
        self.rope_type = {"su": "longrope", "mrope": "default"}.get(t, t)
        self.orig = c.get("original_max_position_embeddings",
                          rp.get("original_max_position_embeddings"))
        if self.rope_type == "yarn":
            self.orig = int(rp.get("original_max_position_embeddings") or self.max_pos)
        self.n = self.rotary_dim // 2

    def attention_scaling(self):
        """transformers' attention_factor (1 for default and llama3)."""
        if self.rope_type == "yarn":
            if self.rp.get("attention_factor") is not None:
                return float(self.rp["attention_factor"])
            factor = self.max_pos / self.orig if self.rp.get("original_max_position_embeddings") \
                else float(self.rp["factor"])
            return 0.1 * math.log(factor) + 1.0
        if self.rope_type == "longrope":
            factor = self.max_pos / self.orig
            return math.sqrt(1 + math.log(factor) / math.log(self.orig)) if factor > 1 else 1.0
        return 1.0

    def long_factors(self, seq_len):
        """LongRoPE: the long factors when the sequence is longer than the original context."""
        return seq_len > self.orig

    def yarn_range(self):
        """_compute_yarn_parameters' correction range (floor/ceil only when truncate)."""
        d, base = self.rotary_dim, self.theta

        def dim_of(rot):
            return d * math.log(self.orig / (rot * 2 * math.pi)) / (2 * math.log(base))
        lo, hi = dim_of(self.rp.get("beta_fast") or 32), dim_of(self.rp.get("beta_slow") or 1)
        if self.rp.get("truncate", True):
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, d - 1)
        if lo == hi:
            hi += 0.001
        return lo, hi


def inv_freq_exact(r, seq_len, theta=None, rope_type=None, dim=None):
    """Exact (float64) inverse frequencies after scaling, one per rotated pair."""
    theta = r.theta if theta is None else theta
    rope_type = r.rope_type if rope_type is None else rope_type
    d = r.rotary_dim if dim is None else dim
    i = np.arange(d // 2, dtype=np.float64)
    w = theta ** (-2.0 * i / d)
    if rope_type == "llama3":
        p = r.rp
        factor, lf, hf = float(p["factor"]), float(p["low_freq_factor"]), float(p["high_freq_factor"])
        old = float(p["original_max_position_embeddings"])
        wavelen = 2 * math.pi / w
        smooth = (old / wavelen - lf) / (hf - lf)
        mid = (1 - smooth) * w / factor + smooth * w
        w = np.where(wavelen < old / hf, w, np.where(wavelen > old / lf, w / factor, mid))
    elif rope_type == "yarn":
        factor = float(r.rp["factor"])
        lo, hi = r.yarn_range()
        ramp = np.clip((i - lo) / (hi - lo), 0, 1)
        extra = 1 - ramp
        w = (w / factor) * (1 - extra) + w * extra
    elif rope_type == "longrope":
        f = np.array(r.rp["long_factor" if r.long_factors(seq_len) else "short_factor"], np.float64)
        w = w / f
    return w


def inv_freq_hf(r, seq_len, theta=None, rope_type=None, dim=None, factors=None):
    """inv_freq as transformers' rope init functions compute it, in torch float32."""
    theta = r.theta if theta is None else theta
    rope_type = r.rope_type if rope_type is None else rope_type
    d = r.rotary_dim if dim is None else dim
    if r.model_type == "gptj" and rope_type == "default":
        # models/gptj/modeling_gptj.py, create_sinusoidal_positions
        return 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64) / d))
    # _compute_default_rope_parameters
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    if rope_type == "llama3":  # _compute_llama3_parameters
        p = r.rp
        factor, lf, hf = p["factor"], p["low_freq_factor"], p["high_freq_factor"]
        old = p["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        llama = torch.where(wavelen > old / lf, inv / factor, inv)
        smooth = (old / wavelen - lf) / (hf - lf)
        smoothed = (1 - smooth) * llama / factor + smooth * llama
        medium = ~(wavelen < old / hf) * ~(wavelen > old / lf)
        inv = torch.where(medium, smoothed, llama)
    elif rope_type == "yarn":  # _compute_yarn_parameters
        factor = r.rp["factor"]
        pos_freqs = theta ** (torch.arange(0, d, 2).float() / d)
        extrapolation = 1.0 / pos_freqs
        interpolation = 1.0 / (factor * pos_freqs)
        lo, hi = r.yarn_range()
        ramp = torch.clamp((torch.arange(d // 2, dtype=torch.float32) - lo) / (hi - lo), 0, 1)
        extra = 1 - ramp.float()
        inv = interpolation * (1 - extra) + extrapolation * extra
    elif rope_type == "longrope":  # _compute_longrope_parameters
        if factors is None:
            factors = r.rp["long_factor" if r.long_factors(seq_len) else "short_factor"]
        ext = torch.tensor(factors, dtype=torch.float32)
        shape = torch.arange(0, d, 2, dtype=torch.int64).float() / d
        inv = 1.0 / (ext * theta ** shape)
    return inv.float()


# --- cos/sin tables, [SEQ, pairs] -------------------------------------------------------------

def tables_f64(w, pos, s):
    phi = np.asarray(pos, np.float64)[:, None] * w[None, :]
    return s * np.cos(phi), s * np.sin(phi)


def tables_hf32(inv, pos, s):
    """transformers' forward: freqs = inv_freq @ position_ids in float32, cos() * scaling."""
    freqs = inv[:, None].float() @ torch.tensor(pos, dtype=torch.float32)[None, :]
    freqs = freqs.t()
    return freqs.cos() * s, freqs.sin() * s


def f32_cos_sin(a32):
    """cosf/sinf of float32 arguments, correctly rounded (from float64)."""
    a = a32.astype(np.float64)
    return np.cos(a).astype(np.float32), np.sin(a).astype(np.float32)


def tables_cuda32(w, pos, s):
    inv = w.astype(np.float32)
    ang = np.asarray(pos, np.float64).astype(np.float32)[:, None] * inv[None, :]
    c, sn = f32_cos_sin(ang)
    if s != 1.0:
        c, sn = c * np.float32(s), sn * np.float32(s)
    return c, sn


def ggml_rope_freqs(r):
    """convert_hf_to_gguf.py, LlamaModel.generate_extra_tensors: llama3 factors in float32."""
    p = r.rp
    d = r.rotary_dim
    freqs = 1.0 / (r.theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    factor, lf, hf = p.get("factor", 8.0), p.get("low_freq_factor", 1.0), p.get("high_freq_factor", 4.0)
    old = p.get("original_max_position_embeddings", 8192)
    out = []
    for f in freqs:
        wavelen = 2 * math.pi / f
        if wavelen < old / hf:
            out.append(1)
        elif wavelen > old / lf:
            out.append(factor)
        else:
            smooth = (old / wavelen - lf) / (hf - lf)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array([float(x) for x in out], dtype=np.float32)


def tables_ggml(r, pos):
    """ggml-cpu rope: theta *= theta_scale per pair in float32, theta / freq_factor."""
    n = r.rotary_dim
    base = np.float32(r.theta)
    ts = np.float32(np.float64(base) ** np.float64(np.float32(-2.0) / np.float32(n)))
    ff = ggml_rope_freqs(r) if r.rope_type == "llama3" else np.ones(n // 2, np.float32)
    theta = np.asarray(pos, np.float64).astype(np.float32)
    ang = np.empty((len(pos), n // 2), np.float32)
    for i in range(n // 2):
        ang[:, i] = theta / ff[i]
        theta = theta * ts
    return f32_cos_sin(ang)


def tables_vllm(r, pos, dtype):
    """vLLM's cos_sin_cache rows at pos, cast to the model dtype."""
    d = r.rotary_dim
    if r.rope_type == "yarn":  # YaRNScalingRotaryEmbedding._compute_inv_freq
        factor = r.rp["factor"]
        pos_freqs = r.theta ** (torch.arange(0, d, 2, dtype=torch.float) / d)
        lo, hi = r.yarn_range()
        mask = 1 - torch.clamp((torch.arange(d // 2, dtype=torch.float) - lo) / (hi - lo), 0, 1)
        inv = (1.0 / (factor * pos_freqs)) * (1 - mask) + (1.0 / pos_freqs) * mask
        mscale = float(r.attention_scaling())
    else:  # RotaryEmbedding._compute_inv_freq
        inv = 1.0 / (r.theta ** (torch.arange(0, d, 2, dtype=torch.float) / d))
        mscale = 1.0
        if r.rope_type == "llama3":  # Llama3RotaryEmbedding._compute_inv_freq
            p = r.rp
            lf, hf, old, factor = p["low_freq_factor"], p["high_freq_factor"], \
                p["original_max_position_embeddings"], p["factor"]
            wave_len = 2 * math.pi / inv
            smooth = (old / wave_len - lf) / (hf - lf)
            inv = torch.where(wave_len < old / hf, inv,
                              torch.where(wave_len > old / lf, inv / factor,
                                          (1 - smooth) * inv / factor + smooth * inv))
    t = torch.tensor(pos, dtype=torch.float32)
    freqs = torch.einsum("i,j -> ij", t, inv)
    c, s = freqs.cos(), freqs.sin()
    if mscale != 1.0:
        c, s = c * mscale, s * mscale
    return c.to(dtype), s.to(dtype)


# --- rotation ---------------------------------------------------------------------------------

def rotate(x, c, s, pairing, d):
    """q*cos + rotate_half(q)*sin (neox) or q*cos + rotate_every_two(q)*sin (gptj) on the first
    d dims, each op in x's dtype (torch semantics); the rest passes through."""
    c, s = torch.as_tensor(c).to(x.dtype), torch.as_tensor(s).to(x.dtype)
    xr, xp = x[..., :d], x[..., d:]
    if pairing == "neox":
        cos, sin = torch.cat((c, c), -1), torch.cat((s, s), -1)
        x1, x2 = xr[..., : d // 2], xr[..., d // 2:]
        rot = torch.cat((-x2, x1), -1)
    else:
        cos, sin = c.repeat_interleave(2, -1), s.repeat_interleave(2, -1)
        rot = torch.stack((-xr[..., 1::2], xr[..., ::2]), -1).flatten(-2)
    return torch.cat((xr * cos + rot * sin, xp), -1)


# --- the bound --------------------------------------------------------------------------------

def bound(x_self, x_other, phi, s, w, sign):
    """Allowed error of one element of a rotated pair in a float64 dump. This mirrors the
    VERDICT section of posenc-verify(1): with u the float32 unit roundoff, c = s cos phi,
    sn = s sin phi, the element y = x_self c + sign x_other sn (sign -1 for the pair's first
    element a, +1 for b) and its partner y' = x_other c - sign x_self sn,
        B = u|y| + 2u(|x_self c| + |x_other sn|) + 2u s(|x_self| + |x_other|) + e|y'| + e^2 |y|,
    e = u (8 + |ln w|) |phi|, w the exact inverse frequency of the pair after scaling."""
    c, sn = s * math.cos(phi), s * math.sin(phi)
    y = x_self * c + sign * x_other * sn
    y2 = x_other * c - sign * x_self * sn
    e = U32 * (8 + abs(math.log(w))) * abs(phi)
    return (U32 * abs(y) + 2 * U32 * (abs(x_self * c) + abs(x_other * sn))
            + 2 * U32 * s * (abs(x_self) + abs(x_other)) + e * abs(y2) + e * e * abs(y))


def pair_of(r, j):
    """(pair index, partner dim, sign) of rotated dim j."""
    if r.pairing == "neox":
        h = r.rotary_dim // 2
        return (j, j + h, -1) if j < h else (j - h, j - h, +1)
    return (j // 2, j + 1, -1) if j % 2 == 0 else (j // 2, j - 1, +1)


def bound_at(r, x, pos, j, w, s):
    """bound() for dim j of the row x (float64) at position pos."""
    i, o, sign = pair_of(r, j)
    return bound(float(x[j]), float(x[o]), pos * float(w[i]), s, float(w[i]), sign)


# --- output -----------------------------------------------------------------------------------

class Writer:
    def __init__(self, out):
        self.out = out
        self.seen = {}
        self.cases = []
        os.makedirs(os.path.join(out, "d"), exist_ok=True)

    def save(self, t):
        """Write a tensor (torch or numpy) once; returns its path relative to OUTDIR."""
        if isinstance(t, torch.Tensor):
            if t.dtype == torch.bfloat16:
                a = t.contiguous().view(torch.int16).numpy().view(np.uint16).view("V2")
            else:
                a = t.contiguous().numpy()
        else:
            a = t
        a = np.ascontiguousarray(a)
        key = hashlib.sha1(a.dtype.str.encode() + str(a.shape).encode() + a.tobytes()).hexdigest()[:16]
        if key not in self.seen:
            rel = "d/%s.npy" % key
            np.save(os.path.join(self.out, rel), a)
            self.seen[key] = rel
        return self.seen[key]


DT = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16, "f16": torch.float16}


class Corpus:
    def __init__(self, w):
        self.w = w
        self.pre = {}

    def inputs(self, r, dt):
        """Pre-RoPE q, k (float64 standard normal from a seed per config) in dtype dt."""
        key = (r.rel, dt)
        if key not in self.pre:
            seed = int(hashlib.sha1(r.rel.encode()).hexdigest()[:8], 16)
            rng = np.random.default_rng(seed)
            q = torch.from_numpy(rng.standard_normal((1, HQ, SEQ, r.head_dim)))
            k = torch.from_numpy(rng.standard_normal((1, HK, SEQ, r.head_dim)))
            self.pre[key] = (q.to(DT[dt]), k.to(DT[dt]))
        return self.pre[key]

    def add(self, cid, r, dt, off, eq, ek, expect, category, runtime, seq_len=None, **extra):
        q, k = self.inputs(r, dt)
        case = {"id": cid, "config": r.rel, "q": self.w.save(q), "k": self.w.save(k),
                "expect_q": self.w.save(eq), "expect_k": self.w.save(ek), "offset": off,
                "positions": "%d-%d" % (off, off + SEQ - 1), "dtype": dt, "runtime": runtime,
                "expect": expect, "category": category, "args": []}
        if dt == "bf16":
            case["args"].append("--assume-bf16")
        if seq_len is not None:
            case["args"] += ["--seq-len", str(seq_len)]
        case.update(extra)
        self.w.cases.append(case)


def positions(off):
    return list(range(off, off + SEQ))


def run_runtime(r, name, x, pos, seq_len):
    """The rotated dump of x (torch, in the runtime's dtype) by correct runtime `name`."""
    s = r.attention_scaling()
    d, pr = r.rotary_dim, r.pairing
    if name == "f64":
        c, sn = tables_f64(inv_freq_exact(r, seq_len), pos, s)
        return rotate(x.double(), c, sn, pr, d).float()
    if name in ("hf32", "hf_bf16", "hf_f16"):
        c, sn = tables_hf32(inv_freq_hf(r, seq_len), pos, s)
        return rotate(x, c, sn, pr, d)
    if name in ("cuda32", "kern_bf16"):
        c, sn = tables_cuda32(inv_freq_exact(r, seq_len), pos, s)
        y = rotate(x.float(), torch.from_numpy(c), torch.from_numpy(sn), pr, d)
        return y.to(x.dtype)
    if name == "ggml":
        c, sn = tables_ggml(r, pos)
        return rotate(x, torch.from_numpy(c), torch.from_numpy(sn), pr, d)
    if name == "vllm_bf16":
        c, sn = tables_vllm(r, pos, torch.bfloat16)
        return rotate(x, c, sn, pr, d)
    raise ValueError(name)


RUNTIME_DTYPE = {"f64": "f32", "hf32": "f32", "cuda32": "f32", "ggml": "f32", "hf_bf16": "bf16",
                 "hf_f16": "f16", "kern_bf16": "bf16", "vllm_bf16": "bf16"}


def hf_rotate(r, x, pos, seq_len, **kw):
    """hf32 with parameters changed (the mistakes): kw for inv_freq_hf, and s, pairing, d."""
    s = kw.pop("s", r.attention_scaling())
    pr = kw.pop("pairing", r.pairing)
    d = kw.pop("d", r.rotary_dim)
    c, sn = tables_hf32(inv_freq_hf(r, seq_len, dim=d, **kw), pos, s)
    return rotate(x, c, sn, pr, d)


def angle_lowp(r, x, pos, seq_len, dt):
    """The classic bug: inv_freq and positions in the model dtype, freqs = outer() in it, cos
    and sin of that rounded to the dtype (torch on CPU has no f16 cos: computed in float32 and
    rounded, as a GPU kernel does), times the attention scaling and the rotation in the dtype."""
    t = DT[dt]
    inv = inv_freq_hf(r, seq_len).to(t)
    freqs = torch.outer(torch.tensor(pos, dtype=torch.float32).to(t), inv)
    c, sn = freqs.float().cos().to(t), freqs.float().sin().to(t)
    s = r.attention_scaling()
    if s != 1.0:
        c, sn = c * s, sn * s
    return rotate(x, c, sn, r.pairing, r.rotary_dim)


# --- the corpus -------------------------------------------------------------------------------

CONFIGS = {
    # name: (config, position blocks (first positions), correct runtimes)
    "qwen3": ("qwen3-8b.json", [0, 20000, 40960 - SEQ],
              ["f64", "hf32", "cuda32", "ggml", "hf_bf16", "hf_f16", "kern_bf16", "vllm_bf16"]),
    "llama31": ("llama-3.1-8b.json", [0, 65536, 131072 - SEQ],
                ["f64", "hf32", "cuda32", "ggml", "hf_bf16", "hf_f16", "kern_bf16", "vllm_bf16"]),
    "gptoss": ("gpt-oss-20b.json", [0, 65536, 131072 - SEQ],
               ["f64", "hf32", "cuda32", "hf_bf16", "hf_f16", "kern_bf16", "vllm_bf16"]),
    "phi3": ("extra/phi-3-mini-128k.json", [0, 2048, 4096 - 32, 131072 - SEQ],
             ["f64", "hf32", "cuda32", "hf_bf16", "hf_f16", "kern_bf16"]),
    "qwen35": ("qwen3.5-27b.json", [0, 131072, 262144 - SEQ],
               ["f64", "hf32", "cuda32", "hf_bf16", "hf_f16", "kern_bf16"]),
    "gptj": ("gpt-j-6b.json", [0, 1024, 2048 - SEQ],
             ["f64", "hf32", "cuda32", "hf_bf16", "hf_f16", "kern_bf16", "vllm_bf16"]),
    "qwen2vl": ("extra/qwen2-vl-7b.json", [0, 16384, 32768 - SEQ],
                ["f64", "hf32", "cuda32", "hf_bf16", "hf_f16", "kern_bf16"]),
}


def build(out):
    w = Writer(out)
    cp = Corpus(w)
    ropes = {k: Rope(v[0]) for k, v in CONFIGS.items()}

    # correct runtimes at every block
    for name, (_, blocks, runtimes) in CONFIGS.items():
        r = ropes[name]
        for off in blocks:
            pos, sl = positions(off), off + SEQ
            for rt in runtimes:
                dt = RUNTIME_DTYPE[rt]
                q, k = cp.inputs(r, dt)
                extra = {"seq_len": sl} if r.rope_type == "longrope" else {}
                cp.add("%s-%s-%d" % (name, rt, off), r, dt, off, run_runtime(r, rt, q, pos, sl),
                       run_runtime(r, rt, k, pos, sl), "pass", "correct", rt, **extra)

    # mistakes
    def mistake(cid, name, off, fq, fk, names, dt="f32", fail=("q", "k"), passing=()):
        r = ropes[name]
        pos, sl = positions(off), off + SEQ
        q, k = cp.inputs(r, dt)
        extra = {"seq_len": sl} if r.rope_type == "longrope" else {}
        cp.add("%s-%s-%d" % (name, cid, off), r, dt, off, fq(r, q, pos, sl), fk(r, k, pos, sl),
               "fail", "mistake", "hf32" if dt == "f32" else dt, names=names, fail=list(fail),
               passing=list(passing), **extra)

    def hf(**kw):
        return lambda r, x, pos, sl: hf_rotate(r, x, pos, sl, **dict(kw))

    def shifted(n, **kw):
        return lambda r, x, pos, sl: hf_rotate(r, x, [p + n for p in pos], sl, **dict(kw))

    def same(r, x, pos, sl):
        return x.clone()

    for name in CONFIGS:
        r = ropes[name]
        blocks = CONFIGS[name][1]
        mid, last = blocks[1], blocks[-1]
        wrong = 1e6 if r.theta == 1e4 else 1e4
        if r.rope_type == "default":
            for off in (0, mid):
                mistake("theta", name, off, hf(theta=wrong), hf(theta=wrong), ["theta"])
        else:
            for off in (0, mid, last):
                plain = hf(rope_type="default", s=1.0)
                mistake("scaling", name, off, plain, plain, ["scaling_ignored"])
        other = "gptj" if r.pairing == "neox" else "neox"
        for off in (0, last):
            mistake("style", name, off, hf(pairing=other), hf(pairing=other), ["style_swapped"])
        mistake("offset1", name, mid, shifted(1), shifted(1), ["offset"])
        mistake("kshift3", name, mid, hf(), shifted(3), ["offset"], fail=("k",), passing=("q",))
        mistake("none", name, mid, same, same, ["not_rotated"])
        if r.rotary_dim < r.head_dim:
            for off in (0, last):
                full = hf(d=r.head_dim)
                mistake("fullhead", name, off, full, full, ["rotary_dim_full"])
        if r.attention_scaling() != 1.0:
            for off in (0, last):
                mistake("attn", name, off, hf(s=1.0), hf(s=1.0), ["attention_scaling_missing"])
        if r.rope_type == "longrope":
            for off in blocks[2:]:
                short = hf(factors=r.rp["short_factor"])
                mistake("lrshort", name, off, short, short, ["longrope_factors"])
        if name in ("qwen3", "llama31"):
            for dt in ("bf16", "f16"):
                for off in (0, 4096):
                    bug = (lambda t: lambda rr, x, pos, sl: angle_lowp(rr, x, pos, sl, t))(dt)
                    mistake("angle_" + dt, name, off, bug, bug, ["angle_" + dt], dt=dt)
    for off in (0, 65536):
        plain = hf(rope_type="default", theta=1e4)
        mistake("theta_scaling", "llama31", off, plain, plain, ["theta+scaling_ignored"])

    # corruptions of the f64 runtime's f32 dumps
    for name in ("qwen3", "llama31", "gptoss", "phi3", "qwen35", "gptj"):
        r = ropes[name]
        blocks = CONFIGS[name][1]
        for off in (0, blocks[-1]):
            pos, sl = positions(off), off + SEQ
            q, k = cp.inputs(r, "f32")
            eq, ek = run_runtime(r, "f64", q, pos, sl), run_runtime(r, "f64", k, pos, sl)
            extra = {"seq_len": sl} if r.rope_type == "longrope" else {}
            w_ex, s = inv_freq_exact(r, sl), r.attention_scaling()
            # the element whose bound is smallest at a late row: the slowest pair's first dim
            row, j = SEQ - 5, (r.n - 1 if r.pairing == "neox" else r.rotary_dim - 2)
            b = bound_at(r, q[0, 1, row].double().numpy(), pos[row], j, w_ex, s)

            def corrupt(cid, fq=None, fk=None, note=""):
                a, bk = eq.clone(), ek.clone()
                if fq:
                    fq(a)
                if fk:
                    fk(bk)
                cp.add("%s-corrupt_%s-%d" % (name, cid, off), r, "f32", off, a, bk, "fail",
                       "corruption", "f64", note=note, **extra)

            def nan_rows(a):
                a[0, :, 3:13, :] = float("nan")

            def inf_one(a):
                a[0, 1, 40, 5] = float("inf")

            def plus_one(a):
                a[0, 2, 30, 7] += 1.0

            def rel_1e3(a):
                a[0, 1, row, j] *= 1.001

            def zero_head(a):
                a[0, 1] = 0.0
            corrupt("nan", fq=nan_rows, note="q NaN at positions %d-%d, every head" % (pos[3], pos[12]))
            corrupt("inf", fk=inf_one, note="k[0,1,40,5] = inf")
            corrupt("plus1", fq=plus_one, note="q[0,2,30,7] += 1")
            corrupt("rel1e-3", fq=rel_1e3,
                    note="q[0,1,%d,%d] *= 1.001: |change| %.3g, its bound %.3g"
                    % (row, j, abs(float(eq[0, 1, row, j])) * 1e-3, b))
            corrupt("zerohead", fk=zero_head, note="k head 1 zeroed")

    # probes: float64 dumps, exact math, one q element off by F times its bound
    for name in ("qwen3", "llama31", "gptoss", "phi3", "qwen35", "gptj"):
        r = ropes[name]
        blocks = CONFIGS[name][1]
        q, k = cp.inputs(r, "f64")
        for off, row, pair in ((0, 37, r.n // 4), (blocks[-1], SEQ - 1, 0),
                               (blocks[-1], SEQ - 2, r.n // 2)):
            pos, sl = positions(off), off + SEQ
            w_ex, s = inv_freq_exact(r, sl), r.attention_scaling()
            c, sn = tables_f64(w_ex, pos, s)
            eq, ek = rotate(q, c, sn, r.pairing, r.rotary_dim), rotate(k, c, sn, r.pairing, r.rotary_dim)
            j = pair if r.pairing == "neox" else 2 * pair  # the pair's first element
            head = 2
            b = bound_at(r, q[0, head, row].numpy(), pos[row], j, w_ex, s)
            extra = {"seq_len": sl} if r.rope_type == "longrope" else {}
            for f, want in ((0.75, "pass"), (1.5, "fail")):
                a = eq.clone()
                a[0, head, row, j] += f * b
                cp.add("%s-probe%g-p%d-i%d" % (name, f, pos[row], pair), r, "f64", off, a, ek,
                       want, "probe", "f64-exact", probe={"head": head, "position": pos[row],
                                                          "dim": j, "pair": pair, "factor": f,
                                                          "bound": b}, **extra)
    return w.cases


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: make_corpus.py OUTDIR\n")
        return 2
    out = argv[1]
    torch.set_num_threads(1)
    cases = build(out)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(cases, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
