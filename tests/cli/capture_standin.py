"""Stand-ins for tests/cli/t_capture.sh: run examples/capture_transformers.py and
examples/capture_vllm.py on torch modules with transformers' and vLLM's call signatures
(neither can be installed here), with /usr/bin/python3.

  capture_standin.py hf OUT [bad]     a 3-layer GQA model whose attention calls its module's
                                      apply_rotary_pos_emb(q, k, cos, sin) (transformers
                                      models/llama/modeling_llama.py LlamaAttention.forward and
                                      LlamaRotaryEmbedding); bad: cos/sin one position late
  capture_standin.py vllm OUT [bad]   3 layers calling RotaryEmbedding.forward_native(positions,
                                      query, key) on [num_tokens, heads * head_size] tensors with
                                      a cos_sin_cache (vllm/model_executor/layers/rotary_embedding/
                                      base.py); bad: GPT-J pairs instead of NeoX halves
The config is tests/cli/t_capture.sh's: 4 query heads, 2 key heads of 16, theta 10000.
"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
import capture_transformers  # noqa: E402
import capture_vllm  # noqa: E402

HQ, HK, D, THETA, LAYERS, S = 4, 2, 16, 10000.0, 3, 11
BAD = len(sys.argv) > 3 and sys.argv[3] == "bad"


# ---------------------------------------------------------------- transformers stand-in
def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


modeling = types.ModuleType("standin_modeling")
modeling.apply_rotary_pos_emb = apply_rotary_pos_emb


class Rotary(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inv_freq = 1.0 / (THETA ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))

    def forward(self, x, position_ids):
        if BAD:
            position_ids = position_ids + 1
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        freqs = (inv @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = torch.nn.Linear(HQ * D, HQ * D, bias=False)
        self.k_proj = torch.nn.Linear(HQ * D, HK * D, bias=False)

    def forward(self, h, cos, sin):
        b, s, _ = h.shape
        q = self.q_proj(h).view(b, s, -1, D).transpose(1, 2)
        k = self.k_proj(h).view(b, s, -1, D).transpose(1, 2)
        # looked up in the module at call time, as modeling_llama.py's global function is
        q, k = modeling.apply_rotary_pos_emb(q, k, cos, sin)
        return h + q.transpose(1, 2).reshape(b, s, -1)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(100, HQ * D)
        self.rotary = Rotary()
        self.layers = torch.nn.ModuleList(Attention() for _ in range(LAYERS))

    def forward(self, input_ids, position_ids):
        h = self.embed(input_ids)
        cos, sin = self.rotary(h, position_ids)
        for layer in self.layers:
            h = layer(h, cos, sin)
        return h


# ---------------------------------------------------------------- vLLM stand-in
class RotaryEmbedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        inv = 1.0 / (THETA ** (torch.arange(0, D, 2, dtype=torch.float) / D))
        freqs = torch.einsum("i,j -> ij", torch.arange(4096, dtype=torch.float), inv)
        self.cos_sin_cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1)

    def forward_native(self, positions, query, key=None, offsets=None):
        cos, sin = self.cos_sin_cache.index_select(0, positions.flatten()).chunk(2, dim=-1)

        def rot(x):
            shape = x.shape
            x = x.view(positions.numel(), -1, D)
            c, s = cos.unsqueeze(-2).to(x.dtype), sin.unsqueeze(-2).to(x.dtype)
            if BAD:  # GPT-J pairs
                x1, x2 = x[..., ::2], x[..., 1::2]
                return torch.stack((x1 * c - x2 * s, x2 * c + x1 * s), -1).flatten(-2).reshape(shape)
            x1, x2 = torch.chunk(x, 2, dim=-1)
            return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).reshape(shape)
        return rot(query), rot(key)


def main():
    torch.manual_seed(0)
    what, out = sys.argv[1], sys.argv[2]
    if what == "hf":
        ids = torch.randint(0, 100, (1, S))
        n = capture_transformers.capture(Model(), modeling, ids, torch.arange(S)[None] + 5, out)
    else:
        pre, post, unwrap = capture_vllm.wrap(RotaryEmbedding)
        try:
            rope = RotaryEmbedding()
            positions = torch.arange(S) + 5
            with torch.no_grad():
                for _ in range(LAYERS):  # each attention layer calls its rotary embedding
                    rope.forward_native(positions, torch.randn(S, HQ * D), torch.randn(S, HK * D))
        finally:
            unwrap()
        n = capture_vllm.write(pre, post, out)
    print(n, "layers")


if __name__ == "__main__":
    main()
