/* formats/engines/verifyrun.h: one posenc verify run as an engine, the counterpart of applyset.h.
 *
 * What to check follows from the request and the model:
 *   a model without RoPE          -> the ALiBi, T5 or sinusoidal checks (report_checks.c)
 *   --gguf FILE                   -> the GGUF file's RoPE keys and tensors against the config
 *   --q/--k dumps                 -> invariance of sampled pre-RoPE rows, and each compared dump
 *                                    against posenc's rotation, with the runtimes that fit and
 *                                    the diagnosis of a failure (lib/verify/verify_diagnose.c)
 *   --q naming a container        -> the same for every q/k pair, each with its layer's
 *                                    parameters (verifyset.h), a failed pair explained by the
 *                                    other layer types' parameters (lib/verify/verify_profiles.c)
 *   a config alone                -> invariance of seeded random (q, k) pairs, per layer type
 * and every check goes into one report tree (formats/report/report.h), whose writers and text summary
 * the command calls. No printing; a failure is one line in posenc_error, and pe_vrun's fault
 * tells how it reads on the command line.
 *
 * Internal (pe_ prefix). */
#ifndef PE_VERIFYRUN_H
#define PE_VERIFYRUN_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "formats/engines/pairs.h"
#include "posenc/apply.h"
#include "posenc/io.h"
#include "posenc/llamacpp.h"
#include "posenc/model.h"
#include "posenc/rope.h"

/* What the run takes from the options (strings borrowed for the run; NULL: not given). */
typedef struct pe_vrun_req {
    const char *config;                 /* the config's name, in messages and the report */
    const char *layer_type, *variant, *gguf;
    const char *q, *k, *eq, *ek;        /* pre-RoPE dumps, the runtime's rotated dumps */
    const char *positions;              /* --positions */
    posenc_apply_layout layout;
    int64_t offset;
    int64_t seq_len;                    /* the dumps' sequence length; 0: largest position + 1 */
    int64_t n_ctx;                      /* llama.cpp's n_ctx for the ggml profile and precision;
                                           0: seq_len */
    int64_t max_position;               /* largest offset checked; 0: max_position_embeddings */
    uint64_t seed;
    int samples;                        /* random (q, k) pairs per distance */
    int rotated, assume_bf16;
    int has_tol, has_hf_tol, has_style, has_prec;
    double tol, hf_tol;
    posenc_style style;                 /* with has_style: replaces the config's pairing */
    posenc_precision prec;              /* with has_prec: the rotation the dumps are held to */
    int max_ulp;                        /* -1, or --max-ulp: every element within that many
                                           ulps of posenc's rotation under prec */
    /* --q naming a container of q/k pairs (pe_vrun_open_pairs): every pair in it, against the
     * same groups of eq; NULL qpairs: q and k are one pair each. The run sets each pair's
     * layer type (pe_pairs_layers) */
    const posenc_container *qc;
    pe_pairs *qpairs;
    const char *qpath;
    const char *glob;                   /* --pairs */
} pe_vrun_req;

/* How a failure reads: exit 3; a usage error with the help hint (exit 2); one without it (a
 * value the user gave that the inputs contradict, exit 2); a posenc_model_rope failure (the
 * caller's layer-type rule). */
enum { PE_VRUN_FAULT_ERROR = 0, PE_VRUN_FAULT_USAGE, PE_VRUN_FAULT_USAGE_ARG, PE_VRUN_FAULT_ROPE };

typedef struct pe_vrun {
    cJSON *root;             /* the report tree; "ok" set when the run succeeds */
    int failed, n_checks;
    int fault;               /* PE_VRUN_FAULT_* of the failure */
    /* the pair being checked (a multi-layer dump): check names get "@GROUP", its rope
     * parameters go to its row, and a layer without RoPE is checked as not rotated */
    const char *suffix;
    cJSON *row;
    int nope;
    int64_t layer;
    /* --gguf with dumps: the file's keys, which the ggml profile and --precision ggml follow */
    posenc_gguf_rope *file;
    int layout_noted;
} pe_vrun;

/* The container a dump argument names when verify is to take every pair in it (pe_pairs_open,
 * pe_pairs_find with glob), or *pairs NULL when spec is one array. *usage: the failure is a
 * usage error (no pair matching glob). Free with pe_pairs_free and posenc_container_close. */
posenc_status pe_vrun_open_pairs(const char *spec, const char *glob, int must, int assume_bf16,
                                 posenc_container **c, pe_pairs **pairs, char *path,
                                 size_t plen, int *usage, posenc_error *err);

/* Run every check rq asks of m into v (zeroed first; free it with pe_vrun_free whatever the
 * result). On failure err (required, as in pe_vrun_open_pairs) says why in one line and
 * v->fault how it reads. */
posenc_status pe_vrun_exec(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                           posenc_error *err);
void pe_vrun_free(pe_vrun *v);

#endif
