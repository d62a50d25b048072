/* cmd/gen.c: placeholder until the subcommand lands (replaced by its implementation). */
#include "common.h"

int cmd_gen(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    posenc_msg("gen", "not built yet");
    return POSENC_EXIT_ERROR;
}
