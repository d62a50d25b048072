/* model.c: PLACEHOLDER so the tree links; replaced by config resolution. */
#include "posenc/model.h"
posenc_status posenc_model_from_json(const struct cJSON *r, const char *s, posenc_model **out, posenc_error *err) { (void)r; (void)s; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
void posenc_model_free(posenc_model *m) { (void)m; }
posenc_encoding posenc_model_encoding(const posenc_model *m) { (void)m; return POSENC_ENC_NONE; }
const char *posenc_model_type(const posenc_model *m) { (void)m; return ""; }
int64_t posenc_model_max_positions(const posenc_model *m) { (void)m; return 0; }
size_t posenc_model_layer_type_count(const posenc_model *m) { (void)m; return 0; }
const char *posenc_model_layer_type_name(const posenc_model *m, size_t i) { (void)m; (void)i; return ""; }
posenc_status posenc_model_rope(const posenc_model *m, const char *l, posenc_rope_config *out, posenc_error *err) { (void)m; (void)l; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
const posenc_bias_config *posenc_model_bias(const posenc_model *m) { (void)m; return 0; }
size_t posenc_model_note_count(const posenc_model *m) { (void)m; return 0; }
const char *posenc_model_note(const posenc_model *m, size_t i) { (void)m; (void)i; return ""; }
const char *posenc_encoding_name(posenc_encoding e) { (void)e; return ""; }
posenc_status posenc_encoding_parse(const char *s, posenc_encoding *out, posenc_error *err) { (void)s; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
const char *posenc_rope_type_name(posenc_rope_type t) { (void)t; return ""; }
const char *posenc_style_name(posenc_style s) { (void)s; return ""; }
posenc_status posenc_style_parse(const char *s, posenc_style *out, posenc_error *err) { (void)s; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
