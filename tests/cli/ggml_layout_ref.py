"""tests/cli/ggml_layout_ref.py: fixtures and references for t_ggml_layout.sh, in numpy float64.

    ggml_layout_ref.py make DIR      configs, q/k in llama.cpp's own layout and their rotations
    ggml_layout_ref.py close A B TOL max |A - B| <= TOL (npy files, or NPZ:member)

llama.cpp's q/k for a Llama-family model are [tokens, heads, head_dim] (ggml ne = head_dim,
heads, tokens) in the order convert_hf_to_gguf.py's LlamaModel.permute gives q_proj/k_proj:
each head's two halves interleaved, element 2i from i and 2i+1 from i + head_dim/2; llama.cpp
rotates them in NORM pairs (2i, 2i+1) with frequency i (ggml ops.cpp rotate_pairs). The same
rotation in transformers' order is rotate_half on (i, i + head_dim/2). Qwen2 (NEOX) is not
permuted: llama.cpp's order is transformers'."""
import json
import os
import sys

import numpy as np

T, H, D = 12, 2, 32
POS = np.arange(T) + 40


def permute(x):
    """transformers' head order -> the converter's (LlamaModel.permute on the weight rows)"""
    h = x.shape[-1] // 2
    out = np.empty_like(x)
    out[..., 0::2] = x[..., :h]
    out[..., 1::2] = x[..., h:]
    return out


def neox(x, pos, theta):
    """rotate_half rotation of x [T, H, D] in float64"""
    d = x.shape[-1]
    inv = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    a = pos[:, None].astype(np.float64) * inv[None, :]
    c, s = np.cos(a)[:, None, :], np.sin(a)[:, None, :]
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)


def make(d):
    os.chdir(d)
    llama = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": H * D,
             "num_attention_heads": H, "num_key_value_heads": H, "rope_theta": 10000.0,
             "max_position_embeddings": 4096}
    json.dump(llama, open("llama.json", "w"))
    json.dump(dict(llama, rope_theta=20000.0), open("llama_theta.json", "w"))
    qwen = dict(llama, model_type="qwen2", architectures=["Qwen2ForCausalLM"])
    json.dump(qwen, open("qwen2.json", "w"))
    json.dump({"model_type": "gptj", "architectures": ["GPTJForCausalLM"], "n_embd": H * D,
               "n_head": H, "rotary_dim": D, "n_positions": 2048}, open("gptj.json", "w"))
    rng = np.random.default_rng(7)
    q = rng.standard_normal((T, H, D))
    k = rng.standard_normal((T, H, D))
    for n, x in (("q", q), ("k", k)):
        y = neox(x, POS, 10000.0)
        # llama: the converter's order, rotated in NORM pairs
        np.save(f"{n}.npy", permute(x).astype(np.float32))
        np.save(f"{n}_rot.npy", permute(y).astype(np.float32))
        # the NORM/NEOX mistake: halves rotated in llama.cpp's (permuted) tensors
        np.save(f"{n}_bug.npy", neox(permute(x), POS, 10000.0).astype(np.float32))
        # qwen2: transformers' order (no permutation), NEOX
        np.save(f"{n}_qwen.npy", x.astype(np.float32))
        np.save(f"{n}_qwen_rot.npy", y.astype(np.float32))
    np.save("pos.npy", POS.astype(np.int32))
    np.save("pos4.npy", np.stack([POS] * 4).astype(np.int32))      # llama.cpp's M-RoPE rows
    np.save("pos4flat.npy", np.concatenate([POS] * 4).astype(np.int32))
    np.save("pos4img.npy", np.stack([POS, POS - 1, POS, POS]).astype(np.int32))
    # the graph's inp_pos, ROPE's src[1]: a text token's fourth row is 0
    # (llama.cpp src/llama-graph.cpp llm_graph_input_pos::set_input)
    np.save("pos4zero.npy", np.stack([POS, POS, POS, 0 * POS]).astype(np.int32))
    np.save("pos4imgzero.npy", np.stack([POS, POS - 1, POS, 0 * POS]).astype(np.int32))


def load(spec):
    if ":" in spec:
        f, m = spec.split(":")
        return np.load(f)[m]
    return np.load(spec)


def main():
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "close":
        a, b = load(sys.argv[2]).astype(np.float64), load(sys.argv[3]).astype(np.float64)
        err = float(np.max(np.abs(a - b)))
        if a.shape != b.shape or not err <= float(sys.argv[4]):
            sys.exit("%s vs %s: shapes %s %s, max err %g" % (sys.argv[2], sys.argv[3], a.shape,
                                                             b.shape, err))
    else:
        sys.exit("usage: ggml_layout_ref.py make DIR | close A B TOL")


if __name__ == "__main__":
    main()
