#!/usr/bin/python3
"""llama_coverage.py LLAMA_CPP_SRC [--json]: how many of llama.cpp's RoPE architectures posenc has rules for.

Reads, from the llama.cpp source tree (tests/interop/fetch.sh src):
  - the converter's registry: every class convert_hf_to_gguf.py registers for a text model
    (conversion/*.py @ModelBase.register, loaded by conversion.load_all_models, as
    gguf_convert.py archs does), and the architecture each writes (gguf.MODEL_ARCH_NAMES);
  - llama_model_rope_type (src/llama-model.cpp, read by tests/golden/llama_arch.py): the
    architectures llama.cpp rotates (every mode but NONE);
and, from this repository:
  - lib/model/families.def: the architectures the registry maps (a row's .gguf_arch);
  - lib/model/llama_arch.def: the architectures posenc has converter rules for (.conv).

Prints one line per registered RoPE architecture the registry maps (rules or not, and the
registry rows that map to it), then the summary line
    rules / registered RoPE architectures the registry maps: N / M
and the count of registered RoPE architectures no registry row maps. With --json, one object.
Exit 0; 1 when a row of lib/model/llama_arch.def with rules names an architecture the converter
does not register (a rule nothing can exercise) or the numbers cannot be computed.
"""
import json
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..")
sys.path.insert(0, os.path.join(here, "..", "golden"))
sys.path.insert(0, here)

src = sys.argv[1]
# gguf_convert.py sets up the converter's import (a transformers stub, torch's missing dtypes)
# from sys.argv[1]; its main block does not run on import
import gguf_convert  # noqa: E402
import llama_arch  # noqa: E402  (tests/golden/llama_arch.py)
import gguf  # noqa: E402
import conversion  # noqa: E402
from conversion.base import ModelBase, ModelType  # noqa: E402


def registered_archs():
    """architecture -> sorted HF names whose registered text class writes it"""
    conversion.load_all_models()
    out = {}
    for hf, cls in ModelBase._model_classes[ModelType.TEXT].items():
        arch = gguf_convert.class_arch(hf, cls)
        if arch:
            out.setdefault(arch, set()).add(hf)
    return {a: sorted(v) for a, v in out.items()}


def registry_rows():
    """architecture -> model_types of lib/model/families.def that map to it"""
    text = open(os.path.join(root, "lib", "model", "families.def"), encoding="utf-8").read()
    out = {}
    for m in re.finditer(r'^FAMILY\("([^"]+)",(.*?)\.src = ', text, re.M | re.S):
        a = re.search(r'\.gguf_arch = "([^"]+)"', m.group(2))
        if a:
            out.setdefault(a.group(1), []).append(m.group(1))
    return out


def rule_archs():
    text = open(os.path.join(root, "lib", "model", "llama_arch.def"), encoding="utf-8").read()
    return {m.group(1) for m in re.finditer(r'^ARCH\("([^"]+)",[^\n]*\.conv = CV_\w+', text, re.M)}


def main():
    modes = llama_arch.source_table(src)           # arch -> (mode, mode with sections)
    reg = registered_archs()
    rows = registry_rows()
    rules = rule_archs()
    rope = {a for a, (mode, alt) in modes.items() if mode != "NONE" or (alt and alt != "NONE")}
    registered_rope = sorted(a for a in reg if a in rope)
    mapped = [a for a in registered_rope if a in rows]
    unmapped = [a for a in registered_rope if a not in rows]
    with_rules = [a for a in mapped if a in rules]
    orphan = sorted(a for a in rules if a not in reg)
    if "--json" in sys.argv:
        print(json.dumps({"rules": len(with_rules), "mapped": len(mapped),
                          "registered_rope": len(registered_rope),
                          "with_rules": with_rules,
                          "without_rules": [a for a in mapped if a not in rules],
                          "not_mapped": unmapped, "rules_not_registered": orphan}, indent=1))
    else:
        for a in mapped:
            print("%-14s %-5s %-8s %s" % (a, modes[a][0].lower(),
                                          "rules" if a in rules else "no rules",
                                          " ".join(rows[a])))
        print("rules / registered RoPE architectures the registry maps: %d / %d"
              % (len(with_rules), len(mapped)))
        print("registered RoPE architectures no registry row maps: %d of %d"
              % (len(unmapped), len(registered_rope)))
        if orphan:
            print("rules for architectures the converter does not register: " + " ".join(orphan))
    return 1 if orphan or not mapped else 0


if __name__ == "__main__":
    sys.exit(main())
