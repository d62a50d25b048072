/* lib/verify/verify_rot.h: the layout of a rotated head, shared by verify.c and verify_diagnose.c.
 *
 * Which two components of a head vector rotate together as pair i (neox: i and i + n; gptj: 2i
 * and 2i + 1), and how wide the rotated part is for a set of parameters. Internal (pe_),
 * defined inline: verify.c's rotation kernels use them per element. */
#ifndef PE_VERIFY_ROT_H
#define PE_VERIFY_ROT_H

#include <math.h>

#include "posenc/verify.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static inline void pe_pair_index(posenc_style style, int n, int i, int *a, int *b)
{
    if (style == POSENC_STYLE_GPTJ) {
        *a = 2 * i;
        *b = 2 * i + 1;
    } else {
        *a = i;
        *b = i + n;
    }
}

/* rotary width actually rotated for params p */
static inline int pe_rot_width(const posenc_rope_params *p)
{
    int rd = 2 * p->n_freq;
    return rd > p->head_dim ? p->head_dim - p->head_dim % 2 : rd;
}

/* One rounding step of a 16-bit dtype at |value| <= 1: a recipe that rounds its tables or its
 * angle to 16 bits is allowed it in cos and sin, since a runtime's float32 value one ulp away
 * from posenc's may round to the neighbouring 16-bit value. 0 for a recipe without. */
static inline double pe_recipe_step16(const posenc_verify_recipe *r)
{
    double a = r->table_dtype == POSENC_DT_BF16 ? 0x1p-8 : r->table_dtype == POSENC_DT_F16 ? 0x1p-11 : 0;
    double b = r->angle_dtype == POSENC_DT_BF16 ? 0x1p-8 : r->angle_dtype == POSENC_DT_F16 ? 0x1p-11 : 0;
    return a > b ? a : b;
}

#endif
