/* posenc/export.h: the macros every public declaration carries. Included by posenc/error.h,
 * and so by every public header.
 *
 * POSENC_API marks a function of the library's ABI. libposenc.so is built with
 * -fvisibility=hidden, so it exports exactly the functions marked so: what a header declares
 * is what the shared library has, and nothing else (the internal pe_* functions that the
 * posenc program and the tests take from libposenc.a stay inside). */
#ifndef POSENC_EXPORT_H
#define POSENC_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define POSENC_API __attribute__((visibility("default")))
#else
#define POSENC_API
#endif

#endif
