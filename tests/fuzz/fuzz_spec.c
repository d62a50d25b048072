/* fuzz_spec.c: bytes -> the FILE:MEMBER splitter (posenc_spec_split, formats/io/registry.c) that
 * every reader, gen's input/output check and --positions go through. The first two bytes pick
 * the sizes of the path and member buffers (0 to 255 and 0 to 1023 bytes: exact heap blocks, so
 * ASan sees a write one past the end), the rest is the spec. On success both outputs are
 * terminated inside their buffers and the split is exact: a member is what follows the last ':'
 * after a container extension (.npz, .h5/.hdf5/.hdf, .safetensors, .bin), and PATH:MEMBER
 * gives the spec back; without a member the path is the whole spec. The format name parser
 * and the extension guess run on the same text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "posenc/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_container(const char *s, size_t n)
{
    static const char *const ext[] = { ".npz", ".h5", ".hdf5", ".hdf", ".safetensors", ".bin" };
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t el = strlen(ext[i]);
        if (n > el && strncasecmp(s + n - el, ext[i], el) == 0)
            return 1;
    }
    return 0;
}

/* The reference: the last ':' that follows a container extension, or none. */
static const char *ref_split(const char *spec, size_t len)
{
    for (size_t i = len; i-- > 0;)
        if (spec[i] == ':' && is_container(spec, i))
            return spec + i;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t plen = data[0], mlen = (size_t)data[1] * 4;
    char *spec = malloc(size - 1);
    char *path = malloc(plen ? plen : 1), *member = malloc(mlen ? mlen : 1);
    if (!spec || !path || !member)
        abort();
    memcpy(spec, data + 2, size - 2);
    spec[size - 2] = '\0';
    size_t len = strlen(spec);

    posenc_error err = { 0 };
    posenc_status st = posenc_spec_split(spec, path, plen, member, mlen, &err);
    const char *colon = ref_split(spec, len);
    if (st == POSENC_OK) {
        if (!memchr(path, '\0', plen))
            __builtin_trap();
        if (colon) {
            if (!memchr(member, '\0', mlen))
                __builtin_trap();
            size_t pl = (size_t)(colon - spec);
            if (strlen(path) != pl || memcmp(path, spec, pl) != 0 ||
                strcmp(member, colon + 1) != 0)
                __builtin_trap(); /* PATH:MEMBER is not the spec */
        } else {
            if (strcmp(path, spec) != 0 || (mlen && member[0] != '\0'))
                __builtin_trap();
        }
    } else {
        /* refused only when an output does not fit its buffer */
        size_t need_p = colon ? (size_t)(colon - spec) : len;
        size_t need_m = colon ? len - (size_t)(colon - spec) - 1 : 0;
        if (st != POSENC_EINVAL || !memchr(err.msg, '\0', sizeof err.msg) ||
            (need_p < plen && (colon ? need_m < mlen : 1)))
            __builtin_trap();
    }

    /* the same text as a format name and as a path to guess from (no file system access for
     * names that cannot exist: keep the guess to short names) */
    posenc_format f;
    if (posenc_format_parse(spec, &f, &err) == POSENC_OK)
        (void)posenc_format_name(f);
    if (len < 64 && !strchr(spec, '/'))
        (void)posenc_format_name(posenc_format_guess(spec));

    free(spec);
    free(path);
    free(member);
    return 0;
}
