/* dtype.c: element types, checked shape arithmetic and exact float conversions. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "posenc/dtype.h"
#include "lib/core/half.h"

static const struct {
    const char *name;
    size_t size;
} dtypes[POSENC_DT_COUNT] = {
    [POSENC_DT_F16] = { "f16", 2 },  [POSENC_DT_BF16] = { "bf16", 2 },
    [POSENC_DT_F32] = { "f32", 4 },  [POSENC_DT_F64] = { "f64", 8 },
    [POSENC_DT_I32] = { "i32", 4 },  [POSENC_DT_I64] = { "i64", 8 },
    [POSENC_DT_U8] = { "u8", 1 },
};

size_t posenc_dtype_size(posenc_dtype dt)
{
    return (unsigned)dt < POSENC_DT_COUNT ? dtypes[dt].size : 0;
}

const char *posenc_dtype_name(posenc_dtype dt)
{
    return (unsigned)dt < POSENC_DT_COUNT ? dtypes[dt].name : "?";
}

int posenc_dtype_is_float(posenc_dtype dt) { return dt <= POSENC_DT_F64; }

posenc_status posenc_dtype_parse(const char *s, posenc_dtype *out, posenc_error *err)
{
    static const struct {
        const char *alias;
        posenc_dtype dt;
    } aliases[] = {
        { "float16", POSENC_DT_F16 },  { "half", POSENC_DT_F16 },    { "fp16", POSENC_DT_F16 },
        { "bfloat16", POSENC_DT_BF16 }, { "float32", POSENC_DT_F32 }, { "float", POSENC_DT_F32 },
        { "fp32", POSENC_DT_F32 },     { "float64", POSENC_DT_F64 }, { "double", POSENC_DT_F64 },
        { "fp64", POSENC_DT_F64 },     { "int32", POSENC_DT_I32 },   { "int64", POSENC_DT_I64 },
        { "uint8", POSENC_DT_U8 },
    };
    for (int i = 0; i < POSENC_DT_COUNT; i++)
        if (strcmp(s, dtypes[i].name) == 0) {
            *out = (posenc_dtype)i;
            return POSENC_OK;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(s, aliases[i].alias) == 0) {
            *out = aliases[i].dt;
            return POSENC_OK;
        }
    return posenc_seterr(err, POSENC_EINVAL,
                         "unknown dtype '%s' (expected f16, bf16, f32, f64, i32, i64 or u8)", s);
}

posenc_status posenc_shape_size(int ndim, const int64_t *shape, posenc_dtype dt, uint64_t *nelem,
                                uint64_t *nbytes, posenc_error *err)
{
    if (ndim < 0 || ndim > POSENC_MAX_DIMS)
        return posenc_seterr(err, POSENC_ERANGE, "%d dimensions (at most %d)", ndim,
                             POSENC_MAX_DIMS);
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return posenc_seterr(err, POSENC_EFORMAT, "negative dimension %lld",
                                 (long long)shape[i]);
        if (shape[i] != 0 && n > (uint64_t)INT64_MAX / (uint64_t)shape[i])
            return posenc_seterr(err, POSENC_ERANGE, "shape size overflows");
        n *= (uint64_t)shape[i];
    }
    size_t es = posenc_dtype_size(dt);
    if (es == 0)
        return posenc_seterr(err, POSENC_EINVAL, "invalid dtype");
    if (n > (uint64_t)INT64_MAX / es || n * es > (uint64_t)SIZE_MAX)
        return posenc_seterr(err, POSENC_ERANGE, "shape size overflows");
    if (nelem)
        *nelem = n;
    if (nbytes)
        *nbytes = n * es;
    return POSENC_OK;
}

char *posenc_shape_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
    size_t off = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    off += (size_t)snprintf(buf + off, len - off, "(");
    for (int i = 0; i < ndim && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%lld", i ? ", " : "",
                                (long long)shape[i]);
    if (off < len)
        snprintf(buf + off, len - off, ndim == 1 ? ",)" : ")");
    return buf;
}

/* ---- half and bfloat16 ---- */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float posenc_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
    if (exp == 0x1f)
        return bits_f32(sign | 0x7f800000u | (man << 13) | (man ? 0x00400000u : 0));
    if (exp == 0) {
        float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

float posenc_bf16_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }

uint16_t posenc_f64_to_f16(double d)
{
    uint16_t sign = signbit(d) ? 0x8000u : 0;
    if (isnan(d))
        return sign | 0x7e00u;
    double a = fabs(d);
    if (a >= 65520.0) /* at or past the midpoint between 65504 and 2^16 */
        return sign | 0x7c00u;
    if (a < ldexp(1.0, -14)) {
        /* subnormal: units of 2^-24; nearbyint rounds to nearest even */
        double q = nearbyint(ldexp(a, 24));
        return sign | (uint16_t)q; /* q == 1024 is the smallest normal: bit pattern matches */
    }
    int e;
    double m = frexp(a, &e);           /* a = m * 2^e, m in [0.5, 1) */
    double q = nearbyint(ldexp(m, 11)); /* 11 significant bits */
    if (q >= 2048.0) {
        q /= 2;
        e++;
    }
    int biased = e - 1 + 15;
    if (biased >= 31)
        return sign | 0x7c00u;
    return sign | (uint16_t)((unsigned)biased << 10) | (uint16_t)((uint32_t)q & 0x3ffu);
}

uint16_t posenc_f32_to_f16(float f) { return posenc_f64_to_f16((double)f); }

uint16_t posenc_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

uint16_t posenc_f64_to_bf16(double d)
{
    if (isnan(d))
        return signbit(d) ? 0xffc0u : 0x7fc0u;
    float f = (float)d;
    /* Rounding d -> f32 -> bf16 can double-round; fix the rare tie created by the first step. */
    uint32_t u = f32_bits(f);
    if ((u & 0xffffu) == 0x8000u && isfinite(f) && (double)f != d) {
        /* f sits exactly on a bf16 midpoint only because of the first rounding: move it off
         * towards d so that the second rounding goes the right way. */
        u += ((double)f < d) == (f > 0) ? 1 : -1;
        f = bits_f32(u);
    }
    return posenc_f32_to_bf16(f);
}

#define CONVERT_LOOP(DT, ST, EXPR)                                                          \
    do {                                                                                    \
        DT *o = dst;                                                                        \
        const ST *in = src;                                                                 \
        for (size_t i = 0; i < n; i++) {                                                    \
            ST x = in[i];                                                                   \
            o[i] = EXPR;                                                                    \
        }                                                                                   \
    } while (0)

static double load_f64(const void *src, posenc_dtype st, size_t i)
{
    switch (st) {
    case POSENC_DT_F16: return posenc_f16_to_f32(((const uint16_t *)src)[i]);
    case POSENC_DT_BF16: return posenc_bf16_to_f32(((const uint16_t *)src)[i]);
    case POSENC_DT_F32: return ((const float *)src)[i];
    case POSENC_DT_F64: return ((const double *)src)[i];
    case POSENC_DT_I32: return ((const int32_t *)src)[i];
    case POSENC_DT_I64: return (double)((const int64_t *)src)[i];
    case POSENC_DT_U8: return ((const uint8_t *)src)[i];
    default: return 0;
    }
}

static int64_t load_i64(const void *src, posenc_dtype st, size_t i)
{
    switch (st) {
    case POSENC_DT_I32: return ((const int32_t *)src)[i];
    case POSENC_DT_I64: return ((const int64_t *)src)[i];
    case POSENC_DT_U8: return ((const uint8_t *)src)[i];
    default: {
        double d = load_f64(src, st, i);
        if (isnan(d))
            return 0;
        if (d >= 9.2233720368547758e18)
            return INT64_MAX;
        if (d <= -9.2233720368547758e18)
            return INT64_MIN;
        return (int64_t)d;
    }
    }
}

void posenc_dtype_convert(void *dst, posenc_dtype dt, const void *src, posenc_dtype st, size_t n)
{
    if (dt == st) {
        memmove(dst, src, n * posenc_dtype_size(dt));
        return;
    }
    /* fast paths for the hot conversions */
    if (dt == POSENC_DT_F32 && st == POSENC_DT_F64) {
        CONVERT_LOOP(float, double, (float)x);
        return;
    }
    /* widening to double (every dump read by verify and diff): blocked loops that vectorise,
     * lib/core/half.h's branch-free loads; a float's conversion to double quiets a signalling
     * NaN the same way whichever of the equal-valued floats it starts from */
#define WIDEN_F64(ST, LOAD)                                                                 \
    do {                                                                                    \
        const ST *in = src;                                                                 \
        double *o = dst;                                                                    \
        BLOCKED(n, i, o[i] = (double)LOAD(in[i]));                                          \
        return;                                                                             \
    } while (0)
    if (dt == POSENC_DT_F64 && st == POSENC_DT_F32)
        WIDEN_F64(float, (float));
    if (dt == POSENC_DT_F64 && st == POSENC_DT_F16)
        WIDEN_F64(uint16_t, f16_load);
    if (dt == POSENC_DT_F64 && st == POSENC_DT_BF16)
        WIDEN_F64(uint16_t, bf16_load);
#undef WIDEN_F64
    if (dt == POSENC_DT_F32 && st == POSENC_DT_F16) {
        CONVERT_LOOP(float, uint16_t, posenc_f16_to_f32(x));
        return;
    }
    if (dt == POSENC_DT_F32 && st == POSENC_DT_BF16) {
        CONVERT_LOOP(float, uint16_t, posenc_bf16_to_f32(x));
        return;
    }
    if (dt == POSENC_DT_F16 && st == POSENC_DT_F32) {
        CONVERT_LOOP(uint16_t, float, posenc_f32_to_f16(x));
        return;
    }
    if (dt == POSENC_DT_BF16 && st == POSENC_DT_F32) {
        CONVERT_LOOP(uint16_t, float, posenc_f32_to_bf16(x));
        return;
    }
    if (dt == POSENC_DT_F16 && st == POSENC_DT_F64) {
        CONVERT_LOOP(uint16_t, double, posenc_f64_to_f16(x));
        return;
    }
    if (dt == POSENC_DT_BF16 && st == POSENC_DT_F64) {
        CONVERT_LOOP(uint16_t, double, posenc_f64_to_bf16(x));
        return;
    }
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case POSENC_DT_F16: ((uint16_t *)dst)[i] = posenc_f64_to_f16(load_f64(src, st, i)); break;
        case POSENC_DT_BF16: ((uint16_t *)dst)[i] = posenc_f64_to_bf16(load_f64(src, st, i)); break;
        case POSENC_DT_F32: ((float *)dst)[i] = (float)load_f64(src, st, i); break;
        case POSENC_DT_F64: ((double *)dst)[i] = load_f64(src, st, i); break;
        case POSENC_DT_I32: {
            int64_t v = load_i64(src, st, i);
            ((int32_t *)dst)[i] = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
            break;
        }
        case POSENC_DT_I64: ((int64_t *)dst)[i] = load_i64(src, st, i); break;
        case POSENC_DT_U8: {
            int64_t v = load_i64(src, st, i);
            ((uint8_t *)dst)[i] = v > 255 ? 255 : v < 0 ? 0 : (uint8_t)v;
            break;
        }
        default: break;
        }
    }
}

void posenc_byteswap(void *buf, size_t elsize, size_t n)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++, p += elsize)
        for (size_t a = 0, b = elsize - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}
