# Flat Q/K dumps: bsf [batch, seq, heads*head_dim] (a forward hook on q_proj/k_proj) and sf
# [tokens, heads*head_dim] (vLLM's attention), split by the config's head_dim, through apply,
# verify, diff's buckets and multi-layer pairs, against tests/cli/apply_ref.py (a float64 closed
# form and transformers' float32 path in torch, with its own reshape); and the layout a refused
# shape fits. llama-3.1-8b has 32 query and 8 key heads of 128 (GQA).
. "$SRC/tests/cli/lib.sh"
REF="$SRC/tests/cli/apply_ref.py"
C="$DATA/configs/llama-3.1-8b.json"
$PY "$REF" batch <<'EOF'
gen q.npy 2,6,4096 f32 1
gen k.npy 2,6,1024 f32 2
gen qt.npy 6,4096 f32 3
gen kt.npy 6,1024 f32 4
gen qb.safetensors 1,6,4096 bf16 5
EOF
# the same values as [batch, seq, heads, head_dim] and [seq, heads, head_dim]
"$PY" -c "
import numpy as np
np.save('q4.npy', np.load('q.npy').reshape(2, 6, 32, 128))
np.save('k4.npy', np.load('k.npy').reshape(2, 6, 8, 128))
np.save('qt3.npy', np.load('qt.npy').reshape(6, 32, 128))
np.save('kt3.npy', np.load('kt.npy').reshape(6, 8, 128))"

# ---- apply: bsf and sf against the references, q with 32 heads and k with 8
expect_ok "$POSENC" apply --config "$C" q.npy k.npy --layout bsf --offset 100 -o bsf.npz
expect_ok "$POSENC" apply --config "$C" qt.npy kt.npy --layout sf --offset 7 -o sf.npz
expect_ok "$POSENC" apply --config "$C" qb.safetensors --layout bsf --precision hf -o qb.rope.safetensors
expect_ok "$POSENC" apply --config "$C" q4.npy k4.npy --layout bshd --offset 100 -o bshd.npz
$PY "$REF" batch <<'EOF'
check llama-3.1-8b q.npy bsf.npz:q offset:100 bsf exact
check llama-3.1-8b k.npy bsf.npz:k offset:100 bsf exact
check llama-3.1-8b qt.npy sf.npz:q offset:7 sf exact
check llama-3.1-8b kt.npy sf.npz:k offset:7 sf exact
check llama-3.1-8b qb.safetensors qb.rope.safetensors offset:0 bsf hf
EOF
# the flat dump is the bshd dump's bytes: the same output bit for bit, in the input's shape
"$PY" -c "
import numpy as np
a, b = np.load('bsf.npz'), np.load('bshd.npz')
assert a['q'].shape == (2, 6, 4096) and a['k'].shape == (2, 6, 1024)
assert (a['q'].reshape(b['q'].shape) == b['q']).all() and (a['k'].reshape(b['k'].shape) == b['k']).all()"
# a last axis that does not split into head_dim vectors
$PY "$REF" gen odd.npy 1,6,1000 f32 6
expect_fail 3 "posenc apply: 'odd.npy': last axis 1000 of layout bsf is not a multiple of head_dim 128" \
    "$POSENC" apply --config "$C" odd.npy --layout bsf -o x.npy
expect_fail 2 "(expected bhsd, bshd, shd, hsd, sd, bsf, sf or ggml)" \
    "$POSENC" apply --config "$C" q.npy --layout bs -o x.npy

# ---- verify: a runtime's flat dumps made outside posenc pass; a planted mistake fails
$PY "$REF" batch <<'EOF'
rotate llama-3.1-8b q.npy eq.npy offset:0 bsf
rotate llama-3.1-8b k.npy ek.npy offset:0 bsf
rotate llama-3.1-8b qt.npy eqt.npy offset:0 sf
rotate llama-3.1-8b kt.npy ekt.npy offset:0 sf
EOF
expect_ok "$POSENC" verify --config "$C" --q q.npy --k k.npy --expect-q eq.npy --expect-k ek.npy \
    --layout bsf
grep -q "expect_q" out.stdout
expect_ok "$POSENC" verify --config "$C" --q qt.npy --k kt.npy --expect-q eqt.npy \
    --expect-k ekt.npy --layout sf --report sf.json
"$PY" -c "
import json; r = json.load(open('sf.json')); assert r['ok'] is True, r['ok']"
# k rotated one position late: the check fails (exit 1)
"$PY" -c "
import numpy as np
e = np.load('ekt.npy'); e[1:] = e[:-1].copy(); np.save('ekt_bad.npy', e)"
set +e
"$POSENC" verify --config "$C" --q qt.npy --k kt.npy --expect-q eqt.npy --expect-k ekt_bad.npy \
    --layout sf -q
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "planted mistake: exit $rc, expected 1"; exit 1; }

# ---- multi-layer pairs of flat dumps: apply and verify, each pair split by its own count
"$PY" -c "
import numpy as np
d = {'layers.0.q': np.load('q.npy'), 'layers.0.k': np.load('k.npy'),
     'layers.1.q': np.load('q.npy')[:, :, ::-1].copy(), 'layers.1.k': np.load('k.npy')[:, :, ::-1].copy()}
np.savez('layers.npz', **d)
np.save('l1q.npy', d['layers.1.q']); np.save('l1k.npy', d['layers.1.k'])"
$PY "$REF" batch <<'EOF'
rotate llama-3.1-8b l1q.npy el1q.npy offset:0 bsf
rotate llama-3.1-8b l1k.npy el1k.npy offset:0 bsf
EOF
"$PY" -c "
import numpy as np
np.savez('elayers.npz', **{'layers.0.q': np.load('eq.npy'), 'layers.0.k': np.load('ek.npy'),
         'layers.1.q': np.load('el1q.npy'), 'layers.1.k': np.load('el1k.npy')})"
expect_ok "$POSENC" apply --config "$C" layers.npz --layout bsf -o layers.rope.npz
$PY "$REF" batch <<'EOF'
check llama-3.1-8b layers.npz:layers.0.q layers.rope.npz:layers.0.q offset:0 bsf exact
check llama-3.1-8b layers.npz:layers.1.k layers.rope.npz:layers.1.k offset:0 bsf exact
EOF
expect_ok "$POSENC" verify --config "$C" --q layers.npz --expect-q elayers.npz --layout bsf

# ---- diff: position buckets along a flat dump's seq axis
expect_ok "$POSENC" apply --config "$C" q.npy k.npy --layout bsf -o b0.npz
expect_ok "$POSENC" diff eq.npy b0.npz:q --layout bsf --buckets 4 --json
"$PY" -c "
import json; p = json.load(open('out.stdout'))['positions']
assert p['axis'] == 1 and [(b['lo'], b['hi'], b['count']) for b in p['buckets']] == \\
    [(0, 3, 32768), (4, 5, 16384)], p"

# ---- a shape that fits another layout: the refusal names it
expect_fail 3 "'q.npy': shape (2, 6, 4096) does not fit layout bhsd (4 dims); the dumps fit layout bsf (32 query and 8 key heads of head_dim 128 in '$C'): give --layout bsf" \
    "$POSENC" verify --config "$C" --q q.npy --k k.npy
# bshd read as bhsd with GQA: batch and seq differ
expect_fail 3 "the dumps fit layout bshd (32 query and 8 key heads" \
    "$POSENC" verify --config "$C" --q q4.npy --k k4.npy
# without GQA nothing differs: 40 "heads" are no share of the config's 8
cat > mha.json <<'EOF'
{"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8,
 "head_dim": 128, "num_hidden_layers": 2, "max_position_embeddings": 4096, "rope_theta": 10000.0}
EOF
"$PY" -c "
import numpy as np
r = np.random.default_rng(7)
np.save('mq.npy', r.standard_normal((1, 40, 8, 128)).astype(np.float32))
np.save('mk.npy', r.standard_normal((1, 40, 8, 128)).astype(np.float32))"
expect_fail 3 "'mq.npy': shape (1, 40, 8, 128) read as layout bhsd has 40 heads, which are not the 8 query heads of 'mha.json' nor a share of them; the dumps fit layout bshd (8 query and 8 key heads of head_dim 128 in 'mha.json'): give --layout bshd" \
    "$POSENC" verify --config mha.json --q mq.npy --k mk.npy
expect_ok "$POSENC" verify --config mha.json --q mq.npy --k mk.npy --layout bshd
expect_fail 3 "the dump fits layout sf (32 heads of head_dim 128" \
    "$POSENC" apply --config "$C" qt.npy -o x.npy
expect_fail 3 "the dumps fit layout shd (32 query and 8 key heads" \
    "$POSENC" apply --config "$C" qt3.npy kt3.npy --layout hsd -o x.npz
expect_fail 3 "'layers.npz': 'layers.0.q': expected 4 dims [batch, heads, seq, head_dim] for layout bhsd, got shape (2, 6, 4096); the dumps fit layout bsf" \
    "$POSENC" apply --config "$C" layers.npz -o x.npz
# a tensor-parallel rank's share of the heads is no mix-up: read as given
"$PY" -c "
import numpy as np
np.save('tpq.npy', np.load('q4.npy')[:, :, :16].transpose(0, 2, 1, 3).copy())"
expect_ok "$POSENC" apply --config "$C" tpq.npy -o tpq.rope.npy
no_file x.npy x.npz
