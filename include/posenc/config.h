/* posenc/config.h: read a config.json file into a posenc_model (formats layer). */
#ifndef POSENC_CONFIG_H
#define POSENC_CONFIG_H

#include "posenc/error.h"
#include "posenc/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read and parse path (at most 64 MiB), resolve it with posenc_model_from_json. Messages name
 * the file: "'config.json': invalid JSON near line 3". Caller frees with posenc_model_free. */
posenc_status posenc_config_load(const char *path, posenc_model **out, posenc_error *err);

/* The same for a JSON text already in memory (len bytes, need not be NUL-terminated). */
posenc_status posenc_config_parse(const char *text, size_t len, const char *source,
                                  posenc_model **out, posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif
