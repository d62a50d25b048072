#!/usr/bin/python3
"""Tiny random-weight models, converted by llama.cpp's own convert_hf_to_gguf.py, for the capture test.

Usage:
  llama_tiny.py LLAMA_CPP_SRC make ROW DIR
      write DIR/config.json and DIR/model.safetensors: the model of row ROW (ROWS below), with
      the RoPE hyperparameters of the published model it stands for, 2 layers and head_dim 64
      unless the row says why not, and random weights
  llama_tiny.py LLAMA_CPP_SRC batch LIST
      the lines of LIST, "make ROW DIR" or "convert DIR OUT.gguf [MISTAKE]", in one process;
      "try-convert DIR OUT.gguf" writes the converter's error to OUT.gguf.err and goes on
  llama_tiny.py LLAMA_CPP_SRC rows
      the rows, on one line
  llama_tiny.py LLAMA_CPP_SRC convert DIR OUT.gguf [MISTAKE]
      convert DIR with the class convert_hf_to_gguf.py picks for its architectures[0]
      (conversion.get_model_class), weights included, as ModelBase.write does; MISTAKE changes
      one thing before the file is written (as tests/interop/gguf_convert.py):
        freq_base=V      {arch}.rope.freq_base set to V
        drop=TENSOR      the tensor left out (rope_freqs.weight)
        setu=KEY=V       {arch}.KEY set to uint32 V
        set=KEY=V        {arch}.KEY set to float32 V
        seta=KEY=V,...   {arch}.KEY set to the int32 array V,...
        unset=KEY        {arch}.KEY left out
        arch=NAME        written as architecture NAME (general.architecture and every {arch}.*
                         key renamed): llama.cpp then runs NAME's graph and rope mode
      or, in MISTAKE's place, outtype=f16: the weights written as F16 (convert_hf_to_gguf.py
      --outtype f16), nothing changed

The vocabulary: every class's set_vocab needs transformers' AutoTokenizer or sentencepiece,
neither installable here, so set_vocab is replaced by the converter's own _set_vocab_none
(tokenizer.ggml.model "none", conversion/base.py) plus {arch}.vocab_size, which llama.cpp's
loader reads for a model without vocabulary (src/llama-vocab.cpp llama_vocab::impl::load: "adding
N dummy tokens"). The capture decodes token ids, not text, so nothing else changes. The
transformers stub and the float8 placeholders are those of tests/interop/gguf_convert.py.
"""
import json
import os
import struct
import sys
import types
from pathlib import Path

import numpy as np

src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "gguf-py"))
sys.path.insert(0, src)

H, NH, NKV, HD, FF, V, L = 128, 2, 1, 64, 128, 64, 2


def llama_like(cfg, bias=False, qk_norm=False, tied=False, extra_norms=()):
    """the llama-shaped tensors of cfg (its hidden_size, heads and head_dim, else hidden_size /
    heads)"""
    h, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or h // nh
    t = {"model.embed_tokens.weight": (V, h), "model.norm.weight": (h,)}
    if not tied:
        t["lm_head.weight"] = (V, h)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_proj.weight"] = (nh * hd, h)
        t[p + "self_attn.k_proj.weight"] = (nkv * hd, h)
        t[p + "self_attn.v_proj.weight"] = (nkv * hd, h)
        t[p + "self_attn.o_proj.weight"] = (h, nh * hd)
        if bias:
            t[p + "self_attn.q_proj.bias"] = (nh * hd,)
            t[p + "self_attn.k_proj.bias"] = (nkv * hd,)
            t[p + "self_attn.v_proj.bias"] = (nkv * hd,)
        if qk_norm:
            t[p + "self_attn.q_norm.weight"] = (hd,)
            t[p + "self_attn.k_norm.weight"] = (hd,)
        t[p + "mlp.gate_proj.weight"] = (FF, h)
        t[p + "mlp.up_proj.weight"] = (FF, h)
        t[p + "mlp.down_proj.weight"] = (h, FF)
        for n in ("input_layernorm", "post_attention_layernorm") + tuple(extra_norms):
            t[p + n + ".weight"] = (h,)
    return t


def base(arch, model_type, **kw):
    cfg = {"architectures": [arch], "model_type": model_type, "hidden_size": H,
           "intermediate_size": FF, "num_attention_heads": NH, "num_key_value_heads": NKV,
           "head_dim": HD, "num_hidden_layers": L, "vocab_size": V, "rms_norm_eps": 1e-6,
           "hidden_act": "silu", "torch_dtype": "float32", "tie_word_embeddings": False}
    cfg.update(kw)
    return cfg


def row_llama():
    """Llama 3.1 (rope_freqs from llama3 scaling; the converter permutes q/k)"""
    cfg = base("LlamaForCausalLM", "llama", rope_theta=500000.0, max_position_embeddings=131072,
               rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8192})
    return cfg, llama_like(cfg)


def row_qwen2():
    """Qwen2 (NEOX, q/k/v bias, theta 1e6)"""
    cfg = base("Qwen2ForCausalLM", "qwen2", rope_theta=1000000.0, max_position_embeddings=32768)
    return cfg, llama_like(cfg, bias=True)


def row_qwen3():
    """Qwen3 with YaRN factor 4 over 32768 (its model card's long-context setting)"""
    cfg = base("Qwen3ForCausalLM", "qwen3", rope_theta=1000000.0, max_position_embeddings=40960,
               rope_scaling={"rope_type": "yarn", "factor": 4.0,
                             "original_max_position_embeddings": 32768})
    return cfg, llama_like(cfg, qk_norm=True)


def row_phi3():
    """Phi-3-mini-128k (LongRoPE short and long factors, original context 4096)"""
    rng = np.random.default_rng(7)
    short = [float(x) for x in np.round(1 + rng.random(HD // 2) * 0.1, 4)]
    long = [float(x) for x in np.round(1 + np.linspace(0, 1, HD // 2) ** 2 * 40, 4)]
    cfg = base("Phi3ForCausalLM", "phi3", rope_theta=10000.0, max_position_embeddings=131072,
               original_max_position_embeddings=4096, sliding_window=262144,
               rope_scaling={"type": "longrope", "short_factor": short, "long_factor": long})
    cfg["num_key_value_heads"] = NH  # fused qkv_proj: Phi-3 has as many kv heads as heads
    t = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "self_attn.qkv_proj.weight"] = (3 * NH * HD, H)
        t[p + "self_attn.o_proj.weight"] = (H, NH * HD)
        t[p + "mlp.gate_up_proj.weight"] = (2 * FF, H)
        t[p + "mlp.down_proj.weight"] = (H, FF)
        t[p + "input_layernorm.weight"] = (H,)
        t[p + "post_attention_layernorm.weight"] = (H,)
    return cfg, t


def row_gemma3():
    """Gemma 3 text (sliding layers theta 1e4, global layers 1e6 with linear 8). Six layers:
    llama.cpp takes the sliding layers from a period of 6, not from layer_types
    (src/models/gemma3.cpp: swa_period 6 unless the GGUF says otherwise, and
    conversion/gemma.py Gemma3Model writes no sliding_window_pattern), so only layer 5 is
    global in both"""
    cfg = base("Gemma3ForCausalLM", "gemma3_text", rope_theta=1000000.0,
               rope_local_base_freq=10000.0, max_position_embeddings=131072,
               rope_scaling={"rope_type": "linear", "factor": 8.0}, sliding_window=512,
               num_hidden_layers=6, layer_types=["sliding_attention"] * 5 + ["full_attention"],
               query_pre_attn_scalar=HD,
               hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True)
    return cfg, llama_like(cfg, qk_norm=True, tied=True,
                           extra_norms=("pre_feedforward_layernorm", "post_feedforward_layernorm"))


def row_granite():
    """Granite 3 (llama graph with multipliers, theta 1e7)"""
    cfg = base("GraniteForCausalLM", "granite", rope_theta=10000000.0,
               max_position_embeddings=131072, embedding_multiplier=12.0,
               residual_multiplier=0.22, attention_multiplier=0.015625, logits_scaling=8.0)
    return cfg, llama_like(cfg)


def row_smollm3():
    """SmolLM3 (llama graph, every 4th layer without RoPE: no_rope_layers 0)"""
    cfg = base("SmolLM3ForCausalLM", "smollm3", rope_theta=5000000.0,
               max_position_embeddings=65536, num_hidden_layers=4, no_rope_layers=[1, 1, 1, 0],
               no_rope_layer_interval=4)
    return cfg, llama_like(cfg)


def row_arcee():
    """Arcee AFM (llama graph, ReLU^2 MLP without gate, YaRN factor 4 over 16384)"""
    cfg = base("ArceeForCausalLM", "arcee", rope_theta=10000.0, max_position_embeddings=65536,
               hidden_act="relu2",
               rope_scaling={"rope_type": "yarn", "factor": 4.0,
                             "original_max_position_embeddings": 16384})
    t = llama_like(cfg)
    return cfg, {k: v for k, v in t.items() if "gate_proj" not in k}


def layernorm(t, p):
    t[p + ".weight"] = (H,)
    t[p + ".bias"] = (H,)


def row_stablelm():
    """StableLM 2 (NEOX on 25% of head_dim, LayerNorm with bias)"""
    cfg = base("StableLmForCausalLM", "stablelm", rope_theta=10000.0,
               max_position_embeddings=4096, partial_rotary_factor=0.25, layer_norm_eps=1e-5,
               use_qkv_bias=True, num_key_value_heads=NH)
    t = {"model.embed_tokens.weight": (V, H), "lm_head.weight": (V, H)}
    layernorm(t, "model.norm")
    for i in range(L):
        p = f"model.layers.{i}."
        for n in "qkv":
            t[p + f"self_attn.{n}_proj.weight"] = (NH * HD, H)
            t[p + f"self_attn.{n}_proj.bias"] = (NH * HD,)
        t[p + "self_attn.o_proj.weight"] = (H, NH * HD)
        t[p + "mlp.gate_proj.weight"] = (FF, H)
        t[p + "mlp.up_proj.weight"] = (FF, H)
        t[p + "mlp.down_proj.weight"] = (H, FF)
        layernorm(t, p + "input_layernorm")
        layernorm(t, p + "post_attention_layernorm")
    return cfg, t


def row_gptneox():
    """Pythia / GPT-NeoX (NEOX on rotary_pct 0.25 of head_dim, fused query_key_value)"""
    cfg = base("GPTNeoXForCausalLM", "gpt_neox", rotary_emb_base=10000, rotary_pct=0.25,
               max_position_embeddings=2048, layer_norm_eps=1e-5, use_parallel_residual=True,
               hidden_act="gelu", num_key_value_heads=NH)
    t = {"gpt_neox.embed_in.weight": (V, H), "embed_out.weight": (V, H)}
    layernorm(t, "gpt_neox.final_layer_norm")
    for i in range(L):
        p = f"gpt_neox.layers.{i}."
        t[p + "attention.query_key_value.weight"] = (3 * NH * HD, H)
        t[p + "attention.query_key_value.bias"] = (3 * NH * HD,)
        t[p + "attention.dense.weight"] = (H, NH * HD)
        t[p + "attention.dense.bias"] = (H,)
        t[p + "mlp.dense_h_to_4h.weight"] = (FF, H)
        t[p + "mlp.dense_h_to_4h.bias"] = (FF,)
        t[p + "mlp.dense_4h_to_h.weight"] = (H, FF)
        t[p + "mlp.dense_4h_to_h.bias"] = (H,)
        layernorm(t, p + "input_layernorm")
        layernorm(t, p + "post_attention_layernorm")
    return cfg, t


def row_phi2():
    """Phi-2 (NEOX on partial_rotary_factor 0.4 of head_dim 80: 32 dims)"""
    h, hd, ff = 160, 80, 640  # llama.cpp's phi2 wants n_ff = 4 * n_embd
    cfg = base("PhiForCausalLM", "phi", rope_theta=10000.0, max_position_embeddings=2048,
               partial_rotary_factor=0.4, layer_norm_eps=1e-5, hidden_size=h, head_dim=hd,
               num_key_value_heads=NH, hidden_act="gelu_new", intermediate_size=ff)
    t = {"model.embed_tokens.weight": (V, h), "lm_head.weight": (V, h), "lm_head.bias": (V,),
         "model.final_layernorm.weight": (h,), "model.final_layernorm.bias": (h,)}
    for i in range(L):
        p = f"model.layers.{i}."
        for n in "qkv":
            t[p + f"self_attn.{n}_proj.weight"] = (NH * hd, h)
            t[p + f"self_attn.{n}_proj.bias"] = (NH * hd,)
        t[p + "self_attn.dense.weight"] = (h, NH * hd)
        t[p + "self_attn.dense.bias"] = (h,)
        t[p + "mlp.fc1.weight"] = (ff, h)
        t[p + "mlp.fc1.bias"] = (ff,)
        t[p + "mlp.fc2.weight"] = (h, ff)
        t[p + "mlp.fc2.bias"] = (h,)
        t[p + "input_layernorm.weight"] = (h,)
        t[p + "input_layernorm.bias"] = (h,)
    return cfg, t


def row_command_r():
    """Command-R (NORM, q/k not permuted: interleaved pairs in the checkpoint itself)"""
    cfg = base("CohereForCausalLM", "cohere", rope_theta=8000000.0,
               max_position_embeddings=131072, layer_norm_eps=1e-5, logit_scale=0.0625,
               use_qk_norm=False, tie_word_embeddings=True)
    t = llama_like(cfg, tied=True)
    return cfg, {k: v for k, v in t.items() if "post_attention_layernorm" not in k}


def row_deepseek2():
    """DeepSeek-V3 (MLA: RoPE on q_pe/k_pe, views of q and of the compressed kv; YaRN 40)"""
    nope, rope, vd, qr, kvr = 32, 64, 32, 64, 64
    cfg = base("DeepseekV3ForCausalLM", "deepseek_v3", rope_theta=10000.0,
               max_position_embeddings=163840, num_key_value_heads=NH, q_lora_rank=qr,
               kv_lora_rank=kvr, qk_nope_head_dim=nope, qk_rope_head_dim=rope, v_head_dim=vd,
               rope_scaling={"type": "yarn", "factor": 40.0, "beta_fast": 32, "beta_slow": 1,
                             "mscale": 1.0, "mscale_all_dim": 1.0,
                             "original_max_position_embeddings": 4096})
    del cfg["head_dim"]
    t = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_a_proj.weight"] = (qr, H)
        t[p + "self_attn.q_a_layernorm.weight"] = (qr,)
        t[p + "self_attn.q_b_proj.weight"] = (NH * (nope + rope), qr)
        t[p + "self_attn.kv_a_proj_with_mqa.weight"] = (kvr + rope, H)
        t[p + "self_attn.kv_a_layernorm.weight"] = (kvr,)
        t[p + "self_attn.kv_b_proj.weight"] = (NH * (nope + vd), kvr)
        t[p + "self_attn.o_proj.weight"] = (H, NH * vd)
        t[p + "mlp.gate_proj.weight"] = (FF, H)
        t[p + "mlp.up_proj.weight"] = (FF, H)
        t[p + "mlp.down_proj.weight"] = (H, FF)
        t[p + "input_layernorm.weight"] = (H,)
        t[p + "post_attention_layernorm.weight"] = (H,)
    return cfg, t


def moe(t, cfg, shared=False, prefix="model.", packed=False):
    """replace each layer's MLP by cfg's experts (model.layers.N.mlp.experts.E.*_proj, the
    router mlp.gate; packed: experts.gate_up_proj and experts.down_proj, as Qwen3-VL-MoE's
    checkpoint has them), and a shared expert with its gate (Qwen2-MoE)"""
    e, ff = cfg["num_experts"], cfg["moe_intermediate_size"]
    for i in range(cfg["num_hidden_layers"]):
        p = f"{prefix}layers.{i}.mlp."
        for n in ("gate_proj", "up_proj", "down_proj"):
            del t[p + n + ".weight"]
        t[p + "gate.weight"] = (e, H)
        if packed:
            t[p + "experts.gate_up_proj"] = (e, H, 2 * ff)
            t[p + "experts.down_proj"] = (e, ff, H)
        for x in range(0 if packed else e):
            t[p + f"experts.{x}.gate_proj.weight"] = (ff, H)
            t[p + f"experts.{x}.up_proj.weight"] = (ff, H)
            t[p + f"experts.{x}.down_proj.weight"] = (H, ff)
        if shared:
            sf = cfg["shared_expert_intermediate_size"]
            t[p + "shared_expert.gate_proj.weight"] = (sf, H)
            t[p + "shared_expert.up_proj.weight"] = (sf, H)
            t[p + "shared_expert.down_proj.weight"] = (H, sf)
            t[p + "shared_expert_gate.weight"] = (1, H)
    return t


def row_qwen3moe():
    """Qwen3-MoE (Qwen3-30B-A3B's RoPE: NEOX, theta 1e6; 4 experts, 2 per token)"""
    cfg = base("Qwen3MoeForCausalLM", "qwen3_moe", rope_theta=1000000.0,
               max_position_embeddings=40960, num_experts=4, num_experts_per_tok=2,
               moe_intermediate_size=32, decoder_sparse_step=1, mlp_only_layers=[],
               norm_topk_prob=True)
    return cfg, moe(llama_like(cfg, qk_norm=True), cfg)


def row_qwen2moe():
    """Qwen2-MoE (Qwen1.5-MoE-A2.7B's RoPE: NEOX, theta 1e6; q/k/v bias, a shared expert)"""
    cfg = base("Qwen2MoeForCausalLM", "qwen2_moe", rope_theta=1000000.0,
               max_position_embeddings=8192, num_experts=4, num_experts_per_tok=2,
               moe_intermediate_size=32, shared_expert_intermediate_size=64,
               decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=False)
    return cfg, moe(llama_like(cfg, bias=True), cfg, shared=True)


def row_gpt_oss():
    """gpt-oss (NEOX, theta 150000, YaRN 32 over 4096 with truncate false; sliding and full
    layers alternate, both with the same RoPE; attention sinks; unquantized experts)"""
    e, ff = 4, 32
    cfg = base("GptOssForCausalLM", "gpt_oss", rope_theta=150000.0,
               max_position_embeddings=131072, num_local_experts=e, num_experts_per_tok=2,
               experts_per_token=2, intermediate_size=ff, sliding_window=128,
               layer_types=["sliding_attention", "full_attention"], attention_bias=True,
               swiglu_limit=7.0,
               rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                             "beta_slow": 1.0, "original_max_position_embeddings": 4096,
                             "truncate": False})
    t = llama_like(cfg, bias=True)
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "self_attn.o_proj.bias"] = (H,)
        t[p + "self_attn.sinks"] = (NH,)
        for n in ("gate_proj", "up_proj", "down_proj"):
            del t[p + "mlp." + n + ".weight"]
        t[p + "mlp.router.weight"] = (e, H)
        t[p + "mlp.router.bias"] = (e,)
        t[p + "mlp.experts.gate_up_proj"] = (e, H, 2 * ff)
        t[p + "mlp.experts.gate_up_proj_bias"] = (e, 2 * ff)
        t[p + "mlp.experts.down_proj"] = (e, ff, H)
        t[p + "mlp.experts.down_proj_bias"] = (e, H)
    return cfg, t


def row_mistral3():
    """Ministral 3 text (llama graph, YaRN 16 over 16384 with mscale_all_dim, theta 1e6 in
    rope_parameters)"""
    cfg = base("Ministral3ForCausalLM", "ministral3", max_position_embeddings=262144,
               sliding_window=None,
               rope_parameters={"type": "yarn", "rope_type": "yarn", "rope_theta": 1000000.0,
                                "factor": 16.0, "original_max_position_embeddings": 16384,
                                "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                                "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1})
    return cfg, llama_like(cfg)


def row_qwen35():
    """Qwen3.5 text (interleaved M-RoPE on 64 of 256 dims, sections [11, 11, 10], theta 1e7; a
    gated-delta-net layer before each full-attention layer; q_proj carries the output gate)"""
    hd, kd, vd = 256, 32, 32
    cfg = base("Qwen3_5ForCausalLM", "qwen3_5_text", max_position_embeddings=262144,
               head_dim=hd, attn_output_gate=True, full_attention_interval=2,
               layer_types=["linear_attention", "full_attention"], linear_conv_kernel_dim=4,
               linear_key_head_dim=kd, linear_num_key_heads=1, linear_num_value_heads=1,
               linear_value_head_dim=vd, mlp_only_layers=[],
               rope_parameters={"mrope_interleaved": True, "mrope_section": [11, 11, 10],
                                "rope_type": "default", "rope_theta": 10000000,
                                "partial_rotary_factor": 0.25})
    t = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    for i in range(L):
        p = f"model.layers.{i}."
        if cfg["layer_types"][i] == "full_attention":
            t[p + "self_attn.q_proj.weight"] = (2 * NH * hd, H)
            t[p + "self_attn.k_proj.weight"] = (NKV * hd, H)
            t[p + "self_attn.v_proj.weight"] = (NKV * hd, H)
            t[p + "self_attn.o_proj.weight"] = (H, NH * hd)
            t[p + "self_attn.q_norm.weight"] = (hd,)
            t[p + "self_attn.k_norm.weight"] = (hd,)
        else:
            a = p + "linear_attn."
            t[a + "in_proj_qkv.weight"] = (2 * kd + vd, H)
            t[a + "in_proj_z.weight"] = (vd, H)
            t[a + "in_proj_b.weight"] = (1, H)
            t[a + "in_proj_a.weight"] = (1, H)
            t[a + "conv1d.weight"] = (2 * kd + vd, 1, 4)
            t[a + "A_log"] = (1,)
            t[a + "dt_bias"] = (1,)
            t[a + "norm.weight"] = (vd,)
            t[a + "out_proj.weight"] = (H, vd)
        t[p + "mlp.gate_proj.weight"] = (FF, H)
        t[p + "mlp.up_proj.weight"] = (FF, H)
        t[p + "mlp.down_proj.weight"] = (H, FF)
        t[p + "input_layernorm.weight"] = (H,)
        t[p + "post_attention_layernorm.weight"] = (H,)
    return cfg, t


def row_qwen35moe():
    """Qwen3.5-MoE text (Qwen3.5's RoPE; 4 experts and a shared expert)"""
    cfg, t = row_qwen35()
    cfg.update(architectures=["Qwen3_5MoeForCausalLM"], model_type="qwen3_5_moe_text",
               num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
               shared_expert_intermediate_size=64)
    return cfg, moe(t, cfg, shared=True)


def row_qwen3next():
    """Qwen3-Next (NEOX on 64 of 256 dims, theta 1e7; a gated-delta-net layer (fused
    in_proj_qkvz, in_proj_ba) before each full-attention layer; experts and a shared expert)"""
    hd, kd, vd = 256, 32, 32
    cfg = base("Qwen3NextForCausalLM", "qwen3_next", rope_theta=10000000.0,
               max_position_embeddings=262144, head_dim=hd, partial_rotary_factor=0.25,
               full_attention_interval=2, layer_types=["linear_attention", "full_attention"],
               linear_conv_kernel_dim=4, linear_key_head_dim=kd, linear_num_key_heads=1,
               linear_num_value_heads=1, linear_value_head_dim=vd, num_experts=4,
               num_experts_per_tok=2, moe_intermediate_size=32,
               shared_expert_intermediate_size=64, decoder_sparse_step=1, mlp_only_layers=[],
               norm_topk_prob=True)
    t = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    for i in range(L):
        p = f"model.layers.{i}."
        if cfg["layer_types"][i] == "full_attention":
            t[p + "self_attn.q_proj.weight"] = (2 * NH * hd, H)
            t[p + "self_attn.k_proj.weight"] = (NKV * hd, H)
            t[p + "self_attn.v_proj.weight"] = (NKV * hd, H)
            t[p + "self_attn.o_proj.weight"] = (H, NH * hd)
            t[p + "self_attn.q_norm.weight"] = (hd,)
            t[p + "self_attn.k_norm.weight"] = (hd,)
        else:
            a = p + "linear_attn."
            t[a + "in_proj_qkvz.weight"] = (2 * kd + 2 * vd, H)
            t[a + "in_proj_ba.weight"] = (2, H)
            t[a + "conv1d.weight"] = (2 * kd + vd, 1, 4)
            t[a + "A_log"] = (1,)
            t[a + "dt_bias"] = (1,)
            t[a + "norm.weight"] = (vd,)
            t[a + "out_proj.weight"] = (H, vd)
        t[p + "mlp.gate_proj.weight"] = (FF, H)
        t[p + "mlp.up_proj.weight"] = (FF, H)
        t[p + "mlp.down_proj.weight"] = (H, FF)
        t[p + "input_layernorm.weight"] = (H,)
        t[p + "post_attention_layernorm.weight"] = (H,)
    return cfg, moe(t, cfg, shared=True)


def row_gemma2():
    """Gemma 2 (gemma-2-9b: theta 1e4, sliding window 4096 on every other layer, soft-capping;
    conversion/gemma.py Gemma2Model writes no rope.freq_base, llama.cpp's default is 10000)"""
    cfg = base("Gemma2ForCausalLM", "gemma2", rope_theta=10000.0, max_position_embeddings=8192,
               sliding_window=4096, query_pre_attn_scalar=HD, attn_logit_softcapping=50.0,
               final_logit_softcapping=30.0, hidden_activation="gelu_pytorch_tanh",
               tie_word_embeddings=True)
    return cfg, llama_like(cfg, tied=True,
                           extra_norms=("pre_feedforward_layernorm", "post_feedforward_layernorm"))


def row_gemma():
    """Gemma (gemma-7b: theta 1e4, NEOX; GemmaModel writes no rope.freq_base either)"""
    cfg = base("GemmaForCausalLM", "gemma", rope_theta=10000.0, max_position_embeddings=8192,
               hidden_act="gelu", hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True)
    return cfg, llama_like(cfg, tied=True)


def row_qwen2vl():
    """Qwen2-VL text (Qwen2-VL-7B-Instruct: M-RoPE sections [16, 24, 24] of head_dim 128 =
    hidden_size / heads, theta 1e6; the vision tower left out)"""
    cfg = base("Qwen2VLForConditionalGeneration", "qwen2_vl", rope_theta=1000000.0,
               max_position_embeddings=32768, hidden_size=256,
               rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]})
    del cfg["head_dim"]
    return cfg, llama_like(cfg, bias=True)


def row_qwen3vl():
    """Qwen3-VL text (Qwen3-VL-8B-Instruct's text_config: interleaved M-RoPE sections
    [24, 20, 20] of head_dim 128, theta 5e6; the checkpoint's model.language_model. prefix).
    Four layers: llama.cpp adds the 3 deepstack inputs after the first 3 layers, and after the
    last one its rows no longer match (src/models/qwen3vl.cpp)"""
    text = base("Qwen3VLForConditionalGeneration", "qwen3_vl_text", rope_theta=5000000,
                max_position_embeddings=262144, head_dim=128, num_hidden_layers=4,
                rope_scaling={"mrope_interleaved": True, "mrope_section": [24, 20, 20],
                              "rope_type": "default"})
    cfg = {"architectures": text.pop("architectures"), "model_type": "qwen3_vl",
           "text_config": text, "vision_config": {"deepstack_visual_indexes": [8, 16, 24]},
           "tie_word_embeddings": False}
    t = llama_like(text, qk_norm=True)
    return cfg, {k.replace("model.", "model.language_model.", 1): v for k, v in t.items()}


def row_qwen3vlmoe():
    """Qwen3-VL-MoE text (Qwen3-VL-30B-A3B-Instruct's text_config: Qwen3-VL's RoPE; 4 experts
    packed as the checkpoint has them, experts.gate_up_proj and experts.down_proj)"""
    cfg, t = row_qwen3vl()
    text = cfg["text_config"]
    cfg.update(architectures=["Qwen3VLMoeForConditionalGeneration"], model_type="qwen3_vl_moe")
    text.update(model_type="qwen3_vl_moe_text", num_experts=4, num_experts_per_tok=2,
                moe_intermediate_size=32, decoder_sparse_step=1, mlp_only_layers=[],
                norm_topk_prob=True)
    return cfg, moe(t, text, prefix="model.language_model.", packed=True)


def row_llama4():
    """Llama 4 Scout text (theta 5e5, llama3 scaling 16 over 8192 as rope_freqs; chunked
    attention; llama.cpp skips RoPE on every 4th layer; 4 experts and a shared expert, packed
    as the checkpoint has them, under language_model.)"""
    e, ff = 4, 32
    text = base("Llama4ForConditionalGeneration", "llama4_text", rope_theta=500000.0,
                max_position_embeddings=10485760, num_hidden_layers=4, attention_chunk_size=8192,
                interleave_moe_layer_step=1, intermediate_size=ff, intermediate_size_mlp=FF,
                num_local_experts=e, num_experts_per_tok=1, use_qk_norm=True,
                rope_scaling={"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                              "high_freq_factor": 1.0,
                              "original_max_position_embeddings": 8192})
    cfg = {"architectures": text.pop("architectures"), "model_type": "llama4",
           "text_config": text, "vision_config": {}, "tie_word_embeddings": False}
    t = {}
    for k, v in llama_like(text).items():
        if ".mlp." in k:
            continue
        t["language_model." + k] = v
    for i in range(text["num_hidden_layers"]):
        p = f"language_model.model.layers.{i}.feed_forward."
        t[p + "router.weight"] = (e, H)
        t[p + "experts.gate_up_proj"] = (e, H, 2 * ff)
        t[p + "experts.down_proj"] = (e, ff, H)
        for n in ("gate_proj", "up_proj"):
            t[p + f"shared_expert.{n}.weight"] = (ff, H)
        t[p + "shared_expert.down_proj.weight"] = (H, ff)
    return cfg, t


def row_glm4():
    """GLM-4-0414 (GLM-4-9B-0414: NORM on half of head_dim 128 (partial_rotary_factor 0.5),
    theta 1e4; fused gate_up_proj, post-attention and post-MLP norms)"""
    cfg = base("Glm4ForCausalLM", "glm4", rope_theta=10000.0, max_position_embeddings=32768,
               head_dim=128, partial_rotary_factor=0.5, attention_bias=True)
    t = llama_like(cfg, bias=True,
                   extra_norms=("post_self_attn_layernorm", "post_mlp_layernorm"))
    for i in range(L):
        p = f"model.layers.{i}.mlp."
        del t[p + "gate_proj.weight"], t[p + "up_proj.weight"]
        t[p + "gate_up_proj.weight"] = (2 * FF, H)
    return cfg, t


def biased_moe(t, p, e, ff, w=("gate_proj", "up_proj", "down_proj"),
               bias="gate.e_score_correction_bias"):
    """the MLP under p (if any) replaced by e experts of ff, their gate, up and down named w,
    and a sigmoid router with its correction bias (GLM-4.5, MiMo-V2; MiniMax-M2's names)"""
    for n in ("gate_proj", "up_proj", "down_proj"):
        t.pop(p + n + ".weight", None)
    t[p + "gate.weight"] = (e, H)
    t[p + bias] = (e,)
    for x in range(e):
        for n, shape in zip(w, ((ff, H), (ff, H), (H, ff))):
            t[p + f"experts.{x}.{n}.weight"] = shape


def row_glm4moe():
    """GLM-4.5 (NEOX on half of head_dim 128, theta 1e6; q/k norms, q/k/v bias; a dense first
    layer, then 4 routed experts with a sigmoid router's correction bias and a shared expert)"""
    e, ff = 4, 32
    cfg = base("Glm4MoeForCausalLM", "glm4_moe", rope_theta=1000000, rope_scaling=None,
               max_position_embeddings=131072, head_dim=128, partial_rotary_factor=0.5,
               attention_bias=True, use_qk_norm=True, n_routed_experts=e, n_shared_experts=1,
               num_experts_per_tok=2, moe_intermediate_size=ff, first_k_dense_replace=1,
               routed_scaling_factor=2.5, norm_topk_prob=True, n_group=1, topk_group=1,
               num_nextn_predict_layers=0)
    t = llama_like(cfg, bias=True, qk_norm=True)
    p = "model.layers.1.mlp."
    biased_moe(t, p, e, ff)
    t[p + "shared_experts.gate_proj.weight"] = (ff, H)
    t[p + "shared_experts.up_proj.weight"] = (ff, H)
    t[p + "shared_experts.down_proj.weight"] = (H, ff)
    return cfg, t


def row_olmo2():
    """Olmo 3's shape (model_type olmo3: sliding window 4096 on 3 of every 4 layers, q/k norms
    over all heads, norms after attention and MLP only) with a YaRN scaling of the form its
    long-context configs use (factor 8 over 8192, attention_factor 0.1 ln 8 + 1); the values are
    this test's, not read from a published config. llama.cpp rotates the sliding layers without
    the scaling (src/models/olmo2.cpp); transformers' Olmo3Model has one rotary_emb for every
    layer (models/olmo3/modeling_olmo3.py), so the two differ on those layers."""
    cfg = base("Olmo3ForCausalLM", "olmo3", rope_theta=500000, max_position_embeddings=65536,
               num_hidden_layers=4, num_key_value_heads=NH, sliding_window=4096,
               layer_types=["sliding_attention"] * 3 + ["full_attention"],
               rope_scaling={"rope_type": "yarn", "factor": 8.0,
                             "original_max_position_embeddings": 8192,
                             "attention_factor": 1.2079441541679836, "beta_fast": 32,
                             "beta_slow": 1})
    t = llama_like(cfg, extra_norms=("post_feedforward_layernorm",))
    for i in range(4):
        p = f"model.layers.{i}."
        del t[p + "input_layernorm.weight"]
        t[p + "self_attn.q_norm.weight"] = (NH * HD,)
        t[p + "self_attn.k_norm.weight"] = (NH * HD,)
    return cfg, t


def row_olmoe():
    """OLMoE (OLMoE-1B-7B-0924: NEOX, theta 1e4; q/k norms over all heads; 4 experts of
    intermediate_size, which llama.cpp takes as the experts' size)"""
    cfg = base("OlmoeForCausalLM", "olmoe", rope_theta=10000.0, max_position_embeddings=4096,
               num_key_value_heads=NH, num_experts=4, num_experts_per_tok=2,
               intermediate_size=32, norm_topk_prob=False, clip_qkv=None)
    t = moe(llama_like(cfg), dict(cfg, moe_intermediate_size=cfg["intermediate_size"]))
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_norm.weight"] = (NH * HD,)
        t[p + "self_attn.k_norm.weight"] = (NH * HD,)
    return cfg, t


def row_starcoder2():
    """StarCoder2 (starcoder2-7b: NEOX, theta 1e6; LayerNorm with bias, biased projections,
    c_fc/c_proj MLP, tied embeddings)"""
    cfg = base("Starcoder2ForCausalLM", "starcoder2", rope_theta=1000000,
               max_position_embeddings=16384, sliding_window=4096, norm_epsilon=1e-5,
               use_bias=True, hidden_act="gelu_pytorch_tanh", tie_word_embeddings=True)
    del cfg["rms_norm_eps"], cfg["head_dim"]
    t = {"model.embed_tokens.weight": (V, H)}
    layernorm(t, "model.norm")
    for i in range(L):
        p = f"model.layers.{i}."
        for n, shape in (("self_attn.q_proj", (NH * HD, H)), ("self_attn.k_proj", (NKV * HD, H)),
                         ("self_attn.v_proj", (NKV * HD, H)), ("self_attn.o_proj", (H, NH * HD)),
                         ("mlp.c_fc", (FF, H)), ("mlp.c_proj", (H, FF))):
            t[p + n + ".weight"] = shape
            t[p + n + ".bias"] = shape[:1]
        layernorm(t, p + "input_layernorm")
        layernorm(t, p + "post_attention_layernorm")
    return cfg, t


def row_seed_oss():
    """Seed-OSS (Seed-OSS-36B: NEOX, theta 1e7, head_dim 128; q/k/v bias)"""
    cfg = base("SeedOssForCausalLM", "seed_oss", rope_theta=10000000.0,
               max_position_embeddings=524288, head_dim=128, attention_bias=True,
               attention_out_bias=False)
    return cfg, llama_like(cfg, bias=True)


def row_ernie4_5():
    """ERNIE 4.5 (ERNIE-4.5-0.3B: interleaved pairs, llama.cpp's NORM with no permutation,
    theta 5e5, head_dim 128, tied embeddings)"""
    cfg = base("Ernie4_5_ForCausalLM", "ernie4_5", rope_theta=500000.0,
               max_position_embeddings=131072, head_dim=128, use_bias=False,
               tie_word_embeddings=True)
    return cfg, llama_like(cfg, tied=True)


def row_cohere2():
    """Command R7B (c4ai-command-r7b-12-2024: NORM pairs, theta 5e4; sliding window 4096 on 3 of
    every 4 layers, the 4th without RoPE; parallel attention and MLP after one LayerNorm)"""
    cfg = base("Cohere2ForCausalLM", "cohere2", rope_theta=50000.0,
               max_position_embeddings=8192, num_hidden_layers=4, layer_norm_eps=1e-5,
               logit_scale=0.25, rotary_pct=1.0, sliding_window=4096, sliding_window_pattern=4,
               layer_types=["sliding_attention"] * 3 + ["full_attention"],
               use_qk_norm=False, tie_word_embeddings=True)
    t = llama_like(cfg, tied=True)
    return cfg, {k: v for k, v in t.items() if "post_attention_layernorm" not in k}


def row_minimax_m2():
    """MiniMax-M2 (MiniMax-M2.5: NEOX on rotary_dim 64 of head_dim 128, theta 5e6; q/k norms
    over all heads; 4 experts w1/w2/w3 of intermediate_size with a routing bias)"""
    e, ff = 4, 32
    cfg = base("MiniMaxM2ForCausalLM", "minimax_m2", rope_theta=5000000,
               max_position_embeddings=196608, head_dim=128, rotary_dim=64, intermediate_size=ff,
               num_local_experts=e, num_experts_per_tok=2, use_qk_norm=True,
               qk_norm_type="per_layer", use_routing_bias=True, scoring_func="sigmoid",
               shared_intermediate_size=0)
    t = {k: v for k, v in llama_like(cfg).items() if ".mlp." not in k}
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_norm.weight"] = (NH * 128,)
        t[p + "self_attn.k_norm.weight"] = (NKV * 128,)
        biased_moe(t, p + "block_sparse_moe.", e, ff, ("w1", "w3", "w2"),
                   "e_score_correction_bias")
    return cfg, t


def row_mimo2():
    """MiMo-V2-Flash (NEOX on int(192 * 0.334) = 64 dims of head_dim 192, v_head_dim 128; full
    layers theta 5e6, sliding layers (hybrid_layer_pattern 1, window 128) swa_rope_theta 1e4
    with attention sinks and more kv heads; a dense first layer, then 4 experts; no MTP
    weights, which the loader allows). The pinned llama.cpp cannot load what its converter
    writes for it (t_capture_llama.sh, the table of architectures without a row)"""
    e, ff, hd, vd = 4, 32, 192, 128
    cfg = base("MiMoV2FlashForCausalLM", "mimo_v2_flash", rope_theta=5000000,
               swa_rope_theta=10000, max_position_embeddings=262144, head_dim=hd,
               v_head_dim=vd, partial_rotary_factor=0.334, sliding_window=128,
               sliding_window_size=128, hybrid_layer_pattern=[0, 1], moe_layer_freq=[0, 1],
               swa_num_attention_heads=NH, swa_num_key_value_heads=NH, swa_head_dim=hd,
               swa_v_head_dim=vd, n_routed_experts=e, moe_intermediate_size=ff,
               num_experts_per_tok=2, n_shared_experts=None, norm_topk_prob=True,
               scoring_func="sigmoid", n_group=1, topk_group=1, topk_method="noaux_tc",
               routed_scaling_factor=None, layernorm_epsilon=1e-5, attention_value_scale=0.707,
               add_swa_attention_sink_bias=True, add_full_attention_sink_bias=False)
    del cfg["rms_norm_eps"]
    t = llama_like(cfg)
    p = "model.layers.1."
    t[p + "self_attn.k_proj.weight"] = (NH * hd, H)
    t[p + "self_attn.v_proj.weight"] = (NH * vd, H)
    t[p + "self_attn.attention_sink_bias"] = (NH,)
    t["model.layers.0.self_attn.v_proj.weight"] = (NKV * vd, H)
    for i in range(L):
        t[f"model.layers.{i}.self_attn.o_proj.weight"] = (H, NH * vd)
    biased_moe(t, p + "mlp.", e, ff)
    return cfg, t



def row_gemma3n():
    """Gemma 3n text (gemma-3n-E2B's text_config: global layers theta 1e6, sliding layers
    (window 512) rope_local_base_freq 1e4; five layers, as llama.cpp's period of 5 makes the 5th
    global (src/models/gemma3n.cpp; the converter's per-layer array is not read); AltUp, LAuReL
    and per-layer inputs of the sizes llama.cpp fixes (llama_hparams n_embd_altup 256,
    laurel_rank 64), under the checkpoint's model.language_model. prefix)"""
    n, alt, hpl, rank = 5, 4, 256, 64
    text = base("Gemma3nForConditionalGeneration", "gemma3n_text", rope_theta=1000000.0,
                rope_local_base_freq=10000.0, max_position_embeddings=32768,
                sliding_window=512, num_hidden_layers=n,
                layer_types=["sliding_attention"] * 4 + ["full_attention"],
                altup_num_inputs=alt, altup_active_idx=0, altup_coef_clip=120.0,
                altup_correct_scale=True, hidden_size_per_layer_input=hpl, laurel_rank=rank,
                num_kv_shared_layers=0, activation_sparsity_pattern=[0.95] * 2 + [0.0] * 3,
                final_logit_softcapping=30.0, query_pre_attn_scalar=HD,
                hidden_activation="gelu_pytorch_tanh", vocab_size_per_layer_input=V,
                tie_word_embeddings=True)
    cfg = {"architectures": text.pop("architectures"), "model_type": "gemma3n",
           "text_config": text, "tie_word_embeddings": True}
    t = llama_like(text, qk_norm=True, tied=True,
                   extra_norms=("pre_feedforward_layernorm", "post_feedforward_layernorm",
                                "post_per_layer_input_norm", "altup.router_norm",
                                "laurel.post_laurel_norm"))
    t["model.embed_tokens_per_layer.weight"] = (V, n * hpl)
    t["model.per_layer_model_projection.weight"] = (n * hpl, H)
    t["model.per_layer_projection_norm.weight"] = (hpl,)
    for i in range(alt - 1):
        t[f"model.altup_projections.{i}.weight"] = (H, H)
        t[f"model.altup_unembed_projections.{i}.weight"] = (H, H)
    for i in range(n):
        p = f"model.layers.{i}."
        t[p + "per_layer_input_gate.weight"] = (hpl, H)
        t[p + "per_layer_projection.weight"] = (H, hpl)
        t[p + "altup.correction_coefs.weight"] = (alt, alt)
        t[p + "altup.correct_output_scale"] = (H,)
        t[p + "altup.prediction_coefs.weight"] = (alt * alt, alt)
        t[p + "altup.modality_router.weight"] = (alt, H)
        t[p + "laurel.linear_left.weight"] = (rank, H)
        t[p + "laurel.linear_right.weight"] = (H, rank)
    return cfg, {k.replace("model.", "model.language_model.", 1): v for k, v in t.items()}


def dsa_tail(t, cfg, e, ff, idx_hd, idx_nh):
    """what GLM-5 and DeepSeek-V3.2 add to row_deepseek2's tensors: the DSA lightning indexer
    of every layer, and layer 1 as e sigmoid-routed experts of size ff with one shared expert"""
    for i in range(L):
        p = f"model.layers.{i}.self_attn.indexer."
        t[p + "wq_b.weight"] = (idx_nh * idx_hd, cfg["q_lora_rank"])
        t[p + "wk.weight"] = (idx_hd, H)
        layernorm(t, p + "k_norm")
        t[p + "weights_proj.weight"] = (idx_nh, H)
    p = "model.layers.1.mlp."
    biased_moe(t, p, e, ff)
    for n, shape in (("gate_proj", (ff, H)), ("up_proj", (ff, H)), ("down_proj", (H, ff))):
        t[p + f"shared_experts.{n}.weight"] = shape


def row_glm_dsa():
    """GLM-5 (MLA as DeepSeek-V3's, RoPE on the 64 qk_rope dims in NORM pairs, theta 1e6 in
    rope_parameters; the DSA lightning indexer, whose q and k llama.cpp ropes too; a dense
    first layer, then 4 sigmoid-routed experts and a shared one; no MTP weights)"""
    e, ff, idx_hd, idx_nh = 4, 32, 128, 2
    cfg, t = row_deepseek2()
    del cfg["rope_scaling"], cfg["rope_theta"]
    cfg.update(architectures=["GlmMoeDsaForCausalLM"], model_type="glm_moe_dsa",
               max_position_embeddings=202752, head_dim=64, rope_interleave=True,
               rope_parameters={"rope_theta": 1000000, "rope_type": "default"},
               index_head_dim=idx_hd, index_n_heads=idx_nh, index_topk=2048,
               indexer_rope_interleave=True, first_k_dense_replace=1, n_routed_experts=e,
               n_shared_experts=1, moe_intermediate_size=ff, num_experts_per_tok=2,
               norm_topk_prob=True, routed_scaling_factor=2.5, scoring_func="sigmoid",
               topk_method="noaux_tc", n_group=1, topk_group=1, num_nextn_predict_layers=0)
    dsa_tail(t, cfg, e, ff, idx_hd, idx_nh)
    return cfg, t


def row_exaone4():
    """EXAONE 4.0 1.2B (NEOX, llama3 factors with factor 16, theta 1e6; post-norms and q/k
    norms, no input norm; no sliding window, so every layer rotated)"""
    cfg = base("Exaone4ForCausalLM", "exaone4", rope_theta=1000000.0,
               max_position_embeddings=65536, sliding_window=None,
               layer_types=["full_attention"] * L,
               rope_scaling={"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})
    t = llama_like(cfg, qk_norm=True, extra_norms=("post_feedforward_layernorm",))
    return cfg, {k: v for k, v in t.items() if not k.endswith("input_layernorm.weight")}


def row_hunyuan_dense():
    """Hunyuan dense (NEOX; rope_scaling dynamic alpha 1000 folded into the base, theta 1e4 *
    1000^(64/62); q/k norms as query_layernorm / key_layernorm)"""
    cfg = base("HunYuanDenseV1ForCausalLM", "hunyuan_v1_dense", rope_theta=10000.0,
               max_position_embeddings=32768,
               rope_scaling={"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                             "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"})
    t = llama_like(cfg)
    for i in range(cfg["num_hidden_layers"]):
        t[f"model.layers.{i}.self_attn.query_layernorm.weight"] = (HD,)
        t[f"model.layers.{i}.self_attn.key_layernorm.weight"] = (HD,)
    return cfg, t


def row_olmo():
    """OLMo (NORM: the converter permutes q/k; non-parametric LayerNorms, so no norm weights)"""
    cfg = base("OlmoForCausalLM", "olmo", rope_theta=10000.0, max_position_embeddings=4096,
               clip_qkv=None)
    return cfg, {k: v for k, v in llama_like(cfg).items() if "norm" not in k}


def row_internlm2():
    """InternLM2 (NORM: the converter splits the grouped wqkv and permutes q/k; theta 1e6)"""
    cfg = base("InternLM2ForCausalLM", "internlm2", rope_theta=1000000.0,
               max_position_embeddings=32768, bias=False)
    layer = {"attention.wqkv": ((NH + 2 * NKV) * HD, H), "attention.wo": (H, NH * HD),
             "feed_forward.w1": (FF, H), "feed_forward.w3": (FF, H), "feed_forward.w2": (H, FF),
             "attention_norm": (H,), "ffn_norm": (H,)}
    t = {"model.tok_embeddings.weight": (V, H), "model.norm.weight": (H,), "output.weight": (V, H)}
    for i in range(cfg["num_hidden_layers"]):
        t.update({f"model.layers.{i}.{k}.weight": v for k, v in layer.items()})
    return cfg, t


def row_nemotron():
    """Nemotron (NEOX on partial_rotary_factor 0.5 of head_dim: int(0.5 * 128) // 2 = 32 dims;
    LayerNorm1P with bias, MLP up/down without gate)"""
    cfg = base("NemotronForCausalLM", "nemotron", rope_theta=10000.0, partial_rotary_factor=0.5,
               max_position_embeddings=4096, norm_eps=1e-5, hidden_act="relu2")
    t = {k: v for k, v in llama_like(cfg).items() if "gate_proj" not in k and "layernorm" not in k
         and k != "model.norm.weight"}
    layernorm(t, "model.norm")
    for i in range(cfg["num_hidden_layers"]):
        for n in ("input_layernorm", "post_attention_layernorm"):
            layernorm(t, f"model.layers.{i}.{n}")
    return cfg, t


def row_jais2():
    """Jais 2 (NEOX on the whole head, theta 5e5; LayerNorm with bias, biases on every
    projection, an MLP without gate)"""
    cfg = base("Jais2ForCausalLM", "jais2", rope_theta=500000.0, max_position_embeddings=8192,
               num_key_value_heads=NH, layer_norm_eps=1e-5, hidden_act="relu2")
    t = {k: v for k, v in llama_like(cfg, bias=True).items()
         if "gate_proj" not in k and "layernorm" not in k and k != "model.norm.weight"}
    layernorm(t, "model.norm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        for n in ("input_layernorm", "post_attention_layernorm"):
            layernorm(t, p + n)
        for n in ("k_proj", "v_proj"):   # as many kv heads as heads (biases of n_embd)
            t[p + f"self_attn.{n}.weight"] = (NH * HD, H)
            t[p + f"self_attn.{n}.bias"] = (NH * HD,)
        t[p + "self_attn.o_proj.bias"] = (H,)
        t[p + "mlp.up_proj.bias"] = (FF,)
        t[p + "mlp.down_proj.bias"] = (H,)
    return cfg, t


def row_chatglm():
    """ChatGLM3 (NORM on the first half of each head, pairs (2i, 2i+1) as the checkpoint holds
    them; theta 10000 * rope_ratio 2; fused query_key_value with bias, multi-query)"""
    cfg = {"architectures": ["ChatGLMModel"], "model_type": "chatglm", "hidden_size": H,
           "num_attention_heads": NH, "kv_channels": HD, "multi_query_attention": True,
           "multi_query_group_num": NKV, "num_layers": L, "ffn_hidden_size": FF,
           "seq_length": 32768, "padded_vocab_size": V, "vocab_size": V, "rope_ratio": 2,
           "layernorm_epsilon": 1e-5, "rmsnorm": True, "add_qkv_bias": True,
           "add_bias_linear": False, "torch_dtype": "float32"}
    layer = {"input_layernorm.weight": (H,), "post_attention_layernorm.weight": (H,),
             "self_attention.query_key_value.weight": ((NH + 2 * NKV) * HD, H),
             "self_attention.query_key_value.bias": ((NH + 2 * NKV) * HD,),
             "self_attention.dense.weight": (H, NH * HD),
             "mlp.dense_h_to_4h.weight": (2 * FF, H), "mlp.dense_4h_to_h.weight": (H, FF)}
    t = {"transformer.embedding.word_embeddings.weight": (V, H),
         "transformer.encoder.final_layernorm.weight": (H,),
         "transformer.output_layer.weight": (V, H)}
    for i in range(L):
        t.update({f"transformer.encoder.layers.{i}.{k}": v for k, v in layer.items()})
    return cfg, t


def row_mellum():
    """Mellum (NEOX; full layers theta 5e5, sliding layers 1e4 in transformers, but mellum.cpp
    rotates them with the global base, unscaled; q/k norms, 4 experts, 2 per token)"""
    cfg = base("MellumForCausalLM", "mellum", max_position_embeddings=131072,
               num_hidden_layers=4, use_sliding_window=True, sliding_window=4096,
               layer_types=["sliding_attention"] * 3 + ["full_attention"],
               rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 500000.0},
                                "sliding_attention": {"rope_type": "default",
                                                      "rope_theta": 10000.0}},
               num_experts=4, num_experts_per_tok=2, moe_intermediate_size=FF)
    return cfg, moe(llama_like(cfg, qk_norm=True), cfg)


def row_exaone4_32b():
    """EXAONE 4.0 32B's layout (64 layers, the only count exaone4.cpp gives sliding layers:
    every 4th layer global and without RoPE, the others rotated with the context's arguments)"""
    cfg, t = row_exaone4()
    lt = ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(64)]
    cfg.update(num_hidden_layers=64, sliding_window=4096, sliding_window_pattern="LLLG",
               layer_types=lt)
    t = llama_like(cfg, qk_norm=True, extra_norms=("post_feedforward_layernorm",))
    return cfg, {k: v for k, v in t.items() if not k.endswith("input_layernorm.weight")}


def row_falcon():
    """Falcon-7B's layout (NEOX on the whole head; FalconModel writes no freq_base, so
    llama.cpp's 10000; multi-query fused query_key_value, parallel attention, LayerNorm)"""
    cfg = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": H,
           "num_attention_heads": NH, "num_hidden_layers": L, "multi_query": True,
           "new_decoder_architecture": False, "parallel_attn": True, "bias": False,
           "alibi": False, "layer_norm_epsilon": 1e-5, "vocab_size": V,
           "torch_dtype": "float32"}
    layer = {"self_attention.query_key_value.weight": ((NH + 2) * HD, H),
             "self_attention.dense.weight": (H, NH * HD),
             "mlp.dense_h_to_4h.weight": (4 * H, H), "mlp.dense_4h_to_h.weight": (H, 4 * H)}
    t = {"transformer.word_embeddings.weight": (V, H), "lm_head.weight": (V, H)}
    layernorm(t, "transformer.ln_f")
    for i in range(L):
        t.update({f"transformer.h.{i}.{k}": v for k, v in layer.items()})
        layernorm(t, f"transformer.h.{i}.input_layernorm")
    return cfg, t


def row_afmoe():
    """AFMoE (NEOX; sliding layers with the context's base and scale, and every 4th layer
    without RoPE (afmoe.cpp n_no_rope_layer_step 4); q/k norms, an attention gate, pre/post MLP
    norms; 4 layers, all dense)"""
    cfg = base("AfmoeForCausalLM", "afmoe", rope_theta=10000.0, max_position_embeddings=65536,
               num_hidden_layers=4, sliding_window=2048, global_attn_every_n_layers=4,
               layer_types=["sliding_attention"] * 3 + ["full_attention"], num_dense_layers=4,
               moe_intermediate_size=FF, num_shared_experts=1)
    t = llama_like(cfg, qk_norm=True, extra_norms=("pre_mlp_layernorm", "post_mlp_layernorm"))
    for i in range(cfg["num_hidden_layers"]):
        t[f"model.layers.{i}.self_attn.gate_proj.weight"] = (NH * HD, H)
    return cfg, t


def row_granitemoe():
    """Granite 3.1 MoE (granite-3.1-3b-a800m: the granite multipliers, theta 1e7, NORM pairs
    the converter permutes; head_dim hidden_size / heads, as GraniteModel drops head_dim; the
    JetMoE experts fused as input_linear (gate and up) and output_linear, 4 of them)"""
    e, ff = 4, 32
    cfg = base("GraniteMoeForCausalLM", "granitemoe", rope_theta=10000000.0,
               max_position_embeddings=131072, embedding_multiplier=12.0,
               residual_multiplier=0.22, attention_multiplier=0.015625, logits_scaling=6.0,
               num_local_experts=e, num_experts_per_tok=2, intermediate_size=ff)
    del cfg["head_dim"]
    t = {k: v for k, v in llama_like(cfg).items() if ".mlp." not in k}
    for i in range(L):
        p = f"model.layers.{i}.block_sparse_moe."
        t[p + "router.layer.weight"] = (e, H)
        t[p + "input_linear.weight"] = (e, 2 * ff, H)
        t[p + "output_linear.weight"] = (e, H, ff)
    return cfg, t


def row_ernie4_5_moe():
    """ERNIE 4.5 MoE (ERNIE-4.5-21B-A3B: ERNIE 4.5's interleaved pairs, theta 5e5, head_dim
    128; a dense first layer (moe_layer_start_index 1), then 4 experts with the statistics
    bias and shared experts of intermediate_size / kv heads, as Ernie4_5MoeModel writes it)"""
    e, ff = 4, 32
    cfg = base("Ernie4_5_MoeForCausalLM", "ernie4_5_moe", rope_theta=500000.0,
               max_position_embeddings=131072, head_dim=128, use_bias=False,
               tie_word_embeddings=True, moe_num_experts=e, moe_k=2, moe_layer_interval=1,
               moe_layer_start_index=1, moe_intermediate_size=ff, moe_num_shared_experts=2)
    t = llama_like(cfg, tied=True)
    p = "model.layers.1.mlp."
    biased_moe(t, p, e, ff, bias="moe_statics.e_score_correction_bias")
    sf = FF // NKV
    t[p + "shared_experts.gate_proj.weight"] = (sf, H)
    t[p + "shared_experts.up_proj.weight"] = (sf, H)
    t[p + "shared_experts.down_proj.weight"] = (H, sf)
    return cfg, t


def row_hunyuan_moe():
    """Hunyuan-A13B (NEOX; rope_scaling dynamic alpha 1000 folded into the base,
    theta 1e4 * 1000^(128/126), which HunYuanMoEModel asserts for head_dim 128 = hidden_size /
    heads; q/k norms, 4 experts of intermediate_size and a shared MLP)"""
    h = 256
    cfg = base("HunYuanMoEV1ForCausalLM", "hunyuan_v1_moe", rope_theta=10000.0,
               max_position_embeddings=32768, hidden_size=h, head_dim=128,
               num_experts=4, moe_topk=[2] * L, moe_intermediate_size=[FF] * L,
               num_shared_expert=[1] * L, use_qk_norm=True, tie_word_embeddings=True,
               rope_scaling={"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                             "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"})
    t = llama_like(cfg, tied=True)
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "self_attn.query_layernorm.weight"] = (128,)
        t[p + "self_attn.key_layernorm.weight"] = (128,)
        for n, shape in (("gate_proj", (FF, h)), ("up_proj", (FF, h)), ("down_proj", (h, FF))):
            del t[p + f"mlp.{n}.weight"]
            t[p + f"mlp.shared_mlp.{n}.weight"] = shape
            for x in range(4):
                t[p + f"mlp.experts.{x}.{n}.weight"] = shape
        t[p + "mlp.gate.wg.weight"] = (4, h)
    return cfg, t


def row_dots1():
    """dots.llm1 (NEOX, theta 1e7, head_dim 128, as many kv heads as heads; q/k norms; a dense
    first layer (first_k_dense_replace 1), then 4 sigmoid-routed experts with the correction
    bias and 2 shared experts)"""
    e, ff = 4, 32
    cfg = base("Dots1ForCausalLM", "dots1", rope_theta=10000000.0, max_position_embeddings=32768,
               head_dim=128, num_key_value_heads=NH, n_routed_experts=e, num_experts_per_tok=2,
               moe_intermediate_size=ff, n_shared_experts=2, first_k_dense_replace=1,
               routed_scaling_factor=2.5, norm_topk_prob=True, scoring_func="sigmoid")
    t = llama_like(cfg, qk_norm=True)
    p = "model.layers.1.mlp."
    biased_moe(t, p, e, ff)
    for n, shape in (("gate_proj", (2 * ff, H)), ("up_proj", (2 * ff, H)),
                     ("down_proj", (H, 2 * ff))):
        t[p + f"shared_experts.{n}.weight"] = shape
    return cfg, t


def lfm2_layers(cfg, t):
    """LFM2's blocks in t for cfg's layer_types: short-conv blocks (conv.conv, in_proj of
    3 x hidden, out_proj) and attention blocks (out_proj, q/k layernorms), operator_norm and
    ffn_norm; embedding_norm is the final norm"""
    t["model.embedding_norm.weight"] = (H,)
    for i, kind in enumerate(cfg["layer_types"]):
        p = f"model.layers.{i}."
        t[p + "operator_norm.weight"] = (H,)
        t[p + "ffn_norm.weight"] = (H,)
        if kind == "conv":
            t[p + "conv.conv.weight"] = (H, 1, cfg["conv_L_cache"])
            t[p + "conv.in_proj.weight"] = (3 * H, H)
            t[p + "conv.out_proj.weight"] = (H, H)
            continue
        t[p + "self_attn.q_proj.weight"] = (NH * HD, H)
        t[p + "self_attn.k_proj.weight"] = (NKV * HD, H)
        t[p + "self_attn.v_proj.weight"] = (NKV * HD, H)
        t[p + "self_attn.out_proj.weight"] = (H, NH * HD)
        t[p + "self_attn.q_layernorm.weight"] = (HD,)
        t[p + "self_attn.k_layernorm.weight"] = (HD,)
    return t


def row_lfm2():
    """LFM2 (LFM2-1.2B: NEOX, theta 1e6; a short-conv block before the attention block, which
    alone has RoPE; the feed-forward size adjusted as LFM2Model._add_feed_forward_length does,
    int(2 * 192 / 3) rounded to block_multiple_of)"""
    cfg = base("Lfm2ForCausalLM", "lfm2", rope_theta=1000000.0, max_position_embeddings=128000,
               layer_types=["conv", "full_attention"], conv_L_cache=3, norm_eps=1e-5,
               block_ff_dim=3 * FF // 2, block_auto_adjust_ff_dim=True,
               block_ffn_dim_multiplier=1.0, block_multiple_of=FF, tie_embedding=True,
               tie_word_embeddings=True)
    t = {"model.embed_tokens.weight": (V, H)}
    for i in range(L):
        p = f"model.layers.{i}.feed_forward."
        t[p + "w1.weight"] = (FF, H)
        t[p + "w3.weight"] = (FF, H)
        t[p + "w2.weight"] = (H, FF)
    return cfg, lfm2_layers(cfg, t)


def row_lfm2moe():
    """LFM2-MoE (LFM2-8B-A1B: LFM2's RoPE and blocks; a dense first layer (num_dense_layers 1),
    then 4 sigmoid-routed experts w1/w2/w3 with the expert bias)"""
    e, ff = 4, 32
    cfg = base("Lfm2MoeForCausalLM", "lfm2_moe", rope_theta=1000000.0,
               max_position_embeddings=128000, layer_types=["conv", "full_attention"],
               conv_L_cache=3, norm_eps=1e-5, num_dense_layers=1, num_experts=e,
               num_experts_per_tok=2, moe_intermediate_size=ff, use_expert_bias=True,
               norm_topk_prob=True, routed_scaling_factor=1.0, tie_word_embeddings=True)
    t = {"model.embed_tokens.weight": (V, H)}
    p = "model.layers.0.feed_forward."
    t[p + "w1.weight"] = (FF, H)
    t[p + "w3.weight"] = (FF, H)
    t[p + "w2.weight"] = (H, FF)
    p = "model.layers.1.feed_forward."
    t[p + "gate.weight"] = (e, H)
    t[p + "expert_bias"] = (e,)
    for x in range(e):
        t[p + f"experts.{x}.w1.weight"] = (ff, H)
        t[p + f"experts.{x}.w3.weight"] = (ff, H)
        t[p + f"experts.{x}.w2.weight"] = (H, ff)
    return cfg, lfm2_layers(cfg, t)


def row_dbrx():
    """DBRX (dbrx-instruct: NEOX, theta 5e5 in attn_config, head_dim d_model / n_heads; fused
    Wqkv clipped at 8, LayerNorms without bias, 4 experts w1/v1/w2 flattened as the checkpoint
    holds them)"""
    e, ff = 4, 32
    cfg = {"architectures": ["DbrxForCausalLM"], "model_type": "dbrx", "d_model": H,
           "n_heads": NH, "n_layers": L, "max_seq_len": 32768, "vocab_size": V,
           "attn_config": {"clip_qkv": 8, "kv_n_heads": NKV, "rope_theta": 500000},
           "ffn_config": {"ffn_hidden_size": ff, "moe_num_experts": e, "moe_top_k": 2},
           "torch_dtype": "float32", "tie_word_embeddings": False}
    t = {"transformer.wte.weight": (V, H), "transformer.norm_f.weight": (H,),
         "lm_head.weight": (V, H)}
    for i in range(L):
        p = f"transformer.blocks.{i}."
        t[p + "norm_attn_norm.norm_1.weight"] = (H,)
        t[p + "norm_attn_norm.norm_2.weight"] = (H,)
        t[p + "norm_attn_norm.attn.Wqkv.weight"] = ((NH + 2 * NKV) * HD, H)
        t[p + "norm_attn_norm.attn.out_proj.weight"] = (H, NH * HD)
        t[p + "ffn.router.layer.weight"] = (e, H)
        for n in ("w1", "v1", "w2"):
            t[p + f"ffn.experts.mlp.{n}"] = (e * ff, H)
    return cfg, t


def row_bitnet():
    """BitNet b1.58 (bitnet_b1_58-large: NEOX, theta 1e4; weights ternarized by
    BitnetModel.weight_quant, sub-norms inside attention and MLP; no output tensor, tied)"""
    cfg = base("BitnetForCausalLM", "bitnet", rope_theta=10000.0, max_position_embeddings=2048,
               num_key_value_heads=NH, rms_norm_eps=1e-5, tie_word_embeddings=True)
    t = llama_like(cfg, tied=True)
    for i in range(L):
        t[f"model.layers.{i}.self_attn.inner_attn_ln.weight"] = (H,)
        t[f"model.layers.{i}.mlp.ffn_layernorm.weight"] = (FF,)
    return cfg, t


def row_apertus():
    """Apertus (Apertus-8B-2509: NEOX with the checkpoint's q/k as they are (undo_permute
    False), theta 1.2e7, llama3 scaling 8 over 8192 as rope_freqs; q/k norms, xIELU MLP without
    gate, its per-layer scalars as the converter gathers them)"""
    cfg = base("ApertusForCausalLM", "apertus", rope_theta=12000000.0,
               max_position_embeddings=65536, hidden_act="xielu", qk_norm=True,
               rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})
    t = {}
    for k, v in llama_like(cfg, qk_norm=True).items():
        if "gate_proj" in k:
            continue
        k = k.replace("input_layernorm", "attention_layernorm")
        t[k.replace("post_attention_layernorm", "feedforward_layernorm")] = v
    for i in range(L):
        for n in ("alpha_n", "alpha_p", "beta", "eps"):
            t[f"model.layers.{i}.mlp.act_fn.{n}"] = (1,)
    return cfg, t


def row_exaone_moe():
    """K-EXAONE's layout (EXAONE MoE: NEOX; its model card's sliding window of 128 on 3 of every
    4 layers (LLLG), the 4th global and without RoPE; theta 1e6 as EXAONE 4.0's, not read from
    K-EXAONE's config; q/k norms; a dense first layer
    (first_k_dense_replace 1), then 4 sigmoid-routed experts with the correction bias and a
    shared expert; no MTP layers)"""
    e, ff = 4, 32
    cfg = base("ExaoneMoEForCausalLM", "exaone_moe", rope_theta=1000000.0,
               max_position_embeddings=262144, num_hidden_layers=4, sliding_window=128,
               sliding_window_pattern="LLLG",
               layer_types=["sliding_attention"] * 3 + ["full_attention"],
               num_experts=e, num_experts_per_tok=2, moe_intermediate_size=ff,
               num_shared_experts=1, routed_scaling_factor=2.5, norm_topk_prob=True,
               first_k_dense_replace=1, scoring_func="sigmoid", num_nextn_predict_layers=0)
    t = llama_like(cfg, qk_norm=True)
    for i in range(1, 4):
        p = f"model.layers.{i}.mlp."
        biased_moe(t, p, e, ff, bias="e_score_correction_bias")
        for n, shape in (("gate_proj", (ff, H)), ("up_proj", (ff, H)), ("down_proj", (H, ff))):
            t[p + f"shared_experts.{n}.weight"] = shape
    return cfg, t


def row_cohere2moe():
    """Cohere 2 MoE (Command R7B's NORM pairs and theta 5e4 for this test, no published
    config read; sliding window on layers 1-2, layer 3 global and without RoPE, layer 0 global
    but dense, which cohere2moe.cpp ropes all the same; parallel attention and MLP after one
    LayerNorm; 4 experts and a shared one)"""
    e = 4
    cfg = base("Cohere2MoeForCausalLM", "cohere2_moe", rope_theta=50000.0,
               max_position_embeddings=8192, num_hidden_layers=4, layer_norm_eps=1e-5,
               logit_scale=0.25, sliding_window=4096,
               layer_types=["full_attention"] + ["sliding_attention"] * 2 + ["full_attention"],
               mlp_layer_types=["dense"] + ["sparse"] * 3, num_experts=e,
               num_experts_per_tok=2, num_shared_experts=1, norm_topk_prob=True,
               tie_word_embeddings=True)
    del cfg["rms_norm_eps"]
    t = {k: v for k, v in llama_like(cfg, tied=True).items()
         if "post_attention_layernorm" not in k}
    for i in range(1, 4):
        p = f"model.layers.{i}.mlp."
        biased_moe(t, p, e, FF)
        del t[p + "gate.e_score_correction_bias"]
        for n, shape in (("gate_proj", (FF, H)), ("up_proj", (FF, H)), ("down_proj", (H, FF))):
            t[p + f"shared_experts.{n}.weight"] = shape
    return cfg, t


def mamba2(t, p, d_inner, n_group, d_state, n_heads, d_conv, norm=True):
    """a Mamba2 mixer under p (in_proj of z, x, B, C and dt; conv1d over x, B and C; dt_bias,
    A_log, D, the gated norm and out_proj), as Bamba's and Falcon-H1's checkpoints hold it"""
    conv = d_inner + 2 * n_group * d_state
    t[p + "in_proj.weight"] = (d_inner + conv + n_heads, H)
    t[p + "conv1d.weight"] = (conv, 1, d_conv)
    t[p + "conv1d.bias"] = (conv,)
    t[p + "dt_bias"] = (n_heads,)
    t[p + "A_log"] = (n_heads,)
    t[p + "D"] = (n_heads,)
    if norm:
        t[p + "norm.weight"] = (d_inner,)
    t[p + "out_proj.weight"] = (H, d_inner)


def ssm_hybrid(attn, ssm, d_inner, norm=True):
    """the tensors of a Mamba2 hybrid as Bamba's and Falcon-H1's checkpoints name them: attention
    in the layers of attn, a Mamba2 mixer (1 group, state 16, 4 heads, conv 4) in those of ssm,
    an MLP and the two norms in every layer"""
    t = {"model.embed_tokens.weight": (V, H), "model.final_layernorm.weight": (H,),
         "lm_head.weight": (V, H)}
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = (H,)
        t[p + "pre_ff_layernorm.weight"] = (H,)
        for n, shape in (("gate_proj", (FF, H)), ("up_proj", (FF, H)), ("down_proj", (H, FF))):
            t[p + f"feed_forward.{n}.weight"] = shape
        if i in attn:
            for n, shape in (("q_proj", (NH * HD, H)), ("k_proj", (NKV * HD, H)),
                             ("v_proj", (NKV * HD, H)), ("o_proj", (H, NH * HD))):
                t[p + f"self_attn.{n}.weight"] = shape
        if i in ssm:
            mamba2(t, p + "mamba.", d_inner, 1, 16, 4, 4, norm)
    return t


def row_granitehybrid():
    """Bamba (Bamba-9B's layout, which the converter writes as granitehybrid: NORM pairs the
    converter permutes, theta 1e4; a Mamba2 layer before the attention layer). attn_rotary_emb
    is the whole head here, as transformers rotates it; Bamba-9B's 64 of 128, which the
    converter writes as rope.dimension_count, is a planted mistake in t_capture_llama.sh"""
    cfg = base("BambaForCausalLM", "bamba", rope_theta=10000.0, max_position_embeddings=262144,
               attn_layer_indices=[1], attn_rotary_emb=HD, mamba_d_conv=4,
               mamba_d_state=16, mamba_n_heads=4, mamba_d_head=64, mamba_n_groups=1,
               mamba_expand=2, mamba_chunk_size=256, mamba_conv_bias=True,
               mamba_proj_bias=False, rms_norm_eps=1e-5)
    del cfg["head_dim"]
    return cfg, ssm_hybrid([1], [0], 2 * H)


def row_falcon_h1():
    """Falcon-H1 (Falcon-H1-0.5B's RoPE: NEOX, theta 1e11; attention and a Mamba2 mixer side by
    side in every layer, the muP multipliers folded into the weights by the converter)"""
    d_ssm = 2 * H
    cfg = base("FalconH1ForCausalLM", "falcon_h1", rope_theta=1e11,
               max_position_embeddings=16384, mamba_d_ssm=d_ssm, mamba_n_heads=4,
               mamba_d_head=64, mamba_d_state=16, mamba_n_groups=1, mamba_d_conv=4,
               mamba_expand=2, mamba_chunk_size=128, mamba_conv_bias=True,
               mamba_proj_bias=False, mamba_norm_before_gate=False, mamba_rms_norm=False,
               attention_in_multiplier=1.0, attention_out_multiplier=0.9375,
               key_multiplier=0.39, ssm_in_multiplier=1.25, ssm_out_multiplier=0.23,
               ssm_multipliers=[0.35, 0.25, 0.5, 0.35, 0.2], mlp_multipliers=[0.88, 0.56],
               lm_head_multiplier=0.04, embedding_multiplier=5.66, projectors_bias=False,
               rms_norm_eps=1e-5)
    return cfg, ssm_hybrid(range(L), range(L), d_ssm, norm=False)


def row_deepseek32():
    """DeepSeek-V3.2-Exp (DeepSeek-V3's MLA and YaRN 40 over 4096 on the 64 q_pe/k_pe dims, NORM
    pairs; the DSA lightning indexer, whose q and k llama.cpp ropes too; a dense first layer,
    then 4 sigmoid-routed experts and a shared one; no MTP weights)"""
    e, ff, idx_hd, idx_nh = 4, 32, 128, 2
    cfg, t = row_deepseek2()
    cfg.update(architectures=["DeepseekV32ForCausalLM"], model_type="deepseek_v32",
               index_head_dim=idx_hd, index_n_heads=idx_nh, index_topk=2048,
               first_k_dense_replace=1, n_routed_experts=e, n_shared_experts=1,
               moe_intermediate_size=ff, num_experts_per_tok=2, norm_topk_prob=True,
               routed_scaling_factor=2.5, scoring_func="sigmoid", topk_method="noaux_tc",
               n_group=1, topk_group=1, num_nextn_predict_layers=0)
    dsa_tail(t, cfg, e, ff, idx_hd, idx_nh)
    return cfg, t


def row_minimax_01():
    """MiniMax-M1 (MiniMax-M1-40k, MiniMax-Text-01's layout and the same converter class: NEOX
    on rotary_dim 64 of head_dim 128, theta 1e7; lightning-attention
    layers with a fused qkv_proj, an output gate and a norm, and a softmax-attention layer as
    every 8th (attn_type_list), the only one with RoPE: eight layers, as llama.cpp takes the
    8 of full_attention_interval, which MiniMaxText01Model does not write; 4 experts
    w1/w2/w3)"""
    e, ff, hd, n = 4, 32, 128, 8
    cfg = base("MiniMaxM1ForCausalLM", "minimax_m1", rope_theta=10000000,
               max_position_embeddings=10240000, head_dim=hd, rotary_dim=64,
               num_hidden_layers=n, attn_type_list=[0] * 7 + [1], intermediate_size=ff,
               num_local_experts=e, num_experts_per_tok=2, postnorm=True,
               layernorm_full_attention_alpha=4.0, layernorm_full_attention_beta=1.0,
               layernorm_linear_attention_alpha=4.0, layernorm_linear_attention_beta=1.0,
               layernorm_mlp_alpha=4.0, layernorm_mlp_beta=1.0, block_size=256)
    t = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    for i in range(n):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = (H,)
        t[p + "post_attention_layernorm.weight"] = (H,)
        if cfg["attn_type_list"][i]:
            for k, shape in (("q_proj", (NH * hd, H)), ("k_proj", (NKV * hd, H)),
                             ("v_proj", (NKV * hd, H)), ("o_proj", (H, NH * hd))):
                t[p + f"self_attn.{k}.weight"] = shape
        else:
            t[p + "self_attn.qkv_proj.weight"] = (3 * NH * hd, H)
            t[p + "self_attn.output_gate.weight"] = (NH * hd, H)
            t[p + "self_attn.norm.weight"] = (NH * hd,)
            t[p + "self_attn.out_proj.weight"] = (H, NH * hd)
        t[p + "block_sparse_moe.gate.weight"] = (e, H)
        for x in range(e):
            t[p + f"block_sparse_moe.experts.{x}.w1.weight"] = (ff, H)
            t[p + f"block_sparse_moe.experts.{x}.w3.weight"] = (ff, H)
            t[p + f"block_sparse_moe.experts.{x}.w2.weight"] = (H, ff)
    return cfg, t


def row_hy_v3():
    """Hy3 (HYV3Config's defaults: NEOX, theta 11158840 in rope_parameters, head_dim 128; q/k
    norms; a dense first layer, then 4 sigmoid-routed experts and a shared one, without the
    selection bias, which the loader does not require; no MTP layers)"""
    e, ff = 4, 32
    cfg = base("HYV3ForCausalLM", "hy_v3", max_position_embeddings=131072, head_dim=128,
               rope_parameters={"rope_theta": 11158840.0, "rope_type": "default"},
               num_experts=e, num_experts_per_tok=2, num_shared_experts=1,
               moe_intermediate_size=ff, router_scaling_factor=2.826,
               mlp_layer_types=["dense", "sparse"], num_nextn_predict_layers=0)
    t = llama_like(cfg, qk_norm=True)
    p = "model.layers.1.mlp."
    for n in ("gate_proj", "up_proj", "down_proj"):
        del t[p + n + ".weight"]
    t[p + "gate.weight"] = (e, H)
    for x in range(e):
        for n, shape in (("gate_proj", (ff, H)), ("up_proj", (ff, H)), ("down_proj", (H, ff))):
            t[p + f"experts.{x}.{n}.weight"] = shape
    for n, shape in (("gate_proj", (ff, H)), ("up_proj", (ff, H)), ("down_proj", (H, ff))):
        t[p + f"shared_experts.{n}.weight"] = shape
    return cfg, t


def row_chameleon():
    """Chameleon text (chameleon-7b: NORM pairs the converter permutes, theta 1e4, head_dim
    hidden_size / heads, as many kv heads as heads; q/k LayerNorms over (heads, head_dim) with
    bias, one head's of them spread by ChameleonModel._reverse_hf_permute; no VQ model). A
    vocabulary of 8256, tied: chameleon.cpp writes -FLT_MAX over the logits of image tokens
    4 to 8195, which a smaller one cannot hold"""
    v = 8256
    cfg = base("ChameleonForConditionalGeneration", "chameleon", rope_theta=10000.0,
               max_position_embeddings=4096, num_key_value_heads=NH, qk_layernorm=True,
               swin_norm=False, rms_norm_eps=1e-5, vocab_size=v, tie_word_embeddings=True)
    del cfg["head_dim"]
    t = llama_like(cfg, tied=True)
    t["model.embed_tokens.weight"] = (v, H)
    for i in range(L):
        p = f"model.layers.{i}.self_attn."
        for n in ("q_norm", "k_norm"):
            t[p + n + ".weight"] = (NH, HD)
            t[p + n + ".bias"] = (NH, HD)
    return cfg, t


def row_eurobert():
    """EuroBERT (EuroBERT-210m: NEOX, theta 250000, as many kv heads as heads; bidirectional,
    no output head)"""
    cfg = base("EuroBertModel", "eurobert", rope_theta=250000.0, max_position_embeddings=8192,
               num_key_value_heads=NH, rms_norm_eps=1e-5, tie_word_embeddings=False)
    t = llama_like(cfg, tied=True)
    return cfg, t


def row_modern_bert():
    """ModernBERT (ModernBERT-base: NEOX; global layers (every 3rd from layer 0) theta 160000,
    the others local, a symmetric window of 128 and theta 1e4; fused Wqkv, GeGLU Wi, LayerNorms
    without bias, none before layer 0's attention; four layers, bidirectional, no head).
    no layer_types (configs written before transformers had them give only
    global_attn_every_n_layers): posenc derives them as ModernBertConfig.__init__ does;
    layer_norm_eps beside the published norm_eps,
    the only LayerNorm epsilon TextModel.set_gguf_parameters writes (conversion/base.py), which
    modern-bert.cpp requires"""
    n = 4
    cfg = {"architectures": ["ModernBertModel"], "model_type": "modernbert", "hidden_size": H,
           "intermediate_size": FF, "num_attention_heads": NH, "num_hidden_layers": n,
           "vocab_size": V, "global_rope_theta": 160000.0, "local_rope_theta": 10000.0,
           "local_attention": 128, "global_attn_every_n_layers": 3,
           "max_position_embeddings": 8192, "norm_eps": 1e-5, "layer_norm_eps": 1e-5,
           "norm_bias": False,
           "hidden_activation": "gelu", "torch_dtype": "float32"}
    t = {"model.embeddings.tok_embeddings.weight": (V, H), "model.embeddings.norm.weight": (H,),
         "model.final_norm.weight": (H,)}
    for i in range(n):
        p = f"model.layers.{i}."
        if i:
            t[p + "attn_norm.weight"] = (H,)
        t[p + "attn.Wqkv.weight"] = (3 * H, H)
        t[p + "attn.Wo.weight"] = (H, H)
        t[p + "mlp_norm.weight"] = (H,)
        t[p + "mlp.Wi.weight"] = (2 * FF, H)
        t[p + "mlp.Wo.weight"] = (H, FF)
    return cfg, t


def row_baichuan():
    """Baichuan-7B (NORM pairs the converter un-permutes from the fused W_pack, theta 1e4;
    32 layers, the only count baichuan.cpp ropes). The pinned converter cannot write it
    (t_capture_llama.sh, the table of architectures without a row)"""
    n = 32
    cfg = base("BaichuanForCausalLM", "baichuan", rope_theta=10000.0,
               max_position_embeddings=4096, num_hidden_layers=n, num_key_value_heads=NH)
    del cfg["head_dim"]
    t = {k: v for k, v in llama_like(cfg).items() if "self_attn" not in k or "o_proj" in k}
    for i in range(n):
        t[f"model.layers.{i}.self_attn.W_pack.weight"] = (3 * H, H)
    return cfg, t


ROWS = {"llama": row_llama, "qwen2": row_qwen2, "qwen3": row_qwen3, "phi3": row_phi3,
        "gemma3": row_gemma3, "granite": row_granite, "smollm3": row_smollm3,
        "arcee": row_arcee, "stablelm": row_stablelm, "gptneox": row_gptneox, "phi2": row_phi2,
        "command-r": row_command_r, "deepseek2": row_deepseek2, "qwen3moe": row_qwen3moe,
        "qwen2moe": row_qwen2moe, "gpt-oss": row_gpt_oss, "mistral3": row_mistral3,
        "qwen35": row_qwen35, "qwen35moe": row_qwen35moe,
        "qwen3next": row_qwen3next, "gemma2": row_gemma2, "gemma": row_gemma,
        "qwen2vl": row_qwen2vl, "qwen3vl": row_qwen3vl, "qwen3vlmoe": row_qwen3vlmoe,
        "llama4": row_llama4, "glm4": row_glm4, "glm4moe": row_glm4moe, "olmo2": row_olmo2,
        "olmoe": row_olmoe, "starcoder2": row_starcoder2, "seed_oss": row_seed_oss,
        "ernie4_5": row_ernie4_5, "cohere2": row_cohere2, "minimax-m2": row_minimax_m2,
        "mimo2": row_mimo2, "gemma3n": row_gemma3n, "glm-dsa": row_glm_dsa,
        "exaone4": row_exaone4, "hunyuan-dense": row_hunyuan_dense,
        "olmo": row_olmo, "internlm2": row_internlm2, "nemotron": row_nemotron,
        "jais2": row_jais2, "chatglm": row_chatglm, "mellum": row_mellum,
        "exaone4-32b": row_exaone4_32b, "falcon": row_falcon, "afmoe": row_afmoe,
        "granitemoe": row_granitemoe, "ernie4_5-moe": row_ernie4_5_moe,
        "hunyuan-moe": row_hunyuan_moe, "dots1": row_dots1, "lfm2": row_lfm2,
        "lfm2moe": row_lfm2moe, "dbrx": row_dbrx, "bitnet": row_bitnet, "apertus": row_apertus,
        "exaone-moe": row_exaone_moe, "cohere2moe": row_cohere2moe,
        "granitehybrid": row_granitehybrid, "falcon-h1": row_falcon_h1,
        "deepseek32": row_deepseek32, "minimax-01": row_minimax_01,
        "hy_v3": row_hy_v3, "chameleon": row_chameleon,
        "eurobert": row_eurobert, "modern-bert": row_modern_bert,
        "baichuan": row_baichuan}


def save_safetensors(path, arrays):
    header, blobs, off = {}, [], 0
    for name, a in arrays.items():
        raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def make(row, out):
    cfg, shapes = ROWS[row]()
    rng = np.random.default_rng(sum(map(ord, row)))
    arrays = {}
    for name, shape in shapes.items():
        if name.endswith("norm.weight") or "layernorm" in name:
            arrays[name] = 1 + 0.1 * rng.standard_normal(shape)
        else:
            arrays[name] = rng.standard_normal(shape) * (0.5 if len(shape) == 1 else 1.0)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1)
    save_safetensors(os.path.join(out, "model.safetensors"), arrays)
    # a vocabulary of V entries: conversion/gemma.py Gemma3Model.modify_tensors counts
    # tokenizer.json's tokens to trim embed_tokens (the other classes never read it here)
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump({"model": {"type": "BPE", "vocab": {f"t{i}": i for i in range(V)}},
                   "added_tokens": []}, f)


def convert(model_dir, out, mistake=None):
    # the converter's environment (transformers stub, torch dtype placeholders) and its
    # mistakes are gguf_convert.py's, beside this script
    import gguf_convert
    gguf, conversion = gguf_convert.gguf, gguf_convert.conversion
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        hp = json.load(f)
    cls = conversion.get_model_class(hp["architectures"][0])
    if getattr(cls, "supports_mtp_export", False) and not hp.get("mtp_num_hidden_layers"):
        cls.no_mtp = True  # no MTP weights: convert_hf_to_gguf.py --no-mtp
    ftype = gguf.LlamaFileType.ALL_F32
    if mistake == "outtype=f16":
        ftype, mistake = gguf.LlamaFileType.MOSTLY_F16, None
    model = cls(Path(model_dir), ftype, Path(out), eager=True)
    model = getattr(model, "impl", model)

    def set_vocab(self):
        self._set_vocab_none()
        self.gguf_writer.add_vocab_size(self.hparams["vocab_size"])

    model.set_vocab = types.MethodType(set_vocab, model)
    if hasattr(model, "_get_suppress_tokens"):
        # conversion/minimax.py MiniMaxText01Model: the ids whose embedding rows are zero past
        # AutoTokenizer's vocab_size, vocabulary again; there are none here
        model._get_suppress_tokens = lambda: None
    model.prepare_tensors()
    model.prepare_metadata(vocab_only=False)
    w = model.gguf_writer
    kv, tensors, arch = w.kv_data[0], w.tensors[0], w.arch
    if mistake:
        gguf_convert.plant(mistake, kv, tensors, arch)
    w.write_header_to_file(path=Path(out))
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[2] == "make":
        make(sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 5 and sys.argv[2] == "convert":
        convert(sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    elif len(sys.argv) == 3 and sys.argv[2] == "rows":
        print(" ".join(ROWS))
    elif len(sys.argv) == 4 and sys.argv[2] == "batch":
        # one process for many: each line "make ROW DIR" or "convert DIR OUT [MISTAKE]"
        for line in open(sys.argv[3], encoding="utf-8"):
            w = line.split()
            if w and w[0] == "make":
                make(w[1], w[2])
            elif w and w[0] == "convert":
                convert(w[1], w[2], w[3] if len(w) > 3 else None)
            elif w and w[0] == "try-convert":
                # a row the converter may refuse: its error in OUT.err, the batch goes on
                try:
                    convert(w[1], w[2])
                except Exception as e:  # noqa: BLE001 (any refusal is the finding)
                    with open(w[2] + ".err", "w", encoding="utf-8") as f:
                        f.write(f"{type(e).__name__}: {e}\n")
            elif w:
                raise SystemExit(f"batch: bad line {line!r}")
    else:
        raise SystemExit(__doc__)
