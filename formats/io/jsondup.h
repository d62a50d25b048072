/* formats/io/jsondup.h: duplicate keys in a JSON object, read as Python's json (and so transformers,
 * and serde_json's maps in safetensors) reads them: the last value wins. cJSON keeps every
 * member and its look-ups return the first, so each reader of a file removes the earlier
 * members right after parsing. */
#ifndef POSENC_FORMATS_JSONDUP_H
#define POSENC_FORMATS_JSONDUP_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "posenc/error.h"

/* Remove, in every object of the tree, each member whose key a later member repeats. Returns
 * the number removed (-1 when out of memory, the tree then unchanged past that object); the
 * first duplicate's dotted path ("rope_scaling.factor") goes to first when first is not NULL. */
long pe_json_last_wins(cJSON *root, char *first, size_t cap);

/* The metadata budget (posenc-formats(5)), one for every reader: at most PE_META_MAX bytes of
 * metadata text held (a safetensors header, a raw sidecar, an NPZ or directory meta.json, a GGUF
 * file's key-value pairs rendered as JSON, a config.json), parsed into at most PE_META_TREE_MAX
 * of cJSON nodes, and an index of arrays (posenc_array_info and the backend's own entry) of at
 * most PE_META_MAX. Real files stay far below: a 262144-token GGUF tokenizer is ~10 MB of text
 * and ~70 MB parsed; a safetensors header of 100000 tensors ~6 MB. */
#define PE_META_MAX ((size_t)64 << 20)
#define PE_META_TREE_MAX (2 * PE_META_MAX)

/* The memory cJSON would take to parse text (len bytes), estimated from above without
 * allocating: each value a node, each string and key its bytes, both as glibc's malloc rounds
 * them (a 0 or false costs 80 bytes, 40 times its text). Linear in len. */
size_t pe_json_cost(const char *text, size_t len);

/* The metadata budget (backend.h): POSENC_OK when text, len bytes of metadata read from path
 * (what: "safetensors header", "sidecar", "meta.json"...), is at most PE_META_MAX bytes and
 * parses within PE_META_TREE_MAX; otherwise POSENC_EUNSUPPORTED, "'path': what ... posenc reads
 * at most that", before cJSON takes the memory. */
posenc_status pe_meta_check(const char *text, size_t len, const char *path, const char *what,
                            posenc_error *err);

/* Read the whole of fp, a metadata file opened from path (what: "sidecar", "meta.json"), within
 * the budget: a regular file of at most PE_META_MAX bytes, read, NUL-terminated and held to
 * pe_meta_check. *text (caller frees) and *len are set only on POSENC_OK. */
posenc_status pe_meta_read(FILE *fp, const char *path, const char *what, char **text,
                           size_t *len, posenc_error *err);

/* The members of the JSON object text whose keys are among keys[0..nkeys) (plain keys, compared
 * byte for byte with the text between the quotes; NULL entries skipped), each value parsed
 * alone: what a reader that needs a few keys of a large metadata object takes, in place of the
 * whole tree. Caller frees with cJSON_Delete; an empty object for NULL or non-object text; NULL
 * when out of memory or a picked value is not valid JSON. */
cJSON *pe_json_pick(const char *text, const char *const *keys, size_t nkeys);

#endif
