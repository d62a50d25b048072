# The model-family registry from the command line: unknown model types are flagged or refused,
# --family chooses a row, info --models lists the rows, NoPE layers are named everywhere, relative
# schemes posenc does not generate are refused, learned tables start at the model's row offset,
# and no file outside the registry compares a model_type.
. "$SRC/tests/cli/lib.sh"
R="$DATA/configs/families"

json() {
    f=$1; shift
    "$PY" -c "
import json, sys
d = json.load(open('$f'))
$*
" || { echo "JSON check failed on $f:"; head -c 3000 "$f"; return 1; }
}

# ---- an unknown model_type with RoPE keys: generic rules, one warning line, family generic ----
cat > unk.json <<'J'
{"model_type": "phi4-siglip", "hidden_size": 2048, "num_attention_heads": 16, "rope_theta": 250000,
 "max_position_embeddings": 4096}
J
cp unk.json unk.orig
expect_ok "$POSENC" info --config unk.json --json
test "$(wc -l < out.stderr)" -eq 1
grep -qF "posenc info: 'unk.json': model_type 'phi4-siglip' is not known; resolved with the generic RoPE rules (neox, full rotary); pass --family NAME to choose" out.stderr
json out.stdout "assert d['family'] == 'generic' and d['model_type'] == 'phi4-siglip'; assert d['head_dim'] == 128 and d['theta'] == 250000; assert any('not known' in n for n in d['notes']); assert 'warning' in d"
cmp unk.json unk.orig
expect_ok "$POSENC" info --config unk.json
grep -q '^family  *generic (model_type not known: generic RoPE rules)$' out.stdout
# gen records it in the file's metadata, verify in its report
expect_ok "$POSENC" gen --config unk.json --seq-len 16 -o unk.npz
grep -q "is not known" out.stderr
"$PY" -c "
import zipfile, json
z = zipfile.ZipFile('unk.npz'); meta = json.loads(z.read('meta.json')) if 'meta.json' in z.namelist() else None
" 2>/dev/null || true
expect_ok "$POSENC" ls unk.npz
expect_ok "$POSENC" verify --config unk.json --report rep.json -q
json rep.json "assert d['config']['family'] == 'generic'; assert 'warning' in d['config']"
# an unknown MLA type says qk_rope_head_dim is set
cat > v4.json <<'J'
{"model_type": "deepseek_v9", "hidden_size": 4096, "num_attention_heads": 64, "qk_rope_head_dim": 64,
 "rope_theta": 10000}
J
expect_ok "$POSENC" info --config v4.json
grep -q "qk_rope_head_dim is set" out.stderr
# --family chooses a row: no warning, that row's rules
expect_ok "$POSENC" info --config v4.json --family deepseek_v3 --json
test ! -s out.stderr
json out.stdout "assert d['family'] == 'deepseek_v3' and d['head_dim'] == 64 and d['pairing'] == 'deinterleave'; assert any('--family' in n for n in d['notes'])"

# ---- no model_type, or an unknown one without any position key: exit 3, one line ----
echo '{"hidden_size": 768, "num_attention_heads": 12}' > bare.json
expect_fail 3 "'bare.json': no model_type and no RoPE keys" "$POSENC" info --config bare.json
test "$(wc -l < out.stderr)" -eq 1
echo '{"model_type": "not_a_model", "hidden_size": 768, "max_position_embeddings": 512}' > nokeys.json
expect_fail 3 "model_type 'not_a_model' is not known and the config has no RoPE keys" "$POSENC" gen --config nokeys.json -o x.npz
no_file x.npz
expect_fail 3 "is not known" "$POSENC" verify --config nokeys.json
# the missing-model_type case with RoPE keys resolves generically and says so
echo '{"hidden_size": 512, "num_attention_heads": 8, "rope_theta": 10000, "max_position_embeddings": 64}' > nomt.json
expect_ok "$POSENC" info --config nomt.json --json
grep -q "the config has no model_type; resolved with the generic RoPE rules" out.stderr
# an unknown --family is a usage error on every command
expect_fail 2 "--family: unknown family 'nope'" "$POSENC" info --config unk.json --family nope
expect_fail 2 "--family: unknown family 'nope'" "$POSENC" gen --config unk.json --family nope -o y.npz
expect_fail 2 "--family: unknown family 'nope'" "$POSENC" verify --config unk.json --family nope
no_file y.npz
"$PY" -c "import numpy as np; np.save('q.npy', np.ones((1, 2, 4, 128), np.float32))"
expect_fail 2 "--family: unknown family 'nope'" "$POSENC" apply q.npy --config unk.json --family nope -o qr.npy
no_file qr.npy

# ---- info --models ----
expect_ok "$POSENC" info --models
n=$(grep -c . out.stdout)
test "$n" -ge 151
grep -q '^bart  *learned  *-  *.*\[bart/modeling_bart.py\]$' out.stdout
grep -q '^deberta-v2  *relative ' out.stdout
grep -q '^llava  *text:llama ' out.stdout
grep -q '^qwen3_5_text  *rope  *half ' out.stdout
expect_ok "$POSENC" info --models --json
json out.stdout "
assert len(d) >= 150
rows = {r['model_type']: r for r in d}
for name in ['bart', 'mbart', 'marian', 'pegasus', 'm2m_100', 'nllb_moe', 'whisper', 'speech_to_text', 't5', 'mt5', 'umt5', 'longt5', 'bert', 'roberta', 'xlm-roberta', 'electra', 'albert', 'distilbert', 'deberta', 'deberta-v2', 'gpt2', 'gpt_neo', 'gpt_neox', 'gpt_neox_japanese', 'gptj', 'codegen', 'opt', 'bloom', 'falcon', 'falcon_h1', 'mpt', 'persimmon', 'stablelm', 'phi', 'phi3', 'phimoe', 'cohere', 'cohere2', 'glm', 'glm4', 'glm4_moe', 'chatglm', 'smollm3', 'hunyuan_v1_dense', 'hunyuan_v1_moe', 'internlm2', 'granite', 'granitemoe', 'olmo', 'olmo2', 'olmo3', 'olmoe', 'jamba', 'bamba', 'lfm2', 'ernie4_5', 'seed_oss', 'exaone4', 'deepseek_v2', 'deepseek_v3', 'deepseek_v32', 'kimi_linear', 'minimax', 'qwen2', 'qwen2_moe', 'qwen2_vl', 'qwen2_5_vl', 'qwen3', 'qwen3_moe', 'qwen3_next', 'qwen3_vl', 'qwen3_5', 'llama', 'llama4', 'mistral', 'ministral3', 'mixtral', 'gemma', 'gemma2', 'gemma3', 'gemma3n', 'gemma4', 'starcoder2', 'nemotron', 'gpt_oss', 'llava', 'llava_next', 'mllama', 'idefics3', 'smolvlm']:
    assert name in rows, name
    assert rows[name]['source'], name
assert rows['whisper']['encoding'] == 'learned' and rows['deberta-v2']['encoding'] == 'relative'
assert rows['gptj']['pairing'] == 'pairs' and rows['cohere']['pairing'] == 'repeat_interleave'
assert rows['llava']['encoding'] == 'text' and rows['llava']['text_model_type'] == 'llama'
"
expect_fail 2 "--models lists the registry" "$POSENC" info --models --config unk.json

# ---- encodings that are not RoPE, from real configs ----
expect_ok "$POSENC" info --config "$R/bart-large-cnn.json" --json
json out.stdout "assert d['encoding'] == 'learned' and d['family'] == 'bart'; assert any('p + 2' in n for n in d['notes'])"
expect_fail 3 "uses deberta_v2_log_buckets, a relative position scheme posenc does not generate" "$POSENC" info --config "$DATA/configs/refused/deberta-v3-base.json"
test "$(wc -l < out.stderr)" -eq 1
expect_fail 3 "relative position scheme" "$POSENC" gen --config "$DATA/configs/refused/deberta-v3-base.json" -o d.npz
no_file d.npz
expect_ok "$POSENC" info --config "$R/esm2-t6-8m.json" --json
json out.stdout "assert d['encoding'] == 'rope' and d['head_dim'] == 16 and d['rotary_dim'] == 16"
expect_fail 3 "2-D RoPE" "$POSENC" info --config "$DATA/configs/refused/chatglm-6b-2d.json"
expect_ok "$POSENC" info --config "$R/chatglm3-6b.json" --json
json out.stdout "assert d['head_dim'] == 128 and d['rotary_dim'] == 64 and d['style'] == 'gptj' and d['max_position_embeddings'] == 8192"
expect_ok "$POSENC" info --config "$R/paligemma-3b-pt-224.json" --json
json out.stdout "assert d['model_type'] == 'gemma' and d['head_dim'] == 256 and d['theta'] == 10000 and d['max_position_embeddings'] == 8192"

# ---- NoPE layers: SmolLM3's no_rope_layers, in info, gen's metadata and verify's report ----
expect_ok "$POSENC" info --config "$R/smollm3-3b.json" --json
json out.stdout "assert d['nope_layers'] == list(range(3, 36, 4)), d['nope_layers']; assert d['num_layers'] == 36"
expect_ok "$POSENC" info --config "$R/smollm3-3b.json"
grep -q '^nope_layers  *3,7,11,15,19,23,27,31,35 (9 of 36 layers carry no RoPE)$' out.stdout
expect_ok "$POSENC" gen --config "$R/smollm3-3b.json" --seq-len 8 -o s.safetensors
"$PY" -c "
import json, struct
b = open('s.safetensors', 'rb').read(); n = struct.unpack('<Q', b[:8])[0]
meta = json.loads(b[8:8 + n])['__metadata__']
assert json.loads(meta['nope_layers']) == list(range(3, 36, 4)), meta['nope_layers']
assert meta['family'] in ('smollm3', '\"smollm3\"'), meta['family']
"
expect_ok "$POSENC" verify --config "$R/smollm3-3b.json" --report v.json -q
json v.json "assert d['config']['nope_layers'] == list(range(3, 36, 4)); assert any('carry no RoPE' in n for n in d['notes'])"
# Qwen3.5: linear_attention layers are NoPE, and that layer type carries no RoPE
expect_ok "$POSENC" info --config "$DATA/configs/qwen3.5-27b.json" --json
json out.stdout "assert d['layers']['linear_attention']['encoding'] == 'none' and d['layers']['full_attention']['encoding'] == 'rope'; assert d['nope_layers'][:3] == [0, 1, 2] and 3 not in d['nope_layers']"
expect_fail 2 "layer type 'linear_attention' carries no RoPE" "$POSENC" gen --config "$DATA/configs/qwen3.5-27b.json" --layer-type linear_attention -o l.npz
no_file l.npz

# ---- gen of a learned table starts at the model's row offset (BART/OPT: 2) ----
"$PY" -c "
import numpy as np
w = np.arange(12 * 4, dtype=np.float32).reshape(12, 4)
np.save('wpe.npy', w)
"
cat > opt.json <<'J'
{"model_type": "opt", "hidden_size": 4, "num_attention_heads": 1, "max_position_embeddings": 10}
J
expect_ok "$POSENC" gen --config opt.json --weights wpe.npy --tensor wpe -o pe.npy
"$PY" -c "
import numpy as np
pe = np.load('pe.npy'); w = np.arange(48, dtype=np.float32).reshape(12, 4)
assert pe.shape == (10, 4), pe.shape
assert (pe == w[2:]).all()
"
expect_ok "$POSENC" gen --config opt.json --weights wpe.npy --tensor wpe --positions 0,9 -o pe2.npy
"$PY" -c "
import numpy as np
pe = np.load('pe2.npy'); w = np.arange(48, dtype=np.float32).reshape(12, 4)
assert (pe == w[[2, 11]]).all()
"
expect_fail 3 "past the 10 positions" "$POSENC" gen --config opt.json --weights wpe.npy --tensor wpe --positions 10 -o pe3.npy
no_file pe3.npy

# ---- knowledge lives in the registry: nothing else compares a model_type ----
cd "$SRC"
hits=$(grep -nE '(strn?cmp|strstr|strncasecmp|strcasecmp) *\([^;]*(model_type|posenc_model_type|->cls\b|c->cls\b)' cmd/*.c formats/*/*.c lib/*/*.c include/posenc/*.h || true)
if [ -n "$hits" ]; then echo "model_type compared outside the registry:"; echo "$hits"; exit 1; fi
if grep -nE '\b(is_cls|in_list)\b' lib/*/*.c cmd/*.c formats/*/*.c; then echo "a name-list helper is back"; exit 1; fi
# every registry name written as a C string outside the registry is an option value or a name
# the code prints, never a comparison: the only files that may spell rows are these
rows='"(llama|mistral|qwen[0-9_a-z]*|gemma[0-9_a-z]*|deepseek_v[0-9]+|gpt_neox|gptj|codegen|roberta|distilbert|marian|pegasus|fsmt|m2m_100|xglm|roformer|electra|ernie|data2vec|nemotron_h|phi3|baichuan|chatglm)"'
for f in cmd/*.c formats/*/*.c; do
    if grep -qE "$rows" "$f"; then
        echo "$f spells a model_type: move the knowledge into lib/model/families.def"; exit 1
    fi
done
# lib/ outside the registry (lib/model/) likewise; the only such strings there are names of
# other things that a model_type shares: an --alibi value ("baichuan", ALiBi's reference slopes),
# a sinusoidal variant ("marian") and the pairing style ("gptj")
for f in $(ls lib/*/*.c lib/*/*.h | grep -v '^lib/model/'); do
    grep -noE "$rows" "$f" | sed "s|^|$f:|" | while IFS=: read -r file line name; do
        case $file:$name in
        lib/encodings/bias.c:'"baichuan"' | lib/encodings/bias.c:'"marian"' | lib/verify/verify_diagnose.c:'"gptj"') ;;
        *) echo "$file:$line spells the model_type $name: move the knowledge into lib/model/families.def" ;;
        esac
    done
done > "$OLDPWD/lib_rows.txt" # OLDPWD: the test's directory, left for $SRC above
if [ -s "$OLDPWD/lib_rows.txt" ]; then cat "$OLDPWD/lib_rows.txt"; exit 1; fi

# ---- BERT-style ALiBi (jina-bert, MosaicBERT): symmetric -m|i-j| over a bidirectional encoder ----
cd "$OLDPWD"
cat > jina.json <<'J'
{"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12, "position_embedding_type": "alibi",
 "max_position_embeddings": 8192}
J
expect_ok "$POSENC" gen --config jina.json --seq-len 6 -o jina.npz
"$PY" -c "
import numpy as np, zipfile, json
z = np.load('jina.npz'); s, b = z['slopes'], z['bias']
i, j = np.arange(6)[:, None], np.arange(6)[None, :]
want = -s[:, None, None] * np.abs(i - j)[None]
assert np.allclose(b, want, rtol=3e-7, atol=0), abs(b - want).max()
"
