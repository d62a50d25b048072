/* fuzz_dir.c: bytes -> the directory format (formats/files/dir.c): NAME.npy files plus meta.json.
 * The input is split at its first NUL byte: meta.json before it (nothing before it: no
 * meta.json at all), then NPY files a.npy, b.npy, c.npy, d.npy, each starting where the NPY
 * magic "\x93NUMPY" starts again (no NUL: meta.json alone, no arrays). The directory is opened
 * through the public API (assume_bf16 from the input's length): index it, check the index
 * (names sorted and unique, shapes sized, metadata a JSON object), read every array (its
 * posenc_dtypes may make '<V2' arrays bfloat16), and open the only array by the directory's
 * name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "fuzzutil.h"

/* fuzz-options: -max_len=16384 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define READ_CAP ((uint64_t)16 << 20)
#define MAX_FILES 4

static const uint8_t magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[MAX_FILES] = { "a.npy", "b.npy", "c.npy", "d.npy" };
    const char *dir = fz_path("d");
    char path[1100];
    mkdir(dir, 0700);
    for (int i = 0; i < MAX_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/meta.json", dir);
    unlink(path);

    const uint8_t *nul = memchr(data, '\0', size);
    size_t mlen = nul ? (size_t)(nul - data) : size;
    if (mlen > 0 || !nul)
        fz_write(path, data, mlen);
    int nfiles = 0;
    if (nul) {
        const uint8_t *p = nul + 1, *end = data + size;
        while (nfiles < MAX_FILES) {
            const uint8_t *next = NULL;
            if (nfiles < MAX_FILES - 1)
                for (const uint8_t *q = p + 1; q + sizeof magic <= end; q++)
                    if (memcmp(q, magic, sizeof magic) == 0) {
                        next = q;
                        break;
                    }
            char fp[1100];
            snprintf(fp, sizeof fp, "%s/%s", dir, names[nfiles++]);
            fz_write(fp, p, (size_t)((next ? next : end) - p));
            if (!next)
                break;
            p = next;
        }
    }

    posenc_read_opts o = { .assume_bf16 = (int)(size % 7 == 0), .format = POSENC_FMT_AUTO };
    posenc_container *c;
    posenc_error err = { 0 };
    if (posenc_container_open(dir, &o, &c, &err) != POSENC_OK) {
        fz_check_msg(&err);
        return 0;
    }
    if (posenc_container_format(c) != POSENC_FMT_DIR)
        __builtin_trap();
    const char *meta = posenc_container_meta(c);
    cJSON *m = NULL;
    if (meta) {
        m = cJSON_Parse(meta);
        if (!cJSON_IsObject(m))
            __builtin_trap(); /* meta.json is read only when it is a JSON object */
    }
    size_t n = posenc_container_count(c);
    if (n > (size_t)nfiles)
        __builtin_trap();
    for (size_t i = 0; i < n; i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        if (!a || posenc_shape_size(a->ndim, a->shape, a->dtype, NULL, NULL, NULL) != POSENC_OK)
            __builtin_trap();
        if (i > 0 && strcmp(posenc_container_array(c, i - 1)->name, a->name) >= 0)
            __builtin_trap(); /* sorted by name, each once */
        posenc_reader *r;
        if (posenc_reader_open_index(c, i, &r, &err) != POSENC_OK) {
            fz_check_msg(&err);
            continue;
        }
        (void)fz_drain(r, READ_CAP);
        posenc_reader_close(r);
    }
    cJSON_Delete(m);
    posenc_container_close(c);

    /* a directory holding exactly one array opens as that array */
    posenc_reader *r;
    if (posenc_reader_open(dir, &o, &r, &err) == POSENC_OK) {
        if (n != 1)
            __builtin_trap();
        (void)fz_drain(r, READ_CAP);
        posenc_reader_close(r);
    } else {
        fz_check_msg(&err);
    }
    return 0;
}
