/* fuzz_pairs.c: bytes -> the q/k pairing of multi-layer dumps (formats/engines/pairs.c). The input is
 * lines: the first is a --pairs glob (an empty first line: no glob), the others member names
 * (duplicates dropped, as a container's names are unique; each cut to POSENC_NAME_MAX - 1
 * bytes). Checked against the documented rules: on success every pair is a query and a key of
 * one naming row whose names share the prefix that is the group (plus one separator), groups
 * are distinct, the pairs are ordered by layer index (pe_pairs_layer_index of the group, which
 * is -1 or in [0, 2^31)) then group, every named member with a role whose group matches the glob
 * is in exactly one pair, and n_other counts the members without a role; a failure is a known
 * code with a one-line message naming the file. The pairs then get their layers from a fixed
 * Gemma-3-style config (four layers, two layer types) and one with a NoPE layer: every pair
 * has its layer's type and NoPE flag, and a top-level pair (group "") none. */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/engines/pairs.h"
#include "posenc/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NAMES 512

static posenc_model *model(int which)
{
    static posenc_model *m[2];
    static const char *const json[2] = {
        "{\"model_type\":\"gemma3_text\",\"head_dim\":16,\"num_attention_heads\":2,"
        "\"num_hidden_layers\":4,\"rope_local_base_freq\":10000.0,\"layer_types\":["
        "\"sliding_attention\",\"full_attention\",\"sliding_attention\",\"full_attention\"]}",
        "{\"model_type\":\"smollm3\",\"hidden_size\":64,\"num_attention_heads\":4,"
        "\"num_hidden_layers\":4,\"no_rope_layers\":[1,1,1,0]}",
    };
    if (!m[which] &&
        posenc_config_parse(json[which], strlen(json[which]), "c.json", NULL, &m[which], NULL) !=
            POSENC_OK)
        __builtin_trap();
    return m[which];
}

static int glob_ok(const char *glob, const char *group)
{
    if (!glob || fnmatch(glob, group, 0) == 0)
        return 1;
    if (*group == '/' && fnmatch(glob, group + 1, 0) == 0)
        return 1;
    return *glob == '/' && *group != '/' && fnmatch(glob + 1, group, 0) == 0;
}

static void check_msg(const posenc_error *e)
{
    if (!memchr(e->msg, '\0', sizeof e->msg) || strncmp(e->msg, "'d': ", 5) != 0 ||
        strchr(e->msg, '\n'))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    const char **names = malloc(MAX_NAMES * sizeof *names);
    if (!text || !names)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    size_t n = 0;
    char *line = text, *glob = NULL;
    for (int first = 1; line && n < MAX_NAMES; first = 0) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strlen(line) >= POSENC_NAME_MAX)
            line[POSENC_NAME_MAX - 1] = '\0';
        if (first) {
            glob = *line ? line : NULL;
        } else {
            int dup = 0;
            for (size_t i = 0; i < n && !dup; i++)
                dup = strcmp(names[i], line) == 0;
            if (!dup)
                names[n++] = line;
            int64_t l = pe_pairs_layer_index(line);
            if (l < -1 || l > INT32_MAX)
                __builtin_trap();
        }
        line = nl ? nl + 1 : NULL;
    }

    pe_pairs *p = NULL;
    posenc_error err = { 0 };
    posenc_status st = pe_pairs_find_names(names, n, glob, "d", &p, &err);
    if (st != POSENC_OK) {
        if (p || (st != POSENC_EFORMAT && st != POSENC_ENOTFOUND && st != POSENC_EINVAL &&
                  st != POSENC_ERANGE && st != POSENC_ENOMEM))
            __builtin_trap();
        check_msg(&err);
        goto out;
    }
    if (p->n == 0)
        __builtin_trap();
    size_t other = 0, want = 0;
    for (size_t i = 0; i < n; i++) {
        size_t plen;
        int role = pe_pairs_role(names[i], &plen, NULL);
        if (!role) {
            other++;
            continue;
        }
        char g[POSENC_NAME_MAX];
        snprintf(g, sizeof g, "%.*s", (int)(plen ? plen - 1 : 0), names[i]);
        if (!glob_ok(glob, g))
            continue;
        want++;
        size_t hits = 0;
        for (size_t j = 0; j < p->n; j++)
            hits += (role == 1 ? p->v[j].q : p->v[j].k) == i;
        if (hits != 1)
            __builtin_trap(); /* a member with a role in no pair, or in two */
    }
    if (other != p->n_other || want != 2 * p->n)
        __builtin_trap();
    for (size_t j = 0; j < p->n; j++) {
        const pe_pair *pr = &p->v[j];
        size_t ql, kl;
        int qrow, krow;
        if (pe_pairs_role(names[pr->q], &ql, &qrow) != 1 ||
            pe_pairs_role(names[pr->k], &kl, &krow) != 2 || qrow != krow || ql != kl ||
            strncmp(names[pr->q], names[pr->k], ql) != 0)
            __builtin_trap();
        size_t gl = strlen(pr->group);
        if (gl != (ql ? ql - 1 : 0) || strncmp(pr->group, names[pr->q], gl) != 0)
            __builtin_trap();
        if (pr->layer != pe_pairs_layer_index(pr->group))
            __builtin_trap();
        if (pe_pairs_get(p, pr->group) != pr)
            __builtin_trap(); /* groups are distinct */
        if (j && (p->v[j - 1].layer > pr->layer ||
                  (p->v[j - 1].layer == pr->layer && strcmp(p->v[j - 1].group, pr->group) >= 0)))
            __builtin_trap();
    }
    for (int w = 0; w < 2; w++) {
        posenc_model *m = model(w);
        st = pe_pairs_layers(p, m, NULL, "d", &err);
        if (st != POSENC_OK) {
            check_msg(&err);
            if (st != POSENC_EINVAL)
                __builtin_trap();
            continue;
        }
        for (size_t j = 0; j < p->n; j++) {
            const pe_pair *pr = &p->v[j];
            if (!pr->group[0]) { /* top-level q and k: one Q/K pair, the model's only set */
                if (pr->layer_type || pr->nope)
                    __builtin_trap();
                continue;
            }
            if (pr->layer < 0 || pr->layer > 3)
                __builtin_trap(); /* both models need an index in range */
            if (w == 0 && (!pr->layer_type || strcmp(pr->layer_type, pr->layer % 2
                                                                     ? "full_attention"
                                                                     : "sliding_attention")))
                __builtin_trap();
            if (w == 1 && (pr->layer_type || pr->nope != (pr->layer == 3)))
                __builtin_trap();
        }
    }
out:
    pe_pairs_free(p);
    free(names);
    free(text);
    return 0;
}
