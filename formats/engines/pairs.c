/* formats/engines/pairs.c: find the q/k pairs of a multi-layer dump (formats/engines/pairs.h). */
#include "formats/engines/pairs.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* What a query and its key are called, longest first within a family so that "k_proj" is not
 * read as "proj". Rows: the short names runtimes dump; transformers' module names
 * (src/transformers/models/llama/modeling_llama.py LlamaAttention: q_proj, k_proj) and the
 * tensors its forward computes (query_states, key_states); BERT-style modules (modeling_bert.py
 * BertSelfAttention: query, key). */
static const struct {
    const char *q, *k;
} role_names[] = {
    { "query_states", "key_states" },
    { "q_proj", "k_proj" },
    { "query", "key" },
    { "q", "k" },
};
#define N_ROLE (sizeof role_names / sizeof role_names[0])

/* Path components that introduce a layer number: layer0, layers.12, h.3 (GPT-2), blk.7 (GGUF),
 * blocks.2, block_5. */
static const char *const layer_words[] = { "layer", "layers", "h", "blk", "block", "blocks",
                                           "l" };
#define N_WORD (sizeof layer_words / sizeof layer_words[0])

static int is_sep(char c)
{
    return c == '/' || c == '.' || c == '_' || c == '-';
}

int pe_pairs_role(const char *name, size_t *prefix_len, int *row)
{
    size_t n = strlen(name);
    for (size_t r = 0; r < N_ROLE; r++) {
        for (int role = 1; role <= 2; role++) {
            const char *t = role == 1 ? role_names[r].q : role_names[r].k;
            size_t tl = strlen(t);
            if (n < tl || strcmp(name + n - tl, t) != 0)
                continue;
            if (n > tl && !is_sep(name[n - tl - 1]))
                continue;
            if (prefix_len)
                *prefix_len = n - tl;
            if (row)
                *row = (int)r;
            return role;
        }
    }
    return 0;
}

static int is_word(const char *s, size_t n)
{
    for (size_t i = 0; i < N_WORD; i++)
        if (strlen(layer_words[i]) == n && strncmp(layer_words[i], s, n) == 0)
            return 1;
    return 0;
}

/* Digits s[0..n) as a number below 2^31, or -1. */
static int64_t number(const char *s, size_t n)
{
    if (n == 0 || n > 10)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= INT32_MAX ? v : -1;
}

int64_t pe_pairs_layer_index(const char *group)
{
    int64_t strong = -1, plain = -1;
    int n_strong = 0, n_plain = 0;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *c = group; *c;) {
        while (*c == '/' || *c == '.')
            c++;
        if (!*c)
            break;
        size_t len = strcspn(c, "/.");
        int64_t v = number(c, len);
        if (v >= 0) {
            /* layers.12, h.3: a number after a layer word; else a bare number */
            if (prev && is_word(prev, prev_len)) {
                strong = v;
                n_strong++;
            } else {
                plain = v;
                n_plain++;
            }
        } else {
            /* layer0, layer_3, block-5 */
            size_t a = 0;
            while (a < len && isalpha((unsigned char)c[a]))
                a++;
            size_t d = a < len && (c[a] == '_' || c[a] == '-') ? a + 1 : a;
            int64_t w = a > 0 && is_word(c, a) ? number(c + d, len - d) : -1;
            if (w >= 0) {
                strong = w;
                n_strong++;
            }
        }
        prev = c;
        prev_len = len;
        c += len;
    }
    if (n_strong)
        return n_strong == 1 ? strong : -1;
    return n_plain == 1 ? plain : -1;
}

const char *pe_pairs_label(const pe_pair *p)
{
    return p->group[0] ? p->group : "(top level)";
}

int pe_pairs_same_group(const char *a, const char *b)
{
    if (*a == '/')
        a++;
    if (*b == '/')
        b++;
    return strcmp(a, b) == 0;
}

static int glob_ok(const char *glob, const char *group)
{
    if (!glob)
        return 1;
    if (fnmatch(glob, group, 0) == 0)
        return 1;
    /* "/layer0" matches "layer*", and "layers.0" matches "/layers.*" */
    if (*group == '/' && fnmatch(glob, group + 1, 0) == 0)
        return 1;
    return *glob == '/' && *group != '/' && fnmatch(glob + 1, group, 0) == 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const pe_pair *x = a, *y = b;
    if (x->layer != y->layer)
        return x->layer < y->layer ? -1 : 1;
    return strcmp(x->group, y->group);
}

struct member {
    const char *name;
    size_t idx, plen;
    int role, row;
};

/* Members by (prefix, row, role), so that a query's key follows it. */
static int cmp_key(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    size_t n = x->plen < y->plen ? x->plen : y->plen;
    int c = memcmp(x->name, y->name, n);
    if (c)
        return c;
    if (x->plen != y->plen)
        return x->plen < y->plen ? -1 : 1;
    if (x->row != y->row)
        return x->row - y->row;
    return x->role - y->role;
}

static int partners(const struct member *a, const struct member *b)
{
    return a->role == 1 && b->role == 2 && a->row == b->row && a->plen == b->plen &&
           memcmp(a->name, b->name, a->plen) == 0;
}

static void group_of(const char *name, size_t plen, char *out, size_t cap)
{
    size_t g = plen > 0 ? plen - 1 : 0; /* drop the separator */
    snprintf(out, cap, "%.*s", (int)g, name);
}

posenc_status pe_pairs_find_names(const char *const *names, size_t n, const char *glob,
                                  const char *path, pe_pairs **out, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    pe_pairs *p = calloc(1, sizeof *p);
    struct member *m = calloc(n ? n : 1, sizeof *m);
    size_t nm = 0;
    if (!p || !m)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        size_t plen;
        int row, role = pe_pairs_role(names[i], &plen, &row);
        if (!role) {
            if (p->n_other++ == 0)
                snprintf(p->other, sizeof p->other, "%s", names[i]);
            continue;
        }
        char group[POSENC_NAME_MAX];
        group_of(names[i], plen, group, sizeof group);
        if (!glob_ok(glob, group))
            continue;
        m[nm++] = (struct member){ names[i], i, plen, role, row };
    }
    qsort(m, nm, sizeof *m, cmp_key);
    size_t cap = 0;
    const struct member *lone = NULL; /* the first member without its partner, in file order */
    for (size_t i = 0; i < nm; i++) {
        const struct member *a = &m[i], *b = i + 1 < nm ? &m[i + 1] : NULL;
        if (!b || !partners(a, b)) {
            if (!lone || a->idx < lone->idx)
                lone = a;
            continue;
        }
        if (p->n == PE_PAIRS_MAX) {
            st = posenc_seterr(err, POSENC_ERANGE, "'%s': more than %d q/k pairs", path,
                               PE_PAIRS_MAX);
            goto fail;
        }
        if (p->n == cap) {
            cap = cap ? 2 * cap : 16;
            pe_pair *v = realloc(p->v, cap * sizeof *v);
            if (!v)
                goto nomem;
            p->v = v;
        }
        pe_pair *pr = &p->v[p->n++];
        memset(pr, 0, sizeof *pr);
        group_of(names[a->idx], a->plen, pr->group, sizeof pr->group);
        pr->q = a->idx;
        pr->k = b->idx;
        pr->layer = pe_pairs_layer_index(pr->group);
        i++;
    }
    if (lone) {
        const char *want = lone->role == 1 ? role_names[lone->row].k : role_names[lone->row].q;
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': '%s' has no %s: '%.*s%s' is missing",
                           path, lone->name, lone->role == 1 ? "key" : "query",
                           (int)lone->plen, lone->name, want);
        goto fail;
    }
    if (p->n == 0) {
        if (glob) {
            /* list what there is */
            pe_pairs *all = NULL;
            posenc_error e2 = { 0 };
            char list[200] = "none found";
            if (pe_pairs_find_names(names, n, NULL, path, &all, &e2) == POSENC_OK) {
                list[0] = '\0';
                for (size_t i = 0; i < all->n; i++) {
                    size_t o = strlen(list);
                    if (o > sizeof list - 40) {
                        snprintf(list + o, sizeof list - o, ", ...");
                        break;
                    }
                    snprintf(list + o, sizeof list - o, "%s%.100s", i ? ", " : "",
                             pe_pairs_label(&all->v[i]));
                }
                pe_pairs_free(all);
            }
            st = posenc_seterr(err, POSENC_EINVAL, "'%s': no q/k pair matches --pairs '%s' "
                               "(pairs: %s)", path, glob, list);
            goto fail;
        }
        st = posenc_seterr(err, POSENC_ENOTFOUND, "'%s': no q/k pair among its %zu member%s "
                           "(names ending in q/k, query/key, q_proj/k_proj or "
                           "query_states/key_states); name one as '%s:NAME'", path, n, n == 1 ? "" : "s",
                           path);
        goto fail;
    }
    qsort(p->v, p->n, sizeof *p->v, cmp_pair);
    for (size_t i = 1; i < p->n; i++)
        if (pe_pairs_same_group(p->v[i - 1].group, p->v[i].group)) {
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': two q/k pairs in group '%s' ('%s' "
                               "and '%s'); choose with --pairs or name the members",
                               path, pe_pairs_label(&p->v[i]), names[p->v[i - 1].q],
                               names[p->v[i].q]);
            goto fail;
        }
    free(m);
    *out = p;
    return POSENC_OK;
nomem:
    st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
fail:
    free(m);
    pe_pairs_free(p);
    return st;
}

posenc_status pe_pairs_find(const posenc_container *c, const char *path, const char *glob,
                            pe_pairs **out, posenc_error *err)
{
    size_t n = posenc_container_count(c);
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        names[i] = posenc_container_array(c, i)->name;
    posenc_status st = pe_pairs_find_names(names, n, glob, path, out, err);
    free(names);
    return st;
}

posenc_status pe_pairs_open(const char *spec, const char *glob, int must,
                           const posenc_read_opts *ro, char *path, size_t plen,
                           posenc_container **out, posenc_error *err)
{
    char member[POSENC_NAME_MAX];
    posenc_container *c = NULL;
    *out = NULL;
    if (strcmp(spec, "-") == 0 ||
        posenc_spec_split(spec, path, plen, member, sizeof member, NULL) != POSENC_OK ||
        member[0])
        return POSENC_OK;
    posenc_status st = posenc_container_open(path, ro, &c, err);
    if (st != POSENC_OK)
        return must ? st : POSENC_OK; /* else the single-dump path says it */
    if (posenc_container_count(c) < 2 && !glob && !must) {
        posenc_container_close(c);
        return POSENC_OK;
    }
    *out = c;
    return POSENC_OK;
}

/* The side a group is on in a file holding both (pe_pairs_take_side): 1 "pre", 2 "rope" as its
 * first path component, 0 neither; *rest: the group after that component (its separator
 * dropped, an HDF5 group's leading '/' kept). */
static int side_of(const char *group, const char **rest)
{
    const char *g = group + (*group == '/');
    static const char *const names[] = { "pre", "rope" };
    for (int s = 0; s < 2; s++) {
        size_t n = strlen(names[s]);
        if (strncmp(g, names[s], n) == 0 && (g[n] == '.' || g[n] == '/')) {
            *rest = g + n + (*group == '/' ? 0 : 1);
            return s + 1;
        }
    }
    return 0;
}

int pe_pairs_take_side(pe_pairs *p, int side)
{
    int seen[3] = { 0, 0, 0 };
    const char *rest;
    for (size_t i = 0; i < p->n; i++)
        seen[side_of(p->v[i].group, &rest)]++;
    if (seen[0] || !seen[1] || !seen[2])
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (side_of(p->v[i].group, &rest) != side)
            continue;
        pe_pair pr = p->v[i];
        memmove(pr.group, rest, strlen(rest) + 1);
        pr.layer = pe_pairs_layer_index(pr.group);
        p->v[n++] = pr;
    }
    p->n = n;
    return 1;
}

const pe_pair *pe_pairs_get(const pe_pairs *p, const char *group)
{
    for (size_t i = 0; i < p->n; i++)
        if (pe_pairs_same_group(p->v[i].group, group))
            return &p->v[i];
    return NULL;
}

posenc_status pe_pairs_layers(pe_pairs *p, const posenc_model *m, const char *layer_type,
                              const char *path, posenc_error *err)
{
    const int64_t *nope;
    int per_layer = posenc_model_layer_type_count(m) > 1 ||
                    posenc_model_nope_layers(m, &nope) > 0;
    for (size_t i = 0; i < p->n; i++) {
        pe_pair *pr = &p->v[i];
        pr->layer_type = layer_type;
        pr->nope = 0;
        pr->layer_name = NULL;
        if (pr->layer >= 0 &&
            posenc_model_layer(m, pr->layer, &pr->layer_name, NULL, NULL) != POSENC_OK)
            pr->layer_name = NULL; /* refused below when the layers differ */
        if (layer_type || !per_layer || !pr->group[0])
            continue; /* top-level q and k are one Q/K pair, as FILE:q FILE:k would be */
        if (pr->layer < 0)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': group '%s' names no layer index "
                                 "(like layer0 or layers.0), and the config's layers differ "
                                 "(several layer types or layers without RoPE); rename it, "
                                 "give --layer-type or name its two members", path,
                                 pe_pairs_label(pr));
        const char *type;
        posenc_error e2 = { 0 };
        if (posenc_model_layer(m, pr->layer, &type, &pr->nope, &e2) != POSENC_OK)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': group '%s': %s", path,
                                 pe_pairs_label(pr), e2.msg);
        if (pr->nope || posenc_model_layer_type_count(m) <= 1)
            continue;
        if (!type)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': group '%s' is layer %lld, but the "
                                 "config has no layer_types entry for it; give --layer-type",
                                 path, pe_pairs_label(pr), (long long)pr->layer);
        pr->layer_type = type;
    }
    return POSENC_OK;
}

void pe_pairs_free(pe_pairs *p)
{
    if (!p)
        return;
    free(p->v);
    free(p);
}
