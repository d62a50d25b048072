/* fuzz_config.c: libFuzzer harness for config.json resolution, through both entry points.
 * The bytes go to posenc_config_parse and, written to config.json in a scratch directory, to
 * the file loader posenc_config_load (by the file's name, and on odd lengths by the
 * directory's, as from_pretrained takes it): the loader must reach the same verdict as the
 * buffer parser, with a message naming the file. On success the RoPE parameters of every layer
 * type (and of the single set) are resolved and computed with posenc_rope_params_compute at
 * load time and at a sequence length past the original context, so the resolved values are
 * always accepted or rejected cleanly by the RoPE code. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "posenc/config.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "fuzzutil.h"

/* fuzz-options: -max_len=16384 */

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
    if (L > 0 && L < ((int64_t)1 << 40) &&
        posenc_rope_params_compute(c, L + 1, &p, &err) == POSENC_OK && p.n_freq > POSENC_MAX_FREQ)
        __builtin_trap();
}

/* The file loader on the same bytes: the same status as the parser (st, and on success the
 * same model_type, encoding and maximum), and a message naming the file on failure. */
static void load_file(const uint8_t *data, size_t size, posenc_status st, const posenc_model *pm)
{
    const char *dir = fz_path("model");
    char path[1100];
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/config.json", dir);
    fz_write(path, data, size);
    for (int by_dir = 0; by_dir <= (int)(size & 1); by_dir++) {
        posenc_model *m = NULL;
        posenc_error err = { 0 };
        posenc_status ls = posenc_config_load(by_dir ? dir : path, NULL, &m, &err);
        if (ls != st)
            __builtin_trap(); /* the loader and the parser disagree */
        if (ls != POSENC_OK) {
            fz_check_msg(&err);
            if (strncmp(err.msg + 1, path, strlen(path)) != 0 || err.msg[0] != '\'')
                __builtin_trap(); /* the message names the file */
            continue;
        }
        const char *a = posenc_model_type(m), *b = posenc_model_type(pm);
        if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0) ||
            posenc_model_encoding(m) != posenc_model_encoding(pm) ||
            posenc_model_max_positions(m) != posenc_model_max_positions(pm))
            __builtin_trap();
        posenc_model_free(m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    posenc_status st = posenc_config_parse((const char *)data, size, "fuzz.json", NULL, &m, &err);
    load_file(data, size, st, m);
    if (st != POSENC_OK) {
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
