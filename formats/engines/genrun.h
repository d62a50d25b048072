/* formats/engines/genrun.h: one posenc gen run as an engine, the counterpart of verifyrun.h and
 * applyexec.h. From the request (the options as given) it chooses the output format, checks the
 * outputs against the inputs (run.h), reads --positions and the config, settles the encoding
 * and which parameters apply to it, builds the table (gentables.h: pe_gen_build), picks the
 * arrays (--array), plans their size and refuses a table over the limit or a C header of every
 * default position, and writes it through the output pipeline (formats/io/out.h: pe_out_plan,
 * pe_out_run). No printing: the lines on the way go to the request's note function, and a
 * failure is one line (err's, or the run's own in pe_run_fail) and how it reads.
 *
 * Internal (pe_ prefix). */
#ifndef PE_GENRUN_H
#define PE_GENRUN_H

#include "formats/engines/gentables.h"
#include "formats/engines/run.h"
#include "posenc/io.h"

/* What the run takes from the options (strings borrowed for the run; NULL: not given). */
typedef struct pe_grun_req {
    /* the table's arguments as given: config, out, dtype, seq_len, layer_type, precision,
     * layout, max_model_len, n_ctx, nthreads, p, weights, tensor; encoding when forced. The run
     * sets format, positions, m and (not forced) encoding in its own copy */
    pe_gen_args a;
    int encoding_forced;           /* --encoding: the encoding is the option's, not the config's */
    const char *family;            /* --family */
    const char *positions;         /* --positions LIST|FILE */
    const char *array;             /* --array NAME: write only this array */
    posenc_write_opts wopts;       /* --format (AUTO: from the name), --compress */
    int force;                     /* --force: no size limit, read-only files replaced */
    pe_run_note_fn note;           /* the lines a user must see (NULL: dropped) */
    void *note_ctx;
} pe_grun_req;

/* Run rq: POSENC_OK when the table is written; otherwise err (required) says why in one line
 * unless f->msg holds the run's own, and f->fault how it reads. Free f with pe_run_fail_free
 * whatever the result. */
posenc_status pe_grun_exec(const pe_grun_req *rq, pe_run_fail *f, posenc_error *err);

#endif
