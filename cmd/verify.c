/* cmd/verify.c: placeholder until the subcommand lands (replaced by its implementation). */
#include "common.h"

int cmd_verify(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    posenc_msg("verify", "not built yet");
    return POSENC_EXIT_ERROR;
}
