# posenc apply: bad input gets one clear line, a non-zero exit and no output file.
. "$SRC/tests/cli/lib.sh"
REF="$SRC/tests/cli/apply_ref.py"
# every input, generated with one torch import
$PY "$REF" batch > gen.log << 'EOF_GEN'
gen q.npy 1,4,6,128 f32 1
gen k.npy 1,2,6,128 f32 2
gen k7.npy 1,2,7,128 f32 3
gen q64.npy 1,4,6,64 f32 4
gen o.npy 1,1,3,10 f32 5
EOF_GEN
L="$DATA/configs/llama-3.1-8b.json"

cp q.npy q.orig

# usage errors (exit 2)
expect_fail 2 "posenc apply:" "$POSENC" apply --no-such-option
expect_fail 2 "--config" "$POSENC" apply q.npy k.npy -o out.npz
expect_fail 2 "reading stdin needs -o OUT" "$POSENC" apply - --config "$L" < q.npy  # one file X without -o: X.rope.EXT (t_defects)
expect_fail 2 "'-o -'" "$POSENC" apply q.npy k.npy --config "$L" -o -
expect_fail 2 "layout" "$POSENC" apply q.npy k.npy --config "$L" --layout bsdh -o out.npz
expect_fail 2 "--offset" "$POSENC" apply q.npy k.npy --config "$L" --offset -3 -o out.npz
expect_fail 2 "exclude" "$POSENC" apply q.npy k.npy --config "$L" --offset 3 --positions 0-5 -o out.npz
expect_fail 2 "--dtype" "$POSENC" apply q.npy k.npy --config "$L" --dtype i32 -o out.npz
# the count reads as a number (it once read "5,) positions"), singular for one
expect_fail 2 "--positions: 5 positions for a sequence of 6 tokens" \
    "$POSENC" apply q.npy k.npy --config "$L" --positions 0-4 -o out.npz
expect_fail 2 "--positions: 1 position for a sequence of 6 tokens" \
    "$POSENC" apply q.npy k.npy --config "$L" --positions 3 -o out.npz
expect_fail 2 "--positions" "$POSENC" apply q.npy k.npy --config "$L" --positions 0,1,2,3,4,x -o out.npz
expect_fail 2 "2^31" "$POSENC" apply q.npy k.npy --config "$L" --positions 0,1,2,3,4,2147483648 -o out.npz
expect_fail 2 "too many" "$POSENC" apply q.npy k.npy q.npy --config "$L" -o out.npz
no_file out.npz
"$POSENC" apply --help > help.txt
grep -q -- "--positions" help.txt

# Q and K disagree on seq: one line naming both files and shapes
expect_fail 3 "'q.npy' (1, 4, 6, 128) and 'k7.npy' (1, 2, 7, 128)" \
    "$POSENC" apply q.npy k7.npy --config "$L" -o out.npz
no_file out.npz q.rope.npy k7.rope.npy
# head_dim not matching the config
expect_fail 3 "'q64.npy': head_dim 64 does not match the config's head_dim 128" \
    "$POSENC" apply q64.npy --config "$L" -o out.npy
no_file out.npy
# a layout the shape does not fit
expect_fail 3 "'q.npy': expected 2 dims [seq, head_dim] for layout sd" "$POSENC" apply q.npy --config "$L" --layout sd -o out.npy
no_file out.npy

# odd rotary dim: head_dim 10 with partial_rotary_factor 0.5 rotates 5 dims
cat > odd.json << 'EOF'
{"model_type": "glm4_moe", "hidden_size": 40, "num_attention_heads": 4, "head_dim": 10,
 "partial_rotary_factor": 0.5, "rope_theta": 10000, "max_position_embeddings": 4096}
EOF
expect_fail 3 "odd" "$POSENC" apply o.npy --config odd.json -o out.npy
no_file out.npy

# bad positions files
$PY -c "
import numpy as np
np.save('neg.npy', np.array([0, 1, -2, 3, 4, 5]))
np.save('short.npy', np.array([0, 1, 2]))
np.save('wide.npy', np.zeros((5, 6), dtype=np.int64))
np.save('fl.npy', np.array([0.5, 1, 2, 3, 4, 5]))
np.save('big.npy', np.array([0, 1, 2, 3, 4, 2**31]))"
expect_fail 3 "'neg.npy': position -2" "$POSENC" apply q.npy k.npy --config "$L" --positions neg.npy -o out.npz
expect_fail 3 "'short.npy': 3 positions for a sequence of 6 tokens" "$POSENC" apply q.npy k.npy --config "$L" --positions short.npy -o out.npz
expect_fail 3 "'wide.npy': positions of shape (5, 6) do not fit batch" "$POSENC" apply q.npy k.npy --config "$L" --positions wide.npy -o out.npz
expect_fail 3 "'fl.npy': positions must be integers" "$POSENC" apply q.npy k.npy --config "$L" --positions fl.npy -o out.npz
expect_fail 3 "'big.npy': position 2147483648" "$POSENC" apply q.npy k.npy --config "$L" --positions big.npy -o out.npz
no_file out.npz

# missing and malformed inputs
expect_fail 3 "'nope.npy'" "$POSENC" apply nope.npy k.npy --config "$L" -o out.npz
expect_fail 3 "'nope.json'" "$POSENC" apply q.npy k.npy --config nope.json -o out.npz
printf '\223NUMPY\001\000\377\377garbage' > bad.npy
expect_fail 3 "'bad.npy'" "$POSENC" apply bad.npy k.npy --config "$L" -o out.npz
head -c 200 q.npy > trunc.npy
expect_fail 3 "'trunc.npy'" "$POSENC" apply trunc.npy --config "$L" -o out.npy
no_file out.npz out.npy
# a truncated stream on stdin
head -c 2000 q.npy | expect_fail 3 "posenc apply:" "$POSENC" apply - --config "$L" -o out.npy
no_file out.npy

# integer dumps are refused
$PY -c "import numpy as np; np.save('ints.npy', np.zeros((1, 1, 2, 128), dtype=np.int32))"
expect_fail 3 "'ints.npy': cannot rotate i32" "$POSENC" apply ints.npy --config "$L" -o out.npy
no_file out.npy

# a model without RoPE
expect_fail 3 "posenc apply:" "$POSENC" apply q.npy --config "$DATA/configs/baichuan-13b.json" -o out.npy
no_file out.npy

# inputs are never overwritten
expect_fail 2 "'q.npy': refusing to overwrite an input" "$POSENC" apply q.npy --config "$L" -o q.npy
mkdir od && cp k.npy od/k.npy
expect_fail 2 "'od/k.npy': refusing to overwrite an input" "$POSENC" apply q.npy od/k.npy --config "$L" -o od
cmp q.npy q.orig
# Q and K from the same file would collide
expect_fail 3 "would both be written" "$POSENC" apply q.npy q.npy --config "$L"
no_file q.rope.npy
# an NPY file holds one array
expect_fail 3 "holds one array" "$POSENC" apply q.npy k.npy --config "$L" -o both.npy
no_file both.npy
