/* fuzz_config.c: libFuzzer harness for config.json resolution. Feeds the bytes to
 * posenc_config_parse and, on success, resolves the RoPE parameters of every layer type (and of
 * the single set) and computes them with posenc_rope_params_compute at load time and at a
 * sequence length past the original context, so the resolved values are always accepted or
 * rejected cleanly by the RoPE code. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "posenc/config.h"
#include "posenc/model.h"
#include "posenc/rope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void compute(const posenc_rope_config *c)
{
    posenc_rope_params p;
    posenc_error err = { 0 };
    if (posenc_rope_params_compute(c, 0, &p, &err) == POSENC_OK && p.n_freq > POSENC_MAX_FREQ)
        __builtin_trap();
    int64_t L = c->original_max_position_embeddings > c->max_position_embeddings
                    ? c->original_max_position_embeddings
                    : c->max_position_embeddings;
    if (L > 0 && L < ((int64_t)1 << 40))
        (void)posenc_rope_params_compute(c, L + 1, &p, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    if (posenc_config_parse((const char *)data, size, "fuzz.json", NULL, &m, &err) != POSENC_OK) {
        if (!memchr(err.msg, '\0', sizeof err.msg) || err.msg[0] != '\'')
            __builtin_trap(); /* every failure carries a message naming the file */
        return 0;
    }
    posenc_rope_config c;
    (void)posenc_model_encoding(m);
    (void)posenc_model_type(m);
    (void)posenc_model_max_positions(m);
    (void)posenc_model_bias(m);
    for (size_t i = 0; i < posenc_model_note_count(m); i++)
        if (!posenc_model_note(m, i))
            __builtin_trap();
    size_t n = posenc_model_layer_type_count(m);
    if (posenc_model_rope(m, NULL, &c, &err) == POSENC_OK)
        compute(&c);
    for (size_t i = 0; i < n; i++) {
        if (posenc_model_rope(m, posenc_model_layer_type_name(m, i), &c, &err) != POSENC_OK)
            __builtin_trap(); /* a listed layer type must resolve */
        compute(&c);
    }
    posenc_model_free(m);
    return 0;
}
