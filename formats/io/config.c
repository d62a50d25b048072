/* config.c: read a config.json file (at most 64 MiB), parse it with cJSON and resolve it with
 * the model-family registry (lib/model/model.c). Messages name the file: "'config.json': invalid JSON
 * near line 3". */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fileno, open_memstream under plain -std=c11 */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "posenc/config.h"
#include "formats/io/backend.h"
#include "formats/io/jsondup.h"
#include "lib/model/model_json.h"

#define CONFIG_MAX_BYTES ((size_t)64 << 20)
/* cJSON spends ~64 bytes a value: a config of a few thousand values is plenty, and a cap keeps a
 * 56 MB file of one-digit numbers from taking gigabytes */
#define CONFIG_MAX_VALUES 1000000

/* An upper bound on the number of JSON values in text (commas, colons and openers outside
 * strings, plus one). */
static size_t count_values(const char *text, size_t len)
{
    size_t n = 1;
    int instr = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (instr) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                instr = 0;
        } else if (ch == '"') {
            instr = 1;
        } else if (ch == ',' || ch == '[' || ch == '{') {
            n++;
        }
    }
    return n;
}

static posenc_status config_parse_json(const char *text, size_t len, const char *source,
                                       const char *family, posenc_model **out,
                                       posenc_error *err);

static size_t line_of(const char *text, size_t len, size_t off)
{
    size_t line = 1;
    for (size_t i = 0; i < off && i < len; i++)
        if (text[i] == '\n')
            line++;
    return line;
}

/* Python's json module (and so transformers) accepts the bare tokens Infinity, -Infinity and
 * NaN; cJSON does not. Rewrite them outside strings as 1e999, which cJSON reads as infinity, so
 * such a value parses and a key that posenc needs is rejected as "must be a finite number".
 * Returns a new buffer (caller frees) or NULL when there is nothing to rewrite. */
static char *rewrite_nonfinite(const char *text, size_t len, size_t *outlen, int *nomem)
{
    size_t hits = 0;
    int instr = 0;
    *nomem = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (instr) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                instr = 0;
        } else if (ch == '"') {
            instr = 1;
        } else if ((ch == 'I' && len - i >= 8 && memcmp(text + i, "Infinity", 8) == 0) ||
                   (ch == 'N' && len - i >= 3 && memcmp(text + i, "NaN", 3) == 0)) {
            hits++;
        }
    }
    if (!hits)
        return NULL;
    char *buf = malloc(len + hits * 2 + 1);
    if (!buf) {
        *nomem = 1;
        return NULL;
    }
    size_t o = 0;
    instr = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (instr) {
            buf[o++] = ch;
            if (ch == '\\' && i + 1 < len)
                buf[o++] = text[++i];
            else if (ch == '"')
                instr = 0;
            continue;
        }
        if (ch == '"')
            instr = 1;
        if (ch == 'I' && len - i >= 8 && memcmp(text + i, "Infinity", 8) == 0) {
            memcpy(buf + o, "1e999", 5);
            o += 5;
            i += 7;
        } else if (ch == 'N' && len - i >= 3 && memcmp(text + i, "NaN", 3) == 0) {
            memcpy(buf + o, "1e999", 5);
            o += 5;
            i += 2;
        } else {
            buf[o++] = ch;
        }
    }
    buf[o] = '\0';
    *outlen = o;
    return buf;
}

posenc_status posenc_config_parse(const char *text, size_t len, const char *source,
                                  const posenc_load_opts *opts, posenc_model **out,
                                  posenc_error *err)
{
    const char *family = opts ? opts->family : NULL;
    if (text && len > 0 && len <= CONFIG_MAX_BYTES) {
        size_t nlen = 0;
        int nomem;
        char *copy = rewrite_nonfinite(text, len, &nlen, &nomem);
        if (nomem)
            return posenc_seterr(err, POSENC_ENOMEM, "'%s': out of memory",
                                 source ? source : "config.json");
        if (copy) {
            posenc_status st = config_parse_json(copy, nlen, source, family, out, err);
            free(copy);
            return st;
        }
    }
    return config_parse_json(text, len, source, family, out, err);
}

static posenc_status config_parse_json(const char *text, size_t len, const char *source,
                                       const char *family, posenc_model **out,
                                       posenc_error *err)
{
    const char *src = source ? source : "config.json";
    const char *end = NULL;
    if (!text)
        len = 0;
    if (len > CONFIG_MAX_BYTES)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': larger than %zu MiB", src,
                             CONFIG_MAX_BYTES >> 20);
    size_t skip = 0;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        skip = 3; /* UTF-8 byte order mark */
    size_t ws = skip;
    while (ws < len && (text[ws] == ' ' || text[ws] == '\t' || text[ws] == '\n' ||
                        text[ws] == '\r'))
        ws++;
    if (ws == len)
        return posenc_seterr(err, POSENC_ECONFIG, "'%s': empty file, not JSON", src);
    if (count_values(text + skip, len - skip) > CONFIG_MAX_VALUES)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': more than %d JSON values, not a "
                             "config.json", src, CONFIG_MAX_VALUES);
    cJSON *root = cJSON_ParseWithLengthOpts(text + skip, len - skip, &end, 0);
    if (!root) {
        size_t off = end && end >= text + skip ? (size_t)(end - text) : len;
        return posenc_seterr(err, POSENC_ECONFIG, "'%s': invalid JSON near line %zu", src,
                             line_of(text, len, off));
    }
    /* cJSON stops after the first value; anything but whitespace after it is invalid */
    size_t off = end ? (size_t)(end - text) : len;
    while (off < len && (text[off] == ' ' || text[off] == '\t' || text[off] == '\n' ||
                         text[off] == '\r'))
        off++;
    if (off < len) {
        cJSON_Delete(root);
        return posenc_seterr(err, POSENC_ECONFIG, "'%s': invalid JSON near line %zu (text after "
                             "the top-level value)", src, line_of(text, len, off));
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return posenc_seterr(err, POSENC_ECONFIG, "'%s': top level is not a JSON object", src);
    }
    /* a repeated key: the last value, as Python's json and so transformers read it */
    char dup[128];
    long ndup = pe_json_last_wins(root, dup, sizeof dup);
    if (ndup < 0) {
        cJSON_Delete(root);
        return posenc_seterr(err, POSENC_ENOMEM, "'%s': out of memory", src);
    }
    posenc_status st = pe_model_from_json(root, src, family, out, err);
    cJSON_Delete(root);
    if (st == POSENC_OK && ndup > 0) {
        char w[256];
        snprintf(w, sizeof w, "duplicate key '%s': the last value is used, as Python's json "
                 "reads it%s", dup, ndup > 1 ? " (and other repeated keys)" : "");
        if ((st = pe_model_add_warning(*out, w)) != POSENC_OK) {
            posenc_model_free(*out);
            *out = NULL;
            return posenc_seterr(err, POSENC_ENOMEM, "'%s': out of memory", src);
        }
    }
    return st;
}

posenc_status posenc_config_load(const char *path, const posenc_load_opts *opts,
                                 posenc_model **out, posenc_error *err)
{
    /* a model directory (as transformers' from_pretrained takes): DIR/config.json */
    struct stat ds;
    if (stat(path, &ds) == 0 && S_ISDIR(ds.st_mode)) {
        size_t n = strlen(path);
        char *p = malloc(n + sizeof "/config.json");
        if (!p)
            return posenc_seterr(err, POSENC_ENOMEM, "'%s': out of memory", path);
        /* "DIR/" takes "config.json", "DIR" takes "/config.json", each with its NUL */
        const char *tail = n && path[n - 1] == '/' ? "config.json" : "/config.json";
        memcpy(p, path, n);
        memcpy(p + n, tail, strlen(tail) + 1);
        struct stat fs;
        posenc_status st;
        if (stat(p, &fs) != 0)
            st = posenc_seterr(err, POSENC_EIO, "'%s': a directory without config.json", path);
        else
            st = posenc_config_load(p, opts, out, err);
        free(p);
        return st;
    }
    FILE *fp;
    posenc_status ost = pe_open_input(path, 0, &fp, err);
    if (ost != POSENC_OK)
        return ost;
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0) {
        int e = errno;
        fclose(fp);
        return posenc_seterr(err, POSENC_EIO, "'%s': %s", path, strerror(e));
    }
    if (S_ISDIR(sb.st_mode)) {
        fclose(fp);
        return posenc_seterr(err, POSENC_EIO, "'%s': %s", path, strerror(EISDIR));
    }
    if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > CONFIG_MAX_BYTES) {
        fclose(fp);
        return posenc_seterr(err, POSENC_ERANGE, "'%s': larger than %zu MiB, not a config.json",
                             path, CONFIG_MAX_BYTES >> 20);
    }
    /* read in chunks (pipes and /dev/stdin have no size), capped at the limit + 1 */
    size_t cap = S_ISREG(sb.st_mode) && sb.st_size > 0 ? (size_t)sb.st_size + 1 : 65536, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(fp);
        return posenc_seterr(err, POSENC_ENOMEM, "'%s': out of memory", path);
    }
    for (;;) {
        if (len == cap) {
            if (cap > CONFIG_MAX_BYTES)
                break;
            size_t ncap = cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                fclose(fp);
                return posenc_seterr(err, POSENC_ENOMEM, "'%s': out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        size_t n = fread(buf + len, 1, cap - len, fp);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(fp)) {
        int e = errno;
        free(buf);
        fclose(fp);
        return posenc_seterr(err, POSENC_EIO, "'%s': %s", path, strerror(e ? e : EIO));
    }
    fclose(fp);
    if (len > CONFIG_MAX_BYTES) {
        free(buf);
        return posenc_seterr(err, POSENC_ERANGE, "'%s': larger than %zu MiB, not a config.json",
                             path, CONFIG_MAX_BYTES >> 20);
    }
    posenc_status st = posenc_config_parse(buf, len, path, opts, out, err);
    free(buf);
    return st;
}
