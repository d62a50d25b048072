/* gguf_meta.c: a metadata value (a JSON text and a posenc_meta_type) as a GGUF value: the
 * type rules of posenc_writer_meta_typed and POSENC_META_AUTO (posenc-formats(5)), every range
 * checked; used by io.c to check a typed value at once and by gguf_write.c to encode it. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "formats/io/backend.h"
#include "formats/files/ggufenc.h"

static const char *const type_names[] = {
    [POSENC_META_STRING] = "a string",        [POSENC_META_BOOL] = "a bool",
    [POSENC_META_U32] = "a uint32",           [POSENC_META_I32] = "an int32",
    [POSENC_META_U64] = "a uint64",           [POSENC_META_I64] = "an int64",
    [POSENC_META_F32] = "a finite float32",   [POSENC_META_F64] = "a number",
    [POSENC_META_I32_ARRAY] = "an array of int32",
    [POSENC_META_F32_ARRAY] = "an array of finite float32",
    [POSENC_META_F64_ARRAY] = "an array of numbers",
    [POSENC_META_STRING_ARRAY] = "an array of strings",
};

/* The JSON text s as an integer literal: 1 with *neg and the magnitude in *mag, 0 otherwise. */
static int int_literal(const char *s, int *neg, uint64_t *mag)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    *neg = *s == '-';
    if (*neg)
        s++;
    if (*s < '0' || *s > '9')
        return 0;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    *mag = v;
    return *s == '\0';
}

static int f32_ok(const cJSON *x)
{
    return cJSON_IsNumber(x) && isfinite(x->valuedouble) && fabs(x->valuedouble) <= FLT_MAX;
}

static int i32_ok(const cJSON *x)
{
    double d = x->valuedouble;
    return cJSON_IsNumber(x) && d >= INT32_MIN && d <= INT32_MAX && d == floor(d);
}

/* A JSON array whose elements all satisfy ok. */
static int all_of(const cJSON *v, int (*ok)(const cJSON *))
{
    const cJSON *x;
    cJSON_ArrayForEach(x, v)
        if (!ok(x))
            return 0;
    return 1;
}

static int is_string(const cJSON *x) { return cJSON_IsString(x); }
static int is_number(const cJSON *x) { return cJSON_IsNumber(x); }
static int is_bool(const cJSON *x) { return cJSON_IsBool(x); }

static void put_array(pe_strbuf *b, const cJSON *v, int et, uint64_t *nvalues)
{
    uint64_t n = (uint64_t)cJSON_GetArraySize(v);
    put_le(b, T_ARRAY, 4);
    put_le(b, (uint64_t)et, 4);
    put_le(b, n, 8);
    const cJSON *x;
    cJSON_ArrayForEach(x, v) {
        if (et == T_STRING)
            put_str(b, x->valuestring, strlen(x->valuestring));
        else if (et == T_BOOL)
            put_le(b, cJSON_IsTrue(x) ? 1 : 0, 1);
        else if (et == T_I32)
            put_le(b, (uint32_t)(int32_t)x->valuedouble, 4);
        else if (et == T_F32)
            put_f32(b, (float)x->valuedouble);
        else
            put_f64(b, x->valuedouble);
    }
    *nvalues += n;
}

/* The longest string in an array (0 for other values). */
static size_t longest(const cJSON *v)
{
    size_t m = 0;
    const cJSON *x;
    if (cJSON_IsString(v))
        return strlen(v->valuestring);
    cJSON_ArrayForEach(x, v)
        if (cJSON_IsString(x) && strlen(x->valuestring) > m)
            m = strlen(x->valuestring);
    return m;
}

posenc_status pe_gguf_meta_encode(pe_strbuf *out, int t, const char *json_value,
                                      const char *path, const char *key, uint64_t *nvalues,
                                      posenc_error *err)
{
    posenc_status st = POSENC_OK;
    pe_strbuf scratch = { 0 };
    pe_strbuf *b = out ? out : &scratch;
    uint64_t nv = 1;
    char *text = NULL;
    cJSON *v = cJSON_Parse(json_value);
    if (!v)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': metadata '%s' is not a JSON value: %.64s",
                             path, key, json_value);
    int neg = 0;
    uint64_t mag = 0;
    int lit = int_literal(json_value, &neg, &mag);
    int ok = 1;
    if (longest(v) > GW_MAX_STRING)
        goto toolong;
    if (cJSON_IsArray(v) && (uint64_t)cJSON_GetArraySize(v) > GW_MAX_VALUES)
        goto toolong;
    switch (t) {
    case POSENC_META_AUTO:
        if (cJSON_IsNull(v)) {
            nv = 0;
        } else if (cJSON_IsString(v)) {
            put_le(b, T_STRING, 4);
            put_str(b, v->valuestring, strlen(v->valuestring));
        } else if (cJSON_IsBool(v)) {
            put_le(b, T_BOOL, 4);
            put_le(b, cJSON_IsTrue(v) ? 1 : 0, 1);
        } else if (cJSON_IsNumber(v) && lit && mag > (1ull << 53) &&
                   (neg ? mag <= (uint64_t)INT64_MAX + 1 : 1)) {
            /* an integer a float64 cannot hold exactly: int64, or uint64 past INT64_MAX */
            if (neg || mag <= (uint64_t)INT64_MAX) {
                put_le(b, T_I64, 4);
                put_le(b, neg ? (uint64_t)0 - mag : mag, 8);
            } else {
                put_le(b, T_U64, 4);
                put_le(b, mag, 8);
            }
        } else if (cJSON_IsNumber(v)) {
            put_le(b, T_F64, 4);
            put_f64(b, v->valuedouble);
        } else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0 && all_of(v, is_string)) {
            put_array(b, v, T_STRING, &nv);
        } else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0 && all_of(v, is_bool)) {
            put_array(b, v, T_BOOL, &nv);
        } else if (cJSON_IsArray(v) && all_of(v, is_number)) {
            put_array(b, v, T_F64, &nv);
        } else { /* an object, or an array of mixed or nested values: its JSON text */
            text = cJSON_PrintUnformatted(v);
            if (!text) {
                st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
                goto out;
            }
            if (strlen(text) > GW_MAX_STRING)
                goto toolong;
            put_le(b, T_STRING, 4);
            put_str(b, text, strlen(text));
        }
        break;
    case POSENC_META_STRING:
        if ((ok = cJSON_IsString(v))) {
            put_le(b, T_STRING, 4);
            put_str(b, v->valuestring, strlen(v->valuestring));
        }
        break;
    case POSENC_META_BOOL:
        if ((ok = cJSON_IsBool(v))) {
            put_le(b, T_BOOL, 4);
            put_le(b, cJSON_IsTrue(v) ? 1 : 0, 1);
        }
        break;
    case POSENC_META_U32:
    case POSENC_META_U64:
        ok = lit && (!neg || mag == 0) && (t == POSENC_META_U64 || mag <= UINT32_MAX);
        if (ok) {
            put_le(b, t == POSENC_META_U32 ? T_U32 : T_U64, 4);
            put_le(b, mag, t == POSENC_META_U32 ? 4 : 8);
        }
        break;
    case POSENC_META_I32:
    case POSENC_META_I64: {
        uint64_t lim = t == POSENC_META_I32 ? (uint64_t)INT32_MAX : (uint64_t)INT64_MAX;
        ok = lit && mag <= lim + (neg ? 1 : 0);
        if (ok) {
            uint64_t u = neg ? (uint64_t)0 - mag : mag;
            put_le(b, t == POSENC_META_I32 ? T_I32 : T_I64, 4);
            put_le(b, u, t == POSENC_META_I32 ? 4 : 8);
        }
        break;
    }
    case POSENC_META_F32:
        if ((ok = f32_ok(v))) {
            put_le(b, T_F32, 4);
            put_f32(b, (float)v->valuedouble);
        }
        break;
    case POSENC_META_F64:
        if ((ok = cJSON_IsNumber(v))) {
            put_le(b, T_F64, 4);
            put_f64(b, v->valuedouble);
        }
        break;
    case POSENC_META_I32_ARRAY:
        if ((ok = cJSON_IsArray(v) && all_of(v, i32_ok)))
            put_array(b, v, T_I32, &nv);
        break;
    case POSENC_META_F32_ARRAY:
        if ((ok = cJSON_IsArray(v) && all_of(v, f32_ok)))
            put_array(b, v, T_F32, &nv);
        break;
    case POSENC_META_F64_ARRAY:
        if ((ok = cJSON_IsArray(v) && all_of(v, is_number)))
            put_array(b, v, T_F64, &nv);
        break;
    case POSENC_META_STRING_ARRAY:
        if ((ok = cJSON_IsArray(v) && all_of(v, is_string)))
            put_array(b, v, T_STRING, &nv);
        break;
    default:
        st = posenc_seterr(err, POSENC_EINVAL, "'%s': metadata '%s' has an invalid type %d", path,
                           key, t);
        goto out;
    }
    if (!ok) {
        st = posenc_seterr(err, POSENC_EINVAL, "'%s': metadata '%s' is not %s: %.64s", path, key,
                           type_names[t], json_value);
        goto out;
    }
    if (b->oom)
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    else if (nvalues)
        *nvalues += nv;
    goto out;
toolong:
    st = posenc_seterr(err, POSENC_ERANGE,
                       "'%s': metadata '%s' is too large for GGUF (a string over %u bytes or an "
                       "array over %u values)", path, key, GW_MAX_STRING, GW_MAX_VALUES);
out:
    free(text);
    free(scratch.p);
    cJSON_Delete(v);
    return st;
}

