/* cmd/common.h: what every subcommand shares: messages, exit codes, checked number parsing. */
#ifndef POSENC_CMD_COMMON_H
#define POSENC_CMD_COMMON_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "posenc/posenc.h"
#include "formats/engines/run.h"
#include "cmd/util_progress.h"
#include "formats/io/strbuf.h"

/* Exit status of every subcommand (posenc(1) EXIT STATUS). */
enum {
    CMD_EXIT_OK = 0,
    CMD_EXIT_CHECK = 1, /* verify: a check failed */
    CMD_EXIT_USAGE = 2, /* bad option or argument */
    CMD_EXIT_ERROR = 3  /* any other error */
};

/* Every subcommand: int cmd_NAME(int argc, char **argv), argv[0] = "NAME". */
int cmd_gen(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* The exit status of a run whose outputs are committed when a signal arrives (0 unless a
 * command sets it before committing: verify's verdict). */
extern volatile sig_atomic_t cmd_commit_status;

/* "posenc CMD: message" on stderr. */
void cmd_msg(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Print the error line for err and return CMD_EXIT_ERROR (CMD_EXIT_USAGE for EINVAL when
 * usage_on_einval is set). */
int cmd_fail(const char *cmd, const posenc_error *err);
/* "posenc CMD: message" plus "try 'posenc CMD --help'"; returns CMD_EXIT_USAGE. */
int cmd_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A run's note (formats/engines/run.h; ctx: the command's name, a const char *) printed as
 * "posenc CMD: message". */
void cmd_note(void *ctx, const char *msg);
/* Print the failure of a run (formats/engines/run.h: its own line or err's) and return its exit
 * status: 2 for a usage error (with the help hint for PE_RUN_FAULT_USAGE), else cmd_fail's. */
int cmd_run_fail(const char *cmd, const pe_run_fail *f, const posenc_error *err);

/* Load a config (a file or a model directory) through the model-family registry, as --family
 * (NULL: by model_type) says. Prints the error line and returns its exit code (2 for an
 * unknown --family, 3 otherwise), or prints the model's warning line (an unknown model_type
 * resolved with the generic rules) and returns 0 with *out set. */
int cmd_load_config(const char *cmd, const char *path, const char *family, posenc_model **out);

/* A posenc_model_rope failure: a --layer-type the config does not have, one that carries no
 * RoPE, or none given where the config has several is a usage error (exit 2) in every command,
 * one line; anything else exit 3. */
int cmd_rope_fail(const char *cmd, const posenc_model *m, const posenc_error *err);

/* The one output-safety rule: '-' (binary NPY on standard output) is refused, exit 2, when
 * standard output is a terminal; record the run's input files (NULL entries and "-" skipped; a
 * FILE:MEMBER spec by its file; standard input when it is a regular file) and refuse, with the
 * usage exit status 2 and one line, when writing any of outs (with the files each implies: a
 * raw sidecar, a directory's meta.json) would replace one of them. The writers check again
 * when they create each file. */
int cmd_check_outputs(const char *cmd, const char *const *outs, size_t nout,
                      const char *const *ins, size_t nin);

/* Checked parsing of option values; on failure print a usage error and return nonzero. */
int cmd_parse_i64(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
                     int64_t *out);
int cmd_parse_double(const char *cmd, const char *opt, const char *s, double *out);

/* 1 when a and b name the same existing file or directory (either may be a FILE:MEMBER
 * spec); "-" never matches. Used to refuse an output that would overwrite an input. */
int cmd_same_file(const char *a, const char *b);

/* Refuse, with one line and exit 2, an environment variable posenc reads (POSENC_THREADS,
 * POSENC_CPU, the test knobs POSENC_PROGRESS_DELAY and POSENC_PROGRESS_INTERVAL) set to a bad
 * value; 0 when all are unset or good (a POSENC_CPU path this CPU cannot run: one warning line,
 * then 0). main calls it before every subcommand and --version. */
int cmd_env_check(const char *cmd);

/* --precision ggml: attach llama.cpp's RoPE arguments for the model to p (its converter, then
 * its loader with context n_ctx; posenc_rope_params_ggml). On failure prints one line
 * "posenc CMD: 'CONFIG': --precision ggml: why" and returns 3; 0 on success. */
int cmd_ggml_params(const char *cmd, const char *cfgname, const posenc_model *m,
                    const char *layer_type, int64_t n_ctx, posenc_rope_params *p);

/* Number of worker threads to use (online CPUs, capped at 64; POSENC_THREADS overrides). */
int cmd_nthreads(void);

/* Write the one-line help table of subcommands (for posenc --help). */
void cmd_print_commands(FILE *fp);

#endif
