# One description of a model (lib/describe.def): the metadata keys gen writes are info --json's
# keys, with the same values, for RoPE (default, llama3, yarn, longrope, dynamic, mrope, at every
# precision), ALiBi, T5, Shaw, sinusoidal and learned configs, in NPZ and safetensors. The keys
# only a written table has (its layout, dtype, positions, gen's table options) are listed here;
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
# shape and --convention/--broadcast, the --weights file, the index a Shaw table holds
TABLE = {"posenc_version", "layout", "dtype", "n_positions", "first_position", "last_position",
         "positions", "q_len", "k_len", "broadcast_query", "convention", "weights",
         "index_formula"}
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
# the other encodings
check alibi.npz "$C/bias/bloom-560m.json"
check mpt.safetensors "$C/bias/mpt-7b.json"
check t5.npz "$C/bias/t5-small.json"
check shaw.npz "$C/bias/bert-relative.json"
check sin.npz "$C/sinusoidal/marian.json"
check fsmt.npz "$C/sinusoidal/fsmt.json"
