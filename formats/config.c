/* config.c: PLACEHOLDER so the tree links; replaced by the config reader. */
#include "posenc/config.h"
posenc_status posenc_config_load(const char *path, posenc_model **out, posenc_error *err) { (void)path; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
posenc_status posenc_config_parse(const char *t, size_t n, const char *s, posenc_model **out, posenc_error *err) { (void)t; (void)n; (void)s; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
