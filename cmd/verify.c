/* cmd/verify.c: posenc verify: prove relative invariance from a config, check a runtime's Q/K
 * dumps against posenc's rotation, diagnose the likely mistake, write reports for CI.
 *
 * Options and glue over formats/engines/verifyrun.h, which runs the checks into the report tree; this
 * file checks that the options fit together, prints the summary and picks the exit status. */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/common.h"
#include "cmd/opts.h"
#include "formats/report/report.h"
#include "formats/engines/verifyrun.h"

#define CMD "verify"
#define MAX_REPORTS 8

/* ---- options ---- */
struct opts {
    pe_vrun_req r;
    const char *reports[MAX_REPORTS];
    int n_reports, quiet;
    int report_stdout;     /* --report -: the JSON report is stdout, the summary is not printed */
};

/* How a failure of the run reads (verifyrun.h PE_VRUN_FAULT_*). */
static int run_fail(const pe_vrun *v, const posenc_model *m, const posenc_error *err)
{
    switch (v->fault) {
    case PE_VRUN_FAULT_USAGE: return cmd_usage_error(CMD, "%s", err->msg);
    case PE_VRUN_FAULT_USAGE_ARG: cmd_msg(CMD, "%s", err->msg); return CMD_EXIT_USAGE;
    case PE_VRUN_FAULT_ROPE: return cmd_rope_fail(CMD, m, err);
    default: return cmd_fail(CMD, err);
    }
}

/* --q as a container of pairs (pe_vrun_open_pairs), or *pairs NULL. Returns an exit status. */
static int open_pairs(const struct opts *o, const char *spec, posenc_container **c,
                      pe_pairs **pairs, char *path, size_t plen)
{
    posenc_error err = { 0 };
    int is_usage;
    if (pe_vrun_open_pairs(spec, o->r.glob, 0, o->r.assume_bf16, c, pairs, path, plen,
                           &is_usage, &err) == POSENC_OK)
        return 0;
    return is_usage ? cmd_usage_error(CMD, "%s", err.msg) : cmd_fail(CMD, &err);
}

/* Free what open_pairs made; returns rc. */
static int pairs_done(posenc_container *c, pe_pairs *p, int rc)
{
    pe_pairs_free(p);
    posenc_container_close(c);
    return rc;
}

/* The options that need or exclude each other, in the order they are reported. With --q naming
 * a container of pairs, --k and --expect-k follow --q and --expect-q. Returns an exit status. */
static int check_options(pe_vrun_req *r)
{
    if (r->qpairs) {
        if (r->ek && (!r->eq || !cmd_same_file(r->ek, r->eq)))
            return cmd_usage_error(CMD, "--q names a container of q/k pairs: give their "
                                        "rotated pairs as one --expect-q container");
        r->k = r->q;
        r->ek = r->eq;
    }
    const int dumps = r->q || r->k || r->eq || r->ek || r->rotated || r->positions;
    const struct { int bad; const char *msg; } rules[] = {
        { r->glob && !r->qpairs, "--pairs needs --q naming a container of q/k pairs" },
        { !r->q != !r->k, "--q and --k go together" },
        { (r->eq || r->ek) && !r->q,
          "--expect-q/--expect-k need --q and --k (the pre-RoPE dumps)" },
        { r->rotated && !r->q, "--rotated needs --q and --k" },
        { r->has_prec && !(r->eq || r->ek || r->rotated),
          "--precision needs --expect-q/--expect-k or --rotated (it picks the rotation the "
          "runtime's dumps are held to)" },
        { r->max_ulp >= 0 && !r->has_prec,
          "--max-ulp needs --precision (the rotation the ulps are counted from)" },
        { r->max_ulp >= 0 && !(r->eq || r->ek),
          "--max-ulp needs --expect-q/--expect-k and the pre-RoPE dumps" },
        { r->rotated && (r->eq || r->ek), "--rotated and --expect-q/--expect-k exclude each other" },
        { r->positions && r->offset, "--positions and --offset exclude each other" },
        { r->gguf && dumps && !r->q, "--gguf with dumps needs --q and --k (the pre-RoPE dumps)" },
    };
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (rules[i].bad)
            return cmd_usage_error(CMD, "%s", rules[i].msg);
    return CMD_EXIT_OK;
}

enum {
    O_MAXPOS = 256, O_SEED, O_SAMPLES, O_TOL, O_HFTOL, O_Q, O_K, O_ROTATED, O_EQ, O_EK, O_REPORT,
    O_MAXULP
};

static const struct cmd_opt verify_opts[] = {
    CMD_OPT_GROUP("options:"),
    { .id = CMD_O_CONFIG },
    { .id = CMD_O_LAYER_TYPE },
    { .id = CMD_O_FAMILY },
    { .id = CMD_O_STYLE },
    { O_MAXPOS, "max-position", 0, "N", CMD_T_I64, 2, (int64_t)1 << 48,
      "largest offset checked (default: max_position_embeddings)", NULL },
    { O_SEED, "seed", 0, "S", CMD_T_I64, 0, INT64_MAX, "seed of the random q and k (default 1)",
      NULL },
    { O_SAMPLES, "samples", 0, "N", CMD_T_I64, 1, 4096,
      "random (q, k) pairs per distance (default 16)", NULL },
    { O_TOL, "tolerance", 0, "X", CMD_T_NUM, 0, 0,
      "invariance tolerance; for comparisons an allowance relative\n"
      "to the row's largest element on top of the bound (VERDICT)", NULL },
    { O_HFTOL, "hf-tolerance", 0, "X", CMD_T_NUM, 0, 0,
      "make the float32-table drift a failing check at X", NULL },
    { O_Q, "q", 0, "FILE", CMD_T_STR, 0, 0, "query dump (pre-RoPE unless --rotated)", NULL },
    { O_K, "k", 0, "FILE", CMD_T_STR, 0, 0, "key dump (pre-RoPE unless --rotated)", NULL },
    { .id = CMD_O_DUMP_LAYOUT },
    { .id = CMD_O_ASSUME_BF16 },
    { .id = CMD_O_OFFSET },
    { .id = CMD_O_POSITIONS },
    { .id = CMD_O_SEQ_LEN, .help = "sequence length the runtime ran at, for dynamic/longrope\n"
                                   "selection; for llama.cpp its context size n_ctx\n"
                                   "(default: largest position + 1)" },
    { O_ROTATED, "rotated", 0, NULL, CMD_T_FLAG, 0, 0,
      "the dumps are already rotated (of position-independent\n"
      "content, e.g. layer 0 of a repeated token)", NULL },
    { O_EQ, "expect-q", 0, "FILE", CMD_T_STR, 0, 0,
      "the runtime's rotated q to compare with posenc's rotation", NULL },
    { O_EK, "expect-k", 0, "FILE", CMD_T_STR, 0, 0, "the runtime's rotated k", NULL },
    { .id = CMD_O_N_CTX, .help = "llama.cpp's context size n_ctx (per sequence), which picks\n"
                                 "LongRoPE's long factors past original_context_length:\n"
                                 "the ggml profile and --precision ggml (default: --seq-len)" },
    { .id = CMD_O_GGUF, .help = "check a llama.cpp GGUF file's RoPE keys and tensors against\n"
                                "what convert_hf_to_gguf.py writes for the config; with\n"
                                "dumps, hold them to what llama.cpp computes with it" },
    { .id = CMD_O_PRECISION,
      .help = "hold the runtime's dumps to one profile alone: exact,\n"
              "hf (transformers' float32 tables), vllm (vLLM's\n"
              "cos_sin_cache) or ggml (llama.cpp's CPU numerics)" },
    { O_MAXULP, "max-ulp", 0, "N", CMD_T_I64, 0, 1 << 30,
      "with --precision: every element within N ulps of posenc's\n"
      "rotation under that precision (0: bit-exact)", NULL },
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
    pe_vrun_req *r = &o.r;
    const char *family = NULL;
    r->seed = 1;
    r->samples = 16;
    r->max_ulp = -1;
    r->layout = POSENC_APPLY_BHSD;
    posenc_error err = { 0 };
    int c;
    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_verify_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_CONFIG: r->config = p.arg; break;
        case CMD_O_LAYER_TYPE: r->layer_type = p.arg; break;
        case CMD_O_FAMILY: family = p.arg; break;
        case CMD_O_STYLE: r->style = p.style; r->has_style = 1; break;
        case O_MAXPOS: r->max_position = p.i64; break;
        case O_SEED: r->seed = (uint64_t)p.i64; break;
        case O_SAMPLES: r->samples = (int)p.i64; break;
        case O_TOL:
        case O_HFTOL:
            if (!(p.num > 0))
                return cmd_usage_error(CMD, "%s: '%s' must be positive",
                                       c == O_TOL ? "--tolerance" : "--hf-tolerance", p.arg);
            *(c == O_TOL ? &r->tol : &r->hf_tol) = p.num;
            *(c == O_TOL ? &r->has_tol : &r->has_hf_tol) = 1;
            break;
        case O_Q: r->q = p.arg; break;
        case O_K: r->k = p.arg; break;
        case CMD_O_DUMP_LAYOUT: r->layout = (posenc_apply_layout)p.dump_layout; break;
        case CMD_O_OFFSET: r->offset = p.i64; break;
        case CMD_O_POSITIONS: r->positions = p.arg; break;
        case CMD_O_SEQ_LEN: r->seq_len = p.i64; break;
        case CMD_O_N_CTX: r->n_ctx = p.i64; break;
        case O_ROTATED: r->rotated = 1; break;
        case O_MAXULP: r->max_ulp = (int)p.i64; break;
        case CMD_O_ASSUME_BF16: r->assume_bf16 = 1; break;
        case CMD_O_PRECISION: r->prec = p.precision; r->has_prec = 1; break;
        case O_EQ: r->eq = p.arg; break;
        case O_EK: r->ek = p.arg; break;
        case CMD_O_VARIANT: r->variant = p.arg; break;
        case CMD_O_GGUF: r->gguf = p.arg; break;
        case CMD_O_PAIRS: r->glob = p.arg; break;
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
    if (!r->config)
        return cmd_usage_error(CMD, "--config is required");
    /* --q naming a container of several arrays: every q/k pair in it */
    posenc_container *pc = NULL;
    char qpath[4096], side_positions[4096 + 16];
    if (r->q && (!r->k || cmd_same_file(r->k, r->q))) {
        int prc = open_pairs(&o, r->q, &pc, &r->qpairs, qpath, sizeof qpath);
        if (prc)
            return pairs_done(pc, NULL, prc);
        /* one file with both sides (examples/capture_llama.c): pre.* is --q, rope.* --expect-q,
         * and its "positions" member the positions unless told otherwise */
        if (r->qpairs && pe_pairs_take_side(r->qpairs, 1)) {
            if (r->rotated)
                return pairs_done(pc, r->qpairs, cmd_usage_error(CMD, "'%s' holds the dumps "
                                  "before and after RoPE: --rotated does not apply", qpath));
            if (!r->eq)
                r->eq = r->q;
            for (size_t i = 0; i < posenc_container_count(pc) && !r->positions && !r->offset;
                 i++)
                if (strcmp(posenc_container_array(pc, i)->name, "positions") == 0) {
                    snprintf(side_positions, sizeof side_positions, "%s:positions", qpath);
                    r->positions = side_positions;
                }
        }
    }
    /* llama.cpp ran at n_ctx: that is the sequence length its LongRoPE choice follows, and
     * --seq-len's documented meaning for llama.cpp (the reference picks the same factors) */
    if (r->n_ctx && !r->seq_len)
        r->seq_len = r->n_ctx;
    int rc = check_options(r);
    if (rc)
        return pairs_done(pc, r->qpairs, rc);
    r->qc = pc;
    r->qpath = qpath;
    const char *ins[] = { r->config, r->q, r->k, r->eq, r->ek, r->positions, r->gguf };
    if ((rc = cmd_check_outputs(CMD, o.reports, (size_t)o.n_reports, ins,
                                sizeof ins / sizeof *ins)))
        return pairs_done(pc, r->qpairs, rc);
    posenc_model *m = NULL;
    if ((rc = cmd_load_config(CMD, r->config, family, &m)))
        return pairs_done(pc, r->qpairs, rc);
    pe_vrun v;
    if (pe_vrun_exec(&v, r, m, &err) != POSENC_OK) {
        rc = run_fail(&v, m, &err);
        goto out;
    }
    /* the dumps are read: the progress line ends (its "N MiB in S s") before the summary */
    cmd_progress_finish();
    cmd_commit_status = v.failed ? CMD_EXIT_CHECK : CMD_EXIT_OK; /* a signal after the commit */
    if (pe_report_write_all(v.root, o.reports, (size_t)o.n_reports, &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    if (!o.quiet && !o.report_stdout) {
        char *t = pe_report_text(v.root, v.failed, v.n_checks);
        if (!t) {
            cmd_msg(CMD, "out of memory");
            rc = CMD_EXIT_ERROR;
            goto out;
        }
        fputs(t, stdout);
        free(t);
    }
    rc = v.failed ? CMD_EXIT_CHECK : CMD_EXIT_OK;
out:
    pe_vrun_free(&v);
    posenc_model_free(m);
    return pairs_done(pc, r->qpairs, rc);
}
