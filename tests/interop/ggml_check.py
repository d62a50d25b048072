"""tests/interop/ggml_check.py: posenc's ggml precision against llama.cpp's own ggml.

    ggml_check.py HARNESS CPU_LIB POSENC_PROG CONFIG_DIR [POSENC]

HARNESS is tests/interop/ggml_rope.c built against the prebuilt ggml (CPU_LIB: the portable
libggml-cpu-x64.so), POSENC_PROG is tests/interop/ggml_posenc.c built against libposenc.a. Each
case below is the argument list llama.cpp passes to ggml_rope_ext / ggml_rope_multi for one
model, filled by hand from llama.cpp's rules (src/llama-context.cpp llama_context::llama_context
for freq_scale, ext_factor and attn_factor; convert_hf_to_gguf.py LlamaModel.generate_extra_tensors
for llama3's rope_freqs, in torch as it runs; Phi3MiniModel.generate_extra_tensors for LongRoPE's factors). Both
programs get the same arguments and positions (0..63 and up to 2^20); the script checks
  - cos and sin: ggml's, read off a rotation of unit vectors (x0 = 1, x1 = 0 gives x0*c - x1*s = c
    and x0*s + x1*c = s exactly), against posenc_ggml_rope_cossin: at most MAX_ULP ulp apart;
  - rotated rows: ggml on a seeded q (for llama.cpp's NORM on Llama-style weights, on the q
    permuted as the converter permutes attn_q, LlamaModel.permute, the output un-permuted)
    against posenc_apply_rows under the ggml precision on the q in transformers' layout: at most
    MAX_ULP ulp apart.
With POSENC (the posenc binary), the cases that name a published config also go end to end
through the CLI, config -> converter -> loader -> numerics, against the same ggml output:
  - posenc gen --precision ggml --positions ... : the cos and sin tables, at most MAX_ULP ulp;
  - posenc apply --precision ggml on the seeded q (shd layout, transformers' head layout): the
    rotated rows, at most MAX_ULP ulp (for M-RoPE with [3, seq] t, h, w positions too);
  - the drift of ggml from exact math: max |cos, sin (ggml) - posenc gen --precision exact| at
    positions 0-63, 4096, 131072 and 1000000 (printed, not checked).
Prints one line per case with the measured maxima; exits 1 when a case is over the bound."""
import json
import math
import os
import subprocess
import sys

import numpy as np

MAX_ULP = 1
NORM, NEOX, MROPE, IMROPE = 0, 2, 8, 40
POSITIONS = list(range(64)) + [4095, 4096, 65535, 131071, 131072, 262143, 500000, 999999,
                               1000000, 1048575]


def f32(x):
    return float(np.float32(x))


def llama3_factors(theta, dim, factor, low, high, old_ctx):
    """conversion/llama.py LlamaModel.generate_extra_tensors (rope_type llama3), the same torch
    float32 arithmetic: freq and everything derived from it are 0-dim float32 tensors."""
    import torch
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    low_wl, high_wl = old_ctx / low, old_ctx / high
    out = []
    for freq in freqs:
        wl = 2 * math.pi / freq
        if wl < high_wl:
            out.append(1)
        elif wl > low_wl:
            out.append(factor)
        else:
            s = (old_ctx / wl - low) / (high - low)
            out.append(1 / ((1 - s) / factor + s))
    return [float(v) for v in torch.tensor(out, dtype=torch.float32)]


def yarn_attn(factor, log_mul=0.0, deepseek=False):
    # src/llama-context.cpp: yarn_attn_factor for ext_factor != 0, in float32
    def mscale(scale, m):
        return np.float32(1) if scale <= 1 else np.float32(0.1) * np.float32(m) * np.log(np.float32(scale)) + np.float32(1)
    fac = np.float32(factor)
    if log_mul:
        m = log_mul if deepseek and log_mul != 1 else 1.0
        a = mscale(fac, m) / mscale(fac, log_mul)
    else:
        a = mscale(fac, 1.0)
    a = a * (np.float32(1) / (np.float32(1) + np.float32(0.1) * np.log(fac)))
    return float(np.float32(a))


def cases(config_dir):
    phi3 = json.load(open(os.path.join(config_dir, "extra", "phi-3-mini-128k.json")))
    long_f = [f32(v) for v in phi3["rope_scaling"]["long_factor"]]
    short_f = [f32(v) for v in phi3["rope_scaling"]["short_factor"]]
    base = dict(freq_scale=1.0, ext_factor=0.0, attn_factor=1.0, beta_fast=32.0, beta_slow=1.0,
                sections=[0, 0, 0, 0], factors=[], permuted=False, mrope_pos=False)
    yield dict(base, name="llama-3.1-8b (norm, permuted, llama3 rope_freqs)", mode=NORM,
               config="llama-3.1-8b.json",
               n_dims=128, head_dim=128, n_ctx_orig=131072, freq_base=500000.0, permuted=True,
               factors=llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192), style="neox")
    yield dict(base, name="qwen3-8b (neox)", mode=NEOX, n_dims=128, head_dim=128,
               config="qwen3-8b.json",
               n_ctx_orig=40960, freq_base=1000000.0, style="neox")
    yield dict(base, name="gpt-oss-20b (neox, yarn 32)", mode=NEOX, n_dims=64, head_dim=64,
               config="gpt-oss-20b.json",
               n_ctx_orig=4096, freq_base=150000.0, freq_scale=f32(1 / 32), ext_factor=1.0,
               attn_factor=yarn_attn(32.0), style="neox",
               # positions + 1 fails, but the diagnosis names nothing: ggml's float32 YaRN drift
               # (2.7 at position 10^6) is past what a shift under its numerics is tried within
               shift_named=False)
    yield dict(base, name="deepseek-v3 (norm, yarn 40, log_mul 0.1)", mode=NORM, n_dims=64,
               config="deepseek-v3.json",
               head_dim=64, n_ctx_orig=4096, freq_base=10000.0, freq_scale=f32(1 / 40),
               ext_factor=1.0, attn_factor=yarn_attn(40.0, 0.1, True), style="gptj")
    yield dict(base, name="phi-3-mini-128k (neox, longrope long factors)", mode=NEOX, n_dims=96,
               config="extra/phi-3-mini-128k.json",
               head_dim=96, n_ctx_orig=4096, freq_base=10000.0, factors=long_f,
               attn_factor=f32(math.sqrt(1 + math.log(32) / math.log(4096))), style="neox")
    # llama.cpp picks LongRoPE's factors by its context, not by the positions
    # (src/llama-model.cpp get_rope_factors: long when n_ctx_seq > n_ctx_orig_yarn): at n_ctx
    # 4096 the short factors rotate every position, up to 2^20 (posenc's --n-ctx)
    yield dict(base, name="phi-3-mini-128k (neox, longrope short factors, --n-ctx 4096)",
               mode=NEOX, n_dims=96, config="extra/phi-3-mini-128k.json", head_dim=96,
               n_ctx_orig=4096, freq_base=10000.0, factors=short_f, n_ctx=4096,
               attn_factor=f32(math.sqrt(1 + math.log(32) / math.log(4096))), style="neox")
    # the converter classes with a partial dimension count and no freq_base (10000), Cohere's
    # interleaved pairs (NORM, not permuted), Granite (LlamaModel's permutation)
    yield dict(base, name="phi-2 (neox, partial 32 of 80)", mode=NEOX, n_dims=32, head_dim=80,
               config="gguf/phi-2.json", n_ctx_orig=2048, freq_base=10000.0, style="neox")
    yield dict(base, name="pythia-70m (neox, partial 16 of 64)", mode=NEOX, n_dims=16,
               head_dim=64, config="gguf/pythia-70m.json", n_ctx_orig=2048, freq_base=10000.0,
               style="neox")
    yield dict(base, name="stablelm-2-1.6b (neox, partial 16 of 64)", mode=NEOX, n_dims=16,
               head_dim=64, config="gguf/stablelm-2-1_6b.json", n_ctx_orig=4096,
               freq_base=10000.0, style="neox")
    yield dict(base, name="command-r (norm, interleaved, not permuted)", mode=NORM, n_dims=128,
               head_dim=128, config="gguf/command-r.json", n_ctx_orig=131072,
               freq_base=8000000.0, style="gptj")
    yield dict(base, name="granite-3.3-8b (norm, permuted)", mode=NORM, n_dims=128,
               head_dim=128, config="families/granite-3.3-8b-instruct.json", n_ctx_orig=131072,
               freq_base=10000000.0, permuted=True, style="neox")
    # Gemma 3: llama.cpp runs the sliding layers with freq_base_swa (10000, scale 1) and the
    # global ones with freq_base 1e6 and the linear factor 8 (conversion/gemma.py Gemma3Model,
    # src/llama-model.cpp get_rope_freq_base / get_rope_freq_scale)
    yield dict(base, name="gemma-3-27b sliding layers (neox, freq_base_swa)", mode=NEOX,
               n_dims=128, head_dim=128, config="gemma-3-27b-it.json",
               layer_type="sliding_attention", n_ctx_orig=131072, freq_base=10000.0,
               style="neox")
    yield dict(base, name="gemma-3-27b global layers (neox, linear 8)", mode=NEOX, n_dims=128,
               head_dim=128, config="gemma-3-27b-it.json", layer_type="full_attention",
               n_ctx_orig=131072, freq_base=1000000.0, freq_scale=f32(1 / 8), style="neox")
    # the architectures lib/model/llama_arch.def gained rules for; every argument from the
    # converter class (conversion/MODEL.py) and the graph (src/models/ARCH.cpp) as
    # lib/model/llama_arch.def cites
    # Gemma 2: Gemma2Model writes no freq_base, so llama.cpp's default 10000 (the config's too)
    yield dict(base, name="gemma-2-9b (neox, no freq_base key)", mode=NEOX, n_dims=256,
               head_dim=256, config="families/gemma-2-9b-it.json", n_ctx_orig=8192,
               freq_base=10000.0, style="neox")
    # GLM-4.5 and MiniMax-M2.5: partial dimension counts (head_dim 128 * 0.5; rotary_dim 64)
    yield dict(base, name="glm-4.5 (neox, partial 64 of 128)", mode=NEOX, n_dims=64,
               head_dim=128, config="glm-4.5.json", n_ctx_orig=131072, freq_base=1000000.0,
               style="neox")
    yield dict(base, name="minimax-m2.5 (neox, rotary_dim 64 of 128)", mode=NEOX, n_dims=64,
               head_dim=128, config="minimax-m2.5.json", n_ctx_orig=196608,
               freq_base=5000000.0, style="neox")
    # MiMo-V2-Flash: int(192 * 0.334) = 64 dims; sliding layers rope.freq_base_swa (the
    # config's swa_rope_theta 10000) with scale 1, full layers the file's 5e6 (mimo2.cpp)
    yield dict(base, name="mimo-v2-flash sliding layers (neox, 64 of 192, freq_base_swa)",
               mode=NEOX, n_dims=64, head_dim=192, config="mimo-v2-flash.json",
               layer_type="sliding_attention", n_ctx_orig=262144, freq_base=10000.0,
               style="neox")
    yield dict(base, name="mimo-v2-flash full layers (neox, 64 of 192)", mode=NEOX, n_dims=64,
               head_dim=192, config="mimo-v2-flash.json", layer_type="full_attention",
               n_ctx_orig=262144, freq_base=5000000.0, style="neox")
    # Llama 4 Scout: LlamaModel's llama3 rope_freqs (factor 16, low = high = 1, M0 8192);
    # Llama4Model does not permute (undo_permute False): complex pairs are NORM's
    yield dict(base, name="llama-4-scout (norm, not permuted, llama3 rope_freqs 16)", mode=NORM,
               n_dims=128, head_dim=128, config="llama-4-scout-17b-16e-instruct.json",
               n_ctx_orig=10485760, freq_base=500000.0,
               factors=llama3_factors(500000.0, 128, 16.0, 1.0, 1.0, 8192), style="gptj")
    # GLM-5 (glm-dsa): DeepseekV2Model's q_pe/k_pe, qk_rope_head_dim 64, no YaRN
    yield dict(base, name="glm-5 (norm, MLA q_pe 64)", mode=NORM, n_dims=64, head_dim=64,
               config="glm-5.json", n_ctx_orig=202752, freq_base=1000000.0, style="gptj")
    # Cohere 2: interleaved (NORM, not permuted), rotary_pct 1, only the sliding layers rotate
    yield dict(base, name="cohere2 sliding layers (norm, interleaved)", mode=NORM, n_dims=128,
               head_dim=128, config="gguf/cohere2-shape.json", layer_type="sliding_attention",
               n_ctx_orig=8192, freq_base=50000.0, style="gptj")
    # OLMo 3 with YaRN 8: full layers YaRN (ext_factor 1, freq_scale 1/8, n_ctx_orig 8192);
    # sliding layers freq_scale 1, ext_factor 0, attn_factor 1 (olmo2.cpp)
    yield dict(base, name="olmo3 full layers (neox, yarn 8)", mode=NEOX, n_dims=128,
               head_dim=128, config="gguf/olmo3-yarn-shape.json", layer_type="full_attention",
               n_ctx_orig=8192, freq_base=500000.0, freq_scale=f32(1 / 8), ext_factor=1.0,
               attn_factor=yarn_attn(8.0), style="neox", shift_named=False)
    yield dict(base, name="olmo3 sliding layers (neox, unscaled)", mode=NEOX, n_dims=128,
               head_dim=128, config="gguf/olmo3-yarn-shape.json",
               layer_type="sliding_attention", n_ctx_orig=8192, freq_base=500000.0,
               style="neox",
               # llama.cpp leaves these layers unscaled where transformers v5 applies YaRN to
               # them too: ggml is 0.26 from the config's exact tables already at positions
               # 0-63, so a shift is not tried within that distance (fails, not named)
               shift_named=False)
    # Qwen2-VL and Qwen3-VL from their configs, text positions (all axes equal)
    yield dict(base, name="qwen2-vl-7b config (mrope 16 24 24, text positions)", mode=MROPE,
               n_dims=128, head_dim=128, config="extra/qwen2-vl-7b.json", n_ctx_orig=32768,
               freq_base=1000000.0, sections=[16, 24, 24, 0], style="neox")
    yield dict(base, name="qwen3-vl-235b config (imrope 24 20 20, text positions)",
               mode=IMROPE, n_dims=128, head_dim=128, config="gguf/qwen3-vl-235b-sections.json",
               n_ctx_orig=262144, freq_base=5000000.0, sections=[24, 20, 20, 0], style="neox",
               # ggml's float32 drift at theta 5e6 reaches 0.4 at position 10^6: as gpt-oss,
               # positions + 1 fails without a name
               shift_named=False)
    yield dict(base, name="gptj pairs (norm), partial 64 of 256", mode=NORM, n_dims=64,
               head_dim=256, n_ctx_orig=2048, freq_base=10000.0, style="gptj")
    yield dict(base, name="qwen3.5-27b (imrope, partial 64 of 256)", mode=IMROPE, n_dims=64,
               config="qwen3.5-27b.json",
               head_dim=256, n_ctx_orig=262144, freq_base=10000000.0, sections=[11, 11, 10, 0],
               style="neox")
    yield dict(base, name="qwen3.5-27b (imrope, 3-axis positions)", mode=IMROPE, n_dims=64,
               config="qwen3.5-27b.json",
               head_dim=256, n_ctx_orig=262144, freq_base=10000000.0, sections=[11, 11, 10, 0],
               style="neox", mrope_pos=True)
    yield dict(base, name="qwen3-vl (imrope 24 20 20, 3-axis positions)", mode=IMROPE,
               n_dims=128, head_dim=128, n_ctx_orig=262144, freq_base=5000000.0,
               sections=[24, 20, 20, 0], style="neox", mrope_pos=True)
    yield dict(base, name="qwen2-vl-7b (mrope 16 24 24, 3-axis positions)", mode=MROPE,
               n_dims=128, head_dim=128, n_ctx_orig=32768, freq_base=1000000.0,
               sections=[16, 24, 24, 0], style="neox", mrope_pos=True)


def positions_of(c):
    T = len(POSITIONS)
    if c["mode"] not in (MROPE, IMROPE):
        return POSITIONS
    t = POSITIONS
    if c["mrope_pos"]:  # an image grid after some text: h and w lag behind t
        h = [max(0, p - (i % 7) * 3) for i, p in enumerate(POSITIONS)]
        w = [max(0, p - (i % 5) * 11) for i, p in enumerate(POSITIONS)]
    else:  # text tokens: llama-graph.cpp llm_graph_input_pos::set_input
        h = w = t
    return list(t) + list(h) + list(w) + [0] * T


def ppos_of(c, ppos):
    """positions_of for a list other than POSITIONS (text tokens)"""
    if c["mode"] not in (MROPE, IMROPE):
        return list(ppos)
    return list(ppos) * 3 + [0] * len(ppos)


def spec(c, pos, q):
    head = ("mode %d n_dims %d head_dim %d n_head %d n_ctx_orig %d freq_base %s freq_scale %s "
            "ext_factor %s attn_factor %s beta_fast %s beta_slow %s sections %s factors %d %s "
            "positions %d %s q ") % (
        c["mode"], c["n_dims"], c["head_dim"], q.shape[1], c["n_ctx_orig"],
        float(np.float32(c["freq_base"])).hex(), float(np.float32(c["freq_scale"])).hex(),
        float(np.float32(c["ext_factor"])).hex(), float(np.float32(c["attn_factor"])).hex(),
        float(np.float32(c["beta_fast"])).hex(), float(np.float32(c["beta_slow"])).hex(),
        " ".join(str(s) for s in c["sections"]), len(c["factors"]),
        " ".join(float(np.float32(f)).hex() for f in c["factors"]), len(pos),
        " ".join(str(p) for p in pos))
    return head + " ".join(float(v).hex() for v in q.reshape(-1)) + "\n"


def run(argv, text):
    r = subprocess.run(argv, input=text, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s failed (%d): %s" % (argv[0], r.returncode, r.stderr.strip()))
    return r.stdout.splitlines()


def floats(lines):
    return np.array([[float.fromhex(v) for v in ln.split()] for ln in lines], dtype=np.float64)


def ordered(x):
    """float32 values as integers in the order of the reals (ulp distance = difference)."""
    i = np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulp(a, b):
    a, b = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    if np.isnan(a).any() or np.isnan(b).any():
        return float("inf")
    return int(np.max(np.abs(ordered(a) - ordered(b)))) if a.size else 0


def ulp16(a, b):
    """ulp distance of float16 values (given as float64)"""
    ia = np.asarray(a, dtype=np.float16).view(np.int16).astype(np.int64)
    ib = np.asarray(b, dtype=np.float16).view(np.int16).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFF), ib)
    if np.isnan(a).any() or np.isnan(b).any():
        return float("inf")
    return int(np.max(np.abs(ia - ib))) if ia.size else 0


def to_ggml(c, q):
    """q [T, H, D] in transformers' layout -> the layout ggml rotates (the converter's permute)."""
    if not c["permuted"]:
        return q
    d = c["head_dim"]
    out = np.empty_like(q)
    out[..., 0:d:2] = q[..., : d // 2]
    out[..., 1:d:2] = q[..., d // 2:]
    return out


def from_ggml(c, q):
    if not c["permuted"]:
        return q
    d = c["head_dim"]
    out = np.empty_like(q)
    out[..., : d // 2] = q[..., 0:d:2]
    out[..., d // 2:] = q[..., 1:d:2]
    return out


def nctx(c):
    return ["--n-ctx", str(c["n_ctx"])] if c.get("n_ctx") else []


def posenc_cli(posenc, c, config_dir, q):
    """cos, sin (gen --precision ggml), the rotated q (apply --precision ggml) and the exact
    cos, sin (gen --precision exact) at POSITIONS."""
    cfg = os.path.join(config_dir, c["config"])
    lt = ["--layer-type", c["layer_type"]] if c.get("layer_type") else []
    plist = ",".join(str(p) for p in POSITIONS)
    tabs = {}
    for prec in ("ggml", "exact"):
        out = "tab_%s.npz" % prec
        subprocess.run([posenc, "gen", "--config", cfg, *lt, "--precision", prec,
                        *(nctx(c) if prec == "ggml" else []), "--layout", "half",
                        "--positions", plist, "-o", out], check=True)
        z = np.load(out)
        tabs[prec] = (z["cos"].astype(np.float64), z["sin"].astype(np.float64))
    rot = {}
    for dt in (np.float32, np.float16):
        np.save("q.npy", q.astype(dt))
        subprocess.run([posenc, "apply", "q.npy", "--config", cfg, *lt, "--precision", "ggml",
                        *nctx(c), "--layout", "shd", "--positions", plist, "-o", "q_rot.npy"],
                       check=True)
        r = np.load("q_rot.npy")
        assert r.dtype == dt, r.dtype
        rot[dt] = r.astype(np.float64)
    return tabs["ggml"], rot[np.float32], rot[np.float16], tabs["exact"]


def verify_real(posenc, c, config_dir, q, gr):
    """None when posenc verify passes ggml's rotated q (as q and k) naming the ggml profile, and
    with --precision ggml --max-ulp 0; else what it said."""
    cfg = os.path.join(config_dir, c["config"])
    lt = ["--layer-type", c["layer_type"]] if c.get("layer_type") else []
    plist = ",".join(str(p) for p in POSITIONS)
    np.save("vq.npy", q.astype(np.float32))
    np.save("vr.npy", gr.astype(np.float32))
    base = [posenc, "verify", "--config", cfg, *lt, "--q", "vq.npy", "--k", "vq.npy", "--expect-q",
            "vr.npy", "--expect-k", "vr.npy", "--layout", "shd", "--positions", plist, *nctx(c)]
    for extra, want in (([], "ggml profile (llama.cpp)"), (["--precision", "ggml", "--max-ulp", "0"],
                                                           "0 ulp at most")):
        r = subprocess.run(base + extra, capture_output=True, text=True)
        line = [ln for ln in r.stdout.splitlines() if " expect_q " in ln]
        if r.returncode != 0 or not line or want not in line[0]:
            return "exit %d: %s%s" % (r.returncode, r.stdout.strip()[-600:], r.stderr.strip())
    return None


def ggml_layout(posenc, c, config_dir, q, run_ggml):
    """posenc on q/k as llama.cpp itself holds them (--layout ggml: [tokens, heads, head_dim],
    the converter's permuted order for Llama): verify passes ggml's own output naming llama.cpp
    and bit for bit under --precision ggml --max-ulp 0, apply --layout ggml --precision ggml is
    0 ulp from it, and planted mistakes made by the same ggml fail: the other rope mode (NORM
    and NEOX swapped), freq_base doubled, the positions one too far. For M-RoPE, positions are
    given as llama.cpp's positions tensor, 4 rows of n_tokens. Returns a list of failures."""
    cfg = os.path.join(config_dir, c["config"])
    lt = ["--layer-type", c["layer_type"]] if c.get("layer_type") else []
    T = len(POSITIONS)
    gq = to_ggml(c, q)
    gr = run_ggml(c, POSITIONS)
    np.save("lq.npy", gq.astype(np.float32))
    np.save("lr.npy", gr.astype(np.float32))
    if c["mode"] in (MROPE, IMROPE):
        np.save("lpos.npy", np.array([POSITIONS] * 4, dtype=np.int32))
    else:
        np.save("lpos.npy", np.array(POSITIONS, dtype=np.int32))
    base = [posenc, "verify", "--config", cfg, *lt, "--q", "lq.npy", "--k", "lq.npy", "--layout",
            "ggml", "--positions", "lpos.npy", *nctx(c)]
    bad = []
    for extra, want in (([], "ggml profile (llama.cpp)"),
                        (["--precision", "ggml", "--max-ulp", "0"], "0 ulp at most")):
        r = subprocess.run(base + ["--expect-q", "lr.npy", "--expect-k", "lr.npy"] + extra,
                           capture_output=True, text=True)
        line = [ln for ln in r.stdout.splitlines() if " expect_q " in ln]
        if r.returncode != 0 or not line or want not in line[0]:
            bad.append("verify%s: exit %d: %s%s" % (" " + " ".join(extra) if extra else "",
                                                   r.returncode, r.stdout.strip()[-400:],
                                                   r.stderr.strip()))
    subprocess.run([posenc, "apply", "lq.npy", "--config", cfg, *lt, "--precision", "ggml",
                    *nctx(c), "--layout", "ggml", "--positions", "lpos.npy", "-o", "lq_rot.npy"],
                   check=True)
    u = ulp(gr, np.load("lq_rot.npy"))
    if u != 0:
        bad.append("apply --layout ggml --precision ggml: %s ulp from ggml" % u)
    other = NEOX if c["mode"] == NORM else NORM
    planted = [("rope mode %s" % ("neox" if other == NEOX else "norm"), dict(c, mode=other,
                sections=[0, 0, 0, 0]), POSITIONS, "--style"),
               ("freq_base doubled", dict(c, freq_base=2 * c["freq_base"]), POSITIONS, None),
               ("positions + 1", c, [p + 1 for p in POSITIONS],
                "positions shifted by" if c.get("shift_named", True) else None)]
    for what, pc, ppos, named in planted:
        np.save("lw.npy", run_ggml(pc, ppos).astype(np.float32))
        r = subprocess.run(base + ["--expect-q", "lw.npy", "--expect-k", "lw.npy"],
                           capture_output=True, text=True)
        if r.returncode != 1:
            bad.append("planted %s: exit %d, not 1" % (what, r.returncode))
        elif named and named not in r.stdout:
            bad.append("planted %s fails but is not named (%s): %s" %
                       (what, named, " | ".join(ln for ln in r.stdout.splitlines()
                                                if "diagnosis" in ln)))
    return bad


def posenc_apply3(posenc, c, config_dir, q, pos):
    """the rotated q (apply --precision ggml) with [3, seq] positions (t, h, w)"""
    cfg = os.path.join(config_dir, c["config"])
    lt = ["--layer-type", c["layer_type"]] if c.get("layer_type") else []
    T = len(POSITIONS)
    np.save("pos3.npy", np.array(pos[:3 * T], dtype=np.int64).reshape(3, T))
    np.save("q.npy", q)
    subprocess.run([posenc, "apply", "q.npy", "--config", cfg, *lt, "--precision", "ggml", "--layout",
                    "shd", "--positions", "pos3.npy", "-o", "q_rot.npy"], check=True)
    return np.load("q_rot.npy").astype(np.float64)


def drift(gc, gs, ec, es):
    rows = {"0-63": slice(0, 64)}
    for p in (4096, 131072, 1000000):
        rows[str(p)] = [POSITIONS.index(p)]
    return ", ".join("%s %.2g" % (k, max(np.max(np.abs(gc[r] - ec[r])), np.max(np.abs(gs[r] - es[r]))))
                     for k, r in rows.items())


def main():
    harness, cpu_lib, prog, config_dir = sys.argv[1:5]
    posenc = sys.argv[5] if len(sys.argv) > 5 else None
    bad = 0
    for c in cases(config_dir):
        pos = positions_of(c)
        T, H, D, nd = len(POSITIONS), 2, c["head_dim"], c["n_dims"]
        nf = nd // 2
        # cos/sin from ggml: unit vectors in ggml's own pairing
        unit = np.zeros((T, 1, D), dtype=np.float32)
        if c["mode"] == NORM:
            unit[..., 0:nd:2] = 1
        else:
            unit[..., :nf] = 1
        g = floats(run([harness, cpu_lib], spec(c, pos, unit)))
        if c["mode"] == NORM:
            gc, gs = g[:, 0:nd:2], g[:, 1:nd:2]
        else:
            gc, gs = g[:, :nf], g[:, nf:nd]
        rng = np.random.default_rng(1234)
        q = rng.standard_normal((T, H, D)).astype(np.float32)
        gr = floats(run([harness, cpu_lib], spec(c, pos, to_ggml(c, q)))).reshape(T, H, D)
        gr = from_ggml(c, gr)
        out = run([prog, c["style"]], spec(c, pos, q))
        cs = floats([ln[3:] for ln in out if ln.startswith("cs ")])
        pr = floats([ln for ln in out if not ln.startswith("cs")]).reshape(T, H, D)
        uc, us, ur = ulp(gc, cs[:, :nf]), ulp(gs, cs[:, nf:]), ulp(gr, pr)
        acs = max(np.max(np.abs(gc - cs[:, :nf])), np.max(np.abs(gs - cs[:, nf:])))
        ar = np.max(np.abs(gr - pr)) / np.max(np.abs(q))
        ok = max(uc, us, ur) <= MAX_ULP
        bad += not ok
        print("%s %s: cos %s ulp, sin %s ulp, rotated %s ulp; max |d cos/sin| %.2g, "
              "max |d rotated| / max |q| %.2g (%d positions up to %d)" %
              ("ok  " if ok else "FAIL", c["name"], uc, us, ur, acs, ar, T, max(POSITIONS)))
        if posenc and c.get("config") and c["mrope_pos"]:
            ur = ulp(gr, posenc_apply3(posenc, c, config_dir, q, pos))
            ok = ur <= MAX_ULP
            bad += not ok
            print("%s %s via posenc apply --precision ggml (%s, [3, seq] positions): rotated %s "
                  "ulp" % ("ok  " if ok else "FAIL", c["name"], c["config"], ur))
        elif posenc and c.get("config"):
            (tc, ts), rot, rot16, (ec, es) = posenc_cli(posenc, c, config_dir, q)
            # ggml on an f16 q: f16 in, float32 rotation, f16 out (ops.cpp rotate_pairs)
            g16 = floats(run([harness, cpu_lib, "f16"], spec(c, pos, to_ggml(c, q.astype(np.float16)))))
            g16 = from_ggml(c, g16.reshape(T, H, D))
            uc, us, ur, u16 = ulp(gc, tc), ulp(gs, ts), ulp(gr, rot), ulp16(g16, rot16)
            ok = max(uc, us, ur, u16) <= MAX_ULP
            bad += not ok
            print("%s %s via posenc gen/apply --precision ggml (%s): cos %s ulp, sin %s ulp, "
                  "rotated %s ulp, rotated f16 %s ulp (of f16); ggml - exact: %s" %
                  ("ok  " if ok else "FAIL", c["name"], c["config"], uc, us, ur, u16,
                   drift(gc, gs, ec, es)))
            # posenc verify on llama.cpp's real output: it passes as llama.cpp's (the ggml
            # profile, element for element), and bit for bit under --precision ggml --max-ulp 0
            said = verify_real(posenc, c, config_dir, q, gr)
            ok = said is None
            bad += not ok
            print("%s %s via posenc verify on ggml's own output (%s)%s" %
                  ("ok  " if ok else "FAIL", c["name"], c["config"], "" if ok else ": " + said))
        if posenc and c.get("config") and not c["mrope_pos"]:
            def run_ggml(pc, ppos, q=q):
                return floats(run([harness, cpu_lib], spec(pc, positions_of(dict(pc, mrope_pos=False))
                                                           if ppos is POSITIONS else
                                                           ppos_of(pc, ppos), to_ggml(c, q)))).reshape(q.shape)
            said = ggml_layout(posenc, c, config_dir, q, run_ggml)
            bad += bool(said)
            print("%s %s via posenc verify/apply --layout ggml on ggml's own tensors (%s)%s" %
                  ("ok  " if not said else "FAIL", c["name"], c["config"],
                   ": 0 ulp, planted mode swap, freq_base and positions + 1 fail" if not said
                   else ": " + "; ".join(said)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
