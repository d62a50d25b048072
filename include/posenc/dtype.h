/* posenc/dtype.h: element types, shapes and exact conversions between them. */
#ifndef POSENC_DTYPE_H
#define POSENC_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum posenc_dtype {
    POSENC_DT_F16 = 0,
    POSENC_DT_BF16 = 1,
    POSENC_DT_F32 = 2,
    POSENC_DT_F64 = 3,
    POSENC_DT_I32 = 4,
    POSENC_DT_I64 = 5,
    POSENC_DT_U8 = 6,
    POSENC_DT_COUNT
} posenc_dtype;

#define POSENC_MAX_DIMS 8
#define POSENC_NAME_MAX 256

/* What one array is: name (may be empty), element type, shape in C order. */
typedef struct posenc_array_info {
    char name[POSENC_NAME_MAX];
    posenc_dtype dtype;
    int ndim;
    int64_t shape[POSENC_MAX_DIMS];
} posenc_array_info;

POSENC_API
size_t posenc_dtype_size(posenc_dtype dt);
/* "f16", "bf16", "f32", "f64", "i32", "i64", "u8"; static, never NULL. */
POSENC_API
const char *posenc_dtype_name(posenc_dtype dt);
/* Accepts the names above and the aliases float16/half, bfloat16, float32/float, float64/double. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_dtype_parse(const char *s, posenc_dtype *out, posenc_error *err);
POSENC_API
int posenc_dtype_is_float(posenc_dtype dt);

/* Element count and byte size of a shape, refusing negative dims and any product that
 * overflows int64 (nelem) or SIZE_MAX/INT64_MAX (nbytes). Either out pointer may be NULL. */
POSENC_API POSENC_NODISCARD
posenc_status posenc_shape_size(int ndim, const int64_t *shape, posenc_dtype dt, uint64_t *nelem,
                                uint64_t *nbytes, posenc_error *err);
/* Write "(2, 3, 4)" into buf; returns buf. */
POSENC_API
char *posenc_shape_str(int ndim, const int64_t *shape, char *buf, size_t len);

/* Half and bfloat16 bit patterns. Narrowing rounds to nearest even; NaN stays NaN (quiet),
 * Inf stays Inf, overflow goes to Inf. The double versions round once (no double rounding). */
POSENC_API
float posenc_f16_to_f32(uint16_t h);
POSENC_API
float posenc_bf16_to_f32(uint16_t b);
POSENC_API
uint16_t posenc_f32_to_f16(float f);
POSENC_API
uint16_t posenc_f32_to_bf16(float f);
POSENC_API
uint16_t posenc_f64_to_f16(double d);
POSENC_API
uint16_t posenc_f64_to_bf16(double d);

/* Convert n elements between any two dtypes (native byte order). Float to narrower float rounds
 * to nearest even, once; float to integer truncates toward zero after range clamping. */
POSENC_API
void posenc_dtype_convert(void *dst, posenc_dtype dt, const void *src, posenc_dtype st, size_t n);

/* Reverse the byte order of n elements of size elsize in place. */
POSENC_API
void posenc_byteswap(void *buf, size_t elsize, size_t n);

#ifdef __cplusplus
}
#endif
#endif
