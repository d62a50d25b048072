/* cmd/apply.c: placeholder until the subcommand lands (replaced by its implementation). */
#include "common.h"

int cmd_apply(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    posenc_msg("apply", "not built yet");
    return POSENC_EXIT_ERROR;
}
