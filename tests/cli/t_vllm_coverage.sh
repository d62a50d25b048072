# --precision vllm over the registry: for every row of `posenc info --models` whose encoding is
# rope, the vLLM class each layer type resolves to, or the one-line refusal naming the class posenc
# does not reproduce. The config is the committed real config of that model_type when there is one
# (tests/data/configs, its families/ and extra/), else a minimal config of the row's defaults.
# Prints the table and the count "resolving rows / RoPE rows" (a row resolves when every RoPE
# layer type does); fails when a refusal does not name a vLLM class or when a row that resolves
# today stops resolving (COVERAGE_MIN).
. "$SRC/tests/cli/lib.sh"
COVERAGE_MIN=144
export COVERAGE_MIN

"$PY" - <<'PYEOF'
import glob, json, os, subprocess

posenc = os.environ["POSENC"]
data = os.path.join(os.environ["DATA"], "configs")

def run(*args):
    r = subprocess.run([posenc] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr.strip()

rc, out, err = run("info", "--models", "--json")
assert rc == 0, err
rows = [r for r in json.loads(out) if r["encoding"] == "rope"]

real = {}
for f in sorted(glob.glob(os.path.join(data, "*.json")) + glob.glob(os.path.join(data, "families", "*.json"))
                + glob.glob(os.path.join(data, "extra", "*.json"))):
    try:
        mt = json.load(open(f)).get("model_type")
    except (ValueError, AttributeError):
        continue
    real.setdefault(mt, f)

table, resolving = [], 0
for r in rows:
    mt = r["model_type"]
    cfg, src = real.get(mt), "real"
    rc, out, err = run("info", "--config", cfg, "--json") if cfg else (1, "", "")
    # a real config of another encoding (baichuan-13b: alibi) does not test the RoPE row
    if rc != 0 or json.loads(out).get("encoding") != "rope":
        src = "minimal"
        cfg = "min-%s.json" % mt
        with open(cfg, "w") as f:
            json.dump({"model_type": mt, "hidden_size": 2048, "num_attention_heads": 16,
                       "num_key_value_heads": 16, "max_position_embeddings": 8192,
                       "num_hidden_layers": 2, "vocab_size": 1000}, f)
        rc, out, err = run("info", "--config", cfg, "--json")
    if rc != 0:
        table.append((mt, src, "-", "config: " + err))
        continue
    info = json.loads(out)
    if info.get("encoding") != "rope":  # zamba2: RoPE only when use_mem_rope is set
        table.append((mt, src, "-", "no RoPE in this config: " + "; ".join(info.get("notes", []))))
        continue
    lts = ([lt for lt, v in info["layers"].items() if "rope_type" in v] if "layers" in info
           else [None])
    ok, cls = True, []
    for lt in lts:
        a = ["info", "--config", cfg, "--precision", "vllm", "--json"]
        if lt:
            a += ["--layer-type", lt]
        rc, out, err = run(*a)
        v = json.loads(out) if rc == 0 else {}
        if lt and "layers" in v:
            v = v["layers"][lt]
        if rc == 0:
            assert "vllm" in v, (mt, lt, sorted(v))
            cls.append(((lt + ": ") if lt else "") + v["vllm"]["class"])
        else:
            ok = False
            assert rc == 3 and err.count("\n") == 0, (mt, rc, err)
            # the refusal names what is missing: a vLLM class, or the config key posenc lacks
            assert "Embedding" in err or "vllm:" in err, (mt, err)
            cls.append(((lt + ": ") if lt else "") + "REFUSED " + err.split("vllm: ", 1)[-1])
    resolving += ok
    table.append((mt, src, "yes" if ok else "no", "; ".join(cls)))

for mt, src, ok, what in table:
    print("%-28s %-8s %-4s %s" % (mt, src, ok, what))
tried = sum(1 for t in table if t[2] != "-")
print("vllm coverage: %d / %d registry RoPE rows resolve under --precision vllm (%d rows "
      "without RoPE or a config in this test)" % (resolving, len(rows), len(rows) - tried))
import sys
sys.stdout.flush()
assert resolving >= int(os.environ["COVERAGE_MIN"]), resolving
PYEOF
