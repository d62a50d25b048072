/* formats/engines/run.h: the steps every command's run shares, for the engines that run a whole
 * command behind one request (gen's genrun.h, apply's applyexec.h): load the config, check the
 * outputs against the inputs, read --positions, and the way a failed run tells the command how
 * it reads. No printing: the lines a user must see on the way (a config's warning, a CPU path's
 * fallback, an engine's note) go to the caller's note function, in the order they happen.
 *
 * Internal (pe_ prefix). */
#ifndef PE_RUN_H
#define PE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "formats/engines/positions.h"
#include "posenc/error.h"
#include "posenc/model.h"

/* How a failure reads on the command line: exit 3 (POSENC_EOVERWRITE: 2); a usage error with
 * the help hint (exit 2); one without it (a value the user gave that the inputs contradict,
 * exit 2). A posenc_model_rope failure reads as pe_run_rope_fault says. */
enum { PE_RUN_FAULT_ERROR = 0, PE_RUN_FAULT_USAGE, PE_RUN_FAULT_USAGE_ARG };

/* One line of information for the user ("'FILE': what"); the caller prints it. */
typedef void (*pe_run_note_fn)(void *ctx, const char *msg);

/* A failed run: its fault and, when the run worded the line itself (a refusal of its own, of
 * any length, written as is), that line (caller frees with pe_run_fail_free); msg NULL: the
 * line is err's message. */
typedef struct pe_run_fail {
    int fault;
    char *msg;
} pe_run_fail;

/* Record a failure of the run's own wording (printf format) in f; returns code (out of memory:
 * POSENC_ENOMEM, the line in err). */
posenc_status pe_run_refuse(pe_run_fail *f, posenc_error *err, int fault, posenc_status code,
                            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Record a failure whose line is err's (code: err's status); returns code. */
posenc_status pe_run_failed(pe_run_fail *f, int fault, posenc_status code);
void pe_run_fail_free(pe_run_fail *f); /* NULL and a zeroed struct are fine */

/* Give note (NULL: dropped) one line (printf format). */
void pe_run_notef(pe_run_note_fn note, void *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* How a posenc_model_rope failure of model m reads: a model that does not rotate is the input's
 * fact (exit 3); a --layer-type the config does not have, one without RoPE, or none given where
 * the config has several (POSENC_ENOTFOUND, POSENC_EINVAL) a usage error without the hint. */
int pe_run_rope_fault(const posenc_model *m, const posenc_error *err);

/* Load a config (a file or a model directory) through the model-family registry, as family
 * (NULL: by model_type) says: an unknown family is a usage error, "--family: why"; the model's
 * warnings (an unknown model_type resolved with the generic rules) go to note as
 * "'PATH': warning". *out is set on success (caller frees with posenc_model_free). */
posenc_status pe_run_config(const char *path, const char *family, pe_run_note_fn note,
                            void *ctx, posenc_model **out, pe_run_fail *f, posenc_error *err);

/* The one output-safety rule: '-' (binary NPY on standard output) is refused, a usage error,
 * when standard output is a terminal; record the run's input files (NULL entries and "-"
 * skipped; a FILE:MEMBER spec by its file; standard input when it is a regular file) and
 * refuse (exit 2, no hint) when writing any of outs (with the files each implies: a raw
 * sidecar, a directory's meta.json) would replace one of them. Then POSENC_CPU: an unknown
 * name refused (exit 2), a fallback noted. The writers check again when they create each
 * file. */
posenc_status pe_run_outputs(const char *const *outs, size_t nout, const char *const *ins,
                             size_t nin, pe_run_note_fn note, void *ctx, pe_run_fail *f,
                             posenc_error *err);

/* --positions SPEC: a list like 0,1,8-15 or, when SPEC names a file, an integer array read from
 * it (formats/engines/positions.h), every position in [0, end) and at most max_count of them
 * (a file: at most PE_POSITIONS_FILE_MAX), counted before anything is allocated. A bad list is
 * a usage error ("--positions: why"), a file that cannot be read or holds bad values exit 3.
 * *out is set on success (caller frees with pe_positions_free). */
posenc_status pe_run_positions(const char *spec, int64_t end, uint64_t max_count,
                               pe_positions **out, pe_run_fail *f, posenc_error *err);

#endif
