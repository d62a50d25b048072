/* gguf_keys.c: the table of formats/files/gguf_keys.h. Key names from gguf-py/gguf/constants.py
 * (Keys.LLM, Keys.Attention, Keys.Rope) and src/llama-arch.cpp LLM_KV_NAMES; types from
 * gguf-py/gguf/gguf_writer.py (add_context_length, add_embedding_length, add_head_count,
 * add_key_length, add_key_length_mla, add_rope_dimension_count: uint32; add_rope_freq_base,
 * add_rope_freq_base_swa, add_rope_scaling_*: float32, but add_rope_scaling_finetuned: bool;
 * add_rope_scaling_type: string;
 * add_rope_dimension_sections: add_array of ints, int32; add_sliding_window_pattern: uint32, or
 * an array of Python bools (bool) or ints (int32)) and the loader's get_key /
 * get_key_or_arr in src/llama-model-loader.cpp, all in ggml-org/llama.cpp. */
#include "formats/files/gguf_keys.h"
#include "posenc/llamacpp.h"

#define OFF(f) offsetof(posenc_gguf_rope, f)
const pe_gguf_key pe_gguf_rope_keys[] = {
    { "rope.freq_base", PE_GK_F32, POSENC_GGUF_FREQ_BASE, OFF(freq_base) },
    { "rope.freq_base_swa", PE_GK_F32, POSENC_GGUF_FREQ_BASE_SWA, OFF(freq_base_swa) },
    { "rope.dimension_count", PE_GK_U32, POSENC_GGUF_DIMENSION_COUNT, OFF(dimension_count) },
    { "rope.dimension_sections", PE_GK_SECTIONS, POSENC_GGUF_DIMENSION_SECTIONS, 0 },
    { "rope.scaling.type", PE_GK_STR, POSENC_GGUF_SCALING_TYPE, OFF(scaling_type) },
    { "rope.scaling.factor", PE_GK_F32, POSENC_GGUF_SCALING_FACTOR, OFF(scaling_factor) },
    { "rope.scaling.original_context_length", PE_GK_U32, POSENC_GGUF_ORIG_CTX,
      OFF(original_context_length) },
    { "rope.scaling.yarn_ext_factor", PE_GK_F32, POSENC_GGUF_YARN_EXT_FACTOR,
      OFF(yarn_ext_factor) },
    { "rope.scaling.yarn_attn_factor", PE_GK_F32, POSENC_GGUF_YARN_ATTN_FACTOR,
      OFF(yarn_attn_factor) },
    { "rope.scaling.yarn_beta_fast", PE_GK_F32, POSENC_GGUF_YARN_BETA_FAST, OFF(yarn_beta_fast) },
    { "rope.scaling.yarn_beta_slow", PE_GK_F32, POSENC_GGUF_YARN_BETA_SLOW, OFF(yarn_beta_slow) },
    { "rope.scaling.yarn_log_multiplier", PE_GK_F32, POSENC_GGUF_YARN_LOG_MUL,
      OFF(yarn_log_multiplier) },
    { "rope.scaling.attn_factor", PE_GK_F32, POSENC_GGUF_ATTN_FACTOR, OFF(attn_factor) },
    { "rope.scaling.alpha", PE_GK_F32, POSENC_GGUF_SCALING_ALPHA, OFF(scaling_alpha) },
    { "rope.scaling.finetuned", PE_GK_BOOL, POSENC_GGUF_ROPE_FINETUNED, OFF(rope_finetuned) },
    { "context_length", PE_GK_U32, POSENC_GGUF_CONTEXT_LENGTH, OFF(context_length) },
    { "attention.key_length", PE_GK_U32, POSENC_GGUF_KEY_LENGTH, OFF(key_length) },
    { "attention.key_length_mla", PE_GK_U32, POSENC_GGUF_KEY_LENGTH_MLA, OFF(key_length_mla) },
    { "attention.sliding_window", PE_GK_U32, POSENC_GGUF_SLIDING_WINDOW, OFF(sliding_window) },
    { "attention.sliding_window_pattern", PE_GK_PATTERN, POSENC_GGUF_SWA_PATTERN, 0 },
    { "block_count", PE_GK_U32, POSENC_GGUF_BLOCK_COUNT, OFF(block_count) },
    { "leading_dense_block_count", PE_GK_U32, POSENC_GGUF_DENSE_LEAD, OFF(dense_lead) },
    { "attention.head_count", PE_GK_HEADS, POSENC_GGUF_HEAD_COUNT, OFF(head_count) },
    { "embedding_length", PE_GK_U32, POSENC_GGUF_EMBEDDING_LENGTH, OFF(embedding_length) },
};
const size_t pe_gguf_rope_nkeys = sizeof pe_gguf_rope_keys / sizeof pe_gguf_rope_keys[0];

const pe_gguf_key pe_gguf_scale_linear = { "rope.scale_linear", PE_GK_F32,
                                           POSENC_GGUF_SCALE_LINEAR, OFF(scaling_factor) };
#undef OFF
