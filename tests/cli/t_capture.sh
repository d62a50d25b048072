# The capture recipes of examples/ end to end on stand-in torch modules with transformers' and
# vLLM's call signatures (tests/cli/capture_standin.py): the files they write verify with the
# commands the README and posenc-verify(1) show, and a planted mistake in the module fails.
. "$SRC/tests/cli/lib.sh"
SI="$SRC/tests/cli/capture_standin.py"
cat > config.json <<'JSON'
{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
 "head_dim": 16, "num_hidden_layers": 3, "max_position_embeddings": 4096, "rope_theta": 10000.0}
JSON
expect_check_fail() {
    set +e
    "$@" > out.stdout 2> out.stderr
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || { echo "expected exit 1, got $rc: $*"; cat out.stderr; return 1; }
}

# ---- transformers: apply_rotary_pos_emb wrapped, bhsd, position_ids in the file
$PY "$SI" hf qk.safetensors > /dev/null
"$POSENC" ls qk.safetensors | grep -q '^layers.2.k .*(1, 2, 11, 16)'
expect_ok "$POSENC" verify --config config.json --q qk.safetensors --expect-q qk.rope.safetensors \
    --positions qk.safetensors:position_ids
grep -q '^result: PASS' out.stdout
grep -q 'pair layers.2' out.stdout
$PY "$SI" hf bad.safetensors bad > /dev/null
expect_check_fail "$POSENC" verify --config config.json --q bad.safetensors \
    --expect-q bad.rope.safetensors --positions bad.safetensors:position_ids
grep -q 'positions shifted by' out.stdout

# ---- vLLM: RotaryEmbedding.forward_native wrapped, flat [num_tokens, heads * head_size]
$PY "$SI" vllm v.safetensors > /dev/null
"$POSENC" ls v.safetensors | grep -q '^layers.0.q .*(11, 64)'
expect_ok "$POSENC" verify --config config.json --q v.safetensors --expect-q v.rope.safetensors \
    --layout sf --positions v.safetensors:positions --precision vllm
grep -q '^result: PASS' out.stdout
$PY "$SI" vllm vbad.safetensors bad > /dev/null
expect_check_fail "$POSENC" verify --config config.json --q vbad.safetensors \
    --expect-q vbad.rope.safetensors --layout sf --positions vbad.safetensors:positions
