/* formats/engines/applyset.h: the set of one posenc apply run: the dumps to rotate (one dump, a
 * Q/K pair, or every q/k pair of a multi-layer container), the rotation each gets, where each is
 * written and with what metadata, streamed through formats/engines/applyrun.c. The run itself
 * (formats/engines/applyexec.h, pe_arun_exec) loads the config, resolves the positions and
 * drives these stages; cmd/apply.c prints what it says.
 *
 * The stages, in order, each returning POSENC_OK or an error naming the file:
 *   pe_apply_set_new -> _add_inputs or _add_pairs (shapes, dtypes, the size plan: _plan)
 *   -> _rotations (positions known: parameters and rotations per layer type and dtype)
 *   -> _outputs (output paths and array names) -> _write (open, metadata, declare, stream, commit)
 * The size plan and limit, open, metadata, declare, commit and the cleanup of a failure are the
 * output pipeline's stages (formats/io/out.h: pe_out_plan, pe_out_open, pe_out_commit,
 * pe_out_abort), the same as gen's and convert's; only the streaming is apply's own
 * (formats/engines/applyrun.c: each chunk read, its rotation split between two threads, written).
 * pe_apply_set_fault tells how the last failure reads on the command line.
 *
 * Internal (pe_ prefix). */
#ifndef PE_APPLYSET_H
#define PE_APPLYSET_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/apply.h"
#include "posenc/io.h"
#include "posenc/model.h"
#include "formats/io/out.h"

/* What the run takes from the options (all borrowed for the life of the set). */
typedef struct pe_apply_req {
    const posenc_model *model;
    const char *config;          /* the config's name, in messages and the metadata */
    const char *layer_type;      /* --layer-type, or NULL */
    posenc_apply_layout layout;
    int style_set;
    posenc_style style;          /* with style_set: replaces the config's pairing */
    posenc_precision prec;
    int inverse;
    int dtype_set;
    posenc_dtype out_dtype;      /* with dtype_set: every output's dtype, else the input's */
    int64_t seq_len;             /* 0: largest position + 1 */
    int64_t max_model_len;       /* vllm; 0: max_position_embeddings */
    int nthreads;                /* for posenc_apply_new, and > 1 lets the pipeline thread */
    const char *positions_arg;   /* --positions as given, for messages; may be NULL */
    /* one line of information ("'FILE': what"), the caller prints it; NULL: dropped */
    void (*note)(void *ctx, const char *msg);
    void *note_ctx;
    int force;                   /* --force: no size limit */
    uint64_t size_limit;         /* bytes of output without force; 0: PE_OUT_SIZE_LIMIT */
    const char *gguf;            /* --gguf: the llama.cpp file whose architecture and RoPE
                                    keys the ggml layout and precision follow; NULL: the
                                    config's (lib/model/families.def gguf_arch, the converter's keys) */
    int64_t n_ctx;               /* ggml: llama.cpp's n_ctx (LongRoPE's long/short choice);
                                    0: the sequence length */
} pe_apply_req;

typedef struct pe_apply_set pe_apply_set;

/* How a failure reads: input or runtime error (exit 3), usage error (exit 2: a --pairs glob
 * that matches nothing, an output name without a format), or a posenc_model_rope failure (a
 * --layer-type the config lacks: the caller applies its layer-type rule). */
enum { PE_APPLY_FAULT_ERROR = 0, PE_APPLY_FAULT_USAGE, PE_APPLY_FAULT_ROPE };

/* A new, empty run over rq (copied; its pointers stay borrowed). NULL when out of memory. Free
 * with pe_apply_set_free. */
pe_apply_set *pe_apply_set_new(const pe_apply_req *rq);
void pe_apply_set_free(pe_apply_set *s); /* NULL is fine; aborts unwritten outputs */

/* One dump or a Q/K pair (nin 1 or 2; "-" is NPY on stdin; FILE:MEMBER names a member), with
 * rq->layer_type's parameters: checks the RoPE of that layer type, opens the readers, checks
 * dtypes (f16, bf16, f32, f64) and shapes (Q and K agree on batch, seq and head_dim). The
 * input specs are borrowed. */
posenc_status pe_apply_set_add_inputs(pe_apply_set *s, const char *const *in, int nin,
                                      const posenc_read_opts *ro, posenc_error *err);
/* Every q/k pair of an open container c (borrowed; path: its file) matching glob (NULL: all,
 * formats/engines/pairs.h), each pair with its layer's parameters, a NoPE layer copied unchanged. */
posenc_status pe_apply_set_add_pairs(pe_apply_set *s, posenc_container *c, const char *path,
                                     const char *glob, posenc_error *err);

/* Summary of the inputs: the size plan of every output together (borrowed: bytes, values,
 * over_limit when the bytes pass rq->size_limit without rq->force; the writing refuses such a
 * plan, and pe_out_limit_message words the refusal), the shape positions must fit (the first
 * dump's; every other agrees on batch and seq), and whether a rotated layer is multimodal
 * (positions may then be 3-axis). */
const pe_out *pe_apply_set_plan(const pe_apply_set *s);
const posenc_apply_shape *pe_apply_set_shape(const pe_apply_set *s);
int pe_apply_set_mrope(const pe_apply_set *s);

/* Parameters and rotations for positions pos (borrowed until the set is freed; max: the
 * largest position), one per layer type and input dtype: --seq-len or max + 1 selects
 * dynamic/longrope factors; vllm refuses positions past its cos_sin_cache; ggml takes
 * llama.cpp's arguments; every dump is checked against its rotation. */
posenc_status pe_apply_set_rotations(pe_apply_set *s, const posenc_apply_positions *pos,
                                     int64_t max, posenc_error *err);

/* Where the run writes: outp (NULL: beside each input, pe_apply_output_name) and each array's
 * name. Then pe_apply_set_noutputs / pe_apply_set_output (borrowed) list the paths. */
posenc_status pe_apply_set_outputs(pe_apply_set *s, const char *outp, posenc_error *err);
size_t pe_apply_set_noutputs(const pe_apply_set *s);
const char *pe_apply_set_output(const pe_apply_set *s, size_t i);

/* Open every output (wo->format AUTO: from the name; pe_out_open), write the metadata
 * (posenc_apply_config, _style, _precision, _inverse; _layers for pairs), declare the arrays,
 * stream every dump through the rotation (threaded unless a file's format is not thread-safe)
 * and commit (pe_out_commit). A plan over the limit is refused before anything is opened; on
 * failure no output nor temporary is left. */
posenc_status pe_apply_set_write(pe_apply_set *s, const posenc_write_opts *wo,
                                 posenc_error *err);

int pe_apply_set_fault(const pe_apply_set *s);

/* ---- output naming (also for verify) ---- */

/* "a/b/q.npy" -> dir "a/b/", stem "q", ext ".npy" (a leading dot is part of the stem). */
void pe_apply_split_name(const char *path, char *dir, size_t dlen, char *stem, size_t slen,
                         char *ext, size_t elen);
/* A member path as an array name: "/layer0/q" -> "layer0_q" ('/' and ':' become '_'). */
void pe_apply_member_name(const char *member, char *out, size_t len);
/* The output written beside an input when there is no -o: for one dump, X.EXT -> X.rope.EXT
 * (EXT a format's extension), F.EXT:M -> F.M'.rope.npy (M' = pe_apply_member_name(M)), anything
 * else X.rope.npy after the whole name; for a container's pairs (pairs set), X.EXT ->
 * X.rope.EXT, X -> X.rope.npz. Caller frees; NULL when out of memory. */
char *pe_apply_output_name(const char *path, const char *member, int pairs);

#endif
