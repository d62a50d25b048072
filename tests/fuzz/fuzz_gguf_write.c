/* fuzz_gguf_write.c: bytes -> a GGUF write (one typed metadata value, one array, optionally
 * llama.cpp's keys) -> posenc's GGUF reader.
 *
 * Input: byte 0 the posenc_meta_type (mod 13); byte 1 flags (bit 0: attach a posenc_gguf_rope;
 * bits 1-3: the dtype, 7 = u8; bits 4-6: ndim 0..7); bytes 2-9 the dimensions (0..7 each); with
 * bit 0, a 40-byte rope block (arch[8], has u32, freq_base f64, context_length i64, n_rope_freqs,
 * n_factors_long, n_sections, scaling_type[9]); the rest is the metadata value's JSON text.
 * Every refusal must be one message and leave no file; an accepted file must open with posenc's
 * reader and hold the array's bytes, the rope tensors' values, general.architecture and the key
 * posenc.k (absent only for an auto null). */
/* fuzz-options: -max_len=2048 */
#include <cjson/cJSON.h>

#include "fuzzutil.h"
#include "posenc/llamacpp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const posenc_dtype dtypes[8] = {
    POSENC_DT_F32, POSENC_DT_F16, POSENC_DT_BF16, POSENC_DT_F64,
    POSENC_DT_I32, POSENC_DT_I64, POSENC_DT_F32, POSENC_DT_U8,
};

static void rope_from(const uint8_t *b, posenc_gguf_rope *g)
{
    memset(g, 0, sizeof *g);
    memcpy(g->arch, b, 8);
    memcpy(&g->has, b + 8, 4);
    memcpy(&g->freq_base, b + 12, 8);
    memcpy(&g->context_length, b + 20, 8);
    g->freq_base_swa = g->freq_base / 3;
    g->scaling_factor = g->yarn_ext_factor = g->attn_factor = g->freq_base * 0.5;
    g->yarn_attn_factor = g->yarn_beta_fast = g->yarn_beta_slow = g->yarn_log_multiplier = 1.5;
    g->dimension_count = g->key_length = g->key_length_mla = g->context_length >> 3;
    g->original_context_length = g->head_count = g->embedding_length = g->context_length / 7;
    g->n_rope_freqs = b[28] * 3;             /* past POSENC_MAX_FREQ when b[28] > 170 */
    g->n_factors_long = b[29];
    g->n_factors_short = b[29] / 2;
    g->n_sections = (int8_t)b[30];
    for (int i = 0; i < 4; i++)
        g->sections[i] = (int32_t)(b[i] * 0x01010101u);
    memcpy(g->scaling_type, b + 31, 9);
    for (int i = 0; i < POSENC_MAX_FREQ; i++) {
        g->rope_freqs[i] = (float)i / 3.0f;
        g->factors_long[i] = 1.0f + (float)i;
        g->factors_short[i] = -(float)i;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10)
        return 0;
    posenc_meta_type mt = (posenc_meta_type)(data[0] % 13);
    int with_rope = data[1] & 1;
    posenc_array_info a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "t");
    a.dtype = dtypes[(data[1] >> 1) & 7];
    a.ndim = (data[1] >> 4) & 7;
    uint64_t nelem = 1;
    for (int d = 0; d < a.ndim; d++) {
        a.shape[d] = data[2 + d] & 7;
        nelem *= (uint64_t)a.shape[d];
    }
    size_t off = 10;
    posenc_gguf_rope g;
    memset(&g, 0, sizeof g);
    if (with_rope) {
        if (size < off + 40)
            return 0;
        rope_from(data + off, &g);
        off += 40;
    }
    char *text = malloc(size - off + 1);
    memcpy(text, data + off, size - off);
    text[size - off] = '\0';

    const char *path = fz_path("w.gguf");
    unlink(path);
    posenc_write_opts o = { .format = POSENC_FMT_GGUF };
    posenc_writer *w = NULL;
    posenc_error err = { 0 };
    if (posenc_writer_open(path, &o, &w, &err) != POSENC_OK)
        __builtin_trap();
    int have_meta = posenc_writer_meta_typed(w, "k", mt, text, &err) == POSENC_OK;
    if (!have_meta)
        fz_check_msg(&err);
    int have_rope = 0;
    if (with_rope) {
        have_rope = posenc_gguf_writer_rope(w, &g, &err) == POSENC_OK;
        if (!have_rope)
            fz_check_msg(&err);
    }
    if (posenc_writer_declare(w, &a, &err) != POSENC_OK)
        __builtin_trap(); /* at most 7 dimensions of at most 7 */
    size_t es = posenc_dtype_size(a.dtype);
    unsigned char *buf = malloc(nelem * es + 1);
    for (uint64_t i = 0; i < nelem * es; i++)
        buf[i] = (unsigned char)(i * 37 + size);
    posenc_status st = nelem ? posenc_writer_write(w, buf, nelem, &err) : POSENC_OK;
    if (st == POSENC_OK)
        st = posenc_writer_commit(w, &err);
    else
        posenc_writer_abort(w);
    if (st != POSENC_OK) {
        fz_check_msg(&err);
        if (access(path, F_OK) == 0)
            __builtin_trap(); /* a refused write left a file */
        /* refused only for what GGUF cannot hold */
        if (a.dtype != POSENC_DT_U8 && a.ndim <= 4)
            __builtin_trap();
        free(buf);
        free(text);
        return 0;
    }
    if (a.dtype == POSENC_DT_U8 || a.ndim > 4)
        __builtin_trap(); /* written what ggml cannot read */

    posenc_container *c = NULL;
    posenc_read_opts ro = { 0, POSENC_FMT_AUTO };
    if (posenc_container_open(path, &ro, &c, &err) != POSENC_OK)
        __builtin_trap(); /* posenc cannot read what it wrote */
    size_t want_n = 1;
    if (have_rope)
        want_n += (g.n_rope_freqs > 0) + (g.n_factors_long > 0) + (g.n_factors_short > 0);
    if (posenc_container_format(c) != POSENC_FMT_GGUF || posenc_container_count(c) != want_n)
        __builtin_trap();
    const posenc_array_info *ri = posenc_container_array(c, 0);
    if (strcmp(ri->name, "t") != 0 || ri->dtype != a.dtype || ri->ndim != a.ndim ||
        memcmp(ri->shape, a.shape, sizeof a.shape) != 0)
        __builtin_trap();
    for (size_t i = 0; i < want_n; i++) {
        posenc_reader *r = NULL;
        if (posenc_reader_open_index(c, i, &r, &err) != POSENC_OK)
            __builtin_trap();
        const posenc_array_info *info = posenc_reader_info(r);
        uint64_t n = 1;
        for (int d = 0; d < info->ndim; d++)
            n *= (uint64_t)info->shape[d];
        unsigned char *back = malloc(n * posenc_dtype_size(info->dtype) + 1);
        if (n && posenc_reader_read(r, back, n, &err) != POSENC_OK)
            __builtin_trap();
        const void *want = buf;
        if (i > 0) {
            const char *nm = info->name;
            want = strcmp(nm, "rope_freqs.weight") == 0       ? (const void *)g.rope_freqs
                   : strcmp(nm, "rope_factors_long.weight") == 0 ? (const void *)g.factors_long
                                                                 : (const void *)g.factors_short;
        }
        if (n && memcmp(back, want, n * posenc_dtype_size(info->dtype)) != 0)
            __builtin_trap(); /* the data came back different */
        free(back);
        posenc_reader_close(r);
    }
    posenc_reader *r0 = NULL; /* and once more in chunks: no read past the end */
    if (posenc_reader_open_index(c, 0, &r0, &err) != POSENC_OK || fz_drain(r0, UINT64_MAX) != 0)
        __builtin_trap();
    posenc_reader_close(r0);
    (void)fz_write;
    cJSON *m = cJSON_Parse(posenc_container_meta(c));
    if (!cJSON_IsObject(m))
        __builtin_trap();
    cJSON *v = cJSON_Parse(text);
    int is_null = v && cJSON_IsNull(v);
    cJSON_Delete(v);
    int has_k = cJSON_GetObjectItemCaseSensitive(m, "posenc.k") != NULL;
    if (have_meta && has_k == (mt == POSENC_META_AUTO && is_null))
        __builtin_trap(); /* the key is missing, or a null was written */
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(m, "general.architecture");
    if (have_rope != (arch != NULL) ||
        (arch && (!cJSON_IsString(arch) || strcmp(arch->valuestring, g.arch) != 0)))
        __builtin_trap();
    cJSON_Delete(m);
    posenc_container_close(c);
    free(buf);
    free(text);
    return 0;
}
