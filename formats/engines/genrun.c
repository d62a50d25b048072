/* formats/engines/genrun.c: one posenc gen run (genrun.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "formats/engines/genrun.h"
#include "formats/io/inputs.h"
#include "posenc/posenc.h"

/* A C header holds about 15 bytes of text per value ("-0.123456789f, "). Its rows default to
 * max_position_embeddings like every format's, which for a long-context model is hundreds of MB
 * of source no compiler wants: without --seq-len, --positions or --force, refuse a header of
 * more than this many values (about 15 MB of text) instead of writing it. */
#define HEADER_DEFAULT_VALUES ((uint64_t)1 << 20)
#define HEADER_TEXT_PER_VALUE 15

/* The limit's refusal is worded in a line of this many bytes at most (as it always was). */
#define LIMIT_MSG_MAX (POSENC_ERRMSG_MAX + 256)

static int header_too_big(const pe_gen_args *a, const pe_grun_req *rq, uint64_t nvalues)
{
    return rq->wopts.format == POSENC_FMT_CHEADER && !a->seq_len && !a->positions &&
           !rq->force && nvalues > HEADER_DEFAULT_VALUES;
}

static void array_names(const pe_table *t, char *names, size_t len)
{
    names[0] = '\0';
    for (int i = 0; i < t->narr; i++)
        snprintf(names + strlen(names), len - strlen(names), "%s%.60s", i ? ", " : "",
                 t->arr[i].info.name);
}

/* Pick the arrays (--array: the one check of every encoding), plan and check the size limit,
 * write them. */
static posenc_status write_tables(pe_gen *g, const pe_gen_args *a, const pe_grun_req *rq,
                                  pe_run_fail *f, posenc_error *err)
{
    int want[8] = { 0 }, nwant = 0;
    char names[256];
    posenc_status st;
    for (int i = 0; i < g->t.narr && i < 8; i++)
        nwant += want[i] = !rq->array || strcmp(rq->array, g->t.arr[i].info.name) == 0;
    array_names(&g->t, names, sizeof names);
    if (nwant == 0 && g->rope) /* the arrays depend on the layout */
        return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                             "--array: '%s' is not an array of a RoPE table with "
                             "--table-layout %s (expected %s)", rq->array,
                             posenc_layout_name(a->layout), names);
    if (nwant == 0)
        return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                             "--array: %s tables hold %s, not '%s'", g->label, names, rq->array);
    if (posenc_format_one_array(rq->wopts.format) && nwant > 1)
        return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                             "%s holds one array: pass --array (%s)",
                             strcmp(a->out, "-") == 0 ? "-o -" : "an NPY file", names);
    pe_out o = { a->out, rq->wopts, &g->t, want, PE_OUT_SIZE_LIMIT, rq->force, 0, 0, 0, 0 };
    if ((st = pe_out_plan(&o, err)) != POSENC_OK) {
        if (g->rope)
            return pe_run_failed(f, PE_RUN_FAULT_ERROR, st);
        return pe_run_refuse(f, err, PE_RUN_FAULT_ERROR, st,
                             "%s tables would be larger than 2^63 bytes; pass %s", g->label,
                             g->hint);
    }
    const posenc_array_info *a0 = &g->t.arr[0].info;
    if (header_too_big(a, rq, o.values)) {
        char hs[32];
        pe_out_human_size(o.values * HEADER_TEXT_PER_VALUE, hs, sizeof hs);
        return pe_run_refuse(f, err, PE_RUN_FAULT_ERROR, POSENC_ERANGE,
                             "'%s': a C header of all %" PRId64 " default positions would hold "
                             "%" PRIu64 " values (about %s of text); pass --seq-len N, "
                             "--positions or --force", a->out, a0->ndim ? a0->shape[0] : 0,
                             o.values, hs);
    }
    if (o.over_limit) { /* the pipeline's wording, with what the bytes are */
        char what[128], msg[LIMIT_MSG_MAX];
        int ntab = nwant - want[g->t.narr - 1]; /* RoPE: rows x width x the cos/sin tables */
        if (g->rope)
            snprintf(what, sizeof what, "%" PRId64 " x %" PRId64 " x %d array%s, %s",
                     a0->shape[0], a0->shape[1], ntab ? ntab : 1, ntab == 1 ? "" : "s",
                     posenc_dtype_name(a->dtype));
        else
            snprintf(what, sizeof what, "%s tables", g->label);
        pe_out_limit_message(&o, a->out, what, g->rope ? NULL : g->hint, msg, sizeof msg);
        return pe_run_refuse(f, err, PE_RUN_FAULT_ERROR, POSENC_ERANGE, "%s", msg);
    }
    if (pe_describe_oom(g->d))
        return pe_run_refuse(f, err, PE_RUN_FAULT_ERROR, POSENC_ENOMEM, "out of memory");
    if ((st = pe_out_run(&o, pe_gen_meta, g, err)) != POSENC_OK)
        return pe_run_failed(f, PE_RUN_FAULT_ERROR, st);
    return POSENC_OK;
}

/* Build the encoding's table (the engine), give its warnings, write it. */
static posenc_status gen_write(const pe_gen_args *a, const pe_grun_req *rq, pe_run_fail *f,
                               posenc_error *err)
{
    pe_gen g;
    posenc_status st = pe_gen_build(&g, a, err);
    for (int i = 0; i < g.nwarn; i++)
        if (rq->note)
            rq->note(rq->note_ctx, g.warn[i]);
    if (st != POSENC_OK)
        pe_run_failed(f, g.usage == PE_GEN_USAGE       ? PE_RUN_FAULT_USAGE
                         : g.usage == PE_GEN_USAGE_ARG ? PE_RUN_FAULT_USAGE_ARG
                                                       : PE_RUN_FAULT_ERROR, st);
    else
        st = write_tables(&g, a, rq, f, err);
    pe_gen_free(&g);
    return st;
}

/* The option of the first parameter in mask (lib/model/tableparams.c's table). */
static const char *first_given(unsigned mask)
{
    for (int p = 0; p < PE_TP_COUNT; p++)
        if (mask & PE_TP_BIT(p))
            return pe_table_param_name((pe_table_param)p);
    return NULL;
}

/* RoPE's options given for another encoding and the others' for RoPE (which encoding takes
 * which: lib/model/tableparams.c); forced: the encoding is --encoding's, not the config's. */
static posenc_status refuse_params(const pe_gen_args *a, int forced, pe_run_fail *f,
                                   posenc_error *err)
{
    unsigned given = a->p.given, rope_only = pe_table_rope_only();
    if (a->encoding != POSENC_ENC_ROPE && (given & rope_only) && forced)
        return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                             "%s applies only to RoPE tables", first_given(given & rope_only));
    if (a->encoding != POSENC_ENC_ROPE && (given & rope_only))
        return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                             "%s applies only to RoPE tables, and '%s' uses %s",
                             first_given(given & rope_only), a->config,
                             posenc_encoding_name(a->encoding));
    if (a->encoding == POSENC_ENC_ROPE && (given & ~rope_only))
        return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                             "%s does not apply to RoPE tables", first_given(given & ~rope_only));
    return POSENC_OK;
}

/* The output's format: --format, else from the name; '-' takes NPY only. */
static posenc_status output_format(pe_gen_args *a, posenc_write_opts *wo, pe_run_fail *f,
                                   posenc_error *err)
{
    if (wo->format == POSENC_FMT_AUTO) {
        wo->format = posenc_format_guess(a->out);
        if (wo->format == POSENC_FMT_AUTO)
            return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                                 "'%s': cannot tell the output format from the name; pass "
                                 "--format or end it in .npz, .npy, .h5, .hdf5, .safetensors, "
                                 ".h, .bin, .gguf or /", a->out);
    }
    a->format = wo->format;
    if (strcmp(a->out, "-") == 0 && !posenc_format_to_stdout(wo->format))
        return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                             "-o - writes NPY only, not %s", posenc_format_name(wo->format));
    return POSENC_OK;
}

posenc_status pe_grun_exec(const pe_grun_req *rq, pe_run_fail *f, posenc_error *err)
{
    pe_grun_req r = *rq; /* the run's copy: the format and arguments it settles */
    pe_gen_args *a = &r.a;
    posenc_model *m = NULL;
    pe_positions *positions = NULL;
    posenc_status st;

    f->fault = PE_RUN_FAULT_ERROR;
    f->msg = NULL;
    if (r.force)
        pe_outputs_force(1);
    if ((st = output_format(a, &r.wopts, f, err)) != POSENC_OK)
        return st;
    if (r.encoding_forced && (st = refuse_params(a, 1, f, err)) != POSENC_OK)
        return st; /* before reading any file */
    const char *inputs[] = { a->config, r.positions, a->weights };
    if ((st = pe_run_outputs(&a->out, 1, inputs, sizeof inputs / sizeof inputs[0], r.note,
                             r.note_ctx, f, err)) != POSENC_OK)
        return st;
    if (r.positions) {
        if ((st = pe_run_positions(r.positions, PE_GEN_POS_MAX, (uint64_t)PE_GEN_POS_MAX,
                                   &positions, f, err)) != POSENC_OK)
            return st;
        a->positions = positions;
        if ((st = pe_positions_one_axis(positions, r.positions, err)) != POSENC_OK) {
            pe_run_failed(f, PE_RUN_FAULT_ERROR, st);
            goto out;
        }
    }
    if (a->config &&
        (st = pe_run_config(a->config, r.family, r.note, r.note_ctx, &m, f, err)) != POSENC_OK)
        goto out;
    a->m = m;
    if (!r.encoding_forced) {
        a->encoding = posenc_model_encoding(m);
        if (a->encoding == POSENC_ENC_NONE) {
            st = pe_run_refuse(f, err, PE_RUN_FAULT_ERROR, POSENC_EINVAL,
                               "'%s': %s uses no position encoding (NoPE): there is no table "
                               "to generate", a->config, posenc_model_type(m));
            goto out;
        }
    }
    if ((st = refuse_params(a, r.encoding_forced, f, err)) == POSENC_OK)
        st = gen_write(a, &r, f, err);
out:
    posenc_model_free(m);
    pe_positions_free(positions);
    return st;
}
