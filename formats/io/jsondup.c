/* jsondup.c: the last value of a repeated JSON key wins, as in Python's json. Objects of a few
 * members are scanned pairwise; larger ones (a safetensors header of a million tensors) through
 * a hash set of the keys, so the pass stays linear. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io/jsondup.h"

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
