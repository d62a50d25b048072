/* cmd/posenc.c: main and the subcommand dispatch table. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/common.h"
#include "formats/io/inputs.h"
#include "cmd/opts.h"
#include "formats/io/iowatch.h"
#include "cmd/util_progress.h"

static const struct cmd {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
    int progress; /* what the progress line counts (iowatch.h): written or read bytes */
    const struct cmd_spec *spec; /* its options (cmd/opts.h): --help and help --options */
} commands[] = {
    { "gen", cmd_gen, "generate position-encoding tables from a model config", PE_WATCH_WRITES,
      &cmd_gen_spec },
    { "apply", cmd_apply, "apply RoPE to Q/K dumps as the model does", PE_WATCH_WRITES,
      &cmd_apply_spec },
    { "verify", cmd_verify, "check relative invariance and a runtime's dumps; report for CI",
      PE_WATCH_READS, &cmd_verify_spec },
    { "info", cmd_info, "explain what a config.json implies", 0, &cmd_info_spec },
    { "ls", cmd_ls, "list the arrays in a tensor file", 0, &cmd_ls_spec },
    { "convert", cmd_convert, "convert tensor files between formats and dtypes",
      PE_WATCH_WRITES, &cmd_convert_spec },
    { "diff", cmd_diff, "compare two arrays: max abs/rel error, ulp histogram, worst elements", 0,
      &cmd_diff_spec },
};

void cmd_print_commands(FILE *fp)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(fp, "  %-9s %s\n", commands[i].name, commands[i].help);
}

static void usage(FILE *fp)
{
    fprintf(fp, "usage: posenc [--version] [--help] COMMAND [ARGS]\n\n"
                "Transformer positional encodings: tables, application and verification.\n\n"
                "commands:\n");
    cmd_print_commands(fp);
    fprintf(fp, "\n'posenc help COMMAND' or 'posenc COMMAND --help' shows one command's options;\n"
                "'posenc help --options COMMAND' lists its long options, one a line.\n"
                "Exit status: 0 ok, 1 a verify check failed or diff found a difference, 2 usage error,\n"
                "3 any other error.\n");
}

static const struct cmd *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* SIGINT, SIGTERM, SIGHUP and SIGPIPE: remove this run's temporaries, then die of the signal
 * (exit status 128 + its number, as shells expect). While outputs are being renamed into place
 * the signal waits for the renames; once they are done the run ends with the status it had
 * decided (cmd_commit_status: 0, or verify's verdict), since the old files are gone. A reader that closes the pipe early
 * (posenc gen ... -o - | head) thus ends posenc silently with 141, as it ends cat or git: that is
 * the reader's choice, not an error to print. A signal the parent ignores stays ignored (nohup,
 * a program that ignores SIGPIPE to get EPIPE): a closed pipe is then a write error, one line
 * and exit 3. */
static void on_signal(int sig)
{
    int what = posenc_tmp_signal(sig);
    if (what == POSENC_TMP_SIGNAL_HELD)
        return;
    cmd_progress_signal();
    if (what == POSENC_TMP_SIGNAL_DONE)
        _exit(cmd_commit_status);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

static int finish(const char *cmd, int rc)
{
    char dir[1024];
    if (rc != CMD_EXIT_OK)
        cmd_progress_clear(); /* no summary line for a failed run */
    cmd_progress_finish();
    size_t stale = posenc_tmp_stale_removed(dir, sizeof dir);
    if (stale)
        fprintf(stderr, "posenc %s: '%s': removed %zu stale temporar%s left by interrupted runs\n",
                cmd, dir, stale, stale == 1 ? "y" : "ies");
    /* a full disk or closed pipe must not pass silently */
    if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
        if (rc == CMD_EXIT_OK)
            fprintf(stderr, "posenc %s: 'standard output': %s\n", cmd, strerror(errno ? errno : EIO));
        return rc ? rc : CMD_EXIT_ERROR;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CMD_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return finish("help", CMD_EXIT_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        int rc = cmd_env_check("version");
        if (rc)
            return rc;
        printf("posenc %s\ncpu path: %s (this CPU runs:", posenc_version(),
               posenc_cpu_name(posenc_cpu_active()));
        for (int p = POSENC_CPU_BASELINE; p <= POSENC_CPU_NEON; p++)
            if (posenc_cpu_supported((posenc_cpu_path)p))
                printf(" %s", posenc_cpu_name((posenc_cpu_path)p));
        printf(")\n");
        return finish("version", CMD_EXIT_OK);
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return finish("help", CMD_EXIT_OK);
        }
        int list = strcmp(argv[2], "--options") == 0;
        if (list && argc != 4) {
            fprintf(stderr, "posenc help: --options takes one COMMAND\n"
                            "posenc help: try 'posenc --help'\n");
            return CMD_EXIT_USAGE;
        }
        if (!list && argc > 3) {
            fprintf(stderr, "posenc help: unexpected argument '%s'\n"
                            "posenc help: try 'posenc --help'\n", argv[3]);
            return CMD_EXIT_USAGE;
        }
        const struct cmd *c = find(argv[2 + list]);
        if (!c) {
            fprintf(stderr, "posenc: '%s' is not a posenc command; see 'posenc --help'\n",
                    argv[2 + list]);
            return CMD_EXIT_USAGE;
        }
        if (list)
            cmd_opts_list(c->spec, stdout);
        else
            cmd_opts_help(c->spec, stdout);
        return finish(c->name, CMD_EXIT_OK);
    }
    const struct cmd *c = find(name);
    if (!c) {
        fprintf(stderr, "posenc: '%s' is not a posenc command; see 'posenc --help'\n", name);
        return CMD_EXIT_USAGE;
    }
    install_signals();
    pe_inputs_guard(1); /* no output of a run may replace one of its inputs */
    int rc = cmd_env_check(c->name);
    if (rc)
        return rc;
    if (c->progress)
        cmd_progress_watch(c->name, c->progress);
    return finish(c->name, c->fn(argc - 1, argv + 1));
}
