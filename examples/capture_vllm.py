"""Record pre- and post-RoPE q/k of every layer vLLM runs, for posenc verify.

    python capture_vllm.py MODEL OUT.safetensors [TEXT]

runs MODEL once in vLLM (eager, one prompt, the rotary embedding on its PyTorch path) and writes
    OUT.safetensors       layers.N.q, layers.N.k (pre-RoPE, [num_tokens, heads * head_size])
                          and positions
    OUT.rope.safetensors  the same after vLLM's rotation
Then:

    posenc verify --config config.json --q OUT.safetensors --expect-q OUT.rope.safetensors \
        --layout sf --positions OUT.safetensors:positions --precision vllm

How: every attention layer calls its rotary embedding once per forward with (positions, query,
key) (vllm/model_executor/layers/rotary_embedding/base.py RotaryEmbedding.forward_native,
positions [num_tokens], query [num_tokens, num_heads * head_size]); wrapping forward_native on
the class sees every layer in order. vLLM runs forward_native when its rotary custom op is
disabled (custom_ops ["-rotary_embedding"]), as this script asks; the workers must run in this
process (VLLM_ENABLE_V1_MULTIPROCESSING=0, tensor_parallel_size 1), and one token is generated, so
the one forward pass is the prompt's.
"""
import os
import sys

import torch

from capture_transformers import rope_name, save_safetensors


def wrap(cls):
    """Wrap cls.forward_native: every call is the next layer. Returns the records (pre, post)
    and a function that unwraps."""
    pre, post = {}, {}
    orig = cls.forward_native

    def forward_native(self, positions, query, key=None, *args, **kwargs):
        layer = len(post) // 2
        pre.setdefault("positions", positions.clone().to(torch.int64))
        pre[f"layers.{layer}.q"], pre[f"layers.{layer}.k"] = query.clone(), key.clone()
        q, k = orig(self, positions, query, key, *args, **kwargs)
        post[f"layers.{layer}.q"], post[f"layers.{layer}.k"] = q.clone(), k.clone()
        return q, k

    cls.forward_native = forward_native

    def unwrap():
        cls.forward_native = orig
    return pre, post, unwrap


def write(pre, post, out):
    save_safetensors(out, pre)
    save_safetensors(rope_name(out), post)
    return len(post) // 2


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    from vllm import LLM, SamplingParams
    from vllm.model_executor.layers.rotary_embedding import RotaryEmbedding
    name, out = sys.argv[1], sys.argv[2]
    text = sys.argv[3] if len(sys.argv) > 3 else "The quick brown fox jumps over the lazy dog."
    llm = LLM(model=name, enforce_eager=True,
              compilation_config={"custom_ops": ["-rotary_embedding"]})
    # wrapped after start-up (its profiling run is no prompt); max_tokens=1: one forward pass
    pre, post, unwrap = wrap(RotaryEmbedding)
    try:
        llm.generate([text], SamplingParams(max_tokens=1))
    finally:
        unwrap()
    if not post:
        sys.exit("RotaryEmbedding.forward_native was never called: the rotary custom op ran")
    print(f"{write(pre, post, out)} layers: {out} and {rope_name(out)}")


if __name__ == "__main__":
    main()
