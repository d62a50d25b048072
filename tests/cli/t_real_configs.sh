# Every published config in tests/data/configs/families resolves as its model's code says: the
# family row, encoding, head and rotary dims, theta, pairing, position limit and the number of
# NoPE layers, read off each file by hand (tests/data/configs/families/SOURCES.md says where each
# came from and what it exercises).
. "$SRC/tests/cli/lib.sh"
R="$DATA/configs/families"
# file family encoding head_dim rotary_dim theta pairing max_positions nope_count
cat > expect.txt <<'T'
bart-large-cnn.json bart learned 64 - - - 1024 0
chatglm3-6b.json chatglm rope 128 64 10000 pairs 8192 0
deepseek-v2-lite.json deepseek_v2 rope 64 64 10000 pairs 163840 0
distilbert-base-uncased.json distilbert learned 64 - - - 512 0
distilroberta-base.json roberta learned 64 - - - 514 0
electra-small-discriminator.json electra learned 64 - - - 512 0
esm2-t6-8m.json esm rope 16 16 10000 half 1026 0
exaone-4.0-1.2b-w4-derivative.json exaone4 rope 64 64 1000000 half 65536 0
exaone4-1.2b-w4a16.json exaone4 rope 64 64 1000000 half 65536 0
florence-2-base-ft.json bart learned 64 - - - 1024 0
florence-2-large.json bart learned 64 - - - 4096 0
gemma-2-9b-it.json gemma2 rope 256 256 10000 half 8192 0
granite-3.3-8b-instruct.json granite rope 128 128 10000000 half 131072 0
granite-4-8b-dense-hybrid.json granitemoehybrid rope 128 128 10000000 half 131072 0
hunyuan-a13b.json hunyuan rope 128 128 11158839.925077 half 32768 0
internlm2-chat-7b.json internlm2 rope 128 128 1000000 half 32768 0
lfm2.5-embedding-350m.json lfm2 rope 64 64 1000000 half 128000 10
llama4-scout-17b-16e-instruct.json llama4_text rope 128 128 500000 pairs 10485760 12
llava-1.5-7b-hf.json llama rope 128 128 10000 half 4096 0
mbart-large-50-many-to-many-mmt.json mbart learned 64 - - - 1024 0
minimax-m1.json minimax_m1 rope 128 64 10000000 half 10240000 70
modernbert-base.json modernbert rope 64 64 160000 half - 0
multilingual-e5-large-xlmr.json xlm-roberta learned 64 - - - 514 0
nllb-200-distilled-600M.json m2m_100 sinusoidal 64 - - - 1024 0
paligemma-3b-pt-224.json gemma rope 256 256 10000 half 8192 0
qwen3-0.6b.json qwen3 rope 128 128 1000000 half 40960 0
qwen3-30b-a3b.json qwen3_moe rope 128 128 1000000 half 40960 0
qwen3-vl-235b-a22b-thinking.json qwen3_vl_moe_text rope 128 128 5000000 half 262144 0
roberta-large.json roberta learned 64 - - - 514 0
smollm3-3b.json smollm3 rope 128 128 5000000 half 65536 9
smolvlm-256m-instruct-idefics3.json llama rope 64 64 100000 half 8192 0
whisper-small.json whisper learned 64 - - - 448 0
whisper-tiny.json whisper learned 64 - - - 448 0
T
# every file has an expectation and every expectation a file
ls "$R" | grep '\.json$' | sort > have.txt
cut -d' ' -f1 expect.txt | sort > want.txt
diff have.txt want.txt
n=0
while read -r f fam enc hd rd th pair maxp nope; do
    "$POSENC" info --config "$R/$f" --json > o.json 2> o.err || { echo "$f: info failed"; cat o.err; exit 1; }
    test ! -s o.err || { echo "$f: unexpected stderr"; cat o.err; exit 1; }
    "$PY" - "$f" "$fam" "$enc" "$hd" "$rd" "$th" "$pair" "$maxp" "$nope" <<'PY'
import json, sys
f, fam, enc, hd, rd, th, pair, maxp, nope = sys.argv[1:]
d = json.load(open("o.json"))
got = d
if "head_dim" not in d and isinstance(d.get("layers"), dict) and d["layers"]:
    got = next(iter(d["layers"].values()))   # several layer types: the first one
def check(name, want, have):
    if want == "-":
        return
    if name == "theta":
        ok = abs(float(have) - float(want)) <= 1e-9 * float(want)
    else:
        ok = str(have) == want
    assert ok, f"{f}: {name} {have!r}, want {want}"
check("family", fam, d["family"])
check("encoding", enc, d["encoding"])
check("head_dim", hd, got.get("head_dim", d.get("head_dim")))
check("rotary_dim", rd, got.get("rotary_dim"))
check("theta", th, got.get("theta"))
check("pairing", pair, got.get("pairing"))
check("max_positions", maxp, d.get("max_position_embeddings", d.get("max_positions")))
check("nope", nope, len(d.get("nope_layers") or []))
PY
    n=$((n + 1))
done < expect.txt
echo "$n published configs"
[ "$n" -ge 30 ]
