/* fuzz_opts.c: bytes -> the shared option parser of every subcommand (cmd_opts_begin,
 * cmd_opts_next and cmd_opts_max_args, cmd/opts.c) over one command's table. The first byte
 * picks the command, the rest is its argv: arguments separated by NUL bytes (at most 64).
 * Whatever the arguments, the parser returns an option of the table with its value in range
 * (an integer within the option's bounds, a finite number, an argument that is one of argv's
 * strings), ends with its positional arguments inside argv, or ends the run with exit status
 * 0 (--help) or 2 (a usage error); it never reads past argv. Its messages go to stderr and the
 * help to stdout. */
/* fuzz-options: -close_fd_mask=3 -max_len=1024 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct cmd_spec *const specs[] = { &cmd_gen_spec, &cmd_info_spec,
                                                    &cmd_apply_spec, &cmd_verify_spec,
                                                    &cmd_ls_spec, &cmd_convert_spec,
                                                    &cmd_diff_spec };
    if (size < 1)
        return 0;
    const struct cmd_spec *spec = specs[data[0] % (sizeof specs / sizeof specs[0])];
    /* argv: exact heap blocks, so ASan sees a read one past any of them */
    char *argv[MAX_ARGS + 2], *orig[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = strdup(spec->name);
    for (size_t i = 1; i <= size && argc <= MAX_ARGS;) {
        size_t j = i;
        while (j < size && data[j] != 0)
            j++;
        if (j == size && i == size)
            break;
        char *a = malloc(j - i + 1);
        if (!a)
            abort();
        memcpy(a, data + i, j - i);
        a[j - i] = '\0';
        argv[argc++] = a;
        i = j + 1;
    }
    argv[argc] = NULL;
    memcpy(orig, argv, sizeof argv); /* getopt permutes argv; the strings stay */

    struct cmd_parse p;
    cmd_opts_begin(&p, spec, argc, argv);
    int id;
    while ((id = cmd_opts_next(&p)) > 0) {
        const struct cmd_opt *e = NULL;
        for (int k = 0; k < p.n; k++)
            if (p.ent[k].id == id)
                e = &p.ent[k];
        if (!e)
            abort(); /* an id the table does not declare */
        if (e->type != CMD_T_FLAG) {
            int found = 0;
            for (int k = 0; k < argc && !found; k++) /* the value points into an argument */
                found = p.arg >= orig[k] && p.arg <= orig[k] + strlen(orig[k]);
            if (!p.arg || !found)
                abort();
        }
        if (e->type == CMD_T_I64 && (p.i64 < e->min || p.i64 > e->max))
            abort();
        if (e->type == CMD_T_NUM && !isfinite(p.num))
            abort();
    }
    if (id == CMD_OPTS_EXIT && p.rc != 0 && p.rc != 2)
        abort();
    if (id == CMD_OPTS_DONE) {
        if (p.optind < 1 || p.optind > argc)
            abort();
        for (int k = p.optind; k < argc; k++)
            if (!argv[k])
                abort();
        int rc = cmd_opts_max_args(&p, 2);
        if (rc != 0 && rc != 2)
            abort();
    }
    for (int k = 0; k < argc; k++)
        free(orig[k]);
    return 0;
}
