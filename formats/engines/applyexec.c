/* formats/engines/applyexec.c: one posenc apply run (applyexec.h). */
#include <string.h>

#include "formats/engines/applyexec.h"
#include "formats/engines/pairs.h"
#include "formats/engines/rows.h"
#include "formats/io/inputs.h"

#define POS_END (INT64_C(1) << 31)         /* positions lie in [0, 2^31) */
#define LIMIT_MSG_MAX (POSENC_ERRMSG_MAX + 64) /* the limit's refusal, at most (as it was) */

/* The usage rules of one dump or a Q/K pair (no container of pairs). */
static posenc_status usage_rules(const pe_arun_req *rq, pe_run_fail *f, posenc_error *err)
{
    const char *const *in = rq->in;
    const char *why = NULL;
    if (rq->glob)
        why = "--pairs needs one container (.h5, .npz, .safetensors, a directory) without a "
              "member name";
    else if (rq->nin == 2 && strcmp(in[0], "-") == 0 && strcmp(in[1], "-") == 0)
        why = "only one input can be '-' (stdin)";
    else if (!rq->out && (strcmp(in[0], "-") == 0 || (in[1] && strcmp(in[1], "-") == 0)))
        why = "reading stdin needs -o OUT";
    else if (rq->out && rq->nin == 2 && strcmp(rq->out, "-") == 0)
        why = "'-o -' writes one tensor; give one dump or an .npz, .h5, .safetensors or "
              "directory OUT";
    return why ? pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL, "%s", why) : POSENC_OK;
}

posenc_status pe_arun_exec(const pe_arun_req *rq, pe_run_fail *f, posenc_error *err)
{
    pe_apply_req sr = rq->set; /* the set's request, with the model the run loads */
    const char *const *in = rq->in;
    char ipath[4096];
    posenc_container *ct = NULL;
    posenc_model *model = NULL;
    pe_apply_set *s = NULL;
    pe_dump_positions pos = { 0 };
    posenc_status st;

    f->fault = PE_RUN_FAULT_ERROR;
    f->msg = NULL;
    if (sr.force)
        pe_outputs_force(1);
    /* one dump may be a container of q/k pairs */
    if (rq->nin == 1)
        pe_pairs_open(in[0], rq->glob, 0, &rq->ropts, ipath, sizeof ipath, &ct, NULL);
    if (!ct && (st = usage_rules(rq, f, err)) != POSENC_OK)
        return st;
    if ((st = pe_run_config(sr.config, rq->family, sr.note, sr.note_ctx, &model, f, err)) !=
        POSENC_OK)
        goto out;
    sr.model = model;
    if (!(s = pe_apply_set_new(&sr))) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    /* the inputs, and the output size from their declared shapes before anything is read */
    if ((st = ct ? pe_apply_set_add_pairs(s, ct, ipath, rq->glob, err)
                 : pe_apply_set_add_inputs(s, in, rq->nin, &rq->ropts, err)) != POSENC_OK)
        goto fail;
    if (pe_apply_set_plan(s)->over_limit) { /* the pipeline's one rule and wording */
        char msg[LIMIT_MSG_MAX];
        pe_out_limit_message(pe_apply_set_plan(s), rq->out ? rq->out : ct ? ipath : in[0],
                             NULL, NULL, msg, sizeof msg);
        st = pe_run_refuse(f, err, PE_RUN_FAULT_ERROR, POSENC_ERANGE, "%s", msg);
        goto out;
    }
    /* positions (one forward pass, shared by every layer), then the rotations */
    const posenc_apply_shape *sh = pe_apply_set_shape(s);
    pe_dump_positions_req preq = { sr.positions_arg, rq->offset, POS_END, pe_apply_set_mrope(s),
                                   sh->batch, sh->seq };
    int usage = 0;
    if ((st = pe_dump_positions_load(&preq, &pos, &usage, err)) != POSENC_OK) {
        pe_run_failed(f, usage ? PE_RUN_FAULT_USAGE : PE_RUN_FAULT_ERROR, st);
        goto out;
    }
    if ((st = pe_apply_set_rotations(s, &pos.apply, pos.max, err)) != POSENC_OK ||
        (st = pe_apply_set_outputs(s, rq->out, err)) != POSENC_OK)
        goto fail;
    {
        /* every output (with its sidecar or meta.json) against every input, before writing */
        const char *ins[] = { sr.config, ct ? ipath : in[0], in[1], sr.positions_arg, sr.gguf };
        const char *outs[] = { pe_apply_set_output(s, 0), pe_apply_set_output(s, 1) };
        if ((st = pe_run_outputs(outs, pe_apply_set_noutputs(s), ins, sizeof ins / sizeof *ins,
                                 sr.note, sr.note_ctx, f, err)) != POSENC_OK)
            goto out;
    }
    if ((st = pe_apply_set_write(s, &rq->wopts, err)) != POSENC_OK)
        goto fail;
    goto out;
fail:
    switch (pe_apply_set_fault(s)) {
    case PE_APPLY_FAULT_USAGE: pe_run_failed(f, PE_RUN_FAULT_USAGE, st); break;
    case PE_APPLY_FAULT_ROPE: pe_run_failed(f, pe_run_rope_fault(model, err), st); break;
    default: pe_run_failed(f, PE_RUN_FAULT_ERROR, st); break;
    }
out:
    pe_apply_set_free(s);
    pe_dump_positions_free(&pos);
    posenc_model_free(model);
    posenc_container_close(ct);
    return st;
}
