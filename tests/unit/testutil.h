/* testutil.h: what every cmocka unit test shares. */
#ifndef POSENC_TESTUTIL_H
#define POSENC_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

/* Fail unless |a - b| <= atol + rtol * |b| (NaN equals NaN; infinities must match). */
#define assert_close(a, b, rtol, atol) \
    posenc_test_assert_close((double)(a), (double)(b), (rtol), (atol), #a, #b, __FILE__, __LINE__)

static inline void posenc_test_assert_close(double a, double b, double rtol, double atol,
                                            const char *ea, const char *eb, const char *file,
                                            int line)
{
    if (isnan(a) && isnan(b))
        return;
    if (isinf(a) || isinf(b)) {
        if (a == b)
            return;
    } else if (fabs(a - b) <= atol + rtol * fabs(b)) {
        return;
    }
    print_error("%s = %.17g is not close to %s = %.17g (rtol %g, atol %g, diff %.3g)\n", ea, a,
                   eb, b, rtol, atol, fabs(a - b));
    _fail(file, line);
}

/* Directory holding test data (tests/data), from POSENC_TEST_DATA or the source layout. */
static inline const char *posenc_test_data(void)
{
    const char *d = getenv("POSENC_TEST_DATA");
    return d && *d ? d : "tests/data";
}

#endif
