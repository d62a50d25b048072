/* cmd/gen_bias.c: `posenc gen` for the non-rotary encodings: ALiBi slopes and bias, T5 buckets
 * and bias, Shaw indices and gathered embeddings, sinusoidal and learned absolute tables.
 *
 * Every table is planned first (names, dtypes, shapes, byte count against the size limit), then
 * streamed row by row through the io.h writer, which renames the output into place only on
 * commit: a failed run leaves nothing behind. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "gen.h"

#define CMD "gen"
#define OUT_BUF_BYTES ((size_t)4 << 20)       /* conversion buffer between rows and writer */
#define WEIGHTS_MAX_BYTES ((uint64_t)1 << 31) /* a T5/Shaw/learned table read whole (as f32) */
#define MAX_ARRAYS 4

#define T5_ENCODER_TENSOR "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
#define T5_DECODER_TENSOR "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"

/* ---------------------------------------------------------------- the plan */

struct job;
typedef posenc_status (*emit_fn)(struct job *j, int which, posenc_error *err);

struct job {
    const struct gen_args *a;
    const posenc_model *m;
    const posenc_bias_config *bc;
    const char *enc;                 /* encoding name for messages */
    int narr;
    posenc_array_info arr[MAX_ARRAYS];
    int want[MAX_ARRAYS];
    emit_fn emit;
    struct posenc_meta mt;
    /* rows */
    int64_t nq;                      /* query rows (or table rows) */
    int64_t k_len;
    int64_t *qpos;                   /* --positions (nq of them), or NULL for 0..nq-1 */
    /* output */
    posenc_writer *w;
    unsigned char *buf;
    size_t buf_used;
    posenc_dtype buf_dt;
    /* per encoding */
    int heads;
    double slopes[1 << 16];
    posenc_alibi_kind kind;
    posenc_alibi_convention conv;
    int t5_bidir, num_buckets, max_distance;
    int64_t shaw_k;
    int shaw_bert;                   /* index clip(query - key) + k, as BERT's relative_key */
    float *weights;                  /* T5 [nb, H] / Shaw [2k+1, depth] / learned rows */
    int64_t wrows, wcols;
    posenc_sinusoidal *sin;
    int d_model;
    const char *wspec_path;          /* learned: streamed from here */
    size_t learned_index;
};

static posenc_status out_flush(struct job *j, posenc_error *err)
{
    if (j->buf_used == 0)
        return POSENC_OK;
    size_t es = posenc_dtype_size(j->buf_dt);
    posenc_status st = posenc_writer_write(j->w, j->buf, j->buf_used / es, err);
    j->buf_used = 0;
    return st;
}

/* Append n values of type st to the current array, converted to dt. */
static posenc_status out_put(struct job *j, posenc_dtype dt, const void *src, posenc_dtype st,
                             size_t n, posenc_error *err)
{
    size_t es = posenc_dtype_size(dt), ss = posenc_dtype_size(st);
    const unsigned char *s = src;
    if (j->buf_used && j->buf_dt != dt) {
        posenc_status r = out_flush(j, err);
        if (r != POSENC_OK)
            return r;
    }
    j->buf_dt = dt;
    while (n > 0) {
        size_t room = (OUT_BUF_BYTES - j->buf_used) / es;
        if (room == 0) {
            posenc_status r = out_flush(j, err);
            if (r != POSENC_OK)
                return r;
            continue;
        }
        size_t k = n < room ? n : room;
        posenc_dtype_convert(j->buf + j->buf_used, dt, s, st, k);
        j->buf_used += k * es;
        s += k * ss;
        n -= k;
    }
    return POSENC_OK;
}

static void set_info(posenc_array_info *a, const char *name, posenc_dtype dt, int ndim,
                     int64_t d0, int64_t d1, int64_t d2)
{
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->dtype = dt;
    a->ndim = ndim;
    a->shape[0] = d0;
    a->shape[1] = d1;
    a->shape[2] = d2;
}

static void human_size(uint64_t n, char *buf, size_t len)
{
    const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, unit[u]);
}

/* Pick the arrays to write (--array), check the size limit, write them. */
static int run(struct job *j, const char *hint)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc = POSENC_EXIT_ERROR, nwant = 0;
    uint64_t total = 0;

    for (int i = 0; i < j->narr; i++) {
        j->want[i] = !a->array || strcmp(a->array, j->arr[i].name) == 0;
        nwant += j->want[i];
    }
    if (nwant == 0) {
        char names[256] = "";
        for (int i = 0; i < j->narr; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i ? ", " : "", j->arr[i].name);
        return posenc_usage_error(CMD, "--array: %s tables hold %s, not '%s'", j->enc, names,
                                  a->array);
    }
    if (a->wopts.format == POSENC_FMT_NPY && nwant > 1) {
        char names[256] = "";
        for (int i = 0; i < j->narr; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i ? ", " : "", j->arr[i].name);
        return posenc_usage_error(CMD, "%s holds one array: pass --array (%s)",
                                  strcmp(a->out, "-") == 0 ? "-o -" : "an NPY file", names);
    }
    for (int i = 0; i < j->narr; i++) {
        uint64_t nb;
        if (!j->want[i])
            continue;
        if (posenc_shape_size(j->arr[i].ndim, j->arr[i].shape, j->arr[i].dtype, NULL, &nb,
                              &err) != POSENC_OK)
            return posenc_fail(CMD, &err);
        total += nb;
    }
    if (total > a->size_limit && !a->force) {
        char hs[32], lim[32];
        human_size(total, hs, sizeof hs);
        human_size(a->size_limit, lim, sizeof lim);
        posenc_msg(CMD, "%s tables would be %s, over the %s limit; pass %s or --force", j->enc,
                   hs, lim, hint);
        return POSENC_EXIT_ERROR;
    }
    if (j->mt.oom) {
        posenc_msg(CMD, "out of memory");
        return POSENC_EXIT_ERROR;
    }
    j->buf = malloc(OUT_BUF_BYTES);
    if (!j->buf) {
        posenc_msg(CMD, "out of memory");
        return POSENC_EXIT_ERROR;
    }
    if (posenc_writer_open(a->out, &a->wopts, &j->w, &err) != POSENC_OK)
        return posenc_fail(CMD, &err);
    for (size_t i = 0; i < j->mt.n; i++)
        if (posenc_writer_meta(j->w, j->mt.key[i], j->mt.val[i], &err) != POSENC_OK)
            goto fail;
    for (int i = 0; i < j->narr; i++)
        if (j->want[i] && posenc_writer_declare(j->w, &j->arr[i], &err) != POSENC_OK)
            goto fail;
    for (int i = 0; i < j->narr; i++) {
        if (!j->want[i])
            continue;
        if (j->emit(j, i, &err) != POSENC_OK || out_flush(j, &err) != POSENC_OK)
            goto fail;
    }
    if (posenc_writer_commit(j->w, &err) != POSENC_OK) {
        j->w = NULL;
        return posenc_fail(CMD, &err);
    }
    j->w = NULL;
    return POSENC_EXIT_OK;
fail:
    rc = posenc_fail(CMD, &err);
    posenc_writer_abort(j->w);
    j->w = NULL;
    return rc;
}

/* ---------------------------------------------------------------- shared helpers */

/* Options that do not apply to this encoding are usage errors, not silently ignored. */
static int refuse_options(const struct gen_args *a, const char *enc, const char *allowed)
{
    struct {
        const char *name;
        int given;
    } opts[] = {
        { "--heads", a->heads != 0 },
        { "--d-model", a->d_model != 0 },
        { "--num-buckets", a->num_buckets != 0 },
        { "--max-distance", a->max_distance != 0 },
        { "--max-relative-position", a->max_relative_position != 0 },
        { "--convention", a->convention != NULL },
        { "--variant", a->variant != NULL },
        { "--weights", a->weights != NULL },
        { "--tensor", a->tensor != NULL },
        { "--decoder", a->decoder != 0 },
        { "--broadcast", a->broadcast != 0 },
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (!opts[i].given)
            continue;
        /* allowed is a space-separated list with a space at each end */
        char pat[64];
        snprintf(pat, sizeof pat, " %s ", opts[i].name);
        if (!strstr(allowed, pat))
            return posenc_usage_error(CMD, "%s does not apply to %s tables", opts[i].name, enc);
    }
    if (a->tensor && !a->weights)
        return posenc_usage_error(CMD, "--tensor needs --weights FILE");
    return 0;
}

/* Query positions: --positions, else 0..L-1 with L = --seq-len or the config's maximum. Key
 * positions 0..k_len-1 with k_len = L (max(position) + 1 for --positions). */
static int plan_positions(struct job *j)
{
    const struct gen_args *a = j->a;
    if (a->positions) {
        int64_t mx = 0;
        for (size_t i = 0; i < a->n_positions; i++) {
            if (a->positions[i] < 0)
                return posenc_usage_error(CMD, "--positions: negative position %" PRId64,
                                          a->positions[i]);
            if (a->positions[i] > mx)
                mx = a->positions[i];
        }
        if (mx >= ((int64_t)1 << 40))
            return posenc_usage_error(CMD, "--positions: position %" PRId64 " is too large", mx);
        j->nq = (int64_t)a->n_positions;
        j->k_len = mx + 1;
        j->qpos = malloc(a->n_positions * sizeof *j->qpos);
        if (!j->qpos) {
            posenc_msg(CMD, "out of memory");
            return POSENC_EXIT_ERROR;
        }
        memcpy(j->qpos, a->positions, a->n_positions * sizeof *j->qpos);
        return 0;
    }
    int64_t L = a->seq_len;
    if (L <= 0 && j->bc && j->bc->max_positions > 0)
        L = j->bc->max_positions;
    if (L <= 0) {
        if (a->config)
            return posenc_usage_error(CMD, "'%s' gives no maximum position: pass --seq-len N",
                                      a->config);
        return posenc_usage_error(CMD, "%s tables need --seq-len N", j->enc);
    }
    if (L >= ((int64_t)1 << 40))
        return posenc_usage_error(CMD, "sequence length %" PRId64 " is too large", L);
    j->nq = L;
    j->k_len = L;
    return 0;
}

/* Position of query row r: the --positions entry, else r itself. */
static int64_t qpos_at(const struct job *j, int64_t r)
{
    return j->qpos ? j->qpos[r] : r;
}

static void meta_common(struct job *j)
{
    posenc_meta_str(&j->mt, "encoding", j->enc);
    posenc_meta_str(&j->mt, "posenc_version", posenc_version());
    if (j->a->config)
        posenc_meta_str(&j->mt, "config", j->a->config);
    if (j->m && posenc_model_type(j->m))
        posenc_meta_str(&j->mt, "model_type", posenc_model_type(j->m));
}

/* Find a tensor in a weights file: each name in `names` (NULL-terminated, first match wins),
 * also with the prefixes given. Returns 0 and the index, or prints the error. */
static int find_tensor(posenc_container *c, const char *path, const char *const *names,
                       const char *const *prefixes, size_t *index)
{
    size_t n = posenc_container_count(c);
    for (const char *const *nm = names; *nm; nm++) {
        for (const char *const *pf = prefixes; *pf; pf++) {
            char full[POSENC_NAME_MAX * 2];
            snprintf(full, sizeof full, "%s%s", *pf, *nm);
            for (size_t i = 0; i < n; i++) {
                if (strcmp(posenc_container_array(c, i)->name, full) == 0) {
                    *index = i;
                    return 0;
                }
            }
        }
    }
    posenc_msg(CMD, "'%s': no tensor '%s'%s", path, names[0],
               prefixes[1] ? " (nor with a transformer./bert. prefix); pass --tensor NAME"
                           : "; pass --tensor NAME");
    return POSENC_EXIT_ERROR;
}

/* Read a whole 2-D weights tensor as float32 into j->weights. */
static int load_weights(struct job *j, const char *const *names, const char *const *prefixes,
                        size_t *index_out)
{
    const char *path = j->a->weights;
    posenc_error err = { 0 };
    posenc_container *c = NULL;
    posenc_reader *r = NULL;
    int rc = POSENC_EXIT_ERROR;
    size_t idx;
    if (posenc_container_open(path, NULL, &c, &err) != POSENC_OK)
        return posenc_fail(CMD, &err);
    if ((rc = find_tensor(c, path, names, prefixes, &idx)))
        goto out;
    rc = POSENC_EXIT_ERROR;
    const posenc_array_info *info = posenc_container_array(c, idx);
    if (info->ndim != 2 || !posenc_dtype_is_float(info->dtype)) {
        char sh[128];
        posenc_shape_str(info->ndim, info->shape, sh, sizeof sh);
        posenc_msg(CMD, "'%s': tensor '%s' is %s %s, not a 2-D float table", path, info->name,
                   posenc_dtype_name(info->dtype), sh);
        goto out;
    }
    uint64_t nelem, nbytes;
    if (posenc_shape_size(2, info->shape, POSENC_DT_F32, &nelem, &nbytes, &err) != POSENC_OK) {
        rc = posenc_fail(CMD, &err);
        goto out;
    }
    if (nbytes > WEIGHTS_MAX_BYTES) {
        posenc_msg(CMD, "'%s': tensor '%s' is too large (%" PRIu64 " bytes as f32)", path,
                   info->name, nbytes);
        goto out;
    }
    j->wrows = info->shape[0];
    j->wcols = info->shape[1];
    if (index_out) {
        *index_out = idx;
        rc = POSENC_EXIT_OK;
        goto out;
    }
    j->weights = malloc(nbytes ? (size_t)nbytes : 1);
    void *raw = malloc(nelem ? (size_t)nelem * posenc_dtype_size(info->dtype) : 1);
    if (!j->weights || !raw) {
        free(raw);
        posenc_msg(CMD, "out of memory");
        goto out;
    }
    if (posenc_reader_open_index(c, idx, &r, &err) != POSENC_OK ||
        posenc_reader_read(r, raw, nelem, &err) != POSENC_OK) {
        free(raw);
        rc = posenc_fail(CMD, &err);
        goto out;
    }
    posenc_dtype_convert(j->weights, POSENC_DT_F32, raw, info->dtype, (size_t)nelem);
    free(raw);
    rc = POSENC_EXIT_OK;
out:
    posenc_reader_close(r);
    posenc_container_close(c);
    return rc;
}

/* ---------------------------------------------------------------- ALiBi */

static posenc_status emit_alibi(struct job *j, int which, posenc_error *err)
{
    posenc_dtype dt = j->a->dtype;
    if (strcmp(j->arr[which].name, "slopes") == 0)
        return out_put(j, dt, j->slopes, POSENC_DT_F64, (size_t)j->heads, err);
    double *row = malloc((size_t)j->k_len * sizeof *row);
    if (!row)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = POSENC_OK;
    for (int h = 0; h < j->heads && st == POSENC_OK; h++) {
        if (j->a->broadcast) {
            posenc_alibi_row_kind(j->kind, j->slopes[h], j->conv, j->k_len - 1, j->k_len, row);
            st = out_put(j, dt, row, POSENC_DT_F64, (size_t)j->k_len, err);
            continue;
        }
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
            posenc_alibi_row_kind(j->kind, j->slopes[h], j->conv, qpos_at(j, r), j->k_len, row);
            st = out_put(j, dt, row, POSENC_DT_F64, (size_t)j->k_len, err);
        }
    }
    free(row);
    return st;
}

static int gen_alibi(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc;
    if ((rc = refuse_options(a, "ALiBi", " --heads --convention --variant --broadcast ")))
        return rc;
    j->heads = a->heads ? a->heads : j->bc ? j->bc->heads : 0;
    if (j->heads <= 0)
        return posenc_usage_error(CMD, "ALiBi tables need --heads N%s",
                                  a->config ? " (the config gives no number of heads)" : "");
    if (j->heads > (1 << 16))
        return posenc_usage_error(CMD, "%d ALiBi heads is too many", j->heads);
    j->kind = j->bc ? j->bc->alibi_kind : POSENC_ALIBI_REFERENCE;
    if (a->variant && posenc_alibi_kind_parse(a->variant, &j->kind, &err) != POSENC_OK)
        return posenc_usage_error(CMD, "--variant: %s", err.msg);
    double bias_max = j->bc && j->bc->alibi_bias_max > 0 ? j->bc->alibi_bias_max : 8.0;
    /* default convention: what the model's own code builds (MPT: m(j - i) at the last query;
     * BLOOM, Baichuan, Falcon and the Press reference: m * j) */
    j->conv = j->kind == POSENC_ALIBI_MPT ? POSENC_ALIBI_CAUSAL : POSENC_ALIBI_KEYINDEX;
    if (a->convention && posenc_alibi_convention_parse(a->convention, &j->conv, &err) != POSENC_OK)
        return posenc_usage_error(CMD, "--convention: %s", err.msg);
    if (posenc_alibi_slopes(j->kind, j->heads, bias_max, j->slopes, &err) != POSENC_OK)
        return posenc_fail(CMD, &err);
    if ((rc = plan_positions(j)))
        return rc;

    meta_common(j);
    posenc_meta_str(&j->mt, "variant", posenc_alibi_kind_name(j->kind));
    posenc_meta_str(&j->mt, "convention", posenc_alibi_convention_name(j->conv));
    posenc_meta_int(&j->mt, "heads", j->heads);
    if (j->kind == POSENC_ALIBI_MPT)
        posenc_meta_num(&j->mt, "alibi_bias_max", bias_max);
    posenc_meta_nums(&j->mt, "slopes", j->slopes, j->heads);
    posenc_meta_int(&j->mt, "q_len", a->broadcast ? 1 : j->nq);
    posenc_meta_int(&j->mt, "k_len", j->k_len);
    if (a->broadcast)
        posenc_meta_int(&j->mt, "broadcast_query", j->k_len - 1);

    j->narr = 2;
    set_info(&j->arr[0], "slopes", a->dtype, 1, j->heads, 0, 0);
    set_info(&j->arr[1], "bias", a->dtype, 3, j->heads, a->broadcast ? 1 : j->nq, j->k_len);
    j->emit = emit_alibi;
    return run(j, "a smaller --seq-len, --broadcast, --array slopes");
}

/* ---------------------------------------------------------------- T5 */

static posenc_status emit_t5(struct job *j, int which, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    if (strcmp(j->arr[which].name, "buckets") == 0) {
        int32_t *row = malloc((size_t)j->k_len * sizeof *row);
        if (!row)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
            posenc_t5_bucket_row(qpos_at(j, r), j->k_len, j->t5_bidir, j->num_buckets,
                                 j->max_distance, row);
            st = out_put(j, POSENC_DT_I32, row, POSENC_DT_I32, (size_t)j->k_len, err);
        }
        free(row);
        return st;
    }
    float *row = malloc((size_t)j->k_len * sizeof *row);
    if (!row)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    for (int h = 0; h < j->heads && st == POSENC_OK; h++)
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
            posenc_t5_bias_row(j->weights, j->heads, h, qpos_at(j, r), j->k_len, j->t5_bidir,
                               j->num_buckets, j->max_distance, row);
            st = out_put(j, j->a->dtype, row, POSENC_DT_F32, (size_t)j->k_len, err);
        }
    free(row);
    return st;
}

static int gen_t5(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc;
    if ((rc = refuse_options(a, "T5", " --heads --num-buckets --max-distance --decoder --weights "
                                      "--tensor ")))
        return rc;
    const posenc_bias_config *bc = j->bc;
    j->num_buckets = a->num_buckets ? a->num_buckets : bc && bc->num_buckets ? bc->num_buckets : 32;
    j->max_distance = a->max_distance ? a->max_distance
                      : bc && bc->max_distance ? bc->max_distance : 128;
    int decoder = a->decoder || (bc && bc->is_decoder);
    j->t5_bidir = !decoder;
    if (posenc_t5_check(j->t5_bidir, j->num_buckets, j->max_distance, &err) != POSENC_OK) {
        if (a->num_buckets || a->max_distance || !a->config)
            return posenc_usage_error(CMD, "%s", err.msg);
        posenc_msg(CMD, "'%s': %s", a->config, err.msg);
        return POSENC_EXIT_ERROR;
    }
    if (a->heads && !a->weights)
        return posenc_usage_error(CMD, "--heads applies to T5 tables only with --weights");
    if (a->weights) {
        const char *names[] = { a->tensor ? a->tensor
                                          : decoder ? T5_DECODER_TENSOR : T5_ENCODER_TENSOR,
                                NULL };
        const char *prefixes[] = { "", NULL };
        if ((rc = load_weights(j, names, prefixes, NULL)))
            return rc;
        if (j->wrows != j->num_buckets) {
            posenc_msg(CMD, "'%s': tensor '%s' has %" PRId64 " rows, but there are %d buckets "
                            "(shape must be [num_buckets, heads])", a->weights, names[0],
                       j->wrows, j->num_buckets);
            return POSENC_EXIT_ERROR;
        }
        int want_heads = a->heads ? a->heads : bc ? bc->heads : 0;
        if (want_heads && j->wcols != want_heads) {
            posenc_msg(CMD, "'%s': tensor '%s' has %" PRId64 " heads (columns), not %d",
                       a->weights, names[0], j->wcols, want_heads);
            return POSENC_EXIT_ERROR;
        }
        if (j->wcols < 1 || j->wcols > (1 << 16)) {
            posenc_msg(CMD, "'%s': tensor '%s' has %" PRId64 " columns", a->weights, names[0],
                       j->wcols);
            return POSENC_EXIT_ERROR;
        }
        j->heads = (int)j->wcols;
        meta_common(j);
        posenc_meta_str(&j->mt, "weights", a->weights);
        posenc_meta_str(&j->mt, "tensor", names[0]);
    } else {
        meta_common(j);
    }
    if ((rc = plan_positions(j)))
        return rc;
    posenc_meta_str(&j->mt, "kind", decoder ? "decoder" : "encoder");
    posenc_meta_json(&j->mt, "bidirectional", j->t5_bidir ? "true" : "false");
    posenc_meta_int(&j->mt, "num_buckets", j->num_buckets);
    posenc_meta_int(&j->mt, "max_distance", j->max_distance);
    posenc_meta_int(&j->mt, "q_len", j->nq);
    posenc_meta_int(&j->mt, "k_len", j->k_len);
    if (j->heads)
        posenc_meta_int(&j->mt, "heads", j->heads);
    j->narr = 1;
    set_info(&j->arr[0], "buckets", POSENC_DT_I32, 2, j->nq, j->k_len, 0);
    if (a->weights) {
        j->narr = 2;
        set_info(&j->arr[1], "bias", a->dtype, 3, j->heads, j->nq, j->k_len);
    }
    j->emit = emit_t5;
    return run(j, "a smaller --seq-len");
}

/* ---------------------------------------------------------------- Shaw */

static posenc_status emit_shaw(struct job *j, int which, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    if (strcmp(j->arr[which].name, "index") == 0) {
        int32_t *row = malloc((size_t)j->k_len * sizeof *row);
        if (!row)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
            int64_t i = qpos_at(j, r);
            for (int64_t c = 0; c < j->k_len; c++)
                row[c] = (int32_t)(j->shaw_bert ? posenc_shaw_index(c, i, j->shaw_k)
                                                : posenc_shaw_index(i, c, j->shaw_k));
            st = out_put(j, POSENC_DT_I32, row, POSENC_DT_I32, (size_t)j->k_len, err);
        }
        free(row);
        return st;
    }
    for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
        int64_t i = qpos_at(j, r);
        for (int64_t c = 0; c < j->k_len && st == POSENC_OK; c++) {
            int64_t idx = j->shaw_bert ? posenc_shaw_index(c, i, j->shaw_k)
                                       : posenc_shaw_index(i, c, j->shaw_k);
            st = out_put(j, j->a->dtype, j->weights + (size_t)idx * (size_t)j->wcols,
                         POSENC_DT_F32, (size_t)j->wcols, err);
        }
    }
    return st;
}

static int gen_shaw(struct job *j)
{
    const struct gen_args *a = j->a;
    int rc;
    if ((rc = refuse_options(a, "Shaw", " --max-relative-position --weights --tensor --variant ")))
        return rc;
    /* BERT's relative_key embeds query - key (distance_embedding(l - r + max_pos - 1)); Shaw et
     * al. and tensor2tensor key - query. Default: what the config's model does. */
    const char *mt = j->m ? posenc_model_type(j->m) : NULL;
    j->shaw_bert = mt && j->bc && j->bc->max_relative_position > 0 &&
                   (strstr(mt, "bert") || strstr(mt, "roberta") || strstr(mt, "electra") ||
                    strstr(mt, "ernie") || strstr(mt, "data2vec"));
    if (a->variant) {
        if (strcmp(a->variant, "bert") == 0)
            j->shaw_bert = 1;
        else if (strcmp(a->variant, "shaw") == 0)
            j->shaw_bert = 0;
        else
            return posenc_usage_error(CMD, "--variant: unknown Shaw variant '%s' (shaw: key - "
                                           "query, or bert: query - key)", a->variant);
    }
    j->shaw_k = a->max_relative_position ? a->max_relative_position
                : j->bc ? j->bc->max_relative_position : 0;
    if (j->shaw_k <= 0)
        return posenc_usage_error(CMD, "Shaw tables need --max-relative-position K%s",
                                  a->config ? " (the config gives none)" : "");
    if (j->shaw_k > (1 << 30))
        return posenc_usage_error(CMD, "--max-relative-position %" PRId64 " is too large",
                                  j->shaw_k);
    meta_common(j);
    if (a->weights) {
        /* one tensor in the file needs no name */
        if (!a->tensor) {
            posenc_error err = { 0 };
            posenc_container *c = NULL;
            if (posenc_container_open(a->weights, NULL, &c, &err) != POSENC_OK)
                return posenc_fail(CMD, &err);
            size_t n = posenc_container_count(c);
            char name[POSENC_NAME_MAX];
            if (n == 1)
                snprintf(name, sizeof name, "%s", posenc_container_array(c, 0)->name);
            posenc_container_close(c);
            if (n != 1)
                return posenc_usage_error(CMD, "'%s' holds %zu tensors: pass --tensor NAME (the "
                                               "[2k+1, depth] table)", a->weights, n);
            const char *names[] = { name, NULL }, *prefixes[] = { "", NULL };
            if ((rc = load_weights(j, names, prefixes, NULL)))
                return rc;
            posenc_meta_str(&j->mt, "tensor", name);
        } else {
            const char *names[] = { a->tensor, NULL }, *prefixes[] = { "", NULL };
            if ((rc = load_weights(j, names, prefixes, NULL)))
                return rc;
            posenc_meta_str(&j->mt, "tensor", a->tensor);
        }
        if (j->wrows != 2 * j->shaw_k + 1) {
            posenc_msg(CMD, "'%s': the relative embedding table has %" PRId64 " rows, but "
                            "max_relative_position %" PRId64 " needs 2k+1 = %" PRId64,
                       a->weights, j->wrows, j->shaw_k, 2 * j->shaw_k + 1);
            return POSENC_EXIT_ERROR;
        }
        posenc_meta_str(&j->mt, "weights", a->weights);
    }
    if ((rc = plan_positions(j)))
        return rc;
    posenc_meta_int(&j->mt, "max_relative_position", j->shaw_k);
    posenc_meta_str(&j->mt, "variant", j->shaw_bert ? "bert" : "shaw");
    posenc_meta_str(&j->mt, "index_formula",
             j->shaw_bert ? "clip(query - key, -k, k) + k" : "clip(key - query, -k, k) + k");
    posenc_meta_int(&j->mt, "q_len", j->nq);
    posenc_meta_int(&j->mt, "k_len", j->k_len);
    j->narr = 1;
    set_info(&j->arr[0], "index", POSENC_DT_I32, 2, j->nq, j->k_len, 0);
    if (a->weights) {
        j->narr = 2;
        set_info(&j->arr[1], "rk", a->dtype, 3, j->nq, j->k_len, j->wcols);
    }
    j->emit = emit_shaw;
    return run(j, "a smaller --seq-len");
}

/* ---------------------------------------------------------------- sinusoidal */

static posenc_status emit_sinusoidal(struct job *j, int which, posenc_error *err)
{
    (void)which;
    double *row = malloc((size_t)j->d_model * sizeof *row);
    if (!row)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = POSENC_OK;
    for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
        posenc_sinusoidal_fill(j->sin, qpos_at(j, r), row);
        st = out_put(j, j->a->dtype, row, POSENC_DT_F64, (size_t)j->d_model, err);
    }
    free(row);
    return st;
}

static posenc_sinusoidal_variant default_sin_variant(const posenc_model *m)
{
    const char *t = m ? posenc_model_type(m) : NULL;
    if (!t)
        return POSENC_SIN_VASWANI;
    if (strcmp(t, "marian") == 0 || strcmp(t, "pegasus") == 0 || strcmp(t, "roformer") == 0)
        return POSENC_SIN_MARIAN;
    if (strcmp(t, "fsmt") == 0 || strcmp(t, "m2m_100") == 0 || strcmp(t, "xglm") == 0)
        return POSENC_SIN_FAIRSEQ;
    return POSENC_SIN_VASWANI;
}

static int gen_sinusoidal(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc;
    if ((rc = refuse_options(a, "sinusoidal", " --d-model --variant ")))
        return rc;
    j->d_model = a->d_model ? a->d_model : j->bc ? j->bc->d_model : 0;
    if (j->d_model <= 0)
        return posenc_usage_error(CMD, "sinusoidal tables need --d-model N%s",
                                  a->config ? " (the config gives no width)" : "");
    posenc_sinusoidal_variant v = default_sin_variant(j->m);
    if (a->variant && posenc_sinusoidal_variant_parse(a->variant, &v, &err) != POSENC_OK)
        return posenc_usage_error(CMD, "--variant: %s", err.msg);
    int pad = -1;
    if (v == POSENC_SIN_FAIRSEQ)
        pad = j->bc && j->bc->padding_idx >= 0 ? j->bc->padding_idx : 1;
    if (posenc_sinusoidal_new(v, j->d_model, pad, &j->sin, &err) != POSENC_OK) {
        if (a->d_model || !a->config)
            return posenc_usage_error(CMD, "%s", err.msg);
        return posenc_fail(CMD, &err);
    }
    if ((rc = plan_positions(j)))
        return rc;
    /* fairseq: rows are embedding indices and real tokens start at padding_idx + 1, so L
     * positions need L + padding_idx + 1 rows (fairseq's init_size) */
    if (v == POSENC_SIN_FAIRSEQ && !a->positions)
        j->nq += pad + 1;
    meta_common(j);
    posenc_meta_str(&j->mt, "variant", posenc_sinusoidal_variant_name(v));
    posenc_meta_int(&j->mt, "d_model", j->d_model);
    posenc_meta_int(&j->mt, "n_positions", j->nq);
    if (v == POSENC_SIN_FAIRSEQ)
        posenc_meta_int(&j->mt, "padding_idx", pad);
    j->narr = 1;
    set_info(&j->arr[0], "pe", a->dtype, 2, j->nq, j->d_model, 0);
    j->emit = emit_sinusoidal;
    return run(j, "a smaller --seq-len");
}

/* ---------------------------------------------------------------- learned */

static posenc_status emit_learned(struct job *j, int which, posenc_error *err)
{
    (void)which;
    posenc_status st = POSENC_OK;
    if (j->a->positions) {
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++)
            st = out_put(j, j->a->dtype, j->weights + (size_t)j->qpos[r] * (size_t)j->wcols,
                         POSENC_DT_F32, (size_t)j->wcols, err);
        return st;
    }
    /* stream the first nq rows straight from the checkpoint */
    posenc_container *c = NULL;
    posenc_reader *r = NULL;
    void *raw = NULL;
    if ((st = posenc_container_open(j->a->weights, NULL, &c, err)) != POSENC_OK)
        return st;
    if ((st = posenc_reader_open_index(c, j->learned_index, &r, err)) != POSENC_OK)
        goto out;
    posenc_dtype src = posenc_reader_info(r)->dtype;
    size_t es = posenc_dtype_size(src);
    int64_t rows_per = (int64_t)(((size_t)1 << 22) / ((size_t)j->wcols * es));
    if (rows_per < 1)
        rows_per = 1;
    raw = malloc((size_t)rows_per * (size_t)j->wcols * es);
    if (!raw) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    for (int64_t r0 = 0; r0 < j->nq && st == POSENC_OK; r0 += rows_per) {
        int64_t k = j->nq - r0 < rows_per ? j->nq - r0 : rows_per;
        uint64_t ne = (uint64_t)k * (uint64_t)j->wcols;
        if ((st = posenc_reader_read(r, raw, ne, err)) != POSENC_OK)
            break;
        st = out_put(j, j->a->dtype, raw, src, (size_t)ne, err);
    }
out:
    free(raw);
    posenc_reader_close(r);
    posenc_container_close(c);
    return st;
}

static int gen_learned(struct job *j)
{
    const struct gen_args *a = j->a;
    int rc;
    if ((rc = refuse_options(a, "learned", " --weights --tensor --d-model ")))
        return rc;
    if (!a->weights)
        return posenc_usage_error(CMD, "learned tables are copied from a checkpoint: pass "
                                       "--weights model.safetensors");
    const char *name = a->tensor;
    if (!name && j->bc && j->bc->learned_tensor[0])
        name = j->bc->learned_tensor;
    if (!name)
        return posenc_usage_error(CMD, "no tensor name for the learned table: pass --tensor NAME");
    /* the config's name, and the same without the wrapper prefix a checkpoint may lack */
    const char *bare = name;
    if (!a->tensor && strncmp(name, "transformer.", 12) == 0)
        bare = name + 12;
    else if (!a->tensor && strncmp(name, "bert.", 5) == 0)
        bare = name + 5;
    const char *names[] = { name, bare, NULL };
    const char *prefixes_model[] = { "", "transformer.", "bert.", NULL };
    const char *prefixes_exact[] = { "", NULL };
    size_t idx;
    if ((rc = load_weights(j, names, a->tensor ? prefixes_exact : prefixes_model, &idx)))
        return rc;
    j->learned_index = idx;
    if (a->d_model && a->d_model != j->wcols) {
        posenc_msg(CMD, "'%s': tensor '%s' is %" PRId64 " wide, not --d-model %d", a->weights,
                   name, j->wcols, a->d_model);
        return POSENC_EXIT_ERROR;
    }
    if (a->positions) {
        for (size_t i = 0; i < a->n_positions; i++)
            if (a->positions[i] < 0 || a->positions[i] >= j->wrows) {
                posenc_msg(CMD, "'%s': position %" PRId64 " is past the %" PRId64
                                " rows of the learned table", a->weights, a->positions[i],
                           j->wrows);
                return POSENC_EXIT_ERROR;
            }
        if ((rc = load_weights(j, names, a->tensor ? prefixes_exact : prefixes_model, NULL)))
            return rc;
        if ((rc = plan_positions(j)))
            return rc;
    } else {
        j->nq = a->seq_len ? a->seq_len : j->wrows;
        if (j->nq > j->wrows) {
            posenc_msg(CMD, "'%s': --seq-len %" PRId64 " is past the %" PRId64
                            " rows of the learned table", a->weights, j->nq, j->wrows);
            return POSENC_EXIT_ERROR;
        }
    }
    meta_common(j);
    posenc_meta_str(&j->mt, "weights", a->weights);
    posenc_meta_str(&j->mt, "tensor", name);
    posenc_meta_int(&j->mt, "d_model", j->wcols);
    posenc_meta_int(&j->mt, "n_positions", j->nq);
    j->narr = 1;
    set_info(&j->arr[0], "pe", a->dtype, 2, j->nq, j->wcols, 0);
    j->emit = emit_learned;
    return run(j, "a smaller --seq-len");
}

/* ---------------------------------------------------------------- dispatch */

int gen_nonrope(const struct gen_args *a, const posenc_model *m)
{
    struct job *j = calloc(1, sizeof *j);
    int rc;
    if (!j) {
        posenc_msg(CMD, "out of memory");
        return POSENC_EXIT_ERROR;
    }
    j->a = a;
    j->m = m;
    j->bc = m ? posenc_model_bias(m) : NULL;
    j->enc = posenc_encoding_name(a->encoding);
    switch (a->encoding) {
    case POSENC_ENC_ALIBI: rc = gen_alibi(j); break;
    case POSENC_ENC_T5: rc = gen_t5(j); break;
    case POSENC_ENC_SHAW: rc = gen_shaw(j); break;
    case POSENC_ENC_SINUSOIDAL: rc = gen_sinusoidal(j); break;
    case POSENC_ENC_LEARNED: rc = gen_learned(j); break;
    case POSENC_ENC_NONE:
        posenc_msg(CMD, "%s%s%suses no position encoding (NoPE): there is no table to generate",
                   a->config ? "'" : "", a->config ? a->config : "", a->config ? "' " : "");
        rc = POSENC_EXIT_ERROR;
        break;
    default:
        posenc_msg(CMD, "%s is not a non-rotary encoding", j->enc);
        rc = POSENC_EXIT_ERROR;
        break;
    }
    posenc_meta_free(&j->mt);
    free(j->qpos);
    free(j->weights);
    free(j->buf);
    posenc_sinusoidal_free(j->sin);
    if (j->w)
        posenc_writer_abort(j->w);
    free(j);
    return rc;
}
