/* formats/engines/applyset.c: one posenc apply run as an engine (formats/engines/applyset.h). */
#include "formats/engines/applyset.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/engines/applyrun.h"
#include "formats/report/describe_out.h"
#include "formats/engines/pairs.h"
#include "formats/engines/rows.h"
#include "formats/io/strbuf.h"
#include "posenc/llamacpp.h"
#include "posenc/vllm.h"

#define MAX_AP 32          /* distinct (layer type, dtype) rotations of one run */

struct rotation {
    const char *lt;        /* layer type (borrowed from the model or the request), NULL: the only */
    posenc_dtype dt;
    posenc_apply *ap;
};

struct pe_apply_set {
    pe_apply_req rq;
    int fault;
    /* one dump or a Q/K pair */
    int nin;
    const char *in[2];
    char member[2][POSENC_NAME_MAX];
    /* a container's pairs */
    posenc_container *c;
    const char *path;
    pe_pairs *pp;
    /* both: the jobs (a pair's q and k are jobs 2i and 2i + 1) */
    pe_apply_job *jobs;
    size_t nj;
    pe_table t;            /* the output arrays, one per job (declared, never filled: apply
                              streams them itself) */
    pe_out plan;           /* their size plan, every output together */
    int mrope;
    struct rotation rot[MAX_AP];
    size_t nrot;
    posenc_style style;    /* the first rotation's pairing, for the metadata */
    char names[2][POSENC_NAME_MAX];
    char *outpaths[2];
    size_t nout;
    posenc_writer *w[2];
    posenc_gguf_rope *file; /* rq.gguf read, when given */
    int ggml_noted;
};

pe_apply_set *pe_apply_set_new(const pe_apply_req *rq)
{
    pe_apply_set *s = calloc(1, sizeof *s);
    if (s) {
        s->rq = *rq;
        s->style = POSENC_STYLE_NEOX;
    }
    return s;
}

void pe_apply_set_free(pe_apply_set *s)
{
    if (!s)
        return;
    for (int i = 0; i < 2; i++) {
        pe_out_abort(&s->w[i]);
        free(s->outpaths[i]);
    }
    pe_table_free(&s->t);
    for (size_t i = 0; s->jobs && i < s->nj; i++)
        posenc_reader_close(s->jobs[i].r);
    for (size_t i = 0; i < s->nrot; i++)
        posenc_apply_free(s->rot[i].ap);
    free(s->jobs);
    pe_pairs_free(s->pp);
    free(s->file);
    free(s);
}

int pe_apply_set_fault(const pe_apply_set *s) { return s ? s->fault : PE_APPLY_FAULT_ERROR; }
const pe_out *pe_apply_set_plan(const pe_apply_set *s) { return &s->plan; }
const posenc_apply_shape *pe_apply_set_shape(const pe_apply_set *s) { return &s->jobs[0].sh; }
int pe_apply_set_mrope(const pe_apply_set *s) { return s->mrope; }
size_t pe_apply_set_noutputs(const pe_apply_set *s) { return s->nout; }
const char *pe_apply_set_output(const pe_apply_set *s, size_t i)
{
    return i < s->nout ? s->outpaths[i] : NULL;
}

static void note(const pe_apply_set *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void note(const pe_apply_set *s, const char *fmt, ...)
{
    char msg[POSENC_ERRMSG_MAX + 256];
    va_list ap;
    if (!s->rq.note)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->rq.note(s->rq.note_ctx, msg);
}

/* "'FILE': " before a message that does not name a file yet */
static posenc_status prefix_file(posenc_error *e, posenc_status st, const char *file)
{
    if (e && e->msg[0] != '\'')
        posenc_error_prefix(e, e->code, "'%s': ", file);
    return st;
}

/* The name of job i in messages. */
static const char *job_name(const pe_apply_set *s, size_t i)
{
    return s->c ? posenc_container_array(s->c, s->jobs[i].index)->name : s->in[i];
}

/* head_dim and the config's query and key heads of layer type lt (NULL: the only set; a NoPE
 * layer of a model with several layer types: the first one's, only the split matters), 0 when
 * unknown: a flat layout's split and the layout hints. */
static void layer_heads(const pe_apply_set *s, const char *lt, int nope, int64_t *head_dim,
                        int64_t heads[2])
{
    const posenc_model *m = s->rq.model;
    posenc_rope_config rc;
    if (nope && !lt && posenc_model_layer_type_count(m) > 1)
        lt = posenc_model_layer_type_name(m, 0);
    *head_dim = posenc_model_rope(m, lt, &rc, NULL) == POSENC_OK ? rc.head_dim : 0;
    posenc_model_heads(m, lt, &heads[0], &heads[1]);
}

/* A shape refusal of job i (a single dump, or the q or k of a pair): name the layout the dump,
 * with its partner when that is known, fits with the config's head counts; 1 when named. */
static int job_hint(const pe_apply_set *s, size_t i, const posenc_array_info *ai,
                    posenc_error *err)
{
    const char *lt = s->c ? s->pp->v[i / 2].layer_type : s->rq.layer_type;
    int64_t hd, heads[2];
    if (!err || err->code != POSENC_EMISMATCH)
        return 0;
    layer_heads(s, lt, s->c ? s->pp->v[i / 2].nope : 0, &hd, heads);
    const posenc_array_info *qa = NULL, *ka = NULL;
    if (s->c) {
        qa = posenc_container_array(s->c, s->pp->v[i / 2].q);
        ka = posenc_container_array(s->c, s->pp->v[i / 2].k);
    } else if (s->nin == 2 && s->jobs[0].r && s->jobs[1].r) {
        qa = posenc_reader_info(s->jobs[0].r);
        ka = posenc_reader_info(s->jobs[1].r);
    }
    if (qa && pe_rows_layout_hint(err, s->rq.layout, qa, ka, heads, hd, s->rq.config))
        return 1;
    /* a dump alone, or its partner not open yet: a query or a key */
    int paired = s->c || s->nin == 2;
    int64_t hq[2] = { heads[0], 0 }, hk[2] = { heads[1], 0 };
    if ((!paired || i % 2 == 0) &&
        pe_rows_layout_hint(err, s->rq.layout, ai, NULL, hq, hd, s->rq.config))
        return 1;
    return (!paired || i % 2 == 1) &&
           pe_rows_layout_hint(err, s->rq.layout, ai, NULL, hk, hd, s->rq.config);
}

/* Fill job j from its array's header: dtype check, shape (a flat layout split by the layer's
 * head_dim), output dtype, and add its bytes. */
static posenc_status job_init(pe_apply_set *s, pe_apply_job *j, const posenc_array_info *ai,
                              const char *what, int64_t head_dim, posenc_error *err)
{
    if (!(ai->dtype <= POSENC_DT_F64))
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "%s: cannot rotate %s data (need f16, "
                             "bf16, f32 or f64)", what, posenc_dtype_name(ai->dtype));
    posenc_status st = posenc_apply_shape_split(s->rq.layout, ai->ndim, ai->shape, 0, head_dim,
                                                &j->sh, err);
    if (st != POSENC_OK) {
        /* a container's member is always named; a file only when the message does not */
        if (err && (s->c || err->msg[0] != '\''))
            posenc_error_prefix(err, err->code, "%s: ", what);
        return st;
    }
    j->in_dt = ai->dtype;
    j->out_dt = s->rq.dtype_set ? s->rq.out_dtype : ai->dtype;
    j->nvec = posenc_apply_shape_vectors(&j->sh);
    j->D = (size_t)j->sh.head_dim;
    /* the output array: the input's shape in the output dtype; a member keeps its path without
     * the root ("/layer0/q" -> "layer0/q": the same path in HDF5, a flat name elsewhere), a
     * dump's name is set with the outputs */
    const char *name = s->c && ai->name[0] == '/' ? ai->name + 1 : ai->name;
    pe_table_add(&s->t, name, j->out_dt, ai->dtype, ai->ndim, ai->shape, (int64_t)j->D);
    return POSENC_OK;
}

/* The jobs' arrays are all in the table: the size plan (formats/io/out.c, gen's and convert's). */
static posenc_status plan(pe_apply_set *s, posenc_error *err)
{
    pe_out o = { NULL, { POSENC_FMT_AUTO, 0 }, &s->t, NULL, s->rq.size_limit, s->rq.force,
                 0, 0, 0, 0 };
    posenc_status st = pe_out_plan(&o, err);
    s->plan = o;
    return st;
}

/* k against its q (batch, seq, head_dim), every other dump against the first (batch, seq). */
static posenc_status job_match(const pe_apply_set *s, size_t i, const posenc_array_info *ia,
                               const posenc_array_info *ib, posenc_error *err)
{
    const pe_apply_job *ref = &s->jobs[i % 2 ? i - 1 : 0], *j = &s->jobs[i];
    if (ref->sh.batch == j->sh.batch && ref->sh.seq == j->sh.seq &&
        (!(i % 2) || ref->sh.head_dim == j->sh.head_dim))
        return POSENC_OK;
    char sa[160], sb[160];
    posenc_shape_str(ia->ndim, ia->shape, sa, sizeof sa);
    posenc_shape_str(ib->ndim, ib->shape, sb, sizeof sb);
    const char *what = i % 2 ? "batch, seq or head_dim" : "batch or seq";
    const char *lay = posenc_apply_layout_name(s->rq.layout);
    if (s->c)
        return posenc_seterr(err, POSENC_EMISMATCH, "'%s': '%s' %s and '%s' %s disagree on %s "
                             "(layout %s)", s->path, ia->name, sa, ib->name, sb, what, lay);
    return posenc_seterr(err, POSENC_EMISMATCH, "'%s' %s and '%s' %s disagree on %s (layout %s)",
                         s->in[0], sa, s->in[1], sb, what, lay);
}

/* Every job read with heads that are no share of the config's (pe_rows_heads_foreign) while
 * its dump fits another layout: refused naming that layout (a bshd dump read as bhsd has seq
 * "heads"). A dump alone may be a query or a key. */
static posenc_status heads_check(pe_apply_set *s, posenc_error *err)
{
    for (size_t i = 0; i < s->nj; i++) {
        const pe_apply_job *j = &s->jobs[i];
        const char *lt = s->c ? s->pp->v[i / 2].layer_type : s->rq.layer_type;
        int64_t hd, heads[2];
        layer_heads(s, lt, s->c ? s->pp->v[i / 2].nope : 0, &hd, heads);
        int paired = s->c || s->nin == 2;
        int foreign = paired ? pe_rows_heads_foreign(j->sh.heads, heads[i % 2])
                             : pe_rows_heads_foreign(j->sh.heads, heads[0]) &&
                                   pe_rows_heads_foreign(j->sh.heads, heads[1]);
        if (!foreign)
            continue;
        const posenc_array_info *ai = s->c ? posenc_container_array(s->c, j->index)
                                           : posenc_reader_info(j->r);
        char shs[160];
        posenc_error e2 = { 0 };
        posenc_shape_str(ai->ndim, ai->shape, shs, sizeof shs);
        if (s->c)
            posenc_seterr(&e2, POSENC_EMISMATCH, "'%s': '%s' %s read as layout %s has %" PRId64
                          " heads, which are not the config's nor a share of them", s->path,
                          ai->name, shs, posenc_apply_layout_name(s->rq.layout), j->sh.heads);
        else
            posenc_seterr(&e2, POSENC_EMISMATCH, "'%s': shape %s read as layout %s has %" PRId64
                          " heads, which are not the config's nor a share of them", s->in[i],
                          shs, posenc_apply_layout_name(s->rq.layout), j->sh.heads);
        if (job_hint(s, i, ai, &e2)) {
            if (err)
                *err = e2;
            return POSENC_EMISMATCH;
        }
    }
    return POSENC_OK;
}

posenc_status pe_apply_set_add_inputs(pe_apply_set *s, const char *const *in, int nin,
                                      const posenc_read_opts *ro, posenc_error *err)
{
    posenc_rope_config rcfg;
    posenc_status st = posenc_model_rope(s->rq.model, s->rq.layer_type, &rcfg, err);
    if (st != POSENC_OK) {
        s->fault = PE_APPLY_FAULT_ROPE;
        return st;
    }
    s->mrope = rcfg.n_mrope_section == 3;
    if (!(s->jobs = calloc(2, sizeof *s->jobs)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    s->nin = nin;
    s->nj = (size_t)nin;
    if ((st = pe_table_init(&s->t, nin, err)) != POSENC_OK)
        return st;
    for (int i = 0; i < nin; i++) {
        pe_apply_job *j = &s->jobs[i];
        char what[4200];
        s->in[i] = in[i];
        snprintf(what, sizeof what, "'%.4000s'", in[i]);
        if ((st = posenc_reader_open(in[i], ro, &j->r, err)) != POSENC_OK)
            return st;
        if ((st = job_init(s, j, posenc_reader_info(j->r), what, rcfg.head_dim, err)) !=
            POSENC_OK) {
            job_hint(s, (size_t)i, posenc_reader_info(j->r), err);
            return st;
        }
    }
    if (nin == 2 && (st = job_match(s, 1, posenc_reader_info(s->jobs[0].r),
                                    posenc_reader_info(s->jobs[1].r), err)) != POSENC_OK) {
        job_hint(s, 1, posenc_reader_info(s->jobs[1].r), err);
        return st;
    }
    if ((st = heads_check(s, err)) != POSENC_OK)
        return st;
    return plan(s, err);
}

posenc_status pe_apply_set_add_pairs(pe_apply_set *s, posenc_container *c, const char *path,
                                     const char *glob, posenc_error *err)
{
    posenc_status st = pe_pairs_find(c, path, glob, &s->pp, err);
    if (st != POSENC_OK) {
        s->fault = st == POSENC_EINVAL ? PE_APPLY_FAULT_USAGE : PE_APPLY_FAULT_ERROR;
        return st;
    }
    if ((st = pe_pairs_layers(s->pp, s->rq.model, s->rq.layer_type, path, err)) != POSENC_OK)
        return st;
    s->c = c;
    s->path = path;
    s->nj = 2 * s->pp->n;
    if (!(s->jobs = calloc(s->nj, sizeof *s->jobs)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    if (s->nj > (size_t)INT32_MAX)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': %zu q/k pairs is too many", path,
                             s->pp->n);
    if ((st = pe_table_init(&s->t, (int)s->nj, err)) != POSENC_OK)
        return st;
    for (size_t i = 0; i < s->nj; i++) {
        const pe_pair *pr = &s->pp->v[i / 2];
        pe_apply_job *j = &s->jobs[i];
        j->c = c;
        j->index = i % 2 ? pr->k : pr->q;
        const posenc_array_info *ai = posenc_container_array(c, j->index);
        char what[4200 + POSENC_NAME_MAX];
        int64_t hd, heads[2];
        snprintf(what, sizeof what, "'%.4000s': '%s'", path, ai->name);
        layer_heads(s, pr->layer_type, pr->nope, &hd, heads);
        if ((st = job_init(s, j, ai, what, hd, err)) != POSENC_OK ||
            (st = job_match(s, i, posenc_container_array(c, s->jobs[i % 2 ? i - 1 : 0].index),
                            ai, err)) != POSENC_OK) {
            job_hint(s, i, ai, err);
            return st;
        }
    }
    if ((st = heads_check(s, err)) != POSENC_OK)
        return st;
    /* one forward pass: positions are 3-axis when any rotated layer is multimodal */
    for (size_t i = 0; i < s->pp->n; i++) {
        posenc_rope_config rcfg;
        if (s->pp->v[i].nope)
            continue;
        if ((st = posenc_model_rope(s->rq.model, s->pp->v[i].layer_type, &rcfg, err)) !=
            POSENC_OK) {
            s->fault = PE_APPLY_FAULT_ROPE;
            return st;
        }
        s->mrope |= rcfg.n_mrope_section == 3;
    }
    return plan(s, err);
}

/* llama.cpp's own pair order: in the ggml layout the pairs of its rope mode for the file's (or
 * the config's) architecture; in another layout with --precision ggml, one note when llama.cpp's
 * own tensors of that architecture are in the converter's permuted order. */
static posenc_status ggml_layout(pe_apply_set *s, posenc_rope_config *rcfg, posenc_error *err)
{
    const pe_apply_req *q = &s->rq;
    posenc_status st;
    if (q->gguf && !s->file) {
        if (!(s->file = malloc(sizeof *s->file)))
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        if ((st = posenc_gguf_read_rope(q->gguf, s->file, err)) != POSENC_OK) {
            free(s->file);
            s->file = NULL;
            return st;
        }
    }
    const char *arch = s->file ? s->file->arch : posenc_ggml_model_arch(q->model);
    int sections = s->file ? s->file->n_sections > 0 && s->file->sections[0] > 0 &&
                                 s->file->sections[1] > 0
                           : rcfg->n_mrope_section > 0;
    posenc_style style;
    int permuted = 0;
    if (q->layout == POSENC_APPLY_GGML && !q->style_set) {
        if ((st = posenc_ggml_layout_style(arch, sections, rcfg->style, &style, NULL, err)) !=
            POSENC_OK)
            return prefix_file(err, st, s->file ? q->gguf : q->config);
        rcfg->style = style;
    } else if (q->layout != POSENC_APPLY_GGML && q->prec == POSENC_PREC_GGML && !s->ggml_noted &&
               posenc_ggml_layout_style(arch, sections, rcfg->style, &style, &permuted, NULL) ==
                   POSENC_OK && permuted) {
        s->ggml_noted = 1;
        note(s, "'%s': llama.cpp's own q/k of architecture %s are in the converter's permuted "
             "order (rotated as NORM pairs): for dumps taken from llama.cpp give --layout ggml",
             q->config, arch);
    }
    return POSENC_OK;
}

/* A new rotation for layer type lt and dump dtype dt. */
static posenc_status rotation_new(pe_apply_set *s, const char *lt, posenc_dtype dt, int64_t seq,
                                  const posenc_apply_positions *pos, int64_t max,
                                  posenc_apply **out, posenc_error *err)
{
    const pe_apply_req *q = &s->rq;
    posenc_rope_config rcfg;
    posenc_rope_params params;
    posenc_vllm_info vi;
    posenc_status st;
    int64_t n_ctx = q->seq_len ? q->seq_len : max + 1;
    if ((st = posenc_model_rope(q->model, lt, &rcfg, err)) != POSENC_OK)
        return st;
    if (q->style_set)
        rcfg.style = q->style;
    if ((st = ggml_layout(s, &rcfg, err)) != POSENC_OK)
        return st;
    if ((st = posenc_rope_params_for(&rcfg, q->prec, posenc_model_family(q->model), n_ctx,
                                     q->max_model_len, &params, &vi, err)) != POSENC_OK)
        return prefix_file(err, st, q->config);
    if (q->prec == POSENC_PREC_VLLM && max >= vi.cache_len)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': position %" PRId64 " is past vLLM's "
                             "cos_sin_cache (%s: %" PRId64 " rows)", q->config, max, vi.cls,
                             vi.cache_len);
    if (q->prec == POSENC_PREC_VLLM && vi.note[0] && s->nrot == 0)
        note(s, "'%s': %s", q->config, vi.note);
    if (q->prec == POSENC_PREC_GGML &&
        (st = s->file ? posenc_rope_params_ggml_gguf_layer(&params, s->file,
                                                           q->n_ctx ? q->n_ctx : n_ctx, lt, err)
                      : posenc_rope_params_ggml(&params, q->model, lt, q->n_ctx ? q->n_ctx : n_ctx,
                                                err)) != POSENC_OK) {
        if (err && !err->msg[0])
            snprintf(err->msg, sizeof err->msg, "unknown error");
        posenc_error_prefix(err, st, "'%s': --precision ggml: ", q->config);
        return st;
    }
    if (pos->naxes == 3 && !params.mrope) {
        if (s->c)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': 3-axis positions need a multimodal "
                                 "(mrope) RoPE config, and layer type '%s' of '%s' has none",
                                 q->positions_arg, lt ? lt : "", q->config);
        return posenc_seterr(err, POSENC_EINVAL, "'%s': 3-axis positions need a multimodal "
                             "(mrope) RoPE config, and '%s' has none", q->positions_arg,
                             q->config);
    }
    if (s->nrot == 0)
        s->style = params.style;
    posenc_apply_opts ao = { q->prec, q->inverse, dt };
    if ((st = posenc_apply_new(&params, &ao, pos, seq, q->nthreads, out, err)) != POSENC_OK)
        return prefix_file(err, st, q->config);
    return POSENC_OK;
}

posenc_status pe_apply_set_rotations(pe_apply_set *s, const posenc_apply_positions *pos,
                                     int64_t max, posenc_error *err)
{
    posenc_status st;
    for (size_t i = 0; i < s->nj; i++) {
        pe_apply_job *j = &s->jobs[i];
        const char *lt = s->c ? s->pp->v[i / 2].layer_type : s->rq.layer_type;
        if (s->c && s->pp->v[i / 2].nope)
            continue; /* copied unchanged */
        size_t a;
        for (a = 0; a < s->nrot; a++)
            if (s->rot[a].dt == j->in_dt &&
                (s->rot[a].lt == lt || (s->rot[a].lt && lt && strcmp(s->rot[a].lt, lt) == 0)))
                break;
        if (a == s->nrot) {
            if (s->nrot == MAX_AP)
                return posenc_seterr(err, POSENC_ERANGE, "'%s': more than %d layer types and "
                                     "dtypes", s->path, MAX_AP);
            if ((st = rotation_new(s, lt, j->in_dt, j->sh.seq, pos, max, &s->rot[a].ap, err)) !=
                POSENC_OK)
                return st;
            s->rot[a].lt = lt;
            s->rot[a].dt = j->in_dt;
            s->nrot++;
        }
        j->ap = s->rot[a].ap;
        if ((st = posenc_apply_check(j->ap, &j->sh, err)) != POSENC_OK) {
            if (s->c)
                posenc_error_prefix(err, st, "'%s': '%s': ", s->path, job_name(s, i));
            else
                prefix_file(err, st, s->in[i]);
            job_hint(s, i, s->c ? posenc_container_array(s->c, j->index)
                                : posenc_reader_info(j->r), err);
            return st;
        }
    }
    return POSENC_OK;
}

/* ---- output naming ---- */

void pe_apply_split_name(const char *path, char *dir, size_t dlen, char *stem, size_t slen,
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

void pe_apply_member_name(const char *m, char *out, size_t len)
{
    while (*m == '/')
        m++;
    snprintf(out, len, "%.250s", m);
    for (char *c = out; *c; c++)
        if (*c == '/' || *c == ':')
            *c = '_';
}

char *pe_apply_output_name(const char *path, const char *member, int pairs)
{
    char dir[4096], stem[1024], ext[64], mname[POSENC_NAME_MAX];
    pe_apply_split_name(path, dir, sizeof dir, stem, sizeof stem, ext, sizeof ext);
    mname[0] = '\0';
    if (member && member[0])
        pe_apply_member_name(member, mname, sizeof mname);
    size_t len = strlen(dir) + strlen(stem) + strlen(mname) + strlen(ext) + 16;
    char *out = malloc(len);
    if (!out)
        return NULL;
    if (pairs)
        snprintf(out, len, "%s%s.rope%s", dir, stem, ext[0] ? ext : ".npz");
    else if (mname[0])
        snprintf(out, len, "%s%s.%s.rope.npy", dir, stem, mname);
    else if (ext[0] && posenc_format_guess(path) != POSENC_FMT_AUTO)
        snprintf(out, len, "%s%s.rope%s", dir, stem, ext);
    else
        snprintf(out, len, "%s%s%s.rope.npy", dir, stem, ext);
    return out;
}

static char *xstrdup(const char *p)
{
    size_t n = strlen(p) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, p, n) : NULL;
}

posenc_status pe_apply_set_outputs(pe_apply_set *s, const char *outp, posenc_error *err)
{
    posenc_status st;
    if (s->c) {
        /* one output for the container; the arrays keep their member names */
        s->nout = 1;
        if (!(s->outpaths[0] = outp ? xstrdup(outp) : pe_apply_output_name(s->path, NULL, 1)))
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        return POSENC_OK;
    }
    for (int i = 0; i < s->nin; i++) {
        char path[4096], dir[4096], stem[1024], ext[64];
        if ((st = posenc_spec_split(s->in[i], path, sizeof path, s->member[i],
                                    sizeof s->member[i], err)) != POSENC_OK)
            return st;
        pe_apply_split_name(path, dir, sizeof dir, stem, sizeof stem, ext, sizeof ext);
        const char *rname = posenc_reader_info(s->jobs[i].r)->name;
        if (s->nin == 2 && outp)
            snprintf(s->names[i], sizeof s->names[i], "%s", i == 0 ? "q" : "k");
        else if (s->member[i][0])
            pe_apply_member_name(s->member[i], s->names[i], sizeof s->names[i]);
        else if (rname[0])
            snprintf(s->names[i], sizeof s->names[i], "%s", rname);
        else
            snprintf(s->names[i], sizeof s->names[i], "%.250s",
                     strcmp(s->in[i], "-") == 0 ? "x" : stem);
        snprintf(s->t.arr[i].info.name, sizeof s->t.arr[i].info.name, "%s", s->names[i]);
        if (!outp && !(s->outpaths[i] = pe_apply_output_name(path, s->member[i], 0)))
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    if (outp && !(s->outpaths[0] = xstrdup(outp)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    s->nout = outp ? 1 : (size_t)s->nin;
    if (s->nout == 2 && strcmp(s->outpaths[0], s->outpaths[1]) == 0)
        return posenc_seterr(err, POSENC_EINVAL, "'%s' and '%s' would both be written to '%s'; "
                             "give -o OUT", s->in[0], s->in[1], s->outpaths[0]);
    return POSENC_OK;
}

/* ---- writing ---- */

/* The metadata every apply output carries: the description fields config, style, precision and
 * inverse (lib/describe/describe.def) under "posenc_apply_", and for pairs which parameters each pair got:
 * posenc_apply_layers = {"group": "layer type" | "rope" | "none"}. */
static posenc_status write_meta(pe_apply_set *s, posenc_writer *w, posenc_error *err)
{
    pe_desc *d = pe_describe_new();
    if (!d)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    pe_describe_str(d, PE_DF_CONFIG, s->rq.config);
    pe_describe_str(d, PE_DF_STYLE, posenc_style_name(s->style));
    pe_describe_str(d, PE_DF_PRECISION, posenc_precision_name(s->rq.prec));
    pe_describe_bool(d, PE_DF_INVERSE, s->rq.inverse);
    posenc_status st = pe_describe_meta_write(d, "posenc_apply_", w, err);
    pe_describe_free(d);
    if (st != POSENC_OK || !s->c)
        return st;
    pe_strbuf layers = { 0 };
    pe_strbuf_puts(&layers, "{");
    for (size_t i = 0; i < s->pp->n; i++) {
        const pe_pair *pr = &s->pp->v[i];
        pe_strbuf_puts(&layers, i ? ", " : "");
        pe_strbuf_json_string(&layers, pr->group);
        pe_strbuf_puts(&layers, ": ");
        pe_strbuf_json_string(&layers, pr->nope ? "none" : pr->layer_type ? pr->layer_type
                                                                            : "rope");
    }
    pe_strbuf_puts(&layers, "}");
    st = layers.oom ? posenc_seterr(err, POSENC_ENOMEM, "out of memory")
                    : posenc_writer_meta(w, "posenc_apply_layers", layers.p, err);
    free(layers.p);
    return st;
}

/* The format of output o: wo's, else from the name; refuse what cannot hold the arrays. */
static posenc_status out_format(pe_apply_set *s, size_t o, const posenc_write_opts *wo,
                                posenc_format *out, posenc_error *err)
{
    const char *op = s->outpaths[o];
    posenc_format f = wo->format != POSENC_FMT_AUTO ? wo->format : posenc_format_guess(op);
    size_t narr = s->c ? s->nj : s->nout == 1 ? (size_t)s->nin : 1;
    if (s->c) {
        if (f == POSENC_FMT_AUTO)
            f = POSENC_FMT_DIR;
        if (posenc_format_one_array(f) || f == POSENC_FMT_CHEADER)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': %zu q/k pairs need a container "
                                 "output (.npz, .h5, .safetensors or a directory)", op,
                                 s->pp->n);
        *out = f;
        return POSENC_OK;
    }
    if (f == POSENC_FMT_AUTO) {
        /* a new directory receiving q.npy and k.npy, but only for a name without an
         * extension: 'rotated.npzz' is a typo, not a directory to create */
        const char *base = strrchr(op, '/');
        base = base ? base + 1 : op;
        if (s->nin != 2 || strchr(base + 1, '.')) {
            s->fault = PE_APPLY_FAULT_USAGE;
            return posenc_seterr(err, POSENC_EINVAL, "'%s': cannot tell the output format from "
                                 "the name; pass --format or end it in .npz, .npy, .h5, "
                                 ".safetensors, .bin or /%s", op,
                                 s->nin == 2 ? " (or give a new directory's name)" : "");
        }
        f = POSENC_FMT_DIR;
    }
    if (narr == 2 && posenc_format_one_array(f))
        return posenc_seterr(err, POSENC_EINVAL, "'%s': an NPY file holds one array; write Q "
                             "and K to an .npz, .h5, .safetensors or a directory", op);
    if (f == POSENC_FMT_CHEADER)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': apply writes npy, npz, dir, hdf5, "
                             "safetensors or raw output, not C headers", op);
    *out = f;
    return POSENC_OK;
}

/* The metadata step of pe_out_open (ctx: the set): what a container's pairs leave out, then
 * write_meta, but not into an NPY file of one dump (it holds no metadata). */
static posenc_status out_meta(void *ctx, posenc_writer *w, posenc_error *err)
{
    pe_apply_set *s = ctx;
    if (s->c) {
        for (size_t i = 0; i < s->pp->n; i++)
            if (s->pp->v[i].nope)
                note(s, "'%s': '%s' is layer %lld, which has no RoPE: copied unchanged",
                     s->path, pe_pairs_label(&s->pp->v[i]), (long long)s->pp->v[i].layer);
        if (s->pp->n_other)
            note(s, "'%s': %zu member%s in no q/k pair %s not written ('%s'%s)", s->path,
                 s->pp->n_other, s->pp->n_other == 1 ? "" : "s",
                 s->pp->n_other == 1 ? "is" : "are", s->pp->other,
                 s->pp->n_other > 1 ? ", ..." : "");
    }
    if (!s->c && posenc_format_one_array(posenc_writer_format(w)))
        return POSENC_OK;
    return write_meta(s, w, err);
}

posenc_status pe_apply_set_write(pe_apply_set *s, const posenc_write_opts *wo,
                                 posenc_error *err)
{
    static const int only[2][2] = { { 1, 0 }, { 0, 1 } }; /* two outputs: Q's, K's */
    posenc_status st;
    for (size_t o = 0; o < s->nout; o++) {
        pe_out po = s->plan; /* the limit is the plan of every output together */
        po.path = s->outpaths[o];
        po.wopts = *wo;
        po.want = s->nout == 2 ? only[o] : NULL;
        if ((st = out_format(s, o, wo, &po.wopts.format, err)) != POSENC_OK ||
            (st = pe_out_open(&po, out_meta, s, &s->w[o], err)) != POSENC_OK)
            return st;
        for (size_t i = 0; i < s->nj; i++)
            if (!po.want || po.want[i])
                s->jobs[i].w = s->w[o];
    }
    /* a library that is not thread-safe (HDF5's) keeps its reads and writes on one thread; the
     * formats come from the bytes read and the writers opened, whatever the files are called */
    int threaded = s->rq.nthreads > 1;
    if (s->c)
        threaded = threaded && posenc_format_thread_safe(posenc_container_format(s->c));
    for (size_t i = 0; !s->c && i < s->nj; i++)
        threaded = threaded && posenc_format_thread_safe(posenc_reader_format(s->jobs[i].r));
    for (size_t o = 0; o < s->nout; o++)
        threaded = threaded && posenc_format_thread_safe(posenc_writer_format(s->w[o]));
    if ((st = pe_apply_run(s->jobs, s->nj, threaded, err)) != POSENC_OK)
        return st;
    return pe_out_commit_all(s->w, s->nout, err); /* Q's and K's outputs as one unit */
}
