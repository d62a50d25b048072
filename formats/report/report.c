/* report.c: verify reports as JSON, Markdown and a self-contained HTML page with inline SVG
 * plots (see report.h for the tree they read). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/io/backend.h"
#include "formats/io/inputs.h"
#include "formats/report/report.h"
#include "formats/io/strbuf.h"

/* ---- a growable string ---- */
/* ---- tree accessors ---- */
static const char *jstr(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : dflt;
}

static int jbool(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static void fmt_num(char *buf, size_t len, const cJSON *v)
{
    if (cJSON_IsNumber(v))
        snprintf(buf, len, "%.3g", v->valuedouble);
    else
        snprintf(buf, len, "-");
}

static const char *result_word(const cJSON *c)
{
    if (jbool(c, "info"))
        return "info";
    return jbool(c, "ok") ? "ok" : "FAIL";
}

/* ---- JSON ---- */
char *pe_report_json(const cJSON *report)
{
    char *s = cJSON_Print(report);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    return t;
}

/* ---- the verdict and the header (what was verified) ---- */
static const char *report_config(const cJSON *report)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(report, "header");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(report, "config");
    return jstr(h, "config", jstr(c, "path", "?"));
}

/* "PASS (5 checks)" or "FAIL (2 of 5 checks failed)" */
static void verdict(const cJSON *report, char *buf, size_t len)
{
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks"), *c;
    int n = cJSON_GetArraySize(checks), failed = 0;
    cJSON_ArrayForEach(c, checks) failed += !jbool(c, "ok");
    if (jbool(report, "ok"))
        snprintf(buf, len, "PASS (%d check%s)", n, n == 1 ? "" : "s");
    else
        snprintf(buf, len, "FAIL (%d of %d check%s failed)", failed, n, n == 1 ? "" : "s");
}

struct header_row {
    char key[32];
    char value[1024];
};

/* The header's lines other than the config: layer type, layout, positions, precision. */
static int header_rows(const cJSON *report, struct header_row *rows, int cap)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(report, "header");
    int n = 0;
    if (!cJSON_IsObject(h))
        return 0;
    const char *lt = jstr(h, "layer_type", NULL);
    if (lt && n < cap) {
        snprintf(rows[n].key, sizeof rows[n].key, "layer type");
        snprintf(rows[n++].value, sizeof rows[0].value, "%s", lt);
    }
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(h, "pairs")) > 0) {
        const cJSON *off = cJSON_GetObjectItemCaseSensitive(h, "offset");
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(h, "first_position");
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(h, "last_position");
        double fp = cJSON_IsNumber(f) ? f->valuedouble : 0, lp = cJSON_IsNumber(l) ? l->valuedouble : 0;
        if (n < cap) {
            snprintf(rows[n].key, sizeof rows[n].key, "layout");
            snprintf(rows[n++].value, sizeof rows[0].value, "%s", jstr(h, "layout", "?"));
        }
        if (n < cap) {
            snprintf(rows[n].key, sizeof rows[n].key, "positions");
            if (cJSON_IsNumber(off))
                snprintf(rows[n++].value, sizeof rows[0].value,
                         "--offset %.0f: token s at position %.0f + s (%.0f to %.0f)",
                         off->valuedouble, off->valuedouble, fp, lp);
            else
                snprintf(rows[n++].value, sizeof rows[0].value, "--positions %s (%.0f to %.0f)",
                         jstr(h, "positions", "?"), fp, lp);
        }
    }
    if (n < cap && jstr(h, "precision", "")[0]) {
        snprintf(rows[n].key, sizeof rows[n].key, "precision");
        snprintf(rows[n++].value, sizeof rows[0].value, "%s", jstr(h, "precision", ""));
    }
    return n;
}

/* The cells of one dump row: pair, role, file, member, dtype, shape. */
static void dump_cells(const cJSON *pair, int pi, const cJSON *d, char cells[6][1024])
{
    const char *label = jstr(pair, "label", NULL);
    if (label)
        snprintf(cells[0], 1024, "%s", label);
    else
        snprintf(cells[0], 1024, "%d", pi + 1);
    snprintf(cells[1], 1024, "%s", jstr(d, "role", "?"));
    snprintf(cells[2], 1024, "%s", jstr(d, "file", "?"));
    snprintf(cells[3], 1024, "%s", jstr(d, "member", "-"));
    snprintf(cells[4], 1024, "%s", jstr(d, "dtype", "?"));
    size_t m = 0;
    const cJSON *e;
    cells[5][0] = '\0';
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d, "shape"))
        if (m < 1000)
            m += (size_t)snprintf(cells[5] + m, 1024 - m, "%s%.0f", m ? "x" : "", e->valuedouble);
}

static const char *const dump_heads[6] = { "pair", "dump", "file", "member", "dtype", "shape" };

/* "Dumps: 16 pairs, 64 arrays": the line the folded list of dumps shows. */
static void dumps_line(char *buf, size_t len, const cJSON *hpairs)
{
    int np = cJSON_GetArraySize(hpairs), nd = 0;
    const cJSON *pr;
    cJSON_ArrayForEach(pr, hpairs) nd += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pr, "dumps"));
    snprintf(buf, len, "Dumps: %d pair%s, %d array%s", np, np == 1 ? "" : "s", nd,
             nd == 1 ? "" : "s");
}

/* ---- the first screen: the verdict, then what failed and why ---- */

/* A check's one line: its diagnosis' explanation when it has one, else its summary. */
static const char *check_why(const cJSON *c)
{
    const char *e = jstr(cJSON_GetObjectItemCaseSensitive(c, "diagnosis"), "explanation", "");
    return e[0] ? e : jstr(c, "summary", "");
}

static const cJSON *find_check(const cJSON *report, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks"))
        if (strcmp(jstr(c, "name", ""), name) == 0)
            return c;
    return NULL;
}

/* A failed pair's one line: its explanation, else (a report from before it was always set)
 * its failing checks', each "NAME: " and the check's line. Caller frees; NULL out of memory. */
static char *pair_why(const cJSON *report, const cJSON *p)
{
    pe_strbuf b = { 0 };
    const char *e = jstr(p, "explanation", "");
    const cJSON *n;
    if (e[0])
        pe_strbuf_puts(&b, e);
    else
        cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(p, "checks"))
        {
            const cJSON *c = cJSON_IsString(n) ? find_check(report, n->valuestring) : NULL;
            if (c && !jbool(c, "ok"))
                pe_strbuf_printf(&b, "%s%s: %s", b.len ? "; " : "", n->valuestring, check_why(c));
        }
    return pe_strbuf_finish(&b);
}

/* "All 7 checks passed (2 q/k pairs)." or "1 of 7 checks failed (1 of 2 q/k pairs)." */
static void count_line(const cJSON *report, char *buf, size_t len)
{
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks"), *c;
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(report, "pairs");
    int n = cJSON_GetArraySize(checks), failed = 0, np = cJSON_GetArraySize(pairs), pf = 0;
    cJSON_ArrayForEach(c, checks) failed += !jbool(c, "ok");
    cJSON_ArrayForEach(c, pairs) pf += !jbool(c, "ok");
    int m = failed ? snprintf(buf, len, "%d of %d check%s failed", failed, n, n == 1 ? "" : "s")
                   : snprintf(buf, len, "All %d check%s passed", n, n == 1 ? "" : "s");
    if (m < 0 || (size_t)m >= len)
        return;
    if (np > 0 && failed)
        snprintf(buf + m, len - (size_t)m, " (%d of %d q/k pair%s).", pf, np, np == 1 ? "" : "s");
    else if (np > 0)
        snprintf(buf + m, len - (size_t)m, " (%d q/k pair%s).", np, np == 1 ? "" : "s");
    else
        snprintf(buf + m, len - (size_t)m, ".");
}

/* ---- Markdown ----
 * Text from the inputs (member names, model_type, file names) is never markup: in plain text
 * '<', '>' and '&' become entities (Markdown passes raw HTML through); in a code span, where
 * HTML is inert and entities are not decoded, a backquote, which would end the span, becomes
 * '. A table cell's '|' is escaped in both. */
static void md_put(pe_strbuf *b, const char *s, int code)
{
    for (; *s; s++) {
        if (*s == '|')
            pe_strbuf_puts(b, "\\|");
        else if (*s == '\n' || *s == '\r')
            pe_strbuf_puts(b, " ");
        else if (code && *s == '`')
            pe_strbuf_puts(b, "'");
        else if (!code && (*s == '<' || *s == '>' || *s == '&' || *s == '`'))
            pe_strbuf_puts(b, *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : "&#96;");
        else {
            char c[2] = { *s, 0 };
            pe_strbuf_puts(b, c);
        }
    }
}

static void md_text(pe_strbuf *b, const char *s) { md_put(b, s, 0); }
static void md_code(pe_strbuf *b, const char *s) { md_put(b, s, 1); }

static void config_line(pe_strbuf *b, const cJSON *report, int html);
static void html_text(pe_strbuf *b, const char *s);

/* The anchor a Markdown renderer gives a heading of plain text `text` (GitHub's, also GitLab's
 * and most others': lower case, a space becomes '-', ASCII punctuation other than '-' and '_'
 * is dropped; a slug already taken gets "-1", "-2", ... in document order). used: an object of
 * the slugs taken so far (slug -> count), updated. */
static void md_slug(cJSON *used, const char *text, char *out, size_t cap)
{
    char base[1024];
    size_t n = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s && n + 1 < sizeof base; s++) {
        if (*s >= 0x80 || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || *s == '_' ||
            *s == '-')
            base[n++] = (char)*s;
        else if (*s >= 'A' && *s <= 'Z')
            base[n++] = (char)(*s - 'A' + 'a');
        else if (*s == ' ')
            base[n++] = '-';
    }
    base[n] = '\0';
    snprintf(out, cap, "%s", base);
    cJSON *count = cJSON_GetObjectItemCaseSensitive(used, base);
    while (count && cJSON_GetObjectItemCaseSensitive(used, out)) {
        cJSON_SetNumberValue(count, count->valuedouble + 1);
        snprintf(out, cap, "%s-%.0f", base, count->valuedouble);
    }
    if (!cJSON_GetObjectItemCaseSensitive(used, out))
        cJSON_AddNumberToObject(used, out, 0);
}

/* An HTML id, and the same as a link's #fragment: prefix and name, every byte outside
 * [A-Za-z0-9_.:@/-] made '_' (so neither needs escaping, and each check's and pair's is its
 * own). */
static void html_id(pe_strbuf *b, const char *prefix, const char *name)
{
    pe_strbuf_puts(b, prefix);
    for (const char *s = name; *s; s++) {
        char c = *s;
        int keep = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                   strchr("_.:@/-", c) != NULL;
        pe_strbuf_add(b, keep ? s : "_", 1);
    }
}

/* The pairs of a multi-layer dump, one row each (the report's "pairs"; nothing without it). */
static void pairs_table(pe_strbuf *b, const cJSON *report, int html)
{
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(report, "pairs"), *p;
    if (!cJSON_IsArray(pairs))
        return;
    static const char *const head[] = { "pair", "layer", "layer type", "RoPE", "q", "k",
                                        "result", "diagnosis" };
    void (*text)(pe_strbuf *, const char *) = html ? html_text : md_text;
    pe_strbuf_puts(b, html ? "<table id=\"pairs\">\n<tr>" : "|");
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        pe_strbuf_printf(b, html ? "<th>%s</th>" : " %s |", head[i]);
    pe_strbuf_puts(b, html ? "</tr>\n" : "\n|---|---|---|---|---|---|---|---|\n");
    cJSON_ArrayForEach(p, pairs)
    {
        char *why = jbool(p, "ok") ? NULL : pair_why(report, p);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(p, "layer");
        char layer[32] = "-";
        if (cJSON_IsNumber(l))
            snprintf(layer, sizeof layer, "%.0f", l->valuedouble);
        const char *cell[] = { jstr(p, "group", ""), layer, jstr(p, "layer_type", "-"),
                               jbool(p, "has_rope") ? "yes" : "no (not rotated)",
                               jstr(p, "q", "?"), jstr(p, "k", "?"),
                               jbool(p, "ok") ? "ok" : "FAIL" };
        if (html) {
            pe_strbuf_puts(b, "<tr id=\"");
            html_id(b, "pair-", jstr(p, "group", ""));
            pe_strbuf_puts(b, "\">");
        } else {
            pe_strbuf_puts(b, "|");
        }
        for (size_t i = 0; i < sizeof cell / sizeof cell[0]; i++) {
            int last = i + 1 == sizeof cell / sizeof cell[0];
            if (html)
                pe_strbuf_printf(b, "<td%s>", !last ? "" : jbool(p, "ok") ? " class=\"ok\""
                                                                             : " class=\"fail\"");
            else
                pe_strbuf_puts(b, last && !jbool(p, "ok") ? " **" : " ");
            text(b, cell[i]);
            if (html)
                pe_strbuf_puts(b, "</td>");
            else
                pe_strbuf_puts(b, last && !jbool(p, "ok") ? "** |" : " |");
        }
        pe_strbuf_puts(b, html ? "<td>" : " ");
        text(b, why ? why : "");
        pe_strbuf_puts(b, html ? "</td></tr>\n" : " |\n");
        free(why);
    }
    pe_strbuf_puts(b, html ? "</table>\n" : "\n");
}

/* The Markdown table of header.pairs' dumps, in a <details> block that renderers show folded. */
static void md_dumps(pe_strbuf *b, const cJSON *hpairs)
{
    char line[96];
    dumps_line(line, sizeof line, hpairs);
    pe_strbuf_printf(b, "\n<details><summary>%s</summary>\n\n", line);
    pe_strbuf_puts(b, "| pair | dump | file | member | dtype | shape |\n|---|---|---|---|---|---|\n");
    const cJSON *pr;
    int pi = 0;
    cJSON_ArrayForEach(pr, hpairs)
    {
        const cJSON *d;
        cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(pr, "dumps"))
        {
            char cells[6][1024];
            dump_cells(pr, pi, d, cells);
            for (int k = 0; k < 6; k++) {
                pe_strbuf_puts(b, k ? " | " : "| ");
                int code = k == 2 || (k == 3 && strcmp(cells[3], "-") != 0);
                if (code)
                    pe_strbuf_puts(b, "`");
                md_put(b, cells[k], code);
                if (code)
                    pe_strbuf_puts(b, "`");
            }
            pe_strbuf_puts(b, " |\n");
        }
        pi++;
    }
    pe_strbuf_puts(b, "\n</details>\n");
}

/* A diagnosis: the explanation in bold, the evidence, the candidates. */
static void md_diagnosis(pe_strbuf *b, const cJSON *d)
{
    pe_strbuf_puts(b, "**");
    md_text(b, jstr(d, "explanation", ""));
    pe_strbuf_puts(b, "**\n\nEvidence: ");
    md_text(b, jstr(d, "evidence", ""));
    pe_strbuf_puts(b, "\n\n| candidate | max rel err | explains |\n|---|---|---|\n");
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(d, "candidates"))
    {
        char r[32];
        fmt_num(r, sizeof r, cJSON_GetObjectItemCaseSensitive(k, "max_rel_err"));
        pe_strbuf_puts(b, "| ");
        md_text(b, jstr(k, "description", jstr(k, "name", "?")));
        pe_strbuf_printf(b, " | %s | %s |\n", r, jbool(k, "explains") ? "yes" : "no");
    }
}

/* The verdict as the title; the first screen: the count and a table of the failing pairs and
 * checks, each with its one line, linked to its section; then what was verified, the pairs, the
 * checks, a section per failing pair and check, the dumps (folded) and the notes. */
char *pe_report_markdown(const cJSON *report)
{
    pe_strbuf b = { 0 };
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(report, "pairs");
    const cJSON *hpairs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(report, "header"), "pairs");
    const cJSON *c, *p;
    char vd[96], line[160], slug[1100], head[1100];
    verdict(report, vd, sizeof vd);
    /* the headings' anchors, in document order (md_slug): the title, Pairs, Checks, a section
     * per failing pair, per failing check */
    cJSON *used = cJSON_CreateObject(), *pslug = cJSON_CreateObject(), *cslug = cJSON_CreateObject();
    snprintf(head, sizeof head, "posenc verify: %s: %s", vd, report_config(report));
    md_slug(used, head, slug, sizeof slug);
    if (cJSON_IsArray(rows))
        md_slug(used, "Pairs", slug, sizeof slug);
    md_slug(used, "Checks", slug, sizeof slug);
    cJSON_ArrayForEach(p, rows) if (!jbool(p, "ok"))
    {
        snprintf(head, sizeof head, "Pair %s", jstr(p, "group", ""));
        md_slug(used, head, slug, sizeof slug);
        cJSON_AddStringToObject(pslug, jstr(p, "group", ""), slug);
    }
    cJSON_ArrayForEach(c, checks) if (!jbool(c, "ok"))
    {
        snprintf(head, sizeof head, "Check %s", jstr(c, "name", "?"));
        md_slug(used, head, slug, sizeof slug);
        cJSON_AddStringToObject(cslug, jstr(c, "name", "?"), slug);
    }

    pe_strbuf_printf(&b, "## posenc verify: %s: `", vd);
    md_code(&b, report_config(report));
    pe_strbuf_puts(&b, "`\n\n");
    count_line(report, line, sizeof line);
    pe_strbuf_printf(&b, "%s\n\n", line);
    if (cJSON_GetArraySize(cslug) + cJSON_GetArraySize(pslug) > 0) {
        pe_strbuf_puts(&b, "| failed | diagnosis |\n|---|---|\n");
        cJSON_ArrayForEach(p, rows) if (!jbool(p, "ok"))
        {
            char *why = pair_why(report, p);
            pe_strbuf_puts(&b, "| [pair `");
            md_code(&b, jstr(p, "group", ""));
            pe_strbuf_printf(&b, "`](#%s) | ", jstr(pslug, jstr(p, "group", ""), ""));
            md_text(&b, why ? why : "");
            pe_strbuf_puts(&b, " |\n");
            free(why);
        }
        cJSON_ArrayForEach(c, checks) if (!jbool(c, "ok"))
        {
            pe_strbuf_puts(&b, "| [`");
            md_code(&b, jstr(c, "name", "?"));
            pe_strbuf_printf(&b, "`](#%s) | ", jstr(cslug, jstr(c, "name", "?"), ""));
            md_text(&b, check_why(c));
            pe_strbuf_puts(&b, " |\n");
        }
        pe_strbuf_puts(&b, "\n");
    }
    config_line(&b, report, 0);
    struct header_row hr[8];
    int nh = header_rows(report, hr, 8);
    for (int i = 0; i < nh; i++) {
        pe_strbuf_printf(&b, "%s**%s**: ", i ? "" : "\n", hr[i].key);
        md_text(&b, hr[i].value);
        pe_strbuf_puts(&b, "  \n");
    }
    if (cJSON_IsArray(rows)) {
        pe_strbuf_puts(&b, "\n### Pairs\n\n");
        pairs_table(&b, report, 0);
    } else {
        pe_strbuf_puts(&b, "\n");
    }
    pe_strbuf_puts(&b, "### Checks\n\n");
    pe_strbuf_puts(&b, "| check | result | max abs err | max rel err | tolerance | summary |\n");
    pe_strbuf_puts(&b, "|---|---|---|---|---|---|\n");
    cJSON_ArrayForEach(c, checks)
    {
        char a[32], r[32], t[32];
        fmt_num(a, sizeof a, cJSON_GetObjectItemCaseSensitive(c, "max_abs_err"));
        fmt_num(r, sizeof r, cJSON_GetObjectItemCaseSensitive(c, "max_rel_err"));
        fmt_num(t, sizeof t, cJSON_GetObjectItemCaseSensitive(c, "tolerance"));
        pe_strbuf_puts(&b, "| `");
        md_code(&b, jstr(c, "name", "?"));
        pe_strbuf_printf(&b, "` | %s%s%s | %s | %s | %s | ", jbool(c, "ok") ? "" : "**",
                  result_word(c), jbool(c, "ok") ? "" : "**", a, r, t);
        md_text(&b, jstr(c, "summary", ""));
        pe_strbuf_puts(&b, " |\n");
    }
    /* a failing pair: its line, its failing checks linked */
    cJSON_ArrayForEach(p, rows) if (!jbool(p, "ok"))
    {
        char *why = pair_why(report, p);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(p, "layer"), *n;
        pe_strbuf_puts(&b, "\n### Pair `");
        md_code(&b, jstr(p, "group", ""));
        pe_strbuf_puts(&b, "`\n\n");
        if (cJSON_IsNumber(l))
            pe_strbuf_printf(&b, "Layer %.0f", l->valuedouble);
        else
            pe_strbuf_puts(&b, "No layer index");
        if (jstr(p, "layer_type", NULL)) {
            pe_strbuf_puts(&b, ", ");
            md_text(&b, jstr(p, "layer_type", ""));
        }
        pe_strbuf_printf(&b, "%s: **", jbool(p, "has_rope") ? "" : ", no RoPE");
        md_text(&b, why ? why : "");
        pe_strbuf_puts(&b, "**\n\nFailed:");
        int k = 0;
        cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(p, "checks"))
        {
            const cJSON *ck = cJSON_IsString(n) ? find_check(report, n->valuestring) : NULL;
            if (!ck || jbool(ck, "ok"))
                continue;
            pe_strbuf_puts(&b, k++ ? ", [`" : " [`");
            md_code(&b, n->valuestring);
            pe_strbuf_printf(&b, "`](#%s)", jstr(cslug, n->valuestring, ""));
        }
        pe_strbuf_puts(&b, k ? "\n" : " none of its checks\n");
        free(why);
    }
    /* a failing check: its summary and diagnosis; a passing check's diagnosis */
    cJSON_ArrayForEach(c, checks)
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "diagnosis");
        if (jbool(c, "ok") && !cJSON_IsObject(d))
            continue;
        pe_strbuf_puts(&b, jbool(c, "ok") ? "\n### Diagnosis: `" : "\n### Check `");
        md_code(&b, jstr(c, "name", "?"));
        pe_strbuf_puts(&b, "`\n\n");
        if (!jbool(c, "ok")) {
            pe_strbuf_puts(&b, "**FAIL**: ");
            md_text(&b, jstr(c, "summary", ""));
            pe_strbuf_puts(&b, "\n\n");
        }
        if (cJSON_IsObject(d))
            md_diagnosis(&b, d);
    }
    if (cJSON_GetArraySize(hpairs) > 0)
        md_dumps(&b, hpairs);
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(report, "notes");
    if (cJSON_GetArraySize(notes) > 0) {
        pe_strbuf_puts(&b, "\nNotes:\n\n");
        cJSON_ArrayForEach(c, notes) if (cJSON_IsString(c))
        {
            pe_strbuf_puts(&b, "- ");
            md_text(&b, c->valuestring);
            pe_strbuf_puts(&b, "\n");
        }
    }
    pe_strbuf_printf(&b, "\n<sub>posenc %s</sub>\n", jstr(report, "posenc_version", "?"));
    cJSON_Delete(used);
    cJSON_Delete(pslug);
    cJSON_Delete(cslug);
    return pe_strbuf_finish(&b);
}

/* ---- HTML ---- */
static void html_text(pe_strbuf *b, const char *s) { pe_strbuf_html(b, s); }

static void config_line(pe_strbuf *b, const cJSON *report, int html)
{
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(report, "config");
    const cJSON *rope = cJSON_GetObjectItemCaseSensitive(cfg, "rope");
    char line[512];
    int n = snprintf(line, sizeof line, "Config `%s` (model_type %s, encoding %s", jstr(cfg, "path", "?"),
                     jstr(cfg, "model_type", "?"), jstr(cfg, "encoding", "?"));
    if (cJSON_IsObject(rope) && !cJSON_GetObjectItemCaseSensitive(rope, "theta")) {
        /* one parameter set per layer type */
        int m = n > 0 && (size_t)n < sizeof line ? n : (int)sizeof line - 1;
        const cJSON *lt;
        cJSON_ArrayForEach(lt, rope)
        {
            const cJSON *th = cJSON_GetObjectItemCaseSensitive(lt, "theta");
            if ((size_t)m < sizeof line && lt->string)
                m += snprintf(line + m, sizeof line - (size_t)m, ", %s: %s theta %.6g", lt->string,
                              jstr(lt, "rope_type", "?"), cJSON_IsNumber(th) ? th->valuedouble : 0);
        }
        if ((size_t)m < sizeof line)
            snprintf(line + m, sizeof line - (size_t)m, ")");
    } else if (cJSON_IsObject(rope)) {
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(rope, "theta");
        const cJSON *hd = cJSON_GetObjectItemCaseSensitive(rope, "head_dim");
        const cJSON *rd = cJSON_GetObjectItemCaseSensitive(rope, "rotary_dim");
        if (n > 0 && (size_t)n < sizeof line)
            snprintf(line + n, sizeof line - (size_t)n, ", rope_type %s, theta %.6g, head_dim %d, rotary_dim %d, %s)",
                     jstr(rope, "rope_type", "?"), cJSON_IsNumber(th) ? th->valuedouble : 0,
                     cJSON_IsNumber(hd) ? hd->valueint : 0, cJSON_IsNumber(rd) ? rd->valueint : 0,
                     jstr(rope, "style", "?"));
    } else if (n > 0 && (size_t)n < sizeof line) {
        snprintf(line + n, sizeof line - (size_t)n, ")");
    }
    if (html) {
        /* drop the Markdown backticks */
        for (char *p = line; *p; p++)
            if (*p == '`')
                memmove(p, p + 1, strlen(p));
        html_text(b, line);
    } else {
        /* the model_type and layer names are the config's text: never HTML outside the
         * path's code span, where HTML is inert */
        int code = 0;
        for (const char *p = line; *p; p++) {
            char c[2] = { *p, 0 };
            code ^= *p == '`';
            pe_strbuf_puts(b, code ? c : *p == '<' ? "&lt;" : *p == '>' ? "&gt;"
                                     : *p == '&' ? "&amp;" : c);
        }
        pe_strbuf_puts(b, "\n");
    }
}

char *pe_report_html(const cJSON *report)
{
    pe_strbuf b = { 0 };
    int ok = jbool(report, "ok");
    pe_strbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<title>");
    char vd[96];
    verdict(report, vd, sizeof vd);
    pe_strbuf_printf(&b, "posenc verify: %s: ", vd);
    html_text(&b, report_config(report));
    pe_strbuf_puts(&b, "</title>\n<style>\n"
                "body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}\n"
                "table{border-collapse:collapse;margin:1em 0}\n"
                "td,th{border:1px solid #bbb;padding:4px 8px;text-align:left;font-size:14px}\n"
                "th{background:#eee}.ok{color:#1a7f37;font-weight:bold}.fail{color:#c0392b;font-weight:bold}\n"
                ".info{color:#555}.diag{border-left:4px solid #c0392b;padding:0.3em 1em;background:#fdf2f2}\n"
                "code{background:#f4f4f4;padding:1px 3px}svg.plot{display:block;margin:0.5em 0}\n"
                "</style>\n</head>\n<body>\n");
    pe_strbuf_printf(&b, "<h1>posenc verify: <span class=\"%s\" id=\"verdict\">", ok ? "ok" : "fail");
    html_text(&b, vd);
    pe_strbuf_puts(&b, "</span></h1>\n");
    /* the first screen: the count, and what failed with its one line, linked to its detail */
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(report, "checks"), *c, *row;
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(report, "pairs");
    char line[160];
    count_line(report, line, sizeof line);
    pe_strbuf_printf(&b, "<p id=\"count\" class=\"%s\">%s</p>\n", ok ? "ok" : "fail", line);
    if (!ok) {
        pe_strbuf_puts(&b, "<table id=\"failed\">\n<tr><th>failed</th><th>diagnosis</th></tr>\n");
        cJSON_ArrayForEach(row, rows) if (!jbool(row, "ok"))
        {
            char *why = pair_why(report, row);
            pe_strbuf_puts(&b, "<tr><td class=\"fail\"><a href=\"#");
            html_id(&b, "pair-", jstr(row, "group", ""));
            pe_strbuf_puts(&b, "\">pair <code>");
            html_text(&b, jstr(row, "group", ""));
            pe_strbuf_puts(&b, "</code></a></td><td>");
            html_text(&b, why ? why : "");
            pe_strbuf_puts(&b, "</td></tr>\n");
            free(why);
        }
        cJSON_ArrayForEach(c, checks) if (!jbool(c, "ok"))
        {
            pe_strbuf_puts(&b, "<tr><td class=\"fail\"><a href=\"#");
            html_id(&b, "check-", jstr(c, "name", "?"));
            pe_strbuf_puts(&b, "\"><code>");
            html_text(&b, jstr(c, "name", "?"));
            pe_strbuf_puts(&b, "</code></a></td><td>");
            html_text(&b, check_why(c));
            pe_strbuf_puts(&b, "</td></tr>\n");
        }
        pe_strbuf_puts(&b, "</table>\n");
    }
    pe_strbuf_puts(&b, "<table id=\"header\">\n<tr><th>config</th><td>");
    config_line(&b, report, 1);
    pe_strbuf_puts(&b, "</td></tr>\n");
    struct header_row hr[8];
    int nh = header_rows(report, hr, 8);
    for (int i = 0; i < nh; i++) {
        pe_strbuf_printf(&b, "<tr><th>%s</th><td>", hr[i].key);
        html_text(&b, hr[i].value);
        pe_strbuf_puts(&b, "</td></tr>\n");
    }
    pe_strbuf_puts(&b, "</table>\n");
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(report, "header"), "pairs");
    if (cJSON_GetArraySize(pairs) > 0) {
        dumps_line(line, sizeof line, pairs);
        pe_strbuf_printf(&b, "<details id=\"members\"><summary>%s</summary>\n", line);
        pe_strbuf_puts(&b, "<table id=\"dumps\">\n<tr>");
        for (int k = 0; k < 6; k++)
            pe_strbuf_printf(&b, "<th>%s</th>", dump_heads[k]);
        pe_strbuf_puts(&b, "</tr>\n");
        const cJSON *pr;
        int pi = 0;
        cJSON_ArrayForEach(pr, pairs)
        {
            const cJSON *d;
            cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(pr, "dumps"))
            {
                char cells[6][1024];
                dump_cells(pr, pi, d, cells);
                pe_strbuf_puts(&b, "<tr>");
                for (int k = 0; k < 6; k++) {
                    int code = k == 2 || (k == 3 && strcmp(cells[3], "-") != 0);
                    pe_strbuf_printf(&b, "<td class=\"%s\">%s", dump_heads[k], code ? "<code>" : "");
                    html_text(&b, cells[k]);
                    pe_strbuf_printf(&b, "%s</td>", code ? "</code>" : "");
                }
                pe_strbuf_puts(&b, "</tr>\n");
            }
            pi++;
        }
        pe_strbuf_puts(&b, "</table>\n</details>\n");
    }
    pairs_table(&b, report, 1);
    pe_strbuf_puts(&b, "<table id=\"checks\">\n<tr><th>check</th><th>result</th><th>max abs err</th>"
                "<th>max rel err</th><th>tolerance</th><th>summary</th></tr>\n");
    cJSON_ArrayForEach(c, checks)
    {
        char a[32], r[32], t[32];
        fmt_num(a, sizeof a, cJSON_GetObjectItemCaseSensitive(c, "max_abs_err"));
        fmt_num(r, sizeof r, cJSON_GetObjectItemCaseSensitive(c, "max_rel_err"));
        fmt_num(t, sizeof t, cJSON_GetObjectItemCaseSensitive(c, "tolerance"));
        const char *w = result_word(c);
        pe_strbuf_puts(&b, "<tr><td><code>");
        html_text(&b, jstr(c, "name", "?"));
        pe_strbuf_printf(&b, "</code></td><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>",
                  strcmp(w, "FAIL") == 0 ? "fail" : strcmp(w, "ok") == 0 ? "ok" : "info", w, a, r, t);
        html_text(&b, jstr(c, "summary", ""));
        pe_strbuf_puts(&b, "</td></tr>\n");
    }
    pe_strbuf_puts(&b, "</table>\n");
    /* failed checks (each with its summary and diagnosis) first, then the others */
    for (int round = 0; round < 2; round++) {
        cJSON_ArrayForEach(c, checks)
        {
            if (jbool(c, "ok") != (round == 1))
                continue;
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "diagnosis");
            const cJSON *details = cJSON_GetObjectItemCaseSensitive(c, "details");
            const cJSON *plots = cJSON_GetObjectItemCaseSensitive(details, "plots");
            if (round == 1 && !cJSON_IsObject(d) && cJSON_GetArraySize(plots) == 0)
                continue;
            pe_strbuf_puts(&b, "<h2 id=\"");
            html_id(&b, "check-", jstr(c, "name", "?"));
            pe_strbuf_puts(&b, "\">");
            html_text(&b, jstr(c, "name", "?"));
            pe_strbuf_puts(&b, "</h2>\n");
            if (round == 0) {
                pe_strbuf_puts(&b, "<p class=\"summary\"><span class=\"fail\">FAIL</span>: ");
                html_text(&b, jstr(c, "summary", ""));
                pe_strbuf_puts(&b, "</p>\n");
            }
            if (cJSON_IsObject(d)) {
                pe_strbuf_puts(&b, "<div class=\"diag\"><p><b>");
                html_text(&b, jstr(d, "explanation", ""));
                pe_strbuf_puts(&b, "</b></p><p>");
                html_text(&b, jstr(d, "evidence", ""));
                pe_strbuf_puts(&b, "</p>\n<table><tr><th>candidate</th><th>max rel err</th><th>explains</th></tr>\n");
                const cJSON *k;
                cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(d, "candidates"))
                {
                    char r[32];
                    fmt_num(r, sizeof r, cJSON_GetObjectItemCaseSensitive(k, "max_rel_err"));
                    pe_strbuf_puts(&b, "<tr><td>");
                    html_text(&b, jstr(k, "description", jstr(k, "name", "?")));
                    pe_strbuf_printf(&b, "</td><td>%s</td><td>%s</td></tr>\n", r, jbool(k, "explains") ? "yes" : "no");
                }
                pe_strbuf_puts(&b, "</table></div>\n");
            }
            const cJSON *p;
            cJSON_ArrayForEach(p, plots) pe_report_svg(&b, p);
        }
    }
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(report, "notes");
    if (cJSON_GetArraySize(notes) > 0) {
        pe_strbuf_puts(&b, "<h2>Notes</h2>\n<ul>\n");
        cJSON_ArrayForEach(c, notes) if (cJSON_IsString(c))
        {
            pe_strbuf_puts(&b, "<li>");
            html_text(&b, c->valuestring);
            pe_strbuf_puts(&b, "</li>\n");
        }
        pe_strbuf_puts(&b, "</ul>\n");
    }
    pe_strbuf_puts(&b, "<p class=\"info\">posenc ");
    html_text(&b, jstr(report, "posenc_version", "?"));
    pe_strbuf_puts(&b, "</p>\n</body>\n</html>\n");
    return pe_strbuf_finish(&b);
}

/* ---- writing ---- */
static int has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

posenc_status pe_report_kind_of(const char *path, pe_report_kind *out, posenc_error *err)
{
    if (strcmp(path, "-") == 0 || has_ext(path, ".json"))
        *out = PE_REPORT_JSON;
    else if (has_ext(path, ".md") || has_ext(path, ".markdown"))
        *out = PE_REPORT_MARKDOWN;
    else if (has_ext(path, ".html") || has_ext(path, ".htm"))
        *out = PE_REPORT_HTML;
    else
        return posenc_seterr(err, POSENC_EINVAL,
                             "'%s': report name must end in .json, .md or .html (or be -)", path);
    return POSENC_OK;
}

posenc_status pe_report_write_all(const cJSON *report, const char *const *paths, size_t n,
                                  posenc_error *err)
{
    posenc_status st = POSENC_OK;
    int to_stdout = 0;
    pe_tmp_group_begin();
    for (size_t i = 0; i < n && st == POSENC_OK; i++) {
        if (strcmp(paths[i], "-") == 0)
            to_stdout = 1;
        else
            st = pe_report_write(report, paths[i], err);
    }
    if (st != POSENC_OK) {
        pe_tmp_group_abort();
        return st;
    }
    if ((st = pe_tmp_group_end(err)) != POSENC_OK)
        return st;
    return to_stdout ? pe_report_write(report, "-", err) : POSENC_OK;
}

posenc_status pe_report_write(const cJSON *report, const char *path, posenc_error *err)
{
    pe_report_kind kind;
    posenc_status st = pe_report_kind_of(path, &kind, err);
    if (st != POSENC_OK)
        return st;
    char *text = kind == PE_REPORT_JSON       ? pe_report_json(report)
                 : kind == PE_REPORT_MARKDOWN ? pe_report_markdown(report)
                                                  : pe_report_html(report);
    if (!text)
        return posenc_seterr(err, POSENC_ENOMEM, "'%s': out of memory", path);
    if (strcmp(path, "-") == 0) { /* the JSON report is the command's data on stdout */
        size_t n = strlen(text);
        errno = 0;
        if ((st = pe_output_check_fd(fileno(stdout), err)) != POSENC_OK)
            ;
        else if (fwrite(text, 1, n, stdout) != n || fflush(stdout) != 0)
            st = posenc_seterr(err, POSENC_EIO, "cannot write the report to stdout: %s",
                               strerror(errno ? errno : EIO));
        free(text);
        return st;
    }
    /* the temporary every writer uses: beside the target, renamed into place, removed on
     * failure or signal; a device or FIFO target is written through in place */
    char *tmp = NULL;
    FILE *fp = NULL;
    if ((st = pe_tmp_create(path, &tmp, &fp, err)) != POSENC_OK) {
        free(text);
        return st;
    }
    size_t n = strlen(text);
    if (fwrite(text, 1, n, fp) != n) {
        st = posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", path,
                           strerror(errno ? errno : EIO));
        pe_tmp_discard(fp, tmp);
    } else {
        st = pe_tmp_commit(fp, tmp, path, err);
    }
    free(tmp);
    free(text);
    return st;
}
