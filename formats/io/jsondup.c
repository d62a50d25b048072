/* jsondup.c: the last value of a repeated JSON key wins, as in Python's json. Objects of a few
 * members are scanned pairwise; larger ones (a safetensors header of a million tensors) through
 * a hash set of the keys, so the pass stays linear. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/io/jsondup.h"
#include "formats/io/backend.h"

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void note_first(char *first, size_t cap, const char *prefix, const char *key, long *n)
{
    if (++*n == 1 && first && cap)
        snprintf(first, cap, "%s%s%s", prefix, *prefix ? "." : "", key);
}

/* The members of obj, walked from the last: a key seen already (later in the object) marks
 * this earlier member for removal. */
static int dedupe_object(cJSON *obj, const char *prefix, char *first, size_t cap, long *n)
{
    size_t count = 0;
    for (cJSON *e = obj->child; e; e = e->next)
        count++;
    if (count < 2)
        return 0;
    cJSON *last = obj->child;
    while (last->next)
        last = last->next;
    if (count <= 32) {
        for (cJSON *e = last; e;) {
            cJSON *prev = e == obj->child ? NULL : e->prev;
            int dup = 0;
            for (cJSON *l = e->next; l && !dup; l = l->next)
                dup = e->string && l->string && strcmp(e->string, l->string) == 0;
            if (dup) {
                note_first(first, cap, prefix, e->string, n);
                cJSON_Delete(cJSON_DetachItemViaPointer(obj, e));
            }
            e = prev;
        }
        return 0;
    }
    size_t slots = 64;
    while (slots < count * 2)
        slots *= 2;
    const char **set = calloc(slots, sizeof *set);
    if (!set)
        return -1;
    for (cJSON *e = last; e;) {
        cJSON *prev = e == obj->child ? NULL : e->prev;
        if (e->string) {
            size_t i = (size_t)hash_key(e->string) & (slots - 1);
            int dup = 0;
            while (set[i] && !(dup = strcmp(set[i], e->string) == 0))
                i = (i + 1) & (slots - 1);
            if (dup) {
                note_first(first, cap, prefix, e->string, n);
                cJSON_Delete(cJSON_DetachItemViaPointer(obj, e));
            } else {
                set[i] = e->string;
            }
        }
        e = prev;
    }
    free(set);
    return 0;
}

static int walk(cJSON *node, const char *prefix, char *first, size_t cap, long *n, int depth)
{
    if (depth > 1000)
        return 0; /* cJSON refuses deeper nesting while parsing */
    if (cJSON_IsObject(node) && dedupe_object(node, prefix, first, cap, n) != 0)
        return -1;
    for (cJSON *e = node->child; e; e = e->next) {
        if (!cJSON_IsObject(e) && !cJSON_IsArray(e))
            continue;
        char sub[160];
        if (cJSON_IsObject(node) && e->string)
            snprintf(sub, sizeof sub, "%s%s%s", prefix, *prefix ? "." : "", e->string);
        else
            snprintf(sub, sizeof sub, "%s", prefix);
        if (walk(e, sub, first, cap, n, depth + 1) != 0)
            return -1;
    }
    return 0;
}

long pe_json_last_wins(cJSON *root, char *first, size_t cap)
{
    long n = 0;
    if (first && cap)
        first[0] = '\0';
    if (!root)
        return 0;
    return walk(root, "", first, cap, &n, 0) != 0 ? -1 : n;
}

/* ---- the metadata budget (PE_META_MAX, backend.h) ---- */

/* What cJSON allocates, rounded as glibc's malloc does: the size plus an 8-byte header, to a
 * multiple of 16, at least 32. */
static size_t chunk(size_t n)
{
    size_t c = (n + 8 + 15) & ~(size_t)15;
    return c < 32 ? 32 : c;
}

size_t pe_json_cost(const char *text, size_t len)
{
    size_t cost = 0, i = 0;
    const size_t node = chunk(sizeof(cJSON));
    while (i < len) {
        char ch = text[i];
        if (ch == '"') {
            size_t j = i + 1;
            while (j < len && text[j] != '"')
                j += text[j] == '\\' ? 2 : 1;
            cost += chunk(j - i); /* the decoded string fits in the quoted text's length */
            i = j + 1;
            size_t k = i;
            while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' ||
                               text[k] == '\r'))
                k++;
            if (k >= len || text[k] != ':') /* a value (a key is held by its value's node) */
                cost += node;
        } else if (ch == '{' || ch == '[') {
            cost += node;
            i++;
        } else if (ch == '-' || (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' ||
                   ch == 'n') {
            cost += node;
            while (i < len && text[i] != ',' && text[i] != ']' && text[i] != '}' &&
                   text[i] != ' ' && text[i] != '\n' && text[i] != '\t' && text[i] != '\r' &&
                   text[i] != '"' && text[i] != '[' && text[i] != '{')
                i++;
        } else {
            i++;
        }
    }
    return cost;
}

posenc_status pe_meta_check(const char *text, size_t len, const char *path, const char *what,
                            posenc_error *err)
{
    if (len > PE_META_MAX)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': %s of %zu bytes is larger than "
                             "%zu MiB; posenc reads at most that", path, what, len,
                             PE_META_MAX >> 20);
    size_t cost = pe_json_cost(text, len);
    if (cost > PE_META_TREE_MAX)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': %s would take %zu MiB parsed, "
                             "more than %zu MiB; posenc reads at most that", path, what,
                             cost >> 20, PE_META_TREE_MAX >> 20);
    return POSENC_OK;
}

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* i at an opening quote: the index just past the closing one (len when unterminated). */
static size_t skip_string(const char *t, size_t len, size_t i)
{
    for (i++; i < len && t[i] != '"'; i++)
        if (t[i] == '\\')
            i++;
    return i < len ? i + 1 : len;
}

/* i at a value's first byte: the index just past it. */
static size_t skip_value(const char *t, size_t len, size_t i)
{
    if (i < len && t[i] == '"')
        return skip_string(t, len, i);
    if (i < len && (t[i] == '{' || t[i] == '[')) {
        size_t depth = 0;
        while (i < len) {
            if (t[i] == '"') {
                i = skip_string(t, len, i);
                continue;
            }
            if (t[i] == '{' || t[i] == '[')
                depth++;
            else if ((t[i] == '}' || t[i] == ']') && --depth == 0)
                return i + 1;
            i++;
        }
        return len;
    }
    while (i < len && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' &&
           t[i] != '\t' && t[i] != '\n' && t[i] != '\r')
        i++;
    return i;
}

cJSON *pe_json_pick(const char *text, const char *const *keys, size_t nkeys)
{
    cJSON *out = cJSON_CreateObject();
    if (!out || !text)
        return out;
    size_t len = strlen(text), i = skip_ws(text, len, 0);
    if (i >= len || text[i] != '{')
        return out;
    i++;
    while ((i = skip_ws(text, len, i)) < len && text[i] == '"') {
        size_t k0 = i + 1, k1 = skip_string(text, len, i) - 1;
        i = skip_ws(text, len, k1 + 1);
        if (i >= len || text[i] != ':')
            break;
        size_t v0 = skip_ws(text, len, i + 1), v1 = skip_value(text, len, v0);
        for (size_t j = 0; j < nkeys; j++) {
            if (!keys[j] || strlen(keys[j]) != k1 - k0 || memcmp(keys[j], text + k0, k1 - k0) != 0)
                continue;
            cJSON *v = cJSON_ParseWithLength(text + v0, v1 - v0);
            if (!v || !cJSON_AddItemToObject(out, keys[j], v)) {
                cJSON_Delete(v);
                cJSON_Delete(out);
                return NULL;
            }
            break;
        }
        i = skip_ws(text, len, v1);
        if (i < len && text[i] == ',')
            i++;
    }
    return out;
}

posenc_status pe_meta_read(FILE *fp, const char *path, const char *what, char **text,
                           size_t *len, posenc_error *err)
{
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode))
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': not a regular file", path);
    if ((uint64_t)sb.st_size > PE_META_MAX)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': %s of %llu bytes is larger than "
                             "%zu MiB; posenc reads at most that", path, what,
                             (unsigned long long)sb.st_size, PE_META_MAX >> 20);
    size_t n = (size_t)sb.st_size;
    char *t = malloc(n + 1);
    if (!t)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status st = pe_read_exact(fp, t, n, path, "file", err);
    if (st == POSENC_OK) {
        t[n] = '\0';
        st = pe_meta_check(t, n, path, what, err);
    }
    if (st != POSENC_OK) {
        free(t);
        return st;
    }
    *text = t;
    *len = n;
    return POSENC_OK;
}
