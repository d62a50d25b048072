/* formats/report.h: verify reports as JSON, Markdown or a self-contained HTML page.
 *
 * The report is a cJSON tree with the schema documented in posenc-verify(1) (REPORTS):
 *   { "ok", "posenc_version", "config": {...}, "inputs": {...}, "notes": [...],
 *     "checks": [ { "name", "ok", "info", "summary", "max_abs_err", "max_rel_err", "tolerance",
 *                   "details": { ..., "plots": [ { "title", "x_label", "y_label",
 *                                                 "series": [ { "label", "x": [], "y": [] } ] } ] },
 *                   "diagnosis": null | { "explanation", "evidence", "candidates": [...] } } ] }
 * The Markdown and HTML writers read only those fields. Not installed. */
#ifndef POSENC_FORMATS_REPORT_H
#define POSENC_FORMATS_REPORT_H

#include <cJSON.h>

#include "posenc/error.h"

typedef enum posenc_report_kind {
    POSENC_REPORT_JSON = 0,
    POSENC_REPORT_MARKDOWN = 1,
    POSENC_REPORT_HTML = 2
} posenc_report_kind;

/* By extension: .json; .md / .markdown; .html / .htm. POSENC_EINVAL naming the file otherwise. */
posenc_status posenc_report_kind_of(const char *path, posenc_report_kind *out, posenc_error *err);

/* The report as text; caller frees with free(). NULL when out of memory. */
char *posenc_report_json(const cJSON *report);
char *posenc_report_markdown(const cJSON *report);
char *posenc_report_html(const cJSON *report);

/* Write the report to path in the kind its extension names, through a temporary file beside
 * it that is renamed into place, so a failed write leaves no partial file. */
posenc_status posenc_report_write(const cJSON *report, const char *path, posenc_error *err);

#endif
