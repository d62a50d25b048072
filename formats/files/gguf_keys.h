/* formats/files/gguf_keys.h: the one table of llama.cpp's RoPE keys in a GGUF file, read by
 * gguf_rope.c (posenc_gguf_read_rope) and written by gguf_write.c (posenc_gguf_writer_rope):
 * each key's name after "{arch}.", the GGUF type llama.cpp's loader reads it as (and gguf-py's
 * GGUFWriter writes), its posenc_gguf_rope bit and field. Internal; not installed. */
#ifndef POSENC_FORMATS_GGUF_KEYS_H
#define POSENC_FORMATS_GGUF_KEYS_H

#include <stddef.h>

enum pe_gguf_kind {
    PE_GK_U32,      /* uint32 into an int64_t field */
    PE_GK_F32,      /* float32 into a double field */
    PE_GK_STR,      /* string into scaling_type */
    PE_GK_SECTIONS, /* array of at most 4 int32 into sections / n_sections */
    PE_GK_HEADS,    /* uint32, or a per-layer array of uint32 (read: its first value; written
                       as uint32) into head_count */
    PE_GK_PATTERN,  /* uint32 into swa_period, or an array of bool or int32 into swa_layers /
                       n_swa_layers (attention.sliding_window_pattern) */
    PE_GK_BOOL      /* bool into an int64_t field, 0 or 1 */
};

typedef struct pe_gguf_key {
    const char *suffix;     /* after "{arch}." */
    enum pe_gguf_kind type;
    unsigned bit;           /* POSENC_GGUF_* of posenc_gguf_rope.has */
    size_t off;             /* offsetof the field in posenc_gguf_rope */
} pe_gguf_key;

extern const pe_gguf_key pe_gguf_rope_keys[];
extern const size_t pe_gguf_rope_nkeys;
/* {arch}.rope.scale_linear, the old name of rope.scaling.factor that llama.cpp still reads when
 * the new one is absent (src/llama-model.cpp load_hparams) */
extern const pe_gguf_key pe_gguf_scale_linear;

#endif
