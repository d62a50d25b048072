"""Record pre- and post-RoPE q/k of every layer of a transformers model for posenc verify.

    python capture_transformers.py MODEL OUT.safetensors [TEXT]

runs MODEL (a hub id or a directory) once on TEXT with explicit position_ids, and writes
    OUT.safetensors       layers.N.q, layers.N.k (pre-RoPE, [batch, heads, seq, head_dim]) and
                          position_ids
    OUT.rope.safetensors  layers.N.q, layers.N.k as the model rotated them
in posenc's multi-layer naming (posenc-formats(5), Q/K PAIRS). Then:

    posenc verify --config config.json --q OUT.safetensors --expect-q OUT.rope.safetensors \
        --positions OUT.safetensors:position_ids

How: each decoder layer's attention calls its modeling module's apply_rotary_pos_emb(q, k, cos,
sin, ...) once, layer after layer (transformers models/llama/modeling_llama.py LlamaAttention.
forward), so wrapping that module function sees every layer's q and k before and after RoPE.
Models whose attention does not call it (a fused kernel) record nothing: the script says so.
"""
import importlib
import json
import struct
import sys

import torch

ST_NAMES = {torch.float16: "F16", torch.bfloat16: "BF16", torch.float32: "F32",
            torch.float64: "F64", torch.int64: "I64"}


def save_safetensors(path, tensors):
    """a safetensors file without the safetensors package"""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def rope_name(path):
    return path[:-len(".safetensors")] + ".rope.safetensors" if path.endswith(".safetensors") \
        else path + ".rope.safetensors"


def capture(model, modeling, input_ids, position_ids, out):
    """Run model once; modeling is the module whose apply_rotary_pos_emb its attention calls."""
    pre, post = {}, {}
    orig = modeling.apply_rotary_pos_emb

    def wrapped(q, k, *args, **kwargs):
        layer = len(pre) // 2
        pre[f"layers.{layer}.q"], pre[f"layers.{layer}.k"] = q.clone(), k.clone()
        q_rot, k_rot = orig(q, k, *args, **kwargs)
        post[f"layers.{layer}.q"], post[f"layers.{layer}.k"] = q_rot.clone(), k_rot.clone()
        return q_rot, k_rot

    modeling.apply_rotary_pos_emb = wrapped
    try:
        with torch.no_grad():
            model(input_ids=input_ids, position_ids=position_ids)
    finally:
        modeling.apply_rotary_pos_emb = orig
    if not pre:
        sys.exit(f"{modeling.__name__}.apply_rotary_pos_emb was never called: this model's "
                 "attention rotates elsewhere")
    pre["position_ids"] = position_ids.to(torch.int64)
    save_safetensors(out, pre)
    save_safetensors(rope_name(out), post)
    return len(post) // 2


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    from transformers import AutoModelForCausalLM, AutoTokenizer
    name, out = sys.argv[1], sys.argv[2]
    text = sys.argv[3] if len(sys.argv) > 3 else "The quick brown fox jumps over the lazy dog."
    tok = AutoTokenizer.from_pretrained(name)
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype="auto",
                                                 attn_implementation="eager")
    modeling = importlib.import_module(type(model).__module__)
    ids = tok(text, return_tensors="pt").input_ids
    positions = torch.arange(ids.shape[1])[None]
    n = capture(model, modeling, ids, positions, out)
    print(f"{n} layers: {out} and {rope_name(out)}")


if __name__ == "__main__":
    main()
