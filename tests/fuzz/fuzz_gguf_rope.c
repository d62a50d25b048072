/* fuzz_gguf_rope.c: bytes -> GGUF file -> posenc_gguf_read_rope -> what llama.cpp derives.
 *
 * For a file whose RoPE keys are read: the description info --gguf prints (pe_gguf_rope_json)
 * must build, and a file compared with itself (posenc_gguf_compare) must show no mismatch when
 * llama.cpp would load it and its values are finite. Seeds (tests/fuzz/corpus/gguf_rope/) are
 * files llama.cpp's converter wrote for published configs (tests/interop/gguf_convert.py) and
 * files with one key of the wrong type. */
/* fuzz-options: -max_len=8192 */
#include <math.h>

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
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < n[k]; i++)
            if (!isfinite(t[k][i]))
                return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
    if (finite_keys(&g) && isfinite(r.attn_factor) && isfinite(r.kq_scale) && chk.n_failed)
        __builtin_trap(); /* a file differs from itself */
    return 0;
}
