/* apply.c: RoPE applied to Q/K head vectors: per-position cos/sin rows computed once, then a
 * tight float32 (float64 for f64 dumps) rotation over contiguous halves (neox) or pairs (gptj).
 * See posenc/apply.h for the arithmetic contract. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/apply.h"
#include "lib/core/cpu_internal.h"
#include "lib/core/half.h"
#include "lib/encodings/profile.h"
#include "lib/encodings/rope_step.h"
#include "lib/encodings/rope_type.h"

struct posenc_apply {
    posenc_apply_opts o;
    posenc_style style;
    int head_dim;   /* elements per head vector of the dump */
    int half;       /* neox: distance between the two elements of a pair */
    int nf;         /* rotated pairs; the other elements pass through */
    int64_t seq;    /* tokens per batch entry */
    int64_t rows;   /* 1, or one row of positions per batch entry */
    int narrow;     /* hf precision on an f16/bf16 dump: round every op to o.dtype */
    float *tf;      /* (rows * seq) rows of [cos nf | sin nf] (f32 arithmetic) */
    double *td;     /* the same in double (f64 dumps) */
};

/* ---- names ---- */

static const char *const layout_names[] = { "bhsd", "bshd", "shd", "hsd", "sd", "bsf", "sf",
                                            "ggml" };
#define N_LAYOUT 8

const char *posenc_apply_layout_name(posenc_apply_layout l)
{
    return (unsigned)l < N_LAYOUT ? layout_names[l] : "?";
}

int posenc_apply_layout_seq_axis(posenc_apply_layout l)
{
    static const int seq_axis[] = { 2, 1, 0, 1, 0, 1, 0, 0 }; /* where shape_of reads seq */
    return (unsigned)l < N_LAYOUT ? seq_axis[l] : -1;
}

int posenc_apply_layout_flat(posenc_apply_layout l)
{
    return l == POSENC_APPLY_BSF || l == POSENC_APPLY_SF;
}

posenc_status posenc_apply_layout_parse(const char *s, posenc_apply_layout *out,
                                        posenc_error *err)
{
    for (int i = 0; i < N_LAYOUT; i++)
        if (strcmp(s, layout_names[i]) == 0) {
            *out = (posenc_apply_layout)i;
            return POSENC_OK;
        }
    return posenc_seterr(err, POSENC_EINVAL,
                         "unknown layout '%s' (expected bhsd, bshd, shd, hsd, sd, bsf, sf or ggml)",
                         s);
}

posenc_status posenc_apply_shape_split(posenc_apply_layout layout, int ndim, const int64_t *shape,
                                       int64_t heads, int64_t head_dim, posenc_apply_shape *out,
                                       posenc_error *err)
{
    static const int want[] = { 4, 4, 3, 3, 2, 3, 2, 3 };
    static const char *const axes[] = { "[batch, heads, seq, head_dim]",
                                        "[batch, seq, heads, head_dim]", "[seq, heads, head_dim]",
                                        "[heads, seq, head_dim]", "[seq, head_dim]",
                                        "[batch, seq, heads * head_dim]",
                                        "[seq, heads * head_dim]", "[tokens, heads, head_dim]" };
    if ((unsigned)layout >= N_LAYOUT)
        return posenc_seterr(err, POSENC_EINVAL, "invalid layout");
    if (ndim != want[layout]) {
        char buf[160];
        return posenc_seterr(err, POSENC_EMISMATCH,
                             "expected %d dims %s for layout %s, got shape %s", want[layout],
                             axes[layout], layout_names[layout],
                             posenc_shape_str(ndim, shape, buf, sizeof buf));
    }
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return posenc_seterr(err, POSENC_EFORMAT, "negative dimension");
    posenc_apply_shape s = { layout, 1, 1, 1, 1 };
    switch (layout) {
    case POSENC_APPLY_BHSD: s.batch = shape[0]; s.heads = shape[1]; s.seq = shape[2]; break;
    case POSENC_APPLY_BSHD: s.batch = shape[0]; s.seq = shape[1]; s.heads = shape[2]; break;
    case POSENC_APPLY_SHD: s.seq = shape[0]; s.heads = shape[1]; break;
    case POSENC_APPLY_HSD: s.heads = shape[0]; s.seq = shape[1]; break;
    case POSENC_APPLY_SD: s.seq = shape[0]; break;
    case POSENC_APPLY_BSF: s.batch = shape[0]; s.seq = shape[1]; break;
    case POSENC_APPLY_SF: s.seq = shape[0]; break;
    case POSENC_APPLY_GGML: /* shd's memory order: the shape says shd to every reader */
        s.layout = POSENC_APPLY_SHD; s.seq = shape[0]; s.heads = shape[1]; break;
    }
    s.head_dim = shape[ndim - 1];
    if (posenc_apply_layout_flat(layout)) {
        /* the flat axis as heads vectors of head_dim, in the unflattened layout's order */
        int64_t f = s.head_dim;
        if (heads <= 0 && head_dim <= 0)
            return posenc_seterr(err, POSENC_EINVAL, "layout %s needs the head count or "
                                 "head_dim to split its last axis", layout_names[layout]);
        if (heads > 0 ? f % heads != 0 : f % head_dim != 0)
            return posenc_seterr(err, POSENC_EMISMATCH, "last axis %lld of layout %s is not a "
                                 "multiple of %s %lld", (long long)f, layout_names[layout],
                                 heads > 0 ? "the head count" : "head_dim",
                                 (long long)(heads > 0 ? heads : head_dim));
        s.heads = heads > 0 ? heads : f / head_dim;
        s.head_dim = heads > 0 ? f / heads : head_dim;
        s.layout = layout == POSENC_APPLY_BSF ? POSENC_APPLY_BSHD : POSENC_APPLY_SHD;
    }
    *out = s;
    return POSENC_OK;
}

posenc_status posenc_apply_shape_of(posenc_apply_layout layout, int ndim, const int64_t *shape,
                                    posenc_apply_shape *out, posenc_error *err)
{
    return posenc_apply_shape_split(layout, ndim, shape, 0, 0, out, err);
}

uint64_t posenc_apply_shape_vectors(const posenc_apply_shape *s)
{
    return (uint64_t)s->batch * (uint64_t)s->heads * (uint64_t)s->seq;
}

/* n elements of src (dtype st) into float dst; f16 and bf16 through the active path's
 * kernels (lib/core/kern.c) */
static void load_f32(const pe_kern *k, float *restrict dst, const void *restrict src,
                     posenc_dtype st, size_t n)
{
    switch (st) {
    case POSENC_DT_F32:
        memcpy(dst, src, n * 4);
        break;
    case POSENC_DT_BF16:
        k->load_bf16(dst, src, n);
        break;
    case POSENC_DT_F16:
        k->load_f16(dst, src, n);
        break;
    default:
        posenc_dtype_convert(dst, POSENC_DT_F32, src, st, n);
        break;
    }
}

static void store_f32(const pe_kern *k, void *restrict dst, posenc_dtype dt,
                      const float *restrict src, size_t n)
{
    switch (dt) {
    case POSENC_DT_F32:
        memcpy(dst, src, n * 4);
        break;
    case POSENC_DT_BF16:
        k->store_bf16(dst, src, n);
        break;
    case POSENC_DT_F16:
        k->store_f16(dst, src, n);
        break;
    default:
        posenc_dtype_convert(dst, dt, src, POSENC_DT_F32, n);
        break;
    }
}

/* ---- kernels: restrict halves so the loops vectorise (the float32 ones: lib/core/kern.c) ---- */

#define KERNELS(NAME, T, R)                                                                       \
    static void rot_neox_##NAME(T *restrict x1, T *restrict x2, const T *restrict c,              \
                                const T *restrict s, int nf)                                      \
    {                                                                                             \
        BLOCKED(nf, i, PE_NEOX_BODY(T, R));                                                       \
    }                                                                                             \
    static void rot_gptj_##NAME(T *restrict x, const T *restrict c, const T *restrict s, int nf)  \
    {                                                                                             \
        BLOCKED(nf, i, PE_GPTJ_BODY(T, R));                                                       \
    }
KERNELS(f64, double, PE_R_NONE)

/* ---- construction ---- */

struct build_job {
    const posenc_rope_params *p;
    const posenc_apply_positions *pos;
    posenc_apply *a;
    int64_t r0, r1;
    const double *step; /* pe_rope_step_rows, or NULL: rows in full */
};

/* the position of table row r (one axis: an offset run, or the values of its batch row) */
static int64_t row_position(const posenc_apply *a, const posenc_apply_positions *pos, int64_t r)
{
    int64_t s = r % a->seq, row = r / a->seq;
    return pos->values ? pos->values[row * a->seq + s] : pos->offset + s;
}

/* the exact profile's float32 rows by steps (lib/encodings/rope_step.h) */
static void build_rows_stepped(const struct build_job *j)
{
    const posenc_apply *a = j->a;
    const int nf = a->nf;
    pe_rope_step st;
    pe_rope_step_init(&st, j->p, nf, j->step);
    for (int64_t r = j->r0; r < j->r1; r++) {
        float *t = a->tf + (size_t)r * 2 * (size_t)nf;
        pe_rope_step_row(&st, row_position(a, j->pos, r), t, t + nf);
        if (a->o.inverse)
            for (int i = 0; i < nf; i++)
                t[nf + i] = -t[nf + i];
    }
}

static void build_rows(const struct build_job *j)
{
    const posenc_apply *a = j->a;
    const posenc_apply_positions *pos = j->pos;
    double cf[POSENC_MAX_FREQ], sf[POSENC_MAX_FREQ];
    const pe_kern *kern = pe_kern_get();
    int nf = a->nf;
    for (int64_t r = j->r0; r < j->r1; r++) {
        if (pos->values && pos->naxes == 3) {
            int64_t s = r % a->seq, row = r / a->seq, p3[3];
            for (int ax = 0; ax < 3; ax++)
                p3[ax] = pos->values[(ax * pos->rows + row) * a->seq + s];
            posenc_rope_cossin3(j->p, a->o.precision, p3, cf, sf);
        } else {
            posenc_rope_cossin(j->p, a->o.precision, row_position(a, pos, r), cf, sf);
        }
        if (a->o.inverse)
            for (int i = 0; i < nf; i++)
                sf[i] = -sf[i];
        if (a->td) {
            double *t = a->td + (size_t)r * 2 * (size_t)nf;
            for (int i = 0; i < nf; i++) {
                t[i] = cf[i];
                t[nf + i] = sf[i];
            }
        } else {
            float *t = a->tf + (size_t)r * 2 * (size_t)nf;
            for (int i = 0; i < nf; i++) {
                t[i] = (float)cf[i];      /* exact: the one rounding; hf: already a float */
                t[nf + i] = (float)sf[i];
            }
            if (a->narrow && a->o.dtype == POSENC_DT_BF16) {
                BLOCKED(2 * (size_t)nf, i, t[i] = round_bf16(t[i]));
            } else if (a->narrow) {
                /* round_to(t, f16), through the active path's conversions (the same bits) */
                uint16_t h[2 * POSENC_MAX_FREQ];
                kern->store_f16(h, t, 2 * (size_t)nf);
                kern->load_f16(t, h, 2 * (size_t)nf);
            }
        }
    }
}

static void *build_thread(void *arg)
{
    const struct build_job *j = arg;
    if (j->step)
        build_rows_stepped(j);
    else
        build_rows(j);
    return NULL;
}

posenc_status posenc_apply_new(const posenc_rope_params *p, const posenc_apply_opts *opts,
                               const posenc_apply_positions *pos, int64_t seq, int nthreads,
                               posenc_apply **out, posenc_error *err)
{
    if (!posenc_dtype_is_float(opts->dtype))
        return posenc_seterr(err, POSENC_EINVAL, "cannot rotate %s data (need f16, bf16, f32 or f64)",
                             posenc_dtype_name(opts->dtype));
    if (p->rotary_dim <= 0 || p->rotary_dim % 2 != 0)
        return posenc_seterr(err, POSENC_EINVAL, "rotary dim %d is %s (RoPE rotates pairs)",
                             p->rotary_dim, p->rotary_dim <= 0 ? "not positive" : "odd");
    if (p->n_freq < 1 || p->n_freq > POSENC_MAX_FREQ)
        return posenc_seterr(err, POSENC_EINVAL, "%d rotary frequencies (1 to %d)", p->n_freq,
                             POSENC_MAX_FREQ);
    if (seq < 0 || pos->rows < 1 || (pos->naxes != 1 && pos->naxes != 3))
        return posenc_seterr(err, POSENC_EINVAL, "invalid positions");
    const pe_profile *prof = pe_profile_get(opts->precision);
    unsigned pf = prof ? prof->flags : 0;
    if ((pf & PF_GGML) && !p->has_ggml)
        return posenc_seterr(err, POSENC_EINVAL,
                             "the ggml precision needs llama.cpp's RoPE arguments for the model");
    if (pos->naxes == 3 && !p->mrope)
        return posenc_seterr(err, POSENC_EINVAL,
                             "3-axis positions need a multimodal (mrope) RoPE config");
    if (pos->values) {
        uint64_t cnt = (uint64_t)pos->naxes * (uint64_t)pos->rows * (uint64_t)seq;
        for (uint64_t i = 0; i < cnt; i++)
            if (pos->values[i] < 0 || pos->values[i] >= INT64_C(1) << 31)
                return posenc_seterr(err, POSENC_ERANGE,
                                     "position %lld at index %llu is outside [0, 2^31)",
                                     (long long)pos->values[i], (unsigned long long)i);
    } else if (pos->offset < 0 || pos->offset + seq > INT64_C(1) << 31) {
        return posenc_seterr(err, POSENC_ERANGE, "positions %lld to %lld are outside [0, 2^31)",
                             (long long)pos->offset, (long long)(pos->offset + seq - 1));
    }

    int head_dim = p->head_dim, half = p->n_freq, nf = p->n_freq;
    const pe_rope_type *rt = pe_rope_type_get(p->type);
    if (rt && rt->width == RW_HEAD) {
        /* the table spans the whole head; trailing zero frequencies are identity pairs */
        int width = posenc_rope_table_width(p, POSENC_LAYOUT_HF);
        if (width >= 2 * nf)
            head_dim = width, half = width / 2;
        while (nf > 0 && p->inv_hi[nf - 1] == 0.0 && p->inv_lo[nf - 1] == 0.0)
            nf--;
        if (nf == 0)
            nf = 1; /* keep a table; a zero frequency rotates by nothing */
    }
    if (head_dim > 4096)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "head_dim %d is larger than 4096",
                             head_dim);
    if (head_dim < 2 * half)
        return posenc_seterr(err, POSENC_EINVAL, "rotary dim %d exceeds head_dim %d",
                             2 * half, head_dim);

    posenc_apply *a = calloc(1, sizeof *a);
    if (!a)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    a->o = *opts;
    a->style = p->style;
    a->head_dim = head_dim;
    a->half = half;
    a->nf = nf;
    a->seq = seq;
    a->rows = pos->rows;
    a->narrow = (pf & PF_NARROW) &&
                (opts->dtype == POSENC_DT_BF16 || opts->dtype == POSENC_DT_F16);
    uint64_t nrows = (uint64_t)pos->rows * (uint64_t)seq;
    /* ggml rotates in float32 whatever the dump (ops.cpp rotate_pairs converts f16 to f32) */
    size_t es = opts->dtype == POSENC_DT_F64 && !(pf & PF_GGML) ? 8 : 4;
    if (nrows > (uint64_t)SIZE_MAX / (2 * (size_t)nf * es) - 1) {
        free(a);
        return posenc_seterr(err, POSENC_ERANGE, "position table too large");
    }
    size_t bytes = (size_t)(nrows ? nrows : 1) * 2 * (size_t)nf * es;
    if (es == 8)
        a->td = malloc(bytes);
    else
        a->tf = malloc(bytes);
    if (!a->td && !a->tf) {
        free(a);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory for a %zu-byte position table",
                             bytes);
    }

    if (nthreads < 1)
        nthreads = 1;
    if (nthreads > 64)
        nthreads = 64;
    if ((uint64_t)nthreads > nrows / 256 + 1)
        nthreads = (int)(nrows / 256 + 1);
    /* the exact profile's float32 rows (posenc_rope_cossin falls back to it on an unknown
     * precision) by steps, when there are rows enough to pay for the PE_STEP_K rows of d */
    double *step = NULL;
    if ((!prof || opts->precision == POSENC_PREC_EXACT) && a->tf && !a->narrow &&
        pos->naxes == 1 && nrows >= 4 * PE_STEP_K)
        step = pe_rope_step_rows(p, nf); /* NULL (out of memory): rows in full */
    struct build_job jobs[64];
    pthread_t tid[64];
    int running[64] = { 0 };
    for (int t = 0; t < nthreads; t++)
        jobs[t] = (struct build_job){ p, pos, a,
                                      (int64_t)(nrows * (uint64_t)t / (uint64_t)nthreads),
                                      (int64_t)(nrows * (uint64_t)(t + 1) / (uint64_t)nthreads),
                                      step };
    for (int t = 1; t < nthreads; t++)
        running[t] = pthread_create(&tid[t], NULL, build_thread, &jobs[t]) == 0;
    build_thread(&jobs[0]);
    for (int t = 1; t < nthreads; t++) {
        if (running[t])
            pthread_join(tid[t], NULL);
        else
            build_thread(&jobs[t]); /* no thread: do its share here */
    }
    free(step);
    *out = a;
    return POSENC_OK;
}

void posenc_apply_free(posenc_apply *a)
{
    if (!a)
        return;
    free(a->tf);
    free(a->td);
    free(a);
}

int posenc_apply_head_dim(const posenc_apply *a) { return a->head_dim; }

posenc_status posenc_apply_check(const posenc_apply *a, const posenc_apply_shape *s,
                                 posenc_error *err)
{
    if (s->head_dim != a->head_dim)
        return posenc_seterr(err, POSENC_EMISMATCH,
                             "head_dim %lld does not match the config's head_dim %d",
                             (long long)s->head_dim, a->head_dim);
    if (s->seq != a->seq)
        return posenc_seterr(err, POSENC_EMISMATCH, "seq %lld does not match %lld positions",
                             (long long)s->seq, (long long)a->seq);
    if (a->rows != 1 && s->batch != a->rows)
        return posenc_seterr(err, POSENC_EMISMATCH,
                             "batch %lld does not match %lld rows of positions",
                             (long long)s->batch, (long long)a->rows);
    return POSENC_OK;
}

/* ---- rotation ---- */

#define VEC_MAX 4096 /* elements in the stack block buffers (head_dim at most this) */

/* rotate m vectors of D values held in x (f32 arithmetic) */
static void rotate_block_f32(const pe_kern *kern, const posenc_apply *a, float *x, size_t D,
                             size_t m, const uint64_t *rows)
{
    const int nf = a->nf, half = a->half, gptj = a->style == POSENC_STYLE_GPTJ;
    for (size_t k = 0; k < m; k++) {
        float *v = x + k * D;
        const float *c = a->tf + rows[k] * 2 * (uint64_t)nf, *sn = c + nf;
        if (a->narrow && a->o.dtype == POSENC_DT_BF16) {
            if (gptj)
                kern->gptj_bf16(v, c, sn, nf);
            else
                kern->neox_bf16(v, v + half, c, sn, nf);
        } else if (a->narrow) {
            if (gptj)
                kern->gptj_f16(v, c, sn, nf);
            else
                kern->neox_f16(v, v + half, c, sn, nf);
        } else if (gptj) {
            kern->gptj_f32(v, c, sn, nf);
        } else {
            kern->neox_f32(v, v + half, c, sn, nf);
        }
    }
}

static void rotate_block_f64(const posenc_apply *a, double *x, size_t D, size_t m,
                             const uint64_t *rows)
{
    const int nf = a->nf, half = a->half;
    for (size_t k = 0; k < m; k++) {
        double *v = x + k * D;
        const double *c = a->td + rows[k] * 2 * (uint64_t)nf, *sn = c + nf;
        if (a->style == POSENC_STYLE_GPTJ)
            rot_gptj_f64(v, c, sn, nf);
        else
            rot_neox_f64(v, v + half, c, sn, nf);
    }
}

void posenc_apply_rows(const posenc_apply *a, const posenc_apply_shape *sh, uint64_t first,
                       uint64_t n, const void *in, posenc_dtype in_dt, void *out,
                       posenc_dtype out_dt)
{
    const size_t D = (size_t)a->head_dim, ies = posenc_dtype_size(in_dt),
                 oes = posenc_dtype_size(out_dt);
    const uint64_t seq = (uint64_t)sh->seq, heads = (uint64_t)sh->heads;
    const int inner = sh->layout == POSENC_APPLY_BSHD || sh->layout == POSENC_APPLY_SHD;
    if (D == 0 || D > VEC_MAX || seq == 0 || heads == 0)
        return;
    const size_t sub = VEC_MAX / D; /* vectors per block */
    const pe_kern *kern = pe_kern_get();
    uint64_t rows[VEC_MAX];
    /* in place (or same-type copy) for f32 and f64: no conversion at all */
    const int direct = in_dt == out_dt && ((in_dt == POSENC_DT_F32 && !a->td) ||
                                           (in_dt == POSENC_DT_F64 && a->td));
    /* the active path's fused pass (lib/core/cpu_internal.h pe_rot_job): f32, f16 and bf16
     * rotated in registers, one dtype in and out, no float buffer */
    const int round = a->narrow ? (int)a->o.dtype : POSENC_DT_F32;
    const int fused = kern->rot_rows && in_dt == out_dt && !a->td &&
                      (in_dt == POSENC_DT_F32 || in_dt == POSENC_DT_F16 ||
                       in_dt == POSENC_DT_BF16) &&
                      (round == POSENC_DT_F32 || round == (int)in_dt);
    /* elements the rotation leaves alone, which the fused pass does not write */
    const int passthrough = a->style == POSENC_STYLE_GPTJ
                                ? 2 * (size_t)a->nf < D
                                : a->nf < a->half || 2 * (size_t)a->half < D;
    /* vector first's batch entry b, token s and head h, then stepped vector by vector (three
     * divisions per call, not per vector) */
    uint64_t b = first / (heads * seq), s = inner ? (first / heads) % seq : first % seq,
             h = inner ? first % heads : (first / seq) % heads;
    for (uint64_t j0 = 0; j0 < n; j0 += sub) {
        size_t m = (size_t)(n - j0 < sub ? n - j0 : sub);
        for (size_t k = 0; k < m; k++) {
            rows[k] = (a->rows == 1 ? 0 : b) * seq + s;
            if (inner) { /* [batch, seq, heads] */
                if (++h == heads) {
                    h = 0;
                    if (++s == seq)
                        s = 0, b++;
                }
            } else if (++s == seq) { /* [batch, heads, seq] */
                s = 0;
                if (++h == heads)
                    h = 0, b++;
            }
        }
        const unsigned char *src = (const unsigned char *)in + j0 * D * ies;
        unsigned char *dst = (unsigned char *)out + j0 * D * oes;
        if (fused) {
            const float *cs[VEC_MAX];
            for (size_t k = 0; k < m; k++)
                cs[k] = a->tf + rows[k] * 2 * (uint64_t)a->nf;
            if (src != dst && passthrough) {
                memcpy(dst, src, m * D * ies);
                src = dst;
            }
            const pe_rot_job job = { (int)in_dt, round, a->style == POSENC_STYLE_GPTJ,
                                     a->nf, a->half, D, m, src, dst, cs };
            kern->rot_rows(&job);
        } else if (direct) {
            if (src != dst)
                memcpy(dst, src, m * D * ies);
            if (a->td)
                rotate_block_f64(a, (double *)(void *)dst, D, m, rows);
            else
                rotate_block_f32(kern, a, (float *)(void *)dst, D, m, rows);
        } else if (a->td) {
            double xd[VEC_MAX];
            posenc_dtype_convert(xd, POSENC_DT_F64, src, in_dt, m * D);
            rotate_block_f64(a, xd, D, m, rows);
            posenc_dtype_convert(dst, out_dt, xd, POSENC_DT_F64, m * D);
        } else {
            float xf[VEC_MAX];
            load_f32(kern, xf, src, in_dt, m * D);
            rotate_block_f32(kern, a, xf, D, m, rows);
            store_f32(kern, dst, out_dt, xf, m * D);
        }
    }
}
