/* test_fileutil.c: outputs committed as one unit (formats/io/fileutil.c, pe_tmp_group_begin /
 * pe_tmp_group_end). A rename that fails in the middle of a group is provoked deterministically:
 * the temporary of a later member is removed after it was queued, so its rename(2) fails with
 * ENOENT after the earlier members were renamed. The old files must all be back (their bytes
 * and their inode), a target that did not exist must not exist, and no temporary or backup link
 * may be left. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "formats/io/backend.h"

static void write_str(const char *path, const char *s)
{
    tu_write_file(path, s, strlen(s));
}

static void assert_content(const char *path, const char *want)
{
    size_t n;
    unsigned char *got = tu_slurp(path, &n);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(got, want, n);
    free(got);
}

static ino_t inode_of(const char *path)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    return sb.st_ino;
}

/* Queue one member of the open group: final_path gets text; *tmp (malloc'd) is its temporary. */
static void queue(const char *final_path, const char *text, char **tmp)
{
    FILE *fp;
    posenc_error e = { 0 };
    assert_int_equal(pe_tmp_create(final_path, tmp, &fp, &e), POSENC_OK);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    assert_int_equal(pe_tmp_commit(fp, *tmp, final_path, &e), POSENC_OK);
    assert_true(tu_exists(*tmp)); /* queued, not renamed yet */
}

/* Three existing files; the third's rename fails: the first two are restored. */
static void test_rollback_restores_old_files(void **state)
{
    (void)state;
    const char *a = tu_path("a.npy"), *b = tu_path("b.npy"), *c = tu_path("c.npy");
    write_str(a, "old a");
    write_str(b, "old b");
    write_str(c, "old c");
    ino_t ia = inode_of(a), ib = inode_of(b), ic = inode_of(c);
    char *ta, *tb, *tc;
    pe_tmp_group_begin();
    queue(a, "new a", &ta);
    queue(b, "new b", &tb);
    queue(c, "new c", &tc);
    assert_int_equal(unlink(tc), 0); /* c's rename will fail, after a and b were renamed */
    posenc_error e = { 0 };
    assert_int_equal(pe_tmp_group_end(&e), POSENC_EIO);
    assert_non_null(strstr(e.msg, "c.npy"));
    assert_non_null(strstr(e.msg, strerror(ENOENT)));
    assert_content(a, "old a");
    assert_content(b, "old b");
    assert_content(c, "old c");
    /* the same files, not copies: restored from their links */
    assert_true(inode_of(a) == ia && inode_of(b) == ib && inode_of(c) == ic);
    assert_false(tu_exists(ta) || tu_exists(tb));
    assert_false(tu_tmp_left());
    free(ta);
    free(tb);
    free(tc);
}

/* A new file renamed before the failure is removed again; the old one beside it is kept. */
static void test_rollback_removes_new_files(void **state)
{
    (void)state;
    const char *bin = tu_path("t.bin"), *json = tu_path("t.json"), *x = tu_path("x.npy");
    unlink(bin);
    write_str(json, "{\"old\": 1}");
    write_str(x, "old x");
    char *tb, *tj, *tx;
    pe_tmp_group_begin();
    queue(bin, "new bin", &tb);
    queue(json, "{\"new\": 1}", &tj);
    queue(x, "new x", &tx);
    assert_int_equal(unlink(tx), 0);
    posenc_error e = { 0 };
    assert_int_equal(pe_tmp_group_end(&e), POSENC_EIO);
    assert_false(tu_exists(bin));
    assert_content(json, "{\"old\": 1}");
    assert_content(x, "old x");
    assert_false(tu_tmp_left());
    free(tb);
    free(tj);
    free(tx);
}

/* The first member's rename fails: nothing was renamed, nothing changes. */
static void test_first_rename_fails(void **state)
{
    (void)state;
    const char *a = tu_path("f1.npy"), *b = tu_path("f2.npy");
    write_str(a, "old f1");
    write_str(b, "old f2");
    char *ta, *tb;
    pe_tmp_group_begin();
    queue(a, "new f1", &ta);
    queue(b, "new f2", &tb);
    assert_int_equal(unlink(ta), 0);
    posenc_error e = { 0 };
    assert_int_equal(pe_tmp_group_end(&e), POSENC_EIO);
    assert_non_null(strstr(e.msg, "f1.npy"));
    assert_content(a, "old f1");
    assert_content(b, "old f2");
    assert_false(tu_tmp_left());
    free(ta);
    free(tb);
}

/* The control: the same group without the fault replaces every file, and nested groups commit
 * at the outermost end. */
static void test_group_commits_all(void **state)
{
    (void)state;
    const char *a = tu_path("g1.npy"), *b = tu_path("g2.npy");
    write_str(a, "old g1");
    write_str(b, "old g2");
    char *ta, *tb;
    pe_tmp_group_begin();
    queue(a, "new g1", &ta);
    pe_tmp_group_begin();
    queue(b, "new g2", &tb);
    posenc_error e = { 0 };
    assert_int_equal(pe_tmp_group_end(&e), POSENC_OK);
    assert_content(a, "old g1"); /* the inner end commits nothing */
    assert_int_equal(pe_tmp_group_end(&e), POSENC_OK);
    assert_content(a, "new g1");
    assert_content(b, "new g2");
    assert_false(tu_tmp_left());
    free(ta);
    free(tb);
}

/* An abort discards every queued temporary and keeps the old files. */
static void test_abort_keeps_old_files(void **state)
{
    (void)state;
    const char *a = tu_path("h1.npy");
    write_str(a, "old h1");
    char *ta;
    pe_tmp_group_begin();
    queue(a, "new h1", &ta);
    pe_tmp_group_abort();
    assert_content(a, "old h1");
    assert_false(tu_exists(ta));
    assert_false(tu_tmp_left());
    free(ta);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollback_restores_old_files),
        cmocka_unit_test(test_rollback_removes_new_files),
        cmocka_unit_test(test_first_rename_fails),
        cmocka_unit_test(test_group_commits_all),
        cmocka_unit_test(test_abort_keeps_old_files),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
