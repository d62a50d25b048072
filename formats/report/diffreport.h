/* formats/report/diffreport.h: the report of `posenc diff` as text a person reads or as one JSON
 * object (the schema is in posenc-diff(1), JSON OUTPUT), from lib/verify/diff.c's statistics.
 * Internal (pe_ prefix); the command prints what these return. */
#ifndef PE_DIFFREPORT_H
#define PE_DIFFREPORT_H

#include "posenc/diff.h"
#include "posenc/dtype.h"

typedef struct pe_diff_report {
    const char *spec[2];                 /* A and B as given */
    const posenc_array_info *info[2];    /* their dtypes and shapes (borrowed) */
    const posenc_diff_opts *opts;
    const char *tol_src;   /* "torch defaults", "options", or NULL when atol/rtol are not used */
    const char *layout;    /* the --layout name, NULL without */
    const posenc_diff_result *r;         /* NULL: the shapes differ, nothing was compared */
    int pass;
    const char *notes[4];  /* what the reader should know (one line each), n_notes of them */
    int n_notes;
} pe_diff_report;

/* The report as text; caller frees with free(). NULL when out of memory. */
char *pe_diff_report_text(const pe_diff_report *rep);
char *pe_diff_report_json(const pe_diff_report *rep);

/* v with the fewest digits that read back as the same value of dtype dt ("inf", "nan" for
 * those); returns buf. */
const char *pe_diff_fmt_val(double v, posenc_dtype dt, char *buf, size_t len);
/* Flat C-order index of an array of shape a as "(i, j, k)" (json: "[i, j, k]"); returns buf. */
const char *pe_diff_fmt_index(const posenc_array_info *a, uint64_t flat, int json, char *buf,
                              size_t len);

#endif
