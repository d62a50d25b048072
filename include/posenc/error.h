/* posenc/error.h: status codes and the error record every fallible call fills.
 *
 * Codes are append-only: never renumber one (a script may test them). */
#ifndef POSENC_ERROR_H
#define POSENC_ERROR_H

#include "posenc/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum posenc_status {
    POSENC_OK = 0,
    POSENC_EINVAL = 1,       /* a caller passed a bad argument or option value */
    POSENC_ENOMEM = 2,       /* allocation failed */
    POSENC_EIO = 3,          /* the operating system refused a read, write or rename */
    POSENC_EFORMAT = 4,      /* a file is malformed, truncated or lies about its contents */
    POSENC_ECONFIG = 5,      /* a config.json is missing a key or holds a nonsense value */
    POSENC_ERANGE = 6,       /* a size overflows, or a table exceeds a limit */
    POSENC_EUNSUPPORTED = 7, /* valid input that posenc does not handle (object dtype, ...) */
    POSENC_ENOTFOUND = 8,    /* a named member, dataset, tensor or layer type is absent */
    POSENC_EMISMATCH = 9,    /* two inputs disagree (Q/K shapes, head_dim vs config) */
    POSENC_EOVERWRITE = 10   /* an output would replace one of the run's inputs */
} posenc_status;

#define POSENC_ERRMSG_MAX 512

/* The human message is written without the "posenc CMD: " prefix, in git's wording: lowercase,
 * no final period, file names in single quotes: "'q.npy': truncated header". It is always one
 * line: posenc_seterr and posenc_error_prefix write any control character it quotes (from a
 * file name or a file's contents) as \n, \r, \t or \xNN. */
typedef struct posenc_error {
    posenc_status code;
    char msg[POSENC_ERRMSG_MAX];
} posenc_error;

/* Record code and message in *err (err may be NULL) and return code, so callers can write
 * `return posenc_seterr(err, POSENC_EFORMAT, "'%s': not an NPY file", path);`. It cannot fail,
 * so it carries no POSENC_NODISCARD (nor does posenc_error_prefix): a caller may record an
 * error and go on to its cleanup without using the code it gets back. */
POSENC_API
posenc_status posenc_seterr(posenc_error *err, posenc_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefix an existing message: "'%s': " + old message. Used when a lower layer did not know the
 * file name. Returns err->code (or code when err is NULL). */
POSENC_API
posenc_status posenc_error_prefix(posenc_error *err, posenc_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Static name of a status ("format error"); never NULL. */
POSENC_API
const char *posenc_status_str(posenc_status code);

#ifdef __cplusplus
}
#endif
#endif
