# posenc apply against transformers' rotation (torch/numpy references in tests/cli/apply_ref.py)
# on real configs: Llama 3.1 (llama3 scaling, positions past 8192, GQA), Qwen3.5 (partial rotary,
# interleaved mrope with 3-axis positions), GPT-J (gptj pairs), GLM-4.5 (partial rotary).
. "$SRC/tests/cli/lib.sh"
REF="$SRC/tests/cli/apply_ref.py"
# every input, generated with one torch import
$PY "$REF" batch > gen.log << 'EOF_GEN'
gen q.npy 1,4,9,128 f32 1
gen k.npy 1,2,9,128 f32 2
gen qb.npy 2,5,3,128 f32 3
gen qq.npy 1,3,6,256 f32 4
gen qk.npy 1,1,6,256 f32 5
gen gq.npy 7,2,256 f32 6
gen glq.npy 3,8,128 f32 7
gen glk.npy 1,8,128 f32 8
gen h.npy 1,2,9,128 f16 9
gen d.npy 1,2,9,128 f64 10
gen b.safetensors 1,4,12,128 bf16 11
gen bk.safetensors 1,2,12,128 bf16 12
gen go.npy 2,4,5,64 f32 13
gen gf.npy 1,2,4,512 f32 14
gen gs.npy 1,2,4,256 f32 15
gen dq.npy 1,1,10,16 f32 16
EOF_GEN
# reference checks are queued and run at the end, in one python process
chk() { printf '%s\n' "$*" >> checks.txt; }
: > checks.txt
C="$DATA/configs"

# ---- Llama 3.1 8B: GQA (4 query heads, 2 kv heads), positions around and past M0 = 8192
$PY -c "import numpy as np; np.save('pos.npy', np.array([0, 1, 77, 8191, 8192, 8193, 20000, 131071, 250000]))"
expect_ok "$POSENC" apply q.npy k.npy --config "$C/llama-3.1-8b.json" --positions pos.npy -o ll.npz
$PY -c "import numpy as np; z = np.load('ll.npz'); np.save('ll_q.npy', z['q']); np.save('ll_k.npy', z['k'])"
chk check llama-3.1-8b q.npy ll_q.npy pos.npy bhsd exact
chk check llama-3.1-8b k.npy ll_k.npy pos.npy bhsd exact
# transformers' own float32 path (--precision hf): the same numbers torch computes
expect_ok "$POSENC" apply q.npy k.npy --config "$C/llama-3.1-8b.json" --positions pos.npy \
    --precision hf -o llhf/
test -f llhf/q.npy && test -f llhf/k.npy
chk check llama-3.1-8b q.npy llhf/q.npy pos.npy bhsd hf
chk check llama-3.1-8b k.npy llhf/k.npy pos.npy bhsd hf
# the list form and the file form of --positions agree
expect_ok "$POSENC" apply q.npy --config "$C/llama-3.1-8b.json" \
    --positions 0,1,77,8191-8193,20000,131071,250000 -o ll_list.npy
chk same ll_list.npy ll_q.npy

# apply then --inverse gives the input back (2 ulp)
expect_ok "$POSENC" apply ll_q.npy --config "$C/llama-3.1-8b.json" --positions pos.npy --inverse -o back.npy
chk close back.npy q.npy 2e-6

# --offset: a decode chunk at 8190 equals explicit positions 8190..8198
expect_ok "$POSENC" apply q.npy k.npy --config "$C/llama-3.1-8b.json" --offset 8190 -o off.npz
expect_ok "$POSENC" apply q.npy k.npy --config "$C/llama-3.1-8b.json" --positions 8190-8198 -o off2.npz
$PY -c "
import numpy as np
a, b = np.load('off.npz'), np.load('off2.npz')
assert sorted(f for f in a.files if f != 'meta.json') == ['k', 'q'], a.files
assert all((a[n] == b[n]).all() for n in 'qk')
np.save('off_q.npy', a['q'])"
chk check llama-3.1-8b q.npy off_q.npy offset:8190 bhsd exact

# per-batch positions [batch, seq], FlashAttention layout (bshd)
$PY -c "import numpy as np; np.save('pb.npy', np.array([[0, 1, 2, 3, 4], [9000, 9001, 9003, 12000, 5]]))"
expect_ok "$POSENC" apply qb.npy --config "$C/llama-3.1-8b.json" --layout bshd --positions pb.npy -o qb_r.npy
chk check llama-3.1-8b qb.npy qb_r.npy pb.npy bshd exact

# ---- pipeline form: NPY on stdin, NPY on stdout, same bytes as the file form
"$POSENC" apply - --config "$C/llama-3.1-8b.json" --positions pos.npy -o - < q.npy > piped.npy
chk same piped.npy ll_q.npy
cat q.npy | "$POSENC" apply - --config "$C/llama-3.1-8b.json" --positions pos.npy -o - | \
    "$POSENC" apply - --config "$C/llama-3.1-8b.json" --positions pos.npy --inverse -o - > rt.npy
chk close rt.npy q.npy 2e-6

# ---- Qwen3.5: head_dim 256, rotary 64 (partial 0.25), interleaved mrope [11, 11, 10]
# text-only positions: all three axes equal
expect_ok "$POSENC" apply qq.npy qk.npy --config "$C/qwen3.5-27b.json" --offset 3 -o qw.npz
$PY -c "import numpy as np; z = np.load('qw.npz'); np.save('qw_q.npy', z['q']); np.save('qw_k.npy', z['k'])"
chk check qwen3.5-27b qq.npy qw_q.npy offset:3 bhsd exact
chk check qwen3.5-27b qk.npy qw_k.npy offset:3 bhsd exact
# 3-axis (t, h, w) positions of an image grid
$PY -c "
import numpy as np
t = [0, 1, 1, 1, 1, 2]; h = [0, 1, 1, 2, 2, 40000]; w = [0, 1, 2, 1, 2, 7]
np.save('pos3.npy', np.array([t, h, w], dtype=np.int32))"
expect_ok "$POSENC" apply qq.npy qk.npy --config "$C/qwen3.5-27b.json" --positions pos3.npy -o m3/
chk check qwen3.5-27b qq.npy m3/q.npy pos3.npy bhsd exact
chk check qwen3.5-27b qk.npy m3/k.npy pos3.npy bhsd exact
expect_ok "$POSENC" apply qq.npy qk.npy --config "$C/qwen3.5-27b.json" --positions pos3.npy \
    --precision hf -o m3hf/
chk check qwen3.5-27b qq.npy m3hf/q.npy pos3.npy bhsd hf
# mrope positions need an mrope config
$PY -c "import numpy as np; np.save('pos3_9.npy', np.arange(27).reshape(3, 9))"
expect_fail 3 "need a multimodal (mrope) RoPE config" "$POSENC" apply q.npy k.npy \
    --config "$C/llama-3.1-8b.json" --positions pos3_9.npy -o bad.npz
no_file bad.npz

# ---- GPT-J: gptj pairs (2i, 2i+1), rotary_dim 64 of head_dim 256, [seq, heads, head_dim]
expect_ok "$POSENC" apply gq.npy --config "$C/gpt-j-6b.json" --layout shd --offset 1000 -o gq_r.npy
chk check gpt-j-6b gq.npy gq_r.npy offset:1000 shd exact
expect_ok "$POSENC" apply gq.npy --config "$C/gpt-j-6b.json" --layout shd --offset 1000 \
    --precision hf -o gq_hf.npy
chk check gpt-j-6b gq.npy gq_hf.npy offset:1000 shd hf
# --style overrides the config: neox pairs are a different rotation
expect_ok "$POSENC" apply gq.npy --config "$C/gpt-j-6b.json" --layout shd --offset 1000 \
    --style neox -o gq_neox.npy
if $PY "$REF" same gq_neox.npy gq_r.npy 2> /dev/null; then echo "--style neox changed nothing"; exit 1; fi

# ---- GLM-4.5: partial rotary 0.5 (64 of 128), heads-first [heads, seq, head_dim]
expect_ok "$POSENC" apply glq.npy glk.npy --config "$C/glm-4.5.json" --layout hsd --offset 100000
test -f glq.rope.npy && test -f glk.rope.npy
chk check glm-4.5 glq.npy glq.rope.npy offset:100000 hsd exact
chk check glm-4.5 glk.npy glk.rope.npy offset:100000 hsd exact

# ---- f16 / bf16 / f64 dumps
expect_ok "$POSENC" apply h.npy --config "$C/llama-3.1-8b.json" --positions pos.npy -o h_r.npy
chk check llama-3.1-8b h.npy h_r.npy pos.npy bhsd exact
$PY -c "import numpy as np; assert np.load('h_r.npy').dtype == np.float16"
expect_ok "$POSENC" apply d.npy --config "$C/llama-3.1-8b.json" --positions pos.npy -o d_r.npy
chk check llama-3.1-8b d.npy d_r.npy pos.npy bhsd exact
expect_ok "$POSENC" apply h.npy --config "$C/llama-3.1-8b.json" --positions pos.npy --dtype f32 -o h32.npy
chk check llama-3.1-8b h.npy h32.npy pos.npy bhsd exact
expect_ok "$POSENC" apply b.safetensors bk.safetensors --config "$C/llama-3.1-8b.json" -o b_r.safetensors
chk check llama-3.1-8b b.safetensors b_r.safetensors:q offset:0 bhsd exact
chk check llama-3.1-8b bk.safetensors b_r.safetensors:k offset:0 bhsd exact
# hf: cos/sin cast to bf16, every multiply and add rounded to bf16 as torch does
expect_ok "$POSENC" apply b.safetensors bk.safetensors --config "$C/llama-3.1-8b.json" \
    --precision hf -o b_hf.safetensors
chk check llama-3.1-8b b.safetensors b_hf.safetensors:q offset:0 bhsd hf - 0.99
chk check llama-3.1-8b bk.safetensors b_hf.safetensors:k offset:0 bhsd hf - 0.99
expect_ok "$POSENC" apply h.npy --config "$C/llama-3.1-8b.json" --positions pos.npy --precision hf -o hhf.npy
chk check llama-3.1-8b h.npy hhf.npy pos.npy bhsd hf - 0.9

# ---- member specs and default names
$PY -c "
import numpy as np
np.savez('dump.npz', q=np.load('q.npy'), k=np.load('k.npy'))"
expect_ok "$POSENC" apply dump.npz:q dump.npz:k --config "$C/llama-3.1-8b.json" --positions pos.npy
chk same dump.q.rope.npy ll_q.npy
chk same dump.k.rope.npy ll_k.npy
# one dump into a container keeps its member name
expect_ok "$POSENC" apply dump.npz:k --config "$C/llama-3.1-8b.json" --positions pos.npy -o konly.npz
$PY -c "import numpy as np; assert [f for f in np.load('konly.npz').files if f != 'meta.json'] == ['k']"

# ---- GPT-OSS: yarn (no truncation), cos and sin carry the attention factor 1.3466
expect_ok "$POSENC" apply go.npy --config "$C/gpt-oss-20b.json" --layout bshd --offset 70000 -o go_r.npy
chk check gpt-oss-20b go.npy go_r.npy offset:70000 bshd exact

# ---- Gemma 4: per layer type; full attention is proportional RoPE over a 512-wide head
expect_fail 2 "several RoPE layer types" "$POSENC" apply gf.npy --config "$C/gemma-4-26b-a4b.json" -o gf_r.npy
no_file gf_r.npy
expect_ok "$POSENC" apply gf.npy --config "$C/gemma-4-26b-a4b.json" --layer-type full_attention \
    --offset 5000 -o gf_r.npy
chk check gemma-4-full gf.npy gf_r.npy offset:5000 bhsd exact
expect_ok "$POSENC" apply gf.npy --config "$C/gemma-4-26b-a4b.json" --layer-type full_attention \
    --offset 5000 --precision hf -o gf_hf.npy
chk check gemma-4-full gf.npy gf_hf.npy offset:5000 bhsd hf
# the zero-frequency pairs are left exactly as they were
$PY -c "
import numpy as np
x, y = np.load('gf.npy'), np.load('gf_r.npy')
assert (x[..., 64:256] == y[..., 64:256]).all() and (x[..., 320:] == y[..., 320:]).all()
assert not (x[..., :64] == y[..., :64]).all()"
expect_ok "$POSENC" apply gs.npy --config "$C/gemma-4-26b-a4b.json" --layer-type sliding_attention \
    --offset 5000 -o gs_r.npy
chk check gemma-4-sliding gs.npy gs_r.npy offset:5000 bhsd exact
# the sliding head does not fit the full-attention table
expect_fail 3 "'gs.npy': head_dim 256 does not match" "$POSENC" apply gs.npy \
    --config "$C/gemma-4-26b-a4b.json" --layer-type full_attention -o gs_bad.npy
no_file gs_bad.npy

# ---- dynamic NTK: the base depends on the sequence length (largest position + 1, or --seq-len)
cat > dyn.json << 'JSON'
{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 10000.0,
 "max_position_embeddings": 16, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
JSON
expect_ok "$POSENC" apply dq.npy --config dyn.json -o dq_short.npy
chk check tiny-dynamic dq.npy dq_short.npy offset:0 bhsd exact
expect_ok "$POSENC" apply dq.npy --config dyn.json --offset 50 -o dq_long.npy
chk check tiny-dynamic dq.npy dq_long.npy offset:50 bhsd exact
expect_ok "$POSENC" apply dq.npy --config dyn.json --seq-len 100 -o dq_sl.npy
chk APPLY_SEQ_LEN=100 check tiny-dynamic dq.npy dq_sl.npy offset:0 bhsd exact
if $PY "$REF" same dq_sl.npy dq_short.npy 2> /dev/null; then echo "--seq-len changed nothing"; exit 1; fi

# ---- HDF5 in and out (h5py writes the dump, h5py reads the result; HDF5 runs on one thread)
$PY -c "
import h5py, numpy as np
with h5py.File('acts.h5', 'w') as f:
    f['layer0/q'] = np.load('q.npy'); f['layer0/k'] = np.load('k.npy')"
expect_ok "$POSENC" apply acts.h5:/layer0/q acts.h5:/layer0/k --config "$C/llama-3.1-8b.json" \
    --positions pos.npy -o r.h5
$PY -c "
import h5py, numpy as np
with h5py.File('r.h5', 'r') as f:
    assert sorted(f.keys()) == ['k', 'q'], list(f.keys())
    assert (f['q'][...] == np.load('ll_q.npy')).all() and (f['k'][...] == np.load('ll_k.npy')).all()"
# default names for member specs: FILE.MEMBER.rope.npy, slashes become underscores
expect_ok "$POSENC" apply acts.h5:/layer0/q --config "$C/llama-3.1-8b.json" --positions pos.npy \
    -o - > /dev/null
expect_ok "$POSENC" apply acts.h5:/layer0/q acts.h5:/layer0/k --config "$C/llama-3.1-8b.json" \
    --positions pos.npy
chk same acts.layer0_q.rope.npy ll_q.npy
# --format when the name does not tell
expect_ok "$POSENC" apply q.npy k.npy --config "$C/llama-3.1-8b.json" --positions pos.npy \
    --format npz -o rotated
$PY -c "import numpy as np; assert (np.load('rotated')['q'] == np.load('ll_q.npy')).all()"
# an empty sequence is a valid (empty) dump
$PY -c "import numpy as np; np.save('z.npy', np.zeros((1, 4, 0, 128), np.float32))"
expect_ok "$POSENC" apply z.npy --config "$C/llama-3.1-8b.json" -o zr.npy
$PY -c "import numpy as np; assert np.load('zr.npy').shape == (1, 4, 0, 128)"

# ---- run the queued reference checks
$PY "$REF" batch < checks.txt
