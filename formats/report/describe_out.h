/* formats/report/describe_out.h (internal): a description of a resolved model (lib/describe/describe.h) as
 * info's text, as JSON (info --json, verify's report) and as file metadata (gen, apply). Every
 * output takes the fields of its view in the order of lib/describe/describe.def, under their one key. */
#ifndef POSENC_FORMATS_DESCRIBE_OUT_H
#define POSENC_FORMATS_DESCRIBE_OUT_H

#include <cjson/cJSON.h>

#include "lib/describe/describe.h"
#include "posenc/io.h"
#include "formats/io/strbuf.h"

/* The shortest of %.15g/%.16g/%.17g that reads back as v, or v in fmt when fmt is set; "null"
 * when v is not finite. Returns buf. */
const char *pe_describe_num_text(double v, const char *fmt, char *buf, size_t cap);

/* Add the fields of view (PE_DV_INFO or PE_DV_REPORT) to obj, a group as an object. INFO
 * writes numbers as text in their format (info_fmt first); REPORT as cJSON numbers, which the
 * report writers read. Returns 0, or -1 when out of memory (obj keeps what was added). */
int pe_describe_json(const pe_desc *d, unsigned view, cJSON *obj);

/* info's text: one line per field with a label, "INDENT%-20sVALUE", the values folded into
 * another field's line (theta's source, the partial rotary factor, ...) on that line. */
void pe_describe_text(const pe_desc *d, pe_strbuf *b, const char *indent);

/* Hand each field of view PE_DV_META to fn: its key, its GGUF type (int64 for an integer, else
 * POSENC_META_AUTO) and its value as JSON text (borrowed for the call). A group is one JSON
 * object; an empty list is left out (GGUF cannot type it). Returns POSENC_OK, POSENC_ENOMEM, or
 * the first status fn returned. */
typedef posenc_status (*pe_describe_meta_fn)(void *ctx, const char *key, posenc_meta_type type,
                                             const char *json, posenc_error *err);
posenc_status pe_describe_meta_each(const pe_desc *d, pe_describe_meta_fn fn, void *ctx,
                                    posenc_error *err);
/* The metadata JSON text of one field (a group: its object), or NULL when f is not set or out
 * of memory. Caller frees. */
char *pe_describe_field_json(const pe_desc *d, pe_dfield f);
/* p's ggml_rope_ext arguments (posenc_rope_params_ggml) as one JSON object, the "ggml" group of
 * lib/describe/describe.def. Caller frees; NULL when out of memory. */
char *pe_describe_ggml_json(const posenc_rope_params *p);
/* pe_describe_meta_each into a writer, each key prefixed with prefix ("" for none):
 * posenc_writer_meta_typed. */
posenc_status pe_describe_meta_write(const pe_desc *d, const char *prefix, posenc_writer *w,
                                     posenc_error *err);

#endif
