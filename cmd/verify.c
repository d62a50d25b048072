/* cmd/verify.c: posenc verify: prove relative invariance from a config, check a runtime's Q/K
 * dumps against posenc's rotation, diagnose the likely mistake, write reports for CI.
 *
 * Options and glue: the dumps and their positions are read by formats/rows.h, their rows go
 * through lib/verify_stats.h (statistics, samples) and lib/verify.c (invariance, diagnosis), the
 * checks are built into the report tree by formats/report.h; this file picks what to check and
 * the exit status. */
#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "opts.h"
#include "posenc/verify.h"
#include "posenc/llamacpp.h"
#include "pairs.h"
#include "report.h"
#include "rows.h"
#include "verify_checks.h"
#include "verify_stats.h"
#include "verifyset.h"

#define CMD "verify"
#define MAX_REPORTS 8
#define POS_END ((int64_t)1 << 48)                /* --positions lie in [0, 2^48), as in gen */

/* ---- options ---- */
struct opts {
    const char *config, *layer_type, *q, *k, *eq, *ek, *positions_spec, *variant, *family, *gguf,
               *glob;
    const char *reports[MAX_REPORTS];
    int n_reports;
    int64_t max_position, offset;
    int64_t seq_len;       /* --seq-len: the dumps' sequence length (0: largest position + 1) */
    uint64_t seed;
    int samples, quiet, rotated, has_tol, has_hf_tol, has_style, assume_bf16, has_prec;
    int report_stdout;     /* --report -: the JSON report is stdout, the summary is not printed */
    posenc_precision prec;
    double tol, hf_tol;
    posenc_style style;
    posenc_apply_layout layout;
};

/* ---- report state: the tree (formats/report_tree.c) and the failure count ---- */
struct vstate {
    cJSON *root;
    int failed, n_checks;
    /* one pair of a multi-layer dump (verify_pairs): check names get "@GROUP", the dump's rope
     * parameters go to its row, and a layer without RoPE is checked as not rotated */
    const char *suffix;
    cJSON *row;
    int nope;
    int64_t layer;
};

static cJSON *add_check(struct vstate *v, const char *name, int ok, int info, double abs_err,
                        double rel_err, double tol, const char *summary, cJSON *details)
{
    char full[POSENC_NAME_MAX + 96];
    snprintf(full, sizeof full, "%s%s%s", name, v->suffix ? "@" : "", v->suffix ? v->suffix : "");
    v->n_checks++;
    v->failed += !ok;
    return pe_report_add_check(v->root, full, ok, info, abs_err, rel_err, tol, summary,
                                   details);
}

/* The RoPE parameters of layer type lt (NULL: the config's), with --style when style is set.
 * Returns an exit status (message printed). */
static int rope_cfg(const struct opts *o, const posenc_model *m, const char *lt, int style,
                    posenc_rope_config *cfg)
{
    posenc_error err = { 0 };
    if (posenc_model_rope(m, lt, cfg, &err) != POSENC_OK)
        return cmd_rope_fail(CMD, m, &err);
    if (style && o->has_style)
        cfg->style = o->style;
    return 0;
}

static int oom(void)
{
    cmd_msg(CMD, "out of memory");
    return CMD_EXIT_ERROR;
}

/* The comparison check of one pass (expect_q / rotated_k ...): which runtime's numerics the
 * rows are and, when it fails, the diagnosis. */
static int compare_check(struct vstate *v, const struct opts *o, const posenc_model *m,
                         const pe_vpass *p, const char *what, const posenc_rope_config *cfg,
                         int64_t seq_len)
{
    const pe_vstats *st = pe_vpass_stats(p);
    const posenc_verify_sample *rows;
    size_t n = pe_vpass_samples(p, &rows);
    char name[32], summary[512];
    snprintf(name, sizeof name, "%s_%s", o->rotated ? "rotated" : "expect", what);
    int ok = pe_report_compare_summary(summary, sizeof summary, st, what, v->nope, v->layer);
    cJSON *det = pe_report_compare_details(st, pe_vpass_tolerance(p), what, v->nope);
    posenc_error err = { 0 };
    /* pre-RoPE dumps given, a layer with RoPE: a dump that is exactly one runtime's output
     * passes however far that runtime drifts from transformers, unless --precision names the
     * one to hold it to */
    if (!o->rotated && !v->nope && n > 0) {
        posenc_verify_profiles_result fits;
        if (posenc_verify_profiles(m, o->layer_type, cfg, seq_len, pe_vpass_tolerance(p)->tol,
                                   rows, n, what, &fits, &err) != POSENC_OK) {
            cJSON_Delete(det);
            return cmd_fail(CMD, &err);
        }
        pe_report_runtimes(det, &fits);
        ok = pe_verify_profiles_verdict(&fits, ok, o->has_prec, o->prec, st->max_rel, summary,
                                        sizeof summary);
    }
    cJSON *c = add_check(v, name, ok, 0, st->max_abs, st->max_rel, pe_vpass_tolerance(p)->tol,
                         summary, det);
    if (ok || n == 0 || v->nope)
        return 0;
    posenc_diagnosis *d = malloc(sizeof *d);
    if (!d)
        return oom();
    if (posenc_verify_diagnose(cfg, seq_len, pe_vpass_tolerance(p), rows, n, what, d, &err) !=
        POSENC_OK) {
        free(d);
        return cmd_fail(CMD, &err);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(c, "diagnosis", pe_report_diagnosis(d));
    free(d);
    return 0;
}

/* ---- invariance checks (config alone, or sampled dump rows) ---- */
static void invariance_checks(struct vstate *v, const struct opts *o,
                              const posenc_invariance_result *res, const char *source,
                              int64_t max_position, const char *layer)
{
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(v->root, "checks");
    int first = cJSON_GetArraySize(checks);
    v->failed += pe_report_invariance(v->root, res, source, max_position, layer,
                                          o->has_tol ? o->tol : POSENC_VERIFY_INVARIANCE_TOL,
                                          o->has_hf_tol ? o->hf_tol : NAN);
    v->n_checks += 3;
    /* one pair of a multi-layer dump: NAME@GROUP, as add_check names the others */
    for (int c = first; v->suffix && c < cJSON_GetArraySize(checks); c++) {
        cJSON *ck = cJSON_GetArrayItem(checks, c);
        char full[POSENC_NAME_MAX + 96];
        snprintf(full, sizeof full, "%s@%s",
                 cJSON_GetObjectItemCaseSensitive(ck, "name")->valuestring, v->suffix);
        cJSON_ReplaceItemInObjectCaseSensitive(ck, "name", cJSON_CreateString(full));
    }
}

/* ---- non-rotary encodings: ALiBi, T5, sinusoidal (formats/report_checks.c) ---- */
static int verify_bias(struct vstate *v, const struct opts *o, const posenc_model *m,
                       posenc_encoding enc)
{
    posenc_error err = { 0 };
    posenc_sinusoidal_variant var;
    int has_var = enc == POSENC_ENC_SINUSOIDAL && o->variant;
    if (has_var && posenc_sinusoidal_variant_parse(o->variant, &var, &err) != POSENC_OK)
        return cmd_usage_error(CMD, "--variant: %s", err.msg);
    if (pe_report_bias_checks(v->root, m, o->config, o->max_position, has_var ? &var : NULL,
                              o->seed, &v->n_checks, &v->failed, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    return 0;
}

/* ---- main flow for RoPE ---- */
static int verify_dumps(struct vstate *v, const struct opts *o, const posenc_model *m,
                        const posenc_rope_config *cfg, cJSON *inputs)
{
    static const char *const role[2] = { "q", "k" };
    pe_qk_req req = { { o->q, o->k, o->eq, o->ek }, o->layout, o->assume_bf16, cfg->head_dim,
                      o->config, o->positions_spec, o->offset, POS_END };
    pe_qk_dumps x; /* set by pe_qk_open, closed at out */
    pe_rows *const *d = x.d;
    const pe_dump_positions *pos = &x.pos;
    pe_vpass *pass[2] = { NULL, NULL };
    posenc_error err = { 0 };
    int rc = 0, usage;
    if (pe_qk_open(&req, &x, &usage, &err) != POSENC_OK)
        return usage ? cmd_usage_error(CMD, "%s", err.msg) : cmd_fail(CMD, &err);
    const posenc_apply_shape *sq = &d[0]->shape, *sk = &d[1]->shape;
    int64_t maxpos = pos->max, seq_len = o->seq_len ? o->seq_len : maxpos + 1;
    posenc_rope_params params;
    posenc_vllm_info vi;
    posenc_precision prec = o->has_prec ? o->prec : POSENC_PREC_HF;
    if (posenc_rope_params_for(cfg, prec, posenc_model_family(m), seq_len, 0, &params, &vi,
                               &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    if (prec == POSENC_PREC_VLLM && maxpos >= vi.cache_len) {
        cmd_msg(CMD, "'%s': position %" PRId64 " is past vLLM's cos_sin_cache (%s: %" PRId64
                        " rows)", o->config, maxpos, vi.cls, vi.cache_len);
        rc = CMD_EXIT_ERROR;
        goto out;
    }
    if (o->has_prec && o->prec == POSENC_PREC_GGML &&
        (rc = cmd_ggml_params(CMD, o->config, m, o->layer_type, seq_len, &params)) != 0)
        goto out;
    if (v->row) {
        cJSON_AddItemToObject(v->row, "rope", v->nope ? cJSON_CreateNull() : pe_report_rope(cfg, &params));
    } else {
        cJSON *cj = cJSON_GetObjectItemCaseSensitive(v->root, "config");
        cJSON_ReplaceItemInObjectCaseSensitive(cj, "rope", pe_report_rope(cfg, &params));
    }
    if (v->nope) {
        /* a layer without RoPE: the reference is the unrotated row */
        params.n_freq = 0;
        params.rotary_dim = 0;
        params.attention_scaling = 1;
    }
    posenc_verify_recipe rec;
    posenc_verify_recipe_init(&rec, &params);
    if (o->has_prec)
        rec.prec = o->prec;

    pe_report_dumps rd = { o->config, o->layer_type, posenc_apply_layout_name(o->layout),
                           o->positions_spec, o->offset, pos->first, pos->last, maxpos,
                           o->rotated, rec.prec, NULL, { o->q, o->k, o->eq, o->ek },
                           { NULL, NULL, NULL, NULL }, sq, sk };
    for (int i = 0; i < 4; i++)
        rd.info[i] = d[i] ? &d[i]->info : NULL;
    char *gj = NULL;
    if (rec.prec == POSENC_PREC_GGML) {
        pe_strbuf gb = { 0 };
        cmd_ggml_json(&gb, &params);
        rd.ggml_json = gj = pe_strbuf_finish(&gb);
    }
    pe_report_set_dumps(v->root, inputs, &rd);
    free(gj);

    /* q then k: pre-RoPE rows (none with --rotated) and the rows compared with them */
    if (pe_qk_passes(&x, &rec, o->rotated, o->has_tol ? o->tol : NAN, pass, &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }

    if (v->nope && !d[2] && !o->rotated) {
        char summary[256];
        snprintf(summary, sizeof summary, "layer %" PRId64 " has no RoPE: the dumps are not "
                 "rotated, nothing relative to check", v->layer);
        add_check(v, "no_rope", 1, 1, NAN, NAN, NAN, summary, NULL);
    } else if (!o->rotated && !v->nope) {
        /* scores of sampled pre-RoPE rows: head 0 of q against head 0 of k */
        int64_t maxp = o->max_position > 0 ? o->max_position : cfg->max_position_embeddings;
        if (maxp < maxpos + 2)
            maxp = maxpos + 2;
        posenc_invariance_result *res = malloc(sizeof *res);
        if (!res) {
            rc = oom();
            goto out;
        }
        if (pe_vpass_invariance(pass[0], pass[1], &params, maxp, res, &err) != POSENC_OK) {
            free(res);
            rc = cmd_fail(CMD, &err);
            goto out;
        }
        invariance_checks(v, o, res, "sampled rows of the pre-RoPE dumps", maxp, NULL);
        free(res);
    }
    for (int t = 0; t < 2; t++)
        if ((o->rotated || d[t + 2]) &&
            (rc = compare_check(v, o, m, pass[t], role[t], cfg, seq_len)))
            goto out;
    pe_report_rope_notes(v->root, cfg, &params, seq_len, 1);
out:
    pe_vpass_free(pass[0]);
    pe_vpass_free(pass[1]);
    pe_qk_close(&x);
    return rc;
}

/* ---- every q/k pair of a multi-layer dump ---- */

/* o->q (or o->eq) as a container of pairs (formats/pairs.h pe_pairs_open decides which dump
 * argument is one) and its pairs; NULL *pairs when it is one array (the single-pair path).
 * Returns an exit status. */
static int open_pairs(const struct opts *o, const char *spec, int must, posenc_container **c,
                      pe_pairs **pairs, char *path, size_t plen)
{
    posenc_error err = { 0 };
    posenc_read_opts ro = { o->assume_bf16, POSENC_FMT_AUTO };
    *pairs = NULL;
    if (pe_pairs_open(spec, o->glob, must, &ro, path, plen, c, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    if (*c && pe_pairs_find(*c, path, o->glob, pairs, &err) != POSENC_OK)
        return err.code == POSENC_EINVAL ? cmd_usage_error(CMD, "%s", err.msg)
                                         : cmd_fail(CMD, &err);
    return 0;
}

/* A failed pair: would another layer type's parameters, no rotation (a RoPE layer) or the
 * config's rotation (a layer without RoPE) have passed q or k? The likely mistake: a runtime
 * that swaps Gemma's sliding and full parameters, or ignores a NoPE layer. Each alternative
 * (lib/verify_profiles.c) is checked quietly in a scratch report; the answer goes to the pair's
 * row ("explanation") and the notes. */
static int explain_pair(struct vstate *v, const struct opts *po, const posenc_model *m,
                        const pe_pair *pr, int head_dim, int first, cJSON *row)
{
    size_t cap = posenc_model_layer_type_count(m) + 2;
    pe_layer_alt *alt = malloc(cap * sizeof *alt);
    if (!alt)
        return oom();
    size_t na = pe_verify_layer_alternatives(m, pr->layer_type, pr->nope, head_dim, alt, cap);
    const char *role[2] = { "q", "k" }, *found[2] = { "", "" };
    int todo[2];
    for (int r = 0; r < 2; r++)
        todo[r] = pe_report_compare_ok(v->root, first, role[r]) == 0;
    for (size_t i = 0; i < na && (todo[0] || todo[1]); i++) {
        if (po->has_style)
            alt[i].cfg.style = po->style;
        struct vstate sv = { 0 };
        if (!(sv.root = pe_report_new(posenc_version())))
            break;
        sv.row = cJSON_AddObjectToObject(sv.root, "row");
        sv.suffix = "";
        sv.nope = alt[i].nope;
        sv.layer = pr->layer;
        struct opts so = *po;
        so.layer_type = alt[i].layer_type;
        if (verify_dumps(&sv, &so, m, &alt[i].cfg, sv.row) == 0)
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
    return 0;
}

/* Verify every pair of o->q (against the same groups of o->eq): one row per pair in the report's
 * "pairs", its checks named CHECK@GROUP. */
static int verify_pairs(struct vstate *v, const struct opts *o, const posenc_model *m,
                        posenc_container *cq, pe_pairs *pq, const char *qpath, cJSON *inputs)
{
    posenc_container *ce = NULL;
    pe_pairs *pe = NULL;
    pe_vset *set = NULL;
    posenc_error err = { 0 };
    char epath[4096];
    int rc = 0;
    if (pe_pairs_layers(pq, m, o->layer_type, qpath, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    if (o->eq) {
        if ((rc = open_pairs(o, o->eq, 1, &ce, &pe, epath, sizeof epath)))
            goto out;
        if (!pe) {
            cmd_msg(CMD, "'%s': --q names a container of q/k pairs, so --expect-q needs one "
                            "too (not a member)", o->eq);
            rc = CMD_EXIT_USAGE;
            goto out;
        }
    }
    pe_report_pairs_run(v->root, inputs, m, o->layer_type, qpath, o->eq ? epath : NULL, pq->n,
                        o->glob);
    cJSON_AddArrayToObject(v->root, "pairs");
    if (pe_vset_new(m, cq, pq, qpath, ce, pe, epath, &set, &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    cJSON *header_pairs = cJSON_CreateArray();
    for (size_t i = 0; i < pq->n && rc == 0; i++) {
        pe_vset_item it;
        if (pe_vset_item_at(set, i, &it, &err) != POSENC_OK) {
            rc = cmd_fail(CMD, &err);
            break;
        }
        const pe_pair *pr = it.pair;
        struct opts po = *o;
        po.q = it.spec[0];
        po.k = it.spec[1];
        po.eq = it.spec[2];
        po.ek = it.spec[3];
        cJSON *row = pe_report_pair_row(v->root, pr->group, pr->layer, pr->layer_type, !pr->nope);
        posenc_rope_config cfg;
        const char *lt = it.layer_type;
        if ((rc = rope_cfg(o, m, lt, 1, &cfg)))
            break;
        int before = v->failed;
        int first = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v->root, "checks"));
        v->suffix = pr->group[0] ? pr->group : "top";
        v->row = row;
        v->nope = pr->nope;
        v->layer = pr->layer;
        po.layer_type = lt; /* the pair's own, for --precision ggml's arguments */
        rc = verify_dumps(v, &po, m, &cfg, row);
        /* verify_dumps set the header to this pair alone: keep it, labelled, with the others */
        pe_report_pair_header(v->root, header_pairs, pe_pairs_label(pr));
        cJSON_AddBoolToObject(row, "ok", v->failed == before);
        if (rc == 0 && v->failed != before && (po.eq || po.rotated))
            rc = explain_pair(v, &po, m, pr, cfg.head_dim, first, row);
        pe_report_pair_checks(v->root, row, first);
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
    return rc;
}

/* layer: NULL for the only parameter set, else the layer type (checks are suffixed with it and
 * config.rope becomes an object keyed by layer type) */
static int verify_rope_config(struct vstate *v, const struct opts *o, const posenc_rope_config *cfg,
                              const char *layer)
{
    posenc_error err = { 0 };
    int64_t maxp = o->max_position > 0 ? o->max_position : cfg->max_position_embeddings;
    if (maxp <= 0)
        maxp = 4096;
    posenc_rope_params params;
    if (posenc_rope_params_compute(cfg, maxp, &params, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    cJSON *cj = cJSON_GetObjectItemCaseSensitive(v->root, "config");
    if (layer)
        cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(cj, "rope"), layer,
                                               pe_report_rope(cfg, &params));
    else
        cJSON_ReplaceItemInObjectCaseSensitive(cj, "rope", pe_report_rope(cfg, &params));
    posenc_invariance_result *res = malloc(sizeof *res);
    if (!res) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (posenc_verify_rope_config(&params, maxp, o->seed, o->samples, res, &err) != POSENC_OK) {
        free(res);
        return cmd_fail(CMD, &err);
    }
    char src[160];
    snprintf(src, sizeof src, "%d seeded unit-normal (q, k) pairs per distance, seed %" PRIu64,
             o->samples, o->seed);
    invariance_checks(v, o, res, src, maxp, layer);
    free(res);
    pe_report_rope_notes(v->root, cfg, &params, maxp, 0);
    return 0;
}

/* ---- output ---- */
/* --gguf: one check per key or tensor (formats/report_checks.c pe_report_gguf_checks) */
static int verify_gguf(struct vstate *v, const struct opts *o, const posenc_model *m,
                       const posenc_rope_config *cfg, cJSON *inputs)
{
    posenc_error err = { 0 };
    if (pe_report_gguf_checks(v->root, inputs, m, o->layer_type, o->gguf,
                              cfg->original_max_position_embeddings, &v->n_checks, &v->failed,
                              &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    return 0;
}

static int print_summary(const struct vstate *v)
{
    char *t = pe_report_text(v->root, v->failed, v->n_checks);
    if (!t)
        return oom();
    fputs(t, stdout);
    free(t);
    return 0;
}

/* Free what open_pairs made; returns rc. */
static int pairs_done(posenc_container *c, pe_pairs *p, int rc)
{
    pe_pairs_free(p);
    posenc_container_close(c);
    return rc;
}

enum {
    O_MAXPOS = 256, O_SEED, O_SAMPLES, O_TOL, O_HFTOL, O_Q, O_K, O_ROTATED, O_EQ, O_EK, O_REPORT
};

static const struct cmd_opt verify_opts[] = {
    CMD_OPT_GROUP("options:"),
    { .id = CMD_O_CONFIG },
    { .id = CMD_O_LAYER_TYPE },
    { .id = CMD_O_FAMILY },
    { .id = CMD_O_STYLE },
    { O_MAXPOS, "max-position", 0, "N", CMD_T_I64, 2, (int64_t)1 << 40,
      "largest offset checked (default: max_position_embeddings)", NULL },
    { O_SEED, "seed", 0, "S", CMD_T_I64, 0, INT64_MAX, "seed of the random q and k (default 1)",
      NULL },
    { O_SAMPLES, "samples", 0, "N", CMD_T_I64, 1, 4096,
      "random (q, k) pairs per distance (default 16)", NULL },
    { O_TOL, "tolerance", 0, "X", CMD_T_NUM, 0, 0,
      "pass tolerance (default: see posenc-verify(1) CHECKS)", NULL },
    { O_HFTOL, "hf-tolerance", 0, "X", CMD_T_NUM, 0, 0,
      "make the float32-table drift a failing check at X", NULL },
    { O_Q, "q", 0, "FILE", CMD_T_STR, 0, 0, "query dump (pre-RoPE unless --rotated)", NULL },
    { O_K, "k", 0, "FILE", CMD_T_STR, 0, 0, "key dump (pre-RoPE unless --rotated)", NULL },
    { .id = CMD_O_DUMP_LAYOUT },
    { .id = CMD_O_ASSUME_BF16 },
    { .id = CMD_O_OFFSET },
    { .id = CMD_O_POSITIONS },
    { .id = CMD_O_SEQ_LEN, .help = "sequence length the runtime ran at, for dynamic/longrope\n"
                                   "selection (default: largest position + 1)" },
    { O_ROTATED, "rotated", 0, NULL, CMD_T_FLAG, 0, 0,
      "the dumps are already rotated (of position-independent\n"
      "content, e.g. layer 0 of a repeated token)", NULL },
    { O_EQ, "expect-q", 0, "FILE", CMD_T_STR, 0, 0,
      "the runtime's rotated q to compare with posenc's rotation", NULL },
    { O_EK, "expect-k", 0, "FILE", CMD_T_STR, 0, 0, "the runtime's rotated k", NULL },
    { .id = CMD_O_GGUF, .help = "check a llama.cpp GGUF file's RoPE keys and tensors against\n"
                                "what convert_hf_to_gguf.py writes for the config" },
    { .id = CMD_O_PRECISION,
      .help = "posenc's rotation the dumps are compared with: hf\n"
              "(default, transformers' float32 tables), exact, vllm\n"
              "(vLLM's cos_sin_cache) or ggml (llama.cpp's CPU numerics)" },
    { .id = CMD_O_VARIANT,
      .help = "sinusoidal variant: vaswani, t2t, fairseq, marian, cos_sin" },
    { .id = CMD_O_PAIRS, .help = "only the pairs of DUMPS whose group matches GLOB" },
    { O_REPORT, "report", 0, "FILE", CMD_T_STR, 0, 0,
      "write a report (.json, .md or .html; repeatable);\n"
      "- writes the JSON report to stdout instead of the summary", NULL },
    { .id = CMD_O_QUIET, .help = "no summary on stdout, no progress line on a terminal" },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_verify_spec = {
    "verify",
    "usage: posenc verify --config FILE [options]\n"
    "   or: posenc verify --config FILE --q Q --k K [--expect-q Q2 --expect-k K2 | --rotated]\n"
    "   or: posenc verify --config FILE --gguf MODEL.gguf\n"
    "   or: posenc verify --config FILE --q DUMPS [--expect-q ROTATED | --rotated] [--pairs GLOB]\n"
    "\n"
    "Check that the config's position encoding is relative (scores depend only on m - n),\n"
    "check a runtime's Q/K dumps against posenc's rotation, and name the likely mistake\n"
    "when they differ. DUMPS, a container of several arrays, has every q/k pair checked\n"
    "(grouped by path as in posenc apply; ROTATED holds the runtime's pairs under the\n"
    "same groups), each with its layer's parameters, into one report with a row per\n"
    "pair. Exit status: 0 every check passed, 1 a check failed, 2 usage error, 3 any\n"
    "other error.\n"
    "\n",
    26, verify_opts
};

int cmd_verify(int argc, char **argv)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.samples = 16;
    o.layout = POSENC_APPLY_BHSD;
    posenc_error err = { 0 };
    int c;
    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_verify_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_CONFIG: o.config = p.arg; break;
        case CMD_O_LAYER_TYPE: o.layer_type = p.arg; break;
        case CMD_O_FAMILY: o.family = p.arg; break;
        case CMD_O_STYLE: o.style = p.style; o.has_style = 1; break;
        case O_MAXPOS: o.max_position = p.i64; break;
        case O_SEED: o.seed = (uint64_t)p.i64; break;
        case O_SAMPLES: o.samples = (int)p.i64; break;
        case O_TOL:
        case O_HFTOL: {
            double x = p.num;
            if (!(x > 0))
                return cmd_usage_error(CMD, "%s: '%s' must be positive",
                                          c == O_TOL ? "--tolerance" : "--hf-tolerance", p.arg);
            if (c == O_TOL) {
                o.tol = x;
                o.has_tol = 1;
            } else {
                o.hf_tol = x;
                o.has_hf_tol = 1;
            }
            break;
        }
        case O_Q: o.q = p.arg; break;
        case O_K: o.k = p.arg; break;
        case CMD_O_DUMP_LAYOUT: o.layout = (posenc_apply_layout)p.dump_layout; break;
        case CMD_O_OFFSET: o.offset = p.i64; break;
        case CMD_O_POSITIONS: o.positions_spec = p.arg; break;
        case CMD_O_SEQ_LEN: o.seq_len = p.i64; break;
        case O_ROTATED: o.rotated = 1; break;
        case CMD_O_ASSUME_BF16: o.assume_bf16 = 1; break;
        case CMD_O_PRECISION: o.prec = p.precision; o.has_prec = 1; break;
        case O_EQ: o.eq = p.arg; break;
        case O_EK: o.ek = p.arg; break;
        case CMD_O_VARIANT: o.variant = p.arg; break;
        case CMD_O_GGUF: o.gguf = p.arg; break;
        case CMD_O_PAIRS: o.glob = p.arg; break;
        case O_REPORT: {
            pe_report_kind kind;
            if (o.n_reports == MAX_REPORTS)
                return cmd_usage_error(CMD, "--report: at most %d reports", MAX_REPORTS);
            if (pe_report_kind_of(p.arg, &kind, &err) != POSENC_OK)
                return cmd_usage_error(CMD, "--report: %s", err.msg);
            if (strcmp(p.arg, "-") == 0) {
                if (o.report_stdout)
                    return cmd_usage_error(CMD, "--report: '-' given twice");
                o.report_stdout = 1;
            }
            o.reports[o.n_reports++] = p.arg;
            break;
        }
        case CMD_O_QUIET:
            o.quiet = 1;
            cmd_progress_quiet();
            break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (cmd_opts_max_args(&p, 0))
        return CMD_EXIT_USAGE;
    if (!o.config)
        return cmd_usage_error(CMD, "--config is required");
    /* --q naming a container of several arrays: every q/k pair in it */
    posenc_container *pc = NULL;
    pe_pairs *pp = NULL;
    char qpath[4096];
    if (o.q && (!o.k || cmd_same_file(o.k, o.q))) {
        int prc = open_pairs(&o, o.q, 0, &pc, &pp, qpath, sizeof qpath);
        if (prc) {
            posenc_container_close(pc);
            return prc;
        }
    }
    if (pp) {
        if (o.ek && (!o.eq || !cmd_same_file(o.ek, o.eq))) {
            pe_pairs_free(pp);
            posenc_container_close(pc);
            return cmd_usage_error(CMD, "--q names a container of q/k pairs: give their "
                                           "rotated pairs as one --expect-q container");
        }
        o.k = o.q;
        o.ek = o.eq;
    } else if (o.glob) {
        posenc_container_close(pc);
        return cmd_usage_error(CMD, "--pairs needs --q naming a container of q/k pairs");
    }
    if (!o.q != !o.k) {
        posenc_container_close(pc);
        return cmd_usage_error(CMD, "--q and --k go together");
    }
    if ((o.eq || o.ek) && !o.q)
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--expect-q/--expect-k need --q and --k (the pre-RoPE dumps)"));
    if (o.rotated && !o.q)
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--rotated needs --q and --k"));
    if (o.has_prec && !(o.eq || o.ek))
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--precision needs --expect-q/--expect-k (it picks the "
                                       "rotation the runtime's dumps are compared with)"));
    if (o.rotated && (o.eq || o.ek))
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--rotated and --expect-q/--expect-k exclude each other"));
    if (o.positions_spec && o.offset)
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--positions and --offset exclude each other"));
    if (o.gguf && (o.q || o.k || o.eq || o.ek || o.rotated || o.positions_spec))
        return pairs_done(pc, pp, cmd_usage_error(CMD, "--gguf checks a GGUF file against the config: it takes "
                                       "no dumps (--q, --k, --expect-q/k, --rotated, --positions)"));

    {
        const char *ins[] = { o.config, o.q, o.k, o.eq, o.ek, o.positions_spec, o.gguf };
        int crc = cmd_check_outputs(CMD, o.reports, (size_t)o.n_reports, ins,
                                    sizeof ins / sizeof *ins);
        if (crc)
            return pairs_done(pc, pp, crc);
    }
    posenc_model *m = NULL;
    int lrc = cmd_load_config(CMD, o.config, o.family, &m);
    if (lrc)
        return pairs_done(pc, pp, lrc);
    struct vstate v = { 0 };
    posenc_encoding enc = posenc_model_encoding(m);
    if (!(v.root = pe_report_new(posenc_version()))) {
        posenc_model_free(m);
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    cJSON *cfgj = cJSON_GetObjectItemCaseSensitive(v.root, "config");
    cJSON *inputs = cJSON_GetObjectItemCaseSensitive(v.root, "inputs");
    pe_report_set_config(v.root, o.config, m, o.layer_type, o.gguf != NULL);
    cJSON_AddNumberToObject(inputs, "seed", (double)o.seed);
    cJSON_AddNumberToObject(inputs, "samples", o.samples);
    int rc = 0;
    size_t nt = posenc_model_layer_type_count(m);
    posenc_rope_config cfg;
    if (enc != POSENC_ENC_ROPE) {
        if (o.q || o.gguf)
            rc = cmd_usage_error(CMD, "--%s a RoPE model; '%s' uses %s",
                                 o.q ? "q/--k need" : "gguf needs", o.config,
                                 posenc_encoding_name(enc));
        else
            rc = verify_bias(&v, &o, m, enc);
    } else if (!o.q && !o.gguf && !o.layer_type && nt > 1) {
        /* a config alone with several layer types: check each */
        cJSON *ropes = cJSON_AddObjectToObject(cfgj, "rope");
        for (size_t i = 0; i < nt && rc == 0; i++) {
            const char *lt = posenc_model_layer_type_name(m, i);
            if ((rc = rope_cfg(&o, m, lt, 1, &cfg)))
                break;
            cJSON_AddItemToObject(ropes, lt, pe_report_rope(&cfg, NULL));
            rc = verify_rope_config(&v, &o, &cfg, lt);
        }
    } else if (pp) {
        rc = verify_pairs(&v, &o, m, pc, pp, qpath, inputs);
    } else if ((rc = rope_cfg(&o, m, o.layer_type, !o.gguf, &cfg)) == 0) {
        cJSON_AddItemToObject(cfgj, "rope", pe_report_rope(&cfg, NULL));
        rc = o.gguf ? verify_gguf(&v, &o, m, &cfg, inputs)
             : o.q  ? verify_dumps(&v, &o, m, &cfg, inputs)
                    : verify_rope_config(&v, &o, &cfg, NULL);
    }
    if (rc)
        goto out;
    cJSON_ReplaceItemInObjectCaseSensitive(v.root, "ok", cJSON_CreateBool(v.failed == 0));
    for (int i = 0; i < o.n_reports; i++)
        if (pe_report_write(v.root, o.reports[i], &err) != POSENC_OK) {
            rc = cmd_fail(CMD, &err);
            goto out;
        }
    if (!o.quiet && !o.report_stdout && (rc = print_summary(&v)))
        goto out;
    rc = v.failed ? CMD_EXIT_CHECK : CMD_EXIT_OK;
out:
    cJSON_Delete(v.root);
    posenc_model_free(m);
    return pairs_done(pc, pp, rc);
}
