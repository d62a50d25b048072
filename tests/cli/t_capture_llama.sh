# t_capture_llama.sh: llama.cpp as its users run it. Tiny random-weight models (one per row of
# the table below, tests/interop/llama_tiny.py) are converted by llama.cpp's own
# convert_hf_to_gguf.py, decoded by the prebuilt libllama from npm (@node-llama-cpp/linux-x64, on
# the portable CPU backend libggml-cpu-x64.so) at positions near 0 and past 32768, and captured by
# examples/capture_llama.c (make capture-llama) into one safetensors file per model; then
#   posenc verify --config C --gguf F --q CAPTURE --layout ggml --seq-len N_CTX
# passes and names llama.cpp, the same with --precision ggml --max-ulp 0 passes, and planted
# mistakes (in the GGUF file llama.cpp then runs, or in the captured positions) fail and are named.
# Skipped, with one line saying why, when tests/interop/fetch.sh exits 77 (no npm or network).
. "$SRC/tests/cli/lib.sh"

for what in libs src; do
    set +e
    sh "$SRC/tests/interop/fetch.sh" $what > fetch_$what.txt 2> fetch.err
    rc=$?
    set -e
    if [ "$rc" -eq 77 ]; then cat fetch_$what.txt; exit 77; fi
    [ "$rc" -eq 0 ] || { cat fetch.err; exit 1; }
done
libs=$(cat fetch_libs.txt)
src=$(cat fetch_src.txt)
tiny="$SRC/tests/interop/llama_tiny.py"

# the capture tool, as a user builds it against the npm pieces
make -s -C "$SRC" capture-llama B="$PWD/b" LLAMA_DIR="$src" LLAMA_LIBDIR="$libs" > make.log 2>&1 ||
    { cat make.log; exit 1; }
cap="$PWD/b/capture-llama"
capture() { "$cap" --backend "$libs/libggml-cpu-x64.so" -p 0:8,40000:8 "$@"; }
NCTX=40192 # 40008 rounded up to llama.cpp's context padding of 256, as the tool reports it

# One row per architecture: the row of llama_tiny.py, the general.architecture llama.cpp reports,
# the layers with RoPE (SmolLM3's and Llama 4's every 4th has none, Cohere 2's global layers none
# (Cohere 2 MoE's but its dense first layer), EXAONE MoE's global layers none; Qwen3.5's and
# Qwen3-Next's linear-attention layers none, LFM2's short-conv, Bamba's Mamba2 and MiniMax-M1's
# lightning-attention layers none),
# q's heads and dims as captured (DeepSeek's and GLM-5's q_pe: the 64 RoPE dims of a 96-dim head;
# the tool leaves GLM-5's DSA indexer q/k out and says so), and
# whether the default verdict must also pass on the backend llama.cpp picks for this machine
# ("best": an FMA build on most CPUs) or is only reported ("-": gpt-oss, whose YaRN has truncate
# false while ggml always rounds the correction dims, so llama.cpp's output is far from the
# config's and only the bit-exact ggml profile explains it, which an FMA build misses by ~1e-3).
# Adding an architecture with llama.cpp rules is one row here and one in ROWS there.
cat > rows.txt << 'EOF'
llama      llama      2  2  64   best
qwen2      qwen2      2  2  64   best
qwen3      qwen3      2  2  64   best
phi3       phi3       2  2  64   best
gemma3     gemma3     6  2  64   best
granite    granite    2  2  64   best
smollm3    smollm3    3  2  64   best
arcee      arcee      2  2  64   best
stablelm   stablelm   2  2  64   best
gptneox    gptneox    2  2  64   best
phi2       phi2       2  2  80   best
command-r  command-r  2  2  64   best
deepseek2  deepseek2  2  2  64   best
qwen3moe   qwen3moe   2  2  64   best
qwen2moe   qwen2moe   2  2  64   best
gpt-oss    gpt-oss    2  2  64   -
mistral3   mistral3   2  2  64   best
qwen35     qwen35     1  2  256  best
qwen35moe  qwen35moe  1  2  256  best
qwen3next  qwen3next  1  2  256  best
gemma2     gemma2     2  2  64   best
gemma      gemma      2  2  64   best
qwen2vl    qwen2vl    2  2  128  best
qwen3vl    qwen3vl    4  2  128  best
qwen3vlmoe qwen3vlmoe 4  2  128  best
llama4     llama4     3  2  64   best
glm4       glm4       2  2  128  best
glm4moe    glm4moe    2  2  128  best
olmo2      olmo2      4  2  64   best
olmoe      olmoe      2  2  64   best
starcoder2 starcoder2 2  2  64   best
seed_oss   seed_oss   2  2  128  best
ernie4_5   ernie4_5   2  2  128  best
cohere2    cohere2    3  2  64   best
minimax-m2 minimax-m2 2  2  128  best
gemma3n    gemma3n    5  2  64   best
glm-dsa    glm-dsa    2  2  64   best
exaone4    exaone4    2  2  64   best
hunyuan-dense hunyuan-dense 2 2 64 best
olmo       olmo       2  2  64   best
internlm2  internlm2  2  2  64   best
nemotron   nemotron   2  2  64   best
jais2      jais2      2  2  64   best
chatglm    chatglm    2  2  64   best
mellum     mellum     4  2  64   best
exaone4-32b exaone4   48 2  64   best
falcon     falcon     2  2  64   best
afmoe      afmoe      3  2  64   best
granitemoe granitemoe 2  2  64   best
ernie4_5-moe ernie4_5-moe 2 2 128 best
hunyuan-moe hunyuan-moe 2 2 128  best
dots1      dots1      2  2  128  best
lfm2       lfm2       1  2  64   best
lfm2moe    lfm2moe    1  2  64   best
dbrx       dbrx       2  2  64   best
bitnet     bitnet     2  2  64   best
apertus    apertus    2  2  64   best
exaone-moe exaone-moe 3  2  64   best
cohere2moe cohere2moe 3  2  64   best
granitehybrid granitehybrid 1 2 64 best
falcon-h1  falcon-h1  2  2  64   best
deepseek32 deepseek32 2  2  64   best
minimax-01 minimax-01 1  2  128  best
hy_v3      hy_v3      2  2  128  best
chameleon  chameleon  2  2  64   best
eurobert   eurobert   2  2  64   best
modern-bert modern-bert 4 2  64   best
EOF

# Rows llama.cpp cannot capture yet: the row, what the converter (when it writes no file) or
# else the capture tool must say, and why. When one loads, the test fails and says to move it
# to the table above.
cat > cannot.txt << 'EOF'
baichuan RecursionError: maximum recursion depth exceeded|conversion/baichuan.py BaichuanModel.modify_tensors passes every tensor but W_pack to self.modify_tensors again with its mapped name, which recurses until Python stops it
mimo2 wrong array length; expected 2, got 5|conversion/mimo.py MimoV2Model.set_gguf_parameters writes attention.sliding_window_pattern for the layers and 3 MTP layers, src/models/mimo2.cpp load_arch_hparams wants one entry per layer without them
EOF

# Planted mistakes: name, row, the change (llama_tiny.py convert MISTAKE, or "positions+1" in the
# capture), and what the failing line must name; PASS: a change llama.cpp's graph ignores
# (Cohere 2's and EXAONE MoE's sliding layers take the global freq_base, src/models/cohere2.cpp
# and exaone-moe.cpp), which verify must pass. bamba_dims is Bamba-9B's own attn_rotary_emb
# (half of each head), which the converter writes as rope.dimension_count where transformers
# rotates the whole head (lib/model/families.def, bamba).
cat > mistakes.txt << 'EOF'
freq_base   llama  freq_base=10000                               llama.rope.freq_base expected 500000, found 10000
rope_freqs  llama  drop=rope_freqs.weight                        rope_freqs.weight    expected 32 F32 values
norm_neox   qwen2  arch=llama                                    general.architecture expected qwen2 (rope mode neox), found llama (rope mode norm)
scaling     qwen3  unset=rope.scaling.type                       qwen3.rope.scaling.type expected yarn (ext_factor 1), found absent
orig_ctx    phi3   setu=rope.scaling.original_context_length=131072  phi3.rope.scaling.original_context_length expected 4096, found 131072
swa_base    gemma3 set=rope.freq_base_swa=1000000                gemma3.rope.freq_base_swa expected 10000, found 1000000
positions   llama  positions+1                                   matches with positions shifted by -1
swa_base2   gemma2 set=rope.freq_base_swa=1000000                gemma2.rope.freq_base_swa expected 10000, found 1000000
sections    qwen2vl seta=rope.dimension_sections=16,24,16,8      qwen2vl.rope.dimension_sections expected [16, 24, 24, 0], found [16, 24, 16, 8]
isections   qwen3vl seta=rope.dimension_sections=24,20,16,4      qwen3vl.rope.dimension_sections expected [24, 20, 20, 0], found [24, 20, 16, 4]
rope_freqs4 llama4 drop=rope_freqs.weight                        rope_freqs.weight    expected 32 F32 values
mpositions  qwen2vl positions+1                                  matches with positions shifted by -1
swa_base3n  gemma3n set=rope.freq_base_swa=1000000               gemma3n.rope.freq_base_swa expected 10000, found 1000000
scaling3    olmo2  unset=rope.scaling.type                       olmo2.rope.scaling.type expected yarn (ext_factor 1), found absent
freq_base1  gemma  freq_base=1000000                             gemma.rope.freq_base expected 10000, found 1000000
swa_unused  cohere2 set=rope.freq_base_swa=10000                 PASS
hy_alpha    hunyuan-dense set=rope.scaling.alpha=1000           hunyuan-dense.rope.scaling.alpha expected 12496091, found
olmo_base   olmo   freq_base=500000                              olmo.rope.freq_base  expected 10000, found 500000
nemo_dims   nemotron setu=rope.dimension_count=64                nemotron.rope.dimension_count expected 32, found 64
glm_ratio   chatglm freq_base=10000                              chatglm.rope.freq_base expected 20000, found 10000
mel_base    mellum freq_base=10000                               mellum.rope.freq_base expected 500000, found 10000
fal_base    falcon freq_base=500000                              falcon.rope.freq_base expected 10000, found 500000
af_base     afmoe  freq_base=500000                              afmoe.rope.freq_base expected 10000, found 500000
gmoe_base   granitemoe freq_base=10000                           granitemoe.rope.freq_base expected 10000000, found 10000
hymoe_base  hunyuan-moe freq_base=10000                          hunyuan-moe.rope.freq_base expected 11158840, found 10000
dots_base   dots1  freq_base=10000                               dots1.rope.freq_base expected 10000000, found 10000
lfm_base    lfm2   freq_base=10000                               lfm2.rope.freq_base  expected 1000000, found 10000
dbrx_base   dbrx   freq_base=10000                               dbrx.rope.freq_base  expected 500000, found 10000
bit_scale   bitnet set=rope.scaling.factor=4                     bitnet.rope.scaling.factor expected factor 1 (freq_scale 1), found factor 4
ap_freqs    apertus drop=rope_freqs.weight                       rope_freqs.weight    expected 32 F32 values
exm_swa     exaone-moe set=rope.freq_base_swa=10000              PASS
c2m_swa     cohere2moe setu=attention.sliding_window_pattern=4   cohere2moe.attention.sliding_window_pattern expected full: 0, 3 (of 4 layers), found full: 0 (of 4 layers)
bamba_dims  granitehybrid setu=rope.dimension_count=32           granitehybrid.rope.dimension_count expected 64, found 32
fh1_base    falcon-h1 freq_base=10000                            falcon-h1.rope.freq_base expected 9.9999998e+10, found 10000
ds32_yarn   deepseek32 unset=rope.scaling.type                   deepseek32.rope.scaling.type expected yarn (ext_factor 1), found absent
mm1_dims    minimax-01 setu=rope.dimension_count=128             minimax-01.rope.dimension_count expected 64, found 128
hy3_base    hy_v3  freq_base=10000                               hy_v3.rope.freq_base expected 11158840, found 10000
eb_base     eurobert freq_base=10000                             eurobert.rope.freq_base expected 250000, found 10000
mb_swa      modern-bert set=rope.freq_base_swa=160000            modern-bert.rope.freq_base_swa expected 10000, found 160000
EOF

# every row llama_tiny.py can make is in the table, and only those
$PY "$tiny" "$src" rows | tr ' ' '\n' | sort > made.txt
awk '{print $1}' rows.txt cannot.txt | sort > table.txt
cmp -s made.txt table.txt || { echo "rows of llama_tiny.py and of this table differ:"; diff made.txt table.txt; exit 1; }

# make and convert everything in one Python process
: > batch.txt
while read -r row arch layers heads dims best; do
    echo "make $row m_$row" >> batch.txt
    echo "convert m_$row $row.gguf" >> batch.txt
done < rows.txt
while read -r name row change want; do
    case $change in positions+1) ;; *) echo "convert m_$row bad_$name.gguf $change" >> batch.txt ;; esac
done < mistakes.txt
while read -r row rest; do
    echo "make $row m_$row" >> batch.txt
    echo "try-convert m_$row $row.gguf" >> batch.txt
done < cannot.txt
echo "convert m_qwen3 f16.gguf outtype=f16" >> batch.txt
$PY "$tiny" "$src" batch batch.txt > convert.log 2>&1 || { tail -n 20 convert.log; exit 1; }

n_rows=0
while read -r row arch layers heads dims best; do
    capture "$row.gguf" "$row.safetensors" 2> cap_$row.txt || { cat cap_$row.txt; exit 1; }
    # the tool says what it took and the command that checks it
    grep -q "^$((2 * layers)) ROPE nodes of $arch, 16 tokens, n_ctx $NCTX: $row.safetensors\$" cap_$row.txt ||
        { echo "$row: capture said:"; cat cap_$row.txt; exit 1; }
    "$POSENC" ls "$row.safetensors" > ls_$row.txt
    grep -q "^pre.layers.[0-9]*.q  *f32  *(16, $heads, $dims) " ls_$row.txt || { cat ls_$row.txt; exit 1; }
    # one position per token, or M-RoPE's 4 rows (the graph's inp_pos: t, h, w and a row of 0)
    grep -Eq '^positions +i32 +\((16,|4, 16)\)' ls_$row.txt || { cat ls_$row.txt; exit 1; }

    # the verdict on llama.cpp's own dumps: PASS, every pair held to llama.cpp's profile
    set +e
    "$POSENC" verify --config "m_$row/config.json" --gguf "$row.gguf" --q "$row.safetensors" \
        --layout ggml --seq-len $NCTX > v_$row.txt 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 0 ] || { echo "$row: verify exit $rc"; grep -E 'FAIL|diagnosis|^posenc' v_$row.txt; exit 1; }
    n=$(grep -c '^ok    expect_[qk]@layers\.[0-9]*  .*matches the ggml profile (llama.cpp) element for element' v_$row.txt || true)
    [ "$n" -eq $((2 * layers)) ] || { echo "$row: $n of $((2 * layers)) checks name llama.cpp"; cat v_$row.txt; exit 1; }
    grep -q "^ok    general.architecture $arch " v_$row.txt || { cat v_$row.txt; exit 1; }
    [ "$(grep -c '^ok    pair layers\.' v_$row.txt)" -eq "$layers" ] || { cat v_$row.txt; exit 1; }

    # bit for bit: llama.cpp's numerics, 0 ulp
    set +e
    "$POSENC" verify --config "m_$row/config.json" --gguf "$row.gguf" --q "$row.safetensors" \
        --layout ggml --seq-len $NCTX --precision ggml --max-ulp 0 > u_$row.txt 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 0 ] || { echo "$row: --max-ulp 0 exit $rc"; grep -E 'FAIL|^posenc' u_$row.txt; exit 1; }
    n=$(grep -c '0 ulp at most from posenc.s ggml rotation, within --max-ulp 0' u_$row.txt || true)
    [ "$n" -eq $((2 * layers)) ] || { echo "$row: $n of $((2 * layers)) checks at 0 ulp"; cat u_$row.txt; exit 1; }
    # the backend llama.cpp picks for this machine (an FMA build on most): within the bound
    "$cap" -p 0:8,40000:8 "$row.gguf" best_$row.safetensors 2> /dev/null
    set +e
    "$POSENC" verify --config "m_$row/config.json" --gguf "$row.gguf" --q best_$row.safetensors \
        --layout ggml --seq-len $NCTX > b_$row.txt 2>&1
    rc=$?
    set -e
    if [ "$best" = best ] && [ "$rc" -ne 0 ]; then
        echo "$row: verify on the machine's best backend failed"; grep -E 'FAIL' b_$row.txt; exit 1
    fi
    echo "ok $row: $((2 * layers)) ROPE nodes at positions 0-7 and 40000-40007, named llama.cpp," \
        "0 ulp; the machine's best backend: $(tail -n 1 b_$row.txt)"
    n_rows=$((n_rows + 1))
done < rows.txt

while read -r name row change want; do
    case $change in
    positions+1)
        # the capture's positions one too high: the dumps no longer fit them (M-RoPE's t, h
        # and w rows; its 4th row stays 0, as llama.cpp holds text tokens)
        $PY - "$row.safetensors" bad_$name.safetensors << 'EOF'
import json, struct, sys
import numpy as np
b = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", b[:8])[0]
t = json.loads(b[8:8 + n])["positions"]
a, e = t["data_offsets"]
p = np.frombuffer(bytes(b[8 + n + a:8 + n + e]), "<i4").reshape(t["shape"]).copy()
if p.ndim == 2:
    p[:3] += 1
else:
    p += 1
b[8 + n + a:8 + n + e] = p.astype("<i4").tobytes()
open(sys.argv[2], "wb").write(b)
EOF
        gguf=$row.gguf
        ;;
    *)
        gguf=bad_$name.gguf
        capture "$gguf" bad_$name.safetensors 2> cap_bad_$name.txt || { cat cap_bad_$name.txt; exit 1; }
        ;;
    esac
    set +e
    "$POSENC" verify --config "m_$row/config.json" --gguf "$gguf" --q bad_$name.safetensors \
        --layout ggml --seq-len $NCTX > bad_$name.txt 2>&1
    rc=$?
    set -e
    if [ "$want" = PASS ]; then
        [ "$rc" -eq 0 ] || { echo "$name: verify exit $rc, expected 0"; cat bad_$name.txt; exit 1; }
        echo "ok planted $name ($change): PASS, llama.cpp's graph does not use it"
        continue
    fi
    [ "$rc" -eq 1 ] || { echo "$name: verify exit $rc, expected 1"; cat bad_$name.txt; exit 1; }
    grep -E '^FAIL|diagnosis:' bad_$name.txt | grep -qF -- "$want" ||
        { echo "$name: no failing line names '$want'"; grep -E 'FAIL|diagnosis' bad_$name.txt; exit 1; }
    echo "ok planted $name ($change): FAIL, $want"
done < mistakes.txt

# a model converted with --outtype f16: F16 weights, and the same verdicts. The portable CPU
# backend's q/k are F32 all the same (ggml_mul_mat writes F32), so the capture is F32 too.
capture f16.gguf f16.safetensors 2> cap_f16.txt || { cat cap_f16.txt; exit 1; }
"$POSENC" ls f16.gguf > ls_f16g.txt
grep -q '^blk.0.attn_q.weight  *f16 ' ls_f16g.txt || { echo "f16.gguf:"; cat ls_f16g.txt; exit 1; }
"$POSENC" ls f16.safetensors > ls_f16.txt
grep -q '^pre.layers.0.q  *f32  *(16, 2, 64) ' ls_f16.txt || { cat ls_f16.txt; exit 1; }
for how in "" "--precision ggml --max-ulp 0"; do
    set +e
    "$POSENC" verify --config m_qwen3/config.json --gguf f16.gguf --q f16.safetensors \
        --layout ggml --seq-len $NCTX $how > v_f16.txt 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 0 ] || { echo "f16 $how: verify exit $rc"; grep -E 'FAIL|^posenc' v_f16.txt; exit 1; }
done
grep -c '0 ulp at most from posenc.s ggml rotation, within --max-ulp 0' v_f16.txt | grep -qx 4 ||
    { cat v_f16.txt; exit 1; }
echo "ok qwen3 converted with --outtype f16: F16 weights, F32 q/k; verify passes, 0 ulp"

# the rows llama.cpp cannot capture: the capture fails, and says so as the table does
cannot=""
while read -r row rest; do
    said=${rest%%|*}
    why=${rest#*|}
    if [ -e "$row.gguf.err" ]; then
        grep -qF -- "$said" "$row.gguf.err" || { echo "$row: the converter said:"; cat "$row.gguf.err"; exit 1; }
        cannot="$cannot; $row: convert_hf_to_gguf.py says '$said' ($why)"
        continue
    fi
    if capture "$row.gguf" "$row.safetensors" 2> cap_$row.txt; then
        echo "$row: captured now: move it from cannot.txt to the rows"; exit 1
    fi
    grep -qF -- "$said" cap_$row.txt || { echo "$row: capture said:"; cat cap_$row.txt; exit 1; }
    cannot="$cannot; $row: llama.cpp says '$said' ($why)"
done < cannot.txt

# bad input: one line, exit 2 or 3
set +e
"$cap" m_llama/config.json out.safetensors > /dev/null 2> bad1.txt; rc1=$? # backend found beside libllama
"$cap" llama.gguf out.npz > /dev/null 2> bad2.txt; rc2=$?
"$cap" -p 5 llama.gguf out.safetensors > /dev/null 2> bad3.txt; rc3=$?
"$cap" --backend "$libs/libggml-cpu-x64.so" -c 4 llama.gguf out.safetensors > /dev/null 2> bad4.txt; rc4=$?
set -e
[ "$rc1" -eq 3 ] && [ "$(wc -l < bad1.txt)" -eq 1 ] &&
    grep -q "^capture-llama: 'm_llama/config.json': llama.cpp cannot load it" bad1.txt ||
    { echo "not a GGUF: exit $rc1"; cat bad1.txt; exit 1; }
[ "$rc2" -eq 2 ] && grep -q "must end in .safetensors" bad2.txt || { cat bad2.txt; exit 1; }
[ "$rc3" -eq 2 ] && grep -q "is not START:COUNT" bad3.txt || { cat bad3.txt; exit 1; }
[ "$rc4" -eq 2 ] && grep -q "smaller than a range of 8 tokens" bad4.txt || { cat bad4.txt; exit 1; }
[ ! -e out.safetensors ] && [ ! -e out.npz ] || { echo "an output was left"; exit 1; }

# coverage: the architectures posenc has llama.cpp rules for (lib/model/llama_arch.def rows with a
# .conv) that have no row here yet, said, not failed
awk '/^ARCH\(/ { n = $0; sub(/^ARCH\("/, "", n); sub(/".*/, "", n); cur = n }
     /\.conv *=/ { if (cur != "") { print cur; cur = "" } }' "$SRC/lib/model/llama_arch.def" | sort > rules.txt
{ awk '{print $2}' rows.txt; awk '{print $1}' cannot.txt; } | sort -u > covered.txt
missing=$(comm -23 rules.txt covered.txt | tr '\n' ' ')
echo "rows: $n_rows of $(wc -l < rules.txt) architectures with llama.cpp rules${missing:+; no row yet: ${missing% }}$cannot"
[ "$n_rows" -eq "$(wc -l < rows.txt)" ]
