/* cmd/info.c: placeholder until the subcommand lands (replaced by its implementation). */
#include "common.h"

int cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    posenc_msg("info", "not built yet");
    return POSENC_EXIT_ERROR;
}
