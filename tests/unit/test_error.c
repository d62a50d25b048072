/* test_error.c: the error record (lib/core/error.c): messages are formatted, prefixed and always one
 * line, whatever a file name or a file's contents put into them. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "posenc/error.h"

static void test_seterr(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    assert_int_equal(posenc_seterr(&err, POSENC_EFORMAT, "'%s': truncated header", "q.npy"),
                     POSENC_EFORMAT);
    assert_int_equal(err.code, POSENC_EFORMAT);
    assert_string_equal(err.msg, "'q.npy': truncated header");
    assert_int_equal(posenc_seterr(NULL, POSENC_EIO, "x"), POSENC_EIO);
    assert_int_equal(posenc_error_prefix(&err, POSENC_EIO, "'%s': ", "d/"), POSENC_EFORMAT);
    assert_string_equal(err.msg, "'d/': 'q.npy': truncated header");
}

/* A model_type "a\nb" from a config, or an NPY header key with a newline, once split the
 * message over two lines (found by fuzz_config, fuzz_positions and fuzz_dir). */
static void test_one_line(void **state)
{
    (void)state;
    posenc_error err = { 0 };
    posenc_seterr(&err, POSENC_ECONFIG, "'%s': model_type '%s' is not known", "c.json",
                  "hunyuan\n\r\t\x1b\x7f");
    assert_string_equal(err.msg, "'c.json': model_type 'hunyuan\\n\\r\\t\\x1b\\x7f' is not known");
    posenc_seterr(&err, POSENC_EFORMAT, "bad key 'a\nb'");
    posenc_error_prefix(&err, POSENC_EFORMAT, "'%s': ", "dir\n/x.npy");
    assert_string_equal(err.msg, "'dir\\n/x.npy': bad key 'a\\nb'");
    /* UTF-8 stays as it is */
    posenc_seterr(&err, POSENC_EFORMAT, "'%s'", "\xc3\xa9t\xc3\xa9");
    assert_string_equal(err.msg, "'\xc3\xa9t\xc3\xa9'");
    /* a message full of control characters is escaped up to the buffer's end, still terminated */
    char many[POSENC_ERRMSG_MAX];
    memset(many, '\n', sizeof many - 1);
    many[sizeof many - 1] = '\0';
    posenc_seterr(&err, POSENC_EFORMAT, "%s", many);
    size_t n = strlen(err.msg);
    assert_true(n < sizeof err.msg && n >= sizeof err.msg - 3);
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(n % 2, 0); /* whole escapes only */
    posenc_seterr(&err, POSENC_EFORMAT, "%s", many + 10);
    posenc_error_prefix(&err, POSENC_EFORMAT, "%s", "\x01");
    assert_null(strchr(err.msg, '\n'));
    assert_null(strchr(err.msg, '\x01'));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seterr),
        cmocka_unit_test(test_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
