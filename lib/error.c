/* error.c: status codes and the error record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "posenc/posenc.h"

posenc_status posenc_seterr(posenc_error *err, posenc_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

posenc_status posenc_error_prefix(posenc_error *err, posenc_status code, const char *fmt, ...)
{
    if (!err)
        return code;
    char prefix[POSENC_ERRMSG_MAX], old[POSENC_ERRMSG_MAX];
    size_t plen;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    plen = strlen(prefix);
    memcpy(err->msg, prefix, plen + 1);
    if (plen + 1 < sizeof err->msg) {
        size_t room = sizeof err->msg - plen - 1, olen = strlen(old);
        if (olen > room)
            olen = room;
        memcpy(err->msg + plen, old, olen);
        err->msg[plen + olen] = '\0';
    }
    if (err->code == POSENC_OK)
        err->code = code;
    return err->code;
}

const char *posenc_status_str(posenc_status code)
{
    switch (code) {
    case POSENC_OK: return "success";
    case POSENC_EINVAL: return "invalid argument";
    case POSENC_ENOMEM: return "out of memory";
    case POSENC_EIO: return "input/output error";
    case POSENC_EFORMAT: return "malformed file";
    case POSENC_ECONFIG: return "bad config";
    case POSENC_ERANGE: return "out of range";
    case POSENC_EOVERWRITE: return "output would overwrite an input";
    case POSENC_EUNSUPPORTED: return "unsupported";
    case POSENC_ENOTFOUND: return "not found";
    case POSENC_EMISMATCH: return "mismatch";
    }
    return "unknown error";
}

const char *posenc_version(void) { return POSENC_VERSION; }
