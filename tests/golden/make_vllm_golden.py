#!/usr/bin/python3
"""Golden cos_sin_cache rows of vLLM's rotary classes: tests/data/golden/vllm_cache.npz.

Run with Debian's python (numpy, torch 1.13, mpmath):
    /usr/bin/python3 tests/golden/make_vllm_golden.py

vLLM itself cannot be installed here, so this file ports the cache code of its rotary classes to
torch, operation for operation. Source: vllm-project/vllm, vllm/model_executor/layers/
rotary_embedding/, each file at the commit it was read at:
  __init__.py get_rope                                   0cd5784803d83f81fac0794b82cb592d4317d4bf
  base.py RotaryEmbeddingBase / RotaryEmbedding          072d10a084c2b89e63323c781eacd7d7e218ba2b
  common.py yarn_find_correction_range, _linear_ramp_mask, yarn_get_mscale
                                                         002d181a55a03803d7d69547846630069d2378b8
  yarn_scaling_rope.py YaRNScalingRotaryEmbedding        0cd5784803d83f81fac0794b82cb592d4317d4bf
  deepseek_scaling_rope.py DeepseekScalingRotaryEmbedding 7bc8d408139110c389bea6028e9fdfadb1eb7641
  llama3_rope.py Llama3RotaryEmbedding                   045d7575500e01e0f4a7ff84e039a9f7f7dc3bd0
  dynamic_ntk_scaling_rope.py DynamicNTKScalingRotaryEmbedding
                                                         50feac95f9e53a97d6ed27fee6bfe3b163d18594
  phi3_long_rope_scaled_rope.py Phi3LongRoPEScaledRotaryEmbedding
                                                         63c2b7abcd705edb754604f83ac72a4269c05a52
  mrope.py MRotaryEmbedding                              dba39a557eabb84d809fc4ac86d5afd0b6bc5b84
  linear_scaling_rope.py LinearScalingRotaryEmbedding    0f17ee061e413bf8ab7927f926f69cdff24dc63e
  mrope.py MRotaryEmbedding with scaling_factor (yarn)  dba39a557eabb84d809fc4ac86d5afd0b6bc5b84
    calling yarn_scaling_rope.py's methods at            ffdc985737c94233f2c88629c4450022e5bf4925
  gemma4_rope.py Gemma4RotaryEmbedding                   41c5903d049b80b83a6e570f52f0f55e31316e49
    (get_rope's "proportional" branch in __init__.py @ 0cd5784; vllm/model_executor/models/
    gemma4.py @ 001cabc1be16a59a70d720ed61a13b678c060a18 passes global_head_dim and the
    full_attention rope_parameters)
yarn_scaling_rope.py @ 0cd5784 passes self.truncate to yarn_find_correction_range, which at
002d181 has no such argument; the port floors/ceils only when truncate (see lib/runtimes/rope_vllm.c).

Every torch operation is torch's own (arange, division, the ramp and blend, einsum, the mscale
multiplication, cat, .to(dtype)); only pow, cos and sin, which torch's CPU kernels compute
faithfully (Sleef, <= 1 ulp), are replaced by correctly rounded float32 functions (float64 then
rounded, mpmath at 200 bits where the float64 value lies near a float32 rounding boundary): that is
what posenc's vllm precision promises. The file also records how many cache elements torch's own
cos/sin/pow change (stats_*), measured by running the same classes with torch's kernels.

For each case: inv_freq (float32), the cache length, mscale, and cache rows at sampled positions
(including the last row, up to position 2^20 - 1 for Qwen3.5's 4 x 262144-row mrope cache) as
float32 and bfloat16 bit patterns. For four cases (APPLY) also a random query dump in the model
dtype and its rotation by RotaryEmbedding.forward_native with the cache cast to that dtype.
"""
import json
import math
import os

import mpmath as mp
import numpy as np
import torch

mp.mp.prec = 200
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
OUT = os.path.join(DATA, "golden", "vllm_cache.npz")


# ----- correctly rounded float32 pow / cos / sin ----------------------------------------------

def _round_cr(y64, exact):
    """float32 rounding of float64 approximations y64; recompute with exact() the elements whose
    float64 value is within 64 ulp(double) of a float32 rounding boundary."""
    y32 = y64.astype(np.float32)
    err = y64 - y32.astype(np.float64)
    half = np.abs(np.spacing(y32).astype(np.float64)) / 2
    near = np.abs(np.abs(err) - half) <= 64 * np.abs(np.spacing(y64))
    for idx in np.flatnonzero(near):
        y32.flat[idx] = np.float32(exact(idx))
    return y32


def pow_cr(base, expo):
    """torch's python-float ** float32-tensor with correctly rounded pow: the base becomes f32."""
    b = float(np.float32(base))
    e = expo.numpy().astype(np.float64)
    out = np.array([float(mp.power(mp.mpf(b), mp.mpf(x))) for x in e.tolist()], dtype=np.float64)
    return torch.from_numpy(out.astype(np.float32))


def _elementwise_cr(x, f64, mpf):
    """f elementwise, correctly rounded to float32, in slices of 4M elements (memory only: each
    element's value depends on that element alone)."""
    src = x.numpy().reshape(-1)
    out = np.empty(src.shape, dtype=np.float32)
    step = 1 << 22
    for k in range(0, src.size, step):
        a = src[k:k + step].astype(np.float64)
        out[k:k + step] = _round_cr(f64(a), lambda i, a=a: mpf(mp.mpf(float(a[i]))))
    return torch.from_numpy(out.reshape(x.shape))


def cos_cr(x):
    return _elementwise_cr(x, np.cos, mp.cos)


def sin_cr(x):
    return _elementwise_cr(x, np.sin, mp.sin)


CR = dict(pow=pow_cr, cos=cos_cr, sin=sin_cr)
TORCH = dict(pow=lambda b, e: b ** e, cos=torch.cos, sin=torch.sin)


# ----- common.py -------------------------------------------------------------------------------

def yarn_find_correction_dim(num_rotations, dim, base=10000, max_position_embeddings=2048):
    return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (
        2 * math.log(base))


def yarn_find_correction_range(low_rot, high_rot, dim, base=10000, max_position_embeddings=2048,
                               truncate=True):
    low = yarn_find_correction_dim(low_rot, dim, base, max_position_embeddings)
    high = yarn_find_correction_dim(high_rot, dim, base, max_position_embeddings)
    if truncate:
        low = math.floor(low)
        high = math.ceil(high)
    return max(low, 0), min(high, dim - 1)


def yarn_linear_ramp_mask(low, high, dim, dtype):
    if low == high:
        high += 0.001
    linear_func = (torch.arange(dim, dtype=dtype) - low) / (high - low)
    return torch.clamp(linear_func, 0, 1)


def yarn_get_mscale(scale=1, mscale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


# ----- the classes -----------------------------------------------------------------------------

class RotaryEmbedding:
    """base.py: the cache is built in float32 at __init__, then cast to the model dtype."""

    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style):
        self.ops = ops
        self.head_size = head_size
        self.rotary_dim = rotary_dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        self.is_neox_style = is_neox_style
        self.cos_sin_cache = self._compute_cos_sin_cache()

    def _compute_inv_freq(self, base):
        return 1.0 / self.ops["pow"](base, torch.arange(0, self.rotary_dim, 2, dtype=torch.float)
                                     / self.rotary_dim)

    def _compute_cos_sin_cache(self):
        inv_freq = self._compute_inv_freq(self.base)
        self.inv_freq = inv_freq
        t = torch.arange(self.max_position_embeddings, dtype=torch.float)
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        cos = self.ops["cos"](freqs)
        sin = self.ops["sin"](freqs)
        return torch.cat((cos, sin), dim=-1)


class MRotaryEmbedding(RotaryEmbedding):
    """mrope.py (no scaling_factor): the cache is 4 x max_position_embeddings rows."""

    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style,
                 mrope_section=None, mrope_interleaved=False):
        self.mscale = 1.0
        self.cache_max_position_num = max_position_embeddings * 4
        super().__init__(ops, head_size, rotary_dim, self.cache_max_position_num, base,
                         is_neox_style)
        self.mrope_section = mrope_section
        self.mrope_interleaved = mrope_interleaved
        assert sum(self.mrope_section) == rotary_dim // 2


class Llama3RotaryEmbedding(RotaryEmbedding):
    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style,
                 scaling_factor, low_freq_factor, high_freq_factor, orig_max_position):
        self.scaling_factor = scaling_factor
        self.low_freq_factor = low_freq_factor
        self.high_freq_factor = high_freq_factor
        self.orig_max_position = orig_max_position
        super().__init__(ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style)

    def _compute_inv_freq(self, base):
        inv_freqs = super()._compute_inv_freq(base)
        low_freq_wavelen = self.orig_max_position / self.low_freq_factor
        high_freq_wavelen = self.orig_max_position / self.high_freq_factor
        wave_len = 2 * math.pi / inv_freqs
        if self.low_freq_factor != self.high_freq_factor:
            smooth = (self.orig_max_position / wave_len - self.low_freq_factor) / (
                self.high_freq_factor - self.low_freq_factor)
        else:
            smooth = 0
        return torch.where(
            wave_len < high_freq_wavelen,
            inv_freqs,
            torch.where(wave_len > low_freq_wavelen, inv_freqs / self.scaling_factor,
                        (1 - smooth) * inv_freqs / self.scaling_factor + smooth * inv_freqs))


class DynamicNTKScalingRotaryEmbedding(RotaryEmbedding):
    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style,
                 scaling_factor):
        self.scaling_factor = scaling_factor
        super().__init__(ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style)

    def _compute_cos_sin_cache(self):
        max_len = self.max_position_embeddings * self.scaling_factor
        base = self.base * ((self.scaling_factor * max_len / self.max_position_embeddings)
                            - (self.scaling_factor - 1)) ** (self.rotary_dim / (self.rotary_dim - 2))
        self.fixed_base = base
        inv_freq = self._compute_inv_freq(base)
        self.inv_freq = inv_freq
        t = torch.arange(max_len, dtype=torch.float)
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        return torch.cat((self.ops["cos"](freqs), self.ops["sin"](freqs)), dim=-1)


class LinearScalingRotaryEmbedding(RotaryEmbedding):
    """linear_scaling_rope.py @ 0f17ee06 with one scaling factor: the base's inv_freq, the
    positions t = arange(max_position * factor) divided by the factor in float32."""

    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style,
                 scaling_factor):
        self.scaling_factor = scaling_factor
        super().__init__(ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style)

    def _compute_cos_sin_cache(self):
        inv_freq = self._compute_inv_freq(self.base)
        self.inv_freq = inv_freq
        max_len = self.max_position_embeddings * self.scaling_factor
        t = torch.arange(max_len, dtype=torch.float)
        t = t / self.scaling_factor
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        return torch.cat((self.ops["cos"](freqs), self.ops["sin"](freqs)), dim=-1)


class MRotaryEmbeddingYaRN(RotaryEmbedding):
    """mrope.py @ dba39a55 with scaling_factor: RotaryEmbeddingBase gets max_position_embeddings
    * 4, and YaRNScalingRotaryEmbedding's _compute_inv_freq / _compute_cos_sin_cache @ ffdc9857
    run on self: the correction range over 4 * M0, the cache arange(4 * M0 * scaling_factor)
    rows, mscale = yarn_get_mscale(scaling_factor) * attn_factor."""

    cls_name = "MRotaryEmbedding"  # vLLM's one class; this port splits off its yarn path

    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style,
                 mrope_section=None, mrope_interleaved=False, *, scaling_factor=None,
                 extrapolation_factor=1, attn_factor=1, beta_fast=32, beta_slow=1):
        self.scaling_factor = scaling_factor
        self.extrapolation_factor = extrapolation_factor
        self.attn_factor = attn_factor
        self.beta_fast = beta_fast
        self.beta_slow = beta_slow
        self.mscale = float(yarn_get_mscale(self.scaling_factor) * attn_factor)
        self.cache_max_position_num = max_position_embeddings * 4
        super().__init__(ops, head_size, rotary_dim, self.cache_max_position_num, base,
                         is_neox_style)
        self.mrope_section = mrope_section
        self.mrope_interleaved = mrope_interleaved
        assert sum(self.mrope_section) == rotary_dim // 2

    def _compute_inv_freq(self, scaling_factor):
        # yarn_scaling_rope.py @ ffdc9857 _compute_inv_freq (no truncate: always floor/ceil)
        pos_freqs = self.ops["pow"](self.base, torch.arange(0, self.rotary_dim, 2,
                                                            dtype=torch.float) / self.rotary_dim)
        inv_freq_extrapolation = 1.0 / pos_freqs
        inv_freq_interpolation = 1.0 / (scaling_factor * pos_freqs)
        low, high = yarn_find_correction_range(self.beta_fast, self.beta_slow, self.rotary_dim,
                                               self.base, self.max_position_embeddings)
        inv_freq_mask = (1 - yarn_linear_ramp_mask(low, high, self.rotary_dim // 2,
                                                   dtype=torch.float)) * self.extrapolation_factor
        return (inv_freq_interpolation * (1 - inv_freq_mask)
                + inv_freq_extrapolation * inv_freq_mask)

    def _compute_cos_sin_cache(self):
        # yarn_scaling_rope.py @ ffdc9857 _compute_cos_sin_cache
        inv_freq = self._compute_inv_freq(self.scaling_factor)
        self.inv_freq = inv_freq
        t = torch.arange(self.max_position_embeddings * self.scaling_factor, dtype=torch.float32)
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        cos = self.ops["cos"](freqs) * self.mscale
        sin = self.ops["sin"](freqs) * self.mscale
        return torch.cat((cos, sin), dim=-1)


class Gemma4RotaryEmbedding(RotaryEmbedding):
    """gemma4_rope.py @ 41c5903d: rope_angles = rotary_dim // 2 frequencies over head_size,
    zeros for the other head_size // 2 - rope_angles; the base class sees rotary_dim = head_size,
    so its _compute_cos_sin_cache spans the whole head."""

    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style):
        self.rope_angles = rotary_dim // 2
        self.nope_angles = (head_size // 2) - self.rope_angles
        super().__init__(ops, head_size, head_size, max_position_embeddings, base, is_neox_style)

    def _compute_inv_freq(self, base):
        freq_exponents = (torch.arange(0, 2 * self.rope_angles, 2, dtype=torch.float)
                          / self.head_size)
        inv_freq = 1.0 / self.ops["pow"](base, freq_exponents)
        if self.nope_angles > 0:
            inv_freq = torch.cat([inv_freq, torch.zeros(self.nope_angles, dtype=torch.float)])
        return inv_freq


class YaRNScalingRotaryEmbedding(RotaryEmbedding):
    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style,
                 scaling_factor, *, beta_fast=32, beta_slow=1, mscale=None, mscale_all_dim=None,
                 attention_factor=None, truncate=True, max_position=None):
        self.scaling_factor = scaling_factor
        self.max_position = max_position
        self.beta_fast = beta_fast
        self.beta_slow = beta_slow
        self.truncate = truncate
        if attention_factor is not None:
            self.mscale = float(attention_factor)
        elif mscale and mscale_all_dim:
            self.mscale = float(yarn_get_mscale(self.scaling_factor, mscale)
                                / yarn_get_mscale(self.scaling_factor, mscale_all_dim))
        else:
            self.mscale = float(yarn_get_mscale(self.scaling_factor))
        super().__init__(ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style)

    def _compute_inv_freq(self, scaling_factor):
        pos_freqs = self.ops["pow"](self.base, torch.arange(0, self.rotary_dim, 2,
                                                            dtype=torch.float) / self.rotary_dim)
        inv_freq_extrapolation = 1.0 / pos_freqs
        inv_freq_interpolation = 1.0 / (scaling_factor * pos_freqs)
        low, high = yarn_find_correction_range(self.beta_fast, self.beta_slow, self.rotary_dim,
                                               self.base, self.max_position_embeddings,
                                               self.truncate)
        inv_freq_mask = 1 - yarn_linear_ramp_mask(low, high, self.rotary_dim // 2,
                                                  dtype=torch.float)
        return (inv_freq_interpolation * (1 - inv_freq_mask)
                + inv_freq_extrapolation * inv_freq_mask)

    def _compute_cos_sin_cache(self):
        inv_freq = self._compute_inv_freq(self.scaling_factor)
        self.inv_freq = inv_freq
        num_positions = math.ceil(self.max_position_embeddings * self.scaling_factor)
        num_positions = max(num_positions, getattr(self, "max_position", None) or 0)
        t = torch.arange(num_positions, dtype=torch.float32)
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        cos = self.ops["cos"](freqs) * self.mscale
        sin = self.ops["sin"](freqs) * self.mscale
        return torch.cat((cos, sin), dim=-1)


class DeepseekScalingRotaryEmbedding(RotaryEmbedding):
    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style,
                 scaling_factor, *, extrapolation_factor=1, attn_factor=1, beta_fast=32,
                 beta_slow=1, mscale=1, mscale_all_dim=0):
        self.scaling_factor = scaling_factor
        self.extrapolation_factor = extrapolation_factor
        self.attn_factor = attn_factor
        self.beta_fast = beta_fast
        self.beta_slow = beta_slow
        self.mscale = float(yarn_get_mscale(self.scaling_factor, float(mscale))
                            / yarn_get_mscale(self.scaling_factor, float(mscale_all_dim))
                            * attn_factor)
        super().__init__(ops, head_size, rotary_dim, max_position_embeddings, base, is_neox_style)

    def _compute_inv_freq(self, scaling_factor):
        pos_freqs = self.ops["pow"](self.base, torch.arange(0, self.rotary_dim, 2,
                                                            dtype=torch.float) / self.rotary_dim)
        inv_freq_extrapolation = 1.0 / pos_freqs
        inv_freq_interpolation = 1.0 / (scaling_factor * pos_freqs)
        low, high = yarn_find_correction_range(self.beta_fast, self.beta_slow, self.rotary_dim,
                                               self.base, self.max_position_embeddings)
        inv_freq_mask = (1 - yarn_linear_ramp_mask(low, high, self.rotary_dim // 2,
                                                   dtype=torch.float)) * self.extrapolation_factor
        return (inv_freq_interpolation * (1 - inv_freq_mask)
                + inv_freq_extrapolation * inv_freq_mask)

    def _compute_cos_sin_cache(self):
        inv_freq = self._compute_inv_freq(self.scaling_factor)
        self.inv_freq = inv_freq
        t = torch.arange(self.max_position_embeddings * self.scaling_factor, dtype=torch.float32)
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        cos = self.ops["cos"](freqs) * self.mscale
        sin = self.ops["sin"](freqs) * self.mscale
        return torch.cat((cos, sin), dim=-1)


class Phi3LongRoPEScaledRotaryEmbedding:
    """The short cache (M0 rows) then the long cache (M rows); forward indexes position + M0 when
    max_model_len > original_max_position_embeddings."""

    def __init__(self, ops, head_size, rotary_dim, max_position_embeddings,
                 original_max_position_embeddings, base, is_neox_style, short_factor, long_factor,
                 max_model_len, short_mscale=None, long_mscale=None):
        assert is_neox_style
        self.ops = ops
        self.rotary_dim = rotary_dim
        self.head_size = head_size
        self.max_position_embeddings = max_position_embeddings
        self.original_max_position_embeddings = original_max_position_embeddings
        self.base = base
        self.use_long_rope = max_model_len > original_max_position_embeddings
        scale = self.max_position_embeddings / self.original_max_position_embeddings
        if scale <= 1.0:
            scaling_factor = 1.0
        else:
            scaling_factor = math.sqrt(
                1 + math.log(scale) / math.log(self.original_max_position_embeddings))
        self.short_mscale = scaling_factor if short_mscale is None else short_mscale
        self.long_mscale = scaling_factor if long_mscale is None else long_mscale
        short_cache = self._compute_cos_sin_cache(original_max_position_embeddings, short_factor,
                                                  self.short_mscale)
        self.short_inv = self.inv_freq
        long_cache = self._compute_cos_sin_cache(max_position_embeddings, long_factor,
                                                 self.long_mscale)
        self.long_inv = self.inv_freq
        self.long_short_cos_sin_cache = torch.cat([short_cache, long_cache], dim=0)
        self.mscale = self.long_mscale if self.use_long_rope else self.short_mscale
        self.inv_freq = self.long_inv if self.use_long_rope else self.short_inv

    def _compute_inv_freq(self, rescale_factors):
        rescale_factors = torch.tensor(rescale_factors, dtype=torch.float32)
        return 1.0 / (rescale_factors * self.ops["pow"](
            self.base, torch.arange(0, self.rotary_dim, 2, dtype=torch.float) / self.rotary_dim))

    def _compute_cos_sin_cache(self, max_position_embeddings, rescale_factors, mscale):
        inv_freq = self._compute_inv_freq(rescale_factors)
        self.inv_freq = inv_freq
        t = torch.arange(max_position_embeddings, dtype=torch.float)
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        cos = self.ops["cos"](freqs) * mscale
        sin = self.ops["sin"](freqs) * mscale
        return torch.cat((cos, sin), dim=-1)

    def rows(self, positions):
        """forward's index_select: position (+ M0 when the long factors are in use)."""
        k = self.original_max_position_embeddings if self.use_long_rope else 0
        return self.long_short_cos_sin_cache[torch.tensor(positions) + k]

    @property
    def cache_len(self):
        return (self.max_position_embeddings if self.use_long_rope
                else self.original_max_position_embeddings)


# ----- the cases: what each model's vLLM code passes to get_rope -------------------------------

def load(name):
    with open(os.path.join(DATA, "configs", name)) as f:
        return json.load(f)


def rope_params(cfg):
    """config.rope_parameters as transformers v5 exposes it (rope_scaling merged, rope_theta)."""
    p = dict(cfg.get("rope_parameters") or {})
    rs = cfg.get("rope_scaling") or {}
    p.update(rs)
    if "type" in p and "rope_type" not in p:
        p["rope_type"] = p.pop("type")
    p.setdefault("rope_theta", cfg.get("rope_theta", 10000.0))
    p.setdefault("rope_type", "default")
    return p


def case_llama2(ops):
    # the Llama-2-7B shape: hidden 4096, 32 heads, 4096 positions, theta 1e4 (no scaling)
    return RotaryEmbedding(ops, 128, 128, 4096, 10000.0, True)


def case_llama31(ops):
    cfg = load("llama-3.1-8b.json")
    p = rope_params(cfg)
    return Llama3RotaryEmbedding(ops, 128, 128, cfg["max_position_embeddings"], p["rope_theta"],
                                 True, p["factor"], p["low_freq_factor"], p["high_freq_factor"],
                                 p["original_max_position_embeddings"])


def case_gpt_oss(ops):
    cfg = load("gpt-oss-20b.json")
    p = rope_params(cfg)
    # vllm/model_executor/models/gpt_oss.py passes these keys (truncate false in this config)
    return YaRNScalingRotaryEmbedding(
        ops, cfg["head_dim"], cfg["head_dim"], p["original_max_position_embeddings"],
        p["rope_theta"], True, p["factor"], beta_fast=p["beta_fast"], beta_slow=p["beta_slow"],
        truncate=p.get("truncate", True), max_position=cfg["max_position_embeddings"])


def case_deepseek_v3(ops):
    cfg = load("deepseek-v3.json")
    p = rope_params(cfg)
    # deepseek_v2.py: yarn -> deepseek_yarn; get_rope passes beta_fast, beta_slow, mscale,
    # mscale_all_dim; qk_rope_head_dim rotated, is_neox_style False
    kw = {k: p[k] for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim") if k in p}
    d = cfg["qk_rope_head_dim"]
    return DeepseekScalingRotaryEmbedding(ops, d, d, p["original_max_position_embeddings"],
                                          p["rope_theta"], False, p["factor"], **kw)


def case_qwen35(ops):
    cfg = load("qwen3.5-27b.json")["text_config"]
    p = rope_params(cfg)
    head = cfg["head_dim"]
    rot = int(head * p["partial_rotary_factor"])
    return MRotaryEmbedding(ops, head, rot, cfg["max_position_embeddings"], p["rope_theta"], True,
                            mrope_section=p["mrope_section"],
                            mrope_interleaved=p.get("mrope_interleaved", False))


def case_dynamic(ops):
    cfg = load("extra/llama-dynamic.json")
    p = rope_params(cfg)
    return DynamicNTKScalingRotaryEmbedding(ops, 128, 128, cfg["max_position_embeddings"],
                                            p["rope_theta"], True, p["factor"])


def case_phi3(max_model_len):
    def make(ops):
        cfg = load("extra/phi-3-mini-128k.json")
        p = rope_params(cfg)
        head = cfg["hidden_size"] // cfg["num_attention_heads"]
        return Phi3LongRoPEScaledRotaryEmbedding(
            ops, head, head, cfg["max_position_embeddings"],
            cfg["original_max_position_embeddings"], p["rope_theta"], True, p["short_factor"],
            p["long_factor"], max_model_len)
    return make


def case_gemma3_global(ops):
    # vllm/model_executor/models/gemma3.py Gemma3Attention: the full-attention layers' rope
    # parameters (linear, factor 8) through get_rope -> LinearScalingRotaryEmbedding
    cfg = load("gemma-3-27b-it.json")["text_config"]
    p = rope_params(cfg)
    return LinearScalingRotaryEmbedding(ops, cfg["head_dim"], cfg["head_dim"],
                                        cfg["max_position_embeddings"], p["rope_theta"], True,
                                        p["factor"])


def case_linear3(ops):
    # a factor that is not a power of two, where dividing t differs from dividing inv_freq:
    # tests/data/configs/extra/llama-linear3.json (Llama-2-7B shape, linear factor 3)
    cfg = load("extra/llama-linear3.json")
    p = rope_params(cfg)
    return LinearScalingRotaryEmbedding(ops, 128, 128, cfg["max_position_embeddings"],
                                        p["rope_theta"], True, p["factor"])


def case_gemma4_full(ops):
    # vllm/model_executor/models/gemma4.py: full-attention layers get head_dim = global_head_dim
    # and rope_parameters["full_attention"] (proportional, partial_rotary_factor 0.25); get_rope
    # computes rotary_dim = int(head_size * partial_rotary_factor)
    cfg = load("gemma-4-26b-a4b.json")["text_config"]
    p = dict(cfg["rope_parameters"]["full_attention"])
    head = cfg["global_head_dim"]
    rot = int(head * p.get("partial_rotary_factor", 1.0))
    return Gemma4RotaryEmbedding(ops, head, rot, cfg["max_position_embeddings"], p["rope_theta"],
                                 True)


def case_qwen2vl_yarn(ops):
    # tests/data/configs/extra/qwen2-vl-7b-yarn.json: Qwen2-VL-7B with the YaRN rope_scaling the
    # Qwen2.5-VL model cards give for long inputs (type yarn, factor 4, original 32768, the
    # mrope_section kept); get_rope's yarn branch with mrope_section -> MRotaryEmbedding with
    # original_max_position and scaling_factor
    cfg = load("extra/qwen2-vl-7b-yarn.json")
    p = rope_params(cfg)
    head = cfg["hidden_size"] // cfg["num_attention_heads"]
    kw = {k: p[k] for k in ("extrapolation_factor", "attn_factor", "beta_fast", "beta_slow")
          if k in p}
    return MRotaryEmbeddingYaRN(ops, head, head, p["original_max_position_embeddings"],
                                p["rope_theta"], True, mrope_section=p["mrope_section"],
                                scaling_factor=p["factor"], **kw)


CASES = [
    ("llama2", "", case_llama2, 0),
    ("llama31", "llama-3.1-8b.json", case_llama31, 0),
    ("gpt_oss", "gpt-oss-20b.json", case_gpt_oss, 0),
    ("deepseek_v3", "deepseek-v3.json", case_deepseek_v3, 0),
    ("qwen35", "qwen3.5-27b.json", case_qwen35, 0),
    ("dynamic", "extra/llama-dynamic.json", case_dynamic, 0),
    ("phi3_short", "extra/phi-3-mini-128k.json", case_phi3(4096), 4096),
    ("phi3_long", "extra/phi-3-mini-128k.json", case_phi3(131072), 131072),
    ("gemma3_global", "gemma-3-27b-it.json", case_gemma3_global, 0),
    ("linear3", "extra/llama-linear3.json", case_linear3, 0),
    ("gemma4_full", "gemma-4-26b-a4b.json", case_gemma4_full, 0),
    ("qwen2vl_yarn", "extra/qwen2-vl-7b-yarn.json", case_qwen2vl_yarn, 0),
]
SAMPLE = [0, 1, 2, 3, 100, 1000, 4095, 4096, 8191, 32767, 65535, 131071, 163839, 262143,
          524287, 1048575]


def apply_rotary_emb_torch(x, cos, sin, is_neox_style):
    """common.py @ 002d181 (ApplyRotaryEmb.forward_static with enable_fp32_compute False, as
    base.py @ 072d10a constructs it, is the same): cos/sin cast to x's dtype, every product and
    sum in that dtype."""
    cos = cos.unsqueeze(-2).to(x.dtype)
    sin = sin.unsqueeze(-2).to(x.dtype)
    if is_neox_style:
        x1, x2 = torch.chunk(x, 2, dim=-1)
    else:
        x1 = x[..., ::2]
        x2 = x[..., 1::2]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    if is_neox_style:
        return torch.cat((o1, o2), dim=-1)
    return torch.stack((o1, o2), dim=-1).flatten(-2)


def forward_native(rot, cache, positions, query):
    """RotaryEmbedding.forward_native (base.py): index the cache (already in the model dtype),
    rotate the first rotary_dim dims of each head, pass the rest through."""
    positions = positions.flatten()
    num_tokens = positions.shape[0]
    cos_sin = cache.index_select(0, positions)
    cos, sin = cos_sin.chunk(2, dim=-1)
    query_shape = query.shape
    query = query.view(num_tokens, -1, rot.head_size)
    query_rot = query[..., :rot.rotary_dim]
    query_pass = query[..., rot.rotary_dim:]
    query_rot = apply_rotary_emb_torch(query_rot, cos, sin, rot.is_neox_style)
    return torch.cat((query_rot, query_pass), dim=-1).reshape(query_shape)


def apply_interleaved_rope(x, mrope_section):
    """mrope.py: frequencies 1:3*h:3 from the h axis, 2:3*w:3 from the w axis, the rest from t."""
    x_t = x[0].clone()
    x_t[..., 1:mrope_section[1] * 3:3] = x[1, ..., 1:mrope_section[1] * 3:3]
    x_t[..., 2:mrope_section[2] * 3:3] = x[2, ..., 2:mrope_section[2] * 3:3]
    return x_t


def mrope_forward_native(rot, cache, positions, query):
    """MRotaryEmbedding.forward_native with [3, num_tokens] (t, h, w) positions."""
    num_tokens = positions.shape[-1]
    cos_sin = cache[positions]
    cos, sin = cos_sin.chunk(2, dim=-1)
    if rot.mrope_interleaved:
        cos = apply_interleaved_rope(cos, rot.mrope_section)
        sin = apply_interleaved_rope(sin, rot.mrope_section)
    else:
        cos = torch.cat([m[i] for i, m in enumerate(cos.split(rot.mrope_section, dim=-1))], -1)
        sin = torch.cat([m[i] for i, m in enumerate(sin.split(rot.mrope_section, dim=-1))], -1)
    query_shape = query.shape
    query = query.view(num_tokens, -1, rot.head_size)
    query_rot = query[..., :rot.rotary_dim]
    query_pass = query[..., rot.rotary_dim:]
    query_rot = apply_rotary_emb_torch(query_rot, cos, sin, rot.is_neox_style)
    return torch.cat((query_rot, query_pass), dim=-1).reshape(query_shape)


# forward cases: (case, model dtype, positions); the query dump is [tokens, 2 heads, head_size]
APPLY = [
    ("qwen35", torch.bfloat16, [0, 1, 7, 4096, 262143, 1000000, 1048575]),
    ("llama31", torch.bfloat16, [0, 5, 8191, 8192, 65536, 131071]),
    ("gpt_oss", torch.float32, [0, 3, 4095, 4096, 100000, 131071]),
    ("llama2", torch.float16, [0, 1, 2, 1000, 4095]),
]


def cache_of(rot):
    if isinstance(rot, Phi3LongRoPEScaledRotaryEmbedding):
        return rot.cache_len, rot.rows
    cache = rot.cos_sin_cache
    return cache.shape[0], lambda pos: cache[torch.tensor(pos)]


def ulps(a, b):
    """|a - b| in units in the last place of float32 (ordered integer images)."""
    ia = a.numpy().view(np.int32).astype(np.int64)
    ib = b.numpy().view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


def main():
    out, meta = {}, {}
    rng = np.random.default_rng(13)
    for name, config, make, mml in CASES:
        rot = make(CR)
        n, rows = cache_of(rot)
        pos = sorted({p for p in SAMPLE if p < n} | {n - 1}
                     | set(rng.integers(0, n, 24).tolist()))
        f32 = rows(pos).contiguous()
        b16 = f32.to(torch.bfloat16)
        out[name + "_positions"] = np.array(pos, dtype=np.int64)
        out[name + "_f32"] = f32.numpy().view(np.uint32)
        out[name + "_bf16"] = b16.view(torch.int16).numpy().view(np.uint16)
        out[name + "_inv_freq"] = rot.inv_freq.numpy().view(np.uint32)
        # the same class on torch's own kernels: how much of the cache they change
        ref = make(TORCH)
        _, trows = cache_of(ref)
        if isinstance(rot, Phi3LongRoPEScaledRotaryEmbedding):
            full_cr, full_t = rot.long_short_cos_sin_cache, ref.long_short_cos_sin_cache
        else:
            full_cr, full_t = rot.cos_sin_cache, ref.cos_sin_cache
        u = ulps(full_cr, full_t)
        dev = float((full_cr - full_t).abs().max())
        meta[name] = dict(config=config, cls=getattr(rot, "cls_name", type(rot).__name__),
                          cache_len=int(n),
                          mscale=float(getattr(rot, "mscale", 1.0)),
                          max_model_len=mml,
                          base=float(getattr(rot, "fixed_base", rot.base)),
                          stats_elements=int(u.size), stats_differ=int((u > 0).sum()),
                          stats_max_ulp=int(u.max()), stats_max_abs=dev,
                          stats_inv_differ=int((rot.inv_freq != ref.inv_freq).sum()))
        print(name, meta[name])
    for name, dt, pos in APPLY:
        make = [c for c in CASES if c[0] == name][0][2]
        rot = make(CR)
        cache = rot.cos_sin_cache.to(dt)  # RotaryEmbeddingBase.__init__: cache.to(dtype)
        g = torch.Generator().manual_seed(len(pos))
        q = torch.randn(len(pos), 2, rot.head_size, generator=g).to(dt)
        y = forward_native(rot, cache, torch.tensor(pos), q)
        bits = np.uint32 if dt == torch.float32 else np.uint16
        view = torch.int32 if dt == torch.float32 else torch.int16
        out["apply_%s_positions" % name] = np.array(pos, dtype=np.int64)
        out["apply_%s_q" % name] = q.view(view).numpy().view(bits)
        out["apply_%s_out" % name] = y.view(view).numpy().view(bits)
        meta[name]["apply_dtype"] = str(dt).replace("torch.", "")
    # Qwen3.5 with image-like (t, h, w) positions: the interleaved section selection
    rot = case_qwen35(CR)
    cache = rot.cos_sin_cache.to(torch.bfloat16)
    pos3 = torch.tensor([[5, 5, 5, 5, 9, 1048575], [5, 6, 7, 8, 9, 3], [5, 8, 6, 7, 9, 1000000]])
    g = torch.Generator().manual_seed(3)
    q = torch.randn(pos3.shape[1], 2, rot.head_size, generator=g).to(torch.bfloat16)
    y = mrope_forward_native(rot, cache, pos3, q)
    out["apply3_qwen35_positions"] = pos3.numpy().astype(np.int64)
    out["apply3_qwen35_q"] = q.view(torch.int16).numpy().view(np.uint16)
    out["apply3_qwen35_out"] = y.view(torch.int16).numpy().view(np.uint16)
    out["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    np.savez_compressed(OUT, **out)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
