/* tests/interop/ggml_posenc.c: posenc's ggml precision on hand-filled ggml_rope_ext arguments,
 * the counterpart of ggml_rope.c (same spec on standard input), linked with libposenc.a.
 *
 *   ggml_posenc neox|gptj < spec
 *
 * Prints, for each token, one line "cs" followed by the n_dims/2 cos then the n_dims/2 sin values
 * of posenc_ggml_rope_cossin, and then, for each token and head, the q row of the spec rotated by
 * posenc_apply_rows under the ggml precision with the given pairing (q in transformers' head
 * layout), every value in C's %a. Exit 0, or 3 with one line on standard error. It fills
 * posenc_ggml_rope and posenc_rope_params itself and links libposenc.a: it sees their layout. */
#define POSENC_STATIC_LINKING_ONLY
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc/posenc.h"

static void die(const char *what)
{
    fprintf(stderr, "ggml_posenc: %s\n", what);
    exit(3);
}

static char *word(void)
{
    static char buf[128];
    if (scanf("%127s", buf) != 1)
        die("spec ends early");
    return buf;
}

static void key(const char *k)
{
    if (strcmp(word(), k) != 0)
        die("unexpected key in the spec");
}

static long num_l(void)
{
    char *e, *w = word();
    errno = 0;
    long v = strtol(w, &e, 10);
    if (errno || *e || e == w)
        die("bad integer in the spec");
    return v;
}

static float num_f(void)
{
    char *e, *w = word();
    float v = strtof(w, &e);
    if (*e || e == w)
        die("bad number in the spec");
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "neox") != 0 && strcmp(argv[1], "gptj") != 0))
        die("usage: ggml_posenc neox|gptj < spec");
    static posenc_ggml_rope g;
    key("mode"); g.mode = (posenc_ggml_mode)num_l();
    key("n_dims"); g.n_dims = (int)num_l();
    key("head_dim"); g.head_dim = (int)num_l();
    key("n_head"); long H = num_l();
    key("n_ctx_orig"); g.n_ctx_orig = (int)num_l();
    key("freq_base"); g.freq_base = num_f();
    key("freq_scale"); g.freq_scale = num_f();
    key("ext_factor"); g.ext_factor = num_f();
    key("attn_factor"); g.attn_factor = num_f();
    key("beta_fast"); g.beta_fast = num_f();
    key("beta_slow"); g.beta_slow = num_f();
    key("sections");
    for (int i = 0; i < 4; i++)
        g.sections[i] = (int)num_l();
    key("factors"); long K = num_l();
    if (K < 0 || K > POSENC_MAX_FREQ || g.head_dim <= 0 || g.head_dim > 4096 || H <= 0 ||
        H > 256 || g.n_dims <= 0 || g.n_dims > g.head_dim)
        die("sizes out of range");
    g.n_freq_factors = (int)K;
    for (long i = 0; i < K; i++)
        g.freq_factors[i] = num_f();
    int multi = g.mode == POSENC_GGML_ROPE_MROPE || g.mode == POSENC_GGML_ROPE_IMROPE;
    key("positions"); long n = num_l();
    long T = multi ? n / 4 : n;
    if (n <= 0 || n > (1L << 20) || (multi && n % 4))
        die("positions out of range");
    int64_t *pos = malloc((size_t)n * sizeof *pos);
    float *q = malloc((size_t)(T * H * g.head_dim) * sizeof *q);
    double *c = malloc(POSENC_MAX_FREQ * sizeof *c), *s = malloc(POSENC_MAX_FREQ * sizeof *s);
    if (!pos || !q || !c || !s)
        die("out of memory");
    for (long i = 0; i < n; i++)
        pos[i] = num_l();
    key("q");
    for (long i = 0; i < T * H * g.head_dim; i++)
        q[i] = num_f();

    int nf = g.n_dims / 2;
    for (long t = 0; t < T; t++) {
        int64_t p3[3] = { pos[t], multi ? pos[T + t] : pos[t], multi ? pos[2 * T + t] : pos[t] };
        posenc_ggml_rope_cossin(&g, p3, c, s);
        printf("cs");
        for (int i = 0; i < nf; i++)
            printf(" %a", c[i]);
        for (int i = 0; i < nf; i++)
            printf(" %a", s[i]);
        putchar('\n');
    }

    /* the rotation through lib/encodings/apply.c, on parameters that only say how many dims rotate */
    static posenc_rope_params p;
    p.type = POSENC_ROPE_DEFAULT;
    p.style = strcmp(argv[1], "gptj") == 0 ? POSENC_STYLE_GPTJ : POSENC_STYLE_NEOX;
    p.head_dim = g.head_dim;
    p.rotary_dim = g.n_dims;
    p.n_freq = nf;
    p.attention_scaling = 1.0;
    p.mrope = multi;
    posenc_error err = { 0 };
    if (posenc_rope_params_set_ggml(&p, &g, &err) != POSENC_OK) {
        fprintf(stderr, "ggml_posenc: %s\n", err.msg);
        return 3;
    }
    posenc_apply_opts o = { POSENC_PREC_GGML, 0, POSENC_DT_F32 };
    posenc_apply_positions ap = { pos, 0, 1, multi ? 3 : 1 };
    posenc_apply *a = NULL;
    if (posenc_apply_new(&p, &o, &ap, T, 1, &a, &err) != POSENC_OK) {
        fprintf(stderr, "ggml_posenc: %s\n", err.msg);
        return 3;
    }
    /* q is [T][H][D]: the shd layout */
    posenc_apply_shape sh = { POSENC_APPLY_SHD, 1, H, T, g.head_dim };
    posenc_apply_rows(a, &sh, 0, (uint64_t)(T * H), q, POSENC_DT_F32, q, POSENC_DT_F32);
    for (long r = 0; r < T * H; r++) {
        for (long d = 0; d < g.head_dim; d++)
            printf("%s%a", d ? " " : "", (double)q[r * g.head_dim + d]);
        putchar('\n');
    }
    posenc_apply_free(a);
    free(pos);
    free(q);
    free(c);
    free(s);
    if (fflush(stdout) != 0)
        die("cannot write the output");
    return 0;
}
