# The one option layer (cmd/opts.c): in every command an unknown option, a missing value, a
# value out of range and -h behave the same way; deprecated aliases warn once and keep working;
# -c works in gen; --seq-len has one range and one message; an unknown --layer-type exits 2.
. "$SRC/tests/cli/lib.sh"
cat > tiny.json <<'EOF'
{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
 "max_position_embeddings": 64, "rope_theta": 10000.0}
EOF
L="$DATA/configs/llama-3.1-8b.json"
G="$DATA/configs/gemma-3-27b-it.json"

# exactly two lines on stderr: the message, then "posenc CMD: try 'posenc CMD --help'"
usage_lines() { # CMD 'message' ARGS...
    c=$1; want=$2; shift 2
    expect_fail 2 "$want" "$POSENC" "$c" "$@"
    [ "$(wc -l < out.stderr)" -eq 2 ] || { echo "posenc $c $*: not two lines"; cat out.stderr; exit 1; }
    head -n 1 out.stderr | grep -qxF "posenc $c: $want" ||
        { echo "posenc $c $*: first line is not 'posenc $c: $want'"; cat out.stderr; exit 1; }
    sed -n 2p out.stderr | grep -qxF "posenc $c: try 'posenc $c --help'" ||
        { echo "posenc $c $*: no 'try' line"; cat out.stderr; exit 1; }
    [ ! -s out.stdout ] || { echo "posenc $c $*: wrote to stdout"; exit 1; }
}

# CMD  an option that takes a value  a bad value  its message
while read -r c opt bad msg; do
    usage_lines "$c" "unknown option '--no-such-option'" --no-such-option
    usage_lines "$c" "unknown option '-Z'" -Z
    usage_lines "$c" "option '$opt' needs a value" "$opt"
    usage_lines "$c" "option '--help' takes no value" --help=yes
    usage_lines "$c" "$opt: $msg" "$opt" "$bad"
    # -h and --help: the usage on stdout, nothing on stderr, exit 0, the same as posenc help CMD
    for h in -h --help; do
        expect_ok "$POSENC" "$c" "$h"
        [ ! -s out.stderr ] && head -n 1 out.stdout | grep -q "^usage: posenc $c "
        "$POSENC" help "$c" | cmp -s - out.stdout || { echo "posenc help $c differs from $h"; exit 1; }
    done
    # every option help --options lists is accepted (none is "unknown"): a value of x
    "$POSENC" help --options "$c" > opts.txt
    while read -r o; do
        set +e; "$POSENC" "$c" "$o" x > /dev/null 2> err.txt; set -e
        if grep -q "unknown option" err.txt; then echo "posenc $c: $o from the table is unknown"; exit 1; fi
    done < opts.txt
done <<'EOF'
gen --seq-len 0 '0' is not an integer in [1, 281474976710656]
apply --seq-len 0 '0' is not an integer in [1, 281474976710656]
verify --samples 4097 '4097' is not an integer in [1, 4096]
info --seq-len 0 '0' is not an integer in [1, 281474976710656]
convert --format zip unknown format 'zip' (expected npy, npz, gguf, hdf5, safetensors, dir, header or raw)
diff --top 1001 '1001' is not an integer in [0, 1000]
EOF

# one --seq-len: the same bad values are refused with the same line by gen, apply, verify and info
for v in 0 -1 281474976710657 1e3 12x ""; do
    first=
    for c in gen apply verify info; do
        usage_lines "$c" "--seq-len: '$v' is not an integer in [1, 281474976710656]" --seq-len "$v" -c "$L"
        line=$(head -n 1 out.stderr | sed "s/^posenc $c: //")
        [ -z "$first" ] && first=$line
        [ "$line" = "$first" ] || { echo "--seq-len '$v': '$line' differs from '$first'"; exit 1; }
    done
done
# the largest accepted --seq-len is accepted by all four (2^48)
expect_ok "$POSENC" info -c tiny.json --seq-len 281474976710656
expect_ok "$POSENC" gen -c tiny.json --seq-len 281474976710656 --array inv_freq -o big-inv.npy
"$PY" -c "import numpy as np; assert np.load('big-inv.npy').shape == (8,)"
"$PY" -c "import numpy as np; np.random.seed(1); np.save('q.npy', np.random.randn(1, 4, 3, 16).astype(np.float32)); np.save('k.npy', np.random.randn(1, 4, 3, 16).astype(np.float32))"
expect_ok "$POSENC" apply q.npy k.npy -c tiny.json --seq-len 281474976710656 -o big.npz

# an unknown --layer-type exits 2 in every command that takes one, one line
for cfg in "$G" tiny.json; do
    expect_fail 2 "unknown layer type 'nope'" "$POSENC" gen -c "$cfg" --layer-type nope --seq-len 4 -o lt.npz
    expect_fail 2 "unknown layer type 'nope'" "$POSENC" apply q.npy k.npy -c "$cfg" --layer-type nope -o lt.npz
    expect_fail 2 "unknown layer type 'nope'" "$POSENC" verify -c "$cfg" --layer-type nope
    expect_fail 2 "unknown layer type 'nope'" "$POSENC" info -c "$cfg" --layer-type nope
    no_file lt.npz
done

# -c works in gen (the same table as --config)
expect_ok "$POSENC" gen -c tiny.json --seq-len 8 -o short.npz
expect_ok "$POSENC" gen --config tiny.json --seq-len 8 -o long.npz
"$POSENC" diff short.npz:cos long.npz:cos --atol 0 --rtol 0 > /dev/null
"$PY" -c "import numpy as np; a = np.load('short.npz'); b = np.load('long.npz'); assert all((a[n] == b[n]).all() for n in ('cos', 'sin', 'inv_freq')) and a['cos'].shape == (8, 16)"

# gen --layout is a deprecated alias of --table-layout: one warning line, the same table
expect_ok "$POSENC" gen -c tiny.json --seq-len 8 --table-layout half -o new.npz
[ ! -s out.stderr ]
expect_ok "$POSENC" gen -c tiny.json --seq-len 8 --layout half -o old.npz
[ "$(wc -l < out.stderr)" -eq 1 ] && grep -qx "posenc gen: --layout is deprecated; use --table-layout" out.stderr
"$PY" -c "
import numpy as np
a, b = np.load('new.npz'), np.load('old.npz')
assert a['cos'].shape == (8, 8) and b['cos'].shape == (8, 8)  # half: rotary_dim/2 wide
assert all((a[n] == b[n]).all() for n in ('cos', 'sin', 'inv_freq'))"
usage_lines gen "--table-layout: unknown layout 'diagonal' (expected hf, half, interleaved or vllm)" -c tiny.json -o x.npz --table-layout diagonal
# the alias's error names the spelling that was given after its warning
expect_fail 2 "table-layout" "$POSENC" gen -c tiny.json -o x.npz --layout diagonal
head -n 1 out.stderr | grep -qx "posenc gen: --layout is deprecated; use --table-layout"
# in apply, verify and diff --layout is still the dump layout
usage_lines apply "--layout: unknown layout 'half' (expected bhsd, bshd, shd, hsd, sd, bsf, sf or ggml)" q.npy -c tiny.json --layout half
usage_lines verify "--layout: unknown layout 'half' (expected bhsd, bshd, shd, hsd, sd, bsf, sf or ggml)" -c tiny.json --layout half

# ls --dtype bf16 is a deprecated alias of --assume-bf16, the one bf16 flag of every command
"$PY" -c "import numpy as np; np.save('v2.npy', np.array([0x3f80, 0x4000], dtype=np.uint16).view('V2'))"
expect_ok "$POSENC" ls --assume-bf16 v2.npy
[ ! -s out.stderr ] && cp out.stdout new.txt
expect_ok "$POSENC" ls --dtype bf16 v2.npy
grep -qx "posenc ls: --dtype is deprecated; use --assume-bf16" out.stderr && [ "$(wc -l < out.stderr)" -eq 1 ]
cmp -s out.stdout new.txt
grep -q '^v2  *bf16  *(2,)  *4$' new.txt || { cat new.txt; exit 1; }
# without it the array is opaque and the hint names the flag every command has
expect_ok "$POSENC" ls v2.npy
grep -q "pass --assume-bf16" out.stderr
expect_ok "$POSENC" convert --assume-bf16 v2.npy v2-f32.npy --dtype f32
"$PY" -c "import numpy as np; assert (np.load('v2-f32.npy') == [1.0, 2.0]).all()"

# a flag with a value and a clustered short option
usage_lines convert "option '--force' takes no value" --force=1 a.npz b.npz
expect_ok "$POSENC" gen -qc tiny.json --seq-len 2 -o q2.npz

# posenc help --options CMD lists the table; an alias is listed with the option it replaces
"$POSENC" help --options gen > g.txt
grep -qx -- --table-layout g.txt && grep -qx -- --layout g.txt && grep -qx -- --config g.txt
"$POSENC" help --options ls > l.txt
grep -qx -- --assume-bf16 l.txt && grep -qx -- --dtype l.txt
# ls has one option with a value, the alias: it warns, then refuses the value
usage_lines ls "unknown option '--no-such-option'" --no-such-option
usage_lines ls "option '--dtype' needs a value" --dtype
expect_fail 2 "posenc ls: --dtype is deprecated; use --assume-bf16" "$POSENC" ls --dtype f32 v2.npy
sed -n 2p out.stderr | grep -qx "posenc ls: --dtype: only bf16 changes how files are read, not f32"
expect_ok "$POSENC" ls -h
head -n 1 out.stdout | grep -q '^usage: posenc ls '

# verify --seq-len has apply's meaning (the length that picks dynamic/longrope parameters): a
# dump rotated by apply at length 16384 under dynamic NTK passes verify at that length, and
# fails at the default length (largest position + 1), where theta is not scaled
D="$DATA/configs/extra/llama-dynamic.json" # factor 2, max_position_embeddings 4096, head_dim 128
"$PY" -c "import numpy as np; np.random.seed(2); np.save('dq.npy', np.random.randn(1, 2, 5, 128).astype(np.float32)); np.save('dk.npy', np.random.randn(1, 2, 5, 128).astype(np.float32))"
expect_ok "$POSENC" apply dq.npy dk.npy -c "$D" --seq-len 16384 --offset 3000 -o drot.npz
expect_ok "$POSENC" verify -c "$D" --q dq.npy --k dk.npy --expect-q drot.npz:q --expect-k drot.npz:k \
    --offset 3000 --seq-len 16384 --precision exact
# transformers' _compute_dynamic_ntk_parameters: base * (factor * L / max - (factor - 1)) ** (d / (d - 2))
theta=$("$PY" -c "print('%.6g' % (10000.0 * (2 * 16384 / 4096 - 1) ** (128 / 126)))")
grep -q "theta $theta used for length 16384" out.stdout || { echo "no theta $theta"; cat out.stdout; exit 1; }
set +e
"$POSENC" verify -c "$D" --q dq.npy --k dk.npy --expect-q drot.npz:q --expect-k drot.npz:k \
    --offset 3000 --precision exact > out.stdout
rc=$?
set -e
[ "$rc" -eq 1 ]
grep -q "^FAIL  expect_q" out.stdout && grep -q "theta 10000 used for length 3005" out.stdout

# commands without positional arguments refuse one the same way
for c in gen verify info; do
    usage_lines "$c" "unexpected argument 'stray'" -c tiny.json stray
done
