/* test_jsondup.c: repeated JSON keys (formats/io/jsondup.c): the last value wins at every level, as
 * Python's json reads them, in small objects and in large ones (the hashed path). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "formats/io/jsondup.h"

static void test_last_wins(void **state)
{
    (void)state;
    cJSON *root = cJSON_Parse("{\"rope_theta\": 10000, \"a\": 1, \"rope_theta\": 500000, "
                              "\"rope_scaling\": {\"factor\": 2, \"factor\": 8, \"factor\": 4}}");
    assert_non_null(root);
    char first[64];
    assert_int_equal(pe_json_last_wins(root, first, sizeof first), 3);
    assert_string_equal(first, "rope_theta");
    assert_true(cJSON_GetObjectItem(root, "rope_theta")->valuedouble == 500000);
    const cJSON *rs = cJSON_GetObjectItem(root, "rope_scaling");
    assert_int_equal(cJSON_GetArraySize(rs), 1);
    assert_true(cJSON_GetObjectItem(rs, "factor")->valuedouble == 4);
    assert_int_equal(cJSON_GetArraySize(root), 3);
    /* a second pass finds nothing */
    assert_int_equal(pe_json_last_wins(root, first, sizeof first), 0);
    assert_string_equal(first, "");
    cJSON_Delete(root);
    assert_int_equal(pe_json_last_wins(NULL, NULL, 0), 0);
}

static void test_large_object(void **state)
{
    (void)state;
    /* 1000 keys, each written twice: the hashed path keeps the second of each */
    cJSON *root = cJSON_CreateObject();
    char k[32];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 1000; i++) {
            snprintf(k, sizeof k, "t%d", i);
            cJSON_AddItemToObject(root, k, cJSON_CreateNumber(pass * 10000 + i));
        }
    char first[64];
    assert_int_equal(pe_json_last_wins(root, first, sizeof first), 1000);
    assert_int_equal(cJSON_GetArraySize(root), 1000);
    for (int i = 0; i < 1000; i += 97) {
        snprintf(k, sizeof k, "t%d", i);
        assert_true(cJSON_GetObjectItem(root, k)->valuedouble == 10000 + i);
    }
    /* arrays of objects are walked too */
    cJSON *arr = cJSON_Parse("[{\"x\": 1, \"x\": 2}, [{\"y\": 1, \"y\": 3}]]");
    assert_int_equal(pe_json_last_wins(arr, first, sizeof first), 2);
    assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "x")->valuedouble == 2);
    cJSON_Delete(arr);
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_wins),
        cmocka_unit_test(test_large_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
