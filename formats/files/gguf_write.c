/* gguf_write.c: writing llama.cpp's GGUF v3 files (gguf.c reads them).
 *
 * The layout is the one gguf.c describes (ggml-org/llama.cpp ggml/src/gguf.cpp gguf_write_to_buf,
 * gguf-py/gguf/gguf_writer.py GGUFWriter): "GGUF", uint32 3, uint64 tensor count, uint64
 * key-value count, the key-value pairs, the tensor infos, zeros up to general.alignment (32,
 * written as a key), then each tensor's data padded with zeros to the alignment. Every size is
 * planned before the header is written, so the data streams straight after it.
 *
 * Keys: general.architecture and the {arch}.* keys of a posenc_gguf_rope attached with
 * posenc_gguf_writer_rope, general.alignment, then the writer's metadata as posenc.KEY with the
 * type posenc_writer_meta_typed gave it (POSENC_META_AUTO: from the JSON value). Tensors: the
 * declared arrays (ggml's ne is the C-order shape reversed), then the rope factor tensors. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io/backend.h"
#include "posenc/llamacpp.h"
#include "formats/files/ggufenc.h"
#include "formats/files/gguf_keys.h"
#include "formats/io/strbuf.h"

#define GW_ALIGNMENT 32             /* GGUF_DEFAULT_ALIGNMENT of gguf-py/gguf/constants.py */
#define GW_MAX_TENSORS (1u << 24)
#define GW_MAX_KEYS (1u << 24)
#define GW_MAX_KEY_LEN 65535        /* ggml docs/gguf.md: a key is at most 2^16 - 1 bytes */
#define GW_MAX_NAME 64              /* GGML_MAX_NAME (ggml.h): names are shorter */
#define GW_MAX_DIMS 4               /* GGML_MAX_DIMS */
#define GW_IO_BLOCK (1u << 20)

/* posenc dtype -> enum ggml_type of ggml/include/ggml.h; -1: no ggml type */
static int ggml_type_of(posenc_dtype dt)
{
    switch (dt) {
    case POSENC_DT_F32: return 0;  /* GGML_TYPE_F32 */
    case POSENC_DT_F16: return 1;  /* GGML_TYPE_F16 */
    case POSENC_DT_I32: return 26; /* GGML_TYPE_I32 */
    case POSENC_DT_I64: return 27; /* GGML_TYPE_I64 */
    case POSENC_DT_F64: return 28; /* GGML_TYPE_F64 */
    case POSENC_DT_BF16: return 30; /* GGML_TYPE_BF16 */
    default: return -1;            /* u8: ggml has I8 but no unsigned 8-bit type */
    }
}

static int host_is_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* ---------------------------------------------------------------- llama.cpp keys */


/* The factor tensors (gguf-py/gguf/constants.py TENSOR_NAMES: MODEL_TENSOR.ROPE_FREQS,
 * ROPE_FACTORS_LONG, ROPE_FACTORS_SHORT, with the ".weight" suffix the converter adds). */
static const struct {
    const char *name;
    size_t n_off, v_off;
} rope_tensors[] = {
    { "rope_freqs.weight", offsetof(posenc_gguf_rope, n_rope_freqs),
      offsetof(posenc_gguf_rope, rope_freqs) },
    { "rope_factors_long.weight", offsetof(posenc_gguf_rope, n_factors_long),
      offsetof(posenc_gguf_rope, factors_long) },
    { "rope_factors_short.weight", offsetof(posenc_gguf_rope, n_factors_short),
      offsetof(posenc_gguf_rope, factors_short) },
};
#define N_ROPE_TENSORS (sizeof rope_tensors / sizeof rope_tensors[0])

static int rope_tensor_n(const posenc_gguf_rope *g, size_t i)
{
    return *(const int *)((const char *)g + rope_tensors[i].n_off);
}

static const float *rope_tensor_v(const posenc_gguf_rope *g, size_t i)
{
    return (const float *)((const char *)g + rope_tensors[i].v_off);
}

static void put_key(pe_strbuf *b, const char *arch, const char *suffix)
{
    size_t na = strlen(arch), ns = strlen(suffix);
    put_le(b, na + 1 + ns, 8);
    pe_strbuf_add(b, arch, na);
    pe_strbuf_add(b, ".", 1);
    pe_strbuf_add(b, suffix, ns);
}

static void put_alignment(pe_strbuf *b)
{
    static const char key[] = "general.alignment";
    put_str(b, key, sizeof key - 1);
    put_le(b, T_U32, 4);
    put_le(b, GW_ALIGNMENT, 4);
}

/* The llama.cpp key-value pairs of g into b: general.architecture, general.alignment, then the
 * {arch}.* keys; *nkv counts them. */
static posenc_status rope_kv(const posenc_gguf_rope *g, const char *path, pe_strbuf *b,
                             uint64_t *nkv, uint64_t *nvalues, posenc_error *err)
{
    size_t na = strnlen(g->arch, sizeof g->arch);
    if (na == 0 || na == sizeof g->arch)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': the GGUF architecture name is %s", path,
                             na ? "too long" : "empty");
    for (size_t i = 0; i < na; i++) {
        char c = g->arch[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return posenc_seterr(err, POSENC_EINVAL,
                                 "'%s': GGUF architecture name '%s' has a character other than "
                                 "letters, digits, '_' and '-'", path, g->arch);
    }
    if (strcmp(g->arch, "posenc") == 0 || strcmp(g->arch, "general") == 0)
        return posenc_seterr(err, POSENC_EINVAL,
                             "'%s': GGUF architecture name '%s' would clash with the %s.* keys",
                             path, g->arch, g->arch);
    static const char arch_key[] = "general.architecture";
    put_str(b, arch_key, sizeof arch_key - 1);
    put_le(b, T_STRING, 4);
    put_str(b, g->arch, na);
    put_alignment(b);
    *nkv += 2;
    *nvalues += 2;
    /* the keys of gguf_keys.h's table, then the old scale_linear (written only when asked) */
    for (size_t k = 0; k <= pe_gguf_rope_nkeys; k++) {
        const pe_gguf_key *key = k < pe_gguf_rope_nkeys ? &pe_gguf_rope_keys[k]
                                                        : &pe_gguf_scale_linear;
        if (!(g->has & key->bit))
            continue;
        const char *f = (const char *)g + key->off;
        const char *what = key->suffix;
        put_key(b, g->arch, what);
        (*nkv)++;
        (*nvalues)++;
        switch (key->type) {
        case PE_GK_U32:
        case PE_GK_HEADS: { /* gguf-py writes one head count as uint32 */
            int64_t v;
            memcpy(&v, f, sizeof v);
            if (v < 0 || v > (int64_t)UINT32_MAX)
                return posenc_seterr(err, POSENC_ERANGE, "'%s': %s.%s = %" PRId64
                                     " does not fit GGUF's uint32", path, g->arch, what, v);
            put_le(b, T_U32, 4);
            put_le(b, (uint64_t)v, 4);
            break;
        }
        case PE_GK_BOOL: {
            int64_t v;
            memcpy(&v, f, sizeof v);
            put_le(b, T_BOOL, 4);
            put_le(b, v ? 1u : 0u, 1);
            break;
        }
        case PE_GK_F32: {
            double d;
            memcpy(&d, f, sizeof d);
            if (!isfinite(d) || fabs(d) > FLT_MAX)
                return posenc_seterr(err, POSENC_ERANGE, "'%s': %s.%s = %g is not a finite "
                                     "float32", path, g->arch, what, d);
            put_le(b, T_F32, 4);
            put_f32(b, (float)d);
            break;
        }
        case PE_GK_STR: {
            size_t n = strnlen(f, sizeof g->scaling_type);
            if (n == sizeof g->scaling_type)
                return posenc_seterr(err, POSENC_EINVAL, "'%s': %s.%s is not terminated", path,
                                     g->arch, what);
            put_le(b, T_STRING, 4);
            put_str(b, f, n);
            break;
        }
        case PE_GK_PATTERN:
            if (g->n_swa_layers <= 0) { /* gguf-py: an int is a uint32 */
                if (g->swa_period < 0 || g->swa_period > (int64_t)UINT32_MAX)
                    return posenc_seterr(err, POSENC_ERANGE, "'%s': %s.%s = %" PRId64
                                         " does not fit GGUF's uint32", path, g->arch, what,
                                         g->swa_period);
                put_le(b, T_U32, 4);
                put_le(b, (uint64_t)g->swa_period, 4);
                break;
            }
            if (g->n_swa_layers > POSENC_GGUF_MAX_LAYERS)
                return posenc_seterr(err, POSENC_EINVAL, "'%s': %s.%s has %d values", path,
                                     g->arch, what, g->n_swa_layers);
            put_le(b, T_ARRAY, 4);
            put_le(b, g->swa_layers_int32 ? T_I32 : T_BOOL, 4);
            put_le(b, (uint64_t)g->n_swa_layers, 8);
            for (int i = 0; i < g->n_swa_layers; i++)
                put_le(b, g->swa_layers[i] ? 1u : 0u, g->swa_layers_int32 ? 4 : 1);
            *nvalues += (uint64_t)g->n_swa_layers;
            break;
        case PE_GK_SECTIONS:
            if (g->n_sections < 1 || g->n_sections > 4)
                return posenc_seterr(err, POSENC_EINVAL,
                                     "'%s': %s.%s has %d values (1 to 4 expected)", path,
                                     g->arch, what, g->n_sections);
            put_le(b, T_ARRAY, 4);
            put_le(b, T_I32, 4);
            put_le(b, (uint64_t)g->n_sections, 8);
            for (int i = 0; i < g->n_sections; i++)
                put_le(b, (uint32_t)g->sections[i], 4);
            *nvalues += (uint64_t)g->n_sections;
            break;
        }
    }
    for (size_t i = 0; i < N_ROPE_TENSORS; i++) {
        int n = rope_tensor_n(g, i);
        if (n < 0 || n > POSENC_MAX_FREQ)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': %s has %d values (at most %d)", path,
                                 rope_tensors[i].name, n, POSENC_MAX_FREQ);
        const float *v = rope_tensor_v(g, i);
        for (int k = 0; k < n; k++)
            if (!isfinite(v[k]))
                return posenc_seterr(err, POSENC_EINVAL, "'%s': %s[%d] is not finite", path,
                                     rope_tensors[i].name, k);
    }
    return b->oom ? posenc_seterr(err, POSENC_ENOMEM, "out of memory") : POSENC_OK;
}

posenc_status posenc_gguf_writer_rope(posenc_writer *w, const posenc_gguf_rope *g,
                                      posenc_error *err)
{
    if (w->opts.format != POSENC_FMT_GGUF)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': llama.cpp's keys go into GGUF files only",
                             w->path);
    if (w->started || w->gguf_rope)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': llama.cpp's keys must be given once, "
                             "before the data", w->path);
    pe_strbuf b = { 0 };
    uint64_t nkv = 0, nv = 0;
    posenc_status st = rope_kv(g, w->path, &b, &nkv, &nv, err); /* check it now */
    free(b.p);
    if (st)
        return st;
    if (!(w->gguf_rope = malloc(sizeof *g)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    memcpy(w->gguf_rope, g, sizeof *g);
    return POSENC_OK;
}

/* ---------------------------------------------------------------- the file */

typedef struct gw_state {
    char *tmp;
    FILE *fp;
    size_t cur;       /* our own cursor over w->arrays */
    uint64_t done;    /* elements of arrays[cur] written */
    uint64_t *nbytes; /* of each declared array */
    unsigned char *swap;
} gw_state;

static void gw_free(posenc_writer *w, int remove_tmp)
{
    gw_state *s = w->impl;
    if (!s)
        return;
    if (remove_tmp)
        pe_tmp_discard(s->fp, s->tmp);
    free(s->tmp);
    free(s->nbytes);
    free(s->swap);
    free(s);
    w->impl = NULL;
}

static uint64_t pad_of(uint64_t n) { return (GW_ALIGNMENT - n % GW_ALIGNMENT) % GW_ALIGNMENT; }

/* One tensor info into b; *off is its offset, advanced past its padded data. */
static posenc_status tensor_info(pe_strbuf *b, const char *path, const char *name, int ndim,
                                 const int64_t *shape, posenc_dtype dt, uint64_t nbytes,
                                 uint64_t *off, posenc_error *err)
{
    size_t nl = strlen(name);
    int gt = ggml_type_of(dt);
    if (nl >= GW_MAX_NAME)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': tensor name '%.64s...' is longer than "
                             "ggml's %d bytes", path, name, GW_MAX_NAME - 1);
    if (ndim > GW_MAX_DIMS)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': array '%s' has %d dimensions; ggml "
                             "tensors have at most %d", path, name, ndim, GW_MAX_DIMS);
    if (gt < 0)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': array '%s' is %s; GGUF stores "
                             "f32, f16, bf16, f64, i32 and i64 tensors", path, name,
                             posenc_dtype_name(dt));
    uint64_t padded = nbytes + pad_of(nbytes);
    if (padded < nbytes || padded > (uint64_t)INT64_MAX - *off)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': tensor data would pass 2^63 bytes",
                             path);
    put_str(b, name, nl);
    put_le(b, (uint64_t)ndim, 4);
    for (int d = ndim - 1; d >= 0; d--) /* ne[0] is the innermost (last C) dimension */
        put_le(b, (uint64_t)shape[d], 8);
    put_le(b, (uint64_t)gt, 4);
    put_le(b, *off, 8);
    *off += padded;
    return POSENC_OK;
}

static posenc_status write_pad(posenc_writer *w, uint64_t nbytes, posenc_error *err)
{
    static const unsigned char zeros[GW_ALIGNMENT];
    gw_state *s = w->impl;
    return pe_write_exact(s->fp, zeros, (size_t)pad_of(nbytes), w->path, err);
}

posenc_status pe_gguf_w_start(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    pe_strbuf kv = { 0 }, ti = { 0 }, hd = { 0 };
    uint64_t nkv = 0, nvalues = 0, off = 0;
    const posenc_gguf_rope *g = w->gguf_rope;
    gw_state *s = calloc(1, sizeof *s);
    if (!s || !(s->nbytes = calloc(w->n ? w->n : 1, sizeof *s->nbytes))) {
        free(s);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    w->impl = s;

    /* key-value pairs */
    if (g) {
        if ((st = rope_kv(g, w->path, &kv, &nkv, &nvalues, err)))
            goto fail;
    } else {
        put_alignment(&kv);
        nkv++;
        nvalues++;
    }
    for (size_t i = 0; i < w->nmeta; i++) {
        /* posenc's keys go under posenc. (once: a GGUF file's own posenc.* keys, carried over
         * by convert, keep their names) */
        const char *key = w->meta_keys[i];
        size_t kl = strlen(key), before = kv.len;
        size_t pl = strncmp(key, "posenc.", 7) == 0 ? 0 : 7;
        if (kl + pl > GW_MAX_KEY_LEN) {
            st = posenc_seterr(err, POSENC_EINVAL, "'%s': metadata key '%.64s...' is longer than "
                               "GGUF's %d bytes", w->path, key, GW_MAX_KEY_LEN);
            goto fail;
        }
        put_le(&kv, kl + pl, 8);
        pe_strbuf_add(&kv, "posenc.", pl);
        pe_strbuf_add(&kv, key, kl);
        size_t mid = kv.len;
        if ((st = pe_gguf_meta_encode(&kv, w->meta_types[i], w->meta_vals[i], w->path,
                                          w->meta_keys[i], &nvalues, err)))
            goto fail;
        if (kv.len == mid) /* null: no key */
            kv.len = before;
        else
            nkv++;
        if (nkv > GW_MAX_KEYS || nvalues > GW_MAX_VALUES) {
            st = posenc_seterr(err, POSENC_ERANGE, "'%s': more than %u metadata keys or values "
                               "for one GGUF file", w->path, GW_MAX_VALUES);
            goto fail;
        }
    }

    /* tensor infos: the declared arrays, then the rope factors */
    size_t nt = w->n;
    for (size_t i = 0; g && i < N_ROPE_TENSORS; i++)
        if (rope_tensor_n(g, i) > 0) {
            for (size_t k = 0; k < w->n; k++)
                if (strcmp(w->arrays[k].name, rope_tensors[i].name) == 0) {
                    st = posenc_seterr(err, POSENC_EINVAL, "'%s': array name '%s' used twice",
                                       w->path, rope_tensors[i].name);
                    goto fail;
                }
            nt++;
        }
    if (nt > GW_MAX_TENSORS) {
        st = posenc_seterr(err, POSENC_ERANGE, "'%s': %zu arrays; posenc writes at most %u "
                           "tensors to a GGUF file", w->path, nt, GW_MAX_TENSORS);
        goto fail;
    }
    for (size_t i = 0; i < w->n; i++) {
        const posenc_array_info *a = &w->arrays[i];
        if ((st = posenc_shape_size(a->ndim, a->shape, a->dtype, NULL, &s->nbytes[i], err)) ||
            (st = tensor_info(&ti, w->path, a->name, a->ndim, a->shape, a->dtype, s->nbytes[i],
                              &off, err)))
            goto fail;
    }
    for (size_t i = 0; g && i < N_ROPE_TENSORS; i++) {
        int64_t n = rope_tensor_n(g, i);
        if (n > 0 && (st = tensor_info(&ti, w->path, rope_tensors[i].name, 1, &n, POSENC_DT_F32,
                                       (uint64_t)n * 4, &off, err)))
            goto fail;
    }

    /* header */
    pe_strbuf_add(&hd, "GGUF", 4);
    put_le(&hd, 3, 4);
    put_le(&hd, nt, 8);
    put_le(&hd, nkv, 8);
    pe_strbuf_add(&hd, kv.p ? kv.p : "", kv.len);
    pe_strbuf_add(&hd, ti.p ? ti.p : "", ti.len);
    while (!hd.oom && hd.len % GW_ALIGNMENT)
        pe_strbuf_add(&hd, "", 1);
    if (kv.oom || ti.oom || hd.oom) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    if (off > (uint64_t)INT64_MAX - hd.len) {
        st = posenc_seterr(err, POSENC_ERANGE, "'%s': the file would pass 2^63 bytes", w->path);
        goto fail;
    }
    if ((st = pe_tmp_create(w->path, &s->tmp, &s->fp, err)))
        goto fail;
    setvbuf(s->fp, NULL, _IOFBF, 1u << 20);
    if ((st = pe_write_exact(s->fp, hd.p, hd.len, w->path, err)))
        goto fail;
    free(kv.p);
    free(ti.p);
    free(hd.p);
    return POSENC_OK;
fail:
    free(kv.p);
    free(ti.p);
    free(hd.p);
    gw_free(w, 1);
    return st;
}

posenc_status pe_gguf_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                  posenc_error *err)
{
    gw_state *s = w->impl;
    const unsigned char *p = data;
    posenc_status st;
    while (nelem > 0) {
        while (s->cur < w->n && s->done >= w->nelem[s->cur]) {
            s->cur++;
            s->done = 0;
        }
        if (s->cur >= w->n)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': more data than declared", w->path);
        uint64_t take = w->nelem[s->cur] - s->done;
        if (take > nelem)
            take = nelem;
        size_t es = posenc_dtype_size(w->arrays[s->cur].dtype);
        if (host_is_le() || es == 1) {
            if ((st = pe_write_exact(s->fp, p, (size_t)(take * es), w->path, err)))
                return st;
        } else {
            if (!s->swap && !(s->swap = malloc(GW_IO_BLOCK)))
                return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            for (uint64_t k = 0; k < take;) {
                size_t m = GW_IO_BLOCK / es;
                if (m > take - k)
                    m = (size_t)(take - k);
                memcpy(s->swap, p + k * es, m * es);
                posenc_byteswap(s->swap, es, m);
                if ((st = pe_write_exact(s->fp, s->swap, m * es, w->path, err)))
                    return st;
                k += m;
            }
        }
        p += take * es;
        nelem -= take;
        s->done += take;
        if (s->done == w->nelem[s->cur] && (st = write_pad(w, s->nbytes[s->cur], err)))
            return st;
    }
    return POSENC_OK;
}

posenc_status pe_gguf_w_commit(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    if (!w->impl && (st = pe_gguf_w_start(w, err)))
        return st;
    gw_state *s = w->impl;
    const posenc_gguf_rope *g = w->gguf_rope;
    for (size_t i = 0; g && i < N_ROPE_TENSORS; i++) {
        int n = rope_tensor_n(g, i);
        if (n <= 0)
            continue;
        pe_strbuf b = { 0 };
        const float *v = rope_tensor_v(g, i);
        for (int k = 0; k < n; k++)
            put_f32(&b, v[k]);
        st = b.oom ? posenc_seterr(err, POSENC_ENOMEM, "out of memory")
                   : pe_write_exact(s->fp, b.p, b.len, w->path, err);
        free(b.p);
        if (st || (st = write_pad(w, (uint64_t)n * 4, err))) {
            gw_free(w, 1);
            return st;
        }
    }
    st = pe_tmp_commit(s->fp, s->tmp, w->path, err);
    s->fp = NULL; /* closed by pe_tmp_commit either way */
    gw_free(w, st != POSENC_OK);
    return st;
}

void pe_gguf_w_abort(posenc_writer *w) { gw_free(w, 1); }
