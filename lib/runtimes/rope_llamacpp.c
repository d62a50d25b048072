/* rope_llamacpp.c: the ggml precision's parameters for a model or a GGUF file (the GGUF keys
 * llama.cpp's converter writes, the ggml_rope_ext arguments its loader derives from them, attached
 * by posenc_rope_params_set_ggml), and how far ggml's numerics drift from exact at a position.
 * Above lib/encodings (the numerics, lib/encodings/rope_ggml.c) and lib/model (the config). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "posenc/llamacpp.h"
#include "posenc/rope.h"

posenc_status posenc_rope_params_ggml(posenc_rope_params *p, const posenc_model *m,
                                      const char *layer_type, int64_t n_ctx, posenc_error *err)
{
    /* both are a few KB: off small thread stacks */
    posenc_gguf_rope *g = malloc(sizeof *g);
    posenc_ggml_rope *r = malloc(sizeof *r);
    posenc_status st;
    if (!g || !r) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    st = posenc_gguf_rope_from_model(m, layer_type, g, err);
    if (st == POSENC_OK)
        st = posenc_ggml_rope_from_gguf_layer(g, n_ctx, layer_type, r, err);
    if (st == POSENC_OK)
        st = posenc_rope_params_set_ggml(p, r, err);
out:
    free(g);
    free(r);
    return st;
}

posenc_status posenc_rope_params_ggml_gguf(posenc_rope_params *p, const posenc_gguf_rope *g,
                                           int64_t n_ctx, posenc_error *err)
{
    return posenc_rope_params_ggml_gguf_layer(p, g, n_ctx, NULL, err);
}

posenc_status posenc_rope_params_ggml_gguf_layer(posenc_rope_params *p,
                                                 const posenc_gguf_rope *g, int64_t n_ctx,
                                                 const char *layer_type, posenc_error *err)
{
    posenc_ggml_rope *r = malloc(sizeof *r);
    if (!r)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = posenc_ggml_rope_from_gguf_layer(g, n_ctx, layer_type, r, err);
    if (st == POSENC_OK)
        st = posenc_rope_params_set_ggml(p, r, err);
    free(r);
    return st;
}

static posenc_status ggml_drift(const posenc_model *m, const char *layer_type, int64_t pos,
                                int vs_hf, double *drift, posenc_error *err)
{
    if (!m || !drift || pos < 0 || pos > INT32_MAX)
        return posenc_seterr(err, POSENC_EINVAL, "no model, or a position outside llama.cpp's "
                                                 "int32 positions");
    /* about 40 KB: off small thread stacks */
    struct work {
        posenc_rope_config cfg;
        posenc_rope_params p, x;
        double c[POSENC_MAX_FREQ], s[POSENC_MAX_FREQ], cx[POSENC_MAX_FREQ], sx[POSENC_MAX_FREQ];
    } *w = malloc(sizeof *w);
    if (!w)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = posenc_model_rope(m, layer_type, &w->cfg, err);
    if (st == POSENC_OK)
        st = posenc_rope_params_compute(&w->cfg, pos + 1, &w->p, err);
    if (st == POSENC_OK)
        st = posenc_rope_params_ggml(&w->p, m, layer_type, pos + 1, err);
    if (st == POSENC_OK) {
        /* llama.cpp's definition: ggml_rope_yarn_corr_dims always floors and ceils (vs_hf:
         * transformers' definition, truncate as the config says) */
        if (w->cfg.type == POSENC_ROPE_YARN && !vs_hf)
            w->cfg.truncate = 1;
        st = posenc_rope_params_compute(&w->cfg, pos + 1, &w->x, err);
    }
    if (st == POSENC_OK) {
        const int64_t p3[3] = { pos, pos, pos };
        posenc_ggml_rope_cossin(&w->p.ggml, p3, w->c, w->s);
        posenc_rope_cossin(&w->x, POSENC_PREC_EXACT, pos, w->cx, w->sx);
        double d = 0.0;
        for (int i = 0; i < w->p.n_freq; i++) {
            double a = fabs(w->c[i] - w->cx[i]), b = fabs(w->s[i] - w->sx[i]);
            if (a > d || isnan(a))
                d = a;
            if (b > d || isnan(b))
                d = b;
        }
        *drift = d;
    }
    free(w);
    return st;
}

posenc_status posenc_ggml_rope_drift(const posenc_model *m, const char *layer_type, int64_t pos,
                                     double *drift, posenc_error *err)
{
    return ggml_drift(m, layer_type, pos, 0, drift, err);
}

posenc_status posenc_ggml_rope_gap(const posenc_model *m, const char *layer_type, int64_t pos,
                                   double *gap, posenc_error *err)
{
    return ggml_drift(m, layer_type, pos, 1, gap, err);
}
