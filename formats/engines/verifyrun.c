/* formats/engines/verifyrun.c: one posenc verify run, from a loaded model to its report tree
 * (verifyrun.h). The dumps and positions are read by rows.h, their rows go through
 * lib/verify/verify_stats.h and lib/verify/verify.c, the checks are built by report_checks.c. */
#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/report/describe_out.h"
#include "posenc/llamacpp.h"
#include "posenc/posenc.h"
#include "posenc/verify.h"
#include "formats/report/report.h"
#include "formats/engines/rows.h"
#include "lib/verify/verify_checks.h"
#include "lib/verify/verify_stats.h"
#include "formats/engines/verifyrun.h"
#include "formats/engines/verifyset.h"

#define POS_END ((int64_t)1 << 48) /* --positions lie in [0, 2^48), as in gen */

static posenc_status fault(pe_vrun *v, int kind, posenc_status st)
{
    v->fault = kind;
    return st;
}

static posenc_status oom(posenc_error *err)
{
    return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
}

static cJSON *add_check(pe_vrun *v, const char *name, int ok, int info, double abs_err,
                        double rel_err, double tol, const char *summary, cJSON *details)
{
    char full[POSENC_NAME_MAX + 96];
    snprintf(full, sizeof full, "%s%s%s", name, v->suffix ? "@" : "", v->suffix ? v->suffix : "");
    v->n_checks++;
    v->failed += !ok;
    return pe_report_add_check(v->root, full, ok, info, abs_err, rel_err, tol, summary, details);
}

/* --layout ggml: the pairs of llama.cpp's rope mode for the file's (or the config's)
 * architecture replace the config's (posenc_ggml_layout_style), said once in the notes. */
static posenc_status layout_style(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                  posenc_rope_config *cfg, posenc_error *err)
{
    if (rq->layout != POSENC_APPLY_GGML || rq->has_style)
        return POSENC_OK;
    const char *arch = v->file ? v->file->arch : posenc_ggml_model_arch(m);
    int sections = v->file ? v->file->n_sections > 0 && v->file->sections[0] > 0 &&
                                 v->file->sections[1] > 0
                           : cfg->n_mrope_section > 0;
    posenc_style style;
    int permuted;
    if (posenc_ggml_layout_style(arch, sections, cfg->style, &style, &permuted, err) !=
        POSENC_OK)
        return fault(v, PE_VRUN_FAULT_ERROR,
                     posenc_error_prefix(err, err->code, "--layout ggml: "));
    cfg->style = style;
    if (!v->layout_noted) {
        v->layout_noted = 1;
        pe_report_add_note(v->root, "--layout ggml: q/k as llama.cpp holds them for "
                           "architecture %s, [tokens, heads, head_dim], rotated in %s pairs%s",
                           arch, style == POSENC_STYLE_GPTJ ? "NORM (2i, 2i+1)"
                                                            : "(i, i + n_rot/2)",
                           permuted ? "; the converter permuted q/k (convert_hf_to_gguf.py "
                                      "LlamaModel.permute), so the config's neox pairs are "
                                      "neighbours here and a --style a diagnosis names is in "
                                      "that order" : "");
    }
    return POSENC_OK;
}

/* The RoPE parameters of layer type lt (NULL: the config's), with --style when style is set. */
static posenc_status rope_cfg(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                              const char *lt, int style, posenc_rope_config *cfg,
                              posenc_error *err)
{
    if (posenc_model_rope(m, lt, cfg, err) != POSENC_OK)
        return fault(v, PE_VRUN_FAULT_ROPE, err->code);
    if (style && rq->has_style)
        cfg->style = rq->style;
    if (style && rq->q)
        return layout_style(v, rq, m, cfg, err);
    return POSENC_OK;
}

/* What a comparison is held to besides the bound: the runtime profiles (NULL entries: that
 * runtime does not run the config) and the fits they are counted into. */
struct vprofiles {
    posenc_verify_recipe *rec;                /* POSENC_VERIFY_N_PROFILES recipes */
    const posenc_verify_recipe *use[POSENC_VERIFY_N_PROFILES];
    posenc_verify_profiles_result fits;
};

/* The numerics a diagnosis allows besides the bound, in the order tried: none (exact math,
 * transformers and vLLM drift within the bound), then llama.cpp's when the ggml profile runs
 * the config (its drift past the bound at long positions is allowed frequency by frequency).
 * With --precision only the held profile's. Returns how many (at most 2) into out. */
static int diag_numerics(const pe_vrun_req *rq, const struct vprofiles *vp,
                         const posenc_verify_recipe **out)
{
    const posenc_verify_recipe *ggml = vp->use[POSENC_PREC_GGML];
    out[0] = rq->has_prec && rq->prec == POSENC_PREC_GGML ? ggml : NULL;
    if (rq->has_prec || !ggml)
        return 1;
    out[1] = ggml;
    return 2;
}

/* The best candidate of a diagnosis over every row of tensor t (0 q, 1 k) of the dumps req
 * opens: its elements against the bound around the candidate's rotation (with numerics, that
 * runtime's drift from the exact recipe allowed as in the diagnosis). The diagnosis stays found
 * only when every element is within it; *out gets {elements, elements_failed, rows_failed,
 * max_ratio}. */
static posenc_status confirm_diagnosis(const pe_vrun_req *rq, const pe_qk_req *req, int t,
                                       const posenc_verify_recipe *exact,
                                       const posenc_verify_recipe *numerics,
                                       posenc_diagnosis *d, cJSON **out, posenc_error *err)
{
    pe_qk_dumps x;
    pe_vpass *pass[2] = { NULL, NULL };
    int usage;
    *out = NULL;
    if (pe_qk_open(req, &x, &usage, err) != POSENC_OK)
        return err->code;
    pe_qk_check chk = { &d->recipe, { NULL }, rq->has_tol ? rq->tol : 0, NULL, d->angle_acc, -1,
                        numerics, numerics ? exact : NULL };
    posenc_status st = pe_qk_passes(&x, &chk, rq->rotated, pass, err);
    if (st == POSENC_OK) {
        const pe_vstats *s = pe_vpass_stats(pass[t]);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "elements", (double)s->elems);
        cJSON_AddNumberToObject(o, "elements_failed", (double)s->elems_bad);
        cJSON_AddNumberToObject(o, "rows_failed", (double)s->bad);
        cJSON_AddItemToObject(o, "max_ratio", pe_report_number(s->max_ratio));
        *out = o;
        if (s->elems_bad) {
            size_t l = strlen(d->explanation);
            d->found = 0;
            if (l < sizeof d->explanation)
                snprintf(d->explanation + l, sizeof d->explanation - l, "; but over every row "
                         "it misses %" PRIu64 " of %" PRIu64 " elements (%" PRIu64 " rows): not "
                         "the whole explanation", s->elems_bad, s->elems, s->bad);
        }
    }
    pe_vpass_free(pass[0]);
    pe_vpass_free(pass[1]);
    pe_qk_close(&x);
    return st;
}

/* The comparison check of one pass (expect_q / rotated_k ...): the verdict (posenc-verify(1),
 * VERDICT), which runtime's numerics the rows are and, when it fails, the diagnosis. */
static posenc_status compare_check(pe_vrun *v, const pe_vrun_req *rq, const pe_vpass *p,
                                   const char *what, const posenc_rope_config *cfg,
                                   int64_t seq_len, struct vprofiles *vp, posenc_dtype dt,
                                   const pe_qk_req *req, const posenc_verify_recipe *exact,
                                   posenc_error *err)
{
    const pe_vstats *st = pe_vpass_stats(p);
    const posenc_verify_tolerance *tol = pe_vpass_tolerance(p);
    const posenc_verify_sample *rows;
    size_t n = pe_vpass_samples(p, &rows);
    char name[32], summary[1400];
    snprintf(name, sizeof name, "%s_%s", rq->rotated ? "rotated" : "expect", what);
    int finite = st->nan + st->inf + st->pre_nonfinite == 0;
    int ok = pe_report_compare_summary(summary, sizeof summary, st, what, v->nope, v->layer);
    cJSON *det = pe_report_compare_details(st, tol, what, v->nope);
    if (vp && !v->nope) {
        pe_vpass_profiles(p, &vp->fits, dt);
        pe_report_runtimes(det, &vp->fits);
        const posenc_profile_fit *b = vp->fits.best >= 0 ? &vp->fits.fit[vp->fits.best] : NULL;
        size_t l = strlen(summary);
        if (rq->has_prec) {
            /* held to one profile alone: every element within that profile's own rounding */
            const posenc_profile_fit *h = &vp->fits.fit[rq->prec];
            ok = finite && h->available && h->elements_failed == 0;
            if (finite)
                snprintf(summary, sizeof summary, "%s %s the %s profile (%s): %" PRIu64 " of %"
                         PRIu64 " elements off its own rounding (max %.3g of it)", what,
                         ok ? "matches" : "differs from", posenc_precision_name(h->prec),
                         h->runtime, h->elements_failed, st->elems, h->ratio);
            l = strlen(summary);
            if (finite && b && b != h && l < sizeof summary)
                snprintf(summary + l, sizeof summary - l, "; %s", vp->fits.explanation);
        } else if (finite && !ok && b) {
            /* out of the bound, but element for element one runtime's own output */
            ok = 1;
            if (l < sizeof summary)
                snprintf(summary + l, sizeof summary - l, "; but %s", vp->fits.explanation);
        } else if (finite && (b || !ok) && l < sizeof summary) {
            /* the profile a passing dump matches; a failing one's "matches no profile" */
            snprintf(summary + l, sizeof summary - l, "; %s", vp->fits.explanation);
        }
        if (rq->max_ulp >= 0 && st->has_ulp) {
            int within = st->max_ulp <= (uint64_t)rq->max_ulp;
            char mx[32];
            if (st->max_ulp == UINT64_MAX)
                snprintf(mx, sizeof mx, "NaN");
            else
                snprintf(mx, sizeof mx, "%" PRIu64, st->max_ulp);
            ok = ok && within;
            l = strlen(summary);
            if (l < sizeof summary)
                snprintf(summary + l, sizeof summary - l, "; %s ulp at most from posenc's %s "
                         "rotation, %s --max-ulp %d", mx, posenc_precision_name(rq->prec),
                         within ? "within" : "over", rq->max_ulp);
        }
    }
    cJSON *c = add_check(v, name, ok, 0, st->max_abs, st->max_rel, NAN, summary, det);
    if (ok || n == 0 || v->nope || !finite)
        return POSENC_OK;
    posenc_diagnosis *d = malloc(sizeof *d);
    if (!d)
        return oom(err);
    const posenc_verify_recipe *num[2] = { NULL, NULL };
    int nn = vp ? diag_numerics(rq, vp, num) : 1;
    posenc_status s = POSENC_OK;
    int used = 0;
    for (used = 0; used < nn; used++)
        if ((s = posenc_verify_diagnose(cfg, seq_len, tol, num[used], rows, n, what, d, err)) !=
                POSENC_OK || d->found)
            break;
    if (used == nn) { /* nothing found: the report shows the first (exact) attempt */
        used = 0;
        s = posenc_verify_diagnose(cfg, seq_len, tol, num[0], rows, n, what, d, err);
    }
    if (s == POSENC_OK && d->found && num[used]) {
        size_t l = strlen(d->explanation);
        if (l < sizeof d->explanation)
            snprintf(d->explanation + l, sizeof d->explanation - l,
                     " (under llama.cpp's float32 numerics)");
    }
    /* ranked on the sampled rows, the named candidate is held to every row */
    cJSON *conf = NULL;
    if (s == POSENC_OK && d->found)
        s = confirm_diagnosis(rq, req, what[0] == 'k', exact, num[used], d, &conf, err);
    if (s == POSENC_OK) {
        /* a runtime posenc has no rules for: said, so its output is never blamed on another
         * mistake without that being known */
        for (int k = 0; vp && k < vp->fits.n; k++) {
            const posenc_profile_fit *f = &vp->fits.fit[k];
            size_t l = strlen(d->evidence);
            if (!f->available && l < sizeof d->evidence)
                snprintf(d->evidence + l, sizeof d->evidence - l, "; %s: posenc has no rules "
                         "for this config (%s)", f->runtime, f->why);
        }
        cJSON *dj = pe_report_diagnosis(d);
        cJSON_AddItemToObject(dj, "every_row", conf ? conf : cJSON_CreateNull());
        conf = NULL;
        cJSON_ReplaceItemInObjectCaseSensitive(c, "diagnosis", dj);
    }
    cJSON_Delete(conf);
    free(d);
    return s;
}

/* The three invariance checks of res, named NAME@GROUP for one pair of a multi-layer dump. */
static void invariance_checks(pe_vrun *v, const pe_vrun_req *rq,
                              const posenc_invariance_result *res, const char *source,
                              int64_t max_position, const char *layer)
{
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(v->root, "checks");
    int first = cJSON_GetArraySize(checks);
    v->failed += pe_report_invariance(v->root, res, source, max_position, layer,
                                      rq->has_tol ? rq->tol : POSENC_VERIFY_INVARIANCE_TOL,
                                      rq->has_hf_tol ? rq->hf_tol : NAN);
    v->n_checks += 3;
    for (int c = first; v->suffix && c < cJSON_GetArraySize(checks); c++) {
        cJSON *ck = cJSON_GetArrayItem(checks, c);
        char full[POSENC_NAME_MAX + 96];
        snprintf(full, sizeof full, "%s@%s",
                 cJSON_GetObjectItemCaseSensitive(ck, "name")->valuestring, v->suffix);
        cJSON_ReplaceItemInObjectCaseSensitive(ck, "name", cJSON_CreateString(full));
    }
}

/* The header and inputs of a comparison of dumps, and where its rope parameters go. */
static posenc_status describe_dumps(pe_vrun *v, const pe_vrun_req *rq, const pe_qk_dumps *x,
                                    const posenc_rope_config *cfg,
                                    const posenc_rope_params *params, posenc_precision prec,
                                    cJSON *inputs, posenc_error *err)
{
    if (v->row)
        cJSON_AddItemToObject(v->row, "rope",
                              v->nope ? cJSON_CreateNull() : pe_report_rope(cfg, params));
    else
        cJSON_ReplaceItemInObjectCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v->root, "config"), "rope",
            pe_report_rope(cfg, params));
    pe_report_dumps rd = { rq->config, rq->layer_type, posenc_apply_layout_name(rq->layout),
                           rq->positions, rq->offset, x->pos.first, x->pos.last, x->pos.max,
                           rq->rotated, prec, rq->has_prec, NULL,
                           { rq->q, rq->k, rq->eq, rq->ek },
                           { NULL, NULL, NULL, NULL }, &x->d[0]->shape, &x->d[1]->shape };
    for (int i = 0; i < 4; i++)
        rd.info[i] = x->d[i] ? &x->d[i]->info : NULL;
    char *gj = NULL;
    if (prec == POSENC_PREC_GGML && !(rd.ggml_json = gj = pe_describe_ggml_json(params)))
        return oom(err);
    pe_report_set_dumps(v->root, inputs, &rd);
    free(gj);
    return POSENC_OK;
}

/* The layer type llama.cpp gives the pair's layer under the file's own schedule
 * (posenc_ggml_swa_layers), when the config gives it none because transformers rotates every
 * layer alike: llama.cpp's olmo2 rotates Olmo 3's sliding layers without the scaling
 * (ggml-org/llama.cpp src/models/olmo2.cpp, the graph's is_swa branch). */
static const char *file_layer_type(const pe_vrun *v, const char *layer_type)
{
    uint8_t sliding[POSENC_GGUF_MAX_LAYERS];
    if (layer_type || !v->file || v->nope || v->layer < 0 || v->layer >= POSENC_GGUF_MAX_LAYERS ||
        !posenc_ggml_swa_layers(v->file, (int)v->layer + 1, sliding))
        return layer_type;
    return sliding[v->layer] ? "sliding_attention" : "full_attention";
}

/* --gguf with dumps: the ggml profile is what llama.cpp computes with that file (its keys, its
 * mode, its layer schedule), not with the file the converter would write for the config; the
 * file against the config is the gguf checks' part of the same report. */
static posenc_status file_profile(pe_vrun *v, const pe_vrun_req *rq,
                                  const posenc_rope_config *cfg, int64_t seq_len,
                                  struct vprofiles *vp, posenc_error *err)
{
    if (!v->file)
        return POSENC_OK;
    posenc_profile_fit *f = &vp->fits.fit[POSENC_PREC_GGML];
    posenc_rope_params *p = &vp->rec[POSENC_PREC_GGML].params;
    posenc_error e2 = { 0 };
    posenc_status st = posenc_rope_params_compute(cfg, seq_len, p, err);
    if (st != POSENC_OK)
        return st;
    f->available = 0;
    if (posenc_rope_params_ggml_gguf_layer(p, v->file, seq_len,
                                           file_layer_type(v, rq->layer_type), &e2) != POSENC_OK) {
        snprintf(f->why, sizeof f->why, "'%.60s': %.130s", rq->gguf, e2.msg);
        return POSENC_OK;
    }
    posenc_verify_recipe_init(&vp->rec[POSENC_PREC_GGML], p);
    vp->rec[POSENC_PREC_GGML].prec = POSENC_PREC_GGML;
    f->available = 1;
    return POSENC_OK;
}

/* Invariance of sampled pre-RoPE rows: head 0 of q against head 0 of k. */
static posenc_status dump_invariance(pe_vrun *v, const pe_vrun_req *rq,
                                     const posenc_rope_config *cfg,
                                     const posenc_rope_params *params, pe_vpass *const *pass,
                                     int64_t maxpos, posenc_error *err)
{
    int64_t maxp = rq->max_position > 0 ? rq->max_position : cfg->max_position_embeddings;
    if (maxp < maxpos + 2)
        maxp = maxpos + 2;
    posenc_invariance_result *res = malloc(sizeof *res);
    if (!res)
        return oom(err);
    posenc_status st = pe_vpass_invariance(pass[0], pass[1], params, maxp, res, err);
    if (st == POSENC_OK)
        invariance_checks(v, rq, res, "sampled rows of the pre-RoPE dumps", maxp, NULL);
    free(res);
    return st;
}

/* --q/--k: one pair of dumps with the parameters cfg. */
static posenc_status check_dumps(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                 const posenc_rope_config *cfg, cJSON *inputs, posenc_error *err)
{
    static const char *const role[2] = { "q", "k" };
    pe_qk_req req = { { rq->q, rq->k, rq->eq, rq->ek }, rq->layout, rq->assume_bf16,
                      cfg->head_dim, rq->config, rq->positions, rq->offset, POS_END, { 0, 0 } };
    pe_qk_dumps x; /* set by pe_qk_open, closed at out */
    pe_vpass *pass[2] = { NULL, NULL };
    int is_usage;
    posenc_model_heads(m, rq->layer_type, &req.heads[0], &req.heads[1]);
    if (pe_qk_open(&req, &x, &is_usage, err) != POSENC_OK)
        return fault(v, is_usage ? PE_VRUN_FAULT_USAGE : PE_VRUN_FAULT_ERROR, err->code);
    int64_t maxpos = x.pos.max, seq_len = rq->seq_len ? rq->seq_len : maxpos + 1;
    posenc_rope_params params;
    posenc_vllm_info vi;
    posenc_precision prec = rq->has_prec ? rq->prec : POSENC_PREC_HF;
    posenc_verify_recipe *rr = NULL;
    /* vLLM served the dumps' sequence: its max_model_len was at least seq_len */
    posenc_status st = posenc_rope_params_for(cfg, prec, posenc_model_family(m), seq_len,
                                              prec == POSENC_PREC_VLLM ? seq_len : 0, &params,
                                              &vi, err);
    if (st != POSENC_OK)
        goto out;
    if (prec == POSENC_PREC_VLLM && maxpos >= vi.cache_len) {
        st = posenc_seterr(err, POSENC_ERANGE, "'%s': position %" PRId64 " is past vLLM's "
                           "cos_sin_cache (%s: %" PRId64 " rows)", rq->config, maxpos, vi.cls,
                           vi.cache_len);
        goto out;
    }
    if (prec == POSENC_PREC_GGML &&
        (st = v->file ? posenc_rope_params_ggml_gguf_layer(&params, v->file,
                                                           rq->n_ctx ? rq->n_ctx : seq_len,
                                                           file_layer_type(v, rq->layer_type),
                                                           err)
                      : posenc_rope_params_ggml(&params, m, rq->layer_type,
                                                rq->n_ctx ? rq->n_ctx : seq_len, err)) !=
            POSENC_OK) {
        posenc_error_prefix(err, st, "'%s': --precision ggml: ", v->file ? rq->gguf : rq->config);
        goto out;
    }
    /* the reference: the config's exact rotation; beside it, each runtime's own */
    rr = malloc((1 + POSENC_VERIFY_N_PROFILES) * sizeof *rr);
    struct vprofiles vp = { NULL, { NULL }, { 0 } };
    if (!rr) {
        st = oom(err);
        goto out;
    }
    vp.rec = rr + 1;
    posenc_rope_params *ep = &rr[0].params;
    if ((st = posenc_rope_params_compute(cfg, seq_len, ep, err)) != POSENC_OK)
        goto out;
    posenc_verify_recipe_init(&rr[0], ep);
    if (v->nope) {
        /* a layer without RoPE: the reference is the unrotated row, and no runtime rotates */
        rr[0].params.n_freq = 0;
        rr[0].params.rotary_dim = 0;
        rr[0].params.attention_scaling = 1;
    } else if ((st = posenc_verify_profiles_setup(m, rq->layer_type, cfg, seq_len, rq->n_ctx, vp.rec,
                                                  &vp.fits, err)) != POSENC_OK ||
               (st = file_profile(v, rq, cfg, seq_len, &vp, err)) != POSENC_OK) {
        goto out;
    }
    pe_qk_check chk = { &rr[0], { NULL }, rq->has_tol ? rq->tol : 0, NULL, 0,
                        rq->has_prec ? (int)rq->prec : -1, NULL, NULL };
    for (int k = 0; k < POSENC_VERIFY_N_PROFILES && !v->nope; k++)
        if (vp.fits.fit[k].available)
            chk.prof[k] = vp.use[k] = &vp.rec[k];
    if (rq->has_prec && rq->max_ulp >= 0 && !v->nope) {
        /* --max-ulp: posenc apply's rotation under the held precision */
        vp.rec[rq->prec].params = params;
        chk.ulp = &vp.rec[rq->prec];
        chk.prof[rq->prec] = vp.use[rq->prec] = chk.ulp;
    }
    if ((st = describe_dumps(v, rq, &x, cfg, &params, prec, inputs, err)) != POSENC_OK)
        goto out;
    /* q then k: pre-RoPE rows (none with --rotated) and the rows compared with them */
    st = pe_qk_passes(&x, &chk, rq->rotated, pass, err);
    if (st != POSENC_OK)
        goto out;
    if (v->nope && !x.d[2] && !rq->rotated) {
        char summary[256];
        snprintf(summary, sizeof summary, "layer %" PRId64 " has no RoPE: the dumps are not "
                 "rotated, nothing relative to check", v->layer);
        add_check(v, "no_rope", 1, 1, NAN, NAN, NAN, summary, NULL);
    } else if (!rq->rotated && !v->nope &&
               (st = dump_invariance(v, rq, cfg, &params, pass, maxpos, err)) != POSENC_OK) {
        goto out;
    }
    for (int t = 0; t < 2; t++) {
        const pe_rows *cd = rq->rotated ? x.d[t] : x.d[t + 2];
        if (cd && (st = compare_check(v, rq, pass[t], role[t], cfg, seq_len, &vp,
                                      cd->info.dtype, &req, &rr[0], err)) != POSENC_OK)
            goto out;
    }
    pe_report_rope_notes(v->root, cfg, &params, seq_len, 1);
out:
    pe_vpass_free(pass[0]);
    pe_vpass_free(pass[1]);
    free(rr);
    pe_qk_close(&x);
    return st;
}

posenc_status pe_vrun_open_pairs(const char *spec, const char *glob, int must, int assume_bf16,
                                 posenc_container **c, pe_pairs **pairs, char *path,
                                 size_t plen, int *is_usage, posenc_error *err)
{
    posenc_read_opts ro = { assume_bf16, POSENC_FMT_AUTO };
    *pairs = NULL;
    *is_usage = 0;
    if (pe_pairs_open(spec, glob, must, &ro, path, plen, c, err) != POSENC_OK)
        return err->code;
    if (*c && pe_pairs_find(*c, path, glob, pairs, err) != POSENC_OK) {
        *is_usage = err->code == POSENC_EINVAL;
        return err->code;
    }
    return POSENC_OK;
}

/* A failed pair: would another layer type's parameters, no rotation (a RoPE layer) or the
 * config's rotation (a layer without RoPE) have passed q or k? The likely mistake: a runtime
 * that swaps Gemma's sliding and full parameters, or ignores a NoPE layer. Each alternative
 * (lib/verify/verify_profiles.c) is checked in a scratch run whose errors are dropped; the answer goes
 * to the pair's row ("explanation") and the notes. */
static posenc_status explain_pair(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                  const pe_pair *pr, int head_dim, int first, cJSON *row,
                                  posenc_error *err)
{
    size_t cap = posenc_model_layer_type_count(m) + 2;
    pe_layer_alt *alt = malloc(cap * sizeof *alt);
    if (!alt)
        return oom(err);
    size_t na = pe_verify_layer_alternatives(m, pr->layer_type, pr->nope, head_dim, alt, cap);
    const char *role[2] = { "q", "k" }, *found[2] = { "", "" };
    int todo[2];
    for (int r = 0; r < 2; r++)
        todo[r] = pe_report_compare_ok(v->root, first, role[r]) == 0;
    for (size_t i = 0; i < na && (todo[0] || todo[1]); i++) {
        if (rq->has_style)
            alt[i].cfg.style = rq->style;
        pe_vrun sv = { 0 };
        sv.file = v->file;
        sv.layout_noted = 1;
        posenc_error serr = { 0 };
        if (!(sv.root = pe_report_new(posenc_version())))
            break;
        sv.row = cJSON_AddObjectToObject(sv.root, "row");
        if (layout_style(&sv, rq, m, &alt[i].cfg, &serr) != POSENC_OK) {
            cJSON_Delete(sv.root);
            continue;
        }
        sv.suffix = "";
        sv.nope = alt[i].nope;
        sv.layer = pr->layer;
        pe_vrun_req sq = *rq;
        sq.layer_type = alt[i].layer_type;
        if (check_dumps(&sv, &sq, m, &alt[i].cfg, sv.row, &serr) == POSENC_OK)
            for (int r = 0; r < 2; r++)
                if (todo[r] && pe_report_compare_ok(sv.root, 0, role[r]) == 1) {
                    todo[r] = 0;
                    found[r] = alt[i].what;
                }
        cJSON_Delete(sv.root);
    }
    char said[160], text[400];
    if (pe_verify_layer_explanation(found[0], found[1], pr->nope, pr->layer, pr->layer_type,
                                    text, sizeof text, said, sizeof said)) {
        cJSON_AddStringToObject(row, "explanation", text);
        pe_report_add_note(v->root, "%s: %s; %s", pe_pairs_label(pr), text, said);
    } else {
        cJSON_AddNullToObject(row, "explanation");
    }
    free(alt);
    return POSENC_OK;
}

/* One pair of a multi-layer dump: its row in "pairs", its checks named CHECK@GROUP. */
static posenc_status check_pair(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                const pe_vset_item *it, cJSON *header_pairs,
                                posenc_error *err)
{
    const pe_pair *pr = it->pair;
    pe_vrun_req pq = *rq;
    pq.q = it->spec[0];
    pq.k = it->spec[1];
    pq.eq = it->spec[2];
    pq.ek = it->spec[3];
    pq.layer_type = it->layer_type; /* the pair's own, for --precision ggml's arguments */
    /* the parameters --layer-type chose, else what the config calls the layer */
    cJSON *row = pe_report_pair_row(v->root, pr->group, pr->layer,
                                    pr->layer_type ? pr->layer_type : pr->layer_name,
                                    !pr->nope);
    posenc_rope_config cfg;
    posenc_status st = rope_cfg(v, rq, m, it->layer_type, 1, &cfg, err);
    if (st != POSENC_OK)
        return st;
    int before = v->failed;
    int first = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v->root, "checks"));
    v->suffix = pr->group[0] ? pr->group : "top";
    v->row = row;
    v->nope = pr->nope;
    v->layer = pr->layer;
    st = check_dumps(v, &pq, m, &cfg, row, err);
    /* check_dumps set the header to this pair alone: keep it, labelled, with the others */
    pe_report_pair_header(v->root, header_pairs, pe_pairs_label(pr));
    cJSON_AddBoolToObject(row, "ok", v->failed == before);
    if (st == POSENC_OK && v->failed != before && (pq.eq || pq.rotated))
        st = explain_pair(v, &pq, m, pr, cfg.head_dim, first, row, err);
    if (st == POSENC_OK)
        pe_report_pair_explain(v->root, row, first); /* else its failing checks say why */
    pe_report_pair_checks(v->root, row, first);
    return st;
}

/* Every pair of rq->qc (against the same groups of rq->eq): one row per pair. */
static posenc_status check_pairs(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                 cJSON *inputs, posenc_error *err)
{
    posenc_container *ce = NULL;
    pe_pairs *pe = NULL;
    pe_vset *set = NULL;
    char epath[4096];
    int is_usage;
    posenc_status st = pe_pairs_layers(rq->qpairs, m, rq->layer_type, rq->qpath,
                                       err);
    if (st != POSENC_OK)
        return st;
    if (rq->eq) {
        st = pe_vrun_open_pairs(rq->eq, rq->glob, 1, rq->assume_bf16, &ce, &pe, epath,
                                sizeof epath, &is_usage, err);
        if (st != POSENC_OK)
            fault(v, is_usage ? PE_VRUN_FAULT_USAGE : PE_VRUN_FAULT_ERROR, st);
        else if (pe)
            pe_pairs_take_side(pe, 2); /* a file with both sides: its rotated ones */
        else
            st = fault(v, PE_VRUN_FAULT_USAGE_ARG,
                       posenc_seterr(err, POSENC_EINVAL, "'%s': --q names a container of q/k "
                                     "pairs, so --expect-q needs one too (not a member)",
                                     rq->eq));
        if (st != POSENC_OK)
            goto out;
    }
    pe_report_pairs_run(v->root, inputs, m, rq->layer_type, rq->qpath, rq->eq ? epath : NULL,
                        rq->qpairs->n, rq->glob);
    cJSON_AddArrayToObject(v->root, "pairs");
    if ((st = pe_vset_new(m, rq->qc, rq->qpairs, rq->qpath, ce, pe, epath, &set, err)) !=
        POSENC_OK)
        goto out;
    cJSON *header_pairs = cJSON_CreateArray();
    for (size_t i = 0; i < rq->qpairs->n && st == POSENC_OK; i++) {
        pe_vset_item it;
        if ((st = pe_vset_item_at(set, i, &it, err)) == POSENC_OK)
            st = check_pair(v, rq, m, &it, header_pairs, err);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(v->root, "header"),
                                           "pairs", header_pairs);
    v->suffix = NULL;
    v->row = NULL;
    v->nope = 0;
out:
    pe_vset_free(set);
    pe_pairs_free(pe);
    posenc_container_close(ce);
    return st;
}

/* A config alone: invariance of seeded random pairs. layer: NULL for the only parameter set,
 * else the layer type (checks are suffixed with it, config.rope is keyed by layer type). */
static posenc_status check_config(pe_vrun *v, const pe_vrun_req *rq,
                                  const posenc_rope_config *cfg, const char *layer,
                                  posenc_error *err)
{
    int64_t maxp = rq->max_position > 0 ? rq->max_position : cfg->max_position_embeddings;
    if (maxp <= 0)
        maxp = 4096;
    posenc_rope_params params;
    if (posenc_rope_params_compute(cfg, maxp, &params, err) != POSENC_OK)
        return err->code;
    cJSON *cj = cJSON_GetObjectItemCaseSensitive(v->root, "config");
    if (layer) /* config.rope keyed by layer type, in order */
        cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(cj, "rope"), layer,
                              pe_report_rope(cfg, &params));
    else
        cJSON_ReplaceItemInObjectCaseSensitive(cj, "rope", pe_report_rope(cfg, &params));
    posenc_invariance_result *res = malloc(sizeof *res);
    if (!res)
        return oom(err);
    posenc_status st = posenc_verify_rope_config(&params, maxp, rq->seed, rq->samples, res, err);
    if (st == POSENC_OK) {
        char src[160];
        snprintf(src, sizeof src, "%d seeded unit-normal (q, k) pairs per distance, seed %" PRIu64,
                 rq->samples, rq->seed);
        invariance_checks(v, rq, res, src, maxp, layer);
        pe_report_rope_notes(v->root, cfg, &params, maxp, 0);
    }
    free(res);
    return st;
}

/* A model without RoPE: ALiBi, T5 or sinusoidal checks. */
static posenc_status check_bias(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                posenc_error *err)
{
    posenc_encoding enc = posenc_model_encoding(m);
    if (rq->q || rq->gguf)
        return fault(v, PE_VRUN_FAULT_USAGE,
                     posenc_seterr(err, POSENC_EINVAL, "--%s a RoPE model; '%s' uses %s",
                                   rq->q ? "q/--k need" : "gguf needs", rq->config,
                                   posenc_encoding_name(enc)));
    posenc_sinusoidal_variant var;
    int has_var = enc == POSENC_ENC_SINUSOIDAL && rq->variant;
    if (has_var && posenc_sinusoidal_variant_parse(rq->variant, &var, err) != POSENC_OK)
        return fault(v, PE_VRUN_FAULT_USAGE, posenc_error_prefix(err, POSENC_EINVAL, "--variant: "));
    return pe_report_bias_checks(v->root, m, rq->max_position,
                                 has_var ? &var : NULL, rq->seed, &v->n_checks, &v->failed,
                                 err);
}

/* The GGUF file against the config's parameters for layer type lt (NULL: the config's one
 * set): its named checks, and config.rope[lt] in keyed when keyed is given. */
static posenc_status gguf_checks(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                 cJSON *inputs, const char *lt, cJSON *keyed, posenc_error *err)
{
    posenc_rope_config cfg;
    posenc_status st = rope_cfg(v, rq, m, lt, 0, &cfg, err);
    if (st != POSENC_OK)
        return st;
    if (keyed)
        cJSON_AddItemToObject(keyed, lt, pe_report_rope(&cfg, NULL));
    return pe_report_gguf_checks(v->root, inputs, m, lt, rq->gguf,
                                 cfg.original_max_position_embeddings, &v->n_checks, &v->failed,
                                 err);
}

/* --gguf with dumps: the file against the config (its named checks), then the file's keys kept
 * for the dumps (file_profile, --precision ggml, --layout ggml's architecture). */
static posenc_status gguf_and_dumps(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                    cJSON *inputs, posenc_error *err)
{
    posenc_status st;
    if (!(v->file = malloc(sizeof *v->file)))
        return oom(err);
    if ((st = posenc_gguf_read_rope(rq->gguf, v->file, err)) != POSENC_OK)
        return st;
    /* a multi-layer dump of a config with several layer types (Gemma 3): the file is checked
     * for each, as its pairs are */
    size_t nt = rq->qpairs && !rq->layer_type ? posenc_model_layer_type_count(m) : 0;
    for (size_t i = 0; i < (nt > 1 ? nt : 1); i++) {
        const char *lt = nt > 1 ? posenc_model_layer_type_name(m, i) : rq->layer_type;
        if ((st = gguf_checks(v, rq, m, inputs, lt, NULL, err)) != POSENC_OK)
            return st;
    }
    return POSENC_OK;
}

/* The RoPE checks rq asks for. */
static posenc_status check_rope(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                                cJSON *inputs, posenc_error *err)
{
    cJSON *cfgj = cJSON_GetObjectItemCaseSensitive(v->root, "config");
    size_t nt = posenc_model_layer_type_count(m);
    posenc_rope_config cfg;
    posenc_status st;
    if (rq->gguf && rq->q && (st = gguf_and_dumps(v, rq, m, inputs, err)) != POSENC_OK)
        return st;
    if (rq->qpairs)
        return check_pairs(v, rq, m, inputs, err);
    if (!rq->q && !rq->layer_type && nt > 1) {
        /* a config alone, or a GGUF file against it, with several layer types (Gemma 3's
         * sliding and full layers): check each, config.rope keyed by layer type */
        cJSON *keyed = cJSON_AddObjectToObject(cfgj, "rope");
        for (size_t i = 0; i < nt; i++) {
            const char *lt = posenc_model_layer_type_name(m, i);
            if (rq->gguf)
                st = gguf_checks(v, rq, m, inputs, lt, keyed, err);
            else if ((st = rope_cfg(v, rq, m, lt, 1, &cfg, err)) == POSENC_OK)
                st = check_config(v, rq, &cfg, lt, err);
            if (st != POSENC_OK)
                return st;
        }
        return POSENC_OK;
    }
    if ((st = rope_cfg(v, rq, m, rq->layer_type, !rq->gguf || rq->q, &cfg, err)) != POSENC_OK)
        return st;
    cJSON_AddItemToObject(cfgj, "rope", pe_report_rope(&cfg, NULL));
    if (rq->gguf && !rq->q)
        return pe_report_gguf_checks(v->root, inputs, m, rq->layer_type, rq->gguf,
                                     cfg.original_max_position_embeddings, &v->n_checks,
                                     &v->failed, err);
    return rq->q ? check_dumps(v, rq, m, &cfg, inputs, err)
                 : check_config(v, rq, &cfg, NULL, err);
}

posenc_status pe_vrun_exec(pe_vrun *v, const pe_vrun_req *rq, const posenc_model *m,
                           posenc_error *err)
{
    memset(v, 0, sizeof *v);
    if (!(v->root = pe_report_new(posenc_version())))
        return oom(err);
    cJSON *inputs = cJSON_GetObjectItemCaseSensitive(v->root, "inputs");
    pe_report_set_config(v->root, rq->config, m, rq->layer_type, rq->gguf != NULL);
    cJSON_AddNumberToObject(inputs, "seed", (double)rq->seed);
    cJSON_AddNumberToObject(inputs, "samples", rq->samples);
    posenc_status st = posenc_model_encoding(m) == POSENC_ENC_ROPE
                           ? check_rope(v, rq, m, inputs, err)
                           : check_bias(v, rq, m, err);
    if (st == POSENC_OK)
        pe_report_set_ok(v->root, v->failed == 0);
    return st;
}

void pe_vrun_free(pe_vrun *v)
{
    if (v) {
        cJSON_Delete(v->root);
        v->root = NULL;
        free(v->file);
        v->file = NULL;
    }
}
