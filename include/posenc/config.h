/* posenc/config.h: read a config.json file into a posenc_model (formats layer). */
#ifndef POSENC_CONFIG_H
#define POSENC_CONFIG_H

#include "posenc/error.h"
#include "posenc/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How to resolve a config (NULL: the defaults). */
typedef struct posenc_load_opts {
    const char *family;     /* resolve as this registry row (posenc_family_find), whatever the
                               config's model_type says; NULL: by model_type */
} posenc_load_opts;

/* Read path (at most 64 MiB; a directory: DIR/config.json), parse it and resolve it through the
 * model-family registry. Unknown rope_type, missing required keys and nonsense values are
 * POSENC_ECONFIG with a message naming the file and the key: "'config.json': invalid JSON near
 * line 3". A model_type the registry does not know resolves with the generic RoPE rules when the
 * config has explicit RoPE keys (posenc_model_warning then says so) and is POSENC_EUNSUPPORTED
 * otherwise; so is a relative scheme posenc does not generate (DeBERTa, XLNet). Caller frees
 * *out with posenc_model_free. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_config_load(const char *path, const posenc_load_opts *opts,
                                 posenc_model **out, posenc_error *err);

/* The same for a JSON text already in memory (len bytes, need not be NUL-terminated). */
POSENC_API POSENC_NODISCARD
posenc_status posenc_config_parse(const char *text, size_t len, const char *source,
                                  const posenc_load_opts *opts, posenc_model **out,
                                  posenc_error *err);

#ifdef __cplusplus
}
#endif
#endif
