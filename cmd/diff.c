/* cmd/diff.c: posenc diff A[:member] B[:member]: compare two arrays element by element.
 *
 * Options and printing over lib/verify/diff.c (the statistics) and the streaming readers of formats/:
 * both inputs are read in chunks of CHUNK_ELEMS elements, so memory stays bounded. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/common.h"
#include "cmd/opts.h"
#include "formats/report/diffreport.h"
#include "posenc/apply.h"

#define CMD "diff"
#define CHUNK_ELEMS ((size_t)1 << 16)


struct input {
    const char *spec;
    posenc_reader *r;
    const posenc_array_info *info; /* borrowed from r */
    unsigned char *buf;
};

/* Stream both inputs through the engine, CHUNK_ELEMS elements at a time. */
static posenc_status compare(struct input *in, posenc_diff *d, posenc_error *err)
{
    uint64_t n;
    posenc_status st = posenc_shape_size(in[1].info->ndim, in[1].info->shape, POSENC_DT_U8, &n,
                                         NULL, err);
    for (int i = 0; i < 2 && st == POSENC_OK; i++)
        if (!(in[i].buf = malloc(CHUNK_ELEMS * posenc_dtype_size(in[i].info->dtype))))
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    for (uint64_t done = 0; done < n && st == POSENC_OK;) {
        size_t k = n - done < CHUNK_ELEMS ? (size_t)(n - done) : CHUNK_ELEMS;
        for (int i = 0; i < 2 && st == POSENC_OK; i++)
            st = posenc_reader_read(in[i].r, in[i].buf, k, err);
        if (st == POSENC_OK)
            st = posenc_diff_feed(d, in[0].buf, in[0].info->dtype, in[1].buf, in[1].info->dtype,
                                  k, err);
        done += k;
    }
    return st;
}

static int same_shape(const posenc_array_info *a, const posenc_array_info *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

static int emit(const pe_diff_report *rep, int json, int quiet)
{
    if (quiet)
        return 0;
    char *t = json ? pe_diff_report_json(rep) : pe_diff_report_text(rep);
    if (!t) {
        cmd_msg(CMD, "out of memory");
        return -1;
    }
    fputs(t, stdout);
    free(t);
    return 0;
}

enum { OPT_ATOL = 256, OPT_RTOL, OPT_MAX_ULP, OPT_EQUAL_NAN, OPT_BUCKETS, OPT_TOP };

static const struct cmd_opt diff_opts[] = {
    CMD_OPT_GROUP("options:"),
    { OPT_ATOL, "atol", 0, "X", CMD_T_NUM, 0, 0, "absolute tolerance (with --rtol)", NULL },
    { OPT_RTOL, "rtol", 0, "X", CMD_T_NUM, 0, 0,
      "relative tolerance (with --atol); default for both:\n"
      "torch's for the dtypes (f32: 1e-5, 1.3e-6)", NULL },
    { OPT_MAX_ULP, "max-ulp", 0, "N", CMD_T_I64, 0, INT64_MAX,
      "also fail elements more than N ulps apart (alone: the\n"
      "only criterion)", NULL },
    { OPT_EQUAL_NAN, "equal-nan", 0, NULL, CMD_T_FLAG, 0, 0, "NaN in both A and B counts as equal",
      NULL },
    { .id = CMD_O_DTYPE, .help = "ulp dtype f16, bf16, f32, f64 (default: B's)" },
    { .id = CMD_O_DUMP_LAYOUT,
      .help = "A and B are Q/K dumps in layout bhsd, bshd, shd, hsd, sd,\n"
              "bsf or sf:\n"
              "report the error per position bucket" },
    { OPT_BUCKETS, "buckets", 0, "N", CMD_T_I64, 1, INT64_MAX,
      "buckets of N positions (default 0-63, 64-127, 128-255,\n"
      "... doubling)", NULL },
    { OPT_TOP, "top", 0, "K", CMD_T_I64, 0, POSENC_DIFF_MAX_TOP,
      "list the K worst elements (default 5, 0-1000)", NULL },
    { .id = CMD_O_JSON },
    { .id = CMD_O_ASSUME_BF16 },
    { .id = CMD_O_QUIET, .help = "print nothing; the exit status tells" },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_diff_spec = {
    "diff",
    "usage: posenc diff [options] A[:member] B[:member]\n"
    "\n"
    "Compare array A (actual) with B (expected), both in any format posenc reads ('-' =\n"
    "NPY on stdin): shapes, dtypes, max abs/rel error, the ulp histogram, the worst\n"
    "elements. An element is close when |a - b| <= atol + rtol * |b|\n"
    "(torch.testing.assert_close); infinities must match, NaN matches nothing.\n"
    "Exit 0 when every element is close, 1 when shapes differ or one is not.\n"
    "\n",
    26, diff_opts
};

int cmd_diff(int argc, char **argv)
{
    posenc_diff_opts o = { .top_k = 5, .seq_axis = -1 };
    posenc_read_opts ropts = { 0, POSENC_FMT_AUTO };
    posenc_error err = { 0 };
    int atol_set = 0, rtol_set = 0, dtype_set = 0, json = 0, quiet = 0, layout_set = 0;
    posenc_apply_layout layout = POSENC_APPLY_BHSD;
    int c;

    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_diff_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case OPT_ATOL:
        case OPT_RTOL: {
            const char *name = c == OPT_ATOL ? "--atol" : "--rtol";
            if (p.num < 0)
                return cmd_usage_error(CMD, "%s: '%s' is negative", name, p.arg);
            *(c == OPT_ATOL ? &o.atol : &o.rtol) = p.num;
            *(c == OPT_ATOL ? &atol_set : &rtol_set) = 1;
            break;
        }
        case OPT_MAX_ULP:
            o.use_ulp = 1;
            o.max_ulp = (uint64_t)p.i64;
            break;
        case OPT_EQUAL_NAN: o.equal_nan = 1; break;
        case CMD_O_DTYPE:
            o.ulp_dtype = p.dtype;
            if (!posenc_dtype_is_float(o.ulp_dtype))
                return cmd_usage_error(CMD, "--dtype: '%s' is not a float dtype "
                                               "(f16, bf16, f32, f64)", p.arg);
            dtype_set = 1;
            break;
        case CMD_O_DUMP_LAYOUT: layout = p.dump_layout; layout_set = 1; break;
        case OPT_BUCKETS: o.bucket_width = p.i64; break;
        case OPT_TOP: o.top_k = (int)p.i64; break;
        case CMD_O_JSON: json = 1; break;
        case CMD_O_ASSUME_BF16: ropts.assume_bf16 = 1; break;
        case CMD_O_QUIET: quiet = 1; break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (argc - p.optind != 2)
        return cmd_usage_error(CMD, argc - p.optind < 2 ? "need two arrays A and B"
                                                         : "too many arguments: give A and B");
    if (atol_set != rtol_set)
        return cmd_usage_error(CMD, "--atol and --rtol go together, as in "
                                       "torch.testing.assert_close (--rtol 0: absolute only)");
    if (o.bucket_width && !layout_set)
        return cmd_usage_error(CMD, "--buckets needs --layout (which axis holds positions)");
    struct input in[2] = { { argv[p.optind], NULL, NULL, NULL },
                           { argv[p.optind + 1], NULL, NULL, NULL } };
    if (strcmp(in[0].spec, "-") == 0 && strcmp(in[1].spec, "-") == 0)
        return cmd_usage_error(CMD, "only one input can be '-' (stdin)");

    int rc = CMD_EXIT_ERROR;
    posenc_diff *d = NULL;
    for (int i = 0; i < 2; i++) {
        if (posenc_reader_open(in[i].spec, &ropts, &in[i].r, &err) != POSENC_OK)
            goto fail;
        in[i].info = posenc_reader_info(in[i].r);
    }
    pe_diff_report rep = { .spec = { in[0].spec, in[1].spec },
                           .info = { in[0].info, in[1].info }, .opts = &o,
                           .layout = layout_set ? posenc_apply_layout_name(layout) : NULL };
    if (!same_shape(in[0].info, in[1].info)) {
        /* a difference, not an error: one line (or the JSON object), exit 1 */
        rc = emit(&rep, json, quiet) ? CMD_EXIT_ERROR : CMD_EXIT_CHECK;
        goto out;
    }
    if (layout_set) {
        posenc_apply_shape sh;
        /* only the position axis matters here: a flat layout splits into one vector a token */
        if (posenc_apply_shape_split(layout, in[1].info->ndim, in[1].info->shape, 1, 0, &sh,
                                     &err) != POSENC_OK) {
            posenc_error_prefix(&err, err.code, "'%s': --layout %s: ", in[1].spec,
                                posenc_apply_layout_name(layout));
            goto fail;
        }
        o.seq_axis = posenc_apply_layout_seq_axis(layout);
    }
    posenc_dtype adt = in[0].info->dtype, bdt = in[1].info->dtype;
    if (!dtype_set) { /* the ulp of B's dtype; integers have none, so f64's */
        o.ulp_dtype = posenc_dtype_is_float(bdt) ? bdt : POSENC_DT_F64;
        if (!posenc_dtype_is_float(bdt))
            rep.notes[rep.n_notes++] = "B holds integers: ulps are counted in f64 (--dtype picks "
                                       "another)";
    }
    if (adt == POSENC_DT_I64 || bdt == POSENC_DT_I64)
        rep.notes[rep.n_notes++] = "i64 values are compared as doubles: exact up to 2^53; past it two that differ stay apart by the double spacing";
    if (posenc_dtype_is_float(adt) && posenc_dtype_is_float(bdt) &&
        (adt != o.ulp_dtype || bdt != o.ulp_dtype))
        rep.notes[rep.n_notes++] = "the values are rounded to the ulp dtype before ulps are counted";
    if (atol_set || !o.use_ulp) {
        o.use_tol = 1;
        rep.tol_src = atol_set ? "options" : "torch defaults";
        if (!atol_set)
            posenc_diff_default_tol(in[0].info->dtype, in[1].info->dtype, &o.rtol, &o.atol);
    }
    if (posenc_diff_new(&o, in[1].info->ndim, in[1].info->shape, &d, &err) != POSENC_OK) {
        if (err.code == POSENC_ERANGE) {
            rc = cmd_usage_error(CMD, "--buckets: %s", err.msg);
            goto out;
        }
        goto fail;
    }
    if (compare(in, d, &err) != POSENC_OK)
        goto fail;
    posenc_diff_result r;
    posenc_diff_result_get(d, &r);
    rep.r = &r;
    rep.pass = r.outside == 0;
    if (emit(&rep, json, quiet))
        goto out;
    rc = rep.pass ? CMD_EXIT_OK : CMD_EXIT_CHECK;
    goto out;
fail:
    rc = cmd_fail(CMD, &err);
out:
    for (int i = 0; i < 2; i++) {
        posenc_reader_close(in[i].r);
        free(in[i].buf);
    }
    posenc_diff_free(d);
    return rc;
}
