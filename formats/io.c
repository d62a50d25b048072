/* io.c: PLACEHOLDER so the tree links while the formats layer is written; replaced wholesale. */
#include "posenc/io.h"
#define NI(...) return posenc_seterr(err, POSENC_EUNSUPPORTED, "not built yet")
posenc_status posenc_container_open(const char *p, const posenc_read_opts *o, posenc_container **out, posenc_error *err) { (void)p; (void)o; (void)out; NI(); }
posenc_format posenc_container_format(const posenc_container *c) { (void)c; return POSENC_FMT_AUTO; }
size_t posenc_container_count(const posenc_container *c) { (void)c; return 0; }
const posenc_array_info *posenc_container_array(const posenc_container *c, size_t i) { (void)c; (void)i; return NULL; }
const char *posenc_container_meta(const posenc_container *c) { (void)c; return NULL; }
void posenc_container_close(posenc_container *c) { (void)c; }
posenc_status posenc_reader_open(const char *s, const posenc_read_opts *o, posenc_reader **out, posenc_error *err) { (void)s; (void)o; (void)out; NI(); }
posenc_status posenc_reader_open_index(posenc_container *c, size_t i, posenc_reader **out, posenc_error *err) { (void)c; (void)i; (void)out; NI(); }
const posenc_array_info *posenc_reader_info(const posenc_reader *r) { (void)r; return NULL; }
posenc_status posenc_reader_read(posenc_reader *r, void *b, uint64_t n, posenc_error *err) { (void)r; (void)b; (void)n; NI(); }
void posenc_reader_close(posenc_reader *r) { (void)r; }
posenc_status posenc_read_all(const char *s, const posenc_read_opts *o, posenc_dtype as, uint64_t m, posenc_array_info *i, void **d, posenc_error *err) { (void)s; (void)o; (void)as; (void)m; (void)i; (void)d; NI(); }
posenc_status posenc_writer_open(const char *p, const posenc_write_opts *o, posenc_writer **out, posenc_error *err) { (void)p; (void)o; (void)out; NI(); }
posenc_status posenc_writer_meta(posenc_writer *w, const char *k, const char *v, posenc_error *err) { (void)w; (void)k; (void)v; NI(); }
posenc_status posenc_writer_declare(posenc_writer *w, const posenc_array_info *a, posenc_error *err) { (void)w; (void)a; NI(); }
posenc_status posenc_writer_write(posenc_writer *w, const void *d, uint64_t n, posenc_error *err) { (void)w; (void)d; (void)n; NI(); }
posenc_status posenc_writer_commit(posenc_writer *w, posenc_error *err) { (void)w; NI(); }
void posenc_writer_abort(posenc_writer *w) { (void)w; }
