/* cmd/ls.c: placeholder until the subcommand lands (replaced by its implementation). */
#include "common.h"

int cmd_ls(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    posenc_msg("ls", "not built yet");
    return POSENC_EXIT_ERROR;
}
