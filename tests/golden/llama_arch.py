#!/usr/bin/env python3
"""llama_arch.py LLAMA_CPP_SRC [DEF]: check lib/model/llama_arch.def against llama.cpp's own source.

Reads LLM_ARCH_NAMES (src/llama-arch.cpp: enum -> architecture name) and the switch of
llama_model_rope_type (src/llama-model.cpp: enum -> LLAMA_ROPE_TYPE_*; for the cases that return
"cond ? A : B" the mode taken when the file has rope sections, and the other), and compares them
with every ARCH(...) row of DEF (default: lib/model/llama_arch.def beside this repository's tests/).
With --print it prints the rows it would expect instead. Exit 0 when all agree, 1 otherwise.
"""
import os
import re
import sys


def source_table(src):
    with open(os.path.join(src, "src", "llama-arch.cpp"), encoding="utf-8") as f:
        arch_cpp = f.read()
    body = arch_cpp[arch_cpp.index("LLM_ARCH_NAMES"):]
    body = body[:body.index("};")]
    names = dict(re.findall(r'\{\s*(LLM_ARCH_\w+)\s*,\s*"([^"]+)"\s*\}', body))
    with open(os.path.join(src, "src", "llama-model.cpp"), encoding="utf-8") as f:
        model_cpp = f.read()
    fn = model_cpp[model_cpp.index("llama_rope_type llama_model_rope_type(const llama_model * model) {"):]
    fn = fn[:fn.index("\n}\n")]
    modes = {}
    pending = []
    for line in fn.splitlines():
        line = line.split("//")[0].strip()
        m = re.match(r"case (LLM_ARCH_\w+):", line)
        if m:
            pending.append(m.group(1))
            continue
        if not line.startswith("return") or not pending:
            continue
        found = re.findall(r"LLAMA_ROPE_TYPE_(\w+)", line)
        if "?" in line and len(found) == 2:
            mode, alt = found[1], found[0]      # cond ? A : B: B normally, A with sections
        elif len(found) == 1:
            mode, alt = found[0], None
        else:
            continue
        for a in pending:
            modes[a] = (mode, alt)
        pending = []
    # DFLASH: an if returning MROPE with sections, then "dsv4 ? NORM : NEOX"; rows record NEOX
    # (the legacy DFlash backbones) with MROPE when sections are present
    if "LLM_ARCH_DFLASH" in modes:
        modes["LLM_ARCH_DFLASH"] = ("NEOX", "MROPE")
    rows = {}
    for e, name in names.items():
        if e == "LLM_ARCH_UNKNOWN" or e not in modes:
            continue
        rows[name] = modes[e]
    return rows


def def_table(path):
    rows = {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for m in re.finditer(r'^ARCH\("([^"]+)",\s*(\w+)(.*?)\)\s*$', text, re.M | re.S):
        extra = m.group(3)
        alt = re.search(r"\.mode_sections\s*=\s*(\w+)", extra)
        rows[m.group(1)] = (m.group(2), alt.group(1) if alt else None)
    return rows


def main():
    args = [a for a in sys.argv[1:] if a != "--print"]
    src = args[0]
    want = source_table(src)
    if "--print" in sys.argv:
        for name, (mode, alt) in sorted(want.items()):
            print('ARCH("%s", %s%s)' % (name, mode, ", .mode_sections = %s" % alt if alt else ""))
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    path = args[1] if len(args) > 1 else os.path.join(here, "..", "..", "lib", "model", "llama_arch.def")
    have = def_table(path)
    bad = 0
    for name in sorted(set(want) | set(have)):
        if want.get(name) != have.get(name):
            print("%s: llama.cpp %s, llama_arch.def %s" % (name, want.get(name), have.get(name)))
            bad += 1
    print("%d architectures, %d differ" % (len(want), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
