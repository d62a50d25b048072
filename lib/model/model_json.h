/* model_json.h: resolve a parsed config.json (internal: formats/io/config.c calls it; the public
 * entry is posenc_config_load / posenc_config_parse, which keep cJSON out of posenc's API). */
#ifndef PE_MODEL_JSON_H
#define PE_MODEL_JSON_H

#include <cjson/cJSON.h>

#include "posenc/model.h"

/* Resolve root, a parsed config.json. source names the file in messages; family (NULL: by
 * model_type) names the registry row to use. On success *out is set; caller frees with
 * posenc_model_free. */
posenc_status pe_model_from_json(const cJSON *root, const char *source, const char *family,
                                 posenc_model **out, posenc_error *err);

/* The config as llama.cpp's converter reads it: its keys with text_config's merged over them
 * (borrowed, valid until m is freed; NULL for a model not built from JSON). */
const cJSON *pe_model_hparams(const posenc_model *m);

/* The llama.cpp architecture convert_hf_to_gguf.py writes for the model's registry row
 * (lib/model/families.def .gguf_arch), or NULL when the converter has no class for it. Borrowed. */
const char *pe_model_gguf_arch(const posenc_model *m);

/* 1 when the row's .gguf_log_mul says its converter class writes yarn_log_multiplier. */
int pe_model_gguf_log_mul(const posenc_model *m);

/* 1 when the registry row named family (a model_type, not followed through .alias) has
 * F_VLLM_DEEPSEEK: vLLM sends its yarn to DeepseekScalingRotaryEmbedding. 0 for NULL or an
 * unknown name. */
int pe_family_vllm_deepseek(const char *family);

/* Add a warning line (and the same note) to m, as the reader of its file found it (a duplicate
 * key). */
posenc_status pe_model_add_warning(posenc_model *m, const char *text);

#endif
