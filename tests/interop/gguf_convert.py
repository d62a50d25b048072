#!/usr/bin/python3
"""Drive llama.cpp's own converter (convert_hf_to_gguf.py's model classes) on a config.json.

Usage:
  gguf_convert.py LLAMA_CPP_SRC convert CONFIG OUT.gguf [MISTAKE]
      Instantiate the class convert_hf_to_gguf.py picks for CONFIG's architectures[0]
      (conversion.get_model_class) over a directory holding only that config (no weights), run
      its set_gguf_parameters() and generate_extra_tensors() (the RoPE keys and the rope_freqs /
      rope_factors_* tensors), and write the file with its GGUFWriter. MISTAKE then changes
      exactly one thing before the file is written:
        freq_base=V        {arch}.rope.freq_base set to V
        drop=TENSOR        the tensor left out (rope_freqs.weight)
        set=KEY=V          {arch}.KEY set to float32 V (rope.scaling.yarn_log_multiplier=1)
        setu=KEY=V         {arch}.KEY set to uint32 V (rope.scaling.original_context_length)
        seta=KEY=V,V,...   {arch}.KEY set to the int32 array V,V,... (rope.dimension_sections)
        unset=KEY          {arch}.KEY left out
        arch=NAME          written as architecture NAME: general.architecture and every
                           {arch}.* key renamed (what converting with the wrong class does)
        swap=A,B           the data of tensors A and B swapped
  gguf_convert.py LLAMA_CPP_SRC batch LIST
      convert for each line "CONFIG OUT.gguf [MISTAKE]" of LIST, in one process
  gguf_convert.py LLAMA_CPP_SRC archs FAMILIES_DEF
      Check every .gguf_arch / .gguf_hf pair of lib/model/families.def against the converter's
      @ModelBase.register table: the class registered for .gguf_hf writes .gguf_arch.

MiniMaxText01Model's suppress_tokens (from the tokenizer and the embedding weights, neither
of which a config directory has) is left out; it is no RoPE key.
The converter imports transformers only for AutoConfig, whose failure it handles by reading
config.json itself (conversion/base.py ModelBase.load_hparams); a stub module that fails is
installed so the test needs no transformers. Debian's torch 1.13 lacks the float8 dtypes that
conversion/base.py names in a table; placeholders are added for them (no tensor here uses them).
"""
import json
import os
import re
import shutil
import sys
import tempfile
import types
from pathlib import Path

src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "gguf-py"))
sys.path.insert(0, src)

stub = types.ModuleType("transformers")


class AutoConfig:
    @staticmethod
    def from_pretrained(*a, **k):
        raise OSError("transformers not installed (test stub): read config.json")


stub.AutoConfig = AutoConfig
sys.modules.setdefault("transformers", stub)

import logging  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

for _n in ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "uint16", "uint32", "uint64"):
    if not hasattr(torch, _n):
        setattr(torch, _n, type("missing_dtype_" + _n, (), {})())

logging.disable(logging.WARNING)
import gguf  # noqa: E402
import conversion  # noqa: E402
from conversion.base import ModelBase, ModelType  # noqa: E402


def plant(mistake, kv, tensors, arch):
    """Change the one thing MISTAKE names (the usage above) in a converter's writer: kv its
    key/values, tensors a dict by tensor name, arch its architecture. tests/interop/llama_tiny.py
    plants its mistakes with this too."""
    what, _, val = mistake.partition("=")
    if what == "freq_base":
        kv[f"{arch}.rope.freq_base"] = gguf.GGUFValue(float(val), gguf.GGUFValueType.FLOAT32)
    elif what == "drop":
        del tensors[val]
    elif what == "set":
        key, _, v = val.partition("=")
        kv[f"{arch}.{key}"] = gguf.GGUFValue(float(v), gguf.GGUFValueType.FLOAT32)
    elif what == "setu":
        key, _, v = val.partition("=")
        kv[f"{arch}.{key}"] = gguf.GGUFValue(int(v), gguf.GGUFValueType.UINT32)
    elif what == "seta":
        key, _, v = val.partition("=")
        kv[f"{arch}.{key}"] = gguf.GGUFValue([int(x) for x in v.split(",")],
                                             gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)
    elif what == "unset":
        del kv[f"{arch}.{val}"]
    elif what == "arch":
        renamed = {}
        for k, v in kv.items():
            if k == "general.architecture":
                v = gguf.GGUFValue(val, gguf.GGUFValueType.STRING)
            elif k.startswith(arch + "."):
                k = val + k[len(arch):]
            renamed[k] = v
        kv.clear()
        kv.update(renamed)
    elif what == "swap":
        a, b = val.split(",")
        tensors[a], tensors[b] = tensors[b], tensors[a]
    else:
        raise SystemExit(f"unknown mistake {mistake!r}")


def convert(config, out, mistake=None):
    with open(config, encoding="utf-8") as f:
        hp = json.load(f)
    arch_name = hp["architectures"][0]
    cls = conversion.get_model_class(arch_name)
    tmp = Path(tempfile.mkdtemp(prefix="gguf-convert-"))
    try:
        shutil.copy(config, tmp / "config.json")
        model = cls(tmp, gguf.LlamaFileType.ALL_F32, Path(out), eager=True)
        # a wrapper class (conversion/mistral3.py Mistral3Model) delegates write() to .impl
        model = getattr(model, "impl", model)
        if hasattr(model, "_get_suppress_tokens"):
            # conversion/minimax.py MiniMaxText01Model reads the tokenizer and the embedding
            # weights for its suppress_tokens key (not RoPE); neither is here
            model._get_suppress_tokens = lambda: None
        model.set_gguf_parameters()
        tensors = {}
        for name, data in model.generate_extra_tensors():
            tensors[name] = data.numpy() if hasattr(data, "numpy") else np.asarray(data)
        w = model.gguf_writer
        kv = w.kv_data[0]
        arch = w.arch
        if mistake:
            plant(mistake, kv, tensors, arch)
        for name, data in tensors.items():
            w.add_tensor(name, data)
        w.write_header_to_file(path=Path(out))
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# Classes whose __init__ replaces the class's model_arch for every config, so the class
# attribute is not what the file says: HF name -> (the architecture it writes, the source line
# that proves it, checked below so the table cannot go stale)
INIT_ARCH = {
    # conversion/bert.py NomicBertModel.__init__: NOMIC_BERT, or NOMIC_BERT_MOE with
    # moe_every_n_layers (a config posenc's nomic_bert row does not describe)
    "NomicBertModel": ("nomic-bert",
                       "MODEL_ARCH.NOMIC_BERT_MOE if self.is_moe else gguf.MODEL_ARCH.NOMIC_BERT"),
}


def class_arch(hf, cls):
    """the general.architecture the converter class writes for a config of hf"""
    if hf in INIT_ARCH:
        import inspect
        arch, line = INIT_ARCH[hf]
        if line not in inspect.getsource(cls.__init__):
            raise SystemExit(f"{hf}.__init__ no longer sets {line}: INIT_ARCH is stale")
        return arch
    return gguf.MODEL_ARCH_NAMES.get(getattr(cls, "model_arch", None))


def archs(def_path):
    conversion.load_all_models()
    table = ModelBase._model_classes[ModelType.TEXT]
    text = open(def_path, encoding="utf-8").read()
    bad = n = 0
    for m in re.finditer(r'^FAMILY\("([^"]+)",(.*?)\.src = ', text, re.M | re.S):
        row, body = m.group(1), m.group(2)
        a = re.search(r'\.gguf_arch = "([^"]+)"', body)
        h = re.search(r'\.gguf_hf = "([^"]+)"', body)
        if not a and not h:
            continue
        n += 1
        if not a or not h:
            print(f"{row}: .gguf_arch and .gguf_hf go together")
            bad += 1
            continue
        cls = table.get(h.group(1))
        got = class_arch(h.group(1), cls) if cls else None
        if got != a.group(1):
            print(f"{row}: {h.group(1)} converts as {got}, families.def says {a.group(1)}")
            bad += 1
    print(f"{n} rows with a gguf_arch, {bad} wrong")
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    if sys.argv[2] == "convert":
        convert(sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    elif sys.argv[2] == "batch":
        for line in open(sys.argv[3], encoding="utf-8"):
            if line.strip():
                convert(*line.split())
    elif sys.argv[2] == "archs":
        sys.exit(archs(sys.argv[3]))
    else:
        raise SystemExit("usage: gguf_convert.py SRC convert|archs ...")
