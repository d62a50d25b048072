# POSENC_CPU: every CPU path this machine runs writes the same bytes as the portable one
# (posenc apply, f16 / bf16 / f32 dumps with random values, NaN payloads, infinities,
# subnormals, -0 and the largest finite values, in every precision, to every float dtype);
# --version names the path; an unknown name is refused, exit 2.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs"
$PY - << 'EOF_GEN'
import json, struct, numpy as np
g = np.random.default_rng(23)
shape = (1, 3, 21, 128)
n = int(np.prod(shape))
x = g.standard_normal(n).astype(np.float32) * 4
sp16 = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
                 0x7e00, 0xfe00, 0x7c01, 0x7d55, 0xfdff], dtype=np.uint16)
h = x.astype(np.float16).view(np.uint16)
sel = g.random(n) < 0.2
h[sel] = g.choice(sp16, sel.sum())
np.save("h.npy", h.view(np.float16).reshape(shape))
spb = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x7f7f, 0xff7f, 0x7f80, 0xff80,
                0x7fc0, 0xffc0, 0x7f81, 0x7fa5, 0xffbf], dtype=np.uint16)
b = (x.view(np.uint32) >> 16).astype(np.uint16)
b[sel] = g.choice(spb, sel.sum())
raw = b.tobytes()
hd = json.dumps({"x": {"dtype": "BF16", "shape": list(shape), "data_offsets": [0, len(raw)]}}).encode()
hd += b" " * ((8 - len(hd) % 8) % 8)
open("b.safetensors", "wb").write(struct.pack("<Q", len(hd)) + hd + raw)
f = x.copy()
f[sel] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.4e38, 65504.0], dtype=np.float32)[
    g.integers(0, 8, sel.sum())]
np.save("f.npy", f.reshape(shape))
EOF_GEN

expect_ok "$POSENC" --version
grep -qx 'posenc [0-9.]*' out.stdout
grep -q '^cpu path: [a-z0-9]* (this CPU runs: baseline' out.stdout
paths=$(sed -n 's/^cpu path: .*(this CPU runs: \(.*\))$/\1/p' out.stdout)
POSENC_CPU=baseline "$POSENC" --version | grep -qx 'cpu path: baseline (this CPU runs: .*)'
expect_fail 2 "posenc version: POSENC_CPU=avx9: unknown path (expected baseline, avx2, avx512 or neon)" \
    env POSENC_CPU=avx9 "$POSENC" --version
expect_fail 2 "POSENC_CPU=AVX2: unknown path" env POSENC_CPU=AVX2 "$POSENC" apply f.npy \
    --config "$C/llama-3.1-8b.json" -o never.npy
no_file never.npy

[ -n "$paths" ]
echo "paths: $paths"
n=0
for in in h.npy b.safetensors f.npy; do
    for prec in exact hf ggml; do
        for dt in f16 bf16 f32 f64; do
            o=${in%%.*}-$prec-$dt
            POSENC_CPU=baseline "$POSENC" apply "$in" --config "$C/llama-3.1-8b.json" --offset 70 \
                --precision "$prec" --dtype "$dt" -o "$o.base.npy" 2> err || { cat err; exit 1; }
            for p in $paths default; do
                [ "$p" = baseline ] && continue
                if [ "$p" = default ]; then
                    env -u POSENC_CPU "$POSENC" apply "$in" --config "$C/llama-3.1-8b.json" \
                        --offset 70 --precision "$prec" --dtype "$dt" -o "$o.$p.npy" 2> err
                else
                    POSENC_CPU=$p "$POSENC" apply "$in" --config "$C/llama-3.1-8b.json" \
                        --offset 70 --precision "$prec" --dtype "$dt" -o "$o.$p.npy" 2> err
                fi || { cat err; exit 1; }
                cmp "$o.base.npy" "$o.$p.npy" || { echo "path $p differs: $in $prec -> $dt"; exit 1; }
                n=$((n + 1))
            done
        done
    done
done
echo "$n outputs identical to the baseline path's"
# gptj pairs (the interleaved kernels), hf and vllm on an f16 and a bf16 dump
for in in h.npy b.safetensors; do
    for prec in hf vllm; do
        POSENC_CPU=baseline "$POSENC" apply "$in" --config "$C/llama-3.1-8b.json" --style gptj \
            --precision $prec -o gj.base.npy
        "$POSENC" apply "$in" --config "$C/llama-3.1-8b.json" --style gptj --precision $prec \
            -o gj.default.npy
        cmp gj.base.npy gj.default.npy
    done
done
