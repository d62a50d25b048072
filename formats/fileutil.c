/* fileutil.c: PLACEHOLDER so the tree links; replaced by the formats layer. */
#include "backend.h"
posenc_status posenc_tmp_create(const char *f, char **t, FILE **fp, posenc_error *err) { (void)f; (void)t; (void)fp; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
posenc_status posenc_tmp_commit(FILE *fp, const char *t, const char *f, posenc_error *err) { (void)fp; (void)t; (void)f; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
void posenc_tmp_discard(FILE *fp, const char *t) { (void)fp; (void)t; }
char *posenc_writer_meta_json(const posenc_writer *w) { (void)w; return 0; }
posenc_status posenc_read_exact(FILE *fp, void *b, size_t n, const char *p, const char *w, posenc_error *err) { (void)fp; (void)b; (void)n; (void)p; (void)w; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
posenc_status posenc_write_exact(FILE *fp, const void *b, size_t n, const char *p, posenc_error *err) { (void)fp; (void)b; (void)n; (void)p; return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet"); }
