/* error.c: status codes and the error record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "posenc/posenc.h"

/* A message is printed as one line after "posenc CMD: ", but it may quote what a file holds (a
 * model_type, an array name, an NPY header key): write control characters in it as \n, \r,
 * \t or \xNN, truncating at the buffer's end. */
static void one_line(char *msg, size_t cap)
{
    size_t n = strlen(msg), i = 0;
    while (i < n && (unsigned char)msg[i] >= 0x20 && msg[i] != 0x7f)
        i++;
    if (i == n)
        return;
    char tmp[POSENC_ERRMSG_MAX];
    size_t o = 0;
    for (size_t k = 0; k < n && o + 1 < sizeof tmp; k++) {
        unsigned char c = (unsigned char)msg[k];
        if (c >= 0x20 && c != 0x7f) {
            tmp[o++] = (char)c;
            continue;
        }
        char e[5];
        if (c == '\n' || c == '\r' || c == '\t')
            snprintf(e, sizeof e, "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        else
            snprintf(e, sizeof e, "\\x%02x", c);
        size_t el = strlen(e);
        if (o + el + 1 > sizeof tmp)
            break;
        memcpy(tmp + o, e, el);
        o += el;
    }
    tmp[o] = '\0';
    if (o + 1 > cap)
        o = cap - 1;
    memcpy(msg, tmp, o);
    msg[o] = '\0';
}

posenc_status posenc_seterr(posenc_error *err, posenc_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        one_line(err->msg, sizeof err->msg);
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
    one_line(err->msg, sizeof err->msg);
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
