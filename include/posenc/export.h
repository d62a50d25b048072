/* posenc/export.h: the macros every public declaration carries. Included by posenc/error.h,
 * and so by every public header.
 *
 * POSENC_API marks a function of the library's ABI. libposenc.so is built with
 * -fvisibility=hidden, so it exports exactly the functions marked so: what a header declares
 * is what the shared library has, and nothing else (the internal pe_* functions that the
 * posenc program and the tests take from libposenc.a stay inside).
 *
 * POSENC_NODISCARD is on every function that returns a posenc_status, so a caller that drops
 * one is told at compile time (GCC and Clang: -Wunused-result, on by default). To drop one on
 * purpose, test it anyway and say why: GCC warns even through a cast to void. The two error
 * helpers posenc_seterr and posenc_error_prefix do not carry it: they cannot fail and return
 * the code they were given, for `return posenc_seterr(...)`.
 *
 * POSENC_STATIC_LINKING_ONLY: the structs over a kilobyte whose layout may change in any
 * release (posenc_rope_config, posenc_rope_params, posenc_gguf_rope, posenc_ggml_rope,
 * posenc_gguf_check, posenc_invariance_mode, posenc_invariance_result, posenc_verify_recipe,
 * posenc_diagnosis, posenc_verify_profiles_result) are defined only when the including file
 * defines it before its first posenc include, as zstd does with ZSTD_STATIC_LINKING_ONLY.
 * Without it they are incomplete types: a program holds a posenc_rope_config or
 * posenc_rope_params behind the pointer posenc_rope_config_new or posenc_rope_params_new gives
 * it, and reads the params through their accessors. With it, a program compiles the layout of
 * the headers it was built with into itself: it links libposenc.a, or the libposenc.so of
 * that very version. posenc itself (the library, the program, the tests) is built with it.
 * See posenc(3), CONVENTIONS. */
#ifndef POSENC_EXPORT_H
#define POSENC_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define POSENC_API __attribute__((visibility("default")))
#define POSENC_NODISCARD __attribute__((warn_unused_result))
#else
#define POSENC_API
#define POSENC_NODISCARD
#endif

#endif
