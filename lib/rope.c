/* rope.c: PLACEHOLDER so the tree links; replaced by the RoPE math. */
#include "posenc/rope.h"
const char *posenc_precision_name(posenc_precision p) { (void)p; return ""; }
posenc_status posenc_precision_parse(const char *s, posenc_precision *out, posenc_error *err) { (void)s; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
const char *posenc_layout_name(posenc_layout l) { (void)l; return ""; }
posenc_status posenc_layout_parse(const char *s, posenc_layout *out, posenc_error *err) { (void)s; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
posenc_status posenc_rope_params_compute(const posenc_rope_config *c, int64_t n, posenc_rope_params *out, posenc_error *err) { (void)c; (void)n; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
int posenc_rope_table_width(const posenc_rope_params *p, posenc_layout l) { (void)p; (void)l; return 0; }
void posenc_rope_cossin(const posenc_rope_params *p, posenc_precision pr, int64_t pos, double *c, double *s) { (void)p; (void)pr; (void)pos; (void)c; (void)s; }
void posenc_rope_cossin3(const posenc_rope_params *p, posenc_precision pr, const int64_t pos3[3], double *c, double *s) { (void)p; (void)pr; (void)pos3; (void)c; (void)s; }
posenc_status posenc_rope_table(const posenc_rope_params *p, posenc_precision pr, posenc_layout l, const int64_t *pos, size_t n, double *c, double *s, int t, posenc_error *err) { (void)p; (void)pr; (void)l; (void)pos; (void)n; (void)c; (void)s; (void)t; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
