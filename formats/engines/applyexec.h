/* formats/engines/applyexec.h: one posenc apply run as an engine, the counterpart of verifyrun.h
 * and genrun.h. From the request (the options as given) it runs every stage of apply in order:
 *   the inputs: a container of q/k pairs (pairs.h) or one dump or a Q/K pair, and the usage
 *   rules that depend on which -> the config (run.h) -> the set (applyset.h: readers, shapes,
 *   dtypes, the size plan, refused over the limit) -> the positions (rows.h, one forward pass
 *   shared by every layer) -> parameters and rotations per layer type and precision -> the
 *   outputs' names, checked against every input (run.h) -> open, metadata, stream
 *   (applyrun.h), commit.
 * No printing: the lines on the way (a config's warning, the set's notes) go to the set's note
 * function, and a failure is one line (err's, or the run's own in pe_run_fail) and how it reads.
 *
 * Internal (pe_ prefix). */
#ifndef PE_APPLYEXEC_H
#define PE_APPLYEXEC_H

#include <stdint.h>

#include "formats/engines/applyset.h"
#include "formats/engines/run.h"
#include "posenc/io.h"

/* What the run takes from the options (strings borrowed for the run; NULL: not given). */
typedef struct pe_arun_req {
    /* the set's request (applyset.h) as the options give it; the run sets its model, and its
     * note function also takes the config's warnings and the CPU path's */
    pe_apply_req set;
    const char *family;            /* --family */
    const char *in[2];             /* Q and K, or one dump X (in[1] NULL); "-": NPY on stdin */
    int nin;
    const char *glob;              /* --pairs GLOB */
    const char *out;               /* -o OUT; NULL: beside each input */
    int64_t offset;                /* --offset (without --positions) */
    posenc_read_opts ropts;        /* --assume-bf16 */
    posenc_write_opts wopts;       /* --format */
} pe_arun_req;

/* Run rq: POSENC_OK when every output is committed; otherwise nothing is left of them, err
 * (required) says why in one line unless f->msg holds the run's own, and f->fault how it
 * reads. Free f with pe_run_fail_free whatever the result. */
posenc_status pe_arun_exec(const pe_arun_req *rq, pe_run_fail *f, posenc_error *err);

#endif
