/* fuzz_raw.c: bytes -> the raw format (formats/files/raw.c): OUT.bin described by the JSON sidecar
 * OUT.json. The input is split at its first NUL byte: the sidecar before it, the .bin after it
 * (no NUL: all sidecar, an empty .bin). Both are written to a scratch directory and opened
 * through the public API, by the .bin and by the .json name in turn: index the arrays, check
 * what the index promises (sized shapes, names unique and short, metadata a JSON object), read
 * every array, and read one by its FILE:MEMBER name with posenc_read_all. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzzutil.h"

/* fuzz-options: -max_len=16384 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define READ_CAP ((uint64_t)16 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t jlen = nul ? (size_t)(nul - data) : size;
    const char *bin = fz_path("x.bin"), *json = fz_path("x.json");
    fz_write(json, data, jlen);
    fz_write(bin, nul ? nul + 1 : data, nul ? size - jlen - 1 : 0);

    posenc_read_opts o = { .assume_bf16 = 0, .format = POSENC_FMT_AUTO };
    posenc_container *c;
    posenc_error err = { 0 };
    if (posenc_container_open(size & 1 ? json : bin, &o, &c, &err) != POSENC_OK) {
        fz_check_msg(&err);
        return 0;
    }
    const char *meta = posenc_container_meta(c);
    if (meta) {
        cJSON *m = cJSON_Parse(meta);
        if (!cJSON_IsObject(m))
            __builtin_trap(); /* metadata is handed on as a JSON object text */
        cJSON_Delete(m);
    }
    size_t n = posenc_container_count(c);
    for (size_t i = 0; i < n; i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        uint64_t nb;
        if (!a || !memchr(a->name, '\0', sizeof a->name) || (unsigned)a->dtype >= POSENC_DT_COUNT ||
            a->ndim < 0 || a->ndim > POSENC_MAX_DIMS ||
            posenc_shape_size(a->ndim, a->shape, a->dtype, NULL, &nb, NULL) != POSENC_OK)
            __builtin_trap();
        for (size_t k = 0; k < i; k++)
            if (strcmp(posenc_container_array(c, k)->name, a->name) == 0)
                __builtin_trap(); /* duplicate names are refused */
        posenc_reader *r;
        if (posenc_reader_open_index(c, i, &r, &err) != POSENC_OK) {
            fz_check_msg(&err);
            continue;
        }
        /* the index checked every array against the .bin's size: each reads in full */
        if (fz_drain(r, READ_CAP) != 0 && nb <= READ_CAP)
            __builtin_trap();
        posenc_reader_close(r);
    }
    if (n > 0) {
        const posenc_array_info *a = posenc_container_array(c, size % n);
        char spec[1400];
        snprintf(spec, sizeof spec, "%s:%s", bin, a->name);
        posenc_array_info info;
        void *all = NULL;
        if (posenc_read_all(spec, NULL, POSENC_DT_F64, (uint64_t)1 << 20, &info, &all, &err) ==
            POSENC_OK) {
            if (strcmp(info.name, a->name) != 0 && strchr(a->name, ':') == NULL)
                __builtin_trap();
            free(all);
        } else {
            fz_check_msg(&err);
        }
    }
    posenc_container_close(c);
    return 0;
}
