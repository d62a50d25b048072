/* cmd/apply.c: posenc apply: rotate Q/K dumps by RoPE exactly as the model does, streaming.
 *
 * Inputs are streamed through formats/applyrun.c (chunks of whole head vectors, rotated by
 * lib/apply.c, written through the formats layer: temporary file + rename on commit). One dump,
 * a Q/K pair, or every q/k pair of a multi-layer container (formats/pairs.c) in one run. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "applyrun.h"
#include "opts.h"
#include "pairs.h"
#include "posenc/apply.h"
#include "posenc/vllm.h"

#define CMD "apply"
#define POS_END (INT64_C(1) << 31)           /* positions lie in [0, 2^31) */

/* ---- names and paths ---- */

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* "a/b/q.npy" -> stem "q", ext ".npy", dir "a/b/" (pointers into / copies of path) */
static void split_name(const char *path, char *dir, size_t dlen, char *stem, size_t slen,
                       char *ext, size_t elen)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(dir, dlen, "%.*s", (int)(base - path), path);
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = base + strlen(base);
    snprintf(stem, slen, "%.*s", (int)(dot - base), base);
    snprintf(ext, elen, "%s", dot);
}

/* member "/layer0/q" -> "layer0_q" */
static void clean_member(const char *m, char *out, size_t len)
{
    while (*m == '/')
        m++;
    snprintf(out, len, "%.250s", m);
    for (char *c = out; *c; c++)
        if (*c == '/' || *c == ':')
            *c = '_';
}

/* JSON string literal of s into buf */
static void json_str(const char *s, char *buf, size_t len)
{
    size_t o = 0;
    if (len < 3)
        return;
    buf[o++] = '"';
    for (; *s && o + 8 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(buf + o, len - o, "\\u%04x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
}

/* ---- positions ---- */

struct positions {
    pe_positions *list;        /* --positions, or NULL */
    const int64_t *values;     /* its values (borrowed from list); NULL: offset + s */
    int64_t offset;
    int64_t rows;
    int naxes;
    int64_t max;               /* largest position */
};

/* Fill pos from --positions / --offset for a dump of batch entries and seq tokens. Returns 0 or
 * an exit status (message printed). A list is counted against seq before it is expanded. */
static int load_positions(const char *arg, int64_t offset, int mrope, int64_t batch, int64_t seq,
                          struct positions *pos)
{
    memset(pos, 0, sizeof *pos);
    pos->rows = 1;
    pos->naxes = 1;
    if (!arg) {
        if (offset + seq > POS_END)
            return cmd_usage_error(CMD, "--offset: positions %" PRId64 " to %" PRId64
                                           " exceed 2^31 - 1", offset, offset + seq - 1);
        pos->offset = offset;
        pos->max = seq ? offset + seq - 1 : offset;
        return 0;
    }
    pe_positions *pp;
    int rc = cmd_parse_positions(CMD, arg, POS_END, UINT64_MAX, &pp);
    if (rc)
        return rc;
    int file = pp->from_file, ndim = pp->ndim;
    const int64_t *shape = pp->shape;
    if (!file && pp->count != (uint64_t)seq) {
        uint64_t n = pp->count;
        pe_positions_free(pp);
        return cmd_usage_error(CMD, "--positions: %" PRIu64 " position%s for a sequence of %"
                                       PRId64 " token%s", n, n == 1 ? "" : "s", seq,
                                  seq == 1 ? "" : "s");
    }
    /* which shape is it */
    int ok = 0;
    if (ndim == 1 && shape[0] == seq) {
        ok = 1;
    } else if (ndim == 2 && mrope && shape[0] == 3 && shape[1] == seq) {
        pos->naxes = 3;
        ok = 1;
    } else if (ndim == 2 && shape[1] == seq && (shape[0] == batch || shape[0] == 1)) {
        pos->rows = shape[0];
        ok = 1;
    } else if (ndim == 3 && mrope && shape[0] == 3 && shape[2] == seq &&
               (shape[1] == batch || shape[1] == 1)) {
        pos->naxes = 3;
        pos->rows = shape[1];
        ok = 1;
    }
    if (!ok && !mrope && ndim >= 2 && shape[0] == 3 && shape[ndim - 1] == seq) {
        cmd_msg(CMD, "'%s': 3-axis (t, h, w) positions need a multimodal (mrope) RoPE config",
                   arg);
        pe_positions_free(pp);
        return CMD_EXIT_ERROR;
    }
    if (!ok) {
        char buf[160];
        posenc_shape_str(ndim, shape, buf, sizeof buf);
        cmd_msg(CMD, "'%s': positions of shape %s do not fit batch %" PRId64 " and seq %" PRId64
                   " (expected [seq], [batch, seq]%s)", arg, buf, batch, seq,
                   mrope ? ", [3, seq] or [3, batch, seq]" : "");
        pe_positions_free(pp);
        return CMD_EXIT_ERROR;
    }
    posenc_error err = { 0 };
    if (pe_positions_values(pp, &pos->values, &err) != POSENC_OK) {
        pe_positions_free(pp);
        return cmd_fail(CMD, &err);
    }
    /* every value is in [0, 2^31): checked by the parser */
    pos->list = pp;
    pos->max = pp->max;
    return 0;
}

/* "'FILE': " before a message that does not name a file yet */
static void prefix_file(posenc_error *e, const char *file)
{
    if (e->msg[0] != '\'')
        posenc_error_prefix(e, e->code, "'%s': ", file);
}

/* The metadata every apply output carries. */
static posenc_status write_meta(posenc_writer *w, const char *config, posenc_style style,
                                posenc_precision prec, int inverse, posenc_error *err)
{
    char cj[4200];
    json_str(config, cj, sizeof cj);
    const char *kv[][2] = {
        { "posenc_apply_config", cj },
        { "posenc_apply_style", style == POSENC_STYLE_GPTJ ? "\"gptj\"" : "\"neox\"" },
        { "posenc_apply_precision", prec == POSENC_PREC_HF     ? "\"hf\""
                                    : prec == POSENC_PREC_VLLM ? "\"vllm\""
                                    : prec == POSENC_PREC_GGML ? "\"ggml\""
                                                               : "\"exact\"" },
        { "posenc_apply_inverse", inverse ? "true" : "false" },
    };
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++)
        if (posenc_writer_meta(w, kv[k][0], kv[k][1], err) != POSENC_OK)
            return err ? err->code : POSENC_EIO;
    return POSENC_OK;
}

/* ---- every q/k pair of a container ---- */

/* What the pair run takes from the options. */
struct popts {
    const char *config, *outp, *layer_type, *positions_arg, *glob;
    posenc_apply_layout layout;
    posenc_style style;
    int style_set, inverse, dtype_set, force;
    posenc_precision prec;
    int64_t seq_len, offset, max_model_len;
    posenc_dtype out_dtype;
    posenc_write_opts wopts;
};

#define MAX_AP 32 /* distinct (layer type, dtype) rotations of one run */

/* Rotate every q/k pair of the open container c (path: its file) into one output that keeps the
 * member names; a pair on a layer without RoPE is copied unchanged. Returns the exit status. */
static int apply_pairs(const struct popts *o, posenc_model *model, posenc_container *c,
                       const char *path)
{
    posenc_error err = { 0 };
    int rc = CMD_EXIT_ERROR;
    pe_pairs *pp = NULL;
    pe_apply_job *jobs = NULL;
    posenc_writer *w = NULL;
    char *outpath = NULL;
    struct positions pos = { 0 };
    struct {
        const char *lt;
        posenc_dtype dt;
        posenc_apply *ap;
    } aps[MAX_AP];
    size_t naps = 0;
    pe_strbuf layers = { 0 };

    if (pe_pairs_find(c, path, o->glob, &pp, &err) != POSENC_OK) {
        rc = err.code == POSENC_EINVAL ? cmd_usage_error(CMD, "%s", err.msg)
                                       : cmd_fail(CMD, &err);
        goto out;
    }
    if (pe_pairs_layers(pp, model, o->layer_type, path, &err) != POSENC_OK)
        goto fail;
    size_t nj = 2 * pp->n;
    if (!(jobs = calloc(nj, sizeof *jobs)))
        goto nomem;
    uint64_t total = 0;
    for (size_t i = 0; i < nj; i++) {
        const pe_pair *pr = &pp->v[i / 2];
        pe_apply_job *j = &jobs[i];
        j->c = c;
        j->index = i % 2 ? pr->k : pr->q;
        const posenc_array_info *ai = posenc_container_array(c, j->index);
        if (!(ai->dtype <= POSENC_DT_F64)) {
            posenc_seterr(&err, POSENC_EUNSUPPORTED, "'%s': '%s': cannot rotate %s data (need "
                          "f16, bf16, f32 or f64)", path, ai->name, posenc_dtype_name(ai->dtype));
            goto fail;
        }
        if (posenc_apply_shape_of(o->layout, ai->ndim, ai->shape, &j->sh, &err) != POSENC_OK) {
            posenc_error_prefix(&err, err.code, "'%s': '%s': ", path, ai->name);
            goto fail;
        }
        /* k against its q; every q against the first: one batch and sequence for the run */
        const pe_apply_job *ref = &jobs[i % 2 ? i - 1 : 0];
        if (ref->sh.batch != j->sh.batch || ref->sh.seq != j->sh.seq ||
            (i % 2 && ref->sh.head_dim != j->sh.head_dim)) {
            char sa[160], sb[160];
            const posenc_array_info *ia = posenc_container_array(c, ref->index);
            posenc_seterr(&err, POSENC_EMISMATCH, "'%s': '%s' %s and '%s' %s disagree on %s "
                          "(layout %s)", path, ia->name,
                          posenc_shape_str(ia->ndim, ia->shape, sa, sizeof sa), ai->name,
                          posenc_shape_str(ai->ndim, ai->shape, sb, sizeof sb),
                          i % 2 ? "batch, seq or head_dim" : "batch or seq",
                          posenc_apply_layout_name(o->layout));
            goto fail;
        }
        j->in_dt = ai->dtype;
        j->out_dt = o->dtype_set ? o->out_dtype : ai->dtype;
        j->nvec = posenc_apply_shape_vectors(&j->sh);
        j->D = (size_t)j->sh.head_dim;
        uint64_t ne, nb;
        if (posenc_shape_size(ai->ndim, ai->shape, j->out_dt, &ne, &nb, &err) != POSENC_OK)
            goto fail;
        total += nb;
    }
    if (total > ((uint64_t)4 << 30) && !o->force) {
        cmd_msg(CMD, "'%s': the output would be %.1f GiB, over the 4 GiB limit; pass "
                        "--force", o->outp ? o->outp : path,
                   (double)total / (double)((uint64_t)1 << 30));
        goto out;
    }

    /* positions: one forward pass, shared by every layer */
    int mrope = 0;
    for (size_t i = 0; i < pp->n; i++) {
        posenc_rope_config rcfg;
        if (!pp->v[i].nope && posenc_model_rope(model, pp->v[i].layer_type, &rcfg, &err) != POSENC_OK) {
            rc = cmd_rope_fail(CMD, model, &err);
            goto out;
        }
        mrope |= !pp->v[i].nope && rcfg.n_mrope_section == 3;
    }
    if ((rc = load_positions(o->positions_arg, o->offset, mrope, jobs[0].sh.batch,
                             jobs[0].sh.seq, &pos)))
        goto out;
    rc = CMD_EXIT_ERROR;
    posenc_apply_positions apos = { pos.values, pos.offset, pos.rows, pos.naxes };
    posenc_style style0 = POSENC_STYLE_NEOX;
    int have_style = 0;
    for (size_t i = 0; i < nj; i++) {
        const pe_pair *pr = &pp->v[i / 2];
        pe_apply_job *j = &jobs[i];
        if (pr->nope)
            continue;
        size_t a;
        for (a = 0; a < naps; a++)
            if (aps[a].dt == j->in_dt && (aps[a].lt == pr->layer_type ||
                                          (aps[a].lt && pr->layer_type &&
                                           strcmp(aps[a].lt, pr->layer_type) == 0)))
                break;
        if (a == naps) {
            posenc_rope_config rcfg;
            posenc_rope_params params;
            if (naps == MAX_AP) {
                posenc_seterr(&err, POSENC_ERANGE, "'%s': more than %d layer types and dtypes",
                              path, MAX_AP);
                goto fail;
            }
            if (posenc_model_rope(model, pr->layer_type, &rcfg, &err) != POSENC_OK)
                goto fail;
            if (o->style_set)
                rcfg.style = o->style;
            posenc_vllm_info vi;
            if (posenc_rope_params_for(&rcfg, o->prec, posenc_model_family(model),
                                       o->seq_len ? o->seq_len : pos.max + 1, o->max_model_len,
                                       &params, &vi, &err) != POSENC_OK) {
                prefix_file(&err, o->config);
                goto fail;
            }
            if (o->prec == POSENC_PREC_VLLM && pos.max >= vi.cache_len) {
                posenc_seterr(&err, POSENC_ERANGE, "'%s': position %" PRId64 " is past vLLM's "
                              "cos_sin_cache (%s: %" PRId64 " rows)", o->config, pos.max, vi.cls,
                              vi.cache_len);
                goto fail;
            }
            if (o->prec == POSENC_PREC_VLLM && vi.note[0] && naps == 0)
                cmd_msg(CMD, "'%s': %s", o->config, vi.note);
            if (o->prec == POSENC_PREC_GGML &&
                (rc = cmd_ggml_params(CMD, o->config, model, pr->layer_type,
                                      o->seq_len ? o->seq_len : pos.max + 1, &params)) != 0)
                goto out;
            rc = CMD_EXIT_ERROR;
            if (pos.naxes == 3 && !params.mrope) {
                posenc_seterr(&err, POSENC_EINVAL, "'%s': 3-axis positions need a multimodal "
                              "(mrope) RoPE config, and layer type '%s' of '%s' has none",
                              o->positions_arg, pr->layer_type ? pr->layer_type : "",
                              o->config);
                goto fail;
            }
            style0 = have_style ? style0 : params.style;
            have_style = 1;
            posenc_apply_opts ao = { o->prec, o->inverse, j->in_dt };
            if (posenc_apply_new(&params, &ao, &apos, j->sh.seq, cmd_nthreads(), &aps[a].ap,
                                 &err) != POSENC_OK) {
                prefix_file(&err, o->config);
                goto fail;
            }
            aps[a].lt = pr->layer_type;
            aps[a].dt = j->in_dt;
            naps++;
        }
        j->ap = aps[a].ap;
        if (posenc_apply_check(j->ap, &j->sh, &err) != POSENC_OK) {
            posenc_error_prefix(&err, err.code, "'%s': '%s': ", path,
                                posenc_container_array(c, j->index)->name);
            goto fail;
        }
    }

    /* one output for the container: X.EXT -> X.rope.EXT beside it, or -o */
    if (o->outp) {
        if (!(outpath = xstrdup(o->outp)))
            goto nomem;
    } else {
        char dir[4096], stem[1024], ext[64];
        split_name(path, dir, sizeof dir, stem, sizeof stem, ext, sizeof ext);
        size_t len = strlen(dir) + strlen(stem) + strlen(ext) + 16;
        if (!(outpath = malloc(len)))
            goto nomem;
        snprintf(outpath, len, "%s%s.rope%s", dir, stem, ext[0] ? ext : ".npz");
    }
    {
        const char *ins[] = { o->config, path, o->positions_arg };
        const char *outs[] = { outpath };
        if ((rc = cmd_check_outputs(CMD, outs, 1, ins, sizeof ins / sizeof *ins)))
            goto out;
        rc = CMD_EXIT_ERROR;
    }
    posenc_write_opts wo = o->wopts;
    if (wo.format == POSENC_FMT_AUTO)
        wo.format = posenc_format_guess(outpath);
    if (wo.format == POSENC_FMT_AUTO)
        wo.format = POSENC_FMT_DIR;
    if (posenc_format_one_array(wo.format) || wo.format == POSENC_FMT_CHEADER) {
        posenc_seterr(&err, POSENC_EINVAL, "'%s': %zu q/k pairs need a container output (.npz, "
                      ".h5, .safetensors or a directory)", outpath, pp->n);
        goto fail;
    }
    if (posenc_writer_open(outpath, &wo, &w, &err) != POSENC_OK)
        goto fail;
    /* which parameters each pair got: {"group": "layer type" | "rope" | "none"} */
    pe_strbuf_puts(&layers, "{");
    for (size_t i = 0; i < pp->n; i++) {
        const pe_pair *pr = &pp->v[i];
        pe_strbuf_puts(&layers, i ? ", " : "");
        pe_strbuf_json_string(&layers, pr->group);
        pe_strbuf_puts(&layers, ": ");
        pe_strbuf_json_string(&layers, pr->nope ? "none" : pr->layer_type ? pr->layer_type
                                                                              : "rope");
        if (pr->nope)
            cmd_msg(CMD, "'%s': '%s' is layer %lld, which has no RoPE: copied unchanged",
                       path, pe_pairs_label(pr), (long long)pr->layer);
    }
    pe_strbuf_puts(&layers, "}");
    if (pp->n_other)
        cmd_msg(CMD, "'%s': %zu member%s in no q/k pair %s not written ('%s'%s)", path,
                   pp->n_other, pp->n_other == 1 ? "" : "s", pp->n_other == 1 ? "is" : "are",
                   pp->other, pp->n_other > 1 ? ", ..." : "");
    if (layers.oom || write_meta(w, o->config, style0, o->prec, o->inverse, &err) != POSENC_OK ||
        posenc_writer_meta(w, "posenc_apply_layers", layers.p, &err) != POSENC_OK)
        goto fail;
    for (size_t i = 0; i < nj; i++) {
        posenc_array_info info = *posenc_container_array(c, jobs[i].index);
        /* "/layer0/q" -> "layer0/q": the same path in HDF5, a flat name elsewhere */
        if (info.name[0] == '/')
            memmove(info.name, info.name + 1, strlen(info.name));
        info.dtype = jobs[i].out_dt;
        if (posenc_writer_declare(w, &info, &err) != POSENC_OK)
            goto fail;
        jobs[i].w = w;
    }
    /* a library that is not thread-safe (HDF5's) keeps its reads and writes on one thread */
    int threaded = cmd_nthreads() > 1 &&
                   posenc_format_thread_safe(posenc_container_format(c)) &&
                   posenc_format_thread_safe(posenc_writer_format(w));
    if (pe_apply_run(jobs, nj, threaded, &err) != POSENC_OK)
        goto fail;
    posenc_status st = posenc_writer_commit(w, &err);
    w = NULL;
    if (st != POSENC_OK)
        goto fail;
    rc = CMD_EXIT_OK;
    goto out;
nomem:
    posenc_seterr(&err, POSENC_ENOMEM, "out of memory");
fail:
    rc = cmd_fail(CMD, &err);
out:
    posenc_writer_abort(w);
    for (size_t a = 0; a < naps; a++)
        posenc_apply_free(aps[a].ap);
    free(jobs);
    free(outpath);
    free(layers.p);
    pe_positions_free(pos.list);
    pe_pairs_free(pp);
    return rc;
}

/* ---- the command ---- */

enum { OPT_INVERSE = 256 };

static const struct cmd_opt apply_opts[] = {
    CMD_OPT_GROUP("options:"),
    { .id = CMD_O_CONFIG },
    { .id = CMD_O_OUTPUT },
    { .id = CMD_O_FORMAT, .arg = "FMT",
      .help = "output format: npy, npz, dir, hdf5, safetensors" },
    { .id = CMD_O_DUMP_LAYOUT },
    { .id = CMD_O_STYLE },
    { .id = CMD_O_PRECISION,
      .help = "exact (default), hf (transformers' float32 tables;\n"
              "f16/bf16 arithmetic rounded as torch does), vllm\n"
              "(vLLM's cos_sin_cache, cast to an f16/bf16 dump's dtype\n"
              "and rotated in it, as forward_native does) or ggml\n"
              "(llama.cpp's CPU tables and float32 rotation)" },
    { .id = CMD_O_MAX_MODEL_LEN },
    { .id = CMD_O_LAYER_TYPE },
    { .id = CMD_O_FAMILY },
    { .id = CMD_O_SEQ_LEN, .help = "sequence length for dynamic/longrope selection\n"
                                   "(default: largest position + 1)" },
    { .id = CMD_O_OFFSET },
    { .id = CMD_O_POSITIONS,
      .help = "positions: a list like 0-15,100 or a file of integers\n"
              "shaped [seq], [batch, seq], [3, seq] or [3, batch, seq]" },
    { OPT_INVERSE, "inverse", 0, NULL, CMD_T_FLAG, 0, 0, "rotate by -position (undo a rotation)",
      NULL },
    { .id = CMD_O_DTYPE, .help = "output dtype f16, bf16, f32, f64 (default: input's)" },
    { .id = CMD_O_ASSUME_BF16 },
    { .id = CMD_O_FORCE },
    { .id = CMD_O_PAIRS },
    { .id = CMD_O_QUIET },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_apply_spec = {
    "apply",
    "usage: posenc apply Q K --config FILE [-o OUT] [options]\n"
    "   or: posenc apply X --config FILE [-o OUT] [options]\n"
    "   or: posenc apply DUMPS --config FILE [-o OUT] [--pairs GLOB] [options]\n"
    "\n"
    "Rotate query/key dumps (any readable format; '-' = NPY on stdin) by RoPE as the\n"
    "model does. OUT: .npz, .h5 or .safetensors holding q and k, a directory receiving\n"
    "q.npy and k.npy, or '-' (one tensor as NPY on stdout). Without -o each input X.EXT\n"
    "is written to X.rope.EXT beside it. DUMPS, a container of several arrays, has\n"
    "every q/k pair (members whose last component is q/k, query/key, q_proj/k_proj or\n"
    "query_states/key_states, grouped by the rest of the path) rotated into one OUT\n"
    "that keeps the member names; a layer index in the group (layer0, layers.12)\n"
    "picks the layer's RoPE parameters from the config's layer_types, and a layer\n"
    "without RoPE is copied unchanged.\n"
    "\n",
    26, apply_opts
};

int cmd_apply(int argc, char **argv)
{
    const char *config = NULL, *outp = NULL, *layer_type = NULL, *positions_arg = NULL,
               *family = NULL, *glob = NULL;
    posenc_apply_layout layout = POSENC_APPLY_BHSD;
    posenc_style style = POSENC_STYLE_NEOX;
    int style_set = 0, inverse = 0, dtype_set = 0, offset_set = 0, force = 0;
    posenc_precision prec = POSENC_PREC_EXACT;
    int64_t seq_len = 0, offset = 0, max_model_len = 0;
    posenc_dtype out_dtype = POSENC_DT_F32;
    posenc_read_opts ropts = { 0, POSENC_FMT_AUTO };
    posenc_write_opts wopts = { POSENC_FMT_AUTO, 0 };
    posenc_error err = { 0 };
    int c;

    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_apply_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_CONFIG: config = p.arg; break;
        case CMD_O_OUTPUT: outp = p.arg; break;
        case CMD_O_FORMAT: wopts.format = p.format; break;
        case CMD_O_DUMP_LAYOUT: layout = p.dump_layout; break;
        case CMD_O_STYLE: style = p.style; style_set = 1; break;
        case CMD_O_PRECISION: prec = p.precision; break;
        case CMD_O_LAYER_TYPE: layer_type = p.arg; break;
        case CMD_O_FAMILY: family = p.arg; break;
        case CMD_O_SEQ_LEN: seq_len = p.i64; break;
        case CMD_O_OFFSET: offset = p.i64; offset_set = 1; break;
        case CMD_O_POSITIONS: positions_arg = p.arg; break;
        case CMD_O_MAX_MODEL_LEN: max_model_len = p.i64; break;
        case OPT_INVERSE: inverse = 1; break;
        case CMD_O_DTYPE:
            out_dtype = p.dtype;
            if (!posenc_dtype_is_float(out_dtype))
                return cmd_usage_error(CMD, "--dtype: '%s' is not a float dtype "
                                               "(f16, bf16, f32, f64)", p.arg);
            dtype_set = 1;
            break;
        case CMD_O_ASSUME_BF16: ropts.assume_bf16 = 1; break;
        case CMD_O_FORCE: force = 1; break;
        case CMD_O_QUIET: cmd_progress_quiet(); break;
        case CMD_O_PAIRS: glob = p.arg; break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (max_model_len && prec != POSENC_PREC_VLLM)
        return cmd_usage_error(CMD, "--max-model-len applies only to --precision vllm");
    int nin = argc - p.optind;
    if (nin < 1 || nin > 2)
        return cmd_usage_error(CMD, nin < 1 ? "need Q and K dumps (or one dump X)"
                                              : "too many arguments: give Q and K, or one dump");
    if (!config)
        return cmd_usage_error(CMD, "--config FILE is required");
    if (positions_arg && offset_set)
        return cmd_usage_error(CMD, "--positions and --offset exclude each other");
    const char *in[2] = { argv[p.optind], nin == 2 ? argv[p.optind + 1] : NULL };
    {
        /* one container of several arrays and no member named: every q/k pair in it */
        char ipath[4096], imember[POSENC_NAME_MAX];
        posenc_container *ct = NULL;
        posenc_error e2 = { 0 };
        if (nin == 1 && strcmp(in[0], "-") != 0 &&
            posenc_spec_split(in[0], ipath, sizeof ipath, imember, sizeof imember, &e2) ==
                POSENC_OK && !imember[0] &&
            posenc_container_open(ipath, &ropts, &ct, &e2) == POSENC_OK &&
            (posenc_container_count(ct) > 1 || glob)) {
            if (!config) {
                posenc_container_close(ct);
                return cmd_usage_error(CMD, "--config FILE is required");
            }
            if (positions_arg && offset_set) {
                posenc_container_close(ct);
                return cmd_usage_error(CMD, "--positions and --offset exclude each other");
            }
            posenc_model *pm = NULL;
            struct popts po = { config, outp, layer_type, positions_arg, glob, layout, style,
                                style_set, inverse, dtype_set, force, prec, seq_len, offset,
                                max_model_len, out_dtype, wopts };
            int prc = cmd_load_config(CMD, config, family, &pm);
            if (prc == 0)
                prc = apply_pairs(&po, pm, ct, ipath);
            posenc_model_free(pm);
            posenc_container_close(ct);
            return prc;
        }
        posenc_container_close(ct);
    }
    if (glob)
        return cmd_usage_error(CMD, "--pairs needs one container (.h5, .npz, .safetensors, "
                                       "a directory) without a member name");
    if (nin == 2 && strcmp(in[0], "-") == 0 && strcmp(in[1], "-") == 0)
        return cmd_usage_error(CMD, "only one input can be '-' (stdin)");
    if (!outp && (strcmp(in[0], "-") == 0 || (in[1] && strcmp(in[1], "-") == 0)))
        return cmd_usage_error(CMD, "reading stdin needs -o OUT");
    if (outp && nin == 2 && strcmp(outp, "-") == 0)
        return cmd_usage_error(CMD, "'-o -' writes one tensor; give one dump or an .npz, "
                                       ".h5, .safetensors or directory OUT");

    int rc = CMD_EXIT_ERROR;
    posenc_model *model = NULL;
    pe_apply_job jobs[2];
    memset(jobs, 0, sizeof jobs);
    posenc_writer *writers[2] = { NULL, NULL };
    posenc_apply *aps[2] = { NULL, NULL };
    struct positions pos = { 0 };
    char *outpaths[2] = { NULL, NULL };
    int nwriters = 0;

    /* config */
    if ((rc = cmd_load_config(CMD, config, family, &model)) != 0)
        goto out;
    posenc_rope_config rcfg;
    if (posenc_model_rope(model, layer_type, &rcfg, &err) != POSENC_OK) {
        rc = cmd_rope_fail(CMD, model, &err);
        goto out;
    }
    if (style_set)
        rcfg.style = style;

    /* inputs */
    for (int i = 0; i < nin; i++) {
        pe_apply_job *j = &jobs[i];
        if (posenc_reader_open(in[i], &ropts, &j->r, &err) != POSENC_OK)
            goto fail;
        const posenc_array_info *ai = posenc_reader_info(j->r);
        if (!(ai->dtype <= POSENC_DT_F64)) {
            posenc_seterr(&err, POSENC_EUNSUPPORTED, "'%s': cannot rotate %s data "
                          "(need f16, bf16, f32 or f64)", in[i], posenc_dtype_name(ai->dtype));
            goto fail;
        }
        if (posenc_apply_shape_of(layout, ai->ndim, ai->shape, &j->sh, &err) != POSENC_OK) {
            prefix_file(&err, in[i]);
            goto fail;
        }
        j->in_dt = ai->dtype;
        j->out_dt = dtype_set ? out_dtype : ai->dtype;
        j->nvec = posenc_apply_shape_vectors(&j->sh);
        j->D = (size_t)j->sh.head_dim;
    }
    if (nin == 2) {
        const posenc_apply_shape *a = &jobs[0].sh, *b = &jobs[1].sh;
        if (a->batch != b->batch || a->seq != b->seq || a->head_dim != b->head_dim) {
            char sa[160], sb[160];
            const posenc_array_info *ia = posenc_reader_info(jobs[0].r),
                                    *ib = posenc_reader_info(jobs[1].r);
            posenc_seterr(&err, POSENC_EMISMATCH,
                          "'%s' %s and '%s' %s disagree on batch, seq or head_dim (layout %s)",
                          in[0], posenc_shape_str(ia->ndim, ia->shape, sa, sizeof sa), in[1],
                          posenc_shape_str(ib->ndim, ib->shape, sb, sizeof sb),
                          posenc_apply_layout_name(layout));
            goto fail;
        }
    }

    {
        /* the output size from the declared shapes, before anything is read or written */
        uint64_t total = 0;
        for (int i = 0; i < nin; i++) {
            const posenc_array_info *ai = posenc_reader_info(jobs[i].r);
            uint64_t ne, nb;
            if (posenc_shape_size(ai->ndim, ai->shape, dtype_set ? out_dtype : ai->dtype, &ne,
                                  &nb, &err) != POSENC_OK)
                goto fail;
            total += nb;
        }
        if (total > ((uint64_t)4 << 30) && !force) {
            cmd_msg(CMD, "'%s': the output would be %.1f GiB, over the 4 GiB limit; pass "
                            "--force", outp ? outp : in[0],
                       (double)total / (double)((uint64_t)1 << 30));
            rc = CMD_EXIT_ERROR;
            goto out;
        }
    }
    /* positions and parameters */
    rc = load_positions(positions_arg, offset, rcfg.n_mrope_section == 3, jobs[0].sh.batch,
                        jobs[0].sh.seq, &pos);
    if (rc)
        goto out;
    rc = CMD_EXIT_ERROR;
    posenc_rope_params params;
    posenc_vllm_info vi;
    if (posenc_rope_params_for(&rcfg, prec, posenc_model_family(model),
                               seq_len ? seq_len : pos.max + 1, max_model_len, &params, &vi,
                               &err) != POSENC_OK) {
        prefix_file(&err, config);
        goto fail;
    }
    if (prec == POSENC_PREC_VLLM && pos.max >= vi.cache_len) {
        posenc_seterr(&err, POSENC_ERANGE, "'%s': position %" PRId64 " is past vLLM's "
                      "cos_sin_cache (%s: %" PRId64 " rows)", config, pos.max, vi.cls,
                      vi.cache_len);
        goto fail;
    }
    if (prec == POSENC_PREC_VLLM && vi.note[0])
        cmd_msg(CMD, "'%s': %s", config, vi.note);
    if (prec == POSENC_PREC_GGML &&
        (rc = cmd_ggml_params(CMD, config, model, layer_type, seq_len ? seq_len : pos.max + 1,
                              &params)) != CMD_EXIT_OK)
        goto out;
    rc = CMD_EXIT_ERROR;
    if (pos.naxes == 3 && !params.mrope) {
        posenc_seterr(&err, POSENC_EINVAL, "'%s': 3-axis positions need a multimodal (mrope) "
                      "RoPE config, and '%s' has none", positions_arg, config);
        goto fail;
    }
    posenc_apply_positions ap = { pos.values, pos.offset, pos.rows, pos.naxes };
    for (int i = 0; i < nin; i++) {
        if (i == 1 && jobs[1].in_dt == jobs[0].in_dt) {
            jobs[1].ap = aps[0];
        } else {
            posenc_apply_opts o = { prec, inverse, jobs[i].in_dt };
            if (posenc_apply_new(&params, &o, &ap, jobs[i].sh.seq, cmd_nthreads(), &aps[i],
                                 &err) != POSENC_OK) {
                prefix_file(&err, config);
                goto fail;
            }
            jobs[i].ap = aps[i];
        }
        if (posenc_apply_check(jobs[i].ap, &jobs[i].sh, &err) != POSENC_OK) {
            prefix_file(&err, in[i]);
            goto fail;
        }
    }

    /* outputs */
    char inpath[2][4096], member[2][POSENC_NAME_MAX];
    for (int i = 0; i < nin; i++)
        if (posenc_spec_split(in[i], inpath[i], sizeof inpath[i], member[i], sizeof member[i],
                              &err) != POSENC_OK)
            goto fail;
    char names[2][POSENC_NAME_MAX];
    for (int i = 0; i < nin; i++) {
        char dir[4096], stem[1024], ext[64];
        split_name(inpath[i], dir, sizeof dir, stem, sizeof stem, ext, sizeof ext);
        if (nin == 2 && outp) {
            snprintf(names[i], sizeof names[i], "%s", i == 0 ? "q" : "k");
        } else if (member[i][0]) {
            clean_member(member[i], names[i], sizeof names[i]);
        } else if (posenc_reader_info(jobs[i].r)->name[0]) {
            snprintf(names[i], sizeof names[i], "%s", posenc_reader_info(jobs[i].r)->name);
        } else {
            snprintf(names[i], sizeof names[i], "%.250s", strcmp(in[i], "-") == 0 ? "x" : stem);
        }
        if (!outp) {
            /* X.EXT -> X.rope.EXT; F.EXT:M -> F.M.rope.npy; no extension -> X.rope.npy */
            size_t len = strlen(dir) + strlen(stem) + strlen(names[i]) + strlen(ext) + 16;
            if (!(outpaths[i] = malloc(len)))
                goto nomem;
            if (member[i][0])
                snprintf(outpaths[i], len, "%s%s.%s.rope.npy", dir, stem, names[i]);
            else if (ext[0] && posenc_format_guess(inpath[i]) != POSENC_FMT_AUTO)
                snprintf(outpaths[i], len, "%s%s.rope%s", dir, stem, ext);
            else
                snprintf(outpaths[i], len, "%s%s%s.rope.npy", dir, stem, ext);
        }
    }
    if (outp) {
        if (!(outpaths[0] = xstrdup(outp)))
            goto nomem;
    }
    nwriters = outp ? 1 : nin;
    if (nwriters == 2 && strcmp(outpaths[0], outpaths[1]) == 0) {
        posenc_seterr(&err, POSENC_EINVAL, "'%s' and '%s' would both be written to '%s'; "
                      "give -o OUT", in[0], in[1], outpaths[0]);
        goto fail;
    }
    {
        /* every output (with its sidecar or meta.json) against every input, before writing */
        const char *ins[] = { config, in[0], in[1], positions_arg };
        const char *outs[] = { outpaths[0], outpaths[1] };
        if ((rc = cmd_check_outputs(CMD, outs, (size_t)nwriters, ins, sizeof ins / sizeof *ins)))
            goto out;
        rc = CMD_EXIT_ERROR;
    }
    for (int w = 0; w < nwriters; w++) {
        posenc_write_opts wo = wopts;
        if (wo.format == POSENC_FMT_AUTO)
            wo.format = posenc_format_guess(outpaths[w]);
        if (wo.format == POSENC_FMT_AUTO) {
            /* a new directory receiving q.npy and k.npy, but only for a name without an
             * extension: 'rotated.npzz' is a typo, not a directory to create */
            const char *base = strrchr(outpaths[w], '/');
            base = base ? base + 1 : outpaths[w];
            if (nin == 2 && !strchr(base + 1, '.')) {
                wo.format = POSENC_FMT_DIR;
            } else {
                rc = cmd_usage_error(CMD, "'%s': cannot tell the output format from the name; "
                                        "pass --format or end it in .npz, .npy, .h5, "
                                        ".safetensors, .bin or /%s", outpaths[w],
                                        nin == 2 ? " (or give a new directory's name)" : "");
                goto out;
            }
        }
        int narr = outp ? nin : 1;
        if (narr == 2 && posenc_format_one_array(wo.format)) {
            posenc_seterr(&err, POSENC_EINVAL, "'%s': an NPY file holds one array; write Q and K "
                          "to an .npz, .h5, .safetensors or a directory", outpaths[w]);
            goto fail;
        }
        if (wo.format == POSENC_FMT_CHEADER) {
            posenc_seterr(&err, POSENC_EUNSUPPORTED, "'%s': apply writes npy, npz, dir, hdf5, "
                          "safetensors or raw output, not C headers", outpaths[w]);
            goto fail;
        }
        if (posenc_writer_open(outpaths[w], &wo, &writers[w], &err) != POSENC_OK)
            goto fail;
        if (!posenc_format_one_array(wo.format) &&
            write_meta(writers[w], config, params.style, prec, inverse, &err) != POSENC_OK)
            goto fail;
        for (int a = 0; a < narr; a++) {
            int i = outp ? a : w;
            posenc_array_info info = *posenc_reader_info(jobs[i].r);
            snprintf(info.name, sizeof info.name, "%s", names[i]);
            info.dtype = jobs[i].out_dt;
            if (posenc_writer_declare(writers[w], &info, &err) != POSENC_OK)
                goto fail;
            jobs[i].w = writers[w];
        }
    }

    /* a library that is not thread-safe (HDF5's) keeps its reads and writes on one thread; the
     * readers know their format from the bytes, whatever the files are called */
    int threaded = cmd_nthreads() > 1;
    for (int i = 0; i < nin; i++)
        if (!posenc_format_thread_safe(posenc_reader_format(jobs[i].r)))
            threaded = 0;
    for (int w = 0; w < nwriters; w++)
        if (!posenc_format_thread_safe(posenc_writer_format(writers[w])))
            threaded = 0;
    if (pe_apply_run(jobs, (size_t)nin, threaded, &err) != POSENC_OK)
        goto fail;
    for (int w = 0; w < nwriters; w++) {
        posenc_status st = posenc_writer_commit(writers[w], &err);
        writers[w] = NULL;
        if (st != POSENC_OK)
            goto fail;
    }
    rc = CMD_EXIT_OK;
    goto out;
nomem:
    posenc_seterr(&err, POSENC_ENOMEM, "out of memory");
fail:
    rc = cmd_fail(CMD, &err);
out:
    for (int w = 0; w < 2; w++)
        posenc_writer_abort(writers[w]);
    for (int i = 0; i < 2; i++) {
        posenc_reader_close(jobs[i].r);
        posenc_apply_free(aps[i]);
        free(outpaths[i]);
    }
    pe_positions_free(pos.list);
    posenc_model_free(model);
    return rc;
}
