# Configs read as transformers reads them (issue 25): a repeated key takes its last value (as
# Python's json), with one warning line; a key inside a rope dict that no rope type defines and a
# top-level key a small edit from a RoPE key get one warning line each naming the key it
# resembles, and a note in info --json; a legacy rope_scaling without a rope type is refused.
. "$SRC/tests/cli/lib.sh"
one_line() { test "$(wc -l < out.stderr)" -eq "${1:-1}" || { echo "want ${1:-1} stderr lines:"; cat out.stderr; exit 1; }; }

# duplicate keys: the last value, at the top level and inside rope_scaling
cat > dup.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_theta": 10000, "rope_theta": 500000}
J
expect_ok "$POSENC" info -c dup.json --json
one_line
grep -qF "posenc info: 'dup.json': duplicate key 'rope_theta': the last value is used, as Python's json reads it" out.stderr
$PY - <<'PY'
import json
d = json.load(open("out.stdout"))
assert d["theta"] == 500000, d["theta"]
assert any("duplicate key 'rope_theta'" in n for n in d["notes"]), d["notes"]
# Python's own reading of the file agrees
assert json.load(open("dup.json"))["rope_theta"] == 500000
PY
cat > dup2.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_scaling": {"rope_type": "linear", "factor": 2.0, "factor": 8.0}}
J
expect_ok "$POSENC" info -c dup2.json
grep -q "^factor  *8$" out.stdout
grep -qF "duplicate key 'rope_scaling.factor'" out.stderr
# gen records the same table transformers computes: the tables of the deduplicated config
cat > nodup.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 64,
 "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
J
expect_ok "$POSENC" gen -c dup2.json --seq-len 8 --array cos --format npy -o a.npy
expect_ok "$POSENC" gen -c nodup.json --seq-len 8 --array cos --format npy -o b.npy
cmp a.npy b.npy

# Llama-3.1 with rope_scaling.rope_typ: transformers raises (missing required key 'rope_type')
cat > l31.json <<'J'
{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
 "max_position_embeddings": 131072, "rope_theta": 500000.0,
 "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                  "original_max_position_embeddings": 8192, "rope_typ": "llama3"}}
J
expect_fail 3 "posenc gen: 'l31.json': rope_scaling has no rope_type ('rope_typ' is not a key; did you mean 'rope_type'?): transformers refuses it" \
    "$POSENC" gen -c l31.json --seq-len 4 -o l31.npz
one_line; no_file l31.npz
cat > notype.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "rope_scaling": {"factor": 8.0}}
J
expect_fail 3 "posenc info: 'notype.json': rope_scaling has no rope_type (nor type): transformers refuses it" \
    "$POSENC" info -c notype.json
one_line
# "type" (the older name) still counts
sed 's/"factor": 8.0}/"type": "linear", "factor": 8.0}/' notype.json > oldtype.json
expect_ok "$POSENC" info -c oldtype.json
test ! -s out.stderr

# typos: one warning line each, the key it resembles, a note in --json, the default kept
cat > typo.json <<'J'
{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
 "max_position_embedings": 4096, "rope_theta_": 500000.0,
 "rope_scalling": {"rope_type": "linear", "factor": 8.0},
 "rope_scaling": {"rope_type": "linear", "factor": 2.0, "fator": 3.0, "zzz": 1}}
J
expect_ok "$POSENC" info -c typo.json --json
one_line 5
for w in "rope_scaling.fator is not a key of any rope type (did you mean 'factor'?)" \
         "rope_scaling.zzz is not a key of any rope type; it is ignored" \
         "max_position_embedings is not a config key (did you mean 'max_position_embeddings'?)" \
         "rope_theta_ is not a config key (did you mean 'rope_theta'?)" \
         "rope_scalling is not a config key (did you mean 'rope_scaling'?)"; do
    grep -qF "posenc info: 'typo.json': $w" out.stderr || { echo "missing: $w"; cat out.stderr; exit 1; }
    grep -qF "$w" out.stdout || { echo "no note: $w"; exit 1; }
done
$PY -c "
import json
d = json.load(open('out.stdout'))
assert d['theta'] == 10000 and d['factor'] == 2, d
"
# every command that reads a config says it (gen, verify)
expect_ok "$POSENC" gen -c typo.json --seq-len 4 -o t.npz
one_line 5
# per-layer-type rope_parameters: each dict is checked, the layer names are not keys
cat > lt.json <<'J'
{"model_type": "gemma3_text", "hidden_size": 256, "num_attention_heads": 4, "head_dim": 64,
 "layer_types": ["sliding_attention", "full_attention"], "num_hidden_layers": 2,
 "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                     "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0,
                                        "facter": 2}}}
J
expect_ok "$POSENC" info -c lt.json --layer-type full_attention
one_line
grep -qF "rope_parameters.full_attention.facter is not a key of any rope type (did you mean 'factor'?)" out.stderr

# the real configs of the test data resolve without a warning
for f in "$DATA"/configs/*.json "$DATA"/configs/families/*.json; do
    "$POSENC" info -c "$f" > /dev/null 2> w.txt || continue
    if grep -q "is not a key\|is not a config key\|duplicate key\|has no rope_type" w.txt; then
        echo "false alarm on $f:"; cat w.txt; exit 1
    fi
done
