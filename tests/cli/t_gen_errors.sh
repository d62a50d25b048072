# posenc gen: every usage error (exit 2) and input error (exit 3) prints one 'posenc gen:' line
# and leaves no output or temporary file; an existing output survives a failed run.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
cat > tiny.json <<'EOF'
{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
 "max_position_embeddings": 64, "rope_theta": 10000.0}
EOF
cp tiny.json tiny.orig

# ---- usage errors: exit 2 ----
expect_fail 2 "missing -o" "$POSENC" gen --config tiny.json
expect_fail 2 "missing --config" "$POSENC" gen -o out.npz
expect_fail 2 "unknown option '--no-such'" "$POSENC" gen --config tiny.json -o out.npz --no-such
expect_fail 2 "unexpected argument 'extra'" "$POSENC" gen --config tiny.json -o out.npz extra
expect_fail 2 "'--seq-len' needs a value" "$POSENC" gen --config tiny.json -o out.npz --seq-len
for bad in abc 0 -5 1.5 99999999999999999999; do
    expect_fail 2 "--seq-len: '$bad'" "$POSENC" gen --config tiny.json -o out.npz --seq-len "$bad"
done
expect_fail 2 "--seq-len and --positions conflict" \
    "$POSENC" gen --config tiny.json -o out.npz --seq-len 4 --positions 1,2
expect_fail 2 "--positions: '1,,x'" "$POSENC" gen --config tiny.json -o out.npz --positions 1,,x
expect_fail 2 "--positions: '5-2'" "$POSENC" gen --config tiny.json -o out.npz --positions 5-2
expect_fail 2 "--dtype" "$POSENC" gen --config tiny.json -o out.npz --dtype float7
expect_fail 2 "--dtype: tables are floating point" "$POSENC" gen --config tiny.json -o out.npz --dtype i32
expect_fail 2 "--table-layout" "$POSENC" gen --config tiny.json -o out.npz --table-layout diagonal
expect_fail 2 "--precision" "$POSENC" gen --config tiny.json -o out.npz --precision fast
expect_fail 2 "--format" "$POSENC" gen --config tiny.json -o out.npz --format zip
expect_fail 2 "--encoding" "$POSENC" gen --config tiny.json -o out.npz --encoding xpos
expect_fail 2 "cannot tell the output format" "$POSENC" gen --config tiny.json -o out.weird
expect_fail 2 "-o - writes NPY only" "$POSENC" gen --config tiny.json -o - --format npz --array cos
# --array: a bad name, and NPY output without one
expect_fail 2 "--array: 'tan'" "$POSENC" gen --config tiny.json -o out.npz --array tan
expect_fail 2 "--array" "$POSENC" gen --config tiny.json -o out.npy
expect_fail 2 "--array" "$POSENC" gen --config tiny.json -o -
test ! -s out.stdout
# options of other encodings
expect_fail 2 "--heads does not apply to RoPE tables" "$POSENC" gen --config tiny.json -o out.npz --heads 8
expect_fail 2 "--num-buckets does not apply to RoPE tables" \
    "$POSENC" gen --config tiny.json -o out.npz --num-buckets 32
expect_fail 2 "--table-layout applies only to RoPE tables" \
    "$POSENC" gen --config "$C/baichuan-13b.json" -o out.npz --table-layout half
expect_fail 2 "--precision applies only to RoPE tables" \
    "$POSENC" gen --encoding sinusoidal --d-model 8 --seq-len 4 -o out.npz --precision hf
expect_fail 2 "--heads" "$POSENC" gen --config tiny.json -o out.npz --encoding alibi --heads 0
no_file out.npz out.npy out.weird

# ---- input errors: exit 3 ----
expect_fail 3 "'missing.json'" "$POSENC" gen --config missing.json -o out.npz
printf '{"model_type": "llama", "hidden_size": ' > broken.json
expect_fail 3 "'broken.json'" "$POSENC" gen --config broken.json -o out.npz
# NoPE: nothing to generate
expect_fail 3 "no position encoding" "$POSENC" gen --config "$C/nemotron-h-56b-base-8k.json" -o out.npz
# --encoding rope for a model without RoPE
expect_fail 3 "uses alibi, not RoPE" "$POSENC" gen --config "$C/baichuan-13b.json" --encoding rope --seq-len 4 -o out.npz
# several layer types: the message lists them; an unknown one is named
expect_fail 2 "full_attention, sliding_attention" \
    "$POSENC" gen --config "$C/gemma-3-27b-it.json" -o out.npz --seq-len 4
grep -q -- "--layer-type" out.stderr
expect_fail 2 "unknown layer type 'global'" \
    "$POSENC" gen --config "$C/gemma-3-27b-it.json" -o out.npz --seq-len 4 --layer-type global
# the size limit: Llama 4 Scout's 10485760 positions x 128 x 2 arrays in f32 = 10 GiB
expect_fail 3 "the output would be 10.0 GiB (10485760 x 128 x 2 arrays, f32), over the 4 GiB limit; pass --force" \
    "$POSENC" gen --config "$C/llama-4-scout-17b-16e-instruct.json" -o out.npz
expect_fail 3 "the output would be 5.0 GiB (10485760 x 128 x 1 array, f32)" \
    "$POSENC" gen --config "$C/llama-4-scout-17b-16e-instruct.json" -o out.npy --array cos
expect_fail 3 "the output would be 20.0 GiB (10485760 x 128 x 2 arrays, f64)" \
    "$POSENC" gen --config "$C/llama-4-scout-17b-16e-instruct.json" -o out.npz --dtype f64
# positions files: negative, non-integer, absent member
"$PY" -c "import numpy as np; np.save('neg.npy', np.array([0, 3, -1])); np.save('flt.npy', np.array([0.5, 1.0])); np.savez('p.npz', p=np.arange(4))"
expect_fail 3 "'neg.npy': position -1 at index 2 is outside [0, 2^48)" \
    "$POSENC" gen --config tiny.json -o out.npz --positions neg.npy
expect_fail 3 "'flt.npy'" "$POSENC" gen --config tiny.json -o out.npz --positions flt.npy
expect_fail 3 "p.npz" "$POSENC" gen --config tiny.json -o out.npz --positions p.npz:q
# mrope positions [3, S] (t, h, w) and a [batch, seq] array are refused, never flattened
"$PY" -c "import numpy as np; np.save('pos3.npy', np.arange(24).reshape(3, 8)); np.save('pos22.npy', np.arange(4).reshape(2, 2)); np.save('pos1s.npy', np.arange(8)[None])"
expect_fail 3 "posenc gen: 'pos3.npy': positions of shape (3, 8) are multimodal (t, h, w) positions; a table has one row per position: pass one axis [S] (apply and verify take [3, S])" \
    "$POSENC" gen --config "$C/qwen3.5-27b.json" -o out.npz --positions pos3.npy
expect_fail 3 "'pos22.npy': positions of shape (2, 2); a table has one row per position: pass a file of shape [S] or [1, S]" \
    "$POSENC" gen --config tiny.json -o out.npz --positions pos22.npy
no_file out.npz
# a transformers position_ids [1, S] is one row per position
expect_ok "$POSENC" gen --config tiny.json -o p1s.npz --positions pos1s.npy
"$POSENC" ls p1s.npz | grep -q '^cos .*(8, '
# a list value past the range is a bad option value (exit 2), as --seq-len's is
expect_fail 2 "--positions: '0,281474976710656': position 281474976710656 is outside [0, 2^48)" \
    "$POSENC" gen --config tiny.json -o out.npz --positions 0,281474976710656
# no max_position_embeddings to default to (LlamaConfig's 2048 fills it for llama; a model_type
# the registry does not know has no class default)
cat > nomax.json <<'EOF'
{"model_type": "not_a_model", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 10000.0}
EOF
if "$POSENC" gen --config nomax.json -o out.npz 2> out.stderr; then
    echo "gen without max_position_embeddings should fail"; exit 1
fi
head -n 1 out.stderr | grep -q '^posenc gen: '
no_file out.npz out.npy

# ---- write errors ----
expect_fail 3 "nodir" "$POSENC" gen --config tiny.json -o nodir/out.npz
test ! -e nodir
# a full disk on stdout is an error, not silence
if [ -w /dev/full ]; then
    set +e
    "$POSENC" gen --config tiny.json --array cos -o - --seq-len 20000 > /dev/full 2> full.err
    rc=$?
    set -e
    [ "$rc" -eq 3 ] || { echo "write to /dev/full: exit $rc"; cat full.err; exit 1; }
    head -n 1 full.err | grep -q '^posenc'
    # --force lifts the size limit: the 5 GiB table starts, and fails only on the full disk
    set +e
    "$POSENC" gen --config "$C/llama-4-scout-17b-16e-instruct.json" --force --array cos -o - \
        > /dev/full 2> full.err
    rc=$?
    set -e
    [ "$rc" -eq 3 ] || { echo "--force to /dev/full: exit $rc"; cat full.err; exit 1; }
    if grep -q "the output would be" full.err; then echo "--force did not lift the limit"; exit 1; fi
    head -n 1 full.err | grep -q '^posenc gen: '
fi

# ---- a failed run leaves an existing output as it was, and never touches its input ----
"$POSENC" gen --config tiny.json -o keep.npz --seq-len 4
cksum keep.npz > keep.sum
expect_fail 2 "--array: 'tan'" "$POSENC" gen --config tiny.json -o keep.npz --array tan
expect_fail 3 "the output would be" "$POSENC" gen --config tiny.json -o keep.npz --seq-len 100000000
cksum keep.npz | cmp -s - keep.sum
cmp tiny.json tiny.orig
# the output may not replace an input (a positions file, or the config itself)
cp p.npz p.orig
expect_fail 2 "refusing to overwrite an input" "$POSENC" gen --config tiny.json --positions p.npz:p -o p.npz
cmp p.npz p.orig
cp tiny.json tiny.npz
expect_fail 2 "refusing to overwrite an input" "$POSENC" gen --config tiny.npz -o tiny.npz
cmp tiny.npz tiny.orig
no_file out.npz
# a message quoting a file's contents stays one line (a model_type "a\nb" once split it)
printf '{"model_type": "a\\nb\\u001b", "hidden_size": 64}' > nl.json
expect_fail 3 "'nl.json': model_type 'a\nb\x1b' is not known" "$POSENC" gen --config nl.json -o out.npz
test "$(wc -l < out.stderr)" -eq 1
no_file out.npz
