# posenc info: text and JSON reports on real configs, values against closed forms computed here
# with numpy, and every error path (exit code + the one stderr line).
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
X="$DATA/configs/extra"

# json FILE PYTHON-ASSERTIONS: run assertions with d = the parsed JSON, np = numpy
json() {
    f=$1; shift
    "$PY" -c "
import json, math, sys
import numpy as np
d = json.load(open('$f'))
$*
" || { echo "JSON check failed on $f:"; head -c 3000 "$f"; return 1; }
}

# ---- text output ----
expect_ok "$POSENC" info --config "$C/llama-3.1-8b.json"
grep -q '^encoding  *rope$' out.stdout
grep -q '^rope_type  *llama3$' out.stdout
grep -q '^theta  *500000 (rope_theta)$' out.stdout
grep -q '^head_dim  *128$' out.stdout
grep -q '^original_max_pos  *8192$' out.stdout
grep -q '^inv_freq  *(64, hf) 1 ' out.stdout
test ! -s out.stderr

expect_ok "$POSENC" info -c "$C/gemma-3-27b-it.json"
grep -q '^layer_type full_attention:$' out.stdout
grep -q '^layer_type sliding_attention:$' out.stdout
grep -q '^  theta  *10000 (text_config.rope_local_base_freq)$' out.stdout

expect_ok "$POSENC" info --config "$C/qwen3.5-27b.json"
grep -q '^mrope_section  *\[11, 11, 10\] interleaved$' out.stdout
grep -q '^notes:$' out.stdout

expect_ok "$POSENC" info --config "$X/t5-small.json"
grep -q '^encoding  *t5$' out.stdout
grep -q '^num_buckets  *32$' out.stdout

# ---- JSON: default RoPE, inv_freq against the closed form 1/theta^(2i/d) in float32 ----
"$POSENC" info --config "$C/qwen3-8b.json" --json > q.json
json q.json "
assert d['encoding'] == 'rope' and d['model_type'] == 'qwen3', d
assert d['rope_type'] == 'default' and d['theta'] == 1e6 and d['theta_source'] == 'rope_theta'
assert d['head_dim'] == 128 and d['rotary_dim'] == 128 and d['style'] == 'neox'
assert d['partial_rotary_factor'] == 1 and d['seq_len'] == 0 and d['precision'] == 'hf'
assert d['max_position_embeddings'] == 40960 and d['attention_scaling'] == 1
# 9 significant digits identify a float32: read them back as float32
inv = np.array(d['inv_freq'], dtype=np.float64).astype(np.float32).astype(np.float64)
assert len(inv) == 64
ref = 1.0 / np.power(1e6, np.arange(0, 128, 2) / 128.0)   # exact closed form, float64
# each value is within 2 float32 ulp of the exact value
assert np.all(np.abs(inv - ref) <= 2 * np.spacing(ref.astype(np.float32)).astype(np.float64)), np.max(np.abs(inv-ref)/ref)
assert isinstance(d['notes'], list)
"
# exact precision: double values, 1e-15 relative to the closed form (long double via numpy)
"$POSENC" info --config "$C/qwen3-8b.json" --json --precision exact > qe.json
json qe.json "
inv = np.array(d['inv_freq'], dtype=np.float64)
ref = 1.0 / np.power(np.longdouble(1e6), np.arange(0, 128, 2, dtype=np.longdouble) / np.longdouble(128))
assert d['precision'] == 'exact'
assert np.all(np.abs(inv - ref.astype(np.float64)) <= 4e-16 * ref.astype(np.float64)), np.max(np.abs(inv-ref)/ref)
"

# ---- llama3: transformers' _compute_llama3_parameters recomputed in float64 ----
"$POSENC" info --config "$C/llama-3.1-8b.json" --json > l.json
json l.json "
assert d['rope_type'] == 'llama3' and d['factor'] == 8 and d['low_freq_factor'] == 1
assert d['high_freq_factor'] == 4 and d['original_max_position_embeddings'] == 8192
inv = 1.0 / 500000.0 ** (np.arange(0, 128, 2) / 128.0)
wl = 2 * math.pi / inv
lo, hi = 8192 / 1.0, 8192 / 4.0
s = (8192 / wl - 1.0) / (4.0 - 1.0)
ref = np.where(wl > lo, inv / 8, np.where(wl < hi, inv, (1 - s) * inv / 8 + s * inv))
got = np.array(d['inv_freq'])
assert len(got) == 64 and np.allclose(got, ref, rtol=2e-6, atol=0), np.max(np.abs(got-ref)/ref)
"

# ---- yarn: GPT-OSS attention scaling 0.1 ln 32 + 1; DeepSeek-V3 softmax scale ----
"$POSENC" info --config "$C/gpt-oss-20b.json" --json > g.json
json g.json "
assert d['rope_type'] == 'yarn' and d['truncate'] is False and d['beta_fast'] == 32
assert abs(d['attention_scaling'] - (0.1 * math.log(32) + 1)) < 1e-6
assert d['softmax_scale'] == 1 and d['original_max_position_embeddings'] == 4096
"
"$POSENC" info --config "$C/deepseek-v3.json" --json > ds.json
json ds.json "
assert d['head_dim'] == 64 and d['style'] == 'gptj' and d['mscale_all_dim'] == 1
assert abs(d['softmax_scale'] - (0.1 * math.log(40) + 1) ** 2) < 1e-12
assert d['attention_scaling'] == 1            # mscale == mscale_all_dim
assert any('permuted' in n for n in d['notes'])
"

# ---- several layer types: a layers object; --layer-type picks one ----
"$POSENC" info --config "$C/gemma-3-27b-it.json" --json > g3.json
json g3.json "
assert d['layer_types'] == ['full_attention', 'sliding_attention']
f, s = d['layers']['full_attention'], d['layers']['sliding_attention']
assert f['rope_type'] == 'linear' and f['factor'] == 8 and f['theta'] == 1e6
assert s['rope_type'] == 'default' and s['theta'] == 1e4
assert len(f['inv_freq']) == 64 and 'rope_type' not in d
# linear: inv / factor, float32 within 2 ulp
ref = 1.0 / np.power(1e6, np.arange(0, 128, 2) / 128.0) / 8
got = np.array(f['inv_freq'])
assert np.all(np.abs(got - ref) <= 2 * np.spacing(ref.astype(np.float32)).astype(np.float64))
"
"$POSENC" info --config "$C/gemma-3-27b-it.json" --layer-type sliding_attention --json > g3s.json
json g3s.json "
assert d['layer_type'] == 'sliding_attention' and d['theta'] == 1e4 and 'layers' not in d
"
"$POSENC" info --config "$C/gemma-4-26b-a4b.json" --json -l full_attention > g4.json
json g4.json "
assert d['rope_type'] == 'proportional' and d['head_dim'] == 512 and d['rotary_dim'] == 512
inv = np.array(d['inv_freq'])
assert len(inv) == 256 and np.all(inv[64:] == 0) and np.all(inv[:64] > 0)
ref = 1.0 / np.power(1e6, np.arange(0, 128, 2) / 512.0)   # exponent over head_dim 512
assert np.allclose(inv[:64], ref, rtol=3e-7, atol=0)
"

# ---- sequence-length dependent types ----
"$POSENC" info --config "$X/llama-dynamic.json" --json --seq-len 8192 > dy.json
json dy.json "
# theta' = theta * (factor * L / M - (factor - 1)) ** (d / (d - 2)), L = 8192, M = 4096
ref = 1e4 * (2.0 * 8192 / 4096 - 1.0) ** (128 / 126)
assert d['seq_len'] == 8192 and abs(d['theta_used'] - ref) <= 1e-6 * ref, (d.get('theta_used'), ref)
"
"$POSENC" info --config "$X/phi-3-mini-128k.json" --json > p0.json
"$POSENC" info --config "$X/phi-3-mini-128k.json" --json --seq-len 4097 > p1.json
json p0.json "
assert d['rope_type'] == 'longrope' and d['long_factor_used'] is False
assert len(d['short_factor']) == 48 and len(d['long_factor']) == 48
assert abs(d['attention_scaling'] - math.sqrt(1 + math.log(32) / math.log(4096))) < 1e-6
ref = 1.0 / (np.array(d['short_factor']) * np.power(1e4, np.arange(0, 96, 2) / 96.0))
assert np.allclose(d['inv_freq'], ref, rtol=6e-7, atol=0)  # f32 factor, powf, product, reciprocal: ~4 ulp
"
json p1.json "
assert d['long_factor_used'] is True
ref = 1.0 / (np.array(d['long_factor']) * np.power(1e4, np.arange(0, 96, 2) / 96.0))
assert np.allclose(d['inv_freq'], ref, rtol=6e-7, atol=0)  # f32 factor, powf, product, reciprocal: ~4 ulp
"

# ---- non-RoPE encodings ----
"$POSENC" info --config "$X/bloom-560m.json" --json > b.json
json b.json "
assert d['encoding'] == 'alibi' and d['alibi_kind'] == 'reference' and d['heads'] == 16
ref = [2.0 ** (-8.0 * k / 16) for k in range(1, 17)]
assert np.allclose(d['slopes'], ref, rtol=1e-15, atol=0)
assert 'inv_freq' not in d
"
"$POSENC" info --config "$X/mpt-7b.json" --json > mpt.json
json mpt.json "
assert d['alibi_kind'] == 'mpt' and d['alibi_bias_max'] == 8 and d['max_positions'] == 2048
"
"$POSENC" info --config "$X/t5-small.json" --json > t5.json
json t5.json "
assert d['encoding'] == 't5' and d['num_buckets'] == 32 and d['max_distance'] == 128
assert d['heads'] == 8 and d['is_decoder'] is False
"
"$POSENC" info --config "$X/gpt2.json" --json > gpt2.json
json gpt2.json "
assert d['encoding'] == 'learned' and d['tensor'] == 'wpe.weight'
assert d['max_positions'] == 1024 and d['d_model'] == 768
"
"$POSENC" info --config "$C/nemotron-h-56b-base-8k.json" --json > nh.json
json nh.json "
assert d['encoding'] == 'none' and any('NoPE' in n for n in d['notes'])
"
expect_fail 3 "posenc info: '$X/bloom-560m.json': model_type 'bloom' uses alibi: --layer-type does not apply" \
    "$POSENC" info --config "$X/bloom-560m.json" --layer-type full_attention

# ---- errors: exit code, one stderr line, nothing on stdout ----
expect_fail 3 "posenc info: cannot open 'nope.json': No such file or directory" "$POSENC" info --config nope.json
test ! -s out.stdout
printf '{\n  "model_type": "llama",\n  "rope_theta": 1e4,,\n}\n' > bad.json
expect_fail 3 "posenc info: 'bad.json': invalid JSON near line 3" "$POSENC" info --config bad.json
printf '[1, 2]\n' > arr.json
expect_fail 3 "'arr.json': top level is not a JSON object" "$POSENC" info --config arr.json
printf '{"model_type":"llama","hidden_size":256,"num_attention_heads":4,"rope_scaling":{"rope_type":"foo"}}' > foo.json
expect_fail 3 "posenc info: 'foo.json': unknown rope_type 'foo' (known: default, linear, dynamic, yarn, longrope, llama3, proportional)" \
    "$POSENC" info --config foo.json
test ! -s out.stdout
printf '{"model_type":"llama","hidden_size":256,"num_attention_heads":4,"rope_scaling":{"type":"linear","factor":0}}' > f0.json
expect_fail 3 "posenc info: 'f0.json': rope_scaling.factor must be > 0" "$POSENC" info --config f0.json --json
test ! -s out.stdout
test "$(wc -l < out.stderr)" -eq 1
printf '{"model_type":"llama","hidden_size":256,"num_attention_heads":4,"max_position_embeddings":-1}' > neg.json
expect_fail 3 "'neg.json': max_position_embeddings must be" "$POSENC" info --config neg.json
expect_fail 2 "unknown layer type 'global' (layer types: full_attention, sliding_attention)" \
    "$POSENC" info --config "$C/gemma-3-27b-it.json" --layer-type global
test ! -s out.stdout
expect_fail 2 "unknown layer type 'x' (layer types: sliding_attention, full_attention)" \
    "$POSENC" info --config "$C/gpt-oss-20b.json" --layer-type x

# usage errors
expect_fail 2 "posenc info: --config FILE is required" "$POSENC" info
expect_fail 2 "posenc info: --seq-len: 'abc' is not an integer" "$POSENC" info --config "$C/qwen3-8b.json" --seq-len abc
expect_fail 2 "posenc info: --seq-len: '0' is not an integer" "$POSENC" info --config "$C/qwen3-8b.json" --seq-len 0
expect_fail 2 "posenc info: --precision:" "$POSENC" info --config "$C/qwen3-8b.json" --precision fp8
expect_fail 2 "posenc info: unknown option '--frobnicate'" "$POSENC" info --frobnicate
expect_fail 2 "posenc info: option '--config' needs a value" "$POSENC" info --config
expect_fail 2 "posenc info: unexpected argument 'extra'" "$POSENC" info --config "$C/qwen3-8b.json" extra

# help
expect_ok "$POSENC" info --help
grep -q '^usage: posenc info --config FILE' out.stdout
test ! -s out.stderr
