/* fuzz_gguf_rope.c: bytes -> GGUF file -> posenc_gguf_read_rope -> what llama.cpp derives.
 *
 * For a file whose RoPE keys are read: the description info --gguf prints (pe_gguf_rope_json)
 * must build, and a file compared with itself (posenc_gguf_compare) must show no mismatch when
 * llama.cpp would load it and its values are finite. Seeds (tests/fuzz/corpus/gguf_rope/) are
 * files llama.cpp's converter wrote for published configs (tests/interop/gguf_convert.py) and
 * files with one key of the wrong type. */
/* fuzz-options: -max_len=8192 */
#include <math.h>

#include "fuzzbig.h"
#include "fuzzutil.h"
#include "formats/files/gguf_rope.h"
#include "posenc/llamacpp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int finite_keys(const posenc_gguf_rope *g)
{
    const double v[] = { g->freq_base, g->freq_base_swa, g->scaling_factor, g->yarn_ext_factor,
                         g->yarn_attn_factor, g->yarn_beta_fast, g->yarn_beta_slow,
                         g->yarn_log_multiplier, g->attn_factor };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (!isfinite(v[i]))
            return 0;
    const float *t[] = { g->rope_freqs, g->factors_long, g->factors_short };
    const int n[] = { g->n_rope_freqs, g->n_factors_long, g->n_factors_short };
    /* a zero factor divides a frequency (info --gguf warns of it): its angles are infinite and
     * its tables NaN, which never compare equal, not even with themselves */
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < n[k]; i++)
            if (!isfinite(t[k][i]) || t[k][i] == 0)
                return 0;
    return 1;
}

/* ggml's cos and sin stay finite up to the last position posenc_gguf_compare's tables reach
 * (the context length, 131072 when it is not positive): a factor near 0 (2e-38) or 0 makes the
 * angles overflow, and NaN tables never compare equal, not even with themselves */
static int finite_tables(const posenc_ggml_rope *r, int64_t ctx)
{
    int64_t last = ctx > 0 ? ctx - 1 : 131071;
    int64_t pos3[3] = { last, last, last };
    static double c[POSENC_MAX_FREQ], s[POSENC_MAX_FREQ];
    posenc_ggml_rope_cossin(r, pos3, c, s);
    for (int i = 0; i < r->n_dims / 2 && i < POSENC_MAX_FREQ; i++)
        if (!isfinite(c[i]) || !isfinite(s[i]))
            return 0;
    return 1;
}

static int run_one(const uint8_t *data, size_t size)
{
    const char *path = fz_path("in.gguf");
    fz_write(path, data, size);
    static posenc_gguf_rope g;
    static posenc_gguf_check chk;
    posenc_error err = { 0 };
    if (posenc_gguf_read_rope(path, &g, &err) != POSENC_OK) {
        fz_check_msg(&err);
        return 0;
    }
    cJSON *j = pe_gguf_rope_json(&g, 0, NULL);
    if (!j)
        __builtin_trap();
    cJSON_Delete(j);
    posenc_ggml_rope r;
    if (posenc_ggml_rope_from_gguf(&g, 0, &r, &err) != POSENC_OK) {
        fz_check_msg(&err);
        return 0;
    }
    if (posenc_gguf_compare(&g, &g, 0, &chk, &err) != POSENC_OK)
        __builtin_trap(); /* it loaded once, so it loads twice */
    /* tables are compared only where ggml's numerics are computed (posenc_gguf_compare says
     * "not compared" otherwise, a finding that fails) */
    int tables = r.n_dims >= 2 && r.mode != POSENC_GGML_ROPE_NONE &&
                 r.mode != POSENC_GGML_ROPE_VISION && finite_tables(&r, g.context_length);
    if (finite_keys(&g) && isfinite(r.attn_factor) && isfinite(r.kq_scale) && tables &&
        chk.n_failed)
        __builtin_trap(); /* a file differs from itself */
    return 0;
}

/* a "\xffBIG" seed expands to an input that reaches the metadata budget (fuzzbig.h) */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *owned;
    fz_big_expand(&data, &size, &owned);
    int rc = run_one(data, size);
    free(owned);
    return rc;
}
