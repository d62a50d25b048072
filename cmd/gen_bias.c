/* cmd/gen_bias.c: PLACEHOLDER until the non-rotary encodings land (replaced wholesale). */
#include "common.h"
#include "gen.h"

int gen_nonrope(const struct gen_args *a, const posenc_model *m)
{
    (void)a;
    (void)m;
    posenc_msg("gen", "non-rotary encodings are not built yet");
    return POSENC_EXIT_ERROR;
}
