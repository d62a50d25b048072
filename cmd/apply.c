/* cmd/apply.c: posenc apply: rotate Q/K dumps by RoPE exactly as the model does, streaming.
 *
 * The option table and the option loop into one request of apply's engine
 * (formats/engines/applyexec.h: the inputs, one dump, a Q/K pair or every q/k pair of a
 * multi-layer container, the config, the size plan, the positions, the rotations per layer type
 * and precision, the outputs, streamed through formats/engines/applyrun.c and committed by the
 * output pipeline, formats/io/out.c). This file checks that the options fit together, prints
 * the messages and picks the exit status. */
#include "cmd/common.h"
#include "cmd/opts.h"
#include "formats/engines/applyexec.h"
#include "posenc/apply.h"

#define CMD "apply"

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
    pe_arun_req rq = { .set = { .layout = POSENC_APPLY_BHSD, .style = POSENC_STYLE_NEOX,
                                .prec = POSENC_PREC_EXACT, .out_dtype = POSENC_DT_F32,
                                .nthreads = cmd_nthreads(), .note = cmd_note,
                                .note_ctx = (void *)CMD },
                       .ropts = { .format = POSENC_FMT_AUTO },
                       .wopts = { .format = POSENC_FMT_AUTO } };
    pe_apply_req *r = &rq.set;
    posenc_error err = { 0 };
    pe_run_fail f = { 0 };
    int offset_set = 0, c, rc;

    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_apply_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_CONFIG: r->config = p.arg; break;
        case CMD_O_OUTPUT: rq.out = p.arg; break;
        case CMD_O_FORMAT: rq.wopts.format = p.format; break;
        case CMD_O_DUMP_LAYOUT: r->layout = p.dump_layout; break;
        case CMD_O_STYLE: r->style = p.style; r->style_set = 1; break;
        case CMD_O_PRECISION: r->prec = p.precision; break;
        case CMD_O_LAYER_TYPE: r->layer_type = p.arg; break;
        case CMD_O_FAMILY: rq.family = p.arg; break;
        case CMD_O_SEQ_LEN: r->seq_len = p.i64; break;
        case CMD_O_OFFSET: rq.offset = p.i64; offset_set = 1; break;
        case CMD_O_POSITIONS: r->positions_arg = p.arg; break;
        case CMD_O_MAX_MODEL_LEN: r->max_model_len = p.i64; break;
        case CMD_O_N_CTX: r->n_ctx = p.i64; break;
        case OPT_INVERSE: r->inverse = 1; break;
        case CMD_O_DTYPE:
            r->out_dtype = p.dtype;
            if (!posenc_dtype_is_float(r->out_dtype))
                return cmd_usage_error(CMD, "--dtype: '%s' is not a float dtype "
                                               "(f16, bf16, f32, f64)", p.arg);
            r->dtype_set = 1;
            break;
        case CMD_O_ASSUME_BF16: rq.ropts.assume_bf16 = 1; break;
        case CMD_O_FORCE: r->force = 1; break;
        case CMD_O_QUIET: cmd_progress_quiet(); break;
        case CMD_O_PAIRS: rq.glob = p.arg; break;
        case CMD_O_GGUF: r->gguf = p.arg; break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (r->gguf && r->prec != POSENC_PREC_GGML && r->layout != POSENC_APPLY_GGML)
        return cmd_usage_error(CMD, "--gguf applies only to --layout ggml and --precision ggml");
    if (r->max_model_len && r->prec != POSENC_PREC_VLLM)
        return cmd_usage_error(CMD, "--max-model-len applies only to --precision vllm");
    if (r->n_ctx && r->prec != POSENC_PREC_GGML)
        return cmd_usage_error(CMD, "--n-ctx applies only to --precision ggml");
    rq.nin = argc - p.optind;
    if (rq.nin < 1 || rq.nin > 2)
        return cmd_usage_error(CMD, rq.nin < 1 ? "need Q and K dumps (or one dump X)"
                                                 : "too many arguments: give Q and K, or one dump");
    if (!r->config)
        return cmd_usage_error(CMD, "--config FILE is required");
    if (r->positions_arg && offset_set)
        return cmd_usage_error(CMD, "--positions and --offset exclude each other");
    rq.in[0] = argv[p.optind];
    rq.in[1] = rq.nin == 2 ? argv[p.optind + 1] : NULL;
    rc = pe_arun_exec(&rq, &f, &err) == POSENC_OK ? CMD_EXIT_OK : cmd_run_fail(CMD, &f, &err);
    pe_run_fail_free(&f);
    return rc;
}
