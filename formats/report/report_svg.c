/* report_svg.c: the HTML report's plots as inline SVG (see pe_report_svg in report.h). */
#include <math.h>
#include <stdio.h>

#include "formats/report/report.h"
#include "formats/io/strbuf.h"

static const char *jstr(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : dflt;
}

static const char *palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b" };

/* A number of a series, or 0 when the entry is null (a non-finite value in the tree). */
static int series_value(const cJSON *a, int i, double *v)
{
    const cJSON *e = cJSON_GetArrayItem(a, i);
    if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
        return 0;
    *v = e->valuedouble;
    return 1;
}

/* One SVG: log10 x (points with x <= 0 are left out) and log10 y. A log scale has no zero, so
 * when a series holds an error of exactly 0 the plot gets a floor one decade below everything
 * else, its grid line is labelled 0, those points sit on it and a note says so. The plot's
 * tolerance, when it has one, is a dashed line. Each point is a circle carrying its values
 * (data-x, data-y) for readers and tests. */
void pe_report_svg(pe_strbuf *b, const cJSON *plot)
{
    const double W = 660, H = 336, L = 86, R = 170, T = 30, B = 66;
    const cJSON *series = cJSON_GetObjectItemCaseSensitive(plot, "series");
    const cJSON *tj = cJSON_GetObjectItemCaseSensitive(plot, "tolerance");
    double tol = cJSON_IsNumber(tj) && tj->valuedouble > 0 && isfinite(tj->valuedouble)
                     ? tj->valuedouble
                     : 0;
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    int has_zero = 0, n_bad = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, series)
    {
        const cJSON *xs = cJSON_GetObjectItemCaseSensitive(s, "x");
        const cJSON *ys = cJSON_GetObjectItemCaseSensitive(s, "y");
        int n = cJSON_GetArraySize(xs);
        for (int i = 0; i < n && i < cJSON_GetArraySize(ys); i++) {
            double x, y;
            if (!series_value(xs, i, &x) || !(x > 0))
                continue;
            if (!series_value(ys, i, &y) || y < 0) {
                n_bad++;
                continue;
            }
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            if (y > 0) {
                ymin = fmin(ymin, y);
                ymax = fmax(ymax, y);
            } else {
                has_zero = 1;
            }
        }
    }
    if (tol > 0) {
        ymin = fmin(ymin, tol);
        ymax = fmax(ymax, tol);
    }
    if (!isfinite(xmin)) {
        xmin = 1;
        xmax = 10;
    }
    if (!isfinite(ymin)) {
        ymin = 1e-17;
        ymax = 1e-16;
    }
    double lx0 = floor(log10(xmin)), lx1 = ceil(log10(xmax));
    double ly0 = floor(log10(ymin)), ly1 = ceil(log10(ymax));
    if (lx1 <= lx0)
        lx1 = lx0 + 1;
    if (ly1 <= ly0)
        ly1 = ly0 + 1;
    if (has_zero)
        ly0 -= 1; /* the floor: zero errors only */
    double pw = W - L - R, ph = H - T - B;
#define PX(x) (L + (log10(x) - lx0) / (lx1 - lx0) * pw)
#define PY(ly) (T + ph - ((ly) - ly0) / (ly1 - ly0) * ph)
    pe_strbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"%.0f\" height=\"%.0f\" "
                 "viewBox=\"0 0 %.0f %.0f\" role=\"img\" data-floor-y=\"%.1f\">\n", W, H, W, H, PY(ly0));
    pe_strbuf_puts(b, "<title>");
    pe_strbuf_html(b, jstr(plot, "title", "plot"));
    pe_strbuf_puts(b, "</title>\n");
    pe_strbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" stroke=\"#999\"/>\n",
              L, T, pw, ph);
    int xstep = (int)ceil((lx1 - lx0) / 8.0), ystep = (int)ceil((ly1 - ly0) / 8.0);
    for (double e = lx0; e <= lx1 + 1e-9; e += xstep) {
        double x = L + (e - lx0) / (lx1 - lx0) * pw;
        pe_strbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">1e%.0f</text>\n",
                  x, T, x, T + ph, x, T + ph + 15, e);
    }
    for (double e = ly0; e <= ly1 + 1e-9; e += (has_zero && e == ly0) ? 1 : ystep) {
        double y = PY(e);
        if (has_zero && e == ly0)
            pe_strbuf_printf(b, "<line class=\"floor\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                         "stroke=\"#888\" stroke-dasharray=\"2 3\"/><text class=\"floor-label\" x=\"%.1f\" "
                         "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">0</text>\n",
                      L, y, L + pw, y, L - 5, y + 4);
        else
            pe_strbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                         "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">1e%.0f</text>\n",
                      L, y, L + pw, y, L - 5, y + 4, e);
    }
    pe_strbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">", L + pw / 2, T + ph + 32);
    pe_strbuf_html(b, jstr(plot, "x_label", "position"));
    pe_strbuf_printf(b, " (log scale)</text>\n<text x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
                 "transform=\"rotate(-90 14 %.1f)\">", T + ph / 2, T + ph / 2);
    pe_strbuf_html(b, jstr(plot, "y_label", "error"));
    pe_strbuf_puts(b, " (log)</text>\n");
    pe_strbuf_printf(b, "<text x=\"%.1f\" y=\"18\" font-size=\"13\" font-weight=\"bold\">", L);
    pe_strbuf_html(b, jstr(plot, "title", ""));
    pe_strbuf_puts(b, "</text>\n");
    int si = 0;
    cJSON_ArrayForEach(s, series)
    {
        const char *col = palette[si % (int)(sizeof palette / sizeof palette[0])];
        const cJSON *xs = cJSON_GetObjectItemCaseSensitive(s, "x");
        const cJSON *ys = cJSON_GetObjectItemCaseSensitive(s, "y");
        int n = cJSON_GetArraySize(xs), first = 1;
        pe_strbuf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        for (int i = 0; i < n && i < cJSON_GetArraySize(ys); i++) {
            double x, y;
            if (!series_value(xs, i, &x) || !(x > 0) || !series_value(ys, i, &y) || y < 0)
                continue;
            pe_strbuf_printf(b, "%s%.1f,%.1f", first ? "" : " ", PX(x), PY(y > 0 ? log10(y) : ly0));
            first = 0;
        }
        pe_strbuf_puts(b, "\"/>\n");
        for (int i = 0; i < n && i < cJSON_GetArraySize(ys); i++) {
            double x, y;
            if (!series_value(xs, i, &x) || !(x > 0) || !series_value(ys, i, &y) || y < 0)
                continue;
            pe_strbuf_printf(b, "<circle class=\"pt%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\" "
                         "data-series=\"%d\" data-x=\"%.17g\" data-y=\"%.17g\"/>\n",
                      y > 0 ? "" : " zero", PX(x), PY(y > 0 ? log10(y) : ly0), col, si, x, y);
        }
        double ly = T + 16 + 18 * si;
        pe_strbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">", L + pw + 10, ly, L + pw + 30, ly,
                  col, L + pw + 35, ly + 4);
        pe_strbuf_html(b, jstr(s, "label", ""));
        pe_strbuf_puts(b, "</text>\n");
        si++;
    }
    if (tol > 0) {
        double y = PY(log10(tol)), ly = T + 16 + 18 * si;
        pe_strbuf_printf(b, "<line class=\"tolerance\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                     "stroke=\"#c0392b\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" data-y=\"%.17g\"/>\n",
                  L, y, L + pw, y, tol);
        pe_strbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c0392b\" "
                     "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text class=\"tolerance-label\" "
                     "x=\"%.1f\" y=\"%.1f\" font-size=\"11\">", L + pw + 10, ly, L + pw + 30, ly,
                  L + pw + 35, ly + 4);
        pe_strbuf_html(b, jstr(plot, "tolerance_label", "tolerance"));
        pe_strbuf_printf(b, " %.3g</text>\n", tol);
    }
    double ny = H - 6;
    if (has_zero) {
        pe_strbuf_printf(b, "<text class=\"floor-note\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#555\">"
                     "log scale: errors of exactly 0 are drawn on the floor line marked 0</text>\n",
                  L, ny);
    }
    if (n_bad)
        pe_strbuf_printf(b, "<text class=\"bad-note\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#c0392b\" "
                     "text-anchor=\"end\">%d non-finite or negative value%s not drawn</text>\n",
                  W - 4, ny, n_bad, n_bad == 1 ? "" : "s");
    pe_strbuf_puts(b, "</svg>\n");
#undef PX
#undef PY
}
