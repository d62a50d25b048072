/* examples/capture_llama.c: record llama.cpp's pre- and post-RoPE q/k of every layer of a GGUF
 * model, with the positions, into one safetensors file for posenc verify.
 *
 *     make capture-llama LLAMA_DIR=/path/to/llama.cpp [LLAMA_LIBDIR=...]
 *     build/capture-llama [-p 0:8,40000:8] [-c N_CTX] [--backend LIB] model.gguf qk.safetensors
 *     posenc verify --config config.json --gguf model.gguf --q qk.safetensors \
 *         --layout ggml --seq-len N_CTX
 *
 * Not part of posenc: it links libllama (llama.cpp's include/llama.h, ggml/include/ggml*.h).
 *
 * How. Each range START:COUNT of -p is decoded as a fresh sequence (the memory cleared first):
 * llama.cpp's batch allocator accepts any starting position for a sequence the memory holds
 * nothing of, and asks only that positions inside one batch be consecutive (ggml-org/llama.cpp
 * src/llama-batch.cpp llama_batch_allocr::init: "Y = X + 1" is checked against the memory's last
 * position, which a cleared sequence has none of). The token ids are pseudo-random; the positions
 * are what is studied. The scheduler's eval callback (llama_context_params.cb_eval, called by
 * ggml/src/ggml-backend.cpp ggml_backend_sched_compute_splits) is asked, before each node is
 * computed, whether its data is wanted: saying yes to every node computes the graph node by node,
 * so when the question comes for a GGML_OP_ROPE node its input src[0] is computed and the node is
 * not yet, and src[0] is copied then (after the node runs src[0]'s memory may hold the rotated
 * values: ggml-alloc lets ROPE work in place). The node itself (rotated) and src[1] (the int32
 * positions; 4 per token for M-RoPE) are copied when the callback is told the node is done.
 * Node names carry the layer (ggml-org/llama.cpp src/llama-context.cpp graph_get_cb: "%s-%d",
 * e.g. Qcur-0, Kcur-0, q_pe-3, k_pe-3); a name starting with q or Q is the query, k or K the key.
 * The DSA indexer's ROPE nodes (indexer_q-N, indexer_k-N) are left out, and counted.
 * Tensors are read with ggml_backend_tensor_get and copied element by element through their
 * byte strides nb[], so views that are not contiguous (DeepSeek's q_pe) come out whole.
 *
 * Output, in llama.cpp's own layout [tokens, heads, head_dim] (ggml ne = head_dim, heads,
 * tokens; posenc --layout ggml), the tensors' own dtype (F32, F16 or BF16), tokens of all
 * ranges one after the other:
 *     pre.layers.N.q, pre.layers.N.k     src[0] of layer N's ROPE nodes
 *     rope.layers.N.q, rope.layers.N.k   the ROPE nodes' output
 *     positions                          I32 [tokens], or [P, tokens] for P positions per token
 * and __metadata__ with the model's architecture, n_ctx and the ranges.
 * Exit status: 0 ok, 2 usage error, 3 any other error (one line on stderr). */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-backend.h"
#include "ggml.h"
#include "llama.h"

#define PROG "capture-llama"
#define MAX_RANGES 64

struct rec {             /* one layer's q or k, all ranges */
    int layer, role;     /* role 0 q, 1 k */
    enum ggml_type type;
    int64_t dim, heads, tokens;
    unsigned char *pre, *post;
    size_t cap;          /* bytes allocated in pre and post each */
    int seen;            /* the decode that last appended */
};

struct cap {
    struct rec *v;
    size_t n, cap;
    int32_t *pos;        /* [P][tokens] once all ranges ran, built range by range */
    int64_t pos_tokens;  /* tokens whose positions are stored */
    int64_t npos;        /* positions per token, 0 until the first ROPE node */
    size_t pos_cap;
    int decode;          /* current decode, from 1 */
    int64_t batch_tokens;
    int pos_taken;       /* this decode's positions are stored */
    int rope_count;      /* ROPE nodes named neither q nor k: alternate */
    int indexer;         /* the DSA indexer's ROPE nodes in the first decode, left out */
    char err[512];       /* first error, ends the run */
    unsigned char *scratch;
    size_t scratch_cap;
};

static char last_log[512]; /* the first error llama.cpp logged since it was cleared */

static void on_log(enum ggml_log_level level, const char *text, void *ud)
{
    int verbose = *(const int *)ud;
    if (verbose)
        fputs(text, stderr);
    /* the first error line says most (llama_model_load: error loading model: ...) */
    if (level == GGML_LOG_LEVEL_ERROR && !last_log[0] && text[0] && strcmp(text, "\n") != 0) {
        snprintf(last_log, sizeof last_log, "%s", text);
        size_t n = strlen(last_log);
        while (n && (last_log[n - 1] == '\n' || last_log[n - 1] == ' '))
            last_log[--n] = '\0';
    }
}

static void die(int rc, const char *fmt, ...)
{
    va_list ap;
    fputs(PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(rc);
}

static void fail(struct cap *c, const char *fmt, ...)
{
    if (c->err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

static size_t type_size(enum ggml_type t)
{
    return t == GGML_TYPE_F32 ? 4 : t == GGML_TYPE_F16 || t == GGML_TYPE_BF16 ? 2 : 0;
}

static const char *st_dtype(enum ggml_type t)
{
    return t == GGML_TYPE_F32 ? "F32" : t == GGML_TYPE_F16 ? "F16" : "BF16";
}

/* The bytes of t (a view: the span its strides cover) in c->scratch. */
static const unsigned char *tensor_bytes(struct cap *c, const struct ggml_tensor *t)
{
    size_t n = ggml_nbytes(t);
    if (n > c->scratch_cap) {
        unsigned char *p = realloc(c->scratch, n);
        if (!p) {
            fail(c, "out of memory");
            return NULL;
        }
        c->scratch = p;
        c->scratch_cap = n;
    }
    ggml_backend_tensor_get(t, c->scratch, 0, n);
    return c->scratch;
}

/* Append t's elements in [ne2][ne1][ne0] order (through nb[]) to dst. */
static void gather(const struct ggml_tensor *t, const unsigned char *src, unsigned char *dst)
{
    size_t es = type_size(t->type);
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
            for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                memcpy(dst, src + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2], es);
                dst += es;
            }
}

/* 1 when name ends in "-LAYER" */
static bool has_layer(const char *name)
{
    const char *dash = strrchr(name, '-');
    return dash && dash[1] >= '0' && dash[1] <= '9';
}

/* Layer and role from a node name such as "Qcur-3" or "k_pe-0". A name that is neither q nor k
 * takes the next role in turn when asked about (ask), the same again once computed. */
static int parse_name(struct cap *c, const char *name, bool ask, int *layer, int *role)
{
    const char *dash = strrchr(name, '-');
    char *end;
    if (!has_layer(name))
        return fail(c, "ROPE node '%s' names no layer (expected NAME-LAYER)", name), -1;
    errno = 0;
    long l = strtol(dash + 1, &end, 10);
    if (errno || l < 0 || l > 1000000 || (*end && *end != ' '))
        return fail(c, "ROPE node '%s' names no layer (expected NAME-LAYER)", name), -1;
    *layer = (int)l;
    if (name[0] == 'q' || name[0] == 'Q')
        *role = 0;
    else if (name[0] == 'k' || name[0] == 'K')
        *role = 1;
    else /* llama.cpp ropes the query before the key */
        *role = ask ? c->rope_count++ % 2 : (c->rope_count + 1) % 2;
    return 0;
}

/* The name that says a ROPE node's layer: its own, or, when llama.cpp left the node unnamed
 * (ggml's "node_N"), the nearest of its inputs' (src[0], up to 4 steps) that has one.
 * ggml-org/llama.cpp src/models/hunyuan-moe.cpp llama_model_hunyuan_moe::graph names Kcur
 * ("Kcur-N") before it ropes it and the result only after a norm; src/models/hy-v3.cpp
 * llama_model_hy_v3::graph names neither rope, whose inputs are build_norm's "norm_w-N" (the
 * role then goes in turn, as parse_name gives it to any name that is neither q nor k). */
static const char *node_name(const struct ggml_tensor *t)
{
    const struct ggml_tensor *s = t;
    for (int i = 0; i < 5 && s; i++, s = s->src[0])
        if (has_layer(s->name))
            return s->name;
    return t->name;
}

static struct rec *find_rec(struct cap *c, int layer, int role, const struct ggml_tensor *t)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].layer == layer && c->v[i].role == role)
            return &c->v[i];
    if (c->decode > 1) {
        fail(c, "ROPE node '%s' appears in decode %d but not in the first", t->name, c->decode);
        return NULL;
    }
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 16;
        struct rec *v = realloc(c->v, nc * sizeof *v);
        if (!v) {
            fail(c, "out of memory");
            return NULL;
        }
        c->v = v;
        c->cap = nc;
    }
    struct rec *r = &c->v[c->n++];
    memset(r, 0, sizeof *r);
    r->layer = layer;
    r->role = role;
    r->type = t->type;
    r->dim = t->ne[0];
    r->heads = t->ne[1];
    return r;
}

/* Make room for one more batch of r's rows in pre and post. */
static int grow(struct cap *c, struct rec *r, int64_t tokens)
{
    size_t need = (size_t)(r->tokens + tokens) * (size_t)(r->dim * r->heads) * type_size(r->type);
    if (need <= r->cap)
        return 0;
    unsigned char *a = realloc(r->pre, need), *b;
    if (a)
        r->pre = a;
    b = a ? realloc(r->post, need) : NULL;
    if (!a || !b)
        return fail(c, "out of memory"), -1;
    r->post = b;
    r->cap = need;
    return 0;
}

static int check_node(struct cap *c, const struct ggml_tensor *t)
{
    const struct ggml_tensor *x = t->src[0], *p = t->src[1];
    if (!x || !p)
        return fail(c, "ROPE node '%s' has no input or no positions", t->name), -1;
    if (!type_size(t->type) || t->type != x->type)
        return fail(c, "ROPE node '%s' is %s (from %s): only F32, F16 and BF16 are written",
                    t->name, ggml_type_name(t->type), ggml_type_name(x->type)), -1;
    if (t->ne[3] != 1 || x->ne[3] != 1 || memcmp(t->ne, x->ne, sizeof t->ne) != 0)
        return fail(c, "ROPE node '%s' is not [head_dim, heads, tokens]", t->name), -1;
    if (t->ne[2] != c->batch_tokens)
        return fail(c, "ROPE node '%s' has %" PRId64 " tokens; the batch has %" PRId64,
                    t->name, t->ne[2], c->batch_tokens), -1;
    if (p->type != GGML_TYPE_I32 || p->ne[0] % t->ne[2] != 0 || ggml_nelements(p) != p->ne[0])
        return fail(c, "ROPE node '%s': its positions are not int32 [P * tokens]", t->name), -1;
    return 0;
}

static int take_positions(struct cap *c, const struct ggml_tensor *t)
{
    const struct ggml_tensor *p = t->src[1];
    int64_t n = t->ne[2], np = p->ne[0] / n;
    const unsigned char *b = tensor_bytes(c, p);
    if (!b)
        return -1;
    if (c->npos && c->npos != np)
        return fail(c, "ROPE node '%s' has %" PRId64 " positions per token, another had %" PRId64,
                    t->name, np, c->npos), -1;
    if (c->pos_taken) { /* every ROPE node of a decode has the same positions */
        for (int64_t s = 0; s < np; s++)
            for (int64_t i = 0; i < n; i++) {
                int32_t v;
                memcpy(&v, b + (size_t)(s * n + i) * p->nb[0], 4);
                if (v != c->pos[(size_t)(c->pos_tokens - n + i) * (size_t)np + (size_t)s])
                    return fail(c, "ROPE node '%s' has other positions than the layer's first",
                                t->name), -1;
            }
        return 0;
    }
    c->npos = np;
    size_t need = (size_t)(c->pos_tokens + n) * (size_t)np;
    if (need > c->pos_cap) {
        int32_t *q = realloc(c->pos, need * sizeof *q);
        if (!q)
            return fail(c, "out of memory"), -1;
        c->pos = q;
        c->pos_cap = need;
    }
    /* stored token-major ([tokens][P]) while ranges come in; transposed when written */
    for (int64_t s = 0; s < np; s++)
        for (int64_t i = 0; i < n; i++)
            memcpy(&c->pos[(size_t)(c->pos_tokens + i) * np + s],
                   b + (size_t)(s * n + i) * p->nb[0], 4);
    c->pos_tokens += n;
    c->pos_taken = 1;
    return 0;
}

static bool on_eval(struct ggml_tensor *t, bool ask, void *ud)
{
    struct cap *c = ud;
    if (c->err[0])
        return false; /* false after the node: the scheduler stops computing */
    if (t->op != GGML_OP_ROPE)
        return true;  /* yes to every node: each is computed before the next is asked about */
    /* the DSA lightning indexer's q and k (ggml-org/llama.cpp src/models/glm-dsa.cpp and
     * deepseek32.cpp: indexer_q-N, indexer_k-N) are not the attention's: counted, left out */
    if (strncmp(t->name, "indexer_", 8) == 0) {
        c->indexer += ask && c->decode == 1;
        return true;
    }
    int layer, role;
    if (parse_name(c, node_name(t), ask, &layer, &role) != 0 || check_node(c, t) != 0)
        return false;
    struct rec *r = find_rec(c, layer, role, t);
    if (!r)
        return false;
    if (r->type != t->type || r->dim != t->ne[0] || r->heads != t->ne[1])
        return fail(c, "ROPE node '%s' changed shape or type between decodes", t->name), false;
    size_t row = (size_t)(r->dim * r->heads) * type_size(r->type);
    if (ask) {
        if (r->seen == c->decode) {
            fail(c, "two ROPE nodes for layer %d's %s in one decode ('%s')", layer,
                 role ? "key" : "query", t->name);
            return false;
        }
        const unsigned char *b = tensor_bytes(c, t->src[0]);
        if (!b || grow(c, r, t->ne[2]) != 0)
            return false;
        gather(t->src[0], b, r->pre + (size_t)r->tokens * row);
        return true;
    }
    const unsigned char *b = tensor_bytes(c, t);
    if (!b)
        return false;
    gather(t, b, r->post + (size_t)r->tokens * row);
    r->tokens += t->ne[2];
    r->seen = c->decode;
    return take_positions(c, t) == 0;
}

static int cmp_rec(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    return x->layer != y->layer ? x->layer - y->layer : x->role - y->role;
}

/* Append to the JSON header; -1 when it does not fit. */
static int hdr(char *h, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(h + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len)
        return -1;
    *len += (size_t)n;
    return 0;
}

static void write_file(struct cap *c, const char *out, const char *arch, uint32_t n_ctx,
                       const char *ranges)
{
    qsort(c->v, c->n, sizeof *c->v, cmp_rec);
    size_t cap = 4096 + c->n * 400, len = 0, off = 0;
    char *h = malloc(cap);
    if (!h)
        die(3, "out of memory");
    int bad = hdr(h, cap, &len, "{\"__metadata__\":{\"producer\":\"capture_llama\","
                  "\"runtime\":\"llama.cpp\",\"layout\":\"ggml\",\"architecture\":\"%s\","
                  "\"n_ctx\":\"%" PRIu32 "\",\"ranges\":\"%s\"}", arch, n_ctx, ranges);
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < c->n; i++) {
            const struct rec *r = &c->v[i];
            size_t bytes = (size_t)(r->tokens * r->heads * r->dim) * type_size(r->type);
            bad |= hdr(h, cap, &len, ",\"%s.layers.%d.%s\":{\"dtype\":\"%s\",\"shape\":[%" PRId64
                       ",%" PRId64 ",%" PRId64 "],\"data_offsets\":[%zu,%zu]}",
                       side ? "rope" : "pre", r->layer, r->role ? "k" : "q", st_dtype(r->type),
                       r->tokens, r->heads, r->dim, off, off + bytes);
            off += bytes;
        }
    size_t pbytes = (size_t)c->pos_tokens * (size_t)c->npos * 4;
    if (c->npos == 1)
        bad |= hdr(h, cap, &len, ",\"positions\":{\"dtype\":\"I32\",\"shape\":[%" PRId64
                   "],\"data_offsets\":[%zu,%zu]}}", c->pos_tokens, off, off + pbytes);
    else
        bad |= hdr(h, cap, &len, ",\"positions\":{\"dtype\":\"I32\",\"shape\":[%" PRId64
                   ",%" PRId64 "],\"data_offsets\":[%zu,%zu]}}", c->npos, c->pos_tokens, off,
                   off + pbytes);
    while (!bad && len % 8)
        bad |= hdr(h, cap, &len, " ");
    if (bad)
        die(3, "the safetensors header does not fit");

    size_t tl = strlen(out) + 16;
    char *tmp = malloc(tl);
    if (!tmp)
        die(3, "out of memory");
    snprintf(tmp, tl, "%s.tmpXXXXXX", out);
    int fd = mkstemp(tmp);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
    if (!f)
        die(3, "'%s': cannot create: %s", out, strerror(errno));
    unsigned char n8[8];
    for (int i = 0; i < 8; i++)
        n8[i] = (unsigned char)((uint64_t)len >> (8 * i));
    int ok = fwrite(n8, 1, 8, f) == 8 && fwrite(h, 1, len, f) == len;
    for (int side = 0; side < 2 && ok; side++)
        for (size_t i = 0; i < c->n && ok; i++) {
            const struct rec *r = &c->v[i];
            size_t bytes = (size_t)(r->tokens * r->heads * r->dim) * type_size(r->type);
            ok = fwrite(side ? r->post : r->pre, 1, bytes, f) == bytes;
        }
    for (int64_t s = 0; s < c->npos && ok; s++) /* [P][tokens] */
        for (int64_t i = 0; i < c->pos_tokens && ok; i++) {
            int32_t v = c->pos[(size_t)i * (size_t)c->npos + (size_t)s];
            unsigned char le[4] = { (unsigned char)v, (unsigned char)((uint32_t)v >> 8),
                                    (unsigned char)((uint32_t)v >> 16),
                                    (unsigned char)((uint32_t)v >> 24) };
            ok = fwrite(le, 1, 4, f) == 4;
        }
    if (fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, out) != 0) {
        int e = errno;
        remove(tmp);
        die(3, "'%s': cannot write: %s", out, strerror(e));
    }
    free(tmp);
    free(h);
}

static void usage(FILE *f)
{
    fputs("usage: capture-llama [options] MODEL.gguf OUT.safetensors\n"
          "Decode chosen positions of a GGUF model with libllama and write every layer's\n"
          "pre- and post-RoPE q/k (llama.cpp's layout) and the positions to OUT.\n"
          "options:\n"
          "  -p, --positions R    ranges START:COUNT, comma-separated, each decoded as a\n"
          "                       fresh sequence (default 0:8,40000:8)\n"
          "  -c, --ctx-size N     n_ctx (default: the largest position + 1; LongRoPE's long\n"
          "                       factors are chosen when it exceeds the original context)\n"
          "  -t, --threads N      CPU threads (default 1)\n"
          "  --backend LIB        load this ggml CPU backend library (e.g. the portable\n"
          "                       libggml-cpu-x64.so) instead of searching for one\n"
          "  --backend-dir DIR    load the best ggml backend found in DIR (default: beside\n"
          "                       the program, then beside libllama)\n"
          "  --seed S             seed of the token ids (default 1)\n"
          "  -v, --verbose        llama.cpp's log on stderr\n"
          "  -h, --help           this text\n",
          f);
}

static long long num(const char *s, const char *what, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, PROG ": %s: '%s' is not a number in [%lld, %lld]\n", what, s, lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    const char *ranges = "0:8,40000:8", *backend = NULL, *backend_dir = NULL;
    const char *args[2];
    int nargs = 0, verbose = 0, threads = 1;
    long long n_ctx = 0, seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(s, l) (strcmp(a, s) == 0 || strcmp(a, l) == 0)
#define NEED() do { if (!val) die(2, "%s needs a value", a); i++; } while (0)
        if (OPT("-h", "--help")) {
            usage(stdout);
            return 0;
        } else if (OPT("-p", "--positions")) {
            NEED();
            ranges = val;
        } else if (OPT("-c", "--ctx-size")) {
            NEED();
            n_ctx = num(val, a, 1, INT32_MAX);
        } else if (OPT("-t", "--threads")) {
            NEED();
            threads = (int)num(val, a, 1, 1024);
        } else if (strcmp(a, "--backend") == 0) {
            NEED();
            backend = val;
        } else if (strcmp(a, "--backend-dir") == 0) {
            NEED();
            backend_dir = val;
        } else if (strcmp(a, "--seed") == 0) {
            NEED();
            seed = num(val, a, 0, INT64_MAX);
        } else if (OPT("-v", "--verbose")) {
            verbose = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, PROG ": unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (nargs < 2) {
            args[nargs++] = a;
        } else {
            die(2, "too many arguments ('%s')", a);
        }
    }
    if (nargs != 2) {
        usage(stderr);
        return 2;
    }
    size_t ol = strlen(args[1]);
    if (ol < 12 || strcmp(args[1] + ol - 12, ".safetensors") != 0)
        die(2, "'%s': the output's name must end in .safetensors (posenc reads the format from "
               "it)", args[1]);
    /* the ranges */
    int64_t start[MAX_RANGES], count[MAX_RANGES], maxpos = 0, maxcount = 0;
    int nr = 0;
    for (const char *s = ranges; *s;) {
        char *end;
        errno = 0;
        long long a0 = strtoll(s, &end, 10), a1;
        if (errno || end == s || *end != ':' || a0 < 0)
            die(2, "--positions: '%s' is not START:COUNT[,START:COUNT...]", ranges);
        s = end + 1;
        a1 = strtoll(s, &end, 10);
        if (errno || end == s || (*end && *end != ',') || a1 < 1 || a1 > 65536 ||
            a0 + a1 > INT32_MAX)
            die(2, "--positions: '%s' is not START:COUNT[,START:COUNT...] (COUNT 1 to 65536, "
                   "positions below 2^31)", ranges);
        if (nr == MAX_RANGES)
            die(2, "--positions: more than %d ranges", MAX_RANGES);
        start[nr] = a0;
        count[nr++] = a1;
        if (a0 + a1 > maxpos)
            maxpos = a0 + a1;
        if (a1 > maxcount)
            maxcount = a1;
        s = *end ? end + 1 : end;
    }
    if (!nr)
        die(2, "--positions: no range");
    if (!n_ctx)
        n_ctx = maxpos;
    if (n_ctx < maxcount)
        die(2, "--ctx-size %lld is smaller than a range of %" PRId64 " tokens", n_ctx, maxcount);
    FILE *probe = fopen(args[0], "rb");
    if (!probe)
        die(3, "'%s': %s", args[0], strerror(errno));
    fclose(probe);

    llama_log_set(on_log, &verbose);
    if (backend) {
        if (!ggml_backend_load(backend))
            die(3, "'%s': not a ggml backend library%s%s", backend, last_log[0] ? ": " : "",
                last_log);
    } else if (backend_dir) {
        ggml_backend_load_all_from_path(backend_dir);
    } else {
        ggml_backend_load_all(); /* beside the program, in the working directory */
        /* and beside libllama, where a release (or npm's package) keeps its backends */
        Dl_info di;
        void (*fn)(void) = llama_backend_init;
        void *addr;
        memcpy(&addr, &fn, sizeof addr); /* ISO C has no cast from a function pointer */
        if (ggml_backend_dev_count() == 0 && dladdr(addr, &di) &&
            di.dli_fname && strrchr(di.dli_fname, '/')) {
            char dir[4096];
            snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(di.dli_fname, '/') - di.dli_fname),
                     di.dli_fname);
            ggml_backend_load_all_from_path(dir);
        }
    }
    if (ggml_backend_dev_count() == 0)
        die(3, "no ggml backend was found: give --backend LIB or --backend-dir DIR");
    llama_backend_init();

    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model *model = llama_model_load_from_file(args[0], mp);
    if (!model)
        die(3, "'%s': llama.cpp cannot load it%s%s", args[0], last_log[0] ? ": " : "",
            last_log);
    char arch[128] = "";
    if (llama_model_meta_val_str(model, "general.architecture", arch, sizeof arch) < 0)
        snprintf(arch, sizeof arch, "unknown");

    struct cap c;
    memset(&c, 0, sizeof c);
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)n_ctx;
    cp.n_batch = cp.n_ubatch = (uint32_t)maxcount;
    cp.n_seq_max = 1;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.cb_eval = on_eval;
    cp.cb_eval_user_data = &c;
    cp.no_perf = true;
    last_log[0] = '\0';
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx)
        die(3, "'%s': llama.cpp cannot make a context with n_ctx %lld%s%s", args[0], n_ctx,
            last_log[0] ? ": " : "", last_log);
    int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    if (n_vocab < 1)
        die(3, "'%s': the model has no vocabulary", args[0]);

    struct llama_batch batch = llama_batch_init((int32_t)maxcount, 0, 1);
    uint64_t rng = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
    for (int r = 0; r < nr; r++) {
        llama_memory_clear(llama_get_memory(ctx), true);
        batch.n_tokens = (int32_t)count[r];
        for (int64_t i = 0; i < count[r]; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            batch.token[i] = (llama_token)((rng >> 33) % (uint64_t)n_vocab);
            batch.pos[i] = (llama_pos)(start[r] + i);
            batch.n_seq_id[i] = 1;
            batch.seq_id[i][0] = 0;
            batch.logits[i] = i == count[r] - 1;
        }
        c.decode = r + 1;
        c.batch_tokens = count[r];
        c.pos_taken = 0;
        c.rope_count = 0;
        last_log[0] = '\0';
        int32_t rc = llama_decode(ctx, batch);
        if (c.err[0])
            die(3, "'%s': %s", args[0], c.err);
        if (rc != 0)
            die(3, "'%s': llama_decode failed (%d) at positions %" PRId64 "-%" PRId64 "%s%s",
                args[0], rc, start[r], start[r] + count[r] - 1, last_log[0] ? ": " : "",
                last_log);
        if (c.n == 0)
            die(3, "'%s': the graph of architecture %s has no GGML_OP_ROPE node", args[0], arch);
        for (size_t i = 0; i < c.n; i++)
            if (c.v[i].seen != c.decode)
                die(3, "'%s': layer %d's %s has no ROPE node in decode %d", args[0],
                    c.v[i].layer, c.v[i].role ? "key" : "query", c.decode);
    }
    uint32_t used_ctx = llama_n_ctx(ctx);
    write_file(&c, args[1], arch, used_ctx, ranges);
    fprintf(stderr, "%zu ROPE nodes of %s, %" PRId64 " tokens, n_ctx %" PRIu32 ": %s\n"
            "posenc verify --config config.json --gguf %s --q %s --layout ggml "
            "--seq-len %" PRIu32 "\n",
            c.n, arch, c.pos_tokens, used_ctx, args[1], args[0], args[1], used_ctx);
    if (c.indexer)
        fprintf(stderr, "left out: %d ROPE nodes of the DSA indexer (indexer_q, indexer_k)\n",
                c.indexer);
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    for (size_t i = 0; i < c.n; i++) {
        free(c.v[i].pre);
        free(c.v[i].post);
    }
    free(c.v);
    free(c.pos);
    free(c.scratch);
    return 0;
}
