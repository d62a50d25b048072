# One description of a model (lib/describe/describe.def): the metadata keys gen writes are info --json's
# keys, with the same values, for RoPE (default, llama3, yarn, longrope, dynamic, mrope, at every
# precision), ALiBi (each variant and convention), T5 (encoder and decoder), Shaw and sinusoidal
# configs, in NPZ and safetensors. The keys only a written table has (its layout, dtype,
# positions, a bias table's shape, --broadcast and --weights) are listed here;
# so are the legacy names gen keeps: the flat vllm_* beside its "vllm" object (posenc-gen(1)) and
# T5's kind and bidirectional beside is_decoder.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"

check() { # check OUT.EXT CONFIG [gen options...]
    out=$1; cfg=$2; shift 2
    expect_ok "$POSENC" gen --config "$cfg" -o "$out" --seq-len 64 "$@"
    # info takes gen's model options: --precision (gen's default is exact, info's hf),
    # --max-model-len, --layer-type
    case " $* " in *" --precision "*) iopts="" ;; *) iopts="--precision exact" ;; esac
    while [ $# -gt 0 ]; do
        case $1 in
        --precision|--layer-type|--max-model-len) iopts="$iopts $1 $2"; shift 2 ;;
        *) shift ;;
        esac
    done
    # shellcheck disable=SC2086
    expect_ok "$POSENC" info --config "$cfg" --seq-len 64 --json $iopts
    cp out.stdout info.json
    "$PY" - "$out" info.json <<'PY'
import json, sys, zipfile, struct, math
out, info = sys.argv[1], json.load(open(sys.argv[2]))
if out.endswith(".npz"):
    meta = json.loads(zipfile.ZipFile(out).read("meta.json"))
else:
    b = open(out, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    meta = {}
    for k, v in json.loads(b[8:8 + n])["__metadata__"].items():
        try:
            meta[k] = json.loads(v)
        except ValueError:
            meta[k] = v
# facts of the written table, not of the model: its layout, dtype and rows, a bias table's
# shape and --broadcast, the --weights file (ALiBi's convention and Shaw's index_formula with no
# option given are the model's, so info has them)
TABLE = {"posenc_version", "layout", "dtype", "n_positions", "first_position", "last_position",
         "positions", "q_len", "k_len", "broadcast_query", "weights"}
LEGACY = {"vllm_class", "vllm_source", "max_model_len", "vllm_cache_len", "vllm_cache_rows",
          "vllm_cache_offset", "vllm_base", "vllm_mscale", "kind", "bidirectional"}
extra = set(meta) - set(info) - TABLE - LEGACY
assert not extra, ("gen writes keys info --json lacks", sorted(extra), out)
assert meta["encoding"] == info["encoding"] and meta["model_type"] == info["model_type"], out
def same(a, b):
    if isinstance(a, float) or isinstance(b, float):  # info prints float32 values in 9 digits
        return a == b or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-8, abs_tol=0))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() <= b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b
for k in set(meta) & set(info):
    if k in ("config", "notes", "layer_type"):  # gen: the config's file name, the table's notes
        continue
    assert same(meta[k], info[k]), (k, meta[k], info[k], out)
for k in LEGACY & set(meta) - {"kind", "bidirectional"}:  # the vllm object's values, flat
    assert same(meta[k], info["vllm"][k if k == "max_model_len" else k[5:]]), (k, out)
if meta["encoding"] == "t5":  # gen's old names for T5's is_decoder, which both write
    assert meta["is_decoder"] == info["is_decoder"], out
    assert meta["kind"] == ("decoder" if info["is_decoder"] else "encoder"), out
    assert meta["bidirectional"] is (not info["is_decoder"]), out
# every note of the model is in the table's notes
assert all(n in meta["notes"] for n in info["notes"]), out
PY
}

# RoPE: each rope_type and precision
for p in exact hf vllm ggml; do
    check "l3-$p.npz" "$C/llama-3.1-8b.json" --precision $p
done
check q3.safetensors "$C/qwen3-8b.json"
check yarn.npz "$C/deepseek-v3.json" --precision exact
check yarn-vllm.safetensors "$C/deepseek-v3.json" --precision vllm
check longrope.npz "$C/extra/phi-3-mini-128k.json" --precision vllm --max-model-len 4096
check longrope-hf.npz "$C/extra/phi-3-mini-128k.json"
check dynamic.npz "$C/extra/llama-dynamic.json"
check mrope.npz "$C/extra/qwen2-vl-7b.json"
check mrope-ggml.npz "$C/qwen3.5-27b.json" --precision ggml
check nope.npz "$C/qwen3.5-27b.json"
check gemma.npz "$C/gemma-3-27b-it.json" --layer-type sliding_attention
# the other encodings: ALiBi's reference, falcon (bfloat16) and mpt variants, MPT's
# alibi_bias_max and its reordered slopes for a head count not a power of two, Baichuan-13B's 40
# heads, the three conventions (BLOOM keyindex, MPT causal, a BERT ALiBi encoder symmetric)
check alibi.npz "$C/bias/bloom-560m.json"
check falcon.npz "$C/bias/falcon-rw-1b.json"
check mpt.safetensors "$C/bias/mpt-7b.json"
check mpt12.npz "$C/bias/mpt-12heads.json"
check baichuan.safetensors "$C/baichuan-13b.json"
printf '{"model_type": "bert", "position_embedding_type": "alibi", "hidden_size": 96,
  "num_attention_heads": 6, "max_position_embeddings": 128}\n' > bert-alibi.json
check bert-alibi.npz bert-alibi.json
# T5: the encoder's defaults, and a decoder with the config's own buckets
check t5.npz "$C/bias/t5-small.json"
printf '{"model_type": "t5", "is_decoder": true, "num_heads": 6, "d_model": 384, "d_kv": 64,
  "relative_attention_num_buckets": 16, "relative_attention_max_distance": 40}\n' > t5-dec.json
check t5-dec.safetensors t5-dec.json
check shaw.npz "$C/bias/bert-relative.json"
check sin.npz "$C/sinusoidal/marian.json"
check fsmt.npz "$C/sinusoidal/fsmt.json"
check distilbert.safetensors "$C/sinusoidal/distilbert-sinusoidal.json"
# what info now says from the same resolved parameters as gen (checked against the models' code
# in t_bias_configs.sh): the conventions and Shaw's index
"$PY" - <<'PY'
import json, subprocess, os
def info(cfg):
    return json.loads(subprocess.run([os.environ["POSENC"], "info", "--json", "--config", cfg],
                                     check=True, capture_output=True).stdout)
C = os.environ["DATA"] + "/configs"
# transformers bloom build_alibi_tensor: m * j; mpt build_mpt_alibi_tensor: m * (j - (L-1))
assert info(C + "/bias/bloom-560m.json")["convention"] == "keyindex"
assert info(C + "/bias/mpt-7b.json")["convention"] == "causal"
assert info("bert-alibi.json")["convention"] == "symmetric"
# BertSelfAttention relative_key: distance_embedding(l - r + max_position_embeddings - 1)
s = info(C + "/bias/bert-relative.json")
assert s["variant"] == "bert" and s["max_relative_position"] == 15, s
assert s["index_formula"] == "clip(query - key, -k, k) + k", s
d = info("t5-dec.json")
assert d["is_decoder"] is True and d["num_buckets"] == 16 and d["max_distance"] == 40, d
assert d["heads"] == 6 and d["d_model"] == 384 and d["head_dim"] == 64, d
PY
