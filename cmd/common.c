/* cmd/common.c: messages, exit codes and option parsing shared by the subcommands. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/common.h"

/* "posenc CMD: message\n" on stderr, after clearing a progress line. */
static void vmsg(const char *cmd, const char *fmt, va_list ap)
{
    cmd_progress_clear();
    fprintf(stderr, "posenc %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

volatile sig_atomic_t cmd_commit_status;

void cmd_msg(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(cmd, fmt, ap);
    va_end(ap);
}

int cmd_fail(const char *cmd, const posenc_error *err)
{
    cmd_msg(cmd, "%s", err && err->msg[0] ? err->msg : "unknown error");
    /* refusing to overwrite an input is a usage error in every command */
    return err && err->code == POSENC_EOVERWRITE ? CMD_EXIT_USAGE : CMD_EXIT_ERROR;
}

/* A note of a run (ctx: the command's name) as the command's message line. */
void cmd_note(void *ctx, const char *msg)
{
    cmd_msg((const char *)ctx, "%s", msg);
}

int cmd_run_fail(const char *cmd, const pe_run_fail *f, const posenc_error *err)
{
    const char *msg = f->msg ? f->msg : err->msg;
    switch (f->fault) {
    case PE_RUN_FAULT_USAGE: return cmd_usage_error(cmd, "%s", msg);
    case PE_RUN_FAULT_USAGE_ARG: cmd_msg(cmd, "%s", msg); return CMD_EXIT_USAGE;
    default:
        if (!f->msg)
            return cmd_fail(cmd, err);
        cmd_msg(cmd, "%s", msg);
        return CMD_EXIT_ERROR;
    }
}

/* The exit status of a shared step (formats/engines/run.h) after printing its failure. */
static int step_done(const char *cmd, posenc_status st, pe_run_fail *f, const posenc_error *err)
{
    int rc = st == POSENC_OK ? CMD_EXIT_OK : cmd_run_fail(cmd, f, err);
    pe_run_fail_free(f);
    return rc;
}

int cmd_load_config(const char *cmd, const char *path, const char *family, posenc_model **out)
{
    posenc_error err = { 0 };
    pe_run_fail f = { 0 };
    return step_done(cmd, pe_run_config(path, family, cmd_note, (void *)cmd, out, &f, &err), &f,
                     &err);
}

int cmd_rope_fail(const char *cmd, const posenc_model *m, const posenc_error *err)
{
    cmd_msg(cmd, "%s", err && err->msg[0] ? err->msg : "unknown error");
    return pe_run_rope_fault(m, err) == PE_RUN_FAULT_USAGE_ARG ? CMD_EXIT_USAGE : CMD_EXIT_ERROR;
}

/* POSENC_CPU: a name posenc does not know is refused (exit 2); a path this CPU cannot run falls
 * back to the best one below it, with a warning. Returns an exit status. */
static int cpu_env(const char *cmd)
{
    posenc_error err = { 0 };
    posenc_status st = posenc_cpu_env_check(&err);
    if (st != POSENC_OK)
        cmd_msg(cmd, "%s", err.msg);
    return st == POSENC_EINVAL ? CMD_EXIT_USAGE : CMD_EXIT_OK;
}

int cmd_check_outputs(const char *cmd, const char *const *outs, size_t nout,
                      const char *const *ins, size_t nin)
{
    posenc_error err = { 0 };
    pe_run_fail f = { 0 };
    return step_done(cmd, pe_run_outputs(outs, nout, ins, nin, cmd_note, (void *)cmd, &f, &err),
                     &f, &err);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "posenc %s: try 'posenc %s --help'\n", cmd, cmd);
    return CMD_EXIT_USAGE;
}

int cmd_parse_i64(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
                     int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < min || v > max)
        return cmd_usage_error(cmd, "%s: '%s' is not an integer in [%" PRId64 ", %" PRId64 "]",
                                  opt, s, min, max);
    *out = v;
    return 0;
}

int cmd_parse_double(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return cmd_usage_error(cmd, "%s: '%s' is not a finite number", opt, s);
    *out = v;
    return 0;
}

static int stat_spec(const char *spec, struct stat *st)
{
    char path[4096], member[POSENC_NAME_MAX];
    if (strcmp(spec, "-") == 0)
        return -1;
    if (posenc_spec_split(spec, path, sizeof path, member, sizeof member, NULL) != POSENC_OK)
        return -1;
    return stat(path, st);
}

int cmd_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat_spec(a, &sa) != 0 || stat_spec(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The environment posenc reads: name, range and whether it must be an integer. */
static const struct env_knob {
    const char *name;
    double min, max;
    int integer;
} env_knobs[] = {
    { "POSENC_THREADS", 1, 64, 1 },
    { "POSENC_PROGRESS_DELAY", 0, 3600, 0 },    /* test knob: seconds before the first line */
    { "POSENC_PROGRESS_INTERVAL", 0, 3600, 0 }, /* test knob: seconds between redraws */
};

static int env_value(const struct env_knob *k, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = k->integer ? (double)strtol(s, &end, 10) : strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !(v >= k->min && v <= k->max))
        return -1;
    *out = v;
    return 0;
}

int cmd_env_check(const char *cmd)
{
    for (size_t i = 0; i < sizeof env_knobs / sizeof *env_knobs; i++) {
        const struct env_knob *k = &env_knobs[i];
        const char *e = getenv(k->name);
        double v;
        if (e && *e && env_value(k, e, &v) != 0) {
            cmd_msg(cmd, "%s: '%s' is not %s in [%g, %g]", k->name, e,
                       k->integer ? "an integer" : "a number", k->min, k->max);
            return CMD_EXIT_USAGE;
        }
    }
    return cpu_env(cmd);
}

int cmd_nthreads(void)
{
    const char *e = getenv("POSENC_THREADS");
    double v;
    if (e && *e && env_value(&env_knobs[0], e, &v) == 0)
        return (int)v; /* a bad value was refused by cmd_env_check before the command ran */
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* ---- --precision ggml ---- */

int cmd_ggml_params(const char *cmd, const char *cfgname, const posenc_model *m,
                    const char *layer_type, int64_t n_ctx, posenc_rope_params *p)
{
    posenc_error err = { 0 };
    if (posenc_rope_params_ggml(p, m, layer_type, n_ctx, &err) == POSENC_OK)
        return CMD_EXIT_OK;
    cmd_msg(cmd, "'%s': --precision ggml: %s", cfgname, err.msg[0] ? err.msg : "unknown error");
    return CMD_EXIT_ERROR;
}
