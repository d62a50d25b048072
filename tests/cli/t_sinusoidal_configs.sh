# Sinusoidal families resolved from their configs (DistilBERT sinusoidal_pos_embds, Marian,
# FSMT), their tables against numpy closed forms of each model's code, and verify's rotation check.
. "$SRC/tests/cli/lib.sh"
C="$DATA/configs/sinusoidal"
for f in distilbert-sinusoidal marian fsmt; do
    "$POSENC" info --config "$C/$f.json" --json > $f.json
    "$PY" -c "import json,sys; d=json.load(open('$f.json')); assert d['encoding']=='sinusoidal', d"
    expect_ok "$POSENC" gen --config "$C/$f.json" --seq-len 40 --dtype f64 -o $f.npz
    expect_ok "$POSENC" verify --config "$C/$f.json" -q --max-position 512
done
"$PY" - <<'PY'
import json
import numpy as np
def vaswani(n, d):   # HF create_sinusoidal_embeddings (DistilBERT): sin even, cos odd columns
    pos = np.arange(n, dtype=np.float64)[:, None]
    j = np.arange(d)[None, :]
    ang = pos / np.power(10000.0, 2 * (j // 2) / d)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang))
def marian(n, d):    # HF MarianSinusoidalPositionalEmbedding: [sin | cos], exponent 2k/d
    pos = np.arange(n, dtype=np.float64)[:, None]
    k = np.arange(d // 2)[None, :]
    ang = pos / np.power(10000.0, 2 * k / d)
    return np.concatenate([np.sin(ang), np.cos(ang)], axis=1)
def fairseq(n, d, pad):  # fairseq get_embedding: exponent k/(d/2-1), row pad zeroed
    half = d // 2
    k = np.arange(half)
    f = np.exp(k * -(np.log(10000.0) / (half - 1)))
    ang = np.arange(n, dtype=np.float64)[:, None] * f[None, :]
    e = np.concatenate([np.sin(ang), np.cos(ang)], axis=1)
    e[pad, :] = 0
    return e
cases = {"distilbert-sinusoidal": vaswani(40, 768), "marian": marian(40, 512),
         "fsmt": fairseq(42, 1024, 1)}
for name, ref in cases.items():
    pe = np.load(name + ".npz")["pe"]
    assert pe.shape == ref.shape, (name, pe.shape, ref.shape)
    err = np.abs(pe - ref).max()
    assert err < 1e-12, (name, err)
    meta = json.loads(np.load(name + ".npz")["meta.json"])
    assert meta["encoding"] == "sinusoidal", meta
print("ok")
PY
