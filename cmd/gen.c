/* cmd/gen.c: posenc gen: parse every option into struct gen_args, resolve the encoding's
 * parameters, and write its table source (lib/tables.h) through the output pipeline
 * (formats/out.h): RoPE in gen_rope(), the other encodings in gen_nonrope(). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "describe_out.h"
#include "opts.h"
#include "out.h"
#include "tables.h"
#include "weights.h"

#define CMD "gen"

/* Everything gen was asked, parsed from the command line. */
struct gen_args {
    const char *config;            /* --config FILE, or NULL */
    const char *family;            /* --family NAME, or NULL */
    const char *out;               /* -o OUT ("-" = one array as NPY on stdout) */
    const char *array;             /* --array NAME: write only this array (NULL = all) */
    posenc_write_opts wopts;       /* --format, --compress */
    posenc_dtype dtype;            /* --dtype (default f32) */
    int64_t seq_len;               /* --seq-len, 0 when not given */
    const pe_positions *positions; /* --positions, NULL when not given */
    int force;                     /* --force: allow tables past the size limit */
    uint64_t size_limit;           /* bytes a table may have without --force */
    posenc_encoding encoding;      /* from the config, or --encoding */
    int encoding_forced;           /* --encoding given */
    /* non-rotary parameters; 0 / NULL = from the config or the encoding's default */
    int heads;                     /* --heads */
    int d_model;                   /* --d-model */
    int num_buckets;               /* --num-buckets */
    int max_distance;              /* --max-distance */
    int max_relative_position;     /* --max-relative-position */
    const char *convention;        /* --convention symmetric|causal|keyindex (ALiBi) */
    const char *variant;           /* --variant (ALiBi kind or sinusoidal variant) */
    const char *weights;           /* --weights model.safetensors */
    const char *tensor;            /* --tensor NAME in --weights */
    int decoder;                   /* --decoder: T5 causal buckets (default from config) */
    int broadcast;                 /* --broadcast: ALiBi bias as [heads, 1, k_len] */
    unsigned given;                /* the encoding parameters given (PE_TP_BIT mask) */
};

/* Write the tables of a non-rotary encoding (a->encoding != POSENC_ENC_ROPE). m may be NULL when
 * no --config was given. Prints its own errors; returns an exit status. */
static int gen_nonrope(const struct gen_args *a, const posenc_model *m);
#define DEFAULT_SIZE_LIMIT ((uint64_t)4 << 30) /* 4 GiB of output without --force */
#define POS_MAX CMD_POS_MAX                      /* largest position / --seq-len accepted */

enum {
    OPT_ENCODING = 256, OPT_TABLE_LAYOUT, OPT_ARRAY, OPT_HEADS, OPT_D_MODEL, OPT_NUM_BUCKETS,
    OPT_MAX_DISTANCE, OPT_MAX_REL, OPT_CONVENTION, OPT_WEIGHTS, OPT_TENSOR, OPT_DECODER,
    OPT_BROADCAST
};

static const struct cmd_opt gen_opts[] = {
    CMD_OPT_GROUP("input:"),
    { .id = CMD_O_CONFIG, .help = "Hugging Face config.json" },
    { .id = CMD_O_FAMILY },
    { OPT_ENCODING, "encoding", 0, "E", CMD_T_STR, 0, 0,
      "rope, alibi, t5, shaw, sinusoidal or learned (default: what\n"
      "the config uses)", NULL },
    { .id = CMD_O_LAYER_TYPE, .arg = "T", .help = "layer type of a config with several (Gemma 3/4, MiMo)" },
    CMD_OPT_GROUP("positions:"),
    { .id = CMD_O_SEQ_LEN, .help = "rows for positions 0..N-1; N is also the sequence length\n"
                             "that picks dynamic and longrope parameters" },
    { .id = CMD_O_POSITIONS, .arg = "LIST|FILE",
      .help = "rows for these positions only: 0,1,8-15 or a file of\n"
              "integers (.npy, .npz:NAME, ...); parameters use\n"
              "max(position)+1 as the sequence length\n"
              "(default: 0..max_position_embeddings-1)" },
    CMD_OPT_GROUP("RoPE tables:"),
    { .id = CMD_O_PRECISION, .help = "exact (default: correctly rounded values), hf\n"
                               "(transformers' float32 pipeline), vllm (vLLM's\n"
                               "cos_sin_cache; rows default to the cache's length) or\n"
                               "ggml (llama.cpp's CPU numerics for the GGUF its\n"
                               "converter writes)" },
    { .id = CMD_O_MAX_MODEL_LEN, .help = "vllm: the runtime's max_model_len, which picks LongRoPE's\n"
                                   "factors (default: max_position_embeddings)" },
    { OPT_TABLE_LAYOUT, "table-layout", 0, "L", CMD_T_STR, 0, 0,
      "hf (default: cat(freqs, freqs), rotary_dim wide), half\n"
      "(rotary_dim/2 wide), interleaved (each frequency twice)\n"
      "or vllm (one array cos_sin_cache = cat(cos half, sin half))", NULL },
    { OPT_TABLE_LAYOUT, "layout", 0, "L", CMD_T_STR, 0, 0,
      "deprecated alias of --table-layout (in apply and verify\n"
      "--layout is the dump layout)", "--table-layout" },
    { OPT_ARRAY, "array", 0, "NAME", CMD_T_STR, 0, 0,
      "write only this array: cos, sin, cos_sin_cache\n"
      "(--table-layout vllm) or inv_freq (required for .npy\n"
      "output and -o -)", NULL },
    CMD_OPT_GROUP("output:"),
    { .id = CMD_O_OUTPUT, .help = "OUT.npz, a directory (OUT/), OUT.npy, OUT.h5,\n"
                            "OUT.safetensors, OUT.h, OUT.bin, OUT.gguf (with\n"
                            "llama.cpp's RoPE keys), or - for NPY on stdout" },
    { .id = CMD_O_FORMAT },
    { .id = CMD_O_DTYPE, .help = "f32 (default), f64, f16 or bf16" },
    { .id = CMD_O_COMPRESS },
    { .id = CMD_O_FORCE, .help = "write a table larger than 4 GiB" },
    { .id = CMD_O_QUIET },
    CMD_OPT_GROUP("non-rotary encodings:"),
    { OPT_HEADS, "heads", 0, "N", CMD_T_I64, 1, 1 << 16,
      "ALiBi/T5: number of heads (default: from the config)", NULL },
    { .id = CMD_O_VARIANT, .arg = "NAME",
      .help = "ALiBi slopes reference, mpt or falcon; sinusoidal vaswani,\n"
              "t2t, fairseq, marian or cos_sin" },
    { OPT_CONVENTION, "convention", 0, "C", CMD_T_STR, 0, 0,
      "ALiBi bias convention symmetric, causal or keyindex", NULL },
    { OPT_BROADCAST, "broadcast", 0, NULL, CMD_T_FLAG, 0, 0,
      "ALiBi bias as [heads, 1, keys] instead of [heads, q, keys]", NULL },
    { OPT_NUM_BUCKETS, "num-buckets", 0, "N", CMD_T_I64, 2, 1 << 20,
      "T5 relative_attention_num_buckets", NULL },
    { OPT_MAX_DISTANCE, "max-distance", 0, "N", CMD_T_I64, 1, 1 << 30,
      "T5 relative_attention_max_distance", NULL },
    { OPT_DECODER, "decoder", 0, NULL, CMD_T_FLAG, 0, 0, "T5 decoder (causal) buckets", NULL },
    { OPT_MAX_REL, "max-relative-position", 0, "N", CMD_T_I64, 1, 1 << 30,
      "Shaw clipping distance k", NULL },
    { OPT_D_MODEL, "d-model", 0, "N", CMD_T_I64, 1, 1 << 20, "sinusoidal width", NULL },
    { OPT_WEIGHTS, "weights", 0, "FILE", CMD_T_STR, 0, 0,
      "T5/Shaw embedding weights or a learned table's checkpoint", NULL },
    { OPT_TENSOR, "tensor", 0, "NAME", CMD_T_STR, 0, 0, "tensor in --weights (learned table)",
      NULL },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_gen_spec = {
    "gen",
    "usage: posenc gen --config FILE -o OUT [options]\n"
    "\n"
    "Write the position-encoding tables a model config implies: RoPE cos/sin tables and\n"
    "inv_freq, or the bias/embedding tables of ALiBi, T5, Shaw and sinusoidal encodings.\n"
    "\n",
    27, gen_opts
};

/* Options only the RoPE path reads (the gen_args contract has no field for them). */
struct rope_opts {
    const char *layer_type;
    posenc_precision precision;
    posenc_layout layout;
    int precision_set, layout_set;
    int64_t max_model_len;         /* --max-model-len (vllm precision), 0 when not given */
};

/* ---- helpers ---- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A C header holds about 15 bytes of text per value ("-0.123456789f, "). Its rows default to
 * max_position_embeddings like every format's, which for a long-context model is hundreds of MB
 * of source no compiler wants: without --seq-len, --positions or --force, refuse a header of
 * more than this many values (about 15 MB of text) instead of writing it. */
#define HEADER_DEFAULT_VALUES ((uint64_t)1 << 20)
#define HEADER_TEXT_PER_VALUE 15

static int header_default_check(const struct gen_args *a, uint64_t nvalues, int64_t rows)
{
    if (a->wopts.format != POSENC_FMT_CHEADER || a->seq_len || a->positions || a->force ||
        nvalues <= HEADER_DEFAULT_VALUES)
        return CMD_EXIT_OK;
    char hs[32];
    pe_out_human_size(nvalues * HEADER_TEXT_PER_VALUE, hs, sizeof hs);
    cmd_msg(CMD, "'%s': a C header of all %" PRId64 " default positions would hold %" PRIu64
               " values (about %s of text); pass --seq-len N, --positions or --force", a->out,
               rows, nvalues, hs);
    return CMD_EXIT_ERROR;
}

static int is_float_out(posenc_dtype dt)
{
    return dt == POSENC_DT_F32 || dt == POSENC_DT_F64 || dt == POSENC_DT_F16 ||
           dt == POSENC_DT_BF16;
}

/* ---- one way to write any encoding: a table source (lib/tables.h) through the output
 * pipeline (formats/out.h) ---- */

#define T5_ENCODER_TENSOR "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
#define T5_DECODER_TENSOR "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"

/* One table being written: what the encoding resolved to, its source and its metadata. */
struct job {
    const struct gen_args *a;
    const posenc_model *m;
    const posenc_bias_config *bc;
    const char *enc;                 /* encoding name for messages and metadata */
    pe_table t;
    struct cmd_meta mt;
    const posenc_gguf_rope *gr;      /* GGUF: llama.cpp's RoPE keys and tensors, or NULL */
    int rope;                        /* RoPE: its own wording of the limits */
    const char *hint;                /* what makes a non-rotary table smaller */
    int64_t nq, k_len;               /* query rows (or table rows), key columns */
    pe_weights w;                    /* --weights: T5, Shaw and learned tables (formats/) */
    pe_out_rows_mem rows_mem;
    posenc_sinusoidal *sin;
};

static void job_free(struct job *j)
{
    pe_table_free(&j->t);
    cmd_meta_free(&j->mt);
    pe_weights_close(&j->w);
    posenc_sinusoidal_free(j->sin);
}

static posenc_status job_meta(void *ctx, posenc_writer *w, posenc_error *err)
{
    const struct job *j = ctx;
    posenc_status st = cmd_meta_write(&j->mt, w, err);
    if (st == POSENC_OK && j->gr)
        st = posenc_gguf_writer_rope(w, j->gr, err);
    return st;
}

static void array_names(const pe_table *t, char *names, size_t len)
{
    names[0] = '\0';
    for (int i = 0; i < t->narr; i++)
        snprintf(names + strlen(names), len - strlen(names), "%s%.60s", i ? ", " : "",
                 t->arr[i].info.name);
}

/* Pick the arrays (--array), plan and check the size limit, write them. */
static int write_tables(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int want[8] = { 0 }, nwant = 0;
    char names[256];
    for (int i = 0; i < j->t.narr && i < 8; i++)
        nwant += want[i] = !a->array || strcmp(a->array, j->t.arr[i].info.name) == 0;
    array_names(&j->t, names, sizeof names);
    if (nwant == 0)
        return cmd_usage_error(CMD, "--array: %s tables hold %s, not '%s'", j->enc, names,
                                  a->array);
    if (posenc_format_one_array(a->wopts.format) && nwant > 1)
        return cmd_usage_error(CMD, "%s holds one array: pass --array (%s)",
                                  strcmp(a->out, "-") == 0 ? "-o -" : "an NPY file", names);
    pe_out o = { a->out, a->wopts, &j->t, want, a->size_limit, a->force, 0, 0, 0, 0 };
    if (pe_out_plan(&o, &err) != POSENC_OK) {
        if (j->rope)
            return cmd_fail(CMD, &err);
        cmd_msg(CMD, "%s tables would be larger than 2^63 bytes; pass %s", j->enc, j->hint);
        return CMD_EXIT_ERROR;
    }
    const posenc_array_info *a0 = &j->t.arr[0].info;
    if (header_default_check(a, o.values, a0->ndim ? a0->shape[0] : 0))
        return CMD_EXIT_ERROR;
    if (o.over_limit) {
        char hs[32], lim[32];
        pe_out_human_size(o.bytes, hs, sizeof hs);
        pe_out_human_size(o.size_limit, lim, sizeof lim);
        if (!j->rope) {
            cmd_msg(CMD, "%s tables would be %s, over the %s limit; pass %s or --force", j->enc,
                       hs, lim, j->hint);
        } else { /* RoPE: rows x width x the cos/sin tables */
            int ntab = nwant - want[j->t.narr - 1];
            cmd_msg(CMD, "table would be %s (%" PRId64 " x %" PRId64 " x %d array%s, %s); pass "
                            "--force to write it", hs, a0->shape[0], a0->shape[1],
                       ntab ? ntab : 1, ntab == 1 ? "" : "s", posenc_dtype_name(a->dtype));
        }
        return CMD_EXIT_ERROR;
    }
    if (j->mt.oom) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (pe_out_run(&o, job_meta, j, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    return CMD_EXIT_OK;
}

/* ---- RoPE ---- */

/* Hand one field of a description to the metadata collected before the writer exists. */
static posenc_status meta_put(void *ctx, const char *key, posenc_meta_type type,
                              const char *json, posenc_error *err)
{
    struct cmd_meta *mt = ctx;
    size_t n = mt->n;
    cmd_meta_json(mt, key, json);
    if (mt->n > n)
        mt->type[n] = (unsigned char)type;
    (void)err;
    return POSENC_OK;
}

/* d's metadata fields into mt (lib/describe.def, view M); frees d. */
static void meta_describe(struct cmd_meta *mt, pe_desc *d)
{
    if (!d || pe_describe_meta_each(d, meta_put, mt, NULL) != POSENC_OK)
        mt->oom = 1;
    pe_describe_free(d);
}

/* The description of a RoPE table: the model, the parameter set, the table and the notes it
 * depends on (the same fields info --json shows). */
static void add_rope_meta(struct cmd_meta *mt, const struct gen_args *a, const posenc_model *m,
                          const posenc_rope_config *c, const posenc_rope_params *p,
                          const struct rope_opts *ro, const posenc_vllm_info *vi,
                          int64_t seq_len, int64_t first, int64_t last, const char *gguf_note)
{
    pe_desc *d = pe_describe_new();
    pe_describe_str(d, PE_DF_POSENC_VERSION, posenc_version());
    pe_describe_str(d, PE_DF_CONFIG, base_name(a->config));
    pe_describe_model(d, m);
    pe_describe_str(d, PE_DF_LAYER_TYPE, ro->layer_type);
    pe_describe_rope(d, c, p, vi, ro->precision, seq_len);
    pe_describe_str(d, PE_DF_LAYOUT, posenc_layout_name(ro->layout));
    pe_describe_str(d, PE_DF_DTYPE, posenc_dtype_name(a->dtype));
    pe_describe_int(d, PE_DF_N_POSITIONS, a->positions ? (int64_t)a->positions->count : seq_len);
    pe_describe_int(d, PE_DF_FIRST_POSITION, first);
    pe_describe_int(d, PE_DF_LAST_POSITION, last);
    pe_describe_str(d, PE_DF_POSITIONS, a->positions ? "list" : "range");
    pe_describe_model_notes(d, m);
    pe_describe_rope_notes(d, c, p, vi, ro->precision, seq_len, gguf_note);
    meta_describe(mt, d);
}


/* --layer-type against the config's layer types: required when it has several, known. */
static int check_layer_type(const posenc_model *m, const char *cfgname, const char *lt)
{
    size_t nlt = posenc_model_layer_type_count(m);
    if (nlt == 0)
        return CMD_EXIT_OK;
    char list[1024];
    size_t off = 0;
    int found = 0;
    list[0] = '\0';
    for (size_t i = 0; i < nlt; i++) {
        const char *name = posenc_model_layer_type_name(m, i);
        if (lt && strcmp(name, lt) == 0)
            found = 1;
        int k = snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", name);
        if (k > 0 && (size_t)k < sizeof list - off)
            off += (size_t)k;
    }
    if (!lt) {
        cmd_msg(CMD, "'%s': the config has several layer types (%s); pass --layer-type",
                   cfgname, list);
        return CMD_EXIT_USAGE;
    }
    if (!found) {
        cmd_msg(CMD, "'%s': unknown layer type '%s' (layer types: %s)", cfgname, lt, list);
        return CMD_EXIT_USAGE;
    }
    return CMD_EXIT_OK;
}

/* The rows of a table: --positions, else 0..L-1 with L = --seq-len or the config's maximum
 * (max_default, 0 when it gives none). One limit for every encoding: an option past POS_MAX
 * is a usage error (option parsing), the config's maximum past it exit 3. */
static int plan_rows(struct job *j, int64_t max_default)
{
    const struct gen_args *a = j->a;
    if (a->positions) { /* counted, in [0, POS_MAX), never materialised */
        j->nq = (int64_t)a->positions->count;
        j->k_len = a->positions->max + 1;
        return CMD_EXIT_OK;
    }
    int64_t L = a->seq_len > 0 ? a->seq_len : max_default;
    if (L <= 0) {
        if (j->rope)
            cmd_msg(CMD, "'%s': no max_position_embeddings in the config; pass --seq-len "
                            "or --positions", a->config);
        else if (a->config)
            return cmd_usage_error(CMD, "'%s' gives no maximum position: pass --seq-len N",
                                      a->config);
        else
            return cmd_usage_error(CMD, "%s tables need --seq-len N", j->enc);
        return CMD_EXIT_ERROR;
    }
    if (L > POS_MAX) {
        cmd_msg(CMD, "'%s': max_position_embeddings %" PRId64 " is too large; pass "
                        "--seq-len or --positions", a->config, L);
        return CMD_EXIT_ERROR;
    }
    j->nq = j->k_len = L;
    return CMD_EXIT_OK;
}

static int gen_rope(const struct gen_args *a, const posenc_model *m, const struct rope_opts *ro)
{
    posenc_error err = { 0 };
    posenc_rope_config cfg;
    posenc_rope_params p;
    posenc_vllm_info vi;
    posenc_gguf_rope gr;
    struct job j = { 0 };
    const char *cfgname = a->config;
    int rc;

    j.a = a;
    j.m = m;
    j.enc = "rope";
    j.rope = 1;
    if ((rc = check_layer_type(m, cfgname, ro->layer_type)))
        return rc;
    if (posenc_model_rope(m, ro->layer_type, &cfg, &err) != POSENC_OK)
        return cmd_rope_fail(CMD, m, &err);

    /* positions and the sequence length L = max(position) + 1 (transformers' rule) */
    if ((rc = plan_rows(&j, posenc_model_max_positions(m))))
        return rc;
    int64_t n_pos = j.nq, seq_len = j.k_len;
    int64_t first = a->positions ? a->positions->first : 0;
    int64_t last = a->positions ? a->positions->last : seq_len - 1;
    if (posenc_rope_params_for(&cfg, ro->precision, posenc_model_family(m), seq_len,
                               ro->max_model_len, &p, &vi, &err) != POSENC_OK) {
        cmd_msg(CMD, "'%s': %s", cfgname, err.msg);
        return CMD_EXIT_ERROR;
    }
    if (ro->precision == POSENC_PREC_VLLM) {
        /* vLLM indexes its cache: rows default to the cache, positions must lie inside it */
        if (!a->positions && a->seq_len <= 0) {
            seq_len = n_pos = vi.cache_len;
            last = seq_len - 1;
        }
        if (last >= vi.cache_len || (a->positions && a->positions->max >= vi.cache_len)) {
            cmd_msg(CMD, "'%s': position %" PRId64 " is past vLLM's cos_sin_cache "
                            "(%s: %" PRId64 " rows)", cfgname,
                       a->positions ? a->positions->max : last, vi.cls, vi.cache_len);
            return CMD_EXIT_ERROR;
        }
        if (vi.note[0])
            cmd_msg(CMD, "'%s': %s", cfgname, vi.note);
    }
    if (ro->precision == POSENC_PREC_GGML &&
        (rc = cmd_ggml_params(CMD, cfgname, m, ro->layer_type, seq_len, &p)) != CMD_EXIT_OK)
        return rc;
    if (pe_table_rope(&j.t, &p, ro->precision, ro->layout, n_pos, pe_out_positions(a->positions),
                      a->dtype, cmd_nthreads(), &err) != POSENC_OK) {
        cmd_msg(CMD, "'%s': %s", cfgname, err.msg);
        return CMD_EXIT_ERROR;
    }

    /* GGUF: llama.cpp's keys and tensors for the model, as its converter writes them */
    char gguf_note[POSENC_ERRMSG_MAX + 32];
    gguf_note[0] = '\0';
    if (a->wopts.format == POSENC_FMT_GGUF) {
        posenc_error ge = { 0 };
        posenc_status gs = posenc_gguf_rope_from_model(m, ro->layer_type, &gr, &ge);
        if (gs == POSENC_OK) {
            j.gr = &gr;
        } else if (gs == POSENC_EUNSUPPORTED) {
            snprintf(gguf_note, sizeof gguf_note, "gguf: no llama.cpp keys: %s", ge.msg);
            cmd_msg(CMD, "'%s': %s; '%s' holds posenc's arrays and keys only", cfgname,
                       ge.msg, a->out);
        } else {
            pe_table_free(&j.t);
            return cmd_fail(CMD, &ge);
        }
    }
    add_rope_meta(&j.mt, a, m, &cfg, &p, ro, &vi, seq_len, first, last,
                  gguf_note[0] ? gguf_note : NULL);
    rc = write_tables(&j);
    job_free(&j);
    return rc;
}

/* ---- option parsing ---- */

/* Which options were given: the parameters of lib/tables.c's table, which says which encoding
 * takes which of them. */
enum {
    G_LAYER_TYPE = PE_TP_BIT(PE_TP_LAYER_TYPE), G_PRECISION = PE_TP_BIT(PE_TP_PRECISION),
    G_LAYOUT = PE_TP_BIT(PE_TP_LAYOUT), G_HEADS = PE_TP_BIT(PE_TP_HEADS),
    G_D_MODEL = PE_TP_BIT(PE_TP_D_MODEL), G_NUM_BUCKETS = PE_TP_BIT(PE_TP_NUM_BUCKETS),
    G_MAX_DISTANCE = PE_TP_BIT(PE_TP_MAX_DISTANCE), G_MAX_REL = PE_TP_BIT(PE_TP_MAX_REL),
    G_CONVENTION = PE_TP_BIT(PE_TP_CONVENTION), G_VARIANT = PE_TP_BIT(PE_TP_VARIANT),
    G_WEIGHTS = PE_TP_BIT(PE_TP_WEIGHTS), G_TENSOR = PE_TP_BIT(PE_TP_TENSOR),
    G_DECODER = PE_TP_BIT(PE_TP_DECODER), G_BROADCAST = PE_TP_BIT(PE_TP_BROADCAST),
    G_MAX_MODEL_LEN = PE_TP_BIT(PE_TP_MAX_MODEL_LEN)
};
#define ROPE_ONLY pe_table_rope_only()

static const char *first_given(unsigned mask)
{
    for (int p = 0; p < PE_TP_COUNT; p++)
        if (mask & PE_TP_BIT(p))
            return pe_table_param_name((pe_table_param)p);
    return NULL;
}

/* ---- the non-rotary encodings: ALiBi slopes and bias, T5 buckets and bias, Shaw indices
 * and gathered embeddings, sinusoidal and learned absolute tables ---- */

/* Options that do not apply to this encoding are usage errors, not silently ignored (which
 * encoding takes which option: lib/tables.c). */
static int refuse_options(const struct gen_args *a)
{
    int p = pe_table_param_refused(a->given, a->encoding);
    if (p >= 0)
        return cmd_usage_error(CMD, "%s does not apply to %s tables", pe_table_param_name(p),
                                  pe_table_label(a->encoding));
    if (a->tensor && !a->weights)
        return cmd_usage_error(CMD, "--tensor needs --weights FILE");
    return 0;
}

/* Query rows: --positions, else 0..L-1 with L = --seq-len or the config's maximum; key
 * positions 0..k_len-1 with k_len = L (max(position) + 1 for --positions). */
static int plan_positions(struct job *j)
{
    return plan_rows(j, j->bc ? j->bc->max_positions : 0);
}

/* What every non-RoPE table records first: the encoding and, with a config, the model and its
 * notes. */
static void meta_common(struct job *j)
{
    pe_desc *d = pe_describe_new();
    pe_describe_str(d, PE_DF_POSENC_VERSION, posenc_version());
    if (j->a->config)
        pe_describe_str(d, PE_DF_CONFIG, base_name(j->a->config));
    if (j->m) {
        pe_describe_model(d, j->m);
        pe_describe_model_notes(d, j->m);
    }
    pe_describe_str(d, PE_DF_ENCODING, j->enc); /* the table's, e.g. Whisper's encoder */
    meta_describe(&j->mt, d);
}

/* Find a tensor in a weights file: each name in `names` (NULL-terminated, first match wins),
 * also with the prefixes given. Returns 0 and the index, or prints the error. */

/* Find and read the --weights tensor (names tried with each prefix) whole as float32. */
static int load_weights(struct job *j, const char *const *names, const char *const *prefixes)
{
    posenc_error err = { 0 };
    if (pe_weights_open(&j->w, j->a->weights, names, prefixes, &err) != POSENC_OK ||
        pe_weights_load(&j->w, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    return CMD_EXIT_OK;
}

/* ---- ALiBi ---- */

static int gen_alibi(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc, heads = a->heads ? a->heads : j->bc ? j->bc->heads : 0;
    if (heads <= 0)
        return cmd_usage_error(CMD, "ALiBi tables need --heads N%s",
                                  a->config ? " (the config gives no number of heads)" : "");
    if (heads > (1 << 16))
        return cmd_usage_error(CMD, "%d ALiBi heads is too many", heads);
    posenc_alibi_kind kind = j->bc ? j->bc->alibi_kind : POSENC_ALIBI_REFERENCE;
    if (a->variant && posenc_alibi_kind_parse(a->variant, &kind, &err) != POSENC_OK)
        return cmd_usage_error(CMD, "--variant: %s", err.msg);
    double bias_max = j->bc && j->bc->alibi_bias_max > 0 ? j->bc->alibi_bias_max : 8.0;
    /* default convention: what the model's own code builds (MPT: m(j - i) at the last query;
     * BLOOM, Baichuan, Falcon and the Press reference: m * j; a bidirectional BERT-style
     * encoder: -m|i - j|) */
    posenc_alibi_convention conv = j->bc && j->bc->alibi_symmetric ? POSENC_ALIBI_SYMMETRIC
                                   : kind == POSENC_ALIBI_MPT      ? POSENC_ALIBI_CAUSAL
                                                                   : POSENC_ALIBI_KEYINDEX;
    if (a->convention && posenc_alibi_convention_parse(a->convention, &conv, &err) != POSENC_OK)
        return cmd_usage_error(CMD, "--convention: %s", err.msg);
    double *slopes = malloc((size_t)heads * sizeof *slopes);
    if (!slopes) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (posenc_alibi_slopes(kind, heads, bias_max, slopes, &err) != POSENC_OK)
        rc = cmd_fail(CMD, &err);
    else
        rc = plan_positions(j);
    if (rc == 0 && pe_table_alibi(&j->t, kind, conv, slopes, heads, j->nq, j->k_len,
                                  a->broadcast, pe_out_positions(a->positions), a->dtype,
                                  &err) != POSENC_OK)
        rc = cmd_fail(CMD, &err);
    if (rc == 0) {
        meta_common(j);
        cmd_meta_str(&j->mt, "variant", posenc_alibi_kind_name(kind));
        cmd_meta_str(&j->mt, "convention", posenc_alibi_convention_name(conv));
        cmd_meta_int(&j->mt, "heads", heads);
        if (kind == POSENC_ALIBI_MPT)
            cmd_meta_num(&j->mt, "alibi_bias_max", bias_max);
        cmd_meta_nums(&j->mt, "slopes", slopes, heads);
        cmd_meta_int(&j->mt, "q_len", a->broadcast ? 1 : j->nq);
        cmd_meta_int(&j->mt, "k_len", j->k_len);
        if (a->broadcast)
            cmd_meta_int(&j->mt, "broadcast_query", j->k_len - 1);
        j->hint = "a smaller --seq-len, --broadcast, --array slopes";
    }
    free(slopes);
    return rc;
}

/* ---- T5 ---- */

static int gen_t5(struct job *j)
{
    const struct gen_args *a = j->a;
    const posenc_bias_config *bc = j->bc;
    posenc_error err = { 0 };
    int rc, heads = 0;
    int nb = a->num_buckets ? a->num_buckets : bc && bc->num_buckets ? bc->num_buckets : 32;
    int md = a->max_distance ? a->max_distance : bc && bc->max_distance ? bc->max_distance : 128;
    int decoder = a->decoder || (bc && bc->is_decoder), bidir = !decoder;
    if (posenc_t5_check(bidir, nb, md, &err) != POSENC_OK) {
        if (a->num_buckets || a->max_distance || !a->config)
            return cmd_usage_error(CMD, "%s", err.msg);
        cmd_msg(CMD, "'%s': %s", a->config, err.msg);
        return CMD_EXIT_ERROR;
    }
    if (a->heads && !a->weights)
        return cmd_usage_error(CMD, "--heads applies to T5 tables only with --weights");
    meta_common(j);
    if (a->weights) {
        const char *names[] = { a->tensor ? a->tensor
                                          : decoder ? T5_DECODER_TENSOR : T5_ENCODER_TENSOR,
                                NULL };
        const char *prefixes[] = { "", NULL };
        if ((rc = load_weights(j, names, prefixes)))
            return rc;
        if (j->w.rows != nb) {
            cmd_msg(CMD, "'%s': tensor '%s' has %" PRId64 " rows, but there are %d buckets "
                            "(shape must be [num_buckets, heads])", a->weights, names[0],
                       j->w.rows, nb);
            return CMD_EXIT_ERROR;
        }
        int want_heads = a->heads ? a->heads : bc ? bc->heads : 0;
        if (want_heads && j->w.cols != want_heads) {
            cmd_msg(CMD, "'%s': tensor '%s' has %" PRId64 " heads (columns), not %d",
                       a->weights, names[0], j->w.cols, want_heads);
            return CMD_EXIT_ERROR;
        }
        if (j->w.cols < 1 || j->w.cols > (1 << 16)) {
            cmd_msg(CMD, "'%s': tensor '%s' has %" PRId64 " columns", a->weights, names[0],
                       j->w.cols);
            return CMD_EXIT_ERROR;
        }
        heads = (int)j->w.cols;
        cmd_meta_str(&j->mt, "weights", a->weights);
        cmd_meta_str(&j->mt, "tensor", names[0]);
    }
    if ((rc = plan_positions(j)))
        return rc;
    if (pe_table_t5(&j->t, bidir, nb, md, j->w.data, heads, j->nq, j->k_len,
                    pe_out_positions(a->positions), a->dtype, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    cmd_meta_str(&j->mt, "kind", decoder ? "decoder" : "encoder");
    cmd_meta_json(&j->mt, "bidirectional", bidir ? "true" : "false");
    cmd_meta_int(&j->mt, "num_buckets", nb);
    cmd_meta_int(&j->mt, "max_distance", md);
    cmd_meta_int(&j->mt, "q_len", j->nq);
    cmd_meta_int(&j->mt, "k_len", j->k_len);
    if (heads)
        cmd_meta_int(&j->mt, "heads", heads);
    j->hint = "a smaller --seq-len";
    return 0;
}

/* ---- Shaw ---- */

static int gen_shaw(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc;
    /* BERT's relative_key embeds query - key (distance_embedding(l - r + max_pos - 1)); Shaw et
     * al. and tensor2tensor key - query. Default: what the config's model does. */
    int bert = j->bc && j->bc->max_relative_position > 0 && j->bc->shaw_query_minus_key;
    if (a->variant) {
        if (strcmp(a->variant, "bert") == 0)
            bert = 1;
        else if (strcmp(a->variant, "shaw") == 0)
            bert = 0;
        else
            return cmd_usage_error(CMD, "--variant: unknown Shaw variant '%s' (shaw: key - "
                                           "query, or bert: query - key)", a->variant);
    }
    int64_t k = a->max_relative_position ? a->max_relative_position
                : j->bc ? j->bc->max_relative_position : 0;
    if (k <= 0)
        return cmd_usage_error(CMD, "Shaw tables need --max-relative-position K%s",
                                  a->config ? " (the config gives none)" : "");
    if (k > (1 << 30))
        return cmd_usage_error(CMD, "--max-relative-position %" PRId64 " is too large", k);
    meta_common(j);
    if (a->weights) {
        /* one tensor in the file needs no name */
        char name[POSENC_NAME_MAX];
        snprintf(name, sizeof name, "%s", a->tensor ? a->tensor : "");
        size_t n = 1;
        if (!a->tensor) {
            if (pe_weights_count(a->weights, &n, name, sizeof name, &err) != POSENC_OK)
                return cmd_fail(CMD, &err);
            if (n != 1)
                return cmd_usage_error(CMD, "'%s' holds %zu tensors: pass --tensor NAME (the "
                                               "[2k+1, depth] table)", a->weights, n);
        }
        const char *names[] = { name, NULL }, *prefixes[] = { "", NULL };
        if ((rc = load_weights(j, names, prefixes)))
            return rc;
        cmd_meta_str(&j->mt, "tensor", name);
        if (j->w.rows != 2 * k + 1) {
            cmd_msg(CMD, "'%s': the relative embedding table has %" PRId64 " rows, but "
                            "max_relative_position %" PRId64 " needs 2k+1 = %" PRId64,
                       a->weights, j->w.rows, k, 2 * k + 1);
            return CMD_EXIT_ERROR;
        }
        cmd_meta_str(&j->mt, "weights", a->weights);
    }
    if ((rc = plan_positions(j)))
        return rc;
    if (pe_table_shaw(&j->t, k, bert, j->w.data, j->w.cols, j->nq, j->k_len,
                      pe_out_positions(a->positions), a->dtype, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    cmd_meta_int(&j->mt, "max_relative_position", k);
    cmd_meta_str(&j->mt, "variant", bert ? "bert" : "shaw");
    cmd_meta_str(&j->mt, "index_formula",
             bert ? "clip(query - key, -k, k) + k" : "clip(key - query, -k, k) + k");
    cmd_meta_int(&j->mt, "q_len", j->nq);
    cmd_meta_int(&j->mt, "k_len", j->k_len);
    j->hint = "a smaller --seq-len";
    return 0;
}

/* ---- sinusoidal ---- */

static int gen_sinusoidal(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc, d_model = a->d_model ? a->d_model : j->bc ? j->bc->d_model : 0;
    if (d_model <= 0)
        return cmd_usage_error(CMD, "sinusoidal tables need --d-model N%s",
                                  a->config ? " (the config gives no width)" : "");
    /* the model's own variant (registry), else the original Transformer's */
    posenc_sinusoidal_variant v = j->bc ? j->bc->sinusoidal_variant : POSENC_SIN_VASWANI;
    if (a->variant && posenc_sinusoidal_variant_parse(a->variant, &v, &err) != POSENC_OK)
        return cmd_usage_error(CMD, "--variant: %s", err.msg);
    int pad = -1;
    if (v == POSENC_SIN_FAIRSEQ)
        pad = j->bc && j->bc->padding_idx >= 0 ? j->bc->padding_idx : 1;
    if (posenc_sinusoidal_new(v, d_model, pad, &j->sin, &err) != POSENC_OK) {
        if (a->d_model || !a->config)
            return cmd_usage_error(CMD, "%s", err.msg);
        return cmd_fail(CMD, &err);
    }
    if ((rc = plan_positions(j)))
        return rc;
    /* fairseq: rows are embedding indices and real tokens start at padding_idx + 1, so L
     * positions need L + padding_idx + 1 rows (fairseq's init_size) */
    if (v == POSENC_SIN_FAIRSEQ && !a->positions)
        j->nq += pad + 1;
    if (pe_table_sinusoidal(&j->t, j->sin, d_model, j->nq, pe_out_positions(a->positions),
                            a->dtype, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    meta_common(j);
    cmd_meta_str(&j->mt, "variant", posenc_sinusoidal_variant_name(v));
    cmd_meta_int(&j->mt, "d_model", d_model);
    cmd_meta_int(&j->mt, "n_positions", j->nq);
    if (v == POSENC_SIN_FAIRSEQ)
        cmd_meta_int(&j->mt, "padding_idx", pad);
    j->hint = "a smaller --seq-len";
    return 0;
}

/* ---- learned ---- */

static int gen_learned(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc;
    if (!a->weights)
        return cmd_usage_error(CMD, "learned tables are copied from a checkpoint: pass "
                                       "--weights model.safetensors");
    const char *name = a->tensor;
    if (!name && j->bc && j->bc->learned_tensor[0])
        name = j->bc->learned_tensor;
    if (!name)
        return cmd_usage_error(CMD, "no tensor name for the learned table: pass --tensor NAME");
    /* the config's name, and the same without the wrapper prefix a checkpoint may lack */
    const char *bare = name;
    if (!a->tensor && strncmp(name, "transformer.", 12) == 0)
        bare = name + 12;
    else if (!a->tensor && strncmp(name, "bert.", 5) == 0)
        bare = name + 5;
    const char *names[] = { name, bare, NULL };
    const char *prefixes_model[] = { "", "transformer.", "bert.", NULL };
    const char *prefixes_exact[] = { "", NULL };
    const char *const *prefixes = a->tensor ? prefixes_exact : prefixes_model;
    if (pe_weights_open(&j->w, a->weights, names, prefixes, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    const int64_t cols = j->w.cols;
    if (a->d_model && a->d_model != cols) {
        cmd_msg(CMD, "'%s': tensor '%s' is %" PRId64 " wide, not --d-model %d", a->weights,
                   name, cols, a->d_model);
        return CMD_EXIT_ERROR;
    }
    /* the model's positions start at row position_offset of its table */
    int64_t row_offset = j->bc ? j->bc->position_offset : 0;
    if (row_offset >= j->w.rows) {
        cmd_msg(CMD, "'%s': tensor '%s' has %" PRId64 " rows, but the model's positions "
                        "start at row %" PRId64, a->weights, name, j->w.rows, row_offset);
        return CMD_EXIT_ERROR;
    }
    int64_t npos = j->w.rows - row_offset;
    posenc_status st;
    if (a->positions) { /* rows in any order: the table read whole */
        if (a->positions->max >= npos) {
            cmd_msg(CMD, "'%s': position %" PRId64 " is past the %" PRId64
                            " positions of the learned table", a->weights, a->positions->max,
                       npos);
            return CMD_EXIT_ERROR;
        }
        if (pe_weights_load(&j->w, &err) != POSENC_OK)
            return cmd_fail(CMD, &err);
        if ((rc = plan_positions(j)))
            return rc;
        j->rows_mem = (pe_out_rows_mem){ j->w.data, j->w.rows, cols };
        st = pe_table_learned(&j->t, pe_out_rows_copy, &j->rows_mem, POSENC_DT_F32, cols,
                              j->nq, row_offset, pe_out_positions(a->positions), a->dtype, &err);
    } else { /* the first rows, streamed straight from the checkpoint */
        j->nq = a->seq_len ? a->seq_len : npos;
        if (j->nq > npos) {
            cmd_msg(CMD, "'%s': --seq-len %" PRId64 " is past the %" PRId64
                            " positions of the learned table", a->weights, j->nq, npos);
            return CMD_EXIT_ERROR;
        }
        if (pe_weights_stream(&j->w, &err) != POSENC_OK)
            return cmd_fail(CMD, &err);
        st = pe_table_learned(&j->t, pe_out_rows_read, &j->w.stream,
                              posenc_reader_info(j->w.stream.r)->dtype, cols, j->nq, row_offset,
                              pe_out_positions(NULL), a->dtype, &err);
    }
    if (st != POSENC_OK)
        return cmd_fail(CMD, &err);
    meta_common(j);
    cmd_meta_str(&j->mt, "weights", a->weights);
    cmd_meta_str(&j->mt, "tensor", name);
    cmd_meta_int(&j->mt, "d_model", cols);
    cmd_meta_int(&j->mt, "n_positions", j->nq);
    cmd_meta_int(&j->mt, "row_offset", row_offset);
    j->hint = "a smaller --seq-len";
    return 0;
}

/* ---- dispatch: one builder per encoding, one writer for all ---- */

static const struct {
    posenc_encoding e;
    int (*build)(struct job *j);
} builders[] = {
    { POSENC_ENC_ALIBI, gen_alibi }, { POSENC_ENC_T5, gen_t5 }, { POSENC_ENC_SHAW, gen_shaw },
    { POSENC_ENC_SINUSOIDAL, gen_sinusoidal }, { POSENC_ENC_LEARNED, gen_learned },
};

static int gen_nonrope(const struct gen_args *a, const posenc_model *m)
{
    struct job j = { 0 };
    int rc = -1;
    j.a = a;
    j.m = m;
    j.bc = m ? posenc_model_bias(m) : NULL;
    j.enc = posenc_encoding_name(a->encoding);
    if (a->encoding == POSENC_ENC_NONE) {
        cmd_msg(CMD, "%s%s%suses no position encoding (NoPE): there is no table to generate",
                   a->config ? "'" : "", a->config ? a->config : "", a->config ? "' " : "");
        return CMD_EXIT_ERROR;
    }
    if ((rc = refuse_options(a)))
        return rc;
    rc = -1;
    for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++)
        if (builders[i].e == a->encoding)
            rc = builders[i].build(&j);
    if (rc < 0) {
        cmd_msg(CMD, "%s is not a non-rotary encoding", j.enc);
        rc = CMD_EXIT_ERROR;
    } else if (rc == 0) {
        rc = write_tables(&j);
    }
    job_free(&j);
    return rc;
}

int cmd_gen(int argc, char **argv)
{
    struct gen_args a;
    struct rope_opts ro = { NULL, POSENC_PREC_EXACT, POSENC_LAYOUT_HF, 0, 0, 0 };
    posenc_error err = { 0 };
    posenc_model *m = NULL;
    pe_positions *positions = NULL;
    const char *positions_arg = NULL;
    unsigned given = 0;
    int c, rc;

    memset(&a, 0, sizeof a);
    a.dtype = POSENC_DT_F32;
    a.wopts.format = POSENC_FMT_AUTO;
    a.size_limit = DEFAULT_SIZE_LIMIT;
    a.encoding = POSENC_ENC_ROPE;

    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_gen_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_CONFIG: a.config = p.arg; break;
        case CMD_O_FAMILY: a.family = p.arg; break;
        case CMD_O_OUTPUT: a.out = p.arg; break;
        case CMD_O_FORMAT: a.wopts.format = p.format; break;
        case CMD_O_DTYPE:
            a.dtype = p.dtype;
            if (!is_float_out(a.dtype))
                return cmd_usage_error(CMD, "--dtype: tables are floating point (f32, f64, "
                                               "f16 or bf16), not %s", posenc_dtype_name(a.dtype));
            break;
        case CMD_O_SEQ_LEN: a.seq_len = p.i64; break;
        case CMD_O_POSITIONS: positions_arg = p.arg; break;
        case CMD_O_LAYER_TYPE: ro.layer_type = p.arg; given |= G_LAYER_TYPE; break;
        case CMD_O_PRECISION: ro.precision = p.precision; given |= G_PRECISION; break;
        case OPT_TABLE_LAYOUT:
            if (posenc_layout_parse(p.arg, &ro.layout, &err) != POSENC_OK)
                return cmd_usage_error(CMD, "--table-layout: %s", err.msg);
            given |= G_LAYOUT;
            break;
        case CMD_O_MAX_MODEL_LEN: ro.max_model_len = p.i64; given |= G_MAX_MODEL_LEN; break;
        case OPT_ARRAY:
            if (!*p.arg)
                return cmd_usage_error(CMD, "--array: empty name");
            a.array = p.arg;
            break;
        case CMD_O_COMPRESS: a.wopts.compress = 1; break;
        case CMD_O_FORCE: a.force = 1; break;
        case CMD_O_QUIET: cmd_progress_quiet(); break;
        case OPT_ENCODING:
            if (posenc_encoding_parse(p.arg, &a.encoding, &err) != POSENC_OK)
                return cmd_usage_error(CMD, "--encoding: %s", err.msg);
            if (a.encoding == POSENC_ENC_NONE)
                return cmd_usage_error(CMD, "--encoding: '%s' has no table to generate",
                                          p.arg);
            a.encoding_forced = 1;
            break;
        case OPT_HEADS: a.heads = (int)p.i64; given |= G_HEADS; break;
        case OPT_D_MODEL: a.d_model = (int)p.i64; given |= G_D_MODEL; break;
        case OPT_NUM_BUCKETS: a.num_buckets = (int)p.i64; given |= G_NUM_BUCKETS; break;
        case OPT_MAX_DISTANCE: a.max_distance = (int)p.i64; given |= G_MAX_DISTANCE; break;
        case OPT_MAX_REL: a.max_relative_position = (int)p.i64; given |= G_MAX_REL; break;
        case OPT_CONVENTION: a.convention = p.arg; given |= G_CONVENTION; break;
        case CMD_O_VARIANT: a.variant = p.arg; given |= G_VARIANT; break;
        case OPT_WEIGHTS: a.weights = p.arg; given |= G_WEIGHTS; break;
        case OPT_TENSOR: a.tensor = p.arg; given |= G_TENSOR; break;
        case OPT_DECODER: a.decoder = 1; given |= G_DECODER; break;
        case OPT_BROADCAST: a.broadcast = 1; given |= G_BROADCAST; break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (cmd_opts_max_args(&p, 0))
        return CMD_EXIT_USAGE;
    if (!a.out)
        return cmd_usage_error(CMD, "missing -o OUT (where to write the tables)");
    if (!a.config && !a.encoding_forced)
        return cmd_usage_error(CMD, "missing --config FILE");
    if (positions_arg && a.seq_len)
        return cmd_usage_error(CMD, "--seq-len and --positions conflict; pass one of them");
    if (a.wopts.format == POSENC_FMT_AUTO) {
        a.wopts.format = posenc_format_guess(a.out);
        if (a.wopts.format == POSENC_FMT_AUTO)
            return cmd_usage_error(CMD, "'%s': cannot tell the output format from the name; "
                                           "pass --format or end it in .npz, .npy, .h5, "
                                           ".safetensors, .h, .bin or /", a.out);
    }
    if (strcmp(a.out, "-") == 0 && !posenc_format_to_stdout(a.wopts.format))
        return cmd_usage_error(CMD, "-o - writes NPY only, not %s",
                                  posenc_format_name(a.wopts.format));
    if (a.encoding_forced && a.encoding != POSENC_ENC_ROPE && (given & ROPE_ONLY))
        return cmd_usage_error(CMD, "%s applies only to RoPE tables",
                                  first_given(given & ROPE_ONLY));
    if (a.encoding_forced && a.encoding == POSENC_ENC_ROPE && (given & ~ROPE_ONLY))
        return cmd_usage_error(CMD, "%s does not apply to RoPE tables",
                                  first_given(given & ~ROPE_ONLY));

    const char *inputs[] = { a.config, positions_arg, a.weights };
    if ((rc = cmd_check_outputs(CMD, &a.out, 1, inputs, sizeof inputs / sizeof inputs[0])))
        return rc;

    if (positions_arg) {
        if ((rc = cmd_parse_positions(CMD, positions_arg, POS_MAX, (uint64_t)POS_MAX,
                                      &positions)))
            return rc;
        a.positions = positions;
    }
    if (a.config && (rc = cmd_load_config(CMD, a.config, a.family, &m)) != 0)
        goto out;
    if (!a.encoding_forced) {
        a.encoding = posenc_model_encoding(m);
        if (a.encoding == POSENC_ENC_NONE) {
            cmd_msg(CMD, "'%s': %s uses no position encoding (NoPE): there is no table to "
                            "generate", a.config, posenc_model_type(m));
            rc = CMD_EXIT_ERROR;
            goto out;
        }
    }
    if (a.encoding != POSENC_ENC_ROPE) {
        if (given & ROPE_ONLY) {
            rc = cmd_usage_error(CMD, "%s applies only to RoPE tables, and '%s' uses %s",
                                    first_given(given & ROPE_ONLY), a.config,
                                    posenc_encoding_name(a.encoding));
            goto out;
        }
        a.given = given;
        rc = gen_nonrope(&a, m);
        goto out;
    }
    if (given & ~ROPE_ONLY) {
        rc = cmd_usage_error(CMD, "%s does not apply to RoPE tables",
                                first_given(given & ~ROPE_ONLY));
        goto out;
    }
    if (!m) {
        rc = cmd_usage_error(CMD, "missing --config FILE (RoPE tables need a model config)");
        goto out;
    }
    if ((given & G_MAX_MODEL_LEN) && ro.precision != POSENC_PREC_VLLM) {
        rc = cmd_usage_error(CMD, "--max-model-len applies only to --precision vllm");
        goto out;
    }
    {
        int vl = ro.layout == POSENC_LAYOUT_VLLM;
        const char *tab1 = vl ? "cos_sin_cache" : "cos", *tab2 = vl ? NULL : "sin";
        if (a.array && strcmp(a.array, tab1) != 0 && (!tab2 || strcmp(a.array, tab2) != 0) &&
            strcmp(a.array, "inv_freq") != 0) {
            rc = cmd_usage_error(CMD, "--array: '%s' is not an array of a RoPE table with "
                                         "--table-layout %s (expected %s%s%s or inv_freq)", a.array,
                                    posenc_layout_name(ro.layout), tab1, tab2 ? ", " : "",
                                    tab2 ? tab2 : "");
            goto out;
        }
        if (posenc_format_one_array(a.wopts.format) && !a.array) {
            rc = cmd_usage_error(CMD, "%s holds one array: pass --array %s%s%s or inv_freq",
                                    strcmp(a.out, "-") == 0 ? "-o -" : "an NPY file", tab1,
                                    tab2 ? ", " : "", tab2 ? tab2 : "");
            goto out;
        }
    }
    rc = gen_rope(&a, m, &ro);
out:
    posenc_model_free(m);
    pe_positions_free(positions);
    return rc;
}
