/* test_report.c: formats/report/report.c: kind by extension, escaping in Markdown and HTML, the SVG
 * plots, and writing through a temporary file (no partial file on failure). */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "formats/report/report.h"

static cJSON *sample_report(void)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddBoolToObject(r, "ok", 0);
    cJSON_AddStringToObject(r, "posenc_version", "9.9.9");
    cJSON *cfg = cJSON_AddObjectToObject(r, "config");
    cJSON_AddStringToObject(cfg, "path", "a<b>&c.json");
    cJSON_AddStringToObject(cfg, "model_type", "llama");
    cJSON_AddStringToObject(cfg, "encoding", "rope");
    cJSON *rope = cJSON_AddObjectToObject(cfg, "rope");
    cJSON_AddStringToObject(rope, "rope_type", "default");
    cJSON_AddNumberToObject(rope, "theta", 10000);
    cJSON_AddNumberToObject(rope, "head_dim", 64);
    cJSON_AddNumberToObject(rope, "rotary_dim", 64);
    cJSON_AddStringToObject(rope, "style", "neox");
    cJSON_AddArrayToObject(r, "notes");
    cJSON *checks = cJSON_AddArrayToObject(r, "checks");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", "expect_k");
    cJSON_AddBoolToObject(c, "ok", 0);
    cJSON_AddBoolToObject(c, "info", 0);
    cJSON_AddStringToObject(c, "summary", "k | differs <script>alert(1)</script>");
    cJSON_AddNumberToObject(c, "max_abs_err", 0.5);
    cJSON_AddNumberToObject(c, "max_rel_err", 0.25);
    cJSON_AddNumberToObject(c, "tolerance", 1e-6);
    cJSON *det = cJSON_AddObjectToObject(c, "details");
    cJSON *plots = cJSON_AddArrayToObject(det, "plots");
    cJSON *pl = cJSON_CreateObject();
    cJSON_AddStringToObject(pl, "title", "err");
    cJSON_AddStringToObject(pl, "x_label", "position");
    cJSON_AddStringToObject(pl, "y_label", "error");
    cJSON *series = cJSON_AddArrayToObject(pl, "series");
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "label", "rel");
    double x[] = { 0, 1, 10, 100, 1000 }, y[] = { 0, 1e-7, 1e-5, 0, 1e-2 };
    cJSON_AddItemToObject(s, "x", cJSON_CreateDoubleArray(x, 5));
    cJSON_AddItemToObject(s, "y", cJSON_CreateDoubleArray(y, 5));
    cJSON_AddItemToArray(series, s);
    cJSON_AddItemToArray(plots, pl);
    cJSON *d = cJSON_AddObjectToObject(c, "diagnosis");
    cJSON_AddStringToObject(d, "explanation", "k matches with --style gptj");
    cJSON_AddStringToObject(d, "evidence", "e");
    cJSON *cands = cJSON_AddArrayToObject(d, "candidates");
    cJSON *k = cJSON_CreateObject();
    cJSON_AddStringToObject(k, "name", "style_swapped");
    cJSON_AddStringToObject(k, "description", "--style gptj");
    cJSON_AddNumberToObject(k, "max_rel_err", 1e-7);
    cJSON_AddBoolToObject(k, "explains", 1);
    cJSON_AddItemToArray(cands, k);
    cJSON_AddItemToArray(checks, c);
    return r;
}

static void test_kind(void **state)
{
    (void)state;
    pe_report_kind k;
    assert_int_equal(pe_report_kind_of("a/b.json", &k, NULL), POSENC_OK);
    assert_int_equal(k, PE_REPORT_JSON);
    assert_int_equal(pe_report_kind_of("R.MD", &k, NULL), POSENC_OK);
    assert_int_equal(k, PE_REPORT_MARKDOWN);
    assert_int_equal(pe_report_kind_of("x.htm", &k, NULL), POSENC_OK);
    assert_int_equal(k, PE_REPORT_HTML);
    posenc_error err = { 0 };
    assert_int_equal(pe_report_kind_of("x.txt", &k, &err), POSENC_EINVAL);
    assert_non_null(strstr(err.msg, "'x.txt'"));
    assert_int_equal(pe_report_kind_of(".json", &k, &err), POSENC_EINVAL);
}

static void test_texts(void **state)
{
    (void)state;
    cJSON *r = sample_report();
    char *j = pe_report_json(r);
    cJSON *back = cJSON_Parse(j);
    assert_non_null(back);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(back, "ok")));
    cJSON_Delete(back);
    free(j);

    char *md = pe_report_markdown(r);
    assert_non_null(strstr(md, "## posenc verify: FAIL"));
    assert_non_null(strstr(md, "| `expect_k` | **FAIL** | 0.5 | 0.25 | 1e-06 | k \\| differs"));
    assert_non_null(strstr(md, "**k matches with --style gptj**"));
    assert_non_null(strstr(md, "| --style gptj | 1e-07 | yes |"));
    free(md);

    char *h = pe_report_html(r);
    assert_null(strstr(h, "<script"));
    assert_non_null(strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(h, "a&lt;b&gt;&amp;c.json"));
    assert_non_null(strstr(h, "<svg"));
    assert_non_null(strstr(h, "<polyline"));
    assert_non_null(strstr(h, "class=\"diag\""));
    /* self-contained: no external references */
    assert_null(strstr(h, "src="));
    assert_null(strstr(h, "<link"));
    for (const char *a = h; (a = strstr(a, "href=")); a++) /* links within the page only */
        assert_true(strncmp(a, "href=\"#", 7) == 0);
    /* points with x <= 0 are left out: 4 of 5 drawn */
    char *pts = strstr(h, "points=\"");
    assert_non_null(pts);
    int commas = 0;
    for (char *p = pts + 8; *p && *p != '"'; p++)
        commas += *p == ',';
    assert_int_equal(commas, 4);
    free(h);
    cJSON_Delete(r);
}

/* p, failing the test when it is NULL; for ordering assertions */
static const char *at_(const char *p, const char *what)
{
    if (!p)
        fail_msg("not found: %s", what);
    return p;
}
#define AT(s, x) at_(strstr((s), (x)), (x))

/* The first screen: the verdict, the count and the failing pairs and checks with their one line,
 * linked to their sections (HTML ids, Markdown headings' anchors); the dumps folded after; a
 * passing report has the count alone. */
static void test_first_screen(void **state)
{
    (void)state;
    cJSON *r = sample_report(); /* expect_k fails with a diagnosis */
    pe_report_add_check(r, "gguf key", 0, 0, NAN, NAN, NAN, "expected 8, found 4", NULL);
    pe_report_add_check(r, "invariance@/l1", 1, 0, 0, 0, 1, "fine", NULL);
    cJSON *pairs = cJSON_AddArrayToObject(r, "pairs");
    cJSON_AddItemToArray(pairs, cJSON_Parse("{\"group\":\"/l1\",\"layer\":1,"
        "\"layer_type\":\"full_attention\",\"has_rope\":true,\"ok\":false,"
        "\"explanation\":\"k matches when rotated with layer type 'sliding_attention'\","
        "\"checks\":[\"invariance@/l1\",\"expect_k\"]}"));
    int64_t sh[4] = { 1, 2, 8, 64 };
    pe_report_pair hp = { "/l1", 2, { { "q", "d.h5:/l1/q", "f32", 4, sh },
                                      { "k", "d.h5:/l1/k", "f32", 4, sh } } };
    pe_report_header h = { "cfg.json", NULL, "hf", "bhsd", NULL, 0, 0, 7, 1, &hp };
    cJSON_AddObjectToObject(r, "header");
    pe_report_set_header(r, &h);

    char *md = pe_report_markdown(r);
    assert_non_null(md);
    const char *title = AT(md, "## posenc verify: FAIL (2 of 3 checks failed)");
    const char *count = AT(md, "\n2 of 3 checks failed (1 of 1 q/k pair).\n");
    const char *fp = AT(md, "| [pair `/l1`](#pair-l1) | k matches when rotated with layer type "
                            "'sliding_attention' |\n");
    const char *fc = AT(md, "| [`expect_k`](#check-expect_k) | k matches with --style gptj |\n");
    const char *fg = AT(md, "| [`gguf key`](#check-gguf-key) | expected 8, found 4 |\n");
    const char *cfg = AT(md, "Config `a<b>&c.json`");
    const char *sp = AT(md, "\n### Pair `/l1`\n");
    const char *sc = AT(md, "\n### Check `expect_k`\n");
    const char *sg = AT(md, "\n### Check `gguf key`\n\n**FAIL**: expected 8, found 4\n");
    const char *dumps = AT(md, "<details><summary>Dumps: 1 pair, 2 arrays</summary>\n\n| pair |");
    assert_true(title < count && count < fp && fp < fc && fc < fg && fg < cfg && cfg < sp &&
                sp < sc && sc < sg && sg < dumps);
    AT(sp, "Failed: [`expect_k`](#check-expect_k)\n");
    assert_null(strstr(md, "### Check `invariance@/l1`"));
    free(md);

    char *html = pe_report_html(r);
    assert_non_null(html);
    const char *h1 = AT(html, "<h1>");
    const char *hc = AT(html, "<p id=\"count\" class=\"fail\">2 of 3 checks failed");
    const char *hf = AT(html, "<table id=\"failed\">");
    const char *hpair = AT(html, "<a href=\"#pair-/l1\">pair <code>/l1</code></a></td><td>k "
                                 "matches when rotated");
    const char *hchk = AT(html, "<a href=\"#check-gguf_key\"><code>gguf key</code></a></td>"
                                "<td>expected 8, found 4</td>");
    const char *hdr = AT(html, "<table id=\"header\">");
    const char *fold = AT(html, "<details id=\"members\"><summary>Dumps: 1 pair, 2 arrays"
                                "</summary>\n<table id=\"dumps\">");
    assert_true(h1 < hc && hc < hf && hf < hpair && hpair < hchk && hchk < hdr && hdr < fold);
    /* every link has its target, a failing check without plots or diagnosis included */
    AT(html, "<tr id=\"pair-/l1\">");
    AT(html, "<h2 id=\"check-expect_k\">");
    AT(html, "<h2 id=\"check-gguf_key\">gguf key</h2>\n<p class=\"summary\">");
    free(html);

    /* all passing: the count alone */
    cJSON *ck;
    cJSON_ArrayForEach(ck, cJSON_GetObjectItem(r, "checks"))
        cJSON_ReplaceItemInObject(ck, "ok", cJSON_CreateTrue());
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(pairs, 0), "ok", cJSON_CreateTrue());
    cJSON_ReplaceItemInObject(r, "ok", cJSON_CreateTrue());
    md = pe_report_markdown(r);
    html = pe_report_html(r);
    AT(md, "## posenc verify: PASS (3 checks): `cfg.json`\n\nAll 3 checks passed (1 q/k pair).\n\n"
           "Config");
    assert_null(strstr(md, "| failed |"));
    AT(html, "<p id=\"count\" class=\"ok\">All 3 checks passed (1 q/k pair).</p>\n"
             "<table id=\"header\">");
    assert_null(strstr(html, "id=\"failed\""));
    free(md);
    free(html);
    cJSON_Delete(r);
}

static int count_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".posenc-tmp") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* A multi-layer report: one row per pair in Markdown and HTML, a failed pair marked. */
static void test_pairs(void **state)
{
    (void)state;
    cJSON *r = sample_report();
    cJSON *pairs = cJSON_AddArrayToObject(r, "pairs");
    cJSON_AddItemToArray(pairs, cJSON_Parse("{\"group\":\"/layer0\",\"layer\":0,"
        "\"layer_type\":\"sliding_attention\",\"has_rope\":true,\"q\":\"d.h5:/layer0/q\","
        "\"k\":\"d.h5:/layer0/k\",\"ok\":true}"));
    cJSON_AddItemToArray(pairs, cJSON_Parse("{\"group\":\"a|b\",\"layer\":null,"
        "\"layer_type\":null,\"has_rope\":false,\"q\":\"d.h5:a|b/q\",\"k\":\"d.h5:<k>\","
        "\"ok\":false,\"checks\":[\"expect_k\"]}"));
    char *md = pe_report_markdown(r), *html = pe_report_html(r);
    assert_non_null(md);
    assert_non_null(html);
    assert_non_null(strstr(md, "| pair | layer | layer type | RoPE | q | k | result | diagnosis |\n"));
    assert_non_null(strstr(md, "| /layer0 | 0 | sliding_attention | yes | d.h5:/layer0/q | "
                               "d.h5:/layer0/k | ok |  |\n"));
    /* a failed pair without an explanation: its failing checks' lines */
    /* a member name's '<k>' is text, never HTML the Markdown renderer would pass through */
    assert_non_null(strstr(md, "| a\\|b | - | - | no (not rotated) | d.h5:a\\|b/q | d.h5:&lt;k&gt; | "
                               "**FAIL** | expect_k: k matches with --style gptj |\n"));
    assert_null(strstr(md, "<k>"));
    assert_non_null(strstr(html, "<table id=\"pairs\">"));
    assert_non_null(strstr(html, "<tr id=\"pair-a_b\">"));
    assert_non_null(strstr(html, "<td>d.h5:&lt;k&gt;</td><td class=\"fail\">FAIL</td>"
                                 "<td>expect_k: k matches with --style gptj</td></tr>"));
    free(md);
    free(html);
    /* without pairs, no table */
    cJSON_DeleteItemFromObjectCaseSensitive(r, "pairs");
    md = pe_report_markdown(r);
    assert_null(strstr(md, "| pair |"));
    free(md);
    cJSON_Delete(r);
}

static void test_write(void **state)
{
    (void)state;
    char dir[] = "/tmp/posenc-test-report.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    cJSON *r = sample_report();
    posenc_error err = { 0 };
    snprintf(path, sizeof path, "%s/r.html", dir);
    assert_int_equal(pe_report_write(r, path, &err), POSENC_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 1000);
    assert_int_equal(count_tmp(dir), 0);
    /* a directory that does not exist: error naming the file, nothing left */
    snprintf(path, sizeof path, "%s/no/r.json", dir);
    assert_int_equal(pe_report_write(r, path, &err), POSENC_EIO);
    assert_non_null(strstr(err.msg, path));
    /* the target is a directory: rename fails, the temporary file is removed */
    snprintf(path, sizeof path, "%s/sub.json", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    char inner[300];
    snprintf(inner, sizeof inner, "%s/x", path);
    FILE *fp = fopen(inner, "w");
    fclose(fp);
    assert_int_equal(pe_report_write(r, path, &err), POSENC_EIO);
    assert_int_equal(count_tmp(dir), 0);
    unlink(inner);
    rmdir(path);
    snprintf(path, sizeof path, "%s/r.html", dir);
    unlink(path);
    rmdir(dir);
    cJSON_Delete(r);
}

/* The tree builders and the header, and what the writers make of them: the verdict in the
 * titles, the dump table with members, the floor for zero errors and the tolerance line. */
static void test_tree(void **state)
{
    (void)state;
    cJSON *r = pe_report_new("9.9.9");
    assert_non_null(r);
    int64_t shq[4] = { 1, 4, 8, 64 }, shk[4] = { 1, 2, 8, 64 };
    pe_report_pair pair = { NULL, 2,
                                { { "q", "d.npz:q", "f32", 4, shq }, { "k", "plain.npy", "bf16", 4, shk } } };
    pe_report_header h = { "cfg.json", NULL, "hf: float32 tables", "bshd", NULL, 4096,
                               4096, 4103, 1, &pair };
    pe_report_set_header(r, &h);
    double x[] = { 1, 2, 4, 8 }, y[] = { 0, 3e-7, 2e-7, 5e-7 }, y2[] = { 1e-9, NAN, 2e-9, 3e-9 };
    cJSON *pl = pe_report_plot("q: error", "position", "err", 9.5e-7, "rel tolerance");
    pe_report_plot_add(pl, pe_report_series("rel", x, y, 4));
    pe_report_plot_add(pl, pe_report_series("abs", x, y2, 4));
    cJSON *det = cJSON_CreateObject(), *plots = cJSON_AddArrayToObject(det, "plots");
    cJSON_AddItemToArray(plots, pl);
    pe_report_add_check(r, "expect_q", 1, 0, 1e-7, 5e-7, 9.5e-7, "fine", det);
    pe_report_add_check(r, "expect_k", 0, 0, NAN, 1, 9.5e-7, "bad", NULL);
    pe_report_set_ok(r, 0);
    pe_report_add_note(r, "n=%d", 3);

    const cJSON *hj = cJSON_GetObjectItem(r, "header");
    assert_string_equal(cJSON_GetObjectItem(hj, "layout")->valuestring, "bshd");
    assert_int_equal((int)cJSON_GetObjectItem(hj, "offset")->valuedouble, 4096);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(hj, "positions")));
    const cJSON *d0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(hj, "pairs"), 0), "dumps"), 0);
    const cJSON *d1 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(hj, "pairs"), 0), "dumps"), 1);
    assert_string_equal(cJSON_GetObjectItem(d0, "file")->valuestring, "d.npz");
    assert_string_equal(cJSON_GetObjectItem(d0, "member")->valuestring, "q");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(d1, "member")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "checks"), 1), "max_abs_err")));
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "notes"), 0)->valuestring, "n=3");

    char *md = pe_report_markdown(r);
    assert_non_null(strstr(md, "## posenc verify: FAIL (1 of 2 checks failed): `cfg.json`"));
    assert_non_null(strstr(md, "**layout**: bshd"));
    assert_non_null(strstr(md, "**positions**: --offset 4096: token s at position 4096 + s (4096 to 4103)"));
    assert_non_null(strstr(md, "| 1 | q | `d.npz` | `q` | f32 | 1x4x8x64 |"));
    assert_non_null(strstr(md, "| 1 | k | `plain.npy` | - | bf16 | 1x2x8x64 |"));
    free(md);

    char *html = pe_report_html(r);
    assert_non_null(strstr(html, "<title>posenc verify: FAIL (1 of 2 checks failed): cfg.json</title>"));
    /* the floor: one decade below 1e-9 (the smallest non-zero value), labelled 0 */
    const char *fy = strstr(html, "data-floor-y=\"");
    assert_non_null(fy);
    double floor_y = strtod(fy + strlen("data-floor-y=\""), NULL);
    const char *z = strstr(html, "<circle class=\"pt zero\"");
    assert_non_null(z);
    const char *cy = strstr(z, "cy=\"");
    assert_close(strtod(cy + 4, NULL), floor_y, 0, 0.01);
    assert_non_null(strstr(z, "data-y=\"0\""));
    assert_non_null(strstr(html, "class=\"floor-label\""));
    assert_non_null(strstr(html, ">1e-9</text>"));
    assert_null(strstr(html, ">1e-10</text>")); /* that decade is the floor, labelled 0 */
    assert_non_null(strstr(html, "errors of exactly 0 are drawn on the floor line marked 0"));
    /* the tolerance line and its legend; the NaN is not drawn and said so */
    assert_non_null(strstr(html, "<line class=\"tolerance\""));
    assert_non_null(strstr(html, "data-y=\"9.5000000000000001e-07\"/>"));
    assert_non_null(strstr(html, "rel tolerance 9.5e-07</text>"));
    assert_non_null(strstr(html, "1 non-finite or negative value not drawn"));
    int circles = 0;
    for (const char *p = html; (p = strstr(p, "<circle")); p++)
        circles++;
    assert_int_equal(circles, 7);
    /* the dump table, members in code, a plain file's member a dash */
    assert_non_null(strstr(html, "<td class=\"member\"><code>q</code></td>"));
    assert_non_null(strstr(html, "<td class=\"member\">-</td>"));
    free(html);

    /* "-" is the JSON report on stdout */
    pe_report_kind k;
    assert_int_equal(pe_report_kind_of("-", &k, NULL), POSENC_OK);
    assert_int_equal(k, PE_REPORT_JSON);
    cJSON_Delete(r);
}

/* The checks of a verify run (report_checks.c): a comparison's summary and details from its
 * statistics (ranges [2^(b-1), 2^b - 1], the plot's x = range end + 1), a bias check, a GGUF
 * finding, and the text summary printed from the tree. */
static void test_checks(void **state)
{
    (void)state;
    double ha[2] = { 1e-7, 3e-3 }, hr[2] = { 2e-7, 1.5e-3 }, hq[2] = { 0.1, 40 };
    pe_vstats st;
    memset(&st, 0, sizeof st);
    st.max_abs = 3e-3;
    st.max_rel = 1.5e-3;
    st.max_ratio = 40;
    st.rows = 10;
    st.bad = 1;
    st.worst_b = 0;
    st.worst_h = 1;
    st.worst_pos = 100;
    st.worst = (pe_vindex){ 0, 1, 100, 5 };
    st.worst_err = 4e-6;
    st.worst_bound = 1e-7;
    st.elems = 640;
    st.elems_bad = 3;
    st.b_ratio[7] = 40;
    st.heads = 2;
    st.head_ratio = hq;
    st.head_abs = ha;
    st.head_rel = hr;
    st.b_rows[0] = 2;
    st.b_rows[7] = 8;
    st.b_abs[7] = 3e-3;
    st.b_rel[7] = 1.5e-3;
    char sum[512];
    assert_int_equal(pe_report_compare_summary(sum, sizeof sum, &st, "k", 0, -1), 0);
    assert_string_equal(sum, "k: 3 of 640 elements (1 of 10 rows) out of bound; worst at head 1, "
                             "position 100, dim 5: error 4e-06, bound 1e-07 (40 times it)");
    assert_int_equal(pe_report_compare_summary(sum, sizeof sum, &st, "k", 1, 4), 0);
    assert_non_null(strstr(sum, "but layer 4 has no RoPE"));
    st.nan = 7;
    st.first_nonfinite = (pe_vindex){ 2, 1, 131028, 0 };
    assert_int_equal(pe_report_compare_summary(sum, sizeof sum, &st, "q", 0, -1), 0);
    assert_string_equal(sum, "q has 7 NaN and 0 Inf values, first at batch 2, head 1, position "
                             "131028, dim 0");
    st.nan = 0;
    assert_int_equal(pe_report_compare_summary(sum, sizeof sum, &st, "k", 1, 4), 0);
    posenc_verify_tolerance tol;
    posenc_verify_tolerance_init(&tol, POSENC_DT_F32, POSENC_DT_F32, 1);
    cJSON *det = pe_report_compare_details(&st, &tol, "k", 0);
    cJSON *pr = cJSON_GetObjectItemCaseSensitive(det, "per_position_range");
    assert_int_equal(cJSON_GetArraySize(pr), 2);
    cJSON *r7 = cJSON_GetArrayItem(pr, 1);
    assert_true(cJSON_GetObjectItemCaseSensitive(r7, "from")->valuedouble == 64);
    assert_true(cJSON_GetObjectItemCaseSensitive(r7, "to")->valuedouble == 127);
    assert_true(cJSON_GetObjectItemCaseSensitive(r7, "rows")->valuedouble == 8);
    assert_true(cJSON_GetObjectItemCaseSensitive(det, "rows_failed")->valuedouble == 1);
    cJSON *h1 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(det, "per_head"), 1);
    assert_true(cJSON_GetObjectItemCaseSensitive(h1, "max_abs_err")->valuedouble == 3e-3);
    cJSON *pl = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(det, "plots"), 0);
    cJSON *x = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pl, "series"), 0), "x");
    assert_true(cJSON_GetArrayItem(x, 0)->valuedouble == 1 &&
                cJSON_GetArrayItem(x, 1)->valuedouble == 128);
    /* the plot draws the measure its line bounds: error over bound, the bound at 1 */
    assert_true(cJSON_GetObjectItemCaseSensitive(pl, "tolerance")->valuedouble == 1);
    cJSON *y = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pl, "series"), 0), "y");
    assert_true(cJSON_GetArrayItem(y, 1)->valuedouble == 40);
    assert_true(cJSON_GetObjectItemCaseSensitive(det, "elements_failed")->valuedouble == 3);

    cJSON *rep = pe_report_new("9.9");
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(rep, "config"), "path", "c.json");
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(rep, "config"), "encoding", "rope");
    pe_report_add_check(rep, "expect_k", 0, 0, st.max_abs, st.max_rel, 1e-6, sum, det);
    posenc_bias_check_result br;
    memset(&br, 0, sizeof br);
    br.checked = 12;
    br.max_abs_err = 0.5;
    int ok;
    cJSON *bd = pe_report_bias_details(&br, "b(i,j)", sum, sizeof sum, &ok);
    assert_int_equal(ok, 1);
    assert_string_equal(sum, "b(i,j): 12 comparisons, 0 outside tolerance, max err 0.5");
    pe_report_add_check(rep, "alibi", ok, 0, 0.5, NAN, NAN, sum, bd);
    posenc_gguf_finding f;
    memset(&f, 0, sizeof f);
    snprintf(f.key, sizeof f.key, "llama.rope.freq_base");
    snprintf(f.what, sizeof f.what, "freq_base");
    snprintf(f.expected, sizeof f.expected, "500000");
    snprintf(f.found, sizeof f.found, "10000");
    snprintf(f.consequence, sizeof f.consequence, "every angle is wrong");
    cJSON *gd = pe_report_gguf_details(&f, sum, sizeof sum);
    assert_string_equal(sum, "expected 500000, found 10000: every angle is wrong");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(gd, "argument")->valuestring, "freq_base");
    pe_report_add_check(rep, f.key, 0, 1, NAN, NAN, NAN, sum, gd);
    pe_report_add_note(rep, "a note");
    char *t = pe_report_text(rep, 1, 3);
    assert_string_equal(t, "posenc verify: c.json (rope)\n"
                           "FAIL  expect_k             k differs from the unrotated k in 1 of 10 "
                           "rows, but layer 4 has no RoPE: worst at head 1, position 100, dim 5, "
                           "error 4e-06\n"
                           "ok    alibi                b(i,j): 12 comparisons, 0 outside "
                           "tolerance, max err 0.5\n"
                           "info  llama.rope.freq_base expected 500000, found 10000: every angle "
                           "is wrong\n"
                           "note: a note\n"
                           "result: FAIL (1 of 3 checks failed)\n");
    free(t);
    cJSON_Delete(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind),
        cmocka_unit_test(test_texts),
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_pairs),
        cmocka_unit_test(test_first_screen),
        cmocka_unit_test(test_checks),
    };
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
