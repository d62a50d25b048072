/* formats/files/gguf_rope.h: a GGUF file's RoPE as a JSON description (internal; cmd/info.c prints
 * it as JSON or text). */
#ifndef POSENC_FORMATS_GGUF_ROPE_H
#define POSENC_FORMATS_GGUF_ROPE_H

#include <cJSON.h>

#include "posenc/llamacpp.h"

/* The keys of g (null when absent) and what llama.cpp derives from them at context n_ctx (0:
 * the file's context_length): rope_mode, freq_scale, ext_factor, attn_factor, ..., inv_freq in
 * double, for the layers of layer_type (NULL: the global ones; posenc_ggml_rope_from_gguf_layer).
 * When llama.cpp could not load the file (an unknown architecture, a missing required
 * key) the derived values are null and "warning" says why in one line. Caller frees with
 * cJSON_Delete; NULL when out of memory. */
cJSON *pe_gguf_rope_json(const posenc_gguf_rope *g, int64_t n_ctx, const char *layer_type);

#endif
