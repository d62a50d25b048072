/* cmd/gen.c: posenc gen: the option table and the option loop into one request of gen's engine
 * (formats/engines/genrun.h: output format and checks, positions, config, the table built by
 * gentables.h, the size limit, the writing through formats/io/out.h); this file prints what the
 * run says and picks the exit status. */
#include "cmd/common.h"
#include "formats/engines/genrun.h"
#include "cmd/opts.h"

#define CMD "gen"
_Static_assert(CMD_POS_MAX == PE_GEN_POS_MAX, "one position limit for options and tables");

enum {
    OPT_ENCODING = 256, OPT_TABLE_LAYOUT, OPT_ARRAY, OPT_HEADS, OPT_D_MODEL, OPT_NUM_BUCKETS,
    OPT_MAX_DISTANCE, OPT_MAX_REL, OPT_CONVENTION, OPT_WEIGHTS, OPT_TENSOR, OPT_DECODER,
    OPT_BROADCAST
};

static const struct cmd_opt gen_opts[] = {
    CMD_OPT_GROUP("input:"),
    { .id = CMD_O_CONFIG, .help = "Hugging Face config.json" },
    { .id = CMD_O_FAMILY },
    { OPT_ENCODING, "encoding", 0, "E", CMD_T_STR, 0, 0,
      "rope, alibi, t5, shaw, sinusoidal or learned (default: what\n"
      "the config uses)", NULL },
    { .id = CMD_O_LAYER_TYPE, .arg = "T", .help = "layer type of a config with several (Gemma 3/4, MiMo)" },
    CMD_OPT_GROUP("positions:"),
    { .id = CMD_O_SEQ_LEN, .help = "rows for positions 0..N-1; N is also the sequence length\n"
                             "that picks dynamic and longrope parameters" },
    { .id = CMD_O_POSITIONS, .arg = "LIST|FILE",
      .help = "rows for these positions only: 0,1,8-15 or a file of\n"
              "integers (.npy, .npz:NAME, ...); parameters use\n"
              "max(position)+1 as the sequence length\n"
              "(default: 0..max_position_embeddings-1)" },
    CMD_OPT_GROUP("RoPE tables:"),
    { .id = CMD_O_PRECISION, .help = "exact (default: correctly rounded values), hf\n"
                               "(transformers' float32 pipeline), vllm (vLLM's\n"
                               "cos_sin_cache; rows default to the cache's length) or\n"
                               "ggml (llama.cpp's CPU numerics for the GGUF its\n"
                               "converter writes)" },
    { .id = CMD_O_MAX_MODEL_LEN, .help = "vllm: the runtime's max_model_len, which picks LongRoPE's\n"
                                   "factors (default: max_position_embeddings)" },
    { .id = CMD_O_N_CTX },
    { OPT_TABLE_LAYOUT, "table-layout", 0, "L", CMD_T_STR, 0, 0,
      "hf (default: cat(freqs, freqs), rotary_dim wide), half\n"
      "(rotary_dim/2 wide), interleaved (each frequency twice)\n"
      "or vllm (one array cos_sin_cache = cat(cos half, sin half))", NULL },
    { OPT_TABLE_LAYOUT, "layout", 0, "L", CMD_T_STR, 0, 0,
      "deprecated alias of --table-layout (in apply and verify\n"
      "--layout is the dump layout)", "--table-layout" },
    { OPT_ARRAY, "array", 0, "NAME", CMD_T_STR, 0, 0,
      "write only this array: cos, sin, cos_sin_cache\n"
      "(--table-layout vllm) or inv_freq (required for .npy\n"
      "output and -o -)", NULL },
    CMD_OPT_GROUP("output:"),
    { .id = CMD_O_OUTPUT, .help = "OUT.npz, a directory (OUT/), OUT.npy, OUT.h5,\n"
                            "OUT.safetensors, OUT.h, OUT.bin, OUT.gguf (with\n"
                            "llama.cpp's RoPE keys), or - for NPY on stdout" },
    { .id = CMD_O_FORMAT },
    { .id = CMD_O_DTYPE, .help = "f32 (default), f64, f16 or bf16" },
    { .id = CMD_O_COMPRESS },
    { .id = CMD_O_FORCE, .help = "write a table larger than 4 GiB; replace a read-only\n"
                                 "or another user's file" },
    { .id = CMD_O_QUIET },
    CMD_OPT_GROUP("non-rotary encodings:"),
    { OPT_HEADS, "heads", 0, "N", CMD_T_I64, 1, 1 << 16,
      "ALiBi/T5: number of heads (default: from the config)", NULL },
    { .id = CMD_O_VARIANT, .arg = "NAME",
      .help = "ALiBi slopes reference, mpt or falcon; sinusoidal vaswani,\n"
              "t2t, fairseq, marian or cos_sin" },
    { OPT_CONVENTION, "convention", 0, "C", CMD_T_STR, 0, 0,
      "ALiBi bias convention symmetric, causal or keyindex", NULL },
    { OPT_BROADCAST, "broadcast", 0, NULL, CMD_T_FLAG, 0, 0,
      "ALiBi bias as [heads, 1, keys] instead of [heads, q, keys]", NULL },
    { OPT_NUM_BUCKETS, "num-buckets", 0, "N", CMD_T_I64, 2, 1 << 20,
      "T5 relative_attention_num_buckets", NULL },
    { OPT_MAX_DISTANCE, "max-distance", 0, "N", CMD_T_I64, 1, 1 << 30,
      "T5 relative_attention_max_distance", NULL },
    { OPT_DECODER, "decoder", 0, NULL, CMD_T_FLAG, 0, 0, "T5 decoder (causal) buckets", NULL },
    { OPT_MAX_REL, "max-relative-position", 0, "N", CMD_T_I64, 1, 1 << 30,
      "Shaw clipping distance k", NULL },
    { OPT_D_MODEL, "d-model", 0, "N", CMD_T_I64, 1, 1 << 20, "sinusoidal width", NULL },
    { OPT_WEIGHTS, "weights", 0, "FILE", CMD_T_STR, 0, 0,
      "T5/Shaw embedding weights or a learned table's checkpoint", NULL },
    { OPT_TENSOR, "tensor", 0, "NAME", CMD_T_STR, 0, 0, "tensor in --weights (learned table)",
      NULL },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_gen_spec = {
    "gen",
    "usage: posenc gen --config FILE -o OUT [options]\n"
    "\n"
    "Write the position-encoding tables a model config implies: RoPE cos/sin tables and\n"
    "inv_freq, or the bias/embedding tables of ALiBi, T5, Shaw and sinusoidal encodings.\n"
    "\n",
    27, gen_opts
};

/* Options that set a parameter of lib/model/tableparams.c's table, and which. */
static const struct {
    int opt;
    pe_table_param p;
} param_opts[] = {
    { CMD_O_LAYER_TYPE, PE_TP_LAYER_TYPE }, { CMD_O_PRECISION, PE_TP_PRECISION },
    { OPT_TABLE_LAYOUT, PE_TP_LAYOUT }, { CMD_O_MAX_MODEL_LEN, PE_TP_MAX_MODEL_LEN },
    { OPT_HEADS, PE_TP_HEADS }, { OPT_D_MODEL, PE_TP_D_MODEL },
    { OPT_NUM_BUCKETS, PE_TP_NUM_BUCKETS }, { OPT_MAX_DISTANCE, PE_TP_MAX_DISTANCE },
    { OPT_MAX_REL, PE_TP_MAX_REL }, { OPT_CONVENTION, PE_TP_CONVENTION },
    { CMD_O_VARIANT, PE_TP_VARIANT }, { OPT_WEIGHTS, PE_TP_WEIGHTS }, { OPT_TENSOR, PE_TP_TENSOR },
    { OPT_DECODER, PE_TP_DECODER }, { OPT_BROADCAST, PE_TP_BROADCAST },
};

static void note_param(pe_table_args *t, int opt, double v)
{
    for (size_t i = 0; i < sizeof param_opts / sizeof param_opts[0]; i++)
        if (param_opts[i].opt == opt) {
            t->given |= PE_TP_BIT(param_opts[i].p);
            t->v[param_opts[i].p] = v;
        }
}

int cmd_gen(int argc, char **argv)
{
    pe_grun_req rq = { .a = { .dtype = POSENC_DT_F32, .encoding = POSENC_ENC_ROPE,
                              .precision = POSENC_PREC_EXACT, .layout = POSENC_LAYOUT_HF,
                              .nthreads = cmd_nthreads() },
                       .wopts = { .format = POSENC_FMT_AUTO },
                       .note = cmd_note, .note_ctx = (void *)CMD };
    pe_gen_args *a = &rq.a;
    posenc_error err = { 0 };
    pe_run_fail f = { 0 };
    int ch, rc;

    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_gen_spec, argc, argv);
    while ((ch = cmd_opts_next(&p)) > 0) {
        note_param(&a->p, ch, (double)p.i64);
        switch (ch) {
        case CMD_O_CONFIG: a->config = p.arg; break;
        case CMD_O_FAMILY: rq.family = p.arg; break;
        case CMD_O_OUTPUT: a->out = p.arg; break;
        case CMD_O_FORMAT: rq.wopts.format = p.format; break;
        case CMD_O_DTYPE:
            a->dtype = p.dtype;
            if (a->dtype != POSENC_DT_F32 && a->dtype != POSENC_DT_F64 &&
                a->dtype != POSENC_DT_F16 && a->dtype != POSENC_DT_BF16)
                return cmd_usage_error(CMD, "--dtype: tables are floating point (f32, f64, "
                                            "f16 or bf16), not %s", posenc_dtype_name(a->dtype));
            break;
        case CMD_O_SEQ_LEN: a->seq_len = p.i64; break;
        case CMD_O_POSITIONS: rq.positions = p.arg; break;
        case CMD_O_LAYER_TYPE: a->layer_type = p.arg; break;
        case CMD_O_PRECISION: a->precision = p.precision; break;
        case OPT_TABLE_LAYOUT:
            if (posenc_layout_parse(p.arg, &a->layout, &err) != POSENC_OK)
                return cmd_usage_error(CMD, "--table-layout: %s", err.msg);
            break;
        case CMD_O_MAX_MODEL_LEN: a->max_model_len = p.i64; break;
        case CMD_O_N_CTX: a->n_ctx = p.i64; break;
        case OPT_ARRAY:
            if (!*p.arg)
                return cmd_usage_error(CMD, "--array: empty name");
            rq.array = p.arg;
            break;
        case CMD_O_COMPRESS: rq.wopts.compress = 1; break;
        case CMD_O_FORCE: rq.force = 1; break;
        case CMD_O_QUIET: cmd_progress_quiet(); break;
        case OPT_ENCODING:
            if (posenc_encoding_parse(p.arg, &a->encoding, &err) != POSENC_OK)
                return cmd_usage_error(CMD, "--encoding: %s", err.msg);
            if (a->encoding == POSENC_ENC_NONE)
                return cmd_usage_error(CMD, "--encoding: '%s' has no table to generate", p.arg);
            rq.encoding_forced = 1;
            break;
        case OPT_CONVENTION: a->p.convention = p.arg; break;
        case CMD_O_VARIANT: a->p.variant = p.arg; break;
        case OPT_WEIGHTS: a->weights = p.arg; break;
        case OPT_TENSOR: a->tensor = p.arg; break;
        case OPT_DECODER: a->p.v[PE_TP_DECODER] = 1; break;
        case OPT_BROADCAST: a->p.v[PE_TP_BROADCAST] = 1; break;
        }
    }
    if (ch == CMD_OPTS_EXIT)
        return p.rc;
    if (cmd_opts_max_args(&p, 0))
        return CMD_EXIT_USAGE;
    if (!a->out)
        return cmd_usage_error(CMD, "missing -o OUT (where to write the tables)");
    if (!a->config && !rq.encoding_forced)
        return cmd_usage_error(CMD, "missing --config FILE");
    if (rq.positions && a->seq_len)
        return cmd_usage_error(CMD, "--seq-len and --positions conflict; pass one of them");
    if (a->n_ctx && a->precision != POSENC_PREC_GGML)
        return cmd_usage_error(CMD, "--n-ctx applies only to --precision ggml");
    rc = pe_grun_exec(&rq, &f, &err) == POSENC_OK ? CMD_EXIT_OK : cmd_run_fail(CMD, &f, &err);
    pe_run_fail_free(&f);
    return rc;
}
