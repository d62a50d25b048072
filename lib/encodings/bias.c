/* lib/encodings/bias.c: the non-rotary encodings: ALiBi slopes and rows, T5 relative buckets, Shaw
 * clipped indices and sinusoidal tables.
 *
 * Sinusoidal values are computed from the exact formula: each frequency 10000^(-e) is found in
 * double-long-double arithmetic (~128 bits) with a Taylor series, the angle pos*w is formed as an
 * exact product, and sin(hi + lo) = sin(hi) + cos(hi)*lo uses glibc's long double sincosl (which
 * reduces huge arguments exactly). The result is within ~1e-19 relative of the real value, so a
 * single rounding to double (and then to f32/f16/bf16) is the correct one in all but freak
 * cases. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/bias.h"
#include "posenc/dtype.h"

/* ---------------------------------------------------------------- ALiBi */

const char *posenc_alibi_convention_name(posenc_alibi_convention c)
{
    switch (c) {
    case POSENC_ALIBI_SYMMETRIC: return "symmetric";
    case POSENC_ALIBI_CAUSAL: return "causal";
    case POSENC_ALIBI_KEYINDEX: return "keyindex";
    }
    return "unknown";
}

posenc_status posenc_alibi_convention_parse(const char *s, posenc_alibi_convention *out,
                                            posenc_error *err)
{
    static const posenc_alibi_convention all[] = { POSENC_ALIBI_SYMMETRIC, POSENC_ALIBI_CAUSAL,
                                                   POSENC_ALIBI_KEYINDEX };
    for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(s, posenc_alibi_convention_name(all[i])) == 0) {
            *out = all[i];
            return POSENC_OK;
        }
    }
    return posenc_seterr(err, POSENC_EINVAL,
                         "unknown ALiBi convention '%s' (symmetric, causal or keyindex)",
                         s ? s : "");
}

const char *posenc_alibi_kind_name(posenc_alibi_kind k)
{
    switch (k) {
    case POSENC_ALIBI_REFERENCE: return "reference";
    case POSENC_ALIBI_MPT: return "mpt";
    case POSENC_ALIBI_FALCON: return "falcon";
    }
    return "unknown";
}

posenc_status posenc_alibi_kind_parse(const char *s, posenc_alibi_kind *out, posenc_error *err)
{
    if (s && (strcmp(s, "reference") == 0 || strcmp(s, "bloom") == 0 ||
              strcmp(s, "baichuan") == 0)) {
        *out = POSENC_ALIBI_REFERENCE;
        return POSENC_OK;
    }
    if (s && strcmp(s, "mpt") == 0) {
        *out = POSENC_ALIBI_MPT;
        return POSENC_OK;
    }
    if (s && strcmp(s, "falcon") == 0) {
        *out = POSENC_ALIBI_FALCON;
        return POSENC_OK;
    }
    return posenc_seterr(err, POSENC_EINVAL,
                         "unknown ALiBi variant '%s' (reference, bloom, baichuan, mpt or falcon)",
                         s ? s : "");
}

/* Largest power of two <= n (n >= 1). */
static long floor_pow2(long n)
{
    long p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* Reference slope of head h (0-based) among H heads: 2^(-8(h+1)/P) for h < P = 2^floor(log2 H),
 * then every other slope of 2P heads: 2^(-4(2i+1)/P). */
static double reference_slope(int h, int heads)
{
    long p = floor_pow2(heads);
    long double e;
    if (h < p)
        e = -8.0L * (long double)(h + 1) / (long double)p;
    else
        e = -4.0L * (long double)(2 * (h - p) + 1) / (long double)p;
    return (double)exp2l(e);
}

posenc_status posenc_alibi_slopes(posenc_alibi_kind kind, int heads, double bias_max,
                                  double *slopes, posenc_error *err)
{
    if (heads < 1)
        return posenc_seterr(err, POSENC_EINVAL, "ALiBi needs at least one head, not %d", heads);
    if (heads > (1 << 24))
        return posenc_seterr(err, POSENC_EINVAL, "%d ALiBi heads is too many", heads);
    switch (kind) {
    case POSENC_ALIBI_REFERENCE:
        for (int h = 0; h < heads; h++)
            slopes[h] = reference_slope(h, heads);
        return POSENC_OK;
    case POSENC_ALIBI_FALCON:
        for (int h = 0; h < heads; h++)
            slopes[h] = (double)posenc_bf16_to_f32(posenc_f64_to_bf16(reference_slope(h, heads)));
        return POSENC_OK;
    case POSENC_ALIBI_MPT: {
        if (!(bias_max > 0) || !isfinite(bias_max))
            return posenc_seterr(err, POSENC_EINVAL,
                                 "alibi_bias_max must be a positive number, not %g", bias_max);
        long p = floor_pow2(heads);
        if (p < heads)
            p *= 2; /* 2^ceil(log2 H) */
        /* slopes_k = 2^(-k * bias_max / P), k = 1..P; when P != H the order is
         * k = 2, 4, ..., P, then 1, 3, ..., P - 1 (cat(slopes[1::2], slopes[::2])). */
        for (int h = 0; h < heads; h++) {
            long k;
            if (p == heads)
                k = h + 1;
            else if (h < p / 2)
                k = 2 * (h + 1);
            else
                k = 2 * (h - p / 2) + 1;
            slopes[h] = (double)exp2l(-(long double)k * (long double)bias_max / (long double)p);
        }
        return POSENC_OK;
    }
    }
    return posenc_seterr(err, POSENC_EINVAL, "unknown ALiBi kind %d", (int)kind);
}

static double alibi_offset(posenc_alibi_convention conv, int64_t i, int64_t j)
{
    switch (conv) {
    case POSENC_ALIBI_SYMMETRIC: return -(double)(i > j ? i - j : j - i);
    case POSENC_ALIBI_CAUSAL: return (double)(j - i);
    case POSENC_ALIBI_KEYINDEX: return (double)j;
    }
    return 0.0;
}

void posenc_alibi_row(double slope, posenc_alibi_convention conv, int64_t i, int64_t k_len,
                      double *out)
{
    for (int64_t j = 0; j < k_len; j++)
        out[j] = slope * alibi_offset(conv, i, j);
}

void posenc_alibi_row_kind(posenc_alibi_kind kind, double slope, posenc_alibi_convention conv,
                           int64_t i, int64_t k_len, double *out)
{
    if (kind != POSENC_ALIBI_FALCON) {
        posenc_alibi_row(slope, conv, i, k_len, out);
        return;
    }
    /* Falcon: slopes.bfloat16() * positions promotes the integer positions to bfloat16 too;
     * the product of two 8-bit significands is exact in float32 (and here in double), then
     * rounded to bfloat16 once. */
    double s = (double)posenc_bf16_to_f32(posenc_f64_to_bf16(slope));
    for (int64_t j = 0; j < k_len; j++) {
        double o = (double)posenc_bf16_to_f32(posenc_f64_to_bf16(alibi_offset(conv, i, j)));
        out[j] = (double)posenc_bf16_to_f32(posenc_f64_to_bf16(s * o));
    }
}

/* ---------------------------------------------------------------- T5 */

posenc_status posenc_t5_check(int bidirectional, int num_buckets, int max_distance,
                              posenc_error *err)
{
    if (num_buckets < 2)
        return posenc_seterr(err, POSENC_EINVAL,
                             "T5 num_buckets must be at least 2, not %d", num_buckets);
    int n = bidirectional ? num_buckets / 2 : num_buckets;
    int max_exact = n / 2;
    if (max_exact < 1)
        return posenc_seterr(err, POSENC_EINVAL,
                             "T5 num_buckets %d is too small for bidirectional (encoder) buckets: "
                             "need at least 4", num_buckets);
    if (max_distance <= max_exact)
        return posenc_seterr(err, POSENC_EINVAL,
                             "T5 max_distance %d must exceed the %d exact buckets "
                             "(num_buckets %d%s / 2)", max_distance, max_exact, num_buckets,
                             bidirectional ? " / 2" : "");
    return POSENC_OK;
}

int posenc_t5_bucket(int64_t rel, int bidirectional, int num_buckets, int max_distance)
{
    int bucket = 0;
    int n = num_buckets;
    if (bidirectional) {
        n = num_buckets / 2;
        if (rel > 0)
            bucket += n;
        rel = rel < 0 ? (rel == INT64_MIN ? INT64_MAX : -rel) : rel;
    } else {
        rel = rel < 0 ? (rel == INT64_MIN ? INT64_MAX : -rel) : 0;
    }
    int max_exact = n / 2;
    if (rel < max_exact)
        return bucket + (int)rel;
    if (max_exact < 1)
        return bucket + (n > 0 ? n - 1 : 0); /* rejected by posenc_t5_check */
    /* transformers, all in float32:
     *   max_exact + (log(rel.float() / max_exact) / math.log(max_distance / max_exact)
     *                * (num_buckets - max_exact)).to(long), capped at num_buckets - 1 */
    volatile float r = (float)rel / (float)max_exact;
    volatile float l = logf(r);
    volatile float den = (float)log((double)max_distance / (double)max_exact);
    volatile float v = l / den;
    v = v * (float)(n - max_exact);
    int large;
    if (!(v < (float)n)) /* also catches inf and NaN */
        large = n - 1;
    else
        large = max_exact + (int)v;
    if (large > n - 1)
        large = n - 1;
    return bucket + large;
}

void posenc_t5_bucket_row(int64_t i, int64_t k_len, int bidirectional, int num_buckets,
                          int max_distance, int32_t *out)
{
    for (int64_t j = 0; j < k_len; j++)
        out[j] = posenc_t5_bucket(j - i, bidirectional, num_buckets, max_distance);
}

void posenc_t5_bias_row(const float *weights, int heads, int h, int64_t i, int64_t k_len,
                        int bidirectional, int num_buckets, int max_distance, float *out)
{
    for (int64_t j = 0; j < k_len; j++) {
        int b = posenc_t5_bucket(j - i, bidirectional, num_buckets, max_distance);
        out[j] = weights[(size_t)b * (size_t)heads + (size_t)h];
    }
}

/* ---------------------------------------------------------------- Shaw */

int64_t posenc_shaw_index(int64_t i, int64_t j, int64_t k)
{
    int64_t d = j - i;
    if (d < -k)
        d = -k;
    if (d > k)
        d = k;
    return d + k;
}

/* ---------------------------------------------------------------- sinusoidal */

const char *posenc_sinusoidal_variant_name(posenc_sinusoidal_variant v)
{
    switch (v) {
    case POSENC_SIN_VASWANI: return "vaswani";
    case POSENC_SIN_T2T: return "t2t";
    case POSENC_SIN_FAIRSEQ: return "fairseq";
    case POSENC_SIN_MARIAN: return "marian";
    case POSENC_SIN_COS_SIN: return "cos_sin";
    }
    return "unknown";
}

posenc_status posenc_sinusoidal_variant_parse(const char *s, posenc_sinusoidal_variant *out,
                                              posenc_error *err)
{
    static const posenc_sinusoidal_variant all[] = { POSENC_SIN_VASWANI, POSENC_SIN_T2T,
                                                     POSENC_SIN_FAIRSEQ, POSENC_SIN_MARIAN,
                                                     POSENC_SIN_COS_SIN };
    for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(s, posenc_sinusoidal_variant_name(all[i])) == 0) {
            *out = all[i];
            return POSENC_OK;
        }
    }
    if (s && strcmp(s, "tensor2tensor") == 0) {
        *out = POSENC_SIN_T2T;
        return POSENC_OK;
    }
    return posenc_seterr(err, POSENC_EINVAL,
                         "unknown sinusoidal variant '%s' (vaswani, t2t, fairseq, marian or "
                         "cos_sin)",
                         s ? s : "");
}

/* Double-long-double arithmetic (hi + lo, |lo| <= ulp(hi)/2): ~128 bits with x87 long double. */
typedef struct dld {
    long double hi, lo;
} dld;

static dld two_sum(long double a, long double b)
{
    long double s = a + b, bb = s - a;
    dld r = { s, (a - (s - bb)) + (b - bb) };
    return r;
}

static dld quick_two_sum(long double a, long double b)
{
    long double s = a + b;
    dld r = { s, b - (s - a) };
    return r;
}

static void split(long double a, long double *hi, long double *lo)
{
    static const long double c = (long double)(1ULL << ((LDBL_MANT_DIG + 1) / 2)) + 1.0L;
    long double t = c * a;
    *hi = t - (t - a);
    *lo = a - *hi;
}

static dld two_prod(long double a, long double b)
{
    long double p = a * b, ah, al, bh, bl;
    split(a, &ah, &al);
    split(b, &bh, &bl);
    dld r = { p, ((ah * bh - p) + ah * bl + al * bh) + al * bl };
    return r;
}

static dld dld_add(dld a, dld b)
{
    dld s = two_sum(a.hi, b.hi), t = two_sum(a.lo, b.lo);
    s.lo += t.hi;
    s = quick_two_sum(s.hi, s.lo);
    s.lo += t.lo;
    return quick_two_sum(s.hi, s.lo);
}

static dld dld_mul(dld a, dld b)
{
    dld p = two_prod(a.hi, b.hi);
    p.lo += a.hi * b.lo + a.lo * b.hi;
    return quick_two_sum(p.hi, p.lo);
}

static dld dld_mul_ld(dld a, long double b)
{
    dld p = two_prod(a.hi, b);
    p.lo += a.lo * b;
    return quick_two_sum(p.hi, p.lo);
}

static dld dld_div_ld(dld a, long double b)
{
    long double q1 = a.hi / b;
    dld p = two_prod(q1, b);
    dld s = two_sum(a.hi, -p.hi);
    s.lo -= p.lo;
    s.lo += a.lo;
    long double q2 = (s.hi + s.lo) / b;
    return quick_two_sum(q1, q2);
}

/* A constant given as the exact sum of three doubles (159 bits). */
static dld dld_const(double c0, double c1, double c2)
{
    dld a = two_sum(c0, c1), b = { c2, 0.0L };
    return dld_add(a, b);
}

/* ln(10000) and ln(2), split with Python's decimal module at 80 digits. */
static dld ln10000(void)
{
    return dld_const(0x1.26bb1bbb55516p+3, -0x1.f48ad494ea3e9p-51, -0x1.9ebae3ae0260cp-105);
}

static dld ln2(void)
{
    return dld_const(0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56, 0x1.7b57a079a1934p-111);
}

/* exp(x) for moderate x (|x| < 1000): x = n ln2 + r, exp(r / 1024) by Taylor, squared 10 times. */
static dld dld_exp(dld x)
{
    long double n = rintl(x.hi / ln2().hi);
    dld nl = dld_mul_ld(ln2(), -n);
    dld r = dld_add(x, nl);
    r.hi = ldexpl(r.hi, -10);
    r.lo = ldexpl(r.lo, -10);
    /* |r| <= 0.35 / 1024: 14 terms leave a remainder below 2^-200 */
    dld s = { 1.0L, 0.0L };
    for (int k = 14; k >= 1; k--) {
        s = dld_div_ld(dld_mul(r, s), (long double)k);
        s = dld_add(s, (dld){ 1.0L, 0.0L });
    }
    for (int k = 0; k < 10; k++)
        s = dld_mul(s, s);
    s.hi = ldexpl(s.hi, (int)n);
    s.lo = ldexpl(s.lo, (int)n);
    return s;
}

/* 10000^(-p/q) */
static dld inv_timescale(long p, long q)
{
    dld x = dld_div_ld(dld_mul_ld(ln10000(), (long double)p), (long double)q);
    x.hi = -x.hi;
    x.lo = -x.lo;
    return dld_exp(x);
}

struct posenc_sinusoidal {
    posenc_sinusoidal_variant v;
    int d;
    int padding_idx;
    int nfreq;
    dld *w; /* nfreq inverse timescales */
};

posenc_status posenc_sinusoidal_new(posenc_sinusoidal_variant v, int d_model, int padding_idx,
                                    posenc_sinusoidal **out, posenc_error *err)
{
    if (d_model < 1)
        return posenc_seterr(err, POSENC_EINVAL, "sinusoidal d_model must be at least 1, not %d",
                             d_model);
    if (v == POSENC_SIN_FAIRSEQ && d_model < 4)
        return posenc_seterr(err, POSENC_EINVAL,
                             "fairseq sinusoidal tables need d_model >= 4 (it divides by "
                             "d_model/2 - 1), not %d", d_model);
    if (v != POSENC_SIN_VASWANI && v != POSENC_SIN_T2T && v != POSENC_SIN_FAIRSEQ &&
        v != POSENC_SIN_MARIAN && v != POSENC_SIN_COS_SIN)
        return posenc_seterr(err, POSENC_EINVAL, "unknown sinusoidal variant %d", (int)v);
    posenc_sinusoidal *s = calloc(1, sizeof *s);
    if (!s)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    s->v = v;
    s->d = d_model;
    s->padding_idx = v == POSENC_SIN_FAIRSEQ ? padding_idx : -1;
    int half = d_model / 2;
    if (v == POSENC_SIN_VASWANI || v == POSENC_SIN_MARIAN)
        s->nfreq = (d_model + 1) / 2; /* exponent 2k/d, k < ceil(d/2) */
    else
        s->nfreq = half;              /* exponent k/max(half - 1, 1) */
    s->w = calloc((size_t)(s->nfreq > 0 ? s->nfreq : 1), sizeof *s->w);
    if (!s->w) {
        free(s);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    for (int k = 0; k < s->nfreq; k++) {
        if (v == POSENC_SIN_VASWANI || v == POSENC_SIN_MARIAN)
            s->w[k] = inv_timescale(2L * k, d_model);
        else
            s->w[k] = inv_timescale(k, half - 1 > 1 ? half - 1 : 1);
    }
    *out = s;
    return POSENC_OK;
}

void posenc_sinusoidal_free(posenc_sinusoidal *s)
{
    if (!s)
        return;
    free(s->w);
    free(s);
}

/* sin and cos of pos * w, from the exact product and a first-order correction. */
static void sincos_pos(int64_t pos, dld w, double *sn, double *cs)
{
    dld a = dld_mul_ld(w, (long double)pos);
    long double s, c;
    sincosl(a.hi, &s, &c);
    *sn = (double)(s + c * a.lo);
    *cs = (double)(c - s * a.lo);
}

void posenc_sinusoidal_fill(const posenc_sinusoidal *s, int64_t pos, double *out)
{
    int d = s->d;
    if (s->v == POSENC_SIN_FAIRSEQ && pos == s->padding_idx) {
        for (int j = 0; j < d; j++)
            out[j] = 0.0;
        return;
    }
    double sn, cs;
    switch (s->v) {
    case POSENC_SIN_VASWANI:
        for (int k = 0; k < s->nfreq; k++) {
            sincos_pos(pos, s->w[k], &sn, &cs);
            out[2 * k] = sn;
            if (2 * k + 1 < d)
                out[2 * k + 1] = cs;
        }
        break;
    case POSENC_SIN_MARIAN: {
        int sentinel = d / 2 + d % 2;
        for (int k = 0; k < s->nfreq; k++) {
            sincos_pos(pos, s->w[k], &sn, &cs);
            out[k] = sn;
            if (sentinel + k < d)
                out[sentinel + k] = cs;
        }
        break;
    }
    case POSENC_SIN_T2T:
    case POSENC_SIN_FAIRSEQ:
    case POSENC_SIN_COS_SIN: {
        int half = d / 2, c0 = s->v == POSENC_SIN_COS_SIN ? 0 : half;
        for (int k = 0; k < half; k++) {
            sincos_pos(pos, s->w[k], &sn, &cs);
            out[half - c0 + k] = sn;
            out[c0 + k] = cs;
        }
        if (d % 2)
            out[d - 1] = 0.0;
        break;
    }
    }
}

posenc_status posenc_sinusoidal_row(posenc_sinusoidal_variant v, int d_model, int64_t pos,
                                    int padding_idx, double *out, posenc_error *err)
{
    if (pos < 0)
        return posenc_seterr(err, POSENC_EINVAL, "negative position %lld", (long long)pos);
    posenc_sinusoidal *s;
    posenc_status st = posenc_sinusoidal_new(v, d_model, padding_idx, &s, err);
    if (st != POSENC_OK)
        return st;
    posenc_sinusoidal_fill(s, pos, out);
    posenc_sinusoidal_free(s);
    return POSENC_OK;
}
