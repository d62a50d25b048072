/* formats/engines/weights.h (internal): the checkpoint tensors gen's non-rotary tables take (T5's
 * relative_attention_bias, Shaw's [2k+1, depth] embeddings, a learned position table): found
 * by name, checked to be a 2-D float table of at most PE_WEIGHTS_MAX_BYTES as float32, then
 * read whole as float32 or streamed row by row (pe_out_rows_read). */
#ifndef PE_WEIGHTS_H
#define PE_WEIGHTS_H

#include "formats/io/out.h"

#define PE_WEIGHTS_MAX_BYTES ((uint64_t)1 << 31)

typedef struct pe_weights {
    posenc_container *c;       /* the open checkpoint */
    size_t index;              /* the tensor in it */
    char name[POSENC_NAME_MAX];
    int64_t rows, cols;
    float *data;               /* pe_weights_load: [rows, cols] float32 */
    pe_out_rows stream;        /* pe_weights_stream: a reader over its rows */
} pe_weights;

/* Open path and find the first of names (NULL-terminated), each tried with every prefix of
 * prefixes (NULL-terminated, "" first). POSENC_ENOTFOUND names names[0] and says to pass
 * --tensor; POSENC_EFORMAT when it is not a 2-D float table, POSENC_ERANGE when too large.
 * w is zeroed first; close it with pe_weights_close whatever the result. */
posenc_status pe_weights_open(pe_weights *w, const char *path, const char *const *names,
                              const char *const *prefixes, posenc_error *err);
/* Read the whole tensor into w->data as float32. */
posenc_status pe_weights_load(pe_weights *w, posenc_error *err);
/* Open a reader on the tensor for pe_out_rows_read(&w->stream, ...), in its own dtype. */
posenc_status pe_weights_stream(pe_weights *w, posenc_error *err);
void pe_weights_close(pe_weights *w);

/* The number of tensors in path, and the name of the first one (when there is one). */
posenc_status pe_weights_count(const char *path, size_t *count, char *first, size_t len,
                               posenc_error *err);

#endif
