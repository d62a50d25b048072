/* fuzz_safetensors.c: bytes -> safetensors header parse -> read every tensor.
 *
 * The input is written to a temporary file (the backend reads files with fseeko), opened through
 * the public API with the format forced to safetensors, and every tensor is streamed in small
 * pieces. Any accepted file must read back without error: the header checks promise that the
 * buffer is exactly covered. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posenc/io.h"
#include "fuzzbig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_one(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/fuzz_st.%ld.safetensors", (long)getpid());
    }
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return 0;
    if (size && fwrite(data, 1, size, fp) != size) {
        fclose(fp);
        return 0;
    }
    fclose(fp);
    posenc_read_opts opts = { 0, POSENC_FMT_SAFETENSORS };
    posenc_container *c = NULL;
    posenc_error err;
    if (posenc_container_open(path, &opts, &c, &err) == POSENC_OK) {
        (void)posenc_container_meta(c);
        unsigned char buf[4096];
        for (size_t i = 0; i < posenc_container_count(c); i++) {
            posenc_reader *r = NULL;
            if (posenc_reader_open_index(c, i, &r, &err) != POSENC_OK)
                abort(); /* an indexed tensor must open */
            const posenc_array_info *info = posenc_reader_info(r);
            size_t es = posenc_dtype_size(info->dtype);
            uint64_t n = 1;
            for (int d = 0; d < info->ndim; d++)
                n *= (uint64_t)info->shape[d];
            uint64_t step = sizeof buf / es - 3;
            for (uint64_t done = 0; done < n;) {
                uint64_t k = n - done < step ? n - done : step;
                if (posenc_reader_read(r, buf, k, &err) != POSENC_OK)
                    abort(); /* the offsets were checked to cover the file */
                done += k;
            }
            posenc_reader_close(r);
        }
        posenc_container_close(c);
    } else if (err.msg[0] == '\0') {
        abort(); /* every failure carries a message */
    }
    unlink(path);
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
