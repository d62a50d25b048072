/* formats/files/ggufenc.h: little-endian encoding of GGUF values into a pe_strbuf, shared by the
 * GGUF writer (gguf_write.c) and its metadata encoder (gguf_meta.c). Not installed. */
#ifndef POSENC_FORMATS_GGUFENC_H
#define POSENC_FORMATS_GGUFENC_H

#include <stdint.h>
#include <string.h>

#include "formats/io/strbuf.h"

#define GW_MAX_VALUES (1u << 24)    /* what posenc's own reader accepts (gguf.c GGUF_MAX_VALUES) */
#define GW_MAX_STRING (1u << 30)    /* GGUF_MAX_STRING_LENGTH of ggml/src/gguf.cpp */

/* enum gguf_type of ggml/include/gguf.h */
enum { T_U8 = 0, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STRING, T_ARRAY, T_U64,
       T_I64, T_F64 };

static inline void put_le(pe_strbuf *b, uint64_t v, int n)
{
    char c[8];
    for (int i = 0; i < n; i++)
        c[i] = (char)(unsigned char)(v >> (8 * i));
    pe_strbuf_add(b, c, (size_t)n);
}

static inline void put_str(pe_strbuf *b, const char *s, size_t n)
{
    put_le(b, n, 8);
    pe_strbuf_add(b, s, n);
}

static inline void put_f32(pe_strbuf *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_le(b, u, 4);
}

static inline void put_f64(pe_strbuf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    put_le(b, u, 8);
}

#endif
