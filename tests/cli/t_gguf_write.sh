# t_gguf_write.sh: llama.cpp reads the GGUF files posenc writes, and they hold what posenc meant.
#
# tests/interop/ggml_gguf_dump.c is built here against llama.cpp's prebuilt libggml-base.so
# (tests/interop/fetch.sh libs) and prints every key, type, value and tensor (name, type, ne,
# offset, data) gguf_init_from_file sees; gguf-py's GGUFReader (tests/interop/gguf_dump.py, from
# the fetched source) must print the same lines. tests/interop/gguf_check.py then compares the
# dump with the same gen run written as safetensors (arrays and metadata, value by value) and,
# for RoPE, with the file llama.cpp's own convert_hf_to_gguf.py writes for the config
# (tests/interop/gguf_convert.py): general.architecture, the {arch}.* keys and the rope_freqs /
# rope_factors_* tensors must be the converter's, type and value. Skipped (one line saying why)
# without npm or the network, like t_interop_gguf.sh.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
P="$POSENC"

set +e
src=$(sh "$SRC/tests/interop/fetch.sh" src)
rc=$?
[ "$rc" -eq 0 ] && { libs=$(sh "$SRC/tests/interop/fetch.sh" libs); rc=$?; }
set -e
if [ "$rc" -eq 77 ]; then
    echo "${libs:-$src}"
    exit 77
fi
[ "$rc" -eq 0 ] || { echo "fetch.sh failed: $src ${libs:-}"; exit 1; }
${CC:-cc} -std=c11 -O1 -I"$src/ggml/include" -o dump "$SRC/tests/interop/ggml_gguf_dump.c" \
    -L"$libs" -lggml-base -Wl,-rpath,"$libs"

# both readers see the same file; ggml's view goes to NAME.txt
readers() {
    ./dump "$1.gguf" > "$1.txt"
    PYTHONPATH="$src/gguf-py" "$PY" "$SRC/tests/interop/gguf_dump.py" "$1.gguf" > "$1.py.txt"
    cmp "$1.txt" "$1.py.txt"
}

# case NAME HOW GEN-ARGS...: gen as GGUF and as safetensors, both readers, check; HOW is yes
# (against the converter's file for $cfg, made once per config), no-theta (the same for a config
# without rope_theta, see gguf_check.py --no-theta), no (no llama.cpp keys), or the start of the
# note gen adds when it writes none
case_() {
    name=$1; conv=$2; shift 2
    expect_ok "$P" gen "$@" -o "$name.gguf"
    cp out.stderr "$name.stderr"
    expect_ok "$P" gen "$@" -o "$name.safetensors"
    readers "$name"
    if [ "$conv" = yes ] || [ "$conv" = no-theta ]; then
        ref="conv-$(basename "$cfg" .json)"
        if [ ! -f "$ref.txt" ]; then
            "$PY" "$SRC/tests/interop/gguf_convert.py" "$src" convert "$cfg" "$ref.gguf" \
                > "$ref.log" 2>&1 || { cat "$ref.log"; exit 1; }
            ./dump "$ref.gguf" > "$ref.txt"
        fi
        opt=; [ "$conv" = no-theta ] && opt=--no-theta
        "$PY" "$SRC/tests/interop/gguf_check.py" $opt "$name.txt" "$name.safetensors" "$ref.txt"
    elif [ "$conv" = no ]; then
        "$PY" "$SRC/tests/interop/gguf_check.py" "$name.txt" "$name.safetensors"
    else
        "$PY" "$SRC/tests/interop/gguf_check.py" --gguf-note "$conv" "$name.txt" \
            "$name.safetensors"
    fi > "$name.check"
    grep -qx ok "$name.check"
}

# RoPE: llama3 rope_freqs, LongRoPE long and short factors, YaRN (DeepSeek-V3, gpt-oss), partial
# rotary with sections (Qwen3.5), linear scaling
for c in llama-3.1-8b extra/phi-3-mini-128k deepseek-v3 gpt-oss-20b qwen3.5-27b \
         extra/longchat-7b-16k-linear; do
    cfg="$C/$c.json"
    how=yes
    grep -q '"rope_theta"' "$cfg" || how=no-theta
    case_ "$(basename "$c")" $how --config "$cfg" --seq-len 16
    test ! -s "$(basename "$c").stderr"
done
grep -q '^tensor rope_freqs.weight f32 64,1,1,1 ' llama-3.1-8b.txt
grep -q '^kv general.architecture str "llama"$' llama-3.1-8b.txt
grep -q '^kv llama.rope.freq_base f32 500000$' llama-3.1-8b.txt
grep -q '^tensor rope_factors_long.weight f32 48,1,1,1 ' phi-3-mini-128k.txt
grep -q '^tensor rope_factors_short.weight f32 48,1,1,1 ' phi-3-mini-128k.txt
grep -q '^kv qwen35.rope.dimension_sections array\[i32\] ' qwen3.5-27b.txt
grep -q '^kv posenc.head_dim i64 128$' llama-3.1-8b.txt
grep -q '^kv posenc.theta f64 500000$' llama-3.1-8b.txt

# other dtypes, layouts, positions and precisions; one array only
cfg="$C/llama-3.1-8b.json"
case_ bf16 yes --config "$cfg" --dtype bf16 --table-layout half --positions 0,5,131071
grep -q '^tensor cos bf16 64,3,1,1 0 384$' bf16.txt
case_ f16 yes --config "$cfg" --dtype f16 --precision hf --table-layout interleaved --seq-len 5
case_ f64 yes --config "$cfg" --dtype f64 --seq-len 3
case_ cosonly yes --config "$cfg" --array cos --seq-len 7
grep -c '^tensor ' cosonly.txt | grep -qx 2

# encodings without llama.cpp keys: posenc's arrays and keys only
cfg=
case_ alibi no --config "$C/bias/bloom-560m.json" --seq-len 6
case_ alibi_b no --config "$C/baichuan-13b.json" --seq-len 5 --broadcast
case_ sin no --encoding sinusoidal --variant fairseq --d-model 16 --seq-len 9
case_ t5 no --config "$C/bias/t5-small.json" --seq-len 8
grep -q '^kv posenc.encoding str "alibi"$' alibi.txt
! grep -q 'general.architecture' alibi.txt sin.txt t5.txt

# a RoPE model the converter has no class for: one line, the file says so, no llama.cpp keys
case_ gptj "gguf: no llama.cpp keys: model_type 'gptj'" --config "$C/gpt-j-6b.json" --seq-len 4
test "$(wc -l < gptj.stderr)" -eq 1
grep -q "^posenc gen: '.*gpt-j-6b.json': model_type 'gptj': convert_hf_to_gguf.py has no class for it" gptj.stderr
grep -q "'gptj.gguf' holds posenc's arrays and keys only$" gptj.stderr
grep -q '^kv posenc.notes array\[str\] \[.*"gguf: no llama.cpp keys: model_type' gptj.txt

# convert: a safetensors file's metadata comes as JSON only (numbers float64); a GGUF file's own
# posenc.* keys keep their names
expect_ok "$P" convert llama-3.1-8b.safetensors conv1.gguf
readers conv1
"$PY" "$SRC/tests/interop/gguf_check.py" --untyped conv1.txt llama-3.1-8b.safetensors | grep -qx ok
expect_ok "$P" convert llama-3.1-8b.gguf conv2.gguf
readers conv2
grep -q '^kv posenc.head_dim ' conv2.txt
! grep -q 'posenc\.posenc\.' conv2.txt
expect_ok "$P" convert conv2.gguf:cos cos.npy
expect_ok "$P" convert llama-3.1-8b.gguf:cos cos0.npy
cmp cos.npy cos0.npy

# what GGUF cannot hold: one line, exit 3, no file
"$PY" - <<'PY'
import numpy as np
np.save("u8.npy", np.arange(6, dtype=np.uint8))
np.save("d5.npy", np.zeros((1, 1, 1, 2, 2), np.float32))
np.savez("long.npz", **{"n" * 64: np.zeros(2, np.float32)})
PY
expect_fail 3 "'u8.gguf': array 'u8' is u8; GGUF stores f32, f16, bf16, f64, i32 and i64 tensors" \
    "$P" convert u8.npy u8.gguf
no_file u8.gguf
expect_fail 3 "has 5 dimensions; ggml tensors have at most 4" "$P" convert d5.npy d5.gguf
no_file d5.gguf
expect_fail 3 "is longer than ggml's 63 bytes" "$P" convert long.npz long.gguf
no_file long.gguf
expect_fail 2 "-o - writes NPY only, not gguf" \
    "$P" gen --config "$C/llama-3.1-8b.json" --format gguf -o - --array cos
