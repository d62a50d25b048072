/* cmd/apply.c: posenc apply: rotate Q/K dumps by RoPE exactly as the model does, streaming.
 *
 * Options and glue over formats/engines/applyset.c, the engine of one run (one dump, a Q/K pair, or
 * every q/k pair of a multi-layer container, formats/engines/pairs.c), which streams the inputs through
 * formats/engines/applyrun.c (chunks of whole head vectors rotated by lib/encodings/apply.c) into the writers the
 * output pipeline opened (formats/io/out.c: size limit, temporary file + rename on commit, the
 * cleanup of a failure); positions are resolved by formats/engines/rows.c.
 * This file parses the options, prints the messages and picks the exit status. */
#include <stdlib.h>
#include <string.h>

#include "cmd/common.h"
#include "formats/io/inputs.h"
#include "cmd/opts.h"
#include "formats/engines/applyset.h"
#include "formats/engines/pairs.h"
#include "formats/engines/rows.h"
#include "posenc/apply.h"

#define CMD "apply"
#define POS_END (INT64_C(1) << 31)           /* positions lie in [0, 2^31) */

/* The engine's failure as the command reports it (s may be NULL: out of memory). */
static int set_fail(const pe_apply_set *s, const posenc_model *m, const posenc_error *err)
{
    switch (pe_apply_set_fault(s)) {
    case PE_APPLY_FAULT_USAGE: return cmd_usage_error(CMD, "%s", err->msg);
    case PE_APPLY_FAULT_ROPE: return cmd_rope_fail(CMD, m, err);
    default: return cmd_fail(CMD, err);
    }
}

static void print_note(void *ctx, const char *msg)
{
    (void)ctx;
    cmd_msg(CMD, "%s", msg);
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
    { .id = CMD_O_N_CTX },
    { .id = CMD_O_GGUF, .help = "a llama.cpp GGUF file: --layout ggml follows its\n"
                                "architecture, --precision ggml its RoPE keys" },
    { .id = CMD_O_LAYER_TYPE },
    { .id = CMD_O_FAMILY },
    { .id = CMD_O_SEQ_LEN, .help = "sequence length for dynamic/longrope selection; for\n"
                                   "llama.cpp its context size n_ctx (default: largest\n"
                                   "position + 1)" },
    { .id = CMD_O_OFFSET },
    { .id = CMD_O_POSITIONS,
      .help = "positions: a list like 0-15,100 or a file of integers\n"
              "shaped [seq], [batch, seq], [3, seq] or [3, batch, seq],\n"
              "or llama.cpp's [4, seq] (or 4 * seq values)" },
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
               *family = NULL, *glob = NULL, *gguf = NULL;
    posenc_apply_layout layout = POSENC_APPLY_BHSD;
    posenc_style style = POSENC_STYLE_NEOX;
    int style_set = 0, inverse = 0, dtype_set = 0, offset_set = 0, force = 0;
    posenc_precision prec = POSENC_PREC_EXACT;
    int64_t seq_len = 0, offset = 0, max_model_len = 0, n_ctx = 0;
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
        case CMD_O_N_CTX: n_ctx = p.i64; break;
        case OPT_INVERSE: inverse = 1; break;
        case CMD_O_DTYPE:
            out_dtype = p.dtype;
            if (!posenc_dtype_is_float(out_dtype))
                return cmd_usage_error(CMD, "--dtype: '%s' is not a float dtype "
                                               "(f16, bf16, f32, f64)", p.arg);
            dtype_set = 1;
            break;
        case CMD_O_ASSUME_BF16: ropts.assume_bf16 = 1; break;
        case CMD_O_FORCE:
            force = 1;
            pe_outputs_force(1);
            break;
        case CMD_O_QUIET: cmd_progress_quiet(); break;
        case CMD_O_PAIRS: glob = p.arg; break;
        case CMD_O_GGUF: gguf = p.arg; break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (gguf && prec != POSENC_PREC_GGML && layout != POSENC_APPLY_GGML)
        return cmd_usage_error(CMD, "--gguf applies only to --layout ggml and --precision ggml");
    if (max_model_len && prec != POSENC_PREC_VLLM)
        return cmd_usage_error(CMD, "--max-model-len applies only to --precision vllm");
    if (n_ctx && prec != POSENC_PREC_GGML)
        return cmd_usage_error(CMD, "--n-ctx applies only to --precision ggml");
    int nin = argc - p.optind;
    if (nin < 1 || nin > 2)
        return cmd_usage_error(CMD, nin < 1 ? "need Q and K dumps (or one dump X)"
                                              : "too many arguments: give Q and K, or one dump");
    if (!config)
        return cmd_usage_error(CMD, "--config FILE is required");
    if (positions_arg && offset_set)
        return cmd_usage_error(CMD, "--positions and --offset exclude each other");
    const char *in[2] = { argv[p.optind], nin == 2 ? argv[p.optind + 1] : NULL };
    char ipath[4096];
    posenc_container *ct = NULL;
    if (nin == 1)
        pe_pairs_open(in[0], glob, 0, &ropts, ipath, sizeof ipath, &ct, NULL);
    if (!ct) {
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
    }

    posenc_model *model = NULL;
    pe_apply_set *s = NULL;
    pe_dump_positions pos = { 0 };
    int rc = cmd_load_config(CMD, config, family, &model);
    if (rc)
        goto out;
    pe_apply_req rq = { model, config, layer_type, layout, style_set, style, prec, inverse,
                        dtype_set, out_dtype, seq_len, max_model_len, cmd_nthreads(),
                        positions_arg, print_note, NULL, force, 0, gguf, n_ctx };
    if (!(s = pe_apply_set_new(&rq))) {
        posenc_seterr(&err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    /* the inputs, and the output size from their declared shapes before anything is read */
    if ((ct ? pe_apply_set_add_pairs(s, ct, ipath, glob, &err)
            : pe_apply_set_add_inputs(s, in, nin, &ropts, &err)) != POSENC_OK)
        goto fail;
    if (pe_apply_set_plan(s)->over_limit) { /* the pipeline's one rule and wording */
        char msg[POSENC_ERRMSG_MAX + 64];
        pe_out_limit_message(pe_apply_set_plan(s), outp ? outp : ct ? ipath : in[0], NULL,
                             NULL, msg,
                             sizeof msg);
        cmd_msg(CMD, "%s", msg);
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    /* positions (one forward pass, shared by every layer), then the rotations */
    const posenc_apply_shape *sh = pe_apply_set_shape(s);
    pe_dump_positions_req preq = { positions_arg, offset, POS_END, pe_apply_set_mrope(s),
                                   sh->batch, sh->seq };
    int usage = 0;
    if (pe_dump_positions_load(&preq, &pos, &usage, &err) != POSENC_OK) {
        rc = usage ? cmd_usage_error(CMD, "%s", err.msg) : cmd_fail(CMD, &err);
        goto out;
    }
    if (pe_apply_set_rotations(s, &pos.apply, pos.max, &err) != POSENC_OK ||
        pe_apply_set_outputs(s, outp, &err) != POSENC_OK)
        goto fail;
    {
        /* every output (with its sidecar or meta.json) against every input, before writing */
        const char *ins[] = { config, ct ? ipath : in[0], in[1], positions_arg, gguf };
        const char *outs[] = { pe_apply_set_output(s, 0), pe_apply_set_output(s, 1) };
        if ((rc = cmd_check_outputs(CMD, outs, pe_apply_set_noutputs(s), ins,
                                    sizeof ins / sizeof *ins)))
            goto out;
    }
    if (pe_apply_set_write(s, &wopts, &err) != POSENC_OK)
        goto fail;
    rc = CMD_EXIT_OK;
    goto out;
fail:
    rc = set_fail(s, model, &err);
out:
    pe_apply_set_free(s);
    pe_dump_positions_free(&pos);
    posenc_model_free(model);
    posenc_container_close(ct);
    return rc;
}
