/* fuzz_gguf.c: bytes -> GGUF header parse -> metadata and every tensor.
 *
 * The input is written to a file in the scratch directory (the backend reads with fseeko) and
 * opened with the format forced to GGUF (and, when it starts with the magic, once more by
 * sniffing, which must then pick GGUF). For an accepted file: the
 * metadata and its types must be JSON objects naming the same keys; every tensor the reader
 * calls readable must open and read back in full (its offset and size were checked against the
 * file), and every other one must be refused with a message. */
/* fuzz-options: -max_len=4096 */
#include <cjson/cJSON.h>

#include "fuzzbig.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_meta(const posenc_container *c)
{
    const char *mt = posenc_container_meta(c), *ty = posenc_container_meta_types(c);
    if (!mt || !ty)
        __builtin_trap(); /* a GGUF file always has both (maybe empty) */
    cJSON *m = cJSON_Parse(mt), *t = cJSON_Parse(ty);
    if (!cJSON_IsObject(m) || !cJSON_IsObject(t))
        __builtin_trap(); /* the reader wrote invalid JSON */
    const cJSON *a = m->child, *b = t->child;
    for (; a && b; a = a->next, b = b->next)
        if (strcmp(a->string, b->string) != 0 || !cJSON_IsString(b))
            __builtin_trap();
    if (a || b)
        __builtin_trap();
    cJSON_Delete(m);
    cJSON_Delete(t);
}

static int run_one(const uint8_t *data, size_t size)
{
    const char *path = fz_path("in.gguf");
    fz_write(path, data, size);
    int passes = size >= 4 && memcmp(data, "GGUF", 4) == 0 ? 2 : 1;
    for (int pass = 0; pass < passes; pass++) {
        posenc_read_opts opts = { 0, pass ? POSENC_FMT_AUTO : POSENC_FMT_GGUF };
        posenc_container *c = NULL;
        posenc_error err = { 0 };
        if (posenc_container_open(path, &opts, &c, &err) != POSENC_OK) {
            fz_check_msg(&err);
            continue;
        }
        if (posenc_container_format(c) != POSENC_FMT_GGUF)
            __builtin_trap();
        check_meta(c);
        for (size_t i = 0; i < posenc_container_count(c); i++) {
            uint64_t nbytes = 0;
            int readable = -1;
            if (!posenc_container_array_type(c, i, &nbytes, &readable) || nbytes > size)
                __builtin_trap(); /* a tensor larger than the file was accepted */
            posenc_reader *r = NULL;
            if (posenc_reader_open_index(c, i, &r, &err) != POSENC_OK) {
                if (readable)
                    __builtin_trap(); /* a readable tensor must open */
                fz_check_msg(&err);
                continue;
            }
            if (!readable || fz_drain(r, UINT64_MAX) != 0)
                __builtin_trap(); /* the offsets were checked to lie inside the file */
            posenc_reader_close(r);
        }
        posenc_container_close(c);
    }
    return 0;
}

/* a "\xffBIG" seed expands to an input that reaches the metadata budget (fuzzbig.h) */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *owned;
    fz_big_expand(&data, &size, &owned);
    int rc = run_one(data, size);
    free(owned);
    return rc;
}
