/* formats/engines/weights.c: checkpoint tensors for gen's non-rotary tables (weights.h). */
#include "formats/engines/weights.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find(const posenc_container *c, const char *const *names,
                const char *const *prefixes, size_t *index)
{
    size_t n = posenc_container_count(c);
    for (const char *const *nm = names; *nm; nm++)
        for (const char *const *pf = prefixes; *pf; pf++) {
            char full[POSENC_NAME_MAX * 2];
            snprintf(full, sizeof full, "%s%s", *pf, *nm);
            for (size_t i = 0; i < n; i++)
                if (strcmp(posenc_container_array(c, i)->name, full) == 0) {
                    *index = i;
                    return 1;
                }
        }
    return 0;
}

posenc_status pe_weights_open(pe_weights *w, const char *path, const char *const *names,
                              const char *const *prefixes, posenc_error *err)
{
    memset(w, 0, sizeof *w);
    posenc_status st = posenc_container_open(path, NULL, &w->c, err);
    if (st != POSENC_OK)
        return st;
    if (!find(w->c, names, prefixes, &w->index))
        return posenc_seterr(err, POSENC_ENOTFOUND, "'%s': no tensor '%s'%s", path, names[0],
                             prefixes[1] ? " (nor with a transformer./bert. prefix); pass "
                                           "--tensor NAME"
                                         : "; pass --tensor NAME");
    const posenc_array_info *info = posenc_container_array(w->c, w->index);
    if (info->ndim != 2 || !posenc_dtype_is_float(info->dtype)) {
        char sh[128];
        posenc_shape_str(info->ndim, info->shape, sh, sizeof sh);
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': tensor '%s' is %s %s, not a 2-D float "
                             "table", path, info->name, posenc_dtype_name(info->dtype), sh);
    }
    uint64_t nbytes;
    if ((st = posenc_shape_size(2, info->shape, POSENC_DT_F32, NULL, &nbytes, err)) != POSENC_OK)
        return st;
    if (nbytes > PE_WEIGHTS_MAX_BYTES)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': tensor '%s' is too large (%" PRIu64
                             " bytes as f32)", path, info->name, nbytes);
    snprintf(w->name, sizeof w->name, "%s", info->name);
    w->rows = info->shape[0];
    w->cols = info->shape[1];
    return POSENC_OK;
}

posenc_status pe_weights_load(pe_weights *w, posenc_error *err)
{
    const posenc_array_info *info = posenc_container_array(w->c, w->index);
    size_t nelem = (size_t)w->rows * (size_t)w->cols;
    posenc_reader *r = NULL;
    void *raw = malloc(nelem ? nelem * posenc_dtype_size(info->dtype) : 1);
    free(w->data);
    w->data = malloc(nelem ? nelem * sizeof(float) : 1);
    posenc_status st = POSENC_OK;
    if (!raw || !w->data)
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    if (st == POSENC_OK)
        st = posenc_reader_open_index(w->c, w->index, &r, err);
    if (st == POSENC_OK)
        st = posenc_reader_read(r, raw, nelem, err);
    if (st == POSENC_OK)
        posenc_dtype_convert(w->data, POSENC_DT_F32, raw, info->dtype, nelem);
    posenc_reader_close(r);
    free(raw);
    return st;
}

posenc_status pe_weights_stream(pe_weights *w, posenc_error *err)
{
    w->stream.next = 0;
    w->stream.width = w->cols;
    return posenc_reader_open_index(w->c, w->index, &w->stream.r, err);
}

void pe_weights_close(pe_weights *w)
{
    if (!w)
        return;
    posenc_reader_close(w->stream.r);
    posenc_container_close(w->c);
    free(w->data);
    memset(w, 0, sizeof *w);
}

posenc_status pe_weights_count(const char *path, size_t *count, char *first, size_t len,
                               posenc_error *err)
{
    posenc_container *c = NULL;
    posenc_status st = posenc_container_open(path, NULL, &c, err);
    if (st != POSENC_OK)
        return st;
    *count = posenc_container_count(c);
    if (*count > 0 && len)
        snprintf(first, len, "%s", posenc_container_array(c, 0)->name);
    posenc_container_close(c);
    return POSENC_OK;
}
