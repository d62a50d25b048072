/* formats/io/strbuf.h: a growing NUL-terminated string for building JSON headers, metadata and
 * reports. Allocation failure is sticky: appends become no-ops and finish returns NULL. */
#ifndef POSENC_FORMATS_STRBUF_H
#define POSENC_FORMATS_STRBUF_H

#include <stddef.h>

typedef struct pe_strbuf {
    char *p;      /* NUL-terminated once anything was appended; NULL before */
    size_t len, cap;
    int oom;
} pe_strbuf;

void pe_strbuf_add(pe_strbuf *b, const char *s, size_t n);
void pe_strbuf_puts(pe_strbuf *b, const char *s);
void pe_strbuf_printf(pe_strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* s as a JSON string literal: quotes, backslashes and control characters escaped, other bytes
 * (UTF-8) as they are. */
void pe_strbuf_json_string(pe_strbuf *b, const char *s);
/* s as HTML text or attribute value: & < > " ' escaped, other bytes as they are. */
void pe_strbuf_html(pe_strbuf *b, const char *s);
/* The string (caller frees), "" when nothing was appended, or NULL after an allocation failure
 * (the buffer is freed). */
char *pe_strbuf_finish(pe_strbuf *b);

#endif
