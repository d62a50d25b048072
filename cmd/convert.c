/* cmd/convert.c: placeholder until the subcommand lands (replaced by its implementation). */
#include "common.h"

int cmd_convert(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    posenc_msg("convert", "not built yet");
    return POSENC_EXIT_ERROR;
}
