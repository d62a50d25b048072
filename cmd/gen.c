/* cmd/gen.c: posenc gen: the option table, the option loop and glue. What a table holds is
 * built by gen's engine (formats/engines/gentables.h: every encoding's parameters, rows, weights and
 * metadata) and written by the output pipeline (formats/io/out.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/common.h"
#include "formats/io/inputs.h"
#include "formats/engines/gentables.h"
#include "cmd/opts.h"

#define CMD "gen"
#define POS_MAX CMD_POS_MAX /* largest position / --seq-len accepted */
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

/* Everything gen was asked that the engine does not take. */
struct gen_cli {
    const char *array;             /* --array NAME: write only this array (NULL = all) */
    posenc_write_opts wopts;       /* --format, --compress */
    int force;                     /* --force: allow tables past the size limit */
};

/* A C header holds about 15 bytes of text per value ("-0.123456789f, "). Its rows default to
 * max_position_embeddings like every format's, which for a long-context model is hundreds of MB
 * of source no compiler wants: without --seq-len, --positions or --force, refuse a header of
 * more than this many values (about 15 MB of text) instead of writing it. */
#define HEADER_DEFAULT_VALUES ((uint64_t)1 << 20)
#define HEADER_TEXT_PER_VALUE 15

static int header_default_check(const pe_gen_args *a, const struct gen_cli *c, uint64_t nvalues,
                                int64_t rows)
{
    if (c->wopts.format != POSENC_FMT_CHEADER || a->seq_len || a->positions || c->force ||
        nvalues <= HEADER_DEFAULT_VALUES)
        return CMD_EXIT_OK;
    char hs[32];
    pe_out_human_size(nvalues * HEADER_TEXT_PER_VALUE, hs, sizeof hs);
    cmd_msg(CMD, "'%s': a C header of all %" PRId64 " default positions would hold %" PRIu64
                 " values (about %s of text); pass --seq-len N, --positions or --force", a->out,
            rows, nvalues, hs);
    return CMD_EXIT_ERROR;
}

static void array_names(const pe_table *t, char *names, size_t len)
{
    names[0] = '\0';
    for (int i = 0; i < t->narr; i++)
        snprintf(names + strlen(names), len - strlen(names), "%s%.60s", i ? ", " : "",
                 t->arr[i].info.name);
}

/* Pick the arrays (--array: the one check of every encoding), plan and check the size limit,
 * write them. */
static int write_tables(pe_gen *g, const pe_gen_args *a, const struct gen_cli *c)
{
    posenc_error err = { 0 };
    int want[8] = { 0 }, nwant = 0;
    char names[256];
    for (int i = 0; i < g->t.narr && i < 8; i++)
        nwant += want[i] = !c->array || strcmp(c->array, g->t.arr[i].info.name) == 0;
    array_names(&g->t, names, sizeof names);
    if (nwant == 0 && g->rope) /* the arrays depend on the layout */
        return cmd_usage_error(CMD, "--array: '%s' is not an array of a RoPE table with "
                                    "--table-layout %s (expected %s)", c->array,
                               posenc_layout_name(a->layout), names);
    if (nwant == 0)
        return cmd_usage_error(CMD, "--array: %s tables hold %s, not '%s'", g->label, names,
                               c->array);
    if (posenc_format_one_array(c->wopts.format) && nwant > 1)
        return cmd_usage_error(CMD, "%s holds one array: pass --array (%s)",
                               strcmp(a->out, "-") == 0 ? "-o -" : "an NPY file", names);
    pe_out o = { a->out, c->wopts, &g->t, want, PE_OUT_SIZE_LIMIT, c->force, 0, 0, 0, 0 };
    if (pe_out_plan(&o, &err) != POSENC_OK) {
        if (g->rope)
            return cmd_fail(CMD, &err);
        cmd_msg(CMD, "%s tables would be larger than 2^63 bytes; pass %s", g->label, g->hint);
        return CMD_EXIT_ERROR;
    }
    const posenc_array_info *a0 = &g->t.arr[0].info;
    if (header_default_check(a, c, o.values, a0->ndim ? a0->shape[0] : 0))
        return CMD_EXIT_ERROR;
    if (o.over_limit) { /* the pipeline's wording, with what the bytes are */
        char what[128], msg[POSENC_ERRMSG_MAX + 256];
        int ntab = nwant - want[g->t.narr - 1]; /* RoPE: rows x width x the cos/sin tables */
        if (g->rope)
            snprintf(what, sizeof what, "%" PRId64 " x %" PRId64 " x %d array%s, %s",
                     a0->shape[0], a0->shape[1], ntab ? ntab : 1, ntab == 1 ? "" : "s",
                     posenc_dtype_name(a->dtype));
        else
            snprintf(what, sizeof what, "%s tables", g->label);
        pe_out_limit_message(&o, a->out, what, g->rope ? NULL : g->hint, msg, sizeof msg);
        cmd_msg(CMD, "%s", msg);
        return CMD_EXIT_ERROR;
    }
    if (pe_describe_oom(g->d)) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (pe_out_run(&o, pe_gen_meta, g, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    return CMD_EXIT_OK;
}

/* Build the encoding's table (the engine), print its warnings, write it. */
static int gen_write(const pe_gen_args *a, const struct gen_cli *c)
{
    posenc_error err = { 0 };
    pe_gen g;
    int rc;
    posenc_status st = pe_gen_build(&g, a, &err);
    for (int i = 0; i < g.nwarn; i++)
        cmd_msg(CMD, "%s", g.warn[i]);
    if (st != POSENC_OK && g.usage == PE_GEN_USAGE)
        rc = cmd_usage_error(CMD, "%s", err.msg);
    else if (st != POSENC_OK && g.usage == PE_GEN_USAGE_ARG)
        rc = (cmd_msg(CMD, "%s", err.msg), CMD_EXIT_USAGE);
    else if (st != POSENC_OK)
        rc = cmd_fail(CMD, &err);
    else
        rc = write_tables(&g, a, c);
    pe_gen_free(&g);
    return rc;
}

/* The option of the first parameter in mask (lib/model/tableparams.c's table). */
static const char *first_given(unsigned mask)
{
    for (int p = 0; p < PE_TP_COUNT; p++)
        if (mask & PE_TP_BIT(p))
            return pe_table_param_name((pe_table_param)p);
    return NULL;
}

/* RoPE's options given for another encoding and the others' for RoPE (which encoding takes
 * which: lib/model/tableparams.c); forced: the encoding is --encoding's, not the config's. */
static int refuse_params(const pe_gen_args *a, int forced)
{
    unsigned given = a->p.given, rope_only = pe_table_rope_only();
    if (a->encoding != POSENC_ENC_ROPE && (given & rope_only) && forced)
        return cmd_usage_error(CMD, "%s applies only to RoPE tables", first_given(given & rope_only));
    if (a->encoding != POSENC_ENC_ROPE && (given & rope_only))
        return cmd_usage_error(CMD, "%s applies only to RoPE tables, and '%s' uses %s",
                               first_given(given & rope_only), a->config,
                               posenc_encoding_name(a->encoding));
    if (a->encoding == POSENC_ENC_ROPE && (given & ~rope_only))
        return cmd_usage_error(CMD, "%s does not apply to RoPE tables",
                               first_given(given & ~rope_only));
    return CMD_EXIT_OK;
}

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
    pe_gen_args a;
    struct gen_cli c = { NULL, { 0 }, 0 };
    posenc_error err = { 0 };
    posenc_model *m = NULL;
    pe_positions *positions = NULL;
    const char *positions_arg = NULL, *family = NULL;
    int encoding_forced = 0, ch, rc;

    memset(&a, 0, sizeof a);
    a.dtype = POSENC_DT_F32;
    a.encoding = POSENC_ENC_ROPE;
    a.precision = POSENC_PREC_EXACT;
    a.layout = POSENC_LAYOUT_HF;
    a.nthreads = cmd_nthreads();
    c.wopts.format = POSENC_FMT_AUTO;

    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_gen_spec, argc, argv);
    while ((ch = cmd_opts_next(&p)) > 0) {
        note_param(&a.p, ch, (double)p.i64);
        switch (ch) {
        case CMD_O_CONFIG: a.config = p.arg; break;
        case CMD_O_FAMILY: family = p.arg; break;
        case CMD_O_OUTPUT: a.out = p.arg; break;
        case CMD_O_FORMAT: c.wopts.format = p.format; break;
        case CMD_O_DTYPE:
            a.dtype = p.dtype;
            if (a.dtype != POSENC_DT_F32 && a.dtype != POSENC_DT_F64 &&
                a.dtype != POSENC_DT_F16 && a.dtype != POSENC_DT_BF16)
                return cmd_usage_error(CMD, "--dtype: tables are floating point (f32, f64, "
                                            "f16 or bf16), not %s", posenc_dtype_name(a.dtype));
            break;
        case CMD_O_SEQ_LEN: a.seq_len = p.i64; break;
        case CMD_O_POSITIONS: positions_arg = p.arg; break;
        case CMD_O_LAYER_TYPE: a.layer_type = p.arg; break;
        case CMD_O_PRECISION: a.precision = p.precision; break;
        case OPT_TABLE_LAYOUT:
            if (posenc_layout_parse(p.arg, &a.layout, &err) != POSENC_OK)
                return cmd_usage_error(CMD, "--table-layout: %s", err.msg);
            break;
        case CMD_O_MAX_MODEL_LEN: a.max_model_len = p.i64; break;
        case CMD_O_N_CTX: a.n_ctx = p.i64; break;
        case OPT_ARRAY:
            if (!*p.arg)
                return cmd_usage_error(CMD, "--array: empty name");
            c.array = p.arg;
            break;
        case CMD_O_COMPRESS: c.wopts.compress = 1; break;
        case CMD_O_FORCE:
            c.force = 1;
            pe_outputs_force(1);
            break;
        case CMD_O_QUIET: cmd_progress_quiet(); break;
        case OPT_ENCODING:
            if (posenc_encoding_parse(p.arg, &a.encoding, &err) != POSENC_OK)
                return cmd_usage_error(CMD, "--encoding: %s", err.msg);
            if (a.encoding == POSENC_ENC_NONE)
                return cmd_usage_error(CMD, "--encoding: '%s' has no table to generate", p.arg);
            encoding_forced = 1;
            break;
        case OPT_CONVENTION: a.p.convention = p.arg; break;
        case CMD_O_VARIANT: a.p.variant = p.arg; break;
        case OPT_WEIGHTS: a.weights = p.arg; break;
        case OPT_TENSOR: a.tensor = p.arg; break;
        case OPT_DECODER: a.p.v[PE_TP_DECODER] = 1; break;
        case OPT_BROADCAST: a.p.v[PE_TP_BROADCAST] = 1; break;
        }
    }
    if (ch == CMD_OPTS_EXIT)
        return p.rc;
    if (cmd_opts_max_args(&p, 0))
        return CMD_EXIT_USAGE;
    if (!a.out)
        return cmd_usage_error(CMD, "missing -o OUT (where to write the tables)");
    if (!a.config && !encoding_forced)
        return cmd_usage_error(CMD, "missing --config FILE");
    if (positions_arg && a.seq_len)
        return cmd_usage_error(CMD, "--seq-len and --positions conflict; pass one of them");
    if (a.n_ctx && a.precision != POSENC_PREC_GGML)
        return cmd_usage_error(CMD, "--n-ctx applies only to --precision ggml");
    if (c.wopts.format == POSENC_FMT_AUTO) {
        c.wopts.format = posenc_format_guess(a.out);
        if (c.wopts.format == POSENC_FMT_AUTO)
            return cmd_usage_error(CMD, "'%s': cannot tell the output format from the name; "
                                        "pass --format or end it in .npz, .npy, .h5, "
                                        ".hdf5, .safetensors, .h, .bin, .gguf or /", a.out);
    }
    a.format = c.wopts.format;
    if (strcmp(a.out, "-") == 0 && !posenc_format_to_stdout(c.wopts.format))
        return cmd_usage_error(CMD, "-o - writes NPY only, not %s",
                               posenc_format_name(c.wopts.format));
    if (encoding_forced && (rc = refuse_params(&a, 1))) /* before reading any file */
        return rc;

    const char *inputs[] = { a.config, positions_arg, a.weights };
    if ((rc = cmd_check_outputs(CMD, &a.out, 1, inputs, sizeof inputs / sizeof inputs[0])))
        return rc;
    if (positions_arg) {
        if ((rc = cmd_parse_positions(CMD, positions_arg, POS_MAX, (uint64_t)POS_MAX,
                                      &positions)))
            return rc;
        a.positions = positions;
        posenc_error perr = { 0 };
        if (pe_positions_one_axis(positions, positions_arg, &perr) != POSENC_OK) {
            rc = cmd_fail(CMD, &perr);
            goto out;
        }
    }
    if (a.config && (rc = cmd_load_config(CMD, a.config, family, &m)) != 0)
        goto out;
    a.m = m;
    if (!encoding_forced) {
        a.encoding = posenc_model_encoding(m);
        if (a.encoding == POSENC_ENC_NONE) {
            cmd_msg(CMD, "'%s': %s uses no position encoding (NoPE): there is no table to "
                         "generate", a.config, posenc_model_type(m));
            rc = CMD_EXIT_ERROR;
            goto out;
        }
    }
    if (!(rc = refuse_params(&a, encoding_forced)))
        rc = gen_write(&a, &c);
out:
    posenc_model_free(m);
    pe_positions_free(positions);
    return rc;
}
