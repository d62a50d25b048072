/* test_info_out.c: info's registry and runtimes reports (formats/report/info_out.c): one row per
 * registry entry and per runtime difference, the drift positions, the engine's drift value
 * passed through (hf at position 4095: above 0, below 1e-2), a position past vLLM's cache said
 * so. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "formats/report/info_out.h"
#include "posenc/config.h"
#include "posenc/llamacpp.h"
#include "posenc/vllm.h"

static void test_models(void **state)
{
    (void)state;
    cJSON *a = cJSON_CreateArray();
    pe_strbuf b = { 0 };
    assert_int_equal(pe_info_models(a, &b), 0);
    assert_int_equal((size_t)cJSON_GetArraySize(a), posenc_family_count());
    const cJSON *r0 = cJSON_GetArrayItem(a, 0);
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r0, "model_type")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r0, "source")));
    cJSON_Delete(a);
    assert_null(b.p); /* JSON only */
    assert_int_equal(pe_info_models(NULL, &b), 0);
    char *t = pe_strbuf_finish(&b);
    size_t lines = 0;
    for (const char *c = t; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, posenc_family_count() + 1); /* a header line */
    assert_true(strncmp(t, "model_type ", 11) == 0);
    free(t);
}

static void test_runtimes(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_model *m = NULL;
    const char *js = "{\"model_type\":\"llama\",\"hidden_size\":1024,\"num_attention_heads\":8,"
                     "\"max_position_embeddings\":4096,\"rope_theta\":10000.0}";
    assert_int_equal(posenc_config_parse(js, strlen(js), "c.json", NULL, &m, &err), POSENC_OK);
    posenc_rope_config c;
    assert_int_equal(posenc_model_rope(m, NULL, &c, &err), POSENC_OK);
    cJSON *j = cJSON_CreateObject();
    pe_strbuf b = { 0 };
    assert_int_equal(pe_info_runtimes(m, &c, NULL, "c.json", 0, j, &b), 0);
    /* with a config only the rows that apply to it */
    size_t n_apply = 0;
    for (size_t i = 0; i < posenc_runtime_diff_count(); i++)
        n_apply += (size_t)posenc_runtime_diff_applies(i, &c, posenc_model_family(m));
    assert_true(n_apply > 0 && n_apply < posenc_runtime_diff_count());
    assert_int_equal((size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "runtimes")),
                     n_apply);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "drift");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(d, "config")->valuestring, "c.json");
    const cJSON *pos = cJSON_GetObjectItemCaseSensitive(d, "positions");
    assert_int_equal(cJSON_GetArraySize(pos), 3);
    assert_true(cJSON_GetArrayItem(pos, 0)->valuedouble == 4095 &&
                cJSON_GetArrayItem(pos, 2)->valuedouble == 1048575);
    double want = 0;
    assert_int_equal(posenc_rope_drift(&c, "llama", POSENC_PREC_HF, 0, 4095, &want, &err),
                     POSENC_OK);
    double hf = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "hf"), 0)->valuedouble;
    assert_true(hf == want && hf > 0 && hf < 1e-2);
    /* past the vLLM cache (4096 rows): the larger positions are said so, not computed */
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, "vllm");
    assert_string_equal(cJSON_GetArrayItem(v, 2)->valuestring, "past the cache");
    cJSON_Delete(j);
    assert_int_equal(pe_info_runtimes(m, &c, NULL, "c.json", 0, NULL, &b), 0);
    char *t = pe_strbuf_finish(&b);
    assert_non_null(strstr(t, "drift (max |cos, sin error|) from exact math, and from "
                              "transformers' definition (vs hf), at positions 4095 131071 "
                              "1048575\n"));
    assert_non_null(strstr(t, "\n  vllm         "));
    assert_non_null(strstr(t, "\n    vs hf      "));
    assert_non_null(strstr(t, "vllm: vllm-project/vllm, "));
    free(t);
    posenc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_models),
        cmocka_unit_test(test_runtimes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
