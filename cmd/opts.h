/* cmd/opts.h: the one option layer of the subcommands.
 *
 * The options two or more commands take are declared once, in cmd/opts.c's shared table, each
 * with one name, one value type and one range (CMD_O_*). A command declares a struct cmd_spec:
 * its usage text, the column its help starts at, and its entries in help order: group headers,
 * the shared options it takes (by id, optionally with its own help wording) and its own
 * options. One parser (cmd_opts_next, over getopt_long built from that table) handles -h/--help
 * (help printed from the table), unknown options, missing values, numbers and their ranges,
 * the value types (formats, dtypes, precisions, dump layouts, pairing styles) and deprecated
 * aliases, with the message shapes of posenc(1) and exit status 2. `posenc help --options CMD`
 * lists the long options of the table (the man-page test reads it). */
#ifndef POSENC_CMD_OPTS_H
#define POSENC_CMD_OPTS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd/common.h"
#include "posenc/apply.h"

/* Value types. */
enum cmd_opt_type {
    CMD_T_FLAG = 0,    /* no value */
    CMD_T_STR,         /* any text: p->arg */
    CMD_T_I64,         /* an integer in [min, max]: p->i64 */
    CMD_T_NUM,         /* a finite number: p->num */
    CMD_T_FORMAT,      /* npy, npz, ...: p->format */
    CMD_T_DTYPE,       /* f32, bf16, ...: p->dtype */
    CMD_T_PRECISION,   /* exact, hf, vllm, ggml: p->precision */
    CMD_T_DUMP_LAYOUT, /* bhsd, bshd, shd, hsd, sd, bsf, sf, ggml: p->dump_layout */
    CMD_T_STYLE        /* neox, gptj: p->style */
};

/* The shared options (cmd/opts.c holds their name, type, range and default help). */
enum {
    CMD_O_BASE = 0x1000,
    CMD_O_CONFIG = CMD_O_BASE, CMD_O_FAMILY, CMD_O_LAYER_TYPE, CMD_O_PRECISION, CMD_O_SEQ_LEN,
    CMD_O_POSITIONS, CMD_O_OFFSET, CMD_O_DTYPE, CMD_O_FORMAT, CMD_O_FORCE, CMD_O_QUIET,
    CMD_O_OUTPUT, CMD_O_ASSUME_BF16, CMD_O_JSON, CMD_O_MAX_MODEL_LEN, CMD_O_DUMP_LAYOUT,
    CMD_O_STYLE, CMD_O_VARIANT, CMD_O_PAIRS, CMD_O_COMPRESS, CMD_O_GGUF, CMD_O_N_CTX, CMD_O_HELP,
    CMD_O_END
};

/* Every command takes positions, offsets and sequence lengths in [0, 2^48): the range the
 * parameter engines compute exactly (an int64 position, a double angle m * inv_freq) and gen's
 * tables can index. A command whose engine holds less (apply's positions below 2^31, as
 * lib/encodings/apply.c requires) checks that after parsing. */
#define CMD_POS_MAX ((int64_t)1 << 48)

/* One entry of a command's table. A group header has id 0 and its text in help. A shared
 * option has id CMD_O_* and inherits name, type, range, short letter, metavar and help from
 * the shared table; arg and help given here override only how --help shows it. A command's own
 * option has an id of its own (>= 256, below CMD_O_BASE) and every field. deprecated names the
 * option to use instead: the parser warns once in one line and returns id as for that option. */
struct cmd_opt {
    int id;
    const char *name;       /* long name without the dashes */
    int short_opt;          /* a letter, or 0 */
    const char *arg;        /* metavar shown in --help; NULL: no value (unless type says) */
    enum cmd_opt_type type;
    int64_t min, max;       /* CMD_T_I64 range */
    const char *help;       /* lines separated by '\n' */
    const char *deprecated; /* "--table-layout": this spelling is an alias of it */
};

#define CMD_OPT_GROUP(text) { 0, NULL, 0, NULL, CMD_T_FLAG, 0, 0, text, NULL }
#define CMD_OPTS_MAX 48

struct cmd_spec {
    const char *name;           /* "gen" */
    const char *usage;          /* usage lines and description, ending in a blank line */
    int col;                    /* column the help text starts at */
    const struct cmd_opt *opts; /* ends with an entry whose id is -1 */
};
#define CMD_OPTS_END { -1, NULL, 0, NULL, CMD_T_FLAG, 0, 0, NULL, NULL }

/* The parser's state and the value of the option cmd_opts_next returned last. */
struct cmd_parse {
    const struct cmd_spec *spec;
    int argc;
    char **argv;
    int optind; /* after CMD_OPTS_END: the first positional argument */
    int rc;     /* after CMD_OPTS_EXIT: the exit status (0 after --help) */
    const char *arg;
    int64_t i64;
    double num;
    posenc_format format;
    posenc_dtype dtype;
    posenc_precision precision;
    posenc_apply_layout dump_layout;
    posenc_style style;
    /* built from the table */
    int n;
    struct cmd_opt ent[CMD_OPTS_MAX]; /* resolved entries (shared fields filled in) */
    struct option longopts[CMD_OPTS_MAX + 1];
    char shorts[2 * CMD_OPTS_MAX + 2];
};

enum { CMD_OPTS_DONE = 0, CMD_OPTS_EXIT = -1 };

/* Start parsing argv (argv[0] = the command's name). */
void cmd_opts_begin(struct cmd_parse *p, const struct cmd_spec *spec, int argc, char **argv);
/* The next option's id with its value in p, CMD_OPTS_DONE when the options end (the positional
 * arguments are argv[p->optind..argc)), or CMD_OPTS_EXIT when the run ends here with p->rc:
 * 0 after --help (printed on stdout), 2 after a usage error (printed). */
int cmd_opts_next(struct cmd_parse *p);
/* The positional arguments: refuse (exit 2, "unexpected argument 'X'") more than max of them;
 * returns 0 or the exit status. */
int cmd_opts_max_args(const struct cmd_parse *p, int max);

/* --help: the usage text, then the table's groups and options. */
void cmd_opts_help(const struct cmd_spec *spec, FILE *fp);
/* One long option per line ("--config"), aliases included: posenc help --options CMD. */
void cmd_opts_list(const struct cmd_spec *spec, FILE *fp);

/* Each command's table (in its cmd/NAME.c). */
extern const struct cmd_spec cmd_gen_spec, cmd_info_spec, cmd_apply_spec, cmd_verify_spec,
    cmd_ls_spec, cmd_convert_spec, cmd_diff_spec;

#endif
