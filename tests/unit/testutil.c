/* testutil.c: the helpers every unit test binary links (declared in testutil.h): a scratch
 * directory per binary, files in it, running a Python snippet with Debian's python3. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "posenc/config.h"
#include "posenc/io.h"

char tu_dir[256];

int tu_setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tu_dir, sizeof tu_dir, "%s/posenc-test.XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tu_dir) ? 0 : -1;
}

int tu_teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_dir);
    return system(cmd) == 0 ? 0 : -1;
}

const char *tu_path(const char *name)
{
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", tu_dir, name);
    return b;
}

int tu_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

int tu_tmp_left(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q posenc-tmp", tu_dir);
    return system(cmd) == 0;
}

void tu_write_file(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

unsigned char *tu_slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long len = ftell(fp);
    assert_true(len >= 0);
    assert_int_equal(fseek(fp, 0, SEEK_SET), 0);
    unsigned char *p = malloc((size_t)len + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)len, fp), (size_t)len);
    p[len] = 0;
    fclose(fp);
    *n = (size_t)len;
    return p;
}

int tu_python_run(const char *modules, const char *code)
{
    if (access(TU_PY, X_OK) != 0)
        return 77;
    char script[600];
    snprintf(script, sizeof script, "%s/snippet.py", tu_dir);
    FILE *fp = fopen(script, "w");
    if (!fp)
        return -1;
    fprintf(fp, "import sys\ntry:\n    import %s\nexcept ImportError:\n    sys.exit(77)\n", modules);
    fprintf(fp, "D = '%s'\n%s\n", tu_dir, code);
    fclose(fp);
    char cmd[800];
    snprintf(cmd, sizeof cmd, TU_PY " '%s'", script);
    int rc = system(cmd);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

void tu_write_arrays(const char *path, const tu_array *a, int n)
{
    posenc_writer *w;
    posenc_error err = { 0 };
    posenc_write_opts wo = { POSENC_FMT_AUTO, 0 };
    if (posenc_writer_open(path, &wo, &w, &err) != POSENC_OK)
        fail_msg("open '%s': %s", path, err.msg);
    for (int i = 0; i < n; i++) {
        posenc_array_info info = { { 0 }, a[i].dt, a[i].ndim, { 0 } };
        snprintf(info.name, sizeof info.name, "%s", a[i].name);
        memcpy(info.shape, a[i].shape, sizeof a[i].shape);
        assert_int_equal(posenc_writer_declare(w, &info, &err), POSENC_OK);
    }
    for (int i = 0; i < n; i++) {
        uint64_t ne = 1;
        for (int d = 0; d < a[i].ndim; d++)
            ne *= (uint64_t)a[i].shape[d];
        assert_int_equal(posenc_writer_write(w, a[i].data, ne, &err), POSENC_OK);
    }
    assert_int_equal(posenc_writer_commit(w, &err), POSENC_OK);
}

posenc_rope_config tu_rope_cfg(double theta, int head_dim, int rotary_dim, posenc_style style)
{
    posenc_rope_config c;
    memset(&c, 0, sizeof c);
    c.type = POSENC_ROPE_DEFAULT;
    c.theta = theta;
    snprintf(c.theta_source, sizeof c.theta_source, "test");
    c.head_dim = head_dim;
    c.rotary_dim = rotary_dim;
    c.exponent_dim = rotary_dim;
    c.partial_rotary_factor = (double)rotary_dim / head_dim;
    c.style = style;
    c.max_position_embeddings = 4096;
    c.original_max_position_embeddings = 4096;
    c.factor = 1.0;
    c.beta_fast = 32;
    c.beta_slow = 1;
    c.truncate = 1;
    return c;
}

posenc_rope_params tu_rope_params(const posenc_rope_config *c)
{
    posenc_rope_params p;
    posenc_error err = { 0 };
    if (posenc_rope_params_compute(c, 0, &p, &err) != POSENC_OK)
        fail_msg("posenc_rope_params_compute: %s", err.msg);
    return p;
}

/* An opaque '<V2' array: the container lists it (its NPY descr, not readable, 2-byte elements)
 * and opening a reader on it fails with msg. */
void tu_expect_opaque(const char *path, const char *msg)
{
    posenc_container *c = NULL;
    posenc_reader *r = NULL;
    posenc_error err = { 0 };
    int readable = 1;
    uint64_t nb = 0;
    if (posenc_container_open(path, NULL, &c, &err) != POSENC_OK)
        fail_msg("open '%s': %s", path, err.msg);
    assert_int_equal(posenc_container_count(c), 1);
    const char *t = posenc_container_array_type(c, 0, &nb, &readable);
    assert_non_null(t);
    assert_true(strcmp(t, "<V2") == 0 || strcmp(t, "|V2") == 0);
    assert_int_equal(readable, 0);
    const posenc_array_info *a = posenc_container_array(c, 0);
    assert_true(nb == (uint64_t)a->shape[0] * 2);
    assert_int_equal(posenc_reader_open_index(c, 0, &r, &err), POSENC_EUNSUPPORTED);
    if (!strstr(err.msg, msg))
        fail_msg("reader on '%s': '%s' lacks '%s'", path, err.msg, msg);
    posenc_container_close(c);
}

void tu_expect_open_error(const char *path, const posenc_read_opts *o, posenc_status code,
                          const char *msg)
{
    posenc_container *c = NULL;
    posenc_error err = { 0 };
    posenc_status st = posenc_container_open(path, o, &c, &err);
    if (st == POSENC_OK)
        posenc_container_close(c);
    if (st != code || !strstr(err.msg, msg))
        print_error("open '%s': got %d '%s', want %d '%s'\n", path, st, err.msg, code, msg);
    assert_int_equal(st, code);
    assert_non_null(strstr(err.msg, msg));
}

posenc_model *tu_model(const char *json)
{
    posenc_model *m = NULL;
    posenc_error err = { 0 };
    posenc_status st = posenc_config_parse(json, strlen(json), "c.json", NULL, &m, &err);
    if (st != POSENC_OK)
        print_error("%s\n", err.msg);
    assert_int_equal(st, POSENC_OK);
    return m;
}

/* Every test binary's cmocka_run_group_tests comes here first (the link wraps
 * _cmocka_run_group_tests, Makefile): PE_TEST_LIST=1 prints the binary's test names, one per
 * line, and runs none; PE_TEST_ONLY=NAME runs that test alone (with the group's setup and
 * teardown). tests/unit/alone.sh runs every test so, each in a scratch directory of its own, to
 * prove that no test needs what an earlier one left behind. */
int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown)
{
    const char *list = getenv("PE_TEST_LIST"), *only = getenv("PE_TEST_ONLY");
    if (list && *list) {
        for (size_t i = 0; i < num_tests; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    if (only && *only) {
        size_t i = 0;
        while (i < num_tests && strcmp(tests[i].name, only) != 0)
            i++;
        if (i == num_tests) {
            fprintf(stderr, "no test '%s' in group '%s'\n", only, group_name);
            return 1;
        }
        return __real__cmocka_run_group_tests(group_name, &tests[i], 1, group_setup,
                                              group_teardown);
    }
    return __real__cmocka_run_group_tests(group_name, tests, num_tests, group_setup,
                                          group_teardown);
}
