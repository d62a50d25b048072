/* cmd/gen.c: posenc gen: parse every option into struct gen_args, write RoPE cos/sin/inv_freq
 * tables (streamed in chunks of positions), hand non-rotary encodings to gen_nonrope(). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "describe_out.h"
#include "opts.h"

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
};

/* Write the tables of a non-rotary encoding (a->encoding != POSENC_ENC_ROPE). m may be NULL when
 * no --config was given. Prints its own errors; returns an exit status. */
static int gen_nonrope(const struct gen_args *a, const posenc_model *m);
#define DEFAULT_SIZE_LIMIT ((uint64_t)4 << 30) /* 4 GiB of output without --force */
#define CHUNK_ELEMS ((size_t)1 << 18)          /* doubles per chunk buffer (2 MiB) */
#define CHUNK_ROWS_MAX 4096
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

/* "6.0 GiB", "512.0 MiB", "12 bytes" */
static void human_size(uint64_t n, char *buf, size_t len)
{
    static const char *unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (n < 1024) {
        snprintf(buf, len, "%" PRIu64 " bytes", n);
        return;
    }
    double v = (double)n;
    int u = -1;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, unit[u]);
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
    human_size(nvalues * HEADER_TEXT_PER_VALUE, hs, sizeof hs);
    cmd_msg(CMD, "'%s': a C header of all %" PRId64 " default positions would hold %" PRIu64
               " values (about %s of text); pass --seq-len N, --positions or --force", a->out,
               rows, nvalues, hs);
    return CMD_EXIT_ERROR;
}

/* Round the double-double hi + lo (|lo| <= ulp(hi)/2) to dt once: hi rounded unless hi lies
 * exactly halfway between two dt values, where the sign of lo decides. */
static void round_dd(double hi, double lo, posenc_dtype dt, void *dst)
{
    posenc_dtype_convert(dst, dt, &hi, POSENC_DT_F64, 1);
    if (lo == 0 || dt == POSENC_DT_F64)
        return;
    double r, s, back;
    unsigned char tmp[8];
    posenc_dtype_convert(&r, POSENC_DT_F64, dst, dt, 1);
    if (r == hi || !isfinite(r))
        return;
    s = 2 * hi - r; /* the other neighbour when hi is the midpoint of r and s */
    posenc_dtype_convert(tmp, dt, &s, POSENC_DT_F64, 1);
    posenc_dtype_convert(&back, POSENC_DT_F64, tmp, dt, 1);
    if (back != s)
        return;
    double want = lo > 0 ? fmax(r, s) : fmin(r, s);
    posenc_dtype_convert(dst, dt, &want, POSENC_DT_F64, 1);
}

static int is_float_out(posenc_dtype dt)
{
    return dt == POSENC_DT_F32 || dt == POSENC_DT_F64 || dt == POSENC_DT_F16 ||
           dt == POSENC_DT_BF16;
}

/* ---- the RoPE table writer ---- */

enum { ARR_COS = 0, ARR_SIN = 1, ARR_INV = 2, ARR_N };
static const char *const arr_names[ARR_N] = { "cos", "sin", "inv_freq" };

/* A writer thread, so that computing chunk k+1 overlaps converting and writing chunk k (the
 * dtype conversion, NPZ CRC and copy into the page cache cost about as much as the
 * trigonometry). Two slots: the computing thread fills the double buffers of an empty slot and
 * submits one of them; the writer thread converts full slots to the output dtype and writes them
 * in order. Without a thread (pthread_create failed) submit does that synchronously. */
struct sink {
    posenc_writer *w;
    posenc_dtype dtype;
    void *obuf;       /* conversion buffer of the writer thread */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const double *ptr[2];
    uint64_t nelem[2];
    int full[2];
    int cur;          /* slot the producer fills next */
    int done;         /* producer finished */
    int threaded;
    posenc_status st; /* first write error */
    posenc_error err;
};

static posenc_status sink_write(struct sink *s, const double *p, uint64_t n)
{
    if (s->dtype == POSENC_DT_F64)
        return posenc_writer_write(s->w, p, n, &s->err);
    posenc_dtype_convert(s->obuf, s->dtype, p, POSENC_DT_F64, (size_t)n);
    return posenc_writer_write(s->w, s->obuf, n, &s->err);
}

static void *sink_main(void *arg)
{
    struct sink *s = arg;
    int i = 0;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->full[i] && !s->done)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->full[i]) {
            pthread_mutex_unlock(&s->mu);
            break;
        }
        const double *p = s->ptr[i];
        uint64_t n = s->nelem[i];
        pthread_mutex_unlock(&s->mu);
        posenc_status st = sink_write(s, p, n);
        pthread_mutex_lock(&s->mu);
        s->full[i] = 0;
        if (st != POSENC_OK)
            s->st = st;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (st != POSENC_OK)
            break;
        i ^= 1;
    }
    return NULL;
}

static void sink_start(struct sink *s, posenc_writer *w, posenc_dtype dtype, void *obuf)
{
    memset(s, 0, sizeof *s);
    s->w = w;
    s->dtype = dtype;
    s->obuf = obuf;
    s->st = POSENC_OK;
    if (pthread_mutex_init(&s->mu, NULL) != 0)
        return;
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        pthread_mutex_destroy(&s->mu);
        return;
    }
    s->threaded = pthread_create(&s->th, NULL, sink_main, s) == 0;
    if (!s->threaded) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
    }
}

/* Wait until the current slot (s->cur) is free; 0 when the writer has failed. The slot's double
 * buffers are then the producer's to fill. */
static int sink_acquire(struct sink *s)
{
    if (!s->threaded)
        return s->st == POSENC_OK;
    pthread_mutex_lock(&s->mu);
    while (s->full[s->cur] && s->st == POSENC_OK)
        pthread_cond_wait(&s->cv, &s->mu);
    int ok = s->st == POSENC_OK;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

/* Hand n doubles at p (which must stay valid until the slot comes round again) to the writer. */
static void sink_submit(struct sink *s, const double *p, uint64_t n)
{
    if (!s->threaded) {
        if (s->st == POSENC_OK)
            s->st = sink_write(s, p, n);
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->ptr[s->cur] = p;
    s->nelem[s->cur] = n;
    s->full[s->cur] = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    s->cur ^= 1;
}

/* Let the writer drain and stop; the first write error, if any. */
static posenc_status sink_finish(struct sink *s, posenc_error *err)
{
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        s->done = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->th, NULL);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        s->threaded = 0;
    }
    if (s->st != POSENC_OK && err)
        *err = s->err;
    return s->st;
}

struct rope_job {
    const posenc_rope_params *p;
    posenc_precision prec;
    posenc_layout layout;
    int width;
    const pe_positions *positions; /* --positions, or NULL: 0..n-1 */
    size_t n;
    size_t rows;                /* rows per chunk */
    int nthreads;
    int64_t *pos;               /* chunk positions */
    double *cbuf[2], *sbuf[2];  /* chunk cos/sin as doubles, one pair per sink slot */
};

/* Compute the rows [r0, r0 + k) into the cos/sin buffers of slot. */
static posenc_status rope_chunk(struct rope_job *j, int slot, size_t r0, size_t k,
                                posenc_error *err)
{
    if (j->positions) {
        pe_positions_fill(j->positions, r0, k, j->pos);
    } else {
        for (size_t i = 0; i < k; i++)
            j->pos[i] = (int64_t)(r0 + i);
    }
    return posenc_rope_table(j->p, j->prec, j->layout, j->pos, k, j->cbuf[slot], j->sbuf[slot],
                             j->nthreads, err);
}

/* Stream one of cos/sin (which = ARR_COS or ARR_SIN) through the sink. The arrays are written
 * one after the other, so the rows are computed twice (once per array): measured cheaper than
 * keeping the sin table from the cos pass, whose page faults cost more than the trigonometry
 * (Qwen3.5, 262144 x 64: 0.25 s vs 0.6 s of CPU, 16 MiB vs 80 MiB peak). */
static posenc_status rope_stream(struct rope_job *j, struct sink *s, int which, posenc_error *err)
{
    for (size_t r0 = 0; r0 < j->n; r0 += j->rows) {
        size_t k = j->n - r0 < j->rows ? j->n - r0 : j->rows;
        size_t ne = k * (size_t)j->width;
        if (!sink_acquire(s))
            return sink_finish(s, err);
        int slot = s->cur;
        posenc_status st = rope_chunk(j, slot, r0, k, err);
        if (st != POSENC_OK)
            return st;
        sink_submit(s, which == ARR_COS ? j->cbuf[slot] : j->sbuf[slot], ne);
    }
    return POSENC_OK;
}

static int rope_fail(posenc_writer *w, const posenc_error *err)
{
    posenc_writer_abort(w);
    return cmd_fail(CMD, err);
}

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

static int gen_rope(const struct gen_args *a, const posenc_model *m, const struct rope_opts *ro)
{
    posenc_error err = { 0 };
    posenc_rope_config cfg;
    posenc_rope_params p;
    struct cmd_meta mt = { 0 };
    struct rope_job j = { 0 };
    void *obuf = NULL;
    posenc_writer *w = NULL;
    int rc = CMD_EXIT_ERROR;
    const char *cfgname = a->config;

    /* which layer type */
    size_t nlt = posenc_model_layer_type_count(m);
    if (nlt > 0) {
        char list[1024];
        size_t off = 0;
        int found = 0;
        list[0] = '\0';
        for (size_t i = 0; i < nlt; i++) {
            const char *name = posenc_model_layer_type_name(m, i);
            if (ro->layer_type && strcmp(name, ro->layer_type) == 0)
                found = 1;
            int k = snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", name);
            if (k > 0 && (size_t)k < sizeof list - off)
                off += (size_t)k;
        }
        if (!ro->layer_type) {
            cmd_msg(CMD, "'%s': the config has several layer types (%s); pass --layer-type",
                       cfgname, list);
            return CMD_EXIT_USAGE;
        }
        if (!found) {
            cmd_msg(CMD, "'%s': unknown layer type '%s' (layer types: %s)", cfgname,
                       ro->layer_type, list);
            return CMD_EXIT_USAGE;
        }
    }
    if (posenc_model_rope(m, ro->layer_type, &cfg, &err) != POSENC_OK)
        return cmd_rope_fail(CMD, m, &err);

    /* positions and the sequence length L = max(position) + 1 (transformers' rule) */
    int64_t n_pos, seq_len, first, last;
    if (a->positions) { /* counted, in [0, POS_MAX), never materialised */
        n_pos = (int64_t)a->positions->count;
        seq_len = a->positions->max + 1;
        first = a->positions->first;
        last = a->positions->last;
    } else {
        if (a->seq_len > 0) {
            seq_len = a->seq_len;
        } else {
            seq_len = posenc_model_max_positions(m);
            if (seq_len <= 0) {
                cmd_msg(CMD, "'%s': no max_position_embeddings in the config; pass --seq-len "
                                "or --positions", cfgname);
                return CMD_EXIT_ERROR;
            }
            if (seq_len > POS_MAX) {
                cmd_msg(CMD, "'%s': max_position_embeddings %" PRId64 " is too large; pass "
                                "--seq-len or --positions", cfgname, seq_len);
                return CMD_EXIT_ERROR;
            }
        }
        n_pos = seq_len;
        first = 0;
        last = seq_len - 1;
    }

    posenc_vllm_info vi;
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
    if (ro->precision == POSENC_PREC_GGML) {
        int grc = cmd_ggml_params(CMD, cfgname, m, ro->layer_type, seq_len, &p);
        if (grc != CMD_EXIT_OK)
            return grc;
    }
    int width = posenc_rope_table_width(&p, ro->layout);
    if (width <= 0 || p.n_freq <= 0 || p.n_freq > POSENC_MAX_FREQ) {
        cmd_msg(CMD, "'%s': RoPE parameters give an empty table (rotary_dim %d)", cfgname,
                   p.rotary_dim);
        return CMD_EXIT_ERROR;
    }

    /* which arrays, and the size check */
    int want[ARR_N] = { 1, 1, 1 };
    int vl = ro->layout == POSENC_LAYOUT_VLLM; /* one array cos_sin_cache in cos's place */
    if (a->array)
        for (int i = 0; i < ARR_N; i++)
            want[i] = strcmp(a->array, vl && i == ARR_COS ? "cos_sin_cache" : arr_names[i]) == 0;
    if (vl)
        want[ARR_SIN] = 0;
    posenc_array_info info[ARR_N];
    uint64_t total = 0, nbytes[ARR_N] = { 0 };
    for (int i = 0; i < ARR_N; i++) {
        memset(&info[i], 0, sizeof info[i]);
        snprintf(info[i].name, sizeof info[i].name, "%s",
                 vl && i == ARR_COS ? "cos_sin_cache" : arr_names[i]);
        info[i].dtype = a->dtype;
        if (i == ARR_INV) {
            info[i].ndim = 1;
            info[i].shape[0] = p.n_freq;
        } else {
            info[i].ndim = 2;
            info[i].shape[0] = n_pos;
            info[i].shape[1] = width;
        }
        if (!want[i])
            continue;
        if (posenc_shape_size(info[i].ndim, info[i].shape, a->dtype, NULL, &nbytes[i], &err) !=
            POSENC_OK)
            return cmd_fail(CMD, &err);
        total += nbytes[i];
    }
    if (header_default_check(a, total / posenc_dtype_size(a->dtype), n_pos))
        return CMD_EXIT_ERROR;
    if (total > a->size_limit && !a->force) {
        char hs[32];
        int ntab = want[ARR_COS] + want[ARR_SIN];
        human_size(total, hs, sizeof hs);
        cmd_msg(CMD, "table would be %s (%" PRId64 " x %d x %d array%s, %s); pass --force to "
                        "write it", hs, n_pos, width, ntab ? ntab : 1, ntab == 1 ? "" : "s",
                   posenc_dtype_name(a->dtype));
        return CMD_EXIT_ERROR;
    }

    /* GGUF: llama.cpp's keys and tensors for the model, as its converter writes them */
    posenc_gguf_rope gr;
    int have_gr = 0;
    char gguf_note[POSENC_ERRMSG_MAX + 32];
    gguf_note[0] = '\0';
    if (a->wopts.format == POSENC_FMT_GGUF) {
        posenc_error ge = { 0 };
        posenc_status gs = posenc_gguf_rope_from_model(m, ro->layer_type, &gr, &ge);
        if (gs == POSENC_OK) {
            have_gr = 1;
        } else if (gs == POSENC_EUNSUPPORTED) {
            snprintf(gguf_note, sizeof gguf_note, "gguf: no llama.cpp keys: %s", ge.msg);
            cmd_msg(CMD, "'%s': %s; '%s' holds posenc's arrays and keys only", cfgname,
                       ge.msg, a->out);
        } else {
            return cmd_fail(CMD, &ge);
        }
    }
    add_rope_meta(&mt, a, m, &cfg, &p, ro, &vi, seq_len, first, last,
                  gguf_note[0] ? gguf_note : NULL);
    if (mt.oom) {
        cmd_meta_free(&mt);
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }

    /* chunk buffers */
    j.p = &p;
    j.prec = ro->precision;
    j.layout = ro->layout;
    j.width = width;
    j.positions = a->positions;
    j.n = (size_t)n_pos;
    j.nthreads = cmd_nthreads();
    j.rows = CHUNK_ELEMS / (size_t)width;
    if (j.rows > CHUNK_ROWS_MAX)
        j.rows = CHUNK_ROWS_MAX;
    if (j.rows < 1)
        j.rows = 1;
    if (j.rows > j.n)
        j.rows = j.n;
    size_t ne = j.rows * (size_t)width, es = posenc_dtype_size(a->dtype);
    size_t nob = ne > POSENC_MAX_FREQ ? ne : POSENC_MAX_FREQ;
    j.pos = malloc(j.rows * sizeof *j.pos);
    for (int i = 0; i < 2; i++) {
        j.cbuf[i] = malloc(ne * sizeof(double));
        j.sbuf[i] = malloc(ne * sizeof(double));
    }
    obuf = malloc(nob * es);
    if (!j.pos || !j.cbuf[0] || !j.sbuf[0] || !j.cbuf[1] || !j.sbuf[1] || !obuf) {
        cmd_msg(CMD, "out of memory");
        goto out;
    }
    if (posenc_writer_open(a->out, &a->wopts, &w, &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    if (cmd_meta_write(&mt, w, &err) != POSENC_OK ||
        (have_gr && posenc_gguf_writer_rope(w, &gr, &err) != POSENC_OK)) {
        rc = rope_fail(w, &err);
        goto out;
    }
    for (int i = 0; i < ARR_N; i++)
        if (want[i] && posenc_writer_declare(w, &info[i], &err) != POSENC_OK) {
            rc = rope_fail(w, &err);
            goto out;
        }
    struct sink sk;
    sink_start(&sk, w, a->dtype, obuf);
    posenc_status st = POSENC_OK;
    for (int i = ARR_COS; i <= ARR_SIN && st == POSENC_OK; i++)
        if (want[i])
            st = rope_stream(&j, &sk, i, &err);
    if (st != POSENC_OK) {
        posenc_error werr;
        sink_finish(&sk, &werr);
        rc = rope_fail(w, &err);
        goto out;
    }
    if (sink_finish(&sk, &err) != POSENC_OK) {
        rc = rope_fail(w, &err);
        goto out;
    }
    if (want[ARR_INV]) {
        unsigned char *o = obuf;
        double ga[POSENC_MAX_FREQ];
        const int64_t one[3] = { 1, 1, 1 };
        if (ro->precision == POSENC_PREC_GGML)
            posenc_ggml_rope_angles(&p.ggml, one, ga);
        for (int i = 0; i < p.n_freq; i++) {
            if (ro->precision == POSENC_PREC_GGML) {
                posenc_dtype_convert(o + (size_t)i * es, a->dtype, &ga[i], POSENC_DT_F64, 1);
            } else if (ro->precision != POSENC_PREC_EXACT) {
                float f = p.inv_freq_f32[i];
                posenc_dtype_convert(o + (size_t)i * es, a->dtype, &f, POSENC_DT_F32, 1);
            } else {
                round_dd(p.inv_hi[i], p.inv_lo[i], a->dtype, o + (size_t)i * es);
            }
        }
        if (posenc_writer_write(w, o, (uint64_t)p.n_freq, &err) != POSENC_OK) {
            rc = rope_fail(w, &err);
            goto out;
        }
    }
    if (posenc_writer_commit(w, &err) != POSENC_OK) {
        w = NULL; /* commit frees the writer and removes its temporaries on failure */
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    rc = CMD_EXIT_OK;
out:
    cmd_meta_free(&mt);
    free(j.pos);
    for (int i = 0; i < 2; i++) {
        free(j.cbuf[i]);
        free(j.sbuf[i]);
    }
    free(obuf);
    return rc;
}

/* ---- option parsing ---- */

/* Which options were given, to refuse those that do not apply to the encoding. */
enum {
    G_LAYER_TYPE = 1 << 0, G_PRECISION = 1 << 1, G_LAYOUT = 1 << 2,
    G_HEADS = 1 << 3, G_D_MODEL = 1 << 4, G_NUM_BUCKETS = 1 << 5, G_MAX_DISTANCE = 1 << 6,
    G_MAX_REL = 1 << 7, G_CONVENTION = 1 << 8, G_VARIANT = 1 << 9, G_WEIGHTS = 1 << 10,
    G_TENSOR = 1 << 11, G_DECODER = 1 << 12, G_BROADCAST = 1 << 13, G_MAX_MODEL_LEN = 1 << 14
};
static const struct {
    unsigned bit;
    const char *name;
} given_names[] = {
    { G_LAYER_TYPE, "--layer-type" }, { G_PRECISION, "--precision" }, { G_LAYOUT, "--table-layout" },
    { G_HEADS, "--heads" }, { G_D_MODEL, "--d-model" }, { G_NUM_BUCKETS, "--num-buckets" },
    { G_MAX_DISTANCE, "--max-distance" }, { G_MAX_REL, "--max-relative-position" },
    { G_CONVENTION, "--convention" }, { G_VARIANT, "--variant" }, { G_WEIGHTS, "--weights" },
    { G_TENSOR, "--tensor" }, { G_DECODER, "--decoder" }, { G_BROADCAST, "--broadcast" },
    { G_MAX_MODEL_LEN, "--max-model-len" },
};
#define ROPE_ONLY (G_LAYER_TYPE | G_PRECISION | G_LAYOUT | G_MAX_MODEL_LEN)

static const char *first_given(unsigned mask)
{
    for (size_t i = 0; i < sizeof given_names / sizeof given_names[0]; i++)
        if (mask & given_names[i].bit)
            return given_names[i].name;
    return NULL;
}

/* ---- the non-rotary encodings: ALiBi slopes and bias, T5 buckets
 * and bias, Shaw indices and gathered embeddings, sinusoidal and learned absolute tables.
 *
 * Every table is planned first (names, dtypes, shapes, byte count against the size limit), then
 * streamed row by row through the io.h writer, which renames the output into place only on
 * commit: a failed run leaves nothing behind. */
#define OUT_BUF_BYTES ((size_t)4 << 20)       /* conversion buffer between rows and writer */
#define WEIGHTS_MAX_BYTES ((uint64_t)1 << 31) /* a T5/Shaw/learned table read whole (as f32) */
#define MAX_ARRAYS 4

#define T5_ENCODER_TENSOR "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
#define T5_DECODER_TENSOR "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"

/* ---------------------------------------------------------------- the plan */

struct job;
typedef posenc_status (*emit_fn)(struct job *j, int which, posenc_error *err);

struct job {
    const struct gen_args *a;
    const posenc_model *m;
    const posenc_bias_config *bc;
    const char *enc;                 /* encoding name for messages */
    int narr;
    posenc_array_info arr[MAX_ARRAYS];
    int want[MAX_ARRAYS];
    emit_fn emit;
    struct cmd_meta mt;
    /* rows */
    int64_t nq;                      /* query rows (or table rows) */
    int64_t k_len;
    /* output */
    posenc_writer *w;
    unsigned char *buf;
    size_t buf_used;
    posenc_dtype buf_dt;
    /* per encoding */
    int heads;
    double slopes[1 << 16];
    posenc_alibi_kind kind;
    posenc_alibi_convention conv;
    int t5_bidir, num_buckets, max_distance;
    int64_t shaw_k;
    int shaw_bert;                   /* index clip(query - key) + k, as BERT's relative_key */
    float *weights;                  /* T5 [nb, H] / Shaw [2k+1, depth] / learned rows */
    int64_t wrows, wcols;
    posenc_sinusoidal *sin;
    int d_model;
    const char *wspec_path;          /* learned: streamed from here */
    size_t learned_index;
    int64_t row_offset;            /* learned: table row of position 0 (BART, OPT: 2) */
};

static posenc_status out_flush(struct job *j, posenc_error *err)
{
    if (j->buf_used == 0)
        return POSENC_OK;
    size_t es = posenc_dtype_size(j->buf_dt);
    posenc_status st = posenc_writer_write(j->w, j->buf, j->buf_used / es, err);
    j->buf_used = 0;
    return st;
}

/* Append n values of type st to the current array, converted to dt. */
static posenc_status out_put(struct job *j, posenc_dtype dt, const void *src, posenc_dtype st,
                             size_t n, posenc_error *err)
{
    size_t es = posenc_dtype_size(dt), ss = posenc_dtype_size(st);
    const unsigned char *s = src;
    if (j->buf_used && j->buf_dt != dt) {
        posenc_status r = out_flush(j, err);
        if (r != POSENC_OK)
            return r;
    }
    j->buf_dt = dt;
    while (n > 0) {
        size_t room = (OUT_BUF_BYTES - j->buf_used) / es;
        if (room == 0) {
            posenc_status r = out_flush(j, err);
            if (r != POSENC_OK)
                return r;
            continue;
        }
        size_t k = n < room ? n : room;
        posenc_dtype_convert(j->buf + j->buf_used, dt, s, st, k);
        j->buf_used += k * es;
        s += k * ss;
        n -= k;
    }
    return POSENC_OK;
}

static void set_info(posenc_array_info *a, const char *name, posenc_dtype dt, int ndim,
                     int64_t d0, int64_t d1, int64_t d2)
{
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->dtype = dt;
    a->ndim = ndim;
    a->shape[0] = d0;
    a->shape[1] = d1;
    a->shape[2] = d2;
}

/* Pick the arrays to write (--array), check the size limit, write them. */
static int run(struct job *j, const char *hint)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc = CMD_EXIT_ERROR, nwant = 0;
    uint64_t total = 0, total_values = 0;

    for (int i = 0; i < j->narr; i++) {
        j->want[i] = !a->array || strcmp(a->array, j->arr[i].name) == 0;
        nwant += j->want[i];
    }
    if (nwant == 0) {
        char names[256] = "";
        for (int i = 0; i < j->narr; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i ? ", " : "", j->arr[i].name);
        return cmd_usage_error(CMD, "--array: %s tables hold %s, not '%s'", j->enc, names,
                                  a->array);
    }
    if (posenc_format_one_array(a->wopts.format) && nwant > 1) {
        char names[256] = "";
        for (int i = 0; i < j->narr; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i ? ", " : "", j->arr[i].name);
        return cmd_usage_error(CMD, "%s holds one array: pass --array (%s)",
                                  strcmp(a->out, "-") == 0 ? "-o -" : "an NPY file", names);
    }
    for (int i = 0; i < j->narr; i++) {
        uint64_t nb, ne;
        if (!j->want[i])
            continue;
        if (posenc_shape_size(j->arr[i].ndim, j->arr[i].shape, j->arr[i].dtype, &ne, &nb,
                              &err) != POSENC_OK || nb > UINT64_MAX - total) {
            cmd_msg(CMD, "%s tables would be larger than 2^63 bytes; pass %s", j->enc, hint);
            return CMD_EXIT_ERROR;
        }
        total += nb;
        total_values += ne;
    }
    if (header_default_check(a, total_values, j->arr[0].ndim ? j->arr[0].shape[0] : 0))
        return CMD_EXIT_ERROR;
    if (total > a->size_limit && !a->force) {
        char hs[32], lim[32];
        human_size(total, hs, sizeof hs);
        human_size(a->size_limit, lim, sizeof lim);
        cmd_msg(CMD, "%s tables would be %s, over the %s limit; pass %s or --force", j->enc,
                   hs, lim, hint);
        return CMD_EXIT_ERROR;
    }
    if (j->mt.oom) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    j->buf = malloc(OUT_BUF_BYTES);
    if (!j->buf) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (posenc_writer_open(a->out, &a->wopts, &j->w, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    if (cmd_meta_write(&j->mt, j->w, &err) != POSENC_OK)
        goto fail;
    for (int i = 0; i < j->narr; i++)
        if (j->want[i] && posenc_writer_declare(j->w, &j->arr[i], &err) != POSENC_OK)
            goto fail;
    for (int i = 0; i < j->narr; i++) {
        if (!j->want[i])
            continue;
        if (j->emit(j, i, &err) != POSENC_OK || out_flush(j, &err) != POSENC_OK)
            goto fail;
    }
    if (posenc_writer_commit(j->w, &err) != POSENC_OK) {
        j->w = NULL;
        return cmd_fail(CMD, &err);
    }
    j->w = NULL;
    return CMD_EXIT_OK;
fail:
    rc = cmd_fail(CMD, &err);
    posenc_writer_abort(j->w);
    j->w = NULL;
    return rc;
}

/* ---------------------------------------------------------------- shared helpers */

/* Options that do not apply to this encoding are usage errors, not silently ignored. */
static int refuse_options(const struct gen_args *a, const char *enc, const char *allowed)
{
    struct {
        const char *name;
        int given;
    } opts[] = {
        { "--heads", a->heads != 0 },
        { "--d-model", a->d_model != 0 },
        { "--num-buckets", a->num_buckets != 0 },
        { "--max-distance", a->max_distance != 0 },
        { "--max-relative-position", a->max_relative_position != 0 },
        { "--convention", a->convention != NULL },
        { "--variant", a->variant != NULL },
        { "--weights", a->weights != NULL },
        { "--tensor", a->tensor != NULL },
        { "--decoder", a->decoder != 0 },
        { "--broadcast", a->broadcast != 0 },
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (!opts[i].given)
            continue;
        /* allowed is a space-separated list with a space at each end */
        char pat[64];
        snprintf(pat, sizeof pat, " %s ", opts[i].name);
        if (!strstr(allowed, pat))
            return cmd_usage_error(CMD, "%s does not apply to %s tables", opts[i].name, enc);
    }
    if (a->tensor && !a->weights)
        return cmd_usage_error(CMD, "--tensor needs --weights FILE");
    return 0;
}

/* Query positions: --positions, else 0..L-1 with L = --seq-len or the config's maximum. Key
 * positions 0..k_len-1 with k_len = L (max(position) + 1 for --positions). */
static int plan_positions(struct job *j)
{
    const struct gen_args *a = j->a;
    if (a->positions) { /* counted, in [0, POS_MAX), read row by row (qpos_at) */
        int64_t mx = a->positions->max;
        if (mx >= ((int64_t)1 << 40))
            return cmd_usage_error(CMD, "--positions: position %" PRId64 " is too large", mx);
        j->nq = (int64_t)a->positions->count;
        j->k_len = mx + 1;
        return 0;
    }
    int64_t L = a->seq_len;
    if (L <= 0 && j->bc && j->bc->max_positions > 0)
        L = j->bc->max_positions;
    if (L <= 0) {
        if (a->config)
            return cmd_usage_error(CMD, "'%s' gives no maximum position: pass --seq-len N",
                                      a->config);
        return cmd_usage_error(CMD, "%s tables need --seq-len N", j->enc);
    }
    if (L >= ((int64_t)1 << 40))
        return cmd_usage_error(CMD, "sequence length %" PRId64 " is too large", L);
    j->nq = L;
    j->k_len = L;
    return 0;
}

/* Position of query row r: the --positions entry, else r itself. */
static int64_t qpos_at(const struct job *j, int64_t r)
{
    return j->a->positions ? pe_positions_at(j->a->positions, (uint64_t)r) : r;
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
static int find_tensor(posenc_container *c, const char *path, const char *const *names,
                       const char *const *prefixes, size_t *index)
{
    size_t n = posenc_container_count(c);
    for (const char *const *nm = names; *nm; nm++) {
        for (const char *const *pf = prefixes; *pf; pf++) {
            char full[POSENC_NAME_MAX * 2];
            snprintf(full, sizeof full, "%s%s", *pf, *nm);
            for (size_t i = 0; i < n; i++) {
                if (strcmp(posenc_container_array(c, i)->name, full) == 0) {
                    *index = i;
                    return 0;
                }
            }
        }
    }
    cmd_msg(CMD, "'%s': no tensor '%s'%s", path, names[0],
               prefixes[1] ? " (nor with a transformer./bert. prefix); pass --tensor NAME"
                           : "; pass --tensor NAME");
    return CMD_EXIT_ERROR;
}

/* Read a whole 2-D weights tensor as float32 into j->weights. */
static int load_weights(struct job *j, const char *const *names, const char *const *prefixes,
                        size_t *index_out)
{
    const char *path = j->a->weights;
    posenc_error err = { 0 };
    posenc_container *c = NULL;
    posenc_reader *r = NULL;
    int rc = CMD_EXIT_ERROR;
    size_t idx;
    if (posenc_container_open(path, NULL, &c, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    if ((rc = find_tensor(c, path, names, prefixes, &idx)))
        goto out;
    rc = CMD_EXIT_ERROR;
    const posenc_array_info *info = posenc_container_array(c, idx);
    if (info->ndim != 2 || !posenc_dtype_is_float(info->dtype)) {
        char sh[128];
        posenc_shape_str(info->ndim, info->shape, sh, sizeof sh);
        cmd_msg(CMD, "'%s': tensor '%s' is %s %s, not a 2-D float table", path, info->name,
                   posenc_dtype_name(info->dtype), sh);
        goto out;
    }
    uint64_t nelem, nbytes;
    if (posenc_shape_size(2, info->shape, POSENC_DT_F32, &nelem, &nbytes, &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    if (nbytes > WEIGHTS_MAX_BYTES) {
        cmd_msg(CMD, "'%s': tensor '%s' is too large (%" PRIu64 " bytes as f32)", path,
                   info->name, nbytes);
        goto out;
    }
    j->wrows = info->shape[0];
    j->wcols = info->shape[1];
    if (index_out) {
        *index_out = idx;
        rc = CMD_EXIT_OK;
        goto out;
    }
    j->weights = malloc(nbytes ? (size_t)nbytes : 1);
    void *raw = malloc(nelem ? (size_t)nelem * posenc_dtype_size(info->dtype) : 1);
    if (!j->weights || !raw) {
        free(raw);
        cmd_msg(CMD, "out of memory");
        goto out;
    }
    if (posenc_reader_open_index(c, idx, &r, &err) != POSENC_OK ||
        posenc_reader_read(r, raw, nelem, &err) != POSENC_OK) {
        free(raw);
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    posenc_dtype_convert(j->weights, POSENC_DT_F32, raw, info->dtype, (size_t)nelem);
    free(raw);
    rc = CMD_EXIT_OK;
out:
    posenc_reader_close(r);
    posenc_container_close(c);
    return rc;
}

/* ---------------------------------------------------------------- ALiBi */

static posenc_status emit_alibi(struct job *j, int which, posenc_error *err)
{
    posenc_dtype dt = j->a->dtype;
    if (strcmp(j->arr[which].name, "slopes") == 0)
        return out_put(j, dt, j->slopes, POSENC_DT_F64, (size_t)j->heads, err);
    double *row = malloc((size_t)j->k_len * sizeof *row);
    if (!row)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = POSENC_OK;
    for (int h = 0; h < j->heads && st == POSENC_OK; h++) {
        if (j->a->broadcast) {
            posenc_alibi_row_kind(j->kind, j->slopes[h], j->conv, j->k_len - 1, j->k_len, row);
            st = out_put(j, dt, row, POSENC_DT_F64, (size_t)j->k_len, err);
            continue;
        }
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
            posenc_alibi_row_kind(j->kind, j->slopes[h], j->conv, qpos_at(j, r), j->k_len, row);
            st = out_put(j, dt, row, POSENC_DT_F64, (size_t)j->k_len, err);
        }
    }
    free(row);
    return st;
}

static int gen_alibi(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc;
    if ((rc = refuse_options(a, "ALiBi", " --heads --convention --variant --broadcast ")))
        return rc;
    j->heads = a->heads ? a->heads : j->bc ? j->bc->heads : 0;
    if (j->heads <= 0)
        return cmd_usage_error(CMD, "ALiBi tables need --heads N%s",
                                  a->config ? " (the config gives no number of heads)" : "");
    if (j->heads > (1 << 16))
        return cmd_usage_error(CMD, "%d ALiBi heads is too many", j->heads);
    j->kind = j->bc ? j->bc->alibi_kind : POSENC_ALIBI_REFERENCE;
    if (a->variant && posenc_alibi_kind_parse(a->variant, &j->kind, &err) != POSENC_OK)
        return cmd_usage_error(CMD, "--variant: %s", err.msg);
    double bias_max = j->bc && j->bc->alibi_bias_max > 0 ? j->bc->alibi_bias_max : 8.0;
    /* default convention: what the model's own code builds (MPT: m(j - i) at the last query;
     * BLOOM, Baichuan, Falcon and the Press reference: m * j; a bidirectional BERT-style
     * encoder: -m|i - j|) */
    j->conv = j->bc && j->bc->alibi_symmetric ? POSENC_ALIBI_SYMMETRIC
              : j->kind == POSENC_ALIBI_MPT   ? POSENC_ALIBI_CAUSAL
                                              : POSENC_ALIBI_KEYINDEX;
    if (a->convention && posenc_alibi_convention_parse(a->convention, &j->conv, &err) != POSENC_OK)
        return cmd_usage_error(CMD, "--convention: %s", err.msg);
    if (posenc_alibi_slopes(j->kind, j->heads, bias_max, j->slopes, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    if ((rc = plan_positions(j)))
        return rc;

    meta_common(j);
    cmd_meta_str(&j->mt, "variant", posenc_alibi_kind_name(j->kind));
    cmd_meta_str(&j->mt, "convention", posenc_alibi_convention_name(j->conv));
    cmd_meta_int(&j->mt, "heads", j->heads);
    if (j->kind == POSENC_ALIBI_MPT)
        cmd_meta_num(&j->mt, "alibi_bias_max", bias_max);
    cmd_meta_nums(&j->mt, "slopes", j->slopes, j->heads);
    cmd_meta_int(&j->mt, "q_len", a->broadcast ? 1 : j->nq);
    cmd_meta_int(&j->mt, "k_len", j->k_len);
    if (a->broadcast)
        cmd_meta_int(&j->mt, "broadcast_query", j->k_len - 1);

    j->narr = 2;
    set_info(&j->arr[0], "slopes", a->dtype, 1, j->heads, 0, 0);
    set_info(&j->arr[1], "bias", a->dtype, 3, j->heads, a->broadcast ? 1 : j->nq, j->k_len);
    j->emit = emit_alibi;
    return run(j, "a smaller --seq-len, --broadcast, --array slopes");
}

/* ---------------------------------------------------------------- T5 */

static posenc_status emit_t5(struct job *j, int which, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    if (strcmp(j->arr[which].name, "buckets") == 0) {
        int32_t *row = malloc((size_t)j->k_len * sizeof *row);
        if (!row)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
            posenc_t5_bucket_row(qpos_at(j, r), j->k_len, j->t5_bidir, j->num_buckets,
                                 j->max_distance, row);
            st = out_put(j, POSENC_DT_I32, row, POSENC_DT_I32, (size_t)j->k_len, err);
        }
        free(row);
        return st;
    }
    float *row = malloc((size_t)j->k_len * sizeof *row);
    if (!row)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    for (int h = 0; h < j->heads && st == POSENC_OK; h++)
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
            posenc_t5_bias_row(j->weights, j->heads, h, qpos_at(j, r), j->k_len, j->t5_bidir,
                               j->num_buckets, j->max_distance, row);
            st = out_put(j, j->a->dtype, row, POSENC_DT_F32, (size_t)j->k_len, err);
        }
    free(row);
    return st;
}

static int gen_t5(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc;
    if ((rc = refuse_options(a, "T5", " --heads --num-buckets --max-distance --decoder --weights "
                                      "--tensor ")))
        return rc;
    const posenc_bias_config *bc = j->bc;
    j->num_buckets = a->num_buckets ? a->num_buckets : bc && bc->num_buckets ? bc->num_buckets : 32;
    j->max_distance = a->max_distance ? a->max_distance
                      : bc && bc->max_distance ? bc->max_distance : 128;
    int decoder = a->decoder || (bc && bc->is_decoder);
    j->t5_bidir = !decoder;
    if (posenc_t5_check(j->t5_bidir, j->num_buckets, j->max_distance, &err) != POSENC_OK) {
        if (a->num_buckets || a->max_distance || !a->config)
            return cmd_usage_error(CMD, "%s", err.msg);
        cmd_msg(CMD, "'%s': %s", a->config, err.msg);
        return CMD_EXIT_ERROR;
    }
    if (a->heads && !a->weights)
        return cmd_usage_error(CMD, "--heads applies to T5 tables only with --weights");
    if (a->weights) {
        const char *names[] = { a->tensor ? a->tensor
                                          : decoder ? T5_DECODER_TENSOR : T5_ENCODER_TENSOR,
                                NULL };
        const char *prefixes[] = { "", NULL };
        if ((rc = load_weights(j, names, prefixes, NULL)))
            return rc;
        if (j->wrows != j->num_buckets) {
            cmd_msg(CMD, "'%s': tensor '%s' has %" PRId64 " rows, but there are %d buckets "
                            "(shape must be [num_buckets, heads])", a->weights, names[0],
                       j->wrows, j->num_buckets);
            return CMD_EXIT_ERROR;
        }
        int want_heads = a->heads ? a->heads : bc ? bc->heads : 0;
        if (want_heads && j->wcols != want_heads) {
            cmd_msg(CMD, "'%s': tensor '%s' has %" PRId64 " heads (columns), not %d",
                       a->weights, names[0], j->wcols, want_heads);
            return CMD_EXIT_ERROR;
        }
        if (j->wcols < 1 || j->wcols > (1 << 16)) {
            cmd_msg(CMD, "'%s': tensor '%s' has %" PRId64 " columns", a->weights, names[0],
                       j->wcols);
            return CMD_EXIT_ERROR;
        }
        j->heads = (int)j->wcols;
        meta_common(j);
        cmd_meta_str(&j->mt, "weights", a->weights);
        cmd_meta_str(&j->mt, "tensor", names[0]);
    } else {
        meta_common(j);
    }
    if ((rc = plan_positions(j)))
        return rc;
    cmd_meta_str(&j->mt, "kind", decoder ? "decoder" : "encoder");
    cmd_meta_json(&j->mt, "bidirectional", j->t5_bidir ? "true" : "false");
    cmd_meta_int(&j->mt, "num_buckets", j->num_buckets);
    cmd_meta_int(&j->mt, "max_distance", j->max_distance);
    cmd_meta_int(&j->mt, "q_len", j->nq);
    cmd_meta_int(&j->mt, "k_len", j->k_len);
    if (j->heads)
        cmd_meta_int(&j->mt, "heads", j->heads);
    j->narr = 1;
    set_info(&j->arr[0], "buckets", POSENC_DT_I32, 2, j->nq, j->k_len, 0);
    if (a->weights) {
        j->narr = 2;
        set_info(&j->arr[1], "bias", a->dtype, 3, j->heads, j->nq, j->k_len);
    }
    j->emit = emit_t5;
    return run(j, "a smaller --seq-len");
}

/* ---------------------------------------------------------------- Shaw */

static posenc_status emit_shaw(struct job *j, int which, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    if (strcmp(j->arr[which].name, "index") == 0) {
        int32_t *row = malloc((size_t)j->k_len * sizeof *row);
        if (!row)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
            int64_t i = qpos_at(j, r);
            for (int64_t c = 0; c < j->k_len; c++)
                row[c] = (int32_t)(j->shaw_bert ? posenc_shaw_index(c, i, j->shaw_k)
                                                : posenc_shaw_index(i, c, j->shaw_k));
            st = out_put(j, POSENC_DT_I32, row, POSENC_DT_I32, (size_t)j->k_len, err);
        }
        free(row);
        return st;
    }
    for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
        int64_t i = qpos_at(j, r);
        for (int64_t c = 0; c < j->k_len && st == POSENC_OK; c++) {
            int64_t idx = j->shaw_bert ? posenc_shaw_index(c, i, j->shaw_k)
                                       : posenc_shaw_index(i, c, j->shaw_k);
            st = out_put(j, j->a->dtype, j->weights + (size_t)idx * (size_t)j->wcols,
                         POSENC_DT_F32, (size_t)j->wcols, err);
        }
    }
    return st;
}

static int gen_shaw(struct job *j)
{
    const struct gen_args *a = j->a;
    int rc;
    if ((rc = refuse_options(a, "Shaw", " --max-relative-position --weights --tensor --variant ")))
        return rc;
    /* BERT's relative_key embeds query - key (distance_embedding(l - r + max_pos - 1)); Shaw et
     * al. and tensor2tensor key - query. Default: what the config's model does. */
    j->shaw_bert = j->bc && j->bc->max_relative_position > 0 && j->bc->shaw_query_minus_key;
    if (a->variant) {
        if (strcmp(a->variant, "bert") == 0)
            j->shaw_bert = 1;
        else if (strcmp(a->variant, "shaw") == 0)
            j->shaw_bert = 0;
        else
            return cmd_usage_error(CMD, "--variant: unknown Shaw variant '%s' (shaw: key - "
                                           "query, or bert: query - key)", a->variant);
    }
    j->shaw_k = a->max_relative_position ? a->max_relative_position
                : j->bc ? j->bc->max_relative_position : 0;
    if (j->shaw_k <= 0)
        return cmd_usage_error(CMD, "Shaw tables need --max-relative-position K%s",
                                  a->config ? " (the config gives none)" : "");
    if (j->shaw_k > (1 << 30))
        return cmd_usage_error(CMD, "--max-relative-position %" PRId64 " is too large",
                                  j->shaw_k);
    meta_common(j);
    if (a->weights) {
        /* one tensor in the file needs no name */
        if (!a->tensor) {
            posenc_error err = { 0 };
            posenc_container *c = NULL;
            if (posenc_container_open(a->weights, NULL, &c, &err) != POSENC_OK)
                return cmd_fail(CMD, &err);
            size_t n = posenc_container_count(c);
            char name[POSENC_NAME_MAX];
            if (n == 1)
                snprintf(name, sizeof name, "%s", posenc_container_array(c, 0)->name);
            posenc_container_close(c);
            if (n != 1)
                return cmd_usage_error(CMD, "'%s' holds %zu tensors: pass --tensor NAME (the "
                                               "[2k+1, depth] table)", a->weights, n);
            const char *names[] = { name, NULL }, *prefixes[] = { "", NULL };
            if ((rc = load_weights(j, names, prefixes, NULL)))
                return rc;
            cmd_meta_str(&j->mt, "tensor", name);
        } else {
            const char *names[] = { a->tensor, NULL }, *prefixes[] = { "", NULL };
            if ((rc = load_weights(j, names, prefixes, NULL)))
                return rc;
            cmd_meta_str(&j->mt, "tensor", a->tensor);
        }
        if (j->wrows != 2 * j->shaw_k + 1) {
            cmd_msg(CMD, "'%s': the relative embedding table has %" PRId64 " rows, but "
                            "max_relative_position %" PRId64 " needs 2k+1 = %" PRId64,
                       a->weights, j->wrows, j->shaw_k, 2 * j->shaw_k + 1);
            return CMD_EXIT_ERROR;
        }
        cmd_meta_str(&j->mt, "weights", a->weights);
    }
    if ((rc = plan_positions(j)))
        return rc;
    cmd_meta_int(&j->mt, "max_relative_position", j->shaw_k);
    cmd_meta_str(&j->mt, "variant", j->shaw_bert ? "bert" : "shaw");
    cmd_meta_str(&j->mt, "index_formula",
             j->shaw_bert ? "clip(query - key, -k, k) + k" : "clip(key - query, -k, k) + k");
    cmd_meta_int(&j->mt, "q_len", j->nq);
    cmd_meta_int(&j->mt, "k_len", j->k_len);
    j->narr = 1;
    set_info(&j->arr[0], "index", POSENC_DT_I32, 2, j->nq, j->k_len, 0);
    if (a->weights) {
        j->narr = 2;
        set_info(&j->arr[1], "rk", a->dtype, 3, j->nq, j->k_len, j->wcols);
    }
    j->emit = emit_shaw;
    return run(j, "a smaller --seq-len");
}

/* ---------------------------------------------------------------- sinusoidal */

static posenc_status emit_sinusoidal(struct job *j, int which, posenc_error *err)
{
    (void)which;
    double *row = malloc((size_t)j->d_model * sizeof *row);
    if (!row)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = POSENC_OK;
    for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++) {
        posenc_sinusoidal_fill(j->sin, qpos_at(j, r), row);
        st = out_put(j, j->a->dtype, row, POSENC_DT_F64, (size_t)j->d_model, err);
    }
    free(row);
    return st;
}

static int gen_sinusoidal(struct job *j)
{
    const struct gen_args *a = j->a;
    posenc_error err = { 0 };
    int rc;
    if ((rc = refuse_options(a, "sinusoidal", " --d-model --variant ")))
        return rc;
    j->d_model = a->d_model ? a->d_model : j->bc ? j->bc->d_model : 0;
    if (j->d_model <= 0)
        return cmd_usage_error(CMD, "sinusoidal tables need --d-model N%s",
                                  a->config ? " (the config gives no width)" : "");
    /* the model's own variant (registry), else the original Transformer's */
    posenc_sinusoidal_variant v = j->bc ? j->bc->sinusoidal_variant : POSENC_SIN_VASWANI;
    if (a->variant && posenc_sinusoidal_variant_parse(a->variant, &v, &err) != POSENC_OK)
        return cmd_usage_error(CMD, "--variant: %s", err.msg);
    int pad = -1;
    if (v == POSENC_SIN_FAIRSEQ)
        pad = j->bc && j->bc->padding_idx >= 0 ? j->bc->padding_idx : 1;
    if (posenc_sinusoidal_new(v, j->d_model, pad, &j->sin, &err) != POSENC_OK) {
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
    meta_common(j);
    cmd_meta_str(&j->mt, "variant", posenc_sinusoidal_variant_name(v));
    cmd_meta_int(&j->mt, "d_model", j->d_model);
    cmd_meta_int(&j->mt, "n_positions", j->nq);
    if (v == POSENC_SIN_FAIRSEQ)
        cmd_meta_int(&j->mt, "padding_idx", pad);
    j->narr = 1;
    set_info(&j->arr[0], "pe", a->dtype, 2, j->nq, j->d_model, 0);
    j->emit = emit_sinusoidal;
    return run(j, "a smaller --seq-len");
}

/* ---------------------------------------------------------------- learned */

static posenc_status emit_learned(struct job *j, int which, posenc_error *err)
{
    (void)which;
    posenc_status st = POSENC_OK;
    if (j->a->positions) {
        for (int64_t r = 0; r < j->nq && st == POSENC_OK; r++)
            st = out_put(j, j->a->dtype,
                         j->weights + (size_t)(qpos_at(j, r) + j->row_offset) * (size_t)j->wcols,
                         POSENC_DT_F32, (size_t)j->wcols, err);
        return st;
    }
    /* stream the first nq rows straight from the checkpoint */
    posenc_container *c = NULL;
    posenc_reader *r = NULL;
    void *raw = NULL;
    if ((st = posenc_container_open(j->a->weights, NULL, &c, err)) != POSENC_OK)
        return st;
    if ((st = posenc_reader_open_index(c, j->learned_index, &r, err)) != POSENC_OK)
        goto out;
    posenc_dtype src = posenc_reader_info(r)->dtype;
    size_t es = posenc_dtype_size(src);
    int64_t rows_per = (int64_t)(((size_t)1 << 22) / ((size_t)j->wcols * es));
    if (rows_per < 1)
        rows_per = 1;
    raw = malloc((size_t)rows_per * (size_t)j->wcols * es);
    if (!raw) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    /* the rows before position 0 (BART/OPT's 2, RoBERTa's padding_idx + 1) are skipped */
    for (int64_t r0 = 0; r0 < j->row_offset && st == POSENC_OK; r0 += rows_per) {
        int64_t k = j->row_offset - r0 < rows_per ? j->row_offset - r0 : rows_per;
        st = posenc_reader_read(r, raw, (uint64_t)k * (uint64_t)j->wcols, err);
    }
    for (int64_t r0 = 0; r0 < j->nq && st == POSENC_OK; r0 += rows_per) {
        int64_t k = j->nq - r0 < rows_per ? j->nq - r0 : rows_per;
        uint64_t ne = (uint64_t)k * (uint64_t)j->wcols;
        if ((st = posenc_reader_read(r, raw, ne, err)) != POSENC_OK)
            break;
        st = out_put(j, j->a->dtype, raw, src, (size_t)ne, err);
    }
out:
    free(raw);
    posenc_reader_close(r);
    posenc_container_close(c);
    return st;
}

static int gen_learned(struct job *j)
{
    const struct gen_args *a = j->a;
    int rc;
    if ((rc = refuse_options(a, "learned", " --weights --tensor --d-model ")))
        return rc;
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
    size_t idx;
    if ((rc = load_weights(j, names, a->tensor ? prefixes_exact : prefixes_model, &idx)))
        return rc;
    j->learned_index = idx;
    if (a->d_model && a->d_model != j->wcols) {
        cmd_msg(CMD, "'%s': tensor '%s' is %" PRId64 " wide, not --d-model %d", a->weights,
                   name, j->wcols, a->d_model);
        return CMD_EXIT_ERROR;
    }
    /* the model's positions start at row position_offset of its table */
    j->row_offset = j->bc ? j->bc->position_offset : 0;
    if (j->row_offset >= j->wrows) {
        cmd_msg(CMD, "'%s': tensor '%s' has %" PRId64 " rows, but the model's positions "
                        "start at row %" PRId64, a->weights, name, j->wrows, j->row_offset);
        return CMD_EXIT_ERROR;
    }
    j->wrows -= j->row_offset;
    if (a->positions) {
        if (a->positions->max >= j->wrows) {
            cmd_msg(CMD, "'%s': position %" PRId64 " is past the %" PRId64
                            " positions of the learned table", a->weights, a->positions->max,
                       j->wrows);
            return CMD_EXIT_ERROR;
        }
        if ((rc = load_weights(j, names, a->tensor ? prefixes_exact : prefixes_model, NULL)))
            return rc;
        if ((rc = plan_positions(j)))
            return rc;
    } else {
        j->nq = a->seq_len ? a->seq_len : j->wrows;
        if (j->nq > j->wrows) {
            cmd_msg(CMD, "'%s': --seq-len %" PRId64 " is past the %" PRId64
                            " positions of the learned table", a->weights, j->nq, j->wrows);
            return CMD_EXIT_ERROR;
        }
    }
    meta_common(j);
    cmd_meta_str(&j->mt, "weights", a->weights);
    cmd_meta_str(&j->mt, "tensor", name);
    cmd_meta_int(&j->mt, "d_model", j->wcols);
    cmd_meta_int(&j->mt, "n_positions", j->nq);
    cmd_meta_int(&j->mt, "row_offset", j->row_offset);
    j->narr = 1;
    set_info(&j->arr[0], "pe", a->dtype, 2, j->nq, j->wcols, 0);
    j->emit = emit_learned;
    return run(j, "a smaller --seq-len");
}

/* ---------------------------------------------------------------- dispatch */

static int gen_nonrope(const struct gen_args *a, const posenc_model *m)
{
    struct job *j = calloc(1, sizeof *j);
    int rc;
    if (!j) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    j->a = a;
    j->m = m;
    j->bc = m ? posenc_model_bias(m) : NULL;
    j->enc = posenc_encoding_name(a->encoding);
    switch (a->encoding) {
    case POSENC_ENC_ALIBI: rc = gen_alibi(j); break;
    case POSENC_ENC_T5: rc = gen_t5(j); break;
    case POSENC_ENC_SHAW: rc = gen_shaw(j); break;
    case POSENC_ENC_SINUSOIDAL: rc = gen_sinusoidal(j); break;
    case POSENC_ENC_LEARNED: rc = gen_learned(j); break;
    case POSENC_ENC_NONE:
        cmd_msg(CMD, "%s%s%suses no position encoding (NoPE): there is no table to generate",
                   a->config ? "'" : "", a->config ? a->config : "", a->config ? "' " : "");
        rc = CMD_EXIT_ERROR;
        break;
    default:
        cmd_msg(CMD, "%s is not a non-rotary encoding", j->enc);
        rc = CMD_EXIT_ERROR;
        break;
    }
    cmd_meta_free(&j->mt);
    free(j->weights);
    free(j->buf);
    posenc_sinusoidal_free(j->sin);
    if (j->w)
        posenc_writer_abort(j->w);
    free(j);
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
