/* verify_diagnose.c: the diagnosis of RoPE mistakes (posenc_verify_diagnose, see
 * posenc/verify.h): the per-pair angles and the estimates of theta, shift and magnitude from
 * the sampled rows, one table of {name, mutate, explain} rules for the usual mistakes, and the
 * explanation of the best fit. Computation only. The rotation, the invariance checks and the
 * row comparison it builds on are in verify.c; verify_rot.h has the pair layout both use. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/verify.h"
#include "lib/verify/verify_rot.h"

/* ---- diagnosis ---- */

int posenc_verify_pair_angle(posenc_style style, int rotary_dim, int i, const double *pre,
                             const double *expected, double *angle, double *ratio)
{
    int n = rotary_dim / 2, a, b;
    if (i < 0 || i >= n)
        return 0;
    pe_pair_index(style, n, i, &a, &b);
    double x = pre[a], y = pre[b], u = expected[a], v = expected[b];
    double r0 = hypot(x, y), r1 = hypot(u, v);
    if (!(r0 > 1e-20) || !(r1 > 1e-20))
        return 0;
    /* (u, v) = s R(phi) (x, y): cross = r0 r1 sin(phi), dot = r0 r1 cos(phi) */
    *angle = atan2(x * v - y * u, x * u + y * v);
    *ratio = r1 / r0;
    return 1;
}

double posenc_verify_fit_theta(const double *inv, const unsigned char *ok, int n, int exp_dim)
{
    /* ln inv_i = -(2i/D) ln theta: least squares through the origin in x = 2i/D */
    double sxy = 0, sxx = 0;
    int cnt = 0;
    for (int i = 1; i < n; i++) {
        if (!ok[i] || !(inv[i] > 0))
            continue;
        double x = 2.0 * i / exp_dim, y = log(inv[i]);
        sxy += x * y;
        sxx += x * x;
        cnt++;
    }
    if (cnt < 2 || !(sxx > 0))
        return 0;
    return exp(-sxy / sxx);
}

struct diag_ctx {
    const posenc_verify_tolerance *t;
    const posenc_verify_recipe *numerics; /* NULL, or the runtime whose drift is allowed */
    const posenc_verify_recipe *exact;    /* the config's exact recipe (for that drift) */
    const posenc_verify_sample *rows;
    size_t n;
};

static void eval_recipe(const struct diag_ctx *c, const posenc_verify_recipe *r, double *rel,
                        double *ratio)
{
    double wr = 0, wq = 0;
    int nf = r->params.n_freq;
    double slack[POSENC_MAX_FREQ];
    posenc_verify_tolerance t = *c->t;
    t.slack = slack;
    if (c->numerics) /* llama.cpp's theta, accumulated by i multiplications in float32 */
        t.angle_acc = 2;
    /* a candidate that rounds the tables or the angle to 16 bits is allowed one step of it */
    double s16 = pe_recipe_step16(r);
    for (size_t s = 0; s < c->n; s++) {
        for (int i = 0; i < nf; i++)
            slack[i] = s16;
        if (c->numerics && c->numerics->params.n_freq == c->exact->params.n_freq) {
            /* the runtime's own drift from exact math at this position, frequency by frequency */
            double nc[POSENC_MAX_FREQ], ns[POSENC_MAX_FREQ], ec[POSENC_MAX_FREQ],
                ex[POSENC_MAX_FREQ];
            posenc_verify_recipe_cossin(c->numerics, c->rows[s].pos, nc, ns);
            posenc_verify_recipe_cossin(c->exact, c->rows[s].pos, ec, ex);
            for (int i = 0; i < nf && i < c->exact->params.n_freq; i++) {
                double d = fmax(fabs(nc[i] - ec[i]), fabs(ns[i] - ex[i]));
                slack[i] += d == d ? d : 0;
            }
        }
        posenc_verify_row_result o;
        posenc_verify_row_check(r, &t, c->rows[s].pos, NULL, NULL, c->rows[s].pre,
                                c->rows[s].expected, &o);
        if (o.rel_err > wr || o.rel_err != o.rel_err)
            wr = o.rel_err;
        if (o.ratio > wq || o.ratio != o.ratio)
            wq = o.ratio;
    }
    *rel = wr;
    *ratio = wq;
}

static double round_sig(double x, int digits)
{
    if (!(x > 0))
        return x;
    double e = floor(log10(x)) - (digits - 1), f = pow(10.0, e);
    return round(x / f) * f;
}

static int add_cand(posenc_diagnosis *d, const struct diag_ctx *c, const posenc_verify_recipe *r,
                    const char *name, const char *desc)
{
    if (d->n_cand >= POSENC_VERIFY_MAX_CANDIDATES)
        return -1;
    posenc_diag_candidate *k = &d->cand[d->n_cand];
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(k->description, sizeof k->description, "%s", desc);
    eval_recipe(c, r, &k->max_rel_err, &k->ratio);
    k->explains = k->ratio <= 1.0;
    return d->n_cand++;
}

/* Build a recipe for a modified config; returns 0 when the config is not computable. */
static int cfg_recipe(const posenc_rope_config *cfg, int64_t seq_len, posenc_verify_recipe *r)
{
    posenc_rope_params p;
    if (posenc_rope_params_compute(cfg, seq_len, &p, NULL) != POSENC_OK)
        return 0;
    posenc_verify_recipe_init(r, &p);
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Estimate the true position of a row from the angles of the config's frequencies, slowest
 * first, unwrapping as the precision grows. -1 when nothing could be measured. */
static double estimate_position(const posenc_rope_params *p, const double *pre,
                                const double *expected)
{
    int rd = pe_rot_width(p), n = rd / 2;
    double est = -1;
    for (int i = n - 1; i >= 0; i--) {
        double inv = p->inv_hi[i];
        double ang, ratio;
        if (!(inv > 0) || !posenc_verify_pair_angle(p->style, rd, i, pre, expected, &ang, &ratio))
            continue;
        if (ang < 0)
            ang += 2 * M_PI;
        if (est < 0) {
            est = ang / inv;
            continue;
        }
        double k = round((est * inv - ang) / (2 * M_PI));
        est = (ang + 2 * M_PI * k) / inv;
    }
    return est;
}

/* What a candidate's mutation sees: the config, its parameters, the recipe posenc checks with,
 * the sampled rows and what has been measured and tried so far. */
struct diag_env {
    const posenc_rope_config *cfg;
    int64_t seq_len;
    const posenc_rope_params *bp;
    const posenc_verify_recipe *base;
    const posenc_verify_sample *rows;
    size_t n_rows;
    const posenc_diagnosis *d;
    const char *what;
    int64_t *shifts;            /* n_rows values of scratch */
};

enum { CAND_END = -1, CAND_SKIP = 0, CAND_TRY = 1 };

static int estimate_shift(const posenc_rope_params *bp, const posenc_verify_sample *rows,
                          size_t n_rows, int64_t *shifts, int64_t *shift);

/* A hypothesised mistake: variant v (0, 1, ...) of the mutation fills the recipe that builds the
 * expected rows under that mistake and its description; CAND_SKIP when the variant does not
 * apply to this config, CAND_END after the last variant. */
typedef int (*cand_mutate)(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                           size_t len);
/* The one-line explanation when the candidate is the best explanation. */
typedef void (*cand_explain)(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                             size_t len);

static const char *style_word(posenc_style s) { return s == POSENC_STYLE_GPTJ ? "gptj" : "neox"; }

static int found_explaining(const posenc_diagnosis *d, const char *name)
{
    for (int i = 0; i < d->n_cand; i++)
        if (d->cand[i].explains && strcmp(d->cand[i].name, name) == 0)
            return 1;
    return 0;
}

/* The config with another rotary width. Positions are one-dimensional in a dump, where mrope
 * (all of t, h, w equal) is plain RoPE with the same frequencies (transformers
 * models/qwen2_vl/modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb, qwen3_vl
 * apply_interleaved_mrope): its sections, which must sum to rotary_dim / 2, are dropped. */
static int width_recipe(const struct diag_env *e, int rotary_dim, int exponent_dim,
                        posenc_verify_recipe *r)
{
    posenc_rope_config cc = *e->cfg;
    cc.rotary_dim = rotary_dim;
    cc.exponent_dim = exponent_dim;
    cc.partial_rotary_factor = (double)rotary_dim / cc.head_dim;
    cc.n_mrope_section = 0;
    cc.mrope_interleaved = 0;
    return cfg_recipe(&cc, e->seq_len, r);
}

static int mut_not_rotated(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                           size_t len)
{
    if (v > 0)
        return CAND_END;
    *r = *e->base;
    r->no_rotation = 1;
    snprintf(desc, len, "not rotated (the rows equal the pre-RoPE rows)");
    return CAND_TRY;
}

static int mut_style(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                     size_t len)
{
    if (v > 0)
        return CAND_END;
    *r = *e->base;
    r->params.style = e->bp->style == POSENC_STYLE_GPTJ ? POSENC_STYLE_NEOX : POSENC_STYLE_GPTJ;
    snprintf(desc, len, "--style %s", style_word(r->params.style));
    return CAND_TRY;
}

static int mut_full_head(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                         size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->rotary_dim >= c->head_dim)
        return CAND_END;
    if (!width_recipe(e, c->head_dim, c->head_dim, r))
        return CAND_SKIP;
    snprintf(desc, len, "full-head rotation (rotary_dim %d instead of %d)", c->head_dim,
             c->rotary_dim);
    return CAND_TRY;
}

static int mut_exponent(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                        size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->rotary_dim >= c->head_dim || c->exponent_dim == c->head_dim)
        return CAND_END;
    if (!width_recipe(e, c->rotary_dim, c->head_dim, r))
        return CAND_SKIP;
    snprintf(desc, len, "exponent over head_dim (theta^(-2i/%d)) on rotary_dim %d", c->head_dim,
             c->rotary_dim);
    return CAND_TRY;
}

static int mut_partial(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                       size_t len)
{
    const posenc_rope_config *c = e->cfg;
    int div = 2 << v; /* a half, then a quarter of the head */
    if (c->rotary_dim < c->head_dim || div > 4)
        return CAND_END;
    if (c->head_dim % (2 * div) || !width_recipe(e, c->head_dim / div, c->head_dim / div, r))
        return CAND_SKIP;
    snprintf(desc, len, "partial rotary applied (rotary_dim %d of %d)", c->head_dim / div,
             c->head_dim);
    return CAND_TRY;
}

/* theta variant v (the estimate, then the common values) */
static int theta_of(const struct diag_env *e, int v, double *th)
{
    static const double common[] = { 1e4, 1e5, 5e5, 1e6, 5e6, 1e7 };
    const int nc = (int)(sizeof common / sizeof common[0]);
    double est = e->d->theta_estimate > 1.0 ? round_sig(e->d->theta_estimate, 3) : 0;
    if (v > nc)
        return CAND_END;
    *th = v == 0 ? est : common[v - 1];
    if (!(*th > 0) || (v > 0 && *th == est))
        return CAND_SKIP;
    return CAND_TRY;
}

static int mut_theta(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                     size_t len)
{
    double th;
    int k = theta_of(e, v, &th);
    if (k != CAND_TRY)
        return k;
    if (fabs(th - e->cfg->theta) <= 1e-9 * e->cfg->theta)
        return CAND_SKIP;
    posenc_rope_config cc = *e->cfg;
    cc.theta = th;
    if (!cfg_recipe(&cc, e->seq_len, r))
        return CAND_SKIP;
    if (v == 0)
        snprintf(desc, len, "theta %.6g (estimated %.6g from per-pair angles)", th,
                 e->d->theta_estimate);
    else
        snprintf(desc, len, "theta %.6g", th);
    return CAND_TRY;
}

/* Positions off by a constant: only when no rotation at all and no full-head rotation explains
 * the rows (either makes the angle-based estimate meaningless: a row that was not rotated looks
 * like position 0, i.e. "shifted by -pos"), and only when every shifted position exists. */
static int mut_offset(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                      size_t len)
{
    if (v > 0 || !e->d->shift_valid || e->d->shift_estimate == 0)
        return CAND_END;
    if (found_explaining(e->d, "not_rotated") || found_explaining(e->d, "rotary_dim_full"))
        return CAND_END;
    for (size_t s = 0; s < e->n_rows; s++)
        if (e->rows[s].pos + e->d->shift_estimate < 0)
            return CAND_END;
    *r = *e->base;
    r->shift = e->d->shift_estimate;
    snprintf(desc, len, "positions shifted by %+lld", (long long)r->shift);
    return CAND_TRY;
}

static int mut_scaling_ignored(const struct diag_env *e, int v, posenc_verify_recipe *r,
                               char *desc, size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->type == POSENC_ROPE_DEFAULT)
        return CAND_END;
    posenc_rope_config cc = *c;
    cc.type = POSENC_ROPE_DEFAULT;
    cc.factor = 1.0;
    cc.has_attention_factor = 0;
    cc.mscale = cc.mscale_all_dim = 0;
    if (!cfg_recipe(&cc, e->seq_len, r))
        return CAND_SKIP;
    snprintf(desc, len, "plain RoPE (rope_type default, theta %.6g): %s scaling ignored", c->theta,
             posenc_rope_type_name(c->type));
    return CAND_TRY;
}

static int mut_longrope(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                        size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->type != POSENC_ROPE_LONGROPE)
        return CAND_END;
    /* the other factor set: short ones at length 0, long ones past original_max */
    int64_t other = e->bp->long_factors ? 0 : c->original_max_position_embeddings + 1;
    if (!cfg_recipe(c, other, r))
        return CAND_SKIP;
    snprintf(desc, len, "longrope %s factors", e->bp->long_factors ? "short" : "long");
    return CAND_TRY;
}

static int mut_dynamic_base(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                            size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->type != POSENC_ROPE_DYNAMIC || e->seq_len <= 0)
        return CAND_END;
    if (!cfg_recipe(c, 0, r))
        return CAND_SKIP;
    snprintf(desc, len, "dynamic NTK base of the original length (theta %.6g)", c->theta);
    return CAND_TRY;
}

static int mut_attention_missing(const struct diag_env *e, int v, posenc_verify_recipe *r,
                                 char *desc, size_t len)
{
    double a = e->bp->attention_scaling;
    if (v > 0 || fabs(a - 1.0) <= 1e-9)
        return CAND_END;
    *r = *e->base;
    r->scale = 1.0 / a;
    snprintf(desc, len, "attention scaling %.6g missing", a);
    return CAND_TRY;
}

static int mut_magnitude(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                         size_t len)
{
    double a = e->bp->attention_scaling, m = e->d->scale_estimate;
    if (v > 0 || !(m > 0) || !(a > 0))
        return CAND_END;
    double f = m / a;
    /* a constant factor that is not just the missing attention scaling */
    if (!(fabs(f - 1.0) > 1e-4 && (fabs(a - 1.0) <= 1e-9 || fabs(m - 1.0) > 1e-4)))
        return CAND_END;
    *r = *e->base;
    r->scale = f;
    snprintf(desc, len, "magnitudes off by a constant factor %.6g", f);
    return CAND_TRY;
}

/* the tables (angle 0) or the angle (angle 1) rounded to the 16-bit dtype dt */
static int mut_16(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc, size_t len,
                  posenc_dtype dt, int angle)
{
    const char *n = posenc_dtype_name(dt);
    if (v > 0)
        return CAND_END;
    *r = *e->base;
    if (angle) {
        r->angle_dtype = dt;
        snprintf(desc, len, "angles computed in %s (positions and inv_freq cast to %s)", n, n);
    } else {
        r->table_dtype = dt;
        snprintf(desc, len, "cos/sin tables rounded to %s", n);
    }
    return CAND_TRY;
}

static int mut_bf16(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                    size_t len)
{
    return mut_16(e, v, r, desc, len, POSENC_DT_BF16, 0);
}

static int mut_f16(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                   size_t len)
{
    return mut_16(e, v, r, desc, len, POSENC_DT_F16, 0);
}

static int mut_angle_bf16(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                          size_t len)
{
    return mut_16(e, v, r, desc, len, POSENC_DT_BF16, 1);
}

static int mut_angle_f16(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                         size_t len)
{
    return mut_16(e, v, r, desc, len, POSENC_DT_F16, 1);
}

/* ---- compounds: tried only when no single mistake explains the rows ---- */

static int any_explains(const posenc_diagnosis *d)
{
    for (int i = 0; i < d->n_cand; i++)
        if (d->cand[i].explains)
            return 1;
    return 0;
}

static int mut_theta_scaling(const struct diag_env *e, int v, posenc_verify_recipe *r,
                             char *desc, size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (c->type == POSENC_ROPE_DEFAULT || any_explains(e->d))
        return CAND_END;
    double th;
    int k = theta_of(e, v, &th);
    if (k != CAND_TRY)
        return k;
    if (fabs(th - c->theta) <= 1e-9 * c->theta)
        return CAND_SKIP;
    posenc_rope_config cc = *c;
    cc.type = POSENC_ROPE_DEFAULT;
    cc.factor = 1.0;
    cc.has_attention_factor = 0;
    cc.mscale = cc.mscale_all_dim = 0;
    cc.theta = th;
    if (!cfg_recipe(&cc, e->seq_len, r))
        return CAND_SKIP;
    snprintf(desc, len, "plain RoPE with theta %.6g: theta wrong and %s scaling ignored", th,
             posenc_rope_type_name(c->type));
    return CAND_TRY;
}

static int mut_theta_offset(const struct diag_env *e, int v, posenc_verify_recipe *r,
                            char *desc, size_t len)
{
    if (any_explains(e->d))
        return CAND_END;
    double th;
    int k = theta_of(e, v, &th);
    if (k != CAND_TRY)
        return k;
    if (fabs(th - e->cfg->theta) <= 1e-9 * e->cfg->theta)
        return CAND_SKIP;
    posenc_rope_config cc = *e->cfg;
    cc.theta = th;
    int64_t shift;
    if (!cfg_recipe(&cc, e->seq_len, r) ||
        !estimate_shift(&r->params, e->rows, e->n_rows, e->shifts, &shift) || shift == 0)
        return CAND_SKIP;
    for (size_t s = 0; s < e->n_rows; s++)
        if (e->rows[s].pos + shift < 0)
            return CAND_SKIP;
    r->shift = shift;
    snprintf(desc, len, "theta %.6g and positions shifted by %+lld", th, (long long)shift);
    return CAND_TRY;
}

static int mut_style_full(const struct diag_env *e, int v, posenc_verify_recipe *r, char *desc,
                          size_t len)
{
    const posenc_rope_config *c = e->cfg;
    if (v > 0 || c->rotary_dim >= c->head_dim || any_explains(e->d))
        return CAND_END;
    if (!width_recipe(e, c->head_dim, c->head_dim, r))
        return CAND_SKIP;
    r->params.style = e->bp->style == POSENC_STYLE_GPTJ ? POSENC_STYLE_NEOX : POSENC_STYLE_GPTJ;
    snprintf(desc, len, "--style %s on the full head (rotary_dim %d instead of %d)",
             style_word(r->params.style), c->head_dim, c->rotary_dim);
    return CAND_TRY;
}

/* ---- explanations ---- */

static void exp_not_rotated(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                            size_t len)
{
    snprintf(out, len,
             "%s is not rotated: it equals the pre-RoPE rows (max rel err %.3g); the config "
             "implies %s RoPE on %d of %d dims",
             e->what, b->max_rel_err, style_word(e->bp->style), 2 * e->bp->n_freq,
             e->cfg->head_dim);
}

static void exp_style(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                      size_t len)
{
    snprintf(out, len, "%s matches with %s (max rel err %.3g); the config implies %s", e->what,
             b->description, b->max_rel_err, style_word(e->bp->style));
}

static void exp_full_head(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                          size_t len)
{
    snprintf(out, len,
             "%s matches with a full-head rotation (all %d dims, max rel err %.3g); the config "
             "implies partial rotary: rotary_dim %d of head_dim %d",
             e->what, e->cfg->head_dim, b->max_rel_err, e->cfg->rotary_dim, e->cfg->head_dim);
}

static void exp_width(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                      size_t len)
{
    snprintf(out, len,
             "%s matches with the %s (max rel err %.3g); the config implies rotary_dim %d of "
             "head_dim %d",
             e->what, b->description, b->max_rel_err, e->cfg->rotary_dim, e->cfg->head_dim);
}

static void exp_theta(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                      size_t len)
{
    snprintf(out, len, "%s matches with %s (max rel err %.3g); the config implies theta %.6g",
             e->what, b->description, b->max_rel_err, e->cfg->theta);
}

static void exp_offset(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                       size_t len)
{
    snprintf(out, len,
             "%s matches with positions shifted by %+lld (max rel err %.3g); the dump's "
             "positions are off by that much (see --offset, --positions)",
             e->what, (long long)e->d->shift_estimate, b->max_rel_err);
}

static void exp_scaling(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                        size_t len)
{
    snprintf(out, len, "%s matches with %s (max rel err %.3g); the config implies %s", e->what,
             b->description, b->max_rel_err, posenc_rope_type_name(e->cfg->type));
}

static void exp_magnitude(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                          size_t len)
{
    snprintf(out, len,
             "%s matches with %s (max rel err %.3g); the config implies %s with its attention "
             "scaling",
             e->what, b->description, b->max_rel_err, posenc_rope_type_name(e->cfg->type));
}

static void exp_tables(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                       size_t len)
{
    snprintf(out, len,
             "%s matches with %s (max rel err %.3g); the config implies %s with float32 tables",
             e->what, b->description, b->max_rel_err, posenc_rope_type_name(e->cfg->type));
}

static void exp_compound(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                         size_t len)
{
    snprintf(out, len, "%s matches with two mistakes at once: %s (max rel err %.3g); the config "
             "implies %s, theta %.6g, %s pairing on %d of %d dims", e->what, b->description,
             b->max_rel_err, posenc_rope_type_name(e->cfg->type), e->cfg->theta,
             style_word(e->bp->style), e->cfg->rotary_dim, e->cfg->head_dim);
}

static void exp_angle(const struct diag_env *e, const posenc_diag_candidate *b, char *out,
                      size_t len)
{
    snprintf(out, len, "%s matches with %s (max rel err %.3g); the angle must be computed in "
             "float32 (inv_freq kept in float32, autocast off)", e->what, b->description,
             b->max_rel_err);
}

/* The usual mistakes, tried in this order; on equal fit the earlier one is named, so "not
 * rotated" (the simplest) comes first. */
static const struct diag_rule {
    const char *name;
    cand_mutate mutate;
    cand_explain explain;
} diag_rules[] = {
    { "not_rotated", mut_not_rotated, exp_not_rotated },
    { "style_swapped", mut_style, exp_style },
    { "rotary_dim_full", mut_full_head, exp_full_head },
    { "rotary_dim_exponent", mut_exponent, exp_width },
    { "rotary_dim_partial", mut_partial, exp_width },
    { "theta", mut_theta, exp_theta },
    { "offset", mut_offset, exp_offset },
    { "scaling_ignored", mut_scaling_ignored, exp_scaling },
    { "longrope_factors", mut_longrope, exp_scaling },
    { "dynamic_base", mut_dynamic_base, exp_scaling },
    { "attention_scaling_missing", mut_attention_missing, exp_magnitude },
    { "magnitude", mut_magnitude, exp_magnitude },
    { "tables_bf16", mut_bf16, exp_tables },
    { "tables_f16", mut_f16, exp_tables },
    { "angle_bf16", mut_angle_bf16, exp_angle },
    { "angle_f16", mut_angle_f16, exp_angle },
    { "theta+scaling_ignored", mut_theta_scaling, exp_compound },
    { "theta+offset", mut_theta_offset, exp_compound },
    { "style_swapped+rotary_dim_full", mut_style_full, exp_compound },
};

/* The most common position shift over the rows under parameters bp, when it covers at least
 * half of them (and two rows when there are two or more): a row that was not rotated at all
 * implies position 0, a different "shift" per row, which is no shift. Returns 1 with *shift set,
 * else 0. shifts holds n_rows values. */
static int estimate_shift(const posenc_rope_params *bp, const posenc_verify_sample *rows,
                          size_t n_rows, int64_t *shifts, int64_t *shift)
{
    size_t ns = 0;
    for (size_t s = 0; s < n_rows; s++) {
        double e = estimate_position(bp, rows[s].pre, rows[s].expected);
        if (e >= 0)
            shifts[ns++] = (int64_t)llround(e) - rows[s].pos;
    }
    if (!ns)
        return 0;
    qsort(shifts, ns, sizeof *shifts, cmp_i64);
    size_t bi = 0, bl = 0;
    for (size_t i = 0; i < ns;) {
        size_t j = i;
        while (j < ns && shifts[j] == shifts[i])
            j++;
        if (j - i > bl) {
            bl = j - i;
            bi = i;
        }
        i = j;
    }
    if (2 * bl >= n_rows && (bl >= 2 || n_rows == 1)) {
        *shift = shifts[bi];
        return 1;
    }
    return 0;
}

posenc_status posenc_verify_diagnose(const posenc_rope_config *cfg, int64_t seq_len,
                                     const posenc_verify_tolerance *t,
                                     const posenc_verify_recipe *numerics,
                                     const posenc_verify_sample *rows, size_t n_rows,
                                     const char *what, posenc_diagnosis *out, posenc_error *err)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    if (n_rows == 0)
        return posenc_seterr(err, POSENC_EINVAL, "no sampled rows to diagnose");
    posenc_verify_recipe base;
    posenc_rope_params bp;
    posenc_status st = posenc_rope_params_compute(cfg, seq_len, &bp, err);
    if (st != POSENC_OK)
        return st;
    posenc_verify_recipe_init(&base, &bp);
    int rd = pe_rot_width(&bp), n = rd / 2;
    double *tmp = malloc(sizeof(double) * (n_rows + 1));
    int64_t *shifts = malloc(sizeof(int64_t) * (n_rows + 1));
    if (!tmp || !shifts) {
        free(tmp);
        free(shifts);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    struct diag_ctx c = { t, numerics, &base, rows, n_rows };
    eval_recipe(&c, &base, &out->config_rel_err, &out->config_ratio);

    /* magnitude: |expected| / |pre| over the rotated dims, median over rows */
    size_t nm = 0;
    for (size_t s = 0; s < n_rows; s++) {
        double a = 0, b = 0;
        for (int j = 0; j < rd; j++) {
            a += rows[s].expected[j] * rows[s].expected[j];
            b += rows[s].pre[j] * rows[s].pre[j];
        }
        if (b > 0)
            tmp[nm++] = sqrt(a / b);
    }
    if (nm) {
        qsort(tmp, nm, sizeof *tmp, cmp_double);
        out->scale_estimate = tmp[nm / 2];
    }

    /* theta from per-pair angles at the smallest positive position */
    size_t best_row = n_rows;
    for (size_t s = 0; s < n_rows; s++)
        if (rows[s].pos > 0 && (best_row == n_rows || rows[s].pos < rows[best_row].pos))
            best_row = s;
    if (best_row < n_rows && n > 2) {
        double inv[POSENC_MAX_FREQ];
        unsigned char ok[POSENC_MAX_FREQ];
        double pos = (double)rows[best_row].pos;
        for (int i = 0; i < n; i++) {
            double ang, ratio;
            ok[i] = 0;
            inv[i] = 0;
            if (posenc_verify_pair_angle(bp.style, rd, i, rows[best_row].pre,
                                         rows[best_row].expected, &ang, &ratio) &&
                ang > 0 && pos * bp.inv_hi[i] < 1.0) {
                inv[i] = ang / pos;
                ok[i] = 1;
            }
        }
        int ed = cfg->exponent_dim > 0 ? cfg->exponent_dim : rd;
        out->theta_estimate = posenc_verify_fit_theta(inv, ok, n, ed);
    }
    out->shift_valid = estimate_shift(&bp, rows, n_rows, shifts, &out->shift_estimate);

    /* every rule's variants, in table order */
    struct diag_env env = { cfg, seq_len, &bp, &base, rows, n_rows, out, what, shifts };
    int rule_of[POSENC_VERIFY_MAX_CANDIDATES];
    posenc_verify_recipe *recs = malloc(POSENC_VERIFY_MAX_CANDIDATES * sizeof *recs);
    if (!recs) {
        free(tmp);
        free(shifts);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    for (size_t ri = 0; ri < sizeof diag_rules / sizeof diag_rules[0]; ri++) {
        for (int v = 0;; v++) {
            posenc_verify_recipe r;
            char desc[200];
            int k = diag_rules[ri].mutate(&env, v, &r, desc, sizeof desc);
            if (k == CAND_END)
                break;
            if (k == CAND_SKIP)
                continue;
            int idx = add_cand(out, &c, &r, diag_rules[ri].name, desc);
            if (idx < 0)
                break;
            rule_of[idx] = (int)ri;
            recs[idx] = r;
        }
    }

    /* pick: among the candidates within the bound the closest fit (the smallest error: a
     * candidate allowed a rounding step of a coarser dtype must not win on its wider allowance),
     * else the lowest ratio; the earlier rule on a tie */
    for (int i = 0; i < out->n_cand; i++) {
        const posenc_diag_candidate *k = &out->cand[i];
        const posenc_diag_candidate *o = out->best >= 0 ? &out->cand[out->best] : NULL;
        if (!o || (k->explains && !o->explains) ||
            (k->explains && o->explains && k->max_rel_err < o->max_rel_err) ||
            (!k->explains && !o->explains && k->ratio < o->ratio))
            out->best = i;
    }
    const posenc_diag_candidate *b = out->best >= 0 ? &out->cand[out->best] : NULL;
    if (b)
        out->recipe = recs[out->best];
    out->angle_acc = numerics ? 2 : 0;
    free(recs);
    out->found = b && b->explains && out->config_ratio > 1.0 && b->ratio < out->config_ratio;

    char ev[512];
    int len = snprintf(ev, sizeof ev,
                       "the config's rotation (%s, rotary_dim %d, theta %.6g) misses %s by max rel "
                       "err %.3g over %zu sampled rows",
                       style_word(bp.style), rd, cfg->theta, what, out->config_rel_err, n_rows);
    if (out->theta_estimate > 0 && len < (int)sizeof ev)
        len += snprintf(ev + len, sizeof ev - (size_t)len, "; per-pair angles imply theta %.6g",
                        out->theta_estimate);
    if (out->scale_estimate > 0 && len < (int)sizeof ev)
        len += snprintf(ev + len, sizeof ev - (size_t)len, "; magnitude ratio %.6g (config %.6g)",
                        out->scale_estimate, bp.attention_scaling);
    if (b && len < (int)sizeof ev)
        snprintf(ev + len, sizeof ev - (size_t)len, "; best candidate %s: max rel err %.3g",
                 b->description, b->max_rel_err);
    snprintf(out->evidence, sizeof out->evidence, "%s", ev);

    if (out->found)
        diag_rules[rule_of[out->best]].explain(&env, b, out->explanation,
                                               sizeof out->explanation);
    else {
        /* nothing fits within the bound: the two closest, so a reader sees how far they are */
        int c1 = -1, c2 = -1;
        for (int i = 0; i < out->n_cand; i++) {
            double r = out->cand[i].ratio;
            if (c1 < 0 || r < out->cand[c1].ratio) {
                c2 = c1;
                c1 = i;
            } else if (c2 < 0 || r < out->cand[c2].ratio) {
                c2 = i;
            }
        }
        int l = snprintf(out->explanation, sizeof out->explanation,
                         "%s differs from the config's rotation (max rel err %.3g) and no usual "
                         "mistake explains it", what, out->config_rel_err);
        for (int k = 0; k < 2 && l < (int)sizeof out->explanation; k++) {
            int i = k ? c2 : c1;
            if (i < 0)
                break;
            l += snprintf(out->explanation + l, sizeof out->explanation - (size_t)l,
                          "%s%s (%.3g of its bound)", k ? ", " : "; closest: ",
                          out->cand[i].description, out->cand[i].ratio);
        }
    }
    free(tmp);
    free(shifts);
    return POSENC_OK;
}
