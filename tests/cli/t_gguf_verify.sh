# t_gguf_verify.sh: info --gguf and verify --config --gguf on GGUF files that llama.cpp's own
# converter writes at test time (tests/interop/gguf_convert.py instantiates convert_hf_to_gguf.py's
# model class for each config and runs its set_gguf_parameters and generate_extra_tensors), from
# the llama.cpp source tests/interop/fetch.sh brings. Correct files pass; files with exactly one
# mistake fail with one check naming the key and the consequence. llama3's rope_freqs are compared
# bit for bit with the converter's for 20 configs. The .gguf_arch registry column and
# lib/model/llama_arch.def are checked against the converter and loader sources. Skipped (one line
# "skipped: ...") without npm or the network.
. "$SRC/tests/cli/lib.sh"

set +e
llama=$(sh "$SRC/tests/interop/fetch.sh" src 2> fetch.log)
rc=$?
set -e
if [ "$rc" -eq 77 ]; then
    echo "$llama"
    exit 77
fi
[ "$rc" -eq 0 ] || { cat fetch.log; exit 1; }
conv() { "$PY" "$SRC/tests/interop/gguf_convert.py" "$llama" "$@"; }
D=$DATA/configs

# the registry column and the architecture table, against llama.cpp's own source
conv archs "$SRC/lib/model/families.def" > archs.txt || { cat archs.txt; exit 1; }
grep -q '^[0-9]* rows with a gguf_arch, 0 wrong$' archs.txt
"$PY" "$SRC/tests/golden/llama_arch.py" "$llama" > arch.txt || { cat arch.txt; exit 1; }

# correct files, and each mistake on its own file
good="llama-3.1-8b qwen3-8b gpt-oss-20b deepseek-v3 qwen3.5-27b extra/phi-3-mini-128k
gguf/codellama-7b gguf/ministral3-8b-text gguf/phi-2 gguf/pythia-70m gguf/stablelm-2-1_6b
gguf/command-r families/granite-3.3-8b-instruct
families/gemma-2-9b-it extra/qwen2-vl-7b gguf/qwen3-vl-235b-sections glm-4.5 glm-5 minimax-m2.5
llama-4-scout-17b-16e-instruct gguf/cohere2-shape gguf/olmo2-shape gguf/olmo3-yarn-shape
gguf/mistral3-small-shape gguf/seed-oss-shape gguf/olmoe-shape gguf/starcoder2-shape
gguf/gemma-shape gguf/ernie4_5-shape gguf/granitemoe-shape gguf/olmo-shape gguf/ernie4_5-moe-shape
gguf/dots1-shape gguf/apertus-shape families/internlm2-chat-7b gguf/nemotron-shape gguf/bitnet-shape
gguf/dbrx-shape gguf/jais2-shape falcon-7b gguf/lfm2-shape gguf/lfm2moe-shape gguf/chameleon-shape
gguf/hunyuan-dense-shape families/hunyuan-a13b families/chatglm3-6b families/exaone4-1.2b-w4a16
gguf/exaone4-32b-shape gguf/afmoe-shape gguf/exaone-moe-shape gguf/baichuan-7b-shape
gguf/cohere2moe-shape gguf/deepseek-v32-shape families/minimax-m1 gguf/hy-v3-shape gguf/eurobert-shape
gguf/falcon-h1-shape families/granite-4-8b-dense-hybrid gguf/granite-4-hybrid-rope-shape
gguf/bamba-shape"
# architectures with sliding layers whose RoPE llama.cpp sets per layer type: each type
swa="mimo-v2-flash gguf/gemma3n-shape gguf/olmo3-yarn-shape gguf/cohere2-shape gemma-3-27b-it
gguf/mellum-shape families/modernbert-base"
: > list
for c in $good; do echo "$D/$c.json $(basename $c).gguf" >> list; done
cat >> list <<EOF
$D/gguf/codellama-7b.json m_theta.gguf freq_base=10000
$D/llama-3.1-8b.json m_nofreqs.gguf drop=rope_freqs.weight
$D/deepseek-v3.json m_dsattn.gguf set=rope.scaling.yarn_log_multiplier=1
$D/gguf/ministral3-8b-text.json m_mistral.gguf unset=rope.scaling.yarn_log_multiplier
$D/qwen3-8b.json m_arch.gguf arch=llama
$D/qwen3-8b.json m_unknown.gguf arch=qwen9
$D/extra/phi-3-mini-128k.json m_swap.gguf swap=rope_factors_long.weight,rope_factors_short.weight
$D/extra/phi-3-mini-128k.json m_octx.gguf setu=rope.scaling.original_context_length=131072
$D/gguf/phi-2.json m_phi2dim.gguf setu=rope.dimension_count=80
$D/gguf/command-r.json m_crctx.gguf setu=context_length=8192
$D/gemma-3-27b-it.json m_swa.gguf set=rope.freq_base_swa=1000000
$D/gemma-3-27b-it.json m_g3base.gguf freq_base=10000
$D/families/qwen3-vl-235b-a22b-thinking.json q3vl-nosec.gguf
$D/extra/qwen2-vl-7b.json m_q2vlsec.gguf unset=rope.dimension_sections
$D/glm-4.5.json m_glmdim.gguf setu=rope.dimension_count=128
$D/minimax-m2.5.json m_mmdim.gguf setu=rope.dimension_count=128
$D/mimo-v2-flash.json m_mimoswa.gguf set=rope.freq_base_swa=5000000
$D/families/gemma-2-9b-it.json m_g2swa.gguf set=rope.freq_base_swa=1000000
$D/gemma-3-27b-it.json m_g3pat.gguf setu=attention.sliding_window_pattern=2
$D/gguf/granitemoe-shape.json m_gmdim.gguf setu=rope.dimension_count=32
$D/gguf/olmo-shape.json m_olmobase.gguf freq_base=500000
$D/gguf/ernie4_5-moe-shape.json m_ernarch.gguf arch=ernie4_5
$D/gguf/dots1-shape.json m_dotsbase.gguf freq_base=10000
$D/gguf/apertus-shape.json m_apfreqs.gguf drop=rope_freqs.weight
$D/families/internlm2-chat-7b.json m_ilmarch.gguf arch=qwen2
$D/gguf/nemotron-shape.json m_nemdim.gguf setu=rope.dimension_count=128
$D/gguf/bitnet-shape.json m_bitfac.gguf set=rope.scaling.factor=4
$D/gguf/dbrx-shape.json m_dbrxbase.gguf freq_base=10000
$D/falcon-7b.json m_falbase.gguf freq_base=1000000
$D/gguf/jais2-shape.json m_jaisdim.gguf setu=rope.dimension_count=64
$D/gguf/lfm2-shape.json m_lfmbase.gguf freq_base=10000
$D/gguf/lfm2moe-shape.json m_lfmmdim.gguf setu=rope.dimension_count=32
$D/gguf/chameleon-shape.json m_chambase.gguf freq_base=500000
$D/gguf/hunyuan-dense-shape.json m_hyd.gguf unset=rope.freq_base
$D/families/hunyuan-a13b.json m_hym.gguf freq_base=10000
$D/families/chatglm3-6b.json m_glmrot.gguf setu=rope.dimension_count=128
$D/gguf/hunyuan-dense-shape.json m_hyalpha.gguf set=rope.scaling.alpha=1000
$D/families/hunyuan-a13b.json hym-alpha.gguf set=rope.scaling.alpha=1000
$D/families/exaone4-1.2b-w4a16.json m_ex4freqs.gguf drop=rope_freqs.weight
$D/gguf/exaone4-32b-shape.json m_ex4blocks.gguf setu=block_count=60
$D/gguf/mellum-shape.json m_melpat.gguf unset=attention.sliding_window_pattern
$D/gguf/mellum-shape.json mel-swa.gguf set=rope.freq_base_swa=500000
$D/gguf/afmoe-shape.json m_afwin.gguf unset=attention.sliding_window
$D/gguf/exaone-moe-shape.json m_exmpat.gguf setu=attention.sliding_window_pattern=2
$D/gguf/baichuan-7b-shape.json m_bcblocks.gguf setu=block_count=40
$D/gguf/cohere2moe-shape.json m_c2mlead.gguf setu=leading_dense_block_count=4
$D/gguf/cohere2moe-shape.json m_c2mpat.gguf setu=attention.sliding_window_pattern=4
$D/gguf/hy-v3-shape.json m_hyv3base.gguf freq_base=10000
$D/families/minimax-m1.json m_mm1dim.gguf setu=rope.dimension_count=128
$D/gguf/deepseek-v32-shape.json m_ds32mul.gguf set=rope.scaling.yarn_log_multiplier=1
$D/gguf/eurobert-shape.json m_eubase.gguf freq_base=10000
$D/families/modernbert-base.json m_mbswa.gguf set=rope.freq_base_swa=160000
$D/families/modernbert-base.json m_mbpat.gguf setu=attention.sliding_window_pattern=2
$D/gguf/falcon-h1-shape.json m_fhkey.gguf setu=attention.key_length=64
$D/gguf/granite-4-hybrid-rope-shape.json m_ghft.gguf unset=rope.scaling.finetuned
$D/families/granite-4-8b-dense-hybrid.json m_gharch.gguf arch=granitehybrid
EOF
for c in $swa; do echo "$D/$c.json $(basename $c).gguf" >> list; done
# llama3 rope_freqs: 20 configs over theta, head_dim, factor, low/high_freq_factor, M0
"$PY" - "$D/llama-3.1-8b.json" <<'PY'
import itertools, json, sys
base = json.load(open(sys.argv[1]))
grid = itertools.product([10000.0, 500000.0, 8e6, 1000000.5], [64, 128, 256], [8.0, 32.0, 3.0],
                         [(1.0, 4.0), (2.0, 8.0), (0.5, 3.0)], [8192, 4096, 2048, 32768])
with open("list", "a") as f:
    for n, (theta, hd, fac, (lo, hi), m0) in enumerate(list(grid)[::22]):
        c = dict(base, rope_theta=theta, head_dim=hd)
        c["rope_scaling"] = dict(base["rope_scaling"], factor=fac, low_freq_factor=lo,
                                 high_freq_factor=hi, original_max_position_embeddings=m0)
        json.dump(c, open(f"l3_{n:02d}.json", "w"))
        f.write(f"l3_{n:02d}.json l3_{n:02d}.gguf\n")
PY
# Mixtral without rope_theta: the converter, without transformers, writes no freq_base, so
# llama.cpp uses 10000 where transformers' class default is 1e6
"$PY" -c "
import json; c = json.load(open('$D/mixtral-8x7b-v0.1.json')); c.pop('rope_theta')
json.dump(c, open('mixtral-notheta.json', 'w'))"
echo "mixtral-notheta.json m_notheta.gguf" >> list
conv batch list > conv.log 2>&1 || { cat conv.log; exit 1; }

for c in $good; do
    n=$(basename $c)
    expect_ok "$POSENC" verify --config "$D/$c.json" --gguf $n.gguf --report $n.report.json
    grep -q '^result: PASS' out.stdout || { cat out.stdout; exit 1; }
    grep -q '^ok    cos/sin (ggml numerics) .*equal (0 difference)' out.stdout || { cat out.stdout; exit 1; }
done
n3=0
for f in l3_*.json; do
    expect_ok "$POSENC" verify --config $f --gguf ${f%.json}.gguf -q
    n3=$((n3 + 1))
done
[ "$n3" -eq 20 ]

# mistake FILE CONFIG NFAIL 'FAIL line start' 'consequence text' [verify options]
# (NFAIL counts the tables check too: every mistake that changes llama.cpp's cos and sin fails
# it as well; the softmax scale and the pairing leave the per-frequency values alone)
mistake() {
    m_file=$1 m_cfg=$2 m_n=$3 m_key=$4 m_text=$5
    shift 5
    set +e
    "$POSENC" verify --config "$m_cfg" --gguf "$m_file" --report "$m_file.json" "$@" > out.stdout 2> out.stderr
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || { echo "$m_file: expected exit 1, got $rc"; cat out.stdout out.stderr; return 1; }
    [ "$(grep -c "^FAIL" out.stdout)" -eq "$m_n" ] || { echo "$m_file: not $m_n failure(s)"; cat out.stdout; return 1; }
    grep "^FAIL  $m_key" out.stdout | grep -qF -- "$m_text" || { echo "$m_file: no '$m_key ... $m_text'"; cat out.stdout; return 1; }
}
mistake m_theta.gguf "$D/gguf/codellama-7b.json" 2 "llama.rope.freq_base" \
    "expected 1000000, found 10000: llama.cpp uses theta 10000 instead of 1e+06"
mistake m_nofreqs.gguf "$D/llama-3.1-8b.json" 2 "rope_freqs.weight" \
    "no rope_freqs.weight: llama.cpp will not apply llama3 scaling; output degrades past 8192 tokens"
mistake m_dsattn.gguf "$D/deepseek-v3.json" 1 "deepseek2.rope.scaling.yarn_log_multiplier" \
    "softmax scale is 1.586673 instead of 0.1352338"
mistake m_mistral.gguf "$D/gguf/ministral3-8b-text.json" 2 "mistral3.rope.scaling.yarn_log_multiplier" \
    "llama.cpp scales cos and sin by 1 instead of 0.7829266"
mistake m_arch.gguf "$D/qwen3-8b.json" 1 "general.architecture" \
    "llama.cpp rotates pairs (2i, 2i+1) (norm) instead of pairs (i, i+n/2) (neox)"
mistake m_unknown.gguf "$D/qwen3-8b.json" 2 "general.architecture" \
    "llama.cpp has no architecture 'qwen9' and refuses the file"
mistake m_notheta.gguf mixtral-notheta.json 2 "llama.rope.freq_base" \
    "expected 1000000, found 10000"
mistake m_swap.gguf "$D/extra/phi-3-mini-128k.json" 3 "rope_factors_long.weight" \
    "rope_factors_long and rope_factors_short are swapped"
mistake m_phi2dim.gguf "$D/gguf/phi-2.json" 2 "phi2.rope.dimension_count" \
    "llama.cpp rotates 80 dims of each head instead of 32"
mistake m_crctx.gguf "$D/gguf/command-r.json" 1 "command-r.context_length" \
    "llama.cpp's default context is 8192 tokens instead of 131072"
mistake m_q2vlsec.gguf "$D/extra/qwen2-vl-7b.json" 1 "(load)" \
    "llama.cpp refuses the file: qwen2vl.rope.dimension_sections is required"
mistake m_glmdim.gguf "$D/glm-4.5.json" 2 "glm4moe.rope.dimension_count" \
    "llama.cpp rotates 128 dims of each head instead of 64"
mistake m_mmdim.gguf "$D/minimax-m2.5.json" 2 "minimax-m2.rope.dimension_count" \
    "llama.cpp rotates 128 dims of each head instead of 64"
mistake m_g2swa.gguf "$D/families/gemma-2-9b-it.json" 1 "gemma2.rope.freq_base_swa" \
    "llama.cpp runs the sliding-window layers with theta 1e+06 and freq_scale 1 instead of 10000 and 1"
set +e
"$POSENC" verify --config "$D/gemma-3-27b-it.json" --gguf m_g3pat.gguf --layer-type full_attention > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ] && [ "$(grep -c '^FAIL' out.stdout)" -eq 1 ] &&
    grep '^FAIL  gemma3.attention.sliding_window_pattern' out.stdout | grep -qF -- \
    "llama.cpp runs 21 layer(s) with the other layer type's RoPE and attention (the first: layer 1 as global)" ||
    { cat out.stdout; exit 1; }
mistake m_gmdim.gguf "$D/gguf/granitemoe-shape.json" 2 "granitemoe.rope.dimension_count" \
    "llama.cpp rotates 32 dims of each head instead of 64"
mistake m_olmobase.gguf "$D/gguf/olmo-shape.json" 2 "olmo.rope.freq_base" \
    "expected 10000, found 500000: llama.cpp uses theta 500000 instead of 10000"
mistake m_ernarch.gguf "$D/gguf/ernie4_5-moe-shape.json" 1 "general.architecture" \
    "llama.cpp builds the ernie4_5 graph, not ernie4_5-moe"
mistake m_dotsbase.gguf "$D/gguf/dots1-shape.json" 2 "dots1.rope.freq_base" \
    "expected 10000000, found 10000"
mistake m_apfreqs.gguf "$D/gguf/apertus-shape.json" 2 "rope_freqs.weight" \
    "no rope_freqs.weight: llama.cpp will not apply llama3 scaling; output degrades past 8192 tokens"
mistake m_ilmarch.gguf "$D/families/internlm2-chat-7b.json" 1 "general.architecture" \
    "llama.cpp rotates pairs (i, i+n/2) (neox) instead of pairs (2i, 2i+1) (norm)"
mistake m_nemdim.gguf "$D/gguf/nemotron-shape.json" 2 "nemotron.rope.dimension_count" \
    "llama.cpp rotates 128 dims of each head instead of 64"
mistake m_bitfac.gguf "$D/gguf/bitnet-shape.json" 2 "bitnet.rope.scaling.factor" \
    "llama.cpp scales positions by 0.25 instead of 1"
mistake m_dbrxbase.gguf "$D/gguf/dbrx-shape.json" 2 "dbrx.rope.freq_base" \
    "expected 500000, found 10000"
mistake m_falbase.gguf "$D/falcon-7b.json" 2 "falcon.rope.freq_base" \
    "expected 10000, found 1000000: llama.cpp uses theta 1e+06 instead of 10000"
mistake m_jaisdim.gguf "$D/gguf/jais2-shape.json" 2 "jais2.rope.dimension_count" \
    "llama.cpp rotates 64 dims of each head instead of 128"
mistake m_lfmbase.gguf "$D/gguf/lfm2-shape.json" 2 "lfm2.rope.freq_base" \
    "expected 1000000, found 10000"
mistake m_lfmmdim.gguf "$D/gguf/lfm2moe-shape.json" 2 "lfm2moe.rope.dimension_count" \
    "llama.cpp rotates 32 dims of each head instead of 64"
mistake m_chambase.gguf "$D/gguf/chameleon-shape.json" 2 "chameleon.rope.freq_base" \
    "expected 10000, found 500000"
mistake m_hyd.gguf "$D/gguf/hunyuan-dense-shape.json" 2 "hunyuan-dense.rope.freq_base" \
    "expected 11158840, found 10000"
mistake m_hym.gguf "$D/families/hunyuan-a13b.json" 2 "hunyuan-moe.rope.freq_base" \
    "expected 11158840, found 10000"
mistake m_glmrot.gguf "$D/families/chatglm3-6b.json" 2 "chatglm.rope.dimension_count" \
    "llama.cpp rotates 128 dims of each head instead of 64"
# rope.scaling.alpha: hunyuan-dense's loader (src/models/hunyuan-vl.cpp) folds it into the base,
# hunyuan-moe's reads it for nothing
mistake m_hyalpha.gguf "$D/gguf/hunyuan-dense-shape.json" 2 "hunyuan-dense.rope.scaling.alpha" \
    "expected 11158840, found"
expect_ok "$POSENC" verify --config "$D/families/hunyuan-a13b.json" --gguf hym-alpha.gguf
# EXAONE 4.0: llama3 factors with Exaone4Model's own defaults; sliding layers (and NoPE global
# ones) only for 64 layers (src/models/exaone4.cpp), so the 1.2B rotates every layer and a
# 32B file with another block_count runs every layer as a rotated global one
mistake m_ex4freqs.gguf "$D/families/exaone4-1.2b-w4a16.json" 2 "rope_freqs.weight" \
    "no rope_freqs.weight: llama.cpp will not apply llama3 scaling; output degrades past 8192 tokens"
expect_ok "$POSENC" verify --config "$D/gguf/exaone4-32b-shape.json" --gguf exaone4-32b-shape.gguf \
    --layer-type sliding_attention
grep -q '^ok    exaone4.attention.sliding_window_pattern full: 3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63 (of 64 layers)' \
    out.stdout || { cat out.stdout; exit 1; }
expect_fail 2 "layer type 'full_attention' carries no RoPE" "$POSENC" verify \
    --config "$D/gguf/exaone4-32b-shape.json" --gguf exaone4-32b-shape.gguf --layer-type full_attention
mistake m_ex4blocks.gguf "$D/gguf/exaone4-32b-shape.json" 1 "exaone4.block_count" \
    "llama.cpp runs 45 layer(s) with the other layer type's RoPE and attention (the first: layer 0 as global)"
grep -qF "15 are rotated where the config has none (3, 7, 11," out.stdout || { cat out.stdout; exit 1; }
# Mellum: the sliding layers come from the file's bool array (required with a window: the
# npm libllama refuses the file without it) and run with the global base unscaled
# (src/models/mellum.cpp), so rope.freq_base_swa changes nothing
mistake m_melpat.gguf "$D/gguf/mellum-shape.json" 1 "(load)" \
    "llama.cpp refuses the file: mellum.attention.sliding_window_pattern is required" \
    --layer-type sliding_attention
expect_ok "$POSENC" verify --config "$D/gguf/mellum-shape.json" --gguf mel-swa.gguf --layer-type sliding_attention
grep -q "^note: llama.cpp rotates Mellum's sliding-window layers with the global freq_base" out.stdout ||
    { cat out.stdout; exit 1; }
# AFMoE: sliding layers only with a window (src/models/afmoe.cpp), NoPE every 4th layer
mistake m_afwin.gguf "$D/gguf/afmoe-shape.json" 1 "afmoe.attention.sliding_window" \
    "llama.cpp runs 6 layer(s) with the other layer type's RoPE and attention (the first: layer 0 as global)" \
    --layer-type sliding_attention
# K-EXAONE (exaone-moe.cpp): sliding layers from the uint32 period, RoPE on them only
mistake m_exmpat.gguf "$D/gguf/exaone-moe-shape.json" 1 "exaone-moe.attention.sliding_window_pattern" \
    "expected full: 3, 7 (of 8 layers), found full: 1, 3, 5, 7 (of 8 layers)"
# Baichuan: baichuan.cpp ropes the 32-layer 7B only
mistake m_bcblocks.gguf "$D/gguf/baichuan-7b-shape.json" 1 "baichuan.block_count" \
    "expected 32 (every layer rotated), found 40 (no RoPE): llama.cpp applies no RoPE to any layer"
# Cohere 2 MoE: RoPE on the sliding layers and the leading dense ones; a uint32 pattern p
# makes il % p != 0 sliding (set_swa_pattern(p, true), src/models/cohere2moe.cpp)
mistake m_c2mlead.gguf "$D/gguf/cohere2moe-shape.json" 1 "cohere2moe.leading_dense_block_count" \
    "expected 1, found 4: llama.cpp rotates 1 layer(s) the converter's file leaves without RoPE (the first: layer 3"
mistake m_c2mpat.gguf "$D/gguf/cohere2moe-shape.json" 1 "cohere2moe.attention.sliding_window_pattern" \
    "expected full: 3, 7 (of 8 layers), found full: 0, 4 (of 8 layers)"
mistake m_hyv3base.gguf "$D/gguf/hy-v3-shape.json" 2 "hy_v3.rope.freq_base" \
    "expected 11158840, found 10000"
mistake m_mm1dim.gguf "$D/families/minimax-m1.json" 2 "minimax-01.rope.dimension_count" \
    "llama.cpp rotates 128 dims of each head instead of 64"
# DeepSeek-V3.2: the yarn_log_multiplier of DeepSeek-V2's loader, without llama-context.cpp's
# DEEPSEEK2-only mscale case, so a wrong one moves cos and sin (and not the softmax scale)
mistake m_ds32mul.gguf "$D/gguf/deepseek-v32-shape.json" 2 "deepseek32.rope.scaling.yarn_log_multiplier" \
    "expected 0.73052001, found 0.21327056: llama.cpp scales cos and sin by 0.2132706 instead of 0.73052"
mistake m_eubase.gguf "$D/gguf/eurobert-shape.json" 2 "eurobert.rope.freq_base" \
    "expected 250000, found 10000"
# ModernBERT: sliding layers at local_rope_theta, every 3rd layer global from layer 0
# (set_swa_pattern(3, true), src/models/modern-bert.cpp)
mistake m_mbswa.gguf "$D/families/modernbert-base.json" 2 "modern-bert.rope.freq_base_swa" \
    "expected 10000, found 160000: llama.cpp runs the sliding-window layers with theta 160000" \
    --layer-type sliding_attention
mistake m_mbpat.gguf "$D/families/modernbert-base.json" 1 "modern-bert.attention.sliding_window_pattern" \
    "expected full: 0, 3, 6, 9, 12, 15, 18, 21 (of 22 layers), found full: 0, 2, 4," \
    --layer-type sliding_attention
mistake m_fhkey.gguf "$D/gguf/falcon-h1-shape.json" 3 "falcon-h1.attention.key_length" \
    "expected 128, found 64: llama.cpp takes heads of 64 values instead of 128"
# Granite 4.0: GraniteHybridModel writes a model without SSM layers as granite (or
# granitemoe), and a hybrid one with rope.scaling.finetuned false, so llama.cpp rotates no
# layer of it (src/models/granite-hybrid.cpp), where transformers rotates the attention layers
# of a config with position_embedding_type rope
expect_ok "$POSENC" verify --config "$D/gguf/granite-4-hybrid-rope-shape.json" --gguf granite-4-hybrid-rope-shape.gguf
grep -qF "note: llama.cpp: its layers without RoPE are not the config's: 2 get none where the config rotates them (3, 7)" \
    out.stdout || { cat out.stdout; exit 1; }
# Bamba: rope.scaling.finetuned true, and attn_rotary_emb's 64 dims where transformers rotates
# the whole head: said, not failed (the file is the converter's)
expect_ok "$POSENC" verify --config "$D/gguf/bamba-shape.json" --gguf bamba-shape.gguf
grep -qx "note: llama.cpp: the converter's file rotates 64 dims of each head where the config rotates 128" \
    out.stdout || { cat out.stdout; exit 1; }
! grep -q "its layers without RoPE are not the config's" out.stdout || { cat out.stdout; exit 1; }
mistake m_ghft.gguf "$D/gguf/granite-4-hybrid-rope-shape.json" 1 "granitehybrid.rope.scaling.finetuned" \
    "expected false (no RoPE), found true (RoPE), absent: llama.cpp rotates layers the converter's file leaves without RoPE"
mistake m_gharch.gguf "$D/families/granite-4-8b-dense-hybrid.json" 1 "general.architecture" \
    "expected granite (rope mode norm), found granitehybrid (rope mode norm)"
mistake m_octx.gguf "$D/extra/phi-3-mini-128k.json" 2 "phi3.rope.scaling.original_context_length" \
    "llama.cpp switches from the short to the long factors past a context of 131072 tokens instead of 4096"

# Gemma 3: each layer type against the converter's file; the sliding layers' base is a named
# check, and info --gguf --layer-type reports what llama.cpp runs each type with
# (src/models/gemma3.cpp: freq_base_swa and scale 1 for sliding layers, the file's freq_base
# and linear factor 8 for the global ones)
for t in sliding_attention full_attention; do
    expect_ok "$POSENC" verify --config "$D/gemma-3-27b-it.json" --gguf gemma-3-27b-it.gguf \
        --layer-type $t
    grep -q '^ok    gemma3.rope.freq_base_swa 10000 ' out.stdout || { cat out.stdout; exit 1; }
    grep -q '^ok    cos/sin (ggml numerics) .*equal (0 difference)' out.stdout || { cat out.stdout; exit 1; }
done
set +e
"$POSENC" verify --config "$D/gemma-3-27b-it.json" --gguf m_swa.gguf --layer-type sliding_attention \
    > out.stdout 2> out.stderr
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "m_swa.gguf: expected exit 1, got $rc"; cat out.stdout out.stderr; exit 1; }
# the sliding layers' tables are computed with the sliding layers' arguments, so they fail too
[ "$(grep -c "^FAIL" out.stdout)" -eq 2 ] || { cat out.stdout; exit 1; }
grep '^FAIL  gemma3.rope.freq_base_swa' out.stdout | grep -qF -- \
    "expected 10000, found 1000000: llama.cpp runs the sliding-window layers with theta 1e+06" ||
    { cat out.stdout; exit 1; }
grep -q '^FAIL  cos/sin (ggml numerics) .*position 41, frequency 15' out.stdout || { cat out.stdout; exit 1; }
# without --layer-type the file is checked for each of the config's layer types in one report
expect_ok "$POSENC" verify --config "$D/gemma-3-27b-it.json" --gguf gemma-3-27b-it.gguf --report g3.json
"$PY" -c 'import json, sys; r = json.load(open("g3.json"))
sys.exit(sorted(r["config"]["rope"]) != ["full_attention", "sliding_attention"])' ||
    { cat g3.json; exit 1; }
set +e
"$POSENC" verify --config "$D/gemma-3-27b-it.json" --gguf m_swa.gguf > out.stdout 2> out.stderr
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q '^FAIL  gemma3.rope.freq_base_swa' out.stdout &&
    grep -q '^FAIL  cos/sin (ggml numerics)@sliding_attention .*position 41, frequency 15' out.stdout ||
    { echo "m_swa.gguf without --layer-type: exit $rc"; cat out.stdout out.stderr; exit 1; }
# a wrong global freq_base leaves the sliding layers' tables alone, and fails the global ones
for t in sliding_attention full_attention; do
    set +e
    "$POSENC" verify --config "$D/gemma-3-27b-it.json" --gguf m_g3base.gguf --layer-type $t > out.stdout
    rc=$?
    set -e
    [ "$rc" -eq 1 ] && grep -q '^FAIL  gemma3.rope.freq_base expected 1000000, found 10000' out.stdout ||
        { cat out.stdout; exit 1; }
    if [ $t = sliding_attention ]; then
        grep -q '^ok    cos/sin (ggml numerics) .*equal (0 difference)' out.stdout || { cat out.stdout; exit 1; }
    else
        grep -q '^FAIL  cos/sin (ggml numerics)' out.stdout || { cat out.stdout; exit 1; }
    fi
done
# each layer type of the architectures with sliding layers (lib/model/llama_arch.def .swa): the
# converter's file passes with that type's tables; Cohere 2's full layers have no RoPE
for c in $swa; do
    n=$(basename $c)
    for t in sliding_attention full_attention; do
        [ $n = cohere2-shape ] && [ $t = full_attention ] && continue
        expect_ok "$POSENC" verify --config "$D/$c.json" --gguf $n.gguf --layer-type $t
        grep -q '^ok    cos/sin (ggml numerics) .*equal (0 difference)' out.stdout || { cat out.stdout; exit 1; }
    done
done
# the layers llama.cpp runs as sliding: MiMo-V2 from the file's array (51 = 48 + 3 MTP layers);
# Gemma 3n from its default period 5 (the converter's array is ignored by the scalar read)
expect_ok "$POSENC" verify --config "$D/mimo-v2-flash.json" --gguf mimo-v2-flash.gguf --layer-type full_attention
grep -q '^ok    mimo2.attention.sliding_window_pattern full: 0, 5, 11, 17, 23, 29, 35, 41, 47 (of 51 layers)' \
    out.stdout || { cat out.stdout; exit 1; }
expect_ok "$POSENC" verify --config "$D/gguf/gemma3n-shape.json" --gguf gemma3n-shape.gguf --layer-type full_attention
grep -q '^ok    gemma3n.attention.sliding_window_pattern full: 4 (of 5 layers)' out.stdout ||
    { cat out.stdout; exit 1; }
# the config's layers against llama.cpp's: Llama 4's NoPE layers are every 4th in llama.cpp
# whatever no_rope_layers says, Cohere 2's sliding layers its default period: one note each
# where they differ, none where they agree
"$PY" -c "
import json
c = json.load(open('$D/llama-4-scout-17b-16e-instruct.json')); t = c.get('text_config', c)
t['no_rope_layers'] = [0 if i == 0 else 1 for i in range(t['num_hidden_layers'])]
json.dump(c, open('l4-norope.json', 'w'))
c = json.load(open('$D/gguf/cohere2-shape.json')); c['layer_types'][0] = 'full_attention'
json.dump(c, open('c2-types.json', 'w'))"
expect_ok "$POSENC" verify --config "$D/llama-4-scout-17b-16e-instruct.json" --gguf llama-4-scout-17b-16e-instruct.gguf
! grep -q '^note: llama.cpp: its layers without RoPE' out.stdout || { cat out.stdout; exit 1; }
grep -q '^note: llama.cpp skips RoPE on every 4th layer' out.stdout || { cat out.stdout; exit 1; }
expect_ok "$POSENC" verify --config l4-norope.json --gguf llama-4-scout-17b-16e-instruct.gguf
grep -qF 'note: llama.cpp: its layers without RoPE are not the config'"'"'s: 12 get none where the config rotates them (3, 7, 11,' out.stdout &&
    grep -qF '1 are rotated where the config has none (0)' out.stdout || { cat out.stdout; exit 1; }
expect_ok "$POSENC" verify --config c2-types.json --gguf cohere2-shape.gguf --layer-type sliding_attention
grep -qF "note: llama.cpp: the file's sliding-window layers are not the config's layer_types: 1 run as sliding where the config says full (0)" \
    out.stdout || { cat out.stdout; exit 1; }
expect_fail 2 "layer type 'full_attention' carries no RoPE" \
    "$POSENC" verify --config "$D/gguf/cohere2-shape.json" --gguf cohere2-shape.gguf --layer-type full_attention
# MiMo-V2: a wrong freq_base_swa fails the sliding layers, named, and not the global ones
set +e
"$POSENC" verify --config "$D/mimo-v2-flash.json" --gguf m_mimoswa.gguf --layer-type sliding_attention > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q '^FAIL  mimo2.rope.freq_base_swa expected 10000, found 5000000' out.stdout &&
    grep -q '^FAIL  cos/sin (ggml numerics)' out.stdout || { cat out.stdout; exit 1; }
# Qwen3-VL without rope_scaling: the converter writes no sections and llama.cpp refuses the
# file; posenc says so for the file itself (never a guess)
expect_fail 3 "llama.cpp refuses the file: qwen3vlmoe.rope.dimension_sections is required" \
    "$POSENC" verify --config "$D/families/qwen3-vl-235b-a22b-thinking.json" --gguf q3vl-nosec.gguf
expect_ok "$POSENC" info --gguf gemma-3-27b-it.gguf --layer-type sliding_attention
grep -qx 'llama_cpp.freq_base: 10000' out.stdout && grep -qx 'llama_cpp.freq_scale: 1' out.stdout ||
    { cat out.stdout; exit 1; }
grep -qx 'sliding_window: 1024' out.stdout || { cat out.stdout; exit 1; }
expect_ok "$POSENC" info --gguf gemma-3-27b-it.gguf --layer-type full_attention
grep -qx 'llama_cpp.freq_base: 1000000' out.stdout && grep -qx 'llama_cpp.freq_scale: 0.125' out.stdout ||
    { cat out.stdout; exit 1; }
expect_fail 2 "sliding_attention and full_attention layers, not 'chunked_attention'" \
    "$POSENC" info --gguf gemma-3-27b-it.gguf --layer-type chunked_attention

# the JSON report: the failed check names the key, both values and the consequence
"$PY" - <<'PY'
import json
r = json.load(open("m_theta.gguf.json"))
assert r["ok"] is False and r["inputs"]["gguf"] == "m_theta.gguf", r["inputs"]
bad = [c for c in r["checks"] if not c["ok"]]
assert len(bad) == 2 and bad[1]["name"] == "cos/sin (ggml numerics)", bad
d = bad[0]["details"]
assert d["key"] == "llama.rope.freq_base" and d["expected"] == "1000000" and d["found"] == "10000", d
assert "every frequency but the first is wrong" in d["consequence"], d
good = json.load(open("deepseek-v3.report.json"))
assert good["ok"] is True and all(c["ok"] for c in good["checks"]), good
PY
set +e
"$POSENC" verify --config "$D/llama-3.1-8b.json" --gguf m_nofreqs.gguf -q --report r.md --report r.html
rc=$?
set -e
[ "$rc" -eq 1 ]
grep -q 'rope_freqs.weight' r.md
grep -q 'will not apply llama3 scaling' r.html

# info --gguf: keys, what llama.cpp derives, against closed forms computed here
for n in llama-3.1-8b deepseek-v3 gpt-oss-20b phi-3-mini-128k qwen3.5-27b; do
    expect_ok "$POSENC" info --gguf $n.gguf --json
    cp out.stdout info_$n.json
    [ ! -s out.stderr ]
done
expect_ok "$POSENC" info --gguf phi-3-mini-128k.gguf --json --seq-len 4096
cp out.stdout info_phi_short.json
expect_ok "$POSENC" info --gguf llama-3.1-8b.gguf
grep -q '^rope_mode: norm$' out.stdout
grep -q '^llama_cpp.freq_factors: rope_freqs.weight$' out.stdout
"$PY" - "$D/extra/phi-3-mini-128k.json" <<'PY'
import json, math, sys
import numpy as np
f32 = np.float32
j = {n: json.load(open(f"info_{n}.json")) for n in
     ("llama-3.1-8b", "deepseek-v3", "gpt-oss-20b", "phi-3-mini-128k", "qwen3.5-27b")}
l = j["llama-3.1-8b"]
assert (l["architecture"], l["rope_mode"], l["freq_base"], l["rotary_dim"]) == ("llama", "norm", 500000, 128), l
assert l["has_rope_freqs"] is True and l["scaling_type"] is None and l["ext_factor"] == 0, l
d = j["deepseek-v3"]
assert (d["rope_mode"], d["rotary_dim"], d["scaling_type"], d["factor"]) == ("norm", 64, "yarn", 40), d
assert d["original_context_length"] == 4096 and d["yarn_log_multiplier"] == float(f32(0.1)), d
# llama-context.cpp: attn_factor = 1 / (1 + 0.1 ln 40) in float32; deepseek2.cpp kq_scale =
# mscale^2 / sqrt(192) with mscale = 1 + 0.1 ln 40 (transformers' DeepSeek-V3 softmax_scale)
a = f32(1) / (f32(1) + f32(0.1) * np.log(f32(40)))
assert abs(d["attn_factor"] - a) <= 2e-7 * a, (d["attn_factor"], a)
kq = (1 + 0.1 * math.log(40)) ** 2 / math.sqrt(192)
assert abs(d["llama_cpp"]["kq_scale"] - kq) <= 1e-6 * kq, (d["llama_cpp"]["kq_scale"], kq)
assert d["freq_scale"] == float(f32(1) / f32(40)) and d["ext_factor"] == 1, d
g = j["gpt-oss-20b"]
assert (g["rope_mode"], g["freq_scale"], g["llama_cpp"]["kq_scale"]) == ("neox", 1 / 32, 0.125), g
assert g["attn_factor"] == 1.0 and g["llama_cpp"]["n_ctx_orig_yarn"] == 4096, g
q = j["qwen3.5-27b"]
assert (q["rope_mode"], q["rotary_dim"], q["head_dim"], q["dimension_sections"]) == ("imrope", 64, 256, [11, 11, 10, 0]), q
assert q["freq_base"] == 1e7, q
# Phi-3 LongRoPE: long factors past 4096 tokens, short ones at 4096; attn_factor as the
# converter computes it, sqrt(1 + ln(32) / ln(4096)), in float32
cfg = json.load(open(sys.argv[1]))
long_f = np.array(cfg["rope_scaling"]["long_factor"], dtype=np.float32).astype(np.float64)
short_f = np.array(cfg["rope_scaling"]["short_factor"], dtype=np.float32).astype(np.float64)
for name, fac in (("phi-3-mini-128k", long_f), ("phi_short", short_f)):
    p = j.get(name) or json.load(open("info_phi_short.json"))
    inv = 10000.0 ** (-2 * np.arange(48) / 96) / fac
    assert np.allclose(p["inv_freq"], inv, rtol=1e-15, atol=0), name
    assert p["attn_factor"] == float(f32(math.sqrt(1 + math.log(32) / math.log(4096)))), p["attn_factor"]
assert j["phi-3-mini-128k"]["llama_cpp"]["freq_factors"] == "rope_factors_long.weight"
PY

# an architecture llama.cpp does not know: one line, rope_mode null, a warning; never a guess
expect_ok "$POSENC" info --gguf m_unknown.gguf --json
grep -q "^posenc info: 'm_unknown.gguf': architecture 'qwen9' is not one llama.cpp knows" out.stderr
[ "$(wc -l < out.stderr)" -eq 1 ]
"$PY" -c "
import json; j = json.load(open('out.stdout'))
assert j['rope_mode'] is None and j['attn_factor'] is None and j['inv_freq'] == [], j
assert 'qwen9' in j['warning'] and j['freq_base'] == 1e6, j"

# wrong key types: one line naming the key (GGUFWriter writes them as asked)
PYTHONPATH="$llama/gguf-py" "$PY" - <<'PY'
import gguf, numpy as np
for name, key, how in (("t_f64", "llama.rope.freq_base", "f64"), ("t_i32", "llama.rope.dimension_count", "i32"),
                       ("t_str", "llama.rope.scaling.type", "u32"), ("t_sec", "llama.rope.dimension_sections", "f32arr")):
    w = gguf.GGUFWriter(f"{name}.gguf", "llama")
    w.add_context_length(4096)
    w.add_embedding_length(256)
    if how == "f64":
        w.add_float64(key, 1e6)
    elif how == "i32":
        w.add_int32(key, 64)
    elif how == "u32":
        w.add_uint32(key, 2)
    else:
        w.add_array(key, [1.0, 2.0])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
PY
expect_fail 3 "'t_f64.gguf': key 'llama.rope.freq_base' is float64; llama.cpp reads it as float32" \
    "$POSENC" info --gguf t_f64.gguf
expect_fail 3 "key 'llama.rope.dimension_count' is int32; llama.cpp reads it as uint32" \
    "$POSENC" info --gguf t_i32.gguf
expect_fail 3 "key 'llama.rope.scaling.type' is uint32; llama.cpp reads it as string" \
    "$POSENC" verify --config "$D/llama-3.1-8b.json" --gguf t_str.gguf
expect_fail 3 "key 'llama.rope.dimension_sections' is array[float32]; llama.cpp reads it as an array of int32" \
    "$POSENC" info --gguf t_sec.gguf

# usage errors and refusals
expect_fail 2 "--gguf FILE reads a GGUF file: it takes only" "$POSENC" info --gguf x.gguf --config "$D/qwen3-8b.json"
expect_fail 2 "--gguf with dumps needs --q and --k" \
    "$POSENC" verify --config "$D/qwen3-8b.json" --gguf qwen3-8b.gguf --positions 0-3
expect_fail 3 "model_type 'gptj': convert_hf_to_gguf.py has no class for it" \
    "$POSENC" verify --config "$D/gpt-j-6b.json" --gguf qwen3-8b.gguf
expect_fail 3 "'missing.gguf'" "$POSENC" info --gguf missing.gguf
expect_fail 3 "not a GGUF file" "$POSENC" info --gguf "$D/qwen3-8b.json"

# the tables check names the size, position and frequency of the difference (numbers)
set +e
"$POSENC" verify --config "$D/gguf/codellama-7b.json" --gguf m_theta.gguf --report tab.json > /dev/null
set -e
"$PY" - <<'PY'
import json
r = json.load(open("tab.json"))
t = [c for c in r["checks"] if c["details"]["key"].startswith("cos/sin")]
assert len(t) == 1 and not t[0]["ok"], t
assert "max |difference| 2 (position 41, frequency 15)" in t[0]["details"]["found"], t
PY

# coverage: the architectures with rules against the converter's registry and llama.cpp's
# llama_model_rope_type (tests/interop/llama_coverage.py); every rule names an architecture
# the converter registers, and every architecture this test converts above is counted
"$PY" "$SRC/tests/interop/llama_coverage.py" "$llama" --json > cov.json || { cat cov.json; exit 1; }
"$PY" - <<'PY'
import json
c = json.load(open("cov.json"))
assert c["rules_not_registered"] == [] and c["rules"] == len(c["with_rules"]), c
for a in ("gemma2", "gemma3", "gemma3n", "qwen2vl", "qwen3vl", "qwen3vlmoe", "cohere2", "llama4",
          "glm4", "glm4moe", "glm-dsa", "minimax-m2", "mimo2", "olmo2", "mistral3", "phi2",
          "gptneox", "stablelm", "command-r", "granite", "granitemoe", "olmo", "ernie4_5-moe",
          "dots1", "apertus", "internlm2", "nemotron", "bitnet", "dbrx", "falcon", "jais2",
          "lfm2", "lfm2moe", "chameleon", "hunyuan-dense", "hunyuan-moe", "chatglm", "exaone4",
          "mellum", "afmoe", "exaone-moe", "baichuan", "cohere2moe", "deepseek32", "minimax-01",
          "hy_v3", "eurobert", "modern-bert", "falcon-h1", "granitehybrid"):
    assert a in c["with_rules"], a
assert 0 < c["rules"] <= c["mapped"] <= c["registered_rope"], c
print("coverage %d / %d" % (c["rules"], c["mapped"]))
PY
