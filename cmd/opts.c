/* cmd/opts.c: the shared option table and the one parser of every subcommand (cmd/opts.h). */
#include <string.h>

#include "cmd/opts.h"

/* The options several commands take, each with one meaning, one value type and one range.
 * The help text is the default wording; a command may show its own (what the option does
 * there), never a different meaning. */
static const struct cmd_opt shared[CMD_O_END - CMD_O_BASE] = {
#define S(id, name, sh, arg, type, min, max, help) \
    [id - CMD_O_BASE] = { id, name, sh, arg, type, min, max, help, NULL }
    S(CMD_O_CONFIG, "config", 'c', "FILE", CMD_T_STR, 0, 0, "model config.json (required)"),
    S(CMD_O_FAMILY, "family", 0, "NAME", CMD_T_STR, 0, 0,
      "resolve the config as this model family (posenc info --models)"),
    S(CMD_O_LAYER_TYPE, "layer-type", 0, "NAME", CMD_T_STR, 0, 0,
      "RoPE parameters of this layer type"),
    S(CMD_O_PRECISION, "precision", 0, "P", CMD_T_PRECISION, 0, 0,
      "exact, hf, vllm or ggml"),
    S(CMD_O_SEQ_LEN, "seq-len", 0, "N", CMD_T_I64, 1, CMD_POS_MAX,
      "sequence length for dynamic/longrope selection"),
    S(CMD_O_POSITIONS, "positions", 0, "P", CMD_T_STR, 0, 0,
      "positions: a list like 0-15,100 or a file of integers"),
    S(CMD_O_OFFSET, "offset", 0, "N", CMD_T_I64, 0, CMD_POS_MAX - 1,
      "token s is at position N + s (default 0)"),
    S(CMD_O_DTYPE, "dtype", 0, "T", CMD_T_DTYPE, 0, 0, "f32, f64, f16 or bf16"),
    S(CMD_O_FORMAT, "format", 0, "F", CMD_T_FORMAT, 0, 0,
      "npy, npz, dir, hdf5, safetensors, header, raw or gguf\n(default: from the name of OUT)"),
    S(CMD_O_FORCE, "force", 0, NULL, CMD_T_FLAG, 0, 0,
      "write more than 4 GiB of output; replace a read-only\nor another user's file"),
    S(CMD_O_QUIET, "quiet", 'q', NULL, CMD_T_FLAG, 0, 0, "no progress line on a terminal"),
    S(CMD_O_OUTPUT, "output", 'o', "OUT", CMD_T_STR, 0, 0, "output file, directory or '-'"),
    S(CMD_O_ASSUME_BF16, "assume-bf16", 0, NULL, CMD_T_FLAG, 0, 0,
      "read NPY '<V2' arrays as bfloat16"),
    S(CMD_O_JSON, "json", 0, NULL, CMD_T_FLAG, 0, 0, "print one JSON object"),
    S(CMD_O_MAX_MODEL_LEN, "max-model-len", 0, "N", CMD_T_I64, 1, CMD_POS_MAX,
      "vllm: the runtime's max_model_len (LongRoPE's factors;\n"
      "default: max_position_embeddings)"),
    S(CMD_O_DUMP_LAYOUT, "layout", 0, "L", CMD_T_DUMP_LAYOUT, 0, 0,
      "bhsd (default), bshd, shd, hsd, sd; flat: bsf, sf; or ggml\n"
      "(q/k as llama.cpp holds them: [tokens, heads, head_dim],\n"
      "its rope mode's pair order)"),
    S(CMD_O_STYLE, "style", 0, "S", CMD_T_STYLE, 0, 0, "neox or gptj (default: from the config)"),
    S(CMD_O_VARIANT, "variant", 0, "V", CMD_T_STR, 0, 0, "the encoding's variant"),
    S(CMD_O_PAIRS, "pairs", 0, "GLOB", CMD_T_STR, 0, 0,
      "only the pairs whose group matches GLOB ('layer[0-3]')"),
    S(CMD_O_COMPRESS, "compress", 0, NULL, CMD_T_FLAG, 0, 0,
      "deflate NPZ members, gzip HDF5 datasets"),
    S(CMD_O_GGUF, "gguf", 0, "FILE", CMD_T_STR, 0, 0, "a llama.cpp GGUF file"),
    S(CMD_O_N_CTX, "n-ctx", 0, "N", CMD_T_I64, 1, 4294967295,
      "ggml: llama.cpp's context size n_ctx (per sequence), which\n"
      "picks LongRoPE's long factors past original_context_length\n"
      "(default: the sequence length)"),
    S(CMD_O_HELP, "help", 'h', NULL, CMD_T_FLAG, 0, 0, "show this help"),
#undef S
};

/* e with the shared entry's fields filled in (an alias is entirely its own). */
static struct cmd_opt resolve(const struct cmd_opt *e)
{
    struct cmd_opt r = *e;
    if (e->id < CMD_O_BASE || e->id >= CMD_O_END || e->deprecated)
        return r;
    const struct cmd_opt *s = &shared[e->id - CMD_O_BASE];
    r.name = e->name ? e->name : s->name;
    r.short_opt = e->short_opt ? e->short_opt : s->short_opt;
    r.arg = e->arg ? e->arg : s->arg;
    r.help = e->help ? e->help : s->help;
    r.type = s->type; /* one value type and one range, whatever the command */
    r.min = s->min;
    r.max = s->max;
    return r;
}

static int takes_value(const struct cmd_opt *e) { return e->type != CMD_T_FLAG; }

#define LONG_VAL 0x10000 /* getopt_long's val for entry i: LONG_VAL + i */

void cmd_opts_begin(struct cmd_parse *p, const struct cmd_spec *spec, int argc, char **argv)
{
    memset(p, 0, sizeof *p);
    p->spec = spec;
    p->argc = argc;
    p->argv = argv;
    size_t ns = 0;
    p->shorts[ns++] = ':'; /* a missing value returns ':' */
    for (const struct cmd_opt *e = spec->opts; e->id != -1 && p->n < CMD_OPTS_MAX; e++) {
        if (e->id == 0)
            continue;
        struct cmd_opt r = resolve(e);
        p->ent[p->n] = r;
        p->longopts[p->n] = (struct option){ r.name, takes_value(&r) ? required_argument
                                                                      : no_argument,
                                             NULL, LONG_VAL + p->n };
        if (r.short_opt) {
            p->shorts[ns++] = (char)r.short_opt;
            if (takes_value(&r))
                p->shorts[ns++] = ':';
        }
        p->n++;
    }
    p->shorts[ns] = '\0';
    p->longopts[p->n] = (struct option){ NULL, 0, NULL, 0 };
    optind = 0; /* the one reset: 0 makes glibc re-initialise for the command's own argv */
    opterr = 0;
}

static int usage_exit(struct cmd_parse *p, int rc)
{
    p->rc = rc;
    return CMD_OPTS_EXIT;
}

/* Parse the value of e (spelled opt on the command line) into p; 0 or a usage error. */
static int value(struct cmd_parse *p, const struct cmd_opt *e, const char *opt)
{
    const char *cmd = p->spec->name, *s = p->arg;
    posenc_error err = { 0 };
    posenc_status st = POSENC_OK;
    switch (e->type) {
    case CMD_T_FLAG:
    case CMD_T_STR: return 0;
    case CMD_T_I64: return cmd_parse_i64(cmd, opt, s, e->min, e->max, &p->i64);
    case CMD_T_NUM: return cmd_parse_double(cmd, opt, s, &p->num);
    case CMD_T_FORMAT: st = posenc_format_parse(s, &p->format, &err); break;
    case CMD_T_DTYPE: st = posenc_dtype_parse(s, &p->dtype, &err); break;
    case CMD_T_PRECISION: st = posenc_precision_parse(s, &p->precision, &err); break;
    case CMD_T_DUMP_LAYOUT: st = posenc_apply_layout_parse(s, &p->dump_layout, &err); break;
    case CMD_T_STYLE: st = posenc_style_parse(s, &p->style, &err); break;
    }
    return st == POSENC_OK ? 0 : cmd_usage_error(cmd, "%s: %s", opt, err.msg);
}

int cmd_opts_next(struct cmd_parse *p)
{
    const char *cmd = p->spec->name;
    int c = getopt_long(p->argc, p->argv, p->shorts, p->longopts, NULL);
    p->optind = optind;
    p->arg = optarg;
    if (c == -1)
        return CMD_OPTS_DONE;
    const char *given = p->argv[optind - 1];
    if (c == ':')
        return usage_exit(p, cmd_usage_error(cmd, "option '%s' needs a value", given));
    if (c == '?') {
        if (optopt >= LONG_VAL) /* --flag=VALUE */
            return usage_exit(p, cmd_usage_error(cmd, "option '--%s' takes no value",
                                                 p->ent[optopt - LONG_VAL].name));
        if (optopt && strncmp(given, "--", 2) != 0)
            return usage_exit(p, cmd_usage_error(cmd, "unknown option '-%c'", optopt));
        return usage_exit(p, cmd_usage_error(cmd, "unknown option '%s'", given));
    }
    int i = c >= LONG_VAL ? c - LONG_VAL : -1;
    for (int k = 0; i < 0 && k < p->n; k++)
        if (p->ent[k].short_opt == c)
            i = k;
    if (i < 0 || i >= p->n) /* cannot happen: getopt returns only what the table declares */
        return usage_exit(p, cmd_usage_error(cmd, "unknown option '%s'", given));
    const struct cmd_opt *e = &p->ent[i];
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", e->name);
    if (e->id == CMD_O_HELP) {
        cmd_opts_help(p->spec, stdout);
        return usage_exit(p, CMD_EXIT_OK);
    }
    if (e->deprecated)
        cmd_msg(cmd, "%s is deprecated; use %s", opt, e->deprecated);
    if (value(p, e, opt))
        return usage_exit(p, CMD_EXIT_USAGE);
    return e->id;
}

int cmd_opts_max_args(const struct cmd_parse *p, int max)
{
    if (p->argc - p->optind > max)
        return cmd_usage_error(p->spec->name, "unexpected argument '%s'",
                               p->argv[p->optind + max]);
    return 0;
}

static void put_lines(FILE *fp, const char *s, int col, int first_done)
{
    for (int line = 0; *s; line++) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        if (line > 0 || !first_done)
            fprintf(fp, "%*s", col, "");
        fprintf(fp, "%.*s\n", (int)len, s);
        s += len + (nl != NULL);
    }
}

void cmd_opts_help(const struct cmd_spec *spec, FILE *fp)
{
    fputs(spec->usage, fp);
    for (const struct cmd_opt *e = spec->opts; e->id != -1; e++) {
        if (e->id == 0) {
            fprintf(fp, "%s\n", e->help);
            continue;
        }
        struct cmd_opt r = resolve(e);
        char left[128];
        int n = snprintf(left, sizeof left, "  %c%c%c --%s%s%s", r.short_opt ? '-' : ' ',
                         r.short_opt ? r.short_opt : ' ', r.short_opt ? ',' : ' ', r.name,
                         r.arg ? " " : "", r.arg ? r.arg : "");
        if (n < spec->col) {
            fprintf(fp, "%-*s", spec->col, left);
            put_lines(fp, r.help ? r.help : "", spec->col, 1);
        } else {
            fprintf(fp, "%s\n", left);
            put_lines(fp, r.help ? r.help : "", spec->col, 0);
        }
    }
}

void cmd_opts_list(const struct cmd_spec *spec, FILE *fp)
{
    for (const struct cmd_opt *e = spec->opts; e->id != -1; e++)
        if (e->id != 0)
            fprintf(fp, "--%s\n", resolve(e).name);
}
