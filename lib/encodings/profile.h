/* profile.h: the runtime-profile table's row type (internal to lib/).
 *
 * What posenc knows about a precision (its names, the runtime whose numbers it reproduces, its
 * cos/sin function, how its values are rounded, what verify says of its drift) is one row of
 * lib/encodings/profiles.def, instantiated in lib/encodings/rope.c. */
#ifndef PE_PROFILE_H
#define PE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/rope.h"

#define PF_F32    0x01u /* inv_freq and attention scaling are the float32 fields */
#define PF_NARROW 0x02u /* cos/sin cast to an f16/bf16 dump's dtype before the rotation */
#define PF_GGML   0x04u /* needs llama.cpp's arguments (posenc_rope_params.ggml) */

/* cos/sin of the frequencies at one position (pos3: the 3 mrope axes; 1-D: all equal). */
typedef void (*pe_profile_cossin)(const posenc_rope_params *p, const int64_t pos3[3], double *c,
                                  double *s);

typedef struct pe_profile {
    posenc_precision prec;
    const char *name;       /* --precision value */
    const char *alias;      /* a second accepted value, or NULL */
    const char *runtime;    /* who computes it */
    unsigned flags;         /* PF_* */
    pe_profile_cossin cossin;
    int64_t max_pos;        /* largest position the runtime takes (0: posenc's 2^53) */
    const char *drift;      /* what its drift from exact math is */
    const char *note;       /* gen's and info's note on the precision */
} pe_profile;

/* The rows of profiles.def, in posenc_precision's order (lib/encodings/rope.c). */
extern const pe_profile pe_profiles[];
extern const size_t pe_n_profiles;

/* The row of prec; NULL when prec is not a precision. Borrowed (static). */
const pe_profile *pe_profile_get(posenc_precision prec);

#endif
