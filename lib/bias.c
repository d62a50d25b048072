/* bias.c: PLACEHOLDER so the tree links; replaced by the bias encodings. */
#include "posenc/bias.h"
const char *posenc_alibi_convention_name(posenc_alibi_convention c) { (void)c; return ""; }
posenc_status posenc_alibi_convention_parse(const char *s, posenc_alibi_convention *out, posenc_error *err) { (void)s; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
posenc_status posenc_alibi_slopes(posenc_alibi_kind k, int h, double b, double *s, posenc_error *err) { (void)k; (void)h; (void)b; (void)s; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
void posenc_alibi_row(double s, posenc_alibi_convention c, int64_t i, int64_t k, double *o) { (void)s; (void)c; (void)i; (void)k; (void)o; }
int posenc_t5_bucket(int64_t r, int b, int n, int m) { (void)r; (void)b; (void)n; (void)m; return 0; }
posenc_status posenc_t5_check(int b, int n, int m, posenc_error *err) { (void)b; (void)n; (void)m; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
int64_t posenc_shaw_index(int64_t i, int64_t j, int64_t k) { (void)i; (void)j; (void)k; return 0; }
const char *posenc_sinusoidal_variant_name(posenc_sinusoidal_variant v) { (void)v; return ""; }
posenc_status posenc_sinusoidal_variant_parse(const char *s, posenc_sinusoidal_variant *out, posenc_error *err) { (void)s; (void)out; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
posenc_status posenc_sinusoidal_row(posenc_sinusoidal_variant v, int d, int64_t p, int pi, double *o, posenc_error *err) { (void)v; (void)d; (void)p; (void)pi; (void)o; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
