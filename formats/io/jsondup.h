/* formats/io/jsondup.h: duplicate keys in a JSON object, read as Python's json (and so transformers,
 * and serde_json's maps in safetensors) reads them: the last value wins. cJSON keeps every
 * member and its look-ups return the first, so each reader of a file removes the earlier
 * members right after parsing. */
#ifndef POSENC_FORMATS_JSONDUP_H
#define POSENC_FORMATS_JSONDUP_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Remove, in every object of the tree, each member whose key a later member repeats. Returns
 * the number removed (-1 when out of memory, the tree then unchanged past that object); the
 * first duplicate's dotted path ("rope_scaling.factor") goes to first when first is not NULL. */
long pe_json_last_wins(cJSON *root, char *first, size_t cap);

#endif
