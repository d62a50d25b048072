/* model_json.h: resolve a parsed config.json (internal: formats/config.c calls it; the public
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

#endif
