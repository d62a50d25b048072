/* strbuf.c: the growing string behind JSON headers, metadata and reports. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io/strbuf.h"

static int grow(pe_strbuf *b, size_t need)
{
    if (b->oom)
        return 0;
    if (b->len + need + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + need + 1)
        cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) {
        b->oom = 1;
        return 0;
    }
    b->p = q;
    b->cap = cap;
    return 1;
}

void pe_strbuf_add(pe_strbuf *b, const char *s, size_t n)
{
    if (!grow(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void pe_strbuf_puts(pe_strbuf *b, const char *s) { pe_strbuf_add(b, s, strlen(s)); }

void pe_strbuf_printf(pe_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !grow(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void pe_strbuf_json_string(pe_strbuf *b, const char *s)
{
    pe_strbuf_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = { '\\', (char)*p };
            pe_strbuf_add(b, esc, 2);
        } else if (*p < 0x20) {
            pe_strbuf_printf(b, "\\u%04x", *p);
        } else {
            pe_strbuf_add(b, (const char *)p, 1);
        }
    }
    pe_strbuf_add(b, "\"", 1);
}

void pe_strbuf_html(pe_strbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': pe_strbuf_puts(b, "&amp;"); break;
        case '<': pe_strbuf_puts(b, "&lt;"); break;
        case '>': pe_strbuf_puts(b, "&gt;"); break;
        case '"': pe_strbuf_puts(b, "&quot;"); break;
        case '\'': pe_strbuf_puts(b, "&#39;"); break;
        default: pe_strbuf_add(b, s, 1);
        }
    }
}

char *pe_strbuf_finish(pe_strbuf *b)
{
    if (b->oom) {
        free(b->p);
        b->p = NULL;
        return NULL;
    }
    if (!b->p)
        return calloc(1, 1);
    return b->p;
}
