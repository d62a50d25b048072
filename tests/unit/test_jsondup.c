/* test_jsondup.c: repeated JSON keys (formats/io/jsondup.c): the last value wins at every level, as
 * Python's json reads them, in small objects and in large ones (the hashed path); the metadata
 * budget (the estimate of cJSON's memory, the check, picking a few keys). */
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

/* the estimate counts a node per value, none per key, and the strings' bytes */
static void test_cost(void **state)
{
    (void)state;
    size_t node = pe_json_cost("0", 1);
    assert_true(node >= sizeof(cJSON));
    assert_int_equal(pe_json_cost("[0,0,0]", 7), 4 * node);
    assert_int_equal(pe_json_cost("[true, null ,false, -1e5]", 25), 5 * node);
    /* {"k": "v"}: the object and the string value are nodes, "k" and "v" allocations */
    size_t kv = pe_json_cost("{\"k\": \"v\"}", 10);
    assert_true(kv >= 2 * node + 2 * 2 && kv <= 2 * node + 2 * 64);
    /* a quote escaped inside a string does not end it; a colon inside it is not a key's */
    assert_int_equal(pe_json_cost("[\"a\\\"b:\"]", 9), 2 * node + 32);
    assert_int_equal(pe_json_cost("{\"a\\\"b:\":0}", 11), 2 * node + 32);
    /* linear in the values */
    char big[2002]; /* [0,0,...,0]: 1000 zeros */
    big[0] = '[';
    for (int i = 0; i < 1000; i++)
        memcpy(big + 1 + 2 * i, "0,", 2);
    big[2000] = ']';
    big[2001] = '\0';
    assert_int_equal(pe_json_cost(big, 2001), 1001 * node);
    /* the estimate is not below what cJSON takes: the nodes alone */
    cJSON *j = cJSON_Parse(big);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(j), 1000);
    assert_true(pe_json_cost(big, 2001) >= 1001 * sizeof(cJSON));
    cJSON_Delete(j);
}

/* refused before parsing: text past PE_META_MAX, and a small text of many values past
 * PE_META_TREE_MAX; one message naming the path and what */
static void test_meta_check(void **state)
{
    (void)state;
    posenc_error e = { 0 };
    assert_int_equal(pe_meta_check("{\"a\": 1}", 8, "x.json", "sidecar", &e), POSENC_OK);
    size_t n = PE_META_TREE_MAX / pe_json_cost("0", 1) + 16; /* values just past the tree cap */
    size_t len = 2 * n + 1;
    char *t = malloc(len + 1);
    assert_non_null(t);
    t[0] = '[';
    for (size_t i = 0; i < n; i++)
        memcpy(t + 1 + 2 * i, "0,", 2);
    t[len - 1] = ']';
    t[len] = '\0';
    assert_true(len < PE_META_MAX);
    assert_int_equal(pe_meta_check(t, len, "m.json", "meta.json", &e), POSENC_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "'m.json': meta.json would take"));
    assert_non_null(strstr(e.msg, "posenc reads at most that"));
    /* one value fewer than the cap's worth is accepted */
    size_t m = PE_META_TREE_MAX / pe_json_cost("0", 1) - 1;
    t[2 * m] = ']';
    assert_int_equal(pe_meta_check(t, 2 * m + 1, "m.json", "meta.json", &e), POSENC_OK);
    free(t);
    assert_int_equal(pe_meta_check("{}", PE_META_MAX + 1, "h.st", "safetensors header", &e),
                     POSENC_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "'h.st': safetensors header of 67108865 bytes is larger than "
                                  "64 MiB"));
}

/* pe_json_pick parses only the named members, whatever the others hold */
static void test_pick(void **state)
{
    (void)state;
    const char *text = " {\"a\": [1, {\"x\": \"}]\\\"\"}], \"b.c\" : {\"k\": [2]},"
                       "\"s\":\"{[\", \"n\": -1.5e3, \"t\":true}";
    const char *keys[] = { "b.c", "n", NULL, "t", "missing" };
    cJSON *j = pe_json_pick(text, keys, 5);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(j), 3);
    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(j, "b.c");
    assert_true(cJSON_IsObject(bc));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(bc, "k")->child->valuedouble, 2);
    assert_true(cJSON_GetObjectItemCaseSensitive(j, "n")->valuedouble == -1500);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "t")));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "a"));
    cJSON_Delete(j);
    /* the same members as a full parse gives */
    const char *all[] = { "a", "s" };
    j = pe_json_pick(text, all, 2);
    cJSON *full = cJSON_Parse(text);
    assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(j, "a"),
                              cJSON_GetObjectItemCaseSensitive(full, "a"), 1));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "s")->valuestring, "{[");
    cJSON_Delete(full);
    cJSON_Delete(j);
    /* not an object, or NULL: an empty object */
    j = pe_json_pick("[1]", keys, 5);
    assert_int_equal(cJSON_GetArraySize(j), 0);
    cJSON_Delete(j);
    j = pe_json_pick(NULL, keys, 5);
    assert_int_equal(cJSON_GetArraySize(j), 0);
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_wins),
        cmocka_unit_test(test_large_object),
        cmocka_unit_test(test_cost),
        cmocka_unit_test(test_meta_check),
        cmocka_unit_test(test_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
