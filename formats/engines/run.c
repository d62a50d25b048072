/* formats/engines/run.c: the steps every command's run shares (run.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/engines/run.h"
#include "formats/io/inputs.h"
#include "posenc/posenc.h"

/* fmt with ap in a new string, or NULL when out of memory. */
static char *vformat(const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

posenc_status pe_run_refuse(pe_run_fail *f, posenc_error *err, int fault, posenc_status code,
                            const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    free(f->msg);
    f->msg = s;
    f->fault = fault;
    if (!s) { /* out of memory: err's line says so */
        f->fault = PE_RUN_FAULT_ERROR;
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    return code;
}

posenc_status pe_run_failed(pe_run_fail *f, int fault, posenc_status code)
{
    free(f->msg);
    f->msg = NULL;
    f->fault = fault;
    return code;
}

void pe_run_fail_free(pe_run_fail *f)
{
    if (!f)
        return;
    free(f->msg);
    f->msg = NULL;
}

void pe_run_notef(pe_run_note_fn note, void *ctx, const char *fmt, ...)
{
    if (!note)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    note(ctx, s ? s : "out of memory");
    free(s);
}

int pe_run_rope_fault(const posenc_model *m, const posenc_error *err)
{
    if (m && posenc_model_encoding(m) != POSENC_ENC_ROPE)
        return PE_RUN_FAULT_ERROR;
    return err && (err->code == POSENC_ENOTFOUND || err->code == POSENC_EINVAL)
               ? PE_RUN_FAULT_USAGE_ARG : PE_RUN_FAULT_ERROR;
}

posenc_status pe_run_config(const char *path, const char *family, pe_run_note_fn note,
                            void *ctx, posenc_model **out, pe_run_fail *f, posenc_error *err)
{
    posenc_load_opts opts = { .family = family };
    posenc_model *m = NULL;
    posenc_status st;
    *out = NULL;
    if (family) {
        posenc_family_info fi;
        if ((st = posenc_family_find(family, &fi, err)) != POSENC_OK)
            return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, st, "--family: %s", err->msg);
    }
    if ((st = posenc_config_load(path, &opts, &m, err)) != POSENC_OK)
        return pe_run_failed(f, PE_RUN_FAULT_ERROR, st);
    for (size_t i = 0; posenc_model_warning_at(m, i); i++)
        pe_run_notef(note, ctx, "'%s': %s", path, posenc_model_warning_at(m, i));
    *out = m;
    return POSENC_OK;
}

posenc_status pe_run_outputs(const char *const *outs, size_t nout, const char *const *ins,
                             size_t nin, pe_run_note_fn note, void *ctx, pe_run_fail *f,
                             posenc_error *err)
{
    char path[4096], member[POSENC_NAME_MAX];
    posenc_status st;
    for (size_t i = 0; i < nin; i++) {
        if (!ins[i])
            continue;
        if (strcmp(ins[i], "-") == 0) {
            pe_input_add_fd(0, "-");
            continue;
        }
        pe_input_add(ins[i]);
        if (posenc_spec_split(ins[i], path, sizeof path, member, sizeof member, NULL) ==
            POSENC_OK)
            pe_input_add(path);
    }
    for (size_t i = 0; i < nout; i++) {
        /* '-o -' is binary NPY: never onto a terminal (it would garble it), as gzip refuses */
        if (outs[i] && strcmp(outs[i], "-") == 0 && isatty(STDOUT_FILENO))
            return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, POSENC_EINVAL,
                                 "'-': standard output is a terminal and NPY is binary; "
                                 "redirect it (> FILE.npy or | PROGRAM) or name a file");
        if (outs[i] && (st = pe_output_check(outs[i], err)) != POSENC_OK)
            return pe_run_failed(f, PE_RUN_FAULT_USAGE_ARG, st);
    }
    /* POSENC_CPU: a name posenc does not know is refused; a path this CPU cannot run falls back
     * to the best one below it, with a warning */
    posenc_error cerr = { 0 };
    st = posenc_cpu_env_check(&cerr);
    if (st == POSENC_EINVAL) {
        *err = cerr;
        return pe_run_failed(f, PE_RUN_FAULT_USAGE_ARG, st);
    }
    if (st != POSENC_OK && note)
        note(ctx, cerr.msg);
    return POSENC_OK;
}

posenc_status pe_run_positions(const char *spec, int64_t end, uint64_t max_count,
                               pe_positions **out, pe_run_fail *f, posenc_error *err)
{
    posenc_status st;
    *out = NULL;
    if (pe_positions_is_file(spec)) {
        st = pe_positions_read(spec, end, max_count < PE_POSITIONS_FILE_MAX ? max_count
                                                                           : PE_POSITIONS_FILE_MAX,
                               out, err);
        return st == POSENC_OK ? st : pe_run_failed(f, PE_RUN_FAULT_ERROR, st);
    }
    st = pe_positions_parse(spec, end, max_count, out, err);
    if (st == POSENC_EINVAL || st == POSENC_ERANGE)
        return pe_run_refuse(f, err, PE_RUN_FAULT_USAGE, st, "--positions: %s", err->msg);
    return st == POSENC_OK ? st : pe_run_failed(f, PE_RUN_FAULT_ERROR, st);
}
